//! Cassandra's shared pool of request workers (`SharedExecutorPool`,
//! `SEPWorker` and `SEPExecutor` in Cassandra 4.0-5.0): the spinning
//! workers' own state, and the price of putting a worker on the core.
//!
//! What it models, as the 5.0 source has it \[S\]:
//! - A worker that finishes its executor's queue and finds no task on any
//!   other executor does not park for good: it *spins*, parking for a
//!   short sleep at a time and looking for work each time it wakes. The
//!   sleep is `10 us x spinners`, at most 1 ms, times a uniform draw, at
//!   least 10 us ([`sleep`]); the kernel returns a park late (the timer
//!   slack and, in a guest, the timer's exits), by
//!   [`SepParams::park_overshoot`] when nothing else fires near it.
//! - (The kernel's, not Cassandra's.) Linux's high-resolution timers
//!   expire together: a timer may fire anywhere from its asked time to
//!   that time plus the thread's timer slack, and the interrupt that fires
//!   the earliest one fires every other whose asked time has come. So when a parked spinner's timer
//!   fires, every other spinner whose park would end within the slack
//!   after it wakes with it ([`SepParams::timer_slack`]): with several
//!   spinners the parks end earlier than a sole spinner's, and the looks
//!   come more often.
//! - A producer that queues a task on an empty executor while no worker
//!   spins unparks one to spin (`maybeStartSpinningWorker`); otherwise it
//!   signals nobody and the task waits for a spinner's next look.
//! - A worker about to run a task, seeing no spinner and more tasks
//!   queued, unparks one more worker for them (`maybeSchedule`); so does
//!   the last spinner to stop spinning.
//! - The *stop check* trims spinners: every spinner adds its sleep to a
//!   shared clock that starts 10 ms behind real time; when it catches up
//!   (the spinners slept more than real time, so at least one did nothing)
//!   the spinner that noticed stops, and the clock goes back to 10 ms
//!   behind. A sole spinner stops after 10 ms spinning alone.
//!
//! Each time a worker is put on the core (a spinner's look, a parked
//! worker unparked for a task) costs [`SepParams::run_cost`] of CPU: the
//! context switch, the timer or futex exit in the guest, and the look
//! through the executors. That price and the overshoot are this
//! machine's (`validation/CALIBRATION.md`); the rules are Cassandra's.
//! [`Spinners`] owns the spinners' state and decides; the core they run
//! on, the queues and the work permits are [`crate::jvm::JvmNode`]'s.
//!
//! Left out: the executors' own order (a look tries the request stages in
//! [`crate::jvm::Stage`] order), a spinner clashing with another on the
//! same wake-up time (`spinning.putIfAbsent`), a stop signal sent to a
//! worker other than the one that noticed, and the permits' resizing; on
//! the kernel's side, timers other than the spinners' firing them, a
//! quicker wake when the core is busy than when it idles (77 against 93
//! us a sole spinner's iteration, measured), and the wait for the core
//! between a spinner's wake and its `System.nanoTime()` (the stop check
//! here counts a park to its wake).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use units::{SimDuration, SimTime};

/// Shortest park a spinner asks for (`SEPWorker.doWaitSpin`) \[S\].
pub const MIN_SLEEP: SimDuration = SimDuration::from_micros(10);

/// A spinner's sleep grows by this per spinner (`doWaitSpin`) \[S\].
pub const SLEEP_PER_SPINNER: SimDuration = SimDuration::from_micros(10);

/// Longest sleep before the uniform draw (`doWaitSpin`) \[S\].
pub const MAX_SLEEP: SimDuration = SimDuration::from_millis(1);

/// `SEPWorker.stopCheckInterval` \[S\].
pub const STOP_CHECK_INTERVAL: SimDuration = SimDuration::from_millis(10);

/// The machine's side of the shared pool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SepParams {
    /// CPU each time a worker is put on the core (a look, a wake for a
    /// task).
    pub run_cost: SimDuration,
    /// How much later than asked a park returns when its own timer fires
    /// it (a sole spinner's: the slack, then the wake).
    pub park_overshoot: SimDuration,
    /// The threads' timer slack (Linux's `timer_slack_ns`): a park whose
    /// timer would fire within this after another's fires with it.
    pub timer_slack: SimDuration,
}

