//! A Cassandra 3.11 node's CPU under the JVM: SEDA thread pools whose
//! threads share the cores, and G1 stop-the-world pauses that freeze them
//! all. The counterpart of [`crate::reactor`] (Scylla's one-thread-per-core
//! Seastar reactor).
//!
//! What it models (hardware.md section 4):
//! - *Stages* ([`Stage`]): each SEDA stage is a pool with a maximum thread
//!   count and an unbounded FIFO of tasks (`ThreadPoolExecutor` /
//!   `SharedExecutorPool` queues). A task waits in its stage's queue until
//!   one of the stage's threads is free; a stage never runs more tasks than
//!   its threads. Defaults are Cassandra 3.11's ([`StageThreads`], section
//!   4.5 and `cassandra.yaml` 3.11).
//! - *Cores* as the OS scheduler gives them: every thread holding a task is
//!   runnable and the `cores` hardware threads are processor-shared among
//!   them, so each of `n` runnable threads progresses at
//!   `min(1, cores / n)` of a core. Fewer threads than cores run at full
//!   speed and an idle node costs nothing.
//! - *Hand-off*: every task pays a fixed CPU cost on top of its demand for
//!   the queue hand-off to the pool thread (context switch and cache
//!   misses; section 4.5 estimates 5-20 us of CPU per hop \[E\]; the
//!   default [`HANDOFF_COST`] is the middle, 10 us). A task handed to an
//!   idle thread also waits for that thread, parked while idle, to wake
//!   (the caller passes the wake-up, [`crate::wakeup`]'s measured
//!   latency); a task queued for a busy thread is taken as that thread
//!   finishes, with no wake-up. A waking thread holds its task and counts
//!   as runnable, its wake-up the first part of the task's service (exact
//!   while the runnable threads fit the cores; past them it takes a share
//!   it would not), and its wake-up is not counted as core time.
//! - *G1 garbage collection* ([`GcModel`], [`G1Params`]): allocation (the
//!   driver reports it with [`JvmNode::allocate`], about
//!   [`ALLOCATION_PER_OPERATION_BYTES`] per request, section 4.4) fills
//!   eden; each time eden fills the whole node stops for a pause drawn from
//!   section 4.4's proposed model: young pauses lognormal with a median that
//!   grows with old-generation occupancy (remembered-set and card scanning)
//!   and a p99 about 3.5 times the median, capped at `MaxGCPauseMillis`
//!   (500 ms, section 4.1); every young collection promotes part of eden to
//!   the old generation, and when the old generation reaches the initiating
//!   occupancy the next pause is a mixed collection (200-800 ms, not capped)
//!   that brings it back to the live set; rarely (about once a day) a full
//!   collection / to-space exhaustion takes 1-4 s (section 4.4, Wikimedia
//!   figures in 4.2). During a pause no thread progresses: every running
//!   task finishes exactly the pause length later and queued tasks start
//!   only after it. [`JvmNode::pause`] injects a pause of a chosen length
//!   (a fault, or a test). With [`EvacuationParams`] (the 5.0 preset) a
//!   young pause instead lasts what it copies, the bytes the driver marks
//!   long-lived with [`JvmNode::retain`] (on-heap memtable rows), and eden
//!   is resized after each pause to G1's pause goal.
//!
//! Cassandra 3.11 ships CMS (section 4.1, G1 commented out as
//! "experimental"); the twin uses the G1 model section 4.4 proposes for a
//! 48 GB heap under heavy load, which is what the published 3.11 benchmarks
//! ran. Every \[E\] number is an estimate to calibrate against benchmark
//! tails (section 7).
//!
//! Left out: CMS and ParNew; concurrent marking's CPU (`ConcGCThreads`
//! steal cores between pauses); time-to-safepoint and safepoint bias (a
//! pause starts at once); humongous allocations and their early concurrent
//! cycles (Wikimedia, section 4.2); TLAB sizing; NUMA (`-XX:+UseNUMA`) and
//! biased locking (disabled by `jvm.options`, section 4.1); hyperthread
//! interference; OS scheduler time slices and priorities (processor sharing
//! is their fluid limit); threads blocked on I/O or locks while holding a
//! pool thread (a task here is CPU only: the driver models a blocking read
//! as separate CPU tasks around the I/O); for 3.11, the
//! `SharedExecutorPool`'s spinning workers (5.0's preset has them,
//! [`crate::sep`]) and the native transport's event loop (5.0's has it for
//! client connections, [`JvmConfig::event_loop_front`]); the exact
//! hand-off graph: every task of the driver counts as one hand-off, so a
//! local read or write that Cassandra runs on the calling thread
//! (`maybeExecuteImmediately`) pays one it does not, while the messaging
//! service's own outbound and inbound threads, which every internode
//! message wakes, are not tasks here.
//!
//! # Using it (event-driven)
//! Every input takes `now` and returns [`JvmNode::next_completion`] after
//! it: the one time at which the driver must wake the node up. Keep ONE
//! pending wake-up per node:
//! 1. after [`JvmNode::submit`], [`JvmNode::allocate`], [`JvmNode::pause`]
//!    or [`JvmNode::complete`], if the returned time differs from the
//!    wake-up you have pending, schedule a new one at it; the old one is
//!    now stale (processor sharing moves completions whenever a task
//!    arrives or finishes, and a pause pushes them all back);
//! 2. when a wake-up fires at `t`, call [`JvmNode::complete`]`(t, ..)` only
//!    if it is still the node's [`JvmNode::next_completion`] (drop it
//!    otherwise). `complete` finishes exactly the tasks due by `now` and
//!    appends their tags in completion order (equal times: start order);
//!    with nothing due it finishes nothing, so a stale wake-up that slips
//!    through is harmless. Dropping them is still better: each call
//!    re-bases the fixed-point service clock, which can move later
//!    completions by up to 1 ns when threads outnumber cores.
//!
//! Per event the cost is O(log running threads) (a binary heap ordered by
//! finish in per-thread service time, as in egalitarian processor sharing
//! all runnable threads progress alike); steady state allocates nothing
//! once the heap and queues have grown.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use rand::{Rng, RngExt};
use units::{SimDuration, SimTime};

use crate::distribution::standard_normal;
use crate::g1_policy::{G1Analytics, G1Policy, PauseRecord, Seq, SurvRateGroup, YoungBounds};
use crate::sep::{AfterLook, Spinners};

/// `native_transport_max_threads` (hardware.md 4.5, \[S\] cassandra.yaml).
pub const NATIVE_TRANSPORT_MAX_THREADS: u32 = 128;

/// `concurrent_reads` (hardware.md 4.5, \[R\] cassandra.yaml).
pub const CONCURRENT_READS: u32 = 32;

/// `concurrent_writes` (hardware.md 4.5, \[R\] cassandra.yaml; the guide
/// says 8 x cores).
pub const CONCURRENT_WRITES: u32 = 32;

/// CPU per task for the queue hand-off and the pool thread's wake-up
/// (context switch, cache misses): hardware.md 4.5 estimates 5-20 us per
/// hop \[E\]; this is the middle of that range.
pub const HANDOFF_COST: SimDuration = SimDuration::from_micros(10);

/// The tag of the event loop's response flushes
/// ([`JvmNode::flush_response`]), which finish inside the node: no task of
/// the driver's has it.
pub const FLUSH_TAG: u64 = u64::MAX;

/// Garbage one step of request handling allocates (the CQL request on its
/// coordinator, an internode message taken in, a replica's read or write:
/// memtable, CQL and messaging objects): hardware.md 4.4 estimates 5-20 KB
/// per operation \[E\]; this is the middle of that range. The driver
/// passes it (or its own figure) to [`JvmNode::allocate`] for each step, so
/// a token-aware QUORUM write at RF 3 (1 request, 3 replica writes, 4
/// messages) allocates about 80 KB across its nodes.
pub const ALLOCATION_PER_OPERATION_BYTES: u64 = 10 * 1024;

/// A step of request handling that allocates on the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllocationStep {
    /// A replica's write.
    Write,
    /// A replica's read.
    Read,
    /// The CQL request on its coordinator, an internode message taken in,
    /// a hint sent.
    Other,
    /// A page a read brought in from the device (its buffers).
    DevicePage,
}

/// Garbage request handling allocates, by step ([`AllocationStep`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocationParams {
    /// Per replica write.
    pub write_step_bytes: u64,
    /// Per replica read.
    pub read_step_bytes: u64,
    /// Per other step.
    pub other_step_bytes: u64,
    /// Per page read from the device, beyond its read's step.
    pub device_page_bytes: u64,
}

impl AllocationParams {
    /// One price for every step and none per device page
    /// ([`ALLOCATION_PER_OPERATION_BYTES`], 3.11's model).
    pub const fn per_step(bytes: u64) -> AllocationParams {
        AllocationParams {
            write_step_bytes: bytes,
            read_step_bytes: bytes,
            other_step_bytes: bytes,
            device_page_bytes: 0,
        }
    }

    /// Cassandra 5.0 on this project's machine, **fitted** to the
    /// calibration phases' GC logs (REAL.md C1-C3, `validation/real/
    /// 2026-11-28`, all repeats; `twin validate --real --fit-gc`): the
    /// eden collected over the operations answered is 10,178 B per write
    /// (C1), of which the step allocates all but the 1,007-B memtable row
    /// the write leaves ([`CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE`]; the
    /// row is allocated as the memtable takes it, [`JvmNode::retain`], so
    /// a larger row allocates more), and 17,931 B per read from memory
    /// (C2); a read from disk (C3)
    /// allocates 41,011 B, the 23,080 B more spread over the 1.351 device
    /// reads per operation the disk probe measured for C3
    /// (`disk-probe/C3`): 17,083 B per page read from the device (the
    /// chunk's buffers). At RF 1 a local operation is one step. Steps the
    /// calibration phases have none of (a coordinator's request, an
    /// internode message, a hint) take the mean of a write's and a read's
    /// \[E\].
    pub const fn cassandra_5_0() -> AllocationParams {
        AllocationParams {
            write_step_bytes: 10_178 - CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE,
            read_step_bytes: 17_931,
            other_step_bytes: (10_178 + 17_931) / 2,
            device_page_bytes: 17_083,
        }
    }

    /// What `step` allocates.
    pub fn bytes(&self, step: AllocationStep) -> u64 {
        match step {
            AllocationStep::Write => self.write_step_bytes,
            AllocationStep::Read => self.read_step_bytes,
            AllocationStep::Other => self.other_step_bytes,
            AllocationStep::DevicePage => self.device_page_bytes,
        }
    }
}

/// Cassandra 5.0's shared pool of request workers on the real node's
/// machine ([`crate::sep`]). The price of putting a worker on the core is
/// **fitted** to REAL.md's C1 and C4 (writes at 5,000/s and 10,000/s):
/// the request workers' CPU per write against their runs on a core per
/// write (schedstat's second count), a straight line through the two,
/// medians of three repeats: 90.20 us and 6.835 runs a write at C1, 48.78
/// us and 2.732 runs at C4, so 10.092 us a run and 21.22 us of work a write
/// ([`crate::cost::CASSANDRA_5_0_WRITE_FACTOR`]), from
/// `validation/real/2026-11-30-speed` (REAL.md, "The third full
/// measurement"; 9.566 us on `2026-11-30-evening`, 7.666 us on the
/// morning's `2026-11-30`, 10.644
/// us from one diagnostic repeat before it). The overshoot is **measured**:
/// a 10-us park on the server's core returns after 91-94 us
/// (`deploy/real/cassandra.sh spin-cost`,
/// `validation/real/2026-11-28/spin-cost.txt`), 84 us late. The timer
/// slack is Linux's default for a normal thread, 50 us (`timer_slack_ns`;
/// this machine's `/proc/self/timerslack_ns` reads 50000) \[S\]: parks
/// whose timers fall within it of another's wake together
/// ([`crate::sep`]).
pub const CASSANDRA_5_0_SEP: SepParams = SepParams {
    run_cost: SimDuration::from_nanos(10_092),
    park_overshoot: SimDuration::from_micros(84),
    timer_slack: SimDuration::from_micros(50),
};

/// The native transport event loop's own CPU per client request on the
/// real node's machine (Cassandra 5.0; [`JvmConfig::event_loop_work`]),
/// and what each of its runs on the core costs
/// ([`CASSANDRA_5_0_EVENT_LOOP_WAKE`]): **fitted** as the request
/// workers' price is ([`CASSANDRA_5_0_SEP`]), a straight line through the
/// loop thread's (`epollEventLoopGroup`) CPU and runs per write at REAL.md's
/// C1 and C4, medians of three repeats: 18.57 us and 0.513 runs at C1,
/// 9.59 us and 0.214 runs at C4, so 29.95 us a run (an `epoll_wait`
/// return, the socket reads, the response writes and flushes of one batch)
/// and 3.20 us a request (`validation/real/2026-11-30-speed`). Was 23.77
/// and 2.95 on `2026-11-30-evening`, 18.16 and 3.68 on the morning's
/// `2026-11-30`, 29.82 and
/// 2.98 from one diagnostic repeat, 7.76 us a request with a 10-us wake
/// fitted to C1 alone before that, which could not fall with the rate as
/// the real loop's CPU per request does: the batches grow, the runs per
/// request fall.
pub const CASSANDRA_5_0_EVENT_LOOP_WORK: SimDuration = SimDuration::from_nanos(3_196);

/// What each run of the event loop on the core costs: see
/// [`CASSANDRA_5_0_EVENT_LOOP_WORK`].
pub const CASSANDRA_5_0_EVENT_LOOP_WAKE: SimDuration = SimDuration::from_nanos(29_953);

/// Fixed-point scale of per-thread service: units per nanosecond of one
/// core (2^20, so rounding at a rate change loses under a femtosecond).
const SERVICE_UNITS_PER_NANO: u128 = 1 << 20;

/// Standard normal 99th percentile.
const NORMAL_P99_Z: f64 = 2.326_347_874_040_841;

/// Most cores a node may have (keeps the fixed-point products in u128).
pub const MAX_CORES: u32 = 4096;

/// A Cassandra 3.11 SEDA stage (thread pool).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// `Native-Transport-Requests`: CQL request decoding and coordination.
    NativeTransport,
    /// `ReadStage`: local reads.
    Read,
    /// `MutationStage`: local writes (commit log append, memtable insert).
    Mutation,
    /// `CompactionExecutor`.
    Compaction,
    /// `MemtableFlushWriter`.
    MemtableFlush,
    /// The native transport's Netty event loop, which reads a CQL request
    /// off its connection and hands it to the stage that runs it
    /// ([`JvmConfig::event_loop_front`]).
    EventLoop,
}

/// Number of [`Stage`]s.
pub const STAGE_COUNT: usize = 6;

impl Stage {
    /// Every stage, in index order.
    pub const ALL: [Stage; STAGE_COUNT] = [
        Stage::NativeTransport,
        Stage::Read,
        Stage::Mutation,
        Stage::Compaction,
        Stage::MemtableFlush,
        Stage::EventLoop,
    ];

    /// Position in [`Stage::ALL`].
    pub const fn index(self) -> usize {
        match self {
            Stage::NativeTransport => 0,
            Stage::Read => 1,
            Stage::Mutation => 2,
            Stage::Compaction => 3,
            Stage::MemtableFlush => 4,
            Stage::EventLoop => 5,
        }
    }

    /// Whether the stage's threads are Cassandra's shared pool
    /// (`SharedExecutorPool`, whose idle workers spin: [`crate::sep`]):
    /// the request stages; compaction and flushes have executors of their
    /// own, the event loop is Netty's.
    pub const fn is_shared_pool(self) -> bool {
        matches!(self, Stage::NativeTransport | Stage::Read | Stage::Mutation)
    }

    /// Cassandra's thread-pool name.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::NativeTransport => "Native-Transport-Requests",
            Stage::Read => "ReadStage",
            Stage::Mutation => "MutationStage",
            Stage::Compaction => "CompactionExecutor",
            Stage::MemtableFlush => "MemtableFlushWriter",
            Stage::EventLoop => "nioEventLoopGroup",
        }
    }
}

/// The pool a JVM thread's name says it belongs to: the name without the
/// number the JVM or Cassandra appends (`CompactionExecutor:3`, whose
/// Linux `comm` is `CompactionExecu`; `GC Thread#0`; `MutationStage-12`),
/// or the whole name if it is all number. How a profile of the real
/// node's threads (`twin real`, `twin validate --real --fit-work`) is
/// summed by pool, to set beside [`JvmNode::stage_cpu`].
pub fn thread_pool_of(name: &str) -> &str {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit() || ":#-_ ".contains(c));
    if trimmed.is_empty() {
        name
    } else {
        trimmed
    }
}

/// Whether a pool ([`thread_pool_of`]) is Cassandra's compaction
/// executor (`CompactionExecutor`, its `comm` truncated).
pub fn is_compaction_pool(pool: &str) -> bool {
    pool.starts_with("CompactionExec")
}

/// Whether a pool ([`thread_pool_of`]) is the native transport's event
/// loop (`epollEventLoopGroup-5-1`, its `comm` `epollEventLoopG`; Netty's
/// `nioEventLoopGroup` without epoll): [`Stage::EventLoop`].
pub fn is_event_loop_pool(pool: &str) -> bool {
    pool.starts_with("epollEventLoop") || pool.starts_with("nioEventLoop")
}

/// Whether a pool ([`thread_pool_of`]) is Cassandra 4.0+'s shared pool of
/// request workers (`SharedExecutorPool`): a worker renames itself after
/// the stage it last served (`Native-Transport-Requests-3`, its `comm`
/// `Native-Transpor`; `MutationStage-7`; `ReadStage-2`), or keeps its
/// pool's name until it serves one (`SharedPool-Worker-1`). The twin's
/// request stages with their spinners ([`crate::sep`]).
pub fn is_shared_pool_thread(pool: &str) -> bool {
    pool.starts_with("Native-Transpo")
        || pool.starts_with("MutationStage")
        || pool.starts_with("ReadStage")
        || pool.starts_with("SharedPool")
}

/// Whether a pool ([`thread_pool_of`]) is one of HotSpot's JIT compiler
/// threads (`C1 CompilerThread0`, `C2 CompilerThread1`; their `comm`
/// truncated to `C2 CompilerThre`). The twin has no JIT: its CPU is left
/// out of what the calibration phases fit (validation/REAL.md).
pub fn is_compiler_pool(pool: &str) -> bool {
    pool.contains("CompilerThre")
}

/// HotSpot's default number of parallel GC threads on `cores` processors
/// (`ParallelGCThreads`, HotSpot's `nof_parallel_worker_threads(5, 8, 8)`:
/// every processor up to 8, then 5 of each 8 more): the threads that work
/// through a stop-the-world pause, each on a core of its own. The real
/// node runs on one core with the default, so its pauses hold that core
/// (its `GC Thread` pool's CPU is the pauses' time).
pub fn parallel_gc_threads(cores: u32) -> u32 {
    if cores <= 8 {
        cores
    } else {
        8 + (cores - 8) * 5 / 8
    }
}

/// CPU seconds a process's threads spent between two listings (thread id
/// -> its name and CPU seconds), summed by [`thread_pool_of`] of each
/// thread's name in `after` (a thread that renames itself, as Cassandra
/// 4.0 and later's shared-pool workers do for the stage they serve,
/// counts under the name it ends with); a thread born since counts
/// whole, and a pool that spent nothing is left out.
pub fn cpu_by_pool(
    before: &BTreeMap<u64, (String, f64)>,
    after: &BTreeMap<u64, (String, f64)>,
) -> BTreeMap<String, f64> {
    let mut pools = BTreeMap::new();
    for (tid, (name, seconds)) in after {
        let earlier = before.get(tid).map_or(0.0, |(_, s)| *s);
        let spent = (seconds - earlier).max(0.0);
        if spent > 0.0 {
            *pools.entry(thread_pool_of(name).to_string()).or_insert(0.0) += spent;
        }
    }
    pools
}

