//! Tests of a single shard: the write path, flushing, batch commitlog,
//! throttling, reads and preloads.

use super::{MergePhases, PreloadState, Shard, MERGE_TIERS};
use crate::action::{
    Action, ClientRequest, CpuWork, IoClass, IoKind, IoRequest, Operation, ReplyStatus, RequestId,
    SchedulingGroup,
};
use crate::commitlog::SyncMode;
use crate::config::ShardConfig;
use crate::consistency::ConsistencyLevel;
use crate::testing;
use units::SimTime;

const MIB: u64 = 1024 * 1024;

/// Runs a single shard's actions with every CPU task and I/O done at
/// once ([`testing::run_all`]); collects the replies' ids.
fn drive(node: &mut Shard, now: SimTime, replies: &mut Vec<RequestId>) {
    let mut outcome = testing::Outcome::default();
    testing::run_all(node, now, &mut outcome);
    assert!(outcome.sent.is_empty(), "a single shard owns every key");
    replies.extend(outcome.replies.iter().map(|reply| reply.id));
}

fn write(id: u64, key: u64) -> ClientRequest {
    ClientRequest {
        id: RequestId(id),
        operation: Operation::Write {
            rows: 1,
            key,
            value_bytes: 1024,
            timestamp: 1,
        },
        consistency: ConsistencyLevel::One,
    }
}

/// The SSTable bytes a flush of preloaded 1032-byte rows writes: the
/// rows whose memtable memory fills a memtable to its flush point.
fn preload_flush_bytes(config: &ShardConfig) -> u64 {
    let row_memory = 1032 - config.sstable_row_overhead_bytes + config.memtable_row_overhead_bytes;
    config.flush_soft_limit_bytes() / row_memory * 1032
}

/// The shard's SSTables of exactly `bytes`.
fn sstables_of(shard: &Shard, bytes: u64) -> usize {
    shard
        .sstables()
        .iter()
        .filter(|sstable| sstable.data_bytes == bytes)
        .count()
}

#[test]
fn a_mid_cycle_preload_fills_the_memtable_and_the_low_tiers_and_then_flushes_on_time() {
    let config = ShardConfig::scylla_defaults(64 * MIB);
    let soft_limit = config.flush_soft_limit_bytes();
    // 1032-byte rows: 1,000 flushes' worth.
    let flush_bytes = preload_flush_bytes(&config);
    let rows = 1000 * flush_bytes / 1032;
    let compacted = {
        let mut shard = Shard::new(config.clone(), SimTime::ZERO);
        shard.preload_table(rows, 1032, (1, rows), PreloadState::Compacted);
        shard
    };
    assert_eq!(compacted.stats().memtable_bytes, 0);
    let mut shard = Shard::new(config.clone(), SimTime::ZERO);
    // Scylla 2.2 merges pairs, so the two lowest tiers (1 and 2 flushes)
    // cycle through 4 flushes: 0.8 is 3 flushes in (one SSTable of each),
    // with the memtable 0.9 full.
    shard.preload_table(
        rows,
        1032,
        (1, rows),
        PreloadState::MidCycle {
            tiers: 0.8,
            memtable: 0.9,
            merges: MergePhases::IDLE,
        },
    );
    let stats = shard.stats();
    assert_eq!(stats.sstable_bytes, compacted.stats().sstable_bytes);
    let flush_sized = |shard: &Shard, flushes: u64| sstables_of(shard, flushes * flush_bytes);
    assert_eq!((flush_sized(&shard, 1), flush_sized(&shard, 2)), (1, 1));
    let fill = stats.virtual_dirty_bytes as f64 / soft_limit as f64;
    assert!((0.89..0.9).contains(&fill), "memtable fill {fill}");
    assert!(stats.commitlog_segments >= 1, "{stats:?}");
    // The memtable reaches the flush threshold after a tenth of a
    // flush's writes, not a whole one; the flush frees the preloaded
    // commitlog segments.
    let mut replies = Vec::new();
    let now = SimTime::from_nanos(1);
    let mut writes = 0;
    while shard.stats().flushes_completed == 0 {
        shard.handle_client_request(now, write(writes, writes % rows + 1));
        drive(&mut shard, now, &mut replies);
        writes += 1;
    }
    let flush_rows = soft_limit / (8 + 1024 + config.memtable_row_overhead_bytes);
    assert!(
        writes < flush_rows / 5,
        "{writes} writes to the first flush (a full memtable takes {flush_rows})"
    );
    assert!(shard.stats().commitlog_segments <= 2, "{:?}", shard.stats());
}

