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
//! Coordination (see [`crate::coordinator`]): a client request for a key
//! this shard is not the only replica of costs a coordination task, then
//! goes to every replica (writes) or to `block_for` of them, the closest
//! for data and the others for digests (reads; all replicas with the
//! read-repair chance); this shard answers the client at the consistency
//! level, repairs replicas whose digests disagree, and answers with a
//! timeout when replicas stay silent past the request timeout.
//!
//! Messaging (see [`crate::messaging`]): a message to another node lands on
//! a connection's shard there; a request for a key another shard of the node
//! owns is relayed to the owner (a cross-shard hop each way), and a write's
//! acknowledgement that lands off its coordinator hops to it.
//!
//! The read path (see [`crate::read`] for what is decided how): a CPU task
//! in the statement group, a memtable lookup, then for every SSTable whose
//! bloom filter passes an index read followed by a data read, all SSTables in
//! parallel; the reply carries the row if any source had it.
//!
//! Where each part lives. The mechanisms own their state, each in a struct
//! changed only through its methods and with its own `check_invariants`:
//! `write_path.rs`'s `WritePath` (memtables, dirty memory, the commitlog
//! and the writes waiting on them, flushing), `pending_reads.rs`'s
//! `PendingReads`, [`crate::compaction::manager`]'s `CompactionManager`,
//! [`crate::coordinator`]'s `Coordinator`, `batch.rs`'s `Batches`,
//! `handoff.rs`'s `Handoff`, `stream_path.rs`'s `Streams`. This file holds
//! the shard's inputs and outputs and routes each finished task or I/O to
//! its mechanism; the `impl Shard` blocks are the routes between them:
//! `writes.rs` the write path's CPU tasks, I/O and replies,
//! `read_path.rs` the read path, `coordination.rs` the coordinator's and
//! replica's messages, `compaction.rs` the compaction jobs' picks, I/O and
//! tasks and the backlog controllers, `preload.rs` volume mode's starting
//! data, `restart.rs` a crash and the replay.

use std::collections::VecDeque;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use slab::Slab;
use units::{SimDuration, SimTime};

use crate::action::{
    Action, ClientRequest, CpuTask, CpuWork, IoClass, IoId, IoKind, IoRequest, Message, Operation,
    ReplyStatus, RequestId, SchedulingGroup, TaskId,
};
use crate::cache::heat::HeardRates;
use crate::cache::page_cache::PageCache;
use crate::cache::row_cache::RowCache;
use crate::cells::ReadResult;
use crate::commitlog::BufferWrite;
use crate::compaction::manager::{CompactionIo, CompactionTask};
use crate::compaction::{CompactionManager, RateLimiter};
use crate::config::ShardConfig;
use crate::controller::{self, BacklogController};
use crate::coordinator::{Coordinator, Expired};
use crate::placement::ShardAddress;
use crate::read;
use crate::sstable::SSTable;
use crate::timer::{earlier, TimerKind, TimerTable};

/// The SSTables whose bloom filters pass for a read's key: a bit per
/// position in `Shard::sstables`, good while the list is as it was
/// (`epoch` equals `Shard::sstables_epoch`). A read costs its CPU by the
/// SSTables it will look in and then looks in them; working the filters
/// out once instead of twice saved a few percent of the 40-node benchmark.
#[derive(Clone, Copy, Debug)]
struct BloomPasses {
    epoch: u64,
    mask: u64,
}

/// Why a CPU task was started.
#[derive(Clone, Debug)]
enum TaskPurpose {
    Write(Request),
    /// A read, whether the row cache holds its row, and the SSTables whose
    /// bloom filters passed when it was planned.
    Read(Request, bool, Option<BloomPasses>),
    /// Coordinate a client request: send it to its replicas.
    Coordinate(ClientRequest),
    /// Coordinate batch `0` (its slot): to the batchlog or the replicas.
    CoordinateBatch(u32),
    /// A batchlog write (or removal) from a batch's coordinator is built.
    BatchlogWrite(batch::BatchlogEntry),
    /// A replica hashes its read result for a digest request.
    DigestForReplica {
        origin: Origin,
        result: ReadResult,
    },
    /// The coordinator hashes a data response to compare with digests.
    DigestForCoordinator {
        id: u64,
        from: ShardAddress,
        result: ReadResult,
        digest: u64,
    },
    FlushSerialize {
        bytes: u64,
    },
    /// A hint for node `node` is serialized into its log.
    HintWrite {
        node: u32,
        hint: crate::hints::Hint,
    },
    /// A hint read back for replay is decoded (send `slot` of the handoff).
    HintSend {
        slot: u64,
        hint: crate::hints::Hint,
    },
    /// A message from a peer, taken off the connection.
    Receive {
        from: ShardAddress,
        message: Message,
    },
    /// A streaming read of plan `plan` frozen into fragments.
    StreamFrozen {
        plan: u32,
        bytes: u64,
    },
    /// RPC-mode streamed partitions applied to the streaming memtable.
    StreamApply {
        plan: u32,
        rows: u32,
        bytes: u64,
        cells: Option<std::sync::Arc<[crate::cells::Cell]>>,
    },
    /// A stream-mode batch serialized into its plan's SSTable.
    StreamSerialize {
        plan: u32,
        rows: u32,
        bytes: u64,
        cells: Option<std::sync::Arc<[crate::cells::Cell]>>,
    },
    /// A chunk of the streaming memtable serialized for its flush.
    StreamFlushSerialize {
        bytes: u64,
    },
    /// An index page of read `read` is parsed: on to its data.
    IndexParsed {
        read: u32,
        row_bytes: u64,
        version: ReadResult,
        generation: u64,
    },
    /// A row of read `read` is decoded.
    DataParsed {
        read: u32,
        version: ReadResult,
    },
    /// A compaction job's task (the compaction manager's).
    Compaction(CompactionTask),
    /// A restarted shard applies the entries of commitlog bytes
    /// `from..to` of its replay.
    ReplayApply {
        from: u64,
        to: u64,
    },
}

