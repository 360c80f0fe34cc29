//! Size-tiered compaction (STCS) as Scylla 2.x/3.0 decides it: which
//! SSTables to merge next, how many merges are pending, and which jobs may
//! run side by side.
//!
//! What is modelled (scylla-mechanisms.md section 2.1, read from
//! `sstables/size_tiered_compaction_strategy.hh` and
//! `sstables/compaction_manager.cc` @2.2/@2.3/@3.0):
//! - [`get_buckets`]: SSTables sorted by data size, ascending, each joining
//!   the first bucket, in the order of a `std::map` keyed by the bucket's
//!   (integer) average size, whose average `avg` satisfies
//!   `avg x bucket_low < s < avg x bucket_high`, or where both `s` and `avg`
//!   are below `min_sstable_size`; the bucket is then re-keyed by its new
//!   average `(n x avg + s) / (n + 1)` (integer division, as in the C++);
//! - [`pick`] (`get_sstables_for_compaction` + `most_interesting_bucket`):
//!   SSTables already being compacted are excluded (`get_candidates`), every
//!   bucket is truncated to its `max_threshold` smallest members, buckets
//!   with at least `min_threshold` members qualify, and the one with the
//!   smallest (integer) average size wins, the first in map order on a tie.
//!   If none qualifies and `compaction_enforce_min_threshold` is false, the
//!   same again with `min_threshold = 2`;
//! - [`pending_compactions`] (`estimated_pending_compactions`): the sum over
//!   buckets of all SSTables (compacting ones included) with at least
//!   `min_threshold` members of `ceil(n / max_threshold)`;
//! - the concurrency rule ([`job_weight`], [`trim_to_weight`]): a job's
//!   weight is `floor(log4(input bytes))`; one running job per weight; a job
//!   whose weight is taken drops its largest inputs, down to `min_threshold`,
//!   until its weight is free, and is refused otherwise (`trim_to_compact`,
//!   `can_register_weight`).
//!
//! Left out:
//! - the single-SSTable tombstone compaction that `get_sstables_for_compaction`
//!   falls back to when no bucket qualifies (the oldest SSTable of the largest
//!   tier whose droppable-tombstone ratio exceeds `tombstone_threshold` 0.2):
//!   SSTables here carry no tombstone statistics, so [`pick`] returns `None`
//!   where Scylla would look for one;
//! - `cold_reads_to_omit` (parsed, not used by Scylla either) and Cassandra's
//!   read-hotness ordering of buckets;
//! - the "one job per table" rule of strategies without
//!   `parallel_compaction()` (STCS is parallel).
//!
//! Version notes:
//! - Scylla 2.1 has no pair fallback: pass `enforce_min_threshold = true` to
//!   [`pick`] for 2.1 (`size_tiered_compaction_strategy.hh` @2.1.0);
//! - the set of busy weights is per table in 2.1 and per shard from 2.2
//!   (`_weight_tracker` in `compaction_manager.hh`); [`trim_to_weight`] takes
//!   the set as input, so the caller chooses the scope.
//!
//! Determinism: the C++ `std::sort` is not stable, so SSTables of equal size
//! can bucket in any order there; here ties are broken by generation.

use std::collections::BTreeMap;

use crate::sstable::SSTable;

/// Bytes in one mebibyte.
pub const MIB: u64 = 1024 * 1024;

/// Base of the logarithm in a job's weight (`WEIGHT_LOG_BASE` in
/// `compaction_manager.cc` @2.1-3.0).
pub const WEIGHT_LOG_BASE: u64 = 4;

// The weight's base is a power of two, so floor(log4) is exact in integers.
const _: () = assert!(WEIGHT_LOG_BASE.is_power_of_two() && WEIGHT_LOG_BASE > 1);
const _: () = assert!(MIB == 1 << 20);

/// The size-tiered strategy's options, with Scylla's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StcsOptions {
    /// `min_sstable_size`: SSTables (and buckets) smaller than this all
    /// bucket together. Default 50 MiB (`DEFAULT_MIN_SSTABLE_SIZE`).
    pub min_sstable_size_bytes: u64,
    /// `bucket_low`: an SSTable joins a bucket if larger than
    /// `avg x bucket_low`. Default 0.5.
    pub bucket_low: f64,
    /// `bucket_high`: ... and smaller than `avg x bucket_high`. Default 1.5.
    pub bucket_high: f64,
    /// The schema's `min_compaction_threshold`: SSTables a bucket needs to be
    /// compacted. Default 4 (`DEFAULT_MIN_COMPACTION_THRESHOLD`, `schema.hh`).
    pub min_threshold: usize,
    /// The schema's `max_compaction_threshold`: most SSTables one job merges.
    /// Default 32 (`DEFAULT_MAX_COMPACTION_THRESHOLD`, `schema.hh`).
    pub max_threshold: usize,
}

impl Default for StcsOptions {
    fn default() -> StcsOptions {
        let options = StcsOptions {
            min_sstable_size_bytes: 50 * MIB,
            bucket_low: 0.5,
            bucket_high: 1.5,
            min_threshold: 4,
            max_threshold: 32,
        };
        debug_assert!(options.bucket_low < 1.0 && 1.0 < options.bucket_high);
        debug_assert!(2 <= options.min_threshold && options.min_threshold <= options.max_threshold);
        options
    }
}

/// A compaction job cleared to start: its inputs and its concurrency weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrimmedJob {
    /// Generations of the inputs, smallest SSTable first.
    pub generations: Vec<u64>,
    /// `floor(log4(total input bytes))` of the (possibly trimmed) inputs.
    pub weight: u32,
}

/// Groups SSTables of similar size into buckets (`get_buckets`), returned
/// in map order (ascending final average size); each bucket lists its
/// members smallest first.
///
/// Faithful to the C++ down to one quirk: when a bucket's new average equals
/// the key of another bucket, `std::map::insert` does nothing and the
/// re-keyed bucket is lost. With sorted input this needs degenerate options
/// (for example `min_sstable_size_bytes = 0` and several empty SSTables).
pub fn get_buckets<'a>(sstables: &[&'a SSTable], options: &StcsOptions) -> Vec<Vec<&'a SSTable>> {
    let mut sorted: Vec<&SSTable> = sstables.to_vec();
    sorted.sort_by_key(|sstable| (sstable.data_bytes, sstable.generation));

    let mut buckets: BTreeMap<u64, Vec<&SSTable>> = BTreeMap::new();
    for sstable in sorted {
        let size = sstable.data_bytes;
        let joined = buckets
            .keys()
            .copied()
            .find(|&average| joins(size, average, options));
        match joined {
            Some(old_average) => {
                let mut bucket = buckets
                    .remove(&old_average)
                    .expect("the key was just found");
                let members = bucket.len() as u128;
                let new_average =
                    ((members * u128::from(old_average) + u128::from(size)) / (members + 1)) as u64;
                bucket.push(sstable);
                // `std::map::insert`: a no-op when the key exists.
                buckets.entry(new_average).or_insert(bucket);
            }
            None => {
                buckets.entry(size).or_insert_with(|| vec![sstable]);
            }
        }
    }
    let buckets: Vec<Vec<&SSTable>> = buckets.into_values().collect();
    debug_assert!(
        buckets.iter().map(Vec::len).sum::<usize>() <= sstables.len(),
        "a bucket holds SSTables it was given, each once"
    );
    debug_assert!(
        buckets.iter().all(|bucket| bucket
            .windows(2)
            .all(|pair| pair[0].data_bytes <= pair[1].data_bytes)),
        "each bucket lists its members smallest first"
    );
    buckets
}

