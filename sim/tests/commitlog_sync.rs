//! `[cluster.yaml] commitlog_sync`: batch mode acknowledges a write only
//! once its commitlog buffer is on disk, so on the same light load its
//! writes take longer than periodic mode's by about a commitlog write (a
//! small NVMe write: tens of microseconds), and the same work gets done.

use sim::metrics::LatencySummary;
use sim::plan::{resolve, RunOverrides};
use sim::scenario::parse;

mod common;

const SCENARIO: &str = r#"
name = "commitlog-sync"
seed = 5
duration = "5s"

[cluster]
preset = "scylla-2.2"
nodes = 1
instance = "i3.large"
SYNC

[[load]]
name = "write"
command = "cassandra-stress write no-warmup cl=ONE duration=5s -rate 'threads=20 limit=5000/s' -col 'size=FIXED(512) n=FIXED(1)' -pop seq=1..1000000"
"#;

fn run(yaml: &str) -> (u64, LatencySummary) {
    let text = SCENARIO.replace("SYNC", yaml);
    let plan = common::plan("commitlog-sync.toml", &text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let writes = &outcome.ops[0];
    (writes.count, LatencySummary::of(&writes.total))
}

#[test]
fn batch_mode_adds_a_commitlog_write_to_every_write() {
    let (periodic_count, periodic) = run("");
    let (batch_count, batch) = run("[cluster.yaml]\ncommitlog_sync = \"batch\"");
    println!("periodic {periodic:?}\nbatch {batch:?}");
    assert!(
        periodic_count.abs_diff(batch_count) <= 20,
        "same load: {periodic_count} vs {batch_count}"
    );
    let added_ms = batch.mean - periodic.mean;
    // A 4 KiB-class write on the i3 drive: ~10-100 us at this light load.
    assert!(
        (0.01..0.2).contains(&added_ms),
        "batch adds {added_ms} ms to the mean write"
    );
}

#[test]
fn an_unknown_sync_mode_is_refused_with_its_field() {
    let text = SCENARIO.replace("SYNC", "[cluster.yaml]\ncommitlog_sync = \"sometimes\"");
    let scenario = parse("commitlog-sync.toml", &text).unwrap();
    let error = resolve(&scenario, &RunOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("commitlog-sync.toml:"), "{error}");
    assert!(error.contains("cluster.yaml.commitlog_sync"), "{error}");
    assert!(error.contains("sometimes"), "{error}");
}
