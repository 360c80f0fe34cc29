//! Leveled compaction (LCS) as Scylla 2.2-3.0 decides it: which SSTables to
//! merge next and into which level, how far behind it is (its backlog
//! tracker), and the layout a caught-up table settles into.
//!
//! What is modelled (scylla-mechanisms.md sections 1.4 and 2.2, read from
//! `sstables/leveled_manifest.hh`, `sstables/leveled_compaction_strategy.hh`
//! and `sstables/compaction_strategy.cc` @scylla-2.2.0/2.3.0/3.0.0):
//! - levels: L0 holds what flushes write, SSTables that may overlap; every
//!   level from L1 up holds SSTables of at most `sstable_size_in_mb` (160
//!   MiB) over disjoint token ranges. Level `n`'s target is
//!   `10^n x sstable_size` (fan-out 10), L0's `4 x sstable_size`
//!   ([`max_bytes_for_level`]); `MAX_LEVELS` = 9;
//! - [`next_job`] (`get_compaction_candidates`): levels from the highest
//!   down whose score (bytes / target) exceeds `TARGET_SCORE` (1.001f)
//!   are compacted first; before such a level, if L0 holds more than
//!   `MAX_COMPACTING_L0` (32) SSTables, size-tiered compaction runs inside
//!   L0 (its most interesting bucket, output left in L0). A level `n >= 1`
//!   gives one SSTable, round-robin by token from where its last
//!   compaction ended (`last_compacted_keys`), plus the SSTables of `n+1`
//!   whose token ranges overlap it, all written into `n+1`; if the level's
//!   own SSTables overlap (the invariant is broken), the first overlapping
//!   set is merged in place instead. When no level is over its target, L0 is
//!   compacted: if it holds at least one SSTable's worth of bytes, its
//!   (at most 32 oldest) SSTables plus the overlapping L1 SSTables go to L1,
//!   otherwise its most interesting size-tiered bucket stays in L0. The
//!   starvation guard: a level that has not been the target of a
//!   promotion for more than `NO_COMPACTION_LIMIT` (25) rounds gets one of
//!   its SSTables that lies inside the job's token span pulled into it
//!   (`get_overlapping_starved_sstables`);
//! - from 2.3 (commit 28382cb25c, May 2018: "LCS: try harder to move
//!   SSTables to highest levels"), when nothing else is to be done, a level
//!   with SSTables whose next level also has some is pushed into it, so an
//!   idle table ends with all its data in its highest level
//!   ([`LcsOptions::push_to_highest_level`]);
//! - outputs are split into SSTables of at most `sstable_size_in_mb` at
//!   token boundaries (the compaction writer; see
//!   [`crate::compaction::job`]); STCS-in-L0 jobs write one SSTable;
//! - [`LcsBacklogTracker`] (2.3/3.0 `leveled_compaction_backlog_tracker`):
//!   the STCS backlog of the L0 SSTables, plus, for each level `L` and each
//!   higher level `n < MAX_LEVELS - 1`,
//!   `min(10, size(L_n) / sstable_size) x size(L)`, sizes counting what
//!   running compactions have read (subtracted from their input's level)
//!   and written (added to their output's level). 2.2 had no LCS tracker:
//!   its backlog is infinite (the controller's maximum shares), see
//!   [`crate::compaction::TableBacklog`];
//! - [`estimated_pending_compactions`] (`get_estimated_tasks`);
//! - [`settled_levels`]: where a caught-up table's bytes sit (for `[data]`
//!   preloads).
//!
//! Tokens: SSTables carry token ranges (`SSTable::token_range`, `None` for
//! the whole ring, as every flushed SSTable spans it); first and last keys
//! here are the first and last tokens of those ranges, compared as Scylla
//! compares decorated keys.
//!
//! Concurrency: Scylla's LCS has `parallel_compaction() == false`, so the
//! shard runs one LCS job at a time and picks among SSTables no job holds
//! (`compaction_manager::get_candidates`). Cassandra 3.11 runs LCS jobs in
//! parallel; for it the picker follows `LeveledManifest.getCandidatesFor`
//! (from memory \[R\], apache/cassandra 3.11): level scores count only
//! SSTables not compacting, an SSTable of level `n` is skipped if one of its
//! overlapping `n+1` SSTables is compacting (the next one in token order is
//! tried), an L0 job leaves out L0 SSTables overlapping the compacting L0
//! ones and waits while an overlapping L1 SSTable is compacting, and when
//! no L0 job is possible L0 still size-tiers once it holds more than 32
//! SSTables. With nothing compacting every rule is Scylla's.
//!
//! Left out: Cassandra's different L0 rules (candidates grown by overlap
//! until 160 MiB, an L0 job below 160 MiB rewriting L0 in place instead of
//! size-tiering), the single-SSTable tombstone compaction fallback (no
//! tombstones are modelled), and the 2021 change that stops pushing once a
//! level is 10x the one below (commit 9de7abdc80, after 3.0).
//!
//! Determinism: ties in token order break by generation; "oldest" L0
//! SSTables are by seal time (`created_at`, Scylla's max timestamp), then
//! generation.

use crate::compaction::backlog::StcsBacklogTracker;
use crate::compaction::stcs::{self, StcsOptions, MIB};
use crate::sstable::SSTable;

/// Levels of the manifest (`leveled_manifest::MAX_LEVELS`, "log10(1000^3)").
pub const MAX_LEVELS: usize = 9;
/// Each level's target is this many times the one below
/// (`leveled_fan_out`).
pub const FAN_OUT: u64 = 10;
/// A level is compacted once its score exceeds this (`TARGET_SCORE`, the
/// float `1.001f`, compared as a double).
pub const TARGET_SCORE: f64 = 1.001_f32 as f64;
/// Most L0 SSTables one L0 job takes, and the L0 count above which L0 is
/// size-tiered before a higher level is compacted (`MAX_COMPACTING_L0`).
pub const MAX_COMPACTING_L0: usize = 32;
/// Rounds a level may go without being a promotion's target before one of
/// its SSTables is pulled into a job (`NO_COMPACTION_LIMIT`).
pub const NO_COMPACTION_LIMIT: u32 = 25;
/// `sstable_size_in_mb` default (`DEFAULT_MAX_SSTABLE_SIZE_IN_MB`).
pub const DEFAULT_SSTABLE_SIZE_MIB: u64 = 160;

// The manifest's limits: levels above L0, a fan-out that grows them, a
// target score just above 1, room for L0 jobs and a starvation limit.
const _: () = assert!(MAX_LEVELS >= 2 && FAN_OUT > 1);
const _: () = assert!(1.0 < TARGET_SCORE && TARGET_SCORE < 1.01);
const _: () = assert!(MAX_COMPACTING_L0 > 1 && NO_COMPACTION_LIMIT > 0);
const _: () = assert!(DEFAULT_SSTABLE_SIZE_MIB > 0);
// The last level's target still fits a u64 with the default SSTable size.
const _: () = assert!((DEFAULT_SSTABLE_SIZE_MIB * MIB)
    .checked_mul(FAN_OUT.pow(MAX_LEVELS as u32 - 1))
    .is_some());

