//! Network faults from the scenario's `[[fault]]` timeline: each reaches
//! the traffic it should, shows in `events.jsonl` at its times, and a run
//! under faults is as deterministic as one without.

mod common;

use std::path::PathBuf;

use sim::events::What;

/// Three Scylla 3.0 nodes of 2 shards, RF 3, writes at `cl` by two c-s
/// processes at 2,000 ops/s each for 20 s, with `faults` appended.
fn scenario(cl: &str, faults: &str) -> String {
    format!(
        r#"
name = "faults"
seed = 5
duration = "20s"

[cluster]
preset = "scylla-3.0"
nodes = 3
instance = "i3.large"

[[load]]
name = "write"
processes = 2
command = "cassandra-stress write no-warmup cl={cl} duration=20s -rate 'threads=20 limit=2000/s' -pop seq=1..1000000 -schema 'replication(factor=3)' -errors retries=0 ignore"
{faults}
"#
    )
}

/// `text` (from [`scenario`]) run for `seconds` instead of 20.
fn lasting(seconds: u32, text: String) -> String {
    text.replace("duration = \"20s\"", &format!("duration = \"{seconds}s\""))
        .replace("duration=20s", &format!("duration={seconds}s"))
}

fn run(text: &str) -> sim::cluster::RunOutcome {
    sim::cluster::run(common::plan("faults.toml", text, None), &mut |_| {})
        .expect("the run completes")
}

fn writes(outcome: &sim::cluster::RunOutcome) -> (u64, u64) {
    let write = &outcome.loads[0].ops[0];
    (write.count, write.errors)
}

#[test]
fn a_partitioned_replica_leaves_quorum_writes_answered_and_its_traffic_lost() {
    let partition = "[[fault]]\nat = \"5s\"\nfor = \"10s\"\nnodes = [2]\nkind = \"partition\"\n";
    let healthy = run(&scenario("QUORUM", ""));
    let quorum = run(&scenario("QUORUM", partition));
    assert_eq!(healthy.messages_lost.to_partitions, 0);
    // Clients still reach node 2, whose writes get one acknowledgement (its
    // own) of the two QUORUM needs; the others' writes to it are lost.
    assert!(
        quorum.messages_lost.to_partitions > 100,
        "{:?}",
        quorum.messages_lost
    );
    let (done, errors) = writes(&quorum);
    let (healthy_done, _) = writes(&healthy);
    assert!(errors > 0, "writes coordinated by node 2 time out");
    assert!(
        done + errors > healthy_done / 2,
        "the other coordinators keep answering: {done} + {errors} errors vs {healthy_done}"
    );
    // At ONE every coordinator answers from its own copy.
    let one = run(&scenario("ONE", partition));
    assert_eq!(writes(&one).1, 0, "ONE needs no other replica");
    let (one_done, healthy_done) = (writes(&one).0 as f64, writes(&healthy).0 as f64);
    assert!(
        (one_done - healthy_done).abs() < 0.001 * healthy_done,
        "{one_done} vs {healthy_done}: the load goes on as if healthy"
    );
}

#[test]
fn a_flap_cuts_and_restores_on_schedule_and_is_logged() {
    let flap = "[[fault]]\nat = \"2s\"\nfor = \"10s\"\nnodes = [1]\nkind = \"flap\"\noff = \"3s\"\non = \"4s\"\n";
    let outcome = run(&scenario("ONE", flap));
    let timeline: Vec<(f64, &str)> = outcome
        .event_log
        .events()
        .iter()
        .map(|event| {
            let name = match &event.what {
                What::FaultStart { .. } => "start",
                What::FaultEnd { .. } => "end",
                What::NetworkOff { .. } => "off",
                What::NetworkOn { .. } => "on",
                What::NodeDown { .. } => "down",
                What::NodeUp { .. } => "up",
                What::Hints { .. } => "hints",
                What::ReadRepairs { .. } => "repairs",
                What::NodeCrash { .. }
                | What::NodeRestart { .. }
                | What::NodeJoined { .. }
                | What::NodeServing { .. }
                | What::NodeIsolated { .. } => "life",
                What::ActionStart { .. }
                | What::TopologyChange { .. }
                | What::StreamingStart { .. }
                | What::StreamPlanDone { .. }
                | What::ActionFailed { .. }
                | What::ActionEnd { .. } => "topology",
            };
            (event.time_s, name)
        })
        .filter(|(_, name)| !matches!(*name, "down" | "up" | "hints" | "repairs"))
        .collect();
    // Off 2-5 s, on 5-9 s, off 9-12 s, where the fault ends.
    assert_eq!(
        timeline,
        [
            (2.0, "start"),
            (2.0, "off"),
            (5.0, "on"),
            (9.0, "off"),
            (12.0, "on"),
            (12.0, "end")
        ]
    );
    assert!(
        outcome.messages_lost.at_nics > 0,
        "requests to node 1 are lost while it is off"
    );
}

