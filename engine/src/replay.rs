//! What a shard's commitlog segments hold, kept so that a crash can be
//! followed by a replay: the rows a restarted shard finds on its disk and
//! puts back into memtables (Scylla 3.0 `db/commitlog/commitlog_replayer.cc`,
//! `main.cc`'s "replaying commit log").
//!
//! A crash keeps what was on the device: the commitlog's entries up to its
//! durable position (every buffer write that completed; a write in flight
//! when the node died counts as torn, and the replayer's checksums drop a
//! torn chunk) in the segments still live. Entries of released segments
//! are in SSTables already. Entries still in the write buffer are lost: in
//! periodic mode an acknowledged write can be lost that way, which is the
//! mode's promise (up to a sync period of writes); in batch mode a write is
//! acknowledged only once durable, so none is.
//!
//! Data mode keeps every logged row (key and version), so a replay puts
//! back exactly the rows that were durable. Volume mode keeps a summary per
//! segment (entries, bytes, key range); the current segment's durable share
//! is taken in proportion to its bytes.
//!
//! Left out: Scylla's replayer skips the entries below each SSTable's
//! recorded replay position; here every durable entry of a live segment is
//! applied again (a flushed row applied twice is the same row; the cost is
//! the apply CPU of at most the segments a memtable still pins).

use std::collections::VecDeque;

use crate::cells::RowVersion;
use crate::planted::{Planted, PlantedBug};

/// The rows of one live segment, in volume mode's summary form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    segment: u64,
    /// Log positions its entries span: `start..end`.
    start_position: u64,
    end_position: u64,
    entries: u64,
    /// Bytes of the rows (key and values) the entries carry.
    row_bytes: u64,
    first_key: u64,
    last_key: u64,
}

/// A row as the log keeps it in data mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LoggedRow {
    end_position: u64,
    segment: u64,
    key: u64,
    version: RowVersion,
}

/// What a shard's live commitlog segments hold.
#[derive(Clone, Debug, Default)]
pub struct ReplayLog {
    pieces: VecDeque<Piece>,
    /// Data mode: every row of the live segments, in log order.
    rows: Option<VecDeque<LoggedRow>>,
    /// Planted bugs (tests of the explorer only: [`crate::planted`]).
    planted: Planted,
}

/// What a restarted shard replays: read from its commitlog segments and
/// applied to memtables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replay {
    /// Bytes of the live segments' durable entries, read back.
    pub bytes: u64,
    /// Entries among them.
    pub entries: u64,
    /// Bytes of the rows (keys and values) they carry.
    pub row_bytes: u64,
    /// Their key range (`first > last` when empty).
    pub first_key: u64,
    /// See `first_key`.
    pub last_key: u64,
    /// Data mode: the rows, in log order.
    pub rows: Vec<(u64, RowVersion)>,
}

impl ReplayLog {
    /// An empty log, keeping rows in data mode.
    pub fn new(data_mode: bool) -> ReplayLog {
        ReplayLog {
            pieces: VecDeque::new(),
            rows: data_mode.then(VecDeque::new),
            planted: Planted::NONE,
        }
    }

    /// What must hold: pieces in log order, one per segment, segments
    /// increasing, each spanning some positions, entries and an ordered key
    /// range; data mode's rows in log order at their ends. O(live
    /// segments).
    pub fn check_invariants(&self) {
        for piece in &self.pieces {
            assert!(piece.start_position < piece.end_position && piece.entries > 0);
            assert!(
                piece.first_key <= piece.last_key,
                "a piece's keys are ordered"
            );
        }
        for pair in self.pieces.iter().zip(self.pieces.iter().skip(1)) {
            assert!(
                pair.0.segment < pair.1.segment,
                "one piece per segment, in order"
            );
            assert!(
                pair.0.end_position <= pair.1.start_position,
                "pieces in log order"
            );
        }
        if let Some(rows) = &self.rows {
            if let (Some(first), Some(last)) = (rows.front(), rows.back()) {
                assert!(first.end_position <= last.end_position && first.segment <= last.segment);
            }
        }
    }

