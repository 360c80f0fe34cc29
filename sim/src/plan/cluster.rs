//! `[cluster]`: the preset, the node instance (with `[cluster.overrides]`
//! and the inline table's overrides), shard count and memory, the JVM and
//! `[cluster.g1_start]`, Cassandra's compaction threads and throughput, and
//! the pieces the other files of `plan` resolve (topology, `[data]`,
//! `[fidelity]`, `[table]`, `[network]`, `[controller]`, `[cluster.yaml]`).
//!
//! Where the numbers come from: the instance catalog (`models::instance`,
//! `twin instance list`); Seastar's OS memory reserve
//! (`seastar_reserved_memory_bytes`) for a Scylla shard's memory, a quarter
//! of the heap (`memtable_heap_space_in_mb`) for Cassandra's; R5's 48 GiB
//! G1 heap for cassandra-3.11; cassandra.yaml 3.11's defaults for
//! `concurrent_compactors`, `compaction_throughput_mb_per_sec` and
//! `commitlog_total_space_in_mb`; the twin's own bounds (64 TiB of memory,
//! 1024 compactors, 64 MiB per shard at least).

use models::instance::{self, seastar_reserved_memory_bytes, Instance};

use super::controller::scenario_controllers;
use super::data::resolve_data;
use super::fidelity::resolve_fidelity;
use super::network::network_delay;
use super::table::{resolve_read_repair_chance, resolve_speculative_retry};
use super::topology::resolve_topology;
use super::yaml::{resolve_commitlog, resolve_hints};
use crate::cluster::{ClusterPlan, CpuScheduling, IoScheduling};
use crate::preset::Preset;
use crate::scenario::{ClusterOverrides, InstanceChoice, Scenario, ScenarioError};

/// The most memory a node may have (`cluster.overrides.memory`): 64 TiB,
/// beyond the largest instances sold (24 TiB).
pub const MAX_NODE_MEMORY_BYTES: u64 = 64 << 40;

/// The most compaction threads (`concurrent_compactors`).
pub const MAX_CONCURRENT_COMPACTORS: u32 = 1024;

/// `[cluster] cpu_slowdown`'s bounds: cores a tenth to ten times as fast
/// as the preset's calibration machine's.
pub const CPU_SLOWDOWN_RANGE: (f64, f64) = (0.1, 10.0);