#[test]
fn a_mid_cycle_preload_resumes_the_merges_its_phases_place_part_way() {
    let config = ShardConfig::scylla_defaults(64 * MIB);
    let flush_bytes = preload_flush_bytes(&config);
    // 999 flushes' worth and a rest: 1111100111 in base 2.
    let rows = (1000 * flush_bytes - 1) / 1032;
    let preload = |merges: MergePhases| {
        let mut shard = Shard::new(config.clone(), SimTime::ZERO);
        shard.preload_table(
            rows,
            1032,
            (1, rows),
            PreloadState::MidCycle {
                tiers: 0.0,
                memtable: 0.0,
                merges,
            },
        );
        shard
    };
    let idle = preload(MergePhases::IDLE);
    assert_eq!(idle.stats().active_compactions, 0);
    // Scylla 2.2 merges pairs: tier 0 above the two lowest is 4 flushes
    // (phase 0.1 of a duty of 0.4: a quarter through), tier 2 is 16
    // (0.3: three quarters through); tier 1 (8) is not merging.
    let mut phases = [0.9; MERGE_TIERS];
    phases[0] = 0.1;
    phases[2] = 0.3;
    let mut shard = preload(MergePhases { duty: 0.4, phases });
    let stats = shard.stats();
    assert_eq!(stats.sstable_bytes, idle.stats().sstable_bytes);
    assert_eq!(stats.active_compactions, 2);
    let tier = |shard: &Shard, flushes: u64| sstables_of(shard, flushes * flush_bytes);
    assert_eq!(
        (tier(&shard, 4), tier(&shard, 8), tier(&shard, 16)),
        (2, 0, 2)
    );
    // Each merge reads only what it had left. (The 32-flush output then
    // pairs with the settled one, so stop at the two.)
    let now = SimTime::from_nanos(1);
    let mut outcome = testing::Outcome::default();
    testing::run_until(&mut shard, now, now, &mut outcome, |shard| {
        shard.stats().compactions_completed >= 2
    });
    assert_eq!(
        shard.stats().compactions_completed,
        2,
        "the merges run to their end"
    );
    assert!(outcome.sent.is_empty() && outcome.replies.is_empty());
    let stats = shard.stats();
    let expected = (0.75 * 8.0 + 0.25 * 32.0) * flush_bytes as f64;
    let read = stats.bytes_compacted as f64;
    assert!(
        (read - expected).abs() < 0.01 * expected,
        "read {read} of the expected {expected}"
    );
    assert_eq!((tier(&shard, 8), tier(&shard, 32)), (1, 2));
}

#[test]
fn every_write_is_acknowledged_and_memtables_flush_at_the_soft_limit() {
    let config = ShardConfig::scylla_defaults(64 * MIB);
    let soft_limit = config.flush_soft_limit_bytes();
    let mut node = Shard::new(config, SimTime::ZERO);
    let mut replies = Vec::new();
    let now = SimTime::from_nanos(1);
    for key in 0..20_000 {
        node.handle_client_request(now, write(key, key));
        drive(&mut node, now, &mut replies);
    }
    assert_eq!(replies.len(), 20_000);
    let stats = node.stats();
    assert!(stats.flushes_completed >= 1, "{stats:?}");
    assert!(stats.virtual_dirty_bytes < soft_limit);
    let rows: u64 = node.sstables().iter().map(|s| s.rows).sum();
    assert_eq!(
        rows + node.write.active().rows,
        20_000,
        "every row is in an SSTable or the memtable"
    );
    assert!(
        stats.commitlog_segments <= 3,
        "flushed segments are released: {stats:?}"
    );
}