/// Why an I/O was submitted.
#[derive(Clone, Copy, Debug)]
enum IoPurpose {
    CommitlogWrite {
        write: BufferWrite,
    },
    FlushWrite {
        bytes: u64,
    },
    /// An index page for read `read`; the row that follows is `row_bytes` on
    /// disk and holds `value_bytes` if the SSTable has the key.
    ReadIndex {
        read: u32,
        row_bytes: u64,
        /// What the SSTable returns for the key (`None`: a false positive).
        version: ReadResult,
        /// The SSTable's generation (names its pages in the page cache).
        generation: u64,
    },
    /// The data of a row (or a bloom-filter false positive's empty page).
    ReadData {
        read: u32,
        row_bytes: u64,
        version: ReadResult,
    },
    /// A compaction job's read or write (the compaction manager's).
    Compaction(CompactionIo),
    /// Bytes of node `node`'s hint log, segment `segment`.
    HintWrite {
        node: u32,
        segment: u32,
    },
    /// Bytes of node `node`'s hint segment `segment` read back for replay.
    HintRead {
        node: u32,
        segment: u32,
        bytes: u64,
    },
    /// Commitlog bytes `from..to` of a restarted shard's replay.
    ReplayRead {
        from: u64,
        to: u64,
    },
    /// A streaming read of plan `plan`.
    StreamRead {
        plan: u32,
        bytes: u64,
    },
    /// A chunk of the streaming memtable's flush.
    StreamFlushWrite {
        bytes: u64,
    },
    /// A batch of plan `plan`'s SSTable (stream mode).
    StreamWrite {
        plan: u32,
    },
}

/// Who asked for an operation, and so who gets the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// A client connected to this shard (the single-replica fast path: this
    /// shard is the only replica and answers the client itself).
    Client(RequestId),
    /// A coordinator shard, with its id for the request; `digest`: it wants
    /// only the digest of a read.
    Peer {
        from: ShardAddress,
        id: u64,
        digest: bool,
    },
    /// This shard's own coordinator (the coordinator is also a replica).
    Local { id: u64, digest: bool },
}

impl Origin {
    fn wants_digest(self) -> bool {
        matches!(
            self,
            Origin::Peer { digest: true, .. } | Origin::Local { digest: true, .. }
        )
    }
}

/// An operation this shard executes as a replica.
#[derive(Clone, Copy, Debug)]
struct Request {
    origin: Origin,
    operation: Operation,
}

/// A shard's hinted handoff at a point in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HintsSummary {
    /// Counters since start.
    pub stats: crate::hints::HintStats,
    /// Hints stored and not yet acknowledged by their replica.
    pub pending: u64,
}

/// Point-in-time figures of a shard, for time series and checks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
    /// SSTable bytes those writes will flush (rows with their on-disk
    /// overhead; their memtable memory is larger).
    pub flushed_bytes_written: u64,
    /// Reads answered since start.
    pub reads_completed: u64,
    /// Compactions running.
    pub active_compactions: u64,
    /// Compactions completed since start.
    pub compactions_completed: u64,
    /// Compaction input bytes merged since start.
    pub bytes_compacted: u64,
    /// Fully expired SSTables dropped whole since start (time-window
    /// tables with a TTL).
    pub sstables_expired: u64,
    /// The compaction controller's input: backlog bytes / shard memory.
    pub compaction_backlog: f64,
    /// CPU shares last given to the compaction group (0 without a controller).
    pub compaction_shares: f64,
    /// CPU shares last given to the memtable-flush group (0 without a controller).
    pub flush_shares: f64,
    /// Coordinated reads whose digests disagreed (read repair, blocking or
    /// in the background).
    pub digest_mismatches: u64,
    /// Rows written back to replicas by read repair.
    pub read_repairs: u64,
    /// Of `digest_mismatches`, those found after the client's answer and
    /// repaired in the background.
    pub background_read_repairs: u64,
    /// Extra read requests sent by speculative retry.
    pub speculative_retries: u64,
    /// Reads the row cache answered, since start.
    pub cache_hits: u64,
    /// Reads the row cache did not hold, since start.
    pub cache_misses: u64,
    /// Bytes the row cache holds.
    pub cache_bytes: u64,
    /// Coordinated reads whose targets heat-weighted balancing chose.
    pub heat_balanced_reads: u64,
}

