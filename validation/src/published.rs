//! The published runs R1-R7 as data: one entry per figure, with its setup,
//! value, unit and source, and the published comparisons between setups.

/// Unit of a published figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds.
    Milliseconds,
    /// Microseconds.
    Microseconds,
    /// Seconds.
    Seconds,
    /// Operations per second.
    OpsPerSecond,
    /// I/O operations per second.
    Iops,
    /// A fraction of capacity, 0-100.
    Percent,
    /// I/O queue depth.
    QueueDepth,
    /// US dollars.
    Dollars,
    /// Megabytes (10^6 bytes) per second.
    MegabytesPerSecond,
}

/// What a figure measures, which sets its tolerance on the scorecard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Operations (or I/Os) per second.
    Throughput,
    /// A latency: a mean or a percentile.
    Latency,
    /// Server load: the servers' CPU (Scylla's reactor) utilisation.
    Load,
    /// How long an operation took.
    Duration,
    /// What a cluster costs.
    Cost,
    /// A device figure from a fio sweep other than IOPS and latency.
    Device,
    /// A probability computed from a reliability model.
    Probability,
}

impl Kind {
    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Latency => "latency",
            Kind::Load => "load",
            Kind::Duration => "duration",
            Kind::Cost => "cost",
            Kind::Device => "device",
            Kind::Probability => "probability",
        }
    }

    /// Largest relative error that passes: 30% for latencies, 15% for the
    /// rest (the fidelity issue's bar).
    pub fn tolerance(self) -> f64 {
        match self {
            Kind::Latency => 0.30,
            _ => 0.15,
        }
    }
}

/// One published figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    /// Run id, `R1`..`R7`.
    pub run: &'static str,
    /// Setup the figure was measured on (preset or device, and load).
    pub setup: &'static str,
    /// What was measured.
    pub metric: &'static str,
    /// The published value.
    pub value: f64,
    /// Its unit.
    pub unit: Unit,
    /// What it measures.
    pub kind: Kind,
    /// Whether the report gives the value itself or a bound on it.
    pub bound: Bound,
}

/// What a figure on the scorecard tests: a prediction, or what a fitted
/// constant or plain arithmetic already gives (validation/CALIBRATION.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// A constant was fitted to this figure (named).
    Fitted(&'static str),
    /// It follows from the inputs by arithmetic (why).
    Derived(&'static str),
    /// Nothing was fitted to it: the mechanisms predict it.
    Predicted,
}

impl Basis {
    /// `fitted`, `derived` or `predicted`.
    pub fn name(self) -> &'static str {
        match self {
            Basis::Fitted(_) => "fitted",
            Basis::Derived(_) => "derived",
            Basis::Predicted => "predicted",
        }
    }

    /// The constant fitted, or why it is derived.
    pub fn detail(self) -> Option<&'static str> {
        match self {
            Basis::Fitted(what) | Basis::Derived(what) => Some(what),
            Basis::Predicted => None,
        }
    }
}

