//! NVMe devices: drives with internal parallelism, separate read and write
//! costs, a write buffer, read/program interference, and md RAID-0 striping.
//!
//! # The model
//!
//! A **drive** is a pool of `units` identical internal units (flash dies and
//! channels, or the Optane controller's pipelines) in front of which
//! requests wait first-come first-served; the controller hands each request
//! to the unit(s) that free first.
//!
//! - *Units.* `units = floor(read IOPS x QD1 read latency)`: the requests a
//!   drive holds when, at QD1 latency, it first reaches its saturated IOPS
//!   (Little's law). Below that queue depth latency is flat; above it
//!   requests queue, throughput stays at the saturated rate and latency
//!   grows as queue depth / IOPS: the knee fio sweeps show.
//! - *Service.* A request of `b` bytes occupies units for `units x (op + b /
//!   bandwidth)` in all, with `op = 1 / IOPS - 4096 / bandwidth` (at least
//!   0), separately for reads and writes: saturated, a drive does exactly its
//!   4 KiB IOPS and, with large requests, its bandwidth. The request is split
//!   into `min(units, b / 4 KiB)` equal pieces on as many units, so one
//!   large request is as fast as the bandwidth allows; it completes with its
//!   slowest piece. Each piece's time is jittered by `(1 - a) + a Exp(1)`.
//! - *Fixed latency.* What the QD1 latency holds beyond the unit time
//!   (controller, PCIe, completion path) is added as a delay that occupies
//!   no unit.
//! - *Writes.* With a write buffer (`write_buffer_ns > 0`), a write is
//!   acknowledged at the later of (a) its front-end time, the QD1 write
//!   latency plus the transfer of its bytes beyond 4 KiB over the host link,
//!   and (b) the end of its media work (programming) minus the buffer
//!   window: the drive acknowledges from its power-loss-protected buffer as
//!   long as the work queued ahead is within the window; beyond that,
//!   writes wait for room. The media work runs on the units either way, so
//!   writes take capacity from reads. Without a buffer a write completes
//!   when its media work does, plus the fixed latency.
//! - *Read/write interference (NAND).* Besides sharing units (a 4 KiB write
//!   costs `read IOPS / write IOPS` reads' worth of unit time: 2.3 on the
//!   i3 drive, 12.9 on the P4500), a NAND read can land on a die that is
//!   programming: with probability the fraction of units whose current work
//!   is a program when the read starts, the read waits a uniform time up to
//!   `program_read_stall_ns` (500 us \[E\]: TLC programs take 1-2 ms and
//!   datacenter drives suspend them for reads). Optane has no program/erase
//!   cycle, so no stall. With a 4 KiB write stream at 40% of the drive's
//!   write IOPS, reads at a quarter of the units go from 90 to about 190 us
//!   on the i3 drive (x2.1), from 85 to about 185 us on the P4500 (x2.2),
//!   and stay at 8.9 us on the Optane (the tests check these ranges). The
//!   mechanism and the stall bound are estimates, not fitted to a
//!   published mixed-load figure (none is in the reference data).
//!
//! A **device** is one drive, or an md RAID-0 of `drives` identical drives
//! with [`params::RAID_CHUNK_BYTES`] chunks: chunk `c` of the array is on
//! drive `c % drives`; a request is split at chunk boundaries, each part is
//! served by its drive, and the request completes when its last part does,
//! plus the md layer's [`params::RAID_MD_OVERHEAD_NS`]. [`NvmeDevice::submit`]
//! places a request at a uniformly random 4 KiB-aligned offset, so random
//! requests spread over the drives as on a real array, imbalance included;
//! [`NvmeDevice::submit_at`] takes the offset (fio's patterns).
//!
//! A **share** of a device ([`NvmeProfile::share`], representative-shard
//! sampling) serves each request as the whole device would but keeps its
//! units busy `1 / share` times as long, the time the users left out of
//! the simulation would hold them: idle it is as fast as the device,
//! saturated it does its share of the IOPS and bandwidth.
//!
//! Because service is first-come first-served, a request's completion time
//! is fixed when it is submitted and never changed by later requests: every
//! `submit` returns its completion, and `complete` only does the
//! bookkeeping (outstanding requests, busy time).
//!
//! # Faults
//!
//! A slow disk ([`NvmeDevice::set_slowdown`], a [`Slowdown`]) keeps its
//! units but serves worse: its unit times, and with them the other media
//! times (program stall, write-buffer window), are divided by the
//! `throughput_factor`, so saturated it does that fraction of its IOPS and
//! bandwidth; its fixed latency (what the QD1 latency holds beyond the unit
//! time, and a buffered write's acknowledgement path) is multiplied by the
//! `latency_factor`. The md RAID-0 overhead is the host's and stays. Only
//! requests submitted after the change see it: completions already promised
//! keep theirs, and the work queued on the units stays where it is.
//! [`Slowdown::NONE`] restores the healthy device exactly.
//!
//! # Where the numbers come from
//!
//! All constants are in [`params`], each with its source and tag
//! (hardware.md's \[S\]/\[D\]/\[R\]/\[E\]). Datasheet figures are used as
//! published: per-drive read/write IOPS and bandwidth (i3 and i3en from
//! Scylla's io_properties, hardware.md 1.3; Optane P4800X from its spec,
//! hardware.md 3.1; P4500 2.0 TB from hardware.md 3.2), QD1 latencies
//! (Optane: AnandTech's measured 8.9 us; P4500: spec; i3 and i3en: the
//! 80-120 us estimate of hardware.md 3.2). The constants fitted to published
//! figures, and what each is checked against:
//!
//! | constant | value | fitted to | checked against |
//! |---|---|---|---|
//! | `FIO_HOST_TURNAROUND_NS` (sweep host) | 6 us | R6 read knee by Little's law: 24 / 1.0M - 18 us | R6 write knee: 8 / (237 + 6) us = 32.9K vs 32K |
//! | `RAID_MD_OVERHEAD_NS` | 3 us | R6 read knee position and latency (24, 18 us), given the single-drive 8.9 us | single-drive Optane stays at AnandTech's QD1 8.9 us / 108K IOPS; R6 write |
//! | Optane `write_bytes_per_s` | 2.1 GB/s | R6 write IOPS (32K x 128 KiB / 2 drives) | spec 2.0 GB/s (+5%); 4 KiB write IOPS stay at the spec's 500K |
//! | Optane `write_buffer_ns` | 150 us | R6 write knee (~8) | R6 write latency at the knee; 4 KiB QD1 write latency stays at 10 us |
//! | `SERVICE_JITTER` | 0.05 | AnandTech QD1 p99/mean (1.09-1.23) | R6 knees (insensitive) |
//! | NAND `write_buffer_ns` | 2 ms | \[E\], must exceed a 4 KiB write's unit time | QD1 write latency = datasheet on every NAND preset |
//!
//! Measured with `twin device sweep` (seed 1, host turnaround 6 us): R6's
//! 2 x P4800X 4 KiB random read knee is QD 24 at 1.04M IOPS and 17.2 us
//! (published ~24, 1.0M, 18 us); the 128 KiB random write knee is QD 8 at
//! 30.3K IOPS and 258 us (published ~8, 32K, 237 us); one i3 drive
//! saturates at 411K read / 182K write IOPS and 2.01 / 0.81 GB/s with 1 MiB
//! requests (io_properties: 411,200 / 181,500 IOPS, 2.015 / 0.809 GB/s); a
//! single P4800X at QD16 with a 0.3 us host does 550K IOPS at 28.8 us
//! (AnandTech: 584.8K at 25.5 us). The write knee is the least robust
//! figure: between QD 7 and 10 the 2-drive curve rises by only 1.5%, so
//! the 95%-of-peak knee moves between 7 and 8 with the seed.
//!
//! R6's figures look inconsistent with the datasheet (Little's law at 24
//! requests and 18 us would be 1.33M IOPS, more than two drives' 1.1M):
//! fio reports the completion latency, and each request also spends time on
//! the host between its completion and the next submission, so `qd = IOPS x
//! (latency + turnaround)`; the sweep models that turnaround (see
//! `sim::device_sweep`). The knee then follows from three things: the
//! array's QD1 latency (8.9 us + 3 us md), the turnaround (6 us), and the
//! imbalance of random striping over two drives (a drive idles whenever
//! the random offsets leave it without a request), which bends the curve
//! from QD 16 on: the ideal knee would be 1.1M x 17.9 us = 20, the 95% point
//! is 24, where the queues add 5 us to the 12 us QD1 latency.
//!
//! # Left out
//!
//! - Die-level address conflicts of random reads (which soften NAND knees
//!   beyond what the RAID imbalance and jitter give): the units are a pool.
//! - Garbage-collection stalls and the write cliff of a full drive (AWS: "as
//!   you fill the SSD ... write IOPS decreases", hardware.md 1.2); the
//!   steady-state write IOPS average GC in. Random and sequential writes
//!   pay the same per-request cost, so the P4500's GC-bound 38K random
//!   4 KiB IOPS also lowers its large-block write bandwidth by 2.4%.
//! - Read priority over queued programs: reads queue behind buffered
//!   programs first-come first-served, so under saturating writes a read
//!   can wait up to the buffer window (2 ms on NAND).
//! - NVMe queue limits, interrupt coalescing, thermal throttling, TRIM,
//!   and link sharing between reads and writes. The smaller i3 and i3en
//!   sizes (i3.large, i3.xlarge, i3en.large, i3en.xlarge/2xlarge) have
//!   presets of their own, with their sizes' io_properties and the QD1
//!   latencies of the larger drives \[E\].

