//! Hinted handoff: the writes a coordinator could not deliver to a replica,
//! kept on its own disk and replayed to the replica once it is back
//! (scylla-mechanisms.md section 5; Scylla 3.0's `db/hints/manager.cc` and
//! `resource_manager.cc`, Cassandra 3.11's `HintsService`).
//!
//! What it models, per coordinating shard (Scylla keeps one hint log per
//! shard and destination):
//! - *When a hint is written* (the shard decides; this module stores):
//!   for a replica the node sees down when the write is sent, and for a
//!   replica that had not acknowledged when the write timed out after
//!   reaching its consistency level. No hint once the replica has been
//!   down longer than `max_hint_window` (3 h): those are counted dropped.
//! - *Storage*: hints append to the destination's log through a write
//!   buffer (128 KiB, the commitlog's), written out when full and at each
//!   flush (every 10 s, `hints_flush_period`). A flush closes the log's
//!   open segment; only closed segments whose writes completed are
//!   replayed, so a hint waits 0-10 s before it can go. A closed segment
//!   holds at most `segment_bytes` (32 MiB); more make several.
//! - *Replay*, while the destination is alive: the oldest segment first,
//!   read from disk in 128 KiB chunks with up to 10 reads ahead (the
//!   commitlog reader's `buffer_size` and `read_ahead`), each hint sent as
//!   a write once its bytes are read; at most 128 hints in flight per
//!   shard (the send semaphore's budget, `available_memory / 10 / smp`,
//!   at `budget / 128` per small hint). A segment is deleted when every
//!   hint in it is acknowledged. A send that fails (times out) stops the
//!   segment; once its sends in flight are back it starts over from its
//!   first unacknowledged hint after 1 s. Cassandra 3.11 also throttles
//!   each destination to `hinted_handoff_throttle_in_kb` (1024 KiB/s)
//!   divided by the other nodes (`HintsDispatchExecutor`).
//!
//! The shard turns what this module asks for ([`HintsWork`]) into CPU
//! tasks, I/Os and messages, and tells it what completed.
//!
//! Left out: the space watchdog's quota (10% of the disk per shard; hints
//! here are bounded by the window only), the 10 MB limit on hints in
//! flight to storage, dropping hints older than `gc_grace_seconds`,
//! Cassandra's two delivery threads (every destination replays at once
//! here), hints for view updates, and streaming hints on decommission.

use std::collections::VecDeque;

use crate::planted::{Planted, PlantedBug};

use units::{SimDuration, SimTime};

/// A write a replica missed, as the hint log keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// The partition key.
    pub key: u64,
    /// The write's own timestamp (replay keeps it, so a newer write wins).
    pub timestamp: u64,
    /// Bytes of column values.
    pub value_bytes: u32,
    /// Rows the write held.
    pub rows: u32,
    /// Bytes the hint takes in the log (the mutation and its entry header).
    pub bytes: u32,
}

/// How a preset keeps and replays hints.
#[derive(Clone, Debug, PartialEq)]
pub struct HintsSetup {
    /// `max_hint_window_in_ms`: no hints for a replica down longer.
    pub max_hint_window: SimDuration,
    /// Closed segments are made replayable this often.
    pub flush_period: SimDuration,
    /// Write buffer and replay read chunk.
    pub buffer_bytes: u64,
    /// Replay reads in flight ahead of the sends.
    pub read_ahead: u32,
    /// Largest closed segment.
    pub segment_bytes: u64,
    /// Hints being sent at once, per shard.
    pub max_sends_in_flight: u32,
    /// Wait before a failed segment is tried again.
    pub retry_after: SimDuration,
    /// Replay bytes per second to each destination (`None`: unthrottled).
    pub throttle_bytes_per_sec: Option<f64>,
}

impl HintsSetup {
    /// Scylla 3.0 (`db/config.hh`, `db/hints/manager.cc`,
    /// `resource_manager.hh` @3.0): 3 h window, 10 s flushes, 32 MiB
    /// segments, no bandwidth throttle (`hinted_handoff_throttle_in_kb` is
    /// unused).
    pub const SCYLLA_3_0: HintsSetup = HintsSetup {
        max_hint_window: SimDuration::from_secs(3 * 3600),
        flush_period: SimDuration::from_secs(10),
        buffer_bytes: 128 * 1024,
        read_ahead: 10,
        segment_bytes: 32 << 20,
        max_sends_in_flight: 128,
        retry_after: SimDuration::from_secs(1),
        throttle_bytes_per_sec: None,
    };

