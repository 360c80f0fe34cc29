//! From a parsed scenario to a [`RunPlan`]: instance lookup, overrides, shard
//! memory, and each load's cassandra-stress command resolved into what the
//! simulator's clients do.
//!
//! Every choice that changes what is simulated is either in the scenario or
//! reported: the plan's `describe()` line is printed at the start of a run,
//! and `notes` lists options accepted but without effect on the simulation.

use std::sync::Arc;

use models::cassandra_stress::cql::QueryShape;
use models::cassandra_stress::profile::{self as user_profiles, UserProfile};
use models::cassandra_stress::{self, Operation, Population, Rate, ReplicationStrategy, Stop};
use models::instance::{self, seastar_reserved_memory_bytes, Instance};
use units::SimDuration;

use crate::cluster::{
    ClusterPlan, CommitlogPlan, Controllers, CpuScheduling, IoScheduling, Preload, RunPlan,
    TableStart, TopologyPlan,
};
use crate::load::{
    ColumnPlan, KeyPlan, LoadPlan, OpKind, OpMix, ProfileRows, RatePlan, Routing, StartPlan,
    StopPlan,
};
use crate::preset::Preset;
use crate::scenario::{
    ClusterOverrides, HumanDuration, InstanceChoice, NodeYaml, Racks, Scenario, ScenarioError,
};
use engine::cache::page_cache::PageCacheConfig;
use engine::cache::row_cache::{self, HotMass, RowCacheConfig};
use engine::config::{PageCacheSetup, RowCacheSetup};
use engine::controller::{BacklogController, ControllerVersion};
use engine::speculation::SpeculativeRetry;

/// Loader instance when a load names none: R1 and R2 used c4.4xlarge.
const DEFAULT_LOADER: &str = "c4.4xlarge";

/// The DataStax Java driver's default read timeout (`SocketOptions`,
/// 12,000 ms), which cassandra-stress runs with.
const DEFAULT_CLIENT_TIMEOUT: SimDuration = SimDuration::from_secs(12);

/// The largest row `[data] row_bytes` may give (cassandra-stress's own
/// column values stop at 4 GiB a row too).
pub const MAX_ROW_BYTES: u64 = 4 << 30;
/// The longest `[network] latency` and `jitter`: 10 s, far past any
/// network a database spans (a message that late has timed out).
pub const MAX_NETWORK_DELAY: SimDuration = SimDuration::from_secs(10);
/// The most memory a node may have (`cluster.overrides.memory`): 64 TiB,
/// beyond the largest instances sold (24 TiB).
pub const MAX_NODE_MEMORY_BYTES: u64 = 64 << 40;
/// The longest periodic commitlog sync (`commitlog_sync_period_in_ms`): a
/// day.
pub const MAX_SYNC_PERIOD_MS: u64 = 86_400_000;
/// The most commitlog space (`commitlog_total_space_in_mb`): 1 PiB.
pub const MAX_COMMITLOG_SPACE_MB: u64 = 1 << 30;
/// The most compaction threads (`concurrent_compactors`).
pub const MAX_CONCURRENT_COMPACTORS: u32 = 1024;
/// cassandra.yaml's and scylla.yaml's int settings hold at most this
/// (`max_hint_window_in_ms`, `hinted_handoff_throttle_in_kb`).
const JAVA_INT_MAX: u64 = i32::MAX as u64;

