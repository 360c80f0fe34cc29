//! A shard's sizes and limits, with where each number comes from.
//!
//! Fractions of shard memory follow Scylla 2.1-3.0 (scylla-mechanisms.md
//! sections 1.3, 3.1 and 3.2, read from `dirty_memory_manager.hh` and
//! `database.cc` @2.2/@3.0): the regular dirty-memory manager gets 0.45 of
//! shard memory `M`; virtual dirty is throttled at half of that (0.225 M) and
//! flushing starts at `soft_limit` (0.6) of the throttle point (0.135 M).

use units::SimDuration;

use crate::cache::page_cache::PageCacheConfig;
use crate::cache::row_cache::{HotMass, RowCacheConfig};
use crate::commitlog::SyncMode;
use crate::compaction::CompactionStrategy;
use crate::controller::BacklogController;
use crate::placement::{Placement, ShardAddress};
use crate::speculation::{Resolution, SpeculativeRetry};
use crate::sstable::SSTableFormat;

/// Bytes in one mebibyte.
const MIB: u64 = 1024 * 1024;

/// Configuration of one shard.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardConfig {
    /// Memory of the shard, `M` in the mechanisms doc (bytes).
    pub memory_bytes: u64,
    /// Real dirty memory cap as a fraction of `M` (Scylla: 0.45).
    pub dirty_memory_fraction: f64,
    /// Virtual-dirty throttle point as a fraction of `M` (Scylla: 0.225).
    pub throttle_fraction: f64,
    /// `virtual_dirty_soft_limit`: flushing starts at this fraction of the
    /// throttle point (Scylla default 0.6, so 0.135 M).
    pub virtual_dirty_soft_limit: f64,
    /// Memtable memory per row beyond key and value bytes (LSA object headers,
    /// row and cell metadata). Scylla: Scylla's `memory_footprint_test`
    /// measures 1,194 bytes in a memtable for a partition of one row of five
    /// 32-byte cells with 10-byte partition and clustering keys (the
    /// cassandra-stress row shape), 351 bytes in a ka/la SSTable (output
    /// quoted in scylladb/scylladb PR #8490, 2021): about 1,000 bytes beyond
    /// the key and values. One row shape is measured; rows of fewer cells
    /// carry less, which a per-row figure leaves out.
    pub memtable_row_overhead_bytes: u64,
    /// SSTable data bytes per row beyond key and value bytes: the ka/la format
    /// carries partition header, deletion info, row marker and per-cell name,
    /// flags, timestamp and length (scylla-mechanisms.md section 9.2: a 10-byte
    /// key with 5 x 34-byte cells is ~314 B on disk, i.e. ~134 B of overhead
    /// for 180 B of payload; one cell costs 12 + 12 + 18 + 20 + 2 = 64 B).
    pub sstable_row_overhead_bytes: u64,
    /// How SSTable components (index, summary, filter) are sized.
    pub sstable_format: SSTableFormat,
    /// Commitlog segment size (`commitlog_segment_size_in_mb`, 32 in the
    /// shipped scylla.yaml).
    pub commitlog_segment_bytes: u64,
    /// Commitlog buffer written per I/O (Scylla allocates 128 KiB chunks).
    pub commitlog_buffer_bytes: u64,
    /// Commitlog buffer writes in flight before appends wait
    /// (`max_active_writes` = 25 per shard).
    pub commitlog_max_active_writes: u32,
    /// Commitlog disk space before it asks memtables to flush
    /// (`commitlog_total_space_in_mb` = -1: node memory, per shard about `M`).
    pub commitlog_total_space_bytes: u64,
    /// `commitlog_sync`: periodic (Scylla's default) or batch.
    pub commitlog_sync: SyncMode,
    /// `commitlog_sync_period_in_ms` (periodic mode): the buffer is written at
    /// least this often (10 s default).
    pub commitlog_sync_period: SimDuration,
    /// Bytes per SSTable write I/O during a flush (Seastar output streams use
    /// 128 KiB buffers).
    pub flush_write_bytes: u64,
    /// Flush writes in flight at once (write-behind). Estimate.
    pub flush_write_behind: u32,
    /// Fraction of the key space whose keys this shard owns (volume mode:
    /// a memtable or SSTable spanning keys `a..=b` with `r` rows holds a key
    /// routed here with probability `r / ((b - a + 1) x fraction)`).
    pub key_ownership_fraction: f64,
    /// Data mode (`[fidelity] mode = "data"`): memtables and SSTables keep
    /// their rows and reads return the newest version written; volume mode
    /// (false) carries sizes only. Same flush, compaction and controller
    /// logic either way.
    pub data_mode: bool,
    /// The table's `speculative_retry` (99.0PERCENTILE in Scylla 2.x/3.0
    /// and Cassandra 3.11).
    pub speculative_retry: SpeculativeRetry,
    /// How the speculation delay is taken from the latency percentile
    /// (Scylla: whole milliseconds; Cassandra: exact).
    pub speculation_resolution: Resolution,
    /// The row cache, if any (`None`: reads always go to the SSTables).
    pub row_cache: Option<RowCacheSetup>,
    /// Cassandra's OS page cache over SSTable Data (`None`: every data
    /// read goes to the disk, as Scylla's O_DIRECT reads do).
    pub page_cache: Option<PageCacheSetup>,
    /// `cache_hit_rate_read_balancing` (Scylla: true; Cassandra has none):
    /// reads go to replicas by cache temperature (`heat`).
    pub heat_weighted_balancing: bool,
    /// Hinted handoff (`None`: the preset keeps no hints, as Scylla before
    /// 3.0).
    pub hints: Option<crate::hints::HintsSetup>,
    /// Planted bugs, for tests of the explorer's checkers only (none but
    /// in a `planted-bugs` build: [`crate::planted`]).
    pub planted: crate::planted::Planted,
    /// The table's compression chunk (`chunk_length_in_kb`), if the table
    /// is compressed: a read then reads and decompresses whole chunks.
    /// `None`: uncompressed (c-s's default schema).
    pub compression_chunk_bytes: Option<u64>,
    /// Tables whose partitions hold many rows (a user profile's clustering
    /// columns): a whole partition's SSTable bytes, on average. Each write
    /// stores the rows it draws, so a partition's fragments in different
    /// SSTables hold different rows and a merge keeps their union, at most
    /// the whole partition; a streamed partition in data mode is a whole
    /// one. `None`: one row a partition, which a merge keeps the newest of.
    pub partition_bytes: Option<u64>,
    /// The table's compaction strategy and its options (size-tiered by
    /// default; leveled from c-s's `-schema compaction(strategy=...)`).
    pub compaction: CompactionStrategy,
    /// `compaction_enforce_min_threshold` (default false: pairs of similar
    /// SSTables are compacted when no bucket reaches min_threshold).
    pub compaction_enforce_min_threshold: bool,
    /// Bytes per compaction read, merge and write step (128 KiB buffers).
    pub compaction_chunk_bytes: u64,
    /// Chunks of one compaction in the pipeline at once. Estimate.
    pub compaction_chunks_in_flight: u32,
    /// `concurrent_compactors` (Cassandra 3.11): `Some(n)` runs
    /// Cassandra's compaction manager, at most `n` jobs at once, each from
    /// SSTables no running job holds, with no weight rule, and leveled jobs
    /// in parallel (cassandra.yaml's default is the smaller of the data
    /// directories and the cores, within 2..=8: 2 for one directory).
    /// `None`: Scylla's rules (one size-tiered job per weight, one leveled
    /// job per table), which have no such limit; Scylla 2.x-3.0 marks the
    /// option `Invalid` (`db/config.hh`).
    pub concurrent_compactors: Option<u32>,
    /// `compaction_throughput_mb_per_sec` (Cassandra 3.11, default 16 MiB/s)
    /// in bytes per second: compactions of this shard together read at most
    /// this much (a token bucket, [`crate::compaction::RateLimiter`]).
    /// Cassandra runs one shard per node, so this is per node. `None`:
    /// unthrottled (Cassandra's 0, and Scylla, which parses the option and
    /// leaves it `Unused`).
    pub compaction_throughput_bytes_per_sec: Option<u64>,
    /// The compaction controller (`None`: Scylla 2.1, no controller and no
    /// CPU shares to move).
    pub compaction_controller: Option<BacklogController>,
    /// The memtable-flush controller (`None` as above).
    pub flush_controller: Option<BacklogController>,
    /// This shard.
    pub address: ShardAddress,
    /// Where keys live: requests for keys another shard owns are forwarded.
    pub placement: Placement,
    /// Which shard a message from another node lands on
    /// ([`crate::messaging`]); the landing shard relays it to the owner.
    pub landing: crate::messaging::Landing,
    /// Replicas per key (the keyspace's replication factor).
    pub replication_factor: u32,
    /// `dclocal_read_repair_chance`: the fraction of reads that ask every
    /// replica instead of `block_for` (0.1, the table default in Cassandra
    /// 3.x and Scylla 2.x-3.x).
    pub read_repair_chance: f64,
    /// `write_request_timeout_in_ms` (2000).
    pub write_timeout: SimDuration,
    /// `read_request_timeout_in_ms` (5000).
    pub read_timeout: SimDuration,
    /// How the shard streams ranges to a peer in a topology change
    /// (`crate::streaming`): RPC per partition up to Scylla 2.3, a
    /// continuous stream from 3.0.
    pub stream_mode: crate::streaming::StreamMode,
    /// Seeds of the shard's pseudo-random choices, one stream each.
    pub seeds: ShardSeeds,
}

