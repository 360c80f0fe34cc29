//! Tests of coordination across shards and nodes: relays, consistency
//! levels, digests and read repair, heat-weighted balancing, timeouts.

use super::Shard;
use crate::action::{
    Action, ClientReply, ClientRequest, CpuWork, Message, Operation, ReplyStatus, RequestId,
};
use crate::config::ShardConfig;
use crate::consistency::ConsistencyLevel;
use crate::coordinator::MAX_REPLICAS;
use crate::messaging::RELAYED;
use crate::placement::Placement;
use crate::placement::{key_token, ShardAddress};
use crate::testing;
use units::{SimDuration, SimTime};

#[test]
fn a_shard_forwards_requests_for_keys_it_does_not_own_and_relays_the_answer() {
    let placement = Placement::single_node(2);
    let config = |shard| ShardConfig {
        address: ShardAddress { node: 0, shard },
        placement: placement.clone(),
        key_ownership_fraction: 0.5,
        ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
    };
    let mut shards = [
        Shard::new(config(0), SimTime::ZERO),
        Shard::new(config(1), SimTime::ZERO),
    ];
    let now = SimTime::from_nanos(1);
    let key = (0..).find(|key| placement.owner(*key).shard == 1).unwrap();
    // The client talks to shard 0; shard 1 owns the key.
    shards[0].handle_client_request(
        now,
        ClientRequest {
            id: RequestId(7),
            operation: Operation::Write {
                rows: 1,
                key,
                value_bytes: 100,
                timestamp: 1,
            },
            consistency: ConsistencyLevel::One,
        },
    );
    let (replies, _) = drive_shards(&mut shards, now);
    assert_eq!(
        replies,
        [ClientReply {
            id: RequestId(7),
            status: ReplyStatus::Written
        }]
    );
    assert_eq!(
        shards[1].stats().writes_completed,
        1,
        "the owner applied the write"
    );
    assert_eq!(
        shards[0].stats().writes_completed,
        0,
        "the coordinator did not"
    );
    shards[0].handle_client_request(
        now,
        ClientRequest {
            id: RequestId(8),
            operation: Operation::read(key),
            consistency: ConsistencyLevel::One,
        },
    );
    let (replies, _) = drive_shards(&mut shards, now);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].id, RequestId(8));
    assert!(
        matches!(replies[0].status, ReplyStatus::Found { .. }),
        "{replies:?}"
    );
}

/// Three single-shard nodes at RF=3; every CPU task and I/O instant,
/// messages delivered in order. Returns the client's replies and the
/// digest tasks run on each node.
fn drive_three(shards: &mut [Shard; 3], now: SimTime) -> (Vec<ClientReply>, [u32; 3]) {
    drive_three_watching(shards, now, |_, _| {})
}

/// [`drive_three`], showing every message sent to `watch`.
fn drive_three_watching(
    shards: &mut [Shard; 3],
    now: SimTime,
    mut watch: impl FnMut(ShardAddress, &Message),
) -> (Vec<ClientReply>, [u32; 3]) {
    let mut digests = [0u32; 3];
    let mut outcome = testing::Outcome::default();
    testing::run_cluster(shards, now, &mut outcome, |index, action| {
        match action {
            Action::RunCpu(task) if matches!(task.work, CpuWork::Digest { .. }) => {
                digests[index] += 1
            }
            Action::Send { to, message } => watch(*to, message),
            _ => {}
        }
        testing::Verdict::Carry
    });
    (outcome.replies, digests)
}

fn three_nodes(read_repair_chance: f64) -> [Shard; 3] {
    three_nodes_with(|config| config.read_repair_chance = read_repair_chance)
}

/// Three single-shard nodes at RF=3 on Scylla's defaults, each shard's
/// configuration then set by `adjust`.
pub(super) fn three_nodes_with(adjust: impl Fn(&mut ShardConfig)) -> [Shard; 3] {
    let placement = Placement::evenly_spaced(3, 1, &crate::ring::Replication::simple(3));
    [0, 1, 2].map(|node| {
        let mut config = ShardConfig {
            address: ShardAddress { node, shard: 0 },
            placement: placement.clone(),
            replication_factor: 3,
            ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
        };
        adjust(&mut config);
        Shard::new(config, SimTime::ZERO)
    })
}

