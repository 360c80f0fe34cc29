//! Key and size distributions of cassandra-stress (c-s): which partition key
//! each operation touches, and how many columns of what size a row has.
//!
//! What is modelled, with c-s's semantics:
//! - [`KeyDistribution`]: the `-pop dist=DIST(...)` seed distributions
//!   `UNIFORM(min..max)`, `GAUSSIAN(min..max[,stdvrng])`,
//!   `GAUSSIAN(min..max,mean,stdev)` (aliases `gauss`, `normal`, `norm`),
//!   `EXP(min..max)` and `FIXED(v)`, each optionally inverted with a leading
//!   `~`. Names are case-insensitive; numbers take c-s's `k`/`m`/`b`
//!   suffixes (x10^3, 10^6, 10^9) and, as an extension of c-s, `_` digit
//!   separators and e-notation (`38.85e9`) when the value is whole.
//!   - uniform: c-s samples a real in `[min, max+1)` and truncates, so every
//!     integer of `[min, max]` is equally likely;
//!   - gaussian: a normal sample truncated to an integer, then **clamped** to
//!     `[min, max]` (not resampled), as `DistributionBoundApache` does. With
//!     one or two arguments, `mean = (min+max)/2` and
//!     `stdev = (mean-min)/stdvrng`, `stdvrng` defaulting to 3;
//!   - exp: `DistributionOffsetApache` over an exponential whose mean is
//!     `(max-min) / (-ln(sqrt(1/(max-min))))`, that is
//!     `2 (max-min) / ln(max-min)` (c-s picks it so that the chance of the
//!     largest offset is about `sqrt(1/(max-min))`); the sample is
//!     `min + clamp(trunc(x), 0, max-min)`: below the clamp smaller keys are
//!     likelier, and `max` itself collects the clamped tail,
//!     `P = sqrt(1/(max-min))` (a third of all draws for `exp(1..10)`,
//!     0.1% for `exp(1..1000000)`). `max - min` must be at least 2 (c-s
//!     rejects the non-positive mean it computes otherwise);
//!   - `~D` yields `max - (D - min)`: the same shape mirrored in the range
//!     (`DistributionInverted`).
//! - [`SequentialKeys`]: `-pop seq=a..b`, one shared counter visiting
//!   `a, a+1, ..., b` and wrapping to `a`.
//! - [`SizeDistribution`]: the `-col size=` / `n=` distributions, `FIXED(v)`
//!   and `UNIFORM(min..max)` (same integer semantics as above).
//! - [`KeyDistribution::hot_mass_curve`]: the key-popularity curve a cache
//!   model needs (the fraction of the keys, hottest first, against the
//!   fraction of draws they take), and [`sequential_hit_rate`] for `seq=`,
//!   which no popularity curve describes (volume-mode cache hits,
//!   ARCHITECTURE.md).
//!
//! Left out: c-s's `EXTREME`/`EXTR`/`WEIBULL` and `QEXTREME`/`QEXTR`
//! distributions (parsing them gives an error that says so), gaussian or
//! exponential column sizes, and c-s's exact random streams (c-s draws from
//! `JDKRandomGenerator`; here draws come from the injected generator, so only
//! the distributions match, not the individual keys). `read-lookback=` is not
//! modelled either.
//!
//! Sources: apache/cassandra `tools/stress/src/org/apache/cassandra/stress/`
//! `settings/OptionDistribution.java` (syntax, aliases, `parseLong` suffixes,
//! the gaussian and exponential parameter rules), `generate/`
//! `DistributionBoundApache.java` (truncate then clamp),
//! `DistributionOffsetApache.java` (exp offsets), `DistributionInverted.java`
//! (`~`), `settings/SettingsPopulation.java` (`seq=` and wrapping); summary
//! in `scylla-mechanisms.md` section 9.3.

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use rand::{Rng, RngExt};

/// Why a distribution specification or its parameters were rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistributionError(String);

impl DistributionError {
    fn new(message: impl Into<String>) -> DistributionError {
        DistributionError(message.into())
    }

    /// The one-line explanation.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DistributionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DistributionError {}

/// The distribution names accepted, for error messages.
pub(crate) const ACCEPTED_DISTRIBUTIONS: &str =
    "uniform, gaussian (or gauss, normal, norm), exp, fixed, each optionally preceded by ~";

/// The c-s default `stdvrng` of a one-argument gaussian: the range ends are
/// three standard deviations from the mean.
pub const DEFAULT_GAUSSIAN_STDVRNG: f64 = 3.0;

/// A distribution of partition-key seeds (c-s `-pop dist=`), bounded to an
/// inclusive range of integers.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyDistribution {
    /// Always the same key: `FIXED(v)`.
    Fixed(u64),
    /// Every key of `[min, max]` equally likely: `UNIFORM(min..max)`.
    Uniform {
        /// Smallest key.
        min: u64,
        /// Largest key (inclusive).
        max: u64,
    },
    /// A normal distribution truncated to integers and clamped to
    /// `[min, max]`: `GAUSSIAN(min..max,mean,stdev)`.
    Gaussian {
        /// Smallest key; samples below are clamped to it.
        min: u64,
        /// Largest key; samples above are clamped to it.
        max: u64,
        /// Mean of the underlying normal distribution.
        mean: f64,
        /// Standard deviation of the underlying normal distribution.
        stdev: f64,
    },
    /// `min + clamp(trunc(x), 0, max - min)` with `x` exponential of mean
    /// `mean`: `EXP(min..max)`. [`KeyDistribution::exponential`] picks the
    /// mean as c-s does.
    Exponential {
        /// Smallest (and most likely) key.
        min: u64,
        /// Largest key; offsets beyond it are clamped to it.
        max: u64,
        /// Mean of the exponential offset from `min`.
        mean: f64,
    },
    /// The inner distribution mirrored in its range: `~DIST`.
    Inverted(Box<KeyDistribution>),
}

impl KeyDistribution {
    /// `FIXED(value)`.
    pub fn fixed(value: u64) -> KeyDistribution {
        KeyDistribution::Fixed(value)
    }

    /// `UNIFORM(min..max)`; `min` must not exceed `max`.
    pub fn uniform(min: u64, max: u64) -> Result<KeyDistribution, DistributionError> {
        check_bounds(min, max)?;
        Ok(KeyDistribution::Uniform { min, max })
    }

    /// `GAUSSIAN(min..max,mean,stdev)`: `mean` finite, `stdev` finite and
    /// positive, `min <= max`.
    pub fn gaussian(
        min: u64,
        max: u64,
        mean: f64,
        stdev: f64,
    ) -> Result<KeyDistribution, DistributionError> {
        check_bounds(min, max)?;
        if !mean.is_finite() {
            return Err(DistributionError::new(format!(
                "the gaussian mean must be a finite number, not {mean}"
            )));
        }
        if !(stdev.is_finite() && stdev > 0.0) {
            return Err(DistributionError::new(format!(
                "the gaussian stdev must be a positive number, not {stdev}"
            )));
        }
        Ok(KeyDistribution::Gaussian {
            min,
            max,
            mean,
            stdev,
        })
    }

    /// `GAUSSIAN(min..max,stdvrng)`: mean `(min+max)/2`, stdev
    /// `(mean-min)/stdvrng` (c-s's two-argument form; the one-argument form
    /// is `stdvrng` = [`DEFAULT_GAUSSIAN_STDVRNG`]). Needs `min < max`.
    pub fn gaussian_stdvrng(
        min: u64,
        max: u64,
        stdvrng: f64,
    ) -> Result<KeyDistribution, DistributionError> {
        check_bounds(min, max)?;
        if !(stdvrng.is_finite() && stdvrng > 0.0) {
            return Err(DistributionError::new(format!(
                "the gaussian stdvrng must be a positive number, not {stdvrng}"
            )));
        }
        if min == max {
            return Err(DistributionError::new(format!(
                "gaussian({min}..{max}) has an empty range: its stdev would be 0; use fixed({min})"
            )));
        }
        let mean = (min as f64 + max as f64) / 2.0;
        let stdev = ((max as f64 - min as f64) / 2.0) / stdvrng;
        KeyDistribution::gaussian(min, max, mean, stdev)
    }

    /// `EXP(min..max)` with c-s's mean, `(max-min) / (-ln(sqrt(1/(max-min))))`.
    /// Needs `max - min >= 2`: for `max = min + 1` that mean is `1/-0`, and
    /// c-s's `ExponentialDistribution` rejects the non-positive mean.
    pub fn exponential(min: u64, max: u64) -> Result<KeyDistribution, DistributionError> {
        check_bounds(min, max)?;
        if max - min < 2 {
            return Err(DistributionError::new(format!(
                "exp({min}..{max}) needs max - min >= 2 (c-s's exponential mean would not be positive); use uniform or fixed"
            )));
        }
        let delta = (max - min) as f64;
        // Apache ExponentialDistribution(1).inverseCumulativeProbability(p)
        // is -ln(1-p), with p = 1 - sqrt(1/delta).
        let quantile = -(1.0 / delta).sqrt().ln();
        let mean = delta / quantile;
        Ok(KeyDistribution::Exponential { min, max, mean })
    }

    /// `~self`: the same distribution mirrored in its range.
    pub fn inverted(self) -> KeyDistribution {
        KeyDistribution::Inverted(Box::new(self))
    }

    /// The smallest and largest keys a sample can take.
    pub fn range(&self) -> RangeInclusive<u64> {
        match self {
            KeyDistribution::Fixed(value) => *value..=*value,
            KeyDistribution::Uniform { min, max }
            | KeyDistribution::Gaussian { min, max, .. }
            | KeyDistribution::Exponential { min, max, .. } => *min..=(*max).max(*min),
            KeyDistribution::Inverted(inner) => inner.range(),
        }
    }

