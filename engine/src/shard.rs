//! A shard: the write path's mechanisms tied into one sans-IO state machine.
//!
//! API in four kinds, as quinn-proto's `Connection`:
//! - getters: [`Shard::stats`], [`Shard::config`], [`Shard::sstables`];
//! - inputs: [`Shard::handle_client_request`], [`Shard::handle_io_done`],
//!   [`Shard::handle_cpu_done`], [`Shard::handle_timeout`];
//! - outputs: [`Shard::poll_action`] (drain until `None` after every input)
//!   and [`Shard::poll_timeout`] (the next time `handle_timeout` is due).
//!
//! The write path, as Scylla runs it in periodic commitlog mode:
//! 1. a write arrives; if dirty memory is over its limits it waits (write
//!    throttling), otherwise a CPU task in the statement group runs it;
//! 2. its commitlog entry goes into the buffer (or waits for buffer space);
//! 3. the row goes into the active memtable and the client gets its reply;
//! 4. when virtual dirty memory reaches the soft limit, or the commitlog is
//!    over its space, the active memtable is sealed and flushed to an SSTable
//!    (one flush at a time); when the flush completes its memory is freed,
//!    commitlog segments it covered are released, and waiting writes resume.
//!
//! The read path (see [`crate::read`] for what is decided how): a CPU task
//! in the statement group, a memtable lookup, then for every SSTable whose
//! bloom filter passes an index read followed by a data read, all SSTables in
//! parallel; the reply carries the row if any source had it.

use std::collections::VecDeque;

use slab::Slab;
use units::SimTime;

use crate::action::{
    Action, ClientReply, ClientRequest, CpuTask, CpuWork, IoClass, IoId, IoKind, IoRequest,
    Operation, ReplyStatus, SchedulingGroup, TaskId,
};
use crate::commitlog::{Append, Commitlog, ENTRY_OVERHEAD_BYTES};
use crate::config::ShardConfig;
use crate::flush::{FlushJob, FlushStep};
use crate::memtable::Memtable;
use crate::read;
use crate::sstable::SSTable;
use crate::timer::{TimerKind, TimerTable};

/// Why a CPU task was started.
#[derive(Clone, Copy, Debug)]
enum TaskPurpose {
    Write(ClientRequest),
    Read(ClientRequest),
    FlushSerialize { bytes: u64 },
}

/// Why an I/O was submitted.
#[derive(Clone, Copy, Debug)]
enum IoPurpose {
    CommitlogWrite {
        bytes: u64,
    },
    FlushWrite {
        bytes: u64,
    },
    /// An index page for read `read`; the row that follows is `row_bytes` on
    /// disk and holds `value_bytes` if the SSTable has the key.
    ReadIndex {
        read: u32,
        row_bytes: u64,
        value_bytes: Option<u32>,
    },
    /// The data of a row (or a bloom-filter false positive's empty page).
    ReadData {
        read: u32,
        value_bytes: Option<u32>,
    },
}

/// A read waiting for its SSTable I/O.
#[derive(Clone, Copy, Debug)]
struct PendingRead {
    request: ClientRequest,
    ios_outstanding: u32,
    value_bytes: Option<u32>,
}

/// Point-in-time figures of a shard, for time series and checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShardStats {
    /// Memory of the active and flushing memtables.
    pub memtable_bytes: u64,
    /// Real dirty memory.
    pub dirty_bytes: u64,
    /// Virtual dirty memory (real minus what the running flush has written).
    pub virtual_dirty_bytes: u64,
    /// SSTables on disk.
    pub sstable_count: u64,
    /// Bytes in SSTables on disk.
    pub sstable_bytes: u64,
    /// Flushes completed since start.
    pub flushes_completed: u64,
    /// Commitlog segments on disk.
    pub commitlog_segments: u64,
    /// Writes waiting on dirty-memory limits right now.
    pub writes_throttled: u64,
    /// Writes waiting on commitlog buffers right now.
    pub writes_waiting_commitlog: u64,
    /// Writes acknowledged since start.
    pub writes_completed: u64,
    /// Reads answered since start.
    pub reads_completed: u64,
}

