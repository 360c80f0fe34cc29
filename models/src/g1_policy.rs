//! G1's young-generation sizing, as HotSpot's JDK 17 `G1Policy` does it:
//! what G1 learns from each young pause, and how it chooses the next
//! eden from what it learnt.
//!
//! After every young pause G1 picks the largest eden whose pause it
//! predicts to meet the pause goal (`MaxGCPauseMillis`). Its predictions
//! are pessimistic by construction, and that pessimism, not the pause it
//! will take, is what sizes eden. The real node's logs
//! (`validation/real/`, `gc+ergo+cset=trace`) show G1's prediction running
//! from 0.8 to 6 times the pause it then took, depending on the load: a
//! constant factor cannot stand for it. So this module is the predictor
//! itself:
//!
//! - **Sequences** ([`Seq`], HotSpot's `TruncatedSeq(10)` over `AbsSeq`):
//!   a decaying average and variance, a new sample weighing 0.3. A
//!   prediction is the average plus half a deviation estimate
//!   (`G1ConfidencePercent=50`), and with fewer than five samples the
//!   estimate is at least `average * (5 - n) / 2`: one sample predicts
//!   twice itself.
//! - **What G1 learns** ([`G1Analytics`]): the copy cost per byte (the
//!   pause's object copy over the bytes it copied), the constant other
//!   time, the other time per young region, the card scan cost per card
//!   and the cards to scan (the young regions' remembered sets), each
//!   seeded with HotSpot's defaults for the number of GC threads
//!   (`g1Analytics.cpp`).
//! - **Survival by age** ([`SurvRateGroup`], `G1SurvRateGroup`): one
//!   sequence per eden region by its age at the pause (index 0 the region
//!   allocated last); after a pause the indices the pause did not reach are
//!   filled with its oldest region's rate; the eden of `n` regions is
//!   costed as the sum of `n + 1` predictions, as JDK 17 does. An index
//!   never seen before has one sample, so it is predicted at twice its
//!   rate: an eden larger than any before is costed dearly. Survivor
//!   regions have their own group, seeded at `InitialSurvivorRate` (0.4).
//! - **The search** ([`G1Policy::young_target`],
//!   `calculate_young_list_target_length`): the largest eden whose
//!   predicted pause (base time plus eden time) meets the goal and whose
//!   predicted copy fits the free regions 2.2 times over, between
//!   `G1NewSizePercent` and `G1MaxNewSizePercent` of the heap, less the
//!   survivors and no more than the free regions less `G1ReservePercent`;
//!   when even the smallest eden misses the goal, the smallest.
//! - **Revision in the mutator phase** ([`G1Policy::revise`],
//!   `revise_young_list_target_length_if_necessary`): every 300 ms G1
//!   samples the cards in the young regions' remembered sets; when they
//!   exceed its prediction it predicts 10 % more than the sample and sizes
//!   eden again, never below the eden already in use. This is what ends a
//!   write load's eden early on the real node (L1: eden targets of 45
//!   regions collected at 25).
//!
//! Source: the JDK 17 sources (`gc/g1/g1Policy.cpp`, `g1Analytics.cpp`,
//! `g1Predictions.hpp`, `g1SurvRateGroup.cpp`, `utilities/numberSeq.cpp`)
//! as Debian's `openjdk-17` 17.0.19 ships them; the node runs 17.0.15,
//! whose flags' defaults are the same.
//!
//! Left out: the merge of pending cards (the node merges ~16K pending
//! cards in ~1 ms a pause; its cost sits in the constant other time here),
//! the card merge-to-scan ratio (taken as 1), the remembered sets' length
//! difference, the MMU tracker's minimum (0 or 1 region with the defaults),
//! preventive collections, the GC locker's expansion, copy costs learnt
//! apart during concurrent marking, and the mixed phase's pinned eden (the
//! twin's mixed collection is one pause).

/// HotSpot's `TruncatedSeq(10)`: a decaying average and variance of the
/// samples (`AbsSeq`, alpha 0.3: a new sample weighs 0.3), and how many
/// samples it has, up to ten.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seq {
    average: f64,
    variance: f64,
    samples: u32,
}

