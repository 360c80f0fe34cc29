//! The results folder and the cassandra-stress style summary.
//!
//! Files (`twin run --out DIR`):
//! - `summary.json`: scenario, seed, simulated seconds, and per op type the
//!   count, rate and latency percentiles in milliseconds;
//! - `timeseries.csv`: one row per interval;
//! - `events.jsonl`: the faults injected and what happened to the cluster
//!   (`crate::events`), one JSON object per line;
//! - `hdr/<load>-<op>.hlog`: HdrHistogram interval logs per load and op;
//! - `charts/*.png`, `charts/*.svg`: throughput, latency, compactions,
//!   backlog and shares over time;
//! - `perf.json`: wall-clock figures of the run. It is the only file that
//!   differs between two runs of the same scenario and seed.
//! - `trace.json` (`twin run --trace`): the fingerprint of the run's
//!   events ([`crate::trace`]); `trace-events.txt` (`--trace-window`) the
//!   window's events in full.
//!
//! Everything but `perf.json` is built from simulated state only, with
//! sorted maps and fixed float formatting, so it is byte-identical across
//! runs and machines.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::cluster::{ops_per_second, RunOutcome};
use crate::metrics::OpMetrics;
use crate::metrics::{round3, LatencySummary};
use units::{SimDuration, SimTime};

/// The column header of cassandra-stress interval lines.
pub const STRESS_INTERVAL_HEADER: &str =
    "type,      total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   time,  errors";

/// A load's count of interval lines under c-s 4.0+'s `-reporting`
/// ([`models::cassandra_stress::Reporting`], `StressMetrics.recordInterval`):
/// an interval with operations is one; the total line prints on every
/// `output_every`-th and the header again (after a blank line) after every
/// `header_every`-th. Without `-reporting`, every interval's total line
/// prints and the header only at the start. `twin run` and `twin real`
/// print by it alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportingLines {
    output_lines: u32,
}

/// What prints after one interval ([`ReportingLines::after_interval`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalPrint {
    /// The total line (a single-op load's only line).
    pub total: bool,
    /// A blank line and the header, after the interval's lines.
    pub header_again: bool,
}

impl ReportingLines {
    /// Counts an interval (`had_operations`: any operation finished in
    /// it) and says what of it prints under `reporting`.
    pub fn after_interval(
        &mut self,
        reporting: models::cassandra_stress::Reporting,
        had_operations: bool,
    ) -> IntervalPrint {
        if had_operations {
            self.output_lines += 1;
        }
        let every = |n: u32| had_operations && self.output_lines.is_multiple_of(n);
        IntervalPrint {
            total: reporting.output_every <= 1 || every(reporting.output_every),
            header_again: reporting.header_every > 0 && every(reporting.header_every),
        }
    }
}

/// The per-second rates of one cassandra-stress interval line:
/// operations, partitions they touched (`pk/s`) and rows they wrote or
/// read back (`row/s`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalRates {
    /// Operations per second.
    pub ops: f64,
    /// Partitions per second.
    pub partitions: f64,
    /// Rows per second.
    pub rows: f64,
}

/// One cassandra-stress interval line: cumulative operations, the
/// interval's rates and latencies (ms), elapsed seconds since the load
/// started, errors.
pub fn stress_interval_line(
    label: &str,
    total: u64,
    rates: IntervalRates,
    latency: &LatencySummary,
    elapsed: SimDuration,
    errors: u64,
) -> String {
    format!(
        "{:<10} {:>10}, {:>7.0}, {:>7.0}, {:>7.0}, {:>7.1}, {:>7.1}, {:>7.1}, {:>7.1}, {:>7.1}, {:>7.1}, {:>6.1}, {:>6}",
        format!("{label},"),
        total,
        rates.ops,
        rates.partitions,
        rates.rows,
        latency.mean,
        latency.p50,
        latency.p95,
        latency.p99,
        latency.p999,
        latency.max,
        elapsed.as_secs_f64(),
        errors
    )
}

/// `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Run seed.
    pub seed: u64,
    /// Simulated time covered.
    pub simulated_seconds: f64,
    /// Per op type (`write`, `read`), only those that ran.
    pub ops: BTreeMap<String, OpSummary>,
    /// Software preset.
    pub preset: String,
    /// Nodes in the cluster.
    pub nodes: u32,
    /// Instance type.
    pub instance: String,
    /// Shards per node.
    pub shards_per_node: u32,
    /// Representative-shard sampling, when only some shards of every node
    /// ran: every count and rate in this file (ops, loads, coordinator) is
    /// then the simulated one times `scale`, the whole cluster's estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingSummary>,
    /// `[data] state = "steady"` or `window` with size-tiered compaction:
    /// what the pilot measured to place the merges under way at the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_start: Option<SteadyStartSummary>,
    /// Per load, by name: the same per-op figures for that load alone.
    pub loads: BTreeMap<String, LoadSummary>,
    /// Data mode only: reads checked against the writes acknowledged
    /// before them, and how many returned an older version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consistency: Option<ConsistencySummary>,
    /// The coordinators' read path, over the run: reads with a digest
    /// mismatch, rows written back by read repair, speculative retries.
    pub coordinator: CoordinatorSummary,
    /// Server-side latencies over the whole run (warm-up included), per op
    /// type: what the coordinators measured from a request's arrival on the
    /// coordinating shard to its reply, without the client and the wire
    /// (Scylla Monitoring's view; R6's headline is one).
    pub server_latency_ms: BTreeMap<String, LatencySummary>,
    /// Where the servers' work spent its time over the whole run (warm-up
    /// included): per kind of CPU work and per I/O class that ran. Tasks
    /// and I/Os still under way at the end count up to it.
    pub time_spent: TimeSpentSummary,
    /// Runs with `[[fault]]`s: what the network faults did (the log of
    /// each fault is `events.jsonl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<FaultSummary>,
    /// Presets with hinted handoff: hints over the run, summed over the
    /// coordinators.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<HintsReport>,
    /// Time-window tables: what compaction did over the run, summed over
    /// the shards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_window: Option<TimeWindowReport>,
    /// JVM presets: the collector's stop-the-world pauses over the run,
    /// summed over the nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcReport>,
    /// JVM presets: CPU seconds by thread pool (the stage's Cassandra
    /// name), summed over the nodes: what `twin real` reads from the real
    /// node's threads (`load_server.<load>.thread_cpu_seconds`). The
    /// spinning workers' looks and thread wake-ups are no pool's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_cpu_s: Option<BTreeMap<String, f64>>,
    /// JVM presets with a shared pool of spinning workers: the CPU seconds
    /// of its spinners' looks (no stage's), summed over the nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spin_cpu_s: Option<f64>,
    /// JVM presets with a shared pool: times its workers
    /// (`SharedExecutorPool`) and the event loop (`nioEventLoopGroup`)
    /// were put on a core, summed over the nodes: what `twin real` reads
    /// from the real node's schedstat (`load_server.<load>.thread_runs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_runs: Option<BTreeMap<String, u64>>,
    /// JVM presets with a shared pool: its workers spinning (parked
    /// between looks or looking), on average over the run, summed over
    /// the nodes; what `deploy/real/cassandra.sh spinners` samples on the
    /// real node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spinners_mean: Option<f64>,
    /// c-s's thread searches (loads with no `threads=`), by load name; each
    /// step's own results are under `loads`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub thread_search: BTreeMap<String, ThreadSearchSummary>,
}

