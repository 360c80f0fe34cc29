//! `twin regress`: a scenario over several seeds, its figures compared with
//! a stored baseline, so a change to the compaction controller's tuning (or
//! to the engine) that makes throughput or the tails worse fails loudly.
//!
//! Figures of each run, after the warm-up ([`run_figures`]):
//! - `throughput_mean`: client operations per second over the window;
//! - `read_p99_ms`, `read_p999_ms`, `write_p99_ms`, `write_p999_ms`;
//! - `throughput_cv`: the coefficient of variation (standard deviation
//!   over mean) of the per-interval throughput: how steady it is;
//! - `compactions_cv`: the same of the running compactions (summed over
//!   nodes): whether the controller holds them steady or lets them swing;
//! - `backlog_peak`: the largest per-interval compaction backlog (mean over
//!   nodes, in shard memories: the controller's input).
//!
//! The baseline holds each figure's mean over the seeds and its tolerance:
//! a floor per figure, widened to three times the spread the seeds showed
//! when the baseline was written (a figure that moves that much with the
//! seed cannot be judged tighter). A figure regresses when it moves the
//! worse way by more than its tolerance and by more than its absolute
//! floor (a CV of 0.01 doubling is not a regression).

use serde::{Deserialize, Serialize};
use sim::cluster::RunOutcome;
use units::{SimDuration, SimTime};

use crate::cases::measure;

/// Which way a figure gets worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Worse {
    /// Larger is worse (latencies, variation, backlog).
    Higher,
    /// Smaller is worse (throughput).
    Lower,
}

/// A figure's rule: which way is worse, the least relative tolerance, and
/// the least absolute change that counts.
struct Rule {
    name: &'static str,
    worse: Worse,
    floor_pct: f64,
    floor_abs: f64,
}

/// Every figure, in report order.
const RULES: [Rule; 8] = [
    Rule {
        name: "throughput_mean",
        worse: Worse::Lower,
        floor_pct: 3.0,
        floor_abs: 0.0,
    },
    Rule {
        name: "read_p99_ms",
        worse: Worse::Higher,
        floor_pct: 10.0,
        floor_abs: 0.05,
    },
    Rule {
        name: "read_p999_ms",
        worse: Worse::Higher,
        floor_pct: 20.0,
        floor_abs: 0.1,
    },
    Rule {
        name: "write_p99_ms",
        worse: Worse::Higher,
        floor_pct: 10.0,
        floor_abs: 0.05,
    },
    Rule {
        name: "write_p999_ms",
        worse: Worse::Higher,
        floor_pct: 20.0,
        floor_abs: 0.1,
    },
    Rule {
        name: "throughput_cv",
        worse: Worse::Higher,
        floor_pct: 25.0,
        floor_abs: 0.02,
    },
    Rule {
        name: "compactions_cv",
        worse: Worse::Higher,
        floor_pct: 25.0,
        floor_abs: 0.05,
    },
    Rule {
        name: "backlog_peak",
        worse: Worse::Higher,
        floor_pct: 20.0,
        floor_abs: 0.1,
    },
];

/// A stored baseline (`--baseline FILE`, written by `--update-baseline`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The scenario's name.
    pub scenario: String,
    /// The `--set`s it ran with.
    pub sets: Vec<String>,
    /// The seeds.
    pub seeds: Vec<u64>,
    /// Seconds at the start left out.
    pub warmup_s: f64,
    /// Each figure.
    pub figures: Vec<BaselineFigure>,
}

/// One figure of a baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaselineFigure {
    /// Its name.
    pub name: String,
    /// Mean over the seeds.
    pub value: f64,
    /// Which way is worse.
    pub worse: Worse,
    /// Relative change allowed the worse way, percent.
    pub tolerance_pct: f64,
    /// Change the worse way below which nothing counts.
    pub tolerance_abs: f64,
}

