//! The shard as coordinator and as replica on the wire: sending, relaying
//! requests between a node's shards, taking messages in, sending a client
//! request to its replicas and acting on what they answer
//! ([`crate::coordinator`] decides what to do next).

use super::{deadline, unit, Origin, Request, Shard, TaskPurpose};
use crate::action::{
    Action, ClientReply, ClientRequest, CpuTask, CpuWork, Message, Operation, ReplyStatus,
    RequestId, SchedulingGroup,
};
use crate::cache::heat;
use crate::cells::{digest_of, ReadResult};
use crate::coordinator::{DeadlineKind, Mutation, Next, MAX_REPLICAS};
use crate::messaging::RELAYED;
use crate::placement::{key_token, ShardAddress};
use crate::planted::PlantedBug;
use rand_core::Rng;
use units::SimTime;

impl Shard {
    /// Sends `message` to shard `to`: on this node straight to it (a
    /// cross-shard hop), to another node on a connection, landing on the
    /// shard [`crate::messaging`] draws there (a read's answer is the RPC's
    /// response and goes back on the asking shard's own connection; a
    /// stream's messages name their shard).
    pub(super) fn send(&mut self, to: ShardAddress, message: Message) {
        // Streaming's RPCs name their destination shard (`dst_cpu_id`).
        let to = if to.node == self.config.address.node
            || matches!(message, Message::ReadResponse { .. })
            || message.is_stream()
            || !self.config.landing.spreads()
        {
            to
        } else {
            self.config.landing.shard(to, self.draws.landing.next_u64())
        };
        debug_assert_ne!(to, self.config.address, "a shard sends to itself");
        self.actions.push_back(Action::Send { to, message });
    }

    /// This node's replica shard of `key`.
    pub(super) fn local_owner(&self, key: u64) -> ShardAddress {
        let shard = self.config.placement.shard_of(key_token(key));
        debug_assert!(shard < self.config.placement.shards_per_node());
        ShardAddress {
            node: self.config.address.node,
            shard,
        }
    }

    /// A request for `key` that landed here from another node while
    /// another shard of this node owns the key: passes it to the owner
    /// under a relay id; `true` if it did.
    pub(super) fn relay_request(&mut self, from: ShardAddress, message: &Message) -> bool {
        let (id, key) = match *message {
            Message::WriteRequest { id, key, .. } | Message::ReadRequest { id, key, .. } => {
                (id, key)
            }
            _ => return false,
        };
        let owner = self.local_owner(key);
        if owner == self.config.address {
            return false;
        }
        debug_assert_ne!(from.node, self.config.address.node, "relayed twice");
        let relay = RELAYED | self.relays.insert((from, id)) as u64;
        self.send(owner, message.clone().with_id(relay));
        true
    }

    /// An owner's answer to a request this shard relayed: on to whoever
    /// asked, under their id.
    pub(super) fn relay_answer(&mut self, relay: u64, message: Message) {
        let (asker, id) = self
            .relays
            .try_remove((relay & !RELAYED) as usize)
            .expect("an answer to a relayed request this shard holds");
        let message = match message.with_id(id) {
            Message::WriteResponse { replica, .. } => Message::WriteResponse {
                id,
                shard: asker.shard,
                replica,
            },
            answer @ Message::ReadResponse { .. } => answer,
            _ => unreachable!("only answers are relayed back"),
        };
        self.send(asker, message);
    }

