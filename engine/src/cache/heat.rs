//! Heat-weighted load balancing: a coordinator sends reads to the replicas
//! whose caches are warm, so that every replica sees the same rate of cache
//! misses (Scylla 2.0+, `cache_hit_rate_read_balancing`, on by default;
//! scylla-mechanisms.md section 7, `db/heat_load_balance.cc`).
//!
//! What it models:
//! - Each replica *node* publishes its cache hit rate: the share of its
//!   reads the cache answered, summed over all its shards, an exponentially
//!   weighted average over about a minute ([`HitRateTracker`], recomputed
//!   every [`RECOMPUTE_EVERY`] as Scylla's `cache_hitrate_calculator` does
//!   on shard 0 before giving the rate to every shard), piggy-backed on
//!   every read response. Rates are capped at 0.999. The rate is the
//!   node's, not the answering shard's: a shard that owns a hot key hits
//!   far more often than its node, and publishing its own rate would send
//!   that key's reads to whichever replica's hot shard happened to report
//!   highest, a feedback Scylla does not have. The shard counts its
//!   lookups ([`crate::Shard::take_cache_lookups`]); its node
//!   ([`crate::Node::handle_node_timeout`]) sums them and sets the rate on
//!   every shard ([`crate::Shard::set_node_hit_rate`]).
//! - The coordinator keeps the last rate heard from each replica; one not
//!   heard from for more than a second counts as 0.999 (which sends it
//!   traffic to refresh the estimate). Balancing applies when every replica
//!   has a rate and they differ by more than 0.01; otherwise the normal
//!   order (the coordinator's own replica first) stands.
//! - Desired shares `p_i = (1 / (1 - H_i)) / sum_j 1 / (1 - H_j)`, clipped so
//!   that no replica gets more than `1/K` of the `K` (= block_for) picks,
//!   the excess spread over the others in proportion ([`desired_shares`]).
//! - `K` distinct replicas by systematic sampling: one uniform draw `x` in
//!   `[0, 1/K)`, then the replicas under `x, x + 1/K, ...` on the cumulative
//!   line ([`systematic_sample`]); each replica is picked with probability
//!   `K p_i`. The coordinator's own replica, if picked, reads the data.
//!
//! Left out: Scylla's redistribution step for a coordinator that is itself
//! a replica (it keeps `min(N p_me, 1/K)` locally and moves the rest between
//! "mixed" nodes); the doc's suggested approximation is this one: sample with
//! the clipped global shares and prefer the local replica when it is picked.

use units::{SimDuration, SimTime};

use crate::coordinator::MAX_REPLICAS;

/// Highest hit rate a replica reports.
pub const MAX_HIT_RATE: f64 = 0.999;
/// A rate older than this counts as [`MAX_HIT_RATE`].
pub const STALE_AFTER: SimDuration = SimDuration::from_secs(1);
/// Rates closer than this are not worth balancing.
const MIN_SPREAD: f64 = 0.01;
/// How often a node recomputes its published rate.
pub const RECOMPUTE_EVERY: SimDuration = SimDuration::from_secs(2);
/// The averaging window of the published rate (Scylla's 1-minute EWMA).
const WINDOW_SECONDS: f64 = 60.0;

// A reported rate leaves some misses; the spread is a small fraction; a
// rate goes stale within a recompute; the window spans many recomputes.
const _: () = assert!(0.0 < MAX_HIT_RATE && MAX_HIT_RATE < 1.0);
const _: () = assert!(0.0 < MIN_SPREAD && MIN_SPREAD < 0.1);
const _: () = assert!(STALE_AFTER.as_nanos() <= RECOMPUTE_EVERY.as_nanos());
const _: () = assert!(WINDOW_SECONDS * 1e9 > 10.0 * RECOMPUTE_EVERY.as_nanos() as f64);

