use super::*;
use crate::distribution::KeyDistribution;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

// ---------------------------------------------------------------------------
// The c-s commands of published-runs.md, verbatim.

/// R1 populate.
const R1_POPULATE: &str = "cassandra-stress write no-warmup cl=QUORUM n=1000000000 -schema 'replication(factor=3)' -mode cql3 native -rate threads=200 -col 'size=FIXED(1024) n=FIXED(1)' -pop seq=1..1000000000";
/// R1 read load.
const R1_READ: &str = "cassandra-stress read no-warmup cl=QUORUM duration=100m -rate 'threads=150 limit=20000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop 'dist=gauss(1..750000000,500000000,250000000)'";
/// R2 write load.
const R2_WRITE: &str = "cassandra-stress write no-warmup cl=QUORUM duration=120m -schema 'replication(factor=3)' -mode cql3 native -rate 'threads=1000' -pop 'seq=1..500000000'";
/// R5 mixed load: a template with `<per-process rate>` to fill in.
const R5_MIXED: &str = "cassandra-stress mixed ratio(write=1,read=1) no-warmup duration=90m cl=quorum -pop dist=gaussian(1..38850000000,19425000000,6475000000) -mode native cql3 -rate threads=200 limit=<per-process rate>";
/// R5 population: a template with `<share>` and `<range>` to fill in.
const R5_POPULATE: &str =
    "cassandra-stress write no-warmup n=<share> cl=one -rate threads=200 -pop seq=<range>";

/// R5 mixed with the placeholder filled: 300K ops/s over 14 Scylla c-s
/// processes, 21,429/s each.
fn r5_mixed_filled() -> String {
    R5_MIXED.replace("<per-process rate>", "21429/s")
}

/// R5 population with the placeholders filled: 38.85 billion keys over 14
/// processes, the first process's share.
fn r5_populate_filled() -> String {
    R5_POPULATE
        .replace("<share>", "2775000000")
        .replace("<range>", "1..2775000000")
}

fn ok(command: &str) -> StressCommand {
    match parse(command) {
        Ok(c) => c,
        Err(e) => panic!("`{command}` was rejected: {e}"),
    }
}

fn gaussian(min: u64, max: u64, mean: f64, stdev: f64) -> KeyDistribution {
    KeyDistribution::Gaussian {
        min,
        max,
        mean,
        stdev,
    }
}

fn default_clustering() -> KeyDistribution {
    gaussian(1, 10, 5.5, 4.5 / 3.0)
}

#[test]
fn r1_populate() {
    assert_eq!(
        ok(R1_POPULATE),
        StressCommand {
            operation: Operation::Write,
            stop: Stop::Count(1_000_000_000),
            warmup: false,
            consistency: ConsistencyLevel::Quorum,
            replication_factor: Some(3),
            replication_strategy: Some(ReplicationStrategy::SimpleStrategy),
            compaction: None,
            compaction_options: vec![],
            compression: None,
            rate: Rate::ClosedLoop {
                threads: 200,
                throttle_per_sec: None
            },
            columns: ColumnSpec {
                count: SizeDistribution::Fixed(1),
                size: SizeDistribution::Fixed(1024)
            },
            key_size_bytes: 10,
            population: Population::Sequential {
                first: 1,
                last: 1_000_000_000,
                wrap: true
            },
            retries: 9,
            ignore_errors: false,
            reporting: Reporting::default(),
            ignored_options: vec!["-mode cql3 native".to_string()],
        }
    );
}

#[test]
fn r1_read() {
    assert_eq!(
        ok(R1_READ),
        StressCommand {
            operation: Operation::Read,
            stop: Stop::Duration(SimDuration::from_secs(100 * 60)),
            warmup: false,
            consistency: ConsistencyLevel::Quorum,
            replication_factor: None,
            replication_strategy: None,
            compaction: None,
            compaction_options: vec![],
            compression: None,
            rate: Rate::ClosedLoop {
                threads: 150,
                throttle_per_sec: Some(20_000)
            },
            columns: ColumnSpec {
                count: SizeDistribution::Fixed(1),
                size: SizeDistribution::Fixed(1024)
            },
            key_size_bytes: 10,
            population: Population::Distribution(gaussian(
                1,
                750_000_000,
                500_000_000.0,
                250_000_000.0
            )),
            retries: 9,
            ignore_errors: false,
            reporting: Reporting::default(),
            ignored_options: vec![],
        }
    );
}

#[test]
fn r2_write() {
    assert_eq!(
        ok(R2_WRITE),
        StressCommand {
            operation: Operation::Write,
            stop: Stop::Duration(SimDuration::from_secs(120 * 60)),
            warmup: false,
            consistency: ConsistencyLevel::Quorum,
            replication_factor: Some(3),
            replication_strategy: Some(ReplicationStrategy::SimpleStrategy),
            compaction: None,
            compaction_options: vec![],
            compression: None,
            rate: Rate::ClosedLoop {
                threads: 1000,
                throttle_per_sec: None
            },
            columns: ColumnSpec {
                count: SizeDistribution::Fixed(5),
                size: SizeDistribution::Fixed(34)
            },
            key_size_bytes: 10,
            population: Population::Sequential {
                first: 1,
                last: 500_000_000,
                wrap: true
            },
            retries: 9,
            ignore_errors: false,
            reporting: Reporting::default(),
            ignored_options: vec!["-mode cql3 native".to_string()],
        }
    );
}

