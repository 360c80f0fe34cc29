//! Tests of `user` commands and their profiles: R6's commands as published,
//! the profiles the scenarios ship, one in the form of c-s's own example,
//! and the errors.

use super::cql::{CqlType, QueryShape};
use super::profile::*;
use super::*;
use crate::distribution::KeyDistribution;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

const R6_PROFILE: &str = include_str!("../../../scenarios/profiles/size_based_load_intel.yaml");
const WIDE_PROFILE: &str = include_str!("../../../scenarios/profiles/wide-partition.yaml");

/// A profile in the form of c-s 3.11's `cqlstress-example.yaml`: several
/// clustering columns, multi-partition LOGGED batches, a select ratio,
/// queries with LIMIT and a clustering range, samerow and multirow.
const EXAMPLE_FORM: &str = r#"
keyspace: perftesting
keyspace_definition: |
  CREATE KEYSPACE perftesting WITH replication = { 'class': 'SimpleStrategy', 'replication_factor': 3};
table: typestest
table_definition: |
  CREATE TABLE typestest (
        name text,
        choice boolean,
        date timestamp,
        address inet,
        dbl double,
        lval bigint,
        ival int,
        uid timeuuid,
        value blob,
        PRIMARY KEY((name,choice), date, address, dbl, lval, ival, uid)
  ) WITH COMPACT STORAGE
    AND compaction = { 'class':'LeveledCompactionStrategy' }
    AND comment='A table of many types to test wide rows'
columnspec:
  - name: name
    size: uniform(1..10)
    population: uniform(1..10)
  - name: date
    cluster: uniform(20..40)
  - name: lval
    population: gaussian(1..1000)
    cluster: uniform(1..4)
insert:
  partitions: uniform(1..50)
  batchtype: LOGGED
  select: uniform(1..10)/10
queries:
   simple1:
      cql: select * from typestest where name = ? and choice = ? LIMIT 100
      fields: samerow
   range1:
      cql: select * from typestest where name = ? and choice = ? and date >= ? LIMIT 100
      fields: multirow
   simple2:
      cql: select name, choice, uid  from typestest where name = ? and choice = ? LIMIT 100
      fields: samerow
"#;

fn profile(text: &str) -> UserProfile {
    match parse_profile(text, "test.yaml") {
        Ok(profile) => profile,
        Err(error) => panic!("rejected: {error}"),
    }
}

fn user(command: &str) -> StressCommand {
    match parse(command) {
        Ok(command) => command,
        Err(error) => panic!("`{command}` was rejected: {error}"),
    }
}

fn ops(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
    pairs.iter().map(|(n, w)| (n.to_string(), *w)).collect()
}

fn default_clustering() -> KeyDistribution {
    KeyDistribution::Gaussian {
        min: 1,
        max: 10,
        mean: 5.5,
        stdev: 1.5,
    }
}

// ---------------------------------------------------------------------------
// R6's commands, verbatim from published-runs.md (shell escapes included).

#[test]
fn r6_write_as_published() {
    let command = user(
        r"cassandra-stress user profile=size_based_load_intel.yaml no-warmup ops\(insert=1\) n=100000000 cl=ONE -mode native cql3 -pop seq=1..100000000 -node ip1, ip2, ip3 -rate threads=100 limit=65000/s",
    );
    assert_eq!(
        command.operation,
        Operation::User {
            profile: "size_based_load_intel.yaml".into(),
            ops: ops(&[("insert", 1.0)]),
            clustering: default_clustering(),
        }
    );
    assert_eq!(command.stop, Stop::Count(100_000_000));
    assert!(!command.warmup);
    assert_eq!(command.consistency, ConsistencyLevel::One);
    assert_eq!(
        command.rate,
        Rate::ClosedLoop {
            threads: 100,
            throttle_per_sec: Some(65_000)
        }
    );
    assert_eq!(
        command.population,
        Population::Sequential {
            first: 1,
            last: 100_000_000,
            wrap: true
        }
    );
    assert_eq!(command.replication_factor, None, "the profile sets it");
    assert_eq!(
        command.ignored_options,
        vec![
            "-mode native cql3".to_string(),
            "-node ip1,ip2,ip3".to_string()
        ]
    );
}

