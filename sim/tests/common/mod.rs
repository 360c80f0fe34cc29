//! Scenario fixtures shared by integration tests.

// Each test crate includes this module and uses some of it.
#![allow(dead_code)]

/// Three Scylla nodes of 4 shards (i3.2xlarge), RF 3, a preloaded
/// 20M-key table of 1 KiB rows read and written at QUORUM, 50/50, over a
/// uniform key range by 4 c-s processes of 40 threads, each limited to
/// `limit_per_process` ops/s for `seconds`. `cluster_extra` lands in
/// `[cluster]` (e.g. `simulated_shards_per_node = 1`) and
/// `overrides_extra` in `[cluster.overrides]` (e.g. `memory = "2GiB"`).
pub fn quorum_mix(
    name: &str,
    seconds: u32,
    limit_per_process: u32,
    cluster_extra: &str,
    overrides_extra: &str,
) -> String {
    format!(
        r#"
name = "{name}"
seed = 11
duration = "{seconds}s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"
{cluster_extra}

[cluster.overrides]
shards = 4
{overrides_extra}

[data]
partitions = 20e6
row_bytes = "1100B"
replication_factor = 3

[[load]]
name = "mixed"
processes = 4
command = "cassandra-stress mixed ratio(write=1,read=1) no-warmup cl=QUORUM duration={seconds}s -rate 'threads=40 limit={limit_per_process}/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop dist=uniform(1..20000000)"
"#
    )
}

/// Scenario `text`, parsed as file `name` and resolved (with `seed` in
/// place of the scenario's own, if given) into the plan to run. Panics
/// with the scenario error (file, field, reason) if it does not resolve.
pub fn plan(name: &str, text: &str, seed: Option<u64>) -> sim::cluster::RunPlan {
    let scenario = sim::scenario::parse(name, text).unwrap_or_else(|e| panic!("{e}"));
    let overrides = sim::plan::RunOverrides {
        seed,
        ..sim::plan::RunOverrides::default()
    };
    sim::plan::resolve(&scenario, &overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// A bundled scenario of `scenarios/`, by file name.
pub fn bundled(name: &str) -> sim::scenario::Scenario {
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{name}"));
    sim::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `seeds` of `scenario` as `twin explore` does, after `adjust` has
/// its way with each plan (tests break things on purpose), on two threads;
/// the reports in seed order.
pub fn explore_seeds(
    scenario: &sim::scenario::Scenario,
    seeds: &[u64],
    adjust: &(dyn Fn(&mut sim::cluster::RunPlan) + Sync),
) -> Vec<sim::explore::SeedReport> {
    let runner = sim::sweep::Runner::new(Some(2)).expect("two threads start");
    runner.run_all(
        seeds,
        |&seed| sim::explore::run_seed(scenario, seed, adjust).unwrap_or_else(|e| panic!("{e}")),
        |_, _| {},
    )
}