#[test]
fn r5_mixed() {
    // Verbatim, the template's placeholder is named in the error.
    let err = parse(R5_MIXED).unwrap_err();
    assert_eq!(err.token(), "limit=<per-process rate>");
    assert!(err.message().contains("limit=<per-process rate>"), "{err}");
    assert!(err.message().contains("placeholder"), "{err}");

    assert_eq!(
        ok(&r5_mixed_filled()),
        StressCommand {
            operation: Operation::Mixed {
                write_weight: 1.0,
                read_weight: 1.0,
                clustering: default_clustering()
            },
            stop: Stop::Duration(SimDuration::from_secs(90 * 60)),
            warmup: false,
            consistency: ConsistencyLevel::Quorum,
            replication_factor: None,
            replication_strategy: None,
            compaction: None,
            compaction_options: vec![],
            compression: None,
            rate: Rate::ClosedLoop {
                threads: 200,
                throttle_per_sec: Some(21_429)
            },
            columns: ColumnSpec {
                count: SizeDistribution::Fixed(5),
                size: SizeDistribution::Fixed(34)
            },
            key_size_bytes: 10,
            population: Population::Distribution(gaussian(
                1,
                38_850_000_000,
                19_425_000_000.0,
                6_475_000_000.0
            )),
            retries: 9,
            ignore_errors: false,
            reporting: Reporting::default(),
            ignored_options: vec!["-mode native cql3".to_string()],
        }
    );
}

#[test]
fn r5_populate() {
    let err = parse(R5_POPULATE).unwrap_err();
    assert_eq!(err.token(), "n=<share>");
    assert!(err.message().contains("n=<share>"), "{err}");

    assert_eq!(
        ok(&r5_populate_filled()),
        StressCommand {
            operation: Operation::Write,
            stop: Stop::Count(2_775_000_000),
            warmup: false,
            consistency: ConsistencyLevel::One,
            replication_factor: None,
            replication_strategy: None,
            compaction: None,
            compaction_options: vec![],
            compression: None,
            rate: Rate::ClosedLoop {
                threads: 200,
                throttle_per_sec: None
            },
            columns: ColumnSpec {
                count: SizeDistribution::Fixed(5),
                size: SizeDistribution::Fixed(34)
            },
            key_size_bytes: 10,
            population: Population::Sequential {
                first: 1,
                last: 2_775_000_000,
                wrap: true
            },
            retries: 9,
            ignore_errors: false,
            reporting: Reporting::default(),
            ignored_options: vec![],
        }
    );
}

/// R6 gives no command line; these follow its prose (100 threads and
/// 65K/s per process for 1 KB writes; 120 threads reading 128-byte values
/// with a large and a small spread).
#[test]
fn r6_derived_commands() {
    let write = ok("cassandra-stress write n=300000000 cl=ONE -schema 'replication(factor=3)' -rate 'threads=100 limit=65000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop seq=1..300000000");
    assert_eq!(
        write.rate,
        Rate::ClosedLoop {
            threads: 100,
            throttle_per_sec: Some(65_000)
        }
    );
    assert_eq!(write.consistency, ConsistencyLevel::One);
    assert_eq!(write.columns.mean_payload_bytes(), 1024.0);
    let read = ok("cassandra-stress read duration=10m cl=ONE -rate threads=120 -col 'size=FIXED(128) n=FIXED(1)' -pop 'dist=gaussian(1..300000000,150000000,50000000)'");
    assert_eq!(read.stop, Stop::Duration(SimDuration::from_secs(600)));
    assert_eq!(
        read.population,
        Population::Distribution(gaussian(1, 300_000_000, 150_000_000.0, 50_000_000.0))
    );
    let small = ok("cassandra-stress read duration=10m cl=ONE -rate threads=300 -pop 'dist=gaussian(1..600000000,300000000,50)'");
    assert_eq!(
        small.population,
        Population::Distribution(gaussian(1, 600_000_000, 300_000_000.0, 50.0))
    );
}

// ---------------------------------------------------------------------------
// Defaults and accepted forms.

#[test]
fn defaults_follow_c_s() {
    let c = ok("write n=1000");
    assert_eq!(c.operation, Operation::Write);
    assert_eq!(c.stop, Stop::Count(1000));
    assert!(c.warmup);
    assert_eq!(c.consistency, ConsistencyLevel::LocalOne);
    assert_eq!(c.replication_factor, None);
    assert_eq!(c.effective_replication_factor(), 1);
    assert_eq!(
        c.rate,
        Rate::ClosedLoop {
            threads: 200,
            throttle_per_sec: None
        }
    );
    assert_eq!(
        c.columns,
        ColumnSpec {
            count: SizeDistribution::Fixed(5),
            size: SizeDistribution::Fixed(34)
        }
    );
    assert_eq!(c.columns.mean_payload_bytes(), 170.0);
    assert_eq!(c.key_size_bytes, 10);
    assert_eq!(
        c.population,
        Population::Sequential {
            first: 1,
            last: 1000,
            wrap: true
        }
    );
    assert_eq!((c.retries, c.tries(), c.ignore_errors), (9, 10, false));
    assert!(c.ignored_options.is_empty());

    let auto = Rate::Auto {
        min_threads: 4,
        max_threads: 1000,
        stop_at_saturation: true,
    };
    // Write without n=: auto threads, seq over c-s's default 1M keys.
    let c = ok("write duration=1h");
    assert_eq!(c.rate, auto);
    assert_eq!(
        c.population,
        Population::Sequential {
            first: 1,
            last: 1_000_000,
            wrap: true
        }
    );
    // Read: auto threads, gaussian(1..n) with stdvrng 3.
    let c = ok("read n=5000");
    assert_eq!(c.rate, auto);
    assert_eq!(
        c.population,
        Population::Distribution(gaussian(1, 5000, 2500.5, 4999.0 / 2.0 / 3.0))
    );
    // Mixed: 1:1, gaussian(1..1M) when n= is absent.
    let c = ok("mixed duration=10m");
    assert_eq!(
        c.operation,
        Operation::Mixed {
            write_weight: 1.0,
            read_weight: 1.0,
            clustering: default_clustering()
        }
    );
    assert_eq!(c.operation.read_fraction(), 0.5);
    assert_eq!(
        c.population,
        Population::Distribution(gaussian(1, 1_000_000, 500_000.5, 999_999.0 / 2.0 / 3.0))
    );
    assert_eq!(c.rate, auto);
    // Neither n= nor duration=: c-s's uncertainty mode.
    let c = ok("read");
    assert_eq!(
        c.stop,
        Stop::Uncertainty {
            target_stderr: 0.02,
            min_measurements: 30,
            max_measurements: 200
        }
    );
    let c = ok("read err<0.05 n>10 n<50");
    assert_eq!(
        c.stop,
        Stop::Uncertainty {
            target_stderr: 0.05,
            min_measurements: 10,
            max_measurements: 50
        }
    );
}

