//! Units shared by every twin crate: simulated time and byte sizes.
//!
//! This is the one leaf crate that `engine`, `models` and `sim` all depend on.
//! It exists so that the engine and the models (which must not depend on each
//! other, see ARCHITECTURE.md) still speak the same time type. It holds no
//! clock: a [`SimTime`] is only ever produced by the simulator (or, later, by
//! the real-runtime driver) and passed in.
//!
//! Human-readable forms follow one convention everywhere (scenario files,
//! command-line flags, reports):
//! - durations: `"90m"`, `"500ms"`, `"1.5s"`, `"250us"`, `"2h"`, `"10ns"`;
//! - sizes: SI prefixes are powers of 1000 (`"1KB"` = 1000 bytes, `"1.9TB"`),
//!   IEC prefixes are powers of 1024 (`"1KiB"` = 1024 bytes, `"32MiB"`), and a
//!   bare number or `"B"` is bytes. Drive vendors and AWS quote SI sizes;
//!   Scylla's configuration quotes IEC sizes, so both are needed.

#![warn(missing_docs)]

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

mod math;
pub use math::{concave_hull, mix64, GOLDEN_GAMMA};

/// Nanoseconds in one microsecond.
pub const NANOS_PER_MICRO: u64 = 1_000;
/// Nanoseconds in one millisecond.
pub const NANOS_PER_MILLI: u64 = 1_000_000;
/// Nanoseconds in one second.
pub const NANOS_PER_SECOND: u64 = 1_000_000_000;

/// An instant of simulated time: nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The latest representable instant (about 584 years).
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// The instant `nanos` nanoseconds after the start.
    pub const fn from_nanos(nanos: u64) -> SimTime {
        SimTime(nanos)
    }

    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the start, as a float (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SECOND as f64
    }

    /// The time elapsed since `earlier`; zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A duration of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: u64) -> SimDuration {
        SimDuration(nanos)
    }
    /// A duration of `micros` microseconds.
    pub const fn from_micros(micros: u64) -> SimDuration {
        SimDuration(micros * NANOS_PER_MICRO)
    }
    /// A duration of `millis` milliseconds.
    pub const fn from_millis(millis: u64) -> SimDuration {
        SimDuration(millis * NANOS_PER_MILLI)
    }
    /// A duration of `seconds` seconds.
    pub const fn from_secs(seconds: u64) -> SimDuration {
        SimDuration(seconds * NANOS_PER_SECOND)
    }
    /// A duration from float seconds, rounded to the nearest nanosecond
    /// (negative and NaN inputs give zero).
    pub fn from_secs_f64(seconds: f64) -> SimDuration {
        let nanos = (seconds * NANOS_PER_SECOND as f64).round();
        if nanos.is_nan() || nanos <= 0.0 {
            SimDuration(0)
        } else {
            SimDuration(nanos as u64)
        }
    }
    /// Nanoseconds in this duration.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds in this duration, as a float (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SECOND as f64
    }
    /// Milliseconds in this duration, as a float (for reports only).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_MILLI as f64
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, rhs: SimDuration) {
        *self = *self + rhs;
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Panics in debug builds if `rhs` is later than `self`: time does not
    /// run backwards, so that is a bug in the caller.
    fn sub(self, rhs: SimTime) -> SimDuration {
        debug_assert!(self.0 >= rhs.0, "time ran backwards: {self} - {rhs}");
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(rhs.0))
    }
}

impl Sub for SimDuration {
    type Output = SimDuration;
    /// Saturates at zero; panics in debug builds if `rhs` is longer.
    fn sub(self, rhs: SimDuration) -> SimDuration {
        debug_assert!(self.0 >= rhs.0, "negative duration: {self} - {rhs}");
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        format_duration(*self, f)
    }
}

fn format_duration(duration: SimDuration, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let nanos = duration.0;
    let units: [(u64, &str); 6] = [
        (3600 * NANOS_PER_SECOND, "h"),
        (60 * NANOS_PER_SECOND, "m"),
        (NANOS_PER_SECOND, "s"),
        (NANOS_PER_MILLI, "ms"),
        (NANOS_PER_MICRO, "us"),
        (1, "ns"),
    ];
    for (scale, suffix) in units {
        if nanos >= scale && nanos.is_multiple_of(scale) {
            return write!(f, "{}{}", nanos / scale, suffix);
        }
    }
    if nanos == 0 {
        return write!(f, "0s");
    }
    write!(f, "{}ns", nanos)
}

/// Why a human-readable duration or size could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError(String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnitError {}

/// Splits `"1.5ms"` into (`1.5`, `"ms"`). Underscores in the number are
/// allowed as digit separators (`"1_000_000"`).
fn split_number(text: &str) -> Result<(f64, &str), UnitError> {
    let trimmed = text.trim();
    let end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == 'E'))
        .unwrap_or(trimmed.len());
    // An `e` directly followed by a unit letter (no digits) belongs to the unit, not the number.
    let (mut number_part, mut unit_part) = trimmed.split_at(end);
    while number_part.ends_with(['e', 'E']) {
        let cut = number_part.len() - 1;
        number_part = &trimmed[..cut];
        unit_part = &trimmed[cut..];
    }
    if number_part.is_empty() {
        return Err(UnitError(format!("`{text}` does not start with a number")));
    }
    let cleaned: String = number_part.chars().filter(|c| *c != '_').collect();
    let number: f64 = cleaned
        .parse()
        .map_err(|_| UnitError(format!("`{number_part}` is not a number")))?;
    if !number.is_finite() || number < 0.0 {
        return Err(UnitError(format!(
            "`{text}` must be a finite, non-negative amount"
        )));
    }
    Ok((number, unit_part.trim()))
}