/// `summary.json` `thread_runs`' key for the shared pool's workers.
pub const SHARED_POOL_RUNS: &str = "SharedPool";

/// `summary.json` `thread_search`: one load's search, step by step.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadSearchSummary {
    /// Whether it stops once throughput stops improving (`auto`).
    pub stops_when_saturated: bool,
    /// Each step that ran.
    pub steps: Vec<SearchStepSummary>,
    /// The thread count with the highest op rate.
    pub best_threads: u32,
}

/// One step of a thread search.
#[derive(Clone, Debug, Serialize)]
pub struct SearchStepSummary {
    /// Threads per process.
    pub threads: u32,
    /// Its load's name under `loads`.
    pub load: String,
    /// Operations per second over the step, as c-s's rule read it.
    pub ops_per_s: f64,
    /// Its improvement on the step before, percent (`None` for the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub improvement_pct: Option<f64>,
}

impl ThreadSearchSummary {
    fn of(search: &crate::cluster::ThreadSearch, scale: f64) -> ThreadSearchSummary {
        let steps: Vec<SearchStepSummary> = search
            .steps
            .iter()
            .enumerate()
            .map(|(index, &(threads, rate))| SearchStepSummary {
                threads,
                load: crate::load::search_step_name(&search.load, index as u32, threads),
                ops_per_s: round3(rate * scale),
                improvement_pct: index.checked_sub(1).map(|before| {
                    let before = search.steps[before].1;
                    round3(100.0 * (rate - before) / before)
                }),
            })
            .collect();
        let best_threads = search
            .steps
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(0, |&(threads, _)| threads);
        ThreadSearchSummary {
            stops_when_saturated: search.stop_at_saturation,
            steps,
            best_threads,
        }
    }
}

/// `summary.json` `gc`: G1's pauses by kind over every node (what a GC log
/// would list), and the injected ones apart.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GcReport {
    /// Young (evacuation) pauses.
    pub young_pauses: u64,
    /// Their mean length, milliseconds (0 without any).
    pub young_pause_mean_ms: f64,
    /// The longest, milliseconds.
    pub young_pause_max_ms: f64,
    /// Mixed collections.
    pub mixed_pauses: u64,
    /// Full collections.
    pub full_pauses: u64,
    /// Pauses a fault injected.
    pub injected_pauses: u64,
    /// Every pause's time, seconds, summed over the nodes.
    pub paused_s: f64,
    /// Where G1 sizes eden to its pause goal (5.0's preset): the mean eden
    /// a collection found full, MiB (a GC log's eden regions before each
    /// pause, in MiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eden_mean_mib: Option<f64>,
    /// The same: every collection's eden summed, MiB, which is what the
    /// nodes allocated up to their last collection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eden_collected_mib: Option<f64>,
}

impl GcReport {
    /// The pauses of a finished run (`None` without a JVM).
    pub fn of(outcome: &RunOutcome) -> Option<GcReport> {
        if outcome.gc.is_empty() {
            return None;
        }
        let mut young = models::jvm::PauseStats::default();
        let mut report = GcReport::default();
        let mut paused = SimDuration::ZERO;
        let (mut eden_bytes, mut eden_collections) = (0u64, 0u64);
        for stats in &outcome.gc {
            eden_bytes += stats.eden_collected_bytes;
            eden_collections += stats.eden_collections;
            young.count += stats.young.count;
            young.total = young.total + stats.young.total;
            young.longest = young.longest.max(stats.young.longest);
            report.mixed_pauses += stats.mixed.count;
            report.full_pauses += stats.full.count;
            report.injected_pauses += stats.injected.count;
            paused = paused + stats.all().total;
        }
        report.young_pauses = young.count;
        if young.count > 0 {
            report.young_pause_mean_ms =
                round3(young.total.as_secs_f64() * 1e3 / young.count as f64);
        }
        report.young_pause_max_ms = round3(young.longest.as_secs_f64() * 1e3);
        report.paused_s = round3(paused.as_secs_f64());
        if eden_collections > 0 {
            let mib = eden_bytes as f64 / 1_048_576.0;
            report.eden_mean_mib = Some(round3(mib / eden_collections as f64));
            report.eden_collected_mib = Some(round3(mib));
        }
        Some(report)
    }
}

/// `summary.json` `hints`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HintsReport {
    /// Hints stored.
    pub written: u64,
    /// Hints their replicas acknowledged on replay.
    pub replayed: u64,
    /// Hints not stored: their replica had been down past
    /// `max_hint_window_in_ms`.
    pub dropped: u64,
    /// Replay sends that timed out (and were sent again).
    pub send_failures: u64,
    /// Hints stored and not yet acknowledged when the run ended.
    pub pending: u64,
}

impl HintsReport {
    /// The hints of a finished run (`None` if its preset keeps none),
    /// scaled up to the whole cluster.
    pub fn of(outcome: &RunOutcome, scale: f64) -> Option<HintsReport> {
        let mut total: Option<HintsReport> = None;
        for hints in outcome.shards.iter().filter_map(|shard| shard.hints) {
            let report = total.get_or_insert_with(HintsReport::default);
            report.written += hints.stats.written;
            report.replayed += hints.stats.replayed;
            report.dropped += hints.stats.dropped;
            report.send_failures += hints.stats.send_failures;
            report.pending += hints.pending;
        }
        total.map(|total| HintsReport {
            written: scale_count(total.written, scale),
            replayed: scale_count(total.replayed, scale),
            dropped: scale_count(total.dropped, scale),
            send_failures: scale_count(total.send_failures, scale),
            pending: scale_count(total.pending, scale),
        })
    }
}

/// `summary.json` `time_window`: a time-window table's compactions, the
/// SSTables it dropped whole as expired, and the windows its SSTables
/// fall in at the end.
#[derive(Clone, Debug, Serialize)]
pub struct TimeWindowReport {
    /// The window's length, seconds.
    pub window_s: f64,
    /// Compactions finished.
    pub compactions: u64,
    /// Compaction input merged, MB (10^6 bytes).
    pub compacted_mb: f64,
    /// SSTables dropped whole because every row had expired more than
    /// `gc_grace_seconds` before.
    pub expired_sstables: u64,
    /// SSTables on disk at the end.
    pub sstables_at_end: u64,
    /// The time windows those SSTables fall in (by newest write), over
    /// every shard.
    pub windows_at_end: u64,
}

