//! `twin explore`'s library side: 200 seeds of `scenarios/explore-5.toml`
//! (five nodes in data mode, random network faults, a quiet end) and 100
//! of `scenarios/explore-topology-5.toml` (the same with two drawn
//! topology operations) pass every checker; a deliberately broken replica
//! selection is caught, a run that panics is reported as a crash, and a
//! volume-mode scenario is refused.

mod common;

use std::path::PathBuf;

use common::bundled;
use sim::check::Verdict;
use sim::explore::{explorable, run_seed, SeedReport};
use sim::scenario::Scenario;

fn explore_5() -> Scenario {
    bundled("explore-5.toml")
}

/// Seeds `seeds` of `scenario`, on two threads.
fn explore(
    scenario: &Scenario,
    seeds: std::ops::RangeInclusive<u64>,
    adjust: &(dyn Fn(&mut sim::cluster::RunPlan) + Sync),
) -> Vec<SeedReport> {
    let seeds: Vec<u64> = seeds.collect();
    common::explore_seeds(scenario, &seeds, adjust)
}

#[test]
fn two_hundred_seeds_of_random_faults_break_no_checker() {
    let scenario = explore_5();
    explorable(&scenario).expect("a data-mode scenario");
    let reports = explore(&scenario, 1..=200, &|_| {});
    let failed: Vec<&SeedReport> = reports
        .iter()
        .filter(|report| report.failed() || report.crash.is_some())
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // The faults and the checks did happen: most seeds draw faults, every
    // seed reads back what it wrote, and about half end quiet enough for
    // the replica check, which holds (hints replayed everything).
    let with_faults = reports.iter().filter(|report| report.faults > 0).count();
    assert!(with_faults > 150, "{with_faults} seeds drew faults");
    let replica_checks = reports
        .iter()
        .filter(|report| report.checks[2].verdict == Verdict::Held)
        .count();
    assert!(
        replica_checks > 50,
        "{replica_checks} seeds checked the replicas"
    );
    assert!(reports.iter().all(|report| {
        report.checks[0].verdict == Verdict::Held && report.checks[1].verdict == Verdict::Held
    }));
}

#[test]
fn a_hundred_seeds_of_drawn_topology_operations_under_faults_break_no_checker() {
    let scenario = bundled("explore-topology-5.toml");
    explorable(&scenario).expect("a data-mode scenario");
    let reports = explore(&scenario, 1..=100, &|_| {});
    let failed: Vec<&SeedReport> = reports
        .iter()
        .filter(|report| report.failed() || report.crash.is_some())
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(reports.iter().all(|report| report.actions == 2));
    // Most seeds end quiet enough for the replica check (the others keep
    // a node down to the end: a removenode that failed).
    let replica_checks = reports
        .iter()
        .filter(|report| report.checks[2].verdict == Verdict::Held)
        .count();
    assert!(
        replica_checks > 60,
        "{replica_checks} seeds checked the replicas"
    );
}

#[test]
fn a_broken_replica_selection_is_caught_and_names_the_key() {
    let scenario = explore_5();
    let broken = |plan: &mut sim::cluster::RunPlan| {
        plan.cluster.planted =
            engine::planted::Planted::bug(engine::planted::PlantedBug::WritesToFirstReplicaOnly)
    };
    let reports = explore(&scenario, 1..=4, &broken);
    for report in &reports {
        assert!(report.failed(), "seed {}: {report:?}", report.seed);
        let Verdict::Broken(what) = &report.checks[0].verdict else {
            panic!(
                "seed {}: reads of writes on one replica are stale",
                report.seed
            );
        };
        assert!(
            what.contains("key ") && what.contains("acknowledged"),
            "{what}"
        );
    }
}

#[test]
fn a_run_that_panics_is_a_crash_not_a_failure() {
    let scenario = explore_5();
    std::panic::set_hook(Box::new(|_| {}));
    let report = run_seed(&scenario, 7, &|plan| {
        plan.cluster.memory_per_shard_bytes = 0
    })
    .expect("the scenario resolves");
    let _ = std::panic::take_hook();
    let crash = report.crash.as_deref().expect("a crash");
    assert!(crash.contains("invalid shard configuration"), "{crash}");
    assert!(!report.failed() && report.checks.is_empty());
}

#[test]
fn a_volume_mode_scenario_is_refused_with_the_reason() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/explore-5.toml"),
    )
    .unwrap()
    .replace("mode = \"data\"", "mode = \"volume\"");
    let scenario = sim::scenario::parse("explore-5.toml", &text).unwrap();
    let error = explorable(&scenario).unwrap_err().to_string();
    assert!(
        error.contains("fidelity.mode") && error.contains("data mode"),
        "{error}"
    );
}
