//! `twin sweep`: one scenario over the grid of every combination of some
//! `--set` values, each point under one or more seeds, and a table of what
//! each run measured, so a user sees how a parameter (a controller's
//! curve, the node count, the offered rate) trades throughput for latency.
//!
//! It lives beside the validation cases because it measures its runs the
//! same way ([`crate::cases::measure`]: latencies, throughput and server
//! load over a window), so a sweep's figures and the scorecard's mean the
//! same thing.
//!
//! The grid is ordered as the axes are given: the first axis varies
//! slowest, the seeds fastest; rows keep that order whatever order the
//! runs finish in, so the same inputs give the same bytes.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sim::cluster::RunOutcome;
use sim::overrides::{split_values, Assignment, SetError};
use sim::plan::{resolve, RunOverrides};
use sim::scenario::{with_sets, Scenario, ScenarioError};
use units::{SimDuration, SimTime};

use crate::cases::measure;

/// One swept key and its values, from `--set KEY=V1,V2,...`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// The key.
    pub key: String,
    /// Its values, as given.
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `KEY=V1,V2,...` (commas inside brackets, parentheses and
    /// quotes do not split).
    pub fn parse(text: &str) -> Result<Axis, SetError> {
        let bad = |reason: &str| SetError {
            set: format!("--set {text}"),
            reason: reason.into(),
        };
        let (key, values) = text
            .split_once('=')
            .ok_or_else(|| bad("expected KEY=V1,V2,..."))?;
        let values = split_values(values);
        if values.iter().any(|value| value.trim().is_empty()) {
            return Err(bad("an empty value in the list"));
        }
        for value in &values {
            // The key and each value must make a valid assignment.
            Assignment::new(key, value)?;
        }
        Ok(Axis {
            key: key.trim().to_string(),
            values,
        })
    }
}

/// One run of the grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// Position in the grid (row order).
    pub index: usize,
    /// Index of each axis's value.
    pub choice: Vec<usize>,
    /// Run seed.
    pub seed: u64,
}

/// Every combination of the axes' values, each under every seed: the first
/// axis varies slowest, the seeds fastest.
pub fn grid(axes: &[Axis], seeds: &[u64]) -> Vec<Point> {
    let mut points = Vec::new();
    let mut choice = vec![0usize; axes.len()];
    loop {
        for &seed in seeds {
            points.push(Point {
                index: points.len(),
                choice: choice.clone(),
                seed,
            });
        }
        // The next combination, the last axis fastest.
        let mut axis = axes.len();
        loop {
            if axis == 0 {
                return points;
            }
            axis -= 1;
            choice[axis] += 1;
            if choice[axis] < axes[axis].values.len() {
                break;
            }
            choice[axis] = 0;
        }
    }
}

/// The scenario a point runs: `scenario` with the point's values set.
pub fn scenario_of(
    scenario: &Scenario,
    axes: &[Axis],
    point: &Point,
) -> Result<Scenario, ScenarioError> {
    let sets: Vec<Assignment> = axes
        .iter()
        .zip(&point.choice)
        .map(|(axis, &choice)| {
            Assignment::new(&axis.key, &axis.values[choice])
                .expect("checked when the axis was parsed")
        })
        .collect();
    with_sets(scenario, &sets)
}

/// What one run measured, over the window after the warm-up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The swept values, one per axis.
    pub values: Vec<String>,
    /// Run seed.
    pub seed: u64,
    /// Operations per second over the window, all op types.
    pub throughput_ops_per_s: f64,
    /// Per op type that ran (`read`, `write`): latency percentiles (ms)
    /// and throughput.
    pub ops: Vec<OpRow>,
    /// Mean busy fraction of the nodes' cores over the window, percent.
    pub server_load_pct: Option<f64>,
    /// Compactions completed over the run (the whole cluster's estimate in
    /// a sampled run).
    pub compactions: u64,
    /// Operations that failed every try.
    pub errors: u64,
}

/// One op type's figures in a [`Row`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpRow {
    /// `read` or `write`.
    pub op: String,
    /// Operations per second.
    pub ops_per_s: f64,
    /// Latency percentiles, milliseconds.
    pub p50_ms: f64,
    /// 95th.
    pub p95_ms: f64,
    /// 99th.
    pub p99_ms: f64,
    /// 99.9th.
    pub p999_ms: f64,
}

