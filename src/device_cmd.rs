//! `twin device`: the NVMe model on its own (`sweep`, `list`), and this
//! machine's disk measured (`measure`, the `real` crate).

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
    /// Measure this machine's disk as fio would (direct I/O, 4 KiB random
    /// reads and 128 KiB writes over queue depths) and write a device preset.
    Measure(MeasureArgs),
}

/// `twin device measure` flags.
#[derive(Args)]
pub struct MeasureArgs {
    /// A folder on the disk to measure (a test file is written there and removed).
    dir: std::path::PathBuf,
    /// The test file's size, as 4GiB or 512MiB (larger than the device's cache).
    #[arg(long, default_value = "4GiB")]
    size: String,
    /// Seconds per point.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Queue depths of the 4 KiB random-read sweep: A..B (powers of two) or a list.
    #[arg(long, default_value = "1..64")]
    qd: String,
    /// Queue depths of the 128 KiB write sweep.
    #[arg(long, default_value = "1..16")]
    write_qd: String,
    /// The preset's name.
    #[arg(long, default_value = "this-machine")]
    name: String,
    /// Write the device preset (TOML) here.
    #[arg(long)]
    preset: Option<std::path::PathBuf>,
    /// Write the sweep (JSON) here.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 1)]
    seed: u64,
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
        DeviceCommand::Measure(args) => measure(args),
    }
}

fn measure(args: MeasureArgs) -> ExitCode {
    let bad = |flag: &str, message: &str| {
        eprintln!("twin device measure: {flag}: {message}");
        ExitCode::from(EXIT_BAD_INPUT)
    };
    let size = match units::parse_bytes(&args.size) {
        Ok(size) => size,
        Err(error) => return bad("--size", &error.to_string()),
    };
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 3600.0) {
        return bad("--seconds", "must be more than 0 and at most 3600");
    }
    let read_depths = match parse_qd_list(&args.qd) {
        Ok(depths) => depths,
        Err(error) => return bad("--qd", &error.to_string()),
    };
    let write_depths = match parse_qd_list(&args.write_qd) {
        Ok(depths) => depths,
        Err(error) => return bad("--write-qd", &error.to_string()),
    };
    if read_depths.iter().chain(&write_depths).any(|&qd| qd > 256) {
        return bad("--qd", "at most 256 (one thread each)");
    }
    let options = real::device::MeasureOptions {
        dir: args.dir.clone(),
        size,
        seconds: args.seconds,
        read_depths,
        write_depths,
        seed: args.seed,
    };
    let measurement = match real::device::measure(&options, &|line| crate::say(line)) {
        Ok(measurement) => measurement,
        Err(error) => {
            eprintln!("twin device measure: {}: {error}", args.dir.display());
            return ExitCode::from(EXIT_ENVIRONMENT);
        }
    };
    if !measurement.fio {
        crate::say("fio: not installed, so not run beside (Debian: apt-get install fio)");
    }
    let date = real::clock::today_utc();
    let preset = real::device::preset_toml(&args.name, &measurement, &date);
    let written = (|| -> std::io::Result<()> {
        if let Some(path) = &args.preset {
            std::fs::write(path, &preset)?;
        }
        if let Some(path) = &args.json {
            let mut json =
                serde_json::to_string_pretty(&measurement).map_err(std::io::Error::other)?;
            json.push('\n');
            std::fs::write(path, json)?;
        }
        Ok(())
    })();
    if let Err(error) = written {
        eprintln!("twin device measure: cannot write the outputs: {error}");
        return ExitCode::from(EXIT_ENVIRONMENT);
    }
    crate::say(preset.trim_end());
    ExitCode::SUCCESS
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
        Err(message) => return bad_input("--op", &message.to_string()),
    };
    let block_bytes = match parse_block_size(&args.bs) {
        Ok(bytes) => bytes,
        Err(message) => return bad_input("--bs", &message.to_string()),
    };
    let depths = match parse_qd_list(&args.qd) {
        Ok(depths) => depths,
        Err(message) => return bad_input("--qd", &message.to_string()),
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
