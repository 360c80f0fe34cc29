//! Backlog controllers: the shares Scylla gives compaction and memtable
//! flushing, as a function of how far behind they are.
//!
//! What is modelled (scylla-mechanisms.md sections 1.1-1.3, 1.5 and 1.6;
//! read from `backlog_controller.hh` and `database.cc` @2.2.0/@2.3.0/@3.0.0
//! and `sstables/compaction_manager.cc` @2.3.0/@3.0.0):
//! - a [`ControllerCurve`]: control points `(input, output)`; the shares for
//!   a normalised backlog `b` are the last output if `b >= last input`, else
//!   the linear interpolation on the first segment whose upper input is
//!   `>= b` ([`ControllerCurve::shares_for`], `backlog_controller::adjust`),
//!   and [`ControllerCurve::backlog_of_shares`] is the inverse
//!   (`backlog_controller::backlog_of_shares`, from 2.3);
//! - the curves of each version ([`compaction_curve_2_2_rc1`],
//!   [`compaction_curve_2_2`], [`compaction_curve_3_0`], [`flush_curve_2_2`],
//!   [`flush_curve_2_3`]) and the tick of each controller
//!   ([`COMPACTION_TICK`], [`FLUSH_TICK_2_2`], [`FLUSH_TICK_2_3`]). The
//!   2.2/2.3 constructor prepends the point `(0, 0)` to the points the
//!   subclasses list; the curves here include it;
//! - the inputs: compaction `b = sum of tables' backlog bytes / M`, with an
//!   infinite backlog (a strategy with no tracker) mapped to the
//!   normalisation factor 30 ([`compaction_input`]); flush
//!   `b = virtual dirty / throttle threshold` (0.225 M, see
//!   [`crate::config::ShardConfig::throttle_fraction`]) ([`flush_input`]);
//! - the backlog a user-initiated (major) compaction adds while it runs,
//!   `backlog_of_shares(200) x M` ([`major_compaction_backlog_bytes`],
//!   `user_initiated_backlog_tracker`, from 2.3), and 3.0's floor on the
//!   flush input when an extra flush was requested
//!   ([`with_extraneous_flush_floor`]);
//! - static shares (`compaction_static_shares`,
//!   `memtable_flush_static_shares` > 0: the controller is disabled,
//!   [`BacklogController::Static`]);
//! - the static I/O class shares of 2.1 and of 2.2-3.0
//!   ([`IO_SHARES_2_1`], [`IO_SHARES_2_2`], `service/priority_manager.hh`).
//!
//! Users can build their own curves ([`ControllerCurve::new`]), as a
//! scenario's `[controller] compaction.points = [[0, 50], [1.5, 100], [30, 1000]]`
//! does; they are validated (at least two points, finite values, inputs
//! strictly increasing, outputs non-negative).
//!
//! Differences from the C++, all outside what the built-in curves reach
//! with a non-negative backlog: Scylla computes in `float`, here in `f64`;
//! a backlog below the first point extrapolates the first segment, as in
//! Scylla, but the shares are clamped at 0 (Seastar's own floor of 1 share is
//! the CPU model's business); a NaN backlog gives the last output, as an
//! infinite one does. Left out: the timers themselves (the driver calls
//! `shares_for` every tick), the skipped I/O-class update when the previous
//! one is still in flight, 2.1's flush CPU quota controller (off by default,
//! section 1.5), and HEAD's `compaction_max_shares`.

use std::fmt;

use units::SimDuration;

/// Compaction controller tick (`compaction_manager` / `database.cc`: 250 ms
/// in every version from 2.2).
pub const COMPACTION_TICK: SimDuration = SimDuration::from_millis(250);
/// Flush controller tick in 2.2 (`make_flush_controller`, 250 ms).
pub const FLUSH_TICK_2_2: SimDuration = SimDuration::from_millis(250);
/// Flush controller tick from 2.3 on (`make_flush_controller`, 50 ms).
pub const FLUSH_TICK_2_3: SimDuration = SimDuration::from_millis(50);

/// `compaction_controller::normalization_factor`: the input of the last
/// compaction control point, and the input used for an infinite backlog.
pub const NORMALIZATION_FACTOR: f64 = 30.0;
/// `flush_controller::hard_dirty_limit`: the last flush control point.
pub const HARD_DIRTY_LIMIT: f64 = 1.0;
/// `virtual_dirty_soft_limit` default (`db/config.hh`): the flush curve's
/// first bend.
pub const DEFAULT_VIRTUAL_DIRTY_SOFT_LIMIT: f64 = 0.6;
/// Shares a user-initiated compaction is guaranteed at least
/// (`backlog_of_shares(200)` in `submit_major_compaction`).
pub const MAJOR_COMPACTION_SHARES: f64 = 200.0;
/// Shares a requested extra flush is guaranteed at least in 3.0
/// (`backlog_of_shares(200)` in the memtable controller's backlog function).
pub const EXTRANEOUS_FLUSH_SHARES: f64 = 200.0;

