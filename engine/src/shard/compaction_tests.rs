//! Tests of the compaction manager: strategies, the controllers, preloaded
//! tables, Cassandra's compaction limits.

use super::{PreloadState, Shard};
use crate::action::{Action, ClientRequest, Operation, RequestId, SchedulingGroup};
use crate::compaction::{lcs, CompactionStrategy};
use crate::config::ShardConfig;
use crate::consistency::ConsistencyLevel;
use crate::controller::BacklogController;
use crate::controller::{compaction_curve_2_2, COMPACTION_TICK};
use crate::sstable::SSTable;
use crate::testing;
use crate::token_set::KEY_SHARE_ONE;
use units::{SimDuration, SimTime};

const MIB: u64 = 1024 * 1024;

/// Runs writes of keys `keys` through a shard whose CPU and I/O complete
/// instantly, firing due timers at `now`; returns the shares set.
fn write_all(
    shard: &mut Shard,
    keys: std::ops::Range<u64>,
    now: SimTime,
) -> Vec<(SchedulingGroup, f64)> {
    let mut shares = Vec::new();
    for key in keys {
        shard.handle_client_request(
            now,
            ClientRequest {
                id: RequestId(key),
                operation: Operation::Write {
                    rows: 1,
                    key,
                    value_bytes: 1024,
                    timestamp: 1,
                },
                consistency: ConsistencyLevel::One,
            },
        );
        let mut outcome = testing::Outcome::default();
        testing::run_all(shard, now, &mut outcome);
        assert!(outcome.sent.is_empty(), "a single shard owns every key");
        shares.extend(outcome.shares);
    }
    shares
}

#[test]
fn size_tiered_compaction_keeps_merging_flushed_sstables() {
    let mut shard = Shard::new(ShardConfig::scylla_defaults(64 * MIB), SimTime::ZERO);
    write_all(&mut shard, 0..200_000, SimTime::from_nanos(1));
    let stats = shard.stats();
    assert!(stats.flushes_completed >= 16, "{stats:?}");
    assert!(stats.compactions_completed >= 4, "{stats:?}");
    // Sequential keys never overlap: compaction keeps every row.
    let rows: u64 = shard.sstables().iter().map(|sstable| sstable.rows).sum();
    assert_eq!(rows + shard.write.active().rows, 200_000);
    assert!(
        (stats.sstable_count as usize) < stats.flushes_completed as usize / 2,
        "fewer SSTables than flushes: {stats:?}"
    );
}

#[test]
fn the_compaction_controller_sets_the_curve_shares_within_one_tick() {
    let mut config = ShardConfig::scylla_defaults(64 * MIB);
    config.compaction_controller = Some(BacklogController::Curve {
        curve: compaction_curve_2_2(),
        tick: COMPACTION_TICK,
    });
    // Keep compaction from running: only the backlog's growth is seen.
    config.compaction.stcs_options_mut().min_threshold = 1000;
    config.compaction_enforce_min_threshold = true;
    let mut shard = Shard::new(config, SimTime::ZERO);
    write_all(&mut shard, 0..60_000, SimTime::from_nanos(1));
    let backlog = shard.stats().compaction_backlog;
    assert!(
        backlog > 0.5,
        "several flushed SSTables make a backlog: {backlog}"
    );
    let tick = shard.poll_timeout().expect("controller timer armed");
    assert_eq!(tick, SimTime::ZERO + COMPACTION_TICK);
    shard.handle_timeout(tick);
    let set: Vec<_> = std::iter::from_fn(|| shard.poll_action()).collect();
    let expected = compaction_curve_2_2().shares_for(backlog);
    assert!(
        set.contains(&Action::SetShares {
            group: SchedulingGroup::Compaction,
            shares: expected
        }),
        "{set:?} should set {expected}"
    );
    assert_eq!(shard.stats().compaction_shares, expected);
}

#[test]
fn preloaded_data_holds_every_key_exactly_once() {
    let mut config = ShardConfig::scylla_defaults(64 * MIB);
    config.key_ownership_fraction = 0.5;
    let mut shard = Shard::new(config, SimTime::ZERO);
    // 100,000 keys, half of them this shard's: 50,000 rows in three SSTables.
    shard.preload(
        &[
            (30_000 * 300, 30_000),
            (15_000 * 300, 15_000),
            (5_000 * 300, 5_000),
        ],
        1,
        100_000,
    );
    assert_eq!(shard.stats().sstable_count, 3);
    let holders: Vec<usize> = (1..=100_000u64)
        .map(|key| {
            shard
                .sstables()
                .iter()
                .filter(|sstable| crate::read::sstable_contains(sstable, key, 0.5))
                .count()
        })
        .collect();
    assert!(
        holders.iter().all(|count| *count <= 1),
        "no key is in two preloaded SSTables"
    );
    // Every key would be found on the shard that owns it: with half the
    // keys routed here, the three slices cover the whole hash space.
    let held = holders.iter().filter(|count| **count == 1).count();
    assert_eq!(held, 100_000, "the slices cover every key routed here");
    assert!(
        shard.stats().compaction_backlog > 0.0,
        "preloaded SSTables count in the backlog"
    );
}