/// One shard of a node: Scylla runs one per core, each owning a slice of the
/// node's memory and of the token range, sharing the node's disk and NIC.
pub struct Shard {
    config: ShardConfig,
    active: Memtable,
    /// Sealed memtables waiting for the flush permit, oldest first.
    sealed: VecDeque<Memtable>,
    flushing: Option<FlushJob>,
    sstables: Vec<SSTable>,
    commitlog: Commitlog,
    tasks: Slab<TaskPurpose>,
    ios: Slab<IoPurpose>,
    reads: Slab<PendingRead>,
    throttled: VecDeque<ClientRequest>,
    waiting_for_commitlog: VecDeque<ClientRequest>,
    actions: VecDeque<Action>,
    timers: TimerTable,
    next_memtable_id: u64,
    next_sstable_generation: u64,
    flushes_completed: u64,
    writes_completed: u64,
    reads_completed: u64,
    /// Memory of sealed (waiting) memtables.
    sealed_memory_bytes: u64,
}

impl Shard {
    /// A shard with no data, whose timers start at `now`.
    pub fn new(config: ShardConfig, now: SimTime) -> Shard {
        config
            .validate()
            .unwrap_or_else(|reason| panic!("invalid shard configuration: {reason}"));
        let commitlog = Commitlog::new(
            config.commitlog_buffer_bytes,
            config.commitlog_segment_bytes,
            config.commitlog_max_active_writes,
            config.commitlog_total_space_bytes,
        );
        let mut timers = TimerTable::default();
        timers.set(TimerKind::CommitlogSync, now + config.commitlog_sync_period);
        Shard {
            config,
            active: Memtable::new(0),
            sealed: VecDeque::new(),
            flushing: None,
            sstables: Vec::new(),
            commitlog,
            tasks: Slab::new(),
            ios: Slab::new(),
            reads: Slab::new(),
            throttled: VecDeque::new(),
            waiting_for_commitlog: VecDeque::new(),
            actions: VecDeque::new(),
            timers,
            next_memtable_id: 1,
            next_sstable_generation: 1,
            flushes_completed: 0,
            writes_completed: 0,
            reads_completed: 0,
            sealed_memory_bytes: 0,
        }
    }

    // ----- getters -----

    /// The shard's configuration.
    pub fn config(&self) -> &ShardConfig {
        &self.config
    }

    /// SSTables on disk, oldest first.
    pub fn sstables(&self) -> &[SSTable] {
        &self.sstables
    }

    /// Current figures.
    pub fn stats(&self) -> ShardStats {
        ShardStats {
            memtable_bytes: self.dirty_bytes(),
            dirty_bytes: self.dirty_bytes(),
            virtual_dirty_bytes: self.virtual_dirty_bytes(),
            sstable_count: self.sstables.len() as u64,
            sstable_bytes: self.sstables.iter().map(|s| s.data_bytes).sum(),
            flushes_completed: self.flushes_completed,
            commitlog_segments: self.commitlog.live_segments(),
            writes_throttled: self.throttled.len() as u64,
            writes_waiting_commitlog: self.waiting_for_commitlog.len() as u64,
            writes_completed: self.writes_completed,
            reads_completed: self.reads_completed,
        }
    }

    fn dirty_bytes(&self) -> u64 {
        let flushing = self
            .flushing
            .as_ref()
            .map_or(0, |job| job.memtable().memory_bytes);
        self.active.memory_bytes + self.sealed_memory_bytes + flushing
    }

    fn virtual_dirty_bytes(&self) -> u64 {
        let written = self
            .flushing
            .as_ref()
            .map_or(0, FlushJob::written_memory_bytes);
        self.dirty_bytes() - written
    }

    fn over_dirty_limits(&self) -> bool {
        self.virtual_dirty_bytes() >= self.config.throttle_bytes()
            || self.dirty_bytes() >= self.config.dirty_limit_bytes()
    }

    // ----- inputs -----

