//! `twin real`: a scenario's cassandra-stress loads run for real against a
//! CQL endpoint (a node started by `deploy/real/cassandra.sh`, or a user's
//! own Cassandra or Scylla cluster), written as the same results folder as
//! `twin run`, so a real run and its simulation compare figure for figure.
//!
//! The loads are the scenario's, resolved by the simulator's own planner
//! (`sim::plan`): the same processes, threads, pacers
//! (`sim::load::Schedule`), key sources, op mixes and seeded streams; only
//! time is real and the operations go through a CQL driver (`scylla`, which
//! speaks to Cassandra and Scylla alike). See [`driver`] for the client,
//! [`workload`] for the schema and statements, [`server`] for what is read
//! from the server's side, [`results`] for the folder.
//!
//! This is the only crate of the workspace with sockets and an async
//! runtime. It uses `sim`'s public planning, load and report types, never
//! its cluster or kernel.

pub mod clock;
pub mod device;
pub mod driver;
pub mod results;
pub mod server;
pub mod workload;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use sim::cluster::RunPlan;
use sim::load::StartPlan;

use crate::driver::{LoadContext, LoadStats};
use crate::server::{GcPause, Pools, ServerProbe};
use crate::workload::Workload;

/// How to reach the cluster and its server.
#[derive(Clone, Debug)]
pub struct Options {
    /// `HOST[:PORT]` of one node (port 9042 when absent).
    pub contact: String,
    /// The local server's process and GC log, where known.
    pub probe: ServerProbe,
    /// How long to wait for the first connection.
    pub connect_timeout: Duration,
}

/// Why a real run could not be done.
#[derive(Debug)]
pub enum RealError {
    /// The scenario asks for what `twin real` cannot run.
    Input(String),
    /// The endpoint could not be reached, or refused the schema.
    Cluster(String),
}

impl std::fmt::Display for RealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RealError::Input(message) | RealError::Cluster(message) => f.write_str(message),
        }
    }
}

/// One op kind's intervals: `(start since the run began, length,
/// latencies)`, for its HDR log.
pub type Intervals = Vec<(Duration, Duration, hdrhistogram::Histogram<u64>)>;

/// One load's measured figures.
#[derive(Debug)]
pub struct LoadRun {
    /// Its counts and histograms.
    pub stats: LoadStats,
    /// Seconds from the run's start to the load's start and end.
    pub window_s: (f64, f64),
    /// The server's CPU seconds over the load, where known.
    pub server_cpu_s: Option<f64>,
    /// This process's CPU seconds over the load.
    pub client_cpu_s: Option<f64>,
    /// Tasks each server thread pool completed over the load.
    pub pools: Option<BTreeMap<String, i64>>,
    /// The machine's disk I/O over the load (a local server only).
    pub server_disk: Option<server::DiskCounters>,
    /// The server's CPU seconds over the load by thread pool
    /// ([`models::jvm::thread_pool_of`]), a local server only.
    pub server_threads: Option<BTreeMap<String, f64>>,
    /// Times the server's threads were put on a core, by pool.
    pub server_thread_runs: Option<BTreeMap<String, u64>>,
    /// Of those, the times they were preempted (not woken), by pool.
    pub server_thread_preemptions: Option<BTreeMap<String, u64>>,
    /// Of the server's CPU seconds by pool, those in the kernel.
    pub server_thread_system: Option<BTreeMap<String, f64>>,
    /// Per op kind, each interval's `(start, length, histogram)`.
    pub intervals: Vec<Intervals>,
}

/// One interval of the whole run (a row of `timeseries.csv`).
#[derive(Clone, Debug, Default)]
pub struct IntervalRow {
    /// Seconds since the run started, at the interval's end.
    pub time_s: f64,
    /// Its length, seconds.
    pub length_s: f64,
    /// Per op kind over every load: operations answered, and the
    /// interval's p99 in ms.
    pub ops: BTreeMap<String, (u64, f64)>,
    /// The server's CPU seconds in the interval.
    pub server_cpu_s: Option<f64>,
    /// This process's CPU seconds in the interval.
    pub client_cpu_s: Option<f64>,
    /// Tasks waiting in the server's pools at the interval's end.
    pub server_pending: Option<i64>,
    /// Flushes and compaction tasks completed in the interval.
    pub server_flushes: Option<i64>,
    /// Compaction tasks completed in the interval.
    pub server_compactions: Option<i64>,
    /// CPU seconds the server's compaction threads spent in the interval.
    pub server_compaction_cpu_s: Option<f64>,
    /// CPU seconds the server's JIT compiler threads spent in the
    /// interval (`models::jvm::is_compiler_pool`).
    pub server_compiler_cpu_s: Option<f64>,
}

