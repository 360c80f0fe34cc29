//! Cassandra's compaction throughput limit: a token bucket on the bytes
//! compactions read.
//!
//! What is modelled: `compaction_throughput_mb_per_sec` (cassandra.yaml
//! 3.11, default 16; 0 disables it). `CompactionManager` holds one Guava
//! `RateLimiter` per node at `throughput x 1024 x 1024` permits (bytes) per
//! second, and every compaction scanner acquires permits for each buffer it
//! reads (`LimitingRebufferer`), so all compactions of a node together read
//! at most that many bytes per second; their writes follow their reads
//! through the pipeline and are not limited on their own. From memory
//! \[R\]: apache/cassandra 3.11 `CompactionManager.getRateLimiter` and
//! `io/util/LimitingRebufferer.java`. Scylla 2.x-3.0 parse the option and
//! ignore it (`db/config.hh` marks it `Unused`).
//!
//! [`RateLimiter`] follows Guava's `SmoothBursty` with its default burst of
//! one second (from memory \[R\], Guava `RateLimiter.create(double)` and
//! `SmoothRateLimiter`): a request is granted at the time the previous
//! requests have paid for (`nextFreeTicket`), and pushes that time on by its
//! own cost; permits not used while idle are stored, up to one second's
//! worth, and spent first at no cost. So over any window of `T` seconds at
//! most `rate x (T + 1)` bytes plus one request are granted. Here the
//! permits are acquired before a chunk is read rather than after
//! (Cassandra's `rebuffer` reads, then acquires): the same rate, one chunk
//! earlier.

use units::{SimDuration, SimTime};

/// A token bucket of bytes per second with one second of burst.
#[derive(Clone, Debug, PartialEq)]
pub struct RateLimiter {
    bytes_per_second: f64,
    /// `stableIntervalMicros`, in nanoseconds per byte.
    interval_ns: f64,
    /// `maxPermits`: one second of bytes.
    max_stored: f64,
    /// `storedPermits`.
    stored: f64,
    /// `nextFreeTicketMicros`.
    next_free: SimTime,
}

impl RateLimiter {
    /// A limiter of `bytes_per_second` (> 0) created at `now`, with no
    /// stored permits (Guava starts empty).
    pub fn new(bytes_per_second: u64, now: SimTime) -> RateLimiter {
        assert!(bytes_per_second > 0, "a rate limit of 0 bytes per second");
        let rate = bytes_per_second as f64;
        let limiter = RateLimiter {
            bytes_per_second: rate,
            interval_ns: 1e9 / rate,
            max_stored: rate,
            stored: 0.0,
            next_free: now,
        };
        limiter.check_invariants();
        limiter
    }

    /// What must hold: a positive rate whose interval is its inverse, one
    /// second of bytes at most stored, and never fewer than none. O(1).
    pub fn check_invariants(&self) {
        assert!(self.bytes_per_second > 0.0 && self.interval_ns > 0.0);
        assert!(
            (self.interval_ns * self.bytes_per_second - 1e9).abs() <= 1e-3,
            "the interval is the rate's inverse"
        );
        assert_eq!(
            self.max_stored, self.bytes_per_second,
            "one second of burst"
        );
        assert!(
            (0.0..=self.max_stored).contains(&self.stored),
            "stored permits {} of at most {}",
            self.stored,
            self.max_stored
        );
    }

    /// The rate, bytes per second.
    pub fn bytes_per_second(&self) -> f64 {
        self.bytes_per_second
    }

    /// Reserves `bytes` at `now` (`reserveEarliestAvailable`); returns when
    /// the request may proceed: `now` or later. Successive reservations
    /// return non-decreasing times.
    pub fn reserve(&mut self, now: SimTime, bytes: u64) -> SimTime {
        // `resync`: idle time since the next free ticket becomes permits.
        if now > self.next_free {
            let idle_ns = (now - self.next_free).as_nanos() as f64;
            self.stored = (self.stored + idle_ns / self.interval_ns).min(self.max_stored);
            self.next_free = now;
        }
        let granted_at = self.next_free;
        let from_stored = (bytes as f64).min(self.stored);
        let fresh = bytes as f64 - from_stored;
        self.stored -= from_stored;
        self.next_free += SimDuration::from_nanos((fresh * self.interval_ns) as u64);
        debug_assert!(self.next_free >= granted_at, "tickets only move forward");
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        granted_at.max(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    #[test]
    fn the_first_request_goes_at_once_and_the_next_ones_pay_for_it() {
        let mut limiter = RateLimiter::new(16 * MIB, at(0));
        // 16 MiB at 16 MiB/s: granted now, the next waits one second.
        assert_eq!(limiter.reserve(at(0), 16 * MIB), at(0));
        assert_eq!(limiter.reserve(at(0), 8 * MIB), at(1000));
        assert_eq!(limiter.reserve(at(10), MIB), at(1500));
    }

    #[test]
    fn idle_time_is_stored_up_to_one_second() {
        let mut limiter = RateLimiter::new(MIB, at(0));
        // Ten idle seconds store one second (1 MiB): that much goes free.
        assert_eq!(limiter.reserve(at(10_000), MIB / 2), at(10_000));
        assert_eq!(limiter.reserve(at(10_000), MIB / 2), at(10_000));
        // The stored bytes are spent: the next pays in full.
        assert_eq!(limiter.reserve(at(10_000), MIB), at(10_000));
        assert_eq!(limiter.reserve(at(10_000), MIB / 4), at(11_000));
    }

    #[test]
    fn a_stream_of_chunks_is_held_to_the_rate() {
        let rate = 16 * MIB;
        let chunk = 128 * 1024;
        let mut limiter = RateLimiter::new(rate, at(0));
        // Requests as fast as they are granted, for 10 s.
        let mut now = at(0);
        let mut granted = 0u64;
        while now < at(10_000) {
            now = limiter.reserve(now, chunk);
            if now < at(10_000) {
                granted += chunk;
            }
        }
        // 10 s at 16 MiB/s, plus at most one chunk.
        assert!(granted <= 10 * rate + chunk, "{granted}");
        assert!(granted >= 10 * rate - chunk, "{granted}");
    }
}