/// Command-line overrides of scenario fields.
#[derive(Clone, Debug, Default)]
pub struct RunOverrides {
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--duration`.
    pub duration: Option<SimDuration>,
}

impl RunPlan {
    /// One line with every resolved option that shapes the run.
    pub fn describe(&self) -> String {
        let cluster = &self.cluster;
        let duration = self
            .duration
            .map_or_else(|| "until loads finish".to_string(), |d| d.to_string());
        let loads: Vec<String> = self.loads.iter().map(LoadPlan::describe).collect();
        format!(
            "twin run: scenario {}, seed {}, duration {}, interval {}; cluster {} x {} ({}), {} shards/node, {} MiB/shard, device {} ({} channels); loads: {}",
            self.scenario,
            self.seed,
            duration,
            self.interval,
            cluster.nodes,
            cluster.instance,
            cluster.preset,
            cluster.shards_per_node,
            cluster.memory_per_shard_bytes / (1024 * 1024),
            cluster.device.name,
            cluster.device.channels(),
            loads.join("; ")
        ) + &describe_topology(cluster)
            + &describe_controllers(&cluster.controllers)
            + &describe_compaction(cluster)
            + &cluster
                .compression_chunk_bytes
                .map_or(String::new(), |chunk| {
                    format!("; table compressed in {} KiB chunks", chunk / 1024)
                })
            + if cluster.data_mode {
                "; data mode"
            } else {
                ""
            }
            + &crate::faults::describe(&self.faults)
            + &crate::operations::describe(&self.operations)
    }
}

/// Resolves `scenario` with command-line `overrides`.
pub fn resolve(scenario: &Scenario, overrides: &RunOverrides) -> Result<RunPlan, ScenarioError> {
    let mut cluster = resolve_cluster(scenario)?;
    // The keyspace's replication factor: `[data]`'s, else the first load's
    // (c-s creates keyspace1 once and never alters it).
    let mut keyspace_rf: Option<(u32, String)> = scenario
        .data
        .as_ref()
        .and_then(|data| data.replication_factor)
        .map(|rf| (rf, "[data] replication_factor".to_string()));
    let mut keyspace_strategy: Option<(ReplicationStrategy, String)> = None;
    let mut notes = instance_override_notes(scenario);
    let mut table_compression: Option<(Option<cassandra_stress::Compression>, String)> = None;
    // The table's compaction: `[data]`'s, else the first load's.
    let mut table_compaction: Option<TableCompaction> = scenario
        .data
        .as_ref()
        .and_then(|data| data.compaction.as_deref())
        .map(|name| TableCompaction {
            strategy: if name == "leveled" {
                cassandra_stress::CompactionStrategy::Leveled
            } else {
                cassandra_stress::CompactionStrategy::SizeTiered
            },
            options: Vec::new(),
            origin: "[data] compaction".to_string(),
            field: "data.compaction".to_string(),
        });
    let mut loads = Vec::with_capacity(scenario.loads.len());
    // A user profile's `chunk_length_in_kb`, when its table gives one.
    let mut profile_chunk_kb: Option<u64> = None;
    for (index, section) in scenario.loads.iter().enumerate() {
        let field = format!("load[{index}].command");
        let mut command = cassandra_stress::parse(&section.command)
            .map_err(|error| scenario.error(&field, error.to_string()))?;
        let profile = user_profile(scenario, &field, &mut command, &mut profile_chunk_kb)?;
        if !command.ignored_options.is_empty() {
            notes.push(format!(
                "load `{}`: {} accepted but do not affect the simulation",
                section.name,
                command.ignored_options.join(", ")
            ));
        }
        let (rf, origin) = keyspace_rf.get_or_insert_with(|| {
            (
                command.effective_replication_factor(),
                format!("load `{}`", section.name),
            )
        });
        if let Some(explicit) = command.replication_factor {
            if explicit != *rf {
                return Err(scenario.error(
                    &field,
                    if profile.is_some() {
                        format!("the profile's keyspace_definition gives replication_factor {explicit}, which differs from the keyspace's {rf} (set by {origin}); the twin simulates one keyspace")
                    } else {
                        format!("replication(factor={explicit}) differs from the keyspace's {rf} (set by {origin}); c-s creates keyspace1 once and does not alter it")
                    },
                ));
            }
        }
        let rf = *rf;
        if rf == 0 || rf > cluster.nodes || rf as usize > engine::coordinator::MAX_REPLICAS {
            return Err(scenario.error(
                &field,
                format!(
                    "replication factor {rf} needs between 1 and {} nodes; the cluster has {}",
                    engine::coordinator::MAX_REPLICAS,
                    cluster.nodes
                ),
            ));
        }
        let block_for = command.consistency.block_for(rf);
        if block_for > rf {
            return Err(scenario.error(
                &field,
                format!("cl={:?} needs {block_for} replicas but the keyspace has {rf}; every request would fail with Unavailable", command.consistency),
            ));
        }
        cluster.replication_factor = rf;
        // The keyspace's strategy: the first `replication(...)` given
        // (SimpleStrategy if none is); another one later is refused.
        if let Some(asked) = command.replication_strategy {
            match &keyspace_strategy {
                None => keyspace_strategy = Some((asked, format!("load `{}`", section.name))),
                Some((strategy, origin)) if *strategy != asked => {
                    return Err(scenario.error(
                        &field,
                        format!(
                            "replication(strategy={}) differs from the keyspace's {} (set by {origin}); c-s creates keyspace1 once and does not alter it",
                            asked.class_name(),
                            strategy.class_name()
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        // The table's compressor: the first load's (c-s creates the table
        // once); a later load asking for another is refused like the RF.
        let (compression, compression_origin) = table_compression
            .get_or_insert_with(|| (command.compression, format!("load `{}`", section.name)));
        if let Some(asked) = command.compression {
            if Some(asked) != *compression {
                return Err(scenario.error(
                    &field,
                    format!(
                        "compression={} differs from the table's {} (set by {compression_origin}); c-s creates standard1 once and does not alter it",
                        asked.class_name(),
                        compression.map_or("none", |c| c.class_name())
                    ),
                ));
            }
        }
        // The table's compaction, likewise.
        let table = table_compaction.get_or_insert_with(|| TableCompaction {
            strategy: command
                .compaction
                .unwrap_or(cassandra_stress::CompactionStrategy::SizeTiered),
            options: command.compaction_options.clone(),
            origin: format!("load `{}`", section.name),
            field: field.clone(),
        });
        if let Some(asked) = command.compaction {
            if asked != table.strategy || command.compaction_options != table.options {
                return Err(scenario.error(
                    &field,
                    format!(
                        "compaction({}) differs from the table's compaction({}) (set by {}); c-s creates standard1 once and does not alter it",
                        describe_compaction_spec(asked, &command.compaction_options),
                        describe_compaction_spec(table.strategy, &table.options),
                        table.origin
                    ),
                ));
            }
        }
        let load = resolve_load(scenario, &field, section, &command, profile, &loads)?;
        loads.push(load);
    }
    cluster.row_cache = resolve_row_cache(scenario, &cluster, &loads)?;
    cluster.page_cache =
        resolve_page_cache(scenario, &cluster, &loads, cluster.memory_per_node_bytes)?;
    if let Some((strategy, _)) = keyspace_strategy {
        cluster.topology.strategy = strategy;
    }
    if scenario.loads.is_empty() {
        // An idle cluster (topology operations only): `[data]`'s factor.
        if let Some((rf, _)) = keyspace_rf {
            if rf == 0 || rf > cluster.nodes || rf as usize > engine::coordinator::MAX_REPLICAS {
                return Err(scenario.error(
                    "data.replication_factor",
                    format!(
                        "replication factor {rf} needs between 1 and {} nodes; the cluster has {}",
                        engine::coordinator::MAX_REPLICAS,
                        cluster.nodes
                    ),
                ));
            }
            cluster.replication_factor = rf;
        }
    }
    check_sampled_populations(scenario, &cluster, &loads)?;
    cluster.partition_bytes = resolve_partition_bytes(scenario, &cluster, &loads, &mut notes)?;
    cluster.compression_chunk_bytes = resolve_compression_chunk(
        scenario,
        &cluster,
        table_compression.and_then(|(c, _)| c),
        profile_chunk_kb,
    )?;
    if let Some(table) = &table_compaction {
        cluster.compaction = resolve_compaction(scenario, cluster.preset, table, &mut notes)?;
    }
    if !cluster.preset.is_cassandra() {
        let yaml = scenario.cluster.yaml.clone().unwrap_or_default();
        let set: Vec<&str> = [
            (
                "concurrent_compactors",
                yaml.concurrent_compactors.is_some(),
            ),
            (
                "compaction_throughput_mb_per_sec",
                yaml.compaction_throughput_mb_per_sec.is_some(),
            ),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect();
        if !set.is_empty() {
            notes.push(format!(
                "[cluster.yaml] {} accepted but do not affect the simulation: they are Cassandra settings; Scylla 2.x-3.0 reads them from scylla.yaml and ignores them (db/config.hh marks concurrent_compactors Invalid and compaction_throughput_mb_per_sec Unused)",
                set.join(", ")
            ));
        }
    }
    let duration = overrides
        .duration
        .or(scenario.duration.map(|HumanDuration(duration)| duration));
    let seed = overrides.seed.or(scenario.seed).unwrap_or(1);
    let (faults, operations) = crate::operations::faults_and_operations(
        scenario,
        cluster.nodes,
        cluster.replication_factor,
        &cluster.instance,
        seed,
        duration,
        &mut notes,
    )?;
    Ok(RunPlan {
        scenario: scenario.name.clone(),
        seed,
        duration,
        interval: scenario
            .interval
            .map_or(SimDuration::from_secs(1), |HumanDuration(interval)| {
                interval
            }),
        faults,
        operations,
        cluster,
        loads,
        notes,
        server_totals_from: SimDuration::ZERO,
    })
}

/// `; ring: ...` (and the sampling, if any) for the describe line.
fn describe_topology(cluster: &ClusterPlan) -> String {
    let topology = &cluster.topology;
    let racks = topology.rack_count();
    let mut text = format!(
        "; ring: {} vnodes/node, {} rack{}, {} rf {}",
        topology.num_tokens,
        racks,
        if racks == 1 { "" } else { "s" },
        topology.strategy.class_name(),
        cluster.replication_factor
    );
    if cluster.sampled() {
        text += &format!(
            "; SAMPLED: {} of {} shards per node simulated, each with a {}/{} share of its node's disk and NIC; clients offer {}/{} of the load; counts and rates reported x{}",
            cluster.simulated_shards(),
            cluster.shards_per_node,
            cluster.simulated_shards(),
            cluster.shards_per_node,
            cluster.simulated_shards(),
            cluster.shards_per_node,
            crate::metrics::round3(cluster.sampling_scale())
        );
        if cluster.connection_landing && cluster.simulated_shards() == 1 {
            // With one shard there is no other to land on
            // (`engine::Landing::spreads`).
            text += "; with 1 shard simulated every request and message lands on its owner shard, so the cross-shard hops are left out and latencies run low (about a quarter on a 4-shard QUORUM mix): simulate 2 or more for latencies";
        }
    }
    text
}

/// `; controllers: ...` for the describe line.
fn describe_controllers(controllers: &Controllers) -> String {
    let one = |controller: &Option<BacklogController>| match controller {
        None => "none".to_string(),
        Some(BacklogController::Static(shares)) => format!("static {shares} shares"),
        Some(BacklogController::Curve { curve, tick }) => {
            let points: Vec<String> = curve
                .points()
                .iter()
                .map(|p| format!("({}, {})", p.input, p.output))
                .collect();
            format!("{} every {tick}", points.join(" "))
        }
    };
    format!(
        "; compaction controller: {}; flush controller: {}",
        one(&controllers.compaction),
        one(&controllers.flush)
    )
}

/// The backlog controllers of a preset (scylla-mechanisms.md section 1):
/// none in 2.1, the 2.2 / 2.3 / 3.0 curves and ticks after.
fn preset_controllers(preset: Preset) -> Controllers {
    let version = match preset {
        Preset::Scylla2_2 => ControllerVersion::Scylla2_2,
        Preset::Scylla2_3 => ControllerVersion::Scylla2_3,
        Preset::Scylla3_0 => ControllerVersion::Scylla3_0,
        Preset::Scylla2_1 | Preset::Cassandra3_11 | Preset::Cassandra5_0 => {
            return Controllers::default()
        }
    };
    Controllers {
        compaction: Some(BacklogController::Curve {
            curve: version.compaction_curve(),
            tick: version.compaction_tick(),
        }),
        flush: Some(BacklogController::Curve {
            curve: version.flush_curve(),
            tick: version.flush_tick(),
        }),
    }
}

/// The table's compaction as the scenario names it, before it is resolved
/// against the preset.
struct TableCompaction {
    strategy: cassandra_stress::CompactionStrategy,
    /// c-s's `compaction(...)` options other than the strategy.
    options: Vec<(String, String)>,
    /// What set it, for messages (a load by name, or `[data] compaction`).
    origin: String,
    /// The scenario field that set it, for errors.
    field: String,
}

/// `Strategy,option=value,...` as c-s's `compaction(...)` takes it.
fn describe_compaction_spec(
    strategy: cassandra_stress::CompactionStrategy,
    options: &[(String, String)],
) -> String {
    std::iter::once(format!("strategy={}", strategy.class_name()))
        .chain(
            options
                .iter()
                .map(|(name, value)| format!("{name}={value}")),
        )
        .collect::<Vec<String>>()
        .join(",")
}

/// `; compaction: ...` for the describe line.
fn describe_compaction(cluster: &ClusterPlan) -> String {
    use engine::compaction::CompactionStrategy;
    let mut text = format!("; compaction: {}", cluster.compaction.class_name());
    if let CompactionStrategy::Leveled(options) = &cluster.compaction {
        text += &format!(
            " ({} MiB SSTables)",
            options.sstable_size_bytes / (1024 * 1024)
        );
    }
    if let Some(compactors) = cluster.concurrent_compactors {
        text += &format!(", concurrent_compactors {compactors}");
    }
    text += &match cluster.compaction_throughput_bytes_per_sec {
        Some(rate) => format!(", compaction throughput {} MiB/s", rate / (1024 * 1024)),
        None if cluster.preset.is_cassandra() => ", compaction unthrottled".to_string(),
        None => String::new(),
    };
    text
}

/// Compaction options c-s passes that Cassandra 3.11 accepts for both
/// strategies but that act on tombstones, repair or logging, which the
/// twin does not model (`AbstractCompactionStrategy.validateOptions`).
const UNMODELLED_COMPACTION_OPTIONS: [&str; 7] = [
    "tombstone_threshold",
    "tombstone_compaction_interval",
    "unchecked_tombstone_compaction",
    "only_purge_repaired_tombstones",
    "log_all",
    "enabled",
    "provide_overlapping_tombstones",
];

/// The engine's strategy for the table: the c-s strategy and options over
/// the preset's defaults. Leveled compaction pushes idle levels up and has
/// a backlog tracker from Scylla 2.3 (2.2's LCS backlog is infinite;
/// scylla-mechanisms.md 1.4); Cassandra 3.11 does not push.
fn resolve_compaction(
    scenario: &Scenario,
    preset: Preset,
    table: &TableCompaction,
    notes: &mut Vec<String>,
) -> Result<engine::compaction::CompactionStrategy, ScenarioError> {
    use cassandra_stress::CompactionStrategy as Cs;
    use engine::compaction::{CompactionStrategy, LcsOptions, StcsOptions};
    let fail = |reason: String| Err(scenario.error(&table.field, reason));
    let mut stcs = StcsOptions::default();
    let mut lcs = LcsOptions {
        push_to_highest_level: preset.is_scylla_2_3_or_later(),
        infinite_backlog: preset == Preset::Scylla2_2,
        ..LcsOptions::default()
    };
    let mut unmodelled = Vec::new();
    for (name, value) in &table.options {
        let positive = |what: &str| -> Result<u64, ScenarioError> {
            value.parse::<u64>().ok().filter(|v| *v > 0).ok_or_else(|| {
                scenario.error(&table.field, format!("{name}={value}: expected {what}"))
            })
        };
        let fraction = || -> Result<f64, ScenarioError> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| {
                    scenario.error(
                        &table.field,
                        format!("{name}={value}: expected a positive number"),
                    )
                })
        };
        match name.as_str() {
            "sstable_size_in_mb" if table.strategy == Cs::Leveled => {
                lcs.sstable_size_bytes = positive("a positive number of MiB")? * 1024 * 1024;
            }
            "sstable_size_in_mb" => {
                return fail(format!(
                    "sstable_size_in_mb is an option of LeveledCompactionStrategy, not {}",
                    table.strategy.class_name()
                ))
            }
            "min_threshold" => stcs.min_threshold = positive("a number of SSTables of at least 2")? as usize,
            "max_threshold" => stcs.max_threshold = positive("a number of SSTables")? as usize,
            "bucket_low" => stcs.bucket_low = fraction()?,
            "bucket_high" => stcs.bucket_high = fraction()?,
            "min_sstable_size" => {
                stcs.min_sstable_size_bytes = value.parse::<u64>().map_err(|_| {
                    scenario.error(&table.field, format!("{name}={value}: expected a number of bytes"))
                })?;
            }
            known if UNMODELLED_COMPACTION_OPTIONS.contains(&known) => {
                unmodelled.push(format!("{name}={value}"));
            }
            other => {
                return fail(format!(
                    "unknown compaction option `{other}` for {}; accepted: sstable_size_in_mb (leveled), min_threshold, max_threshold, bucket_low, bucket_high, min_sstable_size, and (without effect) {}",
                    table.strategy.class_name(),
                    UNMODELLED_COMPACTION_OPTIONS.join(", ")
                ))
            }
        }
    }
    if stcs.min_threshold < 2 || stcs.max_threshold < stcs.min_threshold {
        return fail(format!(
            "min_threshold {} and max_threshold {}: need 2 <= min_threshold <= max_threshold",
            stcs.min_threshold, stcs.max_threshold
        ));
    }
    if !(stcs.bucket_low < 1.0 && stcs.bucket_high > 1.0) {
        return fail(format!(
            "bucket_low {} and bucket_high {}: need bucket_low < 1 < bucket_high",
            stcs.bucket_low, stcs.bucket_high
        ));
    }
    if !unmodelled.is_empty() {
        notes.push(format!(
            "{}: compaction options {} accepted but do not affect the simulation (tombstones, repair and logging are not modelled)",
            table.origin,
            unmodelled.join(", ")
        ));
    }
    Ok(match table.strategy {
        Cs::SizeTiered => CompactionStrategy::SizeTiered(stcs),
        Cs::Leveled => CompactionStrategy::Leveled(LcsOptions { stcs, ..lcs }),
    })
}

/// The compression chunk of the table: `[table] chunk_length_in_kb`, else
/// the server's default: 4 KiB in Scylla (`compression_parameters::
/// DEFAULT_CHUNK_LENGTH`), 64 KiB in Cassandra 3.11
/// (`CompressionParams.DEFAULT_CHUNK_LENGTH`). `None` for an uncompressed
/// table.
fn resolve_compression_chunk(
    scenario: &Scenario,
    cluster: &ClusterPlan,
    compression: Option<cassandra_stress::Compression>,
    profile_chunk_kb: Option<u64>,
) -> Result<Option<u64>, ScenarioError> {
    let chunk_kb = scenario
        .table
        .as_ref()
        .and_then(|table| table.chunk_length_in_kb)
        .or(profile_chunk_kb);
    let Some(_) = compression else {
        if chunk_kb.is_some() {
            return Err(scenario.error(
                "table.chunk_length_in_kb",
                "the table is uncompressed (no load gives -schema compression=...), so it has no chunks",
            ));
        }
        return Ok(None);
    };
    let kb = chunk_kb.unwrap_or(cluster.preset.default_chunk_kb());
    if !(kb.is_power_of_two() && (1..=1024).contains(&kb)) {
        return Err(scenario.error(
            "table.chunk_length_in_kb",
            format!("{kb} is not a power of two between 1 and 1024 (KiB)"),
        ));
    }
    Ok(Some(kb * 1024))
}

/// A table of many-row partitions (a user profile's clustering columns):
/// a whole partition's SSTable bytes, which caps what a merge of its
/// fragments keeps (`engine::ShardConfig::partition_bytes`). `[data]`'s
/// `row_bytes` is a whole partition when the table is preloaded; else the
/// profile's mean rows with their values and footprint. `None` for
/// one-row partitions. Loads whose profiles size the table's partitions
/// more than a quarter apart are refused: the table has one size.
fn resolve_partition_bytes(
    scenario: &Scenario,
    cluster: &ClusterPlan,
    loads: &[LoadPlan],
    notes: &mut Vec<String>,
) -> Result<Option<u64>, ScenarioError> {
    // (load index, load, mean rows, bytes a row with its footprint, whole).
    let mut wide = loads
        .iter()
        .enumerate()
        .filter_map(|(index, load)| match &load.columns {
            ColumnPlan::Profile(rows) if !rows.profile.single_row_partitions() => {
                let mean_rows = rows.profile.mean_rows_per_partition();
                let per_row = rows.profile.mean_row_bytes()
                    + engine::config::SSTABLE_ROW_OVERHEAD_BYTES as f64;
                let whole = (8.0 + mean_rows * per_row).round() as u64;
                Some((index, load, mean_rows, per_row, whole))
            }
            _ => None,
        });
    let Some((_, load, mean_rows, per_row, from_profile)) = wide.next() else {
        return Ok(None);
    };
    let apart = |a: u64, b: u64| !(0.8..=1.25).contains(&(a as f64 / b as f64));
    if let Some((index, other, .., whole)) = wide.find(|&(.., whole)| apart(whole, from_profile)) {
        return Err(scenario.error(
            &format!("load[{index}].command"),
            format!(
                "load `{}`'s profile gives the table partitions of ~{} in an SSTable, load `{}`'s ~{}: one table has one partition size",
                other.name,
                units::format_bytes(whole),
                load.name,
                units::format_bytes(from_profile),
            ),
        ));
    }
    let Some(preload) = &cluster.preload else {
        return Ok(Some(from_profile));
    };
    if apart(preload.row_bytes, from_profile) {
        notes.push(format!(
            "load `{}`: its profile's partitions take ~{} in an SSTable ({mean_rows:.1} rows of {per_row:.0} B with their footprint); [data] row_bytes says {}, which is what merges keep of a whole partition",
            load.name,
            units::format_bytes(from_profile),
            units::format_bytes(preload.row_bytes),
        ));
    }
    Ok(Some(preload.row_bytes))
}

/// `[table] speculative_retry`, parsed as CQL writes it: `NONE`,
/// `N.NPERCENTILE` (or `Np`), `Nms`.
/// Hinted handoff: the preset's, as `[cluster.yaml]` adjusts it.
fn resolve_hints(
    scenario: &Scenario,
    yaml: &NodeYaml,
    preset: Preset,
    nodes: u32,
) -> Result<Option<engine::hints::HintsSetup>, ScenarioError> {
    let Some(mut setup) = preset.hints(nodes) else {
        if yaml.hinted_handoff_enabled == Some(true) {
            return Err(scenario.error(
                "cluster.yaml.hinted_handoff_enabled",
                format!("{preset} has no hinted handoff (it arrived with Scylla 3.0's commitlog-based hints)"),
            ));
        }
        for (key, set) in [
            (
                "max_hint_window_in_ms",
                yaml.max_hint_window_in_ms.is_some(),
            ),
            (
                "hinted_handoff_throttle_in_kb",
                yaml.hinted_handoff_throttle_in_kb.is_some(),
            ),
        ] {
            if set {
                return Err(scenario.error(
                    &format!("cluster.yaml.{key}"),
                    format!("{preset} has no hinted handoff to set it for"),
                ));
            }
        }
        return Ok(None);
    };
    if yaml.hinted_handoff_enabled == Some(false) {
        return Ok(None);
    }
    if let Some(ms) = yaml.max_hint_window_in_ms {
        if ms > JAVA_INT_MAX {
            return Err(scenario.error(
                "cluster.yaml.max_hint_window_in_ms",
                format!("{ms} ms is more than {JAVA_INT_MAX}, the largest the yaml's int holds"),
            ));
        }
        setup.max_hint_window = SimDuration::from_millis(ms);
    }
    if let Some(kib) = yaml.hinted_handoff_throttle_in_kb {
        if kib > JAVA_INT_MAX {
            return Err(scenario.error(
                "cluster.yaml.hinted_handoff_throttle_in_kb",
                format!(
                    "{kib} KiB/s is more than {JAVA_INT_MAX}, the largest the yaml's int holds"
                ),
            ));
        }
        if !preset.is_cassandra() {
            return Err(scenario.error(
                "cluster.yaml.hinted_handoff_throttle_in_kb",
                format!(
                    "{preset} does not use it (Scylla's hint replay has no bandwidth throttle)"
                ),
            ));
        }
        setup.throttle_bytes_per_sec =
            (kib > 0).then(|| kib as f64 * 1024.0 / f64::from(nodes.max(2) - 1));
    }
    Ok(Some(setup))
}

/// The chance a read asks every replica: `[table]`'s `read_repair_chance`
/// (default 0) and `dclocal_read_repair_chance` (default 0.1, the table
/// default of Scylla 2.x-3.0 and Cassandra 3.11), the larger of the two
/// with one datacenter (Cassandra's `newReadRepairDecision` draws once
/// against both).
fn resolve_read_repair_chance(scenario: &Scenario) -> Result<f64, ScenarioError> {
    let table = scenario.table.clone().unwrap_or_default();
    let mut chance: f64 = 0.0;
    for (key, value, default) in [
        ("read_repair_chance", table.read_repair_chance, 0.0),
        (
            "dclocal_read_repair_chance",
            table.dclocal_read_repair_chance,
            0.1,
        ),
    ] {
        let value = value.unwrap_or(default);
        if !(0.0..=1.0).contains(&value) {
            return Err(scenario.error(
                &format!("table.{key}"),
                format!(
                    "{} is not a chance within 0..=1",
                    units::format_number(value)
                ),
            ));
        }
        chance = chance.max(value);
    }
    Ok(chance)
}

fn resolve_speculative_retry(scenario: &Scenario) -> Result<SpeculativeRetry, ScenarioError> {
    let Some(text) = scenario
        .table
        .as_ref()
        .and_then(|table| table.speculative_retry.as_deref())
    else {
        return Ok(SpeculativeRetry::DEFAULT);
    };
    let upper = text.trim().to_ascii_uppercase();
    let percentile = upper
        .strip_suffix("PERCENTILE")
        .or_else(|| upper.strip_suffix('P'));
    let parsed = if upper == "NONE" {
        Some(SpeculativeRetry::Never)
    } else if let Some(number) = percentile {
        number
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p < 100.0)
            .map(SpeculativeRetry::Percentile)
    } else if upper.ends_with("MS") {
        units::parse_duration(&text.trim().to_ascii_lowercase())
            .ok()
            .map(SpeculativeRetry::Fixed)
    } else {
        None
    };
    parsed.ok_or_else(|| {
        scenario.error(
            "table.speculative_retry",
            format!("`{text}` is not a speculative_retry; accepted: \"NONE\", \"99.0PERCENTILE\" (any percentile between 0 and 100), \"10ms\""),
        )
    })
}

