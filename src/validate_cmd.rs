//! `twin validate`: runs the validation cases (the scenarios of
//! `scenarios/validation/` and R6's device sweeps) in parallel across runs,
//! and prints the scorecard of published against simulated figures.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use clap::Args;
use validation::cases::{discover, run_case, Case, CaseError, CaseResult, RunOptions};
use validation::scorecard::{build, Scorecard};

use crate::{runner, runs_progress, say, EXIT_BAD_INPUT, EXIT_ENVIRONMENT};

/// Exit code of `--require` when a figure that passed in the baseline fails.
const EXIT_REGRESSION: u8 = 1;

/// `twin validate` flags.
#[derive(Args)]
pub struct ValidateArgs {
    /// Only these cases (ids as `twin validate --list` prints them; may repeat).
    #[arg(long = "case")]
    cases: Vec<String>,
    /// Every case shortened (its scenario's `quick_duration`), minutes in all.
    #[arg(long)]
    quick: bool,
    /// Cases run at once (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Also write the scorecard as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// A committed scorecard (JSON): exit 1 if a figure that passed there fails now.
    #[arg(long)]
    require: Option<PathBuf>,
    /// Folder of the cases' results and the charts.
    #[arg(long, default_value = "results/validation")]
    out: PathBuf,
    /// Folder of the validation scenarios.
    #[arg(long, default_value = "scenarios/validation")]
    scenarios: PathBuf,
    /// Run every scenario case with this seed instead of its own, to see
    /// how the figures move with the seed.
    #[arg(long)]
    seed: Option<u64>,
    /// List the cases and exit.
    #[arg(long)]
    list: bool,
    /// Set a value in every scenario case (`KEY=VALUE`, as `twin run
    /// --set`); the scorecard says so beside each case.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Run only slice I of N of the cases and write a part for `twin
    /// merge` into --out (the scorecard, its charts, --json and --require
    /// come with the merge).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// The real scorecard instead: a stored real measurement (default: the
    /// newest under validation/real/) against the twin on its machine
    /// (validation/REAL.md); --json, --out and --phase apply.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    real: Option<Option<PathBuf>>,
    /// With --real: the machine's twin description.
    #[arg(long, default_value = "validation/real/machine.toml")]
    machine: PathBuf,
    /// With --real: only these phases (REAL.md ids; may repeat).
    #[arg(long = "phase")]
    phases: Vec<String>,
    /// With --real: how many times the twin runs the phases, each time
    /// with its own seeds (its figures are the medians, as the real ones
    /// are over the real repeats).
    #[arg(long, requires = "real", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    twin_repeats: u32,
    /// With --real: print G1's evacuation fitted to the calibration
    /// phases' GC logs (the cassandra-5.0 preset's constants) and stop.
    #[arg(long, requires = "real")]
    fit_gc: bool,
    /// With --real DIR: print the compaction and flush prices fitted to
    /// the background work's calibration phases (K1, F1; the cassandra-5.0
    /// preset's constants) and C1's event loop figure beside them, and
    /// stop.
    #[arg(long, requires = "real", conflicts_with = "fit_gc")]
    fit_work: bool,
    /// With --real: print the shared pool's and the event loop's prices
    /// (a run on the core, a write's and a read's work) and the page
    /// miss's, fitted to the calibration phases' threads, their runs and
    /// C3's device reads (C1, C4, C2, C3; validation/REAL.md, "Runs
    /// counted", "The page miss from the server's work"), and stop.
    #[arg(long, requires = "real", conflicts_with_all = ["fit_gc", "fit_work"])]
    fit_runs: bool,
}

/// What the scorecard needs besides the cases' results (a part's header).
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    quick: bool,
    out: PathBuf,
    json: Option<PathBuf>,
    require: Option<PathBuf>,
}