/// A finished real run.
#[derive(Debug)]
pub struct RealRun {
    /// The plan it ran.
    pub plan: RunPlan,
    /// Where it ran.
    pub contact: String,
    /// The server's `release_version`.
    pub server_version: String,
    /// Wall time when it started.
    pub started_at: SystemTime,
    /// Seconds it lasted.
    pub seconds: f64,
    /// Per load, in the plan's order.
    pub loads: Vec<LoadRun>,
    /// Per interval.
    pub rows: Vec<IntervalRow>,
    /// Cores the server may run on, where known.
    pub server_cores: Option<u32>,
    /// The GC pauses within the run, and the log's lines over it.
    pub gc: Option<(Vec<GcPause>, String)>,
    /// Compactions of the load's keyspace over the run: count, bytes in,
    /// bytes out.
    pub compactions: Option<(u64, i64, i64)>,
    /// What could not be read from the server, one line each.
    pub missing: Vec<String>,
}

/// Runs `plan`'s loads against `options.contact`, printing c-s style
/// interval lines through `say` as they come.
pub fn run(
    plan: RunPlan,
    options: &Options,
    say: &(dyn Fn(&str) + Sync),
) -> Result<RealRun, RealError> {
    if !plan.faults.is_empty() || !plan.operations.is_empty() {
        return Err(RealError::Input(
            "`twin real` runs a scenario's loads only; its [[fault]]s and [[action]]s are simulated by `twin run` (start and stop real nodes with deploy/real/cassandra.sh)".into(),
        ));
    }
    if let Some(search) = plan.loads.iter().find_map(|load| load.search.as_ref()) {
        return Err(RealError::Input(format!(
            "load `{}` has no thread count: c-s's thread search runs in the twin (`twin run`); for a real run give `-rate threads=N`",
            search.load
        )));
    }
    if let Some(load) = plan
        .loads
        .iter()
        .find(|load| matches!(load.stop, sim::load::StopPlan::Uncertainty { .. }))
    {
        return Err(RealError::Input(format!(
            "load `{}` has neither n= nor duration=: c-s's run-until-stable mode (err<) runs in the twin (`twin run`); for a real run give one",
            load.name
        )));
    }
    let mut workloads = Vec::with_capacity(plan.loads.len());
    for load in &plan.loads {
        let workload = Workload::of(&load.command, plan.cluster.replication_factor)
            .map_err(|error| RealError::Input(format!("load `{}`: {error}", load.name)))?;
        workloads.push(workload);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| RealError::Cluster(format!("cannot start the client runtime: {error}")))?;
    runtime.block_on(run_async(plan, workloads, options, say))
}

fn contact_address(contact: &str) -> String {
    if contact.contains(':') && !contact.starts_with('[') && contact.matches(':').count() == 1 {
        contact.to_string()
    } else if contact.ends_with(']') || !contact.contains(':') {
        format!("{contact}:9042")
    } else {
        contact.to_string()
    }
}

