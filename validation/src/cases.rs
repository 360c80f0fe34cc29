//! The validation cases: the scenarios of `scenarios/validation/` that name
//! the published run they reproduce (their `[validation]` section), and the
//! device sweeps of R6, each run and measured as the report measured it.
//!
//! What a case measures, over its measurement window (the run less the
//! scenario's `warmup`), under the metric names of `published.rs`:
//! - `<op> latency mean|p95|p99|p99.9`: the client-side latencies that
//!   cassandra-stress reports, from the run's interval histograms;
//! - `<op> throughput` and `achieved throughput`: operations per second;
//!   `achieved partition rate`: the partitions they touched per second,
//!   what c-s's rate counts (the throughput but for a profile's batches);
//! - `server load`: the servers' mean CPU utilisation, percent (Scylla
//!   Monitoring's reactor load, the OS's CPU for Cassandra), averaged over
//!   nodes and intervals;
//! - `1-year reserved cost, all upfront`: nodes x the instance's 1-year
//!   reserved $/h (the instance catalog) x 8,760 h;
//! - `probability of a concurrent double failure`: R5's model, N x
//!   (MTTR/MTBF)^2 x 365 with MTBF 730 days and MTTR 1 day, percent.
//!
//! With shard sampling, counts and rates are scaled back up to the whole
//! cluster as `twin run` scales them.

use sim::overrides::Assignment;
use std::path::{Path, PathBuf};

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use sim::cluster::RunOutcome;
use sim::device_sweep::{parse_qd_list, run_sweep, SweepConfig, SweepOp};
use sim::plan::{resolve, RunOverrides};
use sim::scenario::{Scenario, ScenarioError};
use units::{SimDuration, SimTime};

use crate::scorecard::CaseRow;

/// R5's reliability model: mean time between failures of a node, days.
pub const MTBF_DAYS: f64 = 730.0;
/// R5's reliability model: mean time to repair a node, days.
pub const MTTR_DAYS: f64 = 1.0;

/// One case to run.
#[derive(Clone, Debug)]
pub enum Case {
    /// A scenario of `scenarios/validation/`.
    Scenario {
        /// File stem, e.g. `r1-scylla-2.1`.
        id: String,
        /// The scenario file.
        path: PathBuf,
        /// The parsed scenario.
        scenario: Box<Scenario>,
    },
    /// R6's fio sweep of a RAID-0 of two Optane P4800X.
    Device {
        /// Case id.
        id: String,
        /// Setup name as published.
        setup: &'static str,
        /// fio op.
        op: SweepOp,
        /// Block size, bytes.
        block_bytes: u64,
    },
}

impl Case {
    /// The case with `sets` applied to its scenario (a device case has
    /// none: it is returned as it is).
    pub fn with_sets(self, sets: &[Assignment]) -> Result<Case, ScenarioError> {
        match self {
            Case::Scenario { id, path, scenario } => Ok(Case::Scenario {
                scenario: Box::new(sim::scenario::with_sets(&scenario, sets)?),
                id,
                path,
            }),
            device => Ok(device),
        }
    }
}

impl Case {
    /// The case id.
    pub fn id(&self) -> &str {
        match self {
            Case::Scenario { id, .. } | Case::Device { id, .. } => id,
        }
    }

    /// The published run it reproduces.
    pub fn run(&self) -> &str {
        match self {
            Case::Scenario { scenario, .. } => &validation_section(scenario).run,
            Case::Device { .. } => "R6",
        }
    }
}

fn validation_section(scenario: &Scenario) -> &sim::scenario::ValidationSection {
    scenario
        .validation
        .as_ref()
        .expect("cases are scenarios with a [validation] section")
}

/// Every case: the scenarios in `dir` (sorted by file name; each must have
/// a `[validation]` section) and R6's two device sweeps. A folder that
/// cannot be read is an error naming it; a scenario that does not parse,
/// or has no `[validation]` section, one naming the scenario's file.
pub fn discover(dir: &Path) -> Result<Vec<Case>, ScenarioError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ScenarioError {
        file: dir.display().to_string(),
        line: None,
        field: None,
        reason: e.to_string(),
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    let mut cases = Vec::new();
    for path in paths {
        let scenario = sim::scenario::load(&path)?;
        if scenario.validation.is_none() {
            return Err(ScenarioError {
                file: path.display().to_string(),
                line: None,
                field: None,
                reason: "a validation scenario needs a [validation] section (run, setup)".into(),
            });
        }
        let id = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        cases.push(Case::Scenario {
            id,
            path,
            scenario: Box::new(scenario),
        });
    }
    cases.push(Case::Device {
        id: "r6-device-randread-4k".into(),
        setup: "optane-p4800x x2, randread 4k",
        op: SweepOp::RandRead,
        block_bytes: 4096,
    });
    cases.push(Case::Device {
        id: "r6-device-randwrite-128k".into(),
        setup: "optane-p4800x x2, randwrite 128k",
        op: SweepOp::RandWrite,
        block_bytes: 128 * 1024,
    });
    Ok(cases)
}

