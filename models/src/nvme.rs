//! NVMe devices: a queue in front of a fixed number of internal channels and
//! a shared transfer bus per direction.
//!
//! The model (first cut; the models issue makes it faithful):
//! - a request waits in FIFO order for one of `channels` internal channels
//!   (the device's internal parallelism);
//! - on a channel it takes the access latency of its direction (with a small
//!   seeded jitter), and its bytes cross the direction's bus at the device's
//!   bandwidth, serialized with the other requests of that direction; it
//!   completes when both are done;
//! - `channels` is the read IOPS times the read access latency (Little's
//!   law), so below that queue depth latency is flat and above it requests
//!   queue: the knee fio sweeps show. A write holds its channel for
//!   `channels / write_iops`, so the saturated write rate is the device's.
//!
//! Left out here: read/write interference inside NAND, garbage-collection
//! stalls, RAID-0 chunking (a RAID-0 of N drives is one device with N times
//! the channels and bandwidth).
//!
//! Sources: `hardware.md` section 1.3 (Scylla's io_properties for i3 drives:
//! read 411,200 IOPS / 2,015,342,735 B/s, write 181,500 IOPS / 808,775,652 B/s
//! per drive) and section 3.2 (QD1 4 KiB read latency of i3-class NAND,
//! 80-120 us, an estimate); section 3.1 for the Optane P4800X spec sheet.

use std::collections::VecDeque;

use rand::{Rng, RngExt};
use units::{SimDuration, SimTime};

/// Direction of a device I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoDirection {
    /// Read from the device.
    Read,
    /// Write to the device.
    Write,
}

/// One I/O: direction and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoOp {
    /// Read or write.
    pub direction: IoDirection,
    /// Bytes transferred.
    pub bytes: u64,
}

/// The datasheet-level description of a drive.
#[derive(Clone, Debug, PartialEq)]
pub struct NvmeProfile {
    /// Preset name.
    pub name: &'static str,
    /// Access latency of a small read at queue depth 1.
    pub read_latency: SimDuration,
    /// Saturated 4 KiB random-read IOPS.
    pub read_iops: f64,
    /// Sequential read bandwidth, bytes per second.
    pub read_bytes_per_s: f64,
    /// Saturated 4 KiB random-write IOPS.
    pub write_iops: f64,
    /// Sequential write bandwidth, bytes per second.
    pub write_bytes_per_s: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

impl NvmeProfile {
    /// One 1.9 TB NVMe drive of an AWS i3 instance.
    pub fn i3_drive() -> NvmeProfile {
        NvmeProfile {
            name: "i3-nvme",
            read_latency: SimDuration::from_micros(90),
            read_iops: 411_200.0,
            read_bytes_per_s: 2_015_342_735.0,
            write_iops: 181_500.0,
            write_bytes_per_s: 808_775_652.0,
            source: "Scylla io_properties for i3 (hardware.md 1.3); QD1 read latency estimate (hardware.md 3.2)",
        }
    }

    /// Intel Optane SSD DC P4800X.
    pub fn optane_p4800x() -> NvmeProfile {
        NvmeProfile {
            name: "optane-p4800x",
            read_latency: SimDuration::from_micros(10),
            read_iops: 550_000.0,
            read_bytes_per_s: 2_400_000_000.0,
            write_iops: 500_000.0,
            write_bytes_per_s: 2_000_000_000.0,
            source: "Intel spec sheet as reproduced by AnandTech (hardware.md 3.1)",
        }
    }

    /// All presets.
    pub fn presets() -> Vec<NvmeProfile> {
        vec![NvmeProfile::i3_drive(), NvmeProfile::optane_p4800x()]
    }

    /// The preset called `name`.
    pub fn by_name(name: &str) -> Option<NvmeProfile> {
        NvmeProfile::presets().into_iter().find(|p| p.name == name)
    }

    /// A RAID-0 of `drives` of this profile, modelled as one device with
    /// `drives` times the IOPS and bandwidth.
    pub fn striped(&self, drives: u32) -> NvmeProfile {
        assert!(drives >= 1);
        let scale = f64::from(drives);
        NvmeProfile {
            read_iops: self.read_iops * scale,
            read_bytes_per_s: self.read_bytes_per_s * scale,
            write_iops: self.write_iops * scale,
            write_bytes_per_s: self.write_bytes_per_s * scale,
            ..self.clone()
        }
    }

