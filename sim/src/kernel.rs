//! The discrete-event kernel: virtual time and one ordered queue of events.
//!
//! Events are ordered by (time, source, the source's count). The *source*
//! is whatever the driver says is scheduling ([`Kernel::set_source`]; 0
//! unless it says otherwise), and each source counts the events it has
//! scheduled. Two events due at the same nanosecond run in the order of
//! their sources, then in the order each source scheduled them: every
//! run, so a run is a pure function of its inputs and seed. With one
//! source this is insertion order. With the cluster's logical processes
//! as sources (each node, each client process, and the whole run's
//! barrier events as source 0), the order of the events one logical
//! process handles does not depend on how the others' events interleave
//! with them, which is what lets a run be split across threads and stay
//! the same bytes.
//!
//! Two kinds of entries share the queue:
//! - plain events ([`Kernel::schedule_at`]), which always fire;
//! - timers ([`Kernel::set_timer`]), which return a [`TimerId`] and can be
//!   cancelled. A cancelled timer stays in the heap (removing from the middle
//!   of a binary heap is O(n)) and is skipped when it reaches the top; a slot
//!   table with generation counters tells live timers from cancelled ones in
//!   O(1) and without allocation once warmed up. The entry's own insertion
//!   sequence (unique per run) doubles as the generation, which keeps a heap
//!   entry at 24 bytes for small events (the HOLD benchmark showed entry
//!   size, not logic, is what separates the kernel from a bare heap).
//!
//! Events themselves wait in a slab beside the heap, which holds only
//! 24-byte keys `(time, sequence, timer slot, event slot)`: sifting moves
//! keys, not events, so a large event type (the cluster's is ~56 bytes)
//! costs one slab insert and remove instead of being copied at every level
//! of every sift (the 40-node profile spent most of the run loop there).
//!
//! The queue is a radix heap (`RadixHeap`) keyed by `(time, sequence)`,
//! which relies on the queue being monotone (nothing is scheduled before the
//! event last popped). The
//! HOLD benchmark (`twin bench hold`) compares it with a bare
//! `std::collections::BinaryHeap` loop so that the cost of ordering ties and
//! cancellation stays visible.
//!
//! Bounds: [`Kernel::with_limits`] caps the number of pending entries; going
//! over it is a bug in the model (an unbounded feedback loop), so it panics
//! with the kernel's state rather than eating all memory.

use units::{SimDuration, SimTime};

/// A handle to a cancellable timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerId {
    slot: u32,
    sequence: u64,
}

/// Marks a plain (non-timer) entry.
const NO_TIMER: u32 = u32::MAX;
/// Bits of an entry's sequence that hold its source's count; the bits
/// above hold the source ([`Kernel::set_source`]). 2^40 events from one
/// source, 2^24 sources.
const SOURCE_COUNT_BITS: u32 = 40;
/// Sources a kernel takes: the source sits above the count in 64 bits.
pub const MAX_SOURCES: u32 = 1 << (64 - SOURCE_COUNT_BITS);
/// A timer slot with no live timer (no entry has this sequence).
const RETIRED: u64 = u64::MAX;

struct Entry {
    time: SimTime,
    sequence: u64,
    timer_slot: u32,
    event_slot: u32,
}

impl Entry {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time.as_nanos(), self.sequence)
    }
}

/// A radix heap of entries by time, ties in sequence order.
///
/// A discrete-event queue is monotone: nothing is scheduled before the
/// event last taken out. A radix heap uses that: it keeps the time last
/// popped and files each entry in the bucket of the highest bit where its
/// time differs from it. A push is an append to one of 65 vectors; a pop
/// takes the earliest entry of the lowest non-empty bucket and files that
/// bucket's other entries again, relative to the new time, each into a
/// lower bucket, so an entry moves at most a few dozen times over its life
/// and memory is touched in runs rather than all over a heap. Bucket 0
/// holds the entries due at exactly the last time popped, in sequence
/// order: entries filed there by a pop are sorted once, and a push at the
/// current time has a larger sequence than any queued. On the 40-node
/// benchmark (a few thousand entries, most due within a millisecond, a few
/// thousand client issues ~10 ms ahead) it beats the 4-ary heap it
/// replaced; `twin bench hold` compares it with a bare binary heap.
struct RadixHeap {
    /// The time of the entry popped last (0 before the first).
    last: u64,
    /// Entries due at `last`, in sequence order.
    now_bucket: std::collections::VecDeque<Entry>,
    /// `buckets[b]` holds entries whose time differs from `last` first at
    /// bit `b` (counting from 0 at the lowest).
    buckets: [Vec<Entry>; 64],
    /// Bit `b` set iff `buckets[b]` is non-empty.
    occupied: u64,
    len: usize,
}

