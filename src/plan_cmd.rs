//! `twin plan`: the cheapest cluster meeting a latency SLA for a workload
//! at each target rate (`validation::plan` does the work): capacity bounds
//! first, then simulation of the node counts near the boundary, in
//! parallel across chains (a base scenario, a preset and an instance type
//! each); `plan.json`, `plan.csv` and a cost chart.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use validation::plan::{
    format_rate, parse_rate, parse_sla, run_chain, PlanError, PlanReport, PlanRow, PlanSpec,
    RunEvent,
};

use crate::{runner, say, EXIT_BAD_INPUT, EXIT_ENVIRONMENT};

/// `twin plan` flags.
#[derive(Args)]
pub struct PlanArgs {
    /// Scenario files (TOML) whose loads and data are the workload; each
    /// is planned with its own preset unless --preset is given. Without
    /// one, --command, --partitions and --row-bytes describe the workload.
    scenarios: Vec<PathBuf>,
    /// The workload as a cassandra-stress command line (with a -rate
    /// limit=, throttle= or fixed= that the plan scales to each target),
    /// instead of a scenario's loads.
    #[arg(long)]
    command: Option<String>,
    /// c-s processes running --command (default 1).
    #[arg(long)]
    processes: Option<u32>,
    /// With --command and no scenario: partitions already in the table
    /// (e.g. 1e9), read from disk in volume mode.
    #[arg(long)]
    partitions: Option<f64>,
    /// With --partitions: bytes each partition takes on disk (e.g. 1KB).
    #[arg(long)]
    row_bytes: Option<String>,
    /// With --command and no scenario: the replication factor (default 3).
    #[arg(long)]
    rf: Option<u32>,
    /// The SLA every candidate must meet, e.g. "read.p99<10ms,write.p99<10ms".
    #[arg(long)]
    sla: String,
    /// Target rates in operations per second, comma separated (e.g.
    /// 300K,200K,100K); each gets its own answer.
    #[arg(long)]
    rate: String,
    /// Software presets, comma separated (default: each scenario's).
    #[arg(long)]
    preset: Option<String>,
    /// Candidate instance types, comma separated (`twin instance list`).
    #[arg(long)]
    instances: String,
    /// Node counts to consider, e.g. 3..40 (inclusive).
    #[arg(long, default_value = "3..40")]
    nodes: String,
    /// Also require the SLA with one node crashed at the start of the run.
    #[arg(long)]
    one_node_down: bool,
    /// Mean time between failures of a node in days, for the PCDF.
    #[arg(long, default_value_t = 730.0)]
    mtbf_days: f64,
    /// Mean time to repair a node in days, for the PCDF.
    #[arg(long, default_value_t = 1.0)]
    mttr_days: f64,
    /// Simulated time per run, e.g. 30s (default: the scenario's).
    #[arg(long)]
    duration: Option<String>,
    /// Simulated time at the start of each run left out of the figures.
    #[arg(long)]
    warmup: Option<String>,
    /// Run seed (default: the first scenario's `seed`, else 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Set any scenario value (`KEY=VALUE`, as `twin run --set`), applied
    /// to every base scenario.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Results folder (default: results/plan-<first scenario file name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Chains at once (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Evaluate only slice I of N of the chains and write a part for
    /// `twin merge` (into --out).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
}

/// Everything a plan needs, checked.
struct Checked {
    spec: PlanSpec,
    sets: Vec<String>,
    /// Where the one-machine run writes (--out, else its default).
    out: PathBuf,
    /// The default results folder, which `twin merge` writes to.
    default_out: PathBuf,
}

