//! `[network]`: the one-way latency and jitter of a message between nodes.
//!
//! The defaults are `models::network`'s (`ONE_WAY_LATENCY`,
//! `JITTER_MEDIAN`); a scenario's value is bounded by
//! [`MAX_NETWORK_DELAY`] (10 s, far past any network a database spans).

use units::SimDuration;

use crate::scenario::{Scenario, ScenarioError};

/// The longest `[network] latency` and `jitter`: 10 s, far past any
/// network a database spans (a message that late has timed out).
pub const MAX_NETWORK_DELAY: SimDuration = SimDuration::from_secs(10);

/// `[network] latency` or `jitter` (`field`), at most
/// [`MAX_NETWORK_DELAY`]; `default` when unset.
pub(super) fn network_delay(
    scenario: &Scenario,
    field: &str,
    default: SimDuration,
) -> Result<SimDuration, ScenarioError> {
    let Some(network) = &scenario.network else {
        return Ok(default);
    };
    let delay = if field == "latency" {
        network.latency
    } else {
        network.jitter
    };
    match delay {
        None => Ok(default),
        Some(delay) if delay.0 <= MAX_NETWORK_DELAY => Ok(delay.0),
        Some(delay) => Err(scenario.error(
            &format!("network.{field}"),
            format!(
                "{} is longer than {MAX_NETWORK_DELAY}, the most a message's {field} may be",
                delay.0
            ),
        )),
    }
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
                "[network]\nlatency = \"11s\"",
                "network.latency",
                "longer than 10s",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[network]\njitter = \"1000h\"",
                "network.jitter",
                "longer than 10s",
            ),
        ]);
    }
}
