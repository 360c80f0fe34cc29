//! How much of a run could go in parallel, measured on the sequential run
//! (`twin bench cluster --parallelism`): the figures a conservative
//! parallel simulation would be built on, computed from the events
//! themselves rather than hoped for.
//!
//! Each event belongs to a logical process (LP): a node (all its shards,
//! its device, NIC and JVM), a client process, or the whole run (interval
//! ticks, faults, topology steps and load starts, which read or change
//! every node and would be barriers). A conservative parallel run lets
//! each LP go ahead on its own up to a horizon no event from another LP
//! can reach before: the lookahead, here the network's one-way
//! propagation delay, the least time a message, request or reply takes
//! between two LPs. So time is cut into windows one lookahead long, and
//! in each window every LP handles its own events while the others do.
//!
//! What is measured, with every event counted as one unit of work:
//! - per window, the events of each LP: a static split of the LPs over
//!   `N` threads (LP `i` on thread `i mod N`) takes, per window, as long as
//!   its busiest thread; the sum over windows against the events gives the
//!   speed-up that split would reach with free synchronisation, and the
//!   windows where every thread had work say how often none would wait;
//!   the balanced bound takes, per window, the larger of an even share and
//!   the busiest LP (no split does better);
//! - the critical path: an event can be handled once the event that
//!   scheduled it has been and once its LP's previous event has been; the
//!   longest such chain, in events, bounds any parallel run's speed-up
//!   (events over the chain), whatever the windows;
//! - every event scheduled from one LP for another: the least delay seen
//!   and how many came sooner than the lookahead (a conservative run would
//!   have to handle those in a later window than they belong to: zero, or
//!   the lookahead is wrong).
//!
//! The figures leave out what synchronisation costs (a barrier per window)
//! and what one event costs against another; the events per LP per window
//! say how much work a barrier would be spread over.

use serde::Serialize;
use units::{SimDuration, SimTime};

use crate::kernel::Cause;

/// The LP of events that concern the whole run.
pub(super) const WHOLE_RUN: u32 = (1 << LP_BITS) - 1;

/// Bits of a kernel mark that hold the LP of the event that made it; the
/// rest hold the event's place on the critical path.
const LP_BITS: u32 = 24;
const FINISH_BITS: u32 = 64 - LP_BITS;
const FINISH_MASK: u64 = (1 << FINISH_BITS) - 1;

/// The thread counts the split is worked out for.
pub const THREADS: [u32; 6] = [1, 2, 4, 8, 16, 64];

/// The running measurement.
#[derive(Clone, Debug)]
pub struct ParallelismProbe {
    lookahead: SimDuration,
    nodes: u32,
    processes: u32,
    /// Per LP, the critical-path position of its last event.
    finish: Vec<u64>,
    /// The latest position of any event.
    latest: u64,
    /// The window being counted and its events per LP.
    window: u64,
    counts: Vec<u32>,
    touched: Vec<u32>,
    /// Per thread count: the summed busiest-thread work of the static
    /// split, the summed balanced bound, and the windows where every
    /// thread had work.
    split_work: [u64; THREADS.len()],
    bound_work: [u64; THREADS.len()],
    windows_all_busy: [u64; THREADS.len()],
    per_thread: Vec<u64>,
    windows: u64,
    lp_windows: u64,
    events: u64,
    whole_run_events: u64,
    cross_events: u64,
    cross_under_lookahead: u64,
    least_cross_delay: Option<SimDuration>,
}