/// The row cache of the cluster's shards: Scylla's takes the shard's free
/// memory; Cassandra's is `row_cache_size_in_mb` (default 0: none), split
/// evenly over the node's shards. In volume mode, hits follow the key
/// popularity of the first load that reads (a sequential read load counts
/// as uniform over its range); `key_rows` is that load's key span (each
/// shard scales it by its ownership).
fn resolve_row_cache(
    scenario: &Scenario,
    cluster: &ClusterPlan,
    loads: &[LoadPlan],
) -> Result<Option<RowCacheSetup>, ScenarioError> {
    let cassandra_mb = scenario
        .cluster
        .yaml
        .as_ref()
        .and_then(|yaml| yaml.row_cache_size_in_mb);
    let config = if cluster.preset.is_cassandra() {
        match cassandra_mb {
            None | Some(0) => return Ok(None),
            Some(mb) if mb.saturating_mul(1 << 20) > cluster.memory_per_node_bytes => {
                return Err(scenario.error(
                    "cluster.yaml.row_cache_size_in_mb",
                    format!(
                        "{mb} MB is more than the node's {} of memory",
                        units::format_bytes(cluster.memory_per_node_bytes)
                    ),
                ))
            }
            Some(mb) => {
                let mut config = RowCacheConfig::cassandra(mb);
                config.capacity_bytes /= u64::from(cluster.shards_per_node.max(1));
                config
            }
        }
    } else {
        if cassandra_mb.is_some() {
            return Err(scenario.error(
                "cluster.yaml.row_cache_size_in_mb",
                "Scylla has no row cache size: its cache takes the memory the memtables leave (remove the setting)",
            ));
        }
        let mut config = RowCacheConfig::scylla(0);
        if cluster.preset.is_scylla_2_3_or_later() {
            config.entry_overhead_bytes = row_cache::SCYLLA_2_3_ENTRY_OVERHEAD_BYTES;
        }
        config
    };
    let (popularity, key_span, mean_row_bytes) = read_popularity(scenario, loads)?;
    Ok(Some(RowCacheSetup {
        config,
        takes_free_memory: !cluster.preset.is_cassandra(),
        popularity: Some(popularity),
        key_rows: key_span as f64,
        mean_row_bytes,
    }))
}