    /// Internal channels: read IOPS x read latency (Little's law), at least 1.
    pub fn channels(&self) -> u32 {
        (self.read_iops * self.read_latency.as_secs_f64())
            .round()
            .max(1.0) as u32
    }
}

/// A completion the device promises: the request `tag` finishes `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The caller's tag for the request.
    pub tag: u64,
    /// When it completes.
    pub at: SimTime,
}

/// Jitter on the access latency: a factor 0.9 + Exp(mean 0.1), mean 1.0, so
/// most accesses take about the datasheet latency and a few take longer.
fn latency_jitter<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let uniform: f64 = rng.random();
    0.9 - 0.1 * (1.0 - uniform).ln()
}

/// A drive (or RAID-0 set) in operation.
#[derive(Clone, Debug)]
pub struct NvmeDevice {
    profile: NvmeProfile,
    channels: u32,
    write_channel_time: SimDuration,
    in_service: u32,
    queue: VecDeque<(u64, IoOp)>,
    read_bus_free_at: SimTime,
    write_bus_free_at: SimTime,
    busy_since: Option<SimTime>,
    busy_total: SimDuration,
    completed: u64,
    bytes_read: u64,
    bytes_written: u64,
}

impl NvmeDevice {
    /// An idle device.
    pub fn new(profile: NvmeProfile) -> NvmeDevice {
        let channels = profile.channels();
        let write_channel_time =
            SimDuration::from_secs_f64(f64::from(channels) / profile.write_iops);
        NvmeDevice {
            profile,
            channels,
            write_channel_time,
            in_service: 0,
            queue: VecDeque::new(),
            read_bus_free_at: SimTime::ZERO,
            write_bus_free_at: SimTime::ZERO,
            busy_since: None,
            busy_total: SimDuration::ZERO,
            completed: 0,
            bytes_read: 0,
            bytes_written: 0,
        }
    }

    /// The device's profile.
    pub fn profile(&self) -> &NvmeProfile {
        &self.profile
    }

