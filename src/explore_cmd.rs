//! `twin explore`: runs one data-mode scenario under many seeds in
//! parallel across runs, checks every run with `sim::check`'s checkers,
//! and prints a table of seeds and verdicts with, for each failure, the
//! `twin run` command that replays it byte for byte.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use sim::check::Verdict;
use sim::explore::{explorable, run_seed, SeedReport};

use crate::{run_each, runner, say, EXIT_BAD_INPUT};

/// Exit code when a checker found its property broken.
pub(crate) const EXIT_CHECKER_FAILED: u8 = 3;
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

impl Header {
    /// The command that replays `seed` byte for byte.
    fn replay(&self, seed: u64) -> String {
        format!("twin run {} --seed {seed}{}", self.scenario, self.sets)
    }
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
    let runner = match runner("explore", args.jobs) {
        Ok(runner) => runner,
        Err(code) => return code,
    };
    let jobs = runner.jobs();
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
    // The table's rows go out in seed order as soon as they are ready (an
    // interrupted explore has printed what it found), and a failing seed
    // is told on stderr the moment it fails, with its replay line.
    let header = Header {
        scenario: args.scenario.display().to_string(),
        sets: crate::sets_for_shell(&sets),
    };
    let streaming = shard.is_none();
    if streaming {
        say(&table_header());
    }
    let ready = std::sync::Mutex::new((0usize, std::collections::BTreeMap::new()));
    let reports: Vec<Result<SeedReport, String>> =
        run_each(&runner, &mine, "seeds", |&(index, seed)| {
            let report = run_seed(&scenario, seed, &|_| {}).map_err(|e| e.to_string());
            if let Ok(report) = &report {
                if report.failed() || report.crash.is_some() {
                    eprintln!(
                        "twin explore: seed {seed} failed: replay: {}",
                        header.replay(seed)
                    );
                }
                if streaming {
                    let mut ready = ready
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    let (next, waiting) = &mut *ready;
                    waiting.insert(index, table_row(report));
                    while let Some(row) = waiting.remove(next) {
                        say(&row);
                        *next += 1;
                    }
                }
            }
            report
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
    if let (Some(shard), Some(out)) = (shard, out) {
        let items: Vec<(usize, SeedReport)> =
            mine.iter().map(|(index, _)| *index).zip(done).collect();
        return crate::merge_cmd::write_part("explore", shard, all.len(), &header, items, &out);
    }
    finish(&header, &done, !streaming)
}

/// `twin merge` of an explore's parts: each item is a seed's report.
pub fn merge(header: serde_json::Value, items: Vec<serde_json::Value>) -> Result<ExitCode, String> {
    let header: Header = crate::merge_cmd::from_value(header, "header")?;
    let reports: Vec<SeedReport> = crate::merge_cmd::items_as(items, "seed report")?;
    Ok(finish(&header, &reports, true))
}

/// Prints the table (unless its rows went out as the seeds finished), how
/// many seeds each checker judged, and the failures, and picks the exit
/// code (a one-machine explore, or `twin merge` of its parts).
fn finish(header: &Header, done: &[SeedReport], table: bool) -> ExitCode {
    if table {
        say(&table_header());
        for report in done {
            say(&table_row(report));
        }
    }
    print_reasons(done);
    // A seed where a checker did not apply is not a pass of that checker.
    for (index, name) in sim::check::CHECKERS.iter().enumerate() {
        let verdicts = || done.iter().filter_map(|report| report.checks.get(index));
        let held = verdicts()
            .filter(|c| matches!(c.verdict, Verdict::Held))
            .count();
        let broken = verdicts()
            .filter(|c| matches!(c.verdict, Verdict::Broken(_)))
            .count();
        let not_applicable = verdicts()
            .filter(|c| matches!(c.verdict, Verdict::NotApplicable(_)))
            .count();
        say(&format!(
            "{name}: judged {} of {} seeds ({held} held, {broken} broken), did not apply to {not_applicable}",
            held + broken,
            done.len()
        ));
    }
    let crashed: Vec<&SeedReport> = done.iter().filter(|r| r.crash.is_some()).collect();
    let failed: Vec<&SeedReport> = done.iter().filter(|r| r.failed()).collect();
    let judged_all = done
        .iter()
        .filter(|r| {
            r.crash.is_none()
                && r.checks
                    .iter()
                    .all(|check| matches!(check.verdict, Verdict::Held))
        })
        .count();
    say(&format!(
        "{} seeds: {judged_all} held every check, {} held those that applied, {} with a checker failure, {} crashed",
        done.len(),
        done.len() - crashed.len() - failed.len() - judged_all,
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
        say(&format!("  replay: {}", header.replay(report.seed)));
    }
    if !crashed.is_empty() {
        ExitCode::from(EXIT_CRASHED)
    } else if !failed.is_empty() {
        ExitCode::from(EXIT_CHECKER_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// The table's header: seed, faults, actions and each checker.
fn table_header() -> String {
    let mut header = format!("{:>8} {:>6} {:>7}", "seed", "faults", "actions");
    for name in sim::check::CHECKERS {
        header.push_str(&format!("  {name:<34}"));
    }
    header.trim_end().to_string()
}

/// A seed's row: its faults and each checker's verdict.
fn table_row(report: &SeedReport) -> String {
    let mut line = format!(
        "{:>8} {:>6} {:>7}",
        report.seed, report.faults, report.actions
    );
    if report.crash.is_some() {
        line.push_str("  CRASHED");
    }
    for check in &report.checks {
        line.push_str(&format!("  {:<34}", check.verdict.label()));
    }
    line.trim_end().to_string()
}

/// Why a checker did not apply, once per reason.
fn print_reasons(reports: &[SeedReport]) {
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