/// Compaction points of 2.2.rc1, `(0,0)` included: the top at 10 x M.
pub const COMPACTION_POINTS_2_2_RC1: [(f64, f64); 4] =
    [(0.0, 0.0), (0.5, 10.0), (1.5, 100.0), (10.0, 1000.0)];
/// Compaction points of 2.2.0, 2.2.1 and 2.3: commit 70c47eb045 moved the
/// top to 30 x M (`normalization_factor`).
pub const COMPACTION_POINTS_2_2: [(f64, f64); 4] = [
    (0.0, 0.0),
    (0.5, 10.0),
    (1.5, 100.0),
    (NORMALIZATION_FACTOR, 1000.0),
];
/// Compaction points from 3.0: commit b0980ba7c6 (issue #3844) set a floor
/// of 50 shares so compaction always progresses.
pub const COMPACTION_POINTS_3_0: [(f64, f64); 3] =
    [(0.0, 50.0), (1.5, 100.0), (NORMALIZATION_FACTOR, 1000.0)];
/// Flush shares at the soft limit in 2.2 (10% of the top).
pub const FLUSH_SOFT_SHARES_2_2: f64 = 100.0;
/// Flush shares at the soft limit from 2.3 (1%; commit 80651e6dcc, issue
/// #3243).
pub const FLUSH_SOFT_SHARES_2_3: f64 = 10.0;
/// Flush shares halfway between the soft and the hard limit.
pub const FLUSH_MID_SHARES: f64 = 200.0;
/// Flush shares at the hard limit.
pub const FLUSH_MAX_SHARES: f64 = 1000.0;

// The curves' constants keep the order the curves need: the soft limit
// lies strictly inside (0, hard limit); flush shares rise from the soft limit
// to the mid point to the hard limit; the compaction curves end at the
// normalisation factor; the floors a major compaction and an extra flush are
// given lie inside the curves' output range; the 2.3 flush tick is shorter.
const _: () = assert!(0.0 < DEFAULT_VIRTUAL_DIRTY_SOFT_LIMIT);
const _: () = assert!(DEFAULT_VIRTUAL_DIRTY_SOFT_LIMIT < HARD_DIRTY_LIMIT);
const _: () = assert!(FLUSH_SOFT_SHARES_2_3 < FLUSH_SOFT_SHARES_2_2);
const _: () = assert!(FLUSH_SOFT_SHARES_2_2 < FLUSH_MID_SHARES);
const _: () = assert!(FLUSH_MID_SHARES < FLUSH_MAX_SHARES);
const _: () = assert!(COMPACTION_POINTS_2_2[3].0 == NORMALIZATION_FACTOR);
const _: () = assert!(COMPACTION_POINTS_3_0[2].0 == NORMALIZATION_FACTOR);
const _: () = assert!(COMPACTION_POINTS_2_2_RC1[3].0 < NORMALIZATION_FACTOR);
const _: () = assert!(MAJOR_COMPACTION_SHARES < FLUSH_MAX_SHARES);
const _: () = assert!(EXTRANEOUS_FLUSH_SHARES == FLUSH_MID_SHARES);
const _: () = assert!(FLUSH_TICK_2_3.as_nanos() < FLUSH_TICK_2_2.as_nanos());
const _: () = assert!(COMPACTION_TICK.as_nanos() > 0);

/// One control point of a curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControlPoint {
    /// Normalised backlog.
    pub input: f64,
    /// Shares at that backlog.
    pub output: f64,
}

/// Why a user's curve was rejected.
#[derive(Clone, Debug, PartialEq)]
pub enum CurveError {
    /// Fewer than two points.
    TooFewPoints {
        /// Points given.
        count: usize,
    },
    /// A point has an infinite or NaN coordinate.
    NotFinite {
        /// Index of the point (from 0).
        index: usize,
    },
    /// A point's input is not above the previous point's.
    InputsNotIncreasing {
        /// Index of the offending point (from 0).
        index: usize,
        /// Input of the point before it.
        previous: f64,
        /// Its input.
        input: f64,
    },
    /// A point's output (shares) is negative.
    NegativeOutput {
        /// Index of the point (from 0).
        index: usize,
        /// Its output.
        output: f64,
    },
}

impl fmt::Display for CurveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CurveError::TooFewPoints { count } => write!(
                f,
                "a controller curve needs at least 2 points [input, shares], got {count}"
            ),
            CurveError::NotFinite { index } => {
                write!(f, "point {index} of the controller curve is not a finite number")
            }
            CurveError::InputsNotIncreasing {
                index,
                previous,
                input,
            } => write!(
                f,
                "controller curve inputs must be strictly increasing: point {index} has input {input}, \
                 not above the previous point's {previous}"
            ),
            CurveError::NegativeOutput { index, output } => write!(
                f,
                "controller curve shares must not be negative: point {index} has {output}"
            ),
        }
    }
}