/// Cassandra's OS page cache: the instance's memory less the heap, the
/// off-heap row cache, the SSTables' bloom filters and index summaries
/// (`[data]`'s partitions on this node) and ~1 GiB of JVM non-heap memory
/// (metaspace, thread stacks, direct buffers; an estimate). Scylla reads
/// with O_DIRECT: none.
fn resolve_page_cache(
    scenario: &Scenario,
    cluster: &ClusterPlan,
    loads: &[LoadPlan],
    memory_bytes: u64,
) -> Result<Option<PageCacheSetup>, ScenarioError> {
    if !cluster.preset.is_cassandra() {
        return Ok(None);
    }
    const JVM_NON_HEAP_BYTES: u64 = 1 << 30;
    let row_cache_bytes = cluster.row_cache.as_ref().map_or(0, |setup| {
        setup.config.capacity_bytes * u64::from(cluster.shards_per_node)
    });
    let format = engine::sstable::SSTableFormat::CASSANDRA_STRESS;
    let filters_and_summaries = scenario.data.as_ref().map_or(0, |data| {
        let rows_here = data.partitions * f64::from(cluster.replication_factor.max(1))
            / f64::from(cluster.nodes.max(1));
        let rows_here = rows_here.round() as u64;
        format.filter_bytes(rows_here)
            + format.summary_bytes(rows_here, rows_here * data.row_bytes.0)
    });
    let heap = cluster
        .preset
        .cassandra_heap_bytes(memory_bytes)
        .expect("a Cassandra preset has a heap");
    let config = PageCacheConfig {
        // What a miss brings in where the host's drive has it measured
        // (read-ahead; `models::nvme::DriveParams::page_cache_miss_bytes`).
        miss_bytes: cluster.device.drive.page_cache_miss_bytes,
        ..PageCacheConfig::cassandra(
            memory_bytes,
            heap,
            row_cache_bytes + filters_and_summaries + JVM_NON_HEAP_BYTES,
        )
    };
    let (popularity, key_span, _) = read_popularity(scenario, loads)?;
    Ok(Some(PageCacheSetup {
        config,
        popularity: Some(popularity),
        key_rows: key_span as f64,
        index_pages: cluster.preset.caches_index_pages(),
    }))
}

/// The key popularity of the first load that reads (a sequential read
/// load counts as uniform over its range), its key span and the bytes of
/// a row: what the caches' volume-mode estimates need.
fn read_popularity(
    scenario: &Scenario,
    loads: &[LoadPlan],
) -> Result<(HotMass, u64, u64), ScenarioError> {
    let reader = loads.iter().find(|load| match &load.operation {
        OpMix::Only(kind) => *kind == OpKind::Read,
        OpMix::Mixed { write_fraction, .. } => *write_fraction < 1.0,
    });
    let (curve, hot_keys, key_span, mean_row_bytes) = match reader {
        Some(load) => {
            let (curve, hot_keys, span) = match &load.keys {
                KeyPlan::Sequential { first, last } => {
                    (vec![(0.0, 0.0), (1.0, 1.0)], Vec::new(), last - first + 1)
                }
                KeyPlan::Distribution(distribution) => (
                    distribution.hot_mass_curve(),
                    distribution.hot_keys(),
                    distribution.span(),
                ),
            };
            let row_bytes = scenario
                .data
                .as_ref()
                .map_or(8.0 + load.columns.mean_value_bytes(), |data| {
                    data.row_bytes.0 as f64
                });
            (curve, hot_keys, span, row_bytes.round() as u64)
        }
        None => (vec![(0.0, 0.0), (1.0, 1.0)], Vec::new(), 1, 1),
    };
    let popularity = HotMass::new(curve)
        .and_then(|curve| curve.with_hot_keys(hot_keys))
        .map_err(|reason| {
            scenario.error(
                "load",
                format!("the reads' key popularity gives no usable cache curve: {reason}"),
            )
        })?;
    Ok((popularity, key_span, mean_row_bytes))
}

/// `[fidelity] mode`, checked: true for data mode.
fn resolve_fidelity(scenario: &Scenario) -> Result<bool, ScenarioError> {
    let Some(fidelity) = &scenario.fidelity else {
        return Ok(false);
    };
    match fidelity.mode.as_str() {
        "volume" => Ok(false),
        "data" if scenario.data.is_some() => Err(scenario.error(
            "fidelity.mode",
            "data mode keeps every row in memory and starts empty; `[data]` preloads volume-mode SSTables (use mode = \"volume\", or populate with a write load first)",
        )),
        "data" => Ok(true),
        other => Err(scenario.error(
            "fidelity.mode",
            format!("`{other}` is not a fidelity; accepted: \"volume\", \"data\""),
        )),
    }
}

/// `[data]`, checked: what each shard holds at the start.
fn resolve_data(scenario: &Scenario) -> Result<Option<Preload>, ScenarioError> {
    let Some(data) = &scenario.data else {
        return Ok(None);
    };
    let fail = |field: &str, reason: String| Err(scenario.error(&format!("data.{field}"), reason));
    if !(data.partitions.is_finite() && data.partitions >= 1.0 && data.partitions <= 1e15) {
        return fail(
            "partitions",
            format!(
                "{} is not a number of partitions between 1 and 1e15",
                units::format_number(data.partitions)
            ),
        );
    }
    if !(1..=MAX_ROW_BYTES).contains(&data.row_bytes.0) {
        return fail(
            "row_bytes",
            format!(
                "{} is outside 1 B..=4 GiB (a row's size)",
                units::format_bytes(data.row_bytes.0)
            ),
        );
    }
    let partitions = data.partitions.round() as u64;
    let [first_key, last_key] = data.key_range.unwrap_or([1, partitions]);
    if first_key > last_key {
        return fail("key_range", format!("[{first_key}, {last_key}] is empty"));
    }
    for (field, value, accepted) in [
        (
            "compaction",
            &data.compaction,
            &["size-tiered", "leveled"][..],
        ),
        ("state", &data.state, &["compacted", "steady"][..]),
        ("cache", &data.cache, &["cold", "warm"][..]),
    ] {
        if let Some(value) = value {
            if !accepted.contains(&value.as_str()) {
                let accepted: Vec<String> = accepted.iter().map(|a| format!("\"{a}\"")).collect();
                return fail(
                    field,
                    format!(
                        "`{value}` is not supported; accepted: {}",
                        accepted.join(", ")
                    ),
                );
            }
        }
    }
    let window = match data.window {
        None => None,
        Some(window) => {
            if data.state.as_deref() == Some("steady") {
                return fail(
                    "window",
                    "a window begins compacted; `state = \"steady\"` is already long into the load (leave one out)".into(),
                );
            }
            if data.compaction.as_deref() == Some("leveled") {
                return fail(
                    "window",
                    "carries size-tiered tiers forward; leveled tables are not supported".into(),
                );
            }
            if window.0 == SimDuration::ZERO {
                return fail("window", "must be longer than 0".into());
            }
            Some(window.0)
        }
    };
    Ok(Some(Preload {
        partitions,
        row_bytes: data.row_bytes.0,
        first_key,
        last_key,
        warm_cache: data.cache.as_deref() == Some("warm"),
        start: match (data.state.as_deref(), window) {
            (_, Some(window)) => TableStart::Window(window),
            (Some("steady"), None) => TableStart::Steady,
            _ => TableStart::Compacted,
        },
        steady: None,
    }))
}

