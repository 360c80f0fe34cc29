//! A stored real measurement (`validation/real/<date>/`, written by
//! `validation/real/measure.sh` as `validation/REAL.md` names its phases):
//! every figure of every phase over the repeats, each marked by what
//! REAL.md allows it to be used for, and the calibration inputs the
//! calibration phases give (CPU per operation, G1's eden and pauses, the
//! bytes allocated per operation).
//!
//! Reads only what `twin real` wrote: each phase's `summary.json`, its
//! `server/gc.log` and, for the 10-minute run, its HDR log (per-minute
//! throughput and p99). Nothing here runs the twin; the real scorecard puts
//! these figures beside the twin's.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use crate::real_speed::Speeds;

/// What REAL.md lets a phase's figures be used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// A calibration phase (C1-C3): its CPU per operation and GC figures
    /// may be fitted; its latencies are shown, never compared.
    Fitted,
    /// A prediction phase: never fitted, compared with the twin.
    Predicted,
    /// Population (P1, P2): neither.
    Setup,
    /// A prediction phase's throughput that follows from its command: the
    /// phase is rate-limited and both the real node and the twin held the
    /// limit, so the figure says nothing of the model (the real scorecard
    /// sets it, [`crate::real_score`]; a twin short of the limit stays
    /// predicted, a miss).
    Derived,
}

/// The basis of a phase by its REAL.md id.
pub fn basis(phase: &str) -> Basis {
    match phase.as_bytes().first() {
        Some(b'C') => Basis::Fitted,
        Some(b'P') => Basis::Setup,
        _ => Basis::Predicted,
    }
}

/// One figure of one phase, one value per repeat that measured it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// REAL.md's phase id (`W50`, `C1`, ...).
    pub phase: String,
    /// What: `write ops/s`, `read p99 ms`, `server CPU us/op`, ...
    pub name: String,
    /// What it may be used for.
    pub basis: Basis,
    /// One value per repeat, in repeat order.
    pub values: Vec<f64>,
}

impl Figure {
    /// The median over the repeats (the mean of the middle two for an even
    /// count).
    pub fn median(&self) -> f64 {
        median(&self.values)
    }

    /// The smallest and largest value.
    pub fn range(&self) -> (f64, f64) {
        let min = self.values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self
            .values
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (min, max)
    }

    /// (max - min) / median: the run-to-run spread.
    pub fn spread(&self) -> f64 {
        let (min, max) = self.range();
        let median = self.median();
        if median == 0.0 {
            0.0
        } else {
            (max - min) / median
        }
    }
}

/// The median of `values` (the mean of the middle two of an even count;
/// NaN for none).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// One phase of one repeat, as stored.
#[derive(Clone, Debug)]
pub struct PhaseRun {
    /// Its `summary.json`.
    pub summary: serde_json::Value,
    /// Its `server/gc.log`, where stored.
    pub gc_log: Option<String>,
    /// Its folder.
    pub dir: PathBuf,
}

/// A stored measurement: per repeat, per phase.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The folder.
    pub dir: PathBuf,
    /// Repeat number -> phase id -> run.
    pub repeats: BTreeMap<u32, BTreeMap<String, PhaseRun>>,
}

/// A stored measurement (or a log in it) refused: the file or folder at
/// fault, when one is, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeasurementError {
    /// The file or folder, as the message names it.
    pub file: Option<String>,
    /// What is wrong.
    pub reason: String,
}

impl MeasurementError {
    /// An error about `file`.
    pub fn at(file: &Path, reason: impl fmt::Display) -> MeasurementError {
        MeasurementError {
            file: Some(file.display().to_string()),
            reason: reason.to_string(),
        }
    }
}

impl fmt::Display for MeasurementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        write!(f, "{}", self.reason)
    }
}

impl std::error::Error for MeasurementError {}

