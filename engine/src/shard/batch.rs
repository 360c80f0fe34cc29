//! Batches over several partitions: a cassandra-stress user profile's
//! insert with `partitions` above one sends one `BATCH` of every
//! partition's rows to one coordinator.
//!
//! The coordinator writes each partition's mutation to its replicas, as it
//! writes a single one, and answers the client once every part has met the
//! consistency level, with the first failure if any part failed
//! (`storage_proxy::mutate` @2.2; Cassandra's `StorageProxy.mutate`).
//!
//! A LOGGED batch of several partitions first stores the whole batch in
//! the batchlog (`system.batchlog`) of up to two other live nodes and waits
//! for them, so that a coordinator that dies half-way leaves the batch for
//! them to replay; then it writes the parts; then it removes the batchlog
//! entry without waiting (`storage_proxy::mutate_atomically`; Cassandra's
//! `StorageProxy.mutateAtomically`, `BatchlogManager`'s endpoint choice).
//! A batchlog node pays a write's CPU and appends the entry to its
//! commitlog. A batch of one partition, LOGGED or not, is a plain write and
//! never reaches this module (the client sends it as one).
//!
//! Left out: the batchlog's replay after a coordinator dies (its entries
//! are not in the replayed commitlog either), the batchlog table's own
//! memtable and flushes (an entry and its removal's tombstone meet in the
//! memtable within milliseconds), and batch-mode commitlog durability for
//! the entry (it is acknowledged once appended, as in periodic mode).

use std::collections::VecDeque;
use std::sync::Arc;

use rand_core::Rng;
use units::SimTime;

use super::{mutation_bytes, Shard, TaskPurpose};
use crate::action::{
    Action, BatchRequest, ClientReply, ClientRequest, CpuTask, CpuWork, Message, Operation,
    ReplyStatus, RequestId, SchedulingGroup,
};
use crate::commitlog::ENTRY_OVERHEAD_BYTES;
use crate::consistency::ConsistencyLevel;
use crate::placement::ShardAddress;
use crate::timer::TimerKind;

/// Bit of a request id marking one part of a batch this shard coordinates:
/// `BATCH_PART | slot << PART_BITS | part`. Client ids leave bits 62 and 63
/// clear (63 is [`super::HINT_REPLAY`]).
pub const BATCH_PART: u64 = 1 << 62;
/// Parts a batch may have (its part number's bits).
const PART_BITS: u32 = 16;
/// Bit of a message id marking a batchlog write's acknowledgement:
/// `BATCHLOG | serial << SLOT_BITS | slot` (bit 63 is the relays').
const BATCHLOG: u64 = 1 << 62;
/// Bits of a batch's slot in a batchlog id.
const SLOT_BITS: u32 = 24;
/// Nodes a LOGGED batch's batchlog goes to (`BatchlogManager`: two, or one
/// when only one other node is up).
const BATCHLOG_NODES: usize = 2;
/// Bytes of a batchlog removal (the entry's partition tombstone) \[E\].
const REMOVE_BYTES: u32 = 64;

/// The largest batch: its parts must number fewer than `1 << PART_BITS`.
pub const MAX_BATCH_PARTS: usize = (1 << PART_BITS) - 1;

/// A batchlog write or removal a batchlog node handles: who sent it, the id
/// its answer carries, its bytes, whether it is the removal (unanswered).
#[derive(Clone, Copy, Debug)]
pub(super) struct BatchlogEntry {
    from: ShardAddress,
    id: u64,
    bytes: u32,
    remove: bool,
}

/// One batch this shard coordinates.
#[derive(Debug)]
pub(super) struct PendingBatch {
    client: RequestId,
    parts: Arc<[Operation]>,
    logged: bool,
    consistency: ConsistencyLevel,
    /// Tells this batch from later users of its slot.
    serial: u32,
    /// The batchlog's nodes (LOGGED batches of several partitions).
    batchlog: [ShardAddress; BATCHLOG_NODES],
    batchlog_nodes: u8,
    batchlog_acks: u8,
    /// Parts sent and not yet answered (0 until the parts are sent).
    parts_left: u32,
    /// Whether the parts were sent (the batchlog phase is over).
    writing: bool,
    /// The first failure a part met; the client hears it.
    failed: Option<ReplyStatus>,
}