/// What node `node` alone returns for key 77 (a read at ONE it
/// coordinates, which it answers from its own copy).
pub(super) fn read_at_one(shards: &mut [Shard; 3], node: usize, now: SimTime) -> ReplyStatus {
    shards[node].handle_client_request(
        now,
        ClientRequest {
            id: RequestId(1000),
            operation: Operation::read(77),
            consistency: ConsistencyLevel::One,
        },
    );
    let (replies, _) = drive_three(shards, now);
    replies[0].status
}

#[test]
fn a_quorum_write_reaches_every_replica_and_the_client_hears_once() {
    let mut shards = three_nodes(0.0);
    let now = SimTime::from_nanos(1);
    shards[1].handle_client_request(
        now,
        ClientRequest {
            id: RequestId(5),
            operation: Operation::Write {
                rows: 1,
                key: 77,
                value_bytes: 100,
                timestamp: 1,
            },
            consistency: ConsistencyLevel::Quorum,
        },
    );
    let (replies, _) = drive_three(&mut shards, now);
    assert_eq!(
        replies,
        [ClientReply {
            id: RequestId(5),
            status: ReplyStatus::Written
        }]
    );
    for shard in &shards {
        assert_eq!(
            shard.stats().writes_completed,
            1,
            "every replica applied it"
        );
    }
    assert_eq!(shards[1].coordinator.open_operations(), 0);
}

#[test]
fn a_quorum_read_asks_one_replica_for_data_and_one_for_a_digest() {
    let mut shards = three_nodes(0.0);
    let now = SimTime::from_nanos(1);
    let read = |id| ClientRequest {
        id: RequestId(id),
        operation: Operation::read(77),
        consistency: ConsistencyLevel::Quorum,
    };
    shards[2].handle_client_request(now, read(1));
    let (replies, digests) = drive_three(&mut shards, now);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].status, ReplyStatus::NotFound);
    let reads: u64 = shards.iter().map(|s| s.stats().reads_completed).sum();
    assert_eq!(reads, 2, "block_for = 2 replicas read");
    assert_eq!(
        shards[2].stats().reads_completed,
        1,
        "the coordinator is a replica and reads its own copy"
    );
    // One digest on the digest replica, one on the coordinator for the
    // data it compares.
    assert_eq!(digests.iter().sum::<u32>(), 2, "{digests:?}");
    // With read_repair_chance 1 every replica is asked.
    let mut shards = three_nodes(1.0);
    shards[2].handle_client_request(now, read(2));
    let (replies, _) = drive_three(&mut shards, now);
    assert_eq!(replies.len(), 1);
    let reads: u64 = shards.iter().map(|s| s.stats().reads_completed).sum();
    assert_eq!(reads, 3);
    assert_eq!(shards[2].coordinator.open_operations(), 0);
}

/// Two nodes of four shards each, RF 2, messages landing on connection
/// shards (`messaging`): node `n`'s shard `s` at index `4n + s`.
fn two_nodes_of_four_shards() -> Vec<Shard> {
    let placement = Placement::evenly_spaced(2, 4, &crate::ring::Replication::simple(2));
    (0..8u32)
        .map(|index| {
            let config = ShardConfig {
                address: ShardAddress {
                    node: index / 4,
                    shard: index % 4,
                },
                placement: placement.clone(),
                landing: crate::messaging::Landing::ConnectionShard {
                    shards_per_node: 4,
                    simulated: 4,
                },
                replication_factor: 2,
                read_repair_chance: 0.0,
                data_mode: true,
                seeds: crate::ShardSeeds {
                    landing: u64::from(index) + 1,
                    ..crate::ShardSeeds::default()
                },
                ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
            };
            Shard::new(config, SimTime::ZERO)
        })
        .collect()
}

/// Runs every action of `shards` (node by node, each node's shards in
/// order), every CPU task and I/O instant, messages delivered in order,
/// to quiescence; returns the replies and every message sent, with its
/// sender and destination.
fn drive_shards(
    shards: &mut [Shard],
    now: SimTime,
) -> (Vec<ClientReply>, Vec<(ShardAddress, ShardAddress, Message)>) {
    let mut outcome = testing::Outcome::default();
    testing::run_cluster(shards, now, &mut outcome, |_, _| testing::Verdict::Carry);
    (outcome.replies, outcome.sent)
}

