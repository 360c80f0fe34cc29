//! The results folder and the cassandra-stress style summary.
//!
//! Files (`twin run --out DIR`):
//! - `summary.json`: scenario, seed, simulated seconds, and per op type the
//!   count, rate and latency percentiles in milliseconds;
//! - `timeseries.csv`: one row per interval;
//! - `perf.json`: wall-clock figures of the run. It is the only file that
//!   differs between two runs of the same scenario and seed.
//!
//! Everything but `perf.json` is built from simulated state only, with
//! sorted maps and fixed float formatting, so it is byte-identical across
//! runs and machines.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::cluster::{ops_per_second, RunOutcome};
use crate::metrics::{round3, LatencySummary};

/// `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Run seed.
    pub seed: u64,
    /// Simulated time covered.
    pub simulated_seconds: f64,
    /// Per op type (`write`, `read`), only those that ran.
    pub ops: BTreeMap<String, OpSummary>,
    /// Software preset.
    pub preset: String,
    /// Nodes in the cluster.
    pub nodes: u32,
    /// Instance type.
    pub instance: String,
    /// Shards per node.
    pub shards_per_node: u32,
}

/// One op type in `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct OpSummary {
    /// Operations completed.
    pub count: u64,
    /// Operations per second over the window the op type ran.
    pub ops_per_s: f64,
    /// Latency percentiles, milliseconds.
    pub latency_ms: LatencySummary,
}

/// `perf.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Perf {
    /// Wall-clock seconds of the simulation loop.
    pub wall_seconds: f64,
    /// Kernel events processed.
    pub events_processed: u64,
    /// Events per wall second.
    pub events_per_wall_second: f64,
    /// Simulated seconds per wall second.
    pub simulated_seconds_per_wall_second: f64,
    /// Client operations completed per wall second.
    pub client_ops_per_wall_second: f64,
}

impl Summary {
    /// The summary of a finished run.
    pub fn of(outcome: &RunOutcome) -> Summary {
        let ops = outcome
            .ops
            .iter()
            .zip(&outcome.op_windows)
            .filter(|(ops, _)| ops.count > 0)
            .map(|(ops, window)| {
                (
                    ops.kind.name().to_string(),
                    OpSummary {
                        count: ops.count,
                        ops_per_s: ops_per_second(ops.count, *window),
                        latency_ms: LatencySummary::of(&ops.total),
                    },
                )
            })
            .collect();
        let cluster = &outcome.plan.cluster;
        Summary {
            scenario: outcome.plan.scenario.clone(),
            seed: outcome.plan.seed,
            simulated_seconds: round3(outcome.end.as_secs_f64()),
            ops,
            preset: cluster.preset.clone(),
            nodes: cluster.nodes,
            instance: cluster.instance.clone(),
            shards_per_node: cluster.shards_per_node,
        }
    }

    /// A cassandra-stress style "Results:" block.
    pub fn to_stress_text(&self) -> String {
        let mut out = String::from("Results:\n");
        let total_count: u64 = self.ops.values().map(|op| op.count).sum();
        let total_rate: f64 = self.ops.values().map(|op| op.ops_per_s).sum();
        let per_op = |format: &dyn Fn(&OpSummary) -> String| -> String {
            self.ops
                .iter()
                .map(|(name, op)| format!("{}: {}", name.to_uppercase(), format(op)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "Op rate                   : {:>10} op/s  [{}]",
            group_thousands(total_rate.round() as u64),
            per_op(&|op| format!("{} op/s", group_thousands(op.ops_per_s.round() as u64)))
        );
        type Pick = fn(&LatencySummary) -> f64;
        let latency_lines: [(&str, Pick); 6] = [
            ("Latency mean              ", |l| l.mean),
            ("Latency median            ", |l| l.p50),
            ("Latency 95th percentile   ", |l| l.p95),
            ("Latency 99th percentile   ", |l| l.p99),
            ("Latency 99.9th percentile ", |l| l.p999),
            ("Latency max               ", |l| l.max),
        ];
        for (label, pick) in latency_lines {
            // With several op types, c-s shows the first op type's figure in
            // the total column only when there is one; we show the count-weighted
            // mean for the mean line and the per-op figures in brackets.
            let total = if self.ops.len() == 1 {
                self.ops
                    .values()
                    .map(|op| pick(&op.latency_ms))
                    .next()
                    .unwrap_or(0.0)
            } else {
                let weighted: f64 = self
                    .ops
                    .values()
                    .map(|op| pick(&op.latency_ms) * op.count as f64)
                    .sum();
                weighted / total_count.max(1) as f64
            };
            let _ = writeln!(
                out,
                "{label}: {total:>10.1} ms  [{}]",
                per_op(&|op| format!("{:.1} ms", pick(&op.latency_ms)))
            );
        }
        let _ = writeln!(
            out,
            "Total partitions          : {:>10}  [{}]",
            group_thousands(total_count),
            per_op(&|op| group_thousands(op.count))
        );
        let _ = writeln!(out, "Total errors              : {:>10}", 0);
        let _ = writeln!(
            out,
            "Total operation time      : {:>10}",
            format_hms(self.simulated_seconds)
        );
        out
    }
}

impl Perf {
    /// Wall-clock figures of a run.
    pub fn of(outcome: &RunOutcome) -> Perf {
        let wall = outcome.wall_seconds.max(1e-9);
        let operations: u64 = outcome.ops.iter().map(|ops| ops.count).sum();
        Perf {
            wall_seconds: outcome.wall_seconds,
            events_processed: outcome.events,
            events_per_wall_second: outcome.events as f64 / wall,
            simulated_seconds_per_wall_second: outcome.end.as_secs_f64() / wall,
            client_ops_per_wall_second: operations as f64 / wall,
        }
    }
}

/// `12345678` as `12,345,678`.
pub fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Seconds as `HH:MM:SS`.
fn format_hms(seconds: f64) -> String {
    let total = seconds.round() as u64;
    format!(
        "{:02}:{:02}:{:02}",
        total / 3600,
        total / 60 % 60,
        total % 60
    )
}

/// Writes `summary.json`, `timeseries.csv` and `perf.json` into `dir`.
pub fn write_results(dir: &Path, outcome: &RunOutcome) -> std::io::Result<Summary> {
    std::fs::create_dir_all(dir)?;
    let summary = Summary::of(outcome);
    let mut json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
    json.push('\n');
    std::fs::write(dir.join("summary.json"), json)?;
    std::fs::write(dir.join("timeseries.csv"), outcome.timeseries.to_csv())?;
    let mut perf =
        serde_json::to_string_pretty(&Perf::of(outcome)).map_err(std::io::Error::other)?;
    perf.push('\n');
    std::fs::write(dir.join("perf.json"), perf)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(12_345_678), "12,345,678");
    }

    #[test]
    fn times_are_hours_minutes_seconds() {
        assert_eq!(format_hms(60.0), "00:01:00");
        assert_eq!(format_hms(5400.4), "01:30:00");
    }
}
