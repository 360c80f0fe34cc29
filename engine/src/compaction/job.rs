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
//! repeated overwrites of a small range it collapses them. Inputs that carry
//! token ranges (leveled SSTables), segments (leveled outputs, whose pieces
//! of the ring hold different seed ranges) or key shares (preloaded ones)
//! cover only part of their key range: two parts whose seed ranges, token
//! ranges or key shares are disjoint share no key, and otherwise each
//! part's rows are spread over its own region (seed range x token range x
//! key share), the expected distinct count summed over the cells where
//! regions meet. Where on the ring those rows lie is kept as a profile, so
//! each output gets the rows, seed ranges and segments of its own token
//! range. (One seed range for a whole leveled SSTable would not do: after
//! a promotion moves one token slice of L1 down, the next L1 outputs hold
//! only new keys in that slice and old and new keys elsewhere; spread
//! evenly, their rows would look like copies of the next level's and be
//! merged away.) Sizes-only mode loses at most the rounding of rows to
//! whole ones this way: a sequential population through hundreds of
//! leveled jobs keeps all but 0.01% of its rows.
//! In data mode the inputs carry their rows: the job merges them when it
//! starts (keeping the newest version of each key), and the output's rows
//! are exactly the merged ones. Tombstones and TTLs are not modelled.
//!
//! Outputs: a size-tiered job writes one SSTable, in level 0. A leveled job
//! writes into its target level and, like Scylla's compaction writer,
//! starts a new SSTable each time the current one reaches
//! `sstable_size_in_mb` of data, so its output is SSTables of exactly that
//! size but the last, over consecutive token ranges that tile the span of
//! its inputs (volume mode: token widths in proportion to bytes, keys being
//! spread evenly over the ring; data mode: the merged rows in token order,
//! cut where the bytes reach the size). The outputs are sealed together
//! when the job ends (Scylla 3.0 replaces its inputs only then).

use units::SimTime;

use crate::cells::{Cell, SortedCells};
use crate::read::key_position;
use crate::sstable::{SSTable, Segment};
use crate::token_set::KEY_SHARE_ONE;

/// An in-progress compaction.
#[derive(Clone, Debug)]
pub struct CompactionJob {
    inputs: Vec<SSTable>,
    /// The first output's generation; output `i` gets `+ i`.
    output_generation: u64,
    /// The level the outputs go to (0 for size-tiered jobs).
    output_level: u32,
    /// Outputs are cut at this many data bytes (`None`: one output).
    max_output_bytes: Option<u64>,
    weight: u32,
    input_bytes: u64,
    output_rows: u64,
    output_bytes: u64,
    /// Data mode: the merged rows of the inputs.
    output_cells: Option<SortedCells>,
    /// Volume mode: where on the ring the output's rows lie.
    profile: Vec<Piece>,
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
    /// A job whose table's partitions hold many rows, `partition_bytes` a
    /// whole one (`None`: one row each, as [`CompactionJob::new`] takes
    /// them). A partition's fragments hold the rows their writes drew, so
    /// the merge keeps their union, which is at most the whole partition:
    /// the output is the inputs' bytes (fragments of few rows seldom hold
    /// the same ones) capped at a whole partition for each partition out
    /// (fragments merged into a partition already whole add nothing).
    /// Called before [`CompactionJob::into_level`], which cuts the output.
    pub fn with_partition_bytes(mut self, partition_bytes: Option<u64>) -> CompactionJob {
        if let Some(whole) = partition_bytes {
            assert!(
                self.read_submitted_bytes == 0 && self.max_output_bytes.is_none(),
                "sized before it starts or is cut"
            );
            self.output_bytes = self
                .input_bytes
                .min(self.output_rows.saturating_mul(whole))
                .max(1);
            debug_assert!(
                self.output_bytes <= self.input_bytes.max(1),
                "a merge adds no bytes"
            );
        }
        self
    }

    /// What must hold between the job's counters: inputs to merge, their
    /// bytes summed; reads done within reads submitted within the input;
    /// chunks in flight within the pipeline's room; output written within
    /// the output, which is not empty; a level of the manifest, and outputs
    /// cut at a positive size if cut. O(inputs).
    pub fn check_invariants(&self) {
        assert!(!self.inputs.is_empty(), "a compaction has inputs");
        assert_eq!(
            self.input_bytes,
            self.inputs
                .iter()
                .map(|sstable| sstable.data_bytes)
                .sum::<u64>(),
            "the input bytes are the inputs'"
        );
        assert!(self.read_done_bytes <= self.read_submitted_bytes);
        assert!(
            self.read_submitted_bytes <= self.input_bytes,
            "no read past the input"
        );
        assert!(self.chunks_in_flight <= self.chunks_in_flight_max);
        assert!(self.chunk_bytes > 0 && self.output_bytes >= 1);
        assert!(
            self.written_bytes <= self.output_bytes,
            "no more written than the output"
        );
        assert!((self.output_level as usize) < crate::compaction::lcs::MAX_LEVELS);
        assert_ne!(self.max_output_bytes, Some(0));
    }

