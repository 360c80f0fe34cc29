//! Tests of a shard's crash and restart: what survives, the commitlog
//! replay, and completions from a previous life.

use super::Shard;
use crate::action::{Action, ClientRequest, IoClass, IoRequest, Operation, ReplyStatus, RequestId};
use crate::cells::RowVersion;
use crate::commitlog::SyncMode;
use crate::config::ShardConfig;
use crate::consistency::ConsistencyLevel;
use crate::testing::{self, Outcome, Verdict};
use units::SimTime;

const MIB: u64 = 1024 * 1024;

fn shard(mode: SyncMode) -> Shard {
    let config = ShardConfig {
        data_mode: true,
        commitlog_sync: mode,
        // Room for several segments: memtables flush at their memory
        // threshold, not to free commitlog space.
        commitlog_total_space_bytes: 1024 * MIB,
        ..ShardConfig::scylla_defaults(16 * MIB)
    };
    Shard::new(config, SimTime::ZERO)
}

fn write(key: u64) -> ClientRequest {
    ClientRequest {
        id: RequestId(key),
        operation: Operation::Write {
            rows: 1,
            key,
            value_bytes: 1000,
            timestamp: key + 1,
        },
        consistency: ConsistencyLevel::One,
    }
}

/// Writes `keys` one by one, holding back every flush write (a flush
/// started stays in progress) and, with `hold_commitlog`, every commitlog
/// write (its entries never reach the disk before the crash). Returns the
/// keys acknowledged; `held` gets the I/Os held.
fn write_all(
    shard: &mut Shard,
    keys: std::ops::Range<u64>,
    hold_commitlog: bool,
    held: &mut Vec<IoRequest>,
) -> Vec<u64> {
    let mut acknowledged = Vec::new();
    for key in keys {
        let now = SimTime::from_nanos(key + 1);
        shard.handle_client_request(now, write(key));
        let mut outcome = Outcome::default();
        testing::run(shard, now, &mut outcome, |action| match action {
            Action::SubmitIo(io)
                if io.class == IoClass::MemtableFlush
                    || (hold_commitlog && io.class == IoClass::Commitlog) =>
            {
                Verdict::Hold
            }
            _ => Verdict::Carry,
        });
        held.extend(outcome.held);
        acknowledged.extend(
            outcome
                .replies
                .iter()
                .filter(|reply| reply.status == ReplyStatus::Written)
                .map(|reply| reply.id.0),
        );
    }
    acknowledged
}

/// Writes keys from 0 until a flush is under way (its writes held), then
/// `more` keys; then `torn` keys whose commitlog writes are held. Returns
/// the keys acknowledged, the first key of the torn ones, and the held
/// I/Os.
fn crash_setup(shard: &mut Shard, more: u64, torn: u64) -> (Vec<u64>, u64, Vec<IoRequest>) {
    let mut held = Vec::new();
    let mut acknowledged = Vec::new();
    let mut key = 0;
    while !held
        .iter()
        .any(|io: &IoRequest| io.class == IoClass::MemtableFlush)
    {
        acknowledged.extend(write_all(shard, key..key + 1, false, &mut held));
        key += 1;
        assert!(key < 1_000_000, "no flush started");
    }
    acknowledged.extend(write_all(shard, key..key + more, false, &mut held));
    let first_torn = key + more;
    acknowledged.extend(write_all(
        shard,
        first_torn..first_torn + torn,
        true,
        &mut held,
    ));
    (acknowledged, first_torn, held)
}

/// Restarts the crashed shard and runs it until it has replayed; returns
/// the replay's (entries, bytes).
fn restart(shard: &mut Shard, now: SimTime) -> (u64, u64) {
    shard.restart(now);
    assert!(shard.is_replaying());
    let mut outcome = Outcome::default();
    testing::run_all(shard, now, &mut outcome);
    assert!(!shard.is_replaying(), "the replay finished");
    assert_eq!(outcome.replayed.len(), 1, "one replay announced");
    outcome.replayed[0]
}

fn version_of(key: u64) -> RowVersion {
    RowVersion {
        timestamp: key + 1,
        value_bytes: 1000,
    }
}