#[test]
fn requests_landing_on_connection_shards_are_relayed_to_the_owners_and_answered() {
    let mut shards = two_nodes_of_four_shards();
    let placement = shards[0].config().placement.clone();
    let now = SimTime::from_nanos(1);
    let keys: Vec<u64> = (1..=200).collect();
    let mut replicas = [ShardAddress { node: 0, shard: 0 }; MAX_REPLICAS];
    for &key in &keys {
        // The client's connection is on a shard that does not own the key.
        let owner = placement.owner(key);
        let coordinator = (owner.node * 4 + (owner.shard + 1) % 4) as usize;
        let write = Operation::Write {
            rows: 1,
            key,
            value_bytes: 100,
            timestamp: key,
        };
        shards[coordinator].handle_client_request(
            now,
            ClientRequest {
                id: RequestId(key),
                operation: write,
                consistency: ConsistencyLevel::All,
            },
        );
    }
    let (replies, sent) = drive_shards(&mut shards, now);
    assert_eq!(replies.len(), keys.len(), "every write is answered once");
    assert!(replies.iter().all(|r| r.status == ReplyStatus::Written));
    // Each key was applied on its two replicas and nowhere else.
    let applied: u64 = shards.iter().map(|s| s.stats().writes_completed).sum();
    assert_eq!(applied, 2 * keys.len() as u64);
    for &key in &keys {
        let count = placement.replicas(key, &mut replicas);
        for replica in &replicas[..count] {
            let shard = &shards[(replica.node * 4 + replica.shard) as usize];
            let held = shard
                .write
                .active()
                .cells
                .as_ref()
                .and_then(|cells| cells.get(&key));
            assert!(held.is_some(), "key {key} on {replica:?}");
        }
    }
    // Writes to the other node landed off their owners about 3 times in 4
    // and were relayed; so were acknowledgements back to the coordinator.
    let (mut landed_off_owner, mut remote_writes) = (0, 0);
    for (from, to, message) in &sent {
        if let Message::WriteRequest { key, .. } = message {
            if from.node != to.node {
                remote_writes += 1;
                if placement.shard_of(key_token(*key)) != to.shard {
                    landed_off_owner += 1;
                }
            }
        }
    }
    assert_eq!(remote_writes, keys.len());
    assert!(
        (100..=190).contains(&landed_off_owner),
        "{landed_off_owner} of {remote_writes} landed off their owner"
    );
    let hops = sent
        .iter()
        .filter(|(from, to, _)| from.node == to.node)
        .count();
    assert!(hops > 2 * keys.len(), "{hops} cross-shard hops");
    assert!(
        shards.iter().all(|s| s.relays.is_empty()),
        "no relay left open"
    );

    // QUORUM reads (here: both replicas) find what was written, data and
    // digest answers relayed alike.
    for &key in &keys {
        let owner = placement.owner(key);
        let coordinator = (owner.node * 4 + (owner.shard + 2) % 4) as usize;
        shards[coordinator].handle_client_request(
            now,
            ClientRequest {
                id: RequestId(1000 + key),
                operation: Operation::read(key),
                consistency: ConsistencyLevel::Quorum,
            },
        );
    }
    let (replies, _) = drive_shards(&mut shards, now);
    assert_eq!(replies.len(), keys.len());
    for reply in replies {
        assert_eq!(
            reply.status,
            ReplyStatus::Found {
                value_bytes: 100,
                timestamp: reply.id.0 - 1000
            }
        );
    }
    assert!(shards.iter().all(|s| s.relays.is_empty()));
    assert!(shards.iter().all(|s| s.coordinator.open_operations() == 0));
}

