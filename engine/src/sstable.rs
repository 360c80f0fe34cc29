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
//! - *Summary*: an in-memory sample of the index (the key, an 8-byte index
//!   position and a 4-byte offset: 12 + key bytes per entry), so that a
//!   lookup reads only the index block between two summary entries,
//!   rounded up to whole 4 KiB pages. How often it samples
//!   ([`SummarySampling`]) differs:
//!   - Cassandra: one entry per `min_index_interval` (128) partitions.
//!   - Scylla 2.x: one entry per `summary_byte_cost` x (8 + 2 + key bytes)
//!     of *Data* written (`sstable_summary_ratio` 0.0005, so a cost of 2000
//!     and one entry per 40,000 bytes with c-s's 10-byte keys;
//!     `components_writer::maybe_add_summary_entry`, `db/config.hh`), so
//!     the block holds ~130 partitions of 310 bytes but ~37 of 1.1 KB.
//!
//!   What a lookup parses differs too ([`IndexBlockParse`]): Scylla 2.x
//!   reads the whole block into an `index_list` and searches it; Cassandra
//!   scans the entries from the summary position until the key, half the
//!   block on average.
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
use crate::token_set::{TokenSet, KEY_SHARE_ONE};

/// How often the summary samples the index (module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SummarySampling {
    /// One entry per this many partitions (Cassandra's
    /// `min_index_interval`).
    Partitions(u64),
    /// One entry per `byte_cost` x (8 + 2 + key bytes) bytes of Data
    /// (Scylla 2.x's `summary_byte_cost`, 1 / `sstable_summary_ratio`).
    DataBytes {
        /// Data bytes written per byte of summary entry.
        byte_cost: u64,
    },
}

/// How much of the index block a lookup parses (module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IndexBlockParse {
    /// Every entry of the block (Scylla 2.x's `index_list`).
    Whole,
    /// The entries up to the key: half the block on average (Cassandra).
    UpToKey,
}

/// How an SSTable's components are sized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SSTableFormat {
    /// Partition key bytes (c-s: a 10-byte blob, scylla-mechanisms.md 9.1).
    pub key_bytes: u64,
    /// How often the summary samples the index.
    pub summary: SummarySampling,
    /// How much of an index block a lookup parses.
    pub index_parse: IndexBlockParse,
    /// Bloom filter bits per partition (10 for fp chance 0.01).
    pub bloom_bits_per_partition: u64,
}

/// Device page size that index reads are rounded up to.
const PAGE_BYTES: u64 = 4096;

const _: () = assert!(PAGE_BYTES.is_power_of_two());
// A bloom filter of 0.01 needs 10 bits per partition (module doc); c-s keys
// are not empty.
const _: () = assert!(SSTableFormat::CASSANDRA_STRESS.bloom_bits_per_partition == 10);
const _: () = assert!(SSTableFormat::CASSANDRA_STRESS.key_bytes > 0);

impl SSTableFormat {
    /// Cassandra's `ka`/`la` format with c-s's 10-byte keys and the default
    /// table options (`min_index_interval` 128, `bloom_filter_fp_chance`
    /// 0.01).
    pub const CASSANDRA_STRESS: SSTableFormat = SSTableFormat {
        key_bytes: 10,
        summary: SummarySampling::Partitions(128),
        index_parse: IndexBlockParse::UpToKey,
        bloom_bits_per_partition: 10,
    };

    /// Scylla 2.x-3.0 writing the same table: `sstable_summary_ratio`
    /// 0.0005 (a summary byte cost of 2000) and whole-block index parsing.
    pub const SCYLLA_CASSANDRA_STRESS: SSTableFormat = SSTableFormat {
        summary: SummarySampling::DataBytes { byte_cost: 2000 },
        index_parse: IndexBlockParse::Whole,
        ..SSTableFormat::CASSANDRA_STRESS
    };

    /// Bytes of one index entry: 2-byte key length, the key, an 8-byte
    /// Data position and a 4-byte promoted-index length.
    fn index_entry_bytes(&self) -> u64 {
        14 + self.key_bytes
    }

    /// Bytes of one summary entry (in memory and on disk).
    fn summary_entry_bytes(&self) -> u64 {
        12 + self.key_bytes
    }

    /// Partitions per summary entry for partitions of `row_bytes` of Data
    /// each: the index entries in the block a lookup reads.
    pub fn index_block_entries(&self, row_bytes: u64) -> u64 {
        let entries = match self.summary {
            SummarySampling::Partitions(every) => every.max(1),
            SummarySampling::DataBytes { byte_cost } => {
                debug_assert!(byte_cost > 0, "a summary byte cost is positive");
                (byte_cost * (8 + 2 + self.key_bytes)).div_ceil(row_bytes.max(1))
            }
        };
        debug_assert!(
            entries >= 1,
            "a summary entry covers at least one partition"
        );
        entries
    }

