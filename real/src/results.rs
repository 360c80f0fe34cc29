//! The results folder of a real run, in `twin run`'s shape:
//! - `summary.json`: per op type and per load the same `OpSummary` as a
//!   simulated run (count, rate, latency percentiles in ms, errors), and a
//!   `server` block: the server's CPU seconds (whole run and per load, with
//!   CPU microseconds per operation), its G1 pauses, the tasks its thread
//!   pools completed per load, the CPU seconds of its threads by pool per
//!   load and the times they were put on a core (a local server:
//!   `/proc/PID/task`), its compactions; `missing`
//!   says which of these the server did not expose;
//! - `timeseries.csv`: one row per interval, `time_s`, then per op type
//!   `<op>_ops_per_s` and `<op>_p99_ms` (the names `twin run` uses), then
//!   `node0_cpu_utilisation` (the server's CPU seconds over its allowed
//!   cores), `node0_gc_pause_ms`, `node0_pending_tasks`, `node0_flushes`,
//!   `node0_compactions`, `node0_compaction_cpu_fraction` (its compaction
//!   threads' CPU over its allowed cores, as the twin's column),
//!   `node0_compiler_cpu_fraction` (its JIT compiler threads', which the
//!   twin does not have) and `client_cpu_utilisation` (this process, over one core); a cell the
//!   server did not give is empty;
//! - `hdr/<load>-<op>.hlog`: HdrHistogram interval logs, as `twin run`
//!   writes them, timestamps in seconds since the run started;
//! - `server/gc.log`: the GC log's lines over the run.
//!
//! The figures of a real run are noisy: two runs differ. Nothing here is
//! byte-stable, unlike a simulated run's folder.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use sim::metrics::{round3, LatencySummary};
use sim::report::{LoadSummary, OpSummary};

use crate::server::GcSummary;
use crate::RealRun;

/// `summary.json` of a real run.
#[derive(Clone, Debug, Serialize)]
pub struct RealSummary {
    /// Scenario name.
    pub scenario: String,
    /// Always `real`: this folder holds a measurement, not a simulation.
    pub kind: &'static str,
    /// The endpoint it ran against.
    pub contact: String,
    /// The server's `release_version`.
    pub server_version: String,
    /// The seed of the client's draws (keys, mix, values).
    pub seed: u64,
    /// Wall seconds the run took.
    pub seconds: f64,
    /// Per op type over every load.
    pub ops: BTreeMap<String, OpSummary>,
    /// Per load.
    pub loads: BTreeMap<String, LoadSummary>,
    /// The server's side, per load.
    pub load_server: BTreeMap<String, LoadServer>,
    /// The server's side over the whole run.
    pub server: ServerSummary,
}

/// The server's work over one load.
#[derive(Clone, Debug, Serialize)]
pub struct LoadServer {
    /// Seconds the load ran.
    pub seconds: f64,
    /// The server's CPU seconds over it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    /// Of its allowed cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_utilisation: Option<f64>,
    /// CPU microseconds per operation answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_op: Option<f64>,
    /// This client's CPU seconds over it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cpu_seconds: Option<f64>,
    /// GC pauses within the load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcSummary>,
    /// Tasks each thread pool completed over it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_pools: Option<BTreeMap<String, i64>>,
    /// The machine's disk I/O over it (a local server only): what the page
    /// cache did not absorb.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskSummary>,
    /// Its CPU seconds by thread pool (a local server only: each thread's
    /// `/proc` name without its number; compaction, flushes, GC, the JIT
    /// and the request stages apart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_cpu_seconds: Option<BTreeMap<String, f64>>,
    /// Times its threads were put on a core (context switches, each
    /// thread's `/proc/PID/task/TID/schedstat`), by thread pool: what
    /// each operation paid in wake-ups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_runs: Option<BTreeMap<String, u64>>,
    /// Of those, the times they were preempted rather than woken (each
    /// thread's `nonvoluntary_ctxt_switches`), by thread pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_preemptions: Option<BTreeMap<String, u64>>,
    /// Of `thread_cpu_seconds`, the seconds in the kernel (each thread's
    /// `stime`: system calls, page faults, interrupts taken while it
    /// ran), by thread pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_system_cpu_seconds: Option<BTreeMap<String, f64>>,
}

/// `load_server.<load>.disk`.
#[derive(Clone, Debug, Serialize)]
pub struct DiskSummary {
    /// Reads completed.
    pub reads: u64,
    /// Of them, per operation answered.
    pub reads_per_op: f64,
    /// MiB read.
    pub read_mib: f64,
    /// Writes completed.
    pub writes: u64,
    /// MiB written.
    pub written_mib: f64,
}

