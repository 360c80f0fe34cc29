//! Volume mode's starting data: SSTables, memtables and merges placed before
//! the run as compaction and flushing would have left them (`[data]`).

use super::{mutation_bytes, PreloadState, Shard};
use crate::compaction::{lcs, stcs, CompactionStrategy};
use crate::read;
use crate::sstable::SSTable;
use crate::token_set::KEY_SHARE_ONE;
use units::SimTime;

impl Shard {
    /// Puts data on disk before the run starts (volume mode's `[data]`):
    /// SSTables of the given sizes and row counts over keys
    /// `first_key..=last_key`, as compaction left them. Only on an empty
    /// shard, before any request.
    pub fn preload(&mut self, sstables: &[(u64, u64)], first_key: u64, last_key: u64) {
        let rows_held = sstables.iter().map(|(_, rows)| rows).sum();
        self.preload_sstables(sstables, rows_held, (first_key, last_key));
    }

    /// [`Shard::preload`] of SSTables standing for `rows_held` rows (their
    /// own row counts may sum to a few fewer, each rounded down from its
    /// bytes).
    pub(super) fn preload_sstables(
        &mut self,
        sstables: &[(u64, u64)],
        rows_held: u64,
        (first_key, last_key): (u64, u64),
    ) {
        self.assert_empty_for_preload();
        let sstables: Vec<(u64, u64)> = sstables
            .iter()
            .copied()
            .filter(|&(bytes, rows)| bytes > 0 && rows > 0)
            .collect();
        let parts: Vec<u64> = sstables.iter().map(|&(_, rows)| rows).collect();
        let slices = self.key_share_slices(&parts, rows_held, (first_key, last_key));
        for (&(data_bytes, rows), &key_share) in sstables.iter().zip(&slices) {
            self.push_preloaded(SSTable {
                generation: 0,
                data_bytes,
                rows,
                first_key,
                last_key,
                created_at: SimTime::ZERO,
                max_timestamp_us: 0,
                key_share: Some(key_share),
                cells: None,
                level: 0,
                token_range: None,
                segments: None,
                token_set: None,
            });
        }
        let share_end = slices.last().map_or(0, |&(_, end)| end);
        self.record_preload(&sstables, first_key, last_key, share_end);
    }

    /// Each key is in exactly one preloaded part (an SSTable, or a level):
    /// consecutive slices of the key-share space, each as wide as its
    /// part's share of the `rows_held` rows, together as wide as those rows'
    /// share of the keys this shard owns in `first_key..=last_key`. A
    /// preload of all of them ends at `KEY_SHARE_ONE` exactly: rounding the
    /// rows to whole numbers must not leave a sliver of owned keys that no
    /// part holds (a read of one would find nothing).
    pub(super) fn key_share_slices(
        &self,
        part_rows: &[u64],
        rows_held: u64,
        (first_key, last_key): (u64, u64),
    ) -> Vec<(u64, u64)> {
        let owned_keys = ((last_key - first_key) as f64 + 1.0) * self.config.key_ownership_fraction;
        let whole = owned_keys.round().max(1.0);
        let end = if rows_held as f64 >= whole {
            KEY_SHARE_ONE
        } else {
            (rows_held as f64 / whole * KEY_SHARE_ONE as f64) as u64
        };
        let total: u64 = part_rows.iter().sum();
        let mut cumulative = 0u64;
        let mut start = 0u64;
        part_rows
            .iter()
            .map(|&rows| {
                cumulative += rows;
                let slice_end =
                    (u128::from(end) * u128::from(cumulative) / u128::from(total.max(1))) as u64;
                let slice = (start, slice_end);
                start = slice_end;
                slice
            })
            .collect()
    }

