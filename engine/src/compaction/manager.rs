//! A shard's compaction state, in one place: the jobs running, the table's
//! backlog tracker, leveled compaction's memory between picks, Cassandra's
//! compaction throughput limiter with the reads it holds back, the
//! counters, and the CPU shares the compaction controller last gave.
//!
//! The shard picks jobs (the strategy reads its SSTables), sends their
//! reads and writes to the disk and their merges to the CPU, and keeps
//! the SSTable set; what those steps share lives here, behind methods
//! ([`CompactionManager::launch`], [`CompactionManager::next_chunk`],
//! [`CompactionManager::chunk_written`], ...), and what must hold between
//! its parts is checked here ([`CompactionManager::check_invariants`]).
//! The CPU tasks and I/Os a job issues carry a [`CompactionTask`] or a
//! [`CompactionIo`], which the shard hands back here when they finish.

use std::collections::VecDeque;

use slab::Slab;
use units::SimTime;

use crate::compaction::job::{ChunkRead, CompactionJob};
use crate::compaction::lcs::{self, LcsJob, LcsOptions};
use crate::compaction::strategy::BacklogPart;
use crate::compaction::{CompactionStrategy, LcsState, RateLimiter, TableBacklog};
use crate::sstable::SSTable;

/// A compaction CPU task, as its job's tasks carry it.
#[derive(Clone, Copy, Debug)]
pub enum CompactionTask {
    /// Job `job` merges a chunk of `input_bytes` into `output_bytes`.
    Merge {
        /// The job's index.
        job: u32,
        /// The chunk's input bytes.
        input_bytes: u64,
        /// What it merges into.
        output_bytes: u64,
    },
}

/// A compaction I/O, as its job's I/Os carry it.
#[derive(Clone, Copy, Debug)]
pub enum CompactionIo {
    /// A chunk of job `job`'s input, to merge into `output_bytes`.
    Read {
        /// The job's index.
        job: u32,
        /// The chunk's input bytes.
        input_bytes: u64,
        /// What it merges into.
        output_bytes: u64,
    },
    /// A chunk of job `job`'s output.
    Write {
        /// The job's index.
        job: u32,
        /// The chunk's output bytes.
        output_bytes: u64,
    },
}

/// What a job's next chunk read may do ([`CompactionManager::next_chunk`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkStart {
    /// Read it now.
    Now(ChunkRead),
    /// The limiter holds it back; `arm` is when the throttle timer must
    /// fire, if it is the first read held.
    HeldBack {
        /// When the throttle timer must fire.
        arm: Option<SimTime>,
    },
}

/// What the limiter's timer releases ([`CompactionManager::next_released`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// Job `job`'s chunk may be read now.
    Read {
        /// The job's index.
        job: u32,
        /// The chunk.
        chunk: ChunkRead,
    },
    /// The next held-back read is granted at `at`: re-arm the timer.
    Rearm {
        /// When it is granted.
        at: SimTime,
    },
    /// Nothing is held back.
    Nothing,
}

/// The size of a merged chunk's output SSTable so far, which the disk
/// write of the chunk is priced by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputShape {
    /// The output's bytes once complete.
    pub total_bytes: u64,
    /// Its rows.
    pub rows: u64,
}

/// A finished job: the SSTables it wrote (empty ones dropped) and those
/// it replaced.
#[derive(Debug)]
pub struct Finished {
    /// The SSTables it wrote, empty ones dropped.
    pub outputs: Vec<SSTable>,
    /// The SSTables they replace.
    pub inputs: Vec<SSTable>,
}

