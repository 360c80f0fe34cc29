//! The compaction manager: picking jobs by the strategy, running them chunk by
//! chunk under the throughput limiter and the compactor limit, the table's
//! backlog, and the backlog controllers that set the compaction and memtable
//! groups' shares.

use super::{IoPurpose, Shard};
use crate::action::{Action, IoClass, IoKind, SchedulingGroup};
use crate::compaction::job::{ChunkRead, CompactionJob};
use crate::compaction::{lcs, stcs, CompactionStrategy};
use crate::controller;
use crate::flush::FlushJob;
use crate::sstable::SSTable;
use crate::timer::TimerKind;
use units::SimTime;

/// The next compaction job a strategy picked and the manager lets start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct NextCompaction {
    /// Generations of its input SSTables (at least two for size-tiered).
    generations: Vec<u64>,
    /// Its weight (Scylla's compaction manager runs one job per weight).
    weight: u32,
    /// The level its outputs go to (leveled; 0 for size-tiered).
    level: u32,
    /// The size an output SSTable is cut at (leveled: 160 MiB), if any.
    max_sstable_bytes: Option<u64>,
}

impl Shard {
    /// Starts every compaction the table's strategy asks for that the
    /// compaction manager lets run: Scylla's (one size-tiered job per
    /// weight, one leveled job per table) or, with `concurrent_compactors`,
    /// Cassandra's (at most that many jobs, over SSTables no job holds).
    pub(super) fn maybe_start_compactions(&mut self, now: SimTime) {
        // Each new job takes at least one SSTable no running job holds, so
        // this ends.
        for _ in 0..=self.sstables.len() {
            if self.at_compactor_limit() {
                return;
            }
            let Some(NextCompaction {
                generations,
                weight,
                level,
                max_sstable_bytes,
            }) = self.next_compaction()
            else {
                return;
            };
            let inputs: Vec<SSTable> = self
                .sstables
                .iter()
                .filter(|sstable| generations.contains(&sstable.generation))
                .cloned()
                .collect();
            let job = self
                .new_compaction_job(inputs, weight)
                .into_level(level, max_sstable_bytes);
            self.launch_compaction(now, job);
        }
    }

    /// A job over `inputs`, its outputs numbered from the next generation.
    pub(super) fn new_compaction_job(&self, inputs: Vec<SSTable>, weight: u32) -> CompactionJob {
        CompactionJob::new(
            inputs,
            self.next_sstable_generation,
            weight,
            self.config.key_ownership_fraction,
            self.config.compaction_chunk_bytes,
            self.config.compaction_chunks_in_flight,
        )
        .with_partition_bytes(self.config.partition_bytes)
    }

    /// Registers `job` (its outputs take their generations) and starts
    /// its pipeline.
    pub(super) fn launch_compaction(&mut self, now: SimTime, job: CompactionJob) {
        self.next_sstable_generation += job.output_count();
        let job = self.compaction.jobs.insert(job) as u32;
        self.advance_compaction(now, job);
    }

    /// Cassandra: `concurrent_compactors` jobs are running, so no other
    /// starts (Scylla has no such limit, only its weights).
    pub(super) fn at_compactor_limit(&self) -> bool {
        self.config
            .concurrent_compactors
            .is_some_and(|limit| self.compaction.jobs.len() >= limit as usize)
    }

    /// The weights of the running jobs (Scylla runs one job per weight).
    pub(super) fn busy_weights(&self) -> Vec<u32> {
        self.compaction
            .jobs
            .iter()
            .map(|(_, job)| job.weight())
            .collect()
    }

    /// Generations of the SSTables running jobs are merging.
    pub(super) fn compacting_generations(&self) -> Vec<u64> {
        self.compaction
            .jobs
            .iter()
            .flat_map(|(_, job)| job.input_generations())
            .collect()
    }

    /// The strategy's next job, if the compaction manager lets one start:
    /// its inputs, weight, output level and output size limit.
    pub(super) fn next_compaction(&mut self) -> Option<NextCompaction> {
        let compacting = self.compacting_generations();
        let cassandra = self.config.concurrent_compactors.is_some();
        let weight_of = |sstables: &[SSTable], generations: &[u64]| {
            stcs::job_weight(
                sstables
                    .iter()
                    .filter(|sstable| generations.contains(&sstable.generation))
                    .map(|sstable| sstable.data_bytes)
                    .sum(),
            )
        };
        match &self.config.compaction {
            CompactionStrategy::SizeTiered(options) => {
                let generations = if cassandra {
                    stcs::pick(
                        &self.sstables,
                        &compacting,
                        options,
                        self.config.compaction_enforce_min_threshold,
                    )?
                } else {
                    stcs::next_job(
                        &self.sstables,
                        &compacting,
                        &self.busy_weights(),
                        options,
                        self.config.compaction_enforce_min_threshold,
                    )?
                    .generations
                };
                if generations.len() < 2 {
                    return None;
                }
                let weight = weight_of(&self.sstables, &generations);
                Some(NextCompaction {
                    generations,
                    weight,
                    level: 0,
                    max_sstable_bytes: None,
                })
            }
            CompactionStrategy::Leveled(options) => {
                // Scylla: `parallel_compaction() == false` for LCS.
                if !cassandra && !self.compaction.jobs.is_empty() {
                    return None;
                }
                let job = lcs::next_job(
                    &self.sstables,
                    &compacting,
                    options,
                    &mut self.compaction.lcs,
                )?;
                let weight = weight_of(&self.sstables, &job.generations);
                Some(NextCompaction {
                    generations: job.generations,
                    weight,
                    level: job.level,
                    max_sstable_bytes: job.max_sstable_bytes,
                })
            }
        }
    }