/// Reads `dir` (`repeat-<n>/<phase>/summary.json` and beside it).
pub fn load(dir: &Path) -> Result<Measurement, MeasurementError> {
    let read_dir =
        |path: &Path| std::fs::read_dir(path).map_err(|error| MeasurementError::at(path, error));
    let mut repeats = BTreeMap::new();
    for entry in read_dir(dir)? {
        let entry = entry.map_err(|error| MeasurementError::at(dir, error))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(number) = name
            .strip_prefix("repeat-")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let mut phases = BTreeMap::new();
        for phase in read_dir(&entry.path())? {
            let phase = phase.map_err(|error| MeasurementError {
                file: Some(name.clone()),
                reason: error.to_string(),
            })?;
            let path = phase.path();
            let summary_path = path.join("summary.json");
            if !summary_path.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&summary_path)
                .map_err(|error| MeasurementError::at(&summary_path, error))?;
            let summary: serde_json::Value = serde_json::from_str(&text)
                .map_err(|error| MeasurementError::at(&summary_path, error))?;
            if summary["kind"] != "real" {
                return Err(MeasurementError::at(
                    &summary_path,
                    "not a `twin real` summary (no \"kind\": \"real\")",
                ));
            }
            let gc_log = std::fs::read_to_string(path.join("server").join("gc.log")).ok();
            phases.insert(
                phase.file_name().to_string_lossy().into_owned(),
                PhaseRun {
                    summary,
                    gc_log,
                    dir: path,
                },
            );
        }
        if !phases.is_empty() {
            repeats.insert(number, phases);
        }
    }
    if repeats.is_empty() {
        return Err(MeasurementError::at(
            dir,
            "no repeat-<n>/<phase>/summary.json (a folder written by validation/real/measure.sh)",
        ));
    }
    Ok(Measurement {
        dir: dir.to_path_buf(),
        repeats,
    })
}

/// What the GC log of one phase says about G1 on this machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct GcFacts {
    /// Young pauses.
    pub young_pauses: u64,
    /// Of them, mixed collections (`Pause Young (Mixed)`: old regions
    /// collected too).
    pub mixed_pauses: u64,
    /// Their median, ms.
    pub young_median_ms: f64,
    /// Their mean, ms.
    pub young_mean_ms: f64,
    /// Their longest, ms.
    pub young_max_ms: f64,
    /// Eden at each young pause (regions before the pause x the region
    /// size), mean, MiB.
    pub eden_mib: f64,
    /// Eden collected over the phase, MiB: what the phase allocated, give
    /// or take the eden in use at its ends.
    pub collected_mib: f64,
}

/// G1's region size when the log does not say: `-XX:G1HeapRegionSize=16m`,
/// as `deploy/real/cassandra.sh` starts the node (Cassandra's option).
pub const REGION_MIB: f64 = 16.0;

/// Reads a phase's `-Xlog:gc*` lines: young pauses and eden.
pub fn gc_facts(log: &str) -> GcFacts {
    let mut pauses = Vec::new();
    let mut mixed = 0;
    let mut eden_before = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("] ").last() {
            if let Some(regions) = rest
                .split_once("Eden regions: ")
                .and_then(|(_, regions)| regions.split("->").next())
                .and_then(|before| before.trim().parse::<f64>().ok())
            {
                eden_before.push(regions);
            }
            if rest.contains("Pause Young (Mixed)") && rest.ends_with("ms") {
                mixed += 1;
            }
            if rest.contains("Pause Young") {
                if let Some(ms) = rest
                    .strip_suffix("ms")
                    .and_then(|body| body.rsplit(' ').next())
                    .and_then(|ms| ms.parse::<f64>().ok())
                {
                    pauses.push(ms);
                }
            }
        }
    }
    let collected: f64 = eden_before.iter().sum::<f64>() * REGION_MIB;
    GcFacts {
        young_pauses: pauses.len() as u64,
        mixed_pauses: mixed,
        young_mean_ms: if pauses.is_empty() {
            0.0
        } else {
            pauses.iter().sum::<f64>() / pauses.len() as f64
        },
        young_median_ms: if pauses.is_empty() {
            0.0
        } else {
            median(&pauses)
        },
        young_max_ms: pauses.iter().copied().fold(0.0, f64::max),
        eden_mib: if eden_before.is_empty() {
            0.0
        } else {
            collected / eden_before.len() as f64
        },
        collected_mib: collected,
    }
}