impl Seq {
    /// The weight of a new sample (`DEFAULT_ALPHA_VALUE`).
    const ALPHA: f64 = 0.3;
    /// The samples counted (`TruncatedSeqLength`).
    pub const LENGTH: u32 = 10;
    /// The confidence: `G1ConfidencePercent` / 100.
    const SIGMA: f64 = 0.5;

    /// A sequence with no sample: it predicts zero.
    pub const EMPTY: Seq = Seq {
        average: 0.0,
        variance: 0.0,
        samples: 0,
    };

    /// A sequence seeded with one sample, as G1 seeds its analytics.
    pub fn seeded(value: f64) -> Seq {
        let mut seq = Seq::EMPTY;
        seq.add(value);
        seq
    }

    /// A sequence as learnt: its average, variance and samples (at most
    /// [`Seq::LENGTH`]).
    pub fn learnt(average: f64, variance: f64, samples: u32) -> Seq {
        Seq {
            average,
            variance,
            samples: samples.min(Self::LENGTH),
        }
    }

    /// Adds a sample (`AbsSeq::add`): the first is the average.
    pub fn add(&mut self, value: f64) {
        debug_assert!(value.is_finite(), "a sample is a number: {value}");
        if self.samples == 0 {
            self.average = value;
            self.variance = 0.0;
        } else {
            let diff = value - self.average;
            let increment = Self::ALPHA * diff;
            self.average += increment;
            self.variance = (1.0 - Self::ALPHA) * (self.variance + diff * increment);
        }
        self.samples = (self.samples + 1).min(Self::LENGTH);
    }

    /// The decaying average.
    pub fn average(&self) -> f64 {
        self.average
    }

    /// The decaying variance as kept (`_dvariance`).
    pub fn variance(&self) -> f64 {
        self.variance
    }

    /// The decaying deviation (`dsd`): zero with one sample or none.
    pub fn deviation(&self) -> f64 {
        if self.samples <= 1 {
            0.0
        } else {
            self.variance.max(0.0).sqrt()
        }
    }

    /// Samples counted, at most [`Seq::LENGTH`].
    pub fn samples(&self) -> u32 {
        self.samples
    }

    /// G1's prediction (`G1Predictions::predict`): the average plus half
    /// the deviation estimate, which with fewer than five samples is at
    /// least `average * (5 - n) / 2`.
    pub fn predict(&self) -> f64 {
        let mut estimate = self.deviation();
        if self.samples < 5 {
            estimate = estimate.max(self.average * f64::from(5 - self.samples) / 2.0);
        }
        self.average + Self::SIGMA * estimate
    }

    /// The prediction, at least zero (`predict_zero_bounded`).
    pub fn predict_zero_bounded(&self) -> f64 {
        self.predict().max(0.0)
    }

    /// The prediction within `[0, 1]` (`predict_in_unit_interval`).
    pub fn predict_in_unit_interval(&self) -> f64 {
        self.predict().clamp(0.0, 1.0)
    }

    fn is_sound(&self) -> bool {
        self.average.is_finite()
            && self.variance.is_finite()
            && self.variance >= 0.0
            && self.samples <= Self::LENGTH
    }
}

/// The survival G1 predicts for regions by their age at a pause
/// (`G1SurvRateGroup`): index 0 is the region allocated last. The group
/// has as many indices as the largest number of regions it has seen.
#[derive(Clone, Debug, PartialEq)]
pub struct SurvRateGroup {
    predictors: Vec<Seq>,
    /// `accum[i]`: the predictions of indices 0 to `i`, summed.
    accum: Vec<f64>,
}

/// The survival G1 predicts before it has measured one
/// (`InitialSurvivorRate`).
pub const INITIAL_SURVIVOR_RATE: f64 = 0.4;

