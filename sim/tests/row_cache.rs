//! Scylla's row cache, cold at the start, warms as reads miss: with a
//! narrow gaussian (stdev 3,000 keys, like R6's "small spread": a hot set
//! that fits in memory many times over), the hit rate climbs from a third
//! to one within seconds and the drive stops being read; with keys spread
//! uniformly over a table far larger than memory, the hit rate stays near
//! the cached fraction of the keys. Started warm (`cache = "warm"`), the
//! cache is at its steady state from the first second.

mod common;

const SCENARIO: &str = r#"
name = "row-cache"
seed = 6
duration = "6s"

[cluster]
preset = "scylla-2.2"
nodes = 1
instance = "i3.large"

[data]
partitions = 300e6
row_bytes = "1100B"
state = "compacted"
cache = "cold"

[[load]]
name = "read"
command = "cassandra-stress read no-warmup cl=ONE duration=6s -rate 'threads=32 limit=8000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop POP"
"#;

/// Per interval: (cache hit rate, disk read MB/s).
fn run(population: &str) -> Vec<(f64, f64)> {
    run_with_cache(population, "cold")
}

fn run_with_cache(population: &str, cache: &str) -> Vec<(f64, f64)> {
    let text = SCENARIO
        .replace("POP", population)
        .replace("cache = \"cold\"", &format!("cache = \"{cache}\""));
    let plan = common::plan("row-cache.toml", &text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let series = &outcome.timeseries;
    let column = |name: &str| series.column(name).unwrap();
    let (hits, disk) = (
        column("node0_cache_hit_rate"),
        column("node0_disk_read_mb_per_s"),
    );
    series
        .rows
        .iter()
        .filter(|row| !row[hits].is_empty())
        .map(|row| (row[hits].parse().unwrap(), row[disk].parse().unwrap()))
        .collect()
}

#[test]
fn a_hot_set_warms_the_cache_and_the_drive_goes_quiet() {
    let intervals = run("'dist=gauss(1..300000000,150000000,3000)'");
    println!("{intervals:?}");
    let (first, last) = (intervals[0], intervals[intervals.len() - 1]);
    assert!(first.0 < 0.6, "cold at the start: {first:?}");
    assert!(last.0 > 0.99, "warm at the end: {last:?}");
    assert!(
        last.1 < 0.01 * first.1,
        "the drive goes quiet: {first:?} -> {last:?}"
    );
    for pair in intervals.windows(2) {
        assert!(
            pair[1].0 >= pair[0].0,
            "warming never goes back: {intervals:?}"
        );
    }
}

#[test]
fn keys_spread_over_a_large_table_mostly_miss() {
    let intervals = run("dist=uniform(1..300000000)");
    println!("{intervals:?}");
    // i3.large gives its shard ~13 GiB: ~6M cached rows of ~2.2 KB against
    // 300M keys, so at most ~2% can hit, and six seconds of 8,000 reads/s
    // cache far fewer.
    assert!(
        intervals.iter().all(|(hit_rate, _)| *hit_rate < 0.03),
        "{intervals:?}"
    );
}

#[test]
fn a_warm_start_is_at_the_steady_state_from_the_first_interval() {
    let population = "'dist=gauss(1..300000000,150000000,3000)'";
    let cold = run(population);
    let warm = run_with_cache(population, "warm");
    println!("cold {cold:?}\nwarm {warm:?}");
    let steady = cold[cold.len() - 1].0;
    assert!(steady > 0.99, "the cold run warms: {cold:?}");
    for (hit_rate, _) in &warm {
        assert!(
            (hit_rate - steady).abs() < 0.005,
            "warm from the start, at the cold run's end state: {warm:?}"
        );
    }
    assert!(
        warm[0].1 < 0.01 * cold[0].1,
        "the drive is quiet from the start: {warm:?} vs {cold:?}"
    );
}