#[test]
fn leading_word_and_case() {
    let plain = ok("write n=10");
    assert_eq!(ok("cassandra-stress write n=10"), plain);
    assert_eq!(ok("./tools/bin/cassandra-stress write n=10"), plain);
    assert_eq!(ok("WRITE N=10"), plain);
    assert_eq!(ok("insert n=10"), plain);
    assert_eq!(ok("  write \\\n   n=10  "), plain);
    let c = ok("Read n=10 -RATE THREADS=5 -Pop DIST=GAUSS(1..10)");
    assert_eq!(
        c.rate,
        Rate::ClosedLoop {
            threads: 5,
            throttle_per_sec: None
        }
    );
}

#[test]
fn quoting_is_equivalent() {
    let a = ok("read n=1 -rate 'threads=150 limit=20000/s'");
    let b = ok("read n=1 -rate threads=150 limit=20000/s");
    let c = ok("read n=1 -rate \"threads=150\" 'limit=20000/s'");
    let d = ok("read n=1 -rate \"threads=150 limit=20000/s\"");
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(a, d);
    assert_eq!(
        a.rate,
        Rate::ClosedLoop {
            threads: 150,
            throttle_per_sec: Some(20_000)
        }
    );
    // c-s glues whitespace around , = ( ).
    let e = ok("mixed n=1 'ratio(write=1, read=3)' -pop 'dist=gauss(1..100, 50, 10)'");
    assert_eq!(
        e.operation,
        Operation::Mixed {
            write_weight: 1.0,
            read_weight: 3.0,
            clustering: default_clustering()
        }
    );
    assert_eq!(
        e.population,
        Population::Distribution(gaussian(1, 100, 50.0, 10.0))
    );
}

#[test]
fn commands_and_ratios() {
    for (text, w, r) in [
        ("ratio(write=1,read=1)", 1.0, 1.0),
        ("ratio(read=1,write=1)", 1.0, 1.0),
        ("ratio(read=3,write=1)", 1.0, 3.0),
        ("ratio(write=0.25,read=0.75)", 0.25, 0.75),
        ("RATIO(WRITE=2,READ=1.5)", 2.0, 1.5),
        ("ratio(write=1)", 1.0, 0.0),
        ("ratio(read=2)", 0.0, 2.0),
    ] {
        let c = ok(&format!("mixed {text} n=100"));
        match c.operation {
            Operation::Mixed {
                write_weight,
                read_weight,
                ..
            } => assert_eq!((write_weight, read_weight), (w, r), "{text}"),
            other => panic!("{other:?}"),
        }
    }
    let c = ok("mixed ratio(read=3,write=1) clustering=fixed(1) n=10");
    assert_eq!(
        c.operation,
        Operation::Mixed {
            write_weight: 1.0,
            read_weight: 3.0,
            clustering: KeyDistribution::Fixed(1)
        }
    );
    assert_eq!(c.operation.read_fraction(), 0.75);
    assert_eq!(ok("write n=1").operation.read_fraction(), 0.0);
    assert_eq!(ok("read n=1").operation.read_fraction(), 1.0);
}

#[test]
fn stop_conditions() {
    for (text, secs) in [
        ("100m", 6000),
        ("90m", 5400),
        ("60s", 60),
        ("2h", 7200),
        ("120M", 7200),
        ("1_000s", 1000),
    ] {
        assert_eq!(
            ok(&format!("read duration={text}")).stop,
            Stop::Duration(SimDuration::from_secs(secs)),
            "{text}"
        );
    }
    for (text, n) in [
        ("1000000000", 1_000_000_000),
        ("1_000_000", 1_000_000),
        ("5k", 5_000),
        ("2m", 2_000_000),
        ("1b", 1_000_000_000),
        ("38.85e9", 38_850_000_000),
    ] {
        assert_eq!(
            ok(&format!("write n={text}")).stop,
            Stop::Count(n),
            "{text}"
        );
    }
}