/// Where a preloaded table stands in the cycle its writes drive
/// ([`Shard::preload_table`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PreloadState {
    /// As compaction leaves it once caught up, memtables empty: a table
    /// just populated and left to compact.
    Compacted,
    /// Part-way through the flush-and-compact cycle: a table long into a
    /// write load.
    MidCycle {
        /// Position in `[0, 1)` in the cycle of the SSTables flushes write
        /// until they compact.
        tiers: f64,
        /// Fill of the active memtable in `[0, 1)`, of the flush threshold.
        memtable: f64,
        /// Where the size-tiered tiers above those two stand in their
        /// merge cycles.
        merges: MergePhases,
    },
    /// Part-way through a window of writes that began compacted: the
    /// size-tiered tiers below the top at `tiers` of their cycle and the
    /// memtable at `memtable` when the window began, carried forward
    /// `elapsed_s` seconds at the window's write and merge rates
    /// ([`crate::compaction::stcs::window_sizes`], [`crate::compaction::stcs::forward`]): the flushes of that
    /// stretch, and the merges they set off, finished or part-way. A
    /// published run measured over a window after its compactions caught
    /// up is a cluster whose shards stand at points of that window.
    Window {
        /// Position in `[0, 1)` of the cycle of the tiers below the top
        /// (how many SSTables each holds) when the window began.
        tiers: f64,
        /// Fill of the memtable in `[0, 1)` when the window began.
        memtable: f64,
        /// Seconds of the window behind this shard.
        elapsed_s: f64,
        /// SSTable bytes the writes bring a second (what flushes write).
        write_bytes_per_s: f64,
        /// Input bytes a second the shard's merges get through together.
        merge_bytes_per_s: f64,
    },
}

/// Tiers above the two lowest that [`MergePhases`] places.
pub const MERGE_TIERS: usize = 16;

/// Where each size-tiered tier above the two lowest stands in its merge
/// cycle, for a table long into a write load ([`Shard::preload_table`]).
///
/// Tier `j` (SSTables of `flush x base^(j+2)` bytes) merges once every
/// `base^(j+3)` flushes, and the merge reads `base^(j+3)` flushes' worth of
/// input; at a compaction rate of `R` input bytes a second and flushes of
/// `F` bytes every `T` seconds, it runs for `(F / T) / R` of its cycle,
/// whatever the tier. That fraction is `duty`. A tier whose phase is below
/// `duty` starts the run merging, `phase / duty` of the way through.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MergePhases {
    /// Fraction of its cycle a tier spends merging, in `[0, 1]` (0: no
    /// tier is merging).
    pub duty: f64,
    /// Per tier, smallest first: its position in its cycle, in `[0, 1)`.
    pub phases: [f64; MERGE_TIERS],
}

impl MergePhases {
    /// No tier merging.
    pub const IDLE: MergePhases = MergePhases {
        duty: 0.0,
        phases: [0.0; MERGE_TIERS],
    };
}

/// One shard of a node: Scylla runs one per core, each owning a slice of the
/// node's memory and of the token range, sharing the node's disk and NIC.
pub struct Shard {
    config: ShardConfig,
    /// The write path: memtables, dirty memory, the commitlog and the
    /// writes waiting on them.
    write: write_path::WritePath,
    sstables: Vec<SSTable>,
    /// Changes whenever `sstables` does ([`BloomPasses`]).
    sstables_epoch: u64,
    tasks: Slab<TaskPurpose>,
    ios: Slab<IoPurpose>,
    /// Requests this shard took off a connection for a key another shard
    /// of the node owns and passed to it (`messaging`): who asked and under
    /// which id, by the relay id (`RELAYED` | slot) the owner answers to.
    relays: Slab<(ShardAddress, u64)>,
    /// Batches of several partitions this shard coordinates, and the
    /// batchlog entries it keeps for other coordinators.
    batches: batch::Batches,
    /// Reads waiting for their SSTable parts, and the reads answered.
    reads: pending_reads::PendingReads,
    /// Volume mode: the keys the shard's writes and preload gave it, which
    /// decide what its reads return (replicas with the same writes agree).
    population: read::Population,
    /// Compaction's state: jobs, backlog, limiter, counters, shares.
    compaction: CompactionManager,
    flush_shares: f64,
    /// Client requests this shard coordinates.
    coordinator: Coordinator,
    /// [`Shard::poll_timeout`]'s answer, worked out as each input ends
    /// (the driver asks after every input; the deadline queues' fronts are
    /// warm then, and cold by the time it asks).
    next_timeout: Option<SimTime>,
    /// The row cache, if the shard has one.
    row_cache: Option<RowCache>,
    /// Cassandra's OS page cache, built at the first read that needs it.
    page_cache: Option<PageCache>,
    /// Its pseudo-random streams.
    draws: Draws,
    /// Row cache lookups (hits, lookups) since the node level last took
    /// them ([`Shard::take_cache_lookups`]).
    cache_lookups: (u64, u64),
    /// The node's published cache hit rate, as the node level last set it
    /// (`None` until then).
    node_hit_rate: Option<f64>,
    /// Coordinated reads whose targets heat-weighted balancing chose.
    heat_balanced_reads: u64,
    /// The hit rates other replicas published, for heat-weighted balancing.
    heard_rates: HeardRates,
    /// Nodes its node's failure detector sees down, by node.
    peer_down: crate::gossip::DownSet,
    /// Hinted handoff, if the preset keeps hints (boxed: most shards of
    /// most presets have none).
    handoff: Option<Box<handoff::Handoff>>,
    /// Range streaming to and from peers (topology changes).
    streams: stream_path::Streams,
    /// The hint logs' next deadline, copied out of `handoff` whenever it
    /// changes (every input asks for it; the box is cold).
    hints_wake: Option<SimTime>,
    /// Operations past their deadline, kept between timeouts.
    expired: Vec<Expired>,
    actions: VecDeque<Action>,
    timers: TimerTable,
    next_sstable_generation: u64,
    /// Lives before this one ([`restart`]): task and I/O ids carry it.
    incarnation: u64,
    /// Serving, down, or replaying.
    life: restart::Life,
    /// Counters of earlier lives that live outside the shard's fields
    /// (the row cache's).
    carried: restart::Counters,
    /// Inputs since the mechanisms' checks last ran (debug builds).
    unchecked_inputs: u32,
}

