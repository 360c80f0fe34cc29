//! cassandra-stress (c-s) command lines: the load a scenario describes, as
//! users paste it from a benchmark report.
//!
//! [`parse`] reads one c-s command, a "predefined" one (`write`, `read`,
//! `mixed`) or `user profile=FILE.yaml ops(NAME=W,...)`, with or without
//! the leading `cassandra-stress`, and returns a [`StressCommand`] with
//! every c-s default filled in explicitly:
//! - the command's own parameters: `n=`, `duration=` (`s`/`m`/`h`),
//!   `err<`/`n>`/`n<` (c-s's run-until-stable mode, the default when neither
//!   `n=` nor `duration=` is given), `no-warmup`, `cl=`, `keysize=`, and for
//!   `mixed` `ratio(write=W,read=R)` and `clustering=DIST`; for `user`
//!   `profile=PATH`, `ops(NAME=W,...)` and `clustering=DIST` (the profile
//!   itself is read by the caller, who knows what the path is relative to,
//!   with [`profile::parse_profile`]; `-schema` and `-col` are checked and
//!   then listed as without effect with `user`, as c-s parses and then
//!   ignores them there: the profile sets both);
//! - `-schema replication(factor=N)` (or `strategy=NetworkTopologyStrategy`
//!   with one `DC=N`) and `compaction(strategy=...)`;
//! - `-rate threads=N [limit=R/s | throttle=R/s | fixed=R/s]` and
//!   `-rate auto threads>=N threads<=N`;
//! - `-col size=DIST n=DIST`, `-pop seq=a..b [no-wrap]` / `-pop dist=DIST`;
//! - `-errors retries=N ignore skip-read-validation`, and Scylla's c-s's
//!   `fail-fast`, `skip-unsupported-columns`, `delay-policy=`,
//!   `min-delay-ms=`, `max-delay-ms=` (checked, then listed as without
//!   effect with why);
//! - `-mode`, `-node`, `-log`, `-port`, `-transport`, `-graph`, which do not change
//!   the simulated load: accepted and listed in
//!   [`StressCommand::ignored_options`] for the caller to report.
//!
//! Anything else is an error ([`StressError`]): one line naming the token
//! and what is accepted there. Parsing never panics.
//!
//! Tokenizing follows a shell (quotes group words, an unclosed quote is an
//! error), then c-s's own `repairParams`: the words are joined and split
//! again, so quoting `-rate 'threads=150 limit=20000/s'` or not makes no
//! difference, and `ratio(write=1, read=1)` is one parameter. Each option may
//! be given once (c-s: "Each option/command can be specified at most once"),
//! with any number of parameters after it (`-schema 'replication(factor=3)'
//! 'compaction(strategy=LeveledCompactionStrategy)'`). Command and option
//! names are case-insensitive, as in c-s. A `<placeholder>` left in a
//! command copied from a report (`limit=<per-process rate>`) is rejected by
//! name.
//!
//! Semantics kept from c-s (defaults are the `pub const`s below):
//! - `-rate` absent: `threads=200` for `write` with `n=`, otherwise c-s's
//!   auto mode ([`Rate::Auto`]: 4 threads doubling to 16, then x1.5 up to
//!   1000, stopping when throughput stops improving); the simulator decides
//!   what auto means, this module does not pick a number.
//! - `limit=R/s` (older c-s) and `throttle=R/s` (newer) are closed loops
//!   behind one rate limiter shared by the process's threads, latency
//!   measured from the actual start. They differ in the limiter: `limit=`
//!   is Guava's `RateLimiter.create(R)`, which banks at most a second of
//!   unused permits ([`Rate::ClosedLoop`]); `throttle=` is the newer
//!   `UniformRateLimiter`, which hands out `start + i/R` and so catches up
//!   on everything a stall held back ([`Rate::Throttled`]). `fixed=R/s` is
//!   open loop, each operation having an intended start `start + i/R` and
//!   latency measured from it (coordinated-omission corrected); threads
//!   still cap the concurrency.
//! - `-pop` absent: `seq=1..N` for `write`, `dist=gaussian(1..N)` for `read`,
//!   `mixed` and `user`, with N = `n=` when given, else 1,000,000 (c-s uses the
//!   same 1M default for `duration=` runs). `seq` wraps unless `no-wrap`.
//! - `-col` absent: `n=FIXED(5) size=FIXED(34)`; key size 10 bytes.
//! - `cl=` absent: `LOCAL_ONE` (c-s 3.x; older 2.x builds used `ONE`).
//! - `-errors retries=` absent: 9 retries, so 10 tries per operation.
//! - An operation that fails every try ends its c-s process (the thread
//!   that ran it throws; c-s stops handing out operations, cancels its
//!   metrics and prints `FAILURE`: `Operation.error`, the `Consumer`'s
//!   catch in `StressAction`), unless `-errors ignore`, which counts it
//!   as an error and goes on.
//! - `mixed` without `ratio(...)`: `ratio(write=1,read=1)`; a ratio naming
//!   one operation gives the other weight 0. `clustering=` (the length of
//!   runs of the same operation) defaults to `GAUSSIAN(1..10)`.
//! - `n=` and `duration=` together: rejected, as c-s does (no option group
//!   of c-s accepts both).
//!
//! Where the twin departs from c-s, on purpose:
//! - numbers also take `_` separators and e-notation with a fraction when
//!   the value is whole (`n=38.85e9`, `seq=1..1_000_000`), besides c-s's
//!   `k`/`m`/`b` suffixes, which are also accepted in gaussian means and
//!   stdevs;
//! - `-rate fixed=R/s` without `threads=` is accepted
//!   ([`Rate::FixedRate`] with `threads: None`); c-s demands `threads=`;
//! - values c-s would take but that make no sense are rejected: `n=0`,
//!   `duration=0s`, `threads=0`, `keysize=0`, a column count of 0,
//!   `replication(factor=0)`, `ratio(write=0,read=0)`;
//! - counts and rates past what a c-s process could run are rejected
//!   naming the bound: more than [`MAX_THREADS`] threads, rates above
//!   [`MAX_RATE_PER_SECOND`].
//!
//! Faithful but easy to miss: `-rate` with no parameters, or with only
//! `threads>=`/`threads<=`, is c-s's thread sweep without the `auto` flag
//! ([`Rate::Auto`] with `stop_at_saturation: false`); `-pop` with no
//! parameters is `dist=gaussian(1..N)` even for `write`.
//!
//! Left out: the `counter_write`, `counter_read`,
//! `help`, `print` and `legacy` commands; the old `-key populate=`/`-key
//! dist=` syntax; `-col names=` lists other than as a column count,
//! `-pop read-lookback=`; non-FIXED/UNIFORM column size distributions; the
//! EXTREME/QEXTREME distributions; multi-datacenter replication; c-s options
//! other than those above (`-sendto`, `-tokenrange`, `-insert`,
//! ...), which are errors.
//!
//! Sources: apache/cassandra `tools/stress/src/org/apache/cassandra/stress/`
//! `settings/` `StressSettings.java` (tokenizing, `repairParams`, one use per
//! option), `Command.java` (command names and aliases), `SettingsCommand.java`
//! (`n=`, `duration=`, `err<`, `no-warmup`, `cl=` default `LOCAL_ONE`),
//! `SettingsCommandPreDefined.java` (`keysize=` default 10),
//! `SettingsCommandPreDefinedMixed.java` (`ratio`, `clustering`),
//! `OptionEnumProbabilities.java`, `SettingsRate.java` (`threads=`,
//! `limit=`/`throttle=`/`fixed=`, auto defaults, `threads=200` for
//! write-with-n), `SettingsColumn.java` (`n=FIXED(5)`, `size=FIXED(34)`),
//! `SettingsPopulation.java` (defaults and `seq=`), `SettingsSchema.java`,
//! `OptionReplication.java`, `OptionCompaction.java`, `SettingsErrors.java`
//! (`retries=` default 9, tries = retries + 1), `OptionDistribution.java`
//! and `generate/DistributionBoundApache.java` (see [`crate::distribution`]);
//! `StressAction.java` for what `-rate` does at run time;
//! `scylla-mechanisms.md` section 9 for the summary.

