//! CPU: one core running tasks to completion in arrival order.
//!
//! This is the first-cut CPU under a node's shard: a single FIFO queue, no
//! scheduling groups and no preemption. The models issue replaces it with a
//! Seastar-style reactor (scheduling groups with shares, a 0.5 ms task quota)
//! and a JVM runtime; the driver-facing shape (submit a priced task, be told
//! when it completes) stays the same.

use std::collections::VecDeque;

use units::{SimDuration, SimTime};

/// A task the core promises to finish: `tag` completes `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskCompletion {
    /// The caller's tag.
    pub tag: u64,
    /// When it completes.
    pub at: SimTime,
}

/// One core with a FIFO run queue.
#[derive(Clone, Debug, Default)]
pub struct FifoCore {
    running: bool,
    queue: VecDeque<(u64, SimDuration)>,
    busy_since: Option<SimTime>,
    busy_total: SimDuration,
    tasks_completed: u64,
}

impl FifoCore {
    /// An idle core.
    pub fn new() -> FifoCore {
        FifoCore::default()
    }

    /// Submits task `tag` costing `cost`; returns its completion if the core
    /// was idle, else it queues.
    pub fn submit(&mut self, now: SimTime, tag: u64, cost: SimDuration) -> Option<TaskCompletion> {
        if self.running {
            self.queue.push_back((tag, cost));
            return None;
        }
        self.running = true;
        self.busy_since = Some(now);
        Some(TaskCompletion {
            tag,
            at: now + cost,
        })
    }

    /// The running task finished at `now`; returns the next one's completion.
    pub fn complete(&mut self, now: SimTime) -> Option<TaskCompletion> {
        assert!(self.running, "completion on an idle core");
        self.tasks_completed += 1;
        match self.queue.pop_front() {
            Some((tag, cost)) => Some(TaskCompletion {
                tag,
                at: now + cost,
            }),
            None => {
                self.running = false;
                if let Some(since) = self.busy_since.take() {
                    self.busy_total = self.busy_total + (now - since);
                }
                None
            }
        }
    }

    /// Total busy time up to `now`.
    pub fn busy_time(&self, now: SimTime) -> SimDuration {
        match self.busy_since {
            Some(since) => self.busy_total + now.saturating_since(since),
            None => self.busy_total,
        }
    }

    /// Tasks running or queued.
    pub fn outstanding(&self) -> usize {
        usize::from(self.running) + self.queue.len()
    }

    /// Tasks completed.
    pub fn tasks_completed(&self) -> u64 {
        self.tasks_completed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_run_back_to_back_in_arrival_order() {
        let mut core = FifoCore::new();
        let t0 = SimTime::from_nanos(100);
        let first = core.submit(t0, 1, SimDuration::from_nanos(50)).unwrap();
        assert_eq!(first.at, SimTime::from_nanos(150));
        assert_eq!(core.submit(t0, 2, SimDuration::from_nanos(30)), None);
        let second = core.complete(first.at).unwrap();
        assert_eq!((second.tag, second.at), (2, SimTime::from_nanos(180)));
        assert_eq!(core.complete(second.at), None);
        assert_eq!(
            core.busy_time(SimTime::from_nanos(1000)),
            SimDuration::from_nanos(80)
        );
        assert_eq!(core.tasks_completed(), 2);
    }
}
