//! Data mode's bookkeeping, fed by the cluster harness as the run goes:
//! the newest version acknowledged per key, what each read returned and
//! how many replicas held each answer, and the versions crashes, departed
//! nodes and streams from a stale node took away (counted apart by the
//! checkers, not as failures).

use std::collections::HashSet;

use units::SimTime;

use super::{ReplicaCheck, StaleRead, ThinAnswer};

/// Data mode's client-side check of what reads return: a read must return
/// a version at least as new as the newest write acknowledged (to any
/// client) before the read was issued. Reads that do not are *stale*: what
/// CL=ONE with lagging replicas, or a missing read repair, looks like.
#[derive(Clone, Debug, Default)]
pub struct ConsistencyCheck {
    /// Newest acknowledged write timestamp per key (looked up by key; the
    /// end-of-run check sorts the keys before it reports any).
    acknowledged: std::collections::HashMap<u64, u64>,
    /// Reads answered and checked.
    pub reads_checked: u64,
    /// Reads that returned an older version than one acknowledged before
    /// they began.
    pub stale_reads: u64,
    /// The first of them.
    pub first_stale: Option<StaleRead>,
    /// When the last write was acknowledged.
    pub last_write_at: SimTime,
    /// The end-of-run check of the replicas, when it applied.
    pub replicas: Option<ReplicaCheck>,
    /// Acknowledged versions crashes destroyed on a replica: (key, node,
    /// timestamp) of a crashed coordinator's hints for that node, and of
    /// rows a crashed node had acknowledged from its commitlog buffer.
    lost_to_crashes: std::collections::HashSet<(u64, u32, u64)>,
    /// (key, timestamp) of the rows a crashed node lost from its commitlog
    /// buffer: a QUORUM read that meets that node and one the write never
    /// reached may miss them (periodic mode's promise, not a bug).
    rows_lost_to_crashes: std::collections::HashSet<(u64, u64)>,
    /// (key, node, timestamp) a node lacks because it streamed the key's
    /// range from a node that lacked that version then.
    streamed_stale: HashSet<(u64, u32, u64)>,
    /// (key, timestamp) of the same.
    rows_streamed_stale: HashSet<(u64, u64)>,
    /// Reads that returned an older version than one acknowledged before
    /// them, where a topology change left a replica without it (streamed
    /// from a node that lacked it, or its hint replayed while it was
    /// pending; not counted in `stale_reads`).
    pub stale_after_topology_change: u64,
    /// Reads that returned an older version than one acknowledged before
    /// them, where a crash had destroyed that version on a replica (not
    /// counted in `stale_reads`).
    pub stale_after_crash_loss: u64,
    /// Writes acknowledged, and reads answered with a version, whose
    /// replicas were counted when the client had the answer.
    pub answers_counted: u64,
    /// Of those, answers the client had while fewer replicas held the
    /// version than the level blocks for (see [`ThinAnswer`]).
    pub thin_answers: u64,
    /// The first of them.
    pub first_thin: Option<ThinAnswer>,
    /// When each node last crashed (a crash may take a version away from
    /// a replica that held it).
    crashed_at: std::collections::HashMap<u32, SimTime>,
}

impl ConsistencyCheck {
    /// The newest version of `key` acknowledged so far (0: none).
    pub(crate) fn floor(&self, key: u64) -> u64 {
        self.acknowledged.get(&key).copied().unwrap_or(0)
    }

    pub(crate) fn write_acknowledged(&mut self, now: SimTime, key: u64, timestamp: u64) {
        let newest = self.acknowledged.entry(key).or_insert(timestamp);
        *newest = (*newest).max(timestamp);
        self.last_write_at = now;
    }

    /// A read of `key` issued after `floor` was acknowledged returned
    /// `returned`; `by_topology`: a topology change left a replica without
    /// `floor` (the caller knows the engines' hint records).
    pub(crate) fn read_answered(
        &mut self,
        now: SimTime,
        key: u64,
        floor: u64,
        returned: u64,
        by_topology: bool,
    ) {
        self.reads_checked += 1;
        if returned < floor && self.rows_lost_to_crashes.contains(&(key, floor)) {
            self.stale_after_crash_loss += 1;
        } else if returned < floor && by_topology {
            self.stale_after_topology_change += 1;
        } else if returned < floor {
            self.stale_reads += 1;
            self.first_stale.get_or_insert(StaleRead {
                at: now,
                key,
                acknowledged: floor,
                returned,
            });
        }
    }

    /// The client had a write's acknowledgement (`write`) or a read's
    /// answer of version `timestamp` of `key` while `holders` replicas
    /// held it and its level blocks for `block_for`.
    pub(crate) fn answer_held(&mut self, thin: ThinAnswer) {
        self.answers_counted += 1;
        if thin.holders < thin.block_for {
            self.thin_answers += 1;
            self.first_thin.get_or_insert(thin);
        }
    }

    /// Whether `node` crashed at or after `since`.
    pub(crate) fn crashed_since(&self, node: u32, since: SimTime) -> bool {
        self.crashed_at.get(&node).is_some_and(|&at| at >= since)
    }