/// The leveled strategy's options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LcsOptions {
    /// `sstable_size_in_mb` in bytes (MiB x 1024 x 1024, as
    /// `max_sstable_size_in_MB * 1024 * 1024`): the size outputs are split
    /// at and the unit of the level targets. Default 160 MiB.
    pub sstable_size_bytes: u64,
    /// Size-tiered options for compaction inside L0 (the table's
    /// `min/max_compaction_threshold` and STCS bucket options).
    pub stcs: StcsOptions,
    /// Scylla 2.3 and later: when nothing else is due, push a level into
    /// the next one if both hold SSTables. False for Scylla 2.1/2.2 and
    /// Cassandra 3.11.
    pub push_to_highest_level: bool,
    /// Scylla 2.2: LCS has no backlog tracker (`unimplemented_backlog_tracker`
    /// @2.2.0), so the compaction controller sees an infinite backlog and
    /// gives compaction its maximum shares. False from 2.3; also false for
    /// presets without a controller (2.1, Cassandra), whose reported
    /// backlog is then the 3.0 tracker's.
    pub infinite_backlog: bool,
}

impl Default for LcsOptions {
    /// Scylla 3.0's: 160 MiB SSTables, the default STCS options, pushing.
    fn default() -> LcsOptions {
        LcsOptions {
            sstable_size_bytes: DEFAULT_SSTABLE_SIZE_MIB * MIB,
            stcs: StcsOptions::default(),
            push_to_highest_level: true,
            infinite_backlog: false,
        }
    }
}

/// The target bytes of `level` (`max_bytes_for_level`): `4 x sstable_size`
/// for L0, `10^level x sstable_size` above (saturating).
pub fn max_bytes_for_level(level: usize, sstable_size_bytes: u64) -> u64 {
    let target = if level == 0 {
        4 * sstable_size_bytes
    } else {
        FAN_OUT
            .saturating_pow(level as u32)
            .saturating_mul(sstable_size_bytes)
    };
    debug_assert!(
        target >= sstable_size_bytes,
        "a level holds at least one SSTable"
    );
    target
}

/// First and last token of an SSTable, inclusive: its
/// [`SSTable::token_extent`] `[lo, hi)` as `(lo, hi - 1)`.
pub fn token_bounds(sstable: &SSTable) -> (u64, u64) {
    let (low, high) = sstable.token_extent();
    let bounds = (low, high.saturating_sub(1).max(low));
    debug_assert!(bounds.0 <= bounds.1);
    bounds
}

/// True if two inclusive token spans share a token.
fn spans_overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    debug_assert!(a.0 <= a.1 && b.0 <= b.1, "spans are ordered");
    a.0 <= b.1 && b.0 <= a.1
}

/// The inclusive span from the smallest first token to the largest last.
fn span_of(sstables: &[&SSTable]) -> (u64, u64) {
    debug_assert!(!sstables.is_empty(), "the span of no SSTable");
    let span = sstables
        .iter()
        .map(|sstable| token_bounds(sstable))
        .fold((u64::MAX, 0), |(low, high), (first, last)| {
            (low.min(first), high.max(last))
        });
    debug_assert!(span.0 <= span.1);
    span
}

/// The SSTables of `others` whose token range overlaps `span` (inclusive)
/// (`leveled_manifest::overlapping`), in the order given.
pub fn overlapping<'a>(span: (u64, u64), others: &[&'a SSTable]) -> Vec<&'a SSTable> {
    let found: Vec<&SSTable> = others
        .iter()
        .copied()
        .filter(|sstable| spans_overlap(span, token_bounds(sstable)))
        .collect();
    debug_assert!(found.len() <= others.len());
    found
}

/// Data bytes of some SSTables.
fn total_bytes(sstables: &[&SSTable]) -> u64 {
    sstables.iter().map(|sstable| sstable.data_bytes).sum()
}

/// Why a job was picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LcsPick {
    /// Size-tiered compaction inside L0: L0 is more than 32 SSTables behind
    /// while a higher level is over its target, or holds less than one
    /// SSTable's worth. The output stays in L0.
    L0SizeTiered,
    /// Level `from` into `from + 1`: L0's SSTables with the overlapping L1
    /// ones, or one SSTable of `from` with the overlapping ones of the next.
    Promote {
        /// The level the job takes its main input from.
        from: u32,
    },
    /// Overlapping SSTables of one level merged back into it.
    RestoreInvariant {
        /// The level whose SSTables overlapped.
        level: u32,
    },
}

/// A leveled compaction job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LcsJob {
    /// Generations of the inputs, in the order the manifest chose them.
    pub generations: Vec<u64>,
    /// The level the outputs are written to.
    pub level: u32,
    /// Outputs are split at this many data bytes; `None`: one output (the
    /// size-tiered jobs inside L0 run with no size limit).
    pub max_sstable_bytes: Option<u64>,
    /// Why the job was picked.
    pub pick: LcsPick,
}

/// What the strategy remembers between picks (a table's
/// `leveled_compaction_strategy` object): per level, the last token of the
/// last job out of it, where the next one starts; and per level, the picks
/// since it was last the target of a promotion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LcsState {
    /// `_last_compacted_keys`, built on the first pick.
    last_compacted_keys: Option<[Option<u64>; MAX_LEVELS]>,
    /// `_compaction_counter`.
    compaction_counter: [u32; MAX_LEVELS],
}

impl LcsState {
    /// A table no pick has looked at yet.
    pub fn new() -> LcsState {
        LcsState::default()
    }

    /// What must hold: L0 is never a promotion's target, so its counter
    /// stays 0; the round-robin keys are ring positions, and the last level
    /// (above which nothing lies) has none. O(levels).
    pub fn check_invariants(&self) {
        assert_eq!(
            self.compaction_counter[0], 0,
            "L0 is never a promotion's target"
        );
        if let Some(keys) = &self.last_compacted_keys {
            assert!(
                keys.iter()
                    .flatten()
                    .all(|&key| key < crate::token_set::KEY_SHARE_ONE),
                "a round-robin key is a ring position"
            );
        }
    }

