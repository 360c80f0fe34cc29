//! The row cache: rows recently read, kept in memory so that a read which
//! finds its row there costs no SSTable lookup, no disk read.
//!
//! What is modelled, per database:
//! - **Scylla** (2.x-3.0): the cache has no size setting. It lives in the
//!   shard's LSA memory next to the memtables and takes everything nothing
//!   else holds: memtables evict it as they grow and it refills as they
//!   flush (scylladb PR #17724: "row cache growth is only limited by other
//!   memory consumers, not by configured limits"; `row_cache_size_in_mb` is
//!   ignored). [`scylla_capacity_bytes`] gives that size; the shard moves it
//!   with [`RowCache::set_capacity_bytes`]. One LRU per shard
//!   (`cache_tracker`) evicts the least recently used rows. A read that
//!   misses populates the row from the SSTables it read. Writes go to the
//!   memtable, and a flushed memtable is merged into the cache (the
//!   `memtable_to_cache` scheduling group, scylla-mechanisms.md section
//!   3.1): a cached row is updated in place; a row not cached stays out (a
//!   cache filled by single-partition reads cannot prove the ranges around
//!   it complete, so it does not insert). [`WritePolicy::UpdateInPlace`].
//! - **Cassandra 3.11**: `row_cache_size_in_mb` of off-heap memory (OHC),
//!   default 0, which turns the cache off; a table uses it only if its
//!   `caching` option asks for rows (`rows_per_partition`, default `NONE`).
//!   OHC evicts least recently used entries. A read that misses populates
//!   the partition; a write **invalidates** the cached partition
//!   (`ColumnFamilyStore.maybeUpdateRowCache` calls
//!   `invalidateCachedPartition`). [`WritePolicy::Invalidate`]. Cassandra
//!   also reads through the OS page cache, which Scylla bypasses with
//!   O_DIRECT: see [`crate::cache::page_cache`].
//!
//! Both start cold (R5: "Runs start from a cold cache") and warm as reads
//! miss.
//!
//! # Entry sizes
//!
//! A cached row costs its key and value bytes plus a per-entry overhead
//! ([`RowCacheConfig::entry_overhead_bytes`]):
//! - Scylla: Scylla's `memory_footprint` test (`tests/memory_footprint.cc`)
//!   populates one partition into an empty cache and reports the LSA bytes
//!   it took. Its default mutation is a 10-byte partition key, a 10-byte
//!   clustering key and five 32-byte cells: 180 payload bytes, the same as
//!   c-s's default row (10-byte key, five 34-byte cells). It reported 1264
//!   bytes on May 2018 master, before the IMR cell format, and 1104 after
//!   it (scylladb commit aab6b0ee27, first released in 2.3): overheads of
//!   1084 and 924 bytes ([`SCYLLA_2_2_ENTRY_OVERHEAD_BYTES`],
//!   [`SCYLLA_2_3_ENTRY_OVERHEAD_BYTES`]). They include `cache_entry`, the
//!   partition version, the row's `rows_entry` with its LRU link, the
//!   cells and the LSA object descriptors.
//! - Cassandra: OHC's 64-byte entry header (`ENTRY_OFF_DATA`, linked
//!   implementation) + the key framing, `writeUTF(keyspace)`,
//!   `writeUTF(table)` and a 4-byte length (26 bytes for c-s's
//!   `keyspace1.standard1`, rounded up to 8) + the value framing: a sentinel
//!   flag, the four ints of `CachedBTreePartition` and the serialized
//!   partition's header and per-cell flags, timestamps and lengths
//!   (estimated at 64 bytes for five cells): 160 bytes, an estimate
//!   ([`CASSANDRA_ENTRY_OVERHEAD_BYTES`]).
//!
//! # Volume mode: hit probability from key popularity
//!
//! In volume mode no keys are stored. The driver gives the workload's
//! key-popularity curve as data, a [`HotMass`]: the fraction of the keys,
//! hottest first, against the fraction of reads they receive (`models`
//! builds it from a c-s distribution). What follows is derived under the
//! independent reference model (IRM), in which each read asks for key `k`
//! with a fixed probability `p_k`, as c-s's `-pop dist=` does.
//!
//! Warming. Start empty and let every miss populate its row. Until the
//! first eviction, key `k` is cached after `n` reads iff it was read at
//! least once, with probability `1 - (1 - p_k)^n ~ 1 - exp(-n p_k)`. So
//! the expected number of cached rows is `C(n) = sum_k (1 - exp(-n p_k))`
//! and the next read hits with probability
//! `H(n) = sum_k p_k (1 - exp(-n p_k))`: the popularity mass of the rows
//! cached so far, the hottest ones first in expectation. As
//! `dC/dn = sum_k p_k exp(-n p_k) = 1 - H(n)`, a read adds `1 - H` rows in
//! expectation: one per miss. The model therefore counts the rows that
//! misses actually populated, finds the `n` with `C(n) = rows` (`C` is
//! increasing and concave, so Newton's method from below converges without
//! overshooting), and reads `H(n)`.
//!
//! Full. Eviction is LRU, and Che's approximation (Che, Tung and Wang,
//! IEEE JSAC 2002; Fricker, Robert and Roberts, ITC 2012) says an LRU cache
//! of `C` rows under IRM holds key `k` with probability
//! `1 - exp(-p_k T)`, where the characteristic time `T` solves
//! `sum_k (1 - exp(-p_k T)) = C`, so it hits with probability
//! `sum_k p_k (1 - exp(-p_k T))`. That is the warming curve stopped where
//! it reaches the capacity: warming and the steady state are one formula,
//! and a full cache stays at `T` while misses replace rows. The
//! approximation is accurate to a percent or two under IRM (the tests
//! compare it with an exact LRU). For uniform popularity it gives hit rate
//! = cached rows / key rows, exactly. The hottest mass that fits,
//! [`HotMass::mass`] at `C / K`, is an upper bound that LRU reaches only
//! for uniform popularity: an LRU also holds cold rows read once and not
//! yet evicted.
//!
//! On a piecewise-linear curve, segment `i` holds a fraction `w_i` of the
//! `K` keys and a mass `m_i`, so each of its keys has `p = m_i / (K w_i)`.
//! With `tau = n / K`: `C / K = sum_i w_i (1 - exp(-tau m_i / w_i))` and
//! `H = sum_i m_i (1 - exp(-tau m_i / w_i))`. [`PopularityLru`] solves for
//! `tau` again only when the row count has moved by 1/1024 since the last
//! solve (or by one row in a cache below 1024 rows) or has just reached the
//! capacity, so warming a cache of
//! `R` rows costs about `1024 ln R` solves of `O(segments)` each, and a
//! full, steady cache costs nothing per read.
//!
//! Hit or miss is decided by a uniform draw `u` in `[0, 1)` that the caller
//! passes in: the read hits if `u < H`. The engine has no randomness of its
//! own; the shard takes `u` from its row-cache stream, a generator seeded
//! by the driver (`ShardConfig::seeds`) and used for nothing else. Writes
//! take a draw too: under IRM the written key is
//! cached with probability `H`, so a Cassandra write whose draw is below `H`
//! invalidates one row (mean field: the cached set stays the IRM set of one
//! row fewer), and a Scylla write below `H` counts as an in-place update.
//!
//! Single hot keys. The curve says how popular keys are, not which: each
//! shard's model spreads the whole curve over its own keys. That is right
//! for the many keys of a smooth curve, which the token hash scatters over
//! every shard alike, but not for a key that alone takes a share of the
//! reads: the end keys of a clamped c-s gaussian (15.9% of R1's reads ask
//! for key 750000000) or the few hundred keys of a narrow one. Such a key
//! lives on one shard, whose reads it dominates, and it is cached from its
//! first read on. [`HotMass::with_hot_keys`] names them, and a read of key
//! `k` hits with `k`'s own probability of being held
//! ([`PopularityLru::lookup_key`]); other keys get the hit rate of the
//! rest of the curve, so the hits over all reads still come to `H`.
//!
//! # Data mode
//!
//! [`LruBytes`] is an exact LRU over `u64` keys with byte accounting: a
//! slab-backed doubly linked list plus a hash index with a fixed
//! (SplitMix64) hasher, O(1) per operation, and allocation-free once the
//! slab and index have grown to the steady number of entries.
//!
//! # Left out
//!
//! - Partitions of several rows: c-s partitions hold one row, so one entry
//!   per partition; Scylla's per-row eviction of large partitions is not
//!   modelled.
//! - Range scans, continuity information and the caching of absent keys.
//! - Cassandra's key cache (it saves the index read) and counter cache,
//!   OHC's per-segment LRU (one LRU here), and cache saving and loading at
//!   restart (both caches start cold).
//! - In volume mode, concurrent misses on one key each count as a
//!   population; the count is capped by the keys with non-zero popularity.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use slab::Slab;

/// Bytes in one mebibyte (`row_cache_size_in_mb` is in MiB).
const MIB: u64 = 1024 * 1024;

/// Scylla 2.1-2.2 cache bytes per row beyond its key and value: 1264 bytes
/// measured by `memory_footprint` for a 180-byte row on May 2018 master,
/// minus the 180 bytes (module doc).
pub const SCYLLA_2_2_ENTRY_OVERHEAD_BYTES: u64 = 1264 - 180;

/// Scylla 2.3-3.0 cache bytes per row beyond its key and value: 1104 bytes
/// for the same row with the IMR cell format (scylladb commit aab6b0ee27,
/// in 2.3), minus 180.
pub const SCYLLA_2_3_ENTRY_OVERHEAD_BYTES: u64 = 1104 - 180;

/// Cassandra 3.11 row cache bytes per row beyond its key and value: OHC's
/// 64-byte header, 32 bytes of key framing (26, rounded up to 8) and about
/// 64 of value framing. Estimate (module doc).
pub const CASSANDRA_ENTRY_OVERHEAD_BYTES: u64 = 64 + 32 + 64;

// 2.3 shrank Scylla's entry; Cassandra's serialised entry is smaller still.
const _: () = assert!(SCYLLA_2_3_ENTRY_OVERHEAD_BYTES < SCYLLA_2_2_ENTRY_OVERHEAD_BYTES);
const _: () = assert!(CASSANDRA_ENTRY_OVERHEAD_BYTES < SCYLLA_2_3_ENTRY_OVERHEAD_BYTES);

/// The cache Scylla keeps on a shard of `memory_bytes`: everything that the
/// memtables (`memtable_bytes`, real dirty memory) and the rest
/// (`other_bytes`: bloom filters and index summaries, which
/// `SSTable::memory_bytes` gives, plus in-flight reads) do not hold.
pub fn scylla_capacity_bytes(memory_bytes: u64, memtable_bytes: u64, other_bytes: u64) -> u64 {
    debug_assert!(
        memtable_bytes <= memory_bytes,
        "memtables fit in the shard's memory"
    );
    memory_bytes
        .saturating_sub(memtable_bytes)
        .saturating_sub(other_bytes)
}

