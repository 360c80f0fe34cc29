//! A shard's write path, as state: the memtables from active to flushed,
//! dirty memory and the writes it holds back, the commitlog with the
//! writes waiting for a buffer or for their entry to be on disk, and the
//! counters.
//!
//! A write's life here ([`WritePath`]):
//! 1. admission: when virtual dirty memory is at the throttle limit (or
//!    real dirty memory at its hard limit), a write waits in arrival order
//!    ([`WritePath::admit`], [`WritePath::next_unthrottled`]); Scylla's
//!    dirty memory manager blocks writes the same way;
//! 2. the commitlog: its entry goes into a buffer, or the write waits for
//!    one, behind any write waiting already ([`WritePath::append_in_turn`]);
//!    in batch mode it then waits for its buffer to be on disk
//!    ([`WritePath::next_durable`]);
//! 3. the active memtable takes the row ([`WritePath::apply`]);
//! 4. flushing: at the soft limit of virtual dirty memory, or with the
//!    commitlog over its space, the active memtable is sealed; sealed
//!    memtables flush one at a time ([`WritePath::start_flush`],
//!    [`WritePath::flush_step`]); a finished flush releases the commitlog
//!    segments no unflushed memtable needs.
//!
//! What it does not do: CPU tasks, I/O, replies, the row cache and the
//! read population belong to the shard, which routes between this and
//! them (`writes.rs`). The limits are the shard configuration's
//! ([`crate::config::ShardConfig`]), worked out once.

use std::collections::VecDeque;

use units::{SimDuration, SimTime};

use super::Request;
use crate::action::Operation;
use crate::cells::RowVersion;
use crate::commitlog::{Append, BufferWrite, Commitlog, SyncMode};
use crate::config::ShardConfig;
use crate::flush::{FlushJob, FlushStep};
use crate::memtable::Memtable;
use crate::planted::PlantedBug;
use crate::replay::{Replay, ReplayLog};
use crate::sstable::SSTable;

/// The shard configuration's write-path figures, worked out once.
#[derive(Clone, Copy, Debug)]
struct Limits {
    /// Virtual dirty bytes at which writes wait.
    throttle_bytes: u64,
    /// Real dirty bytes at which writes wait.
    dirty_limit_bytes: u64,
    /// Virtual dirty bytes at which the active memtable is sealed.
    flush_soft_limit_bytes: u64,
    /// A row's memtable memory beyond its bytes.
    memtable_row_overhead_bytes: u64,
    /// A row's SSTable bytes beyond its bytes.
    sstable_row_overhead_bytes: u64,
    /// A flush's write size and the writes it keeps in flight.
    flush_write_bytes: u64,
    flush_write_behind: u32,
    /// Memtables keep their rows (data mode).
    data_mode: bool,
    /// The planted bug: a flush releases the commitlog when it starts.
    releases_commitlog_at_flush_start: bool,
}

/// Where the write a commitlog append was asked for stands.
#[derive(Debug)]
pub(super) enum Appended {
    /// Its entry is in a buffer: apply it (its commitlog entry is in
    /// `segment`).
    Apply { segment: u64, request: Request },
    /// Batch mode: its entry is in a buffer that is not on disk yet; it
    /// waits ([`WritePath::next_durable`]).
    AwaitingDurability,
    /// No buffer is free, or writes wait for one already: it waits
    /// ([`WritePath::append_waiting`]).
    Waiting,
}

/// What the flush under way needs next.
#[derive(Debug)]
pub(super) enum FlushProgress {
    /// No flush running.
    Idle,
    /// Serialize this much of the memtable (a CPU task).
    Serialize { bytes: u64, rows: u64 },
    /// Waiting for its serialization or its writes.
    Waiting,
    /// Done: the SSTable it wrote, and the commitlog segments it covered
    /// are released.
    Finished(SSTable),
}

/// The write path's counters, which a restarted shard carries.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct WriteCounters {
    pub(super) flushes_completed: u64,
    pub(super) writes_completed: u64,
    /// SSTable bytes the acknowledged writes will flush.
    pub(super) flushed_bytes_written: u64,
    /// Time writes waited at the dirty-memory limits, closed periods.
    pub(super) throttled_total: SimDuration,
}