    /// The same log with `planted` bugs (none outside tests).
    pub fn planted(mut self, planted: Planted) -> ReplayLog {
        self.planted = planted;
        self
    }

    /// The live segment a planted bug makes the replay skip, if any.
    fn skipped_segment(&self) -> Option<u64> {
        let (first, last) = (self.pieces.front()?.segment, self.pieces.back()?.segment);
        debug_assert!(first <= last, "pieces in segment order");
        if self.planted.has(PlantedBug::ReplaySkipsLastSegment) {
            Some(last)
        } else if self
            .planted
            .has(PlantedBug::ReplaySkipsSegmentWhenSeveralLive)
            && first < last
        {
            Some(first)
        } else {
            None
        }
    }

    /// An entry ending at log position `end_position` in `segment` was
    /// appended: `entry_bytes` in the log for a row of `row_bytes` of `key`
    /// at `version`.
    pub fn logged(
        &mut self,
        end_position: u64,
        segment: u64,
        entry_bytes: u64,
        key: u64,
        row_bytes: u64,
        version: RowVersion,
    ) {
        debug_assert!(
            entry_bytes > 0 && entry_bytes <= end_position,
            "an entry ends past its own bytes"
        );
        debug_assert!(
            self.pieces
                .back()
                .is_none_or(|piece| piece.segment <= segment),
            "entries go to the current segment or a later one"
        );
        match self.pieces.back_mut() {
            Some(piece) if piece.segment == segment => {
                debug_assert!(end_position > piece.end_position);
                piece.end_position = end_position;
                piece.entries += 1;
                piece.row_bytes += row_bytes;
                piece.first_key = piece.first_key.min(key);
                piece.last_key = piece.last_key.max(key);
            }
            _ => self.pieces.push_back(Piece {
                segment,
                start_position: end_position - entry_bytes,
                end_position,
                entries: 1,
                row_bytes,
                first_key: key,
                last_key: key,
            }),
        }
        if let Some(rows) = self.rows.as_mut() {
            rows.push_back(LoggedRow {
                end_position,
                segment,
                key,
                version,
            });
        }
    }

    /// Volume mode's steady-state start: `entries` entries of
    /// `entry_bytes` each, for rows of `row_bytes` over `keys`, logged
    /// before the run from position 0 in segments of `segment_bytes`
    /// (as [`crate::commitlog::Commitlog::preload`] places them).
    pub fn preloaded(
        &mut self,
        entries: u64,
        entry_bytes: u64,
        row_bytes: u64,
        (first_key, last_key): (u64, u64),
        segment_bytes: u64,
    ) {
        assert!(self.pieces.is_empty(), "preloading a log in use");
        let total = entries * entry_bytes;
        let mut start = 0;
        while start < total {
            let end = ((start / segment_bytes + 1) * segment_bytes).min(total);
            let share = (end - start) / entry_bytes.max(1);
            self.pieces.push_back(Piece {
                segment: start / segment_bytes,
                start_position: start,
                end_position: end,
                entries: share,
                row_bytes: share * row_bytes,
                first_key,
                last_key,
            });
            start = end;
        }
        debug_assert_eq!(
            self.pieces
                .iter()
                .map(|piece| piece.end_position - piece.start_position)
                .sum::<u64>(),
            total,
            "the preloaded pieces span every entry"
        );
    }