/// How often, in inputs, a shard runs its mechanisms' checks in debug
/// builds. Several walk a little of their state (a hint log's bitmaps, a
/// latency estimate's 96 buckets, a cache's newest entries); run after
/// every input they took a third of the test suite's time. A state an
/// input breaks is still caught within this many more inputs of the shard.
const CHECK_EVERY_INPUTS: u32 = 8;

/// Bits of a task's or I/O's id below the incarnation of the shard that
/// issued it.
const INCARNATION_SHIFT: u32 = 40;
/// The slot part of a task's or I/O's id.
const SLOT_MASK: u64 = (1 << INCARNATION_SHIFT) - 1;
// Slots need room for every task and I/O in flight (2^32 and more), and
// incarnations for every crash of a run (2^20 and more).
const _: () = assert!(INCARNATION_SHIFT >= 32 && INCARNATION_SHIFT <= 44);

impl Shard {
    /// A shard with no data, whose timers start at `now`.
    pub fn new(config: ShardConfig, now: SimTime) -> Shard {
        let draws = Draws::new(&config.seeds);
        config
            .validate()
            .unwrap_or_else(|reason| panic!("invalid shard configuration: {reason}"));
        let mut timers = TimerTable::default();
        timers.set(TimerKind::CommitlogSync, now + config.commitlog_sync_period);
        // Controllers: a static one sets its shares once; a curve ticks.
        let mut actions = VecDeque::new();
        for (controller, timer, group) in [
            (
                &config.compaction_controller,
                TimerKind::CompactionController,
                SchedulingGroup::Compaction,
            ),
            (
                &config.flush_controller,
                TimerKind::FlushController,
                SchedulingGroup::Memtable,
            ),
        ] {
            match controller {
                Some(BacklogController::Static(shares)) => {
                    actions.push_back(Action::SetShares {
                        group,
                        shares: *shares,
                    });
                }
                Some(BacklogController::Curve { tick, .. }) => timers.set(timer, now + *tick),
                None => {}
            }
        }
        let row_cache = config.row_cache.as_ref().map(|setup| {
            let mut cache_config = setup.config;
            if setup.takes_free_memory {
                cache_config.capacity_bytes = config.memory_bytes;
            }
            match (&setup.popularity, config.data_mode) {
                (Some(curve), false) => RowCache::volume(
                    cache_config,
                    curve,
                    (setup.key_rows * config.key_ownership_fraction).max(1.0),
                    setup.mean_row_bytes,
                )
                .unwrap_or_else(|reason| panic!("invalid row cache: {reason}")),
                _ => RowCache::data(cache_config),
            }
        });
        let compaction_limiter = config
            .compaction_throughput_bytes_per_sec
            .map(|rate| RateLimiter::new(rate, now));
        let handoff = config.hints.clone().map(|setup| {
            let nodes = config.placement.nodes();
            Box::new(handoff::Handoff::new(
                crate::hints::HintsManager::new(setup, nodes).planted(config.planted),
            ))
        });
        let planted = config.planted;
        let mut shard = Shard {
            write: write_path::WritePath::new(&config),
            compaction: CompactionManager::new(&config.compaction, compaction_limiter),
            config,
            sstables: Vec::new(),
            sstables_epoch: 0,
            tasks: Slab::new(),
            relays: Slab::new(),
            batches: batch::Batches::default(),
            ios: Slab::new(),
            reads: pending_reads::PendingReads::default(),
            population: read::Population::default(),
            coordinator: Coordinator::new(planted),
            next_timeout: None,
            row_cache,
            page_cache: None,
            draws,
            cache_lookups: (0, 0),
            node_hit_rate: None,
            heat_balanced_reads: 0,
            heard_rates: HeardRates::default(),
            peer_down: crate::gossip::DownSet::default(),
            handoff,
            streams: stream_path::Streams::default(),
            hints_wake: None,
            expired: Vec::new(),
            flush_shares: 0.0,
            actions,
            timers,
            next_sstable_generation: 1,
            incarnation: 0,
            life: restart::Life::Running,
            carried: restart::Counters::default(),
            unchecked_inputs: 0,
        };
        shard.next_timeout = shard.earliest_deadline();
        shard
    }

    /// The shard's configuration.
    pub fn config(&self) -> &ShardConfig {
        &self.config
    }

    /// SSTables on disk, oldest first.
    pub fn sstables(&self) -> &[SSTable] {
        &self.sstables
    }

