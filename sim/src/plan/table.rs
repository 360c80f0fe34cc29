//! `[table]`: the table's settings a CQL `CREATE TABLE` would give
//! (compression chunk, read repair chances, speculative retry), and the
//! size of its partitions when a user profile makes them many rows.
//!
//! The defaults are the servers' table defaults: a 4 KiB compression chunk
//! in Scylla (`compression_parameters::DEFAULT_CHUNK_LENGTH`), 64 KiB in
//! Cassandra 3.11 (`CompressionParams.DEFAULT_CHUNK_LENGTH`);
//! `dclocal_read_repair_chance` 0.1 and `read_repair_chance` 0 (Scylla
//! 2.x-3.0, Cassandra 3.11); `speculative_retry` 99PERCENTILE
//! (`SpeculativeRetry::DEFAULT`). A partition's bytes are the profile's
//! mean rows with `engine::config::SSTABLE_ROW_OVERHEAD_BYTES` each.

use models::cassandra_stress;

use crate::cluster::ClusterPlan;
use crate::load::{ColumnPlan, LoadPlan};
use crate::scenario::{Scenario, ScenarioError};
use engine::speculation::SpeculativeRetry;

/// The compression chunk of the table: `[table] chunk_length_in_kb`, else
/// the server's default: 4 KiB in Scylla (`compression_parameters::
/// DEFAULT_CHUNK_LENGTH`), 64 KiB in Cassandra 3.11
/// (`CompressionParams.DEFAULT_CHUNK_LENGTH`). `None` for an uncompressed
/// table.
pub(super) fn resolve_compression_chunk(
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
pub(super) fn resolve_partition_bytes(
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

/// The chance a read asks every replica: `[table]`'s `read_repair_chance`
/// (default 0) and `dclocal_read_repair_chance` (default 0.1, the table
/// default of Scylla 2.x-3.0 and Cassandra 3.11), the larger of the two
/// with one datacenter (Cassandra's `newReadRepairDecision` draws once
/// against both).
pub(super) fn resolve_read_repair_chance(scenario: &Scenario) -> Result<f64, ScenarioError> {
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

/// `[table] speculative_retry`, parsed as CQL writes it: `NONE`,
/// `N.NPERCENTILE` (or `Np`), `Nms`.
pub(super) fn resolve_speculative_retry(
    scenario: &Scenario,
) -> Result<SpeculativeRetry, ScenarioError> {
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