// ---------------------------------------------------------------------------
// Key popularity

/// A key-popularity curve, hottest keys first: points `(x, y)` where `y` is
/// the fraction of reads that the hottest fraction `x` of the keys receive.
///
/// The curve is piecewise linear from `(0, 0)` to `(1, 1)`, non-decreasing
/// in both coordinates and concave (each segment's keys are at most as hot
/// as the previous segment's). Plain data: `models` builds the points from a
/// c-s distribution (`KeyDistribution::hot_mass_curve`) and
/// [`HotMass::new`] checks them.
#[derive(Clone, Debug, PartialEq)]
pub struct HotMass {
    points: Vec<(f64, f64)>,
    /// Single keys hot enough to matter on their own, by key id: the
    /// clamped ends of a c-s gaussian (15.9% of R1's reads go to one key)
    /// or the few keys of a narrow one. They live on one shard each, so a
    /// shard must not spread their mass over its other keys
    /// ([`PopularityLru::lookup_key`]). Sorted by key, masses in `(0, 1]`.
    hot_keys: Vec<(u64, f64)>,
}

/// Endpoint and bound tolerance of [`HotMass::new`].
const ENDPOINT_TOLERANCE: f64 = 1e-9;

const _: () = assert!(ENDPOINT_TOLERANCE < CONCAVITY_TOLERANCE && CONCAVITY_TOLERANCE < 1e-3);
/// Relative slope tolerance of the concavity check (floating-point noise of
/// the tabulated tails).
const CONCAVITY_TOLERANCE: f64 = 1e-6;

impl HotMass {
    /// Checks and keeps `points`: at least two, finite, starting at `(0, 0)`
    /// and ending at `(1, 1)` (each within 1e-9, then set exactly), both
    /// coordinates non-decreasing, and concave to a relative 1e-6 in slope.
    /// Repeated points are dropped.
    pub fn new(points: Vec<(f64, f64)>) -> Result<HotMass, String> {
        if points.len() < 2 {
            return Err(format!(
                "a key-popularity curve needs at least two points, got {}",
                points.len()
            ));
        }
        if let Some((x, y)) = points
            .iter()
            .find(|(x, y)| !(x.is_finite() && y.is_finite()))
        {
            return Err(format!("a key-popularity point ({x}, {y}) is not finite"));
        }
        let (first, last) = (points[0], points[points.len() - 1]);
        if first.0.abs() > ENDPOINT_TOLERANCE || first.1.abs() > ENDPOINT_TOLERANCE {
            return Err(format!(
                "a key-popularity curve starts at (0, 0), not ({}, {})",
                first.0, first.1
            ));
        }
        if (last.0 - 1.0).abs() > ENDPOINT_TOLERANCE || (last.1 - 1.0).abs() > ENDPOINT_TOLERANCE {
            return Err(format!(
                "a key-popularity curve ends at (1, 1), not ({}, {})",
                last.0, last.1
            ));
        }
        let mut kept: Vec<(f64, f64)> = Vec::with_capacity(points.len());
        let count = points.len();
        for (index, &(x, y)) in points.iter().enumerate() {
            let (x, y) = match index {
                0 => (0.0, 0.0),
                i if i == count - 1 => (1.0, 1.0),
                _ => (x, y),
            };
            if !((0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y)) {
                return Err(format!(
                    "a key-popularity point ({x}, {y}) lies outside [0, 1] x [0, 1]"
                ));
            }
            if let Some(&(px, py)) = kept.last() {
                if x < px || y < py {
                    return Err(format!(
                        "a key-popularity curve must not decrease: ({px}, {py}) then ({x}, {y})"
                    ));
                }
                if x == px && y == py {
                    continue;
                }
            }
            kept.push((x, y));
        }
        for window in kept.windows(3) {
            let (dx1, dy1) = (window[1].0 - window[0].0, window[1].1 - window[0].1);
            let (dx2, dy2) = (window[2].0 - window[1].0, window[2].1 - window[1].1);
            // slope2 <= slope1, without dividing by zero-width segments.
            let earlier = dy1 * dx2;
            let later = dy2 * dx1;
            if later > earlier + CONCAVITY_TOLERANCE * (earlier + later) {
                return Err(format!(
                    "a key-popularity curve must be concave (hottest keys first): the segment to ({}, {}) is steeper than the one before it",
                    window[2].0, window[2].1
                ));
            }
        }
        let curve = HotMass {
            points: kept,
            hot_keys: Vec::new(),
        };
        curve.check_invariants();
        Ok(curve)
    }

    /// What a curve holds: at least two points, from (0, 0) to (1, 1),
    /// inside the unit square and never decreasing; named hot keys sorted,
    /// none twice, each taking a fraction in (0, 1] of the reads, together
    /// at most all of them. O(points + hot keys), a few hundred at most.
    pub fn check_invariants(&self) {
        assert!(self.points.len() >= 2, "a curve has two points");
        let (first, last) = (self.points[0], self.points[self.points.len() - 1]);
        assert!(first.0.abs() <= ENDPOINT_TOLERANCE && first.1.abs() <= ENDPOINT_TOLERANCE);
        assert!(
            (last.0 - 1.0).abs() <= ENDPOINT_TOLERANCE
                && (last.1 - 1.0).abs() <= ENDPOINT_TOLERANCE,
            "a curve ends at (1, 1), not {last:?}"
        );
        for pair in self.points.windows(2) {
            assert!(
                pair[0].0 <= pair[1].0 && pair[0].1 <= pair[1].1 + ENDPOINT_TOLERANCE,
                "a curve never decreases: {:?} then {:?}",
                pair[0],
                pair[1]
            );
        }
        assert!(self.hot_keys.windows(2).all(|pair| pair[0].0 < pair[1].0));
        let total: f64 = self.hot_keys.iter().map(|(_, mass)| mass).sum();
        assert!(
            total <= 1.0 + ENDPOINT_TOLERANCE,
            "hot keys take at most every read"
        );
        assert!(self
            .hot_keys
            .iter()
            .all(|&(_, mass)| mass > 0.0 && mass <= 1.0));
    }

    /// The same curve, naming the single keys among its hottest:
    /// `(key id, fraction of the reads)`, each mass in `(0, 1]` and all
    /// together at most 1. Their mass is already in the curve; the names
    /// let a shard tell a read of one of them from the rest.
    pub fn with_hot_keys(mut self, mut hot_keys: Vec<(u64, f64)>) -> Result<HotMass, String> {
        if let Some((key, mass)) = hot_keys
            .iter()
            .find(|(_, mass)| !(mass.is_finite() && *mass > 0.0 && *mass <= 1.0))
        {
            return Err(format!(
                "hot key {key} must take a fraction of the reads in (0, 1], not {mass}"
            ));
        }
        let total: f64 = hot_keys.iter().map(|(_, mass)| mass).sum();
        if total > 1.0 + ENDPOINT_TOLERANCE {
            return Err(format!(
                "hot keys take {total} of the reads together, more than all of them"
            ));
        }
        hot_keys.sort_by_key(|(key, _)| *key);
        if let Some(pair) = hot_keys.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(format!("hot key {} is named twice", pair[0].0));
        }
        self.hot_keys = hot_keys;
        self.check_invariants();
        Ok(self)
    }

    /// The single hot keys named by [`HotMass::with_hot_keys`], by key id.
    pub fn hot_keys(&self) -> &[(u64, f64)] {
        &self.hot_keys
    }

    /// Every key equally popular: `[(0, 0), (1, 1)]`.
    pub fn uniform() -> HotMass {
        HotMass {
            points: vec![(0.0, 0.0), (1.0, 1.0)],
            hot_keys: Vec::new(),
        }
    }

    /// The points, from `(0, 0)` to `(1, 1)`.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The fraction of reads that the hottest `key_fraction` of the keys
    /// receive (clamped to `[0, 1]`).
    pub fn mass(&self, key_fraction: f64) -> f64 {
        let x = if key_fraction.is_nan() {
            0.0
        } else {
            key_fraction.clamp(0.0, 1.0)
        };
        // Points with abscissa <= x: at least the first.
        let after = self.points.partition_point(|p| p.0 <= x);
        debug_assert!(after >= 1, "the curve starts at 0");
        if after >= self.points.len() {
            return 1.0;
        }
        let (x0, y0) = self.points[after - 1];
        let (x1, y1) = self.points[after];
        let mass = y0 + (y1 - y0) * (x - x0) / (x1 - x0);
        debug_assert!(
            (y0 - 1e-12..=y1 + 1e-12).contains(&mass),
            "the mass lies between its segment's ends"
        );
        mass
    }

    /// The smallest fraction of the keys, hottest first, that receives
    /// `mass` of the reads (clamped to `[0, 1]`): the inverse of
    /// [`HotMass::mass`].
    pub fn key_fraction_for_mass(&self, mass: f64) -> f64 {
        let y = if mass.is_nan() {
            0.0
        } else {
            mass.clamp(0.0, 1.0)
        };
        let at = self.points.partition_point(|p| p.1 < y);
        if at == 0 {
            return 0.0;
        }
        if at >= self.points.len() {
            return 1.0;
        }
        let (x0, y0) = self.points[at - 1];
        let (x1, y1) = self.points[at];
        debug_assert!(y0 < y1, "the segment found rises to the mass");
        let fraction = x0 + (x1 - x0) * (y - y0) / (y1 - y0);
        debug_assert!(
            (x0 - 1e-12..=x1 + 1e-12).contains(&fraction),
            "the key fraction lies inside its segment"
        );
        fraction
    }

    /// The popularity curve of the pages (or chunks) that hold the keys,
    /// `keys_per_page` keys to a page on average, for a cache of pages.
    ///
    /// SSTables are sorted by token, a hash of the key, so a page holds
    /// keys drawn at random from the key space: a hot key shares its page
    /// with ordinary ones, and a page cache spends a page on each hot key.
    /// Taking pages in order of their hottest key (an approximation of
    /// ordering by their total), the hottest fraction `x` of the keys
    /// touches a fraction `1 - (1 - x)^R` of the pages, which also hold
    /// `(1 - M(x)) (1 - (1 - x)^(R - 1))` of the colder keys' mass, with
    /// `R` = `keys_per_page` and `M` this curve. Uniform popularity stays
    /// uniform and one hot key becomes one hot page. With `R < 1` (few keys
    /// among many pages) each key has a page to itself: the curve is this
    /// one squeezed into the first fraction `R` of the pages, the rest of
    /// the pages never read.
    pub fn paged(&self, keys_per_page: f64) -> HotMass {
        let r = if keys_per_page.is_finite() && keys_per_page > 0.0 {
            keys_per_page
        } else {
            1.0
        };
        if r <= 1.0 {
            let mut points: Vec<(f64, f64)> =
                self.points.iter().map(|&(x, y)| (x * r, y)).collect();
            if r < 1.0 {
                points.push((1.0, 1.0));
            }
            return HotMass::from_computed(points);
        }
        // Abscissae: the curve's breakpoints plus a grid uniform in page
        // fraction (x = 1 - (1 - y)^(1/R)).
        const GRID: usize = 256;
        let mut xs: Vec<f64> = self.points.iter().map(|p| p.0).collect();
        for step in 1..GRID {
            let page_fraction = step as f64 / GRID as f64;
            xs.push(-((1.0 - page_fraction).ln() / r).exp_m1());
        }
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut points: Vec<(f64, f64)> = Vec::with_capacity(xs.len());
        for x in xs {
            let cold_keep = (-x).ln_1p(); // ln(1 - x)
            let page_fraction = -(r * cold_keep).exp_m1();
            let shared = -((r - 1.0) * cold_keep).exp_m1();
            let key_mass = self.mass(x);
            let mass = key_mass + (1.0 - key_mass) * shared;
            points.push((page_fraction, mass));
        }
        HotMass::from_computed(points)
    }

    /// Builds from points computed from a valid curve: clamps
    /// floating-point noise (bounds, monotonicity, endpoints) and keeps the
    /// upper concave hull, dropping points that rounding pushed below a
    /// chord, instead of rejecting them.
    fn from_computed(points: Vec<(f64, f64)>) -> HotMass {
        let hull = units::concave_hull(points);
        // Computed curves are of pages, not keys: no key is named.
        let curve = HotMass {
            points: hull,
            hot_keys: Vec::new(),
        };
        if cfg!(debug_assertions) {
            curve.check_invariants();
        }
        curve
    }
}