impl TimeWindowReport {
    /// The report of a run whose table is time-window (`None` otherwise),
    /// scaled up to the whole cluster.
    pub fn of(outcome: &RunOutcome, scale: f64) -> Option<TimeWindowReport> {
        let engine::compaction::CompactionStrategy::TimeWindow(options) =
            &outcome.plan.cluster.compaction
        else {
            return None;
        };
        let (mut compactions, mut compacted, mut expired, mut sstables) = (0, 0, 0, 0);
        let mut windows = std::collections::BTreeSet::new();
        for shard in &outcome.shards {
            compactions += shard.stats.compactions_completed;
            compacted += shard.stats.bytes_compacted;
            expired += shard.stats.sstables_expired;
            sstables += shard.sstables.len() as u64;
            windows.extend(
                shard
                    .sstables
                    .iter()
                    .map(|sstable| options.window_of_sstable(sstable)),
            );
        }
        Some(TimeWindowReport {
            window_s: options.window_us as f64 / 1e6,
            compactions: scale_count(compactions, scale),
            compacted_mb: round3(compacted as f64 * scale / 1e6),
            expired_sstables: scale_count(expired, scale),
            sstables_at_end: scale_count(sstables, scale),
            windows_at_end: windows.len() as u64,
        })
    }
}

/// `summary.json` `faults`.
#[derive(Clone, Debug, Serialize)]
pub struct FaultSummary {
    /// Faults in the scenario.
    pub injected: usize,
    /// Messages lost at the nodes' NICs: sent or arriving while the node's
    /// network was cut, or dropped (client traffic included).
    pub messages_lost_at_nics: u64,
    /// Messages between nodes lost to partitions.
    pub messages_lost_to_partitions: u64,
}

/// `summary.json` `time_spent`.
#[derive(Clone, Debug, Serialize)]
pub struct TimeSpentSummary {
    /// Per kind of engine CPU work (`index_parse`, `write_request`, ...).
    pub cpu: BTreeMap<String, CpuTimeSummary>,
    /// Per I/O class (`query`, `compaction`, ...).
    pub io: BTreeMap<String, IoTimeSummary>,
    /// The c-s processes' thread hand-offs (absent in a run without
    /// client operations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientTimeSummary>,
}

/// `time_spent.client`: what the c-s processes' own threads add to each
/// operation (`models::wakeup`: the request handed to the driver's event
/// loop, the reply waking that loop and then the c-s thread).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ClientTimeSummary {
    /// Hand-offs made (scaled to the whole cluster when sampled).
    pub handoffs: u64,
    /// Mean time a hand-off added, its CPU and its thread's wake-up,
    /// microseconds.
    pub mean_us: f64,
}

/// One kind of CPU work in `time_spent.cpu`.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CpuTimeSummary {
    /// Tasks handed to the CPU (scaled to the whole cluster when sampled).
    pub tasks: u64,
    /// Mean CPU time of a task: its price, microseconds.
    pub service_us: f64,
    /// Mean time a task waited for its core (queued behind other work,
    /// preempted at task-quota ticks; for Cassandra, for a stage thread
    /// and a core, and through GC pauses), microseconds.
    pub wait_us: f64,
}

/// One I/O class in `time_spent.io`.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct IoTimeSummary {
    /// I/Os asked for (scaled to the whole cluster when sampled).
    pub requests: u64,
    /// Mean time on the device, from dispatch to completion, microseconds.
    pub device_us: f64,
    /// Mean wait in the I/O scheduler before dispatch, microseconds.
    pub queue_us: f64,
    /// Mean bytes an I/O moves.
    pub bytes_per_request: f64,
}

impl TimeSpentSummary {
    /// The tallies of a run that ended at `end`, counts scaled by `scale`.
    pub fn of(spent: &crate::cluster::TimeSpent, end: SimTime, scale: f64) -> TimeSpentSummary {
        let mean_us = |total_ns: u128, count: u64| round3(total_ns as f64 / count as f64 / 1e3);
        TimeSpentSummary {
            cpu: spent
                .cpu
                .iter()
                .enumerate()
                .filter(|(_, tally)| tally.on_cpu.started > 0)
                .map(|(kind, tally)| {
                    let tasks = tally.on_cpu.started;
                    let wait_ns = tally.on_cpu.total_ns(end).saturating_sub(tally.price_ns);
                    (
                        engine::CpuWork::kind_name(kind).to_string(),
                        CpuTimeSummary {
                            tasks: scale_count(tasks, scale),
                            service_us: mean_us(tally.price_ns, tasks),
                            wait_us: mean_us(wait_ns, tasks),
                        },
                    )
                })
                .collect(),
            io: engine::IoClass::ALL
                .iter()
                .zip(&spent.io)
                .filter(|(_, tally)| tally.queued.started > 0)
                .map(|(class, tally)| {
                    let requests = tally.queued.started;
                    (
                        class.name().to_string(),
                        IoTimeSummary {
                            requests: scale_count(requests, scale),
                            device_us: mean_us(
                                tally.device.total_ns(end),
                                tally.device.started.max(1),
                            ),
                            queue_us: mean_us(tally.queued.total_ns(end), requests),
                            bytes_per_request: round3(tally.bytes as f64 / requests as f64),
                        },
                    )
                })
                .collect(),
            client: (spent.client.handoffs > 0).then(|| ClientTimeSummary {
                handoffs: scale_count(spent.client.handoffs, scale),
                mean_us: mean_us(spent.client.total_ns, spent.client.handoffs),
            }),
        }
    }
}

/// `summary.json` `sampling`.
#[derive(Clone, Debug, Serialize)]
pub struct SamplingSummary {
    /// Shards simulated on every node.
    pub simulated_shards_per_node: u32,
    /// Shards a node has.
    pub shards_per_node: u32,
    /// `shards_per_node / simulated_shards_per_node`: what the simulated
    /// counts and rates were multiplied by.
    pub scale: f64,
}

/// `summary.json` `steady_start` (`sim::cluster::SteadyStart`), per shard.
#[derive(Clone, Debug, Serialize)]
pub struct SteadyStartSummary {
    /// Simulated seconds the pilot ran (started compacted).
    pub pilot_seconds: f64,
    /// The pilot's mean CPU utilisation.
    pub foreground_utilisation: f64,
    /// SSTable MB a second per shard the writes bring (what flushes write).
    pub flushed_mb_per_s: f64,
    /// Compaction input MB a second in the CPU left over.
    pub compaction_mb_per_s: f64,
    /// Fraction of its cycle each size-tiered tier spends merging.
    pub merge_duty: f64,
}