    /// Cassandra 3.11 (`conf/cassandra.yaml`): 3 h window, hints flushed
    /// every 10 s (`hints_flush_period_in_ms`), 128 MiB files
    /// (`max_hints_file_size_in_mb`), and each destination's replay
    /// throttled to 1024 KiB/s divided by the other `nodes - 1` nodes.
    pub fn cassandra_3_11(nodes: u32) -> HintsSetup {
        let setup = HintsSetup {
            segment_bytes: 128 << 20,
            throttle_bytes_per_sec: Some(1024.0 * 1024.0 / f64::from(nodes.max(2) - 1)),
            ..HintsSetup::SCYLLA_3_0
        };
        debug_assert!(
            setup
                .throttle_bytes_per_sec
                .is_some_and(|rate| rate > 0.0 && rate <= 1024.0 * 1024.0),
            "each destination gets a share of 1 MiB/s"
        );
        setup
    }
}

// Scylla's setup: a segment holds several buffers; replay reads ahead and
// sends in parallel; flushes and retries wait a positive time.
const _: () = assert!(HintsSetup::SCYLLA_3_0.segment_bytes >= HintsSetup::SCYLLA_3_0.buffer_bytes);
const _: () = assert!(HintsSetup::SCYLLA_3_0.read_ahead > 0);
const _: () = assert!(HintsSetup::SCYLLA_3_0.max_sends_in_flight > 0);
const _: () = assert!(HintsSetup::SCYLLA_3_0.flush_period.as_nanos() > 0);
const _: () = assert!(
    HintsSetup::SCYLLA_3_0.flush_period.as_nanos()
        < HintsSetup::SCYLLA_3_0.max_hint_window.as_nanos()
);

/// What the shard must do for its hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HintsWork {
    /// Write `bytes` of node `node`'s log (segment `segment`) to disk.
    Write {
        /// The destination.
        node: u32,
        /// The segment the bytes belong to.
        segment: u32,
        /// Bytes written.
        bytes: u64,
    },
    /// Read `bytes` of node `node`'s segment `segment` back for replay.
    Read {
        /// The destination.
        node: u32,
        /// The segment read.
        segment: u32,
        /// Bytes read.
        bytes: u64,
    },
    /// Send `hint` to node `node`.
    Send {
        /// The destination.
        node: u32,
        /// The segment it comes from.
        segment: u32,
        /// Its position there (echo it in [`HintsManager::send_done`]).
        position: u32,
        /// The hint.
        hint: Hint,
    },
}

/// Hint counters of one shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HintStats {
    /// Hints stored.
    pub written: u64,
    /// Hints the destination acknowledged on replay.
    pub replayed: u64,
    /// Hints not written: the destination had been down longer than the
    /// window.
    pub dropped: u64,
    /// Replay sends that failed (and are sent again).
    pub send_failures: u64,
}

/// A closed segment of a destination's log.
#[derive(Clone, Debug)]
struct Segment {
    id: u32,
    hints: Vec<Hint>,
    bytes: u64,
    /// Write I/Os of its bytes not yet complete: replayable at zero.
    writes_outstanding: u32,
    /// Replay: bytes asked of the disk, bytes read back, reads in flight.
    read_requested: u64,
    read_done: u64,
    reads_outstanding: u32,
    /// Replay: the next hint to consider sending, the bytes of the hints
    /// before it, and the sends in flight.
    cursor: usize,
    cursor_bytes: u64,
    in_flight: u32,
    /// A bit per hint, set once acknowledged.
    acked: Vec<u64>,
    acked_count: usize,
    /// A send failed: no more sends until the ones in flight are back.
    failed: bool,
}

impl Segment {
    fn is_acked(&self, index: usize) -> bool {
        debug_assert!(
            index < self.hints.len(),
            "hint {index} of {}",
            self.hints.len()
        );
        self.acked[index / 64] >> (index % 64) & 1 == 1
    }

    /// Starts the replay over: from the first unacknowledged hint, with the
    /// file read again.
    fn rewind(&mut self) {
        debug_assert_eq!(self.in_flight, 0);
        self.failed = false;
        self.cursor = 0;
        self.cursor_bytes = 0;
        self.read_requested = 0;
        self.read_done = 0;
        debug_assert!(
            self.acked_count < self.hints.len(),
            "a rewound segment has hints to send"
        );
    }
}