    /// A job merging `inputs` into one level-0 SSTable of generation
    /// `output_generation` (size-tiered; [`CompactionJob::into_level`]
    /// makes it a leveled one); `weight` is its concurrency slot
    /// (floor(log4(input bytes))), `ownership` the fraction of the key
    /// space this shard owns.
    pub fn new(
        inputs: Vec<SSTable>,
        output_generation: u64,
        weight: u32,
        ownership: f64,
        chunk_bytes: u64,
        chunks_in_flight_max: u32,
    ) -> CompactionJob {
        assert!(!inputs.is_empty(), "a compaction needs an input SSTable");
        assert!(chunk_bytes > 0 && chunks_in_flight_max > 0);
        let input_bytes: u64 = inputs.iter().map(|sstable| sstable.data_bytes).sum();
        let input_rows: u64 = inputs.iter().map(|sstable| sstable.rows).sum();
        let output_cells = inputs
            .iter()
            .map(|sstable| sstable.cells.as_ref())
            .collect::<Option<Vec<&SortedCells>>>()
            .map(|runs| SortedCells::merge(&runs));
        let (output_rows, profile) = match &output_cells {
            Some(cells) => (cells.len() as u64, Vec::new()),
            None => (
                distinct_rows(&inputs, ownership),
                profile(&inputs, ownership),
            ),
        };
        let output_bytes =
            (input_bytes as f64 * output_rows as f64 / input_rows.max(1) as f64).round() as u64;
        let job = CompactionJob {
            inputs,
            output_generation,
            output_level: 0,
            max_output_bytes: None,
            weight,
            input_bytes,
            output_rows,
            output_bytes: output_bytes.max(1),
            output_cells,
            profile,
            chunk_bytes,
            chunks_in_flight_max,
            read_submitted_bytes: 0,
            read_done_bytes: 0,
            written_bytes: 0,
            chunks_in_flight: 0,
        };
        job.check_invariants();
        job
    }

    /// The same job writing into `level`, cutting its output into SSTables
    /// of `max_sstable_bytes` of data (leveled compaction); `None` keeps one
    /// output. Output generations run from the first one given to `new`
    /// for [`CompactionJob::output_count`] generations.
    pub fn into_level(mut self, level: u32, max_sstable_bytes: Option<u64>) -> CompactionJob {
        assert!(
            max_sstable_bytes != Some(0),
            "outputs cut at 0 bytes would never end"
        );
        assert!(
            (level as usize) < crate::compaction::lcs::MAX_LEVELS,
            "level {level} is beyond the manifest"
        );
        self.output_level = level;
        self.max_output_bytes = max_sstable_bytes;
        self
    }

    /// The input SSTables.
    pub fn inputs(&self) -> &[SSTable] {
        &self.inputs
    }

