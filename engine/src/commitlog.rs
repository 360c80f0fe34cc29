//! The commitlog, in periodic sync mode (Scylla's default) or batch mode.
//!
//! What it models (scylla-mechanisms.md section 3.2, `db/commitlog/commitlog.cc`
//! @3.0): each write appends an entry to an in-memory buffer of 128 KiB; a
//! full buffer is written to the current segment with one I/O in the
//! commitlog class.
//! - *Periodic* (`commitlog_sync: periodic`): the sync timer (10 s) writes
//!   out a partly filled buffer. Writes are acknowledged once their entry is
//!   in the buffer, which is what periodic mode promises (up to one sync
//!   period of data can be lost in a crash).
//! - *Batch* (`commitlog_sync: batch`): a write is acknowledged only once
//!   the buffer write holding its entry, and every one before it, is on
//!   disk ([`Commitlog::durable_position`]). Each append writes the buffer
//!   out at once if a write slot is free; entries arriving while every slot
//!   is busy share the next write (group commit), which goes out when a
//!   slot frees.
//!
//! At most `max_active_writes` buffer writes are in flight; when that many
//! are and a full buffer is already waiting, appends must wait: this is the
//! commitlog's back-pressure on the write path.
//!
//! Segments of 32 MiB are numbered; a memtable remembers the first segment it
//! has data in, and once every memtable with data in a segment has flushed
//! the segment is released. A released segment is recycled
//! (`commitlog_reuse_segments`, on by default in Scylla 2.x): its file is
//! kept and the next new segment reuses it instead of creating and
//! pre-allocating a file, as long as the files on disk stay within the
//! total space; otherwise it is deleted. When the live segments exceed the
//! commitlog's total space, the node flushes memtables to free them.
//!
//! Left out for now: fsync cost beyond the write itself (NVMe drives with
//! power-loss protection acknowledge flushes from their buffer), Cassandra's
//! `commitlog_sync_batch_window_in_ms` wait (2 ms, deprecated in 4.0), segment
//! pre-allocation and rename I/O (metadata operations, small next to the
//! buffer writes), replay after a crash (the fault issue).

use std::collections::VecDeque;

/// Bytes of per-entry framing (size, checksum) around a mutation.
pub const ENTRY_OVERHEAD_BYTES: u64 = 16;

const _: () = assert!(ENTRY_OVERHEAD_BYTES > 0, "every entry is framed");

/// When writes are acknowledged (`commitlog_sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// Once in the buffer; the buffer is written at least every sync period.
    Periodic,
    /// Once the buffer holding the entry is written.
    Batch,
}

/// A buffer write to submit: its bytes and the log position it ends at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferWrite {
    /// Bytes written.
    pub bytes: u64,
    /// Log position (bytes appended since start) just past its last entry.
    pub end_position: u64,
}

/// The commitlog of one shard.
#[derive(Clone, Debug)]
pub struct Commitlog {
    mode: SyncMode,
    buffer_capacity_bytes: u64,
    segment_bytes: u64,
    max_active_writes: u32,
    total_space_bytes: u64,
    /// Bytes appended to the buffer not yet handed out as a write.
    buffer_fill_bytes: u64,
    /// Full buffers waiting for a write slot, in order.
    sealed_buffers: VecDeque<BufferWrite>,
    writes_in_flight: u32,
    /// End positions of the writes in flight, in log order, each with
    /// whether it has completed.
    in_flight_ends: VecDeque<(u64, bool)>,
    /// Every entry before this position is on disk.
    durable_position: u64,
    current_segment: u64,
    current_segment_fill_bytes: u64,
    /// Segments `oldest_live_segment..=current_segment` are on disk.
    oldest_live_segment: u64,
    bytes_appended_total: u64,
    bytes_written_total: u64,
    /// Released segment files kept for reuse.
    recycled_files: u64,
    /// Segments opened on a new file / on a recycled one, since start.
    segments_created: u64,
    segments_reused: u64,
}

/// The outcome of an append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Append {
    /// The entry is in the buffer of this segment.
    Accepted {
        /// Segment the entry went to.
        segment: u64,
        /// Log position just past the entry: in batch mode the entry is
        /// durable once [`Commitlog::durable_position`] reaches it.
        end_position: u64,
    },
    /// Too many buffers are in flight or waiting; retry after a write completes.
    MustWait,
}