impl RadixHeap {
    fn new() -> RadixHeap {
        RadixHeap {
            last: 0,
            now_bucket: std::collections::VecDeque::new(),
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            len: 0,
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    /// The bucket of a `time` later than `last`: the highest bit where
    /// they differ.
    #[inline]
    fn bucket_of(time: u64, last: u64) -> usize {
        debug_assert!(time > last);
        63 - (time ^ last).leading_zeros() as usize
    }

    #[inline]
    fn push(&mut self, entry: Entry) {
        let time = entry.time.as_nanos();
        debug_assert!(time >= self.last, "radix heap times must not decrease");
        if time == self.last {
            if self
                .now_bucket
                .back()
                .is_none_or(|back| back.sequence < entry.sequence)
            {
                self.now_bucket.push_back(entry);
            } else {
                // A source lower than one already due now: its place.
                let at = self
                    .now_bucket
                    .partition_point(|queued| queued.sequence < entry.sequence);
                self.now_bucket.insert(at, entry);
            }
        } else {
            let bucket = Self::bucket_of(time, self.last);
            self.buckets[bucket].push(entry);
            self.occupied |= 1 << bucket;
        }
        self.len += 1;
    }

    /// The earliest entry of the lowest non-empty bucket: its bucket and
    /// position there.
    #[inline]
    fn find_min(&self) -> Option<(usize, usize)> {
        if self.occupied == 0 {
            return None;
        }
        let bucket = self.occupied.trailing_zeros() as usize;
        let entries = &self.buckets[bucket];
        let mut best = 0;
        let mut best_key = entries[0].key();
        for (position, entry) in entries.iter().enumerate().skip(1) {
            let key = entry.key();
            if key < best_key {
                best = position;
                best_key = key;
            }
        }
        Some((bucket, best))
    }

    fn peek(&self) -> Option<&Entry> {
        if let Some(front) = self.now_bucket.front() {
            return Some(front);
        }
        self.find_min()
            .map(|(bucket, position)| &self.buckets[bucket][position])
    }

    /// Removes and returns the earliest entry if `take` accepts it.
    #[inline]
    fn pop_if(&mut self, take: impl FnOnce(&Entry) -> bool) -> Option<Entry> {
        if self.now_bucket.is_empty() {
            let (bucket, position) = self.find_min()?;
            if !take(&self.buckets[bucket][position]) {
                return None;
            }
            // Move on to the earliest time and file the bucket again: its
            // entries at that time into `now_bucket`, the rest lower.
            self.last = self.buckets[bucket][position].time.as_nanos();
            self.occupied &= !(1 << bucket);
            let mut entries = std::mem::take(&mut self.buckets[bucket]);
            for entry in entries.drain(..) {
                let time = entry.time.as_nanos();
                if time == self.last {
                    self.now_bucket.push_back(entry);
                } else {
                    let lower = Self::bucket_of(time, self.last);
                    self.buckets[lower].push(entry);
                    self.occupied |= 1 << lower;
                }
            }
            self.buckets[bucket] = entries; // keeps its capacity
            if self.now_bucket.len() > 1 {
                self.now_bucket
                    .make_contiguous()
                    .sort_unstable_by_key(|entry| entry.sequence);
            }
        } else if !take(self.now_bucket.front().expect("not empty")) {
            return None;
        }
        self.len -= 1;
        self.now_bucket.pop_front()
    }

    #[cfg(test)]
    fn pop(&mut self) -> Option<Entry> {
        self.pop_if(|_| true)
    }
}

/// An event the kernel refused to queue: scheduling it was a bug of the
/// mechanism that asked (or an input too large for it), which the run
/// reports as an error naming that mechanism rather than a panic.
#[derive(Debug)]
pub struct Refused<E> {
    /// When the event was asked for.
    pub at: SimTime,
    /// The simulated time then.
    pub now: SimTime,
    /// Why it was refused.
    pub reason: RefusedBecause,
    /// The event itself, whose kind names the mechanism.
    pub event: E,
}

/// Why the kernel refused an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusedBecause {
    /// It was due before the current time.
    InThePast,
    /// The queue held its limit of pending entries (a model scheduling
    /// without bound).
    QueueFull {
        /// The limit.
        limit: usize,
    },
}

impl std::fmt::Display for RefusedBecause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefusedBecause::InThePast => f.write_str("an event due in the past"),
            RefusedBecause::QueueFull { limit } => {
                write!(
                    f,
                    "an event past the queue's limit of {limit} pending events"
                )
            }
        }
    }
}