/// Every figure of the measurement (see the module doc), phases in
/// REAL.md's order.
pub fn figures(measurement: &Measurement) -> Vec<Figure> {
    figures_at(measurement, None)
}

/// [`figures`] with each repeat's CPU figures (every `... CPU us/op ...`)
/// divided by its phase's speed ratio ([`Speeds::ratio`]): the work at
/// the reference speed, as REAL.md's speed rule fits it ("The machine's
/// speed beside each phase"). A phase without a recorded speed keeps its
/// figures.
pub fn figures_at_reference_speed(measurement: &Measurement, speeds: &Speeds) -> Vec<Figure> {
    figures_at(measurement, Some(speeds))
}

fn figures_at(measurement: &Measurement, speeds: Option<&Speeds>) -> Vec<Figure> {
    let mut figures: BTreeMap<(usize, String, String), Figure> = BTreeMap::new();
    let repeat = std::cell::Cell::new(0);
    let mut add = |phase: &str, name: String, value: f64| {
        let value = match speeds.and_then(|speeds| speeds.ratio(repeat.get(), phase)) {
            Some(ratio) if name.contains("CPU us/op") => value / ratio,
            _ => value,
        };
        if !value.is_finite() {
            return;
        }
        let key = (phase_order(phase), phase.to_string(), name.clone());
        figures
            .entry(key)
            .or_insert_with(|| Figure {
                phase: phase.to_string(),
                name,
                basis: basis(phase),
                values: Vec::new(),
            })
            .values
            .push(value);
    };
    for (&number, phases) in &measurement.repeats {
        repeat.set(number);
        for (phase, run) in phases {
            let summary = &run.summary;
            let (ops, answered) = op_figures(summary);
            for (name, value) in ops {
                add(phase, name, value);
            }
            let server = &summary["load_server"][phase.as_str()];
            if let Some(per_op) = server["cpu_us_per_op"].as_f64() {
                add(phase, "server CPU us/op".into(), per_op);
            }
            if let Ok(series) = std::fs::read_to_string(run.dir.join("timeseries.csv")) {
                if let Some(per_op) = tail_cpu_per_op(&series, 1, TAIL_SECONDS) {
                    add(phase, TAIL_CPU_FIGURE.into(), per_op);
                }
                // What the calibration phases fit, where the run has it.
                if basis(phase) == Basis::Fitted {
                    let less = Some(COMPILER_CPU_COLUMN);
                    if let Some(per_op) = tail_cpu_per_op_less(&series, 1, TAIL_SECONDS, less) {
                        add(phase, TAIL_CPU_LESS_JIT_FIGURE.into(), per_op);
                    }
                }
            }
            if let Some(per_op) = server["disk"]["reads_per_op"].as_f64() {
                add(phase, DEVICE_READS_FIGURE.into(), per_op);
            }
            if let Some(pools) = server["thread_pools"].as_object() {
                for (pool, label) in [
                    ("MemtableFlushWriter", "flush tasks"),
                    ("CompactionExecutor", "CompactionExecutor tasks"),
                ] {
                    add(
                        phase,
                        label.into(),
                        pools.get(pool).and_then(|v| v.as_f64()).unwrap_or(0.0),
                    );
                }
            }
            // The server's threads apart (2026-11-29 on): the event
            // loop's and the request threads' CPU, which the twin models
            // (C1's and C4's with their runs are fitted), and the JIT's,
            // which it does not.
            if let Some(threads) = server["thread_cpu_seconds"].as_object() {
                if answered > 0.0 {
                    let per_op =
                        |wanted: fn(&str) -> bool| sum_of_pools(threads, wanted) / answered * 1e6;
                    let event_loop = per_op(models::jvm::is_event_loop_pool);
                    add(phase, EVENT_LOOP_CPU_FIGURE.into(), event_loop);
                    add(
                        phase,
                        REQUEST_CPU_FIGURE.into(),
                        per_op(models::jvm::is_shared_pool_thread),
                    );
                    add(
                        phase,
                        JIT_CPU_FIGURE.into(),
                        per_op(models::jvm::is_compiler_pool),
                    );
                }
            }
            // Their time in the kernel (2026-11-30 evening on).
            if let Some(system) = server["thread_system_cpu_seconds"].as_object() {
                if answered > 0.0 {
                    let seconds = sum_of_pools(system, models::jvm::is_shared_pool_thread);
                    add(
                        phase,
                        REQUEST_KERNEL_CPU_FIGURE.into(),
                        seconds / answered * 1e6,
                    );
                }
            }
            // Each thread's runs on a core (2026-11-30 on): what the
            // twin's shared pool and event loop count.
            if let Some(runs) = server["thread_runs"].as_object() {
                if answered > 0.0 {
                    let per_op = |wanted: fn(&str) -> bool| sum_of_pools(runs, wanted) / answered;
                    add(
                        phase,
                        REQUEST_RUNS_FIGURE.into(),
                        per_op(models::jvm::is_shared_pool_thread),
                    );
                    add(
                        phase,
                        EVENT_LOOP_RUNS_FIGURE.into(),
                        per_op(models::jvm::is_event_loop_pool),
                    );
                }
            }
            // Of the request threads' runs, those that began with a
            // preemption (2026-11-30 afternoon on): the twin's processor
            // sharing has none.
            if let Some(preempted) = server["thread_preemptions"].as_object() {
                if answered > 0.0 {
                    let count = sum_of_pools(preempted, models::jvm::is_shared_pool_thread);
                    add(phase, REQUEST_PREEMPTIONS_FIGURE.into(), count / answered);
                }
            }
            if let Some(log) = &run.gc_log {
                let facts = gc_facts(log);
                add(phase, "young GC pauses".into(), facts.young_pauses as f64);
                add(phase, "mixed GC pauses".into(), facts.mixed_pauses as f64);
                if facts.young_pauses > 0 {
                    add(phase, "young pause median ms".into(), facts.young_median_ms);
                    add(phase, "young pause mean ms".into(), facts.young_mean_ms);
                    add(phase, "young pause max ms".into(), facts.young_max_ms);
                    add(phase, EDEN_FIGURE.into(), facts.eden_mib);
                    if answered > 0.0 {
                        add(
                            phase,
                            ALLOCATED_FIGURE.into(),
                            facts.collected_mib * 1024.0 / answered,
                        );
                    }
                }
            }
            if phase == "L1" {
                if let Ok(minutes) = per_minute(&run.dir.join("hdr").join("L1-write.hlog")) {
                    for (minute, (rate, p99)) in minutes.iter().enumerate() {
                        add(
                            phase,
                            format!("minute {:02} write ops/s", minute + 1),
                            *rate,
                        );
                        add(
                            phase,
                            format!("minute {:02} write p99 ms", minute + 1),
                            *p99,
                        );
                    }
                }
            }
        }
    }
    figures.into_values().collect()
}