/// A shard's write path ([the module docs](self)).
#[derive(Debug)]
pub(super) struct WritePath {
    limits: Limits,
    active: Memtable,
    /// Sealed memtables waiting for the flush permit, oldest first.
    sealed: VecDeque<Memtable>,
    /// Memory of `sealed`.
    sealed_memory_bytes: u64,
    flushing: Option<FlushJob>,
    next_memtable_id: u64,
    commitlog: Commitlog,
    /// What the live commitlog segments hold, for a replay after a crash.
    replay_log: ReplayLog,
    /// Writes waiting at the dirty-memory limits, in arrival order.
    throttled: VecDeque<Request>,
    /// Since when writes have been waiting there, if they are.
    throttled_since: Option<SimTime>,
    /// Writes waiting for a commitlog buffer, in order.
    waiting_for_commitlog: VecDeque<Request>,
    /// Batch mode: writes in the commitlog waiting for their buffer to be
    /// on disk, in log order: (end position, segment, write).
    awaiting_durability: VecDeque<(u64, u64, Request)>,
    counters: WriteCounters,
}

impl WritePath {
    /// An empty write path for a shard configured by `config`: memtable 0
    /// active, a fresh commitlog.
    pub(super) fn new(config: &ShardConfig) -> WritePath {
        let limits = Limits {
            throttle_bytes: config.throttle_bytes(),
            dirty_limit_bytes: config.dirty_limit_bytes(),
            flush_soft_limit_bytes: config.flush_soft_limit_bytes(),
            memtable_row_overhead_bytes: config.memtable_row_overhead_bytes,
            sstable_row_overhead_bytes: config.sstable_row_overhead_bytes,
            flush_write_bytes: config.flush_write_bytes,
            flush_write_behind: config.flush_write_behind,
            data_mode: config.data_mode,
            releases_commitlog_at_flush_start: config
                .planted
                .has(PlantedBug::FlushReleasesCommitlogAtStart),
        };
        assert!(
            limits.flush_soft_limit_bytes <= limits.throttle_bytes,
            "a memtable is sealed no later than writes wait"
        );
        let commitlog = Commitlog::new(
            config.commitlog_sync,
            config.commitlog_buffer_bytes,
            config.commitlog_segment_bytes,
            config.commitlog_max_active_writes,
            config.commitlog_total_space_bytes,
        );
        WritePath {
            limits,
            active: new_memtable(0, limits.data_mode),
            sealed: VecDeque::new(),
            sealed_memory_bytes: 0,
            flushing: None,
            next_memtable_id: 1,
            commitlog,
            replay_log: ReplayLog::new(config.data_mode).planted(config.planted),
            throttled: VecDeque::new(),
            throttled_since: None,
            waiting_for_commitlog: VecDeque::new(),
            awaiting_durability: VecDeque::new(),
            counters: WriteCounters::default(),
        }
    }

    // Memory.

    /// Memory of the active, sealed and flushing memtables.
    pub(super) fn dirty_bytes(&self) -> u64 {
        let flushing = self
            .flushing
            .as_ref()
            .map_or(0, |job| job.memtable().memory_bytes);
        self.active.memory_bytes + self.sealed_memory_bytes + flushing
    }

    /// Dirty memory less what the running flush has written.
    pub(super) fn virtual_dirty_bytes(&self) -> u64 {
        let written = self
            .flushing
            .as_ref()
            .map_or(0, FlushJob::written_memory_bytes);
        self.dirty_bytes() - written
    }

    /// Whether new writes must wait.
    pub(super) fn over_dirty_limits(&self) -> bool {
        self.virtual_dirty_bytes() >= self.limits.throttle_bytes
            || self.dirty_bytes() >= self.limits.dirty_limit_bytes
    }

    /// The memtables, newest first: active, sealed, flushing.
    pub(super) fn memtables(&self) -> impl Iterator<Item = &Memtable> {
        std::iter::once(&self.active)
            .chain(self.sealed.iter())
            .chain(self.flushing.as_ref().map(FlushJob::memtable))
    }