/// The kernel: owns virtual time and the event queue.
pub struct Kernel<E> {
    now: SimTime,
    /// The source scheduling now ([`Kernel::set_source`]).
    source: u32,
    /// How many entries each source has scheduled, by source.
    scheduled_by: Vec<u64>,
    queue: RadixHeap,
    /// The events of the queued entries, by `Entry::event_slot`.
    events: slab::Slab<E>,
    /// Sequence of the live timer in each slot (`RETIRED` if none); a queued
    /// timer is live iff its sequence equals its slot's.
    timer_sequences: Vec<u64>,
    free_timer_slots: Vec<u32>,
    live_timers: usize,
    events_processed: u64,
    pending_limit: usize,
    /// The first event refused, kept for the driver to report; later ones
    /// are dropped (the run stops at the first).
    refused: Option<Refused<E>>,
    /// With [`Kernel::track_causes`]: each queued event's [`Cause`], by
    /// `Entry::event_slot`.
    causes: Option<Vec<Cause>>,
    /// The mark [`Kernel::set_cause_mark`] gave the event being handled:
    /// every event scheduled meanwhile carries it.
    cause_mark: u64,
    /// The cause of the event popped last.
    popped_cause: Cause,
}

/// What scheduled an event ([`Kernel::track_causes`]): the time it was
/// scheduled at (the time of the event being handled then) and the mark
/// the driver gave that event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cause {
    /// When the event was scheduled.
    pub at: SimTime,
    /// The driver's mark of the event it was scheduled from (0 for one
    /// scheduled before any was handled).
    pub mark: u64,
}

impl<E> Default for Kernel<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Kernel<E> {
    /// A kernel at time zero with no limit on pending entries but memory.
    pub fn new() -> Self {
        Self::with_limits(usize::MAX)
    }

    /// A kernel that refuses events past `pending_limit` queued entries.
    pub fn with_limits(pending_limit: usize) -> Self {
        Kernel {
            now: SimTime::ZERO,
            source: 0,
            scheduled_by: vec![0],
            queue: RadixHeap::new(),
            events: slab::Slab::new(),
            timer_sequences: Vec::new(),
            free_timer_slots: Vec::new(),
            live_timers: 0,
            events_processed: 0,
            pending_limit,
            refused: None,
            causes: None,
            cause_mark: 0,
            popped_cause: Cause::default(),
        }
    }

    /// From now on, records with each event scheduled what scheduled it
    /// ([`Cause`]: the time, and the mark of the event being handled), to
    /// be read back when it is popped ([`Kernel::popped_cause`]). How a
    /// run's causal structure is measured; a run without it pays one
    /// branch per event.
    pub fn track_causes(&mut self) {
        if self.causes.is_none() {
            self.causes = Some(Vec::new());
        }
    }

    /// The mark of the event being handled: the events it schedules carry
    /// it ([`Kernel::track_causes`]).
    #[inline]
    pub fn set_cause_mark(&mut self, mark: u64) {
        self.cause_mark = mark;
    }

    /// What scheduled the event popped last, if causes are tracked
    /// ([`Kernel::track_causes`]); an event queued before tracking began
    /// reads as scheduled at time zero with mark 0.
    #[inline]
    pub fn popped_cause(&self) -> Option<Cause> {
        self.causes.as_ref().map(|_| self.popped_cause)
    }

    /// From now on, entries are scheduled by `source` (below
    /// [`MAX_SOURCES`]): at the same time, a lower source's run first,
    /// and one source's in the order it scheduled them. The driver sets
    /// it to the logical process of each event before handling it.
    #[inline]
    pub fn set_source(&mut self, source: u32) {
        if source as usize >= self.scheduled_by.len() {
            self.add_sources(source);
        }
        self.source = source;
    }

    #[cold]
    fn add_sources(&mut self, source: u32) {
        assert!(source < MAX_SOURCES, "a source below 2^24");
        self.scheduled_by.resize(source as usize + 1, 0);
    }