    /// Row cache lookups since the last call: (hits, lookups). The node
    /// level sums its shards' into the node's published hit rate
    /// ([`crate::cache::heat::HitRateTracker`]).
    pub fn take_cache_lookups(&mut self) -> (u64, u64) {
        std::mem::take(&mut self.cache_lookups)
    }

    /// The node's published cache hit rate, which this shard's read
    /// responses carry and its coordinator uses for its own node
    /// (heat-weighted balancing).
    pub fn set_node_hit_rate(&mut self, rate: f64) {
        debug_assert!((0.0..=1.0).contains(&rate), "hit rate {rate}");
        self.node_hit_rate = Some(rate);
    }

    /// Its node now sees `peer` up (`alive`) or down: the coordinator
    /// sends it nothing while it is down.
    pub fn set_peer_alive(&mut self, now: SimTime, peer: u32, alive: bool) {
        debug_assert_ne!(
            peer, self.config.address.node,
            "a node's failure detector judges only its peers"
        );
        self.peer_down.set(peer, alive);
        if let Some(handoff) = self.handoff.as_mut() {
            handoff.manager.set_alive(now, peer, alive);
            self.pump_hints(now);
            self.input_done();
        }
    }

    /// Data mode: the newest version of `key` this shard holds, in its
    /// memtables or SSTables, without running a read (checkers look at a
    /// replica's data at the end of a run). `None` in volume mode.
    pub fn local_version(&self, key: u64) -> Option<ReadResult> {
        if !self.config.data_mode {
            return None;
        }
        let on_disk = self
            .sstables
            .iter()
            .filter_map(|sstable| read::sstable_version(sstable, key))
            .max();
        Some(self.memtables_version(key).max(on_disk))
    }

    /// Data mode: the newest version of `key` in any of the shard's
    /// memtables (an older memtable may hold an older version).
    fn memtables_version(&self, key: u64) -> ReadResult {
        self.write
            .memtables()
            .filter_map(|memtable| read::memtable_version(memtable, key))
            .max()
    }

    /// Hinted handoff's counters (`None` if the preset keeps no hints).
    pub fn hint_stats(&self) -> Option<HintsSummary> {
        self.handoff.as_ref().map(|handoff| HintsSummary {
            stats: handoff.manager.stats(),
            pending: handoff.manager.pending(),
        })
    }

    /// Whether this shard's node sees `peer` down.
    pub fn sees_down(&self, peer: u32) -> bool {
        self.peer_down.contains(peer)
    }

    /// The node's published cache hit rate as this shard last got it
    /// (`None` before the node published one).
    pub fn node_hit_rate(&self) -> Option<f64> {
        self.node_hit_rate
    }

    /// Row cache (hits, misses) since start, earlier lives included.
    fn cache_counts(&self) -> (u64, u64) {
        let (hits, misses) = self.carried.cache;
        self.row_cache.as_ref().map_or((hits, misses), |cache| {
            let stats = cache.stats();
            (hits + stats.hits, misses + stats.misses)
        })
    }

    /// Memory of the active, sealed and flushing memtables (what a JVM
    /// node holds on its heap for them).
    pub fn memtable_memory_bytes(&self) -> u64 {
        self.write.dirty_bytes()
    }

    /// Current figures.
    pub fn stats(&self) -> ShardStats {
        let (cache_hits, cache_misses) = self.cache_counts();
        let writes = self.write.totals();
        let compaction = self.compaction.counters();
        let coordinated = self.coordinator.counters();
        ShardStats {
            memtable_bytes: self.write.dirty_bytes(),
            dirty_bytes: self.write.dirty_bytes(),
            virtual_dirty_bytes: self.write.virtual_dirty_bytes(),
            sstable_count: self.sstables.len() as u64,
            sstable_bytes: self.sstables.iter().map(|s| s.data_bytes).sum(),
            flushes_completed: writes.flushes_completed,
            commitlog_segments: self.write.commitlog_segments(),
            writes_throttled: self.write.writes_throttled() as u64,
            writes_waiting_commitlog: self.write.writes_waiting_for_commitlog() as u64,
            writes_completed: writes.writes_completed,
            flushed_bytes_written: writes.flushed_bytes_written,
            reads_completed: self.reads.completed(),
            active_compactions: self.compaction.running() as u64,
            compactions_completed: compaction.completed,
            bytes_compacted: compaction.bytes_compacted,
            sstables_expired: compaction.expired_dropped,
            compaction_backlog: self.compaction_backlog(),
            compaction_shares: self.compaction.shares(),
            flush_shares: self.flush_shares,
            digest_mismatches: coordinated.digest_mismatches,
            read_repairs: coordinated.read_repairs,
            background_read_repairs: coordinated.background_read_repairs,
            speculative_retries: coordinated.speculative_retries,
            cache_hits,
            cache_misses,
            cache_bytes: self.row_cache.as_ref().map_or(0, RowCache::used_bytes),
            heat_balanced_reads: self.heat_balanced_reads,
        }
    }