    /// The number of distinct keys in [`KeyDistribution::range`] (saturating).
    pub fn span(&self) -> u64 {
        let range = self.range();
        (range.end() - range.start()).saturating_add(1)
    }

    /// One key. Never allocates; a hand-built distribution with `min > max`
    /// or non-finite parameters gives keys in `range()` rather than
    /// panicking.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            KeyDistribution::Fixed(value) => *value,
            KeyDistribution::Uniform { min, max } => uniform_u64(*min, *max, rng),
            KeyDistribution::Gaussian {
                min,
                max,
                mean,
                stdev,
            } => {
                let x = mean + stdev * standard_normal(rng);
                // Java's (long) cast truncates toward zero; Rust's `as`
                // does the same, saturating (NaN gives 0). Keys are
                // non-negative, so a negative sample ends up at `min`
                // either way.
                clamp(x as u64, *min, *max)
            }
            KeyDistribution::Exponential { min, max, mean } => {
                // 1 - u is in (0, 1], so the logarithm is finite or zero.
                let u: f64 = rng.random::<f64>();
                let x = -mean * (1.0 - u).ln();
                let delta = max.saturating_sub(*min);
                min.saturating_add((x as u64).min(delta))
            }
            KeyDistribution::Inverted(inner) => {
                let range = inner.range();
                let key = clamp(inner.sample(rng), *range.start(), *range.end());
                range.end() - (key - range.start())
            }
        }
    }

    /// The expected value of [`KeyDistribution::sample`], clamping and
    /// truncation included (so for `gauss(1..750000000,500000000,250000000)`
    /// it is about 481 million, not 500 million). Exact for fixed, uniform
    /// and exp; for the gaussian a midpoint approximation of the integer
    /// truncation, accurate to a small fraction of a key when `stdev >= 1`.
    pub fn mean(&self) -> f64 {
        match self {
            KeyDistribution::Fixed(value) => *value as f64,
            KeyDistribution::Uniform { min, max } => (*min as f64 + (*max).max(*min) as f64) / 2.0,
            KeyDistribution::Gaussian {
                min,
                max,
                mean,
                stdev,
            } => {
                let lo = *min as f64;
                let hi = (*max).max(*min) as f64;
                // E[clamp(floor X, a, b)] = a + sum_{k=a+1..b} P(X >= k)
                //                         ~ E[clamp(X, a+1/2, b+1/2)] - 1/2.
                clamped_normal_mean(*mean, *stdev, lo + 0.5, hi + 0.5) - 0.5
            }
            KeyDistribution::Exponential { min, max, mean } => {
                let delta = max.saturating_sub(*min) as f64;
                let offset = if mean.is_nan() || *mean <= 0.0 {
                    0.0
                } else if mean.is_infinite() {
                    delta
                } else {
                    // sum_{k=1..delta} P(X >= k) = sum q^k, q = exp(-1/mean).
                    let one_minus_q = -(-1.0 / mean).exp_m1();
                    let q = 1.0 - one_minus_q;
                    q * (-(-delta / mean).exp_m1()) / one_minus_q
                };
                *min as f64 + offset
            }
            KeyDistribution::Inverted(inner) => {
                let range = inner.range();
                *range.start() as f64 + *range.end() as f64 - inner.mean()
            }
        }
    }

    /// The key-popularity curve of [`KeyDistribution::sample`], hottest
    /// keys first: points `(x, y)` where `y` is the probability that a draw
    /// lands in the hottest fraction `x` of the [`KeyDistribution::span`]
    /// keys of [`KeyDistribution::range`]. Piecewise linear and concave
    /// from `(0, 0)` to `(1, 1)`: the engine's `row_cache::HotMass::new`
    /// takes it as is (the engine does not depend on `models`, so the curve
    /// crosses as plain data). A cache that holds a fraction `x` of the
    /// keys, the hottest ones, serves `y` of the reads.
    ///
    /// - uniform, and fixed (a range of one key): `[(0, 0), (1, 1)]`;
    /// - gaussian: the keys strictly inside the range, sorted by
    ///   probability, form the interval around the mean (clipped to the
    ///   range), and its mass is the normal mass between its ends; the two
    ///   end keys are atoms that collect the clamped tails (`P(X < min+1)`
    ///   and `P(X >= max)`, 15.9% of the draws at `max` for R1's
    ///   `gauss(1..750000000,500000000,250000000)`) and enter the order
    ///   where their mass exceeds the interior keys'. If at most 512 keys
    ///   lie within 9 stdev of the mean, every one is listed (exact up to
    ///   the normal function's 1.2e-7); otherwise the interval is tabulated
    ///   every 1/32 stdev out to 9 stdev, at the range's ends and where the
    ///   atoms enter, treating keys as a continuum (exact at the points
    ///   when the stdev spans many keys, linear in between: within about
    ///   1e-4 of the mass);
    /// - exp: offset `j` has probability `q^j (1 - q)` with
    ///   `q = exp(-1/mean)`, so the hottest `J` offsets hold `1 - q^J`; the
    ///   clamped `max` is an atom of `q^(max-min)` (`sqrt(1/(max-min))`)
    ///   placed where it belongs in the order. Every key is a point for
    ///   ranges up to 512 keys (exact); beyond, points every 1/64 of the
    ///   mean near `min`, wider further out (exact at the points, within
    ///   about 3e-5 in between);
    /// - `~D`: the same curve as `D` (mirroring moves keys, not their
    ///   probabilities).
    ///
    /// Hand-built distributions with non-finite or non-positive
    /// parameters, which the sampler sends to one key, give that one key
    /// all the mass. For `-pop seq=`, which no popularity curve describes,
    /// see [`sequential_hit_rate`].
    pub fn hot_mass_curve(&self) -> Vec<(f64, f64)> {
        match self {
            KeyDistribution::Fixed(_) | KeyDistribution::Uniform { .. } => {
                vec![(0.0, 0.0), (1.0, 1.0)]
            }
            KeyDistribution::Gaussian {
                min,
                max,
                mean,
                stdev,
            } => gaussian_hot_mass(*min, (*max).max(*min), *mean, *stdev),
            KeyDistribution::Exponential { min, max, mean } => {
                exponential_hot_mass(*min, (*max).max(*min), *mean)
            }
            KeyDistribution::Inverted(inner) => inner.hot_mass_curve(),
        }
    }
}

/// A key that takes at least this fraction of the draws on its own is
/// named by [`KeyDistribution::hot_keys`]: at most a thousand keys.
pub const HOT_KEY_MASS: f64 = 1e-3;

impl KeyDistribution {
    /// The keys that each take at least [`HOT_KEY_MASS`] of the draws, with
    /// the fraction each takes, by key: a fixed key; every key of a uniform
    /// range of at most 1000; the clamped end keys of a gaussian (R1's
    /// `gauss(1..750000000,500000000,250000000)` sends 15.9% of its reads
    /// to key 750000000 and 2.3% to key 1) and the central keys of a
    /// narrow one (stdev below about 400 keys); an exp's first offsets and
    /// its clamped `max`. Caches need them by name because each lives on
    /// one shard (the engine's `HotMass::with_hot_keys`).
    pub fn hot_keys(&self) -> Vec<(u64, f64)> {
        let mut keys: Vec<(u64, f64)> = match self {
            KeyDistribution::Fixed(value) => vec![(*value, 1.0)],
            KeyDistribution::Uniform { min, max } => {
                let span = self.span();
                if (span as f64) * HOT_KEY_MASS <= 1.0 {
                    let mass = 1.0 / span as f64;
                    (*min..=(*max).max(*min)).map(|key| (key, mass)).collect()
                } else {
                    Vec::new()
                }
            }
            KeyDistribution::Gaussian {
                min,
                max,
                mean,
                stdev,
            } => gaussian_hot_keys(*min, (*max).max(*min), *mean, *stdev),
            KeyDistribution::Exponential { min, max, mean } => {
                exponential_hot_keys(*min, (*max).max(*min), *mean)
            }
            KeyDistribution::Inverted(inner) => {
                let range = inner.range();
                inner
                    .hot_keys()
                    .into_iter()
                    .map(|(key, mass)| (range.end() - (key - range.start()), mass))
                    .collect()
            }
        };
        keys.sort_by_key(|(key, _)| *key);
        keys
    }
}

/// The shares of the draws that `GAUSSIAN(min..max,mean,stdev)`'s clamp
/// gives its end keys: `min` takes every draw below `min + 1`, `max` every
/// draw from `max` on (the sampler truncates, then clamps). The popularity
/// curve and the named hot keys both take them from here.
fn gaussian_end_masses(min: u64, max: u64, mean: f64, stdev: f64) -> (f64, f64) {
    let z = |x: f64| (x - mean) / stdev;
    (normal_cdf(z(min as f64 + 1.0)), normal_cdf(-z(max as f64)))
}

/// `EXP(min..max)` with `mean` over `delta = max - min`: `1 - q`, the share
/// of offset 0 (offset `j` takes `(1 - q) q^j`), and `q^delta`, the share
/// the clamp gives `max`, with `q = exp(-1/mean)`. The popularity curve and
/// the named hot keys both take them from here.
fn exponential_masses(delta: u64, mean: f64) -> (f64, f64) {
    (-(-1.0 / mean).exp_m1(), (-(delta as f64) / mean).exp())
}