#[test]
fn in_batch_mode_a_write_is_acknowledged_only_after_its_commitlog_write() {
    let config = ShardConfig {
        commitlog_sync: SyncMode::Batch,
        ..ShardConfig::scylla_defaults(64 * MIB)
    };
    let mut node = Shard::new(config, SimTime::ZERO);
    let now = SimTime::from_nanos(1);
    let mut commitlog_writes = Vec::new();
    let mut replies = Vec::new();
    // Run the CPU, hold the I/Os.
    let step = |node: &mut Shard, ios: &mut Vec<IoRequest>, replies: &mut Vec<RequestId>| {
        let mut outcome = testing::Outcome::default();
        testing::run(node, now, &mut outcome, |action| match action {
            Action::SubmitIo(_) => testing::Verdict::Hold,
            _ => testing::Verdict::Carry,
        });
        ios.extend(outcome.held);
        replies.extend(outcome.replies.iter().map(|reply| reply.id));
    };
    for id in 0..30 {
        node.handle_client_request(now, write(id, id));
        step(&mut node, &mut commitlog_writes, &mut replies);
    }
    // 25 writes in flight (one entry each), the other 5 grouped later.
    assert_eq!(commitlog_writes.len(), 25);
    assert!(commitlog_writes
        .iter()
        .all(|io| io.class == IoClass::Commitlog));
    assert!(
        replies.is_empty(),
        "nothing is acknowledged before it is on disk"
    );
    // Completing the second write acknowledges nothing: the first is
    // still in flight.
    let second = commitlog_writes.remove(1);
    node.handle_io_done(now, second.id);
    step(&mut node, &mut commitlog_writes, &mut replies);
    assert!(replies.is_empty());
    let first = commitlog_writes.remove(0);
    node.handle_io_done(now, first.id);
    step(&mut node, &mut commitlog_writes, &mut replies);
    assert_eq!(replies, vec![RequestId(0), RequestId(1)]);
    // Two slots freed: the 5 waiting entries went out as one write.
    assert_eq!(commitlog_writes.len(), 24);
    while !commitlog_writes.is_empty() {
        let io = commitlog_writes.remove(0);
        node.handle_io_done(now, io.id);
        step(&mut node, &mut commitlog_writes, &mut replies);
    }
    assert_eq!(replies.len(), 30);
    assert_eq!(node.stats().writes_completed, 30);
}

#[test]
fn writes_wait_at_the_dirty_limit_and_resume_after_the_flush() {
    let mut node = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
    let now = SimTime::from_nanos(1);
    let mut replies = Vec::new();
    let mut flush_ios = Vec::new();
    let mut key = 0;
    // Complete CPU and commitlog I/O at once, but hold every flush write.
    while node.stats().writes_throttled == 0 {
        node.handle_client_request(now, write(key, key));
        key += 1;
        let mut outcome = testing::Outcome::default();
        testing::run(&mut node, now, &mut outcome, |action| match action {
            Action::SubmitIo(io) if io.class == IoClass::MemtableFlush => testing::Verdict::Hold,
            _ => testing::Verdict::Carry,
        });
        assert!(outcome.sent.is_empty(), "a single shard owns every key");
        flush_ios.extend(outcome.held.iter().map(|io| io.id));
        replies.extend(outcome.replies.iter().map(|reply| reply.id));
        assert!(key < 1_000_000, "writes never throttled");
    }
    let acknowledged = replies.len();
    assert_eq!(acknowledged as u64, key - 1, "only the last write waits");
    for io in flush_ios {
        node.handle_io_done(now, io);
    }
    drive(&mut node, now, &mut replies);
    assert_eq!(replies.len() as u64, key, "the throttled write resumed");
}

