//! `[data]`: what each shard holds before the first load starts
//! (partitions, row size, key range, compaction state, cache warmth).
//!
//! The numbers are the scenario's; the bounds are the twin's: at most 1e15
//! partitions and 4 GiB a row ([`MAX_ROW_BYTES`], where cassandra-stress's
//! own column values stop too).

use units::SimDuration;

use crate::cluster::{Preload, TableStart};
use crate::scenario::{Scenario, ScenarioError};

/// The largest row `[data] row_bytes` may give (cassandra-stress's own
/// column values stop at 4 GiB a row too).
pub const MAX_ROW_BYTES: u64 = 4 << 30;

/// `[data]`, checked: what each shard holds at the start.
pub(super) fn resolve_data(scenario: &Scenario) -> Result<Option<Preload>, ScenarioError> {
    let Some(data) = &scenario.data else {
        return Ok(None);
    };
    let fail = |field: &str, reason: String| Err(scenario.error(&format!("data.{field}"), reason));
    if !(data.partitions.is_finite() && data.partitions >= 1.0 && data.partitions <= 1e15) {
        return fail(
            "partitions",
            format!(
                "{} is not a number of partitions between 1 and 1e15",
                units::format_number(data.partitions)
            ),
        );
    }
    if !(1..=MAX_ROW_BYTES).contains(&data.row_bytes.0) {
        return fail(
            "row_bytes",
            format!(
                "{} is outside 1 B..=4 GiB (a row's size)",
                units::format_bytes(data.row_bytes.0)
            ),
        );
    }
    let partitions = data.partitions.round() as u64;
    let [first_key, last_key] = data.key_range.unwrap_or([1, partitions]);
    if first_key > last_key {
        return fail("key_range", format!("[{first_key}, {last_key}] is empty"));
    }
    for (field, value, accepted) in [
        (
            "compaction",
            &data.compaction,
            &["size-tiered", "leveled"][..],
        ),
        ("state", &data.state, &["compacted", "steady"][..]),
        ("cache", &data.cache, &["cold", "warm"][..]),
    ] {
        if let Some(value) = value {
            if !accepted.contains(&value.as_str()) {
                let accepted: Vec<String> = accepted.iter().map(|a| format!("\"{a}\"")).collect();
                return fail(
                    field,
                    format!(
                        "`{value}` is not supported; accepted: {}",
                        accepted.join(", ")
                    ),
                );
            }
        }
    }
    let window = match data.window {
        None => None,
        Some(window) => {
            if data.state.as_deref() == Some("steady") {
                return fail(
                    "window",
                    "a window begins compacted; `state = \"steady\"` is already long into the load (leave one out)".into(),
                );
            }
            if data.compaction.as_deref() == Some("leveled") {
                return fail(
                    "window",
                    "carries size-tiered tiers forward; leveled tables are not supported".into(),
                );
            }
            if window.0 == SimDuration::ZERO {
                return fail("window", "must be longer than 0".into());
            }
            Some(window.0)
        }
    };
    Ok(Some(Preload {
        partitions,
        row_bytes: data.row_bytes.0,
        first_key,
        last_key,
        warm_cache: data.cache.as_deref() == Some("warm"),
        start: match (data.state.as_deref(), window) {
            (_, Some(window)) => TableStart::Window(window),
            (Some("steady"), None) => TableStart::Steady,
            _ => TableStart::Compacted,
        },
        steady: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::testing::assert_refused;

    /// Each numeric setting this file resolves is, past its range, one
    /// line naming the field (and never wraps around into a small number).
    #[test]
    fn settings_past_their_range_are_one_line_errors_naming_the_field() {
        assert_refused(&[
            (
                "scylla-3.0",
                "i3.large",
                "[data]\npartitions = 1e300\nrow_bytes = \"100B\"",
                "data.partitions",
                "1e300 is not",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[data]\npartitions = 1e6\nrow_bytes = \"5GiB\"",
                "data.row_bytes",
                "outside 1 B..=4 GiB",
            ),
        ]);
    }
}