    /// The newest write its inputs hold: its outputs' maximum timestamp.
    pub fn max_timestamp_us(&self) -> u64 {
        self.inputs
            .iter()
            .map(|input| input.max_timestamp_us)
            .max()
            .unwrap_or(0)
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

    /// The level the outputs go to.
    pub fn output_level(&self) -> u32 {
        self.output_level
    }

    /// Data bytes and rows of the whole output, once written.
    pub fn output_shape(&self) -> (u64, u64) {
        (self.output_bytes, self.output_rows)
    }

    /// SSTables the job writes: one per `max_sstable_bytes` of output data
    /// (the last one shorter), at least one; in data mode no more than the
    /// rows, so none is empty.
    pub fn output_count(&self) -> u64 {
        let count = match self.max_output_bytes {
            Some(max) => self.output_bytes.div_ceil(max).max(1),
            None => 1,
        };
        let count = match &self.output_cells {
            Some(cells) => count.min(cells.len() as u64).max(1),
            None => count,
        };
        debug_assert!(count >= 1, "a compaction writes an SSTable");
        count
    }

    /// Bytes of output written so far (a partially written SSTable, for the
    /// backlog tracker).
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// Bytes of `input` consumed so far (`C_i`).
    pub fn consumed_bytes_of(&self, input: &SSTable) -> u64 {
        let consumed = (u128::from(input.data_bytes) * u128::from(self.read_done_bytes)
            / u128::from(self.input_bytes.max(1))) as u64;
        debug_assert!(
            consumed <= input.data_bytes,
            "no more consumed than the input holds"
        );
        consumed
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
        debug_assert!(input_bytes > 0 && self.read_submitted_bytes <= self.input_bytes);
        debug_assert!(self.chunks_in_flight <= self.chunks_in_flight_max);
        Some(ChunkRead {
            input_bytes,
            output_bytes,
        })
    }

    /// Starts the job `progress` (in `[0, 1)`) of the way through, in whole
    /// chunks: a merge that was running before the simulated window (a
    /// mid-cycle or window preload). What it had read and written counts
    /// as done.
    pub fn resume_at(&mut self, progress: f64) {
        assert!(
            self.read_submitted_bytes == 0 && self.chunks_in_flight == 0,
            "only a job that has not started resumes part-way"
        );
        assert!((0.0..1.0).contains(&progress), "progress {progress}");
        let chunks = (self.input_bytes as f64 * progress) as u64 / self.chunk_bytes.max(1);
        let done = (chunks * self.chunk_bytes).min(self.input_bytes);
        self.read_submitted_bytes = done;
        self.read_done_bytes = done;
        self.written_bytes = self.output_share(done);
        self.check_invariants();
    }

    /// Output bytes corresponding to the first `input_bytes` of input.
    fn output_share(&self, input_bytes: u64) -> u64 {
        debug_assert!(input_bytes <= self.input_bytes, "a share of the input");
        let share = (u128::from(self.output_bytes) * u128::from(input_bytes)
            / u128::from(self.input_bytes.max(1))) as u64;
        debug_assert!(share <= self.output_bytes);
        share
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
        debug_assert!(
            self.written_bytes <= self.output_bytes,
            "no more written than the output"
        );
    }

    /// True once every input byte is read, merged and written.
    pub fn is_complete(&self) -> bool {
        let complete = self.read_submitted_bytes == self.input_bytes && self.chunks_in_flight == 0;
        debug_assert!(
            !complete || self.read_done_bytes == self.input_bytes,
            "a complete job read every input byte"
        );
        complete
    }

    /// Seals the outputs; returns them (in token order, generations
    /// increasing) and the inputs they replace.
    pub fn finish(self, now: SimTime) -> (Vec<SSTable>, Vec<SSTable>) {
        assert!(
            self.is_complete(),
            "sealing a compaction output before it is written"
        );
        let count = self.output_count();
        let total = self.written_bytes;
        let first_key = self.inputs.iter().map(|s| s.first_key).min().unwrap_or(0);
        let last_key = self.inputs.iter().map(|s| s.last_key).max().unwrap_or(0);
        let (low, high) = token_span(&self.inputs);
        // The ring the outputs may hold keys of: the union of the inputs'
        // token sets, if each has one.
        let token_set = self
            .inputs
            .iter()
            .map(|sstable| sstable.token_set.clone())
            .reduce(|a, b| Some(a?.union(&b?)))
            .flatten();
        let set_within =
            |start: u64, end: u64| token_set.as_ref().map(|set| set.within(start, end));
        let with_tokens = count > 1
            || self.output_level > 0
            || self.inputs.iter().any(|s| s.token_range.is_some());
        // Where each output ends, in bytes of the whole output: full
        // SSTables, then the rest (evenly when data mode has fewer rows
        // than full SSTables).
        let full = self
            .max_output_bytes
            .filter(|max| total.div_ceil(*max) == count);
        let byte_bound = |i: u64| -> u64 {
            match full {
                _ if i >= count => total,
                Some(max) => (max * i).min(total),
                None => (u128::from(total) * u128::from(i) / u128::from(count)) as u64,
            }
        };
        let scale = |value: u64, numerator: u64, denominator: u64| -> u64 {
            (u128::from(value) * u128::from(numerator) / u128::from(denominator.max(1))) as u64
        };
        let template = SSTable {
            generation: self.output_generation,
            data_bytes: 0,
            rows: 0,
            first_key,
            last_key,
            created_at: now,
            // A merge keeps its rows' timestamps: the newest input's.
            max_timestamp_us: self.max_timestamp_us(),
            key_share: None,
            cells: None,
            level: self.output_level,
            token_range: None,
            segments: None,
            token_set: token_set.clone(),
        };
        let mut outputs = Vec::with_capacity(count as usize);
        match &self.output_cells {
            None if !with_tokens => {
                outputs.push(SSTable {
                    data_bytes: total,
                    rows: self.output_rows,
                    ..template.clone()
                });
            }
            None => {
                // Cut where the rows the profile places on the ring reach
                // each output's share.
                let profile_rows: f64 = self.profile.iter().map(|piece| piece.rows).sum();
                let token_at = |rows: u64| -> u64 {
                    let target = rows as f64 / self.output_rows.max(1) as f64 * profile_rows;
                    let mut cumulative = 0.0;
                    for piece in &self.profile {
                        if piece.rows > 0.0 && cumulative + piece.rows >= target {
                            let within = ((target - cumulative) / piece.rows).clamp(0.0, 1.0);
                            let width = (piece.tokens.1 - piece.tokens.0) as f64;
                            return piece.tokens.0 + (width * within) as u64;
                        }
                        cumulative += piece.rows;
                    }
                    high
                };
                let row_bound = |i: u64| scale(self.output_rows, byte_bound(i), total);
                let mut start = low;
                for i in 0..count {
                    let end = if i + 1 == count {
                        high
                    } else {
                        token_at(row_bound(i + 1)).clamp(start, high)
                    };
                    let rows = row_bound(i + 1) - row_bound(i);
                    let segments = segments_within(&self.profile, (start, end), rows);
                    let seeds = segments
                        .iter()
                        .filter(|segment| segment.rows > 0)
                        .map(|segment| (segment.first_key, segment.last_key))
                        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
                        .unwrap_or((first_key, last_key));
                    outputs.push(SSTable {
                        generation: self.output_generation + i,
                        data_bytes: byte_bound(i + 1) - byte_bound(i),
                        rows,
                        first_key: seeds.0,
                        last_key: seeds.1,
                        token_range: Some((start, end)),
                        segments: (segments.len() > 1).then(|| segments.into()),
                        token_set: set_within(start, end),
                        ..template.clone()
                    });
                    start = end;
                }
            }
            Some(cells) => {
                // The merged rows in ring order, cut by bytes.
                let mut by_token: Vec<(u64, Cell)> = cells
                    .cells()
                    .iter()
                    .map(|cell| (key_position(cell.0), *cell))
                    .collect();
                by_token.sort_by_key(|(token, cell)| (*token, cell.0));
                let rows = by_token.len() as u64;
                let mut row_bounds: Vec<u64> = (0..=count)
                    .map(|i| scale(rows, byte_bound(i), total))
                    .collect();
                // Never cut between two rows of one token.
                for i in 1..count as usize {
                    let mut bound = row_bounds[i].max(row_bounds[i - 1]);
                    while bound > 0
                        && bound < rows
                        && by_token[bound as usize].0 == by_token[bound as usize - 1].0
                    {
                        bound += 1;
                    }
                    row_bounds[i] = bound.min(rows);
                }
                let mut token_start = low;
                for i in 0..count as usize {
                    let (from, to) = (row_bounds[i] as usize, row_bounds[i + 1] as usize);
                    let token_end = if i + 1 == count as usize || to >= by_token.len() {
                        high
                    } else {
                        by_token[to].0.clamp(token_start, high)
                    };
                    let mut group: Vec<Cell> =
                        by_token[from..to].iter().map(|(_, cell)| *cell).collect();
                    group.sort_by_key(|cell| cell.0);
                    let group = SortedCells::from_sorted(group);
                    let (group_first, group_last) =
                        group.key_range().unwrap_or((first_key, last_key));
                    outputs.push(SSTable {
                        generation: self.output_generation + i as u64,
                        data_bytes: byte_bound(i as u64 + 1) - byte_bound(i as u64),
                        rows: group.len() as u64,
                        first_key: group_first,
                        last_key: group_last,
                        token_range: with_tokens.then_some((token_start, token_end)),
                        token_set: set_within(token_start, token_end),
                        cells: Some(group),
                        ..template.clone()
                    });
                    token_start = token_end;
                }
            }
        }
        assert_eq!(
            outputs.len() as u64,
            count,
            "the job writes its output count"
        );
        debug_assert_eq!(
            outputs.iter().map(|output| output.data_bytes).sum::<u64>(),
            total,
            "the outputs hold what the job wrote"
        );
        debug_assert!(
            outputs
                .windows(2)
                .all(|pair| pair[0].generation + 1 == pair[1].generation
                    && pair[0].token_extent().1 <= pair[1].token_extent().0
                    || pair[0].token_range.is_none()),
            "outputs in token order, generations increasing"
        );
        if cfg!(debug_assertions) {
            for output in &outputs {
                output.check_invariants();
            }
        }
        (outputs, self.inputs)
    }
}

/// The half-open token span of some SSTables: from the smallest start to
/// the largest end (the whole ring for any without a token range).
fn token_span(sstables: &[SSTable]) -> (u64, u64) {
    debug_assert!(!sstables.is_empty(), "the span of no SSTable");
    let span = sstables
        .iter()
        .map(SSTable::token_extent)
        .fold((KEY_SHARE_ONE, 0), |(low, high), (start, end)| {
            (low.min(start), high.max(end))
        });
    debug_assert!(span.0 < span.1 && span.1 <= KEY_SHARE_ONE);
    span
}

/// A part of the key space where some of an input's rows lie, each
/// spread evenly over it: seeds `[first, last + 1)`, tokens and key shares
/// (the whole space without one). An SSTable is one part, or one per
/// segment.
#[derive(Clone, Copy, Debug)]
struct Part {
    /// Which input the part belongs to.
    input: usize,
    seeds: (u128, u128),
    tokens: (u64, u64),
    shares: (u64, u64),
    rows: f64,
}

impl Part {
    fn meets(&self, other: &Part) -> bool {
        self.seeds.0 < other.seeds.1
            && other.seeds.0 < self.seeds.1
            && self.tokens.0 < other.tokens.1
            && other.tokens.0 < self.tokens.1
            && self.shares.0 < other.shares.1
            && other.shares.0 < self.shares.1
    }
}

/// The parts of `inputs`: one per SSTable or segment, cut to the slices of
/// its token set when it has one (its rows spread over them by width).
fn parts_of(inputs: &[SSTable]) -> Vec<Part> {
    let mut parts = Vec::with_capacity(inputs.len());
    for (input, sstable) in inputs.iter().enumerate() {
        let tokens = sstable.token_range.unwrap_or((0, KEY_SHARE_ONE));
        let shares = sstable.key_share.unwrap_or((0, KEY_SHARE_ONE));
        let seeds = |first: u64, last: u64| (u128::from(first), u128::from(last) + 1);
        let mut push = |first: u64, last: u64, tokens: (u64, u64), rows: u64| {
            let part = Part {
                input,
                seeds: seeds(first, last),
                tokens,
                shares,
                rows: rows as f64,
            };
            let Some(set) = &sstable.token_set else {
                parts.push(part);
                return;
            };
            let held = set.width_within(tokens.0, tokens.1);
            for slice in set.within(tokens.0, tokens.1).slices() {
                parts.push(Part {
                    tokens: slice,
                    rows: part.rows * (slice.1 - slice.0) as f64 / held as f64,
                    ..part
                });
            }
        };
        match &sstable.segments {
            Some(segments) => {
                let mut start = tokens.0;
                for segment in segments.iter() {
                    let range = (start, segment.token_end);
                    push(segment.first_key, segment.last_key, range, segment.rows);
                    start = segment.token_end;
                }
            }
            None => push(sstable.first_key, sstable.last_key, tokens, sstable.rows),
        }
    }
    debug_assert!(
        parts
            .iter()
            .all(|part| part.tokens.0 < part.tokens.1 && part.seeds.0 < part.seeds.1),
        "every part spans some tokens and seeds"
    );
    parts
}

/// True if no two parts of different inputs share a key.
fn pairwise_disjoint(parts: &[Part]) -> bool {
    parts.iter().enumerate().all(|(i, a)| {
        parts[i + 1..]
            .iter()
            .all(|b| a.input == b.input || !a.meets(b))
    })
}

/// Keys this shard owns in a box of these extents.
fn owned_keys(seeds: (u128, u128), tokens: (u64, u64), shares: (u64, u64), ownership: f64) -> f64 {
    debug_assert!(
        seeds.0 <= seeds.1 && tokens.0 <= tokens.1 && shares.0 <= shares.1,
        "a box's extents are ordered"
    );
    let one = KEY_SHARE_ONE as f64;
    (seeds.1 - seeds.0) as f64
        * ownership
        * ((tokens.1 - tokens.0) as f64 / one)
        * ((shares.1 - shares.0) as f64 / one)
}

/// The sorted, distinct endpoints of some intervals.
fn cuts<T: Copy + Ord>(intervals: impl Iterator<Item = (T, T)>) -> Vec<T> {
    let mut cuts: Vec<T> = intervals.flat_map(|(a, b)| [a, b]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// The expected distinct rows of a merge over one slice of the ring.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    /// `[lo, hi)` of the token space.
    tokens: (u64, u64),
    /// Expected distinct rows in it.
    rows: f64,
    /// Smallest and largest seed of the rows that land in it.
    seeds: Option<(u64, u64)>,
}

/// Where the distinct rows of a merge of `inputs` lie on the ring (see the
/// module doc), as consecutive pieces over the inputs' token span.
fn profile(inputs: &[SSTable], ownership: f64) -> Vec<Piece> {
    let plain = inputs.iter().all(|sstable| {
        sstable.token_range.is_none()
            && sstable.key_share.is_none()
            && sstable.segments.is_none()
            && sstable.token_set.is_none()
    });
    let parts = parts_of(inputs);
    let disjoint = pairwise_disjoint(&parts);
    if plain && !disjoint {
        // Every input over the union of the seed ranges.
        let first = inputs.iter().map(|s| s.first_key).min().unwrap_or(0);
        let last = inputs.iter().map(|s| s.last_key).max().unwrap_or(0);
        let owned_keys = (((last - first) as f64 + 1.0) * ownership).max(1.0);
        let missing = inputs
            .iter()
            .map(|sstable| 1.0 - (sstable.rows as f64 / owned_keys).min(1.0))
            .product::<f64>();
        return vec![Piece {
            tokens: (0, KEY_SHARE_ONE),
            rows: owned_keys * (1.0 - missing),
            seeds: Some((first, last)),
        }];
    }
    let widen = |(a, b): (u64, u64)| (u128::from(a), u128::from(b));
    let within =
        |outer: (u128, u128), inner: (u128, u128)| outer.0 <= inner.0 && inner.1 <= outer.1;
    let seed_extent = |seeds: (u128, u128)| (seeds.0 as u64, (seeds.1 - 1) as u64);
    let join =
        |a: Option<(u64, u64)>, b: (u64, u64)| Some(a.map_or(b, |a| (a.0.min(b.0), a.1.max(b.1))));
    let densities: Vec<f64> = parts
        .iter()
        .map(|part| {
            let keys = owned_keys(part.seeds, part.tokens, part.shares, ownership);
            if keys > 0.0 {
                (part.rows / keys).min(1.0)
            } else {
                1.0
            }
        })
        .collect();
    let token_cuts = cuts(parts.iter().map(|part| part.tokens));
    let mut pieces = Vec::with_capacity(token_cuts.len());
    for tokens in token_cuts.windows(2).map(|w| (w[0], w[1])) {
        let mut piece = Piece {
            tokens,
            rows: 0.0,
            seeds: None,
        };
        let here: Vec<usize> = (0..parts.len())
            .filter(|&i| parts[i].rows > 0.0 && within(widen(parts[i].tokens), widen(tokens)))
            .collect();
        if disjoint {
            // No key is in two inputs: each part's rows spread over its
            // tokens.
            for &i in &here {
                let part = &parts[i];
                let share = (tokens.1 - tokens.0) as f64 / (part.tokens.1 - part.tokens.0) as f64;
                piece.rows += part.rows * share;
                piece.seeds = join(piece.seeds, seed_extent(part.seeds));
            }
            pieces.push(piece);
            continue;
        }
        // Each part over its own region; sum over the cells of the grid
        // the boundaries of the parts here make.
        let seed_cuts = cuts(here.iter().map(|&i| parts[i].seeds));
        let share_cuts = cuts(here.iter().map(|&i| widen(parts[i].shares)));
        for seeds in seed_cuts.windows(2).map(|w| (w[0], w[1])) {
            let by_seed: Vec<usize> = here
                .iter()
                .copied()
                .filter(|&i| within(parts[i].seeds, seeds))
                .collect();
            if by_seed.is_empty() {
                continue;
            }
            for shares in share_cuts.windows(2).map(|w| (w[0], w[1])) {
                let covering = by_seed
                    .iter()
                    .filter(|&&i| within(widen(parts[i].shares), shares));
                let missing: f64 = covering.map(|&i| 1.0 - densities[i]).product();
                let shares = (shares.0 as u64, shares.1 as u64);
                let rows = owned_keys(seeds, tokens, shares, ownership) * (1.0 - missing);
                if rows > 0.0 {
                    piece.rows += rows;
                    piece.seeds = join(piece.seeds, seed_extent(seeds));
                }
            }
        }
        pieces.push(piece);
    }
    debug_assert!(
        pieces
            .windows(2)
            .all(|pair| pair[0].tokens.1 == pair[1].tokens.0),
        "the pieces are consecutive"
    );
    debug_assert!(pieces.iter().all(|piece| piece.rows >= 0.0));
    pieces
}

/// Most segments an output keeps; beyond, neighbours whose seed ranges
/// differ least are joined.
const MAX_SEGMENTS: usize = 16;

const _: () = assert!(MAX_SEGMENTS > 1);

/// A stretch of an output's ring while its segments are built.
#[derive(Clone, Copy, Debug)]
struct Stretch {
    token_end: u64,
    rows: f64,
    seeds: Option<(u64, u64)>,
}

/// The segments of an output over `range` holding `rows` rows: the
/// profile's pieces cut to the range, neighbours with the same seed range
/// (or no rows) joined, rows rounded so they add up.
fn segments_within(profile: &[Piece], range: (u64, u64), rows: u64) -> Vec<Segment> {
    let join = |a: Option<(u64, u64)>, b: Option<(u64, u64)>| match (a, b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, b) => a.or(b),
    };
    let mut stretches: Vec<Stretch> = Vec::new();
    for piece in profile {
        let low = piece.tokens.0.max(range.0);
        let high = piece.tokens.1.min(range.1);
        if low >= high {
            continue;
        }
        let share = (high - low) as f64 / (piece.tokens.1 - piece.tokens.0) as f64;
        let stretch = Stretch {
            token_end: high,
            rows: piece.rows * share,
            seeds: piece.seeds.filter(|_| piece.rows > 0.0),
        };
        match stretches.last_mut() {
            Some(last)
                if last.seeds == stretch.seeds
                    || stretch.seeds.is_none()
                    || last.seeds.is_none() =>
            {
                last.token_end = stretch.token_end;
                last.rows += stretch.rows;
                last.seeds = join(last.seeds, stretch.seeds);
            }
            _ => stretches.push(stretch),
        }
    }
    while stretches.len() > MAX_SEGMENTS {
        // Join the neighbours whose joined seed range grows least.
        let growth = |a: &Stretch, b: &Stretch| match (a.seeds, b.seeds) {
            (Some(x), Some(y)) => {
                let joined = x.1.max(y.1) - x.0.min(y.0);
                joined - (x.1 - x.0).max(y.1 - y.0)
            }
            _ => 0,
        };
        let at = (0..stretches.len() - 1)
            .min_by_key(|&i| growth(&stretches[i], &stretches[i + 1]))
            .expect("more than one stretch");
        let next = stretches.remove(at + 1);
        let kept = &mut stretches[at];
        kept.token_end = next.token_end;
        kept.rows += next.rows;
        kept.seeds = join(kept.seeds, next.seeds);
    }
    let total: f64 = stretches.iter().map(|stretch| stretch.rows).sum();
    let last = stretches.len().saturating_sub(1);
    let mut cumulative = 0.0;
    let mut assigned = 0u64;
    let segments = stretches
        .iter()
        .enumerate()
        .map(|(index, stretch)| {
            cumulative += stretch.rows;
            let upto = if index == last {
                rows
            } else if total > 0.0 {
                ((cumulative / total) * rows as f64).round() as u64
            } else {
                0
            }
            .clamp(assigned, rows);
            let segment_rows = upto - assigned;
            assigned = upto;
            let (first_key, last_key) = stretch.seeds.unwrap_or((0, 0));
            Segment {
                token_end: stretch.token_end,
                first_key,
                last_key,
                rows: segment_rows,
            }
        })
        .collect::<Vec<Segment>>();
    debug_assert!(
        segments.len() <= MAX_SEGMENTS,
        "at most {MAX_SEGMENTS} segments"
    );
    debug_assert!(
        segments.is_empty() || segments.iter().map(|segment| segment.rows).sum::<u64>() == rows,
        "the segments' rows add up to the output's"
    );
    segments
}

/// Expected distinct keys among `inputs` (see the module doc).
pub fn distinct_rows(inputs: &[SSTable], ownership: f64) -> u64 {
    let total_rows: u64 = inputs.iter().map(|sstable| sstable.rows).sum();
    if pairwise_disjoint(&parts_of(inputs)) {
        return total_rows;
    }
    let distinct: f64 = profile(inputs, ownership)
        .iter()
        .map(|piece| piece.rows)
        .sum();
    debug_assert!(distinct >= 0.0 && distinct.is_finite());
    (distinct.round() as u64).clamp(
        inputs.iter().map(|sstable| sstable.rows).max().unwrap_or(0),
        total_rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::RowVersion;

    fn sstable(generation: u64, first_key: u64, last_key: u64, rows: u64) -> SSTable {
        SSTable::for_test(generation, rows * 100, rows, first_key, last_key)
    }

    /// Reads, merges and writes the whole job, chunk by chunk.
    fn run(job: &mut CompactionJob) {
        while let Some(chunk) = job.next_chunk() {
            job.chunk_read(chunk.input_bytes);
            job.chunk_written(chunk.output_bytes);
        }
        assert!(job.is_complete());
    }

    #[test]
    fn fragments_of_wide_partitions_merge_into_their_union_capped_at_the_whole() {
        let whole_bytes = 50_000;
        // Every partition of keys 0..1000 whole (50 KB each), and 10-row
        // fragments (500 B) of 200 of them written since.
        let whole = SSTable::for_test(1, 1000 * whole_bytes, 1000, 0, 999);
        let fragments = SSTable::for_test(2, 200 * 500, 200, 0, 999);
        let merge = |inputs: Vec<SSTable>, wide: Option<u64>| {
            let mut job =
                CompactionJob::new(inputs, 9, 1, 1.0, 128 * 1024, 4).with_partition_bytes(wide);
            run(&mut job);
            let (outputs, _) = job.finish(SimTime::ZERO);
            (outputs[0].rows, outputs[0].data_bytes)
        };
        // The fragments add rows the whole partitions already hold.
        assert_eq!(
            merge(vec![whole.clone(), fragments.clone()], Some(whole_bytes)),
            (1000, 1000 * whole_bytes)
        );
        // Taken as one-row partitions the merge would keep one version of
        // each key, and lose most of the rows: the case this sizing is for.
        let (_, as_rows) = merge(vec![whole, fragments], None);
        assert!(as_rows < 1000 * whole_bytes * 9 / 10, "{as_rows}");
        // Fragments of the same partitions (each key in both) hold
        // different rows: their union is their sum while below the whole.
        let other = SSTable::for_test(3, 200 * 500, 200, 0, 199);
        let same = SSTable::for_test(4, 200 * 500, 200, 0, 199);
        assert_eq!(
            merge(vec![other.clone(), same.clone()], Some(whole_bytes)),
            (200, 400 * 500)
        );
        assert_eq!(merge(vec![other, same], None), (200, 200 * 500));
    }

    #[test]
    fn streamed_inputs_of_disjoint_ring_slices_keep_every_row() {
        use crate::token_set::TokenSet;
        let tenth = KEY_SHARE_ONE / 10;
        // Ten plans' SSTables, each every key of a tenth of the ring over
        // the same seed range (a shard owning all of it): no key is in two.
        let streamed: Vec<SSTable> = (0..10)
            .map(|i| SSTable {
                token_set: Some(TokenSet::from_slices(vec![(i * tenth, (i + 1) * tenth)])),
                ..sstable(i + 1, 0, 999_999, 100_000)
            })
            .collect();
        assert_eq!(distinct_rows(&streamed, 1.0), 1_000_000);
        let mut job = CompactionJob::new(streamed.clone(), 20, 1, 1.0, 128 * 1024, 4);
        run(&mut job);
        let (outputs, _) = job.finish(SimTime::ZERO);
        assert_eq!(outputs[0].rows, 1_000_000);
        assert_eq!(
            outputs[0].token_set.as_ref().map(TokenSet::width),
            Some(10 * tenth),
            "the output holds the union of the slices"
        );
        // Without their sets, the same SSTables look like ten samples of
        // the whole key range and merge to 1 - 0.9^10 of it.
        let plain: Vec<SSTable> = streamed
            .iter()
            .map(|s| SSTable {
                token_set: None,
                ..s.clone()
            })
            .collect();
        assert_eq!(distinct_rows(&plain, 1.0), 651_322);
        // Two copies of one slice (a plan streamed twice) are one.
        let twice = [
            streamed[3].clone(),
            SSTable {
                generation: 30,
                ..streamed[3].clone()
            },
        ];
        assert_eq!(distinct_rows(&twice, 1.0), 100_000);
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
    fn token_ranges_and_key_shares_bound_what_inputs_share() {
        let half = KEY_SHARE_ONE / 2;
        // Two full halves of the ring over the same keys share nothing.
        let mut left = sstable(1, 0, 999, 500);
        left.token_range = Some((0, half));
        let mut right = sstable(2, 0, 999, 500);
        right.token_range = Some((half, KEY_SHARE_ONE));
        assert_eq!(distinct_rows(&[left.clone(), right.clone()], 1.0), 1000);
        // Preloaded slices (key shares) likewise.
        let (mut a, mut b) = (sstable(3, 0, 999, 500), sstable(4, 0, 999, 500));
        a.key_share = Some((0, half));
        b.key_share = Some((half, KEY_SHARE_ONE));
        assert_eq!(distinct_rows(&[a, b], 1.0), 1000);
        // A full overwrite of the whole ring merged with the left half:
        // the left half's keys are all in the overwrite.
        let whole = sstable(5, 0, 999, 1000);
        assert_eq!(distinct_rows(&[whole.clone(), left.clone()], 1.0), 1000);
        // A sparse flush (10% of the keys) over a full left half: the half
        // holds 500, the flush adds 10% of the other 500.
        let sparse = sstable(6, 0, 999, 100);
        assert_eq!(distinct_rows(&[sparse, left], 1.0), 550);
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
        assert_eq!(job.output_count(), 1);
        let (outputs, replaced) = job.finish(SimTime::ZERO);
        assert_eq!(outputs.len(), 1);
        let output = &outputs[0];
        assert_eq!(
            (output.generation, output.rows, output.data_bytes),
            (9, 100, 10_000)
        );
        assert_eq!((output.level, output.token_range), (0, None));
        assert_eq!(replaced.len(), 2);
    }

    #[test]
    fn segments_keep_seed_ranges_where_they_lie_on_the_ring() {
        let half = KEY_SHARE_ONE / 2;
        // L2: keys 0..=999 of the ring's first half (all 500 of them there).
        let mut lower = sstable(1, 0, 999, 500);
        lower.level = 2;
        lower.token_range = Some((0, half));
        // L1: keys 1000..=1999 in the first half, 0..=1999 in the second
        // (an output that straddled an earlier promotion's gap).
        let mut upper = sstable(2, 0, 1999, 1500);
        upper.level = 1;
        upper.token_range = Some((0, KEY_SHARE_ONE));
        upper.segments = Some(
            vec![
                Segment {
                    token_end: half,
                    first_key: 1000,
                    last_key: 1999,
                    rows: 500,
                },
                Segment {
                    token_end: KEY_SHARE_ONE,
                    first_key: 0,
                    last_key: 1999,
                    rows: 1000,
                },
            ]
            .into(),
        );
        // No key is in both: every row is kept.
        assert_eq!(distinct_rows(&[lower.clone(), upper.clone()], 1.0), 2000);
        // One seed range for the whole L1 SSTable would spread its rows at
        // 0.75 over 0..=1999 and take a quarter of its first half for
        // copies of L2's keys.
        let mut averaged = upper.clone();
        averaged.segments = None;
        assert_eq!(distinct_rows(&[lower.clone(), averaged], 1.0), 1625);
        // Cut in two at the middle of the ring: each half is one piece
        // (0..=1999, dense).
        let mut job = CompactionJob::new(vec![lower, upper], 7, 0, 1.0, 4_096, 2)
            .into_level(2, Some(100_000));
        run(&mut job);
        let (outputs, _) = job.finish(SimTime::ZERO);
        assert_eq!(outputs.len(), 2);
        for output in &outputs {
            assert_eq!(
                (output.rows, output.first_key, output.last_key),
                (1000, 0, 1999)
            );
            assert_eq!(output.segments, None);
        }
        assert_eq!(outputs[0].token_range, Some((0, half)));
    }

    #[test]
    fn a_leveled_job_cuts_its_output_into_full_sstables_over_the_ring() {
        // 1,050 disjoint rows of 100 bytes: 105,000 bytes cut at 20,000.
        let inputs = vec![sstable(1, 0, 499, 500), sstable(2, 500, 1049, 550)];
        let mut job = CompactionJob::new(inputs, 20, 0, 1.0, 4_096, 3).into_level(1, Some(20_000));
        assert_eq!(job.output_count(), 6);
        run(&mut job);
        let (outputs, _) = job.finish(SimTime::ZERO);
        let sizes: Vec<u64> = outputs.iter().map(|s| s.data_bytes).collect();
        assert_eq!(sizes, vec![20_000, 20_000, 20_000, 20_000, 20_000, 5_000]);
        assert_eq!(outputs.iter().map(|s| s.rows).sum::<u64>(), 1050);
        let generations: Vec<u64> = outputs.iter().map(|s| s.generation).collect();
        assert_eq!(generations, (20..26).collect::<Vec<u64>>());
        // Consecutive token ranges tiling the whole ring (flushed inputs
        // span it), widths in proportion to bytes.
        let ranges: Vec<(u64, u64)> = outputs.iter().map(|s| s.token_range.unwrap()).collect();
        assert_eq!(ranges[0].0, 0);
        assert_eq!(ranges[5].1, KEY_SHARE_ONE);
        assert!(ranges.windows(2).all(|pair| pair[0].1 == pair[1].0));
        assert!(outputs.iter().all(|s| s.level == 1));
        // An output of exactly the cut size is one SSTable.
        let inputs = vec![sstable(1, 0, 99, 100), sstable(2, 100, 199, 100)];
        let job = CompactionJob::new(inputs, 1, 0, 1.0, 4_096, 3).into_level(2, Some(20_000));
        assert_eq!(job.output_count(), 1);
    }

    #[test]
    fn a_leveled_job_over_part_of_the_ring_splits_that_part() {
        let quarter = KEY_SHARE_ONE / 4;
        let mut a = sstable(1, 0, 999, 100);
        a.token_range = Some((quarter, 2 * quarter));
        a.level = 1;
        let mut b = sstable(2, 0, 999, 100);
        b.token_range = Some((2 * quarter, 3 * quarter));
        b.level = 1;
        let mut job =
            CompactionJob::new(vec![a, b], 5, 0, 1.0, 4_096, 3).into_level(2, Some(10_000));
        run(&mut job);
        let (outputs, _) = job.finish(SimTime::ZERO);
        assert_eq!(outputs.len(), 2);
        assert_eq!(outputs[0].token_range, Some((quarter, 2 * quarter)));
        assert_eq!(outputs[1].token_range, Some((2 * quarter, 3 * quarter)));
    }

    #[test]
    fn data_mode_outputs_hold_the_rows_of_their_token_ranges() {
        let version = RowVersion {
            timestamp: 1,
            value_bytes: 10,
        };
        let run_of = |keys: std::ops::Range<u64>| {
            SortedCells::from_sorted(keys.map(|key| (key, version)).collect())
        };
        let mut a = sstable(1, 0, 599, 600);
        a.cells = Some(run_of(0..600));
        let mut b = sstable(2, 300, 999, 700);
        b.cells = Some(run_of(300..1000));
        // 1,000 distinct keys of 130,000 input bytes / 1,300 rows: 100,000
        // bytes of output, cut at 30,000.
        let mut job =
            CompactionJob::new(vec![a, b], 1, 0, 1.0, 8_192, 4).into_level(1, Some(30_000));
        assert_eq!(job.output_shape(), (100_000, 1_000));
        assert_eq!(job.output_count(), 4);
        run(&mut job);
        let (outputs, _) = job.finish(SimTime::ZERO);
        let rows: Vec<u64> = outputs.iter().map(|s| s.rows).collect();
        assert_eq!(rows, vec![300, 300, 300, 100]);
        assert_eq!(outputs.iter().map(|s| s.data_bytes).sum::<u64>(), 100_000);
        let mut seen = 0;
        for output in &outputs {
            let (low, high) = output.token_range.unwrap();
            let cells = output.cells.as_ref().unwrap();
            assert_eq!(cells.len() as u64, output.rows);
            assert!(cells
                .cells()
                .iter()
                .all(|(key, _)| (low..high).contains(&key_position(*key))));
            seen += cells.len();
        }
        assert_eq!(seen, 1000);
    }
}