/// The figures that are not predictions, as (run, setup prefix, metric,
/// basis); an empty metric stands for every figure of the setup. Every
/// other figure is predicted. The constants are CALIBRATION.md's.
const NOT_PREDICTED: &[(&str, &str, &str, Basis)] = &[
    (
        "R1",
        "scylla-2.2",
        "server load",
        Basis::Fitted("index_parse_ns and index_ns_per_byte (models::cost), with R5 Scylla 300K's load"),
    ),
    (
        "R2",
        "scylla-2.1",
        "write throughput",
        Basis::Fitted("compaction_ns_per_byte (models::cost)"),
    ),
    (
        "R2",
        "scylla-2.2",
        "write throughput",
        Basis::Fitted("write_request_ns (models::cost)"),
    ),
    (
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "server load",
        Basis::Fitted("index_parse_ns and index_ns_per_byte (models::cost), with R1 2.2's load"),
    ),
    (
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "server load",
        Basis::Fitted("CASSANDRA_FACTOR (models::cost)"),
    ),
    (
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, ",
        "read latency p99.9",
        Basis::Fitted("the G1 pause model's eden_bytes and young median (models::jvm), fitted to R5 Cassandra's four p99.9s"),
    ),
    (
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, ",
        "write latency p99.9",
        Basis::Fitted("the G1 pause model's eden_bytes and young median (models::jvm), fitted to R5 Cassandra's four p99.9s"),
    ),
    (
        "R5",
        "",
        "achieved throughput",
        Basis::Derived("the client's limit= on a cluster it does not saturate"),
    ),
    (
        "R5",
        "",
        "1-year reserved cost, all upfront",
        Basis::Derived("instance prices times node count"),
    ),
    (
        "R5",
        "",
        "probability of a concurrent double failure",
        Basis::Derived("the report's own formula over the node count"),
    ),
    (
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, ",
        "write latency mean",
        Basis::Derived("Little's law: the scenario's threads were chosen from the report's throughput and this mean, so the mean restates the throughput"),
    ),
    (
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, ",
        "read latency mean",
        Basis::Derived("Little's law: the scenario's threads were chosen from the report's throughput and this mean, so the mean restates the throughput"),
    ),
    (
        "R6",
        "optane-p4800x",
        "",
        Basis::Fitted("the device constants (models::nvme::params): FIO_HOST_TURNAROUND_NS fitted to R6's knees, with write_bytes_per_s, write_buffer_ns and RAID_MD_OVERHEAD_NS"),
    ),
];

/// What `figure` tests: fitted, derived or predicted.
pub fn basis(figure: &Figure) -> Basis {
    NOT_PREDICTED
        .iter()
        .find(|(run, setup, metric, _)| {
            *run == figure.run
                && figure.setup.starts_with(setup)
                && (metric.is_empty() || *metric == figure.metric)
        })
        .map_or(Basis::Predicted, |(_, _, _, basis)| *basis)
}

/// What the twin lacks where a figure misses, as (run, setup prefix, the
/// mechanism or measurement missing), from CALIBRATION.md's account of each
/// miss ("Figures the calibration does not reach, and why", and the table
/// of measurements the references lack).
const MISSES: &[(&str, &str, &str)] = &[
    (
        "R1",
        "scylla-2.1",
        "per-task CPU variability (every task costs exactly its price, so shards queue as M/D/1 servers) and the c-s client's driver threads; 2.1's p99 swings with the owner shard of the clamped hot key 750000000 nearing saturation under MD5 digests",
    ),
    (
        "R1",
        "scylla-2.2",
        "per-task CPU variability (every task costs exactly its price, so shards queue as M/D/1 servers) and the c-s client's driver threads",
    ),
    (
        "R3",
        "",
        "the send side of an RPC (serializing each STREAM_MUTATION, its semaphore and future chain) is charged to nobody, and compaction of 4 KB partitions is priced by R2's small rows",
    ),
    (
        "R4",
        "",
        "R4's setup is not published (instance, schema, insert rate and threads, the iptables cut schedule are guessed), so the simulated cluster is nearly idle",
    ),
    (
        "R5",
        "scylla-2.2",
        "steady-state compaction: the 90-minute run flushed and compacted throughout, the case starts compacted and no shard flushes in its window; per-task CPU variability",
    ),
    (
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "how often whole c-s processes stall behind G1 pauses on several of the 40 nodes at once (R5's GC logs and the loaders' view are not published)",
    ),
    (
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "a broad moderate tail: CFS time slices and wake-ups beyond processor sharing, G1's concurrent marking threads and safepoints, and compaction (the case starts compacted)",
    ),
    (
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, population writes",
        "the population's later hours: the report's figure spans a population of hours, 2.3 TB a node, over which size-tiered compaction rewrites each row once per tier and took a growing share of the CPU (its words); the twin's 15 minutes from empty nodes reach the lowest tiers only, at R2's per-shard rate. Also unmodelled: 2.0's background-writer quota of 0.5",
    ),
    (
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from disk",
        "the keys read and what a read from disk costs: 600 MB/s a server at 1.3M reads/s is ~1.4 KB a replica read, where the twin's uniform keys over all 45e9 partitions miss the cache 98% of the time and read an index and a data page (8 KiB) for each, at the ~0.46 ms of reactor time fitted to R1's and R5's loads, so its shards are CPU-bound at 360K reads/s; the published distribution is unknown, and issue 47's one read price (the work R1's and R5's loads folded into it) would tell which part is the price",
    ),
    (
        "R6",
        "scylla-2.0 optane, 5 KB reads",
        "the read-from-disk price fitted to R1 and R5 carries work R6's Optane reads lack; R6's server load (charted only) would split the fixed price from the per-byte one",
    ),
];

