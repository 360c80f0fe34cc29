//! cassandra-stress's own thread search: a command with no `threads=`
//! runs at 4, 8, 16, 24, ... threads, one step after another, and with
//! `auto` stops once throughput stops improving. The twin runs the steps
//! as c-s does and reports each.

use sim::load::StartPlan;
use sim::plan::{resolve, RunOverrides};
use sim::report::Summary;

fn scenario(loads: &str) -> sim::scenario::Scenario {
    let text = format!(
        r#"
name = "search"
seed = 5
duration = "600s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"

[cluster.overrides]
shards = 2

{loads}
"#
    );
    sim::scenario::parse("search.toml", &text).unwrap_or_else(|e| panic!("{e}"))
}

fn run(loads: &str) -> Summary {
    let plan = resolve(&scenario(loads), &RunOverrides::default()).unwrap();
    let outcome = sim::cluster::run(plan, &mut |_| {}).unwrap();
    Summary::of(&outcome)
}

#[test]
fn a_sweep_without_auto_runs_every_step_and_sleeps_between_steps_of_writes() {
    let loads = r#"
[[load]]
name = "w"
command = "cassandra-stress write n=3000 -rate threads>=4 threads<=16"
"#;
    let plan = resolve(&scenario(loads), &RunOverrides::default()).unwrap();
    let names: Vec<&str> = plan.loads.iter().map(|load| load.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "w step 01 (4 threads)",
            "w step 02 (8 threads)",
            "w step 03 (16 threads)"
        ]
    );
    assert_eq!(plan.loads[1].start, StartPlan::After(0));
    assert_eq!(plan.loads[2].start, StartPlan::After(1));
    let summary = run(loads);
    let search = &summary.thread_search["w"];
    assert!(!search.stops_when_saturated);
    let threads: Vec<u32> = search.steps.iter().map(|step| step.threads).collect();
    assert_eq!(threads, [4, 8, 16]);
    for step in &search.steps {
        assert_eq!(summary.loads[&step.load].ops["write"].count, 3000);
        assert!(step.ops_per_s > 0.0);
    }
    assert_eq!(search.steps[0].improvement_pct, None);
    assert!(search.steps[1].improvement_pct.is_some());
    // Two 15-s pauses between the three steps.
    assert!(
        summary.simulated_seconds > 30.0,
        "{}",
        summary.simulated_seconds
    );
    assert!(summary
        .to_stress_text()
        .contains("Thread search of load `w`"));
}

#[test]
fn auto_stops_once_throughput_stops_improving_and_the_next_load_starts_after_it() {
    // Three nodes of two shards saturate long before 1000 threads.
    let loads = r#"
[[load]]
name = "r"
command = "cassandra-stress read n=4000 cl=ONE -rate auto"

[[load]]
name = "after"
after = "r"
command = "cassandra-stress write n=500 -rate threads=8"
"#;
    let plan = resolve(&scenario(loads), &RunOverrides::default()).unwrap();
    // 4, 8, 16, ... up to 913 threads, then the load after the search.
    assert_eq!(plan.loads.len(), 14);
    assert_eq!(plan.loads[13].start, StartPlan::After(12));
    let summary = run(loads);
    let search = &summary.thread_search["r"];
    assert!(search.stops_when_saturated);
    let steps = search.steps.len();
    assert!(
        (4..13).contains(&steps),
        "the search stops once saturated: {steps} steps"
    );
    // c-s's rule: the last three improvements average below zero.
    let last: f64 = search.steps[steps - 3..]
        .iter()
        .map(|step| step.improvement_pct.unwrap())
        .sum();
    assert!(last < 0.0, "{last}");
    // Only the steps that ran are reported, and the load after the search
    // ran too.
    assert_eq!(summary.loads.len(), steps + 1);
    assert_eq!(summary.loads["after"].ops["write"].count, 500);
}

#[test]
fn the_same_search_twice_gives_the_same_bytes() {
    let loads = r#"
[[load]]
name = "r"
command = "cassandra-stress read n=2000 cl=ONE -rate auto threads<=64"
"#;
    let one = serde_json::to_string(&run(loads)).unwrap();
    let two = serde_json::to_string(&run(loads)).unwrap();
    assert_eq!(one, two);
}

#[test]
fn with_neither_n_nor_duration_a_load_runs_until_its_rate_is_certain() {
    // c-s's err< mode: each interval's row rate is a measurement; the load
    // stops once the standard error of their mean is below 5% of it after
    // at least 5 intervals, or after 12 whatever it is.
    let loads = r#"
[[load]]
name = "w"
command = "cassandra-stress write cl=ONE err<0.05 n>5 n<12 -rate threads=8"
"#;
    let summary = run(loads);
    let write = &summary.loads["w"].ops["write"];
    assert!(write.count > 0);
    assert!(
        (4.0..13.0).contains(&write.seconds),
        "5 to 12 one-second intervals: {} s",
        write.seconds
    );
}

#[test]
fn a_search_in_err_mode_warns_and_each_step_runs_until_certain() {
    let loads = r#"
[[load]]
name = "r"
command = "cassandra-stress read cl=ONE err<0.05 n>3 n<6 -rate auto threads<=16"
"#;
    let plan = resolve(&scenario(loads), &RunOverrides::default()).unwrap();
    let mut lines = Vec::new();
    let outcome = sim::cluster::run(plan, &mut |progress| {
        lines.extend(progress.lines.iter().cloned())
    })
    .unwrap();
    assert!(lines
        .iter()
        .any(|line| line.starts_with("WARNING: uncertainty mode")));
    let summary = Summary::of(&outcome);
    let threads: Vec<u32> = summary.thread_search["r"]
        .steps
        .iter()
        .map(|step| step.threads)
        .collect();
    assert_eq!(threads, [4, 8, 16]);
}

#[test]
fn a_load_named_as_a_search_step_is_refused() {
    // The scenario parser refuses two loads of one name; a step's name
    // clashing with a load's is refused as the search is laid out.
    let clash = r#"
[[load]]
name = "r step 01 (4 threads)"
command = "cassandra-stress write n=100 -rate threads=4"

[[load]]
name = "r"
command = "cassandra-stress read n=100 -rate auto"
"#;
    let error = resolve(&scenario(clash), &RunOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("load[1].name") && error.contains("names load 0 too"),
        "{error}"
    );
}
