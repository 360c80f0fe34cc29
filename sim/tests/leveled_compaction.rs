//! Leveled compaction and Cassandra's compaction limits, end to end.
//!
//! - `-schema compaction(strategy=LeveledCompactionStrategy)` on a write
//!   load makes the table leveled: flushes land in L0, L0 is promoted into
//!   L1 and L1 into L2, every level from L1 up holds SSTables of at most
//!   `sstable_size_in_mb` over disjoint token ranges, and the compaction
//!   controller sees the LCS backlog (scylla-mechanisms.md 1.4 and 2.2).
//! - cassandra-3.11's `compaction_throughput_mb_per_sec` bounds the bytes
//!   a node's compactions read per second (a token bucket with one second
//!   of burst), and `concurrent_compactors` the jobs running at once.

use engine::sstable::SSTable;
use sim::cluster::RunOutcome;
use sim::plan::{resolve, RunOverrides};
use sim::scenario::parse;

mod common;

const MIB: u64 = 1024 * 1024;

fn run(text: &str) -> RunOutcome {
    let plan = common::plan("leveled.toml", text, None);
    sim::cluster::run(plan, &mut |_| {}).expect("the run completes")
}

/// One Scylla shard with 256 MiB (a 35 MiB memtable), written with 4 KiB
/// rows at RATE per second by one c-s process (two would write the same
/// sequence twice).
const SCYLLA: &str = r#"
name = "leveled"
seed = 5
duration = "DURATION"

[cluster]
preset = "PRESET"
nodes = 1
instance = "i3.xlarge"

[cluster.overrides]
memory = "1792MiB"
shards = 1

[[load]]
name = "write"
command = "cassandra-stress write no-warmup cl=ONE duration=DURATION -schema 'compaction(strategy=LeveledCompactionStrategy,sstable_size_in_mb=SIZE)' -rate 'threads=100 limit=RATE/s' -col 'size=FIXED(4096) n=FIXED(1)' -pop seq=1..100000000"
"#;

/// Asserts the levels from 1 up hold SSTables of at most `max_bytes` over
/// disjoint token ranges; returns the SSTables per level.
fn check_levels(sstables: &[SSTable], max_bytes: u64) -> Vec<usize> {
    let mut per_level = vec![0; 9];
    for sstable in sstables {
        per_level[sstable.level as usize] += 1;
    }
    for level in 1..9u32 {
        let mut ranges: Vec<(u64, u64)> = sstables
            .iter()
            .filter(|sstable| sstable.level == level)
            .map(|sstable| {
                assert!(
                    sstable.data_bytes <= max_bytes,
                    "L{level} SSTable of {} bytes",
                    sstable.data_bytes
                );
                sstable
                    .token_range
                    .expect("leveled SSTables have token ranges")
            })
            .collect();
        ranges.sort_unstable();
        assert!(
            ranges.windows(2).all(|pair| pair[0].1 <= pair[1].0),
            "L{level} SSTables overlap: {ranges:?}"
        );
    }
    per_level
}

