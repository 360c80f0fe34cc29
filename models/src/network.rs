//! The network between clients and nodes: a NIC per sender that serializes
//! its messages at the NIC's bandwidth, then a propagation latency with a
//! seeded jitter.
//!
//! Sources (hardware.md section 6.2): same-AZ EC2 one-way latency of 40-60 us
//! for 2018 i3 with ENA (RTT median 80-120 us), with a long tail; modelled as
//! 45 us plus an exponential jitter of mean 10 us. NIC bandwidths come from
//! the instance catalog (hardware.md 1.1). Left out for now (models issue):
//! per-message CPU, receive-side contention, fair sharing between flows, and
//! the fault hooks (cuts, drops, degradation).

use rand::{Rng, RngExt};
use units::{SimDuration, SimTime};

/// Fixed propagation latency, one way (hardware.md 6.2 estimate).
pub const ONE_WAY_LATENCY: SimDuration = SimDuration::from_micros(45);
/// Mean of the exponential jitter added to each message.
pub const JITTER_MEAN: SimDuration = SimDuration::from_micros(10);

/// A sender's NIC: messages leave one after another at its bandwidth.
#[derive(Clone, Debug)]
pub struct Nic {
    bytes_per_s: f64,
    free_at: SimTime,
    bytes_sent: u64,
}

impl Nic {
    /// A NIC with `gbps` gigabits per second of transmit bandwidth.
    pub fn new(gbps: f64) -> Nic {
        assert!(gbps > 0.0, "a NIC needs bandwidth");
        Nic {
            bytes_per_s: gbps * 1e9 / 8.0,
            free_at: SimTime::ZERO,
            bytes_sent: 0,
        }
    }

    /// Sends `bytes` at `now`; returns when the message arrives.
    pub fn send<R: Rng + ?Sized>(&mut self, now: SimTime, bytes: u64, rng: &mut R) -> SimTime {
        let start = self.free_at.max(now);
        let serialized = start + SimDuration::from_secs_f64(bytes as f64 / self.bytes_per_s);
        self.free_at = serialized;
        self.bytes_sent += bytes;
        let uniform: f64 = rng.random();
        let jitter = -JITTER_MEAN.as_secs_f64() * (1.0 - uniform).ln();
        serialized + ONE_WAY_LATENCY + SimDuration::from_secs_f64(jitter)
    }

    /// Bytes sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn back_to_back_messages_queue_behind_each_other_on_the_nic() {
        let mut nic = Nic::new(8.0); // 1 GB/s: 1 MB takes 1 ms on the wire
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let first = nic.send(SimTime::ZERO, 1_000_000, &mut rng);
        let second = nic.send(SimTime::ZERO, 1_000_000, &mut rng);
        assert!(first >= SimTime::ZERO + SimDuration::from_millis(1) + ONE_WAY_LATENCY);
        assert!(second >= SimTime::ZERO + SimDuration::from_millis(2) + ONE_WAY_LATENCY);
        assert_eq!(nic.bytes_sent(), 2_000_000);
    }

    #[test]
    fn mean_latency_of_small_messages_is_latency_plus_mean_jitter() {
        let mut nic = Nic::new(10.0);
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        let samples = 100_000;
        let mut total = 0.0;
        for i in 0..samples {
            let now = SimTime::from_nanos(i * 1_000_000);
            total += (nic.send(now, 100, &mut rng) - now).as_secs_f64();
        }
        let mean_us = total / samples as f64 * 1e6;
        assert!(
            (mean_us - 55.08).abs() < 0.5,
            "mean one-way latency {mean_us} us"
        );
    }
}