impl ParallelismProbe {
    /// A probe for `nodes` nodes and `processes` client processes, with
    /// windows `lookahead` long.
    pub fn new(nodes: u32, processes: u32, lookahead: SimDuration) -> ParallelismProbe {
        let lps = (nodes + processes) as usize;
        assert!(
            lps < WHOLE_RUN as usize,
            "at most 2^24 - 1 logical processes"
        );
        assert!(lookahead > SimDuration::ZERO, "a window has a length");
        ParallelismProbe {
            lookahead,
            nodes,
            processes,
            finish: vec![0; lps],
            latest: 0,
            window: 0,
            counts: vec![0; lps],
            touched: Vec::new(),
            split_work: [0; THREADS.len()],
            bound_work: [0; THREADS.len()],
            windows_all_busy: [0; THREADS.len()],
            per_thread: vec![0; *THREADS.iter().max().unwrap_or(&1) as usize],
            windows: 0,
            lp_windows: 0,
            events: 0,
            whole_run_events: 0,
            cross_events: 0,
            cross_under_lookahead: 0,
            least_cross_delay: None,
        }
    }

    /// The LP of node `node`.
    pub(super) fn node_lp(node: u32) -> u32 {
        node
    }

    /// The LP of client process `process`.
    pub(super) fn process_lp(&self, process: u32) -> u32 {
        self.nodes + process
    }

    /// Counts an event of LP `lp` handled at `now`, scheduled by `cause`;
    /// returns the mark of the event, for the kernel to give to what it
    /// schedules.
    pub fn record(&mut self, now: SimTime, lp: u32, cause: Cause) -> u64 {
        self.events += 1;
        let cause_lp = (cause.mark >> FINISH_BITS) as u32;
        let cause_finish = cause.mark & FINISH_MASK;
        // Mark 0 (before any event) has LP 0 and position 0: a position
        // of 0 is no constraint, and its LP is not counted as a sender.
        if cause.mark != 0 && cause_lp != lp && cause_lp != WHOLE_RUN && lp != WHOLE_RUN {
            self.cross_events += 1;
            let delay = now - cause.at;
            if delay < self.lookahead {
                self.cross_under_lookahead += 1;
            }
            self.least_cross_delay = Some(self.least_cross_delay.map_or(delay, |d| d.min(delay)));
        }
        let finish = if lp == WHOLE_RUN {
            // A barrier: after everything before it, and everything waits
            // for it.
            let finish = self.latest.max(cause_finish) + 1;
            self.finish.fill(finish);
            finish
        } else {
            let slot = &mut self.finish[lp as usize];
            *slot = (*slot).max(cause_finish) + 1;
            *slot
        };
        self.latest = self.latest.max(finish);
        let window = now.as_nanos() / self.lookahead.as_nanos();
        if window != self.window {
            self.close_window();
            self.window = window;
        }
        if lp == WHOLE_RUN {
            // Run alone, on one thread, between windows.
            self.whole_run_events += 1;
            for (split, bound) in self.split_work.iter_mut().zip(&mut self.bound_work) {
                *split += 1;
                *bound += 1;
            }
        } else {
            let count = &mut self.counts[lp as usize];
            if *count == 0 {
                self.touched.push(lp);
            }
            *count += 1;
        }
        debug_assert!(finish <= FINISH_MASK, "the critical path fits its bits");
        (u64::from(lp) << FINISH_BITS) | finish
    }

    /// Adds the window being counted to the totals and empties it.
    fn close_window(&mut self) {
        if self.touched.is_empty() {
            return;
        }
        self.windows += 1;
        self.lp_windows += self.touched.len() as u64;
        let events: u64 = self
            .touched
            .iter()
            .map(|&lp| u64::from(self.counts[lp as usize]))
            .sum();
        let busiest = self
            .touched
            .iter()
            .map(|&lp| u64::from(self.counts[lp as usize]))
            .max()
            .unwrap_or(0);
        for (index, &threads) in THREADS.iter().enumerate() {
            let per_thread = &mut self.per_thread[..threads as usize];
            per_thread.fill(0);
            for &lp in &self.touched {
                per_thread[(lp % threads) as usize] += u64::from(self.counts[lp as usize]);
            }
            self.split_work[index] += per_thread.iter().copied().max().unwrap_or(0);
            if per_thread.iter().all(|&work| work > 0) {
                self.windows_all_busy[index] += 1;
            }
            self.bound_work[index] += events.div_ceil(u64::from(threads)).max(busiest);
        }
        for &lp in &self.touched {
            self.counts[lp as usize] = 0;
        }
        self.touched.clear();
    }

