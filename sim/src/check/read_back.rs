//! *Acknowledged writes are read back*: a read returns at least the newest
//! version acknowledged (to any client) before it was issued, whenever
//! every load's reads and writes overlap in a replica.

use units::SimTime;

use super::Verdict;
use crate::cluster::RunOutcome;

/// A read that returned less than what was acknowledged before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaleRead {
    /// When it was answered.
    pub at: SimTime,
    /// Its key.
    pub key: u64,
    /// The newest timestamp acknowledged before it was issued.
    pub acknowledged: u64,
    /// The timestamp it returned (0: not found).
    pub returned: u64,
}

/// The checker's verdict on a finished run.
pub(super) fn acknowledged_writes_read_back(outcome: &RunOutcome) -> Verdict {
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
