//! SSTable descriptors: what a node knows about each SSTable on disk, and
//! the sizes of its components.
//!
//! In this model an SSTable carries sizes, row counts and its key range (the
//! "volume" fidelity of ARCHITECTURE.md). Its other components are sized
//! from its rows by [`SSTableFormat`] (the `ka`/`la` format of Cassandra 2.x
//! and Scylla up to 2.3, scylla-mechanisms.md section 9.2):
//! - *Index*: one entry per partition: 2-byte key length, the key, an
//!   8-byte Data position and a 4-byte promoted-index length
//!   (`RowIndexEntry`): 14 + key bytes.
//! - *Summary*: one entry per `min_index_interval` (128) index entries: the
//!   key, an 8-byte index position and a 4-byte offset: 12 + key bytes. Held
//!   in memory, so a lookup reads only the index block between two summary
//!   entries (128 entries, rounded up to whole 4 KiB pages).
//! - *Filter*: a bloom filter of `bloom_filter_fp_chance` 0.01: Cassandra's
//!   `BloomCalculations` picks the fewest buckets per element whose
//!   false-positive rate is at most the chance: 10 bits per partition with
//!   7 hash functions (0.82%); 9 bits gives 1.3%. Held in memory.
//! - *Data*: what the memtable or the compaction wrote (its size is the
//!   SSTable's `data_bytes`; compaction strategies and backlogs use it).
//!
//! Flushes and compactions write every component: each Data chunk written
//! carries its share of the other components ([`SSTableFormat::
//! write_bytes`]), as Scylla writes the index alongside the data and the
//! filter and summary when it seals the SSTable. CompressionInfo,
//! Statistics, TOC and Digest are a few KiB per SSTable and left out.

use std::sync::Arc;

use units::SimTime;

use crate::cells::SortedCells;

/// How an SSTable's components are sized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SSTableFormat {
    /// Partition key bytes (c-s: a 10-byte blob, scylla-mechanisms.md 9.1).
    pub key_bytes: u64,
    /// `min_index_interval`: index entries per summary entry.
    pub index_interval: u64,
    /// Bloom filter bits per partition (10 for fp chance 0.01).
    pub bloom_bits_per_partition: u64,
}

/// Device page size that index reads are rounded up to.
const PAGE_BYTES: u64 = 4096;

impl SSTableFormat {
    /// The `ka`/`la` format with c-s's 10-byte keys and the default table
    /// options (`min_index_interval` 128, `bloom_filter_fp_chance` 0.01).
    pub const CASSANDRA_STRESS: SSTableFormat = SSTableFormat {
        key_bytes: 10,
        index_interval: 128,
        bloom_bits_per_partition: 10,
    };

    /// Index bytes of `rows` partitions.
    pub fn index_bytes(&self, rows: u64) -> u64 {
        rows * (14 + self.key_bytes)
    }

    /// Summary bytes of `rows` partitions (in memory and on disk).
    pub fn summary_bytes(&self, rows: u64) -> u64 {
        rows.div_ceil(self.index_interval) * (12 + self.key_bytes)
    }

    /// Bloom filter bytes of `rows` partitions (in memory and on disk).
    pub fn filter_bytes(&self, rows: u64) -> u64 {
        (rows * self.bloom_bits_per_partition).div_ceil(8)
    }

    /// Bytes of every component but Data, per partition, as a fraction of
    /// `row_bytes` of Data per partition.
    fn overhead_per_data_byte(&self, row_bytes: f64) -> f64 {
        let per_row = (14 + self.key_bytes) as f64
            + (12 + self.key_bytes) as f64 / self.index_interval as f64
            + self.bloom_bits_per_partition as f64 / 8.0;
        per_row / row_bytes.max(1.0)
    }

    /// Bytes written to disk for a chunk of `data_bytes` of Data from an
    /// SSTable of `total_data_bytes` and `rows` partitions: the chunk plus
    /// its share of the index, summary and filter.
    pub fn write_bytes(&self, data_bytes: u64, total_data_bytes: u64, rows: u64) -> u64 {
        if rows == 0 || total_data_bytes == 0 {
            return data_bytes;
        }
        let row_bytes = total_data_bytes as f64 / rows as f64;
        data_bytes + (data_bytes as f64 * self.overhead_per_data_byte(row_bytes)).ceil() as u64
    }

    /// Bytes a lookup reads from the index: the block of index entries
    /// between two summary entries, in whole pages.
    pub fn index_read_bytes(&self) -> u64 {
        (self.index_interval * (14 + self.key_bytes)).div_ceil(PAGE_BYTES) * PAGE_BYTES
    }
}

