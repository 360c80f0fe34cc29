//! A shard's compaction state, in one place: the jobs running, the table's
//! backlog tracker, leveled compaction's memory between picks, Cassandra's
//! compaction throughput limiter with the reads it holds back, the
//! counters, and the CPU shares the compaction controller last gave.
//!
//! The shard picks, launches and advances jobs (`crate::shard`'s
//! compaction module, which reads the shard's SSTables and sends the I/O);
//! the state those steps share lives here, and what must hold between its
//! parts is checked here ([`CompactionManager::check_invariants`]).

use std::collections::VecDeque;

use slab::Slab;
use units::SimTime;

use crate::compaction::job::{ChunkRead, CompactionJob};
use crate::compaction::{LcsState, RateLimiter, TableBacklog};

/// A shard's compaction state.
#[derive(Debug)]
pub struct CompactionManager {
    /// The jobs running, by the index their tasks and I/Os carry.
    pub(crate) jobs: Slab<CompactionJob>,
    /// The table's backlog tracker (its strategy's).
    pub(crate) backlog: TableBacklog,
    /// Leveled compaction's memory between picks.
    pub(crate) lcs: LcsState,
    /// `compaction_throughput_mb_per_sec`'s token bucket, if set.
    pub(crate) limiter: Option<RateLimiter>,
    /// Compaction reads waiting for the limiter, in grant order: (when
    /// granted, job, chunk).
    pub(crate) throttled_reads: VecDeque<(SimTime, u32, ChunkRead)>,
    /// Jobs finished since the shard started (or was restarted with its
    /// counters carried).
    pub(crate) completed: u64,
    /// Input bytes merged since then.
    pub(crate) bytes_compacted: u64,
    /// The compaction group's CPU shares, as the controller last set them
    /// (0 without a controller).
    pub(crate) shares: f64,
}

impl CompactionManager {
    /// No job running, the table's `backlog` tracker, and the throughput
    /// `limiter` if the preset has one.
    pub fn new(backlog: TableBacklog, limiter: Option<RateLimiter>) -> CompactionManager {
        CompactionManager {
            jobs: Slab::new(),
            backlog,
            lcs: LcsState::new(),
            limiter,
            throttled_reads: VecDeque::new(),
            completed: 0,
            bytes_compacted: 0,
            shares: 0.0,
        }
    }

    /// Jobs running.
    pub fn running(&self) -> usize {
        self.jobs.len()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::{CompactionStrategy, StcsOptions};

    fn manager(limiter: bool) -> CompactionManager {
        let strategy = CompactionStrategy::SizeTiered(StcsOptions::default());
        let limiter = limiter.then(|| RateLimiter::new(16 << 20, SimTime::ZERO));
        CompactionManager::new(TableBacklog::new(&strategy), limiter)
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