/// One destination's log and sender.
#[derive(Clone, Debug, Default)]
struct Endpoint {
    /// Since when the node sees the destination down (`None`: up).
    down_since: Option<SimTime>,
    /// The open segment: hints stored since the last flush.
    open: Vec<Hint>,
    open_bytes: u64,
    open_id: u32,
    /// The id the next segment takes.
    next_id: u32,
    /// Bytes of the open segment still in the write buffer.
    unwritten: u64,
    /// Write I/Os of the open segment in flight.
    open_writes: u32,
    /// Closed segments, oldest first.
    segments: VecDeque<Segment>,
    /// No sends before this (a failed segment's retry).
    retry_at: SimTime,
    /// Cassandra's throttle: no send before this.
    throttle_at: SimTime,
}

impl Endpoint {
    /// The oldest segment, the only one sending, which must be `segment`.
    fn sending(&mut self, segment: u32) -> &mut Segment {
        self.segments
            .front_mut()
            .filter(|front| front.id == segment)
            .expect("only the oldest segment sends")
    }

    /// A failed segment whose sends are all back starts over, after
    /// `retry_after`.
    fn retry_when_back(&mut self, now: SimTime, retry_after: SimDuration) {
        let front = self.segments.front_mut().expect("a segment is sending");
        if front.failed && front.in_flight == 0 {
            front.rewind();
            self.retry_at = now + retry_after;
            debug_assert!(self.retry_at > now, "a retry waits");
        }
    }

    /// Hints stored for this destination and not yet acknowledged.
    fn pending(&self) -> u64 {
        self.open.len() as u64
            + self
                .segments
                .iter()
                .map(|segment| (segment.hints.len() - segment.acked_count) as u64)
                .sum::<u64>()
    }
}

/// One shard's hint logs, by destination node.
#[derive(Clone, Debug)]
pub struct HintsManager {
    setup: HintsSetup,
    endpoints: Vec<Endpoint>,
    /// Sends in flight across destinations.
    in_flight: u32,
    /// The next flush, while some log has an open segment.
    next_flush: Option<SimTime>,
    /// When the manager next has something to do by itself, as the last
    /// [`HintsManager::poll`] found.
    wake_at: Option<SimTime>,
    /// Counters.
    stats: HintStats,
    /// Planted bugs (tests of the explorer only: [`crate::planted`]).
    planted: Planted,
    /// Sends the planted `HintDroppedEveryFifth` has counted.
    planted_sends: u64,
    /// Acknowledgements received from destinations (over every life, as
    /// `stats`): every hint counted delivered was acknowledged.
    acknowledgements: u64,
}

impl HintsManager {
    /// No hints yet, for a cluster of `nodes` nodes.
    pub fn new(setup: HintsSetup, nodes: u32) -> HintsManager {
        assert!(nodes > 0, "hints for a cluster of some nodes");
        assert!(
            setup.buffer_bytes > 0 && setup.segment_bytes > 0,
            "hints are written in bytes"
        );
        HintsManager {
            setup,
            endpoints: vec![Endpoint::default(); nodes as usize],
            in_flight: 0,
            next_flush: None,
            wake_at: None,
            stats: HintStats::default(),
            planted: Planted::NONE,
            planted_sends: 0,
            acknowledgements: 0,
        }
    }

    /// What must hold between the logs, the sends in flight and the
    /// counters; panics naming what broke.
    pub fn check_invariants(&self) {
        let mut in_flight = 0;
        for endpoint in &self.endpoints {
            for segment in &endpoint.segments {
                let acked: u32 = segment.acked.iter().map(|word| word.count_ones()).sum();
                assert_eq!(
                    acked as usize, segment.acked_count,
                    "a segment's acknowledged count matches its bits"
                );
                assert!(
                    segment.acked_count < segment.hints.len(),
                    "a segment whose every hint is acknowledged is gone"
                );
                assert!(segment.cursor <= segment.hints.len());
                assert!(segment.read_done <= segment.read_requested);
                assert!(
                    segment.read_requested <= segment.bytes,
                    "replay reads the segment once"
                );
                assert!(segment.cursor_bytes <= segment.bytes);
                in_flight += segment.in_flight;
            }
            for segment in endpoint.segments.iter().skip(1) {
                assert!(
                    segment.in_flight == 0 && segment.reads_outstanding == 0,
                    "only the oldest segment replays"
                );
            }
            assert!(
                endpoint.unwritten <= endpoint.open_bytes,
                "unwritten bytes are the open segment's"
            );
            assert!(
                endpoint.next_id == 0 || endpoint.open_id < endpoint.next_id,
                "the next segment's id is past the open one's"
            );
        }
        assert!(
            self.in_flight <= self.setup.max_sends_in_flight,
            "no more sends than the limit"
        );
        assert_eq!(
            in_flight, self.in_flight,
            "the sends in flight are those of the segments"
        );
        assert_eq!(
            self.stats.replayed, self.acknowledgements,
            "hints counted delivered are the hints destinations acknowledged"
        );
    }