/// While a flush runs, the memtable that took over is not sealed with a
/// row or two: each flush writes a memtable that reached the limit, in
/// Scylla's defaults and Cassandra's alike.
#[test]
fn a_flush_under_way_does_not_seal_the_next_memtable_early() {
    for config in [
        ShardConfig::scylla_defaults(64 * MIB),
        ShardConfig::cassandra_defaults(64 * MIB),
    ] {
        let row_memory = 8 + 1024 + config.memtable_row_overhead_bytes;
        let flush_rows = config.flush_soft_limit_bytes() / row_memory;
        let mut node = Shard::new(config.clone(), SimTime::ZERO);
        let now = SimTime::from_nanos(1);
        let mut replies = Vec::new();
        let mut held = Vec::new();
        let mut key = 0;
        // Each flush's first writes are held for a tenth of a memtable's
        // writes, so writes come in while it runs.
        while node.stats().flushes_completed < 3 {
            node.handle_client_request(now, write(key, key));
            key += 1;
            let mut outcome = testing::Outcome::default();
            testing::run(&mut node, now, &mut outcome, |action| match action {
                Action::SubmitIo(io) if io.class == IoClass::MemtableFlush => {
                    testing::Verdict::Hold
                }
                _ => testing::Verdict::Carry,
            });
            held.extend(outcome.held.iter().map(|io| io.id));
            replies.extend(outcome.replies.iter().map(|reply| reply.id));
            if !held.is_empty() && key % (flush_rows / 10) == 0 {
                for io in held.drain(..) {
                    node.handle_io_done(now, io);
                }
                drive(&mut node, now, &mut replies);
            }
            assert!(key < 100 * flush_rows, "three flushes never came");
        }
        let smallest = node.sstables().iter().map(|s| s.rows).min().unwrap();
        assert!(
            smallest > flush_rows / 2,
            "a flush of {smallest} rows (a memtable at the limit holds {flush_rows})"
        );
        assert_eq!(replies.len() as u64, key, "every write answered");
    }
}

#[test]
fn reads_find_rows_in_memtables_and_sstables_with_one_index_and_one_data_read_each() {
    let mut shard = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
    let now = SimTime::from_nanos(1);
    let mut replies = Vec::new();
    for key in 0..20_000 {
        shard.handle_client_request(now, write(key, key));
        drive(&mut shard, now, &mut replies);
    }
    assert!(!shard.sstables().is_empty());
    let flushed_key = shard.sstables()[0].first_key;
    let read = |shard: &mut Shard, id: u64, key: u64| {
        shard.handle_client_request(
            now,
            ClientRequest {
                id: RequestId(id),
                operation: Operation::read(key),
                consistency: ConsistencyLevel::One,
            },
        );
        let mut read_ios = Vec::new();
        let mut outcome = testing::Outcome::default();
        testing::run(shard, now, &mut outcome, |action| {
            match action {
                Action::RunCpu(task) => {
                    // The replica's part of a read is the query group's
                    // (its own in 2.2); coordinating it is not.
                    let replica_work = matches!(
                        task.work,
                        CpuWork::ReadRequest { .. }
                            | CpuWork::IndexParse { .. }
                            | CpuWork::DataParse { .. }
                    );
                    assert_eq!(
                        task.group == SchedulingGroup::Query,
                        replica_work,
                        "{task:?}"
                    );
                }
                Action::SubmitIo(io) => {
                    assert_eq!((io.kind, io.class), (IoKind::Read, IoClass::Query));
                    read_ios.push(io.bytes);
                }
                _ => {}
            }
            testing::Verdict::Carry
        });
        assert!(outcome.sent.is_empty(), "a single shard owns every key");
        let status = outcome
            .replies
            .last()
            .expect("every read is answered")
            .status;
        (read_ios, status)
    };
    let (ios, status) = read(&mut shard, 1_000_000, flushed_key);
    assert_eq!(ios, [4096, 4096], "an index page, then the 1 KB row's page");
    assert!(
        matches!(status, ReplyStatus::Found { value_bytes, .. } if (1000..=1100).contains(&value_bytes)),
        "{status:?}"
    );
    let newest_key = 19_999;
    let (ios, status) = read(&mut shard, 1_000_001, newest_key);
    assert!(ios.is_empty(), "the active memtable answers without I/O");
    assert!(matches!(status, ReplyStatus::Found { .. }));
    let (ios, status) = read(&mut shard, 1_000_002, 10_000_000);
    assert!(ios.is_empty(), "no SSTable's range holds the key");
    assert_eq!(status, ReplyStatus::NotFound);
}