async fn run_async(
    plan: RunPlan,
    workloads: Vec<Workload>,
    options: &Options,
    say: &(dyn Fn(&str) + Sync),
) -> Result<RealRun, RealError> {
    let address = contact_address(&options.contact);
    let session = tokio::time::timeout(
        options.connect_timeout,
        SessionBuilder::new().known_node(&address).build(),
    )
    .await
    .map_err(|_| {
        RealError::Cluster(format!(
            "cannot connect to {address}: no answer within {} s",
            options.connect_timeout.as_secs()
        ))
    })?
    .map_err(|error| RealError::Cluster(format!("cannot connect to {address}: {error}")))?;
    let session = Arc::new(session);
    let server_version = release_version(&session).await;
    let mut prepared = Vec::with_capacity(workloads.len());
    for (load, workload) in plan.loads.iter().zip(&workloads) {
        for statement in [&workload.create_keyspace, &workload.create_table] {
            session
                .query_unpaged(statement.as_str(), &[])
                .await
                .map_err(|error| {
                    RealError::Cluster(format!("load `{}`: {statement}: {error}", load.name))
                })?;
        }
        session
            .await_schema_agreement()
            .await
            .map_err(|error| RealError::Cluster(format!("schema agreement: {error}")))?;
        // Only what the load uses is prepared: a read load runs against a
        // table written with fewer columns than its own `-col` says.
        let kinds = load.op_kinds();
        let insert = if kinds.contains(&sim::load::OpKind::Write) {
            Some(prepare(&session, &workload.insert, workload, "insert", &load.name).await?)
        } else {
            None
        };
        let select = if kinds.contains(&sim::load::OpKind::Read) {
            Some(prepare(&session, &workload.select, workload, "read", &load.name).await?)
        } else {
            None
        };
        prepared.push((insert, select));
    }

    let started_at = clock::wall();
    let origin = clock::now();
    let stats: Vec<Arc<Mutex<LoadStats>>> = plan
        .loads
        .iter()
        .map(|load| Arc::new(Mutex::new(LoadStats::new(load))))
        .collect();
    let contexts: Vec<Arc<LoadContext>> = plan
        .loads
        .iter()
        .zip(workloads)
        .zip(prepared)
        .zip(&stats)
        .map(|(((load, workload), (insert, select)), stats)| {
            Arc::new(LoadContext {
                plan: load.clone(),
                workload,
                insert,
                select,
                session: Arc::clone(&session),
                stats: Arc::clone(stats),
                origin,
                seed: plan.seed,
            })
        })
        .collect();

    // Each load waits for its start, then runs; its end is announced to the
    // loads that start after it.
    let finished: Vec<_> = (0..contexts.len())
        .map(|_| tokio::sync::watch::channel(false))
        .collect();
    let receivers: Vec<_> = finished.iter().map(|(_, rx)| rx.clone()).collect();
    let mut loads = tokio::task::JoinSet::new();
    for (index, ((context, (done, _)), load)) in
        contexts.iter().zip(finished).zip(&plan.loads).enumerate()
    {
        let context = Arc::clone(context);
        let session = Arc::clone(&session);
        let probe = options.probe.clone();
        let mut after = match load.start {
            StartPlan::After(other) => Some(receivers[other].clone()),
            StartPlan::At(_) => None,
        };
        let at = match load.start {
            StartPlan::At(at) => Duration::from_nanos(at.as_nanos()),
            StartPlan::After(_) => Duration::ZERO,
        };
        loads.spawn(async move {
            if let Some(after) = after.as_mut() {
                let _ = after.wait_for(|done| *done).await;
            }
            tokio::time::sleep_until((origin + at).into()).await;
            let before = Reading::take(&session, &probe).await;
            let began = origin.elapsed().as_secs_f64();
            driver::run_load(Arc::clone(&context)).await;
            let ended = origin.elapsed().as_secs_f64();
            let after = Reading::take(&session, &probe).await;
            let _ = done.send(true);
            (index, before, after, (began, ended))
        });
    }

    // The interval reporter: c-s lines, and one time-series row.
    let interval = Duration::from_nanos(plan.interval.as_nanos()).max(Duration::from_millis(100));
    let mut rows = Vec::new();
    let mut intervals: Vec<Vec<Intervals>> = plan
        .loads
        .iter()
        .map(|load| vec![Vec::new(); load.op_kinds().len()])
        .collect();
    let mut headers_printed = vec![false; plan.loads.len()];
    let mut reporting_lines = vec![sim::report::ReportingLines::default(); plan.loads.len()];
    let mut last = Reading::take(&session, &options.probe).await;
    let mut last_at = origin;
    let mut ticker = tokio::time::interval_at((origin + interval).into(), interval);
    let mut ended = Vec::new();
    while ended.len() < plan.loads.len() {
        tokio::select! {
            result = loads.join_next() => {
                match result {
                    Some(Ok(result)) => ended.push(result),
                    Some(Err(error)) => {
                        return Err(RealError::Cluster(format!("a load's task failed: {error}")));
                    }
                    // Every task joined: the loop's condition ends it.
                    None => break,
                }
            }
            _ = ticker.tick() => {
                let now = clock::now();
                let reading = Reading::take(&session, &options.probe).await;
                let row = report_interval(
                    &plan, &stats, &mut intervals, &mut headers_printed, &mut reporting_lines,
                    (last_at.duration_since(origin), now.duration_since(origin)),
                    &last, &reading, say,
                );
                rows.push(row);
                last = reading;
                last_at = now;
            }
        }
    }
    // The last, partial interval.
    let now = clock::now();
    if now.duration_since(last_at) > Duration::from_millis(1) {
        let reading = Reading::take(&session, &options.probe).await;
        rows.push(report_interval(
            &plan,
            &stats,
            &mut intervals,
            &mut headers_printed,
            &mut reporting_lines,
            (last_at.duration_since(origin), now.duration_since(origin)),
            &last,
            &reading,
            say,
        ));
    }
    let seconds = origin.elapsed().as_secs_f64();
    let ended_at = clock::wall();

    let mut missing = Vec::new();
    let server_cores = options.probe.pid.and_then(server::allowed_cores);
    if options.probe.pid.is_none() {
        missing.push(
            "server CPU: no local server process given (--server-dir or --server-pid)".to_string(),
        );
    }
    if last.pools.is_none() {
        missing.push("server thread pools: the server has no system_views.thread_pools (Cassandra 4.0 or later has)".to_string());
    }
    let gc = match &options.probe.gc_log {
        Some(log) => match server::gc_pauses(log, started_at, ended_at) {
            Ok(gc) => Some(gc),
            Err(error) => {
                missing.push(format!("GC log {}: {error}", log.display()));
                None
            }
        },
        None => {
            missing.push("GC log: none given (--server-dir or --gc-log)".to_string());
            None
        }
    };
    let since_ms = (server::unix_seconds(started_at) * 1000.0) as i64;
    let compactions = server::compactions_since(&session, workload::KEYSPACE, since_ms).await;
    if compactions.is_none() {
        missing.push("compaction history: system.compaction_history could not be read".to_string());
    }

    ended.sort_by_key(|(index, ..)| *index);
    let mut load_runs = Vec::with_capacity(plan.loads.len());
    for ((index, before, after, window), intervals) in ended.into_iter().zip(intervals) {
        let stats = std::mem::replace(
            &mut *stats[index].lock().expect("stats lock"),
            LoadStats::new(&plan.loads[index]),
        );
        load_runs.push(LoadRun {
            stats,
            window_s: window,
            server_cpu_s: after.server_cpu_since(&before),
            client_cpu_s: after.client_cpu_since(&before),
            pools: after
                .pools
                .as_ref()
                .zip(before.pools.as_ref())
                .map(|(a, b)| server::pool_deltas(b, a)),
            server_disk: after.disk.zip(before.disk).map(|(a, b)| a.since(&b)),
            server_threads: after.threads_since(&before),
            server_thread_runs: after.thread_runs_since(&before),
            server_thread_preemptions: after.thread_preemptions_since(&before),
            server_thread_system: after.thread_system_since(&before),
            intervals,
        });
    }
    Ok(RealRun {
        plan,
        contact: address,
        server_version,
        started_at,
        seconds,
        loads: load_runs,
        rows,
        server_cores,
        gc,
        compactions,
        missing,
    })
}