    /// The sequence the next entry scheduled takes: its source, then how
    /// many that source scheduled before it.
    #[inline]
    fn next_sequence(&self) -> u64 {
        let count = self.scheduled_by[self.source as usize];
        debug_assert!(
            count < 1 << SOURCE_COUNT_BITS,
            "2^40 entries from one source"
        );
        (u64::from(self.source) << SOURCE_COUNT_BITS) | count
    }

    /// The current simulated time: the time of the last event popped.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events (and live timers) handed out by [`Kernel::pop`] so far.
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Entries in the queue, including cancelled timers not yet skipped.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Timers set and neither fired nor cancelled.
    pub fn live_timers(&self) -> usize {
        self.live_timers
    }

    /// Whether an event was refused ([`Kernel::take_refused`]): the driver
    /// checks after each event and stops the run.
    #[inline]
    pub fn has_refused(&self) -> bool {
        self.refused.is_some()
    }

    /// The first event refused (due in the past, or past the queue's
    /// limit), if any.
    pub fn take_refused(&mut self) -> Option<Refused<E>> {
        self.refused.take()
    }

    /// Schedules `event` at `time`. Scheduling in the past is a bug: the
    /// event is refused, kept for [`Kernel::take_refused`].
    #[inline]
    pub fn schedule_at(&mut self, time: SimTime, event: E) {
        self.push(time, NO_TIMER, event);
    }

