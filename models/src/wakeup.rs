//! Thread wake-up latency: how long a parked thread takes to run once
//! another thread (or the kernel) makes it runnable.
//!
//! Where it applies: every hand-off between JVM threads that finds the
//! receiving thread parked.
//! - The cassandra-stress client (the Java driver 3.x inside 2018's c-s)
//!   hands each operation across threads three times: the c-s thread's
//!   request goes to the connection's Netty event loop (the driver's
//!   `Flusher` is started with `eventLoop.execute`, which wakes the loop in
//!   `epoll_wait`); the reply wakes that loop again when the socket turns
//!   readable; and the loop, having decoded it, completes the future the
//!   c-s thread is parked on (`getUninterruptibly`). At the rates of the
//!   published runs each connection carries an operation every few hundred
//!   microseconds to a few milliseconds, so each of the three finds its
//!   thread asleep.
//! - A Cassandra 3.11 stage hands a task to an idle pool thread
//!   ([`crate::jvm`]).
//!
//! Scylla's reactors do not sleep while they have work within the poll
//! period (`--idle-poll-time-us`, 200 us on bare metal, 2 ms virtualized),
//! so no wake-up is charged to them.
//!
//! The figure: a benchmark run for the twin,
//! `validation/measurements/WakeupLatency.java`, on a 2-vCPU AMD EPYC
//! container with OpenJDK 17: a completer thread idle for an exponential
//! time (mean 1 ms) unparks a parked waiter; over 8 runs of 20,000
//! hand-offs the latency has a median of 6.3-8.6 us (8 typical), a 90th
//! percentile of 17-21 us and a 99th of 35-44 us. A lognormal through the
//! median and the 90th percentile, median 8 us and sigma 0.74, gives a
//! 99th percentile of 45 us and a mean of 10.5 us. The 2018 hosts (Xen HVM
//! guests: c4 and i3 up to i3.16xlarge) paid a hypervisor-mediated
//! interrupt for each cross-CPU wake-up, so this is a floor for them;
//! hardware.md 4.5 names the wake-up latency without a figure.
//!
//! The CPU the hand-off itself costs (queueing, the context switch, cache
//! misses) is [`crate::jvm::HANDOFF_COST`], hardware.md 4.5's estimate;
//! the wake-up latency here is time, not CPU.

use std::sync::OnceLock;

use rand::Rng;
use statrs::distribution::{ContinuousCDF, LogNormal};
use units::SimDuration;

/// Median wake-up latency of a parked JVM thread (module doc).
pub const WAKEUP_MEDIAN: SimDuration = SimDuration::from_micros(8);

/// Shape of its lognormal (the standard deviation of its logarithm).
pub const WAKEUP_SIGMA: f64 = 0.74;

/// Points of the quantile table draws pick from.
const TABLE_POINTS: usize = 1024;

/// The lognormal's quantiles at the midpoints of `TABLE_POINTS` equal
/// slices of probability, nanoseconds: a draw is one random index, no
/// transcendental function (a draw per JVM task and three per client
/// operation; `exp` per draw cost the 40-node benchmark several percent).
/// The largest is the 99.95th percentile, 92 us.
fn quantiles() -> &'static [u32; TABLE_POINTS] {
    static TABLE: OnceLock<[u32; TABLE_POINTS]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let median = WAKEUP_MEDIAN.as_nanos() as f64;
        let lognormal = LogNormal::new(median.ln(), WAKEUP_SIGMA)
            .expect("a finite location and a positive shape");
        std::array::from_fn(|point| {
            let probability = (point as f64 + 0.5) / TABLE_POINTS as f64;
            lognormal.inverse_cdf(probability).round() as u32
        })
    })
}

/// A draw of the wake-up latency: lognormal, median [`WAKEUP_MEDIAN`],
/// shape [`WAKEUP_SIGMA`] (as [`TABLE_POINTS`] equally likely quantiles).
pub fn draw<R: Rng + ?Sized>(rng: &mut R) -> SimDuration {
    let point = (rng.next_u64() >> (64 - TABLE_POINTS.trailing_zeros())) as usize;
    SimDuration::from_nanos(u64::from(quantiles()[point]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn draws_follow_the_measured_percentiles() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let mut draws: Vec<u64> = (0..200_000).map(|_| draw(&mut rng).as_nanos()).collect();
        draws.sort_unstable();
        let at = |q: f64| draws[(draws.len() as f64 * q) as usize] as f64 / 1e3;
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64 / 1e3;
        // The measurement: median ~8, p90 17-21, p99 35-44 us.
        assert!((at(0.5) - 8.0).abs() < 0.2, "median {}", at(0.5));
        assert!((17.0..=22.0).contains(&at(0.9)), "p90 {}", at(0.9));
        assert!((35.0..=50.0).contains(&at(0.99)), "p99 {}", at(0.99));
        assert!((10.0..=11.0).contains(&mean), "mean {mean}");
    }
}