/// The sum of a `summary.json` map by thread pool (CPU seconds, runs,
/// preemptions) over the pools `wanted` names.
fn sum_of_pools(
    by_pool: &serde_json::Map<String, serde_json::Value>,
    wanted: fn(&str) -> bool,
) -> f64 {
    by_pool
        .iter()
        .filter(|(pool, _)| wanted(pool))
        .filter_map(|(_, value)| value.as_f64())
        .sum()
}

/// The steady-state CPU figure: a phase's last [`TAIL_SECONDS`], after the
/// JIT has compiled the request path (the whole phase's CPU per operation
/// carries the first seconds' interpreted code; C2's is 1.7x its tail's).
/// The calibration phases' constants were fitted to this figure until
/// 2026-11-29, and since to it less the JIT ([`TAIL_CPU_LESS_JIT_FIGURE`]).
pub const TAIL_CPU_FIGURE: &str = "server CPU us/op, last 20 s";

/// The calibration phases' fitted CPU figure from 2026-11-29's
/// measurements on: [`TAIL_CPU_FIGURE`] less the JIT compiler threads'
/// CPU (the real run's `node0_compiler_cpu_fraction`), which the twin
/// does not model (REAL.md); the twin's, without a JIT, is its tail CPU.
pub const TAIL_CPU_LESS_JIT_FIGURE: &str = "server CPU us/op less JIT, last 20 s";