#[test]
fn dropped_messages_are_about_the_probability_of_those_sent() {
    let drop = "[[fault]]\nat = \"0s\"\nnodes = [0, 1, 2]\nkind = \"drop\"\nprobability = 0.01\n";
    let outcome = run(&scenario("ALL", drop));
    // Every write crosses the network about 6 times (request, 2 replica
    // requests and their acknowledgements, the reply), a third of the
    // replica traffic staying on the coordinator: ~5 messages a write.
    let (done, errors) = writes(&outcome);
    let messages = 5.0 * (done + errors) as f64;
    let lost = outcome.messages_lost.at_nics as f64;
    assert!(
        lost > 0.5 * 0.01 * messages && lost < 1.5 * 0.01 * messages,
        "{lost} lost of ~{messages}"
    );
    assert!(errors > 0, "at ALL a lost acknowledgement fails the write");
}

#[test]
fn a_degraded_nic_slows_what_crosses_it() {
    // 64 KiB rows at 200 ops/s per process: ~26 MB/s into each node, a
    // third of an i3.large's link; at a twentieth of its bandwidth the
    // node's NIC is the bottleneck and writes queue behind it.
    let big = |faults: &str| {
        scenario("ALL", faults).replace(
            "-errors retries=0 ignore",
            "-errors retries=0 ignore -col 'size=FIXED(65536) n=FIXED(1)'",
        )
    };
    let latency = |outcome: &sim::cluster::RunOutcome| {
        sim::metrics::LatencySummary::of(&outcome.ops[0].total).mean
    };
    let healthy = run(&big(""));
    let degraded = run(&big(
        "[[fault]]\nat = \"0s\"\nnodes = [0]\nkind = \"nic-degrade\"\nbandwidth_factor = 0.05\n",
    ));
    assert!(
        latency(&degraded) > 3.0 * latency(&healthy),
        "{} ms vs {} ms",
        latency(&degraded),
        latency(&healthy)
    );
}

