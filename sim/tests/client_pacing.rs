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
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
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

/// One process of 40 threads paced by `rate` (a c-s `-rate` option) over
/// 14 s, while every node's NIC keeps a ten-thousandth of its bandwidth
/// from 3 s to 9 s: the threads all end up waiting on the crawling
/// cluster, and the pacer decides what happens when they return.
fn run_around_a_stall(rate: &str) -> sim::cluster::RunOutcome {
    let text = format!(
        r#"
name = "stall"
seed = 5
duration = "14s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"

[cluster.overrides]
shards = 2

[[load]]
name = "write"
command = "cassandra-stress write no-warmup cl=ONE duration=14s -rate 'threads=40 {rate}' -pop dist=uniform(1..1000000)"

[[fault]]
at = "3s"
for = "6s"
nodes = [0, 1, 2]
kind = "nic-degrade"
bandwidth_factor = 0.0001
"#
    );
    let plan = common::plan("stall.toml", &text, None);
    sim::cluster::run(plan, &mut |_| {}).expect("the run completes")
}

/// Writes completed in [`run_around_a_stall`].
fn writes_around_a_stall(rate: &str) -> u64 {
    let outcome = run_around_a_stall(rate);
    outcome.op(OpKind::Write).expect("writes ran").total.len()
}

#[test]
fn the_time_series_shows_when_every_thread_of_a_process_waits() {
    let outcome = run_around_a_stall("limit=1000/s");
    let series = &outcome.timeseries;
    let times = series.values("time_s").unwrap();
    let stalled = series.values("client_processes_stalled").unwrap();
    let at = |second: f64| {
        let row = times
            .iter()
            .position(|time| *time == Some(second))
            .unwrap_or_else(|| panic!("no row at {second} s"));
        stalled[row].unwrap()
    };
    println!("{:?}", times.iter().zip(&stalled).collect::<Vec<_>>());
    // Before the stall 1,000 writes/s keep ~1 of the 40 threads busy; from
    // a second into it all 40 wait on the crawling NICs (the one process
    // is stalled the whole interval); a second after it, they are back.
    assert_eq!(at(2.0), 0.0);
    assert!(at(5.0) > 0.99, "{}", at(5.0));
    assert!(at(8.0) > 0.99, "{}", at(8.0));
    assert_eq!(at(12.0), 0.0);
}

#[test]
fn after_a_stall_throttle_catches_up_everything_and_limit_a_second() {
    // 1,000 writes/s for 14 s offered. `limit=`'s Guava limiter banks one
    // second of permits while the threads wait (about 1,000 writes); the
    // newer `throttle=`'s schedule owes all ~6,000 the stall held back.
    let limited = writes_around_a_stall("limit=1000/s");
    let throttled = writes_around_a_stall("throttle=1000/s");
    println!("limit= {limited} writes, throttle= {throttled}");
    assert!(throttled > 13_500, "throttle= completed {throttled}");
    assert!(
        limited + 3_000 < throttled,
        "limit= {limited} against throttle= {throttled}"
    );
}

/// One node of REAL.md's machine taking `limit` writes a second from one
/// process of 200 threads run by `client`.
fn real_machine_writes(client: &str, limit: u32) -> (LatencySummary, u64) {
    let machine = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../validation/real/machine.toml"
    ))
    .expect("the real machine's file");
    let text = format!(
        r#"
name = "client"
seed = 2
duration = "4s"
{machine}
[[load]]
name = "write"
client = "{client}"
command = "cassandra-stress write no-warmup cl=ONE duration=4s -rate 'threads=200 limit={limit}/s' -pop seq=1..1000000"
"#
    );
    let plan = common::plan("client.toml", &text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let writes = outcome.op(OpKind::Write).expect("writes ran");
    (LatencySummary::of(&writes.total), writes.total.len())
}

/// `twin real`'s threads start on tokio's 1-ms ticks, a tick's worth of
/// the rate at once, and queue behind each other at the server; c-s's
/// start when the pacer says. The gap grows with the rate (REAL.md: the
/// real node's p50 rose from 0.34 ms at a quarter of saturation to 1.07 at
/// four fifths, where the twin's with c-s's client stayed near 0.25).
#[test]
fn twin_real_starts_a_ticks_worth_of_operations_together() {
    let mut gaps = Vec::new();
    for limit in [3_000, 12_000] {
        let (cs, cs_ops) = real_machine_writes("cassandra-stress", limit);
        let (tokio, tokio_ops) = real_machine_writes("twin-real", limit);
        println!("{limit}/s: c-s {cs:?}\ntwin-real {tokio:?}");
        // Both hold the rate.
        for ops in [cs_ops, tokio_ops] {
            let rate = ops as f64 / 4.0;
            assert!(
                (rate - f64::from(limit)).abs() < 0.03 * f64::from(limit),
                "{rate}/s"
            );
        }
        gaps.push(tokio.p50 - cs.p50);
    }
    // At a quarter of saturation a tick's few operations share the shared
    // pool's next look (a spinner takes them together) about as c-s's
    // spread ones each wait for one; at four fifths they queue: a tick's
    // 12 writes served one after another, the median one waits for 5.5
    // others' work, each at least the write's own 9.5 us
    // (`CASSANDRA_5_0_WRITE_FACTOR`), so 0.05 ms or more.
    assert!(gaps[1] > 0.05, "{gaps:?}");
    assert!(gaps[1] > gaps[0] + 0.05, "{gaps:?}");
}