/// A count of a sampled run scaled up to the whole cluster.
fn scale_count(count: u64, scale: f64) -> u64 {
    (count as f64 * scale).round() as u64
}

/// `summary.json` `coordinator`: counters summed over every shard.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CoordinatorSummary {
    /// Reads whose digests disagreed (each ran a read repair).
    pub digest_mismatches: u64,
    /// Rows written back by read repair.
    pub read_repairs: u64,
    /// Of `digest_mismatches`, those found after the client had its answer
    /// (a read-repair-chance read's extra replica) and repaired in the
    /// background.
    pub background_read_repairs: u64,
    /// Extra read requests sent by speculative retry.
    pub speculative_retries: u64,
    /// Reads whose replicas heat-weighted balancing chose (Scylla, when
    /// the replicas' cache hit rates differ by more than 0.01).
    pub heat_balanced_reads: u64,
}

impl CoordinatorSummary {
    /// The counters of a finished run.
    pub fn of(outcome: &RunOutcome) -> CoordinatorSummary {
        let mut total = CoordinatorSummary::default();
        for shard in &outcome.shards {
            total.digest_mismatches += shard.stats.digest_mismatches;
            total.read_repairs += shard.stats.read_repairs;
            total.background_read_repairs += shard.stats.background_read_repairs;
            total.speculative_retries += shard.stats.speculative_retries;
            total.heat_balanced_reads += shard.stats.heat_balanced_reads;
        }
        total
    }

    /// The counters of a sampled run scaled up to the whole cluster.
    pub fn scaled(self, scale: f64) -> CoordinatorSummary {
        CoordinatorSummary {
            digest_mismatches: scale_count(self.digest_mismatches, scale),
            read_repairs: scale_count(self.read_repairs, scale),
            background_read_repairs: scale_count(self.background_read_repairs, scale),
            speculative_retries: scale_count(self.speculative_retries, scale),
            heat_balanced_reads: scale_count(self.heat_balanced_reads, scale),
        }
    }
}

/// For `skip_serializing_if`: a count that is zero.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// Data mode's read check in `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct ConsistencySummary {
    /// Reads answered and checked.
    pub reads_checked: u64,
    /// Reads that returned a version older than one acknowledged before
    /// they were issued.
    pub stale_reads: u64,
    /// Reads that returned an older version than one acknowledged before
    /// them because a crash destroyed it on a replica (periodic commitlog
    /// mode's promise; not in `stale_reads`). Only runs with such a crash
    /// have the field.
    #[serde(skip_serializing_if = "is_zero")]
    pub stale_after_crash_loss: u64,
    /// Reads that returned less than what was acknowledged before them
    /// because a topology change left a replica without it (it streamed
    /// its range from a node that lacked the version, or the version's
    /// hint was replayed while it was pending; not in `stale_reads`).
    /// Only runs where it happened have the field.
    #[serde(skip_serializing_if = "is_zero")]
    pub stale_after_topology_change: u64,
    /// The first of them: `{"time_s", "key", "acknowledged", "returned"}`
    /// (timestamps; 0 returned: not found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_stale_read: Option<serde_json::Value>,
    /// Writes acknowledged, and reads answered, while fewer replicas held
    /// their version than their level blocks for (a bug: see
    /// `sim::check::ThinAnswer`). Only runs where it happened have the
    /// field.
    #[serde(skip_serializing_if = "is_zero")]
    pub thin_answers: u64,
    /// The first of them: `{"time_s", "op", "key", "timestamp",
    /// "holders", "block_for"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_thin_answer: Option<serde_json::Value>,
    /// With hinted handoff and a quiet end of run (30 s without a write or
    /// a fault): whether every replica of every acknowledged key holds its
    /// newest version (`keys`, `replicas_behind`, and the first key
    /// behind with its nodes; `replicas_lost_to_crashes`, in runs with
    /// crashes, counts the replicas whose version a crash destroyed;
    /// `replicas_missed_while_pending`, the replicas whose version's hint
    /// was replayed while they were joining, which went to the natural
    /// replicas instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<serde_json::Value>,
}

/// One load in `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct LoadSummary {
    /// The c-s command as written.
    pub command: String,
    /// Per op type that ran.
    pub ops: BTreeMap<String, OpSummary>,
    /// The processes an operation that failed every try ended (c-s
    /// without `-errors ignore` prints `FAILURE`), in process order; left
    /// out when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<ProcessFailure>,
}

/// A c-s process that an operation failing every try ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProcessFailure {
    /// The process, from 0, among its load's.
    pub process: u32,
    /// When, in seconds from the run's start.
    pub at_s: f64,
}

/// One op type in `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct OpSummary {
    /// Operations completed.
    pub count: u64,
    /// Operations per second over the window the op type ran.
    pub ops_per_s: f64,
    /// Latency percentiles, milliseconds.
    pub latency_ms: LatencySummary,
    /// Seconds from the first operation's start to the last one's reply,
    /// or to the load's end where it is longer (c-s divides a `duration=`
    /// load's operations by its duration).
    pub seconds: f64,
    /// Reads that found no row (0 for writes).
    pub not_found: u64,
    /// Attempts abandoned at the client timeout (retried or failed).
    pub timeouts: u64,
    /// Operations that failed every try.
    pub errors: u64,
    /// Partitions the operations touched (c-s's "Total partitions"), when
    /// not one an operation: a user profile's batches over several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u64>,
    /// Rows they wrote or read back (c-s's row count), when not one an
    /// operation: a profile's many-row inserts or reads, reads that found
    /// nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
}

/// `perf.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Perf {
    /// Wall-clock seconds of the simulation loop.
    pub wall_seconds: f64,
    /// Kernel events processed.
    pub events_processed: u64,
    /// Events per wall second.
    pub events_per_wall_second: f64,
    /// Simulated seconds per wall second.
    pub simulated_seconds_per_wall_second: f64,
    /// Client operations completed per wall second.
    pub client_ops_per_wall_second: f64,
}

impl OpSummary {
    /// The figures of a sampled run scaled up to the whole cluster: counts
    /// and rate times `scale`, latencies as simulated.
    pub fn scaled(self, scale: f64) -> OpSummary {
        OpSummary {
            count: scale_count(self.count, scale),
            ops_per_s: round3(self.ops_per_s * scale),
            not_found: scale_count(self.not_found, scale),
            timeouts: scale_count(self.timeouts, scale),
            errors: scale_count(self.errors, scale),
            partitions: self.partitions.map(|count| scale_count(count, scale)),
            rows: self.rows.map(|count| scale_count(count, scale)),
            ..self
        }
    }

    /// Partitions the operations touched (one each unless said).
    pub fn partition_count(&self) -> u64 {
        self.partitions.unwrap_or(self.count)
    }