#[test]
fn the_same_faults_and_seed_write_identical_results() {
    let text = scenario(
        "QUORUM",
        "[[fault]]\nat = \"3s\"\nfor = \"8s\"\nnodes = [2]\nkind = \"flap\"\noff = \"2s\"\non = \"1s\"\n\
         [[fault]]\nat = \"1s\"\nnodes = [0]\nkind = \"drop\"\nprobability = 0.02\n",
    );
    let dir = |name: &str| -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("twin-network-faults-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    };
    let (first, second) = (dir("a"), dir("b"));
    for out in [&first, &second] {
        sim::report::write_results(out, &run(&text)).expect("results are written");
    }
    for file in ["summary.json", "timeseries.csv", "events.jsonl"] {
        let a = std::fs::read(first.join(file)).unwrap();
        let b = std::fs::read(second.join(file)).unwrap();
        assert!(!a.is_empty(), "{file} is written");
        assert_eq!(a, b, "{file} differs between two runs");
    }
    // Hints were written and replayed (node 2 stayed silent past write
    // timeouts): they are part of what repeats.
    let events = std::fs::read_to_string(first.join("events.jsonl")).unwrap();
    assert!(events.contains("\"event\":\"hints\""), "{events}");
    let _ = std::fs::remove_dir_all(&first);
    let _ = std::fs::remove_dir_all(&second);
}

#[test]
fn a_node_cut_off_is_convicted_by_gossip_the_driver_routes_around_it_and_it_comes_back() {
    // Node 2 is cut from 5 s to 45 s of a 60-s QUORUM write load.
    let text = lasting(
        60,
        scenario(
            "QUORUM",
            "[[fault]]\nat = \"5s\"\nfor = \"40s\"\nnodes = [2]\nkind = \"flap\"\noff = \"40s\"\non = \"1s\"\n",
        ),
    );
    let outcome = run(&text);
    let downs: Vec<(f64, u32, u32)> = outcome
        .event_log
        .events()
        .iter()
        .filter_map(|event| match event.what {
            What::NodeDown { observer, peer, .. } => Some((event.time_s, observer, peer)),
            _ => None,
        })
        .collect();
    // Nodes 0 and 1 convict node 2, and node 2 convicts both, 18-30 s
    // after the cut (phi-accrual over heartbeats a second or two apart).
    assert_eq!(downs.len(), 4, "{downs:?}");
    for &(at, observer, peer) in &downs {
        assert!(observer == 2 || peer == 2, "{downs:?}");
        assert!((23.0..35.0).contains(&at), "convicted at {at} s");
    }
    let ups = outcome
        .event_log
        .events()
        .iter()
        .filter(|event| matches!(event.what, What::NodeUp { .. }))
        .map(|event| event.time_s)
        .collect::<Vec<_>>();
    assert_eq!(ups.len(), 4, "each sees the other up again: {ups:?}");
    assert!(ups.iter().all(|&at| (45.0..50.0).contains(&at)), "{ups:?}");
    // Once node 0 (the driver's control connection) convicts node 2, the
    // clients stop sending to it: the last 10 s of the cut run at the
    // offered rate.
    let series = outcome.timeseries.to_csv();
    let rates: Vec<f64> = series
        .lines()
        .skip(1)
        .map(|line| {
            line.split(',')
                .nth(1)
                .unwrap()
                .parse::<f64>()
                .unwrap_or(0.0)
        })
        .collect();
    for second in 36..45 {
        assert!(
            rates[second - 1] > 0.95 * 4000.0,
            "second {second}: {} writes/s",
            rates[second - 1]
        );
    }
    // Without retries (`-errors retries=0 ignore`), what failed is what was sent
    // to node 2 before the driver knew: at most every thread's request once
    // per 12-s client timeout.
    let errors = writes(&outcome).1;
    assert!(errors > 0 && errors <= 40 * 3, "{errors} errors");
}

#[test]
fn with_too_few_replicas_up_a_coordinator_answers_unavailable_at_once() {
    // At ALL, once node 2 is convicted every write is unavailable: the
    // client hears it from the coordinator in well under a millisecond
    // instead of waiting out a timeout.
    let text = lasting(
        40,
        scenario(
            "ALL",
            "[[fault]]\nat = \"1s\"\nnodes = [2]\nkind = \"flap\"\noff = \"1h\"\non = \"1s\"\n",
        ),
    );
    let outcome = run(&text);
    let (done, errors) = writes(&outcome);
    assert!(errors > 10_000, "{done} done, {errors} unavailable");
}

/// c-s divides a `duration=` load's operations by its duration: when every
/// node crashes 5 s into a 20-s load, the clients' threads wait on replies
/// that never come, and the rate is the 5 s of answered writes over the
/// 20 s, not over the span from the first write to the last reply (which
/// gave four times the rate the load achieved).
#[test]
fn the_rate_of_a_load_whose_clients_stall_is_over_its_duration() {
    let crash = "[[fault]]\nat = \"5s\"\nnodes = [0, 1, 2]\nkind = \"crash\"\n";
    let outcome = run(&scenario("ONE", crash));
    let summary = sim::report::Summary::of(&outcome);
    let write = &summary.loads["write"].ops["write"];
    println!(
        "{} writes answered, {} op/s over {} s",
        write.count, write.ops_per_s, write.seconds
    );
    assert!(
        write.count > 15_000,
        "about 5 s at 4,000/s: {}",
        write.count
    );
    assert_eq!(write.seconds, 20.0);
    let expected = write.count as f64 / 20.0;
    assert!(
        (write.ops_per_s - expected).abs() < 0.01 * expected,
        "{} op/s, {expected} expected",
        write.ops_per_s
    );
    // The whole run's figure for writes is the same.
    assert_eq!(summary.ops["write"].seconds, 20.0);
}