mod drive;
pub mod params;
#[cfg(test)]
mod tests;

use rand::{Rng, RngExt};
use units::{SimDuration, SimTime};

use drive::{DriveModel, DriveState};
pub use params::DriveParams;
use params::{DRIVES, RAID_CHUNK_BYTES, RAID_MD_OVERHEAD_NS};

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

/// A device: one drive or a RAID-0 of identical drives.
#[derive(Clone, Debug, PartialEq)]
pub struct NvmeProfile {
    /// Preset name of the drive.
    pub name: &'static str,
    /// The drive's datasheet and modelling constants.
    pub drive: DriveParams,
    /// Drives in the RAID-0 (1: a bare drive, no md layer).
    pub drives: u32,
    /// RAID-0 chunk size, bytes (unused with one drive).
    pub chunk_bytes: u64,
    /// Saturated 4 KiB random-read IOPS of the whole device (drives x the
    /// drive's).
    pub read_iops: f64,
    /// Saturated read bandwidth of the whole device, bytes per second.
    pub read_bytes_per_s: f64,
    /// Saturated 4 KiB random-write IOPS of the whole device.
    pub write_iops: f64,
    /// Saturated write bandwidth of the whole device, bytes per second.
    pub write_bytes_per_s: f64,
    /// The fraction of the device this profile's user gets (1: the whole
    /// device; see [`NvmeProfile::share`]). The IOPS and bandwidth above
    /// stay the whole device's.
    pub share: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

impl NvmeProfile {
    fn from_params(params: &DriveParams) -> NvmeProfile {
        NvmeProfile {
            name: params.name,
            drive: params.clone(),
            drives: 1,
            chunk_bytes: RAID_CHUNK_BYTES,
            read_iops: params.read_iops,
            read_bytes_per_s: params.read_bytes_per_s,
            write_iops: params.write_iops,
            write_bytes_per_s: params.write_bytes_per_s,
            share: 1.0,
            source: params.source,
        }
    }