impl Commitlog {
    /// An empty commitlog.
    pub fn new(
        mode: SyncMode,
        buffer_capacity_bytes: u64,
        segment_bytes: u64,
        max_active_writes: u32,
        total_space_bytes: u64,
    ) -> Commitlog {
        assert!(buffer_capacity_bytes > 0 && buffer_capacity_bytes <= segment_bytes);
        assert!(max_active_writes > 0);
        let log = Commitlog {
            mode,
            buffer_capacity_bytes,
            segment_bytes,
            max_active_writes,
            total_space_bytes,
            buffer_fill_bytes: 0,
            sealed_buffers: VecDeque::new(),
            writes_in_flight: 0,
            in_flight_ends: VecDeque::new(),
            durable_position: 0,
            current_segment: 0,
            current_segment_fill_bytes: 0,
            oldest_live_segment: 0,
            bytes_appended_total: 0,
            bytes_written_total: 0,
            recycled_files: 0,
            segments_created: 1,
            segments_reused: 0,
        };
        log.check_invariants();
        log
    }

    /// Appends an entry of `entry_bytes` (mutation plus framing).
    pub fn append(&mut self, entry_bytes: u64) -> Append {
        debug_assert!(entry_bytes > 0);
        if self.buffer_fill_bytes + entry_bytes > self.buffer_capacity_bytes
            && self.buffer_fill_bytes > 0
        {
            // The buffer is full: seal it, unless that would queue a second
            // waiting buffer (memory for buffers is bounded).
            if !self.sealed_buffers.is_empty() {
                return Append::MustWait;
            }
            self.seal_buffer();
        }
        if self.current_segment_fill_bytes + entry_bytes > self.segment_bytes {
            self.open_segment();
        }
        self.current_segment_fill_bytes += entry_bytes;
        self.buffer_fill_bytes += entry_bytes;
        self.bytes_appended_total += entry_bytes;
        debug_assert!(
            self.buffer_fill_bytes <= self.buffer_capacity_bytes.max(entry_bytes),
            "an entry fills the buffer, or is alone in it"
        );
        if self.mode == SyncMode::Batch && self.writes_in_flight < self.max_active_writes {
            // Batch mode syncs every entry: out now if a slot is free.
            self.sync();
        }
        Append::Accepted {
            segment: self.current_segment,
            end_position: self.bytes_appended_total,
        }
    }

    /// Entries of `bytes` written before the run started (volume mode's
    /// steady-state start): they fill segments as appends would and are on
    /// disk already. Only on a commitlog nothing was appended to.
    pub fn preload(&mut self, bytes: u64) {
        assert_eq!(
            self.bytes_appended_total, 0,
            "preloading a commitlog in use"
        );
        let full_segments = bytes / self.segment_bytes;
        self.current_segment += full_segments;
        self.segments_created += full_segments;
        self.current_segment_fill_bytes = bytes % self.segment_bytes;
        self.bytes_appended_total = bytes;
        self.bytes_written_total = bytes;
        self.durable_position = bytes;
        debug_assert!(self.current_segment_fill_bytes < self.segment_bytes);
        self.check_invariants();
    }

    /// Opens the next segment, on a recycled file if one is kept.
    fn open_segment(&mut self) {
        self.current_segment += 1;
        self.current_segment_fill_bytes = 0;
        if self.recycled_files > 0 {
            self.recycled_files -= 1;
            self.segments_reused += 1;
        } else {
            self.segments_created += 1;
        }
        debug_assert_eq!(
            self.segments_created + self.segments_reused,
            self.current_segment + 1,
            "every segment was opened on a new or a recycled file"
        );
    }

    fn seal_buffer(&mut self) {
        if self.buffer_fill_bytes > 0 {
            debug_assert!(
                self.sealed_buffers
                    .back()
                    .is_none_or(|last| last.end_position < self.bytes_appended_total),
                "sealed buffers end in log order"
            );
            self.sealed_buffers.push_back(BufferWrite {
                bytes: self.buffer_fill_bytes,
                end_position: self.bytes_appended_total,
            });
            self.buffer_fill_bytes = 0;
        }
    }

    /// The sync mode.
    pub fn mode(&self) -> SyncMode {
        self.mode
    }

