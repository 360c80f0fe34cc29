//! Ring positions, and sets of them: where on the ring an SSTable's
//! partitions lie.
//!
//! SSTable token ranges (`SSTable::token_range`, leveled compaction's
//! levels, a compaction's output cuts) and the ring (`crate::ring`) use one
//! token function, Murmur3 of the partition key. The SSTable side keeps the
//! token as a *position*: the token biased to unsigned (the minimum token
//! first, as Scylla's sharder and decorated-key comparisons order them) and
//! reduced to its top 53 bits, so that widths and fractions of the ring are
//! exact in an `f64` (`KEY_SHARE_ONE` = 2^53 positions). The map is
//! monotone: ring order is position order. A ring range `(start, end]`
//! becomes the positions `[position(start), position(end))`; a key whose
//! token lies within 2^11 tokens of a boundary may land on the neighbour's
//! side (one key in 2^53 per boundary).
//!
//! A [`TokenSet`] is a union of such slices: what a streamed SSTable holds
//! (its plan's ranges, a few dozen slices out of a 256-vnode ring), and
//! what a compaction of such SSTables holds. Every SSTable written from a
//! memtable of the shard's own writes holds keys from the whole ring the
//! shard owns and has no set; an SSTable with one holds no key outside it,
//! so a read skips it without its bloom filter, its density counts only the
//! keys of its slices, and a compaction merging two SSTables of disjoint
//! sets dedupes nothing.

use std::sync::Arc;

use crate::ring::span_width;

/// The whole ring, in positions (2^53; `SSTable::key_share` units).
pub const KEY_SHARE_ONE: u64 = 1 << 53;

// A position is a 64-bit token shifted right by 11: 53 bits, the mantissa of
// an `f64`, so widths and fractions of the ring are exact.
const _: () = assert!(KEY_SHARE_ONE == 1 << (64 - 11));
const _: () = assert!(KEY_SHARE_ONE == 1 << (f64::MANTISSA_DIGITS as u64));

/// The position of ring token `token`, in `KEY_SHARE_ONE` units (see the
/// module doc).
#[inline]
pub fn position_of(token: i64) -> u64 {
    ((token as u64) ^ (1 << 63)) >> 11
}

/// Sorted, disjoint, non-adjacent half-open slices `[start, end)` of
/// positions, with the width before each for O(log n) measures. Cloning
/// is an `Arc` clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenSet {
    /// `(start, end, width of the slices before this one)`.
    slices: Arc<[(u64, u64, u64)]>,
}