    /// The same manager with `planted` bugs (none outside tests).
    pub fn planted(mut self, planted: Planted) -> HintsManager {
        self.planted = planted;
        self
    }

    /// What a restarted shard finds of its hints after a crash: the closed
    /// segments whose writes had completed, each to be replayed from its
    /// first hint (the log keeps no record of which hints were
    /// acknowledged: those are sent again, as Scylla's are), every
    /// destination seen up until the node hears otherwise. The open
    /// segments, still in memory or being written, are lost. The counters
    /// carry on.
    pub fn after_crash(&self) -> HintsManager {
        let mut after = HintsManager::new(self.setup.clone(), self.endpoints.len() as u32)
            .planted(self.planted);
        after.stats = self.stats;
        after.acknowledgements = self.acknowledgements;
        for (kept, endpoint) in after.endpoints.iter_mut().zip(&self.endpoints) {
            kept.segments = endpoint
                .segments
                .iter()
                .filter(|segment| segment.writes_outstanding == 0)
                .map(|segment| Segment {
                    reads_outstanding: 0,
                    in_flight: 0,
                    acked: vec![0; segment.hints.len().div_ceil(64)],
                    acked_count: 0,
                    ..segment.clone()
                })
                .collect();
            for segment in &mut kept.segments {
                segment.rewind();
            }
            // New segments take ids past every kept one.
            kept.next_id = endpoint.next_id.max(endpoint.open_id + 1);
            kept.open_id = kept.next_id;
            kept.next_id += 1;
        }
        debug_assert_eq!(after.in_flight, 0, "no send survives a crash");
        if cfg!(debug_assertions) {
            after.check_invariants();
        }
        after
    }

    /// The hints a crash now would destroy, with their destinations: the
    /// open segments' (in memory or being written) and those of closed
    /// segments whose writes have not all completed.
    pub fn lost_in_crash(&self) -> Vec<(u32, Hint)> {
        let mut lost = Vec::new();
        for (node, endpoint) in self.endpoints.iter().enumerate() {
            let node = node as u32;
            lost.extend(endpoint.open.iter().map(|hint| (node, *hint)));
            for segment in &endpoint.segments {
                if segment.writes_outstanding > 0 {
                    lost.extend(segment.hints.iter().map(|hint| (node, *hint)));
                }
            }
        }
        debug_assert!(
            lost.len() as u64 <= self.pending(),
            "a crash loses only hints not yet acknowledged"
        );
        lost
    }

    /// Every hint not yet acknowledged, with its destination: what a node
    /// that stops for good (it left the ring) takes with it. Scylla 3.0's
    /// decommission does not stream its hints to other nodes
    /// (`unbootstrap` only says it does).
    pub fn unsent(&self) -> Vec<(u32, Hint)> {
        let mut unsent = Vec::new();
        for (node, endpoint) in self.endpoints.iter().enumerate() {
            let node = node as u32;
            unsent.extend(endpoint.open.iter().map(|hint| (node, *hint)));
            for segment in &endpoint.segments {
                unsent.extend(
                    (0..segment.hints.len())
                        .filter(|&index| !segment.is_acked(index))
                        .map(|index| (node, segment.hints[index])),
                );
            }
        }
        debug_assert_eq!(
            unsent.len() as u64,
            self.pending(),
            "the unsent are the pending"
        );
        unsent
    }

    /// The setup.
    pub fn setup(&self) -> &HintsSetup {
        &self.setup
    }

    /// The node sees `node` go down (`alive` false) or come back at `now`.
    pub fn set_alive(&mut self, now: SimTime, node: u32, alive: bool) {
        let endpoint = &mut self.endpoints[node as usize];
        endpoint.down_since = if alive {
            None
        } else {
            endpoint.down_since.or(Some(now))
        };
        debug_assert!(
            endpoint.down_since.is_none_or(|since| since <= now),
            "a node went down in the past"
        );
    }

    /// Whether a hint for `node` is kept at `now` (`can_hint_for`): not
    /// once it has been down longer than the window.
    pub fn can_hint(&self, now: SimTime, node: u32) -> bool {
        debug_assert!(
            (node as usize) < self.endpoints.len(),
            "node {node} is not in the cluster"
        );
        self.endpoints[node as usize]
            .down_since
            .is_none_or(|since| now - since <= self.setup.max_hint_window)
    }