impl std::error::Error for CurveError {}

/// A piecewise-linear map from normalised backlog to shares.
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerCurve {
    points: Vec<ControlPoint>,
}

impl ControllerCurve {
    /// A curve through `points` given as `(input, output)`; validated (see
    /// [`CurveError`]).
    pub fn new(points: &[(f64, f64)]) -> Result<ControllerCurve, CurveError> {
        if points.len() < 2 {
            return Err(CurveError::TooFewPoints {
                count: points.len(),
            });
        }
        for (index, &(input, output)) in points.iter().enumerate() {
            if !input.is_finite() || !output.is_finite() {
                return Err(CurveError::NotFinite { index });
            }
            if output < 0.0 {
                return Err(CurveError::NegativeOutput { index, output });
            }
            if index > 0 {
                let previous = points[index - 1].0;
                if input <= previous {
                    return Err(CurveError::InputsNotIncreasing {
                        index,
                        previous,
                        input,
                    });
                }
            }
        }
        let curve = ControllerCurve {
            points: points
                .iter()
                .map(|&(input, output)| ControlPoint { input, output })
                .collect(),
        };
        curve.check_invariants();
        Ok(curve)
    }

    /// What every curve holds, as [`ControllerCurve::new`] validates it: at
    /// least two points, finite coordinates, inputs strictly increasing,
    /// outputs non-negative. O(points), a handful.
    pub fn check_invariants(&self) {
        assert!(self.points.len() >= 2, "a curve has at least two points");
        for pair in self.points.windows(2) {
            assert!(
                pair[0].input < pair[1].input,
                "a curve's inputs strictly increase"
            );
        }
        for point in &self.points {
            assert!(point.input.is_finite() && point.output.is_finite());
            assert!(point.output >= 0.0, "a curve's shares are never negative");
        }
    }

    /// The control points, in increasing input order.
    pub fn points(&self) -> &[ControlPoint] {
        &self.points
    }

    /// The shares for normalised backlog `backlog` (`adjust`): the last
    /// output at or beyond the last input, else the interpolation on the
    /// first segment whose upper input is at least `backlog` (extrapolating
    /// the first segment below the first point), clamped at 0.
    pub fn shares_for(&self, backlog: f64) -> f64 {
        let last = self.points[self.points.len() - 1];
        if backlog.is_nan() || backlog >= last.input {
            return last.output;
        }
        let mut idx = 1;
        while idx < self.points.len() - 1 && self.points[idx].input < backlog {
            idx += 1;
        }
        let (lower, upper) = (self.points[idx - 1], self.points[idx]);
        debug_assert!(lower.input < upper.input);
        debug_assert!(
            backlog <= upper.input,
            "the segment found reaches the backlog"
        );
        let shares = lower.output
            + (backlog - lower.input) * (upper.output - lower.output) / (upper.input - lower.input);
        let shares = shares.max(0.0);
        debug_assert!(
            backlog < lower.input
                || (shares >= lower.output.min(upper.output) - 1e-9 * upper.output.max(1.0)
                    && shares <= lower.output.max(upper.output) + 1e-9 * upper.output.max(1.0)),
            "inside a segment the shares lie between its ends"
        );
        shares
    }

    /// The backlog that gives `shares` (`backlog_of_shares`): the inverse of
    /// the map on the first segment whose upper output is at least `shares`
    /// (the last segment if none is), extrapolating that segment outside the
    /// curve's outputs. On a flat segment (where any backlog in it gives
    /// those shares) it returns the segment's lower input.
    pub fn backlog_of_shares(&self, shares: f64) -> f64 {
        debug_assert!(shares.is_finite(), "shares to invert are finite");
        let mut idx = 1;
        while idx < self.points.len() - 1 && self.points[idx].output < shares {
            idx += 1;
        }
        let (lower, upper) = (self.points[idx - 1], self.points[idx]);
        if upper.output == lower.output {
            return lower.input;
        }
        let backlog = lower.input
            + (shares - lower.output) * (upper.input - lower.input) / (upper.output - lower.output);
        debug_assert!(
            backlog.is_finite(),
            "a finite share inverts to a finite backlog"
        );
        backlog
    }
}

fn builtin(points: &[(f64, f64)]) -> ControllerCurve {
    assert_eq!(points[0].0, 0.0, "built-in curves start at no backlog");
    ControllerCurve::new(points).expect("built-in curves are valid")
}

/// The compaction curve of 2.2.rc1: (0,0) (0.5,10) (1.5,100) (10,1000).
pub fn compaction_curve_2_2_rc1() -> ControllerCurve {
    builtin(&COMPACTION_POINTS_2_2_RC1)
}

/// The compaction curve of 2.2.0, 2.2.1 and 2.3: (0,0) (0.5,10) (1.5,100)
/// (30,1000).
pub fn compaction_curve_2_2() -> ControllerCurve {
    builtin(&COMPACTION_POINTS_2_2)
}