/// One immutable SSTable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SSTable {
    /// Generation number, unique per node, increasing.
    pub generation: u64,
    /// Bytes in the Data component.
    pub data_bytes: u64,
    /// Rows (partitions, in the one-row-per-partition c-s schema).
    pub rows: u64,
    /// Smallest key written.
    pub first_key: u64,
    /// Largest key written.
    pub last_key: u64,
    /// When the SSTable was sealed.
    pub created_at: SimTime,
    /// Volume mode: the slice `[lo, hi)` of the key hash space (fixed point,
    /// out of `KEY_SHARE_ONE`) whose keys this SSTable holds, for data laid
    /// out so that each key is in exactly one SSTable (preloaded, compacted
    /// data). `None`: it holds a fraction of its range given by its density,
    /// independently of other SSTables (flushes of random writes).
    pub key_share: Option<(u64, u64)>,
    /// Data mode: the rows (`None` in volume mode).
    pub cells: Option<SortedCells>,
    /// Leveled compaction's level (`sstable_level` in the Statistics
    /// component): 0 for flushed SSTables, for every SSTable of a
    /// size-tiered table, and for leveled compaction's L0; 1 and up for
    /// the levels whose SSTables cover disjoint token ranges
    /// (`crate::compaction::lcs`).
    pub level: u32,
    /// The slice `[lo, hi)` of the token space (fixed point, out of
    /// `KEY_SHARE_ONE`; a key's token is [`crate::read::key_token`]) that
    /// the SSTable's partitions lie in, from its first to its last
    /// partition in ring order. `None`: the whole ring, as for any SSTable
    /// written from a memtable of keys spread over the ring. Leveled
    /// compaction splits its output at token boundaries, so its SSTables
    /// carry one; a read does not consult an SSTable whose range does not
    /// hold the key's token (the summary's first and last keys).
    pub token_range: Option<(u64, u64)>,
    /// Volume mode: how the SSTable's rows spread over its token range, as
    /// consecutive pieces each with its own seed range and rows. A leveled
    /// compaction's output is cut from a ring whose parts came from
    /// different inputs (keys of some seed ranges only in some token
    /// slices); one seed range and one density for the whole SSTable would
    /// misplace its rows. `None`: one piece, the SSTable's own range and
    /// rows.
    pub segments: Option<Arc<[Segment]>>,
}

/// A piece of an SSTable's token range (volume mode, see
/// `SSTable::segments`): it ends at `token_end` (exclusive) and starts where
/// the previous piece ended, the first at the start of the SSTable's token
/// range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// End of the piece's tokens (exclusive).
    pub token_end: u64,
    /// Smallest key of the piece's rows.
    pub first_key: u64,
    /// Largest key of the piece's rows.
    pub last_key: u64,
    /// Rows in the piece.
    pub rows: u64,
}

/// The whole key hash space, in `SSTable::key_share` units (2^53).
pub const KEY_SHARE_ONE: u64 = 1 << 53;

impl SSTable {
    /// A volume-mode SSTable for tests: `rows` rows over keys
    /// `first_key..=last_key`, sealed at time zero, level 0, whole ring;
    /// tests set the other fields with struct update syntax.
    #[cfg(test)]
    pub(crate) fn for_test(
        generation: u64,
        data_bytes: u64,
        rows: u64,
        first_key: u64,
        last_key: u64,
    ) -> SSTable {
        SSTable {
            generation,
            data_bytes,
            rows,
            first_key,
            last_key,
            created_at: SimTime::ZERO,
            key_share: None,
            cells: None,
            level: 0,
            token_range: None,
            segments: None,
        }
    }

    /// Bytes of the components held in memory (summary and filter).
    pub fn memory_bytes(&self, format: &SSTableFormat) -> u64 {
        format.summary_bytes(self.rows) + format.filter_bytes(self.rows)
    }

    /// Bytes of every component on disk.
    pub fn disk_bytes(&self, format: &SSTableFormat) -> u64 {
        self.data_bytes + format.index_bytes(self.rows) + self.memory_bytes(format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_of_a_cassandra_stress_sstable() {
        let format = SSTableFormat::CASSANDRA_STRESS;
        // A million 310-byte partitions (scylla-mechanisms.md 9.2).
        let rows = 1_000_000;
        let sstable = SSTable::for_test(1, rows * 310, rows, 0, rows - 1);
        assert_eq!(format.index_bytes(rows), 24_000_000);
        assert_eq!(format.summary_bytes(rows), 7_813 * 22);
        assert_eq!(format.filter_bytes(rows), 1_250_000);
        assert_eq!(sstable.memory_bytes(&format), 7_813 * 22 + 1_250_000);
        assert_eq!(
            sstable.disk_bytes(&format),
            310_000_000 + 24_000_000 + 7_813 * 22 + 1_250_000
        );
        // Writing the Data in chunks writes every component in all.
        let chunk = 128 * 1024;
        let chunks = sstable.data_bytes.div_ceil(chunk);
        let mut written = 0;
        for i in 0..chunks {
            let data = chunk.min(sstable.data_bytes - i * chunk);
            written += format.write_bytes(data, sstable.data_bytes, rows);
        }
        let expected = sstable.disk_bytes(&format) as f64;
        assert!(
            (written as f64 / expected - 1.0).abs() < 1e-4,
            "{written} vs {expected}"
        );
        // 128 index entries of 24 bytes: one 4 KiB page per lookup.
        assert_eq!(format.index_read_bytes(), 4096);
    }
}