impl SurvRateGroup {
    /// A new group (`G1SurvRateGroup::reset`): one index with the sample
    /// 0.4, whose sum is taken raw (0.4) until the first pause finalizes
    /// the predictions.
    pub fn new() -> SurvRateGroup {
        SurvRateGroup {
            predictors: vec![Seq::seeded(INITIAL_SURVIVOR_RATE)],
            accum: vec![INITIAL_SURVIVOR_RATE],
        }
    }

    /// A group as learnt, youngest index first; `None` if empty.
    pub fn learnt(predictors: Vec<Seq>) -> Option<SurvRateGroup> {
        if predictors.is_empty() {
            return None;
        }
        let mut group = SurvRateGroup {
            predictors,
            accum: Vec::new(),
        };
        group.finalize();
        Some(group)
    }

    /// The sequences, youngest index first.
    pub fn predictors(&self) -> &[Seq] {
        &self.predictors
    }

    /// Records a pause that found `regions` regions each `rate` alive (the
    /// twin's regions of one kind survive alike), then predicts anew. With
    /// `fill_in` (young-only, not marking: always in the twin) the indices
    /// beyond the pause's regions take its oldest region's rate.
    pub fn record_uniform(&mut self, regions: usize, rate: f64) {
        if regions == 0 {
            return;
        }
        if regions > self.predictors.len() {
            self.predictors.resize(regions, Seq::EMPTY);
        }
        for predictor in &mut self.predictors {
            predictor.add(rate);
        }
        self.finalize();
    }

    /// `finalize_predictions`: each index's prediction within `[0, 1]`,
    /// summed from the youngest.
    fn finalize(&mut self) {
        self.accum.clear();
        let mut sum = 0.0;
        for predictor in &self.predictors {
            sum += predictor.predict_in_unit_interval();
            self.accum.push(sum);
        }
    }

    /// The predictions of indices 0 to `age` summed
    /// (`accum_surv_rate_pred`): beyond the last index, the last index's
    /// prediction for each.
    pub fn accum(&self, age: usize) -> f64 {
        let length = self.accum.len();
        if age < length {
            self.accum[age]
        } else {
            let last = self.accum[length - 1]
                - if length > 1 {
                    self.accum[length - 2]
                } else {
                    0.0
                };
            self.accum[length - 1] + (age - length + 1) as f64 * last
        }
    }

    /// The prediction for a region of age `age` (`surv_rate_pred`).
    pub fn predict(&self, age: usize) -> f64 {
        self.predictors[age.min(self.predictors.len() - 1)].predict_in_unit_interval()
    }

    fn is_sound(&self) -> bool {
        !self.predictors.is_empty()
            && self.accum.len() == self.predictors.len()
            && self.predictors.iter().all(Seq::is_sound)
    }
}

impl Default for SurvRateGroup {
    fn default() -> Self {
        SurvRateGroup::new()
    }
}

/// What G1 learns from each young pause (`G1Analytics`), in the twin's
/// units: nanoseconds and cards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct G1Analytics {
    /// Object copy time per byte copied, ns.
    pub copy_ns_per_byte: Seq,
    /// The pause less its evacuation (the constant other time), ns.
    pub constant_other_ns: Seq,
    /// Choosing and freeing the collection set per young region, ns.
    pub young_other_ns_per_region: Seq,
    /// Card scan time per card scanned, ns.
    pub scan_ns_per_card: Seq,
    /// Cards in the young regions' remembered sets at a pause.
    pub rs_cards: Seq,
}