/// A shard's compaction state.
#[derive(Debug)]
pub struct CompactionManager {
    /// The jobs running, by the index their tasks and I/Os carry.
    jobs: Slab<CompactionJob>,
    /// The table's backlog tracker (its strategy's).
    backlog: TableBacklog,
    /// Whether the table is leveled (its picks keep state in `lcs`).
    leveled: bool,
    /// Leveled compaction's memory between picks.
    lcs: LcsState,
    /// `compaction_throughput_mb_per_sec`'s token bucket, if set.
    limiter: Option<RateLimiter>,
    /// Compaction reads waiting for the limiter, in grant order: (when
    /// granted, job, chunk).
    throttled_reads: VecDeque<(SimTime, u32, ChunkRead)>,
    /// Jobs finished since the shard started (or was restarted with its
    /// counters carried).
    completed: u64,
    /// Input bytes merged since then.
    bytes_compacted: u64,
    /// The compaction group's CPU shares, as the controller last set them
    /// (0 without a controller).
    shares: f64,
    /// A time-window table's next look for expired SSTables, microseconds
    /// (`None` before the first).
    next_expiry_check_us: Option<u64>,
    /// Expired SSTables dropped since the shard started.
    expired_dropped: u64,
}

impl CompactionManager {
    /// No job running, the backlog tracker of the table's `strategy`, and
    /// the throughput `limiter` if the preset has one.
    pub fn new(strategy: &CompactionStrategy, limiter: Option<RateLimiter>) -> CompactionManager {
        CompactionManager {
            jobs: Slab::new(),
            backlog: TableBacklog::new(strategy),
            leveled: matches!(strategy, CompactionStrategy::Leveled(_)),
            lcs: LcsState::new(),
            limiter,
            throttled_reads: VecDeque::new(),
            completed: 0,
            bytes_compacted: 0,
            shares: 0.0,
            next_expiry_check_us: None,
            expired_dropped: 0,
        }
    }

    // The jobs.

    /// Jobs running.
    pub fn running(&self) -> usize {
        self.jobs.len()
    }

    /// The weights of the running jobs (Scylla runs one job per weight).
    pub fn busy_weights(&self) -> Vec<u32> {
        self.jobs.iter().map(|(_, job)| job.weight()).collect()
    }

    /// Generations of the SSTables running jobs are merging.
    pub fn compacting_generations(&self) -> Vec<u64> {
        self.jobs
            .iter()
            .flat_map(|(_, job)| job.input_generations())
            .collect()
    }

    /// The leveled strategy's next job over `sstables` (leveled
    /// compaction remembers where its last picks ended).
    pub fn pick_leveled(
        &mut self,
        sstables: &[SSTable],
        compacting: &[u64],
        options: &LcsOptions,
    ) -> Option<LcsJob> {
        debug_assert!(self.leveled, "a leveled pick on a size-tiered table");
        lcs::next_job(sstables, compacting, options, &mut self.lcs)
    }

    /// Registers `job`; returns the index its tasks and I/Os carry.
    pub fn launch(&mut self, job: CompactionJob) -> u32 {
        debug_assert!(
            {
                let running = self.compacting_generations();
                job.input_generations().all(|g| !running.contains(&g))
            },
            "a job over SSTables another job holds"
        );
        u32::try_from(self.jobs.insert(job)).expect("fewer than 2^32 jobs")
    }

    /// Job `job`'s next chunk read, through the limiter: `None` once its
    /// pipeline is full.
    pub fn next_chunk(&mut self, now: SimTime, job: u32) -> Option<ChunkStart> {
        let chunk = self.jobs[job as usize].next_chunk()?;
        let granted = match self.limiter.as_mut() {
            Some(limiter) => limiter.reserve(now, chunk.input_bytes),
            None => now,
        };
        if granted <= now && self.throttled_reads.is_empty() {
            return Some(ChunkStart::Now(chunk));
        }
        self.throttled_reads.push_back((granted, job, chunk));
        let arm = (self.throttled_reads.len() == 1).then_some(granted);
        Some(ChunkStart::HeldBack { arm })
    }

    /// The limiter's timer fired at `now`: the next held-back read granted
    /// by then, or when to fire again.
    pub fn next_released(&mut self, now: SimTime) -> Released {
        match self.throttled_reads.front() {
            None => Released::Nothing,
            Some(&(granted, _, _)) if granted > now => Released::Rearm { at: granted },
            Some(_) => {
                let (_, job, chunk) = self.throttled_reads.pop_front().expect("checked");
                Released::Read { job, chunk }
            }
        }
    }