/// The native transport event loop's CPU per operation (the real node's
/// `epollEventLoopGroup` threads; the twin's `stage_cpu_s`
/// `nioEventLoopGroup`): shown, not scored; C1's and C4's with the loop's
/// runs are what `CASSANDRA_5_0_EVENT_LOOP_WORK` and `_WAKE` are fitted to
/// ([`crate::real_runs`]).
pub const EVENT_LOOP_CPU_FIGURE: &str = "event loop CPU us/op";

/// The request threads' CPU per operation (the real node's shared-pool
/// workers, `models::jvm::is_shared_pool_thread`; the twin's request
/// stages and their spinners' looks, `stage_cpu_s` and `spin_cpu_s`):
/// shown, not scored; C1's and C4's with their runs are what the shared
/// pool's run price and the write's work are fitted to (REAL.md, "Runs
/// counted").
pub const REQUEST_CPU_FIGURE: &str = "request threads CPU us/op";

/// The request threads' runs on a core per operation (schedstat; the
/// twin's `thread_runs` `SharedPool`): shown, not scored.
pub const REQUEST_RUNS_FIGURE: &str = "request thread runs/op";

/// Of [`REQUEST_RUNS_FIGURE`], the runs that began with the thread
/// preempted rather than woken (`nonvoluntary_ctxt_switches`): shown, the
/// real node's only.
pub const REQUEST_PREEMPTIONS_FIGURE: &str = "request thread preemptions/op";

/// The event loop's runs on a core per operation (the twin's
/// `thread_runs` `nioEventLoopGroup`): shown, not scored.
pub const EVENT_LOOP_RUNS_FIGURE: &str = "event loop runs/op";

/// The request threads' CPU in the kernel per operation (each thread's
/// `stime`: system calls, page faults, interrupts taken while it ran;
/// 2026-11-30 evening on): shown, the real node's only.
pub const REQUEST_KERNEL_CPU_FIGURE: &str = "request threads kernel CPU us/op";

/// The machine's disk reads per operation (the real run's
/// `load_server.<load>.disk`, what the page cache did not absorb; the
/// twin's reads' device reads, `time_spent.io.query`): shown, not scored;
/// C3's is what the page miss's price is divided over
/// ([`crate::real_runs`]).
pub const DEVICE_READS_FIGURE: &str = "device reads/op";

/// The mean eden a young collection found full, MiB (the GC log's eden
/// regions before each pause; the twin's `gc.eden_mean_mib`): shown.
pub const EDEN_FIGURE: &str = "eden MiB";

/// The eden collected over the operations answered, KiB (the twin's
/// `gc.eden_collected_mib`): shown.
pub const ALLOCATED_FIGURE: &str = "allocated KiB/op";

/// The JIT compiler threads' CPU per operation: shown (the twin has no
/// JIT).
pub const JIT_CPU_FIGURE: &str = "JIT CPU us/op";

/// The real run's column of the JIT compiler threads' CPU.
pub const COMPILER_CPU_COLUMN: &str = "node0_compiler_cpu_fraction";

/// How much of a phase's end [`TAIL_CPU_FIGURE`] covers.
pub const TAIL_SECONDS: f64 = 20.0;

/// The server's CPU microseconds per operation over the last `seconds` of
/// a `timeseries.csv` (real or twin: `time_s`, the `*_ops_per_s` columns
/// and `node0_cpu_utilisation`, a fraction of the node's `cores`), or
/// `None` when the file has neither or no operation was answered then.
pub fn tail_cpu_per_op(series: &str, cores: u32, seconds: f64) -> Option<f64> {
    tail_cpu_per_op_less(series, cores, seconds, None)
}