/// The compaction curve from 3.0: (0,50) (1.5,100) (30,1000).
pub fn compaction_curve_3_0() -> ControllerCurve {
    builtin(&COMPACTION_POINTS_3_0)
}

/// The flush control points for a `virtual_dirty_soft_limit` and the shares
/// at it: `(0,0) (soft, soft_shares) (soft + (1 - soft)/2, 200) (1, 1000)`
/// (`flush_controller`).
pub fn flush_points(soft_limit: f64, soft_shares: f64) -> [(f64, f64); 4] {
    [
        (0.0, 0.0),
        (soft_limit, soft_shares),
        (
            soft_limit + (HARD_DIRTY_LIMIT - soft_limit) / 2.0,
            FLUSH_MID_SHARES,
        ),
        (HARD_DIRTY_LIMIT, FLUSH_MAX_SHARES),
    ]
}

/// A flush curve for a configured `virtual_dirty_soft_limit`; an error if
/// the limit is not strictly between 0 and 1.
pub fn flush_curve_with_soft_limit(
    soft_limit: f64,
    soft_shares: f64,
) -> Result<ControllerCurve, CurveError> {
    let curve = ControllerCurve::new(&flush_points(soft_limit, soft_shares));
    assert!(
        curve.is_err() || (0.0 < soft_limit && soft_limit < HARD_DIRTY_LIMIT),
        "a soft limit outside (0, 1) gives no curve"
    );
    curve
}

/// The flush curve of 2.2: (0,0) (0.6,100) (0.8,200) (1.0,1000).
pub fn flush_curve_2_2() -> ControllerCurve {
    builtin(&flush_points(
        DEFAULT_VIRTUAL_DIRTY_SOFT_LIMIT,
        FLUSH_SOFT_SHARES_2_2,
    ))
}

/// The flush curve from 2.3: (0,0) (0.6,10) (0.8,200) (1.0,1000).
pub fn flush_curve_2_3() -> ControllerCurve {
    builtin(&flush_points(
        DEFAULT_VIRTUAL_DIRTY_SOFT_LIMIT,
        FLUSH_SOFT_SHARES_2_3,
    ))
}

/// Scylla versions whose controllers differ (2.1 had none, section 1.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ControllerVersion {
    /// 2.2.rc1: compaction top at 10 x M.
    Scylla2_2Rc1,
    /// 2.2.0 and 2.2.1.
    Scylla2_2,
    /// 2.3: idle flush shares 10, flush tick 50 ms, major-compaction backlog.
    Scylla2_3,
    /// 3.0: compaction floor of 50 shares, extraneous-flush floor.
    Scylla3_0,
}

impl ControllerVersion {
    /// Every version, oldest first.
    pub const ALL: [ControllerVersion; 4] = [
        ControllerVersion::Scylla2_2Rc1,
        ControllerVersion::Scylla2_2,
        ControllerVersion::Scylla2_3,
        ControllerVersion::Scylla3_0,
    ];

    /// The compaction curve.
    pub fn compaction_curve(self) -> ControllerCurve {
        let curve = match self {
            ControllerVersion::Scylla2_2Rc1 => compaction_curve_2_2_rc1(),
            ControllerVersion::Scylla2_2 | ControllerVersion::Scylla2_3 => compaction_curve_2_2(),
            ControllerVersion::Scylla3_0 => compaction_curve_3_0(),
        };
        let top = curve.points()[curve.points().len() - 1];
        assert_eq!(
            top.output, 1000.0,
            "every compaction curve tops at 1000 shares"
        );
        assert!(top.input <= NORMALIZATION_FACTOR);
        curve
    }

    /// The flush curve with the default soft limit.
    pub fn flush_curve(self) -> ControllerCurve {
        let curve = match self {
            ControllerVersion::Scylla2_2Rc1 | ControllerVersion::Scylla2_2 => flush_curve_2_2(),
            ControllerVersion::Scylla2_3 | ControllerVersion::Scylla3_0 => flush_curve_2_3(),
        };
        let top = curve.points()[curve.points().len() - 1];
        assert_eq!(
            (top.input, top.output),
            (HARD_DIRTY_LIMIT, FLUSH_MAX_SHARES),
            "every flush curve ends at the hard dirty limit"
        );
        curve
    }

    /// The compaction controller's tick.
    pub fn compaction_tick(self) -> SimDuration {
        COMPACTION_TICK
    }

    /// The flush controller's tick.
    pub fn flush_tick(self) -> SimDuration {
        let tick = match self {
            ControllerVersion::Scylla2_2Rc1 | ControllerVersion::Scylla2_2 => FLUSH_TICK_2_2,
            ControllerVersion::Scylla2_3 | ControllerVersion::Scylla3_0 => FLUSH_TICK_2_3,
        };
        debug_assert!(
            tick <= self.compaction_tick(),
            "flushes are re-evaluated at least as often"
        );
        tick
    }

