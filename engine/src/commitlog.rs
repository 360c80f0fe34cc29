//! The commitlog in periodic sync mode (Scylla's default).
//!
//! What it models (scylla-mechanisms.md section 3.2, `db/commitlog/commitlog.cc`
//! @3.0): each write appends an entry to an in-memory buffer of 128 KiB; a
//! full buffer is written to the current segment with one I/O in the
//! commitlog class; the periodic sync timer (10 s) writes out a partly filled
//! buffer. Writes are acknowledged once their entry is in the buffer, which is
//! what periodic mode promises (up to one sync period of data can be lost in a
//! crash). At most `max_active_writes` buffer writes are in flight; when that
//! many are and a full buffer is already waiting, appends must wait: this is
//! the commitlog's back-pressure on the write path.
//!
//! Segments of 32 MiB are numbered; a memtable remembers the first segment it
//! has data in, and once every memtable with data in a segment has flushed
//! the segment is released (deleted or recycled). When the segments on disk
//! exceed the commitlog's total space, the node flushes memtables to free
//! them.
//!
//! Left out for now: fsync cost (cheap on NVMe), batch mode, segment
//! pre-allocation and recycling I/O, replay after a crash (the fault issue).

use std::collections::VecDeque;

/// Bytes of per-entry framing (size, checksum) around a mutation.
pub const ENTRY_OVERHEAD_BYTES: u64 = 16;

/// The commitlog of one shard.
#[derive(Clone, Debug)]
pub struct Commitlog {
    buffer_capacity_bytes: u64,
    segment_bytes: u64,
    max_active_writes: u32,
    total_space_bytes: u64,
    /// Bytes appended to the buffer not yet handed out as a write.
    buffer_fill_bytes: u64,
    /// Full buffers waiting for a write slot, in order (bytes each).
    sealed_buffers: VecDeque<u64>,
    writes_in_flight: u32,
    current_segment: u64,
    current_segment_fill_bytes: u64,
    /// Segments `oldest_live_segment..=current_segment` are on disk.
    oldest_live_segment: u64,
    bytes_appended_total: u64,
    bytes_written_total: u64,
}

/// The outcome of an append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Append {
    /// The entry is in the buffer of this segment.
    Accepted {
        /// Segment the entry went to.
        segment: u64,
    },
    /// Too many buffers are in flight or waiting; retry after a write completes.
    MustWait,
}