    /// Submits request `tag`. Returns its completion if it started at once;
    /// otherwise it queues and a later [`NvmeDevice::complete`] starts it.
    pub fn submit<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        tag: u64,
        op: IoOp,
        rng: &mut R,
    ) -> Option<Completion> {
        if self.in_service < self.channels {
            Some(self.start(now, tag, op, rng))
        } else {
            self.queue.push_back((tag, op));
            None
        }
    }

    /// Reports that a promised completion happened at `now`; frees its
    /// channel and returns the completion of the request that takes it, if any.
    pub fn complete<R: Rng + ?Sized>(&mut self, now: SimTime, rng: &mut R) -> Option<Completion> {
        assert!(self.in_service > 0, "completion with nothing in service");
        self.in_service -= 1;
        self.completed += 1;
        if self.in_service == 0 {
            if let Some(since) = self.busy_since.take() {
                self.busy_total = self.busy_total + (now - since);
            }
        }
        let (tag, op) = self.queue.pop_front()?;
        Some(self.start(now, tag, op, rng))
    }

    fn start<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        tag: u64,
        op: IoOp,
        rng: &mut R,
    ) -> Completion {
        if self.in_service == 0 {
            self.busy_since = Some(now);
        }
        self.in_service += 1;
        let (access, bus_free_at, bytes_per_s) = match op.direction {
            IoDirection::Read => {
                self.bytes_read += op.bytes;
                (
                    self.profile.read_latency,
                    &mut self.read_bus_free_at,
                    self.profile.read_bytes_per_s,
                )
            }
            IoDirection::Write => {
                self.bytes_written += op.bytes;
                (
                    self.write_channel_time,
                    &mut self.write_bus_free_at,
                    self.profile.write_bytes_per_s,
                )
            }
        };
        let access = SimDuration::from_secs_f64(access.as_secs_f64() * latency_jitter(rng));
        let transfer_start = (*bus_free_at).max(now);
        let transfer_end =
            transfer_start + SimDuration::from_secs_f64(op.bytes as f64 / bytes_per_s);
        *bus_free_at = transfer_end;
        Completion {
            tag,
            at: transfer_end.max(now + access),
        }
    }

    /// Requests in service plus queued.
    pub fn outstanding(&self) -> usize {
        self.in_service as usize + self.queue.len()
    }

    /// Total time with at least one request in service, up to `now`.
    pub fn busy_time(&self, now: SimTime) -> SimDuration {
        match self.busy_since {
            Some(since) => self.busy_total + now.saturating_since(since),
            None => self.busy_total,
        }
    }

    /// Requests completed.
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Bytes read and written by requests started so far.
    pub fn bytes_transferred(&self) -> (u64, u64) {
        (self.bytes_read, self.bytes_written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// A closed loop at queue depth `depth` for `requests` completions;
    /// returns (IOPS, mean latency in microseconds).
    fn closed_loop(profile: NvmeProfile, op: IoOp, depth: u64, requests: u64) -> (f64, f64) {
        use std::collections::BTreeMap;
        let mut device = NvmeDevice::new(profile);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut submitted_at: BTreeMap<u64, SimTime> = BTreeMap::new();
        let mut promised: BTreeMap<(SimTime, u64), ()> = BTreeMap::new();
        for tag in 0..depth {
            submitted_at.insert(tag, SimTime::ZERO);
            if let Some(c) = device.submit(SimTime::ZERO, tag, op, &mut rng) {
                promised.insert((c.at, c.tag), ());
            }
        }
        let (mut latency_total, mut now) = (0.0, SimTime::ZERO);
        for tag in depth..depth + requests {
            let ((at, done), ()) = promised.pop_first().expect("work outstanding");
            now = at;
            latency_total += (at - submitted_at.remove(&done).expect("submitted")).as_secs_f64();
            if let Some(c) = device.complete(now, &mut rng) {
                promised.insert((c.at, c.tag), ());
            }
            submitted_at.insert(tag, now);
            if let Some(c) = device.submit(now, tag, op, &mut rng) {
                promised.insert((c.at, c.tag), ());
            }
        }
        (
            requests as f64 / now.as_secs_f64(),
            latency_total / requests as f64 * 1e6,
        )
    }

    const READ_4K: IoOp = IoOp {
        direction: IoDirection::Read,
        bytes: 4096,
    };

    #[test]
    fn latency_is_flat_below_the_knee_and_iops_saturate_at_the_datasheet_rate() {
        let profile = NvmeProfile::i3_drive();
        let (iops_qd1, latency_qd1) = closed_loop(profile.clone(), READ_4K, 1, 20_000);
        assert!(
            (latency_qd1 - 92.0).abs() < 10.0,
            "QD1 latency {latency_qd1} us"
        );
        assert!((iops_qd1 - 1e6 / latency_qd1).abs() / iops_qd1 < 0.05);
        let (iops_deep, latency_deep) = closed_loop(profile, READ_4K, 128, 200_000);
        assert!(
            (iops_deep - 411_200.0).abs() / 411_200.0 < 0.10,
            "saturated IOPS {iops_deep}"
        );
        assert!(
            latency_deep > 2.5 * latency_qd1,
            "queueing shows above the knee: {latency_deep} us"
        );
    }

    #[test]
    fn large_transfers_are_bandwidth_bound() {
        let op = IoOp {
            direction: IoDirection::Write,
            bytes: 1 << 20,
        };
        let (iops, _) = closed_loop(NvmeProfile::i3_drive(), op, 16, 5_000);
        let bytes_per_s = iops * (1 << 20) as f64;
        assert!(
            (bytes_per_s - 808_775_652.0).abs() / 808_775_652.0 < 0.02,
            "{bytes_per_s}"
        );
    }

    #[test]
    fn striping_scales_channels_and_rates() {
        let one = NvmeProfile::i3_drive();
        let four = one.striped(4);
        assert_eq!(four.channels(), 4 * one.channels());
        assert_eq!(four.read_iops, 4.0 * one.read_iops);
    }

    #[test]
    fn busy_time_counts_only_time_with_work_in_service() {
        let mut device = NvmeDevice::new(NvmeProfile::i3_drive());
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let start = SimTime::from_nanos(1_000);
        let completion = device.submit(start, 0, READ_4K, &mut rng).unwrap();
        assert_eq!(device.complete(completion.at, &mut rng), None);
        let later = completion.at + SimDuration::from_millis(1);
        assert_eq!(device.busy_time(later), completion.at - start);
        assert_eq!(device.outstanding(), 0);
    }
}