    /// Rows they wrote or read back (one each unless said).
    pub fn row_count(&self) -> u64 {
        self.rows.unwrap_or(self.count)
    }

    /// `count` things (partitions, rows) over the operations' window, per
    /// second: their share of the op rate.
    pub fn per_second(&self, count: u64) -> f64 {
        self.ops_per_s * count as f64 / self.count.max(1) as f64
    }

    /// Figures of `ops` over `window`.
    pub fn of(ops: &OpMetrics, window: (SimTime, SimTime)) -> OpSummary {
        OpSummary {
            count: ops.count,
            ops_per_s: ops_per_second(ops.count, window),
            latency_ms: LatencySummary::of(&ops.total),
            seconds: round3((window.1 - window.0).as_secs_f64()),
            not_found: ops.not_found,
            timeouts: ops.timeouts,
            errors: ops.errors,
            partitions: (ops.partitions != ops.count).then_some(ops.partitions),
            rows: (ops.rows != ops.count).then_some(ops.rows),
        }
    }
}

impl Summary {
    /// The summary of a finished run.
    pub fn of(outcome: &RunOutcome) -> Summary {
        let scale = outcome.plan.cluster.sampling_scale();
        let ops = outcome
            .ops
            .iter()
            .zip(&outcome.op_windows)
            .filter(|(ops, _)| ops.count > 0 || ops.errors > 0)
            .map(|(ops, window)| {
                (
                    ops.kind.name().to_string(),
                    OpSummary::of(ops, *window).scaled(scale),
                )
            })
            .collect();
        let loads = outcome
            .plan
            .loads
            .iter()
            .zip(&outcome.loads)
            .map(|(plan, load)| {
                let ops = load
                    .ops
                    .iter()
                    .filter(|ops| ops.count > 0 || ops.errors > 0)
                    .map(|ops| {
                        (
                            ops.kind.name().to_string(),
                            OpSummary::of(ops, load.window).scaled(scale),
                        )
                    })
                    .collect();
                (
                    plan.name.clone(),
                    LoadSummary {
                        command: plan.command.clone(),
                        ops,
                        failures: load
                            .failures
                            .iter()
                            .map(|&(process, at)| ProcessFailure {
                                process,
                                at_s: round3(at.as_secs_f64()),
                            })
                            .collect(),
                    },
                )
            })
            .collect();
        let cluster = &outcome.plan.cluster;
        Summary {
            loads,
            scenario: outcome.plan.scenario.clone(),
            seed: outcome.plan.seed,
            simulated_seconds: round3(outcome.end.as_secs_f64()),
            ops,
            preset: cluster.preset.name().to_string(),
            nodes: cluster.nodes,
            instance: cluster.instance.clone(),
            shards_per_node: cluster.shards_per_node,
            sampling: cluster.sampled().then(|| SamplingSummary {
                simulated_shards_per_node: cluster.simulated_shards(),
                shards_per_node: cluster.shards_per_node,
                scale: round3(scale),
            }),
            steady_start: cluster
                .preload
                .and_then(|preload| preload.steady)
                .map(|steady| SteadyStartSummary {
                    pilot_seconds: round3(steady.pilot_seconds),
                    foreground_utilisation: round3(steady.foreground_utilisation),
                    flushed_mb_per_s: round3(steady.flushed_bytes_per_s / 1e6),
                    compaction_mb_per_s: round3(steady.compaction_bytes_per_s / 1e6),
                    merge_duty: round3(steady.merge_duty),
                }),
            coordinator: CoordinatorSummary::of(outcome).scaled(scale),
            hints: HintsReport::of(outcome, scale),
            time_window: TimeWindowReport::of(outcome, scale),
            gc: GcReport::of(outcome),
            stage_cpu_s: (!outcome.stage_cpu.is_empty()).then(|| {
                models::jvm::Stage::ALL
                    .iter()
                    .enumerate()
                    .map(|(index, stage)| {
                        let total: f64 = outcome
                            .stage_cpu
                            .iter()
                            .map(|node| node[index].as_secs_f64())
                            .sum();
                        (stage.name().to_string(), round3(total))
                    })
                    .collect()
            }),
            spin_cpu_s: (!outcome.shared_pool.is_empty()).then(|| {
                round3(
                    outcome
                        .shared_pool
                        .iter()
                        .map(|node| node.spin_cpu.as_secs_f64())
                        .sum(),
                )
            }),
            thread_runs: (!outcome.shared_pool.is_empty()).then(|| {
                BTreeMap::from([
                    (
                        SHARED_POOL_RUNS.to_string(),
                        outcome.shared_pool.iter().map(|node| node.runs).sum(),
                    ),
                    (
                        models::jvm::Stage::EventLoop.name().to_string(),
                        outcome
                            .shared_pool
                            .iter()
                            .map(|node| node.event_loop_runs)
                            .sum(),
                    ),
                ])
            }),
            spinners_mean: (!outcome.shared_pool.is_empty() && outcome.end > SimTime::ZERO).then(|| {
                round3(
                    outcome
                        .shared_pool
                        .iter()
                        .map(|node| node.spinning.as_secs_f64())
                        .sum::<f64>()
                        / outcome.end.as_secs_f64(),
                )
            }),
            time_spent: TimeSpentSummary::of(&outcome.time_spent, outcome.end, scale),
            server_latency_ms: ["read", "write"]
                .into_iter()
                .zip(outcome.server.totals())
                .filter(|(_, histogram)| !histogram.is_empty())
                .map(|(op, histogram)| (op.to_string(), LatencySummary::of(histogram)))
                .collect(),
            consistency: outcome
                .consistency
                .as_ref()
                .map(|check| ConsistencySummary {
                    reads_checked: check.reads_checked,
                    stale_reads: check.stale_reads,
                    stale_after_crash_loss: check.stale_after_crash_loss,
                    stale_after_topology_change: check.stale_after_topology_change,
                    first_stale_read: check.first_stale.map(|stale| {
                        serde_json::json!({
                            "time_s": stale.at.as_nanos() as f64 / 1e9,
                            "key": stale.key,
                            "acknowledged": stale.acknowledged,
                            "returned": stale.returned,
                        })
                    }),
                    thin_answers: check.thin_answers,
                    first_thin_answer: check.first_thin.map(|thin| {
                        serde_json::json!({
                            "time_s": thin.at.as_nanos() as f64 / 1e9,
                            "op": if thin.write { "write" } else { "read" },
                            "key": thin.key,
                            "timestamp": thin.timestamp,
                            "holders": thin.holders,
                            "block_for": thin.block_for,
                        })
                    }),
                    replicas: check.replicas.as_ref().map(|replicas| {
                        let mut json = serde_json::json!({
                            "keys": replicas.keys,
                            "replicas_behind": replicas.behind,
                            "first_behind": replicas.first.as_ref().map(|(key, acknowledged, nodes)| {
                                serde_json::json!({"key": key, "acknowledged": acknowledged, "nodes": nodes})
                            }),
                        });
                        // Only runs with crashes have the field.
                        if replicas.lost_to_crashes > 0 {
                            json["replicas_lost_to_crashes"] = replicas.lost_to_crashes.into();
                        }
                        // Only runs where it happened have these fields.
                        if replicas.missed_while_pending > 0 {
                            json["replicas_missed_while_pending"] =
                                replicas.missed_while_pending.into();
                        }
                        if replicas.streamed_from_stale > 0 {
                            json["replicas_streamed_from_stale"] =
                                replicas.streamed_from_stale.into();
                        }
                        json
                    }),
                }),
            thread_search: outcome
                .searches
                .iter()
                .map(|search| (search.load.clone(), ThreadSearchSummary::of(search, scale)))
                .collect(),
            faults: (!outcome.plan.faults.is_empty()).then_some(FaultSummary {
                injected: outcome.plan.faults.len(),
                messages_lost_at_nics: outcome.messages_lost.at_nics,
                messages_lost_to_partitions: outcome.messages_lost.to_partitions,
            }),
        }
    }