/// What running a case gave.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CaseResult {
    /// The case as the scorecard lists it: id, run, scenario, how long,
    /// how shortened or sampled, wall time, results folder.
    pub case: CaseRow,
    /// Published setup it measures.
    pub setup: String,
    /// Measured figures: (metric, value), in the units of `published.rs`.
    pub measured: Vec<(String, f64)>,
    /// Client throughput over time (seconds, ops/s) and per-node mean
    /// concurrent compactions over time, for the charts.
    pub series: CaseSeries,
}

/// Time series a case keeps for the scorecard's charts.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CaseSeries {
    /// (seconds, client ops/s of every op type).
    pub throughput: Vec<(f64, f64)>,
    /// (seconds, running compactions, mean over nodes).
    pub compactions: Vec<(f64, f64)>,
    /// (seconds into the measurement window, rows written back by read
    /// repair a second, cluster-wide).
    pub read_repairs: Vec<(f64, f64)>,
    /// (seconds, MB/s the nodes took in from streams, cluster-wide: an
    /// added node's receive bandwidth).
    pub stream_in: Vec<(f64, f64)>,
}

impl CaseSeries {
    /// The series a [`crate::published::Shape`] names.
    pub fn named(&self, metric: &str) -> Option<&[(f64, f64)]> {
        match metric {
            "read repairs per second" => Some(&self.read_repairs),
            "throughput" => Some(&self.throughput),
            _ => None,
        }
    }
}

impl CaseResult {
    /// The measured value of `metric`.
    pub fn get(&self, metric: &str) -> Option<f64> {
        self.measured
            .iter()
            .find(|(name, _)| name == metric)
            .map(|(_, value)| *value)
    }
}

/// A case that could not run: its scenario refused as it resolves, its run
/// failed, or its results could not be written.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseError {
    /// The scenario refused, or its run failed (as the scenario names it).
    Scenario(ScenarioError),
    /// The results folder could not be written: its path and why.
    Results {
        /// The folder.
        dir: String,
        /// What went wrong.
        reason: String,
    },
}

impl std::fmt::Display for CaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaseError::Scenario(error) => write!(f, "{error}"),
            CaseError::Results { dir, reason } => write!(f, "{dir}: {reason}"),
        }
    }
}

impl std::error::Error for CaseError {}

/// How to run the cases.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Shortened runs (`quick_duration`, `quick_warmup`).
    pub quick: bool,
    /// Where each case writes its results folder (`<out>/<case id>`).
    pub out: PathBuf,
    /// Run every scenario case with this seed instead of its own (how a
    /// figure moves with the seed: a figure that passes at one seed and
    /// not at others is luck, not calibration).
    pub seed: Option<u64>,
}

