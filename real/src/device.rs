//! `twin device measure DIR`: this machine's disk swept as fio would sweep
//! it, and the device preset the twin's NVMe model takes from the sweep.
//!
//! One file of `size` bytes in DIR, opened with `O_DIRECT` (the page cache
//! bypassed, as fio's `--direct=1`), written whole first (1 MiB sequential
//! writes, so the reads below read written blocks, not holes). Then each
//! point: `qd` threads, each keeping one synchronous request outstanding
//! (`pread`/`pwrite`: fio's `--ioengine=psync --numjobs=qd`), for
//! `seconds`; latency from submission to completion (fio's `clat`), IOPS as
//! completions over the point's time. The points:
//! - `randread` 4 KiB at each swept queue depth: the read curve and its knee;
//! - `read` 1 MiB at the deepest queue: the read bandwidth;
//! - `randwrite` 4 KiB at queue depth 1 and at the deepest: write latency
//!   and IOPS;
//! - `write` 128 KiB (sequential, each thread its own region) at each swept
//!   queue depth up to 16: the write bandwidth, as flushes and compactions
//!   write.
//!
//! A virtual machine's disk may be cached or throttled by its host: what is
//! measured is what the guest sees, which is what a database on it sees.
//!
//! When `fio` is installed, the same `randread` points are run with it
//! (`--ioengine=psync --numjobs=QD --direct=1`) and printed beside ours.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hdrhistogram::Histogram;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// Direct I/O wants buffers, offsets and lengths aligned to the logical
/// block; 4 KiB covers every device here.
const ALIGN: usize = 4096;

/// What to sweep.
#[derive(Clone, Debug)]
pub struct MeasureOptions {
    /// The folder the test file goes in (on the disk to measure).
    pub dir: PathBuf,
    /// The test file's size, bytes.
    pub size: u64,
    /// Seconds per point.
    pub seconds: f64,
    /// Queue depths of the random-read sweep.
    pub read_depths: Vec<u32>,
    /// Queue depths of the 128-KiB write sweep.
    pub write_depths: Vec<u32>,
    /// Seed of the offsets.
    pub seed: u64,
}

/// One measured point.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// fio's name of the pattern: `randread`, `read`, `randwrite`, `write`.
    pub op: &'static str,
    /// Block size, bytes.
    pub block_bytes: u64,
    /// Requests outstanding (threads).
    pub qd: u32,
    /// Completions per second.
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Mean completion latency, microseconds.
    pub mean_us: f64,
    /// Median, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// The same point run by fio, where installed: IOPS and mean latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio: Option<FioPoint>,
}

/// fio's figures of one point.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FioPoint {
    /// Completions per second.
    pub iops: f64,
    /// Mean completion latency, microseconds.
    pub mean_us: f64,
    /// Median, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
}

/// The whole sweep.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// The file measured.
    pub file: String,
    /// Its size, bytes.
    pub size: u64,
    /// Seconds per point.
    pub seconds: f64,
    /// The points, in the order run.
    pub points: Vec<Point>,
    /// Whether fio ran beside.
    pub fio: bool,
}

/// A `Vec<u8>` holding one aligned block of `len` bytes (direct I/O needs
/// the buffer's address aligned, which `Vec` does not promise).
struct AlignedBuffer {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuffer {
    fn new(len: usize) -> AlignedBuffer {
        let bytes = vec![0x5a; len + ALIGN];
        let start = bytes.as_ptr().align_offset(ALIGN);
        assert!(
            start < ALIGN,
            "a byte buffer can always be aligned within ALIGN bytes"
        );
        AlignedBuffer { bytes, start, len }
    }

