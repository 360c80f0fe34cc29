//! Volume mode, no faults: replicas that received the same writes return
//! the same version of a key, so QUORUM reads find no digest mismatch and
//! repair nothing, and every read of a preloaded key finds it.
//!
//! The run mixes QUORUM writes and reads on a preloaded table with memory
//! small enough that the replicas flush and compact during it, each at its
//! own moments: what a replica returns must not depend on how its data is
//! cut into memtables and SSTables (it did, and this run found a dozen
//! mismatches, and reads of preloaded keys that compaction had lost).

use sim::plan::{resolve, RunOverrides};
use sim::scenario::parse;

const SCENARIO: &str = r#"
name = "volume-quorum-mix"
seed = 11
duration = "15s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"

[cluster.overrides]
shards = 4
memory = "2GiB"

[data]
partitions = 20e6
row_bytes = "1100B"
replication_factor = 3

[[load]]
name = "mixed"
processes = 4
command = "cassandra-stress mixed ratio(write=1,read=1) no-warmup cl=QUORUM duration=15s -rate 'threads=40 limit=20000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop dist=uniform(1..20000000)"
"#;

#[test]
fn a_fault_free_quorum_mix_has_no_digest_mismatch_and_no_repair() {
    let scenario = parse("volume-quorum-mix.toml", SCENARIO).unwrap_or_else(|e| panic!("{e}"));
    let plan = resolve(&scenario, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!plan.cluster.data_mode, "volume mode");
    let outcome = sim::cluster::run(plan, &mut |_| {});
    let flushes: u64 = outcome
        .shards
        .iter()
        .map(|shard| shard.stats.flushes_completed)
        .sum();
    assert!(flushes > 0, "the replicas flushed during the run");
    let reads = outcome
        .ops
        .iter()
        .find(|ops| ops.kind.name() == "read")
        .expect("reads ran");
    assert!(reads.count > 100_000, "{} reads", reads.count);
    assert_eq!(reads.not_found, 0, "every key read was preloaded");
    let coordinator = sim::report::CoordinatorSummary::of(&outcome);
    assert_eq!(
        (coordinator.digest_mismatches, coordinator.read_repairs),
        (0, 0)
    );
}