    /// A client request arrives.
    pub fn handle_client_request(&mut self, now: SimTime, request: ClientRequest) {
        match request.operation {
            Operation::Write { .. } => {
                // Keep arrival order: once anything waits, newcomers wait behind it.
                if !self.throttled.is_empty() || self.over_dirty_limits() {
                    self.throttled.push_back(request);
                } else {
                    self.start_write(request);
                }
            }
            Operation::Read { key } => {
                let sstables = self
                    .sstables
                    .iter()
                    .filter(|sstable| {
                        read::bloom_filter_passes(sstable, key, self.config.key_ownership_fraction)
                    })
                    .count();
                let task = TaskId(self.tasks.insert(TaskPurpose::Read(request)) as u64);
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Statement,
                    work: CpuWork::ReadRequest {
                        sstables: sstables as u32,
                    },
                }));
            }
        }
        self.check_invariants(now);
    }

    /// A CPU task finished.
    pub fn handle_cpu_done(&mut self, now: SimTime, task: TaskId) {
        let purpose = self.tasks.try_remove(task.0 as usize).unwrap_or_else(|| {
            panic!("CPU completion for unknown task {task:?}");
        });
        match purpose {
            TaskPurpose::Write(request) => {
                if self.waiting_for_commitlog.is_empty() {
                    self.append_and_apply(now, request);
                } else {
                    self.waiting_for_commitlog.push_back(request);
                }
            }
            TaskPurpose::Read(request) => self.execute_read(request),
            TaskPurpose::FlushSerialize { bytes } => {
                let job = self
                    .flushing
                    .as_mut()
                    .expect("flush serialization without a flush");
                job.serialized(bytes);
                self.submit_io(
                    IoKind::Write,
                    bytes,
                    IoClass::MemtableFlush,
                    IoPurpose::FlushWrite { bytes },
                );
                self.advance_flush(now);
            }
        }
        self.check_invariants(now);
    }

    /// An I/O finished.
    pub fn handle_io_done(&mut self, now: SimTime, io: IoId) {
        let purpose = self.ios.try_remove(io.0 as usize).unwrap_or_else(|| {
            panic!("I/O completion for unknown I/O {io:?}");
        });
        match purpose {
            IoPurpose::CommitlogWrite { bytes } => {
                self.commitlog.write_done(bytes);
                self.submit_commitlog_writes();
                self.resume_commitlog_waiters(now);
            }
            IoPurpose::FlushWrite { bytes } => {
                self.flushing
                    .as_mut()
                    .expect("flush write without a flush")
                    .written(bytes);
                self.advance_flush(now);
                self.resume_throttled();
            }
            IoPurpose::ReadIndex {
                read,
                row_bytes,
                value_bytes,
            } => {
                let bytes = read::data_read_bytes(row_bytes);
                self.submit_io(
                    IoKind::Read,
                    bytes,
                    IoClass::Query,
                    IoPurpose::ReadData { read, value_bytes },
                );
            }
            IoPurpose::ReadData { read, value_bytes } => {
                let pending = &mut self.reads[read as usize];
                pending.ios_outstanding -= 1;
                if value_bytes.is_some() {
                    pending.value_bytes = pending.value_bytes.max(value_bytes);
                }
                if pending.ios_outstanding == 0 {
                    let pending = self.reads.remove(read as usize);
                    self.reply_read(pending.request, pending.value_bytes);
                }
            }
        }
        self.check_invariants(now);
    }

    /// Timers due at or before `now` fire.
    pub fn handle_timeout(&mut self, now: SimTime) {
        while let Some(kind) = self.timers.take_expired(now) {
            match kind {
                TimerKind::CommitlogSync => {
                    self.commitlog.sync();
                    self.submit_commitlog_writes();
                    self.timers.set(
                        TimerKind::CommitlogSync,
                        now + self.config.commitlog_sync_period,
                    );
                }
            }
        }
        self.check_invariants(now);
    }

    // ----- outputs -----

    /// The next action for the driver, in the order they were produced.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Shard::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.timers.next_deadline()
    }

    // ----- the read path -----

    /// Looks the key up in the memtables and sends an index read to every
    /// SSTable whose bloom filter passes; replies at once if none does.
    fn execute_read(&mut self, request: ClientRequest) {
        let Operation::Read { key } = request.operation else {
            unreachable!("a read task carries a read");
        };
        let ownership = self.config.key_ownership_fraction;
        let memtable_value = std::iter::once(&self.active)
            .chain(self.sealed.iter())
            .chain(self.flushing.as_ref().map(FlushJob::memtable))
            .find(|memtable| read::memtable_contains(memtable, key, ownership))
            .map(|memtable| {
                read::mean_value_bytes(
                    memtable.memory_bytes,
                    memtable.rows,
                    self.config.memtable_row_overhead_bytes,
                )
            });
        let read_slot = self.reads.insert(PendingRead {
            request,
            ios_outstanding: 0,
            value_bytes: memtable_value,
        }) as u32;
        let overhead = self.config.sstable_row_overhead_bytes;
        let lookups: Vec<IoPurpose> = self
            .sstables
            .iter()
            .filter(|sstable| read::bloom_filter_passes(sstable, key, ownership))
            .map(|sstable| IoPurpose::ReadIndex {
                read: read_slot,
                row_bytes: sstable.data_bytes / sstable.rows.max(1),
                value_bytes: read::sstable_contains(sstable, key, ownership)
                    .then(|| read::mean_value_bytes(sstable.data_bytes, sstable.rows, overhead)),
            })
            .collect();
        if lookups.is_empty() {
            let pending = self.reads.remove(read_slot as usize);
            self.reply_read(pending.request, pending.value_bytes);
            return;
        }
        self.reads[read_slot as usize].ios_outstanding = lookups.len() as u32;
        for lookup in lookups {
            self.submit_io(IoKind::Read, read::INDEX_READ_BYTES, IoClass::Query, lookup);
        }
    }

    fn reply_read(&mut self, request: ClientRequest, value_bytes: Option<u32>) {
        let status = match value_bytes {
            Some(value_bytes) => ReplyStatus::Found { value_bytes },
            None => ReplyStatus::NotFound,
        };
        self.reads_completed += 1;
        self.actions.push_back(Action::Reply(ClientReply {
            id: request.id,
            status,
        }));
    }

    // ----- the write path -----

    fn start_write(&mut self, request: ClientRequest) {
        let Operation::Write { value_bytes, .. } = request.operation else {
            unreachable!("only writes take the write path");
        };
        let task = TaskId(self.tasks.insert(TaskPurpose::Write(request)) as u64);
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
    fn append_and_apply(&mut self, now: SimTime, request: ClientRequest) -> bool {
        let Operation::Write { key, value_bytes } = request.operation else {
            unreachable!("only writes take the write path");
        };
        let entry_bytes = mutation_bytes(value_bytes) + ENTRY_OVERHEAD_BYTES;
        let segment = match self.commitlog.append(entry_bytes) {
            Append::Accepted { segment } => segment,
            Append::MustWait => {
                self.waiting_for_commitlog.push_back(request);
                return false;
            }
        };
        self.submit_commitlog_writes();
        let row_bytes = 8 + u64::from(value_bytes);
        self.active.insert(
            key,
            row_bytes + self.config.memtable_row_overhead_bytes,
            row_bytes + self.config.sstable_row_overhead_bytes,
            segment,
        );
        self.writes_completed += 1;
        self.actions.push_back(Action::Reply(ClientReply {
            id: request.id,
            status: ReplyStatus::Written,
        }));
        self.maybe_start_flush(now);
        true
    }

    fn resume_commitlog_waiters(&mut self, now: SimTime) {
        while let Some(request) = self.waiting_for_commitlog.pop_front() {
            if !self.append_and_apply(now, request) {
                // It went back to the end; put it back at the front.
                let request = self.waiting_for_commitlog.pop_back().expect("just parked");
                self.waiting_for_commitlog.push_front(request);
                break;
            }
        }
    }

    fn resume_throttled(&mut self) {
        while !self.throttled.is_empty() && !self.over_dirty_limits() {
            let request = self.throttled.pop_front().expect("checked non-empty");
            self.start_write(request);
        }
    }

    fn submit_commitlog_writes(&mut self) {
        while let Some(bytes) = self.commitlog.next_write() {
            self.submit_io(
                IoKind::Write,
                bytes,
                IoClass::Commitlog,
                IoPurpose::CommitlogWrite { bytes },
            );
        }
    }

    fn submit_io(&mut self, kind: IoKind, bytes: u64, class: IoClass, purpose: IoPurpose) {
        let id = IoId(self.ios.insert(purpose) as u64);
        self.actions.push_back(Action::SubmitIo(IoRequest {
            id,
            kind,
            bytes,
            class,
        }));
    }

    // ----- flushing -----

    /// Seals the active memtable when virtual dirty memory reaches the soft
    /// limit or the commitlog is over its space, then starts a flush if the
    /// flush permit is free.
    fn maybe_start_flush(&mut self, now: SimTime) {
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
                self.advance_flush(now);
            }
        }
    }

    fn seal_active(&mut self) {
        let id = self.next_memtable_id;
        self.next_memtable_id += 1;
        let memtable = std::mem::replace(&mut self.active, Memtable::new(id));
        self.sealed_memory_bytes += memtable.memory_bytes;
        self.sealed.push_back(memtable);
    }

    fn advance_flush(&mut self, now: SimTime) {
        let Some(job) = self.flushing.as_mut() else {
            return;
        };
        if job.is_complete() {
            let job = self.flushing.take().expect("checked");
            let (sstable, _memtable) = job.finish(now);
            self.sstables.push(sstable);
            self.flushes_completed += 1;
            self.release_commitlog_segments();
            self.resume_throttled();
            self.maybe_start_flush(now);
            return;
        }
        if let FlushStep::Serialize(bytes) = job.next_step() {
            let task = TaskId(self.tasks.insert(TaskPurpose::FlushSerialize { bytes }) as u64);
            self.actions.push_back(Action::RunCpu(CpuTask {
                id: task,
                group: SchedulingGroup::Memtable,
                work: CpuWork::FlushSerialize { bytes },
            }));
        }
    }

    /// Segments older than every unflushed memtable's first segment hold only
    /// flushed data.
    fn release_commitlog_segments(&mut self) {
        let oldest_needed = self
            .sealed
            .iter()
            .chain(self.flushing.as_ref().map(FlushJob::memtable))
            .chain(std::iter::once(&self.active))
            .filter_map(|memtable| memtable.first_segment)
            .min()
            .unwrap_or(self.commitlog.current_segment());
        self.commitlog.release_segments_before(oldest_needed);
    }

    // ----- invariants -----

    fn check_invariants(&self, now: SimTime) {
        if cfg!(debug_assertions) {
            self.commitlog.check_invariants();
            assert!(self.virtual_dirty_bytes() <= self.dirty_bytes());
            if let Some(deadline) = self.poll_timeout() {
                assert!(
                    deadline > now,
                    "a due timer was not handled: {deadline} <= {now}"
                );
            }
            assert!(
                self.flushing.is_some() || self.sealed.is_empty(),
                "a sealed memtable waits while no flush runs"
            );
            let sealed: u64 = self.sealed.iter().map(|m| m.memory_bytes).sum();
            assert_eq!(sealed, self.sealed_memory_bytes);
        }
    }
}

