//! `twin explore`: runs one data-mode scenario under many seeds in
//! parallel across runs, checks every run with `sim::explore`'s checkers,
//! and prints a table of seeds and verdicts with, for each failure, the
//! `twin run` command that replays it byte for byte.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use sim::explore::{explorable, run_seed, SeedReport, Verdict};

use crate::{run_each, run_pool, say, EXIT_BAD_INPUT};

/// Exit code when a checker found its property broken.
const EXIT_CHECKER_FAILED: u8 = 3;
/// Exit code when a run crashed (panicked); takes precedence over 3.
const EXIT_CRASHED: u8 = 4;

/// `twin explore` flags.
#[derive(Args)]
pub struct ExploreArgs {
    /// The scenario file (TOML), in data mode; `[faults.random]` draws each
    /// seed's faults, `[actions.random]` its topology operations.
    scenario: PathBuf,
    /// How many seeds to run.
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// The first seed (the seeds are consecutive from it).
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Runs at once (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Set any scenario value (`KEY=VALUE`, as `twin run --set`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Run only slice I of N of the seeds and write a part for `twin
    /// merge` into --out.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// With --shard: the folder the part goes to.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What an explore's report needs besides the seeds' (a part's header).
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    /// The scenario as given on the command line.
    scenario: String,
    /// ` --set '...'` for the replay lines.
    sets: String,
}

pub fn run(args: ExploreArgs) -> ExitCode {
    let sets = match crate::parse_sets(&args.sets) {
        Ok(sets) => sets,
        Err(code) => return code,
    };
    let scenario = match sim::scenario::load_with(&args.scenario, &sets) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("twin: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if let Err(error) = explorable(&scenario) {
        eprintln!("twin: {error}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    if args.seeds == 0 {
        eprintln!("twin explore: --seeds must be at least 1");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let shard = match crate::merge_cmd::shard_arg("explore", args.shard.as_deref()) {
        Ok(shard) => shard,
        Err(code) => return code,
    };
    let out = match (&shard, &args.out) {
        (Some(_), Some(out)) => Some(out.clone()),
        (Some(_), None) => {
            eprintln!("twin explore: --shard writes a part: give the folder with --out");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        (None, Some(_)) => {
            eprintln!("twin explore: --out is where --shard writes its part; without --shard the report is printed");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        (None, None) => None,
    };
    let (pool, jobs) = match run_pool("explore", args.jobs) {
        Ok(pool) => pool,
        Err(code) => return code,
    };
    let last = args.first_seed.saturating_add(args.seeds - 1);
    let all: Vec<u64> = (args.first_seed..=last).collect();
    let mine: Vec<(usize, u64)> = all
        .iter()
        .copied()
        .enumerate()
        .filter(|(index, _)| shard.is_none_or(|shard| shard.owns(*index)))
        .collect();
    say(&format!(
        "twin explore: {}, seeds {}..={last}{}, {jobs} at once",
        args.scenario.display(),
        args.first_seed,
        shard.map_or(String::new(), |s| format!(" ({} in shard {s})", mine.len()))
    ));
    // A crashing run's panic message is reported in the table; the default
    // hook would print it again, out of order, from its thread.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let reports: Vec<Result<SeedReport, String>> = run_each(&pool, &mine, "seeds", |&(_, seed)| {
        run_seed(&scenario, seed, &|_| {}).map_err(|e| e.to_string())
    });
    std::panic::set_hook(hook);
    let mut done = Vec::with_capacity(reports.len());
    for report in reports {
        match report {
            Ok(report) => done.push(report),
            Err(error) => {
                eprintln!("twin: {error}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        }
    }
    let header = Header {
        scenario: args.scenario.display().to_string(),
        sets: crate::sets_for_shell(&sets),
    };
    if let (Some(shard), Some(out)) = (shard, out) {
        let items: Vec<(usize, SeedReport)> =
            mine.iter().map(|(index, _)| *index).zip(done).collect();
        return crate::merge_cmd::write_part("explore", shard, all.len(), &header, items, &out);
    }
    finish(&header, &done)
}

/// `twin merge` of an explore's parts: each item is a seed's report.
pub fn merge(header: serde_json::Value, items: Vec<serde_json::Value>) -> Result<ExitCode, String> {
    let header: Header = crate::merge_cmd::from_value(header, "header")?;
    let reports: Vec<SeedReport> = crate::merge_cmd::items_as(items, "seed report")?;
    Ok(finish(&header, &reports))
}

/// Prints the table and the failures, and picks the exit code (a
/// one-machine explore, or `twin merge` of its parts).
fn finish(header: &Header, done: &[SeedReport]) -> ExitCode {
    print_table(done);
    let crashed: Vec<&SeedReport> = done.iter().filter(|r| r.crash.is_some()).collect();
    let failed: Vec<&SeedReport> = done.iter().filter(|r| r.failed()).collect();
    say(&format!(
        "{} seeds: {} passed, {} with a checker failure, {} crashed",
        done.len(),
        done.len() - crashed.len() - failed.len(),
        failed.len(),
        crashed.len()
    ));
    for report in failed.iter().chain(&crashed) {
        say(&format!("seed {}:", report.seed));
        if let Some(crash) = &report.crash {
            say(&format!("  crashed: {crash}"));
        }
        for check in &report.checks {
            if let Verdict::Broken(what) = &check.verdict {
                say(&format!("  {}: {what}", check.name));
            }
        }
        say(&format!(
            "  replay: twin run {} --seed {}{}",
            header.scenario, report.seed, header.sets
        ));
    }
    if !crashed.is_empty() {
        ExitCode::from(EXIT_CRASHED)
    } else if !failed.is_empty() {
        ExitCode::from(EXIT_CHECKER_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// One line per seed: its faults and each checker's verdict.
fn print_table(reports: &[SeedReport]) {
    let names: Vec<&str> = reports
        .iter()
        .find(|report| !report.checks.is_empty())
        .map(|report| {
            report
                .checks
                .iter()
                .map(|check| check.name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut header = format!("{:>8} {:>6} {:>7}", "seed", "faults", "actions");
    for name in &names {
        header.push_str(&format!("  {name:<34}"));
    }
    say(&header);
    for report in reports {
        let mut line = format!(
            "{:>8} {:>6} {:>7}",
            report.seed, report.faults, report.actions
        );
        if report.crash.is_some() {
            line.push_str("  CRASHED");
        }
        for check in &report.checks {
            let verdict = match &check.verdict {
                Verdict::Held => "held",
                Verdict::Broken(_) => "BROKEN",
                Verdict::NotApplicable(_) => "n/a",
            };
            line.push_str(&format!("  {verdict:<34}"));
        }
        say(line.trim_end());
    }
    // Why a checker did not apply, once per reason.
    let mut reasons: Vec<(&str, &str)> = reports
        .iter()
        .flat_map(|report| {
            report
                .checks
                .iter()
                .filter_map(|check| match &check.verdict {
                    Verdict::NotApplicable(why) => Some((check.name.as_str(), why.as_str())),
                    _ => None,
                })
        })
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    for (name, why) in reasons {
        say(&format!("n/a: {name}: {why}"));
    }
}