/// A spinning worker's own bookkeeping (`SEPWorker`'s fields).
#[derive(Clone, Copy, Debug)]
struct Spinner {
    /// When it last parked.
    parked_at: SimTime,
    /// When that park ended (it became runnable).
    woke_at: SimTime,
    /// `soleSpinnerSpinTime`, ns.
    sole_spin: i128,
    /// `prevStopCheck`, ns.
    prev_stop_check: i128,
    /// Unparked by a producer to spin: its first look follows no sleep, so
    /// it adds nothing to the stop check.
    fresh: bool,
    /// Parked on a timer (a sleep), not waiting for an unpark.
    timed: bool,
}

/// What a spinner does after its look found no work to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterLook {
    /// The stop check stopped it: it parks for good.
    Stopped,
    /// It looks for work to take.
    Look,
}

/// The pool's spinning workers: how many, when each looks next, the stop
/// check, and the count of runs.
#[derive(Clone, Debug)]
pub struct Spinners {
    params: SepParams,
    /// `spinningCount`: workers spinning, parked or looking.
    count: u32,
    slab: Vec<Spinner>,
    free: Vec<u32>,
    /// Parked spinners by when their park ends, then by parking order.
    parked: BinaryHeap<Reverse<(SimTime, u64, u32)>>,
    next_sequence: u64,
    /// `stopCheck`, ns (starts at zero, as the pool's does).
    stop_check: i128,
    rng: Pcg64Mcg,
    /// Workers put on the core: looks and wakes for tasks.
    runs: u64,
    /// Looks that found nothing.
    idle_looks: u64,
    /// Spinners the stop check stopped.
    stops: u64,
    /// Spinners whose timers fired with an earlier one's (at its instant),
    /// in the order they are to look.
    fired: std::collections::VecDeque<(SimTime, u32)>,
    /// The spinners' count integrated over time up to `counted_to`, ns:
    /// the mean number spinning over a run, to set beside the real node's
    /// sampled spinners (`deploy/real/cassandra.sh spinners`).
    spinning_ns: u128,
    counted_to: SimTime,
}

impl Spinners {
    /// No spinner yet; `seed` draws the sleeps and the wake-ups.
    pub fn new(params: SepParams, seed: u64) -> Spinners {
        Spinners {
            params,
            count: 0,
            slab: Vec::new(),
            free: Vec::new(),
            parked: BinaryHeap::new(),
            next_sequence: 0,
            stop_check: 0,
            rng: Pcg64Mcg::seed_from_u64(seed),
            runs: 0,
            idle_looks: 0,
            stops: 0,
            fired: std::collections::VecDeque::new(),
            spinning_ns: 0,
            counted_to: SimTime::ZERO,
        }
    }

    /// The machine's side.
    pub fn params(&self) -> SepParams {
        self.params
    }

    /// Workers spinning.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Workers put on the core so far.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// Looks that found nothing so far.
    pub fn idle_looks(&self) -> u64 {
        self.idle_looks
    }

    /// Spinners the stop check has stopped so far.
    pub fn stops(&self) -> u64 {
        self.stops
    }

    /// Spinner-time up to `now` (workers spinning, integrated over time):
    /// over a window, its growth divided by the window's length is the
    /// mean number of spinners.
    pub fn spinning_time(&self, now: SimTime) -> SimDuration {
        SimDuration::from_nanos(self.spinning_ns_at(now).min(u128::from(u64::MAX)) as u64)
    }

    /// Brings the spinner-time up to `now`, before the count changes.
    fn count_time(&mut self, now: SimTime) {
        debug_assert!(now >= self.counted_to, "spinner-time runs forward");
        self.spinning_ns = self.spinning_ns_at(now);
        self.counted_to = now;
    }

    /// Spinner-time up to `now`, ns.
    fn spinning_ns_at(&self, now: SimTime) -> u128 {
        let since = now.saturating_since(self.counted_to);
        self.spinning_ns + u128::from(self.count) * u128::from(since.as_nanos())
    }

