//! Time-window compaction (`TimeWindowCompactionStrategy`, TWCS): the
//! strategy users pick for time series, Cassandra 3.11's and Scylla 2.x's.
//!
//! An SSTable belongs to the time window that holds its newest write (its
//! maximum timestamp, as Scylla's and Cassandra's Statistics record it),
//! windows being `compaction_window_size` x `compaction_window_unit` long
//! and aligned to the epoch (`getWindowBoundsInMillis`). The next job
//! (Cassandra 3.11 `TimeWindowCompactionStrategy.newestBucket`, Scylla
//! `time_window_compaction_strategy::newest_bucket`) looks at the windows
//! newest first:
//! - the newest window seen (the one still being written) is size-tiered
//!   inside: STCS's most interesting bucket of at least `min_threshold`
//!   SSTables, at most `max_threshold`;
//! - an older window with two SSTables or more is compacted whole, its
//!   smallest `max_threshold` first (`trimToThreshold`): once a window
//!   closes, its flushes and tiers become one SSTable, and the window is
//!   never compacted again unless something new lands in it.
//!
//! The backlog (scylla-mechanisms.md 1.4, Scylla 3.0's
//! `time_window_backlog_tracker`) is the sum of independent size-tiered
//! backlogs, one per window: [`TwcsBacklogTracker`].
//!
//! Expiring data: with a table TTL (`default_time_to_live`), an SSTable
//! whose newest write expired more than `gc_grace_seconds` ago holds
//! nothing a read can return nor a tombstone still needed, and is dropped
//! whole (Cassandra's `getFullyExpiredSSTables`, which TWCS checks every
//! `expired_sstable_check_frequency_seconds`), with no rewrite: [`expired`].

use std::collections::BTreeMap;

use crate::compaction::backlog::StcsBacklogTracker;
use crate::compaction::stcs::{self, StcsOptions};
use crate::compaction::strategy::BacklogPart;
use crate::sstable::SSTable;

/// Microseconds in a second: write timestamps are in microseconds.
const MICROS_PER_SECOND: u64 = 1_000_000;

/// TWCS's options, with Cassandra 3.11's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwcsOptions {
    /// `compaction_window_size` x `compaction_window_unit`, microseconds.
    /// Default one day (`DAYS`, 1).
    pub window_us: u64,
    /// The size-tiered options used inside the newest window (the
    /// schema's thresholds, `min_sstable_size`, `bucket_low/high`).
    pub stcs: StcsOptions,
    /// `expired_sstable_check_frequency_seconds`: how often fully expired
    /// SSTables are looked for, microseconds. Default 600 s.
    pub expired_check_us: u64,
    /// The table's `default_time_to_live`, microseconds (`None`: no TTL,
    /// nothing expires).
    pub ttl_us: Option<u64>,
    /// The table's `gc_grace_seconds`, microseconds. Default 864,000 s
    /// (ten days).
    pub gc_grace_us: u64,
    /// Whether the table has no backlog tracker for TWCS (Scylla 2.2: an
    /// infinite backlog, the controller's maximum shares).
    pub infinite_backlog: bool,
}

impl Default for TwcsOptions {
    fn default() -> TwcsOptions {
        TwcsOptions {
            window_us: 86_400 * MICROS_PER_SECOND,
            stcs: StcsOptions::default(),
            expired_check_us: 600 * MICROS_PER_SECOND,
            ttl_us: None,
            gc_grace_us: 864_000 * MICROS_PER_SECOND,
            infinite_backlog: false,
        }
    }
}

impl TwcsOptions {
    /// The start of the window holding timestamp `us` (aligned to the
    /// epoch, as `getWindowBoundsInMillis` aligns to whole units).
    pub fn window_of(&self, us: u64) -> u64 {
        debug_assert!(self.window_us > 0, "a window has a length");
        us - us % self.window_us
    }

    /// The window an SSTable belongs to: its newest write's.
    pub fn window_of_sstable(&self, sstable: &SSTable) -> u64 {
        self.window_of(sstable.max_timestamp_us)
    }
}

