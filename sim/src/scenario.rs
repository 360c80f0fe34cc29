//! Scenario files: the user's whole experiment in one TOML file.
//!
//! Parsing is strict: an unknown key, a missing required key, a malformed
//! duration or size, or a value out of range is an error naming the file, the
//! line, the field and the reason, on one line. Nothing is silently defaulted
//! that changes what is simulated; the defaults that exist (seed 1, interval
//! 1 s, one process per load) are printed with the resolved options at the
//! start of every run.
//!
//! The layout follows `design/SCENARIO.md`; sections that later issues add
//! are rejected as unknown keys until the mechanisms behind them exist.

use crate::overrides::Assignment;
use std::fmt;
use std::path::Path;

use models::instance::InstanceOverrides;
use serde::de::{self, Deserializer};
use serde::Deserialize;
use units::{parse_bytes, parse_duration, SimDuration};

/// A duration written as `"90m"`, `"500ms"`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HumanDuration(pub SimDuration);

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer).map_err(|_| {
            de::Error::custom("expected a duration string such as \"500ms\", \"60s\" or \"90m\"")
        })?;
        parse_duration(&text)
            .map(HumanDuration)
            .map_err(de::Error::custom)
    }
}

/// A size written as `"1KB"`, `"32MiB"`, `"1.9TB"` or a plain number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HumanBytes(pub u64);

impl<'de> Deserialize<'de> for HumanBytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(deserializer).map_err(|_| {
            de::Error::custom("expected a size such as \"1KB\", \"8GiB\" or a number of bytes")
        })? {
            Raw::Number(bytes) => Ok(HumanBytes(bytes)),
            Raw::Text(text) => parse_bytes(&text)
                .map(HumanBytes)
                .map_err(de::Error::custom),
        }
    }
}

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in reports.
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: Option<String>,
    /// Run seed (the `--seed` flag overrides it). Default 1.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Simulated time to run (the `--duration` flag overrides it). If absent,
    /// the run ends when every load has finished.
    #[serde(default)]
    pub duration: Option<HumanDuration>,
    /// Time-series and interval-line resolution. Default 1 s.
    #[serde(default)]
    pub interval: Option<HumanDuration>,
    /// The cluster under test.
    pub cluster: ClusterSection,
    /// Propagation between machines; same-AZ EC2 figures where absent.
    #[serde(default)]
    pub network: Option<NetworkSection>,
    /// Table options c-s's command line cannot set.
    #[serde(default)]
    pub table: Option<TableSection>,
    /// What the engine stores: rows (data mode) or sizes (volume mode).
    #[serde(default)]
    pub fidelity: Option<FidelitySection>,
    /// Data on disk before the first load (volume mode).
    #[serde(default)]
    pub data: Option<DataSection>,
    /// Backlog controller tuning; the preset's curves where absent.
    #[serde(default)]
    pub controller: Option<ControllerSection>,
    /// Load phases, as cassandra-stress command lines.
    #[serde(rename = "load", default)]
    pub loads: Vec<LoadSection>,
    /// Injected faults, a timeline (`crate::faults`).
    #[serde(rename = "fault", default)]
    pub faults: Vec<FaultSection>,
    /// Faults drawn from the seed (`[faults.random]`).
    #[serde(rename = "faults", default)]
    pub random_faults: Option<FaultsSection>,
    /// Topology operations, an operator's script (`crate::operations`).
    #[serde(rename = "action", default)]
    pub actions: Vec<ActionSection>,
    /// Topology operations drawn from the seed (`[actions.random]`).
    #[serde(rename = "actions", default)]
    pub random_actions: Option<ActionsSection>,
    /// What published run this scenario reproduces (`twin validate`'s
    /// cases); no effect on the simulation.
    #[serde(default)]
    pub validation: Option<ValidationSection>,
    /// The file's name and text, kept to point later errors at their line.
    #[serde(skip)]
    pub source: Source,
}

/// Where a scenario came from.
#[derive(Clone, Debug, Default)]
pub struct Source {
    /// The file name as given.
    pub file: String,
    /// The file's text.
    pub text: String,
    /// The `--set` assignments applied over it, in order.
    pub sets: Vec<Assignment>,
}

impl Scenario {
    /// The error of a run of this scenario that stopped because a
    /// mechanism asked for the impossible ([`crate::cluster::SimulationError`]).
    pub fn run_error(&self, error: &crate::cluster::SimulationError) -> ScenarioError {
        ScenarioError {
            file: self.source.file.clone(),
            line: None,
            field: None,
            reason: error.to_string(),
        }
    }

    /// An error about `field` (a dotted path such as `cluster.instance` or
    /// `load[1].command`), with the line that sets it when it can be found
    /// (for a key of an inline table, `cluster.instance.memory`, the line
    /// of the table).
    pub fn error(&self, field: &str, reason: impl Into<String>) -> ScenarioError {
        if let Some(set) = self.source.sets.iter().rev().find(|set| set.covers(field)) {
            return ScenarioError {
                file: self.source.file.clone(),
                line: None,
                field: Some(field.to_string()),
                reason: format!("{} (from {set})", reason.into()),
            };
        }
        let line = locate(&self.source.text, field).or_else(|| {
            let (parent, _) = field.rsplit_once('.')?;
            locate(&self.source.text, parent)
        });
        ScenarioError {
            file: self.source.file.clone(),
            line,
            field: Some(field.to_string()),
            reason: reason.into(),
        }
    }
}

