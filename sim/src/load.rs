//! Load phases as the simulator runs them: what each cassandra-stress
//! process does, resolved from its command line.
//!
//! A c-s process runs `threads` threads, each doing one operation at a time
//! (apache/cassandra `tools/stress`, `SettingsRate`, scylla-mechanisms.md
//! section 9.4):
//! - closed loop (`-rate threads=N`): a thread issues its next operation as
//!   soon as the previous one returns; latency runs from the actual start;
//! - closed loop with a limit (`limit=R/s`): the process's threads share
//!   one pacer that hands out start times `1/R` apart, as the Guava
//!   `RateLimiter.create(R)` of c-s's `limit=` does (`StressAction`, a
//!   `SmoothBursty` limiter): while no thread takes a permit (all of them
//!   waiting on the server) it banks the permits it could have handed out,
//!   up to one second's worth, and hands them out at once when threads come
//!   back, so a stall of under a second costs no throughput; latency from
//!   the actual start, so a slow server shows in the rate rather than in
//!   latency (coordinated omission);
//! - closed loop with a throttle (`throttle=R/s`, newer c-s): one shared
//!   `UniformRateLimiter` hands operation `i` the start `start + i/R`
//!   whatever happened, so a process that fell behind (every thread held
//!   by a slow server) starts all it owes as threads come back, however
//!   long the stall; latency from the actual start, as with `limit=`;
//! - open loop (`fixed=R/s`): operation `i` is due at `start + i/R`; a free
//!   thread takes the next due operation, waiting for its time if it is early;
//!   latency runs from the *intended* start, so a backlog shows as latency.
//!   Without `threads=` every operation is issued at its time regardless of
//!   how many are outstanding.
//!
//! A paced process (`limit=`, `throttle=`, `fixed=`) starts its pacer at its
//! own phase within one interval ([`Schedule::with_phase`]): c-s processes
//! are launched one by one, by hand or by script, so their pacers are not
//! in step. In step, every interval's operations from all the processes
//! would reach the cluster at the same instant (14 at once in R5) and queue
//! behind each other at any load: at 2% CPU a write's tasks waited 40 us on
//! average, reads' index parses 265 us.
//!
//! Every process runs the command as written: K processes with `n=N` write
//! or read K x N partitions, as K copies of c-s would. c-s counts `n=` and
//! paces its rate in partitions (`WorkManager.takePermits` and
//! `acquire(partitionCount)` in `Operation.ready`), which is one an
//! operation except for a user profile's batch over several: it takes a
//! permit a partition ([`Schedule::charge`]) and at most what is left of
//! `n=`.

use std::sync::Arc;

use models::cassandra_stress::cql::QueryShape;
use models::cassandra_stress::profile::UserProfile;
use models::distribution::{KeyDistribution, SequentialKeys, SizeDistribution};
use rand::{Rng, RngExt};
use units::{SimDuration, SimTime};

/// How a load decides which partition key to use next.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyPlan {
    /// `-pop seq=first..last`: keys in order, wrapping after `last`.
    Sequential {
        /// First key.
        first: u64,
        /// Last key (inclusive).
        last: u64,
    },
    /// `-pop dist=...`: each key drawn independently.
    Distribution(KeyDistribution),
}

impl KeyPlan {
    /// The per-process key state at the start of the load.
    pub fn source(&self) -> KeySource {
        match self {
            KeyPlan::Sequential { first, last } => {
                KeySource::Sequential(SequentialKeys::new(*first, *last))
            }
            KeyPlan::Distribution(dist) => KeySource::Distribution(dist.clone()),
        }
    }
}

/// A process's key state.
#[derive(Clone, Debug)]
pub enum KeySource {
    /// A sequential cursor shared by the process's threads.
    Sequential(SequentialKeys),
    /// Independent draws.
    Distribution(KeyDistribution),
}

impl KeySource {
    /// The next key.
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        match self {
            KeySource::Sequential(keys) => keys.next(),
            KeySource::Distribution(dist) => dist.sample(rng),
        }
    }
}

/// The columns of each row written.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnPlan {
    /// A predefined command's `-col n=DIST size=DIST`: a column count,
    /// then a size per column.
    Columns {
        /// Columns per row.
        count: SizeDistribution,
        /// Bytes per column value.
        size: SizeDistribution,
    },
    /// A user profile's table (`user profile=`): each row's clustering and
    /// regular columns, sized by type and `columnspec`; how many rows an
    /// insert writes and a query reads.
    Profile(Arc<ProfileRows>),
}

/// A user profile as a load runs it: the table, and the load's writing and
/// reading operations with their `ops(...)` weights.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRows {
    /// The profile.
    pub profile: UserProfile,
    /// Writing operations: `None` the profile's `insert` (its `select`
    /// share of a partition's rows), `Some` a query that writes one row.
    pub writes: Vec<(Option<QueryShape>, f64)>,
    /// Reading queries.
    pub reads: Vec<(QueryShape, f64)>,
}

/// Draws one of `choices` by weight (no draw when there is one).
fn by_weight<'a, T, R: Rng + ?Sized>(choices: &'a [(T, f64)], rng: &mut R) -> &'a T {
    if choices.len() == 1 {
        return &choices[0].0;
    }
    let total: f64 = choices.iter().map(|(_, weight)| weight).sum();
    let mut draw = rng.random::<f64>() * total;
    for (choice, weight) in choices {
        if draw < *weight {
            return choice;
        }
        draw -= weight;
    }
    &choices[choices.len() - 1].0
}