/// The SSTables TWCS compacts next, as generations, or `None`: the newest
/// window's size-tiered bucket, else the newest older window holding two
/// SSTables or more (`newestBucket`). `compacting` lists generations a
/// running job holds; they are not candidates.
pub fn pick(sstables: &[SSTable], compacting: &[u64], options: &TwcsOptions) -> Option<Vec<u64>> {
    let mut windows: BTreeMap<u64, Vec<&SSTable>> = BTreeMap::new();
    for sstable in sstables
        .iter()
        .filter(|sstable| !compacting.contains(&sstable.generation))
    {
        windows
            .entry(options.window_of_sstable(sstable))
            .or_default()
            .push(sstable);
    }
    // The newest window seen among the candidates (Cassandra's
    // `highestWindowSeen` over the uncompacting SSTables).
    let newest = *windows.keys().next_back()?;
    for (&window, members) in windows.iter().rev() {
        if members.len() < 2 {
            continue;
        }
        let chosen: Vec<&SSTable> = if window >= newest {
            let buckets = stcs::get_buckets(members, &options.stcs);
            match stcs::most_interesting_bucket(
                &buckets,
                options.stcs.min_threshold,
                options.stcs.max_threshold,
            ) {
                Some(bucket) => bucket,
                None => continue,
            }
        } else {
            // `trimToThreshold`: the smallest max_threshold of the window.
            let mut all = members.clone();
            all.sort_by_key(|sstable| (sstable.data_bytes, sstable.generation));
            all.truncate(options.stcs.max_threshold.max(2));
            all
        };
        debug_assert!(chosen.len() >= 2, "a job merges two SSTables or more");
        debug_assert!(
            chosen
                .iter()
                .all(|sstable| options.window_of_sstable(sstable) == window),
            "a TWCS job stays inside one window"
        );
        return Some(chosen.iter().map(|sstable| sstable.generation).collect());
    }
    None
}

/// The SSTables whose every row expired more than `gc_grace_seconds` ago
/// at `now_us`, as generations (none without a TTL): dropped whole.
pub fn expired(
    sstables: &[SSTable],
    compacting: &[u64],
    options: &TwcsOptions,
    now_us: u64,
) -> Vec<u64> {
    let Some(ttl) = options.ttl_us else {
        return Vec::new();
    };
    sstables
        .iter()
        .filter(|sstable| !compacting.contains(&sstable.generation))
        .filter(|sstable| {
            sstable
                .max_timestamp_us
                .saturating_add(ttl)
                .saturating_add(options.gc_grace_us)
                < now_us
        })
        .map(|sstable| sstable.generation)
        .collect()
}

/// One window's SSTables being compacted, `(data_bytes, consumed)`, and
/// being written, bytes so far.
type WindowParts = (Vec<(u64, u64)>, Vec<u64>);

/// Scylla 3.0's TWCS backlog: an independent size-tiered backlog per
/// window (`time_window_backlog_tracker`).
#[derive(Clone, Debug, PartialEq)]
pub struct TwcsBacklogTracker {
    window_us: u64,
    windows: BTreeMap<u64, StcsBacklogTracker>,
}

impl TwcsBacklogTracker {
    /// An empty table with windows of `window_us`.
    pub fn new(window_us: u64) -> TwcsBacklogTracker {
        assert!(window_us > 0, "a window has a length");
        TwcsBacklogTracker {
            window_us,
            windows: BTreeMap::new(),
        }
    }

    fn window_of(&self, us: u64) -> u64 {
        us - us % self.window_us
    }

    /// What must hold: every window's tracker holds (an emptied window is
    /// removed), each window aligned to the window length. O(windows).
    pub fn check_invariants(&self) {
        for (&window, tracker) in &self.windows {
            assert_eq!(window % self.window_us, 0, "windows are aligned");
            assert!(tracker.total_bytes() > 0, "an empty window is forgotten");
            tracker.check_invariants();
        }
    }

    /// An SSTable of `data_bytes` whose newest write is at `max_timestamp_us`
    /// joined the table.
    pub fn add_sstable(&mut self, max_timestamp_us: u64, data_bytes: u64) {
        if data_bytes == 0 {
            return;
        }
        let window = self.window_of(max_timestamp_us);
        self.windows
            .entry(window)
            .or_default()
            .add_sstable(data_bytes);
    }

