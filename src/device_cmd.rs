//! `twin device`: the NVMe model on its own (`sweep`, `list`).

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use sim::device_sweep::{
    parse_block_size, parse_op, parse_qd_list, preset_table, run_sweep, NvmeProfile, SweepConfig,
};
use units::SimDuration;

/// Exit code for bad input (flags).
const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for failures outside the simulation.
const EXIT_ENVIRONMENT: u8 = 1;

/// `twin device ...`
#[derive(Subcommand)]
pub enum DeviceCommand {
    /// Run the device model alone under fio-like closed loops, one per queue depth.
    Sweep(SweepArgs),
    /// List the device presets.
    List,
}

/// `twin device sweep` flags.
#[derive(Args)]
pub struct SweepArgs {
    /// Device preset (see `twin device list`).
    #[arg(long)]
    device: String,
    /// Access pattern: randread, randwrite, read or write.
    #[arg(long, default_value = "randread")]
    op: String,
    /// Block size, as fio: 4k = 4096 bytes, 128k, 1m.
    #[arg(long, default_value = "4k")]
    bs: String,
    /// Queue depths: A..B for the powers of two from A to B, or a list 1,2,4,8.
    #[arg(long, default_value = "1..64")]
    qd: String,
    /// Drives in a RAID-0 (md, 1 MiB chunks).
    #[arg(long, default_value_t = 1)]
    drives: u32,
    /// Host time per I/O outside the measured latency, microseconds (fio's
    /// reap-and-resubmit turnaround; default fitted to R6).
    #[arg(long)]
    host_us: Option<f64>,
    /// Seed of the sweep's random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs a `twin device` subcommand.
pub fn run(command: DeviceCommand) -> ExitCode {
    match command {
        DeviceCommand::Sweep(args) => sweep(args),
        DeviceCommand::List => list(),
    }
}

fn bad_input(flag: &str, message: &str) -> ExitCode {
    eprintln!("twin device sweep: {flag}: {message}");
    ExitCode::from(EXIT_BAD_INPUT)
}

fn sweep(args: SweepArgs) -> ExitCode {
    let Some(device) = NvmeProfile::by_name(&args.device) else {
        let names: Vec<&str> = NvmeProfile::presets().iter().map(|p| p.name).collect();
        return bad_input(
            "--device",
            &format!(
                "unknown device `{}`, expected one of {}",
                args.device,
                names.join(", ")
            ),
        );
    };
    let op = match parse_op(&args.op) {
        Ok(op) => op,
        Err(message) => return bad_input("--op", &message),
    };
    let block_bytes = match parse_block_size(&args.bs) {
        Ok(bytes) => bytes,
        Err(message) => return bad_input("--bs", &message),
    };
    let depths = match parse_qd_list(&args.qd) {
        Ok(depths) => depths,
        Err(message) => return bad_input("--qd", &message),
    };
    if !(1..=64).contains(&args.drives) {
        return bad_input(
            "--drives",
            &format!("bad drive count {}, expected 1..=64", args.drives),
        );
    }
    let mut config = SweepConfig::new(device.striped(args.drives), op, block_bytes, depths);
    config.seed = args.seed;
    if let Some(host_us) = args.host_us {
        if !(host_us.is_finite() && (0.0..=10_000.0).contains(&host_us)) {
            return bad_input(
                "--host-us",
                &format!("bad host time {host_us}, expected 0..=10000 microseconds"),
            );
        }
        config.host_turnaround = SimDuration::from_secs_f64(host_us / 1e6);
    }
    let report = run_sweep(&config);
    let text = if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => text + "\n",
            Err(error) => {
                eprintln!("twin device sweep: {error}");
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        }
    } else {
        report.to_text()
    };
    // A closed pipe (`| head`) is not an error.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

fn list() -> ExitCode {
    let _ = std::io::stdout()
        .lock()
        .write_all(preset_table().as_bytes());
    ExitCode::SUCCESS
}
