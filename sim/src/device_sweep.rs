//! `twin device sweep`: the NVMe model alone under fio-like closed loops,
//! one per queue depth.
//!
//! At each queue depth `qd`, `qd` slots each keep one request outstanding:
//! a slot submits, waits for the completion, spends the host turnaround
//! (fio reaping the event and submitting the next one; by default
//! [`models::nvme::params::FIO_HOST_TURNAROUND_NS`], fitted to R6), and
//! submits again. Latency is measured from submission to completion, as
//! fio's `clat`; the turnaround is outside it but inside the cycle, so IOPS
//! obey the interactive response-time law `qd = IOPS x (latency +
//! turnaround)`.
//!
//! Offsets are what fio generates: `randread`/`randwrite` draw a block
//! uniformly (aligned to the block size, fio's default `blockalign`);
//! `read`/`write` advance one block per submission from offset 0.
//!
//! Each point is deterministic and independent of the others: it starts
//! from an idle device and the stream `sim::rng::stream(seed,
//! "device-sweep")`, runs [`warmup_requests`] completions unmeasured, then
//! measures [`measured_requests`] completions. IOPS is measured completions
//! over the time they took; percentiles are nearest-rank over the measured
//! latencies. The knee is the smallest swept queue depth whose IOPS reach
//! 95% of the highest IOPS of the sweep.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

use models::nvme::params::FIO_HOST_TURNAROUND_NS;
pub use models::nvme::NvmeProfile;
use models::nvme::{IoDirection, IoOp, NvmeDevice};
use rand::RngExt;
use serde::Serialize;
use units::{SimDuration, SimTime};

use crate::rng;

/// Fraction of the peak IOPS that defines the knee.
pub const KNEE_FRACTION: f64 = 0.95;

/// Largest queue depth a sweep accepts.
pub const MAX_QD: u32 = 4096;

/// Largest block size a sweep accepts (64 MiB).
pub const MAX_BLOCK_BYTES: u64 = 64 << 20;

/// The fio access patterns the sweep runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepOp {
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
}

impl SweepOp {
    /// fio's name for it.
    pub fn name(self) -> &'static str {
        match self {
            SweepOp::RandRead => "randread",
            SweepOp::RandWrite => "randwrite",
            SweepOp::Read => "read",
            SweepOp::Write => "write",
        }
    }

    fn direction(self) -> IoDirection {
        match self {
            SweepOp::RandRead | SweepOp::Read => IoDirection::Read,
            SweepOp::RandWrite | SweepOp::Write => IoDirection::Write,
        }
    }

    fn random(self) -> bool {
        matches!(self, SweepOp::RandRead | SweepOp::RandWrite)
    }
}

/// A sweep argument refused: the option it was given to (by variant) and
/// the text given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SweepArgumentError {
    /// `--op` is not an operation.
    Op(String),
    /// `--bs` is not a block size.
    BlockSize(String),
    /// `--qd` is not a list of queue depths.
    QueueDepths(String),
}

impl fmt::Display for SweepArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepArgumentError::Op(text) => write!(
                f,
                "unknown op `{text}`, expected one of randread, randwrite, read, write"
            ),
            SweepArgumentError::BlockSize(text) => write!(
                f,
                "bad block size `{text}`, expected a multiple of 512 bytes up to 64m, like fio's 4k, 128k, 1m"
            ),
            SweepArgumentError::QueueDepths(text) => write!(
                f,
                "bad queue depths `{text}`, expected a range like 1..64 (powers of two from 1 to 64) or a list like 1,2,4,8, each 1..={MAX_QD}"
            ),
        }
    }
}

impl std::error::Error for SweepArgumentError {}

/// Parses `--op`: `randread`, `randwrite`, `read` or `write`.
pub fn parse_op(text: &str) -> Result<SweepOp, SweepArgumentError> {
    match text {
        "randread" => Ok(SweepOp::RandRead),
        "randwrite" => Ok(SweepOp::RandWrite),
        "read" => Ok(SweepOp::Read),
        "write" => Ok(SweepOp::Write),
        _ => Err(SweepArgumentError::Op(text.to_string())),
    }
}

