//! One compaction job: read the input SSTables, merge them on the CPU, write
//! the output SSTable, concurrently with foreground work.
//!
//! A job is a pipeline of fixed-size chunks of input (`chunk_bytes`, 128 KiB
//! like Scylla's reader and writer buffers): each chunk is read with one I/O
//! in the compaction class, merged by a CPU task in the compaction
//! scheduling group (its cost per byte comes from the cost table), then its
//! share of the output is written with one I/O. Up to `chunks_in_flight`
//! chunks are in the pipeline at once. Consumption is spread over the inputs
//! in proportion to their sizes (a merge reads all inputs side by side),
//! which is what the backlog tracker's `C_i` needs.
//!
//! Output size (volume fidelity): rows that appear in several inputs are
//! merged into one. With inputs of `r_i` rows over key ranges, the expected
//! number of distinct keys assumes each input's rows are spread uniformly
//! over the union of the ranges (on the keys this shard owns):
//! `U x (1 - prod(1 - r_i / U))`, with `U` the owned keys in the union. For
//! disjoint ranges (sequential populations) this is the sum of the rows; for
//! repeated overwrites of a small range it collapses them. In data mode the
//! inputs carry their rows: the job merges them when it starts (keeping the
//! newest version of each key), and the output's rows are exactly the
//! merged ones. Tombstones and TTLs are not modelled.

use units::SimTime;

use crate::cells::SortedCells;
use crate::sstable::SSTable;

/// An in-progress compaction.
#[derive(Clone, Debug)]
pub struct CompactionJob {
    inputs: Vec<SSTable>,
    output_generation: u64,
    weight: u32,
    input_bytes: u64,
    output_rows: u64,
    output_bytes: u64,
    /// Data mode: the merged rows of the inputs.
    output_cells: Option<SortedCells>,
    chunk_bytes: u64,
    chunks_in_flight_max: u32,
    read_submitted_bytes: u64,
    read_done_bytes: u64,
    written_bytes: u64,
    chunks_in_flight: u32,
}

/// A chunk the job wants read next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRead {
    /// Input bytes of the chunk.
    pub input_bytes: u64,
    /// Output bytes it will produce once merged.
    pub output_bytes: u64,
}

impl CompactionJob {
    /// A job merging `inputs` into SSTable `output_generation`; `weight` is
    /// its concurrency slot (floor(log4(input bytes))), `ownership` the
    /// fraction of the key space this shard owns.
    pub fn new(
        inputs: Vec<SSTable>,
        output_generation: u64,
        weight: u32,
        ownership: f64,
        chunk_bytes: u64,
        chunks_in_flight_max: u32,
    ) -> CompactionJob {
        assert!(
            inputs.len() >= 2,
            "a compaction merges at least two SSTables"
        );
        assert!(chunk_bytes > 0 && chunks_in_flight_max > 0);
        let input_bytes: u64 = inputs.iter().map(|sstable| sstable.data_bytes).sum();
        let input_rows: u64 = inputs.iter().map(|sstable| sstable.rows).sum();
        let output_cells = inputs
            .iter()
            .map(|sstable| sstable.cells.as_ref())
            .collect::<Option<Vec<&SortedCells>>>()
            .map(|runs| SortedCells::merge(&runs));
        let output_rows = match &output_cells {
            Some(cells) => cells.len() as u64,
            None => distinct_rows(&inputs, ownership),
        };
        let output_bytes =
            (input_bytes as f64 * output_rows as f64 / input_rows.max(1) as f64).round() as u64;
        CompactionJob {
            inputs,
            output_generation,
            weight,
            input_bytes,
            output_rows,
            output_bytes: output_bytes.max(1),
            output_cells,
            chunk_bytes,
            chunks_in_flight_max,
            read_submitted_bytes: 0,
            read_done_bytes: 0,
            written_bytes: 0,
            chunks_in_flight: 0,
        }
    }

    /// The input SSTables.
    pub fn inputs(&self) -> &[SSTable] {
        &self.inputs
    }

    /// Generations of the inputs.
    pub fn input_generations(&self) -> impl Iterator<Item = u64> + '_ {
        self.inputs.iter().map(|sstable| sstable.generation)
    }

    /// The job's concurrency weight.
    pub fn weight(&self) -> u32 {
        self.weight
    }

    /// Total input bytes.
    pub fn input_bytes(&self) -> u64 {
        self.input_bytes
    }

    /// Data bytes and rows of the output SSTable, once written.
    pub fn output_shape(&self) -> (u64, u64) {
        (self.output_bytes, self.output_rows)
    }

    /// Bytes of output written so far (a partially written SSTable, for the
    /// backlog tracker).
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// Bytes of `input` consumed so far (`C_i`).
    pub fn consumed_bytes_of(&self, input: &SSTable) -> u64 {
        (u128::from(input.data_bytes) * u128::from(self.read_done_bytes)
            / u128::from(self.input_bytes.max(1))) as u64
    }

    /// Input bytes read so far.
    pub fn read_bytes(&self) -> u64 {
        self.read_done_bytes
    }

    /// The next chunk to read, if the pipeline has room and input remains.
    pub fn next_chunk(&mut self) -> Option<ChunkRead> {
        if self.chunks_in_flight >= self.chunks_in_flight_max
            || self.read_submitted_bytes >= self.input_bytes
        {
            return None;
        }
        let input_bytes = self
            .chunk_bytes
            .min(self.input_bytes - self.read_submitted_bytes);
        let before = self.output_share(self.read_submitted_bytes);
        self.read_submitted_bytes += input_bytes;
        let output_bytes = self.output_share(self.read_submitted_bytes) - before;
        self.chunks_in_flight += 1;
        Some(ChunkRead {
            input_bytes,
            output_bytes,
        })
    }

    /// Output bytes corresponding to the first `input_bytes` of input.
    fn output_share(&self, input_bytes: u64) -> u64 {
        (u128::from(self.output_bytes) * u128::from(input_bytes)
            / u128::from(self.input_bytes.max(1))) as u64
    }

    /// A chunk's read finished.
    pub fn chunk_read(&mut self, input_bytes: u64) {
        self.read_done_bytes += input_bytes;
        debug_assert!(self.read_done_bytes <= self.read_submitted_bytes);
    }

    /// A chunk's output reached the disk (or it produced none).
    pub fn chunk_written(&mut self, output_bytes: u64) {
        assert!(
            self.chunks_in_flight > 0,
            "a chunk finished that never started"
        );
        self.chunks_in_flight -= 1;
        self.written_bytes += output_bytes;
    }

    /// True once every input byte is read, merged and written.
    pub fn is_complete(&self) -> bool {
        self.read_submitted_bytes == self.input_bytes && self.chunks_in_flight == 0
    }

    /// Seals the output; returns it and the inputs it replaces.
    pub fn finish(self, now: SimTime) -> (SSTable, Vec<SSTable>) {
        assert!(
            self.is_complete(),
            "sealing a compaction output before it is written"
        );
        let output = SSTable {
            generation: self.output_generation,
            data_bytes: self.written_bytes,
            rows: self.output_rows,
            first_key: self
                .inputs
                .iter()
                .map(|sstable| sstable.first_key)
                .min()
                .unwrap_or(0),
            last_key: self
                .inputs
                .iter()
                .map(|sstable| sstable.last_key)
                .max()
                .unwrap_or(0),
            created_at: now,
            key_share: None,
            cells: self.output_cells,
        };
        (output, self.inputs)
    }
}