/// Seeds of a shard's pseudo-random streams, one per purpose, so that how
/// often one purpose draws never moves another's draws. The engine draws
/// nothing of its own: the driver derives these from the run seed and the
/// shard (the defaults are fixed, for tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardSeeds {
    /// Whether a coordinated read asks every replica (`read_repair_chance`).
    pub read_repair: u64,
    /// Which replicas heat-weighted balancing picks.
    pub heat: u64,
    /// Row-cache hits and misses in volume mode, and the writes that meet
    /// a cached row.
    pub row_cache: u64,
    /// Page-cache hits and misses in volume mode.
    pub page_cache: u64,
    /// Which connection's shard a message to another node lands on.
    pub landing: u64,
    /// Which nodes keep a LOGGED batch's batchlog.
    pub batchlog: u64,
}

impl Default for ShardSeeds {
    fn default() -> ShardSeeds {
        ShardSeeds {
            read_repair: 0x7265_6164_7265_7061,
            heat: 0x6865_6174_6261_6C21,
            row_cache: 0x726F_7763_6163_6865,
            page_cache: 0x7061_6765_6361_6368,
            landing: 0x6C61_6E64_696E_6721,
            batchlog: 0x6261_7463_686C_6F67,
        }
    }
}

impl ShardSeeds {
    /// The seeds as a list, to check them apart.
    fn all(&self) -> [u64; 6] {
        [
            self.heat,
            self.read_repair,
            self.row_cache,
            self.page_cache,
            self.landing,
            self.batchlog,
        ]
    }
}

