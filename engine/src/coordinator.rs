//! The coordinator's bookkeeping: what a client request waits for once its
//! replicas have been asked, and what to do as their answers come in.
//!
//! What it models (scylla-mechanisms.md section 4; Cassandra's
//! `AbstractWriteResponseHandler`, `AbstractReadExecutor` and
//! `DigestResolver`, which Scylla's `storage_proxy` follows):
//! - *Writes* go to every replica; the client gets its answer once
//!   `block_for` of them have acknowledged (the consistency level); later
//!   acknowledgements are counted and dropped. Each acknowledgement names
//!   its replica, as `abstract_write_response_handler::signal(from)` does:
//!   the coordinator knows which replicas have the write and which do not
//!   ([`Coordinator::unacknowledged`]), and a replica it did not ask, or
//!   one answering twice, is a bug it stops on.
//! - *Reads* ask `block_for` replicas: the first for the data, the others
//!   for a digest of it. With the table's read-repair chance
//!   (`dclocal_read_repair_chance` 0.1 by default) the read asks every
//!   replica instead, still answering after `block_for`. Once the data and
//!   `block_for - 1` digests are in, the coordinator digests the data and
//!   compares: all equal, the client gets the data; any differ (a digest
//!   mismatch), it asks every replica it contacted for the full data,
//!   takes the newest version by timestamp, writes it back to the replicas
//!   that were behind, and answers the client once those repairs are
//!   acknowledged (a blocking read repair). A read-repair-chance read whose
//!   extra replicas' digests disagree after the client had its answer is
//!   repaired the same way in the background (Cassandra's
//!   `AsyncRepairCallback`, Scylla's background reconcile): the client is
//!   not answered again.
//! - *Timeouts*: an operation still open at its deadline (write 2 s, read
//!   5 s: `write_request_timeout_in_ms`, `read_request_timeout_in_ms`)
//!   answers the client with a timeout. The coordinator keeps the
//!   deadlines ([`Coordinator::arm_deadline`], [`Coordinator::expire`]) in
//!   one queue per timeout, each sorted since every operation of a kind
//!   waits as long, and the spent ones go from the fronts as operations
//!   close, so the next deadline is always a front.
//!
//! This module decides; the shard sends the messages and runs the CPU work.
//! - *Speculative retry* ([`Coordinator::speculate`], policy and delay in
//!   `speculation`): a read still short of its consistency level when its
//!   delay passes asks one spare replica (a digest if the data is in, the
//!   data otherwise); the coordinator's read latencies feed the
//!   percentile.
//!
//! Left out: heat-weighted replica choice, LOCAL_* across several
//! datacenters (every node is in one DC here).

use std::collections::VecDeque;

use slab::Slab;
use units::SimTime;

use crate::action::RequestId;
use crate::cells::{ReadResult, RowVersion};
use crate::placement::ShardAddress;
use crate::speculation::LatencyEstimate;

/// A write as the coordinator keeps it until every replica answered or
/// the deadline passed (a replica still silent then gets a hint of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mutation {
    /// The partition key.
    pub key: u64,
    /// Bytes of column values.
    pub value_bytes: u32,
    /// The write's timestamp.
    pub timestamp: u64,
    /// Rows written.
    pub rows: u32,
}

/// An operation that reached its deadline, as [`Coordinator::expire`]
/// hands it over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    /// Not answered: the client gets a timeout.
    Unanswered(RequestId),
    /// A write answered at its consistency level whose other replicas
    /// stayed silent (`nodes[..count]`): they get hints of `mutation`.
    Unacknowledged {
        /// The write.
        mutation: Mutation,
        /// The silent replicas' nodes.
        nodes: [u32; MAX_REPLICAS],
        /// How many of `nodes` are set.
        count: u8,
    },
}

/// An open write.
#[derive(Clone, Debug)]
struct WriteOp {
    client: RequestId,
    mutation: Mutation,
    block_for: u8,
    /// The nodes of the replicas asked, in the order asked.
    targets: [u32; MAX_REPLICAS],
    expected: u8,
    /// Which of `targets` acknowledged, a bit per position.
    acked: u8,
    answered: bool,
}

impl WriteOp {
    fn acks(&self) -> u8 {
        debug_assert!(
            u32::from(self.acked) < 1 << self.expected,
            "only the replicas asked acknowledge"
        );
        self.acked.count_ones() as u8
    }

    /// Marks the write answered; returns the client to answer. What must
    /// hold, in every build: a client write is answered once, and only
    /// after as many replicas as its level blocks for acknowledged it.
    fn answer(&mut self) -> RequestId {
        assert!(!self.answered, "a write answered twice");
        assert!(
            self.acks() >= self.block_for,
            "a write answered after {} acknowledgements of the {} its level blocks for",
            self.acks(),
            self.block_for
        );
        self.answered = true;
        self.client
    }
}

/// Where a read is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadPhase {
    /// Waiting for the data and the digests.
    Digests,
    /// A digest mismatched: waiting for full data from every contacted
    /// replica.
    FullData,
    /// Waiting for the repair writes to be acknowledged.
    Repairing,
}

/// An open read.
#[derive(Clone, Debug)]
struct ReadOp {
    client: RequestId,
    key: u64,
    /// The read's slice, for the requests it sends later (speculation,
    /// full data).
    limit_bytes: u32,
    opened_at: SimTime,
    /// A replica not contacted, for a speculative retry.
    spare: Option<ShardAddress>,
    speculated: bool,
    block_for: u8,
    phase: ReadPhase,
    /// Replicas contacted, in order (the first got the data request).
    contacted: [ShardAddress; MAX_REPLICAS],
    contacted_count: u8,
    /// Data received (the first phase: from the data replica).
    data: Option<ReadResult>,
    /// Digests received in the first phase, data's included once in.
    digests: u8,
    mismatch: bool,
    first_digest: Option<u64>,
    /// Full-data phase (rare: only after a mismatch, so boxed): each
    /// contacted replica's result, by position.
    full: Option<Box<[Option<ReadResult>; MAX_REPLICAS]>>,
    full_count: u8,
    /// The contacted replicas a repair write went to and that have not
    /// acknowledged it yet, a bit per position in `contacted`.
    repairs_outstanding: u8,
    newest: ReadResult,
    answered: bool,
    /// Responses expected in the current phase.
    expected: u8,
    received: u8,
}