    /// One 1.9 TB NVMe drive of an AWS i3 instance.
    pub fn i3_drive() -> NvmeProfile {
        NvmeProfile::from_params(&DRIVES[0])
    }

    /// Intel Optane SSD DC P4800X.
    pub fn optane_p4800x() -> NvmeProfile {
        NvmeProfile::by_name("optane-p4800x").expect("preset in the table")
    }

    /// All presets, one drive each.
    pub fn presets() -> Vec<NvmeProfile> {
        DRIVES.iter().map(NvmeProfile::from_params).collect()
    }

    /// The preset called `name` (one drive).
    pub fn by_name(name: &str) -> Option<NvmeProfile> {
        DRIVES
            .iter()
            .find(|params| params.name == name)
            .map(NvmeProfile::from_params)
    }

    /// A RAID-0 of `drives` copies of this device (md RAID-0 with
    /// [`params::RAID_CHUNK_BYTES`] chunks).
    pub fn striped(&self, drives: u32) -> NvmeProfile {
        assert!(drives >= 1, "a RAID-0 needs at least one drive");
        let scale = f64::from(drives);
        NvmeProfile {
            drives: self.drives * drives,
            read_iops: self.read_iops * scale,
            read_bytes_per_s: self.read_bytes_per_s * scale,
            write_iops: self.write_iops * scale,
            write_bytes_per_s: self.write_bytes_per_s * scale,
            ..self.clone()
        }
    }