/// Runs one point and measures it from `warmup` on.
pub fn run_point(
    scenario: &Scenario,
    axes: &[Axis],
    point: &Point,
    warmup: SimDuration,
) -> Result<Row, ScenarioError> {
    let scenario = scenario_of(scenario, axes, point)?;
    let plan = resolve(
        &scenario,
        &RunOverrides {
            seed: Some(point.seed),
            duration: None,
        },
    )?;
    let outcome =
        sim::cluster::run(plan, &mut |_| {}).map_err(|error| scenario.run_error(&error))?;
    Ok(row_of(axes, point, &outcome, warmup))
}

/// The row of a finished run.
pub fn row_of(axes: &[Axis], point: &Point, outcome: &RunOutcome, warmup: SimDuration) -> Row {
    let figures = measure(outcome, SimTime::ZERO + warmup);
    let figure = |name: &str| {
        figures
            .iter()
            .find(|(figure, _)| figure == name)
            .map(|(_, value)| *value)
    };
    let round = |value: f64| (value * 1000.0).round() / 1000.0;
    let ops = ["read", "write"]
        .iter()
        .filter_map(|op| {
            Some(OpRow {
                op: (*op).to_string(),
                ops_per_s: round(figure(&format!("{op} throughput"))?),
                p50_ms: round(figure(&format!("{op} latency p50"))?),
                p95_ms: round(figure(&format!("{op} latency p95"))?),
                p99_ms: round(figure(&format!("{op} latency p99"))?),
                p999_ms: round(figure(&format!("{op} latency p99.9"))?),
            })
        })
        .collect();
    let scale = outcome.plan.cluster.sampling_scale();
    let compactions: u64 = outcome
        .shards
        .iter()
        .map(|shard| shard.stats.compactions_completed)
        .sum();
    Row {
        values: axes
            .iter()
            .zip(&point.choice)
            .map(|(axis, &choice)| axis.values[choice].clone())
            .collect(),
        seed: point.seed,
        throughput_ops_per_s: round(figure("achieved throughput").unwrap_or(0.0)),
        ops,
        server_load_pct: figure("server load").map(round),
        compactions: (compactions as f64 * scale).round() as u64,
        errors: outcome.ops.iter().map(|ops| ops.errors).sum(),
    }
}

/// The metric columns of `sweep.csv`, in order, and how to read each
/// from a row (`None`: the run had no such figure).
pub const METRICS: [&str; 14] = [
    "throughput_ops_per_s",
    "read_ops_per_s",
    "read_p50_ms",
    "read_p95_ms",
    "read_p99_ms",
    "read_p999_ms",
    "write_ops_per_s",
    "write_p50_ms",
    "write_p95_ms",
    "write_p99_ms",
    "write_p999_ms",
    "server_load_pct",
    "compactions",
    "errors",
];

impl Row {
    /// The value of metric `name` (one of [`METRICS`]).
    pub fn metric(&self, name: &str) -> Option<f64> {
        let op = |op: &str| self.ops.iter().find(|row| row.op == op);
        match name {
            "throughput_ops_per_s" => Some(self.throughput_ops_per_s),
            "server_load_pct" => self.server_load_pct,
            "compactions" => Some(self.compactions as f64),
            "errors" => Some(self.errors as f64),
            _ => {
                let (op_name, field) = name.split_once('_')?;
                let row = op(op_name)?;
                match field {
                    "ops_per_s" => Some(row.ops_per_s),
                    "p50_ms" => Some(row.p50_ms),
                    "p95_ms" => Some(row.p95_ms),
                    "p99_ms" => Some(row.p99_ms),
                    "p999_ms" => Some(row.p999_ms),
                    _ => None,
                }
            }
        }
    }
}

/// `sweep.csv`: a header of the axes' keys, `seed` and [`METRICS`], then
/// a line per row (an empty cell where a run had no such figure; values
/// with a comma or a quote are quoted).
pub fn to_csv(axes: &[Axis], rows: &[Row]) -> String {
    let quote = |text: &str| {
        if text.contains([',', '"', '\n']) {
            format!("\"{}\"", text.replace('"', "\"\""))
        } else {
            text.to_string()
        }
    };
    let mut csv = String::new();
    let header: Vec<String> = axes
        .iter()
        .map(|axis| quote(&axis.key))
        .chain(std::iter::once("seed".to_string()))
        .chain(METRICS.iter().map(|metric| metric.to_string()))
        .collect();
    csv.push_str(&header.join(","));
    csv.push('\n');
    for row in rows {
        let cells: Vec<String> = row
            .values
            .iter()
            .map(|value| quote(value))
            .chain(std::iter::once(row.seed.to_string()))
            .chain(
                METRICS
                    .iter()
                    .map(|metric| row.metric(metric).map_or(String::new(), |v| v.to_string())),
            )
            .collect();
        csv.push_str(&cells.join(","));
        csv.push('\n');
    }
    csv
}