    /// The active memtable (tests look at what it holds).
    #[cfg(test)]
    pub(super) fn active(&self) -> &Memtable {
        &self.active
    }

    /// A fresh empty memtable with the next id (streaming builds its own).
    pub(super) fn new_memtable(&mut self) -> Memtable {
        let id = self.next_memtable_id;
        self.next_memtable_id += 1;
        new_memtable(id, self.limits.data_mode)
    }

    // Admission.

    /// A write arrives at `now`: it goes ahead (returned) unless it must
    /// wait for dirty memory, or writes wait already (arrival order).
    pub(super) fn admit(&mut self, now: SimTime, request: Request) -> Option<Request> {
        debug_assert!(matches!(request.operation, Operation::Write { .. }));
        if !self.throttled.is_empty() || self.over_dirty_limits() {
            self.throttled_since.get_or_insert(now);
            self.throttled.push_back(request);
            return None;
        }
        Some(request)
    }

    /// The next throttled write that may go ahead now that memory freed;
    /// `None` once none may, closing the waiting period if none waits.
    pub(super) fn next_unthrottled(&mut self, now: SimTime) -> Option<Request> {
        if !self.throttled.is_empty() && !self.over_dirty_limits() {
            return self.throttled.pop_front();
        }
        if self.throttled.is_empty() {
            if let Some(since) = self.throttled_since.take() {
                debug_assert!(since <= now, "a waiting period closing before it opened");
                self.counters.throttled_total = self.counters.throttled_total + (now - since);
            }
        }
        None
    }

    /// Time writes have spent waiting at the dirty-memory limits since the
    /// start: the time during which at least one write was waiting.
    pub(super) fn throttled_time(&self, now: SimTime) -> SimDuration {
        self.counters.throttled_total
            + self
                .throttled_since
                .map_or(SimDuration::ZERO, |since| now - since)
    }

    /// Writes waiting at the dirty-memory limits.
    pub(super) fn writes_throttled(&self) -> usize {
        self.throttled.len()
    }

    // The commitlog.

    /// A write's statement task ran: its entry of `entry_bytes` goes into
    /// the commitlog, behind any write waiting for a buffer.
    pub(super) fn append_in_turn(&mut self, request: Request, entry_bytes: u64) -> Appended {
        if !self.waiting_for_commitlog.is_empty() {
            self.waiting_for_commitlog.push_back(request);
            return Appended::Waiting;
        }
        match self.try_append(request, entry_bytes) {
            Ok(appended) => appended,
            Err(request) => {
                self.waiting_for_commitlog.push_back(request);
                Appended::Waiting
            }
        }
    }

    /// The first write waiting for a commitlog buffer, appended if one is
    /// free; `None` if none waits or none is free (it keeps its place).
    pub(super) fn append_waiting(
        &mut self,
        entry_bytes: impl Fn(&Request) -> u64,
    ) -> Option<Appended> {
        let request = self.waiting_for_commitlog.pop_front()?;
        let bytes = entry_bytes(&request);
        match self.try_append(request, bytes) {
            Ok(appended) => Some(appended),
            Err(request) => {
                self.waiting_for_commitlog.push_front(request);
                None
            }
        }
    }

    /// Appends `request`'s entry; gives the request back if no buffer is
    /// free.
    fn try_append(&mut self, request: Request, entry_bytes: u64) -> Result<Appended, Request> {
        let Operation::Write {
            key,
            timestamp,
            value_bytes,
            ..
        } = request.operation
        else {
            unreachable!("only writes take the write path");
        };
        let Append::Accepted {
            segment,
            end_position,
        } = self.commitlog.append(entry_bytes)
        else {
            return Err(request);
        };
        self.replay_log.logged(
            end_position,
            segment,
            entry_bytes,
            key,
            8 + u64::from(value_bytes),
            RowVersion {
                timestamp,
                value_bytes,
            },
        );
        if end_position > self.commitlog.durable_position()
            && self.commitlog.mode() == SyncMode::Batch
        {
            debug_assert!(self
                .awaiting_durability
                .back()
                .is_none_or(|&(end, _, _)| end < end_position));
            self.awaiting_durability
                .push_back((end_position, segment, request));
            return Ok(Appended::AwaitingDurability);
        }
        Ok(Appended::Apply { segment, request })
    }

