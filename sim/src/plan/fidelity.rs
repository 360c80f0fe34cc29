//! `[fidelity] mode`: volume mode (sizes and key-range summaries, the
//! default) or data mode (every row stored, for correctness checks).
//!
//! Data mode starts empty, so it cannot be combined with `[data]`'s
//! preloaded volume-mode SSTables. No numbers of its own.

use crate::scenario::{Scenario, ScenarioError};

/// `[fidelity] mode`, checked: true for data mode.
pub(super) fn resolve_fidelity(scenario: &Scenario) -> Result<bool, ScenarioError> {
    let Some(fidelity) = &scenario.fidelity else {
        return Ok(false);
    };
    match fidelity.mode.as_str() {
        "volume" => Ok(false),
        "data" if scenario.data.is_some() => Err(scenario.error(
            "fidelity.mode",
            "data mode keeps every row in memory and starts empty; `[data]` preloads volume-mode SSTables (use mode = \"volume\", or populate with a write load first)",
        )),
        "data" => Ok(true),
        other => Err(scenario.error(
            "fidelity.mode",
            format!("`{other}` is not a fidelity; accepted: \"volume\", \"data\""),
        )),
    }
}
