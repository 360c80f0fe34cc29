//! `twin merge`: the parts `--shard I/N` runs wrote (`validation::shard`),
//! checked to be the whole of one run and handed to the code that writes
//! that command's one-machine outputs, so the bytes are the same.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::{say, EXIT_BAD_INPUT, EXIT_ENVIRONMENT};

/// `twin merge` flags.
#[derive(Args)]
pub struct MergeArgs {
    /// Part files, or folders holding `shard-*-of-*.json` parts.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// Results folder (default: the one the one-machine run would use).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: MergeArgs) -> ExitCode {
    let bad = |message: String| {
        eprintln!("twin merge: {message}");
        ExitCode::from(EXIT_BAD_INPUT)
    };
    let files = match validation::shard::part_files(&args.parts) {
        Ok(files) => files,
        Err(error) => return bad(error.to_string()),
    };
    let (command, header, items) = match validation::shard::merge(&files) {
        Ok(merged) => merged,
        Err(error) => return bad(error.to_string()),
    };
    let merged = match command.as_str() {
        "sweep" => crate::sweep_cmd::merge(header, items, args.out),
        "plan" => crate::plan_cmd::merge(header, items, args.out),
        "validate" => crate::validate_cmd::merge(header, items, args.out),
        "explore" => crate::explore_cmd::merge(header, items),
        other => Err(format!(
            "parts of `twin {other}`, which this twin cannot merge"
        )),
    };
    merged.unwrap_or_else(|error| {
        eprintln!("twin merge: {error}");
        ExitCode::from(EXIT_ENVIRONMENT)
    })
}

/// Reads a part's header or item as `T`.
pub fn from_value<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    what: &str,
) -> Result<T, String> {
    serde_json::from_value(value).map_err(|error| format!("a part's {what} does not read: {error}"))
}

/// `--shard I/N` of `twin COMMAND`, parsed (`None` without the flag); a
/// bad value is reported and ends the command.
pub fn shard_arg(
    command: &str,
    text: Option<&str>,
) -> Result<Option<validation::shard::Shard>, ExitCode> {
    match text.map(validation::shard::Shard::parse) {
        None => Ok(None),
        Some(Ok(shard)) => Ok(Some(shard)),
        Some(Err(error)) => {
            eprintln!("twin {command}: {error}");
            Err(ExitCode::from(EXIT_BAD_INPUT))
        }
    }
}

/// Writes slice `shard` of `twin COMMAND`'s `items_total` items (its
/// `header` and its own `items`, numbered) into `out` as a part for `twin
/// merge`, and says where.
pub fn write_part<H: serde::Serialize, T: serde::Serialize>(
    command: &str,
    shard: validation::shard::Shard,
    items_total: usize,
    header: &H,
    items: Vec<(usize, T)>,
    out: &std::path::Path,
) -> ExitCode {
    match validation::shard::Part::new(command, shard, items_total, header, items)
        .and_then(|part| part.write(out))
    {
        Ok(path) => {
            say(&format!("part: {}", path.display()));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("twin {command}: {}: {error}", out.display());
            ExitCode::from(EXIT_ENVIRONMENT)
        }
    }
}

/// Every item of a merged run read as `T` (`what` names one in errors).
pub fn items_as<T: serde::de::DeserializeOwned>(
    items: Vec<serde_json::Value>,
    what: &str,
) -> Result<Vec<T>, String> {
    items
        .into_iter()
        .map(|item| from_value(item, what))
        .collect()
}