    /// A chunk of `input_bytes` of job `job` was read.
    pub fn chunk_read(&mut self, job: u32, input_bytes: u64) {
        self.jobs[job as usize].chunk_read(input_bytes);
    }

    /// A chunk of `input_bytes` of job `job` was merged into
    /// `output_bytes`: the output's shape to price its write by, or `None`
    /// if the chunk wrote nothing.
    pub fn merged(&mut self, job: u32, input_bytes: u64, output_bytes: u64) -> Option<OutputShape> {
        self.bytes_compacted += input_bytes;
        (output_bytes > 0).then(|| {
            let (total_bytes, rows) = self.jobs[job as usize].output_shape();
            OutputShape { total_bytes, rows }
        })
    }

    /// `output_bytes` of job `job`'s output are on disk: the job, if that
    /// finished it (the backlog then counts its outputs instead of its
    /// inputs); `None` while it runs on.
    pub fn chunk_written(&mut self, now: SimTime, job: u32, output_bytes: u64) -> Option<Finished> {
        self.jobs[job as usize].chunk_written(output_bytes);
        if !self.jobs[job as usize].is_complete() {
            return None;
        }
        let (outputs, inputs) = self.jobs.remove(job as usize).finish(now);
        for input in &inputs {
            self.backlog.remove_sstable(input);
        }
        let outputs: Vec<SSTable> = outputs
            .into_iter()
            .filter(|output| output.rows > 0)
            .collect();
        if self.leveled {
            self.lcs.notify_completion(&inputs, &outputs);
        }
        for output in &outputs {
            self.backlog.add_sstable(output);
        }
        self.completed += 1;
        Some(Finished { outputs, inputs })
    }

    // The backlog.

    /// An SSTable joined the table (flushed, streamed, preloaded).
    pub fn add_sstable(&mut self, sstable: &SSTable) {
        self.backlog.add_sstable(sstable);
    }

    /// Whether a time-window table looks for expired SSTables at `now_us`:
    /// once every `every_us` (the first look at the first call); a look
    /// that is due is taken.
    pub fn expiry_check_due(&mut self, now_us: u64, every_us: u64) -> bool {
        match self.next_expiry_check_us {
            Some(next) if now_us < next => false,
            _ => {
                self.next_expiry_check_us = Some(now_us.saturating_add(every_us));
                true
            }
        }
    }

    /// Fully expired SSTables left the table without a rewrite.
    pub fn drop_expired(&mut self, sstables: &[SSTable]) {
        for sstable in sstables {
            self.backlog.remove_sstable(sstable);
        }
        self.expired_dropped += sstables.len() as u64;
    }

    /// The table's backlog in bytes, counting what running jobs have
    /// consumed of their inputs and written, and what a flush under way
    /// has written (`flush_written`: its bytes, and its memtable's newest
    /// write).
    pub fn backlog_bytes(&self, flush_written: Option<(u64, u64)>) -> f64 {
        let compacting: Vec<BacklogPart> = self
            .jobs
            .iter()
            .flat_map(|(_, job)| {
                job.inputs().iter().map(move |input| BacklogPart {
                    level: input.level,
                    max_timestamp_us: input.max_timestamp_us,
                    bytes: input.data_bytes,
                    consumed: job.consumed_bytes_of(input),
                })
            })
            .collect();
        let partial_writes: Vec<BacklogPart> = self
            .jobs
            .iter()
            .map(|(_, job)| BacklogPart {
                level: job.output_level(),
                max_timestamp_us: job.max_timestamp_us(),
                bytes: job.written_bytes(),
                consumed: 0,
            })
            .chain(flush_written.map(|(bytes, max_timestamp_us)| BacklogPart {
                level: 0,
                max_timestamp_us,
                bytes,
                consumed: 0,
            }))
            .collect();
        let backlog = self.backlog.backlog_bytes(&compacting, &partial_writes);
        debug_assert!(backlog >= 0.0, "a negative backlog {backlog}");
        backlog
    }

