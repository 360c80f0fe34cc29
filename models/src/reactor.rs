//! A Seastar-style reactor: one core, scheduling groups with shares, and a
//! task quota.
//!
//! What it models (scylla-mechanisms.md section 8.1, seastar `reactor.cc`
//! @980730749, 2018):
//! - each scheduling group is a FIFO of tasks with `shares` (relative weight,
//!   at least 1);
//! - the reactor runs the group with the smallest virtual runtime; that
//!   group's tasks run back to back until its queue empties or the task
//!   quota timer ticks, then the reactor picks again. The timer is
//!   free-running: a timerfd armed once with the quota (0.5 ms in Scylla)
//!   as its interval, whose thread sets `need_preempt` at every tick
//!   (`task_quota_timer_thread_fn`, `reactor::run`), so a slice ends at the
//!   next tick, not a quota after it started (ticks fall at the reactor's
//!   phase plus multiples of the quota; each shard armed its timer when it
//!   started, so shards tick out of step, [`Reactor::with_phase`]): a group
//!   that gets the core half-way between ticks runs for what is left of
//!   the period. Long-running work in Seastar (compaction, flush,
//!   streaming loops) checks `need_preempt()` and yields at the tick, so a
//!   task running into it stops there and no slice crosses a tick. The
//!   rest of it goes to the back of its group's queue: the loops
//!   (`repeat`, `do_until`, `do_for_each` in `future-util.hh`) reschedule
//!   themselves with `schedule()`, which appends to the group's queue
//!   (`add_task`, `push_back`); only a promise made ready while no
//!   preemption is pending goes to the front (`schedule_urgent`). So the
//!   tasks queued in its group while it ran go first: in 2.1's single queue
//!   a compaction's slices take turns with the requests' tasks;
//! - after a slice, the group's virtual runtime grows by `runtime / shares`;
//! - a group that becomes runnable again starts at `max(own, the reactor's
//!   last virtual runtime)`, so idle time earns no credit. The reactor's
//!   last virtual runtime is the largest a group had when its slice
//!   *started* (`run_some_tasks` sets `_last_vruntime` before running the
//!   queue and charges the queue after): a group woken while another runs
//!   ranks ahead of it once its slice is charged, which is what lets an
//!   I/O-bound group (reads waiting on the disk) cut in between the slices
//!   of a CPU-bound one (a compaction) instead of queueing behind it;
//! - shares can change at any time (the backlog controllers move them);
//! - the reactor polls (`reactor::run`: `run_some_tasks`, then
//!   `poll_once`) only between periods: when the task quota ticks, or when
//!   it runs out of tasks. Everything the outside world hands a shard, a
//!   network message, a disk completion, another shard's message, a timer,
//!   is picked up by a poller there, and everything a task sends out, a
//!   message (Seastar's batched TCP flushes), an I/O (`_pending_aio`,
//!   submitted by the aio poller), a message to another shard (the smp
//!   queues' batches), leaves there too. A busy shard therefore sees and
//!   sends nothing until its period ends: [`RunEnd::polls`] marks those
//!   moments, and the driver delivers and sends what waited, then calls
//!   [`Reactor::resume`], so that work polled in is ranked with the rest
//!   before the next group is chosen. An idle reactor polls continuously:
//!   what reaches it is taken at once.
//!
//! In effect, CPU time is divided in proportion to shares among the groups
//! that have work, and an idle group costs nothing. Scylla 2.1 had no CPU
//! scheduler: that is this model with every task in one group (FIFO).
//!
//! Left out: the `--max-task-backlog` escape hatch, the pollers' own CPU
//! time, hyperthread interference.

use std::collections::VecDeque;

use units::{SimDuration, SimTime};

/// A run of a task the reactor started: task `tag` runs until `at`, where
/// the driver must call [`Reactor::complete`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskCompletion {
    /// The caller's tag of the task running.
    pub tag: u64,
    /// When this run ends (the task finishes or yields at the quota).
    pub at: SimTime,
}

/// What ended at a [`Reactor::complete`] call, and what runs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunEnd {
    /// The task that finished, if the run ended with it (not at a yield).
    pub finished: Option<u64>,
    /// The next run, when it follows in the same period (no poll between).
    pub next: Option<TaskCompletion>,
    /// The period ended here (the quota ticked or no task is left): the
    /// reactor polls. Nothing runs until the driver has handed over what
    /// arrived during the period and called [`Reactor::resume`].
    pub polls: bool,
}

