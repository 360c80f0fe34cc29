//! `twin sweep`: a scenario over the grid of every combination of some
//! `--set KEY=V1,V2,...` values and seeds, run in parallel across runs
//! (`validation::sweep` does the work), written as `sweep.csv`,
//! `sweep.json` and charts of chosen metrics against a swept key.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use validation::sweep::{grid, run_point, write, Axis, Point, Row, METRICS};

use crate::{run_each, runner, say, EXIT_BAD_INPUT, EXIT_ENVIRONMENT};

/// `twin sweep` flags.
#[derive(Args)]
pub struct SweepArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// A swept key and its values, `KEY=V1,V2,...` (commas inside brackets,
    /// parentheses and quotes do not split); one value sets the key for
    /// every run. May repeat: the grid is every combination.
    #[arg(long = "set", value_name = "KEY=V1,V2,...")]
    sets: Vec<String>,
    /// Seeds per point of the grid (consecutive, from --first-seed).
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// The first seed (default: the scenario's `seed`, else 1).
    #[arg(long)]
    first_seed: Option<u64>,
    /// Simulated time at the start left out of the figures, e.g. 10s.
    #[arg(long)]
    warmup: Option<String>,
    /// Metrics to chart against the first swept key (or --x), comma
    /// separated, from the columns of sweep.csv.
    #[arg(long, default_value = "throughput_ops_per_s,read_p99_ms,write_p99_ms")]
    chart: String,
    /// The swept key the charts put on the x axis (default: the first).
    #[arg(long)]
    x: Option<String>,
    /// Results folder (default: results/sweep-<scenario file name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Runs at once (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only slice I of N of the runs and write a part for `twin
    /// merge` into --out.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
}

/// What a sweep's outputs need besides its rows (a part's header).
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    scenario: String,
    axes: Vec<Axis>,
    seeds: Vec<u64>,
    warmup_ns: u64,
    charts: Vec<String>,
    x: usize,
    /// The results folder of the one-machine run (where a merge writes).
    out: PathBuf,
}

pub fn run(args: SweepArgs) -> ExitCode {
    let bad = |message: String| {
        eprintln!("twin sweep: {message}");
        ExitCode::from(EXIT_BAD_INPUT)
    };
    let scenario = match sim::scenario::load(&args.scenario) {
        Ok(scenario) => scenario,
        Err(error) => return bad(error.to_string()),
    };
    let axes = match args
        .sets
        .iter()
        .map(|text| Axis::parse(text))
        .collect::<Result<Vec<Axis>, _>>()
    {
        Ok(axes) => axes,
        Err(error) => return bad(error.to_string()),
    };
    if let Some(twice) = axes
        .iter()
        .enumerate()
        .find(|(i, axis)| axes[..*i].iter().any(|other| other.key == axis.key))
    {
        return bad(format!(
            "--set {}: the key is swept twice; give its values in one --set",
            twice.1.key
        ));
    }
    if args.seeds == 0 {
        return bad("--seeds must be at least 1".into());
    }
    let warmup = match args
        .warmup
        .as_deref()
        .map(units::parse_duration)
        .transpose()
    {
        Ok(warmup) => warmup.unwrap_or(units::SimDuration::ZERO),
        Err(error) => return bad(format!("--warmup: {error}")),
    };
    let charts: Vec<String> = args
        .chart
        .split(',')
        .map(|metric| metric.trim().to_string())
        .filter(|metric| !metric.is_empty())
        .collect();
    if let Some(unknown) = charts
        .iter()
        .find(|metric| !METRICS.contains(&metric.as_str()))
    {
        return bad(format!(
            "--chart {unknown}: not a metric; the metrics are {}",
            METRICS.join(", ")
        ));
    }
    let x = match &args.x {
        None => 0,
        Some(key) => match axes.iter().position(|axis| &axis.key == key) {
            Some(index) => index,
            None => return bad(format!("--x {key}: not a swept key (--set {key}=...)")),
        },
    };
    let first = args.first_seed.or(scenario.seed).unwrap_or(1);
    let seeds: Vec<u64> = (0..args.seeds).map(|i| first.saturating_add(i)).collect();
    let points = grid(&axes, &seeds);
    // Every point must make a valid scenario before any runs.
    for point in &points {
        if let Err(error) = validation::sweep::scenario_of(&scenario, &axes, point)
            .and_then(|s| sim::plan::resolve(&s, &sim::plan::RunOverrides::default()))
        {
            return bad(error.to_string());
        }
    }
    let shard = match crate::merge_cmd::shard_arg("sweep", args.shard.as_deref()) {
        Ok(shard) => shard,
        Err(code) => return code,
    };
    let runner = match runner("sweep", args.jobs) {
        Ok(runner) => runner,
        Err(code) => return code,
    };
    let jobs = runner.jobs();
    let stem = args
        .scenario
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    let default_out = PathBuf::from("results").join(format!("sweep-{stem}"));
    let out = args.out.clone().unwrap_or_else(|| default_out.clone());
    let mine: Vec<&Point> = points
        .iter()
        .filter(|point| shard.is_none_or(|shard| shard.owns(point.index)))
        .collect();
    say(&format!(
        "twin sweep: {}, {} point(s) x {} seed(s) = {} runs{}, {jobs} at once",
        args.scenario.display(),
        points.len() / seeds.len(),
        seeds.len(),
        points.len(),
        shard.map_or(String::new(), |s| format!(" ({} in shard {s})", mine.len()))
    ));
    let rows: Vec<Result<Row, String>> = run_each(&runner, &mine, "runs", |point| {
        run_point(&scenario, &axes, point, warmup).map_err(|error| error.to_string())
    });
    let rows = match rows.into_iter().collect::<Result<Vec<Row>, String>>() {
        Ok(rows) => rows,
        Err(error) => return bad(error),
    };
    if axes.is_empty() && !charts.is_empty() {
        say("no swept key: no chart (give --set KEY=V1,V2,...)");
    }
    let charted: Vec<String> = if axes.is_empty() { Vec::new() } else { charts };
    let header = Header {
        scenario: scenario.name.clone(),
        axes,
        seeds,
        warmup_ns: warmup.as_nanos(),
        charts: charted,
        x,
        out: default_out,
    };
    if let Some(shard) = shard {
        let items: Vec<(usize, Row)> = mine.iter().map(|point| point.index).zip(rows).collect();
        return crate::merge_cmd::write_part("sweep", shard, points.len(), &header, items, &out);
    }
    finish(&header, &rows, &out)
}