#[test]
fn a_shard_crashed_mid_flush_finds_every_acknowledged_write_after_replay_in_batch_mode() {
    let mut shard = shard(SyncMode::Batch);
    // A memtable's worth of writes (its flush held mid-way), 300 more in
    // the next memtable, then 50 whose commitlog writes never complete.
    let (acknowledged, first_torn, held) = crash_setup(&mut shard, 300, 50);
    assert!(
        held.iter().any(|io| io.class == IoClass::Commitlog),
        "some commitlog writes never reached the disk"
    );
    assert_eq!(
        acknowledged.len() as u64,
        first_torn,
        "batch mode acknowledges only durable writes"
    );
    let writes_before = shard.stats().writes_completed;
    let crash_at = SimTime::from_nanos(1_000_000);
    shard.crash(crash_at);
    assert!(shard.is_down());
    assert_eq!(shard.stats().memtable_bytes, 0, "memtables are gone");
    let (entries, bytes) = restart(&mut shard, crash_at + units::SimDuration::from_secs(1));
    // Nothing had been flushed: every durable entry is replayed.
    assert_eq!(entries, first_torn);
    assert!(bytes > first_torn * 1000);
    for key in &acknowledged {
        assert_eq!(
            shard.local_version(*key),
            Some(Some(version_of(*key))),
            "acknowledged key {key} after replay"
        );
    }
    for key in first_torn..first_torn + 50 {
        assert_eq!(
            shard.local_version(key),
            Some(None),
            "key {key} never reached the disk"
        );
    }
    assert_eq!(
        shard.stats().writes_completed,
        writes_before,
        "counters carry on; the replay is not a client write"
    );
    assert_eq!(
        shard.stats().memtable_bytes,
        0,
        "what was replayed is flushed"
    );
}

#[test]
fn periodic_mode_loses_at_most_the_unwritten_buffer_and_keeps_every_durable_write() {
    let mut shard = shard(SyncMode::Periodic);
    let (acknowledged, first_torn, _) = crash_setup(&mut shard, 300, 200);
    assert_eq!(
        acknowledged.len() as u64,
        first_torn + 200,
        "periodic mode acknowledges from the buffer"
    );
    let now = SimTime::from_nanos(1_000_000);
    let loss = shard.crash(now);
    restart(&mut shard, now + units::SimDuration::from_secs(1));
    let lost: Vec<u64> = acknowledged
        .iter()
        .copied()
        .filter(|&key| shard.local_version(key) != Some(Some(version_of(key))))
        .collect();
    // Every write before the commitlog writes were held is on disk, but
    // for those sharing the buffer the first held write took (128 KiB:
    // about 120 entries).
    assert!(
        lost.iter().all(|&key| key + 130 >= first_torn),
        "lost {:?}",
        &lost[..5.min(lost.len())]
    );
    // What was lost was acknowledged: periodic mode's window.
    assert!(!lost.is_empty(), "periodic mode loses the unwritten tail");
    // And the crash said exactly what it lost.
    let reported: Vec<u64> = loss.rows.iter().map(|(key, _)| *key).collect();
    assert_eq!(reported, lost);
    assert!(loss.hints.is_empty(), "a single shard keeps no hints");
}

#[test]
fn completions_of_the_crashed_process_are_dropped() {
    let mut shard = shard(SyncMode::Periodic);
    let (_, _, stale) = crash_setup(&mut shard, 10, 0);
    assert!(!stale.is_empty(), "a flush write was held");
    let now = SimTime::from_nanos(1_000_000);
    shard.crash(now);
    let later = now + units::SimDuration::from_secs(1);
    restart(&mut shard, later);
    assert_eq!(shard.incarnation(), 1);
    // The device completes what the dead process had submitted.
    for io in stale {
        shard.handle_io_done(later, io.id);
    }
    let mut outcome = Outcome::default();
    testing::run_all(&mut shard, later, &mut outcome);
    assert!(outcome.replies.is_empty() && outcome.replayed.is_empty());
    // The new life serves.
    shard.handle_client_request(later, write(1));
    testing::run_all(&mut shard, later, &mut outcome);
    assert_eq!(outcome.replies.len(), 1);
}