/// [`KeyDistribution::hot_keys`] of `GAUSSIAN(min..max,mean,stdev)`:
/// `min` takes every draw below `min + 1`, `max` every draw from `max` on,
/// key `k` between them the draws in `[k, k + 1)` (the sampler truncates).
fn gaussian_hot_keys(min: u64, max: u64, mean: f64, stdev: f64) -> Vec<(u64, f64)> {
    if min == max || !(mean.is_finite() && stdev.is_finite() && stdev > 0.0) {
        // The sampler sends every draw to one key.
        let key = if min == max {
            min
        } else {
            clamp(mean as u64, min, max)
        };
        return vec![(key, 1.0)];
    }
    let z = |x: f64| (x - mean) / stdev;
    let mut keys = Vec::new();
    let (low_atom, high_atom) = gaussian_end_masses(min, max, mean, stdev);
    if low_atom >= HOT_KEY_MASS {
        keys.push((min, low_atom));
    }
    // An interior key holds at most pdf(0) / stdev ~ 0.4 / stdev.
    if 0.4 / stdev >= HOT_KEY_MASS {
        let first = (mean - GAUSSIAN_REACH_STDEVS * stdev)
            .floor()
            .max(min as f64 + 1.0);
        let last = (mean + GAUSSIAN_REACH_STDEVS * stdev)
            .ceil()
            .min(max as f64 - 1.0);
        let mut key = first;
        while key <= last {
            let mass = normal_mass(z(key), z(key + 1.0));
            if mass >= HOT_KEY_MASS {
                keys.push((key as u64, mass));
            }
            key += 1.0;
        }
    }
    if high_atom >= HOT_KEY_MASS {
        keys.push((max, high_atom));
    }
    keys
}

/// [`KeyDistribution::hot_keys`] of `EXP(min..max)` with `mean`: offset
/// `j` below `max - min` takes `(1 - q) q^j`, `max` takes `q^(max-min)`,
/// with `q = exp(-1/mean)`.
fn exponential_hot_keys(min: u64, max: u64, mean: f64) -> Vec<(u64, f64)> {
    let delta = max - min;
    if delta == 0 || !(mean.is_finite() && mean > 0.0) {
        return vec![(min, 1.0)];
    }
    let (one_minus_q, atom) = exponential_masses(delta, mean);
    let mut keys = Vec::new();
    let mut offset = 0u64;
    while offset < delta {
        let mass = one_minus_q * (-(offset as f64) / mean).exp();
        if mass < HOT_KEY_MASS {
            break;
        }
        keys.push((min + offset, mass));
        offset += 1;
    }
    if atom >= HOT_KEY_MASS {
        keys.push((max, atom));
    }
    keys
}

impl fmt::Display for KeyDistribution {
    /// c-s syntax, e.g. `gaussian(1..750000000,500000000,250000000)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDistribution::Fixed(value) => write!(f, "fixed({value})"),
            KeyDistribution::Uniform { min, max } => write!(f, "uniform({min}..{max})"),
            KeyDistribution::Gaussian {
                min,
                max,
                mean,
                stdev,
            } => {
                write!(f, "gaussian({min}..{max},{mean},{stdev})")
            }
            KeyDistribution::Exponential { min, max, .. } => write!(f, "exp({min}..{max})"),
            KeyDistribution::Inverted(inner) => write!(f, "~{inner}"),
        }
    }
}

impl FromStr for KeyDistribution {
    type Err = DistributionError;

    /// Parses c-s syntax: `gauss(1..750000000,500000000,250000000)`,
    /// `~exp(1..10)`, `FIXED(5)`, `uniform(1..1m)`.
    fn from_str(spec: &str) -> Result<KeyDistribution, DistributionError> {
        parse_key_distribution(spec)
    }
}

/// A distribution of column sizes or counts (c-s `-col size=` and `n=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeDistribution {
    /// Always `v`: `FIXED(v)`.
    Fixed(u64),
    /// Every integer of `[min, max]` equally likely: `UNIFORM(min..max)`.
    Uniform {
        /// Smallest value.
        min: u64,
        /// Largest value (inclusive).
        max: u64,
    },
}

impl SizeDistribution {
    /// One value; never allocates.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            SizeDistribution::Fixed(value) => *value,
            SizeDistribution::Uniform { min, max } => uniform_u64(*min, *max, rng),
        }
    }

    /// The expected value of a sample.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDistribution::Fixed(value) => *value as f64,
            SizeDistribution::Uniform { min, max } => (*min as f64 + (*max).max(*min) as f64) / 2.0,
        }
    }

    /// The smallest and largest values a sample can take.
    pub fn range(&self) -> RangeInclusive<u64> {
        match self {
            SizeDistribution::Fixed(value) => *value..=*value,
            SizeDistribution::Uniform { min, max } => *min..=(*max).max(*min),
        }
    }
}

impl fmt::Display for SizeDistribution {
    /// c-s syntax: `FIXED(34)`, `UNIFORM(10..100)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeDistribution::Fixed(value) => write!(f, "FIXED({value})"),
            SizeDistribution::Uniform { min, max } => write!(f, "UNIFORM({min}..{max})"),
        }
    }
}

impl TryFrom<KeyDistribution> for SizeDistribution {
    type Error = DistributionError;

    /// Fixed and uniform (inverted or not: mirroring changes neither) are
    /// sizes; the other shapes are not modelled for sizes.
    fn try_from(dist: KeyDistribution) -> Result<SizeDistribution, DistributionError> {
        match dist {
            KeyDistribution::Fixed(value) => Ok(SizeDistribution::Fixed(value)),
            KeyDistribution::Uniform { min, max } => Ok(SizeDistribution::Uniform { min, max }),
            KeyDistribution::Inverted(inner) => SizeDistribution::try_from(*inner),
            other => Err(DistributionError::new(format!(
                "{other} is not modelled as a column size or count: use FIXED(v) or UNIFORM(min..max)"
            ))),
        }
    }
}

impl FromStr for SizeDistribution {
    type Err = DistributionError;

    /// Parses `FIXED(v)` or `UNIFORM(min..max)` (case-insensitive).
    fn from_str(spec: &str) -> Result<SizeDistribution, DistributionError> {
        SizeDistribution::try_from(parse_key_distribution(spec)?)
    }
}

/// `-pop seq=first..last`: keys visited in order, wrapping from `last` back
/// to `first`. In c-s the counter is shared by all the process's threads,
/// so one instance serves a whole c-s process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequentialKeys {
    first: u64,
    last: u64,
    next: u64,
    laps: u64,
}

impl SequentialKeys {
    /// Keys `first..=last`; if `last < first` the range is the single key
    /// `first`.
    pub fn new(first: u64, last: u64) -> SequentialKeys {
        SequentialKeys {
            first,
            last: last.max(first),
            next: first,
            laps: 0,
        }
    }

    /// The next key: `first`, `first+1`, ..., `last`, `first`, ...
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        let key = self.next;
        if key >= self.last {
            self.next = self.first;
            self.laps += 1;
        } else {
            self.next = key + 1;
        }
        key
    }

    /// How many times every key of the range has been handed out (c-s's
    /// `no-wrap` stops the run when this reaches 1).
    pub fn laps(&self) -> u64 {
        self.laps
    }

    /// The keys visited.
    pub fn range(&self) -> RangeInclusive<u64> {
        self.first..=self.last
    }
}

/// The row-cache hit rate of `-pop seq=` reads: a cyclic scan of
/// `range_keys` keys, `laps_done` of them complete, through an LRU cache of
/// `cache_rows` rows (both counted over the same keys: a shard's cache rows
/// against the keys of the range it owns, or a cluster's against all).
///
/// A scan reads every key once per lap, in order, so under LRU each key
/// was read `range_keys` reads ago. If the cache holds fewer rows than
/// that, the key was evicted `cache_rows` reads after it was read, before
/// it comes round again: a scan of a range larger than the cache never
/// hits. If the whole range fits, the first lap misses and fills the cache
/// and every later read hits. So the rate is 0 or 1, with no popularity
/// curve in between.
pub fn sequential_hit_rate(range_keys: u64, cache_rows: u64, laps_done: u64) -> f64 {
    if laps_done >= 1 && cache_rows >= range_keys {
        1.0
    } else {
        0.0
    }
}

fn check_bounds(min: u64, max: u64) -> Result<(), DistributionError> {
    if min > max {
        return Err(DistributionError::new(format!(
            "the range {min}..{max} is empty: min exceeds max"
        )));
    }
    Ok(())
}

fn clamp(value: u64, min: u64, max: u64) -> u64 {
    if value < min {
        min
    } else if value > max {
        max.max(min)
    } else {
        value
    }
}

fn uniform_u64<R: Rng + ?Sized>(min: u64, max: u64, rng: &mut R) -> u64 {
    if max <= min {
        min
    } else {
        rng.random_range(min..=max)
    }
}

/// A standard normal draw (Box-Muller, one of the pair; no state, no
/// allocation).
pub(crate) fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// E[clamp(X, lo, hi)] for X ~ N(mean, stdev).
fn clamped_normal_mean(mean: f64, stdev: f64, lo: f64, hi: f64) -> f64 {
    if stdev.is_nan() || stdev <= 0.0 || !stdev.is_finite() || !mean.is_finite() {
        return mean.clamp(lo, hi.max(lo));
    }
    let alpha = (lo - mean) / stdev;
    let beta = (hi - mean) / stdev;
    mean + (lo - mean) * normal_cdf(alpha)
        + (hi - mean) * normal_cdf(-beta)
        + stdev * (normal_pdf(alpha) - normal_pdf(beta))
}

fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (std::f64::consts::TAU).sqrt()
}

fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function, fractional error below 1.2e-7 everywhere
/// (Chebyshev fit; Press et al., Numerical Recipes, 2nd ed., section 6.2).
pub(crate) fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let ans = t * (-z * z + poly).exp();
    if x >= 0.0 {
        ans
    } else {
        2.0 - ans
    }
}

// ---------------------------------------------------------------------------
// Key-popularity curves (hottest keys first)

/// Tabulation step of the gaussian curve, in standard deviations.
const GAUSSIAN_STEP_STDEVS: f64 = 1.0 / 32.0;
/// Beyond this many standard deviations from the mean a key's probability
/// is below 1e-18 of the peak's: the rest of the range is one flat segment.
const GAUSSIAN_REACH_STDEVS: f64 = 9.0;
/// Up to this many keys (exp: in the range; gaussian: within reach of the
/// mean) the curve lists every key, exactly.
const EXACT_KEYS: u64 = 512;
/// First tabulation step of the exp curve, in means (growing with the
/// offset).
const EXP_STEP_MEANS: f64 = 1.0 / 64.0;

/// All the mass on one of `keys` keys.
fn one_key_hot_mass(keys: f64) -> Vec<(f64, f64)> {
    if keys <= 1.0 {
        return vec![(0.0, 0.0), (1.0, 1.0)];
    }
    vec![(0.0, 0.0), (1.0 / keys, 1.0), (1.0, 1.0)]
}

/// P(z1 <= Z < z2) for a standard normal Z, taken from the nearer tail so
/// that small masses far out keep their precision.
fn normal_mass(z1: f64, z2: f64) -> f64 {
    if z2 <= z1 {
        return 0.0;
    }
    let mass = if z1 >= 0.0 {
        normal_cdf(-z1) - normal_cdf(-z2)
    } else {
        normal_cdf(z2) - normal_cdf(z1)
    };
    mass.max(0.0)
}

/// [`KeyDistribution::hot_mass_curve`] of `GAUSSIAN(min..max,mean,stdev)`.
fn gaussian_hot_mass(min: u64, max: u64, mean: f64, stdev: f64) -> Vec<(f64, f64)> {
    let keys = (max - min) as f64 + 1.0;
    if max == min {
        return one_key_hot_mass(keys);
    }
    if !(mean.is_finite() && stdev.is_finite() && stdev > 0.0) {
        return one_key_hot_mass(keys);
    }
    // Keys min+1..=max-1 take the draws in [min+1, max), one unit each;
    // `min` takes everything below min+1 and `max` everything from max on.
    let (low, high) = (min as f64 + 1.0, max as f64);
    let z = |x: f64| (x - mean) / stdev;
    let (low_atom, high_atom) = gaussian_end_masses(min, max, mean, stdev);
    // Few keys within reach of the mean: list them, exactly.
    let reach = GAUSSIAN_REACH_STDEVS * stdev;
    let first = (mean - reach).floor().max(low);
    let last = (mean + reach).ceil().min(high - 1.0);
    if last - first < EXACT_KEYS as f64 {
        let mut masses: Vec<f64> = vec![low_atom, high_atom];
        let mut key = first;
        while key <= last {
            masses.push(normal_mass(z(key), z(key + 1.0)));
            key += 1.0;
        }
        return hottest_first(masses, keys);
    }
    // The interior keys within distance r of the mean: (keys, mass).
    let interior = |r: f64| -> (f64, f64) {
        let (from, to) = ((mean - r).max(low), (mean + r).min(high));
        if to <= from {
            (0.0, 0.0)
        } else {
            (to - from, normal_mass(z(from), z(to)))
        }
    };
    let nearest = if mean < low {
        low - mean
    } else if mean > high {
        mean - high
    } else {
        0.0
    };
    let farthest = (mean - low).abs().max((high - mean).abs());
    // An atom joins when the interior keys at the frontier are no likelier
    // than it: density(r) = pdf(r / stdev) / stdev per key.
    let peak = 1.0 / (stdev * std::f64::consts::TAU.sqrt());
    let entry = |mass: f64| -> f64 {
        if mass >= peak {
            0.0
        } else if mass <= 0.0 {
            farthest
        } else {
            (stdev * (2.0 * (peak / mass).ln()).sqrt()).min(farthest)
        }
    };
    // Events: tabulation distances (None) and atom entries (Some(mass)).
    let mut events: Vec<(f64, Option<f64>)> = vec![
        (nearest, None),
        (farthest, None),
        ((mean - low).abs(), None),
        ((high - mean).abs(), None),
    ];
    let reach = farthest.min(reach);
    let mut step = 1.0;
    loop {
        let r = step * GAUSSIAN_STEP_STDEVS * stdev;
        if r >= reach {
            break;
        }
        if r > nearest {
            events.push((r, None));
        }
        step += 1.0;
    }
    for atom in [low_atom, high_atom] {
        events.push((entry(atom), Some(atom)));
    }
    // By distance; at one distance the tabulation point first, then the
    // likelier atom.
    events.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| a.1.is_some().cmp(&b.1.is_some()))
            .then_with(|| b.1.unwrap_or(0.0).total_cmp(&a.1.unwrap_or(0.0)))
    });
    let mut points = vec![(0.0, 0.0)];
    let (mut atom_keys, mut atom_mass) = (0.0, 0.0);
    for (r, atom) in events {
        let (interior_keys, interior_mass) = interior(r);
        points.push((
            (interior_keys + atom_keys) / keys,
            interior_mass + atom_mass,
        ));
        if let Some(mass) = atom {
            atom_keys += 1.0;
            atom_mass += mass;
            points.push((
                (interior_keys + atom_keys) / keys,
                interior_mass + atom_mass,
            ));
        }
    }
    units::concave_hull(points)
}

/// [`KeyDistribution::hot_mass_curve`] of `EXP(min..max)` with `mean`.
fn exponential_hot_mass(min: u64, max: u64, mean: f64) -> Vec<(f64, f64)> {
    let delta = max - min;
    let keys = delta as f64 + 1.0;
    if delta == 0 || !(mean.is_finite() && mean > 0.0) {
        return one_key_hot_mass(keys);
    }
    let d = delta as f64;
    // Offsets 0..delta-1 hold 1 - q^J for the first J; `max` holds q^delta.
    let (one_minus_q, atom) = exponential_masses(delta, mean);
    let head_mass = |j: f64| -(-j / mean).exp_m1();
    // Offsets likelier than the atom: (1 - q) q^j > q^delta.
    let likelier = ((d + mean * one_minus_q.ln()).floor() + 1.0).clamp(0.0, d);
    let mut offsets: Vec<f64> = if delta <= EXACT_KEYS {
        (0..=delta).map(|j| j as f64).collect()
    } else {
        // The chord error of 1 - exp(-J/mean) over a step s is about
        // (s / mean)^2 exp(-J/mean) / 8: steps of mean/64 x exp(J/(2 mean))
        // keep it near 3e-5 everywhere with about 128 points.
        let mut grid = vec![0.0, d];
        let mut j = 0.0;
        loop {
            j += (EXP_STEP_MEANS * mean * (j / (2.0 * mean)).exp()).max(1.0);
            if j >= d {
                break;
            }
            grid.push(j);
        }
        grid
    };
    offsets.push(likelier);
    offsets.sort_by(f64::total_cmp);
    offsets.dedup();
    let mut points = vec![(0.0, 0.0)];
    let mut atom_in = false;
    for j in offsets {
        let with_atom = |atom_in: bool| {
            let extra = if atom_in { 1.0 } else { 0.0 };
            ((j + extra) / keys, head_mass(j) + extra * atom)
        };
        points.push(with_atom(atom_in));
        if !atom_in && j >= likelier {
            atom_in = true;
            points.push(with_atom(atom_in));
        }
    }
    units::concave_hull(points)
}

/// The curve of `keys` keys of which those listed have probabilities
/// `masses` (the rest share what is left): hottest first, a point per key.
fn hottest_first(mut masses: Vec<f64>, keys: f64) -> Vec<(f64, f64)> {
    masses.sort_by(|a, b| b.total_cmp(a));
    let mut points = Vec::with_capacity(masses.len() + 2);
    points.push((0.0, 0.0));
    let mut total = 0.0;
    for (count, mass) in masses.into_iter().enumerate() {
        total += mass;
        points.push(((count + 1) as f64 / keys, total));
    }
    units::concave_hull(points)
}

// ---------------------------------------------------------------------------
// Parsing (c-s OptionDistribution syntax and number forms)

/// Parses a whole, non-negative c-s number: digits with optional `_`
/// separators, an optional fraction and e-notation exponent as long as the
/// value is whole (`38.85e9`), and an optional `k`/`m`/`b` suffix
/// (x10^3/10^6/10^9, c-s `OptionDistribution.parseLong`). Case-insensitive.
pub(crate) fn parse_whole(text: &str) -> Result<u64, String> {
    let cleaned: String = text
        .trim()
        .chars()
        .filter(|&c| c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    let invalid = || format!("`{text}` is not a whole number");
    let (body, suffix_exp) = match cleaned.as_bytes().last() {
        Some(b'k') => (&cleaned[..cleaned.len() - 1], 3i64),
        Some(b'm') => (&cleaned[..cleaned.len() - 1], 6),
        Some(b'b') => (&cleaned[..cleaned.len() - 1], 9),
        Some(_) => (cleaned.as_str(), 0),
        None => return Err(invalid()),
    };
    let (mantissa, exponent) = match body.split_once('e') {
        Some((m, e)) => {
            let e = e.strip_prefix('+').unwrap_or(e);
            let (negative, digits) = match e.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, e),
            };
            if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(invalid());
            }
            let value: i64 = digits.parse().map_err(|_| invalid())?;
            (m, if negative { -value } else { value })
        }
        None => (body, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(invalid());
    }
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return Err(invalid());
    }
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let mut scale = exponent + suffix_exp - frac_part.len() as i64;
    // Strip trailing zeros into the scale so "1.50e1" works.
    let mut digits = digits.to_string();
    while scale < 0 && digits.ends_with('0') {
        digits.pop();
        scale += 1;
    }
    if digits.is_empty() {
        return Ok(0);
    }
    if scale < 0 {
        return Err(format!("`{text}` is not a whole number"));
    }
    if digits.len() as i64 + scale > 20 {
        return Err(format!("`{text}` is too large"));
    }
    let mut value: u128 = digits.parse().map_err(|_| invalid())?;
    for _ in 0..scale {
        value = value
            .checked_mul(10)
            .ok_or_else(|| format!("`{text}` is too large"))?;
    }
    u64::try_from(value).map_err(|_| format!("`{text}` is too large"))
}

