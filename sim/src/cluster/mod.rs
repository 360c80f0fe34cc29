//! The cluster harness: engine shards on modelled hardware, driven by
//! cassandra-stress-like clients, on one kernel.
//!
//! What runs where:
//! - each node is an `engine::Node` with its shards, on one NVMe device (a
//!   RAID-0 of its drives) and one NIC its shards share; the node's own
//!   timers (the published cache hit rate) are events of their own;
//! - each shard is one of its node's `engine::Shard`s, with its own core (a Seastar-style
//!   reactor, `models::reactor`, whose group shares the engine's controllers
//!   move), its own I/O queue (a Seastar fair queue,
//!   `models::io_scheduler`, in front of the node's shared device; the
//!   controllers move its class shares with the CPU shares) and its slice
//!   of the node's memory;
//! - each client process has its own NIC, seeded stream and key cursor.
//!
//! Placement (`engine::placement`): every node takes `num_tokens` random
//! vnodes drawn from the run seed's `ring` stream; a key's Murmur3 token
//! picks its replica nodes (SimpleStrategy, or NetworkTopologyStrategy over
//! the racks) and, within each, the shard Scylla's sharder gives it. A
//! token-aware client sends each request to one of the key's replicas,
//! picked at random; it lands on a connection's shard of that node
//! (`engine::messaging`: the 2018 Java driver was not shard-aware), which
//! coordinates, and so do internode messages, which the landing shard
//! relays to the key's owner. In volume mode a shard's data (the preload and the key
//! ownership reads and compaction use) is its node's replicated ownership
//! on the ring split evenly over the node's shards.
//!
//! Representative-shard sampling (`[cluster] simulated_shards_per_node =
//! k` of a node's `n` shards): only shards `0..k` of every node run. Their
//! node's device and NIC are `k/n` shares of the real ones
//! (`NvmeProfile::share`, `Nic::set_share`): each I/O or message is served
//! at the full device's or link's speed but holds it `n/k` times as long,
//! the turn of the shards left out, so a simulated shard gets the capacity
//! a full node gives a shard and an idle one the full node's latency.
//! The clients draw keys as before but keep only keys whose shard is
//! simulated (the others are the other shards' load), and offer `k/n` of
//! the load: rate limits and fixed rates times `k/n`, `n=` counts and
//! closed-loop threads scaled over the load's processes (whole threads,
//! at least one per process). Drawing and rejecting keeps each simulated
//! shard's key popularity what it is in the full cluster, and scaling the
//! offered load (rather than remapping keys onto the simulated shards)
//! keeps each shard's request rate and concurrency. Reports multiply
//! counts and rates by `n/k`; latencies are as simulated. What sampling
//! cannot keep: the other shards' I/O and messages are taken to arrive
//! with the simulated ones (their bursts coincide, where the real shards'
//! interleave), and threads are rounded to whole ones. The loaders are not
//! sampled: each process issues its share of the operations through its
//! whole NIC.
//!
//! The harness is deterministic: one kernel, one thread, streams derived from
//! the run seed by component name, no hash-map iteration.
//!
//! Layout: this file holds the run's state and types, the run loop and the
//! event dispatch, the start (`new`, the preload) and the end (the replica
//! check, the outcome). The rest are `impl Simulation` blocks over the same
//! state: `client` the cassandra-stress processes, `host` the nodes'
//! hardware and the engine's actions on it, `metrics` the interval tick and
//! the time series, `fault_events` the fault timeline, `life` crashes,
//! restarts and disk faults. `setup`'s types are what a run takes
//! (`crate::plan` resolves a scenario into them), `outcome`'s what it
//! reports, and `time_spent` where its tasks and I/Os spent their time.
//! What engine work costs and where it runs on the models is
//! `crate::bridge`; the checkers a run is judged by, and the data-mode
//! bookkeeping the harness feeds them, are `crate::check`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use engine::{
    Action, BatchRequest, ClientRequest, IoKind, MergePhases, Message, Operation, Placement,
    PreloadState, ReplyStatus, RequestId, ShardAddress, TaskId,
};
use models::io_scheduler::{FairQueue, IoCost};
use models::jvm::JvmNode;
use models::network::{Delivery, FlowId, Nic};
use models::nvme::{IoDirection, IoOp, NvmeDevice};
use models::reactor::Reactor;
use slab::Slab;
use units::{SimDuration, SimTime, NANOS_PER_SECOND};

use crate::bridge;
pub use crate::bridge::{CpuScheduling, IoScheduling};
use crate::check::{self, ConsistencyCheck};
use crate::events::{EventLog, What};
use crate::faults::network::NetworkFaults;

mod build;
mod client;
mod event_counts;
mod fault_events;
mod host;
mod life;
mod metrics;
mod outcome;
pub mod parallelism;
mod setup;
mod time_spent;
mod topology;

use crate::kernel::Kernel;
use crate::load::{
    KeySource, LoadPlan, MixCursor, OpKind, RatePlan, Routing, Schedule, StartPlan, StopPlan,
    Uncertainty,
};
use crate::metrics::{round3, LatencySummary, OpMetrics, ServerLatencies};
use crate::rng::{self, SimRng};
use crate::timeseries::{ClientInterval, NodeInterval, OpInterval, TimeSeries};
pub use event_counts::{EventCounts, EventKind};
use hdrhistogram::serialization::V2DeflateSerializer;
pub use outcome::{
    LoadOutcome, MessagesLost, Progress, RunOutcome, SerializedInterval, ShardOutcome,
    SharedPoolTally, ThreadSearch,
};
use rand::seq::SliceRandom;
use rand::RngExt;
pub use setup::{
    ClusterPlan, CommitlogPlan, Controllers, Preload, RunPlan, SteadyStart, TableStart,
    TopologyPlan, PILOT,
};
pub use time_spent::{ClientTally, CpuTally, IoTally, Spans, TimeSpent};

/// A message between two shards of one node: a cross-shard queue hop
/// (hardware.md 6.3: 1-2 us; estimate).
const CROSS_SHARD_HOP: SimDuration = SimDuration::from_micros(1);

/// How long a TCP connection waits before it sends a lost segment again:
/// Linux's minimum retransmission timeout (`TCP_RTO_MIN`, 200 ms), the
/// timeout within a data centre's round trips (its exponential backoff
/// across repeated losses is left out).
const TCP_RETRANSMIT: SimDuration = SimDuration::from_millis(200);

/// Bytes on the wire around a CQL request or response (frame and TCP/IP
/// headers); an estimate.
const MESSAGE_OVERHEAD_BYTES: u64 = 80;

/// The node the clients' driver holds its control connection to (the
/// first contact point): the node whose status events it hears.
/// Failing the control connection over to another node is left out.
const CONTROL_NODE: u32 = 0;

/// How a request ended, as the client sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReplyOutcome {
    /// Written.
    Written,
    /// Read, with a row of this timestamp (0 in volume mode).
    Found { timestamp: u64 },
    /// Read, no row.
    NotFound,
    /// The coordinator timed out waiting for replicas (the driver raises a
    /// timeout exception; c-s retries it like any error).
    Timeout,
    /// The coordinator saw too few replicas up to try (an unavailable
    /// exception; retried like any error).
    Unavailable,
}

#[derive(Clone, Debug)]
enum Event {
    LoadStart {
        load: u32,
    },
    ThreadReady {
        process: u32,
    },
    Issue {
        process: u32,
        measured_from: SimTime,
    },
    OpenLoopArrival {
        process: u32,
    },
    /// A request's last byte reaches its coordinator's NIC.
    RequestArrives {
        shard: u32,
        request: ClientRequest,
        /// When the client stops waiting for it ([`Coordinating`]).
        deadline: SimTime,
        /// Its bytes on the wire, while its receiver's NIC has still to
        /// take it in ([`Simulation::through_receiver_nic`]); 0 once it
        /// has (or when it did not cross a NIC).
        wire_bytes: u32,
    },
    /// A batch of writes to several partitions (one client request).
    BatchArrives {
        shard: u32,
        batch: BatchRequest,
        /// As `RequestArrives`'.
        deadline: SimTime,
        /// As `RequestArrives`'.
        wire_bytes: u32,
    },
    /// A reply's last byte reaches its client's NIC, and the c-s thread
    /// waiting on it has been handed it (`handoff_ns` later).
    ReplyArrives {
        process: u32,
        request: RequestId,
        outcome: ReplyOutcome,
        /// When the client stopped waiting for it (a reply after that
        /// finds nobody, and wakes no thread).
        deadline: SimTime,
        /// As `RequestArrives`'.
        wire_bytes: u32,
        /// The client's hand-offs after its NIC took the reply in.
        handoff_ns: u32,
    },
    /// A node's NIC can put its next queued message on the wire.
    NodeNicWake {
        node: u32,
    },
    /// A client process's NIC can put its next queued message on the wire.
    ClientNicWake {
        process: u32,
    },
    TimeoutCheck {
        process: u32,
    },
    /// A message's last byte reaches its node's NIC (or, from a shard of
    /// the same node, the message reaches its shard).
    MessageArrives {
        shard: u32,
        from: ShardAddress,
        message: Message,
        /// As `RequestArrives`'.
        wire_bytes: u32,
    },
    /// A stream message lost on the network is sent again.
    StreamResend {
        shard: u32,
        from: ShardAddress,
        message: Message,
    },
    CpuRunEnd {
        shard: u32,
    },
    /// A JVM node's next task completion.
    JvmWake {
        shard: u32,
    },
    IoDone {
        node: u32,
        tag: u64,
    },
    ShardTimer {
        shard: u32,
    },
    IntervalTick,
    /// A node's own timers ([`engine::Node::poll_node_timeout`]).
    NodeTimer {
        node: u32,
    },
    /// Topology operation `index` of the plan is due (`topology.rs`).
    ActionDue {
        index: u32,
    },
    /// The operation under way has waited `RING_DELAY`.
    ActionStep,
    /// Fault `fault` of the plan starts.
    FaultStarts {
        fault: u32,
    },
    /// Fault `fault` ends.
    FaultEnds {
        fault: u32,
    },
    /// Flap `fault` turns its nodes' network off (`off`) or back on.
    FlapSwitch {
        fault: u32,
        off: bool,
    },
    /// A gossip message from node `from` reaches node `node` (carried in
    /// the event, so that no table is shared between the two nodes).
    GossipArrives {
        node: u32,
        from: u32,
        message: Box<engine::gossip::GossipMessage>,
        /// As `RequestArrives`'.
        wire_bytes: u32,
    },
}