/// The batches a shard coordinates, and the batchlog phase's deadlines.
#[derive(Debug, Default)]
pub(super) struct Batches {
    pending: slab::Slab<PendingBatch>,
    /// Batches waiting for their batchlog, in deadline order (all take the
    /// write timeout): (deadline, slot, serial); stale entries are skipped.
    deadlines: VecDeque<(SimTime, u32, u32)>,
    next_serial: u32,
    /// Batchlog entries this node keeps, waiting for a commitlog buffer.
    waiting: VecDeque<BatchlogEntry>,
}

impl Batches {
    /// Whether the batch in `slot` numbered `serial` is still there and
    /// waiting for its batchlog.
    fn waiting_for_batchlog(&self, slot: u32, serial: u32) -> bool {
        self.pending
            .get(slot as usize)
            .is_some_and(|batch| batch.serial == serial && !batch.writing)
    }

    /// Batches being coordinated.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.pending.len()
    }

    /// What must hold of every batch: one waiting for its batchlog has
    /// sent no part and heard from fewer nodes than it asked; one writing
    /// waits for at least one part (it is answered and gone at the last).
    pub(super) fn check_invariants(&self) {
        for (_, batch) in &self.pending {
            if batch.writing {
                assert!(batch.parts_left > 0 && batch.parts_left as usize <= batch.parts.len());
            } else {
                assert_eq!(
                    batch.parts_left, 0,
                    "parts sent before the batchlog answered"
                );
                assert!(batch.batchlog_acks < batch.batchlog_nodes.max(1));
            }
        }
    }
}