/// The server over the whole run.
#[derive(Clone, Debug, Serialize)]
pub struct ServerSummary {
    /// Cores it may run on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// Its CPU seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    /// Its GC pauses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcSummary>,
    /// Compactions of the load's keyspace: count, bytes in, bytes out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compactions: Option<Compactions>,
    /// What the server did not expose, one line each.
    pub missing: Vec<String>,
}

/// Compactions over the run.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Compactions {
    /// How many.
    pub count: u64,
    /// Bytes they read.
    pub bytes_in: i64,
    /// Bytes they wrote.
    pub bytes_out: i64,
}

impl RealSummary {
    /// The summary of a finished real run.
    pub fn of(run: &RealRun) -> RealSummary {
        let mut loads = BTreeMap::new();
        let mut load_server = BTreeMap::new();
        // Per op kind over every load: merged histogram, counts, window.
        let mut whole: BTreeMap<String, (OpSummary, hdrhistogram::Histogram<u64>, f64, f64)> =
            BTreeMap::new();
        let start_s = crate::server::unix_seconds(run.started_at);
        for (plan, load) in run.plan.loads.iter().zip(&run.loads) {
            let seconds = (load.window_s.1 - load.window_s.0).max(1e-9);
            let mut ops = BTreeMap::new();
            let mut answered = 0;
            for stats in load
                .stats
                .ops
                .iter()
                .filter(|ops| ops.count + ops.errors > 0)
            {
                answered += stats.count;
                let summary = op_summary(stats, seconds);
                let entry = whole
                    .entry(stats.kind.name().to_string())
                    .or_insert_with(|| {
                        (
                            zero_summary(),
                            crate::driver::histogram(),
                            load.window_s.0,
                            load.window_s.1,
                        )
                    });
                entry
                    .1
                    .add(&stats.total)
                    .expect("histograms of one shape merge");
                entry.0.count += summary.count;
                entry.0.not_found += summary.not_found;
                entry.0.timeouts += summary.timeouts;
                entry.0.errors += summary.errors;
                entry.0.rows = Some(entry.0.rows.unwrap_or(0) + summary.row_count());
                entry.2 = entry.2.min(load.window_s.0);
                entry.3 = entry.3.max(load.window_s.1);
                ops.insert(stats.kind.name().to_string(), summary);
            }
            let gc = run.gc.as_ref().map(|(pauses, lines)| {
                let within: Vec<_> = pauses
                    .iter()
                    .filter(|pause| {
                        let at = pause.at_unix_s - start_s;
                        at >= load.window_s.0 && at <= load.window_s.1
                    })
                    .cloned()
                    .collect();
                GcSummary {
                    mutator_refinement: crate::server::mutator_refinement(
                        lines,
                        start_s + load.window_s.0,
                        start_s + load.window_s.1,
                    ),
                    ..GcSummary::of(&within, seconds)
                }
            });
            load_server.insert(
                plan.name.clone(),
                LoadServer {
                    seconds: round3(seconds),
                    cpu_seconds: load.server_cpu_s.map(round3),
                    cpu_utilisation: load
                        .server_cpu_s
                        .zip(run.server_cores)
                        .map(|(cpu, cores)| round3(cpu / seconds / f64::from(cores.max(1)))),
                    cpu_us_per_op: load
                        .server_cpu_s
                        .filter(|_| answered > 0)
                        .map(|cpu| round3(cpu * 1e6 / answered as f64)),
                    client_cpu_seconds: load.client_cpu_s.map(round3),
                    gc,
                    thread_pools: load.pools.clone(),
                    disk: load.server_disk.map(|disk| DiskSummary {
                        reads: disk.reads,
                        reads_per_op: round3(disk.reads as f64 / answered.max(1) as f64),
                        read_mib: round3(disk.read_bytes as f64 / 1_048_576.0),
                        writes: disk.writes,
                        written_mib: round3(disk.written_bytes as f64 / 1_048_576.0),
                    }),
                    thread_cpu_seconds: load.server_threads.as_ref().map(rounded),
                    thread_runs: load.server_thread_runs.clone(),
                    thread_preemptions: load.server_thread_preemptions.clone(),
                    thread_system_cpu_seconds: load.server_thread_system.as_ref().map(rounded),
                },
            );
            loads.insert(
                plan.name.clone(),
                LoadSummary {
                    command: plan.command.clone(),
                    ops,
                    failures: {
                        let mut failures: Vec<_> = load
                            .stats
                            .failures
                            .iter()
                            .map(|&(process, at)| sim::report::ProcessFailure {
                                process,
                                at_s: round3(at.as_secs_f64()),
                            })
                            .collect();
                        failures.sort_by_key(|failure| failure.process);
                        failures
                    },
                },
            );
        }
        let ops = whole
            .into_iter()
            .map(|(name, (mut summary, histogram, from, to))| {
                let seconds = (to - from).max(1e-9);
                summary.ops_per_s = round3(summary.count as f64 / seconds);
                summary.latency_ms = LatencySummary::of(&histogram);
                summary.seconds = round3(seconds);
                summary.rows = summary.rows.filter(|rows| *rows != summary.count);
                (name, summary)
            })
            .collect();
        RealSummary {
            scenario: run.plan.scenario.clone(),
            kind: "real",
            contact: run.contact.clone(),
            server_version: run.server_version.clone(),
            seed: run.plan.seed,
            seconds: round3(run.seconds),
            ops,
            loads,
            load_server,
            server: ServerSummary {
                cores: run.server_cores,
                cpu_seconds: {
                    let spent: Vec<f64> =
                        run.rows.iter().filter_map(|row| row.server_cpu_s).collect();
                    (!spent.is_empty()).then(|| round3(spent.iter().sum()))
                },
                gc: run.gc.as_ref().map(|(pauses, lines)| GcSummary {
                    mutator_refinement: crate::server::mutator_refinement(
                        lines,
                        f64::NEG_INFINITY,
                        f64::INFINITY,
                    ),
                    ..GcSummary::of(pauses, run.seconds)
                }),
                compactions: run
                    .compactions
                    .map(|(count, bytes_in, bytes_out)| Compactions {
                        count,
                        bytes_in,
                        bytes_out,
                    }),
                missing: run.missing.clone(),
            },
        }
    }