    /// A job finished (`notify_completion`): the lowest level it read from
    /// resumes after the last token of the output that starts last.
    pub fn notify_completion(&mut self, removed: &[SSTable], added: &[SSTable]) {
        let Some(min_level) = removed.iter().map(|sstable| sstable.level).min() else {
            return;
        };
        debug_assert!((min_level as usize) < MAX_LEVELS);
        let mut last: Option<&SSTable> = None;
        for candidate in added {
            if last.is_none_or(|kept| token_bounds(kept).0 < token_bounds(candidate).0) {
                last = Some(candidate);
            }
        }
        let (Some(last), Some(keys)) = (last, self.last_compacted_keys.as_mut()) else {
            return;
        };
        keys[min_level as usize] = Some(token_bounds(last).1);
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Picks since each level was last a promotion's target.
    pub fn compaction_counter(&self) -> &[u32; MAX_LEVELS] {
        &self.compaction_counter
    }

    /// Where the next job out of each level starts (after this token).
    pub fn last_compacted_keys(&self) -> Option<&[Option<u64>; MAX_LEVELS]> {
        self.last_compacted_keys.as_ref()
    }
}

/// A table's SSTables by level: every one (Cassandra's `getLevel`) and those
/// no running job holds (Scylla's manifest, built from the candidates).
struct Manifest<'a> {
    all: [Vec<&'a SSTable>; MAX_LEVELS],
    free: [Vec<&'a SSTable>; MAX_LEVELS],
    compacting: &'a [u64],
    options: &'a LcsOptions,
}

impl<'a> Manifest<'a> {
    fn new(
        sstables: &'a [SSTable],
        compacting: &'a [u64],
        options: &'a LcsOptions,
    ) -> Manifest<'a> {
        let mut all: [Vec<&SSTable>; MAX_LEVELS] = std::array::from_fn(|_| Vec::new());
        let mut free: [Vec<&SSTable>; MAX_LEVELS] = std::array::from_fn(|_| Vec::new());
        for sstable in sstables {
            let level = sstable.level as usize;
            assert!(
                level < MAX_LEVELS,
                "SSTable {} is in level {level}, beyond the last level {}",
                sstable.generation,
                MAX_LEVELS - 1
            );
            all[level].push(sstable);
            if !compacting.contains(&sstable.generation) {
                free[level].push(sstable);
            }
        }
        debug_assert_eq!(
            all.iter().map(Vec::len).sum::<usize>(),
            sstables.len(),
            "every SSTable is in one level"
        );
        debug_assert!(all
            .iter()
            .zip(&free)
            .all(|(all, free)| free.len() <= all.len()));
        Manifest {
            all,
            free,
            compacting,
            options,
        }
    }

    fn is_compacting(&self, sstable: &SSTable) -> bool {
        self.compacting.contains(&sstable.generation)
    }

    fn sstable_size(&self) -> u64 {
        debug_assert!(self.options.sstable_size_bytes > 0, "SSTables have a size");
        self.options.sstable_size_bytes
    }

    /// `generate_last_compacted_keys`: for each level below a non-empty
    /// one, the last token of the newest SSTable of the level above it.
    fn last_compacted_keys(&self) -> [Option<u64>; MAX_LEVELS] {
        let mut keys = [None; MAX_LEVELS];
        for (level, key) in keys.iter_mut().enumerate().take(MAX_LEVELS - 1) {
            let mut newest: Option<&SSTable> = None;
            for sstable in &self.free[level + 1] {
                // `wtime >= max`: the last of the newest wins.
                if newest.is_none_or(|kept| sstable.created_at >= kept.created_at) {
                    newest = Some(sstable);
                }
            }
            *key = newest.map(|sstable| token_bounds(sstable).1);
        }
        debug_assert!(
            keys[MAX_LEVELS - 1].is_none(),
            "nothing lies above the last level"
        );
        keys
    }

    /// Size-tiered compaction's most interesting bucket among the free L0
    /// SSTables, with the table's min and max thresholds (empty if none).
    fn l0_bucket(&self) -> Vec<&'a SSTable> {
        let stcs = &self.options.stcs;
        let buckets = stcs::get_buckets(&self.free[0], stcs);
        let bucket =
            stcs::most_interesting_bucket(&buckets, stcs.min_threshold, stcs.max_threshold)
                .unwrap_or_default();
        debug_assert!(
            bucket
                .iter()
                .all(|sstable| sstable.level == 0 && !self.is_compacting(sstable)),
            "an L0 bucket holds free L0 SSTables"
        );
        bucket
    }

    /// `candidates_for_level_0_compaction` (with Cassandra's exclusions
    /// when L0 or L1 SSTables are compacting).
    fn candidates_for_level_0(&self) -> Option<(Vec<&'a SSTable>, bool)> {
        let level0 = &self.free[0];
        if total_bytes(level0) >= self.sstable_size() {
            let busy: Vec<&SSTable> = self.all[0]
                .iter()
                .copied()
                .filter(|sstable| self.is_compacting(sstable))
                .collect();
            let mut candidates: Vec<&SSTable> = if busy.is_empty() {
                level0.clone()
            } else {
                let busy_span = span_of(&busy);
                level0
                    .iter()
                    .copied()
                    .filter(|sstable| !spans_overlap(token_bounds(sstable), busy_span))
                    .collect()
            };
            if candidates.is_empty() {
                return None;
            }
            if candidates.len() > MAX_COMPACTING_L0 {
                candidates.sort_by_key(|sstable| (sstable.created_at, sstable.generation));
                candidates.truncate(MAX_COMPACTING_L0);
            }
            let level1 = overlapping(span_of(&candidates), &self.all[1]);
            if level1.iter().any(|sstable| self.is_compacting(sstable)) {
                return None;
            }
            candidates.extend(level1);
            debug_assert!(
                candidates
                    .iter()
                    .all(|sstable| !self.is_compacting(sstable)),
                "a promotion takes no SSTable a running job holds"
            );
            Some((candidates, true))
        } else {
            let bucket = self.l0_bucket();
            (!bucket.is_empty()).then_some((bucket, false))
        }
    }

    /// `candidates_for_higher_levels_compaction`.
    fn candidates_for_higher_level(
        &self,
        level: usize,
        last_compacted_keys: &[Option<u64>; MAX_LEVELS],
    ) -> Option<(Vec<&'a SSTable>, bool)> {
        debug_assert!(level >= 1, "L0 has its own candidates");
        let mut sorted = self.free[level].clone();
        sorted.sort_by_key(|sstable| (token_bounds(sstable).0, sstable.generation));
        let overlapping_here = overlapping_sstables(&sorted);
        if !overlapping_here.is_empty() {
            return Some((overlapping_here, false));
        }
        if sorted.is_empty() {
            return None;
        }
        let start = sorted
            .iter()
            .position(|sstable| {
                last_compacted_keys[level].is_none_or(|last| token_bounds(sstable).0 > last)
            })
            .unwrap_or(0);
        let next_level: &[&SSTable] = self.all.get(level + 1).map_or(&[], Vec::as_slice);
        // Scylla takes the SSTable at `start`; Cassandra walks on past ones
        // whose next-level overlaps are compacting.
        for offset in 0..sorted.len() {
            let sstable = sorted[(start + offset) % sorted.len()];
            let mut candidates = overlapping(token_bounds(sstable), next_level);
            if candidates.iter().any(|other| self.is_compacting(other)) {
                continue;
            }
            candidates.push(sstable);
            debug_assert!(candidates.iter().all(|other| !self.is_compacting(other)));
            return Some((candidates, true));
        }
        None
    }