    /// Counts a hint for `node` not kept at `now`: the node has been down
    /// longer than the window ([`HintsManager::can_hint`]).
    pub fn hint_dropped(&mut self, now: SimTime, node: u32) {
        debug_assert!(!self.can_hint(now, node), "a hint the window keeps");
        self.stats.dropped += 1;
    }

    /// The counters.
    pub fn stats(&self) -> HintStats {
        self.stats
    }

    /// Stores `hint` for `node` at `now`; `out` gets the buffer writes it
    /// fills.
    pub fn store(&mut self, now: SimTime, node: u32, hint: Hint, out: &mut Vec<HintsWork>) {
        debug_assert!(self.can_hint(now, node), "the shard checks the window");
        let buffer = self.setup.buffer_bytes;
        let endpoint = &mut self.endpoints[node as usize];
        endpoint.open.push(hint);
        endpoint.open_bytes += u64::from(hint.bytes);
        endpoint.unwritten += u64::from(hint.bytes);
        while endpoint.unwritten >= buffer {
            endpoint.unwritten -= buffer;
            endpoint.open_writes += 1;
            out.push(HintsWork::Write {
                node,
                segment: endpoint.open_id,
                bytes: buffer,
            });
        }
        self.stats.written += 1;
        if self.next_flush.is_none() {
            // The flush timer runs on a fixed period from the start.
            let period = self.setup.flush_period.as_nanos();
            let next = SimTime::from_nanos((now.as_nanos() / period + 1) * period);
            debug_assert!(next > now, "the next flush is ahead");
            self.next_flush = Some(next);
            self.wake_at = Some(self.wake_at.map_or(next, |at| at.min(next)));
        }
    }

    /// A write I/O of node `node`'s segment `segment` completed.
    pub fn write_done(&mut self, node: u32, segment: u32) {
        let endpoint = &mut self.endpoints[node as usize];
        if segment == endpoint.open_id {
            debug_assert!(
                endpoint.open_writes > 0,
                "a write of the open segment was in flight"
            );
            endpoint.open_writes -= 1;
            return;
        }
        let closed = endpoint
            .segments
            .iter_mut()
            .find(|closed| closed.id == segment)
            .expect("a write of a segment still kept");
        closed.writes_outstanding -= 1;
    }

    /// A replay read of node `node`'s segment `segment` completed.
    pub fn read_done(&mut self, node: u32, segment: u32, bytes: u64) {
        let endpoint = &mut self.endpoints[node as usize];
        if let Some(front) = endpoint.segments.front_mut() {
            if front.id == segment {
                front.reads_outstanding -= 1;
                front.read_done += bytes;
                debug_assert!(
                    front.read_done <= front.read_requested,
                    "reads return what was asked"
                );
            }
        }
    }

    /// Node `node` acknowledged the hint at `position` of segment
    /// `segment`.
    pub fn send_done(&mut self, now: SimTime, node: u32, segment: u32, position: u32) {
        debug_assert!(self.in_flight > 0, "an acknowledgement of a send in flight");
        self.in_flight -= 1;
        self.stats.replayed += 1;
        self.acknowledgements += 1;
        let endpoint = &mut self.endpoints[node as usize];
        let front = endpoint.sending(segment);
        let position = position as usize;
        debug_assert!(!front.is_acked(position), "a hint acknowledged twice");
        front.acked[position / 64] |= 1 << (position % 64);
        front.acked_count += 1;
        front.in_flight -= 1;
        if front.acked_count == front.hints.len() {
            endpoint.segments.pop_front();
        } else {
            endpoint.retry_when_back(now, self.setup.retry_after);
        }
    }

    /// A hint of node `node`'s segment `segment` was not acknowledged in
    /// time: the segment stops, and starts over once its sends are back.
    pub fn send_failed(&mut self, now: SimTime, node: u32, segment: u32) {
        debug_assert!(self.in_flight > 0, "a failure of a send in flight");
        self.in_flight -= 1;
        self.stats.send_failures += 1;
        let endpoint = &mut self.endpoints[node as usize];
        let front = endpoint.sending(segment);
        front.in_flight -= 1;
        front.failed = true;
        endpoint.retry_when_back(now, self.setup.retry_after);
    }

    /// Hints stored and not yet acknowledged by their destination.
    pub fn pending(&self) -> u64 {
        self.endpoints.iter().map(Endpoint::pending).sum()
    }

