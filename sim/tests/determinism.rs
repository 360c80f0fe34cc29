//! Determinism of whole runs: the bundled quickstart, run twice with the same
//! seed, writes byte-identical results (every file but perf.json: summary,
//! time series, HdrHistogram logs, charts); another seed changes the
//! latencies. Runs that must agree are traced (`sim::trace`): when they do
//! not, the test names the first event where they part, not only a file.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use sim::cluster::RunOutcome;
use sim::cluster::RunPlan;
use sim::plan::{resolve, RunOverrides};
use sim::report::write_results;
use sim::trace::{first_differing_event, first_divergence, DifferingEvent, TraceOptions};
use units::SimDuration;

fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name)
}

/// Runs the quickstart for `seconds` with `seed` into a fresh folder.
fn run_quickstart(seed: u64, seconds: u64, out: &Path) {
    let path = scenario_path("quickstart.toml");
    let scenario = sim::scenario::load(&path).expect("the quickstart parses");
    let overrides = RunOverrides {
        seed: Some(seed),
        duration: Some(SimDuration::from_secs(seconds)),
    };
    let plan = resolve(&scenario, &overrides).expect("the quickstart resolves");
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    write_results(out, &outcome).expect("results are written");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twin-determinism-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_same_seed_writes_identical_results_and_another_seed_does_not() {
    let (first, second, other) = (temp_dir("a"), temp_dir("b"), temp_dir("c"));
    run_quickstart(7, 10, &first);
    run_quickstart(7, 10, &second);
    run_quickstart(8, 10, &other);
    let files = files_below(&first);
    for required in [
        "summary.json",
        "timeseries.csv",
        "hdr/write-write.hlog",
        "charts/throughput.png",
        "charts/backlog.svg",
        "events.jsonl",
    ] {
        assert!(
            files.iter().any(|file| file == Path::new(required)),
            "{required} is written"
        );
    }
    for file in files.iter().filter(|file| *file != Path::new("perf.json")) {
        let a = std::fs::read(first.join(file)).unwrap();
        let b = std::fs::read(second.join(file)).unwrap();
        // The event log is empty when nothing happened (no faults here).
        assert!(
            !a.is_empty() || file == Path::new("events.jsonl"),
            "{} is empty",
            file.display()
        );
        assert!(
            a == b,
            "{} differs between two runs with seed 7",
            file.display()
        );
    }
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
    };
    let (a, c) = (summary(&first), summary(&other));
    assert_ne!(
        a["ops"]["write"]["latency_ms"], c["ops"]["write"]["latency_ms"],
        "seed 8 gives different latencies than seed 7"
    );
    // The summary has exactly the promised shape.
    assert_eq!(a["scenario"], "quickstart");
    assert_eq!(a["seed"], 7);
    assert_eq!(a["simulated_seconds"], 10.0);
    for key in ["mean", "p50", "p95", "p99", "p999", "max"] {
        assert!(
            a["ops"]["write"]["latency_ms"][key].as_f64().unwrap() > 0.0,
            "{key}"
        );
    }
    assert!(
        a["ops"].get("read").is_none(),
        "op types appear only when they ran"
    );
    let perf = serde_json::from_slice::<serde_json::Value>(
        &std::fs::read(first.join("perf.json")).unwrap(),
    )
    .unwrap();
    for key in [
        "wall_seconds",
        "events_processed",
        "events_per_wall_second",
        "simulated_seconds_per_wall_second",
    ] {
        assert!(perf.get(key).is_some(), "perf.json has {key}");
    }
    // The HdrHistogram interval log reads back with HdrHistogram's own
    // log reader: one interval per second, each a decodable histogram.
    let log = std::fs::read(first.join("hdr/write-write.hlog")).unwrap();
    assert!(log == std::fs::read(second.join("hdr/write-write.hlog")).unwrap());
    let mut intervals = 0;
    for entry in hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&log) {
        if let hdrhistogram::serialization::interval_log::LogEntry::Interval(interval) =
            entry.unwrap()
        {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(interval.encoded_histogram())
                .unwrap();
            let histogram: hdrhistogram::Histogram<u64> =
                hdrhistogram::serialization::Deserializer::new()
                    .deserialize(&mut &bytes[..])
                    .unwrap();
            assert!(!histogram.is_empty());
            intervals += 1;
        }
    }
    assert_eq!(intervals, 10, "one interval histogram per simulated second");
    for dir in [first, second, other] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A QUORUM mix on a preloaded table, Scylla (row cache, heat-weighted
/// balancing, read-repair chance): it draws from every engine stream.
const QUORUM_MIX: &str = r#"
name = "quorum-mix"
seed = SEED
duration = "3s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[data]
partitions = 1e6
row_bytes = "300B"
replication_factor = 3

[[load]]
name = "mixed"
processes = 2
command = "cassandra-stress mixed ratio(write=1,read=3) no-warmup cl=QUORUM duration=3s -rate 'threads=20 limit=4000/s' -col 'size=FIXED(200) n=FIXED(1)' -pop dist=gauss(1..1000000,500000,100000)"
"#;

fn quorum_mix_plan(seed: u64) -> RunPlan {
    let text = QUORUM_MIX.replace("SEED", &seed.to_string());
    let scenario = sim::scenario::parse("quorum-mix.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    resolve(&scenario, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `plan`, fingerprinting its events with `trace`.
fn run_traced(plan: RunPlan, trace: TraceOptions) -> RunOutcome {
    sim::cluster::run_traced(plan, Some(trace), &mut |_| {}).expect("the run completes")
}

/// The first event where runs of `first` and `second` part, if they do:
/// traced once to find the checkpoint window where they part, then again
/// recording that window in full.
fn first_event_between(
    first: impl Fn() -> RunPlan,
    second: impl Fn() -> RunPlan,
) -> Option<DifferingEvent> {
    let options = TraceOptions::default();
    let (a, b) = (
        run_traced(first(), options.clone()),
        run_traced(second(), options.clone()),
    );
    let (a, b) = (a.trace.expect("traced"), b.trace.expect("traced"));
    let divergence = first_divergence(a.checkpoints(), b.checkpoints())?;
    let window = TraceOptions {
        window: Some(divergence.window),
        ..options
    };
    let (a, b) = (
        run_traced(first(), window.clone()),
        run_traced(second(), window),
    );
    let (a, b) = (a.trace.expect("traced"), b.trace.expect("traced"));
    Some(
        first_differing_event(a.window_events(), b.window_events())
            .expect("the window where the checkpoints part holds a differing event"),
    )
}

/// Fails naming the first event where two runs of `plan` part.
fn assert_same_events(plan: impl Fn() -> RunPlan) {
    if let Some(differing) = first_event_between(&plan, &plan) {
        panic!("two runs of the same plan and seed part: {differing}");
    }
}

/// The summary and time series of the QUORUM mix with `seed`.
fn run_quorum_mix(seed: u64) -> (String, String) {
    let outcome = run_traced(quorum_mix_plan(seed), TraceOptions::default());
    let summary = sim::report::Summary::of(&outcome);
    assert!(summary.ops["read"].count > 10_000);
    (
        serde_json::to_string(&summary).unwrap(),
        outcome.timeseries.to_csv(),
    )
}

#[test]
fn engine_draws_follow_the_run_seed() {
    let first = run_quorum_mix(7);
    if first != run_quorum_mix(7) {
        assert_same_events(|| quorum_mix_plan(7));
        panic!("seed 7 twice: the same events but other results");
    }
    let other = run_quorum_mix(8);
    assert!(first.0 != other.0, "seed 8 gives another summary");
    assert!(first.1 != other.1, "seed 8 gives another time series");
}

#[test]
fn the_first_event_where_two_seeds_part_is_named() {
    let differing = first_event_between(|| quorum_mix_plan(7), || quorum_mix_plan(8))
        .expect("seeds 7 and 8 part");
    let (Some(first), Some(second)) = (&differing.first, &differing.second) else {
        panic!("both runs are still going where they part: {differing}");
    };
    assert_eq!(first.index, second.index);
    assert!(
        first.at != second.at || first.event != second.event,
        "{differing}"
    );
    assert!(differing.to_string().contains(&first.event));
}

/// The bundled crash-and-restart scenario to 25 s (a node killed at 20 s,
/// hints written for it): with faults, the same seed gives the same
/// events.
#[test]
fn a_run_with_faults_gives_the_same_events_twice() {
    let plan = || {
        let scenario = sim::scenario::load(&scenario_path("crash-3.toml")).expect("crash-3 parses");
        let overrides = RunOverrides {
            seed: Some(3),
            duration: Some(SimDuration::from_secs(25)),
        };
        resolve(&scenario, &overrides).expect("crash-3 resolves")
    };
    assert_same_events(plan);
}

#[test]
fn every_bundled_scenario_parses_and_resolves() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            let scenario = sim::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            resolve(&scenario, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"));
            count += 1;
        }
    }
    assert!(count >= 1);
}

/// Every file below `dir`, as paths relative to it, sorted.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    files
}