    /// A received message's handler.
    pub(super) fn receive(&mut self, now: SimTime, from: ShardAddress, message: Message) {
        if message.is_stream() {
            self.stream_message(now, from, message);
            return;
        }
        if self.relay_request(from, &message) {
            return;
        }
        match message {
            message @ Message::BatchlogWrite { .. } => self.batchlog_received(now, from, message),
            Message::WriteRequest {
                id,
                key,
                value_bytes,
                timestamp,
                rows,
            } => {
                let origin = Origin::Peer {
                    from,
                    id,
                    digest: false,
                };
                self.execute(
                    now,
                    Request {
                        origin,
                        operation: Operation::Write {
                            key,
                            value_bytes,
                            timestamp,
                            rows,
                        },
                    },
                );
            }
            Message::ReadRequest {
                id,
                key,
                digest,
                limit_bytes,
            } => {
                let origin = Origin::Peer { from, id, digest };
                self.execute(
                    now,
                    Request {
                        origin,
                        operation: Operation::Read { key, limit_bytes },
                    },
                );
            }
            Message::WriteResponse { id, .. } | Message::ReadResponse { id, .. }
                if id & RELAYED != 0 =>
            {
                self.relay_answer(id, message)
            }
            Message::WriteResponse { shard, .. } if shard != self.config.address.shard => {
                // Landed on a connection's shard of the coordinator's node.
                let coordinator = ShardAddress {
                    node: self.config.address.node,
                    shard,
                };
                self.send(coordinator, message);
            }
            Message::WriteResponse { id, .. } if Shard::is_batchlog_ack(id) => {
                self.batchlog_acked(now, id)
            }
            Message::WriteResponse { id, replica, .. } => {
                let next = self.coordinator.write_acked(now, id, replica);
                self.act(now, id, next);
            }
            Message::ReadResponse {
                id,
                data,
                digest,
                cache_hit_rate,
            } => {
                if cache_hit_rate != u16::MAX {
                    self.heard_rates
                        .heard(from.node, f64::from(cache_hit_rate) / 10_000.0, now);
                }
                self.read_response(now, id, from, data, digest)
            }
            Message::StreamStart { .. }
            | Message::StreamData { .. }
            | Message::StreamAck { .. }
            | Message::StreamEnd { .. } => unreachable!("stream messages are handled above"),
        }
    }

    /// A replica's read answer reaches the coordinator: a data answer that
    /// is compared with digests is hashed first.
    pub(super) fn read_response(
        &mut self,
        now: SimTime,
        id: u64,
        from: ShardAddress,
        data: Option<ReadResult>,
        digest: u64,
    ) {
        if let Some(result) = data {
            if self.config.replication_factor > 1 {
                let bytes = result.map_or(0, |version| version.value_bytes);
                let task = self.new_task(TaskPurpose::DigestForCoordinator {
                    id,
                    from,
                    result,
                    digest,
                });
                self.actions.push_back(Action::RunCpu(CpuTask {
                    id: task,
                    group: SchedulingGroup::Statement,
                    work: CpuWork::Digest { bytes },
                }));
                return;
            }
        }
        let next = self.coordinator.read_answered(now, id, from, data, digest);
        self.act(now, id, next);
    }

