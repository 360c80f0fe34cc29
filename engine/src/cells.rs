//! Data mode: the rows themselves.
//!
//! In data fidelity (ARCHITECTURE.md, "Two data fidelities") memtables and
//! SSTables carry their rows besides the volume summary: per key the newest
//! version written (`RowVersion`: write timestamp and value size; the value
//! itself is a function of the key and timestamp, so the version is its
//! digest). A memtable keeps a `BTreeMap`; flushing freezes it into a
//! [`SortedCells`] run, and compaction merges runs keeping the newest
//! version of every key, as Scylla's `mutation_reader` merge does for
//! single-cell rows: the higher timestamp wins, and on equal timestamps the
//! larger value (here: more value bytes), Cassandra's `Cells.reconcile`.
//!
//! A partition of many rows (a user profile's clustering columns) is one
//! cell too, its version the newest write to it: replicas compare
//! partitions whole, not the rows a read selects, and the rows' sizes are
//! the volume summary's (`ShardConfig::partition_bytes`).
//!
//! The flush logic, the compaction picker, the backlog and the controllers
//! never look at the rows: they see the same sizes in both modes. Only the
//! read path asks the rows which structures hold a key and what they return.

use std::collections::BTreeMap;
use std::sync::Arc;

/// A version of a row as a replica holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RowVersion {
    /// Write timestamp of the newest cell (microseconds, client-assigned).
    pub timestamp: u64,
    /// Bytes of column values.
    pub value_bytes: u32,
}

/// What a replica read returned: the row's newest version, if any.
pub type ReadResult = Option<RowVersion>;

/// The digest of a read result (the replica hashes what it would return).
pub fn digest_of(result: ReadResult) -> u64 {
    match result {
        None => 0x6E6F_6E65, // "none"
        Some(version) => units::mix64(version.timestamp ^ (u64::from(version.value_bytes) << 40)),
    }
}

/// One row of data mode: a key and its newest version in a structure.
pub type Cell = (u64, RowVersion);

/// An immutable, key-sorted run of rows (an SSTable's contents). Cloning is
/// cheap (shared).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SortedCells(Arc<[Cell]>);

/// The newer of two versions of a row (timestamp, then value size).
pub fn reconcile(a: RowVersion, b: RowVersion) -> RowVersion {
    a.max(b)
}

impl SortedCells {
    /// A run of the rows of `map`, in key order.
    pub fn from_map(map: &BTreeMap<u64, RowVersion>) -> SortedCells {
        let run = SortedCells(map.iter().map(|(key, version)| (*key, *version)).collect());
        debug_assert_eq!(run.len(), map.len(), "a run keeps every row of its map");
        run
    }

    /// A run from rows already sorted by key with no key twice.
    pub fn from_sorted(cells: Vec<Cell>) -> SortedCells {
        debug_assert!(cells.windows(2).all(|pair| pair[0].0 < pair[1].0));
        SortedCells(cells.into())
    }

    /// Rows in the run.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if the run holds no row.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rows, in key order.
    pub fn cells(&self) -> &[Cell] {
        &self.0
    }

    /// The version of `key` this run holds, if any.
    pub fn get(&self, key: u64) -> Option<RowVersion> {
        self.0
            .binary_search_by_key(&key, |cell| cell.0)
            .ok()
            .map(|index| self.0[index].1)
    }

    /// Merges runs into one, keeping the newest version of every key.
    pub fn merge(runs: &[&SortedCells]) -> SortedCells {
        let total: usize = runs.iter().map(|run| run.len()).sum();
        let longest = runs.iter().map(|run| run.len()).max().unwrap_or(0);
        let mut merged: Vec<Cell> = Vec::with_capacity(total);
        for run in runs {
            merged.extend_from_slice(run.cells());
        }
        // A stable sort by key keeps each run's rows together; reconciling
        // adjacent equal keys then takes the newest whatever the run order.
        merged.sort_by_key(|cell| cell.0);
        merged.dedup_by(|later, kept| {
            if later.0 == kept.0 {
                kept.1 = reconcile(kept.1, later.1);
                true
            } else {
                false
            }
        });
        debug_assert!(
            merged.windows(2).all(|pair| pair[0].0 < pair[1].0),
            "a merged run is sorted with no key twice"
        );
        debug_assert!(
            (longest..=total).contains(&merged.len()),
            "a merge keeps at least the longest run's keys and adds none"
        );
        SortedCells(merged.into())
    }

    /// Splits the run at key boundaries: part `i` holds the keys below
    /// `bounds[i]` not in an earlier part; the last part holds the rest.
    pub fn split(&self, bounds: &[u64]) -> Vec<SortedCells> {
        debug_assert!(
            bounds.windows(2).all(|pair| pair[0] <= pair[1]),
            "split bounds are in key order"
        );
        let mut parts = Vec::with_capacity(bounds.len() + 1);
        let mut start = 0;
        for &bound in bounds {
            let end = start + self.0[start..].partition_point(|cell| cell.0 < bound);
            parts.push(SortedCells(self.0[start..end].into()));
            start = end;
        }
        parts.push(SortedCells(self.0[start..].into()));
        debug_assert_eq!(
            parts.iter().map(SortedCells::len).sum::<usize>(),
            self.len(),
            "the parts of a split hold every row once"
        );
        parts
    }

    /// Smallest and largest key, if any.
    pub fn key_range(&self) -> Option<(u64, u64)> {
        let range = Some((self.0.first()?.0, self.0.last()?.0));
        debug_assert!(range.is_none_or(|(first, last)| first <= last));
        range
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(timestamp: u64) -> RowVersion {
        RowVersion {
            timestamp,
            value_bytes: 100,
        }
    }

    #[test]
    fn merge_keeps_the_newest_version_of_every_key() {
        let old = SortedCells::from_sorted(vec![(1, version(5)), (3, version(5)), (9, version(1))]);
        let new = SortedCells::from_sorted(vec![(3, version(7)), (4, version(2)), (9, version(0))]);
        for runs in [[&old, &new], [&new, &old]] {
            let merged = SortedCells::merge(&runs);
            assert_eq!(
                merged.cells(),
                &[
                    (1, version(5)),
                    (3, version(7)),
                    (4, version(2)),
                    (9, version(1))
                ]
            );
        }
        // Equal timestamps: the larger value wins.
        let small = SortedCells::from_sorted(vec![(1, version(5))]);
        let large = SortedCells::from_sorted(vec![(
            1,
            RowVersion {
                timestamp: 5,
                value_bytes: 200,
            },
        )]);
        assert_eq!(
            SortedCells::merge(&[&large, &small])
                .get(1)
                .unwrap()
                .value_bytes,
            200
        );
    }

    #[test]
    fn get_split_and_range() {
        let run = SortedCells::from_sorted((0..10).map(|key| (key * 10, version(key))).collect());
        assert_eq!(run.get(30), Some(version(3)));
        assert_eq!(run.get(31), None);
        assert_eq!(run.key_range(), Some((0, 90)));
        let parts = run.split(&[25, 25, 70]);
        let sizes: Vec<usize> = parts.iter().map(SortedCells::len).collect();
        assert_eq!(sizes, vec![3, 0, 4, 3]);
        assert_eq!(parts[3].key_range(), Some((70, 90)));
        assert_eq!(SortedCells::default().key_range(), None);
    }
}
