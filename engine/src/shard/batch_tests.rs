//! Tests of batches over several partitions: every part written and one
//! answer; a LOGGED batch's batchlog round before the parts and its removal
//! after; a batchlog that never answers times the batch out.

use super::coordinator_tests::three_nodes_with;
use super::Shard;
use crate::action::{
    Action, BatchRequest, ClientReply, Message, Operation, ReplyStatus, RequestId,
};
use crate::consistency::ConsistencyLevel;
use crate::placement::ShardAddress;
use crate::testing;
use units::SimTime;

fn batch(id: u64, keys: &[u64], logged: bool) -> BatchRequest {
    BatchRequest {
        id: RequestId(id),
        parts: keys
            .iter()
            .map(|&key| Operation::Write {
                key,
                value_bytes: 100,
                timestamp: 1,
                rows: 1,
            })
            .collect::<Vec<_>>()
            .into(),
        logged,
        consistency: ConsistencyLevel::Quorum,
    }
}

/// Runs the three nodes to quiescence, losing the messages `lose` picks;
/// returns the replies and the messages sent in order.
fn drive(
    shards: &mut [Shard; 3],
    now: SimTime,
    lose: impl Fn(&Message) -> bool,
) -> (Vec<ClientReply>, Vec<(ShardAddress, ShardAddress, Message)>) {
    let mut outcome = testing::Outcome::default();
    testing::run_cluster(shards, now, &mut outcome, |_, action| match action {
        Action::Send { message, .. } if lose(message) => testing::Verdict::Hold,
        _ => testing::Verdict::Carry,
    });
    (outcome.replies, outcome.sent)
}

#[test]
fn an_unlogged_batch_writes_every_partition_and_answers_once() {
    let mut shards = three_nodes_with(|_| {});
    let now = SimTime::from_nanos(1);
    shards[0].handle_batch_request(now, batch(9, &[1, 2, 3, 4], false));
    let (replies, sent) = drive(&mut shards, now, |_| false);
    assert_eq!(
        replies,
        [ClientReply {
            id: RequestId(9),
            status: ReplyStatus::Written
        }]
    );
    for shard in &shards {
        assert_eq!(shard.stats().writes_completed, 4, "RF 3: every part");
    }
    assert!(!sent
        .iter()
        .any(|(_, _, message)| matches!(message, Message::BatchlogWrite { .. })));
    assert_eq!(shards[0].batches.len(), 0);
}

#[test]
fn a_logged_batch_is_in_two_other_batchlogs_before_any_part_and_removed_after() {
    let mut shards = three_nodes_with(|_| {});
    let now = SimTime::from_nanos(1);
    shards[1].handle_batch_request(now, batch(3, &[10, 20, 30], true));
    let (replies, sent) = drive(&mut shards, now, |_| false);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].status, ReplyStatus::Written);
    let position = |wanted: &dyn Fn(&Message) -> bool| -> Vec<usize> {
        sent.iter()
            .enumerate()
            .filter(|(_, (_, _, message))| wanted(message))
            .map(|(index, _)| index)
            .collect()
    };
    let logs = position(&|m| matches!(m, Message::BatchlogWrite { remove: false, .. }));
    let removals = position(&|m| matches!(m, Message::BatchlogWrite { remove: true, .. }));
    let parts = position(&|m| matches!(m, Message::WriteRequest { .. }));
    assert_eq!(logs.len(), 2, "two batchlog nodes");
    assert_eq!(removals.len(), 2, "each entry removed");
    assert!(
        logs.iter().max() < parts.iter().min(),
        "the batchlog first: {logs:?} {parts:?}"
    );
    // The batchlog nodes are the two others; the coordinator keeps none.
    let mut nodes: Vec<u32> = sent
        .iter()
        .filter(|(_, _, m)| matches!(m, Message::BatchlogWrite { remove: false, .. }))
        .map(|(_, to, _)| to.node)
        .collect();
    nodes.sort_unstable();
    assert_eq!(nodes, [0, 2]);
    // The parts on every replica; the batchlog nodes paid for the entries
    // (a write's CPU and a commitlog entry each) without storing a row.
    for shard in &shards {
        assert_eq!(shard.stats().writes_completed, 3);
    }
    assert_eq!(shards[1].batches.len(), 0);
}

#[test]
fn a_logged_batch_whose_batchlog_does_not_answer_times_out_unwritten() {
    let mut shards = three_nodes_with(|_| {});
    let now = SimTime::from_nanos(1);
    shards[0].handle_batch_request(now, batch(4, &[5, 6], true));
    let (replies, sent) = drive(&mut shards, now, |message| {
        matches!(message, Message::BatchlogWrite { .. })
    });
    assert!(replies.is_empty(), "waiting for the batchlog");
    assert!(!sent
        .iter()
        .any(|(_, _, m)| matches!(m, Message::WriteRequest { .. })));
    let due = shards[0].poll_timeout().expect("the batchlog deadline");
    assert_eq!(due, super::deadline(now, shards[0].config().write_timeout));
    shards[0].handle_timeout(due);
    let (replies, sent) = drive(&mut shards, due, |_| false);
    assert_eq!(
        replies,
        [ClientReply {
            id: RequestId(4),
            status: ReplyStatus::Timeout
        }]
    );
    assert!(sent.is_empty(), "no part and nothing to remove: {sent:?}");
    for shard in &shards {
        assert_eq!(shard.stats().writes_completed, 0);
    }
}

#[test]
fn a_logged_batch_of_one_partition_takes_no_batchlog() {
    let mut shards = three_nodes_with(|_| {});
    let now = SimTime::from_nanos(1);
    shards[2].handle_batch_request(now, batch(1, &[42], true));
    let (replies, sent) = drive(&mut shards, now, |_| false);
    assert_eq!(replies[0].status, ReplyStatus::Written);
    assert!(!sent
        .iter()
        .any(|(_, _, m)| matches!(m, Message::BatchlogWrite { .. })));
}