pub mod cql;
mod parser;
pub mod profile;
mod tokenize;

#[cfg(test)]
mod profile_tests;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use units::SimDuration;

use crate::distribution::{KeyDistribution, SequentialKeys, SizeDistribution};

const ACCEPTED_CL: &str = "ONE, TWO, THREE, QUORUM, LOCAL_QUORUM, ALL, LOCAL_ONE, EACH_QUORUM, ANY";

/// Threads c-s runs for `write` with `n=` when `-rate` is absent.
pub const DEFAULT_WRITE_THREADS: u32 = 200;
/// Auto mode's first thread count (`threads>=`).
pub const DEFAULT_AUTO_MIN_THREADS: u32 = 4;
/// Auto mode's largest thread count (`threads<=`).
pub const DEFAULT_AUTO_MAX_THREADS: u32 = 1000;
/// The most threads one c-s process runs (`threads=`, `threads>=`,
/// `threads<=`): c-s's own threads are OS threads, and a loader runs a few
/// thousand; the twin keeps a state per thread, so the bound keeps a
/// mistyped count (a billion) from eating the machine's memory.
pub const MAX_THREADS: u32 = 100_000;
/// The highest rate one c-s process is paced to (`limit=`, `throttle=`,
/// `fixed=`), operations per second: a c-s process does well under a
/// million a second; `fixed=` schedules an arrival per operation, so a
/// mistyped rate would flood the event queue.
pub const MAX_RATE_PER_SECOND: u64 = 10_000_000;
/// The key population when neither `-pop` nor `n=` gives one.
pub const DEFAULT_POPULATION_SIZE: u64 = 1_000_000;
/// Columns per row when `-col n=` is absent.
pub const DEFAULT_COLUMN_COUNT: u64 = 5;
/// Bytes per column value when `-col size=` is absent.
pub const DEFAULT_COLUMN_SIZE: u64 = 34;
/// Partition key bytes when `keysize=` is absent.
pub const DEFAULT_KEY_SIZE_BYTES: u32 = 10;
/// Retries per operation when `-errors retries=` is absent.
pub const DEFAULT_RETRIES: u32 = 9;
/// The replication factor of the keyspace c-s creates when `-schema
/// replication(factor=)` is absent.
pub const DEFAULT_REPLICATION_FACTOR: u32 = 1;
/// The consistency level when `cl=` is absent.
pub const DEFAULT_CONSISTENCY: ConsistencyLevel = ConsistencyLevel::LocalOne;
/// `err<` default: stop when the standard error of the mean throughput is
/// below this fraction.
pub const DEFAULT_TARGET_UNCERTAINTY: f64 = 0.02;
/// `n>` default: at least this many measurements in uncertainty mode.
pub const DEFAULT_MIN_MEASUREMENTS: u32 = 30;
/// `n<` default: at most this many measurements in uncertainty mode.
pub const DEFAULT_MAX_MEASUREMENTS: u32 = 200;