/// Measuring how much of a run could go in parallel changes nothing in it
/// (the same events, fingerprinted), and the network's delay is a sound
/// lookahead: nothing one node or client schedules for another comes
/// sooner. The QUORUM mix's three nodes and two clients have work in most
/// windows, and two threads would go nearly twice as fast.
#[test]
fn the_parallelism_probe_changes_nothing_and_finds_a_sound_lookahead() {
    let plain = run_traced(quorum_mix_plan(7), TraceOptions::default());
    let probes = sim::cluster::Probes {
        trace: Some(TraceOptions::default()),
        parallelism: true,
    };
    let probed = sim::cluster::run_probed(quorum_mix_plan(7), probes, &mut |_| {})
        .expect("the run completes");
    assert_eq!(
        plain.trace.expect("traced").checkpoints(),
        probed.trace.as_ref().expect("traced").checkpoints(),
        "the probe moved an event"
    );
    let report = probed.parallelism.expect("measured");
    assert_eq!(report.events, probed.events);
    assert_eq!(report.logical_processes, 5);
    assert!(report.cross_lp_events > 10_000, "{report:?}");
    assert_eq!(report.cross_lp_events_under_lookahead, 0, "{report:?}");
    assert!(report.least_cross_lp_delay_us.expect("messages") >= report.lookahead_us);
    assert!(report.critical_path_bound > 1.5, "{report:?}");
    let by_threads = |threads: u32| {
        report
            .threads
            .iter()
            .find(|split| split.threads == threads)
            .expect("worked out")
    };
    assert_eq!(by_threads(1).split_speedup, 1.0);
    let two = by_threads(2);
    assert!(
        two.split_speedup > 1.25 && two.split_speedup <= two.balanced_bound + 1e-9,
        "{two:?}"
    );
    assert!(two.balanced_bound <= 2.0);
}
