//! c-s processes and threads in real time: what `sim::cluster::client` does
//! under simulated time, done with a CQL driver against a real endpoint.
//!
//! Each of a load's processes owns what one c-s process owns, behind one
//! lock: its pacer ([`sim::load::Schedule`], the same code the simulator
//! paces with, fed real nanoseconds since the run started), its key source
//! and op mix, and its seeded generator (stream `load/<name>/process/<i>`
//! of the run's seed, as the simulator names it). Its threads are tasks;
//! each loops: take a start from the pacer, wait for it, run one operation
//! (up to `tries` attempts, each bounded by the client timeout), record its
//! latency, from the actual start for `threads=`/`limit=`/`throttle=` and
//! from the intended start for `fixed=` (c-s's coordinated-omission
//! correction). `fixed=` without `threads=` issues each operation at its
//! time, however many are outstanding.
//!
//! One Tokio runtime drives every task on this process's threads: pin the
//! process off the server's cores (`taskset -c 0 twin real ...`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::SeedableRng;
use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use sim::load::{KeySource, LoadPlan, MixCursor, OpKind, RatePlan, Schedule, StopPlan};
use units::SimTime;

use crate::workload::Workload;

/// Latencies are recorded in microseconds, up to an hour.
const HISTOGRAM_MAX_US: u64 = 3_600_000_000;

/// A new latency histogram (3 significant digits, as the simulator's).
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_US, 3).expect("static histogram bounds are valid")
}

/// One op kind's counts in one load.
#[derive(Debug)]
pub struct OpStats {
    /// Which kind.
    pub kind: OpKind,
    /// Every latency, microseconds.
    pub total: Histogram<u64>,
    /// This interval's latencies.
    pub interval: Histogram<u64>,
    /// Operations answered (found or not).
    pub count: u64,
    /// Reads that found no row.
    pub not_found: u64,
    /// Operations that failed every try.
    pub errors: u64,
    /// Attempts that timed out.
    pub timeouts: u64,
    /// Operations answered in this interval.
    pub interval_count: u64,
    /// Rows written or read back in this interval.
    pub interval_rows: u64,
    /// Errors in this interval.
    pub interval_errors: u64,
    /// Rows written or read back over the load.
    pub rows: u64,
    /// Bytes of values written.
    pub bytes_written: u64,
}

impl OpStats {
    fn new(kind: OpKind) -> OpStats {
        OpStats {
            kind,
            total: histogram(),
            interval: histogram(),
            count: 0,
            not_found: 0,
            errors: 0,
            timeouts: 0,
            interval_count: 0,
            interval_rows: 0,
            interval_errors: 0,
            rows: 0,
            bytes_written: 0,
        }
    }
}

/// One load's state as it runs.
#[derive(Debug)]
pub struct LoadStats {
    /// Per op kind, in report order.
    pub ops: Vec<OpStats>,
    /// When its first operation could start.
    pub started: Option<Instant>,
    /// When its last operation was answered.
    pub finished: Option<Instant>,
    /// The processes (by index) an operation that failed every try ended
    /// (without `-errors ignore`, as c-s's), and when, from the run's
    /// start.
    pub failures: Vec<(u32, Duration)>,
}

impl LoadStats {
    /// Empty counts for `plan`'s op kinds.
    pub fn new(plan: &LoadPlan) -> LoadStats {
        LoadStats {
            ops: plan.op_kinds().into_iter().map(OpStats::new).collect(),
            started: None,
            finished: None,
            failures: Vec::new(),
        }
    }

    fn op(&mut self, kind: OpKind) -> &mut OpStats {
        self.ops
            .iter_mut()
            .find(|ops| ops.kind == kind)
            .expect("an op kind the load performs")
    }
}

/// What one process's threads share (one c-s process).
struct Process {
    /// Its index among the load's processes.
    index: u32,
    schedule: Schedule,
    keys: KeySource,
    mix: MixCursor,
    rng: sim::rng::SimRng,
    issued: u64,
    /// An operation failed every try and ended it (c-s's `FAILURE`
    /// without `-errors ignore`): it hands out nothing more.
    failed: bool,
}

/// What a load's tasks share.
pub struct LoadContext {
    /// The load.
    pub plan: LoadPlan,
    /// Its schema and statements.
    pub workload: Workload,
    /// The prepared insert, for a load that writes.
    pub insert: Option<PreparedStatement>,
    /// The prepared read, for a load that reads.
    pub select: Option<PreparedStatement>,
    /// The session.
    pub session: Arc<Session>,
    /// Its counts.
    pub stats: Arc<Mutex<LoadStats>>,
    /// The run's start: every pacer's time zero.
    pub origin: Instant,
    /// The run's seed.
    pub seed: u64,
}

/// One operation, ready to go.
struct Operation {
    kind: OpKind,
    key: u64,
    row: Option<(Vec<scylla::value::MaybeUnset<Vec<u8>>>, u64)>,
    start: Instant,
    intended: Instant,
}

/// Runs the load to its end (every operation answered).
pub async fn run_load(context: Arc<LoadContext>) {
    let now = context.origin.elapsed();
    let start = SimTime::from_nanos(now.as_nanos() as u64);
    context.stats.lock().expect("stats lock").started = Some(crate::clock::now());
    let plan = &context.plan;
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..plan.processes {
        let stream = format!("load/{}/process/{index}", plan.name);
        let mut rng = sim::rng::SimRng::seed_from_u64(sim::rng::stream_seed(context.seed, &stream));
        // Each process's pacer at its own phase within one interval, as
        // the simulator starts it (processes are launched one by one).
        let phase: f64 = rand::RngExt::random(&mut rng);
        let process = Arc::new(Mutex::new(Process {
            index,
            failed: false,
            schedule: Schedule::new(plan.rate, start).with_phase(phase),
            keys: plan.keys.source(),
            mix: MixCursor::new(),
            rng,
            issued: 0,
        }));
        match plan.threads() {
            Some(threads) => {
                for _ in 0..threads {
                    tasks.spawn(thread(Arc::clone(&context), Arc::clone(&process)));
                }
            }
            None => {
                tasks.spawn(open_loop(Arc::clone(&context), Arc::clone(&process)));
            }
        }
    }
    while tasks.join_next().await.is_some() {}
    context.stats.lock().expect("stats lock").finished = Some(crate::clock::now());
}