impl G1Analytics {
    /// A new JVM's analytics with `gc_threads` GC threads: HotSpot's seeds
    /// (`g1Analytics.cpp`, the tables indexed by `ParallelGCThreads - 1`,
    /// at most 7), one sample each; the cards to scan have none.
    pub fn seeded(gc_threads: u32) -> G1Analytics {
        const COPY_MS_PER_BYTE: [f64; 8] = [6e-5, 3e-5, 3e-5, 1.5e-5, 1.5e-5, 1e-5, 1e-5, 9e-6];
        const YOUNG_OTHER_MS: [f64; 8] = [0.3, 0.2, 0.2, 0.15, 0.15, 0.12, 0.12, 0.1];
        const SCAN_MS_PER_CARD: [f64; 8] = [0.015, 0.01, 0.01, 0.008, 0.008, 0.0055, 0.0055, 0.005];
        const MS: f64 = 1e6;
        let index = (gc_threads.max(1) - 1).min(7) as usize;
        G1Analytics {
            copy_ns_per_byte: Seq::seeded(COPY_MS_PER_BYTE[index] * MS),
            constant_other_ns: Seq::seeded(5.0 * MS),
            young_other_ns_per_region: Seq::seeded(YOUNG_OTHER_MS[index] * MS),
            scan_ns_per_card: Seq::seeded(SCAN_MS_PER_CARD[index] * MS),
            rs_cards: Seq::EMPTY,
        }
    }

    fn sequences(&self) -> [&Seq; 5] {
        [
            &self.copy_ns_per_byte,
            &self.constant_other_ns,
            &self.young_other_ns_per_region,
            &self.scan_ns_per_card,
            &self.rs_cards,
        ]
    }
}

/// What one young pause did, as G1 measures it for its analytics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PauseRecord {
    /// Eden regions collected.
    pub eden_regions: usize,
    /// Bytes alive in eden (copied to survivors).
    pub eden_survived_bytes: u64,
    /// Survivor regions collected.
    pub survivor_regions: usize,
    /// Bytes alive in them (promoted).
    pub survivor_survived_bytes: u64,
    /// Object copy time, ns.
    pub copy_ns: f64,
    /// Bytes copied.
    pub copied_bytes: u64,
    /// Card scan time, ns.
    pub scan_ns: f64,
    /// Cards scanned.
    pub cards: f64,
    /// The pause less its object copy, card scan and per-region work, ns.
    pub constant_other_ns: f64,
    /// Choosing and freeing the collection set, ns.
    pub young_other_ns: f64,
}

/// The heap as G1 sizes the young generation in it, in regions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct YoungBounds {
    /// Region size, bytes.
    pub region_bytes: u64,
    /// Committed regions (the heap over the region size).
    pub regions: usize,
    /// `G1NewSizePercent` / 100.
    pub min_fraction: f64,
    /// `G1MaxNewSizePercent` / 100.
    pub max_fraction: f64,
    /// `G1ReservePercent` / 100.
    pub reserve_fraction: f64,
    /// `MaxGCPauseMillis`, ns.
    pub goal_ns: f64,
}

/// G1's sizing of eden: what it learnt and the cards it predicts.
#[derive(Clone, Debug, PartialEq)]
pub struct G1Policy {
    analytics: G1Analytics,
    eden: SurvRateGroup,
    survivors: SurvRateGroup,
    /// The cards G1 expects in the young regions' remembered sets at the
    /// next pause (`_rs_length_prediction`), raised by [`G1Policy::revise`].
    rs_prediction: f64,
}

/// The safety factor on the predicted copy against the free regions:
/// `(100 / G1ConfidencePercent) * (100 + TargetPLABWastePct) / 100`.
const COPY_SPACE_SAFETY: f64 = 2.0 * 1.1;

impl G1Policy {
    /// A new JVM's policy with `gc_threads` GC threads.
    pub fn new(gc_threads: u32) -> G1Policy {
        G1Policy::learnt(
            G1Analytics::seeded(gc_threads),
            SurvRateGroup::new(),
            SurvRateGroup::new(),
        )
    }

    /// A policy that has learnt these.
    pub fn learnt(analytics: G1Analytics, eden: SurvRateGroup, survivors: SurvRateGroup) -> Self {
        let rs_prediction = analytics.rs_cards.predict_zero_bounded();
        G1Policy {
            analytics,
            eden,
            survivors,
            rs_prediction,
        }
    }

    /// What it has learnt.
    pub fn analytics(&self) -> &G1Analytics {
        &self.analytics
    }

    /// Survival by age of eden regions.
    pub fn eden_group(&self) -> &SurvRateGroup {
        &self.eden
    }