#[test]
fn r6_reads_as_published() {
    let large = user(
        r"cassandra-stress user profile=size_based_load_intel.yaml no-warmup ops\(getdata=1\) duration=10m cl=ONE -mode native cql3 -pop dist=gaussian\(1..300000000,150000000,50000000\) -node ip1, ip2, ip3 -rate threads=100 limit=65000/s",
    );
    assert_eq!(
        large.operation,
        Operation::User {
            profile: "size_based_load_intel.yaml".into(),
            ops: ops(&[("getdata", 1.0)]),
            clustering: default_clustering(),
        }
    );
    assert_eq!(large.stop, Stop::Duration(SimDuration::from_secs(600)));
    assert_eq!(
        large.population,
        Population::Distribution(KeyDistribution::Gaussian {
            min: 1,
            max: 300_000_000,
            mean: 150_000_000.0,
            stdev: 50_000_000.0
        })
    );
    let small = user(
        r"cassandra-stress user profile=size_based_load_intel.yaml no-warmup ops\(getdata=1\) duration=10m cl=ONE -mode native cql3 -pop dist=gaussian\(1..300000000,150000000,100\) -node ip1, ip2, ip3 -rate threads=100 limit=65000/s",
    );
    assert_eq!(
        small.population,
        Population::Distribution(KeyDistribution::Gaussian {
            min: 1,
            max: 300_000_000,
            mean: 150_000_000.0,
            stdev: 100.0
        })
    );
    // The I/O test: no limit, 120 and 300 threads, 600M partitions.
    let io = user(
        r"cassandra-stress user profile=size_based_load_intel.yaml no-warmup ops\(getdata=1\) duration=10m cl=ONE -mode native cql3 -pop dist=gaussian\(1..600000000,300000000,100\) -node ip1, ip2, ip3 -rate threads=300",
    );
    assert_eq!(
        io.rate,
        Rate::ClosedLoop {
            threads: 300,
            throttle_per_sec: None
        }
    );
    let populate = user(
        r"cassandra-stress user profile=size_based_load_intel.yaml no-warmup ops\(insert=1\) n=70000000 cl=ONE -mode native cql3 -pop seq=1..50000000 -node ip1, ip2, ip3 -rate threads=520",
    );
    assert_eq!(populate.stop, Stop::Count(70_000_000));
    assert_eq!(
        populate.rate,
        Rate::ClosedLoop {
            threads: 520,
            throttle_per_sec: None
        }
    );
}

#[test]
fn ops_parse_in_every_quoting_people_paste() {
    let expected = ops(&[("insert", 1.0), ("getdata", 2.0)]);
    for command in [
        r"user profile=p.yaml ops\(insert=1,getdata=2\) n=10 -rate threads=1",
        "user profile=p.yaml 'ops(insert=1,getdata=2)' n=10 -rate threads=1",
        "user profile=p.yaml ops'(insert=1,getdata=2)' n=10 -rate threads=1",
        "user profile=p.yaml \"ops(insert=1, getdata=2)\" n=10 -rate threads=1",
        "cassandra-stress user 'profile=p.yaml' ops(insert=1,getdata=2) n=10 -rate threads=1",
    ] {
        match user(command).operation {
            Operation::User { ops, profile, .. } => {
                assert_eq!(ops, expected, "{command}");
                assert_eq!(profile, "p.yaml");
            }
            other => panic!("{command}: {other:?}"),
        }
    }
    // c-s looks operations up lower-cased.
    match user("user profile=p.yaml ops(Insert=1,GetData=2) n=10").operation {
        Operation::User { ops, .. } => assert_eq!(ops, expected),
        other => panic!("{other:?}"),
    }
    let weighted = user("user profile=p.yaml ops(insert=0.5,q=1.5) clustering=fixed(1) n=10");
    assert_eq!(
        weighted.operation,
        Operation::User {
            profile: "p.yaml".into(),
            ops: ops(&[("insert", 0.5), ("q", 1.5)]),
            clustering: KeyDistribution::Fixed(1),
        }
    );
    assert_eq!(weighted.operation.read_fraction(), 0.75);
}