/// Parses one c-s command line (see the module documentation).
pub fn parse(command: &str) -> Result<StressCommand, StressError> {
    parser::parse_command(command)
}

/// One parsed c-s command, every default made explicit.
#[derive(Clone, Debug, PartialEq)]
pub struct StressCommand {
    /// What each operation does.
    pub operation: Operation,
    /// When the run ends.
    pub stop: Stop,
    /// Whether c-s warms up first (true unless `no-warmup`).
    pub warmup: bool,
    /// `cl=`.
    pub consistency: ConsistencyLevel,
    /// `-schema replication(factor=N)`; `None` when not given, in which
    /// case c-s creates `keyspace1` with [`DEFAULT_REPLICATION_FACTOR`] if a
    /// write finds no keyspace, and otherwise uses the existing keyspace.
    pub replication_factor: Option<u32>,
    /// The strategy of `-schema replication(...)`: `None` when
    /// `replication(...)` is not given, else its `strategy=`
    /// (`SimpleStrategy`, c-s's default, when the group names none).
    pub replication_strategy: Option<ReplicationStrategy>,
    /// `-schema compaction(strategy=...)`; `None`: the server default (STCS).
    pub compaction: Option<CompactionStrategy>,
    /// The other `compaction(...)` options, e.g. `("sstable_size_in_mb", "160")`.
    pub compaction_options: Vec<(String, String)>,
    /// `-schema compression=CLASS`; `None`: c-s creates the table
    /// uncompressed (scylla-mechanisms.md 9.1).
    pub compression: Option<Compression>,
    /// Threads and rate limiting.
    pub rate: Rate,
    /// Columns per row and their sizes.
    pub columns: ColumnSpec,
    /// Partition key size in bytes (`keysize=`).
    pub key_size_bytes: u32,
    /// Which keys the operations touch.
    pub population: Population,
    /// Retries per failed operation (`-errors retries=`).
    pub retries: u32,
    /// `-errors ignore`: keep going past operations that fail every try.
    pub ignore_errors: bool,
    /// `-reporting` (c-s 4.0 and later): how often the interval lines
    /// print.
    pub reporting: Reporting,
    /// Options accepted but not simulated, as written (e.g.
    /// `-mode cql3 native`), for the caller to report.
    pub ignored_options: Vec<String>,
}

