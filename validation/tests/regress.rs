//! `twin regress` on the shipped controller regression test: its baseline
//! passes against its own scenario, and a deliberately bad tuning
//! (compaction given constant full shares) fails and names the figures.

use std::path::Path;

use sim::overrides::Assignment;
use validation::regress::{baseline_of, compare, figures_of_seed, Baseline};

fn shipped() -> (sim::scenario::Scenario, Baseline) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scenario = sim::scenario::load(&root.join("scenarios/controller-regression.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(root.join("scenarios/controller-regression.baseline.json"))
        .unwrap();
    (scenario, serde_json::from_str(&text).unwrap())
}

/// The figures of `scenario` over `seeds` as a baseline (their means).
fn measured(scenario: &sim::scenario::Scenario, baseline: &Baseline, seeds: &[u64]) -> Baseline {
    let warmup = units::SimDuration::from_secs_f64(baseline.warmup_s);
    let runner = sim::sweep::Runner::new(Some(seeds.len())).expect("a thread per seed starts");
    let runs = runner.run_all(
        seeds,
        |&seed| figures_of_seed(scenario, seed, warmup).unwrap(),
        |_, _| {},
    );
    baseline_of(&scenario.name, &[], seeds, warmup, &runs)
}

#[test]
fn the_shipped_baseline_passes_against_its_scenario() {
    let (scenario, baseline) = shipped();
    let now = measured(&scenario, &baseline, &baseline.seeds);
    let verdicts = compare(&baseline, &now);
    assert_eq!(verdicts.len(), 6, "{verdicts:?}");
    assert!(verdicts.iter().all(|v| !v.regressed), "{verdicts:#?}");
    // Same scenario and seeds: the very same figures.
    assert_eq!(now.figures, baseline.figures);
}

#[test]
fn constant_full_shares_for_compaction_regress_and_are_named() {
    let (scenario, baseline) = shipped();
    let tuned = sim::scenario::with_sets(
        &scenario,
        &[Assignment::parse("controller.compaction.points=[[0,1000],[30,1000]]").unwrap()],
    )
    .unwrap();
    let now = measured(&tuned, &baseline, &[1]);
    let regressed: Vec<String> = compare(&baseline, &now)
        .into_iter()
        .filter(|v| v.regressed)
        .map(|v| v.name)
        .collect();
    assert!(
        regressed.contains(&"throughput_mean".to_string())
            && regressed.contains(&"write_p99_ms".to_string()),
        "{regressed:?}"
    );
}