#[test]
fn the_sync_timer_writes_a_partial_commitlog_buffer() {
    let mut node = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
    let now = SimTime::from_nanos(1);
    node.handle_client_request(now, write(1, 1));
    let mut ios = 0;
    let mut drain = |node: &mut Shard, now| {
        let mut outcome = testing::Outcome::default();
        testing::run(node, now, &mut outcome, |action| {
            if matches!(action, Action::SubmitIo(_)) {
                ios += 1;
            }
            testing::Verdict::Carry
        });
        assert!(outcome.sent.is_empty(), "a single shard owns every key");
    };
    drain(&mut node, now);
    let deadline = node.poll_timeout().expect("the sync timer is armed");
    assert_eq!(
        deadline,
        SimTime::ZERO + node.config().commitlog_sync_period
    );
    node.handle_timeout(deadline);
    drain(&mut node, deadline);
    assert_eq!(ios, 1, "one partial buffer written at the sync");
    assert!(node.poll_timeout().unwrap() > deadline, "the timer re-arms");
}

/// A page-cache miss reads what the host measured a miss to bring in
/// (read-ahead) when that is more than the read asks for, and brings it
/// all into the cache: the same reads then hit sooner than with misses
/// that bring in only their own pages.
#[test]
fn a_page_cache_miss_reads_ahead_and_caches_what_it_read() {
    use crate::cache::page_cache::PageCacheConfig;
    use crate::cache::row_cache::HotMass;
    use crate::config::PageCacheSetup;
    let reads_with = |miss_bytes: u64| {
        let mut config = ShardConfig::cassandra_defaults(64 * MIB);
        config.page_cache = Some(PageCacheSetup {
            config: PageCacheConfig {
                miss_bytes,
                ..PageCacheConfig::cassandra(8 << 30, 1 << 30, 1 << 30)
            },
            popularity: Some(HotMass::uniform()),
            key_rows: 20_000.0,
            index_pages: true,
        });
        let mut shard = Shard::new(config, SimTime::ZERO);
        let now = SimTime::from_nanos(1);
        let mut replies = Vec::new();
        for key in 0..20_000 {
            shard.handle_client_request(now, write(key, key));
            drive(&mut shard, now, &mut replies);
        }
        let flushed = shard.sstables()[0].first_key;
        let mut sizes = Vec::new();
        for id in 0..2_000 {
            shard.handle_client_request(
                now,
                ClientRequest {
                    id: RequestId(1_000_000 + id),
                    operation: Operation::read(flushed + id % 500),
                    consistency: ConsistencyLevel::One,
                },
            );
            let mut outcome = testing::Outcome::default();
            testing::run(&mut shard, now, &mut outcome, |action| {
                if let Action::SubmitIo(io) = action {
                    sizes.push(io.bytes);
                }
                testing::Verdict::Carry
            });
        }
        sizes
    };
    let asked = reads_with(0);
    let ahead = reads_with(24_808);
    assert!(!asked.is_empty() && !ahead.is_empty());
    assert!(asked.iter().all(|&bytes| bytes < 24_808), "{asked:?}");
    assert!(ahead.iter().all(|&bytes| bytes == 24_808), "{ahead:?}");
    assert!(
        ahead.len() * 3 < asked.len(),
        "read-ahead warms the cache faster: {} misses against {}",
        ahead.len(),
        asked.len()
    );
}
