//! `cassandra-stress user profile=FILE ops(...)` loads: the profile is read
//! relative to the scenario file, its operations become the load's op mix,
//! its rows the values written, its keyspace and table the cluster's; what
//! the twin cannot run yet is refused in one line naming the file and the
//! construct.

use std::path::{Path, PathBuf};

use sim::load::{ColumnPlan, OpKind, OpMix};
use sim::plan::{resolve, RunOverrides};
use sim::report::Summary;

const KV: &str = include_str!("../../scenarios/profiles/size_based_load_intel.yaml");
const WIDE: &str = include_str!("../../scenarios/profiles/wide-partition.yaml");

/// A directory of its own for one test's files.
fn dir(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("twin-user-profiles-{}-{test}", std::process::id()));
    std::fs::create_dir_all(dir.join("profiles")).unwrap();
    dir
}

fn scenario(dir: &Path, profile_text: &str, command: &str, data: &str) -> sim::scenario::Scenario {
    std::fs::write(dir.join("profiles/p.yaml"), profile_text).unwrap();
    let text = format!(
        r#"
name = "user"
seed = 3
duration = "2s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"

[cluster.overrides]
shards = 2

{data}

[[load]]
name = "user"
processes = 2
command = "{command}"
"#
    );
    let file = dir.join("scenario.toml");
    sim::scenario::parse(&file.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"))
}

fn resolved(
    dir: &Path,
    profile_text: &str,
    command: &str,
) -> Result<sim::cluster::RunPlan, String> {
    resolve(
        &scenario(dir, profile_text, command, ""),
        &RunOverrides::default(),
    )
    .map_err(|e| e.to_string())
}

#[test]
fn the_shipped_r6_scenarios_resolve_and_run_their_profile() {
    for path in [
        "../scenarios/validation/r6-scylla-write-5k.toml",
        "../scenarios/validation/r6-scylla-read-5k.toml",
    ] {
        let scenario = sim::scenario::load(Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
        let plan = resolve(&scenario, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.cluster.replication_factor, 3, "the profile's keyspace");
        let load = &plan.loads[0];
        match &load.columns {
            ColumnPlan::Profile(rows) => {
                assert_eq!(rows.profile.table.name, "kv");
                assert_eq!(rows.profile.mean_row_bytes(), 5120.0);
            }
            other => panic!("{path}: {other:?}"),
        }
        let expected = if path.contains("write") {
            OpKind::Write
        } else {
            OpKind::Read
        };
        assert_eq!(load.operation, OpMix::Only(expected), "{path}");
        assert!(
            load.describe().contains("table kv rows of 5120 B"),
            "{}",
            load.describe()
        );
    }
}

#[test]
fn a_profile_write_stores_its_rows_bytes() {
    let dir = dir("bytes");
    let command = "user profile=profiles/p.yaml ops(insert=1) no-warmup cl=ONE n=2000 -pop seq=1..2000 -rate threads=10 limit=1000/s";
    let small = resolved(&dir, &KV.replace("fixed(1024)", "fixed(100)"), command).unwrap();
    let large = resolved(&dir, &KV.replace("fixed(1024)", "fixed(10000)"), command).unwrap();
    let written = |plan: sim::cluster::RunPlan| {
        let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
        assert_eq!(outcome.ops[0].count, 4000, "2 processes x n=2000");
        let column = outcome
            .timeseries
            .columns
            .iter()
            .position(|c| c == "node0_memtable_bytes")
            .unwrap();
        outcome.timeseries.rows.last().unwrap()[column]
            .parse::<f64>()
            .unwrap()
    };
    let (small, large) = (written(small), written(large));
    // 4000 rows at RF 3 on 3 nodes: every node holds every row; the
    // memtable grows by the value plus a fixed per-row footprint.
    let per_row = (large - small) / 4000.0;
    assert!(
        (per_row - 9900.0).abs() < 100.0,
        "memtable bytes per row apart: {per_row}"
    );
}

#[test]
fn ops_weights_give_the_mix_and_queries_that_write_count_as_writes() {
    let dir = dir("mix");
    let profile = KV.replace(
        "queries:\n",
        "queries:\n  put:\n    cql: UPDATE kv SET value = ? WHERE key = ?\n",
    );
    let plan = resolved(&dir, &profile, "user profile=profiles/p.yaml ops(insert=1,getdata=6,put=1) cl=ONE duration=2s -rate threads=10").unwrap();
    match &plan.loads[0].operation {
        OpMix::Mixed { write_fraction, .. } => assert_eq!(*write_fraction, 0.25),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_profiles_table_sets_compaction_and_compression() {
    let dir = dir("table");
    let profile = KV.replace(
        "  );\n",
        "  ) WITH compaction = {'class': 'LeveledCompactionStrategy'} AND compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 16};\n",
    );
    let plan = resolved(
        &dir,
        &profile,
        "user profile=profiles/p.yaml ops(getdata=1) cl=ONE duration=2s -rate threads=10",
    )
    .unwrap();
    assert!(
        format!("{:?}", plan.cluster.compaction).contains("Leveled"),
        "{:?}",
        plan.cluster.compaction
    );
    assert_eq!(plan.cluster.compression_chunk_bytes, Some(16 * 1024));
}

#[test]
fn what_cannot_run_is_refused_naming_file_and_construct() {
    let dir = dir("errors");
    let run = "cl=ONE duration=2s -rate threads=10";
    let cases: Vec<(String, String, &str)> = vec![
        (
            KV.into(),
            format!("user profile=profiles/missing.yaml ops(insert=1) {run}"),
            "missing.yaml` cannot be read",
        ),
        (
            KV.into(),
            format!("user profile=profiles/p.yaml ops(insert=1,getdat=1) {run}"),
            "`getdat`, which is not an operation of",
        ),
        (
            KV.into(),
            format!("user profile=profiles/p.yaml ops(insert=1,getdat=1) {run}"),
            "accepted are insert, getdata",
        ),
        (
            KV.replace("partitions: fixed(1)", "partitions: uniform(1..100000)"),
            format!("user profile=profiles/p.yaml ops(insert=1) {run}"),
            "a batch of the twin holds at most 65535 partitions",
        ),
        (
            KV.replace("'replication_factor': 3", "'replication_factor': 5"),
            format!("user profile=profiles/p.yaml ops(insert=1) {run}"),
            "replication factor 5",
        ),
        (
            KV.replace("size: fixed(1024)", "size: fixed(x)"),
            format!("user profile=profiles/p.yaml ops(insert=1) {run}"),
            "`columnspec[1].size`",
        ),
        (
            KV.replace(
                "  );\n",
                "  ) WITH compaction = {'class': 'DateTieredCompactionStrategy'};\n",
            ),
            format!("user profile=profiles/p.yaml ops(insert=1) {run}"),
            "`DateTieredCompactionStrategy` is not simulated by the twin: accepted are SizeTieredCompactionStrategy, LeveledCompactionStrategy and TimeWindowCompactionStrategy",
        ),
    ];
    for (profile, command, needle) in cases {
        let error = resolved(&dir, &profile, &command).unwrap_err();
        assert!(error.contains(needle), "{command}: {error}");
        assert!(
            error.contains("scenario.toml"),
            "names the scenario: {error}"
        );
        assert!(!error.contains('\n'), "{error}");
    }
    // What the profile defines but the load does not use runs; what it
    // uses is refused naming the profile key.
    let extras = format!(
        "{KV}  cas:\n    cql: UPDATE kv SET value = ? WHERE key = ? IF EXISTS\n    fields: samerow\ntoken_range_queries:\n  all:\n    columns: '*'\n    page_size: 5000\nextra_definitions:\n  - CREATE INDEX kv_value ON kv (value)\n"
    );
    let plan = resolved(
        &dir,
        &extras,
        &format!("user profile=profiles/p.yaml ops(getdata=1) {run}"),
    );
    assert!(plan.is_ok(), "reads use none of them: {plan:?}");
    for (ops, needle) in [
        (
            "getdata=1,all=1",
            "token_range_queries.all: token range scans",
        ),
        (
            "getdata=1,cas=1",
            "queries.cas.cql: IF ...: a lightweight transaction",
        ),
        ("insert=1", "extra_definitions[0]: a secondary index"),
    ] {
        let error = resolved(
            &dir,
            &extras,
            &format!("user profile=profiles/p.yaml ops({ops}) {run}"),
        )
        .unwrap_err();
        assert!(error.contains(needle), "{ops}: {error}");
        assert!(error.contains("p.yaml"), "{error}");
    }
    // A profile whose keyspace's factor differs from [data]'s.
    let conflict = scenario(
        &dir,
        KV,
        &format!("user profile=profiles/p.yaml ops(getdata=1) {run}"),
        "[data]\npartitions = 1e6\nrow_bytes = \"1100B\"\nreplication_factor = 2\n",
    );
    let error = resolve(&conflict, &RunOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("differs from the keyspace's 2"), "{error}");
}

#[test]
fn a_user_load_is_deterministic() {
    let dir = dir("determinism");
    let command = "user profile=profiles/p.yaml ops(insert=1,getdata=1) cl=QUORUM duration=2s -pop dist=uniform(1..5000) -rate threads=10 limit=2000/s";
    let run = || {
        let plan = resolved(
            &dir,
            &KV.replace("fixed(1024)", "uniform(100..2000)"),
            command,
        )
        .unwrap();
        let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
        (
            outcome.timeseries.to_csv(),
            outcome.ops.iter().map(|op| op.count).collect::<Vec<_>>(),
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn every_r6_command_as_published_runs_with_the_key_value_profile() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/reference/published-runs.md"
    );
    let Ok(reference) = std::fs::read_to_string(path) else {
        println!("{path} not found; R6's published commands not run");
        return;
    };
    let dir = dir("r6");
    // The commands name the profile bare: it sits beside the scenario.
    std::fs::write(dir.join("size_based_load_intel.yaml"), KV).unwrap();
    let commands: Vec<&str> = reference
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|piece| piece.starts_with("cassandra-stress user "))
        .collect();
    assert_eq!(commands.len(), 7, "R6's seven user-profile commands");
    for command in commands {
        let escaped = command.replace('\\', "\\\\").replace('"', "\\\"");
        let text = format!(
            r#"
name = "r6"
seed = 1
duration = "1s"

[cluster]
preset = "scylla-2.1"
nodes = 3
instance = "optane-r6"
simulated_shards_per_node = 1

[data]
partitions = 600e6
row_bytes = "1100B"
replication_factor = 3

[[load]]
name = "r6"
command = "{escaped}"
"#
        );
        let file = dir.join("r6.toml");
        let scenario = sim::scenario::parse(&file.display().to_string(), &text)
            .unwrap_or_else(|e| panic!("{command}: {e}"));
        let plan = resolve(&scenario, &RunOverrides::default())
            .unwrap_or_else(|e| panic!("{command}: {e}"));
        let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
        let done: u64 = outcome.ops.iter().map(|op| op.count).sum();
        let failed: u64 = outcome.ops.iter().map(|op| op.errors).sum();
        assert!(done > 1000, "{command}: {done} operations in 1 s");
        assert_eq!(failed, 0, "{command}");
    }
}

/// A table of 1,000-row partitions (a 4-byte clustering key and a 100-byte
/// blob a row), read by key alone, by key and row, or the first 10 rows.
const THOUSAND_ROWS: &str = r#"
keyspace: wide
keyspace_definition: |
  CREATE KEYSPACE wide WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: t
table_definition: |
  CREATE TABLE t (key bigint, c int, value blob, PRIMARY KEY (key, c));
columnspec:
  - name: c
    cluster: fixed(1000)
  - name: value
    size: fixed(100)
insert:
  partitions: fixed(1)
  select: fixed(1)/100
queries:
  partition:
    cql: SELECT * FROM t WHERE key = ?
  row:
    cql: SELECT * FROM t WHERE key = ? AND c = ?
  first10:
    cql: SELECT * FROM t WHERE key = ? LIMIT 10
  since:
    cql: SELECT * FROM t WHERE key = ? AND c >= ?
"#;

/// Mean bytes of query I/O per read, from `summary.json`'s `time_spent`,
/// and mean bytes the nodes sent per read (the answers, on the NICs).
fn query_bytes_per_read(dir: &Path, query: &str) -> (f64, f64) {
    let command = format!("user profile=profiles/p.yaml ops({query}=1) cl=ONE duration=2s -pop dist=uniform(1..1000000) -rate threads=8 limit=500/s");
    let plan = resolve(
        &scenario(
            dir,
            THOUSAND_ROWS,
            &command,
            "[data]\npartitions = 1e6\nrow_bytes = \"104000B\"\nreplication_factor = 1\ncache = \"cold\"\n",
        ),
        &RunOverrides::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let summary = Summary::of(&outcome);
    let json = serde_json::to_value(&summary).unwrap();
    let query_io = &json["time_spent"]["io"]["query"];
    let bytes =
        query_io["requests"].as_f64().unwrap() * query_io["bytes_per_request"].as_f64().unwrap();
    let sent_mb: f64 = outcome
        .timeseries
        .columns
        .iter()
        .enumerate()
        .filter(|(_, name)| name.ends_with("_nic_tx_mb_per_s"))
        .flat_map(|(index, _)| {
            outcome
                .timeseries
                .rows
                .iter()
                .map(move |row| row[index].parse::<f64>().unwrap())
        })
        .sum();
    let reads = outcome.ops[0].count as f64;
    (bytes / reads, sent_mb * 1e6 / reads)
}

#[test]
fn reading_one_row_of_a_thousand_row_partition_reads_less_than_all_of_it() {
    let dir = dir("thousand");
    let (whole, whole_sent) = query_bytes_per_read(&dir, "partition");
    let (row, row_sent) = query_bytes_per_read(&dir, "row");
    let (first10, first10_sent) = query_bytes_per_read(&dir, "first10");
    let (since, _) = query_bytes_per_read(&dir, "since");
    println!(
        "bytes a read: whole {whole:.0}, row {row:.0}, first 10 {first10:.0}, since {since:.0}; sent: whole {whole_sent:.0}, row {row_sent:.0}, first 10 {first10_sent:.0}"
    );
    // The whole partition: its 104 KB and an index page; one row or ten:
    // an index page and a data page.
    assert!(whole > 100_000.0, "whole partition: {whole} B a read");
    assert!(row < 10_000.0, "one row: {row} B a read");
    assert!(first10 < 10_000.0, "LIMIT 10: {first10} B a read");
    // The answers: the partition's 104 KB, one row's 104 B, ten rows'.
    assert!(
        whole_sent > 100_000.0,
        "whole partition sent: {whole_sent} B a read"
    );
    assert!(row_sent < 1_000.0, "one row sent: {row_sent} B a read");
    assert!(
        first10_sent > row_sent + 800.0 && first10_sent < 3_000.0,
        "ten rows sent: {first10_sent} B a read"
    );
    // `c >= ?` from a row drawn among 1,000: half the partition on average.
    assert!(
        since > 0.35 * whole && since < 0.65 * whole,
        "since: {since} against {whole}"
    );
}

#[test]
fn a_wide_insert_writes_its_select_share_of_the_partition() {
    let dir = dir("wide-insert");
    // select fixed(1)/100 of 1,000 rows: 10 rows of 104 bytes an insert.
    let command = "user profile=profiles/p.yaml ops(insert=1) no-warmup cl=ONE n=1000 -pop seq=1..1000 -rate threads=10 limit=1000/s";
    let plan = resolved(&dir, THOUSAND_ROWS, command).unwrap();
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    let summary = serde_json::to_value(Summary::of(&outcome)).unwrap();
    let written = summary["ops"]["write"]["count"].as_f64().unwrap();
    assert_eq!(written, 2000.0, "2 processes x n=1000");
    // c-s's row count: 10 rows an insert, one partition.
    assert_eq!(summary["ops"]["write"]["rows"], 20_000);
    assert!(summary["ops"]["write"].get("partitions").is_none());
    // RF 1 over 3 nodes: the cluster's memtables hold every insert's 10
    // rows: 1,040 bytes of values and 10 rows' footprint each.
    let total: f64 = outcome
        .timeseries
        .columns
        .iter()
        .enumerate()
        .filter(|(_, name)| name.ends_with("_memtable_bytes"))
        .map(|(index, _)| {
            outcome.timeseries.rows.last().unwrap()[index]
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    let per_insert = total / written;
    assert!(
        (per_insert - (8.0 + 1040.0 + 10.0 * 1000.0)).abs() < 50.0,
        "memtable bytes an insert: {per_insert}"
    );
}

#[test]
fn a_file_uri_profile_is_read_as_its_path() {
    let dir = dir("uri");
    std::fs::write(dir.join("profiles/p.yaml"), KV).unwrap();
    let absolute = dir.join("profiles/p.yaml");
    let command = format!(
        "user profile=file://{} ops(getdata=1) cl=ONE duration=2s -rate threads=4 -graph file=run.html title=run",
        absolute.display()
    );
    let plan = resolved(&dir, KV, &command).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        plan.notes.iter().any(|note| note.contains("-graph")),
        "{:?}",
        plan.notes
    );
}

#[test]
fn two_profiles_of_one_table_must_agree_on_its_chunk_length() {
    let dir = dir("chunks");
    let with_chunk = |kb: u32| {
        KV.replace(
            "  );\n",
            &format!("  ) WITH compression = {{'class': 'LZ4Compressor', 'chunk_length_in_kb': {kb}}};\n"),
        )
    };
    std::fs::write(dir.join("profiles/other.yaml"), with_chunk(16)).unwrap();
    let mut scenario_text = String::new();
    let base = scenario(
        &dir,
        &with_chunk(4),
        "user profile=profiles/p.yaml ops(insert=1) cl=ONE duration=2s -rate threads=4",
        "",
    );
    scenario_text.push_str(&base.source.text);
    scenario_text.push_str(
        "\n[[load]]\nname = \"other\"\ncommand = \"user profile=profiles/other.yaml ops(getdata=1) cl=ONE duration=2s -rate threads=4\"\n",
    );
    let file = dir.join("scenario.toml");
    let both = sim::scenario::parse(&file.display().to_string(), &scenario_text)
        .unwrap_or_else(|e| panic!("{e}"));
    let error = resolve(&both, &RunOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("chunk_length_in_kb 16 differs from the table's 4"),
        "{error}"
    );
}

#[test]
fn two_profiles_of_one_table_must_agree_on_its_partition_size() {
    let dir = dir("partition-sizes");
    // The same wide table, its partitions 1,000 rows in one profile and 10
    // in the other.
    let ten_rows = THOUSAND_ROWS.replace("cluster: fixed(1000)", "cluster: fixed(10)");
    std::fs::write(dir.join("profiles/other.yaml"), ten_rows).unwrap();
    let base = scenario(
        &dir,
        THOUSAND_ROWS,
        "user profile=profiles/p.yaml ops(insert=1) cl=ONE duration=2s -rate threads=4",
        "",
    );
    let text = format!(
        "{}\n[[load]]\nname = \"other\"\ncommand = \"user profile=profiles/other.yaml ops(row=1) cl=ONE duration=2s -rate threads=4\"\n",
        base.source.text
    );
    let file = dir.join("scenario.toml");
    let both =
        sim::scenario::parse(&file.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"));
    let error = resolve(&both, &RunOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("load[1].command"), "{error}");
    assert!(
        error.contains("one table has one partition size"),
        "{error}"
    );
    assert!(!error.contains('\n'), "{error}");
}

/// A hundred-row table at RF 3, each insert writing a whole partition.
fn hundred_rows_rf3() -> String {
    THOUSAND_ROWS
        .replace("'replication_factor': 1", "'replication_factor': 3")
        .replace("cluster: fixed(1000)", "cluster: fixed(100)")
        .replace("select: fixed(1)/100", "select: fixed(1)/1")
}

/// Inserts 4,000 whole partitions at QUORUM over 4 s, then reads them at
/// QUORUM for 4 s (whole partitions and single rows), in `mode`, with
/// `fault` (TOML) added; memory is small so the memtables flush.
fn wide_run(test: &str, mode: &str, fault: &str) -> serde_json::Value {
    let text = format!(
        r#"
name = "wide-{mode}"
seed = 5
duration = "9s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[cluster.overrides]
shards = 2
memory = "3GB"

[fidelity]
mode = "{mode}"

[[load]]
name = "insert"
processes = 1
command = "user profile=profiles/p.yaml ops(insert=1) cl=QUORUM n=4000 -pop seq=1..4000 -rate threads=20 limit=1000/s"

[[load]]
name = "read"
processes = 1
start = "5s"
command = "user profile=profiles/p.yaml ops(partition=1,row=1) cl=QUORUM duration=4s -pop dist=uniform(1..4000) -rate threads=8 limit=500/s"
{fault}
"#
    );
    let plan = plan_of_text(test, &hundred_rows_rf3(), &text);
    assert_eq!(plan.cluster.data_mode, mode == "data");
    // 100 rows of 4 + 100 bytes, each with its 64 bytes of footprint.
    assert_eq!(plan.cluster.partition_bytes, Some(8 + 100 * (104 + 64)));
    summary_of_run(plan)
}

/// The plan of scenario `text` in a directory of test `test`'s own, its
/// `profiles/p.yaml` holding `profile`.
fn plan_of_text(test: &str, profile: &str, text: &str) -> sim::cluster::RunPlan {
    let dir = dir(test);
    std::fs::write(dir.join("profiles/p.yaml"), profile).unwrap();
    let file = dir.join("scenario.toml");
    let scenario =
        sim::scenario::parse(&file.display().to_string(), text).unwrap_or_else(|e| panic!("{e}"));
    resolve(&scenario, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `plan`; its summary as `summary.json` has it.
fn summary_of_run(plan: sim::cluster::RunPlan) -> serde_json::Value {
    let outcome = sim::cluster::run(plan, &mut |_| {}).expect("the run completes");
    serde_json::to_value(Summary::of(&outcome)).unwrap()
}

#[test]
fn data_mode_stores_and_reads_many_row_partitions_as_volume_mode_sizes_them() {
    let data = wide_run("wide-data", "data", "");
    let volume = wide_run("wide-volume", "volume", "");
    for summary in [&data, &volume] {
        let reads = &summary["loads"]["read"]["ops"]["read"];
        assert!(reads["count"].as_u64().unwrap() > 1500, "{reads}");
        assert_eq!(summary["loads"]["insert"]["ops"]["write"]["count"], 4000);
    }
    // Data mode finds every partition written; volume mode's key density
    // estimate (`engine::read::Population`) misses about one in a hundred.
    assert_eq!(data["loads"]["read"]["ops"]["read"]["not_found"], 0);
    assert!(
        volume["loads"]["read"]["ops"]["read"]["not_found"]
            .as_u64()
            .unwrap()
            < 40
    );
    // Replicas that took the same writes agree: no digest mismatch.
    assert_eq!(
        data["coordinator"]["digest_mismatches"], 0,
        "{}",
        data["coordinator"]
    );
    // The two modes size the partitions alike: the reads' I/O per request
    // and the flushed data are within a few percent of each other.
    let per_request = |summary: &serde_json::Value| {
        summary["time_spent"]["io"]["query"]["bytes_per_request"]
            .as_f64()
            .unwrap()
    };
    let (d, v) = (per_request(&data), per_request(&volume));
    println!("query bytes a request: data {d:.0}, volume {v:.0}");
    assert!(
        d > 4_000.0 && (d / v - 1.0).abs() < 0.05,
        "data {d} volume {v}"
    );
}

#[test]
fn data_mode_repairs_the_rows_a_cut_replica_missed_in_wide_partitions() {
    let fault = r#"
[[fault]]
at = "1s"
for = "2s"
nodes = [2]
kind = "partition"
"#;
    let summary = wide_run("wide-cut", "data", fault);
    let coordinator = &summary["coordinator"];
    println!("{coordinator}");
    assert!(
        coordinator["digest_mismatches"].as_u64().unwrap() > 0,
        "{coordinator}"
    );
    assert!(
        coordinator["read_repairs"].as_u64().unwrap() > 0,
        "{coordinator}"
    );
    // Determinism under the fault: the same bytes again.
    let again = wide_run("wide-cut-again", "data", fault);
    assert_eq!(summary, again);
}

#[test]
fn the_shipped_wide_profile_resolves_in_data_mode_with_its_whole_partition_size() {
    let dir = dir("wide-shipped");
    let data_mode = scenario(
        &dir,
        WIDE,
        "user profile=profiles/p.yaml ops(insert=1,day=1) cl=ONE duration=2s -rate threads=10",
        "[fidelity]\nmode = \"data\"\n",
    );
    let plan = resolve(&data_mode, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan.cluster.data_mode);
    // 500.5 rows of ~112 bytes of values, each with 64 bytes of footprint.
    let whole = plan.cluster.partition_bytes.unwrap() as f64;
    assert!(
        (whole / (8.0 + 500.5 * 176.0) - 1.0).abs() < 0.02,
        "{whole}"
    );
}

/// The key/value profile with inserts batching `partitions` partitions
/// as `batchtype`.
fn batched(partitions: &str, batchtype: &str) -> String {
    KV.replace("partitions: fixed(1)", &format!("partitions: {partitions}"))
        .replace("batchtype: UNLOGGED", &format!("batchtype: {batchtype}"))
}

/// Runs `profile`'s inserts (`insert_command`) and then, from 3 s, QUORUM
/// reads over the keys written; RF 3 on three nodes, in `mode`.
fn batch_run(test: &str, profile: &str, mode: &str, insert_command: &str) -> serde_json::Value {
    let text = format!(
        r#"
name = "batches"
seed = 11
duration = "5s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[fidelity]
mode = "{mode}"

[[load]]
name = "insert"
processes = 1
command = "{insert_command}"

[[load]]
name = "read"
processes = 1
start = "3s"
command = "user profile=profiles/p.yaml ops(getdata=1) cl=QUORUM duration=2s -pop dist=uniform(1..3000) -rate threads=8 limit=1000/s"
"#
    );
    summary_of_run(plan_of_text(test, profile, &text))
}

#[test]
fn an_insert_over_several_partitions_writes_each_as_one_batch() {
    // c-s counts `n=` and its rate in partitions: 3,000 partitions in
    // about 1,000 batches of three at 500 batches/s: keys 1..3000, every
    // one written (data mode: every QUORUM read finds its key).
    let command = "user profile=profiles/p.yaml ops(insert=1) cl=QUORUM n=3000 -pop seq=1..3000 -rate threads=10 limit=1500/s";
    let summary = batch_run(
        "batch-data",
        &batched("fixed(3)", "UNLOGGED"),
        "data",
        command,
    );
    let writes = &summary["loads"]["insert"]["ops"]["write"];
    // One operation a batch; the last few, started while fewer than three
    // of `n=`'s partitions were left, are shorter.
    let count = writes["count"].as_u64().unwrap();
    assert!((1000..=1010).contains(&count), "{writes}");
    let rate = writes["ops_per_s"].as_f64().unwrap();
    assert!((rate - 500.0).abs() < 10.0, "{writes}");
    assert_eq!(writes["errors"], 0);
    // c-s's counts: n= partitions, one row each.
    assert_eq!(writes["partitions"], 3000, "{writes}");
    assert_eq!(writes["rows"], 3000, "{writes}");
    let reads = &summary["loads"]["read"]["ops"]["read"];
    assert!(reads["count"].as_u64().unwrap() > 1500, "{reads}");
    assert_eq!(reads["not_found"], 0, "every part written: {reads}");
    // A read of one partition, its one row found: no counts of their own.
    assert!(reads.get("partitions").is_none() && reads.get("rows").is_none());
    assert_eq!(summary["coordinator"]["digest_mismatches"], 0);
    // Determinism.
    let again = batch_run(
        "batch-data-again",
        &batched("fixed(3)", "UNLOGGED"),
        "data",
        command,
    );
    assert_eq!(summary, again);
}

#[test]
fn a_logged_batch_pays_its_batchlog_round_before_its_writes() {
    let command = "user profile=profiles/p.yaml ops(insert=1) cl=QUORUM n=3000 -pop seq=1..3000 -rate threads=10 limit=1500/s";
    let write = |batchtype: &str| {
        let summary = batch_run(
            &format!("batch-{batchtype}"),
            &batched("uniform(2..4)", batchtype),
            "volume",
            command,
        );
        let writes = summary["loads"]["insert"]["ops"]["write"].clone();
        assert_eq!(writes["partitions"], 3000, "{writes}");
        assert_eq!(writes["errors"], 0, "{writes}");
        let cpu = summary["time_spent"]["cpu"]["write_request"]["tasks"]
            .as_u64()
            .unwrap();
        (
            writes["latency_ms"]["mean"].as_f64().unwrap(),
            cpu,
            writes["count"].as_u64().unwrap(),
            summary,
        )
    };
    let (unlogged, unlogged_writes, batches, _) = write("UNLOGGED");
    let (logged, logged_writes, logged_batches, summary) = write("LOGGED");
    // About 1,000 batches of 2 to 4 partitions.
    assert_eq!(batches, logged_batches);
    assert!((950..=1050).contains(&batches), "{batches} batches");
    println!(
        "write mean: UNLOGGED {unlogged} ms, LOGGED {logged} ms; write steps {unlogged_writes} / {logged_writes}; {}",
        summary["time_spent"]["cpu"]
    );
    // The batchlog round comes first: a LOGGED batch waits for two more
    // nodes' writes before its own.
    assert!(
        logged > unlogged + 0.1,
        "LOGGED {logged} ms, UNLOGGED {unlogged} ms"
    );
    // The same parts (the same draws), and per batch two batchlog writes
    // and their two removals on the batchlog nodes.
    // The last operations of each thread may have been cut to one
    // partition by `n=` (a plain write, no batchlog): at most one a thread.
    let batchlog = logged_writes - unlogged_writes;
    assert_eq!(batchlog % 4, 0, "{batchlog}");
    assert!(
        (4 * (batches - 10)..=4 * batches).contains(&batchlog),
        "{batchlog} batchlog writes for {batches} batches"
    );
}
