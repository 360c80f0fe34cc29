//! The classic HOLD benchmark of an event queue, on the twin's kernel and on
//! a bare `std::collections::BinaryHeap` loop.
//!
//! HOLD keeps `N` events pending. Handling an event (one *hold operation*)
//! pops the earliest event and schedules exactly one new event at
//! `now + 0.1 s + Exp(mean 1 s)`, so the queue size stays `N` for the whole
//! run and what is measured is the cost of one pop plus one push at a steady
//! queue size. The run stops when the next event is later than
//! `until_seconds` of simulated time; in steady state it handles about
//! `N * until_seconds / 1.1` events.
//!
//! The same model runs twice in one process:
//! - on [`Kernel<u32>`](crate::kernel::Kernel) with [`Kernel::schedule_at`]
//!   and [`Kernel::pop_until`], each event carrying its index as payload;
//! - on a bare `BinaryHeap<Reverse<(time ns, sequence)>>`, which orders ties
//!   the same way (insertion sequence) but knows nothing of timers, limits or
//!   payloads.
//!
//! Both loops draw their delays from a fresh copy of the same named stream
//! (`"bench/hold"`) in the same order, with the same integer-nanosecond
//! arithmetic, so they pay the same RNG cost and handle exactly the same
//! events: their event counts and a checksum of the handled times must match,
//! which doubles as a correctness check of the kernel's ordering. Filling the
//! queue with the first `N` events is not timed; the hold loop is.
//!
//! The ratio of the two rates is the kernel's overhead over the floor a
//! binary heap can give; the target is `ratio >= 0.6` at `N = 10,000`.
//!
//! [`Kernel::schedule_at`]: crate::kernel::Kernel::schedule_at
//! [`Kernel::pop_until`]: crate::kernel::Kernel::pop_until

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use rand::RngExt;
use rand_distr::Exp;
use units::{SimTime, NANOS_PER_SECOND};

use crate::kernel::Kernel;
use crate::rng::{self, SimRng};

/// The name of the random stream both loops draw from.
const STREAM: &str = "bench/hold";
/// The fixed part of every delay: 0.1 s.
const FIXED_DELAY_NANOS: u64 = 100_000_000;
/// The target ratio of kernel to bare-heap throughput at `N = 10,000`.
pub const TARGET_RATIO: f64 = 0.6;

/// What to run.
#[derive(Clone, Debug)]
pub struct HoldConfig {
    /// Events kept pending (the queue size `N`).
    pub pending: usize,
    /// Simulated seconds to run for.
    pub until_seconds: f64,
    /// The run seed; the delays come from its `"bench/hold"` stream.
    pub seed: u64,
}

/// Both loops' counts, wall times and rates.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HoldReport {
    /// Events kept pending.
    pub pending: usize,
    /// Simulated seconds run.
    pub until_seconds: f64,
    /// Hold operations handled by the twin's kernel.
    pub twin_events: u64,
    /// Wall time of the kernel's hold loop.
    pub twin_wall_seconds: f64,
    /// Hold operations per wall second on the kernel.
    pub twin_events_per_s: f64,
    /// Hold operations handled by the bare heap loop (equals `twin_events`).
    pub heap_events: u64,
    /// Wall time of the bare heap's hold loop.
    pub heap_wall_seconds: f64,
    /// Hold operations per wall second on the bare heap.
    pub heap_events_per_s: f64,
    /// `twin_events_per_s / heap_events_per_s`.
    pub ratio: f64,
}

/// The delay generator both loops share: 0.1 s + Exp(mean 1 s), in whole
/// nanoseconds.
struct Delays {
    rng: SimRng,
    exp: Exp<f64>,
}

impl Delays {
    fn new(seed: u64) -> Self {
        Delays {
            rng: rng::stream(seed, STREAM),
            exp: Exp::new(1.0).expect("rate 1 is a valid exponential rate"),
        }
    }