#[test]
fn schema_and_col_are_checked_then_left_to_the_profile() {
    let command = user("user profile=p.yaml ops(insert=1) n=10 -schema 'replication(factor=3)' -col n=fixed(2) -rate threads=4");
    assert_eq!(command.replication_factor, None);
    assert_eq!(command.columns, ColumnSpec::default());
    assert_eq!(
        command.ignored_options,
        vec![
            "-schema replication(factor=3) (the profile sets it)".to_string(),
            "-col n=fixed(2) (the profile sets it)".to_string()
        ]
    );
}

#[test]
fn user_commands_are_refused_in_one_line_naming_what() {
    for (command, needle) in [
        ("user ops(insert=1) n=10", "profile=FILE.yaml"),
        ("user profile=p.yaml n=10", "ops(NAME=W"),
        ("user profile=p.yaml ops() n=10", "empty"),
        ("user profile=p.yaml ops(insert=x) n=10", "invalid weight"),
        ("user profile=p.yaml ops(insert=1,insert=2) n=10", "twice"),
        ("user profile=p.yaml ops(insert=0) n=10", "no operation"),
        (
            "user profile=p.yaml ops(insert=1) n=10 -schema replication(factor=x)",
            "factor",
        ),
        (
            "user profile=p.yaml ops(insert=1) ratio(write=1) n=10",
            "unknown parameter",
        ),
        ("write profile=p.yaml n=10", "unknown parameter"),
    ] {
        let error = parse(command).unwrap_err().to_string();
        assert!(error.contains(needle), "{command}: {error}");
        assert!(!error.contains('\n'), "{command}: {error}");
    }
}

// ---------------------------------------------------------------------------
// Profiles.

#[test]
fn r6_profile_is_a_key_value_table() {
    let p = profile(R6_PROFILE);
    assert_eq!(p.keyspace, "intel_kv");
    let keyspace = p.keyspace_definition.as_ref().unwrap();
    assert_eq!(
        (keyspace.replication_factor, keyspace.network_topology),
        (3, false)
    );
    assert_eq!(p.table.name, "kv");
    assert_eq!(p.table.partition_key, vec![0]);
    assert!(p.table.clustering.is_empty());
    assert_eq!(
        p.columns[0].definition.cql_type,
        CqlType::Fixed("bigint", 8)
    );
    assert_eq!(p.columns[1].definition.cql_type, CqlType::Blob);
    assert_eq!(p.partition_key_bytes(), 8.0);
    assert_eq!(p.mean_row_bytes(), 1024.0);
    assert_eq!(p.largest_row_bytes(), 1024);
    assert!(p.single_row_partitions());
    assert_eq!(p.mean_rows_per_partition(), 1.0);
    assert_eq!(p.insert.batch_type, BatchType::Unlogged);
    assert_eq!(p.insert.select.mean(), 1.0);
    assert_eq!(
        p.operation_names(),
        vec!["insert".to_string(), "getdata".to_string()]
    );
    let getdata = p.query("getdata").unwrap();
    assert_eq!(
        getdata.shape,
        QueryShape::Select {
            clustering_equal: 0,
            clustering_range: false,
            limit: None
        }
    );
    assert_eq!(getdata.fields, Fields::SameRow);
    // Query names are keyed lower-cased, as c-s keys them.
    let upper = profile(&R6_PROFILE.replace("  getdata:", "  GetData:"));
    assert!(upper.query("getdata").is_some());
}