/// Parses a real c-s parameter (gaussian mean, stdev, stdvrng): a finite
/// decimal number, with `_` separators, e-notation and `k`/`m`/`b`
/// suffixes allowed.
pub(crate) fn parse_real(text: &str) -> Result<f64, String> {
    let cleaned: String = text
        .trim()
        .chars()
        .filter(|&c| c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    let (body, scale) = match cleaned.as_bytes().last() {
        Some(b'k') => (&cleaned[..cleaned.len() - 1], 1e3),
        Some(b'm') => (&cleaned[..cleaned.len() - 1], 1e6),
        Some(b'b') => (&cleaned[..cleaned.len() - 1], 1e9),
        _ => (cleaned.as_str(), 1.0),
    };
    let looks_numeric = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
        && body.bytes().any(|b| b.is_ascii_digit());
    let value: f64 = if looks_numeric {
        body.parse().ok()
    } else {
        None
    }
    .ok_or_else(|| format!("`{text}` is not a number"))?;
    let value = value * scale;
    if !value.is_finite() {
        return Err(format!("`{text}` is not a finite number"));
    }
    Ok(value)
}

/// Parses `min..max` (two or more dots, as c-s's `\.\.+`).
pub(crate) fn parse_bounds(text: &str, spec: &str) -> Result<(u64, u64), DistributionError> {
    let malformed = || {
        DistributionError::new(format!(
            "expected a range min..max in `{spec}`, found `{text}`"
        ))
    };
    let dots = text.find("..").ok_or_else(malformed)?;
    let min_text = &text[..dots];
    let max_text = text[dots..].trim_start_matches('.');
    if max_text.contains("..") {
        return Err(malformed());
    }
    let min =
        parse_whole(min_text).map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))?;
    let max =
        parse_whole(max_text).map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))?;
    check_bounds(min, max).map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))?;
    Ok((min, max))
}

