//! `twin real`: a scenario's cassandra-stress loads against a real CQL
//! endpoint, written as `twin run` writes a simulated run (the `real` crate).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use sim::plan::{resolve, RunOverrides};

use crate::{parse_sets, say, EXIT_BAD_INPUT, EXIT_ENVIRONMENT};

/// `twin real` arguments.
#[derive(Args)]
pub struct RealArgs {
    /// The scenario file (TOML); its `[[load]]`s are run for real.
    scenario: PathBuf,
    /// One node of the cluster, `HOST[:PORT]` (port 9042 when absent).
    #[arg(long)]
    contact: String,
    /// A node folder of `deploy/real/cassandra.sh` (holds `pid` and
    /// `gc.log`): the server's CPU seconds and GC pauses are read from it.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["server_pid", "gc_log"])]
    server_dir: Option<PathBuf>,
    /// The local server's process id, for its CPU seconds.
    #[arg(long, value_name = "PID")]
    server_pid: Option<u32>,
    /// The server's GC log (`-Xlog:gc*` with the `time` decoration).
    #[arg(long, value_name = "FILE")]
    gc_log: Option<PathBuf>,
    /// Seed of the client's draws (overrides the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Results folder (default: results/real/<scenario file name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seconds to wait for the first connection.
    #[arg(long, default_value_t = 30)]
    connect_timeout: u64,
    /// Set any scenario value (`KEY=VALUE`, as `twin run --set`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

/// Runs `twin real`.
pub fn run(args: RealArgs) -> ExitCode {
    let sets = match parse_sets(&args.sets) {
        Ok(sets) => sets,
        Err(code) => return code,
    };
    let overrides = RunOverrides {
        seed: args.seed,
        duration: None,
    };
    let plan = match sim::scenario::load_with(&args.scenario, &sets)
        .and_then(|scenario| resolve(&scenario, &overrides))
    {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("twin: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let probe = match &args.server_dir {
        Some(dir) => match real::server::ServerProbe::of_node_dir(dir) {
            Ok(probe) => probe,
            Err(error) => {
                eprintln!("twin: --server-dir: {error}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        },
        None => real::server::ServerProbe {
            pid: args.server_pid,
            gc_log: args.gc_log.clone(),
        },
    };
    if let Some(log) = &probe.gc_log {
        if !log.is_file() {
            eprintln!("twin: --gc-log: {}: no such file", log.display());
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    }
    let out = args.out.unwrap_or_else(|| {
        let stem = args
            .scenario
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        PathBuf::from("results").join("real").join(stem)
    });
    // Made now: an `--out` that cannot be written fails before the load.
    let pending = match sim::results_dir::PendingResults::prepare(&out) {
        Ok(pending) => pending,
        Err(error) => {
            eprintln!("twin: cannot write results to {}: {error}", out.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
    };
    say(&format!(
        "real run of {} against {}: {}",
        plan.scenario,
        args.contact,
        plan.loads
            .iter()
            .map(|load| load.describe())
            .collect::<Vec<_>>()
            .join("; ")
    ));
    let options = real::Options {
        contact: args.contact,
        probe,
        connect_timeout: Duration::from_secs(args.connect_timeout.max(1)),
    };
    let run = match real::run(plan, &options, &|line| say(line)) {
        Ok(run) => run,
        Err(error @ real::RealError::Input(_)) => {
            eprintln!("twin: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        Err(error) => {
            eprintln!("twin: {error}");
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
    };
    match real::results::write_into(pending, &run) {
        Ok(summary) => {
            say(summary.to_stress_text().trim_end());
            say(&format!("results: {}", out.display()));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("twin: cannot write results to {}: {error}", out.display());
            ExitCode::from(EXIT_ENVIRONMENT)
        }
    }
}

/// Runs `twin measured`.
pub fn measured(dir: &std::path::Path, json: bool) -> ExitCode {
    // A fault check's folder (validation/real/faults.sh) has its timeline.
    if dir.join("timeline.json").is_file() {
        return match validation::real_faults::faults_text(dir) {
            Ok(text) => {
                say(text.trim_end());
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("twin measured: {error}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    let measurement = match validation::real::load(dir) {
        Ok(measurement) => measurement,
        Err(error) => {
            eprintln!("twin measured: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if json {
        match serde_json::to_string_pretty(&validation::real::figures(&measurement)) {
            Ok(text) => say(&text),
            Err(error) => {
                eprintln!("twin measured: {error}");
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        }
    } else {
        say(validation::real::report_text(&measurement).trim_end());
    }
    ExitCode::SUCCESS
}