/// Most replicas a key has (replication factors above this are refused).
pub const MAX_REPLICAS: usize = 8;

// A write's acknowledgements and a read's outstanding repairs are a bit per
// replica in a `u8`.
const _: () = assert!(MAX_REPLICAS <= u8::BITS as usize);

// Reads are most operations and live in a reused slab slot: no per-read
// allocation, so the size difference is the cheaper trade.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum Op {
    Write(WriteOp),
    Read(ReadOp),
}

/// What the shard must do after an answer came in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing yet.
    Wait,
    /// Answer the client: a write is acknowledged.
    Written(RequestId),
    /// Answer the client with this read result.
    Read(RequestId, ReadResult),
    /// Digests differ: ask these replicas for the full data of `key`.
    FetchFullData {
        /// The key.
        key: u64,
        /// Replicas to ask (the contacted ones).
        replicas: [ShardAddress; MAX_REPLICAS],
        /// How many of `replicas` are set.
        count: u8,
    },
    /// Write `version` of `key` back to the replicas behind.
    Repair {
        /// The key.
        key: u64,
        /// The newest version.
        version: RowVersion,
        /// Replicas behind.
        replicas: [ShardAddress; MAX_REPLICAS],
        /// How many of `replicas` are set.
        count: u8,
    },
}

fn slot_mut(ops: &mut Slab<(u32, Op)>, id: u64) -> Option<&mut Op> {
    let (generation, slot) = ((id >> 32) as u32, (id & 0xFFFF_FFFF) as usize);
    debug_assert!(generation <= 0x7FFF_FFFF, "an id's generation is 31 bits");
    match ops.get_mut(slot) {
        Some((g, op)) if *g == generation => Some(op),
        _ => None,
    }
}

/// No operation is open in a slot (generations are 31 bits).
const CLOSED: u32 = u32::MAX;

const _: () = assert!(CLOSED > 0x7FFF_FFFF, "no generation is CLOSED");

/// Open operations of one coordinating shard. An operation's id is its
/// slot and a generation, so a late answer to a closed operation never
/// lands on a newer one in the same slot.
#[derive(Clone, Debug, Default)]
pub struct Coordinator {
    ops: Slab<(u32, Op)>,
    /// The generation of the operation open in each slot of `ops`
    /// ([`CLOSED`] where none): after every input the deadline queues ask
    /// whether their oldest operations are still open, and this small
    /// table answers without reading the operation itself, which by then
    /// has mostly left the cache (a miss per question on the 40-node
    /// benchmark).
    open: Vec<u32>,
    generation: u32,
    /// What it has counted since the node first started.
    counters: CoordinatorCounters,
    /// Planted bugs (tests of the explorer only: [`crate::planted`]).
    planted: crate::planted::Planted,
    /// Coordinator read latency, for the speculative-retry percentile.
    read_latency: LatencyEstimate,
    /// Deadlines of open writes and reads, in order: (deadline, id).
    write_deadlines: VecDeque<(SimTime, u64)>,
    read_deadlines: VecDeque<(SimTime, u64)>,
    /// Reads to speculate on, by when, in order: (when, id).
    speculations: VecDeque<(SimTime, u64)>,
    /// Whether an operation or a queue changed since the last
    /// [`Coordinator::prune`]; if not, the queues' fronts are still ones
    /// waiting and pruning again would find nothing (it runs after every
    /// input, and most inputs of a replica touch no operation).
    unpruned: bool,
}

/// What a coordinator has counted, carried across its process's restarts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoordinatorCounters {
    /// Digest mismatches seen (reads that went to the full-data phase).
    pub digest_mismatches: u64,
    /// Rows written back by read repair, blocking or in the background.
    pub read_repairs: u64,
    /// Reads whose digests disagreed only after the client had its answer
    /// (a read-repair-chance read's extra replicas), repaired in the
    /// background.
    pub background_read_repairs: u64,
    /// Extra requests sent by speculative retry.
    pub speculative_retries: u64,
}

/// Which of an operation's deadlines: each kind has its own timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeadlineKind {
    /// `write_request_timeout_in_ms`.
    Write,
    /// `read_request_timeout_in_ms`.
    Read,
}

impl Coordinator {
    /// No operation open yet, with `planted` bugs (none outside tests).
    pub fn new(planted: crate::planted::Planted) -> Coordinator {
        Coordinator {
            planted,
            ..Coordinator::default()
        }
    }

    /// A restarted shard's coordinator: no operation open, the counters
    /// carried on, and ids that go on from the last one, so that an answer
    /// to an operation of the crashed process never lands on a new one
    /// (the real process's connections died with it).
    pub fn after_crash(&self) -> Coordinator {
        let restarted = Coordinator {
            generation: self.generation,
            counters: self.counters,
            planted: self.planted,
            ..Coordinator::default()
        };
        debug_assert_eq!(restarted.open_operations(), 0, "a restart opens nothing");
        restarted
    }

    /// What must hold: ids of 31-bit generations; no more operations than
    /// slots in the open table; each queue in time order at its ends; for
    /// the first few operations, the open table naming their generation,
    /// and each one's counts inside its replicas (a write answered only
    /// after its level's acknowledgements, never all acknowledged while
    /// open; a read's responses, full data and repairs within the replicas
    /// it contacted); the latency estimate's invariants. O(1) beyond the
    /// estimate's 96 buckets: the walk over operations is bounded.
    pub fn check_invariants(&self) {
        assert!(self.generation <= 0x7FFF_FFFF, "generations are 31 bits");
        assert!(self.ops.len() <= self.open.len(), "one open entry per slot");
        for queue in [
            &self.write_deadlines,
            &self.read_deadlines,
            &self.speculations,
        ] {
            if let (Some(front), Some(back)) = (queue.front(), queue.back()) {
                assert!(front.0 <= back.0, "a queue is in time order");
            }
        }
        for (slot, (generation, op)) in self.ops.iter().take(8) {
            assert_eq!(
                self.open[slot], *generation,
                "the open table names slot {slot}"
            );
            match op {
                Op::Write(write) => {
                    assert!(1 <= write.block_for && write.block_for <= write.expected);
                    assert!(usize::from(write.expected) <= MAX_REPLICAS);
                    assert!(
                        write.acks() < write.expected,
                        "a write all acknowledged is closed"
                    );
                    assert!(!write.answered || write.acks() >= write.block_for);
                }
                Op::Read(read) => {
                    let contacted = read.contacted_count;
                    assert!(usize::from(contacted) <= MAX_REPLICAS);
                    assert!(1 <= read.block_for && read.block_for <= contacted);
                    assert!(read.full_count <= contacted && read.digests <= contacted);
                    assert!(u32::from(read.repairs_outstanding) < 1 << contacted);
                    assert_eq!(
                        read.phase == ReadPhase::Repairing,
                        read.repairs_outstanding != 0,
                        "a read repairs exactly while repairs are outstanding"
                    );
                }
            }
        }
        self.read_latency.check_invariants();
    }

