//! A shard's part of range streaming (`crate::streaming`): sending its
//! data of a plan's ranges to the same shard of the receiving node, and
//! taking in and writing what a peer sends.
//!
//! Sender: what the shard holds of the ranges is its memtables' and
//! SSTables' rows whose token lies in them (data mode), or their bytes and
//! rows in proportion to the ranges' share of what the node owns (volume
//! mode). The streaming reader reads it in [`FRAGMENT_BYTES`] chunks in the
//! streaming I/O class, [`READ_AHEAD`] ahead, and freezes each chunk on the
//! CPU (`CpuWork::StreamRead`, streaming group). Then:
//! - RPC mode: one `StreamData` message per partition, at most
//!   [`RPC_IN_FLIGHT`] unanswered; `StreamEnd` once all are answered.
//! - Stream mode: batches of up to [`FRAGMENT_BYTES`], at most
//!   [`STREAM_WINDOW`] without credit; `StreamEnd` after the last.
//!
//! Receiver:
//! - RPC mode: each partition is applied to the shard's streaming memtable
//!   (`CpuWork::StreamApply`) and answered; the memtable is flushed to an
//!   SSTable (streaming group and I/O class) when it reaches
//!   [`streaming_flush_bytes`], and answers wait while a full memtable
//!   waits for the flush before it (the streaming dirty memory's limit).
//!   At `StreamEnd` what the memtable holds is flushed, and the plan is
//!   received once that flush is on disk.
//! - Stream mode: each batch is serialized straight into the plan's
//!   SSTable (`CpuWork::FlushSerialize`, streaming group) and written;
//!   credit goes back every [`STREAM_CREDIT_EVERY`] batches on disk. At
//!   `StreamEnd`, once every write is on disk, the SSTable is sealed.
//!
//! A received SSTable joins the table (its backlog, its compaction
//! strategy); volume mode's answers for the streamed ranges come with the
//! sender's write counts (`StreamEnd`), data mode's with the rows.

use std::collections::BTreeMap;
use std::sync::Arc;

use units::SimTime;

use super::{IoPurpose, Shard, TaskPurpose};
use crate::action::{
    Action, CpuTask, CpuWork, IoClass, IoKind, Message, SchedulingGroup, StreamedPopulation,
};
use crate::cells::RowVersion;
use crate::cells::{reconcile, Cell, SortedCells};
use crate::flush::{FlushJob, FlushStep};
use crate::memtable::Memtable;
use crate::placement::{key_token, ShardAddress};
use crate::sstable::SSTable;
use crate::streaming::{
    ranges_contain, ranges_fraction, StreamMode, FRAGMENT_BYTES, READ_AHEAD, RPC_IN_FLIGHT,
    STREAM_CREDIT_EVERY, STREAM_WINDOW,
};
use crate::token_set::TokenSet;

/// Chunks a streaming memtable's flush keeps in flight.
const FLUSH_WRITE_BEHIND: u32 = 4;

/// The streaming memtable's flush point on a shard of `memory_bytes`: half
/// of the streaming dirty memory (`streaming_dirty_memory_manager`, 10% of
/// the shard's memory before 3.0), so that one memtable fills while the
/// one before it is written.
pub fn streaming_flush_bytes(memory_bytes: u64) -> u64 {
    (memory_bytes / 20).max(FRAGMENT_BYTES)
}

/// A shard's streams, both ways.
#[derive(Debug, Default)]
pub(super) struct Streams {
    /// Plans this shard sends, by plan id.
    out: BTreeMap<u32, OutStream>,
    /// Plans this shard receives, by plan id.
    inbound: BTreeMap<u32, InStream>,
    /// RPC mode: the streaming memtable being filled.
    memtable: Option<Memtable>,
    /// RPC mode: which part of which plan's ranges the memtable being
    /// filled holds, by plan.
    memtable_plans: BTreeMap<u32, Portion>,
    /// RPC mode: the streaming memtable being flushed.
    flushing: Option<FlushJob>,
    /// RPC mode: the slices of the ring the flushing memtable holds (`None`
    /// if a plan's ranges were not known yet: any owned key).
    flushing_set: Option<TokenSet>,
    /// RPC mode: flush the memtable even below its flush point (a plan
    /// ended and waits for its data to be on disk).
    force_flush: bool,
    flushes_started: u64,
    flushes_done: u64,
    /// RPC mode: answers held while the streaming memory is full.
    held_acks: Vec<(ShardAddress, u32)>,
    /// RPC mode: ended plans waiting for the flush that holds their last
    /// data (`flushes_done` reaching it).
    ends: Vec<(u32, u64)>,
    /// Bytes sent to peers' streams, and taken in from them, since the
    /// start (counters for the time series).
    sent_bytes: u64,
    received_bytes: u64,
    /// Plans given up (a peer went down): what still arrives for them, or
    /// completes, is dropped.
    aborted: std::collections::BTreeSet<u32>,
}