/// `-reporting output-frequency=D header-frequency=D`, the c-s of
/// Cassandra 4.0 and later (`SettingsReporting`, `StressMetrics`): each
/// is a whole duration in seconds or coarser (`10s`, `1m`; its
/// `DurationSpec.IntSecondsBound`), and c-s counts it in interval lines
/// (one a second unless `-log interval=` says otherwise): with
/// `output-frequency=10s` it prints the total line of every tenth
/// interval that had operations (the last interval's figures; the total
/// count is cumulative), and with `header-frequency=` the column header
/// again after every so many, after a blank line. A mixed command's
/// per-op lines print every interval either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reporting {
    /// Intervals between total lines (0: every interval, c-s's default).
    pub output_every: u32,
    /// Intervals between headers (0: only at the start, c-s's default).
    pub header_every: u32,
}

impl StressCommand {
    /// Attempts per operation: `retries + 1` (c-s `SettingsErrors.tries`).
    pub fn tries(&self) -> u32 {
        self.retries.saturating_add(1)
    }

    /// The replication factor, c-s's default 1 when not given.
    pub fn effective_replication_factor(&self) -> u32 {
        self.replication_factor
            .unwrap_or(DEFAULT_REPLICATION_FACTOR)
    }
}

impl FromStr for StressCommand {
    type Err = StressError;

    fn from_str(command: &str) -> Result<StressCommand, StressError> {
        parse(command)
    }
}

/// The operation type of a c-s command.
#[derive(Clone, Debug, PartialEq)]
pub enum Operation {
    /// `write` (alias `insert`): insert every column of a row.
    Write,
    /// `read`: select a whole row.
    Read,
    /// `mixed ratio(write=W,read=R)`: each operation is a write with
    /// probability `W/(W+R)`.
    Mixed {
        /// Relative weight of writes.
        write_weight: f64,
        /// Relative weight of reads.
        read_weight: f64,
        /// c-s `clustering=`: how many operations of the chosen kind run
        /// back to back before the kind is drawn again (default
        /// `GAUSSIAN(1..10)`).
        clustering: KeyDistribution,
    },
    /// `user profile=FILE ops(NAME=W,...)`: the operations of a YAML
    /// profile ([`profile`]), which the caller reads (the path is relative
    /// to where the command came from).
    User {
        /// `profile=`, as written.
        profile: String,
        /// `ops(...)`: each operation's name (`insert` or a query of the
        /// profile) and weight, in the order given.
        ops: Vec<(String, f64)>,
        /// `clustering=`: run lengths of one operation (default
        /// `GAUSSIAN(1..10)`).
        clustering: KeyDistribution,
    },
}

