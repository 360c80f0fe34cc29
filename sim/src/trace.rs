//! A run's event stream, fingerprinted: a running hash over every event the
//! kernel hands out (its time and everything it carries), with the hash
//! kept every `checkpoint_every` events, so that two runs that should be
//! identical can be compared event by event rather than by their output
//! files alone.
//!
//! Same scenario and seed, same events: the simulator promises it (the
//! kernel orders events by time, then by who scheduled them and in what
//! order, and every random draw comes from a seeded stream). When two runs'
//! results differ anyway, their checkpoints say where: the runs agree up
//! to the last equal checkpoint and part within the next
//! ([`first_divergence`]). Run both again recording that window's events
//! in full ([`TraceOptions::window`]) and [`first_differing_event`] names
//! the first event where they part, with both versions of it.
//!
//! `twin run --trace` writes `trace.json` into the results folder
//! ([`Trace::to_json`]); `twin trace diff A B` compares two of them; `twin
//! run --trace-window FROM..TO` adds `trace-events.txt`, one line per
//! event of the window.
//!
//! The hash is FNV-1a (64 bits) over each event's time in nanoseconds and
//! its `Debug` text, one stream over the whole run. Recording formats
//! every event, so a traced run is several times slower; an untraced run
//! pays one branch per event.

use std::fmt::{Debug, Write as _};
use std::ops::Range;

use serde::{Deserialize, Serialize};
use units::SimTime;

/// Events between checkpoints unless the caller says otherwise: a
/// 40-node second (~6M events) keeps ~90 of them.
pub const DEFAULT_CHECKPOINT_EVENTS: u64 = 1 << 16;

/// The most events a window may record in full (each is a line of text).
pub const MAX_WINDOW_EVENTS: u64 = 1_000_000;

/// What to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// Events between checkpoints (at least 1).
    pub checkpoint_every: u64,
    /// Events (by index from 0) to keep in full, if any.
    pub window: Option<Range<u64>>,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            checkpoint_every: DEFAULT_CHECKPOINT_EVENTS,
            window: None,
        }
    }
}

impl TraceOptions {
    /// Checks the options: a bad one is an error naming it.
    pub fn validate(&self) -> Result<(), TraceError> {
        let fail = |field: &'static str, reason: String| Err(TraceError::Option { field, reason });
        if self.checkpoint_every == 0 {
            return fail(
                "checkpoint_every",
                "the checkpoint interval must be at least 1 event".into(),
            );
        }
        if let Some(window) = &self.window {
            if window.start >= window.end {
                return fail(
                    "window",
                    format!(
                        "the trace window {}..{} holds no event (FROM must be below TO)",
                        window.start, window.end
                    ),
                );
            }
            if window.end - window.start > MAX_WINDOW_EVENTS {
                return fail("window", format!(
                    "the trace window {}..{} holds {} events, more than the {MAX_WINDOW_EVENTS} it may keep",
                    window.start,
                    window.end,
                    window.end - window.start
                ));
            }
        }
        Ok(())
    }
}

/// Trace options or a trace file refused: the option or the file (and its
/// field), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceError {
    /// An option out of range.
    Option {
        /// The [`TraceOptions`] field: `checkpoint_every` or `window`.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A `trace.json` that cannot be read or is not a trace.
    File {
        /// The file.
        file: std::path::PathBuf,
        /// The field at fault, when one is.
        field: Option<&'static str>,
        /// What is wrong.
        reason: String,
    },
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Option { reason, .. } => write!(f, "{reason}"),
            TraceError::File {
                file,
                field,
                reason,
            } => {
                write!(f, "{}: ", file.display())?;
                if let Some(field) = field {
                    write!(f, "{field}: ")?;
                }
                write!(f, "{reason}")
            }
        }
    }
}

impl std::error::Error for TraceError {}

/// The hash after a number of events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Events recorded so far.
    pub events: u64,
    /// The time of the last of them, in nanoseconds.
    pub at_ns: u64,
    /// The running hash, 16 hex digits.
    pub hash: String,
}

/// One event of a window, in full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracedEvent {
    /// Its index in the run (from 0).
    pub index: u64,
    /// When it happened.
    pub at: SimTime,
    /// What it was (its `Debug` text).
    pub event: String,
}