/// Maximum threads of each stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageThreads {
    /// `native_transport_max_threads`.
    pub native_transport: u32,
    /// `concurrent_reads`.
    pub read: u32,
    /// `concurrent_writes`.
    pub mutation: u32,
    /// `concurrent_compactors`.
    pub compaction: u32,
    /// Memtable flush threads in all (`memtable_flush_writers` per data
    /// directory).
    pub memtable_flush: u32,
    /// The native transport's event loop threads that serve the client's
    /// connections: one (a client on one connection is served by one).
    pub event_loop: u32,
}

impl StageThreads {
    /// Cassandra 3.11 defaults for a machine with `cores` cores and
    /// `data_directories` entries in `data_file_directories` (a RAID 0 of
    /// all drives is one directory):
    /// - native transport, reads, writes: hardware.md 4.5 (128, 32, 32);
    /// - `concurrent_compactors`: "the smaller of (number of disks, number
    ///   of cores), with a minimum of 2 and a maximum of 8", counting disks
    ///   as data directories (cassandra.yaml 3.11 comment and
    ///   `DatabaseDescriptor`, from memory \[R\]; hardware.md is silent);
    /// - flush: `memtable_flush_writers` "defaults to two for a single data
    ///   directory", one per directory otherwise, and 3.11 runs that many
    ///   threads per directory (cassandra.yaml 3.11 comment, from memory
    ///   \[R\]; hardware.md is silent).
    pub fn cassandra_3_11(cores: u32, data_directories: u32) -> StageThreads {
        let data_directories = data_directories.max(1);
        StageThreads {
            native_transport: NATIVE_TRANSPORT_MAX_THREADS,
            read: CONCURRENT_READS,
            mutation: CONCURRENT_WRITES,
            compaction: cores.min(data_directories).clamp(2, 8),
            memtable_flush: if data_directories == 1 {
                2
            } else {
                data_directories
            },
            event_loop: 1,
        }
    }

    /// The maximum threads of `stage`.
    pub const fn get(&self, stage: Stage) -> u32 {
        match stage {
            Stage::NativeTransport => self.native_transport,
            Stage::Read => self.read,
            Stage::Mutation => self.mutation,
            Stage::Compaction => self.compaction,
            Stage::MemtableFlush => self.memtable_flush,
            Stage::EventLoop => self.event_loop,
        }
    }
}

/// G1 parameters: heap, eden, and the pause model of hardware.md 4.4.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct G1Params {
    /// Heap (`-Xmx`): 48 GB, the heap hardware.md 4.4's model is for
    /// (3.11's auto-size would give 8 GB, section 4.1).
    pub heap_bytes: u64,
    /// Eden: 8 GiB, **fitted** with the young-pause median (below) to the
    /// four R5 Cassandra p99.9 latencies (validation/CALIBRATION.md, JVM).
    /// G1 sizes the young generation to its pause goal: it grows eden while
    /// the pauses it predicts stay under `MaxGCPauseMillis` (500 ms here),
    /// so a lenient goal gives a larger eden and longer, rarer pauses than
    /// section 4.4's proposal (4 GiB, medians 80-150 ms), which is an
    /// estimate it says to calibrate against benchmark tails. 8 GiB is 17 %
    /// of the heap, inside G1's adaptive range (`G1NewSizePercent` 5 to
    /// `G1MaxNewSizePercent` 60, JDK 8 defaults from memory \[R\]); at R5
    /// 300K's ~500 MB/s a node collects every ~16 s.
    pub eden_bytes: u64,
    /// Cap on young pauses, `-XX:MaxGCPauseMillis=500` (hardware.md 4.1,
    /// \[S\] jvm.options; 4.4 bounds young pauses by it).
    pub max_young_pause: SimDuration,
    /// Young-pause median with an empty old generation: 135 ms, **fitted**
    /// with `eden_bytes` (section 4.4's shape, 60 ms + 120 ms x occupancy,
    /// scaled by 2.25). The median is `young_median_base +
    /// young_median_per_old_occupancy x old bytes / heap` (a fixed part for
    /// roots and eden evacuation, a part for remembered sets and cards that
    /// grows with the old generation); the old generation cycles between 30
    /// and 45 % of the heap, so medians are 216-257 ms and most p99s reach
    /// the 500-ms cap.
    pub young_median_base: SimDuration,
    /// Young-pause median growth from an empty to a full old generation:
    /// 270 ms, fitted (see `young_median_base`).
    pub young_median_per_old_occupancy: SimDuration,
    /// Young-pause p99 over median: 3.5 \[E\], from section 4.4's median
    /// 80-150 ms and p99 300-500 ms (ratios 3.3-3.75); sets the lognormal's
    /// sigma, `ln(3.5) / 2.326`.
    pub young_p99_over_median: f64,
    /// Fraction of eden a young collection promotes to the old generation:
    /// 5 % \[E\], sized so mixed collections come every 1-5 minutes as
    /// section 4.4 proposes (with the defaults: every 18 young pauses,
    /// 2.4 min at 1 GiB/s). Old-generation growth is mostly on-heap
    /// memtables (`memtable_allocation_type: heap_buffers`, section 4.4).
    pub promoted_fraction: f64,
    /// Old generation after a mixed or full collection, as a fraction of
    /// the heap: 30 % \[E\] (the live set: memtables, up to 1/4 of the heap
    /// by cassandra.yaml 3.11's `memtable_heap_space_in_mb` default, from
    /// memory \[R\], plus caches and metadata). Also the starting occupancy.
    pub old_live_fraction: f64,
    /// Old-generation occupancy (fraction of the heap) at which the next
    /// collection is mixed: 45 %, JDK 8's `InitiatingHeapOccupancyPercent`
    /// default (from memory \[R\]; jvm.options offers 70, hardware.md 4.1).
    pub mixed_trigger_fraction: f64,
    /// Mixed-pause median: 400 ms \[E\]. With `mixed_pause_p99` 800 ms the
    /// lognormal's 1st and 99th percentiles are section 4.4's 200 and 800
    /// ms. Not capped by `MaxGCPauseMillis` (section 4.4).
    pub mixed_pause_median: SimDuration,
    /// Mixed-pause p99: 800 ms \[E\] (section 4.4).
    pub mixed_pause_p99: SimDuration,
    /// Chance that a collection is a full GC (to-space exhaustion):
    /// 5e-5 \[E\], about once a day at section 4.4's 2-10 s young interval
    /// ("rare, <= 1/day at steady state"). A collection is also full when
    /// the old generation cannot take the promotion.
    pub full_probability: f64,
    /// Full-pause median: 2 s \[E\]; with `full_pause_p99` 4 s the 1st and
    /// 99th percentiles are section 4.4's 1 and 4 s (Wikimedia saw 686 ms
    /// to 3.5 s, section 4.2).
    pub full_pause_median: SimDuration,
    /// Full-pause p99: 4 s \[E\] (section 4.4).
    pub full_pause_p99: SimDuration,
    /// Young pauses from what they copy, and eden sized to the pause goal
    /// ([`EvacuationParams`]); `None`: the lognormal pauses above on a
    /// fixed eden (3.11's model, fitted to R5's tails that way).
    pub evacuation: Option<EvacuationParams>,
}

/// G1's evacuation as a mechanism (5.0's preset): a young pause copies
/// what is still alive in the young generation and scans the cards that
/// point into it, and G1 sizes eden so that the pause it predicts meets
/// its goal.
///
/// What is alive at a pause is of two kinds. The on-heap memtable's rows
/// (Cassandra 5.0's `memtable_allocation_type: heap_buffers`), reported
/// with [`JvmNode::retain`], live until their memtable is flushed
/// ([`JvmNode::release`]); they are copied twice: into a survivor region
/// at the first pause after they were allocated, and into the old
/// generation at the next (`MaxTenuringThreshold=1` in 5.0's
/// `jvm17-server.options`). And what an operation leaves alive for a
/// little while (a read's objects still referenced when the pause comes:
/// in-flight requests, cache entries being replaced), its
/// [`YoungWork::transient_bytes`]: copied into a survivor region once,
/// dead by the pause after. Everything else a request allocates is
/// garbage by the next pause.
///
/// A young pause lasts `pause_other` (roots, the collection set's set-up
/// and freeing) plus its object copy (rows and transient bytes, each at
/// its own price per byte, times a lognormal spread) plus its card scan
/// (each operation since the last pause dirtied cards of old objects that
/// now point into eden, [`YoungWork::card_scan_ns`], times a lognormal
/// spread). The three parts are the real node's GC log at
/// `gc+phases=debug`: `Object Copy`, `Scan Heap Roots` and the rest.
///
/// After a pause G1 sizes the next eden as HotSpot's `G1Policy` does
/// ([`crate::g1_policy`]): it learns from the pause (the copy cost as the
/// object copy over the bytes copied, the survival of eden and survivor
/// regions by age, the card scan cost per card and the cards, the other
/// times) and takes the largest eden whose pause it predicts, pessimism
/// and all, to meet `pause_goal`, between `G1NewSizePercent` and
/// `G1MaxNewSizePercent` of the heap and no more than the free regions
/// less `G1ReservePercent`; every 300 ms in between it samples the cards
/// and, when they outgrow its prediction, sizes eden again. The cards are
/// the operations' card scan work over [`EvacuationParams::card_ns_per_card`].
///
/// Left out: survival that differs by a region's age (the twin's eden
/// regions survive alike; G1 still predicts them by age); card scanning
/// that grows with the memtable's size rather than with the operations
/// since the last pause, and the one or two pauses after a flush that
/// scan a few cards at 5-120 us each (C4's and S1's logs show both; the
/// spikes are what keeps the real G1's eden at its floor under fixed-rate
/// writes, `validation/REAL.md`); a copy price per object rather than per
/// byte (4-KB values copy at ~0.4 ns a byte); the survivor space's cap;
/// humongous regions; the eight mixed collections of a concurrent cycle
/// (one mixed pause here, as the 3.11 model has it); adaptive IHOP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvacuationParams {
    /// G1 region size (`-XX:G1HeapRegionSize=16m`, 5.0's
    /// `jvm17-server.options`): eden is sized in whole regions.
    pub region_bytes: u64,
    /// A young pause's part that neither copies nor scans cards.
    pub pause_other: SimDuration,
    /// Object copy cost per byte of memtable rows, ns.
    pub row_copy_ns_per_byte: f64,
    /// Object copy cost per transient byte, ns.
    pub transient_copy_ns_per_byte: f64,
    /// The object copy's lognormal spread about its price.
    pub copy_sigma: f64,
    /// The card scan's lognormal spread about its price.
    pub card_sigma: f64,
    /// What a replica's write leaves for the next young pause.
    pub write: YoungWork,
    /// What a replica's read leaves.
    pub read: YoungWork,
    /// Card scan time per card scanned, ns: what turns the operations'
    /// card scan work into the cards G1 counts.
    pub card_ns_per_card: f64,
    /// Choosing and freeing the collection set per young region (part of
    /// `pause_other`, learnt apart by G1).
    pub young_other_per_region: SimDuration,
    /// The pause-time goal (`-XX:MaxGCPauseMillis`).
    pub pause_goal: SimDuration,
    /// Smallest young generation, fraction of the heap (`G1NewSizePercent`,
    /// 5).
    pub min_young_fraction: f64,
    /// Largest young generation, fraction of the heap
    /// (`G1MaxNewSizePercent`, 60).
    pub max_young_fraction: f64,
    /// Heap kept free for evacuation, fraction (`G1ReservePercent`, 10).
    pub reserve_fraction: f64,
}

/// What one step of request handling leaves for the next young pause,
/// beyond its garbage ([`EvacuationParams`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct YoungWork {
    /// Card scanning the pause does for it, ns: the old objects it made
    /// point into eden (a memtable's index nodes, a cache's entries).
    pub card_scan_ns: f64,
    /// Bytes of it still alive at the next pause and dead by the one
    /// after.
    pub transient_bytes: u64,
}

impl YoungWork {
    /// Nothing left for the pause.
    pub const NONE: YoungWork = YoungWork {
        card_scan_ns: 0.0,
        transient_bytes: 0,
    };
}

impl EvacuationParams {
    /// Cassandra 5.0 on the real node's machine. The pause's parts are
    /// **fitted** to the calibration phases' GC logs at `gc+phases=debug`
    /// (`validation/real/g1/2026-11-29`, C1-C3 of three repeats; `twin
    /// validate --real validation/real/g1/2026-11-29 --fit-gc`; the module
    /// doc of `validation::real_gc` says how): over the young pauses of
    /// each phase after its first, the copy prices and the scan per card
    /// as ratios of sums, the per-operation figures as medians, the other
    /// part and its per-region share as means. G1's predictions are its
    /// own ([`crate::g1_policy`]), nothing fitted. The goal is 5.0's `MaxGCPauseMillis=300`; the region size,
    /// young bounds and reserve are G1's defaults under Java 17 (the logs
    /// show eden 1 to 225 regions of 16 MiB, young at least 19 regions, 5 %
    /// of 378, and at most the heap less the old generation less 10 %).
    pub fn cassandra_5_0() -> EvacuationParams {
        EvacuationParams {
            region_bytes: 16 << 20,
            pause_other: SimDuration::from_micros(8_013),
            row_copy_ns_per_byte: 1.4695,
            transient_copy_ns_per_byte: 4.2463,
            copy_sigma: 0.31,
            card_sigma: 0.7125,
            write: YoungWork {
                card_scan_ns: 1_448.3,
                transient_bytes: 0,
            },
            read: YoungWork {
                card_scan_ns: 432.0,
                transient_bytes: 361,
            },
            card_ns_per_card: 2_034.0,
            young_other_per_region: SimDuration::from_nanos(2_254),
            pause_goal: SimDuration::from_millis(300),
            min_young_fraction: 0.05,
            max_young_fraction: 0.60,
            reserve_fraction: 0.10,
        }
    }

    /// The heap of `heap_bytes` as G1 sizes the young generation in it.
    pub fn young_bounds(&self, heap_bytes: u64) -> YoungBounds {
        YoungBounds {
            region_bytes: self.region_bytes,
            regions: (heap_bytes / self.region_bytes) as usize,
            min_fraction: self.min_young_fraction,
            max_fraction: self.max_young_fraction,
            reserve_fraction: self.reserve_fraction,
            goal_ns: self.pause_goal.as_nanos() as f64,
        }
    }

    /// What `step` leaves for the next pause: a write's or a read's work;
    /// a coordinator's request or an internode message (none in the
    /// calibration phases) the mean of the two \[E\]; a device page
    /// nothing beyond its read's.
    pub fn work(&self, step: AllocationStep) -> YoungWork {
        match step {
            AllocationStep::Write => self.write,
            AllocationStep::Read => self.read,
            AllocationStep::Other => YoungWork {
                card_scan_ns: (self.write.card_scan_ns + self.read.card_scan_ns) / 2.0,
                transient_bytes: (self.write.transient_bytes + self.read.transient_bytes) / 2,
            },
            AllocationStep::DevicePage => YoungWork::NONE,
        }
    }
}

/// What a running G1 has learnt, to start another node from (G1 with
/// [`EvacuationParams`] only): the old generation's occupancy and G1's
/// sizing state ([`crate::g1_policy`]: its analytics and the survival it
/// predicts by region age). A JVM that served one load starts the next
/// with these, not with G1's start-up guesses: after a read-only load
/// (little survives) eden is large, after writes it is sized to their
/// memtable rows and cards. [`JvmNode::g1_history`] reads it at the end of
/// a run; [`JvmConfig::g1_start`] starts a node from it.
///
/// Retained bytes (memtable rows) are not carried: a node started from a
/// history has flushed its memtables, so what they held in the old
/// generation is garbage there, counted in `old_used_bytes`; its survivor
/// regions are empty.
#[derive(Clone, Debug, PartialEq)]
pub struct G1History {
    /// Old generation in use, live or not yet collected, bytes: from the
    /// preset's live set ([`G1Params::old_live_fraction`] of the heap) to
    /// the heap less one region.
    pub old_used_bytes: u64,
    /// What G1 learnt from its pauses.
    pub analytics: G1Analytics,
    /// Eden's survival by region age, the youngest first (at least one).
    pub eden_survival: Vec<Seq>,
    /// Survivor regions' survival by age, the youngest first (at least
    /// one).
    pub survivor_survival: Vec<Seq>,
}

/// Why a [`G1History`] cannot start a node: the field at fault (empty for
/// the history as a whole) and the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct G1HistoryError {
    /// The field, as `[cluster.g1_start]` names it.
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for G1HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", self.field, self.reason)
        }
    }
}

impl G1History {
    /// The sequences of the analytics as `[cluster.g1_start]` names them,
    /// with the range their average must lie in.
    pub fn analytics_fields(analytics: &G1Analytics) -> [(&'static str, Seq, f64, f64); 5] {
        [
            ("copy_ns_per_byte", analytics.copy_ns_per_byte, 0.0, 1e6),
            ("constant_other_ns", analytics.constant_other_ns, 0.0, 1e12),
            (
                "young_other_ns_per_region",
                analytics.young_other_ns_per_region,
                0.0,
                1e12,
            ),
            ("scan_ns_per_card", analytics.scan_ns_per_card, 0.0, 1e9),
            ("rs_cards", analytics.rs_cards, 0.0, 1e12),
        ]
    }

    /// Why this history cannot start a node with `params`, if it cannot.
    pub fn check(&self, params: &G1Params) -> Result<(), G1HistoryError> {
        let refuse = |field: String, reason: String| Err(G1HistoryError { field, reason });
        let Some(evacuation) = params.evacuation else {
            return refuse(
                String::new(),
                "this G1 has a fixed eden and no predictions to start from".into(),
            );
        };
        // From the live set to all of the heap but one region of eden.
        let live = params.live_old_bytes();
        let most = params.heap_bytes.saturating_sub(evacuation.region_bytes);
        if !(live..=most).contains(&self.old_used_bytes) {
            return refuse(
                "old".into(),
                format!(
                    "{} bytes is outside the live set to the heap less a region ({live} to {most})",
                    self.old_used_bytes
                ),
            );
        }
        let sound = |field: String, seq: &Seq, low: f64, high: f64| {
            if !(low..=high).contains(&seq.average()) {
                return refuse(
                    field,
                    format!("average {} is outside {low} to {high}", seq.average()),
                );
            }
            if !(0.0..=high * high).contains(&seq.variance()) {
                return refuse(
                    field,
                    format!(
                        "variance {} is outside 0 to {}",
                        seq.variance(),
                        high * high
                    ),
                );
            }
            Ok(())
        };
        for (field, seq, low, high) in Self::analytics_fields(&self.analytics) {
            sound(field.into(), &seq, low, high)?;
        }
        // More regions than the heap has cannot have been seen.
        let regions = (params.heap_bytes / evacuation.region_bytes) as usize;
        for (name, group) in [
            ("eden_survival", &self.eden_survival),
            ("survivor_survival", &self.survivor_survival),
        ] {
            if group.is_empty() || group.len() > regions {
                return refuse(
                    name.into(),
                    format!("{} ages; 1 to the heap's {regions} regions", group.len()),
                );
            }
            for (age, seq) in group.iter().enumerate() {
                sound(format!("{name}[{age}]"), seq, 0.0, 1.0)?;
            }
        }
        Ok(())
    }

    /// G1's sizing state as this history has it.
    fn policy(&self) -> G1Policy {
        G1Policy::learnt(
            self.analytics,
            SurvRateGroup::learnt(self.eden_survival.clone()).unwrap_or_default(),
            SurvRateGroup::learnt(self.survivor_survival.clone()).unwrap_or_default(),
        )
    }
}

/// Bytes a write leaves alive on Cassandra 5.0's heap (its on-heap
/// memtable row), **fitted** to C1's GC logs (`validation::real_gc`): the
/// heap in use after each young pause grows 1,007 B per write answered
/// between pauses, less what reads alone grow it. The preset prices the
/// memtable's rows with it (`sim::preset`).
pub const CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE: u64 = 1_007;

impl G1Params {
    /// Section 4.4's model: G1, 48 GB heap, heavy load.
    pub fn cassandra_3_11_heap_48g() -> G1Params {
        const GIB: u64 = 1 << 30;
        G1Params {
            heap_bytes: 48 * GIB,
            eden_bytes: 8 * GIB,
            max_young_pause: SimDuration::from_millis(500),
            young_median_base: SimDuration::from_millis(135),
            young_median_per_old_occupancy: SimDuration::from_millis(270),
            young_p99_over_median: 3.5,
            promoted_fraction: 0.05,
            old_live_fraction: 0.30,
            mixed_trigger_fraction: 0.45,
            mixed_pause_median: SimDuration::from_millis(400),
            mixed_pause_p99: SimDuration::from_millis(800),
            full_probability: 5e-5,
            full_pause_median: SimDuration::from_secs(2),
            full_pause_p99: SimDuration::from_secs(4),
            evacuation: None,
        }
    }

