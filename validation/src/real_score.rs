//! The real scorecard (`twin validate --real`): every phase of a stored
//! real measurement (`validation/real/<date>/`, [`crate::real`]) run again
//! in the twin on the machine the real node ran on, and each figure put
//! beside the real one: real median and min-max over the repeats, twin,
//! error, tolerance, pass, and whether `validation/REAL.md` lets the figure
//! be fitted (calibration phases C1-C3) or only predicted (every other).
//!
//! How a phase becomes a twin scenario: the machine's own file
//! (`validation/real/machine.toml`: `[cluster]` with the `cassandra-5.0`
//! preset on this machine's instance and device, `[network]` for the
//! loopback), then the data the phase reads as REAL.md lays it out (the
//! memory set `1..1000000` of c-s's default rows, warm in the page cache
//! but where a drop left it cold, [`memory_set_cold_after`]; the disk set
//! `10000001..10500000` of 4-KiB rows, cold after the page cache was
//! dropped; none for writes of new keys), then the phase's own
//! cassandra-stress command as the real run took it (for a rate-limited
//! phase, the repeat whose limit is the median). Each twin run's results
//! folder is written under the output folder, beside its scenario, so any
//! figure can be followed back to its run.
//!
//! Tolerances are the published cases': throughput, CPU and counts 15%
//! (young GC pauses included), latency percentiles and pause lengths 30%;
//! the headline is the predicted figures' pass rate. A rate-limited
//! phase's throughput that both sides held to its limit is `derived`, not
//! predicted. Figures that only one side has (the GC log's pause medians
//! and eden, the thread pools' task counts) are shown real-only.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use sim::scenario::ScenarioError;
use sim::sweep::Runner;

use crate::real::{Basis, Figure, Measurement, MeasurementError};

/// Tolerance of throughput, CPU and count figures.
pub const THROUGHPUT_TOLERANCE: f64 = 0.15;
/// Tolerance of latency percentiles.
pub const LATENCY_TOLERANCE: f64 = 0.30;

/// The real scorecard refused or failed: the measurement, a file it reads
/// or writes, a phase's twin scenario or run, or the phases asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum RealScoreError {
    /// The stored measurement refused.
    Measurement(MeasurementError),
    /// A file or folder the scorecard reads or writes, and why.
    File {
        /// The path, as the message names it.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A phase's twin scenario refused as it resolves, or its run failed.
    Scenario(ScenarioError),
    /// A phase asked for that the measurement does not have, or has no
    /// command for.
    Phase(String),
}

impl RealScoreError {
    /// An error about `path`.
    fn at(path: &Path, reason: impl fmt::Display) -> RealScoreError {
        RealScoreError::File {
            path: path.display().to_string(),
            reason: reason.to_string(),
        }
    }
}

impl fmt::Display for RealScoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RealScoreError::Measurement(error) => write!(f, "{error}"),
            RealScoreError::File { path, reason } => write!(f, "{path}: {reason}"),
            RealScoreError::Scenario(error) => write!(f, "{error}"),
            RealScoreError::Phase(reason) => write!(f, "{reason}"),
        }
    }
}

impl std::error::Error for RealScoreError {}

impl From<MeasurementError> for RealScoreError {
    fn from(error: MeasurementError) -> RealScoreError {
        RealScoreError::Measurement(error)
    }
}

/// What data a phase reads, as REAL.md's populate phases left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseData {
    /// Writes of new keys only: no `[data]`.
    None,
    /// P1's 1,000,000 partitions of five 34-byte columns. Warm: in the
    /// page cache (written by this node moments before, or read or
    /// rewritten by a phase since the last drop; 24 GiB of memory). Cold:
    /// the page cache was dropped after the phase that last read or
    /// rewrote them ([`memory_set_cold_after`]).
    Memory {
        /// Out of the page cache at the phase's start.
        cold: bool,
    },
    /// P2's 500,000 partitions of one 4,096-byte column, the page cache
    /// dropped before the phase.
    Disk,
}

/// The phase whose page-cache drop leaves the memory set cold for phase
/// `id`, if one does: `measure.sh` drops the whole page cache before
/// C3, S3, D25, D50 and D80 (the disk set's reads must reach the disk),
/// and the memory set stays out of it until a phase reads it or a
/// compaction rewrites it. In `measure.sh`'s order (C3 S1 S2 S3 W25 M25
/// D25 X25 W50 M50 D50 X50 W80 M80 D80 X80):
/// - S2 follows C3's drop, but the settle after S1 compacted the memory
///   set's SSTable with the new keys' (system.log: 4 SSTables, ~1.9M
///   partitions, 385 MiB, in every repeat), which wrote it anew through
///   the page cache: warm;
/// - M25 follows S3's drop with only W25's new keys between: cold (its
///   device reads, 0.46-0.54 a read over the repeats, say so);
/// - X25, X50 and X80 each follow a D phase's drop: cold (0.37-0.42,
///   0.23-0.26, 0.17-0.24 device reads an operation, half of them writes);
/// - M50 and M80 follow X25 and X50, which read the memory set back:
///   warm, as far as their reads reached (0.02-0.06 and 0.08-0.10 device
///   reads a read remain: the twin starts them wholly warm \[E\]).
///
/// Nothing here is fitted: it is the measurement's own order, its
/// recorded drops (`<phase>_cache_dropped` in `protocol.json`, checked by
/// [`PhaseData::of`]'s caller) and the node's log.
pub fn memory_set_cold_after(id: &str) -> Option<&'static str> {
    match id {
        "M25" => Some("S3"),
        "X25" => Some("D25"),
        "X50" => Some("D50"),
        "X80" => Some("D80"),
        _ => None,
    }
}

impl PhaseData {
    /// The data of REAL.md's phase `id`; `dropped` says whether the
    /// measurement dropped the page cache before a phase (the memory set
    /// is cold only where the drop [`memory_set_cold_after`] names
    /// happened).
    pub fn of(id: &str, dropped: &dyn Fn(&str) -> bool) -> PhaseData {
        let memory = || PhaseData::Memory {
            cold: memory_set_cold_after(id).is_some_and(dropped),
        };
        match id {
            // P3 is C2's reads, the read path's warm-up.
            "P3" | "C2" | "S2" => memory(),
            "C3" | "S3" => PhaseData::Disk,
            _ if id.starts_with('M') || id.starts_with('X') => memory(),
            _ if id.starts_with('D') => PhaseData::Disk,
            _ => PhaseData::None,
        }
    }

