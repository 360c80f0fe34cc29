//! Time-window compaction end to end: `scenarios/time-series.toml` writes a
//! time series into a TWCS table (2-minute windows, a 4-minute TTL, 60 s
//! of gc_grace, expired SSTables looked for every 60 s). Each closed
//! window is compacted once into one SSTable a shard, windows whose rows
//! all expired are dropped whole, and the options and combinations the
//! twin does not model are refused naming the field.

use std::collections::BTreeMap;
use std::path::Path;

use engine::compaction::CompactionStrategy;
use sim::plan::{resolve, RunOverrides};
use sim::report::Summary;
use units::SimDuration;

fn time_series(minutes: u64) -> (sim::cluster::RunOutcome, Summary) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/time-series.toml");
    let scenario = sim::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let overrides = RunOverrides {
        duration: Some(SimDuration::from_secs(minutes * 60)),
        ..RunOverrides::default()
    };
    let plan = resolve(&scenario, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let summary = Summary::of(&outcome);
    (outcome, summary)
}

#[test]
fn closed_windows_are_compacted_once_and_expired_ones_dropped_whole() {
    // 8 minutes: no compaction is under way at the end (the flushes come
    // every ~40 s a node, a window closes every 2 minutes).
    let (outcome, summary) = time_series(8);
    let CompactionStrategy::TimeWindow(options) = outcome.plan.cluster.compaction else {
        panic!("the profile's table is time-window");
    };
    assert_eq!(options.window_us, 120_000_000);
    let ttl = options.ttl_us.expect("the profile sets a TTL");
    assert_eq!((ttl, options.gc_grace_us), (240_000_000, 60_000_000));
    let report = summary.time_window.expect("a time-window table reports");
    let end_us = 8 * 60 * 1_000_000;
    for shard in &outcome.shards {
        let mut windows: BTreeMap<u64, u32> = BTreeMap::new();
        for sstable in &shard.sstables {
            *windows
                .entry(options.window_of_sstable(sstable))
                .or_default() += 1;
            // Nothing that expired before the last look (every 60 s) stays.
            assert!(
                sstable.max_timestamp_us + ttl + options.gc_grace_us + options.expired_check_us
                    >= end_us,
                "an SSTable whose rows all expired long ago is still held: {sstable:?}"
            );
        }
        let newest = *windows.keys().last().expect("a shard holds SSTables");
        for (window, count) in &windows {
            if *window < newest {
                assert_eq!(*count, 1, "closed window {window} holds {count} SSTables");
            }
        }
    }
    // Every shard compacted some closed windows and dropped expired ones.
    let shards = outcome.shards.len() as u64;
    assert!(report.compactions >= 2 * shards, "{report:?}");
    assert!(report.expired_sstables >= shards, "{report:?}");
    assert!(report.windows_at_end >= 2, "{report:?}");
    // The writes went on at their rate throughout.
    let writes = &summary.ops["write"];
    assert!(writes.ops_per_s > 5_900.0, "{}", writes.ops_per_s);
}

/// A scenario whose one load writes through `profile_table` (a CQL
/// `CREATE TABLE` for the profile) or with `schema` (c-s's `-schema`).
fn resolve_with(table: &str, schema: &str, data: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!(
        "twin-time-window-{}-{}",
        std::process::id(),
        table.len() + schema.len() * 7 + data.len() * 13
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let command = if table.is_empty() {
        format!("cassandra-stress write n=1000 -schema '{schema}'")
    } else {
        let profile = format!(
            "keyspace: ts\ntable: t\ntable_definition: |\n  {table}\ncolumnspec:\n  - name: k\n    population: uniform(1..1000)\ninsert:\n  partitions: fixed(1)\n"
        );
        std::fs::write(dir.join("p.yaml"), profile).unwrap();
        "cassandra-stress user profile=p.yaml 'ops(insert=1)' n=1000".to_string()
    };
    let text = format!(
        "name = \"t\"\nseed = 1\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n{data}\n[[load]]\nname = \"w\"\ncommand = \"{}\"\n",
        command.replace('"', "\\\"")
    );
    let path = dir.join("s.toml");
    std::fs::write(&path, text).unwrap();
    let scenario = sim::scenario::load(&path).map_err(|e| e.to_string())?;
    resolve(&scenario, &RunOverrides::default())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn what_time_windows_do_not_model_is_refused_naming_it() {
    // c-s's own -schema takes the strategy and its window.
    resolve_with(
        "",
        "replication(factor=3) compaction(strategy=TimeWindowCompactionStrategy,compaction_window_unit=HOURS,compaction_window_size=6)",
        "",
    )
    .unwrap();
    for (table, schema, data, needle) in [
        (
            "",
            "compaction(strategy=TimeWindowCompactionStrategy,compaction_window_unit=WEEKS)",
            "",
            "MINUTES, HOURS or DAYS",
        ),
        (
            "",
            "compaction(strategy=TimeWindowCompactionStrategy,timestamp_resolution=MILLISECONDS)",
            "",
            "microsecond timestamps",
        ),
        (
            "",
            "compaction(strategy=SizeTieredCompactionStrategy,compaction_window_size=1)",
            "",
            "an option of TimeWindowCompactionStrategy",
        ),
        // A TTL on a size-tiered table: row-by-row purging is not modelled.
        (
            "CREATE TABLE t (k bigint PRIMARY KEY, v blob) WITH default_time_to_live = 60",
            "",
            "",
            "default_time_to_live=60: expiring rows are simulated on TimeWindowCompactionStrategy tables",
        ),
        // A time-window table starts compacted.
        (
            "",
            "compaction(strategy=TimeWindowCompactionStrategy)",
            "[data]\npartitions = 1e6\nrow_bytes = \"300B\"\nstate = \"steady\"",
            "starts compacted",
        ),
    ] {
        let error = resolve_with(table, schema, data).unwrap_err();
        assert!(error.contains(needle), "{error}");
    }
    // The same TTL on a time-window table is taken.
    resolve_with(
        "CREATE TABLE t (k bigint PRIMARY KEY, v blob) WITH compaction = {'class': 'TimeWindowCompactionStrategy'} AND default_time_to_live = 60 AND gc_grace_seconds = 0",
        "",
        "",
    )
    .unwrap();
}
