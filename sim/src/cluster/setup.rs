//! What a run takes, resolved: the cluster's hardware, layout and software
//! (`ClusterPlan`), its ring (`TopologyPlan`), the table it starts with
//! (`Preload`, `TableStart`, `SteadyStart`), the controllers and the whole
//! `RunPlan`. `crate::plan` builds these from a scenario; the run loop
//! (`super`) only reads them.

use models::cassandra_stress::ReplicationStrategy;
use models::cost::CostTable;
use models::nvme::NvmeProfile;
use units::SimDuration;

use engine::Placement;

use super::{CpuScheduling, IoScheduling};
use crate::load::LoadPlan;
use crate::preset::Preset;
use crate::rng;

/// A node's hardware and layout, resolved from the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterPlan {
    /// Software preset.
    pub preset: Preset,
    /// Nodes.
    pub nodes: u32,
    /// Instance type name.
    pub instance: String,
    /// Shards per node.
    pub shards_per_node: u32,
    /// Memory per shard (`M`).
    pub memory_per_shard_bytes: u64,
    /// The node's RAM (the instance's, or its override).
    pub memory_per_node_bytes: u64,
    /// The node's data device.
    pub device: NvmeProfile,
    /// NIC bandwidth of each node, Gbit/s.
    pub nic_gbps: f64,
    /// CPU prices.
    pub costs: CostTable,
    /// Whether a message from a client or another node lands on a
    /// connection's shard (`engine::messaging`; Scylla, whose messaging
    /// service and 2018 clients were not shard-aware), or on the owner
    /// (Cassandra's one shard per node). [`ClusterPlan::landing`] has the
    /// rule with this cluster's shard counts.
    pub connection_landing: bool,
    /// How each shard's I/O queue orders the engine's I/O classes.
    pub io: IoScheduling,
    /// How each shard's core schedules the engine's work.
    pub cpu: CpuScheduling,
    /// The backlog controllers of each shard.
    pub controllers: Controllers,
    /// STCS compacts only buckets of at least min_threshold SSTables (2.1
    /// had no fallback to pairs of similar SSTables; 2.2 added it).
    pub compaction_enforce_min_threshold: bool,
    /// The table's compaction strategy (c-s's `-schema compaction(...)` or
    /// `[data] compaction`).
    pub compaction: engine::compaction::CompactionStrategy,
    /// `concurrent_compactors` (Cassandra; `None`: Scylla's compaction
    /// manager).
    pub concurrent_compactors: Option<u32>,
    /// `compaction_throughput_mb_per_sec` in bytes per second per node
    /// (Cassandra; `None`: unthrottled).
    pub compaction_throughput_bytes_per_sec: Option<u64>,
    /// `phi_convict_threshold` of every node's failure detector.
    pub phi_convict_threshold: f64,
    /// Hinted handoff (`None`: no hints).
    pub hints: Option<engine::hints::HintsSetup>,
    /// Planted bugs, for tests of the checkers only (`engine::planted`:
    /// none but in a test build).
    pub planted: engine::planted::Planted,
    /// Data on disk at the start (`[data]`).
    pub preload: Option<Preload>,
    /// Data mode: the engine keeps rows and reads return versions.
    pub data_mode: bool,
    /// The table's compression chunk, if it is compressed.
    pub compression_chunk_bytes: Option<u64>,
    /// A table of many-row partitions (a user profile's): a whole
    /// partition's SSTable bytes on average (`engine::ShardConfig`'s).
    pub partition_bytes: Option<u64>,
    /// The table's `speculative_retry`.
    pub speculative_retry: engine::speculation::SpeculativeRetry,
    /// The chance a coordinated read asks every replica: the larger of the
    /// table's `read_repair_chance` and `dclocal_read_repair_chance` (one
    /// datacenter).
    pub read_repair_chance: f64,
    /// The shards' row cache.
    pub row_cache: Option<engine::config::RowCacheSetup>,
    /// Cassandra's OS page cache.
    pub page_cache: Option<engine::config::PageCacheSetup>,
    /// One-way propagation latency between machines.
    pub network_latency: SimDuration,
    /// Median of the lognormal jitter added to each message's propagation.
    pub network_jitter: SimDuration,
    /// Commitlog settings (`[cluster.yaml]`).
    pub commitlog: CommitlogPlan,
    /// Replicas per key: the keyspace's replication factor (from `[data]`
    /// or the first load's `-schema replication(factor=N)`).
    pub replication_factor: u32,
    /// The token ring, racks, replication strategy and shard sampling.
    pub topology: TopologyPlan,
}