    /// Segments before `segment` were released: their rows are in SSTables.
    pub fn release_before(&mut self, segment: u64) {
        while self
            .pieces
            .front()
            .is_some_and(|piece| piece.segment < segment)
        {
            self.pieces.pop_front();
        }
        if let Some(rows) = self.rows.as_mut() {
            while rows.front().is_some_and(|row| row.segment < segment) {
                rows.pop_front();
            }
        }
        debug_assert!(
            self.pieces
                .front()
                .is_none_or(|piece| piece.segment >= segment),
            "no released segment is kept"
        );
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Data mode: the rows a crash whose device held the log up to
    /// `durable_position` loses (appended, never written out), in log
    /// order. Empty in volume mode.
    pub fn lost(&self, durable_position: u64) -> Vec<(u64, RowVersion)> {
        let lost: Vec<(u64, RowVersion)> = self.rows.as_ref().map_or_else(Vec::new, |rows| {
            rows.iter()
                .filter(|row| row.end_position > durable_position)
                .map(|row| (row.key, row.version))
                .collect()
        });
        debug_assert!(lost.len() <= self.rows.as_ref().map_or(0, VecDeque::len));
        lost
    }

    /// What survives a crash whose device held the log up to
    /// `durable_position`.
    pub fn durable(&self, durable_position: u64) -> Replay {
        let mut replay = Replay {
            first_key: u64::MAX,
            last_key: 0,
            ..Replay::default()
        };
        let skipped = self.skipped_segment();
        for piece in &self.pieces {
            if piece.start_position >= durable_position {
                break;
            }
            if Some(piece.segment) == skipped {
                continue;
            }
            let span = piece.end_position - piece.start_position;
            let kept = durable_position.min(piece.end_position) - piece.start_position;
            // Whole pieces exactly; the one the durable position cuts, in
            // proportion to its bytes (volume mode's estimate).
            let share = |total: u64| -> u64 {
                if kept == span {
                    total
                } else {
                    (u128::from(total) * u128::from(kept) / u128::from(span)) as u64
                }
            };
            replay.bytes += kept;
            replay.entries += share(piece.entries);
            replay.row_bytes += share(piece.row_bytes);
            replay.first_key = replay.first_key.min(piece.first_key);
            replay.last_key = replay.last_key.max(piece.last_key);
        }
        if let Some(rows) = &self.rows {
            replay.rows = rows
                .iter()
                .take_while(|row| row.end_position <= durable_position)
                .filter(|row| Some(row.segment) != skipped)
                .map(|row| (row.key, row.version))
                .collect();
            // Data mode counts exactly.
            replay.entries = replay.rows.len() as u64;
        }
        debug_assert!(
            replay.bytes <= durable_position,
            "a replay reads only what was durable"
        );
        replay
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
    fn a_crash_keeps_the_durable_rows_of_live_segments_only() {
        let mut log = ReplayLog::new(true);
        // Segment 0: positions 0..300; segment 1: 300..500.
        for (index, segment) in [0, 0, 0, 1, 1].into_iter().enumerate() {
            let end = (index as u64 + 1) * 100;
            log.logged(end, segment, 100, index as u64, 60, version(index as u64));
        }
        log.check_invariants();
        let all = log.durable(500);
        assert_eq!((all.bytes, all.entries, all.row_bytes), (500, 5, 300));
        assert_eq!(all.rows.len(), 5);
        // The buffer holding the last two never reached the disk.
        let torn = log.durable(300);
        assert_eq!((torn.bytes, torn.entries), (300, 3));
        assert_eq!(
            torn.rows.iter().map(|(key, _)| *key).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        // Segment 0 released: only segment 1's rows remain to replay.
        log.release_before(1);
        let after = log.durable(500);
        assert_eq!((after.bytes, after.entries), (200, 2));
        assert_eq!((after.first_key, after.last_key), (3, 4));
    }

    #[test]
    fn volume_mode_takes_a_cut_segment_in_proportion() {
        let mut log = ReplayLog::new(false);
        for index in 0..10u64 {
            log.logged((index + 1) * 100, 0, 100, index, 80, version(index));
        }
        let half = log.durable(500);
        assert_eq!((half.bytes, half.entries, half.row_bytes), (500, 5, 400));
        assert!(half.rows.is_empty(), "volume mode keeps no rows");
        let none = log.durable(0);
        assert_eq!((none.bytes, none.entries), (0, 0));
    }
}