    /// Times operation `id` out at `at`, which must not be before the
    /// deadline last armed for its kind (every operation of a kind waits
    /// the same timeout, from a later start).
    pub fn arm_deadline(&mut self, kind: DeadlineKind, at: SimTime, id: u64) {
        self.unpruned = true;
        let queue = self.deadlines(kind);
        debug_assert!(queue.back().is_none_or(|&(last, _)| last <= at));
        queue.push_back((at, id));
    }

    /// The deadline queue of `kind`.
    fn deadlines(&mut self, kind: DeadlineKind) -> &mut VecDeque<(SimTime, u64)> {
        match kind {
            DeadlineKind::Write => &mut self.write_deadlines,
            DeadlineKind::Read => &mut self.read_deadlines,
        }
    }

    /// Has read `id` speculate at `at`, or, in time order, when the read
    /// armed last does if that is later: the delay changes at most once a
    /// second, and a shorter one waits for the reads queued before it (by
    /// at most the change).
    pub fn arm_speculation(&mut self, at: SimTime, id: u64) {
        debug_assert!(self.read_op(id).is_some(), "only an open read speculates");
        self.unpruned = true;
        let at = self
            .speculations
            .back()
            .map_or(at, |&(last, _)| last.max(at));
        self.speculations.push_back((at, id));
    }

    /// Closes every operation whose deadline is at or before `now`, writes
    /// first, and hands each one still open to `expired`: its client's
    /// request if it was not answered, its silent replicas if it was (a
    /// write).
    pub fn expire(&mut self, now: SimTime, mut expired: impl FnMut(Expired)) {
        self.unpruned = true;
        for kind in [DeadlineKind::Write, DeadlineKind::Read] {
            while let Some(&(at, id)) = self.deadlines(kind).front() {
                if at > now {
                    break;
                }
                self.deadlines(kind).pop_front();
                if let Some(what) = self.timed_out(id) {
                    expired(what);
                }
            }
            debug_assert!(
                self.deadlines(kind).front().is_none_or(|&(at, _)| at > now),
                "every deadline due is expired"
            );
        }
    }

    /// The next read due to speculate at or before `now` that still may:
    /// its id, the spare replica to ask and whether for a digest. Reads
    /// answered meanwhile are passed over.
    pub fn next_speculation(&mut self, now: SimTime) -> Option<(u64, ShardAddress, bool)> {
        self.unpruned = true;
        while let Some(&(at, id)) = self.speculations.front() {
            if at > now {
                return None;
            }
            self.speculations.pop_front();
            if let Some((replica, digest)) = self.speculate(id) {
                debug_assert!(
                    self.read_op(id).is_some_and(|read| read.speculated),
                    "a read that speculated is marked so"
                );
                return Some((id, replica, digest));
            }
        }
        None
    }

    /// Drops deadlines and speculations of operations already closed (or
    /// answered) from the queues' fronts, so the next deadline is that of
    /// an operation still waiting.
    pub fn prune(&mut self) {
        if !self.unpruned {
            debug_assert!(
                self.pruned(),
                "a change to an operation did not mark the queues"
            );
            return;
        }
        self.unpruned = false;
        for kind in [DeadlineKind::Write, DeadlineKind::Read] {
            while let Some(&(_, id)) = self.deadlines(kind).front() {
                if self.is_open(id) {
                    break;
                }
                self.deadlines(kind).pop_front();
            }
        }
        while let Some(&(_, id)) = self.speculations.front() {
            if self.may_speculate(id) {
                break;
            }
            self.speculations.pop_front();
        }
        debug_assert!(
            self.pruned(),
            "pruning leaves waiting operations at the fronts"
        );
    }

    /// Whether every queue's front is an operation still waiting (what
    /// [`Coordinator::prune`] leaves).
    fn pruned(&self) -> bool {
        [&self.write_deadlines, &self.read_deadlines]
            .into_iter()
            .all(|queue| queue.front().is_none_or(|&(_, id)| self.is_open(id)))
            && self
                .speculations
                .front()
                .is_none_or(|&(_, id)| self.may_speculate(id))
    }

    /// The earliest deadline or speculation armed.
    pub fn next_deadline(&self) -> Option<SimTime> {
        [
            &self.write_deadlines,
            &self.read_deadlines,
            &self.speculations,
        ]
        .into_iter()
        .filter_map(|queue| queue.front().map(|&(at, _)| at))
        .min()
    }

    fn insert(&mut self, op: Op) -> u64 {
        self.unpruned = true;
        // 31 bits: an id never has `messaging::RELAYED` set.
        self.generation = self.generation.wrapping_add(1) & 0x7FFF_FFFF;
        let slot = self.ops.insert((self.generation, op)) as u64;
        assert!(slot <= u64::from(u32::MAX), "too many open operations");
        let index = slot as usize;
        if index >= self.open.len() {
            self.open.resize(index + 1, CLOSED);
        }
        debug_assert_eq!(self.open[index], CLOSED, "a slot reused while open");
        self.open[index] = self.generation;
        (u64::from(self.generation) << 32) | slot
    }

    fn get_mut(&mut self, id: u64) -> Option<&mut Op> {
        self.unpruned = true;
        slot_mut(&mut self.ops, id)
    }

    fn remove(&mut self, id: u64) -> Option<Op> {
        self.get_mut(id)?;
        let slot = (id & 0xFFFF_FFFF) as usize;
        self.open[slot] = CLOSED;
        let op = self.ops.remove(slot).1;
        debug_assert!(!self.is_open(id), "a removed operation is closed");
        Some(op)
    }