// ---------------------------------------------------------------------------
// Volume mode: an LRU cache estimated from key popularity

/// One segment of a popularity curve: a fraction of the keys and of the
/// reads. `density` is reads per key relative to uniform (`mass / width`,
/// infinite for a zero-width segment).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Segment {
    width: f64,
    mass: f64,
    density: f64,
}

/// Newton iterations allowed per solve (monotone from below; a handful are
/// used in practice).
const SOLVE_ITERATIONS: usize = 200;

const _: () = assert!(SOLVE_ITERATIONS > 0);

/// The state of an LRU cache under the independent reference model,
/// estimated rather than stored: the rows it holds, and the probability
/// that the next read finds its row (module doc: warming and Che's
/// approximation).
#[derive(Clone, Debug, PartialEq)]
pub struct PopularityLru {
    segments: Vec<Segment>,
    /// Keys the curve spreads over, `K` (the keys a read can ask for).
    population: f64,
    /// Keys with non-zero popularity (the most the cache can ever hold).
    reachable_keys: f64,
    capacity_items: u64,
    items: u64,
    /// Items when `tau` and `hit` were last solved.
    solved_items: u64,
    /// Reads per key (`n / K`) that would have cached `solved_items`.
    tau: f64,
    /// The hit probability at `solved_items`.
    solved_hit: f64,
    /// d(hit probability)/d(items) at `solved_items`: between solves the
    /// hit probability moves along this tangent.
    hit_per_item: f64,
    hit: f64,
    /// The curve's named hot keys: (key id, mass, probability it is
    /// cached at the last solve).
    hot_keys: Vec<(u64, f64, f64)>,
    /// Their mass together.
    hot_mass: f64,
    /// Their mass that is cached, at the last solve.
    hot_hit_mass: f64,
}

/// What [`PopularityLru::insert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insertion {
    /// The row was added.
    Added,
    /// The cache was full: the row replaced the least recently used one.
    Replaced,
    /// Every key that is ever read is cached already (the miss raced with
    /// another population of the same key); nothing changed.
    AlreadyCached,
    /// The cache has no room at all (capacity 0); nothing changed.
    NoRoom,
}

impl PopularityLru {
    /// An empty cache of `capacity_items` rows over `population` keys whose
    /// popularity is `curve`. `population` must be positive and finite.
    pub fn new(
        curve: &HotMass,
        population: f64,
        capacity_items: u64,
    ) -> Result<PopularityLru, String> {
        let segments: Vec<Segment> = curve
            .points()
            .windows(2)
            .filter_map(|pair| {
                let width = pair[1].0 - pair[0].0;
                let mass = pair[1].1 - pair[0].1;
                (mass > 0.0).then(|| Segment {
                    width,
                    mass,
                    density: if width > 0.0 {
                        mass / width
                    } else {
                        f64::INFINITY
                    },
                })
            })
            .collect();
        let mut cache = PopularityLru {
            segments,
            population: 1.0,
            reachable_keys: 0.0,
            capacity_items,
            items: 0,
            solved_items: 0,
            tau: 0.0,
            solved_hit: 0.0,
            hit_per_item: 0.0,
            hit: 0.0,
            hot_keys: curve
                .hot_keys()
                .iter()
                .map(|&(key, mass)| (key, mass, 0.0))
                .collect(),
            hot_mass: curve.hot_keys().iter().map(|(_, mass)| mass).sum(),
            hot_hit_mass: 0.0,
        };
        assert!(
            cache
                .segments
                .iter()
                .all(|s| s.mass > 0.0 && s.width >= 0.0),
            "every segment reads some keys"
        );
        cache.set_population(population)?;
        cache.check_invariants();
        Ok(cache)
    }

    /// What must hold between the estimate's parts: a positive population
    /// of which the reachable keys are a part; a hit probability in [0, 1];
    /// reads per key not negative; the named hot keys' masses at most all
    /// reads and their held fractions in [0, 1], their hit mass at most
    /// their mass. O(hot keys), a handful.
    pub fn check_invariants(&self) {
        assert!(self.population.is_finite() && self.population > 0.0);
        assert!(
            self.reachable_keys <= self.population * (1.0 + 1e-12),
            "no more reachable keys than keys"
        );
        assert!(
            (0.0..=1.0).contains(&self.hit),
            "a hit probability, not {}",
            self.hit
        );
        assert!((0.0..=1.0).contains(&self.solved_hit));
        assert!(self.tau >= 0.0, "reads per key are not negative");
        assert!(self.hot_mass <= 1.0 + ENDPOINT_TOLERANCE);
        assert!(self.hot_hit_mass <= self.hot_mass + 1e-9);
        assert!(
            self.hot_keys.iter().all(|hot| (0.0..=1.0).contains(&hot.2)),
            "a hot key is held with a probability"
        );
    }

    /// The probability that the next read finds its row.
    pub fn hit_probability(&self) -> f64 {
        self.hit
    }

    /// A read: a hit if `unit_draw` (uniform in `[0, 1)`) is below
    /// [`PopularityLru::hit_probability`].
    pub fn lookup(&self, unit_draw: f64) -> bool {
        debug_assert!(
            (0.0..1.0).contains(&unit_draw),
            "a draw in [0, 1): {unit_draw}"
        );
        unit_draw < self.hit
    }

    /// A read of key `key`: a hit if `unit_draw` is below the probability
    /// that this key is cached. Under Che's approximation a key read `p`
    /// of the time is held with probability `1 - exp(-p n)`; a named hot
    /// key gets exactly that, and any other key the hit probability of
    /// the rest of the curve, `(H - sum of the hot keys' held mass) /
    /// (1 - their mass)`, so that over all reads the hits still come to
    /// `H`. Without named keys this is [`PopularityLru::lookup`].
    pub fn lookup_key(&self, key: u64, unit_draw: f64) -> bool {
        debug_assert!(
            (0.0..1.0).contains(&unit_draw),
            "a draw in [0, 1): {unit_draw}"
        );
        unit_draw < self.key_hit_probability(key)
    }

    /// The probability that a read of `key` finds its row
    /// ([`PopularityLru::lookup_key`]).
    pub fn key_hit_probability(&self, key: u64) -> f64 {
        if self.hot_keys.is_empty() {
            return self.hit;
        }
        let probability = match self.hot_keys.binary_search_by_key(&key, |hot| hot.0) {
            Ok(index) => self.hot_keys[index].2,
            Err(_) if self.hot_mass < 1.0 => {
                ((self.hit - self.hot_hit_mass) / (1.0 - self.hot_mass)).clamp(0.0, 1.0)
            }
            // Every read goes to a named key: no other key is ever read.
            Err(_) => 0.0,
        };
        debug_assert!((0.0..=1.0).contains(&probability));
        probability
    }

    /// A miss populated its row.
    pub fn insert(&mut self) -> Insertion {
        if self.capacity_items == 0 {
            return Insertion::NoRoom;
        }
        if self.items as f64 >= self.reachable_keys {
            return Insertion::AlreadyCached;
        }
        if self.items >= self.capacity_items {
            return Insertion::Replaced;
        }
        self.items += 1;
        self.refresh(false);
        debug_assert!(
            self.items <= self.capacity_items,
            "an insert stays within capacity"
        );
        Insertion::Added
    }

    /// One cached row removed (a Cassandra write invalidated it). Returns
    /// false if the cache was empty.
    pub fn remove(&mut self) -> bool {
        if self.items == 0 {
            return false;
        }
        self.items -= 1;
        self.refresh(false);
        true
    }

    /// Changes the capacity; returns the rows evicted to fit.
    pub fn set_capacity_items(&mut self, capacity_items: u64) -> u64 {
        self.capacity_items = capacity_items;
        let evicted = self.items.saturating_sub(capacity_items);
        if evicted > 0 {
            self.items = capacity_items;
            self.refresh(true);
        }
        debug_assert!(
            self.items <= self.capacity_items,
            "a shrink evicts down to capacity"
        );
        evicted
    }

    /// Changes the number of keys the curve spreads over (ownership or the
    /// data set changed). `population` must be positive and finite.
    pub fn set_population(&mut self, population: f64) -> Result<(), String> {
        if !(population.is_finite() && population > 0.0) {
            return Err(format!(
                "a cache's key population must be a positive number, not {population}"
            ));
        }
        self.population = population;
        let reachable_fraction: f64 = self.segments.iter().map(|s| s.width).sum();
        self.reachable_keys = reachable_fraction.min(1.0) * population;
        self.refresh(true);
        Ok(())
    }

    /// Fills the cache to its steady state at once (a warm start): the
    /// capacity, or every key with non-zero popularity if fewer.
    pub fn warm(&mut self) {
        self.items = self.capacity_items.min(self.reachable_keys.ceil() as u64);
        self.refresh(true);
        debug_assert!(self.items <= self.capacity_items);
    }

