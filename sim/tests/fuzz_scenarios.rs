//! Scenario text as an adversary writes it (issue 48): generated scenarios
//! whose numbers reach past every documented bound (node counts, threads,
//! rates, sizes, durations, fault factors and times, overlapping faults)
//! are parsed, resolved and, where they resolve to a run small enough for
//! a test, simulated for a short while. Nothing may panic: a scenario is
//! refused with a one-line error naming its file, or it runs, or the
//! simulator stops it with an error naming the mechanism.
//!
//! Bounded for CI (`FUZZ_CASES`, default 512 cases, about 2 s; about a
//! quarter of them resolve and run); failures proptest finds are kept in
//! `fuzz_scenarios.proptest-regressions` beside this file and replayed
//! first on every run, and the inputs that once panicked are [`CORPUS`].
//! A longer search (3,000 cases: 8 s):
//! `FUZZ_CASES=20000 cargo test --release -p twin-sim --test fuzz_scenarios`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use proptest::prelude::*;

/// Scenario text that once reached the simulator's core and panicked:
/// each must now be refused by name or run (issue 48).
const CORPUS: &[&str] = &[
    // A slow disk of 1e300: "event scheduled in the past".
    "name = \"c\"\nduration = \"2s\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"l\"\ncommand = \"cassandra-stress write no-warmup cl=QUORUM duration=2s -rate threads=10 -schema 'replication(factor=3)'\"\n[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 1e300\n",
    // Two overlapping slow disks, each of 1e8.
    "name = \"c\"\nduration = \"2s\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"l\"\ncommand = \"cassandra-stress write no-warmup cl=QUORUM duration=2s -rate threads=10 -schema 'replication(factor=3)'\"\n[[fault]]\nat = \"500ms\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 1e8\n[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 1e8\n",
    // Two overlapping slow disks at the bounds, and two NICs at the floor.
    "name = \"c\"\nduration = \"2s\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"l\"\ncommand = \"cassandra-stress write no-warmup cl=QUORUM duration=2s -rate threads=10 -schema 'replication(factor=3)'\"\n[[fault]]\nat = \"500ms\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 1e4\nthroughput_factor = 1e-4\n[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 1e4\nthroughput_factor = 1e-4\n[[fault]]\nat = \"500ms\"\nnodes = [2]\nkind = \"nic-degrade\"\nbandwidth_factor = 1e-4\n[[fault]]\nat = \"1s\"\nnodes = [2]\nkind = \"nic-degrade\"\nbandwidth_factor = 1e-4\n",
    // A billion client threads: 41 s and 4.7 GB before it panicked.
    "name = \"c\"\nduration = \"2s\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"l\"\ncommand = \"cassandra-stress write no-warmup cl=ONE duration=2s -rate threads=1000000000\"\n",
];

/// A number as a user might type it: ordinary, at a bound, or absurd.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        30 => (1u64..20).prop_map(|n| n.to_string()),
        30 => (1u64..5000).prop_map(|n| n.to_string()),
        1 => Just("0".to_string()),
        1 => Just("1000000000".to_string()),
        1 => Just("1e300".to_string()),
        1 => Just("-5".to_string()),
        1 => Just("100001".to_string()),
    ]
}

/// A factor: a fraction, a bound, or out of range.
fn factor() -> impl Strategy<Value = String> {
    prop_oneof![
        40 => (1u32..100).prop_map(|n| format!("{}", f64::from(n) / 100.0)),
        10 => (1u32..20).prop_map(|n| n.to_string()),
        1 => Just("0.0001".to_string()),
        1 => Just("1e-4".to_string()),
        1 => Just("10000".to_string()),
        1 => Just("1e300".to_string()),
        1 => Just("1e-300".to_string()),
        1 => Just("0".to_string()),
        1 => Just("nan".to_string()),
        1 => Just("-1".to_string()),
    ]
}

/// A duration: short, long, zero or absurd.
fn duration() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => (1u32..4).prop_map(|s| format!("{s}s")),
        20 => (1u32..3000).prop_map(|ms| format!("{ms}ms")),
        1 => Just("0s".to_string()),
        1 => Just("100000h".to_string()),
    ]
}