impl Event {
    /// What the event is for ([`EventKind`]).
    fn kind(&self) -> EventKind {
        match self {
            Event::LoadStart { .. } => EventKind::LoadStart,
            Event::ThreadReady { .. } => EventKind::ThreadReady,
            Event::Issue { .. } => EventKind::Issue,
            Event::OpenLoopArrival { .. } => EventKind::OpenLoopArrival,
            Event::RequestArrives { .. } => EventKind::RequestArrives,
            Event::BatchArrives { .. } => EventKind::BatchArrives,
            Event::ReplyArrives { .. } => EventKind::ReplyArrives,
            Event::NodeNicWake { .. } => EventKind::NodeNicWake,
            Event::ClientNicWake { .. } => EventKind::ClientNicWake,
            Event::TimeoutCheck { .. } => EventKind::TimeoutCheck,
            Event::MessageArrives { .. } => EventKind::MessageArrives,
            Event::StreamResend { .. } => EventKind::StreamResend,
            Event::CpuRunEnd { .. } => EventKind::CpuRunEnd,
            Event::JvmWake { .. } => EventKind::JvmWake,
            Event::IoDone { .. } => EventKind::IoDone,
            Event::ShardTimer { .. } => EventKind::ShardTimer,
            Event::IntervalTick => EventKind::IntervalTick,
            Event::NodeTimer { .. } => EventKind::NodeTimer,
            Event::ActionDue { .. } => EventKind::ActionDue,
            Event::ActionStep => EventKind::ActionStep,
            Event::FaultStarts { .. } => EventKind::FaultStarts,
            Event::FaultEnds { .. } => EventKind::FaultEnds,
            Event::FlapSwitch { .. } => EventKind::FlapSwitch,
            Event::GossipArrives { .. } => EventKind::GossipArrives,
        }
    }
}

struct NodeHardware {
    device: NvmeDevice,
    nic: Nic<Event>,
    /// One stream each for the device, the NIC and the JVM, so that one
    /// drawing more never moves the others' draws.
    disk_rng: SimRng,
    nic_rng: SimRng,
    /// The jitter of the node's gossip messages.
    gossip_rng: SimRng,
    jvm_rng: SimRng,
    /// The wake-ups of its JVM's idle pool threads (`models::wakeup`).
    jvm_wake_rng: SimRng,
    /// What the node had counted at the last interval tick.
    at_last_tick: metrics::NodeSnapshot,
    /// Its device has failed (`disk-fail`): no I/O completes any more.
    disk_failed: bool,
    /// The node isolated itself after a disk error.
    isolated: bool,
    /// The `slow-disk` faults in force on its device.
    slowdowns: Vec<models::nvme::Slowdown>,
    /// Crash faults holding the node down; it restarts when none does.
    crash_holds: u32,
    /// When it last restarted, and what its shards replayed since.
    restarted: Option<(SimTime, u64, u64)>,
    /// Its network is cut because it is down or replaying.
    life_cut: bool,
    /// Wake-ups for the node's own timers in the kernel's queue.
    node_timer: WakeUps,
    /// Messages from other nodes lost at its NIC to partitions.
    partition_losses: u64,
}

/// The CPU a shard's engine runs on.
enum ShardCpu {
    /// A Seastar reactor: one core per shard (Scylla).
    Reactor(Reactor),
    /// A JVM over the node's cores (Cassandra: one shard per node), woken
    /// at its task completions.
    Jvm {
        node: Box<JvmNode>,
        /// Its wake-ups in the kernel's queue.
        wake: WakeUps,
        finished: Vec<u64>,
        /// The shard's memtable memory as last reported to the node
        /// ([`JvmNode::retain`] / [`JvmNode::release`]).
        memtable_reported: u64,
    },
}

impl ShardCpu {
    /// Whether a reactor is inside a period (a task on the core): what
    /// reaches the shard, and what its tasks send, waits for its next poll.
    /// A JVM takes things in as they come.
    fn in_period(&self) -> bool {
        matches!(self, ShardCpu::Reactor(core) if core.is_running())
    }

    /// Core time used so far and the cores it is spread over.
    fn busy(&self, now: SimTime) -> (SimDuration, u32) {
        match self {
            ShardCpu::Reactor(core) => (core.busy_time(now), 1),
            ShardCpu::Jvm { node, .. } => (node.cpu_busy(), node.cores()),
        }
    }
}

struct ShardState {
    cpu: ShardCpu,
    /// I/Os waiting for the scheduler: the engine's id, the operation and
    /// its class ([`engine::IoClass::index`]).
    io_queue: FairQueue<(engine::IoId, IoOp, u8)>,
    /// I/Os dispatched to the device: the engine's id, the queue's cost and
    /// the class, keyed by the device tag's low half.
    io_in_flight: Slab<(engine::IoId, IoCost, u8)>,
    /// Where the shard's tasks and I/Os spent their time.
    time_spent: TimeSpent,
    cpu_busy_at_last_tick: SimDuration,
    /// The summed price of the compaction merges handed to the shard's CPU
    /// (`time_spent`) at the last interval tick: an interval's compaction
    /// CPU is the difference (charged when submitted).
    compaction_price_at_last_tick: u128,
    node: u32,
    /// Its index among its node's shards.
    local: u32,
    /// Wake-ups for the shard's timers in the kernel's queue.
    timer: WakeUps,
    /// What reached the shard while its reactor was inside a period, to be
    /// taken in at its next poll (in arrival order).
    inbox: Vec<Inbound>,
    /// Whether `inbox` holds the shard's timer (then nothing rearms it
    /// until the poll takes it in).
    timer_in_inbox: bool,
    /// Whether the next CPU task the shard's engine asks for is the first
    /// of the client request it is taking in (JVM presets send it through
    /// the native transport's event loop: `JvmNode::submit_from_client`).
    from_client: bool,
    /// What the shard's tasks sent out during the current period (messages,
    /// replies, I/Os), to leave at its next poll.
    outbox: Vec<Action>,
    /// Whether its process takes requests and messages: not while its node
    /// is down or replaying (what still arrives was sent before the crash).
    up: bool,
}

/// Something that reaches a shard from outside its reactor: Seastar's
/// pollers pick it up ([`Reactor`]'s polls).
#[derive(Clone, Debug)]
enum Inbound {
    /// A client's request, read off its connection, and the client's
    /// deadline for it.
    Request(ClientRequest, SimTime),
    /// A client's batch, read off its connection, and its deadline.
    Batch(BatchRequest, SimTime),
    /// A message from another node, or another shard of this one.
    Message {
        from: ShardAddress,
        message: Message,
    },
    /// An I/O the device completed: its key in `io_in_flight`.
    IoDone { key: u32 },
    /// The shard's timer came due.
    Timer,
}

/// The tag a CPU model carries for engine task `id` of work kind `kind`
/// ([`engine::CpuWork::index`]): both, so that nothing is kept per task.
fn task_tag(id: TaskId, kind: usize) -> u64 {
    debug_assert!(kind < 1 << TASK_KIND_BITS && id.0 < 1 << (64 - TASK_KIND_BITS));
    id.0 << TASK_KIND_BITS | kind as u64
}

/// Bits of a CPU tag that hold the task's kind.
const TASK_KIND_BITS: u32 = 4;
const _: () = assert!(engine::CpuWork::KINDS <= 1 << TASK_KIND_BITS);
// No task of the engine's has the JVM's own flush tag (all bits set: kind
// 15, which no work kind reaches).
const _: () = assert!(engine::CpuWork::KINDS < 1 << TASK_KIND_BITS);
const _: () = assert!(models::jvm::FLUSH_TAG == u64::MAX);

impl ShardState {
    /// The CPU finished the task it knows as `tag` at `now`: tallies it and
    /// gives back the engine's id for it.
    fn task_finished(&mut self, now: SimTime, tag: u64) -> TaskId {
        let kind = (tag & ((1 << TASK_KIND_BITS) - 1)) as usize;
        self.time_spent.cpu[kind].on_cpu.end(now);
        TaskId(tag >> TASK_KIND_BITS)
    }
}

/// Who handles an event in a run split into logical processes
/// ([`Simulation::logical_process`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lp {
    /// The barrier events, which see every node and process.
    WholeRun,
    /// A node (its shards, hardware and engine).
    Node(u32),
    /// A client process.
    Process(u32),
}

impl Lp {
    /// The kernel's source for this LP in a cluster of `nodes` nodes: the
    /// whole run 0 (so its events at an instant run before every LP's, as
    /// a barrier's must), then the nodes, then the client processes.
    #[inline]
    fn source(self, nodes: u32) -> u32 {
        match self {
            Lp::WholeRun => 0,
            Lp::Node(node) => 1 + node,
            Lp::Process(process) => 1 + nodes + process,
        }
    }
}

/// The wake-ups one component (a shard's timers, a JVM's completions) has
/// in the kernel's queue, which are never cancelled: one that fires early
/// finds nothing due and arms the next.
///
/// A new wake-up is queued only if it is earlier than every one already
/// queued (a later one would be redundant: the earlier one re-arms), so the
/// queued times, kept here latest first, only ever decrease along the
/// vector and the next to fire is the last. Knowing all of them, not just
/// the earliest, matters: when the earliest fires and the component's next
/// deadline is one already queued (a request's timeout seconds ahead), no
/// duplicate is queued. Remembering only the earliest queued a duplicate
/// each time, and the 40-node run's queue held ~90K stale shard timers.
#[derive(Debug, Default)]
struct WakeUps {
    queued: Vec<SimTime>,
}

impl WakeUps {
    /// Records that the wake-up at `now` fired.
    #[inline]
    fn fired(&mut self, now: SimTime) {
        while self.queued.last().is_some_and(|&at| at <= now) {
            self.queued.pop();
        }
    }

    /// Whether a wake-up at `at` must be queued (none queued is at or
    /// before it); if so, records it as queued.
    #[inline]
    fn arm(&mut self, at: SimTime) -> bool {
        if self.queued.last().is_some_and(|&earliest| earliest <= at) {
            return false;
        }
        self.queued.push(at);
        true
    }
}

struct ClientProcess {
    load: u32,
    nic: Nic<Event>,
    rng: SimRng,
    /// The wake-ups of its threads' hand-offs (`models::wakeup`), from a
    /// stream of their own.
    wake_rng: SimRng,
    /// The seed of its replies' hand-offs, drawn per reply
    /// ([`crate::rng::keyed`]) by the node that sends it.
    reply_wake_seed: u64,
    /// Its threads' hand-offs so far.
    handoffs: ClientTally,
    /// What it recorded of each of its load's op types since the run's
    /// metrics last took it in ([`Simulation::absorb_op_deltas`]), by
    /// the load's op index.
    op_deltas: Vec<crate::metrics::OpDelta>,
    /// Operations it has completed.
    completed: u64,
    /// Since when every one of its threads waits on a reply (`None`: not
    /// stalled, or no thread count), and its stalled time since the last
    /// interval tick before that (the time series'
    /// `client_processes_stalled`).
    stalled_since: Option<SimTime>,
    stalled_time: SimDuration,
    keys: KeySource,
    mix: MixCursor,
    schedule: Schedule,
    /// Where in its first interval the process's pacer starts
    /// ([`Schedule::with_phase`]).
    pacer_phase: f64,
    /// This process's pacing: the load's, scaled under sampling.
    rate: RatePlan,
    /// Its threads (`None`: a pure open loop); scaled under sampling.
    threads: Option<u32>,
    /// Operations it issues when its load is bounded by a count (`n=`,
    /// scaled under sampling).
    operations: u64,
    issued: u64,
    stop_at: Option<SimTime>,
    /// Threads (or the open-loop generator) still issuing.
    issuers_running: u32,
    /// Operations outstanding (an operation being retried counts once).
    in_flight: u32,
    /// Its attempts on the wire, by slot ([`AttemptRef`]).
    attempts: Slab<InFlight>,
    /// The serial number its next attempt takes.
    next_serial: u32,
    /// Client timeouts of attempts in flight, in deadline order:
    /// (deadline, slot, serial); attempts answered are skipped lazily.
    timeouts: VecDeque<(SimTime, u32, u32)>,
    timeout_check_armed: bool,
    /// The last write timestamp this process assigned (microseconds).
    last_timestamp: u64,
    /// Requests sent so far under round-robin routing.
    round_robin_turn: u64,
    /// When an operation of it failed every try, which ended it (c-s
    /// without `-errors ignore`): it issues nothing after.
    failed_at: Option<SimTime>,
}