    /// The hit probability once full (Che's approximation at this
    /// capacity), whatever the current fill.
    pub fn steady_state_hit_probability(&self) -> f64 {
        let items = self.capacity_items.min(self.reachable_keys.ceil() as u64);
        let tau = self.solve(items as f64 / self.population, 0.0);
        let hit = self.evaluate(tau).1;
        debug_assert!(
            (0.0..=1.0 + 1e-9).contains(&hit),
            "a hit probability, not {hit}"
        );
        hit
    }

    /// Rows cached.
    pub fn items(&self) -> u64 {
        debug_assert!(
            self.items <= self.capacity_items,
            "no more entries than room"
        );
        self.items
    }

    /// Rows the cache can hold.
    pub fn capacity_items(&self) -> u64 {
        self.capacity_items
    }

    /// Keys the curve spreads over.
    pub fn population(&self) -> f64 {
        self.population
    }

    /// Reads per key that would have warmed a cold cache to its current
    /// fill (infinite once every popular key is cached); Che's
    /// characteristic time over the key count once full.
    pub fn reads_per_key(&self) -> f64 {
        self.tau
    }

    /// Solves again if the fill moved by 1/64 (at least 8 rows) since the
    /// last solve, if it has just reached the capacity (so a full cache
    /// sits exactly at its steady state), or if `force`; in between, the
    /// hit probability follows the tangent at the last solve. A solve walks
    /// the whole popularity curve a few times: solving at every 1/1024 of
    /// fill cost the 40-node benchmark a third of its time. The hit curve
    /// is concave in the fill, so the tangent overshoots by a second-order
    /// amount: under 0.1% of the hit rate at 1/64 on the bundled curves
    /// (`tangent_tracks_the_solved_hit_rate`), where holding the last
    /// solve's value at 1/256 lagged by up to the fill's step.
    fn refresh(&mut self, force: bool) {
        let moved = self.items.abs_diff(self.solved_items);
        let filled = self.items == self.capacity_items && moved > 0;
        if !force && !filled && moved < (self.solved_items >> 6).max(8) {
            let step = self.items as f64 - self.solved_items as f64;
            self.hit = (self.solved_hit + step * self.hit_per_item).clamp(0.0, 1.0);
            return;
        }
        self.tau = self.solve(self.items as f64 / self.population, self.tau);
        let (_, hit, cached_per_tau, hit_per_tau) = self.evaluate(self.tau);
        self.solved_hit = hit.clamp(0.0, 1.0);
        // d(hit)/d(items) = (d hit/d tau) / (d cached/d tau) / population;
        // zero once every reachable key is cached (tau infinite).
        self.hit_per_item = if self.tau.is_finite() && cached_per_tau > 0.0 {
            hit_per_tau / cached_per_tau / self.population
        } else {
            0.0
        };
        self.hit = self.solved_hit;
        self.solved_items = self.items;
        // A hot key read p of the time has had p * n = tau * p * K reads.
        let reads = self.tau * self.population;
        self.hot_hit_mass = 0.0;
        for (_, mass, held) in &mut self.hot_keys {
            *held = if self.items == 0 {
                0.0
            } else {
                -exp_m1_of_negative(reads * *mass)
            };
            self.hot_hit_mass += *mass * *held;
        }
        debug_assert!((0.0..=1.0).contains(&self.hit));
        debug_assert!(self.hot_hit_mass <= self.hot_mass + 1e-9);
    }

    /// (fraction of keys cached, hit probability, d(fraction)/d(tau),
    /// d(hit)/d(tau)) after `tau` reads per key.
    fn evaluate(&self, tau: f64) -> (f64, f64, f64, f64) {
        debug_assert!(!tau.is_nan(), "reads per key are a number");
        if tau <= 0.0 {
            let (cached_per_tau, hit_per_tau) = self
                .segments
                .iter()
                .filter(|s| s.density.is_finite())
                .fold((0.0, 0.0), |(c, h), s| (c + s.mass, h + s.mass * s.density));
            return (0.0, 0.0, cached_per_tau, hit_per_tau);
        }
        let mut cached = 0.0;
        let mut hit = 0.0;
        let mut slope = 0.0;
        let mut hit_slope = 0.0;
        for segment in &self.segments {
            let exposure = tau * segment.density;
            // One transcendental per segment: e^-x - 1, from which both the
            // share held (1 - e^-x) and missing (e^-x) follow.
            let (held, missing) = if exposure.is_infinite() {
                (1.0, 0.0)
            } else {
                let change = exp_m1_of_negative(exposure);
                (-change, 1.0 + change)
            };
            cached += segment.width * held;
            hit += segment.mass * held;
            slope += segment.mass * missing;
            if segment.density.is_finite() {
                hit_slope += segment.mass * segment.density * missing;
            }
        }
        debug_assert!(cached >= 0.0 && hit >= 0.0 && slope >= 0.0);
        debug_assert!(hit <= 1.0 + 1e-9, "at most every read hits");
        (cached, hit, slope, hit_slope)
    }

    /// The `tau` at which the cached fraction reaches `target`, starting
    /// the search at `start`. The fraction is increasing and concave in
    /// `tau`, so Newton steps from below stay below the root; one step from
    /// above lands below it.
    fn solve(&self, target: f64, start: f64) -> f64 {
        debug_assert!(!target.is_nan(), "a cached fraction is a number");
        if target <= 0.0 {
            return 0.0;
        }
        let reachable_fraction = self.reachable_keys / self.population;
        if target >= reachable_fraction * (1.0 - 1e-12) {
            return f64::INFINITY;
        }
        let mut tau = if start.is_finite() && start > 0.0 {
            start
        } else {
            0.0
        };
        let (cached, _, slope, _) = self.evaluate(tau);
        if cached > target {
            tau = if slope > 0.0 {
                (tau - (cached - target) / slope).max(0.0)
            } else {
                0.0
            };
        }
        for _ in 0..SOLVE_ITERATIONS {
            let (cached, _, slope, _) = self.evaluate(tau);
            let gap = target - cached;
            if gap <= target * 1e-12 || slope <= 0.0 {
                break;
            }
            let next = tau + gap / slope;
            if next <= tau || !next.is_finite() {
                break;
            }
            tau = next;
        }
        debug_assert!(tau >= 0.0 && tau.is_finite(), "reads per key solved: {tau}");
        tau
    }
}

/// `e^-x - 1` for `x >= 0`. Below 1e-3 (a cold or large cache, where most
/// of a popularity curve sits) four terms of the series are exact to
/// ~1e-14 relative and skip libm's `expm1`, which was most of a cache
/// solve's time.
#[inline]
fn exp_m1_of_negative(x: f64) -> f64 {
    debug_assert!(x >= 0.0, "an exposure is not negative: {x}");
    let change = if x < 1e-3 {
        -x * (1.0 - x / 2.0 * (1.0 - x / 3.0 * (1.0 - x / 4.0)))
    } else {
        (-x).exp_m1()
    };
    debug_assert!((-1.0..=0.0).contains(&change), "e^-x - 1 lies in [-1, 0]");
    change
}

// ---------------------------------------------------------------------------
// Data mode: an exact LRU with byte accounting

/// No entry: the end of the recency list.
const NIL: usize = usize::MAX;

/// A fixed hasher for `u64` keys (SplitMix64's finaliser): deterministic
/// across runs and machines, unlike the standard library's seeded one.
#[derive(Clone, Copy, Debug, Default)]
struct KeyHasher {
    state: u64,
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        units::mix64(self.state)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.state = self.state.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.state = self.state.rotate_left(32) ^ value;
    }
}

#[derive(Clone, Debug)]
struct LruNode {
    key: u64,
    bytes: u64,
    /// Toward the most recently used end.
    newer: usize,
    /// Toward the least recently used end.
    older: usize,
}

/// What [`LruBytes::insert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The entry is cached (false if it alone exceeds the capacity).
    pub inserted: bool,
    /// Other entries evicted to make room.
    pub evicted: u64,
}

/// An exact LRU cache of `u64` keys, each costing a number of bytes, within
/// a byte capacity. O(1) per operation; the list lives in a slab and the
/// index is a hash map with a fixed hasher, both reused once grown.
#[derive(Clone, Debug)]
pub struct LruBytes {
    index: HashMap<u64, usize, BuildHasherDefault<KeyHasher>>,
    nodes: Slab<LruNode>,
    newest: usize,
    oldest: usize,
    used_bytes: u64,
    capacity_bytes: u64,
}

impl LruBytes {
    /// An empty cache of `capacity_bytes`.
    pub fn new(capacity_bytes: u64) -> LruBytes {
        LruBytes::with_entries(capacity_bytes, 0)
    }

    /// An empty cache of `capacity_bytes` with room for `entries` entries
    /// allocated up front.
    pub fn with_entries(capacity_bytes: u64, entries: usize) -> LruBytes {
        let lru = LruBytes {
            index: HashMap::with_capacity_and_hasher(entries, BuildHasherDefault::default()),
            nodes: Slab::with_capacity(entries),
            newest: NIL,
            oldest: NIL,
            used_bytes: 0,
            capacity_bytes,
        };
        lru.check_invariants();
        lru
    }

    /// What must hold: one index entry per node; the bytes used within
    /// capacity; the list's ends set exactly when it has nodes, the newest
    /// with no newer node and the oldest with no older; and, for the few
    /// newest entries, links that agree both ways and an index that names
    /// them. O(1): the walk is bounded.
    pub fn check_invariants(&self) {
        assert_eq!(
            self.index.len(),
            self.nodes.len(),
            "one index entry per node"
        );
        assert!(
            self.used_bytes <= self.capacity_bytes,
            "the cache holds no more than its capacity"
        );
        assert_eq!(self.newest == NIL, self.nodes.is_empty());
        assert_eq!(self.oldest == NIL, self.nodes.is_empty());
        if self.newest == NIL {
            assert_eq!(self.used_bytes, 0, "an empty cache uses no bytes");
            return;
        }
        assert_eq!(
            self.nodes[self.newest].newer, NIL,
            "nothing is newer than the newest"
        );
        assert_eq!(
            self.nodes[self.oldest].older, NIL,
            "nothing is older than the oldest"
        );
        let mut slot = self.newest;
        for _ in 0..8 {
            let node = &self.nodes[slot];
            assert_eq!(
                self.index.get(&node.key),
                Some(&slot),
                "the index names the node"
            );
            if node.older == NIL {
                assert_eq!(slot, self.oldest);
                break;
            }
            assert_eq!(self.nodes[node.older].newer, slot, "links agree both ways");
            slot = node.older;
        }
    }

    /// A read of `key`: true (and `key` becomes the most recently used) if
    /// it is cached.
    pub fn get(&mut self, key: u64) -> bool {
        match self.index.get(&key) {
            Some(&slot) => {
                self.unlink(slot);
                self.push_newest(slot);
                debug_assert_eq!(self.nodes[self.newest].key, key, "a hit becomes the newest");
                true
            }
            None => false,
        }
    }

