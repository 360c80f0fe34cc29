//! The twin's database engine: a Scylla-style shard as a sans-IO state machine.
//!
//! The engine holds the database's logic, real code rather than formulas: its
//! memtables fill, its commitlog cycles buffers and segments, its flushes
//! write SSTables, size-tiered or leveled compaction merges them, and its backlog
//! controllers move CPU shares. It never reads a clock, sleeps, spawns a thread, touches a
//! file or socket, or draws a random number of its own. Instead a driver (the
//! simulator in `sim`, later a real runtime) feeds it inputs and carries out
//! the actions it asks for:
//!
//! - inputs ([`Shard`]'s `handle_*` methods): a client request, a message
//!   from another shard, an I/O completion, a CPU task completion, a timer;
//! - outputs, drained with [`Shard::poll_action`] until it returns `None`:
//!   submit an I/O ([`IoRequest`]: read or write, bytes, I/O class), run CPU
//!   work ([`CpuTask`]: scheduling group and the named work to price), set a
//!   scheduling group's shares, reply to a client;
//! - [`Shard::poll_timeout`] gives the next instant the shard wants
//!   [`Shard::handle_timeout`] to be called.
//!
//! Every handler takes `now`; the engine's only notion of time is what it is
//! told. Likewise its pseudo-random choices (read-repair chance, replica
//! picks, cache hits in volume mode) come from streams seeded by the driver
//! ([`ShardSeeds`] in the shard's configuration), one per purpose. CPU work is named ([`CpuWork`]), not priced: a per-version cost table
//! in `models` turns it into nanoseconds, so the engine stays the same across
//! hardware and software presets.
//!
//! Module map (one mechanism per module):
//! - [`config`]: a shard's limits and sizes, each with its source;
//! - [`cells`]: what a replica holds of a row ([`RowVersion`], the
//!   digests replicas compare) and the sorted runs memtables and SSTables
//!   keep; the storage side, importing nothing of the engine;
//! - [`consistency`]: consistency levels and how many replicas each waits
//!   for;
//! - [`action`], [`coordinator`]: what a shard asks its driver to do, and
//!   a coordinator's requests in flight (the request side, above the
//!   storage modules: `tests/module_graph.rs` holds the direction);
//! - [`commitlog`]: periodic-mode commitlog buffers and segments;
//! - [`memtable`]: memtables and dirty-memory accounting;
//! - [`flush`]: writing a sealed memtable out as an SSTable;
//! - [`compaction`]: the size-tiered and leveled strategies, their backlog
//!   trackers, jobs, Cassandra's compaction throughput limit, and a
//!   shard's compaction state with its invariants ([`compaction::manager`]);
//! - [`controller`]: backlog controllers turning backlog into shares;
//! - [`sstable`]: SSTable descriptors;
//! - [`token_set`]: ring positions, and the slices of the ring an SSTable
//!   holds;
//! - [`ring`]: Murmur3 tokens, vnodes and replication strategies;
//! - [`placement`]: which shards of which nodes hold a key (the ring's
//!   replicas and Scylla's sharder);
//! - [`topology`]: versioned token metadata (nodes joining and leaving,
//!   the pending ranges their writes must also reach);
//! - [`streaming`]: what a topology change streams from which node to
//!   which, in what plans (a shard's part is `shard/stream_path.rs`);
//! - [`messaging`]: which shard a message from another node lands on, and
//!   the hop from there to the key's owner;
//! - [`read`]: what a read touches, decided from key ranges and bloom filters;
//! - [`row_cache`]: the row cache (Scylla's, all free memory; Cassandra's,
//!   `row_cache_size_in_mb`), cold at start, hit rates from key popularity
//!   in volume mode and an exact LRU in data mode;
//! - [`page_cache`]: the OS page cache over SSTable Data that Cassandra
//!   reads through;
//! - [`timer`]: the shard's timers;
//! - [`shard`]: the state machine that ties them together;
//! - [`node`]: a node's shards and what the node does as a whole (the
//!   published cache hit rate, gossip and the failure detector, crash and
//!   restart);
//! - [`gossip`], [`hints`], [`replay`]: gossip with its failure detector,
//!   hinted handoff's logs, what the commitlog replays after a crash;
//! - [`planted`]: deliberate bugs for the explorer's own tests, which
//!   only a test build can plant;
//! - [`testing`]: a harness that runs shards with every task and I/O done
//!   at once, for tests of the engine's logic.

#![warn(missing_docs)]

pub mod action;
pub mod cache;
pub mod cells;
pub mod commitlog;
pub mod compaction;
pub mod config;
pub mod consistency;
pub mod controller;
pub mod coordinator;
pub mod flush;
pub mod gossip;
pub mod hints;
pub mod memtable;
pub mod messaging;
pub mod node;
pub mod placement;
pub mod planted;
pub mod read;
pub mod replay;
pub mod ring;
pub mod shard;
pub mod speculation;
pub mod sstable;
pub mod streaming;
pub mod testing;
pub mod timer;
pub mod token_set;
pub mod topology;

pub use action::{
    Action, BatchRequest, ClientReply, ClientRequest, CpuTask, CpuWork, IoClass, IoId, IoKind,
    IoRequest, Message, Operation, ReplyStatus, RequestId, SchedulingGroup, TaskId,
    WHOLE_PARTITION,
};
pub use cells::{ReadResult, RowVersion};
pub use commitlog::SyncMode;
pub use config::{ShardConfig, ShardSeeds};
pub use consistency::ConsistencyLevel;
pub use messaging::Landing;
pub use node::Node;
pub use placement::{key_token, Placement, ShardAddress};
pub use shard::{
    CrashLoss, HintsSummary, MergePhases, PreloadState, Shard, ShardStats, BATCH_PART,
    MAX_BATCH_PARTS, MERGE_TIERS,
};
pub use units::{SimDuration, SimTime};