    fn block(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

fn open_direct(path: &Path, write: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .create(write)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

/// Runs the sweep (see the module doc), printing each point through `say`.
pub fn measure(options: &MeasureOptions, say: &dyn Fn(&str)) -> std::io::Result<Measurement> {
    if options.size < 64 << 20 {
        return Err(std::io::Error::other("--size must be at least 64MiB"));
    }
    let size = options.size / (1 << 20) * (1 << 20);
    std::fs::create_dir_all(&options.dir)?;
    let path = options.dir.join("twin-device-measure.dat");
    say(&format!(
        "writing {} to {} with direct I/O",
        units::format_bytes(size),
        path.display()
    ));
    let fill = {
        let file = open_direct(&path, true)?;
        let result = run_point(&file, "write", 1 << 20, 1, size, None, options.seed);
        file.sync_all()?;
        result?
    };
    let mut points = vec![fill];
    say(&format_point(&points[0]));
    let file = open_direct(&path, true)?;
    let deepest = options.read_depths.iter().copied().max().unwrap_or(1);
    let fio = fio_available();
    for &qd in &options.read_depths {
        let mut point = run_point(
            &file,
            "randread",
            4096,
            qd,
            size,
            Some(options.seconds),
            options.seed,
        )?;
        if fio {
            point.fio = run_fio(&path, "randread", 4096, qd, options.seconds);
        }
        say(&format_point(&point));
        points.push(point);
    }
    for (op, block, qd) in [
        ("read", 1 << 20, deepest.min(16)),
        ("randwrite", 4096, 1),
        ("randwrite", 4096, deepest),
    ] {
        let point = run_point(
            &file,
            op,
            block,
            qd,
            size,
            Some(options.seconds),
            options.seed,
        )?;
        say(&format_point(&point));
        points.push(point);
    }
    for &qd in &options.write_depths {
        let point = run_point(
            &file,
            "write",
            128 << 10,
            qd,
            size,
            Some(options.seconds),
            options.seed,
        )?;
        say(&format_point(&point));
        points.push(point);
    }
    drop(file);
    std::fs::remove_file(&path)?;
    Ok(Measurement {
        file: path.display().to_string(),
        size,
        seconds: options.seconds,
        points,
        fio,
    })
}

/// One point: `qd` threads of `op` in `block`-byte requests over the
/// file's `size` bytes, for `seconds` (or, with `None`, one sequential pass
/// over the file).
fn run_point(
    file: &File,
    op: &'static str,
    block: u64,
    qd: u32,
    size: u64,
    seconds: Option<f64>,
    seed: u64,
) -> std::io::Result<Point> {
    let blocks = size / block;
    let write = op.ends_with("write");
    let random = op.starts_with("rand");
    let started = crate::clock::now();
    let deadline = seconds.map(|seconds| started + Duration::from_secs_f64(seconds));
    let results: Vec<std::io::Result<Histogram<u64>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..qd)
            .map(|thread| {
                scope.spawn(move || -> std::io::Result<Histogram<u64>> {
                    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)
                        .expect("static histogram bounds are valid");
                    let mut buffer = AlignedBuffer::new(block as usize);
                    let mut rng = sim::rng::SimRng::seed_from_u64(sim::rng::stream_seed(
                        seed,
                        &format!("device-measure/{op}/{block}/{qd}/{thread}"),
                    ));
                    // Sequential threads each own a region of the file.
                    let region = blocks / u64::from(qd);
                    let first = region * u64::from(thread);
                    let mut next = 0;
                    loop {
                        if let Some(deadline) = deadline {
                            if crate::clock::now() >= deadline {
                                break;
                            }
                        } else if next >= region {
                            break;
                        }
                        let index = if random {
                            rng.random_range(0..blocks)
                        } else {
                            let index = first + next % region.max(1);
                            next += 1;
                            index
                        };
                        let offset = index * block;
                        let begin = crate::clock::now();
                        if write {
                            file.write_all_at(buffer.block(), offset)?;
                        } else {
                            file.read_exact_at(buffer.block(), offset)?;
                        }
                        let micros = begin.elapsed().as_micros() as u64;
                        histogram.saturating_record(micros.max(1));
                    }
                    Ok(histogram)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a measuring thread does not panic"))
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    let mut total = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)
        .expect("static histogram bounds are valid");
    for result in results {
        total.add(result?).expect("histograms of one shape merge");
    }
    let iops = total.len() as f64 / elapsed;
    Ok(Point {
        op,
        block_bytes: block,
        qd,
        iops,
        bytes_per_s: iops * block as f64,
        mean_us: total.mean(),
        p50_us: total.value_at_quantile(0.5) as f64,
        p99_us: total.value_at_quantile(0.99) as f64,
        fio: None,
    })
}

/// One line of the sweep's table.
pub fn format_point(point: &Point) -> String {
    let mut line = format!(
        "{:<9} {:>7} qd {:>3}: {:>9.0} IOPS {:>8.1} MB/s  mean {:>8.1} us  p50 {:>8.1} us  p99 {:>8.1} us",
        point.op,
        units::format_bytes(point.block_bytes),
        point.qd,
        point.iops,
        point.bytes_per_s / 1e6,
        point.mean_us,
        point.p50_us,
        point.p99_us
    );
    if let Some(fio) = point.fio {
        line.push_str(&format!(
            "   fio: {:>9.0} IOPS  mean {:>8.1} us  p50 {:>8.1} us  p99 {:>8.1} us",
            fio.iops, fio.mean_us, fio.p50_us, fio.p99_us
        ));
    }
    line
}

fn fio_available() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// The same point run by fio (`psync`, `numjobs` = queue depth, direct).
fn run_fio(path: &Path, op: &str, block: u64, qd: u32, seconds: f64) -> Option<FioPoint> {
    let output = std::process::Command::new("fio")
        .args([
            "--name=twin",
            &format!("--filename={}", path.display()),
            "--direct=1",
            &format!("--rw={op}"),
            &format!("--bs={block}"),
            "--ioengine=psync",
            &format!("--numjobs={qd}"),
            "--group_reporting",
            "--time_based",
            &format!("--runtime={}", seconds.ceil().max(1.0) as u64),
            "--output-format=json",
        ])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let side = &json["jobs"][0][if op.contains("read") { "read" } else { "write" }];
    let clat = &side["clat_ns"];
    let percentile = |key: &str| clat["percentile"][key].as_f64().map(|ns| ns / 1000.0);
    Some(FioPoint {
        iops: side["iops"].as_f64()?,
        mean_us: clat["mean"].as_f64()? / 1000.0,
        p50_us: percentile("50.000000")?,
        p99_us: percentile("99.000000")?,
    })
}

/// The device preset the twin's NVMe model takes from a sweep, as TOML
/// (the fields of `models::nvme::DriveParams`): saturated IOPS and
/// bandwidths and the queue-depth-1 latencies are measured; the write
/// buffer and the program/read stall are not separable from outside the
/// device and are left at 0, and the link at the measured read bandwidth.
pub fn preset_toml(name: &str, measurement: &Measurement, date: &str) -> String {
    let best = |op: &str, block: u64| {
        measurement
            .points
            .iter()
            .filter(|point| point.op == op && point.block_bytes == block)
            .map(|point| point.iops)
            .fold(0.0, f64::max)
    };
    let qd1 = |op: &str| {
        measurement
            .points
            .iter()
            .find(|point| point.op == op && point.block_bytes == 4096 && point.qd == 1)
            .map_or(0.0, |point| point.mean_us)
    };
    let read_bw = best("read", 1 << 20) * f64::from(1 << 20);
    let write_bw = measurement
        .points
        .iter()
        .filter(|point| point.op == "write")
        .map(|point| point.bytes_per_s)
        .fold(0.0, f64::max);
    format!(
        "# A device preset measured by `twin device measure` on {date}\n\
         # ({} file, {} s a point, direct I/O, psync threads as queue depth).\n\
         name = \"{name}\"\n\
         description = \"measured on this machine: {}\"\n\
         read_iops = {:.0}\n\
         read_bytes_per_s = {:.0}\n\
         read_latency_ns = {:.0}\n\
         write_iops = {:.0}\n\
         write_bytes_per_s = {:.0}\n\
         write_latency_ns = {:.0}\n\
         # Not separable from outside the device: no write-buffer window, no\n\
         # program/read stall; the link at the measured read bandwidth.\n\
         write_buffer_ns = 0\n\
         program_read_stall_ns = 0\n\
         link_bytes_per_s = {:.0}\n\
         source = \"twin device measure, {date} [S]\"\n",
        units::format_bytes(measurement.size),
        measurement.seconds,
        measurement.file,
        best("randread", 4096),
        read_bw,
        qd1("randread") * 1000.0,
        best("randwrite", 4096),
        write_bw,
        qd1("randwrite") * 1000.0,
        read_bw.max(write_bw),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_sweep_measures_every_point_and_writes_a_preset() {
        let dir = std::env::temp_dir().join(format!("twin-device-test-{}", std::process::id()));
        let options = MeasureOptions {
            dir: dir.clone(),
            size: 64 << 20,
            seconds: 0.05,
            read_depths: vec![1, 2],
            write_depths: vec![1],
            seed: 1,
        };
        let measurement = match measure(&options, &|_| {}) {
            Ok(measurement) => measurement,
            // tmpfs and some overlay file systems refuse O_DIRECT: nothing
            // to measure there.
            Err(error) if error.raw_os_error() == Some(libc::EINVAL) => return,
            Err(error) => panic!("{error}"),
        };
        let ops: Vec<(&str, u32)> = measurement.points.iter().map(|p| (p.op, p.qd)).collect();
        assert_eq!(
            ops,
            [
                ("write", 1),
                ("randread", 1),
                ("randread", 2),
                ("read", 2),
                ("randwrite", 1),
                ("randwrite", 2),
                ("write", 1)
            ]
        );
        assert!(measurement
            .points
            .iter()
            .all(|p| p.iops > 0.0 && p.p99_us >= p.p50_us));
        assert!(
            !dir.join("twin-device-measure.dat").exists(),
            "the test file is removed"
        );
        let preset = preset_toml("this-machine", &measurement, "2026-11-28");
        assert!(preset.contains("name = \"this-machine\""));
        assert!(preset.contains("read_iops = "));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn an_aligned_buffer_is_aligned() {
        let mut buffer = AlignedBuffer::new(8192);
        assert_eq!(buffer.block().as_ptr() as usize % ALIGN, 0);
        assert_eq!(buffer.block().len(), 8192);
    }
}
