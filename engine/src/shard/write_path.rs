//! The write path: dirty-memory limits and throttling, the commitlog, the
//! memtable, and flushing sealed memtables to SSTables.

use super::{mutation_bytes, new_memtable, unit, IoPurpose, Request, Shard, TaskPurpose};
use crate::action::{Action, CpuTask, CpuWork, IoClass, IoKind, Operation, SchedulingGroup};
use crate::cells::RowVersion;
use crate::commitlog::{Append, SyncMode, ENTRY_OVERHEAD_BYTES};
use crate::flush::{FlushJob, FlushStep};
use units::{SimDuration, SimTime};

impl Shard {
    pub(super) fn dirty_bytes(&self) -> u64 {
        let flushing = self
            .flushing
            .as_ref()
            .map_or(0, |job| job.memtable().memory_bytes);
        self.active.memory_bytes + self.sealed_memory_bytes + flushing
    }

    pub(super) fn virtual_dirty_bytes(&self) -> u64 {
        let written = self
            .flushing
            .as_ref()
            .map_or(0, FlushJob::written_memory_bytes);
        self.dirty_bytes() - written
    }

    pub(super) fn over_dirty_limits(&self) -> bool {
        self.virtual_dirty_bytes() >= self.config.throttle_bytes()
            || self.dirty_bytes() >= self.config.dirty_limit_bytes()
    }