    /// Opens `mutation`'s write sent to `replicas`, answered after
    /// `block_for` of them; returns its id for the messages.
    pub fn open_write(
        &mut self,
        client: RequestId,
        mutation: Mutation,
        replicas: &[ShardAddress],
        block_for: u32,
    ) -> u64 {
        let count = replicas.len();
        assert!(block_for >= 1 && block_for as usize <= count && count <= MAX_REPLICAS);
        let mut targets = [0; MAX_REPLICAS];
        for (target, replica) in targets.iter_mut().zip(replicas) {
            *target = replica.node;
        }
        debug_assert!(
            (1..count).all(|i| !targets[..i].contains(&targets[i])),
            "a write goes to each replica node once"
        );
        let id = self.insert(Op::Write(WriteOp {
            client,
            mutation,
            block_for: block_for as u8,
            targets,
            expected: count as u8,
            acked: 0,
            answered: false,
        }));
        debug_assert!(self.is_open(id));
        id
    }

    /// Writes answered and still open (waiting for their last replicas),
    /// with each replica node that has not acknowledged: a crash of this
    /// coordinator now leaves those replicas without the write, and
    /// without a hint for it.
    pub fn answered_unacknowledged(&self) -> Vec<(RequestId, u32, Mutation)> {
        let mut missing = Vec::new();
        for (_, (_, op)) in &self.ops {
            let Op::Write(write) = op else {
                continue;
            };
            if !write.answered {
                continue;
            }
            for position in 0..usize::from(write.expected) {
                if write.acked & (1 << position) == 0 {
                    missing.push((write.client, write.targets[position], write.mutation));
                }
            }
        }
        debug_assert!(
            missing.len() <= self.ops.len() * MAX_REPLICAS,
            "at most every replica of every open write"
        );
        missing
    }