/// `sweep.json`.
#[derive(Serialize)]
pub struct SweepReport<'a> {
    /// The scenario's name.
    pub scenario: &'a str,
    /// The swept keys and their values.
    pub axes: Vec<AxisReport<'a>>,
    /// The seeds each point ran under.
    pub seeds: &'a [u64],
    /// Seconds at the start left out of the figures.
    pub warmup_s: f64,
    /// One per run, in grid order.
    pub rows: &'a [Row],
}

/// An axis in `sweep.json`.
#[derive(Serialize)]
pub struct AxisReport<'a> {
    /// The key.
    pub key: &'a str,
    /// Its values.
    pub values: &'a [String],
}

/// Writes `sweep.csv`, `sweep.json` and, for each of `chart_metrics`, a
/// chart of it against axis `x` (one line per combination of the other
/// axes' values, each point the mean over the seeds) into `dir`.
#[allow(clippy::too_many_arguments)]
pub fn write(
    dir: &Path,
    scenario: &str,
    axes: &[Axis],
    seeds: &[u64],
    warmup: SimDuration,
    rows: &[Row],
    chart_metrics: &[String],
    x: usize,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("sweep.csv"), to_csv(axes, rows))?;
    let report = SweepReport {
        scenario,
        axes: axes
            .iter()
            .map(|axis| AxisReport {
                key: &axis.key,
                values: &axis.values,
            })
            .collect(),
        seeds,
        warmup_s: warmup.as_secs_f64(),
        rows,
    };
    let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("sweep.json"), json + "\n")?;
    for metric in chart_metrics {
        let series = chart_series(axes, rows, metric, x);
        if series.iter().all(|(_, points)| points.is_empty()) {
            continue;
        }
        let x_label = match numeric_values(&axes[x]) {
            Some(_) => axes[x].key.clone(),
            None => format!("{} (value index)", axes[x].key),
        };
        sim::charts::write_xy_chart(
            dir,
            &format!("sweep-{metric}"),
            format!("{scenario}: {metric} against {}", axes[x].key),
            &x_label,
            metric,
            series,
        )?;
    }
    Ok(())
}

/// The values of `axis` as numbers, if every one is one.
fn numeric_values(axis: &Axis) -> Option<Vec<f64>> {
    axis.values
        .iter()
        .map(|value| value.trim().parse::<f64>().ok())
        .collect()
}

