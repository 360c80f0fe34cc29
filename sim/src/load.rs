//! Load phases as the simulator runs them: what each cassandra-stress
//! process does, resolved from its command line.
//!
//! A c-s process is `threads` closed-loop threads: each issues one operation,
//! waits for its reply, and issues the next. With `limit=R/s` the process's
//! threads share one pacer that hands out start times `1/R` apart, so the
//! process never exceeds R ops/s (c-s's smoothed rate limiter, without its
//! burst allowance). Every process runs the command as written: K processes
//! with `n=N` perform K x N operations, as K copies of c-s would.

use models::distribution::SequentialKeys;
use units::{SimDuration, SimTime};

impl KeyPlan {
    /// The per-process key state at the start of the load.
    pub fn keys(&self) -> SequentialKeys {
        match *self {
            KeyPlan::Sequential { first, last } => SequentialKeys::new(first, last),
        }
    }
}

/// How a load decides which partition key to use next.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyPlan {
    /// `-pop seq=first..last`: keys in order, wrapping after `last`.
    Sequential {
        /// First key.
        first: u64,
        /// Last key (inclusive).
        last: u64,
    },
}

/// When a load stops issuing operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopPlan {
    /// After this many operations per process (`n=`).
    Count(u64),
    /// After this long (`duration=`).
    Duration(SimDuration),
}

/// The operations of a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    /// Writes.
    Write,
}

impl OpKind {
    /// Lower-case name used in reports (`write`).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Write => "write",
        }
    }
}

/// A resolved `[[load]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPlan {
    /// The load's name.
    pub name: String,
    /// The command line as written.
    pub command: String,
    /// c-s processes running it.
    pub processes: u32,
    /// Threads per process.
    pub threads: u32,
    /// Per-process rate limit, operations per second.
    pub limit_ops_per_s: Option<f64>,
    /// What the threads do.
    pub operation: OpKind,
    /// Bytes of column values per row.
    pub value_bytes: u32,
    /// Key selection.
    pub keys: KeyPlan,
    /// When each process stops.
    pub stop: StopPlan,
    /// When the load starts.
    pub start: SimDuration,
    /// Loader instance type.
    pub loader: String,
    /// The loader's NIC bandwidth, Gbit/s.
    pub loader_nic_gbps: f64,
}

/// The pacer shared by one process's threads under `limit=R/s`.
#[derive(Clone, Debug)]
pub struct Pacer {
    interval: SimDuration,
    next_start: SimTime,
}

impl Pacer {
    /// A pacer for `ops_per_s`, first start at `start`.
    pub fn new(ops_per_s: f64, start: SimTime) -> Pacer {
        assert!(ops_per_s > 0.0);
        Pacer {
            interval: SimDuration::from_secs_f64(1.0 / ops_per_s),
            next_start: start,
        }
    }

    /// Reserves the next start time at or after `now`.
    pub fn reserve(&mut self, now: SimTime) -> SimTime {
        let start = self.next_start.max(now);
        self.next_start = start + self.interval;
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pacer_spaces_starts_by_the_rate() {
        let mut pacer = Pacer::new(1000.0, SimTime::ZERO);
        assert_eq!(pacer.reserve(SimTime::ZERO), SimTime::ZERO);
        assert_eq!(pacer.reserve(SimTime::ZERO), SimTime::from_nanos(1_000_000));
        let late = SimTime::from_nanos(10_000_000);
        assert_eq!(pacer.reserve(late), late, "no burst credit for idle time");
    }
}