    /// The `[data]` section, if any. Row sizes are what a row takes in an
    /// SSTable: c-s's default row 242 bytes (five 34-byte cells with their
    /// headers and the partition's, `models::cost`'s note on the flush
    /// price), the 4,096-byte column with the same overheads 4,168 \[D\].
    pub fn section(self) -> &'static str {
        match self {
            PhaseData::None => "",
            PhaseData::Memory { cold: false } => {
                "[data]\npartitions = 1000000\nrow_bytes = \"242B\"\nkey_range = [1, 1000000]\nreplication_factor = 1\nstate = \"compacted\"\ncache = \"warm\"\n"
            }
            PhaseData::Memory { cold: true } => {
                "[data]\npartitions = 1000000\nrow_bytes = \"242B\"\nkey_range = [1, 1000000]\nreplication_factor = 1\nstate = \"compacted\"\n# The page cache was dropped before this phase (REAL.md).\ncache = \"cold\"\n"
            }
            PhaseData::Disk => {
                "[data]\npartitions = 500000\nrow_bytes = \"4168B\"\nkey_range = [10000001, 10500000]\nreplication_factor = 1\nstate = \"compacted\"\ncache = \"cold\"\n"
            }
        }
    }
}

/// The cassandra-stress command phase `id` ran with in each repeat that
/// ran it (read back from the scenario `measure.sh` wrote beside its
/// results), and the one the twin runs: the median limit's.
pub fn phase_command(measurement: &Measurement, id: &str) -> Result<String, RealScoreError> {
    let mut commands: Vec<(f64, String)> = Vec::new();
    for (repeat, phases) in &measurement.repeats {
        if !phases.contains_key(id) {
            continue;
        }
        let path = measurement
            .dir
            .join(format!("repeat-{repeat}"))
            .join(format!("{id}.toml"));
        let scenario = sim::scenario::load(&path).map_err(RealScoreError::Scenario)?;
        let command = scenario
            .loads
            .first()
            .map(|load| load.command.clone())
            .ok_or_else(|| RealScoreError::at(&path, "no [[load]]"))?;
        let limit = rate_limit(&command).unwrap_or(0.0);
        commands.push((limit, command));
    }
    if commands.is_empty() {
        return Err(RealScoreError::at(
            &measurement.dir,
            format!("no repeat ran phase {id}"),
        ));
    }
    commands.sort_by(|a, b| a.0.total_cmp(&b.0));
    // The lower middle of an even count: a rate some repeat really ran.
    Ok(commands[(commands.len() - 1) / 2].1.clone())
}

/// The G1 a phase's twin node starts from: what the twin's run of the
/// phase before it (`after`) had learnt when it ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct G1Carried<'a> {
    /// The phase that left it.
    pub after: &'a str,
    /// What G1 had learnt.
    pub history: &'a models::jvm::G1History,
}

/// The twin's scenario of phase `id`: the machine, the phase's data, its
/// load, and the G1 the phase before it left (`start`; `None`: a new JVM,
/// for the first phase).
pub fn twin_scenario(
    machine: &str,
    id: &str,
    data: PhaseData,
    command: &str,
    seed: u64,
    start: Option<G1Carried>,
) -> String {
    let g1 = start.map_or(String::new(), |carried| {
        let h = carried.history;
        let triple = |seq: &models::g1_policy::Seq| {
            format!(
                "[{:?}, {:?}, {}]",
                seq.average(),
                seq.variance(),
                seq.samples()
            )
        };
        let group = |seqs: &[models::g1_policy::Seq]| {
            let ages: Vec<String> = seqs.iter().map(triple).collect();
            format!("[{}]", ages.join(", "))
        };
        let mut text = format!(
            "# G1 as the twin's run of {after} left it: one JVM runs every phase in\n\
             # measure.sh's order, its memtables flushed between them.\n\
             [cluster.g1_start]\n\
             old = \"{old}B\"\n",
            after = carried.after,
            old = h.old_used_bytes,
        );
        for (field, seq, _, _) in models::jvm::G1History::analytics_fields(&h.analytics) {
            text.push_str(&format!("{field} = {}\n", triple(&seq)));
        }
        text.push_str(&format!("eden_survival = {}\n", group(&h.eden_survival)));
        text.push_str(&format!(
            "survivor_survival = {}\n",
            group(&h.survivor_survival)
        ));
        text
    });
    format!(
        "# twin validate --real: REAL.md phase {id} in the twin\n\
         name = \"twin-{id}\"\n\
         seed = {seed}\n\
         interval = \"1s\"\n\
         {machine}\n\
         {g1}\
         {data}\n\
         [[load]]\n\
         name = \"{id}\"\n\
         processes = 1\n\
         # The measurement's client: threads start on tokio's 1-ms ticks.\n\
         client = \"twin-real\"\n\
         command = \"{command}\"\n",
        machine = machine.trim_end(),
        data = data.section(),
    )
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RealScoreOptions {
    /// The stored measurement.
    pub measurement: PathBuf,
    /// The machine's twin description (`[cluster]`, `[network]`).
    pub machine: PathBuf,
    /// Where each phase's twin scenario and results go.
    pub out: PathBuf,
    /// Only these phases (REAL.md ids); all the measurement has if empty.
    pub phases: Vec<String>,
    /// How many times the twin runs the phases (each time with its own
    /// seeds); its figures are the medians.
    pub twin_repeats: u32,
}

/// One figure: real against twin.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Phase id.
    pub phase: String,
    /// Figure name (as [`crate::real::figures`] names it).
    pub name: String,
    /// Fitted, predicted or setup.
    pub basis: Basis,
    /// Real median over the repeats.
    pub real: f64,
    /// Real smallest and largest.
    pub real_min: f64,
    /// Real largest.
    pub real_max: f64,
    /// Repeats.
    pub repeats: usize,
    /// The twin's value, where the twin gives this figure.
    pub twin: Option<f64>,
    /// (twin - real) / real.
    pub error: Option<f64>,
    /// Tolerance (fraction).
    pub tolerance: Option<f64>,
    /// Within tolerance.
    pub pass: Option<bool>,
    /// The real node against itself, where the twin's figure is compared
    /// and two or more repeats ran: of the repeats, how many came within
    /// the tolerance of the median of the others ([`self_agreement`]).
    pub real_self: Option<(usize, usize)>,
}

