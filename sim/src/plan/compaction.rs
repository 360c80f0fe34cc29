//! The table's compaction: `[data] compaction`, else the first load's
//! `-schema compaction(...)` (or its profile's `table_definition`),
//! resolved over the preset's defaults into the engine's strategy.
//!
//! The option names and their checks are Cassandra 3.11's
//! (`SizeTieredCompactionOptions`, `LeveledCompactionStrategy`,
//! `AbstractCompactionStrategy.validateOptions`); the defaults are
//! `engine::compaction`'s. Leveled compaction pushes idle levels up from
//! Scylla 2.3 and has an infinite backlog in 2.2 (scylla-mechanisms.md 1.4).
//! Options that act on tombstones, repair or logging are accepted and
//! noted, not modelled.

use models::cassandra_stress;

use crate::cluster::ClusterPlan;
use crate::preset::Preset;
use crate::scenario::{Scenario, ScenarioError};

/// The table's compaction as the scenario names it, before it is resolved
/// against the preset.
pub(super) struct TableCompaction {
    pub(super) strategy: cassandra_stress::CompactionStrategy,
    /// c-s's `compaction(...)` options other than the strategy.
    pub(super) options: Vec<(String, String)>,
    /// What set it, for messages (a load by name, or `[data] compaction`).
    pub(super) origin: String,
    /// The scenario field that set it, for errors.
    pub(super) field: String,
}

/// `Strategy,option=value,...` as c-s's `compaction(...)` takes it.
pub(super) fn describe_compaction_spec(
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
pub(super) fn describe_compaction(cluster: &ClusterPlan) -> String {
    use engine::compaction::CompactionStrategy;
    let mut text = format!("; compaction: {}", cluster.compaction.class_name());
    if let CompactionStrategy::Leveled(options) = &cluster.compaction {
        text += &format!(
            " ({} MiB SSTables)",
            options.sstable_size_bytes / (1024 * 1024)
        );
    }
    if let CompactionStrategy::TimeWindow(options) = &cluster.compaction {
        text += &format!(" ({} s windows", options.window_us / 1_000_000);
        if let Some(ttl) = options.ttl_us {
            text += &format!(
                ", TTL {} s, gc_grace {} s",
                ttl / 1_000_000,
                options.gc_grace_us / 1_000_000
            );
        }
        text += ")";
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
pub(super) fn resolve_compaction(
    scenario: &Scenario,
    preset: Preset,
    table: &TableCompaction,
    notes: &mut Vec<String>,
) -> Result<engine::compaction::CompactionStrategy, ScenarioError> {
    use cassandra_stress::CompactionStrategy as Cs;
    use engine::compaction::{CompactionStrategy, LcsOptions, StcsOptions, TwcsOptions};
    let fail = |reason: String| Err(scenario.error(&table.field, reason));
    let mut stcs = StcsOptions::default();
    // TWCS: Cassandra 3.11's defaults (one day; `TimeWindowCompactionStrategyOptions`);
    // its backlog tracker, like leveled's, came after 2.2.
    let mut twcs = TwcsOptions {
        infinite_backlog: preset == Preset::Scylla2_2,
        ..TwcsOptions::default()
    };
    let (mut window_unit_s, mut window_size): (u64, u64) = (86_400, 1);
    let is_twcs = table.strategy == Cs::TimeWindow;
    let twcs_only = |name: &str| -> Result<(), ScenarioError> {
        if is_twcs {
            Ok(())
        } else {
            Err(scenario.error(
                &table.field,
                format!(
                    "{name} is an option of TimeWindowCompactionStrategy, not {}",
                    table.strategy.class_name()
                ),
            ))
        }
    };
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
            "compaction_window_unit" => {
                twcs_only(name)?;
                // Cassandra 3.11 takes MINUTES, HOURS and DAYS
                // (`TimeWindowCompactionStrategyOptions.validateOptions`).
                window_unit_s = match value.to_ascii_uppercase().as_str() {
                    "MINUTES" => 60,
                    "HOURS" => 3_600,
                    "DAYS" => 86_400,
                    _ => {
                        return fail(format!(
                            "{name}={value}: expected MINUTES, HOURS or DAYS"
                        ))
                    }
                };
            }
            "compaction_window_size" => {
                twcs_only(name)?;
                window_size = positive("a positive whole number of units")?;
            }
            "timestamp_resolution" => {
                twcs_only(name)?;
                // c-s, and the twin's clients, write microsecond timestamps.
                if !value.eq_ignore_ascii_case("MICROSECONDS") {
                    return fail(format!(
                        "{name}={value}: the twin's clients write microsecond timestamps, as c-s and the drivers do; only MICROSECONDS (the default) reads them right"
                    ));
                }
            }
            "expired_sstable_check_frequency_seconds" => {
                twcs_only(name)?;
                twcs.expired_check_us = positive("a positive number of seconds")? * 1_000_000;
            }
            // A table option (the profile's), carried with the compaction
            // because only compaction acts on it.
            "default_time_to_live" => {
                if !is_twcs {
                    return fail(format!(
                        "default_time_to_live={value}: expiring rows are simulated on TimeWindowCompactionStrategy tables, which drop whole SSTables once all they hold expired; with {} they are purged row by row as compactions meet them, which the twin does not model",
                        table.strategy.class_name()
                    ));
                }
                twcs.ttl_us = Some(positive("a positive number of seconds")? * 1_000_000);
            }
            "gc_grace_seconds" => {
                twcs.gc_grace_us = value.parse::<u64>().map_err(|_| {
                    scenario.error(&table.field, format!("{name}={value}: expected a number of seconds"))
                })? * 1_000_000;
            }
            known if UNMODELLED_COMPACTION_OPTIONS.contains(&known) => {
                unmodelled.push(format!("{name}={value}"));
            }
            other => {
                return fail(format!(
                    "unknown compaction option `{other}` for {}; accepted: sstable_size_in_mb (leveled), compaction_window_unit, compaction_window_size, timestamp_resolution, expired_sstable_check_frequency_seconds (time-window), min_threshold, max_threshold, bucket_low, bucket_high, min_sstable_size, and (without effect) {}",
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
    if is_twcs {
        twcs.window_us = window_unit_s * window_size * 1_000_000;
        if let Some(data) = &scenario.data {
            if data.state.as_deref() == Some("steady") || data.window.is_some() {
                return Err(scenario.error(
                    "data.state",
                    format!(
                        "a TimeWindowCompactionStrategy table (set by {}) starts compacted: its rows before the run stand as one closed window; `state = \"steady\"` and `window` carry size-tiered tiers forward",
                        table.origin
                    ),
                ));
            }
        }
    }
    Ok(match table.strategy {
        Cs::SizeTiered => CompactionStrategy::SizeTiered(stcs),
        Cs::Leveled => CompactionStrategy::Leveled(LcsOptions { stcs, ..lcs }),
        Cs::TimeWindow => CompactionStrategy::TimeWindow(TwcsOptions { stcs, ..twcs }),
    })
}
