//! A clamped c-s gaussian sends a share of its reads to one key (R1's
//! `gauss(1..750000000,500000000,250000000)`: 15.9% to key 750000000).
//! That key lives on one shard of each replica, which therefore serves
//! far more reads than its neighbours, and from its row cache: a key read
//! that often is cached after its first read. Before the row cache knew
//! the key by name it spread the key's mass over every shard's reads, so
//! the hot shards missed where they should hit and became the cluster's
//! bottleneck (R1 ran at 22K of its 80K reads/s, p95 175 ms).
//!
//! Sampling cannot stand for such a key, and says so.

use engine::key_token;
use engine::placement::{shard_of_token, SHARDING_IGNORE_MSB_BITS};
use sim::load::OpKind;
use sim::plan::{resolve, RunOverrides};
use sim::scenario::parse;

mod common;

/// Three nodes of 4 shards, a 20M-key table on disk, a cold cache, and
/// QUORUM reads over a gaussian whose top clamp takes 15.9% of the draws.
const SCENARIO: &str = r#"
name = "hot-keys"
seed = 5
duration = "8s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"
SAMPLING

[cluster.overrides]
shards = 4

[data]
partitions = 20e6
row_bytes = "1100B"
replication_factor = 3
state = "compacted"
cache = "cold"

[[load]]
name = "read"
processes = 2
command = "cassandra-stress read no-warmup cl=QUORUM duration=8s -rate 'threads=40 limit=2000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop 'dist=gauss(1..15000000,10000000,5000000)'"
"#;

#[test]
fn the_hot_keys_shard_serves_its_share_from_the_row_cache() {
    let scenario =
        parse("hot-keys.toml", &SCENARIO.replace("SAMPLING", "")).unwrap_or_else(|e| panic!("{e}"));
    let plan = resolve(&scenario, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let shards_per_node = plan.cluster.shards_per_node;
    assert_eq!(shards_per_node, 4);
    let shard_of = |key| shard_of_token(key_token(key), shards_per_node, SHARDING_IGNORE_MSB_BITS);
    let (hot_shard, low_shard) = (shard_of(15_000_000), shard_of(1));
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let reads = outcome.op(OpKind::Read).expect("reads ran");
    // The offered 4000 reads/s get through: no shard is a bottleneck.
    assert!(reads.count > 30_000, "{} reads in 8 s", reads.count);
    for (index, shard) in outcome.shards.iter().enumerate() {
        let shard_index = index as u32 % shards_per_node;
        let stats = shard.stats;
        let hits = stats.cache_hits as f64 / stats.reads_completed.max(1) as f64;
        println!(
            "node {} shard {shard_index}: {} reads, {:.1}% from the cache",
            shard.node,
            stats.reads_completed,
            hits * 100.0
        );
        if shard_index == hot_shard && hot_shard != low_shard {
            // Its share of the 84% plus the hot key's 15.9%: the key's
            // reads are over a third of the shard's, nearly all hits; a
            // cold 1 TB-scale table gives the others next to none.
            assert!(hits > 0.35, "the hot key's shard hit {hits}");
        } else if shard_index != low_shard {
            assert!(hits < 0.05, "shard {shard_index} hit {hits}");
        }
    }
    // The time series shows each node's busiest shard above its mean (the
    // key's reads are cache hits, so only a little).
    let series = &outcome.timeseries;
    let column = |name: &str| series.column(name).unwrap();
    for node in 0..3 {
        let (mean, hottest) = (
            column(&format!("node{node}_cpu_utilisation")),
            column(&format!("node{node}_hottest_shard_utilisation")),
        );
        let average = |index: usize| -> f64 {
            let rows = &series.rows[2..];
            rows.iter()
                .map(|row| row[index].parse::<f64>().unwrap())
                .sum::<f64>()
                / rows.len() as f64
        };
        let (mean, hottest) = (average(mean), average(hottest));
        println!("node {node}: shards {mean:.3} on average, the busiest {hottest:.3}");
        assert!(hottest > mean, "node {node}: {hottest} against {mean}");
    }
}

#[test]
fn sampling_refuses_a_distribution_with_a_hot_key() {
    let scenario = parse(
        "hot-keys.toml",
        &SCENARIO.replace("SAMPLING", "simulated_shards_per_node = 1"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let error = resolve(&scenario, &RunOverrides::default())
        .expect_err("sampling is refused")
        .to_string();
    assert!(
        error.contains("load[0].command")
            && error.contains("key 15000000 alone takes 15.9% of the draws")
            && error.contains("drop cluster.simulated_shards_per_node"),
        "{error}"
    );
}

/// Heat-weighted balancing weighs replicas by their *node's* cache hit
/// rate. The hot key's shard hits far more often than its node; when each
/// shard published its own rate, the replicas whose hot shard reported
/// highest drew the key's reads, hit more, reported higher still, and one
/// node ended with a third fewer hits than the others (R1 warm: 0.22
/// against 0.36) while the hot shards of the other two saturated.
#[test]
fn replicas_publish_their_nodes_hit_rate_so_a_hot_shard_does_not_pull_the_reads() {
    let text = SCENARIO
        .replace("SAMPLING", "")
        .replace("cache = \"cold\"", "cache = \"warm\"")
        // A table ten times the nodes' memory, so that the warm caches
        // hold the hot keys and a slice of the rest.
        .replace("partitions = 20e6", "partitions = 200e6")
        .replace("8s", "40s")
        .replace(
            "gauss(1..15000000,10000000,5000000)",
            "gauss(1..150000000,100000000,50000000)",
        );
    let plan = common::plan("hot-keys.toml", &text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let reads = outcome.op(OpKind::Read).expect("reads ran");
    assert!(reads.count > 150_000, "{} reads in 40 s", reads.count);
    let series = &outcome.timeseries;
    let rates: Vec<f64> = (0..3)
        .map(|node| {
            let column = series
                .columns
                .iter()
                .position(|c| *c == format!("node{node}_cache_hit_rate"))
                .unwrap();
            let values: Vec<f64> = series
                .rows
                .iter()
                .skip(3)
                .filter_map(|row| row[column].parse().ok())
                .collect();
            values.iter().sum::<f64>() / values.len() as f64
        })
        .collect();
    println!("per-node hit rates {rates:?}");
    let (min, max) = rates
        .iter()
        .fold((1.0f64, 0.0f64), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    assert!(min > 0.2, "warm caches hit: {rates:?}");
    assert!(
        max - min < 0.01,
        "the nodes' hit rates stay together: {rates:?}"
    );
}