/// One plan this shard sends.
#[derive(Debug)]
struct OutStream {
    to: ShardAddress,
    rows: u64,
    bytes: u64,
    /// Bytes whose read was submitted.
    read: u64,
    reads_in_flight: u32,
    freezing: u32,
    /// Frozen and not yet sent.
    ready: u64,
    sent_rows: u64,
    sent_bytes: u64,
    unanswered: u32,
    /// `StreamData` messages sent.
    messages: u32,
    /// Data mode: the rows to send, in key order.
    cells: Vec<Cell>,
    population: Option<StreamedPopulation>,
}

/// The rows `[from, to)` of a plan (its rows in ring order) that a
/// streaming memtable holds.
#[derive(Debug)]
struct Portion {
    /// The plan's ranges and rows, once its start has arrived.
    plan: Option<(TokenSet, u64)>,
    from: u64,
    to: u64,
}

impl Portion {
    /// The slices of the ring these rows lie in, `None` if unknown.
    fn token_set(&self) -> Option<TokenSet> {
        let (set, rows) = self.plan.as_ref()?;
        let fraction = |row: u64| row as f64 / (*rows).max(1) as f64;
        Some(set.portion(fraction(self.from), fraction(self.to)))
    }
}

/// One plan this shard receives.
#[derive(Debug)]
struct InStream {
    from: ShardAddress,
    keys: Option<(u64, u64)>,
    /// The plan's ranges and rows, from its start.
    plan: Option<(TokenSet, u64)>,
    /// `StreamData` messages taken in, and how many the sender sent (known
    /// at its `StreamEnd`).
    taken: u32,
    sent: Option<u32>,
    rows: u64,
    bytes: u64,
    /// Stream mode: batches taken in since the last credit.
    uncredited: u32,
    ended: bool,
    /// Stream mode: batches being serialized, and writes in flight.
    serializing: u32,
    writes: u32,
    /// Stream mode: the SSTable being written.
    sstable: Option<Memtable>,
    population: Option<StreamedPopulation>,
}

impl Streams {
    /// A restarted shard's streams: none open, the byte counts of its
    /// earlier lives carried on (the time series' per-interval streaming
    /// is the difference of two counts, which must never fall).
    pub(super) fn carry(&mut self, (sent, received): (u64, u64)) {
        debug_assert!(
            self.out.is_empty() && self.inbound.is_empty(),
            "a new life's streams"
        );
        self.sent_bytes = sent;
        self.received_bytes = received;
    }

    /// What must hold: a plan given up has no state left, the streaming
    /// flushes done never pass those started and one runs at a time, a
    /// sending plan has read no more than its bytes and sent no more than
    /// it read, and a receiving plan has taken no more messages than its
    /// sender sent.
    pub(super) fn check_invariants(&self) {
        for plan in &self.aborted {
            assert!(
                !self.out.contains_key(plan) && !self.inbound.contains_key(plan),
                "plan {plan} was given up but streams on"
            );
        }
        assert!(
            self.flushes_done <= self.flushes_started,
            "more streaming flushes done than started"
        );
        assert!(
            self.flushing.is_none() || self.flushes_done < self.flushes_started,
            "a streaming flush runs that was never started"
        );
        for (plan, out) in &self.out {
            assert!(out.read <= out.bytes, "plan {plan} read past its bytes");
            assert!(
                out.sent_bytes <= out.read,
                "plan {plan} sent more than it read"
            );
        }
        for (plan, stream) in &self.inbound {
            if let Some(sent) = stream.sent {
                assert!(
                    stream.taken <= sent,
                    "plan {plan} took {} messages of {sent}",
                    stream.taken
                );
            }
        }
    }
}