    /// Every entry ending at or before this position is on disk.
    pub fn durable_position(&self) -> u64 {
        self.durable_position
    }

    /// Periodic sync: seal the partly filled buffer so it is written.
    pub fn sync(&mut self) {
        if self.sealed_buffers.is_empty() {
            self.seal_buffer();
        }
    }

    /// The next buffer write to submit, if a sealed buffer and a write slot
    /// are both available. Call until it returns `None`.
    pub fn next_write(&mut self) -> Option<BufferWrite> {
        if self.writes_in_flight >= self.max_active_writes {
            return None;
        }
        let write = self.sealed_buffers.pop_front()?;
        debug_assert!(
            self.in_flight_ends
                .back()
                .is_none_or(|&(end, _)| end < write.end_position),
            "writes go out in log order"
        );
        self.writes_in_flight += 1;
        self.in_flight_ends.push_back((write.end_position, false));
        Some(write)
    }

    /// A buffer write completed (writes may complete out of order; the
    /// durable position advances over the completed prefix).
    pub fn write_done(&mut self, write: BufferWrite) {
        let slot = self
            .in_flight_ends
            .iter_mut()
            .find(|(end, done)| *end == write.end_position && !done)
            .expect("commitlog write completed that was never submitted");
        slot.1 = true;
        self.writes_in_flight -= 1;
        self.bytes_written_total += write.bytes;
        let durable_before = self.durable_position;
        while let Some(&(end, true)) = self.in_flight_ends.front() {
            self.durable_position = end;
            self.in_flight_ends.pop_front();
        }
        debug_assert!(
            self.durable_position >= durable_before,
            "durability never goes back"
        );
        if self.mode == SyncMode::Batch {
            // The entries that gathered while every slot was busy go next.
            self.sync();
        }
    }

    /// Releases every segment before `segment` (all of their data is in
    /// SSTables now).
    pub fn release_segments_before(&mut self, segment: u64) {
        let segment = segment.min(self.current_segment);
        if segment > self.oldest_live_segment {
            let released = segment - self.oldest_live_segment;
            self.oldest_live_segment = segment;
            // Keep the released files for reuse while everything on disk
            // fits the total space; delete the rest.
            let room = (self.total_space_bytes / self.segment_bytes)
                .saturating_sub(self.live_segments() + self.recycled_files);
            self.recycled_files += released.min(room);
            debug_assert!(
                self.recycled_files == 0
                    || self.disk_bytes()
                        <= self
                            .total_space_bytes
                            .max(self.segment_bytes * self.live_segments()),
                "recycled files keep the disk within the total space"
            );
        }
        debug_assert!(self.oldest_live_segment <= self.current_segment);
    }

    /// Released segment files kept for reuse.
    pub fn recycled_files(&self) -> u64 {
        self.recycled_files
    }

    /// Segments opened since start: (on new files, on recycled files).
    pub fn segments_opened(&self) -> (u64, u64) {
        debug_assert!(
            self.segments_created >= 1,
            "the first segment is a new file"
        );
        (self.segments_created, self.segments_reused)
    }

    /// The segment new entries go to.
    pub fn current_segment(&self) -> u64 {
        self.current_segment
    }

    /// Segments on disk (including the one being filled).
    pub fn live_segments(&self) -> u64 {
        debug_assert!(self.oldest_live_segment <= self.current_segment);
        self.current_segment - self.oldest_live_segment + 1
    }

    /// Bytes of segment files on disk, live and kept for reuse.
    pub fn disk_bytes(&self) -> u64 {
        let bytes = (self.live_segments() + self.recycled_files) * self.segment_bytes;
        debug_assert!(
            bytes >= self.segment_bytes,
            "the segment being filled is on disk"
        );
        bytes
    }

    /// True when live segments exceed the total space and memtables should
    /// flush so old segments can go (files kept for reuse do not count:
    /// they are released, and the next segment takes one).
    pub fn over_space_limit(&self) -> bool {
        self.live_segments() * self.segment_bytes > self.total_space_bytes
    }

    /// Buffer writes in flight.
    pub fn writes_in_flight(&self) -> u32 {
        debug_assert!(self.writes_in_flight <= self.max_active_writes);
        self.writes_in_flight
    }