/// [`tail_cpu_per_op`] less the CPU of column `less` (a fraction of the
/// node's cores, as `node0_cpu_utilisation`), or `None` when the file
/// has no such column.
pub fn tail_cpu_per_op_less(
    series: &str,
    cores: u32,
    seconds: f64,
    less: Option<&str>,
) -> Option<f64> {
    let mut lines = series.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    let cpu = header.iter().position(|c| *c == "node0_cpu_utilisation")?;
    let less = match less {
        Some(name) => Some(header.iter().position(|c| *c == name)?),
        None => None,
    };
    let rates: Vec<usize> = (0..header.len())
        .filter(|&i| header[i].ends_with("_ops_per_s"))
        .collect();
    let rows: Vec<Vec<f64>> = lines
        .map(|line| line.split(',').map(|v| v.parse().unwrap_or(0.0)).collect())
        .collect();
    let end = rows.last()?.first().copied()?;
    let (mut busy, mut answered, mut last) = (0.0, 0.0, None::<f64>);
    for row in &rows {
        let time = row.first().copied().unwrap_or(0.0);
        let interval = last.map_or(time, |previous| time - previous);
        last = Some(time);
        if time <= end - seconds {
            continue;
        }
        let other = less.and_then(|i| row.get(i).copied()).unwrap_or(0.0);
        busy += (row.get(cpu).copied().unwrap_or(0.0) - other) * f64::from(cores) * interval;
        answered += rates
            .iter()
            .map(|&i| row.get(i).copied().unwrap_or(0.0) * interval)
            .sum::<f64>();
    }
    (answered > 0.0).then(|| busy / answered * 1e6)
}

/// The client's figures of a `summary.json` (a real run's or the twin's,
/// which share the `ops` block): per op kind its rate and p50, p95, p99
/// and p99.9, the total rate where more than one kind ran; and the
/// operations answered.
pub fn op_figures(summary: &serde_json::Value) -> (Vec<(String, f64)>, f64) {
    let mut figures = Vec::new();
    let (mut total, mut answered) = (0.0, 0.0);
    let Some(ops) = summary["ops"].as_object() else {
        return (figures, answered);
    };
    for (op, values) in ops {
        let rate = values["ops_per_s"].as_f64().unwrap_or(0.0);
        total += rate;
        answered += values["count"].as_f64().unwrap_or(0.0);
        figures.push((format!("{op} ops/s"), rate));
        for (key, label) in [
            ("p50", "p50"),
            ("p95", "p95"),
            ("p99", "p99"),
            ("p999", "p99.9"),
        ] {
            if let Some(ms) = values["latency_ms"][key].as_f64() {
                figures.push((format!("{op} {label} ms"), ms));
            }
        }
    }
    if ops.len() > 1 {
        figures.push(("total ops/s".into(), total));
    }
    (figures, answered)
}

/// REAL.md's setup phases, which no figure comes from: the populates,
/// and (2026-11-30 on) the read path's warm-up before C2.
pub const POPULATE_PHASES: [&str; 3] = ["P1", "P2", "P3"];

/// The order `measure.sh` runs the phases of a repeat in, one node
/// through all: the rate-limited phases by level, each level's writes,
/// reads from memory, reads from disk and mixed together (unknown ids
/// last).
pub fn run_order(phase: &str) -> usize {
    position_in(
        &[
            "P1", "P2", "C1", "C4", "P3", "C2", "C3", "S1", "S2", "S3", "W25", "M25", "D25", "X25",
            "W50", "M50", "D50", "X50", "W80", "M80", "D80", "X80", "Z1", "L1",
        ],
        phase,
    )
}

/// A phase's number for its twin seeds ([`crate::real_score::phase_seed`]):
/// its place in the run order as it stood before P3, the phases added
/// since after them in the order they were added, so that adding a phase
/// moves no other phase's seed (unknown ids last).
pub fn seed_index(phase: &str) -> usize {
    position_in(
        &[
            "P1", "P2", "C1", "C4", "C2", "C3", "S1", "S2", "S3", "W25", "M25", "D25", "X25",
            "W50", "M50", "D50", "X50", "W80", "M80", "D80", "X80", "Z1", "L1", "P3",
        ],
        phase,
    )
}

/// REAL.md's order of the phases, as its table lists them (unknown ids
/// last, by name).
fn phase_order(phase: &str) -> usize {
    position_in(
        &[
            "P1", "P2", "C1", "C4", "P3", "C2", "C3", "S1", "S2", "S3", "W25", "W50", "W80", "M25",
            "M50", "M80", "D25", "D50", "D80", "X25", "X50", "X80", "Z1", "L1",
        ],
        phase,
    )
}