/// The series of a chart of `metric` against axis `x`: per combination of
/// the other axes, the mean over the seeds at each value of `x` (its
/// number, or its index when not every value is one).
pub fn chart_series(
    axes: &[Axis],
    rows: &[Row],
    metric: &str,
    x: usize,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let positions = numeric_values(&axes[x]);
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let label = |row: &Row| -> String {
        // The other axes that vary name the line.
        let others: Vec<String> = axes
            .iter()
            .enumerate()
            .filter(|(index, axis)| *index != x && axis.values.len() > 1)
            .map(|(index, axis)| format!("{}={}", axis.key, row.values[index]))
            .collect();
        if others.is_empty() {
            metric.to_string()
        } else {
            others.join(" ")
        }
    };
    for (value_index, value) in axes[x].values.iter().enumerate() {
        let position = positions
            .as_ref()
            .map_or(value_index as f64, |numbers| numbers[value_index]);
        // Rows at this value of x, grouped by the other axes' values.
        let mut groups: Vec<(String, f64, u32)> = Vec::new();
        for row in rows.iter().filter(|row| &row.values[x] == value) {
            let Some(measured) = row.metric(metric) else {
                continue;
            };
            let name = label(row);
            match groups.iter_mut().find(|(known, _, _)| *known == name) {
                Some((_, sum, count)) => {
                    *sum += measured;
                    *count += 1;
                }
                None => groups.push((name, measured, 1)),
            }
        }
        for (name, sum, count) in groups {
            let mean = sum / f64::from(count);
            match series.iter_mut().find(|(known, _)| *known == name) {
                Some((_, points)) => points.push((position, mean)),
                None => series.push((name, vec![(position, mean)])),
            }
        }
    }
    for (_, points) in &mut series {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(text: &str) -> Axis {
        Axis::parse(text).unwrap()
    }

    #[test]
    fn the_grid_runs_the_first_axis_slowest_and_the_seeds_fastest() {
        let axes = [
            axis("cluster.nodes=3,4"),
            axis("cluster.preset=scylla-2.2,scylla-2.3,scylla-3.0"),
        ];
        let points = grid(&axes, &[1, 2]);
        assert_eq!(points.len(), 12);
        let order: Vec<(Vec<usize>, u64)> = points
            .iter()
            .map(|point| (point.choice.clone(), point.seed))
            .collect();
        assert_eq!(order[0], (vec![0, 0], 1));
        assert_eq!(order[1], (vec![0, 0], 2));
        assert_eq!(order[2], (vec![0, 1], 1));
        assert_eq!(order[6], (vec![1, 0], 1));
        assert_eq!(order[11], (vec![1, 2], 2));
        assert!(points.iter().enumerate().all(|(i, point)| point.index == i));
        // No axis: the seeds alone.
        assert_eq!(grid(&[], &[5, 6]).len(), 2);
    }

    #[test]
    fn axes_split_their_values_outside_brackets() {
        let curves = axis("controller.compaction.points=[[0,50],[30,1000]],[[0,100],[30,1000]]");
        assert_eq!(
            curves.values,
            vec!["[[0,50],[30,1000]]", "[[0,100],[30,1000]]"]
        );
        assert_eq!(
            Axis::parse("cluster.nodes").unwrap_err().to_string(),
            "--set cluster.nodes: expected KEY=V1,V2,..."
        );
        assert_eq!(
            Axis::parse("cluster.nodes=3,,4").unwrap_err().to_string(),
            "--set cluster.nodes=3,,4: an empty value in the list"
        );
    }

    #[test]
    fn charts_average_the_seeds_per_line_of_the_other_axes() {
        let axes = [axis("a=1,2"), axis("b=x,y")];
        let row = |a: &str, b: &str, seed: u64, throughput: f64| Row {
            values: vec![a.into(), b.into()],
            seed,
            throughput_ops_per_s: throughput,
            ops: Vec::new(),
            server_load_pct: None,
            compactions: 0,
            errors: 0,
        };
        let rows = [
            row("1", "x", 1, 10.0),
            row("1", "x", 2, 20.0),
            row("1", "y", 1, 5.0),
            row("2", "x", 1, 40.0),
            row("2", "y", 1, 7.0),
        ];
        let series = chart_series(&axes, &rows, "throughput_ops_per_s", 0);
        assert_eq!(
            series,
            vec![
                ("b=x".to_string(), vec![(1.0, 15.0), (2.0, 40.0)]),
                ("b=y".to_string(), vec![(1.0, 5.0), (2.0, 7.0)]),
            ]
        );
        assert!(chart_series(&axes, &rows, "read_p99_ms", 0).is_empty());
        let csv = to_csv(&axes, &rows[..1]);
        assert!(csv.starts_with("a,b,seed,throughput_ops_per_s,read_ops_per_s,"));
        assert!(csv.lines().nth(1).unwrap().starts_with("1,x,1,10,,"));
    }

    #[test]
    fn a_sweep_is_the_same_bytes_whatever_order_its_runs_finish_in() {
        let scenario = sim::scenario::parse(
            "sweep.toml",
            "name = \"s\"\nduration = \"2s\"\n[cluster]\npreset = \"scylla-2.2\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress mixed ratio(write=1,read=1) duration=2s -rate threads=8 -pop dist=uniform(1..5000)\"\n",
        )
        .unwrap();
        let axes = [axis("cluster.nodes=3,4"), axis("load[0].command=cassandra-stress write duration=2s -rate threads=8,cassandra-stress mixed ratio(write=1,read=1) duration=2s -rate threads=8 -pop dist=uniform(1..5000)")];
        assert_eq!(axes[1].values.len(), 2, "{:?}", axes[1].values);
        let points = grid(&axes, &[1, 2]);
        let run = |point: &Point| run_point(&scenario, &axes, point, SimDuration::ZERO).unwrap();
        let forward: Vec<Row> = points.iter().map(run).collect();
        let mut backward: Vec<(usize, Row)> = points
            .iter()
            .rev()
            .map(|point| (point.index, run(point)))
            .collect();
        backward.sort_by_key(|(index, _)| *index);
        let backward: Vec<Row> = backward.into_iter().map(|(_, row)| row).collect();
        assert_eq!(to_csv(&axes, &forward), to_csv(&axes, &backward));
        // The swept values reached the runs: the write-only command has no
        // reads, the mixed one has.
        assert!(forward[0].metric("read_p99_ms").is_none());
        assert!(forward[2].metric("read_p99_ms").is_some());
        assert_ne!(forward[0], forward[1], "seeds differ");
        assert!(forward.iter().all(|row| row.throughput_ops_per_s > 0.0));
    }
}