/// SSTable data bytes per row beyond key and values
/// ([`ShardConfig::sstable_row_overhead_bytes`]'s default: one cell's name,
/// flags, timestamp and length in the ka/la format).
pub const SSTABLE_ROW_OVERHEAD_BYTES: u64 = 64;

const _: () = assert!(SSTABLE_ROW_OVERHEAD_BYTES > 0 && MIB == 1 << 20);

impl ShardConfig {
    /// Scylla 2.x defaults for a shard with `memory_bytes` of memory.
    pub fn scylla_defaults(memory_bytes: u64) -> ShardConfig {
        let config = ShardConfig {
            memory_bytes,
            dirty_memory_fraction: 0.45,
            throttle_fraction: 0.225,
            virtual_dirty_soft_limit: 0.6,
            memtable_row_overhead_bytes: 1_000,
            sstable_row_overhead_bytes: SSTABLE_ROW_OVERHEAD_BYTES,
            sstable_format: SSTableFormat::SCYLLA_CASSANDRA_STRESS,
            commitlog_segment_bytes: 32 * MIB,
            commitlog_buffer_bytes: 128 * 1024,
            commitlog_max_active_writes: 25,
            commitlog_total_space_bytes: memory_bytes,
            commitlog_sync: SyncMode::Periodic,
            commitlog_sync_period: SimDuration::from_secs(10),
            flush_write_bytes: 128 * 1024,
            flush_write_behind: 4,
            key_ownership_fraction: 1.0,
            data_mode: false,
            speculative_retry: SpeculativeRetry::DEFAULT,
            speculation_resolution: Resolution::WholeMillis,
            row_cache: None,
            page_cache: None,
            heat_weighted_balancing: true,
            hints: None,
            planted: crate::planted::Planted::NONE,
            compression_chunk_bytes: None,
            partition_bytes: None,
            compaction: CompactionStrategy::default(),
            compaction_enforce_min_threshold: false,
            compaction_chunk_bytes: 128 * 1024,
            compaction_chunks_in_flight: 4,
            concurrent_compactors: None,
            compaction_throughput_bytes_per_sec: None,
            compaction_controller: None,
            flush_controller: None,
            address: ShardAddress { node: 0, shard: 0 },
            placement: Placement::single_node(1),
            landing: crate::messaging::Landing::Owner,
            replication_factor: 1,
            read_repair_chance: 0.1,
            write_timeout: SimDuration::from_millis(2000),
            read_timeout: SimDuration::from_millis(5000),
            stream_mode: crate::streaming::StreamMode::Rpc,
            seeds: ShardSeeds::default(),
        };
        debug_assert_eq!(
            config.virtual_dirty_soft_limit,
            crate::controller::DEFAULT_VIRTUAL_DIRTY_SOFT_LIMIT,
            "the flush controller's soft limit is the config's"
        );
        debug_assert!(config.throttle_fraction <= config.dirty_memory_fraction);
        let seeds = config.seeds.all();
        assert!(
            seeds
                .iter()
                .enumerate()
                .all(|(i, seed)| !seeds[..i].contains(seed)),
            "each purpose draws from a stream of its own"
        );
        config
    }

