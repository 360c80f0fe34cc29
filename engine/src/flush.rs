//! Flushing a sealed memtable into a new SSTable.
//!
//! A flush is a pipeline of fixed-size steps: serialize a chunk on the CPU
//! (memtable scheduling group), then write it with one I/O in the
//! memtable-flush class. One chunk is serialized at a time and up to
//! `write_behind` chunks are written concurrently, like Seastar's output
//! streams. Only one flush runs per shard at a time (`sstable_write_permit`,
//! `_flush_serializer = 1` in scylla-mechanisms.md section 3.1).
//!
//! As chunks reach the disk, the memtable's share of *virtual* dirty memory
//! falls in proportion; its memory is freed when the last chunk is written
//! and the SSTable is sealed.

use units::SimTime;

use crate::cells::SortedCells;
use crate::memtable::Memtable;
use crate::sstable::SSTable;

/// One in-progress flush.
#[derive(Clone, Debug)]
pub struct FlushJob {
    memtable: Memtable,
    generation: u64,
    chunk_bytes: u64,
    write_behind: u32,
    serialized_bytes: u64,
    written_bytes: u64,
    serializing: bool,
    writes_in_flight: u32,
}

/// The next thing a flush wants done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushStep {
    /// Serialize a chunk on the CPU.
    Serialize {
        /// SSTable bytes of the chunk.
        bytes: u64,
        /// The memtable's rows in it (its share by bytes, cumulatively, so
        /// the chunks' rows add up to the memtable's).
        rows: u64,
    },
    /// Nothing to start now: wait for a completion.
    Wait,
}

impl FlushJob {
    /// Starts flushing `memtable` into SSTable `generation`.
    pub fn new(
        memtable: Memtable,
        generation: u64,
        chunk_bytes: u64,
        write_behind: u32,
    ) -> FlushJob {
        assert!(!memtable.is_empty(), "flushing an empty memtable");
        assert!(chunk_bytes > 0 && write_behind > 0);
        let job = FlushJob {
            memtable,
            generation,
            chunk_bytes,
            write_behind,
            serialized_bytes: 0,
            written_bytes: 0,
            serializing: false,
            writes_in_flight: 0,
        };
        job.check_invariants();
        job
    }

    /// What must hold: bytes written within bytes serialized within the
    /// memtable's SSTable bytes; nothing serialized is unwritten once no
    /// write is in flight; the memtable's own invariants. O(1) beyond the
    /// memtable's.
    pub fn check_invariants(&self) {
        assert!(
            self.written_bytes <= self.serialized_bytes,
            "written only what was serialized"
        );
        assert!(
            self.serialized_bytes <= self.memtable.sstable_bytes,
            "serialized no more than the memtable holds"
        );
        assert!(
            self.writes_in_flight > 0 || self.written_bytes == self.serialized_bytes,
            "a serialized chunk is written or in flight"
        );
        self.memtable.check_invariants();
    }

    /// The memtable being flushed.
    pub fn memtable(&self) -> &Memtable {
        &self.memtable
    }

    /// What to start next, if anything. A `Serialize` step is considered
    /// started when returned.
    pub fn next_step(&mut self) -> FlushStep {
        let total = self.memtable.sstable_bytes;
        let buffered = self.serialized_bytes - self.written_bytes;
        if self.serializing
            || self.serialized_bytes >= total
            || buffered >= self.chunk_bytes * u64::from(self.write_behind)
        {
            return FlushStep::Wait;
        }
        self.serializing = true;
        let bytes = self.chunk_bytes.min(total - self.serialized_bytes);
        let rows_upto =
            |b: u64| (u128::from(self.memtable.rows) * u128::from(b) / u128::from(total)) as u64;
        let rows = rows_upto(self.serialized_bytes + bytes) - rows_upto(self.serialized_bytes);
        debug_assert!(
            bytes > 0 && rows <= self.memtable.rows,
            "a chunk of the memtable"
        );
        FlushStep::Serialize { bytes, rows }
    }

    /// A chunk of `bytes` was serialized: it is ready to be written.
    pub fn serialized(&mut self, bytes: u64) {
        assert!(self.serializing);
        self.serializing = false;
        self.serialized_bytes += bytes;
        self.writes_in_flight += 1;
        debug_assert!(
            self.serialized_bytes <= self.memtable.sstable_bytes,
            "serialized no more than the memtable holds"
        );
    }

    /// A chunk write of `bytes` reached the disk.
    pub fn written(&mut self, bytes: u64) {
        assert!(self.writes_in_flight > 0);
        self.writes_in_flight -= 1;
        self.written_bytes += bytes;
        debug_assert!(self.written_bytes <= self.serialized_bytes);
    }