    /// Puts `rows` partitions of `row_bytes` each over keys
    /// `first_key..=last_key` on disk before the run starts, laid out as the
    /// table's strategy leaves them once caught up: size-tiered, one
    /// SSTable per base-`min_threshold` digit of the flushes (base 2 with
    /// Scylla 2.2's pair fallback; [`stcs::settled_sizes`], with this
    /// shard's flush size as the smallest tier); leveled, the levels of
    /// [`lcs::settled_levels`], each cut into `sstable_size_in_mb` SSTables
    /// over consecutive token ranges tiling the ring. Each key is in exactly
    /// one SSTable: slices of the key hash space (`key_share`), one per
    /// size-tiered SSTable, one per level (shared by the level's SSTables,
    /// which split it by token).
    ///
    /// [`PreloadState::MidCycle`] starts the shard part-way through the
    /// cycle its writes drive (flush, then compaction when a tier fills):
    /// `tiers` is the position in the cycle of the two lowest size-tiered
    /// tiers (base^2 flushes; [`stcs::steady_sizes`]; leveled L0 starts
    /// empty) and `memtable` the active memtable's fill, with its
    /// commitlog entries on disk. Shards at different positions flush and
    /// compact at their own times, as in a cluster long into a write load,
    /// not all at once. [`PreloadState::Window`] starts it at a point of a
    /// measured window that began compacted ([`stcs::window_sizes`]).
    /// Size-tiered, the smallest tier holds the SSTable bytes of the rows
    /// that fill a memtable to its flush point.
    pub fn preload_table(
        &mut self,
        rows: u64,
        row_bytes: u64,
        (first_key, last_key): (u64, u64),
        state: PreloadState,
    ) {
        assert!(row_bytes > 0, "preloaded rows need a size");
        let total_bytes = rows.saturating_mul(row_bytes);
        let memtable_fill = match self.config.compaction {
            CompactionStrategy::SizeTiered(options) => {
                let tier = self.smallest_tier_compacted(&options);
                let layout = self.size_tiered_layout(total_bytes, row_bytes, tier, state);
                let sstables: Vec<(u64, u64)> = layout
                    .sizes
                    .iter()
                    .map(|bytes| (*bytes, bytes / row_bytes))
                    .collect();
                self.preload_sstables(&sstables, rows, (first_key, last_key));
                self.resume_merges(&layout.merging, tier);
                layout.memtable_fill
            }
            CompactionStrategy::TimeWindow(_) => {
                // Time windows: every window before the run closed and was
                // compacted once, so each holds one SSTable; the twin has
                // no history of how the rows spread over windows, so they
                // stand as one SSTable of an old window (maximum timestamp
                // 0), which no later window's compaction touches. The plan
                // refuses the mid-cycle and window starts for this
                // strategy.
                debug_assert!(
                    matches!(state, PreloadState::Compacted),
                    "a time-window table starts compacted"
                );
                self.preload_sstables(
                    &[(total_bytes, total_bytes / row_bytes)],
                    rows,
                    (first_key, last_key),
                );
                0.0
            }
            CompactionStrategy::Leveled(options) => {
                self.assert_empty_for_preload();
                let levels = lcs::settled_levels(total_bytes, &options);
                let level_rows: Vec<u64> = levels
                    .iter()
                    .map(|&(_, level_bytes)| level_bytes / row_bytes)
                    .collect();
                let slices = self.key_share_slices(&level_rows, rows, (first_key, last_key));
                for (&(level, level_bytes), &share) in levels.iter().zip(&slices) {
                    let count = level_bytes.div_ceil(options.sstable_size_bytes);
                    let token_at = |bytes: u64| {
                        (u128::from(KEY_SHARE_ONE) * u128::from(bytes) / u128::from(level_bytes))
                            as u64
                    };
                    for i in 0..count {
                        let from = i * options.sstable_size_bytes;
                        let to = (from + options.sstable_size_bytes).min(level_bytes);
                        self.push_preloaded(SSTable {
                            generation: 0,
                            data_bytes: to - from,
                            rows: (to - from) / row_bytes,
                            first_key,
                            last_key,
                            created_at: SimTime::ZERO,
                            max_timestamp_us: 0,
                            key_share: Some(share),
                            cells: None,
                            level,
                            token_range: Some((token_at(from), token_at(to))),
                            segments: None,
                            token_set: None,
                        });
                    }
                }
                let share_end = slices.last().map_or(0, |&(_, end)| end);
                let rows_total = total_bytes / row_bytes;
                self.record_preload(&[(total_bytes, rows_total)], first_key, last_key, share_end);
                // L0 goes to L1 once it holds an SSTable's worth (160 MiB),
                // so with flushes at least that big L0 is empty between
                // flushes: only the memtable is part-way.
                match state {
                    PreloadState::Compacted => 0.0,
                    PreloadState::MidCycle { memtable, .. }
                    | PreloadState::Window { memtable, .. } => memtable,
                }
            }
        };
        assert!(
            (0.0..1.0).contains(&memtable_fill),
            "memtable fill {memtable_fill} is outside [0, 1)"
        );
        if memtable_fill > 0.0 {
            self.preload_memtable(memtable_fill, row_bytes, (first_key, last_key));
        }
    }