    /// `get_candidates_for`.
    fn candidates_for(
        &self,
        level: usize,
        last_compacted_keys: &[Option<u64>; MAX_LEVELS],
    ) -> Option<(Vec<&'a SSTable>, bool)> {
        let candidates = if level == 0 {
            self.candidates_for_level_0()
        } else {
            self.candidates_for_higher_level(level, last_compacted_keys)
        };
        debug_assert!(
            candidates
                .as_ref()
                .is_none_or(|(sstables, _)| !sstables.is_empty()),
            "candidates, when found, are some"
        );
        candidates
    }

    /// `get_descriptor_for_level`.
    fn descriptor_for_level(&self, level: usize, state: &mut LcsState) -> Option<LcsJob> {
        let keys = state
            .last_compacted_keys
            .expect("built before the first pick");
        let (candidates, can_promote) = self.candidates_for(level, &keys)?;
        let next_level = next_level(&candidates, can_promote);
        debug_assert!(
            !can_promote || next_level as usize > level,
            "a promotion writes above its level"
        );
        let candidates = if can_promote {
            self.overlapping_starved(next_level as usize, candidates, state)
        } else {
            candidates
        };
        let pick = if can_promote {
            LcsPick::Promote { from: level as u32 }
        } else if level == 0 {
            LcsPick::L0SizeTiered
        } else {
            LcsPick::RestoreInvariant {
                level: level as u32,
            }
        };
        Some(self.job(&candidates, next_level, Some(self.sstable_size()), pick))
    }

    /// `get_overlapping_starved_sstables`.
    fn overlapping_starved(
        &self,
        target_level: usize,
        mut candidates: Vec<&'a SSTable>,
        state: &mut LcsState,
    ) -> Vec<&'a SSTable> {
        debug_assert!(
            (1..MAX_LEVELS).contains(&target_level),
            "a promotion targets a level above L0"
        );
        let before = candidates.len();
        for counter in state.compaction_counter.iter_mut().skip(1) {
            *counter += 1;
        }
        state.compaction_counter[target_level] = 0;
        for level in (target_level + 1..MAX_LEVELS).rev() {
            if self.free[level].is_empty() || state.compaction_counter[level] <= NO_COMPACTION_LIMIT
            {
                continue;
            }
            let (low, high) = span_of(&candidates);
            let mut sorted = self.free[level].clone();
            sorted.sort_by_key(|sstable| (token_bounds(sstable).0, sstable.generation));
            if let Some(inside) = sorted.into_iter().find(|sstable| {
                let (first, last) = token_bounds(sstable);
                low <= first && last <= high
            }) {
                candidates.push(inside);
            }
            debug_assert!(
                candidates.len() <= before + 1,
                "a starved level adds one SSTable"
            );
            return candidates;
        }
        debug_assert_eq!(state.compaction_counter[target_level], 0);
        candidates
    }

    fn job(
        &self,
        candidates: &[&SSTable],
        level: u32,
        max_sstable_bytes: Option<u64>,
        pick: LcsPick,
    ) -> LcsJob {
        debug_assert!(!candidates.is_empty(), "a job has inputs");
        debug_assert!(
            (level as usize) < MAX_LEVELS,
            "a job writes a level of the manifest"
        );
        LcsJob {
            generations: candidates
                .iter()
                .map(|sstable| sstable.generation)
                .collect(),
            level,
            max_sstable_bytes,
            pick,
        }
    }
}

/// `overlapping_sstables`: the first set of overlapping SSTables of a level
/// sorted by first token, smallest generation first; empty if none
/// overlap.
fn overlapping_sstables<'a>(sorted: &[&'a SSTable]) -> Vec<&'a SSTable> {
    let mut result: Vec<&SSTable> = Vec::new();
    let mut previous: Option<&SSTable> = None;
    let mut last: Option<u64> = None;
    for &current in sorted {
        let (first, current_last) = token_bounds(current);
        if let Some(previous) = previous.filter(|previous| first <= token_bounds(previous).1) {
            for sstable in [previous, current] {
                if !result
                    .iter()
                    .any(|kept| kept.generation == sstable.generation)
                {
                    result.push(sstable);
                }
            }
        } else if last.is_some_and(|last| first <= last) {
            result.push(current);
        } else if !result.is_empty() {
            break;
        }
        if last.is_none_or(|last| current_last > last) {
            last = Some(current_last);
        }
        previous = Some(current);
    }
    result.sort_by_key(|sstable| sstable.generation);
    debug_assert!(result.len() != 1, "an overlap takes two SSTables");
    debug_assert!(
        result
            .windows(2)
            .all(|pair| pair[0].generation < pair[1].generation),
        "overlapping SSTables are listed once each, oldest first"
    );
    result
}

/// `get_next_level`: the level a job's output goes to.
fn next_level(candidates: &[&SSTable], can_promote: bool) -> u32 {
    let minimum = candidates.iter().map(|s| s.level).min().unwrap_or(0);
    let maximum = candidates.iter().map(|s| s.level).max().unwrap_or(0);
    if minimum == 0 && maximum == 0 && !can_promote {
        return 0;
    }
    let level = if minimum == maximum && can_promote {
        maximum + 1
    } else {
        maximum
    };
    assert!(
        level > 0 && (level as usize) < MAX_LEVELS,
        "leveled compaction into level {level}"
    );
    level
}

/// The next leveled compaction of a table (`get_compaction_candidates`),
/// or `None` if nothing is due.
///
/// `compacting` lists the generations running jobs hold; Scylla calls this
/// only when none does (one LCS job per table), Cassandra with its running
/// jobs (see the module doc). `state` is the table's strategy state; it is
/// updated (round-robin keys on the first pick, starvation counters on
/// every promotion).
pub fn next_job(
    sstables: &[SSTable],
    compacting: &[u64],
    options: &LcsOptions,
    state: &mut LcsState,
) -> Option<LcsJob> {
    let job = pick_job(sstables, compacting, options, state);
    if let Some(job) = &job {
        debug_assert!(
            job.generations
                .iter()
                .enumerate()
                .all(|(i, generation)| !job.generations[..i].contains(generation)
                    && !compacting.contains(generation)),
            "a job takes each input once, and none a running job holds"
        );
        debug_assert!((job.level as usize) < MAX_LEVELS);
    }
    if cfg!(debug_assertions) {
        state.check_invariants();
    }
    job
}