impl Shard {
    /// A batch arrives from a client: decoding it and starting its
    /// coordination is a coordinator's task.
    pub fn handle_batch_request(&mut self, _now: SimTime, batch: BatchRequest) {
        assert!(
            !batch.parts.is_empty() && batch.parts.len() <= MAX_BATCH_PARTS,
            "a batch of {} parts",
            batch.parts.len()
        );
        assert!(
            batch.id.0 & (BATCH_PART | super::HINT_REPLAY) == 0,
            "client ids leave the engine's bits clear"
        );
        debug_assert!(batch
            .parts
            .iter()
            .all(|part| matches!(part, Operation::Write { .. })));
        let serial = self.batches.next_serial;
        self.batches.next_serial = serial.wrapping_add(1);
        let slot = self.batches.pending.insert(PendingBatch {
            client: batch.id,
            parts: batch.parts,
            logged: batch.logged,
            consistency: batch.consistency,
            serial,
            batchlog: [self.config.address; BATCHLOG_NODES],
            batchlog_nodes: 0,
            batchlog_acks: 0,
            parts_left: 0,
            writing: false,
            failed: None,
        });
        assert!(slot < 1 << SLOT_BITS, "too many batches at once");
        let task = self.new_task(TaskPurpose::CoordinateBatch(slot as u32));
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Statement,
            work: CpuWork::Coordinate,
        }));
        self.input_done();
    }

    /// The batch is decoded: to the batchlog first if it is LOGGED and
    /// spans several partitions, else straight to the replicas.
    pub(super) fn start_batch(&mut self, now: SimTime, slot: u32) {
        let batch = &self.batches.pending[slot as usize];
        if !(batch.logged && batch.parts.len() > 1) {
            self.write_batch_parts(now, slot);
            return;
        }
        let bytes = batch
            .parts
            .iter()
            .map(|part| match *part {
                Operation::Write { value_bytes, .. } => mutation_bytes(value_bytes),
                Operation::Read { .. } => unreachable!("a batch's parts are writes"),
            })
            .sum::<u64>()
            .min(u64::from(u32::MAX)) as u32;
        let endpoints = self.batchlog_endpoints();
        if endpoints.is_empty() {
            // No other node is up for the batchlog (`UnavailableException`).
            self.finish_batch(now, slot, ReplyStatus::Unavailable);
            return;
        }
        let batch = &mut self.batches.pending[slot as usize];
        batch.batchlog_nodes = endpoints.len() as u8;
        batch.batchlog[..endpoints.len()].copy_from_slice(&endpoints);
        let id = BATCHLOG | u64::from(batch.serial) << SLOT_BITS | u64::from(slot);
        let deadline = super::deadline(now, self.config.write_timeout);
        let serial = batch.serial;
        for endpoint in endpoints {
            self.send_batchlog(
                now,
                endpoint,
                Message::BatchlogWrite {
                    id,
                    bytes,
                    remove: false,
                },
            );
        }
        self.batches.deadlines.push_back((deadline, slot, serial));
        self.arm_batchlog_deadline();
    }

    /// Up to two live nodes other than this one, drawn at random (a
    /// single-node cluster keeps its batchlog itself).
    fn batchlog_endpoints(&mut self) -> Vec<ShardAddress> {
        let me = self.config.address.node;
        let nodes = self.config.placement.nodes();
        if nodes == 1 {
            return vec![self.config.address];
        }
        let mut live: Vec<u32> = (0..nodes)
            .filter(|&node| node != me && !self.sees_down(node))
            // In the ring (not a node yet to join, or gone).
            .filter(|&node| self.config.placement.ownership()[node as usize] > 0.0)
            .collect();
        let mut chosen = Vec::with_capacity(BATCHLOG_NODES);
        while chosen.len() < BATCHLOG_NODES && !live.is_empty() {
            let index = (self.draws.batchlog.next_u64() % live.len() as u64) as usize;
            let node = live.swap_remove(index);
            chosen.push(ShardAddress { node, shard: 0 });
        }
        chosen
    }

    /// Sends a batchlog message to `to` (this node's own batchlog: straight
    /// to this shard's write of it).
    fn send_batchlog(&mut self, now: SimTime, to: ShardAddress, message: Message) {
        if to.node == self.config.address.node {
            self.batchlog_received(now, self.config.address, message);
        } else {
            self.send(to, message);
        }
    }

    /// A batchlog write or removal reached this node: a write's CPU, then
    /// its commitlog entry.
    pub(super) fn batchlog_received(
        &mut self,
        _now: SimTime,
        from: ShardAddress,
        message: Message,
    ) {
        let Message::BatchlogWrite { id, bytes, remove } = message else {
            unreachable!("a batchlog message");
        };
        let task = self.new_task(TaskPurpose::BatchlogWrite(BatchlogEntry {
            from,
            id,
            bytes,
            remove,
        }));
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Statement,
            work: CpuWork::WriteRequest {
                mutation_bytes: u64::from(bytes),
            },
        }));
    }

    /// A batchlog mutation is built: append it to the commitlog (or wait
    /// for a buffer, behind the writes waiting already) and answer a write.
    pub(super) fn log_batchlog(&mut self, now: SimTime, entry: BatchlogEntry) {
        let queued =
            self.write.writes_waiting_for_commitlog() > 0 || !self.batches.waiting.is_empty();
        if queued || !self.append_batchlog(now, entry) {
            self.batches.waiting.push_back(entry);
        }
    }

    /// Appends a batchlog entry; false if the commitlog has no buffer free.
    fn append_batchlog(&mut self, now: SimTime, entry: BatchlogEntry) -> bool {
        let BatchlogEntry {
            from,
            id,
            bytes,
            remove,
        } = entry;
        if !self
            .write
            .append_unreplayed(u64::from(bytes) + ENTRY_OVERHEAD_BYTES)
        {
            return false;
        }
        self.submit_commitlog_writes();
        if !remove {
            let answer = Message::WriteResponse {
                id,
                shard: from.shard,
                replica: self.config.address.node,
            };
            if from.node == self.config.address.node {
                self.batchlog_acked(now, id);
            } else {
                self.send(from, answer);
            }
        }
        true
    }

    /// Batchlog entries waiting for a commitlog buffer go in order.
    pub(super) fn resume_batchlog_waiters(&mut self, now: SimTime) {
        while let Some(&entry) = self.batches.waiting.front() {
            if !self.append_batchlog(now, entry) {
                break;
            }
            self.batches.waiting.pop_front();
        }
    }

    /// A batchlog node stored batch `id`: once every one has, the parts go.
    pub(super) fn batchlog_acked(&mut self, now: SimTime, id: u64) {
        debug_assert!(id & BATCHLOG != 0);
        let slot = (id & ((1 << SLOT_BITS) - 1)) as u32;
        let serial = ((id & !BATCHLOG) >> SLOT_BITS) as u32;
        let Some(batch) = self.batches.pending.get_mut(slot as usize) else {
            return; // timed out and gone
        };
        if batch.serial != serial || batch.writing {
            return; // a later batch in the slot, or one timed out
        }
        batch.batchlog_acks += 1;
        if batch.batchlog_acks == batch.batchlog_nodes {
            self.write_batch_parts(now, slot);
        }
    }

    /// Whether message id `id` is a batchlog write's acknowledgement.
    pub(super) fn is_batchlog_ack(id: u64) -> bool {
        id & BATCHLOG != 0
    }

    /// Sends every part to its replicas under its own request id.
    fn write_batch_parts(&mut self, now: SimTime, slot: u32) {
        let batch = &mut self.batches.pending[slot as usize];
        batch.writing = true;
        batch.parts_left = batch.parts.len() as u32;
        let parts = Arc::clone(&batch.parts);
        let consistency = batch.consistency;
        for (index, &operation) in parts.iter().enumerate() {
            let id = RequestId(BATCH_PART | u64::from(slot) << PART_BITS | index as u64);
            self.coordinate(
                now,
                ClientRequest {
                    id,
                    operation,
                    consistency,
                },
            );
        }
    }

    /// A part of a batch was answered (written, timed out or unavailable).
    pub(super) fn batch_part_done(
        &mut self,
        now: SimTime,
        request: RequestId,
        status: ReplyStatus,
    ) {
        debug_assert!(request.0 & BATCH_PART != 0);
        let slot = ((request.0 & !BATCH_PART) >> PART_BITS) as u32;
        let batch = &mut self.batches.pending[slot as usize];
        assert!(
            batch.writing && batch.parts_left > 0,
            "a part answered twice"
        );
        if status != ReplyStatus::Written {
            batch.failed.get_or_insert(status);
        }
        batch.parts_left -= 1;
        if batch.parts_left == 0 {
            let status = batch.failed.unwrap_or(ReplyStatus::Written);
            self.finish_batch(now, slot, status);
        }
    }

    /// Answers the client and, for a written LOGGED batch, removes its
    /// batchlog entry without waiting.
    fn finish_batch(&mut self, now: SimTime, slot: u32, status: ReplyStatus) {
        let batch = self.batches.pending.remove(slot as usize);
        self.actions.push_back(Action::Reply(ClientReply {
            id: batch.client,
            status,
        }));
        if batch.writing {
            for &endpoint in &batch.batchlog[..usize::from(batch.batchlog_nodes)] {
                self.send_batchlog(
                    now,
                    endpoint,
                    Message::BatchlogWrite {
                        id: 0,
                        bytes: REMOVE_BYTES,
                        remove: true,
                    },
                );
            }
        }
    }

    /// Batches whose batchlog did not answer within the write timeout end
    /// with a timeout (`WriteTimeoutException`, write type `BATCH_LOG`).
    pub(super) fn batchlog_deadlines_passed(&mut self, now: SimTime) {
        while let Some(&(deadline, slot, serial)) = self.batches.deadlines.front() {
            if deadline > now {
                break;
            }
            self.batches.deadlines.pop_front();
            if self.batches.waiting_for_batchlog(slot, serial) {
                self.finish_batch(now, slot, ReplyStatus::Timeout);
            }
        }
        self.arm_batchlog_deadline();
    }

    /// The batchlog timer: the earliest batch still waiting for its
    /// batchlog (entries of batches past that phase are dropped first).
    fn arm_batchlog_deadline(&mut self) {
        while let Some(&(_, slot, serial)) = self.batches.deadlines.front() {
            if self.batches.waiting_for_batchlog(slot, serial) {
                break;
            }
            self.batches.deadlines.pop_front();
        }
        match self.batches.deadlines.front() {
            Some(&(deadline, ..)) => self.timers.set(TimerKind::BatchlogDeadline, deadline),
            None => self.timers.stop(TimerKind::BatchlogDeadline),
        }
    }
}