/// The task on the core: its tag, group, this run's length and what will
/// remain of it afterwards.
#[derive(Clone, Copy, Debug)]
struct Running {
    group: usize,
    tag: u64,
    slice_used: SimDuration,
    /// The tick that ends the slice.
    slice_end: SimTime,
    run: SimDuration,
    remaining_after: SimDuration,
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
    /// When the task quota timer first ticks; then every `quota`.
    phase: SimDuration,
    groups: Vec<Group>,
    /// The task running, if any.
    running: Option<Running>,
    /// The largest virtual runtime a group had when its slice started
    /// (Seastar's `_last_vruntime`): where a group that wakes up starts.
    last_vruntime: f64,
    busy_since: Option<SimTime>,
    busy_total: SimDuration,
    tasks_completed: u64,
    /// Between a [`RunEnd`] that polls and [`Reactor::resume`].
    polling: bool,
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
            phase: SimDuration::ZERO,
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
            polling: false,
        }
    }

    /// The same reactor with its task quota timer ticking at `phase` past
    /// every multiple of the quota (`phase` below the quota).
    pub fn with_phase(mut self, phase: SimDuration) -> Reactor {
        assert!(phase < self.quota, "phase {phase:?} is past the quota");
        self.phase = phase;
        self
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
    /// the core was idle and it starts now (never while the reactor polls:
    /// [`Reactor::resume`] starts the next run).
    pub fn submit(
        &mut self,
        now: SimTime,
        tag: u64,
        group: usize,
        cost: SimDuration,
    ) -> Option<TaskCompletion> {
        let entry = &mut self.groups[group];
        if entry.queue.is_empty() && self.running.is_none_or(|running| running.group != group) {
            // Becoming runnable: no credit for the time spent idle.
            entry.vruntime = entry.vruntime.max(self.last_vruntime);
        }
        entry.queue.push_back((tag, cost));
        if self.running.is_some() || self.polling {
            return None;
        }
        self.busy_since = Some(now);
        self.start_next(now, None)
    }

    /// Whether a task is on the core: the reactor is inside a period, and
    /// what reaches the shard now waits for its next poll.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Ends a poll ([`RunEnd::polls`]): starts the next period's first run,
    /// in the runnable group with the smallest virtual runtime, or goes
    /// idle.
    pub fn resume(&mut self, now: SimTime) -> Option<TaskCompletion> {
        assert!(self.polling, "resume without a poll");
        self.polling = false;
        let next = self.start_next(now, None);
        if next.is_none() {
            if let Some(since) = self.busy_since.take() {
                self.busy_total = self.busy_total + (now - since);
            }
        }
        next
    }

    /// The current run ended at `now` (the time its [`TaskCompletion`]
    /// gave): reports the task if it finished, and starts the next run if
    /// it follows in the same period; else the reactor polls.
    pub fn complete(&mut self, now: SimTime) -> RunEnd {
        let running = self.running.take().expect("completion on an idle reactor");
        let group = running.group;
        let slice_used = running.slice_used + running.run;
        self.groups[group].busy = self.groups[group].busy + running.run;
        let finished = if running.remaining_after > SimDuration::ZERO {
            // Yielded at the quota: the rest is rescheduled behind what
            // its group queued meanwhile.
            self.groups[group]
                .queue
                .push_back((running.tag, running.remaining_after));
            None
        } else {
            self.tasks_completed += 1;
            Some(running.tag)
        };
        let ticked = now >= running.slice_end;
        if finished.is_some() && !ticked && !self.groups[group].queue.is_empty() {
            let next = self.start_next(now, Some((group, slice_used, running.slice_end)));
            return RunEnd {
                finished,
                next,
                polls: false,
            };
        }
        self.end_slice(group, slice_used);
        // `run_some_tasks` goes on to the next group until the tick; at the
        // tick, or out of work, it returns and the reactor polls.
        let next = if ticked {
            None
        } else {
            self.start_next(now, None)
        };
        self.polling = next.is_none();
        RunEnd {
            finished,
            next,
            polls: self.polling,
        }
    }

    /// Charges a finished slice to its group's virtual runtime.
    fn end_slice(&mut self, group: usize, slice_used: SimDuration) {
        let entry = &mut self.groups[group];
        entry.vruntime += slice_used.as_nanos() as f64 / entry.shares;
    }

    /// Starts the next task: in `continuing`'s group (with its slice's time
    /// used and end) if given, else in the runnable group with the smallest
    /// virtual runtime (lowest index on ties), whose slice ends at the next
    /// tick.
    fn start_next(
        &mut self,
        now: SimTime,
        continuing: Option<(usize, SimDuration, SimTime)>,
    ) -> Option<TaskCompletion> {
        let (group, slice_used, slice_end) = match continuing {
            Some(slice) => slice,
            None => {
                let group = (0..self.groups.len())
                    .filter(|group| !self.groups[*group].queue.is_empty())
                    .min_by(|a, b| {
                        self.groups[*a]
                            .vruntime
                            .total_cmp(&self.groups[*b].vruntime)
                    })?;
                // Seastar records the vruntime a queue starts its slice
                // with, before charging it.
                self.last_vruntime = self.last_vruntime.max(self.groups[group].vruntime);
                (group, SimDuration::ZERO, self.next_tick(now))
            }
        };
        debug_assert!(now < slice_end, "a slice starts before its tick");
        let (tag, cost) = self.groups[group]
            .queue
            .pop_front()
            .expect("the chosen group has work");
        let run = cost.min(slice_end - now);
        debug_assert!(!self.polling, "no task starts during a poll");
        self.running = Some(Running {
            group,
            tag,
            slice_used,
            slice_end,
            run,
            remaining_after: cost - run,
        });
        Some(TaskCompletion { tag, at: now + run })
    }

    /// The first tick of the task quota timer after `now`: slices end at
    /// the phase plus multiples of the quota.
    fn next_tick(&self, now: SimTime) -> SimTime {
        let (quota, phase, now) = (self.quota.as_nanos(), self.phase.as_nanos(), now.as_nanos());
        if now < phase {
            return SimTime::from_nanos(phase);
        }
        SimTime::from_nanos(phase + ((now - phase) / quota + 1) * quota)
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

    /// Drops every queued task (the process died); returns their tags. The
    /// run on the core, if any, still ends when its completion said: its
    /// end is already in the driver's queue.
    pub fn drop_queued(&mut self) -> Vec<u64> {
        self.groups
            .iter_mut()
            .flat_map(|group| group.queue.drain(..).map(|(tag, _)| tag))
            .collect()
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

    /// Ends the run that ends at `now`, polling with nothing to deliver:
    /// the task that finished and the next run.
    fn step(reactor: &mut Reactor, now: SimTime) -> (Option<u64>, Option<TaskCompletion>) {
        let ended = reactor.complete(now);
        let next = if ended.polls {
            reactor.resume(now)
        } else {
            ended.next
        };
        (ended.finished, next)
    }

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
        while let Some(run) = next {
            if run.at > end {
                break;
            }
            let group = group_of[&run.tag];
            if group != slice_group {
                slice_group = group;
                slice_start = now;
            }
            now = run.at;
            longest_slice = longest_slice.max(now - slice_start);
            let ended = reactor.complete(now);
            if ended.finished.is_some() {
                // The finished task's group submits another, staying busy.
                group_of.insert(tag, group);
                reactor.submit(now, tag, group, task);
                tag += 1;
            }
            next = if ended.polls {
                reactor.resume(now)
            } else {
                ended.next
            };
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
    fn no_slice_runs_past_the_quota() {
        for task in [SimDuration::from_micros(70), SimDuration::from_micros(1300)] {
            let (busy, longest) = saturate(&[1000.0, 1000.0], &[0, 1], task, 1);
            assert!(
                longest <= SCYLLA_TASK_QUOTA,
                "{task} tasks: longest slice {longest}"
            );
            assert!(
                longest >= SCYLLA_TASK_QUOTA - task.min(SCYLLA_TASK_QUOTA),
                "slices use their quota: {longest}"
            );
            let ratio = busy[0].as_secs_f64() / busy[1].as_secs_f64();
            assert!(
                (ratio - 1.0).abs() < 0.02,
                "{task} tasks: equal shares split evenly ({ratio})"
            );
        }
    }

    #[test]
    fn a_long_task_yields_at_the_quota_and_finishes_later() {
        let mut reactor = Reactor::new(&[1000.0, 1000.0], SCYLLA_TASK_QUOTA);
        let long = reactor
            .submit(SimTime::ZERO, 1, 0, SimDuration::from_micros(1200))
            .unwrap();
        assert_eq!(
            long.at,
            SimTime::ZERO + SCYLLA_TASK_QUOTA,
            "the first run stops at the quota"
        );
        reactor.submit(SimTime::ZERO, 2, 1, SimDuration::from_micros(10));
        let (finished, short) = step(&mut reactor, long.at);
        assert_eq!(finished, None, "the long task yielded");
        let short = short.unwrap();
        assert_eq!(short.tag, 2, "the other group runs in between");
        let (finished, run) = step(&mut reactor, short.at);
        assert_eq!(finished, Some(2));
        let mut run = run.unwrap();
        let mut finished = None;
        while finished.is_none() {
            let (ended, next) = step(&mut reactor, run.at);
            finished = ended;
            if let Some(next) = next {
                run = next;
            }
        }
        assert_eq!(finished, Some(1));
        assert_eq!(reactor.group_busy_time(0), SimDuration::from_micros(1200));
    }

    #[test]
    fn a_yielding_task_goes_behind_what_its_group_queued_meanwhile() {
        // One FIFO group (Scylla 2.1): a long task, then short ones that
        // arrive while it runs.
        let mut reactor = Reactor::new(&[1000.0], SCYLLA_TASK_QUOTA);
        let long = reactor
            .submit(SimTime::ZERO, 1, 0, SimDuration::from_millis(2))
            .unwrap();
        for tag in 2..5 {
            assert_eq!(
                reactor.submit(
                    SimTime::from_nanos(1_000),
                    tag,
                    0,
                    SimDuration::from_micros(50)
                ),
                None,
                "the core is busy"
            );
        }
        let mut order = Vec::new();
        let (finished, mut run) = step(&mut reactor, long.at);
        assert_eq!(finished, None, "the long task yielded at the tick");
        while let Some(now) = run.map(|run| run.at) {
            order.push(run.unwrap().tag);
            run = step(&mut reactor, now).1;
        }
        // The three short tasks run before the long task's next run (500
        // to 650 us), which takes its remaining 1.5 ms to the ticks at 1.0,
        // 1.5 and 2.0 ms and ends at 2.15 ms.
        assert_eq!(order, [2, 3, 4, 1, 1, 1, 1]);
        assert_eq!(reactor.group_busy_time(0), SimDuration::from_micros(2150));
    }

    #[test]
    fn slices_end_at_the_quota_timer_ticks() {
        let mut reactor = Reactor::new(&[1000.0, 1000.0], SCYLLA_TASK_QUOTA);
        let short = reactor.submit(SimTime::ZERO, 0, 0, SimDuration::from_micros(100));
        assert_eq!(short.unwrap().at, SimTime::from_nanos(100_000));
        reactor.submit(SimTime::ZERO, 1, 1, SimDuration::from_millis(2));
        // Group 1 gets the core 100 us into the period and runs to the
        // tick at 500 us, not for a whole quota.
        let next = step(&mut reactor, SimTime::from_nanos(100_000)).1.unwrap();
        assert_eq!((next.tag, next.at), (1, SimTime::from_nanos(500_000)));
        // Then whole periods.
        let next = step(&mut reactor, next.at).1.unwrap();
        assert_eq!((next.tag, next.at), (1, SimTime::from_nanos(1_000_000)));
    }

    #[test]
    fn a_phase_moves_every_tick() {
        let mut reactor =
            Reactor::new(&[1000.0], SCYLLA_TASK_QUOTA).with_phase(SimDuration::from_micros(120));
        let first = reactor.submit(SimTime::ZERO, 0, 0, SimDuration::from_millis(2));
        assert_eq!(first.unwrap().at, SimTime::from_nanos(120_000));
        let next = step(&mut reactor, SimTime::from_nanos(120_000)).1.unwrap();
        assert_eq!(next.at, SimTime::from_nanos(620_000));
    }

    #[test]
    fn a_group_woken_during_a_slice_runs_before_that_group_again() {
        // Group 1 (few shares, always busy, as a compaction) and group 0
        // (many shares, waking now and then, as reads back from the disk).
        let mut reactor = Reactor::new(&[1000.0, 100.0], SCYLLA_TASK_QUOTA);
        let mut next = reactor.submit(SimTime::ZERO, 1, 1, SimDuration::from_secs(1));
        for period in 1..100u64 {
            let tick = SimTime::from_nanos(period * 500_000);
            // A read wakes group 0 in the middle of group 1's slice.
            let woken = SimTime::from_nanos(period * 500_000 - 250_000);
            assert!(reactor
                .submit(woken, 1000 + period, 0, SimDuration::from_micros(50))
                .is_none());
            let run = next.unwrap();
            assert_eq!((run.tag, run.at), (1, tick), "group 1 runs to the tick");
            let after = step(&mut reactor, tick).1.unwrap();
            assert_eq!(after.tag, 1000 + period, "the woken group goes first");
            next = step(&mut reactor, after.at).1;
            // Group 1 continues to the next tick.
            let run = next.unwrap();
            assert_eq!(run.tag, 1);
        }
    }

    #[test]
    fn a_woken_group_starts_from_the_vruntime_slices_started_with() {
        // Group 0 has few shares, so its short slice charges it a lot; then
        // group 2 runs. Group 1 wakes during group 2's slice: it starts at
        // the vruntime group 2's slice started with (Seastar's
        // `_last_vruntime`), not at group 0's charged one, so it goes
        // before group 2's next slice.
        let mut reactor = Reactor::new(&[100.0, 1000.0, 1000.0], SCYLLA_TASK_QUOTA);
        let first = reactor.submit(SimTime::ZERO, 0, 0, SimDuration::from_micros(50));
        reactor.submit(SimTime::ZERO, 2, 2, SimDuration::from_millis(2));
        assert_eq!(first.unwrap().tag, 0);
        let next = step(&mut reactor, SimTime::from_nanos(50_000)).1.unwrap();
        assert_eq!((next.tag, next.at), (2, SimTime::from_nanos(500_000)));
        reactor.submit(
            SimTime::from_nanos(300_000),
            1,
            1,
            SimDuration::from_micros(50),
        );
        let after_tick = step(&mut reactor, next.at).1.unwrap();
        assert_eq!(
            after_tick.tag, 1,
            "the woken group runs before group 2 again"
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
            next = step(&mut reactor, now).1;
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
            next = step(&mut reactor, now).1;
        }
        assert!(
            (40..=60).contains(&group_1_tasks),
            "{group_1_tasks} of 100 tasks went to the woken group"
        );
    }

    #[test]
    fn the_reactor_polls_at_the_tick_and_when_out_of_work_and_not_between() {
        let mut reactor = Reactor::new(&[1000.0, 1000.0], SCYLLA_TASK_QUOTA);
        let task = SimDuration::from_micros(100);
        let first = reactor.submit(SimTime::ZERO, 0, 0, task).unwrap();
        reactor.submit(SimTime::ZERO, 1, 0, task);
        reactor.submit(SimTime::ZERO, 2, 1, task);
        // Group 0's next task, then group 1's, follow in the same period.
        let ended = reactor.complete(first.at);
        assert!(!ended.polls, "more of the group's work before the tick");
        let ended = reactor.complete(ended.next.unwrap().at);
        assert!(!ended.polls, "another group's work before the tick");
        let last = ended.next.unwrap();
        assert_eq!(last.tag, 2);
        // Out of work at 300 us: a poll, and nothing runs until resumed.
        let ended = reactor.complete(last.at);
        assert_eq!(
            (ended.finished, ended.next, ended.polls),
            (Some(2), None, true)
        );
        assert!(!reactor.is_running());
        assert_eq!(reactor.submit(last.at, 3, 1, task), None, "polling: queued");
        let resumed = reactor.resume(last.at).unwrap();
        assert_eq!((resumed.tag, resumed.at), (3, SimTime::from_nanos(400_000)));
        // A task running into the tick at 500 us polls there.
        reactor.submit(resumed.at, 4, 0, SimDuration::from_micros(300));
        let ended = reactor.complete(resumed.at);
        assert!(!ended.polls);
        let long = ended.next.unwrap();
        assert_eq!(long.at, SimTime::from_nanos(500_000));
        let ended = reactor.complete(long.at);
        assert_eq!((ended.finished, ended.polls), (None, true));
        // What arrived is ranked before the pick: group 1 has run less
        // (200 us against group 0's 300 us) and goes first.
        reactor.submit(long.at, 5, 1, task);
        assert_eq!(reactor.resume(long.at).unwrap().tag, 5);
    }

    #[test]
    fn an_idle_reactor_counts_no_busy_time_after_its_last_poll() {
        let mut reactor = Reactor::new(&[1000.0], SCYLLA_TASK_QUOTA);
        let run = reactor
            .submit(SimTime::ZERO, 0, 0, SimDuration::from_micros(40))
            .unwrap();
        assert!(reactor.complete(run.at).polls);
        assert_eq!(reactor.resume(run.at), None);
        let later = SimTime::from_nanos(1_000_000);
        assert_eq!(reactor.busy_time(later), SimDuration::from_micros(40));
    }
}