    /// The nodes of open write `id`'s replicas that have not acknowledged
    /// it (none if it is closed).
    pub fn unacknowledged(&self, id: u64) -> impl Iterator<Item = u32> + '_ {
        let (generation, slot) = ((id >> 32) as u32, (id & 0xFFFF_FFFF) as usize);
        let write = match self.ops.get(slot) {
            Some((g, Op::Write(write))) if *g == generation => Some(write),
            _ => None,
        };
        write.into_iter().flat_map(|write| {
            (0..usize::from(write.expected))
                .filter(|&i| write.acked & (1 << i) == 0)
                .map(|i| write.targets[i])
        })
    }

    /// Opens a read of `key` (its first `limit_bytes`, as
    /// `Operation::Read` slices it) sent to `contacted` (data from the
    /// first, digests from the rest), answered after `block_for` of them;
    /// `spare` is the replica a speculative retry would ask.
    #[allow(clippy::too_many_arguments)]
    pub fn open_read(
        &mut self,
        now: SimTime,
        client: RequestId,
        key: u64,
        limit_bytes: u32,
        contacted: &[ShardAddress],
        block_for: u32,
        spare: Option<ShardAddress>,
    ) -> u64 {
        assert!(!contacted.is_empty() && contacted.len() <= MAX_REPLICAS);
        assert!(block_for >= 1 && block_for as usize <= contacted.len());
        debug_assert!(
            spare.is_none_or(|spare| !contacted.contains(&spare)),
            "the spare replica is not one contacted"
        );
        let mut list = [ShardAddress { node: 0, shard: 0 }; MAX_REPLICAS];
        list[..contacted.len()].copy_from_slice(contacted);
        self.insert(Op::Read(ReadOp {
            client,
            key,
            limit_bytes,
            opened_at: now,
            spare,
            speculated: false,
            block_for: block_for as u8,
            phase: ReadPhase::Digests,
            contacted: list,
            contacted_count: contacted.len() as u8,
            data: None,
            digests: 0,
            mismatch: false,
            first_digest: None,
            full: None,
            full_count: 0,
            repairs_outstanding: 0,
            newest: None,
            answered: false,
            expected: contacted.len() as u8,
            received: 0,
        }))
    }

    /// What it has counted since the node first started.
    pub fn counters(&self) -> CoordinatorCounters {
        self.counters
    }

    /// How long a new read waits before it speculates under `policy`, from
    /// the latencies of the reads this coordinator finished (the table's
    /// `read_timeout` caps it; the percentile is taken at `resolution`);
    /// `None`: it does not speculate.
    pub fn speculation_delay(
        &mut self,
        now: SimTime,
        policy: crate::speculation::SpeculativeRetry,
        read_timeout: units::SimDuration,
        resolution: crate::speculation::Resolution,
    ) -> Option<units::SimDuration> {
        self.read_latency
            .delay(now, policy, read_timeout, resolution)
    }

    /// Operations open.
    pub fn open_operations(&self) -> usize {
        debug_assert!(self.ops.len() <= self.open.len());
        self.ops.len()
    }

    /// True if read `id` could still speculate (open, unanswered, in its
    /// first phase, with a spare not yet asked).
    pub fn may_speculate(&self, id: u64) -> bool {
        self.read_op(id).is_some_and(|read| {
            !read.answered
                && !read.speculated
                && read.phase == ReadPhase::Digests
                && read.spare.is_some()
        })
    }

    /// Open read `id`, if it is one.
    fn read_op(&self, id: u64) -> Option<&ReadOp> {
        let (generation, slot) = ((id >> 32) as u32, (id & 0xFFFF_FFFF) as usize);
        match self.ops.get(slot) {
            Some((g, Op::Read(read))) if *g == generation => Some(read),
            _ => None,
        }
    }

    /// Speculative retry for read `id`: if it is still waiting for its
    /// consistency level and has a spare replica, that replica joins the
    /// contacted ones; returns it and whether to ask it for a digest (the
    /// data is in) or for the data.
    pub fn speculate(&mut self, id: u64) -> Option<(ShardAddress, bool)> {
        if !self.may_speculate(id) {
            return None;
        }
        self.unpruned = true;
        let Some(Op::Read(read)) = slot_mut(&mut self.ops, id) else {
            unreachable!("checked open");
        };
        let spare = read.spare.expect("checked");
        debug_assert!(
            usize::from(read.contacted_count) < MAX_REPLICAS,
            "room for the spare replica"
        );
        read.speculated = true;
        read.contacted[read.contacted_count as usize] = spare;
        read.contacted_count += 1;
        read.expected += 1;
        self.counters.speculative_retries += 1;
        Some((spare, read.data.is_some()))
    }

    /// The key of open read `id` and its slice.
    pub fn read_key(&self, id: u64) -> Option<(u64, u32)> {
        self.read_op(id).map(|read| (read.key, read.limit_bytes))
    }

    /// A read is answered at `now`: its latency feeds the percentile.
    fn answered(&mut self, now: SimTime, opened_at: SimTime) {
        debug_assert!(now >= opened_at, "a read is answered after it opened");
        self.read_latency.record(now - opened_at);
    }

    /// The replica on node `replica` acknowledged write `id` (a client
    /// write or a repair).
    pub fn write_acked(&mut self, now: SimTime, id: u64, replica: u32) -> Next {
        let Some(op) = self.get_mut(id) else {
            return Next::Wait; // timed out and closed already
        };
        match op {
            Op::Write(write) => {
                let position = write.targets[..usize::from(write.expected)]
                    .iter()
                    .position(|&target| target == replica)
                    .unwrap_or_else(|| {
                        panic!("node {replica} acknowledged a write not sent to it")
                    });
                assert!(
                    write.acked & (1 << position) == 0,
                    "node {replica} acknowledged a write twice"
                );
                write.acked |= 1 << position;
                let acks = write.acks();
                let next = if !write.answered && acks >= write.block_for {
                    Next::Written(write.answer())
                } else {
                    Next::Wait
                };
                if acks >= write.expected {
                    self.remove(id);
                }
                next
            }
            Op::Read(read) => {
                debug_assert_eq!(read.phase, ReadPhase::Repairing);
                let position = read.contacted[..usize::from(read.contacted_count)]
                    .iter()
                    .position(|contacted| contacted.node == replica)
                    .filter(|&position| read.repairs_outstanding & (1 << position) != 0)
                    .unwrap_or_else(|| {
                        panic!("node {replica} acknowledged a repair not sent to it")
                    });
                read.repairs_outstanding &= !(1 << position);
                if read.repairs_outstanding == 0 {
                    let (client, newest, opened_at, answered) =
                        (read.client, read.newest, read.opened_at, read.answered);
                    self.remove(id);
                    self.answer_once(now, answered, client, opened_at, newest)
                } else {
                    Next::Wait
                }
            }
        }
    }

    /// A replica answered read `id`: with the data (`Some(result)`) or a
    /// digest (`digest`). `from` is the replica.
    pub fn read_answered(
        &mut self,
        now: SimTime,
        id: u64,
        from: ShardAddress,
        data: Option<ReadResult>,
        digest: u64,
    ) -> Next {
        self.unpruned = true;
        let Some(Op::Read(read)) = slot_mut(&mut self.ops, id) else {
            return Next::Wait; // timed out and closed already
        };
        debug_assert!(
            read.contacted[..usize::from(read.contacted_count)]
                .iter()
                .any(|replica| replica.node == from.node),
            "an answer from node {} not asked",
            from.node
        );
        read.received += 1;
        let next = match read.phase {
            ReadPhase::Digests => {
                match read.first_digest {
                    None => read.first_digest = Some(digest),
                    Some(first) if first != digest => read.mismatch = true,
                    Some(_) => {}
                }
                if let Some(result) = data {
                    read.data = Some(result);
                }
                read.digests += 1;
                let data = match read.data {
                    Some(data) if !read.answered && read.digests >= read.block_for => data,
                    _ => return self.close_if_done(id, Next::Wait),
                };
                if read.mismatch {
                    self.counters.digest_mismatches += 1;
                    read.phase = ReadPhase::FullData;
                    read.expected = read.contacted_count;
                    read.received = 0;
                    Next::FetchFullData {
                        key: read.key,
                        replicas: read.contacted,
                        count: read.contacted_count,
                    }
                } else {
                    // What must hold: a read is answered once, with the
                    // data and as many matching responses as its level
                    // blocks for.
                    assert!(!read.answered, "a read answered twice");
                    assert!(
                        read.digests >= read.block_for,
                        "a read answered after {} responses of the {} its level blocks for",
                        read.digests,
                        read.block_for
                    );
                    read.answered = true;
                    let (client, opened_at) = (read.client, read.opened_at);
                    self.answered(now, opened_at);
                    Next::Read(client, data)
                }
            }
            ReadPhase::FullData => {
                let position = read.contacted[..read.contacted_count as usize]
                    .iter()
                    // By node: a key's replicas are on distinct nodes, and
                    // an answer relayed by a connection's shard comes from
                    // that shard, not the owner.
                    .position(|replica| replica.node == from.node)
                    .expect("full data from a contacted replica");
                // A digest of the first round arriving late (a replica
                // asked only for a digest, slower than the mismatch) is
                // not the full data this phase waits for.
                let Some(result) = data else {
                    return self.close_if_done(id, Next::Wait);
                };
                let full = read
                    .full
                    .get_or_insert_with(|| Box::new([None; MAX_REPLICAS]));
                if full[position].is_none() {
                    read.full_count += 1;
                }
                full[position] = Some(result);
                if read.full_count < read.contacted_count {
                    Next::Wait
                } else {
                    self.resolve(now, id)
                }
            }
            ReadPhase::Repairing => Next::Wait,
        };
        self.close_if_done(id, next)
    }

    /// A read answered in the digest phase closes once every contacted
    /// replica has answered, unless a digest that came after the answer
    /// disagreed: then it repairs in the background (the read-repair
    /// chance's purpose), fetching every contacted replica's full data and
    /// writing the newest version back to those behind, without answering
    /// the client again. Passes `next` through otherwise.
    fn close_if_done(&mut self, id: u64, next: Next) -> Next {
        let Some(Op::Read(read)) = self.get_mut(id) else {
            return next;
        };
        if !(read.answered && read.phase == ReadPhase::Digests && read.received >= read.expected) {
            return next;
        }
        if !read.mismatch {
            self.remove(id);
            return next;
        }
        debug_assert_eq!(next, Next::Wait, "the client had its answer");
        read.phase = ReadPhase::FullData;
        read.expected = read.contacted_count;
        read.received = 0;
        let fetch = Next::FetchFullData {
            key: read.key,
            replicas: read.contacted,
            count: read.contacted_count,
        };
        self.counters.digest_mismatches += 1;
        self.counters.background_read_repairs += 1;
        fetch
    }

    /// Every contacted replica sent its full data: the newest version wins
    /// and goes back to those behind.
    fn resolve(&mut self, now: SimTime, id: u64) -> Next {
        self.unpruned = true;
        let Some(Op::Read(read)) = slot_mut(&mut self.ops, id) else {
            unreachable!("resolving a closed read");
        };
        let count = read.contacted_count as usize;
        let full = read.full.as_deref().expect("full data arrived");
        let newest = full[..count]
            .iter()
            .map(|result| result.expect("every replica answered"))
            .max()
            .expect("at least one replica");
        read.newest = newest;
        let (client, opened_at, answered) = (read.client, read.opened_at, read.answered);
        let Some(version) = newest else {
            // Nobody has the row: nothing to repair.
            self.remove(id);
            return self.answer_once(now, answered, client, opened_at, None);
        };
        let mut behind = [ShardAddress { node: 0, shard: 0 }; MAX_REPLICAS];
        let mut behind_count = 0;
        let mut behind_positions = 0u8;
        let wrong_replica = self
            .planted
            .has(crate::planted::PlantedBug::ReadRepairToWrongReplica);
        for (position, result) in full[..count].iter().enumerate() {
            if result.expect("answered") != Some(version) {
                // The planted bug repairs the next contacted replica.
                let position = if wrong_replica {
                    (position + 1) % count
                } else {
                    position
                };
                if behind_positions & (1 << position) == 0 {
                    behind[behind_count] = read.contacted[position];
                    behind_count += 1;
                    behind_positions |= 1 << position;
                }
            }
        }
        debug_assert!(
            wrong_replica || behind_count < count,
            "some contacted replica holds the newest version"
        );
        if behind_count == 0 {
            self.remove(id);
            return self.answer_once(now, answered, client, opened_at, newest);
        }
        read.phase = ReadPhase::Repairing;
        read.repairs_outstanding = behind_positions;
        self.counters.read_repairs += behind_count as u64;
        Next::Repair {
            key: read.key,
            version,
            replicas: behind,
            count: behind_count as u8,
        }
    }

    /// The client's answer with `result`, unless it had one already (a
    /// background repair).
    fn answer_once(
        &mut self,
        now: SimTime,
        answered: bool,
        client: RequestId,
        opened_at: SimTime,
        result: ReadResult,
    ) -> Next {
        if answered {
            return Next::Wait;
        }
        self.answered(now, opened_at);
        Next::Read(client, result)
    }

    /// Operation `id` reached its deadline: closes it; returns the client
    /// to answer with a timeout if it was not answered yet, or a write's
    /// silent replicas if it was.
    pub fn timed_out(&mut self, id: u64) -> Option<Expired> {
        let op = self.remove(id)?;
        match op {
            Op::Write(write) if !write.answered => Some(Expired::Unanswered(write.client)),
            Op::Write(write) => {
                let mut nodes = [0; MAX_REPLICAS];
                let mut count = 0;
                for i in 0..usize::from(write.expected) {
                    if write.acked & (1 << i) == 0 {
                        nodes[count] = write.targets[i];
                        count += 1;
                    }
                }
                debug_assert!(count > 0, "a write every replica answered is closed");
                Some(Expired::Unacknowledged {
                    mutation: write.mutation,
                    nodes,
                    count: count as u8,
                })
            }
            Op::Read(read) => (!read.answered).then_some(Expired::Unanswered(read.client)),
        }
    }

    /// True if `id` is still open.
    pub fn is_open(&self, id: u64) -> bool {
        let (generation, slot) = ((id >> 32) as u32, (id & 0xFFFF_FFFF) as usize);
        let open = self.open.get(slot) == Some(&generation);
        debug_assert_eq!(
            open,
            self.ops.get(slot).is_some_and(|(g, _)| *g == generation),
            "the open table disagrees with the operations"
        );
        open
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::WHOLE_PARTITION;
    use crate::cells::digest_of;

    const NOW: SimTime = SimTime::ZERO;

    const MUTATION: Mutation = Mutation {
        key: 4,
        value_bytes: 100,
        timestamp: 7,
        rows: 1,
    };

    fn replica(node: u32) -> ShardAddress {
        ShardAddress { node, shard: 0 }
    }

    /// The invariant beside the write's state: a write answered with
    /// fewer acknowledgements than its level blocks for (a coordinator
    /// that answered QUORUM after one replica) stops at its source.
    #[test]
    #[should_panic(
        expected = "a write answered after 1 acknowledgements of the 2 its level blocks for"
    )]
    fn a_write_answered_before_its_level_is_met_panics_where_it_is_answered() {
        let mut write = WriteOp {
            client: RequestId(1),
            mutation: MUTATION,
            block_for: 2,
            targets: [0, 1, 2, 0, 0, 0, 0, 0],
            expected: 3,
            acked: 0b001,
            answered: false,
        };
        write.answer();
    }

    #[test]
    fn deadlines_time_out_what_is_still_open_and_closed_operations_leave_the_queues() {
        let at = |ms: u64| SimTime::from_nanos(ms * 1_000_000);
        let mut coordinator = Coordinator::default();
        let (done, slow) = (
            coordinator.open_write(RequestId(1), MUTATION, &[replica(0)], 1),
            coordinator.open_write(RequestId(2), MUTATION, &[replica(0)], 1),
        );
        coordinator.arm_deadline(DeadlineKind::Write, at(2_000), done);
        coordinator.arm_deadline(DeadlineKind::Write, at(2_010), slow);
        assert_eq!(coordinator.next_deadline(), Some(at(2_000)));
        assert_eq!(
            coordinator.write_acked(NOW, done, 0),
            Next::Written(RequestId(1))
        );
        coordinator.prune();
        assert_eq!(
            coordinator.next_deadline(),
            Some(at(2_010)),
            "the closed one left"
        );
        let mut timed_out = Vec::new();
        coordinator.expire(at(2_009), |what| timed_out.push(what));
        assert!(timed_out.is_empty(), "not yet");
        coordinator.expire(at(2_010), |what| timed_out.push(what));
        assert_eq!(timed_out, [Expired::Unanswered(RequestId(2))]);
        assert_eq!(coordinator.open_operations(), 0);
        assert_eq!(coordinator.next_deadline(), None);
    }

    #[test]
    fn speculations_keep_time_order_and_pass_over_answered_reads() {
        let at = |ms: u64| SimTime::from_nanos(ms * 1_000_000);
        let replica = |node| ShardAddress { node, shard: 0 };
        let mut coordinator = Coordinator::default();
        let contacted = [replica(0), replica(1)];
        let first = coordinator.open_read(
            NOW,
            RequestId(1),
            7,
            WHOLE_PARTITION,
            &contacted,
            2,
            Some(replica(2)),
        );
        let second = coordinator.open_read(
            NOW,
            RequestId(2),
            8,
            WHOLE_PARTITION,
            &contacted,
            2,
            Some(replica(2)),
        );
        coordinator.arm_speculation(at(5), first);
        // A shorter delay armed later waits for the read queued before it.
        coordinator.arm_speculation(at(3), second);
        assert_eq!(coordinator.next_deadline(), Some(at(5)));
        assert_eq!(coordinator.next_speculation(at(4)), None);
        let (id, spare, _) = coordinator.next_speculation(at(5)).expect("first is due");
        assert_eq!((id, spare), (first, replica(2)));
        let (id, _, _) = coordinator
            .next_speculation(at(5))
            .expect("second, in order");
        assert_eq!(id, second);
        assert_eq!(coordinator.next_speculation(at(5)), None);
        assert_eq!(coordinator.counters.speculative_retries, 2);
        coordinator.check_invariants();
    }

    #[test]
    #[should_panic(expected = "a write all acknowledged is closed")]
    fn an_open_write_every_replica_acknowledged_is_caught() {
        let mut coordinator = Coordinator::default();
        let id = coordinator.open_write(RequestId(9), MUTATION, &[replica(4), replica(5)], 1);
        coordinator.check_invariants();
        let Some(Op::Write(write)) = slot_mut(&mut coordinator.ops, id) else {
            unreachable!("just opened");
        };
        write.acked = 0b11;
        coordinator.check_invariants();
    }

    #[test]
    fn a_quorum_write_answers_at_the_second_ack_and_closes_at_the_third() {
        let mut coordinator = Coordinator::default();
        let id = coordinator.open_write(
            RequestId(9),
            MUTATION,
            &[replica(4), replica(5), replica(6)],
            2,
        );
        let unacknowledged =
            |coordinator: &Coordinator| -> Vec<u32> { coordinator.unacknowledged(id).collect() };
        assert_eq!(unacknowledged(&coordinator), [4, 5, 6]);
        assert_eq!(coordinator.write_acked(NOW, id, 5), Next::Wait);
        coordinator.check_invariants();
        assert_eq!(unacknowledged(&coordinator), [4, 6]);
        assert_eq!(
            coordinator.write_acked(NOW, id, 6),
            Next::Written(RequestId(9))
        );
        coordinator.check_invariants();
        assert_eq!(coordinator.open_operations(), 1);
        assert_eq!(
            unacknowledged(&coordinator),
            [4],
            "the write knows who lags"
        );
        assert_eq!(coordinator.write_acked(NOW, id, 4), Next::Wait);
        assert_eq!(coordinator.open_operations(), 0);
        assert_eq!(unacknowledged(&coordinator), [] as [u32; 0]);
    }

    #[test]
    #[should_panic(expected = "node 5 acknowledged a write twice")]
    fn a_replica_acknowledging_twice_is_a_bug() {
        let mut coordinator = Coordinator::default();
        let id = coordinator.open_write(
            RequestId(9),
            MUTATION,
            &[replica(4), replica(5), replica(6)],
            3,
        );
        coordinator.write_acked(NOW, id, 5);
        coordinator.write_acked(NOW, id, 5);
    }

    #[test]
    #[should_panic(expected = "node 7 acknowledged a write not sent to it")]
    fn an_acknowledgement_from_a_replica_not_asked_is_a_bug() {
        let mut coordinator = Coordinator::default();
        let id = coordinator.open_write(
            RequestId(9),
            MUTATION,
            &[replica(4), replica(5), replica(6)],
            2,
        );
        coordinator.write_acked(NOW, id, 7);
    }

    #[test]
    fn matching_digests_answer_with_the_data() {
        let mut coordinator = Coordinator::default();
        let row = Some(RowVersion {
            timestamp: 5,
            value_bytes: 100,
        });
        let id = coordinator.open_read(
            NOW,
            RequestId(1),
            42,
            WHOLE_PARTITION,
            &[replica(0), replica(1)],
            2,
            None,
        );
        // The digest arrives before the data: still waiting.
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(1), None, digest_of(row)),
            Next::Wait
        );
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(0), Some(row), digest_of(row)),
            Next::Read(RequestId(1), row)
        );
        assert_eq!(coordinator.open_operations(), 0);
    }

    #[test]
    fn a_speculative_retry_asks_the_spare_and_the_first_two_answers_decide() {
        let mut coordinator = Coordinator::default();
        let row = Some(RowVersion {
            timestamp: 5,
            value_bytes: 100,
        });
        let contacted = [replica(0), replica(1)];
        // The data replica answers; the digest replica is slow: the spare is
        // asked for a digest.
        let id = coordinator.open_read(
            NOW,
            RequestId(1),
            42,
            WHOLE_PARTITION,
            &contacted,
            2,
            Some(replica(2)),
        );
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(0), Some(row), digest_of(row)),
            Next::Wait
        );
        assert_eq!(coordinator.speculate(id), Some((replica(2), true)));
        assert_eq!(coordinator.speculate(id), None, "one extra request only");
        let later = NOW + units::SimDuration::from_millis(3);
        assert_eq!(
            coordinator.read_answered(later, id, replica(2), None, digest_of(row)),
            Next::Read(RequestId(1), row)
        );
        // The slow replica's late digest closes the read.
        assert_eq!(coordinator.open_operations(), 1);
        assert_eq!(
            coordinator.read_answered(later, id, replica(1), None, digest_of(row)),
            Next::Wait
        );
        assert_eq!(coordinator.open_operations(), 0);
        assert_eq!(coordinator.counters.speculative_retries, 1);
        // Its 3 ms latency feeds the percentile (a bucket bound within 20%).
        let p99 = coordinator.read_latency.percentile(later, 99.0).unwrap();
        assert!((3_000_000..3_600_000).contains(&p99.as_nanos()), "{p99:?}");
        // The data replica is the slow one: the spare is asked for data.
        let id = coordinator.open_read(
            NOW,
            RequestId(2),
            43,
            WHOLE_PARTITION,
            &contacted,
            2,
            Some(replica(2)),
        );
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(1), None, digest_of(row)),
            Next::Wait
        );
        assert_eq!(coordinator.speculate(id), Some((replica(2), false)));
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(2), Some(row), digest_of(row)),
            Next::Read(RequestId(2), row)
        );
        // Answered reads, and reads without a spare, never speculate.
        assert_eq!(coordinator.speculate(id), None);
        let id = coordinator.open_read(NOW, RequestId(3), 44, WHOLE_PARTITION, &contacted, 2, None);
        assert_eq!(coordinator.speculate(id), None);
    }

    #[test]
    fn a_mismatch_fetches_full_data_repairs_the_stale_replica_then_answers() {
        let mut coordinator = Coordinator::default();
        let old = Some(RowVersion {
            timestamp: 5,
            value_bytes: 100,
        });
        let new = Some(RowVersion {
            timestamp: 9,
            value_bytes: 120,
        });
        let contacted = [replica(0), replica(1)];
        let id = coordinator.open_read(NOW, RequestId(3), 7, WHOLE_PARTITION, &contacted, 2, None);
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(0), Some(old), digest_of(old)),
            Next::Wait
        );
        let Next::FetchFullData { key, count, .. } =
            coordinator.read_answered(NOW, id, replica(1), None, digest_of(new))
        else {
            panic!("a mismatch fetches the full data");
        };
        assert_eq!((key, count), (7, 2));
        assert_eq!(coordinator.counters.digest_mismatches, 1);
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(1), Some(new), digest_of(new)),
            Next::Wait
        );
        let Next::Repair {
            version,
            replicas,
            count,
            ..
        } = coordinator.read_answered(NOW, id, replica(0), Some(old), digest_of(old))
        else {
            panic!("the stale replica is repaired");
        };
        assert_eq!(Some(version), new);
        assert_eq!(&replicas[..count as usize], &[replica(0)]);
        assert_eq!(
            coordinator.write_acked(NOW, id, 0),
            Next::Read(RequestId(3), new)
        );
        assert_eq!(coordinator.counters.read_repairs, 1);
        assert_eq!(coordinator.open_operations(), 0);
    }

    #[test]
    fn a_read_repair_chance_read_answers_at_block_for_and_closes_after_all() {
        let mut coordinator = Coordinator::default();
        let row = None;
        let id = coordinator.open_read(
            NOW,
            RequestId(4),
            1,
            WHOLE_PARTITION,
            &[replica(0), replica(1), replica(2)],
            2,
            None,
        );
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(0), Some(row), digest_of(row)),
            Next::Wait
        );
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(2), None, digest_of(row)),
            Next::Read(RequestId(4), None)
        );
        assert_eq!(coordinator.open_operations(), 1);
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(1), None, digest_of(row)),
            Next::Wait
        );
        assert_eq!(coordinator.open_operations(), 0);
    }

    #[test]
    fn a_late_digest_that_disagrees_is_repaired_in_the_background_without_a_second_answer() {
        let mut coordinator = Coordinator::default();
        let old = Some(RowVersion {
            timestamp: 5,
            value_bytes: 100,
        });
        let new = Some(RowVersion {
            timestamp: 9,
            value_bytes: 100,
        });
        // A read-repair-chance read: all three asked, answered at two.
        let contacted = [replica(0), replica(1), replica(2)];
        let id = coordinator.open_read(NOW, RequestId(8), 4, WHOLE_PARTITION, &contacted, 2, None);
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(0), Some(new), digest_of(new)),
            Next::Wait
        );
        assert_eq!(
            coordinator.read_answered(NOW, id, replica(1), None, digest_of(new)),
            Next::Read(RequestId(8), new),
            "the client has its answer at the level"
        );
        // The third replica is behind: found after the answer.
        let Next::FetchFullData { count, .. } =
            coordinator.read_answered(NOW, id, replica(2), None, digest_of(old))
        else {
            panic!("a late mismatch fetches the full data in the background");
        };
        assert_eq!(count, 3);
        assert_eq!(coordinator.counters.background_read_repairs, 1);
        for (node, version) in [(0, new), (1, new)] {
            assert_eq!(
                coordinator.read_answered(
                    NOW,
                    id,
                    replica(node),
                    Some(version),
                    digest_of(version)
                ),
                Next::Wait
            );
        }
        let Next::Repair {
            replicas, count, ..
        } = coordinator.read_answered(NOW, id, replica(2), Some(old), digest_of(old))
        else {
            panic!("the replica behind is repaired");
        };
        assert_eq!(&replicas[..count as usize], &[replica(2)]);
        assert_eq!(
            coordinator.write_acked(NOW, id, 2),
            Next::Wait,
            "the client is not answered twice"
        );
        assert_eq!(coordinator.open_operations(), 0);
        assert_eq!(coordinator.counters.read_repairs, 1);
    }

    #[test]
    fn a_timed_out_operation_answers_once_and_late_answers_are_ignored() {
        let mut coordinator = Coordinator::default();
        let id = coordinator.open_write(
            RequestId(5),
            MUTATION,
            &[replica(0), replica(1), replica(2)],
            3,
        );
        assert_eq!(coordinator.write_acked(NOW, id, 0), Next::Wait);
        assert_eq!(
            coordinator.timed_out(id),
            Some(Expired::Unanswered(RequestId(5)))
        );
        assert_eq!(coordinator.write_acked(NOW, id, 1), Next::Wait);
        assert_eq!(coordinator.timed_out(id), None);
    }

    #[test]
    fn a_write_answered_at_its_level_names_its_silent_replicas_at_the_deadline() {
        let mut coordinator = Coordinator::default();
        let id = coordinator.open_write(
            RequestId(5),
            MUTATION,
            &[replica(0), replica(1), replica(2)],
            2,
        );
        assert_eq!(coordinator.write_acked(NOW, id, 2), Next::Wait);
        assert_eq!(
            coordinator.write_acked(NOW, id, 0),
            Next::Written(RequestId(5))
        );
        let Some(Expired::Unacknowledged {
            mutation,
            nodes,
            count,
        }) = coordinator.timed_out(id)
        else {
            panic!("an answered write with a silent replica");
        };
        assert_eq!(
            (mutation, &nodes[..usize::from(count)]),
            (MUTATION, &[1][..])
        );
    }
}