impl ColumnPlan {
    /// One write to partition `key`: its bytes of column values, its rows,
    /// and for a profile's insert whose `partitions` can exceed one the
    /// number of partitions its batch spans (else 1), drawn as c-s
    /// generates them (a predefined command writes one row; a profile's
    /// insert writes its `select` share of the partition's rows, at least
    /// one). The batch's other partitions: [`ColumnPlan::sample_insert`].
    pub fn sample_write<R: Rng + ?Sized>(&self, key: u64, rng: &mut R) -> (u64, u32, u32) {
        match self {
            ColumnPlan::Columns { .. } => (self.sample_value_bytes(rng), 1, 1),
            ColumnPlan::Profile(rows) => {
                let profile = &rows.profile;
                match by_weight(&rows.writes, rng) {
                    Some(_) => (profile.sample_row_bytes(rng), 1, 1),
                    None => {
                        let (bytes, written) = self.sample_insert(key, rng);
                        let partitions = &profile.insert.partitions;
                        let batch = if partitions.range().1 > 1 {
                            let drawn = partitions.sample(rng).max(1);
                            u32::try_from(drawn).unwrap_or(u32::MAX)
                        } else {
                            1
                        };
                        (bytes, written, batch)
                    }
                }
            }
        }
    }

    /// A profile insert's rows of partition `key` (its `select` share of
    /// them, at least one) and their bytes of column values.
    pub fn sample_insert<R: Rng + ?Sized>(&self, key: u64, rng: &mut R) -> (u64, u32) {
        let ColumnPlan::Profile(rows) = self else {
            unreachable!("only a profile's insert spans partitions");
        };
        let profile = &rows.profile;
        let partition = profile.rows_in_partition(key);
        let share = profile.insert.select.sample(rng);
        let written = ((share * partition as f64).round() as u64).clamp(1, partition);
        let bytes = (0..written).map(|_| profile.sample_row_bytes(rng)).sum();
        (bytes, u32::try_from(written).unwrap_or(u32::MAX))
    }

    /// Whether a profile's batches over several partitions are LOGGED
    /// (`insert: batchtype`).
    pub fn logged_batches(&self) -> bool {
        matches!(self, ColumnPlan::Profile(rows)
            if rows.profile.insert.batch_type == models::cassandra_stress::profile::BatchType::Logged)
    }

    /// What a read of partition `key` selects ([`engine::Operation::Read`]'s
    /// `limit_bytes`): the whole partition for a predefined command or a
    /// profile of one-row partitions, or for a profile's query of wide
    /// partitions the rows it selects at the table's mean row bytes; and
    /// the rows it returns when the partition is there (c-s's row count).
    pub fn sample_read_limit<R: Rng + ?Sized>(&self, key: u64, rng: &mut R) -> (u32, u32) {
        match self {
            ColumnPlan::Columns { .. } => (engine::WHOLE_PARTITION, 1),
            ColumnPlan::Profile(rows) => {
                let profile = &rows.profile;
                let shape = by_weight(&rows.reads, rng);
                if profile.single_row_partitions() {
                    return (engine::WHOLE_PARTITION, 1);
                }
                let selected = profile.rows_selected(shape, key, rng);
                let bytes = (selected as f64 * profile.mean_row_bytes()).ceil();
                (
                    (bytes as u64).clamp(1, u64::from(u32::MAX - 1)) as u32,
                    u32::try_from(selected).unwrap_or(u32::MAX),
                )
            }
        }
    }

    /// Bytes of column values in one row, drawn as c-s generates rows.
    pub fn sample_value_bytes<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            ColumnPlan::Columns {
                count: SizeDistribution::Fixed(count),
                size: SizeDistribution::Fixed(size),
            } => count * size,
            ColumnPlan::Columns { count, size } => {
                let columns = count.sample(rng);
                (0..columns).map(|_| size.sample(rng)).sum()
            }
            ColumnPlan::Profile(rows) => rows.profile.sample_row_bytes(rng),
        }
    }

    /// Expected bytes of column values per row.
    pub fn mean_value_bytes(&self) -> f64 {
        match self {
            ColumnPlan::Columns { count, size } => count.mean() * size.mean(),
            ColumnPlan::Profile(rows) => rows.profile.mean_row_bytes(),
        }
    }
}

/// How a process paces its operations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RatePlan {
    /// `threads=N [limit=R/s]`.
    ClosedLoop {
        /// Threads.
        threads: u32,
        /// Shared rate limit, operations per second.
        limit_ops_per_s: Option<f64>,
    },
    /// `threads=N throttle=R/s`.
    Throttled {
        /// Threads.
        threads: u32,
        /// Scheduled operations per second.
        ops_per_s: f64,
    },
    /// `fixed=R/s [threads=N]`.
    Fixed {
        /// Intended operations per second.
        ops_per_s: f64,
        /// Concurrency cap; `None` is a pure open loop.
        threads: Option<u32>,
    },
}

/// Where a client sends each request (the Java driver's load-balancing
/// policy in c-s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// To a replica of the key (token-aware; the default), on the shard
    /// of the connection it goes by (`ClusterPlan::landing`), as the Java
    /// driver 3.x that cassandra-stress used until Scylla 4.x.
    TokenAware,
    /// To a replica of the key, on the key's shard (a shard-aware driver:
    /// Scylla's drivers from 2020 on).
    ShardAware,
    /// To each node in turn, whatever the key; the node's shard coordinates
    /// and forwards to the owner.
    RoundRobin,
}

