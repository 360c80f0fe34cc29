//! The event-count baseline of the simulator's benchmarks
//! (`scenarios/bench-events.json`, `twin bench events`): for each bundled
//! benchmark scenario, run for a fixed simulated time, the kernel events
//! per client operation, in all and by kind. Event counts are
//! deterministic, so unlike wall time they can be held in CI: a change
//! that adds more than [`TOLERANCE`] events per operation to any
//! benchmark fails [`check`] until its commit refreshes the baseline
//! (`twin bench events --update`) and says why.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The baseline file, from the checkout's root.
pub const BASELINE_FILE: &str = "scenarios/bench-events.json";

/// How much more events per operation a benchmark may take than its
/// baseline before [`check`] fails it.
pub const TOLERANCE: f64 = 0.05;

/// The baseline: one entry per benchmark.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Baseline {
    /// What the file is.
    pub about: String,
    /// The benchmarks.
    pub benchmarks: Vec<Entry>,
}

/// One benchmark's events.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// The scenario, from the checkout's root.
    pub scenario: String,
    /// Simulated time it runs for (`--duration`).
    pub duration: String,
    /// Client operations answered.
    pub client_operations: u64,
    /// Kernel events handled.
    pub events: u64,
    /// Events per client operation.
    pub events_per_op: f64,
    /// Events per client operation by kind (`sim::cluster::EventKind`).
    pub by_kind: BTreeMap<String, f64>,
}

/// A benchmark that cannot be measured, or a baseline that cannot be
/// read: the file (or the duration given) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BenchError {
    /// A benchmark's duration that is not one.
    Duration {
        /// The duration as the baseline gives it.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// A benchmark's scenario refused.
    Scenario(sim::scenario::ScenarioError),
    /// A benchmark run that stopped, or a baseline that cannot be read.
    File {
        /// The scenario or the baseline.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Duration { text, reason } => write!(f, "{text}: {reason}"),
            BenchError::Scenario(error) => write!(f, "{error}"),
            BenchError::File { file, reason } => write!(f, "{}: {reason}", file.display()),
        }
    }
}

impl std::error::Error for BenchError {}