/// Whether an SSTable of `size` bytes joins a bucket of average `average`.
fn joins(size: u64, average: u64, options: &StcsOptions) -> bool {
    debug_assert!(
        options.bucket_low <= options.bucket_high,
        "a bucket's bounds are ordered"
    );
    let (size_f, average_f) = (size as f64, average as f64);
    (size_f > average_f * options.bucket_low && size_f < average_f * options.bucket_high)
        || (size < options.min_sstable_size_bytes && average < options.min_sstable_size_bytes)
}

/// Integer average data size of a non-empty bucket (`avg_size`).
fn average_size(bucket: &[&SSTable]) -> u64 {
    debug_assert!(!bucket.is_empty(), "the average of an empty bucket");
    let total: u128 = bucket
        .iter()
        .map(|sstable| u128::from(sstable.data_bytes))
        .sum();
    let average = (total / bucket.len() as u128) as u64;
    debug_assert!(
        bucket.iter().any(|sstable| sstable.data_bytes <= average),
        "some member is at most the average"
    );
    average
}

/// The bucket to compact among `buckets` (`most_interesting_bucket`): each
/// truncated to its `max_threshold` smallest members, those with at least
/// `min_threshold` members, the smallest average first (the first on a tie).
/// Leveled compaction's size-tiering inside L0 calls it too.
pub(crate) fn most_interesting_bucket<'a>(
    buckets: &[Vec<&'a SSTable>],
    min_threshold: usize,
    max_threshold: usize,
) -> Option<Vec<&'a SSTable>> {
    let mut best: Option<(u64, &[&'a SSTable])> = None;
    for bucket in buckets {
        let pruned = &bucket[..bucket.len().min(max_threshold)];
        if pruned.is_empty() || pruned.len() < min_threshold {
            continue;
        }
        let average = average_size(pruned);
        if best.is_none_or(|(best_average, _)| average < best_average) {
            best = Some((average, pruned));
        }
    }
    let best = best.map(|(_, bucket)| bucket.to_vec());
    debug_assert!(
        best.as_ref()
            .is_none_or(|bucket| (min_threshold.max(1)..=max_threshold).contains(&bucket.len())),
        "a chosen bucket holds between the thresholds"
    );
    best
}

/// The SSTables STCS compacts next, as generations smallest first, or `None`
/// if no bucket qualifies (`get_sstables_for_compaction`).
///
/// `compacting` lists the generations already in a running compaction; they
/// are not candidates. With `enforce_min_threshold` false (Scylla's default
/// `compaction_enforce_min_threshold: false`) a bucket of two or three
/// similar SSTables is compacted when no bucket reaches `min_threshold`.
pub fn pick(
    sstables: &[SSTable],
    compacting: &[u64],
    options: &StcsOptions,
    enforce_min_threshold: bool,
) -> Option<Vec<u64>> {
    let candidates: Vec<&SSTable> = sstables
        .iter()
        .filter(|sstable| !compacting.contains(&sstable.generation))
        .collect();
    let buckets = get_buckets(&candidates, options);
    let chosen = most_interesting_bucket(&buckets, options.min_threshold, options.max_threshold)
        .or_else(|| {
            if enforce_min_threshold {
                None
            } else {
                most_interesting_bucket(&buckets, 2, options.max_threshold)
            }
        })?;
    debug_assert!(
        chosen
            .iter()
            .all(|sstable| !compacting.contains(&sstable.generation)),
        "a pick takes no SSTable a running job holds"
    );
    Some(chosen.iter().map(|sstable| sstable.generation).collect())
}

/// Estimated compactions pending over all of a table's SSTables, compacting
/// ones included: `sum over buckets with n >= min_threshold of
/// ceil(n / max_threshold)` (`estimated_pending_compactions`).
pub fn pending_compactions(sstables: &[SSTable], options: &StcsOptions) -> u64 {
    let all: Vec<&SSTable> = sstables.iter().collect();
    let max = options.max_threshold.max(1);
    let pending: u64 = get_buckets(&all, options)
        .iter()
        .filter(|bucket| bucket.len() >= options.min_threshold)
        .map(|bucket| bucket.len().div_ceil(max) as u64)
        .sum();
    debug_assert!(
        pending <= sstables.len() as u64,
        "at most a job per SSTable"
    );
    pending
}

/// The SSTable sizes size-tiered compaction leaves once it has caught up,
/// for `total_bytes` of data written through flushes of `flush_bytes`: in
/// units of one flush, the total written in base `min_threshold` (4), one
/// SSTable of `flush x 4^k` per unit of digit `k` (each tier holds fewer than
/// min_threshold SSTables, or STCS would merge them), plus what is left
/// below one flush. Largest first. With the pair fallback ([`pick`] with
/// `enforce_min_threshold` false) an idle table merges down to one SSTable
/// per tier: pass 2.
pub fn settled_sizes(total_bytes: u64, flush_bytes: u64, min_threshold: usize) -> Vec<u64> {
    assert!(flush_bytes > 0 && min_threshold >= 2);
    let counts = settled_counts(total_bytes, flush_bytes, min_threshold);
    let mut sizes = tier_sizes(&counts, flush_bytes, min_threshold);
    sizes.reverse();
    let rest = total_bytes % flush_bytes;
    if rest > 0 {
        sizes.push(rest);
    }
    debug_assert_eq!(
        sizes.iter().sum::<u64>(),
        total_bytes,
        "the sizes hold every byte"
    );
    sizes
}

/// How many SSTables each tier holds once size-tiered compaction has caught
/// up ([`settled_sizes`]), the flush-sized tier first: the base-`base`
/// digits of the flushes `total_bytes` makes.
fn settled_counts(total_bytes: u64, flush_bytes: u64, base: usize) -> Vec<u64> {
    let base = base as u64;
    let mut units = total_bytes / flush_bytes;
    let mut counts = Vec::new();
    while units > 0 {
        counts.push(units % base);
        units /= base;
    }
    debug_assert!(
        counts.iter().all(|&count| count < base),
        "digits below the base"
    );
    counts
}

/// The SSTable sizes `counts` hold (the flush-sized tier first, tier `k`
/// of `flush_bytes x base^k`), smallest first.
fn tier_sizes(counts: &[u64], flush_bytes: u64, base: usize) -> Vec<u64> {
    debug_assert!(base >= 2 && flush_bytes > 0);
    let mut sizes = Vec::new();
    let mut tier_bytes = flush_bytes;
    for &count in counts {
        sizes.extend(std::iter::repeat_n(tier_bytes, count as usize));
        tier_bytes = tier_bytes.saturating_mul(base as u64);
    }
    debug_assert_eq!(sizes.len() as u64, counts.iter().sum::<u64>());
    sizes
}

/// The SSTable sizes of a size-tiered table caught up in the middle of its
/// write cycle: [`settled_sizes`], except that the two lowest tiers hold
/// `flushes_into_cycle` (0..`min_threshold`^2) flushes as a base-
/// `min_threshold` number, the count a table has that far into the cycle
/// the two tiers go through (one flush-size SSTable per flush until there
/// are `min_threshold`, which compact into one of the next tier, and so
/// on). The bytes that moves are taken from or given to the largest
/// SSTable, so the total stays `total_bytes`; a table too small for that
/// to leave the largest SSTable clear of the two tiers (at least twice the
/// upper one, outside its size bucket) keeps its settled sizes.
pub fn steady_sizes(
    total_bytes: u64,
    flush_bytes: u64,
    min_threshold: usize,
    flushes_into_cycle: u64,
) -> Vec<u64> {
    let base = min_threshold as u64;
    assert!(
        flushes_into_cycle < base * base,
        "{flushes_into_cycle} flushes is past the two lowest tiers' cycle"
    );
    let settled = settled_sizes(total_bytes, flush_bytes, min_threshold);
    let low_tier_max = flush_bytes.saturating_mul(base);
    let (mut sizes, low): (Vec<u64>, Vec<u64>) =
        settled.iter().partition(|&&bytes| bytes > low_tier_max);
    let removed: u64 = low.iter().sum();
    let added = flushes_into_cycle * flush_bytes;
    // The largest (first) SSTable absorbs the difference.
    let Some(largest) = sizes
        .first()
        .and_then(|largest| (largest + removed).checked_sub(added))
        .filter(|&largest| largest >= low_tier_max.saturating_mul(2))
    else {
        return settled;
    };
    sizes[0] = largest;
    for (tier_bytes, count) in [
        (low_tier_max, flushes_into_cycle / base),
        (flush_bytes, flushes_into_cycle % base),
    ] {
        sizes.extend(std::iter::repeat_n(tier_bytes, count as usize));
    }
    debug_assert_eq!(sizes.iter().sum::<u64>(), total_bytes);
    sizes
}

/// Gives a size-tiered layout (`sizes`, largest first) the inputs of a
/// merge in progress on its tier of `tier_bytes` SSTables: `base` of them,
/// the missing ones' bytes taken from the largest SSTable so the total
/// stays. False (and `sizes` unchanged) when the largest could not spare
/// them and stay at least twice the merge's output, clear of its bucket
/// (the top tiers of a table merge rarely and are left settled).
pub fn add_merge_inputs(sizes: &mut Vec<u64>, tier_bytes: u64, base: usize) -> bool {
    let total_before: u64 = sizes.iter().sum();
    let held = sizes.iter().filter(|&&bytes| bytes == tier_bytes).count();
    let missing = base.saturating_sub(held) as u64;
    let output = tier_bytes.saturating_mul(base as u64);
    let Some(largest) = sizes
        .first()
        .and_then(|largest| largest.checked_sub(missing.saturating_mul(tier_bytes)))
        .filter(|&largest| largest / 2 >= output)
    else {
        return false;
    };
    sizes[0] = largest;
    sizes.extend(std::iter::repeat_n(tier_bytes, missing as usize));
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    debug_assert_eq!(sizes.iter().sum::<u64>(), total_before, "the total stays");
    true
}

/// How a size-tiered table's writes drive its low tiers ([`forward`]):
/// flushes of `flush_bytes` every `flush_bytes / write_bytes_per_s`
/// seconds, and merges of `base` similar SSTables that read
/// `merge_bytes_per_s` input bytes a second in all, shared evenly by the
/// merges under way (jobs of one compaction group take turns on its CPU).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WriteCycle {
    /// Bytes of one flush: the smallest tier's SSTable size.
    pub flush_bytes: u64,
    /// SSTables of one tier that merge into one of the next
    /// (`min_threshold`, or 2 with Scylla 2.2's pair fallback).
    pub base: usize,
    /// SSTable bytes the writes bring a second (what their flushes write).
    pub write_bytes_per_s: f64,
    /// Input bytes a second the merges get through, all of them together.
    pub merge_bytes_per_s: f64,
}

