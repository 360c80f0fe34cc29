//! `twin`: the command line. Thin on purpose: it parses flags, calls `sim`,
//! and prints; everything simulated lives in the library crates.

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use sim::bench_hold::{run_hold, HoldConfig};
use sim::overrides::Assignment;
use sim::plan::{resolve, RunOverrides};
use sim::report::{write_results_into, Summary};
use sim::sweep::{Runner, RunnerError};

mod device_cmd;
mod explore_cmd;
mod instance_cmd;
mod merge_cmd;
mod plan_cmd;
mod real_cmd;
mod regress_cmd;
mod sweep_cmd;
mod trace_cmd;
mod validate_cmd;

/// Exit code for bad input (scenario file, flags).
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for failures outside the simulation (e.g. cannot write results).
pub(crate) const EXIT_ENVIRONMENT: u8 = 1;

#[derive(Parser)]
#[command(
    name = "twin",
    version,
    about = "Deterministic discrete-event simulator and digital twin of a Scylla-style database cluster"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file and write a results folder.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Run seed (overrides the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Results folder (default: results/<scenario file name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Simulated time to run, e.g. 60s or 90m (overrides `duration`).
        #[arg(long)]
        duration: Option<String>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Set any scenario value, as the file would spell its key:
        /// `cluster.nodes=40`, `controller.compaction.points=[[0,50],[30,1000]]`,
        /// `load[0].command=...` (may repeat; applied in order).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Fingerprint the run's events into trace.json (a running hash,
        /// checkpointed every 65,536 events; `twin trace diff` compares two).
        #[arg(long)]
        trace: bool,
        /// Also write events FROM..TO (indices from 0, TO excluded) in full
        /// to trace-events.txt; implies --trace.
        #[arg(long, value_name = "FROM..TO")]
        trace_window: Option<String>,
    },
    /// Compare the event streams of two runs.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
    /// Run the validation cases and print the scorecard against the published runs.
    Validate(validate_cmd::ValidateArgs),
    /// Run a data-mode scenario under many seeds and check every run
    /// (exit 3: a checker failed; 4: a run crashed).
    Explore(explore_cmd::ExploreArgs),
    /// Run a scenario over every combination of some values
    /// (`--set KEY=V1,V2,...`) and seeds, in parallel; write sweep.csv,
    /// sweep.json and charts.
    Sweep(sweep_cmd::SweepArgs),
    /// Find the cheapest cluster (preset, instance type, node count) that
    /// meets a latency SLA at each target rate: capacity bounds, then
    /// simulation near the boundary; write plan.json, plan.csv and a chart.
    Plan(plan_cmd::PlanArgs),
    /// Merge the parts that `--shard I/N` runs wrote into the outputs one
    /// machine would have written.
    Merge(merge_cmd::MergeArgs),
    /// Run a scenario over several seeds and compare its figures with a
    /// stored baseline (exit 1: a figure regressed past its tolerance).
    Regress(regress_cmd::RegressArgs),
    /// Run a scenario's cassandra-stress loads for real against a CQL
    /// endpoint (Cassandra or Scylla) and write the same results folder as
    /// `twin run`, with the server's CPU, GC pauses and thread pools where
    /// it is local or exposes them.
    Real(real_cmd::RealArgs),
    /// Summarise a stored real measurement (validation/real/<date>, written
    /// by validation/real/measure.sh): per phase of validation/REAL.md, the
    /// median and min-max over the repeats of every figure, each marked
    /// fitted or predicted, and the calibration inputs (CPU per operation,
    /// G1's eden and pauses, bytes allocated per operation).
    Measured {
        /// The measurement's folder.
        dir: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The NVMe device model on its own: fio-like sweeps, presets.
    Device {
        #[command(subcommand)]
        command: device_cmd::DeviceCommand,
    },
    /// The instance catalog: CPUs, memory, drives, NICs, prices.
    Instance {
        #[command(subcommand)]
        command: instance_cmd::InstanceCommand,
    },
    /// Benchmarks of the simulator itself.
    Bench {
        #[command(subcommand)]
        bench: BenchCommand,
    },
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Where two runs' events part (exit 1) or that they are the same
    /// (exit 0), from their `twin run --trace` results; with both runs'
    /// `--trace-window` of the part, the first event that differs.
    Diff {
        /// The first run's results folder (or its trace.json).
        first: PathBuf,
        /// The second run's.
        second: PathBuf,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// The HOLD benchmark: the kernel against a bare BinaryHeap loop.
    Hold {
        /// Pending events (the queue size held constant).
        #[arg(long, default_value_t = 10_000)]
        pending: usize,
        /// Simulated seconds to run.
        #[arg(long, default_value_t = 2_000.0)]
        until: f64,
        /// Seed of the delay stream.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario and report the simulator's own speed and memory
    /// (nothing is written; the results are the same as `twin run`'s).
    Cluster {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Simulated time to run, e.g. 10s (overrides `duration`).
        #[arg(long)]
        duration: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Set any scenario value (`KEY=VALUE`, as `twin run --set`).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Also measure how much of the run could go in parallel: its
        /// events by logical process (node, client process) in windows of
        /// the network's lookahead, the speed-up a split over 1-64 threads
        /// would reach, the critical path (slower: each event is counted).
        #[arg(long)]
        parallelism: bool,
    },
    /// Events per client operation of every bundled benchmark against the
    /// committed baseline (scenarios/bench-events.json); fails when one
    /// takes more than 5% more. Run from the checkout's root.
    Events {
        /// Write this build's counts as the new baseline (say why in the
        /// commit).
        #[arg(long)]
        update: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            scenario,
            seed,
            out,
            duration,
            quiet,
            sets,
            trace,
            trace_window,
        } => match trace_cmd::options(trace, trace_window.as_deref()) {
            Ok(trace) => run(scenario, seed, out, duration, quiet, &sets, trace),
            Err(error) => {
                eprintln!("twin: {error}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
        },
        Command::Trace {
            command: TraceCommand::Diff { first, second },
        } => trace_cmd::diff(&first, &second),
        Command::Validate(args) => validate_cmd::run(args),
        Command::Explore(args) => explore_cmd::run(args),
        Command::Sweep(args) => sweep_cmd::run(args),
        Command::Regress(args) => regress_cmd::run(args),
        Command::Plan(args) => plan_cmd::run(args),
        Command::Merge(args) => merge_cmd::run(args),
        Command::Real(args) => real_cmd::run(args),
        Command::Measured { dir, json } => real_cmd::measured(&dir, json),
        Command::Device { command } => device_cmd::run(command),
        Command::Instance { command } => instance_cmd::run(command),
        Command::Bench {
            bench:
                BenchCommand::Hold {
                    pending,
                    until,
                    seed,
                    json,
                },
        } => bench_hold(pending, until, seed, json),
        Command::Bench {
            bench:
                BenchCommand::Cluster {
                    scenario,
                    duration,
                    json,
                    sets,
                    parallelism,
                },
        } => bench_cluster(scenario, duration, json, &sets, parallelism),
        Command::Bench {
            bench: BenchCommand::Events { update },
        } => bench_events(update),
    }
}

/// What `twin bench cluster --json` prints.
#[derive(serde::Serialize)]
struct ClusterBench {
    scenario: String,
    nodes: u32,
    /// Shards simulated (all of them unless the scenario samples).
    shards: u32,
    simulated_seconds: f64,
    wall_seconds: f64,
    events: u64,
    client_operations: u64,
    sim_seconds_per_wall_second: f64,
    events_per_wall_second: f64,
    client_ops_per_wall_second: f64,
    peak_rss_bytes: Option<u64>,
    /// Events per client operation, in all and by kind and category.
    events_per_op: f64,
    events_per_op_by_kind: std::collections::BTreeMap<&'static str, f64>,
    events_per_op_by_category: std::collections::BTreeMap<&'static str, f64>,
    /// With `--parallelism`: how much of the run could go in parallel.
    #[serde(skip_serializing_if = "Option::is_none")]
    parallelism: Option<sim::cluster::parallelism::ParallelismReport>,
}

/// Where the events go, per client operation: the categories, then the
/// kinds, most first.
fn events_text(report: &ClusterBench) -> String {
    let sorted = |map: &std::collections::BTreeMap<&'static str, f64>| {
        let mut rows: Vec<(&'static str, f64)> = map.iter().map(|(k, v)| (*k, *v)).collect();
        rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        rows
    };
    let mut out = format!(
        "  events per client operation        {:.2}\n  by category:",
        report.events_per_op
    );
    for (category, value) in sorted(&report.events_per_op_by_category) {
        out.push_str(&format!("\n    {category:<22} {value:>7.2}"));
    }
    out.push_str("\n  by kind:");
    for (kind, value) in sorted(&report.events_per_op_by_kind) {
        out.push_str(&format!("\n    {kind:<22} {value:>7.2}"));
    }
    out
}

/// The process's peak resident set (Linux `VmHWM`), if the system says.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The `--set` arguments, parsed; a bad one is printed.
pub(crate) fn parse_sets(sets: &[String]) -> Result<Vec<Assignment>, ExitCode> {
    sets.iter()
        .map(|set| Assignment::parse(set))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            eprintln!("twin: {error}");
            ExitCode::from(EXIT_BAD_INPUT)
        })
}

/// ` --set 'KEY=VALUE'` for each assignment, quoted for a POSIX shell.
pub(crate) fn sets_for_shell(sets: &[Assignment]) -> String {
    sets.iter()
        .map(|set| {
            let text = format!("{}={}", set.key, set.text);
            format!(" --set '{}'", text.replace('\'', "'\\''"))
        })
        .collect()
}

fn bench_cluster(
    path: PathBuf,
    duration: Option<String>,
    json: bool,
    sets: &[String],
    parallelism: bool,
) -> ExitCode {
    let sets = match parse_sets(sets) {
        Ok(sets) => sets,
        Err(code) => return code,
    };
    let duration = match duration
        .map(|text| units::parse_duration(&text))
        .transpose()
    {
        Ok(duration) => duration,
        Err(error) => {
            eprintln!("twin bench cluster: --duration: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let overrides = RunOverrides {
        seed: None,
        duration,
    };
    let plan = match sim::scenario::load_with(&path, &sets)
        .and_then(|scenario| resolve(&scenario, &overrides))
    {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("twin: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if !json {
        say(&plan.describe());
    }
    let (nodes, shards) = (
        plan.cluster.nodes,
        plan.cluster.nodes * plan.cluster.simulated_shards(),
    );
    let probes = sim::cluster::Probes {
        trace: None,
        parallelism,
    };
    let outcome = match sim::cluster::run_probed(plan, probes, &mut |_| {}) {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("twin: {}: {error}", path.display());
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let simulated_seconds = outcome.end.as_secs_f64();
    let wall = outcome.wall_seconds.max(1e-9);
    let operations: u64 = outcome.ops.iter().map(|ops| ops.count).sum();
    let per_op = |count: u64| count as f64 / operations.max(1) as f64;
    let counts = &outcome.event_counts;
    let report = ClusterBench {
        events_per_op: per_op(counts.total()),
        events_per_op_by_kind: counts
            .by_kind()
            .into_iter()
            .map(|(kind, count)| (kind, per_op(count)))
            .collect(),
        events_per_op_by_category: counts
            .by_category()
            .into_iter()
            .map(|(category, count)| (category, per_op(count)))
            .collect(),
        scenario: outcome.plan.scenario.clone(),
        nodes,
        shards,
        simulated_seconds,
        wall_seconds: outcome.wall_seconds,
        events: outcome.events,
        client_operations: operations,
        sim_seconds_per_wall_second: simulated_seconds / wall,
        events_per_wall_second: outcome.events as f64 / wall,
        client_ops_per_wall_second: operations as f64 / wall,
        peak_rss_bytes: peak_rss_bytes(),
        parallelism: outcome.parallelism.clone(),
    };
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => say(&text),
            Err(error) => {
                eprintln!("twin bench cluster: {error}");
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        }
    } else {
        say(&format!(
            "{}: {} nodes, {} shards, {:.1} simulated s in {:.1} wall s\n  simulated seconds per wall second  {:.2}\n  events per wall second             {:.0}\n  client operations per wall second  {:.0}\n  peak RSS                           {}",
            report.scenario,
            report.nodes,
            report.shards,
            report.simulated_seconds,
            report.wall_seconds,
            report.sim_seconds_per_wall_second,
            report.events_per_wall_second,
            report.client_ops_per_wall_second,
            report
                .peak_rss_bytes
                .map_or("unknown".to_string(), units::format_bytes),
        ));
        say(&events_text(&report));
        if let Some(parallelism) = &report.parallelism {
            say(&parallelism.text());
        }
    }
    ExitCode::SUCCESS
}

/// `twin bench events [--update]`.
fn bench_events(update: bool) -> ExitCode {
    let root = std::path::Path::new(".");
    let comparisons = match validation::bench_events::compare(root, &mut |scenario| {
        eprintln!("twin bench events: {scenario}");
    }) {
        Ok(comparisons) => comparisons,
        Err(error) => {
            eprintln!("twin bench events: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    say(validation::bench_events::comparison_text(&comparisons).trim_end());
    if update {
        let mut baseline = match validation::bench_events::load(root) {
            Ok(baseline) => baseline,
            Err(error) => {
                eprintln!("twin bench events: {error}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        };
        baseline.benchmarks = comparisons.into_iter().map(|c| c.now).collect();
        let path = root.join(validation::bench_events::BASELINE_FILE);
        let written = serde_json::to_string_pretty(&baseline)
            .map_err(|error| error.to_string())
            .and_then(|text| {
                sim::results_dir::write_whole(&path, (text + "\n").as_bytes())
                    .map_err(|error| error.to_string())
            });
        if let Err(error) = written {
            eprintln!("twin bench events: {}: {error}", path.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
        say(&format!("baseline written: {}", path.display()));
        return ExitCode::SUCCESS;
    }
    if comparisons.iter().any(|c| c.regressed()) {
        eprintln!("twin bench events: events per client operation grew by more than 5%; if that is meant, `twin bench events --update` and say why in the commit");
        return ExitCode::from(EXIT_ENVIRONMENT);
    }
    ExitCode::SUCCESS
}

fn run(
    path: PathBuf,
    seed: Option<u64>,
    out: Option<PathBuf>,
    duration: Option<String>,
    quiet: bool,
    sets: &[String],
    trace: Option<sim::trace::TraceOptions>,
) -> ExitCode {
    let sets = match parse_sets(sets) {
        Ok(sets) => sets,
        Err(code) => return code,
    };
    let duration = match duration
        .map(|text| units::parse_duration(&text))
        .transpose()
    {
        Ok(duration) => duration,
        Err(error) => {
            eprintln!("twin: --duration: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let overrides = RunOverrides { seed, duration };
    let plan = match sim::scenario::load_with(&path, &sets)
        .and_then(|scenario| resolve(&scenario, &overrides))
    {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("twin: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let out = out.unwrap_or_else(|| {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        PathBuf::from("results").join(stem)
    });
    // The folder the results are written into, beside `out`, made now:
    // an `out` that cannot be written fails before the simulation.
    let pending = match sim::results_dir::PendingResults::prepare(&out) {
        Ok(pending) => pending,
        Err(error) => {
            eprintln!("twin: cannot write results to {}: {error}", out.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
    };
    say(&plan.describe());
    say(&format!(
        "reproduce: twin run {} --seed {}{}",
        path.display(),
        plan.seed,
        sets_for_shell(&sets)
    ));
    for note in &plan.notes {
        say(&format!("note: {note}"));
    }
    let bar = progress_bar(&plan, quiet);
    let outcome = sim::cluster::run_traced(plan, trace, &mut |progress| {
        // A closed pipe (`| head`) must not kill the run: ignore write errors.
        let print = || {
            let mut stdout = std::io::stdout().lock();
            for line in &progress.lines {
                let _ = writeln!(stdout, "{line}");
            }
        };
        match &bar {
            Some(bar) => {
                bar.suspend(print);
                bar.set_position(progress.now.as_nanos() / 1_000_000);
                bar.set_message(format!(
                    "{} ops",
                    sim::report::group_thousands(progress.operations)
                ));
            }
            None => print(),
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("twin: {}: {error}", path.display());
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let summary: Summary = match write_results_into(pending, &outcome) {
        Ok(summary) => summary,
        Err(error) => {
            eprintln!("twin: cannot write results to {}: {error}", out.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
    };
    say(summary.to_stress_text().trim_end());
    say(&format!("results: {}", out.display()));
    // A data-mode run is judged as `twin explore` judges a seed, so that
    // the replay of a failing seed fails too.
    if outcome.consistency.is_some() {
        let mut broken = false;
        for check in sim::check::check(&outcome) {
            broken |= matches!(check.verdict, sim::check::Verdict::Broken(_));
            let label = check.verdict.label();
            say(&match check.verdict.detail() {
                Some(detail) => format!("check {}: {label}: {detail}", check.name),
                None => format!("check {}: {label}", check.name),
            });
        }
        if broken {
            return ExitCode::from(explore_cmd::EXIT_CHECKER_FAILED);
        }
    }
    ExitCode::SUCCESS
}

/// The runner of `twin <command>`'s simulations, in parallel across runs:
/// `jobs` at once (default: the machine's cores); a bad `--jobs` or a pool
/// that cannot start is reported.
fn runner(command: &str, jobs: Option<usize>) -> Result<Runner, ExitCode> {
    Runner::new(jobs).map_err(|error| match error {
        RunnerError::NoJobs => {
            eprintln!("twin {command}: --jobs must be at least 1");
            ExitCode::from(EXIT_BAD_INPUT)
        }
        RunnerError::Pool(error) => {
            eprintln!("twin {command}: {error}");
            ExitCode::from(EXIT_ENVIRONMENT)
        }
    })
}

/// Runs `work` on every item with `runner`, in parallel across items,
/// with a bar over them on stderr (`what` names them); the results keep
/// the items' order.
fn run_each<T: Sync, R: Send>(
    runner: &Runner,
    items: &[T],
    what: &str,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let bar = runs_progress(items.len() as u64, what);
    let results = runner.run_all(items, work, |_, _| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    results
}

/// A bar over `runs` simulations on stderr (`what` names them: cases,
/// seeds), when stderr is a terminal.
fn runs_progress(runs: u64, what: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(runs);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{pos}}/{{len}} [{{wide_bar}}] ({{elapsed}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}

/// Prints a line on stdout, ignoring a closed pipe (`twin run ... | head`).
pub(crate) fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn progress_bar(plan: &sim::cluster::RunPlan, quiet: bool) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = match plan.duration {
        Some(duration) => ProgressBar::new(duration.as_nanos() / 1_000_000),
        None => ProgressBar::new_spinner(),
    };
    let style = ProgressStyle::with_template(
        "{spinner} simulated {pos}/{len} ms [{wide_bar}] {msg} ({elapsed})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    Some(bar)
}

fn bench_hold(pending: usize, until: f64, seed: u64, json: bool) -> ExitCode {
    if pending == 0 || !(until.is_finite() && until > 0.0) {
        eprintln!("twin bench hold: --pending must be at least 1 and --until a positive number of seconds");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let report = run_hold(&HoldConfig {
        pending,
        until_seconds: until,
        seed,
    });
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(error) => {
                eprintln!("twin bench hold: {error}");
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        }
    } else {
        print!("{}", report.to_text());
    }
    ExitCode::SUCCESS
}