#[test]
fn consistency_levels() {
    for (text, cl) in [
        ("ONE", ConsistencyLevel::One),
        ("two", ConsistencyLevel::Two),
        ("Three", ConsistencyLevel::Three),
        ("quorum", ConsistencyLevel::Quorum),
        ("LOCAL_QUORUM", ConsistencyLevel::LocalQuorum),
        ("all", ConsistencyLevel::All),
        ("local_one", ConsistencyLevel::LocalOne),
        ("EACH_QUORUM", ConsistencyLevel::EachQuorum),
        ("any", ConsistencyLevel::Any),
    ] {
        let c = ok(&format!("read n=1 cl={text}"));
        assert_eq!(c.consistency, cl);
        assert!(cl.to_string().eq_ignore_ascii_case(text));
    }
    let rf3: Vec<u32> = ConsistencyLevel::ALL
        .iter()
        .map(|cl| cl.block_for(3))
        .collect();
    assert_eq!(rf3, vec![1, 1, 2, 3, 2, 3, 2, 2, 1]);
    assert_eq!(ConsistencyLevel::Quorum.block_for(1), 1);
    assert_eq!(ConsistencyLevel::Quorum.block_for(2), 2);
    assert_eq!(ConsistencyLevel::Quorum.block_for(5), 3);
    assert_eq!(ConsistencyLevel::All.block_for(5), 5);
    assert_eq!(ConsistencyLevel::Three.block_for(1), 3); // unavailable at RF 1
}

#[test]
fn schema_options() {
    let one = ok(
        "write n=1 -schema 'replication(factor=3) compaction(strategy=LeveledCompactionStrategy)'",
    );
    let two = ok("write n=1 -schema 'replication(factor=3)' 'compaction(strategy=LeveledCompactionStrategy)'");
    let unquoted = ok(
        "write n=1 -schema replication(factor=3) compaction(strategy=LeveledCompactionStrategy)",
    );
    assert_eq!(one, two);
    assert_eq!(one, unquoted);
    assert_eq!(one.replication_factor, Some(3));
    assert_eq!(one.compaction, Some(CompactionStrategy::Leveled));
    let c = ok("write n=1 -schema compaction(strategy=org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy)");
    assert_eq!(c.compaction, Some(CompactionStrategy::SizeTiered));
    assert_eq!(c.replication_factor, None);
    let c = ok("write n=1 -schema 'compaction(strategy=LeveledCompactionStrategy,sstable_size_in_mb=160)' keyspace=ks1 compression=LZ4Compressor");
    assert_eq!(c.compaction, Some(CompactionStrategy::Leveled));
    assert_eq!(
        c.compaction_options,
        vec![("sstable_size_in_mb".to_string(), "160".to_string())]
    );
    assert_eq!(c.ignored_options, vec!["-schema keyspace=ks1".to_string()]);
    assert_eq!(c.compression, Some(Compression::Lz4));
    let t = ok("write n=1 -schema 'compaction(strategy=TimeWindowCompactionStrategy,compaction_window_unit=MINUTES,compaction_window_size=10)'");
    assert_eq!(t.compaction, Some(CompactionStrategy::TimeWindow));
    assert_eq!(t.compaction_options.len(), 2);
    let error = parse("write n=1 -schema compaction(strategy=DateTieredCompactionStrategy)")
        .unwrap_err()
        .to_string();
    assert!(error.contains("TimeWindowCompactionStrategy"), "{error}");
    assert_eq!(
        ok("write n=1 -schema compression=org.apache.cassandra.io.compress.SnappyCompressor")
            .compression,
        Some(Compression::Snappy)
    );
    assert_eq!(ok("write n=1").compression, None);
    let error = parse("write n=1 -schema compression=ZstdCompressor")
        .unwrap_err()
        .to_string();
    assert!(error.contains("ZstdCompressor"), "{error}");
    assert_eq!(
        ok("write n=1 -schema replication(strategy=SimpleStrategy)").replication_factor,
        Some(1)
    );
    assert_eq!(
        ok("write n=1 -schema replication(strategy=NetworkTopologyStrategy,dc1=3)")
            .replication_factor,
        Some(3)
    );
    assert_eq!(ok("write n=1 -schema replication(strategy=org.apache.cassandra.locator.NetworkTopologyStrategy,factor=2)").replication_factor, Some(2));
    assert_eq!(
        ok("write n=1 -schema replication(strategy=NetworkTopologyStrategy,dc1=3)")
            .replication_strategy,
        Some(ReplicationStrategy::NetworkTopologyStrategy)
    );
    assert_eq!(
        ok("write n=1 -schema replication(factor=3)").replication_strategy,
        Some(ReplicationStrategy::SimpleStrategy)
    );
    assert_eq!(ok("write n=1").replication_strategy, None);
    assert_eq!(
        ReplicationStrategy::NetworkTopologyStrategy.class_name(),
        "NetworkTopologyStrategy"
    );
    assert_eq!(
        CompactionStrategy::Leveled.class_name(),
        "LeveledCompactionStrategy"
    );
}