/// Parses `--bs` as fio does: a number of bytes with an optional binary
/// suffix, `k`/`kb`/`kib` = 1024, `m`/`mb`/`mib` = 1024 x 1024 (case
/// insensitive): `4k` = 4096, `128k` = 131072, `1m` = 1048576. The size must
/// be a positive multiple of 512 bytes, at most 64 MiB.
pub fn parse_block_size(text: &str) -> Result<u64, SweepArgumentError> {
    let lower = text.trim().to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, suffix) = lower.split_at(digits_end);
    let scale = match suffix {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        _ => 0,
    };
    let bytes = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale));
    match bytes {
        Some(bytes) if bytes > 0 && bytes.is_multiple_of(512) && bytes <= MAX_BLOCK_BYTES => {
            Ok(bytes)
        }
        _ => Err(SweepArgumentError::BlockSize(text.to_string())),
    }
}

/// Parses `--qd`: `A..B` is every power of two from A to B (A, 2A, 4A, ...
/// up to B, and B itself if it is not on that ladder), as fio sweeps are
/// usually run; `A,B,C` is that list. Depths are sorted and deduplicated;
/// each must be 1..=4096.
pub fn parse_qd_list(text: &str) -> Result<Vec<u32>, SweepArgumentError> {
    let bad = || SweepArgumentError::QueueDepths(text.to_string());
    let depth = |part: &str| -> Result<u32, SweepArgumentError> {
        match part.trim().parse::<u32>() {
            Ok(qd) if (1..=MAX_QD).contains(&qd) => Ok(qd),
            _ => Err(bad()),
        }
    };
    let mut depths = Vec::new();
    if let Some((from, to)) = text.split_once("..") {
        let (from, to) = (depth(from)?, depth(to)?);
        if from > to {
            return Err(bad());
        }
        let mut qd = from;
        while qd < to {
            depths.push(qd);
            qd = qd.saturating_mul(2);
        }
        depths.push(to);
    } else {
        for part in text.split(',') {
            depths.push(depth(part)?);
        }
    }
    depths.sort_unstable();
    depths.dedup();
    Ok(depths)
}

/// Completions run unmeasured at queue depth `qd` before measuring.
pub fn warmup_requests(qd: u32) -> u64 {
    2_000 + 4 * u64::from(qd)
}

/// Completions measured at queue depth `qd`.
pub fn measured_requests(qd: u32) -> u64 {
    40_000 + 200 * u64::from(qd)
}

/// What to sweep.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    /// The device (a preset, possibly striped).
    pub device: NvmeProfile,
    /// Access pattern.
    pub op: SweepOp,
    /// Block size, bytes.
    pub block_bytes: u64,
    /// Queue depths, ascending.
    pub depths: Vec<u32>,
    /// Seed of the sweep's stream.
    pub seed: u64,
    /// Host time per I/O outside the measured latency.
    pub host_turnaround: SimDuration,
}

impl SweepConfig {
    /// A sweep with the default seed (1) and fio host turnaround.
    pub fn new(device: NvmeProfile, op: SweepOp, block_bytes: u64, depths: Vec<u32>) -> Self {
        SweepConfig {
            device,
            op,
            block_bytes,
            depths,
            seed: 1,
            host_turnaround: SimDuration::from_nanos(FIO_HOST_TURNAROUND_NS),
        }
    }
}

/// One queue depth's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Queue depth.
    pub qd: u32,
    /// Completions per second.
    pub iops: f64,
    /// Megabytes (10^6 bytes) per second.
    pub mb_per_s: f64,
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// 95th percentile latency, microseconds.
    pub p95_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
}

/// The knee of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Knee {
    /// Queue depth.
    pub qd: u32,
    /// IOPS there.
    pub iops: f64,
    /// Mean latency there, microseconds.
    pub mean_us: f64,
}

/// A whole sweep (the `--json` output).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepReport {
    /// Device description, e.g. `optane-p4800x x2`.
    pub device: String,
    /// fio op name.
    pub op: String,
    /// Block size, bytes.
    pub bs_bytes: u64,
    /// One point per queue depth.
    pub points: Vec<SweepPoint>,
    /// The knee.
    pub knee: Knee,
}

/// The device's display name: the preset, with `xN` for a RAID-0 of N.
pub fn device_label(device: &NvmeProfile) -> String {
    if device.drives > 1 {
        format!("{} x{}", device.name, device.drives)
    } else {
        device.name.to_string()
    }
}