/// What the server and this process had done at one moment.
struct Reading {
    server_cpu_s: Option<f64>,
    client_cpu_s: Option<f64>,
    pools: Option<Pools>,
    /// The machine's disk counters, when the server runs on it.
    disk: Option<server::DiskCounters>,
    /// The server's threads and their CPU seconds, when it is local.
    threads: Option<server::ThreadCpu>,
}

impl Reading {
    /// The server's CPU seconds since `before`, where both readings have them.
    fn server_cpu_since(&self, before: &Reading) -> Option<f64> {
        Some(self.server_cpu_s? - before.server_cpu_s?)
    }

    /// The server's CPU seconds since `before` by thread pool.
    fn threads_since(&self, before: &Reading) -> Option<BTreeMap<String, f64>> {
        Some(self.threads.as_ref()?.since(before.threads.as_ref()?))
    }

    /// Times the server's threads were put on a core since `before`, by
    /// thread pool.
    fn thread_runs_since(&self, before: &Reading) -> Option<BTreeMap<String, u64>> {
        Some(self.threads.as_ref()?.runs_since(before.threads.as_ref()?))
    }

    /// Times the server's threads were preempted since `before`, by
    /// thread pool.
    fn thread_preemptions_since(&self, before: &Reading) -> Option<BTreeMap<String, u64>> {
        Some(
            self.threads
                .as_ref()?
                .preemptions_since(before.threads.as_ref()?),
        )
    }