#[test]
fn a_profile_in_the_form_of_cs_example_reads_as_intended() {
    let p = profile(EXAMPLE_FORM);
    assert_eq!(p.table.partition_key, vec![0, 1]);
    assert_eq!(p.table.clustering, vec![2, 3, 4, 5, 6, 7]);
    assert_eq!(
        p.table.compaction,
        Some(("LeveledCompactionStrategy".into(), Vec::new()))
    );
    // name is text of uniform(1..10) characters; choice a boolean.
    assert_eq!(p.partition_key_bytes(), 5.5 + 1.0);
    // Rows: date uniform(20..40) x lval uniform(1..4), the other
    // clustering columns fixed(1): 30 x 2.5 = 75 on average.
    assert!((p.mean_rows_per_partition() - 75.0).abs() < 1e-9);
    assert!(!p.single_row_partitions());
    // A row: timestamp 8 + inet 4 + double 8 + bigint 8 + int 4 + timeuuid
    // 16 + a blob of uniform(4..8) = 6 bytes on average.
    assert!((p.mean_row_bytes() - 54.0).abs() < 1e-9);
    assert_eq!(p.insert.batch_type, BatchType::Logged);
    assert_eq!(p.insert.partitions.range(), (1, 50));
    assert!((p.insert.select.mean() - 0.55).abs() < 1e-9);
    assert_eq!(
        p.query("range1").unwrap().shape,
        QueryShape::Select {
            clustering_equal: 0,
            clustering_range: true,
            limit: Some(100)
        }
    );
    assert_eq!(p.query("range1").unwrap().fields, Fields::MultiRow);
    assert_eq!(
        p.queries
            .iter()
            .map(|q| q.name.as_str())
            .collect::<Vec<_>>(),
        vec!["simple1", "range1", "simple2"],
        "in the file's order"
    );
}

#[test]
fn the_wide_partition_profile_holds_hundreds_of_rows() {
    let p = profile(WIDE_PROFILE);
    let keyspace = p.keyspace_definition.as_ref().unwrap();
    assert_eq!(
        (keyspace.replication_factor, keyspace.network_topology),
        (3, true)
    );
    assert_eq!(p.table.partition_key, vec![0, 1]);
    assert_eq!(p.table.clustering, vec![2]);
    assert_eq!(p.mean_rows_per_partition(), 500.5);
    // at 8 + value 8 + payload gaussian(64..128): 95.5 on average, c-s
    // truncating each draw.
    assert!(
        (p.mean_row_bytes() - 111.5).abs() < 0.01,
        "{}",
        p.mean_row_bytes()
    );
    assert_eq!(
        p.query("latest").unwrap().shape,
        QueryShape::Select {
            clustering_equal: 0,
            clustering_range: false,
            limit: Some(10)
        }
    );
    assert!((p.insert.select.mean() - 0.1).abs() < 1e-12);
}

#[test]
fn rows_per_partition_follow_the_cluster_distribution_per_partition() {
    let text = R6_PROFILE
        .replace("key bigint PRIMARY KEY,", "key bigint, c int,")
        .replace("value blob\n", "value blob,\n    PRIMARY KEY (key, c)\n")
        .replace(
            "  - name: value\n",
            "  - name: c\n    cluster: uniform(1..100)\n  - name: value\n",
        );
    let p = profile(&text);
    let draws = 100_000u64;
    let total: u64 = (1..=draws).map(|seed| p.rows_in_partition(seed)).sum();
    let mean = total as f64 / draws as f64;
    assert!((mean - 50.5).abs() / 50.5 < 0.01, "mean rows {mean}");
    // The same partition always has the same rows.
    assert_eq!(p.rows_in_partition(42), p.rows_in_partition(42));
    assert!((1..=draws).all(|seed| (1..=100).contains(&p.rows_in_partition(seed))));
}