    #[inline(always)]
    fn next_nanos(&mut self) -> u64 {
        let seconds: f64 = self.rng.sample(self.exp);
        // `as` saturates; the exponential draw is finite and non-negative.
        FIXED_DELAY_NANOS + (seconds * NANOS_PER_SECOND as f64) as u64
    }
}

/// One loop's outcome.
struct LoopResult {
    events: u64,
    wall_seconds: f64,
    /// Wrapping sum of the handled events' times: both loops must agree.
    time_checksum: u64,
}

/// Wall time, for the benchmark's own figures only (never inside a model).
#[allow(clippy::disallowed_methods)] // wall time for benchmark figures only
fn wall_clock() -> Instant {
    Instant::now()
}

fn until_nanos(until_seconds: f64) -> u64 {
    let nanos = until_seconds * NANOS_PER_SECOND as f64;
    if nanos.is_nan() || nanos <= 0.0 {
        0
    } else {
        nanos as u64 // saturates at u64::MAX
    }
}

fn run_kernel(config: &HoldConfig) -> LoopResult {
    let mut delays = Delays::new(config.seed);
    let mut kernel: Kernel<u32> = Kernel::new();
    for index in 0..config.pending {
        // The payload is only carried around; wrapping past u32 is harmless.
        kernel.schedule_at(SimTime::from_nanos(delays.next_nanos()), index as u32);
    }
    let limit = SimTime::from_nanos(until_nanos(config.until_seconds));
    let before = kernel.events_processed();

    let mut events: u64 = 0;
    let mut time_checksum: u64 = 0;
    let mut payload_checksum: u64 = 0;
    let start = wall_clock();
    while let Some((time, index)) = kernel.pop_until(limit) {
        let now = time.as_nanos();
        events += 1;
        time_checksum = time_checksum.wrapping_add(now);
        payload_checksum = payload_checksum.wrapping_add(u64::from(index));
        let next = now.saturating_add(delays.next_nanos());
        kernel.schedule_at(SimTime::from_nanos(next), black_box(index));
    }
    let wall_seconds = start.elapsed().as_secs_f64();
    black_box(payload_checksum);
    assert_eq!(
        kernel.events_processed() - before,
        events,
        "the kernel's own count disagrees with the loop's"
    );
    assert_eq!(
        kernel.pending(),
        config.pending,
        "HOLD keeps the queue size constant"
    );
    LoopResult {
        events,
        wall_seconds,
        time_checksum: black_box(time_checksum),
    }
}

fn run_heap(config: &HoldConfig) -> LoopResult {
    let mut delays = Delays::new(config.seed);
    let mut heap: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    let mut sequence: u64 = 0;
    for _ in 0..config.pending {
        heap.push(Reverse((delays.next_nanos(), sequence)));
        sequence += 1;
    }
    let limit = until_nanos(config.until_seconds);

    let mut events: u64 = 0;
    let mut time_checksum: u64 = 0;
    let start = wall_clock();
    while let Some(&Reverse((top, _))) = heap.peek() {
        if top > limit {
            break;
        }
        let Some(Reverse((now, _))) = heap.pop() else {
            break;
        };
        events += 1;
        time_checksum = time_checksum.wrapping_add(now);
        let next = now.saturating_add(delays.next_nanos());
        heap.push(Reverse((next, black_box(sequence))));
        sequence += 1;
    }
    let wall_seconds = start.elapsed().as_secs_f64();
    assert_eq!(
        heap.len(),
        config.pending,
        "HOLD keeps the queue size constant"
    );
    LoopResult {
        events,
        wall_seconds,
        time_checksum: black_box(time_checksum),
    }
}

fn rate(events: u64, wall_seconds: f64) -> f64 {
    if wall_seconds > 0.0 {
        events as f64 / wall_seconds
    } else {
        0.0
    }
}

