//! *Replicas hold every acknowledged write*: once a run with hinted
//! handoff has been quiet long enough for its hints to go, every replica
//! of every acknowledged key holds its newest acknowledged version, but
//! for the versions a crash or a topology change took away (counted
//! apart: only a repair brings them back).

use std::collections::HashSet;

use engine::ShardAddress;
use units::{SimDuration, SimTime};

use super::{ConsistencyCheck, Verdict};
use crate::cluster::{RunOutcome, RunPlan};

/// How long a run must have been quiet (no write acknowledged, no fault in
/// force) before the end for the replica check to apply: a node is seen up
/// within a couple of seconds of a heal, a hint waits up to 10 s for its
/// flush, and a failed replay retries every second.
pub const REPLICA_CHECK_QUIET: SimDuration = SimDuration::from_secs(30);

/// The end-of-run check that every replica of every key holds the newest
/// version acknowledged for it (what hinted handoff promises once faults
/// have healed and the hints are replayed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaCheck {
    /// Keys checked.
    pub keys: u64,
    /// (key, replica node) pairs behind the newest acknowledged version.
    pub behind: u64,
    /// Of the pairs behind, those whose version a crash destroyed, or
    /// whose hint a node that left the ring held (not counted in
    /// `behind`): only a repair brings them back.
    pub lost_to_crashes: u64,
    /// Of the pairs behind, those whose node was still pending for the key
    /// (joining, or gaining its range) when the write's hint was replayed,
    /// so the hint went to the natural replicas instead (Scylla 3.0's
    /// hint sender; not counted in `behind`): only a repair brings them
    /// back.
    pub missed_while_pending: u64,
    /// Of the pairs behind, those whose node streamed the key's range from
    /// a node that lacked the version then (not counted in `behind`):
    /// only a repair brings them back.
    pub streamed_from_stale: u64,
    /// The first key behind (by key): the key, the version acknowledged
    /// and the nodes behind it.
    pub first: Option<(u64, u64, Vec<u32>)>,
}

/// Whether the replica check applies to a data-mode run of `plan` that
/// ends at `end`, its last write acknowledged at `last_write_at` and its
/// nodes owning `ownership` of the ring: with hinted handoff (or, without
/// it, a topology change on a healthy cluster), once the run has been
/// quiet long enough for the hints to go (no write acknowledged and no
/// fault in force for the last [`REPLICA_CHECK_QUIET`]).
pub(crate) fn replica_check_applies(
    plan: &RunPlan,
    ownership: &[f64],
    last_write_at: SimTime,
    end: SimTime,
) -> bool {
    // Without hints, replicas converge only if nothing failed: a
    // topology change on a healthy cluster still owes every new owner
    // its data (streamed, or written as a pending replica).
    if plan.cluster.hints.is_none() && (plan.operations.is_empty() || !plan.faults.is_empty()) {
        return false;
    }
    // A node removed from the ring (a removenode's crashed node) may
    // stay down to the end: it replicates nothing.
    let in_ring = |node: &u32| {
        ownership
            .get(*node as usize)
            .is_some_and(|&owned| owned > 0.0)
    };
    let faults: Vec<crate::faults::Fault> = plan
        .faults
        .iter()
        .filter(|fault| fault.kind.nodes().iter().any(in_ring))
        .cloned()
        .collect();
    let Some(faults_end) = crate::faults::latest_end(&faults).map(|end| SimTime::ZERO + end) else {
        return false; // a fault lasts to the end
    };
    end - last_write_at.max(faults_end) >= REPLICA_CHECK_QUIET
}