    /// The part of this device that `fraction` (in (0, 1]) of its users
    /// get when every user keeps it busy, as a device of its own
    /// (representative-shard sampling gives each simulated shard what a
    /// full node's device gives a shard). Every request is still served
    /// at the whole device's speed, on its units, but holds the units it
    /// used `1 / share` times as long: the time the users that are not
    /// simulated would take in between. So an idle share answers as fast
    /// as the whole device, a saturated one does `share` of its IOPS and
    /// bandwidth, and the queueing in between is the whole device's at
    /// the same utilisation (the other users' load is taken to arrive with
    /// this user's). Shares compose: `share(a).share(b)` is `a x b`.
    pub fn share(&self, fraction: f64) -> NvmeProfile {
        assert!(
            fraction > 0.0 && fraction <= 1.0,
            "a share of a device is a fraction in (0, 1]"
        );
        NvmeProfile {
            share: self.share * fraction,
            ..self.clone()
        }
    }

    /// Internal units of one drive: its read IOPS times its QD1 read
    /// latency (Little's law at the onset of saturation), rounded down.
    pub fn units_per_drive(&self) -> u32 {
        DriveModel::new(&self.drive).units as u32
    }

    /// Requests the whole device serves at once: units per drive x drives.
    pub fn channels(&self) -> u32 {
        self.units_per_drive() * self.drives
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

/// How a degraded device serves requests while a slow-disk fault lasts (see
/// [`NvmeDevice::set_slowdown`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slowdown {
    /// Multiplies the fixed latency of every request: what the QD1 latency
    /// holds beyond the unit time (controller, host link, completion path),
    /// and the whole acknowledgement of a buffered write. Finite and > 0
    /// (above 1 slows the device). The md RAID-0 overhead is the host
    /// kernel's, not the device's, and is not scaled.
    pub latency_factor: f64,
    /// Fraction of its IOPS and bandwidth the device keeps, in (0, 1]: every
    /// unit's service time is divided by it, and so are the other media
    /// times (the program stall, the write-buffer window: the buffer holds
    /// as many bytes, which take longer to program).
    pub throughput_factor: f64,
}

impl Slowdown {
    /// A healthy device.
    pub const NONE: Slowdown = Slowdown {
        latency_factor: 1.0,
        throughput_factor: 1.0,
    };

    /// The most a slowdown multiplies a device's latency by: a 70-us read
    /// then takes 0.7 s, past every client's timeout, so a larger factor
    /// says nothing more (a dead device is `disk-fail`), while keeping
    /// every service time far from the clock's end.
    pub const MAX_LATENCY_FACTOR: f64 = 1e4;

    /// The least fraction of its throughput a slowed device keeps: an
    /// i3's 100K-IOPS drive then serves 10 reads a second.
    pub const MIN_THROUGHPUT_FACTOR: f64 = 1e-4;

