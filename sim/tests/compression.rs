//! `-schema compression=...`: a compressed table's reads read and
//! decompress whole chunks, so Cassandra 3.11's 64 KiB default chunk makes
//! a read of a 1 KiB row move 16 times the bytes of an uncompressed one,
//! and small chunks (`[table] chunk_length_in_kb = 4`) keep reads small.

use sim::plan::{resolve, RunOverrides};
use sim::scenario::parse;

const SCENARIO: &str = r#"
name = "compression"
seed = 2
duration = "3s"

[cluster]
preset = "scylla-2.2"
nodes = 1
instance = "i3.xlarge"
TABLE

[data]
partitions = 20e6
row_bytes = "1100B"
state = "compacted"
cache = "cold"

[[load]]
name = "read"
command = "cassandra-stress read no-warmup cl=ONE duration=3s SCHEMA -rate 'threads=16 limit=4000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop dist=uniform(1..20000000)"
"#;

fn scenario(schema: &str, table: &str) -> sim::scenario::Scenario {
    let text = SCENARIO.replace("SCHEMA", schema).replace("TABLE", table);
    parse("compression.toml", &text).unwrap_or_else(|e| panic!("{e}"))
}

/// Mean read latency (ms) and mean disk bytes read per read.
fn run(schema: &str, table: &str) -> (f64, f64) {
    let plan = resolve(&scenario(schema, table), &RunOverrides::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let reads = &outcome.ops[0];
    let mean = sim::metrics::LatencySummary::of(&reads.total).mean;
    let column = outcome
        .timeseries
        .columns
        .iter()
        .position(|c| c == "node0_disk_read_mb_per_s")
        .expect("a disk read column");
    let mb: f64 = outcome
        .timeseries
        .rows
        .iter()
        .map(|row| row[column].parse::<f64>().unwrap())
        .sum();
    (mean, mb * 1e6 / reads.count as f64)
}

#[test]
fn compressed_tables_read_whole_chunks() {
    let (plain_ms, plain_bytes) = run("", "");
    let (lz4_ms, lz4_bytes) = run(
        "-schema compression=LZ4Compressor",
        "[table]\nchunk_length_in_kb = 64",
    );
    let (small_ms, small_bytes) = run("-schema compression=LZ4Compressor", "");
    println!("uncompressed {plain_ms:.3} ms {plain_bytes:.0} B/read; 64 KiB chunks {lz4_ms:.3} ms {lz4_bytes:.0} B/read; 4 KiB chunks {small_ms:.3} ms {small_bytes:.0} B/read");
    // An index page and a 4 KiB data page per read, uncompressed or in 4
    // KiB chunks; an index page and a 64 KiB chunk with 64 KiB chunks.
    assert!(
        lz4_bytes > 5.0 * plain_bytes,
        "{lz4_bytes} vs {plain_bytes}"
    );
    assert!(
        (small_bytes / plain_bytes - 1.0).abs() < 0.1,
        "{small_bytes} vs {plain_bytes}"
    );
    assert!(lz4_ms > plain_ms, "{lz4_ms} vs {plain_ms}");
}

#[test]
fn chunk_options_need_a_compressed_table() {
    let error = resolve(
        &scenario("", "[table]\nchunk_length_in_kb = 16"),
        &RunOverrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("table.chunk_length_in_kb") && error.contains("uncompressed"),
        "{error}"
    );
    let error = resolve(
        &scenario(
            "-schema compression=LZ4Compressor",
            "[table]\nchunk_length_in_kb = 6",
        ),
        &RunOverrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("power of two"), "{error}");
}