/// A plan part's header: the inputs, and where the merge writes.
#[derive(serde::Serialize, serde::Deserialize)]
struct PartHeader {
    plan: PlanReport,
    out: PathBuf,
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

/// The base scenario built from --command when no scenario file is given.
fn command_scenario(args: &PlanArgs, command: &str) -> Result<sim::scenario::Scenario, String> {
    let preset = args
        .preset
        .as_deref()
        .map(list)
        .and_then(|presets| presets.into_iter().next())
        .ok_or("--command without a scenario needs --preset")?;
    let instance = list(&args.instances)
        .into_iter()
        .next()
        .ok_or("--instances: no instance type given")?;
    // A JSON string is a TOML basic string.
    let quote = |text: &str| serde_json::Value::String(text.to_string()).to_string();
    let mut text = format!(
        "name = \"plan\"\nduration = \"30s\"\n\n[cluster]\npreset = {}\nnodes = 3\ninstance = {}\n",
        quote(&preset),
        quote(&instance)
    );
    match (args.partitions, &args.row_bytes) {
        (Some(partitions), Some(row_bytes)) => text.push_str(&format!(
            "\n[data]\npartitions = {partitions:e}\nrow_bytes = {}\nreplication_factor = {}\n",
            quote(row_bytes),
            args.rf.unwrap_or(3)
        )),
        (None, None) => {}
        _ => return Err("--partitions and --row-bytes go together".into()),
    }
    text.push_str(&format!(
        "\n[[load]]\nname = \"workload\"\nprocesses = {}\ncommand = {}\n",
        args.processes.unwrap_or(1),
        quote(command)
    ));
    sim::scenario::parse("--command", &text).map_err(|error| error.to_string())
}

fn check(args: &PlanArgs) -> Result<Checked, String> {
    let sets = crate::parse_sets(&args.sets).map_err(|_| String::new())?;
    let mut scenarios = Vec::new();
    for path in &args.scenarios {
        let mut scenario =
            sim::scenario::load_with(path, &sets).map_err(|error| error.to_string())?;
        if let Some(command) = &args.command {
            let mut replace = vec![sim::overrides::Assignment::new("load[0].command", command)
                .map_err(|error| error.to_string())?];
            if let Some(processes) = args.processes {
                replace.push(
                    sim::overrides::Assignment::new("load[0].processes", &processes.to_string())
                        .map_err(|error| error.to_string())?,
                );
            }
            scenario = sim::scenario::with_sets(&scenario, &replace)
                .map_err(|error| format!("--command: {error}"))?;
        }
        scenarios.push(scenario);
    }
    if scenarios.is_empty() {
        let command = args
            .command
            .as_deref()
            .ok_or("give a scenario file, or the workload as --command 'cassandra-stress ...'")?;
        let scenario = command_scenario(args, command)?;
        scenarios.push(sim::scenario::with_sets(&scenario, &sets).map_err(|e| e.to_string())?);
    } else if args.partitions.is_some() || args.row_bytes.is_some() || args.rf.is_some() {
        return Err(
            "--partitions, --row-bytes and --rf describe the data without a scenario; with one, use --set data.partitions=... instead"
                .into(),
        );
    }
    let sla = parse_sla(&args.sla).map_err(|error| error.to_string())?;
    let mut targets = list(&args.rate)
        .iter()
        .map(|rate| parse_rate(rate))
        .collect::<Result<Vec<f64>, _>>()
        .map_err(|error| error.to_string())?;
    if targets.is_empty() {
        return Err("--rate: no target given; e.g. --rate 300K,100K".into());
    }
    targets.sort_by(|a, b| b.total_cmp(a));
    targets.dedup();
    let presets = args.preset.as_deref().map(list).unwrap_or_default();
    for preset in &presets {
        if sim::preset::Preset::from_name(preset).is_none() {
            return Err(format!(
                "--preset {preset}: not a preset; the presets are {}",
                sim::preset::Preset::names()
            ));
        }
    }
    let instances = list(&args.instances);
    if instances.is_empty() {
        return Err("--instances: no instance type given".into());
    }
    for instance in &instances {
        if models::instance::by_name(instance).is_none() {
            return Err(format!(
                "--instances {instance}: not in the catalog; the instances are {}",
                models::instance::names().join(", ")
            ));
        }
    }
    let nodes = args
        .nodes
        .split_once("..")
        .and_then(|(a, b)| Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?)))
        .filter(|(a, b)| *a >= 1 && a <= b)
        .ok_or_else(|| format!("--nodes {}: expected a range such as 3..40", args.nodes))?;
    let duration = args
        .duration
        .as_deref()
        .map(units::parse_duration)
        .transpose()
        .map_err(|error| format!("--duration: {error}"))?;
    let warmup = args
        .warmup
        .as_deref()
        .map(units::parse_duration)
        .transpose()
        .map_err(|error| format!("--warmup: {error}"))?
        .unwrap_or(units::SimDuration::ZERO);
    for (name, value) in [
        ("--mtbf-days", args.mtbf_days),
        ("--mttr-days", args.mttr_days),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(format!("{name} must be a positive number of days"));
        }
    }
    let seed = args.seed.or(scenarios[0].seed).unwrap_or(1);
    let spec = PlanSpec {
        scenarios,
        presets,
        instances,
        nodes,
        targets,
        sla,
        seed,
        duration,
        warmup,
        one_node_down: args.one_node_down,
        mtbf_days: args.mtbf_days,
        mttr_days: args.mttr_days,
    };
    // Every base scenario must pace its loads, at every target, for the
    // whole of each run.
    for scenario in &spec.scenarios {
        validation::plan::check_loads_cover_runs(&spec, scenario)
            .map_err(|error| error.to_string())?;
        for &target in &spec.targets {
            PlanSpec::rate_sets(scenario, target).map_err(|error| error.to_string())?;
        }
    }
    let stem = args
        .scenarios
        .first()
        .and_then(|path| path.file_stem())
        .map_or_else(|| "command".into(), |s| s.to_string_lossy().into_owned());
    let default_out = PathBuf::from("results").join(format!("plan-{stem}"));
    Ok(Checked {
        spec,
        sets: args.sets.clone(),
        out: args.out.clone().unwrap_or_else(|| default_out.clone()),
        default_out,
    })
}