    /// cassandra-stress style "Results:" blocks, as `twin run` prints them,
    /// then the server's side in a few lines.
    pub fn to_stress_text(&self) -> String {
        let mut out = sim::report::results_text(&self.loads, &self.ops, self.seconds);
        let _ = writeln!(out, "\nServer: {} at {}", self.server_version, self.contact);
        for (name, load) in &self.load_server {
            let mut parts = Vec::new();
            if let Some(cpu) = load.cpu_seconds {
                parts.push(format!("{cpu:.1} CPU s"));
            }
            if let Some(utilisation) = load.cpu_utilisation {
                parts.push(format!("{:.0}% of its cores", utilisation * 100.0));
            }
            if let Some(per_op) = load.cpu_us_per_op {
                parts.push(format!("{per_op:.0} CPU us/op"));
            }
            if let Some(gc) = &load.gc {
                parts.push(format!(
                    "{} GC pauses ({:.0} ms, longest {:.0} ms)",
                    gc.pauses, gc.total_ms, gc.max_ms
                ));
            }
            if let Some(pools) = &load.thread_pools {
                let flushes = pools.get("MemtableFlushWriter").copied().unwrap_or(0);
                let compactions = pools.get("CompactionExecutor").copied().unwrap_or(0);
                parts.push(format!(
                    "{flushes} flush tasks, {compactions} CompactionExecutor tasks"
                ));
            }
            if let Some(disk) = &load.disk {
                parts.push(format!(
                    "disk {} reads ({:.2}/op, {:.0} MiB), {} writes ({:.0} MiB)",
                    disk.reads, disk.reads_per_op, disk.read_mib, disk.writes, disk.written_mib
                ));
            }
            if !parts.is_empty() {
                let _ = writeln!(out, "  load `{name}`: {}", parts.join(", "));
            }
        }
        for line in &self.server.missing {
            let _ = writeln!(out, "  not measured: {line}");
        }
        out
    }
}

/// Seconds by thread pool, each rounded as the summary's figures are
/// ([`round3`]).
fn rounded(groups: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    groups
        .iter()
        .map(|(group, seconds)| (group.clone(), round3(*seconds)))
        .collect()
}

fn zero_summary() -> OpSummary {
    OpSummary {
        count: 0,
        ops_per_s: 0.0,
        latency_ms: LatencySummary {
            mean: 0.0,
            p50: 0.0,
            p95: 0.0,
            p99: 0.0,
            p999: 0.0,
            max: 0.0,
        },
        seconds: 0.0,
        not_found: 0,
        timeouts: 0,
        errors: 0,
        partitions: None,
        rows: None,
    }
}

/// One op kind of one load, over its `seconds`: as c-s, the rate is the
/// count over the load's duration.
fn op_summary(stats: &crate::driver::OpStats, seconds: f64) -> OpSummary {
    OpSummary {
        count: stats.count,
        ops_per_s: round3(stats.count as f64 / seconds),
        latency_ms: LatencySummary::of(&stats.total),
        seconds: round3(seconds),
        not_found: stats.not_found,
        timeouts: stats.timeouts,
        errors: stats.errors,
        partitions: None,
        rows: (stats.rows != stats.count).then_some(stats.rows),
    }
}