/// The line (1-based) that assigns the dotted `field` in TOML `text`:
/// tracks `[table]` and `[[array]]` headers (array entries are numbered
/// `name[i]`) and finds `key = ...` under the right one.
fn locate(text: &str, field: &str) -> Option<usize> {
    let (table, key) = field.rsplit_once('.').unwrap_or(("", field));
    let mut current = String::new();
    let mut array_counts: Vec<(String, usize)> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line
            .strip_prefix("[[")
            .and_then(|rest| rest.split("]]").next())
        {
            let name = name.trim().to_string();
            let count = match array_counts.iter_mut().find(|(known, _)| *known == name) {
                Some((_, count)) => {
                    *count += 1;
                    *count - 1
                }
                None => {
                    array_counts.push((name.clone(), 1));
                    0
                }
            };
            current = format!("{name}[{count}]");
        } else if let Some(name) = line
            .strip_prefix('[')
            .and_then(|rest| rest.split(']').next())
        {
            current = name.trim().to_string();
        } else if current == table {
            let assigned = line.split('=').next().map(str::trim);
            if line.contains('=') && assigned == Some(key) {
                return Some(index + 1);
            }
        }
    }
    None
}

/// `[cluster]`
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSection {
    /// Software preset, e.g. `scylla-2.2`.
    pub preset: String,
    /// Number of nodes.
    pub nodes: u32,
    /// Instance type from the catalog, e.g. `i3.4xlarge`, or an inline
    /// table `{ base = "i3.4xlarge", memory = "64GiB", ... }` overriding
    /// some of its fields (as `[cluster.overrides]` can).
    pub instance: InstanceChoice,
    /// Tokens (vnodes) per node on the ring; default 256 (`num_tokens`).
    #[serde(default)]
    pub num_tokens: Option<u32>,
    /// Racks: a count (node `i` goes to rack `i % racks`) or one rack name
    /// per node. Default: one rack. NetworkTopologyStrategy spreads each
    /// key's replicas over them.
    #[serde(default)]
    pub racks: Option<Racks>,
    /// Representative-shard sampling (Scylla): simulate this many shards
    /// of every node instead of all of them; reports scale counts and
    /// rates back up to the whole cluster.
    #[serde(default)]
    pub simulated_shards_per_node: Option<u32>,
    /// How much slower the nodes' cores are than the machine the preset's
    /// CPU prices were fitted on: every CPU price of the preset (its cost
    /// table's steps, the JVM's hand-off, a shared-pool run, the event
    /// loop's work and wake-up) is multiplied by it; default 1.
    #[serde(default)]
    pub cpu_slowdown: Option<f64>,
    /// Per-field overrides of the instance, and the shard count.
    #[serde(default)]
    pub overrides: Option<ClusterOverrides>,
    /// Node settings, named as in scylla.yaml / cassandra.yaml.
    #[serde(default)]
    pub yaml: Option<NodeYaml>,
    /// `[cluster.g1_start]`: what every node's G1 has learnt when the run
    /// starts (cassandra-5.0); default: a new JVM.
    #[serde(default)]
    pub g1_start: Option<G1StartSection>,
}

/// `[cluster.g1_start]`: the G1 state a JVM that has served load before
/// starts from (`models::jvm::G1History`): its old generation and what
/// G1 sizes eden by (`models::g1_policy`). Each sequence is `[average,
/// variance, samples]` (samples a whole number, 0 to 10); one left out
/// is a new JVM's. `twin validate --real` writes it to chain REAL.md's
/// phases as the real node ran them, one JVM through all (from each run's
/// `RunOutcome::g1_end`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct G1StartSection {
    /// Old generation in use, live or garbage not yet collected.
    pub old: HumanBytes,
    /// Object copy time per byte copied, ns.
    #[serde(default)]
    pub copy_ns_per_byte: Option<[f64; 3]>,
    /// The pause's constant other time, ns.
    #[serde(default)]
    pub constant_other_ns: Option<[f64; 3]>,
    /// Other time per young region, ns.
    #[serde(default)]
    pub young_other_ns_per_region: Option<[f64; 3]>,
    /// Card scan time per card, ns.
    #[serde(default)]
    pub scan_ns_per_card: Option<[f64; 3]>,
    /// Cards in the young regions' remembered sets at a pause.
    #[serde(default)]
    pub rs_cards: Option<[f64; 3]>,
    /// Eden regions' survival by age (fraction of a region), the youngest
    /// first.
    #[serde(default)]
    pub eden_survival: Option<Vec<[f64; 3]>>,
    /// Survivor regions' survival by age, the youngest first.
    #[serde(default)]
    pub survivor_survival: Option<Vec<[f64; 3]>>,
}

/// `[cluster] racks`: how many racks (nodes dealt round-robin) or each
/// node's rack by name.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Racks {
    /// `racks = 3`: node `i` in rack `i % 3`.
    Count(u32),
    /// `racks = ["a", "a", "b", ...]`: one name per node.
    Names(Vec<String>),
}

