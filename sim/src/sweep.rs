//! Many independent runs in parallel: the one runner that `twin sweep`,
//! `plan`, `validate`, `explore` and `regress` (and the real scorecard's
//! repeats) share.
//!
//! Parallelism lives across runs, never inside one: each run is a whole
//! simulation on one thread, a pure function of its input, so the runner
//! only decides which thread runs it and when. The results come back in
//! the input's order whatever the threads' timing, so a command's outputs
//! are the same with one job or many. Slicing the runs over machines
//! (`--shard i/n`) is the caller's choice of which runs to hand in.
//!
//! Progress is told through a callback, as each run finishes (from the
//! thread that ran it, in no particular order); this crate draws nothing,
//! and the command line turns the callback into its progress bar.

use std::fmt;

/// Why a runner cannot start.
#[derive(Debug)]
pub enum RunnerError {
    /// Zero runs at once were asked for.
    NoJobs,
    /// The threads could not be started.
    Pool(rayon::ThreadPoolBuildError),
}

impl fmt::Display for RunnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerError::NoJobs => write!(f, "jobs must be at least 1"),
            RunnerError::Pool(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for RunnerError {}

/// Runs independent runs `jobs` at once on a pool of its own.
pub struct Runner {
    pool: rayon::ThreadPool,
    jobs: usize,
}

impl Runner {
    /// A runner of `jobs` runs at once (default: the machine's cores).
    pub fn new(jobs: Option<usize>) -> Result<Runner, RunnerError> {
        let jobs = jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        if jobs == 0 {
            return Err(RunnerError::NoJobs);
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build()
            .map_err(RunnerError::Pool)?;
        Ok(Runner { pool, jobs })
    }

    /// How many runs go at once.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Runs `work` on every one of `runs`, `jobs` at once, and gives the
    /// results in `runs`' order. `done` is told each run's index in `runs`
    /// and its result as it finishes.
    pub fn run_all<T: Sync, R: Send>(
        &self,
        runs: &[T],
        work: impl Fn(&T) -> R + Sync,
        done: impl Fn(usize, &R) + Sync,
    ) -> Vec<R> {
        use rayon::prelude::*;
        let results: Vec<R> = self.pool.install(|| {
            runs.par_iter()
                .enumerate()
                .map(|(index, run)| {
                    let result = work(run);
                    done(index, &result);
                    result
                })
                .collect()
        });
        debug_assert_eq!(results.len(), runs.len(), "one result per run");
        results
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    #[test]
    fn results_come_in_the_input_order_whatever_the_jobs() {
        let runs: Vec<u64> = (0..64).collect();
        // Later runs finish first: the results' order must not follow.
        let work = |&run: &u64| {
            std::thread::sleep(std::time::Duration::from_micros(64 - run));
            run * run
        };
        let expected: Vec<u64> = runs.iter().map(|run| run * run).collect();
        for jobs in [1, 2, 4] {
            let runner = Runner::new(Some(jobs)).expect("a pool starts");
            assert_eq!(runner.jobs(), jobs);
            assert_eq!(runner.run_all(&runs, work, |_, _| {}), expected);
        }
    }

    #[test]
    fn every_run_is_told_done_once_with_its_index_and_result() {
        let runs: Vec<u64> = (0..20).collect();
        let runner = Runner::new(Some(3)).expect("a pool starts");
        let told = Mutex::new(Vec::new());
        let count = AtomicUsize::new(0);
        let results = runner.run_all(
            &runs,
            |&run| run + 100,
            |index, &result| {
                count.fetch_add(1, Ordering::Relaxed);
                told.lock().expect("no panic").push((index, result));
            },
        );
        assert_eq!(count.load(Ordering::Relaxed), runs.len());
        let mut told = told.into_inner().expect("no panic");
        told.sort_unstable();
        let expected: Vec<(usize, u64)> = results.iter().copied().enumerate().collect();
        assert_eq!(told, expected);
    }

    #[test]
    fn no_runs_give_no_results_and_zero_jobs_are_refused() {
        let runner = Runner::new(Some(2)).expect("a pool starts");
        let none: Vec<u8> = Vec::new();
        assert!(runner.run_all(&none, |&run| run, |_, _| {}).is_empty());
        assert!(matches!(Runner::new(Some(0)), Err(RunnerError::NoJobs)));
        assert!(Runner::new(None).is_ok_and(|runner| runner.jobs() >= 1));
    }
}