/// Expected distinct keys among `inputs` (see the module doc).
pub fn distinct_rows(inputs: &[SSTable], ownership: f64) -> u64 {
    let total_rows: u64 = inputs.iter().map(|sstable| sstable.rows).sum();
    let first = inputs
        .iter()
        .map(|sstable| sstable.first_key)
        .min()
        .unwrap_or(0);
    let last = inputs
        .iter()
        .map(|sstable| sstable.last_key)
        .max()
        .unwrap_or(0);
    // Disjoint ranges cannot share keys.
    let mut ranges: Vec<(u64, u64)> = inputs
        .iter()
        .map(|sstable| (sstable.first_key, sstable.last_key))
        .collect();
    ranges.sort_unstable();
    if ranges.windows(2).all(|pair| pair[0].1 < pair[1].0) {
        return total_rows;
    }
    let owned_keys = (((last - first) as f64 + 1.0) * ownership).max(1.0);
    let missing = inputs
        .iter()
        .map(|sstable| 1.0 - (sstable.rows as f64 / owned_keys).min(1.0))
        .product::<f64>();
    let distinct = (owned_keys * (1.0 - missing)).round() as u64;
    distinct.clamp(
        inputs.iter().map(|sstable| sstable.rows).max().unwrap_or(0),
        total_rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sstable(generation: u64, first_key: u64, last_key: u64, rows: u64) -> SSTable {
        SSTable {
            generation,
            data_bytes: rows * 100,
            rows,
            first_key,
            last_key,
            created_at: SimTime::ZERO,
            key_share: None,
            cells: None,
        }
    }

    #[test]
    fn disjoint_inputs_keep_every_row_and_overwrites_collapse() {
        let disjoint = [sstable(1, 0, 99, 100), sstable(2, 100, 199, 100)];
        assert_eq!(distinct_rows(&disjoint, 1.0), 200);
        // Four full overwrites of the same 100 keys: 100 distinct rows.
        let overwrites: Vec<SSTable> = (1..=4)
            .map(|generation| sstable(generation, 0, 99, 100))
            .collect();
        assert_eq!(distinct_rows(&overwrites, 1.0), 100);
        // Two sparse random populations of a huge space barely overlap.
        let sparse = [
            sstable(1, 0, 1_000_000_000, 1000),
            sstable(2, 5, 999_999_999, 1000),
        ];
        assert_eq!(distinct_rows(&sparse, 1.0), 2000);
    }

    #[test]
    fn a_job_reads_merges_and_writes_in_chunks_within_its_pipeline() {
        let inputs = vec![sstable(1, 0, 99, 100), sstable(2, 0, 99, 100)];
        let mut job = CompactionJob::new(inputs, 9, 4, 1.0, 6_000, 2);
        assert_eq!(job.input_bytes(), 20_000);
        let first = job.next_chunk().unwrap();
        let second = job.next_chunk().unwrap();
        assert_eq!(job.next_chunk(), None, "two chunks in flight at most");
        assert_eq!(
            (first.input_bytes, first.output_bytes),
            (6_000, 3_000),
            "overwrites halve the output"
        );
        job.chunk_read(first.input_bytes);
        assert_eq!(job.consumed_bytes_of(&sstable(1, 0, 99, 100)), 3_000);
        job.chunk_written(first.output_bytes);
        let third = job.next_chunk().unwrap();
        job.chunk_read(second.input_bytes);
        job.chunk_written(second.output_bytes);
        job.chunk_read(third.input_bytes);
        job.chunk_written(third.output_bytes);
        let last = job.next_chunk().unwrap();
        assert_eq!(last.input_bytes, 2_000, "the last chunk is short");
        job.chunk_read(last.input_bytes);
        job.chunk_written(last.output_bytes);
        assert!(job.is_complete());
        let (output, replaced) = job.finish(SimTime::ZERO);
        assert_eq!(
            (output.generation, output.rows, output.data_bytes),
            (9, 100, 10_000)
        );
        assert_eq!(replaced.len(), 2);
    }
}