/// When a load stops issuing operations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopPlan {
    /// After this many operations per process (`n=`).
    Count(u64),
    /// After this long (`duration=`).
    Duration(SimDuration),
    /// c-s's default with neither (`err<`, `n>`, `n<`): once the standard
    /// error of the mean of the intervals' row rates, over that mean, falls
    /// below `target` with at least `min` intervals measured, or once `max`
    /// were ([`Uncertainty`]). The load's processes stop together, on their
    /// summed rate (each c-s process watches its own).
    Uncertainty {
        /// `err<`, a fraction.
        target: f64,
        /// `n>`: intervals measured at least.
        min: u32,
        /// `n<`: intervals measured at most.
        max: u32,
    },
}

impl StopPlan {
    /// The `err<` target a thread search's rule compares the last five
    /// steps' improvement with: c-s's `targetUncertainty`, -1 for a
    /// command with `n=` or `duration=`.
    pub fn target_uncertainty(&self) -> f64 {
        match *self {
            StopPlan::Uncertainty { target, .. } => target,
            StopPlan::Count(_) | StopPlan::Duration(_) => -1.0,
        }
    }
}

/// c-s's running estimate of how certain a load's throughput is
/// (`stress.util.Uncertainty`): the mean and population standard deviation
/// of the intervals' row rates, and the standard error of the mean over
/// the mean.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Uncertainty {
    measurements: u32,
    sum: f64,
    sum_of_squares: f64,
}

impl Uncertainty {
    /// One more interval's row rate.
    pub fn update(&mut self, rate: f64) {
        debug_assert!(rate.is_finite() && rate >= 0.0, "a rate: {rate}");
        self.measurements += 1;
        self.sum += rate;
        self.sum_of_squares += rate * rate;
    }

    /// Intervals measured.
    pub fn measurements(&self) -> u32 {
        self.measurements
    }

    /// The standard error of the mean over the mean (NaN while every rate
    /// was zero, as in c-s).
    pub fn uncertainty(&self) -> f64 {
        let n = f64::from(self.measurements);
        let mean = self.sum / n;
        let stdev = (self.sum_of_squares / n - mean * mean).max(0.0).sqrt();
        stdev / n.sqrt() / mean
    }

    /// Whether a load waiting for `target` with `min`..`max` measurements
    /// stops now (`WaitForTargetUncertainty`).
    pub fn converged(&self, target: f64, min: u32, max: u32) -> bool {
        (self.uncertainty() < target && self.measurements >= min) || self.measurements >= max
    }
}

/// When a load starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartPlan {
    /// At this time after the run starts.
    At(SimDuration),
    /// When the load with this index has finished (every operation
    /// answered).
    After(usize),
}

/// An operation type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    /// Reads of one partition.
    Read,
    /// Writes of one partition.
    Write,
}

impl OpKind {
    /// Lower-case name used in reports (`read`, `write`).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
        }
    }
}

/// What a load's threads do.
#[derive(Clone, Debug, PartialEq)]
pub enum OpMix {
    /// Only this kind.
    Only(OpKind),
    /// `mixed ratio(write=W,read=R) clustering=DIST`: runs of one kind, the
    /// kind drawn with probability W/(W+R) for writes and each run's length
    /// from `clustering` (c-s's `clustering=`, default gaussian(1..10)).
    Mixed {
        /// Probability that a run is of writes.
        write_fraction: f64,
        /// Run length distribution.
        clustering: KeyDistribution,
    },
}

/// A process's position in its op mix.
#[derive(Clone, Debug)]
pub struct MixCursor {
    kind: OpKind,
    run_left: u64,
}

impl MixCursor {
    /// A cursor that draws its first run on first use.
    pub fn new() -> MixCursor {
        MixCursor {
            kind: OpKind::Write,
            run_left: 0,
        }
    }

    /// The kind of the next operation.
    pub fn next<R: Rng + ?Sized>(&mut self, mix: &OpMix, rng: &mut R) -> OpKind {
        match mix {
            OpMix::Only(kind) => *kind,
            OpMix::Mixed {
                write_fraction,
                clustering,
            } => {
                if self.run_left == 0 {
                    let draw: f64 = rng.random();
                    self.kind = if draw < *write_fraction {
                        OpKind::Write
                    } else {
                        OpKind::Read
                    };
                    self.run_left = clustering.sample(rng).max(1);
                }
                self.run_left -= 1;
                self.kind
            }
        }
    }
}

impl OpMix {
    /// How the describe line names it: `write`, `read`, or the mix.
    pub fn name(&self) -> String {
        match self {
            OpMix::Only(kind) => kind.name().to_string(),
            OpMix::Mixed {
                write_fraction,
                clustering,
            } => format!(
                "mixed {:.0}% writes in runs of {clustering}",
                write_fraction * 100.0
            ),
        }
    }
}

impl Default for MixCursor {
    fn default() -> Self {
        MixCursor::new()
    }
}

/// The program that runs a load's cassandra-stress semantics, where it
/// changes when operations start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// Apache cassandra-stress (Java): a thread waits for its start in the
    /// rate limiter's sleep (`parkNanos`), to within the kernel's timer
    /// slack, which the twin takes as exact. The published runs' client.
    CassandraStress,
    /// `twin real` (tokio): a thread waits for its start in a tokio sleep,
    /// whose deadline the runtime's timer wheel rounds up to the end of a
    /// millisecond (`deadline_to_tick`, tokio 1.x `runtime/time/source.rs`)
    /// and fires when the time driver turns past that tick, so threads
    /// start on 1-ms ticks, all of a tick's together; a deadline whose
    /// tick has already been turned past fires at once. REAL.md's
    /// measurements ran it.
    TwinReal,
}

impl Client {
    /// The timer wheel's tick of [`Client::TwinReal`].
    pub const TOKIO_TICK: SimDuration = SimDuration::from_millis(1);

