//! Tests of hinted handoff across three single-shard nodes: hints for a
//! replica seen down and for one that stayed silent past the write
//! timeout, kept until the flush and the replica's return, then replayed
//! so the replica has the write.

use super::coordinator_tests::{read_at_one, three_nodes_with};
use super::Shard;
use crate::action::{Action, ClientRequest, Message, Operation, ReplyStatus, RequestId};
use crate::consistency::ConsistencyLevel;
use crate::hints::HintsSetup;
use crate::testing;
use units::{SimDuration, SimTime};

fn three_nodes_with_hints() -> [Shard; 3] {
    three_nodes_with(|config| {
        config.read_repair_chance = 0.0;
        config.data_mode = true;
        config.hints = Some(HintsSetup::SCYLLA_3_0);
    })
}

fn at(seconds: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_secs(seconds)
}

fn write(id: u64, timestamp: u64) -> ClientRequest {
    ClientRequest {
        id: RequestId(id),
        operation: Operation::Write {
            rows: 1,
            key: 77,
            value_bytes: VALUE_BYTES,
            timestamp,
        },
        consistency: ConsistencyLevel::Quorum,
    }
}

/// Bytes of column values [`write`] writes.
const VALUE_BYTES: u32 = 100;

/// What a read of key 77 returns once the [`write`] of `timestamp` is there.
fn found(timestamp: u64) -> ReplyStatus {
    ReplyStatus::Found {
        value_bytes: VALUE_BYTES,
        timestamp,
    }
}

/// Lets every shard's due timers fire at `now`, then carries the work out.
fn tick(shards: &mut [Shard; 3], now: SimTime) {
    for shard in shards.iter_mut() {
        if shard.poll_timeout().is_some_and(|due| due <= now) {
            shard.handle_timeout(now);
        }
    }
    let mut outcome = testing::Outcome::default();
    testing::run_cluster(shards, now, &mut outcome, |_, _| testing::Verdict::Carry);
}

#[test]
fn a_replica_seen_down_gets_its_writes_as_hints_replayed_when_it_is_back() {
    let mut shards = three_nodes_with_hints();
    shards[0].set_peer_alive(at(1), 2, false);
    shards[0].handle_client_request(at(1), write(1, 5));
    let mut outcome = testing::Outcome::default();
    testing::run_cluster(&mut shards, at(1), &mut outcome, |_, action| {
        assert!(
            !matches!(action, Action::Send { to, .. } if to.node == 2),
            "nothing goes to the node seen down"
        );
        testing::Verdict::Carry
    });
    assert_eq!(outcome.replies[0].status, ReplyStatus::Written);
    let hints = shards[0].hint_stats().expect("3.0 keeps hints");
    assert_eq!((hints.stats.written, hints.pending), (1, 1));
    assert_eq!(read_at_one(&mut shards, 2, at(1)), ReplyStatus::NotFound);
    // The flush at 10 s makes the hint replayable; node 2 is still down.
    assert_eq!(shards[0].poll_timeout(), Some(at(10)));
    tick(&mut shards, at(10));
    assert_eq!(shards[0].hint_stats().unwrap().pending, 1);
    // Back at 12 s: the hint is read and sent, and node 2 has the write.
    shards[0].set_peer_alive(at(12), 2, true);
    let mut outcome = testing::Outcome::default();
    testing::run_cluster(&mut shards, at(12), &mut outcome, |_, _| {
        testing::Verdict::Carry
    });
    let hints = shards[0].hint_stats().unwrap();
    assert_eq!((hints.stats.replayed, hints.pending), (1, 0));
    assert_eq!(read_at_one(&mut shards, 2, at(12)), found(5));
    assert!(outcome.replies.is_empty(), "a replay answers no client");
}

#[test]
fn a_replica_silent_past_the_write_timeout_gets_a_hint_once_the_level_was_reached() {
    let mut shards = three_nodes_with_hints();
    shards[0].handle_client_request(at(1), write(1, 5));
    let mut outcome = testing::Outcome::default();
    // Node 2 does not hear the write (a message lost).
    testing::run_cluster(&mut shards, at(1), &mut outcome, |_, action| match action {
        Action::Send {
            to,
            message: Message::WriteRequest { .. },
        } if to.node == 2 => testing::Verdict::Hold,
        _ => testing::Verdict::Carry,
    });
    assert_eq!(outcome.replies[0].status, ReplyStatus::Written);
    assert_eq!(shards[0].hint_stats().unwrap().stats.written, 0);
    // The write timeout (2 s) names node 2 silent: a hint.
    tick(&mut shards, at(3));
    assert_eq!(shards[0].hint_stats().unwrap().stats.written, 1);
    // Node 2 is up all along: replayed after the next flush.
    tick(&mut shards, at(10));
    let hints = shards[0].hint_stats().unwrap();
    assert_eq!((hints.stats.replayed, hints.pending), (1, 0));
    assert_eq!(read_at_one(&mut shards, 2, at(10)), found(5));
}

#[test]
fn without_hints_a_replica_seen_down_misses_the_write() {
    let mut shards = three_nodes_with_hints();
    for shard in &mut shards {
        shard.config.hints = None;
        shard.handoff = None;
    }
    shards[0].set_peer_alive(at(1), 2, false);
    shards[0].handle_client_request(at(1), write(1, 5));
    tick(&mut shards, at(1));
    assert!(shards[0].hint_stats().is_none());
    shards[0].set_peer_alive(at(12), 2, true);
    tick(&mut shards, at(12));
    assert_eq!(read_at_one(&mut shards, 2, at(12)), ReplyStatus::NotFound);
}