    /// SSTable bytes on disk so far (a partial write, for the backlog tracker).
    pub fn written_bytes(&self) -> u64 {
        debug_assert!(self.written_bytes <= self.memtable.sstable_bytes);
        self.written_bytes
    }

    /// True once every byte is on disk.
    pub fn is_complete(&self) -> bool {
        let complete =
            self.written_bytes == self.memtable.sstable_bytes && self.writes_in_flight == 0;
        debug_assert!(
            !complete || !self.serializing,
            "a complete flush serializes nothing"
        );
        complete
    }

    /// Memory of the memtable whose data is already on disk (it no longer
    /// counts as virtual dirty).
    pub fn written_memory_bytes(&self) -> u64 {
        let total = self.memtable.sstable_bytes.max(1) as u128;
        let written = (u128::from(self.memtable.memory_bytes) * u128::from(self.written_bytes)
            / total) as u64;
        debug_assert!(
            written <= self.memtable.memory_bytes,
            "a part of the memtable's memory"
        );
        written
    }

    /// Seals the SSTable; returns it and the flushed memtable.
    pub fn finish(self, now: SimTime) -> (SSTable, Memtable) {
        assert!(
            self.is_complete(),
            "sealing an SSTable before its data is written"
        );
        let sstable = SSTable {
            generation: self.generation,
            data_bytes: self.memtable.sstable_bytes,
            rows: self.memtable.rows,
            first_key: self.memtable.first_key,
            last_key: self.memtable.last_key,
            created_at: now,
            max_timestamp_us: self.memtable.max_timestamp_us,
            key_share: None,
            cells: self.memtable.cells.as_ref().map(SortedCells::from_map),
            level: 0,
            token_range: None,
            segments: None,
            token_set: None,
        };
        if cfg!(debug_assertions) {
            sstable.check_invariants();
        }
        (sstable, self.memtable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_serializes_one_chunk_at_a_time_within_its_write_behind() {
        let mut memtable = Memtable::new(1);
        memtable.insert(1, 1000, 250, 0);
        let mut job = FlushJob::new(memtable, 7, 100, 2);
        assert_eq!(
            job.next_step(),
            FlushStep::Serialize {
                bytes: 100,
                rows: 0
            }
        );
        assert_eq!(
            job.next_step(),
            FlushStep::Wait,
            "one chunk serializes at a time"
        );
        job.serialized(100);
        assert_eq!(
            job.next_step(),
            FlushStep::Serialize {
                bytes: 100,
                rows: 0
            }
        );
        job.serialized(100);
        assert_eq!(
            job.next_step(),
            FlushStep::Wait,
            "write-behind of 2 chunks is full"
        );
        job.written(100);
        job.check_invariants();
        assert_eq!(job.written_memory_bytes(), 400);
        assert_eq!(
            job.next_step(),
            FlushStep::Serialize { bytes: 50, rows: 1 },
            "the last chunk is short, and holds the row's end"
        );
        job.serialized(50);
        job.written(100);
        assert!(!job.is_complete());
        job.written(50);
        assert!(job.is_complete());
        job.check_invariants();
        let (sstable, memtable) = job.finish(SimTime::from_nanos(5));
        assert_eq!(
            (sstable.generation, sstable.data_bytes, sstable.rows),
            (7, 250, 1)
        );
        assert_eq!(memtable.id, 1);
    }

    #[test]
    fn the_chunks_rows_add_up_to_the_memtables() {
        let mut memtable = Memtable::new(1);
        for key in 0..7 {
            memtable.insert(key, 1000, 333, 0);
        }
        let mut job = FlushJob::new(memtable, 1, 128, 1);
        let (mut bytes, mut rows) = (0, 0);
        while let FlushStep::Serialize { bytes: b, rows: r } = job.next_step() {
            assert!(r <= b.div_ceil(333), "{r} rows in {b} bytes");
            bytes += b;
            rows += r;
            job.serialized(b);
            job.written(b);
        }
        assert_eq!((bytes, rows), (7 * 333, 7));
        assert!(job.is_complete());
    }

    #[test]
    #[should_panic(expected = "written only what was serialized")]
    fn bytes_written_before_they_were_serialized_are_caught() {
        let mut memtable = Memtable::new(1);
        memtable.insert(1, 1000, 250, 0);
        let mut job = FlushJob::new(memtable, 7, 100, 2);
        job.written_bytes = 100;
        job.check_invariants();
    }
}