/// Where `phase` stands in `order` (after every listed one if unlisted).
fn position_in(order: &[&str], phase: &str) -> usize {
    order
        .iter()
        .position(|id| *id == phase)
        .unwrap_or(order.len())
}

/// Throughput and p99 (ms) of each whole minute of an HDR interval log.
pub fn per_minute(path: &Path) -> Result<Vec<(f64, f64)>, MeasurementError> {
    use base64::Engine as _;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;

    let bytes = std::fs::read(path).map_err(|error| MeasurementError::at(path, error))?;
    let mut deserializer = Deserializer::new();
    let mut minutes: Vec<hdrhistogram::Histogram<u64>> = Vec::new();
    let mut last_end = 0.0f64;
    for entry in IntervalLogIterator::new(&bytes) {
        let entry = entry.map_err(|error| MeasurementError::at(path, format!("{error:?}")))?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|error| MeasurementError::at(path, error))?;
        let histogram: hdrhistogram::Histogram<u64> =
            deserializer
                .deserialize(&mut &decoded[..])
                .map_err(|error| MeasurementError::at(path, format!("{error:?}")))?;
        let start = interval.start_timestamp().as_secs_f64();
        last_end = last_end.max(start + interval.duration().as_secs_f64());
        let minute = (start / 60.0) as usize;
        while minutes.len() <= minute {
            minutes.push(
                hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000, 3).map_err(|error| {
                    MeasurementError {
                        file: None,
                        reason: format!("{error:?}"),
                    }
                })?,
            );
        }
        minutes[minute]
            .add(&histogram)
            .map_err(|error| MeasurementError::at(path, format!("{error:?}")))?;
    }
    // The log's times run from the run's start, which the load began at;
    // only whole minutes are reported.
    let whole = (last_end / 60.0).floor() as usize;
    Ok(minutes
        .iter()
        .take(whole)
        .map(|histogram| {
            (
                histogram.len() as f64 / 60.0,
                histogram.value_at_quantile(0.99) as f64 / 1000.0,
            )
        })
        .collect())
}

