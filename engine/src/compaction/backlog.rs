//! The size-tiered compaction backlog: how many bytes compaction still has
//! to rewrite, the input of the compaction controller
//! ([`crate::controller`]).
//!
//! What is modelled: the STCS backlog tracker of Scylla 2.2 to 3.0
//! (scylla-mechanisms.md section 1.4, "2.2/3.0 variant"; read from
//! `size_tiered_backlog_tracker` in `sstables/compaction_strategy.cc` @2.2.0
//! and `sstables/size_tiered_backlog_tracker.hh` @3.0.0). Per SSTable of data
//! size `S_i` of which an ongoing compaction has already read `C_i` bytes,
//! the backlog is
//!
//! ```text
//! B_i = E_i x log4(T / S_i),   E_i = S_i - C_i,
//! ```
//!
//! each byte still to be rewritten about `log4(T / S_i)` more times before
//! the table is one SSTable. SSTables being written (flush and compaction
//! outputs) count as whole SSTables of the size written so far. The table's
//! backlog is the sum, clamped at 0; a table of 0 bytes has backlog 0. Four
//! SSTables of `S` give `4 S x log4(4) = 4 S`; once merged into one, 0.
//!
//! **`T` is the effective total.** The tracker's header comment and the
//! mechanisms doc define `T = sum S_i`, but the code evaluates
//! `total x log4(total) - contributions` with
//! `total = sum S_i + sum w - sum C_i`, which is the formula above with
//! `T' = sum E_i + sum w` (the bytes not yet consumed, plus those written).
//! The two agree when no compaction is reading; while one is, the code's
//! value is lower (four SSTables of 4 units, two of them half read, and a
//! 3-unit partial output: 14.92 with `T'`, 17.48 with `T`). This module
//! follows the code, since that is what drove the 2.2-3.0 controllers; see
//! the test `consumption_lowers_the_total_inside_the_logarithm`.
//!
//! Details kept from the code: SSTables and partial writes of 0 bytes are
//! ignored (`add_sstable`, `partial_backlog`); `log4(x) = ln(x) / ln(4)`;
//! 3.0 clamps a negative result at 0. 2.2 did not, but a negative value
//! only arises while a compaction has consumed most of a table and written
//! little, and 2.2's curve, through `(0, 0)`, then gives no shares either way.
//!
//! Left out: the 5.1+ variant (only "interesting" buckets contribute,
//! partial writes ignored), the LCS, TWCS and ICS trackers, and the
//! "unimplemented tracker" (+infinity) of LCS/TWCS/DTCS in 2.2, which the
//! controller module handles as [`crate::controller::compaction_input`]'s
//! infinite backlog.

/// `log4(x)` as Scylla computes it: `ln(x) x (1 / ln 4)`.
pub fn log4(x: f64) -> f64 {
    debug_assert!(x > 0.0, "log4 of a positive size, not {x}");
    x.ln() * (1.0 / 4f64.ln())
}

/// `x log4 x` for a positive byte count.
fn weighted_log(bytes: u64) -> f64 {
    debug_assert!(bytes > 0, "only SSTables with bytes weigh in");
    let bytes = bytes as f64;
    bytes * log4(bytes)
}

/// The table's STCS backlog in bytes, computed directly from every SSTable.
///
/// `sstables` lists each SSTable of the table as `(data_bytes, consumed)`,
/// `consumed` being the bytes of it an ongoing compaction has read (`C_i`;
/// 0 when it is not compacting; capped at `data_bytes`). `partial_writes`
/// lists the bytes written so far by each SSTable being written (flushes and
/// compaction outputs). Returns `sum E_i x log4(T' / S_i) + sum w x log4(T' / w)`
/// with `T' = sum E_i + sum w`, clamped at 0 (see the module doc).
pub fn stcs_backlog_bytes(sstables: &[(u64, u64)], partial_writes: &[u64]) -> f64 {
    let effective: Vec<(u64, u64)> = sstables
        .iter()
        .filter(|(size, _)| *size > 0)
        .map(|&(size, consumed)| (size, size - consumed.min(size)))
        .collect();
    let written: Vec<u64> = partial_writes.iter().copied().filter(|w| *w > 0).collect();
    let total: u64 =
        effective.iter().map(|(_, left)| left).sum::<u64>() + written.iter().sum::<u64>();
    if total == 0 {
        return 0.0;
    }
    let log_total = log4(total as f64);
    let from_sstables: f64 = effective
        .iter()
        .map(|&(size, left)| left as f64 * (log_total - log4(size as f64)))
        .sum();
    let from_writes: f64 = written
        .iter()
        .map(|&w| w as f64 * (log_total - log4(w as f64)))
        .sum();
    let backlog = (from_sstables + from_writes).max(0.0);
    debug_assert!(backlog.is_finite(), "a finite table has a finite backlog");
    backlog
}