    /// The figures, once the run is over.
    pub fn report(mut self) -> ParallelismReport {
        self.close_window();
        let ratio = |events: u64, work: u64| {
            if work == 0 {
                1.0
            } else {
                events as f64 / work as f64
            }
        };
        let share = |count: u64| {
            if self.windows == 0 {
                0.0
            } else {
                count as f64 / self.windows as f64
            }
        };
        ParallelismReport {
            lookahead_us: self.lookahead.as_secs_f64() * 1e6,
            logical_processes: self.nodes + self.processes,
            nodes: self.nodes,
            client_processes: self.processes,
            events: self.events,
            whole_run_events: self.whole_run_events,
            windows: self.windows,
            events_per_window: ratio(self.events - self.whole_run_events, self.windows),
            events_per_lp_per_window: ratio(self.events - self.whole_run_events, self.lp_windows),
            lps_per_window: ratio(self.lp_windows, self.windows),
            cross_lp_events: self.cross_events,
            cross_lp_events_under_lookahead: self.cross_under_lookahead,
            least_cross_lp_delay_us: self.least_cross_delay.map(|d| d.as_secs_f64() * 1e6),
            critical_path_events: self.latest,
            critical_path_bound: ratio(self.events, self.latest),
            threads: THREADS
                .iter()
                .enumerate()
                .map(|(index, &threads)| ThreadSplit {
                    threads,
                    split_speedup: ratio(self.events, self.split_work[index]),
                    balanced_bound: ratio(self.events, self.bound_work[index]),
                    windows_every_thread_busy: share(self.windows_all_busy[index]),
                })
                .collect(),
        }
    }
}

/// What [`ParallelismProbe`] found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParallelismReport {
    /// The window: the network's one-way propagation delay, us.
    pub lookahead_us: f64,
    /// Nodes plus client processes.
    pub logical_processes: u32,
    /// Nodes.
    pub nodes: u32,
    /// Client processes.
    pub client_processes: u32,
    /// Events counted.
    pub events: u64,
    /// Of them, events of the whole run (barriers).
    pub whole_run_events: u64,
    /// Windows with at least one event.
    pub windows: u64,
    /// Events per such window (barriers left out).
    pub events_per_window: f64,
    /// Events per LP per window, over the LPs with an event in it.
    pub events_per_lp_per_window: f64,
    /// LPs with an event per window.
    pub lps_per_window: f64,
    /// Events scheduled by one LP for another.
    pub cross_lp_events: u64,
    /// Of them, those due sooner than the lookahead after they were
    /// scheduled (zero for a sound lookahead).
    pub cross_lp_events_under_lookahead: u64,
    /// The least delay of such an event, us.
    pub least_cross_lp_delay_us: Option<f64>,
    /// The longest chain of events each waiting for its cause and its LP's
    /// previous event.
    pub critical_path_events: u64,
    /// Events over the critical path: no parallel run does better.
    pub critical_path_bound: f64,
    /// The split over each of [`THREADS`] threads.
    pub threads: Vec<ThreadSplit>,
}

/// One thread count's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadSplit {
    /// Threads.
    pub threads: u32,
    /// Speed-up of LP `i` on thread `i mod threads`, windows one lookahead
    /// long, synchronisation free.
    pub split_speedup: f64,
    /// Speed-up of the best split each window could have.
    pub balanced_bound: f64,
    /// Share of the windows where every thread of the split had work.
    pub windows_every_thread_busy: f64,
}