/// The fingerprint of a run's events.
#[derive(Clone, Debug)]
pub struct Trace {
    options: TraceOptions,
    events: u64,
    last_at: SimTime,
    hash: u64,
    checkpoints: Vec<Checkpoint>,
    window_events: Vec<TracedEvent>,
    /// Reused for each event's text.
    text: String,
}

const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

impl Trace {
    /// An empty trace; `options` must be valid ([`TraceOptions::validate`]).
    pub fn new(options: TraceOptions) -> Trace {
        assert!(
            options.validate().is_ok(),
            "invalid trace options {options:?}"
        );
        Trace {
            options,
            events: 0,
            last_at: SimTime::ZERO,
            hash: FNV_OFFSET,
            checkpoints: Vec::new(),
            window_events: Vec::new(),
            text: String::new(),
        }
    }

    /// Folds in the next event, handed out at `at`.
    pub fn record(&mut self, at: SimTime, event: &dyn Debug) {
        debug_assert!(at >= self.last_at, "events are recorded in time order");
        self.text.clear();
        write!(self.text, "{event:?}").expect("formatting into a String cannot fail");
        self.hash = fnv1a(self.hash, &at.as_nanos().to_le_bytes());
        self.hash = fnv1a(self.hash, self.text.as_bytes());
        if self
            .options
            .window
            .as_ref()
            .is_some_and(|window| window.contains(&self.events))
        {
            self.window_events.push(TracedEvent {
                index: self.events,
                at,
                event: self.text.clone(),
            });
        }
        self.events += 1;
        self.last_at = at;
        if self.events.is_multiple_of(self.options.checkpoint_every) {
            self.checkpoint();
        }
    }

    fn checkpoint(&mut self) {
        self.checkpoints.push(Checkpoint {
            events: self.events,
            at_ns: self.last_at.as_nanos(),
            hash: hex(self.hash),
        });
    }

    /// Closes the trace: the last checkpoint is the whole run's.
    pub fn finish(&mut self) {
        if self
            .checkpoints
            .last()
            .is_none_or(|last| last.events != self.events)
        {
            self.checkpoint();
        }
    }

    /// Events recorded.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The running hash over every event recorded.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The checkpoints, in order (the last is the run's end once
    /// [`Trace::finish`]ed).
    pub fn checkpoints(&self) -> &[Checkpoint] {
        &self.checkpoints
    }

    /// The window's events, in order.
    pub fn window_events(&self) -> &[TracedEvent] {
        &self.window_events
    }

    /// `trace.json`: the events, the hash and the checkpoints.
    pub fn to_json(&self) -> String {
        let file = TraceFile {
            events: self.events,
            hash: hex(self.hash),
            checkpoint_every: self.options.checkpoint_every,
            checkpoints: self.checkpoints.clone(),
        };
        let mut json = serde_json::to_string_pretty(&file).expect("a trace serializes");
        json.push('\n');
        json
    }

    /// `trace-events.txt`: one line per event of the window: its index,
    /// its time in nanoseconds and its `Debug` text.
    pub fn window_text(&self) -> String {
        let mut text = String::new();
        for event in &self.window_events {
            let _ = writeln!(
                text,
                "{} {} {}",
                event.index,
                event.at.as_nanos(),
                event.event
            );
        }
        text
    }

    /// Reads back a [`Trace::window_text`]; a bad line is `None`.
    pub fn parse_window_line(line: &str) -> Option<TracedEvent> {
        let mut parts = line.splitn(3, ' ');
        let index = parts.next()?.parse().ok()?;
        let at = SimTime::from_nanos(parts.next()?.parse().ok()?);
        let event = parts.next()?.to_string();
        Some(TracedEvent { index, at, event })
    }
}

/// `trace.json` as written and read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    /// Events in the run.
    pub events: u64,
    /// The hash over all of them.
    pub hash: String,
    /// Events between checkpoints.
    pub checkpoint_every: u64,
    /// The checkpoints, the last at the run's end.
    pub checkpoints: Vec<Checkpoint>,
}