/// Takes the process's next operation, or `None` when the process is done.
fn next_operation(context: &LoadContext, process: &Mutex<Process>) -> Option<Operation> {
    let plan = &context.plan;
    let mut process = process.lock().expect("process lock");
    if process.failed {
        return None;
    }
    if let StopPlan::Count(count) = plan.stop {
        if process.issued >= count {
            return None;
        }
    }
    let now = SimTime::from_nanos(context.origin.elapsed().as_nanos() as u64);
    let (start, intended) = process.schedule.reserve(now);
    if let StopPlan::Duration(duration) = plan.stop {
        let began = context
            .stats
            .lock()
            .expect("stats lock")
            .started
            .expect("a running load has started");
        let end = began + Duration::from_nanos(duration.as_nanos());
        if context.origin + Duration::from_nanos(start.as_nanos()) >= end {
            return None;
        }
    }
    process.issued += 1;
    let Process { keys, mix, rng, .. } = &mut *process;
    let kind = mix.next(&plan.operation, rng);
    let key = keys.next(rng);
    let row = (kind == OpKind::Write).then(|| context.workload.row(key, rng));
    Some(Operation {
        kind,
        key,
        row,
        start: context.origin + Duration::from_nanos(start.as_nanos()),
        intended: context.origin + Duration::from_nanos(intended.as_nanos()),
    })
}

/// One c-s thread: operations one at a time until the process is done.
async fn thread(context: Arc<LoadContext>, process: Arc<Mutex<Process>>) {
    while let Some(operation) = next_operation(&context, &process) {
        if !perform(&context, operation).await {
            failed(&context, &process);
        }
    }
}

/// An operation of `process` failed every try: without `-errors ignore`
/// that ends the process, as c-s's thread throws and its process stops
/// handing out operations (those in flight finish).
fn failed(context: &LoadContext, process: &Mutex<Process>) {
    if context.plan.ignore_errors {
        return;
    }
    let mut process = process.lock().expect("process lock");
    if !process.failed {
        process.failed = true;
        let at = context.origin.elapsed();
        let mut stats = context.stats.lock().expect("stats lock");
        stats.failures.push((process.index, at));
    }
}

/// `fixed=R/s` without `threads=`: each operation issued at its time.
async fn open_loop(context: Arc<LoadContext>, process: Arc<Mutex<Process>>) {
    let mut outstanding = tokio::task::JoinSet::new();
    while let Some(operation) = next_operation(&context, &process) {
        tokio::time::sleep_until(operation.start.into()).await;
        outstanding.spawn({
            let context = Arc::clone(&context);
            let process = Arc::clone(&process);
            async move {
                if !perform(&context, operation).await {
                    failed(&context, &process);
                }
            }
        });
        // Reap what finished, so the set does not grow with the run.
        while outstanding.try_join_next().is_some() {}
    }
    while outstanding.join_next().await.is_some() {}
}

/// Runs one operation (with retries) and records it; false when it
/// failed every try.
async fn perform(context: &LoadContext, operation: Operation) -> bool {
    tokio::time::sleep_until(operation.start.into()).await;
    let actual = crate::clock::now();
    let timeout = Duration::from_nanos(context.plan.client_timeout.as_nanos());
    let mut timeouts = 0;
    let mut outcome = None;
    for _ in 0..context.plan.tries.max(1) {
        let attempt = async {
            match &operation.row {
                Some((values, _)) => context
                    .session
                    .execute_unpaged(
                        context
                            .insert
                            .as_ref()
                            .expect("a load that writes prepared its insert"),
                        values,
                    )
                    .await
                    .map(|_| 1u64),
                None => {
                    let key = context.workload.key(operation.key);
                    let result = context
                        .session
                        .execute_unpaged(
                            context
                                .select
                                .as_ref()
                                .expect("a load that reads prepared its read"),
                            (key,),
                        )
                        .await?;
                    Ok(result
                        .into_rows_result()
                        .map_or(0, |rows| rows.rows_num() as u64))
                }
            }
        };
        match tokio::time::timeout(timeout, attempt).await {
            Ok(Ok(rows)) => {
                outcome = Some(rows);
                break;
            }
            Ok(Err(_)) => {}
            Err(_) => timeouts += 1,
        }
    }
    let done = crate::clock::now();
    let from = if matches!(context.plan.rate, RatePlan::Fixed { .. }) {
        operation.intended
    } else {
        actual
    };
    let micros = done.saturating_duration_since(from).as_micros() as u64;
    let mut stats = context.stats.lock().expect("stats lock");
    let ops = stats.op(operation.kind);
    ops.timeouts += timeouts;
    match outcome {
        Some(rows) => {
            ops.total.saturating_record(micros.max(1));
            ops.interval.saturating_record(micros.max(1));
            ops.count += 1;
            ops.interval_count += 1;
            ops.rows += rows;
            ops.interval_rows += rows;
            if operation.kind == OpKind::Read && rows == 0 {
                ops.not_found += 1;
            }
            if let Some((_, bytes)) = operation.row {
                ops.bytes_written += bytes;
            }
        }
        None => {
            ops.errors += 1;
            ops.interval_errors += 1;
        }
    }
    outcome.is_some()
}