/// Desired shares of `K` picks for replicas with `hit_rates`, written to
/// `shares` (same length): proportional to the reciprocal miss rates, none
/// above `1/K`.
pub fn desired_shares(hit_rates: &[f64], k: usize, shares: &mut [f64]) {
    let n = hit_rates.len();
    assert!(n == shares.len() && k >= 1 && k <= n && n <= MAX_REPLICAS);
    for (share, rate) in shares.iter_mut().zip(hit_rates) {
        *share = 1.0 / (1.0 - rate.clamp(0.0, MAX_HIT_RATE));
    }
    let cap = 1.0 / k as f64;
    let mut clipped = [false; MAX_REPLICAS];
    // Normalise the unclipped entries into what the clipped ones leave,
    // clip any that go over, and repeat until none does (at most n rounds).
    for _ in 0..n {
        let free_mass = 1.0 - cap * clipped[..n].iter().filter(|c| **c).count() as f64;
        let unclipped_sum: f64 = shares
            .iter()
            .zip(&clipped)
            .filter(|(_, c)| !**c)
            .map(|(s, _)| *s)
            .sum();
        let mut changed = false;
        for (share, is_clipped) in shares.iter_mut().zip(clipped.iter_mut()) {
            if *is_clipped {
                *share = cap;
                continue;
            }
            *share *= free_mass / unclipped_sum;
            if *share > cap + 1e-12 {
                *share = cap;
                *is_clipped = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    debug_assert!(
        (shares.iter().sum::<f64>() - 1.0).abs() <= 1e-9,
        "the shares are a distribution"
    );
    debug_assert!(
        shares.iter().all(|&share| share <= cap + 1e-9),
        "no share above 1/K"
    );
}

/// `K` distinct replicas drawn with inclusion probabilities `K * shares[i]`
/// by systematic sampling with `draw` uniform in `[0, 1)`: their indices
/// go to `picked`; returns how many (always `K` for valid shares).
pub fn systematic_sample(shares: &[f64], k: usize, draw: f64, picked: &mut [usize]) -> usize {
    debug_assert!(
        k >= 1 && k <= shares.len() && picked.len() >= k,
        "K of the replicas"
    );
    let step = 1.0 / k as f64;
    let mut point = draw.clamp(0.0, 1.0 - 1e-12) * step;
    let mut cumulative = 0.0;
    let mut count = 0;
    for (index, share) in shares.iter().enumerate() {
        cumulative += share;
        // A share of at most 1/K covers at most one point.
        if count < k && point < cumulative - 1e-12 {
            picked[count] = index;
            count += 1;
            point += step;
        }
    }
    // Rounding can leave the last point just past the line's end.
    if count < k {
        if let Some(last) = (0..shares.len())
            .rev()
            .find(|i| !picked[..count].contains(i))
        {
            picked[count] = last;
            count += 1;
        }
    }
    debug_assert!(
        (0..count).all(|i| !picked[..i].contains(&picked[i])),
        "the replicas picked are distinct"
    );
    count
}

/// A node's published cache hit rate: a one-minute exponentially weighted
/// average of hits over lookups (all its shards'), recomputed every two
/// seconds.
#[derive(Clone, Debug, Default)]
pub struct HitRateTracker {
    hits: u64,
    lookups: u64,
    rate: Option<f64>,
    next_recompute: SimTime,
}

impl HitRateTracker {
    /// Counts a cache lookup.
    pub fn record(&mut self, hit: bool) {
        self.record_lookups(u64::from(hit), 1);
    }

    /// Counts `lookups` cache lookups of which `hits` hit (a shard's since
    /// the last recompute).
    pub fn record_lookups(&mut self, hits: u64, lookups: u64) {
        debug_assert!(hits <= lookups);
        self.hits += hits;
        self.lookups += lookups;
    }

    /// The rate to publish at `now` (`None` before any lookup).
    pub fn rate(&mut self, now: SimTime) -> Option<f64> {
        debug_assert!(self.hits <= self.lookups, "no more hits than lookups");
        if now >= self.next_recompute && self.lookups > 0 {
            let sample = self.hits as f64 / self.lookups as f64;
            let weight = match self.rate {
                None => 1.0,
                Some(_) => 1.0 - (-RECOMPUTE_EVERY.as_secs_f64() / WINDOW_SECONDS).exp(),
            };
            let previous = self.rate.unwrap_or(sample);
            self.rate = Some((previous + weight * (sample - previous)).min(MAX_HIT_RATE));
            self.hits = 0;
            self.lookups = 0;
            self.next_recompute = now + RECOMPUTE_EVERY;
        }
        debug_assert!(
            self.rate
                .is_none_or(|rate| (0.0..=MAX_HIT_RATE).contains(&rate)),
            "a published rate is a fraction up to the maximum"
        );
        self.rate
    }
}

/// What a coordinator heard of each node's hit rate (its replicas of a key
/// are the same shard of other nodes, so one entry per node).
#[derive(Clone, Debug, Default)]
pub struct HeardRates {
    /// Per node: the rate and when it was heard.
    rates: Vec<Option<(f64, SimTime)>>,
}

impl HeardRates {
    /// A replica on `node` reported `rate` at `now`.
    pub fn heard(&mut self, node: u32, rate: f64, now: SimTime) {
        debug_assert!((0.0..=1.0).contains(&rate), "a hit rate, not {rate}");
        let index = node as usize;
        if index >= self.rates.len() {
            self.rates.resize(index + 1, None);
        }
        self.rates[index] = Some((rate.min(MAX_HIT_RATE), now));
    }

    /// The rates of `nodes` at `now` into `out`, or false if one was never
    /// heard from. A rate older than [`STALE_AFTER`] counts as
    /// [`MAX_HIT_RATE`] and is marked heard now.
    pub fn rates_of(&mut self, nodes: &[u32], now: SimTime, out: &mut [f64]) -> bool {
        debug_assert!(out.len() >= nodes.len(), "room for every node's rate");
        for (slot, node) in out.iter_mut().zip(nodes) {
            let Some(Some((rate, at))) = self.rates.get_mut(*node as usize) else {
                return false;
            };
            if now - *at > STALE_AFTER {
                *rate = MAX_HIT_RATE;
                *at = now;
            }
            *slot = *rate;
        }
        true
    }
}

/// True if rates this close together are left alone.
pub fn too_close_to_balance(rates: &[f64]) -> bool {
    debug_assert!(!rates.is_empty(), "rates of some replicas");
    let max = rates.iter().copied().fold(f64::MIN, f64::max);
    let min = rates.iter().copied().fold(f64::MAX, f64::min);
    max - min <= MIN_SPREAD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_clips_at_one_over_k() {
        // Hit rates 0.9 / 0.5 / 0.5: reciprocal miss rates 10 / 2 / 2, so
        // 0.714 / 0.143 / 0.143, clipped to 0.5 at K = 2.
        let mut shares = [0.0; 3];
        desired_shares(&[0.9, 0.5, 0.5], 1, &mut shares);
        assert!((shares[0] - 10.0 / 14.0).abs() < 1e-9, "{shares:?}");
        desired_shares(&[0.9, 0.5, 0.5], 2, &mut shares);
        assert!((shares[0] - 0.5).abs() < 1e-9, "{shares:?}");
        assert!((shares[1] - 0.25).abs() < 1e-9 && (shares[2] - 0.25).abs() < 1e-9);
        // Equal rates: equal shares.
        desired_shares(&[0.3, 0.3, 0.3], 2, &mut shares);
        assert!(shares.iter().all(|s| (s - 1.0 / 3.0).abs() < 1e-9));
    }

    #[test]
    fn systematic_sampling_picks_k_distinct_with_probability_k_p() {
        let shares = [0.5, 0.3, 0.2];
        let mut counts = [0u32; 3];
        let mut picked = [0usize; 3];
        let draws = 10_000;
        for i in 0..draws {
            let draw = (i as f64 + 0.5) / draws as f64;
            let count = systematic_sample(&shares, 2, draw, &mut picked);
            assert_eq!(count, 2);
            assert_ne!(picked[0], picked[1]);
            for index in &picked[..2] {
                counts[*index] += 1;
            }
        }
        for (count, share) in counts.iter().zip(shares) {
            let probability = f64::from(*count) / f64::from(draws);
            assert!((probability - 2.0 * share).abs() < 0.001, "{counts:?}");
        }
    }

    #[test]
    fn published_rates_average_over_a_minute_and_stale_ones_count_as_hot() {
        let mut tracker = HitRateTracker::default();
        let t = |s: u64| SimTime::from_nanos(s * 1_000_000_000);
        assert_eq!(tracker.rate(t(0)), None);
        for _ in 0..100 {
            tracker.record(false);
        }
        assert_eq!(tracker.rate(t(0)), Some(0.0));
        // All hits from now on: the rate climbs over about a minute.
        let mut rate = 0.0;
        for second in (2..=60).step_by(2) {
            for _ in 0..100 {
                tracker.record(true);
            }
            rate = tracker.rate(t(second)).unwrap();
        }
        assert!((0.55..0.7).contains(&rate), "{rate}");
        let mut heard = HeardRates::default();
        heard.heard(2, 0.4, t(10));
        let mut out = [0.0; 2];
        assert!(
            !heard.rates_of(&[2, 5], t(10), &mut out),
            "node 5 never reported"
        );
        heard.heard(5, 0.6, t(10));
        assert!(heard.rates_of(&[2, 5], t(10), &mut out));
        assert_eq!(out, [0.4, 0.6]);
        heard.heard(5, 0.6, t(12));
        assert!(heard.rates_of(&[2, 5], t(12), &mut out));
        assert_eq!(out, [MAX_HIT_RATE, 0.6], "node 2's rate went stale");
        assert!(too_close_to_balance(&[0.5, 0.505]) && !too_close_to_balance(&[0.5, 0.52]));
    }
}