    /// Cassandra 5.0 on this project's machine (`validation/REAL.md`): G1
    /// with 5.0's `jvm17-server.options` (`MaxGCPauseMillis=300`,
    /// `InitiatingHeapOccupancyPercent=70`, 16-MiB regions), one GC thread
    /// (the node is pinned to one core), on a heap of `heap_bytes`. Young
    /// pauses and eden come from G1's evacuation
    /// ([`EvacuationParams::cassandra_5_0`], its line fitted to the
    /// calibration phases' GC logs): the lognormal young-pause fields and
    /// `eden_bytes` are not used (`eden_bytes` is G1's smallest young
    /// generation, 5 % of the heap, kept for the parameters' checks).
    ///
    /// Mixed and full collections keep the 3.11 model's estimates \[E\]
    /// (the calibration logs have none), with the mixed trigger at 5.0's
    /// 70 % initiating occupancy.
    pub fn cassandra_5_0(heap_bytes: u64) -> G1Params {
        let evacuation = EvacuationParams::cassandra_5_0();
        G1Params {
            heap_bytes,
            eden_bytes: (heap_bytes as f64 * evacuation.min_young_fraction) as u64,
            mixed_trigger_fraction: 0.70,
            evacuation: Some(evacuation),
            ..G1Params::cassandra_3_11_heap_48g()
        }
    }

    /// The old generation after a mixed or full collection: the live set.
    fn live_old_bytes(&self) -> u64 {
        (self.heap_bytes as f64 * self.old_live_fraction) as u64
    }

    /// What one young collection promotes to the old generation.
    fn promoted_bytes(&self) -> u64 {
        (self.eden_bytes as f64 * self.promoted_fraction) as u64
    }

    fn validate(&self) {
        assert!(self.eden_bytes > 0 && self.eden_bytes < self.heap_bytes);
        assert!(self.young_p99_over_median >= 1.0);
        assert!(self.mixed_pause_p99 >= self.mixed_pause_median);
        assert!(self.full_pause_p99 >= self.full_pause_median);
        assert!((0.0..=1.0).contains(&self.promoted_fraction));
        assert!((0.0..=1.0).contains(&self.full_probability));
        assert!(
            0.0 <= self.old_live_fraction && self.old_live_fraction < self.mixed_trigger_fraction,
            "the live set lies below the mixed trigger"
        );
        if let Some(evacuation) = &self.evacuation {
            assert!(evacuation.region_bytes > 0);
            assert!(
                evacuation.row_copy_ns_per_byte > 0.0
                    && evacuation.transient_copy_ns_per_byte > 0.0
            );
            assert!(evacuation.copy_sigma >= 0.0 && evacuation.card_sigma >= 0.0);
            for work in [evacuation.write, evacuation.read] {
                assert!(work.card_scan_ns >= 0.0 && work.card_scan_ns.is_finite());
            }
            assert!(evacuation.card_ns_per_card > 0.0 && evacuation.card_ns_per_card.is_finite());
            assert!(
                evacuation.pause_goal > evacuation.pause_other,
                "the goal leaves room to copy"
            );
            assert!(
                0.0 < evacuation.min_young_fraction
                    && evacuation.min_young_fraction <= evacuation.max_young_fraction
                    && evacuation.max_young_fraction + evacuation.reserve_fraction < 1.0
            );
        }
    }
}

pub use crate::sep::SepParams;

/// Whether the node collects garbage.
// A configuration, held once per node and copied only when a node is
// built: its size costs nothing on the hot path, and boxing would cost it
// `Copy`.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GcModel {
    /// No collector: [`JvmNode::allocate`] does nothing (for comparisons;
    /// injected pauses still apply).
    Disabled,
    /// G1 with these parameters.
    G1(G1Params),
}

/// A node's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct JvmConfig {
    /// Hardware threads (vCPUs) the JVM runs on.
    pub cores: u32,
    /// Maximum threads of each stage.
    pub threads: StageThreads,
    /// CPU added to a task for its hand-off to a pool thread.
    pub handoff_cost: SimDuration,
    /// Whether a task that waits in its stage's FIFO pays
    /// [`JvmConfig::handoff_cost`] too. `false`: only a task that starts
    /// on a parked thread pays it (with [`JvmConfig::sep`], the shared
    /// pool's tasks pay its runs instead); one taken from
    /// the queue by a thread that has just finished a task does not, as
    /// Cassandra's `SEPWorker` goes straight on to its executor's next
    /// task without parking (no futex wake-up, no context switch), so at
    /// saturation, where tasks queue, the hand-offs cost nothing: 5.0's
    /// preset. `true` charges every task: 3.11's, whose cost factor and G1
    /// fit were made that way.
    pub queued_tasks_pay_handoff: bool,
    /// The garbage collector.
    pub gc: GcModel,
    /// Garbage each step of request handling allocates (the driver passes
    /// it to [`JvmNode::allocate`]).
    pub allocation: AllocationParams,
    /// Whether the driver runs a read's parses after its I/O as
    /// continuations on the read's thread ([`JvmNode::submit_continuation`])
    /// rather than as tasks handed off anew: 5.0's preset does, as
    /// Cassandra runs a local read (one thread, blocking on the page cache
    /// or the disk); 3.11's keeps the hand-off per task its cost table and
    /// G1 model were fitted with.
    pub inline_continuations: bool,
    /// The request stages as Cassandra 4.0+'s shared pool of spinning
    /// workers ([`crate::sep`], [`SepParams`]): a task queued on a request
    /// stage waits for a spinner's look or a worker unparked for it, and
    /// each worker's run on the core costs [`SepParams::run_cost`] instead
    /// of the hand-off. `None`: a stage's threads park as soon as they are
    /// idle and a task wakes one (3.11's preset, whose costs were fitted
    /// that way).
    pub sep: Option<SepParams>,
    /// Whether a woken thread takes no core until its wake-up is over (a
    /// state of its own, an event of its own): exact at any load. `false`
    /// takes the wake-up as the first part of the task's service, which is
    /// exact only while the runnable threads fit the cores and otherwise
    /// shares the cores out to threads that are not yet running: 3.11's
    /// preset, whose prices and G1 model were fitted that way. 5.0's
    /// request workers wake often on the real node's one core, where that
    /// sharing would take a core's worth of time at moderate loads.
    pub exact_wakeups: bool,
    /// What G1 starts from ([`G1History`]); `None`: a new JVM, G1's own
    /// start-up guesses. Only for G1 with [`EvacuationParams`].
    pub g1_start: Option<G1History>,
    /// Whether a client request's first task first passes through the
    /// native transport's event loop ([`Stage::EventLoop`], its threads
    /// [`StageThreads::event_loop`]; [`JvmNode::submit_from_client`]):
    /// the loop, parked in `epoll_wait` while idle, pays
    /// [`JvmConfig::event_loop_wake`] to wake for a request and hands it on;
    /// a request that finds it busy (queued behind others, as at
    /// saturation) costs it nothing. 5.0's preset; 3.11's folds the loop
    /// into its fitted prices.
    pub event_loop_front: bool,
    /// The event loop's own CPU per client request with
    /// [`JvmConfig::event_loop_front`]: reading and decoding its frame,
    /// handing it to its stage, encoding and writing its response. The
    /// loop is one thread among the runnable ones, so at saturation it
    /// gets its share of the cores and meters the requests it hands on
    /// (the real node runs ~5 request threads at once at saturation, not
    /// the ~200 its clients have in flight). Zero: the loop only pays its
    /// wake-ups.
    pub event_loop_work: SimDuration,
    /// What each run of the event loop on the core costs with
    /// [`JvmConfig::event_loop_front`]: a request or a response flush that
    /// finds it parked wakes it, and those that come while it runs are
    /// its batch.
    pub event_loop_wake: SimDuration,
}

impl JvmConfig {
    /// Every CPU price of the node times `factor` (`[cluster]
    /// cpu_slowdown`): a hand-off, a shared-pool run (and a spinner's look),
    /// the event loop's work and its wake-up. Thread wake-up latencies and
    /// GC pauses are left as they are. A factor of 1 changes nothing.
    pub fn scale_cpu(&mut self, factor: f64) {
        if factor == 1.0 {
            return;
        }
        debug_assert!(
            factor.is_finite() && factor > 0.0,
            "a slowdown is positive: {factor}"
        );
        let scale = |value: SimDuration| {
            SimDuration::from_nanos((value.as_nanos() as f64 * factor).round() as u64)
        };
        self.handoff_cost = scale(self.handoff_cost);
        self.event_loop_work = scale(self.event_loop_work);
        self.event_loop_wake = scale(self.event_loop_wake);
        if let Some(sep) = self.sep.as_mut() {
            sep.run_cost = scale(sep.run_cost);
        }
    }

    /// Cassandra 3.11 defaults on `cores` cores and `data_directories`
    /// data directories, with [`HANDOFF_COST`] and G1 as in section 4.4.
    pub fn cassandra_3_11(cores: u32, data_directories: u32) -> JvmConfig {
        JvmConfig {
            cores,
            threads: StageThreads::cassandra_3_11(cores, data_directories),
            handoff_cost: HANDOFF_COST,
            queued_tasks_pay_handoff: true,
            gc: GcModel::G1(G1Params::cassandra_3_11_heap_48g()),
            allocation: AllocationParams::per_step(ALLOCATION_PER_OPERATION_BYTES),
            inline_continuations: false,
            sep: None,
            exact_wakeups: false,
            g1_start: None,
            event_loop_front: false,
            event_loop_work: SimDuration::ZERO,
            event_loop_wake: HANDOFF_COST,
        }
    }

    /// Cassandra 5.0 on `cores` cores, `data_directories` data directories
    /// and a heap of `heap_bytes`: 5.0's stage defaults are 3.11's
    /// (`concurrent_reads`/`writes` 32, `native_transport_max_threads`
    /// 128, Config.java @5.0), the shared pool of request workers and the
    /// event loop as measured on the real node ([`CASSANDRA_5_0_SEP`],
    /// [`CASSANDRA_5_0_EVENT_LOOP_WORK`]), [`HANDOFF_COST`] for the other
    /// stages, G1 fitted to the real node ([`G1Params::cassandra_5_0`])
    /// and its allocation ([`AllocationParams::cassandra_5_0`]).
    pub fn cassandra_5_0(cores: u32, data_directories: u32, heap_bytes: u64) -> JvmConfig {
        JvmConfig {
            cores,
            threads: StageThreads::cassandra_3_11(cores, data_directories),
            handoff_cost: HANDOFF_COST,
            queued_tasks_pay_handoff: false,
            gc: GcModel::G1(G1Params::cassandra_5_0(heap_bytes)),
            allocation: AllocationParams::cassandra_5_0(),
            inline_continuations: true,
            sep: Some(CASSANDRA_5_0_SEP),
            exact_wakeups: true,
            g1_start: None,
            event_loop_front: true,
            event_loop_work: CASSANDRA_5_0_EVENT_LOOP_WORK,
            event_loop_wake: CASSANDRA_5_0_EVENT_LOOP_WAKE,
        }
    }
}

/// What kind of stop-the-world pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PauseKind {
    /// G1 young (evacuation) pause.
    Young,
    /// G1 mixed collection.
    Mixed,
    /// Full GC / to-space exhaustion.
    Full,
    /// A pause injected with [`JvmNode::pause`].
    Injected,
}

/// One stop-the-world pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcPause {
    /// What kind.
    pub kind: PauseKind,
    /// When the world stops (after any pause still in progress).
    pub start: SimTime,
    /// How long it stays stopped.
    pub duration: SimDuration,
}

/// Counters of one kind of pause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PauseStats {
    /// Pauses started.
    pub count: u64,
    /// Their total length (a pause counts in full when it starts).
    pub total: SimDuration,
    /// The longest.
    pub longest: SimDuration,
}

impl PauseStats {
    fn record(&mut self, duration: SimDuration) {
        self.count += 1;
        self.total = self.total + duration;
        self.longest = self.longest.max(duration);
    }

    fn merge(self, other: PauseStats) -> PauseStats {
        PauseStats {
            count: self.count + other.count,
            total: self.total + other.total,
            longest: self.longest.max(other.longest),
        }
    }
}

/// Pause counters by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Young pauses.
    pub young: PauseStats,
    /// Mixed pauses.
    pub mixed: PauseStats,
    /// Full pauses.
    pub full: PauseStats,
    /// Injected pauses.
    pub injected: PauseStats,
    /// With [`EvacuationParams`] (G1 sizing eden to its goal): the eden
    /// each collection that eden filling started found full, summed,
    /// bytes (a GC log's `Eden regions` before each pause, in bytes); 0
    /// without.
    pub eden_collected_bytes: u64,
    /// The collections counted in `eden_collected_bytes`.
    pub eden_collections: u64,
}

impl GcStats {
    /// All kinds together.
    pub fn all(&self) -> PauseStats {
        self.young
            .merge(self.mixed)
            .merge(self.full)
            .merge(self.injected)
    }

    fn of_kind(&mut self, kind: PauseKind) -> &mut PauseStats {
        match kind {
            PauseKind::Young => &mut self.young,
            PauseKind::Mixed => &mut self.mixed,
            PauseKind::Full => &mut self.full,
            PauseKind::Injected => &mut self.injected,
        }
    }
}

/// A stage's threads and queue.
#[derive(Clone, Debug)]
struct Pool {
    threads: u32,
    active: u32,
    queue: VecDeque<(u64, SimDuration)>,
    completed: u64,
    /// Core time of the tasks the stage has started (demand and hand-off;
    /// not wake-ups, not the spinner's), nanoseconds.
    cpu_nanos: u128,
}

impl Pool {
    /// Whether a queued task waits and a thread is free to take it.
    fn has_work_to_take(&self) -> bool {
        !self.queue.is_empty() && self.active < self.threads
    }

    /// Takes the first queued task onto a free thread.
    fn take_queued(&mut self) -> (u64, SimDuration) {
        let task = self.queue.pop_front().expect("a queued task");
        self.active += 1;
        task
    }
}

/// A pool thread holding a task, ordered by when it finishes in per-thread
/// service, then by start order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RunningTask {
    finish_service: u128,
    sequence: u64,
    tag: u64,
    stage: Stage,
    /// A shared-pool spinner's look ([`crate::sep`]), not a task: its
    /// spinner's id.
    look: Option<u32>,
}

/// A thread woken for a task that has not started yet
/// ([`JvmConfig::exact_wakeups`]), ordered by when it runs, then by
/// submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct WakingTask {
    at: SimTime,
    sequence: u64,
    tag: u64,
    stage: Stage,
    cost: SimDuration,
}

/// G1's occupancy.
#[derive(Clone, Debug)]
struct G1State {
    params: G1Params,
    eden_used_bytes: u64,
    old_used_bytes: u64,
    /// Whether the node started from a [`G1History`] (its old generation
    /// is known).
    from_history: bool,
    /// With [`G1Params::evacuation`]: what is alive and where, and eden.
    evacuation: Option<Evacuation>,
}

/// The state of G1's evacuation ([`EvacuationParams`]).
#[derive(Clone, Debug)]
struct Evacuation {
    params: EvacuationParams,
    /// Eden for the next collection.
    eden_target: u64,
    /// Retained bytes allocated since the last pause (in eden).
    retained_new: u64,
    /// Transient bytes of the operations since the last pause: alive at
    /// the next one, dead by the one after.
    transient_new: u64,
    /// Card scanning the operations since the last pause left, ns (at
    /// its price, before the pause's spread).
    card_scan_new_ns: f64,
    /// Retained bytes in survivor regions, promoted at the next pause.
    retained_survivor: u64,
    /// The bytes the last pause copied into survivor regions (retained
    /// and transient; [`Evacuation::survivor_regions`] holds them).
    survivor_used: u64,
    /// Retained bytes promoted to the old generation, still alive.
    retained_old: u64,
    /// G1's sizing: what it learnt and the cards it expects.
    policy: G1Policy,
    /// Free regions at the end of the last pause.
    free_regions: usize,
    /// When G1 next samples the young regions' cards
    /// ([`G1Policy::revise`]).
    next_sample: SimTime,
}

impl Evacuation {
    /// The survivor regions the last pause filled.
    fn survivor_regions(&self) -> usize {
        self.survivor_used.div_ceil(self.params.region_bytes) as usize
    }
}

/// How often G1 samples the young regions' remembered sets in a mutator
/// phase (`G1ConcRefinementServiceIntervalMillis`).
const RS_SAMPLE_INTERVAL: SimDuration = SimDuration::from_millis(300);

/// One Cassandra node's CPU: stages, cores and garbage collection.
#[derive(Clone, Debug)]
pub struct JvmNode {
    cores: u32,
    handoff_cost: SimDuration,
    /// [`JvmConfig::queued_tasks_pay_handoff`].
    queued_tasks_pay_handoff: bool,
    allocation: AllocationParams,
    inline_continuations: bool,
    pools: [Pool; STAGE_COUNT],
    running: BinaryHeap<Reverse<RunningTask>>,
    /// Wake-ups ([`JvmNode::submit`]'s `wake`) whose time is still to be
    /// taken back out of `cpu_busy_nanos`, nanoseconds. A waking thread
    /// counts as runnable, its wake-up taken as the first part of its
    /// task's service, which is exact while the runnable threads fit the
    /// cores (each then progresses at wall-clock speed) and costs no event
    /// of its own; the core time it seems to use is netted out of the busy
    /// time as it accrues (so `cpu_busy` never runs backwards, and is
    /// exact once the wake-up is over).
    wake_nanos_to_net: u128,
    /// Service each runnable thread has received since the start, in
    /// [`SERVICE_UNITS_PER_NANO`] units: all runnable threads progress
    /// alike, so a task finishes when this reaches its `finish_service`.
    service: u128,
    /// When `service` was last brought up to date.
    updated_at: SimTime,
    /// The latest stop-the-world interval `[pause_start, pause_end)`;
    /// chained pauses are merged into it. Empty at the start.
    pause_start: SimTime,
    pause_end: SimTime,
    next_sequence: u64,
    g1: Option<G1State>,
    gc_stats: GcStats,
    last_pause: Option<GcPause>,
    /// Core time tasks have used, in nanoseconds.
    cpu_busy_nanos: u128,
    tasks_completed: u64,
    /// [`JvmNode::next_completion`], worked out when a change could move
    /// it (a task started or finished, a pause) rather than each time the
    /// driver asks, which it does after every event.
    next: Option<SimTime>,
    /// The shared pool's spinning workers, if the request stages are one
    /// ([`JvmConfig::sep`]).
    sep: Option<Spinners>,
    /// Spinners' looks among `running`.
    looks_running: usize,
    /// Shared-pool workers that finished a task with nothing else to take,
    /// by when: each starts spinning unless, at that same instant, the
    /// driver hands it its read's continuation
    /// ([`JvmNode::submit_continuation`]) or its read's I/O
    /// ([`JvmNode::worker_blocks_on_io`]).
    pending_workers: Vec<(SimTime, Stage)>,
    /// Shared-pool workers blocked in a read's I/O: each takes the
    /// continuation after it, woken by the I/O (a run).
    blocked_workers: u32,
    /// CPU the spinners' looks that found no task have taken, nanoseconds
    /// (within `cpu_busy_nanos`).
    spin_nanos: u128,
    /// [`JvmConfig::exact_wakeups`].
    exact_wakeups: bool,
    /// [`JvmConfig::event_loop_front`].
    event_loop_front: bool,
    /// [`JvmConfig::event_loop_work`].
    event_loop_work: SimDuration,
    /// [`JvmConfig::event_loop_wake`].
    event_loop_wake: SimDuration,
    /// Times the event loop was put on the core.
    event_loop_runs: u64,
    /// Client requests' first tasks in the event loop, in the order the
    /// loop (one FIFO) finishes them: each one's tag, the stage it goes on
    /// to, its demand there and its thread's wake-up.
    after_event_loop: VecDeque<(u64, Stage, SimDuration, SimDuration)>,
    /// Threads woken for a task, not yet running (exact wake-ups only):
    /// each holds its pool's thread.
    waking: BinaryHeap<Reverse<WakingTask>>,
}