/// What the twin lacks to reach `figure`, where CALIBRATION.md names it.
pub fn miss(figure: &Figure) -> Option<&'static str> {
    MISSES
        .iter()
        .find(|(run, setup, _)| *run == figure.run && figure.setup.starts_with(setup))
        .map(|(_, _, what)| *what)
}

/// How a figure is published: a value, or a bound the report states
/// (R6's "p95 < 0.5 ms").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The value itself: passes within its kind's tolerance.
    Value,
    /// "Below the value": passes when the simulated figure is below it.
    Below,
}

/// A published comparison: `candidate` against `baseline` on one metric.
/// Its size is the ratio of the two published figures; where the report
/// also states the change in words, that is kept beside it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Run id.
    pub run: &'static str,
    /// The metric compared.
    pub metric: &'static str,
    /// The baseline setup.
    pub baseline: &'static str,
    /// The candidate setup.
    pub candidate: &'static str,
    /// The improvement the report states in words, percent (positive =
    /// candidate better), where it states one.
    pub stated_improvement_percent: Option<f64>,
}

/// How a report says a figure runs its course, in words, where it charts
/// it without giving numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKind {
    /// Zero throughout.
    Zero,
    /// Non-zero, and lower at the end than at the start.
    Decays,
    /// Its mean over the last third within [`HOLDS_WITHIN`] of its mean
    /// over the first.
    Holds,
}

/// How far a series that [`ShapeKind::Holds`] may move: R7's node drop,
/// "throughput over the drop within 10% of before" (issue 47).
pub const HOLDS_WITHIN: f64 = 0.10;

/// A figure's course over a run, as the report charts it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Run id.
    pub run: &'static str,
    /// Setup.
    pub setup: &'static str,
    /// The series (a `CaseSeries` name).
    pub metric: &'static str,
    /// What the report says of it.
    pub shape: ShapeKind,
    /// In the report's words.
    pub statement: &'static str,
}

/// The courses the reports chart: R4's read repairs over the read phase.
pub const SHAPES: &[Shape] = &[
    Shape {
        run: "R4",
        setup: "scylla-2.3",
        metric: "read repairs per second",
        shape: ShapeKind::Decays,
        statement: "non-zero and decaying over the read phase",
    },
    Shape {
        run: "R4",
        setup: "scylla-3.0",
        metric: "read repairs per second",
        shape: ShapeKind::Zero,
        statement: "zero (hints replayed before the reads)",
    },
    Shape {
        run: "R7",
        setup: "scylla-2.0 6 x BM.DenseIO1.36, node drop at 2M reads/s",
        metric: "throughput",
        shape: ShapeKind::Holds,
        statement: "unchanged when a node leaves at ~2M reads/s (the last third within 10% of the first; the node drops at the end of the first)",
    },
];

/// A published report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// Run id.
    pub run: &'static str,
    /// Report title and year.
    pub source: &'static str,
}

/// The reports the runs come from.
pub const REPORTS: [Report; 7] = [
    Report { run: "R1", source: "Measuring Performance Improvements in Scylla 2.2 (2018)" },
    Report { run: "R2", source: "Measuring Performance Improvements in Scylla 2.2 (2018)" },
    Report { run: "R3", source: "Improved Performance in Scylla Open Source 3.0: Streaming and Hinted Handoffs (2019)" },
    Report { run: "R4", source: "Improved Performance in Scylla Open Source 3.0: Streaming and Hinted Handoffs (2019)" },
    Report { run: "R5", source: "AWS i3 Performance Benchmark: ScyllaDB on Bare Metal (2018)" },
    Report { run: "R6", source: "Intel Optane and Scylla: Providing the Speed of an In-memory Database with Persistency (2017)" },
    Report { run: "R7", source: "Supporting 4 Million transactions per second and 7 TB of data per node with Scylla on Oracle Cloud Infrastructure (2017)" },
];