    /// Fills the job's pipeline with chunk reads, each after the
    /// throughput limit (if any) grants its bytes.
    pub(super) fn advance_compaction(&mut self, now: SimTime, job: u32) {
        while let Some(chunk) = self.compaction.jobs[job as usize].next_chunk() {
            let granted = match self.compaction.limiter.as_mut() {
                Some(limiter) => limiter.reserve(now, chunk.input_bytes),
                None => now,
            };
            if granted <= now && self.compaction.throttled_reads.is_empty() {
                self.submit_compaction_read(job, chunk);
            } else {
                self.compaction
                    .throttled_reads
                    .push_back((granted, job, chunk));
                if self.compaction.throttled_reads.len() == 1 {
                    self.timers.set(TimerKind::CompactionThrottle, granted);
                }
            }
        }
    }

    pub(super) fn submit_compaction_read(&mut self, job: u32, chunk: ChunkRead) {
        let purpose = IoPurpose::CompactionRead {
            job,
            input_bytes: chunk.input_bytes,
            output_bytes: chunk.output_bytes,
        };
        self.submit_io(
            IoKind::Read,
            chunk.input_bytes,
            IoClass::Compaction,
            purpose,
        );
    }

    /// The throughput limit's timer: submits the reads granted by now and
    /// re-arms for the next.
    pub(super) fn release_throttled_compaction_reads(&mut self, now: SimTime) {
        while let Some(&(granted, job, chunk)) = self.compaction.throttled_reads.front() {
            if granted > now {
                self.timers.set(TimerKind::CompactionThrottle, granted);
                return;
            }
            self.compaction.throttled_reads.pop_front();
            self.submit_compaction_read(job, chunk);
        }
    }

    /// A chunk's output is on disk: continue the job, or seal its outputs
    /// and replace its inputs.
    pub(super) fn compaction_chunk_written(&mut self, now: SimTime, job: u32, output_bytes: u64) {
        self.compaction.jobs[job as usize].chunk_written(output_bytes);
        if !self.compaction.jobs[job as usize].is_complete() {
            self.advance_compaction(now, job);
            return;
        }
        let (outputs, inputs) = self.compaction.jobs.remove(job as usize).finish(now);
        for input in &inputs {
            self.compaction.backlog.remove_sstable(input);
        }
        self.sstables.retain(|sstable| {
            !inputs
                .iter()
                .any(|input| input.generation == sstable.generation)
        });
        self.sstables_epoch += 1;
        let outputs: Vec<SSTable> = outputs
            .into_iter()
            .filter(|output| output.rows > 0)
            .collect();
        if matches!(self.config.compaction, CompactionStrategy::Leveled(_)) {
            self.compaction.lcs.notify_completion(&inputs, &outputs);
        }
        for output in outputs {
            self.compaction.backlog.add_sstable(&output);
            self.sstables.push(output);
        }
        self.compaction.completed += 1;
        self.maybe_start_compactions(now);
    }

    /// The compaction controller's input: the table's backlog over shard
    /// memory, counting what running compactions have consumed and what
    /// flushes and compactions have written so far.
    pub(super) fn compaction_backlog(&self) -> f64 {
        let compacting: Vec<(u32, u64, u64)> = self
            .compaction
            .jobs
            .iter()
            .flat_map(|(_, job)| {
                job.inputs()
                    .iter()
                    .map(move |input| (input.level, input.data_bytes, job.consumed_bytes_of(input)))
            })
            .collect();
        let partial_writes: Vec<(u32, u64)> = self
            .compaction
            .jobs
            .iter()
            .map(|(_, job)| (job.output_level(), job.written_bytes()))
            .chain(
                self.flushing
                    .as_ref()
                    .map(|flush| (0, FlushJob::written_bytes(flush))),
            )
            .collect();
        let backlog_bytes = self
            .compaction
            .backlog
            .backlog_bytes(&compacting, &partial_writes);
        controller::compaction_input(backlog_bytes, self.config.memory_bytes)
    }

    /// A controller's tick: map its input through the curve to the group's
    /// shares, and re-arm.
    pub(super) fn adjust_controller(
        &mut self,
        now: SimTime,
        timer: TimerKind,
        group: SchedulingGroup,
        input: f64,
    ) {
        let controller = match group {
            SchedulingGroup::Compaction => &self.config.compaction_controller,
            _ => &self.config.flush_controller,
        };
        let Some(controller) = controller else { return };
        let (shares, tick) = (controller.shares_for(input), controller.tick());
        if let Some(tick) = tick {
            self.timers.set(timer, now + tick);
        }
        let last = match group {
            SchedulingGroup::Compaction => &mut self.compaction.shares,
            _ => &mut self.flush_shares,
        };
        if *last != shares {
            *last = shares;
            self.actions.push_back(Action::SetShares { group, shares });
        }
    }
}
