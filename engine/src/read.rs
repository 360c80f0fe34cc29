//! What a read touches, in volume fidelity: which memtables and SSTables hold
//! a key, which bloom filters pass, and how many bytes each lookup reads.
//!
//! In volume mode memtables and SSTables carry key ranges and row counts, not
//! the keys themselves. Whether a structure holds key `k` is decided by a
//! fixed hash of (k, the structure's id) against its density
//! `rows / ((last - first + 1) x f)`, where `f` is the fraction of the key
//! space routed to this shard (the keys of a range that belong elsewhere are
//! never asked here): the same key asked twice gets the same
//! answer, a sequentially written range holds every key, and a random
//! population of density d holds a fraction d of the keys asked for. This is
//! a deterministic function of its inputs, not a random draw, so the engine
//! stays free of randomness. A bloom filter passes for a held key and, with
//! probability `BLOOM_FILTER_FALSE_POSITIVE_RATE`, for one it does not hold.
//!
//! Preloaded data (`[data]`, as compaction leaves it) holds each key exactly
//! once: those SSTables carry a `key_share`, consecutive slices of one hash
//! of the key, so a key is found in exactly one of them. A compaction's
//! output falls back to the density rule.
//!
//! Token ranges: a key's token is another fixed hash of it ([`key_token`],
//! standing for murmur3 on the ring). An SSTable with a `token_range`
//! (leveled compaction's levels 1 and up) holds only keys whose token is in
//! it: a lookup of any other key skips it without touching its bloom
//! filter, as Scylla's and Cassandra's leveled SSTable sets do, and its
//! density counts only the keys of its slice of the ring (of the segment of
//! it the token falls in, when it has segments).
//!
//! In data mode the structures carry their rows (`cells`), and whether one
//! holds a key is looked up; bloom false positives keep the same rule.
//!
//! I/O sizes: the index summary is in memory, so a lookup reads one index
//! block (`SSTableFormat::index_read_bytes`, 4 KiB with c-s keys) and then
//! the row's data, rounded up to whole 4 KiB pages (the c-s default schema
//! is uncompressed); in a compressed table, the whole chunks holding the
//! row. Partition-index caching is left out.

use crate::coordinator::RowVersion;
use crate::memtable::Memtable;
use crate::sstable::{SSTable, KEY_SHARE_ONE};

/// False-positive rate of a bloom filter built for `bloom_filter_fp_chance`
/// 0.01 (the size-tiered default): 10 bits per partition and 7 hash
/// functions give (1 - e^(-7/10))^7 = 0.82% (`BloomCalculations`; see
/// `sstable::SSTableFormat`).
pub const BLOOM_FILTER_FALSE_POSITIVE_RATE: f64 = 0.0082;

/// Device page size reads are rounded up to.
const PAGE_BYTES: u64 = 4096;