/// Runs one case.
#[allow(clippy::disallowed_methods)] // wall time for the scorecard's timings only
pub fn run_case(case: &Case, options: &RunOptions) -> Result<CaseResult, CaseError> {
    let started = std::time::Instant::now();
    match case {
        Case::Scenario { id, path, scenario } => {
            let section = validation_section(scenario);
            let (duration, warmup) = if options.quick {
                (
                    section.quick_duration.map(|d| d.0),
                    section.quick_warmup.or(section.warmup).map(|d| d.0),
                )
            } else {
                (None, section.warmup.map(|d| d.0))
            };
            let mut plan = resolve(
                scenario,
                &RunOverrides {
                    seed: options.seed,
                    duration,
                },
            )
            .map_err(CaseError::Scenario)?;
            plan.server_totals_from = warmup.unwrap_or(SimDuration::ZERO);
            let sampled = plan.cluster.sampled().then(|| {
                format!(
                    "{} of {} shards per node",
                    plan.cluster.simulated_shards(),
                    plan.cluster.shards_per_node
                )
            });
            let outcome = sim::cluster::run(plan, &mut |_| {})
                .map_err(|error| CaseError::Scenario(scenario.run_error(&error)))?;
            let dir = options.out.join(id);
            sim::report::write_results(&dir, &outcome).map_err(|error| CaseError::Results {
                dir: dir.display().to_string(),
                reason: error.to_string(),
            })?;
            let warmup = warmup.unwrap_or(SimDuration::ZERO);
            let mut shortened = section.shortened.clone();
            let sets = &scenario.source.sets;
            if !sets.is_empty() {
                let set: Vec<String> = sets.iter().map(ToString::to_string).collect();
                let set = set.join(" ");
                shortened = Some(match shortened {
                    Some(text) => format!("{set}; {text}"),
                    None => set,
                });
            }
            if let Some(seed) = options.seed {
                let seeded = format!("--seed {seed}");
                shortened = Some(match shortened {
                    Some(text) => format!("{seeded}; {text}"),
                    None => seeded,
                });
            }
            if options.quick {
                let quick = format!(
                    "--quick: {:.0} simulated s",
                    outcome.end.as_nanos() as f64 / 1e9
                );
                shortened = Some(match shortened {
                    Some(text) => format!("{quick}; {text}"),
                    None => quick,
                });
            }
            Ok(CaseResult {
                case: CaseRow {
                    id: id.clone(),
                    run: section.run.clone(),
                    scenario: Some(path.display().to_string()),
                    simulated_seconds: outcome.end.as_nanos() as f64 / 1e9,
                    warmup_seconds: warmup.as_secs_f64(),
                    shortened,
                    sampled,
                    wall_seconds: started.elapsed().as_secs_f64(),
                    results_dir: Some(dir.display().to_string()),
                },
                setup: section.setup.clone(),
                measured: measure(&outcome, SimTime::ZERO + warmup),
                series: series(&outcome, warmup.as_secs_f64()),
            })
        }
        Case::Device {
            id,
            setup,
            op,
            block_bytes,
        } => {
            let device = models::nvme::NvmeProfile::by_name("optane-p4800x")
                .expect("the Optane preset exists")
                .striped(2);
            let depths = parse_qd_list("1,2,4,6,8,12,16,20,24,28,32,40,48,64")
                .expect("a valid queue-depth list");
            let report = run_sweep(&SweepConfig::new(device, *op, *block_bytes, depths));
            Ok(CaseResult {
                case: CaseRow {
                    id: id.clone(),
                    run: "R6".into(),
                    scenario: None,
                    simulated_seconds: 0.0,
                    warmup_seconds: 0.0,
                    shortened: None,
                    sampled: None,
                    wall_seconds: started.elapsed().as_secs_f64(),
                    results_dir: None,
                },
                setup: (*setup).into(),
                measured: vec![
                    ("knee queue depth".into(), f64::from(report.knee.qd)),
                    ("IOPS at knee".into(), report.knee.iops),
                    ("latency at knee".into(), report.knee.mean_us),
                ],
                series: CaseSeries::default(),
            })
        }
    }
}