    /// The server's CPU seconds in the kernel since `before`, by thread
    /// pool.
    fn thread_system_since(&self, before: &Reading) -> Option<BTreeMap<String, f64>> {
        Some(
            self.threads
                .as_ref()?
                .system_since(before.threads.as_ref()?),
        )
    }

    /// This process's CPU seconds since `before`.
    fn client_cpu_since(&self, before: &Reading) -> Option<f64> {
        Some(self.client_cpu_s? - before.client_cpu_s?)
    }

    async fn take(session: &Session, probe: &ServerProbe) -> Reading {
        Reading {
            server_cpu_s: probe.cpu_seconds(),
            client_cpu_s: server::process_cpu_seconds("/proc/self/stat"),
            pools: server::thread_pools(session).await,
            disk: probe.pid.and_then(|_| server::DiskCounters::read()),
            threads: probe.pid.and_then(server::ThreadCpu::read),
        }
    }
}

/// Prepares one of a load's statements at its consistency level.
async fn prepare(
    session: &Session,
    statement: &str,
    workload: &Workload,
    what: &str,
    load: &str,
) -> Result<scylla::statement::prepared::PreparedStatement, RealError> {
    let mut prepared = session.prepare(statement).await.map_err(|error| {
        RealError::Cluster(format!("load `{load}`: preparing the {what}: {error}"))
    })?;
    prepared.set_consistency(workload.consistency);
    Ok(prepared)
}

async fn release_version(session: &Session) -> String {
    let Ok(result) = session
        .query_unpaged("SELECT release_version FROM system.local", &[])
        .await
    else {
        return "unknown".into();
    };
    result
        .into_rows_result()
        .ok()
        .and_then(|rows| rows.first_row::<(String,)>().ok())
        .map_or_else(|| "unknown".into(), |(version,)| version)
}