    /// Total entry bytes appended.
    pub fn bytes_appended_total(&self) -> u64 {
        self.bytes_appended_total
    }

    /// Total bytes written to disk.
    pub fn bytes_written_total(&self) -> u64 {
        debug_assert!(
            self.bytes_written_total <= self.bytes_appended_total,
            "no more written than appended"
        );
        self.bytes_written_total
    }

    /// Asserts the commitlog's invariants.
    pub fn check_invariants(&self) {
        assert!(self.writes_in_flight <= self.max_active_writes);
        assert!(
            self.sealed_buffers.len() <= 1,
            "at most one full buffer waits for a write slot"
        );
        assert!(self.buffer_fill_bytes <= self.buffer_capacity_bytes);
        assert!(self.oldest_live_segment <= self.current_segment);
        let unwritten: u64 = self
            .sealed_buffers
            .iter()
            .map(|write| write.bytes)
            .sum::<u64>()
            + self.buffer_fill_bytes;
        // Completed writes stay listed until every write before them is
        // done (the durable position moves over a completed prefix only).
        assert_eq!(
            self.in_flight_ends.iter().filter(|(_, done)| !done).count(),
            self.writes_in_flight as usize
        );
        assert!(self.durable_position <= self.bytes_appended_total);
        assert!(self.bytes_written_total + unwritten <= self.bytes_appended_total);
        assert!(
            self.current_segment_fill_bytes <= self.segment_bytes,
            "a segment holds its size"
        );
        assert_eq!(
            self.segments_created + self.segments_reused,
            self.current_segment + 1,
            "every segment was opened on a new or a recycled file"
        );
        assert!(
            self.in_flight_ends
                .front()
                .is_none_or(|&(end, _)| self.durable_position < end),
            "the first write in flight ends past the durable position"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preloaded_entries_fill_segments_and_are_durable() {
        const MIB: u64 = 1024 * 1024;
        let mut log = Commitlog::new(SyncMode::Periodic, 128 * 1024, 32 * MIB, 4, 1024 * MIB);
        log.preload(70 * MIB);
        assert_eq!(log.current_segment(), 2);
        assert_eq!(log.live_segments(), 3);
        assert_eq!(log.durable_position(), 70 * MIB);
        assert_eq!(log.segments_opened(), (3, 0));
        assert!(log.next_write().is_none(), "nothing to write out");
        // Appends continue in the partly filled segment.
        let Append::Accepted {
            segment,
            end_position,
        } = log.append(100)
        else {
            panic!("an empty buffer accepts");
        };
        assert_eq!((segment, end_position), (2, 70 * MIB + 100));
        log.release_segments_before(2);
        assert_eq!(log.live_segments(), 1);
    }

    fn accepted(append: Append) -> u64 {
        match append {
            Append::Accepted { segment, .. } => segment,
            Append::MustWait => panic!("append had to wait"),
        }
    }

    #[test]
    fn full_buffers_become_writes_of_the_buffer_size() {
        let mut log = Commitlog::new(SyncMode::Periodic, 100, 1000, 2, 10_000);
        for _ in 0..10 {
            accepted(log.append(10));
        }
        assert_eq!(
            log.next_write(),
            None,
            "the buffer is full but not yet sealed"
        );
        accepted(log.append(10));
        assert_eq!(log.next_write().map(|w| w.bytes), Some(100));
        assert_eq!(log.next_write(), None);
        log.write_done(BufferWrite {
            bytes: 100,
            end_position: 100,
        });
        assert_eq!(log.bytes_written_total(), 100);
        log.check_invariants();
    }

    #[test]
    fn appends_wait_when_every_write_slot_and_the_spare_buffer_are_taken() {
        let mut log = Commitlog::new(SyncMode::Periodic, 100, 10_000, 1, 100_000);
        for _ in 0..11 {
            accepted(log.append(10));
        }
        let first = log.next_write();
        assert_eq!(
            first.map(|w| w.bytes),
            Some(100),
            "the first buffer goes in flight"
        );
        for _ in 0..10 {
            accepted(log.append(10));
        }
        assert_eq!(
            log.next_write(),
            None,
            "the only slot is busy, the second buffer waits"
        );
        for _ in 0..9 {
            accepted(log.append(10));
        }
        assert_eq!(
            log.append(10),
            Append::MustWait,
            "third buffer full, spare taken"
        );
        log.check_invariants();
        log.write_done(first.unwrap());
        assert_eq!(log.next_write().map(|w| w.bytes), Some(100));
        accepted(log.append(10));
        log.check_invariants();
    }

    #[test]
    fn sync_writes_a_partial_buffer() {
        let mut log = Commitlog::new(SyncMode::Periodic, 100, 1000, 2, 10_000);
        accepted(log.append(30));
        log.sync();
        assert_eq!(log.next_write().map(|w| w.bytes), Some(30));
    }

    #[test]
    fn segments_roll_over_and_are_released_after_flush() {
        let mut log = Commitlog::new(SyncMode::Periodic, 100, 100, 4, 250);
        let mut last = 0;
        for _ in 0..30 {
            last = accepted(log.append(10));
            while let Some(write) = log.next_write() {
                log.write_done(write);
            }
        }
        assert_eq!(last, 2);
        assert_eq!(log.live_segments(), 3);
        assert!(log.over_space_limit());
        log.release_segments_before(2);
        assert_eq!(log.live_segments(), 1);
        assert!(!log.over_space_limit());
        // Space for two files: one live, one released file kept for reuse,
        // the other deleted.
        assert_eq!(log.recycled_files(), 1);
        assert_eq!(log.disk_bytes(), 200);
    }

    #[test]
    fn new_segments_reuse_released_files() {
        let mut log = Commitlog::new(SyncMode::Periodic, 100, 100, 4, 1_000);
        let fill = |log: &mut Commitlog, entries: u32| {
            let mut last = 0;
            for _ in 0..entries {
                last = accepted(log.append(10));
                while let Some(write) = log.next_write() {
                    log.write_done(write);
                }
            }
            last
        };
        // Segments 0..=3 on new files; release 0..=2.
        assert_eq!(fill(&mut log, 40), 3);
        assert_eq!(log.segments_opened(), (4, 0));
        log.release_segments_before(3);
        assert_eq!(log.recycled_files(), 3);
        // The next three segments reuse them, the fourth needs a new file.
        assert_eq!(fill(&mut log, 40), 7);
        assert_eq!(log.segments_opened(), (5, 3));
        assert_eq!(log.recycled_files(), 0);
        assert_eq!(log.live_segments(), 5);
        log.check_invariants();
    }

    #[test]
    fn batch_mode_acknowledges_an_entry_once_its_write_and_all_before_are_done() {
        let mut log = Commitlog::new(SyncMode::Batch, 100, 10_000, 2, 100_000);
        let end = |append| match append {
            Append::Accepted { end_position, .. } => end_position,
            Append::MustWait => panic!("append had to wait"),
        };
        // A free slot: the entry goes out alone at once.
        assert_eq!(end(log.append(10)), 10);
        let first = log.next_write().unwrap();
        assert_eq!((first.bytes, first.end_position), (10, 10));
        assert_eq!(end(log.append(10)), 20);
        let second = log.next_write().unwrap();
        assert_eq!(second.end_position, 20);
        // Both slots busy: the next entries gather for one write.
        assert_eq!(end(log.append(10)), 30);
        assert_eq!(end(log.append(10)), 40);
        assert_eq!(log.next_write(), None);
        assert_eq!(log.durable_position(), 0);
        // The second write finishes first: nothing is durable until the
        // first is also done.
        log.write_done(second);
        assert_eq!(log.durable_position(), 0);
        let grouped = log.next_write().unwrap();
        assert_eq!(
            (grouped.bytes, grouped.end_position),
            (20, 40),
            "group commit"
        );
        log.write_done(first);
        assert_eq!(log.durable_position(), 20);
        log.write_done(grouped);
        assert_eq!(log.durable_position(), 40);
        log.check_invariants();
    }

    #[test]
    fn periodic_mode_leaves_entries_in_the_buffer_until_sync() {
        let mut log = Commitlog::new(SyncMode::Periodic, 100, 10_000, 2, 100_000);
        accepted(log.append(10));
        assert_eq!(log.next_write(), None);
        log.sync();
        let write = log.next_write().unwrap();
        log.write_done(write);
        assert_eq!(log.durable_position(), 10);
    }
}
