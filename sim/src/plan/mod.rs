//! From a parsed scenario to a [`RunPlan`]: instance lookup, overrides, shard
//! memory, and each load's cassandra-stress command resolved into what the
//! simulator's clients do.
//!
//! Every choice that changes what is simulated is either in the scenario or
//! reported: the plan's `describe()` line is printed at the start of a run,
//! and `notes` lists options accepted but without effect on the simulation.
//!
//! This file holds the public API ([`resolve`], [`RunOverrides`],
//! [`RunPlan::describe`]) and what spans the loads (the keyspace's
//! replication, the table's compressor and compaction, set once by the
//! first load that names them). One file per scenario section resolves the
//! rest: `cluster` (`[cluster]`, the instance, shards, memory, JVM),
//! `topology` (the ring, racks, sampling), `yaml` (`[cluster.yaml]`'s
//! commitlog and hints), `network`, `table`, `compaction` (the table's),
//! `cache` (row and page caches), `data`, `fidelity`, `controller` and
//! `load` (`[[load]]`). Faults and topology operations are
//! `crate::operations`'.

mod cache;
mod cluster;
mod compaction;
mod controller;
mod data;
mod fidelity;
mod load;
mod network;
mod table;
mod topology;
mod yaml;

use models::cassandra_stress::{self, ReplicationStrategy};
use units::SimDuration;

use crate::cluster::RunPlan;
use crate::load::search_thread_counts;
use crate::load::LoadPlan;
use crate::scenario::{HumanDuration, Scenario, ScenarioError};
use cache::{resolve_page_cache, resolve_row_cache};
use cluster::{instance_override_notes, resolve_cluster};
use compaction::{
    describe_compaction, describe_compaction_spec, resolve_compaction, TableCompaction,
};
use controller::describe_controllers;
use load::{expand_search, resolve_load, user_profile};
use table::{resolve_compression_chunk, resolve_partition_bytes};
use topology::{check_sampled_populations, describe_topology};

pub use cluster::{MAX_CONCURRENT_COMPACTORS, MAX_NODE_MEMORY_BYTES};
pub use data::MAX_ROW_BYTES;
pub use network::MAX_NETWORK_DELAY;
pub use yaml::{MAX_COMMITLOG_SPACE_MB, MAX_SYNC_PERIOD_MS};

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
        let expanded = match command.rate {
            cassandra_stress::Rate::Auto {
                min_threads,
                max_threads,
                ..
            } => expand_search(
                load,
                &search_thread_counts(min_threads, max_threads),
                !matches!(command.operation, cassandra_stress::Operation::Read),
                loads.len(),
            ),
            _ => vec![load],
        };
        // Names key a run's results (`summary.json` `loads`, the HDR logs):
        // two loads of one name would leave one of them out.
        for load in &expanded {
            if let Some(other) = loads.iter().position(|earlier| earlier.name == load.name) {
                return Err(scenario.error(
                    &format!("load[{index}].name"),
                    format!(
                        "`{}` names load {other} too; each load needs a name of its own, as its results go by it",
                        load.name
                    ),
                ));
            }
        }
        loads.extend(expanded);
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

/// What the tests of each section's file share.
#[cfg(test)]
mod testing {
    use super::*;

    /// The plan of scenario `text`, or its error as one string.
    pub(super) fn resolved(text: &str) -> Result<RunPlan, String> {
        let scenario = crate::scenario::parse("p.toml", text).map_err(|error| error.to_string())?;
        resolve(&scenario, &RunOverrides::default()).map_err(|error| error.to_string())
    }

    /// The plan of a 3-node scenario with `extra` TOML appended.
    pub(super) fn plan_with(preset: &str, instance: &str, extra: &str) -> Result<RunPlan, String> {
        resolved(&format!(
            "name = \"p\"\n[cluster]\npreset = \"{preset}\"\nnodes = 3\ninstance = \"{instance}\"\n{extra}\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n"
        ))
    }

    /// Each case (preset, instance, `extra` TOML, field, part of the
    /// reason) is refused with one line naming the field (a setting past
    /// its range never wraps around into a small number).
    pub(super) fn assert_refused(cases: &[(&str, &str, &str, &str, &str)]) {
        for &(preset, instance, extra, field, reason) in cases {
            let error = plan_with(preset, instance, extra).unwrap_err();
            assert!(
                error.contains(field) && error.contains(reason) && !error.contains('\n'),
                "{extra}: {error}"
            );
        }
    }
}