    /// True if `key` is cached; its recency does not change.
    pub fn contains(&self, key: u64) -> bool {
        self.index.contains_key(&key)
    }

    /// The bytes `key` costs, if cached.
    pub fn entry_bytes(&self, key: u64) -> Option<u64> {
        let bytes = self.index.get(&key).map(|&slot| self.nodes[slot].bytes);
        debug_assert!(bytes.is_none_or(|bytes| bytes <= self.used_bytes));
        bytes
    }

    /// Caches `key` at `bytes` as the most recently used entry (replacing
    /// its size if already cached) and evicts the least recently used
    /// entries until the rest fits. An entry larger than the whole capacity
    /// is not cached (and an older copy of it is dropped).
    pub fn insert(&mut self, key: u64, bytes: u64) -> Admission {
        if bytes > self.capacity_bytes {
            self.remove(key);
            debug_assert!(
                !self.contains(key),
                "an entry too big for the cache is not kept"
            );
            return Admission {
                inserted: false,
                evicted: 0,
            };
        }
        match self.index.get(&key) {
            Some(&slot) => {
                self.used_bytes = self.used_bytes - self.nodes[slot].bytes + bytes;
                self.nodes[slot].bytes = bytes;
                self.unlink(slot);
                self.push_newest(slot);
            }
            None => {
                let slot = self.nodes.insert(LruNode {
                    key,
                    bytes,
                    newer: NIL,
                    older: NIL,
                });
                self.index.insert(key, slot);
                self.used_bytes += bytes;
                self.push_newest(slot);
            }
        }
        let evicted = self.evict_to_fit();
        debug_assert!(self.contains(key));
        Admission {
            inserted: true,
            evicted,
        }
    }

    /// Changes a cached entry's size in place, keeping its recency (a
    /// Scylla write merged into a cached row). Returns `None` if `key` is
    /// not cached, else the entries evicted to fit, which may include `key`
    /// itself if it is the least recently used.
    pub fn update(&mut self, key: u64, bytes: u64) -> Option<u64> {
        let slot = *self.index.get(&key)?;
        self.used_bytes = self.used_bytes - self.nodes[slot].bytes + bytes;
        self.nodes[slot].bytes = bytes;
        let evicted = self.evict_to_fit();
        debug_assert!(
            bytes <= self.capacity_bytes || !self.contains(key),
            "an entry grown past the capacity is evicted"
        );
        Some(evicted)
    }

    /// Drops `key`; true if it was cached.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.index.remove(&key) {
            Some(slot) => {
                self.unlink(slot);
                let node = self.nodes.remove(slot);
                debug_assert_eq!(node.key, key, "the index named the key's node");
                self.used_bytes -= node.bytes;
                true
            }
            None => false,
        }
    }

    /// Changes the capacity; returns the entries evicted to fit.
    pub fn set_capacity_bytes(&mut self, capacity_bytes: u64) -> u64 {
        self.capacity_bytes = capacity_bytes;
        let evicted = self.evict_to_fit();
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        evicted
    }

    /// Entries cached.
    pub fn len(&self) -> usize {
        debug_assert_eq!(self.index.len(), self.nodes.len());
        self.nodes.len()
    }

    /// True if nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Bytes the cached entries cost.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// The byte capacity.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// `(key, bytes)` of every entry, most recently used first.
    pub fn iter_newest_first(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let mut slot = self.newest;
        std::iter::from_fn(move || {
            if slot == NIL {
                return None;
            }
            let node = &self.nodes[slot];
            slot = node.older;
            Some((node.key, node.bytes))
        })
    }

    fn evict_to_fit(&mut self) -> u64 {
        let mut evicted = 0;
        while self.used_bytes > self.capacity_bytes && self.oldest != NIL {
            let key = self.nodes[self.oldest].key;
            self.remove(key);
            evicted += 1;
        }
        debug_assert!(self.used_bytes <= self.capacity_bytes);
        evicted
    }

    fn unlink(&mut self, slot: usize) {
        debug_assert!(self.nodes.contains(slot), "unlinking a node of the cache");
        let (newer, older) = (self.nodes[slot].newer, self.nodes[slot].older);
        if newer == NIL {
            self.newest = older;
        } else {
            self.nodes[newer].older = older;
        }
        if older == NIL {
            self.oldest = newer;
        } else {
            self.nodes[older].newer = newer;
        }
        self.nodes[slot].newer = NIL;
        self.nodes[slot].older = NIL;
        debug_assert!(
            self.newest != slot && self.oldest != slot,
            "an unlinked node is off the list"
        );
    }

    fn push_newest(&mut self, slot: usize) {
        debug_assert!(
            self.nodes[slot].newer == NIL && self.nodes[slot].older == NIL && self.newest != slot,
            "only an unlinked node is pushed"
        );
        self.nodes[slot].older = self.newest;
        self.nodes[slot].newer = NIL;
        if self.newest == NIL {
            self.oldest = slot;
        } else {
            self.nodes[self.newest].newer = slot;
        }
        self.newest = slot;
    }
}

// ---------------------------------------------------------------------------
// The row cache a shard holds

/// What a write does to a cached row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePolicy {
    /// Scylla: the flushed memtable is merged into the cached row.
    UpdateInPlace,
    /// Cassandra: the write invalidates the cached partition.
    Invalidate,
}

/// A row cache's size and behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowCacheConfig {
    /// Bytes the cache may hold (0: off).
    pub capacity_bytes: u64,
    /// Bytes per cached row beyond its key and value.
    pub entry_overhead_bytes: u64,
    /// What writes do to cached rows.
    pub write_policy: WritePolicy,
}

impl RowCacheConfig {
    /// Scylla 2.1-2.2 with `capacity_bytes` of free shard memory (see
    /// [`scylla_capacity_bytes`]); for 2.3-3.0 set `entry_overhead_bytes`
    /// to [`SCYLLA_2_3_ENTRY_OVERHEAD_BYTES`].
    pub fn scylla(capacity_bytes: u64) -> RowCacheConfig {
        RowCacheConfig {
            capacity_bytes,
            entry_overhead_bytes: SCYLLA_2_2_ENTRY_OVERHEAD_BYTES,
            write_policy: WritePolicy::UpdateInPlace,
        }
    }

    /// Cassandra 3.11 with `row_cache_size_in_mb` (0, the default, is off).
    pub fn cassandra(row_cache_size_in_mb: u64) -> RowCacheConfig {
        RowCacheConfig {
            capacity_bytes: row_cache_size_in_mb.saturating_mul(MIB),
            entry_overhead_bytes: CASSANDRA_ENTRY_OVERHEAD_BYTES,
            write_policy: WritePolicy::Invalidate,
        }
    }

    /// Bytes a row of `row_bytes` (key and value) costs in the cache.
    pub fn entry_bytes(&self, row_bytes: u64) -> u64 {
        debug_assert!(row_bytes > 0, "a cached row has bytes");
        row_bytes.saturating_add(self.entry_overhead_bytes)
    }
}

/// Counters of a cache's activity (the heat-weighted balancing of
/// scylla-mechanisms.md section 7 turns hits and misses into rates).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Reads that found their row.
    pub hits: u64,
    /// Reads that did not.
    pub misses: u64,
    /// Rows cached after a miss.
    pub populations: u64,
    /// Rows evicted to make room (LRU) or to fit a smaller capacity.
    pub evictions: u64,
    /// Cached rows a write updated in place (Scylla).
    pub updates: u64,
    /// Cached rows a write invalidated (Cassandra).
    pub invalidations: u64,
}

impl CacheStats {
    /// Counts a lookup that hit or missed; returns `hit`.
    pub fn lookup(&mut self, hit: bool) -> bool {
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        hit
    }
}

/// Where the rows are kept.
#[derive(Clone, Debug)]
enum RowStore {
    /// Volume mode: the fill and hit probability estimated from popularity.
    Volume {
        model: PopularityLru,
        entry_bytes: u64,
    },
    /// Data mode: the keys themselves.
    Data(LruBytes),
}

/// A shard's row cache, in volume or data mode, starting cold.
///
/// Call pattern for a read: [`RowCache::lookup`]; on a miss, read the
/// SSTables and then [`RowCache::populate`]. For a write:
/// [`RowCache::write`]. When memory for the cache changes (Scylla's
/// memtables grow or flush): [`RowCache::set_capacity_bytes`].
#[derive(Clone, Debug)]
pub struct RowCache {
    config: RowCacheConfig,
    store: RowStore,
    stats: CacheStats,
}

impl RowCache {
    /// Volume mode: `key_rows` keys (those the reads can ask for that live
    /// on this shard) with popularity `curve`, rows of `mean_row_bytes`
    /// (key and value) on average.
    pub fn volume(
        config: RowCacheConfig,
        curve: &HotMass,
        key_rows: f64,
        mean_row_bytes: u64,
    ) -> Result<RowCache, String> {
        let entry_bytes = config.entry_bytes(mean_row_bytes).max(1);
        let model = PopularityLru::new(curve, key_rows, config.capacity_bytes / entry_bytes)?;
        let cache = RowCache {
            config,
            store: RowStore::Volume { model, entry_bytes },
            stats: CacheStats::default(),
        };
        cache.check_invariants();
        Ok(cache)
    }

    /// Data mode: an exact LRU over the keys read.
    pub fn data(config: RowCacheConfig) -> RowCache {
        let cache = RowCache {
            config,
            store: RowStore::Data(LruBytes::new(config.capacity_bytes)),
            stats: CacheStats::default(),
        };
        cache.check_invariants();
        cache
    }

    /// What must hold: the store's capacity is the configured one (in
    /// volume mode, as whole entries of a positive size), the bytes used
    /// within it, and the store's own invariants
    /// ([`PopularityLru::check_invariants`], [`LruBytes::check_invariants`]).
    /// O(hot keys): cheap enough for every input.
    pub fn check_invariants(&self) {
        match &self.store {
            RowStore::Volume { model, entry_bytes } => {
                assert!(*entry_bytes > 0, "a cache entry has bytes");
                assert_eq!(
                    model.capacity_items(),
                    self.config.capacity_bytes / entry_bytes,
                    "the model holds as many entries as the capacity fits"
                );
                assert!(
                    model.items() <= model.capacity_items(),
                    "no more entries than room"
                );
                model.check_invariants();
            }
            RowStore::Data(lru) => {
                assert_eq!(lru.capacity_bytes(), self.config.capacity_bytes);
                lru.check_invariants();
            }
        }
        assert!(self.used_bytes() <= self.config.capacity_bytes);
    }