#[allow(clippy::disallowed_methods)] // wall time for the progress lines only
pub fn run(args: PlanArgs) -> ExitCode {
    let checked = match check(&args) {
        Ok(checked) => checked,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("twin plan: {message}");
            }
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let shard = match crate::merge_cmd::shard_arg("plan", args.shard.as_deref()) {
        Ok(shard) => shard,
        Err(code) => return code,
    };
    let runner = match runner("plan", args.jobs) {
        Ok(runner) => runner,
        Err(code) => return code,
    };
    let jobs = runner.jobs();
    let spec = &checked.spec;
    let chains = spec.chains();
    let mine: Vec<usize> = (0..chains.len())
        .filter(|index| shard.is_none_or(|shard| shard.owns(*index)))
        .collect();
    say(&format!(
        "twin plan: {} chain(s) (scenario x preset x instance){}, nodes {}..{}, targets {}, SLA {}, {jobs} at once",
        mine.len(),
        shard.map_or(String::new(), |s| format!(" of {} in shard {s}", chains.len())),
        spec.nodes.0,
        spec.nodes.1,
        spec.targets
            .iter()
            .map(|t| format_rate(*t))
            .collect::<Vec<_>>()
            .join(", "),
        spec.sla
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} simulated candidates {pos}/{len} [{wide_bar}] ({elapsed})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        bar
    });
    let on_run = |event: RunEvent| {
        if let Some(bar) = &bar {
            match event {
                RunEvent::Started => bar.inc_length(1),
                RunEvent::Finished => bar.inc(1),
            }
        }
    };
    let results: Vec<Result<Vec<PlanRow>, PlanError>> = runner.run_all(
        &mine,
        |&index| {
            let chain = &chains[index];
            let started = std::time::Instant::now();
            let rows = run_chain(spec, chain, &on_run);
            if bar.is_none() {
                // No terminal (a batch job's log): a line per
                // chain instead of the bar.
                eprintln!(
                    "twin plan: {} / {} / {} done in {:.0} s ({})",
                    spec.scenarios[chain.scenario].name,
                    chain.preset,
                    chain.instance,
                    started.elapsed().as_secs_f64(),
                    match &rows {
                        Ok(rows) => format!(
                            "{} node count(s) simulated",
                            rows.iter().filter(|row| row.status == "simulated").count()
                        ),
                        Err(_) => "failed".into(),
                    }
                );
            }
            rows
        },
        |_, _| {},
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut chain_rows = Vec::with_capacity(results.len());
    for (index, result) in mine.iter().zip(results) {
        match result {
            Ok(rows) => chain_rows.push((*index, rows)),
            Err(error) => {
                eprintln!("twin plan: {error}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        }
    }
    let header = PlanReport::header(spec, checked.sets.clone());
    if let Some(shard) = shard {
        let header = PartHeader {
            plan: header,
            out: checked.default_out.clone(),
        };
        return crate::merge_cmd::write_part(
            "plan",
            shard,
            chains.len(),
            &header,
            chain_rows,
            &checked.out,
        );
    }
    let rows = chain_rows.into_iter().flat_map(|(_, rows)| rows).collect();
    finish(header.with_rows(rows), &checked.out)
}

/// `twin merge` of a plan's parts: each item is a chain's rows.
pub fn merge(
    header: serde_json::Value,
    items: Vec<serde_json::Value>,
    out: Option<PathBuf>,
) -> Result<ExitCode, String> {
    let header: PartHeader = crate::merge_cmd::from_value(header, "header")?;
    let chains: Vec<Vec<PlanRow>> = crate::merge_cmd::items_as(items, "chain")?;
    let rows = chains.into_iter().flatten().collect();
    Ok(finish(
        header.plan.with_rows(rows),
        &out.unwrap_or(header.out),
    ))
}

/// Writes a plan's outputs and prints its table (a one-machine plan, or
/// `twin merge` of its parts).
pub fn finish(report: PlanReport, out: &std::path::Path) -> ExitCode {
    if let Err(error) = report.write(out) {
        eprintln!("twin plan: {}: {error}", out.display());
        return ExitCode::from(EXIT_ENVIRONMENT);
    }
    print_table(&report);
    say(&format!("results: {}", out.display()));
    ExitCode::SUCCESS
}

/// The ranked rows, then the answer per target and preset.
fn print_table(report: &PlanReport) {
    let mut lines: Vec<Vec<String>> = vec![[
        "preset",
        "instance",
        "nodes",
        "status",
        "target",
        "read p99",
        "write p99",
        "load %",
        "disk %",
        "$/yr 1y-RI",
        "$/yr on-demand",
        "PCDF %",
        "verdict",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    let money = |value: Option<f64>| value.map_or("-".into(), |v| format!("{v:.0}"));
    let ms = |value: Option<f64>| value.map_or("-".into(), |v| format!("{v:.2}"));
    for row in &report.rows {
        let nodes = if row.nodes_to == row.nodes {
            row.nodes.to_string()
        } else {
            format!("{}-{}", row.nodes, row.nodes_to)
        };
        let base = vec![
            row.preset.clone(),
            row.instance.clone(),
            nodes,
            row.status.clone(),
        ];
        let tail = vec![
            row.disk_fill_pct.map_or("-".into(), |v| format!("{v:.0}")),
            money(row.reserved_1y_usd_per_year),
            money(row.on_demand_usd_per_year),
            format!("{:.2}", row.pcdf_pct),
        ];
        if row.runs.is_empty() {
            let mut line = base.clone();
            line.extend(["-", "-", "-", "-"].iter().map(|s| s.to_string()));
            line.extend(tail.clone());
            line.push(row.reason.clone().unwrap_or_default());
            lines.push(line);
        }
        for run in &row.runs {
            let mut line = base.clone();
            line.push(format!(
                "{}{}",
                format_rate(run.target_ops_per_s),
                if run.one_node_down { " (1 down)" } else { "" }
            ));
            line.push(ms(run.read_p99_ms));
            line.push(ms(run.write_p99_ms));
            line.push(
                run.server_load_pct
                    .map_or("-".into(), |v| format!("{v:.0}")),
            );
            line.extend(tail.clone());
            line.push(if run.meets_sla {
                "meets".into()
            } else {
                format!("misses: {}", run.missed.join("; "))
            });
            lines.push(line);
        }
    }
    let widths: Vec<usize> = (0..lines[0].len() - 1)
        .map(|column| {
            lines
                .iter()
                .map(|line| line[column].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in &lines {
        let mut cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect();
        cells.push(line[line.len() - 1].clone());
        say(cells.join("  ").trim_end());
    }
    say("");
    for answer in &report.answers {
        let what = match (&answer.instance, answer.nodes) {
            (Some(instance), Some(nodes)) => format!(
                "{nodes} x {instance}, {} per year 1-year reserved ({} on demand), PCDF {:.2}%",
                answer
                    .reserved_1y_usd_per_year
                    .map_or("-".into(), |v| format!("${v:.0}")),
                answer
                    .on_demand_usd_per_year
                    .map_or("-".into(), |v| format!("${v:.0}")),
                answer.pcdf_pct.unwrap_or(0.0)
            ),
            _ => format!(
                "no candidate in {}..{} nodes meets the SLA",
                report.nodes.0, report.nodes.1
            ),
        };
        say(&format!(
            "at {}: {}: {what}",
            format_rate(answer.target_ops_per_s),
            answer.preset
        ));
    }
}