impl JvmNode {
    /// A node with `config`, idle at time zero.
    pub fn new(config: JvmConfig) -> JvmNode {
        assert!(
            (1..=MAX_CORES).contains(&config.cores),
            "1 to {MAX_CORES} cores"
        );
        let g1 = match config.gc {
            GcModel::Disabled => None,
            GcModel::G1(params) => {
                params.validate();
                let gc_threads = parallel_gc_threads(config.cores);
                let mut g1 = G1State {
                    params,
                    eden_used_bytes: 0,
                    old_used_bytes: params.live_old_bytes(),
                    from_history: config.g1_start.is_some(),
                    evacuation: params.evacuation.map(|evacuation| Evacuation {
                        params: evacuation,
                        eden_target: 0,
                        retained_new: 0,
                        transient_new: 0,
                        card_scan_new_ns: 0.0,
                        retained_survivor: 0,
                        survivor_used: 0,
                        retained_old: 0,
                        // No history: a new JVM's seeds.
                        policy: G1Policy::new(gc_threads),
                        free_regions: 0,
                        next_sample: SimTime::ZERO + RS_SAMPLE_INTERVAL,
                    }),
                };
                if let Some(start) = &config.g1_start {
                    if let Err(reason) = start.check(&params) {
                        panic!("JvmConfig::g1_start: {reason}");
                    }
                    g1.old_used_bytes = start.old_used_bytes;
                    if let Some(evacuation) = g1.evacuation.as_mut() {
                        evacuation.policy = start.policy();
                    }
                }
                g1.size_eden();
                Some(g1)
            }
        };
        JvmNode {
            cores: config.cores,
            handoff_cost: config.handoff_cost,
            queued_tasks_pay_handoff: config.queued_tasks_pay_handoff,
            allocation: config.allocation,
            inline_continuations: config.inline_continuations,
            pools: Stage::ALL.map(|stage| {
                // The loop's hand-ons come out in its one FIFO's order.
                assert!(
                    !config.event_loop_front || config.threads.event_loop == 1,
                    "an event loop in front is one thread"
                );
                let threads = config.threads.get(stage);
                assert!(threads >= 1, "{} needs a thread", stage.name());
                Pool {
                    threads,
                    active: 0,
                    queue: VecDeque::new(),
                    completed: 0,
                    cpu_nanos: 0,
                }
            }),
            running: BinaryHeap::new(),
            wake_nanos_to_net: 0,
            service: 0,
            updated_at: SimTime::ZERO,
            pause_start: SimTime::ZERO,
            pause_end: SimTime::ZERO,
            next_sequence: 0,
            g1,
            gc_stats: GcStats::default(),
            last_pause: None,
            cpu_busy_nanos: 0,
            tasks_completed: 0,
            next: None,
            sep: config.sep.map(|params| Spinners::new(params, 0)),
            looks_running: 0,
            pending_workers: Vec::new(),
            blocked_workers: 0,
            spin_nanos: 0,
            exact_wakeups: config.exact_wakeups,
            event_loop_front: config.event_loop_front,
            event_loop_work: config.event_loop_work,
            event_loop_wake: config.event_loop_wake,
            event_loop_runs: 0,
            after_event_loop: VecDeque::new(),
            waking: BinaryHeap::new(),
        }
    }

    /// Garbage a step of request handling allocates on this node
    /// ([`JvmConfig::allocation`]).
    pub fn allocation(&self, step: AllocationStep) -> u64 {
        self.allocation.bytes(step)
    }

    /// Whether continuations run without a hand-off
    /// ([`JvmConfig::inline_continuations`]).
    pub fn inline_continuations(&self) -> bool {
        self.inline_continuations
    }

    /// Seeds the shared pool's draws (its spinners' sleeps and its
    /// workers' wake-ups; [`JvmConfig::sep`]): a node's own stream, so
    /// that nodes do not spin in step. Without it the seed is zero.
    pub fn seed_workers(&mut self, seed: u64) {
        if let Some(sep) = self.sep.as_mut() {
            *sep = Spinners::new(sep.params(), seed);
        }
    }