fn parse_key_distribution(spec: &str) -> Result<KeyDistribution, DistributionError> {
    let text = spec.trim();
    let (inverted, rest) = match text.strip_prefix('~') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let open = rest.find('(');
    let name_end = open.unwrap_or(rest.len());
    let name = &rest[..name_end];
    if name.is_empty()
        || !name.bytes().all(|b| b.is_ascii_alphabetic())
        || open.is_none()
        || !rest.ends_with(')')
    {
        return Err(DistributionError::new(format!(
            "`{spec}` is not a distribution: expected NAME(args) with NAME one of {ACCEPTED_DISTRIBUTIONS}"
        )));
    }
    let args_text = &rest[name_end + 1..rest.len() - 1];
    if args_text.trim().is_empty() {
        return Err(DistributionError::new(format!("`{spec}` has no arguments")));
    }
    let args: Vec<&str> = args_text.split(',').map(str::trim).collect();
    if args.iter().any(|a| a.is_empty()) {
        return Err(DistributionError::new(format!(
            "`{spec}` has an empty argument"
        )));
    }
    let wrong_count = |usage: &str| {
        DistributionError::new(format!(
            "wrong number of arguments in `{spec}`: expected {usage}"
        ))
    };
    let real = |text: &str| {
        parse_real(text).map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))
    };
    let lower = name.to_ascii_lowercase();
    let dist = match lower.as_str() {
        "uniform" => {
            if args.len() != 1 {
                return Err(wrong_count("uniform(min..max)"));
            }
            let (min, max) = parse_bounds(args[0], spec)?;
            KeyDistribution::uniform(min, max)?
        }
        "gaussian" | "gauss" | "normal" | "norm" => {
            let usage =
                "gaussian(min..max), gaussian(min..max,stdvrng) or gaussian(min..max,mean,stdev)";
            match args.len() {
                1 | 2 => {
                    let (min, max) = parse_bounds(args[0], spec)?;
                    let stdvrng = if args.len() == 2 {
                        real(args[1])?
                    } else {
                        DEFAULT_GAUSSIAN_STDVRNG
                    };
                    KeyDistribution::gaussian_stdvrng(min, max, stdvrng)
                        .map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))?
                }
                3 => {
                    let (min, max) = parse_bounds(args[0], spec)?;
                    let mean = real(args[1])?;
                    let stdev = real(args[2])?;
                    KeyDistribution::gaussian(min, max, mean, stdev)
                        .map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))?
                }
                _ => return Err(wrong_count(usage)),
            }
        }
        "exp" => {
            if args.len() != 1 {
                return Err(wrong_count("exp(min..max)"));
            }
            let (min, max) = parse_bounds(args[0], spec)?;
            KeyDistribution::exponential(min, max)
                .map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))?
        }
        "fixed" => {
            if args.len() != 1 {
                return Err(wrong_count("fixed(value)"));
            }
            let value = parse_whole(args[0])
                .map_err(|e| DistributionError::new(format!("{e} (in `{spec}`)")))?;
            KeyDistribution::fixed(value)
        }
        "extreme" | "extr" | "qextreme" | "qextr" | "weibull" => {
            return Err(DistributionError::new(format!(
                "the c-s distribution `{name}` (Weibull) is not modelled by the twin: accepted are {ACCEPTED_DISTRIBUTIONS}"
            )));
        }
        _ => {
            return Err(DistributionError::new(format!(
                "unknown distribution `{name}` in `{spec}`: accepted are {ACCEPTED_DISTRIBUTIONS}"
            )));
        }
    };
    Ok(if inverted { dist.inverted() } else { dist })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    const DRAWS: usize = 1_000_000;

    struct Stats {
        mean: f64,
        stdev: f64,
        min: u64,
        max: u64,
    }

    /// Mean and sample stdev by Welford's method (keys near 1e10 would lose
    /// the variance to cancellation in a sum of squares).
    fn stats(mut draw: impl FnMut() -> u64) -> Stats {
        let (mut mean, mut m2) = (0.0f64, 0.0f64);
        let (mut min, mut max) = (u64::MAX, 0u64);
        for i in 0..DRAWS {
            let x = draw();
            let delta = x as f64 - mean;
            mean += delta / (i + 1) as f64;
            m2 += delta * (x as f64 - mean);
            min = min.min(x);
            max = max.max(x);
        }
        Stats {
            mean,
            stdev: (m2 / (DRAWS - 1) as f64).sqrt(),
            min,
            max,
        }
    }

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn parse_numbers() {
        assert_eq!(parse_whole("1000000000"), Ok(1_000_000_000));
        assert_eq!(parse_whole("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_whole("38.85e9"), Ok(38_850_000_000));
        assert_eq!(parse_whole("38.85E9"), Ok(38_850_000_000));
        assert_eq!(parse_whole("1e9"), Ok(1_000_000_000));
        assert_eq!(parse_whole("5k"), Ok(5_000));
        assert_eq!(parse_whole("5K"), Ok(5_000));
        assert_eq!(parse_whole("750m"), Ok(750_000_000));
        assert_eq!(parse_whole("3b"), Ok(3_000_000_000));
        assert_eq!(parse_whole("1.5m"), Ok(1_500_000));
        assert_eq!(parse_whole("1.50e1"), Ok(15));
        assert_eq!(parse_whole("0"), Ok(0));
        assert_eq!(parse_whole("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_whole("18446744073709551616").is_err());
        assert!(parse_whole("1.5").is_err());
        assert!(parse_whole("1e-1").is_err());
        assert!(parse_whole("abc").is_err());
        assert!(parse_whole("").is_err());
        assert!(parse_whole("_").is_err());
        assert!(parse_whole("-5").is_err());
        assert!(parse_whole("1e99999").is_err());
        assert!(parse_whole("9".repeat(60).as_str()).is_err());
        assert_eq!(parse_real("19425000000"), Ok(19_425_000_000.0));
        assert_eq!(parse_real("6.475e9"), Ok(6_475_000_000.0));
        assert_eq!(parse_real("2.5"), Ok(2.5));
        assert_eq!(parse_real("250m"), Ok(250_000_000.0));
        assert!(parse_real("inf").is_err());
        assert!(parse_real("nan").is_err());
        assert!(parse_real("1e400").is_err());
        assert!(parse_real("x").is_err());
    }

    #[test]
    fn parse_distributions() {
        let g: KeyDistribution = "gauss(1..750000000,500000000,250000000)".parse().unwrap();
        assert_eq!(
            g,
            KeyDistribution::Gaussian {
                min: 1,
                max: 750_000_000,
                mean: 5e8,
                stdev: 2.5e8
            }
        );
        for name in ["gaussian", "GAUSSIAN", "Gauss", "normal", "norm"] {
            let d: KeyDistribution = format!("{name}(1..38850000000,19425000000,6475000000)")
                .parse()
                .unwrap();
            assert_eq!(
                d,
                KeyDistribution::Gaussian {
                    min: 1,
                    max: 38_850_000_000,
                    mean: 19_425_000_000.0,
                    stdev: 6_475_000_000.0
                }
            );
        }
        // Two arguments: mean = midpoint, stdev = (mean - min) / stdvrng.
        let d: KeyDistribution = "gauss(1..101,5)".parse().unwrap();
        assert_eq!(
            d,
            KeyDistribution::Gaussian {
                min: 1,
                max: 101,
                mean: 51.0,
                stdev: 10.0
            }
        );
        // One argument: stdvrng 3.
        let d: KeyDistribution = "gaussian(1..1000000)".parse().unwrap();
        assert_eq!(
            d,
            KeyDistribution::Gaussian {
                min: 1,
                max: 1_000_000,
                mean: 500_000.5,
                stdev: 499_999.5 / 3.0
            }
        );
        let d: KeyDistribution = "uniform(1..1m)".parse().unwrap();
        assert_eq!(
            d,
            KeyDistribution::Uniform {
                min: 1,
                max: 1_000_000
            }
        );
        let d: KeyDistribution = "UNIFORM(1...38.85e9)".parse().unwrap();
        assert_eq!(
            d,
            KeyDistribution::Uniform {
                min: 1,
                max: 38_850_000_000
            }
        );
        let d: KeyDistribution = "fixed(42)".parse().unwrap();
        assert_eq!(d, KeyDistribution::Fixed(42));
        let d: KeyDistribution = "exp(1..1000001)".parse().unwrap();
        match d {
            KeyDistribution::Exponential {
                min: 1,
                max: 1_000_001,
                mean,
            } => {
                // 2 * 1e6 / ln(1e6) = 144764.8...
                assert!((mean - 2e6 / (1e6f64).ln()).abs() < 1e-6, "{mean}");
            }
            other => panic!("{other:?}"),
        }
        let d: KeyDistribution = "~exp(1..10)".parse().unwrap();
        assert!(matches!(d, KeyDistribution::Inverted(_)));
        assert_eq!(d.to_string(), "~exp(1..10)");

        for bad in [
            "zipf(1..10)",
            "gauss(1..10,0)",
            "gauss(1..10,5,0)",
            "gauss(1..10,5,-1)",
            "gauss(1..10,1,2,3)",
            "gauss(10..1)",
            "gauss(5..5)",
            "uniform(1..x)",
            "uniform(1)",
            "uniform(1..2..3)",
            "uniform(1..10",
            "uniform()",
            "uniform(1..10,)",
            "exp(3..3)",
            "exp(3..4)",
            "fixed(1.5)",
            "extreme(1..10,2)",
            "qextr(1..10,2,3)",
            "~~fixed(1)",
            "",
            "gauss",
        ] {
            let err = bad.parse::<KeyDistribution>().expect_err(bad);
            assert!(!err.message().contains('\n'), "{err}");
        }
        assert!(SizeDistribution::from_str("gauss(1..10)").is_err());
        assert_eq!(
            SizeDistribution::from_str("FIXED(1024)"),
            Ok(SizeDistribution::Fixed(1024))
        );
        assert_eq!(
            SizeDistribution::from_str("uniform(10..20)"),
            Ok(SizeDistribution::Uniform { min: 10, max: 20 })
        );
    }

    #[test]
    fn sequential_visits_in_order_and_wraps() {
        let mut seq = SequentialKeys::new(5, 9);
        let keys: Vec<u64> = (0..12).map(|_| seq.next()).collect();
        assert_eq!(keys, vec![5, 6, 7, 8, 9, 5, 6, 7, 8, 9, 5, 6]);
        assert_eq!(seq.laps(), 2);
        assert_eq!(seq.range(), 5..=9);

        let mut one = SequentialKeys::new(7, 7);
        assert_eq!((one.next(), one.next(), one.laps()), (7, 7, 2));

        let mut top = SequentialKeys::new(u64::MAX - 1, u64::MAX);
        let keys: Vec<u64> = (0..3).map(|_| top.next()).collect();
        assert_eq!(keys, vec![u64::MAX - 1, u64::MAX, u64::MAX - 1]);

        // A long range: every key once per lap, in order.
        let mut seq = SequentialKeys::new(1, 100_000);
        let mut expected = 1;
        for _ in 0..250_000 {
            assert_eq!(seq.next(), expected);
            expected = if expected == 100_000 { 1 } else { expected + 1 };
        }
        assert_eq!(seq.laps(), 2);
    }

    #[test]
    fn uniform_statistics() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let d = KeyDistribution::uniform(1, 1_000_000).unwrap();
        let s = stats(|| d.sample(&mut rng));
        let n = 1_000_000f64;
        let expected_sd = ((n * n - 1.0) / 12.0).sqrt();
        println!(
            "uniform(1..1000000): mean {:.1} (expected {:.1}), stdev {:.1} (expected {:.1})",
            s.mean,
            d.mean(),
            s.stdev,
            expected_sd
        );
        assert!(rel(s.mean, d.mean()) < 0.01);
        assert!(rel(s.stdev, expected_sd) < 0.01);
        assert!(s.min >= 1 && s.max <= 1_000_000);

        // Small range: both ends are reached.
        let d = KeyDistribution::uniform(3, 6).unwrap();
        let s = stats(|| d.sample(&mut rng));
        assert_eq!((s.min, s.max), (3, 6));
        assert!(rel(s.mean, 4.5) < 0.01);

        let sizes = SizeDistribution::Uniform { min: 100, max: 200 };
        let s = stats(|| sizes.sample(&mut rng));
        assert!(rel(s.mean, sizes.mean()) < 0.01);
        assert_eq!((s.min, s.max), (100, 200));
    }

    #[test]
    fn gaussian_statistics_unclamped() {
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        // R6 "large spread": gaussian(1..300000000,150000000,50000000): the
        // bounds are 3 stdev out, so clamping barely matters.
        let d: KeyDistribution = "gaussian(1..300000000,150000000,50000000)".parse().unwrap();
        let s = stats(|| d.sample(&mut rng));
        println!(
            "gaussian(1..3e8,1.5e8,5e7): mean {:.4e} (model {:.4e}), stdev {:.4e}",
            s.mean,
            d.mean(),
            s.stdev
        );
        assert!(rel(s.mean, 150_000_000.0) < 0.01);
        assert!(rel(s.mean, d.mean()) < 0.01);
        assert!(rel(s.stdev, 50_000_000.0) < 0.01);
        assert!(s.min >= 1 && s.max <= 300_000_000);

        // R5: gaussian(1..38850000000,19425000000,6475000000).
        let d: KeyDistribution = "gaussian(1..38.85e9,19425000000,6475000000)"
            .parse()
            .unwrap();
        let s = stats(|| d.sample(&mut rng));
        println!(
            "gaussian(1..3.885e10,1.9425e10,6.475e9): mean {:.5e}, stdev {:.5e}",
            s.mean, s.stdev
        );
        assert!(rel(s.mean, 19_425_000_000.0) < 0.01);
        assert!(rel(s.stdev, 6_475_000_000.0) < 0.01);
        assert!(s.min >= 1 && s.max <= 38_850_000_000);

        // Default one-argument form: stdvrng 3.
        let d: KeyDistribution = "gaussian(1..1000000)".parse().unwrap();
        let s = stats(|| d.sample(&mut rng));
        println!(
            "gaussian(1..1000000): mean {:.1}, stdev {:.1} (nominal {:.1})",
            s.mean,
            s.stdev,
            499_999.5 / 3.0
        );
        assert!(rel(s.mean, 500_000.5) < 0.01);
        assert!(rel(s.stdev, 499_999.5 / 3.0) < 0.01);
        assert!(s.min >= 1 && s.max <= 1_000_000);

        // R6 "small spread": stdev 100 around the middle.
        let d: KeyDistribution = "gaussian(1..300000000,150000000,100)".parse().unwrap();
        let s = stats(|| d.sample(&mut rng));
        println!(
            "gaussian(1..3e8,1.5e8,100): mean {:.2} (model {:.2}), stdev {:.2}",
            s.mean,
            d.mean(),
            s.stdev
        );
        assert!(
            (s.mean - d.mean()).abs() < 1.0,
            "{} vs {}",
            s.mean,
            d.mean()
        );
        assert!(rel(s.stdev, 100.0) < 0.01, "{}", s.stdev);
    }

    #[test]
    fn gaussian_clamps_not_resamples() {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        // R1 read: the upper bound is one stdev above the mean.
        let d: KeyDistribution = "gauss(1..750000000,500000000,250000000)".parse().unwrap();
        let mut at_max = 0usize;
        let mut at_min = 0usize;
        let s = stats(|| {
            let k = d.sample(&mut rng);
            at_max += usize::from(k == 750_000_000);
            at_min += usize::from(k == 1);
            k
        });
        let frac_max = at_max as f64 / DRAWS as f64;
        let frac_min = at_min as f64 / DRAWS as f64;
        let expected_max = 1.0 - normal_cdf(1.0); // 0.1587
        let expected_min = normal_cdf(-2.0); // 0.0228
        println!(
            "gauss(1..7.5e8,5e8,2.5e8): mean {:.5e} (model {:.5e}), at max {frac_max:.4} (expected {expected_max:.4}), at min {frac_min:.4} (expected {expected_min:.4})",
            s.mean,
            d.mean()
        );
        assert!(s.min >= 1 && s.max <= 750_000_000);
        assert_eq!(s.max, 750_000_000);
        assert!((frac_max - expected_max).abs() < 0.002);
        assert!((frac_min - expected_min).abs() < 0.001);
        assert!(rel(s.mean, d.mean()) < 0.01);
        // Clamping pulls the mean well below the nominal 500M.
        assert!(
            d.mean() < 490_000_000.0 && d.mean() > 470_000_000.0,
            "{}",
            d.mean()
        );

        // Mean far outside the range: every key clamps to the bound.
        let d = KeyDistribution::gaussian(10, 20, 1e12, 1.0).unwrap();
        assert!((0..1000).all(|_| d.sample(&mut rng) == 20));
        assert_eq!(d.mean(), 20.0);
    }

    #[test]
    fn exponential_and_inverted() {
        let mut rng = Pcg64Mcg::seed_from_u64(4);
        let d: KeyDistribution = "exp(1..1000000)".parse().unwrap();
        let s = stats(|| d.sample(&mut rng));
        println!(
            "exp(1..1000000): mean {:.1} (model {:.1})",
            s.mean,
            d.mean()
        );
        assert!(rel(s.mean, d.mean()) < 0.01);
        assert!(s.min >= 1 && s.max <= 1_000_000);
        assert_eq!(s.min, 1);

        // Small range: heavy clamping at max; the closed form still holds.
        let d: KeyDistribution = "exp(1..10)".parse().unwrap();
        let mut counts = [0usize; 11];
        let s = stats(|| {
            let k = d.sample(&mut rng);
            counts[k as usize] += 1;
            k
        });
        assert!(rel(s.mean, d.mean()) < 0.01, "{} vs {}", s.mean, d.mean());
        // Below the clamp, smaller keys are likelier; the clamped max
        // collects P(X >= 9) = sqrt(1/9) = 1/3 of the draws (c-s's help
        // text, "~exp(1..10) will yield 10 most often", holds only for
        // the unclamped keys).
        assert!(counts[1] > counts[5] && counts[5] > counts[9]);
        let at_max = counts[10] as f64 / DRAWS as f64;
        assert!((at_max - 1.0 / 3.0).abs() < 0.003, "{at_max}");
        // ~exp(1..10) mirrors it: 10 is the likeliest unclamped key.
        let inv: KeyDistribution = "~exp(1..10)".parse().unwrap();
        let mut inv_counts = [0usize; 11];
        let s = stats(|| {
            let k = inv.sample(&mut rng);
            inv_counts[k as usize] += 1;
            k
        });
        assert!(rel(s.mean, inv.mean()) < 0.01);
        assert!((inv.mean() - (11.0 - d.mean())).abs() < 1e-9);
        for k in 1..=10 {
            let (a, b) = (inv_counts[k] as f64, counts[11 - k] as f64);
            assert!((a - b).abs() < 0.01 * DRAWS as f64, "key {k}: {a} vs {b}");
        }
        assert!(inv_counts[10] > inv_counts[6] && inv_counts[6] > inv_counts[2]);
        assert_eq!(inv.range(), 1..=10);

        // max = min + 1: c-s's mean is 1/-0, which c-s rejects.
        assert!(KeyDistribution::exponential(5, 6).is_err());
        let d = KeyDistribution::exponential(5, 7).unwrap();
        assert!((0..1000).all(|_| (5..=7).contains(&d.sample(&mut rng))));
        // A hand-built infinite mean puts every key at max.
        let d = KeyDistribution::Exponential {
            min: 5,
            max: 6,
            mean: f64::INFINITY,
        };
        assert!((0..100).all(|_| d.sample(&mut rng) == 6));
        assert_eq!(d.mean(), 6.0);

        let f = KeyDistribution::fixed(77);
        assert!((0..100).all(|_| f.sample(&mut rng) == 77));
        assert_eq!(f.clone().inverted().sample(&mut rng), 77);
        assert_eq!(f.mean(), 77.0);
    }

    #[test]
    fn hand_built_degenerate_distributions_do_not_panic() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let weird = [
            KeyDistribution::Uniform { min: 10, max: 5 },
            KeyDistribution::Gaussian {
                min: 10,
                max: 5,
                mean: f64::NAN,
                stdev: f64::INFINITY,
            },
            KeyDistribution::Gaussian {
                min: 0,
                max: u64::MAX,
                mean: -1e300,
                stdev: 1e300,
            },
            KeyDistribution::Exponential {
                min: 10,
                max: 5,
                mean: f64::NAN,
            },
            KeyDistribution::Exponential {
                min: 0,
                max: u64::MAX,
                mean: f64::INFINITY,
            },
            KeyDistribution::Exponential {
                min: u64::MAX,
                max: u64::MAX,
                mean: -3.0,
            },
            KeyDistribution::Uniform {
                min: 0,
                max: u64::MAX,
            }
            .inverted(),
            KeyDistribution::Uniform { min: 10, max: 5 }.inverted(),
        ];
        for d in &weird {
            for _ in 0..1000 {
                let k = d.sample(&mut rng);
                assert!(d.range().contains(&k), "{d:?} gave {k}");
            }
            let _ = d.mean();
        }
        assert_eq!(
            SizeDistribution::Uniform { min: 9, max: 3 }.sample(&mut rng),
            9
        );
    }

    #[test]
    fn erfc_matches_statrs() {
        for i in -600..=600 {
            let x = i as f64 / 100.0;
            let ours = erfc(x);
            let reference = statrs::function::erf::erfc(x);
            assert!(
                ((ours - reference) / reference).abs() < 2e-7,
                "erfc({x}): {ours} vs {reference}"
            );
        }
    }

    /// `y` at `x` on a piecewise-linear curve.
    fn curve_mass(curve: &[(f64, f64)], x: f64) -> f64 {
        let after = curve.partition_point(|p| p.0 <= x);
        if after >= curve.len() {
            return 1.0;
        }
        let (x0, y0) = curve[after - 1];
        let (x1, y1) = curve[after];
        y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    }

    /// Starts at (0, 0), ends at (1, 1), never decreases, strictly concave
    /// turns.
    fn assert_valid_curve(name: &str, curve: &[(f64, f64)]) {
        assert_eq!(curve[0], (0.0, 0.0), "{name}");
        assert_eq!(curve[curve.len() - 1], (1.0, 1.0), "{name}");
        assert!(curve.len() <= 700, "{name}: {} points", curve.len());
        for pair in curve.windows(2) {
            assert!(
                pair[1].0 >= pair[0].0 && pair[1].1 >= pair[0].1,
                "{name}: {pair:?}"
            );
        }
        for w in curve.windows(3) {
            let turn =
                (w[1].0 - w[0].0) * (w[2].1 - w[0].1) - (w[1].1 - w[0].1) * (w[2].0 - w[0].0);
            assert!(turn < 0.0, "{name}: not concave at {w:?}");
        }
    }

    /// Per-key probabilities, hottest first, accumulated.
    fn cumulative_hottest_first(mut probabilities: Vec<f64>) -> Vec<f64> {
        probabilities.sort_by(|a, b| b.total_cmp(a));
        let mut total = 0.0;
        probabilities
            .into_iter()
            .map(|p| {
                total += p;
                total
            })
            .collect()
    }

    /// The exact probability of each key of a gaussian, from statrs.
    fn gaussian_key_probabilities(min: u64, max: u64, mean: f64, stdev: f64) -> Vec<f64> {
        let cdf = |x: f64| {
            0.5 * statrs::function::erf::erfc(-(x - mean) / stdev / std::f64::consts::SQRT_2)
        };
        (min..=max)
            .map(|k| {
                if k == min {
                    cdf(min as f64 + 1.0)
                } else if k == max {
                    1.0 - cdf(max as f64)
                } else {
                    cdf(k as f64 + 1.0) - cdf(k as f64)
                }
            })
            .collect()
    }

    #[test]
    fn hot_mass_of_uniform_fixed_and_mirrored() {
        let flat = vec![(0.0, 0.0), (1.0, 1.0)];
        assert_eq!(
            KeyDistribution::uniform(1, 1_000_000)
                .unwrap()
                .hot_mass_curve(),
            flat
        );
        assert_eq!(KeyDistribution::fixed(42).hot_mass_curve(), flat);
        assert_eq!(
            KeyDistribution::gaussian_stdvrng(5, 5, 3.0)
                .map(|d| d.hot_mass_curve())
                .ok(),
            None
        );
        let gauss: KeyDistribution = "gauss(1..750000000,500000000,250000000)".parse().unwrap();
        assert_eq!(
            gauss.clone().inverted().hot_mass_curve(),
            gauss.hot_mass_curve()
        );
        let exp: KeyDistribution = "exp(1..1000000)".parse().unwrap();
        assert_eq!(
            exp.clone().inverted().hot_mass_curve(),
            exp.hot_mass_curve()
        );
        // A degenerate hand-built gaussian sends every draw to one key.
        let degenerate = KeyDistribution::Gaussian {
            min: 1,
            max: 100,
            mean: 50.0,
            stdev: 0.0,
        };
        assert_eq!(
            degenerate.hot_mass_curve(),
            vec![(0.0, 0.0), (0.01, 1.0), (1.0, 1.0)]
        );
    }

    #[test]
    fn gaussian_hot_mass_matches_the_key_probabilities() {
        for (min, max, mean, stdev) in [
            (1u64, 100_000u64, 60_000.0, 15_000.0),
            (1, 100_000, 50_000.5, 100.0),
            (1, 1_000, 1_200.0, 150.0),
            (10, 20, 15.0, 1.0),
            (1, 2, 1.7, 0.5),
        ] {
            let d = KeyDistribution::gaussian(min, max, mean, stdev).unwrap();
            let curve = d.hot_mass_curve();
            let name = d.to_string();
            assert_valid_curve(&name, &curve);
            let cumulative =
                cumulative_hottest_first(gaussian_key_probabilities(min, max, mean, stdev));
            let keys = cumulative.len();
            let mut worst = 0.0f64;
            for i in 1..=keys.min(2_000) {
                let count = (i * keys).div_ceil(keys.min(2_000));
                let exact = cumulative[count - 1];
                let model = curve_mass(&curve, count as f64 / keys as f64);
                worst = worst.max((exact - model).abs());
            }
            println!(
                "{name}: worst |curve - exact| {worst:.2e} ({} points)",
                curve.len()
            );
            // Listed keys are exact; the continuum of a wide gaussian is
            // within ~1e-4.
            let tolerance = if 18.0 * stdev < 512.0 { 1e-6 } else { 1e-4 };
            assert!(worst < tolerance, "{name}: {worst}");
        }
    }

    #[test]
    fn gaussian_hot_mass_matches_the_sampler() {
        // Counts of sampled keys, hottest first, against the curve: checks
        // the clamping and truncation the curve assumes.
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let d: KeyDistribution = "gauss(1..1000,700,200)".parse().unwrap();
        let mut counts = vec![0u64; 1001];
        for _ in 0..DRAWS {
            counts[d.sample(&mut rng) as usize] += 1;
        }
        let frequencies: Vec<f64> = counts[1..]
            .iter()
            .map(|&c| c as f64 / DRAWS as f64)
            .collect();
        let cumulative = cumulative_hottest_first(frequencies);
        let curve = d.hot_mass_curve();
        for keys in [1usize, 10, 50, 100, 300, 600, 1000] {
            let model = curve_mass(&curve, keys as f64 / 1000.0);
            let sampled = cumulative[keys - 1];
            println!("hottest {keys} of 1000 keys: sampled {sampled:.4}, curve {model:.4}");
            assert!(
                (sampled - model).abs() < 0.004,
                "{keys}: {sampled} vs {model}"
            );
        }
        // The hottest key is the clamped max: P(X >= 1000) = 1 - Phi(1.5).
        assert!((curve_mass(&curve, 0.001) - normal_cdf(-1.5)).abs() < 1e-9);
    }

    #[test]
    fn published_gaussians_have_their_atoms_and_bodies() {
        // R1: a sixth of the draws (P(X >= mean + stdev)) land on key 750M.
        let r1: KeyDistribution = "gauss(1..750000000,500000000,250000000)".parse().unwrap();
        let curve = r1.hot_mass_curve();
        assert_valid_curve("R1", &curve);
        let one_key = 1.0 / 750_000_000.0;
        assert!((curve_mass(&curve, one_key) - normal_cdf(-1.0)).abs() < 1e-6);
        // Key 1 collects P(X < 2) = 2.3%, also more than any interior key.
        assert!(
            (curve_mass(&curve, 2.0 * one_key) - normal_cdf(-1.0) - normal_cdf(-2.0)).abs() < 1e-6
        );
        // Then the interval around the mean: the next 20% of the keys
        // (150M, i.e. +-0.3 stdev) take 23.6%.
        let expected = normal_cdf(-1.0) + normal_cdf(-2.0) + (normal_cdf(0.3) - normal_cdf(-0.3));
        assert!((curve_mass(&curve, 0.2 + 2.0 * one_key) - expected).abs() < 1e-4);
        // R5: bounds 3 stdev out; the hottest 1/70 of the keys hold about
        // 3.7% of the reads.
        let r5: KeyDistribution = "gaussian(1..38850000000,19425000000,6475000000)"
            .parse()
            .unwrap();
        let curve = r5.hot_mass_curve();
        assert_valid_curve("R5", &curve);
        let half_width = 38_850_000_000.0 / 70.0 / 2.0 / 6_475_000_000.0;
        // Both end keys collect Phi(-3) each, more than any interior key.
        let expected = 2.0 * normal_cdf(-3.0) + normal_cdf(half_width) - normal_cdf(-half_width);
        let model = curve_mass(&curve, 1.0 / 70.0);
        println!("R5: hottest 1/70 of the keys take {model:.5} (expected {expected:.5})");
        assert!((model - expected).abs() < 1e-5);
        // R6 small spread: all but 1e-6 of the draws within 2 x 5 stdev.
        let r6: KeyDistribution = "gaussian(1..300000000,150000000,100)".parse().unwrap();
        let curve = r6.hot_mass_curve();
        assert_valid_curve("R6 small spread", &curve);
        assert!(curve_mass(&curve, 1000.0 / 300_000_000.0) > 1.0 - 1e-6);
        // Mean outside the range: the nearest end key collects most.
        let outside = KeyDistribution::gaussian(1, 100, 150.0, 20.0).unwrap();
        let curve = outside.hot_mass_curve();
        assert_valid_curve("outside", &curve);
        assert!((curve_mass(&curve, 0.01) - normal_cdf(2.5)).abs() < 1e-6);
    }

    /// The named hot keys take what the sampler gives them, within
    /// binomial noise, and no key the sampler makes hot goes unnamed.
    #[test]
    fn hot_keys_are_the_keys_the_sampler_favours() {
        let draws = 400_000u32;
        for spec in [
            "gauss(1..750000000,500000000,250000000)",
            "gaussian(1..300000000,150000000,100)",
            "~gauss(1..1000,800,50)",
            "exp(1..1000000)",
            "uniform(1..500)",
            "fixed(7)",
        ] {
            let dist: KeyDistribution = spec.parse().unwrap();
            let hot = dist.hot_keys();
            assert!(
                hot.windows(2).all(|pair| pair[0].0 < pair[1].0),
                "{spec}: sorted"
            );
            let mut rng = Pcg64Mcg::seed_from_u64(9);
            let mut counts = std::collections::BTreeMap::<u64, u32>::new();
            for _ in 0..draws {
                *counts.entry(dist.sample(&mut rng)).or_default() += 1;
            }
            for &(key, mass) in &hot {
                assert!(mass >= HOT_KEY_MASS, "{spec}: key {key} named at {mass}");
                let seen = f64::from(counts.get(&key).copied().unwrap_or(0)) / f64::from(draws);
                let noise = 5.0 * (mass * (1.0 - mass) / f64::from(draws)).sqrt();
                assert!(
                    (seen - mass).abs() < noise + 1e-4,
                    "{spec}: key {key} drawn {seen}, named at {mass}"
                );
            }
            for (&key, &count) in &counts {
                let seen = f64::from(count) / f64::from(draws);
                if seen > 2.0 * HOT_KEY_MASS {
                    assert!(
                        hot.iter().any(|&(named, _)| named == key),
                        "{spec}: key {key} drawn {seen} of the time but not named"
                    );
                }
            }
        }
        // R1: the clamped ends, by name.
        let r1: KeyDistribution = "gauss(1..750000000,500000000,250000000)".parse().unwrap();
        let hot = r1.hot_keys();
        assert_eq!(hot.len(), 2, "{hot:?}");
        assert_eq!((hot[0].0, hot[1].0), (1, 750_000_000));
        assert!((hot[0].1 - normal_cdf(-2.0)).abs() < 1e-6);
        assert!((hot[1].1 - normal_cdf(-1.0)).abs() < 1e-6);
        // R5: ends 3 stdev out take 0.13% each; a wide uniform names none.
        let r5: KeyDistribution = "gaussian(1..38850000000,19425000000,6475000000)"
            .parse()
            .unwrap();
        assert_eq!(r5.hot_keys().len(), 2);
        let wide: KeyDistribution = "uniform(1..1000000)".parse().unwrap();
        assert!(wide.hot_keys().is_empty());
    }

    #[test]
    fn exp_hot_mass_matches_the_key_probabilities() {
        for spec in ["exp(1..10)", "exp(1..2000)", "exp(1..1000000)", "exp(5..7)"] {
            let d: KeyDistribution = spec.parse().unwrap();
            let KeyDistribution::Exponential { min, max, mean } = d else {
                panic!("{spec}")
            };
            let q = (-1.0 / mean).exp();
            let delta = max - min;
            let probabilities: Vec<f64> = (0..=delta)
                .map(|j| {
                    if j == delta {
                        q.powf(delta as f64)
                    } else {
                        (1.0 - q) * q.powf(j as f64)
                    }
                })
                .collect();
            let cumulative = cumulative_hottest_first(probabilities);
            let keys = cumulative.len();
            let curve = d.hot_mass_curve();
            assert_valid_curve(spec, &curve);
            let mut worst = 0.0f64;
            for i in 1..=keys.min(5_000) {
                let count = (i * keys).div_ceil(keys.min(5_000));
                let model = curve_mass(&curve, count as f64 / keys as f64);
                worst = worst.max((cumulative[count - 1] - model).abs());
            }
            println!(
                "{spec}: worst |curve - exact| {worst:.2e} ({} points)",
                curve.len()
            );
            let tolerance = if delta <= 512 { 1e-12 } else { 5e-5 };
            assert!(worst < tolerance, "{spec}: {worst}");
        }
        // exp(1..10): the clamped max takes a third, the hottest key.
        let d: KeyDistribution = "exp(1..10)".parse().unwrap();
        assert!((curve_mass(&d.hot_mass_curve(), 0.1) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn sequential_scans_hit_all_or_nothing() {
        assert_eq!(sequential_hit_rate(1_000, 999, 5), 0.0);
        assert_eq!(sequential_hit_rate(1_000, 1_000, 0), 0.0);
        assert_eq!(sequential_hit_rate(1_000, 1_000, 1), 1.0);
        let mut seq = SequentialKeys::new(1, 10);
        for _ in 0..10 {
            seq.next();
        }
        assert_eq!(sequential_hit_rate(10, 20, seq.laps()), 1.0);
    }
}
