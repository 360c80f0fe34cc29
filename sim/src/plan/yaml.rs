//! `[cluster.yaml]`'s commitlog and hinted handoff settings, over the
//! shipped scylla.yaml and cassandra.yaml.
//!
//! The defaults are the preset's (`Preset::hints`, `CommitlogPlan`'s
//! default: the shipped yaml files); the bounds are the yaml's own (a Java
//! int for `max_hint_window_in_ms` and `hinted_handoff_throttle_in_kb`) or
//! the twin's (a day of sync period, 1 PiB of commitlog, 1..=1024 MB
//! segments). Cassandra's hint throttle is divided over the other
//! `nodes - 1` nodes, as `engine::hints` does with its 1024 KiB/s default.

use units::SimDuration;

use crate::cluster::CommitlogPlan;
use crate::preset::Preset;
use crate::scenario::{NodeYaml, Scenario, ScenarioError};

/// The longest periodic commitlog sync (`commitlog_sync_period_in_ms`): a
/// day.
pub const MAX_SYNC_PERIOD_MS: u64 = 86_400_000;
/// The most commitlog space (`commitlog_total_space_in_mb`): 1 PiB.
pub const MAX_COMMITLOG_SPACE_MB: u64 = 1 << 30;

/// cassandra.yaml's and scylla.yaml's int settings hold at most this
/// (`max_hint_window_in_ms`, `hinted_handoff_throttle_in_kb`).
const JAVA_INT_MAX: u64 = i32::MAX as u64;

/// Hinted handoff: the preset's, as `[cluster.yaml]` adjusts it.
pub(super) fn resolve_hints(
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

/// `[cluster.yaml]`'s commitlog settings over the shipped scylla.yaml.
pub(super) fn resolve_commitlog(
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

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_refused, plan_with};

    /// Each numeric setting this file resolves is, past its range, one
    /// line naming the field (and never wraps around into a small number).
    #[test]
    fn settings_past_their_range_are_one_line_errors_naming_the_field() {
        assert_refused(&[
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
        ]);
        // Within range, each is accepted.
        assert!(plan_with("scylla-3.0", "i3.large", "[cluster.yaml]\ncommitlog_sync_period_in_ms = 86400000\nmax_hint_window_in_ms = 2147483647").is_ok());
    }
}