    /// Hints waiting for node `node`.
    pub fn pending_for(&self, node: u32) -> u64 {
        let pending = self.endpoints[node as usize].pending();
        debug_assert!(pending <= self.stats.written, "pending hints were written");
        pending
    }

    /// When the manager next has something to do by itself: a flush, a
    /// failed segment's retry, a throttled send (as of the last
    /// [`HintsManager::poll`] or [`HintsManager::store`]).
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.wake_at
    }

    /// Does what is due at `now`: the flush, and every read and send the
    /// limits allow; `out` gets the work.
    pub fn poll(&mut self, now: SimTime, out: &mut Vec<HintsWork>) {
        if self.next_flush.is_some_and(|at| at <= now) {
            self.flush(out);
            let any_open = self
                .endpoints
                .iter()
                .any(|endpoint| !endpoint.open.is_empty());
            debug_assert!(!any_open, "a flush closes every open segment");
            self.next_flush = None;
        }
        self.wake_at = self.next_flush;
        for node in 0..self.endpoints.len() {
            if let Some(at) = self.pump(now, node as u32, out) {
                self.wake_at = Some(self.wake_at.map_or(at, |wake: SimTime| wake.min(at)));
            }
        }
        debug_assert!(
            self.wake_at.is_none_or(|at| at > now),
            "the manager wakes later, not now"
        );
    }

    /// Closes every open segment (`hints_flush_period`): its buffered bytes
    /// go to disk, and it is replayable once they are written.
    fn flush(&mut self, out: &mut Vec<HintsWork>) {
        let segment_bytes = self.setup.segment_bytes;
        for (node, endpoint) in self.endpoints.iter_mut().enumerate() {
            if endpoint.open.is_empty() {
                continue;
            }
            // Ids above the open segment's are free.
            endpoint.next_id = endpoint.next_id.max(endpoint.open_id + 1);
            let mut writes = endpoint.open_writes;
            if endpoint.unwritten > 0 {
                writes += 1;
                out.push(HintsWork::Write {
                    node: node as u32,
                    segment: endpoint.open_id,
                    bytes: endpoint.unwritten,
                });
            }
            // The open log closes as segments of at most `segment_bytes`;
            // the last carries the writes still in flight.
            let hints = std::mem::take(&mut endpoint.open);
            let mut start = 0;
            while start < hints.len() {
                let mut bytes = 0;
                let mut end = start;
                while end < hints.len()
                    && (end == start || bytes + u64::from(hints[end].bytes) <= segment_bytes)
                {
                    bytes += u64::from(hints[end].bytes);
                    end += 1;
                }
                let last = end == hints.len();
                let count = end - start;
                // The last piece keeps the open segment's id, which its
                // writes in flight name.
                let id = if last {
                    endpoint.open_id
                } else {
                    endpoint.next_id += 1;
                    endpoint.next_id - 1
                };
                endpoint.segments.push_back(Segment {
                    id,
                    hints: hints[start..end].to_vec(),
                    bytes,
                    writes_outstanding: if last { writes } else { 0 },
                    read_requested: 0,
                    read_done: 0,
                    reads_outstanding: 0,
                    cursor: 0,
                    cursor_bytes: 0,
                    in_flight: 0,
                    acked: vec![0; count.div_ceil(64)],
                    acked_count: 0,
                    failed: false,
                });
                start = end;
            }
            endpoint.open_id = endpoint.next_id;
            endpoint.next_id += 1;
            endpoint.open_bytes = 0;
            endpoint.unwritten = 0;
            endpoint.open_writes = 0;
            debug_assert!(
                endpoint
                    .segments
                    .iter()
                    .all(|closed| closed.id != endpoint.open_id),
                "the new open segment's id is free"
            );
        }
    }

    /// Node `node`'s sender: reads ahead and sends what is read, within the
    /// limits; returns when it must look again if only time holds it (a
    /// retry's or the throttle's wait).
    fn pump(&mut self, now: SimTime, node: u32, out: &mut Vec<HintsWork>) -> Option<SimTime> {
        let setup = &self.setup;
        let endpoint = &mut self.endpoints[node as usize];
        if endpoint.down_since.is_some() {
            return None;
        }
        let front = endpoint.segments.front_mut()?;
        if front.writes_outstanding > 0 || front.failed {
            return None;
        }
        if now < endpoint.retry_at {
            return Some(endpoint.retry_at);
        }
        while front.reads_outstanding < setup.read_ahead && front.read_requested < front.bytes {
            let bytes = setup.buffer_bytes.min(front.bytes - front.read_requested);
            front.read_requested += bytes;
            front.reads_outstanding += 1;
            out.push(HintsWork::Read {
                node,
                segment: front.id,
                bytes,
            });
        }
        while self.in_flight < setup.max_sends_in_flight && front.cursor < front.hints.len() {
            let position = front.cursor;
            let hint = front.hints[position];
            if front.is_acked(position) {
                front.cursor += 1;
                front.cursor_bytes += u64::from(hint.bytes);
                continue;
            }
            if front.cursor_bytes + u64::from(hint.bytes) > front.read_done {
                break;
            }
            if now < endpoint.throttle_at {
                return Some(endpoint.throttle_at);
            }
            if let Some(rate) = setup.throttle_bytes_per_sec {
                let wait = SimDuration::from_secs_f64(f64::from(hint.bytes) / rate);
                endpoint.throttle_at = endpoint.throttle_at.max(now) + wait;
            }
            front.cursor += 1;
            front.cursor_bytes += u64::from(hint.bytes);
            if self.planted.has(PlantedBug::HintDroppedEveryFifth) {
                self.planted_sends += 1;
                if self.planted_sends.is_multiple_of(5) {
                    // Never sent, yet counted delivered.
                    front.acked[position / 64] |= 1 << (position % 64);
                    front.acked_count += 1;
                    self.stats.replayed += 1;
                    if front.acked_count == front.hints.len() {
                        endpoint.segments.pop_front();
                        return None;
                    }
                    continue;
                }
            }
            front.in_flight += 1;
            self.in_flight += 1;
            out.push(HintsWork::Send {
                node,
                segment: front.id,
                position: position as u32,
                hint,
            });
        }
        debug_assert!(self.in_flight <= setup.max_sends_in_flight);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(key: u64) -> Hint {
        Hint {
            key,
            timestamp: key,
            value_bytes: 300,
            rows: 1,
            bytes: 1000,
        }
    }

    fn at(seconds: f64) -> SimTime {
        SimTime::ZERO + SimDuration::from_secs_f64(seconds)
    }

    /// Completes every write and read in `work`, returns the sends.
    fn complete_io(
        hints: &mut HintsManager,
        work: &mut Vec<HintsWork>,
    ) -> Vec<(u32, u32, u32, Hint)> {
        let mut sends = Vec::new();
        for item in work.drain(..) {
            match item {
                HintsWork::Write { node, segment, .. } => hints.write_done(node, segment),
                HintsWork::Read {
                    node,
                    segment,
                    bytes,
                } => hints.read_done(node, segment, bytes),
                HintsWork::Send {
                    node,
                    segment,
                    position,
                    hint,
                } => sends.push((node, segment, position, hint)),
            }
        }
        sends
    }

    /// Polls and completes I/O at `now` until only sends are left.
    fn run(hints: &mut HintsManager, now: SimTime) -> Vec<(u32, u32, u32, Hint)> {
        let mut sends = Vec::new();
        let mut work = Vec::new();
        loop {
            hints.poll(now, &mut work);
            if work.is_empty() {
                return sends;
            }
            sends.extend(complete_io(hints, &mut work));
        }
    }

    #[test]
    fn hints_for_a_down_node_wait_for_the_flush_and_its_return_then_replay_in_order() {
        let mut hints = HintsManager::new(HintsSetup::SCYLLA_3_0, 3);
        let mut work = Vec::new();
        hints.set_alive(at(1.0), 2, false);
        for key in 0..300 {
            hints.store(at(2.0), 2, hint(key), &mut work);
        }
        // 300 KB: two full 128 KiB buffers written so far.
        assert_eq!(work.len(), 2);
        assert!(matches!(
            work[0],
            HintsWork::Write {
                node: 2,
                bytes: 131_072,
                ..
            }
        ));
        complete_io(&mut hints, &mut work);
        assert_eq!(
            hints.next_deadline(),
            Some(at(10.0)),
            "the flush period's grid"
        );
        assert_eq!(hints.pending_for(2), 300);
        // The flush writes the rest; the node is still down: nothing sent.
        assert_eq!(run(&mut hints, at(10.0)), []);
        assert_eq!(hints.next_deadline(), None);
        hints.set_alive(at(20.0), 2, true);
        let sends = run(&mut hints, at(20.0));
        // Everything is read (3 chunks); at most 128 in flight.
        assert_eq!(sends.len(), 128);
        assert!(sends
            .iter()
            .enumerate()
            .all(|(i, s)| s.3.key == i as u64 && s.2 == i as u32));
        let mut sent = sends;
        let mut replayed = 0;
        while let Some((node, segment, position, _)) = sent.pop() {
            hints.send_done(at(20.1), node, segment, position);
            replayed += 1;
            sent.extend(run(&mut hints, at(20.1)));
        }
        assert_eq!(replayed, 300);
        assert_eq!(hints.pending(), 0);
        assert_eq!(hints.stats.written, 300);
        assert_eq!(hints.stats.replayed, 300);
        assert_eq!(hints.next_deadline(), None);
    }

    #[test]
    fn no_hint_once_a_node_is_down_longer_than_the_window() {
        let mut hints = HintsManager::new(HintsSetup::SCYLLA_3_0, 3);
        hints.set_alive(at(100.0), 1, false);
        assert!(hints.can_hint(at(100.0 + 3.0 * 3600.0), 1));
        assert!(!hints.can_hint(at(101.0 + 3.0 * 3600.0), 1));
        assert!(hints.can_hint(at(101.0 + 3.0 * 3600.0), 2), "node 2 is up");
        // Seen down again later: the downtime counts from the first.
        hints.set_alive(at(200.0), 1, false);
        assert!(!hints.can_hint(at(101.0 + 3.0 * 3600.0), 1));
        hints.set_alive(at(20_000.0), 1, true);
        assert!(hints.can_hint(at(20_000.0), 1));
    }

    #[test]
    fn a_failed_send_stops_the_segment_and_it_resumes_with_what_was_not_acknowledged() {
        let mut hints = HintsManager::new(HintsSetup::SCYLLA_3_0, 2);
        let mut work = Vec::new();
        for key in 0..10 {
            hints.store(at(0.5), 1, hint(key), &mut work);
        }
        complete_io(&mut hints, &mut work);
        let sends = run(&mut hints, at(10.0));
        assert_eq!(sends.len(), 10, "node 1 is up: replay at the flush");
        // Hint 3 times out; the others come back, acknowledged.
        hints.send_failed(at(12.0), 1, sends[3].1);
        for send in sends.iter().filter(|send| send.2 != 3) {
            hints.send_done(at(12.0), send.0, send.1, send.2);
        }
        assert_eq!(hints.stats.send_failures, 1);
        assert_eq!(hints.pending(), 1);
        assert_eq!(run(&mut hints, at(12.5)), [], "retried after 1 s");
        assert_eq!(hints.next_deadline(), Some(at(13.0)));
        let again = run(&mut hints, at(13.0));
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].3.key, 3, "only the unacknowledged hint again");
        hints.send_done(at(13.1), again[0].0, again[0].1, again[0].2);
        assert_eq!(hints.pending(), 0);
    }

    #[test]
    fn cassandra_throttles_each_destination() {
        // 3 nodes: 512 KiB/s to each; 1000-byte hints every ~1.9 ms.
        let mut hints = HintsManager::new(HintsSetup::cassandra_3_11(3), 3);
        let mut work = Vec::new();
        for key in 0..1000 {
            hints.store(at(1.0), 2, hint(key), &mut work);
        }
        complete_io(&mut hints, &mut work);
        let mut now = at(10.0);
        let mut sent = 0;
        while sent < 1000 {
            for (node, segment, position, _) in run(&mut hints, now) {
                hints.send_done(now, node, segment, position);
                sent += 1;
            }
            match hints.next_deadline() {
                Some(next) => now = next,
                None => break,
            }
        }
        assert_eq!(sent, 1000);
        let seconds = (now - at(10.0)).as_secs_f64();
        let expected = 999.0 * 1000.0 / (512.0 * 1024.0);
        assert!((seconds / expected - 1.0).abs() < 0.01, "{seconds} s");
    }

    #[test]
    fn a_large_log_closes_as_several_segments_replayed_oldest_first() {
        let setup = HintsSetup {
            segment_bytes: 4000,
            ..HintsSetup::SCYLLA_3_0
        };
        let mut hints = HintsManager::new(setup, 2);
        let mut work = Vec::new();
        for key in 0..10 {
            hints.store(at(0.0), 1, hint(key), &mut work);
        }
        run(&mut hints, at(0.0));
        let sends = run(&mut hints, at(10.0));
        // Three segments (4 + 4 + 2 hints): only the oldest sends.
        assert_eq!(
            sends.iter().map(|send| send.3.key).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        for send in &sends {
            hints.send_done(at(10.0), send.0, send.1, send.2);
        }
        let next = run(&mut hints, at(10.0));
        assert_eq!(
            next.iter().map(|send| send.3.key).collect::<Vec<_>>(),
            [4, 5, 6, 7]
        );
    }
}