    /// Survival by age of survivor regions.
    pub fn survivor_group(&self) -> &SurvRateGroup {
        &self.survivors
    }

    /// Learns from a young pause (`record_collection_pause_end` and the
    /// collection set's freeing): the survival of its regions by age, the
    /// copy cost, the other times and the cards; then resets the cards it
    /// expects to their prediction.
    pub fn record(&mut self, pause: &PauseRecord, region_bytes: u64) {
        let region = region_bytes as f64;
        if pause.eden_regions > 0 {
            let rate = pause.eden_survived_bytes as f64 / (pause.eden_regions as f64 * region);
            self.eden.record_uniform(pause.eden_regions, rate.min(1.0));
        }
        if pause.survivor_regions > 0 {
            let rate =
                pause.survivor_survived_bytes as f64 / (pause.survivor_regions as f64 * region);
            self.survivors
                .record_uniform(pause.survivor_regions, rate.min(1.0));
        }
        let a = &mut self.analytics;
        if pause.copied_bytes > 0 {
            a.copy_ns_per_byte
                .add(pause.copy_ns / pause.copied_bytes as f64);
        }
        // G1 samples the card scan cost only over more than ten cards.
        if pause.cards > 10.0 {
            a.scan_ns_per_card.add(pause.scan_ns / pause.cards);
        }
        let young = pause.eden_regions + pause.survivor_regions;
        if young > 0 {
            a.young_other_ns_per_region
                .add(pause.young_other_ns / young as f64);
        }
        a.constant_other_ns.add(pause.constant_other_ns.max(0.0));
        a.rs_cards.add(pause.cards);
        self.rs_prediction = a.rs_cards.predict_zero_bounded();
    }

    /// Raises the cards expected at the next pause to `sampled` plus 10 %
    /// when `sampled` exceeds them (`revise_young_list_target_length_if_
    /// necessary`); whether it did, so the caller sizes eden again.
    pub fn revise(&mut self, sampled: f64) -> bool {
        if sampled > self.rs_prediction {
            self.rs_prediction = sampled * 1.1;
            true
        } else {
            false
        }
    }

    /// The predicted pause time of everything but eden
    /// (`predict_base_elapsed_time_ms`): the cards' scan, the constant
    /// other time, and the survivor regions' evacuation (`survivor_used`
    /// bytes over `survivor_regions`, the youngest added last).
    fn base_ns(&self, survivor_regions: usize, survivor_used: u64) -> f64 {
        let a = &self.analytics;
        let cards = self.rs_prediction * a.scan_ns_per_card.predict_zero_bounded();
        let copy = a.copy_ns_per_byte.predict_zero_bounded();
        let region_other = a.young_other_ns_per_region.predict_zero_bounded();
        let used = if survivor_regions > 0 {
            survivor_used as f64 / survivor_regions as f64
        } else {
            0.0
        };
        let survivors: f64 = (0..survivor_regions)
            .map(|age| region_other + used * self.survivors.predict(age) * copy)
            .sum();
        cards + a.constant_other_ns.predict_zero_bounded() + survivors
    }