    /// A batchlog entry of `entry_bytes` goes into the commitlog (no row
    /// for the replay: the batchlog is not replayed); false if no buffer
    /// is free.
    pub(super) fn append_unreplayed(&mut self, entry_bytes: u64) -> bool {
        matches!(self.commitlog.append(entry_bytes), Append::Accepted { .. })
    }

    /// Writes waiting for a commitlog buffer.
    pub(super) fn writes_waiting_for_commitlog(&self) -> usize {
        self.waiting_for_commitlog.len()
    }

    /// The next commitlog buffer write to send to the disk.
    pub(super) fn next_commitlog_write(&mut self) -> Option<BufferWrite> {
        self.commitlog.next_write()
    }

    /// A commitlog buffer write is on disk.
    pub(super) fn commitlog_write_done(&mut self, write: BufferWrite) {
        self.commitlog.write_done(write);
    }

    /// Batch mode: the next write whose entry is now on disk, with its
    /// segment, to apply.
    pub(super) fn next_durable(&mut self) -> Option<(u64, Request)> {
        let durable = self.commitlog.durable_position();
        if self
            .awaiting_durability
            .front()
            .is_some_and(|(end, _, _)| *end <= durable)
        {
            let (_, segment, request) = self.awaiting_durability.pop_front()?;
            return Some((segment, request));
        }
        None
    }

    /// Periodic mode's sync timer: the buffer in use goes to disk.
    pub(super) fn sync_commitlog(&mut self) {
        self.commitlog.sync();
    }

    /// Commitlog segments on disk.
    pub(super) fn commitlog_segments(&self) -> u64 {
        self.commitlog.live_segments()
    }

    // The memtable.

    /// A write whose entry is in the commitlog (`segment`) goes into the
    /// active memtable: `rows` rows of `key` at `version`. Returns the
    /// row's SSTable bytes.
    pub(super) fn apply(&mut self, key: u64, version: RowVersion, rows: u32, segment: u64) -> u64 {
        debug_assert!(
            segment <= self.commitlog.current_segment(),
            "a write logged in segment {segment}, past the log's end"
        );
        let row_bytes = 8 + u64::from(version.value_bytes);
        self.active.store(key, version);
        // Each row carries the memtable's and the SSTable's per-row
        // footprint.
        let rows = u64::from(rows.max(1));
        let memory_bytes = row_bytes + rows * self.limits.memtable_row_overhead_bytes;
        let sstable_bytes = row_bytes + rows * self.limits.sstable_row_overhead_bytes;
        self.active
            .insert(key, memory_bytes, sstable_bytes, segment);
        self.counters.writes_completed += 1;
        self.counters.flushed_bytes_written += sstable_bytes;
        sstable_bytes
    }

    /// Replayed rows (key, row bytes, version) go into the active memtable,
    /// their entries in the fresh log's current segment.
    pub(super) fn apply_replayed(
        &mut self,
        rows: impl IntoIterator<Item = (u64, u64, RowVersion)>,
    ) {
        let segment = self.commitlog.current_segment();
        for (key, row_bytes, version) in rows {
            self.active.store(key, version);
            self.active.insert(
                key,
                row_bytes + self.limits.memtable_row_overhead_bytes,
                row_bytes + self.limits.sstable_row_overhead_bytes,
                segment,
            );
        }
    }

    /// Volume mode's steady-state start: `rows` rows of `row_bytes` (key
    /// and value) taking `row_memory_bytes` of memory each, over `keys`,
    /// in the active memtable; their entries of `entry_bytes` in the
    /// commitlog, in segments of `segment_bytes`.
    pub(super) fn preload(
        &mut self,
        rows: u64,
        entry_bytes: u64,
        row_bytes: u64,
        row_memory_bytes: u64,
        keys: (u64, u64),
        segment_bytes: u64,
    ) {
        debug_assert!(!self.limits.data_mode, "volume mode preloads only");
        let segment = self.commitlog.current_segment();
        self.commitlog.preload(rows * entry_bytes);
        self.replay_log
            .preloaded(rows, entry_bytes, row_bytes, keys, segment_bytes);
        self.active.preload(
            rows,
            row_memory_bytes,
            row_bytes + self.limits.sstable_row_overhead_bytes,
            keys,
            segment,
        );
        debug_assert!(
            self.virtual_dirty_bytes() < self.limits.flush_soft_limit_bytes,
            "a preloaded memtable stays below the flush threshold"
        );
    }