/// [`next_job`]'s pick, before its postconditions are checked.
fn pick_job(
    sstables: &[SSTable],
    compacting: &[u64],
    options: &LcsOptions,
    state: &mut LcsState,
) -> Option<LcsJob> {
    let manifest = Manifest::new(sstables, compacting, options);
    if state.last_compacted_keys.is_none() {
        state.last_compacted_keys = Some(manifest.last_compacted_keys());
    }
    let size = options.sstable_size_bytes;
    for level in (1..MAX_LEVELS).rev() {
        let sstables = &manifest.free[level];
        if sstables.is_empty() {
            continue;
        }
        let score = total_bytes(sstables) as f64 / max_bytes_for_level(level, size) as f64;
        if score <= TARGET_SCORE {
            continue;
        }
        if manifest.free[0].len() > MAX_COMPACTING_L0 {
            let bucket = manifest.l0_bucket();
            if !bucket.is_empty() {
                return Some(manifest.job(&bucket, 0, None, LcsPick::L0SizeTiered));
            }
        }
        if let Some(job) = manifest.descriptor_for_level(level, state) {
            return Some(job);
        }
    }
    // Higher levels are happy: a standard L0 compaction.
    if !manifest.free[0].is_empty() {
        let keys = state.last_compacted_keys.expect("built above");
        match manifest.candidates_for(0, &keys) {
            Some((candidates, can_promote)) => {
                let level = next_level(&candidates, can_promote);
                let pick = if can_promote {
                    LcsPick::Promote { from: 0 }
                } else {
                    LcsPick::L0SizeTiered
                };
                return Some(manifest.job(&candidates, level, Some(size), pick));
            }
            None if manifest.free[0].len() > MAX_COMPACTING_L0 => {
                // Cassandra: L0 jobs blocked by running ones; keep L0 small.
                let bucket = manifest.l0_bucket();
                if !bucket.is_empty() {
                    return Some(manifest.job(&bucket, 0, None, LcsPick::L0SizeTiered));
                }
            }
            None => {}
        }
    }
    if options.push_to_highest_level {
        for level in (1..MAX_LEVELS).rev() {
            if manifest.free[level].is_empty() || manifest.free[level - 1].is_empty() {
                continue;
            }
            if let Some(job) = manifest.descriptor_for_level(level - 1, state) {
                return Some(job);
            }
        }
    }
    None
}

/// Compactions pending (`get_estimated_tasks`): for each level at or over
/// its target, `ceil((bytes - 1.001 x target) / sstable_size)`, in floats
/// as Scylla computes it, never negative.
pub fn estimated_pending_compactions(sstables: &[SSTable], options: &LcsOptions) -> u64 {
    let mut per_level = [0u64; MAX_LEVELS];
    for sstable in sstables {
        per_level[(sstable.level as usize).min(MAX_LEVELS - 1)] += sstable.data_bytes;
    }
    let size = options.sstable_size_bytes;
    per_level
        .iter()
        .enumerate()
        .map(|(level, &bytes)| {
            let target = max_bytes_for_level(level, size);
            if bytes < target {
                return 0;
            }
            let over = bytes as f32 - target as f32 * TARGET_SCORE as f32;
            (over / size as f32).ceil().max(0.0) as u64
        })
        .sum()
}

/// Bytes per level of a table of `total_bytes` once leveled compaction has
/// caught up, as `(level, bytes)` for the levels that hold data (L0 is
/// empty). Without pushing (Scylla 2.1/2.2, Cassandra), a level is only
/// promoted when over its target, so every level is full up to the last,
/// which holds the rest; with it (Scylla 2.3 and later), an idle table ends
/// with everything in the lowest level whose target holds it all.
pub fn settled_levels(total_bytes: u64, options: &LcsOptions) -> Vec<(u32, u64)> {
    if total_bytes == 0 {
        return Vec::new();
    }
    let size = options.sstable_size_bytes.max(1);
    if options.push_to_highest_level {
        let level = (1..MAX_LEVELS)
            .find(|&level| total_bytes <= max_bytes_for_level(level, size))
            .unwrap_or(MAX_LEVELS - 1);
        debug_assert!(level >= 1, "a settled table has nothing in L0");
        return vec![(level as u32, total_bytes)];
    }
    let mut left = total_bytes;
    let mut levels = Vec::new();
    for level in 1..MAX_LEVELS {
        let bytes = if level == MAX_LEVELS - 1 {
            left
        } else {
            left.min(max_bytes_for_level(level, size))
        };
        levels.push((level as u32, bytes));
        left -= bytes;
        if left == 0 {
            break;
        }
    }
    debug_assert_eq!(
        levels.iter().map(|&(_, bytes)| bytes).sum::<u64>(),
        total_bytes,
        "the settled levels hold every byte"
    );
    levels
}

/// The 2.3/3.0 leveled backlog tracker (`leveled_compaction_backlog_tracker`),
/// kept incrementally as Scylla keeps it: bytes per level, and an STCS
/// tracker over the L0 SSTables.
#[derive(Clone, Debug, PartialEq)]
pub struct LcsBacklogTracker {
    l0: StcsBacklogTracker,
    size_per_level: [u64; MAX_LEVELS],
    sstable_size_bytes: u64,
}

impl LcsBacklogTracker {
    /// An empty table whose strategy splits at `sstable_size_bytes`.
    pub fn new(sstable_size_bytes: u64) -> LcsBacklogTracker {
        debug_assert!(sstable_size_bytes > 0, "leveled SSTables have a size");
        LcsBacklogTracker {
            l0: StcsBacklogTracker::new(),
            size_per_level: [0; MAX_LEVELS],
            sstable_size_bytes: sstable_size_bytes.max(1),
        }
    }

    /// What must hold: the L0 tracker holds exactly L0's bytes, and the
    /// SSTable size is positive; the L0 tracker's own invariants. O(1).
    pub fn check_invariants(&self) {
        assert_eq!(
            self.size_per_level[0],
            self.l0.total_bytes(),
            "the L0 tracker holds L0's bytes"
        );
        assert!(self.sstable_size_bytes > 0);
        self.l0.check_invariants();
    }

    /// An SSTable of `data_bytes` joined `level`.
    pub fn add_sstable(&mut self, level: u32, data_bytes: u64) {
        debug_assert!(
            (level as usize) < MAX_LEVELS,
            "level {level} is beyond the last"
        );
        self.size_per_level[level as usize] += data_bytes;
        if level == 0 {
            self.l0.add_sstable(data_bytes);
        }
        debug_assert_eq!(self.size_per_level[0], self.l0.total_bytes());
    }

