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

use std::collections::VecDeque;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use slab::Slab;
use units::{SimDuration, SimTime};

use crate::action::{
    Action, ClientReply, ClientRequest, CpuTask, CpuWork, IoClass, IoId, IoKind, IoRequest,
    Message, Operation, ReplyStatus, RequestId, SchedulingGroup, TaskId,
};
use crate::commitlog::{Append, BufferWrite, Commitlog, SyncMode, ENTRY_OVERHEAD_BYTES};
use crate::compaction::job::{ChunkRead, CompactionJob};
use crate::compaction::{lcs, stcs, CompactionStrategy, LcsState, RateLimiter, TableBacklog};
use crate::config::ShardConfig;
use crate::controller::{self, BacklogController};
use crate::coordinator::{
    digest_of, Coordinator, DeadlineKind, Next, ReadResult, RowVersion, MAX_REPLICAS,
};
use crate::flush::{FlushJob, FlushStep};
use crate::heat::{self, HeardRates};
use crate::memtable::Memtable;
use crate::messaging::RELAYED;
use crate::page_cache::{self, PageCache};
use crate::placement::{key_token, ShardAddress};
use crate::read;
use crate::row_cache::{self, RowCache};
use crate::sstable::{SSTable, KEY_SHARE_ONE};
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
#[derive(Clone, Copy, Debug)]
enum TaskPurpose {
    Write(Request),
    /// A read, whether the row cache holds its row, and the SSTables whose
    /// bloom filters passed when it was planned.
    Read(Request, bool, Option<BloomPasses>),
    /// Coordinate a client request: send it to its replicas.
    Coordinate(ClientRequest),
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
    /// A message from a peer, taken off the connection.
    Receive {
        from: ShardAddress,
        message: Message,
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
    CompactionMerge {
        job: u32,
        input_bytes: u64,
        output_bytes: u64,
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
    /// A chunk of compaction input.
    CompactionRead {
        job: u32,
        input_bytes: u64,
        output_bytes: u64,
    },
    /// A chunk of compaction output.
    CompactionWrite {
        job: u32,
        output_bytes: u64,
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

/// A read waiting for its SSTable I/O.
#[derive(Clone, Copy, Debug)]
struct PendingRead {
    request: Request,
    ios_outstanding: u32,
    /// The newest version found so far.
    found: ReadResult,
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
    /// The compaction controller's input: backlog bytes / shard memory.
    pub compaction_backlog: f64,
    /// CPU shares last given to the compaction group (0 without a controller).
    pub compaction_shares: f64,
    /// CPU shares last given to the memtable-flush group (0 without a controller).
    pub flush_shares: f64,
    /// Coordinated reads whose digests disagreed (blocking read repair).
    pub digest_mismatches: u64,
    /// Rows written back to replicas by blocking read repair.
    pub read_repairs: u64,
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
    /// ([`stcs::window_sizes`], [`stcs::forward`]): the flushes of that
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
    active: Memtable,
    /// Sealed memtables waiting for the flush permit, oldest first.
    sealed: VecDeque<Memtable>,
    flushing: Option<FlushJob>,
    sstables: Vec<SSTable>,
    /// Changes whenever `sstables` does ([`BloomPasses`]).
    sstables_epoch: u64,
    commitlog: Commitlog,
    tasks: Slab<TaskPurpose>,
    ios: Slab<IoPurpose>,
    /// Requests this shard took off a connection for a key another shard
    /// of the node owns and passed to it (`messaging`): who asked and under
    /// which id, by the relay id (`RELAYED` | slot) the owner answers to.
    relays: Slab<(ShardAddress, u64)>,
    reads: Slab<PendingRead>,
    /// A read's SSTable lookups while it is being sent to the disk, kept
    /// between reads so a read allocates nothing.
    lookups: Vec<IoPurpose>,
    /// Volume mode: the keys the shard's writes and preload gave it, which
    /// decide what its reads return (replicas with the same writes agree).
    population: read::Population,
    compactions: Slab<CompactionJob>,
    /// The table's backlog tracker (its strategy's).
    backlog: TableBacklog,
    /// Leveled compaction's memory between picks.
    lcs_state: LcsState,
    /// `compaction_throughput_mb_per_sec`'s token bucket, if set.
    compaction_limiter: Option<RateLimiter>,
    /// Compaction reads waiting for the limiter, in grant order: (when
    /// granted, job, chunk).
    throttled_compaction_reads: VecDeque<(SimTime, u32, ChunkRead)>,
    compactions_completed: u64,
    bytes_compacted: u64,
    compaction_shares: f64,
    flush_shares: f64,
    throttled: VecDeque<Request>,
    /// Since when writes have been waiting, if they are.
    throttled_since: Option<SimTime>,
    /// Time writes waited, over the closed waiting periods.
    throttled_total: SimDuration,
    waiting_for_commitlog: VecDeque<Request>,
    /// Batch mode: writes in the commitlog waiting for their buffer to be on
    /// disk before they apply, in log order: (end position, segment, write).
    awaiting_durability: VecDeque<(u64, u64, Request)>,
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
    actions: VecDeque<Action>,
    timers: TimerTable,
    next_memtable_id: u64,
    next_sstable_generation: u64,
    flushes_completed: u64,
    writes_completed: u64,
    flushed_bytes_written: u64,
    reads_completed: u64,
    /// Memory of sealed (waiting) memtables.
    sealed_memory_bytes: u64,
}

impl Shard {
    /// A shard with no data, whose timers start at `now`.
    pub fn new(config: ShardConfig, now: SimTime) -> Shard {
        let draws = Draws::new(&config.seeds);
        config
            .validate()
            .unwrap_or_else(|reason| panic!("invalid shard configuration: {reason}"));
        let commitlog = Commitlog::new(
            config.commitlog_sync,
            config.commitlog_buffer_bytes,
            config.commitlog_segment_bytes,
            config.commitlog_max_active_writes,
            config.commitlog_total_space_bytes,
        );
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
        let active = new_memtable(0, config.data_mode);
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
        let backlog = TableBacklog::new(&config.compaction);
        let compaction_limiter = config
            .compaction_throughput_bytes_per_sec
            .map(|rate| RateLimiter::new(rate, now));
        let mut shard = Shard {
            config,
            active,
            sealed: VecDeque::new(),
            flushing: None,
            sstables: Vec::new(),
            sstables_epoch: 0,
            commitlog,
            tasks: Slab::new(),
            relays: Slab::new(),
            ios: Slab::new(),
            reads: Slab::new(),
            lookups: Vec::new(),
            population: read::Population::default(),
            coordinator: Coordinator::default(),
            next_timeout: None,
            row_cache,
            page_cache: None,
            draws,
            cache_lookups: (0, 0),
            node_hit_rate: None,
            heat_balanced_reads: 0,
            heard_rates: HeardRates::default(),
            compactions: Slab::new(),
            backlog,
            lcs_state: LcsState::new(),
            compaction_limiter,
            throttled_compaction_reads: VecDeque::new(),
            compactions_completed: 0,
            bytes_compacted: 0,
            compaction_shares: 0.0,
            flush_shares: 0.0,
            throttled: VecDeque::new(),
            throttled_since: None,
            throttled_total: SimDuration::ZERO,
            waiting_for_commitlog: VecDeque::new(),
            awaiting_durability: VecDeque::new(),
            actions,
            timers,
            next_memtable_id: 1,
            next_sstable_generation: 1,
            flushes_completed: 0,
            writes_completed: 0,
            flushed_bytes_written: 0,
            reads_completed: 0,
            sealed_memory_bytes: 0,
        };
        shard.next_timeout = shard.earliest_deadline();
        shard
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

    /// Puts data on disk before the run starts (volume mode's `[data]`):
    /// SSTables of the given sizes and row counts over keys
    /// `first_key..=last_key`, as compaction left them. Only on an empty
    /// shard, before any request.
    pub fn preload(&mut self, sstables: &[(u64, u64)], first_key: u64, last_key: u64) {
        let rows_held = sstables.iter().map(|(_, rows)| rows).sum();
        self.preload_sstables(sstables, rows_held, (first_key, last_key));
    }

    /// [`Shard::preload`] of SSTables standing for `rows_held` rows (their
    /// own row counts may sum to a few fewer, each rounded down from its
    /// bytes).
    fn preload_sstables(
        &mut self,
        sstables: &[(u64, u64)],
        rows_held: u64,
        (first_key, last_key): (u64, u64),
    ) {
        self.assert_empty_for_preload();
        let sstables: Vec<(u64, u64)> = sstables
            .iter()
            .copied()
            .filter(|&(bytes, rows)| bytes > 0 && rows > 0)
            .collect();
        let parts: Vec<u64> = sstables.iter().map(|&(_, rows)| rows).collect();
        let slices = self.key_share_slices(&parts, rows_held, (first_key, last_key));
        for (&(data_bytes, rows), &key_share) in sstables.iter().zip(&slices) {
            self.push_preloaded(SSTable {
                generation: 0,
                data_bytes,
                rows,
                first_key,
                last_key,
                created_at: SimTime::ZERO,
                key_share: Some(key_share),
                cells: None,
                level: 0,
                token_range: None,
                segments: None,
            });
        }
        let share_end = slices.last().map_or(0, |&(_, end)| end);
        self.record_preload(&sstables, first_key, last_key, share_end);
    }

    /// Each key is in exactly one preloaded part (an SSTable, or a level):
    /// consecutive slices of the key-share space, each as wide as its
    /// part's share of the `rows_held` rows, together as wide as those rows'
    /// share of the keys this shard owns in `first_key..=last_key`. A
    /// preload of all of them ends at `KEY_SHARE_ONE` exactly: rounding the
    /// rows to whole numbers must not leave a sliver of owned keys that no
    /// part holds (a read of one would find nothing).
    fn key_share_slices(
        &self,
        part_rows: &[u64],
        rows_held: u64,
        (first_key, last_key): (u64, u64),
    ) -> Vec<(u64, u64)> {
        let owned_keys = ((last_key - first_key) as f64 + 1.0) * self.config.key_ownership_fraction;
        let whole = owned_keys.round().max(1.0);
        let end = if rows_held as f64 >= whole {
            KEY_SHARE_ONE
        } else {
            (rows_held as f64 / whole * KEY_SHARE_ONE as f64) as u64
        };
        let total: u64 = part_rows.iter().sum();
        let mut cumulative = 0u64;
        let mut start = 0u64;
        part_rows
            .iter()
            .map(|&rows| {
                cumulative += rows;
                let slice_end =
                    (u128::from(end) * u128::from(cumulative) / u128::from(total.max(1))) as u64;
                let slice = (start, slice_end);
                start = slice_end;
                slice
            })
            .collect()
    }

    /// Puts `rows` partitions of `row_bytes` each over keys
    /// `first_key..=last_key` on disk before the run starts, laid out as the
    /// table's strategy leaves them once caught up: size-tiered, one
    /// SSTable per base-`min_threshold` digit of the flushes (base 2 with
    /// Scylla 2.2's pair fallback; [`stcs::settled_sizes`], with this
    /// shard's flush size as the smallest tier); leveled, the levels of
    /// [`lcs::settled_levels`], each cut into `sstable_size_in_mb` SSTables
    /// over consecutive token ranges tiling the ring. Each key is in exactly
    /// one SSTable: slices of the key hash space (`key_share`), one per
    /// size-tiered SSTable, one per level (shared by the level's SSTables,
    /// which split it by token).
    ///
    /// [`PreloadState::MidCycle`] starts the shard part-way through the
    /// cycle its writes drive (flush, then compaction when a tier fills):
    /// `tiers` is the position in the cycle of the two lowest size-tiered
    /// tiers (base^2 flushes; [`stcs::steady_sizes`]; leveled L0 starts
    /// empty) and `memtable` the active memtable's fill, with its
    /// commitlog entries on disk. Shards at different positions flush and
    /// compact at their own times, as in a cluster long into a write load,
    /// not all at once. [`PreloadState::Window`] starts it at a point of a
    /// measured window that began compacted ([`stcs::window_sizes`]).
    /// Size-tiered, the smallest tier holds the SSTable bytes of the rows
    /// that fill a memtable to its flush point.
    pub fn preload_table(
        &mut self,
        rows: u64,
        row_bytes: u64,
        (first_key, last_key): (u64, u64),
        state: PreloadState,
    ) {
        assert!(row_bytes > 0, "preloaded rows need a size");
        let total_bytes = rows.saturating_mul(row_bytes);
        let memtable_fill = match self.config.compaction {
            CompactionStrategy::SizeTiered(options) => {
                let tier = self.smallest_tier_compacted(&options);
                let layout = self.size_tiered_layout(total_bytes, row_bytes, tier, state);
                let sstables: Vec<(u64, u64)> = layout
                    .sizes
                    .iter()
                    .map(|bytes| (*bytes, bytes / row_bytes))
                    .collect();
                self.preload_sstables(&sstables, rows, (first_key, last_key));
                self.resume_merges(&layout.merging, tier);
                layout.memtable_fill
            }
            CompactionStrategy::Leveled(options) => {
                self.assert_empty_for_preload();
                let levels = lcs::settled_levels(total_bytes, &options);
                let level_rows: Vec<u64> = levels
                    .iter()
                    .map(|&(_, level_bytes)| level_bytes / row_bytes)
                    .collect();
                let slices = self.key_share_slices(&level_rows, rows, (first_key, last_key));
                for (&(level, level_bytes), &share) in levels.iter().zip(&slices) {
                    let count = level_bytes.div_ceil(options.sstable_size_bytes);
                    let token_at = |bytes: u64| {
                        (u128::from(KEY_SHARE_ONE) * u128::from(bytes) / u128::from(level_bytes))
                            as u64
                    };
                    for i in 0..count {
                        let from = i * options.sstable_size_bytes;
                        let to = (from + options.sstable_size_bytes).min(level_bytes);
                        self.push_preloaded(SSTable {
                            generation: 0,
                            data_bytes: to - from,
                            rows: (to - from) / row_bytes,
                            first_key,
                            last_key,
                            created_at: SimTime::ZERO,
                            key_share: Some(share),
                            cells: None,
                            level,
                            token_range: Some((token_at(from), token_at(to))),
                            segments: None,
                        });
                    }
                }
                let share_end = slices.last().map_or(0, |&(_, end)| end);
                let rows_total = total_bytes / row_bytes;
                self.record_preload(&[(total_bytes, rows_total)], first_key, last_key, share_end);
                // L0 goes to L1 once it holds an SSTable's worth (160 MiB),
                // so with flushes at least that big L0 is empty between
                // flushes: only the memtable is part-way.
                match state {
                    PreloadState::Compacted => 0.0,
                    PreloadState::MidCycle { memtable, .. }
                    | PreloadState::Window { memtable, .. } => memtable,
                }
            }
        };
        assert!(
            (0.0..1.0).contains(&memtable_fill),
            "memtable fill {memtable_fill} is outside [0, 1)"
        );
        if memtable_fill > 0.0 {
            self.preload_memtable(memtable_fill, row_bytes, (first_key, last_key));
        }
    }

    /// The SSTables, merges under way and memtable fill a size-tiered
    /// preload in `state` starts with, tiers of `base` SSTables above this
    /// shard's flush size: compacted, [`stcs::settled_sizes`]; mid-cycle,
    /// [`stcs::steady_sizes`] with the merges [`MergePhases`] places
    /// ([`stcs::add_merge_inputs`]); in a window, [`stcs::window_sizes`]
    /// (compacted where the table is too small for it).
    fn size_tiered_layout(
        &self,
        total_bytes: u64,
        row_bytes: u64,
        base: usize,
        state: PreloadState,
    ) -> stcs::TierLayout {
        // A flush writes the SSTable bytes of the rows that filled the
        // memtable to its flush point.
        let flush_rows =
            (self.config.flush_soft_limit_bytes() / self.row_memory_bytes(row_bytes)).max(1);
        let flush_bytes = flush_rows.saturating_mul(row_bytes);
        let settled = |memtable_fill| stcs::TierLayout {
            sizes: stcs::settled_sizes(total_bytes, flush_bytes, base),
            merging: Vec::new(),
            memtable_fill,
        };
        match state {
            PreloadState::Compacted => settled(0.0),
            PreloadState::MidCycle {
                tiers,
                memtable,
                merges,
            } => {
                assert!(
                    (0.0..1.0).contains(&tiers)
                        && (0.0..=1.0).contains(&merges.duty)
                        && merges.phases.iter().all(|phase| (0.0..1.0).contains(phase)),
                    "cycle phases {tiers}, {merges:?} are outside [0, 1)"
                );
                let cycle = (base * base) as u64;
                let flushes = ((tiers * cycle as f64) as u64).min(cycle - 1);
                let mut sizes = stcs::steady_sizes(total_bytes, flush_bytes, base, flushes);
                // Tiers part-way through a merge hold its inputs.
                let mut merging = Vec::new();
                let mut tier_bytes = flush_bytes.saturating_mul(base as u64);
                for &phase in &merges.phases {
                    tier_bytes = tier_bytes.saturating_mul(base as u64);
                    if phase < merges.duty && stcs::add_merge_inputs(&mut sizes, tier_bytes, base) {
                        merging.push((tier_bytes, phase / merges.duty));
                    }
                }
                stcs::TierLayout {
                    sizes,
                    merging,
                    memtable_fill: memtable,
                }
            }
            PreloadState::Window {
                tiers,
                memtable,
                elapsed_s,
                write_bytes_per_s,
                merge_bytes_per_s,
            } => {
                let cycle = stcs::WriteCycle {
                    flush_bytes,
                    base,
                    write_bytes_per_s,
                    merge_bytes_per_s,
                };
                stcs::window_sizes(total_bytes, &cycle, tiers, memtable, elapsed_s)
                    .unwrap_or_else(|| settled(memtable))
            }
        }
    }

    /// Starts the merges a mid-cycle preload left part-way: per entry,
    /// `base` SSTables of `tier_bytes`, `progress` of the way through. The
    /// compaction manager's rules hold as for any job (Scylla: one job per
    /// weight; Cassandra: `concurrent_compactors`); a merge they hold back
    /// keeps its inputs and starts when the strategy next picks them.
    fn resume_merges(&mut self, merging: &[(u64, f64)], base: usize) {
        for &(tier_bytes, progress) in merging {
            let compacting = self.compacting_generations();
            let inputs: Vec<SSTable> = self
                .sstables
                .iter()
                .filter(|sstable| {
                    sstable.data_bytes == tier_bytes && !compacting.contains(&sstable.generation)
                })
                .take(base)
                .cloned()
                .collect();
            assert_eq!(inputs.len(), base, "a merging tier holds its inputs");
            let weight = stcs::job_weight(inputs.iter().map(|sstable| sstable.data_bytes).sum());
            let held_back = match self.config.concurrent_compactors {
                Some(_) => self.at_compactor_limit(),
                None => self.busy_weights().contains(&weight),
            };
            if held_back {
                continue;
            }
            let mut job = self.new_compaction_job(inputs, weight);
            job.resume_at(progress);
            self.launch_compaction(SimTime::ZERO, job);
        }
    }

    /// The fewest similar SSTables size-tiered compaction merges once it is
    /// idle: `min_threshold`, or 2 with Scylla 2.2's fallback to pairs
    /// (`compaction_enforce_min_threshold: false`), which leaves at most one
    /// SSTable per tier.
    fn smallest_tier_compacted(&self, options: &stcs::StcsOptions) -> usize {
        if self.config.compaction_enforce_min_threshold {
            options.min_threshold
        } else {
            2
        }
    }

    /// Memtable memory a preloaded row of `row_bytes` SSTable bytes takes:
    /// its key and value with the memtable's overhead instead of the
    /// SSTable's.
    fn row_memory_bytes(&self, row_bytes: u64) -> u64 {
        let value_bytes = row_bytes.saturating_sub(8 + self.config.sstable_row_overhead_bytes);
        (8 + value_bytes + self.config.memtable_row_overhead_bytes).max(1)
    }

    /// Fills the active memtable to `fill` of the flush threshold with rows
    /// of the preloaded size over the table's keys (overwrites, as a write
    /// load long under way brings), their commitlog entries on disk.
    fn preload_memtable(&mut self, fill: f64, row_bytes: u64, keys: (u64, u64)) {
        debug_assert!(!self.config.data_mode, "volume mode preloads only");
        let overhead = self.config.sstable_row_overhead_bytes;
        let value_bytes = row_bytes.saturating_sub(8 + overhead);
        let row_memory_bytes = self.row_memory_bytes(row_bytes);
        let memory_bytes = (fill * self.config.flush_soft_limit_bytes() as f64) as u64;
        let rows = memory_bytes / row_memory_bytes;
        if rows == 0 {
            return;
        }
        let entry_bytes = mutation_bytes(value_bytes.min(u64::from(u32::MAX)) as u32)
            + crate::commitlog::ENTRY_OVERHEAD_BYTES;
        let segment = self.commitlog.current_segment();
        self.commitlog.preload(rows * entry_bytes);
        self.active.preload(
            rows,
            row_memory_bytes,
            8 + value_bytes + overhead,
            keys,
            segment,
        );
        self.resize_row_cache();
        debug_assert!(
            self.virtual_dirty_bytes() < self.config.flush_soft_limit_bytes(),
            "a preloaded memtable stays below the flush threshold"
        );
    }

    /// Volume mode: the preload's keys (those whose key-share point is
    /// below `share_end`) and row size, for what reads return.
    fn record_preload(
        &mut self,
        sstables: &[(u64, u64)],
        first_key: u64,
        last_key: u64,
        share_end: u64,
    ) {
        let bytes: u64 = sstables.iter().map(|(bytes, _)| bytes).sum();
        let rows: u64 = sstables.iter().map(|(_, rows)| rows).sum();
        if self.config.data_mode || rows == 0 {
            return;
        }
        let value_bytes =
            read::mean_value_bytes(bytes, rows, self.config.sstable_row_overhead_bytes);
        self.population
            .record_preload(first_key, last_key, share_end, value_bytes);
    }

    fn assert_empty_for_preload(&self) {
        assert!(
            self.sstables.is_empty() && self.active.is_empty() && self.flushing.is_none(),
            "preloading a shard that already holds data"
        );
    }

    /// Adds a preloaded SSTable, giving it the next generation.
    fn push_preloaded(&mut self, mut sstable: SSTable) {
        if sstable.data_bytes == 0 || sstable.rows == 0 {
            return;
        }
        sstable.generation = self.next_sstable_generation;
        self.next_sstable_generation += 1;
        self.backlog.add_sstable(&sstable);
        self.sstables.push(sstable);
        self.sstables_epoch += 1;
    }

    /// Row cache lookups since the last call: (hits, lookups). The node
    /// level sums its shards' into the node's published hit rate
    /// ([`heat::HitRateTracker`]).
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
            flushed_bytes_written: self.flushed_bytes_written,
            reads_completed: self.reads_completed,
            active_compactions: self.compactions.len() as u64,
            compactions_completed: self.compactions_completed,
            bytes_compacted: self.bytes_compacted,
            compaction_backlog: self.compaction_backlog(),
            compaction_shares: self.compaction_shares,
            flush_shares: self.flush_shares,
            digest_mismatches: self.coordinator.digest_mismatches,
            read_repairs: self.coordinator.read_repairs,
            speculative_retries: self.coordinator.speculative_retries,
            cache_hits: self
                .row_cache
                .as_ref()
                .map_or(0, |cache| cache.stats().hits),
            cache_misses: self
                .row_cache
                .as_ref()
                .map_or(0, |cache| cache.stats().misses),
            cache_bytes: self.row_cache.as_ref().map_or(0, RowCache::used_bytes),
            heat_balanced_reads: self.heat_balanced_reads,
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

    /// A client request arrives. If this shard is the key's only replica it
    /// runs it and answers; otherwise it coordinates: it sends the request
    /// to the replicas (running it itself if it is one) and answers once the
    /// consistency level is met.
    pub fn handle_client_request(&mut self, now: SimTime, request: ClientRequest) {
        let key = match request.operation {
            Operation::Write { key, .. } | Operation::Read { key } => key,
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
            let task = TaskId(self.tasks.insert(TaskPurpose::Coordinate(request)) as u64);
            self.actions.push_back(Action::RunCpu(CpuTask {
                id: task,
                group: SchedulingGroup::Statement,
                work: CpuWork::Coordinate,
            }));
        }
        self.input_done(now);
    }

    /// A message from another shard arrives: from another node, the RPC
    /// layer takes it off the connection; from this node, the cross-shard
    /// queue hands it over (a task on this shard's CPU either way), then its
    /// handler runs.
    pub fn handle_message(&mut self, now: SimTime, from: ShardAddress, message: Message) {
        let task = TaskId(self.tasks.insert(TaskPurpose::Receive { from, message }) as u64);
        let work = if from.node == self.config.address.node {
            CpuWork::CrossShardMessage
        } else {
            CpuWork::ReceiveMessage {
                bytes: message.wire_bytes(),
            }
        };
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Statement,
            work,
        }));
        self.input_done(now);
    }

    /// Sends `message` to shard `to`: on this node straight to it (a
    /// cross-shard hop), to another node on a connection, landing on the
    /// shard [`crate::messaging`] draws there (a read's answer is the RPC's
    /// response and goes back on the asking shard's own connection).
    fn send(&mut self, to: ShardAddress, message: Message) {
        let to = if to.node == self.config.address.node
            || matches!(message, Message::ReadResponse { .. })
            || !self.config.landing.spreads()
        {
            to
        } else {
            self.config.landing.shard(to, self.draws.landing.next_u64())
        };
        self.actions.push_back(Action::Send { to, message });
    }

    /// This node's replica shard of `key`.
    fn local_owner(&self, key: u64) -> ShardAddress {
        ShardAddress {
            node: self.config.address.node,
            shard: self.config.placement.shard_of(key_token(key)),
        }
    }

    /// A request for `key` that landed here from another node while
    /// another shard of this node owns the key: passes it to the owner
    /// under a relay id; `true` if it did.
    fn relay_request(&mut self, from: ShardAddress, message: Message) -> bool {
        let (id, key) = match message {
            Message::WriteRequest { id, key, .. } | Message::ReadRequest { id, key, .. } => {
                (id, key)
            }
            _ => return false,
        };
        let owner = self.local_owner(key);
        if owner == self.config.address {
            return false;
        }
        debug_assert_ne!(from.node, self.config.address.node, "relayed twice");
        let relay = RELAYED | self.relays.insert((from, id)) as u64;
        self.send(owner, message.with_id(relay));
        true
    }

    /// An owner's answer to a request this shard relayed: on to whoever
    /// asked, under their id.
    fn relay_answer(&mut self, relay: u64, message: Message) {
        let (asker, id) = self
            .relays
            .try_remove((relay & !RELAYED) as usize)
            .expect("an answer to a relayed request this shard holds");
        let message = match message.with_id(id) {
            Message::WriteResponse { .. } => Message::WriteResponse {
                id,
                shard: asker.shard,
            },
            answer @ Message::ReadResponse { .. } => answer,
            _ => unreachable!("only answers are relayed back"),
        };
        self.send(asker, message);
    }

    /// A received message's handler.
    fn receive(&mut self, now: SimTime, from: ShardAddress, message: Message) {
        if self.relay_request(from, message) {
            return;
        }
        match message {
            Message::WriteRequest {
                id,
                key,
                value_bytes,
                timestamp,
            } => {
                let origin = Origin::Peer {
                    from,
                    id,
                    digest: false,
                };
                self.execute(
                    now,
                    Request {
                        origin,
                        operation: Operation::Write {
                            key,
                            value_bytes,
                            timestamp,
                        },
                    },
                );
            }
            Message::ReadRequest { id, key, digest } => {
                let origin = Origin::Peer { from, id, digest };
                self.execute(
                    now,
                    Request {
                        origin,
                        operation: Operation::Read { key },
                    },
                );
            }
            Message::WriteResponse { id, .. } | Message::ReadResponse { id, .. }
                if id & RELAYED != 0 =>
            {
                self.relay_answer(id, message)
            }
            Message::WriteResponse { id, shard } if shard != self.config.address.shard => {
                // Landed on a connection's shard of the coordinator's node.
                let coordinator = ShardAddress {
                    node: self.config.address.node,
                    shard,
                };
                self.send(coordinator, Message::WriteResponse { id, shard });
            }
            Message::WriteResponse { id, .. } => {
                let next = self.coordinator.write_acked(now, id);
                self.act(now, id, next);
            }
            Message::ReadResponse {
                id,
                data,
                digest,
                cache_hit_rate,
            } => {
                if cache_hit_rate != u16::MAX {
                    self.heard_rates
                        .heard(from.node, f64::from(cache_hit_rate) / 10_000.0, now);
                }
                self.read_response(now, id, from, data, digest)
            }
        }
    }

    /// A replica's read answer reaches the coordinator: a data answer that
    /// is compared with digests is hashed first.
    fn read_response(
        &mut self,
        now: SimTime,
        id: u64,
        from: ShardAddress,
        data: Option<ReadResult>,
        digest: u64,
    ) {
        if let Some(result) = data {
            if self.config.replication_factor > 1 {
                let bytes = result.map_or(0, |version| version.value_bytes);
                let task = TaskId(self.tasks.insert(TaskPurpose::DigestForCoordinator {
                    id,
                    from,
                    result,
                    digest,
                }) as u64);
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Statement,
                    work: CpuWork::Digest { bytes },
                }));
                return;
            }
        }
        let next = self.coordinator.read_answered(now, id, from, data, digest);
        self.act(now, id, next);
    }

    /// Sends a coordinated request to its replicas.
    fn coordinate(&mut self, now: SimTime, request: ClientRequest) {
        let mut replicas = [self.config.address; MAX_REPLICAS];
        let key = match request.operation {
            Operation::Write { key, .. } | Operation::Read { key } => key,
        };
        let count = self.config.placement.replicas(key, &mut replicas);
        let replicas = &mut replicas[..count];
        let block_for = request
            .consistency
            .block_for(count as u32)
            .clamp(1, count as u32);
        match request.operation {
            Operation::Write {
                key,
                value_bytes,
                timestamp,
            } => {
                let id = self
                    .coordinator
                    .open_write(request.id, count as u32, block_for);
                self.coordinator.arm_deadline(
                    DeadlineKind::Write,
                    deadline(now, self.config.write_timeout),
                    id,
                );
                for &replica in replicas.iter() {
                    self.send_write(now, replica, id, key, value_bytes, timestamp);
                }
            }
            Operation::Read { key } => {
                // The coordinator's own copy first (the snitch's closest).
                if let Some(position) = replicas.iter().position(|r| *r == self.config.address) {
                    replicas[..=position].rotate_right(1);
                }
                let all = unit(&mut self.draws.read_repair) < self.config.read_repair_chance;
                let contacted = if all { count } else { block_for as usize };
                if !all && self.config.heat_weighted_balancing {
                    self.order_by_heat(now, replicas, block_for as usize);
                }
                let spare = replicas.get(contacted).copied();
                let id = self.coordinator.open_read(
                    now,
                    request.id,
                    key,
                    &replicas[..contacted],
                    block_for,
                    spare,
                );
                self.coordinator.arm_deadline(
                    DeadlineKind::Read,
                    deadline(now, self.config.read_timeout),
                    id,
                );
                if spare.is_some() {
                    if let Some(delay) = self.coordinator.read_latency.delay(
                        now,
                        self.config.speculative_retry,
                        self.config.read_timeout,
                        self.config.speculation_resolution,
                    ) {
                        self.coordinator.arm_speculation(now + delay, id);
                    }
                }
                for (position, &replica) in replicas[..contacted].iter().enumerate() {
                    self.send_read(now, replica, id, key, position > 0);
                }
            }
        }
    }

    /// Heat-weighted balancing (`heat`): puts `k` replicas drawn by their
    /// cache temperature first (this shard's own first among them), when
    /// every replica's rate is known and they differ enough.
    fn order_by_heat(&mut self, now: SimTime, replicas: &mut [ShardAddress], k: usize) {
        let count = replicas.len();
        let mut nodes = [0u32; MAX_REPLICAS];
        for (node, replica) in nodes.iter_mut().zip(replicas.iter()) {
            *node = replica.node;
        }
        if let Some(own) = self.node_hit_rate {
            self.heard_rates.heard(self.config.address.node, own, now);
        }
        let mut rates = [0.0; MAX_REPLICAS];
        if !self
            .heard_rates
            .rates_of(&nodes[..count], now, &mut rates[..count])
            || heat::too_close_to_balance(&rates[..count])
        {
            return;
        }
        let mut shares = [0.0; MAX_REPLICAS];
        heat::desired_shares(&rates[..count], k, &mut shares[..count]);
        let mut picked = [0usize; MAX_REPLICAS];
        let draw = unit(&mut self.draws.heat);
        let picked_count = heat::systematic_sample(&shares[..count], k, draw, &mut picked);
        let original: [ShardAddress; MAX_REPLICAS] = {
            let mut copy = [self.config.address; MAX_REPLICAS];
            copy[..count].copy_from_slice(replicas);
            copy
        };
        let mut position = 0;
        // The picked ones first, this shard's own replica leading; then the
        // rest in their order (the first of them is the spare).
        let own = picked[..picked_count]
            .iter()
            .position(|&index| original[index] == self.config.address);
        if let Some(own) = own {
            picked[..=own].rotate_right(1);
        }
        for &index in &picked[..picked_count] {
            replicas[position] = original[index];
            position += 1;
        }
        for (index, replica) in original[..count].iter().enumerate() {
            if !picked[..picked_count].contains(&index) {
                replicas[position] = *replica;
                position += 1;
            }
        }
        self.heat_balanced_reads += 1;
    }

    fn send_write(
        &mut self,
        now: SimTime,
        replica: ShardAddress,
        id: u64,
        key: u64,
        value_bytes: u32,
        timestamp: u64,
    ) {
        if replica == self.config.address {
            let origin = Origin::Local { id, digest: false };
            let operation = Operation::Write {
                key,
                value_bytes,
                timestamp,
            };
            self.execute(now, Request { origin, operation });
        } else {
            let message = Message::WriteRequest {
                id,
                key,
                value_bytes,
                timestamp,
            };
            self.send(replica, message);
        }
    }

    fn send_read(&mut self, now: SimTime, replica: ShardAddress, id: u64, key: u64, digest: bool) {
        if replica == self.config.address {
            let origin = Origin::Local { id, digest };
            let operation = Operation::Read { key };
            self.execute(now, Request { origin, operation });
        } else {
            let message = Message::ReadRequest { id, key, digest };
            self.send(replica, message);
        }
    }

    /// Carries out what the coordinator decided for operation `id`.
    fn act(&mut self, now: SimTime, id: u64, next: Next) {
        match next {
            Next::Wait => {}
            Next::Written(client) => self.actions.push_back(Action::Reply(ClientReply {
                id: client,
                status: ReplyStatus::Written,
            })),
            Next::Read(client, result) => self.actions.push_back(Action::Reply(ClientReply {
                id: client,
                status: match result {
                    Some(version) => ReplyStatus::Found {
                        value_bytes: version.value_bytes,
                        timestamp: version.timestamp,
                    },
                    None => ReplyStatus::NotFound,
                },
            })),
            Next::FetchFullData {
                key,
                replicas,
                count,
            } => {
                for &replica in &replicas[..usize::from(count)] {
                    self.send_read(now, replica, id, key, false);
                }
            }
            Next::Repair {
                key,
                version,
                replicas,
                count,
            } => {
                for &replica in &replicas[..usize::from(count)] {
                    self.send_write(
                        now,
                        replica,
                        id,
                        key,
                        version.value_bytes,
                        version.timestamp,
                    );
                }
            }
        }
    }

    /// Answers whoever asked for a write: the client, or the coordinator.
    fn respond_written(&mut self, now: SimTime, origin: Origin) {
        match origin {
            Origin::Client(id) => self.actions.push_back(Action::Reply(ClientReply {
                id,
                status: ReplyStatus::Written,
            })),
            Origin::Peer { from, id, .. } => self.send(
                from,
                Message::WriteResponse {
                    id,
                    shard: from.shard,
                },
            ),
            Origin::Local { id, .. } => {
                let next = self.coordinator.write_acked(now, id);
                self.act(now, id, next);
            }
        }
    }

    /// Answers whoever asked for a read: the client, or the coordinator (a
    /// digest request's result is hashed first).
    fn respond_read(&mut self, now: SimTime, origin: Origin, result: ReadResult) {
        if origin.wants_digest() {
            let bytes = result.map_or(0, |version| version.value_bytes);
            let task = TaskId(
                self.tasks
                    .insert(TaskPurpose::DigestForReplica { origin, result })
                    as u64,
            );
            self.actions.push_back(Action::RunCpu(CpuTask {
                id: task,
                group: SchedulingGroup::Query,
                work: CpuWork::Digest { bytes },
            }));
            return;
        }
        self.send_read_result(now, origin, result);
    }

    fn send_read_result(&mut self, now: SimTime, origin: Origin, result: ReadResult) {
        let digest = digest_of(result);
        let data = (!origin.wants_digest()).then_some(result);
        match origin {
            Origin::Client(id) => self.actions.push_back(Action::Reply(ClientReply {
                id,
                status: match result {
                    Some(version) => ReplyStatus::Found {
                        value_bytes: version.value_bytes,
                        timestamp: version.timestamp,
                    },
                    None => ReplyStatus::NotFound,
                },
            })),
            Origin::Peer { from, id, .. } => {
                let cache_hit_rate = self
                    .node_hit_rate
                    .map_or(u16::MAX, |rate| (rate * 10_000.0).round() as u16);
                self.send(
                    from,
                    Message::ReadResponse {
                        id,
                        data,
                        digest,
                        cache_hit_rate,
                    },
                )
            }
            Origin::Local { id, .. } => {
                let from = self.config.address;
                self.read_response(now, id, from, data, digest);
            }
        }
    }

    /// Runs an operation on this shard's data, as its replica.
    fn execute(&mut self, now: SimTime, request: Request) {
        let _ = now;
        match request.operation {
            Operation::Write { .. } => {
                // Keep arrival order: once anything waits, newcomers wait behind it.
                if !self.throttled.is_empty() || self.over_dirty_limits() {
                    self.throttled_since.get_or_insert(now);
                    self.throttled.push_back(request);
                } else {
                    self.start_write(request);
                }
            }
            Operation::Read { key } => {
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
                let task =
                    TaskId(self.tasks.insert(TaskPurpose::Read(request, cached, bloom)) as u64);
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Query,
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
            TaskPurpose::Read(request, cached, bloom) => {
                self.execute_read(now, request, cached, bloom)
            }
            TaskPurpose::Coordinate(request) => self.coordinate(now, request),
            TaskPurpose::Receive { from, message } => self.receive(now, from, message),
            TaskPurpose::IndexParsed {
                read,
                row_bytes,
                version,
                generation,
            } => {
                let bytes = read::data_read_bytes(row_bytes, self.config.compression_chunk_bytes);
                if self.page_cache_hit(read, generation, bytes) {
                    self.parse_data(read, row_bytes, version);
                } else {
                    self.submit_io(
                        IoKind::Read,
                        bytes,
                        IoClass::Query,
                        IoPurpose::ReadData {
                            read,
                            row_bytes,
                            version,
                        },
                    );
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
            TaskPurpose::CompactionMerge {
                job,
                input_bytes,
                output_bytes,
            } => {
                self.bytes_compacted += input_bytes;
                if output_bytes > 0 {
                    let (total_bytes, rows) = self.compactions[job as usize].output_shape();
                    let disk_bytes =
                        self.config
                            .sstable_format
                            .write_bytes(output_bytes, total_bytes, rows);
                    self.submit_io(
                        IoKind::Write,
                        disk_bytes,
                        IoClass::Compaction,
                        IoPurpose::CompactionWrite { job, output_bytes },
                    );
                } else {
                    self.compaction_chunk_written(now, job, 0);
                }
            }
            TaskPurpose::FlushSerialize { bytes } => {
                let job = self
                    .flushing
                    .as_mut()
                    .expect("flush serialization without a flush");
                job.serialized(bytes);
                let memtable = job.memtable();
                let disk_bytes = self.config.sstable_format.write_bytes(
                    bytes,
                    memtable.sstable_bytes,
                    memtable.rows,
                );
                self.submit_io(
                    IoKind::Write,
                    disk_bytes,
                    IoClass::MemtableFlush,
                    IoPurpose::FlushWrite { bytes },
                );
                self.advance_flush(now);
            }
        }
        self.coordinator.prune();
        self.input_done(now);
    }

    /// An I/O finished.
    pub fn handle_io_done(&mut self, now: SimTime, io: IoId) {
        let purpose = self.ios.try_remove(io.0 as usize).unwrap_or_else(|| {
            panic!("I/O completion for unknown I/O {io:?}");
        });
        match purpose {
            IoPurpose::CommitlogWrite { write } => {
                self.commitlog.write_done(write);
                let durable = self.commitlog.durable_position();
                while self
                    .awaiting_durability
                    .front()
                    .is_some_and(|(end, _, _)| *end <= durable)
                {
                    let (_, segment, request) =
                        self.awaiting_durability.pop_front().expect("checked");
                    self.apply_write(now, segment, request);
                }
                self.submit_commitlog_writes();
                self.resume_commitlog_waiters(now);
            }
            IoPurpose::FlushWrite { bytes } => {
                self.flushing
                    .as_mut()
                    .expect("flush write without a flush")
                    .written(bytes);
                self.advance_flush(now);
                self.resume_throttled(now);
            }
            IoPurpose::ReadIndex {
                read,
                row_bytes,
                version,
                generation,
            } => {
                let task = TaskId(self.tasks.insert(TaskPurpose::IndexParsed {
                    read,
                    row_bytes,
                    version,
                    generation,
                }) as u64);
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Query,
                    work: CpuWork::IndexParse {
                        bytes: self.config.sstable_format.index_parsed_bytes(row_bytes),
                    },
                }));
            }
            IoPurpose::CompactionRead {
                job,
                input_bytes,
                output_bytes,
            } => {
                self.compactions[job as usize].chunk_read(input_bytes);
                let task = TaskId(self.tasks.insert(TaskPurpose::CompactionMerge {
                    job,
                    input_bytes,
                    output_bytes,
                }) as u64);
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Compaction,
                    work: CpuWork::CompactionMerge { bytes: input_bytes },
                }));
            }
            IoPurpose::CompactionWrite { job, output_bytes } => {
                self.compaction_chunk_written(now, job, output_bytes);
            }
            IoPurpose::ReadData {
                read,
                row_bytes,
                version,
            } => self.parse_data(read, row_bytes, version),
        }
        self.input_done(now);
    }

    /// One SSTable's row of read `read` is in memory (from disk or the page
    /// cache): decode it.
    fn parse_data(&mut self, read: u32, row_bytes: u64, version: ReadResult) {
        let task = TaskId(self.tasks.insert(TaskPurpose::DataParsed { read, version }) as u64);
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Query,
            work: CpuWork::DataParse {
                row_bytes,
                decompress_bytes: self.config.compression_chunk_bytes.unwrap_or(0),
            },
        }));
    }

    /// One SSTable's part of read `read` is decoded: answer once every part
    /// is.
    fn read_data_done(&mut self, now: SimTime, read: u32, version: ReadResult) {
        let pending = &mut self.reads[read as usize];
        pending.ios_outstanding -= 1;
        pending.found = pending.found.max(version);
        if pending.ios_outstanding == 0 {
            let pending = self.reads.remove(read as usize);
            self.reply_read(now, pending.request, pending.found);
        }
    }

    /// Builds the OS page cache on first use (the first lookup, or warming
    /// the caches): its volume model spreads the reads over the SSTable
    /// data the shard holds by then.
    fn ensure_page_cache(&mut self) {
        let Some(setup) = self.config.page_cache.as_ref() else {
            return;
        };
        if self.page_cache.is_none() {
            let data_bytes: u64 = self.sstables.iter().map(|s| s.data_bytes).sum();
            let key_rows = (setup.key_rows * self.config.key_ownership_fraction).max(1.0);
            self.page_cache = Some(match (&setup.popularity, self.config.data_mode) {
                (Some(curve), false) => {
                    PageCache::volume(setup.config, curve, key_rows, data_bytes.max(1))
                        .unwrap_or_else(|reason| panic!("invalid page cache: {reason}"))
                }
                _ => PageCache::data(setup.config),
            });
        }
    }

    /// Volume mode: fills the row cache and the page cache to their steady
    /// state for the data the shard holds now (`[data] cache = "warm"`: a
    /// run measured long after its caches filled). Call after the preload.
    /// Returns false if a cache could not be warmed (data mode).
    pub fn warm_caches(&mut self) -> bool {
        self.resize_row_cache();
        self.ensure_page_cache();
        let rows = self.row_cache.as_mut().is_none_or(RowCache::warm);
        let pages = self.page_cache.as_mut().is_none_or(PageCache::warm);
        rows && pages
    }

    /// Cassandra: whether the OS page cache holds the Data pages read
    /// `read` needs from SSTable `generation` (a miss brings them in).
    fn page_cache_hit(&mut self, read: u32, generation: u64, bytes: u64) -> bool {
        let Some(page_bytes) = self.config.page_cache.as_ref().map(|s| s.config.page_bytes) else {
            return false;
        };
        let Operation::Read { key } = self.reads[read as usize].request.operation else {
            unreachable!("a read's lookup");
        };
        self.ensure_page_cache();
        let draw = unit(&mut self.draws.page_cache);
        // Data mode names the page by SSTable and key (each row its own
        // page: neighbours sharing a page are left out).
        let page_bytes = page_bytes.max(1);
        let page = page_cache::page_id(
            generation & 0xFF_FFFF,
            (key & ((1 << 40) - 1)) * page_bytes,
            page_bytes,
        );
        let cache = self.page_cache.as_mut().expect("built above");
        let hit = cache.lookup(page, draw);
        if !hit {
            for _ in 0..bytes.div_ceil(page_bytes).max(1) {
                cache.populate(page);
            }
        }
        hit
    }

    /// Timers due at or before `now` fire.
    pub fn handle_timeout(&mut self, now: SimTime) {
        let actions = &mut self.actions;
        self.coordinator.expire(now, |client| {
            actions.push_back(Action::Reply(ClientReply {
                id: client,
                status: ReplyStatus::Timeout,
            }))
        });
        while let Some((id, replica, digest)) = self.coordinator.next_speculation(now) {
            let key = self.coordinator.read_key(id).expect("an open read");
            self.send_read(now, replica, id, key, digest);
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
                        self.virtual_dirty_bytes(),
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
        self.input_done(now);
    }

    // ----- outputs -----

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
    fn input_done(&mut self, now: SimTime) {
        self.next_timeout = self.earliest_deadline();
        self.check_invariants(now);
    }

    /// The earliest of the timers, request deadlines and speculations.
    fn earliest_deadline(&self) -> Option<SimTime> {
        earlier(
            self.timers.next_deadline(),
            self.coordinator.next_deadline(),
        )
    }

    // ----- the read path -----

    /// Looks the key up in the memtables and sends an index read to every
    /// SSTable whose bloom filter passes; replies at once if none does.
    fn execute_read(
        &mut self,
        now: SimTime,
        request: Request,
        cached: bool,
        bloom: Option<BloomPasses>,
    ) {
        let Operation::Read { key } = request.operation else {
            unreachable!("a read task carries a read");
        };
        let ownership = self.config.key_ownership_fraction;
        // Data mode: every memtable is consulted (an older memtable may
        // hold an older version, and the newest wins). Volume mode: what
        // the shard's writes gave it, the same on every replica that
        // applied them; its memtables and SSTables decide only the cost.
        let found = if self.config.data_mode {
            std::iter::once(&self.active)
                .chain(self.sealed.iter())
                .chain(self.flushing.as_ref().map(FlushJob::memtable))
                .filter_map(|memtable| read::memtable_version(memtable, key))
                .max()
        } else {
            let placement = &self.config.placement;
            let range = placement.range_of(crate::placement::key_token(key));
            let share = placement.range_fraction(range) / f64::from(placement.shards_per_node());
            self.population.version(key, range, share)
        };
        let read_slot = self.reads.insert(PendingRead {
            request,
            ios_outstanding: 0,
            found,
        }) as u32;
        let mut lookups = std::mem::take(&mut self.lookups);
        lookups.clear();
        // The filters as worked out when the read was planned, unless the
        // SSTables changed since.
        let planned = bloom
            .filter(|bloom| bloom.epoch == self.sstables_epoch)
            .map(|bloom| bloom.mask);
        lookups.extend(
            self.sstables
                .iter()
                .enumerate()
                .filter(|&(position, sstable)| match planned {
                    Some(mask) => mask >> position & 1 == 1,
                    None => read::bloom_filter_passes(sstable, key, ownership),
                })
                .map(|(_, sstable)| IoPurpose::ReadIndex {
                    read: read_slot,
                    row_bytes: sstable.data_bytes / sstable.rows.max(1),
                    version: read::sstable_version(sstable, key),
                    generation: sstable.generation,
                }),
        );
        if cached {
            // The cache holds the merged row, coherent with the memtables
            // and SSTables (Scylla updates cached rows as memtables flush):
            // the same answer, no I/O.
            let found = lookups
                .iter()
                .filter_map(|lookup| match lookup {
                    IoPurpose::ReadIndex { version, .. } => *version,
                    _ => None,
                })
                .max()
                .max(self.reads[read_slot as usize].found);
            let pending = self.reads.remove(read_slot as usize);
            self.lookups = lookups;
            self.reply_read(now, pending.request, found);
            return;
        }
        if lookups.is_empty() {
            let pending = self.reads.remove(read_slot as usize);
            self.lookups = lookups;
            self.reply_read(now, pending.request, pending.found);
            return;
        }
        self.reads[read_slot as usize].ios_outstanding = lookups.len() as u32;
        for lookup in lookups.drain(..) {
            let IoPurpose::ReadIndex { row_bytes, .. } = lookup else {
                unreachable!("a read's lookups are index reads");
            };
            let bytes = self.config.sstable_format.index_read_bytes(row_bytes);
            self.submit_io(IoKind::Read, bytes, IoClass::Query, lookup);
        }
        self.lookups = lookups;
    }

    fn reply_read(&mut self, now: SimTime, request: Request, result: ReadResult) {
        self.reads_completed += 1;
        // A read that went to the SSTables populates the cache with the row
        // it found (a hit was counted already; populating it is a no-op).
        if let (Some(cache), Operation::Read { key }) = (&mut self.row_cache, request.operation) {
            if let Some(version) = result {
                cache.populate(key, 8 + u64::from(version.value_bytes));
            }
        }
        self.respond_read(now, request.origin, result);
    }

    /// Whether the row cache holds `key` (false without a cache).
    fn row_cache_lookup(&mut self, key: u64) -> bool {
        let Some(cache) = self.row_cache.as_mut() else {
            return false;
        };
        let hit = cache.lookup(key, unit(&mut self.draws.row_cache));
        self.cache_lookups.0 += u64::from(hit);
        self.cache_lookups.1 += 1;
        hit
    }

    /// Scylla's cache takes the shard memory the memtables and the
    /// SSTables' in-memory components leave.
    fn resize_row_cache(&mut self) {
        if !self
            .config
            .row_cache
            .as_ref()
            .is_some_and(|setup| setup.takes_free_memory)
        {
            return;
        }
        let other: u64 = self
            .sstables
            .iter()
            .map(|sstable| sstable.memory_bytes(&self.config.sstable_format))
            .sum();
        let capacity =
            row_cache::scylla_capacity_bytes(self.config.memory_bytes, self.dirty_bytes(), other);
        if let Some(cache) = self.row_cache.as_mut() {
            cache.set_capacity_bytes(capacity);
        }
    }

    // ----- the write path -----

    fn start_write(&mut self, request: Request) {
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
    fn append_and_apply(&mut self, now: SimTime, request: Request) -> bool {
        let Operation::Write { value_bytes, .. } = request.operation else {
            unreachable!("only writes take the write path");
        };
        let entry_bytes = mutation_bytes(value_bytes) + ENTRY_OVERHEAD_BYTES;
        let segment = match self.commitlog.append(entry_bytes) {
            Append::Accepted {
                segment,
                end_position,
            } => {
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
    fn apply_write(&mut self, now: SimTime, segment: u64, request: Request) {
        let Operation::Write {
            key,
            value_bytes,
            timestamp,
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
        let memory_bytes = row_bytes + self.config.memtable_row_overhead_bytes;
        let sstable_bytes = row_bytes + self.config.sstable_row_overhead_bytes;
        self.active
            .insert(key, memory_bytes, sstable_bytes, segment);
        self.writes_completed += 1;
        self.flushed_bytes_written += sstable_bytes;
        self.respond_written(now, request.origin);
        self.maybe_start_flush(now);
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

    fn resume_throttled(&mut self, now: SimTime) {
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

    fn submit_commitlog_writes(&mut self) {
        while let Some(write) = self.commitlog.next_write() {
            self.submit_io(
                IoKind::Write,
                write.bytes,
                IoClass::Commitlog,
                IoPurpose::CommitlogWrite { write },
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
        let memtable = std::mem::replace(&mut self.active, new_memtable(id, self.config.data_mode));
        self.sealed_memory_bytes += memtable.memory_bytes;
        self.sealed.push_back(memtable);
        self.resize_row_cache();
    }

    fn advance_flush(&mut self, now: SimTime) {
        let Some(job) = self.flushing.as_mut() else {
            return;
        };
        if job.is_complete() {
            let job = self.flushing.take().expect("checked");
            let (sstable, _memtable) = job.finish(now);
            self.backlog.add_sstable(&sstable);
            self.sstables.push(sstable);
            self.sstables_epoch += 1;
            self.flushes_completed += 1;
            self.resize_row_cache();
            self.release_commitlog_segments();
            self.resume_throttled(now);
            self.maybe_start_flush(now);
            self.maybe_start_compactions(now);
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

    // ----- compaction and the backlog controllers -----

    /// Starts every compaction the table's strategy asks for that the
    /// compaction manager lets run: Scylla's (one size-tiered job per
    /// weight, one leveled job per table) or, with `concurrent_compactors`,
    /// Cassandra's (at most that many jobs, over SSTables no job holds).
    fn maybe_start_compactions(&mut self, now: SimTime) {
        // Each new job takes at least one SSTable no running job holds, so
        // this ends.
        for _ in 0..=self.sstables.len() {
            if self.at_compactor_limit() {
                return;
            }
            let Some((generations, weight, level, max_sstable_bytes)) = self.next_compaction()
            else {
                return;
            };
            let inputs: Vec<SSTable> = self
                .sstables
                .iter()
                .filter(|sstable| generations.contains(&sstable.generation))
                .cloned()
                .collect();
            let job = self
                .new_compaction_job(inputs, weight)
                .into_level(level, max_sstable_bytes);
            self.launch_compaction(now, job);
        }
    }

    /// A job over `inputs`, its outputs numbered from the next generation.
    fn new_compaction_job(&self, inputs: Vec<SSTable>, weight: u32) -> CompactionJob {
        CompactionJob::new(
            inputs,
            self.next_sstable_generation,
            weight,
            self.config.key_ownership_fraction,
            self.config.compaction_chunk_bytes,
            self.config.compaction_chunks_in_flight,
        )
    }

    /// Registers `job` (its outputs take their generations) and starts
    /// its pipeline.
    fn launch_compaction(&mut self, now: SimTime, job: CompactionJob) {
        self.next_sstable_generation += job.output_count();
        let job = self.compactions.insert(job) as u32;
        self.advance_compaction(now, job);
    }

    /// Cassandra: `concurrent_compactors` jobs are running, so no other
    /// starts (Scylla has no such limit, only its weights).
    fn at_compactor_limit(&self) -> bool {
        self.config
            .concurrent_compactors
            .is_some_and(|limit| self.compactions.len() >= limit as usize)
    }

    /// The weights of the running jobs (Scylla runs one job per weight).
    fn busy_weights(&self) -> Vec<u32> {
        self.compactions
            .iter()
            .map(|(_, job)| job.weight())
            .collect()
    }

    /// Generations of the SSTables running jobs are merging.
    fn compacting_generations(&self) -> Vec<u64> {
        self.compactions
            .iter()
            .flat_map(|(_, job)| job.input_generations())
            .collect()
    }

    /// The strategy's next job, if the compaction manager lets one start:
    /// its inputs, weight, output level and output size limit.
    fn next_compaction(&mut self) -> Option<(Vec<u64>, u32, u32, Option<u64>)> {
        let compacting = self.compacting_generations();
        let cassandra = self.config.concurrent_compactors.is_some();
        let weight_of = |sstables: &[SSTable], generations: &[u64]| {
            stcs::job_weight(
                sstables
                    .iter()
                    .filter(|sstable| generations.contains(&sstable.generation))
                    .map(|sstable| sstable.data_bytes)
                    .sum(),
            )
        };
        match &self.config.compaction {
            CompactionStrategy::SizeTiered(options) => {
                let generations = if cassandra {
                    stcs::pick(
                        &self.sstables,
                        &compacting,
                        options,
                        self.config.compaction_enforce_min_threshold,
                    )?
                } else {
                    stcs::next_job(
                        &self.sstables,
                        &compacting,
                        &self.busy_weights(),
                        options,
                        self.config.compaction_enforce_min_threshold,
                    )?
                    .generations
                };
                if generations.len() < 2 {
                    return None;
                }
                let weight = weight_of(&self.sstables, &generations);
                Some((generations, weight, 0, None))
            }
            CompactionStrategy::Leveled(options) => {
                // Scylla: `parallel_compaction() == false` for LCS.
                if !cassandra && !self.compactions.is_empty() {
                    return None;
                }
                let job = lcs::next_job(&self.sstables, &compacting, options, &mut self.lcs_state)?;
                let weight = weight_of(&self.sstables, &job.generations);
                Some((job.generations, weight, job.level, job.max_sstable_bytes))
            }
        }
    }

    /// Fills the job's pipeline with chunk reads, each after the
    /// throughput limit (if any) grants its bytes.
    fn advance_compaction(&mut self, now: SimTime, job: u32) {
        while let Some(chunk) = self.compactions[job as usize].next_chunk() {
            let granted = match self.compaction_limiter.as_mut() {
                Some(limiter) => limiter.reserve(now, chunk.input_bytes),
                None => now,
            };
            if granted <= now && self.throttled_compaction_reads.is_empty() {
                self.submit_compaction_read(job, chunk);
            } else {
                self.throttled_compaction_reads
                    .push_back((granted, job, chunk));
                if self.throttled_compaction_reads.len() == 1 {
                    self.timers.set(TimerKind::CompactionThrottle, granted);
                }
            }
        }
    }

    fn submit_compaction_read(&mut self, job: u32, chunk: ChunkRead) {
        let purpose = IoPurpose::CompactionRead {
            job,
            input_bytes: chunk.input_bytes,
            output_bytes: chunk.output_bytes,
        };
        self.submit_io(
            IoKind::Read,
            chunk.input_bytes,
            IoClass::Compaction,
            purpose,
        );
    }

    /// The throughput limit's timer: submits the reads granted by now and
    /// re-arms for the next.
    fn release_throttled_compaction_reads(&mut self, now: SimTime) {
        while let Some(&(granted, job, chunk)) = self.throttled_compaction_reads.front() {
            if granted > now {
                self.timers.set(TimerKind::CompactionThrottle, granted);
                return;
            }
            self.throttled_compaction_reads.pop_front();
            self.submit_compaction_read(job, chunk);
        }
    }

    /// A chunk's output is on disk: continue the job, or seal its outputs
    /// and replace its inputs.
    fn compaction_chunk_written(&mut self, now: SimTime, job: u32, output_bytes: u64) {
        self.compactions[job as usize].chunk_written(output_bytes);
        if !self.compactions[job as usize].is_complete() {
            self.advance_compaction(now, job);
            return;
        }
        let (outputs, inputs) = self.compactions.remove(job as usize).finish(now);
        for input in &inputs {
            self.backlog.remove_sstable(input);
        }
        self.sstables.retain(|sstable| {
            !inputs
                .iter()
                .any(|input| input.generation == sstable.generation)
        });
        self.sstables_epoch += 1;
        let outputs: Vec<SSTable> = outputs
            .into_iter()
            .filter(|output| output.rows > 0)
            .collect();
        if matches!(self.config.compaction, CompactionStrategy::Leveled(_)) {
            self.lcs_state.notify_completion(&inputs, &outputs);
        }
        for output in outputs {
            self.backlog.add_sstable(&output);
            self.sstables.push(output);
        }
        self.compactions_completed += 1;
        self.maybe_start_compactions(now);
    }

    /// The compaction controller's input: the table's backlog over shard
    /// memory, counting what running compactions have consumed and what
    /// flushes and compactions have written so far.
    fn compaction_backlog(&self) -> f64 {
        let compacting: Vec<(u32, u64, u64)> = self
            .compactions
            .iter()
            .flat_map(|(_, job)| {
                job.inputs()
                    .iter()
                    .map(move |input| (input.level, input.data_bytes, job.consumed_bytes_of(input)))
            })
            .collect();
        let partial_writes: Vec<(u32, u64)> = self
            .compactions
            .iter()
            .map(|(_, job)| (job.output_level(), job.written_bytes()))
            .chain(
                self.flushing
                    .as_ref()
                    .map(|flush| (0, FlushJob::written_bytes(flush))),
            )
            .collect();
        let backlog_bytes = self.backlog.backlog_bytes(&compacting, &partial_writes);
        controller::compaction_input(backlog_bytes, self.config.memory_bytes)
    }

    /// A controller's tick: map its input through the curve to the group's
    /// shares, and re-arm.
    fn adjust_controller(
        &mut self,
        now: SimTime,
        timer: TimerKind,
        group: SchedulingGroup,
        input: f64,
    ) {
        let controller = match group {
            SchedulingGroup::Compaction => &self.config.compaction_controller,
            _ => &self.config.flush_controller,
        };
        let Some(controller) = controller else { return };
        let (shares, tick) = (controller.shares_for(input), controller.tick());
        if let Some(tick) = tick {
            self.timers.set(timer, now + tick);
        }
        let last = match group {
            SchedulingGroup::Compaction => &mut self.compaction_shares,
            _ => &mut self.flush_shares,
        };
        if *last != shares {
            *last = shares;
            self.actions.push_back(Action::SetShares { group, shares });
        }
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

/// A shard's pseudo-random streams, one per purpose, seeded by the driver
/// ([`crate::config::ShardSeeds`]).
struct Draws {
    landing: Pcg64Mcg,
    read_repair: Pcg64Mcg,
    heat: Pcg64Mcg,
    row_cache: Pcg64Mcg,
    page_cache: Pcg64Mcg,
}

impl Draws {
    fn new(seeds: &crate::config::ShardSeeds) -> Draws {
        Draws {
            landing: Pcg64Mcg::seed_from_u64(seeds.landing),
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

/// An empty memtable, keeping its rows in data mode.
fn new_memtable(id: u64, data_mode: bool) -> Memtable {
    if data_mode {
        Memtable::with_cells(id)
    } else {
        Memtable::new(id)
    }
}

/// A coordinator deadline `timeout` after `now`, rounded up to Seastar's
/// low-resolution clock (10 ms), so deadlines of operations opened close
/// together share one timer.
fn deadline(now: SimTime, timeout: SimDuration) -> SimTime {
    const TICK: u64 = 10_000_000;
    let at = (now + timeout).as_nanos();
    SimTime::from_nanos(at.div_ceil(TICK) * TICK)
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
    use crate::coordinator::ConsistencyLevel;
    use crate::testing;

    const MIB: u64 = 1024 * 1024;

    /// Runs a single shard's actions with every CPU task and I/O done at
    /// once ([`testing::run_all`]); collects the replies' ids.
    fn drive(node: &mut Shard, now: SimTime, replies: &mut Vec<RequestId>) {
        let mut outcome = testing::Outcome::default();
        testing::run_all(node, now, &mut outcome);
        assert!(outcome.sent.is_empty(), "a single shard owns every key");
        replies.extend(outcome.replies.iter().map(|reply| reply.id));
    }

    fn write(id: u64, key: u64) -> ClientRequest {
        ClientRequest {
            id: RequestId(id),
            operation: Operation::Write {
                key,
                value_bytes: 1024,
                timestamp: 1,
            },
            consistency: ConsistencyLevel::One,
        }
    }

    /// The SSTable bytes a flush of preloaded 1032-byte rows writes: the
    /// rows whose memtable memory fills a memtable to its flush point.
    fn preload_flush_bytes(config: &ShardConfig) -> u64 {
        let row_memory =
            1032 - config.sstable_row_overhead_bytes + config.memtable_row_overhead_bytes;
        config.flush_soft_limit_bytes() / row_memory * 1032
    }

    /// The shard's SSTables of exactly `bytes`.
    fn sstables_of(shard: &Shard, bytes: u64) -> usize {
        shard
            .sstables()
            .iter()
            .filter(|sstable| sstable.data_bytes == bytes)
            .count()
    }

    #[test]
    fn a_mid_cycle_preload_fills_the_memtable_and_the_low_tiers_and_then_flushes_on_time() {
        let config = ShardConfig::scylla_defaults(64 * MIB);
        let soft_limit = config.flush_soft_limit_bytes();
        // 1032-byte rows: 1,000 flushes' worth.
        let flush_bytes = preload_flush_bytes(&config);
        let rows = 1000 * flush_bytes / 1032;
        let compacted = {
            let mut shard = Shard::new(config.clone(), SimTime::ZERO);
            shard.preload_table(rows, 1032, (1, rows), PreloadState::Compacted);
            shard
        };
        assert_eq!(compacted.stats().memtable_bytes, 0);
        let mut shard = Shard::new(config.clone(), SimTime::ZERO);
        // Scylla 2.2 merges pairs, so the two lowest tiers (1 and 2 flushes)
        // cycle through 4 flushes: 0.8 is 3 flushes in (one SSTable of each),
        // with the memtable 0.9 full.
        shard.preload_table(
            rows,
            1032,
            (1, rows),
            PreloadState::MidCycle {
                tiers: 0.8,
                memtable: 0.9,
                merges: MergePhases::IDLE,
            },
        );
        let stats = shard.stats();
        assert_eq!(stats.sstable_bytes, compacted.stats().sstable_bytes);
        let flush_sized = |shard: &Shard, flushes: u64| sstables_of(shard, flushes * flush_bytes);
        assert_eq!((flush_sized(&shard, 1), flush_sized(&shard, 2)), (1, 1));
        let fill = stats.virtual_dirty_bytes as f64 / soft_limit as f64;
        assert!((0.89..0.9).contains(&fill), "memtable fill {fill}");
        assert!(stats.commitlog_segments >= 1, "{stats:?}");
        // The memtable reaches the flush threshold after a tenth of a
        // flush's writes, not a whole one; the flush frees the preloaded
        // commitlog segments.
        let mut replies = Vec::new();
        let now = SimTime::from_nanos(1);
        let mut writes = 0;
        while shard.stats().flushes_completed == 0 {
            shard.handle_client_request(now, write(writes, writes % rows + 1));
            drive(&mut shard, now, &mut replies);
            writes += 1;
        }
        let flush_rows = soft_limit / (8 + 1024 + config.memtable_row_overhead_bytes);
        assert!(
            writes < flush_rows / 5,
            "{writes} writes to the first flush (a full memtable takes {flush_rows})"
        );
        assert!(shard.stats().commitlog_segments <= 2, "{:?}", shard.stats());
    }

    #[test]
    fn a_mid_cycle_preload_resumes_the_merges_its_phases_place_part_way() {
        let config = ShardConfig::scylla_defaults(64 * MIB);
        let flush_bytes = preload_flush_bytes(&config);
        // 999 flushes' worth and a rest: 1111100111 in base 2.
        let rows = (1000 * flush_bytes - 1) / 1032;
        let preload = |merges: MergePhases| {
            let mut shard = Shard::new(config.clone(), SimTime::ZERO);
            shard.preload_table(
                rows,
                1032,
                (1, rows),
                PreloadState::MidCycle {
                    tiers: 0.0,
                    memtable: 0.0,
                    merges,
                },
            );
            shard
        };
        let idle = preload(MergePhases::IDLE);
        assert_eq!(idle.stats().active_compactions, 0);
        // Scylla 2.2 merges pairs: tier 0 above the two lowest is 4 flushes
        // (phase 0.1 of a duty of 0.4: a quarter through), tier 2 is 16
        // (0.3: three quarters through); tier 1 (8) is not merging.
        let mut phases = [0.9; MERGE_TIERS];
        phases[0] = 0.1;
        phases[2] = 0.3;
        let mut shard = preload(MergePhases { duty: 0.4, phases });
        let stats = shard.stats();
        assert_eq!(stats.sstable_bytes, idle.stats().sstable_bytes);
        assert_eq!(stats.active_compactions, 2);
        let tier = |shard: &Shard, flushes: u64| sstables_of(shard, flushes * flush_bytes);
        assert_eq!(
            (tier(&shard, 4), tier(&shard, 8), tier(&shard, 16)),
            (2, 0, 2)
        );
        // Each merge reads only what it had left. (The 32-flush output then
        // pairs with the settled one, so stop at the two.)
        let now = SimTime::from_nanos(1);
        while shard.stats().compactions_completed < 2 {
            match shard.poll_action().expect("the merges run to their end") {
                Action::RunCpu(task) => shard.handle_cpu_done(now, task.id),
                Action::SubmitIo(io) => shard.handle_io_done(now, io.id),
                Action::SetShares { .. } => {}
                other => unreachable!("{other:?}"),
            }
        }
        let stats = shard.stats();
        let expected = (0.75 * 8.0 + 0.25 * 32.0) * flush_bytes as f64;
        let read = stats.bytes_compacted as f64;
        assert!(
            (read - expected).abs() < 0.01 * expected,
            "read {read} of the expected {expected}"
        );
        assert_eq!((tier(&shard, 8), tier(&shard, 32)), (1, 2));
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
    fn in_batch_mode_a_write_is_acknowledged_only_after_its_commitlog_write() {
        let config = ShardConfig {
            commitlog_sync: SyncMode::Batch,
            ..ShardConfig::scylla_defaults(64 * MIB)
        };
        let mut node = Shard::new(config, SimTime::ZERO);
        let now = SimTime::from_nanos(1);
        let mut commitlog_writes = Vec::new();
        let mut replies = Vec::new();
        // Run the CPU, hold the I/Os.
        let step = |node: &mut Shard, ios: &mut Vec<IoRequest>, replies: &mut Vec<RequestId>| {
            let mut outcome = testing::Outcome::default();
            testing::run(node, now, &mut outcome, |action| match action {
                Action::SubmitIo(_) => testing::Verdict::Hold,
                _ => testing::Verdict::Carry,
            });
            ios.extend(outcome.held);
            replies.extend(outcome.replies.iter().map(|reply| reply.id));
        };
        for id in 0..30 {
            node.handle_client_request(now, write(id, id));
            step(&mut node, &mut commitlog_writes, &mut replies);
        }
        // 25 writes in flight (one entry each), the other 5 grouped later.
        assert_eq!(commitlog_writes.len(), 25);
        assert!(commitlog_writes
            .iter()
            .all(|io| io.class == IoClass::Commitlog));
        assert!(
            replies.is_empty(),
            "nothing is acknowledged before it is on disk"
        );
        // Completing the second write acknowledges nothing: the first is
        // still in flight.
        let second = commitlog_writes.remove(1);
        node.handle_io_done(now, second.id);
        step(&mut node, &mut commitlog_writes, &mut replies);
        assert!(replies.is_empty());
        let first = commitlog_writes.remove(0);
        node.handle_io_done(now, first.id);
        step(&mut node, &mut commitlog_writes, &mut replies);
        assert_eq!(replies, vec![RequestId(0), RequestId(1)]);
        // Two slots freed: the 5 waiting entries went out as one write.
        assert_eq!(commitlog_writes.len(), 24);
        while !commitlog_writes.is_empty() {
            let io = commitlog_writes.remove(0);
            node.handle_io_done(now, io.id);
            step(&mut node, &mut commitlog_writes, &mut replies);
        }
        assert_eq!(replies.len(), 30);
        assert_eq!(node.stats().writes_completed, 30);
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
            let mut outcome = testing::Outcome::default();
            testing::run(&mut node, now, &mut outcome, |action| match action {
                Action::SubmitIo(io) if io.class == IoClass::MemtableFlush => {
                    testing::Verdict::Hold
                }
                _ => testing::Verdict::Carry,
            });
            assert!(outcome.sent.is_empty(), "a single shard owns every key");
            flush_ios.extend(outcome.held.iter().map(|io| io.id));
            replies.extend(outcome.replies.iter().map(|reply| reply.id));
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
                    consistency: ConsistencyLevel::One,
                },
            );
            let mut read_ios = Vec::new();
            let mut outcome = testing::Outcome::default();
            testing::run(shard, now, &mut outcome, |action| {
                match action {
                    Action::RunCpu(task) => {
                        // The replica's part of a read is the query group's
                        // (its own in 2.2); coordinating it is not.
                        let replica_work = matches!(
                            task.work,
                            CpuWork::ReadRequest { .. }
                                | CpuWork::IndexParse { .. }
                                | CpuWork::DataParse { .. }
                        );
                        assert_eq!(
                            task.group == SchedulingGroup::Query,
                            replica_work,
                            "{task:?}"
                        );
                    }
                    Action::SubmitIo(io) => {
                        assert_eq!((io.kind, io.class), (IoKind::Read, IoClass::Query));
                        read_ios.push(io.bytes);
                    }
                    _ => {}
                }
                testing::Verdict::Carry
            });
            assert!(outcome.sent.is_empty(), "a single shard owns every key");
            let status = outcome
                .replies
                .last()
                .expect("every read is answered")
                .status;
            (read_ios, status)
        };
        let (ios, status) = read(&mut shard, 1_000_000, flushed_key);
        assert_eq!(ios, [4096, 4096], "an index page, then the 1 KB row's page");
        assert!(
            matches!(status, ReplyStatus::Found { value_bytes, .. } if (1000..=1100).contains(&value_bytes)),
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
            let mut outcome = testing::Outcome::default();
            testing::run(node, now, &mut outcome, |action| {
                if matches!(action, Action::SubmitIo(_)) {
                    ios += 1;
                }
                testing::Verdict::Carry
            });
            assert!(outcome.sent.is_empty(), "a single shard owns every key");
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

#[cfg(test)]
mod compaction_tests {
    use super::*;
    use crate::action::RequestId;
    use crate::controller::{compaction_curve_2_2, COMPACTION_TICK};
    use crate::coordinator::ConsistencyLevel;
    use crate::testing;

    const MIB: u64 = 1024 * 1024;

    /// Runs writes of keys `keys` through a shard whose CPU and I/O complete
    /// instantly, firing due timers at `now`; returns the shares set.
    fn write_all(
        shard: &mut Shard,
        keys: std::ops::Range<u64>,
        now: SimTime,
    ) -> Vec<(SchedulingGroup, f64)> {
        let mut shares = Vec::new();
        for key in keys {
            shard.handle_client_request(
                now,
                ClientRequest {
                    id: RequestId(key),
                    operation: Operation::Write {
                        key,
                        value_bytes: 1024,
                        timestamp: 1,
                    },
                    consistency: ConsistencyLevel::One,
                },
            );
            let mut outcome = testing::Outcome::default();
            testing::run_all(shard, now, &mut outcome);
            assert!(outcome.sent.is_empty(), "a single shard owns every key");
            shares.extend(outcome.shares);
        }
        shares
    }

    #[test]
    fn size_tiered_compaction_keeps_merging_flushed_sstables() {
        let mut shard = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
        write_all(&mut shard, 0..200_000, SimTime::from_nanos(1));
        let stats = shard.stats();
        assert!(stats.flushes_completed >= 16, "{stats:?}");
        assert!(stats.compactions_completed >= 4, "{stats:?}");
        // Sequential keys never overlap: compaction keeps every row.
        let rows: u64 = shard.sstables().iter().map(|sstable| sstable.rows).sum();
        assert_eq!(rows + shard.active.rows, 200_000);
        assert!(
            (stats.sstable_count as usize) < stats.flushes_completed as usize / 2,
            "fewer SSTables than flushes: {stats:?}"
        );
    }

    #[test]
    fn the_compaction_controller_sets_the_curve_shares_within_one_tick() {
        let mut config = ShardConfig::scylla_defaults(64 * MIB);
        config.compaction_controller = Some(BacklogController::Curve {
            curve: compaction_curve_2_2(),
            tick: COMPACTION_TICK,
        });
        // Keep compaction from running: only the backlog's growth is seen.
        config.compaction.stcs_options_mut().min_threshold = 1000;
        config.compaction_enforce_min_threshold = true;
        let mut shard = Shard::new(config, SimTime::ZERO);
        write_all(&mut shard, 0..60_000, SimTime::from_nanos(1));
        let backlog = shard.stats().compaction_backlog;
        assert!(
            backlog > 0.5,
            "several flushed SSTables make a backlog: {backlog}"
        );
        let tick = shard.poll_timeout().expect("controller timer armed");
        assert_eq!(tick, SimTime::ZERO + COMPACTION_TICK);
        shard.handle_timeout(tick);
        let set: Vec<_> = std::iter::from_fn(|| shard.poll_action()).collect();
        let expected = compaction_curve_2_2().shares_for(backlog);
        assert!(
            set.contains(&Action::SetShares {
                group: SchedulingGroup::Compaction,
                shares: expected
            }),
            "{set:?} should set {expected}"
        );
        assert_eq!(shard.stats().compaction_shares, expected);
    }

    #[test]
    fn preloaded_data_holds_every_key_exactly_once() {
        let mut config = ShardConfig::scylla_defaults(64 * MIB);
        config.key_ownership_fraction = 0.5;
        let mut shard = Shard::new(config, SimTime::ZERO);
        // 100,000 keys, half of them this shard's: 50,000 rows in three SSTables.
        shard.preload(
            &[
                (30_000 * 300, 30_000),
                (15_000 * 300, 15_000),
                (5_000 * 300, 5_000),
            ],
            1,
            100_000,
        );
        assert_eq!(shard.stats().sstable_count, 3);
        let holders: Vec<usize> = (1..=100_000u64)
            .map(|key| {
                shard
                    .sstables()
                    .iter()
                    .filter(|sstable| crate::read::sstable_contains(sstable, key, 0.5))
                    .count()
            })
            .collect();
        assert!(
            holders.iter().all(|count| *count <= 1),
            "no key is in two preloaded SSTables"
        );
        // Every key would be found on the shard that owns it: with half the
        // keys routed here, the three slices cover the whole hash space.
        let held = holders.iter().filter(|count| **count == 1).count();
        assert_eq!(held, 100_000, "the slices cover every key routed here");
        assert!(
            shard.stats().compaction_backlog > 0.0,
            "preloaded SSTables count in the backlog"
        );
    }

    /// A shard owning a third of a million keys holds 333,333 rows (the
    /// cluster rounds), in size-tiered SSTables whose rows round down
    /// again: the preload still holds every key routed to it, so no read of
    /// a preloaded key finds nothing (a volume-mode run read one such key
    /// as not found). A preload of half the rows holds half the keys.
    #[test]
    fn a_preload_of_every_owned_key_holds_every_key_despite_rounding() {
        let keys = (1, 1_000_000);
        let mut config = ShardConfig::scylla_defaults(64 * MIB);
        config.key_ownership_fraction = 1.0 / 3.0;
        let mut all = Shard::new(config.clone(), SimTime::ZERO);
        all.preload_table(333_333, 1_000, keys, PreloadState::Compacted);
        assert!(all.sstables().len() >= 3, "{} tiers", all.sstables().len());
        let slices: Vec<(u64, u64)> = all
            .sstables()
            .iter()
            .map(|sstable| {
                sstable
                    .key_share
                    .expect("preloaded SSTables hold key shares")
            })
            .collect();
        assert_eq!(slices[0].0, 0);
        for pair in slices.windows(2) {
            assert_eq!(pair[0].1, pair[1].0, "slices are consecutive");
        }
        assert_eq!(slices.last().map(|slice| slice.1), Some(KEY_SHARE_ONE));
        let missing = (keys.0..=keys.1)
            .filter(|&key| all.population.version(key, 0, 1.0).is_none())
            .count();
        assert_eq!(missing, 0, "keys no preloaded row holds");

        let mut half = Shard::new(config, SimTime::ZERO);
        half.preload_table(166_667, 1_000, keys, PreloadState::Compacted);
        let held = (keys.0..=keys.1)
            .filter(|&key| half.population.version(key, 0, 1.0).is_some())
            .count();
        assert!((495_000..505_000).contains(&held), "{held} of a million");
    }

    fn leveled(sstable_size_bytes: u64, push_to_highest_level: bool) -> CompactionStrategy {
        CompactionStrategy::Leveled(crate::compaction::LcsOptions {
            sstable_size_bytes,
            push_to_highest_level,
            ..crate::compaction::LcsOptions::default()
        })
    }

    /// Asserts every level from 1 up holds SSTables of at most `max_bytes`
    /// over disjoint token ranges; returns the SSTables per level.
    fn check_levels(sstables: &[SSTable], max_bytes: u64) -> [usize; lcs::MAX_LEVELS] {
        let mut per_level = [0; lcs::MAX_LEVELS];
        for level in 1..lcs::MAX_LEVELS as u32 {
            let mut ranges: Vec<(u64, u64)> = sstables
                .iter()
                .filter(|sstable| sstable.level == level)
                .map(|sstable| {
                    assert!(sstable.data_bytes <= max_bytes, "{sstable:?}");
                    sstable
                        .token_range
                        .expect("leveled SSTables have a token range")
                })
                .collect();
            ranges.sort_unstable();
            assert!(
                ranges.windows(2).all(|pair| pair[0].1 <= pair[1].0),
                "level {level} overlaps: {ranges:?}"
            );
            per_level[level as usize] = ranges.len();
        }
        per_level
    }

    #[test]
    fn leveled_compaction_keeps_levels_disjoint_and_sstables_at_most_the_size() {
        let mut config = ShardConfig::scylla_defaults(64 * MIB);
        config.compaction = leveled(MIB, false);
        let mut shard = Shard::new(config, SimTime::ZERO);
        write_all(&mut shard, 0..200_000, SimTime::from_nanos(1));
        let stats = shard.stats();
        assert!(stats.flushes_completed >= 16, "{stats:?}");
        let per_level = check_levels(shard.sstables(), MIB);
        // ~200 MiB: L1 (10 MiB) and L2 (100 MiB) filled, the rest in L3.
        assert!(
            per_level[1] >= 9 && per_level[2] >= 90 && per_level[3] > 0,
            "{per_level:?}"
        );
        assert!(shard.sstables().iter().filter(|s| s.level == 0).count() <= 1);
        // Sequential keys never overlap: compaction keeps every row (to
        // within the rounding of rows to whole ones over some 300 jobs),
        // though each output mixes keys of several flushes over its token
        // range.
        let rows: u64 = shard
            .sstables()
            .iter()
            .map(|sstable| sstable.rows)
            .sum::<u64>()
            + shard.active.rows
            + shard
                .sealed
                .iter()
                .map(|memtable| memtable.rows)
                .sum::<u64>()
            + shard
                .flushing
                .as_ref()
                .map_or(0, |flush| flush.memtable().rows);
        assert!((200_000 - 20..=200_000).contains(&rows), "{rows}");
        assert!(stats.compaction_backlog > 0.0);
    }

    #[test]
    fn leveled_outputs_hold_the_rows_of_their_token_ranges_in_data_mode() {
        let mut config = ShardConfig::scylla_defaults(64 * MIB);
        config.data_mode = true;
        config.compaction = leveled(MIB / 4, true);
        let mut shard = Shard::new(config, SimTime::ZERO);
        // Three passes over 20,000 keys: overwrites merge away.
        for pass in 0..3u64 {
            write_all(
                &mut shard,
                pass * 1_000_000..pass * 1_000_000 + 20_000,
                SimTime::from_nanos(1),
            );
        }
        check_levels(shard.sstables(), MIB / 4);
        let mut keys = 0;
        for sstable in shard.sstables().iter().filter(|s| s.level > 0) {
            let (low, high) = sstable.token_range.unwrap();
            let cells = sstable.cells.as_ref().expect("data mode");
            assert_eq!(cells.len() as u64, sstable.rows);
            assert!(cells
                .cells()
                .iter()
                .all(|(key, _)| (low..high).contains(&crate::read::key_token(*key))));
            keys += cells.len();
        }
        assert!(keys > 0);
    }

    /// Runs a shard whose CPU and I/O complete instantly from `from` to
    /// `until`, firing its timers; returns the most compactions that ran at
    /// once.
    fn run_timers(shard: &mut Shard, from: SimTime, until: SimTime) -> u64 {
        let mut most = shard.stats().active_compactions;
        let mut now = from;
        loop {
            while let Some(action) = shard.poll_action() {
                match action {
                    Action::RunCpu(task) => shard.handle_cpu_done(now, task.id),
                    Action::SubmitIo(io) => shard.handle_io_done(now, io.id),
                    _ => {}
                }
                most = most.max(shard.stats().active_compactions);
            }
            match shard.poll_timeout() {
                Some(at) if at <= until => {
                    now = at;
                    shard.handle_timeout(now);
                }
                _ => return most,
            }
        }
    }

    #[test]
    fn cassandra_limits_compactions_at_once_and_the_bytes_they_read() {
        let mut config = ShardConfig::cassandra_defaults(64 * MIB);
        config.concurrent_compactors = Some(1);
        config.compaction_throughput_bytes_per_sec = Some(4 * MIB);
        let mut shard = Shard::new(config, SimTime::ZERO);
        let start = SimTime::from_nanos(1);
        write_all(&mut shard, 0..200_000, start);
        assert!(shard.stats().flushes_completed >= 8);
        let compacted_at_start = shard.stats().bytes_compacted;
        let until = SimTime::ZERO + SimDuration::from_secs(10);
        let most = run_timers(&mut shard, start, until);
        assert_eq!(most, 1, "concurrent_compactors = 1");
        let compacted = shard.stats().bytes_compacted;
        // Writes at one instant: the first request and one second of stored
        // permits at most, then 4 MiB/s.
        let bound = 4 * MIB * 11 + 4 * 128 * 1024;
        assert!(compacted <= bound, "{compacted} > {bound}");
        assert!(compacted - compacted_at_start >= 4 * MIB * 8, "{compacted}");
        // Unthrottled, everything compacts at the writes' instant.
        let mut config = ShardConfig::cassandra_defaults(64 * MIB);
        config.compaction_throughput_bytes_per_sec = None;
        let mut free = Shard::new(config, SimTime::ZERO);
        write_all(&mut free, 0..200_000, start);
        assert!(free.stats().bytes_compacted > compacted);
        assert_eq!(free.stats().active_compactions, 0);
    }

    #[test]
    fn a_leveled_preload_fills_levels_and_holds_every_key_once() {
        let mut config = ShardConfig::scylla_defaults(64 * MIB);
        config.key_ownership_fraction = 0.5;
        config.compaction = leveled(MIB, false);
        let mut shard = Shard::new(config, SimTime::ZERO);
        // 50,000 rows of 300 bytes (14.3 MiB): L1 10 MiB, L2 the rest.
        shard.preload_table(50_000, 300, (1, 100_000), PreloadState::Compacted);
        let per_level = check_levels(shard.sstables(), MIB);
        assert_eq!(&per_level[..4], &[0, 10, 5, 0]);
        let mut held = 0;
        for key in 1..=100_000u64 {
            let holders = shard
                .sstables()
                .iter()
                .filter(|sstable| crate::read::sstable_contains(sstable, key, 0.5))
                .count();
            assert!(holders <= 1, "key {key} is in {holders} SSTables");
            held += holders;
            // A lookup consults one SSTable per level at most.
            let consulted = shard
                .sstables()
                .iter()
                .filter(|sstable| crate::read::bloom_filter_passes(sstable, key, 0.5))
                .count();
            assert!(consulted <= 2, "key {key}: {consulted}");
        }
        // Rows per level are whole, rounded down, yet the slices hold
        // every key.
        assert_eq!(held, 100_000);
        // Nothing is due on a settled layout.
        shard.maybe_start_compactions(SimTime::ZERO);
        assert_eq!(shard.stats().active_compactions, 0);
    }
}

#[cfg(test)]
mod coordinator_tests {
    use super::*;
    use crate::coordinator::ConsistencyLevel;
    use crate::placement::Placement;
    use crate::testing;

    #[test]
    fn a_shard_forwards_requests_for_keys_it_does_not_own_and_relays_the_answer() {
        let placement = Placement::single_node(2);
        let config = |shard| ShardConfig {
            address: ShardAddress { node: 0, shard },
            placement: placement.clone(),
            key_ownership_fraction: 0.5,
            ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
        };
        let mut shards = [
            Shard::new(config(0), SimTime::ZERO),
            Shard::new(config(1), SimTime::ZERO),
        ];
        let now = SimTime::from_nanos(1);
        let key = (0..).find(|key| placement.owner(*key).shard == 1).unwrap();
        // The client talks to shard 0; shard 1 owns the key.
        shards[0].handle_client_request(
            now,
            ClientRequest {
                id: RequestId(7),
                operation: Operation::Write {
                    key,
                    value_bytes: 100,
                    timestamp: 1,
                },
                consistency: ConsistencyLevel::One,
            },
        );
        let (replies, _) = drive_shards(&mut shards, now);
        assert_eq!(
            replies,
            [ClientReply {
                id: RequestId(7),
                status: ReplyStatus::Written
            }]
        );
        assert_eq!(
            shards[1].stats().writes_completed,
            1,
            "the owner applied the write"
        );
        assert_eq!(
            shards[0].stats().writes_completed,
            0,
            "the coordinator did not"
        );
        shards[0].handle_client_request(
            now,
            ClientRequest {
                id: RequestId(8),
                operation: Operation::Read { key },
                consistency: ConsistencyLevel::One,
            },
        );
        let (replies, _) = drive_shards(&mut shards, now);
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0].id, RequestId(8));
        assert!(
            matches!(replies[0].status, ReplyStatus::Found { .. }),
            "{replies:?}"
        );
    }

    /// Three single-shard nodes at RF=3; every CPU task and I/O instant,
    /// messages delivered in order. Returns the client's replies and the
    /// digest tasks run on each node.
    fn drive_three(shards: &mut [Shard; 3], now: SimTime) -> (Vec<ClientReply>, [u32; 3]) {
        drive_three_watching(shards, now, |_, _| {})
    }

    /// [`drive_three`], showing every message sent to `watch`.
    fn drive_three_watching(
        shards: &mut [Shard; 3],
        now: SimTime,
        mut watch: impl FnMut(ShardAddress, &Message),
    ) -> (Vec<ClientReply>, [u32; 3]) {
        let mut digests = [0u32; 3];
        let mut outcome = testing::Outcome::default();
        testing::run_cluster(shards, now, &mut outcome, |index, action| {
            match action {
                Action::RunCpu(task) if matches!(task.work, CpuWork::Digest { .. }) => {
                    digests[index] += 1
                }
                Action::Send { to, message } => watch(*to, message),
                _ => {}
            }
            testing::Verdict::Carry
        });
        (outcome.replies, digests)
    }

    fn three_nodes(read_repair_chance: f64) -> [Shard; 3] {
        let placement = Placement::evenly_spaced(3, 1, &crate::ring::Replication::simple(3));
        let config = |node| ShardConfig {
            address: ShardAddress { node, shard: 0 },
            placement: placement.clone(),
            replication_factor: 3,
            read_repair_chance,
            ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
        };
        [
            Shard::new(config(0), SimTime::ZERO),
            Shard::new(config(1), SimTime::ZERO),
            Shard::new(config(2), SimTime::ZERO),
        ]
    }

    #[test]
    fn a_quorum_write_reaches_every_replica_and_the_client_hears_once() {
        let mut shards = three_nodes(0.0);
        let now = SimTime::from_nanos(1);
        shards[1].handle_client_request(
            now,
            ClientRequest {
                id: RequestId(5),
                operation: Operation::Write {
                    key: 77,
                    value_bytes: 100,
                    timestamp: 1,
                },
                consistency: ConsistencyLevel::Quorum,
            },
        );
        let (replies, _) = drive_three(&mut shards, now);
        assert_eq!(
            replies,
            [ClientReply {
                id: RequestId(5),
                status: ReplyStatus::Written
            }]
        );
        for shard in &shards {
            assert_eq!(
                shard.stats().writes_completed,
                1,
                "every replica applied it"
            );
        }
        assert_eq!(shards[1].coordinator.open_operations(), 0);
    }

    #[test]
    fn a_quorum_read_asks_one_replica_for_data_and_one_for_a_digest() {
        let mut shards = three_nodes(0.0);
        let now = SimTime::from_nanos(1);
        let read = |id| ClientRequest {
            id: RequestId(id),
            operation: Operation::Read { key: 77 },
            consistency: ConsistencyLevel::Quorum,
        };
        shards[2].handle_client_request(now, read(1));
        let (replies, digests) = drive_three(&mut shards, now);
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0].status, ReplyStatus::NotFound);
        let reads: u64 = shards.iter().map(|s| s.stats().reads_completed).sum();
        assert_eq!(reads, 2, "block_for = 2 replicas read");
        assert_eq!(
            shards[2].stats().reads_completed,
            1,
            "the coordinator is a replica and reads its own copy"
        );
        // One digest on the digest replica, one on the coordinator for the
        // data it compares.
        assert_eq!(digests.iter().sum::<u32>(), 2, "{digests:?}");
        // With read_repair_chance 1 every replica is asked.
        let mut shards = three_nodes(1.0);
        shards[2].handle_client_request(now, read(2));
        let (replies, _) = drive_three(&mut shards, now);
        assert_eq!(replies.len(), 1);
        let reads: u64 = shards.iter().map(|s| s.stats().reads_completed).sum();
        assert_eq!(reads, 3);
        assert_eq!(shards[2].coordinator.open_operations(), 0);
    }

    /// Two nodes of four shards each, RF 2, messages landing on connection
    /// shards (`messaging`): node `n`'s shard `s` at index `4n + s`.
    fn two_nodes_of_four_shards() -> Vec<Shard> {
        let placement = Placement::evenly_spaced(2, 4, &crate::ring::Replication::simple(2));
        (0..8u32)
            .map(|index| {
                let config = ShardConfig {
                    address: ShardAddress {
                        node: index / 4,
                        shard: index % 4,
                    },
                    placement: placement.clone(),
                    landing: crate::messaging::Landing::ConnectionShard {
                        shards_per_node: 4,
                        simulated: 4,
                    },
                    replication_factor: 2,
                    read_repair_chance: 0.0,
                    data_mode: true,
                    seeds: crate::ShardSeeds {
                        landing: u64::from(index) + 1,
                        ..crate::ShardSeeds::default()
                    },
                    ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
                };
                Shard::new(config, SimTime::ZERO)
            })
            .collect()
    }

    /// Runs every action of `shards` (node by node, each node's shards in
    /// order), every CPU task and I/O instant, messages delivered in order,
    /// to quiescence; returns the replies and every message sent, with its
    /// sender and destination.
    fn drive_shards(
        shards: &mut [Shard],
        now: SimTime,
    ) -> (Vec<ClientReply>, Vec<(ShardAddress, ShardAddress, Message)>) {
        let mut outcome = testing::Outcome::default();
        testing::run_cluster(shards, now, &mut outcome, |_, _| testing::Verdict::Carry);
        (outcome.replies, outcome.sent)
    }

    #[test]
    fn requests_landing_on_connection_shards_are_relayed_to_the_owners_and_answered() {
        let mut shards = two_nodes_of_four_shards();
        let placement = shards[0].config().placement.clone();
        let now = SimTime::from_nanos(1);
        let keys: Vec<u64> = (1..=200).collect();
        let mut replicas = [ShardAddress { node: 0, shard: 0 }; MAX_REPLICAS];
        for &key in &keys {
            // The client's connection is on a shard that does not own the key.
            let owner = placement.owner(key);
            let coordinator = (owner.node * 4 + (owner.shard + 1) % 4) as usize;
            let write = Operation::Write {
                key,
                value_bytes: 100,
                timestamp: key,
            };
            shards[coordinator].handle_client_request(
                now,
                ClientRequest {
                    id: RequestId(key),
                    operation: write,
                    consistency: ConsistencyLevel::All,
                },
            );
        }
        let (replies, sent) = drive_shards(&mut shards, now);
        assert_eq!(replies.len(), keys.len(), "every write is answered once");
        assert!(replies.iter().all(|r| r.status == ReplyStatus::Written));
        // Each key was applied on its two replicas and nowhere else.
        let applied: u64 = shards.iter().map(|s| s.stats().writes_completed).sum();
        assert_eq!(applied, 2 * keys.len() as u64);
        for &key in &keys {
            let count = placement.replicas(key, &mut replicas);
            for replica in &replicas[..count] {
                let shard = &shards[(replica.node * 4 + replica.shard) as usize];
                let held = shard
                    .active
                    .cells
                    .as_ref()
                    .and_then(|cells| cells.get(&key));
                assert!(held.is_some(), "key {key} on {replica:?}");
            }
        }
        // Writes to the other node landed off their owners about 3 times in 4
        // and were relayed; so were acknowledgements back to the coordinator.
        let (mut landed_off_owner, mut remote_writes) = (0, 0);
        for (from, to, message) in &sent {
            if let Message::WriteRequest { key, .. } = message {
                if from.node != to.node {
                    remote_writes += 1;
                    if placement.shard_of(key_token(*key)) != to.shard {
                        landed_off_owner += 1;
                    }
                }
            }
        }
        assert_eq!(remote_writes, keys.len());
        assert!(
            (100..=190).contains(&landed_off_owner),
            "{landed_off_owner} of {remote_writes} landed off their owner"
        );
        let hops = sent
            .iter()
            .filter(|(from, to, _)| from.node == to.node)
            .count();
        assert!(hops > 2 * keys.len(), "{hops} cross-shard hops");
        assert!(
            shards.iter().all(|s| s.relays.is_empty()),
            "no relay left open"
        );

        // QUORUM reads (here: both replicas) find what was written, data and
        // digest answers relayed alike.
        for &key in &keys {
            let owner = placement.owner(key);
            let coordinator = (owner.node * 4 + (owner.shard + 2) % 4) as usize;
            shards[coordinator].handle_client_request(
                now,
                ClientRequest {
                    id: RequestId(1000 + key),
                    operation: Operation::Read { key },
                    consistency: ConsistencyLevel::Quorum,
                },
            );
        }
        let (replies, _) = drive_shards(&mut shards, now);
        assert_eq!(replies.len(), keys.len());
        for reply in replies {
            assert_eq!(
                reply.status,
                ReplyStatus::Found {
                    value_bytes: 100,
                    timestamp: reply.id.0 - 1000
                }
            );
        }
        assert!(shards.iter().all(|s| s.relays.is_empty()));
        assert!(shards.iter().all(|s| s.coordinator.open_operations() == 0));
    }

    #[test]
    fn diverged_replicas_are_found_by_digests_repaired_by_the_read_and_equal_after() {
        let placement = Placement::evenly_spaced(3, 1, &crate::ring::Replication::simple(3));
        let mut shards = [0, 1, 2].map(|node| {
            let config = ShardConfig {
                address: ShardAddress { node, shard: 0 },
                placement: placement.clone(),
                replication_factor: 3,
                read_repair_chance: 0.0,
                data_mode: true,
                ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
            };
            Shard::new(config, SimTime::ZERO)
        });
        let now = SimTime::from_nanos(1);
        let request = |id, operation, consistency| ClientRequest {
            id: RequestId(id),
            operation,
            consistency,
        };
        let write = |timestamp| Operation::Write {
            key: 77,
            value_bytes: 100,
            timestamp,
        };
        // Every replica has version 1.
        shards[0].handle_client_request(now, request(1, write(1), ConsistencyLevel::All));
        drive_three(&mut shards, now);
        // Version 5 reaches node 2 only (its other writes were lost).
        let from = shards[1].config().address;
        shards[2].handle_message(
            now,
            from,
            Message::WriteRequest {
                id: !RELAYED, // no open operation's id
                key: 77,
                value_bytes: 100,
                timestamp: 5,
            },
        );
        drive_three(&mut shards, now);
        let newest = ReplyStatus::Found {
            value_bytes: 100,
            timestamp: 5,
        };
        // A CL=ALL read compares three digests: the mismatch sends it to
        // full data reads, the newest version wins and goes back to nodes
        // 0 and 1 before the client hears.
        shards[0].handle_client_request(
            now,
            request(2, Operation::Read { key: 77 }, ConsistencyLevel::All),
        );
        let (replies, _) = drive_three(&mut shards, now);
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0].status, newest);
        let stats = shards[0].stats();
        assert_eq!((stats.digest_mismatches, stats.read_repairs), (1, 2));
        // Equal afterwards: each replica's own copy is the newest.
        for node in 0..3 {
            shards[node].handle_client_request(
                now,
                request(
                    10 + node as u64,
                    Operation::Read { key: 77 },
                    ConsistencyLevel::One,
                ),
            );
            let (replies, _) = drive_three(&mut shards, now);
            assert_eq!(replies[0].status, newest, "node {node}");
        }
        // And a QUORUM read finds the digests equal: no new repair.
        shards[1].handle_client_request(
            now,
            request(20, Operation::Read { key: 77 }, ConsistencyLevel::Quorum),
        );
        let (replies, _) = drive_three(&mut shards, now);
        assert_eq!(replies[0].status, newest);
        let mismatches: u64 = shards.iter().map(|s| s.stats().digest_mismatches).sum();
        assert_eq!(mismatches, 1);
    }

    /// Reads of 300 keys at CL=QUORUM coordinated by node 0, with nodes 1
    /// and 2 reporting cache hit rates of 0.9 and 0.1: how many of the reads
    /// asked node 1, and how many heat-weighted balancing ordered.
    fn reads_asking_node_1(heat_weighted_balancing: bool) -> (u32, u64) {
        let placement = Placement::evenly_spaced(3, 1, &crate::ring::Replication::simple(3));
        let cache = crate::config::RowCacheSetup {
            config: crate::row_cache::RowCacheConfig::scylla(0),
            takes_free_memory: true,
            popularity: None,
            key_rows: 1.0,
            mean_row_bytes: 100,
        };
        let mut shards = [0, 1, 2].map(|node| {
            let config = ShardConfig {
                address: ShardAddress { node, shard: 0 },
                placement: placement.clone(),
                replication_factor: 3,
                read_repair_chance: 0.0,
                data_mode: true,
                row_cache: Some(cache.clone()),
                heat_weighted_balancing,
                ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
            };
            Shard::new(config, SimTime::ZERO)
        });
        let now = SimTime::from_nanos(1);
        // The coordinator's own node, as its node level published it: cold.
        shards[0].set_node_hit_rate(0.0);
        let mut asked_node_1 = 0;
        for key in 0..300 {
            // The replicas' latest reports (each read response carries one;
            // here node 1's cache is warm and node 2's cold).
            for (node, rate) in [(1u32, 9_000u16), (2, 1_000)] {
                shards[0].handle_message(
                    now,
                    ShardAddress { node, shard: 0 },
                    Message::ReadResponse {
                        id: !RELAYED, // no open operation's id
                        data: None,
                        digest: 0,
                        cache_hit_rate: rate,
                    },
                );
            }
            shards[0].handle_client_request(
                now,
                ClientRequest {
                    id: RequestId(key),
                    operation: Operation::Read { key },
                    consistency: ConsistencyLevel::Quorum,
                },
            );
            let mut asked = false;
            drive_three_watching(&mut shards, now, |to, message| {
                asked |= to.node == 1 && matches!(message, Message::ReadRequest { .. });
            });
            asked_node_1 += u32::from(asked);
        }
        (asked_node_1, shards[0].stats().heat_balanced_reads)
    }

    #[test]
    fn heat_weighted_balancing_sends_reads_to_the_warm_replica() {
        let (with, balanced) = reads_asking_node_1(true);
        let (without, unbalanced) = reads_asking_node_1(false);
        // Shares 1 : 10 : 1.1 clip to 1/K = 0.5 for node 1: it is in every
        // pick. Without balancing the coordinator's own copy and the next
        // replica in ring order are asked: node 1 in two reads of three.
        assert!(with >= 295, "{with} of 300 with balancing");
        assert!((150..250).contains(&without), "{without} of 300 without");
        assert!(
            balanced >= 295 && unbalanced == 0,
            "{balanced} {unbalanced}"
        );
    }

    #[test]
    fn a_coordinator_answers_timeout_when_replicas_are_silent() {
        let mut shards = three_nodes(0.0);
        let now = SimTime::from_nanos(1);
        shards[0].handle_client_request(
            now,
            ClientRequest {
                id: RequestId(9),
                operation: Operation::Write {
                    key: 77,
                    value_bytes: 100,
                    timestamp: 1,
                },
                consistency: ConsistencyLevel::All,
            },
        );
        // Run the coordinator only: its messages to the others are lost.
        let lose_messages = |action: &Action| match action {
            Action::Send { .. } => testing::Verdict::Hold,
            _ => testing::Verdict::Carry,
        };
        let mut outcome = testing::Outcome::default();
        testing::run(&mut shards[0], now, &mut outcome, lose_messages);
        assert!(
            outcome.replies.is_empty(),
            "ALL needs the two silent replicas"
        );
        assert_eq!(outcome.dropped.len(), 2, "one write to each other replica");
        let deadline = shards[0].poll_timeout().expect("a deadline is armed");
        assert!(deadline >= now + SimDuration::from_secs(2));
        assert!(deadline <= now + SimDuration::from_millis(2_010));
        shards[0].handle_timeout(deadline);
        let mut outcome = testing::Outcome::default();
        testing::run(&mut shards[0], deadline, &mut outcome, lose_messages);
        assert_eq!(
            outcome.replies,
            [ClientReply {
                id: RequestId(9),
                status: ReplyStatus::Timeout
            }]
        );
        assert_eq!(shards[0].coordinator.open_operations(), 0);
    }
}