    /// Whether the active memtable holds no row.
    pub(super) fn is_empty_active(&self) -> bool {
        self.active.is_empty()
    }

    /// Whether no memtable holds a row and none is flushing.
    pub(super) fn is_empty(&self) -> bool {
        self.active.is_empty() && self.flushing.is_none()
    }

    /// Whether everything is flushed: no flush running, none waiting.
    pub(super) fn all_flushed(&self) -> bool {
        self.flushing.is_none() && self.sealed.is_empty()
    }

    // Flushing.

    /// Seals the active memtable when virtual dirty memory is at the soft
    /// limit or the commitlog over its space, unless one waits sealed
    /// already or a flush is under way. Returns whether it sealed.
    ///
    /// A flush under way defers the check to its end: the memtable it
    /// flushes still counts in virtual dirty memory until its bytes are
    /// written, so checking during it would seal the memtable that took
    /// over, with a row or two, and flush it next as an SSTable of its
    /// own. Neither database does: Scylla takes the flush permit before it
    /// looks for pressure and picks a memtable (`dirty_memory_manager`'s
    /// `flush_when_needed`), and Cassandra's cleaner counts only the live
    /// memtables against `memtable_cleanup_threshold`, not those being
    /// flushed (`MemtableCleanerThread`, `MemtablePool.SubPool`'s
    /// reclaiming memory).
    pub(super) fn seal_if_pressed(&mut self) -> bool {
        if self.flushing.is_some() {
            return false;
        }
        let pressure = self.virtual_dirty_bytes() >= self.limits.flush_soft_limit_bytes
            || self.commitlog.over_space_limit();
        if pressure && self.sealed.is_empty() && !self.active.is_empty() {
            self.seal();
            return true;
        }
        false
    }

    /// Seals the active memtable: a fresh one takes writes.
    pub(super) fn seal(&mut self) {
        let fresh = self.new_memtable();
        let memtable = std::mem::replace(&mut self.active, fresh);
        self.sealed_memory_bytes += memtable.memory_bytes;
        self.sealed.push_back(memtable);
    }

    /// Whether a sealed memtable waits and the flush permit is free.
    pub(super) fn flush_ready(&self) -> bool {
        self.flushing.is_none() && !self.sealed.is_empty()
    }

    /// Starts flushing the oldest sealed memtable into SSTable
    /// `generation` ([`WritePath::flush_ready`] must hold).
    pub(super) fn start_flush(&mut self, generation: u64) {
        assert!(self.flushing.is_none(), "a second flush");
        let memtable = self.sealed.pop_front().expect("a sealed memtable to flush");
        self.sealed_memory_bytes -= memtable.memory_bytes;
        self.flushing = Some(FlushJob::new(
            memtable,
            generation,
            self.limits.flush_write_bytes,
            self.limits.flush_write_behind,
        ));
        if self.limits.releases_commitlog_at_flush_start {
            self.release_commitlog_segments();
        }
    }

    /// Moves the flush under way on.
    pub(super) fn flush_step(&mut self, now: SimTime) -> FlushProgress {
        let Some(job) = self.flushing.as_mut() else {
            return FlushProgress::Idle;
        };
        if job.is_complete() {
            let job = self.flushing.take().expect("checked");
            let (sstable, _memtable) = job.finish(now);
            self.counters.flushes_completed += 1;
            self.release_commitlog_segments();
            return FlushProgress::Finished(sstable);
        }
        match job.next_step() {
            FlushStep::Serialize { bytes, rows } => FlushProgress::Serialize { bytes, rows },
            _ => FlushProgress::Waiting,
        }
    }

