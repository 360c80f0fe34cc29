//! Paced c-s processes run out of step (`sim::load::Schedule::with_phase`):
//! fourteen processes sharing a rate see the latency one process at the
//! same total rate sees. In step, every interval's fourteen writes reached
//! the cluster at the same instant and queued behind each other: on this
//! nearly idle cluster the write p95 came out 29% above one process's.

use sim::load::OpKind;
use sim::metrics::LatencySummary;

mod common;

fn write_latency(processes: u32, limit_per_process: u32) -> LatencySummary {
    let text = format!(
        r#"
name = "pacing"
seed = 3
duration = "5s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"

[[load]]
name = "write"
processes = {processes}
command = "cassandra-stress write no-warmup cl=QUORUM duration=5s -rate 'threads=50 limit={limit_per_process}/s' -pop dist=uniform(1..1000000)"
"#
    );
    let plan = common::plan("pacing.toml", &text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {});
    let writes = outcome.op(OpKind::Write).expect("writes ran");
    LatencySummary::of(&writes.total)
}

#[test]
fn fourteen_paced_processes_see_what_one_process_at_their_total_rate_sees() {
    let one = write_latency(1, 2_800);
    let fourteen = write_latency(14, 200);
    println!("one {one:?}\nfourteen {fourteen:?}");
    assert!(
        fourteen.p95 < 1.15 * one.p95,
        "p95 {} against {}",
        fourteen.p95,
        one.p95
    );
    assert!(
        fourteen.mean < 1.1 * one.mean,
        "mean {} against {}",
        fourteen.mean,
        one.mean
    );
}