#[test]
fn every_distribution_form_parses_and_samples_within_its_range() {
    let mut rng = Pcg64Mcg::seed_from_u64(7);
    for spec in [
        "fixed(5)",
        "FIXED(5)",
        "uniform(1..100)",
        "gaussian(1..100)",
        "gauss(1..100,5)",
        "normal(1..100,50,10)",
        "norm(1..100)",
        "exp(1..100)",
        "extreme(1..100,1.5)",
        "EXTR(1..100,2)",
        "weibull(1..100,0.8)",
        "seq(1..100)",
        "~exp(1..100)",
        "~extreme(1..100,1.5)",
        "~uniform(1..100)",
    ] {
        let dist = ProfileDistribution::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let (min, max) = dist.range();
        let draws: Vec<u64> = (0..20_000).map(|_| dist.sample(&mut rng)).collect();
        assert!(draws.iter().all(|v| (min..=max).contains(v)), "{spec}");
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        let expected = dist.mean();
        assert!(
            (mean - expected).abs() <= 0.03 * expected.max(1.0),
            "{spec}: sampled mean {mean}, mean() {expected}"
        );
    }
    // An extreme distribution leans to its low end, inverted to its high.
    let extreme = ProfileDistribution::parse("extreme(1..1000,1.5)").unwrap();
    assert!(extreme.mean() < 450.0, "{}", extreme.mean());
    let inverted = ProfileDistribution::parse("~extreme(1..1000,1.5)").unwrap();
    assert!((inverted.mean() - (1001.0 - extreme.mean())).abs() < 1e-6);
    // A sequence seeded by the partition walks its range.
    let seq = ProfileDistribution::parse("seq(10..12)").unwrap();
    assert_eq!(
        (0..5).map(|seed| seq.for_seed(seed, 0)).collect::<Vec<_>>(),
        vec![10, 11, 12, 10, 11]
    );
    let ratio = RatioDistribution::parse("uniform(1..10)/10").unwrap();
    assert!((ratio.mean() - 0.55).abs() < 1e-12);
    assert!((0..1000).all(|_| (0.1..=1.0).contains(&ratio.sample(&mut rng))));
    for bad in [
        "zipf(1..10)",
        "qextreme(1..10,2)",
        "extreme(1..10)",
        "extreme(1..100,0)",
        "extreme(1..2,1)",
        "seq(5)",
    ] {
        assert!(
            ProfileDistribution::parse(bad).is_err(),
            "{bad} should be refused"
        );
    }
    assert!(RatioDistribution::parse("uniform(1..10)/0").is_err());
    assert!(
        RatioDistribution::parse("fixed(1)").is_err(),
        "a ratio needs /DIVISOR"
    );
}