/// Runs the sweep.
pub fn run_sweep(config: &SweepConfig) -> SweepReport {
    assert!(!config.depths.is_empty(), "a sweep needs queue depths");
    let points: Vec<SweepPoint> = config
        .depths
        .iter()
        .map(|&qd| run_point(config, qd))
        .collect();
    let peak = points.iter().map(|p| p.iops).fold(0.0, f64::max);
    let knee = points
        .iter()
        .find(|p| p.iops >= KNEE_FRACTION * peak)
        .map(|p| Knee {
            qd: p.qd,
            iops: p.iops,
            mean_us: p.mean_us,
        })
        .expect("the peak point reaches the knee");
    SweepReport {
        device: device_label(&config.device),
        op: config.op.name().to_string(),
        bs_bytes: config.block_bytes,
        points,
        knee,
    }
}

/// A closed loop at one queue depth.
fn run_point(config: &SweepConfig, qd: u32) -> SweepPoint {
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    enum Step {
        // Completions sort before submissions at the same instant.
        Complete,
        Submit,
    }
    let mut rng = rng::stream(config.seed, "device-sweep");
    let mut device = NvmeDevice::new(config.device.clone());
    let op = IoOp {
        direction: config.op.direction(),
        bytes: config.block_bytes,
    };
    let blocks = (1u64 << 40) / config.block_bytes * u64::from(config.device.drives);
    let mut next_offset = 0u64;
    let mut submitted_at = vec![SimTime::ZERO; qd as usize];
    let mut events: BinaryHeap<Reverse<(SimTime, Step, u32)>> = BinaryHeap::new();
    for slot in 0..qd {
        events.push(Reverse((SimTime::ZERO, Step::Submit, slot)));
    }
    let turnaround = config.host_turnaround;
    let (warmup, measured) = (warmup_requests(qd), measured_requests(qd));
    let mut latencies: Vec<u64> = Vec::with_capacity(measured as usize);
    let mut completions = 0u64;
    let mut measure_from = SimTime::ZERO;
    let mut last = SimTime::ZERO;
    while let Some(Reverse((now, step, slot))) = events.pop() {
        match step {
            Step::Submit => {
                let offset = if config.op.random() {
                    rng.random_range(0..blocks) * config.block_bytes
                } else {
                    let offset = next_offset;
                    next_offset += config.block_bytes;
                    offset
                };
                submitted_at[slot as usize] = now;
                let done = device.submit_at(now, u64::from(slot), op, offset, &mut rng);
                events.push(Reverse((done.at, Step::Complete, slot)));
            }
            Step::Complete => {
                let started = device.complete(now, &mut rng);
                debug_assert!(started.is_none());
                completions += 1;
                if completions == warmup {
                    measure_from = now;
                } else if completions > warmup {
                    latencies.push((now - submitted_at[slot as usize]).as_nanos());
                    last = now;
                    if completions == warmup + measured {
                        break;
                    }
                }
                events.push(Reverse((now + turnaround, Step::Submit, slot)));
            }
        }
    }
    let seconds = (last - measure_from).as_secs_f64();
    let iops = latencies.len() as f64 / seconds;
    latencies.sort_unstable();
    let mean_ns = latencies.iter().sum::<u64>() as f64 / latencies.len() as f64;
    let percentile = |p: f64| {
        let rank = ((p * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
        latencies[rank - 1] as f64 / 1e3
    };
    SweepPoint {
        qd,
        iops,
        mb_per_s: iops * config.block_bytes as f64 / 1e6,
        mean_us: mean_ns / 1e3,
        p95_us: percentile(0.95),
        p99_us: percentile(0.99),
    }
}

impl SweepReport {
    /// The table `twin device sweep` prints.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "device {}, {} bs={} ({} bytes)\n{:>6} {:>12} {:>10} {:>10} {:>10} {:>10}\n",
            self.device,
            self.op,
            format_block(self.bs_bytes),
            self.bs_bytes,
            "qd",
            "iops",
            "MB/s",
            "mean_us",
            "p95_us",
            "p99_us"
        );
        for p in &self.points {
            text.push_str(&format!(
                "{:>6} {:>12.0} {:>10.1} {:>10.1} {:>10.1} {:>10.1}\n",
                p.qd, p.iops, p.mb_per_s, p.mean_us, p.p95_us, p.p99_us
            ));
        }
        text.push_str(&format!(
            "knee: qd {} ({:.0} IOPS, {:.1} us mean; the smallest qd reaching {:.0}% of peak IOPS)\n",
            self.knee.qd,
            self.knee.iops,
            self.knee.mean_us,
            KNEE_FRACTION * 100.0
        ));
        text
    }
}