/// A shard owning a third of a million keys holds 333,333 rows (the
/// cluster rounds), in size-tiered SSTables whose rows round down
/// again: the preload still holds every key routed to it, so no read of
/// a preloaded key finds nothing (a volume-mode run read one such key
/// as not found). A preload of half the rows holds half the keys.
#[test]
fn a_preload_of_every_owned_key_holds_every_key_despite_rounding() {
    let keys = (1, 1_000_000);
    let mut config = ShardConfig::scylla_defaults(64 * MIB);
    config.key_ownership_fraction = 1.0 / 3.0;
    let mut all = Shard::new(config.clone(), SimTime::ZERO);
    all.preload_table(333_333, 1_000, keys, PreloadState::Compacted);
    assert!(all.sstables().len() >= 3, "{} tiers", all.sstables().len());
    let slices: Vec<(u64, u64)> = all
        .sstables()
        .iter()
        .map(|sstable| {
            sstable
                .key_share
                .expect("preloaded SSTables hold key shares")
        })
        .collect();
    assert_eq!(slices[0].0, 0);
    for pair in slices.windows(2) {
        assert_eq!(pair[0].1, pair[1].0, "slices are consecutive");
    }
    assert_eq!(slices.last().map(|slice| slice.1), Some(KEY_SHARE_ONE));
    let missing = (keys.0..=keys.1)
        .filter(|&key| all.population.version(key, 0, 1.0).is_none())
        .count();
    assert_eq!(missing, 0, "keys no preloaded row holds");

    let mut half = Shard::new(config, SimTime::ZERO);
    half.preload_table(166_667, 1_000, keys, PreloadState::Compacted);
    let held = (keys.0..=keys.1)
        .filter(|&key| half.population.version(key, 0, 1.0).is_some())
        .count();
    assert!((495_000..505_000).contains(&held), "{held} of a million");
}

fn leveled(sstable_size_bytes: u64, push_to_highest_level: bool) -> CompactionStrategy {
    CompactionStrategy::Leveled(crate::compaction::LcsOptions {
        sstable_size_bytes,
        push_to_highest_level,
        ..crate::compaction::LcsOptions::default()
    })
}

/// Asserts every level from 1 up holds SSTables of at most `max_bytes`
/// over disjoint token ranges; returns the SSTables per level.
fn check_levels(sstables: &[SSTable], max_bytes: u64) -> [usize; lcs::MAX_LEVELS] {
    let mut per_level = [0; lcs::MAX_LEVELS];
    for level in 1..lcs::MAX_LEVELS as u32 {
        let mut ranges: Vec<(u64, u64)> = sstables
            .iter()
            .filter(|sstable| sstable.level == level)
            .map(|sstable| {
                assert!(sstable.data_bytes <= max_bytes, "{sstable:?}");
                sstable
                    .token_range
                    .expect("leveled SSTables have a token range")
            })
            .collect();
        ranges.sort_unstable();
        assert!(
            ranges.windows(2).all(|pair| pair[0].1 <= pair[1].0),
            "level {level} overlaps: {ranges:?}"
        );
        per_level[level as usize] = ranges.len();
    }
    per_level
}

#[test]
fn leveled_compaction_keeps_levels_disjoint_and_sstables_at_most_the_size() {
    let mut config = ShardConfig::scylla_defaults(64 * MIB);
    config.compaction = leveled(MIB, false);
    let mut shard = Shard::new(config, SimTime::ZERO);
    write_all(&mut shard, 0..200_000, SimTime::from_nanos(1));
    let stats = shard.stats();
    assert!(stats.flushes_completed >= 16, "{stats:?}");
    let per_level = check_levels(shard.sstables(), MIB);
    // ~200 MiB: L1 (10 MiB) and L2 (100 MiB) filled, the rest in L3.
    assert!(
        per_level[1] >= 9 && per_level[2] >= 90 && per_level[3] > 0,
        "{per_level:?}"
    );
    assert!(shard.sstables().iter().filter(|s| s.level == 0).count() <= 1);
    // Sequential keys never overlap: compaction keeps every row (to
    // within the rounding of rows to whole ones over some 300 jobs),
    // though each output mixes keys of several flushes over its token
    // range.
    let rows: u64 = shard
        .sstables()
        .iter()
        .map(|sstable| sstable.rows)
        .sum::<u64>()
        + shard
            .write
            .memtables()
            .map(|memtable| memtable.rows)
            .sum::<u64>();
    assert!((200_000 - 20..=200_000).contains(&rows), "{rows}");
    assert!(stats.compaction_backlog > 0.0);
}