    /// A read of `key`: true if its row is cached. Volume mode decides with
    /// `unit_draw` (uniform in `[0, 1)`, see the module doc) against the
    /// key's hit probability ([`PopularityLru::lookup_key`]: its own if the
    /// curve names it, the rest of the curve's otherwise); data mode looks
    /// the key up (making it the most recently used) and ignores the draw.
    pub fn lookup(&mut self, key: u64, unit_draw: f64) -> bool {
        debug_assert!(
            (0.0..1.0).contains(&unit_draw),
            "a draw in [0, 1): {unit_draw}"
        );
        let hit = match &mut self.store {
            RowStore::Volume { model, .. } => model.lookup_key(key, unit_draw),
            RowStore::Data(lru) => lru.get(key),
        };
        self.stats.lookup(hit)
    }

    /// A missed read has fetched `key`'s row of `row_bytes` (key and value;
    /// volume mode counts its mean row instead): the row is cached as the
    /// most recently used, evicting the least recently used rows if full.
    pub fn populate(&mut self, key: u64, row_bytes: u64) {
        match &mut self.store {
            RowStore::Volume { model, .. } => match model.insert() {
                Insertion::Added => self.stats.populations += 1,
                Insertion::Replaced => {
                    self.stats.populations += 1;
                    self.stats.evictions += 1;
                }
                Insertion::AlreadyCached | Insertion::NoRoom => {}
            },
            RowStore::Data(lru) => {
                let admission = lru.insert(key, self.config.entry_bytes(row_bytes));
                if admission.inserted {
                    self.stats.populations += 1;
                }
                self.stats.evictions += admission.evicted;
            }
        }
        debug_assert!(
            self.used_bytes() <= self.config.capacity_bytes,
            "a populate stays within capacity"
        );
    }

    /// A write of `key` with a row of `row_bytes`: per
    /// [`RowCacheConfig::write_policy`], a cached row is updated in place
    /// (Scylla) or invalidated (Cassandra); an uncached row stays uncached.
    /// Volume mode decides whether the row is cached with `unit_draw`, as
    /// a read of `key` would.
    pub fn write(&mut self, key: u64, row_bytes: u64, unit_draw: f64) {
        debug_assert!(
            (0.0..1.0).contains(&unit_draw),
            "a draw in [0, 1): {unit_draw}"
        );
        let policy = self.config.write_policy;
        let entry_bytes = self.config.entry_bytes(row_bytes);
        match (&mut self.store, policy) {
            (RowStore::Volume { model, .. }, WritePolicy::UpdateInPlace) => {
                if model.lookup_key(key, unit_draw) {
                    self.stats.updates += 1;
                }
            }
            (RowStore::Volume { model, .. }, WritePolicy::Invalidate) => {
                if model.lookup_key(key, unit_draw) && model.remove() {
                    self.stats.invalidations += 1;
                }
            }
            (RowStore::Data(lru), WritePolicy::UpdateInPlace) => {
                if let Some(evicted) = lru.update(key, entry_bytes) {
                    self.stats.updates += 1;
                    self.stats.evictions += evicted;
                }
            }
            (RowStore::Data(lru), WritePolicy::Invalidate) => {
                if lru.remove(key) {
                    self.stats.invalidations += 1;
                }
                debug_assert!(!lru.contains(key), "an invalidated row is gone");
            }
        }
        debug_assert!(
            self.used_bytes() <= self.config.capacity_bytes,
            "a write stays within capacity"
        );
    }