impl ClientProcess {
    /// Its attempt in `slot`, if that is still the one numbered `serial`.
    fn attempt(&self, slot: u32, serial: u32) -> Option<&InFlight> {
        self.attempts
            .get(slot as usize)
            .filter(|attempt| attempt.serial == serial)
    }
}

/// One attempt of a client operation on the wire.
struct InFlight {
    process: u32,
    load_op: u8,
    /// Latency origin: the first attempt's start (actual or intended).
    measured_from: SimTime,
    /// Tells this attempt from later users of the same slot.
    serial: u32,
    /// 0 for the first try.
    attempt: u8,
    operation: Operation,
    /// A batch over several partitions (`operation` is its first part):
    /// every part, and whether it is LOGGED.
    batch: Option<(Arc<[Operation]>, bool)>,
    /// Data mode, reads: the newest version of the key acknowledged when
    /// the read was issued (see `ConsistencyCheck`).
    read_floor: u64,
    /// Partitions the operation touches (a batch's parts; 1 otherwise).
    partitions: u32,
    /// Rows it writes, or for a read the rows it returns if it finds the
    /// partition.
    rows: u32,
}

/// Serials of attempts wrap at 30 bits: a client's request id leaves bits
/// 62 and 63 to the engine's own requests (`engine::BATCH_PART`,
/// `engine::shard::HINT_REPLAY`).
/// Bits of an attempt's id ([`attempt_id`]): its process, its slot in the
/// process's attempts, and the process's serial number for it, in the 62
/// bits a client's id may use (the engine keeps the top two for its own
/// ids, `engine::shard::batch::BATCH_PART`). The serial only tells a late
/// reply to an attempt that timed out from the slot's next user.
const PROCESS_BITS: u32 = 16;
const SLOT_BITS: u32 = 24;
const SERIAL_BITS: u32 = 62 - PROCESS_BITS - SLOT_BITS;
const SERIAL_MASK: u32 = (1 << SERIAL_BITS) - 1;
// An attempt's id holds any process a scenario may have.
const _: () = assert!(crate::scenario::MAX_RUN_PROCESSES <= 1 << PROCESS_BITS);

/// Where an attempt of a client operation is kept: its process, its slot
/// in that process's attempts, and the serial number that tells it from
/// later users of the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AttemptRef {
    process: u32,
    slot: u32,
    serial: u32,
}

/// The engine's id of the attempt at `at`: each process numbers its own
/// attempts, so that no count is shared between processes.
fn attempt_id(at: AttemptRef) -> RequestId {
    debug_assert!(at.process < 1 << PROCESS_BITS && at.serial <= SERIAL_MASK);
    assert!(
        at.slot < 1 << SLOT_BITS,
        "2^24 attempts in flight from one process"
    );
    RequestId(
        (u64::from(at.serial) << (PROCESS_BITS + SLOT_BITS))
            | (u64::from(at.process) << SLOT_BITS)
            | u64::from(at.slot),
    )
}

/// Where the attempt of `id` is kept ([`attempt_id`]).
fn attempt_of(id: RequestId) -> AttemptRef {
    AttemptRef {
        process: ((id.0 >> SLOT_BITS) & ((1 << PROCESS_BITS) - 1)) as u32,
        slot: (id.0 & ((1 << SLOT_BITS) - 1)) as u32,
        serial: (id.0 >> (PROCESS_BITS + SLOT_BITS)) as u32,
    }
}

/// Client-side metrics of one load.
struct LoadState {
    ops: Vec<OpMetrics>,
    kinds: Vec<OpKind>,
    /// Each of `kinds`' index among the run's op types (`Simulation::ops`).
    global_ops: Vec<u8>,
    window: Option<(SimTime, SimTime)>,
    started_at: Option<SimTime>,
    finished: bool,
    header_pending: bool,
    intervals: Vec<Vec<SerializedInterval>>,
    /// A thread-search step that ran: its op rate, as c-s's rule reads it.
    search_rate: Option<f64>,
    /// An `err<` load: how certain its rate is, interval by interval, and
    /// whether it has stopped issuing for that.
    uncertainty: Uncertainty,
    certain: bool,
    /// c-s's lines once the load (a thread-search step) has ended, printed
    /// after its last interval's.
    trailer: Vec<String>,
    /// What `-reporting` has counted of its interval lines.
    reporting_lines: crate::report::ReportingLines,
}

/// Each thread search of the run: its steps that ran, with their rates.
fn thread_searches(plans: &[LoadPlan], states: &[LoadState]) -> Vec<ThreadSearch> {
    let mut searches: Vec<ThreadSearch> = Vec::new();
    for (plan, state) in plans.iter().zip(states) {
        let Some(step) = &plan.search else {
            continue;
        };
        if step.step == 0 {
            searches.push(ThreadSearch {
                load: step.load.clone(),
                stop_at_saturation: step.stop_at_saturation,
                steps: Vec::new(),
            });
        }
        if let Some(rate) = state.search_rate {
            let search = searches.last_mut().expect("a search starts at its step 0");
            search.steps.push((step.threads, rate));
        }
    }
    searches
}

/// Removes from `loads` those `ran` says did not run, renumbering the
/// `after` references of the rest (one to a removed step now names the
/// last earlier load that ran).
fn keep_loads_that_ran(loads: &mut Vec<LoadPlan>, ran: &[bool]) {
    debug_assert_eq!(loads.len(), ran.len());
    let mut new_index = Vec::with_capacity(ran.len());
    let mut kept = 0usize;
    for &ran in ran {
        new_index.push(kept.saturating_sub(usize::from(!ran)));
        kept += usize::from(ran);
    }
    let mut index = 0;
    loads.retain(|_| {
        index += 1;
        ran[index - 1]
    });
    for load in loads.iter_mut() {
        if let StartPlan::After(before) = load.start {
            load.start = StartPlan::After(new_index[before]);
        }
    }
}

/// What a message's receiver's NIC does with it when its last byte is
/// due ([`Simulation::through_receiver_nic`]).
enum Intake {
    /// It is in: its event goes on now.
    Now,
    /// The link was held by messages that arrived before it: it is in then.
    Later(SimTime),
    /// The receiver is cut off.
    Lost,
}

/// A client request its coordinator is working on, as the coordinating
/// node keeps it (its own state, not the client's): when it reached the
/// node (the server-side latency runs from here to the reply), whether it
/// writes, and the client's deadline for it. An attempt is still awaited
/// at time `t` exactly while `t <= deadline`: the client drops it at its
/// deadline (`check_timeouts`), and at that instant the node's events come
/// before the client's (the kernel orders ties by logical process).
#[derive(Clone, Copy, Debug)]
struct Coordinating {
    at: SimTime,
    deadline: SimTime,
    is_write: bool,
}

/// A running simulation.
struct Simulation {
    plan: RunPlan,
    kernel: Kernel<Event>,
    nodes: Vec<NodeHardware>,
    /// What each node's coordinators measured (apart from `nodes`, whose
    /// hot fields it would spread over more cache lines).
    server: Vec<ServerLatencies>,
    /// The client requests each node coordinates, by the request's id.
    coordinating: Vec<rustc_hash::FxHashMap<u64, Coordinating>>,
    /// The engine's nodes, by index, each with its shards.
    engines: Vec<engine::Node>,
    /// The simulated shards' CPUs, I/O queues and accounting, node by node
    /// (index `node x simulated_shards + shard`).
    shards: Vec<ShardState>,
    processes: Vec<ClientProcess>,
    /// Attempts on the wire, over every process (each keeps its own):
    /// the run is idle only when none is.
    attempts_in_flight: usize,
    /// Events handled, by kind (`twin bench cluster`).
    event_counts: EventCounts,
    ops: Vec<OpMetrics>,
    op_windows: Vec<Option<(SimTime, SimTime)>>,
    loads: Vec<LoadState>,
    timeseries: TimeSeries,
    /// Data mode: the clients' read check.
    consistency: Option<ConsistencyCheck>,
    last_tick: SimTime,
    loads_unfinished: usize,
    /// Topology operations not finished yet.
    actions_unfinished: usize,
    serializer: V2DeflateSerializer,
    /// Where keys live (shared with every shard's engine).
    placement: Placement,
    /// Shards simulated per node (all of them unless sampled).
    simulated_shards: u32,
    /// Where messages from clients and other nodes land
    /// ([`ClusterPlan::landing`]).
    landing: engine::Landing,
    /// The network faults in force.
    network_faults: NetworkFaults,
    /// Per fault of the plan: whether it is in force, and for a flap
    /// whether its nodes are cut now.
    fault_state: Vec<(bool, bool)>,
    /// What happened, for `events.jsonl`.
    event_log: EventLog,
    /// The token metadata and the topology operation under way (runs with
    /// `[[action]]` only).
    topology: Option<Box<topology::TopologyRun>>,
    /// The clients' driver's view: the nodes it sees down, by node.
    driver_down: engine::gossip::DownSet,
    /// The event stream's fingerprint, when asked for (`twin run --trace`).
    trace: Option<Box<crate::trace::Trace>>,
    /// With [`run_probed`]'s `parallelism`: what a parallel run could do.
    parallelism: Option<Box<parallelism::ParallelismProbe>>,
}

/// A run that stopped because a mechanism asked for what the simulator
/// cannot do (an event due in the past, or an event queue without bound):
/// a bug of that mechanism, or an input too large for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimulationError {
    /// When the run stopped.
    pub at: SimTime,
    /// The event's kind, which names the mechanism that asked for it.
    pub mechanism: EventKind,
    /// What it asked for.
    pub what: String,
}

impl std::fmt::Display for SimulationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the simulation stopped at {}: {} ({}) asked for {}; an input (a fault's factor, a rate, a size) may be beyond what the model is meant for",
            self.at,
            self.mechanism.name(),
            self.mechanism.category(),
            self.what
        )
    }
}

impl std::error::Error for SimulationError {}