    /// The eden regions for the mutator phase after a pause or a revision
    /// (`young_list_target_lengths`): the largest eden meeting the goal
    /// ([`G1Policy`]'s module doc), with `survivor_regions` survivors of
    /// `survivor_used` bytes, `eden_in_use` regions of eden already taken
    /// (0 after a pause) and `free_regions` free at the end of the last
    /// pause. At least one region.
    pub fn young_target(
        &self,
        bounds: &YoungBounds,
        survivor_regions: usize,
        survivor_used: u64,
        eden_in_use: usize,
        free_regions: usize,
    ) -> usize {
        let regions = bounds.regions as f64;
        let min_young = ((regions * bounds.min_fraction).floor() as usize).max(1);
        let max_young = ((regions * bounds.max_fraction).floor() as usize).max(1);
        let reserve = (regions * bounds.reserve_fraction).ceil() as usize;
        let s = survivor_regions;
        let desired_min = min_young.max(s + eden_in_use.max(1));
        let base_free = free_regions.saturating_sub(reserve);
        let unbounded = if max_young <= desired_min {
            desired_min
        } else {
            let base = self.base_ns(survivor_regions, survivor_used);
            let copy = self.analytics.copy_ns_per_byte.predict_zero_bounded();
            let region_other = self
                .analytics
                .young_other_ns_per_region
                .predict_zero_bounded();
            let region = bounds.region_bytes as f64;
            let will_fit = |n: usize| -> bool {
                if n >= base_free {
                    return false;
                }
                let bytes = (self.eden.accum(n) * region).floor();
                if base + bytes * copy + n as f64 * region_other > bounds.goal_ns {
                    return false;
                }
                (COPY_SPACE_SAFETY * bytes).floor() <= ((base_free - n) as f64) * region
            };
            let (mut low, mut high) = (desired_min - s, max_young.saturating_sub(s));
            let eden = if !will_fit(low) {
                low
            } else if will_fit(high) {
                high
            } else {
                let mut diff = (high - low) / 2;
                while diff > 0 {
                    let middle = low + diff;
                    if will_fit(middle) {
                        low = middle;
                    } else {
                        high = middle;
                    }
                    diff = (high - low) / 2;
                }
                low
            };
            s + eden
        };
        let desired_max = max_young.min(base_free);
        let target = unbounded.min(desired_max).max(desired_min);
        (target - s).max(1)
    }

