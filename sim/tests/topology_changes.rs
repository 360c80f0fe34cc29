//! Topology changes (issue 18): a node joins and another leaves while
//! clients write and read at QUORUM, in data mode, on 2.3's RPC streaming
//! and 3.0's continuous streams.
//!
//! What must hold: each operation goes through its steps (joining, data
//! streamed after `RING_DELAY`, normal; leaving, streamed, left), no read
//! returns less than a write acknowledged before it, and at the end every
//! replica of every key under the final ring holds the newest acknowledged
//! version: the joining node got its ranges by streaming and the writes
//! made while it streamed as a pending replica; the leaving node's ranges
//! reached their next owners.

use sim::events::What;

mod common;

fn scenario(preset: &str) -> String {
    format!(
        r#"
name = "topology"
seed = 3
duration = "200s"

[cluster]
preset = "{preset}"
nodes = 3
instance = "i3.large"

[fidelity]
mode = "data"

[[load]]
name = "write"
processes = 1
command = "cassandra-stress write no-warmup cl=QUORUM duration=90s -rate 'threads=20 limit=1000/s' -pop seq=1..60000 -col 'size=FIXED(100) n=FIXED(1)' -schema 'replication(factor=2)'"

[[load]]
name = "read"
processes = 1
start = "5s"
command = "cassandra-stress read no-warmup cl=QUORUM duration=85s -rate 'threads=20 limit=500/s' -pop dist=uniform(1..60000) -col 'size=FIXED(100) n=FIXED(1)' -schema 'replication(factor=2)'"

[[action]]
at = "10s"
kind = "add-node"

[[action]]
at = "11s"
kind = "decommission"
node = 0
"#
    )
}

fn run(text: &str) -> sim::cluster::RunOutcome {
    sim::cluster::run(common::plan("topology.toml", text, None), &mut |_| {})
        .expect("the run completes")
}

/// The events of `outcome` that `keep` accepts, in order.
fn events_where(outcome: &sim::cluster::RunOutcome, keep: impl Fn(&What) -> bool) -> Vec<&What> {
    outcome
        .event_log
        .events()
        .iter()
        .map(|event| &event.what)
        .filter(|what| keep(what))
        .collect()
}

/// How each operation ended: its `action-failed` or `action-end`.
fn endings(outcome: &sim::cluster::RunOutcome) -> Vec<&What> {
    events_where(outcome, |what| {
        matches!(what, What::ActionFailed { .. } | What::ActionEnd { .. })
    })
}

/// The topology events, as (time, what) with what's name and node.
fn steps(outcome: &sim::cluster::RunOutcome) -> Vec<(f64, String)> {
    outcome
        .event_log
        .events()
        .iter()
        .filter_map(|event| {
            let step = match &event.what {
                What::ActionStart { kind, node, .. } => format!("start {kind} {node}"),
                What::TopologyChange { node, state, .. } => format!("{state} {node}"),
                What::StreamingStart { .. } => "streaming".to_string(),
                What::ActionEnd { kind, node, .. } => format!("end {kind} {node}"),
                _ => return None,
            };
            Some((event.time_s, step))
        })
        .collect()
}