    /// Sends a coordinated request to its replicas.
    pub(super) fn coordinate(&mut self, now: SimTime, request: ClientRequest) {
        let mut replicas = [self.config.address; MAX_REPLICAS];
        let key = match request.operation {
            Operation::Write { key, .. } | Operation::Read { key, .. } => key,
        };
        let mut placed = self.config.placement.replicas(key, &mut replicas);
        debug_assert!(
            (1..=MAX_REPLICAS).contains(&placed),
            "{placed} replicas placed for key {key}"
        );
        debug_assert!(
            (1..placed).all(|i| replicas[..i].iter().all(|r| r.node != replicas[i].node)),
            "a node holds two replicas of key {key}"
        );
        let mut block_for = request
            .consistency
            .block_for(placed as u32)
            .clamp(1, placed as u32);
        if matches!(request.operation, Operation::Write { .. })
            && self.config.placement.has_pending()
        {
            // A join or leave is under way: the nodes about to own the key
            // get its writes too, and the write waits for one more
            // acknowledgement per pending node (`abstract_write_response_
            // handler`'s `_total_block_for` @3.0), so that a write
            // acknowledged at the level is on enough of the future owners.
            let token = crate::placement::key_token(key);
            let shard = replicas[0].shard;
            for &node in self.config.placement.pending_nodes(token) {
                replicas[placed] = ShardAddress { node, shard };
                placed += 1;
                block_for += 1;
            }
        }
        // Only the replicas its node sees up are asked
        // (`get_live_sorted_endpoints`); too few for the level and the
        // client hears `Unavailable` at once. A write's replicas seen down
        // get hints instead.
        let mut down = [self.config.address; MAX_REPLICAS];
        let mut down_count = 0;
        let count = if self.peer_down.is_empty() {
            placed
        } else {
            let mut live = 0;
            for index in 0..placed {
                if !self.sees_down(replicas[index].node) {
                    replicas[live] = replicas[index];
                    live += 1;
                } else {
                    down[down_count] = replicas[index];
                    down_count += 1;
                }
            }
            live
        };
        if (count as u32) < block_for {
            self.reply_client(now, request.id, ReplyStatus::Unavailable);
            return;
        }
        debug_assert_eq!(count + down_count, placed, "a replica neither up nor down");
        let (count, block_for) = match request.operation {
            Operation::Write { .. }
                if self
                    .config
                    .planted
                    .has(PlantedBug::WritesToFirstReplicaOnly) =>
            {
                (1, 1)
            }
            Operation::Write { .. }
                if self
                    .config
                    .planted
                    .has(PlantedBug::QuorumAckAfterOneReplica) =>
            {
                (count, 1)
            }
            _ => (count, block_for),
        };
        let replicas = &mut replicas[..count];
        match request.operation {
            Operation::Write {
                key,
                value_bytes,
                timestamp,
                rows,
            } => {
                let mutation = Mutation {
                    key,
                    value_bytes,
                    timestamp,
                    rows,
                };
                let id = self
                    .coordinator
                    .open_write(request.id, mutation, replicas, block_for);
                self.coordinator.arm_deadline(
                    DeadlineKind::Write,
                    deadline(now, self.config.write_timeout),
                    id,
                );
                for &replica in replicas.iter() {
                    self.send_write(now, replica, id, mutation);
                }
                for &replica in &down[..down_count] {
                    self.hint(now, replica.node, mutation);
                }
            }
            Operation::Read { key, limit_bytes } => {
                // The coordinator's node's own replica first, swapped to
                // the front (`get_live_sorted_endpoints` @2.1-3.0 puts the
                // local address first whatever the snitch; Ec2Snitch, the
                // AMI's, sorts it first too); on this node it is the key's
                // owner shard, not necessarily this one.
                let node = self.config.address.node;
                if let Some(position) = replicas.iter().position(|r| r.node == node) {
                    replicas.swap(0, position);
                }
                let all = unit(&mut self.draws.read_repair) < self.config.read_repair_chance;
                let contacted = if all { count } else { block_for as usize };
                if !all && self.config.heat_weighted_balancing {
                    self.order_by_heat(now, replicas, block_for as usize);
                }
                let spare = replicas.get(contacted).copied();
                let id = self.coordinator.open_read(
                    now,
                    request.id,
                    key,
                    limit_bytes,
                    &replicas[..contacted],
                    block_for,
                    spare,
                );
                self.coordinator.arm_deadline(
                    DeadlineKind::Read,
                    deadline(now, self.config.read_timeout),
                    id,
                );
                if spare.is_some() {
                    if let Some(delay) = self.coordinator.speculation_delay(
                        now,
                        self.config.speculative_retry,
                        self.config.read_timeout,
                        self.config.speculation_resolution,
                    ) {
                        self.coordinator.arm_speculation(now + delay, id);
                    }
                }
                for (position, &replica) in replicas[..contacted].iter().enumerate() {
                    self.send_read(now, replica, id, key, limit_bytes, position > 0);
                }
            }
        }
    }

