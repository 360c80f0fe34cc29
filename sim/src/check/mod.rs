//! The checkers a run's outcome is judged by: each states a property of
//! what the clients were told and what the replicas hold, and gives a
//! [`Verdict`] on a finished run (held, broken with what broke it, or not
//! applicable and why). `twin explore` runs one scenario under many seeds
//! and judges each run by them; `twin run` judges a data-mode run the same
//! way, so the replay of a failing seed fails too.
//!
//! The checkers read data mode's bookkeeping ([`ConsistencyCheck`], in
//! `consistency.rs`), which the cluster harness feeds as the run goes (what
//! was acknowledged, what each read returned and how many replicas held
//! each answer, what crashes and streams took away), so a run to check
//! runs in data mode. One file per checker, in [`CHECKERS`] order:
//! - `read_back.rs`, *acknowledged writes are read back*: a read returns
//!   at least the newest version acknowledged before it was issued. It
//!   holds whenever every load's reads and writes overlap in a replica
//!   (read `block_for` + write `block_for` > RF, e.g. QUORUM and QUORUM)
//!   however many replicas faults take away: a lost replica costs
//!   availability, never an acknowledged write.
//! - `answers_held.rs`, *answers are held by their level*: when a client
//!   has a write's acknowledgement, or a read's answer, at least as many
//!   replicas as its level blocks for hold that version (a replica applies
//!   a write before it answers; a read repairs the replicas it read before
//!   it answers). It is what QUORUM's overlap and monotonic reads rest on,
//!   checked at the moment of each answer rather than by a later read that
//!   happens to meet the gap.
//! - `replicas.rs`, *replicas hold every acknowledged write*: with hinted
//!   handoff and an end of run quiet for 30 s (no write, no fault), every
//!   replica of every acknowledged key holds its newest acknowledged
//!   version (the end-of-run comparison of every replica with what was
//!   acknowledged, [`ReplicaCheck`]).
//!
//! A crash destroys some acknowledged versions by design, and both the
//! read-back and the replica checker count those apart rather than as
//! failures: the hints a crashed coordinator held in memory (only a repair
//! restores that replica), and in periodic commitlog mode the rows a
//! crashed replica had acknowledged from its commitlog buffer (a QUORUM
//! read may then miss them: the replica is one of RF - QUORUM lost for good
//! for that write); and the hints a node that left the ring held (Scylla
//! 3.0 does not hand them on). So is what a topology change under faults
//! leaves behind in Scylla 3.0 without a repair: a write a joining
//! (pending) replica missed is hinted, and a hint replayed while that node
//! is still pending goes to the natural replicas instead, so the new
//! replica lacks it; and each range streams from one node, so a new owner
//! that streamed it from a node lacking a version (owed a hint, or
//! crash-lost) lacks it too.
//!
//! Topology operations (`[[action]]`, or `[actions.random]` drawn from the
//! seed) run under the same checkers: after a bootstrap, decommission or
//! removenode, every new owner must hold what was acknowledged, whether it
//! came by streaming or as a pending replica's write.

use crate::cluster::RunOutcome;

mod answers_held;
mod consistency;
mod read_back;
mod replicas;

pub use answers_held::ThinAnswer;
pub use consistency::ConsistencyCheck;
pub use read_back::StaleRead;
pub(crate) use replicas::{compare_replicas, replica_check_applies};
pub use replicas::{ReplicaCheck, REPLICA_CHECK_QUIET};

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
            verdict: read_back::acknowledged_writes_read_back(outcome),
        },
        Checked {
            name: CHECKERS[1].into(),
            verdict: answers_held::answers_held_by_their_level(outcome),
        },
        Checked {
            name: CHECKERS[2].into(),
            verdict: replicas::replicas_hold_acknowledged_writes(outcome),
        },
    ]
}