/// `timeseries.csv`.
pub fn timeseries_csv(run: &RealRun) -> String {
    let kinds: Vec<String> = {
        let mut kinds: Vec<String> = run
            .plan
            .loads
            .iter()
            .flat_map(|load| load.op_kinds())
            .map(|kind| kind.name().to_string())
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    };
    let mut header = vec!["time_s".to_string()];
    for kind in &kinds {
        header.push(format!("{kind}_ops_per_s"));
        header.push(format!("{kind}_p99_ms"));
    }
    header.extend(
        [
            "node0_cpu_utilisation",
            "node0_gc_pause_ms",
            "node0_pending_tasks",
            "node0_flushes",
            "node0_compactions",
            "node0_compaction_cpu_fraction",
            "node0_compiler_cpu_fraction",
            "client_cpu_utilisation",
        ]
        .map(String::from),
    );
    let start_s = crate::server::unix_seconds(run.started_at);
    let mut out = header.join(",");
    out.push('\n');
    for row in &run.rows {
        let mut cells = vec![format!("{:.3}", row.time_s)];
        for kind in &kinds {
            match row.ops.get(kind) {
                Some((count, p99)) => {
                    cells.push(format!("{:.1}", *count as f64 / row.length_s));
                    cells.push(format!("{p99:.3}"));
                }
                None => cells.extend(["0.0".to_string(), "0.000".to_string()]),
            }
        }
        let cores = f64::from(run.server_cores.unwrap_or(1).max(1));
        cells.push(row.server_cpu_s.map_or(String::new(), |cpu| {
            format!("{:.4}", cpu / row.length_s / cores)
        }));
        cells.push(run.gc.as_ref().map_or(String::new(), |(pauses, _)| {
            let to = row.time_s;
            let from = to - row.length_s;
            let ms: f64 = pauses
                .iter()
                .filter(|pause| {
                    let at = pause.at_unix_s - start_s;
                    at > from && at <= to
                })
                .map(|pause| pause.ms)
                .sum();
            // An empty float sum is -0.0: print it as 0.
            format!("{:.3}", ms + 0.0)
        }));
        for value in [
            row.server_pending,
            row.server_flushes,
            row.server_compactions,
        ] {
            cells.push(value.map_or(String::new(), |value| value.to_string()));
        }
        // As the twin's column: the share of the node's cores.
        for cpu in [row.server_compaction_cpu_s, row.server_compiler_cpu_s] {
            cells.push(cpu.map_or(String::new(), |cpu| {
                format!("{:.4}", cpu / row.length_s / cores)
            }));
        }
        cells.push(
            row.client_cpu_s
                .map_or(String::new(), |cpu| format!("{:.4}", cpu / row.length_s)),
        );
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// Writes the folder (see the module doc) whole, as `twin run` writes
/// its own ([`sim::results_dir`]), and returns the summary.
pub fn write(dir: &Path, run: &RealRun) -> std::io::Result<RealSummary> {
    write_into(sim::results_dir::PendingResults::prepare(dir)?, run)
}

/// [`write`] into a folder prepared before the run (a bad `--out` fails
/// before the load starts), then put in place with its completion record.
pub fn write_into(
    pending: sim::results_dir::PendingResults,
    run: &RealRun,
) -> std::io::Result<RealSummary> {
    let summary = write_files(pending.path(), run)?;
    pending.commit(&sim::results_dir::Completion::new(
        &run.plan.scenario,
        run.plan.seed,
    ))?;
    Ok(summary)
}

/// The folder's files, into `dir` as it is.
fn write_files(dir: &Path, run: &RealRun) -> std::io::Result<RealSummary> {
    let summary = RealSummary::of(run);
    let mut json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
    json.push('\n');
    std::fs::write(dir.join("summary.json"), json)?;
    std::fs::write(dir.join("timeseries.csv"), timeseries_csv(run))?;
    let hdr = dir.join("hdr");
    std::fs::create_dir_all(&hdr)?;
    for (plan, load) in run.plan.loads.iter().zip(&run.loads) {
        for (ops, intervals) in load.stats.ops.iter().zip(&load.intervals) {
            let text = sim::report::hdr_log_text(
                &format!(
                    "twin real: load `{}`, {} latencies in microseconds, timestamps in seconds since the run started",
                    plan.name,
                    ops.kind.name()
                ),
                intervals,
            )?;
            let file = hdr.join(format!(
                "{}-{}.hlog",
                sim::report::file_safe(&plan.name),
                ops.kind.name()
            ));
            std::fs::write(file, text)?;
        }
    }
    if let Some((_, lines)) = &run.gc {
        let server = dir.join("server");
        std::fs::create_dir_all(&server)?;
        std::fs::write(server.join("gc.log"), lines)?;
    }
    Ok(summary)
}