const fn figure(
    run: &'static str,
    setup: &'static str,
    metric: &'static str,
    value: f64,
    unit: Unit,
    kind: Kind,
) -> Figure {
    Figure {
        run,
        setup,
        metric,
        value,
        unit,
        kind,
        bound: Bound::Value,
    }
}

/// A figure the report gives as a bound: "below `value`".
const fn below(
    run: &'static str,
    setup: &'static str,
    metric: &'static str,
    value: f64,
    unit: Unit,
    kind: Kind,
) -> Figure {
    Figure {
        bound: Bound::Below,
        ..figure(run, setup, metric, value, unit, kind)
    }
}

use Unit::*;

/// Every published figure.
pub const FIGURES: &[Figure] = &[
    // R1: 3 x i3.8xlarge, QUORUM reads at 80K/s, md5 (2.1) vs xxHash (2.2) digests.
    figure(
        "R1",
        "scylla-2.1",
        "read latency mean",
        2.6,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R1",
        "scylla-2.1",
        "read latency p95",
        4.9,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R1",
        "scylla-2.1",
        "read latency p99",
        7.8,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R1",
        "scylla-2.2",
        "read latency mean",
        1.8,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R1",
        "scylla-2.2",
        "read latency p95",
        3.3,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R1",
        "scylla-2.2",
        "read latency p99",
        4.5,
        Milliseconds,
        Kind::Latency,
    ),
    // R1's text: 80K reads/s is "about 50% CPU on the servers".
    figure("R1", "scylla-2.1", "server load", 50.0, Percent, Kind::Load),
    figure("R1", "scylla-2.2", "server load", 50.0, Percent, Kind::Load),
    // R2: unthrottled writes for 120 minutes, compaction controller.
    figure(
        "R2",
        "scylla-2.1",
        "write throughput",
        354_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R2",
        "scylla-2.2",
        "write throughput",
        418_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    // R3: streaming, 2.3 (RPC per fragment) vs 3.0 (RPC streams).
    figure(
        "R3",
        "scylla-2.3",
        "decommission, idle",
        895.0,
        Seconds,
        Kind::Duration,
    ),
    figure(
        "R3",
        "scylla-2.3",
        "add node, idle",
        1472.0,
        Seconds,
        Kind::Duration,
    ),
    figure(
        "R3",
        "scylla-2.3",
        "add node, under load",
        1834.0,
        Seconds,
        Kind::Duration,
    ),
    figure(
        "R3",
        "scylla-3.0",
        "decommission, idle",
        695.0,
        Seconds,
        Kind::Duration,
    ),
    figure(
        "R3",
        "scylla-3.0",
        "add node, idle",
        1236.0,
        Seconds,
        Kind::Duration,
    ),
    figure(
        "R3",
        "scylla-3.0",
        "add node, under load",
        1592.0,
        Seconds,
        Kind::Duration,
    ),
    // R4: QUORUM reads after intermittent failures; read repair vs hints.
    figure(
        "R4",
        "scylla-2.3",
        "read latency p95",
        5.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R4",
        "scylla-2.3",
        "read latency p99",
        12.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R4",
        "scylla-2.3",
        "read latency p99.9",
        38.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R4",
        "scylla-3.0",
        "read latency p95",
        2.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R4",
        "scylla-3.0",
        "read latency p99",
        4.5,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R4",
        "scylla-3.0",
        "read latency p99.9",
        34.0,
        Milliseconds,
        Kind::Latency,
    ),
    // R5: 4 x i3.metal Scylla 2.2 vs 40 x i3.4xlarge Cassandra 3.11, 50/50 QUORUM.
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "achieved throughput",
        304_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "server load",
        70.0,
        Percent,
        Kind::Load,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "read latency p95",
        8.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "read latency p99",
        12.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "read latency p99.9",
        36.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "write latency p95",
        3.2,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "write latency p99",
        4.8,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 300K",
        "write latency p99.9",
        9.9,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "achieved throughput",
        306_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "server load",
        50.0,
        Percent,
        Kind::Load,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "read latency p95",
        5.3,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "read latency p99",
        131.3,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "read latency p99.9",
        483.2,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "write latency p95",
        2.4,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "write latency p99",
        11.9,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 300K",
        "write latency p99.9",
        474.4,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "achieved throughput",
        100_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "server load",
        25.0,
        Percent,
        Kind::Load,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "read latency p95",
        2.6,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "read latency p99",
        5.6,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "read latency p99.9",
        8.4,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "write latency p95",
        0.8,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "write latency p99",
        2.4,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal, 100K",
        "write latency p99.9",
        3.5,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "achieved throughput",
        100_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "server load",
        18.0,
        Percent,
        Kind::Load,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "read latency p95",
        1.2,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "read latency p99",
        8.6,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "read latency p99.9",
        286.6,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "write latency p95",
        0.8,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "write latency p99",
        1.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge, 100K",
        "write latency p99.9",
        283.7,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal",
        "1-year reserved cost, all upfront",
        112_100.0,
        Dollars,
        Kind::Cost,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge",
        "1-year reserved cost, all upfront",
        278_560.0,
        Dollars,
        Kind::Cost,
    ),
    figure(
        "R5",
        "cassandra-3.11 40 x i3.4xlarge",
        "probability of a concurrent double failure",
        2.7,
        Percent,
        Kind::Probability,
    ),
    figure(
        "R5",
        "scylla-2.2 4 x i3.metal",
        "probability of a concurrent double failure",
        0.27,
        Percent,
        Kind::Probability,
    ),
    // R6: fio sweeps of a RAID-0 of 2 x Optane P4800X.
    figure(
        "R6",
        "optane-p4800x x2, randread 4k",
        "knee queue depth",
        24.0,
        QueueDepth,
        Kind::Device,
    ),
    figure(
        "R6",
        "optane-p4800x x2, randread 4k",
        "IOPS at knee",
        1_000_000.0,
        Iops,
        Kind::Throughput,
    ),
    figure(
        "R6",
        "optane-p4800x x2, randread 4k",
        "latency at knee",
        18.0,
        Microseconds,
        Kind::Latency,
    ),
    figure(
        "R6",
        "optane-p4800x x2, randwrite 128k",
        "knee queue depth",
        8.0,
        QueueDepth,
        Kind::Device,
    ),
    figure(
        "R6",
        "optane-p4800x x2, randwrite 128k",
        "IOPS at knee",
        32_000.0,
        Iops,
        Kind::Throughput,
    ),
    figure(
        "R6",
        "optane-p4800x x2, randwrite 128k",
        "latency at knee",
        237.0,
        Microseconds,
        Kind::Latency,
    ),
    // R6's headline: "server-side p95 write/read latency < 0.5 ms at 165K
    // requests/s", read as the 5 KB payload's 3 c-s processes at 55,000/s
    // (3 x 55K = 165K; the 1 KB and 10 KB rates give no 165K).
    below(
        "R6",
        "scylla-2.0 optane, 5 KB writes 165K",
        "server write latency p95",
        0.5,
        Milliseconds,
        Kind::Latency,
    ),
    below(
        "R6",
        "scylla-2.0 optane, 5 KB reads 165K",
        "server read latency p95",
        0.5,
        Milliseconds,
        Kind::Latency,
    ),
    // R7: 6 x BM.DenseIO1.36, Scylla 2.0, QUORUM, 27 c-s processes; the
    // report's table (published-runs.md R7): throughput, mean, median,
    // p95, p99 per phase, and the disk read rate of the reads from disk.
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, population writes",
        "write throughput",
        900_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, population writes",
        "write latency mean",
        4.9,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, population writes",
        "write latency p50",
        3.9,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, population writes",
        "write latency p95",
        8.8,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, population writes",
        "write latency p99",
        13.0,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from memory",
        "read throughput",
        4_000_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from memory",
        "read latency mean",
        2.7,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from memory",
        "read latency p50",
        2.5,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from memory",
        "read latency p95",
        3.9,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from memory",
        "read latency p99",
        4.7,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from disk",
        "read throughput",
        1_300_000.0,
        OpsPerSecond,
        Kind::Throughput,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from disk",
        "read latency mean",
        6.9,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from disk",
        "read latency p50",
        3.7,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from disk",
        "read latency p95",
        9.3,
        Milliseconds,
        Kind::Latency,
    ),
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from disk",
        "read latency p99",
        13.6,
        Milliseconds,
        Kind::Latency,
    ),
    // "Reads from disk move ~600 MB/s per server".
    figure(
        "R7",
        "scylla-2.0 6 x BM.DenseIO1.36, reads from disk",
        "disk read per server",
        600.0,
        MegabytesPerSecond,
        Kind::Throughput,
    ),
];

