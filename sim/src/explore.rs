//! `twin explore`: one scenario under many seeds, each run checked by the
//! checkers below, so a seed that breaks a property is found and can be
//! replayed byte for byte with `twin run SCENARIO --seed S`.
//!
//! The checkers read data mode's bookkeeping (`ConsistencyCheck`), so a
//! scenario to explore runs in data mode; each states its property and
//! when it applies, and a run where it does not apply says why:
//! - *acknowledged writes are read back*: a read returns at least the newest
//!   version acknowledged before it was issued. It holds whenever every
//!   load's reads and writes overlap in a replica (read `block_for` + write
//!   `block_for` > RF, e.g. QUORUM and QUORUM) however many replicas faults
//!   take away: a lost replica costs availability, never an acknowledged
//!   write.
//! - *answers are held by their level*: when a client has a write's
//!   acknowledgement, or a read's answer, at least as many replicas as its
//!   level blocks for hold that version (a replica applies a write before
//!   it answers; a read repairs the replicas it read before it answers).
//!   It is what QUORUM's overlap and monotonic reads rest on, checked at
//!   the moment of each answer rather than by a later read that happens to
//!   meet the gap.
//! - *replicas hold every acknowledged write*: with hinted handoff and an
//!   end of run quiet for 30 s (no write, no fault), every replica of every
//!   acknowledged key holds its newest acknowledged version.
//!
//! A crash destroys some acknowledged versions by design, and both checkers
//! count those apart rather than as failures: the hints a crashed
//! coordinator held in memory (only a repair restores that replica), and
//! in periodic commitlog mode the rows a crashed replica had acknowledged
//! from its commitlog buffer (a QUORUM read may then miss them: the
//! replica is one of RF - QUORUM lost for good for that write); and the
//! hints a node that left the ring held (Scylla 3.0 does not hand them
//! on). So is what a topology change under faults leaves behind in Scylla
//! 3.0 without a repair: a write a joining (pending) replica missed is
//! hinted, and a hint replayed while that node is still pending goes to
//! the natural replicas instead, so the new replica lacks it; and each
//! range streams from one node, so a new owner that streamed it from a
//! node lacking a version (owed a hint, or crash-lost) lacks it too.
//!
//! Topology operations (`[[action]]`, or `[actions.random]` drawn from the
//! seed) run under the same checkers: after a bootstrap, decommission or
//! removenode, every new owner must hold what was acknowledged, whether it
//! came by streaming or as a pending replica's write.
//!
//! A run that panics is a crash, reported apart from a checker failure.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::cluster::{RunOutcome, RunPlan};
use crate::plan::{resolve, RunOverrides};
use crate::scenario::{Scenario, ScenarioError};

/// What a checker found in one run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    /// The property held.
    Held,
    /// It did not: what broke it (key, replicas, time).
    Broken(String),
    /// It does not apply to this run, and why.
    NotApplicable(String),
}

impl Verdict {
    /// The verdict in a word: `held`, `BROKEN` or `n/a`.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Held => "held",
            Verdict::Broken(_) => "BROKEN",
            Verdict::NotApplicable(_) => "n/a",
        }
    }

    /// What broke, or why it does not apply (none when it held).
    pub fn detail(&self) -> Option<&str> {
        match self {
            Verdict::Held => None,
            Verdict::Broken(detail) | Verdict::NotApplicable(detail) => Some(detail),
        }
    }
}

/// One checker's verdict.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Checked {
    /// The checker's short name.
    pub name: String,
    /// Its verdict.
    pub verdict: Verdict,
}

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

/// The checkers, in the order [`check`] gives their verdicts.
pub const CHECKERS: [&str; 3] = [
    "acknowledged-writes-read-back",
    "answers-held-by-their-level",
    "replicas-hold-acknowledged-writes",
];

/// Every checker's verdict on a finished run.
pub fn check(outcome: &RunOutcome) -> Vec<Checked> {
    vec![
        Checked {
            name: CHECKERS[0].into(),
            verdict: acknowledged_writes_read_back(outcome),
        },
        Checked {
            name: CHECKERS[1].into(),
            verdict: answers_held_by_their_level(outcome),
        },
        Checked {
            name: CHECKERS[2].into(),
            verdict: replicas_hold_acknowledged_writes(outcome),
        },
    ]
}

fn acknowledged_writes_read_back(outcome: &RunOutcome) -> Verdict {
    let Some(check) = &outcome.consistency else {
        return Verdict::NotApplicable("volume mode keeps no versions".into());
    };
    let rf = outcome.plan.cluster.replication_factor;
    let block_for = |level: engine::ConsistencyLevel| level.block_for(rf).clamp(1, rf);
    // Every load's level applies to its reads and its writes; two loads'
    // levels meet when one writes and the other reads.
    let weakest = outcome
        .plan
        .loads
        .iter()
        .map(|load| block_for(load.consistency))
        .min()
        .unwrap_or(rf);
    if 2 * weakest <= rf {
        return Verdict::NotApplicable(format!(
            "a level that waits for {weakest} of {rf} replicas may read where it did not write"
        ));
    }
    match check.first_stale {
        None => Verdict::Held,
        Some(stale) => Verdict::Broken(format!(
            "{} stale read(s) of {}; first at {:.3} s: key {} returned timestamp {} after {} was acknowledged",
            check.stale_reads,
            check.reads_checked,
            stale.at.as_nanos() as f64 / 1e9,
            stale.key,
            stale.returned,
            stale.acknowledged
        )),
    }
}

fn answers_held_by_their_level(outcome: &RunOutcome) -> Verdict {
    let Some(check) = &outcome.consistency else {
        return Verdict::NotApplicable("volume mode keeps no versions".into());
    };
    match check.first_thin {
        None => Verdict::Held,
        Some(thin) => Verdict::Broken(format!(
            "{} of {} answers came while fewer replicas held their version than their level blocks for; first at {:.3} s: {} of key {} at timestamp {} held by {} of the {} replicas it blocks for",
            check.thin_answers,
            check.answers_counted,
            thin.at.as_nanos() as f64 / 1e9,
            if thin.write { "a write" } else { "a read" },
            thin.key,
            thin.timestamp,
            thin.holders,
            thin.block_for
        )),
    }
}

fn replicas_hold_acknowledged_writes(outcome: &RunOutcome) -> Verdict {
    let Some(check) = &outcome.consistency else {
        return Verdict::NotApplicable("volume mode keeps no versions".into());
    };
    if outcome.plan.cluster.hints.is_none() {
        return Verdict::NotApplicable("no hinted handoff".into());
    }
    let Some(replicas) = &check.replicas else {
        return Verdict::NotApplicable(
            "the run did not end with 30 s without writes or faults (a longer run may: --set duration=...)".into(),
        );
    };
    match &replicas.first {
        None => Verdict::Held,
        Some((key, acknowledged, nodes)) => Verdict::Broken(format!(
            "{} replica(s) behind over {} keys; first: key {key}, acknowledged timestamp {acknowledged}, behind on node(s) {nodes:?}",
            replicas.behind, replicas.keys
        )),
    }
}