    /// That SSTable left the table.
    pub fn remove_sstable(&mut self, max_timestamp_us: u64, data_bytes: u64) {
        if data_bytes == 0 {
            return;
        }
        let window = self.window_of(max_timestamp_us);
        let tracker = self
            .windows
            .get_mut(&window)
            .expect("removing an SSTable from a window the tracker holds");
        tracker.remove_sstable(data_bytes);
        if tracker.total_bytes() == 0 {
            self.windows.remove(&window);
        }
    }

    /// The sum of the windows' backlogs, given the SSTables being compacted
    /// and those being written, each counted in the window of its newest
    /// write.
    pub fn backlog_bytes(&self, compacting: &[BacklogPart], partial_writes: &[BacklogPart]) -> f64 {
        let mut windows: BTreeMap<u64, WindowParts> = BTreeMap::new();
        for part in compacting {
            windows
                .entry(self.window_of(part.max_timestamp_us))
                .or_default()
                .0
                .push((part.bytes, part.consumed));
        }
        for part in partial_writes {
            windows
                .entry(self.window_of(part.max_timestamp_us))
                .or_default()
                .1
                .push(part.bytes);
        }
        let empty = StcsBacklogTracker::new();
        let mut total = 0.0;
        for (window, tracker) in &self.windows {
            let (compacting, writes) = windows.remove(window).unwrap_or_default();
            total += tracker.backlog_bytes(&compacting, &writes);
        }
        // Writes into a window that holds no SSTable yet.
        for (_, (compacting, writes)) in windows {
            debug_assert!(compacting.is_empty(), "a compacting SSTable is held");
            total += empty.backlog_bytes(&[], &writes);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::stcs::MIB;

    const MINUTE: u64 = 60 * MICROS_PER_SECOND;

    fn sstable(generation: u64, data_bytes: u64, max_timestamp_us: u64) -> SSTable {
        SSTable {
            max_timestamp_us,
            ..SSTable::for_test(generation, data_bytes, 1, 0, 0)
        }
    }

    fn options() -> TwcsOptions {
        TwcsOptions {
            window_us: 10 * MINUTE,
            ..TwcsOptions::default()
        }
    }

    #[test]
    fn the_newest_window_is_size_tiered_inside() {
        let options = options();
        // Three flushes of the current window: under min_threshold.
        let mut sstables: Vec<SSTable> = (1..=3)
            .map(|g| sstable(g, 10 * MIB, 21 * MINUTE + g))
            .collect();
        assert_eq!(pick(&sstables, &[], &options), None);
        // A fourth similar one makes a bucket.
        sstables.push(sstable(4, 10 * MIB, 25 * MINUTE));
        assert_eq!(pick(&sstables, &[], &options), Some(vec![1, 2, 3, 4]));
        // One of them being compacted leaves three.
        assert_eq!(pick(&sstables, &[2], &options), None);
    }

    #[test]
    fn a_closed_window_is_compacted_whole_once_newest_first() {
        let options = options();
        let sstables = vec![
            // Window [0, 10 min): two SSTables of very different sizes.
            sstable(1, 500 * MIB, MINUTE),
            sstable(2, 5 * MIB, 9 * MINUTE),
            // Window [10, 20 min): three.
            sstable(3, 10 * MIB, 11 * MINUTE),
            sstable(4, 10 * MIB, 12 * MINUTE),
            sstable(5, 80 * MIB, 19 * MINUTE),
            // The newest window, one flush.
            sstable(6, 10 * MIB, 21 * MINUTE),
        ];
        // The newest closed window first, whole, whatever the sizes.
        assert_eq!(pick(&sstables, &[], &options), Some(vec![3, 4, 5]));
        assert_eq!(pick(&sstables, &[3], &options), Some(vec![4, 5]));
        // With that one compacted into one SSTable, the older window.
        let after = vec![
            sstables[0].clone(),
            sstables[1].clone(),
            sstable(7, 100 * MIB, 19 * MINUTE),
            sstables[5].clone(),
        ];
        assert_eq!(pick(&after, &[], &options), Some(vec![2, 1]));
        // Each window one SSTable: nothing to do.
        let settled = vec![
            sstable(8, 505 * MIB, 9 * MINUTE),
            sstable(7, 100 * MIB, 19 * MINUTE),
            sstable(6, 10 * MIB, 21 * MINUTE),
        ];
        assert_eq!(pick(&settled, &[], &options), None);
    }

    #[test]
    fn the_newest_window_is_the_newest_among_sstables_not_compacting() {
        let options = options();
        let sstables = vec![
            sstable(1, 10 * MIB, MINUTE),
            sstable(2, 10 * MIB, 2 * MINUTE),
            sstable(3, 10 * MIB, 11 * MINUTE),
        ];
        // With 3 compacting (alone in its window), the first window is the
        // newest seen: size-tiered, two SSTables are under min_threshold.
        assert_eq!(pick(&sstables, &[3], &options), None);
        // Otherwise it is closed and compacted whole.
        assert_eq!(pick(&sstables, &[], &options), Some(vec![1, 2]));
    }

    #[test]
    fn a_closed_window_is_trimmed_to_max_threshold_smallest_first() {
        let options = TwcsOptions {
            stcs: StcsOptions {
                max_threshold: 3,
                ..StcsOptions::default()
            },
            ..options()
        };
        let mut sstables: Vec<SSTable> = (1..=5)
            .map(|g| sstable(g, (10 - g) * MIB, MINUTE * g))
            .collect();
        sstables.push(sstable(9, MIB, 30 * MINUTE));
        assert_eq!(pick(&sstables, &[], &options), Some(vec![5, 4, 3]));
    }

    #[test]
    fn sstables_expire_whole_after_ttl_and_gc_grace() {
        let options = TwcsOptions {
            ttl_us: Some(30 * MINUTE),
            gc_grace_us: 5 * MINUTE,
            ..options()
        };
        let sstables = vec![sstable(1, MIB, MINUTE), sstable(2, MIB, 20 * MINUTE)];
        assert!(expired(&sstables, &[], &options, 36 * MINUTE).is_empty());
        assert_eq!(expired(&sstables, &[], &options, 36 * MINUTE + 1), vec![1]);
        assert_eq!(expired(&sstables, &[1], &options, 60 * MINUTE), vec![2]);
        // No TTL: nothing expires.
        assert!(expired(&sstables, &[], &TwcsOptions::default(), u64::MAX).is_empty());
    }

    #[test]
    fn the_backlog_is_one_size_tiered_backlog_per_window() {
        let mut tracker = TwcsBacklogTracker::new(10 * MINUTE);
        // Four equal SSTables in one window: 4 S, as STCS.
        for g in 0..4 {
            tracker.add_sstable(MINUTE + g, 100 * MIB);
        }
        let s = 100.0 * MIB as f64;
        assert!((tracker.backlog_bytes(&[], &[]) - 4.0 * s).abs() < 1.0);
        // One SSTable in each of two other windows adds nothing: a closed
        // window of one SSTable is done.
        tracker.add_sstable(15 * MINUTE, 100 * MIB);
        tracker.add_sstable(25 * MINUTE, 100 * MIB);
        assert!((tracker.backlog_bytes(&[], &[]) - 4.0 * s).abs() < 1.0);
        // A flush being written into the newest window counts there: two
        // equal SSTables, 2S log4(2S) - 2S log4(S) = S.
        let flush = BacklogPart {
            level: 0,
            max_timestamp_us: 26 * MINUTE,
            bytes: 100 * MIB,
            consumed: 0,
        };
        let with_flush = tracker.backlog_bytes(&[], &[flush]);
        assert!((with_flush - 5.0 * s).abs() < 1.0, "{with_flush}");
        tracker.check_invariants();
        for g in 0..4 {
            tracker.remove_sstable(MINUTE + g, 100 * MIB);
        }
        assert_eq!(tracker.backlog_bytes(&[], &[]), 0.0);
        tracker.check_invariants();
    }
}