/// Whether every replica of every acknowledged key in `check` holds its
/// newest acknowledged version, but for the versions a crash destroyed,
/// those whose hint was replayed while the replica was pending (the
/// (key, node, timestamp) entries of `redirected`) and those a node
/// streamed from a node that lacked them (counted apart). `replicas_of`
/// writes a key's replicas into its buffer and gives their count;
/// `held_version` is the timestamp of the newest version of a key a node
/// holds (0: none), `None` if the key's shard is not simulated.
pub(crate) fn compare_replicas(
    check: &ConsistencyCheck,
    redirected: &HashSet<(u64, u32, u64)>,
    mut replicas_of: impl FnMut(u64, &mut [ShardAddress]) -> usize,
    held_version: impl Fn(u32, u64) -> Option<u64>,
) -> ReplicaCheck {
    let mut result = ReplicaCheck::default();
    let mut replicas = [ShardAddress { node: 0, shard: 0 }; engine::coordinator::MAX_REPLICAS];
    for (key, acknowledged) in check.acknowledged_sorted() {
        result.keys += 1;
        let count = replicas_of(key, &mut replicas);
        let mut behind = Vec::new();
        for replica in &replicas[..count] {
            let Some(held) = held_version(replica.node, key) else {
                continue; // not simulated
            };
            if held >= acknowledged {
                continue;
            }
            let entry = (key, replica.node, acknowledged);
            if check.lost_to_crash(key, replica.node, acknowledged) {
                result.lost_to_crashes += 1;
            } else if redirected.contains(&entry) {
                result.missed_while_pending += 1;
            } else if check.streamed_stale_to(key, replica.node, acknowledged) {
                result.streamed_from_stale += 1;
            } else {
                behind.push(replica.node);
            }
        }
        result.behind += behind.len() as u64;
        if !behind.is_empty() && result.first.is_none() {
            result.first = Some((key, acknowledged, behind));
        }
    }
    result
}

/// The checker's verdict on a finished run.
pub(super) fn replicas_hold_acknowledged_writes(outcome: &RunOutcome) -> Verdict {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key's replicas are nodes 0, 1 and 2.
    fn three_replicas(_key: u64, out: &mut [ShardAddress]) -> usize {
        for (node, slot) in out.iter_mut().take(3).enumerate() {
            *slot = ShardAddress {
                node: node as u32,
                shard: 0,
            };
        }
        3
    }

    #[test]
    fn replicas_behind_an_acknowledged_write_are_counted_and_the_first_key_named() {
        let mut check = ConsistencyCheck::default();
        check.write_acknowledged(SimTime::ZERO, 9, 100);
        check.write_acknowledged(SimTime::ZERO, 4, 100);
        // Node 2 holds nothing of key 9 and an old version of key 4; node
        // 1's shard is not simulated.
        let held = |node: u32, key: u64| match (node, key) {
            (1, _) => None,
            (2, 9) => Some(0),
            (2, 4) => Some(50),
            _ => Some(100),
        };
        let result = compare_replicas(&check, &HashSet::new(), three_replicas, held);
        assert_eq!(result.keys, 2);
        assert_eq!(result.behind, 2);
        assert_eq!(result.first, Some((4, 100, vec![2])), "the first by key");
    }

    #[test]
    fn versions_a_crash_destroyed_or_a_pending_replica_missed_are_counted_apart() {
        let mut check = ConsistencyCheck::default();
        check.write_acknowledged(SimTime::ZERO, 4, 100);
        check.hints_gone(&[(
            1,
            engine::hints::Hint {
                key: 4,
                timestamp: 100,
                value_bytes: 10,
                rows: 1,
                bytes: 64,
            },
        )]);
        check.streamed_stale(0, &[(4, 100)]);
        let redirected: HashSet<(u64, u32, u64)> = [(4, 2, 100)].into_iter().collect();
        let result = compare_replicas(&check, &redirected, three_replicas, |_, _| Some(0));
        assert_eq!(result.lost_to_crashes, 1);
        assert_eq!(result.missed_while_pending, 1);
        assert_eq!(result.streamed_from_stale, 1);
        assert_eq!(result.behind, 0);
        assert_eq!(result.first, None);
    }
}