/// The figures of one run after `warmup` (those it has: a write-only run
/// has no read latencies).
pub fn run_figures(outcome: &RunOutcome, warmup: SimDuration) -> Vec<(&'static str, f64)> {
    let from = SimTime::ZERO + warmup;
    let measured = measure(outcome, from);
    let figure = |name: &str| {
        measured
            .iter()
            .find(|(figure, _)| figure == name)
            .map(|(_, value)| *value)
    };
    let from_s = warmup.as_secs_f64();
    let throughput = column_sums(outcome, from_s, &|name| {
        name.ends_with("_ops_per_s") && !name.starts_with("node")
    });
    let compactions = column_sums(outcome, from_s, &|name| {
        name.starts_with("node") && name.ends_with("_compactions")
    });
    let backlog = column_means(outcome, from_s, &|name| {
        name.starts_with("node") && name.ends_with("_compaction_backlog")
    });
    let mut figures = Vec::new();
    let mut push = |name: &'static str, value: Option<f64>| {
        if let Some(value) = value.filter(|value| value.is_finite()) {
            figures.push((name, value));
        }
    };
    push("throughput_mean", figure("achieved throughput"));
    push("read_p99_ms", figure("read latency p99"));
    push("read_p999_ms", figure("read latency p99.9"));
    push("write_p99_ms", figure("write latency p99"));
    push("write_p999_ms", figure("write latency p99.9"));
    push("throughput_cv", coefficient_of_variation(&throughput));
    push("compactions_cv", coefficient_of_variation(&compactions));
    push("backlog_peak", backlog.iter().copied().reduce(f64::max));
    figures
}

/// Runs `scenario` under `seed` and returns its figures after `warmup`.
pub fn figures_of_seed(
    scenario: &sim::scenario::Scenario,
    seed: u64,
    warmup: SimDuration,
) -> Result<Vec<(&'static str, f64)>, sim::scenario::ScenarioError> {
    let plan = sim::plan::resolve(
        scenario,
        &sim::plan::RunOverrides {
            seed: Some(seed),
            duration: None,
        },
    )?;
    let outcome =
        sim::cluster::run(plan, &mut |_| {}).map_err(|error| scenario.run_error(&error))?;
    Ok(run_figures(&outcome, warmup))
}

/// Per interval after `from_s`, the sum of the columns `keep` accepts.
fn column_sums(outcome: &RunOutcome, from_s: f64, keep: &dyn Fn(&str) -> bool) -> Vec<f64> {
    column_fold(outcome, from_s, keep, false)
}

/// Per interval after `from_s`, the mean of the columns `keep` accepts.
fn column_means(outcome: &RunOutcome, from_s: f64, keep: &dyn Fn(&str) -> bool) -> Vec<f64> {
    column_fold(outcome, from_s, keep, true)
}

fn column_fold(
    outcome: &RunOutcome,
    from_s: f64,
    keep: &dyn Fn(&str) -> bool,
    mean: bool,
) -> Vec<f64> {
    let series = &outcome.timeseries;
    let columns: Vec<usize> = series
        .columns
        .iter()
        .enumerate()
        .filter(|(_, name)| keep(name))
        .map(|(index, _)| index)
        .collect();
    if columns.is_empty() {
        return Vec::new();
    }
    series
        .rows
        .iter()
        .filter(|row| row[0].parse::<f64>().is_ok_and(|end| end > from_s))
        .map(|row| {
            let values: Vec<f64> = columns
                .iter()
                .filter_map(|&column| row[column].parse::<f64>().ok())
                .collect();
            let sum: f64 = values.iter().sum();
            if mean {
                sum / values.len().max(1) as f64
            } else {
                sum
            }
        })
        .collect()
}

/// Standard deviation over mean (`None` for fewer than two values or a
/// zero mean).
fn coefficient_of_variation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if mean == 0.0 {
        return None;
    }
    let variance =
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    Some(variance.sqrt() / mean)
}

/// Rounds to 4 significant decimals' worth for stored and printed figures.
fn round(value: f64) -> f64 {
    (value * 1e4).round() / 1e4
}