#[test]
fn leveled_outputs_hold_the_rows_of_their_token_ranges_in_data_mode() {
    let mut config = ShardConfig::scylla_defaults(64 * MIB);
    config.data_mode = true;
    config.compaction = leveled(MIB / 4, true);
    let mut shard = Shard::new(config, SimTime::ZERO);
    // Three passes over 20,000 keys: overwrites merge away.
    for pass in 0..3u64 {
        write_all(
            &mut shard,
            pass * 1_000_000..pass * 1_000_000 + 20_000,
            SimTime::from_nanos(1),
        );
    }
    check_levels(shard.sstables(), MIB / 4);
    let mut keys = 0;
    for sstable in shard.sstables().iter().filter(|s| s.level > 0) {
        let (low, high) = sstable.token_range.unwrap();
        let cells = sstable.cells.as_ref().expect("data mode");
        assert_eq!(cells.len() as u64, sstable.rows);
        assert!(cells
            .cells()
            .iter()
            .all(|(key, _)| (low..high).contains(&crate::read::key_position(*key))));
        keys += cells.len();
    }
    assert!(keys > 0);
}

/// Runs a shard whose CPU and I/O complete instantly from `from` to
/// `until`, firing its timers; returns the most compactions that ran at
/// once.
fn run_timers(shard: &mut Shard, from: SimTime, until: SimTime) -> u64 {
    let mut most = shard.stats().active_compactions;
    testing::run_until(
        shard,
        from,
        until,
        &mut testing::Outcome::default(),
        |shard| {
            most = most.max(shard.stats().active_compactions);
            false
        },
    );
    most
}

#[test]
fn cassandra_limits_compactions_at_once_and_the_bytes_they_read() {
    let mut config = ShardConfig::cassandra_defaults(64 * MIB);
    config.concurrent_compactors = Some(1);
    config.compaction_throughput_bytes_per_sec = Some(4 * MIB);
    let mut shard = Shard::new(config, SimTime::ZERO);
    let start = SimTime::from_nanos(1);
    write_all(&mut shard, 0..200_000, start);
    assert!(shard.stats().flushes_completed >= 8);
    let compacted_at_start = shard.stats().bytes_compacted;
    let until = SimTime::ZERO + SimDuration::from_secs(10);
    let most = run_timers(&mut shard, start, until);
    assert_eq!(most, 1, "concurrent_compactors = 1");
    let compacted = shard.stats().bytes_compacted;
    // Writes at one instant: the first request and one second of stored
    // permits at most, then 4 MiB/s.
    let bound = 4 * MIB * 11 + 4 * 128 * 1024;
    assert!(compacted <= bound, "{compacted} > {bound}");
    assert!(compacted - compacted_at_start >= 4 * MIB * 8, "{compacted}");
    // Unthrottled, everything compacts at the writes' instant.
    let mut config = ShardConfig::cassandra_defaults(64 * MIB);
    config.compaction_throughput_bytes_per_sec = None;
    let mut free = Shard::new(config, SimTime::ZERO);
    write_all(&mut free, 0..200_000, start);
    assert!(free.stats().bytes_compacted > compacted);
    assert_eq!(free.stats().active_compactions, 0);
}

#[test]
fn a_leveled_preload_fills_levels_and_holds_every_key_once() {
    let mut config = ShardConfig::scylla_defaults(64 * MIB);
    config.key_ownership_fraction = 0.5;
    config.compaction = leveled(MIB, false);
    let mut shard = Shard::new(config, SimTime::ZERO);
    // 50,000 rows of 300 bytes (14.3 MiB): L1 10 MiB, L2 the rest.
    shard.preload_table(50_000, 300, (1, 100_000), PreloadState::Compacted);
    let per_level = check_levels(shard.sstables(), MIB);
    assert_eq!(&per_level[..4], &[0, 10, 5, 0]);
    let mut held = 0;
    for key in 1..=100_000u64 {
        let holders = shard
            .sstables()
            .iter()
            .filter(|sstable| crate::read::sstable_contains(sstable, key, 0.5))
            .count();
        assert!(holders <= 1, "key {key} is in {holders} SSTables");
        held += holders;
        // A lookup consults one SSTable per level at most.
        let consulted = shard
            .sstables()
            .iter()
            .filter(|sstable| crate::read::bloom_filter_passes(sstable, key, 0.5))
            .count();
        assert!(consulted <= 2, "key {key}: {consulted}");
    }
    // Rows per level are whole, rounded down, yet the slices hold
    // every key.
    assert_eq!(held, 100_000);
    // Nothing is due on a settled layout.
    shard.maybe_start_compactions(SimTime::ZERO);
    assert_eq!(shard.stats().active_compactions, 0);
}