/// `[cluster.yaml]`: the scylla.yaml (or cassandra.yaml) settings the twin
/// models, under their yaml names; unset ones keep the preset's defaults.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeYaml {
    /// `"periodic"` (default) or `"batch"`.
    #[serde(default)]
    pub commitlog_sync: Option<String>,
    /// Periodic mode: how often the commitlog buffer is written (10000).
    #[serde(default)]
    pub commitlog_sync_period_in_ms: Option<u64>,
    /// Commitlog segment size (32).
    #[serde(default)]
    pub commitlog_segment_size_in_mb: Option<u64>,
    /// Commitlog space per node before memtables are flushed to free it
    /// (default: the node's memory).
    #[serde(default)]
    pub commitlog_total_space_in_mb: Option<u64>,
    /// Size-tiered compaction without the fallback to pairs (false; Scylla
    /// 2.1 behaved as true).
    #[serde(default)]
    pub compaction_enforce_min_threshold: Option<bool>,
    /// Cassandra: compaction jobs running at once per node (default: the
    /// smaller of data directories and cores, within 2..=8). Scylla
    /// ignores it.
    #[serde(default)]
    pub concurrent_compactors: Option<u32>,
    /// Cassandra: MiB/s all compactions of a node may read together
    /// (default 16; 0: unthrottled). Scylla ignores it.
    #[serde(default)]
    pub compaction_throughput_mb_per_sec: Option<u64>,
    /// Cassandra: off-heap row cache per node, MiB (default 0: off). Scylla
    /// has no setting: its cache takes the memory nothing else uses.
    #[serde(default)]
    pub row_cache_size_in_mb: Option<u64>,
    /// The failure detector's sensitivity (default 8): a peer is convicted
    /// down when log10(e) x phi passes it (`engine::gossip`).
    #[serde(default)]
    pub phi_convict_threshold: Option<f64>,
    /// Hinted handoff (default: on for scylla-3.0 and cassandra-3.11;
    /// earlier Scylla versions have none, and refuse `true`).
    #[serde(default)]
    pub hinted_handoff_enabled: Option<bool>,
    /// No hints for a replica down longer than this (10800000: 3 h).
    #[serde(default)]
    pub max_hint_window_in_ms: Option<u64>,
    /// Cassandra: replay bandwidth to each replica, KiB/s, divided by the
    /// other nodes (1024). Scylla does not use it.
    #[serde(default)]
    pub hinted_handoff_throttle_in_kb: Option<u64>,
}

/// `[cluster.overrides]`: the shard count, and any field of the
/// instance (the same fields as an inline `instance = { base = ... }`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterOverrides {
    /// Scylla shards per node (default: from the instance's vCPUs).
    #[serde(default)]
    pub shards: Option<u32>,
    /// Hardware threads (vCPUs) per node.
    #[serde(default)]
    pub vcpus: Option<u32>,
    /// Physical cores per node.
    #[serde(default)]
    pub physical_cores: Option<u32>,
    /// Memory of each node.
    #[serde(default)]
    pub memory: Option<HumanBytes>,
    /// NVMe drives per node.
    #[serde(default)]
    pub drives: Option<u32>,
    /// NVMe preset of each drive (`twin device list`).
    #[serde(default)]
    pub drive: Option<String>,
    /// Sustained NIC bandwidth, gigabits per second.
    #[serde(default)]
    pub nic_gbps: Option<f64>,
    /// Burst NIC bandwidth ("up to"), gigabits per second.
    #[serde(default)]
    pub nic_burst_gbps: Option<f64>,
    /// On-demand price, $/h.
    #[serde(default)]
    pub on_demand_usd_per_hour: Option<f64>,
    /// 1-year reservation, effective $/h.
    #[serde(default)]
    pub reserved_1y_usd_per_hour: Option<f64>,
}

impl ClusterOverrides {
    /// The instance fields set here.
    pub fn instance_overrides(&self) -> InstanceOverrides {
        InstanceOverrides {
            vcpus: self.vcpus,
            physical_cores: self.physical_cores,
            memory_bytes: self.memory.map(|HumanBytes(bytes)| bytes),
            drives: self.drives,
            drive: self.drive.clone(),
            nic_gbps: self.nic_gbps,
            nic_burst_gbps: self.nic_burst_gbps,
            on_demand_usd_per_hour: self.on_demand_usd_per_hour,
            reserved_1y_usd_per_hour: self.reserved_1y_usd_per_hour,
        }
    }
}

/// An instance from the catalog: its name (`"i3.4xlarge"`), or an inline
/// table naming it as `base` with fields to override, e.g. `{ base =
/// "i3.4xlarge", memory = "64GiB", drives = 4, nic_gbps = 25 }`.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceChoice {
    /// The catalog instance.
    pub base: String,
    /// The fields the scenario overrides.
    pub overrides: InstanceOverrides,
}

impl InstanceChoice {
    /// The catalog instance `base`, unchanged.
    pub fn named(base: &str) -> InstanceChoice {
        InstanceChoice {
            base: base.to_string(),
            overrides: InstanceOverrides::default(),
        }
    }
}

/// The inline-table form of [`InstanceChoice`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceTable {
    base: String,
    #[serde(default)]
    vcpus: Option<u32>,
    #[serde(default)]
    physical_cores: Option<u32>,
    #[serde(default)]
    memory: Option<HumanBytes>,
    #[serde(default)]
    drives: Option<u32>,
    #[serde(default)]
    drive: Option<String>,
    #[serde(default)]
    nic_gbps: Option<f64>,
    #[serde(default)]
    nic_burst_gbps: Option<f64>,
    #[serde(default)]
    on_demand_usd_per_hour: Option<f64>,
    #[serde(default)]
    reserved_1y_usd_per_hour: Option<f64>,
}