/// The incremental STCS tracker, as Scylla keeps it: `sum S_i` and
/// `sum S_i log4 S_i` over the table's SSTables, updated as SSTables are
/// added and removed, so that a tick only iterates the compacting SSTables
/// and the partial writes.
///
/// Like Scylla's, the sum of `S_i log4 S_i` is a float updated by additions
/// and subtractions, so after many changes it carries rounding drift of a
/// few ulps of its largest value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StcsBacklogTracker {
    total_bytes: u64,
    contribution: f64,
    sstables: usize,
}

impl StcsBacklogTracker {
    /// An empty table.
    pub fn new() -> StcsBacklogTracker {
        StcsBacklogTracker::default()
    }

    /// What must hold: the tracker holds SSTables exactly when it holds
    /// bytes, each SSTable at least one byte; an empty tracker carries no
    /// drift; the contribution is a finite number. O(1).
    pub fn check_invariants(&self) {
        assert_eq!(
            self.sstables == 0,
            self.total_bytes == 0,
            "bytes are SSTables'"
        );
        assert!(
            self.total_bytes >= self.sstables as u64,
            "every SSTable held has bytes"
        );
        assert!(self.contribution.is_finite());
        if self.sstables == 0 {
            assert_eq!(self.contribution, 0.0, "no drift survives an empty table");
        }
    }

    /// An SSTable of `data_bytes` joined the table (flushed, compacted,
    /// streamed). Empty SSTables are ignored.
    pub fn add_sstable(&mut self, data_bytes: u64) {
        if data_bytes > 0 {
            self.total_bytes += data_bytes;
            self.contribution += weighted_log(data_bytes);
            self.sstables += 1;
        }
        debug_assert!(self.total_bytes >= self.sstables as u64);
    }

    /// An SSTable of `data_bytes` left the table (replaced by a compaction,
    /// dropped). Panics if the tracker never held that many bytes: removing
    /// an SSTable that was not added is a bug in the caller.
    pub fn remove_sstable(&mut self, data_bytes: u64) {
        if data_bytes > 0 {
            assert!(
                self.sstables > 0 && self.total_bytes >= data_bytes,
                "removing a {data_bytes}-byte SSTable the backlog tracker does not hold"
            );
            self.total_bytes -= data_bytes;
            self.contribution -= weighted_log(data_bytes);
            self.sstables -= 1;
            if self.sstables == 0 {
                // No drift survives an empty table.
                self.contribution = 0.0;
            }
        }
    }

    /// `sum S_i` over the SSTables held.
    pub fn total_bytes(&self) -> u64 {
        debug_assert_eq!(self.sstables == 0, self.total_bytes == 0);
        self.total_bytes
    }