/// A value in [0, 1) fixed by `key` and `salt` (SplitMix64 finaliser).
pub fn unit_hash(key: u64, salt: u64) -> f64 {
    let mut value = key ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    value = (value ^ (value >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    value ^= value >> 31;
    (value >> 11) as f64 / (1u64 << 53) as f64
}

/// True if a structure with `rows` rows over keys `first..=last`, salted by
/// `salt`, holds `key`.
fn holds(key: u64, first: u64, last: u64, rows: u64, salt: u64, ownership: f64) -> bool {
    if rows == 0 || key < first || key > last {
        return false;
    }
    let span = ((last - first) as f64 + 1.0) * ownership;
    let density = (rows as f64 / span).min(1.0);
    density >= 1.0 || unit_hash(key, salt) < density
}

/// Salts keep the decisions for memtables, SSTables and bloom filters apart.
const MEMTABLE_SALT: u64 = 0x6D65_6D74_6162_6C65;
const SSTABLE_SALT: u64 = 0x7373_7461_626C_6573;
const BLOOM_SALT: u64 = 0x626C_6F6F_6D66_7021;
/// One salt for every SSTable with a key share, so their slices partition the keys.
const KEY_SHARE_SALT: u64 = 0x7368_6172_6573_2121;
/// The salt of [`key_token`].
const TOKEN_SALT: u64 = 0x746F_6B65_6E5F_7269;

/// The token of `key`: its position on the ring, in `KEY_SHARE_ONE` units
/// (a fixed hash, independent of the other decisions here).
pub fn key_token(key: u64) -> u64 {
    (unit_hash(key, TOKEN_SALT) * KEY_SHARE_ONE as f64) as u64
}

/// The fraction of the ring an SSTable's token range covers (1 without one).
fn token_fraction(sstable: &SSTable) -> f64 {
    sstable.token_range.map_or(1.0, |(low, high)| {
        high.saturating_sub(low) as f64 / KEY_SHARE_ONE as f64
    })
}

/// False if `sstable` has a token range that does not hold `key`'s token.
fn token_in_range(sstable: &SSTable, key: u64) -> bool {
    sstable
        .token_range
        .is_none_or(|(low, high)| (low..high).contains(&key_token(key)))
}

/// True if `memtable` holds `key`, on a shard owning `ownership` of the keys.
pub fn memtable_contains(memtable: &Memtable, key: u64, ownership: f64) -> bool {
    if let Some(cells) = &memtable.cells {
        return cells.contains_key(&key);
    }
    holds(
        key,
        memtable.first_key,
        memtable.last_key,
        memtable.rows,
        MEMTABLE_SALT ^ memtable.id,
        ownership,
    )
}

/// True if `sstable` holds `key`, on a shard owning `ownership` of the keys.
pub fn sstable_contains(sstable: &SSTable, key: u64, ownership: f64) -> bool {
    if let Some(cells) = &sstable.cells {
        return cells.get(key).is_some();
    }
    if !token_in_range(sstable, key) {
        return false;
    }
    match sstable.key_share {
        Some((low, high)) => {
            if key < sstable.first_key || key > sstable.last_key {
                return false;
            }
            let point = (unit_hash(key, KEY_SHARE_SALT) * KEY_SHARE_ONE as f64) as u64;
            (low..high).contains(&point)
        }
        None => match &sstable.segments {
            // The piece of the SSTable's ring the key's token falls in.
            Some(segments) => {
                let token = key_token(key);
                let index = segments.partition_point(|segment| segment.token_end <= token);
                let Some(segment) = segments.get(index) else {
                    return false;
                };
                let start = match index {
                    0 => sstable.token_range.map_or(0, |(low, _)| low),
                    _ => segments[index - 1].token_end,
                };
                let fraction =
                    segment.token_end.saturating_sub(start) as f64 / KEY_SHARE_ONE as f64;
                holds(
                    key,
                    segment.first_key,
                    segment.last_key,
                    segment.rows,
                    SSTABLE_SALT ^ sstable.generation,
                    ownership * fraction,
                )
            }
            None => holds(
                key,
                sstable.first_key,
                sstable.last_key,
                sstable.rows,
                SSTABLE_SALT ^ sstable.generation,
                ownership * token_fraction(sstable),
            ),
        },
    }
}

/// The version of `key` that `memtable` returns, if it holds the key: in
/// data mode its row; in volume mode a row of the memtable's mean value
/// size, with timestamp 0 (volume mode keeps no per-key timestamps, so all
/// copies of a row are the same version).
pub fn memtable_version(
    memtable: &Memtable,
    key: u64,
    ownership: f64,
    row_overhead_bytes: u64,
) -> Option<RowVersion> {
    match &memtable.cells {
        Some(cells) => cells.get(&key).copied(),
        None => memtable_contains(memtable, key, ownership).then(|| RowVersion {
            timestamp: 0,
            value_bytes: mean_value_bytes(memtable.memory_bytes, memtable.rows, row_overhead_bytes),
        }),
    }
}

/// The version of `key` that `sstable` returns, if it holds the key (see
/// [`memtable_version`]).
pub fn sstable_version(
    sstable: &SSTable,
    key: u64,
    ownership: f64,
    row_overhead_bytes: u64,
) -> Option<RowVersion> {
    match &sstable.cells {
        Some(cells) => cells.get(key),
        None => sstable_contains(sstable, key, ownership).then(|| RowVersion {
            timestamp: 0,
            value_bytes: mean_value_bytes(sstable.data_bytes, sstable.rows, row_overhead_bytes),
        }),
    }
}

/// True if `sstable`'s bloom filter lets a lookup of `key` through: always
/// for keys it holds, with the false-positive chance for keys in its range
/// it does not (keys outside its range are excluded by the summary).
pub fn bloom_filter_passes(sstable: &SSTable, key: u64, ownership: f64) -> bool {
    if key < sstable.first_key || key > sstable.last_key || !token_in_range(sstable, key) {
        return false;
    }
    sstable_contains(sstable, key, ownership)
        || unit_hash(key, BLOOM_SALT ^ sstable.generation) < BLOOM_FILTER_FALSE_POSITIVE_RATE
}

/// Bytes of the data read for a row of `row_bytes` on disk: whole pages,
/// or, in a compressed table, the whole chunks holding it (c-s's random
/// column values do not compress, so a chunk is its full length on disk;
/// a row straddling two chunks is left out).
pub fn data_read_bytes(row_bytes: u64, compression_chunk_bytes: Option<u64>) -> u64 {
    let bytes = match compression_chunk_bytes {
        Some(chunk) => row_bytes.max(1).div_ceil(chunk) * chunk,
        None => row_bytes.max(1),
    };
    bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES
}

/// Mean column-value bytes of the rows in a structure of `bytes` and `rows`
/// with `overhead_bytes` per row beyond the 8-byte key.
pub fn mean_value_bytes(bytes: u64, rows: u64, overhead_bytes: u64) -> u32 {
    let per_row = bytes / rows.max(1);
    per_row
        .saturating_sub(8 + overhead_bytes)
        .min(u64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sstable(generation: u64, first_key: u64, last_key: u64, rows: u64) -> SSTable {
        SSTable::for_test(generation, rows * 300, rows, first_key, last_key)
    }

    #[test]
    fn a_dense_range_holds_every_key_and_nothing_outside_it() {
        let dense = sstable(1, 100, 199, 100);
        assert!((100..200).all(|key| sstable_contains(&dense, key, 1.0)));
        assert!(!sstable_contains(&dense, 99, 1.0) && !sstable_contains(&dense, 200, 1.0));
        assert!(!bloom_filter_passes(&dense, 5_000, 1.0));
        // A shard owning a quarter of the keys holds all of them from a
        // range a quarter full.
        let quarter = sstable(2, 0, 999, 250);
        assert!((0..1000).all(|key| sstable_contains(&quarter, key, 0.25)));
    }

    #[test]
    fn a_token_range_holds_only_its_slice_of_the_ring() {
        let half = KEY_SHARE_ONE / 2;
        let mut left = sstable(1, 0, 9_999, 5_000);
        left.token_range = Some((0, half));
        let mut right = sstable(2, 0, 9_999, 5_000);
        right.token_range = Some((half, KEY_SHARE_ONE));
        // Dense halves: every key is in exactly one, and a lookup consults
        // only that one (not even a false positive from the other).
        for key in 0..10_000u64 {
            let in_left = key_token(key) < half;
            assert_eq!(sstable_contains(&left, key, 1.0), in_left);
            assert_eq!(sstable_contains(&right, key, 1.0), !in_left);
            assert_eq!(bloom_filter_passes(&left, key, 1.0), in_left);
            assert_eq!(bloom_filter_passes(&right, key, 1.0), !in_left);
        }
        // Segments: the first half holds keys 5,000..9,999 only, the
        // second all of them.
        let mut segmented = sstable(3, 0, 9_999, 7_500);
        segmented.token_range = Some((0, KEY_SHARE_ONE));
        segmented.segments = Some(
            vec![
                crate::sstable::Segment {
                    token_end: half,
                    first_key: 5_000,
                    last_key: 9_999,
                    rows: 2_500,
                },
                crate::sstable::Segment {
                    token_end: KEY_SHARE_ONE,
                    first_key: 0,
                    last_key: 9_999,
                    rows: 5_000,
                },
            ]
            .into(),
        );
        for key in 0..10_000u64 {
            let expected = key_token(key) >= half || key >= 5_000;
            assert_eq!(
                sstable_contains(&segmented, key, 1.0),
                expected,
                "key {key}"
            );
        }
    }

    #[test]
    fn a_sparse_sstable_holds_its_density_and_false_positives_are_under_one_percent() {
        let sparse = sstable(7, 0, 9_999_999, 1_000_000);
        let keys = 0..200_000u64;
        let held = keys
            .clone()
            .filter(|key| sstable_contains(&sparse, *key, 1.0))
            .count() as f64;
        assert!(
            (held / 200_000.0 - 0.1).abs() < 0.003,
            "density {}",
            held / 200_000.0
        );
        let passed_not_held = keys
            .filter(|key| {
                !sstable_contains(&sparse, *key, 1.0) && bloom_filter_passes(&sparse, *key, 1.0)
            })
            .count() as f64;
        let false_positive_rate = passed_not_held / (200_000.0 - held);
        assert!(
            (false_positive_rate - 0.0082).abs() < 0.001,
            "fp {false_positive_rate}"
        );
    }

    #[test]
    fn each_structure_holds_its_own_sample_of_the_keys() {
        // Two sparse SSTables of density 0.1 over one range, of different
        // generations: each key's answer is fixed by (key, generation), and
        // the two samples are independent, so they share about 0.1 x 0.1 of
        // the keys (one salt for both would share 0.1, every key of either).
        let first = sstable(7, 0, 9_999_999, 1_000_000);
        let second = sstable(8, 0, 9_999_999, 1_000_000);
        let keys = 0..200_000u64;
        let both = keys
            .filter(|key| {
                sstable_contains(&first, *key, 1.0) && sstable_contains(&second, *key, 1.0)
            })
            .count() as f64;
        assert!(
            (both / 200_000.0 - 0.01).abs() < 0.001,
            "overlap {}",
            both / 200_000.0
        );
    }

    #[test]
    fn unit_hash_is_the_splitmix64_finaliser() {
        // Key 0 with salt i is SplitMix64's state after i steps from seed
        // 0, so the hashes are the reference generator's first outputs
        // (Vigna's splitmix64.c), as 53-bit fractions.
        let reference: [u64; 4] = [
            0xE220_A839_7B1D_CDAF,
            0x6E78_9E6A_A1B9_65F4,
            0x06C4_5D18_8009_454F,
            0xF88B_B8A8_724C_81EC,
        ];
        for (step, output) in reference.into_iter().enumerate() {
            let expected = (output >> 11) as f64 / (1u64 << 53) as f64;
            assert_eq!(unit_hash(0, step as u64 + 1), expected, "step {step}");
        }
    }

    #[test]
    fn data_reads_are_whole_pages() {
        assert_eq!(data_read_bytes(300, None), 4096);
        assert_eq!(data_read_bytes(4097, None), 8192);
        // Compressed: whole chunks (Cassandra 3.11's 64 KiB, Scylla's 4 KiB).
        assert_eq!(data_read_bytes(300, Some(65_536)), 65_536);
        assert_eq!(data_read_bytes(5_000, Some(4_096)), 8_192);
        assert_eq!(mean_value_bytes(1_000, 2, 64), 500 - 72);
    }
}
