//! The shard's side of compaction: picking jobs by the strategy over the
//! shard's SSTables, sending their chunks to the disk and their merges to
//! the CPU, replacing a finished job's inputs with its outputs, and the
//! backlog controllers that set the compaction and memtable groups'
//! shares. The jobs, the backlog tracker, the limiter and the counters are
//! the compaction manager's ([`crate::compaction::manager`]).

use super::{IoPurpose, Shard, TaskPurpose};
use crate::action::{Action, CpuTask, CpuWork, IoClass, IoKind, SchedulingGroup};
use crate::compaction::job::{ChunkRead, CompactionJob};
use crate::compaction::manager::{ChunkStart, CompactionIo, CompactionTask, Released};
use crate::compaction::{stcs, twcs, CompactionStrategy};
use crate::controller;
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
        self.maybe_drop_expired(now);
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

    /// A time-window table with a TTL: drops the SSTables whose every row
    /// expired more than `gc_grace_seconds` ago, whole and unread, when
    /// `expired_sstable_check_frequency_seconds` has passed since the last
    /// look (Cassandra's `getFullyExpiredSSTables` in TWCS's
    /// `getNextBackgroundSSTables`).
    fn maybe_drop_expired(&mut self, now: SimTime) {
        let CompactionStrategy::TimeWindow(options) = &self.config.compaction else {
            return;
        };
        if options.ttl_us.is_none() {
            return;
        }
        let now_us = now.as_nanos() / 1_000;
        if !self
            .compaction
            .expiry_check_due(now_us, options.expired_check_us)
        {
            return;
        }
        let compacting = self.compaction.compacting_generations();
        let expired = twcs::expired(&self.sstables, &compacting, options, now_us);
        if expired.is_empty() {
            return;
        }
        let mut dropped = Vec::with_capacity(expired.len());
        self.sstables.retain(|sstable| {
            let gone = expired.contains(&sstable.generation);
            if gone {
                dropped.push(sstable.clone());
            }
            !gone
        });
        self.sstables_epoch += 1;
        self.compaction.drop_expired(&dropped);
    }

    /// A job over `inputs`, its outputs numbered from the next generation.
    pub(super) fn new_compaction_job(&self, inputs: Vec<SSTable>, weight: u32) -> CompactionJob {
        debug_assert!(
            inputs.iter().all(|input| self
                .sstables
                .iter()
                .any(|held| held.generation == input.generation)),
            "a job over an SSTable the shard does not hold"
        );
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
        let job = self.compaction.launch(job);
        self.advance_compaction(now, job);
    }

    /// Cassandra: `concurrent_compactors` jobs are running, so no other
    /// starts (Scylla has no such limit, only its weights).
    pub(super) fn at_compactor_limit(&self) -> bool {
        self.config.concurrent_compactors.is_some_and(|limit| {
            debug_assert!(
                self.compaction.running() <= limit as usize,
                "more jobs than concurrent_compactors"
            );
            self.compaction.running() >= limit as usize
        })
    }

    /// The strategy's next job, if the compaction manager lets one start:
    /// its inputs, weight, output level and output size limit.
    pub(super) fn next_compaction(&mut self) -> Option<NextCompaction> {
        let compacting = self.compaction.compacting_generations();
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
                        &self.compaction.busy_weights(),
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
            CompactionStrategy::TimeWindow(options) => {
                let generations = twcs::pick(&self.sstables, &compacting, options)?;
                let (generations, weight) = if cassandra {
                    let weight = weight_of(&self.sstables, &generations);
                    (generations, weight)
                } else {
                    // Scylla's compaction manager trims and weighs every
                    // strategy's level-0 job alike (`trim_to_compact`
                    // down to the schema's min_threshold,
                    // `can_register_weight`).
                    let inputs: Vec<&SSTable> = self
                        .sstables
                        .iter()
                        .filter(|sstable| generations.contains(&sstable.generation))
                        .collect();
                    let job = stcs::trim_to_weight(
                        &inputs,
                        &self.compaction.busy_weights(),
                        options.stcs.min_threshold,
                    )?;
                    (job.generations, job.weight)
                };
                if generations.len() < 2 {
                    return None;
                }
                Some(NextCompaction {
                    generations,
                    weight,
                    level: 0,
                    max_sstable_bytes: None,
                })
            }
            CompactionStrategy::Leveled(options) => {
                // Scylla: `parallel_compaction() == false` for LCS.
                if !cassandra && self.compaction.running() > 0 {
                    return None;
                }
                let job = self
                    .compaction
                    .pick_leveled(&self.sstables, &compacting, options)?;
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
        while let Some(start) = self.compaction.next_chunk(now, job) {
            match start {
                ChunkStart::Now(chunk) => self.submit_compaction_read(job, chunk),
                ChunkStart::HeldBack { arm: Some(at) } => {
                    self.timers.set(TimerKind::CompactionThrottle, at)
                }
                ChunkStart::HeldBack { arm: None } => {}
            }
        }
    }

    pub(super) fn submit_compaction_read(&mut self, job: u32, chunk: ChunkRead) {
        debug_assert!(chunk.input_bytes > 0, "an empty compaction read");
        let purpose = IoPurpose::Compaction(CompactionIo::Read {
            job,
            input_bytes: chunk.input_bytes,
            output_bytes: chunk.output_bytes,
        });
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
        loop {
            match self.compaction.next_released(now) {
                Released::Read { job, chunk } => self.submit_compaction_read(job, chunk),
                Released::Rearm { at } => {
                    self.timers.set(TimerKind::CompactionThrottle, at);
                    return;
                }
                Released::Nothing => return,
            }
        }
    }

    /// A compaction CPU task finished.
    pub(super) fn compaction_task_done(&mut self, now: SimTime, task: CompactionTask) {
        let CompactionTask::Merge {
            job,
            input_bytes,
            output_bytes,
        } = task;
        match self.compaction.merged(job, input_bytes, output_bytes) {
            Some(shape) => {
                let disk_bytes = self.config.sstable_format.write_bytes(
                    output_bytes,
                    shape.total_bytes,
                    shape.rows,
                );
                self.submit_io(
                    IoKind::Write,
                    disk_bytes,
                    IoClass::Compaction,
                    IoPurpose::Compaction(CompactionIo::Write { job, output_bytes }),
                );
            }
            None => self.compaction_chunk_written(now, job, 0),
        }
    }

    /// A compaction I/O finished.
    pub(super) fn compaction_io_done(&mut self, now: SimTime, io: CompactionIo) {
        match io {
            CompactionIo::Read {
                job,
                input_bytes,
                output_bytes,
            } => {
                self.compaction.chunk_read(job, input_bytes);
                let task = self.new_task(TaskPurpose::Compaction(CompactionTask::Merge {
                    job,
                    input_bytes,
                    output_bytes,
                }));
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Compaction,
                    work: CpuWork::CompactionMerge { bytes: input_bytes },
                }));
            }
            CompactionIo::Write { job, output_bytes } => {
                self.compaction_chunk_written(now, job, output_bytes);
            }
        }
    }

    /// A chunk's output is on disk: continue the job, or put its outputs
    /// in place of its inputs.
    pub(super) fn compaction_chunk_written(&mut self, now: SimTime, job: u32, output_bytes: u64) {
        let Some(finished) = self.compaction.chunk_written(now, job, output_bytes) else {
            self.advance_compaction(now, job);
            return;
        };
        let inputs = &finished.inputs;
        self.sstables.retain(|sstable| {
            !inputs
                .iter()
                .any(|input| input.generation == sstable.generation)
        });
        self.sstables_epoch += 1;
        debug_assert!(
            finished.outputs.iter().all(|output| self
                .sstables
                .iter()
                .all(|held| held.generation != output.generation)),
            "a compaction output reuses a generation the shard holds"
        );
        self.sstables.extend(finished.outputs);
        self.maybe_start_compactions(now);
    }

    /// The compaction controller's input: the table's backlog over shard
    /// memory, counting what running compactions have consumed and what
    /// flushes and compactions have written so far.
    pub(super) fn compaction_backlog(&self) -> f64 {
        let backlog_bytes = self
            .compaction
            .backlog_bytes(self.write.flush_written_bytes());
        let input = controller::compaction_input(backlog_bytes, self.config.memory_bytes);
        debug_assert!(
            input.is_finite() && input >= 0.0,
            "compaction input {input}"
        );
        input
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
        debug_assert!(shares.is_finite() && shares >= 0.0, "shares {shares}");
        if let Some(tick) = tick {
            self.timers.set(timer, now + tick);
        }
        let changed = match group {
            SchedulingGroup::Compaction => self.compaction.set_shares(shares),
            _ => std::mem::replace(&mut self.flush_shares, shares) != shares,
        };
        if changed {
            self.actions.push_back(Action::SetShares { group, shares });
        }
    }
}
