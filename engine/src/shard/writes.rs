//! The shard's side of the write path: what the write path's state
//! ([`super::write_path::WritePath`]) asks of the rest of the shard. A
//! write's statement task, its commitlog buffer writes and the flush's
//! serialization tasks and writes, the reply, the row cache and the read
//! population it updates, and the SSTable a flush leaves.

use super::write_path::{Appended, FlushProgress};
use super::{mutation_bytes, unit, IoPurpose, Request, Shard, TaskPurpose};
use crate::action::{Action, CpuTask, CpuWork, IoClass, IoKind, Operation, SchedulingGroup};
use crate::cells::RowVersion;
use crate::commitlog::ENTRY_OVERHEAD_BYTES;
use units::{SimDuration, SimTime};

impl Shard {
    /// A write this shard runs as a replica: its statement task, unless it
    /// must wait for dirty memory.
    pub(super) fn admit_write(&mut self, now: SimTime, request: Request) {
        debug_assert!(!self.is_down(), "a write reaches a dead process");
        if let Some(request) = self.write.admit(now, request) {
            self.start_write(request);
        }
    }

    pub(super) fn start_write(&mut self, request: Request) {
        let Operation::Write { value_bytes, .. } = request.operation else {
            unreachable!("only writes take the write path");
        };
        debug_assert!(
            !self.write.over_dirty_limits(),
            "a write runs while dirty memory is over its limits"
        );
        let task = self.new_task(TaskPurpose::Write(request));
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Statement,
            work: CpuWork::WriteRequest {
                mutation_bytes: mutation_bytes(value_bytes),
            },
        }));
    }

    /// A write's statement task ran: its commitlog entry, then (once in a
    /// buffer, or on disk in batch mode) the memtable.
    pub(super) fn write_statement_done(&mut self, now: SimTime, request: Request) {
        let appended = self.write.append_in_turn(request, entry_bytes(&request));
        self.appended(now, appended);
    }

    /// Where a commitlog append left a write: applied, or waiting.
    fn appended(&mut self, now: SimTime, appended: Appended) {
        match appended {
            Appended::Apply { segment, request } => {
                self.submit_commitlog_writes();
                self.apply_write(now, segment, request);
            }
            Appended::AwaitingDurability => self.submit_commitlog_writes(),
            Appended::Waiting => {}
        }
    }

    /// Applies a write whose commitlog entry is in (periodic) or on disk
    /// (batch): memtable insert, reply, and a flush if memory calls for one.
    pub(super) fn apply_write(&mut self, now: SimTime, segment: u64, request: Request) {
        let Operation::Write {
            key,
            value_bytes,
            timestamp,
            rows,
        } = request.operation
        else {
            unreachable!("only writes take the write path");
        };
        let row_bytes = 8 + u64::from(value_bytes);
        if !self.config.data_mode {
            let range = self
                .config
                .placement
                .range_of(crate::placement::key_token(key));
            self.population.record_write(range, key, value_bytes);
        }
        if let Some(cache) = self.row_cache.as_mut() {
            cache.write(key, row_bytes, unit(&mut self.draws.row_cache));
        }
        let version = RowVersion {
            timestamp,
            value_bytes,
        };
        self.write.apply(key, version, rows, segment);
        self.respond_written(now, request.origin);
        self.maybe_start_flush(now);
    }

    /// A commitlog buffer write is on disk: batch mode's writes it made
    /// durable apply, and writes and batchlog entries waiting for a buffer
    /// go on.
    pub(super) fn commitlog_written(&mut self, now: SimTime, write: crate::commitlog::BufferWrite) {
        self.write.commitlog_write_done(write);
        while let Some((segment, request)) = self.write.next_durable() {
            self.apply_write(now, segment, request);
        }
        self.submit_commitlog_writes();
        self.resume_commitlog_waiters(now);
        self.resume_batchlog_waiters(now);
    }

    pub(super) fn resume_commitlog_waiters(&mut self, now: SimTime) {
        while let Some(appended) = self.write.append_waiting(entry_bytes) {
            self.appended(now, appended);
        }
    }

    pub(super) fn resume_throttled(&mut self, now: SimTime) {
        while let Some(request) = self.write.next_unthrottled(now) {
            self.start_write(request);
        }
        debug_assert!(
            self.write.writes_throttled() == 0 || self.write.over_dirty_limits(),
            "writes left waiting with memory free"
        );
    }

    /// Time writes have spent throttled at the dirty-memory limit since the
    /// start: the time during which at least one write was waiting.
    pub fn write_throttled_time(&self, now: SimTime) -> SimDuration {
        self.write.throttled_time(now)
    }

    pub(super) fn submit_commitlog_writes(&mut self) {
        while let Some(write) = self.write.next_commitlog_write() {
            debug_assert!(write.bytes > 0, "an empty commitlog write");
            self.submit_io(
                IoKind::Write,
                write.bytes,
                IoClass::Commitlog,
                IoPurpose::CommitlogWrite { write },
            );
        }
    }

    /// Seals the active memtable when virtual dirty memory reaches the soft
    /// limit or the commitlog is over its space, then starts a flush if the
    /// flush permit is free.
    pub(super) fn maybe_start_flush(&mut self, now: SimTime) {
        if self.write.seal_if_pressed() {
            self.resize_row_cache();
        }
        if self.write.flush_ready() {
            let generation = self.next_sstable_generation;
            self.next_sstable_generation += 1;
            self.write.start_flush(generation);
            self.advance_flush(now);
        }
        debug_assert!(
            !self.write.flush_ready(),
            "a sealed memtable waits with the flush permit free"
        );
    }

    /// Seals the active memtable (a replay's end flushes what it applied).
    pub(super) fn seal_active(&mut self) {
        debug_assert!(!self.write.is_empty_active(), "sealing an empty memtable");
        self.write.seal();
        self.resize_row_cache();
    }

    pub(super) fn advance_flush(&mut self, now: SimTime) {
        match self.write.flush_step(now) {
            FlushProgress::Idle | FlushProgress::Waiting => {}
            FlushProgress::Serialize { bytes, rows } => {
                let task = self.new_task(TaskPurpose::FlushSerialize { bytes });
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Memtable,
                    work: CpuWork::FlushSerialize { bytes, rows },
                }));
            }
            FlushProgress::Finished(sstable) => {
                debug_assert!(sstable.rows > 0, "a flush wrote an empty SSTable");
                debug_assert!(
                    self.sstables
                        .iter()
                        .all(|held| held.generation != sstable.generation),
                    "a flush reused generation {}",
                    sstable.generation
                );
                self.compaction.add_sstable(&sstable);
                self.sstables.push(sstable);
                self.sstables_epoch += 1;
                self.resize_row_cache();
                self.resume_throttled(now);
                self.maybe_start_flush(now);
                self.maybe_start_compactions(now);
                if self.is_replaying() {
                    self.replay_step(now);
                }
            }
        }
    }

    /// `bytes` of the flushing memtable are serialized: write them.
    pub(super) fn flush_serialized(&mut self, now: SimTime, bytes: u64) {
        debug_assert!(bytes > 0, "an empty flush chunk");
        let memtable = self.write.flush_serialized(bytes);
        let (sstable_bytes, rows) = (memtable.sstable_bytes, memtable.rows);
        self.submit_flush_chunk(
            bytes,
            sstable_bytes,
            rows,
            IoClass::MemtableFlush,
            IoPurpose::FlushWrite { bytes },
        );
        self.advance_flush(now);
    }

    /// Writes `bytes` serialized of a memtable of `sstable_bytes` and
    /// `rows` (a flush's or a streaming flush's chunk) as the SSTable
    /// format lays them on disk.
    pub(super) fn submit_flush_chunk(
        &mut self,
        bytes: u64,
        sstable_bytes: u64,
        rows: u64,
        class: IoClass,
        purpose: IoPurpose,
    ) {
        let disk_bytes = self
            .config
            .sstable_format
            .write_bytes(bytes, sstable_bytes, rows);
        self.submit_io(IoKind::Write, disk_bytes, class, purpose);
    }

    /// `bytes` of the flush are on disk.
    pub(super) fn flush_written(&mut self, now: SimTime, bytes: u64) {
        debug_assert!(bytes > 0, "an empty flush write");
        self.write.flush_written(bytes);
        self.advance_flush(now);
        self.resume_throttled(now);
    }
}

/// A write's commitlog entry: its mutation and the entry's frame.
fn entry_bytes(request: &Request) -> u64 {
    let Operation::Write { value_bytes, .. } = request.operation else {
        unreachable!("only writes take the write path");
    };
    mutation_bytes(value_bytes) + ENTRY_OVERHEAD_BYTES
}
