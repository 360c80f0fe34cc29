//! `twin explore`: one scenario under many seeds, each run checked by the
//! checkers of [`crate::check`], so a seed that breaks a property is found
//! and can be replayed byte for byte with `twin run SCENARIO --seed S`.
//!
//! The checkers read data mode's bookkeeping, so a scenario to explore
//! runs in data mode ([`explorable`] refuses one that does not); each
//! states its property and when it applies, and a run where it does not
//! apply says why.
//!
//! A run that panics is a crash, reported apart from a checker failure.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::check::{check, Checked, Verdict};
use crate::cluster::RunPlan;
use crate::plan::{resolve, RunOverrides};
use crate::scenario::{Scenario, ScenarioError};

/// One seed's run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// Faults in force over the run (written and drawn).
    pub faults: usize,
    /// Topology operations in the script (written and drawn).
    pub actions: usize,
    /// The checkers' verdicts (empty if the run crashed).
    pub checks: Vec<Checked>,
    /// The panic message, if the run crashed.
    pub crash: Option<String>,
}

impl SeedReport {
    /// True if a checker found its property broken.
    pub fn failed(&self) -> bool {
        self.checks
            .iter()
            .any(|check| matches!(check.verdict, Verdict::Broken(_)))
    }
}

/// Refuses a scenario the checkers cannot read.
pub fn explorable(scenario: &Scenario) -> Result<(), ScenarioError> {
    let plan = resolve(scenario, &RunOverrides::default())?;
    if !plan.cluster.data_mode {
        return Err(scenario.error(
            "fidelity.mode",
            "twin explore checks what reads return and what replicas hold, which only data mode keeps; set [fidelity] mode = \"data\"",
        ));
    }
    Ok(())
}

/// Runs `scenario` with `seed` (after `adjust` has its way with the plan:
/// tests break things on purpose) and checks it.
pub fn run_seed(
    scenario: &Scenario,
    seed: u64,
    adjust: &dyn Fn(&mut RunPlan),
) -> Result<SeedReport, ScenarioError> {
    let mut plan = resolve(
        scenario,
        &RunOverrides {
            seed: Some(seed),
            ..RunOverrides::default()
        },
    )?;
    adjust(&mut plan);
    let faults = plan.faults.len();
    let actions = plan.operations.len();
    let run = catch_unwind(AssertUnwindSafe(|| crate::cluster::run(plan, &mut |_| {})));
    Ok(match run {
        Ok(Ok(outcome)) => SeedReport {
            seed,
            faults,
            actions,
            checks: check(&outcome),
            crash: None,
        },
        // A mechanism asked for the impossible: as much a failure as a
        // panic.
        Ok(Err(error)) => SeedReport {
            seed,
            faults,
            actions,
            checks: Vec::new(),
            crash: Some(error.to_string()),
        },
        Err(payload) => SeedReport {
            seed,
            faults,
            actions,
            checks: Vec::new(),
            crash: Some(
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
                    .unwrap_or_else(|| "a panic without a message".into()),
            ),
        },
    })
}