    /// Node `node` crashed at `now` and lost what `losses` lists.
    pub(crate) fn crashed(&mut self, now: SimTime, node: u32, losses: &[engine::CrashLoss]) {
        self.crashed_at.insert(node, now);
        for loss in losses {
            for (destination, hint) in &loss.hints {
                self.lost_to_crashes
                    .insert((hint.key, *destination, hint.timestamp));
            }
            for (key, version) in &loss.rows {
                self.lost_to_crashes.insert((*key, node, version.timestamp));
                self.rows_lost_to_crashes.insert((*key, version.timestamp));
            }
        }
    }

    /// A stream plan from a node that lacked `stale` (key, acknowledged
    /// timestamp) of its ranges when it started (a hint owed to it, or a
    /// crash had destroyed them) gives `target` a copy without them, which
    /// nothing but a repair brings up to date.
    pub(crate) fn streamed_stale(&mut self, target: u32, stale: &[(u64, u64)]) {
        for &(key, timestamp) in stale {
            self.streamed_stale.insert((key, target, timestamp));
            self.rows_streamed_stale.insert((key, timestamp));
        }
    }

    /// Whether `node` lacks `key`'s version `timestamp` because it streamed
    /// it from a node that lacked it.
    pub(crate) fn streamed_stale_to(&self, key: u64, node: u32, timestamp: u64) -> bool {
        self.streamed_stale.contains(&(key, node, timestamp))
    }

    /// Whether some node streamed `key`'s version `timestamp` from a node
    /// that lacked it.
    pub(crate) fn row_streamed_stale(&self, key: u64, timestamp: u64) -> bool {
        self.rows_streamed_stale.contains(&(key, timestamp))
    }

    /// Every acknowledged key with its newest version, in no order.
    pub(crate) fn acknowledged(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.acknowledged
            .iter()
            .map(|(&key, &timestamp)| (key, timestamp))
    }

    /// A node stopped for good with `hints` (destination, hint) unsent:
    /// their replicas miss those versions, as after a crash.
    pub(crate) fn hints_gone(&mut self, hints: &[(u32, engine::hints::Hint)]) {
        for (destination, hint) in hints {
            self.lost_to_crashes
                .insert((hint.key, *destination, hint.timestamp));
        }
    }

    /// Whether a crash destroyed `key`'s version `timestamp` on `node`.
    pub(crate) fn lost_to_crash(&self, key: u64, node: u32, timestamp: u64) -> bool {
        self.lost_to_crashes.contains(&(key, node, timestamp))
    }

    /// Every acknowledged key, sorted, with its newest version.
    pub(crate) fn acknowledged_sorted(&self) -> Vec<(u64, u64)> {
        let mut keys: Vec<(u64, u64)> = self.acknowledged.iter().map(|(k, v)| (*k, *v)).collect();
        keys.sort_unstable();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_second(seconds: u64) -> SimTime {
        SimTime::ZERO + units::SimDuration::from_secs(seconds)
    }

    #[test]
    fn a_read_older_than_an_acknowledged_write_is_stale_and_the_first_is_kept() {
        let mut check = ConsistencyCheck::default();
        check.write_acknowledged(at_second(1), 7, 100);
        check.write_acknowledged(at_second(2), 7, 90);
        assert_eq!(check.floor(7), 100, "the newest acknowledged version stays");
        assert_eq!(check.floor(8), 0, "a key never written has no floor");
        assert_eq!(check.last_write_at, at_second(2));
        check.read_answered(at_second(3), 7, 100, 100, false);
        check.read_answered(at_second(4), 7, 100, 0, false);
        check.read_answered(at_second(5), 7, 100, 90, false);
        assert_eq!(check.reads_checked, 3);
        assert_eq!(check.stale_reads, 2);
        assert_eq!(
            check.first_stale,
            Some(StaleRead {
                at: at_second(4),
                key: 7,
                acknowledged: 100,
                returned: 0
            })
        );
    }

    #[test]
    fn versions_a_crash_or_a_topology_change_took_are_counted_apart_from_stale_reads() {
        let mut check = ConsistencyCheck::default();
        let lost = engine::CrashLoss {
            hints: Vec::new(),
            rows: vec![(
                7,
                engine::RowVersion {
                    timestamp: 100,
                    value_bytes: 10,
                },
            )],
        };
        check.crashed(at_second(2), 1, &[lost]);
        assert!(check.crashed_since(1, at_second(1)));
        assert!(!check.crashed_since(1, at_second(3)));
        assert!(check.lost_to_crash(7, 1, 100));
        check.read_answered(at_second(3), 7, 100, 0, false);
        check.read_answered(at_second(3), 8, 50, 0, true);
        assert_eq!(check.stale_after_crash_loss, 1);
        assert_eq!(check.stale_after_topology_change, 1);
        assert_eq!(check.stale_reads, 0);
        assert_eq!(check.first_stale, None);
    }

    #[test]
    fn an_answer_held_by_fewer_replicas_than_its_level_blocks_for_is_thin() {
        let mut check = ConsistencyCheck::default();
        let answer = ThinAnswer {
            at: at_second(1),
            write: true,
            key: 7,
            timestamp: 100,
            holders: 2,
            block_for: 2,
        };
        check.answer_held(answer);
        let thin = ThinAnswer {
            holders: 1,
            ..answer
        };
        check.answer_held(thin);
        check.answer_held(ThinAnswer { key: 8, ..thin });
        assert_eq!(check.answers_counted, 3);
        assert_eq!(check.thin_answers, 2);
        assert_eq!(check.first_thin, Some(thin));
    }
}
