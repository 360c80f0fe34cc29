//! `twin regress`: a scenario over several seeds in parallel, its figures
//! (`validation::regress`) compared with a stored baseline; exit 1 when
//! one is worse than its tolerance. `--update-baseline` writes the
//! baseline instead.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use validation::regress::{baseline_of, compare, figures_of_seed, Baseline, Worse};

use crate::{run_each, runner, say, EXIT_BAD_INPUT, EXIT_ENVIRONMENT};

/// Exit code when a figure regressed.
const EXIT_REGRESSED: u8 = 1;

/// `twin regress` flags.
#[derive(Args)]
pub struct RegressArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// The baseline (JSON) to compare with, or to write with
    /// --update-baseline.
    #[arg(long)]
    baseline: PathBuf,
    /// Write the baseline from these runs instead of comparing.
    #[arg(long)]
    update_baseline: bool,
    /// Set any scenario value (`KEY=VALUE`, as `twin run --set`): the
    /// tuning under test.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Seeds to run (consecutive, from --first-seed).
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// The first seed (default: the scenario's `seed`, else 1).
    #[arg(long)]
    first_seed: Option<u64>,
    /// Simulated time at the start left out of the figures, e.g. 60s
    /// (default: the baseline's, also when refreshing it; else none).
    #[arg(long)]
    warmup: Option<String>,
    /// Runs at once (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
}

pub fn run(args: RegressArgs) -> ExitCode {
    let bad = |message: String| {
        eprintln!("twin regress: {message}");
        ExitCode::from(EXIT_BAD_INPUT)
    };
    let sets = match crate::parse_sets(&args.sets) {
        Ok(sets) => sets,
        Err(code) => return code,
    };
    let scenario = match sim::scenario::load_with(&args.scenario, &sets) {
        Ok(scenario) => scenario,
        Err(error) => return bad(error.to_string()),
    };
    if args.seeds == 0 {
        return bad("--seeds must be at least 1".into());
    }
    let warmup = match args
        .warmup
        .as_deref()
        .map(units::parse_duration)
        .transpose()
    {
        Ok(warmup) => warmup,
        Err(error) => return bad(format!("--warmup: {error}")),
    };
    let stored: Option<Baseline> = if args.update_baseline {
        None
    } else {
        let text = match std::fs::read_to_string(&args.baseline) {
            Ok(text) => text,
            Err(error) => {
                return bad(format!(
                    "--baseline {}: {error} (write one with --update-baseline)",
                    args.baseline.display()
                ))
            }
        };
        match serde_json::from_str(&text) {
            Ok(baseline) => Some(baseline),
            Err(error) => return bad(format!("--baseline {}: {error}", args.baseline.display())),
        }
    };
    // Without --warmup, the baseline's: the one compared with, or the one
    // being refreshed (a refresh keeps the warm-up it was written with).
    let refreshed = || -> Option<f64> {
        let text = std::fs::read_to_string(&args.baseline).ok()?;
        Some(serde_json::from_str::<Baseline>(&text).ok()?.warmup_s)
    };
    let warmup = warmup
        .or_else(|| {
            stored
                .as_ref()
                .map(|stored| stored.warmup_s)
                .or_else(|| args.update_baseline.then(refreshed).flatten())
                .map(units::SimDuration::from_secs_f64)
        })
        .unwrap_or(units::SimDuration::ZERO);
    let first = args.first_seed.or(scenario.seed).unwrap_or(1);
    let seeds: Vec<u64> = (0..args.seeds).map(|i| first.saturating_add(i)).collect();
    // A scenario that does not resolve fails before any run.
    if let Err(error) = sim::plan::resolve(&scenario, &sim::plan::RunOverrides::default()) {
        return bad(error.to_string());
    }
    let runner = match runner("regress", args.jobs) {
        Ok(runner) => runner,
        Err(code) => return code,
    };
    let jobs = runner.jobs();
    say(&format!(
        "twin regress: {}{}, seeds {}..={}, {jobs} at once",
        args.scenario.display(),
        crate::sets_for_shell(&sets),
        seeds[0],
        seeds[seeds.len() - 1]
    ));
    let runs: Result<Vec<Vec<(&'static str, f64)>>, String> =
        run_each(&runner, &seeds, "seeds", |&seed| {
            figures_of_seed(&scenario, seed, warmup).map_err(|error| error.to_string())
        })
        .into_iter()
        .collect();
    let runs = match runs {
        Ok(runs) => runs,
        Err(error) => return bad(error),
    };
    let set_texts: Vec<String> = sets
        .iter()
        .map(|set| format!("{}={}", set.key, set.text))
        .collect();
    let current = baseline_of(&scenario.name, &set_texts, &seeds, warmup, &runs);
    let Some(stored) = stored else {
        let json = match serde_json::to_string_pretty(&current) {
            Ok(json) => json + "\n",
            Err(error) => {
                eprintln!("twin regress: {error}");
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        };
        if let Err(error) = sim::results_dir::write_whole(&args.baseline, json.as_bytes()) {
            eprintln!("twin regress: {}: {error}", args.baseline.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
        say(&format!(
            "{:<16} {:>12} {:>10}",
            "figure", "mean", "tolerance"
        ));
        for figure in &current.figures {
            say(&format!(
                "{:<16} {:>12} {:>9}%",
                figure.name, figure.value, figure.tolerance_pct
            ));
        }
        say(&format!("baseline written: {}", args.baseline.display()));
        return ExitCode::SUCCESS;
    };
    if stored.scenario != current.scenario || stored.seeds != current.seeds {
        say(&format!(
            "note: the baseline is of scenario `{}`, seeds {:?}; this run is of `{}`, seeds {:?}",
            stored.scenario, stored.seeds, current.scenario, current.seeds
        ));
    }
    let verdicts = compare(&stored, &current);
    say(&format!(
        "{:<16} {:>12} {:>12} {:>9} {:>11}  verdict",
        "figure", "baseline", "now", "change", "tolerance"
    ));
    for verdict in &verdicts {
        let worse = match verdict.worse {
            Worse::Higher => "+",
            Worse::Lower => "-",
        };
        say(&format!(
            "{:<16} {:>12} {:>12} {:>9} {:>10}%  {}",
            verdict.name,
            verdict.baseline,
            verdict
                .now
                .map_or("missing".to_string(), |now| now.to_string()),
            verdict
                .change_pct
                .map_or("-".to_string(), |change| format!("{change:+.1}%")),
            format!("{worse}{}", verdict.tolerance_pct),
            if verdict.regressed { "REGRESSED" } else { "ok" }
        ));
    }
    let regressed: Vec<&str> = verdicts
        .iter()
        .filter(|verdict| verdict.regressed)
        .map(|verdict| verdict.name.as_str())
        .collect();
    if regressed.is_empty() {
        say("no regression");
        ExitCode::SUCCESS
    } else {
        say(&format!("regressed: {}", regressed.join(", ")));
        ExitCode::from(EXIT_REGRESSED)
    }
}