#[test]
fn rate_options() {
    let rate = |args: &str| ok(&format!("read n=1 -rate {args}")).rate;
    assert_eq!(
        rate("threads=8"),
        Rate::ClosedLoop {
            threads: 8,
            throttle_per_sec: None
        }
    );
    assert_eq!(
        rate("threads=8 limit=100/s"),
        Rate::ClosedLoop {
            threads: 8,
            throttle_per_sec: Some(100)
        }
    );
    assert_eq!(
        rate("threads=8 throttle=100/s"),
        Rate::Throttled {
            threads: 8,
            ops_per_sec: 100
        }
    );
    assert_eq!(
        rate("threads=8 throttle=0/s"),
        Rate::ClosedLoop {
            threads: 8,
            throttle_per_sec: None
        }
    );
    assert_eq!(
        rate("limit=100/S threads=8"),
        Rate::ClosedLoop {
            threads: 8,
            throttle_per_sec: Some(100)
        }
    );
    assert_eq!(
        rate("threads=8 limit=0/s"),
        Rate::ClosedLoop {
            threads: 8,
            throttle_per_sec: None
        }
    );
    assert_eq!(
        rate("fixed=50000/s"),
        Rate::FixedRate {
            ops_per_sec: 50_000,
            threads: None
        }
    );
    assert_eq!(
        rate("threads=64 fixed=50000/s"),
        Rate::FixedRate {
            ops_per_sec: 50_000,
            threads: Some(64)
        }
    );
    assert_eq!(
        rate("auto"),
        Rate::Auto {
            min_threads: 4,
            max_threads: 1000,
            stop_at_saturation: true
        }
    );
    assert_eq!(
        rate("auto threads>=8 threads<=64"),
        Rate::Auto {
            min_threads: 8,
            max_threads: 64,
            stop_at_saturation: true
        }
    );
    assert_eq!(
        rate("threads>=8 threads<=64"),
        Rate::Auto {
            min_threads: 8,
            max_threads: 64,
            stop_at_saturation: false
        }
    );
    // Write with n= but an explicit -rate: the explicit one wins.
    assert_eq!(
        ok("write n=10 -rate auto").rate,
        Rate::Auto {
            min_threads: 4,
            max_threads: 1000,
            stop_at_saturation: true
        }
    );
}

#[test]
fn column_options() {
    let col = |args: &str| ok(&format!("write n=1 -col {args}")).columns;
    assert_eq!(
        col("'size=FIXED(1024) n=FIXED(1)'"),
        ColumnSpec {
            count: SizeDistribution::Fixed(1),
            size: SizeDistribution::Fixed(1024)
        }
    );
    assert_eq!(
        col("size=UNIFORM(10..100)"),
        ColumnSpec {
            count: SizeDistribution::Fixed(5),
            size: SizeDistribution::Uniform { min: 10, max: 100 }
        }
    );
    assert_eq!(
        col("n=uniform(1..3)"),
        ColumnSpec {
            count: SizeDistribution::Uniform { min: 1, max: 3 },
            size: SizeDistribution::Fixed(34)
        }
    );
    assert_eq!(col("size=fixed(4k)").size, SizeDistribution::Fixed(4000));
    let c = ok("write n=1 -col names=a,b,c slice");
    assert_eq!(c.columns.count, SizeDistribution::Fixed(3));
    assert_eq!(c.ignored_options.len(), 2);
    assert_eq!(ok("write n=1 keysize=16").key_size_bytes, 16);
}

#[test]
fn population_options() {
    let pop = |args: &str| ok(&format!("read n=1 -pop {args}")).population;
    let dist = Population::Distribution;
    assert_eq!(
        pop("seq=1..1000"),
        Population::Sequential {
            first: 1,
            last: 1000,
            wrap: true
        }
    );
    assert_eq!(
        pop("seq=1..1m no-wrap"),
        Population::Sequential {
            first: 1,
            last: 1_000_000,
            wrap: false
        }
    );
    assert_eq!(
        pop("seq=1k..2k"),
        Population::Sequential {
            first: 1000,
            last: 2000,
            wrap: true
        }
    );
    assert_eq!(
        pop("dist=uniform(1..1000)"),
        dist(KeyDistribution::Uniform { min: 1, max: 1000 })
    );
    assert_eq!(
        pop("dist=gauss(1..101,5)"),
        dist(gaussian(1, 101, 51.0, 10.0))
    );
    assert_eq!(
        pop("dist=gauss(1..101)"),
        dist(gaussian(1, 101, 51.0, 50.0 / 3.0))
    );
    assert_eq!(
        pop("dist=normal(1..101,51,7)"),
        dist(gaussian(1, 101, 51.0, 7.0))
    );
    assert_eq!(
        pop("dist=NORM(1..101,51,7)"),
        dist(gaussian(1, 101, 51.0, 7.0))
    );
    assert_eq!(
        pop("dist=gaussian(1..38.85e9,19_425_000_000,6.475e9)"),
        dist(gaussian(
            1,
            38_850_000_000,
            19_425_000_000.0,
            6_475_000_000.0
        ))
    );
    assert_eq!(
        pop("dist=uniform(1..38.85b)"),
        dist(KeyDistribution::Uniform {
            min: 1,
            max: 38_850_000_000
        })
    );
    assert_eq!(pop("dist=fixed(42)"), dist(KeyDistribution::Fixed(42)));
    assert!(matches!(
        pop("dist=exp(1..1000)"),
        Population::Distribution(KeyDistribution::Exponential {
            min: 1,
            max: 1000,
            ..
        })
    ));
    assert!(matches!(
        pop("dist=~exp(1..1000)"),
        Population::Distribution(KeyDistribution::Inverted(_))
    ));
    assert_eq!(
        pop("contents=sorted dist=uniform(1..5)"),
        dist(KeyDistribution::Uniform { min: 1, max: 5 })
    );
    assert_eq!(pop("seq=1..10").range(), 1..=10);
    assert_eq!(
        pop("seq=1..10").sequential_keys().map(|mut s| s.next()),
        Some(1)
    );
}