    /// Heat-weighted balancing (`heat`): puts `k` replicas drawn by their
    /// cache temperature first (this node's own first among them), when
    /// every replica's rate is known and they differ enough.
    pub(super) fn order_by_heat(&mut self, now: SimTime, replicas: &mut [ShardAddress], k: usize) {
        let count = replicas.len();
        let mut nodes = [0u32; MAX_REPLICAS];
        for (node, replica) in nodes.iter_mut().zip(replicas.iter()) {
            *node = replica.node;
        }
        if let Some(own) = self.node_hit_rate {
            self.heard_rates.heard(self.config.address.node, own, now);
        }
        let mut rates = [0.0; MAX_REPLICAS];
        if !self
            .heard_rates
            .rates_of(&nodes[..count], now, &mut rates[..count])
            || heat::too_close_to_balance(&rates[..count])
        {
            return;
        }
        let mut shares = [0.0; MAX_REPLICAS];
        heat::desired_shares(&rates[..count], k, &mut shares[..count]);
        let mut picked = [0usize; MAX_REPLICAS];
        let draw = unit(&mut self.draws.heat);
        let picked_count = heat::systematic_sample(&shares[..count], k, draw, &mut picked);
        let original: [ShardAddress; MAX_REPLICAS] = {
            let mut copy = [self.config.address; MAX_REPLICAS];
            copy[..count].copy_from_slice(replicas);
            copy
        };
        let mut position = 0;
        // The picked ones first, this node's own replica leading; then the
        // rest in their order (the first of them is the spare).
        let own = picked[..picked_count]
            .iter()
            .position(|&index| original[index].node == self.config.address.node);
        if let Some(own) = own {
            picked[..=own].rotate_right(1);
        }
        for &index in &picked[..picked_count] {
            replicas[position] = original[index];
            position += 1;
        }
        for (index, replica) in original[..count].iter().enumerate() {
            if !picked[..picked_count].contains(&index) {
                replicas[position] = *replica;
                position += 1;
            }
        }
        debug_assert_eq!(position, count, "a replica placed twice or lost");
        self.heat_balanced_reads += 1;
    }

    pub(super) fn send_write(
        &mut self,
        now: SimTime,
        replica: ShardAddress,
        id: u64,
        mutation: Mutation,
    ) {
        let Mutation {
            key,
            value_bytes,
            timestamp,
            rows,
        } = mutation;
        if replica == self.config.address {
            let origin = Origin::Local { id, digest: false };
            let operation = Operation::Write {
                key,
                value_bytes,
                timestamp,
                rows,
            };
            self.execute(now, Request { origin, operation });
        } else {
            let message = Message::WriteRequest {
                id,
                key,
                value_bytes,
                timestamp,
                rows,
            };
            self.send(replica, message);
        }
    }

    pub(super) fn send_read(
        &mut self,
        now: SimTime,
        replica: ShardAddress,
        id: u64,
        key: u64,
        limit_bytes: u32,
        digest: bool,
    ) {
        if replica == self.config.address {
            let origin = Origin::Local { id, digest };
            let operation = Operation::Read { key, limit_bytes };
            self.execute(now, Request { origin, operation });
        } else {
            let message = Message::ReadRequest {
                id,
                key,
                digest,
                limit_bytes,
            };
            self.send(replica, message);
        }
    }

    /// Answers a coordinated write or read: its client, or the batch it is
    /// a part of.
    pub(super) fn reply_client(&mut self, now: SimTime, id: RequestId, status: ReplyStatus) {
        if id.0 & super::BATCH_PART != 0 {
            self.batch_part_done(now, id, status);
        } else {
            self.actions
                .push_back(Action::Reply(ClientReply { id, status }));
        }
    }