    /// Index bytes of `rows` partitions.
    pub fn index_bytes(&self, rows: u64) -> u64 {
        debug_assert!(self.index_entry_bytes() > self.key_bytes);
        rows * self.index_entry_bytes()
    }

    /// Summary bytes of `rows` partitions holding `data_bytes` of Data (in
    /// memory and on disk).
    pub fn summary_bytes(&self, rows: u64, data_bytes: u64) -> u64 {
        let row_bytes = data_bytes / rows.max(1);
        let bytes = rows.div_ceil(self.index_block_entries(row_bytes)) * self.summary_entry_bytes();
        debug_assert!(
            bytes <= self.index_bytes(rows),
            "the summary samples the index: it is never larger"
        );
        bytes
    }

    /// Bloom filter bytes of `rows` partitions (in memory and on disk).
    pub fn filter_bytes(&self, rows: u64) -> u64 {
        debug_assert!(
            self.bloom_bits_per_partition > 0,
            "a bloom filter has bits for each partition"
        );
        (rows * self.bloom_bits_per_partition).div_ceil(8)
    }

    /// Bytes of every component but Data, per partition, as a fraction of
    /// `row_bytes` of Data per partition.
    fn overhead_per_data_byte(&self, row_bytes: f64) -> f64 {
        let block = self.index_block_entries(row_bytes.round() as u64) as f64;
        let per_row = self.index_entry_bytes() as f64
            + self.summary_entry_bytes() as f64 / block
            + self.bloom_bits_per_partition as f64 / 8.0;
        let overhead = per_row / row_bytes.max(1.0);
        debug_assert!(overhead.is_finite() && overhead > 0.0);
        overhead
    }

    /// Bytes written to disk for a chunk of `data_bytes` of Data from an
    /// SSTable of `total_data_bytes` and `rows` partitions: the chunk plus
    /// its share of the index, summary and filter.
    pub fn write_bytes(&self, data_bytes: u64, total_data_bytes: u64, rows: u64) -> u64 {
        if rows == 0 || total_data_bytes == 0 {
            return data_bytes;
        }
        debug_assert!(
            data_bytes <= total_data_bytes,
            "a chunk is part of its SSTable's Data"
        );
        let row_bytes = total_data_bytes as f64 / rows as f64;
        let bytes =
            data_bytes + (data_bytes as f64 * self.overhead_per_data_byte(row_bytes)).ceil() as u64;
        debug_assert!(bytes >= data_bytes);
        bytes
    }

    /// Bytes a lookup reads from the index of an SSTable of `row_bytes`
    /// partitions: the block of index entries between two summary entries,
    /// in whole pages.
    pub fn index_read_bytes(&self, row_bytes: u64) -> u64 {
        let bytes = (self.index_block_entries(row_bytes) * self.index_entry_bytes())
            .div_ceil(PAGE_BYTES)
            * PAGE_BYTES;
        debug_assert!(bytes >= PAGE_BYTES, "an index lookup reads at least a page");
        bytes
    }