impl Shard {
    /// Gives plan `plan` up (its peer is down, its operation failed): its
    /// sending and receiving state goes, and what still arrives or
    /// completes for it is dropped. What it had received stays in the
    /// streaming memtable or is lost with the unsealed SSTable, as Scylla
    /// keeps what a failed stream already applied.
    pub fn abort_stream(&mut self, plan: u32) {
        self.streams.out.remove(&plan);
        self.streams.inbound.remove(&plan);
        self.streams.ends.retain(|(ended, _)| *ended != plan);
        self.streams.aborted.insert(plan);
    }

    /// Bytes this shard has sent to peers' streams and taken in from them
    /// since the start.
    pub fn streamed_bytes(&self) -> (u64, u64) {
        (self.streams.sent_bytes, self.streams.received_bytes)
    }

    /// The cluster's token metadata moved to `placement`'s epoch (a node
    /// announced a join or leave, or finished one): coordinators use its
    /// replicas and pending ranges from now on, and volume mode's write
    /// counts move to its ranges.
    pub fn set_placement(&mut self, placement: crate::placement::Placement) {
        assert!(
            placement.epoch() > self.config.placement.epoch(),
            "topology epochs only move forward"
        );
        if !self.config.data_mode {
            self.population
                .rekey(self.config.placement.replica_map(), placement.replica_map());
        }
        let owned = placement.shard_ownership(self.config.address.node);
        if owned > 0.0 {
            // A node that left keeps its last share: nothing asks it.
            self.config.key_ownership_fraction = owned;
        }
        self.config.placement = placement;
    }

    /// Starts sending this shard's data of `ranges` to the same shard of
    /// node `to` as stream plan `plan`.
    pub fn start_stream_out(
        &mut self,
        now: SimTime,
        plan: u32,
        to: u32,
        ranges: Arc<[(i64, i64)]>,
    ) {
        let to = ShardAddress {
            node: to,
            shard: self.config.address.shard,
        };
        assert!(
            !self.streams.out.contains_key(&plan),
            "plan {plan} is already streaming from {:?}",
            self.config.address
        );
        let token_set = TokenSet::of_ring_ranges(&ranges);
        let (rows, bytes, keys, cells, population) = if self.config.data_mode {
            let cells = self.cells_of(&ranges);
            let bytes = cells
                .iter()
                .map(|(_, version)| self.streamed_row_bytes(*version))
                .sum();
            let keys = cells
                .first()
                .map(|first| (first.0, cells[cells.len() - 1].0));
            (cells.len() as u64, bytes, keys, cells, None)
        } else {
            let (rows, bytes, keys) = self.volume_of(&ranges, &token_set);
            let map = self.config.placement.replica_map();
            let mut wanted = std::collections::BTreeSet::new();
            for &(_, end) in ranges.iter() {
                wanted.insert(map.range_index(end));
            }
            let population = self.population.of_ranges(|range| wanted.contains(&range));
            (
                rows,
                bytes,
                keys,
                Vec::new(),
                Some(StreamedPopulation(Arc::new(population))),
            )
        };
        self.send(
            to,
            Message::StreamStart {
                plan,
                keys,
                token_set,
                rows,
            },
        );
        self.streams.out.insert(
            plan,
            OutStream {
                to,
                rows,
                bytes,
                read: 0,
                reads_in_flight: 0,
                freezing: 0,
                ready: 0,
                sent_rows: 0,
                sent_bytes: 0,
                unanswered: 0,
                messages: 0,
                cells,
                population,
            },
        );
        self.pump_out(now, plan);
        self.input_done();
    }

    /// Bytes a row of `version` takes in the stream (its SSTable row); a
    /// partition of many rows streams whole (data mode keeps its newest
    /// write's version, not its rows).
    fn streamed_row_bytes(&self, version: RowVersion) -> u64 {
        self.config.partition_bytes.unwrap_or_else(|| {
            8 + u64::from(version.value_bytes) + self.config.sstable_row_overhead_bytes
        })
    }