/// A size-tiered table's tiers carried forward through a stretch of
/// writes ([`forward`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Forwarded {
    /// SSTables per tier that no merge is reading, the flush-sized tier
    /// first (tier `k` holds SSTables of `flush_bytes x base^k`).
    pub counts: Vec<u64>,
    /// Merges under way, by tier (its `base` inputs are not in `counts`),
    /// with the fraction of their input read, in `[0, 1)`.
    pub merging: Vec<(usize, f64)>,
    /// The active memtable's fill, of the flush size, in `[0, 1)`.
    pub memtable_fill: f64,
}

/// Carries a size-tiered table's tiers (`counts`, SSTables per tier, the
/// flush-sized tier first; no merge under way) and memtable (`memtable_fill`
/// of a flush) through `elapsed_s` seconds of the writes of `cycle`.
///
/// Event by event: a flush adds an SSTable to tier 0; a tier holding
/// `base` SSTables starts merging them unless it is merging already (its
/// jobs share one weight, and Scylla runs one job per weight); a merge of
/// tier `k` reads `base^(k+1)` flushes' worth and, done, adds one SSTable
/// to tier `k + 1`. Merges of different tiers run side by side and share
/// `merge_bytes_per_s`. What this leaves out: size buckets (SSTables of a
/// tier are taken as exactly `flush x base^k`) and the bytes overwrites
/// drop. A tier that gathers `base` more SSTables while it merges (only
/// when merges run slower than the writes) merges them once the running
/// merge ends.
pub fn forward(
    counts: &[u64],
    memtable_fill: f64,
    cycle: &WriteCycle,
    elapsed_s: f64,
) -> Forwarded {
    assert!(cycle.flush_bytes > 0 && cycle.base >= 2, "{cycle:?}");
    assert!(
        (0.0..1.0).contains(&memtable_fill),
        "memtable fill {memtable_fill}"
    );
    let flush = cycle.flush_bytes as f64;
    let base = cycle.base as u64;
    let mut counts = counts.to_vec();
    if counts.is_empty() {
        counts.push(0);
    }
    let mut memtable = memtable_fill * flush;
    // (tier, input bytes left, input bytes in all)
    let mut merges: Vec<(usize, f64, f64)> = Vec::new();
    let start_merges = |counts: &mut Vec<u64>, merges: &mut Vec<(usize, f64, f64)>| {
        for (tier, count) in counts.iter_mut().enumerate() {
            if *count >= base && merges.iter().all(|&(merging, ..)| merging != tier) {
                *count -= base;
                let input = flush * (base as f64).powi(tier as i32 + 1);
                merges.push((tier, input, input));
            }
        }
    };
    start_merges(&mut counts, &mut merges);
    let mut left = elapsed_s.max(0.0);
    while left > 0.0 {
        let to_flush = if cycle.write_bytes_per_s > 0.0 {
            (flush - memtable).max(0.0) / cycle.write_bytes_per_s
        } else {
            f64::INFINITY
        };
        let rate = if merges.is_empty() {
            0.0
        } else {
            cycle.merge_bytes_per_s / merges.len() as f64
        };
        // Merges share the rate evenly, so the one with least input left
        // ends first (ties end together).
        let least_left = merges
            .iter()
            .map(|&(_, remaining, _)| remaining)
            .fold(f64::INFINITY, f64::min);
        let to_merge_end = if rate > 0.0 {
            least_left / rate
        } else {
            f64::INFINITY
        };
        let step = left.min(to_flush).min(to_merge_end);
        left -= step;
        memtable += cycle.write_bytes_per_s * step;
        if step >= to_flush {
            memtable = 0.0;
            counts[0] += 1;
        }
        let merges_end = step >= to_merge_end;
        let mut ended = Vec::new();
        merges.retain_mut(|(tier, remaining, _)| {
            if merges_end && *remaining <= least_left {
                ended.push(*tier);
                return false;
            }
            *remaining -= rate * step;
            true
        });
        for tier in ended {
            if counts.len() <= tier + 1 {
                counts.resize(tier + 2, 0);
            }
            counts[tier + 1] += 1;
        }
        start_merges(&mut counts, &mut merges);
    }
    merges.sort_by_key(|&(tier, ..)| tier);
    debug_assert!(
        merges.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "one merge per tier at a time"
    );
    Forwarded {
        counts,
        merging: merges
            .iter()
            .map(|&(tier, remaining, input)| {
                (
                    tier,
                    (1.0 - remaining / input).clamp(0.0, 1.0 - f64::EPSILON),
                )
            })
            .collect(),
        memtable_fill: (memtable / flush).clamp(0.0, 1.0 - f64::EPSILON),
    }
}