#[test]
fn errors_and_ignored_options() {
    let c = ok("read n=1 -errors retries=3 ignore");
    assert_eq!((c.retries, c.tries(), c.ignore_errors), (3, 4, true));
    let c = ok("read n=1 -errors retries=0");
    assert_eq!(c.tries(), 1);
    let c = ok("read n=1 -mode native cql3 user=a password=b -node 10.0.0.1,10.0.0.2 -log interval=10s -port native=9042 -transport truststore=x truncate=once");
    assert_eq!(
        c.ignored_options,
        vec![
            "-mode native cql3 user=a password=b",
            "-node 10.0.0.1,10.0.0.2",
            "-log interval=10s",
            "-port native=9042",
            "-transport truststore=x truncate=once",
        ]
    );
    let c = ok("write n=1 truncate=once serial-cl=LOCAL_SERIAL");
    assert_eq!(
        c.ignored_options,
        vec!["truncate=once", "serial-cl=LOCAL_SERIAL"]
    );
}

#[test]
fn scylla_c_s_error_options_are_checked_and_listed_as_without_effect() {
    let c = ok("write duration=1m -errors fail-fast retries=2 -rate threads=10");
    assert_eq!((c.tries(), c.ignore_errors), (3, false));
    assert_eq!(c.ignored_options.len(), 1);
    assert!(
        c.ignored_options[0].starts_with("-errors fail-fast (the twin's only failure"),
        "{:?}",
        c.ignored_options
    );
    let c = ok("write duration=1m -errors delay-policy=exponential min-delay-ms=10 max-delay-ms=500 skip-unsupported-columns ignore -rate threads=10");
    assert!(c.ignore_errors);
    assert_eq!(
        c.ignored_options,
        vec![
            "-errors skip-unsupported-columns (the twin generates no column values to skip)",
            "-errors delay-policy=exponential min-delay-ms=10 max-delay-ms=500 (Scylla's c-s waits so only after an Overloaded reply, which the twin's coordinators never send)",
        ]
    );
    for (command, needle) in [
        (
            "write n=1 -errors delay-policy=random",
            "accepted are delay-policy=constant, linear, exponential",
        ),
        (
            "write n=1 -errors min-delay-ms=300 max-delay-ms=200",
            "`min-delay-ms=300` is above max-delay-ms (200 ms)",
        ),
        (
            "write n=1 -errors delay-policy=exponential",
            "needs min-delay-ms= above 0",
        ),
        ("write n=1 -errors fail-fast fail-fast", "repeats"),
        (
            "write n=1 -errors fail-slow",
            "unknown -errors parameter `fail-slow`",
        ),
    ] {
        let error = parse(command).unwrap_err().to_string();
        assert!(error.contains(needle), "{command}: {error}");
        assert!(!error.contains('\n'), "{error}");
    }
}

// ---------------------------------------------------------------------------
// Malformed commands: one line, naming the offending token.

fn rejects(command: &str, token: &str) -> StressError {
    let err = match parse(command) {
        Ok(c) => panic!("`{command}` was accepted: {c:?}"),
        Err(e) => e,
    };
    assert!(
        !err.message().contains('\n'),
        "`{command}`: multi-line message {err:?}"
    );
    assert!(
        err.message().contains(token),
        "`{command}`: message `{err}` does not name `{token}`"
    );
    assert_eq!(err.token(), token, "`{command}`: {err}");
    assert_eq!(err.to_string(), err.message());
    err
}

