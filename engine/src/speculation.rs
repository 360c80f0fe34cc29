//! Speculative retry: when a read's replicas are slow, ask one more.
//!
//! What it models (scylla-mechanisms.md 4.2, `service/storage_proxy.cc`
//! `speculating_read_executor` and `database.cc`
//! `get_coordinator_read_latency_percentile` @3.0; Cassandra 3.11's
//! `SpeculativeRetryParam` is the same policy):
//! - The table option `speculative_retry` (default `99.0PERCENTILE` in
//!   Scylla 2.x/3.0 and Cassandra 3.11): a read that has not reached its
//!   consistency level after a delay sends one extra request to a replica
//!   it did not contact, a digest request if the data has arrived and a
//!   data request otherwise. `Nms` uses a fixed delay; `NONE` never
//!   speculates. (`ALWAYS`, which sends the extra request up front, is left
//!   out.)
//! - The percentile's delay is `min(p, read_request_timeout / 2)`, with `p`
//!   the percentile of this table's coordinator read latency, taken from a
//!   decaying histogram: recomputed at most once per second, after which
//!   every bucket is multiplied by 0.9. Scylla keeps the percentile in
//!   whole milliseconds, truncated, at least 1 ms
//!   (`max(percentile / 1000, 1) * 1ms` on a histogram in microseconds,
//!   `column_family::get_coordinator_read_latency_percentile` @2.1, 2.2
//!   and 3.0): a p99 of 2.9 ms speculates after 2 ms, one of 0.4 ms after
//!   1 ms ([`Resolution::WholeMillis`]). Cassandra 3.11 takes the
//!   percentile in microseconds ([`Resolution::Exact`]).
//! - No speculation when every replica is contacted already (CL=ALL, or a
//!   read-repair read in one datacenter).
//!
//! The histogram's buckets follow Cassandra's `EstimatedHistogram`: bucket
//! bounds grow by a factor of 1.2 from 1 us, so a percentile is exact to
//! within 20%.

use units::{SimDuration, SimTime};

/// A table's `speculative_retry` option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpeculativeRetry {
    /// `NONE`.
    Never,
    /// `N.NPERCENTILE`: after this percentile (0-100) of the coordinator
    /// read latency.
    Percentile(f64),
    /// `Nms`: after a fixed delay.
    Fixed(SimDuration),
}

impl SpeculativeRetry {
    /// The default of Scylla 2.x/3.0 and Cassandra 3.11 tables.
    pub const DEFAULT: SpeculativeRetry = SpeculativeRetry::Percentile(99.0);
}

/// How a percentile becomes a delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The bucket's bound as it is (Cassandra).
    Exact,
    /// Whole milliseconds, truncated, at least one (Scylla).
    WholeMillis,
}

impl Resolution {
    fn apply(self, delay: SimDuration) -> SimDuration {
        let applied = match self {
            Resolution::Exact => delay,
            Resolution::WholeMillis => {
                SimDuration::from_millis((delay.as_nanos() / 1_000_000).max(1))
            }
        };
        debug_assert!(
            applied <= delay || applied == SimDuration::from_millis(1),
            "truncating never lengthens a delay beyond the one-millisecond floor"
        );
        applied
    }
}

const BUCKETS: usize = 96;
/// How often the percentile is recomputed.
const RECOMPUTE_EVERY: SimDuration = SimDuration::from_secs(1);
/// Factor every bucket is multiplied by after a recompute.
const DECAY: f64 = 0.9;

const _: () = assert!(
    0.0 < DECAY && DECAY < 1.0,
    "a decay forgets, and only in part"
);
const _: () = assert!(BUCKETS > 1 && RECOMPUTE_EVERY.as_nanos() > 0);

