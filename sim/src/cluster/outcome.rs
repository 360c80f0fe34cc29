//! What a run reports: progress once per interval, and at the end the
//! whole run's metrics, per load and per shard, the time series, and data
//! mode's consistency check.

use std::collections::HashSet;
use units::{SimDuration, SimTime};

use super::{RunPlan, TimeSpent};
use crate::load::OpKind;
use crate::metrics::{OpMetrics, ServerLatencies};
use crate::timeseries::TimeSeries;

/// Progress reported once per interval.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Simulated time now.
    pub now: SimTime,
    /// The run's end, if known.
    pub end: Option<SimTime>,
    /// Client operations completed so far.
    pub operations: u64,
    /// cassandra-stress style lines for this interval (load headers and
    /// interval lines), to print in order.
    pub lines: Vec<String>,
}

/// Whole-run results of one load.
pub struct LoadOutcome {
    /// Per op kind of the load, in `LoadPlan::op_kinds` order.
    pub ops: Vec<OpMetrics>,
    /// (first issue, last completion), for rates; for a `duration=` load
    /// at least to its end (c-s divides by the duration).
    pub window: (SimTime, SimTime),
    /// HdrHistogram interval logs per op kind: (interval start, length,
    /// V2-deflate serialized interval histogram in microseconds).
    pub intervals: Vec<Vec<SerializedInterval>>,
}

/// One serialized interval histogram.
pub struct SerializedInterval {
    /// Start of the interval.
    pub start: SimTime,
    /// Its length.
    pub length: SimDuration,
    /// V2-deflate serialized histogram (microseconds).
    pub histogram: Vec<u8>,
}

/// What a finished run produced (everything except wall-clock figures is a
/// pure function of the plan).
pub struct RunOutcome {
    /// The plan that ran.
    pub plan: RunPlan,
    /// Simulated time at the end.
    pub end: SimTime,
    /// Per op type metrics over all loads, in `OpKind` order.
    pub ops: Vec<OpMetrics>,
    /// Per op type: (first issue, last completion) times, for rates; a
    /// `duration=` load's window runs at least to its end (c-s divides by
    /// the duration).
    pub op_windows: Vec<(SimTime, SimTime)>,
    /// Per load, in plan order.
    pub loads: Vec<LoadOutcome>,
    /// The time series.
    pub timeseries: TimeSeries,
    /// Kernel events processed.
    pub events: u64,
    /// The events handled, by kind (`events` less any the run stopped
    /// before handling).
    pub event_counts: super::EventCounts,
    /// What happened: faults and the cluster's reactions.
    pub event_log: crate::events::EventLog,
    /// Messages the network faults lost.
    pub messages_lost: MessagesLost,
    /// Wall-clock seconds the run took (not deterministic; perf.json only).
    pub wall_seconds: f64,
    /// The fingerprint of the run's events, if it was asked for
    /// ([`super::run_traced`]).
    pub trace: Option<crate::trace::Trace>,
    /// Data mode: what the clients' read check found.
    pub consistency: Option<ConsistencyCheck>,
    /// Each shard at the end (node-major: node 0's shards first): its
    /// SSTables and its figures.
    pub shards: Vec<ShardOutcome>,
    /// Every node's coordinators' latencies over the run, merged.
    pub server: ServerLatencies,
    /// Where the simulated shards' CPU tasks and I/Os spent their time,
    /// summed over them.
    pub time_spent: TimeSpent,
    /// JVM presets: each node's garbage-collection pauses over the run, in
    /// node order (empty for Scylla's reactors).
    pub gc: Vec<models::jvm::GcStats>,
    /// JVM presets: what each node's G1 had learnt when the run ended
    /// (`None` for a G1 without evacuation), in node order; a later run's
    /// `[cluster.g1_start]` can start from it.
    pub g1_end: Vec<Option<models::jvm::G1History>>,
}

impl RunOutcome {
    /// The metrics of one op type over all loads, if any load ran it.
    pub fn op(&self, kind: OpKind) -> Option<&OpMetrics> {
        self.ops.iter().find(|ops| ops.kind == kind)
    }
}