    // The controller's shares.

    /// The shares the controller last gave.
    pub fn shares(&self) -> f64 {
        self.shares
    }

    /// The controller gives `shares`; returns whether they changed.
    pub fn set_shares(&mut self, shares: f64) -> bool {
        debug_assert!(shares.is_finite() && shares >= 0.0, "shares {shares}");
        let changed = self.shares != shares;
        self.shares = shares;
        changed
    }

    // Counters.

    /// Jobs finished and input bytes merged since the start.
    pub fn counters(&self) -> CompactionCounters {
        CompactionCounters {
            completed: self.completed,
            bytes_compacted: self.bytes_compacted,
            expired_dropped: self.expired_dropped,
        }
    }

    /// A restarted shard's manager carries its earlier lives' counters.
    pub fn carry(&mut self, counters: CompactionCounters) {
        assert!(
            self.jobs.is_empty()
                && self.completed == 0
                && self.bytes_compacted == 0
                && self.expired_dropped == 0,
            "counters carried into a manager in use"
        );
        self.completed = counters.completed;
        self.bytes_compacted = counters.bytes_compacted;
        self.expired_dropped = counters.expired_dropped;
    }

    /// What must hold: a held-back read belongs to a running job and is
    /// granted no earlier than the one before it (the limiter grants in
    /// order), nothing is held back without a limiter, and the shares are
    /// a finite, non-negative number.
    pub fn check_invariants(&self) {
        assert!(
            self.limiter.is_some() || self.throttled_reads.is_empty(),
            "reads held back with no limiter"
        );
        let mut granted = SimTime::ZERO;
        for &(at, job, _) in &self.throttled_reads {
            assert!(
                self.jobs.contains(job as usize),
                "a held-back read of job {job}, which is not running"
            );
            assert!(at >= granted, "held-back reads out of grant order");
            granted = at;
        }
        assert!(
            self.shares.is_finite() && self.shares >= 0.0,
            "compaction shares {}",
            self.shares
        );
    }
}

/// What a compaction manager has done since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionCounters {
    /// Jobs finished.
    pub completed: u64,
    /// Input bytes merged.
    pub bytes_compacted: u64,
    /// Fully expired SSTables dropped whole (time-window tables with a
    /// TTL).
    pub expired_dropped: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::StcsOptions;

    fn manager(limiter: bool) -> CompactionManager {
        let strategy = CompactionStrategy::SizeTiered(StcsOptions::default());
        let limiter = limiter.then(|| RateLimiter::new(16 << 20, SimTime::ZERO));
        CompactionManager::new(&strategy, limiter)
    }

    #[test]
    fn a_new_manager_holds_and_checks() {
        let manager = manager(true);
        assert_eq!(manager.running(), 0);
        manager.check_invariants();
    }

    /// A read of job `job` held back until time zero.
    fn held_back(job: u32) -> (SimTime, u32, ChunkRead) {
        let chunk = ChunkRead {
            input_bytes: 1,
            output_bytes: 1,
        };
        (SimTime::ZERO, job, chunk)
    }

    #[test]
    #[should_panic(expected = "not running")]
    fn a_read_held_back_for_a_job_that_is_not_running_is_caught() {
        let mut manager = manager(true);
        manager.throttled_reads.push_back(held_back(3));
        manager.check_invariants();
    }

    #[test]
    #[should_panic(expected = "no limiter")]
    fn reads_held_back_without_a_limiter_are_caught() {
        let mut manager = manager(false);
        manager.throttled_reads.push_back(held_back(0));
        manager.check_invariants();
    }

    #[test]
    #[should_panic(expected = "compaction shares")]
    fn shares_that_are_not_a_number_are_caught() {
        let mut manager = manager(false);
        manager.shares = f64::NAN;
        manager.check_invariants();
    }
}