    /// cassandra-stress style "Results:" blocks: one per load, then the
    /// whole run when there are several loads.
    pub fn to_stress_text(&self) -> String {
        let mut out = String::new();
        if let Some(sampling) = &self.sampling {
            let _ = writeln!(
                out,
                "\nSampled run: {} of {} shards per node simulated; operation counts and rates below are scaled x{} to the whole cluster, latencies are as simulated",
                sampling.simulated_shards_per_node, sampling.shards_per_node, sampling.scale
            );
        }
        out.push_str(&results_text(
            &self.loads,
            &self.ops,
            self.simulated_seconds,
        ));
        for (name, search) in &self.thread_search {
            out.push_str(&search_table(name, search, &self.loads));
        }
        if let Some(check) = &self.consistency {
            let _ = writeln!(
                out,
                "\nData-mode read check: {} reads checked, {} stale (older than a write acknowledged before the read began)",
                check.reads_checked, check.stale_reads
            );
        }
        out
    }
}

/// cassandra-stress style "Results:" blocks: one per load, then the whole
/// run (over `run_seconds`) when there are several loads. Shared by `twin
/// run` and `twin real`.
pub fn results_text(
    loads: &BTreeMap<String, LoadSummary>,
    ops: &BTreeMap<String, OpSummary>,
    run_seconds: f64,
) -> String {
    let mut out = String::new();
    for (name, load) in loads {
        let _ = writeln!(out, "\nResults for load `{name}`:");
        out.push_str(&results_block(&load.ops, None));
        if let Some(first) = load.failures.first() {
            let _ = writeln!(
                out,
                "FAILURE: an operation failed every try and ended {} of the load's processes, the first at {:.3} s (c-s stops a process so unless -errors ignore)",
                load.failures.len(),
                first.at_s
            );
        }
    }
    if loads.len() > 1 {
        out.push_str("\nResults for the whole run:\n");
        out.push_str(&results_block(ops, Some(run_seconds)));
    }
    out
}

/// The table c-s prints when a thread search ends
/// (`StressMetrics.summarise`): a row per step and op type, then the
/// step's total, each with its thread count as the id.
fn search_table(
    name: &str,
    search: &ThreadSearchSummary,
    loads: &BTreeMap<String, LoadSummary>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nThread search of load `{name}`: best {} threads",
        search.best_threads
    );
    let ids: Vec<String> = search
        .steps
        .iter()
        .map(|step| format!("{} threadCount", step.threads))
        .collect();
    let width = ids.iter().map(String::len).max().unwrap_or(2).max(2);
    let _ = writeln!(out, "{:>width$}, {STRESS_INTERVAL_HEADER}", "id");
    for (id, step) in ids.iter().zip(&search.steps) {
        let Some(load) = loads.get(&step.load) else {
            continue;
        };
        let mut rows: Vec<(String, &OpSummary)> = load
            .ops
            .iter()
            .map(|(kind, op)| (kind.to_uppercase(), op))
            .collect();
        let total = (rows.len() > 1).then(|| {
            let count: u64 = rows.iter().map(|(_, op)| op.count).sum();
            (count, step.ops_per_s)
        });
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        for (kind, op) in rows {
            let line = stress_interval_line(
                &kind,
                op.count,
                IntervalRates {
                    ops: op.ops_per_s,
                    partitions: op.per_second(op.partition_count()),
                    rows: op.per_second(op.row_count()),
                },
                &op.latency_ms,
                SimDuration::from_secs_f64(op.seconds),
                op.errors,
            );
            let _ = writeln!(out, "{id:>width$}, {line}");
        }
        if let Some((count, rate)) = total {
            let _ = writeln!(
                out,
                "{id:>width$}, {:<10} {count:>10}, {rate:>7.0}",
                "total,"
            );
        }
    }
    out
}

