//! `[data] state = "steady"`: every shard starts part-way through the
//! flush-and-compact cycle its writes drive, its memtable partly filled and
//! its lowest SSTable tiers at their own point of the cycle, drawn per
//! shard from the run seed. Started `"compacted"`, every shard has the same
//! tiers and an empty memtable, so under a write load they would all flush
//! and compact at the same moment.

mod common;

const SCENARIO: &str = r#"
name = "steady-state"
seed = 3
duration = "2s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"

[data]
partitions = 200e6
row_bytes = "1100B"
replication_factor = 3
state = "STATE"

[[load]]
name = "write"
command = "cassandra-stress write no-warmup cl=QUORUM duration=2s -rate 'threads=32 limit=2000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop 'dist=uniform(1..200000000)'"
"#;

/// Per node, from the first interval: (memtable bytes, SSTables); and the
/// whole time series as text.
fn run(state: &str, seed: u64) -> (Vec<(f64, f64)>, String) {
    let text = SCENARIO.replace("STATE", state);
    let plan = common::plan("steady-state.toml", &text, Some(seed));
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let series = &outcome.timeseries;
    let column = |name: &str| series.column(name).unwrap();
    let first = &series.rows[0];
    let nodes = (0..3)
        .map(|node| {
            let value = |name: &str| -> f64 {
                first[column(&format!("node{node}_{name}"))]
                    .parse()
                    .unwrap()
            };
            (value("memtable_bytes"), value("sstables"))
        })
        .collect();
    let text = series
        .rows
        .iter()
        .map(|row| row.join(","))
        .collect::<Vec<_>>()
        .join("\n");
    (nodes, text)
}

#[test]
fn steady_shards_start_with_full_memtables_and_their_own_tiers() {
    let (compacted, _) = run("compacted", 3);
    let (steady, _) = run("steady", 3);
    println!("compacted {compacted:?}\nsteady {steady:?}");
    // i3.2xlarge: 7 shards of ~8.4 GiB, each flushing at ~1.1 GiB of dirty
    // memory. Compacted, one second of 2,000 writes/s has put a few MB in
    // the memtables; steady, each node's 7 shards hold on average half a
    // flush each.
    for ((compacted_memtables, _), (steady_memtables, _)) in compacted.iter().zip(&steady) {
        assert!(*compacted_memtables < 10e6, "{compacted:?}");
        assert!(*steady_memtables > 1e9, "{steady:?}");
    }
    // Compacted, every shard holds the same data (the same tiers); steady,
    // the lowest tiers differ from shard to shard.
    let counts = |nodes: &[(f64, f64)]| -> Vec<f64> { nodes.iter().map(|node| node.1).collect() };
    assert!(
        counts(&compacted).windows(2).all(|pair| pair[0] == pair[1]),
        "{compacted:?}"
    );
    assert_ne!(counts(&steady), counts(&compacted));
}

#[test]
fn the_steady_start_is_drawn_from_the_seed() {
    let (_, first) = run("steady", 3);
    let (_, again) = run("steady", 3);
    let (other_nodes, other) = run("steady", 4);
    assert_eq!(first, again, "the same seed starts the same way");
    assert_ne!(
        first, other,
        "another seed draws other phases: {other_nodes:?}"
    );
}

/// Per node, from the first interval: compactions running (scaled).
fn first_compactions(outcome: &sim::cluster::RunOutcome) -> Vec<f64> {
    let series = &outcome.timeseries;
    (0..3)
        .map(|node| {
            let column = series.column(&format!("node{node}_compactions")).unwrap();
            series.rows[0][column].parse().unwrap()
        })
        .collect()
}