impl Commitlog {
    /// An empty commitlog.
    pub fn new(
        buffer_capacity_bytes: u64,
        segment_bytes: u64,
        max_active_writes: u32,
        total_space_bytes: u64,
    ) -> Commitlog {
        assert!(buffer_capacity_bytes > 0 && buffer_capacity_bytes <= segment_bytes);
        assert!(max_active_writes > 0);
        Commitlog {
            buffer_capacity_bytes,
            segment_bytes,
            max_active_writes,
            total_space_bytes,
            buffer_fill_bytes: 0,
            sealed_buffers: VecDeque::new(),
            writes_in_flight: 0,
            current_segment: 0,
            current_segment_fill_bytes: 0,
            oldest_live_segment: 0,
            bytes_appended_total: 0,
            bytes_written_total: 0,
        }
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
            self.current_segment += 1;
            self.current_segment_fill_bytes = 0;
        }
        self.current_segment_fill_bytes += entry_bytes;
        self.buffer_fill_bytes += entry_bytes;
        self.bytes_appended_total += entry_bytes;
        Append::Accepted {
            segment: self.current_segment,
        }
    }

    fn seal_buffer(&mut self) {
        if self.buffer_fill_bytes > 0 {
            self.sealed_buffers.push_back(self.buffer_fill_bytes);
            self.buffer_fill_bytes = 0;
        }
    }

    /// Periodic sync: seal the partly filled buffer so it is written.
    pub fn sync(&mut self) {
        if self.sealed_buffers.is_empty() {
            self.seal_buffer();
        }
    }

    /// The next buffer write to submit, if a sealed buffer and a write slot
    /// are both available. Call until it returns `None`.
    pub fn next_write(&mut self) -> Option<u64> {
        if self.writes_in_flight >= self.max_active_writes {
            return None;
        }
        let bytes = self.sealed_buffers.pop_front()?;
        self.writes_in_flight += 1;
        Some(bytes)
    }

    /// A buffer write of `bytes` completed.
    pub fn write_done(&mut self, bytes: u64) {
        assert!(
            self.writes_in_flight > 0,
            "commitlog write completed that was never submitted"
        );
        self.writes_in_flight -= 1;
        self.bytes_written_total += bytes;
    }

    /// Releases every segment before `segment` (all of their data is in
    /// SSTables now).
    pub fn release_segments_before(&mut self, segment: u64) {
        let segment = segment.min(self.current_segment);
        if segment > self.oldest_live_segment {
            self.oldest_live_segment = segment;
        }
    }

    /// The segment new entries go to.
    pub fn current_segment(&self) -> u64 {
        self.current_segment
    }

    /// Segments on disk (including the one being filled).
    pub fn live_segments(&self) -> u64 {
        self.current_segment - self.oldest_live_segment + 1
    }

    /// Bytes of segments on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.live_segments() * self.segment_bytes
    }

    /// True when segments on disk exceed the total space and memtables should
    /// flush so old segments can go.
    pub fn over_space_limit(&self) -> bool {
        self.disk_bytes() > self.total_space_bytes
    }

    /// Buffer writes in flight.
    pub fn writes_in_flight(&self) -> u32 {
        self.writes_in_flight
    }

    /// Total entry bytes appended.
    pub fn bytes_appended_total(&self) -> u64 {
        self.bytes_appended_total
    }

    /// Total bytes written to disk.
    pub fn bytes_written_total(&self) -> u64 {
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
        let unwritten: u64 = self.sealed_buffers.iter().sum::<u64>() + self.buffer_fill_bytes;
        assert!(self.bytes_written_total + unwritten <= self.bytes_appended_total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(append: Append) -> u64 {
        match append {
            Append::Accepted { segment } => segment,
            Append::MustWait => panic!("append had to wait"),
        }
    }

    #[test]
    fn full_buffers_become_writes_of_the_buffer_size() {
        let mut log = Commitlog::new(100, 1000, 2, 10_000);
        for _ in 0..10 {
            accepted(log.append(10));
        }
        assert_eq!(
            log.next_write(),
            None,
            "the buffer is full but not yet sealed"
        );
        accepted(log.append(10));
        assert_eq!(log.next_write(), Some(100));
        assert_eq!(log.next_write(), None);
        log.write_done(100);
        assert_eq!(log.bytes_written_total(), 100);
        log.check_invariants();
    }

    #[test]
    fn appends_wait_when_every_write_slot_and_the_spare_buffer_are_taken() {
        let mut log = Commitlog::new(100, 10_000, 1, 100_000);
        for _ in 0..11 {
            accepted(log.append(10));
        }
        assert_eq!(
            log.next_write(),
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
        log.write_done(100);
        assert_eq!(log.next_write(), Some(100));
        accepted(log.append(10));
        log.check_invariants();
    }

    #[test]
    fn sync_writes_a_partial_buffer() {
        let mut log = Commitlog::new(100, 1000, 2, 10_000);
        accepted(log.append(30));
        log.sync();
        assert_eq!(log.next_write(), Some(30));
    }

    #[test]
    fn segments_roll_over_and_are_released_after_flush() {
        let mut log = Commitlog::new(100, 100, 4, 250);
        let mut last = 0;
        for _ in 0..30 {
            last = accepted(log.append(10));
            while let Some(bytes) = log.next_write() {
                log.write_done(bytes);
            }
        }
        assert_eq!(last, 2);
        assert_eq!(log.live_segments(), 3);
        assert!(log.over_space_limit());
        log.release_segments_before(2);
        assert_eq!(log.live_segments(), 1);
        assert!(!log.over_space_limit());
    }
}