/// The scorecard.
#[derive(Clone, Debug, Serialize)]
pub struct RealScorecard {
    /// The measurement folder.
    pub measurement: String,
    /// Repeats in it.
    pub repeats: usize,
    /// Every figure.
    pub rows: Vec<Row>,
    /// Where the measurement recorded the machine's speed: the rule's
    /// test and whether the twin ran each phase at its speed
    /// ([`crate::real_speed`]).
    pub speed: Option<String>,
    /// Where the speed was used: the predicted figures within tolerance
    /// and compared, with the twin at the reference speed throughout.
    pub without_speed: Option<(usize, usize)>,
}

impl RealScorecard {
    /// (passed, compared) among rows of `basis`.
    pub fn passes(&self, basis: Basis) -> (usize, usize) {
        let compared: Vec<&Row> = self
            .rows
            .iter()
            .filter(|row| row.basis == basis && row.pass.is_some())
            .collect();
        (
            compared.iter().filter(|row| row.pass == Some(true)).count(),
            compared.len(),
        )
    }

    /// The real node against itself over the compared rows of `basis`:
    /// (repeats within tolerance of the median of the other repeats,
    /// repeats scored). What a twin as good as the real node is at
    /// repeating itself would score, repeat by repeat.
    pub fn real_self(&self, basis: Basis) -> (usize, usize) {
        self.rows
            .iter()
            .filter(|row| row.basis == basis)
            .filter_map(|row| row.real_self)
            .fold((0, 0), |(pass, of), (p, o)| (pass + p, of + o))
    }
}

/// Each repeat's `values` against the median of the other repeats, with
/// the scorecard's `tolerance`: (repeats within it, repeats); `None` with
/// fewer than two repeats.
pub fn self_agreement(values: &[f64], tolerance: f64) -> Option<(usize, usize)> {
    if values.len() < 2 {
        return None;
    }
    let within = (0..values.len())
        .filter(|&i| {
            let others: Vec<f64> = values
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, v)| *v)
                .collect();
            let reference = crate::real::median(&others);
            if reference == 0.0 {
                values[i] == 0.0
            } else {
                ((values[i] - reference) / reference).abs() <= tolerance
            }
        })
        .count();
    Some((within, values.len()))
}

/// The tolerance of a figure by its name (`None`: not compared).
pub fn tolerance_of(name: &str) -> Option<f64> {
    if name.ends_with(" ms") && name != "young pause median ms" {
        Some(LATENCY_TOLERANCE)
    } else if name.ends_with("ops/s")
        || name.starts_with("server CPU us/op")
        || name == "flush tasks"
        || name.ends_with("GC pauses")
    {
        Some(THROUGHPUT_TOLERANCE)
    } else {
        None
    }
}

/// A twin's `timeseries.csv` with the work of its stop-the-world pauses
/// added to `node0_cpu_utilisation`: during a pause the node's
/// [`models::jvm::parallel_gc_threads`] GC threads hold as many cores, as
/// the real node's process CPU (its `GC Thread` pool) counts them; the
/// twin's utilisation is its tasks' alone. A series without the two
/// columns comes back as it is.
pub fn with_gc_work(series: &str, cores: u32) -> String {
    let mut lines = series.lines();
    let Some(head) = lines.next() else {
        return series.to_string();
    };
    let header: Vec<&str> = head.split(',').collect();
    let column = |name: &str| header.iter().position(|column| *column == name);
    let (Some(cpu), Some(pause)) = (column("node0_cpu_utilisation"), column("node0_gc_pause_ms"))
    else {
        return series.to_string();
    };
    let share = f64::from(models::jvm::parallel_gc_threads(cores).min(cores)) / f64::from(cores);
    let mut out = format!("{head}\n");
    let mut last_time = 0.0;
    for line in lines {
        let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
        let time = cells.first().and_then(|v| v.parse::<f64>().ok());
        let interval = time.map_or(0.0, |time| time - last_time);
        last_time = time.unwrap_or(last_time);
        let paused_ms = cells.get(pause).and_then(|v| v.parse::<f64>().ok());
        let busy = cells.get(cpu).and_then(|v| v.parse::<f64>().ok());
        if let (Some(paused_ms), Some(busy), true) = (paused_ms, busy, interval > 0.0) {
            let gc = (paused_ms / 1000.0 / interval).min(1.0) * share;
            cells[cpu] = format!("{:.6}", busy + gc);
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The twin's figures of one phase's results folder: per op kind the rate
/// and percentiles of `summary.json`, the server's CPU per operation from
/// `timeseries.csv` (each node's CPU utilisation, its pauses' GC work
/// added ([`with_gc_work`]), x its cores x the interval, over the
/// operations answered), flushes, and for L1 each minute's rate and p99
/// from the HDR log.
pub fn twin_figures(
    id: &str,
    dir: &Path,
    cores: u32,
) -> Result<BTreeMap<String, f64>, RealScoreError> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|error| RealScoreError::at(&path, error))?;
    let summary: serde_json::Value =
        serde_json::from_str(&text).map_err(|error| RealScoreError::at(&path, error))?;
    let (ops, answered) = crate::real::op_figures(&summary);
    let mut figures: BTreeMap<String, f64> = ops.into_iter().collect();
    let event_loop = models::jvm::Stage::EventLoop.name();
    if let Some(seconds) = summary["stage_cpu_s"][event_loop].as_f64() {
        if answered > 0.0 {
            figures.insert(
                crate::real::EVENT_LOOP_CPU_FIGURE.into(),
                seconds / answered * 1e6,
            );
        }
    }
    // The shared pool's threads (the request stages and their spinners'
    // looks) and the runs on a core it and the loop counted.
    if answered > 0.0 {
        if let Some(spin) = summary["spin_cpu_s"].as_f64() {
            let stages: f64 = [
                models::jvm::Stage::NativeTransport,
                models::jvm::Stage::Read,
                models::jvm::Stage::Mutation,
            ]
            .iter()
            .filter_map(|stage| summary["stage_cpu_s"][stage.name()].as_f64())
            .sum();
            figures.insert(
                crate::real::REQUEST_CPU_FIGURE.into(),
                (stages + spin) / answered * 1e6,
            );
        }
        let runs = &summary["thread_runs"];
        if let Some(count) = runs[sim::report::SHARED_POOL_RUNS].as_f64() {
            figures.insert(crate::real::REQUEST_RUNS_FIGURE.into(), count / answered);
        }
        if let Some(count) = runs[event_loop].as_f64() {
            figures.insert(crate::real::EVENT_LOOP_RUNS_FIGURE.into(), count / answered);
        }
        // The reads' device reads: the page cache's misses, read-ahead
        // and all.
        if let Some(count) = summary["time_spent"]["io"]["query"]["requests"].as_f64() {
            figures.insert(crate::real::DEVICE_READS_FIGURE.into(), count / answered);
        }
    }
    // The collector's pauses, as the GC log gives them (one node).
    let gc = &summary["gc"];
    // The eden G1 sized (5.0's G1), shown: what the pauses' count follows.
    if let Some(mib) = gc["eden_mean_mib"].as_f64() {
        figures.insert(crate::real::EDEN_FIGURE.into(), mib);
    }
    if let (Some(mib), true) = (gc["eden_collected_mib"].as_f64(), answered > 0.0) {
        figures.insert(
            crate::real::ALLOCATED_FIGURE.into(),
            mib * 1024.0 / answered,
        );
    }
    if let Some(young) = gc["young_pauses"].as_f64() {
        // The log's `Pause Young` lines include the mixed collections.
        let mixed = gc["mixed_pauses"].as_f64().unwrap_or(0.0);
        let pauses = young + mixed;
        figures.insert("young GC pauses".into(), pauses);
        figures.insert("mixed GC pauses".into(), mixed);
        // No pause at all is a pause length of nothing (summary.json
        // gives 0): a miss where the real node paused, not a figure left
        // out.
        for (key, name) in [
            ("young_pause_mean_ms", "young pause mean ms"),
            ("young_pause_max_ms", "young pause max ms"),
        ] {
            if let Some(ms) = gc[key].as_f64() {
                figures.insert(name.into(), ms);
            }
        }
    }
    let series_path = dir.join("timeseries.csv");
    let series = std::fs::read_to_string(&series_path)
        .map_err(|error| RealScoreError::at(&series_path, error))?;
    // The real node's CPU is its process's, the GC threads' included; the
    // twin's utilisation is its tasks': its pauses' work is added.
    let series = with_gc_work(&series, cores);
    let mut lines = series.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let column = |name: &str| header.iter().position(|column| *column == name);
    let (cpu, flushes) = (column("node0_cpu_utilisation"), column("node0_flushes"));
    let (mut cpu_seconds, mut flushed, mut last_time) = (0.0, 0.0, 0.0);
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let time: f64 = cells
            .first()
            .and_then(|v| v.parse().ok())
            .unwrap_or(last_time);
        let interval = time - last_time;
        last_time = time;
        if let Some(value) = cpu
            .and_then(|i| cells.get(i))
            .and_then(|v| v.parse::<f64>().ok())
        {
            cpu_seconds += value * f64::from(cores) * interval;
        }
        if let Some(value) = flushes
            .and_then(|i| cells.get(i))
            .and_then(|v| v.parse::<f64>().ok())
        {
            flushed += value;
        }
    }
    if answered > 0.0 && cpu.is_some() {
        figures.insert("server CPU us/op".into(), cpu_seconds / answered * 1e6);
    }
    if let Some(per_op) = crate::real::tail_cpu_per_op(&series, cores, crate::real::TAIL_SECONDS) {
        figures.insert(crate::real::TAIL_CPU_FIGURE.into(), per_op);
        // The twin has no JIT: the figure less it is the same.
        figures.insert(crate::real::TAIL_CPU_LESS_JIT_FIGURE.into(), per_op);
    }
    // One memtable flush is one task of Cassandra's flush writer pool.
    if flushes.is_some() {
        figures.insert("flush tasks".into(), flushed);
    }
    if id == "L1" {
        if let Ok(minutes) = crate::real::per_minute(&dir.join("hdr").join("L1-write.hlog")) {
            for (minute, (rate, p99)) in minutes.iter().enumerate() {
                figures.insert(format!("minute {:02} write ops/s", minute + 1), *rate);
                figures.insert(format!("minute {:02} write p99 ms", minute + 1), *p99);
            }
        }
    }
    Ok(figures)
}