    /// When an operation the pacer gives `start` starts on a thread that
    /// asks at `now`.
    pub fn start_at(self, now: SimTime, start: SimTime) -> SimTime {
        match self {
            Client::CassandraStress => start.max(now),
            Client::TwinReal => {
                let tick = Self::TOKIO_TICK.as_nanos();
                let deadline_tick = start.as_nanos().div_ceil(tick);
                // The driver has turned past every tick up to now's.
                let turned = now.as_nanos() / tick;
                if deadline_tick <= turned {
                    now
                } else {
                    SimTime::from_nanos(deadline_tick * tick)
                }
            }
        }
    }
}

/// A resolved `[[load]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPlan {
    /// The load's name.
    pub name: String,
    /// The command line as written.
    pub command: String,
    /// c-s processes running it.
    pub processes: u32,
    /// Pacing of each process.
    pub rate: RatePlan,
    /// What the threads do.
    pub operation: OpMix,
    /// Columns per row.
    pub columns: ColumnPlan,
    /// Key selection.
    pub keys: KeyPlan,
    /// When each process stops.
    pub stop: StopPlan,
    /// When the load starts.
    pub start: StartPlan,
    /// Loader instance type.
    pub loader: String,
    /// The loader's NIC bandwidth, Gbit/s.
    pub loader_nic_gbps: f64,
    /// Tries per operation (c-s `-errors retries=N` + 1).
    pub tries: u32,
    /// `-errors ignore`: an operation that fails every try is counted and
    /// the process goes on; without it, the first such operation ends its
    /// process, as c-s's does (its `FAILURE`).
    pub ignore_errors: bool,
    /// How long the client waits for a reply before retrying.
    pub client_timeout: SimDuration,
    /// Where requests go.
    pub routing: Routing,
    /// The consistency level of its requests (`cl=`).
    pub consistency: engine::ConsistencyLevel,
    /// The program running it (`[[load]] client`).
    pub client: Client,
    /// A step of c-s's own thread search, when the command gives no
    /// `threads=` (`None`: a load with its thread count).
    pub search: Option<SearchStep>,
    /// How often its interval lines print (`-reporting`).
    pub reporting: models::cassandra_stress::Reporting,
}

/// One step of cassandra-stress's thread search (`-rate auto`, or no
/// `-rate` for a command that has no thread count by default): c-s runs
/// the whole command at 4 threads, then 8, 16, 24, 36, ... (doubling below
/// 16, then x1.5, rounded down) up to its `threads<=` bound (1000), and with
/// `auto` stops once throughput stops improving: when the last three steps
/// improved on their predecessors by less than nothing on average
/// (`StressAction.runMulti`). A command that writes sleeps 15 s between
/// steps. The twin resolves the search into one load per step, each
/// started after the one before; whether a step runs is decided when the
/// one before it ends, from the rates of the steps so far.
///
/// The processes of a load step together, deciding on their summed rate
/// (real c-s processes each decide on their own, which with identical
/// processes gives the same steps unless two rates straddle the rule).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchStep {
    /// The load's name in the scenario (each step's own name adds its
    /// thread count).
    pub load: String,
    /// 0 for the first step.
    pub step: u32,
    /// The step's threads per process.
    pub threads: u32,
    /// Whether the search stops once throughput stops improving (`auto`);
    /// without it, every step up to the bound runs.
    pub stop_at_saturation: bool,
    /// How long c-s sleeps before this step (15 s between the steps of a
    /// command that writes; none before the first).
    pub pause_before: SimDuration,
}

/// The name of step `step` (from 0) of load `load`'s thread search, at
/// `threads` threads: numbered so that the steps sort in order.
pub fn search_step_name(load: &str, step: u32, threads: u32) -> String {
    format!("{load} step {:02} ({threads} threads)", step + 1)
}

/// c-s's sleep between the steps of a thread search of a command that
/// writes ("Sleeping for 15s", `StressAction.runMulti`), to let the
/// commitlog flush.
pub const SEARCH_PAUSE_FOR_WRITES: SimDuration = SimDuration::from_secs(15);

/// The thread counts of a search from `min` to `max` threads per process:
/// doubling below 16, then x1.5 rounded down (Java's `threadCount *= 1.5`
/// on an int), while at most `max`. The first step runs even above `max`
/// (c-s checks the bound only after a step).
pub fn search_thread_counts(min: u32, max: u32) -> Vec<u32> {
    let mut counts = vec![min];
    let mut threads = min;
    loop {
        threads = if threads < 16 {
            threads.saturating_mul(2)
        } else {
            // Java's compound assignment narrows the double product.
            (f64::from(threads) * 1.5) as u32
        };
        if threads > max || threads == *counts.last().expect("one count") {
            break;
        }
        counts.push(threads);
    }
    counts
}

/// Whether a thread search goes on to its next step after steps whose op
/// rates are `rates` (oldest first): without `auto` always; with it, while
/// the last three steps' improvements on their predecessors average at
/// least zero and the last five's at least `target` (c-s's
/// `hasAverageImprovement(results, 3, 0)` and `(results, 5,
/// targetUncertainty)`: [`StopPlan::target_uncertainty`]).
pub fn search_goes_on(rates: &[f64], stop_at_saturation: bool, target: f64) -> bool {
    let improves = |count: usize, least: f64| {
        rates.len() < count + 1 || average_improvement(rates, count) >= least
    };
    !stop_at_saturation || (improves(3, 0.0) && improves(5, target))
}