#[test]
fn malformed_commands() {
    let err = rejects("cassandra-stress write n=10 -foo bar", "-foo");
    assert_eq!(
        err.message(),
        "unknown option `-foo`: accepted options are -schema, -rate, -col, -pop, -errors, -reporting, -mode, -node, -log, -port, -transport, -graph, -jmx, -credentials-file"
    );
    let err = rejects("cassandra-stress frobnicate n=10", "frobnicate");
    assert!(err.message().contains("write"));
    rejects("counter_write n=10", "counter_write");
    let err = rejects("counter_read n=10", "counter_read");
    assert!(
        err.message()
            .contains("runs on counters (each update a read of the counter"),
        "{err}"
    );
    let err = rejects("help", "help");
    assert!(err.message().contains("prints c-s's own help"), "{err}");
    rejects("read n=10 -pop dist=zipf(1..10)", "dist=zipf(1..10)");
    rejects(
        "read n=10 -pop dist=extreme(1..10,2)",
        "dist=extreme(1..10,2)",
    );
    rejects("read n=10 -pop 'dist=gauss(1..10'", "dist=gauss(1..10");
    rejects("read n=10 -pop dist=gauss(10..1)", "dist=gauss(10..1)");
    rejects(
        "read n=10 -pop dist=gauss(1..10,5,0)",
        "dist=gauss(1..10,5,0)",
    );
    rejects("read n=10 -pop dist=gauss(1..10,a)", "dist=gauss(1..10,a)");
    rejects("read n=10 -pop seq=10..1", "seq=10..1");
    rejects(
        "read n=10 -pop seq=1..10 dist=uniform(1..10)",
        "dist=uniform(1..10)",
    );
    rejects("read n=10 -pop no-wrap dist=uniform(1..10)", "no-wrap");
    rejects(
        "read n=10 -pop read-lookback=uniform(1..10) seq=1..10",
        "read-lookback=uniform(1..10)",
    );
    let err = rejects("read n=10 -rate threads=10 limit=abc", "limit=abc");
    assert!(err.message().contains("/s"));
    rejects("read n=10 -rate threads=10 limit=100", "limit=100");
    rejects("read n=10 -rate threads=0", "threads=0");
    // Counts and rates past their bounds: one line naming the bound.
    let err = rejects("read n=10 -rate threads=1000000000", "threads=1000000000");
    assert!(err.message().contains("at most 100000 threads"), "{err}");
    rejects(
        "read n=10 -rate threads>=4 threads<=100001",
        "threads<=100001",
    );
    assert!(parse("read n=10 -rate threads=100000").is_ok());
    let err = rejects(
        "read n=10 -rate threads=10 fixed=20000000/s",
        "fixed=20000000/s",
    );
    assert!(err.message().contains("at most 10000000/s"), "{err}");
    rejects("read n=10 -rate threads=10 limit=1e15/s", "limit=1e15/s");
    assert!(parse("read n=10 -rate threads=10 limit=10000000/s").is_ok());
    rejects("read n=10 -rate threads=-5", "threads=-5");
    rejects("read n=10 -rate threads=ten", "threads=ten");
    rejects("read n=10 -rate limit=100/s", "limit=100/s");
    rejects(
        "read n=10 -rate threads=8 limit=100/s fixed=100/s",
        "fixed=100/s",
    );
    rejects(
        "read n=10 -rate threads=8 limit=100/s throttle=100/s",
        "throttle=100/s",
    );
    rejects("read n=10 -rate auto threads=10", "auto");
    rejects("read n=10 -rate threads>=10 threads<=5", "threads<=5");
    rejects("read n=10 -rate threads=10 speed=fast", "speed=fast");
    rejects(
        "read n=10 -rate 'threads=150 limit=20000/s",
        "'threads=150 limit=20000/s",
    );
    rejects("read n=10 -rate \"threads=150", "\"threads=150");
    let err = rejects("write n=10 duration=10m", "duration=10m");
    assert!(err.message().contains("n=10"));
    rejects("write duration=10m n=10", "duration=10m");
    rejects("write n=10 err<0.1", "err<0.1");
    rejects("write n=10 n=20", "n=20");
    rejects("write n=0", "n=0");
    rejects("write n=abc", "n=abc");
    rejects("write n=1.5", "n=1.5");
    rejects(
        "write n=99999999999999999999999",
        "n=99999999999999999999999",
    );
    rejects("read duration=10d", "duration=10d");
    rejects("read duration=10", "duration=10");
    rejects("read duration=1.5h", "duration=1.5h");
    rejects("read duration=0s", "duration=0s");
    rejects(
        "read duration=99999999999999999h",
        "duration=99999999999999999h",
    );
    rejects("read n=1 cl=FOO", "cl=FOO");
    rejects("read n=1 cl=SERIAL", "cl=SERIAL");
    rejects("read n=1 no-warmup=yes", "no-warmup=yes");
    rejects("read n=1 ratio(write=1,read=1)", "ratio(write=1,read=1)");
    rejects("mixed n=1 ratio(write=1,foo=1)", "ratio(write=1,foo=1)");
    rejects("mixed n=1 ratio(write=0,read=0)", "ratio(write=0,read=0)");
    rejects("mixed n=1 ratio(write=-1,read=1)", "ratio(write=-1,read=1)");
    rejects("mixed n=1 ratio(write=abc)", "ratio(write=abc)");
    rejects("mixed n=1 ratio()", "ratio()");
    rejects("cassandra-stress -rate threads=10", "-rate");
    rejects("cassandra-stress", "");
    rejects("", "");
    rejects("   ", "");
    rejects("write n=1 -rate threads=1 -rate threads=2", "-rate");
    rejects(
        "write n=1 -schema replication(factor=0)",
        "replication(factor=0)",
    );
    rejects(
        "write n=1 -schema replication(factor=x)",
        "replication(factor=x)",
    );
    rejects(
        "write n=1 -schema replication(strategy=Foo)",
        "replication(strategy=Foo)",
    );
    rejects(
        "write n=1 -schema replication(strategy=NetworkTopologyStrategy,dc1=3,dc2=3)",
        "replication(strategy=NetworkTopologyStrategy,dc1=3,dc2=3)",
    );
    rejects(
        "write n=1 -schema compaction(strategy=DateTieredCompactionStrategy)",
        "compaction(strategy=DateTieredCompactionStrategy)",
    );
    rejects(
        "write n=1 -schema 'replication(factor=3)' 'replication(factor=2)'",
        "replication(factor=2)",
    );
    rejects(
        "write n=1 -schema durable_writes=false",
        "durable_writes=false",
    );
    rejects(
        "write n=1 -col size=GAUSSIAN(1..10)",
        "size=GAUSSIAN(1..10)",
    );
    rejects("write n=1 -col n=FIXED(0)", "n=FIXED(0)");
    rejects("write n=1 -col width=3", "width=3");
    rejects("write n=1 -errors retries=x", "retries=x");
    rejects("write n=1 -errors fail", "fail");
    rejects("write n=1 trailing\\", "trailing\\");
    rejects("write n=1 -pop seq=<range>", "seq=<range>");
}

// ---------------------------------------------------------------------------
// Never panic.

fn check_no_panic(input: &str) {
    match parse(input) {
        Ok(command) => {
            let mut rng = Pcg64Mcg::seed_from_u64(7);
            match &command.population {
                Population::Distribution(d) => {
                    for _ in 0..4 {
                        let k = d.sample(&mut rng);
                        assert!(d.range().contains(&k));
                    }
                    let _ = d.mean();
                }
                Population::Sequential { .. } => {
                    let mut keys = command
                        .population
                        .sequential_keys()
                        .unwrap_or_else(|| SequentialKeys::new(0, 0));
                    for _ in 0..4 {
                        let k = keys.next();
                        assert!(command.population.range().contains(&k));
                    }
                }
            }
            let _ = command.columns.count.sample(&mut rng);
            let _ = command.columns.size.sample(&mut rng);
            let _ = command.operation.read_fraction();
            let _ = command
                .consistency
                .block_for(command.effective_replication_factor());
        }
        Err(e) => {
            assert!(!e.message().is_empty());
            assert!(!e.message().contains('\n'), "{e:?}");
        }
    }
}