impl Operation {
    /// The fraction of operations that are reads; for `user`, the share of
    /// the operations other than `insert` (whether a query writes is the
    /// profile's to say).
    pub fn read_fraction(&self) -> f64 {
        match self {
            Operation::Write => 0.0,
            Operation::Read => 1.0,
            Operation::Mixed {
                write_weight,
                read_weight,
                ..
            } => read_weight / (write_weight + read_weight),
            // Which operations read is in the profile.
            Operation::User { ops, .. } => {
                let total: f64 = ops.iter().map(|(_, w)| w).sum();
                let inserts: f64 = ops
                    .iter()
                    .filter(|(name, _)| name == "insert")
                    .map(|(_, w)| w)
                    .sum();
                1.0 - inserts / total
            }
        }
    }

    /// The c-s command name.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Write => "write",
            Operation::Read => "read",
            Operation::Mixed { .. } => "mixed",
            Operation::User { .. } => "user",
        }
    }
}

/// When a c-s run ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// After this many operations (`n=`).
    Count(u64),
    /// After this long (`duration=`).
    Duration(SimDuration),
    /// c-s's default when neither is given: repeat measurement rounds until
    /// the standard error of the mean throughput is below `target_stderr`
    /// (`err<`), with at least `min_measurements` (`n>`) and at most
    /// `max_measurements` (`n<`) rounds.
    Uncertainty {
        /// `err<`, a fraction.
        target_stderr: f64,
        /// `n>`.
        min_measurements: u32,
        /// `n<`.
        max_measurements: u32,
    },
}

/// A CQL consistency level, as c-s's `cl=` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConsistencyLevel {
    /// `ANY`: a write may be satisfied by a hint.
    Any,
    /// `ONE`.
    One,
    /// `TWO`.
    Two,
    /// `THREE`.
    Three,
    /// `QUORUM`.
    Quorum,
    /// `ALL`.
    All,
    /// `LOCAL_QUORUM`.
    LocalQuorum,
    /// `EACH_QUORUM`.
    EachQuorum,
    /// `LOCAL_ONE`.
    LocalOne,
}

impl ConsistencyLevel {
    /// Every level c-s accepts.
    pub const ALL: [ConsistencyLevel; 9] = [
        ConsistencyLevel::Any,
        ConsistencyLevel::One,
        ConsistencyLevel::Two,
        ConsistencyLevel::Three,
        ConsistencyLevel::Quorum,
        ConsistencyLevel::All,
        ConsistencyLevel::LocalQuorum,
        ConsistencyLevel::EachQuorum,
        ConsistencyLevel::LocalOne,
    ];

    /// Replicas that must answer, for a single datacenter with
    /// `replication_factor` replicas (Cassandra `ConsistencyLevel.blockFor`):
    /// ANY, ONE, LOCAL_ONE 1; TWO 2; THREE 3; QUORUM, LOCAL_QUORUM and
    /// EACH_QUORUM `rf/2 + 1`; ALL `rf`. A result above `replication_factor`
    /// means the request cannot succeed (Cassandra answers Unavailable).
    pub fn block_for(self, replication_factor: u32) -> u32 {
        match self {
            ConsistencyLevel::Any | ConsistencyLevel::One | ConsistencyLevel::LocalOne => 1,
            ConsistencyLevel::Two => 2,
            ConsistencyLevel::Three => 3,
            ConsistencyLevel::Quorum
            | ConsistencyLevel::LocalQuorum
            | ConsistencyLevel::EachQuorum => replication_factor / 2 + 1,
            ConsistencyLevel::All => replication_factor,
        }
    }

    /// The c-s / CQL name, e.g. `LOCAL_QUORUM`.
    pub fn name(self) -> &'static str {
        match self {
            ConsistencyLevel::Any => "ANY",
            ConsistencyLevel::One => "ONE",
            ConsistencyLevel::Two => "TWO",
            ConsistencyLevel::Three => "THREE",
            ConsistencyLevel::Quorum => "QUORUM",
            ConsistencyLevel::All => "ALL",
            ConsistencyLevel::LocalQuorum => "LOCAL_QUORUM",
            ConsistencyLevel::EachQuorum => "EACH_QUORUM",
            ConsistencyLevel::LocalOne => "LOCAL_ONE",
        }
    }
}

impl fmt::Display for ConsistencyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ConsistencyLevel {
    type Err = StressError;