/// The largest value of a time-series column.
fn column_max(outcome: &RunOutcome, name: &str) -> f64 {
    outcome
        .timeseries
        .values(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .into_iter()
        .map(|value| value.expect("a number in every row"))
        .fold(0.0, f64::max)
}

#[test]
fn a_leveled_table_fills_levels_of_disjoint_sstables() {
    let scenario = |preset: &str, size: &str, seconds: &str, rate: &str| {
        SCYLLA
            .replace("PRESET", preset)
            .replace("SIZE", size)
            .replace("DURATION", seconds)
            .replace("RATE", rate)
    };
    // The default 160 MiB SSTables on Scylla 2.2, whose LCS has no backlog
    // tracker: the controller sees an infinite backlog (input 30) and
    // gives compaction its maximum shares. L0's flushes are size-tiered
    // inside L0 until it holds 160 MiB, then promoted into L1 (40 s: the
    // first promotions take the shard ~20 s at 50-60 ns/B).
    let outcome = run(&scenario("scylla-2.2", "160", "40s", "4000"));
    assert!(outcome
        .plan
        .describe()
        .contains("LeveledCompactionStrategy (160 MiB SSTables)"));
    let shard = &outcome.shards[0];
    let per_level = check_levels(&shard.sstables, 160 * MIB);
    println!(
        "scylla-2.2, 160 MiB: SSTables per level {per_level:?}, {} flushes, {} compactions, {} MiB compacted",
        shard.stats.flushes_completed,
        shard.stats.compactions_completed,
        shard.stats.bytes_compacted / MIB,
    );
    assert!(shard.stats.flushes_completed >= 8, "{:?}", shard.stats);
    assert!(per_level[1] >= 2, "{per_level:?}");
    assert_eq!(column_max(&outcome, "node0_compaction_backlog"), 30.0);

    // Scylla 3.0 with 16 MiB SSTables (an L1 target of 160 MiB): L1
    // overflows into L2, 3.0 pushes an idle L1 into L2, and the 3.0 LCS
    // backlog drives the controller. (8 MB/s of writes: a shard merges
    // ~17 MB/s at most, so faster writes outrun leveled compaction's
    // rewrites and leave everything in L0 and L1.)
    let outcome = run(&scenario("scylla-3.0", "16", "60s", "2000"));
    let shard = &outcome.shards[0];
    let per_level = check_levels(&shard.sstables, 16 * MIB);
    let backlog = column_max(&outcome, "node0_compaction_backlog");
    println!(
        "scylla-3.0, 16 MiB: SSTables per level {per_level:?}, {} flushes, {} compactions, {} MiB compacted, backlog up to {backlog:.2} x memory",
        shard.stats.flushes_completed,
        shard.stats.compactions_completed,
        shard.stats.bytes_compacted / MIB,
    );
    assert!(per_level[2] > 0, "{per_level:?}");
    assert!(per_level[1] <= 10, "{per_level:?}");
    assert!(backlog > 0.0 && backlog < 30.0, "{backlog}");
}

/// One Cassandra 3.11 node whose commitlog (64 MiB) forces a flush about
/// every second of the writes it takes (CPU-bound below 100 MB/s).
const CASSANDRA: &str = r#"
name = "cassandra-throughput"
seed = 5
duration = "20s"

[cluster]
preset = "cassandra-3.11"
nodes = 1
instance = "i3.4xlarge"

[cluster.yaml]
commitlog_total_space_in_mb = 64
THROUGHPUT

[[load]]
name = "write"
processes = 2
command = "cassandra-stress write no-warmup cl=ONE duration=20s -schema 'compaction(strategy=LeveledCompactionStrategy)' -rate 'threads=100 limit=50000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop seq=1..100000000"
"#;

#[test]
fn cassandras_compaction_throughput_caps_the_bytes_compactions_read() {
    let capped = run(&CASSANDRA.replace("THROUGHPUT", "compaction_throughput_mb_per_sec = 4"));
    assert!(capped
        .plan
        .describe()
        .contains("concurrent_compactors 2, compaction throughput 4 MiB/s"));
    let free = run(&CASSANDRA.replace("THROUGHPUT", "compaction_throughput_mb_per_sec = 0"));
    let (capped_shard, free_shard) = (&capped.shards[0], &free.shards[0]);
    let seconds = capped.end.as_nanos() as f64 / 1e9;
    let capped_mib = capped_shard.stats.bytes_compacted as f64 / MIB as f64;
    let free_mib = free_shard.stats.bytes_compacted as f64 / MIB as f64;
    println!(
        "{seconds} s: capped at 4 MiB/s {capped_mib:.1} MiB compacted ({} flushes), unthrottled {free_mib:.1} MiB ({} flushes)",
        capped_shard.stats.flushes_completed, free_shard.stats.flushes_completed
    );
    assert!(capped_shard.stats.flushes_completed >= 2);
    // 4 MiB/s over the run, plus the one second of burst the bucket
    // stores, plus the chunks in flight of the jobs.
    assert!(
        capped_mib <= 4.0 * (seconds + 1.0) + 2.0,
        "{capped_mib} MiB in {seconds} s"
    );
    assert!(
        capped_mib >= 4.0 * (seconds - 5.0),
        "the cap is reached: {capped_mib}"
    );
    assert!(
        free_mib > 2.0 * capped_mib,
        "unthrottled {free_mib} vs {capped_mib}"
    );
    assert!(column_max(&capped, "node0_compactions") <= 2.0);
}

/// A table preloaded as leveled compaction leaves it, read for a second.
const PRELOADED: &str = r#"
name = "leveled-preload"
seed = 5
duration = "1s"

[cluster]
preset = "PRESET"
nodes = 1
instance = "i3.xlarge"

[data]
partitions = 20e6
row_bytes = "1100B"
compaction = "leveled"

[[load]]
name = "read"
command = "cassandra-stress read no-warmup cl=ONE duration=1s -rate 'threads=16 limit=2000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop dist=uniform(1..20000000)"
"#;

#[test]
fn a_leveled_preload_is_the_settled_layout() {
    for (preset, levels) in [("scylla-3.0", vec![2]), ("scylla-2.2", vec![1, 2])] {
        let outcome = run(&PRELOADED.replace("PRESET", preset));
        let shards = outcome.shards.len() as u64;
        for shard in &outcome.shards {
            let per_level = check_levels(&shard.sstables, 160 * MIB);
            let held: Vec<usize> = (0..9).filter(|level| per_level[*level] > 0).collect();
            assert_eq!(held, levels, "{preset}: {per_level:?}");
            // 22 GB over the shards, in 160 MiB SSTables (L1 full at 10
            // without pushing); nothing is due.
            let bytes: u64 = shard.sstables.iter().map(|s| s.data_bytes).sum();
            assert_eq!(bytes, 20_000_000 / shards * 1100);
            assert_eq!(shard.stats.compactions_completed, 0);
            assert_eq!(shard.stats.active_compactions, 0);
            if preset == "scylla-2.2" {
                assert_eq!(per_level[1], 10);
            }
        }
        assert!(outcome.ops[0].count > 1500, "{preset}: reads run");
    }
}

#[test]
fn the_table_has_one_strategy_and_scylla_ignores_cassandras_limits() {
    let two_loads = r#"
name = "conflict"
duration = "1s"

[cluster]
preset = "scylla-3.0"
nodes = 1
instance = "i3.xlarge"
YAML

[[load]]
name = "populate"
command = "cassandra-stress write n=1000 FIRST -rate threads=4"

[[load]]
name = "more"
after = "populate"
command = "cassandra-stress write n=1000 SECOND -rate threads=4"
"#;
    let resolve_text = |first: &str, second: &str, yaml: &str| {
        let text = two_loads
            .replace("FIRST", first)
            .replace("SECOND", second)
            .replace("YAML", yaml);
        let scenario = parse("conflict.toml", &text).unwrap_or_else(|e| panic!("{e}"));
        resolve(&scenario, &RunOverrides::default())
    };
    let leveled = "-schema 'compaction(strategy=LeveledCompactionStrategy)'";
    // A later load asking for another strategy is refused, like the RF.
    let error = resolve_text(
        leveled,
        "-schema 'compaction(strategy=SizeTieredCompactionStrategy)'",
        "",
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("load[1].command"), "{error}");
    assert!(
        error.contains("differs from the table's compaction(strategy=LeveledCompactionStrategy)"),
        "{error}"
    );
    // Saying nothing keeps the table's; repeating it is fine.
    let plan = resolve_text(leveled, "", "").unwrap();
    assert_eq!(
        plan.cluster.compaction.class_name(),
        "LeveledCompactionStrategy"
    );
    assert!(resolve_text(leveled, leveled, "").is_ok());
    // sstable_size_in_mb is a leveled option; unknown options are refused.
    let plan = resolve_text(
        "-schema 'compaction(strategy=LeveledCompactionStrategy,sstable_size_in_mb=64,tombstone_threshold=0.3)'",
        "",
        "",
    )
    .unwrap();
    assert!(
        plan.describe().contains("(64 MiB SSTables)"),
        "{}",
        plan.describe()
    );
    assert!(
        plan.notes
            .iter()
            .any(|note| note.contains("tombstone_threshold=0.3")),
        "{:?}",
        plan.notes
    );
    let error = resolve_text(
        "-schema 'compaction(strategy=SizeTieredCompactionStrategy,sstable_size_in_mb=64)'",
        "",
        "",
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("sstable_size_in_mb is an option of LeveledCompactionStrategy"),
        "{error}"
    );
    let error = resolve_text(
        "-schema 'compaction(strategy=LeveledCompactionStrategy,fanout=3)'",
        "",
        "",
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("unknown compaction option `fanout`"),
        "{error}"
    );
    // Scylla reads Cassandra's limits and ignores them: a note says so.
    let plan = resolve_text(
        "",
        "",
        "[cluster.yaml]\nconcurrent_compactors = 4\ncompaction_throughput_mb_per_sec = 64",
    )
    .unwrap();
    assert_eq!(plan.cluster.concurrent_compactors, None);
    assert_eq!(plan.cluster.compaction_throughput_bytes_per_sec, None);
    assert!(
        plan.notes.iter().any(|note| note.contains("concurrent_compactors, compaction_throughput_mb_per_sec accepted but do not affect the simulation")),
        "{:?}",
        plan.notes
    );
}