const VOCABULARY: &[&str] = &[
    "cassandra-stress",
    "write",
    "read",
    "mixed",
    "insert",
    "user",
    "n=",
    "n=10",
    "n=1e9",
    "n=5k",
    "duration=",
    "duration=10m",
    "duration=2h",
    "no-warmup",
    "cl=",
    "cl=quorum",
    "cl=ONE",
    "err<",
    "err<0.02",
    "n>",
    "n<",
    "keysize=",
    "ratio(",
    "ratio(write=1,read=1)",
    "write=",
    "read=",
    "clustering=",
    "-rate",
    "threads=",
    "threads=150",
    "threads=0",
    "limit=",
    "limit=20000/s",
    "throttle=",
    "fixed=",
    "fixed=100/s",
    "auto",
    "threads>=",
    "threads<=",
    "/s",
    "-pop",
    "seq=",
    "seq=1..10",
    "dist=",
    "dist=gauss(",
    "gauss(",
    "gaussian(",
    "exp(",
    "uniform(",
    "fixed(",
    "extreme(",
    "zipf(",
    "~",
    "..",
    "...",
    ",",
    "(",
    ")",
    "1",
    "0",
    "10",
    "-1",
    "1.5",
    "38.85e9",
    "1_000",
    "5k",
    "3m",
    "2b",
    "1e999",
    "18446744073709551615",
    "99999999999999999999999",
    "-schema",
    "replication(",
    "factor=",
    "compaction(",
    "strategy=",
    "LeveledCompactionStrategy",
    "SizeTieredCompactionStrategy",
    "-col",
    "size=",
    "FIXED(1024)",
    "UNIFORM(1..10)",
    "names=",
    "-errors",
    "retries=",
    "ignore",
    "-mode",
    "cql3",
    "native",
    "-node",
    "-log",
    "-port",
    "-transport",
    "-foo",
    "'",
    "\"",
    "\\",
    "<",
    ">",
    "<x>",
    "=",
    " ",
    "\n",
    "\t",
    "é",
    "İ",
    "\u{0}",
    "no-wrap",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(input in any::<String>()) {
        check_no_panic(&input);
    }

    #[test]
    fn arbitrary_ascii_soup_never_panics(input in "[ -~\\n\\t]{0,80}") {
        check_no_panic(&input);
        check_no_panic(&format!("write {input}"));
        check_no_panic(&format!("read n=10 -pop dist={input}"));
    }

    #[test]
    fn token_soups_never_panic(
        tokens in prop::collection::vec(prop::sample::select(VOCABULARY), 0..24),
        glue in prop::collection::vec(prop::sample::select(&[" ", "", " ", "'", "  "][..]), 24),
    ) {
        let mut spaced = String::new();
        let mut glued = String::new();
        for (i, t) in tokens.iter().enumerate() {
            spaced.push_str(t);
            spaced.push(' ');
            glued.push_str(t);
            glued.push_str(glue[i]);
        }
        check_no_panic(&spaced);
        check_no_panic(&glued);
        check_no_panic(&format!("read n=5 {glued}"));
        check_no_panic(&format!("mixed duration=1m -pop dist={glued}"));
    }
}

#[test]
fn the_reporting_options_of_cs_4_and_5_are_read_as_c_s_reads_them() {
    let c = ok("cassandra-stress write n=1000 -reporting output-frequency=10s header-frequency=1m -rate threads=10");
    assert_eq!(
        c.reporting,
        Reporting {
            output_every: 10,
            header_every: 60,
        }
    );
    assert_eq!(
        ok("cassandra-stress write n=10").reporting,
        Reporting::default()
    );
    assert_eq!(
        ok("cassandra-stress write n=10 -reporting output-frequency=2h").reporting,
        Reporting {
            output_every: 7_200,
            header_every: 0,
        }
    );
    let message = |command: &str| parse(command).expect_err(command).to_string();
    assert!(
        message("cassandra-stress write n=10 -reporting output-frequency=500ms")
            .contains("whole seconds")
    );
    assert!(
        message("cassandra-stress write n=10 -reporting output-frequency=10")
            .contains("a whole number and a unit")
    );
    assert!(message("cassandra-stress write n=10 -reporting every=10s")
        .contains("accepted are output-frequency=DURATION, header-frequency=DURATION"));
    assert!(message(
        "cassandra-stress write n=10 -reporting output-frequency=1s output-frequency=2s"
    )
    .contains("repeats"));
    // c-s 4.0+ connection options are accepted and said not to matter.
    let c = ok("cassandra-stress write n=10 -jmx user=a password=b -credentials-file /tmp/creds");
    assert_eq!(
        c.ignored_options,
        vec![
            "-jmx user=a password=b".to_string(),
            "-credentials-file /tmp/creds".to_string()
        ]
    );
    // `-errors` takes what Apache c-s takes (SettingsErrors: retries=,
    // ignore, skip-read-validation) and what Scylla's c-s adds
    // (fail-fast and the retry delays: see
    // scylla_c_s_error_options_are_checked_and_listed_as_without_effect).
    assert!(message("cassandra-stress write n=10 -errors fail-safe")
        .contains("accepted are retries=N, ignore, skip-read-validation"));
}