    /// Whether a running major compaction adds
    /// [`major_compaction_backlog_bytes`] (2.3 on; 2.2 has no
    /// `user_initiated_backlog_tracker`).
    pub fn has_major_compaction_backlog(self) -> bool {
        self >= ControllerVersion::Scylla2_3
    }

    /// Whether a requested extra flush floors the flush input
    /// ([`with_extraneous_flush_floor`]; 3.0 on).
    pub fn has_extraneous_flush_floor(self) -> bool {
        self >= ControllerVersion::Scylla3_0
    }
}

/// A controller as configured: driven by a curve, or fixed by the
/// `*_static_shares` option.
#[derive(Clone, Debug, PartialEq)]
pub enum BacklogController {
    /// `compaction_static_shares` / `memtable_flush_static_shares` > 0: the
    /// shares are set once, and no timer is armed.
    Static(f64),
    /// Driven by a curve, adjusted every `tick`.
    Curve {
        /// The curve.
        curve: ControllerCurve,
        /// How often the driver re-evaluates it.
        tick: SimDuration,
    },
}

impl BacklogController {
    /// As `make_compaction_controller` / `make_flush_controller` choose:
    /// static if `static_shares > 0`, else the curve.
    pub fn configured(
        static_shares: f64,
        curve: ControllerCurve,
        tick: SimDuration,
    ) -> BacklogController {
        assert!(
            static_shares.is_finite(),
            "static shares are a finite number"
        );
        let controller = if static_shares > 0.0 {
            BacklogController::Static(static_shares)
        } else {
            BacklogController::Curve { curve, tick }
        };
        controller.check_invariants();
        controller
    }

    /// What must hold: static shares are positive and finite (0 means "no
    /// static shares", a curve); a curve's tick is not zero, and the curve
    /// holds [`ControllerCurve::check_invariants`].
    pub fn check_invariants(&self) {
        match self {
            BacklogController::Static(shares) => {
                assert!(
                    shares.is_finite() && *shares > 0.0,
                    "static shares are positive"
                );
            }
            BacklogController::Curve { curve, tick } => {
                assert!(*tick > SimDuration::ZERO, "a controller's tick is not zero");
                curve.check_invariants();
            }
        }
    }

    /// The shares for a normalised backlog.
    pub fn shares_for(&self, backlog: f64) -> f64 {
        let shares = match self {
            BacklogController::Static(shares) => *shares,
            BacklogController::Curve { curve, .. } => curve.shares_for(backlog),
        };
        debug_assert!(shares >= 0.0, "a controller never gives negative shares");
        shares
    }

    /// The tick, or `None` for a static controller (no timer).
    pub fn tick(&self) -> Option<SimDuration> {
        let tick = match self {
            BacklogController::Static(_) => None,
            BacklogController::Curve { tick, .. } => Some(*tick),
        };
        debug_assert!(
            tick != Some(SimDuration::ZERO),
            "a controller's tick is not zero"
        );
        tick
    }

    /// The curve, or `None` for a static controller.
    pub fn curve(&self) -> Option<&ControllerCurve> {
        match self {
            BacklogController::Static(_) => None,
            BacklogController::Curve { curve, .. } => Some(curve),
        }
    }
}

/// The compaction controller's input: the sum over tables of backlog bytes
/// divided by shard memory `M`; an infinite (or NaN) sum, from a strategy
/// without a backlog tracker, gives [`NORMALIZATION_FACTOR`], hence the
/// maximum shares.
pub fn compaction_input(backlog_bytes: f64, memory_bytes: u64) -> f64 {
    debug_assert!(memory_bytes > 0, "a shard has memory to normalise by");
    if !backlog_bytes.is_finite() {
        return NORMALIZATION_FACTOR;
    }
    backlog_bytes / memory_bytes.max(1) as f64
}

/// The flush controller's input: virtual dirty memory over the throttle
/// threshold (0.225 M with the defaults).
pub fn flush_input(virtual_dirty_bytes: u64, throttle_threshold_bytes: u64) -> f64 {
    debug_assert!(
        throttle_threshold_bytes > 0,
        "the throttle threshold is a positive size"
    );
    virtual_dirty_bytes as f64 / throttle_threshold_bytes.max(1) as f64
}

/// 3.0's flush input while an extra flush was requested
/// (`has_extraneous_flushes_requested`, `database.cc` @3.0): at least the
/// backlog that gives [`EXTRANEOUS_FLUSH_SHARES`].
pub fn with_extraneous_flush_floor(input: f64, curve: &ControllerCurve) -> f64 {
    debug_assert!(!input.is_nan(), "a flush input is a number");
    input.max(curve.backlog_of_shares(EXTRANEOUS_FLUSH_SHARES))
}