    pub(super) fn start_write(&mut self, request: Request) {
        let Operation::Write { value_bytes, .. } = request.operation else {
            unreachable!("only writes take the write path");
        };
        let task = self.new_task(TaskPurpose::Write(request));
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Statement,
            work: CpuWork::WriteRequest {
                mutation_bytes: mutation_bytes(value_bytes),
            },
        }));
    }

    /// Appends the write's commitlog entry and applies it, or parks it until
    /// a commitlog buffer frees. Returns false if it had to wait.
    pub(super) fn append_and_apply(&mut self, now: SimTime, request: Request) -> bool {
        let Operation::Write { value_bytes, .. } = request.operation else {
            unreachable!("only writes take the write path");
        };
        let entry_bytes = mutation_bytes(value_bytes) + ENTRY_OVERHEAD_BYTES;
        let segment = match self.commitlog.append(entry_bytes) {
            Append::Accepted {
                segment,
                end_position,
            } => {
                if let Operation::Write { key, timestamp, .. } = request.operation {
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
                }
                if end_position > self.commitlog.durable_position()
                    && self.commitlog.mode() == SyncMode::Batch
                {
                    self.awaiting_durability
                        .push_back((end_position, segment, request));
                    self.submit_commitlog_writes();
                    return true;
                }
                segment
            }
            Append::MustWait => {
                self.waiting_for_commitlog.push_back(request);
                return false;
            }
        };
        self.submit_commitlog_writes();
        self.apply_write(now, segment, request);
        true
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
        self.active.store(
            key,
            RowVersion {
                timestamp,
                value_bytes,
            },
        );
        // Each row carries the memtable's and the SSTable's per-row
        // footprint.
        let rows = u64::from(rows.max(1));
        let memory_bytes = row_bytes + rows * self.config.memtable_row_overhead_bytes;
        let sstable_bytes = row_bytes + rows * self.config.sstable_row_overhead_bytes;
        self.active
            .insert(key, memory_bytes, sstable_bytes, segment);
        self.writes_completed += 1;
        self.flushed_bytes_written += sstable_bytes;
        self.respond_written(now, request.origin);
        self.maybe_start_flush(now);
    }

    pub(super) fn resume_commitlog_waiters(&mut self, now: SimTime) {
        while let Some(request) = self.waiting_for_commitlog.pop_front() {
            if !self.append_and_apply(now, request) {
                // It went back to the end; put it back at the front.
                let request = self.waiting_for_commitlog.pop_back().expect("just parked");
                self.waiting_for_commitlog.push_front(request);
                break;
            }
        }
    }

    pub(super) fn resume_throttled(&mut self, now: SimTime) {
        while !self.throttled.is_empty() && !self.over_dirty_limits() {
            let request = self.throttled.pop_front().expect("checked non-empty");
            self.start_write(request);
        }
        if self.throttled.is_empty() {
            if let Some(since) = self.throttled_since.take() {
                self.throttled_total = self.throttled_total + (now - since);
            }
        }
    }

    /// Time writes have spent throttled at the dirty-memory limit since the
    /// start: the time during which at least one write was waiting.
    pub fn write_throttled_time(&self, now: SimTime) -> SimDuration {
        self.throttled_total
            + self
                .throttled_since
                .map_or(SimDuration::ZERO, |since| now - since)
    }

    pub(super) fn submit_commitlog_writes(&mut self) {
        while let Some(write) = self.commitlog.next_write() {
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
        let pressure = self.virtual_dirty_bytes() >= self.config.flush_soft_limit_bytes()
            || self.commitlog.over_space_limit();
        if pressure && self.sealed.is_empty() && !self.active.is_empty() {
            self.seal_active();
        }
        if self.flushing.is_none() {
            if let Some(memtable) = self.sealed.pop_front() {
                self.sealed_memory_bytes -= memtable.memory_bytes;
                let generation = self.next_sstable_generation;
                self.next_sstable_generation += 1;
                self.flushing = Some(FlushJob::new(
                    memtable,
                    generation,
                    self.config.flush_write_bytes,
                    self.config.flush_write_behind,
                ));
                if self
                    .config
                    .planted
                    .has(crate::planted::PlantedBug::FlushReleasesCommitlogAtStart)
                {
                    self.release_commitlog_segments();
                }
                self.advance_flush(now);
            }
        }
    }

    pub(super) fn seal_active(&mut self) {
        let id = self.next_memtable_id;
        self.next_memtable_id += 1;
        let memtable = std::mem::replace(&mut self.active, new_memtable(id, self.config.data_mode));
        self.sealed_memory_bytes += memtable.memory_bytes;
        self.sealed.push_back(memtable);
        self.resize_row_cache();
    }

    pub(super) fn advance_flush(&mut self, now: SimTime) {
        let Some(job) = self.flushing.as_mut() else {
            return;
        };
        if job.is_complete() {
            let job = self.flushing.take().expect("checked");
            let (sstable, _memtable) = job.finish(now);
            self.compaction.backlog.add_sstable(&sstable);
            self.sstables.push(sstable);
            self.sstables_epoch += 1;
            self.flushes_completed += 1;
            self.resize_row_cache();
            self.release_commitlog_segments();
            self.resume_throttled(now);
            self.maybe_start_flush(now);
            self.maybe_start_compactions(now);
            if self.is_replaying() {
                self.replay_step(now);
            }
            return;
        }
        if let FlushStep::Serialize { bytes, rows } = job.next_step() {
            let task = self.new_task(TaskPurpose::FlushSerialize { bytes });
            self.actions.push_back(Action::RunCpu(CpuTask {
                id: task,
                group: SchedulingGroup::Memtable,
                work: CpuWork::FlushSerialize { bytes, rows },
            }));
        }
    }

    /// Segments older than every unflushed memtable's first segment hold only
    /// flushed data.
    pub(super) fn release_commitlog_segments(&mut self) {
        let oldest_needed = self
            .sealed
            .iter()
            .chain(self.flushing.as_ref().map(FlushJob::memtable).filter(|_| {
                // The planted bug takes a flush under way for done.
                !self
                    .config
                    .planted
                    .has(crate::planted::PlantedBug::FlushReleasesCommitlogAtStart)
            }))
            .chain(std::iter::once(&self.active))
            .filter_map(|memtable| memtable.first_segment)
            .min()
            .unwrap_or(self.commitlog.current_segment());
        self.commitlog.release_segments_before(oldest_needed);
        let oldest_live = self.commitlog.current_segment() + 1 - self.commitlog.live_segments();
        self.replay_log.release_before(oldest_live);
    }
}
