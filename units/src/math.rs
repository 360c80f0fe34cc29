//! Small pieces of arithmetic that `engine`, `models` and `sim` all use and
//! that must give the same bits wherever they run: one copy each.

/// SplitMix64's increment (the golden ratio as a 64-bit fraction, Steele,
/// Lea and Flood 2014), added before [`mix64`] to turn a counter or seed
/// into a stream.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser: a bijection on 64-bit values whose every output
/// bit depends on every input bit (variant 13 of Stafford's mixers, as
/// `java.util.SplittableRandom` uses). The twin's fixed hashes (a key's
/// place in an SSTable, a row's digest, a stress key's value, a stream's
/// seed) are this mix of some value.
#[inline]
pub fn mix64(mut value: u64) -> u64 {
    value = (value ^ (value >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    value ^ (value >> 31)
}

/// The upper concave hull of a curve on the unit square from `(0, 0)` to
/// `(1, 1)`, given its inner points sorted by `x`: each point is clamped
/// into the square and to be no lower nor further left than the one before
/// (a NaN coordinate takes the previous point's), the end `(1, 1)` is
/// added, and points that floating-point noise pushed a hair below the
/// chord of their neighbours are dropped. What is left is concave and
/// monotone and ends exactly at `(1, 1)`, as the popularity curves of the
/// caches require.
pub fn concave_hull(points: impl IntoIterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut hull: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    let mut previous = (0.0f64, 0.0f64);
    let clamped = points
        .into_iter()
        .chain(std::iter::once((1.0, 1.0)))
        .map(|(x, y)| {
            let x = if x.is_nan() {
                previous.0
            } else {
                x.clamp(previous.0, 1.0)
            };
            let y = if y.is_nan() {
                previous.1
            } else {
                y.clamp(previous.1, 1.0)
            };
            previous = (x, y);
            (x, y)
        });
    for point in clamped {
        if point == hull[hull.len() - 1] {
            continue;
        }
        while hull.len() >= 2 {
            let (o, a) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            // Keep `a` only if o -> a -> point turns clockwise.
            let turn = (a.0 - o.0) * (point.1 - o.1) - (a.1 - o.1) * (point.0 - o.0);
            if turn < 0.0 {
                break;
            }
            hull.pop();
        }
        hull.push(point);
    }
    let end = hull.len() - 1;
    hull[end] = (1.0, 1.0);
    debug_assert!(hull
        .windows(2)
        .all(|pair| pair[0].0 <= pair[1].0 && pair[0].1 <= pair[1].1));
    hull
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix64_is_splitmix64s_finaliser() {
        // SplitMix64 seeded with 0: its first output is mix64(0 + gamma)
        // (Vigna's reference splitmix64.c).
        assert_eq!(mix64(GOLDEN_GAMMA), 0xE220_A839_7B1D_CDAF);
        assert_eq!(mix64(0), 0);
        assert_ne!(mix64(1), mix64(2));
    }

    #[test]
    fn the_hull_drops_points_below_a_chord_and_clamps_noise() {
        let hull = concave_hull([(0.2, 0.5), (0.4, 0.6), (0.5, 0.9), (0.7, 0.95)]);
        // (0.4, 0.6) lies below the chord from (0.2, 0.5) to (0.5, 0.9).
        assert_eq!(
            hull,
            [(0.0, 0.0), (0.2, 0.5), (0.5, 0.9), (0.7, 0.95), (1.0, 1.0)]
        );
        let noisy = concave_hull([(0.5, f64::NAN), (1.0000001, 1.2), (-0.1, 0.3)]);
        assert_eq!(noisy, [(0.0, 0.0), (1.0, 1.0)]);
        let noisy = concave_hull([(0.5, 0.8), (0.4, 0.7)]);
        assert_eq!(noisy, [(0.0, 0.0), (0.5, 0.8), (1.0, 1.0)]);
    }
}