    /// A client request arrives. If this shard is the key's only replica it
    /// runs it and answers; otherwise it coordinates: it sends the request
    /// to the replicas (running it itself if it is one) and answers once the
    /// consistency level is met.
    pub fn handle_client_request(&mut self, now: SimTime, request: ClientRequest) {
        debug_assert!(!self.is_down(), "a client request for a dead process");
        let key = match request.operation {
            Operation::Write { key, .. } | Operation::Read { key, .. } => key,
        };
        let rf = self.config.replication_factor;
        if rf == 1 && self.config.placement.owner(key) == self.config.address {
            let origin = Origin::Client(request.id);
            self.execute(
                now,
                Request {
                    origin,
                    operation: request.operation,
                },
            );
        } else {
            let task = self.new_task(TaskPurpose::Coordinate(request));
            self.actions.push_back(Action::RunCpu(CpuTask {
                id: task,
                group: SchedulingGroup::Statement,
                work: CpuWork::Coordinate,
            }));
        }
        self.input_done();
    }

    /// A message from another shard arrives: from another node, the RPC
    /// layer takes it off the connection; from this node, the cross-shard
    /// queue hands it over (a task on this shard's CPU either way), then its
    /// handler runs.
    pub fn handle_message(&mut self, _now: SimTime, from: ShardAddress, message: Message) {
        debug_assert!(!self.is_down(), "a message for a dead process");
        debug_assert_ne!(from, self.config.address, "a shard messages itself");
        let work = if from.node == self.config.address.node {
            CpuWork::CrossShardMessage
        } else {
            CpuWork::ReceiveMessage {
                bytes: message.wire_bytes(),
            }
        };
        // Streaming's verbs run in the streaming scheduling group.
        let group = if message.is_stream() {
            SchedulingGroup::Streaming
        } else {
            SchedulingGroup::Statement
        };
        let task = self.new_task(TaskPurpose::Receive { from, message });
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group,
            work,
        }));
        self.input_done();
    }

    /// Runs an operation on this shard's data, as its replica.
    fn execute(&mut self, now: SimTime, request: Request) {
        let _ = now;
        match request.operation {
            Operation::Write { .. } => self.admit_write(now, request),
            Operation::Read { key, .. } => {
                let cached = self.row_cache_lookup(key);
                let ownership = self.config.key_ownership_fraction;
                let passes = |sstable: &SSTable| read::bloom_filter_passes(sstable, key, ownership);
                let (sstables, bloom) = if self.sstables.len() <= 64 {
                    let mask = self
                        .sstables
                        .iter()
                        .enumerate()
                        .filter(|(_, sstable)| passes(sstable))
                        .fold(0u64, |mask, (position, _)| mask | 1 << position);
                    let bloom = BloomPasses {
                        epoch: self.sstables_epoch,
                        mask,
                    };
                    (mask.count_ones() as usize, Some(bloom))
                } else {
                    (self.sstables.iter().filter(|s| passes(s)).count(), None)
                };
                // A row-cache hit reads no SSTable.
                let sstables = if cached { 0 } else { sstables };
                let task = self.new_task(TaskPurpose::Read(request, cached, bloom));
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Query,
                    work: CpuWork::ReadRequest {
                        sstables: sstables as u32,
                    },
                }));
            }
        }
        self.input_checked();
    }

    /// A CPU task finished.
    pub fn handle_cpu_done(&mut self, now: SimTime, task: TaskId) {
        let Some(slot) = self.slot_of_this_life(task.0) else {
            return; // a task of the crashed process the driver still reports
        };
        let purpose = self.tasks.try_remove(slot).unwrap_or_else(|| {
            panic!("CPU completion for unknown task {task:?}");
        });
        match purpose {
            TaskPurpose::Write(request) => self.write_statement_done(now, request),
            TaskPurpose::Read(request, cached, bloom) => {
                self.execute_read(now, request, cached, bloom)
            }
            TaskPurpose::Coordinate(request) => self.coordinate(now, request),
            TaskPurpose::CoordinateBatch(slot) => self.start_batch(now, slot),
            TaskPurpose::BatchlogWrite(entry) => self.log_batchlog(now, entry),
            TaskPurpose::HintWrite { node, hint } => self.hint_serialized(now, node, hint),
            TaskPurpose::HintSend { slot, hint } => self.send_hint(now, slot, hint),
            TaskPurpose::Receive { from, message } => self.receive(now, from, message),
            TaskPurpose::StreamFrozen { plan, bytes } => self.stream_frozen(now, plan, bytes),
            TaskPurpose::StreamApply {
                plan,
                rows,
                bytes,
                cells,
            } => self.stream_applied(now, plan, rows, bytes, cells),
            TaskPurpose::StreamSerialize {
                plan,
                rows,
                bytes,
                cells,
            } => self.stream_serialized(now, plan, rows, bytes, cells),
            TaskPurpose::StreamFlushSerialize { bytes } => {
                self.streamed_flush_serialized(now, bytes)
            }
            TaskPurpose::IndexParsed {
                read,
                row_bytes,
                version,
                generation,
            } => {
                // The index is the whole partition's; the data read is the
                // slice (a wide partition's promoted index finds it).
                let row_bytes = self.sliced(read, row_bytes);
                let bytes = read::data_read_bytes(row_bytes, self.config.compression_chunk_bytes);
                if let Some(read_bytes) = self.page_cache_miss(read, generation, bytes) {
                    self.submit_io(
                        IoKind::Read,
                        read_bytes,
                        IoClass::Query,
                        IoPurpose::ReadData {
                            read,
                            row_bytes,
                            version,
                        },
                    );
                } else {
                    self.parse_data(read, row_bytes, version, false);
                }
            }
            TaskPurpose::DataParsed { read, version } => self.read_data_done(now, read, version),
            TaskPurpose::DigestForReplica { origin, result } => {
                self.send_read_result(now, origin, result);
            }
            TaskPurpose::DigestForCoordinator {
                id,
                from,
                result,
                digest,
            } => {
                let next = self
                    .coordinator
                    .read_answered(now, id, from, Some(result), digest);
                self.act(now, id, next);
            }
            TaskPurpose::Compaction(task) => self.compaction_task_done(now, task),
            TaskPurpose::ReplayApply { from, to } => self.replay_apply(now, from, to),
            TaskPurpose::FlushSerialize { bytes } => self.flush_serialized(now, bytes),
        }
        self.coordinator.prune();
        self.input_done();
    }

    /// An I/O finished.
    pub fn handle_io_done(&mut self, now: SimTime, io: IoId) {
        let Some(slot) = self.slot_of_this_life(io.0) else {
            return; // an I/O of the crashed process, completed on the device
        };
        let purpose = self.ios.try_remove(slot).unwrap_or_else(|| {
            panic!("I/O completion for unknown I/O {io:?}");
        });
        match purpose {
            IoPurpose::CommitlogWrite { write } => self.commitlog_written(now, write),
            IoPurpose::FlushWrite { bytes } => self.flush_written(now, bytes),
            lookup @ IoPurpose::ReadIndex { .. } => self.parse_index(lookup, true),
            IoPurpose::Compaction(io) => self.compaction_io_done(now, io),
            IoPurpose::ReadData {
                read,
                row_bytes,
                version,
            } => self.parse_data(read, row_bytes, version, true),
            IoPurpose::HintWrite { node, segment } => self.hint_written(now, node, segment),
            IoPurpose::HintRead {
                node,
                segment,
                bytes,
            } => self.hint_read(now, node, segment, bytes),
            IoPurpose::ReplayRead { from, to } => self.replay_read(now, from, to),
            IoPurpose::StreamRead { plan, bytes } => self.stream_read_done(plan, bytes),
            IoPurpose::StreamFlushWrite { bytes } => self.streamed_flush_written(now, bytes),
            IoPurpose::StreamWrite { plan } => self.stream_written(now, plan),
        }
        self.input_done();
    }

    /// Timers due at or before `now` fire.
    pub fn handle_timeout(&mut self, now: SimTime) {
        let mut expired = std::mem::take(&mut self.expired);
        self.coordinator.expire(now, |what| expired.push(what));
        for what in expired.drain(..) {
            match what {
                Expired::Unanswered(request) if request.0 & handoff::HINT_REPLAY != 0 => {
                    self.hint_replayed(now, request, false)
                }
                Expired::Unanswered(request) => {
                    self.reply_client(now, request, ReplyStatus::Timeout)
                }
                Expired::Unacknowledged {
                    mutation,
                    nodes,
                    count,
                } => {
                    for &node in &nodes[..usize::from(count)] {
                        self.hint(now, node, mutation);
                    }
                }
            }
        }
        self.expired = expired;
        if self.hints_wake.is_some_and(|at| at <= now) {
            self.pump_hints(now);
        }
        while let Some((id, replica, digest)) = self.coordinator.next_speculation(now) {
            let (key, limit_bytes) = self.coordinator.read_key(id).expect("an open read");
            self.send_read(now, replica, id, key, limit_bytes, digest);
        }
        // Reads answered already will not speculate and closed operations
        // will not time out: their entries go, so the shard wakes only for
        // operations still waiting.
        self.coordinator.prune();
        while let Some(kind) = self.timers.take_expired(now) {
            match kind {
                TimerKind::CompactionController => {
                    let input = self.compaction_backlog();
                    self.adjust_controller(
                        now,
                        TimerKind::CompactionController,
                        SchedulingGroup::Compaction,
                        input,
                    );
                }
                TimerKind::FlushController => {
                    let input = controller::flush_input(
                        self.write.virtual_dirty_bytes(),
                        self.config.throttle_bytes(),
                    );
                    self.adjust_controller(
                        now,
                        TimerKind::FlushController,
                        SchedulingGroup::Memtable,
                        input,
                    );
                }
                TimerKind::CompactionThrottle => self.release_throttled_compaction_reads(now),
                TimerKind::BatchlogDeadline => self.batchlog_deadlines_passed(now),
                TimerKind::CommitlogSync => {
                    self.write.sync_commitlog();
                    self.submit_commitlog_writes();
                    self.timers.set(
                        TimerKind::CommitlogSync,
                        now + self.config.commitlog_sync_period,
                    );
                }
            }
        }
        self.input_done();
        // A driver may hand other inputs in while a timer is due (a reactor
        // takes a timer in at its next poll), but this one leaves none due.
        debug_assert!(
            self.poll_timeout().is_none_or(|due| due > now),
            "a due timer was not handled: {:?} <= {now}",
            self.poll_timeout()
        );
    }

    /// The next action for the driver, in the order they were produced.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Shard::handle_timeout`] should next be called.
    #[inline]
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.next_timeout
    }

    /// Ends an input: works out the next timeout and checks invariants.
    fn input_done(&mut self) {
        self.next_timeout = self.earliest_deadline();
        self.input_checked();
    }

    /// Counts an input and, every [`CHECK_EVERY_INPUTS`] of them, checks
    /// the mechanisms' invariants (debug builds).
    fn input_checked(&mut self) {
        if cfg!(debug_assertions) {
            self.unchecked_inputs += 1;
            if self.unchecked_inputs >= CHECK_EVERY_INPUTS {
                self.unchecked_inputs = 0;
                self.check_invariants();
            }
        }
    }

    /// The earliest of the timers, request deadlines and speculations, and
    /// the hint logs' next flush, retry or throttled send.
    fn earliest_deadline(&self) -> Option<SimTime> {
        earlier(
            earlier(
                self.timers.next_deadline(),
                self.coordinator.next_deadline(),
            ),
            self.hints_wake,
        )
    }

    /// Registers a CPU task's purpose; its id carries the incarnation.
    fn new_task(&mut self, purpose: TaskPurpose) -> TaskId {
        let slot = self.tasks.insert(purpose);
        TaskId(self.id_of(slot))
    }

    /// The id of slot `slot` of a task or I/O this life issues.
    fn id_of(&self, slot: usize) -> u64 {
        debug_assert!((slot as u64) <= SLOT_MASK, "slot {slot} overflows its id");
        slot as u64 | self.incarnation << INCARNATION_SHIFT
    }

    /// The slot of a task's or I/O's id if this life issued it; `None` for
    /// one of a crashed earlier life.
    fn slot_of_this_life(&self, id: u64) -> Option<usize> {
        let life = id >> INCARNATION_SHIFT;
        debug_assert!(life <= self.incarnation, "an id from a later life");
        (life == self.incarnation).then_some((id & SLOT_MASK) as usize)
    }

    fn submit_io(&mut self, kind: IoKind, bytes: u64, class: IoClass, purpose: IoPurpose) {
        debug_assert!(bytes > 0, "an empty I/O for {purpose:?}");
        let slot = self.ios.insert(purpose);
        let id = IoId(self.id_of(slot));
        self.actions.push_back(Action::SubmitIo(IoRequest {
            id,
            kind,
            bytes,
            class,
        }));
    }

    fn check_invariants(&self) {
        if cfg!(debug_assertions) {
            self.write.check_invariants();
            self.compaction.check_invariants();
            self.reads.check_invariants();
            self.streams.check_invariants();
            self.batches.check_invariants();
            self.coordinator.check_invariants();
            if let Some(handoff) = &self.handoff {
                handoff.manager.check_invariants();
            }
            if let Some(cache) = &self.row_cache {
                cache.check_invariants();
            }
            if let Some(cache) = &self.page_cache {
                cache.check_invariants();
            }
        }
    }
}