/// The catalog instance `choice` names, with the overrides of its inline
/// table; `field` is where the scenario names it (`cluster.instance`,
/// `load[0].loader`).
pub(super) fn resolve_instance(
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
pub(super) fn instance_override_notes(scenario: &Scenario) -> Vec<String> {
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

pub(super) fn resolve_cluster(scenario: &Scenario) -> Result<ClusterPlan, ScenarioError> {
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
        let history = g1_start_history(start, models::jvm::parallel_gc_threads(jvm.cores))
            .map_err(|(field, reason)| {
                scenario.error(&format!("cluster.g1_start.{field}"), reason)
            })?;
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
    let cpu_slowdown = section.cpu_slowdown.unwrap_or(1.0);
    if !(CPU_SLOWDOWN_RANGE.0..=CPU_SLOWDOWN_RANGE.1).contains(&cpu_slowdown) {
        return Err(scenario.error(
            "cluster.cpu_slowdown",
            format!(
                "{cpu_slowdown} is outside {}..={} (the preset's CPU prices times it)",
                CPU_SLOWDOWN_RANGE.0, CPU_SLOWDOWN_RANGE.1
            ),
        ));
    }
    jvm.scale_cpu(cpu_slowdown);
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
        costs: preset.costs().scaled(cpu_slowdown),
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

/// The G1 history `[cluster.g1_start]` gives, on a node of `gc_threads`
/// GC threads (a sequence left out is a new JVM's); a triple that is not
/// `[average, variance, samples]` is refused with its field (the ranges
/// of the values are `G1History::check`'s).
fn g1_start_history(
    start: &crate::scenario::G1StartSection,
    gc_threads: u32,
) -> Result<models::jvm::G1History, (String, String)> {
    use models::g1_policy::{G1Analytics, Seq, SurvRateGroup};
    let seq = |field: &str, triple: [f64; 3]| -> Result<Seq, (String, String)> {
        let [average, variance, samples] = triple;
        if !(samples.fract() == 0.0 && (0.0..=f64::from(Seq::LENGTH)).contains(&samples)) {
            return Err((
                field.to_string(),
                format!(
                    "samples {samples} is not a whole number from 0 to {}",
                    Seq::LENGTH
                ),
            ));
        }
        Ok(Seq::learnt(average, variance, samples as u32))
    };
    let mut analytics = G1Analytics::seeded(gc_threads);
    for (field, given, into) in [
        (
            "copy_ns_per_byte",
            start.copy_ns_per_byte,
            &mut analytics.copy_ns_per_byte,
        ),
        (
            "constant_other_ns",
            start.constant_other_ns,
            &mut analytics.constant_other_ns,
        ),
        (
            "young_other_ns_per_region",
            start.young_other_ns_per_region,
            &mut analytics.young_other_ns_per_region,
        ),
        (
            "scan_ns_per_card",
            start.scan_ns_per_card,
            &mut analytics.scan_ns_per_card,
        ),
        ("rs_cards", start.rs_cards, &mut analytics.rs_cards),
    ] {
        if let Some(triple) = given {
            *into = seq(field, triple)?;
        }
    }
    let group =
        |field: &str, given: &Option<Vec<[f64; 3]>>| -> Result<Vec<Seq>, (String, String)> {
            match given {
                None => Ok(SurvRateGroup::new().predictors().to_vec()),
                Some(ages) => ages
                    .iter()
                    .enumerate()
                    .map(|(age, triple)| seq(&format!("{field}[{age}]"), *triple))
                    .collect(),
            }
        };
    Ok(models::jvm::G1History {
        old_used_bytes: start.old.0,
        analytics,
        eden_survival: group("eden_survival", &start.eden_survival)?,
        survivor_survival: group("survivor_survival", &start.survivor_survival)?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_refused, resolved};
    use crate::cluster::CpuScheduling;

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
        let good = "old = \"4GiB\"\ncopy_ns_per_byte = [1.5, 0.1, 10]\neden_survival = [[0.05, 0.01, 10], [0.04, 0.01, 3]]";
        let plan = resolved(&scenario("cassandra-5.0", good)).unwrap();
        let CpuScheduling::Jvm(jvm) = &plan.cluster.cpu else {
            panic!("a JVM preset");
        };
        let start = jvm.g1_start.as_ref().unwrap();
        assert_eq!(start.old_used_bytes, 4 << 30);
        assert_eq!(start.analytics.copy_ns_per_byte.average(), 1.5);
        assert_eq!(start.eden_survival.len(), 2);
        assert_eq!(start.eden_survival[1].samples(), 3);
        // Left out: a new JVM's seed (one sample).
        assert_eq!(start.analytics.rs_cards.samples(), 0);
        assert_eq!(start.survivor_survival.len(), 1);
        for (start, field) in [
            (
                good.replace("0.05", "1.2"),
                "cluster.g1_start.eden_survival[0]",
            ),
            (
                good.replace(", 3]", ", 3.5]"),
                "cluster.g1_start.eden_survival[1]",
            ),
            (good.replace("\"4GiB\"", "\"1MiB\""), "cluster.g1_start.old"),
            (good.replace("\"4GiB\"", "\"1TiB\""), "cluster.g1_start.old"),
            (
                good.replace("[1.5", "[-1.5"),
                "cluster.g1_start.copy_ns_per_byte",
            ),
            (
                good.replace("0.1, 10]", "-0.1, 10]"),
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

    /// Each numeric setting this file resolves is, past its range, one
    /// line naming the field (and never wraps around into a small number).
    #[test]
    fn settings_past_their_range_are_one_line_errors_naming_the_field() {
        assert_refused(&[
            (
                "cassandra-3.11",
                "i3.4xlarge",
                "[cluster.yaml]\nconcurrent_compactors = 4294967295",
                "cluster.yaml.concurrent_compactors",
                "outside 1..=1024",
            ),
            (
                "scylla-3.0",
                "i3.large",
                "[cluster.overrides]\nmemory = \"1000TB\"",
                "cluster.overrides.memory",
                "64.0 TiB",
            ),
        ]);
    }
}
