//! `[cluster]`'s ring and sampling settings: vnodes per node, racks, and
//! how many shards per node are simulated (representative-shard sampling),
//! with the checks that keep a sampled run honest.
//!
//! `num_tokens` defaults to `engine::ring::DEFAULT_NUM_TOKENS`; the
//! replication strategy comes from the loads, later. Sampling needs at
//! least [`MIN_SAMPLED_KEYS`] keys per simulated share of a node and no key
//! taking [`SAMPLED_HOT_KEY_MASS`] of the draws (R1's clamped gaussian puts
//! 15.9% on one key).

use models::cassandra_stress::ReplicationStrategy;

use crate::cluster::{ClusterPlan, TopologyPlan};
use crate::load::{KeyPlan, LoadPlan};
use crate::preset::Preset;
use crate::scenario::{Racks, Scenario, ScenarioError};

/// `; ring: ...` (and the sampling, if any) for the describe line.
pub(super) fn describe_topology(cluster: &ClusterPlan) -> String {
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

/// `[cluster]`'s ring and sampling settings on nodes of `shards` shards
/// (the replication strategy comes from the loads, later).
pub(super) fn resolve_topology(
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
pub(super) fn check_sampled_populations(
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