    /// Changes the memory the cache may hold, evicting the least recently
    /// used rows to fit.
    pub fn set_capacity_bytes(&mut self, capacity_bytes: u64) {
        self.config.capacity_bytes = capacity_bytes;
        let evicted = match &mut self.store {
            RowStore::Volume { model, entry_bytes } => {
                model.set_capacity_items(capacity_bytes / *entry_bytes)
            }
            RowStore::Data(lru) => lru.set_capacity_bytes(capacity_bytes),
        };
        self.stats.evictions += evicted;
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Volume mode: the keys the reads ask for on this shard changed. Data
    /// mode keeps real keys and has nothing to change; returns false.
    pub fn set_key_rows(&mut self, key_rows: f64) -> Result<bool, String> {
        debug_assert!(!key_rows.is_nan(), "a key count is a number");
        match &mut self.store {
            RowStore::Volume { model, .. } => model.set_population(key_rows).map(|()| true),
            RowStore::Data(_) => Ok(false),
        }
    }

    /// Volume mode: starts warm, filled to its steady state (`[data] cache
    /// = "warm"`). Data mode cannot invent the keys; returns false.
    pub fn warm(&mut self) -> bool {
        match &mut self.store {
            RowStore::Volume { model, .. } => {
                model.warm();
                true
            }
            RowStore::Data(_) => false,
        }
    }

    /// Volume mode: the probability that the next read hits. Data mode:
    /// `None` (see [`RowCache::stats`]).
    pub fn hit_probability(&self) -> Option<f64> {
        let probability = match &self.store {
            RowStore::Volume { model, .. } => Some(model.hit_probability()),
            RowStore::Data(_) => None,
        };
        debug_assert!(probability.is_none_or(|p| (0.0..=1.0).contains(&p)));
        probability
    }

    /// Volume mode: the popularity model.
    pub fn model(&self) -> Option<&PopularityLru> {
        match &self.store {
            RowStore::Volume { model, .. } => Some(model),
            RowStore::Data(_) => None,
        }
    }

    /// Rows cached.
    pub fn rows(&self) -> u64 {
        let rows = match &self.store {
            RowStore::Volume { model, .. } => model.items(),
            RowStore::Data(lru) => lru.len() as u64,
        };
        debug_assert!(
            rows * self.config.entry_overhead_bytes <= self.config.capacity_bytes,
            "every cached row takes at least its overhead of the capacity"
        );
        rows
    }

    /// Bytes the cached rows cost.
    pub fn used_bytes(&self) -> u64 {
        match &self.store {
            RowStore::Volume { model, entry_bytes } => model.items() * entry_bytes,
            RowStore::Data(lru) => lru.used_bytes(),
        }
    }

    /// The configuration, with the current capacity.
    pub fn config(&self) -> &RowCacheConfig {
        &self.config
    }

    /// Activity counters since the cache was made.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::unit_hash;
    use proptest::prelude::*;

    const DRAW_SALT: u64 = 0x726f_7763_6163_6865;
    const KEY_SALT: u64 = 0x6b65_7973_616c_7421;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// "10% of the keys get 90% of the reads."
    fn skewed() -> HotMass {
        HotMass::new(vec![(0.0, 0.0), (0.1, 0.9), (1.0, 1.0)]).unwrap()
    }

    /// A key drawn from `skewed()` over keys `0..keys`, from draw `i`.
    fn skewed_key(i: u64, keys: u64) -> u64 {
        let hot = keys / 10;
        let u = unit_hash(i, KEY_SALT);
        if u < 0.9 {
            (u / 0.9 * hot as f64) as u64
        } else {
            hot + ((u - 0.9) / 0.1 * (keys - hot) as f64) as u64
        }
    }

    #[test]
    fn hot_mass_checks_its_points() {
        assert!(HotMass::new(vec![(0.0, 0.0)]).is_err());
        assert!(HotMass::new(vec![(0.0, 0.0), (0.5, f64::NAN), (1.0, 1.0)]).is_err());
        assert!(HotMass::new(vec![(0.1, 0.0), (1.0, 1.0)]).is_err());
        assert!(HotMass::new(vec![(0.0, 0.0), (1.0, 0.9)]).is_err());
        assert!(HotMass::new(vec![(0.0, 0.0), (0.5, 0.6), (0.4, 0.7), (1.0, 1.0)]).is_err());
        assert!(HotMass::new(vec![(0.0, 0.0), (0.5, 0.6), (0.6, 0.5), (1.0, 1.0)]).is_err());
        // Coldest keys first: convex, rejected.
        let err = HotMass::new(vec![(0.0, 0.0), (0.9, 0.1), (1.0, 1.0)]).unwrap_err();
        assert!(err.contains("concave"), "{err}");
        // Endpoints within 1e-9 are snapped; repeated points dropped.
        let curve = HotMass::new(vec![
            (1e-12, 0.0),
            (0.1, 0.5),
            (0.1, 0.5),
            (1.0, 1.0 - 1e-12),
        ])
        .unwrap();
        assert_eq!(curve.points(), &[(0.0, 0.0), (0.1, 0.5), (1.0, 1.0)]);
        // A vertical first segment (an atom) is concave.
        assert!(HotMass::new(vec![(0.0, 0.0), (0.0, 0.3), (1.0, 1.0)]).is_ok());
        // ... but not after a sloped one.
        assert!(HotMass::new(vec![(0.0, 0.0), (0.5, 0.5), (0.5, 0.7), (1.0, 1.0)]).is_err());
    }

    #[test]
    fn hot_mass_interpolates_and_inverts() {
        let curve = skewed();
        assert!(close(curve.mass(0.05), 0.45, 1e-12));
        assert!(close(curve.mass(0.1), 0.9, 1e-12));
        assert!(close(curve.mass(0.55), 0.95, 1e-12));
        assert_eq!(
            (curve.mass(-1.0), curve.mass(2.0), curve.mass(f64::NAN)),
            (0.0, 1.0, 0.0)
        );
        for x in [0.0, 0.01, 0.1, 0.3, 0.99, 1.0] {
            assert!(
                close(curve.key_fraction_for_mass(curve.mass(x)), x, 1e-12),
                "{x}"
            );
        }
        let atom = HotMass::new(vec![(0.0, 0.0), (0.0, 0.3), (1.0, 1.0)]).unwrap();
        assert!(close(atom.mass(0.0), 0.3, 1e-12));
        assert_eq!(atom.key_fraction_for_mass(0.2), 0.0);
        assert_eq!(HotMass::uniform().mass(0.37), 0.37);
    }

    #[test]
    fn paged_popularity_dilutes_hot_keys() {
        // Uniform stays uniform.
        let paged = HotMass::uniform().paged(13.0);
        for x in [0.1, 0.5, 0.9] {
            assert!(close(paged.mass(x), x, 1e-9), "{x}: {}", paged.mass(x));
        }
        // One hot key among 1000 at 10 keys a page: one page in 100.
        let one_key = HotMass::new(vec![(0.0, 0.0), (0.001, 1.0), (1.0, 1.0)]).unwrap();
        let paged = one_key.paged(10.0);
        let pages_for_all = paged.key_fraction_for_mass(1.0 - 1e-9);
        assert!(close(pages_for_all, 0.01, 2e-4), "{pages_for_all}");
        // Skewed keys: a page fraction holds less mass than the same key
        // fraction, more than uniform.
        let paged = skewed().paged(13.0);
        for y in [0.05, 0.1, 0.3] {
            assert!(paged.mass(y) < skewed().mass(y) && paged.mass(y) > y, "{y}");
        }
        // Fewer keys than pages: squeezed into the first pages.
        let sparse = skewed().paged(0.5);
        assert!(close(sparse.mass(0.05), 0.9, 1e-12));
        assert!(close(sparse.mass(0.5), 1.0, 1e-12));
        assert!(HotMass::new(sparse.points().to_vec()).is_ok());
    }

    #[test]
    fn the_short_series_matches_expm1() {
        for x in [0.0f64, 1e-12, 1e-7, 3e-5, 2.5e-4, 9.99e-4, 1e-3, 0.5, 30.0] {
            let exact = (-x).exp_m1();
            let ours = exp_m1_of_negative(x);
            assert!(
                (ours - exact).abs() <= 1e-13 * exact.abs(),
                "{x}: {ours} vs {exact}"
            );
        }
    }

    #[test]
    fn tangent_tracks_the_solved_hit_rate() {
        // A smooth concave curve (1 - (1 - x)^8) and its paged form, warmed
        // row by row: between solves the tangent's hit rate stays within
        // 0.1% of a fresh solve at the same fill.
        let smooth: Vec<(f64, f64)> = (0..=200)
            .map(|i| {
                let x = f64::from(i) / 200.0;
                (x, 1.0 - (1.0 - x).powi(8))
            })
            .collect();
        let smooth = HotMass::new(smooth).unwrap();
        for curve in [smooth.paged(13.0), smooth, skewed()] {
            let mut cache = PopularityLru::new(&curve, 1e6, 200_000).unwrap();
            let mut worst: f64 = 0.0;
            for step in 0..200_000u64 {
                cache.insert();
                if step % 97 == 0 && step > 1000 {
                    let mut solved = cache.clone();
                    solved.refresh(true);
                    let error = (cache.hit_probability() / solved.hit_probability() - 1.0).abs();
                    worst = worst.max(error);
                }
            }
            assert!(worst < 1e-3, "tangent off by {worst}");
            assert_eq!(cache.items(), 200_000);
        }
    }

    /// R1's shape on a small scale: key 42 takes 16% of the reads, the
    /// rest spread evenly over a million keys. Once warm, key 42 is held;
    /// other keys hit at the rest's rate; together they hit at `H`.
    #[test]
    fn a_named_hot_key_hits_on_its_own_and_the_rest_keep_the_balance() {
        let keys = 1e6;
        let curve = HotMass::new(vec![(0.0, 0.0), (1.0 / keys, 0.16), (1.0, 1.0)])
            .unwrap()
            .with_hot_keys(vec![(42, 0.16)])
            .unwrap();
        let unnamed = HotMass::new(curve.points().to_vec()).unwrap();
        let mut cache = PopularityLru::new(&curve, keys, 100_000).unwrap();
        let mut plain = PopularityLru::new(&unnamed, keys, 100_000).unwrap();
        assert_eq!(cache.key_hit_probability(42), 0.0, "cold");
        for step in 0..100_000u32 {
            cache.insert();
            plain.insert();
            if step == 100 {
                // A hundred reads in, it has been read (1 - 0.84^100).
                assert!(cache.key_hit_probability(42) > 0.999_99);
            }
        }
        let hit = cache.hit_probability();
        assert_eq!(hit, plain.hit_probability(), "naming keys moves no mass");
        let (hot, cold) = (cache.key_hit_probability(42), cache.key_hit_probability(7));
        assert!(hot > 0.999_999, "{hot}");
        // The rest: a tenth of the uniform keys, less the slot key 42 takes.
        assert!((cold - 0.1).abs() < 1e-3, "{cold}");
        assert!((0.16 * hot + 0.84 * cold - hit).abs() < 1e-9);
        assert_eq!(plain.key_hit_probability(42), plain.key_hit_probability(7));
        // Misnamed keys are refused.
        for bad in [
            vec![(1, 0.0)],
            vec![(1, 0.6), (2, 0.6)],
            vec![(3, 0.1), (3, 0.1)],
        ] {
            assert!(HotMass::uniform().with_hot_keys(bad).is_err());
        }
    }

    #[test]
    fn a_cold_cache_misses() {
        let config = RowCacheConfig::scylla(1 << 30);
        let mut cache = RowCache::volume(config, &HotMass::uniform(), 1e6, 180).unwrap();
        assert_eq!(cache.hit_probability(), Some(0.0));
        assert!(!cache.lookup(7, 0.0));
        assert_eq!((cache.rows(), cache.used_bytes()), (0, 0));
        let mut data = RowCache::data(config);
        assert!(!data.lookup(7, 0.0));
        data.populate(7, 180);
        assert!(data.lookup(7, 0.99));
        assert_eq!(data.stats().hits, 1);
        assert_eq!(data.stats().misses, 1);
        assert_eq!(data.used_bytes(), 180 + SCYLLA_2_2_ENTRY_OVERHEAD_BYTES);
    }

    #[test]
    fn uniform_keys_warm_to_cache_rows_over_key_rows() {
        // 100k keys, room for 20k rows.
        let keys = 100_000u64;
        let entry = 180 + SCYLLA_2_2_ENTRY_OVERHEAD_BYTES;
        let config = RowCacheConfig::scylla(20_000 * entry);
        let mut cache = RowCache::volume(config, &HotMass::uniform(), keys as f64, 180).unwrap();
        let mut reads = 0u64;
        // Warming follows 1 - exp(-n/K) while not full.
        for checkpoint in [5_000u64, 10_000, 20_000] {
            while reads < checkpoint {
                if !cache.lookup(0, unit_hash(reads, DRAW_SALT)) {
                    cache.populate(0, 180);
                }
                reads += 1;
            }
            let expected = 1.0 - (-(reads as f64) / keys as f64).exp();
            let hit = cache.hit_probability().unwrap();
            println!("after {reads} reads: hit {hit:.4}, expected {expected:.4}");
            assert!(close(hit, expected, 0.005), "{hit} vs {expected}");
            // For uniform keys the hit rate is the cached fraction.
            assert!(close(hit, cache.rows() as f64 / keys as f64, 1e-3));
        }
        while reads < 400_000 {
            if !cache.lookup(0, unit_hash(reads, DRAW_SALT)) {
                cache.populate(0, 180);
            }
            reads += 1;
        }
        assert_eq!(cache.rows(), 20_000);
        assert_eq!(cache.used_bytes(), 20_000 * entry);
        assert!(close(cache.hit_probability().unwrap(), 0.2, 1e-6));
        let before = cache.stats();
        for i in 0..100_000 {
            cache.lookup(0, unit_hash(i, DRAW_SALT ^ 1));
        }
        let hits = cache.stats().hits - before.hits;
        println!("steady state: {hits} hits in 100000 reads");
        assert!((hits as f64 / 100_000.0 - 0.2).abs() < 0.005);
        assert!(cache.stats().evictions > 0);
    }

    #[test]
    fn skewed_popularity_matches_an_exact_lru() {
        // The model against an exact LRU fed keys drawn from the same curve.
        let keys = 20_000u64;
        for capacity in [500u64, 1_000, 2_000, 6_000] {
            let config = RowCacheConfig {
                capacity_bytes: capacity * 100,
                entry_overhead_bytes: 0,
                write_policy: WritePolicy::UpdateInPlace,
            };
            let mut model = RowCache::volume(config, &skewed(), keys as f64, 100).unwrap();
            let mut exact = RowCache::data(config);
            let (mut model_misses, mut exact_misses) = (0u64, 0u64);
            let (mut model_full, mut exact_full) = (None, None);
            let reads = 300_000u64;
            let (mut model_late, mut exact_late) = (0u64, 0u64);
            for i in 0..reads {
                let key = skewed_key(i, keys);
                if !exact.lookup(key, 0.0) {
                    exact.populate(key, 100);
                    exact_misses += 1;
                    if i >= reads / 2 {
                        exact_late += 1;
                    }
                }
                if !model.lookup(0, unit_hash(i, DRAW_SALT)) {
                    model.populate(0, 100);
                    model_misses += 1;
                    if i >= reads / 2 {
                        model_late += 1;
                    }
                }
                if exact_full.is_none() && exact.rows() == capacity {
                    exact_full = Some(i);
                }
                if model_full.is_none() && model.rows() == capacity {
                    model_full = Some(i);
                }
            }
            let exact_hit = 1.0 - exact_late as f64 / (reads / 2) as f64;
            let model_hit = 1.0 - model_late as f64 / (reads / 2) as f64;
            let che = model.model().unwrap().steady_state_hit_probability();
            let bound = skewed().mass(capacity as f64 / keys as f64);
            println!(
                "capacity {capacity}: exact LRU hit {exact_hit:.4}, model {model_hit:.4} (Che {che:.4}, hottest-first bound {bound:.4}); full after {exact_full:?} / {model_full:?} reads; misses {exact_misses} / {model_misses}"
            );
            assert!(close(exact_hit, che, 0.02), "{exact_hit} vs {che}");
            assert!(close(model_hit, che, 0.01), "{model_hit} vs {che}");
            assert!(che <= bound + 1e-9);
            // Warming: the fill-up time agrees within 10%.
            let (a, b) = (exact_full.unwrap() as f64, model_full.unwrap() as f64);
            assert!((a - b).abs() <= 0.1 * a, "{a} vs {b}");
        }
    }

    #[test]
    fn cassandra_writes_invalidate() {
        // Room for every key, half the operations writes: a read hits iff
        // the previous operation on its key was a read, so the hit rate
        // settles at 1/2 in both modes.
        let keys = 2_000u64;
        let config = RowCacheConfig::cassandra(64);
        let mut model = RowCache::volume(config, &HotMass::uniform(), keys as f64, 180).unwrap();
        let mut exact = RowCache::data(config);
        let (mut model_hits, mut exact_hits, mut reads) = (0u64, 0u64, 0u64);
        for i in 0..400_000u64 {
            let key = (unit_hash(i, KEY_SALT) * keys as f64) as u64;
            let draw = unit_hash(i, DRAW_SALT);
            let is_read = unit_hash(i, DRAW_SALT ^ 7) < 0.5;
            if is_read {
                let counting = i >= 200_000;
                if exact.lookup(key, 0.0) {
                    exact_hits += u64::from(counting);
                } else {
                    exact.populate(key, 180);
                }
                if model.lookup(0, draw) {
                    model_hits += u64::from(counting);
                } else {
                    model.populate(0, 180);
                }
                reads += u64::from(counting);
            } else {
                exact.write(key, 180, 0.0);
                model.write(0, 180, draw);
            }
        }
        let (exact_rate, model_rate) = (
            exact_hits as f64 / reads as f64,
            model_hits as f64 / reads as f64,
        );
        println!("50% writes: exact hit {exact_rate:.4}, model {model_rate:.4}");
        assert!(close(exact_rate, 0.5, 0.01));
        assert!(close(model_rate, 0.5, 0.01));
        assert!(model.stats().invalidations > 0 && exact.stats().invalidations > 0);
        // Row cache off (the 3.11 default): always misses.
        let mut off = RowCache::volume(RowCacheConfig::cassandra(0), &skewed(), 1e6, 180).unwrap();
        for i in 0..1000 {
            assert!(!off.lookup(0, unit_hash(i, DRAW_SALT)));
            off.populate(0, 180);
        }
        assert_eq!(off.rows(), 0);
    }

    #[test]
    fn scylla_writes_update_in_place() {
        let config = RowCacheConfig::scylla(10 * 1300);
        let mut cache = RowCache::data(config);
        cache.populate(1, 180);
        cache.populate(2, 180);
        cache.write(1, 300, 0.0);
        cache.write(3, 300, 0.0); // not cached: stays out
        assert_eq!(cache.rows(), 2);
        assert_eq!(
            cache.used_bytes(),
            180 + 300 + 2 * SCYLLA_2_2_ENTRY_OVERHEAD_BYTES
        );
        assert_eq!(cache.stats().updates, 1);
        // Volume mode: writes change nothing but the count.
        let mut volume = RowCache::volume(config, &HotMass::uniform(), 100.0, 180).unwrap();
        for _ in 0..10 {
            volume.populate(0, 180);
        }
        let hit = volume.hit_probability().unwrap();
        for i in 0..1000 {
            volume.write(0, 180, unit_hash(i, DRAW_SALT));
        }
        assert_eq!(volume.hit_probability(), Some(hit));
        assert_eq!(volume.rows(), 10);
        assert!(volume.stats().updates > 50);
    }

    #[test]
    fn shrinking_capacity_evicts_down_the_curve() {
        let keys = 1e9;
        let config = RowCacheConfig::scylla(0);
        let entry = config.entry_bytes(310);
        let mut cache = RowCache::volume(
            RowCacheConfig::scylla(10_000_000 * entry),
            &skewed(),
            keys,
            310,
        )
        .unwrap();
        assert!(cache.warm());
        assert_eq!(cache.rows(), 10_000_000);
        let full = cache.hit_probability().unwrap();
        cache.set_capacity_bytes(2_000_000 * entry);
        assert_eq!(cache.rows(), 2_000_000);
        assert_eq!(cache.stats().evictions, 8_000_000);
        let smaller = cache.hit_probability().unwrap();
        // Steady state at each capacity, Che's approximation under the
        // hottest-first bound.
        println!("1% of keys cached: {full:.4}; 0.2%: {smaller:.4}");
        assert!(smaller < full && full <= skewed().mass(0.01));
        assert!(smaller > 0.0);
        // A warm cache of every popular key hits always.
        let mut all =
            RowCache::volume(RowCacheConfig::scylla(u64::MAX), &skewed(), 1000.0, 310).unwrap();
        all.warm();
        assert_eq!(all.hit_probability(), Some(1.0));
        // Data mode cannot warm.
        assert!(!RowCache::data(config).warm());
    }

    #[test]
    fn scylla_capacity_is_the_free_memory() {
        assert_eq!(scylla_capacity_bytes(1000, 300, 100), 600);
        assert_eq!(scylla_capacity_bytes(1000, 900, 200), 0);
        assert_eq!(
            RowCacheConfig::cassandra(10 * 1024).capacity_bytes,
            10 << 30
        );
        assert_eq!(RowCacheConfig::cassandra(0).capacity_bytes, 0);
    }

    #[test]
    fn lru_accounts_bytes_and_evicts_the_oldest() {
        let mut lru = LruBytes::new(1000);
        assert!(lru.insert(1, 400).inserted);
        assert!(lru.insert(2, 400).inserted);
        assert!(lru.get(1)); // 2 is now the oldest
        let admission = lru.insert(3, 300);
        assert_eq!(
            admission,
            Admission {
                inserted: true,
                evicted: 1
            }
        );
        assert!(!lru.contains(2));
        assert_eq!(lru.used_bytes(), 700);
        assert_eq!(
            lru.iter_newest_first().collect::<Vec<_>>(),
            vec![(3, 300), (1, 400)]
        );
        // Too big for the whole cache: not cached, its old copy dropped.
        assert_eq!(
            lru.insert(1, 1001),
            Admission {
                inserted: false,
                evicted: 0
            }
        );
        assert!(!lru.contains(1));
        assert_eq!(lru.used_bytes(), 300);
        // Growing an entry in place keeps its recency and evicts others.
        lru.insert(4, 100);
        lru.insert(5, 100);
        assert_eq!(lru.update(5, 700), Some(1)); // evicts 3
        assert_eq!(
            lru.iter_newest_first().collect::<Vec<_>>(),
            vec![(5, 700), (4, 100)]
        );
        assert_eq!(lru.update(6, 10), None);
        assert_eq!(lru.entry_bytes(5), Some(700));
        // Shrinking the capacity evicts, oldest first.
        assert_eq!(lru.set_capacity_bytes(750), 1);
        assert!(lru.contains(5) && !lru.contains(4));
        assert_eq!(lru.set_capacity_bytes(500), 1);
        assert!(lru.is_empty() && lru.used_bytes() == 0);
        assert!(!lru.remove(5));
    }

    #[test]
    fn lru_reuses_its_slots() {
        let mut lru = LruBytes::with_entries(100 * 64, 128);
        for key in 0..100_000u64 {
            lru.insert(key, 64);
        }
        assert_eq!(lru.len(), 100);
        assert!(lru.nodes.capacity() <= 128);
        assert_eq!(lru.used_bytes(), 100 * 64);
        assert!((99_900..100_000).all(|key| lru.contains(key)));
    }

    /// The reference: a vector, most recent last.
    #[derive(Default)]
    struct NaiveLru {
        entries: Vec<(u64, u64)>,
        capacity: u64,
    }

    impl NaiveLru {
        fn used(&self) -> u64 {
            self.entries.iter().map(|e| e.1).sum()
        }
        fn position(&self, key: u64) -> Option<usize> {
            self.entries.iter().position(|e| e.0 == key)
        }
        fn fit(&mut self) -> u64 {
            let mut evicted = 0;
            while self.used() > self.capacity {
                self.entries.remove(0);
                evicted += 1;
            }
            evicted
        }
        fn get(&mut self, key: u64) -> bool {
            match self.position(key) {
                Some(at) => {
                    let entry = self.entries.remove(at);
                    self.entries.push(entry);
                    true
                }
                None => false,
            }
        }
        fn insert(&mut self, key: u64, bytes: u64) -> Admission {
            if let Some(at) = self.position(key) {
                self.entries.remove(at);
            }
            if bytes > self.capacity {
                return Admission {
                    inserted: false,
                    evicted: 0,
                };
            }
            self.entries.push((key, bytes));
            Admission {
                inserted: true,
                evicted: self.fit(),
            }
        }
        fn update(&mut self, key: u64, bytes: u64) -> Option<u64> {
            let at = self.position(key)?;
            self.entries[at].1 = bytes;
            Some(self.fit())
        }
        fn remove(&mut self, key: u64) -> bool {
            match self.position(key) {
                Some(at) => {
                    self.entries.remove(at);
                    true
                }
                None => false,
            }
        }
    }

    proptest! {
        #[test]
        fn lru_agrees_with_a_naive_lru(
            capacity in 0u64..2_000,
            ops in prop::collection::vec((0u8..6, 0u64..24, 0u64..700), 0..300),
        ) {
            let mut lru = LruBytes::new(capacity);
            let mut naive = NaiveLru { capacity, ..NaiveLru::default() };
            for (op, key, bytes) in ops {
                match op {
                    0 | 1 => prop_assert_eq!(lru.insert(key, bytes), naive.insert(key, bytes)),
                    2 => prop_assert_eq!(lru.get(key), naive.get(key)),
                    3 => prop_assert_eq!(lru.update(key, bytes), naive.update(key, bytes)),
                    4 => prop_assert_eq!(lru.remove(key), naive.remove(key)),
                    _ => {
                        let new_capacity = bytes * 3;
                        naive.capacity = new_capacity;
                        prop_assert_eq!(lru.set_capacity_bytes(new_capacity), naive.fit());
                    }
                }
                prop_assert_eq!(lru.used_bytes(), naive.used());
                prop_assert!(lru.used_bytes() <= lru.capacity_bytes());
                let order: Vec<(u64, u64)> = naive.entries.iter().rev().copied().collect();
                prop_assert_eq!(lru.iter_newest_first().collect::<Vec<_>>(), order);
            }
        }

        #[test]
        fn the_model_stays_in_bounds_and_hits_more_as_it_fills(
            hot_keys in 0.001f64..0.5,
            hot_mass in 0.0f64..1.0,
            population in 1.0f64..1e12,
            capacity in 0u64..5_000,
            inserts in 0usize..3_000,
        ) {
            let hot_mass = hot_mass.max(hot_keys);
            let curve = HotMass::new(vec![(0.0, 0.0), (hot_keys, hot_mass), (1.0, 1.0)]).unwrap();
            let mut model = PopularityLru::new(&curve, population, capacity).unwrap();
            let mut last = model.hit_probability();
            prop_assert_eq!(last, 0.0);
            for _ in 0..inserts {
                model.insert();
                let hit = model.hit_probability();
                prop_assert!((0.0..=1.0).contains(&hit));
                prop_assert!(hit >= last - 1e-12);
                prop_assert!(model.items() <= capacity);
                prop_assert!(model.items() as f64 <= population.ceil());
                last = hit;
            }
            // Never above the hottest-first bound (with one solve's lag).
            let bound = curve.mass(model.items() as f64 / population);
            prop_assert!(last <= bound + 1e-9, "{} > {}", last, bound);
            model.warm();
            let steady = model.hit_probability();
            prop_assert!(steady >= last - 1e-12);
            prop_assert!((steady - model.steady_state_hit_probability()).abs() < 1e-9);
        }

        #[test]
        fn paged_curves_are_valid(
            hot_keys in 0.0001f64..0.5,
            hot_mass in 0.0f64..1.0,
            keys_per_page in 0.01f64..100.0,
        ) {
            let hot_mass = hot_mass.max(hot_keys);
            let curve = HotMass::new(vec![(0.0, 0.0), (hot_keys, hot_mass), (1.0, 1.0)]).unwrap();
            let paged = curve.paged(keys_per_page);
            prop_assert!(HotMass::new(paged.points().to_vec()).is_ok());
            // Pages are never hotter per unit than the keys they hold.
            for y in [0.01, 0.1, 0.5] {
                prop_assert!(paged.mass(y) <= curve.mass(y.min(1.0) / keys_per_page.min(1.0)) + 1e-9);
            }
        }
    }
}