impl ParallelismReport {
    /// The report as text, for `twin bench cluster`.
    pub fn text(&self) -> String {
        let mut out = format!(
            "  parallelism (conservative windows of the network's {:.0} us lookahead; {} LPs: {} nodes, {} client processes):\n    windows with events {}, {:.1} events each over {:.1} LPs ({:.2} events per LP per window); {} whole-run events (barriers)\n    events sent between LPs {}, least delay {}, sooner than the lookahead {}\n    critical path {} events: no parallel run beats {:.1}x\n    threads  split speed-up  balanced bound  windows every thread busy",
            self.lookahead_us,
            self.logical_processes,
            self.nodes,
            self.client_processes,
            self.windows,
            self.events_per_window,
            self.lps_per_window,
            self.events_per_lp_per_window,
            self.whole_run_events,
            self.cross_lp_events,
            self.least_cross_lp_delay_us
                .map_or("-".to_string(), |us| format!("{us:.1} us")),
            self.cross_lp_events_under_lookahead,
            self.critical_path_events,
            self.critical_path_bound,
        );
        for split in &self.threads {
            out.push_str(&format!(
                "\n    {:>7}  {:>14.2}  {:>14.2}  {:>24.0}%",
                split.threads,
                split.split_speedup,
                split.balanced_bound,
                split.windows_every_thread_busy * 100.0
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(micros: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(micros)
    }

    fn cause(at: SimTime, mark: u64) -> Cause {
        Cause { at, mark }
    }

    #[test]
    fn two_independent_lps_go_twice_as_fast_on_two_threads() {
        // Nodes 0 and 1, each with one event per 40-us window, never
        // talking: two threads halve the work, and the critical path is
        // each LP's own chain.
        let mut probe = ParallelismProbe::new(2, 0, SimDuration::from_micros(40));
        let (mut a, mut b) = (0, 0);
        for window in 0..10 {
            a = probe.record(us(window * 40 + 1), 0, cause(us(0), a));
            b = probe.record(us(window * 40 + 2), 1, cause(us(0), b));
        }
        let report = probe.report();
        assert_eq!(report.events, 20);
        assert_eq!(report.windows, 10);
        assert_eq!(report.critical_path_events, 10);
        assert_eq!(report.critical_path_bound, 2.0);
        assert_eq!(report.cross_lp_events, 0);
        let two = &report.threads[1];
        assert_eq!(
            (two.threads, two.split_speedup, two.balanced_bound),
            (2, 2.0, 2.0)
        );
        assert_eq!(two.windows_every_thread_busy, 1.0);
        // Four threads: two have nothing.
        let four = &report.threads[2];
        assert_eq!(
            (four.split_speedup, four.windows_every_thread_busy),
            (2.0, 0.0)
        );
    }

    #[test]
    fn a_ping_pong_is_one_chain_and_a_barrier_joins_everything() {
        let mut probe = ParallelismProbe::new(2, 1, SimDuration::from_micros(40));
        // The client (LP 2) sends to node 0, which answers 50 us later.
        let request = probe.record(us(0), probe.process_lp(0), cause(us(0), 0));
        let at_node = probe.record(us(50), ParallelismProbe::node_lp(0), cause(us(0), request));
        let reply = probe.record(us(100), 2, cause(us(50), at_node));
        assert_eq!(reply & FINISH_MASK, 3, "three events in a row");
        // A message sooner than the lookahead is counted.
        probe.record(us(110), 1, cause(us(100), reply));
        // Node 1's chain is 4 long; a whole-run event comes after all.
        let tick = probe.record(us(120), WHOLE_RUN, cause(us(0), 0));
        assert_eq!(tick & FINISH_MASK, 5);
        let after = probe.record(us(130), 0, cause(us(0), 0));
        assert_eq!(after & FINISH_MASK, 6, "node 0 waits for the barrier");
        let report = probe.report();
        assert_eq!(report.cross_lp_events, 3);
        assert_eq!(report.cross_lp_events_under_lookahead, 1);
        assert_eq!(report.least_cross_lp_delay_us, Some(10.0));
        assert_eq!(report.whole_run_events, 1);
        assert_eq!(report.critical_path_events, 6);
        assert_eq!(report.critical_path_bound, 1.0);
    }
}