impl TokenSet {
    /// The set of `slices` (any order; overlapping or touching ones are
    /// joined, empty ones dropped).
    pub fn from_slices(mut slices: Vec<(u64, u64)>) -> TokenSet {
        slices.retain(|&(start, end)| start < end);
        slices.sort_unstable();
        let mut joined: Vec<(u64, u64, u64)> = Vec::with_capacity(slices.len());
        let mut before = 0;
        for (start, end) in slices {
            assert!(end <= KEY_SHARE_ONE, "position {end} is past the ring");
            match joined.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => {
                    if let Some(last) = joined.last() {
                        before += last.1 - last.0;
                    }
                    joined.push((start, end, before));
                }
            }
        }
        let set = TokenSet {
            slices: joined.into(),
        };
        if cfg!(debug_assertions) {
            set.check_invariants();
        }
        set
    }

    /// What a set holds: slices non-empty, sorted, disjoint and not
    /// touching (touching ones are joined), inside the ring, each with the
    /// width of the slices before it. O(slices).
    pub fn check_invariants(&self) {
        let mut before = 0;
        for (index, &(start, end, width_before)) in self.slices.iter().enumerate() {
            assert!(start < end, "a slice is not empty");
            assert!(end <= KEY_SHARE_ONE, "a slice lies inside the ring");
            assert_eq!(width_before, before, "each slice knows the width before it");
            if index > 0 {
                assert!(
                    self.slices[index - 1].1 < start,
                    "slices are sorted and neither overlap nor touch"
                );
            }
            before += end - start;
        }
    }

    /// The positions of the ring ranges `ranges` (`(start, end]` each; a
    /// range may wrap past the largest token; `(t, t]` is the whole ring).
    pub fn of_ring_ranges(ranges: &[(i64, i64)]) -> TokenSet {
        let mut slices = Vec::with_capacity(ranges.len() + 1);
        for &(start, end) in ranges {
            let (low, high) = (position_of(start), position_of(end));
            if span_width(start, end) == 1u128 << 64 {
                slices.push((0, KEY_SHARE_ONE));
            } else if low < high {
                slices.push((low, high));
            } else {
                slices.push((low, KEY_SHARE_ONE));
                slices.push((0, high));
            }
        }
        let set = TokenSet::from_slices(slices);
        debug_assert_eq!(
            set.is_empty(),
            ranges.is_empty(),
            "every ring range holds positions"
        );
        set
    }

    /// The slices, in ring order.
    pub fn slices(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.slices.iter().map(|&(start, end, _)| (start, end))
    }

    /// Positions in the set.
    pub fn width(&self) -> u64 {
        let width = self
            .slices
            .last()
            .map_or(0, |&(start, end, before)| before + end - start);
        debug_assert!(width <= KEY_SHARE_ONE, "a set is no wider than the ring");
        width
    }

    /// True if no position is in the set.
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty()
    }

    /// From the first slice's start to the last one's end.
    pub fn span(&self) -> Option<(u64, u64)> {
        let span = Some((self.slices.first()?.0, self.slices.last()?.1));
        debug_assert!(span.is_none_or(|(start, end)| start < end && end <= KEY_SHARE_ONE));
        span
    }

    /// True if `position` is in the set.
    #[inline]
    pub fn contains(&self, position: u64) -> bool {
        debug_assert!(
            position < KEY_SHARE_ONE,
            "position {position} is past the ring"
        );
        let index = self.slices.partition_point(|slice| slice.1 <= position);
        self.slices
            .get(index)
            .is_some_and(|slice| slice.0 <= position)
    }

    /// Positions of the set below `position`.
    fn width_below(&self, position: u64) -> u64 {
        let index = self.slices.partition_point(|slice| slice.1 <= position);
        let below = match self.slices.get(index) {
            Some(&(start, _, before)) => before + position.saturating_sub(start),
            None => self.width(),
        };
        debug_assert!(
            below <= position,
            "no more positions below a point than the point"
        );
        below
    }

    /// Positions of the set in `[low, high)`.
    pub fn width_within(&self, low: u64, high: u64) -> u64 {
        if low >= high {
            return 0;
        }
        let width = self.width_below(high) - self.width_below(low);
        debug_assert!(
            width <= high - low,
            "no more positions in a slice than its width"
        );
        width
    }

    /// Positions in both sets.
    pub fn overlap_width(&self, other: &TokenSet) -> u64 {
        let (mut i, mut j, mut width) = (0, 0, 0);
        while i < self.slices.len() && j < other.slices.len() {
            let (a, b) = (self.slices[i], other.slices[j]);
            width += a.1.min(b.1).saturating_sub(a.0.max(b.0));
            if a.1 <= b.1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        debug_assert!(
            width <= self.width().min(other.width()),
            "an overlap is no wider than either set"
        );
        width
    }

    /// Every position of either set.
    pub fn union(&self, other: &TokenSet) -> TokenSet {
        let union = TokenSet::from_slices(self.slices().chain(other.slices()).collect());
        debug_assert_eq!(
            union.width(),
            self.width() + other.width() - self.overlap_width(other),
            "a union counts the overlap once"
        );
        union
    }

    /// The set's positions in `[low, high)`.
    pub fn within(&self, low: u64, high: u64) -> TokenSet {
        let part = TokenSet::from_slices(
            self.slices()
                .map(|(start, end)| (start.max(low), end.min(high)))
                .collect(),
        );
        debug_assert_eq!(
            part.width(),
            self.width_within(low, high),
            "the part within [low, high) is as wide as the set there"
        );
        part
    }

    /// The part of the set from `from` to `to` (fractions of its width, in
    /// ring order): what a sender that goes through the set in ring order
    /// has sent between those two points.
    pub fn portion(&self, from: f64, to: f64) -> TokenSet {
        debug_assert!(
            (0.0..=1.0).contains(&from) && from <= to,
            "a portion runs forward from inside the set: {from}..{to}"
        );
        let width = self.width() as f64;
        let (low, high) = ((from * width) as u64, (to.min(1.0) * width) as u64);
        let position_at = |target: u64| -> u64 {
            let index = self
                .slices
                .partition_point(|&(start, end, before)| before + (end - start) <= target);
            match self.slices.get(index) {
                Some(&(start, _, before)) => start + (target - before),
                None => self.span().map_or(0, |(_, end)| end),
            }
        };
        let portion = self.within(position_at(low), position_at(high));
        debug_assert!(
            portion.width() <= self.width(),
            "a portion is part of its set"
        );
        portion
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_keep_ring_order_from_the_minimum_token() {
        assert_eq!(position_of(i64::MIN), 0);
        assert_eq!(position_of(0), KEY_SHARE_ONE / 2);
        assert_eq!(position_of(i64::MAX), KEY_SHARE_ONE - 1);
        let tokens = [i64::MIN, -5_000_000, -1, 0, 1 << 20, i64::MAX];
        assert!(tokens
            .windows(2)
            .all(|w| position_of(w[0]) <= position_of(w[1])));
    }

    #[test]
    fn a_wrapping_ring_range_is_two_slices_and_the_whole_ring_one() {
        let set = TokenSet::of_ring_ranges(&[(i64::MAX - (1 << 40), i64::MIN + (1 << 40))]);
        assert_eq!(set.slices().count(), 2);
        // 2^40 tokens each side of the wrap, to within a position.
        assert!(set.width().abs_diff(2 * ((1 << 40) >> 11)) <= 1);
        assert!(set.contains(0) && set.contains(KEY_SHARE_ONE - 1));
        assert!(!set.contains(KEY_SHARE_ONE / 2));
        let whole = TokenSet::of_ring_ranges(&[(7, 7)]);
        assert_eq!(whole.width(), KEY_SHARE_ONE);
    }

    #[test]
    fn measures_join_and_cut() {
        let a = TokenSet::from_slices(vec![(30, 40), (0, 10), (10, 20)]);
        assert_eq!(a.slices().collect::<Vec<_>>(), vec![(0, 20), (30, 40)]);
        assert_eq!(a.width(), 30);
        assert_eq!(a.width_within(5, 35), 20);
        assert_eq!(a.width_within(20, 30), 0);
        assert!(a.contains(0) && a.contains(39) && !a.contains(20) && !a.contains(40));
        let b = TokenSet::from_slices(vec![(15, 32)]);
        assert_eq!(a.overlap_width(&b), 7);
        assert_eq!(a.union(&b).slices().collect::<Vec<_>>(), vec![(0, 40)]);
        assert_eq!(
            a.within(12, 35).slices().collect::<Vec<_>>(),
            vec![(12, 20), (30, 35)]
        );
        assert_eq!(a.span(), Some((0, 40)));
    }

    #[test]
    fn portions_of_a_set_tile_it_in_ring_order() {
        let set = TokenSet::from_slices(vec![(0, 100), (200, 300), (500, 700)]);
        let cuts = [0.0, 0.1, 0.37, 0.5, 0.99, 1.0];
        let mut total = 0;
        for w in cuts.windows(2) {
            let piece = set.portion(w[0], w[1]);
            assert_eq!(piece.overlap_width(&set), piece.width(), "inside the set");
            total += piece.width();
        }
        assert_eq!(total, set.width());
        assert_eq!(
            set.portion(0.0, 0.25).slices().collect::<Vec<_>>(),
            vec![(0, 100)]
        );
        assert_eq!(
            set.portion(0.5, 1.0).slices().collect::<Vec<_>>(),
            vec![(500, 700)]
        );
    }
}