fn check(preset: &str) {
    let outcome = run(&scenario(preset));
    let steps = steps(&outcome);
    println!("{steps:?}");
    let names: Vec<&str> = steps.iter().map(|(_, step)| step.as_str()).collect();
    assert_eq!(
        names,
        [
            "start add-node 3",
            "joining 3",
            "streaming",
            "normal 3",
            "end add-node 3",
            "start decommission 0",
            "leaving 0",
            "streaming",
            "left 0",
            "end decommission 0",
        ]
    );
    // The new node announces itself once gossip settled (8 s), and its
    // data moves `RING_DELAY` (30 s) later.
    assert!((steps[1].0 - 18.0).abs() < 1e-9, "{steps:?}");
    assert!((steps[2].0 - 48.0).abs() < 1e-9, "{steps:?}");
    // The decommission waited for the add-node to end.
    assert_eq!(steps[4].0, steps[5].0);
    let streamed: u64 = outcome
        .event_log
        .events()
        .iter()
        .filter_map(|event| match event.what {
            What::ActionEnd { bytes, .. } => Some(bytes),
            _ => None,
        })
        .sum();
    assert!(streamed > 0, "data moved");
    let consistency = outcome.consistency.as_ref().expect("data mode checks");
    assert_eq!(consistency.stale_reads, 0, "{:?}", consistency.first_stale);
    assert!(consistency.reads_checked > 30_000);
    let replicas = consistency
        .replicas
        .as_ref()
        .expect("the run was quiet at its end");
    assert_eq!(replicas.keys, 60_000);
    assert_eq!(
        replicas.behind, 0,
        "every owner of every key under the final ring holds it: {replicas:?}"
    );
}

#[test]
fn a_node_joins_and_another_leaves_under_quorum_load_with_rpc_streaming() {
    check("scylla-2.3");
}

#[test]
fn a_node_joins_and_another_leaves_under_quorum_load_with_continuous_streams() {
    check("scylla-3.0");
}

#[test]
fn the_same_topology_script_and_seed_give_the_same_story() {
    let text = scenario("scylla-3.0");
    let (first, second) = (run(&text), run(&text));
    assert_eq!(first.event_log.to_jsonl(), second.event_log.to_jsonl());
}

/// Three nodes with a preloaded table; node 3 is being added when node
/// `node` (1, one of its sources, or 3 itself) suffers `kind` (a crash, or
/// a partition from every other node) for a minute.
fn peer_fault(node: u32, kind: &str) -> String {
    format!(
        r#"
name = "add-node-peer-crash"
seed = 2
duration = "400s"

[cluster]
preset = "scylla-3.0"
nodes = 3
instance = "i3.large"

[data]
partitions = 20e6
row_bytes = "1100B"
replication_factor = 2

[[load]]
name = "write"
processes = 1
command = "cassandra-stress write no-warmup cl=ONE duration=300s -rate 'threads=20 limit=500/s' -pop dist=uniform(1..20000000) -schema 'replication(factor=2)'"

[[action]]
at = "10s"
kind = "add-node"

[[action]]
at = "20s"
kind = "decommission"
node = 0

[[fault]]
at = "70s"
for = "60s"
nodes = [{node}]
kind = "{kind}"
"#
    )
}

#[test]
fn a_streaming_peer_that_dies_or_is_cut_off_fails_the_operation_and_says_why() {
    for (node, kind) in [(1, "crash"), (3, "crash"), (1, "partition")] {
        let text = peer_fault(node, kind);
        let outcome = run(&text);
        let failed = endings(&outcome);
        let [What::ActionFailed {
            action: 0,
            node: 3,
            reason,
            ..
        }] = failed.as_slice()
        else {
            panic!("the add-node fails, nothing ends: {failed:?}");
        };
        if kind == "crash" {
            // The plan's peer (or the joining node itself) died: the
            // operation fails as the process goes.
            assert!(
                reason.starts_with(&format!("node {node} crashed while it ")),
                "{reason}"
            );
        } else {
            // Cut off, it fails once the failure detector convicts.
            assert!(
                reason.contains(" failed: node 3 saw node 1 down")
                    || reason.contains(" failed: node 1 saw node 3 down"),
                "{reason}"
            );
        }
        // The joining node gave its tokens up; the decommission after it
        // never started (the script stopped).
        assert!(outcome.event_log.events().iter().any(|event| matches!(
            event.what,
            What::TopologyChange {
                node: 3,
                state: "gave-up",
                ..
            }
        )));
        assert!(!outcome
            .event_log
            .events()
            .iter()
            .any(|event| matches!(event.what, What::ActionStart { action: 1, .. })));
        // Under a fault too, the same seed tells the same story.
        assert_eq!(
            outcome.event_log.to_jsonl(),
            run(&text).event_log.to_jsonl()
        );
    }
}