    /// Case-insensitive c-s names (`quorum`, `LOCAL_ONE`, ...).
    fn from_str(text: &str) -> Result<ConsistencyLevel, StressError> {
        ConsistencyLevel::ALL
            .into_iter()
            .find(|cl| cl.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                StressError::new(
                    text,
                    format!("unknown consistency level `{text}`: accepted are {ACCEPTED_CL}"),
                )
            })
    }
}

/// A keyspace replication strategy named by `-schema
/// replication(strategy=...)` (c-s `OptionReplication`, default
/// `org.apache.cassandra.locator.SimpleStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicationStrategy {
    /// `SimpleStrategy`: the next distinct nodes around the ring.
    SimpleStrategy,
    /// `NetworkTopologyStrategy` with one datacenter (`DC=N`): replicas
    /// spread over racks.
    NetworkTopologyStrategy,
}

impl ReplicationStrategy {
    /// The class name as written in CQL.
    pub fn class_name(self) -> &'static str {
        match self {
            ReplicationStrategy::SimpleStrategy => "SimpleStrategy",
            ReplicationStrategy::NetworkTopologyStrategy => "NetworkTopologyStrategy",
        }
    }
}

/// A table compaction strategy named by `-schema compaction(strategy=...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompactionStrategy {
    /// `SizeTieredCompactionStrategy`.
    SizeTiered,
    /// `LeveledCompactionStrategy`.
    Leveled,
    /// `TimeWindowCompactionStrategy`.
    TimeWindow,
}

impl CompactionStrategy {
    /// Every strategy the twin simulates.
    pub const ALL: [CompactionStrategy; 3] = [
        CompactionStrategy::SizeTiered,
        CompactionStrategy::Leveled,
        CompactionStrategy::TimeWindow,
    ];

    /// The Cassandra class name.
    pub fn class_name(self) -> &'static str {
        match self {
            CompactionStrategy::SizeTiered => "SizeTieredCompactionStrategy",
            CompactionStrategy::Leveled => "LeveledCompactionStrategy",
            CompactionStrategy::TimeWindow => "TimeWindowCompactionStrategy",
        }
    }

    /// The strategy of `class` (with or without the
    /// `org.apache.cassandra.db.compaction.` package, any case).
    pub fn from_class_name(class: &str) -> Option<CompactionStrategy> {
        let short = class
            .strip_prefix("org.apache.cassandra.db.compaction.")
            .unwrap_or(class);
        CompactionStrategy::ALL
            .into_iter()
            .find(|known| known.class_name().eq_ignore_ascii_case(short))
    }

    /// `A, B and C` for messages.
    pub fn accepted() -> String {
        let names = CompactionStrategy::ALL.map(CompactionStrategy::class_name);
        let (last, rest) = names.split_last().expect("strategies");
        format!("{} and {last}", rest.join(", "))
    }
}

/// A table compressor named by `-schema compression=...`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// `LZ4Compressor`.
    Lz4,
    /// `SnappyCompressor`.
    Snappy,
    /// `DeflateCompressor`.
    Deflate,
}

impl Compression {
    /// The Cassandra class name.
    pub fn class_name(self) -> &'static str {
        match self {
            Compression::Lz4 => "LZ4Compressor",
            Compression::Snappy => "SnappyCompressor",
            Compression::Deflate => "DeflateCompressor",
        }
    }

    /// The compressor named `class` (with or without the
    /// `org.apache.cassandra.io.compress.` package, any case).
    pub fn from_class_name(class: &str) -> Option<Compression> {
        let short = class.rsplit('.').next().unwrap_or(class);
        [Compression::Lz4, Compression::Snappy, Compression::Deflate]
            .into_iter()
            .find(|known| known.class_name().eq_ignore_ascii_case(short))
    }
}