/// Serialized size of a write mutation: key (8 bytes as c-s seeds it) plus
/// column values plus a small frame.
fn mutation_bytes(value_bytes: u32) -> u64 {
    8 + u64::from(value_bytes) + 24
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::RequestId;

    const MIB: u64 = 1024 * 1024;

    /// A tiny driver: every CPU task and I/O completes instantly, in order.
    fn drive(node: &mut Shard, now: SimTime, replies: &mut Vec<RequestId>) {
        while let Some(action) = node.poll_action() {
            match action {
                Action::RunCpu(task) => node.handle_cpu_done(now, task.id),
                Action::SubmitIo(io) => node.handle_io_done(now, io.id),
                Action::Reply(reply) => replies.push(reply.id),
            }
        }
    }

    fn write(id: u64, key: u64) -> ClientRequest {
        ClientRequest {
            id: RequestId(id),
            operation: Operation::Write {
                key,
                value_bytes: 1024,
            },
        }
    }

    #[test]
    fn every_write_is_acknowledged_and_memtables_flush_at_the_soft_limit() {
        let config = ShardConfig::scylla_defaults(64 * MIB);
        let soft_limit = config.flush_soft_limit_bytes();
        let mut node = Shard::new(config, SimTime::ZERO);
        let mut replies = Vec::new();
        let now = SimTime::from_nanos(1);
        for key in 0..20_000 {
            node.handle_client_request(now, write(key, key));
            drive(&mut node, now, &mut replies);
        }
        assert_eq!(replies.len(), 20_000);
        let stats = node.stats();
        assert!(stats.flushes_completed >= 1, "{stats:?}");
        assert!(stats.virtual_dirty_bytes < soft_limit);
        let rows: u64 = node.sstables().iter().map(|s| s.rows).sum();
        assert_eq!(
            rows + node.active.rows,
            20_000,
            "every row is in an SSTable or the memtable"
        );
        assert!(
            stats.commitlog_segments <= 3,
            "flushed segments are released: {stats:?}"
        );
    }

    #[test]
    fn writes_wait_at_the_dirty_limit_and_resume_after_the_flush() {
        let mut node = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
        let now = SimTime::from_nanos(1);
        let mut replies = Vec::new();
        let mut flush_ios = Vec::new();
        let mut key = 0;
        // Complete CPU and commitlog I/O at once, but hold every flush write.
        while node.stats().writes_throttled == 0 {
            node.handle_client_request(now, write(key, key));
            key += 1;
            while let Some(action) = node.poll_action() {
                match action {
                    Action::RunCpu(task) => node.handle_cpu_done(now, task.id),
                    Action::SubmitIo(io) if io.class == IoClass::MemtableFlush => {
                        flush_ios.push(io.id)
                    }
                    Action::SubmitIo(io) => node.handle_io_done(now, io.id),
                    Action::Reply(reply) => replies.push(reply.id),
                }
            }
            assert!(key < 1_000_000, "writes never throttled");
        }
        let acknowledged = replies.len();
        assert_eq!(acknowledged as u64, key - 1, "only the last write waits");
        for io in flush_ios {
            node.handle_io_done(now, io);
        }
        drive(&mut node, now, &mut replies);
        assert_eq!(replies.len() as u64, key, "the throttled write resumed");
    }

    #[test]
    fn reads_find_rows_in_memtables_and_sstables_with_one_index_and_one_data_read_each() {
        let mut shard = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
        let now = SimTime::from_nanos(1);
        let mut replies = Vec::new();
        for key in 0..20_000 {
            shard.handle_client_request(now, write(key, key));
            drive(&mut shard, now, &mut replies);
        }
        assert!(!shard.sstables().is_empty());
        let flushed_key = shard.sstables()[0].first_key;
        let read = |shard: &mut Shard, id: u64, key: u64| {
            shard.handle_client_request(
                now,
                ClientRequest {
                    id: RequestId(id),
                    operation: Operation::Read { key },
                },
            );
            let (mut read_ios, mut status) = (Vec::new(), None);
            while let Some(action) = shard.poll_action() {
                match action {
                    Action::RunCpu(task) => shard.handle_cpu_done(now, task.id),
                    Action::SubmitIo(io) => {
                        assert_eq!((io.kind, io.class), (IoKind::Read, IoClass::Query));
                        read_ios.push(io.bytes);
                        shard.handle_io_done(now, io.id);
                    }
                    Action::Reply(reply) => status = Some(reply.status),
                }
            }
            (read_ios, status.expect("every read is answered"))
        };
        let (ios, status) = read(&mut shard, 1_000_000, flushed_key);
        assert_eq!(ios, [4096, 4096], "an index page, then the 1 KB row's page");
        assert!(
            matches!(status, ReplyStatus::Found { value_bytes } if (1000..=1100).contains(&value_bytes)),
            "{status:?}"
        );
        let newest_key = 19_999;
        let (ios, status) = read(&mut shard, 1_000_001, newest_key);
        assert!(ios.is_empty(), "the active memtable answers without I/O");
        assert!(matches!(status, ReplyStatus::Found { .. }));
        let (ios, status) = read(&mut shard, 1_000_002, 10_000_000);
        assert!(ios.is_empty(), "no SSTable's range holds the key");
        assert_eq!(status, ReplyStatus::NotFound);
    }

    #[test]
    fn the_sync_timer_writes_a_partial_commitlog_buffer() {
        let mut node = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
        let now = SimTime::from_nanos(1);
        node.handle_client_request(now, write(1, 1));
        let mut ios = 0;
        let mut drain = |node: &mut Shard, now| {
            while let Some(action) = node.poll_action() {
                match action {
                    Action::RunCpu(task) => node.handle_cpu_done(now, task.id),
                    Action::SubmitIo(io) => {
                        ios += 1;
                        node.handle_io_done(now, io.id)
                    }
                    Action::Reply(_) => {}
                }
            }
        };
        drain(&mut node, now);
        let deadline = node.poll_timeout().expect("the sync timer is armed");
        assert_eq!(
            deadline,
            SimTime::ZERO + node.config().commitlog_sync_period
        );
        node.handle_timeout(deadline);
        drain(&mut node, deadline);
        assert_eq!(ios, 1, "one partial buffer written at the sync");
        assert!(node.poll_timeout().unwrap() > deadline, "the timer re-arms");
    }
}