    /// The SSTables, merges under way and memtable fill a size-tiered
    /// preload in `state` starts with, tiers of `base` SSTables above this
    /// shard's flush size: compacted, [`stcs::settled_sizes`]; mid-cycle,
    /// [`stcs::steady_sizes`] with the merges [`MergePhases`] places
    /// ([`stcs::add_merge_inputs`]); in a window, [`stcs::window_sizes`]
    /// (compacted where the table is too small for it).
    pub(super) fn size_tiered_layout(
        &self,
        total_bytes: u64,
        row_bytes: u64,
        base: usize,
        state: PreloadState,
    ) -> stcs::TierLayout {
        // A flush writes the SSTable bytes of the rows that filled the
        // memtable to its flush point.
        let flush_rows =
            (self.config.flush_soft_limit_bytes() / self.row_memory_bytes(row_bytes)).max(1);
        let flush_bytes = flush_rows.saturating_mul(row_bytes);
        let settled = |memtable_fill| stcs::TierLayout {
            sizes: stcs::settled_sizes(total_bytes, flush_bytes, base),
            merging: Vec::new(),
            memtable_fill,
        };
        match state {
            PreloadState::Compacted => settled(0.0),
            PreloadState::MidCycle {
                tiers,
                memtable,
                merges,
            } => {
                assert!(
                    (0.0..1.0).contains(&tiers)
                        && (0.0..=1.0).contains(&merges.duty)
                        && merges.phases.iter().all(|phase| (0.0..1.0).contains(phase)),
                    "cycle phases {tiers}, {merges:?} are outside [0, 1)"
                );
                let cycle = (base * base) as u64;
                let flushes = ((tiers * cycle as f64) as u64).min(cycle - 1);
                let mut sizes = stcs::steady_sizes(total_bytes, flush_bytes, base, flushes);
                // Tiers part-way through a merge hold its inputs.
                let mut merging = Vec::new();
                let mut tier_bytes = flush_bytes.saturating_mul(base as u64);
                for &phase in &merges.phases {
                    tier_bytes = tier_bytes.saturating_mul(base as u64);
                    if phase < merges.duty && stcs::add_merge_inputs(&mut sizes, tier_bytes, base) {
                        merging.push((tier_bytes, phase / merges.duty));
                    }
                }
                stcs::TierLayout {
                    sizes,
                    merging,
                    memtable_fill: memtable,
                }
            }
            PreloadState::Window {
                tiers,
                memtable,
                elapsed_s,
                write_bytes_per_s,
                merge_bytes_per_s,
            } => {
                let cycle = stcs::WriteCycle {
                    flush_bytes,
                    base,
                    write_bytes_per_s,
                    merge_bytes_per_s,
                };
                stcs::window_sizes(total_bytes, &cycle, tiers, memtable, elapsed_s)
                    .unwrap_or_else(|| settled(memtable))
            }
        }
    }

    /// Starts the merges a mid-cycle preload left part-way: per entry,
    /// `base` SSTables of `tier_bytes`, `progress` of the way through. The
    /// compaction manager's rules hold as for any job (Scylla: one job per
    /// weight; Cassandra: `concurrent_compactors`); a merge they hold back
    /// keeps its inputs and starts when the strategy next picks them.
    pub(super) fn resume_merges(&mut self, merging: &[(u64, f64)], base: usize) {
        for &(tier_bytes, progress) in merging {
            let compacting = self.compaction.compacting_generations();
            let inputs: Vec<SSTable> = self
                .sstables
                .iter()
                .filter(|sstable| {
                    sstable.data_bytes == tier_bytes && !compacting.contains(&sstable.generation)
                })
                .take(base)
                .cloned()
                .collect();
            assert_eq!(inputs.len(), base, "a merging tier holds its inputs");
            let weight = stcs::job_weight(inputs.iter().map(|sstable| sstable.data_bytes).sum());
            let held_back = match self.config.concurrent_compactors {
                Some(_) => self.at_compactor_limit(),
                None => self.compaction.busy_weights().contains(&weight),
            };
            if held_back {
                continue;
            }
            let mut job = self.new_compaction_job(inputs, weight);
            job.resume_at(progress);
            self.launch_compaction(SimTime::ZERO, job);
        }
    }