#[test]
fn diverged_replicas_are_found_by_digests_repaired_by_the_read_and_equal_after() {
    let mut shards = three_nodes_with(|config| {
        config.read_repair_chance = 0.0;
        config.data_mode = true;
    });
    let now = SimTime::from_nanos(1);
    let request = |id, operation, consistency| ClientRequest {
        id: RequestId(id),
        operation,
        consistency,
    };
    let write = |timestamp| Operation::Write {
        rows: 1,
        key: 77,
        value_bytes: 100,
        timestamp,
    };
    // Every replica has version 1.
    shards[0].handle_client_request(now, request(1, write(1), ConsistencyLevel::All));
    drive_three(&mut shards, now);
    // Version 5 reaches node 2 only (its other writes were lost).
    let from = shards[1].config().address;
    shards[2].handle_message(
        now,
        from,
        Message::WriteRequest {
            id: !RELAYED, // no open operation's id
            key: 77,
            value_bytes: 100,
            timestamp: 5,
            rows: 1,
        },
    );
    drive_three(&mut shards, now);
    let newest = ReplyStatus::Found {
        value_bytes: 100,
        timestamp: 5,
    };
    // A CL=ALL read compares three digests: the mismatch sends it to
    // full data reads, the newest version wins and goes back to nodes
    // 0 and 1 before the client hears.
    shards[0].handle_client_request(now, request(2, Operation::read(77), ConsistencyLevel::All));
    let (replies, _) = drive_three(&mut shards, now);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].status, newest);
    let stats = shards[0].stats();
    assert_eq!((stats.digest_mismatches, stats.read_repairs), (1, 2));
    // Equal afterwards: each replica's own copy is the newest.
    for node in 0..3 {
        assert_eq!(read_at_one(&mut shards, node, now), newest, "node {node}");
    }
    // And a QUORUM read finds the digests equal: no new repair.
    shards[1].handle_client_request(
        now,
        request(20, Operation::read(77), ConsistencyLevel::Quorum),
    );
    let (replies, _) = drive_three(&mut shards, now);
    assert_eq!(replies[0].status, newest);
    let mismatches: u64 = shards.iter().map(|s| s.stats().digest_mismatches).sum();
    assert_eq!(mismatches, 1);
}

#[test]
fn a_replica_found_behind_after_the_answer_is_repaired_in_the_background() {
    let mut shards = three_nodes_with(|config| {
        // Every read asks all three replicas.
        config.read_repair_chance = 1.0;
        config.data_mode = true;
    });
    let now = SimTime::from_nanos(1);
    let newest = ReplyStatus::Found {
        value_bytes: 100,
        timestamp: 5,
    };
    // Version 5 reaches nodes 0 and 1; node 2 missed it.
    for (node, from) in [(0, 1), (1, 0)] {
        let from = shards[from].config().address;
        shards[node].handle_message(
            now,
            from,
            Message::WriteRequest {
                id: !RELAYED,
                key: 77,
                value_bytes: 100,
                timestamp: 5,
                rows: 1,
            },
        );
    }
    drive_three(&mut shards, now);
    // A QUORUM read coordinated by node 0: node 2's answer is held back,
    // so nodes 0 and 1 agree and the client has its answer.
    shards[0].handle_client_request(
        now,
        ClientRequest {
            id: RequestId(9),
            operation: Operation::read(77),
            consistency: ConsistencyLevel::Quorum,
        },
    );
    let mut outcome = testing::Outcome::default();
    testing::run_cluster(
        &mut shards,
        now,
        &mut outcome,
        |index, action| match action {
            Action::Send {
                message: Message::ReadResponse { .. },
                ..
            } if index == 2 => testing::Verdict::Hold,
            _ => testing::Verdict::Carry,
        },
    );
    assert_eq!(outcome.replies.len(), 1);
    assert_eq!(outcome.replies[0].status, newest);
    assert_eq!(
        shards[0].coordinator.open_operations(),
        1,
        "waits for node 2"
    );
    // Node 2's late digest disagrees: a background repair, no second answer.
    let [(from, _, ref late)] = outcome.dropped[..] else {
        panic!("one held answer: {:?}", outcome.dropped);
    };
    let late = late.clone();
    shards[0].handle_message(now, from, late);
    let (replies, _) = drive_three(&mut shards, now);
    assert_eq!(replies, [], "the client is not answered twice");
    let stats = shards[0].stats();
    assert_eq!(
        (
            stats.digest_mismatches,
            stats.background_read_repairs,
            stats.read_repairs
        ),
        (1, 1, 1)
    );
    assert_eq!(shards[0].coordinator.open_operations(), 0);
    // Node 2 has the newest version now.
    assert_eq!(read_at_one(&mut shards, 2, now), newest);
}