/// One "Results:" block over `ops`; `run_seconds` for the operation-time line
/// (default: the longest op window).
fn results_block(ops: &BTreeMap<String, OpSummary>, run_seconds: Option<f64>) -> String {
    let mut out = String::new();
    if ops.is_empty() {
        // Rates and latencies of nothing would print as zeros.
        out.push_str(
            "No operation completed, timed out or failed before the run ended: every one issued was still in flight (a longer run, or fewer or smaller operations, may finish some)\n",
        );
        return out;
    }
    if ops.values().all(|op| op.count == 0) {
        // Only failures: their count, not rates and latencies of nothing.
        let errors: u64 = ops.values().map(|op| op.errors).sum();
        let timeouts: u64 = ops.values().map(|op| op.timeouts).sum();
        let _ = writeln!(
            out,
            "No operation completed: {} failed every try ({} tries timed out)",
            group_thousands(errors),
            group_thousands(timeouts)
        );
        return out;
    }
    {
        let total_count: u64 = ops.values().map(|op| op.count).sum();
        let total_rate: f64 = ops.values().map(|op| op.ops_per_s).sum();
        let per_op = |format: &dyn Fn(&OpSummary) -> String| -> String {
            ops.iter()
                .map(|(name, op)| format!("{}: {}", name.to_uppercase(), format(op)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "Op rate                   : {:>10} op/s  [{}]",
            group_thousands(total_rate.round() as u64),
            per_op(&|op| format!("{} op/s", group_thousands(op.ops_per_s.round() as u64)))
        );
        // Partitions and rows at the operations' rate: per op type, its
        // count's share of the op rate.
        type Count = fn(&OpSummary) -> u64;
        let count_lines: [(&str, &str, Count); 2] = [
            (
                "Partition rate            ",
                "pk/s ",
                OpSummary::partition_count,
            ),
            ("Row rate                  ", "row/s", OpSummary::row_count),
        ];
        for (label, unit, count) in count_lines {
            let rate = |op: &OpSummary| op.per_second(count(op));
            let _ = writeln!(
                out,
                "{label}: {:>10} {unit} [{}]",
                group_thousands(ops.values().map(rate).sum::<f64>().round() as u64),
                per_op(&|op| format!(
                    "{} {}",
                    group_thousands(rate(op).round() as u64),
                    unit.trim_end()
                ))
            );
        }
        type Pick = fn(&LatencySummary) -> f64;
        let latency_lines: [(&str, Pick); 6] = [
            ("Latency mean              ", |l| l.mean),
            ("Latency median            ", |l| l.p50),
            ("Latency 95th percentile   ", |l| l.p95),
            ("Latency 99th percentile   ", |l| l.p99),
            ("Latency 99.9th percentile ", |l| l.p999),
            ("Latency max               ", |l| l.max),
        ];
        for (label, pick) in latency_lines {
            // With several op types, c-s shows the first op type's figure in
            // the total column only when there is one; we show the count-weighted
            // mean for the mean line and the per-op figures in brackets.
            let total = if ops.len() == 1 {
                ops.values()
                    .map(|op| pick(&op.latency_ms))
                    .next()
                    .unwrap_or(0.0)
            } else {
                let weighted: f64 = ops
                    .values()
                    .map(|op| pick(&op.latency_ms) * op.count as f64)
                    .sum();
                weighted / total_count.max(1) as f64
            };
            let _ = writeln!(
                out,
                "{label}: {total:>10.1} ms  [{}]",
                per_op(&|op| format!("{:.1} ms", pick(&op.latency_ms)))
            );
        }
        let _ = writeln!(
            out,
            "Total partitions          : {:>10}  [{}]",
            group_thousands(ops.values().map(OpSummary::partition_count).sum()),
            per_op(&|op| group_thousands(op.partition_count()))
        );
        let _ = writeln!(
            out,
            "Total errors              : {:>10}  [{}]",
            group_thousands(ops.values().map(|op| op.errors).sum()),
            per_op(&|op| group_thousands(op.errors))
        );
        let _ = writeln!(
            out,
            "Total operation time      : {:>10}",
            format_hms(
                run_seconds
                    .unwrap_or_else(|| ops.values().map(|op| op.seconds).fold(0.0, f64::max))
            )
        );
    }
    out
}

impl Perf {
    /// Wall-clock figures of a run.
    pub fn of(outcome: &RunOutcome) -> Perf {
        let wall = outcome.wall_seconds.max(1e-9);
        let operations: u64 = outcome.ops.iter().map(|ops| ops.count).sum();
        Perf {
            wall_seconds: outcome.wall_seconds,
            events_processed: outcome.events,
            events_per_wall_second: outcome.events as f64 / wall,
            simulated_seconds_per_wall_second: outcome.end.as_secs_f64() / wall,
            client_ops_per_wall_second: operations as f64 / wall,
        }
    }
}

/// `12345678` as `12,345,678`.
pub fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Seconds as `HH:MM:SS`.
fn format_hms(seconds: f64) -> String {
    let total = seconds.round() as u64;
    format!(
        "{:02}:{:02}:{:02}",
        total / 3600,
        total / 60 % 60,
        total % 60
    )
}

/// Writes `summary.json`, `timeseries.csv`, `events.jsonl`, the HDR logs,
/// the charts and `perf.json` into `dir` whole: into a folder beside it,
/// put in its place with the completion record ([`crate::results_dir`]).
pub fn write_results(dir: &Path, outcome: &RunOutcome) -> std::io::Result<Summary> {
    let pending = crate::results_dir::PendingResults::prepare(dir)?;
    write_results_into(pending, outcome)
}

/// [`write_results`] into a folder prepared before the run (so that a bad
/// `--out` is an error before the simulation), then put in place.
pub fn write_results_into(
    pending: crate::results_dir::PendingResults,
    outcome: &RunOutcome,
) -> std::io::Result<Summary> {
    let summary = write_files(pending.path(), outcome)?;
    pending.commit(&crate::results_dir::Completion::new(
        &outcome.plan.scenario,
        outcome.plan.seed,
    ))?;
    Ok(summary)
}

/// The results files, into `dir` as it is.
fn write_files(dir: &Path, outcome: &RunOutcome) -> std::io::Result<Summary> {
    let summary = Summary::of(outcome);
    let mut json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
    json.push('\n');
    std::fs::write(dir.join("summary.json"), json)?;
    std::fs::write(dir.join("timeseries.csv"), outcome.timeseries.to_csv())?;
    std::fs::write(dir.join("events.jsonl"), outcome.event_log.to_jsonl())?;
    write_hdr_logs(&dir.join("hdr"), outcome)?;
    let ops: Vec<&str> = outcome.ops.iter().map(|ops| ops.kind.name()).collect();
    crate::charts::write_charts(
        &dir.join("charts"),
        &outcome.timeseries,
        &ops,
        outcome.plan.cluster.nodes,
        &outcome.plan.scenario,
    )?;
    let mut perf =
        serde_json::to_string_pretty(&Perf::of(outcome)).map_err(std::io::Error::other)?;
    perf.push('\n');
    std::fs::write(dir.join("perf.json"), perf)?;
    if let Some(trace) = &outcome.trace {
        std::fs::write(dir.join("trace.json"), trace.to_json())?;
        if !trace.window_events().is_empty() {
            std::fs::write(dir.join("trace-events.txt"), trace.window_text())?;
        }
    }
    Ok(summary)
}

/// Writes `hdr/<load>-<op>.hlog`: each load's per-interval latency
/// histograms in the HdrHistogram interval log format (v1.3, V2 deflate
/// compressed), readable by HdrHistogram's `HistogramLogProcessor` and
/// plotting tools. Values are microseconds; timestamps are simulated seconds
/// since the run started (StartTime 0).
pub fn write_hdr_logs(dir: &Path, outcome: &RunOutcome) -> std::io::Result<()> {
    use hdrhistogram::serialization::Deserializer;
    use std::time::Duration;

    std::fs::create_dir_all(dir)?;
    let mut deserializer = Deserializer::new();
    for (plan, load) in outcome.plan.loads.iter().zip(&outcome.loads) {
        for (op, intervals) in load.ops.iter().zip(&load.intervals) {
            let mut histograms = Vec::with_capacity(intervals.len());
            for interval in intervals {
                let histogram: hdrhistogram::Histogram<u64> = deserializer
                    .deserialize(&mut &interval.histogram[..])
                    .map_err(|error| std::io::Error::other(format!("{error:?}")))?;
                histograms.push((
                    Duration::from_nanos(interval.start.as_nanos()),
                    Duration::from_nanos(interval.length.as_nanos()),
                    histogram,
                ));
            }
            let file = dir.join(format!("{}-{}.hlog", file_safe(&plan.name), op.kind.name()));
            let text = hdr_log_text(
                &format!(
                    "twin: load `{}`, {} latencies in microseconds, timestamps in simulated seconds",
                    plan.name,
                    op.kind.name()
                ),
                &histograms,
            )?;
            std::fs::write(file, text)?;
        }
    }
    Ok(())
}

/// One HdrHistogram interval log (v1.3, V2 deflate compressed): a comment
/// line saying what it holds, then one line per `(start, length,
/// histogram)` interval, start times from 0. Shared by `twin run` and
/// `twin real`, so the two folders' logs read alike.
pub fn hdr_log_text(
    comment: &str,
    intervals: &[(
        std::time::Duration,
        std::time::Duration,
        hdrhistogram::Histogram<u64>,
    )],
) -> std::io::Result<String> {
    use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
    use hdrhistogram::serialization::V2DeflateSerializer;
    use std::time::SystemTime;

    let mut serializer = V2DeflateSerializer::new();
    let mut text = Vec::new();
    {
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment("[Histogram log format version 1.3]")
            .add_comment(comment)
            .with_start_time(SystemTime::UNIX_EPOCH)
            .with_base_time(SystemTime::UNIX_EPOCH)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut text, &mut serializer)?;
        for (start, length, histogram) in intervals {
            writer
                .write_histogram(histogram, *start, *length, None)
                .map_err(|error| std::io::Error::other(format!("{error:?}")))?;
        }
    }
    // The column legend goes after the header comments, as Java's
    // HistogramLogWriter puts it.
    let text = String::from_utf8(text).map_err(std::io::Error::other)?;
    let split = text.find(|c| c != '#').map_or(text.len(), |_| {
        text.lines()
            .take_while(|line| line.starts_with('#'))
            .map(|line| line.len() + 1)
            .sum()
    });
    let (headers, body) = text.split_at(split);
    let legend = "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";
    Ok(format!("{headers}{legend}{body}"))
}

/// A load name as a file-name part: letters, digits, `-` and `_` kept,
/// anything else becomes `_`.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reporting_counts_the_intervals_that_had_operations() {
        use models::cassandra_stress::Reporting;
        let print = |total, header_again| IntervalPrint {
            total,
            header_again,
        };
        let mut lines = ReportingLines::default();
        // Without -reporting every interval's total prints, even an empty one.
        assert_eq!(
            lines.after_interval(Reporting::default(), false),
            print(true, false)
        );
        let every = Reporting {
            output_every: 2,
            header_every: 3,
        };
        let mut lines = ReportingLines::default();
        let printed: Vec<IntervalPrint> = [true, false, true, true, true, true]
            .into_iter()
            .map(|had| lines.after_interval(every, had))
            .collect();
        // Lines 1, (none), 2, 3, 4, 5: totals on 2 and 4, the header after 3.
        assert_eq!(
            printed,
            [
                print(false, false),
                print(false, false),
                print(true, false),
                print(false, true),
                print(true, false),
                print(false, false),
            ]
        );
    }

    #[test]
    fn a_load_whose_every_operation_failed_counts_its_failures() {
        let failed = OpSummary {
            count: 0,
            ops_per_s: 0.0,
            latency_ms: LatencySummary::of(&hdrhistogram::Histogram::<u64>::new(3).unwrap()),
            seconds: 0.0,
            not_found: 0,
            timeouts: 8,
            errors: 4,
            partitions: None,
            rows: None,
        };
        let mut loads = BTreeMap::new();
        loads.insert(
            "write".to_string(),
            LoadSummary {
                command: "cassandra-stress write duration=10s".into(),
                ops: BTreeMap::from([("write".to_string(), failed)]),
                failures: vec![ProcessFailure {
                    process: 0,
                    at_s: 0.009,
                }],
            },
        );
        let text = results_text(&loads, &BTreeMap::new(), 60.0);
        assert!(
            text.contains("No operation completed: 4 failed every try (8 tries timed out)"),
            "{text}"
        );
        assert!(text.contains("FAILURE"), "{text}");
        assert!(!text.contains("Latency"), "{text}");
    }

    #[test]
    fn a_load_that_completed_nothing_says_so_rather_than_printing_zeros() {
        let mut loads = BTreeMap::new();
        loads.insert(
            "write".to_string(),
            LoadSummary {
                command: "cassandra-stress write duration=10s".into(),
                ops: BTreeMap::new(),
                failures: Vec::new(),
            },
        );
        let text = results_text(&loads, &BTreeMap::new(), 60.0);
        assert!(text.contains("No operation completed"), "{text}");
        assert!(
            !text.contains("Latency") && !text.contains("-0.0"),
            "{text}"
        );
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(12_345_678), "12,345,678");
    }

    #[test]
    fn results_count_partitions_and_rows_as_c_s_does() {
        let latency = LatencySummary {
            mean: 1.0,
            p50: 1.0,
            p95: 2.0,
            p99: 3.0,
            p999: 4.0,
            max: 5.0,
        };
        let op = |count: u64, partitions: Option<u64>, rows: Option<u64>| OpSummary {
            count,
            ops_per_s: count as f64 / 10.0,
            latency_ms: latency,
            seconds: 10.0,
            not_found: 0,
            timeouts: 0,
            errors: 0,
            partitions,
            rows,
        };
        let mut ops = BTreeMap::new();
        // Batches of three one-row partitions; reads of which a tenth
        // found nothing.
        ops.insert("write".to_string(), op(10_000, Some(30_000), Some(30_000)));
        ops.insert("read".to_string(), op(20_000, None, Some(18_000)));
        let text = results_block(&ops, None);
        for line in [
            "Op rate                   :      3,000 op/s  [READ: 2,000 op/s, WRITE: 1,000 op/s]",
            "Partition rate            :      5,000 pk/s  [READ: 2,000 pk/s, WRITE: 3,000 pk/s]",
            "Row rate                  :      4,800 row/s [READ: 1,800 row/s, WRITE: 3,000 row/s]",
            "Total partitions          :     50,000  [READ: 20,000, WRITE: 30,000]",
        ] {
            assert!(text.contains(line), "{line}\nnot in\n{text}");
        }
        // Scaled with the operations under sampling.
        let scaled = op(10, Some(30), None).scaled(2.0);
        assert_eq!(
            (scaled.count, scaled.partitions, scaled.rows),
            (20, Some(60), None)
        );
    }

    #[test]
    fn times_are_hours_minutes_seconds() {
        assert_eq!(format_hms(60.0), "00:01:00");
        assert_eq!(format_hms(5400.4), "01:30:00");
    }
}