#[test]
fn profile_errors_name_the_file_the_key_and_what_is_accepted() {
    let cases: Vec<(String, &str, &str)> = vec![
        ("keyspace: [".into(), "", "not a YAML profile"),
        ("- a\n- b\n".into(), "", "expected a YAML mapping"),
        (
            R6_PROFILE.replace("keyspace: intel_kv\n", ""),
            "keyspace",
            "missing",
        ),
        (
            R6_PROFILE.replace("table: kv\n", "table: kv\nextra: 1\n"),
            "extra",
            "unknown key",
        ),
        (
            R6_PROFILE.replace("size: fixed(1024)", "size: zipf(1..10)"),
            "columnspec[1].size",
            "not a distribution a profile takes",
        ),
        (
            R6_PROFILE.replace("size: fixed(1024)", "size: 1024"),
            "columnspec[1].size",
            "expected a distribution",
        ),
        (
            R6_PROFILE.replace("- name: value", "- name: valu"),
            "columnspec[1].name",
            "not a column",
        ),
        (
            R6_PROFILE.replace(
                "    size: fixed(1024)",
                "    size: fixed(1024)\n    cluster: fixed(2)",
            ),
            "columnspec[1].cluster",
            "not a clustering column",
        ),
        (
            WIDE_PROFILE.replace("cluster: uniform(1..1000)", "cluster: uniform(1..1000000000000)"),
            "columnspec",
            "partitions of up to 1000000000000 rows; a partition of the twin holds at most 100000000",
        ),
        (
            R6_PROFILE.replace(
                "    size: fixed(1024)",
                "    size: fixed(1024)\n    colour: red",
            ),
            "columnspec[1].colour",
            "unknown key",
        ),
        (
            R6_PROFILE.replace("value blob", "value map<int,int>"),
            "table_definition",
            "map",
        ),
        (
            R6_PROFILE.replace("value blob", "value frozen<list<int>>"),
            "table_definition",
            "frozen",
        ),
        // c-s 3.11 knows neither key in a profile (`visits` is its
        // `-insert` option, `identity` no name of a column's population).
        (
            R6_PROFILE.replace("select: fixed(1)/1", "visits: fixed(1)"),
            "insert.visits",
            "unknown key",
        ),
        (
            R6_PROFILE.replace(
                "    population: uniform(1..600M)",
                "    identity: uniform(1..600M)",
            ),
            "columnspec[0].identity",
            "unknown key",
        ),
        (
            R6_PROFILE.replace("batchtype: UNLOGGED", "batchtype: SOMETIMES"),
            "insert.batchtype",
            "LOGGED and UNLOGGED",
        ),
        (
            R6_PROFILE.replace("batchtype: UNLOGGED", "batchtype: COUNTER"),
            "insert.batchtype",
            "counter",
        ),
        (
            R6_PROFILE.replace("  select: fixed(1)/1", "  select: fixed(1)\n  chance: 1"),
            "insert.select",
            "ratio",
        ),
        (
            R6_PROFILE.replace("FROM kv WHERE", "FROM kv2 WHERE"),
            "queries.getdata.cql",
            "table `kv2`",
        ),
        (
            R6_PROFILE.replace("WHERE key = ?", "WHERE key = ? IF value = ?"),
            "queries.getdata.cql",
            "unexpected `if`",
        ),
        (
            R6_PROFILE.replace(
                "SELECT value FROM kv WHERE key = ?",
                "UPDATE kv SET value = ? WHERE key = ? IF EXISTS",
            ),
            "queries.getdata.cql",
            "lightweight transaction",
        ),
        (
            R6_PROFILE.replace(
                "SELECT value FROM kv WHERE key = ?",
                "SELECT * FROM kv WHERE value = ?",
            ),
            "queries.getdata.cql",
            "secondary index",
        ),
        (
            R6_PROFILE.replace("fields: samerow", "fields: anyrow"),
            "queries.getdata.fields",
            "samerow and multirow",
        ),
        (
            R6_PROFILE.replace("  getdata:", "  insert:"),
            "queries.insert",
            "give the query another name",
        ),
        (
            R6_PROFILE.replace("CREATE KEYSPACE intel_kv", "CREATE KEYSPACE other"),
            "keyspace_definition",
            "`other`",
        ),
        (
            R6_PROFILE.replace("'class': 'SimpleStrategy'", "'class': 'EverywhereStrategy'"),
            "keyspace_definition",
            "SimpleStrategy and NetworkTopologyStrategy",
        ),
        (
            R6_PROFILE.replace("CREATE TABLE kv", "CREATE TABLE kv3"),
            "table_definition",
            "`kv3`",
        ),
        (
            format!("{R6_PROFILE}token_range_queries:\n  all:\n    columns: 3\n"),
            "token_range_queries.all.columns",
            "columns to read",
        ),
        (
            format!("{R6_PROFILE}token_range_queries:\n  all:\n    rows: 3\n"),
            "token_range_queries.all.rows",
            "page_size",
        ),
        (
            R6_PROFILE.replace("    value blob\n  );", "    value blob\n  ) WITH cdc = {'enabled': true};"),
            "table_definition",
            "Scylla 3.2",
        ),
        (
            format!("{R6_PROFILE}extra_definitions:\n  - DROP TABLE kv\n"),
            "extra_definitions[0]",
            "CREATE MATERIALIZED VIEW",
        ),
    ];
    for (text, key, needle) in cases {
        let line = match parse_profile(&text, "profiles/kv.yaml") {
            Err(error) => {
                assert_eq!(error.key(), key, "{error}");
                error.to_string()
            }
            // A query the twin cannot run is kept, and refused when a
            // load's ops(...) names it.
            Ok(profile) => {
                assert!(
                    key.starts_with("queries.") && key.ends_with(".cql"),
                    "{key}: accepted"
                );
                let (refused, reason) = profile
                    .refusal(&ops(&[("getdata", 1.0)]))
                    .unwrap_or_else(|| panic!("{key}: not refused when used"));
                assert_eq!(refused, key);
                assert_eq!(profile.refusal(&ops(&[("insert", 1.0)])), None, "{key}");
                format!("profiles/kv.yaml: {refused}: {reason}")
            }
        };
        assert!(line.starts_with("profiles/kv.yaml: "), "{line}");
        assert!(line.contains(needle), "{key}: {line}");
        assert!(!line.contains('\n'), "{line}");
    }
    let missing = R6_PROFILE.replace(
        &R6_PROFILE
            [R6_PROFILE.find("table_definition").unwrap()..R6_PROFILE.find("columnspec").unwrap()],
        "",
    );
    let error = parse_profile(&missing, "kv.yaml").unwrap_err();
    assert_eq!(error.key(), "table_definition");
}