/// Reads of 300 keys at CL=QUORUM coordinated by node 0, with nodes 1
/// and 2 reporting cache hit rates of 0.9 and 0.1: how many of the reads
/// asked node 1, and how many heat-weighted balancing ordered.
fn reads_asking_node_1(heat_weighted_balancing: bool) -> (u32, u64) {
    let placement = Placement::evenly_spaced(3, 1, &crate::ring::Replication::simple(3));
    let cache = crate::config::RowCacheSetup {
        config: crate::cache::row_cache::RowCacheConfig::scylla(0),
        takes_free_memory: true,
        popularity: None,
        key_rows: 1.0,
        mean_row_bytes: 100,
    };
    let mut shards = [0, 1, 2].map(|node| {
        let config = ShardConfig {
            address: ShardAddress { node, shard: 0 },
            placement: placement.clone(),
            replication_factor: 3,
            read_repair_chance: 0.0,
            data_mode: true,
            row_cache: Some(cache.clone()),
            heat_weighted_balancing,
            ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
        };
        Shard::new(config, SimTime::ZERO)
    });
    let now = SimTime::from_nanos(1);
    // The coordinator's own node, as its node level published it: cold.
    shards[0].set_node_hit_rate(0.0);
    let mut asked_node_1 = 0;
    for key in 0..300 {
        // The replicas' latest reports (each read response carries one;
        // here node 1's cache is warm and node 2's cold).
        for (node, rate) in [(1u32, 9_000u16), (2, 1_000)] {
            shards[0].handle_message(
                now,
                ShardAddress { node, shard: 0 },
                Message::ReadResponse {
                    id: !RELAYED, // no open operation's id
                    data: None,
                    digest: 0,
                    cache_hit_rate: rate,
                },
            );
        }
        shards[0].handle_client_request(
            now,
            ClientRequest {
                id: RequestId(key),
                operation: Operation::read(key),
                consistency: ConsistencyLevel::Quorum,
            },
        );
        let mut asked = false;
        drive_three_watching(&mut shards, now, |to, message| {
            asked |= to.node == 1 && matches!(message, Message::ReadRequest { .. });
        });
        asked_node_1 += u32::from(asked);
    }
    (asked_node_1, shards[0].stats().heat_balanced_reads)
}

#[test]
fn heat_weighted_balancing_sends_reads_to_the_warm_replica() {
    let (with, balanced) = reads_asking_node_1(true);
    let (without, unbalanced) = reads_asking_node_1(false);
    // Shares 1 : 10 : 1.1 clip to 1/K = 0.5 for node 1: it is in every
    // pick. Without balancing the coordinator's own copy, swapped to the
    // front of the ring order, and the replica then second are asked
    // (ring orders 0 1 2, 1 2 0 and 2 0 1 become 0 1 2, 0 2 1 and 0 2 1):
    // node 1 in one read of three.
    assert!(with >= 295, "{with} of 300 with balancing");
    assert!((60..140).contains(&without), "{without} of 300 without");
    assert!(
        balanced >= 295 && unbalanced == 0,
        "{balanced} {unbalanced}"
    );
}

#[test]
fn a_coordinator_answers_timeout_when_replicas_are_silent() {
    let mut shards = three_nodes(0.0);
    let now = SimTime::from_nanos(1);
    shards[0].handle_client_request(
        now,
        ClientRequest {
            id: RequestId(9),
            operation: Operation::Write {
                rows: 1,
                key: 77,
                value_bytes: 100,
                timestamp: 1,
            },
            consistency: ConsistencyLevel::All,
        },
    );
    // Run the coordinator only: its messages to the others are lost.
    let lose_messages = |action: &Action| match action {
        Action::Send { .. } => testing::Verdict::Hold,
        _ => testing::Verdict::Carry,
    };
    let mut outcome = testing::Outcome::default();
    testing::run(&mut shards[0], now, &mut outcome, lose_messages);
    assert!(
        outcome.replies.is_empty(),
        "ALL needs the two silent replicas"
    );
    assert_eq!(outcome.dropped.len(), 2, "one write to each other replica");
    let deadline = shards[0].poll_timeout().expect("a deadline is armed");
    assert!(deadline >= now + SimDuration::from_secs(2));
    assert!(deadline <= now + SimDuration::from_millis(2_010));
    shards[0].handle_timeout(deadline);
    let mut outcome = testing::Outcome::default();
    testing::run(&mut shards[0], deadline, &mut outcome, lose_messages);
    assert_eq!(
        outcome.replies,
        [ClientReply {
            id: RequestId(9),
            status: ReplyStatus::Timeout
        }]
    );
    assert_eq!(shards[0].coordinator.open_operations(), 0);
}