/// The bytes of backlog a running user-initiated (major) compaction adds:
/// `backlog_of_shares(200) x M` (section 1.2). About 4.67 M with the 2.3
/// and 3.0 curves.
pub fn major_compaction_backlog_bytes(curve: &ControllerCurve, memory_bytes: u64) -> f64 {
    debug_assert!(memory_bytes > 0, "a shard has memory to scale by");
    let bytes = curve.backlog_of_shares(MAJOR_COMPACTION_SHARES) * memory_bytes as f64;
    debug_assert!(bytes.is_finite());
    bytes
}

/// Static shares of the Seastar I/O priority classes
/// (`service/priority_manager.hh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoClassShares {
    /// `commitlog`.
    pub commitlog: u32,
    /// `memtable_flush` (the flush controller's class from 2.2).
    pub memtable_flush: u32,
    /// `query`.
    pub query: u32,
    /// `compaction` (the compaction controller's class from 2.2).
    pub compaction: u32,
    /// `streaming_read`.
    pub streaming_read: u32,
    /// `streaming_write`.
    pub streaming_write: u32,
}

/// Scylla 2.1: 100 for each class, 20 for streaming; no controller.
pub const IO_SHARES_2_1: IoClassShares = IoClassShares {
    commitlog: 100,
    memtable_flush: 100,
    query: 100,
    compaction: 100,
    streaming_read: 20,
    streaming_write: 20,
};

/// Scylla 2.2 to 3.0: 1000 for each class, 200 for streaming; the
/// memtable-flush and compaction classes start there and are then driven by
/// their controllers.
pub const IO_SHARES_2_2: IoClassShares = IoClassShares {
    commitlog: 1000,
    memtable_flush: 1000,
    query: 1000,
    compaction: 1000,
    streaming_read: 200,
    streaming_write: 200,
};

