//! Where the simulated shards' CPU tasks and I/Os spent their time, kept as
//! sums so that nothing is stored per task: `summary.json`'s `time_spent`.

use units::SimTime;

/// Spans of time (a task's stay on the CPU, an I/O's wait in the scheduler
/// or on the device) kept as sums of their starts and ends, so that nothing
/// is stored per span: their total is the sum of the ends less the sum of
/// the starts, spans still open counted to the time asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spans {
    /// Spans begun.
    pub started: u64,
    /// Spans ended.
    pub ended: u64,
    started_ns: u128,
    ended_ns: u128,
}

impl Spans {
    pub(super) fn start(&mut self, at: SimTime) {
        self.started += 1;
        self.started_ns += u128::from(at.as_nanos());
    }

    pub(super) fn end(&mut self, at: SimTime) {
        self.ended += 1;
        self.ended_ns += u128::from(at.as_nanos());
    }

    /// The spans' total length in nanoseconds, those still open at `now`
    /// counted to it.
    pub fn total_ns(&self, now: SimTime) -> u128 {
        debug_assert!(self.ended <= self.started);
        let open = u128::from(self.started - self.ended) * u128::from(now.as_nanos());
        (self.ended_ns + open).saturating_sub(self.started_ns)
    }

    pub(super) fn merge(&mut self, other: &Spans) {
        self.started += other.started;
        self.ended += other.ended;
        self.started_ns += other.started_ns;
        self.ended_ns += other.ended_ns;
    }
}

/// One kind of CPU work: the tasks' stays from hand-over to finish and
/// their prices; a stay less its price is the task's wait (queued behind
/// other work, preempted, or stopped by a GC pause).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTally {
    /// Hand-over to finish.
    pub on_cpu: Spans,
    /// The tasks' prices summed, nanoseconds.
    pub price_ns: u128,
}

/// One I/O class: waits in the I/O scheduler and times on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoTally {
    /// Asked for to dispatched.
    pub queued: Spans,
    /// Dispatched to completed.
    pub device: Spans,
    /// Bytes asked for.
    pub bytes: u64,
}

/// The c-s processes' thread hand-offs (`models::wakeup`): how many, and
/// the time they added to operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientTally {
    /// Hand-offs made.
    pub handoffs: u64,
    /// Their CPU and wake-up time summed, nanoseconds.
    pub total_ns: u128,
}

impl ClientTally {
    /// Counts `handoffs` hand-offs that added `added`.
    pub(super) fn record(&mut self, handoffs: u32, added: units::SimDuration) {
        self.handoffs += u64::from(handoffs);
        self.total_ns += u128::from(added.as_nanos());
    }

    pub(super) fn merge(&mut self, other: &ClientTally) {
        self.handoffs += other.handoffs;
        self.total_ns += other.total_ns;
    }
}

/// Where the work of a run spent its time: per kind of engine CPU work (in
/// [`engine::CpuWork::index`] order), per I/O class (in
/// [`engine::IoClass::ALL`] order), and in the clients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeSpent {
    /// Per kind of CPU work.
    pub cpu: [CpuTally; engine::CpuWork::KINDS],
    /// Per I/O class.
    pub io: [IoTally; engine::IoClass::ALL.len()],
    /// The clients' thread hand-offs.
    pub client: ClientTally,
}

impl TimeSpent {
    pub(super) fn merge(&mut self, other: &TimeSpent) {
        for (mine, theirs) in self.cpu.iter_mut().zip(&other.cpu) {
            mine.on_cpu.merge(&theirs.on_cpu);
            mine.price_ns += theirs.price_ns;
        }
        for (mine, theirs) in self.io.iter_mut().zip(&other.io) {
            mine.queued.merge(&theirs.queued);
            mine.device.merge(&theirs.device);
            mine.bytes += theirs.bytes;
        }
        self.client.merge(&other.client);
    }
}
