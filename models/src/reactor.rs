//! A Seastar-style reactor: one core, scheduling groups with shares, and a
//! task quota.
//!
//! What it models (scylla-mechanisms.md section 8.1, seastar `reactor.cc`
//! @980730749, 2018):
//! - each scheduling group is a FIFO of tasks with `shares` (relative weight,
//!   at least 1);
//! - the reactor runs the group with the smallest virtual runtime; that
//!   group's tasks run back to back until the task quota (0.5 ms in Scylla)
//!   has been used, then the reactor picks again. Tasks are never cut: a task
//!   that crosses the quota finishes first, so a slice overruns by at most one
//!   task;
//! - after a slice, the group's virtual runtime grows by `runtime / shares`;
//! - a group that becomes runnable again starts at `max(own, the virtual
//!   runtime of the group that ran last)`, so idle time earns no credit;
//! - shares can change at any time (the backlog controllers move them).
//!
//! In effect, CPU time is divided in proportion to shares among the groups
//! that have work, and an idle group costs nothing. Scylla 2.1 had no CPU
//! scheduler: that is this model with every task in one group (FIFO).
//!
//! Left out: the `--max-task-backlog` escape hatch, polling I/O and timers
//! between slices (the simulator delivers those as events), hyperthread
//! interference.

use std::collections::VecDeque;

use units::{SimDuration, SimTime};

/// A task the reactor promises to finish: `tag` completes `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskCompletion {
    /// The caller's tag.
    pub tag: u64,
    /// When it completes.
    pub at: SimTime,
}

/// Scylla's `--task-quota-ms` (`app_cfg.default_task_quota = 500us`).
pub const SCYLLA_TASK_QUOTA: SimDuration = SimDuration::from_micros(500);

/// Most groups Seastar allows per reactor.
pub const MAX_GROUPS: usize = 16;

#[derive(Clone, Debug)]
struct Group {
    shares: f64,
    queue: VecDeque<(u64, SimDuration)>,
    /// Virtual runtime: runtime divided by shares, in nanoseconds.
    vruntime: f64,
    /// CPU time used since start.
    busy: SimDuration,
}

/// One core running scheduling groups by shares.
#[derive(Clone, Debug)]
pub struct Reactor {
    quota: SimDuration,
    groups: Vec<Group>,
    /// The group running and how long its current slice has run.
    running: Option<(usize, SimDuration, SimDuration)>,
    /// Virtual runtime of the group that ran last.
    last_vruntime: f64,
    busy_since: Option<SimTime>,
    busy_total: SimDuration,
    tasks_completed: u64,
}

impl Reactor {
    /// A reactor with one group per entry of `shares` and the given quota.
    pub fn new(shares: &[f64], quota: SimDuration) -> Reactor {
        assert!(
            !shares.is_empty() && shares.len() <= MAX_GROUPS,
            "1 to {MAX_GROUPS} groups"
        );
        assert!(quota > SimDuration::ZERO);
        Reactor {
            quota,
            groups: shares
                .iter()
                .map(|&shares| Group {
                    shares: shares.max(1.0),
                    queue: VecDeque::new(),
                    vruntime: 0.0,
                    busy: SimDuration::ZERO,
                })
                .collect(),
            running: None,
            last_vruntime: 0.0,
            busy_since: None,
            busy_total: SimDuration::ZERO,
            tasks_completed: 0,
        }
    }

    /// Sets a group's shares (at least 1), effective from its next slice.
    pub fn set_shares(&mut self, group: usize, shares: f64) {
        self.groups[group].shares = shares.max(1.0);
    }

    /// A group's shares.
    pub fn shares(&self, group: usize) -> f64 {
        self.groups[group].shares
    }

    /// Queues task `tag` costing `cost` in `group`; returns its completion if
    /// the core was idle and it starts now.
    pub fn submit(
        &mut self,
        now: SimTime,
        tag: u64,
        group: usize,
        cost: SimDuration,
    ) -> Option<TaskCompletion> {
        let entry = &mut self.groups[group];
        if entry.queue.is_empty() && self.running.is_none_or(|(running, _, _)| running != group) {
            // Becoming runnable: no credit for the time spent idle.
            entry.vruntime = entry.vruntime.max(self.last_vruntime);
        }
        entry.queue.push_back((tag, cost));
        if self.running.is_some() {
            return None;
        }
        self.busy_since = Some(now);
        self.start_next(now, None)
    }

    /// The running task finished at `now`; returns the next task's completion.
    pub fn complete(&mut self, now: SimTime) -> Option<TaskCompletion> {
        let (group, slice_used, task_cost) =
            self.running.take().expect("completion on an idle reactor");
        self.tasks_completed += 1;
        let slice_used = slice_used + task_cost;
        self.groups[group].busy = self.groups[group].busy + task_cost;
        let keep_running = slice_used < self.quota && !self.groups[group].queue.is_empty();
        if keep_running {
            return self.start_next(now, Some((group, slice_used)));
        }
        self.end_slice(group, slice_used);
        let next = self.start_next(now, None);
        if next.is_none() {
            if let Some(since) = self.busy_since.take() {
                self.busy_total = self.busy_total + (now - since);
            }
        }
        next
    }

    /// Charges a finished slice to its group's virtual runtime.
    fn end_slice(&mut self, group: usize, slice_used: SimDuration) {
        let entry = &mut self.groups[group];
        entry.vruntime += slice_used.as_nanos() as f64 / entry.shares;
        self.last_vruntime = entry.vruntime;
    }

