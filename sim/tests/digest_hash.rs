//! R1 (published-runs.md): with the same read load on the same cluster,
//! switching only the digest hash of QUORUM reads from md5 (Scylla 2.1) to
//! xxHash64 (2.2) lowers read latency. Each QUORUM read hashes its result
//! twice (the digest replica, and the coordinator over the data it
//! compares), so md5's ~14 us per 1 KiB value against xxHash's ~1 us is
//! CPU the shards spend on every read, and it queues reads behind it.
//!
//! The run is R1's load (3 x i3.8xlarge, RF=3, a billion 1 KiB partitions
//! on disk, 80K QUORUM reads/s) for a few simulated seconds; the sizes it
//! gives are printed beside R1's 23% / 32% / 42% (mean / p95 / p99).

use sim::load::OpKind;
use sim::metrics::LatencySummary;

mod common;

const SCENARIO: &str = r#"
name = "r1-digest"
seed = 3
duration = "6s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.8xlarge"
# All 30 shards: the gaussian's clamped top sends 15.9% of the reads to one
# key, whose shard on each replica does the most digest hashing.

[data]
partitions = 1e9
row_bytes = "1100B"
replication_factor = 3
state = "compacted"
cache = "cold"

[[load]]
name = "read"
processes = 4
command = "cassandra-stress read no-warmup cl=QUORUM duration=6s -rate 'threads=150 limit=20000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop 'dist=gauss(1..750000000,500000000,250000000)'"
"#;

/// Read latency of the run with the digest priced as `hash` hashes it.
fn read_latency(hash: &str) -> LatencySummary {
    let mut plan = common::plan("r1-digest.toml", SCENARIO, None);
    // Only the digest's price changes: scylla-2.1's md5, or 2.2's xxHash64.
    let other = match hash {
        "md5" => models::cost::CostTable::scylla_2_1(),
        _ => models::cost::CostTable::scylla(),
    };
    plan.cluster.costs.digest_fixed_ns = other.digest_fixed_ns;
    plan.cluster.costs.digest_ns_per_byte = other.digest_ns_per_byte;
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let reads = outcome.op(OpKind::Read).expect("reads ran");
    assert!(reads.count > 300_000, "{} reads", reads.count);
    LatencySummary::of(&reads.total)
}

#[test]
fn xxhash_digests_lower_quorum_read_latency() {
    let md5 = read_latency("md5");
    let xxhash = read_latency("xxhash");
    let gain = |before: f64, after: f64| 100.0 * (before - after) / before;
    println!(
        "md5 {md5:?}\nxxhash {xxhash:?}\nimprovement: mean {:.1}% p95 {:.1}% p99 {:.1}% (R1: 23% / 32% / 42%)",
        gain(md5.mean, xxhash.mean),
        gain(md5.p95, xxhash.p95),
        gain(md5.p99, xxhash.p99)
    );
    assert!(
        xxhash.mean < md5.mean,
        "mean {} vs {}",
        xxhash.mean,
        md5.mean
    );
    assert!(xxhash.p95 < md5.p95, "p95 {} vs {}", xxhash.p95, md5.p95);
    assert!(xxhash.p99 < md5.p99, "p99 {} vs {}", xxhash.p99, md5.p99);
}