/// Runs every phase in the twin and scores it against the measurement,
/// the twin's repeats on `runner`; `progress` hears each phase as it
/// starts.
pub fn score(
    options: &RealScoreOptions,
    runner: &Runner,
    progress: &mut dyn FnMut(&str),
) -> Result<RealScorecard, RealScoreError> {
    let measurement = crate::real::load(&options.measurement)?;
    let machine = std::fs::read_to_string(&options.machine)
        .map_err(|error| RealScoreError::at(&options.machine, error))?;
    let speeds = crate::real_speed::Speeds::of(&measurement)?;
    let verdict = speeds.as_ref().map(|speeds| speeds.verdict(&measurement));
    let used = speeds
        .as_ref()
        .filter(|_| verdict.as_ref().is_some_and(|verdict| verdict.used));
    let mut card = score_at(
        options,
        runner,
        progress,
        &measurement,
        &machine,
        used,
        &options.out,
    )?;
    card.speed = verdict.map(|verdict| verdict.text());
    if used.is_some() {
        // REAL.md's rule: both scorecards, the headline with the speed.
        let out = options.out.join("without-speed");
        let without = score_at(
            options,
            runner,
            &mut |_| {},
            &measurement,
            &machine,
            None,
            &out,
        )?;
        card.without_speed = Some(without.passes(Basis::Predicted));
    }
    Ok(card)
}