/// The mean of the last `count` steps' relative improvements on the step
/// before each (`StressAction.averageImprovement`).
pub fn average_improvement(rates: &[f64], count: usize) -> f64 {
    debug_assert!(
        rates.len() > count,
        "{count} improvements need {} rates",
        count + 1
    );
    let recent = &rates[rates.len() - count - 1..];
    let sum: f64 = recent
        .windows(2)
        .map(|pair| (pair[1] - pair[0]) / pair[0])
        .sum();
    sum / count as f64
}

impl LoadPlan {
    /// One line with the resolved settings of this load.
    pub fn describe(&self) -> String {
        let rate = match self.rate {
            RatePlan::ClosedLoop {
                threads,
                limit_ops_per_s: None,
            } => format!("{threads} threads"),
            RatePlan::ClosedLoop {
                threads,
                limit_ops_per_s: Some(limit),
            } => {
                format!("{threads} threads limit={limit}/s")
            }
            RatePlan::Throttled { threads, ops_per_s } => {
                format!("{threads} threads throttle={ops_per_s}/s")
            }
            RatePlan::Fixed {
                ops_per_s,
                threads: Some(threads),
            } => format!("{threads} threads fixed={ops_per_s}/s"),
            RatePlan::Fixed {
                ops_per_s,
                threads: None,
            } => format!("open loop fixed={ops_per_s}/s"),
        };
        let keys = match &self.keys {
            KeyPlan::Sequential { first, last } => format!("seq={first}..{last}"),
            KeyPlan::Distribution(dist) => format!("dist={dist}"),
        };
        let stop = match self.stop {
            StopPlan::Count(count) => format!("n={count} per process"),
            StopPlan::Duration(duration) => format!("duration={duration}"),
            StopPlan::Uncertainty { target, min, max } => {
                format!("until stderr of mean < {target} ({min}..{max} intervals)")
            }
        };
        let start = match self.start {
            StartPlan::At(at) => format!("starts at {at}"),
            StartPlan::After(index) => format!("starts after load #{index}"),
        };
        let columns = match &self.columns {
            ColumnPlan::Columns { count, size } => format!("{count} x {size} B columns"),
            ColumnPlan::Profile(rows) => format!(
                "table {} rows of {:.0} B on average, {:.1} rows a partition",
                rows.profile.table.name,
                rows.profile.mean_row_bytes(),
                rows.profile.mean_rows_per_partition()
            ),
        };
        format!(
            "{} ({} x {rate} on {}, {}, {columns}, {keys}, {stop}, {start}, {})",
            self.name,
            self.processes,
            self.loader,
            self.operation.name(),
            match self.routing {
                Routing::TokenAware => "token-aware",
                Routing::ShardAware => "shard-aware",
                Routing::RoundRobin => "round-robin",
            }
        )
    }

    /// The op kinds this load performs, in report order.
    pub fn op_kinds(&self) -> Vec<OpKind> {
        match self.operation {
            OpMix::Only(kind) => vec![kind],
            OpMix::Mixed { .. } => vec![OpKind::Read, OpKind::Write],
        }
    }

    /// Threads per process (`None`: a pure open loop).
    pub fn threads(&self) -> Option<u32> {
        match self.rate {
            RatePlan::ClosedLoop { threads, .. } | RatePlan::Throttled { threads, .. } => {
                Some(threads)
            }
            RatePlan::Fixed { threads, .. } => threads,
        }
    }
}

/// Seconds of permits a `limit=` pacer banks while unused: Guava's
/// `RateLimiter.create(permitsPerSecond)` builds a `SmoothBursty` limiter
/// with `maxBurstSeconds` 1.0, the limiter of c-s's `limit=`.
pub const LIMIT_BURST_SECONDS: f64 = 1.0;

/// Hands out operation start times for one process.
#[derive(Clone, Debug)]
pub enum Schedule {
    /// Closed loop, no limit: start at once.
    Unpaced,
    /// Closed loop with a limit: starts `interval` apart, with up to a
    /// second of credit banked while no thread asked (Guava `SmoothBursty`:
    /// `resync` and `reserveEarliestAvailable`).
    Limited {
        /// Time between starts.
        interval: SimDuration,
        /// Earliest next start (Guava's `nextFreeTicketMicros`).
        next_start: SimTime,
        /// Permits banked while the pacer stood unused (`storedPermits`).
        stored: f64,
        /// At most this many banked: one second's worth (`maxPermits`,
        /// `maxBurstSeconds` 1.0 in `RateLimiter.create`).
        max_stored: f64,
    },
    /// Closed loop with a throttle: operation `i` may start at `origin + i
    /// x interval` whatever happened (c-s's `UniformRateLimiter`), measured
    /// from when it actually starts.
    Uniform {
        /// When operation 0 may start.
        origin: SimTime,
        /// Nanoseconds between scheduled starts.
        interval_ns: f64,
        /// Index of the next operation.
        next_index: u64,
    },
    /// Open loop: operation `i` is due at `origin + i x interval` whatever happened.
    Fixed {
        /// When operation 0 was due.
        origin: SimTime,
        /// Nanoseconds between intended starts.
        interval_ns: f64,
        /// Index of the next operation.
        next_index: u64,
    },
}