/// The preset's controllers with the scenario's `[controller]` applied.
fn scenario_controllers(scenario: &Scenario, preset: Preset) -> Result<Controllers, ScenarioError> {
    let mut controllers = preset_controllers(preset);
    let Some(section) = &scenario.controller else {
        return Ok(controllers);
    };
    for (name, settings, slot) in [
        (
            "compaction",
            &section.compaction,
            &mut controllers.compaction,
        ),
        ("flush", &section.flush, &mut controllers.flush),
    ] {
        let Some(settings) = settings else { continue };
        let Some(BacklogController::Curve { curve, tick }) = slot.clone() else {
            return Err(scenario.error(
                &format!("controller.{name}"),
                format!("{preset} has no backlog controllers (they arrived in Scylla 2.2); remove [controller.{name}] or use scylla-2.2 or later"),
            ));
        };
        if let Some(shares) = settings.static_shares {
            if !(shares.is_finite() && shares > 0.0) {
                return Err(scenario.error(
                    &format!("controller.{name}.static_shares"),
                    format!(
                        "{} is not a positive number of shares",
                        units::format_number(shares)
                    ),
                ));
            }
            if settings.points.is_some() || settings.tick.is_some() {
                return Err(scenario.error(&format!("controller.{name}.static_shares"), "static shares disable the controller: give static_shares or points/tick, not both"));
            }
            *slot = Some(BacklogController::Static(shares));
            continue;
        }
        let curve = match &settings.points {
            Some(points) => {
                let points: Vec<(f64, f64)> = points
                    .iter()
                    .map(|[input, shares]| (*input, *shares))
                    .collect();
                engine::controller::ControllerCurve::new(&points).map_err(|error| {
                    scenario.error(&format!("controller.{name}.points"), error.to_string())
                })?
            }
            None => curve,
        };
        let tick = match settings.tick {
            Some(HumanDuration(tick)) if tick < SimDuration::from_millis(1) => {
                return Err(scenario.error(
                    &format!("controller.{name}.tick"),
                    format!("{tick} is shorter than the 1ms minimum"),
                ));
            }
            Some(HumanDuration(tick)) => tick,
            None => tick,
        };
        *slot = Some(BacklogController::Curve { curve, tick });
    }
    Ok(controllers)
}

/// The catalog instance `choice` names, with the overrides of its inline
/// table; `field` is where the scenario names it (`cluster.instance`,
/// `load[0].loader`).
fn resolve_instance(
    scenario: &Scenario,
    field: &str,
    choice: &InstanceChoice,
) -> Result<Instance, ScenarioError> {
    let base = instance::by_name(&choice.base).ok_or_else(|| {
        scenario.error(
            field,
            format!(
                "unknown instance `{}`; the catalog has {} (`twin instance list`)",
                choice.base,
                instance::names().join(", ")
            ),
        )
    })?;
    base.with_overrides(&choice.overrides)
        .map_err(|error| scenario.error(&format!("{field}.{}", error.field), error.reason))
}

/// The database nodes' instance: `cluster.instance` with the overrides of
/// its inline table and of `[cluster.overrides]` (a field may be set in
/// one of the two, not both).
fn resolve_node_instance(scenario: &Scenario) -> Result<Instance, ScenarioError> {
    let section = &scenario.cluster;
    let inline = &section.instance.overrides;
    let table = section
        .overrides
        .as_ref()
        .map(ClusterOverrides::instance_overrides)
        .unwrap_or_default();
    let in_table = table.fields_set();
    if let Some(twice) = inline
        .fields_set()
        .into_iter()
        .find(|field| in_table.contains(field))
    {
        return Err(scenario.error(
            &format!("cluster.overrides.{twice}"),
            format!("`{twice}` is also set in cluster.instance's table; set it in one place"),
        ));
    }
    let choice = InstanceChoice {
        base: section.instance.base.clone(),
        overrides: inline.or(&table),
    };
    resolve_instance(scenario, "cluster.instance", &choice).map_err(|mut error| {
        // Point at the place that set the field.
        if let Some(field) = error
            .field
            .as_deref()
            .and_then(|f| f.strip_prefix("cluster.instance."))
        {
            if in_table.contains(&field) {
                error = scenario.error(&format!("cluster.overrides.{field}"), error.reason);
            }
        }
        error
    })
}

/// Notes for instance fields a scenario overrides that the simulation does
/// not use: prices, the NIC burst and physical cores of database nodes (it
/// runs on vCPUs and the sustained NIC rate), and everything of a loader
/// but its sustained NIC rate.
fn instance_override_notes(scenario: &Scenario) -> Vec<String> {
    const NODE_INERT: [&str; 4] = [
        "physical_cores",
        "nic_burst_gbps",
        "on_demand_usd_per_hour",
        "reserved_1y_usd_per_hour",
    ];
    let mut notes = Vec::new();
    let cluster = &scenario.cluster;
    let mut node_fields = cluster.instance.overrides.fields_set();
    if let Some(overrides) = &cluster.overrides {
        node_fields.extend(overrides.instance_overrides().fields_set());
    }
    let inert: Vec<&str> = node_fields
        .into_iter()
        .filter(|field| NODE_INERT.contains(field))
        .collect();
    if !inert.is_empty() {
        notes.push(format!(
            "cluster instance override {} accepted but does not affect the simulation (it runs on vCPUs and the sustained NIC rate; prices are catalog data only)",
            inert.join(", ")
        ));
    }
    if scenario.data.as_ref().is_some_and(|data| {
        data.state.as_deref() == Some("steady") && data.compaction.as_deref() != Some("leveled")
    }) {
        notes.push(format!(
            "data: state = \"steady\": a {}-s pilot of the run, started compacted, first measures the writes and the CPU they leave, which place the size-tiered merges under way at the start (summary.json steady_start)",
            crate::cluster::PILOT.as_secs_f64()
        ));
    }
    if let Some(window) = scenario.data.as_ref().and_then(|data| data.window) {
        notes.push(format!(
            "data: window of {} s: a {}-s pilot of the run, started compacted, first measures the writes and the CPU they leave; each shard then starts at its own point of the window, its flushes and merges carried forward to there (summary.json steady_start)",
            window.0.as_secs_f64(),
            crate::cluster::PILOT.as_secs_f64()
        ));
    }
    for load in &scenario.loads {
        let Some(loader) = &load.loader else { continue };
        let inert: Vec<&str> = loader
            .overrides
            .fields_set()
            .into_iter()
            .filter(|field| *field != "nic_gbps")
            .collect();
        if !inert.is_empty() {
            notes.push(format!(
                "load `{}`: loader override {} accepted but does not affect the simulation (a loader is modelled by its NIC only)",
                load.name,
                inert.join(", ")
            ));
        }
    }
    notes
}

fn resolve_cluster(scenario: &Scenario) -> Result<ClusterPlan, ScenarioError> {
    let section = &scenario.cluster;
    let Some(preset) = Preset::from_name(&section.preset) else {
        return Err(scenario.error(
            "cluster.preset",
            format!(
                "unknown preset `{}`; accepted: {}",
                section.preset,
                Preset::names()
            ),
        ));
    };
    let cassandra = preset.is_cassandra();
    let overrides = section.overrides.clone().unwrap_or_default();
    let instance = &resolve_node_instance(scenario)?;
    let drives = instance.drives;
    if drives == 0 {
        return Err(scenario.error(
            "cluster.instance",
            format!("`{}` has no local drives; database nodes need at least one (set cluster.overrides.drives and cluster.overrides.drive)", instance.name),
        ));
    }
    let Some(device) = instance.data_device() else {
        return Err(scenario.error(
            "cluster.instance",
            format!(
                "`{}` with {drives} drives has no drive preset to model them (the catalog has none where no per-drive figures are published); name one with cluster.overrides.drive (`twin device list`)",
                instance.name
            ),
        ));
    };
    let memory = instance.memory_bytes;
    // Where a memory the twin refuses was set (or, by default, may be).
    let memory_field = if section.instance.overrides.memory_bytes.is_some() {
        "cluster.instance.memory"
    } else {
        "cluster.overrides.memory"
    };
    if memory > MAX_NODE_MEMORY_BYTES {
        return Err(scenario.error(
            memory_field,
            format!(
                "{} of memory per node is more than the {} the twin supports",
                units::format_bytes(memory),
                units::format_bytes(MAX_NODE_MEMORY_BYTES)
            ),
        ));
    }
    if cassandra && overrides.shards.is_some_and(|shards| shards != 1) {
        return Err(scenario.error(
            "cluster.overrides.shards",
            "Cassandra is not sharded: a cassandra-3.11 node is one engine on all its cores",
        ));
    }
    let heap = preset.cassandra_heap_bytes(memory);
    if preset == Preset::Cassandra3_11 && memory < (48 << 30) + (8 << 30) {
        return Err(scenario.error(
            "cluster.instance",
            format!(
                "cassandra-3.11 runs R5's 48 GiB G1 heap (the JVM model's pause figures are for it), which needs at least 56 GiB of memory; `{}` has {} (cassandra-5.0 sizes its heap to the memory)",
                instance.name,
                units::format_bytes(memory)
            ),
        ));
    }
    let shards = if cassandra {
        1
    } else {
        overrides.shards.unwrap_or_else(|| instance.scylla_shards())
    };
    // Scylla: a shard's slice of what Seastar leaves after the OS reserve.
    // Cassandra: the memtable space, `memtable_heap_space_in_mb` = a
    // quarter of the heap.
    let usable = memory.saturating_sub(seastar_reserved_memory_bytes(memory));
    let memory_per_shard = if let Some(heap) = heap {
        heap / 4
    } else {
        usable / u64::from(shards)
    };
    if memory_per_shard < 64 * 1024 * 1024 {
        return Err(scenario.error(
            memory_field,
            format!(
                "{} of memory leaves {} per shard for {shards} shards after the OS reserve; at least 64 MiB per shard is needed",
                units::format_bytes(memory),
                units::format_bytes(memory_per_shard)
            ),
        ));
    }
    let yaml = section.yaml.clone().unwrap_or_default();
    let mut jvm = match (preset, heap) {
        (Preset::Cassandra5_0, Some(heap)) => {
            models::jvm::JvmConfig::cassandra_5_0(instance.vcpus, drives, heap)
        }
        _ => models::jvm::JvmConfig::cassandra_3_11(instance.vcpus, drives),
    };
    if let Some(start) = &section.g1_start {
        let models::jvm::GcModel::G1(g1) = jvm.gc else {
            unreachable!("the Cassandra presets collect with G1");
        };
        if !cassandra || g1.evacuation.is_none() {
            return Err(scenario.error(
                "cluster.g1_start",
                format!(
                    "the {} preset has no G1 that learns eden's size (only cassandra-5.0 does)",
                    section.preset
                ),
            ));
        }
        let history = models::jvm::G1History {
            old_used_bytes: start.old.0,
            survival: start.survival,
            survival_deviation: start.survival_deviation,
            copy_ns_per_byte: start.copy_ns_per_byte,
            copy_deviation: start.copy_deviation,
            card_ns_per_byte: start.card_ns_per_byte,
            card_deviation: start.card_deviation,
        };
        history.check(&g1).map_err(|error| {
            scenario.error(
                &format!("cluster.g1_start.{}", error.field),
                format!(
                    "{} (heap {})",
                    error.reason,
                    units::format_bytes(g1.heap_bytes)
                ),
            )
        })?;
        jvm.g1_start = Some(history);
    }
    let (concurrent_compactors, compaction_throughput_bytes_per_sec) = if cassandra {
        // cassandra.yaml 3.11: `concurrent_compactors` defaults to the
        // smaller of data directories and cores within 2..=8 (the JVM
        // model's CompactionExecutor size); `compaction_throughput_mb_per_sec`
        // to 16, 0 turning the limit off.
        let compactors = yaml.concurrent_compactors.unwrap_or(jvm.threads.compaction);
        if !(1..=MAX_CONCURRENT_COMPACTORS).contains(&compactors) {
            return Err(scenario.error(
                "cluster.yaml.concurrent_compactors",
                format!("{compactors} compactors is outside 1..={MAX_CONCURRENT_COMPACTORS}"),
            ));
        }
        jvm.threads.compaction = compactors;
        let default_mib = preset.cassandra_compaction_throughput_mib().unwrap_or(16);
        let throughput = match yaml.compaction_throughput_mb_per_sec.unwrap_or(default_mib) {
            0 => None,
            mb => Some(mb.checked_mul(1024 * 1024).ok_or_else(|| {
                scenario.error(
                    "cluster.yaml.compaction_throughput_mb_per_sec",
                    format!("{mb} MiB/s is too large"),
                )
            })?),
        };
        (Some(compactors), throughput)
    } else {
        (None, None)
    };
    let topology = resolve_topology(scenario, preset, shards)?;
    Ok(ClusterPlan {
        io: IoScheduling::for_preset(preset, &device, shards),
        replication_factor: 1,
        topology,
        preset,
        nodes: section.nodes,
        instance: instance.name.to_string(),
        shards_per_node: shards,
        memory_per_shard_bytes: memory_per_shard,
        memory_per_node_bytes: memory,
        device,
        nic_gbps: instance.nic_gbps,
        costs: preset.costs(),
        connection_landing: !cassandra,
        controllers: scenario_controllers(scenario, preset)?,
        preload: resolve_data(scenario)?,
        data_mode: resolve_fidelity(scenario)?,
        speculative_retry: resolve_speculative_retry(scenario)?,
        read_repair_chance: resolve_read_repair_chance(scenario)?,
        row_cache: None,
        page_cache: None,
        compression_chunk_bytes: None,
        partition_bytes: None,
        network_latency: network_delay(scenario, "latency", models::network::ONE_WAY_LATENCY)?,
        network_jitter: network_delay(scenario, "jitter", models::network::JITTER_MEDIAN)?,
        compaction_enforce_min_threshold: yaml
            .compaction_enforce_min_threshold
            .unwrap_or(preset.enforces_min_threshold()),
        // The table's; `resolve` sets it from the loads and `[data]`.
        compaction: engine::compaction::CompactionStrategy::default(),
        concurrent_compactors,
        compaction_throughput_bytes_per_sec,
        phi_convict_threshold: match yaml.phi_convict_threshold {
            None => engine::gossip::PHI_CONVICT_THRESHOLD,
            Some(phi) if phi > 0.0 && phi.is_finite() => phi,
            Some(phi) => {
                return Err(scenario.error(
                    "cluster.yaml.phi_convict_threshold",
                    format!("{} is not a positive number", units::format_number(phi)),
                ))
            }
        },
        hints: resolve_hints(scenario, &yaml, preset, section.nodes)?,
        planted: engine::planted::Planted::NONE,
        commitlog: {
            let mut commitlog = resolve_commitlog(scenario, &yaml, shards)?;
            if cassandra && commitlog.total_space_per_shard_bytes.is_none() {
                // cassandra.yaml 3.11: `commitlog_total_space_in_mb` is
                // min(8192, a quarter of the commitlog volume).
                commitlog.total_space_per_shard_bytes = Some(8 << 30);
            }
            commitlog
        },
        // 2.1 had no CPU scheduler (mechanisms doc 1.5); 2.2 added groups;
        // Cassandra runs on the JVM over all the node's vCPUs.
        cpu: match preset {
            Preset::Cassandra3_11 | Preset::Cassandra5_0 => CpuScheduling::Jvm(Box::new(jvm)),
            Preset::Scylla2_1 => CpuScheduling::Fifo,
            Preset::Scylla2_2 => CpuScheduling::SCYLLA_2_2,
            Preset::Scylla2_3 | Preset::Scylla3_0 => CpuScheduling::SCYLLA_2_3,
        },
    })
}