/// Three i3.large nodes with 2M preloaded partitions at RF 2; node 3 is
/// added at 5 s, under a QUORUM mix when `loaded`.
fn add_node(preset: &str, loaded: bool) -> String {
    let loads = if loaded {
        r#"
[[load]]
name = "write"
processes = 1
command = "cassandra-stress write no-warmup cl=QUORUM duration=300s -rate 'threads=50 limit=6000/s' -pop dist=uniform(1..2000000) -schema 'replication(factor=2)'"

[[load]]
name = "read"
processes = 1
command = "cassandra-stress read no-warmup cl=QUORUM duration=300s -rate 'threads=50 limit=6000/s' -pop dist=uniform(1..2000000) -schema 'replication(factor=2)'"
"#
    } else {
        ""
    };
    format!(
        r#"
name = "add-node"
seed = 4
duration = "300s"

[cluster]
preset = "{preset}"
nodes = 3
instance = "i3.large"

[data]
partitions = 2e6
row_bytes = "1100B"
replication_factor = 2
{loads}
[[action]]
at = "5s"
kind = "add-node"
"#
    )
}

/// The operation's (start, streaming start, end) times and bytes.
fn add_node_times(outcome: &sim::cluster::RunOutcome) -> (f64, f64, f64, u64) {
    let events = outcome.event_log.events();
    let at = |want: &dyn Fn(&What) -> bool| {
        events
            .iter()
            .find(|event| want(&event.what))
            .map(|event| event.time_s)
            .expect("the event happened")
    };
    let bytes = events
        .iter()
        .find_map(|event| match event.what {
            What::ActionEnd { bytes, .. } => Some(bytes),
            _ => None,
        })
        .expect("the add-node ended");
    (
        at(&|what| matches!(what, What::ActionStart { .. })),
        at(&|what| matches!(what, What::StreamingStart { .. })),
        at(&|what| matches!(what, What::ActionEnd { .. })),
        bytes,
    )
}