impl<'de> Deserialize<'de> for InstanceChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Choice;
        impl<'de> de::Visitor<'de> for Choice {
            type Value = InstanceChoice;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "an instance name such as \"i3.4xlarge\" or a table such as { base = \"i3.4xlarge\", memory = \"64GiB\" }",
                )
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<InstanceChoice, E> {
                Ok(InstanceChoice::named(name))
            }

            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<InstanceChoice, A::Error> {
                let table = InstanceTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(InstanceChoice {
                    base: table.base,
                    overrides: InstanceOverrides {
                        vcpus: table.vcpus,
                        physical_cores: table.physical_cores,
                        memory_bytes: table.memory.map(|HumanBytes(bytes)| bytes),
                        drives: table.drives,
                        drive: table.drive,
                        nic_gbps: table.nic_gbps,
                        nic_burst_gbps: table.nic_burst_gbps,
                        on_demand_usd_per_hour: table.on_demand_usd_per_hour,
                        reserved_1y_usd_per_hour: table.reserved_1y_usd_per_hour,
                    },
                })
            }
        }
        deserializer.deserialize_any(Choice)
    }
}

/// `[network]`: how long a message takes once it leaves its NIC.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    /// Fixed one-way latency (default 40us, same-AZ, hardware.md 6.2).
    #[serde(default)]
    pub latency: Option<HumanDuration>,
    /// Median of a lognormal jitter added per message (default 7us; shape
    /// `models::network::JITTER_SIGMA`, so its p99 is ~18x the median); a
    /// jitter comparable to message spacing reorders messages.
    #[serde(default)]
    pub jitter: Option<HumanDuration>,
}

/// `[table]`: options of c-s's `keyspace1.standard1` beyond its command line.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSection {
    /// Compression chunk, KiB (a power of two); the server's default (Scylla
    /// 4, Cassandra 3.11 64) where absent. Needs `-schema compression=`.
    #[serde(default)]
    pub chunk_length_in_kb: Option<u64>,
    /// `read_repair_chance`: the fraction of reads that ask every replica
    /// and repair what disagrees (default 0).
    #[serde(default)]
    pub read_repair_chance: Option<f64>,
    /// `dclocal_read_repair_chance`: the same within the coordinator's
    /// datacenter (default 0.1); with one datacenter a read asks every
    /// replica with the larger of the two chances.
    #[serde(default)]
    pub dclocal_read_repair_chance: Option<f64>,
    /// `speculative_retry`: `"99.0PERCENTILE"` (the default), `"NONE"`,
    /// or a fixed delay such as `"10ms"`.
    #[serde(default)]
    pub speculative_retry: Option<String>,
}

/// `[fidelity]`: how much the engine stores.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FidelitySection {
    /// `"volume"` (default: sizes, row counts and key ranges only) or
    /// `"data"` (every row's newest version, for correctness checks).
    pub mode: String,
}

/// `[data]`: what is on disk when the run starts.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// Partitions in the table (e.g. `38.85e9`).
    pub partitions: f64,
    /// Bytes each partition takes in an SSTable.
    pub row_bytes: HumanBytes,
    /// First and last key (c-s seeds); default `[1, partitions]`.
    #[serde(default)]
    pub key_range: Option<[u64; 2]>,
    /// Replicas per partition: the keyspace's replication factor (a load's
    /// `-schema replication(...)` must agree; its strategy comes from there).
    #[serde(default)]
    pub replication_factor: Option<u32>,
    /// The table's strategy: `"size-tiered"` (default) or `"leveled"`.
    #[serde(default)]
    pub compaction: Option<String>,
    /// `"compacted"` (default): as the table's strategy leaves it once
    /// caught up, memtables empty. `"steady"`: every shard part-way through
    /// the flush-and-compact cycle its writes drive (its lowest SSTable
    /// tiers and its memtable fill drawn per shard), as in a cluster long
    /// into a write load, so flushes and compactions come at their own
    /// times rather than all at once.
    #[serde(default)]
    pub state: Option<String>,
    /// With `state = "compacted"` and size-tiered compaction: the length of
    /// the measured window this run samples (a published run's duration,
    /// e.g. `"90m"`). The window began with the table compacted; each shard
    /// starts at its own point of it (spread evenly over the shards), its
    /// memtable, flushes and the merges they set off carried forward to
    /// there at the writes and merge rate a pilot of the run measures. So a
    /// short run sees the flushes and compactions the window held, as many
    /// as the window held.
    #[serde(default)]
    pub window: Option<HumanDuration>,
    /// `"cold"` (default): nothing cached when the run starts; `"warm"`:
    /// the row cache (and Cassandra's page cache) start filled to their
    /// steady state under the reads' key popularity, as in a run measured
    /// long after its caches filled.
    #[serde(default)]
    pub cache: Option<String>,
}

/// `[[fault]]`: a fault injected at a time (`crate::faults` says what each
/// kind does).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSection {
    /// When it starts, from the start of the run.
    pub at: HumanDuration,
    /// How long it lasts; to the end of the run if absent.
    #[serde(rename = "for", default)]
    pub lasts: Option<HumanDuration>,
    /// The nodes it acts on (a partition: one side), by index from 0.
    #[serde(default)]
    pub nodes: Option<Vec<u32>>,
    /// `partition`, `flap`, `drop`, `nic-degrade`, `crash`, `restart`,
    /// `slow-disk` or `disk-fail`.
    pub kind: String,
    /// `partition`: the other side (default: every node not in `nodes`).
    #[serde(default)]
    pub from: Option<Vec<u32>>,
    /// `flap`: how long the network stays up between cuts.
    #[serde(default)]
    pub on: Option<HumanDuration>,
    /// `flap`: how long each cut lasts.
    #[serde(default)]
    pub off: Option<HumanDuration>,
    /// `drop`: the probability each message is lost.
    #[serde(default)]
    pub probability: Option<f64>,
    /// `nic-degrade`: the fraction of the NIC's bandwidth left.
    #[serde(default)]
    pub bandwidth_factor: Option<f64>,
    /// `slow-disk`: how many times longer the device's fixed latency is.
    #[serde(default)]
    pub latency_factor: Option<f64>,
    /// `slow-disk`: the fraction of its IOPS and bandwidth the device keeps.
    #[serde(default)]
    pub throughput_factor: Option<f64>,
}

