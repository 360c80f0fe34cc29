//! `[controller]`: the backlog controllers (compaction and flush) of the
//! preset, with the scenario's curves, ticks or static shares over them.
//!
//! The curves and ticks are the preset's (`engine::controller::
//! ControllerVersion`, from scylla-mechanisms.md section 1): none in Scylla
//! 2.1 and Cassandra, the 2.2 / 2.3 / 3.0 shapes after. The scenario may
//! replace a curve's points, its tick (at least 1 ms) or pin static shares.

use units::SimDuration;

use crate::cluster::Controllers;
use crate::preset::Preset;
use crate::scenario::{HumanDuration, Scenario, ScenarioError};
use engine::controller::{BacklogController, ControllerVersion};

/// `; controllers: ...` for the describe line.
pub(super) fn describe_controllers(controllers: &Controllers) -> String {
    let one = |controller: &Option<BacklogController>| match controller {
        None => "none".to_string(),
        Some(BacklogController::Static(shares)) => format!("static {shares} shares"),
        Some(BacklogController::Curve { curve, tick }) => {
            let points: Vec<String> = curve
                .points()
                .iter()
                .map(|p| format!("({}, {})", p.input, p.output))
                .collect();
            format!("{} every {tick}", points.join(" "))
        }
    };
    format!(
        "; compaction controller: {}; flush controller: {}",
        one(&controllers.compaction),
        one(&controllers.flush)
    )
}

/// The backlog controllers of a preset (scylla-mechanisms.md section 1):
/// none in 2.1, the 2.2 / 2.3 / 3.0 curves and ticks after.
fn preset_controllers(preset: Preset) -> Controllers {
    let version = match preset {
        Preset::Scylla2_2 => ControllerVersion::Scylla2_2,
        Preset::Scylla2_3 => ControllerVersion::Scylla2_3,
        Preset::Scylla3_0 => ControllerVersion::Scylla3_0,
        Preset::Scylla2_1 | Preset::Cassandra3_11 | Preset::Cassandra5_0 => {
            return Controllers::default()
        }
    };
    Controllers {
        compaction: Some(BacklogController::Curve {
            curve: version.compaction_curve(),
            tick: version.compaction_tick(),
        }),
        flush: Some(BacklogController::Curve {
            curve: version.flush_curve(),
            tick: version.flush_tick(),
        }),
    }
}

/// The preset's controllers with the scenario's `[controller]` applied.
pub(super) fn scenario_controllers(
    scenario: &Scenario,
    preset: Preset,
) -> Result<Controllers, ScenarioError> {
    let mut controllers = preset_controllers(preset);
    let Some(section) = &scenario.controller else {
        return Ok(controllers);
    };
    for (name, settings, slot) in [
        (
            "compaction",
            &section.compaction,
            &mut controllers.compaction,
        ),
        ("flush", &section.flush, &mut controllers.flush),
    ] {
        let Some(settings) = settings else { continue };
        let Some(BacklogController::Curve { curve, tick }) = slot.clone() else {
            return Err(scenario.error(
                &format!("controller.{name}"),
                format!("{preset} has no backlog controllers (they arrived in Scylla 2.2); remove [controller.{name}] or use scylla-2.2 or later"),
            ));
        };
        if let Some(shares) = settings.static_shares {
            if !(shares.is_finite() && shares > 0.0) {
                return Err(scenario.error(
                    &format!("controller.{name}.static_shares"),
                    format!(
                        "{} is not a positive number of shares",
                        units::format_number(shares)
                    ),
                ));
            }
            if settings.points.is_some() || settings.tick.is_some() {
                return Err(scenario.error(&format!("controller.{name}.static_shares"), "static shares disable the controller: give static_shares or points/tick, not both"));
            }
            *slot = Some(BacklogController::Static(shares));
            continue;
        }
        let curve = match &settings.points {
            Some(points) => {
                let points: Vec<(f64, f64)> = points
                    .iter()
                    .map(|[input, shares]| (*input, *shares))
                    .collect();
                engine::controller::ControllerCurve::new(&points).map_err(|error| {
                    scenario.error(&format!("controller.{name}.points"), error.to_string())
                })?
            }
            None => curve,
        };
        let tick = match settings.tick {
            Some(HumanDuration(tick)) if tick < SimDuration::from_millis(1) => {
                return Err(scenario.error(
                    &format!("controller.{name}.tick"),
                    format!("{tick} is shorter than the 1ms minimum"),
                ));
            }
            Some(HumanDuration(tick)) => tick,
            None => tick,
        };
        *slot = Some(BacklogController::Curve { curve, tick });
    }
    Ok(controllers)
}
