//! The node's timers: one deadline per kind, the earliest is the node's
//! `poll_timeout` (the pattern of quinn-proto's `connection/timer.rs`).

use units::SimTime;

/// Every kind of timer a node sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Periodic commitlog sync: write out the partly filled buffer
    /// (`commitlog_sync_period_in_ms`).
    CommitlogSync = 0,
    /// The compaction backlog controller's adjustment (250 ms).
    CompactionController = 1,
    /// The memtable-flush backlog controller's adjustment (250 ms in 2.2,
    /// 50 ms from 2.3).
    FlushController = 2,
    /// Compaction reads held back by the throughput limit
    /// (`compaction_throughput_mb_per_sec`) may go.
    CompactionThrottle = 3,
    /// The earliest LOGGED batch still waiting for its batchlog times out.
    BatchlogDeadline = 4,
}

const TIMER_KINDS: usize = 5;

// Each kind's discriminant is its slot in the table.
const _: () = {
    let mut slot = 0;
    while slot < TIMER_KINDS {
        assert!(TimerKind::ALL[slot] as usize == slot);
        slot += 1;
    }
};

impl TimerKind {
    const ALL: [TimerKind; TIMER_KINDS] = [
        TimerKind::CommitlogSync,
        TimerKind::CompactionController,
        TimerKind::FlushController,
        TimerKind::CompactionThrottle,
        TimerKind::BatchlogDeadline,
    ];
}

/// The earlier of two optional deadlines (`None`: not armed).
#[inline]
pub fn earlier(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
    let first = match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    };
    debug_assert!(
        a.is_none_or(|a| first.is_some_and(|first| first <= a))
            && b.is_none_or(|b| first.is_some_and(|first| first <= b)),
        "the earlier deadline is at or before both"
    );
    first
}

/// A fixed table of optional deadlines, one per [`TimerKind`].
#[derive(Clone, Debug, Default)]
pub struct TimerTable {
    deadlines: [Option<SimTime>; TIMER_KINDS],
}

impl TimerTable {
    /// Arms (or re-arms) `kind` for `at`.
    pub fn set(&mut self, kind: TimerKind, at: SimTime) {
        self.deadlines[kind as usize] = Some(at);
    }

    /// Disarms `kind`.
    pub fn stop(&mut self, kind: TimerKind) {
        self.deadlines[kind as usize] = None;
    }

    /// The deadline of `kind`, if armed.
    pub fn get(&self, kind: TimerKind) -> Option<SimTime> {
        self.deadlines[kind as usize]
    }

    /// The earliest armed deadline.
    #[inline]
    pub fn next_deadline(&self) -> Option<SimTime> {
        let next = self
            .deadlines
            .iter()
            .fold(None, |earliest, &deadline| earlier(earliest, deadline));
        debug_assert_eq!(
            next.is_some(),
            self.deadlines.iter().any(Option::is_some),
            "a deadline exactly when a timer is armed"
        );
        next
    }

    /// Disarms and returns the first timer due at or before `now`.
    pub fn take_expired(&mut self, now: SimTime) -> Option<TimerKind> {
        let kind = TimerKind::ALL
            .into_iter()
            .find(|kind| self.deadlines[*kind as usize].is_some_and(|at| at <= now))?;
        self.stop(kind);
        debug_assert!(self.get(kind).is_none(), "an expired timer is disarmed");
        Some(kind)
    }
}