    /// Schedules `event` after `delay` from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        let time = self.now + delay;
        self.push(time, NO_TIMER, event);
    }

    /// Sets a cancellable timer that delivers `event` at `time`.
    pub fn set_timer(&mut self, time: SimTime, event: E) -> TimerId {
        let slot = match self.free_timer_slots.pop() {
            Some(slot) => slot,
            None => {
                let slot = u32::try_from(self.timer_sequences.len())
                    .ok()
                    .filter(|slot| *slot != NO_TIMER)
                    .expect("more than 4 billion live timers");
                self.timer_sequences.push(RETIRED);
                slot
            }
        };
        let sequence = self.next_sequence();
        self.timer_sequences[slot as usize] = sequence;
        self.live_timers += 1;
        if !self.push(time, slot, event) {
            // Refused: the timer never fires.
            self.retire_slot(slot);
        }
        TimerId { slot, sequence }
    }

    /// Cancels a timer. Returns false if it already fired or was cancelled.
    pub fn cancel_timer(&mut self, timer: TimerId) -> bool {
        if self.timer_sequences[timer.slot as usize] != timer.sequence {
            return false;
        }
        self.retire_slot(timer.slot);
        true
    }

    fn retire_slot(&mut self, slot: u32) {
        self.timer_sequences[slot as usize] = RETIRED;
        self.free_timer_slots.push(slot);
        debug_assert!(self.live_timers > 0);
        self.live_timers -= 1;
    }

    #[inline]
    /// Queues `event` at `time`; false if refused.
    fn push(&mut self, time: SimTime, timer_slot: u32, event: E) -> bool {
        if time < self.now || self.queue.len() >= self.pending_limit {
            self.refuse(time, event);
            return false;
        }
        let sequence = self.next_sequence();
        self.scheduled_by[self.source as usize] += 1;
        let event_slot = self.events.insert(event) as u32;
        if let Some(causes) = self.causes.as_mut() {
            let slot = event_slot as usize;
            if causes.len() <= slot {
                causes.resize(slot + 1, Cause::default());
            }
            causes[slot] = Cause {
                at: self.now,
                mark: self.cause_mark,
            };
        }
        self.queue.push(Entry {
            time,
            sequence,
            timer_slot,
            event_slot,
        });
        true
    }

    /// Keeps the first refused event; the queue is left as it was.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, at: SimTime, event: E) {
        let reason = if at < self.now {
            RefusedBecause::InThePast
        } else {
            RefusedBecause::QueueFull {
                limit: self.pending_limit,
            }
        };
        if self.refused.is_none() {
            self.refused = Some(Refused {
                at,
                now: self.now,
                reason,
                event,
            });
        }
    }

    /// The time of the next entry, if any (it may be a cancelled timer).
    pub fn peek_time(&self) -> Option<SimTime> {
        self.queue.peek().map(|entry| entry.time)
    }

    /// Removes the next live event, advances time to it and returns it.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_until(SimTime::MAX)
    }

    /// Like [`Kernel::pop`], but leaves events later than `limit` queued (and
    /// time unchanged) and returns `None` for them.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        while let Some(entry) = self.queue.pop_if(|top| top.time <= limit) {
            let event = self.events.remove(entry.event_slot as usize);
            if let Some(causes) = self.causes.as_mut() {
                // A slot past the end was filled before tracking began.
                self.popped_cause = causes
                    .get_mut(entry.event_slot as usize)
                    .map_or(Cause::default(), std::mem::take);
            }
            if entry.timer_slot != NO_TIMER {
                if self.timer_sequences[entry.timer_slot as usize] != entry.sequence {
                    continue; // cancelled
                }
                self.retire_slot(entry.timer_slot);
            }
            debug_assert!(entry.time >= self.now);
            self.now = entry.time;
            self.events_processed += 1;
            return Some((entry.time, event));
        }
        None
    }

    /// Moves time forward to `time` with no event (e.g. to the end of a run).
    pub fn advance_to(&mut self, time: SimTime) {
        assert!(time >= self.now, "time cannot go backwards");
        if let Some(next) = self.peek_time() {
            debug_assert!(next >= time, "advancing past a pending event");
        }
        self.now = time;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(nanos: u64) -> SimTime {
        SimTime::from_nanos(nanos)
    }

    #[test]
    fn the_radix_heap_pops_in_key_order_under_interleaved_pushes() {
        let mut heap = RadixHeap::new();
        let mut last_time = 0;
        let mut reference = std::collections::BTreeSet::new();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for sequence in 0..20_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state.is_multiple_of(3) {
                let popped = heap
                    .pop()
                    .map(|entry| (entry.time.as_nanos(), entry.sequence));
                let expected = reference.pop_first();
                assert_eq!(popped, expected);
                if let Some((time, _)) = popped {
                    last_time = time;
                }
            } else {
                // Monotone, as the kernel schedules: never before the last
                // popped time; often at it (ties go by sequence).
                let time = SimTime::from_nanos(last_time + (state >> 8) % 4 * (state % 1_000));
                heap.push(Entry {
                    time,
                    sequence,
                    timer_slot: NO_TIMER,
                    event_slot: 0,
                });
                reference.insert((time.as_nanos(), sequence));
            }
            assert_eq!(heap.len(), reference.len());
        }
        while let Some(expected) = reference.pop_first() {
            assert_eq!(
                heap.pop()
                    .map(|entry| (entry.time.as_nanos(), entry.sequence)),
                Some(expected)
            );
        }
        assert!(heap.pop().is_none());
    }

    #[test]
    fn events_come_out_in_time_order_and_ties_in_insertion_order() {
        let mut kernel = Kernel::new();
        kernel.schedule_at(t(30), "c");
        kernel.schedule_at(t(10), "a1");
        kernel.schedule_at(t(20), "b");
        kernel.schedule_at(t(10), "a2");
        kernel.schedule_at(t(10), "a3");
        let order: Vec<_> = std::iter::from_fn(|| kernel.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["a1", "a2", "a3", "b", "c"]);
        assert_eq!(kernel.now(), t(30));
        assert_eq!(kernel.events_processed(), 5);
    }

    /// Ties go by source, then by each source's own order, whatever order
    /// the sources scheduled in; an entry due now from a lower source than
    /// one already due now comes before it.
    #[test]
    fn ties_go_by_source_then_by_each_sources_order() {
        let mut kernel = Kernel::new();
        kernel.set_source(3);
        kernel.schedule_at(t(10), "3a");
        kernel.set_source(1);
        kernel.schedule_at(t(10), "1a");
        kernel.set_source(3);
        kernel.schedule_at(t(10), "3b");
        kernel.set_source(0);
        kernel.schedule_at(t(5), "0a");
        kernel.set_source(1);
        kernel.schedule_at(t(10), "1b");
        assert_eq!(kernel.pop(), Some((t(5), "0a")));
        assert_eq!(kernel.pop(), Some((t(10), "1a")));
        // Handling 1a, source 2 schedules for now: before 3's, after 1b.
        kernel.set_source(2);
        kernel.schedule_at(t(10), "2a");
        kernel.set_source(0);
        kernel.schedule_at(t(10), "0b");
        let order: Vec<_> = std::iter::from_fn(|| kernel.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["0b", "1b", "2a", "3a", "3b"]);
    }

    #[test]
    fn cancelled_timers_never_fire_and_their_slots_are_reused() {
        let mut kernel = Kernel::new();
        let first = kernel.set_timer(t(10), 1);
        let second = kernel.set_timer(t(20), 2);
        assert!(kernel.cancel_timer(first));
        assert!(
            !kernel.cancel_timer(first),
            "cancelling twice reports false"
        );
        let third = kernel.set_timer(t(15), 3);
        assert_eq!(third.slot, first.slot, "the freed slot is reused");
        assert_ne!(third.sequence, first.sequence);
        assert_eq!(kernel.live_timers(), 2);
        assert_eq!(kernel.pop(), Some((t(15), 3)));
        assert!(
            !kernel.cancel_timer(third),
            "a fired timer cannot be cancelled"
        );
        assert_eq!(kernel.pop(), Some((t(20), 2)));
        assert!(!kernel.cancel_timer(second));
        assert_eq!(kernel.pop(), None);
        assert_eq!(kernel.live_timers(), 0);
    }

    #[test]
    fn pop_until_leaves_later_events_queued() {
        let mut kernel = Kernel::new();
        kernel.schedule_at(t(5), 'a');
        let cancelled = kernel.set_timer(t(6), 'x');
        kernel.cancel_timer(cancelled);
        kernel.schedule_at(t(50), 'b');
        assert_eq!(kernel.pop_until(t(10)), Some((t(5), 'a')));
        assert_eq!(kernel.pop_until(t(10)), None);
        assert_eq!(kernel.now(), t(5));
        kernel.advance_to(t(10));
        assert_eq!(kernel.pop(), Some((t(50), 'b')));
    }

    #[test]
    fn small_events_make_24_byte_heap_entries() {
        assert_eq!(std::mem::size_of::<Entry>(), 24);
    }

    /// An event due in the past is refused, not queued: the first one is
    /// kept for the driver to report (later ones dropped), a refused timer
    /// never fires, and the queue goes on as it was.
    #[test]
    fn an_event_in_the_past_is_refused_and_kept_for_the_driver() {
        let mut kernel = Kernel::new();
        kernel.schedule_at(t(10), 'a');
        kernel.schedule_at(t(20), 'b');
        kernel.pop();
        assert!(!kernel.has_refused());
        kernel.schedule_at(t(5), 'x');
        kernel.set_timer(t(6), 'y');
        assert!(kernel.has_refused());
        assert_eq!(kernel.live_timers(), 0);
        let refused = kernel.take_refused().expect("refused");
        assert_eq!((refused.at, refused.now, refused.event), (t(5), t(10), 'x'));
        assert_eq!(refused.reason, RefusedBecause::InThePast);
        assert!(kernel.take_refused().is_none());
        assert_eq!(kernel.pop(), Some((t(20), 'b')));
        assert_eq!(kernel.pop(), None);
    }

    #[test]
    fn each_event_carries_what_scheduled_it() {
        let mut kernel = Kernel::new();
        kernel.schedule_at(t(5), 'a');
        assert_eq!(kernel.popped_cause(), None);
        kernel.track_causes();
        kernel.schedule_at(t(10), 'b');
        // Queued before tracking: no cause known.
        assert_eq!(kernel.pop(), Some((t(5), 'a')));
        assert_eq!(kernel.popped_cause(), Some(Cause::default()));
        kernel.set_cause_mark(7);
        kernel.schedule_at(t(30), 'c');
        let timer = kernel.set_timer(t(20), 'd');
        kernel.cancel_timer(timer);
        // Scheduled before any event was handled: at time zero, mark 0.
        assert_eq!(kernel.pop(), Some((t(10), 'b')));
        assert_eq!(kernel.popped_cause(), Some(Cause { at: t(0), mark: 0 }));
        kernel.set_cause_mark(9);
        kernel.schedule_at(t(40), 'e');
        // The cancelled timer is skipped; 'c' came from the event at 5.
        assert_eq!(kernel.pop(), Some((t(30), 'c')));
        assert_eq!(kernel.popped_cause(), Some(Cause { at: t(5), mark: 7 }));
        assert_eq!(kernel.pop(), Some((t(40), 'e')));
        assert_eq!(kernel.popped_cause(), Some(Cause { at: t(10), mark: 9 }));
    }

    #[test]
    fn the_pending_limit_is_enforced() {
        let mut kernel = Kernel::with_limits(2);
        for i in 0..3 {
            kernel.schedule_at(t(i), i);
        }
        let refused = kernel.take_refused().expect("the third is refused");
        assert_eq!(refused.event, 2);
        assert_eq!(refused.reason, RefusedBecause::QueueFull { limit: 2 });
        assert_eq!(kernel.pending(), 2);
    }
}
