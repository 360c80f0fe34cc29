//! Node crashes and restarts (issue 17): three nodes in data mode take
//! QUORUM writes of 60,000 keys while node 1 crashes at 10 s and comes
//! back 40 s later, then QUORUM reads cover the keys.
//!
//! The client stalls for a while after the crash, as c-s does against a
//! node that vanished: a third of its requests go to the dead coordinator
//! and wait out the client timeout until the driver sees the node down.
//!
//! In batch commitlog mode a replica acknowledges a write only once its
//! entry is on disk, so the restarted node's replay finds every write it
//! acknowledged; what it missed while down came back as hints (scylla-3.0).
//! In periodic mode it may lose the writes of its last unwritten buffer,
//! which is the mode's promise; QUORUM reads still return every
//! acknowledged write.

use sim::events::What;

mod common;

fn scenario(sync: &str, crash: &str) -> String {
    format!(
        r#"
name = "crash-restart"
seed = 5
duration = "140s"

[cluster]
preset = "scylla-3.0"
nodes = 3
instance = "i3.large"

[cluster.yaml]
commitlog_sync = "{sync}"

[fidelity]
mode = "data"

[[load]]
name = "write"
processes = 1
command = "cassandra-stress write n=60000 no-warmup cl=QUORUM -rate 'threads=20 limit=1000/s' -pop seq=1..60000 -schema 'replication(factor=3)'"

[[load]]
name = "read"
processes = 1
start = "85s"
command = "cassandra-stress read duration=25s no-warmup cl=QUORUM -rate 'threads=20 limit=2000/s' -pop dist=uniform(1..60000) -schema 'replication(factor=3)'"

{crash}
"#
    )
}

const CRASH_FOR_40S: &str = r#"
[[fault]]
at = "10s"
for = "40s"
nodes = [1]
kind = "crash"
"#;

fn run(text: &str) -> sim::cluster::RunOutcome {
    sim::cluster::run(common::plan("crash-restart.toml", text, None), &mut |_| {})
        .expect("the run completes")
}

/// The events of node 1's life, by name.
fn life_events(outcome: &sim::cluster::RunOutcome) -> Vec<(f64, What)> {
    outcome
        .event_log
        .events()
        .iter()
        .filter(|event| {
            matches!(
                event.what,
                What::NodeCrash { .. }
                    | What::NodeRestart { .. }
                    | What::NodeJoined { .. }
                    | What::NodeServing { .. }
            )
        })
        .map(|event| (event.time_s, event.what.clone()))
        .collect()
}

#[test]
fn a_crashed_node_replays_its_commitlog_rejoins_and_gets_its_hints_in_batch_mode() {
    let outcome = run(&scenario("batch", CRASH_FOR_40S));
    let life = life_events(&outcome);
    println!("{life:?}");
    assert_eq!(life.len(), 4, "crash, restart, joined, serving: {life:?}");
    assert_eq!(life[0], (10.0, What::NodeCrash { node: 1 }));
    assert_eq!(life[1], (50.0, What::NodeRestart { node: 1 }));
    let What::NodeJoined {
        replayed_entries,
        replay_s,
        ..
    } = life[2].1
    else {
        panic!("joined third: {life:?}");
    };
    // It held about 10 s of writes in memtables and commitlog.
    assert!(replayed_entries > 3_000, "{life:?}");
    assert!(replay_s > 0.0 && replay_s < 5.0, "{life:?}");
    assert!(
        (life[3].0 - life[2].0 - 8.0).abs() < 1e-6,
        "it serves once gossip settles, 8 s after joining: {life:?}"
    );
    // Its peers convicted it and saw it back.
    let seen = |down: bool| {
        outcome
            .event_log
            .events()
            .iter()
            .any(|event| match event.what {
                What::NodeDown { peer: 1, .. } => down,
                What::NodeUp { peer: 1, .. } => !down,
                _ => false,
            })
    };
    assert!(seen(true) && seen(false));
    let hints = sim::report::HintsReport::of(&outcome, 1.0).expect("3.0 keeps hints");
    println!("{hints:?}");
    assert!(hints.written > 5_000, "{hints:?}");
    assert_eq!(hints.replayed, hints.written, "every hint delivered");
    let consistency = outcome.consistency.as_ref().expect("data mode checks");
    assert_eq!(consistency.stale_reads, 0, "{:?}", consistency.first_stale);
    assert!(consistency.reads_checked > 30_000);
    let replicas = consistency
        .replicas
        .as_ref()
        .expect("the run was quiet at its end");
    assert_eq!(
        replicas.behind, 0,
        "batch mode: every replica holds every acknowledged write: {replicas:?}"
    );
    assert_eq!(replicas.keys, 60_000);
}

#[test]
fn periodic_mode_loses_at_most_the_crashed_nodes_unwritten_tail_and_reads_stay_whole() {
    let outcome = run(&scenario("periodic", CRASH_FOR_40S));
    let consistency = outcome.consistency.as_ref().expect("data mode checks");
    assert_eq!(consistency.stale_reads, 0, "{:?}", consistency.first_stale);
    let replicas = consistency.replicas.as_ref().expect("quiet at the end");
    println!("{replicas:?}");
    // What the crashed node lost from its commitlog buffer (at most a sync
    // period's writes, 10 s at 1,000/s) is counted apart; nothing else is
    // missing anywhere.
    assert!(
        replicas.lost_to_crashes > 0 && replicas.lost_to_crashes <= 10_000,
        "{replicas:?}"
    );
    assert_eq!(replicas.behind, 0, "{replicas:?}");
}

#[test]
fn the_same_crash_and_seed_tell_the_same_story() {
    let text = scenario("periodic", CRASH_FOR_40S);
    let first = run(&text);
    let second = run(&text);
    assert_eq!(first.event_log.to_jsonl(), second.event_log.to_jsonl());
    assert_eq!(first.events, second.events, "kernel events");
    assert_eq!(
        first.timeseries.to_csv(),
        second.timeseries.to_csv(),
        "time series"
    );
}

#[test]
fn a_crash_without_end_waits_for_its_restart() {
    let faults = r#"
[[fault]]
at = "10s"
nodes = [1]
kind = "crash"

[[fault]]
at = "30s"
nodes = [1]
kind = "restart"
"#;
    let outcome = run(&scenario("batch", faults));
    let life = life_events(&outcome);
    assert_eq!(life[0], (10.0, What::NodeCrash { node: 1 }));
    assert_eq!(life[1], (30.0, What::NodeRestart { node: 1 }));
    let consistency = outcome.consistency.as_ref().expect("data mode checks");
    assert_eq!(consistency.stale_reads, 0);
    assert_eq!(consistency.replicas.as_ref().map(|r| r.behind), Some(0));
}
