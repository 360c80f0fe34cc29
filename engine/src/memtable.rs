//! Memtables: the in-memory write buffer of a table, and what it costs in
//! dirty memory.
//!
//! A memtable here carries the volume summary the twin needs at scale: memory
//! used, rows, the bytes it will take as an SSTable, its key range, and the
//! first commitlog segment it has data in (so segments can be released once
//! it is flushed). In data mode it also keeps its rows (`cells`); the flush
//! logic and dirty-memory limits do not look at them.
//!
//! Dirty memory (scylla-mechanisms.md section 1.3): *real* dirty is all
//! memtable memory not yet freed; *virtual* dirty is real dirty minus what an
//! in-progress flush has already written out, so it falls during a flush even
//! though memory is freed only when the flush completes.

use std::collections::BTreeMap;

use crate::cells::RowVersion;

/// One memtable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Memtable {
    /// Unique per node, increasing.
    pub id: u64,
    /// Memory used (keys, values and per-row overhead).
    pub memory_bytes: u64,
    /// Bytes the rows will take in an SSTable's Data component.
    pub sstable_bytes: u64,
    /// Rows inserted.
    pub rows: u64,
    /// Smallest key inserted (`u64::MAX` when empty).
    pub first_key: u64,
    /// Largest key inserted (0 when empty).
    pub last_key: u64,
    /// First commitlog segment holding this memtable's data.
    pub first_segment: Option<u64>,
    /// Data mode: the newest version of every key inserted (`None` in
    /// volume mode).
    pub cells: Option<BTreeMap<u64, RowVersion>>,
    /// The newest write timestamp stored (microseconds; 0 when none):
    /// its SSTable's maximum timestamp, which places it in a time window
    /// (`crate::compaction::twcs`).
    pub max_timestamp_us: u64,
}

impl Memtable {
    /// What must hold between the counts, the key range, the first segment
    /// and the cells: an empty memtable uses no memory and names no segment;
    /// a key range, once set, is ordered; data mode keeps at most one cell per
    /// row inserted, all inside the key range. O(log cells).
    pub fn check_invariants(&self) {
        if self.rows == 0 {
            assert_eq!(self.memory_bytes, 0, "an empty memtable uses no memory");
            assert_eq!(self.sstable_bytes, 0);
            assert!(
                self.first_segment.is_none(),
                "an empty memtable names no segment"
            );
        }
        assert!(
            self.first_key <= self.last_key || (self.first_key == u64::MAX && self.last_key == 0),
            "a memtable's key range is ordered or empty"
        );
        if let Some(cells) = &self.cells {
            assert!(
                cells.len() as u64 <= self.rows,
                "no more cells than rows inserted"
            );
            if let (Some((&first, _)), Some((&last, _))) =
                (cells.first_key_value(), cells.last_key_value())
            {
                assert!(first >= self.first_key && last <= self.last_key);
            }
        }
    }

    /// An empty memtable.
    pub fn new(id: u64) -> Memtable {
        Memtable {
            id,
            memory_bytes: 0,
            sstable_bytes: 0,
            rows: 0,
            first_key: u64::MAX,
            last_key: 0,
            first_segment: None,
            cells: None,
            max_timestamp_us: 0,
        }
    }

    /// An empty memtable that keeps its rows (data mode).
    pub fn with_cells(id: u64) -> Memtable {
        Memtable {
            cells: Some(BTreeMap::new()),
            ..Memtable::new(id)
        }
    }

    /// Records `version` of `key`: its timestamp in both modes; in data
    /// mode the row, keeping the newer of it and what the memtable already
    /// holds.
    pub fn store(&mut self, key: u64, version: RowVersion) {
        self.max_timestamp_us = self.max_timestamp_us.max(version.timestamp);
        if let Some(cells) = self.cells.as_mut() {
            cells
                .entry(key)
                .and_modify(|held| *held = crate::cells::reconcile(*held, version))
                .or_insert(version);
            debug_assert!(
                cells.get(&key).is_some_and(|held| *held >= version),
                "a memtable keeps the newer version"
            );
        }
    }

    /// Volume mode: `rows` written before the run started over keys
    /// `first_key..=last_key`, their commitlog entries from `segment` on,
    /// as if inserted one by one.
    pub fn preload(
        &mut self,
        rows: u64,
        row_memory_bytes: u64,
        row_sstable_bytes: u64,
        (first_key, last_key): (u64, u64),
        segment: u64,
    ) {
        assert!(
            self.is_empty() && self.cells.is_none(),
            "preloading a memtable in use"
        );
        assert!(first_key <= last_key, "a preload's key range is ordered");
        if rows == 0 {
            return;
        }
        assert!(
            rows <= last_key - first_key + 1,
            "a preload holds each key of its range at most once"
        );
        self.memory_bytes = rows * row_memory_bytes;
        self.sstable_bytes = rows * row_sstable_bytes;
        self.rows = rows;
        self.first_key = first_key;
        self.last_key = last_key;
        self.first_segment = Some(segment);
    }

    /// True if nothing was inserted.
    pub fn is_empty(&self) -> bool {
        debug_assert!(
            self.rows > 0 || self.memory_bytes == 0,
            "an empty memtable uses no memory"
        );
        self.rows == 0
    }

    /// Inserts one row of `key`, costing `memory_bytes` of memory and
    /// `sstable_bytes` once flushed; its commitlog entry is in `segment`.
    pub fn insert(&mut self, key: u64, memory_bytes: u64, sstable_bytes: u64, segment: u64) {
        debug_assert!(memory_bytes > 0, "a row takes memory");
        debug_assert!(
            self.cells
                .as_ref()
                .is_none_or(|cells| cells.contains_key(&key)),
            "data mode stores a row's version before inserting it"
        );
        debug_assert!(
            self.first_segment.is_none_or(|first| first <= segment),
            "commitlog segments only grow"
        );
        self.memory_bytes += memory_bytes;
        self.sstable_bytes += sstable_bytes;
        self.rows += 1;
        self.first_key = self.first_key.min(key);
        self.last_key = self.last_key.max(key);
        if self.first_segment.is_none() {
            self.first_segment = Some(segment);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_accumulate_sizes_range_and_first_segment() {
        let mut memtable = Memtable::new(1);
        assert!(memtable.is_empty());
        memtable.insert(50, 200, 150, 3);
        memtable.insert(10, 200, 150, 4);
        assert_eq!(memtable.memory_bytes, 400);
        assert_eq!(memtable.sstable_bytes, 300);
        assert_eq!((memtable.first_key, memtable.last_key), (10, 50));
        assert_eq!(memtable.first_segment, Some(3));
        memtable.check_invariants();
    }

    #[test]
    #[should_panic(expected = "an empty memtable names no segment")]
    fn an_empty_memtable_naming_a_segment_is_caught() {
        let mut memtable = Memtable::new(1);
        memtable.first_segment = Some(2);
        memtable.check_invariants();
    }

    #[test]
    #[should_panic(expected = "no more cells than rows inserted")]
    fn cells_without_rows_are_caught() {
        let mut memtable = Memtable::with_cells(1);
        memtable.store(
            5,
            RowVersion {
                timestamp: 1,
                value_bytes: 10,
            },
        );
        memtable.insert(5, 100, 80, 0);
        memtable.store(
            6,
            RowVersion {
                timestamp: 1,
                value_bytes: 10,
            },
        );
        memtable.check_invariants();
    }
}