/// A size-tiered table as a preload lays it out ([`window_sizes`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TierLayout {
    /// SSTable sizes, largest first; the inputs of the merges under way
    /// included.
    pub sizes: Vec<u64>,
    /// Merges under way: their input SSTables' size and the fraction read.
    pub merging: Vec<(u64, f64)>,
    /// The active memtable's fill, of the flush size, in `[0, 1)`.
    pub memtable_fill: f64,
}

/// A size-tiered table of `total_bytes` part-way through a window of writes
/// that began with it compacted and its memtable at `memtable_fill`:
/// [`forward`] carries it `elapsed_s` into the window.
///
/// Compacted is [`settled_sizes`]'s tiers, except for how many SSTables
/// each tier below the top one holds: `tiers`, in `[0, 1)`, is the
/// table's position in the cycle those tiers go through (`base^m` flushes
/// for `m` tiers), so shards at different positions hold different counts,
/// as tables whose flushes and merges never ran in step do. The top tier's
/// SSTables take the difference in bytes, evenly, as they do the bytes the
/// window's flushes add, so the total stays; where that would leave one
/// below half its tier's size, fewer tiers are placed (down to the two
/// lowest), and `None` when even that does not fit (a table too small), for
/// the caller to start it compacted.
pub fn window_sizes(
    total_bytes: u64,
    cycle: &WriteCycle,
    tiers: f64,
    memtable_fill: f64,
    elapsed_s: f64,
) -> Option<TierLayout> {
    assert!((0.0..1.0).contains(&tiers), "cycle position {tiers}");
    let base = cycle.base as u64;
    let flush = cycle.flush_bytes;
    let settled = settled_counts(total_bytes, flush, cycle.base);
    let top = settled.len().checked_sub(1)?;
    let tier_bytes = |tier: usize| flush.saturating_mul(base.saturating_pow(tier as u32));
    // Place as many tiers below the top as the top can balance.
    for placed in (2..=top.max(2)).rev() {
        let mut counts = settled.clone();
        counts.resize(counts.len().max(placed + 1), 0);
        let position = (tiers * base.pow(placed as u32) as f64) as u64;
        let mut digits = position;
        for count in counts.iter_mut().take(placed) {
            *count = digits % base;
            digits /= base;
        }
        let forwarded = forward(&counts, memtable_fill, cycle, elapsed_s);
        if top < placed || forwarded.merging.iter().any(|&(tier, _)| tier >= top) {
            // The top tier is placed or merging: nothing left to balance.
            continue;
        }
        let mut below_top = forwarded.counts.clone();
        below_top[top] = 0;
        let mut sizes = tier_sizes(&below_top, flush, cycle.base);
        for &(tier, _) in &forwarded.merging {
            sizes.extend(std::iter::repeat_n(tier_bytes(tier), cycle.base));
        }
        let below: u64 = sizes.iter().sum();
        let top_count = forwarded.counts[top];
        let Some(top_total) = total_bytes.checked_sub(below) else {
            continue;
        };
        if top_count == 0 || top_total / top_count < tier_bytes(top) / 2 {
            continue;
        }
        for i in 0..top_count {
            // Even shares, the rounding in the last.
            let share =
                top_total / top_count + u64::from(i + 1 == top_count) * (top_total % top_count);
            sizes.push(share);
        }
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        debug_assert_eq!(sizes.iter().sum::<u64>(), total_bytes);
        let merging = forwarded
            .merging
            .iter()
            .map(|&(tier, progress)| (tier_bytes(tier), progress))
            .collect();
        return Some(TierLayout {
            sizes,
            merging,
            memtable_fill: forwarded.memtable_fill,
        });
    }
    None
}

/// A job's concurrency weight, `floor(log4(total_input_bytes))`
/// (`calculate_weight`, `compaction_manager.cc` @2.1-3.0).
///
/// Computed exactly in integers; Scylla's `int(log(n) / log(4))` in doubles
/// agrees except just below powers of 4 from 4^24 bytes (256 TiB) up, where
/// the conversion to double rounds up. Zero bytes gives weight 0 (Scylla
/// gives 0 for an empty job; `log(0)` is not reached).
pub fn job_weight(total_input_bytes: u64) -> u32 {
    let weight = if total_input_bytes == 0 {
        0
    } else {
        total_input_bytes.ilog2() / WEIGHT_LOG_BASE.ilog2()
    };
    debug_assert!(
        total_input_bytes == 0
            || (WEIGHT_LOG_BASE.pow(weight) <= total_input_bytes
                && WEIGHT_LOG_BASE
                    .checked_pow(weight + 1)
                    .is_none_or(|next| total_input_bytes < next)),
        "4^weight <= bytes < 4^(weight + 1)"
    );
    weight
}

