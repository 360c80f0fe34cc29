//! A shard's sizes and limits, with where each number comes from.
//!
//! Fractions of shard memory follow Scylla 2.1-3.0 (scylla-mechanisms.md
//! sections 1.3, 3.1 and 3.2, read from `dirty_memory_manager.hh` and
//! `database.cc` @2.2/@3.0): the regular dirty-memory manager gets 0.45 of
//! shard memory `M`; virtual dirty is throttled at half of that (0.225 M) and
//! flushing starts at `soft_limit` (0.6) of the throttle point (0.135 M).

use units::SimDuration;

use crate::commitlog::SyncMode;
use crate::compaction::StcsOptions;
use crate::controller::BacklogController;
use crate::placement::{Placement, ShardAddress};
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
    /// row and cell metadata). Estimate, not measured: a Scylla row with one
    /// cell costs about 100 bytes of bookkeeping in the LSA region.
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
    /// The table's compression chunk (`chunk_length_in_kb`), if the table
    /// is compressed: a read then reads and decompresses whole chunks.
    /// `None`: uncompressed (c-s's default schema).
    pub compression_chunk_bytes: Option<u64>,
    /// Size-tiered compaction options (the table's strategy).
    pub compaction: StcsOptions,
    /// `compaction_enforce_min_threshold` (default false: pairs of similar
    /// SSTables are compacted when no bucket reaches min_threshold).
    pub compaction_enforce_min_threshold: bool,
    /// Bytes per compaction read, merge and write step (128 KiB buffers).
    pub compaction_chunk_bytes: u64,
    /// Chunks of one compaction in the pipeline at once. Estimate.
    pub compaction_chunks_in_flight: u32,
    /// The compaction controller (`None`: Scylla 2.1, no controller and no
    /// CPU shares to move).
    pub compaction_controller: Option<BacklogController>,
    /// The memtable-flush controller (`None` as above).
    pub flush_controller: Option<BacklogController>,
    /// This shard.
    pub address: ShardAddress,
    /// Where keys live: requests for keys another shard owns are forwarded.
    pub placement: Placement,
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
}

impl ShardConfig {
    /// Scylla 2.x defaults for a shard with `memory_bytes` of memory.
    pub fn scylla_defaults(memory_bytes: u64) -> ShardConfig {
        ShardConfig {
            memory_bytes,
            dirty_memory_fraction: 0.45,
            throttle_fraction: 0.225,
            virtual_dirty_soft_limit: 0.6,
            memtable_row_overhead_bytes: 100,
            sstable_row_overhead_bytes: 64,
            sstable_format: SSTableFormat::CASSANDRA_STRESS,
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
            compression_chunk_bytes: None,
            compaction: StcsOptions::default(),
            compaction_enforce_min_threshold: false,
            compaction_chunk_bytes: 128 * 1024,
            compaction_chunks_in_flight: 4,
            compaction_controller: None,
            flush_controller: None,
            address: ShardAddress { node: 0, shard: 0 },
            placement: Placement {
                nodes: 1,
                shards_per_node: 1,
            },
            replication_factor: 1,
            read_repair_chance: 0.1,
            write_timeout: SimDuration::from_millis(2000),
            read_timeout: SimDuration::from_millis(5000),
        }
    }

    /// Cassandra 3.11 defaults for a node whose memtables may use
    /// `memtable_space_bytes` (`memtable_heap_space_in_mb`, a quarter of the
    /// heap): writes block only when the space is full (no throttle), a
    /// flush starts at `memtable_cleanup_threshold` = 1 / (1 +
    /// `memtable_flush_writers`) = 0.33 of it, on-heap rows cost more
    /// bookkeeping than Scylla's LSA ([E]: object headers, `BTree` nodes and
    /// cell objects, ~200 bytes per one-cell row), and the commitlog may
    /// hold 8 GiB (`commitlog_total_space_in_mb`).
    pub fn cassandra_defaults(memtable_space_bytes: u64) -> ShardConfig {
        ShardConfig {
            dirty_memory_fraction: 1.0,
            throttle_fraction: 1.0,
            virtual_dirty_soft_limit: 1.0 / 3.0,
            memtable_row_overhead_bytes: 200,
            commitlog_total_space_bytes: 8 * 1024 * MIB,
            compaction_enforce_min_threshold: true,
            ..ShardConfig::scylla_defaults(memtable_space_bytes)
        }
    }

    /// Real dirty bytes at which writes wait.
    pub fn dirty_limit_bytes(&self) -> u64 {
        (self.memory_bytes as f64 * self.dirty_memory_fraction) as u64
    }

    /// Virtual dirty bytes at which writes wait.
    pub fn throttle_bytes(&self) -> u64 {
        (self.memory_bytes as f64 * self.throttle_fraction) as u64
    }

    /// Virtual dirty bytes at which a flush starts.
    pub fn flush_soft_limit_bytes(&self) -> u64 {
        (self.throttle_bytes() as f64 * self.virtual_dirty_soft_limit) as u64
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
            || self.replication_factor > self.placement.nodes
        {
            return Err(format!(
                "replication factor {} must be between 1 and the node count ({}, at most {})",
                self.replication_factor,
                self.placement.nodes,
                crate::coordinator::MAX_REPLICAS
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