impl Schedule {
    /// The schedule of `rate` for a process starting at `start`.
    pub fn new(rate: RatePlan, start: SimTime) -> Schedule {
        match rate {
            RatePlan::ClosedLoop {
                limit_ops_per_s: None,
                ..
            } => Schedule::Unpaced,
            RatePlan::ClosedLoop {
                limit_ops_per_s: Some(rate),
                ..
            } => Schedule::Limited {
                interval: SimDuration::from_secs_f64(1.0 / rate),
                next_start: start,
                stored: 0.0,
                max_stored: rate * LIMIT_BURST_SECONDS,
            },
            RatePlan::Throttled { ops_per_s, .. } => Schedule::Uniform {
                origin: start,
                interval_ns: 1e9 / ops_per_s,
                next_index: 0,
            },
            RatePlan::Fixed { ops_per_s, .. } => Schedule::Fixed {
                origin: start,
                interval_ns: 1e9 / ops_per_s,
                next_index: 0,
            },
        }
    }

    /// This schedule with its first start moved `phase` (in `[0, 1)`) of an
    /// interval later: the process's pacer out of step with the others'.
    /// An unpaced schedule has no interval and does not move.
    pub fn with_phase(mut self, phase: f64) -> Schedule {
        assert!(
            (0.0..1.0).contains(&phase),
            "phase {phase} is outside [0, 1)"
        );
        match &mut self {
            Schedule::Unpaced => {}
            Schedule::Limited {
                interval,
                next_start,
                ..
            } => {
                *next_start += SimDuration::from_nanos((interval.as_nanos() as f64 * phase) as u64);
            }
            Schedule::Uniform {
                origin,
                interval_ns,
                ..
            }
            | Schedule::Fixed {
                origin,
                interval_ns,
                ..
            } => {
                *origin += SimDuration::from_nanos((*interval_ns * phase) as u64);
            }
        }
        self
    }

    /// Charges `extra` more permits to the operation just reserved: c-s
    /// takes one permit a *partition* (`acquire(partitionCount)` in both
    /// its limiters), so a batch over `k` partitions costs `k`. The
    /// operation itself keeps its start; the debt delays the ones after it,
    /// as Guava's `acquire(n)` and the `UniformRateLimiter`'s shared index
    /// do. (c-s charges when it prepares the operation; the twin learns a
    /// batch's size when the operation is sent, so a reservation made in
    /// between by another thread does not see the debt; the rate over time
    /// is the same.)
    pub fn charge(&mut self, extra: u32) {
        if extra == 0 {
            return;
        }
        match self {
            Schedule::Unpaced => {}
            Schedule::Limited {
                interval,
                next_start,
                stored,
                ..
            } => {
                let spent = stored.min(f64::from(extra));
                *stored -= spent;
                let fresh = f64::from(extra) - spent;
                if fresh > 0.0 {
                    *next_start +=
                        SimDuration::from_nanos((interval.as_nanos() as f64 * fresh) as u64);
                }
            }
            Schedule::Uniform { next_index, .. } | Schedule::Fixed { next_index, .. } => {
                *next_index += u64::from(extra);
            }
        }
    }

    /// Whether an operation's latency is measured from its intended start
    /// (`fixed=`) rather than from when it actually starts.
    pub fn measures_from_intended(&self) -> bool {
        matches!(self, Schedule::Fixed { .. })
    }

    /// When the next operation would be issued if reserved at `now`, without
    /// reserving it: (issue time, latency origin).
    pub fn peek(&self) -> (SimTime, SimTime) {
        self.clone().reserve(SimTime::ZERO)
    }

    /// Reserves the next operation for a thread free at `now`: returns
    /// (when to issue it, when its latency is measured from).
    pub fn reserve(&mut self, now: SimTime) -> (SimTime, SimTime) {
        match self {
            Schedule::Unpaced => (now, now),
            Schedule::Limited {
                interval,
                next_start,
                stored,
                max_stored,
            } => {
                if now > *next_start {
                    // Unused since `next_start`: bank what it could have
                    // handed out, up to the cap.
                    let idle = (now - *next_start).as_nanos() as f64 / interval.as_nanos() as f64;
                    *stored = (*stored + idle).min(*max_stored);
                    *next_start = now;
                }
                let start = *next_start;
                // Banked permits cost no wait; the rest of this one moves
                // the next start an interval (or the unbanked part of one).
                let spent = stored.min(1.0);
                *stored -= spent;
                let fresh = 1.0 - spent;
                if fresh > 0.0 {
                    *next_start = start
                        + SimDuration::from_nanos((interval.as_nanos() as f64 * fresh) as u64);
                }
                (start, start)
            }
            Schedule::Uniform {
                origin,
                interval_ns,
                next_index,
            } => {
                let start = scheduled(*origin, *interval_ns, next_index).max(now);
                (start, start)
            }
            Schedule::Fixed {
                origin,
                interval_ns,
                next_index,
            } => {
                let due = scheduled(*origin, *interval_ns, next_index);
                (due.max(now), due)
            }
        }
    }
}