/// Clears a job to run given the weights of the jobs already running
/// (`trim_to_compact` + `can_register_weight`): if its weight is free, the
/// job runs whole; if not, its largest inputs are dropped one at a time,
/// never below `min_threshold` inputs, until its weight is free. `None` if
/// the weight is still taken (Scylla postpones the table's compaction until
/// a running job ends) or `inputs` is empty.
///
/// A job that already has `min_threshold` inputs or fewer (a pair from the
/// fallback) is never trimmed, only accepted or refused.
pub fn trim_to_weight(
    inputs: &[&SSTable],
    busy_weights: &[u32],
    min_threshold: usize,
) -> Option<TrimmedJob> {
    if inputs.is_empty() {
        return None;
    }
    let mut kept: Vec<&SSTable> = inputs.to_vec();
    kept.sort_by_key(|sstable| (sstable.data_bytes, sstable.generation));
    let mut total: u64 = kept.iter().map(|sstable| sstable.data_bytes).sum();
    let mut weight = job_weight(total);
    while kept.len() > min_threshold && busy_weights.contains(&weight) {
        let largest = kept.pop().expect("more than min_threshold inputs");
        total -= largest.data_bytes;
        weight = job_weight(total);
    }
    if busy_weights.contains(&weight) {
        return None;
    }
    debug_assert!(
        kept.len() == inputs.len() || kept.len() >= min_threshold,
        "trimming stops at min_threshold inputs"
    );
    Some(TrimmedJob {
        generations: kept.iter().map(|sstable| sstable.generation).collect(),
        weight,
    })
}