    /// Cassandra 3.11 defaults for a node whose memtables may use
    /// `memtable_space_bytes` (`memtable_heap_space_in_mb`, a quarter of the
    /// heap): writes block only when the space is full (no throttle), a
    /// flush starts at `memtable_cleanup_threshold` = 1 / (1 +
    /// `memtable_flush_writers`) = 0.33 of it, on-heap rows cost more
    /// bookkeeping than Scylla's LSA (\[E\]: object headers, `BTree` nodes and
    /// cell objects, ~200 bytes per one-cell row), and the commitlog may
    /// hold 8 GiB (`commitlog_total_space_in_mb`). Compaction: at most 2
    /// jobs at once (`concurrent_compactors` for one data directory; the
    /// simulator sets it from the node's directories and cores) reading at
    /// most 16 MiB/s (`compaction_throughput_mb_per_sec: 16`).
    pub fn cassandra_defaults(memtable_space_bytes: u64) -> ShardConfig {
        let config = ShardConfig {
            dirty_memory_fraction: 1.0,
            throttle_fraction: 1.0,
            virtual_dirty_soft_limit: 1.0 / 3.0,
            memtable_row_overhead_bytes: 200,
            commitlog_total_space_bytes: 8 * 1024 * MIB,
            compaction_enforce_min_threshold: true,
            concurrent_compactors: Some(2),
            compaction_throughput_bytes_per_sec: Some(16 * MIB),
            // Cassandra balances with its dynamic snitch (not modelled).
            heat_weighted_balancing: false,
            hints: None,
            // `updateSpeculationThreshold` takes the percentile in
            // microseconds.
            speculation_resolution: Resolution::Exact,
            sstable_format: SSTableFormat::CASSANDRA_STRESS,
            ..ShardConfig::scylla_defaults(memtable_space_bytes)
        };
        debug_assert_eq!(
            config.throttle_bytes(),
            config.dirty_limit_bytes(),
            "Cassandra does not throttle before its memtable space is full"
        );
        config
    }

    /// Real dirty bytes at which writes wait.
    pub fn dirty_limit_bytes(&self) -> u64 {
        let limit = (self.memory_bytes as f64 * self.dirty_memory_fraction) as u64;
        debug_assert!(
            limit <= self.memory_bytes,
            "dirty memory is part of the shard's memory"
        );
        limit
    }

    /// Virtual dirty bytes at which writes wait.
    pub fn throttle_bytes(&self) -> u64 {
        let throttle = (self.memory_bytes as f64 * self.throttle_fraction) as u64;
        debug_assert!(
            throttle <= self.dirty_limit_bytes(),
            "writes are throttled at or before the dirty limit"
        );
        throttle
    }

    /// Virtual dirty bytes at which a flush starts.
    pub fn flush_soft_limit_bytes(&self) -> u64 {
        let soft = (self.throttle_bytes() as f64 * self.virtual_dirty_soft_limit) as u64;
        debug_assert!(
            soft <= self.throttle_bytes(),
            "a flush starts before writes wait"
        );
        soft
    }

