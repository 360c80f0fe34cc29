//! Data mode, RF=3: QUORUM writes and QUORUM reads overlap on every replica
//! set, so under any message delays and reorderings a read returns a
//! version at least as new as every write acknowledged before it began.
//! The network here has a 1 ms mean exponential jitter per message (a
//! hundred times the same-AZ figure), so messages between the same nodes
//! overtake each other all the time, and 200 keys keep reads and writes of
//! the same key overlapping.
//!
//! The same load at CL=ONE does return stale rows: the check can fail.

use proptest::prelude::*;

mod common;

const SCENARIO: &str = r#"
name = "quorum-data-mode"
duration = "2s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[network]
jitter = "1ms"

[fidelity]
mode = "data"

[[load]]
name = "mixed"
processes = 2
command = "cassandra-stress mixed ratio(write=1,read=1) no-warmup cl=CL duration=2s -schema 'replication(factor=3)' -rate threads=16 -col 'size=FIXED(64) n=FIXED(1)' -pop dist=uniform(1..200)"
"#;

/// (reads checked, stale reads) of a run.
fn run(seed: u64, consistency: &str) -> (u64, u64) {
    let text = SCENARIO.replace("CL", consistency);
    let plan = common::plan("quorum-data-mode.toml", &text, Some(seed));
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let check = outcome.consistency.expect("data mode checks reads");
    (check.reads_checked, check.stale_reads)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn quorum_reads_see_every_acknowledged_quorum_write(seed in any::<u64>()) {
        let (checked, stale) = run(seed, "QUORUM");
        prop_assert!(checked > 2_000, "only {checked} reads checked");
        prop_assert_eq!(stale, 0, "{} of {} reads were stale", stale, checked);
    }
}

#[test]
fn one_replica_reads_and_writes_are_sometimes_stale() {
    let (checked, stale) = run(7, "ONE");
    println!("CL=ONE: {stale} stale of {checked}");
    assert!(checked > 2_000 && stale > 0, "{stale} of {checked}");
}