    /// When the next parked spinner wakes.
    pub fn next_wake(&self) -> Option<SimTime> {
        let fired = self.fired.front().map(|&(at, _)| at);
        let parked = self.parked.peek().map(|Reverse((at, ..))| *at);
        fired.into_iter().chain(parked).min()
    }

    /// A parked worker's wake-up latency once unparked ([`crate::wakeup`]).
    pub fn draw_wake(&mut self) -> SimDuration {
        crate::wakeup::draw(&mut self.rng)
    }

    /// Counts a worker unparked for a task it already holds (its wake is
    /// the caller's to time).
    pub fn count_wake_for_task(&mut self) {
        self.runs += 1;
    }

    /// `maybeStartSpinningWorker`: a producer queued a task on an empty
    /// executor while nobody spins; a parked worker is unparked to spin
    /// and looks once it has woken (after `wake`).
    pub fn start_spinner(&mut self, now: SimTime, wake: SimDuration) {
        debug_assert_eq!(
            self.count, 0,
            "a producer starts a spinner only if none spins"
        );
        let id = self.enlist(now, true);
        self.push(now + wake, id);
    }

    /// `startSpinning` then `doWaitSpin`: a worker that found no task
    /// anywhere spins, first parking for a sleep.
    pub fn start_spinning(&mut self, now: SimTime) {
        let id = self.enlist(now, false);
        self.park(now, id);
    }

    /// A worker joins the spinners at `now` (`spinningCount` + 1, its
    /// bookkeeping reset as `stopSpinning` leaves it): its id.
    fn enlist(&mut self, now: SimTime, fresh: bool) -> u32 {
        self.count_time(now);
        self.count += 1;
        self.allocate(Spinner {
            parked_at: now,
            woke_at: now,
            sole_spin: 0,
            prev_stop_check: 0,
            fresh,
            timed: false,
        })
    }

    /// The parked spinner whose park ends first, if by `now`: it is put
    /// on the core (a run) and looks. Returns when it woke and its id.
    /// When its park ends on its timer, every spinner whose timer would
    /// fire within the slack after it is fired with it: they wake at the
    /// same instant and are handed out next.
    pub fn wake_due(&mut self, now: SimTime) -> Option<(SimTime, u32)> {
        if let Some(&(at, id)) = self.fired.front() {
            if at <= now {
                self.fired.pop_front();
                return Some(self.woke(at, id));
            }
        }
        let &Reverse((at, _, id)) = self.parked.peek()?;
        if at > now {
            return None;
        }
        self.parked.pop();
        if self.slab[id as usize].timed {
            self.fire_with(at);
        }
        Some(self.woke(at, id))
    }

    /// The timers due within the slack after `at` fire at `at`.
    fn fire_with(&mut self, at: SimTime) {
        let window = at + self.params.timer_slack;
        let mut unparked = Vec::new();
        while let Some(&Reverse((due, sequence, id))) = self.parked.peek() {
            if due > window {
                break;
            }
            self.parked.pop();
            if self.slab[id as usize].timed {
                self.fired.push_back((at, id));
            } else {
                // An unpark is no timer: it keeps its own time.
                unparked.push(Reverse((due, sequence, id)));
            }
        }
        self.parked.extend(unparked);
    }

    fn woke(&mut self, at: SimTime, id: u32) -> (SimTime, u32) {
        self.runs += 1;
        self.slab[id as usize].woke_at = at;
        (at, id)
    }

    /// A spinner's look is over at `now`: the stop check for the sleep it
    /// woke from (`maybeStop`), which may stop it.
    pub fn after_look(&mut self, now: SimTime, id: u32) -> AfterLook {
        let spinner = self.slab[id as usize];
        if spinner.fresh {
            self.slab[id as usize].fresh = false;
            return AfterLook::Look;
        }
        let spin = nanos(spinner.woke_at) - nanos(spinner.parked_at);
        self.stop_check += spin;
        let stop_check = self.stop_check;
        let end = nanos(now);
        let delta = end - stop_check;
        let interval = i128::from(STOP_CHECK_INTERVAL.as_nanos());
        let stopped = if delta <= 0 {
            // The spinners slept more than real time: one did nothing.
            self.stop_check = end - interval;
            true
        } else {
            let sole = if spinner.prev_stop_check + spin == stop_check {
                spinner.sole_spin + spin
            } else {
                0
            };
            let spinner = &mut self.slab[id as usize];
            spinner.sole_spin = sole;
            spinner.prev_stop_check = stop_check;
            if sole > interval && self.count == 1 {
                true
            } else {
                if delta > 2 * interval {
                    self.stop_check = end - interval;
                }
                false
            }
        };
        if stopped {
            self.stops += 1;
            self.leave(now, id);
            AfterLook::Stopped
        } else {
            AfterLook::Look
        }
    }