impl TraceFile {
    /// Reads a `trace.json`; a bad file is an error naming it and why.
    pub fn read(path: &std::path::Path) -> Result<TraceFile, TraceError> {
        let fail = |field: Option<&'static str>, reason: String| TraceError::File {
            file: path.to_path_buf(),
            field,
            reason,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|error| fail(None, format!("cannot read it: {error}")))?;
        let file: TraceFile = serde_json::from_str(&text).map_err(|error| {
            fail(
                None,
                format!("not a trace written by `twin run --trace`: {error}"),
            )
        })?;
        if file.checkpoint_every == 0 {
            return Err(fail(Some("checkpoint_every"), "must be at least 1".into()));
        }
        Ok(file)
    }
}

/// Where two runs' event streams part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Events both runs have alike (the last equal checkpoint's count).
    pub agreed_events: u64,
    /// The time of the last of them, in nanoseconds (0 if none).
    pub agreed_at_ns: u64,
    /// The events within which they part: record them with
    /// [`TraceOptions::window`] to see the first that differs.
    pub window: Range<u64>,
}

/// The first checkpoint window where two runs' checkpoints differ, or
/// `None` if they are the same. Both must have been taken at the same
/// interval.
pub fn first_divergence(a: &[Checkpoint], b: &[Checkpoint]) -> Option<Divergence> {
    let (mut agreed_events, mut agreed_at_ns) = (0, 0);
    for (x, y) in a.iter().zip(b) {
        if x != y {
            // Ends of runs are checkpoints too, so the window can be short
            // on one side; it reaches the later of the two.
            return Some(Divergence {
                agreed_events,
                agreed_at_ns,
                window: agreed_events..x.events.max(y.events).max(agreed_events + 1),
            });
        }
        agreed_events = x.events;
        agreed_at_ns = x.at_ns;
    }
    if a.len() == b.len() {
        return None;
    }
    // One run went on past the other's end.
    let longer = if a.len() > b.len() { a } else { b };
    let next = &longer[a.len().min(b.len())];
    Some(Divergence {
        agreed_events,
        agreed_at_ns,
        window: agreed_events..next.events.max(agreed_events + 1),
    })
}

/// The first event where two runs' recorded windows differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DifferingEvent {
    /// Its index in the runs.
    pub index: u64,
    /// The first run's event there (`None`: the run had ended).
    pub first: Option<TracedEvent>,
    /// The second run's.
    pub second: Option<TracedEvent>,
}

impl std::fmt::Display for DifferingEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |event: &Option<TracedEvent>| match event {
            Some(event) => format!("at {}: {}", event.at, event.event),
            None => "(the run had ended)".to_string(),
        };
        write!(
            f,
            "event {} differs\n  first:  {}\n  second: {}",
            self.index,
            side(&self.first),
            side(&self.second)
        )
    }
}

