//! `twin trace diff A B`: where two runs' event streams part, from the
//! `trace.json` that `twin run --trace` writes (and, when both runs also
//! recorded the window with `--trace-window`, the first event that
//! differs, in full).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sim::trace::{
    first_differing_event, first_divergence, Trace, TraceFile, TraceOptions, TracedEvent,
};
use units::SimTime;

use crate::EXIT_BAD_INPUT;

/// Exit code when the two runs' events differ.
const EXIT_DIFFERENT: u8 = 1;

/// `--trace` and `--trace-window` as trace options (`None`: not traced).
pub fn options(trace: bool, window: Option<&str>) -> Result<Option<TraceOptions>, String> {
    if !trace && window.is_none() {
        return Ok(None);
    }
    let options = TraceOptions {
        window: window.map(parse_window).transpose()?,
        ..TraceOptions::default()
    };
    options
        .validate()
        .map_err(|reason| format!("--trace-window: {reason}"))?;
    Ok(Some(options))
}

/// `FROM..TO`: event indices, from 0, TO excluded.
fn parse_window(text: &str) -> Result<Range<u64>, String> {
    let bad =
        |why: &str| format!("--trace-window {text}: {why} (expected FROM..TO, e.g. 65536..131072)");
    let (from, to) = text.split_once("..").ok_or_else(|| bad("no `..`"))?;
    let number = |part: &str| {
        part.trim()
            .parse::<u64>()
            .map_err(|_| bad(&format!("`{part}` is not an event index")))
    };
    Ok(number(from)?..number(to)?)
}

/// The trace file of a results folder, or the file itself.
fn trace_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("trace.json")
    } else {
        path.to_path_buf()
    }
}

/// The `trace-events.txt` beside a trace, read back, if there is one.
fn window_events(trace: &Path) -> Result<Option<Vec<TracedEvent>>, String> {
    let path = trace.with_file_name("trace-events.txt");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    text.lines()
        .enumerate()
        .map(|(line, text)| {
            Trace::parse_window_line(text).ok_or_else(|| {
                format!(
                    "{}:{}: not a line of `twin run --trace-window`",
                    path.display(),
                    line + 1
                )
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Some)
}

/// Compares two runs' traces: exit 0 if their events are the same, 1
/// (`EXIT_DIFFERENT`) if not, with where they part.
pub fn diff(first: &Path, second: &Path) -> ExitCode {
    let (first, second) = (trace_path(first), trace_path(second));
    let (a, b) = match (TraceFile::read(&first), TraceFile::read(&second)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("twin trace diff: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if a.checkpoint_every != b.checkpoint_every {
        eprintln!(
            "twin trace diff: the traces were checkpointed every {} and {} events; compare traces of the same build",
            a.checkpoint_every, b.checkpoint_every
        );
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let Some(divergence) = first_divergence(&a.checkpoints, &b.checkpoints) else {
        println!(
            "the runs' events are the same: {} events, hash {}",
            a.events, a.hash
        );
        return ExitCode::SUCCESS;
    };
    println!(
        "the runs agree on their first {} events (to {}) and part within events {}..{} ({} events in all against {})",
        divergence.agreed_events,
        SimTime::from_nanos(divergence.agreed_at_ns),
        divergence.window.start,
        divergence.window.end,
        a.events,
        b.events
    );
    let recorded = match (window_events(&first), window_events(&second)) {
        (Ok(a), Ok(b)) => a.zip(b),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("twin trace diff: {error}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let covers = |events: &[TracedEvent]| {
        events
            .first()
            .is_some_and(|e| e.index <= divergence.window.start)
            && events
                .last()
                .is_some_and(|e| e.index + 1 >= divergence.window.end)
    };
    match recorded {
        Some((x, y)) if covers(&x) || covers(&y) => match first_differing_event(&x, &y) {
            Some(differing) => println!("{differing}"),
            None => println!("the recorded windows hold the same events: record the window above"),
        },
        _ => println!(
            "to see the first event that differs, run both again with `--trace-window {}..{}` and compare their folders with `twin trace diff`",
            divergence.window.start, divergence.window.end
        ),
    }
    ExitCode::from(EXIT_DIFFERENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_and_bad_ones_say_why() {
        assert_eq!(parse_window("10..20"), Ok(10..20));
        assert!(parse_window("10-20").unwrap_err().contains("no `..`"));
        assert!(parse_window("a..20")
            .unwrap_err()
            .contains("`a` is not an event index"));
        assert!(options(false, Some("20..10"))
            .unwrap_err()
            .contains("holds no event"));
        assert_eq!(options(false, None), Ok(None));
        assert_eq!(options(true, None), Ok(Some(TraceOptions::default())));
    }
}