    /// An SSTable of `data_bytes` left `level`. Panics if the level never
    /// held that many bytes (a bug in the caller).
    pub fn remove_sstable(&mut self, level: u32, data_bytes: u64) {
        let size = &mut self.size_per_level[level as usize];
        assert!(
            *size >= data_bytes,
            "removing a {data_bytes}-byte SSTable from level {level} of {size} bytes"
        );
        *size -= data_bytes;
        if level == 0 {
            self.l0.remove_sstable(data_bytes);
        }
    }

    /// Bytes per level held.
    pub fn size_per_level(&self) -> &[u64; MAX_LEVELS] {
        &self.size_per_level
    }

    /// The backlog in bytes, given the SSTables being compacted as
    /// `(level, data_bytes, consumed)` and the SSTables being written as
    /// `(level, bytes written so far)`.
    pub fn backlog_bytes(
        &self,
        compacting: &[(u32, u64, u64)],
        partial_writes: &[(u32, u64)],
    ) -> f64 {
        let mut effective = self.size_per_level;
        let mut l0_writes = Vec::new();
        let mut l0_compacting = Vec::new();
        for &(level, written) in partial_writes {
            if level == 0 {
                l0_writes.push(written);
            }
            effective[level as usize] += written;
        }
        for &(level, size, consumed) in compacting {
            if level == 0 {
                l0_compacting.push((size, consumed));
            }
            let level = &mut effective[level as usize];
            *level = level.saturating_sub(consumed.min(size));
        }
        let mut backlog = self.l0.backlog_bytes(&l0_compacting, &l0_writes);
        for level in 0..MAX_LEVELS - 1 {
            let size = effective[level] as f64;
            for &next in &effective[level + 1..MAX_LEVELS - 1] {
                let fan_out = (next as f64 / self.sstable_size_bytes as f64).min(FAN_OUT as f64);
                backlog += fan_out * size;
            }
        }
        debug_assert!(
            backlog.is_finite() && backlog >= 0.0,
            "a leveled backlog: {backlog}"
        );
        backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_set::KEY_SHARE_ONE;
    use units::{SimDuration, SimTime};

    const SIZE: u64 = DEFAULT_SSTABLE_SIZE_MIB * MIB;
    /// A tenth of the ring.
    const TENTH: u64 = KEY_SHARE_ONE / 10;

    fn sstable(generation: u64, level: u32, mebibytes: u64, tokens: Option<(u64, u64)>) -> SSTable {
        SSTable {
            created_at: SimTime::ZERO + SimDuration::from_secs(generation),
            level,
            token_range: tokens,
            ..SSTable::for_test(generation, mebibytes * MIB, mebibytes * 1000, 0, 1_000_000)
        }
    }

    /// `count` SSTables of `mebibytes` tiling the ring in `level`.
    fn tiled(first_generation: u64, level: u32, count: u64, mebibytes: u64) -> Vec<SSTable> {
        (0..count)
            .map(|i| {
                let low = KEY_SHARE_ONE / count * i;
                let high = if i + 1 == count {
                    KEY_SHARE_ONE
                } else {
                    KEY_SHARE_ONE / count * (i + 1)
                };
                sstable(first_generation + i, level, mebibytes, Some((low, high)))
            })
            .collect()
    }

    fn flushed(generation: u64, mebibytes: u64) -> SSTable {
        sstable(generation, 0, mebibytes, None)
    }

    fn sorted(mut generations: Vec<u64>) -> Vec<u64> {
        generations.sort_unstable();
        generations
    }

    #[test]
    fn the_defaults_and_level_targets_are_scyllas() {
        let options = LcsOptions::default();
        assert_eq!(options.sstable_size_bytes, 167_772_160);
        assert_eq!(max_bytes_for_level(0, SIZE), 4 * SIZE);
        assert_eq!(max_bytes_for_level(1, SIZE), 10 * SIZE);
        assert_eq!(max_bytes_for_level(2, SIZE), 100 * SIZE);
        assert_eq!(max_bytes_for_level(4, SIZE), 10_000 * SIZE);
        assert_eq!(max_bytes_for_level(30, SIZE), u64::MAX);
        const { assert!(TARGET_SCORE > 1.001 && TARGET_SCORE < 1.001_000_1) };
    }

    #[test]
    fn token_ranges_overlap_inclusively_and_flushes_span_the_ring() {
        let a = sstable(1, 1, 160, Some((0, 100)));
        let b = sstable(2, 1, 160, Some((100, 200)));
        let c = sstable(3, 1, 160, Some((99, 150)));
        assert_eq!(token_bounds(&a), (0, 99));
        assert!(!spans_overlap(token_bounds(&a), token_bounds(&b)));
        assert!(spans_overlap(token_bounds(&a), token_bounds(&c)));
        assert!(spans_overlap(token_bounds(&b), token_bounds(&c)));
        let whole = flushed(4, 10);
        assert_eq!(token_bounds(&whole), (0, KEY_SHARE_ONE - 1));
        let others = [&a, &b, &c];
        let hits: Vec<u64> = overlapping(token_bounds(&whole), &others)
            .iter()
            .map(|s| s.generation)
            .collect();
        assert_eq!(hits, vec![1, 2, 3]);
        let hits: Vec<u64> = overlapping((150, 160), &others)
            .iter()
            .map(|s| s.generation)
            .collect();
        assert_eq!(hits, vec![2]);
        // The first overlapping set of a sorted level: a and c.
        let level = [&a, &c, &b];
        let set: Vec<u64> = overlapping_sstables(&level)
            .iter()
            .map(|s| s.generation)
            .collect();
        assert_eq!(set, vec![1, 2, 3]);
        let disjoint = [&a, &b];
        assert!(overlapping_sstables(&disjoint).is_empty());
    }

    #[test]
    fn a_full_sstables_worth_of_l0_goes_to_l1_with_the_overlapping_l1_sstables() {
        let options = LcsOptions::default();
        let mut table = vec![flushed(1, 100), flushed(2, 100)];
        table.extend(tiled(10, 1, 4, 160));
        let mut state = LcsState::new();
        let job = next_job(&table, &[], &options, &mut state).unwrap();
        assert_eq!(job.pick, LcsPick::Promote { from: 0 });
        assert_eq!(job.level, 1);
        assert_eq!(job.max_sstable_bytes, Some(SIZE));
        // Both flushes span the ring, so every L1 SSTable overlaps them.
        assert_eq!(job.generations, vec![1, 2, 10, 11, 12, 13]);
        // L0 with less than 160 MiB: size-tiered in L0 once it has 4.
        let small: Vec<SSTable> = (1..=3).map(|g| flushed(g, 30)).collect();
        assert_eq!(next_job(&small, &[], &options, &mut LcsState::new()), None);
        let small: Vec<SSTable> = (1..=4).map(|g| flushed(g, 30)).collect();
        let job = next_job(&small, &[], &options, &mut LcsState::new()).unwrap();
        assert_eq!(job.pick, LcsPick::L0SizeTiered);
        assert_eq!((job.level, job.generations.len()), (0, 4));
        // A single 160 MiB flush is promoted alone.
        let one = [flushed(1, 160)];
        let job = next_job(&one, &[], &options, &mut LcsState::new()).unwrap();
        assert_eq!((job.level, job.generations.clone()), (1, vec![1]));
    }

    #[test]
    fn an_l0_job_takes_the_32_oldest() {
        let options = LcsOptions::default();
        // 40 flushes, created in reverse generation order.
        let table: Vec<SSTable> = (1..=40)
            .map(|g| {
                let mut s = flushed(g, 10);
                s.created_at = SimTime::ZERO + SimDuration::from_secs(100 - g);
                s
            })
            .collect();
        let job = next_job(&table, &[], &options, &mut LcsState::new()).unwrap();
        assert_eq!(job.pick, LcsPick::Promote { from: 0 });
        assert_eq!(sorted(job.generations), (9..=40).collect::<Vec<u64>>());
    }

    #[test]
    fn the_highest_level_over_its_target_goes_first() {
        let options = LcsOptions::default();
        // L1: 12 x 160 MiB (score 1.2); L2: 110 x 160 MiB (score 1.1).
        let mut table = tiled(100, 1, 12, 160);
        table.extend(tiled(200, 2, 110, 160));
        let mut state = LcsState::new();
        let job = next_job(&table, &[], &options, &mut state).unwrap();
        assert_eq!(job.pick, LcsPick::Promote { from: 2 });
        assert_eq!(job.level, 3);
        // L3 is empty: the L2 SSTable after L3's (absent) last key, the
        // first in token order, alone.
        assert_eq!(job.generations, vec![200]);
        // Without L2 over its target, L1 goes.
        let mut table = tiled(100, 1, 12, 160);
        table.extend(tiled(200, 2, 50, 160));
        let job = next_job(&table, &[], &options, &mut LcsState::new()).unwrap();
        assert_eq!(job.pick, LcsPick::Promote { from: 1 });
        assert_eq!(job.level, 2);
    }

    #[test]
    fn a_level_is_compacted_round_robin_from_its_last_key() {
        let options = LcsOptions {
            push_to_highest_level: false,
            ..LcsOptions::default()
        };
        // L1: 12 SSTables over the ring (score 1.2); L2: 10 over tenths.
        let mut table = tiled(100, 1, 12, 160);
        table.extend(tiled(200, 2, 10, 160));
        let mut state = LcsState::new();
        let job = next_job(&table, &[], &options, &mut state).unwrap();
        // The newest L2 SSTable (generation 209, the last tenth) ends at
        // the last token: no L1 SSTable starts after it, so start at 0.
        assert_eq!(
            state.last_compacted_keys().unwrap()[1],
            Some(KEY_SHARE_ONE - 1)
        );
        let first_l1 = &table[0];
        assert_eq!(job.generations.last(), Some(&first_l1.generation));
        // L1's first twelfth overlaps L2's first tenth only.
        assert_eq!(sorted(job.generations.clone()), vec![100, 200]);
        // The output ends where the input tenth ended: the next job starts
        // at the first L1 SSTable after it: not the second (it starts at
        // 1/12 < 1/10), the third (2/12).
        let output = sstable(300, 2, 160, Some((0, TENTH)));
        state.notify_completion(&[table[0].clone(), table[11].clone()], &[output]);
        assert_eq!(state.last_compacted_keys().unwrap()[1], Some(TENTH - 1));
        let rest: Vec<SSTable> = table
            .iter()
            .filter(|s| s.generation != 100 && s.generation != 200)
            .cloned()
            .collect();
        let job = next_job(&rest, &[], &options, &mut state).unwrap();
        assert_eq!(job.pick, LcsPick::Promote { from: 1 });
        assert_eq!(job.generations.last(), Some(&102));
    }

    #[test]
    fn a_crowded_l0_is_size_tiered_before_a_higher_level_is_compacted() {
        let options = LcsOptions::default();
        let mut table: Vec<SSTable> = (1..=33).map(|g| flushed(g, 10)).collect();
        table.extend(tiled(100, 1, 11, 160));
        let job = next_job(&table, &[], &options, &mut LcsState::new()).unwrap();
        assert_eq!(job.pick, LcsPick::L0SizeTiered);
        assert_eq!((job.level, job.max_sstable_bytes), (0, None));
        // The bucket is truncated to max_threshold.
        assert_eq!(job.generations.len(), 32);
        // With 32 in L0, L1's score decides.
        table.retain(|s| s.generation != 33);
        let job = next_job(&table, &[], &options, &mut LcsState::new()).unwrap();
        assert_eq!(job.pick, LcsPick::Promote { from: 1 });
    }

    #[test]
    fn overlapping_sstables_of_a_level_are_merged_in_place() {
        let options = LcsOptions::default();
        let mut table = tiled(100, 1, 11, 160);
        table.push(sstable(150, 1, 160, Some((TENTH / 2, TENTH * 3))));
        let job = next_job(&table, &[], &options, &mut LcsState::new()).unwrap();
        assert_eq!(job.pick, LcsPick::RestoreInvariant { level: 1 });
        assert_eq!(job.level, 1);
        // 150 spans 0.05..0.3: it overlaps the first four elevenths.
        assert_eq!(job.generations, vec![100, 101, 102, 103, 150]);
    }

    #[test]
    fn a_starved_level_gets_an_sstable_pulled_in() {
        let options = LcsOptions {
            push_to_highest_level: false,
            ..LcsOptions::default()
        };
        // L1 over its target, L2 empty, L3 holding SSTables of a fiftieth
        // of the ring, so the job's span (an eleventh) contains some.
        let mut table = tiled(100, 1, 11, 160);
        table.extend(tiled(300, 3, 50, 160));
        let mut state = LcsState::new();
        for round in 1..=26u32 {
            let job = next_job(&table, &[], &options, &mut state).unwrap();
            assert_eq!(job.level, 2);
            assert_eq!(state.compaction_counter()[3], round);
            let pulled = job.generations.contains(&300);
            // Counter 26 > 25: one L3 SSTable inside the span is pulled in.
            assert_eq!(pulled, round == 26, "round {round}");
        }
        assert_eq!(state.compaction_counter()[2], 0);
    }

    #[test]
    fn an_idle_table_is_pushed_to_its_highest_level_from_2_3() {
        // L1 and L2 both under target.
        let mut table = tiled(100, 1, 3, 160);
        table.extend(tiled(200, 2, 20, 160));
        let pushing = LcsOptions::default();
        let job = next_job(&table, &[], &pushing, &mut LcsState::new()).unwrap();
        assert_eq!(job.pick, LcsPick::Promote { from: 1 });
        assert_eq!(job.level, 2);
        let not_pushing = LcsOptions {
            push_to_highest_level: false,
            ..LcsOptions::default()
        };
        assert_eq!(
            next_job(&table, &[], &not_pushing, &mut LcsState::new()),
            None
        );
        // One level alone is left as it is.
        let alone = tiled(100, 1, 3, 160);
        assert_eq!(next_job(&alone, &[], &pushing, &mut LcsState::new()), None);
    }

    #[test]
    fn running_jobs_hold_their_sstables_as_in_cassandra() {
        let options = LcsOptions {
            push_to_highest_level: false,
            ..LcsOptions::default()
        };
        let mut table = tiled(100, 1, 12, 160);
        table.extend(tiled(200, 2, 10, 160));
        let mut state = LcsState::new();
        let first = next_job(&table, &[], &options, &mut state).unwrap();
        assert_eq!(sorted(first.generations.clone()), vec![100, 200]);
        // With that job running, the next pick skips L1 SSTables whose L2
        // overlaps are compacting (101 overlaps 200) and takes 102.
        let second = next_job(&table, &first.generations, &options, &mut state).unwrap();
        assert_eq!(second.generations.last(), Some(&102));
        assert!(second
            .generations
            .iter()
            .all(|g| !first.generations.contains(g)));
        // L0 waits while an overlapping L1 SSTable is compacting.
        let mut with_l0 = table.clone();
        with_l0.truncate(12);
        with_l0.push(flushed(1, 200));
        let busy = [105];
        let mut state = LcsState::new();
        let job = next_job(&with_l0, &busy, &options, &mut state).unwrap();
        // L1 (11 free SSTables, score 1.1) still goes first ...
        assert_eq!(job.pick, LcsPick::Promote { from: 1 });
        // ... and with L1 under its target, L0 cannot start.
        with_l0.truncate(10);
        with_l0.push(flushed(1, 200));
        assert_eq!(next_job(&with_l0, &busy, &options, &mut state), None);
        assert!(next_job(&with_l0, &[], &options, &mut state).is_some());
    }

    #[test]
    fn pending_compactions_count_the_excess_in_sstables() {
        let options = LcsOptions::default();
        // L1: 15 x 160 MiB against a 10 x 160 MiB target: ceil(4.99) = 5.
        let table = tiled(1, 1, 15, 160);
        assert_eq!(estimated_pending_compactions(&table, &options), 5);
        // At the target, or L0 under 4 SSTables' worth: none.
        assert_eq!(
            estimated_pending_compactions(&tiled(1, 1, 10, 160), &options),
            0
        );
        let l0: Vec<SSTable> = (1..=3).map(|g| flushed(g, 160)).collect();
        assert_eq!(estimated_pending_compactions(&l0, &options), 0);
        let l0: Vec<SSTable> = (1..=6).map(|g| flushed(g, 160)).collect();
        assert_eq!(estimated_pending_compactions(&l0, &options), 2);
    }

    #[test]
    fn settled_levels_fill_targets_or_sit_in_the_highest_level() {
        let pyramid = LcsOptions {
            push_to_highest_level: false,
            ..LcsOptions::default()
        };
        // 20,000 MiB: L1 1,600, L2 16,000, L3 the remaining 2,400.
        assert_eq!(
            settled_levels(20_000 * MIB, &pyramid),
            vec![(1, 1_600 * MIB), (2, 16_000 * MIB), (3, 2_400 * MIB)]
        );
        assert_eq!(settled_levels(100 * MIB, &pyramid), vec![(1, 100 * MIB)]);
        assert!(settled_levels(0, &pyramid).is_empty());
        // Pushed: all of it where it fits, L3 (160,000 MiB).
        assert_eq!(
            settled_levels(20_000 * MIB, &LcsOptions::default()),
            vec![(3, 20_000 * MIB)]
        );
        // Neither layout has anything to do.
        for options in [pyramid, LcsOptions::default()] {
            let mut table = Vec::new();
            for (level, bytes) in settled_levels(20_000 * MIB, &options) {
                let count = bytes.div_ceil(SIZE);
                let generation = table.len() as u64 + 1;
                table.extend(tiled(generation, level, count, bytes / MIB / count));
            }
            assert_eq!(next_job(&table, &[], &options, &mut LcsState::new()), None);
        }
    }

    #[test]
    fn the_backlog_follows_the_3_0_formula() {
        let mut tracker = LcsBacklogTracker::new(SIZE);
        assert_eq!(tracker.backlog_bytes(&[], &[]), 0.0);
        // L1: 5 x 160 MiB; L2: 30 x 160 MiB; L3: 2 x 160 MiB.
        for (level, count) in [(1, 5), (2, 30), (3, 2)] {
            for _ in 0..count {
                tracker.add_sstable(level, SIZE);
            }
        }
        let s = SIZE as f64;
        // L1 x (min(10, 30) + min(10, 2)) + L2 x min(10, 2).
        let expected = 5.0 * s * (10.0 + 2.0) + 30.0 * s * 2.0;
        assert!((tracker.backlog_bytes(&[], &[]) - expected).abs() < 1.0);
        // Four L0 SSTables of S add their STCS backlog 4 S and
        // 4 S x (5 + 10 + 2) for the levels above.
        for _ in 0..4 {
            tracker.add_sstable(0, SIZE);
        }
        let with_l0 = expected + 4.0 * s + 4.0 * s * 17.0;
        assert!((tracker.backlog_bytes(&[], &[]) - with_l0).abs() / with_l0 < 1e-12);
        // A job reading half of one L1 SSTable and writing 80 MiB into L2.
        let half = SIZE / 2;
        let during = tracker.backlog_bytes(&[(1, SIZE, half)], &[(2, half)]);
        let l1 = 4.5 * s;
        let l2 = 30.5 * s;
        let expected = 4.0 * s + 4.0 * s * (l1 / s + 10.0 + 2.0) + l1 * (10.0 + 2.0) + l2 * 2.0;
        assert!(
            (during - expected).abs() / expected < 1e-12,
            "{during} vs {expected}"
        );
        // The last level (8) counts as nothing above anything.
        let mut top = LcsBacklogTracker::new(SIZE);
        top.add_sstable(7, SIZE);
        top.add_sstable(8, 1000 * SIZE);
        assert_eq!(top.backlog_bytes(&[], &[]), 0.0);
        for _ in 0..4 {
            tracker.remove_sstable(0, SIZE);
        }
        assert!((tracker.backlog_bytes(&[], &[]) - 5.0 * s * 12.0 - 60.0 * s).abs() < 1.0);
    }

    #[test]
    #[should_panic(expected = "removing")]
    fn removing_bytes_a_level_does_not_hold_panics() {
        let mut tracker = LcsBacklogTracker::new(SIZE);
        tracker.add_sstable(1, 10);
        tracker.remove_sstable(2, 10);
    }
}