/// Reads a human duration: a number followed by `ns`, `us`, `ms`, `s`, `m`
/// or `h` (the unit is required, so `"90"` is an error rather than a guess).
pub fn parse_duration(text: &str) -> Result<SimDuration, UnitError> {
    let (number, unit) = split_number(text)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => NANOS_PER_MICRO as f64,
        "ms" => NANOS_PER_MILLI as f64,
        "s" => NANOS_PER_SECOND as f64,
        "m" | "min" => 60.0 * NANOS_PER_SECOND as f64,
        "h" => 3600.0 * NANOS_PER_SECOND as f64,
        "" => {
            return Err(UnitError(format!(
                "`{text}` has no unit; write it as e.g. \"500ms\", \"90s\", \"90m\" or \"2h\""
            )))
        }
        other => {
            return Err(UnitError(format!(
                "`{other}` is not a duration unit (use ns, us, ms, s, m or h)"
            )))
        }
    };
    let nanos = number * scale;
    if nanos > u64::MAX as f64 / 2.0 {
        return Err(UnitError(format!("`{text}` is too long a duration")));
    }
    Ok(SimDuration(nanos.round() as u64))
}

/// Reads a human size in bytes: `"310"`, `"1KB"`, `"1KiB"`, `"1.9TB"`, `"32MiB"`.
pub fn parse_bytes(text: &str) -> Result<u64, UnitError> {
    let (number, unit) = split_number(text)?;
    let scale: f64 = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "PB" => 1e15,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(UnitError(format!(
                "`{other}` is not a size unit (use B, KB, MB, GB, TB for powers of 1000 or KiB, MiB, GiB, TiB for powers of 1024)"
            )))
        }
    };
    let bytes = number * scale;
    if bytes > u64::MAX as f64 / 2.0 {
        return Err(UnitError(format!("`{text}` is too large a size")));
    }
    Ok(bytes.round() as u64)
}

/// Formats a number as a person wrote it, but in scientific notation when
/// it is huge or tiny (`1e300`, not three hundred digits), for error
/// messages that quote an input back.
pub fn format_number(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-6..1e15).contains(&value.abs()) {
        // Four significant digits, trailing zeros dropped: 6.944e297, 1e300.
        let text = format!("{value:.3e}");
        let (mantissa, exponent) = text.split_once('e').expect("`e` formatting has one");
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{mantissa}e{exponent}")
    } else {
        format!("{value}")
    }
}

/// Formats a byte count with the largest IEC unit that keeps it at least 1,
/// e.g. `1.5 MiB`; for reports.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_quoted_back_stay_short() {
        assert_eq!(format_number(1e300), "1e300");
        assert_eq!(format_number(6.944444444444445e297), "6.944e297");
        assert_eq!(format_number(-2.5e-9), "-2.5e-9");
        assert_eq!(format_number(300e6), "300000000");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(format_number(0.0), "0");
    }

    #[test]
    fn durations_read_in_every_unit() {
        assert_eq!(parse_duration("90m").unwrap(), SimDuration::from_secs(5400));
        assert_eq!(
            parse_duration("500ms").unwrap(),
            SimDuration::from_millis(500)
        );
        assert_eq!(
            parse_duration("1.5s").unwrap(),
            SimDuration::from_millis(1500)
        );
        assert_eq!(
            parse_duration("250us").unwrap(),
            SimDuration::from_micros(250)
        );
        assert_eq!(parse_duration("2h").unwrap(), SimDuration::from_secs(7200));
        assert_eq!(parse_duration("10ns").unwrap(), SimDuration::from_nanos(10));
        assert_eq!(parse_duration(" 60s ").unwrap(), SimDuration::from_secs(60));
    }

    #[test]
    fn durations_without_or_with_unknown_unit_are_errors() {
        assert!(parse_duration("90")
            .unwrap_err()
            .to_string()
            .contains("no unit"));
        assert!(parse_duration("5 days")
            .unwrap_err()
            .to_string()
            .contains("days"));
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("-5s").is_err());
    }

    #[test]
    fn sizes_distinguish_si_and_iec() {
        assert_eq!(parse_bytes("1KB").unwrap(), 1000);
        assert_eq!(parse_bytes("1KiB").unwrap(), 1024);
        assert_eq!(parse_bytes("1.9TB").unwrap(), 1_900_000_000_000);
        assert_eq!(parse_bytes("32MiB").unwrap(), 32 * 1024 * 1024);
        assert_eq!(parse_bytes("310").unwrap(), 310);
        assert_eq!(parse_bytes("1_024B").unwrap(), 1024);
        assert!(parse_bytes("3 parsecs").is_err());
    }

    #[test]
    fn durations_display_in_the_largest_exact_unit() {
        assert_eq!(SimDuration::from_secs(5400).to_string(), "90m");
        assert_eq!(SimDuration::from_millis(1500).to_string(), "1500ms");
        assert_eq!(SimDuration::ZERO.to_string(), "0s");
    }

    #[test]
    fn time_arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(SimTime::MAX + SimDuration::from_secs(1), SimTime::MAX);
        let later = SimTime::from_nanos(10);
        assert_eq!(
            SimTime::from_nanos(5).saturating_since(later),
            SimDuration::ZERO
        );
    }
}