/// The start a uniform schedule (`throttle=`, `fixed=`) gives operation
/// `next_index`, which moves on to the next.
fn scheduled(origin: SimTime, interval_ns: f64, next_index: &mut u64) -> SimTime {
    let due = origin + SimDuration::from_nanos((*next_index as f64 * interval_ns).round() as u64);
    *next_index += 1;
    due
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_search_doubles_to_16_then_grows_by_half_up_to_its_bound() {
        assert_eq!(
            search_thread_counts(4, 1000),
            [4, 8, 16, 24, 36, 54, 81, 121, 181, 271, 406, 609, 913]
        );
        assert_eq!(search_thread_counts(4, 16), [4, 8, 16]);
        // The first step runs even above the bound, as in c-s.
        assert_eq!(search_thread_counts(50, 10), [50]);
        assert_eq!(search_thread_counts(1, 5), [1, 2, 4]);
    }

    #[test]
    fn a_rate_is_certain_as_c_s_reckons_it() {
        let mut rates = Uncertainty::default();
        rates.update(1.0);
        rates.update(3.0);
        // Mean 2, population deviation 1: a standard error of 1/sqrt(2).
        assert!((rates.uncertainty() - 0.5_f64.sqrt() / 2.0).abs() < 1e-12);
        assert!(!rates.converged(0.02, 2, 200));
        assert!(rates.converged(0.02, 2, 2), "n< ends it whatever the error");
        let mut steady = Uncertainty::default();
        for _ in 0..29 {
            steady.update(100.0);
        }
        assert!(!steady.converged(0.02, 30, 200), "not before n>");
        steady.update(100.0);
        assert!(steady.converged(0.02, 30, 200));
        assert_eq!(steady.measurements(), 30);
        // Nothing measured yet, or nothing but zeros: never certain.
        assert!(!Uncertainty::default().converged(0.02, 0, 200));
    }

    #[test]
    fn auto_goes_on_while_the_last_three_steps_improve_on_average() {
        assert!(
            search_goes_on(&[100.0, 90.0, 80.0], true, -1.0),
            "fewer than four steps"
        );
        assert!(search_goes_on(&[100.0, 200.0, 190.0, 185.0], true, -1.0));
        assert!(!search_goes_on(&[100.0, 100.0, 99.0, 99.0], true, -1.0));
        assert!(
            search_goes_on(&[100.0, 100.0, 99.0, 99.0], false, -1.0),
            "without auto"
        );
        // A step at no throughput divides by zero: c-s's NaN stops it.
        assert!(!search_goes_on(&[0.0, 0.0, 0.0, 0.0], true, -1.0));
        // err< mode: the last five steps must improve by the target too.
        let rates = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0];
        assert!(search_goes_on(&rates, true, -1.0));
        assert!(!search_goes_on(&rates, true, 0.02));
        assert!((average_improvement(&[100.0, 150.0, 150.0], 2) - 0.25).abs() < 1e-12);
    }

    /// `twin real`'s threads start on tokio's 1-ms ticks: a start is
    /// rounded up to the end of its millisecond unless that tick has
    /// already passed; cassandra-stress starts when its pacer says.
    #[test]
    fn twin_real_starts_threads_on_the_timer_wheels_ticks() {
        let us = |micros: u64| SimTime::from_nanos(micros * 1_000);
        let twin = Client::TwinReal;
        // A start inside a millisecond waits for its end.
        assert_eq!(twin.start_at(us(10_100), us(10_250)), us(11_000));
        assert_eq!(twin.start_at(us(10_100), us(10_999)), us(11_000));
        // Asking now, with nothing to wait for, still waits for the tick.
        assert_eq!(twin.start_at(us(10_100), us(10_100)), us(11_000));
        // A start on a tick's boundary is that tick.
        assert_eq!(twin.start_at(us(10_100), us(12_000)), us(12_000));
        // A start whose tick the wheel has turned past fires at once.
        assert_eq!(twin.start_at(us(12_300), us(10_500)), us(12_300));
        assert_eq!(twin.start_at(us(12_300), us(11_999)), us(12_300));
        assert_eq!(twin.start_at(us(12_300), us(12_000)), us(12_300));
        // Three threads asking inside one millisecond start together.
        let starts: Vec<SimTime> = [10_050, 10_400, 10_900]
            .into_iter()
            .map(|start| twin.start_at(us(10_000), us(start)))
            .collect();
        assert_eq!(starts, [us(11_000); 3]);
        let cs = Client::CassandraStress;
        assert_eq!(cs.start_at(us(10_100), us(10_250)), us(10_250));
        assert_eq!(cs.start_at(us(12_300), us(10_500)), us(12_300));
    }

    #[test]
    fn a_limited_schedule_spaces_starts_and_banks_up_to_a_second_of_credit() {
        let rate = RatePlan::ClosedLoop {
            threads: 1,
            limit_ops_per_s: Some(1000.0),
        };
        let mut schedule = Schedule::new(rate, SimTime::ZERO);
        assert_eq!(
            schedule.reserve(SimTime::ZERO),
            (SimTime::ZERO, SimTime::ZERO)
        );
        let second = SimTime::from_nanos(1_000_000);
        assert_eq!(schedule.reserve(SimTime::ZERO), (second, second));
        // Unused from 2 ms to 10 ms: eight permits banked, spent at once.
        let late = SimTime::from_nanos(10_000_000);
        for _ in 0..9 {
            assert_eq!(schedule.reserve(late), (late, late));
        }
        let next = SimTime::from_nanos(11_000_000);
        assert_eq!(schedule.reserve(late), (next, next), "the bank is empty");
        // Unused for 5 s: at most a second's worth (1000) banked.
        let later = SimTime::from_nanos(6_000_000_000);
        for _ in 0..1001 {
            assert_eq!(schedule.reserve(later), (later, later));
        }
        let after = SimTime::from_nanos(6_001_000_000);
        assert_eq!(
            schedule.reserve(later),
            (after, after),
            "capped at one second"
        );
    }

    #[test]
    fn a_throttled_schedule_catches_up_without_bound_and_measures_from_the_start() {
        let rate = RatePlan::Throttled {
            threads: 1,
            ops_per_s: 1000.0,
        };
        let mut schedule = Schedule::new(rate, SimTime::ZERO);
        assert_eq!(
            schedule.reserve(SimTime::ZERO),
            (SimTime::ZERO, SimTime::ZERO)
        );
        let second = SimTime::from_nanos(1_000_000);
        assert_eq!(schedule.reserve(SimTime::ZERO), (second, second));
        // Held back for 5 s: the 4,998 operations due by then (indexes 2 to
        // 4,999 fall at or before 4.999 s) all start at once, unlike
        // `limit=`'s one-second bank, each measured from its actual start.
        let later = SimTime::from_nanos(5_000_000_000);
        for _ in 2..=5000 {
            assert_eq!(schedule.reserve(later), (later, later));
        }
        let after = SimTime::from_nanos(5_001_000_000);
        assert_eq!(schedule.reserve(later), (after, after), "back on schedule");
    }

    #[test]
    fn a_batch_pays_a_permit_a_partition_and_the_next_operation_waits_for_them() {
        let limited = RatePlan::ClosedLoop {
            threads: 1,
            limit_ops_per_s: Some(1000.0),
        };
        let throttled = RatePlan::Throttled {
            threads: 1,
            ops_per_s: 1000.0,
        };
        let fixed = RatePlan::Fixed {
            ops_per_s: 1000.0,
            threads: Some(1),
        };
        for rate in [limited, throttled, fixed] {
            let mut schedule = Schedule::new(rate, SimTime::ZERO);
            // A batch of three partitions starts at 0 and costs 3 ms of
            // permits: the next operation may start at 3 ms.
            assert_eq!(schedule.reserve(SimTime::ZERO).0, SimTime::ZERO, "{rate:?}");
            schedule.charge(2);
            let third = SimTime::from_nanos(3_000_000);
            assert_eq!(schedule.reserve(SimTime::ZERO).0, third, "{rate:?}");
        }
        // Banked permits pay for a batch first.
        let mut schedule = Schedule::new(limited, SimTime::ZERO);
        schedule.reserve(SimTime::ZERO);
        let late = SimTime::from_nanos(10_000_000);
        assert_eq!(schedule.reserve(late).0, late);
        schedule.charge(2);
        assert_eq!(schedule.reserve(late).0, late, "9 banked, 3 spent");
        let mut unpaced = Schedule::new(
            RatePlan::ClosedLoop {
                threads: 1,
                limit_ops_per_s: None,
            },
            SimTime::ZERO,
        );
        unpaced.charge(5);
        assert_eq!(unpaced.reserve(late).0, late);
    }

    #[test]
    fn a_fixed_schedule_keeps_its_intended_times_when_behind() {
        let rate = RatePlan::Fixed {
            ops_per_s: 1000.0,
            threads: Some(1),
        };
        let mut schedule = Schedule::new(rate, SimTime::ZERO);
        schedule.reserve(SimTime::ZERO);
        let late = SimTime::from_nanos(5_500_000);
        // Operation 1 was due at 1 ms: it goes now but is measured from 1 ms.
        assert_eq!(
            schedule.reserve(late),
            (late, SimTime::from_nanos(1_000_000))
        );
    }

    #[test]
    fn a_phase_moves_a_paced_schedule_within_one_interval() {
        let limited = RatePlan::ClosedLoop {
            threads: 1,
            limit_ops_per_s: Some(1000.0),
        };
        let start = SimTime::from_nanos(7_000);
        let mut schedule = Schedule::new(limited, start).with_phase(0.25);
        let first = SimTime::from_nanos(257_000);
        assert_eq!(schedule.reserve(SimTime::ZERO), (first, first));
        let second = SimTime::from_nanos(1_257_000);
        assert_eq!(schedule.reserve(SimTime::ZERO), (second, second));
        let fixed = RatePlan::Fixed {
            ops_per_s: 1000.0,
            threads: None,
        };
        let mut schedule = Schedule::new(fixed, start).with_phase(0.5);
        assert_eq!(
            schedule.reserve(SimTime::ZERO).1,
            SimTime::from_nanos(507_000)
        );
        let unpaced = RatePlan::ClosedLoop {
            threads: 1,
            limit_ops_per_s: None,
        };
        let mut schedule = Schedule::new(unpaced, start).with_phase(0.5);
        assert_eq!(schedule.reserve(start), (start, start));
    }

    #[test]
    fn column_bytes_are_drawn_per_column() {
        use rand::SeedableRng;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let fixed = ColumnPlan::Columns {
            count: SizeDistribution::Fixed(5),
            size: SizeDistribution::Fixed(34),
        };
        assert_eq!(fixed.sample_value_bytes(&mut rng), 170);
        let uniform = ColumnPlan::Columns {
            count: SizeDistribution::Fixed(2),
            size: SizeDistribution::Uniform { min: 10, max: 20 },
        };
        let draws: Vec<u64> = (0..1000)
            .map(|_| uniform.sample_value_bytes(&mut rng))
            .collect();
        assert!(draws.iter().all(|bytes| (20..=40).contains(bytes)));
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean - uniform.mean_value_bytes()).abs() < 1.0, "{mean}");
    }
}

#[cfg(test)]
mod mix_tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_mix_runs_each_kind_in_clusters_at_its_ratio() {
        let mix = OpMix::Mixed {
            write_fraction: 0.5,
            clustering: KeyDistribution::gaussian_stdvrng(1, 10, 3.0).unwrap(),
        };
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let mut cursor = MixCursor::new();
        let kinds: Vec<OpKind> = (0..100_000).map(|_| cursor.next(&mix, &mut rng)).collect();
        let writes = kinds.iter().filter(|kind| **kind == OpKind::Write).count() as f64;
        assert!((writes / 100_000.0 - 0.5).abs() < 0.02, "{writes}");
        let switches = kinds.windows(2).filter(|pair| pair[0] != pair[1]).count();
        assert!(
            switches < 100_000 / 4,
            "kinds come in runs: {switches} switches"
        );
    }
}