/// The comparisons the scorecard checks: every one the reports state in
/// words (R1-R4, with the improvement they give), and R5's two axes (Scylla
/// against Cassandra at each rate, and each cluster at 300K against 100K).
pub const COMPARISONS: &[Comparison] = &[
    stated("R1", "read latency mean", "scylla-2.1", "scylla-2.2", 23.0),
    stated("R1", "read latency p95", "scylla-2.1", "scylla-2.2", 32.0),
    stated("R1", "read latency p99", "scylla-2.1", "scylla-2.2", 42.0),
    stated("R2", "write throughput", "scylla-2.1", "scylla-2.2", 18.0),
    stated("R3", "decommission, idle", "scylla-2.3", "scylla-3.0", 22.0),
    stated("R3", "add node, idle", "scylla-2.3", "scylla-3.0", 16.0),
    stated(
        "R3",
        "add node, under load",
        "scylla-2.3",
        "scylla-3.0",
        13.0,
    ),
    stated("R4", "read latency p95", "scylla-2.3", "scylla-3.0", 60.0),
    stated("R4", "read latency p99", "scylla-2.3", "scylla-3.0", 62.0),
    stated("R4", "read latency p99.9", "scylla-2.3", "scylla-3.0", 10.0),
    versus("R5", "read latency p99", R5_C300, R5_S300),
    versus("R5", "read latency p99.9", R5_C300, R5_S300),
    versus("R5", "write latency p99", R5_C300, R5_S300),
    versus("R5", "write latency p99.9", R5_C300, R5_S300),
    versus("R5", "read latency p99", R5_C100, R5_S100),
    versus("R5", "read latency p99.9", R5_C100, R5_S100),
    versus("R5", "write latency p99", R5_C100, R5_S100),
    versus("R5", "write latency p99.9", R5_C100, R5_S100),
    versus("R5", "read latency p99", R5_S100, R5_S300),
    versus("R5", "write latency p99", R5_S100, R5_S300),
    versus("R5", "server load", R5_S100, R5_S300),
    versus("R5", "read latency p99", R5_C100, R5_C300),
    versus("R5", "write latency p99", R5_C100, R5_C300),
    versus("R5", "server load", R5_C100, R5_C300),
];

