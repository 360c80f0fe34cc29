//! What a read touches, in volume fidelity: which memtables and SSTables hold
//! a key, which bloom filters pass, how many bytes each lookup reads, and
//! what it returns.
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
//! Token ranges: a key's place on the ring is its Murmur3 token's position
//! ([`key_position`], `crate::token_set`). An SSTable with a `token_range`
//! (leveled compaction's levels 1 and up) or a `token_set` (streamed data)
//! holds only keys whose position is in it: a lookup of any other key skips
//! it without touching its bloom filter, as Scylla's and Cassandra's
//! leveled SSTable sets do, and its density counts only the keys of its
//! part of the ring (of the segment of it the token falls in, when it has
//! segments).
//!
//! Those decisions price a read (which SSTables it reads). What the read
//! returns in volume mode is decided apart, by the shard's [`Population`]:
//! from the writes it applied, counted per ring range, so that replicas
//! that received the same writes return the same version whatever their
//! flushes and compactions made of them.
//!
//! In data mode the structures carry their rows (`cells`), and whether one
//! holds a key is looked up; bloom false positives keep the same rule.
//!
//! I/O sizes: the index summary is in memory, so a lookup reads one index
//! block (`SSTableFormat::index_read_bytes`, 4 KiB with c-s keys) and then
//! the row's data, rounded up to whole 4 KiB pages (the c-s default schema
//! is uncompressed); in a compressed table, the whole chunks holding the
//! row. Partition-index caching is left out.

use crate::cells::RowVersion;
use crate::memtable::Memtable;
use crate::ring::{span_width, ReplicaMap};
use crate::sstable::SSTable;
use crate::token_set::position_of;
use crate::token_set::KEY_SHARE_ONE;

/// False-positive rate of a bloom filter built for `bloom_filter_fp_chance`
/// 0.01 (the size-tiered default): 10 bits per partition and 7 hash
/// functions give (1 - e^(-7/10))^7 = 0.82% (`BloomCalculations`; see
/// `sstable::SSTableFormat`).
pub const BLOOM_FILTER_FALSE_POSITIVE_RATE: f64 = 0.0082;

/// Device page size reads are rounded up to.
const PAGE_BYTES: u64 = 4096;

const _: () = assert!(PAGE_BYTES.is_power_of_two());
const _: () = assert!(
    0.0 < BLOOM_FILTER_FALSE_POSITIVE_RATE && BLOOM_FILTER_FALSE_POSITIVE_RATE < 0.01,
    "a bloom filter built for 1% lets fewer than 1% through"
);

/// A value in [0, 1) fixed by `key` and `salt` (SplitMix64 finaliser).
pub fn unit_hash(key: u64, salt: u64) -> f64 {
    let value = units::mix64(key ^ salt.wrapping_mul(units::GOLDEN_GAMMA));
    let unit = (value >> 11) as f64 / (1u64 << 53) as f64;
    debug_assert!((0.0..1.0).contains(&unit));
    unit
}