/// Upper bounds of the histogram's buckets, in nanoseconds: 1 us, then x1.2
/// (rounded up, always growing), as `EstimatedHistogram`'s offsets.
fn bucket_bounds() -> [u64; BUCKETS] {
    let mut bounds = [0u64; BUCKETS];
    let mut bound = 1_000u64;
    for slot in &mut bounds {
        *slot = bound;
        bound = ((bound as f64 * 1.2).ceil() as u64).max(bound + 1);
    }
    assert!(
        bounds.windows(2).all(|pair| pair[0] < pair[1]),
        "bucket bounds grow"
    );
    bounds
}

/// The coordinator read-latency estimate behind the percentile policy.
#[derive(Clone, Debug)]
pub struct LatencyEstimate {
    bounds: [u64; BUCKETS],
    counts: [f64; BUCKETS],
    cached: Option<SimDuration>,
    next_recompute: SimTime,
}

impl Default for LatencyEstimate {
    fn default() -> Self {
        LatencyEstimate {
            bounds: bucket_bounds(),
            counts: [0.0; BUCKETS],
            cached: None,
            next_recompute: SimTime::ZERO,
        }
    }
}

impl LatencyEstimate {
    /// What must hold: bucket bounds strictly growing, counts non-negative
    /// and finite, and a cached percentile that is one of the bounds.
    /// O(buckets), 96.
    pub fn check_invariants(&self) {
        assert!(self.bounds.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(
            self.counts
                .iter()
                .all(|count| count.is_finite() && *count >= 0.0),
            "bucket counts are non-negative"
        );
        if let Some(cached) = self.cached {
            assert!(
                self.bounds.binary_search(&cached.as_nanos()).is_ok(),
                "a percentile is a bucket's bound"
            );
        }
    }

    /// Records one coordinator read latency.
    pub fn record(&mut self, latency: SimDuration) {
        let nanos = latency.as_nanos();
        let bucket = self.bounds.partition_point(|&bound| bound < nanos);
        debug_assert!(
            bucket >= BUCKETS || nanos <= self.bounds[bucket],
            "a latency lands in the bucket bounding it"
        );
        self.counts[bucket.min(BUCKETS - 1)] += 1.0;
    }

    /// The `percentile` (0-100) of the recorded latencies (a bucket's upper
    /// bound), recomputed at most once per second and decayed after each
    /// recompute; `None` until something was recorded.
    pub fn percentile(&mut self, now: SimTime, percentile: f64) -> Option<SimDuration> {
        debug_assert!(
            (0.0..=100.0).contains(&percentile),
            "a percentile is in [0, 100], not {percentile}"
        );
        if now >= self.next_recompute {
            let total: f64 = self.counts.iter().sum();
            if total > 0.0 {
                self.next_recompute = now + RECOMPUTE_EVERY;
                let target = total * percentile / 100.0;
                let mut seen = 0.0;
                let bucket = self
                    .counts
                    .iter()
                    .position(|count| {
                        seen += count;
                        seen >= target
                    })
                    .unwrap_or(BUCKETS - 1);
                self.cached = Some(SimDuration::from_nanos(self.bounds[bucket]));
                for count in &mut self.counts {
                    *count *= DECAY;
                }
                debug_assert!(self.next_recompute > now, "the next recompute is ahead");
            }
        }
        self.cached
    }

    /// How long a read waits before speculating under `policy`, with the
    /// table's `read_timeout` and the percentile taken at `resolution`;
    /// `None`: it does not speculate.
    pub fn delay(
        &mut self,
        now: SimTime,
        policy: SpeculativeRetry,
        read_timeout: SimDuration,
        resolution: Resolution,
    ) -> Option<SimDuration> {
        let cap = SimDuration::from_nanos(read_timeout.as_nanos() / 2);
        let delay = match policy {
            SpeculativeRetry::Never => None,
            SpeculativeRetry::Fixed(delay) => Some(delay.min(cap)),
            // Before any read has finished there is no percentile yet: wait
            // the cap, as an estimate of "slow".
            SpeculativeRetry::Percentile(p) => Some(
                self.percentile(now, p)
                    .map_or(cap, |delay| resolution.apply(delay).min(cap)),
            ),
        };
        debug_assert!(
            delay.is_none_or(|delay| delay <= cap),
            "a read speculates before half its timeout"
        );
        delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_percentile_follows_the_latencies_and_decays() {
        let mut estimate = LatencyEstimate::default();
        let now = SimTime::from_nanos(1);
        assert_eq!(estimate.percentile(now, 99.0), None);
        for i in 0..1000u64 {
            // 1 ms for 98% of reads, 20 ms for 2%.
            let ms = if i % 50 == 0 || i % 50 == 1 { 20 } else { 1 };
            estimate.record(SimDuration::from_millis(ms));
        }
        let p99 = estimate.percentile(now, 99.0).unwrap();
        assert!(
            (20_000_000..24_000_000).contains(&p99.as_nanos()),
            "{p99:?}"
        );
        let p50 = {
            let mut copy = estimate.clone();
            copy.next_recompute = SimTime::ZERO;
            copy.percentile(now, 50.0).unwrap()
        };
        assert!((1_000_000..1_200_000).contains(&p50.as_nanos()), "{p50:?}");
        // Within the second, the cached value stands whatever is recorded.
        for _ in 0..10_000 {
            estimate.record(SimDuration::from_millis(1));
        }
        assert_eq!(estimate.percentile(now, 99.0), Some(p99));
        // A second later the fast reads dominate.
        let later = now + SimDuration::from_secs(1);
        assert!(estimate.percentile(later, 99.0).unwrap() < SimDuration::from_millis(2));
    }

    #[test]
    fn delays_are_capped_at_half_the_read_timeout() {
        let mut estimate = LatencyEstimate::default();
        let timeout = SimDuration::from_secs(5);
        let now = SimTime::from_nanos(1);
        assert_eq!(
            estimate.delay(now, SpeculativeRetry::DEFAULT, timeout, Resolution::Exact),
            Some(SimDuration::from_millis(2500))
        );
        assert_eq!(
            estimate.delay(now, SpeculativeRetry::Never, timeout, Resolution::Exact),
            None
        );
        assert_eq!(
            estimate.delay(
                now,
                SpeculativeRetry::Fixed(SimDuration::from_secs(9)),
                timeout,
                Resolution::Exact
            ),
            Some(SimDuration::from_millis(2500))
        );
        estimate.record(SimDuration::from_micros(300));
        let delay = estimate
            .delay(now, SpeculativeRetry::DEFAULT, timeout, Resolution::Exact)
            .unwrap();
        assert!((300_000..400_000).contains(&delay.as_nanos()), "{delay:?}");
    }

    #[test]
    fn scylla_speculates_after_whole_milliseconds() {
        let timeout = SimDuration::from_secs(5);
        let now = SimTime::from_nanos(1);
        let delay_for = |latency: SimDuration| {
            let mut estimate = LatencyEstimate::default();
            estimate.record(latency);
            let scylla = estimate.clone().delay(
                now,
                SpeculativeRetry::DEFAULT,
                timeout,
                Resolution::WholeMillis,
            );
            let exact = estimate.delay(now, SpeculativeRetry::DEFAULT, timeout, Resolution::Exact);
            (scylla.unwrap(), exact.unwrap())
        };
        // A p99 of 2.2 ms (its bucket's bound, ~2.6 ms, exactly) waits 2 ms
        // in Scylla.
        let (scylla, exact) = delay_for(SimDuration::from_micros(2_200));
        assert_eq!(scylla, SimDuration::from_millis(2));
        assert!(
            (2_200_000..3_000_000).contains(&exact.as_nanos()),
            "{exact:?}"
        );
        // Below a millisecond, Scylla still waits one.
        let (scylla, exact) = delay_for(SimDuration::from_micros(300));
        assert_eq!(scylla, SimDuration::from_millis(1));
        assert!(exact < SimDuration::from_micros(400), "{exact:?}");
    }
}