/// The measurement as a table: phase, figure, basis, median, min-max,
/// spread; the calibration inputs first.
pub fn report_text(measurement: &Measurement) -> String {
    use std::fmt::Write as _;
    let figures = figures(measurement);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Real measurement {}: {} repeat(s)",
        measurement.dir.display(),
        measurement.repeats.len()
    );
    let _ = writeln!(
        out,
        "{:<5} {:<26} {:<9} {:>11} {:>25} {:>7}",
        "phase", "figure", "basis", "median", "min - max", "spread"
    );
    for basis in [
        Basis::Fitted,
        Basis::Predicted,
        Basis::Derived,
        Basis::Setup,
    ] {
        for figure in figures.iter().filter(|figure| figure.basis == basis) {
            let (min, max) = figure.range();
            let _ = writeln!(
                out,
                "{:<5} {:<26} {:<9} {:>11.3} {:>12.3} - {:<10.3} {:>6.1}%",
                figure.phase,
                figure.name,
                match figure.basis {
                    Basis::Fitted => "fitted",
                    Basis::Predicted => "predicted",
                    Basis::Setup => "setup",
                    Basis::Derived => "derived",
                },
                figure.median(),
                min,
                max,
                figure.spread() * 100.0
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_cpu_figure_covers_only_the_last_seconds() {
        // 1 s rows: 1,000 ops at a full core, then 2,000 ops at half a core.
        let series = "time_s,write_ops_per_s,node0_cpu_utilisation\n\
                      1.0,1000,1.0\n2.0,1000,1.0\n3.0,2000,0.5\n4.0,2000,0.5\n";
        let tail = tail_cpu_per_op(series, 1, 2.0).unwrap();
        assert!((tail - 250.0).abs() < 1e-9, "{tail}");
        let whole = tail_cpu_per_op(series, 1, 10.0).unwrap();
        assert!((whole - 3.0e6 / 6000.0).abs() < 1e-9, "{whole}");
        // Two cores double the CPU; no CPU column, no figure.
        assert!((tail_cpu_per_op(series, 2, 2.0).unwrap() - 500.0).abs() < 1e-9);
        assert_eq!(
            tail_cpu_per_op("time_s,write_ops_per_s\n1.0,5\n", 1, 2.0),
            None
        );
    }

    #[test]
    fn the_fitted_cpu_figure_leaves_the_jit_out() {
        // Half a core, a tenth of it the compiler's, at 1,000 ops a second.
        let series = "time_s,write_ops_per_s,node0_cpu_utilisation,node0_compiler_cpu_fraction\n\
                      1.0,1000,0.5,0.05\n2.0,1000,0.5,0.05\n";
        let less = tail_cpu_per_op_less(series, 1, 2.0, Some(COMPILER_CPU_COLUMN)).unwrap();
        assert!((less - 450.0).abs() < 1e-9, "{less}");
        assert!((tail_cpu_per_op(series, 1, 2.0).unwrap() - 500.0).abs() < 1e-9);
        // A run without the column (before 2026-11-29) has no such figure.
        let old = "time_s,write_ops_per_s,node0_cpu_utilisation\n1.0,1000,0.5\n";
        assert_eq!(
            tail_cpu_per_op_less(old, 1, 2.0, Some(COMPILER_CPU_COLUMN)),
            None
        );
    }

    #[test]
    fn phases_are_fitted_predicted_or_setup_as_real_md_names_them() {
        assert_eq!(basis("C1"), Basis::Fitted);
        assert_eq!(basis("C4"), Basis::Fitted);
        assert_eq!(basis("P2"), Basis::Setup);
        for phase in ["S1", "W25", "M80", "D50", "X25", "Z1", "L1"] {
            assert_eq!(basis(phase), Basis::Predicted, "{phase}");
        }
    }

    #[test]
    fn medians_ranges_and_spreads() {
        let figure = Figure {
            phase: "W50".into(),
            name: "write ops/s".into(),
            basis: Basis::Predicted,
            values: vec![10.0, 12.0, 11.0],
        };
        assert_eq!(figure.median(), 11.0);
        assert_eq!(figure.range(), (10.0, 12.0));
        assert!((figure.spread() - 2.0 / 11.0).abs() < 1e-12);
        assert_eq!(median(&[1.0, 2.0, 3.0, 4.0]), 2.5);
    }

    #[test]
    fn a_gc_log_gives_pauses_eden_and_what_was_collected() {
        let log = "\
[2026-11-28T05:51:03.641+0000][132.185s][1][2][info] GC(47) Pause Young (Normal) (G1 Evacuation Pause)
[2026-11-28T05:51:03.885+0000][132.430s][1][2][info] GC(47) Eden regions: 91->0(67)
[2026-11-28T05:51:03.885+0000][132.430s][1][2][info] GC(47) Pause Young (Normal) (G1 Evacuation Pause) 4558M->3461M(6048M) 244.249ms
[2026-11-28T05:51:05.885+0000][134.430s][1][2][info] GC(48) Eden regions: 67->0(67)
[2026-11-28T05:51:05.885+0000][134.430s][1][2][info] GC(48) Pause Young (Normal) (G1 Evacuation Pause) 4558M->3461M(6048M) 100.000ms
[2026-11-28T05:51:06.000+0000][135.000s][1][2][info] Safepoint \"Cleanup\", Total: 15103113 ns
";
        let facts = gc_facts(log);
        assert_eq!(facts.young_pauses, 2);
        assert!((facts.young_median_ms - 172.1245).abs() < 1e-9);
        assert_eq!(facts.young_max_ms, 244.249);
        assert_eq!(facts.collected_mib, 158.0 * 16.0);
        assert_eq!(facts.eden_mib, 79.0 * 16.0);
    }

    #[test]
    fn a_folder_without_repeats_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("twin-real-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let error = load(&dir).unwrap_err().to_string();
        assert!(
            error.contains("no repeat-<n>/<phase>/summary.json"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).ok();
        assert!(load(Path::new("/no/such/folder")).is_err());
    }
}