    /// The spinner took a task (`stopSpinning`): it is a worker again.
    /// Returns whether nobody spins now (the caller then schedules a
    /// worker for every executor with tasks, `maybeSchedule`).
    pub fn took_task(&mut self, now: SimTime, id: u32) -> bool {
        self.leave(now, id);
        self.count == 0
    }

    /// The spinner's look found nothing: it parks for another sleep.
    pub fn look_found_nothing(&mut self, now: SimTime, id: u32) {
        self.idle_looks += 1;
        self.park(now, id);
    }

    /// Every spinner is gone (the process died at `now`).
    pub fn clear(&mut self, now: SimTime) {
        self.count_time(now);
        self.count = 0;
        self.slab.clear();
        self.free.clear();
        self.parked.clear();
        self.fired.clear();
    }

    fn park(&mut self, now: SimTime, id: u32) {
        let sleep = sleep(self.count, self.rng.random::<f64>());
        let spinner = &mut self.slab[id as usize];
        spinner.parked_at = now;
        spinner.timed = true;
        self.push(now + sleep + self.params.park_overshoot, id);
    }

    fn push(&mut self, at: SimTime, id: u32) {
        self.parked.push(Reverse((at, self.next_sequence, id)));
        self.next_sequence += 1;
    }

    fn allocate(&mut self, spinner: Spinner) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.slab[id as usize] = spinner;
                id
            }
            None => {
                self.slab.push(spinner);
                u32::try_from(self.slab.len() - 1).expect("fewer than 2^32 spinners")
            }
        }
    }

    /// The spinner stops spinning (took a task, or was stopped).
    fn leave(&mut self, now: SimTime, id: u32) {
        assert!(self.count > 0, "a spinner leaves only while one spins");
        self.count_time(now);
        self.count -= 1;
        self.free.push(id);
    }
}

/// The sleep a spinner asks for with `spinners` spinning and a uniform
/// draw `uniform` in [0, 1) (`doWaitSpin`).
pub fn sleep(spinners: u32, uniform: f64) -> SimDuration {
    let most = (SLEEP_PER_SPINNER.as_nanos() * u64::from(spinners)).min(MAX_SLEEP.as_nanos());
    SimDuration::from_nanos(((most as f64 * uniform) as u64).max(MIN_SLEEP.as_nanos()))
}

