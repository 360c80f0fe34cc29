//! Speculative retry (`speculative_retry`, scylla-mechanisms.md 4.2): a
//! QUORUM read still short of its answers after the table's 99th
//! percentile asks the third replica. With a network whose messages now
//! and then take several times their usual time (an exponential jitter of
//! 5 ms mean, far above a read's own work, so the tail is the network's),
//! the reads that wait on a slow replica are the tail, and the extra
//! request cuts it; with `NONE` they wait. (At 1 ms the jitter of every
//! read's four legs makes the tail, and a request sent at the 99th
//! percentile comes too late to shorten it.)

use sim::metrics::LatencySummary;
use sim::plan::{resolve, RunOverrides};
use sim::scenario::parse;

mod common;

const SCENARIO: &str = r#"
name = "speculative-retry"
seed = 4
duration = "4s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[network]
jitter = "5ms"

[table]
speculative_retry = "POLICY"

[data]
partitions = 1e6
row_bytes = "300B"
replication_factor = 3
state = "compacted"

[[load]]
name = "read"
processes = 2
command = "cassandra-stress read no-warmup cl=QUORUM duration=4s -rate 'threads=20 limit=700/s' -pop dist=uniform(1..1000000)"
"#;

fn read_latency(policy: &str) -> (LatencySummary, u64) {
    let text = SCENARIO.replace("POLICY", policy);
    let plan = common::plan("speculative-retry.toml", &text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    (
        LatencySummary::of(&outcome.ops[0].total),
        sim::report::CoordinatorSummary::of(&outcome).speculative_retries,
    )
}

#[test]
fn speculating_at_the_99th_percentile_cuts_the_read_tail() {
    let (never, none_retries) = read_latency("NONE");
    let (p99, p99_retries) = read_latency("99.0PERCENTILE");
    let (fixed, fixed_retries) = read_latency("2ms");
    println!("NONE {never:?}\n99.0PERCENTILE {p99:?} ({p99_retries} retries)\n2ms {fixed:?} ({fixed_retries} retries)");
    assert_eq!(none_retries, 0);
    // Of ~5,600 reads (a rate that leaves the one-shard nodes half idle,
    // so the jitter makes the tail), about 1% speculate at the 99th percentile once the
    // estimate has a second of reads behind it; the first estimate, from a
    // handful of reads, is low, and the first second speculates more (as
    // Scylla's does).
    assert!((80..2_400).contains(&p99_retries), "{p99_retries}");
    assert!(p99.p999 <= never.p999, "{} vs {}", p99.p999, never.p999);
    // A 2 ms delay speculates on far more reads and cuts the p99 and the
    // mean.
    assert!(fixed_retries > 3 * p99_retries, "{fixed_retries}");
    assert!(fixed.p99 < never.p99, "{} vs {}", fixed.p99, never.p99);
    assert!(fixed.mean < never.mean, "{} vs {}", fixed.mean, never.mean);
    // The median read never waits for a speculation.
    assert!((p99.p50 / never.p50 - 1.0).abs() < 0.05);
}

#[test]
fn a_malformed_policy_is_refused() {
    let text = SCENARIO.replace("POLICY", "sometimes");
    let scenario = parse("speculative-retry.toml", &text).unwrap();
    let error = resolve(&scenario, &RunOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("table.speculative_retry") && error.contains("sometimes"),
        "{error}"
    );
}