/// Runs `twin validate`.
#[allow(clippy::disallowed_methods)] // wall time for the scorecard's timings only
pub fn run(args: ValidateArgs) -> ExitCode {
    if let Some(dir) = &args.real {
        return run_real(&args, dir.as_deref());
    }
    let started = std::time::Instant::now();
    let sets = match crate::parse_sets(&args.sets) {
        Ok(sets) => sets,
        Err(code) => return code,
    };
    let mut cases = match discover(&args.scenarios) {
        Ok(cases) => cases,
        Err(error) => {
            eprintln!("twin validate: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if args.list {
        for case in &cases {
            say(&format!("{:<32} {}", case.id(), case.run()));
        }
        return ExitCode::SUCCESS;
    }
    if let Some(unknown) = args
        .cases
        .iter()
        .find(|id| !cases.iter().any(|case| case.id() == id.as_str()))
    {
        let known: Vec<&str> = cases.iter().map(Case::id).collect();
        eprintln!(
            "twin validate: --case {unknown}: no such case; the cases are {}",
            known.join(", ")
        );
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    if !args.cases.is_empty() {
        cases.retain(|case| args.cases.iter().any(|id| id == case.id()));
    }
    // `--set` applies to the cases that run.
    let cases = match cases
        .into_iter()
        .map(|case| case.with_sets(&sets))
        .collect::<Result<Vec<Case>, _>>()
    {
        Ok(cases) => cases,
        Err(error) => {
            eprintln!("twin validate: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let baseline: Option<Scorecard> = match &args.require {
        None => None,
        Some(path) => match read_json(path) {
            Ok(card) => Some(card),
            Err(error) => {
                eprintln!("twin validate: --require {}: {error}", path.display());
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        },
    };
    let shard = match crate::merge_cmd::shard_arg("validate", args.shard.as_deref()) {
        Ok(shard) => shard,
        Err(code) => return code,
    };
    let total = cases.len();
    let mine: Vec<(usize, Case)> = cases
        .into_iter()
        .enumerate()
        .filter(|(index, _)| shard.is_none_or(|shard| shard.owns(*index)))
        .collect();
    let runner = match runner("validate", args.jobs) {
        Ok(runner) => runner,
        Err(code) => return code,
    };
    let options = RunOptions {
        quick: args.quick,
        out: args.out.clone(),
        seed: args.seed,
    };
    say(&format!(
        "twin validate: {} cases{}{}, {} at once; results in {}",
        mine.len(),
        shard.map_or(String::new(), |s| format!(" of {total} in shard {s}")),
        if args.quick { " (--quick)" } else { "" },
        runner.jobs(),
        args.out.display()
    ));
    let bar = runs_progress(mine.len() as u64, "cases");
    let log = Mutex::new(());
    let outcomes: Vec<Result<CaseResult, CaseError>> = runner.run_all(
        &mine,
        |(_, case)| run_case(case, &options),
        |index, result| {
            let _guard = log.lock().unwrap_or_else(|e| e.into_inner());
            let line = match result {
                Ok(r) => format!(
                    "  done {:<32} {:>7.1} wall s",
                    r.case.id, r.case.wall_seconds
                ),
                Err(e) => format!("  FAILED {}: {e}", mine[index].1.id()),
            };
            match &bar {
                Some(bar) => {
                    bar.println(line);
                    bar.inc(1);
                }
                None => eprintln!("{line}"),
            }
        },
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut results = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(result) => results.push(result),
            Err(error) => {
                eprintln!("twin validate: {error}");
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        }
    }
    let header = Header {
        quick: args.quick,
        out: args.out.clone(),
        json: args.json.clone(),
        require: args.require.clone(),
    };
    if let Some(shard) = shard {
        let items: Vec<(usize, CaseResult)> =
            mine.iter().map(|(index, _)| *index).zip(results).collect();
        return crate::merge_cmd::write_part("validate", shard, total, &header, items, &args.out);
    }
    finish(
        &header,
        &results,
        baseline,
        started.elapsed().as_secs_f64(),
        &args.out,
    )
}

/// A JSON file read as `T`.
fn read_json<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Result<T, String> {
    std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
}

/// `twin merge` of a validation's parts: each item is a case's result.
/// The scorecard's wall time is the sum of the cases'.
pub fn merge(
    header: serde_json::Value,
    items: Vec<serde_json::Value>,
    out: Option<PathBuf>,
) -> Result<ExitCode, String> {
    let header: Header = crate::merge_cmd::from_value(header, "header")?;
    let results: Vec<CaseResult> = crate::merge_cmd::items_as(items, "case result")?;
    let baseline = match &header.require {
        None => None,
        Some(path) => Some(
            read_json(path).map_err(|error| format!("--require {}: {error}", path.display()))?,
        ),
    };
    let wall = results.iter().map(|r| r.case.wall_seconds).sum();
    let out = out.unwrap_or_else(|| header.out.clone());
    Ok(finish(&header, &results, baseline, wall, &out))
}

/// Prints the scorecard, writes its charts and JSON, and checks it against
/// the baseline (a one-machine validation, or `twin merge` of its parts).
fn finish(
    header: &Header,
    results: &[CaseResult],
    baseline: Option<Scorecard>,
    wall_seconds: f64,
    out: &std::path::Path,
) -> ExitCode {
    let mut card = build(results, header.quick, wall_seconds);
    say(card.to_text().trim_end());
    // R5's worked plan, stored by `twin plan` (validation/r5-plan/README.md).
    let stored = std::path::Path::new(validation::plan_score::R5_PLAN);
    if stored.exists() {
        match read_json(stored) {
            Ok(report) => {
                card.plan = validation::plan_score::score(&report);
                say("");
                say(validation::plan_score::to_text(&card.plan).trim_end());
            }
            Err(error) => {
                eprintln!("twin validate: {}: {error}", stored.display());
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        }
    }
    if let Err(error) = validation::charts::write_all(&out.join("charts"), &card, results) {
        eprintln!("twin validate: charts: {error}");
        return ExitCode::from(EXIT_ENVIRONMENT);
    }
    say(&format!("charts: {}", out.join("charts").display()));
    if let Some(path) = &header.json {
        let written = serde_json::to_string_pretty(&card)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                }
                sim::results_dir::write_whole(path, (text + "\n").as_bytes())
                    .map_err(|e| e.to_string())
            });
        if let Err(error) = written {
            eprintln!("twin validate: --json {}: {error}", path.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
        say(&format!("scorecard: {}", path.display()));
    }
    if let Some(baseline) = baseline {
        let lost = card.regressions(&baseline);
        if !lost.is_empty() {
            eprintln!(
                "twin validate: {} figure(s) that passed in the baseline fail now:",
                lost.len()
            );
            for line in lost {
                eprintln!("  {line}");
            }
            return ExitCode::from(EXIT_REGRESSION);
        }
        say("--require: every figure that passed in the baseline still passes");
    }
    ExitCode::SUCCESS
}

/// `twin validate --real [DIR]`: the real scorecard.
fn run_real(args: &ValidateArgs, dir: Option<&std::path::Path>) -> ExitCode {
    let measurement = if let Some(dir) = dir {
        dir.to_path_buf()
    } else {
        match newest_measurement(std::path::Path::new("validation/real")) {
            Some(dir) => dir,
            None => {
                eprintln!("twin validate --real: no measurement under validation/real/ (a folder with repeat-<n>/; validation/real/measure.sh writes one)");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        }
    };
    if args.fit_runs {
        let fit = validation::real::load(&measurement)
            .map_err(|error| error.to_string())
            .and_then(|loaded| {
                let (_, verdict) = validation::real_speed::figures_by_rule(&loaded)
                    .map_err(|error| error.to_string())?;
                Ok((validation::real_runs::fit(&loaded)?, verdict))
            });
        return match fit {
            Ok((fit, verdict)) => {
                if let Some(verdict) = verdict {
                    println!("{}", verdict.text());
                }
                print!("{}", validation::real_runs::fit_text(&fit));
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!(
                    "twin validate --real --fit-runs: {}: {error}",
                    measurement.display()
                );
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    if args.fit_work {
        let scored = newest_measurement(std::path::Path::new("validation/real"));
        let Some(scored) = scored else {
            eprintln!("twin validate --real --fit-work: no scored measurement under validation/real/ to carry the event loop's C1 figure over to");
            return ExitCode::from(EXIT_BAD_INPUT);
        };
        return match validation::real_work::fit(&measurement, &scored) {
            Ok(fit) => {
                print!("{}", validation::real_work::fit_text(&fit));
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("twin validate --real --fit-work: {error}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    if args.fit_gc {
        let loaded = validation::real::load(&measurement);
        let fit = loaded
            .as_ref()
            .map_err(Clone::clone)
            .and_then(validation::real_gc::fit);
        return match fit {
            Ok(fit) => {
                print!("{}", validation::real_gc::fit_text(&fit));
                // The pauses' parts need logs at gc+phases=debug.
                match loaded
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(validation::real_gc::fit_phases)
                {
                    Ok(parts) => print!("{}", validation::real_gc::fit_phases_text(&parts)),
                    Err(why) => println!(
                        "young pauses' parts: not priced from this measurement ({why}); \
                         validation/real/g1/ holds the one the preset's prices come from"
                    ),
                }
                // A check, not a fit: the twin's G1 predictor on the log.
                if let Ok(measurement) = &loaded {
                    let replayed = validation::real_gc::replay_measurement(measurement);
                    if !replayed.is_empty() {
                        let phases: Vec<String> = replayed
                            .iter()
                            .map(|(id, close, all)| format!("{id} {close}/{all}"))
                            .collect();
                        println!(
                            "G1's eden sizing replayed on these logs (models::g1_policy from a new JVM's seeds; \
                             pauses whose eden is within 20% of the JVM's, by phase): {}",
                            phases.join(", ")
                        );
                    }
                }
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("twin validate --real --fit-gc: {error}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    let options = validation::real_score::RealScoreOptions {
        measurement,
        machine: args.machine.clone(),
        out: args.out.join("real"),
        phases: args.phases.clone(),
        twin_repeats: args.twin_repeats,
    };
    let runner = match runner("validate --real", args.jobs) {
        Ok(runner) => runner,
        Err(code) => return code,
    };
    let card = match validation::real_score::score(&options, &runner, &mut |phase| {
        eprintln!(
            "twin validate --real: phase {phase} in the twin, {} times",
            args.twin_repeats
        );
    }) {
        Ok(card) => card,
        Err(error) => {
            eprintln!("twin validate --real: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    print!("{}", validation::real_score::scorecard_text(&card));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&card).expect("a scorecard serializes");
        if let Err(error) = sim::results_dir::write_whole(path, (text + "\n").as_bytes()) {
            eprintln!("twin validate --real: {}: {error}", path.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
    }
    say(&format!(
        "twin runs and their scenarios: {}",
        options.out.display()
    ));
    ExitCode::SUCCESS
}

/// The newest measurement folder under `root` (names are dates, so the
/// greatest name) that has a `repeat-<n>` folder.
fn newest_measurement(root: &std::path::Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            std::fs::read_dir(path).is_ok_and(|entries| {
                entries
                    .filter_map(Result::ok)
                    .any(|entry| entry.file_name().to_string_lossy().starts_with("repeat-"))
            })
        })
        .collect();
    found.sort();
    found.pop()
}