    /// Data mode: the newest version of every row this shard holds in
    /// `ranges`, in key order.
    fn cells_of(&self, ranges: &[(i64, i64)]) -> Vec<Cell> {
        let mut rows: BTreeMap<u64, RowVersion> = BTreeMap::new();
        let mut take = |key: u64, version: RowVersion| {
            if ranges_contain(ranges, key_token(key)) {
                rows.entry(key)
                    .and_modify(|held| *held = reconcile(*held, version))
                    .or_insert(version);
            }
        };
        for sstable in &self.sstables {
            for &(key, version) in sstable.cells.iter().flat_map(SortedCells::cells) {
                take(key, version);
            }
        }
        for memtable in self.write.memtables() {
            for (&key, &version) in memtable.cells.iter().flatten() {
                take(key, version);
            }
        }
        rows.into_iter().collect()
    }

    /// Volume mode: the rows, bytes and key extent of this shard's data in
    /// `ranges` (`plan_set` as positions): of each SSTable with a token set,
    /// the share of its set in the ranges; of the rest (spread over what
    /// the node owns), the ranges' share of what the node owns.
    fn volume_of(
        &self,
        ranges: &[(i64, i64)],
        plan_set: &TokenSet,
    ) -> (u64, u64, Option<(u64, u64)>) {
        let owned = self.config.placement.ownership()[self.config.address.node as usize];
        let share = if owned > 0.0 {
            (ranges_fraction(ranges) / owned).min(1.0)
        } else {
            0.0
        };
        // What is spread over the node's ranges, and what lies in token
        // sets (its share computed apart).
        let (mut spread_rows, mut spread_bytes) = (0u64, 0u64);
        let (mut set_rows, mut set_bytes) = (0.0, 0.0);
        let mut keys: Option<(u64, u64)> = None;
        let mut extend = |first: u64, last: u64| {
            keys = Some(keys.map_or((first, last), |(low, high)| {
                (low.min(first), high.max(last))
            }));
        };
        for sstable in &self.sstables {
            match &sstable.token_set {
                None => {
                    spread_rows += sstable.rows;
                    spread_bytes += sstable.data_bytes;
                    extend(sstable.first_key, sstable.last_key);
                }
                Some(set) => {
                    let overlap = set.overlap_width(plan_set);
                    if overlap > 0 {
                        let share = overlap as f64 / set.width() as f64;
                        set_rows += sstable.rows as f64 * share;
                        set_bytes += sstable.data_bytes as f64 * share;
                        extend(sstable.first_key, sstable.last_key);
                    }
                }
            }
        }
        for memtable in self
            .write
            .memtables()
            .filter(|memtable| !memtable.is_empty())
        {
            spread_rows += memtable.rows;
            spread_bytes += memtable.sstable_bytes;
            extend(memtable.first_key, memtable.last_key);
        }
        let rows = (spread_rows as f64 * share + set_rows).round() as u64;
        let bytes = (spread_bytes as f64 * share + set_bytes).round() as u64;
        if rows == 0 {
            return (0, 0, None);
        }
        (rows, bytes.max(rows), keys)
    }

    /// Moves plan `plan`'s send along: reads ahead, sends what is frozen
    /// while its window allows, and ends it once all is sent (and, with
    /// RPCs, answered).
    fn pump_out(&mut self, _now: SimTime, plan: u32) {
        let mode = self.config.stream_mode;
        let Some(out) = self.streams.out.get_mut(&plan) else {
            return;
        };
        let mut reads = Vec::new();
        while out.reads_in_flight + out.freezing < READ_AHEAD
            && out.read < out.bytes
            && out.ready < u64::from(READ_AHEAD) * FRAGMENT_BYTES
        {
            let chunk = FRAGMENT_BYTES.min(out.bytes - out.read);
            out.read += chunk;
            out.reads_in_flight += 1;
            reads.push(chunk);
        }
        let row_bytes = (out.bytes / out.rows.max(1)).max(1);
        let all_frozen = out.read == out.bytes && out.reads_in_flight == 0 && out.freezing == 0;
        let window = match mode {
            StreamMode::Rpc => RPC_IN_FLIGHT,
            StreamMode::Stream => STREAM_WINDOW,
        };
        let mut sends = Vec::new();
        while out.sent_rows < out.rows && out.unanswered < window {
            let left = out.rows - out.sent_rows;
            let rows = match mode {
                StreamMode::Rpc => 1,
                StreamMode::Stream => (FRAGMENT_BYTES / row_bytes).clamp(1, left),
            };
            // The batch's share of the bytes, cumulatively, so that the
            // batches add up to exactly what was read.
            let bytes = ((u128::from(out.sent_rows + rows) * u128::from(out.bytes)
                / u128::from(out.rows)) as u64)
                - out.sent_bytes;
            if out.ready < bytes && !all_frozen {
                break;
            }
            out.ready = out.ready.saturating_sub(bytes);
            let cells = (!out.cells.is_empty()).then(|| {
                let from = out.sent_rows as usize;
                Arc::<[Cell]>::from(&out.cells[from..from + rows as usize])
            });
            out.sent_rows += rows;
            out.sent_bytes += bytes;
            self.streams.sent_bytes += bytes;
            out.unanswered += 1;
            out.messages += 1;
            sends.push(Message::StreamData {
                plan,
                rows: rows as u32,
                bytes: bytes as u32,
                cells,
            });
        }
        let to = out.to;
        let done = out.sent_rows == out.rows && (mode == StreamMode::Stream || out.unanswered == 0);
        for chunk in reads {
            self.submit_io(
                IoKind::Read,
                chunk,
                IoClass::Streaming,
                IoPurpose::StreamRead { plan, bytes: chunk },
            );
        }
        for message in sends {
            self.send(to, message);
        }
        if done {
            let out = self.streams.out.remove(&plan).expect("checked");
            self.send(
                to,
                Message::StreamEnd {
                    plan,
                    messages: out.messages,
                    population: out.population,
                },
            );
        }
    }