/// `twin merge` of a sweep's parts: each item is a run's row.
pub fn merge(
    header: serde_json::Value,
    items: Vec<serde_json::Value>,
    out: Option<PathBuf>,
) -> Result<ExitCode, String> {
    let header: Header = crate::merge_cmd::from_value(header, "header")?;
    let rows: Vec<Row> = crate::merge_cmd::items_as(items, "row")?;
    let out = out.unwrap_or_else(|| header.out.clone());
    Ok(finish(&header, &rows, &out))
}

/// Writes a sweep's outputs and prints its table (a one-machine sweep, or
/// `twin merge` of its parts).
fn finish(header: &Header, rows: &[Row], out: &std::path::Path) -> ExitCode {
    if let Err(error) = write(
        out,
        &header.scenario,
        &header.axes,
        &header.seeds,
        units::SimDuration::from_nanos(header.warmup_ns),
        rows,
        &header.charts,
        header.x,
    ) {
        eprintln!("twin sweep: {}: {error}", out.display());
        return ExitCode::from(EXIT_ENVIRONMENT);
    }
    print_table(&header.axes, rows);
    say(&format!("results: {}", out.display()));
    ExitCode::SUCCESS
}

/// One line per run: the swept values, the seed, throughput and p99s.
fn print_table(axes: &[Axis], rows: &[Row]) {
    let mut header: Vec<String> = axes.iter().map(|axis| axis.key.clone()).collect();
    header.extend(
        ["seed", "ops/s", "read p99 ms", "write p99 ms", "load %"]
            .iter()
            .map(|name| name.to_string()),
    );
    let cell = |value: Option<f64>| value.map_or("-".to_string(), |v| format!("{v}"));
    let mut lines: Vec<Vec<String>> = vec![header];
    for row in rows {
        let mut line = row.values.clone();
        line.push(row.seed.to_string());
        line.push(format!("{:.0}", row.throughput_ops_per_s));
        line.push(cell(row.metric("read_p99_ms")));
        line.push(cell(row.metric("write_p99_ms")));
        line.push(cell(row.server_load_pct));
        lines.push(line);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|column| {
            lines
                .iter()
                .map(|line| line[column].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect();
        say(&cells.join("  "));
    }
}