/// `[[action]]`: a topology operation, as an operator would run it with
/// nodetool (`crate::operations` says what each kind does and when it
/// starts).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionSection {
    /// When it starts, from the start of the run (or later, when the
    /// operation before it is still running).
    pub at: HumanDuration,
    /// `add-node`, `decommission` or `removenode`.
    pub kind: String,
    /// The node it acts on; `add-node`: optional, the id the new node gets.
    #[serde(default)]
    pub node: Option<u32>,
    /// `add-node`: the new node's instance; only the cluster's own is
    /// accepted, so that a reader of the file sees what joins.
    #[serde(default)]
    pub instance: Option<InstanceChoice>,
}

/// `[actions]`: only `[actions.random]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionsSection {
    /// Operations drawn from the run's seed.
    pub random: RandomActionsSection,
}

/// `[actions.random]`: `count` operations, each of a kind drawn from
/// `kinds` among those the cluster allows at its point of the script, at
/// times drawn uniformly within the first `within` of the run
/// (`crate::operations::draw`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomActionsSection {
    /// The kinds to draw from (default: add-node and decommission).
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    /// Operations per run (default 1).
    #[serde(default)]
    pub count: Option<u32>,
    /// They start within this first part of the run (default: the whole
    /// run).
    #[serde(default)]
    pub within: Option<HumanDuration>,
}

/// `[faults]`: only `[faults.random]` for now.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultsSection {
    /// Faults drawn from the run's seed.
    pub random: RandomFaultsSection,
}

/// `[faults.random]`: each node suffers faults as a Poisson process of
/// `per_node_hour`, each of a kind drawn from `kinds` and lasting an
/// exponential time of mean `lasts`; the seed draws the schedule.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomFaultsSection {
    /// Faults per node per simulated hour.
    pub per_node_hour: f64,
    /// The kinds to draw from, equally likely (default: flap, partition,
    /// drop, nic-degrade).
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    /// Mean duration of a fault (default 1m).
    #[serde(default)]
    pub lasts: Option<HumanDuration>,
    /// Faults start and end within this first part of the run (default:
    /// the whole run, and a fault may last past its end); a quiet end lets
    /// the cluster recover before the run stops.
    #[serde(default)]
    pub within: Option<HumanDuration>,
}

/// `[validation]`: the published run a scenario reproduces. `twin validate`
/// runs the scenarios that have one and compares their figures with the
/// published ones (validation/src/published.rs); `twin run` ignores it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationSection {
    /// Published run id, `R1`..`R6`.
    pub run: String,
    /// The setup the figures were published for, as validation/src/published.rs
    /// names it (e.g. `"scylla-2.2 4 x i3.metal, 300K"`).
    pub setup: String,
    /// How the scenario departs from the published run to fit a machine
    /// (shorter duration, ...), shown on the scorecard.
    #[serde(default)]
    pub shortened: Option<String>,
    /// Time at the start of the run left out of the figures (cache warm-up,
    /// first flushes), as the report's own window leaves it out.
    #[serde(default)]
    pub warmup: Option<HumanDuration>,
    /// `twin validate --quick`: simulated time to run instead of `duration`.
    #[serde(default)]
    pub quick_duration: Option<HumanDuration>,
    /// `--quick`: warm-up to leave out instead of `warmup`.
    #[serde(default)]
    pub quick_warmup: Option<HumanDuration>,
}

/// `[controller]`: the tuning a controller-regression test varies.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSection {
    /// `[controller.compaction]`: input is backlog bytes / shard memory.
    #[serde(default)]
    pub compaction: Option<CurveSection>,
    /// `[controller.flush]`: input is virtual dirty / throttle threshold.
    #[serde(default)]
    pub flush: Option<CurveSection>,
}

/// One controller's settings.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveSection {
    /// Control points `[[input, shares], ...]`, inputs strictly increasing.
    #[serde(default)]
    pub points: Option<Vec<[f64; 2]>>,
    /// How often the controller adjusts the shares.
    #[serde(default)]
    pub tick: Option<HumanDuration>,
    /// Fixed shares instead of a curve (`compaction_static_shares`,
    /// `memtable_flush_static_shares`).
    #[serde(default)]
    pub static_shares: Option<f64>,
}

/// `[[load]]`
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Name of the phase, used in reports.
    pub name: String,
    /// The cassandra-stress command line, verbatim.
    pub command: String,
    /// c-s processes (loader machines) running the command. Default 1, at
    /// most [`MAX_PROCESSES`].
    #[serde(default)]
    pub processes: Option<u32>,
    /// When the phase starts. Default 0 s.
    #[serde(default)]
    pub start: Option<HumanDuration>,
    /// Start when the earlier load of this name has finished (instead of `start`).
    #[serde(default)]
    pub after: Option<String>,
    /// `"token-aware"` (default), `"shard-aware"` or `"round-robin"`.
    #[serde(default)]
    pub routing: Option<String>,
    /// The program running the load: `"cassandra-stress"` (default, the
    /// published runs') or `"twin-real"` (`twin real`, whose threads start
    /// on tokio's 1-ms timer ticks).
    #[serde(default)]
    pub client: Option<String>,
    /// How long a client waits for a reply before it retries. Default 12 s,
    /// the DataStax Java driver's read timeout that c-s runs with.
    #[serde(default)]
    pub client_timeout: Option<HumanDuration>,
    /// Instance type of the loader machines (one per process); its NIC
    /// carries the process's requests. Default `c4.4xlarge`, the loader of
    /// R1 and R2. A name, or `{ base = "c4.8xlarge", nic_gbps = 10 }`.
    #[serde(default)]
    pub loader: Option<InstanceChoice>,
}