/// Mean of the time series' `column` over the rows ending in (from, to].
fn mean_between(outcome: &sim::cluster::RunOutcome, column: &str, from: f64, to: f64) -> f64 {
    let series = &outcome.timeseries;
    let index = series.column(column).expect("a column of the series");
    let values: Vec<f64> = series
        .rows
        .iter()
        .filter(|row| {
            let end: f64 = row[0].parse().unwrap();
            end > from && end <= to
        })
        .filter_map(|row| row[index].parse().ok())
        .collect();
    assert!(!values.is_empty(), "{column} has rows in ({from}, {to}]");
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn streaming_competes_with_the_foreground_load() {
    let idle = run(&add_node("scylla-3.0", false));
    let loaded = run(&add_node("scylla-3.0", true));
    let (_, idle_streaming, idle_end, idle_bytes) = add_node_times(&idle);
    let (start, streaming, end, _) = add_node_times(&loaded);
    let (idle_s, loaded_s) = (idle_end - idle_streaming, end - streaming);
    println!("streaming takes {idle_s:.2} s idle, {loaded_s:.2} s loaded");
    // The same transfer takes longer while clients use the same CPUs,
    // disks and NICs.
    assert!(idle_bytes > 500_000_000, "{idle_bytes}");
    assert!(
        loaded_s > idle_s * 1.05,
        "loaded {loaded_s} s against idle {idle_s} s"
    );
    // And the clients' tails pay for it.
    let before = mean_between(&loaded, "write_p99_ms", 1.0, start);
    let during = mean_between(&loaded, "write_p99_ms", streaming, end);
    println!("write p99 {before:.3} ms before, {during:.3} ms while streaming");
    assert!(
        during > before * 1.2,
        "before {before} ms, during {during} ms"
    );
}

#[test]
fn continuous_streams_move_the_same_data_faster_than_an_rpc_per_partition() {
    let rpc = run(&add_node("scylla-2.3", false));
    let stream = run(&add_node("scylla-3.0", false));
    let (_, rpc_streaming, rpc_end, rpc_bytes) = add_node_times(&rpc);
    let (_, streaming, end, bytes) = add_node_times(&stream);
    assert_eq!(rpc_bytes, bytes, "the same ranges from the same nodes");
    let (rpc_s, stream_s) = (rpc_end - rpc_streaming, end - streaming);
    println!("2.3 streams for {rpc_s:.1} s, 3.0 for {stream_s:.1} s");
    assert!(
        stream_s < rpc_s * 0.95,
        "3.0 {stream_s} s against 2.3 {rpc_s} s"
    );
    // Where the margin comes from: 2.3's receiver applies every partition
    // to a memtable after its own RPC; 3.0's writes batches straight into
    // SSTables and never applies one.
    let tasks = |outcome: &sim::cluster::RunOutcome, work: engine::CpuWork| {
        outcome.time_spent.cpu[work.index()].on_cpu.started
    };
    let partitions = 2_000_000 * 2 / 3; // about what the new node owns
    let applied = tasks(&rpc, engine::CpuWork::StreamApply { rows: 1, bytes: 1 });
    assert!(
        applied > partitions / 2,
        "one apply per partition: {applied}"
    );
    assert_eq!(
        tasks(&stream, engine::CpuWork::StreamApply { rows: 1, bytes: 1 }),
        0
    );
}

#[test]
fn a_decommission_fails_when_its_node_crashes_or_a_receiver_is_down_when_data_must_move() {
    // Node 1 decommissions at 5 s; the crash at 10 s (RING_DELAY runs to
    // 35 s) takes down node 1 itself, or node 2, which must receive.
    for (crashed, expected) in [
        (1, "node 1 crashed while it decommissioned"),
        (2, "node 2, which must receive ranges, is down"),
    ] {
        let text = format!(
            r#"
name = "decommission-and-a-crash"
seed = 2
duration = "120s"

[cluster]
preset = "scylla-3.0"
nodes = 4
instance = "i3.large"

[data]
partitions = 1e6
row_bytes = "1100B"
replication_factor = 2

[[action]]
at = "5s"
kind = "decommission"
node = 1

[[fault]]
at = "10s"
for = "60s"
nodes = [{crashed}]
kind = "crash"
"#
        );
        let outcome = run(&text);
        let ends = endings(&outcome);
        let [What::ActionFailed {
            node: 1, reason, ..
        }] = ends.as_slice()
        else {
            panic!("the decommission fails: {ends:?}");
        };
        assert_eq!(reason, expected);
        // It stays in the ring: a normal member again.
        assert!(outcome.event_log.events().iter().any(|event| matches!(
            event.what,
            What::TopologyChange {
                node: 1,
                state: "normal",
                ..
            }
        )));
    }
}

#[test]
fn a_node_that_crashes_while_it_boots_fails_its_add_node() {
    let text = r#"
name = "joiner-crashes-booting"
seed = 2
duration = "120s"

[cluster]
preset = "scylla-3.0"
nodes = 3
instance = "i3.large"

[data]
partitions = 1e6
row_bytes = "1100B"
replication_factor = 2

[[action]]
at = "10s"
kind = "add-node"

[[fault]]
at = "12s"
for = "30s"
nodes = [3]
kind = "crash"
"#;
    let outcome = run(text);
    let failed = events_where(&outcome, |what| {
        matches!(
            what,
            What::ActionFailed { .. } | What::ActionEnd { .. } | What::TopologyChange { .. }
        )
    });
    let [What::ActionFailed {
        node: 3, reason, ..
    }] = failed.as_slice()
    else {
        panic!("the add-node fails before any topology change: {failed:?}");
    };
    assert_eq!(reason, "node 3 crashed while it booted");
}