    /// A streaming read of plan `plan` is in: freeze it.
    pub(super) fn stream_read_done(&mut self, plan: u32, bytes: u64) {
        let Some(out) = self.streams.out.get_mut(&plan) else {
            return;
        };
        out.reads_in_flight -= 1;
        out.freezing += 1;
        // The chunk's share of the plan's partitions, for the per-row part
        // of freezing them (a price only: it need not add up exactly).
        let rows = ((u128::from(bytes) * u128::from(out.rows) + u128::from(out.bytes) / 2)
            / u128::from(out.bytes.max(1))) as u64;
        let task = self.new_task(TaskPurpose::StreamFrozen { plan, bytes });
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Streaming,
            work: CpuWork::StreamRead { bytes, rows },
        }));
    }

    /// A chunk of plan `plan` is frozen: ready to send.
    pub(super) fn stream_frozen(&mut self, now: SimTime, plan: u32, bytes: u64) {
        if let Some(out) = self.streams.out.get_mut(&plan) {
            out.freezing -= 1;
            out.ready += bytes;
            self.pump_out(now, plan);
        }
    }

    /// A stream message from a peer, taken off its connection.
    pub(super) fn stream_message(&mut self, now: SimTime, from: ShardAddress, message: Message) {
        let plan = match &message {
            Message::StreamStart { plan, .. }
            | Message::StreamData { plan, .. }
            | Message::StreamAck { plan, .. }
            | Message::StreamEnd { plan, .. } => *plan,
            _ => unreachable!("not a stream message"),
        };
        if self.streams.aborted.contains(&plan) {
            return;
        }
        match message {
            Message::StreamStart {
                plan,
                keys,
                token_set,
                rows,
            } => {
                if let Some(portion) = self.streams.memtable_plans.get_mut(&plan) {
                    portion.plan = Some((token_set.clone(), rows));
                }
                let stream = self.in_stream(plan, from);
                stream.keys = keys;
                stream.plan = Some((token_set, rows));
                // Data that overtook the start on the network.
                if let (Some((first, last)), Some(sstable)) = (keys, stream.sstable.as_mut()) {
                    sstable.first_key = sstable.first_key.min(first);
                    sstable.last_key = sstable.last_key.max(last);
                }
            }
            Message::StreamData {
                plan,
                rows,
                bytes,
                cells,
            } => {
                let bytes = u64::from(bytes);
                self.in_stream(plan, from).taken += 1;
                self.streams.received_bytes += bytes;
                let (purpose, work) = match self.config.stream_mode {
                    StreamMode::Rpc => (
                        TaskPurpose::StreamApply {
                            plan,
                            rows,
                            bytes,
                            cells,
                        },
                        CpuWork::StreamApply { rows, bytes },
                    ),
                    StreamMode::Stream => {
                        let stream = self.in_stream(plan, from);
                        stream.serializing += 1;
                        (
                            TaskPurpose::StreamSerialize {
                                plan,
                                rows,
                                bytes,
                                cells,
                            },
                            CpuWork::FlushSerialize {
                                bytes,
                                rows: u64::from(rows),
                            },
                        )
                    }
                };
                let task = self.new_task(purpose);
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Streaming,
                    work,
                }));
                self.maybe_end_stream(now, plan);
            }
            Message::StreamAck { plan, count } => {
                if let Some(out) = self.streams.out.get_mut(&plan) {
                    out.unanswered -= count;
                    self.pump_out(now, plan);
                }
            }
            Message::StreamEnd {
                plan,
                messages,
                population,
            } => {
                let stream = self.in_stream(plan, from);
                stream.sent = Some(messages);
                stream.population = population;
                self.maybe_end_stream(now, plan);
            }
            _ => unreachable!("not a stream message"),
        }
    }

    /// Plan `plan` has ended once its sender's end and all its data are in.
    fn maybe_end_stream(&mut self, now: SimTime, plan: u32) {
        let stream = self.in_stream_of(plan);
        if stream.ended || stream.sent != Some(stream.taken) {
            return;
        }
        stream.ended = true;
        if self.config.stream_mode == StreamMode::Rpc {
            // Every partition is applied (the sender ends once all are
            // answered): what the memtable holds goes to disk now.
            let memtable_holds = self
                .streams
                .memtable
                .as_ref()
                .is_some_and(|memtable| !memtable.is_empty());
            let needed = if memtable_holds {
                self.streams.force_flush = true;
                self.streams.flushes_started + 1
            } else {
                self.streams.flushes_started
            };
            self.streams.ends.push((plan, needed));
            self.maybe_flush_streamed(now);
            self.finish_rpc_plans(now);
        } else {
            self.maybe_seal_stream(now, plan);
        }
    }

    /// The receiving side of plan `plan` from `from`, opened by whichever
    /// of its messages arrives first.
    fn in_stream(&mut self, plan: u32, from: ShardAddress) -> &mut InStream {
        self.streams.inbound.entry(plan).or_insert(InStream {
            from,
            keys: None,
            plan: None,
            taken: 0,
            sent: None,
            rows: 0,
            bytes: 0,
            uncredited: 0,
            ended: false,
            serializing: 0,
            writes: 0,
            sstable: None,
            population: None,
        })
    }

    /// The receiving side of plan `plan`, open.
    fn in_stream_of(&mut self, plan: u32) -> &mut InStream {
        self.streams
            .inbound
            .get_mut(&plan)
            .unwrap_or_else(|| panic!("plan {plan} is not streaming in"))
    }

    /// A memtable of streamed rows (volume mode: sized only).
    fn streamed_memtable(&mut self) -> Memtable {
        self.write.new_memtable()
    }

    /// Adds `rows` streamed rows of `bytes` (and their cells) over `keys`
    /// to `memtable`.
    fn add_streamed(
        memtable: &mut Memtable,
        rows: u32,
        bytes: u64,
        keys: Option<(u64, u64)>,
        cells: Option<&[Cell]>,
        row_overhead: u64,
    ) {
        memtable.rows += u64::from(rows);
        memtable.sstable_bytes += bytes;
        memtable.memory_bytes += bytes + u64::from(rows) * row_overhead;
        if let Some((first, last)) = keys {
            memtable.first_key = memtable.first_key.min(first);
            memtable.last_key = memtable.last_key.max(last);
        }
        if let (Some(map), Some(cells)) = (memtable.cells.as_mut(), cells) {
            for &(key, version) in cells {
                memtable.max_timestamp_us = memtable.max_timestamp_us.max(version.timestamp);
                map.entry(key)
                    .and_modify(|held| *held = reconcile(*held, version))
                    .or_insert(version);
            }
        }
    }

    /// RPC mode: a streamed partition is in the streaming memtable: answer
    /// it, unless the streaming memory is full.
    pub(super) fn stream_applied(
        &mut self,
        now: SimTime,
        plan: u32,
        rows: u32,
        bytes: u64,
        cells: Option<Arc<[Cell]>>,
    ) {
        if self.streams.aborted.contains(&plan) {
            return;
        }
        let (from, keys) = {
            let stream = self.streams.inbound.get_mut(&plan).expect("streaming in");
            let before = stream.rows;
            stream.rows += u64::from(rows);
            stream.bytes += bytes;
            let portion = self.streams.memtable_plans.entry(plan).or_insert(Portion {
                plan: stream.plan.clone(),
                from: before,
                to: before,
            });
            portion.to = stream.rows;
            (stream.from, stream.keys)
        };
        let mut memtable = match self.streams.memtable.take() {
            Some(memtable) => memtable,
            None => self.streamed_memtable(),
        };
        let overhead = self.config.memtable_row_overhead_bytes;
        Self::add_streamed(&mut memtable, rows, bytes, keys, cells.as_deref(), overhead);
        let full = memtable.memory_bytes >= 2 * streaming_flush_bytes(self.config.memory_bytes);
        self.streams.memtable = Some(memtable);
        if full && self.streams.flushing.is_some() {
            self.streams.held_acks.push((from, plan));
        } else {
            self.send(from, Message::StreamAck { plan, count: 1 });
        }
        self.maybe_flush_streamed(now);
    }

    /// RPC mode: starts flushing the streaming memtable if it is at its
    /// flush point (or a plan waits for it) and no flush runs.
    fn maybe_flush_streamed(&mut self, now: SimTime) {
        if self.streams.flushing.is_none() {
            let due = self.streams.memtable.as_ref().is_some_and(|memtable| {
                !memtable.is_empty()
                    && (self.streams.force_flush
                        || memtable.memory_bytes >= streaming_flush_bytes(self.config.memory_bytes))
            });
            if due {
                let memtable = self.streams.memtable.take().expect("checked");
                let portions = std::mem::take(&mut self.streams.memtable_plans);
                self.streams.flushing_set = portions
                    .values()
                    .map(Portion::token_set)
                    .reduce(|a, b| Some(a?.union(&b?)))
                    .flatten();
                self.streams.force_flush = false;
                self.streams.flushes_started += 1;
                let generation = self.next_sstable_generation;
                self.next_sstable_generation += 1;
                self.streams.flushing = Some(FlushJob::new(
                    memtable,
                    generation,
                    FRAGMENT_BYTES,
                    FLUSH_WRITE_BEHIND,
                ));
                // The memory is free again: answer what waited for it.
                for (to, plan) in std::mem::take(&mut self.streams.held_acks) {
                    self.send(to, Message::StreamAck { plan, count: 1 });
                }
            }
        }
        self.advance_streamed_flush(now);
    }

    /// RPC mode: the streaming memtable's flush, one step on.
    fn advance_streamed_flush(&mut self, now: SimTime) {
        let Some(job) = self.streams.flushing.as_mut() else {
            return;
        };
        if job.is_complete() {
            let job = self.streams.flushing.take().expect("checked");
            let (mut sstable, _) = job.finish(now);
            sstable.token_set = self.streams.flushing_set.take();
            self.add_streamed_sstable(now, sstable);
            self.streams.flushes_done += 1;
            self.finish_rpc_plans(now);
            self.maybe_flush_streamed(now);
            return;
        }
        if let FlushStep::Serialize { bytes, rows } = job.next_step() {
            let task = self.new_task(TaskPurpose::StreamFlushSerialize { bytes });
            self.actions.push_back(Action::RunCpu(CpuTask {
                id: task,
                group: SchedulingGroup::Streaming,
                work: CpuWork::FlushSerialize { bytes, rows },
            }));
        }
    }

    /// RPC mode: a chunk of the streaming memtable is serialized: write it.
    pub(super) fn streamed_flush_serialized(&mut self, now: SimTime, bytes: u64) {
        let job = self
            .streams
            .flushing
            .as_mut()
            .expect("a streaming flush serializes");
        job.serialized(bytes);
        let memtable = job.memtable();
        let (sstable_bytes, rows) = (memtable.sstable_bytes, memtable.rows);
        self.submit_flush_chunk(
            bytes,
            sstable_bytes,
            rows,
            IoClass::Streaming,
            IoPurpose::StreamFlushWrite { bytes },
        );
        self.advance_streamed_flush(now);
    }

    /// RPC mode: a chunk of the streaming memtable is on disk.
    pub(super) fn streamed_flush_written(&mut self, now: SimTime, bytes: u64) {
        self.streams
            .flushing
            .as_mut()
            .expect("a streaming flush writes")
            .written(bytes);
        self.advance_streamed_flush(now);
    }

    /// RPC mode: the ended plans whose data is now all on disk are received.
    fn finish_rpc_plans(&mut self, now: SimTime) {
        let done = self.streams.flushes_done;
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.streams.ends)
            .into_iter()
            .partition(|&(_, needed)| needed <= done);
        self.streams.ends = waiting;
        for (plan, _) in ready {
            self.plan_received(now, plan);
        }
    }

    /// Stream mode: a batch is serialized into the plan's SSTable: write it
    /// (its credit goes back once it is on disk).
    pub(super) fn stream_serialized(
        &mut self,
        _now: SimTime,
        plan: u32,
        rows: u32,
        bytes: u64,
        cells: Option<Arc<[Cell]>>,
    ) {
        if self.streams.aborted.contains(&plan) {
            return;
        }
        let mut sstable = match self.in_stream_of(plan).sstable.take() {
            Some(sstable) => sstable,
            None => self.streamed_memtable(),
        };
        let overhead = self.config.memtable_row_overhead_bytes;
        let stream = self.in_stream_of(plan);
        Self::add_streamed(
            &mut sstable,
            rows,
            bytes,
            stream.keys,
            cells.as_deref(),
            overhead,
        );
        stream.sstable = Some(sstable);
        stream.rows += u64::from(rows);
        stream.bytes += bytes;
        stream.serializing -= 1;
        stream.writes += 1;
        let disk_bytes = self
            .config
            .sstable_format
            .write_bytes(bytes, bytes, u64::from(rows));
        self.submit_io(
            IoKind::Write,
            disk_bytes,
            IoClass::Streaming,
            IoPurpose::StreamWrite { plan },
        );
    }

    /// Stream mode: a batch of plan `plan` is on disk. The SSTable writer
    /// takes more once its writes complete, so credit goes back now (the
    /// connection's window is the writer's pace, not the CPU's).
    pub(super) fn stream_written(&mut self, now: SimTime, plan: u32) {
        if self.streams.aborted.contains(&plan) {
            return;
        }
        let stream = self.in_stream_of(plan);
        stream.writes -= 1;
        stream.uncredited += 1;
        let credit = (stream.uncredited >= STREAM_CREDIT_EVERY || stream.ended).then(|| {
            let count = std::mem::take(&mut stream.uncredited);
            (stream.from, count)
        });
        if let Some((to, count)) = credit.filter(|(_, count)| *count > 0) {
            self.send(to, Message::StreamAck { plan, count });
        }
        self.maybe_seal_stream(now, plan);
    }

    /// Stream mode: seals plan `plan`'s SSTable once it has ended and all
    /// its data is on disk.
    fn maybe_seal_stream(&mut self, now: SimTime, plan: u32) {
        let stream = self.in_stream_of(plan);
        if !stream.ended || stream.serializing > 0 || stream.writes > 0 {
            return;
        }
        let token_set = stream.plan.as_ref().map(|(set, _)| set.clone());
        if let Some(memtable) = stream
            .sstable
            .take()
            .filter(|memtable| !memtable.is_empty())
        {
            let generation = self.next_sstable_generation;
            self.next_sstable_generation += 1;
            let sstable = SSTable {
                generation,
                data_bytes: memtable.sstable_bytes,
                rows: memtable.rows,
                first_key: memtable.first_key,
                last_key: memtable.last_key,
                created_at: now,
                max_timestamp_us: memtable.max_timestamp_us,
                key_share: None,
                cells: memtable.cells.as_ref().map(SortedCells::from_map),
                level: 0,
                token_range: None,
                segments: None,
                token_set,
            };
            self.add_streamed_sstable(now, sstable);
        }
        self.plan_received(now, plan);
    }

    /// A streamed SSTable joins the table.
    fn add_streamed_sstable(&mut self, now: SimTime, sstable: SSTable) {
        self.compaction.add_sstable(&sstable);
        self.sstables.push(sstable);
        self.sstables_epoch += 1;
        self.resize_row_cache();
        self.maybe_start_compactions(now);
    }

    /// All of plan `plan`'s data is in the table: take over the sender's
    /// write counts and tell the driver.
    fn plan_received(&mut self, _now: SimTime, plan: u32) {
        let stream = self
            .streams
            .inbound
            .remove(&plan)
            .expect("a received plan was streaming in");
        if let Some(population) = stream.population {
            self.population.absorb(&population.0);
        }
        self.actions.push_back(Action::StreamReceived {
            plan,
            rows: stream.rows,
            bytes: stream.bytes,
        });
    }
}
