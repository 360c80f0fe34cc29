//! What a run reports: progress once per interval, and at the end the
//! whole run's metrics, per load and per shard, the time series, and data
//! mode's consistency check (`crate::check`).

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
    /// The processes (by index among the load's) an operation that
    /// failed every try ended, and when.
    pub failures: Vec<(u32, SimTime)>,
}

/// One load's thread search as it ran (`sim::load::SearchStep`).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadSearch {
    /// The load's name in the scenario.
    pub load: String,
    /// Whether it stopped once throughput stopped improving (`auto`).
    pub stop_at_saturation: bool,
    /// Each step that ran: its threads per process and its op rate (as
    /// simulated; a sampled run's are scaled in the summary).
    pub steps: Vec<(u32, f64)>,
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
    /// Per load that ran, in plan order (the plan's loads are those too).
    pub loads: Vec<LoadOutcome>,
    /// c-s's thread searches, one per load that had one.
    pub searches: Vec<ThreadSearch>,
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
    /// How much of the run could go in parallel, if it was asked for
    /// ([`super::run_probed`]).
    pub parallelism: Option<super::parallelism::ParallelismReport>,
    /// Data mode: what the clients' read check found.
    pub consistency: Option<crate::check::ConsistencyCheck>,
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
    /// JVM presets: each node's CPU by stage over the run
    /// (`models::jvm::JvmNode::stage_cpu`, in `Stage::ALL`'s order), in
    /// node order.
    pub stage_cpu: Vec<[SimDuration; models::jvm::STAGE_COUNT]>,
    /// JVM presets whose request stages are a shared pool of spinning
    /// workers (`models::jvm::JvmConfig::sep`): each node's, in node
    /// order; empty for the others.
    pub shared_pool: Vec<SharedPoolTally>,
}

/// A node's shared pool and event loop over a run
/// (`models::jvm::JvmNode::spin_cpu`, `shared_pool_runs`,
/// `event_loop_runs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SharedPoolTally {
    /// CPU of the spinners' looks.
    pub spin_cpu: SimDuration,
    /// Times a shared-pool worker was put on the core.
    pub runs: u64,
    /// Times the event loop was put on the core.
    pub event_loop_runs: u64,
    /// Workers spinning, integrated over the run
    /// (`models::sep::Spinners::spinning_time`).
    pub spinning: SimDuration,
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

/// Messages lost to network faults over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessagesLost {
    /// At the nodes' NICs: sent or arriving while cut, or dropped.
    pub at_nics: u64,
    /// Between nodes a partition separated.
    pub to_partitions: u64,
}