/// The baseline of some runs' figures (one list per seed): each figure
/// every run has, its mean, and its tolerance (the rule's floor, widened to
/// three times the seeds' coefficient of variation).
pub fn baseline_of(
    scenario: &str,
    sets: &[String],
    seeds: &[u64],
    warmup: SimDuration,
    runs: &[Vec<(&'static str, f64)>],
) -> Baseline {
    let figures = RULES
        .iter()
        .filter_map(|rule| {
            let values: Vec<f64> = runs
                .iter()
                .map(|run| {
                    run.iter()
                        .find(|(name, _)| *name == rule.name)
                        .map(|(_, value)| *value)
                })
                .collect::<Option<Vec<f64>>>()?;
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let spread_pct = coefficient_of_variation(&values).map_or(0.0, |cv| cv.abs() * 100.0);
            Some(BaselineFigure {
                name: rule.name.to_string(),
                value: round(mean),
                worse: rule.worse,
                tolerance_pct: round(rule.floor_pct.max(3.0 * spread_pct)),
                tolerance_abs: rule.floor_abs,
            })
        })
        .collect();
    Baseline {
        scenario: scenario.to_string(),
        sets: sets.to_vec(),
        seeds: seeds.to_vec(),
        warmup_s: warmup.as_secs_f64(),
        figures,
    }
}

/// One figure compared with its baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    /// The figure.
    pub name: String,
    /// The baseline's value.
    pub baseline: f64,
    /// This run's mean over the seeds (`None`: the runs lacked it).
    pub now: Option<f64>,
    /// The change, percent of the baseline.
    pub change_pct: Option<f64>,
    /// The tolerance, percent, the worse way.
    pub tolerance_pct: f64,
    /// Which way is worse.
    pub worse: Worse,
    /// Worse than allowed, or missing.
    pub regressed: bool,
}

/// Every figure of `baseline` against `current` (the new baseline of the
/// runs just made: its means).
pub fn compare(baseline: &Baseline, current: &Baseline) -> Vec<Compared> {
    baseline
        .figures
        .iter()
        .map(|figure| {
            let now = current
                .figures
                .iter()
                .find(|other| other.name == figure.name)
                .map(|other| other.value);
            let change_pct = now.map(|now| {
                if figure.value == 0.0 {
                    0.0
                } else {
                    round((now - figure.value) / figure.value.abs() * 100.0)
                }
            });
            let regressed = match now {
                None => true,
                Some(now) => {
                    let worse_by = match figure.worse {
                        Worse::Higher => now - figure.value,
                        Worse::Lower => figure.value - now,
                    };
                    let relative = if figure.value == 0.0 {
                        f64::INFINITY
                    } else {
                        worse_by / figure.value.abs() * 100.0
                    };
                    worse_by > figure.tolerance_abs && relative > figure.tolerance_pct
                }
            };
            Compared {
                name: figure.name.clone(),
                baseline: figure.value,
                now,
                change_pct,
                tolerance_pct: figure.tolerance_pct,
                worse: figure.worse,
                regressed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(name: &str, value: f64, worse: Worse, pct: f64, abs: f64) -> BaselineFigure {
        BaselineFigure {
            name: name.into(),
            value,
            worse,
            tolerance_pct: pct,
            tolerance_abs: abs,
        }
    }

    fn baseline(figures: Vec<BaselineFigure>) -> Baseline {
        Baseline {
            scenario: "s".into(),
            sets: Vec::new(),
            seeds: vec![1],
            warmup_s: 0.0,
            figures,
        }
    }

    #[test]
    fn a_figure_regresses_only_the_worse_way_past_both_tolerances() {
        let base = baseline(vec![
            figure("throughput_mean", 1000.0, Worse::Lower, 3.0, 0.0),
            figure("write_p99_ms", 2.0, Worse::Higher, 10.0, 0.05),
            figure("throughput_cv", 0.01, Worse::Higher, 25.0, 0.02),
        ]);
        let now = baseline(vec![
            figure("throughput_mean", 960.0, Worse::Lower, 3.0, 0.0),
            figure("write_p99_ms", 1.0, Worse::Higher, 10.0, 0.05),
            figure("throughput_cv", 0.025, Worse::Higher, 25.0, 0.02),
        ]);
        let verdicts = compare(&base, &now);
        // 4% less throughput: past 3%. Half the p99: better, not worse.
        // The CV went up 150% but by 0.015, under the 0.02 that counts.
        assert_eq!(
            verdicts.iter().map(|v| v.regressed).collect::<Vec<_>>(),
            vec![true, false, false]
        );
        assert_eq!(verdicts[0].change_pct, Some(-4.0));
        // A figure the runs no longer have is a regression.
        let missing = compare(&base, &baseline(Vec::new()));
        assert!(missing.iter().all(|v| v.regressed && v.now.is_none()));
        // Against itself, nothing regresses.
        assert!(compare(&base, &base).iter().all(|v| !v.regressed));
    }

    #[test]
    fn tolerances_widen_to_three_times_the_seed_spread() {
        let runs = vec![
            vec![("throughput_mean", 900.0), ("write_p99_ms", 2.0)],
            vec![("throughput_mean", 1100.0), ("write_p99_ms", 2.0)],
        ];
        let made = baseline_of("s", &[], &[1, 2], SimDuration::ZERO, &runs);
        let throughput = &made.figures[0];
        assert_eq!(throughput.value, 1000.0);
        // CV of (900, 1100) = 141.4 / 1000: three times is 42.4%.
        assert!(
            (throughput.tolerance_pct - 42.4264).abs() < 1e-3,
            "{throughput:?}"
        );
        // No spread: the floor.
        assert_eq!(made.figures[1].tolerance_pct, 10.0);
        assert_eq!(made.figures.len(), 2, "only the figures every run has");
        assert_eq!(coefficient_of_variation(&[1.0]), None);
    }
}