/// A cassandra-stress command line.
fn command() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just("write"),
            Just("read"),
            Just("mixed ratio(write=1,read=1)")
        ],
        prop_oneof![
            Just("ONE"),
            Just("QUORUM"),
            Just("ALL"),
            Just("TWO")
        ],
        number(),
        number(),
        prop_oneof![
            Just("limit"),
            Just("throttle"),
            Just("fixed")
        ],
        number(),
        number(),
        prop_oneof![30 => (1u32..4).prop_map(|s| format!("{s}s")), 1 => Just("0s".to_string()), 1 => Just("1000000h".to_string())],
        prop_oneof![12 => Just(3u32), 3 => Just(1u32), 1 => Just(0u32), 1 => Just(9u32)],
    )
        .prop_map(|(op, cl, threads, rate, pacing, size, keys, length, rf)| {
            format!(
                "cassandra-stress {op} no-warmup cl={cl} duration={length} -rate 'threads={threads} {pacing}={rate}/s' -col 'size=FIXED({size}) n=FIXED(1)' -pop seq=1..{keys} -schema 'replication(factor={rf})'"
            )
        })
}

/// A `[[fault]]` of any kind, at any time, with any factors.
fn fault() -> impl Strategy<Value = String> {
    (
        duration(),
        duration(),
        0u32..5,
        prop_oneof![
            Just("slow-disk"),
            Just("nic-degrade"),
            Just("crash"),
            Just("partition"),
            Just("drop"),
            Just("disk-fail"),
            Just("flap")
        ],
        factor(),
        factor(),
    )
        .prop_map(|(at, lasts, node, kind, a, b)| {
            let keys = match kind {
                "slow-disk" => format!("latency_factor = {a}\nthroughput_factor = {b}\n"),
                "nic-degrade" => format!("bandwidth_factor = {a}\n"),
                "drop" => format!("probability = {a}\n"),
                "flap" => "on = \"1s\"\noff = \"1s\"\n".to_string(),
                _ => String::new(),
            };
            format!(
                "[[fault]]\nat = \"{at}\"\nfor = \"{lasts}\"\nnodes = [{node}]\nkind = \"{kind}\"\n{keys}"
            )
        })
}

/// A whole scenario.
fn scenario() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just(("scylla-2.2", "i3.large")),
            Just(("scylla-3.0", "i3.large")),
            Just(("cassandra-3.11", "i3.4xlarge"))
        ],
        prop_oneof![24 => 3u32..6, 4 => 1u32..3, 1 => Just(0u32)],
        prop_oneof![8 => (1u32..4).prop_map(|n| n.to_string()), 1 => number()],
        duration(),
        command(),
        proptest::collection::vec(fault(), 0..4),
    )
        .prop_map(|((preset, instance), nodes, processes, length, command, faults)| {
            format!(
                "name = \"fuzz\"\nduration = \"{length}\"\n[cluster]\npreset = \"{preset}\"\nnodes = {nodes}\ninstance = \"{instance}\"\n[[load]]\nname = \"l\"\nprocesses = {processes}\ncommand = \"{command}\"\n{}",
                faults.concat()
            )
        })
}

/// How many scenarios one run tries.
fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(512)
}

/// Parses, resolves and runs `text` for at most a second: `Ok(Err(..))`
/// when refused or stopped with an error, `Err` with the panic's message.
fn try_scenario(text: &str) -> Result<Result<(), String>, String> {
    catch_unwind(AssertUnwindSafe(|| {
        let scenario =
            sim::scenario::parse("fuzz.toml", text).map_err(|error| error.to_string())?;
        let overrides = sim::plan::RunOverrides {
            seed: Some(1),
            duration: Some(units::SimDuration::from_secs(1)),
        };
        let plan = sim::plan::resolve(&scenario, &overrides).map_err(|error| error.to_string())?;
        sim::cluster::run(plan, &mut |_| {})
            .map(|_| ())
            .map_err(|error| error.to_string())
    }))
    .map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn the_inputs_that_once_panicked_are_refused_or_run() {
    for text in CORPUS {
        match try_scenario(text) {
            Err(panic) => panic!("panicked: {panic}\n--- scenario ---\n{text}"),
            Ok(Err(error)) => assert!(!error.contains('\n'), "{error}"),
            Ok(Ok(())) => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_scenario_text_panics(text in scenario()) {
        let verbose = std::env::var_os("FUZZ_VERBOSE").is_some();
        match try_scenario(&text) {
            Err(panic) => {
                prop_assert!(false, "panicked: {panic}\n--- scenario ---\n{text}");
            }
            Ok(Err(error)) => {
                if verbose {
                    eprintln!("refused: {error}");
                }
                prop_assert!(!error.contains('\n'), "a multi-line error: {error}");
            }
            Ok(Ok(())) => {
                if verbose {
                    eprintln!("ran");
                }
            }
        }
    }
}