const R5_S300: &str = "scylla-2.2 4 x i3.metal, 300K";
const R5_S100: &str = "scylla-2.2 4 x i3.metal, 100K";
const R5_C300: &str = "cassandra-3.11 40 x i3.4xlarge, 300K";
const R5_C100: &str = "cassandra-3.11 40 x i3.4xlarge, 100K";

const fn stated(
    run: &'static str,
    metric: &'static str,
    baseline: &'static str,
    candidate: &'static str,
    improvement_percent: f64,
) -> Comparison {
    Comparison {
        run,
        metric,
        baseline,
        candidate,
        stated_improvement_percent: Some(improvement_percent),
    }
}

const fn versus(
    run: &'static str,
    metric: &'static str,
    baseline: &'static str,
    candidate: &'static str,
) -> Comparison {
    Comparison {
        run,
        metric,
        baseline,
        candidate,
        stated_improvement_percent: None,
    }
}

impl Comparison {
    /// Candidate over baseline of the published figures.
    pub fn published_ratio(&self) -> f64 {
        let value = |setup| {
            find(self.run, setup, self.metric)
                .unwrap_or_else(|| panic!("{self:?}: no published figure for {setup}"))
                .value
        };
        value(self.candidate) / value(self.baseline)
    }
}

/// The figure of `run`, `setup` and `metric`, if published.
pub fn find(run: &str, setup: &str, metric: &str) -> Option<&'static Figure> {
    FIGURES
        .iter()
        .find(|figure| figure.run == run && figure.setup == setup && figure.metric == metric)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Improvement of `candidate` over `baseline`, percent, for a metric
    /// where lower is better (latency, time) or higher is better (throughput).
    fn improvement(comparison: &Comparison) -> f64 {
        let baseline = find(comparison.run, comparison.baseline, comparison.metric)
            .unwrap()
            .value;
        let candidate = find(comparison.run, comparison.candidate, comparison.metric)
            .unwrap()
            .value;
        if comparison.metric.contains("throughput") {
            (candidate - baseline) / baseline * 100.0
        } else {
            (baseline - candidate) / baseline * 100.0
        }
    }

    /// Every rule of `NOT_PREDICTED` names a figure, and the counts are
    /// CALIBRATION.md's: 15 fitted, 11 derived, the rest predicted.
    #[test]
    fn every_figure_has_a_basis_and_every_rule_a_figure() {
        for (run, setup, metric, _) in NOT_PREDICTED {
            assert!(
                FIGURES.iter().any(|figure| figure.run == *run
                    && figure.setup.starts_with(setup)
                    && (metric.is_empty() || figure.metric == *metric)),
                "no figure for {run} {setup} {metric}"
            );
        }
        let count = |name: &str| {
            FIGURES
                .iter()
                .filter(|figure| basis(figure).name() == name)
                .count()
        };
        assert_eq!(
            (count("fitted"), count("derived"), count("predicted")),
            (15, 11, FIGURES.len() - 26)
        );
        // The R1 2.1 load is predicted: only 2.2's and R5's were fitted.
        let r1_21_load = find("R1", "scylla-2.1", "server load").unwrap();
        assert_eq!(basis(r1_21_load), Basis::Predicted);
    }

    /// Every figure the committed quick scorecard misses has its missing
    /// mechanism named, and every named miss is of some figure.
    #[test]
    fn every_missed_figure_names_what_is_missing() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/baseline-quick.json"))
                .expect("the committed quick scorecard");
        let baseline: serde_json::Value = serde_json::from_str(&text).unwrap();
        let figures = baseline["figures"].as_array().unwrap();
        let mut missed = 0;
        for row in figures.iter().filter(|row| row["pass"] == false) {
            missed += 1;
            let field = |name: &str| row[name].as_str().unwrap().to_string();
            let figure =
                find(&field("run"), &field("setup"), &field("figure")).expect("a published figure");
            assert!(miss(figure).is_some(), "{figure:?} misses without a reason");
        }
        assert!(missed > 0);
        for (run, setup, _) in MISSES {
            assert!(
                FIGURES
                    .iter()
                    .any(|figure| figure.run == *run && figure.setup.starts_with(setup)),
                "no figure for {run} {setup}"
            );
        }
    }

    #[test]
    fn every_comparison_refers_to_published_figures_and_agrees_with_them() {
        for comparison in COMPARISONS {
            let Some(stated) = comparison.stated_improvement_percent else {
                assert!(comparison.published_ratio() > 0.0);
                continue;
            };
            let computed = improvement(comparison);
            // The report rounds; R1's mean is the one figure whose stated
            // improvement (23%) does not follow from its own table (2.6 ->
            // 1.8 ms is 31%); it is kept as published and flagged here.
            if comparison.run == "R1" && comparison.metric == "read latency mean" {
                assert!((computed - 30.8).abs() < 0.1);
                continue;
            }
            assert!(
                (computed - stated).abs() <= 1.0,
                "{comparison:?}: table gives {computed:.1}%"
            );
        }
    }

    #[test]
    fn every_run_has_a_report_and_the_blind_row_is_absent() {
        for figure in FIGURES {
            assert!(
                REPORTS.iter().any(|report| report.run == figure.run),
                "{figure:?}"
            );
            assert!(
                !figure.setup.contains("200K"),
                "R5's 200K row is a blind check"
            );
        }
    }
}