/// `[cluster]`'s ring and sampling settings on nodes of `shards` shards
/// (the replication strategy comes from the loads, later).
fn resolve_topology(
    scenario: &Scenario,
    preset: Preset,
    shards: u32,
) -> Result<TopologyPlan, ScenarioError> {
    let section = &scenario.cluster;
    let racks = match &section.racks {
        None => Vec::new(),
        Some(Racks::Count(racks)) => (0..section.nodes).map(|node| node % racks).collect(),
        Some(Racks::Names(names)) => {
            // Rack ids in order of first appearance.
            let mut seen: Vec<&str> = Vec::new();
            names
                .iter()
                .map(|name| {
                    let position = seen.iter().position(|known| *known == name.as_str());
                    position.unwrap_or_else(|| {
                        seen.push(name);
                        seen.len() - 1
                    }) as u32
                })
                .collect()
        }
    };
    let simulated_shards_per_node = match section.simulated_shards_per_node {
        Some(simulated) if simulated > shards => {
            return Err(scenario.error(
                "cluster.simulated_shards_per_node",
                format!(
                    "{simulated} simulated shards but a node has {shards}{}",
                    if preset.is_cassandra() {
                        " (Cassandra is not sharded: sampling needs a sharded Scylla preset)"
                    } else {
                        ""
                    }
                ),
            ))
        }
        // All of them: not sampled.
        Some(simulated) if simulated == shards => None,
        other => other,
    };
    Ok(TopologyPlan {
        num_tokens: section
            .num_tokens
            .unwrap_or(engine::ring::DEFAULT_NUM_TOKENS),
        racks,
        strategy: ReplicationStrategy::SimpleStrategy,
        simulated_shards_per_node,
    })
}

/// Sampling needs enough distinct keys on the simulated shards: each load's
/// key population must hold at least this many keys per simulated node
/// share (`shards / simulated` of them).
const MIN_SAMPLED_KEYS: u64 = 1_000;

/// Under sampling, no single key may take this share of a load's draws
/// (R1's clamped gaussian puts 15.9% on one key; R5's 0.13%).
const SAMPLED_HOT_KEY_MASS: f64 = 0.01;

/// Under sampling, every load's key population must give the simulated
/// shards keys of their own (the clients draw keys until one lands on a
/// simulated shard).
fn check_sampled_populations(
    scenario: &Scenario,
    cluster: &ClusterPlan,
    loads: &[LoadPlan],
) -> Result<(), ScenarioError> {
    if !cluster.sampled() {
        return Ok(());
    }
    let needed = MIN_SAMPLED_KEYS * u64::from(cluster.shards_per_node)
        / u64::from(cluster.simulated_shards());
    for (index, load) in loads.iter().enumerate() {
        if let KeyPlan::Distribution(dist) = &load.keys {
            // A key that takes a share of the draws on its own lives on one
            // shard: the sampled shards would either miss it or, scaled
            // back up, count it once per shard left out.
            if let Some((key, mass)) = dist
                .hot_keys()
                .into_iter()
                .filter(|(_, mass)| *mass >= SAMPLED_HOT_KEY_MASS)
                .max_by(|a, b| a.1.total_cmp(&b.1))
            {
                return Err(scenario.error(
                    &format!("load[{index}].command"),
                    format!(
                        "key {key} alone takes {:.1}% of the draws of {dist}, and one key lives on one shard: sampling {} of {} shards per node cannot stand for it; drop cluster.simulated_shards_per_node",
                        mass * 100.0,
                        cluster.simulated_shards(),
                        cluster.shards_per_node
                    ),
                ));
            }
        }
        let keys = match &load.keys {
            KeyPlan::Sequential { first, last } => (last - first).saturating_add(1),
            KeyPlan::Distribution(dist) => dist.span(),
        };
        if keys < needed {
            return Err(scenario.error(
                &format!("load[{index}].command"),
                format!(
                    "{keys} keys are too few for sampling {} of {} shards per node: the simulated shards would see a handful of keys; give at least {needed} keys or drop cluster.simulated_shards_per_node",
                    cluster.simulated_shards(),
                    cluster.shards_per_node
                ),
            ));
        }
    }
    Ok(())
}

/// `[cluster.yaml]`'s commitlog settings over the shipped scylla.yaml.
fn resolve_commitlog(
    scenario: &Scenario,
    yaml: &NodeYaml,
    shards: u32,
) -> Result<CommitlogPlan, ScenarioError> {
    let mut plan = CommitlogPlan::default();
    if let Some(sync) = &yaml.commitlog_sync {
        plan.sync = match sync.as_str() {
            "periodic" => engine::SyncMode::Periodic,
            "batch" => engine::SyncMode::Batch,
            other => {
                return Err(scenario.error(
                    "cluster.yaml.commitlog_sync",
                    format!(
                        "`{other}` is not a commitlog sync mode; accepted: \"periodic\", \"batch\""
                    ),
                ))
            }
        };
    }
    if let Some(ms) = yaml.commitlog_sync_period_in_ms {
        if !(1..=MAX_SYNC_PERIOD_MS).contains(&ms) {
            return Err(scenario.error(
                "cluster.yaml.commitlog_sync_period_in_ms",
                format!("{ms} ms is outside 1..={MAX_SYNC_PERIOD_MS} (a day)"),
            ));
        }
        plan.sync_period = SimDuration::from_millis(ms);
    }
    if let Some(mb) = yaml.commitlog_segment_size_in_mb {
        if !(1..=1024).contains(&mb) {
            return Err(scenario.error(
                "cluster.yaml.commitlog_segment_size_in_mb",
                format!("{mb} MB is outside 1..=1024"),
            ));
        }
        plan.segment_bytes = mb * 1024 * 1024;
    }
    if let Some(mb) = yaml.commitlog_total_space_in_mb {
        if mb > MAX_COMMITLOG_SPACE_MB {
            return Err(scenario.error(
                "cluster.yaml.commitlog_total_space_in_mb",
                format!("{mb} MB is more than {MAX_COMMITLOG_SPACE_MB} (1 PiB)"),
            ));
        }
        let per_shard = mb * 1024 * 1024 / u64::from(shards.max(1));
        if per_shard < plan.segment_bytes {
            return Err(scenario.error(
                "cluster.yaml.commitlog_total_space_in_mb",
                format!(
                    "{mb} MB over {shards} shards leaves less than one {} MB segment per shard",
                    plan.segment_bytes / (1024 * 1024)
                ),
            ));
        }
        plan.total_space_per_shard_bytes = Some(per_shard);
    }
    Ok(plan)
}