/// A bad scenario: file, line, field, reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub file: String,
    /// Line number (1-based) where the parser could tell.
    pub line: Option<usize>,
    /// Dotted path of the field, e.g. `cluster.nodes` or `load[0].command`.
    pub field: Option<String>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        // Keep it to one line whatever the underlying parser said.
        let reason = self.reason.split_whitespace().collect::<Vec<_>>().join(" ");
        write!(f, ": {reason}")
    }
}

impl std::error::Error for ScenarioError {}

/// Reads and parses a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| ScenarioError {
        file: file.clone(),
        line: None,
        field: None,
        reason: format!("cannot read the file: {error}"),
    })?;
    parse(&file, &text)
}

/// Reads a scenario file and applies `sets` over it
/// (`crate::overrides`).
pub fn load_with(path: &Path, sets: &[Assignment]) -> Result<Scenario, ScenarioError> {
    with_sets(&load(path)?, sets)
}

/// `scenario` with `sets` applied over its file, parsed and checked again
/// as a file would be; an error names the field and the `--set` that set
/// it.
pub fn with_sets(scenario: &Scenario, sets: &[Assignment]) -> Result<Scenario, ScenarioError> {
    if sets.is_empty() {
        return Ok(scenario.clone());
    }
    let file = scenario.source.file.clone();
    let fail = |field: Option<String>, reason: String| ScenarioError {
        file: file.clone(),
        line: None,
        field,
        reason,
    };
    let mut table: toml::Table = toml::from_str(&scenario.source.text)
        .map_err(|error| fail(None, error.message().to_string()))?;
    // The file's text is kept as read, so the sets applied before are
    // applied again under the new ones.
    let all: Vec<Assignment> = scenario.source.sets.iter().chain(sets).cloned().collect();
    for set in &all {
        set.apply(&mut table)
            .map_err(|error| fail(None, error.to_string()))?;
    }
    let text = toml::to_string(&table).map_err(|error| fail(None, error.to_string()))?;
    let mut changed = parse(&file, &text).map_err(|error| {
        let by = error
            .field
            .as_deref()
            .and_then(|field| all.iter().rev().find(|set| set.covers(field)));
        let with = match by {
            Some(set) => format!("from {set}"),
            None => format!(
                "with {}",
                all.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        fail(error.field, format!("{} ({with})", error.reason))
    })?;
    changed.source = Source {
        file,
        text: scenario.source.text.clone(),
        sets: all,
    };
    Ok(changed)
}

/// Parses scenario text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let deserializer = toml::Deserializer::parse(text).map_err(|error| ScenarioError {
        file: file.to_string(),
        line: error.span().map(|span| line_of(span.start)),
        field: None,
        reason: error.message().to_string(),
    })?;
    let scenario: Scenario = serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        let mut line = inner.span().map(|span| line_of(span.start));
        let mut reason = inner.message().to_string();
        // serde names the missing key but toml has no span for it.
        if reason.starts_with("missing field") && line.is_none() {
            reason = format!("{reason} (required)");
        }
        // serde_path_to_error's path already ends with an unknown key's name.
        let field = (path != ".").then_some(path);
        if let Some(unknown) = reason.strip_prefix("unknown field `") {
            let key = unknown.split('`').next().unwrap_or_default();
            if line.is_none() {
                line = find_key_line(text, key);
            }
        }
        ScenarioError {
            file: file.to_string(),
            line,
            field,
            reason,
        }
    })?;
    let mut scenario = scenario;
    scenario.source = Source {
        file: file.to_string(),
        text: text.to_string(),
        sets: Vec::new(),
    };
    validate(&scenario)?;
    Ok(scenario)
}

/// The first line that assigns `key` (a fallback when the parser gives no span).
fn find_key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|index| index + 1)
}