/// [`score`] with the twin running each phase at `speeds`' ratio for the
/// real repeat it stands beside (`[cluster] cpu_slowdown`), or at the
/// reference speed without, its results under `out`.
fn score_at(
    options: &RealScoreOptions,
    runner: &Runner,
    progress: &mut dyn FnMut(&str),
    measurement: &Measurement,
    machine: &str,
    speeds: Option<&crate::real_speed::Speeds>,
    out: &Path,
) -> Result<RealScorecard, RealScoreError> {
    let real = crate::real::figures(measurement);
    let mut phases: Vec<String> = Vec::new();
    for figure in &real {
        if figure.basis != Basis::Setup && !phases.contains(&figure.phase) {
            phases.push(figure.phase.clone());
        }
    }
    if !options.phases.is_empty() {
        for asked in &options.phases {
            if !phases.contains(asked) {
                return Err(RealScoreError::Phase(format!(
                    "phase `{asked}` is not in {} (it has {})",
                    measurement.dir.display(),
                    phases.join(", ")
                )));
            }
        }
        phases.retain(|phase| options.phases.contains(phase));
    }
    std::fs::create_dir_all(out).map_err(|error| RealScoreError::at(out, error))?;
    // One JVM runs every phase of a repeat in `measure.sh`'s order, the
    // populate phases first, so each twin phase starts from the G1 its
    // predecessor left; the phases before the last one asked run too.
    let last = phases
        .iter()
        .map(|id| crate::real::run_order(id))
        .max()
        .unwrap_or(0);
    let mut chain: Vec<String> = crate::real::POPULATE_PHASES
        .iter()
        .map(|id| id.to_string())
        .filter(|id| phase_command(measurement, id).is_ok())
        .collect();
    chain.extend(
        real.iter()
            .filter(|figure| figure.basis != Basis::Setup)
            .map(|figure| figure.phase.clone())
            .filter(|id| crate::real::run_order(id) <= last),
    );
    chain.sort_by_key(|id| crate::real::run_order(id));
    chain.dedup();
    // The twin runs the chain as often as the real node did (each repeat
    // its own seeds), and each figure is the median over its repeats, as
    // the real one is over the real repeats.
    let repeats = options.twin_repeats.max(1);
    for id in &chain {
        if phases.contains(id) {
            progress(id);
        } else {
            progress(&format!("{id} (for the G1 it leaves)"));
        }
    }
    let repeat_numbers: Vec<u32> = (1..=repeats).collect();
    // The twin's repeat k stands beside the real repeats in turn.
    let real_repeats: Vec<u32> = measurement.repeats.keys().copied().collect();
    let runs: Vec<Result<PhaseFigures, RealScoreError>> = runner.run_all(
        &repeat_numbers,
        |&repeat| {
            let beside = real_repeats
                .get((repeat as usize - 1) % real_repeats.len().max(1))
                .copied();
            let slowdown = |id: &str| speeds.zip(beside).and_then(|(s, real)| s.ratio(real, id));
            run_chain(
                measurement,
                machine,
                &chain,
                &phases,
                repeat,
                &slowdown,
                &out.join(format!("repeat-{repeat}")),
            )
        },
        |_, _| {},
    );
    let mut by_repeat = Vec::new();
    for run in runs {
        by_repeat.push(run?);
    }
    let mut twin = PhaseFigures::new();
    for id in &phases {
        let mut names: Vec<&String> = by_repeat
            .iter()
            .filter_map(|repeat| repeat.get(id))
            .flat_map(|figures| figures.keys())
            .collect();
        names.sort();
        names.dedup();
        let figures = twin.entry(id.clone()).or_default();
        for name in names {
            let values: Vec<f64> = by_repeat
                .iter()
                .filter_map(|repeat| repeat.get(id).and_then(|figures| figures.get(name)))
                .copied()
                .collect();
            figures.insert(name.clone(), crate::real::median(&values));
        }
    }
    let mut capped: BTreeMap<String, bool> = BTreeMap::new();
    for id in &phases {
        let limit = rate_limit(&phase_command(measurement, id)?);
        let total = |figures: &dyn Fn(&str) -> Option<f64>| {
            figures("total ops/s")
                .or_else(|| figures("write ops/s"))
                .or_else(|| figures("read ops/s"))
        };
        let real_total = total(&|name| {
            real.iter()
                .find(|figure| &figure.phase == id && figure.name == name)
                .map(Figure::median)
        });
        let twin_total = total(&|name| twin.get(id).and_then(|figures| figures.get(name)).copied());
        capped.insert(
            id.clone(),
            at_limit(limit, real_total) && at_limit(limit, twin_total),
        );
    }
    let rows = real
        .iter()
        .filter(|figure| phases.contains(&figure.phase))
        .map(|figure| {
            let mut row = row(figure, twin.get(&figure.phase));
            if row.basis == Basis::Predicted
                && capped[&figure.phase]
                && figure.name.ends_with(" ops/s")
                && !figure.name.starts_with("minute")
            {
                row.basis = Basis::Derived;
            }
            row
        })
        .collect();
    Ok(RealScorecard {
        measurement: measurement.dir.display().to_string(),
        repeats: measurement.repeats.len(),
        rows,
        speed: None,
        without_speed: None,
    })
}

/// Each phase's figures by name.
type PhaseFigures = BTreeMap<String, BTreeMap<String, f64>>;

/// The seed of phase `id` in the twin's repeat `repeat`: every phase
/// run its own (the real phases do not share their chance either), the
/// same on every machine.
pub fn phase_seed(repeat: u32, id: &str) -> u64 {
    u64::from(repeat) * 100 + crate::real::seed_index(id) as u64
}

/// One twin repeat: every phase of `chain` in order, each starting from
/// the G1 the one before left, written under `out`; the figures of the
/// `scored` ones.
fn run_chain(
    measurement: &Measurement,
    machine: &str,
    chain: &[String],
    scored: &[String],
    repeat: u32,
    slowdown: &dyn Fn(&str) -> Option<f64>,
    out: &Path,
) -> Result<PhaseFigures, RealScoreError> {
    std::fs::create_dir_all(out).map_err(|error| RealScoreError::at(out, error))?;
    let mut twin = BTreeMap::new();
    let mut carried: Option<(String, models::jvm::G1History)> = None;
    let dropped = crate::real_speed::caches_dropped(measurement)?;
    for id in chain {
        let command = phase_command(measurement, id)?;
        let start = carried
            .as_ref()
            .map(|(after, history)| G1Carried { after, history });
        let data = PhaseData::of(id, &|phase| dropped.contains(phase));
        let text = twin_scenario(machine, id, data, &command, phase_seed(repeat, id), start);
        let text = with_cpu_slowdown(&text, slowdown(id));
        let file = out.join(format!("{id}.toml"));
        std::fs::write(&file, &text).map_err(|error| RealScoreError::at(&file, error))?;
        let scenario = sim::scenario::parse(&file.display().to_string(), &text)
            .map_err(RealScoreError::Scenario)?;
        let plan = sim::plan::resolve(&scenario, &sim::plan::RunOverrides::default())
            .map_err(RealScoreError::Scenario)?;
        let cores = match &plan.cluster.cpu {
            sim::bridge::CpuScheduling::Jvm(jvm) => jvm.cores,
            _ => 1,
        };
        let outcome = sim::cluster::run(plan, &mut |_| {})
            .map_err(|error| RealScoreError::Scenario(scenario.run_error(&error)))?;
        carried = outcome
            .g1_end
            .first()
            .cloned()
            .flatten()
            .map(|history| (id.clone(), history));
        let dir = out.join(id);
        sim::report::write_results(&dir, &outcome)
            .map_err(|error| RealScoreError::at(&dir, error))?;
        if scored.contains(id) {
            twin.insert(id.clone(), twin_figures(id, &dir, cores)?);
        }
    }
    Ok(twin)
}