impl BenchError {
    fn file(file: &Path, reason: impl fmt::Display) -> BenchError {
        BenchError::File {
            file: file.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// Runs `scenario` (a path from `root`) for `duration` and counts its
/// events.
pub fn measure(root: &Path, scenario: &str, duration: &str) -> Result<Entry, BenchError> {
    let path = root.join(scenario);
    let seconds = units::parse_duration(duration).map_err(|error| BenchError::Duration {
        text: duration.to_string(),
        reason: error.to_string(),
    })?;
    let overrides = sim::plan::RunOverrides {
        seed: None,
        duration: Some(seconds),
    };
    let plan = sim::scenario::load(&path)
        .and_then(|scenario| sim::plan::resolve(&scenario, &overrides))
        .map_err(BenchError::Scenario)?;
    let outcome =
        sim::cluster::run(plan, &mut |_| {}).map_err(|error| BenchError::file(&path, error))?;
    let operations: u64 = outcome.ops.iter().map(|ops| ops.count).sum();
    let per_op = |count: u64| {
        if operations == 0 {
            0.0
        } else {
            round(count as f64 / operations as f64)
        }
    };
    let counts = &outcome.event_counts;
    Ok(Entry {
        scenario: scenario.to_string(),
        duration: duration.to_string(),
        client_operations: operations,
        events: counts.total(),
        events_per_op: per_op(counts.total()),
        by_kind: counts
            .by_kind()
            .into_iter()
            .map(|(kind, count)| (kind.to_string(), per_op(count)))
            .collect(),
    })
}

fn round(value: f64) -> f64 {
    (value * 1e4).round() / 1e4
}

/// The committed baseline under `root`.
pub fn load(root: &Path) -> Result<Baseline, BenchError> {
    let path = root.join(BASELINE_FILE);
    let text = std::fs::read_to_string(&path).map_err(|error| BenchError::file(&path, error))?;
    serde_json::from_str(&text).map_err(|error| BenchError::file(&path, error))
}

/// One benchmark measured against its baseline.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The baseline's entry.
    pub baseline: Entry,
    /// This build's.
    pub now: Entry,
}

impl Comparison {
    /// (now - baseline) / baseline of the events per operation.
    pub fn change(&self) -> f64 {
        if self.baseline.events_per_op == 0.0 {
            0.0
        } else {
            self.now.events_per_op / self.baseline.events_per_op - 1.0
        }
    }

    /// Whether it takes more than [`TOLERANCE`] more events per operation.
    pub fn regressed(&self) -> bool {
        // A hair of slack: 21 against 20 is 5%, not 5.000000000000004%.
        self.change() > TOLERANCE + 1e-12
    }
}

/// Measures every benchmark of the baseline under `root`; `progress`
/// hears each scenario as it starts.
pub fn compare(root: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Comparison>, BenchError> {
    let baseline = load(root)?;
    baseline
        .benchmarks
        .into_iter()
        .map(|entry| {
            progress(&entry.scenario);
            let now = measure(root, &entry.scenario, &entry.duration)?;
            Ok(Comparison {
                baseline: entry,
                now,
            })
        })
        .collect()
}

/// The comparison as a table: per benchmark its events per operation then
/// and now, and the kinds that moved most.
pub fn comparison_text(comparisons: &[Comparison]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for comparison in comparisons {
        let (then, now) = (&comparison.baseline, &comparison.now);
        let _ = writeln!(
            out,
            "{} ({}): {:.3} events per client op, baseline {:.3} ({:+.1}%){}",
            now.scenario,
            now.duration,
            now.events_per_op,
            then.events_per_op,
            comparison.change() * 100.0,
            if comparison.regressed() {
                "  MORE THAN 5% MORE"
            } else {
                ""
            }
        );
        let mut kinds: Vec<(&String, f64, f64)> = now
            .by_kind
            .keys()
            .chain(then.by_kind.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .map(|kind| {
                let a = then.by_kind.get(kind).copied().unwrap_or(0.0);
                let b = now.by_kind.get(kind).copied().unwrap_or(0.0);
                (kind, a, b)
            })
            .collect();
        kinds.sort_by(|x, y| y.2.total_cmp(&x.2).then(x.0.cmp(y.0)));
        for (kind, a, b) in kinds {
            let _ = writeln!(out, "  {kind:<20} {b:>9.3}  (baseline {a:.3})");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
    }

    /// The CI check: no bundled benchmark takes more than 5% more events
    /// per client operation than the committed baseline.
    #[test]
    fn no_benchmark_takes_more_events_per_operation_than_its_baseline() {
        let comparisons = compare(root(), &mut |_| {}).unwrap();
        assert!(comparisons.len() >= 3, "the three bundled benchmarks");
        let regressed: Vec<&Comparison> = comparisons.iter().filter(|c| c.regressed()).collect();
        assert!(
            regressed.is_empty(),
            "events per client operation grew by more than 5%: refresh the baseline with \
             `twin bench events --update` and say why in the commit\n{}",
            comparison_text(&comparisons)
        );
        for comparison in &comparisons {
            let kinds: f64 = comparison.now.by_kind.values().sum();
            assert!(
                (kinds - comparison.now.events_per_op).abs() < 0.01,
                "the kinds add up to the whole"
            );
        }
    }

    #[test]
    fn a_regression_is_more_than_the_tolerance_above_the_baseline() {
        let entry = |events_per_op: f64| Entry {
            scenario: "s.toml".into(),
            duration: "1s".into(),
            client_operations: 100,
            events: 0,
            events_per_op,
            by_kind: BTreeMap::new(),
        };
        let comparison = |now: f64| Comparison {
            baseline: entry(20.0),
            now: entry(now),
        };
        assert!(!comparison(21.0).regressed(), "5% is allowed");
        assert!(comparison(21.1).regressed());
        assert!(!comparison(10.0).regressed(), "fewer events are welcome");
        assert!(comparison_text(&[comparison(21.1)]).contains("MORE THAN 5% MORE"));
    }
}