    /// Carries out what the coordinator decided for operation `id`.
    pub(super) fn act(&mut self, now: SimTime, id: u64, next: Next) {
        match next {
            Next::Wait => {}
            Next::Written(request) if request.0 & super::HINT_REPLAY != 0 => {
                self.hint_replayed(now, request, true)
            }
            Next::Written(client) => self.reply_client(now, client, ReplyStatus::Written),
            Next::Read(client, result) => self.actions.push_back(Action::Reply(ClientReply {
                id: client,
                status: match result {
                    Some(version) => ReplyStatus::Found {
                        value_bytes: version.value_bytes,
                        timestamp: version.timestamp,
                    },
                    None => ReplyStatus::NotFound,
                },
            })),
            Next::FetchFullData {
                key,
                replicas,
                count,
            } => {
                let (open_key, limit_bytes) = self.coordinator.read_key(id).expect("an open read");
                debug_assert_eq!(open_key, key, "full data asked for another key");
                debug_assert!(count > 0, "full data asked of no replica");
                for &replica in &replicas[..usize::from(count)] {
                    self.send_read(now, replica, id, key, limit_bytes, false);
                }
            }
            Next::Repair {
                key,
                version,
                replicas,
                count,
            } => {
                // The newest version written back as one mutation; a
                // version does not keep its rows, so a repair carries one
                // row's footprint (exact for one-row partitions).
                let mutation = Mutation {
                    key,
                    value_bytes: version.value_bytes,
                    timestamp: version.timestamp,
                    rows: 1,
                };
                debug_assert!(count > 0, "a repair of no replica");
                for &replica in &replicas[..usize::from(count)] {
                    self.send_write(now, replica, id, mutation);
                }
            }
        }
    }

    /// Answers whoever asked for a write: the client, or the coordinator.
    pub(super) fn respond_written(&mut self, now: SimTime, origin: Origin) {
        match origin {
            Origin::Client(id) => self.actions.push_back(Action::Reply(ClientReply {
                id,
                status: ReplyStatus::Written,
            })),
            Origin::Peer { from, id, .. } => self.send(
                from,
                Message::WriteResponse {
                    id,
                    shard: from.shard,
                    replica: self.config.address.node,
                },
            ),
            Origin::Local { id, .. } => {
                let next = self
                    .coordinator
                    .write_acked(now, id, self.config.address.node);
                self.act(now, id, next);
            }
        }
    }

    /// Answers whoever asked for a read: the client, or the coordinator (a
    /// digest request's result is hashed first).
    pub(super) fn respond_read(&mut self, now: SimTime, origin: Origin, result: ReadResult) {
        debug_assert!(
            !matches!(origin, Origin::Client(_)) || !origin.wants_digest(),
            "a client asked for a digest"
        );
        if origin.wants_digest() {
            let bytes = result.map_or(0, |version| version.value_bytes);
            let task = self.new_task(TaskPurpose::DigestForReplica { origin, result });
            self.actions.push_back(Action::RunCpu(CpuTask {
                id: task,
                group: SchedulingGroup::Query,
                work: CpuWork::Digest { bytes },
            }));
            return;
        }
        self.send_read_result(now, origin, result);
    }

    pub(super) fn send_read_result(&mut self, now: SimTime, origin: Origin, result: ReadResult) {
        let digest = digest_of(result);
        let data = (!origin.wants_digest()).then_some(result);
        match origin {
            Origin::Client(id) => self.actions.push_back(Action::Reply(ClientReply {
                id,
                status: match result {
                    Some(version) => ReplyStatus::Found {
                        value_bytes: version.value_bytes,
                        timestamp: version.timestamp,
                    },
                    None => ReplyStatus::NotFound,
                },
            })),
            Origin::Peer { from, id, .. } => {
                let cache_hit_rate = self
                    .node_hit_rate
                    .map_or(u16::MAX, |rate| (rate * 10_000.0).round() as u16);
                // 10,000 at most: u16::MAX is kept for "no rate".
                debug_assert!(cache_hit_rate <= 10_000 || self.node_hit_rate.is_none());
                self.send(
                    from,
                    Message::ReadResponse {
                        id,
                        data,
                        digest,
                        cache_hit_rate,
                    },
                )
            }
            Origin::Local { id, .. } => {
                let from = self.config.address;
                self.read_response(now, id, from, data, digest);
            }
        }
    }
}
