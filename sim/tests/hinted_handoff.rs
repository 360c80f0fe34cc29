//! Hinted handoff against read repair (issue 17, R4's mechanism): three
//! nodes in data mode take QUORUM writes of 60,000 keys while node 2 is
//! cut off from the other two for 40 s (clients still reach it), then,
//! after the cut heals, QUORUM reads of uniformly drawn keys.
//!
//! With hints (scylla-3.0) the coordinators keep what node 2 missed and
//! replay it once they see it up: by the read phase every replica holds
//! every write, and no read finds replicas disagreeing. Without hints
//! (scylla-2.3) node 2 comes back missing those writes; QUORUM reads that
//! ask it find the difference and repair it, a key at a time, so the
//! repair rate is highest at the start of the read phase and falls as the
//! reads cover the keys.

use sim::timeseries::TimeSeries;

mod common;

fn scenario(preset: &str) -> String {
    format!(
        r#"
name = "hinted-handoff"
seed = 3
duration = "105s"

[cluster]
preset = "{preset}"
nodes = 3
instance = "i3.large"

[fidelity]
mode = "data"

[[load]]
name = "write"
processes = 1
command = "cassandra-stress write n=60000 no-warmup cl=QUORUM -rate 'threads=20 limit=1000/s' -pop seq=1..60000 -schema 'replication(factor=3)'"

[[load]]
name = "read"
processes = 1
start = "75s"
command = "cassandra-stress read duration=30s no-warmup cl=QUORUM -rate 'threads=20 limit=2000/s' -pop dist=uniform(1..60000) -schema 'replication(factor=3)'"

[[fault]]
at = "5s"
for = "40s"
nodes = [2]
kind = "partition"
"#
    )
}

/// Rows written back by read repair per second, cluster-wide, in each
/// interval of the read phase (75-105 s).
fn repair_rates(series: &TimeSeries) -> Vec<f64> {
    let time = series.values("time_s").expect("a time column");
    let per_node: Vec<Vec<Option<f64>>> = (0..3)
        .map(|node| {
            series
                .values(&format!("node{node}_read_repairs_per_s"))
                .expect("a read-repair column per node")
        })
        .collect();
    (0..time.len())
        .filter(|&row| time[row].is_some_and(|t| t > 75.0))
        .map(|row| per_node.iter().map(|node| node[row].unwrap_or(0.0)).sum())
        .collect()
}

#[test]
fn with_hints_the_replica_that_was_cut_off_has_every_write_before_the_reads() {
    let outcome = sim::cluster::run(
        common::plan("hinted-handoff.toml", &scenario("scylla-3.0"), None),
        &mut |_| {},
    )
    .expect("the run completes");
    let hints = sim::report::HintsReport::of(&outcome, 1.0).expect("3.0 keeps hints");
    println!("{hints:?}");
    // Writes coordinated by nodes 0 and 1 while node 2 was cut: ~2/3 of
    // 40 s at 1,000/s.
    assert!(hints.written > 15_000, "{hints:?}");
    assert_eq!(hints.replayed, hints.written, "every hint delivered");
    assert_eq!((hints.pending, hints.dropped), (0, 0));
    let coordinator = sim::report::CoordinatorSummary::of(&outcome);
    assert_eq!(
        (coordinator.digest_mismatches, coordinator.read_repairs),
        (0, 0),
        "no read finds a replica behind"
    );
    let consistency = outcome
        .consistency
        .as_ref()
        .expect("data mode checks reads");
    assert!(consistency.reads_checked > 50_000);
    assert_eq!(consistency.stale_reads, 0);
}

#[test]
fn without_hints_reads_repair_what_the_replica_missed_at_a_falling_rate() {
    let outcome = sim::cluster::run(
        common::plan("hinted-handoff.toml", &scenario("scylla-2.3"), None),
        &mut |_| {},
    )
    .expect("the run completes");
    assert!(sim::report::HintsReport::of(&outcome, 1.0).is_none());
    let coordinator = sim::report::CoordinatorSummary::of(&outcome);
    println!("{coordinator:?}");
    assert!(coordinator.read_repairs > 5_000, "{coordinator:?}");
    assert!(coordinator.background_read_repairs > 0, "{coordinator:?}");
    let rates = repair_rates(&outcome.timeseries);
    println!("{rates:?}");
    let third = rates.len() / 3;
    let first: f64 = rates[..third].iter().sum();
    let last: f64 = rates[rates.len() - third..].iter().sum();
    // Each read asks node 2 about two times in three and repairs the key
    // it finds missing: after the 60,000 reads of 60,000 keys about half
    // of what it missed is repaired, and the rate has fallen by as much.
    assert!(first > 1.4 * last, "the rate falls: {rates:?}");
    assert!(last > 0.0, "and is still repairing at the end: {rates:?}");
    // QUORUM reads never return less than the newest acknowledged write.
    let consistency = outcome
        .consistency
        .as_ref()
        .expect("data mode checks reads");
    assert_eq!(consistency.stale_reads, 0);
}

#[test]
fn settings_a_preset_does_not_have_are_refused_with_the_reason() {
    let refused = |preset: &str, extra: &str| -> String {
        // Cassandra's modelled heap needs a larger instance.
        let instance = if preset.starts_with("cassandra") {
            "i3.4xlarge"
        } else {
            "i3.large"
        };
        let text = scenario(preset).replace(
            "instance = \"i3.large\"\n",
            &format!("instance = \"{instance}\"\n\n{extra}\n"),
        );
        let parsed = sim::scenario::parse("hinted-handoff.toml", &text).unwrap();
        sim::plan::resolve(&parsed, &sim::plan::RunOverrides::default())
            .map(|_| String::new())
            .unwrap_or_else(|error| error.to_string())
    };
    let error = refused(
        "scylla-2.3",
        "[cluster.yaml]\nhinted_handoff_enabled = true",
    );
    assert!(
        error.contains("cluster.yaml.hinted_handoff_enabled")
            && error.contains("no hinted handoff"),
        "{error}"
    );
    let error = refused(
        "scylla-3.0",
        "[cluster.yaml]\nhinted_handoff_throttle_in_kb = 512",
    );
    assert!(error.contains("does not use it"), "{error}");
    assert_eq!(
        refused(
            "cassandra-3.11",
            "[cluster.yaml]\nhinted_handoff_throttle_in_kb = 512"
        ),
        ""
    );
    assert_eq!(
        refused(
            "scylla-3.0",
            "[cluster.yaml]\nhinted_handoff_enabled = false"
        ),
        ""
    );
    let error = refused("scylla-3.0", "[table]\ndclocal_read_repair_chance = 1.5");
    assert!(
        error.contains("table.dclocal_read_repair_chance") && error.contains("1.5"),
        "{error}"
    );
}

#[test]
fn turning_hints_off_on_3_0_leaves_the_repairs_to_reads() {
    let text = scenario("scylla-3.0").replace(
        "instance = \"i3.large\"\n",
        "instance = \"i3.large\"\n\n[cluster.yaml]\nhinted_handoff_enabled = false\n",
    );
    let plan = common::plan("hinted-handoff.toml", &text, None);
    assert!(plan.cluster.hints.is_none());
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    assert!(sim::report::CoordinatorSummary::of(&outcome).read_repairs > 5_000);
}