    /// `bytes` of the flushing memtable are serialized; returns the
    /// memtable (its SSTable bytes and rows size the disk write).
    pub(super) fn flush_serialized(&mut self, bytes: u64) -> &Memtable {
        let job = self
            .flushing
            .as_mut()
            .expect("flush serialization without a flush");
        job.serialized(bytes);
        job.memtable()
    }

    /// `bytes` of the flush are on disk.
    pub(super) fn flush_written(&mut self, bytes: u64) {
        self.flushing
            .as_mut()
            .expect("flush write without a flush")
            .written(bytes);
    }

    /// SSTable bytes the flush under way has written (compaction's backlog
    /// counts them), and its memtable's newest write (the window a
    /// time-window table's backlog counts them in).
    pub(super) fn flush_written_bytes(&self) -> Option<(u64, u64)> {
        self.flushing
            .as_ref()
            .map(|flush| (flush.written_bytes(), flush.memtable().max_timestamp_us))
    }

    /// Segments older than every unflushed memtable's first segment hold
    /// only flushed data.
    fn release_commitlog_segments(&mut self) {
        let oldest_needed = self
            .sealed
            .iter()
            .chain(self.flushing.as_ref().map(FlushJob::memtable).filter(|_| {
                // The planted bug takes a flush under way for done.
                !self.limits.releases_commitlog_at_flush_start
            }))
            .chain(std::iter::once(&self.active))
            .filter_map(|memtable| memtable.first_segment)
            .min()
            .unwrap_or(self.commitlog.current_segment());
        self.commitlog.release_segments_before(oldest_needed);
        let oldest_live = self.commitlog.current_segment() + 1 - self.commitlog.live_segments();
        self.replay_log.release_before(oldest_live);
    }

    // A crash.

    /// The rows whose commitlog entries were not on disk (a crash loses
    /// them).
    pub(super) fn lost_rows(&self) -> Vec<(u64, RowVersion)> {
        self.replay_log.lost(self.commitlog.durable_position())
    }

    /// What a replay after a crash now would find in the log.
    pub(super) fn durable_replay(&self) -> Replay {
        self.replay_log.durable(self.commitlog.durable_position())
    }

    // Counters.

    /// The counters, as of `now` (a waiting period still open counts up to
    /// `now`).
    pub(super) fn counters(&self, now: SimTime) -> WriteCounters {
        WriteCounters {
            throttled_total: self.throttled_time(now),
            ..self.counters
        }
    }

    /// The counters, waiting periods closed so far only.
    pub(super) fn totals(&self) -> WriteCounters {
        self.counters
    }

    /// A restarted shard's write path carries its earlier lives' counters.
    pub(super) fn carry(&mut self, counters: WriteCounters) {
        assert_eq!(
            self.counters,
            WriteCounters::default(),
            "counters carried into a write path in use"
        );
        self.counters = counters;
    }

    /// What must hold: virtual dirty memory within dirty memory, the sealed
    /// memtables' memory counted, a sealed memtable only while a flush
    /// runs, nothing waiting for durability outside batch mode, durability
    /// waits in log order, and a throttling period open exactly while
    /// writes wait.
    pub(super) fn check_invariants(&self) {
        self.commitlog.check_invariants();
        self.replay_log.check_invariants();
        // The flushing memtable is checked by its job.
        for memtable in std::iter::once(&self.active).chain(&self.sealed) {
            memtable.check_invariants();
        }
        if let Some(job) = &self.flushing {
            job.check_invariants();
        }
        assert!(self.virtual_dirty_bytes() <= self.dirty_bytes());
        assert!(
            self.flushing.is_some() || self.sealed.is_empty(),
            "a sealed memtable waits while no flush runs"
        );
        let sealed: u64 = self.sealed.iter().map(|m| m.memory_bytes).sum();
        assert_eq!(sealed, self.sealed_memory_bytes);
        assert!(
            self.awaiting_durability.is_empty() || self.commitlog.mode() == SyncMode::Batch,
            "writes wait for durability in periodic mode"
        );
        assert!(
            self.throttled.is_empty() || self.throttled_since.is_some(),
            "writes wait with no waiting period open"
        );
        assert!(
            self.sealed.iter().all(|memtable| !memtable.is_empty()),
            "an empty memtable sealed"
        );
        assert!(
            self.memtables()
                .all(|memtable| memtable.cells.is_some() == self.limits.data_mode),
            "a memtable of the other mode"
        );
    }
}