/// `[network] latency` or `jitter` (`field`), at most
/// [`MAX_NETWORK_DELAY`]; `default` when unset.
fn network_delay(
    scenario: &Scenario,
    field: &str,
    default: SimDuration,
) -> Result<SimDuration, ScenarioError> {
    let Some(network) = &scenario.network else {
        return Ok(default);
    };
    let delay = if field == "latency" {
        network.latency
    } else {
        network.jitter
    };
    match delay {
        None => Ok(default),
        Some(delay) if delay.0 <= MAX_NETWORK_DELAY => Ok(delay.0),
        Some(delay) => Err(scenario.error(
            &format!("network.{field}"),
            format!(
                "{} is longer than {MAX_NETWORK_DELAY}, the most a message's {field} may be",
                delay.0
            ),
        )),
    }
}

/// The engine's level for c-s's: one datacenter, no hints, so ANY and
/// LOCAL_ONE act as ONE and EACH_QUORUM and LOCAL_QUORUM as QUORUM.
fn engine_consistency(level: cassandra_stress::ConsistencyLevel) -> engine::ConsistencyLevel {
    use cassandra_stress::ConsistencyLevel as Cs;
    match level {
        Cs::Any | Cs::One | Cs::LocalOne => engine::ConsistencyLevel::One,
        Cs::Two => engine::ConsistencyLevel::Two,
        Cs::Three => engine::ConsistencyLevel::Three,
        Cs::Quorum | Cs::EachQuorum => engine::ConsistencyLevel::Quorum,
        Cs::LocalQuorum => engine::ConsistencyLevel::LocalQuorum,
        Cs::All => engine::ConsistencyLevel::All,
    }
}

/// A `user` command's profile: read from its path (relative to the
/// scenario file), checked against the command's `ops(...)`, and its
/// keyspace and table settings put where a predefined command's `-schema`
/// puts them (`replication(...)`, `compaction(...)`, `compression=`), so
/// the keyspace and table checks below treat both alike. `None` for the
/// predefined commands.
fn user_profile(
    scenario: &Scenario,
    field: &str,
    command: &mut cassandra_stress::StressCommand,
    chunk_kb: &mut Option<u64>,
) -> Result<Option<UserProfile>, ScenarioError> {
    let Operation::User {
        profile: path, ops, ..
    } = &command.operation
    else {
        return Ok(None);
    };
    let scenario_dir = std::path::Path::new(&scenario.source.file)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    // c-s also takes a file URI (`profile=file:///path/to/profile.yaml`).
    let full = scenario_dir.join(path.strip_prefix("file://").unwrap_or(path));
    let shown = full.display().to_string();
    let text = std::fs::read_to_string(&full).map_err(|error| {
        scenario.error(field, format!("profile `{shown}` cannot be read: {error} (profile= is relative to the scenario file)"))
    })?;
    let profile = user_profiles::parse_profile(&text, &shown)
        .map_err(|error| scenario.error(field, error.to_string()))?;
    let names = profile.operation_names();
    for (name, _) in ops {
        if !names.contains(name) {
            return Err(scenario.error(
                field,
                format!("ops(...) names `{name}`, which is not an operation of {shown}: accepted are {}", names.join(", ")),
            ));
        }
    }
    // What the profile defines and the twin does not simulate is refused
    // only when this load uses it.
    if let Some((key, reason)) = profile.refusal(ops) {
        return Err(scenario.error(field, format!("{shown}: {key}: {reason}")));
    }
    // What the engine cannot run, refused by name.
    if profile.insert.partitions.range().1 > engine::MAX_BATCH_PARTS as u64 {
        return Err(scenario.error(
            field,
            format!(
                "{shown}: `insert.partitions` is {}: a batch of the twin holds at most {} partitions",
                profile.insert.partitions,
                engine::MAX_BATCH_PARTS
            ),
        ));
    }
    if let Some(keyspace) = &profile.keyspace_definition {
        command.replication_factor = Some(keyspace.replication_factor);
        command.replication_strategy = Some(if keyspace.network_topology {
            ReplicationStrategy::NetworkTopologyStrategy
        } else {
            ReplicationStrategy::SimpleStrategy
        });
    }
    if let Some((class, options)) = &profile.table.compaction {
        command.compaction = Some(match class.to_ascii_lowercase().as_str() {
            "sizetieredcompactionstrategy" => cassandra_stress::CompactionStrategy::SizeTiered,
            "leveledcompactionstrategy" => cassandra_stress::CompactionStrategy::Leveled,
            _ => {
                return Err(scenario.error(
                    field,
                    format!("{shown}: table_definition: compaction class `{class}` is not simulated by the twin: accepted are SizeTieredCompactionStrategy and LeveledCompactionStrategy"),
                ))
            }
        });
        command.compaction_options = options.clone();
    }
    match &profile.table.compression {
        None | Some(None) => {}
        Some(Some((class, chunk))) => {
            command.compression = Some(
                cassandra_stress::Compression::from_class_name(class).ok_or_else(|| {
                    scenario.error(
                        field,
                        format!("{shown}: table_definition: compression class `{class}` is not modelled: accepted are LZ4Compressor, SnappyCompressor, DeflateCompressor"),
                    )
                })?,
            );
            if let Some(kb) = *chunk {
                match *chunk_kb {
                    Some(earlier) if earlier != kb => {
                        return Err(scenario.error(
                            field,
                            format!("{shown}: table_definition: chunk_length_in_kb {kb} differs from the table's {earlier} (set by an earlier load's profile); the twin simulates one table"),
                        ))
                    }
                    _ => *chunk_kb = Some(kb),
                }
            }
        }
    }
    Ok(Some(profile))
}