/// The first event where two recordings of the same window differ (time
/// or content), or `None` if every event of both is the same.
pub fn first_differing_event(a: &[TracedEvent], b: &[TracedEvent]) -> Option<DifferingEvent> {
    let length = a.len().max(b.len());
    (0..length).find_map(|position| {
        let (x, y) = (a.get(position), b.get(position));
        (x != y).then(|| DifferingEvent {
            index: x.or(y).map_or(position as u64, |event| event.index),
            first: x.cloned(),
            second: y.cloned(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(nanos: u64) -> SimTime {
        SimTime::from_nanos(nanos)
    }

    fn trace_of(events: &[(u64, &str)], options: TraceOptions) -> Trace {
        let mut trace = Trace::new(options);
        for &(time, event) in events {
            trace.record(at(time), &event);
        }
        trace.finish();
        trace
    }

    fn every(events: u64) -> TraceOptions {
        TraceOptions {
            checkpoint_every: events,
            window: None,
        }
    }

    const RUN: [(u64, &str); 7] = [
        (0, "start"),
        (5, "send"),
        (5, "send"),
        (9, "arrive"),
        (12, "reply"),
        (12, "tick"),
        (20, "end"),
    ];

    #[test]
    fn the_same_events_give_the_same_checkpoints_and_a_changed_one_is_found() {
        let a = trace_of(&RUN, every(2));
        let b = trace_of(&RUN, every(2));
        assert_eq!(a.checkpoints(), b.checkpoints());
        assert_eq!(a.hash(), b.hash());
        assert_eq!(first_divergence(a.checkpoints(), b.checkpoints()), None);
        // Checkpoints after 2, 4 and 6 events, and the end at 7.
        let counts: Vec<u64> = a.checkpoints().iter().map(|c| c.events).collect();
        assert_eq!(counts, [2, 4, 6, 7]);

        // Event 4 (the reply) comes a nanosecond late, and the tick after
        // it with it.
        let mut late = RUN;
        late[4].0 = 13;
        late[5].0 = 13;
        let c = trace_of(&late, every(2));
        let divergence = first_divergence(a.checkpoints(), c.checkpoints()).expect("they differ");
        assert_eq!(divergence.agreed_events, 4);
        assert_eq!(divergence.agreed_at_ns, 9);
        assert_eq!(divergence.window, 4..6);

        // Recording that window in both names the event.
        let window = TraceOptions {
            checkpoint_every: 2,
            window: Some(divergence.window.clone()),
        };
        let (a, c) = (trace_of(&RUN, window.clone()), trace_of(&late, window));
        assert_eq!(a.window_events().len(), 2);
        let differing = first_differing_event(a.window_events(), c.window_events()).expect("found");
        assert_eq!(differing.index, 4);
        assert_eq!(differing.first.as_ref().map(|e| e.at), Some(at(12)));
        assert_eq!(differing.second.as_ref().map(|e| e.at), Some(at(13)));
        assert!(differing.to_string().contains("event 4 differs"));
    }

    #[test]
    fn a_different_event_at_the_same_time_and_a_longer_run_are_divergences() {
        let a = trace_of(&RUN, every(3));
        let mut other = RUN;
        other[1].1 = "sent";
        let b = trace_of(&other, every(3));
        let divergence = first_divergence(a.checkpoints(), b.checkpoints()).expect("differ");
        assert_eq!(divergence.window, 0..3);

        // One more event at the end: equal up to 6, parted after.
        let mut longer = RUN.to_vec();
        longer.push((25, "extra"));
        let c = trace_of(&longer, every(3));
        let divergence = first_divergence(a.checkpoints(), c.checkpoints()).expect("differ");
        assert_eq!(divergence.agreed_events, 6);
        assert_eq!(divergence.window, 6..8);
        let window = TraceOptions {
            checkpoint_every: 3,
            window: Some(divergence.window),
        };
        let (a, c) = (trace_of(&RUN, window.clone()), trace_of(&longer, window));
        let differing = first_differing_event(a.window_events(), c.window_events()).expect("found");
        assert_eq!(differing.index, 7);
        assert_eq!(differing.first, None);
        assert!(differing.to_string().contains("the run had ended"));
    }

    #[test]
    fn the_file_round_trips_and_bad_options_and_files_are_refused() {
        let trace = trace_of(&RUN, every(4));
        let dir = std::env::temp_dir().join(format!("twin-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trace.json");
        std::fs::write(&path, trace.to_json()).unwrap();
        let file = TraceFile::read(&path).expect("reads back");
        assert_eq!(file.events, 7);
        assert_eq!(file.hash, format!("{:016x}", trace.hash()));
        assert_eq!(file.checkpoints, trace.checkpoints());

        std::fs::write(&path, "{\"events\": 1}").unwrap();
        let error = TraceFile::read(&path).unwrap_err().to_string();
        assert!(
            error.contains("not a trace written by `twin run --trace`"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);

        assert!(every(0)
            .validate()
            .unwrap_err()
            .to_string()
            .contains("at least 1"));
        let empty = TraceOptions {
            checkpoint_every: 1,
            window: Some(5..5),
        };
        assert!(empty
            .validate()
            .unwrap_err()
            .to_string()
            .contains("holds no event"));
        let huge = TraceOptions {
            checkpoint_every: 1,
            window: Some(0..MAX_WINDOW_EVENTS + 1),
        };
        assert!(huge
            .validate()
            .unwrap_err()
            .to_string()
            .contains("more than"));
    }
}
