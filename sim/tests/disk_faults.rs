//! Disk faults (issue 17): a slow disk raises its node's latencies while
//! it lasts and only then; a failed disk makes its node isolate itself at
//! the first I/O error, its peers convict it, and the survivors carry the
//! load at QUORUM.

use sim::events::What;

mod common;

/// Three Scylla nodes under an 8K ops/s QUORUM mix for 60 s, with `faults`.
fn run(faults: &str) -> sim::cluster::RunOutcome {
    let text = common::quorum_mix("disk-faults", 60, 2000, "", "") + faults;
    sim::cluster::run(common::plan("disk-faults.toml", &text, None), &mut |_| {})
        .expect("the run completes")
}

/// Mean of column `name` over the intervals ending in `(from, to]` seconds.
fn mean(outcome: &sim::cluster::RunOutcome, name: &str, from: f64, to: f64) -> f64 {
    let time = outcome.timeseries.values("time_s").expect("time");
    let values = outcome.timeseries.values(name).expect(name);
    let picked: Vec<f64> = time
        .iter()
        .zip(&values)
        .filter(|(t, _)| t.is_some_and(|t| t > from && t <= to))
        .filter_map(|(_, value)| *value)
        .collect();
    picked.iter().sum::<f64>() / picked.len().max(1) as f64
}

#[test]
fn a_slow_disk_slows_its_node_while_it_lasts() {
    let outcome = run(
        "\n[[fault]]\nat = \"20s\"\nfor = \"20s\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 10\nthroughput_factor = 0.1\n",
    );
    let p99 = |from, to| mean(&outcome, "node1_server_read_p99_ms", from, to);
    let (before, during, after) = (p99(5.0, 20.0), p99(22.0, 40.0), p99(45.0, 60.0));
    println!("node 1 server read p99: {before:.2} / {during:.2} / {after:.2} ms");
    assert!(during > 2.0 * before, "{before} -> {during}");
    assert!(after < 1.5 * before, "recovers: {before} -> {after}");
    let other = mean(&outcome, "node0_server_read_p99_ms", 22.0, 40.0);
    assert!(
        other < during,
        "node 0 reads its own disk: {other} vs {during}"
    );
}

#[test]
fn a_failed_disk_isolates_its_node_and_the_survivors_carry_the_load() {
    let outcome = run("\n[[fault]]\nat = \"20s\"\nnodes = [2]\nkind = \"disk-fail\"\n");
    let events = outcome.event_log.events();
    let isolated = events
        .iter()
        .find(|event| event.what == What::NodeIsolated { node: 2 })
        .expect("node 2 isolates itself");
    assert!(
        (20.0..20.5).contains(&isolated.time_s),
        "at its first I/O error under load: {}",
        isolated.time_s
    );
    for observer in [0, 1] {
        assert!(
            events.iter().any(|event| matches!(
                event.what,
                What::NodeDown { observer: o, peer: 2, .. } if o == observer
            )),
            "node {observer} convicts node 2"
        );
    }
    assert!(
        !events
            .iter()
            .any(|event| matches!(event.what, What::NodeUp { peer: 2, .. })),
        "it never comes back"
    );
    // Once the driver routes around node 2, QUORUM is met by the other two.
    let ops = mean(&outcome, "read_ops_per_s", 50.0, 60.0)
        + mean(&outcome, "write_ops_per_s", 50.0, 60.0);
    assert!(ops > 7_600.0, "{ops} ops/s of 8,000 at the end");
}

/// Faults that are each within their bounds can overlap: two slow disks
/// at the most the model takes (latency x10^4, throughput x10^-4) on one
/// node and two NIC degradations at the floor on another stack into the
/// same bounds, and the run goes to its end (it once panicked with "event
/// scheduled in the past"), and reads are served again once the faults
/// end.
#[test]
fn overlapping_faults_at_their_bounds_run_to_the_end() {
    let fault = |at: u32, node: u32, kind: &str| {
        let factors = if kind == "slow-disk" {
            "latency_factor = 1e4\nthroughput_factor = 1e-4"
        } else {
            "bandwidth_factor = 1e-4"
        };
        format!("\n[[fault]]\nat = \"{at}s\"\nfor = \"10s\"\nnodes = [{node}]\nkind = \"{kind}\"\n{factors}\n")
    };
    let outcome = run(&[
        fault(20, 1, "slow-disk"),
        fault(25, 1, "slow-disk"),
        fault(20, 2, "nic-degrade"),
        fault(22, 2, "nic-degrade"),
    ]
    .concat());
    assert_eq!(outcome.end.as_secs_f64(), 60.0);
    let served = mean(&outcome, "read_ops_per_s", 45.0, 60.0);
    assert!(served > 500.0, "reads served after the faults: {served}/s");
}
