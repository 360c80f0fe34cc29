//! *Answers are held by their level*: when a client has a write's
//! acknowledgement or a read's answer, at least as many replicas as its
//! consistency level blocks for hold that version.

use units::SimTime;

use super::Verdict;
use crate::cluster::RunOutcome;

/// A write acknowledged, or a read answered, while fewer replicas held its
/// version than its consistency level blocks for. A replica applies a
/// write before it answers and a read repairs the replicas it read before
/// it answers, so when the client has the answer, at least `block_for`
/// replicas (natural or pending) hold that version or a newer one: the
/// property QUORUM's overlap and monotonic reads rest on. Replicas that
/// crashed since the operation began, or whose shard is not simulated,
/// count as holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThinAnswer {
    /// When the client had the answer.
    pub at: SimTime,
    /// A write (else a read).
    pub write: bool,
    /// Its key.
    pub key: u64,
    /// The version written, or read.
    pub timestamp: u64,
    /// Replicas holding it (or newer) then.
    pub holders: u32,
    /// Replicas its level blocks for.
    pub block_for: u32,
}

/// The checker's verdict on a finished run.
pub(super) fn answers_held_by_their_level(outcome: &RunOutcome) -> Verdict {
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