/// A shard's pseudo-random streams, one per purpose, seeded by the driver
/// ([`crate::config::ShardSeeds`]).
struct Draws {
    landing: Pcg64Mcg,
    batchlog: Pcg64Mcg,
    read_repair: Pcg64Mcg,
    heat: Pcg64Mcg,
    row_cache: Pcg64Mcg,
    page_cache: Pcg64Mcg,
}

impl Draws {
    fn new(seeds: &crate::config::ShardSeeds) -> Draws {
        Draws {
            landing: Pcg64Mcg::seed_from_u64(seeds.landing),
            batchlog: Pcg64Mcg::seed_from_u64(seeds.batchlog),
            read_repair: Pcg64Mcg::seed_from_u64(seeds.read_repair),
            heat: Pcg64Mcg::seed_from_u64(seeds.heat),
            row_cache: Pcg64Mcg::seed_from_u64(seeds.row_cache),
            page_cache: Pcg64Mcg::seed_from_u64(seeds.page_cache),
        }
    }
}

/// A uniform draw in [0, 1) from `stream` (53 bits).
fn unit(stream: &mut Pcg64Mcg) -> f64 {
    (stream.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A coordinator deadline `timeout` after `now`, rounded up to Seastar's
/// low-resolution clock (10 ms), so deadlines of operations opened close
/// together share one timer.
fn deadline(now: SimTime, timeout: SimDuration) -> SimTime {
    debug_assert!(timeout > SimDuration::ZERO, "a deadline with no timeout");
    const TICK: u64 = 10_000_000;
    let at = (now + timeout).as_nanos();
    let rounded = SimTime::from_nanos(at.div_ceil(TICK) * TICK);
    debug_assert!(
        rounded >= now + timeout && rounded < now + timeout + SimDuration::from_nanos(TICK)
    );
    rounded
}

/// Serialized size of a write mutation: key (8 bytes as c-s seeds it) plus
/// column values plus a small frame.
fn mutation_bytes(value_bytes: u32) -> u64 {
    8 + u64::from(value_bytes) + 24
}

mod batch;
#[cfg(test)]
mod batch_tests;
pub use batch::{BATCH_PART, MAX_BATCH_PARTS};
mod compaction;
mod coordination;
mod handoff;
#[cfg(test)]
mod handoff_tests;
pub use handoff::HINT_REPLAY;
mod pending_reads;
mod preload;
mod read_path;
mod restart;
mod stream_path;
pub use restart::CrashLoss;
pub use stream_path::streaming_flush_bytes;
#[cfg(test)]
mod restart_tests;
#[cfg(test)]
mod stream_tests;
mod write_path;
mod writes;

#[cfg(test)]
mod compaction_tests;
#[cfg(test)]
mod coordinator_tests;
#[cfg(test)]
mod tests;