/// Runs HOLD on the kernel, then on the bare heap, and compares them.
///
/// Panics if the two loops handled different events: that would be a bug in
/// the kernel's ordering, not a performance result.
pub fn run_hold(config: &HoldConfig) -> HoldReport {
    let twin = run_kernel(config);
    let heap = run_heap(config);
    assert_eq!(
        twin.events, heap.events,
        "the kernel and the bare heap handled different numbers of events"
    );
    assert_eq!(
        twin.time_checksum, heap.time_checksum,
        "the kernel and the bare heap handled events at different times"
    );
    let twin_events_per_s = rate(twin.events, twin.wall_seconds);
    let heap_events_per_s = rate(heap.events, heap.wall_seconds);
    let ratio = if heap_events_per_s > 0.0 {
        twin_events_per_s / heap_events_per_s
    } else {
        0.0
    };
    HoldReport {
        pending: config.pending,
        until_seconds: config.until_seconds,
        twin_events: twin.events,
        twin_wall_seconds: twin.wall_seconds,
        twin_events_per_s,
        heap_events: heap.events,
        heap_wall_seconds: heap.wall_seconds,
        heap_events_per_s,
        ratio,
    }
}

impl HoldReport {
    /// A short human-readable table of both loops and their ratio.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "HOLD: {} pending events, {} s simulated",
            self.pending, self.until_seconds
        );
        let _ = writeln!(
            text,
            "{:<10} {:>14} {:>10} {:>14}",
            "queue", "events", "wall s", "events/s"
        );
        let _ = writeln!(
            text,
            "{:<10} {:>14} {:>10.3} {:>14.0}",
            "twin", self.twin_events, self.twin_wall_seconds, self.twin_events_per_s
        );
        let _ = writeln!(
            text,
            "{:<10} {:>14} {:>10.3} {:>14.0}",
            "heap", self.heap_events, self.heap_wall_seconds, self.heap_events_per_s
        );
        let _ = writeln!(text, "ratio (twin / heap): {:.3}", self.ratio);
        let _ = writeln!(text, "target: ratio >= {TARGET_RATIO} at pending = 10,000");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(seed: u64) -> HoldConfig {
        HoldConfig {
            pending: 100,
            until_seconds: 5.0,
            seed,
        }
    }

    #[test]
    fn both_loops_handle_the_same_events_at_positive_rates() {
        let report = run_hold(&tiny(1));
        assert_eq!(report.twin_events, report.heap_events);
        // 100 pending, mean gap 1.1 s, 5 s: a few hundred events.
        assert!(report.twin_events > 100, "{report:?}");
        assert!(report.twin_events_per_s > 0.0, "{report:?}");
        assert!(report.heap_events_per_s > 0.0, "{report:?}");
        assert!(report.ratio > 0.0, "{report:?}");
        let text = report.to_text();
        assert!(text.contains("ratio"), "{text}");
        assert!(text.contains("0.6"), "{text}");
    }

    #[test]
    fn the_same_seed_gives_the_same_event_count() {
        let first = run_hold(&tiny(42));
        let second = run_hold(&tiny(42));
        assert_eq!(first.twin_events, second.twin_events);
        assert_eq!(first.heap_events, second.heap_events);
    }

    #[test]
    fn nothing_pending_or_no_time_handles_no_events() {
        let empty = run_hold(&HoldConfig {
            pending: 0,
            until_seconds: 5.0,
            seed: 1,
        });
        assert_eq!((empty.twin_events, empty.heap_events), (0, 0));
        let instant = run_hold(&HoldConfig {
            pending: 10,
            until_seconds: 0.0,
            seed: 1,
        });
        assert_eq!((instant.twin_events, instant.heap_events), (0, 0));
        assert_eq!(instant.ratio, 0.0);
    }

    /// The figures quoted in the README; run with
    /// `cargo test --release -p twin-sim bench_hold -- --ignored --nocapture`.
    #[test]
    #[ignore = "a release-mode measurement, not a test"]
    fn hold_release_figures() {
        let report = run_hold(&HoldConfig {
            pending: 10_000,
            until_seconds: 2000.0,
            seed: 1,
        });
        print!("{}", report.to_text());
        assert_eq!(report.twin_events, report.heap_events);
    }
}