#[test]
fn a_steady_start_has_merges_under_way_as_its_pilot_measured_the_cycle() {
    // Ten times the writes: each shard takes ~3 MB/s into its memtable,
    // and ten times the data (~280 flushes a shard), so that the tiers of
    // 4 to 32 flushes can merge (pairs) clear of the largest SSTable; each
    // merges for a few percent of its cycle.
    let text = SCENARIO
        .replace("limit=2000/s", "limit=20000/s")
        .replace("partitions = 200e6", "partitions = 2e9");
    let run = |state: &str| {
        let text = text.replace("STATE", state);
        sim::cluster::run(common::plan("steady-state.toml", &text, None), &mut |_| {})
            .expect("the run completes")
    };
    let compacted = run("compacted");
    let steady = run("steady");
    assert!(compacted.plan.cluster.preload.unwrap().steady.is_none());
    assert_eq!(first_compactions(&compacted), vec![0.0; 3]);
    let measured = steady.plan.cluster.preload.unwrap().steady.unwrap();
    println!("{measured:?}");
    // The pilot saw the clients' writes: 20,000/s x RF 3 over 21 shards,
    // each row 1,032 bytes and its SSTable overhead.
    let rows_per_shard = 20_000.0 * 3.0 / 21.0;
    assert!(
        (0.9..2.0).contains(&(measured.flushed_bytes_per_s / (rows_per_shard * 1032.0))),
        "{measured:?}"
    );
    assert!((0.0..0.5).contains(&measured.foreground_utilisation));
    let duty = measured.flushed_bytes_per_s / measured.compaction_bytes_per_s;
    assert!(
        (measured.merge_duty - duty).abs() < 1e-12 && duty > 0.02,
        "{measured:?}"
    );
    let first = first_compactions(&steady);
    assert!(
        first.iter().sum::<f64>() > 0.0,
        "no merge under way: {first:?}"
    );
    // The time series shows the CPU the merges take, within the node's.
    let cpu = |outcome: &sim::cluster::RunOutcome, node: usize, name: &str| -> f64 {
        let series = &outcome.timeseries;
        let column = series.column(&format!("node{node}_{name}")).unwrap();
        series.rows[0][column].parse().unwrap()
    };
    for (node, &running) in first.iter().enumerate() {
        let merging = cpu(&steady, node, "compaction_cpu_fraction");
        assert_eq!(merging > 0.0, running > 0.0, "node {node}: {merging}");
        assert!(merging <= cpu(&steady, node, "cpu_utilisation"));
        assert_eq!(cpu(&compacted, node, "compaction_cpu_fraction"), 0.0);
    }
}

/// The heavy variant of [`SCENARIO`] (ten times the writes and the data),
/// started compacted at a point of a measured `window`.
fn window_scenario(window: &str) -> String {
    SCENARIO
        .replace("limit=2000/s", "limit=20000/s")
        .replace("partitions = 200e6", "partitions = 2e9")
        .replace(
            "state = \"STATE\"",
            &format!("state = \"compacted\"\nwindow = \"{window}\""),
        )
}

#[test]
fn a_window_start_carries_each_shard_to_its_point_of_the_window() {
    // Each shard takes ~3 MB/s into a memtable that flushes at ~1.1 GiB, a
    // flush every ~6 minutes: a minute's window holds a flush on a few
    // shards and hardly a merge; six hours hold ~60 flushes a shard and
    // the merges they set off, some still under way.
    let run = |window: &str, seed: u64| {
        let plan = common::plan("window.toml", &window_scenario(window), Some(seed));
        sim::cluster::run(plan, &mut |_| {}).expect("the run completes")
    };
    let short = run("1m", 3);
    let long = run("6h", 3);
    let measured = long.plan.cluster.preload.unwrap().steady.unwrap();
    assert!(measured.flushed_bytes_per_s > 1e6, "{measured:?}");
    let merging =
        |outcome: &sim::cluster::RunOutcome| first_compactions(outcome).iter().sum::<f64>();
    println!(
        "short {:?} long {:?}",
        first_compactions(&short),
        first_compactions(&long)
    );
    assert!(
        merging(&long) > merging(&short),
        "a longer window holds more merges"
    );
    assert!(merging(&long) > 0.0);
    // The same seed starts the same way; the time series is the run's.
    let again = run("6h", 3);
    assert_eq!(long.timeseries.rows, again.timeseries.rows);
}

#[test]
fn a_window_needs_a_compacted_size_tiered_start() {
    let error = |text: String| {
        let scenario = sim::scenario::parse("window.toml", &text).unwrap();
        sim::plan::resolve(&scenario, &sim::plan::RunOverrides::default())
            .unwrap_err()
            .to_string()
    };
    let steady =
        error(window_scenario("90m").replace("state = \"compacted\"", "state = \"steady\""));
    assert!(
        steady.contains("window.toml") && steady.contains("window"),
        "{steady}"
    );
    assert!(steady.contains("begins compacted"), "{steady}");
    let leveled = error(window_scenario("90m").replace(
        "state = \"compacted\"",
        "state = \"compacted\"\ncompaction = \"leveled\"",
    ));
    assert!(leveled.contains("leveled"), "{leveled}");
    let empty = error(window_scenario("0s"));
    assert!(empty.contains("longer than 0"), "{empty}");
}
