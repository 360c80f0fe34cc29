//! A table's compaction strategy, and the backlog tracker that goes with it.
//!
//! The strategy is the table's `compaction = {'class': ...}` (c-s's
//! `-schema compaction(strategy=...)`): size-tiered ([`crate::compaction::stcs`],
//! the default of Scylla and Cassandra), leveled
//! ([`crate::compaction::lcs`]) or time-window ([`crate::compaction::twcs`]).
//! Each strategy brings its own backlog tracker (scylla-mechanisms.md
//! section 1.4): STCS's over all SSTables; from Scylla 2.3, LCS's
//! per-level one and TWCS's per-window one; in 2.2, none for LCS and TWCS
//! (`unimplemented_backlog_tracker`), whose infinite backlog gives the
//! controller its maximum shares.

use crate::compaction::backlog::StcsBacklogTracker;
use crate::compaction::lcs::{LcsBacklogTracker, LcsOptions};
use crate::compaction::stcs::StcsOptions;
use crate::compaction::twcs::{TwcsBacklogTracker, TwcsOptions};
use crate::sstable::SSTable;

/// The table's compaction strategy and its options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CompactionStrategy {
    /// `SizeTieredCompactionStrategy`.
    SizeTiered(StcsOptions),
    /// `LeveledCompactionStrategy`.
    Leveled(LcsOptions),
    /// `TimeWindowCompactionStrategy`.
    TimeWindow(TwcsOptions),
}

impl Default for CompactionStrategy {
    /// Size-tiered with Scylla's defaults (the server default when c-s
    /// names no strategy).
    fn default() -> CompactionStrategy {
        CompactionStrategy::SizeTiered(StcsOptions::default())
    }
}

impl CompactionStrategy {
    /// The size-tiered options: the strategy's own, or those LCS uses to
    /// size-tier inside L0 (the schema's min/max thresholds).
    pub fn stcs_options(&self) -> &StcsOptions {
        match self {
            CompactionStrategy::SizeTiered(options) => options,
            CompactionStrategy::Leveled(options) => &options.stcs,
            CompactionStrategy::TimeWindow(options) => &options.stcs,
        }
    }

    /// Mutable [`CompactionStrategy::stcs_options`].
    pub fn stcs_options_mut(&mut self) -> &mut StcsOptions {
        match self {
            CompactionStrategy::SizeTiered(options) => options,
            CompactionStrategy::Leveled(options) => &mut options.stcs,
            CompactionStrategy::TimeWindow(options) => &mut options.stcs,
        }
    }

    /// The Cassandra class name.
    pub fn class_name(&self) -> &'static str {
        match self {
            CompactionStrategy::SizeTiered(_) => "SizeTieredCompactionStrategy",
            CompactionStrategy::Leveled(_) => "LeveledCompactionStrategy",
            CompactionStrategy::TimeWindow(_) => "TimeWindowCompactionStrategy",
        }
    }
}

/// An SSTable being compacted or written, as a backlog tracker sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BacklogPart {
    /// Its level (LCS; 0 otherwise).
    pub level: u32,
    /// Its newest write (TWCS's window).
    pub max_timestamp_us: u64,
    /// Its data bytes (an input's size; an output's or a flush's bytes
    /// written so far).
    pub bytes: u64,
    /// An input's bytes consumed so far (0 for a write).
    pub consumed: u64,
}

/// A table's backlog tracker, the compaction controller's input.
#[derive(Clone, Debug, PartialEq)]
pub enum TableBacklog {
    /// STCS's (2.2/3.0 variant) over every SSTable.
    SizeTiered(StcsBacklogTracker),
    /// LCS's (2.3/3.0) per-level tracker.
    Leveled(LcsBacklogTracker),
    /// TWCS's (3.0) per-window tracker.
    TimeWindow(TwcsBacklogTracker),
    /// No tracker (LCS in Scylla 2.2): an infinite backlog.
    Unimplemented,
}

impl TableBacklog {
    /// The tracker of a table with `strategy` and no SSTables.
    pub fn new(strategy: &CompactionStrategy) -> TableBacklog {
        let backlog = match strategy {
            CompactionStrategy::SizeTiered(_) => {
                TableBacklog::SizeTiered(StcsBacklogTracker::new())
            }
            CompactionStrategy::Leveled(options) if options.infinite_backlog => {
                TableBacklog::Unimplemented
            }
            CompactionStrategy::Leveled(options) => {
                TableBacklog::Leveled(LcsBacklogTracker::new(options.sstable_size_bytes))
            }
            CompactionStrategy::TimeWindow(options) if options.infinite_backlog => {
                TableBacklog::Unimplemented
            }
            CompactionStrategy::TimeWindow(options) => {
                TableBacklog::TimeWindow(TwcsBacklogTracker::new(options.window_us))
            }
        };
        debug_assert_eq!(
            matches!(backlog, TableBacklog::SizeTiered(_)),
            matches!(strategy, CompactionStrategy::SizeTiered(_)),
            "a table's tracker is its strategy's"
        );
        backlog
    }