/// An empty memtable, keeping its rows in data mode.
fn new_memtable(id: u64, data_mode: bool) -> Memtable {
    if data_mode {
        Memtable::with_cells(id)
    } else {
        Memtable::new(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Operation, RequestId};
    use crate::shard::Origin;

    const MIB: u64 = 1024 * 1024;

    fn write_path() -> WritePath {
        WritePath::new(&ShardConfig::scylla_defaults(64 * MIB))
    }

    fn write(key: u64) -> Request {
        Request {
            origin: Origin::Client(RequestId(key)),
            operation: Operation::Write {
                rows: 1,
                key,
                value_bytes: 1000,
                timestamp: 1,
            },
        }
    }

    #[test]
    fn writes_apply_seal_and_flush_into_an_sstable() {
        let mut path = write_path();
        let mut key = 0;
        while !path.seal_if_pressed() {
            key += 1;
            // The disk takes every buffer at once.
            while let Some(buffer) = path.next_commitlog_write() {
                path.commitlog_write_done(buffer);
            }
            let Appended::Apply { segment, request } = path.append_in_turn(write(key), 1100) else {
                panic!("a periodic commitlog with room applies at once");
            };
            let Operation::Write {
                timestamp,
                value_bytes,
                ..
            } = request.operation
            else {
                unreachable!()
            };
            let version = RowVersion {
                timestamp,
                value_bytes,
            };
            path.apply(key, version, 1, segment);
            path.check_invariants();
        }
        assert!(path.flush_ready());
        let dirty = path.dirty_bytes();
        path.start_flush(1);
        path.check_invariants();
        assert_eq!(
            path.dirty_bytes(),
            dirty,
            "a flush frees memory only once done"
        );
        let sstable = loop {
            match path.flush_step(SimTime::ZERO) {
                FlushProgress::Serialize { bytes, .. } => {
                    path.flush_serialized(bytes);
                    path.flush_written(bytes);
                }
                FlushProgress::Finished(sstable) => break sstable,
                FlushProgress::Waiting | FlushProgress::Idle => panic!("the flush stalled"),
            }
            path.check_invariants();
        };
        assert_eq!(sstable.rows, key);
        assert!(path.all_flushed());
        assert_eq!(path.totals().flushes_completed, 1);
        assert_eq!(path.totals().writes_completed, key);
    }

    #[test]
    fn throttled_writes_wait_in_order_and_count_their_time() {
        let mut path = write_path();
        // Past the throttle limit: a memtable's worth of dirty memory.
        let mut key = 0;
        while !path.over_dirty_limits() {
            key += 1;
            path.apply(
                key,
                RowVersion {
                    timestamp: 1,
                    value_bytes: 1000,
                },
                1,
                0,
            );
        }
        let at = SimTime::from_nanos(5);
        assert!(path.admit(at, write(1_000_001)).is_none());
        assert!(path.admit(at, write(1_000_002)).is_none());
        path.check_invariants();
        assert_eq!(path.writes_throttled(), 2);
        assert_eq!(path.throttled_time(SimTime::from_nanos(15)).as_nanos(), 10);
        // Memory stays full: nobody goes.
        assert!(path.next_unthrottled(SimTime::from_nanos(15)).is_none());
    }

    #[test]
    #[should_panic(expected = "no waiting period open")]
    fn writes_waiting_without_a_waiting_period_are_caught() {
        let mut path = write_path();
        path.throttled.push_back(write(1));
        path.check_invariants();
    }

    #[test]
    #[should_panic(expected = "a sealed memtable waits while no flush runs")]
    fn a_sealed_memtable_without_a_flush_is_caught() {
        let mut path = write_path();
        path.apply(
            1,
            RowVersion {
                timestamp: 1,
                value_bytes: 10,
            },
            1,
            0,
        );
        path.seal();
        path.check_invariants();
    }
}