/// The figures of a run, over the window from `from` to its end.
pub fn measure(outcome: &RunOutcome, from: SimTime) -> Vec<(String, f64)> {
    let plan = &outcome.plan;
    let scale = plan.cluster.sampling_scale();
    let seconds = (outcome.end - from).as_secs_f64().max(1e-9);
    let mut measured = Vec::new();
    let mut total_ops = 0u64;
    // Partitions those operations touched, at each op type's whole-run
    // partitions per operation (one but for a profile's batches).
    let mut total_partitions = 0.0;
    let mut deserializer = Deserializer::new();
    for (position, op) in outcome.ops.iter().enumerate() {
        let kind = op.kind;
        let mut window: Histogram<u64> = Histogram::new_with_bounds(1, 3_600_000_000, 3)
            .expect("static histogram bounds are valid");
        for (load, load_plan) in outcome.loads.iter().zip(&plan.loads) {
            let Some(index) = load_plan.op_kinds().iter().position(|k| *k == kind) else {
                continue;
            };
            for interval in &load.intervals[index] {
                if interval.start < from {
                    continue;
                }
                let histogram: Histogram<u64> = deserializer
                    .deserialize(&mut interval.histogram.as_slice())
                    .expect("interval histograms were serialized by the run");
                window
                    .add(&histogram)
                    .expect("histograms of the same bounds add");
            }
        }
        let _ = position;
        let count = window.len();
        if count == 0 {
            continue;
        }
        total_ops += count;
        total_partitions += count as f64 * op.partitions as f64 / op.count.max(1) as f64;
        let ms = |us: u64| us as f64 / 1000.0;
        let name = kind.name();
        measured.push((format!("{name} latency mean"), window.mean() / 1000.0));
        for (label, quantile) in [("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("p99.9", 0.999)] {
            measured.push((
                format!("{name} latency {label}"),
                ms(window.value_at_quantile(quantile)),
            ));
        }
        measured.push((format!("{name} throughput"), count as f64 * scale / seconds));
    }
    measured.push((
        "achieved throughput".into(),
        total_ops as f64 * scale / seconds,
    ));
    // What c-s's rate counts: as the throughput but for batches.
    measured.push((
        "achieved partition rate".into(),
        total_partitions * scale / seconds,
    ));
    // What the coordinators measured, after the warm-up
    // (`RunPlan::server_totals_from`): R6's headline is server-side.
    for (name, histogram) in ["read", "write"].into_iter().zip(outcome.server.totals()) {
        if histogram.is_empty() {
            continue;
        }
        for (label, quantile) in [("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("p99.9", 0.999)] {
            measured.push((
                format!("server {name} latency {label}"),
                histogram.value_at_quantile(quantile) as f64 / 1000.0,
            ));
        }
    }
    if let Some(load) = node_column_mean(outcome, from, "cpu_utilisation") {
        measured.push(("server load".into(), load * 100.0));
    }
    // R7's "~600 MB/s per server": the nodes' device reads, MB (10^6
    // bytes) a second, the mean over nodes and intervals.
    if let Some(rate) = node_column_mean(outcome, from, "disk_read_mb_per_s") {
        measured.push(("disk read per server".into(), rate));
    }
    if let Some(price) =
        models::instance::by_name(&plan.cluster.instance).and_then(|instance| instance.reserved_1y)
    {
        measured.push((
            "1-year reserved cost, all upfront".into(),
            f64::from(plan.cluster.nodes) * price.usd_per_hour * 8760.0,
        ));
    }
    measured.push((
        "probability of a concurrent double failure".into(),
        double_failure_probability(plan.cluster.nodes) * 100.0,
    ));
    measured.extend(operation_durations(outcome));
    measured
}

/// How long each topology operation took, from the operator's command to
/// its end (`action-end`), named as R3 names them: "add node, idle",
/// "decommission, under load", ...
fn operation_durations(outcome: &RunOutcome) -> Vec<(String, f64)> {
    let load = if outcome.plan.loads.is_empty() {
        "idle"
    } else {
        "under load"
    };
    outcome
        .event_log
        .events()
        .iter()
        .filter_map(|event| match &event.what {
            sim::events::What::ActionEnd {
                kind, duration_s, ..
            } => {
                let operation = match *kind {
                    "add-node" => "add node",
                    other => other,
                };
                Some((format!("{operation}, {load}"), *duration_s))
            }
            _ => None,
        })
        .collect()
}

/// R5's PCDF: N x (MTTR/MTBF)^2 x 365.
pub fn double_failure_probability(nodes: u32) -> f64 {
    f64::from(nodes) * (MTTR_DAYS / MTBF_DAYS).powi(2) * 365.0
}

/// Whether a time-series column is node `<i>`'s `column`,
/// `node<i>_<column>` (`cpu_utilisation`, not another `*_cpu_*` column of
/// the node).
fn is_node_column(name: &str, column: &str) -> bool {
    name.strip_prefix("node")
        .and_then(|rest| rest.split_once('_'))
        .is_some_and(|(node, rest)| {
            !node.is_empty() && node.bytes().all(|byte| byte.is_ascii_digit()) && rest == column
        })
}

/// Mean of every `node<i>_<column>` cell of the rows after `from`.
fn node_column_mean(outcome: &RunOutcome, from: SimTime, column: &str) -> Option<f64> {
    let series = &outcome.timeseries;
    let columns: Vec<usize> = series
        .columns
        .iter()
        .enumerate()
        .filter(|(_, name)| is_node_column(name, column))
        .map(|(index, _)| index)
        .collect();
    let from_s = from.as_nanos() as f64 / 1e9;
    let (mut sum, mut cells) = (0.0, 0u64);
    for row in &series.rows {
        // A row is stamped with its interval's end.
        let end: f64 = row[0].parse().ok()?;
        if end <= from_s {
            continue;
        }
        for &column in &columns {
            if let Ok(value) = row[column].parse::<f64>() {
                sum += value;
                cells += 1;
            }
        }
    }
    (cells > 0).then(|| sum / cells as f64)
}

/// Throughput and compactions over time, from the time series.
fn series(outcome: &RunOutcome, from_s: f64) -> CaseSeries {
    let series = &outcome.timeseries;
    let indices = |keep: &dyn Fn(&str) -> bool| -> Vec<usize> {
        series
            .columns
            .iter()
            .enumerate()
            .filter(|(_, name)| keep(name))
            .map(|(index, _)| index)
            .collect()
    };
    let ops = indices(&|name| name.ends_with("_ops_per_s") && !name.starts_with("node"));
    let compactions = indices(&|name| name.starts_with("node") && name.ends_with("_compactions"));
    let repairs =
        indices(&|name| name.starts_with("node") && name.ends_with("_read_repairs_per_s"));
    let stream_in =
        indices(&|name| name.starts_with("node") && name.ends_with("_stream_in_mb_per_s"));
    let mut out = CaseSeries::default();
    let mut stream_bins: Vec<(f64, f64, u32)> = Vec::new();
    for row in &series.rows {
        let Ok(time) = row[0].parse::<f64>() else {
            continue;
        };
        let sum = |columns: &[usize]| -> f64 {
            columns
                .iter()
                .filter_map(|&c| row[c].parse::<f64>().ok())
                .sum()
        };
        out.throughput.push((time, sum(&ops)));
        if !compactions.is_empty() {
            out.compactions
                .push((time, sum(&compactions) / compactions.len() as f64));
        }
        if time > from_s && !repairs.is_empty() {
            out.read_repairs.push((time - from_s, sum(&repairs)));
        }
        if !stream_in.is_empty() {
            // 10-second means: one point an interval hides the plans'
            // shape in their jitter.
            let bin = (time / STREAM_BIN_S).ceil() * STREAM_BIN_S;
            match stream_bins.last_mut() {
                Some((end, total, rows)) if *end == bin => {
                    *total += sum(&stream_in);
                    *rows += 1;
                }
                _ => stream_bins.push((bin, sum(&stream_in), 1)),
            }
        }
    }
    out.stream_in = stream_bins
        .into_iter()
        .map(|(end, total, rows)| (end, total / f64::from(rows)))
        .collect();
    out
}

/// Width of the bins the streaming bandwidth is averaged over, seconds.
const STREAM_BIN_S: f64 = 10.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_override_runs_every_scenario_case_with_that_seed_and_says_so() {
        let scenario = sim::scenario::parse(
            "tiny.toml",
            r#"
name = "tiny"
seed = 1
duration = "2s"

[validation]
run = "R1"
setup = "scylla-2.2"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[[load]]
name = "write"
command = "cassandra-stress write no-warmup cl=ONE n=2000 -rate threads=4"
"#,
        )
        .unwrap();
        let case = Case::Scenario {
            id: "tiny".into(),
            path: PathBuf::from("tiny.toml"),
            scenario: Box::new(scenario),
        };
        let out = std::env::temp_dir().join(format!("twin-validate-seed-{}", std::process::id()));
        let run = |seed| {
            let result = run_case(
                &case,
                &RunOptions {
                    quick: false,
                    out: out.clone(),
                    seed,
                },
            )
            .unwrap();
            let summary = std::fs::read_to_string(out.join("tiny").join("summary.json")).unwrap();
            let seed = summary
                .lines()
                .find_map(|line| line.trim().strip_prefix("\"seed\": "))
                .map(|value| value.trim_end_matches(',').to_string());
            (seed, result.case.shortened)
        };
        assert_eq!(run(None), (Some("1".into()), None));
        assert_eq!(run(Some(7)), (Some("7".into()), Some("--seed 7".into())));
        std::fs::remove_dir_all(&out).ok();
    }

    #[test]
    fn the_server_load_reads_each_nodes_cpu_utilisation_and_nothing_else() {
        for name in ["node0_cpu_utilisation", "node39_cpu_utilisation"] {
            assert!(is_node_column(name, "cpu_utilisation"), "{name}");
        }
        for name in [
            "node0_compaction_cpu_fraction",
            "node0_hottest_shard_utilisation",
            "node0_disk_utilisation",
            "nodex_cpu_utilisation",
            "node_cpu_utilisation",
            "write_ops_per_s",
        ] {
            assert!(!is_node_column(name, "cpu_utilisation"), "{name}");
        }
        // R7's disk read rate reads the nodes' device reads alone.
        assert!(is_node_column(
            "node5_disk_read_mb_per_s",
            "disk_read_mb_per_s"
        ));
        assert!(!is_node_column(
            "node5_disk_write_mb_per_s",
            "disk_read_mb_per_s"
        ));
    }
}