/// A phase's scenario with `[cluster] cpu_slowdown` set to `slowdown`
/// (the machine's speed ratio beside it, [`crate::real_speed`]), or as it
/// is without one.
fn with_cpu_slowdown(text: &str, slowdown: Option<f64>) -> String {
    match slowdown {
        Some(ratio) => text.replacen(
            "[cluster]\n",
            &format!(
                "[cluster]\n# The machine's speed beside the real phase (REAL.md).\ncpu_slowdown = {ratio:?}\n"
            ),
            1,
        ),
        None => text.to_string(),
    }
}

/// How close to its `limit=` a rate-limited phase's throughput must be to
/// count as held to it.
const AT_LIMIT: f64 = 0.03;

/// A cassandra-stress command's `limit=N/s`, if it has one.
pub fn rate_limit(command: &str) -> Option<f64> {
    command
        .split_whitespace()
        .find_map(|word| word.strip_prefix("limit="))
        .and_then(|rate| rate.trim_end_matches("/s").parse::<f64>().ok())
}

/// Whether `rate` is within [`AT_LIMIT`] of `limit`.
fn at_limit(limit: Option<f64>, rate: Option<f64>) -> bool {
    match (limit, rate) {
        (Some(limit), Some(rate)) if limit > 0.0 => (rate / limit - 1.0).abs() <= AT_LIMIT,
        _ => false,
    }
}

fn row(figure: &Figure, twin: Option<&BTreeMap<String, f64>>) -> Row {
    let real = figure.median();
    let (real_min, real_max) = figure.range();
    let value = twin.and_then(|figures| figures.get(&figure.name)).copied();
    let tolerance = value.and(tolerance_of(&figure.name));
    let error = value.filter(|_| real != 0.0).map(|v| (v - real) / real);
    let pass = match (error, tolerance) {
        (Some(error), Some(tolerance)) => Some(error.abs() <= tolerance),
        _ => None,
    };
    let real_self = tolerance
        .filter(|_| pass.is_some())
        .and_then(|tolerance| self_agreement(&figure.values, tolerance));
    Row {
        phase: figure.phase.clone(),
        name: figure.name.clone(),
        basis: figure.basis,
        real,
        real_min,
        real_max,
        repeats: figure.values.len(),
        twin: value,
        error,
        tolerance,
        pass,
        real_self,
    }
}