/// The table `twin device list` prints: one row per preset, per drive.
pub fn preset_table() -> String {
    let mut text = format!(
        "{:<16} {:>10} {:>10} {:>8} {:>10} {:>10} {:>8} {:>5}  {}\n",
        "device",
        "read_iops",
        "read_MB/s",
        "read_us",
        "write_iops",
        "write_MB/s",
        "write_us",
        "units",
        "description"
    );
    for preset in NvmeProfile::presets() {
        let drive = &preset.drive;
        text.push_str(&format!(
            "{:<16} {:>10.0} {:>10.0} {:>8.1} {:>10.0} {:>10.0} {:>8.1} {:>5}  {}\n",
            preset.name,
            drive.read_iops,
            drive.read_bytes_per_s / 1e6,
            drive.read_latency_ns as f64 / 1e3,
            drive.write_iops,
            drive.write_bytes_per_s / 1e6,
            drive.write_latency_ns as f64 / 1e3,
            preset.units_per_drive(),
            drive.description
        ));
    }
    text.push_str(
        "per drive: saturated 4 KiB IOPS, large-block MB/s (10^6 bytes), QD1 4 KiB latency in us; \
         sources in models::nvme::params\n",
    );
    text
}

/// `4k`, `128k`, `1m` or bytes, as fio writes block sizes.
fn format_block(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{}m", bytes >> 20)
    } else if bytes.is_multiple_of(1024) {
        format!("{}k", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(value: f64, target: f64, tolerance: f64) -> bool {
        (value - target).abs() <= tolerance * target
    }

    fn sweep(device: NvmeProfile, op: SweepOp, block_bytes: u64, depths: Vec<u32>) -> SweepReport {
        run_sweep(&SweepConfig::new(device, op, block_bytes, depths))
    }

    fn optane_pair() -> NvmeProfile {
        NvmeProfile::optane_p4800x().striped(2)
    }

    fn peak(report: &SweepReport) -> &SweepPoint {
        report
            .points
            .iter()
            .max_by(|a, b| a.iops.total_cmp(&b.iops))
            .expect("points")
    }

    #[test]
    fn queue_depths_are_power_of_two_ranges_or_lists() {
        assert_eq!(
            parse_qd_list("1..64").unwrap(),
            vec![1, 2, 4, 8, 16, 32, 64]
        );
        assert_eq!(parse_qd_list("3..20").unwrap(), vec![3, 6, 12, 20]);
        assert_eq!(parse_qd_list("8..8").unwrap(), vec![8]);
        assert_eq!(parse_qd_list("8, 1,2,4,4").unwrap(), vec![1, 2, 4, 8]);
        for bad in ["", "0..4", "8..4", "1..", "a", "1,,2", "1..5000", "-1"] {
            let error = parse_qd_list(bad).unwrap_err().to_string();
            assert!(error.contains("1..64"), "{bad}: {error}");
        }
    }

    #[test]
    fn block_sizes_read_like_fio() {
        assert_eq!(parse_block_size("4k").unwrap(), 4096);
        assert_eq!(parse_block_size("128K").unwrap(), 131_072);
        assert_eq!(parse_block_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_block_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_block_size("512").unwrap(), 512);
        for bad in ["", "0", "100", "k", "4g", "65m", "4 k", "-4k"] {
            assert!(
                parse_block_size(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("4k"),
                "{bad}"
            );
        }
    }

    #[test]
    fn ops_are_fio_names() {
        for op in [
            SweepOp::RandRead,
            SweepOp::RandWrite,
            SweepOp::Read,
            SweepOp::Write,
        ] {
            assert_eq!(parse_op(op.name()), Ok(op));
        }
        assert!(parse_op("randrw")
            .unwrap_err()
            .to_string()
            .contains("randread"));
    }

    /// R6 (published-runs.md): fio 4 KB random reads on a RAID-0 of 2 x
    /// P4800X: knee ~24, 1.0M IOPS, 18 us.
    #[test]
    fn r6_optane_random_read_knee() {
        let report = sweep(optane_pair(), SweepOp::RandRead, 4096, (1..=64).collect());
        let knee = &report.knee;
        assert!(within(f64::from(knee.qd), 24.0, 0.15), "{knee:?}");
        assert!(within(knee.iops, 1.0e6, 0.15), "{knee:?}");
        assert!(within(knee.mean_us, 18.0, 0.15), "{knee:?}");
    }

    /// R6: fio 128 KB random writes on the same array: knee ~8, 32K IOPS,
    /// 237 us.
    #[test]
    fn r6_optane_random_write_knee() {
        let mut depths: Vec<u32> = (1..=16).collect();
        depths.extend([24, 32, 48, 64]);
        let report = sweep(optane_pair(), SweepOp::RandWrite, 128 * 1024, depths);
        let knee = &report.knee;
        assert!(within(f64::from(knee.qd), 8.0, 0.15), "{knee:?}");
        assert!(within(knee.iops, 32_000.0, 0.15), "{knee:?}");
        assert!(within(knee.mean_us, 237.0, 0.15), "{knee:?}");
    }

    /// hardware.md 1.3: Scylla's io_properties for one i3 drive, measured
    /// by iotune (random 4 KiB IOPS, 1 MiB sequential bandwidth).
    #[test]
    fn i3_drive_reproduces_its_io_properties() {
        let i3 = NvmeProfile::i3_drive;
        let depths = parse_qd_list("1..256").unwrap();
        let cases = [
            (SweepOp::RandRead, 4096, 411_200.0, 0.0),
            (SweepOp::RandWrite, 4096, 181_500.0, 0.0),
            (SweepOp::Read, 1 << 20, 0.0, 2_015_342_735.0),
            (SweepOp::Write, 1 << 20, 0.0, 808_775_652.0),
        ];
        for (op, block_bytes, iops, bytes_per_s) in cases {
            let report = sweep(i3(), op, block_bytes, depths.clone());
            let best = peak(&report);
            if iops > 0.0 {
                assert!(within(best.iops, iops, 0.10), "{op:?}: {best:?}");
            } else {
                assert!(
                    within(best.mb_per_s * 1e6, bytes_per_s, 0.10),
                    "{op:?}: {best:?}"
                );
            }
        }
    }

    #[test]
    fn a_raid0_of_n_drives_gives_n_times_the_iops_at_n_times_the_knee() {
        // The same relative grid for each array: steps of 4 x N up to 128 x N.
        let depths = |drives: u32| -> Vec<u32> { (1..=32).map(|step| 4 * drives * step).collect() };
        let single = sweep(NvmeProfile::i3_drive(), SweepOp::RandRead, 4096, depths(1));
        for drives in [2u32, 4] {
            let array = sweep(
                NvmeProfile::i3_drive().striped(drives),
                SweepOp::RandRead,
                4096,
                depths(drives),
            );
            let n = f64::from(drives);
            assert!(
                within(peak(&array).iops, n * peak(&single).iops, 0.05),
                "{drives} drives: {:?}",
                peak(&array)
            );
            assert!(
                within(
                    f64::from(array.knee.qd),
                    n * f64::from(single.knee.qd),
                    0.15
                ),
                "{drives} drives: knee {:?}, one drive {:?}",
                array.knee,
                single.knee
            );
        }
    }

    #[test]
    fn every_point_obeys_the_response_time_law() {
        let report = sweep(
            NvmeProfile::by_name("p4500-tlc").unwrap(),
            SweepOp::RandRead,
            4096,
            parse_qd_list("1..128").unwrap(),
        );
        let host_us = FIO_HOST_TURNAROUND_NS as f64 / 1e3;
        for p in &report.points {
            let in_flight = p.iops * (p.mean_us + host_us) / 1e6;
            assert!(within(in_flight, f64::from(p.qd), 0.01), "{p:?}");
            assert!(p.mean_us <= p.p95_us && p.p95_us <= p.p99_us, "{p:?}");
        }
        let flat = &report.points[..4];
        assert!(
            flat.iter().all(|p| within(p.mean_us, 85.0, 0.02)),
            "{flat:?}"
        );
    }

    #[test]
    fn sweeps_are_deterministic_and_serialize_as_documented() {
        let run = || {
            sweep(
                NvmeProfile::i3_drive().striped(2),
                SweepOp::Write,
                128 * 1024,
                vec![1, 4, 16],
            )
        };
        let first = run();
        assert_eq!(first, run());
        let json: serde_json::Value = serde_json::to_value(&first).unwrap();
        assert_eq!(json["device"], "i3-nvme x2");
        assert_eq!(json["op"], "write");
        assert_eq!(json["bs_bytes"], 131_072);
        let point = &json["points"][0];
        for key in ["qd", "iops", "mb_per_s", "mean_us", "p95_us", "p99_us"] {
            assert!(point.get(key).is_some(), "{key}");
        }
        for key in ["qd", "iops", "mean_us"] {
            assert!(json["knee"].get(key).is_some(), "{key}");
        }
        assert!(first.to_text().contains("knee: qd"));
    }
}