/// Runs a plan to its end, calling `progress` once per interval.
pub fn run(
    plan: RunPlan,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunOutcome, SimulationError> {
    run_traced(plan, None, progress)
}

/// [`run`], fingerprinting every event of the run (not of a steady
/// start's pilot, which only sets the run's inputs) into
/// [`RunOutcome::trace`] when `trace` is given.
pub fn run_traced(
    plan: RunPlan,
    trace: Option<crate::trace::TraceOptions>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunOutcome, SimulationError> {
    run_probed(
        plan,
        Probes {
            trace,
            parallelism: false,
        },
        progress,
    )
}

/// What a run measures about itself besides its results.
#[derive(Clone, Debug, Default)]
pub struct Probes {
    /// Fingerprint every event ([`crate::trace`]).
    pub trace: Option<crate::trace::TraceOptions>,
    /// Measure how much of the run could go in parallel
    /// ([`parallelism`]), into [`RunOutcome::parallelism`].
    pub parallelism: bool,
}

/// [`run`] with `probes` (not over a steady start's pilot, which only
/// sets the run's inputs).
#[allow(clippy::disallowed_methods)] // wall time for perf.json only
pub fn run_probed(
    mut plan: RunPlan,
    probes: Probes,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunOutcome, SimulationError> {
    let Probes { trace, parallelism } = probes;
    let started = Instant::now();
    let steady = steady_start(&plan)?;
    if let Some(preload) = plan.cluster.preload.as_mut() {
        preload.steady = steady;
    }
    let mut simulation = Simulation::new(plan);
    simulation.trace = trace.map(|options| Box::new(crate::trace::Trace::new(options)));
    if parallelism {
        simulation.kernel.track_causes();
        simulation.parallelism = Some(Box::new(parallelism::ParallelismProbe::new(
            simulation.nodes.len() as u32,
            simulation.processes.len() as u32,
            simulation.plan.cluster.network_latency,
        )));
    }
    simulation.run(progress);
    simulation.refusal()?;
    let wall_seconds = started.elapsed().as_secs_f64();
    Ok(simulation.finish(wall_seconds))
}

/// The least CPU share left to compaction when the pilot's foreground
/// fills a shard: Scylla's controller keeps the compaction group's shares
/// above zero whenever there is a backlog.
const LEAST_SPARE_CPU: f64 = 0.05;

/// Runs the pilot of a mid-cycle or windowed size-tiered start
/// ([`SteadyStart`]); `None` for any other start.
fn steady_start(plan: &RunPlan) -> Result<Option<SteadyStart>, SimulationError> {
    let Some(preload) = plan.cluster.preload else {
        return Ok(None);
    };
    if preload.start == TableStart::Compacted
        || !matches!(
            plan.cluster.compaction,
            engine::compaction::CompactionStrategy::SizeTiered(_)
        )
    {
        return Ok(None);
    }
    let mut pilot = plan.clone();
    pilot.duration = Some(plan.duration.map_or(PILOT, |duration| duration.min(PILOT)));
    pilot.cluster.preload = Some(Preload {
        start: TableStart::Compacted,
        ..preload
    });
    let end = SimTime::ZERO + pilot.duration.expect("set above");
    let mut simulation = Simulation::new(pilot);
    // Measured over the pilot's second half, past the clients' first
    // requests into cold caches.
    let totals = |simulation: &Simulation| {
        let now = simulation.kernel.now();
        let cpu = simulation
            .shards
            .iter()
            .map(|shard| shard.cpu.busy(now).0.as_secs_f64())
            .sum::<f64>();
        let bytes = simulation
            .engines
            .iter()
            .flat_map(|node| node.shards())
            .map(|shard| shard.stats().flushed_bytes_written as f64)
            .sum::<f64>();
        (now, cpu, bytes)
    };
    // A shard's cores: 1 for a reactor, the node's for a JVM.
    let cores = f64::from(simulation.shards[0].cpu.busy(SimTime::ZERO).1.max(1));
    simulation.run_until(SimTime::from_nanos(end.as_nanos() / 2), &mut |_| {});
    simulation.refusal()?;
    let (from, cpu_before, bytes_before) = totals(&simulation);
    simulation.run_until(end, &mut |_| {});
    simulation.refusal()?;
    let (to, cpu_after, bytes_after) = totals(&simulation);
    let seconds = (to - from).as_secs_f64() * simulation.shards.len() as f64;
    if seconds <= 0.0 {
        return Ok(None);
    }
    let foreground_utilisation = (cpu_after - cpu_before) / seconds / cores;
    let flushed_bytes_per_s = (bytes_after - bytes_before) / seconds;
    // A merge runs on one core (a reactor's, or one compaction thread of a
    // JVM) in what the foreground leaves of it.
    let spare = ((1.0 - foreground_utilisation) * cores).clamp(LEAST_SPARE_CPU, 1.0);
    let compaction_bytes_per_s = spare * 1e9 / plan.cluster.costs.compaction_ns_per_byte;
    Ok(Some(SteadyStart {
        pilot_seconds: (end - SimTime::ZERO).as_secs_f64(),
        foreground_utilisation,
        flushed_bytes_per_s,
        compaction_bytes_per_s,
        merge_duty: (flushed_bytes_per_s / compaction_bytes_per_s).min(1.0),
    }))
}

/// A stratified sample of `count` positions in `[0, 1)`: `(i + u) / count`
/// for `i` in `0..count`, one offset `u` and a shuffle from `rng`.
/// Independent draws would leave a few sampled shards bunched together;
/// strata spread them as evenly as a cluster's shards are.
fn stratified(rng: &mut SimRng, count: usize) -> Vec<f64> {
    let offset: f64 = rng.random();
    let mut strata: Vec<usize> = (0..count).collect();
    strata.shuffle(rng);
    strata
        .into_iter()
        .map(|stratum| (stratum as f64 + offset) / count as f64)
        .collect()
}

impl Simulation {
    fn new(plan: RunPlan) -> Simulation {
        let cluster = &plan.cluster;
        let seed = plan.seed;
        // Every node the run will have, those an `add-node` starts later
        // included (they stand by until then).
        let total_nodes = crate::operations::total_nodes(cluster.nodes, &plan.operations);
        let placement = build::placement(cluster, seed, total_nodes);
        // Representative-shard sampling: the simulated shards of a node
        // share what the whole node's device and NIC give that many shards.
        let simulated_shards = cluster.simulated_shards();
        let fraction = f64::from(simulated_shards) / f64::from(cluster.shards_per_node);
        let mut nodes = build::node_hardware(cluster, seed, total_nodes, fraction);
        let engines = build::engines(cluster, seed, &placement, total_nodes, simulated_shards);
        let shards = build::shard_states(cluster, seed, total_nodes, simulated_shards, &mut nodes);
        let processes = build::client_processes(&plan, fraction);
        let (ops, loads) = build::op_metrics(&plan);
        let op_names: Vec<&str> = ops.iter().map(|op| op.kind.name()).collect();
        let timeseries = TimeSeries::with_groups(
            &op_names,
            total_nodes,
            !plan.operations.is_empty(),
            matches!(cluster.cpu, CpuScheduling::Jvm(_)),
        );
        let loads_unfinished = plan.loads.len();
        let op_windows = vec![None; ops.len()];
        let mut simulation = Simulation {
            kernel: Kernel::with_limits(50_000_000),
            server: (0..total_nodes)
                .map(|_| ServerLatencies::default())
                .collect(),
            coordinating: (0..total_nodes).map(|_| Default::default()).collect(),
            nodes,
            engines,
            shards,
            processes,
            attempts_in_flight: 0,
            event_counts: EventCounts::default(),
            ops,
            op_windows,
            loads,
            timeseries,
            consistency: plan.cluster.data_mode.then(ConsistencyCheck::default),
            last_tick: SimTime::ZERO,
            loads_unfinished,
            actions_unfinished: plan.operations.len(),
            serializer: V2DeflateSerializer::new(),
            placement,
            simulated_shards,
            landing: plan.cluster.landing(),
            network_faults: NetworkFaults::new(total_nodes),
            fault_state: vec![(false, false); plan.faults.len()],
            event_log: EventLog::default(),
            driver_down: engine::gossip::DownSet::default(),
            trace: None,
            parallelism: None,
            topology: (!plan.operations.is_empty()).then(|| {
                Box::new(topology::TopologyRun::new(
                    &plan.cluster.ring(seed),
                    plan.cluster.replication(),
                    seed,
                    plan.cluster.planted,
                ))
            }),
            plan,
        };
        for node in simulation.plan.cluster.nodes..total_nodes {
            simulation.stand_by(node);
        }
        for (index, operation) in simulation.plan.operations.iter().enumerate() {
            simulation.kernel.schedule_at(
                SimTime::ZERO + operation.at,
                Event::ActionDue {
                    index: index as u32,
                },
            );
        }
        for (index, load) in simulation.plan.loads.iter().enumerate() {
            if let StartPlan::At(start) = load.start {
                simulation.kernel.schedule_at(
                    SimTime::ZERO + start,
                    Event::LoadStart { load: index as u32 },
                );
            }
        }
        simulation.kernel.schedule_at(
            SimTime::ZERO + simulation.plan.interval,
            Event::IntervalTick,
        );
        simulation.schedule_faults();
        for node in 0..simulation.engines.len() {
            simulation.rearm_node_timer(node as u32);
        }
        if let Some(preload) = simulation.plan.cluster.preload {
            simulation.preload(preload);
        }
        for shard in 0..simulation.shards.len() {
            // Static controllers set their shares at start.
            simulation.drain(SimTime::ZERO, shard as u32);
        }
        simulation
    }

    /// Gives every shard its share of the preloaded table: the partitions
    /// whose tokens its node holds a replica of (the node's replicated
    /// ownership on the ring), split evenly over the node's shards.
    ///
    /// Mid-cycle (`[data] state = "steady"`), the shards' positions in the
    /// cycle (SSTable tiers and memtable fill, each) are a [`stratified`]
    /// sample over the simulated shards from the run's `data-phase` stream,
    /// as are, in a window (`[data] window`), the shards' positions in it
    /// and the tiers and memtables the window began with.
    fn preload(&mut self, preload: Preload) {
        let phases: Vec<PreloadState> = if let TableStart::Window(window) = preload.start {
            let mut rng = rng::stream(self.plan.seed, "data-phase");
            let count = self.shards.len();
            let tiers = stratified(&mut rng, count);
            let memtables = stratified(&mut rng, count);
            let elapsed = stratified(&mut rng, count);
            let (write_bytes_per_s, merge_bytes_per_s) =
                preload.steady.map_or((0.0, 0.0), |steady| {
                    (steady.flushed_bytes_per_s, steady.compaction_bytes_per_s)
                });
            (0..count)
                .map(|shard| PreloadState::Window {
                    tiers: tiers[shard],
                    memtable: memtables[shard],
                    elapsed_s: elapsed[shard] * window.as_secs_f64(),
                    write_bytes_per_s,
                    merge_bytes_per_s,
                })
                .collect()
        } else if preload.start == TableStart::Steady {
            let mut rng = rng::stream(self.plan.seed, "data-phase");
            let count = self.shards.len();
            let tiers = stratified(&mut rng, count);
            let memtables = stratified(&mut rng, count);
            let merge_phases: Vec<Vec<f64>> = (0..engine::MERGE_TIERS)
                .map(|_| stratified(&mut rng, count))
                .collect();
            let duty = preload.steady.map_or(0.0, |steady| steady.merge_duty);
            tiers
                .into_iter()
                .zip(memtables)
                .enumerate()
                .map(|(shard, (tiers, memtable))| PreloadState::MidCycle {
                    tiers,
                    memtable,
                    merges: MergePhases {
                        duty,
                        phases: std::array::from_fn(|tier| merge_phases[tier][shard]),
                    },
                })
                .collect()
        } else {
            vec![PreloadState::Compacted; self.shards.len()]
        };
        for (index, state) in phases.into_iter().enumerate() {
            let (node, shard) = self.locate(index as u32);
            let engine = &mut self.engines[node];
            let ownership = engine.shards()[shard as usize]
                .config()
                .key_ownership_fraction;
            let rows = (preload.partitions as f64 * ownership).round() as u64;
            engine.preload_table(
                shard,
                rows,
                preload.row_bytes,
                (preload.first_key, preload.last_key),
                state,
            );
            if preload.warm_cache {
                let warmed = engine.warm_caches(shard);
                debug_assert!(warmed, "[data] preloads volume mode only");
            }
        }
    }

    fn end_time(&self) -> Option<SimTime> {
        self.plan.duration.map(|duration| SimTime::ZERO + duration)
    }

    fn run(&mut self, progress: &mut dyn FnMut(Progress)) {
        self.run_until(self.end_time().unwrap_or(SimTime::MAX), progress);
        if self.kernel.has_refused() {
            return;
        }
        let now = match self.end_time() {
            Some(end) if !self.finished() => end,
            _ => self.kernel.now(),
        };
        self.kernel.advance_to(now);
        if now > self.last_tick {
            self.report_interval(now, progress);
        }
    }

    /// Handles events up to `end`, or until every load has finished and
    /// nothing is in flight. A run with faults or topology operations and
    /// a duration goes on to its end: the cluster's recovery (gossip, hint
    /// replay, compaction of what streamed in) is what it is about, and it
    /// goes on after the clients stop.
    fn run_until(&mut self, end: SimTime, progress: &mut dyn FnMut(Progress)) {
        let stop_when_idle =
            (self.plan.faults.is_empty() && self.plan.operations.is_empty()) || end == SimTime::MAX;
        while let Some((now, event)) = self.kernel.pop_until(end) {
            self.event_counts.record(event.kind());
            if let Some(trace) = self.trace.as_deref_mut() {
                trace.record(now, &event);
            }
            let lp = self.logical_process(&event);
            self.kernel.set_source(lp.source(self.nodes.len() as u32));
            if self.parallelism.is_some() {
                self.probe_parallelism(now, lp);
            }
            if let Event::IntervalTick = event {
                self.report_interval(now, progress);
            } else {
                self.handle(now, event);
            }
            if self.kernel.has_refused() || (stop_when_idle && self.finished()) {
                break;
            }
        }
        // What is scheduled between runs is the whole run's.
        self.kernel.set_source(0);
    }

    /// The logical process that handles `event`: the node whose state it
    /// works on, the client process it belongs to, or the whole run (the
    /// barrier events: a load's start, the interval's tick, faults and
    /// topology operations). What a parallel run splits by
    /// (docs/parallel-runner.md); the kernel orders same-time events by it.
    #[inline]
    fn logical_process(&self, event: &Event) -> Lp {
        let node_of_shard = |shard: &u32| self.shards[*shard as usize].node;
        match event {
            Event::RequestArrives { shard, .. }
            | Event::BatchArrives { shard, .. }
            | Event::MessageArrives { shard, .. }
            | Event::CpuRunEnd { shard }
            | Event::JvmWake { shard }
            | Event::ShardTimer { shard } => Lp::Node(node_of_shard(shard)),
            // The resend goes out on the sender's NIC.
            Event::StreamResend { from, .. } => Lp::Node(from.node),
            Event::NodeNicWake { node }
            | Event::IoDone { node, .. }
            | Event::NodeTimer { node }
            | Event::GossipArrives { node, .. } => Lp::Node(*node),
            Event::ThreadReady { process }
            | Event::Issue { process, .. }
            | Event::OpenLoopArrival { process }
            | Event::ReplyArrives { process, .. }
            | Event::ClientNicWake { process }
            | Event::TimeoutCheck { process } => Lp::Process(*process),
            Event::LoadStart { .. }
            | Event::IntervalTick
            | Event::ActionDue { .. }
            | Event::ActionStep
            | Event::FaultStarts { .. }
            | Event::FaultEnds { .. }
            | Event::FlapSwitch { .. } => Lp::WholeRun,
        }
    }

    /// Counts an event of `lp` in the parallelism probe and marks what it
    /// schedules.
    fn probe_parallelism(&mut self, now: SimTime, lp: Lp) {
        let lp = match lp {
            Lp::Node(node) => parallelism::ParallelismProbe::node_lp(node),
            Lp::Process(process) => self
                .parallelism
                .as_ref()
                .map_or(0, |probe| probe.process_lp(process)),
            Lp::WholeRun => parallelism::WHOLE_RUN,
        };
        let cause = self.kernel.popped_cause().unwrap_or_default();
        if let Some(probe) = self.parallelism.as_deref_mut() {
            let mark = probe.record(now, lp, cause);
            self.kernel.set_cause_mark(mark);
        }
    }

    /// The event the kernel refused, if any, as the run's error.
    fn refusal(&mut self) -> Result<(), SimulationError> {
        match self.kernel.take_refused() {
            None => Ok(()),
            Some(refused) => Err(SimulationError {
                at: refused.now,
                mechanism: refused.event.kind(),
                what: format!("{} (due at {})", refused.reason, refused.at),
            }),
        }
    }

    /// Whether every load and topology operation has finished and nothing
    /// is in flight.
    fn finished(&self) -> bool {
        self.loads_unfinished == 0 && self.actions_unfinished == 0 && self.attempts_in_flight == 0
    }

    /// Closes the interval ending `now` and hands its lines to `progress`.
    fn report_interval(&mut self, now: SimTime, progress: &mut dyn FnMut(Progress)) {
        let lines = self.interval_tick(now);
        progress(Progress {
            now,
            end: self.end_time(),
            operations: self.processes.iter().map(|p| p.completed).sum(),
            lines,
        });
    }

    fn handle(&mut self, now: SimTime, mut event: Event) {
        match self.through_receiver_nic(now, &mut event) {
            Intake::Now => {}
            // Through once it is in (its `wire_bytes` are 0 now).
            Intake::Later(done) => return self.kernel.schedule_at(done, event),
            Intake::Lost => return self.forget(event),
        }
        match event {
            Event::LoadStart { load } => self.start_load(now, load),
            Event::ThreadReady { process } => self.issue(now, process),
            Event::Issue {
                process,
                measured_from,
            } => self.send_request(now, process, measured_from),
            Event::OpenLoopArrival { process } => self.open_loop_arrival(now, process),
            Event::RequestArrives {
                shard,
                request,
                deadline,
                ..
            } => {
                self.arrive(now, shard, Inbound::Request(request, deadline));
            }
            Event::BatchArrives {
                shard,
                batch,
                deadline,
                ..
            } => {
                self.arrive(now, shard, Inbound::Batch(batch, deadline));
            }
            Event::ReplyArrives {
                request, outcome, ..
            } => self.complete(now, request, outcome),
            Event::NodeNicWake { node } => {
                let hardware = &mut self.nodes[node as usize];
                let delivery = hardware.nic.wake(now, &mut hardware.nic_rng);
                let wakeup = hardware.nic.take_wakeup();
                self.after_send(delivery, wakeup, Event::NodeNicWake { node });
            }
            Event::ClientNicWake { process } => {
                let state = &mut self.processes[process as usize];
                let delivery = state.nic.wake(now, &mut state.rng);
                let wakeup = state.nic.take_wakeup();
                self.after_send(delivery, wakeup, Event::ClientNicWake { process });
            }
            Event::TimeoutCheck { process } => self.check_timeouts(now, process),
            Event::MessageArrives {
                shard,
                from,
                message,
                ..
            } => self.arrive(now, shard, Inbound::Message { from, message }),
            Event::StreamResend {
                shard,
                from,
                message,
            } => self.stream_resend(now, shard, from, message),
            Event::JvmWake { shard } => {
                let ShardCpu::Jvm {
                    node,
                    wake,
                    finished,
                    ..
                } = &mut self.shards[shard as usize].cpu
                else {
                    unreachable!("JVM wake-ups go to JVM nodes");
                };
                wake.fired(now);
                let mut done = std::mem::take(finished);
                if node.next_completion().is_some_and(|at| at <= now) {
                    node.complete(now, &mut done);
                }
                let (node, local) = self.locate(shard);
                for &tag in &done {
                    let id = self.shards[shard as usize].task_finished(now, tag);
                    self.engines[node].handle_cpu_done(now, local, id);
                }
                done.clear();
                if let ShardCpu::Jvm { finished, .. } = &mut self.shards[shard as usize].cpu {
                    *finished = done;
                }
                self.drain(now, shard);
                self.rearm_jvm(shard);
            }
            Event::CpuRunEnd { shard } => {
                let ShardCpu::Reactor(core) = &mut self.shards[shard as usize].cpu else {
                    unreachable!("reactor runs end on reactors");
                };
                let ended = core.complete(now);
                if let Some(next) = ended.next {
                    self.kernel.schedule_at(next.at, Event::CpuRunEnd { shard });
                }
                if let Some(tag) = ended.finished {
                    let id = self.shards[shard as usize].task_finished(now, tag);
                    let (node, local) = self.locate(shard);
                    self.engines[node].handle_cpu_done(now, local, id);
                    self.drain(now, shard);
                }
                if ended.polls {
                    self.poll(now, shard);
                }
            }
            Event::IoDone { node, tag } => {
                let hardware = &mut self.nodes[node as usize];
                if let Some(next) = hardware.device.complete(now, &mut hardware.disk_rng) {
                    self.kernel.schedule_at(
                        next.at,
                        Event::IoDone {
                            node,
                            tag: next.tag,
                        },
                    );
                }
                let shard = (tag >> 32) as u32;
                let key = (tag & 0xFFFF_FFFF) as u32;
                let state = &mut self.shards[shard as usize];
                let class = state.io_in_flight[key as usize].2;
                state.time_spent.io[usize::from(class)].device.end(now);
                if self.nodes[node as usize].disk_failed {
                    self.failed_io(now, shard, key);
                    return;
                }
                self.arrive(now, shard, Inbound::IoDone { key });
            }
            Event::ShardTimer { shard } => {
                let state = &mut self.shards[shard as usize];
                state.timer.fired(now);
                if !state.timer_in_inbox {
                    self.arrive(now, shard, Inbound::Timer);
                }
            }
            Event::ActionDue { index } => self.action_due(now, index),
            Event::ActionStep => self.action_step(now),
            Event::NodeTimer { node } => {
                self.nodes[node as usize].node_timer.fired(now);
                self.engines[node as usize].handle_node_timeout(now);
                self.drain_node(now, node);
                self.rearm_node_timer(node);
            }
            Event::GossipArrives {
                node,
                from,
                message,
                ..
            } => {
                self.engines[node as usize].handle_gossip(now, from, *message);
                self.drain_node(now, node);
            }
            Event::FaultStarts { fault } => self.fault_starts(now, fault),
            Event::FaultEnds { fault } => self.fault_ends(now, fault),
            Event::FlapSwitch { fault, off } => self.flap_switch(now, fault, off),
            Event::IntervalTick => unreachable!("handled by the run loop"),
        }
    }

    /// Data mode, once the run has been quiet long enough for the hints
    /// to go: the end-of-run replica check (`crate::check`'s
    /// `replicas.rs`), kept in the consistency check for its checker.
    fn check_replicas(&mut self, end: SimTime) {
        let Some(check) = self.consistency.as_ref() else {
            return;
        };
        if !check::replica_check_applies(
            &self.plan,
            self.placement.ownership(),
            check.last_write_at,
            end,
        ) {
            return;
        }
        let redirected = self.redirected_from_pending();
        let result = check::compare_replicas(
            check,
            &redirected,
            |key, replicas| self.placement.replicas(key, replicas),
            |node, key| self.held_version(node, key),
        );
        if let Some(check) = self.consistency.as_mut() {
            check.replicas = Some(result);
        }
    }

    /// Data mode: the timestamp of the newest version of `key` node `node`
    /// holds (0: none), `None` if the key's shard is not simulated.
    pub(super) fn held_version(&self, node: u32, key: u64) -> Option<u64> {
        let shard = self.placement.shard_of(engine::key_token(key));
        if shard >= self.simulated_shards {
            return None;
        }
        let shard = &self.engines[node as usize].shards()[shard as usize];
        Some(
            shard
                .local_version(key)
                .flatten()
                .map_or(0, |version| version.timestamp),
        )
    }

    /// Data mode: how many of `key`'s replicas, natural and pending, hold
    /// version `timestamp` or a newer one; a replica that crashed at or
    /// after `since`, or whose shard is not simulated, counts as holding
    /// it (see `crate::check::ThinAnswer`).
    pub(super) fn holders(&self, key: u64, timestamp: u64, since: SimTime) -> u32 {
        let Some(check) = self.consistency.as_ref() else {
            return 0;
        };
        let token = engine::key_token(key);
        self.placement
            .replica_nodes(token)
            .iter()
            .chain(self.placement.pending_nodes(token))
            .filter(|&&node| {
                check.crashed_since(node, since)
                    || self
                        .held_version(node, key)
                        .is_none_or(|held| held >= timestamp)
            })
            .count() as u32
    }

    /// Whether a topology change explains a read of `key` that missed
    /// version `timestamp`: some node streamed it from a node that lacked
    /// it, or a hint for it was replayed while its replica was pending.
    pub(super) fn stale_by_topology(&self, key: u64, timestamp: u64) -> bool {
        let Some(check) = self.consistency.as_ref() else {
            return false;
        };
        check.row_streamed_stale(key, timestamp)
            || self
                .engines
                .iter()
                .flat_map(|node| node.shards())
                .any(|shard| {
                    shard
                        .hints_redirected_from_pending()
                        .iter()
                        .any(|&(hinted, _, version)| hinted == key && version == timestamp)
                })
    }

    /// (key, node, timestamp) of every hint a node replayed to the natural
    /// replicas because its destination was still pending for the key.
    fn redirected_from_pending(&self) -> std::collections::HashSet<(u64, u32, u64)> {
        self.engines
            .iter()
            .flat_map(|node| node.shards())
            .flat_map(|shard| shard.hints_redirected_from_pending().iter().copied())
            .collect()
    }

    fn finish(mut self, wall_seconds: f64) -> RunOutcome {
        let end = self.kernel.now();
        self.absorb_op_deltas();
        self.check_replicas(end);
        let mut server = ServerLatencies::default();
        for node in &self.server {
            server.merge_totals(node);
        }
        // c-s divides a `duration=` load's operations by its duration
        // (its run's clock), not by the span from the first operation to
        // the last reply, which clients stuck on a stalled cluster would
        // shrink to a fraction of the load: the window of such a load runs
        // at least to its end (or the run's, if that came first).
        let mut op_windows = self.op_windows.clone();
        for (load, plan) in self.loads.iter_mut().zip(&self.plan.loads) {
            let (StopPlan::Duration(duration), Some(started)) = (plan.stop, load.started_at) else {
                continue;
            };
            let Some((first, last)) = load.window else {
                continue;
            };
            let window = (first, last.max((started + duration).min(end)));
            load.window = Some(window);
            for (kind, ops) in load.kinds.iter().zip(&load.ops) {
                if ops.count > 0 {
                    if let Some(global) = self.ops.iter().position(|ops| ops.kind == *kind) {
                        widen(&mut op_windows[global], window.0, window.1);
                    }
                }
            }
        }
        let op_windows = op_windows
            .iter()
            .map(|window| window.unwrap_or((SimTime::ZERO, SimTime::ZERO)))
            .collect();
        // The steps of a thread search that stopped before them never ran:
        // the outcome and its plan hold the loads that did.
        let ran: Vec<bool> = self
            .plan
            .loads
            .iter()
            .zip(&self.loads)
            .map(|(plan, load)| plan.search.is_none() || load.started_at.is_some())
            .collect();
        let searches = thread_searches(&self.plan.loads, &self.loads);
        let failures: Vec<_> = (0..self.loads.len())
            .map(|load| self.load_failures(load))
            .collect();
        let loads = self
            .loads
            .into_iter()
            .zip(failures)
            .zip(&ran)
            .filter(|(_, ran)| **ran)
            .map(|((load, failures), _)| LoadOutcome {
                window: load.window.unwrap_or((SimTime::ZERO, SimTime::ZERO)),
                ops: load.ops,
                intervals: load.intervals,
                failures,
            })
            .collect();
        keep_loads_that_ran(&mut self.plan.loads, &ran);
        let mut time_spent = TimeSpent::default();
        for process in &self.processes {
            time_spent.client.merge(&process.handoffs);
        }
        for shard in &self.shards {
            time_spent.merge(&shard.time_spent);
        }
        let gc = self
            .shards
            .iter()
            .filter_map(|shard| match &shard.cpu {
                ShardCpu::Jvm { node, .. } => Some(*node.gc_stats()),
                ShardCpu::Reactor(_) => None,
            })
            .collect();
        let g1_end = self
            .shards
            .iter()
            .filter_map(|shard| match &shard.cpu {
                ShardCpu::Jvm { node, .. } => Some(node.g1_history()),
                ShardCpu::Reactor(_) => None,
            })
            .collect();
        let stage_cpu = self
            .shards
            .iter()
            .filter_map(|shard| match &shard.cpu {
                ShardCpu::Jvm { node, .. } => {
                    Some(models::jvm::Stage::ALL.map(|stage| node.stage_cpu(stage)))
                }
                ShardCpu::Reactor(_) => None,
            })
            .collect();
        let shared_pool = self
            .shards
            .iter()
            .filter_map(|shard| match &shard.cpu {
                ShardCpu::Jvm { node, .. } if node.in_shared_pool(models::jvm::Stage::Mutation) => {
                    Some(SharedPoolTally {
                        spin_cpu: node.spin_cpu(),
                        runs: node.shared_pool_runs(),
                        event_loop_runs: node.event_loop_runs(),
                        spinning: node.spinning_time(end),
                    })
                }
                _ => None,
            })
            .collect();
        RunOutcome {
            searches,
            end,
            ops: self.ops,
            op_windows,
            time_spent,
            gc,
            g1_end,
            stage_cpu,
            shared_pool,
            loads,
            timeseries: self.timeseries,
            consistency: self.consistency,
            shards: self
                .engines
                .iter()
                .flat_map(|node| node.shards())
                .map(|shard| ShardOutcome {
                    node: shard.config().address.node,
                    sstables: shard.sstables().to_vec(),
                    stats: shard.stats(),
                    hints: shard.hint_stats(),
                })
                .collect(),
            events: self.kernel.events_processed(),
            event_counts: self.event_counts,
            event_log: self.event_log,
            messages_lost: MessagesLost {
                at_nics: self.nodes.iter().map(|node| node.nic.messages_lost()).sum(),
                to_partitions: self.nodes.iter().map(|node| node.partition_losses).sum(),
            },
            wall_seconds,
            trace: self.trace.map(|mut trace| {
                trace.finish();
                *trace
            }),
            parallelism: self.parallelism.map(|probe| probe.report()),
            plan: self.plan,
            server,
        }
    }
}

/// Process `process` of `load` when `fraction` of every node's shards are
/// simulated (1.0: all): its rate plan, threads and operation count. The
/// load's totals over its processes are scaled by `fraction` and spread
/// back over them (the first processes take the remainder), so a sampled
/// run offers each simulated shard what the full cluster offers a shard:
/// rate limits and fixed rates times `fraction`, threads (the closed
/// loop's concurrency) rounded to whole threads, at least one per process.
fn process_share(load: &LoadPlan, process: u32, fraction: f64) -> (RatePlan, Option<u32>, u64) {
    let share = |per_process: u64| -> u64 {
        let total = (per_process as f64 * f64::from(load.processes) * fraction).round() as u64;
        let processes = u64::from(load.processes);
        total / processes + u64::from(u64::from(process) < total % processes)
    };
    let threads = load.threads().map(|threads| {
        u32::try_from(share(u64::from(threads)))
            .unwrap_or(u32::MAX)
            .max(1)
    });
    let rate = match load.rate {
        RatePlan::ClosedLoop {
            limit_ops_per_s, ..
        } => RatePlan::ClosedLoop {
            threads: threads.unwrap_or(1),
            limit_ops_per_s: limit_ops_per_s.map(|limit| limit * fraction),
        },
        RatePlan::Throttled { ops_per_s, .. } => RatePlan::Throttled {
            threads: threads.unwrap_or(1),
            ops_per_s: ops_per_s * fraction,
        },
        RatePlan::Fixed { ops_per_s, .. } => RatePlan::Fixed {
            ops_per_s: ops_per_s * fraction,
            threads,
        },
    };
    let operations = match load.stop {
        StopPlan::Count(count) => share(count),
        StopPlan::Duration(_) | StopPlan::Uncertainty { .. } => 0,
    };
    (rate, threads, operations)
}

impl Simulation {
    /// Takes in what every client process recorded since the last time
    /// ([`crate::metrics::OpDelta`]): into its load's metrics and the
    /// run's, windows widened. Done where they are read (the interval
    /// tick, a load's end, the run's end); sums, so the processes' order
    /// does not matter.
    fn absorb_op_deltas(&mut self) {
        for process in &mut self.processes {
            let load = &mut self.loads[process.load as usize];
            for (load_op, delta) in process.op_deltas.iter_mut().enumerate() {
                if delta.is_empty() {
                    continue;
                }
                let global = usize::from(load.global_ops[load_op]);
                load.ops[load_op].absorb(delta);
                self.ops[global].absorb(delta);
                if let Some((first, last)) = delta.window() {
                    widen(&mut load.window, first, last);
                    widen(&mut self.op_windows[global], first, last);
                }
                delta.clear();
            }
        }
    }
}

/// Extends an optional (first, last) window to cover `from..to`.
fn widen(window: &mut Option<(SimTime, SimTime)>, from: SimTime, to: SimTime) {
    *window = Some(match *window {
        Some((first, last)) => (first.min(from), last.max(to)),
        None => (from, to),
    });
}

/// Rate over a window, rounded for reports.
pub fn ops_per_second(count: u64, window: (SimTime, SimTime)) -> f64 {
    let seconds = (window.1 - window.0).as_secs_f64();
    if seconds <= 0.0 {
        0.0
    } else {
        round3(count as f64 / seconds)
    }
}

/// A cluster for the unit tests below: `nodes` Scylla 2.2 i3.large nodes
/// of `shards` shards with `memory_per_shard` bytes each (and as much per
/// node), `costs`, RF 1, everything else at its default.
#[cfg(test)]
fn test_cluster(
    nodes: u32,
    shards: u32,
    memory_per_shard: u64,
    costs: models::cost::CostTable,
    connection_landing: bool,
) -> ClusterPlan {
    use crate::preset::Preset;
    use models::nvme::NvmeProfile;
    ClusterPlan {
        preset: Preset::Scylla2_2,
        nodes,
        instance: "i3.large".into(),
        shards_per_node: shards,
        memory_per_shard_bytes: memory_per_shard,
        memory_per_node_bytes: memory_per_shard,
        io: IoScheduling::for_preset(Preset::Scylla2_2, &NvmeProfile::i3_drive(), shards),
        device: NvmeProfile::i3_drive(),
        nic_gbps: 10.0,
        costs,
        connection_landing,
        cpu: CpuScheduling::SCYLLA_2_2,
        controllers: Controllers::default(),
        compaction_enforce_min_threshold: false,
        compaction: engine::compaction::CompactionStrategy::default(),
        concurrent_compactors: None,
        compaction_throughput_bytes_per_sec: None,
        phi_convict_threshold: engine::gossip::PHI_CONVICT_THRESHOLD,
        hints: None,
        planted: engine::planted::Planted::NONE,
        preload: None,
        data_mode: false,
        compression_chunk_bytes: None,
        partition_bytes: None,
        speculative_retry: engine::speculation::SpeculativeRetry::DEFAULT,
        read_repair_chance: 0.1,
        row_cache: None,
        page_cache: None,
        network_latency: models::network::ONE_WAY_LATENCY,
        network_jitter: models::network::JITTER_MEDIAN,
        commitlog: CommitlogPlan::default(),
        replication_factor: 1,
        topology: TopologyPlan::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{ColumnPlan, KeyPlan, OpMix, RatePlan};

    use crate::report::Summary;
    use models::cost::CostTable;
    use models::distribution::SizeDistribution;

    #[test]
    fn spans_total_their_lengths_and_count_open_ones_to_the_time_asked() {
        let at = |ms: u64| SimTime::ZERO + SimDuration::from_millis(ms);
        let mut spans = Spans::default();
        spans.start(at(1));
        spans.start(at(2));
        spans.end(at(4)); // Either one: the total is the same.
        assert_eq!(spans.total_ns(at(4)), 5_000_000, "3 ms closed + 2 ms open");
        spans.end(at(10));
        assert_eq!(spans.total_ns(at(50)), 11_000_000, "3 + 8 ms, both closed");
        let tag = task_tag(TaskId(12_345), 9);
        assert_eq!(tag >> TASK_KIND_BITS, 12_345);
        assert_eq!(tag & ((1 << TASK_KIND_BITS) - 1), 9);
    }

    fn small_plan(seed: u64) -> RunPlan {
        RunPlan {
            scenario: "unit".into(),
            seed,
            duration: None,
            interval: SimDuration::from_millis(100),
            cluster: test_cluster(2, 2, 64 * 1024 * 1024, CostTable::scylla(), true),
            loads: vec![LoadPlan {
                name: "write".into(),
                command: String::new(),
                processes: 2,
                rate: RatePlan::ClosedLoop {
                    threads: 16,
                    limit_ops_per_s: None,
                },
                operation: OpMix::Only(OpKind::Write),
                columns: ColumnPlan::Columns {
                    count: SizeDistribution::Fixed(1),
                    size: SizeDistribution::Fixed(1024),
                },
                keys: KeyPlan::Sequential {
                    first: 1,
                    last: 1_000_000,
                },
                stop: StopPlan::Count(20_000),
                start: StartPlan::At(SimDuration::ZERO),
                loader: "c4.4xlarge".into(),
                loader_nic_gbps: 5.0,
                tries: 10,
                ignore_errors: true,
                client_timeout: SimDuration::from_secs(12),
                routing: Routing::TokenAware,
                consistency: engine::ConsistencyLevel::One,
                client: crate::load::Client::CassandraStress,
                search: None,
                reporting: Default::default(),
            }],
            notes: Vec::new(),
            server_totals_from: SimDuration::ZERO,
            faults: Vec::new(),
            operations: Vec::new(),
        }
    }

    /// A mechanism that asks for an event in the past stops the run with
    /// an error naming it, where the kernel used to panic.
    #[test]
    fn an_event_in_the_past_stops_the_run_with_an_error_naming_its_mechanism() {
        let mut simulation = Simulation::new(small_plan(1));
        let one_second = SimTime::ZERO + SimDuration::from_secs(1);
        simulation.run_until(one_second, &mut |_| {});
        assert!(simulation.refusal().is_ok());
        let now = simulation.kernel.now();
        simulation
            .kernel
            .schedule_at(SimTime::ZERO, Event::IntervalTick);
        let processed = simulation.kernel.events_processed();
        simulation.run_until(one_second + SimDuration::from_secs(1), &mut |_| {});
        assert!(
            simulation.kernel.events_processed() <= processed + 1,
            "the run stops at once"
        );
        let error = simulation.refusal().expect_err("refused");
        assert_eq!(error.mechanism, EventKind::IntervalTick);
        assert_eq!(error.at, now);
        let message = error.to_string();
        assert!(
            message
                .contains("interval-tick (metrics) asked for an event due in the past (due at 0")
                && !message.contains('\n'),
            "{message}"
        );
    }

    #[test]
    fn a_bounded_load_completes_every_operation_and_flushes() {
        let outcome = run(small_plan(1), &mut |_| {}).expect("the run completes");
        assert_eq!(outcome.ops[0].count, 40_000, "2 processes x n=20000");
        assert!(!outcome.timeseries.rows.is_empty());
        // 40,000 x ~1.2 KB over 4 shards of 64 MiB: each shard passes its
        // 9 MB soft limit several times.
        let sstables_column = outcome
            .timeseries
            .columns
            .iter()
            .position(|c| c == "node0_sstables")
            .unwrap();
        let last_row = outcome.timeseries.rows.last().unwrap();
        let sstables: u64 = last_row[sstables_column].parse().unwrap();
        assert!(sstables >= 2, "flushes wrote SSTables: {last_row:?}");
    }

    #[test]
    fn every_operation_pays_its_clients_three_thread_hand_offs() {
        let outcome = run(small_plan(1), &mut |_| {}).expect("the run completes");
        let client = outcome.time_spent.client;
        // One hand-off as the request leaves, two as its reply comes back.
        assert_eq!(client.handoffs, 3 * outcome.ops[0].count);
        // Each: the 10-us hand-off CPU and a wake-up of mean ~10.5 us.
        let mean_us = client.total_ns as f64 / client.handoffs as f64 / 1e3;
        let expected = models::jvm::HANDOFF_COST.as_nanos() as f64 / 1e3 + 10.5;
        assert!((mean_us - expected).abs() < 0.5, "{mean_us} us a hand-off");
    }

    #[test]
    fn a_sampled_time_series_reports_whole_nodes() {
        // 2 of 4 shards per node simulated: a node's bytes and counts are
        // twice its simulated shards' sums.
        let mut plan = small_plan(1);
        plan.cluster.shards_per_node = 4;
        plan.cluster.topology.simulated_shards_per_node = Some(2);
        plan.cluster.memory_per_shard_bytes = 16 * 1024 * 1024;
        plan.loads[0].stop = StopPlan::Count(60_000);
        let outcome = run(plan, &mut |_| {}).expect("the run completes");
        let series = &outcome.timeseries;
        let column = |name: &str| {
            let index = series.column(name).unwrap();
            series.rows.iter().map(move |row| &row[index])
        };
        let whole = |cell: &String| cell.parse::<u64>().unwrap();
        for node in 0..2u32 {
            let shards = || outcome.shards.iter().filter(|shard| shard.node == node);
            let sum = |figure: fn(&engine::ShardStats) -> u64| -> u64 {
                shards().map(|shard| figure(&shard.stats)).sum()
            };
            // Gauges at the last tick, which is the end of the run.
            let last =
                |name: &str| whole(column(&format!("node{node}_{name}")).next_back().unwrap());
            assert_eq!(last("memtable_bytes"), 2 * sum(|s| s.memtable_bytes));
            assert_eq!(
                last("virtual_dirty_bytes"),
                2 * sum(|s| s.virtual_dirty_bytes)
            );
            assert_eq!(last("sstables"), 2 * sum(|s| s.sstable_count));
            // Counts over intervals add up to the run's.
            let flushes: u64 = column(&format!("node{node}_flushes")).map(whole).sum();
            assert!(sum(|s| s.flushes_completed) > 0, "the shards flushed");
            assert_eq!(flushes, 2 * sum(|s| s.flushes_completed));
        }
    }

    #[test]
    fn the_same_seed_gives_identical_results_and_another_seed_does_not() {
        let render = |seed| {
            let outcome = run(small_plan(seed), &mut |_| {}).expect("the run completes");
            let summary = serde_json::to_string(&Summary::of(&outcome)).unwrap();
            (summary, outcome.timeseries.to_csv())
        };
        let first = render(7);
        assert_eq!(first, render(7));
        let other = render(8);
        assert_ne!(first.0, other.0, "a different seed changes the latencies");
    }

    /// An attempt's id gives back its process, slot and serial, and leaves
    /// the two top bits the engine marks its own ids with clear.
    #[test]
    fn an_attempts_id_round_trips_and_leaves_the_engines_bits_clear() {
        for at in [
            AttemptRef {
                process: 0,
                slot: 0,
                serial: 0,
            },
            AttemptRef {
                process: crate::scenario::MAX_RUN_PROCESSES - 1,
                slot: (1 << SLOT_BITS) - 1,
                serial: SERIAL_MASK,
            },
            AttemptRef {
                process: 7,
                slot: 12_345,
                serial: 999_999,
            },
        ] {
            let id = attempt_id(at);
            assert_eq!(attempt_of(id), at);
            assert_eq!(id.0 >> 62, 0, "{at:?}");
        }
    }

    #[test]
    fn what_reaches_a_busy_shard_waits_for_its_reactors_next_poll() {
        let mut plan = small_plan(1);
        plan.loads.clear();
        let mut sim = Simulation::new(plan);
        let write = |serial: u32, key: u64| Event::RequestArrives {
            shard: 0,
            request: ClientRequest {
                id: attempt_id(AttemptRef {
                    process: 0,
                    slot: 0,
                    serial,
                }),
                operation: Operation::Write {
                    rows: 1,
                    key,
                    value_bytes: 1024,
                    timestamp: 1,
                },
                consistency: engine::ConsistencyLevel::One,
            },
            // No client awaits it (the plan has no loads): its reply is
            // dropped.
            deadline: SimTime::ZERO,
            wire_bytes: 0,
        };
        let start = SimTime::from_nanos(1_000_000);
        sim.kernel.advance_to(start);
        // An idle reactor takes a request in at once and starts on it.
        sim.handle(start, write(1, 1));
        assert!(sim.shards[0].cpu.in_period() && sim.shards[0].inbox.is_empty());
        // One arriving a microsecond later waits: the reactor is in a period.
        let later = start + SimDuration::from_micros(1);
        sim.kernel.advance_to(later);
        sim.handle(later, write(2, 2));
        assert_eq!(sim.shards[0].inbox.len(), 1, "the second request waits");
        let end = start + SimDuration::from_secs(1);
        while !sim.shards[0].inbox.is_empty() {
            let (now, event) = sim.kernel.pop_until(end).expect("the shard polls");
            let on_shard_0 = matches!(event, Event::CpuRunEnd { shard: 0 });
            sim.handle(now, event);
            // What the shard's tasks sent waits only while a period runs.
            for state in &sim.shards {
                assert!(state.cpu.in_period() || state.outbox.is_empty());
            }
            if sim.shards[0].inbox.is_empty() {
                assert!(on_shard_0, "taken in when a run ended, at {now}");
                assert!(now > later);
            }
        }
    }

    #[test]
    fn a_rate_limit_holds_the_process_to_its_rate() {
        let mut plan = small_plan(1);
        plan.loads[0].processes = 1;
        // Threads enough that the limit binds: at this rate the shards
        // flush and compact, and a closed loop of 32 threads, 1.6 ms per
        // operation each, falls behind when their tasks hold a reactor's
        // period (writes p99 ~2.6 ms).
        plan.loads[0].rate = RatePlan::ClosedLoop {
            threads: 64,
            limit_ops_per_s: Some(20_000.0),
        };
        plan.loads[0].stop = StopPlan::Duration(SimDuration::from_secs(2));
        let outcome = run(plan, &mut |_| {}).expect("the run completes");
        let rate = ops_per_second(outcome.ops[0].count, outcome.op_windows[0]);
        assert!((rate - 20_000.0).abs() / 20_000.0 < 0.005, "rate {rate}");
    }
}

#[cfg(test)]
mod workload_tests {
    use super::*;
    use crate::load::{ColumnPlan, KeyPlan, OpMix, RatePlan};

    use models::cost::CostTable;
    use models::distribution::{KeyDistribution, SizeDistribution};

    /// One node with one shard whose every write costs 1 ms of CPU: it can
    /// serve 1,000 writes/s and no more.
    fn slow_server(rate: RatePlan, stop: StopPlan) -> RunPlan {
        let mut costs = CostTable::scylla();
        costs.write_request_ns = 1_000_000;
        costs.write_ns_per_byte = 0.0;
        RunPlan {
            scenario: "slow".into(),
            seed: 3,
            duration: None,
            interval: SimDuration::from_secs(1),
            cluster: test_cluster(1, 1, 1024 * 1024 * 1024, costs, false),
            loads: vec![load("only", rate, stop, StartPlan::At(SimDuration::ZERO))],
            notes: Vec::new(),
            server_totals_from: SimDuration::ZERO,
            faults: Vec::new(),
            operations: Vec::new(),
        }
    }

    #[test]
    fn dropping_a_search_step_that_never_ran_renumbers_the_loads_after_it() {
        let rate = RatePlan::ClosedLoop {
            threads: 4,
            limit_ops_per_s: None,
        };
        let stop = StopPlan::Count(10);
        let mut loads = vec![
            load("a", rate, stop, StartPlan::At(SimDuration::ZERO)),
            load("s1", rate, stop, StartPlan::After(0)),
            load("s2", rate, stop, StartPlan::After(1)),
            load("s3", rate, stop, StartPlan::After(2)),
            load("b", rate, stop, StartPlan::After(3)),
        ];
        keep_loads_that_ran(&mut loads, &[true, true, true, false, true]);
        let names: Vec<&str> = loads.iter().map(|load| load.name.as_str()).collect();
        assert_eq!(names, ["a", "s1", "s2", "b"]);
        let starts: Vec<StartPlan> = loads.iter().map(|load| load.start).collect();
        assert_eq!(
            starts,
            [
                StartPlan::At(SimDuration::ZERO),
                StartPlan::After(0),
                StartPlan::After(1),
                // After the last step that ran.
                StartPlan::After(2),
            ]
        );
    }

    fn load(name: &str, rate: RatePlan, stop: StopPlan, start: StartPlan) -> LoadPlan {
        LoadPlan {
            name: name.into(),
            command: String::new(),
            processes: 1,
            rate,
            operation: OpMix::Only(OpKind::Write),
            columns: ColumnPlan::Columns {
                count: SizeDistribution::Fixed(1),
                size: SizeDistribution::Fixed(100),
            },
            keys: KeyPlan::Distribution(KeyDistribution::uniform(1, 1_000_000).unwrap()),
            stop,
            start,
            loader: "c4.4xlarge".into(),
            loader_nic_gbps: 5.0,
            tries: 10,
            ignore_errors: true,
            client_timeout: SimDuration::from_secs(12),
            routing: Routing::TokenAware,
            consistency: engine::ConsistencyLevel::One,
            client: crate::load::Client::CassandraStress,
            search: None,
            reporting: Default::default(),
        }
    }

    #[test]
    fn an_open_loop_shows_the_backlog_as_latency_and_a_closed_loop_hides_it() {
        let stop = StopPlan::Duration(SimDuration::from_secs(4));
        let open = run(
            slow_server(
                RatePlan::Fixed {
                    ops_per_s: 2000.0,
                    threads: Some(4),
                },
                stop,
            ),
            &mut |_| {},
        )
        .expect("the run completes");
        let closed = run(
            slow_server(
                RatePlan::ClosedLoop {
                    threads: 4,
                    limit_ops_per_s: Some(2000.0),
                },
                stop,
            ),
            &mut |_| {},
        )
        .expect("the run completes");
        let open_p99 = LatencySummary::of(&open.ops[0].total).p99;
        let closed_p99 = LatencySummary::of(&closed.ops[0].total).p99;
        // The server does 1,000/s: the open loop falls 1,000 operations
        // behind every second, so its late operations wait seconds, counted
        // from when they should have started.
        assert!(open_p99 > 1000.0, "open loop p99 {open_p99} ms");
        // The closed loop waits for the server instead: 4 threads, ~4 ms.
        assert!(closed_p99 < 10.0, "closed loop p99 {closed_p99} ms");
        let closed_rate = ops_per_second(closed.ops[0].count, closed.op_windows[0]);
        assert!(
            (closed_rate - 1000.0).abs() < 20.0,
            "the closed loop runs at the server's pace: {closed_rate}"
        );
    }

    /// A server that answers no write in time (5 s a write), clients of
    /// `threads` threads with a 1-s timeout and two tries, for 10 s.
    fn stalled_server(threads: u32) -> RunPlan {
        let mut plan = slow_server(
            RatePlan::ClosedLoop {
                threads,
                limit_ops_per_s: None,
            },
            StopPlan::Duration(SimDuration::from_secs(10)),
        );
        plan.cluster.costs.write_request_ns = 5_000_000_000; // 5 s per write
        plan.loads[0].client_timeout = SimDuration::from_secs(1);
        plan.loads[0].tries = 2;
        plan.duration = Some(SimDuration::from_secs(10));
        plan
    }

    #[test]
    fn a_stalled_server_makes_the_client_time_out_retry_and_count_errors() {
        let plan = stalled_server(1);
        let outcome = run(plan, &mut |_| {}).expect("the run completes");
        let write = &outcome.loads[0].ops[0];
        // Every operation: a try, a 1 s timeout, a retry, a 1 s timeout, an error.
        assert_eq!(write.count, 0, "no write was answered within its timeout");
        assert_eq!(write.errors, 5, "10 s / (2 tries x 1 s)");
        assert_eq!(write.timeouts, 10);
    }

    #[test]
    fn without_ignore_an_operation_failing_every_try_ends_its_process() {
        // As the test above, but three threads, and c-s's default: no
        // `-errors ignore`. The first operations fail together at 2 s
        // (two tries of 1 s each); c-s's process hands out nothing after,
        // so the load ends there with three errors, not fifteen.
        let mut plan = stalled_server(3);
        plan.loads[0].ignore_errors = false;
        let outcome = run(plan, &mut |_| {}).expect("the run completes");
        let load = &outcome.loads[0];
        assert_eq!(load.ops[0].errors, 3, "each thread's one operation");
        assert_eq!(load.ops[0].timeouts, 6);
        assert_eq!(load.failures.len(), 1, "one process, ended once");
        let (process, at) = load.failures[0];
        assert_eq!(process, 0);
        assert!(
            at.as_secs_f64() > 1.9 && at.as_secs_f64() < 2.2,
            "the first failure, at the second timeout: {at:?}"
        );
        let summary = crate::report::Summary::of(&outcome);
        let text = crate::report::results_text(&summary.loads, &summary.ops, 10.0);
        assert!(text.contains("FAILURE"), "{text}");
    }

    #[test]
    fn round_robin_routing_forwards_through_a_coordinator_and_costs_a_hop() {
        let run_with = |routing| {
            let mut plan = slow_server(
                RatePlan::ClosedLoop {
                    threads: 8,
                    limit_ops_per_s: Some(5_000.0),
                },
                StopPlan::Count(5_000),
            );
            plan.cluster.costs = CostTable::scylla();
            plan.cluster.nodes = 3;
            plan.cluster.shards_per_node = 2;
            plan.cluster.connection_landing = true;
            plan.loads[0].routing = routing;
            let outcome = run(plan, &mut |_| {}).expect("the run completes");
            assert_eq!(outcome.ops[0].count, 5_000, "every write is answered");
            LatencySummary::of(&outcome.ops[0].total).mean
        };
        let direct = run_with(Routing::ShardAware);
        let landed = run_with(Routing::TokenAware);
        let forwarded = run_with(Routing::RoundRobin);
        // Token-aware without shards: half the requests land off their key's
        // shard and hop to it (a cross-shard round trip; its CPU is small).
        assert!(
            landed > direct + 0.005,
            "token-aware {landed} ms vs shard-aware {direct} ms"
        );
        // Round-robin: 5 in 6 requests land on another node or shard: one
        // more network (or cross-shard) round trip and the coordinator's CPU.
        assert!(
            forwarded > landed + 0.05,
            "round-robin {forwarded} ms vs token-aware {landed} ms"
        );
    }

    #[test]
    fn a_limit_delivers_its_rate_whether_or_not_threads_would_allow_more() {
        for threads in [20, 400] {
            let mut plan = slow_server(
                RatePlan::ClosedLoop {
                    threads,
                    limit_ops_per_s: Some(20_000.0),
                },
                StopPlan::Duration(SimDuration::from_secs(60)),
            );
            plan.cluster.costs.write_request_ns = 10_000;
            plan.cluster.shards_per_node = 4;
            let outcome = run(plan, &mut |_| {}).expect("the run completes");
            let rate = ops_per_second(outcome.ops[0].count, outcome.op_windows[0]);
            assert!(
                (rate - 20_000.0).abs() / 20_000.0 < 0.005,
                "{threads} threads: {rate} ops/s"
            );
        }
    }

    #[test]
    fn a_pure_open_loop_issues_at_its_rate_whatever_is_outstanding() {
        let plan = slow_server(
            RatePlan::Fixed {
                ops_per_s: 500.0,
                threads: None,
            },
            StopPlan::Duration(SimDuration::from_secs(10)),
        );
        let outcome = run(plan, &mut |_| {}).expect("the run completes");
        assert_eq!(
            outcome.ops[0].count, 5000,
            "one operation every 2 ms for 10 s"
        );
        let p99 = LatencySummary::of(&outcome.ops[0].total).p99;
        assert!(p99 < 3.0, "under capacity the server keeps up: {p99} ms");
    }

    #[test]
    fn a_load_after_another_starts_when_the_first_has_finished() {
        let mut plan = slow_server(
            RatePlan::ClosedLoop {
                threads: 2,
                limit_ops_per_s: None,
            },
            StopPlan::Count(300),
        );
        plan.loads.push(load(
            "second",
            RatePlan::ClosedLoop {
                threads: 2,
                limit_ops_per_s: None,
            },
            StopPlan::Count(200),
            StartPlan::After(0),
        ));
        let outcome = run(plan, &mut |_| {}).expect("the run completes");
        let (first, second) = (&outcome.loads[0], &outcome.loads[1]);
        assert_eq!((first.ops[0].count, second.ops[0].count), (300, 200));
        assert!(
            second.window.0 >= first.window.1,
            "{:?} then {:?}",
            first.window,
            second.window
        );
        assert_eq!(
            outcome.ops[0].count, 500,
            "the run's totals cover both loads"
        );
    }
}