/// True if a structure with `rows` rows over keys `first..=last`, salted by
/// `salt`, holds `key`.
fn holds(key: u64, first: u64, last: u64, rows: u64, salt: u64, ownership: f64) -> bool {
    debug_assert!(
        (0.0..=1.0 + 1e-9).contains(&ownership),
        "an ownership is a fraction: {ownership}"
    );
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
// Distinct salts, or two structures' decisions would be the same draw.
const _: () = assert!(MEMTABLE_SALT != SSTABLE_SALT && SSTABLE_SALT != BLOOM_SALT);
const _: () = assert!(BLOOM_SALT != KEY_SHARE_SALT && MEMTABLE_SALT != KEY_SHARE_SALT);
/// The position of `key` on the ring, in `KEY_SHARE_ONE` units: its
/// Murmur3 token's ([`crate::token_set::position_of`]).
#[inline]
pub fn key_position(key: u64) -> u64 {
    position_of(crate::placement::key_token(key))
}

/// The fraction of the ring in `[low, high)` that `sstable` may hold keys
/// of (all of it without a token set).
fn ring_fraction(sstable: &SSTable, low: u64, high: u64) -> f64 {
    debug_assert!(high <= KEY_SHARE_ONE, "a slice of the ring ends inside it");
    let width = match &sstable.token_set {
        Some(set) => set.width_within(low, high),
        None => high.saturating_sub(low),
    };
    let fraction = width as f64 / KEY_SHARE_ONE as f64;
    debug_assert!((0.0..=1.0).contains(&fraction));
    fraction
}

/// The fraction of the ring `sstable` may hold keys of: its token range's,
/// less what its token set leaves out.
fn token_fraction(sstable: &SSTable) -> f64 {
    let (low, high) = sstable.token_range.unwrap_or((0, KEY_SHARE_ONE));
    debug_assert!(low < high, "an SSTable's token range is not empty");
    ring_fraction(sstable, low, high)
}

/// False if `sstable`'s token range or token set leaves out `key`'s
/// position (computed only for an SSTable with one).
fn token_in_range(sstable: &SSTable, key: u64) -> bool {
    if sstable.token_range.is_none() && sstable.token_set.is_none() {
        return true;
    }
    let position = key_position(key);
    sstable
        .token_range
        .is_none_or(|(low, high)| (low..high).contains(&position))
        && sstable
            .token_set
            .as_ref()
            .is_none_or(|set| set.contains(position))
}

/// True if `memtable` holds `key`, on a shard owning `ownership` of the keys.
pub fn memtable_contains(memtable: &Memtable, key: u64, ownership: f64) -> bool {
    if let Some(cells) = &memtable.cells {
        let held = cells.contains_key(&key);
        debug_assert!(
            !held || (memtable.first_key..=memtable.last_key).contains(&key),
            "a memtable holds keys inside its range"
        );
        return held;
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
        let held = cells.get(key).is_some();
        debug_assert!(
            !held || (sstable.first_key..=sstable.last_key).contains(&key),
            "an SSTable holds keys inside its range"
        );
        return held;
    }
    if !token_in_range(sstable, key) {
        return false;
    }
    match sstable.key_share {
        Some((low, high)) => {
            if key < sstable.first_key || key > sstable.last_key {
                return false;
            }
            (low..high).contains(&key_share_point(key))
        }
        None => match &sstable.segments {
            // The piece of the SSTable's ring the key's token falls in.
            Some(segments) => {
                let token = key_position(key);
                let index = segments.partition_point(|segment| segment.token_end <= token);
                let Some(segment) = segments.get(index) else {
                    return false;
                };
                let start = match index {
                    0 => sstable.token_range.map_or(0, |(low, _)| low),
                    _ => segments[index - 1].token_end,
                };
                debug_assert!(
                    start <= token && token < segment.token_end,
                    "the segment found holds the key's token"
                );
                let fraction = ring_fraction(sstable, start, segment.token_end);
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

/// Data mode: the version of `key` that `memtable` holds, if any (volume
/// mode keeps no rows: `None`; see [`Population`]).
pub fn memtable_version(memtable: &Memtable, key: u64) -> Option<RowVersion> {
    memtable.cells.as_ref()?.get(&key).copied()
}

/// Data mode: the version of `key` that `sstable` holds, if any (volume
/// mode: `None`; see [`Population`]).
pub fn sstable_version(sstable: &SSTable, key: u64) -> Option<RowVersion> {
    sstable.cells.as_ref()?.get(key)
}

/// Salt of [`Population`]'s decisions.
const WRITTEN_SALT: u64 = 0x7772_6974_7465_6E21;

/// Volume mode: which keys a shard has received, and the version it
/// returns for them, from the writes it applied alone (not from its
/// memtables and SSTables, whose boundaries differ from replica to
/// replica with flush and compaction timing).
///
/// Writes are counted per ring range (with the written keys' extent and
/// value bytes). The replicas of a key receive every write to its range
/// (each on the same shard index), so replicas that applied the same
/// writes hold the same counts and give the same answer for every key of
/// the range: they disagree only while a write is in flight to one and not
/// yet to another. A key of the range is held if it lies in the written
/// extent and, when the writes are fewer than the range's keys in that
/// extent on this shard, if a fixed hash of the key falls under that
/// density (the same rule as [`sstable_contains`], but one draw per key,
/// not per structure). Held keys return the range's mean value size with
/// timestamp 1. Preloaded keys (`[data]`) are held as the preload's key
/// shares hold them, with its row size and timestamp 0, so a written
/// version wins.
///
/// Left out: per-key timestamps (two replicas that received a key's
/// writes in a different order agree here), and a write's own key (a read
/// right after a write to a key of a sparse range may still miss it).
/// So a replica that missed writes differs from its peers only by its
/// counts: once a range's writes reach its keys (overwrites, or a few
/// percent more writes than the estimate of the range's keys) every key
/// reads as held on all replicas, and the writes it missed do not show.
/// Divergence after faults is visible where keys are written about once
/// and the replica missed more than a few percent of its range's writes
/// (`scenarios/hints-40-scylla-2.3.toml`); data mode shows it exactly.
/// Unlike real replicas, a write in flight is not confined to its own key:
/// one more write to a range flips the answer for the keys whose hash lies
/// at the density's edge (about one key of the range per write), so a
/// QUORUM read racing a write to another key of its range now and then
/// sees a digest mismatch (about one read in 10^5-10^6 under a mixed load;
/// the full-data reads that follow agree, and nothing is repaired).
#[derive(Clone, Debug, Default)]
pub struct Population {
    /// Writes per ring range. A hash map, not an ordered one: every use
    /// adds integer counts or takes minima and maxima, so the order of a
    /// walk never shows, and a write or read finds its range in one probe
    /// where a B-tree took three cache misses on the 40-node benchmark.
    ranges: rustc_hash::FxHashMap<u32, Written>,
    preload: Option<Preloaded>,
}

#[derive(Clone, Copy, Debug)]
struct Written {
    writes: u64,
    first_key: u64,
    last_key: u64,
    value_bytes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Preloaded {
    first_key: u64,
    last_key: u64,
    /// Keys whose key-share point is below this are held.
    share_end: u64,
    value_bytes: u32,
}

impl Population {
    /// Counts a write of `value_bytes` to `key` of ring range `range`.
    pub fn record_write(&mut self, range: usize, key: u64, value_bytes: u32) {
        debug_assert!(range <= u32::MAX as usize, "a ring range index fits a u32");
        let written = self.ranges.entry(range as u32).or_insert(Written {
            writes: 0,
            first_key: key,
            last_key: key,
            value_bytes: 0,
        });
        written.writes += 1;
        written.first_key = written.first_key.min(key);
        written.last_key = written.last_key.max(key);
        written.value_bytes += u64::from(value_bytes);
        debug_assert!(written.first_key <= key && key <= written.last_key);
    }

    /// What must hold for every range counted: at least one write, an
    /// ordered key extent; and a preload's extent ordered, its key shares
    /// inside the key-share space. O(ranges): run it after the rare
    /// re-keying and absorbing, not per write.
    pub fn check_invariants(&self) {
        for written in self.ranges.values() {
            assert!(written.writes > 0, "a range counted was written");
            assert!(written.first_key <= written.last_key);
        }
        if let Some(preload) = self.preload {
            assert!(preload.first_key <= preload.last_key);
            assert!(preload.share_end <= KEY_SHARE_ONE);
        }
    }

    /// Writes and value bytes over every range.
    fn totals(&self) -> (u64, u64) {
        self.ranges
            .values()
            .fold((0, 0), |(writes, bytes), written| {
                (writes + written.writes, bytes + written.value_bytes)
            })
    }

    /// Re-keys the counts from the ranges of `old` to those of `new` (the
    /// ring changed: a node joined or left). A count is split over the new
    /// ranges its old range overlaps in proportion to the overlap's width,
    /// and counts that land in one new range add up: its density is kept,
    /// and every replica that held the same counts re-keys them alike.
    pub fn rekey(&mut self, old: &ReplicaMap, new: &ReplicaMap) {
        if self.ranges.is_empty() {
            return;
        }
        let totals_before = if cfg!(debug_assertions) {
            self.totals()
        } else {
            (0, 0)
        };
        let mut rekeyed: rustc_hash::FxHashMap<u32, Written> = Default::default();
        for (&range, written) in &self.ranges {
            let (start, end) = old.range_bounds(range as usize);
            let width = span_width(start, end);
            let mut pieces = Vec::new();
            let mut index = new.range_index(start.wrapping_add(1));
            let mut covered = 0u128;
            while covered < width {
                let (_, piece_end) = new.range_bounds(index);
                // The piece of (start, end] up to this new range's end.
                let up_to = span_width(start, piece_end).min(width);
                let up_to = if up_to == 0 { width } else { up_to };
                pieces.push((index as u32, up_to - covered));
                covered = up_to;
                index = (index + 1) % new.range_count();
            }
            debug_assert_eq!(covered, width, "the new ranges cover the old one exactly");
            let (mut writes_left, mut bytes_left) = (written.writes, written.value_bytes);
            for (position, &(index, piece)) in pieces.iter().enumerate() {
                let (writes, bytes) = if position + 1 == pieces.len() {
                    (writes_left, bytes_left)
                } else {
                    let share = |count: u64| (u128::from(count) * piece / width) as u64;
                    (share(written.writes), share(written.value_bytes))
                };
                writes_left -= writes;
                bytes_left -= bytes;
                if writes == 0 {
                    continue;
                }
                let entry = rekeyed.entry(index).or_insert(Written {
                    writes: 0,
                    first_key: written.first_key,
                    last_key: written.last_key,
                    value_bytes: 0,
                });
                entry.writes += writes;
                entry.value_bytes += bytes;
                entry.first_key = entry.first_key.min(written.first_key);
                entry.last_key = entry.last_key.max(written.last_key);
            }
            debug_assert_eq!(
                (writes_left, bytes_left),
                (0, 0),
                "a range's counts are split whole"
            );
        }
        self.ranges = rekeyed;
        if cfg!(debug_assertions) {
            assert_eq!(
                self.totals().0,
                totals_before.0,
                "re-keying keeps every write"
            );
            self.check_invariants();
        }
    }

    /// The counts of the ranges of `map` that `keep` accepts (by range
    /// index), to hand to a node that takes those ranges over (streaming).
    pub fn of_ranges(&self, keep: impl Fn(usize) -> bool) -> Population {
        let part = Population {
            ranges: self
                .ranges
                .iter()
                .filter(|(&range, _)| keep(range as usize))
                .map(|(&range, &written)| (range, written))
                .collect(),
            preload: self.preload,
        };
        debug_assert!(part.ranges.len() <= self.ranges.len());
        part
    }

    /// Adds the counts of `other` (streamed in from a peer, keyed by the
    /// same ranges) to this shard's; its preload extent too, if this shard
    /// has none.
    pub fn absorb(&mut self, other: &Population) {
        let expected = if cfg!(debug_assertions) {
            let (mine, theirs) = (self.totals(), other.totals());
            (mine.0 + theirs.0, mine.1 + theirs.1)
        } else {
            (0, 0)
        };
        for (&range, written) in &other.ranges {
            let entry = self.ranges.entry(range).or_insert(Written {
                writes: 0,
                first_key: written.first_key,
                last_key: written.last_key,
                value_bytes: 0,
            });
            entry.writes += written.writes;
            entry.value_bytes += written.value_bytes;
            entry.first_key = entry.first_key.min(written.first_key);
            entry.last_key = entry.last_key.max(written.last_key);
        }
        if self.preload.is_none() {
            self.preload = other.preload;
        }
        if cfg!(debug_assertions) {
            assert_eq!(self.totals(), expected, "absorbing adds the other's counts");
            self.check_invariants();
        }
    }

    /// Records a preload over `first_key..=last_key` whose key shares end
    /// at `share_end`, of rows with `value_bytes` of values.
    pub fn record_preload(
        &mut self,
        first_key: u64,
        last_key: u64,
        share_end: u64,
        value_bytes: u32,
    ) {
        assert!(first_key <= last_key, "a preload's key range is ordered");
        assert!(
            share_end <= KEY_SHARE_ONE,
            "a preload's key shares end inside the key-share space"
        );
        self.preload = Some(Preloaded {
            first_key,
            last_key,
            share_end,
            value_bytes,
        });
    }

    /// The version of `key` (of ring range `range`) this shard returns;
    /// `range_share` is the fraction of the keys in an extent that belong
    /// to the range and this shard.
    pub fn version(&self, key: u64, range: usize, range_share: f64) -> Option<RowVersion> {
        debug_assert!(
            range_share > 0.0 && range_share <= 1.0,
            "a range's share of the keys is a fraction: {range_share}"
        );
        let written = self.ranges.get(&(range as u32)).filter(|written| {
            (written.first_key..=written.last_key).contains(&key) && {
                let keys = ((written.last_key - written.first_key) as f64 + 1.0) * range_share;
                let density = written.writes as f64 / keys;
                density >= 1.0 || unit_hash(key, WRITTEN_SALT) < density
            }
        });
        if let Some(written) = written {
            return Some(RowVersion {
                timestamp: 1,
                value_bytes: (written.value_bytes / written.writes) as u32,
            });
        }
        let preload = self.preload.filter(|preload| {
            (preload.first_key..=preload.last_key).contains(&key)
                && key_share_point(key) < preload.share_end
        })?;
        Some(RowVersion {
            timestamp: 0,
            value_bytes: preload.value_bytes,
        })
    }
}

/// Where `key` falls in the key-share space (see `SSTable::key_share`).
fn key_share_point(key: u64) -> u64 {
    let point = (unit_hash(key, KEY_SHARE_SALT) * KEY_SHARE_ONE as f64) as u64;
    debug_assert!(point < KEY_SHARE_ONE);
    point
}

/// True if `sstable`'s bloom filter lets a lookup of `key` through: always
/// for keys it holds, with the false-positive chance for keys in its range
/// it does not (keys outside its range are excluded by the summary).
pub fn bloom_filter_passes(sstable: &SSTable, key: u64, ownership: f64) -> bool {
    // Data mode knows its rows: a row the SSTable holds always passes, even
    // where its token slices say otherwise (a streamed SSTable's slices are
    // its rows' share of the plan's ranges, not their exact tokens).
    if sstable
        .cells
        .as_ref()
        .is_some_and(|cells| cells.get(key).is_some())
    {
        return true;
    }
    if key < sstable.first_key || key > sstable.last_key || !token_in_range(sstable, key) {
        debug_assert!(
            !sstable_contains(sstable, key, ownership),
            "the summary never excludes a key the SSTable holds"
        );
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
    debug_assert!(
        compression_chunk_bytes != Some(0),
        "a compression chunk is not empty"
    );
    let bytes = match compression_chunk_bytes {
        Some(chunk) => row_bytes.max(1).div_ceil(chunk) * chunk,
        None => row_bytes.max(1),
    };
    let read = bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES;
    debug_assert!(
        read >= row_bytes && read.is_multiple_of(PAGE_BYTES),
        "a read is whole pages holding the row"
    );
    read
}

/// Mean column-value bytes of the rows in a structure of `bytes` and `rows`
/// with `overhead_bytes` per row beyond the 8-byte key.
pub fn mean_value_bytes(bytes: u64, rows: u64, overhead_bytes: u64) -> u32 {
    debug_assert!(rows > 0 || bytes == 0, "bytes without rows");
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
    fn a_token_set_holds_only_keys_of_its_slices_at_their_density() {
        use crate::token_set::TokenSet;
        let quarter = KEY_SHARE_ONE / 4;
        // Every key of two quarters of the ring (half the keys).
        let mut streamed = sstable(1, 0, 9_999, 5_000);
        streamed.token_set = Some(TokenSet::from_slices(vec![
            (0, quarter),
            (2 * quarter, 3 * quarter),
        ]));
        for key in 0..10_000u64 {
            let position = key_position(key);
            let inside = position < quarter || (2 * quarter..3 * quarter).contains(&position);
            assert_eq!(sstable_contains(&streamed, key, 1.0), inside, "key {key}");
            assert_eq!(
                bloom_filter_passes(&streamed, key, 1.0),
                inside,
                "key {key}"
            );
        }
    }

    #[test]
    fn a_data_mode_sstable_passes_every_row_it_holds_whatever_its_token_slices() {
        use crate::cells::{RowVersion, SortedCells};
        use crate::token_set::TokenSet;
        let quarter = KEY_SHARE_ONE / 4;
        let rows: std::collections::BTreeMap<u64, RowVersion> = (0..1_000u64)
            .map(|key| {
                let version = RowVersion {
                    timestamp: 1,
                    value_bytes: 10,
                };
                (key, version)
            })
            .collect();
        let mut streamed = sstable(1, 0, 999, 1_000);
        streamed.cells = Some(SortedCells::from_map(&rows));
        // Slices that leave out three quarters of the ring, as a streamed
        // SSTable's share of its plan's ranges can.
        streamed.token_set = Some(TokenSet::from_slices(vec![(0, quarter)]));
        let outside = (0..1_000u64)
            .filter(|&key| key_position(key) >= quarter)
            .count();
        assert!(outside > 500, "most rows lie outside the slices");
        for key in 0..1_000u64 {
            assert!(sstable_contains(&streamed, key, 1.0), "key {key}");
            assert!(bloom_filter_passes(&streamed, key, 1.0), "key {key}");
        }
        assert!(!bloom_filter_passes(&streamed, 5_000, 1.0), "past its keys");
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
            let in_left = key_position(key) < half;
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
            let expected = key_position(key) >= half || key >= 5_000;
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
    fn populations_that_applied_the_same_writes_agree_on_every_key() {
        // Two replicas get the same writes of ranges 0 and 1, in a
        // different order; a third misses the last (to range 1).
        let writes: Vec<(usize, u64)> = (0..2_000u64)
            .map(|i| ((i % 2) as usize, i.wrapping_mul(7_919) % 100_000))
            .collect();
        let applied = |writes: &mut dyn Iterator<Item = &(usize, u64)>| {
            let mut population = Population::default();
            for &(range, key) in writes {
                population.record_write(range, key, 1_000);
            }
            population
        };
        let first = applied(&mut writes.iter());
        let second = applied(&mut writes.iter().rev());
        let third = applied(&mut writes[..writes.len() - 1].iter());
        let answers = |population: &Population, range: usize| -> Vec<Option<RowVersion>> {
            (0..100_000u64)
                .map(|key| population.version(key, range, 0.1))
                .collect()
        };
        for range in [0, 1] {
            assert!(answers(&first, range) == answers(&second, range));
        }
        // 1,000 writes over the ~10,000 keys of the extent that belong to
        // the range on this shard: a tenth of the keys asked are held,
        // each with its value size.
        let held = answers(&first, 0).into_iter().flatten().collect::<Vec<_>>();
        assert!(
            (held.len() as f64 / 100_000.0 - 0.1).abs() < 0.01,
            "{}",
            held.len()
        );
        assert!(held.iter().all(|version| version.value_bytes == 1_000));
        // The replica short of a write to range 1 agrees on range 0 only.
        assert!(answers(&first, 0) == answers(&third, 0));
        assert!(answers(&first, 1) != answers(&third, 1));
    }

    #[test]
    fn a_preload_holds_its_keys_and_a_write_is_newer() {
        let mut population = Population::default();
        population.record_preload(1, 1_000, KEY_SHARE_ONE, 900);
        assert!((1..=1_000).all(|key| population.version(key, 0, 1.0).is_some()));
        assert_eq!(population.version(1_001, 0, 1.0), None);
        assert_eq!(population.version(5, 0, 1.0).unwrap().value_bytes, 900);
        population.record_write(0, 5, 1_024);
        let written = population.version(5, 0, 1.0).unwrap();
        assert_eq!(written.value_bytes, 1_024);
        assert!(Some(written) > population.version(6, 0, 1.0));
        // Half the key shares: about half the keys.
        let mut half = Population::default();
        half.record_preload(1, 10_000, KEY_SHARE_ONE / 2, 900);
        let held = (1..=10_000)
            .filter(|key| half.version(*key, 0, 1.0).is_some())
            .count();
        assert!((held as f64 / 10_000.0 - 0.5).abs() < 0.02, "{held}");
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