fn resolve_load(
    scenario: &Scenario,
    field: &str,
    section: &crate::scenario::LoadSection,
    command: &cassandra_stress::StressCommand,
    profile: Option<UserProfile>,
    earlier: &[LoadPlan],
) -> Result<LoadPlan, ScenarioError> {
    let fail = |reason: String| Err(scenario.error(field, reason));
    let operation = match &command.operation {
        Operation::User {
            ops, clustering, ..
        } => {
            let profile = profile
                .as_ref()
                .expect("a user command has its profile read");
            // Inserts and the queries that write are writes; the rest read.
            let weight = |writes: bool| -> f64 {
                ops.iter()
                    .filter(|(name, _)| {
                        let is_write = name == "insert"
                            || profile
                                .query(name)
                                .is_some_and(|q| q.shape == QueryShape::Write);
                        is_write == writes
                    })
                    .map(|(_, weight)| weight)
                    .sum()
            };
            let (write_weight, read_weight) = (weight(true), weight(false));
            if read_weight == 0.0 {
                OpMix::Only(OpKind::Write)
            } else if write_weight == 0.0 {
                OpMix::Only(OpKind::Read)
            } else {
                OpMix::Mixed {
                    write_fraction: write_weight / (write_weight + read_weight),
                    clustering: clustering.clone(),
                }
            }
        }
        Operation::Write => OpMix::Only(OpKind::Write),
        Operation::Read => OpMix::Only(OpKind::Read),
        Operation::Mixed {
            write_weight,
            read_weight,
            clustering,
        } => OpMix::Mixed {
            write_fraction: write_weight / (write_weight + read_weight),
            clustering: clustering.clone(),
        },
    };
    let rate = match command.rate {
        Rate::ClosedLoop { threads, throttle_per_sec } => RatePlan::ClosedLoop {
            threads,
            limit_ops_per_s: throttle_per_sec.map(|rate| rate as f64),
        },
        Rate::Throttled {
            threads,
            ops_per_sec,
        } => RatePlan::Throttled {
            threads,
            ops_per_s: ops_per_sec as f64,
        },
        Rate::FixedRate { ops_per_sec, threads } => RatePlan::Fixed {
            ops_per_s: ops_per_sec as f64,
            threads,
        },
        Rate::Auto { .. } => {
            return fail("c-s's automatic thread search (no `-rate threads=N`) is not simulated: its result depends on when throughput stops improving, which a twin should report rather than pick; give `-rate threads=N`".into())
        }
    };
    let threads = match command.rate {
        Rate::ClosedLoop { threads, .. } | Rate::Throttled { threads, .. } => Some(threads),
        Rate::FixedRate { threads, .. } => threads,
        Rate::Auto { .. } => None,
    };
    let processes = section.processes.unwrap_or(1);
    if let Some(threads) = threads {
        let total = u64::from(threads) * u64::from(processes);
        if total > crate::scenario::MAX_CLIENT_THREADS_PER_LOAD {
            return fail(format!(
                "{processes} processes of {threads} threads are {total} client threads; a load runs at most {}",
                crate::scenario::MAX_CLIENT_THREADS_PER_LOAD
            ));
        }
    }
    let largest_row = match &profile {
        None => command
            .columns
            .count
            .range()
            .end()
            .saturating_mul(*command.columns.size.range().end()),
        Some(profile) => profile.largest_row_bytes(),
    };
    if largest_row > u64::from(u32::MAX) {
        return fail("rows of more than 4 GiB of column values are not supported".into());
    }
    let columns = match profile {
        None => ColumnPlan::Columns {
            count: command.columns.count,
            size: command.columns.size,
        },
        Some(profile) => {
            let Operation::User { ops, .. } = &command.operation else {
                unreachable!("a profile comes with a user command");
            };
            let mut writes = Vec::new();
            let mut reads = Vec::new();
            for (name, weight) in ops.iter().filter(|(_, weight)| *weight > 0.0) {
                match profile.query(name).map(|query| &query.shape) {
                    None => writes.push((None, *weight)),
                    Some(QueryShape::Write) => writes.push((Some(QueryShape::Write), *weight)),
                    Some(shape) => reads.push((shape.clone(), *weight)),
                }
            }
            ColumnPlan::Profile(Arc::new(ProfileRows {
                profile,
                writes,
                reads,
            }))
        }
    };
    let keys = match &command.population {
        Population::Sequential { first, last, wrap: true } => KeyPlan::Sequential { first: *first, last: *last },
        Population::Sequential { wrap: false, .. } => {
            return fail("`-pop seq=a..b no-wrap` (stop when the keys run out) is not simulated yet; drop `no-wrap` or bound the load with n=".into())
        }
        Population::Distribution(dist) => KeyPlan::Distribution(dist.clone()),
    };
    let loader = match &section.loader {
        Some(choice) => resolve_instance(scenario, &field.replace(".command", ".loader"), choice)?,
        None => instance::by_name(DEFAULT_LOADER)
            .expect("the default loader is in the catalog")
            .clone(),
    };
    let start = match (&section.after, section.start) {
        (Some(_), Some(_)) => {
            return Err(scenario.error(
                &field.replace(".command", ".after"),
                "give `start` or `after`, not both",
            ))
        }
        (Some(after), None) => match earlier.iter().position(|load| load.name == *after) {
            Some(index) => StartPlan::After(index),
            None => {
                return Err(scenario.error(
                    &field.replace(".command", ".after"),
                    format!("`{after}` is not the name of an earlier [[load]]"),
                ))
            }
        },
        (None, start) => {
            StartPlan::At(start.map_or(SimDuration::ZERO, |HumanDuration(start)| start))
        }
    };
    let stop = match command.stop {
        Stop::Count(count) => StopPlan::Count(count),
        Stop::Duration(duration) => StopPlan::Duration(duration),
        Stop::Uncertainty { .. } => {
            return fail("give `n=N` or `duration=D`: c-s's run-until-stable mode (`err<`) arrives with the workloads issue".into())
        }
    };
    Ok(LoadPlan {
        name: section.name.clone(),
        command: section.command.clone(),
        processes,
        rate,
        operation,
        columns,
        keys,
        stop,
        start,
        loader: loader.name.to_string(),
        loader_nic_gbps: loader.nic_gbps,
        tries: command.tries(),
        consistency: engine_consistency(command.consistency),
        routing: match section.routing.as_deref() {
            None | Some("token-aware") => Routing::TokenAware,
            Some("shard-aware") => Routing::ShardAware,
            Some("round-robin") => Routing::RoundRobin,
            Some(other) => {
                return Err(scenario.error(
                    &field.replace(".command", ".routing"),
                    format!(
                    "`{other}` is not a routing policy; accepted: \"token-aware\", \"shard-aware\", \"round-robin\""
                ),
                ))
            }
        },
        client_timeout: section
            .client_timeout
            .map_or(DEFAULT_CLIENT_TIMEOUT, |HumanDuration(timeout)| timeout),
        client: match section.client.as_deref() {
            None | Some("cassandra-stress") => crate::load::Client::CassandraStress,
            Some("twin-real") => crate::load::Client::TwinReal,
            Some(other) => {
                return Err(scenario.error(
                    &field.replace(".command", ".client"),
                    format!(
                        "`{other}` is not a client the twin models; accepted: \"cassandra-stress\", \"twin-real\""
                    ),
                ))
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of scenario `text`, or its error as one string.
    fn resolved(text: &str) -> Result<RunPlan, String> {
        let scenario = crate::scenario::parse("p.toml", text).map_err(|error| error.to_string())?;
        resolve(&scenario, &RunOverrides::default()).map_err(|error| error.to_string())
    }

    /// `[[load]] client` names the program running the load: c-s by
    /// default, `twin real`, or an error naming the field and the choices.
    #[test]
    fn a_load_names_its_client() {
        let scenario = |client: &str| {
            format!(
                "name = \"p\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 1\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\n{client}\ncommand = \"cassandra-stress write n=10\"\n"
            )
        };
        let client = |text: &str| resolved(&scenario(text)).map(|plan| plan.loads[0].client);
        assert_eq!(client(""), Ok(crate::load::Client::CassandraStress));
        assert_eq!(
            client("client = \"cassandra-stress\""),
            Ok(crate::load::Client::CassandraStress)
        );
        assert_eq!(
            client("client = \"twin-real\""),
            Ok(crate::load::Client::TwinReal)
        );
        let error = client("client = \"ycsb\"").unwrap_err();
        assert!(
            error.contains("load[0].client")
                && error.contains("`ycsb`")
                && error.contains("twin-real"),
            "{error}"
        );
    }

    /// `[cluster.g1_start]` starts cassandra-5.0's G1 from what it names;
    /// a value it cannot hold, or a preset without a learning G1, is one
    /// line naming the field.
    #[test]
    fn a_jvm_starts_from_the_g1_the_scenario_gives_it() {
        let scenario = |preset: &str, start: &str| {
            format!(
                "name = \"p\"\n[cluster]\npreset = \"{preset}\"\nnodes = 1\ninstance = \"i3.2xlarge\"\n[cluster.g1_start]\n{start}\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n"
            )
        };
        let good = "old = \"4GiB\"\nsurvival = 0.05\nsurvival_deviation = 0.01\ncopy_ns_per_byte = 1.5\ncopy_deviation = 0.1";
        let plan = resolved(&scenario("cassandra-5.0", good)).unwrap();
        let CpuScheduling::Jvm(jvm) = &plan.cluster.cpu else {
            panic!("a JVM preset");
        };
        let start = jvm.g1_start.unwrap();
        assert_eq!(start.old_used_bytes, 4 << 30);
        assert_eq!((start.survival, start.copy_ns_per_byte), (0.05, 1.5));
        for (start, field) in [
            (good.replace("0.05", "1.2"), "cluster.g1_start.survival"),
            (good.replace("\"4GiB\"", "\"1MiB\""), "cluster.g1_start.old"),
            (good.replace("\"4GiB\"", "\"1TiB\""), "cluster.g1_start.old"),
            (
                good.replace("= 1.5", "= -1.5"),
                "cluster.g1_start.copy_ns_per_byte",
            ),
        ] {
            let error = resolved(&scenario("cassandra-5.0", &start)).unwrap_err();
            assert!(error.contains(field), "{field}: {error}");
        }
        for preset in ["cassandra-3.11", "scylla-2.2"] {
            let instance = if preset == "cassandra-3.11" {
                "i3.metal"
            } else {
                "i3.2xlarge"
            };
            let text = scenario(preset, good).replace("i3.2xlarge", instance);
            let error = resolved(&text).unwrap_err();
            assert!(
                error.contains("cluster.g1_start") && error.contains("only cassandra-5.0"),
                "{preset}: {error}"
            );
        }
        let unknown =
            resolved(&scenario("cassandra-5.0", &format!("{good}\neden = 3"))).unwrap_err();
        assert!(unknown.contains("eden"), "{unknown}");
    }

    /// The plan of a 3-node scenario running `command` in `processes`.
    fn plan(command: &str, processes: u32) -> Result<RunPlan, String> {
        resolved(&format!(
            "name = \"p\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"{command}\"\nprocesses = {processes}\n"
        ))
    }

    /// Each count within its own bound can still multiply past what a load
    /// may run: that is one line naming the load's command.
    #[test]
    fn a_load_runs_at_most_a_million_client_threads() {
        assert!(plan("cassandra-stress write n=10 -rate threads=1000", 1000).is_ok());
        let error = plan("cassandra-stress write n=10 -rate threads=1001", 1000).unwrap_err();
        assert!(
            error.contains("load[0].command")
                && error.contains("1000 processes of 1001 threads are 1001000 client threads; a load runs at most 1000000")
                && !error.contains('\n'),
            "{error}"
        );
    }

    /// The plan of a 3-node scenario with `extra` TOML appended.
    fn plan_with(preset: &str, instance: &str, extra: &str) -> Result<RunPlan, String> {
        resolved(&format!(
            "name = \"p\"\n[cluster]\npreset = \"{preset}\"\nnodes = 3\ninstance = \"{instance}\"\n{extra}\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n"
        ))
    }

    /// Each numeric setting past its range is one line naming the field
    /// (and never wraps around into a small number).
    #[test]
    fn settings_past_their_range_are_one_line_errors_naming_the_field() {
        let cases = [
            (
                "scylla-3.0",
                "i3.large",
                "[cluster.yaml]\ncommitlog_sync_period_in_ms = 86400001",
                "cluster.yaml.commitlog_sync_period_in_ms",
                "outside 1..=86400000",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[cluster.yaml]\ncommitlog_total_space_in_mb = 9223372036854775807",
                "cluster.yaml.commitlog_total_space_in_mb",
                "1 PiB",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[cluster.yaml]\nmax_hint_window_in_ms = 2147483648",
                "cluster.yaml.max_hint_window_in_ms",
                "int",
            ),
            (
                "cassandra-3.11",
                "i3.4xlarge",
                "[cluster.yaml]\nhinted_handoff_throttle_in_kb = 2147483648",
                "cluster.yaml.hinted_handoff_throttle_in_kb",
                "int",
            ),
            (
                "cassandra-3.11",
                "i3.4xlarge",
                "[cluster.yaml]\nconcurrent_compactors = 4294967295",
                "cluster.yaml.concurrent_compactors",
                "outside 1..=1024",
            ),
            (
                "cassandra-3.11",
                "i3.4xlarge",
                "[cluster.yaml]\nrow_cache_size_in_mb = 9223372036854775807",
                "cluster.yaml.row_cache_size_in_mb",
                "of memory",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[cluster.overrides]\nmemory = \"1000TB\"",
                "cluster.overrides.memory",
                "64.0 TiB",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[data]\npartitions = 1e300\nrow_bytes = \"100B\"",
                "data.partitions",
                "1e300 is not",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[data]\npartitions = 1e6\nrow_bytes = \"5GiB\"",
                "data.row_bytes",
                "outside 1 B..=4 GiB",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[network]\nlatency = \"11s\"",
                "network.latency",
                "longer than 10s",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[network]\njitter = \"1000h\"",
                "network.jitter",
                "longer than 10s",
            ),
        ];
        for (preset, instance, extra, field, reason) in cases {
            let error = plan_with(preset, instance, extra).unwrap_err();
            assert!(
                error.contains(field) && error.contains(reason) && !error.contains('\n'),
                "{extra}: {error}"
            );
        }
        // Within range, each is accepted.
        assert!(plan_with("scylla-3.0", "i3.large", "[cluster.yaml]\ncommitlog_sync_period_in_ms = 86400000\nmax_hint_window_in_ms = 2147483647").is_ok());
    }
}