/// Checks value ranges the types cannot express.
fn validate(scenario: &Scenario) -> Result<(), ScenarioError> {
    let fail = |field: &str, reason: String| Err(scenario.error(field, reason));
    if scenario.name.trim().is_empty() {
        return fail("name", "must not be empty".into());
    }
    if scenario.cluster.nodes == 0 {
        return fail("cluster.nodes", "a cluster needs at least 1 node".into());
    }
    if scenario.cluster.nodes > 10_000 {
        return fail(
            "cluster.nodes",
            format!(
                "{} nodes is more than the 10,000 the twin supports",
                scenario.cluster.nodes
            ),
        );
    }
    if let Some(HumanDuration(interval)) = scenario.interval {
        if interval < SimDuration::from_millis(1) {
            return fail(
                "interval",
                format!("{interval} is shorter than the 1ms minimum"),
            );
        }
    }
    if let Some(HumanDuration(duration)) = scenario.duration {
        if duration == SimDuration::ZERO {
            return fail("duration", "must be longer than zero".into());
        }
    }
    validate_topology(scenario)?;
    if let Some(overrides) = &scenario.cluster.overrides {
        if overrides.shards == Some(0) {
            return fail(
                "cluster.overrides.shards",
                "a node needs at least 1 shard".into(),
            );
        }
        if overrides.drives == Some(0) {
            return fail(
                "cluster.overrides.drives",
                "a database node needs at least 1 drive".into(),
            );
        }
        if let Some(gbps) = overrides.nic_gbps {
            if !(gbps.is_finite() && gbps > 0.0) {
                return fail(
                    "cluster.overrides.nic_gbps",
                    format!("{} is not a positive bandwidth", units::format_number(gbps)),
                );
            }
        }
    }
    if scenario.loads.is_empty() && scenario.actions.is_empty() {
        return fail(
            "load",
            "at least one [[load]] is needed (an idle cluster runs [[action]]s only)".into(),
        );
    }
    for (index, load) in scenario.loads.iter().enumerate() {
        if let Some(processes) = load.processes {
            if !(1..=MAX_PROCESSES).contains(&processes) {
                return fail(
                    &format!("load[{index}].processes"),
                    format!("{processes} is not from 1 to {MAX_PROCESSES}"),
                );
            }
        }
        if load
            .client_timeout
            .is_some_and(|HumanDuration(timeout)| timeout == SimDuration::ZERO)
        {
            return fail(
                &format!("load[{index}].client_timeout"),
                "must be longer than zero".into(),
            );
        }
        if load.name.trim().is_empty() {
            return fail(&format!("load[{index}].name"), "must not be empty".into());
        }
        if scenario.loads[..index]
            .iter()
            .any(|other| other.name == load.name)
        {
            return fail(
                &format!("load[{index}].name"),
                format!("`{}` is used by an earlier load", load.name),
            );
        }
    }
    let processes: u64 = scenario
        .loads
        .iter()
        .map(|load| u64::from(load.processes.unwrap_or(1)))
        .sum();
    if processes > u64::from(MAX_RUN_PROCESSES) {
        return fail(
            "load",
            format!(
                "the loads run {processes} client processes in all; a run takes at most {MAX_RUN_PROCESSES}"
            ),
        );
    }
    Ok(())
}

/// The most c-s processes a run has over all its loads (each numbers its
/// own requests, and a request's id holds its process).
pub const MAX_RUN_PROCESSES: u32 = 1 << 16;

/// The most c-s processes (loader machines) a `[[load]]` runs: R5's
/// largest load ran 14; each process is simulated with its own threads.
pub const MAX_PROCESSES: u32 = 1000;

/// The most client threads a `[[load]]` runs over all its processes
/// (`processes` x `-rate threads=`): the twin keeps a state per thread.
pub const MAX_CLIENT_THREADS_PER_LOAD: u64 = 1_000_000;

/// Largest `num_tokens` accepted: 16x the default already evens ownership
/// out within a few percent, and the replica map grows with nodes x tokens.
pub const MAX_NUM_TOKENS: u32 = 4096;