/// The ring and what of it is simulated (`[cluster]` `num_tokens`,
/// `racks`, `simulated_shards_per_node`; c-s's `-schema
/// replication(strategy=...)`).
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyPlan {
    /// Vnodes per node, drawn at random from the run seed's `ring` stream.
    pub num_tokens: u32,
    /// Rack of each node (empty: every node in rack 0). One datacenter.
    pub racks: Vec<u32>,
    /// The keyspace's replication strategy; its factor is
    /// [`ClusterPlan::replication_factor`].
    pub strategy: ReplicationStrategy,
    /// Representative-shard sampling: shards simulated per node (`None`:
    /// every shard).
    pub simulated_shards_per_node: Option<u32>,
}

impl Default for TopologyPlan {
    /// 256 vnodes, one rack, SimpleStrategy, every shard simulated.
    fn default() -> TopologyPlan {
        TopologyPlan {
            num_tokens: engine::ring::DEFAULT_NUM_TOKENS,
            racks: Vec::new(),
            strategy: ReplicationStrategy::SimpleStrategy,
            simulated_shards_per_node: None,
        }
    }
}

impl TopologyPlan {
    /// Distinct racks.
    pub fn rack_count(&self) -> usize {
        let mut racks = self.racks.clone();
        racks.sort_unstable();
        racks.dedup();
        racks.len().max(1)
    }
}

impl ClusterPlan {
    /// Shards simulated per node: all of them unless sampled.
    pub fn simulated_shards(&self) -> u32 {
        self.topology
            .simulated_shards_per_node
            .map_or(self.shards_per_node, |k| k.min(self.shards_per_node))
    }

    /// Where messages from clients and other nodes land, for the shards
    /// per node and the shards simulated.
    pub fn landing(&self) -> engine::Landing {
        if self.connection_landing {
            engine::Landing::ConnectionShard {
                shards_per_node: self.shards_per_node,
                simulated: self.simulated_shards(),
            }
        } else {
            engine::Landing::Owner
        }
    }

    /// The sampling factor: shards per node over shards simulated (1.0
    /// when every shard runs). Counts and rates are reported times this.
    pub fn sampling_scale(&self) -> f64 {
        f64::from(self.shards_per_node) / f64::from(self.simulated_shards())
    }

    /// True when only some shards of each node are simulated.
    pub fn sampled(&self) -> bool {
        self.simulated_shards() < self.shards_per_node
    }

    /// The keyspace's replication on the ring (one datacenter, id 0).
    pub fn replication(&self) -> engine::ring::Replication {
        match self.topology.strategy {
            ReplicationStrategy::SimpleStrategy => {
                engine::ring::Replication::simple(self.replication_factor)
            }
            ReplicationStrategy::NetworkTopologyStrategy => {
                engine::ring::Replication::network_topology([(0, self.replication_factor)])
            }
        }
    }

    /// The token ring of a run seeded with `seed`: every node's
    /// `num_tokens` vnodes drawn from the seed's `ring` stream.
    pub fn ring(&self, seed: u64) -> engine::ring::Ring {
        let nodes: Vec<engine::ring::NodeSpec> = (0..self.nodes)
            .map(|id| engine::ring::NodeSpec {
                id,
                rack: self.topology.racks.get(id as usize).copied().unwrap_or(0),
                dc: 0,
            })
            .collect();
        engine::ring::Ring::new(
            &nodes,
            self.topology.num_tokens,
            &mut rng::stream(seed, "ring"),
        )
        .expect("the scenario checks nodes and num_tokens")
    }

    /// Where keys live in a run seeded with `seed`.
    pub fn placement(&self, seed: u64) -> Placement {
        Placement::new(&self.ring(seed), &self.replication(), self.shards_per_node)
    }
}

/// The commitlog settings of every shard.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommitlogPlan {
    /// `commitlog_sync`.
    pub sync: engine::SyncMode,
    /// `commitlog_sync_period_in_ms`.
    pub sync_period: SimDuration,
    /// `commitlog_segment_size_in_mb`, in bytes.
    pub segment_bytes: u64,
    /// `commitlog_total_space_in_mb` per shard, in bytes (None: the shard's
    /// memory, Scylla's default).
    pub total_space_per_shard_bytes: Option<u64>,
}

impl Default for CommitlogPlan {
    /// scylla.yaml as shipped: periodic every 10 s, 32 MiB segments.
    fn default() -> CommitlogPlan {
        CommitlogPlan {
            sync: engine::SyncMode::Periodic,
            sync_period: SimDuration::from_secs(10),
            segment_bytes: 32 * 1024 * 1024,
            total_space_per_shard_bytes: None,
        }
    }
}