fn nanos(at: SimTime) -> i128 {
    i128::from(at.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: SepParams = SepParams {
        run_cost: SimDuration::from_micros(10),
        park_overshoot: SimDuration::from_micros(84),
        timer_slack: SimDuration::from_micros(50),
    };

    fn at_us(micros: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(micros)
    }

    #[test]
    fn the_sleep_grows_with_the_spinners_and_keeps_its_floor_and_cap() {
        assert_eq!(sleep(1, 0.999), MIN_SLEEP);
        assert_eq!(sleep(3, 0.5), SimDuration::from_micros(15));
        assert_eq!(sleep(3, 0.1), MIN_SLEEP);
        assert_eq!(sleep(500, 0.5), SimDuration::from_micros(500));
    }

    /// A sole spinner with nothing to do looks every park (its sleep plus
    /// the overshoot) and stops once it has spun 10 ms alone.
    #[test]
    fn a_sole_spinner_stops_after_ten_ms_alone() {
        let mut spinners = Spinners::new(PARAMS, 7);
        spinners.start_spinning(at_us(1_000_000));
        let mut looks = 0;
        let mut now = at_us(1_000_000);
        loop {
            let wake = spinners.next_wake().expect("a spinner is parked");
            assert!(wake > now);
            now = wake;
            let (woke, id) = spinners.wake_due(now).expect("due");
            assert_eq!(woke, now);
            now += PARAMS.run_cost;
            looks += 1;
            match spinners.after_look(now, id) {
                AfterLook::Stopped => break,
                AfterLook::Look => spinners.look_found_nothing(now, id),
            }
        }
        assert_eq!(spinners.count(), 0);
        assert_eq!(spinners.next_wake(), None);
        // Each park is 10 us asked and 84 us late: ~10.4 ms in 104-us
        // steps (the first adds nothing to the sole time).
        assert!((100..=110).contains(&looks), "{looks} looks");
        assert_eq!(spinners.runs(), looks);
        assert_eq!(spinners.stops(), 1);
    }

    /// Spinners that sleep more than real time are trimmed: four spinning
    /// together fall to one within tens of milliseconds.
    #[test]
    fn the_stop_check_trims_spinners_that_sleep_more_than_real_time() {
        let mut spinners = Spinners::new(PARAMS, 3);
        let start = at_us(1_000_000);
        for _ in 0..4 {
            spinners.start_spinning(start);
        }
        while spinners.count() > 1 {
            let now = spinners.next_wake().expect("parked");
            let (_, id) = spinners.wake_due(now).expect("due");
            if spinners.after_look(now, id) == AfterLook::Look {
                spinners.look_found_nothing(now, id);
            }
            assert!(now.saturating_since(start) < SimDuration::from_millis(60));
        }
        assert_eq!(spinners.stops(), 3);
    }

    #[test]
    fn a_spinner_that_takes_a_task_leaves_and_says_when_none_is_left() {
        let mut spinners = Spinners::new(PARAMS, 1);
        spinners.start_spinner(at_us(0), SimDuration::from_micros(8));
        assert_eq!(spinners.next_wake(), Some(at_us(8)));
        let (_, id) = spinners.wake_due(at_us(8)).expect("due");
        assert_eq!(spinners.after_look(at_us(18), id), AfterLook::Look);
        assert!(spinners.took_task(at_us(18), id));
        assert_eq!(spinners.count(), 0);
        assert_eq!(spinners.idle_looks(), 0);
        // One spinner from 0 to 18 us, none after.
        assert_eq!(
            spinners.spinning_time(at_us(50)),
            SimDuration::from_micros(18)
        );
    }

    /// Two spinners' timers within the slack of each other fire at the
    /// earlier one's instant; one beyond it fires on its own; a worker
    /// unparked for spinning keeps its own time.
    #[test]
    fn timers_within_the_slack_fire_together() {
        let mut spinners = Spinners::new(PARAMS, 3);
        // Park three spinners by hand at known instants: their parks end
        // at 100, 140 and 200 us.
        let ids: Vec<u32> = (0..3).map(|_| spinners.enlist(at_us(0), false)).collect();
        for (&id, end) in ids.iter().zip([100, 140, 200]) {
            spinners.slab[id as usize].timed = true;
            spinners.push(at_us(end), id);
        }
        let fresh = spinners.enlist(at_us(0), true);
        spinners.push(at_us(120), fresh);
        assert_eq!(spinners.next_wake(), Some(at_us(100)));
        assert_eq!(spinners.wake_due(at_us(99)), None);
        assert_eq!(spinners.wake_due(at_us(100)), Some((at_us(100), ids[0])));
        // 140 is within 50 us of 100: it fired with it.
        assert_eq!(spinners.next_wake(), Some(at_us(100)));
        assert_eq!(spinners.wake_due(at_us(100)), Some((at_us(100), ids[1])));
        // The unparked worker at 120 did not.
        assert_eq!(spinners.wake_due(at_us(100)), None);
        assert_eq!(spinners.wake_due(at_us(120)), Some((at_us(120), fresh)));
        assert_eq!(spinners.wake_due(at_us(199)), None);
        assert_eq!(spinners.wake_due(at_us(200)), Some((at_us(200), ids[2])));
        assert_eq!(spinners.runs(), 4);
    }
}
