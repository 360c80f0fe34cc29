//! The caches of a node: Scylla's row cache (the shard's free memory),
//! Cassandra's row cache (`[cluster.yaml] row_cache_size_in_mb`) and
//! Cassandra's OS page cache (what the heap and the off-heap structures
//! leave of the instance's memory).
//!
//! In volume mode hits follow the key popularity of the first load that
//! reads (`engine::cache::row_cache::HotMass`). The caches' own figures are
//! `engine::cache`'s (`RowCacheConfig::scylla` and `::cassandra`, Scylla
//! 2.3's smaller entry overhead, `PageCacheConfig::cassandra`);
//! `row_cache_size_in_mb` defaults to 0 (no row cache), as in Cassandra
//! 3.11. The page cache's read-ahead per miss is the drive's measured
//! figure (`models::nvme::DriveParams::page_cache_miss_bytes`); ~1 GiB of
//! JVM non-heap memory is an estimate.

use crate::cluster::ClusterPlan;
use crate::load::{KeyPlan, LoadPlan, OpKind, OpMix};
use crate::scenario::{Scenario, ScenarioError};
use engine::cache::page_cache::PageCacheConfig;
use engine::cache::row_cache::{self, HotMass, RowCacheConfig};
use engine::config::{PageCacheSetup, RowCacheSetup};

/// The row cache of the cluster's shards: Scylla's takes the shard's free
/// memory; Cassandra's is `row_cache_size_in_mb` (default 0: none), split
/// evenly over the node's shards. In volume mode, hits follow the key
/// popularity of the first load that reads (a sequential read load counts
/// as uniform over its range); `key_rows` is that load's key span (each
/// shard scales it by its ownership).
pub(super) fn resolve_row_cache(
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
pub(super) fn resolve_page_cache(
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

#[cfg(test)]
mod tests {
    use super::super::testing::assert_refused;

    /// Each numeric setting this file resolves is, past its range, one
    /// line naming the field (and never wraps around into a small number).
    #[test]
    fn settings_past_their_range_are_one_line_errors_naming_the_field() {
        assert_refused(&[(
            "cassandra-3.11",
            "i3.4xlarge",
            "[cluster.yaml]\nrow_cache_size_in_mb = 9223372036854775807",
            "cluster.yaml.row_cache_size_in_mb",
            "of memory",
        )]);
    }
}