/// `[data]` resolved: a table spread evenly over every shard, laid out as
/// the table's compaction strategy leaves it once caught up
/// (`engine::Shard::preload_table`: size-tiered tiers from the shard's
/// flush size up, or leveled levels of 160 MiB SSTables).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preload {
    /// Partitions in the table.
    pub partitions: u64,
    /// SSTable bytes per partition.
    pub row_bytes: u64,
    /// First key.
    pub first_key: u64,
    /// Last key.
    pub last_key: u64,
    /// The caches start filled to their steady state (`[data] cache =
    /// "warm"`), not empty.
    pub warm_cache: bool,
    /// Where the table stands in its flush-and-compact cycle at the start.
    pub start: TableStart,
    /// Mid-cycle or windowed size-tiered tables: what the run's pilot
    /// measured to place the merges under way ([`super::run`] fills it in; `None`
    /// starts no merge).
    pub steady: Option<SteadyStart>,
}

/// Where a preloaded table stands in its flush-and-compact cycle when the
/// run starts (`[data] state` and `window`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TableStart {
    /// As compaction leaves it once caught up, memtables empty
    /// (`state = "compacted"`).
    Compacted,
    /// Each shard part-way through its cycle, as long into a write load
    /// (`state = "steady"`).
    Steady,
    /// Each shard at its own point of a measured window of this length
    /// that began compacted (`window`).
    Window(SimDuration),
}

/// How a mid-cycle start places the merges under way at the start
/// (`engine::MergePhases`), and the rates a window start carries its
/// shards forward at (`engine::PreloadState::Window`), from a pilot: the
/// first [`PILOT`] of the same run started compacted, where no compaction
/// runs, so what it measures (over its second half) is the foreground's
/// work alone.
///
/// A size-tiered tier merges for `duty = W / R` of its cycle, whatever the
/// tier: `W` is the SSTable bytes a shard's writes bring per second (what
/// its flushes write), `R` the input bytes a second a merge gets
/// through on one core in what the foreground leaves of the shard's
/// cores (`min(1, (1 - foreground) x cores) / compaction_ns_per_byte`;
/// Scylla's compaction group takes what the others leave; a JVM's
/// compaction thread runs on a core the requests leave idle). Compaction
/// I/O is taken as never the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyStart {
    /// Simulated seconds the pilot ran.
    pub pilot_seconds: f64,
    /// The pilot's mean CPU utilisation per shard (per core for a JVM).
    pub foreground_utilisation: f64,
    /// SSTable bytes a second per shard the writes bring (what their
    /// flushes write; the memtable holds them in more memory).
    pub flushed_bytes_per_s: f64,
    /// Compaction input bytes a second per shard in the CPU left over.
    pub compaction_bytes_per_s: f64,
    /// Fraction of its cycle each tier spends merging.
    pub merge_duty: f64,
}

/// The pilot's length ([`SteadyStart`]): the clients at their rates for a
/// few seconds.
pub const PILOT: SimDuration = SimDuration::from_secs(5);

/// The backlog controllers a preset (or the scenario's `[controller]`)
/// gives each shard; `None` where the version has none (Scylla 2.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Controllers {
    /// Drives the compaction group's shares.
    pub compaction: Option<engine::controller::BacklogController>,
    /// Drives the memtable-flush group's shares.
    pub flush: Option<engine::controller::BacklogController>,
}

/// Everything a run needs, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPlan {
    /// Scenario name.
    pub scenario: String,
    /// Run seed.
    pub seed: u64,
    /// Simulated time limit; `None` runs until every load finishes.
    pub duration: Option<SimDuration>,
    /// Time-series resolution.
    pub interval: SimDuration,
    /// The cluster.
    pub cluster: ClusterPlan,
    /// Load phases.
    pub loads: Vec<LoadPlan>,
    /// Injected faults, in the scenario's order.
    pub faults: Vec<crate::faults::Fault>,
    /// Topology operations, in the scenario's order: each starts at its
    /// `at` or when the one before it finishes, whichever is later, as an
    /// operator's script would run them (`crate::operations`).
    pub operations: Vec<crate::operations::Operation>,
    /// Things the user should know about how the scenario was read (e.g.
    /// options accepted without effect on the simulation).
    pub notes: Vec<String>,
    /// The coordinators' run-long latency histograms (`summary.json`'s
    /// `server_latency_ms`) take the intervals that end after this: zero
    /// counts the whole run; `twin validate` leaves a case's warm-up out,
    /// as it does from the client's figures.
    pub server_totals_from: SimDuration,
}