/// One shard's state at the end of a run.
#[derive(Clone, Debug)]
pub struct ShardOutcome {
    /// The shard's node.
    pub node: u32,
    /// SSTables on disk, oldest first.
    pub sstables: Vec<engine::sstable::SSTable>,
    /// The engine's figures.
    pub stats: engine::ShardStats,
    /// Its hinted handoff (`None` if the preset keeps no hints).
    pub hints: Option<engine::HintsSummary>,
}

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

impl ConsistencyCheck {
    /// The newest version of `key` acknowledged so far (0: none).
    pub(super) fn floor(&self, key: u64) -> u64 {
        self.acknowledged.get(&key).copied().unwrap_or(0)
    }

    pub(super) fn write_acknowledged(&mut self, now: SimTime, key: u64, timestamp: u64) {
        let newest = self.acknowledged.entry(key).or_insert(timestamp);
        *newest = (*newest).max(timestamp);
        self.last_write_at = now;
    }

    /// A read of `key` issued after `floor` was acknowledged returned
    /// `returned`; `by_topology`: a topology change left a replica without
    /// `floor` (the caller knows the engines' hint records).
    pub(super) fn read_answered(
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
    pub(super) fn answer_held(&mut self, thin: ThinAnswer) {
        self.answers_counted += 1;
        if thin.holders < thin.block_for {
            self.thin_answers += 1;
            self.first_thin.get_or_insert(thin);
        }
    }

    /// Whether `node` crashed at or after `since`.
    pub(super) fn crashed_since(&self, node: u32, since: SimTime) -> bool {
        self.crashed_at.get(&node).is_some_and(|&at| at >= since)
    }

    /// Node `node` crashed at `now` and lost what `losses` lists.
    pub(super) fn crashed(&mut self, now: SimTime, node: u32, losses: &[engine::CrashLoss]) {
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
    pub(super) fn streamed_stale(&mut self, target: u32, stale: &[(u64, u64)]) {
        for &(key, timestamp) in stale {
            self.streamed_stale.insert((key, target, timestamp));
            self.rows_streamed_stale.insert((key, timestamp));
        }
    }

    /// Whether `node` lacks `key`'s version `timestamp` because it streamed
    /// it from a node that lacked it.
    pub(super) fn streamed_stale_to(&self, key: u64, node: u32, timestamp: u64) -> bool {
        self.streamed_stale.contains(&(key, node, timestamp))
    }

    /// Whether some node streamed `key`'s version `timestamp` from a node
    /// that lacked it.
    pub(super) fn row_streamed_stale(&self, key: u64, timestamp: u64) -> bool {
        self.rows_streamed_stale.contains(&(key, timestamp))
    }

    /// Every acknowledged key with its newest version, in no order.
    pub(super) fn acknowledged(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.acknowledged
            .iter()
            .map(|(&key, &timestamp)| (key, timestamp))
    }

    /// A node stopped for good with `hints` (destination, hint) unsent:
    /// their replicas miss those versions, as after a crash.
    pub(super) fn hints_gone(&mut self, hints: &[(u32, engine::hints::Hint)]) {
        for (destination, hint) in hints {
            self.lost_to_crashes
                .insert((hint.key, *destination, hint.timestamp));
        }
    }

    /// Whether a crash destroyed `key`'s version `timestamp` on `node`.
    pub(super) fn lost_to_crash(&self, key: u64, node: u32, timestamp: u64) -> bool {
        self.lost_to_crashes.contains(&(key, node, timestamp))
    }

    /// Every acknowledged key, sorted, with its newest version.
    pub(super) fn acknowledged_sorted(&self) -> Vec<(u64, u64)> {
        let mut keys: Vec<(u64, u64)> = self.acknowledged.iter().map(|(k, v)| (*k, *v)).collect();
        keys.sort_unstable();
        keys
    }
}

/// Messages lost to network faults over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessagesLost {
    /// At the nodes' NICs: sent or arriving while cut, or dropped.
    pub at_nics: u64,
    /// Between nodes a partition separated.
    pub to_partitions: u64,
}
