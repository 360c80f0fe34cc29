//! Cassandra reads SSTables through the OS page cache, which holds what
//! RAM the 48 GiB heap and the off-heap structures leave: on an i3.2xlarge
//! (61 GiB) about 10 GiB. Reads of a hot set that fits warm it, and the
//! drive stops serving their data pages (each lookup still reads its index
//! page from disk: Cassandra's key cache is not modelled); reads spread over
//! a table far larger than the cache keep reading the drive.

mod common;

const SCENARIO: &str = r#"
name = "page-cache"
seed = 8
duration = "6s"

[cluster]
preset = "cassandra-3.11"
nodes = 1
instance = "i3.2xlarge"

[data]
partitions = 200e6
row_bytes = "310B"
state = "compacted"
cache = "cold"

[[load]]
name = "read"
command = "cassandra-stress read no-warmup cl=ONE duration=6s -rate 'threads=32 limit=6000/s' -pop POP"
"#;

/// Disk read MB/s per interval.
fn disk_reads(population: &str) -> Vec<f64> {
    let text = SCENARIO.replace("POP", population);
    let plan = common::plan("page-cache.toml", &text, None);
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let series = &outcome.timeseries;
    let disk = series
        .columns
        .iter()
        .position(|c| c == "node0_disk_read_mb_per_s")
        .unwrap();
    series
        .rows
        .iter()
        .map(|row| row[disk].parse().unwrap())
        .collect()
}

#[test]
fn a_hot_set_moves_into_the_page_cache_and_a_spread_one_does_not() {
    let hot = disk_reads("'dist=gauss(1..200000000,100000000,3000)'");
    let spread = disk_reads("dist=uniform(1..200000000)");
    println!("hot {hot:?}\nspread {spread:?}");
    let (first, last) = (hot[0], hot[hot.len() - 1]);
    // Index page plus data page per lookup when cold; the index page alone
    // once the data pages are cached.
    assert!(last < 0.7 * first, "hot: {hot:?}");
    let (first, last) = (spread[0], spread[spread.len() - 1]);
    assert!(last > 0.9 * first, "spread: {spread:?}");
}