    /// The fewest similar SSTables size-tiered compaction merges once it is
    /// idle: `min_threshold`, or 2 with Scylla 2.2's fallback to pairs
    /// (`compaction_enforce_min_threshold: false`), which leaves at most one
    /// SSTable per tier.
    pub(super) fn smallest_tier_compacted(&self, options: &stcs::StcsOptions) -> usize {
        if self.config.compaction_enforce_min_threshold {
            options.min_threshold
        } else {
            2
        }
    }

    /// Memtable memory a preloaded row of `row_bytes` SSTable bytes takes:
    /// its key and value with the memtable's overhead instead of the
    /// SSTable's.
    pub(super) fn row_memory_bytes(&self, row_bytes: u64) -> u64 {
        let value_bytes = row_bytes.saturating_sub(8 + self.config.sstable_row_overhead_bytes);
        (8 + value_bytes + self.config.memtable_row_overhead_bytes).max(1)
    }

    /// Fills the active memtable to `fill` of the flush threshold with rows
    /// of the preloaded size over the table's keys (overwrites, as a write
    /// load long under way brings), their commitlog entries on disk.
    pub(super) fn preload_memtable(&mut self, fill: f64, row_bytes: u64, keys: (u64, u64)) {
        debug_assert!(!self.config.data_mode, "volume mode preloads only");
        let overhead = self.config.sstable_row_overhead_bytes;
        let value_bytes = row_bytes.saturating_sub(8 + overhead);
        let row_memory_bytes = self.row_memory_bytes(row_bytes);
        let memory_bytes = (fill * self.config.flush_soft_limit_bytes() as f64) as u64;
        let rows = memory_bytes / row_memory_bytes;
        if rows == 0 {
            return;
        }
        let entry_bytes = mutation_bytes(value_bytes.min(u64::from(u32::MAX)) as u32)
            + crate::commitlog::ENTRY_OVERHEAD_BYTES;
        self.write.preload(
            rows,
            entry_bytes,
            8 + value_bytes,
            row_memory_bytes,
            keys,
            self.config.commitlog_segment_bytes,
        );
        self.resize_row_cache();
    }

    /// Volume mode: the preload's keys (those whose key-share point is
    /// below `share_end`) and row size, for what reads return.
    pub(super) fn record_preload(
        &mut self,
        sstables: &[(u64, u64)],
        first_key: u64,
        last_key: u64,
        share_end: u64,
    ) {
        let bytes: u64 = sstables.iter().map(|(bytes, _)| bytes).sum();
        let rows: u64 = sstables.iter().map(|(_, rows)| rows).sum();
        if self.config.data_mode || rows == 0 {
            return;
        }
        let value_bytes =
            read::mean_value_bytes(bytes, rows, self.config.sstable_row_overhead_bytes);
        self.population
            .record_preload(first_key, last_key, share_end, value_bytes);
    }

    pub(super) fn assert_empty_for_preload(&self) {
        assert!(
            self.sstables.is_empty() && self.write.is_empty(),
            "preloading a shard that already holds data"
        );
    }

    /// Adds a preloaded SSTable, giving it the next generation.
    pub(super) fn push_preloaded(&mut self, mut sstable: SSTable) {
        if sstable.data_bytes == 0 || sstable.rows == 0 {
            return;
        }
        sstable.generation = self.next_sstable_generation;
        self.next_sstable_generation += 1;
        self.compaction.add_sstable(&sstable);
        self.sstables.push(sstable);
        self.sstables_epoch += 1;
    }
}