    /// Puts the collector at a random point of its steady cycle, as on a
    /// node that has served for a while (R5 measured 90 minutes into its
    /// run): eden filled to a uniform fraction, and the old generation a
    /// uniform number of young collections past the last mixed one.
    /// Without it every node starts with an empty eden and, at equal
    /// allocation rates, all the nodes of a cluster collect together.
    pub fn start_mid_cycle<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let Some(g1) = self.g1.as_mut() else {
            return;
        };
        let params = g1.params;
        if g1.evacuation.is_some() {
            // The old generation anywhere between the live set and the
            // mixed trigger (where it is unknown: a node started from a
            // history keeps its own), eden as G1 sizes it then, part
            // filled.
            let live = params.live_old_bytes() as f64;
            let trigger = params.heap_bytes as f64 * params.mixed_trigger_fraction;
            let drawn = (live + (trigger - live) * rng.random::<f64>()) as u64;
            if !g1.from_history {
                g1.old_used_bytes = drawn;
            }
            g1.size_eden();
            g1.eden_used_bytes = (g1.eden_limit() as f64 * rng.random::<f64>()) as u64;
            debug_assert!(g1.eden_used_bytes < g1.eden_limit());
            return;
        }
        g1.eden_used_bytes = (params.eden_bytes as f64 * rng.random::<f64>()) as u64;
        let (live, promoted) = (params.live_old_bytes(), params.promoted_bytes());
        // Young collections from a mixed one to the next: old grows by
        // `promoted` each until it reaches the trigger ([`G1State::collect`]).
        let trigger = params.heap_bytes as f64 * params.mixed_trigger_fraction;
        let youngs = if promoted > 0 {
            ((trigger - live as f64) / promoted as f64).ceil().max(0.0)
        } else {
            0.0
        };
        let since_mixed = (rng.random::<f64>() * (youngs + 1.0)).floor().min(youngs);
        g1.old_used_bytes = live + promoted * since_mixed as u64;
        debug_assert!(g1.eden_used_bytes < params.eden_bytes);
    }

    /// Submits task `tag` needing `demand` of CPU to `stage`: it starts on
    /// a free thread of the stage (costing [`JvmConfig::handoff_cost`] more)
    /// once that thread, parked while idle, has woken `wake` later
    /// ([`crate::wakeup`]), or waits in the stage's FIFO for a busy thread
    /// to take it, which needs no wake-up (and no hand-off cost unless
    /// [`JvmConfig::queued_tasks_pay_handoff`]). Returns the node's next
    /// completion.
    pub fn submit(
        &mut self,
        now: SimTime,
        stage: Stage,
        tag: u64,
        demand: SimDuration,
        wake: SimDuration,
    ) -> Option<SimTime> {
        if self.sep.is_some() && stage.is_shared_pool() {
            return self.enqueue_shared(now, stage, tag, demand);
        }
        self.enqueue(now, stage, tag, demand, self.handoff_cost, wake)
    }

    /// A response handed to the native transport's event loop to flush
    /// to its connection (Cassandra's `Flusher`, run on the loop): with
    /// [`JvmConfig::event_loop_front`] the loop pays the hand-off to wake
    /// if it was parked, and nothing if it is busy with others; the
    /// response itself is not held for it (its bytes leave when the
    /// driver sends them). Returns the next completion.
    pub fn flush_response(&mut self, now: SimTime) -> Option<SimTime> {
        if !self.event_loop_front {
            return self.next_completion();
        }
        self.enqueue_on_event_loop(now, FLUSH_TAG, SimDuration::ZERO)
    }

    /// Puts `tag` on the event loop: `work` of its own, and the hand-off
    /// if the loop was parked. The loop's own wake-up latency is in the
    /// network's (REAL.md's loopback round trip holds it).
    fn enqueue_on_event_loop(
        &mut self,
        now: SimTime,
        tag: u64,
        work: SimDuration,
    ) -> Option<SimTime> {
        self.enqueue(
            now,
            Stage::EventLoop,
            tag,
            work,
            self.event_loop_wake,
            SimDuration::ZERO,
        )
    }

    /// [`JvmNode::submit`] for the first task of a client's request: with
    /// [`JvmConfig::event_loop_front`] it first passes through the native
    /// transport's event loop ([`Stage::EventLoop`]), which pays the
    /// hand-off to wake if it was parked and hands the task on to `stage`
    /// when it is done; otherwise it is [`JvmNode::submit`].
    pub fn submit_from_client(
        &mut self,
        now: SimTime,
        stage: Stage,
        tag: u64,
        demand: SimDuration,
        wake: SimDuration,
    ) -> Option<SimTime> {
        if !self.event_loop_front {
            return self.submit(now, stage, tag, demand, wake);
        }
        self.after_event_loop.push_back((tag, stage, demand, wake));
        self.enqueue_on_event_loop(now, tag, self.event_loop_work)
    }

    /// Submits task `tag` as the continuation of a task of `stage` that
    /// ran on the same thread before it waited (a read's parse after its
    /// I/O or page-cache hit, which Cassandra runs on the thread that
    /// blocked on it): no hand-off cost and no wake-up, but it still needs
    /// a thread of the stage, and waits for one if none is free (the twin
    /// releases the thread during the wait). Returns the next completion.
    pub fn submit_continuation(
        &mut self,
        now: SimTime,
        stage: Stage,
        tag: u64,
        demand: SimDuration,
    ) -> Option<SimTime> {
        if self.in_shared_pool(stage) {
            self.catch_up(now);
            if let Some(from) = self.take_pending_worker(now) {
                // The worker that just finished goes straight on, on its
                // own thread.
                self.pools[from.index()].active -= 1;
                self.pools[stage.index()].active += 1;
                self.start(stage, tag, demand);
                debug_assert!(self.invariants_hold());
                return self.update_next();
            }
            let cost = if self.blocked_workers > 0 {
                // The read's I/O is done: its worker wakes (a run).
                self.blocked_workers -= 1;
                let sep = self.sep.as_mut().expect("a shared pool");
                sep.count_wake_for_task();
                demand + sep.params().run_cost
            } else {
                demand
            };
            return self.enqueue(now, stage, tag, cost, SimDuration::ZERO, SimDuration::ZERO);
        }
        self.enqueue(
            now,
            stage,
            tag,
            demand,
            SimDuration::ZERO,
            SimDuration::ZERO,
        )
    }

    /// Starts `tag` on a free thread of `stage` after `wake`, costing
    /// `demand` and `handoff`, or queues it (with the hand-off only if
    /// queued tasks pay it).
    fn enqueue(
        &mut self,
        now: SimTime,
        stage: Stage,
        tag: u64,
        demand: SimDuration,
        handoff: SimDuration,
        wake: SimDuration,
    ) -> Option<SimTime> {
        self.catch_up(now);
        let queued_tasks_pay_handoff = self.queued_tasks_pay_handoff;
        let pool = &mut self.pools[stage.index()];
        if pool.active < pool.threads {
            pool.active += 1;
            if stage == Stage::EventLoop && handoff > SimDuration::ZERO {
                // The loop was parked in `epoll_wait`: a run.
                self.event_loop_runs += 1;
            }
            self.start_woken(now, stage, tag, demand + handoff, wake);
        } else {
            // A thread that finishes a task takes this one without
            // parking: whether that costs a hand-off is the preset's.
            let cost = if queued_tasks_pay_handoff {
                demand + handoff
            } else {
                demand
            };
            pool.queue.push_back((tag, cost));
        }
        debug_assert!(self.invariants_hold());
        self.update_next()
    }

    /// Starts `tag` (its thread already counted active) on a thread that
    /// wakes `wake` after `now`, costing `cost`.
    fn start_woken(
        &mut self,
        now: SimTime,
        stage: Stage,
        tag: u64,
        cost: SimDuration,
        wake: SimDuration,
    ) {
        if self.exact_wakeups && wake > SimDuration::ZERO {
            self.waking.push(Reverse(WakingTask {
                at: now + wake,
                sequence: self.next_sequence,
                tag,
                stage,
                cost,
            }));
            self.next_sequence += 1;
        } else {
            self.wake_nanos_to_net += u128::from(wake.as_nanos());
            self.start(stage, tag, cost + wake);
            // The wake-up is netted out of the stage's core time as it is
            // out of the node's.
            self.pools[stage.index()].cpu_nanos -= u128::from(wake.as_nanos());
            if self.sep.is_some() && stage.is_shared_pool() {
                self.maybe_schedule(now, stage);
            }
        }
    }

    /// A new task for a request stage of the shared pool
    /// ([`JvmConfig::sep`], `SEPExecutor.addTask`): it waits in the
    /// stage's queue for a spinner's look, or for a worker that finishes
    /// a task; a task on an empty queue while no worker spins unparks one
    /// to spin (`maybeStartSpinningWorker`).
    fn enqueue_shared(
        &mut self,
        now: SimTime,
        stage: Stage,
        tag: u64,
        demand: SimDuration,
    ) -> Option<SimTime> {
        self.catch_up(now);
        let pool = &mut self.pools[stage.index()];
        let was_empty = pool.queue.is_empty();
        pool.queue.push_back((tag, demand));
        let sep = self.sep.as_mut().expect("a shared pool");
        if was_empty && sep.count() == 0 {
            let wake = sep.draw_wake();
            sep.start_spinner(now, wake);
        }
        debug_assert!(self.invariants_hold());
        self.update_next()
    }

    /// `SEPExecutor.maybeSchedule`: with no worker spinning and tasks
    /// queued on `stage` that a thread may take, a parked worker is
    /// unparked for the first of them (a run, and its wake-up).
    fn maybe_schedule(&mut self, now: SimTime, stage: Stage) {
        let Some(sep) = self.sep.as_mut() else {
            return;
        };
        if sep.count() > 0 || !self.pools[stage.index()].has_work_to_take() {
            return;
        }
        let (tag, demand) = self.pools[stage.index()].take_queued();
        sep.count_wake_for_task();
        let wake = sep.draw_wake();
        let cost = demand + sep.params().run_cost;
        self.start_woken(now, stage, tag, cost, wake);
    }

    /// [`JvmNode::maybe_schedule`] for every request stage (the last
    /// spinner stopped spinning, `SEPWorker.stopSpinning`).
    fn maybe_schedule_all(&mut self, now: SimTime) {
        for stage in Stage::ALL {
            if stage.is_shared_pool() {
                self.maybe_schedule(now, stage);
            }
        }
    }

    /// A shared-pool worker takes a queued task of any request stage it
    /// may (`SEPWorker.selfAssign`); whether it found one.
    fn self_assign(&mut self) -> Option<Stage> {
        let stage = self.shared_stage_with_work()?;
        let (tag, demand) = self.pools[stage.index()].take_queued();
        self.start(stage, tag, demand);
        Some(stage)
    }

    /// The first request stage (in [`Stage::ALL`]'s order) with a queued
    /// task and a thread free to take it.
    fn shared_stage_with_work(&self) -> Option<Stage> {
        Stage::ALL
            .into_iter()
            .find(|stage| stage.is_shared_pool() && self.pools[stage.index()].has_work_to_take())
    }

    /// A shared-pool worker finished a task of `stage`: its read may go
    /// on at this same instant on the same thread (the driver hands it the
    /// continuation, or the I/O it blocks in); otherwise, settled at this
    /// instant, it takes the stage's next task, or another stage's, or
    /// starts spinning ([`JvmNode::settle_worker`]).
    fn shared_worker_free(&mut self, now: SimTime, stage: Stage) {
        self.pending_workers.push((now, stage));
    }

    /// `SEPWorker`'s loop after a task, for a worker of `stage` that was
    /// handed nothing at `at`.
    fn settle_worker(&mut self, at: SimTime, stage: Stage) {
        let pool = &mut self.pools[stage.index()];
        if let Some((tag, demand)) = pool.queue.pop_front() {
            self.start(stage, tag, demand);
            self.maybe_schedule(at, stage);
            return;
        }
        pool.active -= 1;
        if let Some(taken) = self.self_assign() {
            self.maybe_schedule(at, taken);
            return;
        }
        self.sep.as_mut().expect("a shared pool").start_spinning(at);
    }

    /// Settles the workers handed nothing by `until` (before it, or at it
    /// too with `inclusive`), earliest first.
    fn settle_pending_workers(&mut self, until: SimTime, inclusive: bool) {
        self.pending_workers.sort_unstable();
        while let Some(&(at, stage)) = self.pending_workers.first() {
            if at > until || (at == until && !inclusive) {
                break;
            }
            self.pending_workers.remove(0);
            self.settle_worker(at, stage);
        }
    }

    /// Takes the worker of a request stage that finished at `now` and is
    /// not settled yet, if any: its stage.
    fn take_pending_worker(&mut self, now: SimTime) -> Option<Stage> {
        let index = self.pending_workers.iter().position(|&(at, _)| at == now)?;
        Some(self.pending_workers.swap_remove(index).1)
    }

    /// A shared-pool worker that has just finished its read's task at
    /// `now` blocks in the read's I/O (a read the page cache did not
    /// have): it does not spin meanwhile (its thread is free in the twin,
    /// as every stage's is during I/O), and the continuation after the
    /// I/O wakes it ([`JvmNode::submit_continuation`]). Does nothing if no
    /// worker finished at `now`. Whether one blocked (the node's next
    /// completion may then have moved).
    pub fn worker_blocks_on_io(&mut self, now: SimTime) -> bool {
        let Some(stage) = self.take_pending_worker(now) else {
            return false;
        };
        self.pools[stage.index()].active -= 1;
        self.blocked_workers += 1;
        self.update_next();
        true
    }

    /// A spinner's look is over: the stop check, then a task to take or
    /// another sleep.
    fn look_over(&mut self, now: SimTime, id: u32) {
        self.looks_running -= 1;
        let sep = self.sep.as_mut().expect("a shared pool");
        if sep.after_look(now, id) == AfterLook::Stopped {
            if sep.count() == 0 {
                self.maybe_schedule_all(now);
            }
            return;
        }
        let stage = self.shared_stage_with_work();
        let sep = self.sep.as_mut().expect("a shared pool");
        let Some(stage) = stage else {
            sep.look_found_nothing(now, id);
            return;
        };
        let none_spins = sep.took_task(now, id);
        let (tag, demand) = self.pools[stage.index()].take_queued();
        if none_spins {
            // `stopSpinning`: the last spinner schedules for the queues.
            self.maybe_schedule_all(now);
        }
        self.start(stage, tag, demand);
        self.maybe_schedule(now, stage);
    }

    /// Puts spinner `id` on the core for its look.
    fn start_look(&mut self, id: u32) {
        let cost = u128::from(
            self.sep
                .as_ref()
                .expect("a shared pool")
                .params()
                .run_cost
                .as_nanos(),
        );
        self.spin_nanos += cost;
        self.looks_running += 1;
        self.running.push(Reverse(RunningTask {
            finish_service: self.service + cost * SERVICE_UNITS_PER_NANO,
            sequence: self.next_sequence,
            tag: FLUSH_TAG,
            stage: Stage::NativeTransport,
            look: Some(id),
        }));
        self.next_sequence += 1;
    }

    /// Finishes the tasks due by `now` (call it at [`JvmNode::next_completion`]),
    /// appending their tags to `finished` in completion order, and starts
    /// queued tasks on the freed threads. Returns the next completion.
    pub fn complete(&mut self, now: SimTime, finished: &mut Vec<u64>) -> Option<SimTime> {
        self.catch_up(now);
        if !self.pending_workers.is_empty() {
            // Nothing came for them at their instant: they spin.
            self.settle_pending_workers(now, true);
            self.catch_up(now);
        }
        while let Some(&Reverse(task)) = self.running.peek() {
            if task.finish_service > self.service {
                break;
            }
            self.running.pop();
            if let Some(id) = task.look {
                self.look_over(now, id);
                continue;
            }
            self.pools[task.stage.index()].completed += 1;
            if self.sep.is_some() && task.stage.is_shared_pool() {
                self.shared_worker_free(now, task.stage);
            } else {
                let pool = &mut self.pools[task.stage.index()];
                match pool.queue.pop_front() {
                    Some((tag, demand)) => self.start(task.stage, tag, demand),
                    None => pool.active -= 1,
                }
            }
            // A request the loop has read is handed on, not finished (the
            // loop is one FIFO, so its hand-ons come out in order).
            if task.stage == Stage::EventLoop && task.tag == FLUSH_TAG {
                // A flush is the loop's own work: nothing to report.
                continue;
            }
            if task.stage == Stage::EventLoop
                && self
                    .after_event_loop
                    .front()
                    .is_some_and(|&(tag, ..)| tag == task.tag)
            {
                if let Some((tag, stage, demand, wake)) = self.after_event_loop.pop_front() {
                    self.submit(now, stage, tag, demand, wake);
                }
                continue;
            }
            finished.push(task.tag);
            self.tasks_completed += 1;
        }
        debug_assert!(self.invariants_hold());
        let next = self.update_next();
        // (Workers that finished just now wait for the driver's next call
        // at this instant: their read may go on.)
        debug_assert!(next.is_none_or(|next| {
            next > now || self.pending_workers.iter().any(|&(at, _)| at == now)
        }));
        next
    }

    /// Drops every task, running or queued (the process died), and frees
    /// its threads; returns their tags. A pause in progress runs out. The
    /// node's next completion is then `None` until new work comes.
    pub fn drop_tasks(&mut self, now: SimTime) -> Vec<u64> {
        self.catch_up(now);
        let mut dropped: Vec<u64> = self
            .running
            .drain()
            .filter(|Reverse(task)| task.look.is_none())
            .map(|Reverse(task)| task.tag)
            .collect();
        dropped.extend(self.waking.drain().map(|Reverse(task)| task.tag));
        self.looks_running = 0;
        if let Some(sep) = self.sep.as_mut() {
            // The workers died with the process.
            sep.clear(now);
        }
        self.pending_workers.clear();
        self.blocked_workers = 0;
        self.wake_nanos_to_net = 0;
        for pool in &mut self.pools {
            dropped.extend(pool.queue.drain(..).map(|(tag, _)| tag));
            pool.active = 0;
        }
        // Tags in the event loop were dropped with its tasks above.
        self.after_event_loop.clear();
        debug_assert!(self.invariants_hold());
        self.update_next();
        dropped
    }

    /// Reports `bytes` allocated at `now`. With G1, each time eden fills a
    /// collection stops the node (after any pause in progress; bytes
    /// reported during a pause count towards the next one). Returns the
    /// next completion.
    pub fn allocate<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        bytes: u64,
        rng: &mut R,
    ) -> Option<SimTime> {
        let Some(g1) = self.g1.as_mut() else {
            return self.next_completion();
        };
        g1.eden_used_bytes = g1.eden_used_bytes.saturating_add(bytes);
        g1.sample_cards(now);
        // One collection per eden's worth (more than one only when a
        // single report exceeds eden).
        let mut collected = false;
        while let Some(g1) = self.g1.as_mut() {
            let eden = g1.eden_limit();
            if g1.eden_used_bytes < eden {
                break;
            }
            g1.eden_used_bytes -= eden;
            let sized = g1.evacuation.is_some();
            let (kind, duration) = g1.collect(rng);
            self.stop_the_world(now, kind, duration);
            let pause_end = self.pause_end;
            if let Some(evacuation) = self.g1.as_mut().and_then(|g1| g1.evacuation.as_mut()) {
                // G1 samples the cards 300 ms after a pause at the soonest.
                evacuation.next_sample = pause_end + RS_SAMPLE_INTERVAL;
            }
            if sized {
                self.gc_stats.eden_collected_bytes += eden;
                self.gc_stats.eden_collections += 1;
            }
            collected = true;
        }
        debug_assert!(self.invariants_hold());
        if collected {
            self.update_next()
        } else {
            // Eden alone moves no completion.
            self.next_completion()
        }
    }

    /// Reports one step of request handling at `now`: the garbage it
    /// allocates ([`JvmConfig::allocation`]) and, with G1's evacuation,
    /// what it leaves for the next young pause ([`EvacuationParams::work`]),
    /// then collects as [`JvmNode::allocate`] does. Returns the next
    /// completion.
    pub fn allocate_step<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        step: AllocationStep,
        rng: &mut R,
    ) -> Option<SimTime> {
        if let Some(evacuation) = self.g1.as_mut().and_then(|g1| g1.evacuation.as_mut()) {
            let work = evacuation.params.work(step);
            evacuation.transient_new = evacuation
                .transient_new
                .saturating_add(work.transient_bytes);
            evacuation.card_scan_new_ns += work.card_scan_ns;
        }
        let bytes = self.allocation.bytes(step);
        if bytes == 0 {
            return self.next_completion();
        }
        self.allocate(now, bytes, rng)
    }

    /// Reports `bytes` allocated at `now` to be long-lived: on-heap
    /// memtable rows, alive until [`JvmNode::release`]. With G1's
    /// evacuation they fill eden as any allocation does (a write's step
    /// allocates the rest, [`AllocationParams::cassandra_5_0`]) and young
    /// pauses copy them ([`EvacuationParams`]); without it, it changes
    /// nothing (3.11's per-step allocation counts the rows). Returns the
    /// next completion.
    pub fn retain<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        bytes: u64,
        rng: &mut R,
    ) -> Option<SimTime> {
        let Some(evacuation) = self.g1.as_mut().and_then(|g1| g1.evacuation.as_mut()) else {
            return self.next_completion();
        };
        evacuation.retained_new = evacuation.retained_new.saturating_add(bytes);
        self.allocate(now, bytes, rng)
    }

    /// Reports `bytes` of retained memory dead (a memtable flushed, its
    /// rows released), the oldest first: what was promoted stays in the
    /// old generation as garbage until a mixed collection; what is still
    /// young will not be copied.
    pub fn release(&mut self, bytes: u64) {
        if let Some(evacuation) = self.g1.as_mut().and_then(|g1| g1.evacuation.as_mut()) {
            let mut left = bytes;
            for place in [
                &mut evacuation.retained_old,
                &mut evacuation.retained_survivor,
                &mut evacuation.retained_new,
            ] {
                let taken = left.min(*place);
                *place -= taken;
                left -= taken;
            }
        }
    }

    /// Stops the node for `duration` from `now` (or from the end of the
    /// pause in progress), as an injected pause. Returns the next
    /// completion.
    pub fn pause(&mut self, now: SimTime, duration: SimDuration) -> Option<SimTime> {
        self.stop_the_world(now, PauseKind::Injected, duration);
        self.update_next()
    }

    /// When the earliest running task finishes, if any runs: the one
    /// wake-up the driver keeps.
    #[inline]
    pub fn next_completion(&self) -> Option<SimTime> {
        debug_assert_eq!(self.next, self.compute_next_completion());
        self.next
    }

    /// Works [`JvmNode::next_completion`] out anew after a change.
    fn update_next(&mut self) -> Option<SimTime> {
        self.next = self.compute_next_completion();
        self.next
    }

    /// The earliest of the next task completion, the next woken thread's
    /// start and the next spinner's look (the driver calls
    /// [`JvmNode::complete`] at any).
    fn compute_next_completion(&self) -> Option<SimTime> {
        let spinner = self.sep.as_ref().and_then(Spinners::next_wake);
        // A pending worker is settled at its own instant.
        let pending = self.pending_workers.iter().map(|&(at, _)| at).min();
        let spinner = match (spinner, pending) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let woken = match (self.waking.peek().map(|Reverse(task)| task.at), spinner) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let finishing = self.running.peek().map(|Reverse(task)| {
            let remaining = task.finish_service.saturating_sub(self.service);
            let needed = self.nanos_for_service(remaining, self.running.len());
            self.after_service(self.updated_at, needed)
        });
        match (woken, finishing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the world is stopped at `now`.
    pub fn is_paused(&self, now: SimTime) -> bool {
        self.pause_start <= now && now < self.pause_end
    }

    /// When the pause in progress at `now` ends, if one is.
    pub fn paused_until(&self, now: SimTime) -> Option<SimTime> {
        self.is_paused(now).then_some(self.pause_end)
    }

    /// The last pause started.
    pub fn last_pause(&self) -> Option<GcPause> {
        self.last_pause
    }

    /// What G1 has learnt so far ([`G1History`]), to start another node
    /// from; `None` without G1's evacuation.
    pub fn g1_history(&self) -> Option<G1History> {
        let g1 = self.g1.as_ref()?;
        let evacuation = g1.evacuation.as_ref()?;
        let policy = &evacuation.policy;
        Some(G1History {
            old_used_bytes: g1.old_used_bytes,
            analytics: *policy.analytics(),
            eden_survival: policy.eden_group().predictors().to_vec(),
            survivor_survival: policy.survivor_group().predictors().to_vec(),
        })
    }

    /// Pause counters.
    pub fn gc_stats(&self) -> &GcStats {
        &self.gc_stats
    }

    /// Bytes in eden and in the old generation (zeros without G1).
    pub fn heap_used_bytes(&self) -> (u64, u64) {
        self.g1
            .as_ref()
            .map_or((0, 0), |g1| (g1.eden_used_bytes, g1.old_used_bytes))
    }

    /// Threads of `stage` holding a task.
    pub fn active(&self, stage: Stage) -> u32 {
        self.pools[stage.index()].active
    }

    /// Whether `stage` has a thread with no task (parked): a task submitted
    /// now would wake it.
    pub fn has_idle_thread(&self, stage: Stage) -> bool {
        let pool = &self.pools[stage.index()];
        pool.active < pool.threads
    }

    /// Tasks waiting in `stage`'s queue.
    pub fn queued(&self, stage: Stage) -> usize {
        self.pools[stage.index()].queue.len()
    }

    /// Core time of the tasks `stage` has run or is running (their demand
    /// and hand-offs; wake-ups and the spinner's looks are no stage's):
    /// what a profile of the real node's threads by pool shows.
    pub fn stage_cpu(&self, stage: Stage) -> SimDuration {
        SimDuration::from_nanos(
            u64::try_from(self.pools[stage.index()].cpu_nanos).unwrap_or(u64::MAX),
        )
    }

    /// Tasks `stage` has completed.
    pub fn completed(&self, stage: Stage) -> u64 {
        self.pools[stage.index()].completed
    }

    /// Runnable threads (tasks running, all stages).
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// Tasks completed, all stages.
    pub fn tasks_completed(&self) -> u64 {
        self.tasks_completed
    }

    /// Core time tasks used up to the last input (hand-off costs included).
    pub fn cpu_busy(&self) -> SimDuration {
        SimDuration::from_nanos(self.cpu_busy_nanos.min(u128::from(u64::MAX)) as u64)
    }

    /// CPU the shared pool's spinners have taken for their looks
    /// ([`crate::sep`]; a look that takes a task included), within
    /// [`JvmNode::cpu_busy`] and no stage's.
    pub fn spin_cpu(&self) -> SimDuration {
        SimDuration::from_nanos(self.spin_nanos.min(u128::from(u64::MAX)) as u64)
    }

    /// Times a shared-pool worker was put on the core (a spinner's look,
    /// a worker unparked for a task): what the real node's schedstat
    /// counts for its request threads. Zero without [`JvmConfig::sep`].
    pub fn shared_pool_runs(&self) -> u64 {
        self.sep.as_ref().map_or(0, Spinners::runs)
    }

    /// Whether `stage`'s tasks go to the shared pool ([`JvmConfig::sep`]),
    /// whose workers the node wakes itself: a `wake` passed with such a
    /// task is not used.
    pub fn in_shared_pool(&self, stage: Stage) -> bool {
        self.sep.is_some() && stage.is_shared_pool()
    }

    /// Workers spinning now ([`crate::sep`]).
    pub fn spinners(&self) -> u32 {
        self.sep.as_ref().map_or(0, Spinners::count)
    }

    /// Workers spinning, integrated over time up to `now`
    /// ([`Spinners::spinning_time`]); zero without [`JvmConfig::sep`].
    pub fn spinning_time(&self, now: SimTime) -> SimDuration {
        self.sep
            .as_ref()
            .map_or(SimDuration::ZERO, |sep| sep.spinning_time(now))
    }

    /// Times the event loop was put on the core (a request or a flush
    /// that found it parked).
    pub fn event_loop_runs(&self) -> u64 {
        self.event_loop_runs
    }

    /// The node's cores.
    pub fn cores(&self) -> u32 {
        self.cores
    }

    /// Runs `tag` on a thread of `stage` (already counted active): `cost` is all the CPU it takes
    /// (demand, hand-off, and the wake-up taken as service).
    /// Brings the node up to `now`, starting each woken thread's task at
    /// its own time (the runnable set changes there, so service is
    /// advanced piecewise).
    fn catch_up(&mut self, now: SimTime) {
        if !self.pending_workers.is_empty() {
            self.settle_pending_workers(now, false);
        }
        loop {
            let woken = self
                .waking
                .peek()
                .map(|Reverse(task)| task.at)
                .filter(|&at| at <= now);
            let spinner = self
                .sep
                .as_ref()
                .and_then(Spinners::next_wake)
                .filter(|&at| at <= now);
            match (woken, spinner) {
                (None, None) => break,
                (Some(at), spinner) if spinner.is_none_or(|spinner| at <= spinner) => {
                    let Reverse(task) = self.waking.pop().expect("a woken thread");
                    self.advance(at);
                    self.start(task.stage, task.tag, task.cost);
                    if self.sep.is_some() && task.stage.is_shared_pool() {
                        // The woken worker's `maybeSchedule` before its task.
                        self.maybe_schedule(at, task.stage);
                    }
                }
                _ => {
                    let (at, id) = self
                        .sep
                        .as_mut()
                        .and_then(|sep| sep.wake_due(now))
                        .expect("a spinner due");
                    self.advance(at);
                    self.start_look(id);
                }
            }
        }
        self.advance(now);
    }

    fn start(&mut self, stage: Stage, tag: u64, cost: SimDuration) {
        let cost = u128::from(cost.as_nanos());
        self.pools[stage.index()].cpu_nanos += cost;
        self.running.push(Reverse(RunningTask {
            finish_service: self.service + cost * SERVICE_UNITS_PER_NANO,
            sequence: self.next_sequence,
            tag,
            stage,
            look: None,
        }));
        self.next_sequence += 1;
    }

    /// Brings per-thread service up to `now`: the running threads shared
    /// the cores over `[updated_at, now)` minus the stopped interval.
    fn advance(&mut self, now: SimTime) {
        debug_assert!(now >= self.updated_at, "time ran backwards");
        let elapsed = now.saturating_since(self.updated_at);
        let stopped = now
            .min(self.pause_end)
            .saturating_since(self.updated_at.max(self.pause_start));
        let serving = u128::from((elapsed - stopped).as_nanos());
        let threads = self.running.len() as u128;
        let cores = u128::from(self.cores);
        if threads > 0 && serving > 0 {
            self.service += if threads <= cores {
                serving * SERVICE_UNITS_PER_NANO
            } else {
                serving * cores * SERVICE_UNITS_PER_NANO / threads
            };
            let busy = serving * threads.min(cores);
            // A waking thread's share is spent waiting, not computing.
            let waking = busy.min(self.wake_nanos_to_net);
            self.wake_nanos_to_net -= waking;
            self.cpu_busy_nanos += busy - waking;
        }
        self.updated_at = self.updated_at.max(now);
    }

    /// Nanoseconds of running (not stopped) time for each of `threads`
    /// runnable threads to receive `service` units; rounds up so that
    /// [`JvmNode::advance`]'s rounding down still reaches it.
    fn nanos_for_service(&self, service: u128, threads: usize) -> u64 {
        let threads = threads as u128;
        let cores = u128::from(self.cores);
        let nanos = if threads <= cores {
            service.div_ceil(SERVICE_UNITS_PER_NANO)
        } else {
            (service * threads).div_ceil(cores * SERVICE_UNITS_PER_NANO)
        };
        nanos.min(u128::from(u64::MAX)) as u64
    }

    /// The time at which `nanos` of running time have passed after `from`,
    /// skipping the stopped interval.
    fn after_service(&self, from: SimTime, nanos: u64) -> SimTime {
        let nanos = SimDuration::from_nanos(nanos);
        if self.pause_end <= from {
            return from + nanos;
        }
        if from >= self.pause_start {
            return self.pause_end + nanos;
        }
        let end = from + nanos;
        if end > self.pause_start {
            end + (self.pause_end - self.pause_start)
        } else {
            end
        }
    }

    /// Stops the world for `duration` from `now`, or from the end of a
    /// pause still in progress (chained pauses merge into one interval).
    fn stop_the_world(&mut self, now: SimTime, kind: PauseKind, duration: SimDuration) {
        let start = if now <= self.pause_end && self.pause_start < self.pause_end {
            // Chained: the world is already stopped (or stops right now).
            let start = self.pause_end;
            self.pause_end += duration;
            start
        } else {
            if self.pause_end > self.updated_at {
                // An older pause lies between the last update and now: fold
                // it into `service` before the interval is replaced.
                self.catch_up(now);
            }
            self.pause_start = now;
            self.pause_end = now + duration;
            now
        };
        self.gc_stats.of_kind(kind).record(duration);
        self.last_pause = Some(GcPause {
            kind,
            start,
            duration,
        });
    }

    /// Thread accounting is consistent.
    fn invariants_hold(&self) -> bool {
        let active: u32 = self.pools.iter().map(|pool| pool.active).sum();
        let shared = self.sep.is_some();
        active as usize + self.looks_running
            == self.running.len() + self.waking.len() + self.pending_workers.len()
            && (self.exact_wakeups || self.waking.is_empty())
            && Stage::ALL.iter().zip(&self.pools).all(|(stage, pool)| {
                // A shared-pool task may wait for a look with threads free.
                pool.active <= pool.threads
                    && (pool.queue.is_empty()
                        || pool.active == pool.threads
                        || (shared && stage.is_shared_pool()))
            })
            && self.g1.as_ref().is_none_or(G1State::invariants_hold)
    }
}

impl G1State {
    /// What must hold of the collector between inputs: eden is a whole
    /// number of regions and at least one, the work waiting for the next
    /// pause is a number of nanoseconds, and the predictions are numbers.
    fn invariants_hold(&self) -> bool {
        self.evacuation.as_ref().is_none_or(|evacuation| {
            let region = evacuation.params.region_bytes;
            evacuation.eden_target >= region
                && evacuation.eden_target.is_multiple_of(region)
                && evacuation.card_scan_new_ns.is_finite()
                && evacuation.card_scan_new_ns >= 0.0
                && evacuation.survivor_used >= evacuation.retained_survivor
                && evacuation.policy.is_sound()
        })
    }

    /// A collection as eden fills: its kind and pause, and the old
    /// generation afterwards. Always draws one uniform and one normal (two
    /// with evacuation).
    fn collect<R: Rng + ?Sized>(&mut self, rng: &mut R) -> (PauseKind, SimDuration) {
        if self.evacuation.is_some() {
            return self.evacuate(rng);
        }
        let params = &self.params;
        let uniform: f64 = rng.random();
        let normal = standard_normal(rng);
        let heap = params.heap_bytes as f64;
        let promoted = params.promoted_bytes();
        let old_capacity = params.heap_bytes - params.eden_bytes;
        let live = params.live_old_bytes();
        if uniform < params.full_probability
            || self.old_used_bytes.saturating_add(promoted) > old_capacity
        {
            self.old_used_bytes = live;
            let duration = lognormal(params.full_pause_median, params.full_pause_p99, normal);
            (PauseKind::Full, duration)
        } else if self.old_used_bytes as f64 >= heap * params.mixed_trigger_fraction {
            self.old_used_bytes = live;
            let duration = lognormal(params.mixed_pause_median, params.mixed_pause_p99, normal);
            (PauseKind::Mixed, duration)
        } else {
            let occupancy = self.old_used_bytes as f64 / heap;
            let median = params.young_median_base.as_secs_f64()
                + params.young_median_per_old_occupancy.as_secs_f64() * occupancy;
            let sigma = params.young_p99_over_median.ln() / NORMAL_P99_Z;
            let duration = SimDuration::from_secs_f64(median * (sigma * normal).exp())
                .min(params.max_young_pause);
            self.old_used_bytes += promoted;
            (PauseKind::Young, duration)
        }
    }
}

impl G1State {
    /// Eden at which the next collection starts.
    fn eden_limit(&self) -> u64 {
        self.evacuation
            .as_ref()
            .map_or(self.params.eden_bytes, |evacuation| evacuation.eden_target)
    }

    /// A collection with [`EvacuationParams`]: young pauses copy the
    /// retained bytes in eden and survivors and the transient bytes in
    /// eden, promote the survivors' retained bytes to the old generation
    /// and scan the operations' cards; G1 learns from the pause
    /// ([`G1Policy::record`]); then eden is sized anew. Mixed and full
    /// collections keep the lognormal model and reclaim the old
    /// generation's garbage. Always draws one uniform and two normals.
    fn evacuate<R: Rng + ?Sized>(&mut self, rng: &mut R) -> (PauseKind, SimDuration) {
        let uniform: f64 = rng.random();
        let normal = standard_normal(rng);
        let card_normal = standard_normal(rng);
        let params = self.params;
        let eden = self.eden_limit();
        let Some(evacuation) = self.evacuation.as_mut() else {
            unreachable!("evacuate runs with evacuation");
        };
        let p = evacuation.params;
        let (new, promoted) = (evacuation.retained_new, evacuation.retained_survivor);
        let transient = evacuation.transient_new;
        let card_scan_ns = evacuation.card_scan_new_ns;
        let (survivor_regions, survivor_used) =
            (evacuation.survivor_regions(), evacuation.survivor_used);
        evacuation.retained_old += promoted;
        evacuation.retained_survivor = new;
        evacuation.retained_new = 0;
        // Transient bytes go to a survivor region and die there.
        evacuation.transient_new = 0;
        evacuation.card_scan_new_ns = 0.0;
        evacuation.survivor_used = new + transient;
        let live = params.live_old_bytes() + evacuation.retained_old;
        let old_capacity = params.heap_bytes.saturating_sub(eden);
        let (kind, duration) = if uniform < params.full_probability
            || self.old_used_bytes.saturating_add(promoted) > old_capacity
        {
            self.old_used_bytes = live + evacuation.retained_survivor;
            evacuation.retained_old += evacuation.retained_survivor;
            evacuation.retained_survivor = 0;
            evacuation.survivor_used = 0;
            let duration = lognormal(params.full_pause_median, params.full_pause_p99, normal);
            (PauseKind::Full, duration)
        } else if self.old_used_bytes as f64
            >= params.heap_bytes as f64 * params.mixed_trigger_fraction
        {
            self.old_used_bytes = live;
            let duration = lognormal(params.mixed_pause_median, params.mixed_pause_p99, normal);
            (PauseKind::Mixed, duration)
        } else {
            self.old_used_bytes += promoted;
            let rows = new + promoted;
            // The copy prices are means (per byte, weighted by the
            // bytes), the card scans medians per operation: spreads of
            // mean one and of median one about them.
            let copy_ns = (rows as f64 * p.row_copy_ns_per_byte
                + transient as f64 * p.transient_copy_ns_per_byte)
                * mean_one_lognormal(p.copy_sigma, normal);
            let card_ns = card_scan_ns * (p.card_sigma * card_normal).exp();
            let duration = p.pause_other + SimDuration::from_secs_f64((copy_ns + card_ns) * 1e-9);
            let eden_regions = (eden / p.region_bytes) as usize;
            let young_other_ns = p.young_other_per_region.as_nanos() as f64
                * (eden_regions + survivor_regions) as f64;
            evacuation.policy.record(
                &PauseRecord {
                    eden_regions,
                    eden_survived_bytes: new + transient,
                    survivor_regions,
                    survivor_survived_bytes: promoted.min(survivor_used),
                    copy_ns,
                    copied_bytes: rows + transient,
                    scan_ns: card_ns,
                    cards: card_scan_ns / p.card_ns_per_card,
                    constant_other_ns: p.pause_other.as_nanos() as f64 - young_other_ns,
                    young_other_ns,
                },
                p.region_bytes,
            );
            (PauseKind::Young, duration)
        };
        self.size_eden();
        (kind, duration)
    }

    /// Sizes the next eden after a pause ([`G1Policy::young_target`]).
    fn size_eden(&mut self) {
        let old = self.old_used_bytes;
        let heap = self.params.heap_bytes;
        let Some(evacuation) = self.evacuation.as_mut() else {
            return;
        };
        let region = evacuation.params.region_bytes;
        let regions = (heap / region) as usize;
        let old_regions = old.div_ceil(region) as usize;
        evacuation.free_regions =
            regions.saturating_sub(old_regions + evacuation.survivor_regions());
        self.size_eden_in_use(0);
    }

    /// Sizes eden with `in_use` regions of it already taken: after a pause
    /// (none) or on a revision in the mutator phase.
    fn size_eden_in_use(&mut self, in_use: usize) {
        let heap = self.params.heap_bytes;
        let Some(evacuation) = self.evacuation.as_mut() else {
            return;
        };
        let p = evacuation.params;
        let bounds = p.young_bounds(heap);
        let eden_regions = evacuation.policy.young_target(
            &bounds,
            evacuation.survivor_regions(),
            evacuation.survivor_used,
            in_use,
            evacuation.free_regions,
        );
        evacuation.eden_target = eden_regions as u64 * p.region_bytes;
    }

    /// G1's sampling of the young regions' cards in the mutator phase
    /// ([`G1Policy::revise`]): at each 300-ms tick since the last pause
    /// (taken at the first allocation after it), eden is sized again when
    /// the cards have outgrown G1's prediction.
    fn sample_cards(&mut self, now: SimTime) {
        let eden_used = self.eden_used_bytes;
        let Some(evacuation) = self.evacuation.as_mut() else {
            return;
        };
        if now < evacuation.next_sample {
            return;
        }
        evacuation.next_sample = now + RS_SAMPLE_INTERVAL;
        let cards = evacuation.card_scan_new_ns / evacuation.params.card_ns_per_card;
        if evacuation.policy.revise(cards) {
            let in_use = eden_used.div_ceil(evacuation.params.region_bytes) as usize;
            self.size_eden_in_use(in_use);
        }
    }
}

/// A lognormal factor of mean one and spread `sigma` from a standard
/// normal.
fn mean_one_lognormal(sigma: f64, normal: f64) -> f64 {
    (sigma * normal - sigma * sigma / 2.0).exp()
}

/// A lognormal draw with the given median and p99 from a standard normal.
fn lognormal(median: SimDuration, p99: SimDuration, normal: f64) -> SimDuration {
    let median = median.as_secs_f64();
    let sigma = (p99.as_secs_f64() / median).ln() / NORMAL_P99_Z;
    SimDuration::from_secs_f64(median * (sigma * normal).exp())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use super::*;

    const MS: SimDuration = SimDuration::from_millis(1);

    #[test]
    fn parallel_gc_threads_follow_hotspots_rule() {
        // Every processor up to 8, then 5 of each 8 more: an i3.4xlarge's
        // 16 vCPUs give 13, the real node's one core 1.
        assert_eq!(parallel_gc_threads(1), 1);
        assert_eq!(parallel_gc_threads(8), 8);
        assert_eq!(parallel_gc_threads(16), 13);
        assert_eq!(parallel_gc_threads(72), 48);
    }

    fn ms(millis: u64) -> SimDuration {
        SimDuration::from_millis(millis)
    }

    fn at_ms(millis: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(millis)
    }

    fn threads(read: u32, mutation: u32) -> StageThreads {
        StageThreads {
            native_transport: 8,
            read,
            mutation,
            compaction: 2,
            memtable_flush: 2,
            event_loop: 1,
        }
    }

    /// 5.0's G1 on a 6-GiB heap with no spread about the pause line and
    /// no full collections: pauses are exactly the line.
    fn evacuating_node() -> (JvmNode, G1Params) {
        let mut params = G1Params::cassandra_5_0(6 << 30);
        params.full_probability = 0.0;
        if let Some(evacuation) = params.evacuation.as_mut() {
            evacuation.copy_sigma = 0.0;
            evacuation.card_sigma = 0.0;
        }
        (
            node(1, threads(2, 2), SimDuration::ZERO, GcModel::G1(params)),
            params,
        )
    }

    fn eden_target(node: &JvmNode) -> u64 {
        node.g1.as_ref().unwrap().eden_limit()
    }

    /// Marks `bytes` of eden long-lived, as [`JvmNode::retain`] does
    /// without allocating them.
    fn keep(node: &mut JvmNode, bytes: u64) {
        let evacuation = node.g1.as_mut().unwrap().evacuation.as_mut().unwrap();
        evacuation.retained_new += bytes;
    }

    /// Fills the node's eden once (one collection) at `at`, retaining
    /// `retained` of it, a region at a time (G1 may revise eden as it
    /// fills); returns the pause.
    fn collect_once(node: &mut JvmNode, at: SimTime, retained: u64) -> GcPause {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let before = *node.gc_stats();
        keep(node, retained);
        let region = node
            .g1
            .as_ref()
            .unwrap()
            .evacuation
            .as_ref()
            .unwrap()
            .params
            .region_bytes;
        while node.gc_stats().all().count == before.all().count {
            node.allocate(at, region, &mut rng);
        }
        let after = node.gc_stats();
        assert_eq!(after.all().count, before.all().count + 1, "one collection");
        // The eden it found full is counted, as a GC log lists it.
        assert_eq!(after.eden_collections, before.eden_collections + 1);
        let collected = after.eden_collected_bytes - before.eden_collected_bytes;
        assert!(collected >= region && collected.is_multiple_of(region));
        node.last_pause().unwrap()
    }

    /// A young pause lasts its other part plus the rows it copies at
    /// their price: retained bytes are copied into survivors at the first
    /// pause after them and promoted at the second, then no more; released
    /// bytes are not copied.
    #[test]
    fn a_young_pause_copies_what_is_retained_twice_then_never() {
        let (mut node, params) = evacuating_node();
        let evacuation = params.evacuation.unwrap();
        let line = |copied: u64| {
            evacuation.pause_other.as_secs_f64()
                + copied as f64 * evacuation.row_copy_ns_per_byte * 1e-9
        };
        let close = |pause: GcPause, copied: u64| {
            assert_eq!(pause.kind, PauseKind::Young);
            let expected = line(copied);
            assert!(
                (pause.duration.as_secs_f64() - expected).abs() < 1e-6,
                "{:?} against {expected} s",
                pause.duration
            );
        };
        const MIB: u64 = 1 << 20;
        close(collect_once(&mut node, at_ms(1_000), 64 * MIB), 64 * MIB);
        let old = node.g1.as_ref().unwrap().old_used_bytes;
        // The 64 MiB are promoted now, with nothing new.
        close(collect_once(&mut node, at_ms(10_000), 0), 64 * MIB);
        assert_eq!(node.g1.as_ref().unwrap().old_used_bytes, old + 64 * MIB);
        // In the old generation they cost young pauses nothing.
        close(collect_once(&mut node, at_ms(20_000), 0), 0);
        // A flush releases rows before their first pause: nothing copied.
        keep(&mut node, 32 * MIB);
        node.release(32 * MIB + 64 * MIB);
        close(collect_once(&mut node, at_ms(30_000), 0), 0);
    }

    /// A read's transient bytes are copied once, at their own price, and
    /// never promoted; the operations' cards are scanned at the next pause
    /// and not again; a device page leaves nothing for the pause.
    #[test]
    fn a_young_pause_copies_reads_transient_bytes_once_and_scans_cards() {
        let (mut node, params) = evacuating_node();
        let evacuation = params.evacuation.unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let (reads, writes) = (1_000u64, 500u64);
        for _ in 0..reads {
            node.allocate_step(at_ms(1), AllocationStep::Read, &mut rng);
            node.allocate_step(at_ms(1), AllocationStep::DevicePage, &mut rng);
        }
        for _ in 0..writes {
            node.allocate_step(at_ms(1), AllocationStep::Write, &mut rng);
        }
        assert_eq!(node.gc_stats().all().count, 0, "eden is far from full");
        let transient = reads * evacuation.read.transient_bytes;
        let cards = reads as f64 * evacuation.read.card_scan_ns
            + writes as f64 * evacuation.write.card_scan_ns;
        let expected = evacuation.pause_other.as_secs_f64()
            + (transient as f64 * evacuation.transient_copy_ns_per_byte + cards) * 1e-9;
        let pause = collect_once(&mut node, at_ms(1_000), 0);
        assert!(
            (pause.duration.as_secs_f64() - expected).abs() < 1e-6,
            "{:?} against {expected} s",
            pause.duration
        );
        // The next pause finds them dead and their cards scanned.
        let pause = collect_once(&mut node, at_ms(2_000), 0);
        assert_eq!(pause.duration, evacuation.pause_other);
        assert_eq!(
            node.g1
                .as_ref()
                .unwrap()
                .evacuation
                .as_ref()
                .unwrap()
                .retained_old,
            0,
            "nothing transient is promoted"
        );
    }

    /// Writes leave cards and rows: G1 sizes eden so that the pauses it
    /// predicts meet the goal, and once its predictions have settled the
    /// pauses it takes stay under the goal, at a smaller eden than reads
    /// that leave only a few transient bytes get.
    #[test]
    fn writes_cards_and_rows_keep_eden_small_and_pauses_under_the_goal() {
        let steady_eden = |step: AllocationStep| {
            let (mut node, params) = evacuating_node();
            let evacuation = params.evacuation.unwrap();
            let mut rng = Pcg64Mcg::seed_from_u64(5);
            node.allocation = AllocationParams::cassandra_5_0();
            let mut longest = SimDuration::ZERO;
            for op in 0..1_000_000u64 {
                if step == AllocationStep::Write {
                    node.retain(
                        at_ms(op / 1_000),
                        CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE,
                        &mut rng,
                    );
                }
                let before = node.gc_stats().all().count;
                node.allocate_step(at_ms(op / 1_000), step, &mut rng);
                if node.gc_stats().all().count > before && before >= 5 {
                    longest = longest.max(node.last_pause().unwrap().duration);
                }
            }
            assert!(node.gc_stats().all().count > 8, "{step:?} collects");
            assert!(
                longest <= evacuation.pause_goal,
                "{step:?}: {longest:?} over the goal"
            );
            eden_target(&node)
        };
        let (writes, reads) = (
            steady_eden(AllocationStep::Write),
            steady_eden(AllocationStep::Read),
        );
        assert!(writes * 2 < reads, "writes {writes} B, reads {reads} B");
    }

    /// Eden is sized to the pause goal: it shrinks at once after a pause
    /// that found much alive, never below G1's smallest young generation
    /// (less the survivors), and grows back pause by pause once nothing
    /// survives, up to the largest young generation.
    #[test]
    fn eden_shrinks_after_a_costly_pause_and_grows_back_by_steps() {
        let (mut node, params) = evacuating_node();
        let evacuation = params.evacuation.unwrap();
        let heap = params.heap_bytes as f64;
        let region = evacuation.region_bytes;
        let smallest =
            (heap * evacuation.min_young_fraction / region as f64).floor() as u64 * region;
        let first = eden_target(&node);
        assert!(first >= smallest && first.is_multiple_of(region));
        // A fifth of eden alive: the next eden is at its smallest.
        let retained = first / 5;
        collect_once(&mut node, at_ms(1_000), retained);
        let shrunk = eden_target(&node);
        assert!(shrunk < first, "{shrunk} after {first}");
        let survivor_regions = retained.div_ceil(region);
        assert!(shrunk + survivor_regions * region >= smallest);
        // Nothing alive any more: eden grows at each pause, by at most the
        // predictor's decay, up to the largest young generation.
        let largest = (heap * evacuation.max_young_fraction) as u64;
        let mut previous = shrunk;
        let mut grew = 0;
        for second in 2..40 {
            collect_once(&mut node, at_ms(second * 1_000), 0);
            let eden = eden_target(&node);
            assert!(
                eden >= previous && eden <= largest,
                "{eden} after {previous}"
            );
            if eden > previous {
                grew += 1;
            }
            previous = eden;
        }
        assert!(
            grew >= 3,
            "eden grows over several pauses, not at once ({grew})"
        );
        assert!(previous > first, "it ends larger than it started");
    }

    /// A node started from another's [`G1History`] predicts what that one
    /// had learnt: the same eden and old generation as the node it came
    /// from (its memtable rows flushed), a larger eden than a new JVM's
    /// after a load that left nothing alive; a history that cannot be is
    /// refused by name.
    #[test]
    fn a_node_started_from_a_history_sizes_eden_from_what_it_learnt() {
        let (mut reads, params) = evacuating_node();
        let fresh = eden_target(&reads);
        for second in 1..20 {
            collect_once(&mut reads, at_ms(second * 1_000), 0);
        }
        let history = reads.g1_history().unwrap();
        assert!(
            history.eden_survival.iter().all(|seq| seq.average() < 0.01),
            "{history:?}"
        );
        assert_eq!(history.check(&params), Ok(()));
        let mut config = JvmConfig::cassandra_5_0(1, 1, params.heap_bytes);
        config.gc = GcModel::G1(params);
        config.g1_start = Some(history.clone());
        let started = JvmNode::new(config);
        assert_eq!(
            started.g1_history(),
            Some(history.clone()),
            "it starts where the other ended"
        );
        assert_eq!(eden_target(&started), eden_target(&reads));
        assert!(
            eden_target(&started) > 2 * fresh,
            "{} against {fresh}",
            eden_target(&started)
        );
        // Carried rows are garbage in the old generation: none is copied.
        let mut started = started;
        let pause = collect_once(&mut started, at_ms(1_000), 0);
        let other = params.evacuation.unwrap().pause_other;
        assert_eq!(pause.duration, other);

        let refused = |change: &dyn Fn(&mut G1History)| {
            let mut bad = history.clone();
            change(&mut bad);
            bad.check(&params).unwrap_err()
        };
        assert_eq!(
            refused(&|h| h.eden_survival[1] = Seq::learnt(1.5, 0.0, 3)).field,
            "eden_survival[1]"
        );
        assert_eq!(
            refused(&|h| h.survivor_survival.clear()).field,
            "survivor_survival"
        );
        assert_eq!(
            refused(&|h| h.analytics.copy_ns_per_byte = Seq::learnt(f64::NAN, 0.0, 2)).field,
            "copy_ns_per_byte"
        );
        assert_eq!(
            refused(&|h| h.analytics.rs_cards = Seq::learnt(-1.0, 0.0, 2)).field,
            "rs_cards"
        );
        assert_eq!(
            refused(&|h| h.analytics.scan_ns_per_card = Seq::learnt(1.0, f64::INFINITY, 5)).field,
            "scan_ns_per_card"
        );
        assert_eq!(refused(&|h| h.old_used_bytes = 0).field, "old");
        assert_eq!(
            refused(&|h| h.old_used_bytes = params.heap_bytes).field,
            "old"
        );
        assert!(refused(&|h| h.eden_survival[0] = Seq::learnt(1.5, 0.0, 3))
            .to_string()
            .starts_with("eden_survival[0]: average 1.5"));
        let fixed = G1Params::cassandra_3_11_heap_48g();
        assert!(history
            .check(&fixed)
            .unwrap_err()
            .reason
            .contains("fixed eden"));
    }

    fn node(cores: u32, threads: StageThreads, handoff_cost: SimDuration, gc: GcModel) -> JvmNode {
        JvmNode::new(JvmConfig {
            cores,
            threads,
            handoff_cost,
            queued_tasks_pay_handoff: true,
            gc,
            allocation: AllocationParams::per_step(ALLOCATION_PER_OPERATION_BYTES),
            inline_continuations: false,
            sep: None,
            exact_wakeups: false,
            g1_start: None,
            event_loop_front: false,
            event_loop_work: SimDuration::ZERO,
            event_loop_wake: SimDuration::from_micros(10),
        })
    }

    /// One core, 10-us hand-offs taken only by idle threads, exact
    /// wake-ups, no collector: a node to watch the event loop on.
    fn loop_node(front: bool, threads: StageThreads) -> JvmNode {
        JvmNode::new(loop_config(front, threads))
    }

    /// [`loop_node`]'s configuration.
    fn loop_config(front: bool, threads: StageThreads) -> JvmConfig {
        JvmConfig {
            cores: 1,
            threads,
            handoff_cost: SimDuration::from_micros(10),
            queued_tasks_pay_handoff: false,
            gc: GcModel::Disabled,
            allocation: AllocationParams::per_step(0),
            inline_continuations: false,
            sep: None,
            exact_wakeups: true,
            g1_start: None,
            event_loop_front: front,
            event_loop_work: SimDuration::ZERO,
            event_loop_wake: SimDuration::from_micros(10),
        }
    }

    /// With work of its own per request ([`JvmConfig::event_loop_work`]),
    /// the loop is one runnable thread sharing the core: a burst of
    /// requests reaches the request stage only as fast as the loop's
    /// share lets it read them, so the stage runs about its task's work
    /// over the loop's at once (here 20 us over 5: ~4), not every request
    /// up to its thread limit; work is conserved and each stage's CPU is
    /// what it ran.
    #[test]
    fn an_event_loop_with_work_meters_requests_into_their_stage() {
        let run = |work_us: u64| {
            let mut node = JvmNode::new(JvmConfig {
                event_loop_work: SimDuration::from_micros(work_us),
                ..loop_config(true, threads(2, 32))
            });
            for tag in 1..=100 {
                node.submit_from_client(
                    SimTime::ZERO,
                    Stage::Mutation,
                    tag,
                    SimDuration::from_micros(20),
                    SimDuration::ZERO,
                );
            }
            let (mut finished, mut peak, mut last) = (Vec::new(), 0, SimTime::ZERO);
            while let Some(at) = node.next_completion() {
                node.complete(at, &mut finished);
                peak = peak.max(node.active(Stage::Mutation));
                last = at;
            }
            assert_eq!(finished.len(), 100);
            let us = |d: SimDuration| d.as_nanos() / 1000;
            (
                peak,
                us(last.saturating_since(SimTime::ZERO)),
                us(node.stage_cpu(Stage::EventLoop)),
                us(node.stage_cpu(Stage::Mutation)),
            )
        };
        let (peak, span, looped, mutation) = run(5);
        assert!((3..=6).contains(&peak), "{peak} requests at once");
        // The loop's one wake and 100 x 5 us; the stage's first hand-off
        // (every later task finds a thread just freed or queues) and
        // 100 x 20 us: all of it on the one core, back to back.
        assert_eq!(looped, 10 + 500);
        assert_eq!(span, looped + mutation);
        let (peak, ..) = run(0);
        assert_eq!(peak, 32, "a loop without work hands the burst on at once");
    }

    /// A shared-pool task that arrives while a worker spins is taken at
    /// its next look without a hand-off; one arriving after the workers
    /// parked pays it. The event loop is no shared-pool thread.
    /// Threads sum by their pool: the number the JVM or Cassandra appends
    /// is not part of it, a thread's CPU counts from the listing before
    /// (or whole if it is new), and a pool that spent nothing is left out.
    #[test]
    fn threads_sum_by_their_pool_from_one_listing_to_the_next() {
        assert_eq!(thread_pool_of("CompactionExecu"), "CompactionExecu");
        assert_eq!(thread_pool_of("GC Thread#0"), "GC Thread");
        assert_eq!(thread_pool_of("MutationStage-12"), "MutationStage");
        assert_eq!(thread_pool_of("CompactionExecutor:3"), "CompactionExecutor");
        assert_eq!(thread_pool_of("42"), "42");
        assert!(is_compaction_pool("CompactionExecu") && !is_compaction_pool("GC Thread"));
        assert!(is_compiler_pool(thread_pool_of("C2 CompilerThre")));
        assert!(is_compiler_pool(thread_pool_of("C1 CompilerThread3")));
        assert!(!is_compiler_pool("CompactionExecu") && !is_compiler_pool("GC Thread"));
        assert!(is_event_loop_pool(thread_pool_of("epollEventLoopG")));
        assert!(is_event_loop_pool(Stage::EventLoop.name()));
        assert!(!is_event_loop_pool("Native-Transpor"));
        let at = |threads: &[(u64, &str, f64)]| -> BTreeMap<u64, (String, f64)> {
            threads
                .iter()
                .map(|(tid, name, s)| (*tid, (name.to_string(), *s)))
                .collect()
        };
        let before = at(&[
            (1, "GC Thread#0", 1.0),
            (2, "GC Thread#1", 2.0),
            (3, "main", 5.0),
        ]);
        let after = at(&[
            (1, "GC Thread#0", 1.5),
            (2, "GC Thread#1", 3.0),
            (3, "main", 5.0),
            (4, "CompactionExecu", 0.25),
        ]);
        let spent = cpu_by_pool(&before, &after);
        assert_eq!(spent.get("GC Thread"), Some(&1.5));
        assert_eq!(spent.get("CompactionExecu"), Some(&0.25));
        assert_eq!(
            spent.get("main"),
            None,
            "a thread that spent nothing is left out"
        );
    }

    fn sep_node(cores: u32) -> JvmNode {
        let mut node = JvmNode::new(JvmConfig {
            cores,
            threads: threads(2, 2),
            handoff_cost: SimDuration::from_micros(100),
            queued_tasks_pay_handoff: false,
            gc: GcModel::Disabled,
            allocation: AllocationParams::per_step(0),
            inline_continuations: true,
            sep: Some(SepParams {
                run_cost: SimDuration::from_micros(10),
                park_overshoot: SimDuration::from_micros(84),
                timer_slack: SimDuration::from_micros(50),
            }),
            exact_wakeups: true,
            g1_start: None,
            event_loop_front: false,
            event_loop_work: SimDuration::ZERO,
            event_loop_wake: SimDuration::from_micros(10),
        });
        node.seed_workers(11);
        node
    }

    /// On a quiet node a request stage's task unparks a worker to spin,
    /// which takes it at its first look: one run, whose price is the
    /// task's hand-off (not [`JvmConfig::handoff_cost`]). A task that
    /// comes while the worker spins waits for its next look, with no
    /// wake-up of its own; and once nothing comes for 10 ms the worker
    /// stops spinning, having paid a run for each look.
    #[test]
    fn a_shared_pool_task_is_taken_at_a_look_and_each_run_costs_its_price() {
        let mut node = sep_node(1);
        let demand = SimDuration::from_micros(50);
        let mut done = BTreeMap::new();
        node.submit(at_ms(20), Stage::Mutation, 1, demand, SimDuration::ZERO);
        assert_eq!(node.spinners(), 1);
        drain(&mut node, at_ms(21), &mut done);
        // Woken (its wake-up drawn), one look of 10 us, then the task.
        let first = done[&1].saturating_since(at_ms(20));
        assert!(first >= SimDuration::from_micros(60) && first < SimDuration::from_micros(260));
        assert_eq!(node.stage_cpu(Stage::Mutation), demand);
        assert_eq!(node.spinners(), 1, "the worker spins after its task");
        // Its look for the task, then one a park for the rest of the ms.
        let runs = node.shared_pool_runs();
        assert!((8..=11).contains(&runs), "{runs} runs");
        // 1 ms after, it still spins: the next task waits for a look.
        drain(&mut node, at_ms(22), &mut done);
        node.submit(at_ms(22), Stage::Mutation, 2, demand, SimDuration::ZERO);
        drain(&mut node, at_ms(23), &mut done);
        let second = done[&2].saturating_since(at_ms(22));
        assert!(
            second >= demand && second <= SimDuration::from_micros(154),
            "{second:?}: at most a park (10 us asked, 84 us late) and a look, then the task"
        );
        // Quiet again: it looks about every 94-104 us, then stops.
        drain(&mut node, at_ms(60), &mut done);
        assert_eq!(node.spinners(), 0);
        assert_eq!(node.next_completion(), None);
        let runs = node.shared_pool_runs();
        // From 20 ms until 10 ms after the second task: ~12 ms of looks
        // 104 us apart (10 asked, 84 late, 10 looking).
        assert!(
            (105..=130).contains(&runs),
            "{runs} runs in ~12 ms of spinning"
        );
        assert_eq!(node.spin_cpu(), SimDuration::from_micros(10 * runs));
        assert_eq!(node.cpu_busy(), node.spin_cpu() + demand + demand);
        assert!(!Stage::EventLoop.is_shared_pool() && !Stage::Compaction.is_shared_pool());
        assert!(Stage::Read.is_shared_pool());
    }

    /// Runs `node` until a task finishes; returns when, and clears `finished`.
    fn until_a_task_finishes(node: &mut JvmNode, finished: &mut Vec<u64>) -> (SimTime, Vec<u64>) {
        loop {
            let at = node.next_completion().expect("work to finish");
            node.complete(at, finished);
            if !finished.is_empty() {
                return (at, std::mem::take(finished));
            }
        }
    }

    /// A shared-pool worker that finishes a read's task goes straight on
    /// to its continuation at the same instant (no run, no spin); one
    /// whose read waits for I/O blocks in it without spinning, and the
    /// continuation after the I/O wakes it (a run, priced); one handed
    /// nothing at its instant spins.
    #[test]
    fn a_read_worker_goes_on_or_blocks_in_its_io_and_spins_only_when_done() {
        let mut node = sep_node(1);
        let demand = SimDuration::from_micros(50);
        let mut finished = Vec::new();
        node.submit(at_ms(20), Stage::Read, 1, demand, SimDuration::ZERO);
        let (t1, done) = until_a_task_finishes(&mut node, &mut finished);
        assert_eq!(done, [1]);
        assert_eq!(node.spinners(), 0, "the spinner took the task");
        assert_eq!(
            node.next_completion(),
            Some(t1),
            "its worker waits for the driver"
        );
        let runs = node.shared_pool_runs();
        node.submit_continuation(t1, Stage::Read, 2, demand);
        let (t2, done) = until_a_task_finishes(&mut node, &mut finished);
        assert_eq!((done, t2), (vec![2], t1 + demand));
        assert!(node.worker_blocks_on_io(t2));
        assert_eq!(node.next_completion(), None, "blocked, not spinning");
        let io_done = t2 + MS;
        node.submit_continuation(io_done, Stage::Read, 3, demand);
        let (t3, done) = until_a_task_finishes(&mut node, &mut finished);
        assert_eq!(
            (done, t3),
            (vec![3], io_done + demand + SimDuration::from_micros(10))
        );
        assert_eq!(node.shared_pool_runs(), runs + 1, "the I/O's wake-up");
        assert_eq!(node.spinners(), 0);
        node.complete(t3, &mut finished);
        assert_eq!(node.spinners(), 1, "handed nothing, it spins");
        assert_eq!(
            node.stage_cpu(Stage::Read),
            SimDuration::from_micros(3 * 50 + 10)
        );
    }

    /// Tasks that come faster than one worker serves them: a worker about
    /// to run one, seeing no spinner and more queued, unparks another
    /// (`maybeSchedule`), so both threads of the stage run; none is left
    /// queued, and afterwards the workers spin until the stop check
    /// stops them all.
    #[test]
    fn a_worker_seeing_more_tasks_and_no_spinner_unparks_another() {
        let mut node = sep_node(2);
        let demand = SimDuration::from_millis(1);
        for tag in 1..=4 {
            node.submit(at_ms(20), Stage::Mutation, tag, demand, SimDuration::ZERO);
        }
        let mut done = BTreeMap::new();
        drain(&mut node, at_ms(22), &mut done);
        assert_eq!(node.active(Stage::Mutation), 2, "both threads run");
        drain(&mut node, at_ms(100), &mut done);
        assert_eq!(done.len(), 4);
        assert!(done[&4] < at_ms(23), "two at a time: {:?}", done[&4]);
        assert_eq!(node.queued(Stage::Mutation), 0);
        assert_eq!(node.spinners(), 0);
        assert_eq!(
            node.stage_cpu(Stage::Mutation),
            SimDuration::from_micros(4_000 + 10)
        );
    }

    /// A client request's first task passes through the event loop
    /// ([`JvmConfig::event_loop_front`]): the loop pays a hand-off to
    /// wake for the first of a burst, requests queued behind it pay none
    /// there, and each then starts on its own stage as any task does,
    /// finishing once; without the loop in front it is a plain submit.
    #[test]
    fn the_event_loop_wakes_once_for_requests_that_queue_for_it() {
        let run = |front: bool, requests: u64| {
            let mut node = loop_node(front, threads(2, 8));
            for tag in 1..=requests {
                node.submit_from_client(
                    SimTime::ZERO,
                    Stage::Mutation,
                    tag,
                    SimDuration::from_micros(50),
                    SimDuration::ZERO,
                );
            }
            let (mut finished, mut all) = (Vec::new(), Vec::new());
            let mut last = SimTime::ZERO;
            while let Some(at) = node.next_completion() {
                node.complete(at, &mut finished);
                all.append(&mut finished);
                last = at;
            }
            all.sort_unstable();
            assert_eq!(
                all,
                (1..=requests).collect::<Vec<_>>(),
                "each finishes once"
            );
            assert_eq!(node.tasks_completed(), requests);
            (
                node.cpu_busy().as_nanos() / 1000,
                last.saturating_since(SimTime::ZERO).as_nanos() / 1000,
            )
        };
        // One request: the loop's wake, then the stage's hand-off and work.
        assert_eq!(run(true, 1), (70, 70));
        assert_eq!(run(false, 1), (60, 60));
        // Five at once: the loop wakes once; each still takes an idle
        // mutation thread (eight), paying its hand-off.
        assert_eq!(run(true, 5).0, 10 + 5 * 60);
        assert_eq!(run(false, 5).0, 5 * 60);
    }

    /// A response flush wakes the loop if it is parked, costs nothing
    /// queued behind other loop work, finishes no task of the driver's,
    /// and is nothing without the loop in front.
    #[test]
    fn a_response_flush_wakes_a_parked_event_loop_and_reports_nothing() {
        let busy = |front: bool, flushes: u32| {
            let mut node = loop_node(front, threads(2, 2));
            for _ in 0..flushes {
                node.flush_response(SimTime::ZERO);
            }
            let mut finished = Vec::new();
            while let Some(at) = node.next_completion() {
                node.complete(at, &mut finished);
            }
            assert!(finished.is_empty(), "{finished:?}");
            assert_eq!(node.tasks_completed(), 0);
            node.cpu_busy().as_nanos() / 1000
        };
        assert_eq!(busy(true, 1), 10);
        assert_eq!(busy(true, 4), 10, "three queued behind the first");
        assert_eq!(busy(false, 4), 0);
    }

    /// With exact wake-ups a woken thread takes no core until it runs: a
    /// task whose thread wakes 0.5 ms late leaves the core to the other
    /// for that time; without, the wake-up is service shared from the
    /// start, and both finish later.
    #[test]
    fn an_exact_wake_up_holds_its_thread_and_takes_no_core_until_it_runs() {
        let finish = |exact: bool| {
            let mut node = JvmNode::new(JvmConfig {
                cores: 1,
                threads: threads(2, 2),
                handoff_cost: SimDuration::ZERO,
                queued_tasks_pay_handoff: true,
                gc: GcModel::Disabled,
                allocation: AllocationParams::per_step(0),
                inline_continuations: false,
                sep: None,
                exact_wakeups: exact,
                g1_start: None,
                event_loop_front: false,
                event_loop_work: SimDuration::ZERO,
                event_loop_wake: SimDuration::from_micros(10),
            });
            node.submit(SimTime::ZERO, Stage::Mutation, 1, MS, SimDuration::ZERO);
            node.submit(
                SimTime::ZERO,
                Stage::Mutation,
                2,
                MS,
                SimDuration::from_micros(500),
            );
            assert_eq!(node.active(Stage::Mutation), 2, "the waking thread is held");
            let mut done = BTreeMap::new();
            let mut finished = Vec::new();
            while let Some(at) = node.next_completion() {
                node.complete(at, &mut finished);
                for tag in finished.drain(..) {
                    done.insert(tag, at);
                }
            }
            let micros = |tag: u64| done[&tag].saturating_since(SimTime::ZERO).as_nanos() / 1000;
            (micros(1), micros(2), node.cpu_busy().as_nanos() / 1000)
        };
        // Exact: 1 alone for 0.5 ms, then both at half speed until 1 is
        // done at 1.5 ms, then 2 alone; the core was busy 2 ms.
        assert_eq!(finish(true), (1500, 2000, 2000));
        // Shared: 2's wake-up is 0.5 ms of service from the start.
        assert_eq!(finish(false), (2000, 2500, 2000));
    }

    /// A stage of one thread on one core, two 1-ms tasks with a 0.1-ms
    /// hand-off: the first starts on the idle thread and pays it; the
    /// second waits in the FIFO and, taken by the thread that finished the
    /// first, pays it only where queued tasks pay the hand-off (3.11), not
    /// where a busy worker goes straight on (5.0).
    #[test]
    fn a_queued_task_taken_by_a_busy_thread_pays_no_handoff_unless_the_preset_says() {
        let finish = |queued_tasks_pay_handoff: bool| {
            let mut node = JvmNode::new(JvmConfig {
                cores: 1,
                threads: threads(1, 1),
                handoff_cost: SimDuration::from_micros(100),
                queued_tasks_pay_handoff,
                gc: GcModel::Disabled,
                allocation: AllocationParams::per_step(0),
                inline_continuations: false,
                sep: None,
                exact_wakeups: true,
                g1_start: None,
                event_loop_front: false,
                event_loop_work: SimDuration::ZERO,
                event_loop_wake: SimDuration::from_micros(10),
            });
            node.submit(SimTime::ZERO, Stage::Mutation, 1, MS, SimDuration::ZERO);
            node.submit(SimTime::ZERO, Stage::Mutation, 2, MS, SimDuration::ZERO);
            let mut done = BTreeMap::new();
            drain(&mut node, at_ms(10), &mut done);
            let micros = |tag: u64| done[&tag].saturating_since(SimTime::ZERO).as_nanos() / 1000;
            (micros(1), micros(2), node.cpu_busy().as_nanos() / 1000)
        };
        assert_eq!(finish(true), (1100, 2200, 2200));
        assert_eq!(finish(false), (1100, 2100, 2100));
    }

    /// Completes tasks as a driver would, up to and including `until`;
    /// records each tag's completion time.
    fn drain(node: &mut JvmNode, until: SimTime, done: &mut BTreeMap<u64, SimTime>) {
        let mut finished = Vec::new();
        while let Some(at) = node.next_completion() {
            if at > until {
                break;
            }
            node.complete(at, &mut finished);
            // (A shared pool's spinners also wake to look.)
            assert!(
                !finished.is_empty() || node.sep.is_some() || !node.waking.is_empty(),
                "a wake-up at next_completion finishes a task"
            );
            for tag in finished.drain(..) {
                assert!(done.insert(tag, at).is_none(), "tag {tag} finished twice");
            }
        }
    }

    /// What a test does to the node at the pause instant.
    type Stop<'a> = &'a dyn Fn(&mut JvmNode, SimTime);

    /// Ten threads on four cores (two read tasks queued), paused at 7 ms
    /// by `stop` (nothing if `None`); returns each tag's completion time.
    fn mixed_load(gc: GcModel, stop: Option<Stop<'_>>) -> BTreeMap<u64, SimTime> {
        let mut node = node(4, threads(4, 6), HANDOFF_COST, gc);
        for k in 0..6 {
            node.submit(
                SimTime::ZERO,
                Stage::Mutation,
                k,
                ms(1 + k),
                SimDuration::ZERO,
            );
            node.submit(
                SimTime::ZERO,
                Stage::Read,
                10 + k,
                ms(2 + k),
                SimDuration::ZERO,
            );
        }
        assert_eq!(node.queued(Stage::Read), 2);
        let mut done = BTreeMap::new();
        let pause_at = at_ms(7);
        drain(
            &mut node,
            SimTime::from_nanos(pause_at.as_nanos() - 1),
            &mut done,
        );
        if let Some(stop) = stop {
            stop(&mut node, pause_at);
        }
        drain(&mut node, SimTime::MAX, &mut done);
        assert_eq!(done.len(), 12);
        done
    }

    /// Checks that tasks done before 7 ms kept their time and every other
    /// task finished exactly `pause` later.
    fn assert_shifted(
        reference: &BTreeMap<u64, SimTime>,
        paused: &BTreeMap<u64, SimTime>,
        pause: SimDuration,
    ) {
        let (mut before, mut after) = (0, 0);
        for (tag, &at) in reference {
            if at < at_ms(7) {
                before += 1;
                assert_eq!(paused[tag], at, "tag {tag} finished before the pause");
            } else {
                after += 1;
                assert_eq!(paused[tag], at + pause, "tag {tag} delayed by the pause");
            }
        }
        assert!(before >= 1 && after >= 6, "{before} before, {after} after");
    }

    #[test]
    fn a_gc_pause_delays_every_in_flight_task_by_the_pause_length() {
        let reference = mixed_load(GcModel::Disabled, None);
        let pause = SimDuration::from_nanos(137_000_003);
        let stop = |node: &mut JvmNode, now: SimTime| {
            node.pause(now, pause);
            assert!(node.is_paused(now));
            assert!(node.is_paused(now + (pause - SimDuration::from_nanos(1))));
            assert!(!node.is_paused(now + pause));
            assert_eq!(node.paused_until(now), Some(now + pause));
        };
        let paused = mixed_load(GcModel::Disabled, Some(&stop));
        assert_shifted(&reference, &paused, pause);
    }

    #[test]
    fn an_eden_fill_stops_the_node_for_the_drawn_young_pause() {
        let params = G1Params::cassandra_3_11_heap_48g();
        let reference = mixed_load(GcModel::G1(params), None);
        let drawn = std::cell::Cell::new(SimDuration::ZERO);
        let stop = |node: &mut JvmNode, now: SimTime| {
            let mut rng = Pcg64Mcg::seed_from_u64(3);
            node.allocate(now, params.eden_bytes - 1, &mut rng);
            assert_eq!(node.gc_stats().all().count, 0, "eden not full yet");
            node.allocate(now, 1, &mut rng);
            let pause = node.last_pause().expect("eden filled");
            assert_eq!((pause.kind, pause.start), (PauseKind::Young, now));
            assert_eq!(node.gc_stats().young.count, 1);
            assert_eq!(node.heap_used_bytes().0, 0, "eden emptied");
            drawn.set(pause.duration);
        };
        let paused = mixed_load(GcModel::G1(params), Some(&stop));
        assert!(drawn.get() > SimDuration::ZERO && drawn.get() <= params.max_young_pause);
        assert_shifted(&reference, &paused, drawn.get());
    }

    #[test]
    fn an_idle_thread_wakes_before_it_runs_and_a_busy_one_takes_the_next_at_once() {
        let mut node = node(4, threads(1, 1), SimDuration::ZERO, GcModel::Disabled);
        let wake = SimDuration::from_micros(30);
        // The read stage's one thread is parked: its task runs from 30 us.
        assert_eq!(
            node.submit(SimTime::ZERO, Stage::Read, 1, MS, wake),
            Some(SimTime::ZERO + wake + MS)
        );
        // A second read queues behind it: no thread is free to wake, and
        // the busy one takes it as it finishes.
        node.submit(SimTime::ZERO, Stage::Read, 2, MS, wake);
        assert_eq!(node.queued(Stage::Read), 1);
        let mut finished = Vec::new();
        assert_eq!(
            node.complete(SimTime::ZERO + wake + MS, &mut finished),
            Some(SimTime::ZERO + wake + MS + MS)
        );
        assert_eq!(finished, [1]);
        node.complete(SimTime::ZERO + wake + MS + MS, &mut finished);
        assert_eq!(finished, [1, 2]);
        assert_eq!(node.next_completion(), None);
        // Waking is not computing: two 1-ms tasks used 2 ms of core.
        assert_eq!(node.cpu_busy(), ms(2));
    }

    #[test]
    fn a_waking_thread_uses_no_core_time_and_a_crash_drops_its_task() {
        let mut node = node(2, threads(2, 2), SimDuration::ZERO, GcModel::Disabled);
        node.submit(SimTime::ZERO, Stage::Read, 1, ms(10), SimDuration::ZERO);
        node.submit(SimTime::ZERO, Stage::Read, 2, ms(10), ms(4));
        let mut finished = Vec::new();
        // Netted as it accrues: the busy time never runs backwards.
        node.complete(at_ms(2), &mut finished);
        assert!(node.cpu_busy() <= ms(2));
        assert_eq!(node.complete(at_ms(10), &mut finished), Some(at_ms(14)));
        assert_eq!(finished, [1]);
        // 10 ms for task 1, 6 of task 2's 10 after its 4-ms wake-up.
        assert_eq!(node.cpu_busy(), ms(16));
        node.submit(at_ms(11), Stage::Mutation, 3, MS, ms(50));
        let mut dropped = node.drop_tasks(at_ms(12));
        dropped.sort_unstable();
        assert_eq!(
            dropped,
            [2, 3],
            "running and waking tasks go with the process"
        );
        assert_eq!((node.running(), node.next_completion()), (0, None));
    }

    #[test]
    fn tasks_submitted_during_a_pause_wait_for_its_end_and_pauses_chain() {
        let mut node = node(2, threads(4, 4), SimDuration::ZERO, GcModel::Disabled);
        node.pause(SimTime::ZERO, ms(100));
        assert_eq!(
            node.submit(at_ms(10), Stage::Read, 1, MS, SimDuration::ZERO),
            Some(at_ms(101))
        );
        assert_eq!(node.pause(at_ms(50), ms(20)), Some(at_ms(121)));
        let chained = node.last_pause().unwrap();
        assert_eq!(chained.start, at_ms(100), "starts when the first ends");
        let mut finished = Vec::new();
        node.complete(at_ms(101), &mut finished);
        assert!(finished.is_empty(), "a stale wake-up finishes nothing");
        node.complete(at_ms(121), &mut finished);
        assert_eq!(finished, [1]);
        let stats = node.gc_stats().injected;
        assert_eq!(
            (stats.count, stats.total, stats.longest),
            (2, ms(120), ms(100))
        );
        assert_eq!(node.cpu_busy(), MS, "no service while stopped");
    }

    #[test]
    fn a_stage_runs_no_more_tasks_than_its_threads() {
        let mut node = node(8, threads(4, 2), SimDuration::ZERO, GcModel::Disabled);
        for tag in 0..3 {
            node.submit(SimTime::ZERO, Stage::Mutation, tag, MS, SimDuration::ZERO);
        }
        assert_eq!(
            (node.active(Stage::Mutation), node.queued(Stage::Mutation)),
            (2, 1)
        );
        assert_eq!(node.running(), 2, "the third waits although cores are free");
        let mut finished = Vec::new();
        let next = node.complete(at_ms(1), &mut finished);
        assert_eq!(finished, [0, 1]);
        assert_eq!(
            (node.active(Stage::Mutation), node.queued(Stage::Mutation)),
            (1, 0)
        );
        assert_eq!(next, Some(at_ms(2)), "the third starts when one finishes");
        finished.clear();
        node.complete(at_ms(2), &mut finished);
        assert_eq!(finished, [2]);
        assert_eq!(node.completed(Stage::Mutation), 3);
        assert_eq!(node.next_completion(), None);
    }

    /// `busy` always-busy threads on 4 cores running 10 ms tasks for one
    /// second: every completion time, and the CPU used.
    fn always_busy(busy: u64) -> (Vec<SimTime>, SimDuration) {
        let mut node = node(4, threads(4, 64), SimDuration::ZERO, GcModel::Disabled);
        for tag in 0..busy {
            node.submit(
                SimTime::ZERO,
                Stage::Mutation,
                tag,
                ms(10),
                SimDuration::ZERO,
            );
        }
        let mut times = Vec::new();
        let mut finished = Vec::new();
        while let Some(at) = node.next_completion().filter(|&at| at <= at_ms(1000)) {
            node.complete(at, &mut finished);
            for tag in finished.drain(..) {
                times.push(at);
                node.submit(at, Stage::Mutation, tag, ms(10), SimDuration::ZERO);
            }
        }
        (times, node.cpu_busy())
    }

    #[test]
    fn threads_beyond_the_cores_share_them_equally() {
        let (four, four_busy) = always_busy(4);
        let (eight, eight_busy) = always_busy(8);
        assert_eq!(four.len(), 400);
        assert_eq!(eight.len(), 400, "the cores do the same work");
        for (round, chunk) in four.chunks(4).enumerate() {
            assert!(chunk.iter().all(|&at| at == at_ms(10 * (round as u64 + 1))));
        }
        for (round, chunk) in eight.chunks(8).enumerate() {
            assert!(
                chunk.iter().all(|&at| at == at_ms(20 * (round as u64 + 1))),
                "each of 8 threads gets half a core: round {round} {chunk:?}"
            );
        }
        assert_eq!(four_busy, SimDuration::from_secs(4));
        assert_eq!(eight_busy, SimDuration::from_secs(4));
    }

    #[test]
    fn fewer_threads_than_cores_run_at_full_speed_and_idle_costs_nothing() {
        let mut node = node(8, threads(4, 4), HANDOFF_COST, GcModel::Disabled);
        let mut finished = Vec::new();
        assert_eq!(node.next_completion(), None);
        node.complete(at_ms(5), &mut finished);
        assert!(finished.is_empty());
        assert_eq!(
            node.cpu_busy(),
            SimDuration::ZERO,
            "an idle node uses nothing"
        );
        for tag in 0..3 {
            node.submit(at_ms(5), Stage::Read, tag, ms(5), SimDuration::ZERO);
        }
        let done = at_ms(10) + HANDOFF_COST;
        assert_eq!(node.next_completion(), Some(done), "full speed");
        node.complete(done, &mut finished);
        assert_eq!(finished, [0, 1, 2]);
        assert_eq!(
            node.cpu_busy(),
            SimDuration::from_nanos((ms(5) + HANDOFF_COST).as_nanos() * 3)
        );
        // A second later: no credit and no debt for the idle time.
        node.submit(at_ms(1000), Stage::Read, 3, MS, SimDuration::ZERO);
        assert_eq!(node.next_completion(), Some(at_ms(1001) + HANDOFF_COST));
        assert_eq!(node.gc_stats().all(), PauseStats::default());
    }

    /// The pauses of a G1 node allocating 100 MiB every 100 ms (1 GiB/s)
    /// for `seconds`.
    fn pause_sequence(seed: u64, seconds: u64) -> Vec<GcPause> {
        let mut node = node(
            16,
            StageThreads::cassandra_3_11(16, 1),
            HANDOFF_COST,
            GcModel::G1(G1Params::cassandra_3_11_heap_48g()),
        );
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut pauses = Vec::new();
        for step in 0..seconds * 10 {
            let count = node.gc_stats().all().count;
            node.allocate(at_ms(100 * step), 100 << 20, &mut rng);
            if node.gc_stats().all().count > count {
                pauses.push(node.last_pause().unwrap());
            }
        }
        pauses
    }

    /// Forty nodes started mid-cycle, each from its own stream, allocating
    /// alike: their first young pauses spread over the eden interval and
    /// their first mixed ones over the mixed cycle, instead of all falling
    /// at the same instant.
    #[test]
    fn nodes_started_mid_cycle_collect_out_of_phase() {
        let params = G1Params::cassandra_3_11_heap_48g();
        let mut first_young = Vec::new();
        let mut first_mixed = Vec::new();
        for seed in 0..40 {
            let mut node = node(
                16,
                StageThreads::cassandra_3_11(16, 1),
                HANDOFF_COST,
                GcModel::G1(params),
            );
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            node.start_mid_cycle(&mut rng);
            let (eden, old) = node.heap_used_bytes();
            assert!(eden < params.eden_bytes);
            let heap = params.heap_bytes as f64;
            assert!(old as f64 >= heap * params.old_live_fraction - 1.0);
            assert!((old as f64) < heap * params.mixed_trigger_fraction + params.eden_bytes as f64);
            // 1 GiB/s in 100 MiB steps: a young pause every 4 s.
            let (mut young, mut mixed) = (None, None);
            for step in 0..10 * 600u64 {
                let count = node.gc_stats().all().count;
                node.allocate(at_ms(100 * step), 100 << 20, &mut rng);
                if node.gc_stats().all().count > count {
                    let pause = node.last_pause().unwrap();
                    match pause.kind {
                        PauseKind::Young => young = young.or(Some(pause.start)),
                        PauseKind::Mixed => mixed = mixed.or(Some(pause.start)),
                        _ => {}
                    }
                }
                if young.is_some() && mixed.is_some() {
                    break;
                }
            }
            first_young.push(young.expect("a young pause"));
            first_mixed.push(mixed.expect("a mixed pause within 10 minutes"));
        }
        for (name, times, span) in [
            ("young", &mut first_young, at_ms(3_000)),
            ("mixed", &mut first_mixed, at_ms(100_000)),
        ] {
            times.sort();
            times.dedup();
            // Allocation comes in 100 ms steps: 40 possible young times.
            assert!(
                times.len() >= 15,
                "{name}: only {} distinct first pauses",
                times.len()
            );
            let (earliest, latest) = (times[0], times[times.len() - 1]);
            assert!(
                latest - earliest > span - SimTime::ZERO,
                "{name}: {earliest:?}..{latest:?}"
            );
        }
        // A node left at the start of its cycle collects first at 8 s.
        let mut fresh = node(
            16,
            StageThreads::cassandra_3_11(16, 1),
            HANDOFF_COST,
            GcModel::G1(params),
        );
        assert_eq!(fresh.heap_used_bytes().0, 0);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for step in 0..80u64 {
            fresh.allocate(at_ms(100 * step), 100 << 20, &mut rng);
        }
        assert_eq!(
            fresh.gc_stats().all().count,
            0,
            "eden is 8 GiB: 80 x 100 MiB does not fill it"
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_pauses() {
        let first = pause_sequence(7, 1200);
        assert!(
            first.len() > 125,
            "about one pause per 8 s: {}",
            first.len()
        );
        assert!(first.iter().any(|pause| pause.kind == PauseKind::Mixed));
        assert_eq!(first, pause_sequence(7, 1200));
        assert_ne!(first, pause_sequence(8, 1200), "the seed matters");
    }

    fn percentile(sorted: &[SimDuration], fraction: f64) -> SimDuration {
        sorted[((sorted.len() - 1) as f64 * fraction).round() as usize]
    }

    #[test]
    fn pause_durations_follow_the_fitted_section_4_4_model() {
        let params = G1Params::cassandra_3_11_heap_48g();
        let mut node = node(16, threads(32, 32), HANDOFF_COST, GcModel::G1(params));
        let mut rng = Pcg64Mcg::seed_from_u64(11);
        let mut by_kind: BTreeMap<&str, Vec<SimDuration>> = BTreeMap::new();
        let mut mixed_starts = Vec::new();
        // An eden's worth every 4 s (2 GiB/s).
        for step in 0..20_000 {
            node.allocate(at_ms(4000 * step), params.eden_bytes, &mut rng);
            let pause = node.last_pause().unwrap();
            let kind = match pause.kind {
                PauseKind::Young => "young",
                PauseKind::Mixed => {
                    mixed_starts.push(pause.start);
                    "mixed"
                }
                PauseKind::Full => "full",
                PauseKind::Injected => unreachable!(),
            };
            by_kind.entry(kind).or_default().push(pause.duration);
        }
        for durations in by_kind.values_mut() {
            durations.sort();
        }
        let young = &by_kind["young"];
        let (median, p99) = (percentile(young, 0.5), percentile(young, 0.99));
        // The fitted medians, 135 + 270 ms x an occupancy of 30-45 %.
        assert!(
            (ms(210)..=ms(265)).contains(&median),
            "young median {median}"
        );
        assert_eq!(p99, params.max_young_pause, "young p99 at the cap");
        assert_eq!(
            young.last(),
            Some(&params.max_young_pause),
            "capped, and reached"
        );
        assert_eq!(node.gc_stats().young.longest, params.max_young_pause);

        let mixed = &by_kind["mixed"];
        let mixed_median = percentile(mixed, 0.5);
        assert!(
            (ms(350)..=ms(450)).contains(&mixed_median),
            "mixed median {mixed_median}"
        );
        assert!(percentile(mixed, 0.02) >= ms(200) && percentile(mixed, 0.98) <= ms(800));
        let mut gaps: Vec<SimDuration> = mixed_starts.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort();
        let gap = percentile(&gaps, 0.5);
        assert!(
            (SimDuration::from_secs(60)..=SimDuration::from_secs(300)).contains(&gap),
            "mixed every 1-5 min: {gap}"
        );
        let full = by_kind.get("full").map_or(0, Vec::len);
        assert!(full <= 5, "full GCs are rare: {full} in {} s", 4 * 20_000);
        let stats = node.gc_stats();
        assert_eq!(stats.all().count, 20_000);
        assert_eq!(stats.young.count as usize, young.len());
    }

    #[test]
    fn work_is_conserved_under_random_load_and_pauses() {
        let mut node = node(3, threads(5, 4), HANDOFF_COST, GcModel::Disabled);
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let mut submitted = BTreeMap::new();
        let mut done = BTreeMap::new();
        let mut demand_total = SimDuration::ZERO;
        let mut now = SimTime::ZERO;
        for tag in 0..2_000 {
            now += SimDuration::from_micros(rng.random_range(0..400));
            drain(&mut node, now, &mut done);
            if rng.random::<f64>() < 0.01 {
                node.pause(now, SimDuration::from_micros(rng.random_range(0..20_000)));
            }
            let stage = Stage::ALL[rng.random_range(0..STAGE_COUNT)];
            let demand = SimDuration::from_micros(rng.random_range(0..900));
            node.submit(now, stage, tag, demand, SimDuration::ZERO);
            submitted.insert(tag, (now, demand));
            demand_total = demand_total + demand + HANDOFF_COST;
        }
        drain(&mut node, SimTime::MAX, &mut done);
        assert_eq!(done.len(), submitted.len(), "every task finishes");
        for (tag, &(at, demand)) in &submitted {
            assert!(
                done[tag] >= at + demand + HANDOFF_COST,
                "tag {tag} ran too fast"
            );
        }
        let busy = node.cpu_busy().as_nanos().abs_diff(demand_total.as_nanos());
        assert!(
            busy <= 3 * 4_000,
            "CPU used = demand (rounding): off by {busy} ns"
        );
        assert_eq!(node.running(), 0);
        assert!(Stage::ALL.iter().all(|&stage| node.queued(stage) == 0));
    }

    #[test]
    fn cassandra_3_11_stage_defaults() {
        let i3_16xlarge = StageThreads::cassandra_3_11(64, 1);
        assert_eq!(
            (
                i3_16xlarge.native_transport,
                i3_16xlarge.read,
                i3_16xlarge.mutation
            ),
            (128, 32, 32)
        );
        assert_eq!((i3_16xlarge.compaction, i3_16xlarge.memtable_flush), (2, 2));
        let jbod = StageThreads::cassandra_3_11(16, 12);
        assert_eq!((jbod.compaction, jbod.memtable_flush), (8, 12));
        assert_eq!(StageThreads::cassandra_3_11(4, 6).compaction, 4);
    }
}