/// `[cluster]`'s ring settings: `num_tokens`, `racks`,
/// `simulated_shards_per_node` (its upper bound, the shard count, is
/// checked once the instance is known).
fn validate_topology(scenario: &Scenario) -> Result<(), ScenarioError> {
    let cluster = &scenario.cluster;
    if let Some(tokens) = cluster.num_tokens {
        if !(1..=MAX_NUM_TOKENS).contains(&tokens) {
            return Err(scenario.error(
                "cluster.num_tokens",
                format!("{tokens} is outside 1..={MAX_NUM_TOKENS} tokens per node"),
            ));
        }
    }
    match &cluster.racks {
        Some(Racks::Count(racks)) if *racks == 0 || *racks > cluster.nodes => {
            return Err(scenario.error(
                "cluster.racks",
                format!(
                    "{racks} racks for {} nodes: give between 1 and the node count",
                    cluster.nodes
                ),
            ));
        }
        Some(Racks::Names(names)) if names.len() != cluster.nodes as usize => {
            return Err(scenario.error(
                "cluster.racks",
                format!(
                    "{} rack names for {} nodes: give one per node, or a number of racks",
                    names.len(),
                    cluster.nodes
                ),
            ));
        }
        Some(Racks::Names(names)) if names.iter().any(|name| name.trim().is_empty()) => {
            return Err(scenario.error("cluster.racks", "a rack name is empty"));
        }
        _ => {}
    }
    if cluster.simulated_shards_per_node == Some(0) {
        return Err(scenario.error(
            "cluster.simulated_shards_per_node",
            "simulate at least 1 shard per node",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
duration = "60s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"

[[load]]
name = "write"
command = "cassandra-stress write n=1000"
"#;

    #[test]
    fn sets_applied_in_steps_keep_the_earlier_ones() {
        let base = parse("s.toml", GOOD).unwrap();
        let set = |text: &str| Assignment::parse(text).unwrap();
        let once = with_sets(&base, &[set("cluster.nodes=5")]).unwrap();
        let twice = with_sets(&once, &[set("cluster.instance=i3.4xlarge")]).unwrap();
        assert_eq!(twice.cluster.nodes, 5, "the first step's set survives");
        assert_eq!(twice.source.sets.len(), 2);
        // A later set of the same key wins.
        let again = with_sets(&twice, &[set("cluster.nodes=7")]).unwrap();
        assert_eq!(again.cluster.nodes, 7);
    }

    fn error(text: &str) -> String {
        let message = parse("s.toml", text).unwrap_err().to_string();
        assert!(!message.contains('\n'), "one line: {message}");
        message
    }

    #[test]
    fn a_good_scenario_parses() {
        let scenario = parse("s.toml", GOOD).unwrap();
        assert_eq!(scenario.cluster.nodes, 3);
        assert_eq!(
            scenario.duration,
            Some(HumanDuration(SimDuration::from_secs(60)))
        );
        assert_eq!(scenario.loads[0].processes, None);
    }

    #[test]
    fn an_unknown_key_names_file_line_and_field() {
        let message = error(&GOOD.replace("nodes = 3", "nodez = 3"));
        assert!(
            message.starts_with("s.toml:7: field `cluster.nodez`"),
            "{message}"
        );
        assert!(message.contains("unknown field"), "{message}");
    }

    #[test]
    fn a_malformed_duration_names_the_field_and_reason() {
        let message = error(&GOOD.replace("\"60s\"", "\"60 parsecs\""));
        assert!(message.contains("s.toml:3"), "{message}");
        assert!(message.contains("field `duration`"), "{message}");
        assert!(message.contains("parsecs"), "{message}");
    }

    #[test]
    fn a_missing_required_key_is_named() {
        let message = error(&GOOD.replace("instance = \"i3.2xlarge\"\n", ""));
        assert!(message.contains("instance"), "{message}");
    }

    #[test]
    fn a_wrong_type_is_reported_with_its_field() {
        let message = error(&GOOD.replace("nodes = 3", "nodes = \"three\""));
        assert!(message.contains("field `cluster.nodes`"), "{message}");
        assert!(message.contains("s.toml:7"), "{message}");
    }

    #[test]
    fn out_of_range_values_are_rejected() {
        assert!(error(&GOOD.replace("nodes = 3", "nodes = 0")).contains("at least 1 node"));
        let zero_processes = GOOD.replace("n=1000\"", "n=1000\"\nprocesses = 0");
        assert!(error(&zero_processes).contains("load[0].processes"));
        let many_processes = GOOD.replace("n=1000\"", "n=1000\"\nprocesses = 1001");
        assert!(
            error(&many_processes).contains("load[0].processes`: 1001 is not from 1 to 1000"),
            "{}",
            error(&many_processes)
        );
        // 66 loads of 1,000 processes: more than a run's request ids hold.
        let mut crowded = GOOD.replace("[[load]]", "").replace(
            "name = \"write\"\ncommand = \"cassandra-stress write n=1000\"\n",
            "",
        );
        for load in 0..66 {
            crowded.push_str(&format!(
                "[[load]]\nname = \"w{load}\"\ncommand = \"cassandra-stress write n=1000\"\nprocesses = 1000\n"
            ));
        }
        let message = error(&crowded);
        assert!(
            message.contains("66000 client processes in all; a run takes at most 65536"),
            "{message}"
        );
        // 65 of them fit.
        let last = crowded.find("[[load]]\nname = \"w65\"").unwrap();
        assert!(parse("s.toml", &crowded[..last]).is_ok());
    }

    #[test]
    fn errors_found_after_parsing_still_point_at_their_line() {
        let two_loads =
            format!("{GOOD}\n[[load]]\nname = \"second\"\ncommand = \"x\"\nprocesses = 0\n");
        let message = error(&two_loads);
        assert!(
            message.starts_with("s.toml:17: field `load[1].processes`"),
            "{message}"
        );
        assert_eq!(locate(GOOD, "cluster.instance"), Some(8));
        assert_eq!(locate(GOOD, "duration"), Some(3));
        assert_eq!(locate(GOOD, "load[0].command"), Some(12));
        assert_eq!(locate(GOOD, "load[1].command"), None);
    }

    #[test]
    fn ring_settings_parse_and_bad_ones_name_their_line() {
        let with = |extra: &str| GOOD.replace("nodes = 3\n", &format!("nodes = 3\n{extra}\n"));
        let scenario = parse(
            "s.toml",
            &with("num_tokens = 16\nracks = 3\nsimulated_shards_per_node = 2"),
        )
        .unwrap();
        assert_eq!(scenario.cluster.num_tokens, Some(16));
        assert_eq!(scenario.cluster.racks, Some(Racks::Count(3)));
        assert_eq!(scenario.cluster.simulated_shards_per_node, Some(2));
        let named = parse("s.toml", &with("racks = [\"a\", \"b\", \"a\"]")).unwrap();
        assert_eq!(
            named.cluster.racks,
            Some(Racks::Names(vec!["a".into(), "b".into(), "a".into()]))
        );
        let message = error(&with("num_tokens = 0"));
        assert!(
            message.starts_with("s.toml:8: field `cluster.num_tokens`"),
            "{message}"
        );
        let message = error(&with("racks = 4"));
        assert!(
            message.starts_with("s.toml:8: field `cluster.racks`") && message.contains("4 racks"),
            "{message}"
        );
        let message = error(&with("racks = [\"a\"]"));
        assert!(message.contains("1 rack names for 3 nodes"), "{message}");
        let message = error(&with("racks = \"three\""));
        assert!(message.contains("cluster.racks"), "{message}");
        let message = error(&with("simulated_shards_per_node = 0"));
        assert!(
            message.starts_with("s.toml:8: field `cluster.simulated_shards_per_node`"),
            "{message}"
        );
    }

    #[test]
    fn broken_toml_gives_a_line() {
        let message = error("name = \"t\"\n[cluster\n");
        assert!(message.starts_with("s.toml:2"), "{message}");
    }
}