// Streaming runs below the foreground classes in both tables, and 2.2's
// table is 2.1's scaled by ten.
const _: () = assert!(IO_SHARES_2_1.streaming_read < IO_SHARES_2_1.query);
const _: () = assert!(IO_SHARES_2_2.streaming_write < IO_SHARES_2_2.commitlog);
const _: () = assert!(IO_SHARES_2_2.query == 10 * IO_SHARES_2_1.query);
const _: () = assert!(IO_SHARES_2_2.streaming_read == 10 * IO_SHARES_2_1.streaming_read);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0)
    }

    fn assert_shares(curve: &ControllerCurve, cases: &[(f64, f64)]) {
        for &(backlog, shares) in cases {
            let got = curve.shares_for(backlog);
            assert!(
                close(got, shares),
                "backlog {backlog}: {got} shares, expected {shares}"
            );
        }
    }

    #[test]
    fn compaction_2_2_rc1_curve() {
        let curve = compaction_curve_2_2_rc1();
        assert_shares(
            &curve,
            &[
                // At the points.
                (0.0, 0.0),
                (0.5, 10.0),
                (1.5, 100.0),
                (10.0, 1000.0),
                // Between them.
                (0.25, 5.0),
                (1.0, 55.0),
                (5.75, 550.0),
                // Beyond the last.
                (11.0, 1000.0),
                (1e12, 1000.0),
                (f64::INFINITY, 1000.0),
                // Below the first: the first segment extrapolated, at >= 0.
                (-1.0, 0.0),
            ],
        );
    }

    #[test]
    fn compaction_2_2_curve() {
        let curve = compaction_curve_2_2();
        assert_eq!(curve, ControllerVersion::Scylla2_3.compaction_curve());
        assert_shares(
            &curve,
            &[
                (0.0, 0.0),
                (0.5, 10.0),
                (1.5, 100.0),
                (30.0, 1000.0),
                (0.1, 2.0),
                (1.0, 55.0),
                (15.75, 550.0),
                (10.0, 100.0 + 8.5 * 900.0 / 28.5),
                (30.5, 1000.0),
                (-0.5, 0.0),
            ],
        );
    }

    #[test]
    fn compaction_3_0_curve() {
        let curve = compaction_curve_3_0();
        assert_shares(
            &curve,
            &[
                (0.0, 50.0),
                (1.5, 100.0),
                (30.0, 1000.0),
                (0.75, 75.0),
                (15.75, 550.0),
                (100.0, 1000.0),
                // Below the first point the first segment goes on down.
                (-0.3, 40.0),
                (-1.5, 0.0),
                (-10.0, 0.0),
            ],
        );
    }

    #[test]
    fn flush_curves() {
        let old = flush_curve_2_2();
        let new = flush_curve_2_3();
        let points = |curve: &ControllerCurve| -> Vec<(f64, f64)> {
            curve.points().iter().map(|p| (p.input, p.output)).collect()
        };
        assert_eq!(
            points(&old),
            vec![(0.0, 0.0), (0.6, 100.0), (0.8, 200.0), (1.0, 1000.0)]
        );
        assert_eq!(
            points(&new),
            vec![(0.0, 0.0), (0.6, 10.0), (0.8, 200.0), (1.0, 1000.0)]
        );
        assert_shares(
            &old,
            &[
                (0.0, 0.0),
                (0.6, 100.0),
                (0.8, 200.0),
                (1.0, 1000.0),
                (0.3, 50.0),
                (0.7, 150.0),
                (0.9, 600.0),
                (1.2, 1000.0),
                (-0.1, 0.0),
            ],
        );
        assert_shares(
            &new,
            &[
                (0.0, 0.0),
                (0.6, 10.0),
                (0.8, 200.0),
                (1.0, 1000.0),
                (0.3, 5.0),
                (0.7, 105.0),
                (0.9, 600.0),
                (2.0, 1000.0),
                (-0.1, 0.0),
            ],
        );
        // Another soft limit moves the bends.
        let custom = flush_curve_with_soft_limit(0.5, FLUSH_SOFT_SHARES_2_3).unwrap();
        assert_eq!(
            points(&custom),
            vec![(0.0, 0.0), (0.5, 10.0), (0.75, 200.0), (1.0, 1000.0)]
        );
        assert!(flush_curve_with_soft_limit(1.0, 10.0).is_err());
        assert!(flush_curve_with_soft_limit(0.0, 10.0).is_err());
    }

    #[test]
    fn versions_map_to_their_curves_and_ticks() {
        use ControllerVersion::*;
        assert_eq!(Scylla2_2Rc1.compaction_curve(), compaction_curve_2_2_rc1());
        assert_eq!(Scylla2_2.compaction_curve(), compaction_curve_2_2());
        assert_eq!(Scylla3_0.compaction_curve(), compaction_curve_3_0());
        assert_eq!(Scylla2_2Rc1.flush_curve(), flush_curve_2_2());
        assert_eq!(Scylla2_2.flush_curve(), flush_curve_2_2());
        assert_eq!(Scylla2_3.flush_curve(), flush_curve_2_3());
        assert_eq!(Scylla3_0.flush_curve(), flush_curve_2_3());
        for version in ControllerVersion::ALL {
            assert_eq!(version.compaction_tick(), SimDuration::from_millis(250));
        }
        assert_eq!(Scylla2_2.flush_tick(), SimDuration::from_millis(250));
        assert_eq!(Scylla2_3.flush_tick(), SimDuration::from_millis(50));
        assert_eq!(Scylla3_0.flush_tick(), SimDuration::from_millis(50));
        assert!(!Scylla2_2.has_major_compaction_backlog());
        assert!(Scylla2_3.has_major_compaction_backlog());
        assert!(!Scylla2_3.has_extraneous_flush_floor());
        assert!(Scylla3_0.has_extraneous_flush_floor());
    }

    #[test]
    fn backlog_of_shares_inverts_shares_for_on_increasing_segments() {
        for version in ControllerVersion::ALL {
            for curve in [version.compaction_curve(), version.flush_curve()] {
                let first = curve.points()[0].input;
                let last = curve.points()[curve.points().len() - 1].input;
                for step in 0..=1000 {
                    let backlog = first + (last - first) * f64::from(step) / 1000.0;
                    let back = curve.backlog_of_shares(curve.shares_for(backlog));
                    assert!(
                        (back - backlog).abs() <= 1e-9 * last,
                        "{version:?}: backlog {backlog} -> {back}"
                    );
                }
            }
        }
        // Outside the outputs the end segments are extrapolated.
        let curve = compaction_curve_3_0();
        assert!(close(curve.backlog_of_shares(0.0), -1.5));
        assert!(close(curve.backlog_of_shares(1900.0), 58.5));
    }

    #[test]
    fn flat_segments_invert_to_their_lower_input() {
        let curve = ControllerCurve::new(&[(0.0, 100.0), (1.0, 100.0), (2.0, 300.0)]).unwrap();
        assert_eq!(curve.shares_for(0.5), 100.0);
        assert_eq!(curve.backlog_of_shares(100.0), 0.0);
        assert_eq!(curve.backlog_of_shares(50.0), 0.0);
        assert!(close(curve.backlog_of_shares(200.0), 1.5));
    }

    #[test]
    fn a_major_compaction_adds_the_backlog_of_200_shares() {
        let memory = 1u64 << 30;
        // 1.5 + (200 - 100) x 28.5 / 900 = 4.666...
        let normalised = 1.5 + 100.0 * 28.5 / 900.0;
        assert!(close(normalised, 4.666666666666667));
        for curve in [compaction_curve_2_2(), compaction_curve_3_0()] {
            let added = major_compaction_backlog_bytes(&curve, memory);
            assert!(close(added, normalised * memory as f64));
            assert!(close(
                curve.shares_for(compaction_input(added, memory)),
                200.0
            ));
        }
    }

    #[test]
    fn inputs_are_normalised() {
        let memory = 1000u64;
        assert!(close(compaction_input(1500.0, memory), 1.5));
        assert_eq!(
            compaction_input(f64::INFINITY, memory),
            NORMALIZATION_FACTOR
        );
        assert_eq!(
            compaction_curve_2_2().shares_for(compaction_input(f64::INFINITY, memory)),
            1000.0
        );
        // Throttle threshold 0.225 M of a 4 GB shard.
        let throttle = 900_000_000u64;
        assert!(close(flush_input(540_000_000, throttle), 0.6));
        // 3.0: a requested flush runs at no fewer than 200 shares.
        let curve = flush_curve_2_3();
        let floored = with_extraneous_flush_floor(flush_input(0, throttle), &curve);
        assert!(close(floored, 0.8));
        assert!(close(curve.shares_for(floored), 200.0));
        assert!(close(with_extraneous_flush_floor(0.9, &curve), 0.9));
    }

    #[test]
    fn static_shares_disable_the_controller() {
        let controller =
            BacklogController::configured(300.0, compaction_curve_3_0(), COMPACTION_TICK);
        assert_eq!(controller, BacklogController::Static(300.0));
        assert_eq!(controller.shares_for(0.0), 300.0);
        assert_eq!(controller.shares_for(1e9), 300.0);
        assert_eq!(controller.tick(), None);
        assert_eq!(controller.curve(), None);
        let controller =
            BacklogController::configured(0.0, compaction_curve_3_0(), COMPACTION_TICK);
        assert_eq!(controller.shares_for(0.0), 50.0);
        assert_eq!(controller.tick(), Some(SimDuration::from_millis(250)));
        assert_eq!(controller.curve(), Some(&compaction_curve_3_0()));
    }

    #[test]
    fn user_curves_are_validated() {
        let ok = ControllerCurve::new(&[(0.0, 50.0), (1.5, 100.0), (30.0, 1000.0)]).unwrap();
        assert_eq!(ok, compaction_curve_3_0());
        // A user curve may start above 0: below it, the first segment.
        let late = ControllerCurve::new(&[(0.5, 10.0), (1.5, 100.0)]).unwrap();
        assert!(close(late.shares_for(0.4), 1.0));
        assert_eq!(late.shares_for(0.0), 0.0);

        // (points, error, message)
        type Case = (&'static [(f64, f64)], CurveError, &'static str);
        let cases: [Case; 6] = [
            (
                &[],
                CurveError::TooFewPoints { count: 0 },
                "a controller curve needs at least 2 points [input, shares], got 0",
            ),
            (
                &[(0.0, 50.0)],
                CurveError::TooFewPoints { count: 1 },
                "a controller curve needs at least 2 points [input, shares], got 1",
            ),
            (
                &[(0.0, 50.0), (1.5, 100.0), (1.5, 1000.0)],
                CurveError::InputsNotIncreasing {
                    index: 2,
                    previous: 1.5,
                    input: 1.5,
                },
                "controller curve inputs must be strictly increasing: point 2 has input 1.5, \
                 not above the previous point's 1.5",
            ),
            (
                &[(1.0, 50.0), (0.5, 100.0)],
                CurveError::InputsNotIncreasing {
                    index: 1,
                    previous: 1.0,
                    input: 0.5,
                },
                "controller curve inputs must be strictly increasing: point 1 has input 0.5, \
                 not above the previous point's 1",
            ),
            (
                &[(0.0, -5.0), (1.0, 100.0)],
                CurveError::NegativeOutput {
                    index: 0,
                    output: -5.0,
                },
                "controller curve shares must not be negative: point 0 has -5",
            ),
            (
                &[(0.0, 0.0), (f64::NAN, 100.0)],
                CurveError::NotFinite { index: 1 },
                "point 1 of the controller curve is not a finite number",
            ),
        ];
        for (points, error, message) in cases {
            let got = ControllerCurve::new(points).unwrap_err();
            assert_eq!(got, error);
            assert_eq!(got.to_string(), message);
        }
    }

    #[test]
    fn io_shares_tables() {
        assert_eq!(
            IO_SHARES_2_1,
            IoClassShares {
                commitlog: 100,
                memtable_flush: 100,
                query: 100,
                compaction: 100,
                streaming_read: 20,
                streaming_write: 20,
            }
        );
        assert_eq!(
            (
                IO_SHARES_2_2.commitlog,
                IO_SHARES_2_2.query,
                IO_SHARES_2_2.streaming_read
            ),
            (1000, 1000, 200)
        );
    }

    proptest! {
        #[test]
        fn shares_never_fall_as_backlog_grows(a in -5.0f64..50.0, b in -5.0f64..50.0) {
            let (low, high) = if a <= b { (a, b) } else { (b, a) };
            for version in ControllerVersion::ALL {
                for curve in [version.compaction_curve(), version.flush_curve()] {
                    let (at_low, at_high) = (curve.shares_for(low), curve.shares_for(high));
                    prop_assert!(
                        at_low <= at_high,
                        "{:?}: {} shares at {} but {} at {}", version, at_low, low, at_high, high
                    );
                    prop_assert!(at_low >= 0.0);
                }
            }
        }
    }
}