    /// Whether the predictions are numbers and the groups whole.
    pub fn is_sound(&self) -> bool {
        self.analytics.sequences().iter().all(|seq| seq.is_sound())
            && self.eden.is_sound()
            && self.survivors.is_sound()
            && self.rs_prediction.is_finite()
            && self.rs_prediction >= 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequence is HotSpot's: the first sample is the average, then
    /// each weighs 0.3, the variance decays by 0.7, and at most ten are
    /// counted.
    #[test]
    fn a_sequence_decays_as_hotspots_does() {
        let mut seq = Seq::EMPTY;
        assert_eq!(seq.predict(), 0.0);
        seq.add(10.0);
        assert_eq!(
            (seq.average(), seq.deviation(), seq.samples()),
            (10.0, 0.0, 1)
        );
        seq.add(20.0);
        // davg = 10 + 0.3 * 10; dvar = 0.7 * (0 + 10 * 3).
        assert!((seq.average() - 13.0).abs() < 1e-12);
        assert!((seq.deviation() - 21f64.sqrt()).abs() < 1e-12);
        for _ in 0..20 {
            seq.add(13.0);
        }
        assert_eq!(seq.samples(), Seq::LENGTH);
    }

    /// One sample predicts twice itself; two, at least 1.75 times; from
    /// five the deviation alone sets the margin.
    #[test]
    fn few_samples_predict_pessimistically() {
        let mut seq = Seq::seeded(4.0);
        assert_eq!(seq.predict(), 8.0);
        seq.add(4.0);
        assert_eq!(seq.predict(), 7.0);
        seq.add(4.0);
        assert_eq!(seq.predict(), 6.0);
        seq.add(4.0);
        assert_eq!(seq.predict(), 5.0);
        seq.add(4.0);
        assert_eq!(seq.predict(), 4.0);
        let learnt = Seq::learnt(2.0, 0.16, 10);
        assert!((learnt.predict() - 2.2).abs() < 1e-12);
    }

    /// A new group sums 0.4 per region raw; after a pause each index it
    /// has seen twice is predicted at 1.75 times the blend of 0.4 and the
    /// rate, and indices new to it at twice the rate; the sum of an eden
    /// of n regions has n + 1 terms.
    #[test]
    fn survival_by_age_is_summed_over_one_region_more_than_eden() {
        let mut group = SurvRateGroup::new();
        assert!((group.accum(9) - 4.0).abs() < 1e-12);
        group.record_uniform(3, 0.1);
        // Index 0: samples 0.4 then 0.1: davg 0.31, dvar 0.7 * 0.3 * 0.09.
        let p0 = (0.31 + 0.5 * (0.31f64 * 1.5).max((0.7 * 0.3 * 0.09f64).sqrt())).min(1.0);
        assert!((group.predict(0) - p0).abs() < 1e-12);
        assert!((group.predict(1) - 0.2).abs() < 1e-12);
        assert!((group.predict(2) - 0.2).abs() < 1e-12);
        assert!((group.accum(2) - (p0 + 0.4)).abs() < 1e-12);
        // Beyond the last index: the last prediction per region.
        assert!((group.accum(5) - (p0 + 0.4 + 3.0 * 0.2)).abs() < 1e-12);
        // A smaller pause fills the indices it did not reach.
        group.record_uniform(1, 0.1);
        assert_eq!(group.predictors()[2].samples(), 2);
    }

    fn bounds() -> YoungBounds {
        YoungBounds {
            region_bytes: 16 << 20,
            regions: 384,
            min_fraction: 0.05,
            max_fraction: 0.60,
            reserve_fraction: 0.10,
            goal_ns: 300e6,
        }
    }

    fn pause(eden: usize, survival: f64, copy_ns_per_byte: f64, cards: f64) -> PauseRecord {
        let region = 16u64 << 20;
        let survived = (eden as f64 * region as f64 * survival) as u64;
        PauseRecord {
            eden_regions: eden,
            eden_survived_bytes: survived,
            survivor_regions: 0,
            survivor_survived_bytes: 0,
            copy_ns: survived as f64 * copy_ns_per_byte,
            copied_bytes: survived,
            scan_ns: cards * 900.0,
            cards,
            constant_other_ns: 7e6,
            young_other_ns: 0.02e6 * eden as f64,
        }
    }

    /// A new JVM starts at the smallest young generation (its seeds
    /// predict a dear copy); as pauses that copy little teach it, eden
    /// grows by steps, up to the largest; a load that leaves much alive
    /// keeps it small; the pause it then predicts for the eden it chose
    /// meets the goal unless the smallest eden cannot.
    #[test]
    fn eden_starts_small_and_follows_what_survives() {
        let b = bounds();
        let mut policy = G1Policy::new(1);
        let smallest = 19;
        assert_eq!(policy.young_target(&b, 0, 0, 0, 384), smallest);
        let mut eden = smallest;
        let mut sizes = vec![eden];
        for _ in 0..30 {
            policy.record(&pause(eden, 0.005, 2.0, 20_000.0), b.region_bytes);
            eden = policy.young_target(&b, 1, 4 << 20, 0, 300);
            sizes.push(eden);
        }
        assert!(
            sizes.windows(2).filter(|w| w[1] > w[0]).count() >= 3,
            "{sizes:?}"
        );
        assert!(eden > 100, "{sizes:?}");
        // Writes: a fifth of eden alive at 2 ns a byte.
        let mut writes = G1Policy::new(1);
        let mut eden = smallest;
        for _ in 0..30 {
            writes.record(&pause(eden, 0.2, 2.0, 80_000.0), b.region_bytes);
            eden = writes.young_target(&b, 3, 48 << 20, 0, 300);
        }
        assert!(eden < 40, "{eden}");
    }

    /// A revision raises the cards expected only when the sample exceeds
    /// them, and the eden it then sizes is never below what is in use.
    #[test]
    fn a_revision_shrinks_eden_no_lower_than_in_use() {
        let b = bounds();
        let mut policy = G1Policy::new(1);
        for _ in 0..40 {
            policy.record(&pause(40, 0.05, 2.0, 50_000.0), b.region_bytes);
        }
        let before = policy.young_target(&b, 2, 32 << 20, 0, 300);
        assert!(before > 30, "{before}");
        assert!(!policy.revise(10_000.0), "fewer cards than predicted");
        assert!(policy.revise(200_000.0));
        let after = policy.young_target(&b, 2, 32 << 20, 0, 300);
        assert!(after < before, "{after} against {before}");
        assert_eq!(policy.young_target(&b, 2, 32 << 20, before, 300), before);
        assert!(policy.is_sound());
    }
}