    /// Whether both factors are within their bounds
    /// (`[1, MAX_LATENCY_FACTOR]`, `[MIN_THROUGHPUT_FACTOR, 1]`); NaN is
    /// not.
    pub fn is_bounded(&self) -> bool {
        (1.0..=Self::MAX_LATENCY_FACTOR).contains(&self.latency_factor)
            && (Self::MIN_THROUGHPUT_FACTOR..=1.0).contains(&self.throughput_factor)
    }

    /// Two slowdowns in force together: their factors multiply, clamped
    /// to the bounds, so faults that are each valid cannot stack into a
    /// device slower than the model is meant for.
    pub fn stacked(self, other: Slowdown) -> Slowdown {
        debug_assert!(self.is_bounded() && other.is_bounded());
        let stacked = Slowdown {
            latency_factor: (self.latency_factor * other.latency_factor)
                .min(Self::MAX_LATENCY_FACTOR),
            throughput_factor: (self.throughput_factor * other.throughput_factor)
                .max(Self::MIN_THROUGHPUT_FACTOR),
        };
        debug_assert!(stacked.is_bounded());
        stacked
    }
}

// The bounds keep a slowed service time within the clock: a second-long
// service scaled by both factors (1e17 ns, three years) stays a hundredth
// of the nanoseconds a u64 holds.
const _: () = assert!(Slowdown::MAX_LATENCY_FACTOR >= 1.0);
const _: () =
    assert!(Slowdown::MIN_THROUGHPUT_FACTOR > 0.0 && Slowdown::MIN_THROUGHPUT_FACTOR <= 1.0);
const _: () = assert!(
    1e9 * Slowdown::MAX_LATENCY_FACTOR / Slowdown::MIN_THROUGHPUT_FACTOR < u64::MAX as f64 / 100.0
);

/// Span of the random offsets [`NvmeDevice::submit`] draws, per drive: only
/// the chunk an offset falls in matters, so any span of many chunks will do.
const RANDOM_SPAN_BLOCKS_PER_DRIVE: u64 = 1 << 28;

/// A drive (or RAID-0 set) in operation.
#[derive(Clone, Debug)]
pub struct NvmeDevice {
    profile: NvmeProfile,
    /// The model every request is served by: the profile's, degraded by
    /// `slowdown` (rebuilt when it changes, so serving reads one model).
    model: DriveModel,
    slowdown: Slowdown,
    drives: Vec<DriveState>,
    md_overhead_ns: u64,
    scratch: Vec<usize>,
    outstanding: u64,
    busy_since: Option<SimTime>,
    busy_total: SimDuration,
    completed: u64,
    bytes_read: u64,
    bytes_written: u64,
}

impl NvmeDevice {
    /// An idle device.
    pub fn new(profile: NvmeProfile) -> NvmeDevice {
        let model = DriveModel::new(&profile.drive).shared(profile.share);
        let drives = (0..profile.drives.max(1))
            .map(|_| DriveState::new(&model))
            .collect();
        let md_overhead_ns = if profile.drives > 1 {
            RAID_MD_OVERHEAD_NS
        } else {
            0
        };
        NvmeDevice {
            scratch: Vec::with_capacity(model.units),
            profile,
            model,
            slowdown: Slowdown::NONE,
            drives,
            md_overhead_ns,
            outstanding: 0,
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

    /// Degrades the device by `slowdown` (a slow-disk fault), or restores
    /// it with [`Slowdown::NONE`]. Requests submitted from now on are served
    /// by the slowed drives; those already submitted keep the completions
    /// they were promised, and the work they queued on the units stays (new
    /// requests wait for it as before). The profile keeps the healthy
    /// figures. Panics unless `latency_factor` is finite and > 0 and
    /// `throughput_factor` is in (0, 1].
    pub fn set_slowdown(&mut self, slowdown: Slowdown) {
        let Slowdown {
            latency_factor,
            throughput_factor,
        } = slowdown;
        // Written so that NaN fails too.
        assert!(
            latency_factor.is_finite() && latency_factor > 0.0,
            "slowdown latency_factor must be finite and > 0, got {latency_factor}"
        );
        assert!(
            throughput_factor > 0.0 && throughput_factor <= 1.0,
            "slowdown throughput_factor must be in (0, 1], got {throughput_factor}"
        );
        // From the healthy model every time: slowdowns replace each other
        // rather than compound, and NONE gives back the model `new` built.
        self.model = DriveModel::new(&self.profile.drive)
            .shared(self.profile.share)
            .slowed(slowdown);
        self.slowdown = slowdown;
    }

    /// The slowdown in force ([`Slowdown::NONE`] unless
    /// [`NvmeDevice::set_slowdown`] said otherwise).
    pub fn slowdown(&self) -> Slowdown {
        self.slowdown
    }

    /// Submits request `tag` at a random 4 KiB-aligned offset (what the
    /// engine's I/O looks like to a RAID-0: which drive it lands on is
    /// uniform). Every request is promised its completion at once: the model
    /// is first-come first-served, so nothing submitted later changes it.
    /// The result is always `Some`.
    pub fn submit<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        tag: u64,
        op: IoOp,
        rng: &mut R,
    ) -> Option<Completion> {
        let offset = if self.drives.len() > 1 {
            let span = RANDOM_SPAN_BLOCKS_PER_DRIVE * self.drives.len() as u64;
            rng.random_range(0..span) * 4096
        } else {
            0
        };
        Some(self.submit_at(now, tag, op, offset, rng))
    }

    /// Submits request `tag` at byte `offset` of the device (fio's
    /// sequential and block-aligned random patterns); returns its completion.
    pub fn submit_at<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        tag: u64,
        op: IoOp,
        offset: u64,
        rng: &mut R,
    ) -> Completion {
        if self.outstanding == 0 {
            self.busy_since = Some(now);
        }
        self.outstanding += 1;
        match op.direction {
            IoDirection::Read => self.bytes_read += op.bytes,
            IoDirection::Write => self.bytes_written += op.bytes,
        }
        let t0 = now.as_nanos();
        let drives = self.drives.len() as u64;
        let end = if drives == 1 {
            self.drives[0].serve(
                &self.model,
                t0,
                op.direction,
                op.bytes,
                rng,
                &mut self.scratch,
            )
        } else {
            // md RAID-0: chunk c of the array is chunk c / N of drive c % N;
            // a request is split at chunk boundaries and completes when its
            // last part does.
            let chunk = self.profile.chunk_bytes;
            let (mut at, mut left, mut end) = (offset, op.bytes.max(1), t0);
            while left > 0 {
                let part = left.min(chunk - at % chunk);
                let drive = ((at / chunk) % drives) as usize;
                let bytes = part.min(op.bytes);
                let done = self.drives[drive].serve(
                    &self.model,
                    t0,
                    op.direction,
                    bytes,
                    rng,
                    &mut self.scratch,
                );
                end = end.max(done);
                at += part;
                left -= part;
            }
            end + self.md_overhead_ns
        };
        Completion {
            tag,
            at: SimTime::from_nanos(end),
        }
    }

    /// Reports that a promised completion happened at `now` (call it once
    /// per completion, in time order). Every completion was promised at
    /// submission, so this never starts another: the result is always
    /// `None`.
    pub fn complete<R: Rng + ?Sized>(&mut self, now: SimTime, _rng: &mut R) -> Option<Completion> {
        assert!(self.outstanding > 0, "completion with nothing outstanding");
        self.outstanding -= 1;
        self.completed += 1;
        if self.outstanding == 0 {
            if let Some(since) = self.busy_since.take() {
                self.busy_total = self.busy_total + now.saturating_since(since);
            }
        }
        None
    }

    /// Requests submitted and not yet completed.
    pub fn outstanding(&self) -> usize {
        self.outstanding as usize
    }

    /// Total time with at least one request outstanding, up to `now` (the
    /// host's view, as iostat's %util: a buffered write's media work after
    /// its completion does not count).
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

    /// Bytes read and written by requests submitted so far.
    pub fn bytes_transferred(&self) -> (u64, u64) {
        (self.bytes_read, self.bytes_written)
    }
}