#[test]
fn queries_select_the_rows_their_restrictions_and_limit_give() {
    let p = profile(EXAMPLE_FORM);
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    let select = |equal, range, limit| QueryShape::Select {
        clustering_equal: equal,
        clustering_range: range,
        limit,
    };
    for seed in 1..200u64 {
        let rows = p.rows_in_partition(seed);
        assert_eq!(
            p.rows_selected(&select(0, false, None), seed, &mut rng),
            rows
        );
        assert_eq!(
            p.rows_selected(&select(0, false, Some(100)), seed, &mut rng),
            rows.min(100)
        );
        // `date = ?` leaves the lval level (uniform(1..4)) below it.
        let under_date = p.rows_selected(&select(1, false, None), seed, &mut rng);
        assert!(
            (1..=4).contains(&under_date) && rows.is_multiple_of(under_date),
            "{rows} {under_date}"
        );
        // Every clustering column restricted: one row.
        assert_eq!(p.rows_selected(&select(6, false, None), seed, &mut rng), 1);
        assert_eq!(p.rows_selected(&QueryShape::Write, seed, &mut rng), 1);
    }
    // `date >= ?`: from a date drawn among the partition's, half on average.
    let (mut ranged, mut whole) = (0u64, 0u64);
    for seed in 1..20_000u64 {
        ranged += p.rows_selected(&select(0, true, None), seed, &mut rng);
        whole += p.rows_in_partition(seed);
    }
    let share = ranged as f64 / whole as f64;
    assert!(
        (share - 0.52).abs() < 0.03,
        "a range reads {share} of the rows"
    );
}

/// Cassandra's own `cqlstress-example.yaml` has a `token_range_queries`
/// section, and profiles carry queries and definitions the twin cannot
/// run: all are parsed and checked, and refused only for a load whose
/// `ops(...)` uses them, naming the key (c-s prepares only what the ops
/// name).
#[test]
fn what_a_load_does_not_use_is_checked_but_not_refused() {
    let text = format!(
        "{EXAMPLE_FORM}   cas:\n      cql: update typestest set value = ? where name = ? and choice = ? and date = ? and address = ? and dbl = ? and lval = ? and ival = ? and uid = ? IF value = ?\n      fields: samerow\n\
         token_range_queries:\n  all:\n    columns: '*'\n    page_size: 5000\n\
         extra_definitions:\n  - CREATE TYPE perftesting.point (x int, y int)\n  - CREATE MATERIALIZED VIEW perftesting.by_uid AS SELECT * FROM typestest WHERE uid IS NOT NULL PRIMARY KEY (uid, name, choice, date, address, dbl, lval, ival)\n"
    );
    let profile = profile(&text);
    let names = profile.operation_names();
    for name in ["insert", "simple1", "cas", "all"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    // Reads only: neither the LWT, the scan nor the view is used.
    assert_eq!(
        profile.refusal(&ops(&[("simple1", 1.0), ("range1", 2.0)])),
        None
    );
    // Named with weight 0: not used either.
    assert_eq!(
        profile.refusal(&ops(&[("simple1", 1.0), ("all", 0.0)])),
        None
    );
    let refused = |pairs: &[(&str, f64)]| profile.refusal(&ops(pairs)).unwrap();
    let (key, reason) = refused(&[("simple1", 1.0), ("all", 1.0)]);
    assert_eq!(key, "token_range_queries.all");
    assert!(reason.contains("token range"), "{reason}");
    let (key, reason) = refused(&[("cas", 1.0)]);
    assert_eq!(key, "queries.cas.cql");
    assert!(reason.contains("lightweight transaction"), "{reason}");
    // Writes keep the view up to date: refused, naming the definition
    // (the type is harmless).
    let (key, reason) = refused(&[("insert", 1.0), ("simple1", 1.0)]);
    assert_eq!(key, "extra_definitions[1]");
    assert!(reason.contains("materialized view"), "{reason}");
    assert!(profile.writes("insert") && !profile.writes("simple1"));
}