    /// The tracker's own invariants
    /// ([`StcsBacklogTracker::check_invariants`],
    /// [`LcsBacklogTracker::check_invariants`]); nothing for no tracker. O(levels).
    pub fn check_invariants(&self) {
        match self {
            TableBacklog::SizeTiered(tracker) => tracker.check_invariants(),
            TableBacklog::Leveled(tracker) => tracker.check_invariants(),
            TableBacklog::TimeWindow(tracker) => tracker.check_invariants(),
            TableBacklog::Unimplemented => {}
        }
    }

    /// An SSTable joined the table.
    pub fn add_sstable(&mut self, sstable: &SSTable) {
        match self {
            TableBacklog::SizeTiered(tracker) => {
                debug_assert_eq!(
                    sstable.level, 0,
                    "a size-tiered table's SSTables are level 0"
                );
                tracker.add_sstable(sstable.data_bytes)
            }
            TableBacklog::Leveled(tracker) => {
                tracker.add_sstable(sstable.level, sstable.data_bytes)
            }
            TableBacklog::TimeWindow(tracker) => {
                tracker.add_sstable(sstable.max_timestamp_us, sstable.data_bytes)
            }
            TableBacklog::Unimplemented => {}
        }
    }

    /// An SSTable left the table.
    pub fn remove_sstable(&mut self, sstable: &SSTable) {
        match self {
            TableBacklog::SizeTiered(tracker) => {
                debug_assert_eq!(
                    sstable.level, 0,
                    "a size-tiered table's SSTables are level 0"
                );
                tracker.remove_sstable(sstable.data_bytes)
            }
            TableBacklog::Leveled(tracker) => {
                tracker.remove_sstable(sstable.level, sstable.data_bytes);
            }
            TableBacklog::TimeWindow(tracker) => {
                tracker.remove_sstable(sstable.max_timestamp_us, sstable.data_bytes);
            }
            TableBacklog::Unimplemented => {}
        }
    }

    /// The backlog in bytes, given the SSTables being compacted and those
    /// being written (flushes write level 0), each as [`BacklogPart`].
    pub fn backlog_bytes(&self, compacting: &[BacklogPart], partial_writes: &[BacklogPart]) -> f64 {
        let backlog = match self {
            TableBacklog::SizeTiered(tracker) => {
                let compacting: Vec<(u64, u64)> = compacting
                    .iter()
                    .map(|part| (part.bytes, part.consumed))
                    .collect();
                let writes: Vec<u64> = partial_writes.iter().map(|part| part.bytes).collect();
                tracker.backlog_bytes(&compacting, &writes)
            }
            TableBacklog::Leveled(tracker) => {
                let compacting: Vec<(u32, u64, u64)> = compacting
                    .iter()
                    .map(|part| (part.level, part.bytes, part.consumed))
                    .collect();
                let writes: Vec<(u32, u64)> = partial_writes
                    .iter()
                    .map(|part| (part.level, part.bytes))
                    .collect();
                tracker.backlog_bytes(&compacting, &writes)
            }
            TableBacklog::TimeWindow(tracker) => tracker.backlog_bytes(compacting, partial_writes),
            TableBacklog::Unimplemented => f64::INFINITY,
        };
        debug_assert!(backlog >= 0.0, "a backlog is not negative");
        backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::stcs::MIB;

    fn sstable(level: u32, data_bytes: u64) -> SSTable {
        SSTable {
            level,
            ..SSTable::for_test(1, data_bytes, 1, 0, 0)
        }
    }

    #[test]
    fn each_strategy_gets_its_tracker() {
        let stcs = CompactionStrategy::default();
        assert_eq!(stcs.class_name(), "SizeTieredCompactionStrategy");
        assert_eq!(stcs.stcs_options().min_threshold, 4);
        let mut backlog = TableBacklog::new(&stcs);
        for _ in 0..4 {
            backlog.add_sstable(&sstable(0, 100 * MIB));
        }
        // Four equal SSTables: 4 S.
        let expected = 400.0 * MIB as f64;
        assert!((backlog.backlog_bytes(&[], &[]) - expected).abs() < 1.0);

        let lcs = CompactionStrategy::Leveled(LcsOptions::default());
        let mut backlog = TableBacklog::new(&lcs);
        backlog.add_sstable(&sstable(1, 160 * MIB));
        backlog.add_sstable(&sstable(2, 1600 * MIB));
        // L1 x min(10, 10 SSTables in L2).
        let expected = 1600.0 * MIB as f64;
        assert!((backlog.backlog_bytes(&[], &[]) - expected).abs() < 1.0);
        backlog.remove_sstable(&sstable(2, 1600 * MIB));
        assert_eq!(backlog.backlog_bytes(&[], &[]), 0.0);

        let lcs_2_2 = CompactionStrategy::Leveled(LcsOptions {
            infinite_backlog: true,
            ..LcsOptions::default()
        });
        assert_eq!(
            TableBacklog::new(&lcs_2_2).backlog_bytes(&[], &[]),
            f64::INFINITY
        );
    }
}