    /// Index bytes a lookup parses in an SSTable of `row_bytes` partitions
    /// (the CPU of [`crate::CpuWork::IndexParse`]).
    pub fn index_parsed_bytes(&self, row_bytes: u64) -> u64 {
        let block = self.index_block_entries(row_bytes) * self.index_entry_bytes();
        let parsed = match self.index_parse {
            IndexBlockParse::Whole => block,
            IndexBlockParse::UpToKey => block.div_ceil(2),
        };
        debug_assert!(
            parsed <= self.index_read_bytes(row_bytes),
            "a lookup parses no more than it read"
        );
        parsed
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
    /// The newest write timestamp it holds (microseconds, as clients
    /// assign them; Scylla's and Cassandra's Statistics "max timestamp"):
    /// a flush's memtable's newest, a compaction's newest input's; 0 where
    /// no write time is known (data laid out before the run, streamed
    /// rows in volume mode). Time-window compaction files the SSTable by
    /// it (`crate::compaction::twcs`).
    pub max_timestamp_us: u64,
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
    /// The slice `[lo, hi)` of the ring, in positions (out of
    /// `KEY_SHARE_ONE`; a key's is [`crate::read::key_position`], the ring
    /// token's place, see [`crate::token_set`]) that
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
    /// The slices of the ring that hold all its partitions, when that is
    /// less than what the shard owns: a streamed SSTable holds its plan's
    /// ranges only, and a compaction of such SSTables their union. `None`:
    /// any key the shard owns in its token range (flushes of the shard's
    /// own writes, and anything compacted with one).
    pub token_set: Option<TokenSet>,
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

impl SSTable {
    /// What every SSTable holds: its key range ordered when it has rows;
    /// its key share, token range and token set inside the ring and not
    /// empty, the token set inside the token range; its segments in
    /// increasing token order, ending inside the token range, each with an
    /// ordered key range inside the SSTable's; data mode's rows inside the
    /// key range. O(segments), a few per SSTable.
    pub fn check_invariants(&self) {
        assert!(
            self.rows == 0 || self.first_key <= self.last_key,
            "SSTable {}: keys {}..={} out of order",
            self.generation,
            self.first_key,
            self.last_key
        );
        if let Some((low, high)) = self.key_share {
            assert!(
                low < high && high <= KEY_SHARE_ONE,
                "a key share is a slice of the space"
            );
        }
        let (range_low, range_high) = self.token_range.unwrap_or((0, KEY_SHARE_ONE));
        assert!(
            range_low < range_high && range_high <= KEY_SHARE_ONE,
            "SSTable {}: token range {range_low}..{range_high}",
            self.generation
        );
        if let Some((start, end)) = self.token_set.as_ref().and_then(TokenSet::span) {
            assert!(
                range_low <= start && end <= range_high,
                "a token set lies inside its SSTable's token range"
            );
        }
        if let Some(segments) = &self.segments {
            assert!(!segments.is_empty(), "an SSTable with segments has one");
            let mut start = range_low;
            for segment in segments.iter() {
                assert!(start < segment.token_end, "segments go forward on the ring");
                assert!(segment.first_key <= segment.last_key || segment.rows == 0);
                start = segment.token_end;
            }
            assert!(start <= range_high, "segments end inside the token range");
        }
        if let Some((first, last)) = self.cells.as_ref().and_then(SortedCells::key_range) {
            assert!(
                self.first_key <= first && last <= self.last_key,
                "an SSTable's rows lie inside its key range"
            );
        }
    }

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
            max_timestamp_us: 0,
            key_share: None,
            cells: None,
            level: 0,
            token_range: None,
            segments: None,
            token_set: None,
        }
    }

    /// The positions `[lo, hi)` from its first partition to its last: its
    /// token range, else its token set's span, else the whole ring.
    pub fn token_extent(&self) -> (u64, u64) {
        let extent = self
            .token_range
            .or_else(|| self.token_set.as_ref().and_then(TokenSet::span))
            .unwrap_or((0, KEY_SHARE_ONE));
        debug_assert!(extent.0 < extent.1 && extent.1 <= KEY_SHARE_ONE);
        extent
    }

    /// Bytes of the components held in memory (summary and filter).
    pub fn memory_bytes(&self, format: &SSTableFormat) -> u64 {
        format.summary_bytes(self.rows, self.data_bytes) + format.filter_bytes(self.rows)
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
    #[should_panic(expected = "segments go forward on the ring")]
    fn segments_out_of_ring_order_are_caught() {
        let segment = |token_end| Segment {
            token_end,
            first_key: 0,
            last_key: 10,
            rows: 5,
        };
        let sstable = SSTable {
            segments: Some(vec![segment(1_000), segment(500)].into()),
            ..SSTable::for_test(1, 3_000, 10, 0, 10)
        };
        sstable.check_invariants();
    }

    #[test]
    fn components_of_a_cassandra_stress_sstable() {
        let format = SSTableFormat::CASSANDRA_STRESS;
        // A million 310-byte partitions (scylla-mechanisms.md 9.2).
        let rows = 1_000_000;
        let sstable = SSTable::for_test(1, rows * 310, rows, 0, rows - 1);
        assert_eq!(format.index_bytes(rows), 24_000_000);
        assert_eq!(format.summary_bytes(rows, rows * 310), 7_813 * 22);
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
        // 128 index entries of 24 bytes: one 4 KiB page per lookup, half
        // of it parsed on average.
        assert_eq!(format.index_read_bytes(310), 4096);
        assert_eq!(format.index_parsed_bytes(310), 64 * 24);
    }

    #[test]
    fn scylla_samples_its_summary_by_data_bytes() {
        let format = SSTableFormat::SCYLLA_CASSANDRA_STRESS;
        // One summary entry per 2000 x 20 = 40,000 bytes of Data.
        assert_eq!(format.index_block_entries(310), 130);
        assert_eq!(format.index_block_entries(1100), 37);
        assert_eq!(format.index_block_entries(40_000), 1);
        assert_eq!(format.index_block_entries(1_000_000), 1);
        // The whole block is parsed: 130 entries of 24 bytes, in one page.
        assert_eq!(format.index_parsed_bytes(310), 130 * 24);
        assert_eq!(format.index_read_bytes(310), 4096);
        assert_eq!(format.index_parsed_bytes(1100), 37 * 24);
        // The summary of 1.1 KB partitions is 3.5x Cassandra's.
        let rows = 1_000_000;
        assert_eq!(format.summary_bytes(rows, rows * 1100), 27_028 * 22);
    }
}