/// The scorecard as text: headline (predicted first), then the rows.
pub fn scorecard_text(card: &RealScorecard) -> String {
    let mut out = String::new();
    let (predicted_pass, predicted) = card.passes(Basis::Predicted);
    let (fitted_pass, fitted) = card.passes(Basis::Fitted);
    let (derived_pass, derived) = card.passes(Basis::Derived);
    let percent = |pass: usize, of: usize| {
        if of == 0 {
            0.0
        } else {
            pass as f64 * 100.0 / of as f64
        }
    };
    let _ = writeln!(
        out,
        "Real scorecard: {} ({} repeats), twin cassandra-5.0 on this machine",
        card.measurement, card.repeats
    );
    let _ = writeln!(
        out,
        "predicted: {predicted_pass} of {predicted} within tolerance ({:.0}%); derived (a throughput held to its limit= by both): {derived_pass} of {derived}; fitted (calibration phases): {fitted_pass} of {fitted}",
        percent(predicted_pass, predicted)
    );
    if let Some(speed) = &card.speed {
        let _ = writeln!(out, "{speed}");
    }
    if let Some((pass, of)) = card.without_speed {
        let _ = writeln!(
            out,
            "without the speed (the twin at the reference speed throughout): predicted {pass} of {of} ({:.0}%)",
            percent(pass, of)
        );
    }
    let (self_pass, self_of) = card.real_self(Basis::Predicted);
    if self_of > 0 {
        let _ = writeln!(
            out,
            "the real node against itself on the same predicted figures (each repeat against the median of the others, the same tolerances): {self_pass} of {self_of} ({:.0}%)",
            percent(self_pass, self_of)
        );
    }
    let _ = writeln!(
        out,
        "{:<5} {:<26} {:<9} {:>10} {:>23} {:>10} {:>8} {:>5} {:>5}",
        "phase", "figure", "basis", "real", "real min - max", "twin", "error", "tol", "pass"
    );
    for basis in [Basis::Predicted, Basis::Derived, Basis::Fitted] {
        for row in card.rows.iter().filter(|row| row.basis == basis) {
            let _ = writeln!(
                out,
                "{:<5} {:<26} {:<9} {:>10.3} {:>10.3} - {:<10.3} {:>10} {:>8} {:>5} {:>5}",
                row.phase,
                row.name,
                match row.basis {
                    Basis::Fitted => "fitted",
                    Basis::Predicted => "predicted",
                    Basis::Setup => "setup",
                    Basis::Derived => "derived",
                },
                row.real,
                row.real_min,
                row.real_max,
                row.twin.map_or("-".to_string(), |v| format!("{v:.3}")),
                row.error
                    .map_or("-".to_string(), |e| format!("{:+.0}%", e * 100.0)),
                row.tolerance
                    .map_or("-".to_string(), |t| format!("{:.0}%", t * 100.0)),
                match row.pass {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "-",
                }
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_read_the_data_real_md_gives_them() {
        let every_drop = |phase: &str| ["C3", "S3", "D25", "D50", "D80"].contains(&phase);
        let warm = PhaseData::Memory { cold: false };
        let cold = PhaseData::Memory { cold: true };
        for id in ["C2", "S2", "M50", "M80", "P3"] {
            assert_eq!(PhaseData::of(id, &every_drop), warm, "{id}");
        }
        for id in ["M25", "X25", "X50", "X80"] {
            assert_eq!(PhaseData::of(id, &every_drop), cold, "{id}");
            // A drop that failed (not root) left the memory set warm.
            assert_eq!(PhaseData::of(id, &|_| false), warm, "{id}");
        }
        // Only the drop that precedes a phase makes it cold.
        assert_eq!(PhaseData::of("M25", &|phase| phase == "D25"), warm);
        for id in ["C3", "S3", "D25", "D80"] {
            assert_eq!(PhaseData::of(id, &every_drop), PhaseData::Disk, "{id}");
        }
        for id in ["C1", "S1", "W50", "Z1", "L1"] {
            assert_eq!(PhaseData::of(id, &every_drop), PhaseData::None, "{id}");
        }
    }

    #[test]
    fn a_repeat_is_scored_against_the_median_of_the_others() {
        // 100 against 104 and 140's 122: out; 104 against 120: in; 140
        // against 102: out.
        assert_eq!(self_agreement(&[100.0, 104.0, 140.0], 0.15), Some((1, 3)));
        assert_eq!(self_agreement(&[100.0, 101.0, 99.0], 0.15), Some((3, 3)));
        assert_eq!(self_agreement(&[0.0, 0.0], 0.15), Some((2, 2)));
        assert_eq!(self_agreement(&[100.0], 0.15), None);
    }

    #[test]
    fn the_twins_pauses_count_as_the_gc_threads_work() {
        let series = "time_s,write_ops_per_s,node0_cpu_utilisation,node0_gc_pause_ms\n\
                      1.000,100.0,0.5000,250.000\n\
                      3.000,100.0,0.2500,0.000\n";
        // One core: a quarter of the first second paused is a quarter of
        // its core; the next two seconds paused nothing.
        let one = with_gc_work(series, 1);
        assert_eq!(
            one,
            "time_s,write_ops_per_s,node0_cpu_utilisation,node0_gc_pause_ms\n\
             1.000,100.0,0.750000,250.000\n\
             3.000,100.0,0.250000,0.000\n"
        );
        // Sixteen cores: 13 GC threads hold 13 of them through a pause.
        let sixteen = with_gc_work(series, 16);
        let first: Vec<&str> = sixteen.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(first[2], format!("{:.6}", 0.5 + 0.25 * 13.0 / 16.0));
        // A series without the pause column is left as it is.
        let without = "time_s,node0_cpu_utilisation\n1.000,0.5000\n";
        assert_eq!(with_gc_work(without, 1), without);
    }

    #[test]
    fn tolerances_follow_the_published_cases() {
        assert_eq!(tolerance_of("write ops/s"), Some(0.15));
        assert_eq!(tolerance_of("minute 03 write ops/s"), Some(0.15));
        assert_eq!(tolerance_of("read p99.9 ms"), Some(0.30));
        assert_eq!(tolerance_of("server CPU us/op"), Some(0.15));
        assert_eq!(tolerance_of("server CPU us/op, last 20 s"), Some(0.15));
        assert_eq!(
            tolerance_of("young pause median ms"),
            None,
            "the twin gives no median"
        );
        assert_eq!(tolerance_of("young pause mean ms"), Some(0.30));
        assert_eq!(tolerance_of("young GC pauses"), Some(0.15));
        assert_eq!(tolerance_of("eden MiB"), None);
    }

    #[test]
    fn a_row_passes_within_its_tolerance_and_only_when_the_twin_has_the_figure() {
        let figure = Figure {
            phase: "W50".into(),
            name: "write p99 ms".into(),
            basis: Basis::Predicted,
            values: vec![10.0, 12.0, 11.0],
        };
        let mut twin = BTreeMap::new();
        twin.insert("write p99 ms".to_string(), 14.0);
        let passed = row(&figure, Some(&twin));
        assert_eq!(passed.pass, Some(true), "14 against 11 is +27%");
        twin.insert("write p99 ms".to_string(), 14.5);
        assert_eq!(row(&figure, Some(&twin)).pass, Some(false));
        assert_eq!(row(&figure, None).pass, None);
    }

    /// The stored measurement scores: the calibration phases' steady-state
    /// CPU is what their constants were fitted to (so a change of a price
    /// or of the machine's file shows here), and every phase the twin runs
    /// has its figures.
    #[test]
    fn the_stored_measurement_scores_and_its_fits_hold() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("real");
        let out = std::env::temp_dir().join(format!("twin-real-score-{}", std::process::id()));
        let options = RealScoreOptions {
            measurement: root.join("2026-11-30-speed"),
            machine: root.join("machine.toml"),
            out: out.clone(),
            phases: vec!["C1".into(), "C3".into(), "W25".into()],
            twin_repeats: 2,
        };
        let mut heard = Vec::new();
        let runner = Runner::new(Some(2)).unwrap();
        let card = score(&options, &runner, &mut |phase| {
            heard.push(phase.to_string())
        })
        .unwrap();
        let history = |id: &str| format!("{id} (for the G1 it leaves)");
        assert_eq!(
            heard,
            [
                history("P1"),
                history("P2"),
                "C1".into(),
                history("C4"),
                history("P3"),
                history("C2"),
                "C3".into(),
                history("S1"),
                history("S2"),
                history("S3"),
                "W25".into()
            ],
            "REAL.md's order: the asked ones, and those before them for their G1"
        );
        assert!(
            card.rows
                .iter()
                .all(|row| ["C1", "C3", "W25"].contains(&row.phase.as_str())),
            "only the asked phases are scored"
        );
        // Each twin repeat its own chain and seeds.
        let w25 = |repeat: u32| {
            std::fs::read_to_string(out.join(format!("repeat-{repeat}")).join("W25.toml")).unwrap()
        };
        assert!(w25(1).contains("[cluster.g1_start]") && w25(1).contains("twin's run of S3"));
        assert!(w25(1).contains(&format!("seed = {}", phase_seed(1, "W25"))));
        assert!(w25(2).contains(&format!("seed = {}", phase_seed(2, "W25"))));
        assert_ne!(w25(1), w25(2), "the repeats' G1 differs with their seeds");
        assert_eq!(card.repeats, 3);
        // C3's page miss is fitted to its request threads' work a read
        // above a read from memory, over its device reads a read
        // (real_runs.rs): the twin's C3, its runs priced apart, works its
        // read from memory (C2's 48.89 us) and that price per device read
        // it made, give or take the parse of a bigger row.
        let twin = |phase: &str, name: &str| {
            card.rows
                .iter()
                .find(|row| row.phase == phase && row.name == name)
                .and_then(|row| row.twin)
                .unwrap_or_else(|| panic!("{phase}'s {name}"))
        };
        let twin_c3 = |name: &str| twin("C3", name);
        let run_us = models::jvm::CASSANDRA_5_0_SEP.run_cost.as_nanos() as f64 / 1e3;
        let work = twin_c3(crate::real::REQUEST_CPU_FIGURE)
            - run_us * twin_c3(crate::real::REQUEST_RUNS_FIGURE);
        let per_miss = (work - 48.89) / twin_c3(crate::real::DEVICE_READS_FIGURE);
        let price = models::cost::CASSANDRA_5_0_PAGE_MISS_NS as f64 / 1e3;
        assert!(
            (per_miss / price - 1.0).abs() < 0.1,
            "C3: {per_miss} us a device read against the price's {price}"
        );
        // W25 runs at a rate the real node held: the twin holds it too, so
        // its throughput is derived from the command, not predicted.
        let rate = card
            .rows
            .iter()
            .find(|row| row.phase == "W25" && row.name == "write ops/s")
            .unwrap();
        assert_eq!(rate.basis, Basis::Derived);
        assert_eq!(rate.pass, Some(true));
        let p99 = card
            .rows
            .iter()
            .find(|row| row.phase == "W25" && row.name == "write p99 ms")
            .unwrap();
        assert_eq!(p99.basis, Basis::Predicted);
        // G1 copies the rows a write leaves in the memtable: the twin's
        // young pauses under writes are well above the pause's fixed part
        // and above those of reads, which leave nothing alive.
        let young_mean = |phase: &str| twin(phase, "young pause mean ms");
        let base_ms = models::jvm::EvacuationParams::cassandra_5_0()
            .pause_other
            .as_secs_f64()
            * 1e3;
        assert!(
            young_mean("C1") > 1.5 * base_ms && young_mean("C1") > young_mean("C3"),
            "C1 {} ms, C3 {} ms",
            young_mean("C1"),
            young_mean("C3")
        );
        for repeat in ["repeat-1", "repeat-2"] {
            assert!(out.join(repeat).join("W25").join("summary.json").is_file());
            assert!(
                out.join(repeat).join("P1.toml").is_file(),
                "history runs are kept too"
            );
        }
        std::fs::remove_dir_all(&out).ok();
        // An unknown phase is an error naming it.
        let error = score(
            &RealScoreOptions {
                phases: vec!["Q9".into()],
                ..options
            },
            &runner,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(
            matches!(&error, RealScoreError::Phase(reason) if reason.contains("`Q9`")),
            "{error}"
        );
    }

    #[test]
    fn a_phase_runs_at_the_machines_speed_beside_it() {
        let machine = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("real/machine.toml"),
        )
        .expect("the machine's description");
        let command = "cassandra-stress write no-warmup cl=ONE duration=10s -rate threads=50 limit=5000/s -pop seq=1..100000";
        let plan = |slowdown: Option<f64>| {
            let text = with_cpu_slowdown(
                &twin_scenario(&machine, "C1", PhaseData::None, command, 1, None),
                slowdown,
            );
            let scenario = sim::scenario::parse("C1.toml", &text).unwrap_or_else(|e| panic!("{e}"));
            sim::plan::resolve(&scenario, &sim::plan::RunOverrides::default())
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let (reference, slower) = (plan(None), plan(Some(1.25)));
        assert_eq!(
            reference.cluster.costs,
            models::cost::CostTable::cassandra_5_0()
        );
        assert_eq!(
            slower.cluster.costs,
            models::cost::CostTable::cassandra_5_0().scaled(1.25)
        );
    }

    #[test]
    fn a_throughput_held_to_its_limit_by_both_sides_is_derived() {
        assert_eq!(
            rate_limit("cassandra-stress write cl=ONE -rate threads=50 limit=5000/s -pop seq=1..2"),
            Some(5000.0)
        );
        assert_eq!(rate_limit("cassandra-stress write -rate threads=200"), None);
        assert!(at_limit(Some(5000.0), Some(4900.0)));
        assert!(!at_limit(Some(5000.0), Some(4800.0)), "4% short is a miss");
        assert!(!at_limit(None, Some(5000.0)), "a closed loop has no limit");
        assert!(!at_limit(Some(5000.0), None));
    }

    #[test]
    fn the_twin_scenario_puts_the_machine_the_data_and_the_load_together() {
        let machine = "[cluster]\npreset = \"cassandra-5.0\"\nnodes = 1\ninstance = \"i3.large\"\n";
        let text = twin_scenario(
            machine,
            "D50",
            PhaseData::Disk,
            "cassandra-stress read no-warmup cl=ONE duration=30s -rate threads=200 limit=6000/s -pop dist=uniform(10000001..10500000) -col n=FIXED(1) size=FIXED(4096) -mode native cql3",
            7,
            None,
        );
        let scenario = sim::scenario::parse("D50.toml", &text).unwrap();
        assert_eq!(scenario.loads.len(), 1);
        let data = scenario.data.as_ref().unwrap();
        assert_eq!(data.key_range, Some([10000001, 10500000]));
        assert_eq!(data.cache.as_deref(), Some("cold"));
        assert!(
            scenario.cluster.g1_start.is_none(),
            "the first phase: a new JVM"
        );
        assert_eq!(scenario.seed, Some(7));
    }

    /// A phase after another starts from the G1 the twin's run of that one
    /// left, written into its scenario (after the machine's `[network]`)
    /// exactly, so the file alone reruns it.
    #[test]
    fn a_phase_starts_from_the_g1_its_predecessor_left() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("real");
        let machine = std::fs::read_to_string(root.join("machine.toml")).unwrap();
        use models::g1_policy::Seq;
        let mut analytics = models::g1_policy::G1Analytics::seeded(1);
        analytics.copy_ns_per_byte = Seq::learnt(1.467_891_234_5, 0.1 / 3.0, 10);
        analytics.rs_cards = Seq::learnt(23_456.789, 1e7 / 7.0, 4);
        let history = models::jvm::G1History {
            old_used_bytes: 2_345_678_901,
            analytics,
            eden_survival: vec![
                Seq::learnt(0.012_345_678_9, 0.003_1, 10),
                Seq::learnt(0.2, 0.0, 1),
            ],
            survivor_survival: vec![Seq::learnt(0.8, 1e-3 / 3.0, 7)],
        };
        let carried = G1Carried {
            after: "S3",
            history: &history,
        };
        let text = twin_scenario(
            &machine,
            "W25",
            PhaseData::None,
            "cassandra-stress write no-warmup cl=ONE duration=30s -rate threads=200 limit=6116/s -pop seq=4300001..5300000 -mode native cql3",
            108,
            Some(carried),
        );
        assert!(text.contains("twin's run of S3"), "{text}");
        let scenario = sim::scenario::parse("W25.toml", &text).unwrap();
        let plan = sim::plan::resolve(&scenario, &sim::plan::RunOverrides::default()).unwrap();
        let sim::bridge::CpuScheduling::Jvm(jvm) = &plan.cluster.cpu else {
            panic!("cassandra-5.0 runs a JVM");
        };
        assert_eq!(jvm.g1_start, Some(history));
    }
}