/// The next job STCS starts on a shard: [`pick`] then [`trim_to_weight`],
/// as `compaction_manager::submit` does. `None` if nothing qualifies or the
/// chosen bucket's weight stays taken (Scylla does not try another bucket).
pub fn next_job(
    sstables: &[SSTable],
    compacting: &[u64],
    busy_weights: &[u32],
    options: &StcsOptions,
    enforce_min_threshold: bool,
) -> Option<TrimmedJob> {
    let generations = pick(sstables, compacting, options, enforce_min_threshold)?;
    let inputs: Vec<&SSTable> = generations
        .iter()
        .filter_map(|generation| {
            sstables
                .iter()
                .find(|sstable| sstable.generation == *generation)
        })
        .collect();
    debug_assert_eq!(
        inputs.len(),
        generations.len(),
        "the pick names SSTables of the table"
    );
    trim_to_weight(&inputs, busy_weights, options.min_threshold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sst(generation: u64, data_bytes: u64) -> SSTable {
        SSTable::for_test(generation, data_bytes, 1, 0, 0)
    }

    fn mib(generation: u64, mebibytes: u64) -> SSTable {
        sst(generation, mebibytes * MIB)
    }

    fn generations(buckets: &[Vec<&SSTable>]) -> Vec<Vec<u64>> {
        buckets
            .iter()
            .map(|bucket| bucket.iter().map(|sstable| sstable.generation).collect())
            .collect()
    }

    fn bucket_set(sstables: &[SSTable], options: &StcsOptions) -> Vec<Vec<u64>> {
        let refs: Vec<&SSTable> = sstables.iter().collect();
        generations(&get_buckets(&refs, options))
    }

    #[test]
    fn the_defaults_are_scyllas() {
        let options = StcsOptions::default();
        assert_eq!(options.min_sstable_size_bytes, 52_428_800);
        assert_eq!((options.bucket_low, options.bucket_high), (0.5, 1.5));
        assert_eq!((options.min_threshold, options.max_threshold), (4, 32));
    }

    #[test]
    fn buckets_follow_the_sorted_sizes_and_the_running_average() {
        let options = StcsOptions::default();
        // Given out of order: sorted to 100, 140, 200, 210 MiB. 140 joins
        // {100} (50 < 140 < 150), average 120; 200 is not below 180, so it
        // starts a bucket; 210 is not below 180 either, but joins {200}.
        let sstables = [mib(3, 200), mib(1, 100), mib(4, 210), mib(2, 140)];
        assert_eq!(
            bucket_set(&sstables, &options),
            vec![vec![1, 2], vec![3, 4]]
        );
    }

    #[test]
    fn a_bucket_is_rekeyed_by_its_new_average() {
        let options = StcsOptions::default();
        // 160 MiB is not within 1.5 x 100 MiB, the first member, but is
        // within 1.5 x 124.5 MiB, the average after 149 MiB joined.
        let sstables = [mib(1, 100), mib(2, 149), mib(3, 160)];
        assert_eq!(bucket_set(&sstables, &options), vec![vec![1, 2, 3]]);
        // Without the middle one, 160 MiB starts its own bucket.
        let sstables = [mib(1, 100), mib(3, 160)];
        assert_eq!(bucket_set(&sstables, &options), vec![vec![1], vec![3]]);
    }

    #[test]
    fn the_bucket_bounds_are_strict() {
        let options = StcsOptions::default();
        // Exactly 1.5 x avg does not join.
        let sstables = [mib(1, 100), mib(2, 150)];
        assert_eq!(bucket_set(&sstables, &options), vec![vec![1], vec![2]]);
        let sstables = [mib(1, 100), sst(2, 150 * MIB - 1)];
        assert_eq!(bucket_set(&sstables, &options), vec![vec![1, 2]]);
    }

    #[test]
    fn sstables_below_min_sstable_size_all_bucket_together() {
        let options = StcsOptions::default();
        // 1, 5, 20 and 49 MiB are far apart in ratio but all below 50 MiB.
        let sstables = [mib(1, 1), mib(2, 5), mib(3, 20), mib(4, 49)];
        assert_eq!(bucket_set(&sstables, &options), vec![vec![1, 2, 3, 4]]);
        assert_eq!(pick(&sstables, &[], &options, true), Some(vec![1, 2, 3, 4]));
        // A 50 MiB SSTable is not below the limit: it joins only by ratio.
        // The small bucket's average is 18.75 MiB, 1.5 x that is 28 MiB.
        let sstables = [mib(1, 1), mib(2, 5), mib(3, 20), mib(4, 49), mib(5, 50)];
        assert_eq!(
            bucket_set(&sstables, &options),
            vec![vec![1, 2, 3, 4], vec![5]]
        );
    }

    #[test]
    fn the_bucket_with_the_smallest_average_wins() {
        let options = StcsOptions::default();
        // Four of ~1 GiB and four of ~100 MiB: the smaller tier goes first,
        // though its bucket is listed in any order among the inputs.
        let sstables = [
            mib(1, 1000),
            mib(2, 1010),
            mib(3, 100),
            mib(4, 1020),
            mib(5, 102),
            mib(6, 1030),
            mib(7, 101),
            mib(8, 103),
        ];
        assert_eq!(
            pick(&sstables, &[], &options, false),
            Some(vec![3, 7, 5, 8])
        );
        // Adding five small SSTables makes theirs the smallest bucket.
        let mut with_small = sstables.to_vec();
        with_small.extend((9..14).map(|generation| mib(generation, 10)));
        assert_eq!(
            pick(&with_small, &[], &options, false),
            Some(vec![9, 10, 11, 12, 13])
        );
    }

    #[test]
    fn a_bucket_of_three_waits_unless_nothing_else_qualifies() {
        let options = StcsOptions::default();
        let three_small = [mib(1, 100), mib(2, 101), mib(3, 102)];
        let four_large = [mib(11, 1000), mib(12, 1001), mib(13, 1002), mib(14, 1003)];
        // A larger bucket of four beats a smaller bucket of three.
        let both: Vec<SSTable> = three_small.iter().chain(&four_large).cloned().collect();
        assert_eq!(
            pick(&both, &[], &options, false),
            Some(vec![11, 12, 13, 14])
        );
        // Alone, the three are compacted only with the pair fallback.
        assert_eq!(pick(&three_small, &[], &options, true), None);
        assert_eq!(
            pick(&three_small, &[], &options, false),
            Some(vec![1, 2, 3])
        );
        // The fallback also picks the smallest average among pairs and
        // triples; a single SSTable is never a job.
        let pairs = [
            mib(1, 1000),
            mib(2, 1001),
            mib(3, 100),
            mib(4, 101),
            mib(5, 10_000),
        ];
        assert_eq!(pick(&pairs, &[], &options, false), Some(vec![3, 4]));
        assert_eq!(pick(&[mib(1, 100)], &[], &options, false), None);
        assert_eq!(pick(&[], &[], &options, false), None);
    }

    #[test]
    fn max_threshold_keeps_the_smallest_members_of_a_bucket() {
        let options = StcsOptions::default();
        // 40 SSTables of 100 MiB + g KiB, handed over largest first.
        let sstables: Vec<SSTable> = (1..=40)
            .rev()
            .map(|generation| sst(generation, 100 * MIB + generation * 1024))
            .collect();
        assert_eq!(bucket_set(&sstables, &options).len(), 1);
        assert_eq!(
            pick(&sstables, &[], &options, false),
            Some((1..=32).collect::<Vec<u64>>())
        );
        // 40 in one bucket: ceil(40 / 32) = 2 jobs pending.
        assert_eq!(pending_compactions(&sstables, &options), 2);
    }

    #[test]
    fn sstables_being_compacted_are_not_candidates() {
        let options = StcsOptions::default();
        let sstables = [
            mib(1, 100),
            mib(2, 101),
            mib(3, 102),
            mib(4, 103),
            mib(5, 104),
        ];
        assert_eq!(
            pick(&sstables, &[], &options, true),
            Some(vec![1, 2, 3, 4, 5])
        );
        // Two of five are compacting: three remain, below min_threshold.
        assert_eq!(pick(&sstables, &[1, 4], &options, true), None);
        assert_eq!(
            pick(&sstables, &[1, 4], &options, false),
            Some(vec![2, 3, 5])
        );
        // They still count towards the pending estimate.
        assert_eq!(pending_compactions(&sstables, &options), 1);
    }

    #[test]
    fn pending_compactions_sums_qualifying_buckets() {
        let options = StcsOptions::default();
        let mut sstables: Vec<SSTable> = (1..=4).map(|generation| mib(generation, 100)).collect();
        sstables.extend((5..=7).map(|generation| mib(generation, 1000)));
        sstables.extend((8..=72).map(|generation| mib(generation, 10_000)));
        // {4 x 100 MiB}: 1; {3 x 1000 MiB}: below min, 0; {65 x 10 GB}: 3.
        assert_eq!(pending_compactions(&sstables, &options), 1 + 3);
        assert_eq!(pending_compactions(&[], &options), 0);
    }

    #[test]
    fn equal_averages_collide_as_in_std_map() {
        // Degenerate options: with no small-SSTable rule, two empty SSTables
        // cannot join (0 > 0 x 0.5 is false) and the second one's new
        // bucket has the first one's key, so `insert` drops it.
        let options = StcsOptions {
            min_sstable_size_bytes: 0,
            ..StcsOptions::default()
        };
        let sstables = [sst(1, 0), sst(2, 0)];
        assert_eq!(bucket_set(&sstables, &options), vec![vec![1]]);
        // With the default options they bucket together.
        assert_eq!(
            bucket_set(&sstables, &StcsOptions::default()),
            vec![vec![1, 2]]
        );
    }

    #[test]
    fn merge_inputs_fill_their_tier_from_the_largest_and_keep_the_total() {
        // Settled pairs: one SSTable per tier.
        let mut sizes = settled_sizes(1000, 10, 2);
        let total: u64 = sizes.iter().sum();
        assert!(add_merge_inputs(&mut sizes, 80, 2));
        assert_eq!(sizes.iter().filter(|&&bytes| bytes == 80).count(), 2);
        assert_eq!(sizes.iter().sum::<u64>(), total);
        assert!(sizes.windows(2).all(|pair| pair[0] >= pair[1]));
        // A tier whose merge the largest cannot spare stays settled.
        let before = sizes.clone();
        assert!(!add_merge_inputs(&mut sizes, 320, 2));
        assert_eq!(sizes, before);
        // Four to a merge with min_threshold 4.
        let mut sizes = settled_sizes(100_000, 10, 4);
        assert!(add_merge_inputs(&mut sizes, 160, 4));
        assert_eq!(sizes.iter().filter(|&&bytes| bytes == 160).count(), 4);
    }

    #[test]
    fn steady_sizes_put_the_cycle_in_the_two_lowest_tiers_and_keep_the_total() {
        // Settled: 160, 160, 40, 40, 40, 10, 10, 5 (46 flushes and 5 bytes).
        // At the start of the cycle the two lowest tiers are empty and the
        // largest SSTable holds their bytes.
        assert_eq!(steady_sizes(465, 10, 4, 0), vec![160 + 145, 160]);
        // 9 flushes into the cycle: two of 4 flushes, one of 1.
        assert_eq!(
            steady_sizes(465, 10, 4, 9),
            vec![160 + 145 - 90, 160, 40, 40, 10]
        );
        for flushes in 0..16 {
            let sizes = steady_sizes(4650 * MIB, 100 * MIB, 4, flushes);
            assert_eq!(sizes.iter().sum::<u64>(), 4650 * MIB);
            let tier = |bytes: u64| sizes.iter().filter(|&&size| size == bytes).count() as u64;
            assert_eq!(tier(100 * MIB), flushes % 4);
            assert_eq!(tier(400 * MIB), flushes / 4);
        }
        // Too small: no tier above the two lowest to take the difference.
        assert_eq!(steady_sizes(75, 10, 4, 5), settled_sizes(75, 10, 4));
        assert_eq!(steady_sizes(160, 10, 4, 15), settled_sizes(160, 10, 4));
    }

    fn cycle(write_bytes_per_s: f64, merge_bytes_per_s: f64) -> WriteCycle {
        WriteCycle {
            flush_bytes: 100,
            base: 4,
            write_bytes_per_s,
            merge_bytes_per_s,
        }
    }

    #[test]
    fn forward_flushes_into_the_lowest_tier_and_merges_it_when_full() {
        // A flush of 100 every 100 s; a merge reads 4 a second.
        let writes = cycle(1.0, 4.0);
        // Half a memtable and three flushes: the fourth flush comes at
        // 50 s and sets off a merge of 400 bytes, 100 s long.
        let at = |elapsed| forward(&[3, 0], 0.5, &writes, elapsed);
        let before = at(40.0);
        assert_eq!((before.counts, before.merging), (vec![3, 0], vec![]));
        assert!((before.memtable_fill - 0.9).abs() < 1e-9);
        let merging = at(100.0);
        assert_eq!(merging.counts, vec![0, 0]);
        assert_eq!(merging.merging.len(), 1);
        assert_eq!(merging.merging[0].0, 0);
        assert!((merging.merging[0].1 - 0.5).abs() < 1e-9);
        assert!((merging.memtable_fill - 0.5).abs() < 1e-9);
        // At 150 s the merge ends (one SSTable of the next tier) as the
        // next flush comes.
        let after = at(160.0);
        assert_eq!((after.counts, after.merging), (vec![1, 1], vec![]));
        assert!((after.memtable_fill - 0.1).abs() < 1e-9);
    }

    #[test]
    fn forward_merges_of_two_tiers_share_the_merge_rate_and_cascade() {
        // Three of tier 0 and three of tier 1, merges reading 2 a second:
        // the first flush (at once, the memtable nearly full) starts a
        // tier-0 merge (400 bytes, 200 s alone), whose output fills tier 1;
        // that merge (1600 bytes) runs alone until the flushes at 100 to
        // 400 s fill tier 0 again, and then the two share the rate.
        let writes = cycle(1.0, 2.0);
        let early = forward(&[3, 3], 1.0 - 1e-12, &writes, 60.0);
        assert_eq!(early.counts, vec![0, 3]);
        assert_eq!(early.merging.len(), 1);
        assert_eq!(early.merging[0].0, 0);
        assert!(
            (early.merging[0].1 - 120.0 / 400.0).abs() < 1e-6,
            "{early:?}"
        );
        let shared = forward(&[3, 3], 1.0 - 1e-12, &writes, 410.0);
        assert_eq!(shared.counts, vec![0, 0]);
        let tiers: Vec<usize> = shared.merging.iter().map(|&(tier, _)| tier).collect();
        assert_eq!(tiers, vec![0, 1]);
        // Tier 1: 200 s alone at 2/s, then 10 s at 1/s; tier 0: 10 s at 1/s.
        assert!(
            (shared.merging[0].1 - 10.0 / 400.0).abs() < 1e-6,
            "{shared:?}"
        );
        assert!(
            (shared.merging[1].1 - 410.0 / 1600.0).abs() < 1e-6,
            "{shared:?}"
        );
    }

    #[test]
    fn forward_without_writes_or_merge_rate_stands_still() {
        let still = forward(&[2, 1, 3], 0.25, &cycle(0.0, 0.0), 1e6);
        assert_eq!((still.counts, still.merging), (vec![2, 1, 3], vec![]));
        assert_eq!(still.memtable_fill, 0.25);
        // Writes but no merge rate: a full tier waits at 0 progress.
        let stuck = forward(&[3], 0.0, &cycle(1.0, 0.0), 150.0);
        assert_eq!(stuck.counts, vec![0]);
        assert_eq!(stuck.merging, vec![(0, 0.0)]);
    }

    proptest! {
        /// Bytes are neither made nor lost: what the tiers and the merges'
        /// inputs hold, plus the memtable, is what the window began with
        /// plus what its writes brought; and a tier holding `base` SSTables
        /// is merging.
        #[test]
        fn forward_keeps_every_byte_and_merges_every_full_tier(
            counts in proptest::collection::vec(0u64..4, 1..6),
            fill in 0.0f64..0.999,
            write in 0.0f64..5.0,
            merge in 0.1f64..50.0,
            elapsed in 0.0f64..20_000.0,
        ) {
            let writes = cycle(write, merge);
            let units = |counts: &[u64]| -> f64 {
                counts.iter().enumerate().map(|(tier, &n)| n as f64 * 4f64.powi(tier as i32)).sum()
            };
            let forwarded = forward(&counts, fill, &writes, elapsed);
            let merging: f64 = forwarded.merging.iter().map(|&(tier, _)| 4f64.powi(tier as i32 + 1)).sum();
            let held = units(&forwarded.counts) + merging + forwarded.memtable_fill;
            let expected = units(&counts) + fill + write * elapsed / 100.0;
            prop_assert!((held - expected).abs() < 1e-6 * expected.max(1.0), "{held} != {expected}");
            for (tier, &count) in forwarded.counts.iter().enumerate() {
                prop_assert!(count < 4 || forwarded.merging.iter().any(|&(merging, _)| merging == tier));
            }
            prop_assert!(forwarded.merging.iter().all(|&(_, progress)| (0.0..1.0).contains(&progress)));
        }
    }

    #[test]
    fn window_sizes_keep_the_total_and_hold_the_merges_inputs() {
        // 46 flushes of 10 (settled 2 x 160, 3 x 40, 2 x 10) and 5 bytes;
        // the window begins 3 flushes into the two tiers below the top.
        let writes = WriteCycle {
            flush_bytes: 10,
            base: 4,
            write_bytes_per_s: 1.0,
            merge_bytes_per_s: 1.0,
        };
        // The fourth flush, at 10 s, starts a merge of the four 10s; the two
        // of the top tier take the rest.
        assert_eq!(
            window_sizes(465, &writes, 3.0 / 16.0, 0.0, 10.0),
            Some(TierLayout {
                sizes: vec![213, 212, 10, 10, 10, 10],
                merging: vec![(10, 0.0)],
                memtable_fill: 0.0,
            })
        );
        // Too small a table for a tier above the two placed.
        assert_eq!(window_sizes(45, &writes, 0.5, 0.0, 1000.0), None);
    }

    #[test]
    fn window_sizes_place_every_tier_below_the_top_by_the_cycle_position() {
        // 1000 flushes = 33220 in base 4: three SSTables of 256 flushes on
        // top; the four tiers below hold what the position gives them.
        let still = WriteCycle {
            flush_bytes: 1,
            base: 4,
            write_bytes_per_s: 0.0,
            merge_bytes_per_s: 0.0,
        };
        let tier_counts = |tiers: f64| {
            let layout = window_sizes(1000, &still, tiers, 0.0, 0.0).expect("room");
            assert!(layout.merging.is_empty());
            assert_eq!(layout.sizes.iter().sum::<u64>(), 1000);
            [1, 4, 16, 64].map(|bytes| layout.sizes.iter().filter(|&&size| size == bytes).count())
        };
        assert_eq!(tier_counts(0.0), [0, 0, 0, 0]);
        assert_eq!(tier_counts(0.9999), [3, 3, 3, 3]);
        // 2 + 1 x 4 + 3 x 16 + 2 x 64 = 182 of the 256 positions.
        assert_eq!(tier_counts(182.5 / 256.0), [2, 1, 3, 2]);
        // The top tier's three take the rest evenly: 1000 - 255 over three.
        let layout = window_sizes(1000, &still, 0.9999, 0.0, 0.0).expect("room");
        assert_eq!(&layout.sizes[..3], &[249, 248, 248]);
    }

    #[test]
    fn settled_sizes_are_the_base_4_digits_of_the_flushes() {
        // 46 flushes of 10 = 2 x 16 + 3 x 4 + 2 x 1, plus 5 bytes.
        assert_eq!(
            settled_sizes(465, 10, 4),
            vec![160, 160, 40, 40, 40, 10, 10, 5]
        );
        assert_eq!(settled_sizes(7, 10, 4), vec![7]);
        assert!(settled_sizes(0, 10, 4).is_empty());
        // What is left would not be compacted again: no tier reaches 4.
        // (Tiers above min_sstable_size: STCS buckets everything below 50 MiB together.)
        let settled: Vec<SSTable> = settled_sizes(4650 * MIB, 100 * MIB, 4)
            .into_iter()
            .enumerate()
            .map(|(generation, bytes)| sst(generation as u64, bytes))
            .collect();
        assert_eq!(pick(&settled, &[], &StcsOptions::default(), true), None);
        // With the pair fallback the tiers are binary: nothing to merge either.
        let settled: Vec<SSTable> = settled_sizes(4650 * MIB, 100 * MIB, 2)
            .into_iter()
            .enumerate()
            .map(|(generation, bytes)| sst(generation as u64, bytes))
            .collect();
        assert_eq!(settled.len(), 5, "46 = 101110 in base 2, and the rest");
        assert_eq!(pick(&settled, &[], &StcsOptions::default(), false), None);
    }

    #[test]
    fn a_jobs_weight_is_the_floor_of_log4_of_its_bytes() {
        assert_eq!(job_weight(0), 0);
        assert_eq!(job_weight(1), 0);
        assert_eq!(job_weight(3), 0);
        assert_eq!(job_weight(4), 1);
        assert_eq!(job_weight(15), 1);
        assert_eq!(job_weight(16), 2);
        for k in 1..32u32 {
            assert_eq!(job_weight(4u64.pow(k)), k);
            assert_eq!(job_weight(4u64.pow(k) - 1), k - 1);
        }
        // 256 MiB = 4^14 bytes; 1 GiB = 4^15.
        assert_eq!(job_weight(256 * MIB), 14);
        assert_eq!(job_weight(1024 * MIB - 1), 14);
        assert_eq!(job_weight(u64::MAX), 31);
    }

    #[test]
    fn a_job_whose_weight_is_taken_drops_its_largest_inputs() {
        // 40 + 40 + 40 + 40 + 60 + 70 = 290 MiB: weight 14 (>= 256 MiB).
        let sstables = [
            mib(1, 40),
            mib(2, 40),
            mib(3, 40),
            mib(4, 40),
            mib(5, 60),
            mib(6, 70),
        ];
        let inputs: Vec<&SSTable> = sstables.iter().rev().collect();
        let whole = TrimmedJob {
            generations: vec![1, 2, 3, 4, 5, 6],
            weight: 14,
        };
        assert_eq!(trim_to_weight(&inputs, &[], 4), Some(whole.clone()));
        assert_eq!(trim_to_weight(&inputs, &[12, 13], 4), Some(whole));
        // Weight 14 is busy: dropping 70 MiB leaves 220 MiB, weight 13.
        assert_eq!(
            trim_to_weight(&inputs, &[14], 4),
            Some(TrimmedJob {
                generations: vec![1, 2, 3, 4, 5],
                weight: 13,
            })
        );
        // 14 and 13 busy: 160 MiB at four inputs is still 13, so refused.
        assert_eq!(trim_to_weight(&inputs, &[13, 14], 4), None);
        // A pair is never trimmed, only refused.
        let pair = [&sstables[0], &sstables[1]];
        assert_eq!(trim_to_weight(&pair, &[job_weight(80 * MIB)], 4), None);
        assert_eq!(trim_to_weight(&[], &[], 4), None);
    }

    #[test]
    fn next_job_picks_then_trims() {
        let options = StcsOptions::default();
        // All below 50 MiB, so one bucket: 259 MiB, weight 14.
        let sstables = [
            mib(1, 40),
            mib(2, 40),
            mib(3, 40),
            mib(4, 45),
            mib(5, 45),
            mib(6, 49),
        ];
        assert_eq!(
            next_job(&sstables, &[], &[], &options, false).map(|job| job.weight),
            Some(14)
        );
        // Weight 14 busy: dropping 49 MiB leaves 210 MiB, weight 13.
        assert_eq!(
            next_job(&sstables, &[], &[14], &options, false),
            Some(TrimmedJob {
                generations: vec![1, 2, 3, 4, 5],
                weight: 13,
            })
        );
        assert_eq!(next_job(&sstables, &[], &[13, 14], &options, false), None);
        assert_eq!(
            next_job(&sstables, &[1, 2, 3, 4, 5], &[], &options, false),
            None
        );
        // 60 MiB is not below 1.5 x 40 MiB nor below 50 MiB: the bucket is
        // the four 40s (160 MiB, weight 13), which cannot be trimmed.
        let sstables = [
            mib(1, 40),
            mib(2, 40),
            mib(3, 40),
            mib(4, 40),
            mib(5, 60),
            mib(6, 70),
        ];
        assert_eq!(
            next_job(&sstables, &[], &[14], &options, false),
            Some(TrimmedJob {
                generations: vec![1, 2, 3, 4],
                weight: 13,
            })
        );
        assert_eq!(next_job(&sstables, &[], &[13], &options, false), None);
    }
}