/// How c-s paces its operations (`-rate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// `threads=N [limit=R/s]`: N threads each running one synchronous
    /// operation at a time; with a limit, each operation first takes a
    /// permit from a token bucket of R/s shared by the process's threads
    /// (Guava's `RateLimiter.create(R)`: up to a second of unused permits
    /// banked). Latency is measured from the actual start.
    ClosedLoop {
        /// Threads (outstanding operations).
        threads: u32,
        /// The shared rate limit, operations per second; `None`: unlimited
        /// (c-s's `limit=0/s` default, and `throttle=0/s`).
        throttle_per_sec: Option<u64>,
    },
    /// `threads=N throttle=R/s` (R > 0): N threads as in
    /// [`Rate::ClosedLoop`], paced by the newer c-s's `UniformRateLimiter`
    /// (`StressAction`): operation `i` may start at `start + i/R`, shared by
    /// the process's threads, with no bound on how far behind that schedule
    /// the process may fall, so after a stall every held-back operation
    /// starts at once. Latency is measured from the actual start.
    Throttled {
        /// Threads (outstanding operations).
        threads: u32,
        /// Operations per second.
        ops_per_sec: u64,
    },
    /// `[threads=N] fixed=R/s`: operation `i` is due at `start + i/R`
    /// (shared schedule), latency is measured from that intended start, so
    /// a backlog shows up as latency. At most `threads` run at once. c-s
    /// itself requires `threads=` here; `None` (accepted by the twin) means
    /// no thread count was given and the simulator decides.
    FixedRate {
        /// Operations per second.
        ops_per_sec: u64,
        /// Threads, if given.
        threads: Option<u32>,
    },
    /// c-s's thread-count search: `-rate auto threads>=A threads<=B`, and
    /// the default when `-rate` is absent (except write with `n=`). c-s
    /// runs 4, 8, 16 threads, then x1.5 each step up to `max_threads`;
    /// with `stop_at_saturation` (the `auto` flag, set by default) it stops
    /// once throughput no longer improves, otherwise it runs every step.
    Auto {
        /// `threads>=`, default 4.
        min_threads: u32,
        /// `threads<=`, default 1000.
        max_threads: u32,
        /// The `auto` flag.
        stop_at_saturation: bool,
    },
}

/// Columns per row and column value sizes (`-col`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Columns per row (`n=`), default `FIXED(5)`.
    pub count: SizeDistribution,
    /// Bytes per column value (`size=`), default `FIXED(34)`.
    pub size: SizeDistribution,
}

impl ColumnSpec {
    /// Expected bytes of column values per row (count and sizes are drawn
    /// independently).
    pub fn mean_payload_bytes(&self) -> f64 {
        self.count.mean() * self.size.mean()
    }
}

impl Default for ColumnSpec {
    fn default() -> ColumnSpec {
        ColumnSpec {
            count: SizeDistribution::Fixed(DEFAULT_COLUMN_COUNT),
            size: SizeDistribution::Fixed(DEFAULT_COLUMN_SIZE),
        }
    }
}

/// Which partition keys (c-s seeds) the operations use (`-pop`).
#[derive(Clone, Debug, PartialEq)]
pub enum Population {
    /// `seq=first..last`: in order, shared by the process's threads.
    Sequential {
        /// First key.
        first: u64,
        /// Last key (inclusive).
        last: u64,
        /// Start over at `first` after `last` (false with `no-wrap`: the run
        /// ends once every key was visited).
        wrap: bool,
    },
    /// `dist=DIST`: each key drawn independently.
    Distribution(KeyDistribution),
}

impl Population {
    /// The smallest and largest key.
    pub fn range(&self) -> std::ops::RangeInclusive<u64> {
        match self {
            Population::Sequential { first, last, .. } => *first..=*last,
            Population::Distribution(dist) => dist.range(),
        }
    }

    /// A fresh key sequence for `Sequential`, `None` for a distribution.
    pub fn sequential_keys(&self) -> Option<SequentialKeys> {
        match self {
            Population::Sequential { first, last, .. } => Some(SequentialKeys::new(*first, *last)),
            Population::Distribution(_) => None,
        }
    }
}

/// Why a c-s command was rejected: one line naming the offending token and
/// what is accepted there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StressError {
    token: String,
    message: String,
}

impl StressError {
    fn new(token: &str, message: impl Into<String>) -> StressError {
        StressError {
            token: token.to_string(),
            message: show(&message.into()),
        }
    }

    /// The offending token (empty when the command is empty).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The message (also what `Display` prints); never contains a newline.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for StressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StressError {}

/// Escapes control characters so a message stays on one line.
fn show(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