/// Closes one interval: prints each active load's c-s lines, keeps its
/// histograms for the HDR logs, and returns the time-series row.
#[allow(clippy::too_many_arguments)]
fn report_interval(
    plan: &RunPlan,
    stats: &[Arc<Mutex<LoadStats>>],
    intervals: &mut [Vec<Intervals>],
    headers_printed: &mut [bool],
    reporting_lines: &mut [sim::report::ReportingLines],
    (from, to): (Duration, Duration),
    before: &Reading,
    after: &Reading,
    say: &(dyn Fn(&str) + Sync),
) -> IntervalRow {
    let length = (to - from).as_secs_f64().max(1e-9);
    let mut row = IntervalRow {
        time_s: to.as_secs_f64(),
        length_s: length,
        server_cpu_s: after.server_cpu_since(before),
        client_cpu_s: after.client_cpu_since(before),
        server_pending: after
            .pools
            .as_ref()
            .map(|pools| pools.values().map(|pool| i64::from(pool.pending)).sum()),
        ..IntervalRow::default()
    };
    if let Some(groups) = after.threads_since(before) {
        // An empty float sum is -0.0; adding 0.0 makes it 0.
        let sum = |wanted: fn(&str) -> bool| -> f64 {
            groups
                .iter()
                .filter(|(pool, _)| wanted(pool))
                .map(|(_, seconds)| seconds)
                .sum::<f64>()
                + 0.0
        };
        row.server_compaction_cpu_s = Some(sum(models::jvm::is_compaction_pool));
        row.server_compiler_cpu_s = Some(sum(models::jvm::is_compiler_pool));
    }
    if let (Some(a), Some(b)) = (&after.pools, &before.pools) {
        let deltas = server::pool_deltas(b, a);
        row.server_flushes = Some(deltas.get("MemtableFlushWriter").copied().unwrap_or(0));
        row.server_compactions = Some(deltas.get("CompactionExecutor").copied().unwrap_or(0));
    }
    let mut merged: BTreeMap<String, hdrhistogram::Histogram<u64>> = BTreeMap::new();
    for (index, load) in plan.loads.iter().enumerate() {
        let mut stats = stats[index].lock().expect("stats lock");
        let Some(started) = stats.started else {
            continue;
        };
        let active = stats.finished.is_none() || stats.ops.iter().any(|ops| ops.interval_count > 0);
        if !active {
            continue;
        }
        if !headers_printed[index] {
            headers_printed[index] = true;
            say(&format!("Running load `{}`: {}", load.name, load.command));
            say(sim::report::STRESS_INTERVAL_HEADER);
        }
        let elapsed = units::SimDuration::from_nanos(started.elapsed().as_nanos() as u64);
        let several = stats.ops.len() > 1;
        let print = reporting_lines[index].after_interval(
            load.reporting,
            stats.ops.iter().any(|ops| ops.interval_count > 0),
        );
        let mut total: Option<(hdrhistogram::Histogram<u64>, u64, u64, u64, u64)> = None;
        for (op, ops) in stats.ops.iter_mut().enumerate() {
            let latency = sim::metrics::LatencySummary::of(&ops.interval);
            let label = if several {
                ops.kind.name().to_uppercase()
            } else {
                "total".to_string()
            };
            if several || print.total {
                say(&sim::report::stress_interval_line(
                    &label,
                    ops.count,
                    sim::report::IntervalRates {
                        ops: ops.interval_count as f64 / length,
                        partitions: ops.interval_count as f64 / length,
                        rows: ops.interval_rows as f64 / length,
                    },
                    &latency,
                    elapsed,
                    ops.interval_errors,
                ));
            }
            let entry = row
                .ops
                .entry(ops.kind.name().to_string())
                .or_insert((0, 0.0));
            entry.0 += ops.interval_count;
            merged
                .entry(ops.kind.name().to_string())
                .or_insert_with(driver::histogram)
                .add(&ops.interval)
                .expect("histograms of one shape merge");
            match &mut total {
                Some((histogram, count, interval_count, rows, errors)) => {
                    histogram
                        .add(&ops.interval)
                        .expect("histograms of one shape merge");
                    *count += ops.count;
                    *interval_count += ops.interval_count;
                    *rows += ops.interval_rows;
                    *errors += ops.interval_errors;
                }
                None => {
                    total = Some((
                        ops.interval.clone(),
                        ops.count,
                        ops.interval_count,
                        ops.interval_rows,
                        ops.interval_errors,
                    ));
                }
            }
            intervals[index][op].push((from, to - from, ops.interval.clone()));
            ops.interval.reset();
            ops.interval_count = 0;
            ops.interval_rows = 0;
            ops.interval_errors = 0;
        }
        if several && print.total {
            if let Some((histogram, count, interval_count, rows, errors)) = total {
                say(&sim::report::stress_interval_line(
                    "total",
                    count,
                    sim::report::IntervalRates {
                        ops: interval_count as f64 / length,
                        partitions: interval_count as f64 / length,
                        rows: rows as f64 / length,
                    },
                    &sim::metrics::LatencySummary::of(&histogram),
                    elapsed,
                    errors,
                ));
            }
        }
        if print.header_again {
            say("");
            say(sim::report::STRESS_INTERVAL_HEADER);
        }
    }
    for (op, histogram) in merged {
        if let Some(entry) = row.ops.get_mut(&op) {
            entry.1 = sim::metrics::LatencySummary::of(&histogram).p99;
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contact_without_a_port_takes_cql_s_default() {
        assert_eq!(contact_address("127.0.0.1"), "127.0.0.1:9042");
        assert_eq!(contact_address("127.0.0.2:19042"), "127.0.0.2:19042");
        assert_eq!(contact_address("db.example.com"), "db.example.com:9042");
        assert_eq!(contact_address("[::1]"), "[::1]:9042");
        assert_eq!(contact_address("[::1]:9043"), "[::1]:9043");
    }
}