    /// The backlog in bytes, given the SSTables being compacted as
    /// `(data_bytes, consumed)` (each must also have been added) and the
    /// bytes written so far by each SSTable being written.
    pub fn backlog_bytes(&self, compacting: &[(u64, u64)], partial_writes: &[u64]) -> f64 {
        let mut total = self.total_bytes as f64;
        let mut contribution = self.contribution;
        for &w in partial_writes.iter().filter(|w| **w > 0) {
            total += w as f64;
            contribution += weighted_log(w);
        }
        for &(size, consumed) in compacting.iter().filter(|(size, _)| *size > 0) {
            let consumed = consumed.min(size) as f64;
            total -= consumed;
            contribution -= consumed * log4(size as f64);
        }
        if total <= 0.0 {
            return 0.0;
        }
        let backlog = (total * log4(total) - contribution).max(0.0);
        debug_assert!(backlog.is_finite(), "a finite table has a finite backlog");
        backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0)
    }

    #[test]
    fn four_equal_sstables_have_a_backlog_of_their_size_until_merged() {
        let s = 1u64 << 30;
        let four = [(s, 0); 4];
        assert!(close(stcs_backlog_bytes(&four, &[]), 4.0 * s as f64));
        assert_eq!(stcs_backlog_bytes(&[(4 * s, 0)], &[]), 0.0);
        let mut tracker = StcsBacklogTracker::new();
        for _ in 0..4 {
            tracker.add_sstable(s);
        }
        assert!(close(tracker.backlog_bytes(&[], &[]), 4.0 * s as f64));
        for _ in 0..4 {
            tracker.remove_sstable(s);
        }
        tracker.add_sstable(4 * s);
        assert!(close(tracker.backlog_bytes(&[], &[]), 0.0));
    }

    #[test]
    fn a_hand_built_set_matches_the_formula() {
        // S = 1, 2, 4, 8: T = 15.
        let expected = 1.0 * (15.0f64).ln() / 4f64.ln()
            + 2.0 * (7.5f64).ln() / 4f64.ln()
            + 4.0 * (3.75f64).ln() / 4f64.ln()
            + 8.0 * (1.875f64).ln() / 4f64.ln();
        assert!(close(expected, 12.301679467063888));
        let sstables = [(1, 0), (2, 0), (4, 0), (8, 0)];
        assert!(close(stcs_backlog_bytes(&sstables, &[]), expected));
        // A flush that has written 3 counts as a fourth SSTable: T = 18.
        let expected: f64 = [1.0, 2.0, 4.0, 8.0, 3.0]
            .iter()
            .map(|s: &f64| s * (18.0 / s).ln() / 4f64.ln())
            .sum();
        assert!(close(expected, 18.151881261899078));
        assert!(close(stcs_backlog_bytes(&sstables, &[3]), expected));
    }

    #[test]
    fn consumption_lowers_the_total_inside_the_logarithm() {
        // Four SSTables of 4; a compaction has read 2 of each of the first
        // two and written 3 of its output. T' = 16 - 4 + 3 = 15.
        let sstables = [(4, 2), (4, 2), (4, 0), (4, 0)];
        let log4 = |x: f64| x.ln() / 4f64.ln();
        let by_code =
            2.0 * 2.0 * log4(15.0 / 4.0) + 2.0 * 4.0 * log4(15.0 / 4.0) + 3.0 * log4(15.0 / 3.0);
        assert!(close(by_code, 14.924235715982157));
        assert!(close(stcs_backlog_bytes(&sstables, &[3]), by_code));
        // The header comment's T = sum S_i (+ w) = 19 would give 17.48.
        let by_header =
            2.0 * 2.0 * log4(19.0 / 4.0) + 2.0 * 4.0 * log4(19.0 / 4.0) + 3.0 * log4(19.0 / 3.0);
        assert!(close(by_header, 17.482012599745154));
        let mut tracker = StcsBacklogTracker::new();
        for _ in 0..4 {
            tracker.add_sstable(4);
        }
        assert!(close(
            tracker.backlog_bytes(&[(4, 2), (4, 2)], &[3]),
            by_code
        ));
    }

    #[test]
    fn empty_tables_and_empty_sstables_have_no_backlog() {
        assert_eq!(stcs_backlog_bytes(&[], &[]), 0.0);
        assert_eq!(stcs_backlog_bytes(&[(0, 0), (0, 0)], &[0]), 0.0);
        assert_eq!(StcsBacklogTracker::new().backlog_bytes(&[], &[0]), 0.0);
        // Everything consumed: T' = 0.
        assert_eq!(stcs_backlog_bytes(&[(10, 10), (10, 10)], &[]), 0.0);
        // Empty SSTables do not change anything.
        let with_empty = stcs_backlog_bytes(&[(1, 0), (2, 0), (0, 0)], &[0]);
        assert!(close(
            with_empty,
            stcs_backlog_bytes(&[(1, 0), (2, 0)], &[])
        ));
        // One SSTable half read by a compaction whose output has not been
        // written yet: T' = S/2 < S, the sum is negative, clamped at 0.
        assert_eq!(stcs_backlog_bytes(&[(100, 50)], &[]), 0.0);
        let mut tracker = StcsBacklogTracker::new();
        tracker.add_sstable(100);
        assert_eq!(tracker.backlog_bytes(&[(100, 50)], &[]), 0.0);
    }

    #[test]
    #[should_panic(expected = "does not hold")]
    fn removing_an_sstable_never_added_panics() {
        let mut tracker = StcsBacklogTracker::new();
        tracker.add_sstable(10);
        tracker.remove_sstable(11);
    }

    proptest! {
        #[test]
        fn the_incremental_tracker_agrees_with_the_direct_sum(
            sizes in prop::collection::vec((1u64..1u64 << 40, 0u32..=100, any::<bool>()), 0..40),
            removed in prop::collection::vec((1u64..1u64 << 40, 0u32..=100, any::<bool>()), 0..10),
            writes in prop::collection::vec(0u64..1u64 << 38, 0..4),
        ) {
            let mut tracker = StcsBacklogTracker::new();
            // SSTables that come and go leave only rounding drift behind.
            for &(size, _, _) in &removed {
                tracker.add_sstable(size);
            }
            for &(size, _, _) in &sizes {
                tracker.add_sstable(size);
            }
            for &(size, _, _) in &removed {
                tracker.remove_sstable(size);
            }
            let table: Vec<(u64, u64)> = sizes
                .iter()
                .map(|&(size, percent, compacting)| {
                    (size, if compacting { size / 100 * u64::from(percent) } else { 0 })
                })
                .collect();
            let compacting: Vec<(u64, u64)> = sizes
                .iter()
                .zip(&table)
                .filter(|((_, _, compacting), _)| *compacting)
                .map(|(_, entry)| *entry)
                .collect();
            let direct = stcs_backlog_bytes(&table, &writes);
            let incremental = tracker.backlog_bytes(&compacting, &writes);
            // Both are differences of sums up to ~2^47 x 24; allow for the
            // rounding of those sums.
            let scale = (tracker.total_bytes() as f64 + writes.iter().sum::<u64>() as f64) * 32.0;
            prop_assert!(
                (direct - incremental).abs() <= 1e-12 * scale.max(1.0),
                "direct {direct} incremental {incremental}"
            );
            prop_assert!(direct >= 0.0);
        }
    }
}