    /// Starts the next task: in `continuing`'s group if given, else in the
    /// runnable group with the smallest virtual runtime (lowest index on ties).
    fn start_next(
        &mut self,
        now: SimTime,
        continuing: Option<(usize, SimDuration)>,
    ) -> Option<TaskCompletion> {
        let (group, slice_used) = match continuing {
            Some(slice) => slice,
            None => {
                let group = (0..self.groups.len())
                    .filter(|group| !self.groups[*group].queue.is_empty())
                    .min_by(|a, b| {
                        self.groups[*a]
                            .vruntime
                            .total_cmp(&self.groups[*b].vruntime)
                    })?;
                (group, SimDuration::ZERO)
            }
        };
        let (tag, cost) = self.groups[group]
            .queue
            .pop_front()
            .expect("the chosen group has work");
        self.running = Some((group, slice_used, cost));
        Some(TaskCompletion {
            tag,
            at: now + cost,
        })
    }

    /// Total busy time up to `now`.
    pub fn busy_time(&self, now: SimTime) -> SimDuration {
        match self.busy_since {
            Some(since) => self.busy_total + now.saturating_since(since),
            None => self.busy_total,
        }
    }

    /// CPU time `group` has used in completed tasks.
    pub fn group_busy_time(&self, group: usize) -> SimDuration {
        self.groups[group].busy
    }

    /// Tasks running or queued.
    pub fn outstanding(&self) -> usize {
        usize::from(self.running.is_some())
            + self
                .groups
                .iter()
                .map(|group| group.queue.len())
                .sum::<usize>()
    }

    /// Tasks completed.
    pub fn tasks_completed(&self) -> u64 {
        self.tasks_completed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps the listed groups always busy with tasks of `task` for
    /// `seconds`; returns each group's CPU time and the longest slice seen.
    fn saturate(
        shares: &[f64],
        busy_groups: &[usize],
        task: SimDuration,
        seconds: u64,
    ) -> (Vec<SimDuration>, SimDuration) {
        let mut reactor = Reactor::new(shares, SCYLLA_TASK_QUOTA);
        let mut tag = 0;
        let mut group_of = std::collections::BTreeMap::new();
        let mut next = None;
        for &group in busy_groups {
            for _ in 0..2 {
                group_of.insert(tag, group);
                next = next.or(reactor.submit(SimTime::ZERO, tag, group, task));
                tag += 1;
            }
        }
        let end = SimTime::ZERO + SimDuration::from_secs(seconds);
        let (mut longest_slice, mut slice_group, mut slice_start) =
            (SimDuration::ZERO, usize::MAX, SimTime::ZERO);
        let mut now = SimTime::ZERO;
        while let Some(done) = next {
            if done.at > end {
                break;
            }
            let group = group_of[&done.tag];
            if group != slice_group {
                slice_group = group;
                slice_start = now;
            }
            now = done.at;
            longest_slice = longest_slice.max(now - slice_start);
            // The finished task's group submits another, staying busy.
            group_of.insert(tag, group);
            reactor.submit(now, tag, group, task);
            tag += 1;
            next = reactor.complete(now);
        }
        (
            (0..shares.len())
                .map(|group| reactor.group_busy_time(group))
                .collect(),
            longest_slice,
        )
    }

    #[test]
    fn busy_groups_split_the_cpu_in_proportion_to_their_shares() {
        let (busy, _) = saturate(&[100.0, 1000.0], &[0, 1], SimDuration::from_micros(30), 10);
        let ratio = busy[1].as_secs_f64() / busy[0].as_secs_f64();
        assert!(
            (ratio - 10.0).abs() / 10.0 < 0.02,
            "split {busy:?}, ratio {ratio}"
        );
        let total = busy[0].as_secs_f64() + busy[1].as_secs_f64();
        assert!(total > 9.99, "no idle time while work waits: {total}");
    }

    #[test]
    fn an_idle_group_wastes_nothing() {
        let (busy, _) = saturate(&[100.0, 1000.0], &[0], SimDuration::from_micros(30), 10);
        assert!(
            busy[0].as_secs_f64() > 9.99,
            "the only busy group gets the whole core: {busy:?}"
        );
        assert_eq!(busy[1], SimDuration::ZERO);
    }

    #[test]
    fn no_slice_runs_past_the_quota_by_more_than_one_task() {
        let task = SimDuration::from_micros(70);
        let (_, longest) = saturate(&[1000.0, 1000.0], &[0, 1], task, 1);
        assert!(
            longest <= SCYLLA_TASK_QUOTA + task,
            "longest slice {longest}"
        );
        assert!(
            longest >= SCYLLA_TASK_QUOTA,
            "slices use their quota: {longest}"
        );
    }

    #[test]
    fn a_group_waking_up_gets_no_credit_for_its_idle_time() {
        let mut reactor = Reactor::new(&[1000.0, 1000.0], SCYLLA_TASK_QUOTA);
        let task = SimDuration::from_micros(100);
        // Group 0 runs alone for 1 s.
        let mut now = SimTime::ZERO;
        let mut next = reactor.submit(now, 0, 0, task);
        for tag in 1..10_000 {
            let done = next.unwrap();
            now = done.at;
            reactor.submit(now, tag, 0, task);
            next = reactor.complete(now);
        }
        // Group 1 wakes: it shares the core from now on instead of running
        // alone for a second to catch up.
        reactor.submit(now, 100_000, 1, task);
        let mut group_1_tasks = 0;
        for tag in 10_000..10_100 {
            let done = next.unwrap();
            now = done.at;
            if done.tag >= 100_000 {
                group_1_tasks += 1;
                reactor.submit(now, done.tag + 1, 1, task);
            } else {
                reactor.submit(now, tag, 0, task);
            }
            next = reactor.complete(now);
        }
        assert!(
            (40..=60).contains(&group_1_tasks),
            "{group_1_tasks} of 100 tasks went to the woken group"
        );
    }
}