    /// Checks relations the engine relies on; returns the first broken one.
    pub fn validate(&self) -> Result<(), String> {
        if self.memory_bytes < 16 * MIB {
            return Err(format!(
                "shard memory {} bytes is too small (at least 16 MiB)",
                self.memory_bytes
            ));
        }
        if !(self.throttle_fraction > 0.0 && self.throttle_fraction <= self.dirty_memory_fraction) {
            return Err("throttle fraction must be in (0, dirty memory fraction]".into());
        }
        if !(self.virtual_dirty_soft_limit > 0.0 && self.virtual_dirty_soft_limit < 1.0) {
            return Err("virtual_dirty_soft_limit must be in (0, 1)".into());
        }
        if self.commitlog_buffer_bytes == 0
            || self.commitlog_buffer_bytes > self.commitlog_segment_bytes
        {
            return Err("commitlog buffer must be non-empty and fit in a segment".into());
        }
        if self.commitlog_max_active_writes == 0 || self.flush_write_behind == 0 {
            return Err("commitlog writes and flush write-behind need at least 1 in flight".into());
        }
        if self.replication_factor == 0
            || self.replication_factor as usize > crate::coordinator::MAX_REPLICAS
            || self.replication_factor as usize != self.placement.replica_count()
        {
            return Err(format!(
                "replication factor {} must be between 1 and {} and match the placement's {} replicas per key",
                self.replication_factor,
                crate::coordinator::MAX_REPLICAS,
                self.placement.replica_count()
            ));
        }
        if self.address.node >= self.placement.nodes()
            || self.address.shard >= self.placement.shards_per_node()
        {
            return Err(format!(
                "shard {:?} is outside the placement's {} nodes x {} shards",
                self.address,
                self.placement.nodes(),
                self.placement.shards_per_node()
            ));
        }
        if !(0.0..=1.0).contains(&self.read_repair_chance) {
            return Err("read_repair_chance must be within 0..=1".into());
        }
        if !(self.key_ownership_fraction > 0.0 && self.key_ownership_fraction <= 1.0) {
            return Err("key ownership fraction must be in (0, 1]".into());
        }
        if self.compaction_chunk_bytes == 0 || self.compaction_chunks_in_flight == 0 {
            return Err(
                "compaction needs a positive chunk size and at least 1 chunk in flight".into(),
            );
        }
        if self.flush_write_bytes == 0 {
            return Err("flush write size must be positive".into());
        }
        if self.concurrent_compactors == Some(0) {
            return Err("concurrent_compactors must be at least 1".into());
        }
        if self.compaction_throughput_bytes_per_sec == Some(0) {
            return Err(
                "a compaction throughput limit must be positive (None: unthrottled)".into(),
            );
        }
        if let CompactionStrategy::Leveled(options) = &self.compaction {
            if options.sstable_size_bytes == 0 {
                return Err("leveled compaction's sstable size must be positive".into());
            }
        }
        // What passed: the limits nest as the write path expects.
        assert!(self.flush_soft_limit_bytes() <= self.throttle_bytes());
        assert!(self.throttle_bytes() <= self.dirty_limit_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scylla_limits_are_the_documented_fractions_of_memory() {
        let config = ShardConfig::scylla_defaults(1000 * MIB);
        assert_eq!(config.dirty_limit_bytes(), 450 * MIB);
        assert_eq!(config.throttle_bytes(), 225 * MIB);
        // 0.135 M, to within rounding.
        assert!(
            (config.flush_soft_limit_bytes() as f64 / (1000 * MIB) as f64 - 0.135).abs() < 1e-6
        );
        assert!(config.validate().is_ok());
    }
}

/// How a shard's row cache is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct RowCacheSetup {
    /// Size, entry overhead and write policy.
    pub config: RowCacheConfig,
    /// Scylla: the cache takes whatever shard memory the memtables and the
    /// SSTables' in-memory components leave, resized as they change
    /// (`config.capacity_bytes` is then ignored).
    pub takes_free_memory: bool,
    /// Volume mode: the reads' key popularity, hottest keys first.
    pub popularity: Option<HotMass>,
    /// Volume mode: rows of the key range the reads draw from, over the
    /// whole cluster (the shard takes its `key_ownership_fraction` of it).
    pub key_rows: f64,
    /// Volume mode: bytes of a cached row's key and values.
    pub mean_row_bytes: u64,
}

/// How a shard's OS page cache is set up (Cassandra).
#[derive(Clone, Debug, PartialEq)]
pub struct PageCacheSetup {
    /// The host's memory split and the page size.
    pub config: PageCacheConfig,
    /// Volume mode: the reads' key popularity, hottest keys first.
    pub popularity: Option<HotMass>,
    /// Volume mode: rows of the key range the reads draw from, over the
    /// whole cluster (the shard takes its `key_ownership_fraction` of it).
    pub key_rows: f64,
    /// Whether Index file pages go through the cache too (a lookup whose
    /// index page is cached reads no disk); otherwise every lookup's
    /// index read is a disk read (the 3.11 preset, as its costs were
    /// fitted).
    pub index_pages: bool,
}
