//! Server-side views. Latencies: what each node's coordinators measured,
//! from a request's arrival on the coordinating shard to its reply. They
//! leave out the client's NIC and the wire both ways, so they sit below the
//! client's latencies by about a round trip, and every node that
//! coordinates has its own per-interval p99 in the time series. Load: a
//! node's busiest shard next to its mean, which tells a hot shard from a
//! busy node.

use sim::report::Summary;

mod common;

const SCENARIO: &str = r#"
name = "server-latency"
seed = 5
duration = "3s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[[load]]
name = "mixed"
command = "cassandra-stress mixed ratio(write=1,read=1) no-warmup cl=QUORUM duration=3s -schema 'replication(factor=3)' -rate 'threads=16 limit=4000/s' -pop 'dist=uniform(1..20000)'"
"#;

#[test]
fn coordinators_measure_below_the_client_by_the_wire() {
    let plan = common::plan("server-latency.toml", SCENARIO, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let summary = Summary::of(&outcome);
    for op in ["read", "write"] {
        let server = summary.server_latency_ms[op];
        let client = summary.ops[op].latency_ms;
        println!("{op}: server {server:?}\nclient {client:?}");
        // The wire: 40 us plus jitter each way, and the client's NIC.
        assert!(
            server.p50 > 0.02 && server.p50 + 0.08 < client.p50,
            "{op}: server p50 {} against the client's {}",
            server.p50,
            client.p50
        );
        assert!(server.p99 <= client.p99, "{op}");
    }
    let series = &outcome.timeseries;
    for node in 0..3 {
        for op in ["read", "write"] {
            let name = format!("node{node}_server_{op}_p99_ms");
            let column = series
                .column(&name)
                .unwrap_or_else(|| panic!("{name} is a column"));
            let filled = series
                .rows
                .iter()
                .filter(|row| row[column].parse::<f64>().is_ok_and(|ms| ms > 0.0))
                .count();
            assert_eq!(filled, series.rows.len(), "{name} in every interval");
        }
    }
}

#[test]
fn one_hot_shard_shows_as_the_nodes_busiest() {
    // Every write to key 1, at RF 1, from a shard-aware client: the key's
    // shard does all the work (a token-aware one would land on any shard,
    // which would coordinate and hop to the owner).
    let text = r#"
name = "hot-shard"
seed = 5
duration = "3s"

[cluster]
preset = "scylla-2.2"
nodes = 1
instance = "i3.2xlarge"

[cluster.overrides]
shards = 4

[[load]]
name = "write"
routing = "shard-aware"
command = "cassandra-stress write no-warmup cl=ONE duration=3s -rate 'threads=8 limit=4000/s' -pop 'seq=1..1'"
"#;
    let plan = common::plan("hot-shard.toml", text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let series = &outcome.timeseries;
    let column = |name: &str| series.column(name).unwrap();
    let (mean, hottest) = (
        column("node0_cpu_utilisation"),
        column("node0_hottest_shard_utilisation"),
    );
    for row in &series.rows {
        let (mean, hottest): (f64, f64) =
            (row[mean].parse().unwrap(), row[hottest].parse().unwrap());
        println!("mean {mean}, busiest {hottest}");
        assert!(
            (hottest - 4.0 * mean).abs() < 0.02 * hottest && hottest > 0.05,
            "one of 4 shards does all the work: {hottest} against a mean of {mean}"
        );
    }
}

/// `time_spent`: every kind of work is priced as the cost table says, and
/// what it waits grows with the load on the shards.
#[test]
fn time_spent_shows_prices_and_waits_that_grow_with_the_load() {
    let run = |limit: u32| {
        let scenario = SCENARIO.replace("limit=4000/s", &format!("limit={limit}/s"));
        let plan = common::plan("server-latency.toml", &scenario, None);
        let costs = plan.cluster.costs.clone();
        let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
        (Summary::of(&outcome), costs)
    };
    let (light, costs) = run(500);
    let (busy, _) = run(20_000);
    let coordinate = light.time_spent.cpu["coordinate"];
    assert_eq!(coordinate.service_us, costs.coordinate_ns as f64 / 1e3);
    // A read's lookup is priced by the SSTables it checks, never below none.
    assert!(
        light.time_spent.cpu["read_request"].service_us
            >= costs.read_request(0).as_nanos() as f64 / 1e3
    );
    // Every client request is coordinated once.
    let requests = light.ops["read"].count + light.ops["write"].count;
    assert!(
        coordinate.tasks >= requests,
        "{} coordinations for {requests} requests",
        coordinate.tasks
    );
    for kind in ["coordinate", "write_request", "receive_message"] {
        let (quiet, loaded) = (light.time_spent.cpu[kind], busy.time_spent.cpu[kind]);
        println!("{kind}: {quiet:?} / {loaded:?}");
        assert!(
            quiet.wait_us >= 0.0 && quiet.wait_us < loaded.wait_us,
            "{kind}"
        );
    }
    // The commitlog writes its buffers; they queue only behind each other.
    let commitlog = busy.time_spent.io["commitlog"];
    assert!(
        commitlog.requests > 0 && commitlog.device_us > 0.0,
        "{commitlog:?}"
    );
}
