//! R2's shape from the mechanism (published-runs.md R2; issue: storage
//! engine): on the same unthrottled write load, Scylla 2.2's compaction
//! controller gives compaction the CPU its backlog needs, so throughput and
//! the number of concurrent compactions are steadier than in 2.1 (one FIFO
//! task queue, compaction competing task for task with writes), and the
//! average write throughput is higher. Nothing here is tuned for this test:
//! it runs the bundled `scenarios/controller-2.*.toml` (10 simulated
//! minutes each) and compares their time series.
//!
//! The same runs show an overloaded node held to what flush and compaction
//! absorb: 200 unthrottled threads offer more than the node can take,
//! dirty memory stays bounded by the throttle, and throughput follows
//! compaction's capacity, dipping while a large size tier is rewritten and
//! recovering after, each minute within 15% of the last five minutes'
//! mean.

use std::path::Path;

use sim::plan::{resolve, RunOverrides};

struct Shape {
    mean_ops_per_s: f64,
    throughput_cv: f64,
    compactions_cv: f64,
    /// Mean write throughput of each of the last five minutes.
    last_minutes: Vec<f64>,
    /// Largest memtable memory seen after the first 30 s.
    peak_memtable_bytes: f64,
}

fn coefficient_of_variation(values: &[f64]) -> f64 {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
    variance.sqrt() / mean
}

fn run(preset: &str) -> Shape {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../scenarios/controller-{preset}.toml"));
    let scenario = sim::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let overrides = RunOverrides::default();
    let plan = resolve(&scenario, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let series = &outcome.timeseries;
    let column = |name: &str| series.column(name).unwrap();
    let (ops, compactions) = (column("write_ops_per_s"), column("node0_compactions"));
    // Skip the first 30 s: compaction has not started in earnest yet.
    let rows = &series.rows[30..series.rows.len() - 1];
    let values =
        |index: usize| -> Vec<f64> { rows.iter().map(|row| row[index].parse().unwrap()).collect() };
    let throughput = values(ops);
    let last_minutes = throughput[throughput.len() - 300..]
        .chunks(60)
        .map(|minute| minute.iter().sum::<f64>() / minute.len() as f64)
        .collect();
    Shape {
        mean_ops_per_s: throughput.iter().sum::<f64>() / throughput.len() as f64,
        throughput_cv: coefficient_of_variation(&throughput),
        compactions_cv: coefficient_of_variation(&values(compactions)),
        last_minutes,
        peak_memtable_bytes: values(column("node0_memtable_bytes"))
            .into_iter()
            .fold(0.0, f64::max),
    }
}

#[test]
fn the_2_2_controller_is_steadier_and_faster_than_2_1() {
    let (old, new) = (run("2.1"), run("2.2"));
    println!(
        "2.1: {:.0} ops/s, throughput cv {:.3}, compactions cv {:.3}; 2.2: {:.0} ops/s, throughput cv {:.3}, compactions cv {:.3}",
        old.mean_ops_per_s, old.throughput_cv, old.compactions_cv, new.mean_ops_per_s, new.throughput_cv, new.compactions_cv
    );
    assert!(new.mean_ops_per_s > old.mean_ops_per_s, "2.2 writes faster");
    assert!(
        new.throughput_cv < old.throughput_cv,
        "2.2's throughput is steadier"
    );
    assert!(
        new.compactions_cv < old.compactions_cv,
        "2.2's concurrent compactions are steadier"
    );
}

#[test]
fn an_overloaded_node_is_held_to_what_flush_and_compaction_absorb() {
    let shape = run("2.2");
    println!(
        "last five minutes: {:?} ops/s; peak memtable {:.0} MiB",
        shape.last_minutes,
        shape.peak_memtable_bytes / 1048576.0
    );
    let mean = shape.last_minutes.iter().sum::<f64>() / shape.last_minutes.len() as f64;
    for minute in &shape.last_minutes {
        assert!(
            (minute / mean - 1.0).abs() < 0.15,
            "minutes against their mean: {:?}",
            shape.last_minutes
        );
    }
    // The scenario gives the node 4 GiB; memtables may hold at most the
    // dirty limit (45%) of it.
    assert!(shape.peak_memtable_bytes < 0.45 * 4.0 * 1073741824.0);
}
