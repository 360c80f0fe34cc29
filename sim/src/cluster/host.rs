//! The nodes' hardware at run time: what reaches a shard and when its
//! reactor takes it in, the engine's actions carried out on the CPU
//! models, the I/O queue and device, and the NICs, and the node-level
//! outputs (gossip, liveness) handed to the network and the driver.

use super::*;

impl Simulation {
    /// The engine node (its index in `engines`) and the shard within it of
    /// the simulated shard at `shard` in `shards`.
    #[inline]
    pub(super) fn locate(&self, shard: u32) -> (usize, u32) {
        // Kept per shard: a division per event showed in the 40-node bench.
        let state = &self.shards[shard as usize];
        (state.node as usize, state.local)
    }

    /// Sends `message` from shard `from` to shard `to`: a hop between
    /// shards of one node, or over the nodes' NICs.
    pub(super) fn send_message(
        &mut self,
        now: SimTime,
        from: ShardAddress,
        to: ShardAddress,
        message: Message,
    ) {
        let destination = self.shard_index(to);
        let wire_bytes = message.wire_bytes();
        // Streaming's verbs go on a connection of their own
        // (`get_rpc_client_idx` @3.0: index 2), which the NIC
        // shares fairly with the requests' one; the flows after the
        // nodes' and the clients'.
        let flow = if message.is_stream() {
            FlowId(self.nodes.len() as u32 + self.processes.len() as u32 + to.node)
        } else {
            FlowId(to.node)
        };
        let arrival = Event::MessageArrives {
            shard: destination,
            from,
            message,
            wire_bytes: 0,
        };
        if to.node == from.node {
            self.kernel.schedule_at(now + CROSS_SHARD_HOP, arrival);
        } else {
            let hardware = &mut self.nodes[from.node as usize];
            let delivery = hardware
                .nic
                .send(now, flow, wire_bytes, arrival, &mut hardware.nic_rng);
            let wakeup = hardware.nic.take_wakeup();
            self.after_send(delivery, wakeup, Event::NodeNicWake { node: from.node });
        }
    }

    /// Schedules node `node`'s next timer, if it has one and none is
    /// queued at or before it (after a restart the node's timers start
    /// over).
    pub(super) fn rearm_node_timer(&mut self, node: u32) {
        if let Some(at) = self.engines[node as usize].poll_node_timeout() {
            if self.nodes[node as usize].node_timer.arm(at) {
                self.kernel.schedule_at(at, Event::NodeTimer { node });
            }
        }
    }

    /// Carries out node `node`'s own outputs: gossip leaves on its NIC
    /// (from a stream of its own, so the data messages' jitter draws stay
    /// as they are), and the peers it now sees down or up go to the log.
    pub(super) fn drain_node(&mut self, now: SimTime, node: u32) {
        while let Some(output) = self.engines[node as usize].poll_node_output() {
            match output {
                engine::node::NodeOutput::Gossip { to, message } => {
                    let bytes = message.wire_bytes();
                    let hardware = &mut self.nodes[node as usize];
                    let delivery = hardware.nic.send(
                        now,
                        FlowId(to),
                        bytes,
                        Event::GossipArrives {
                            node: to,
                            from: node,
                            message: Box::new(message),
                            wire_bytes: 0,
                        },
                        &mut hardware.gossip_rng,
                    );
                    let wakeup = hardware.nic.take_wakeup();
                    self.after_send(delivery, wakeup, Event::NodeNicWake { node });
                }
                engine::node::NodeOutput::Liveness { peer, alive, phi } => {
                    // The driver's control connection is to node 0: its
                    // status events reach the clients while its network
                    // is up (DataStax driver 3.x `STATUS_CHANGE`).
                    if node == CONTROL_NODE
                        && !self.nodes[node as usize].nic.faults().cut
                        && (!alive
                            || self.engines[peer as usize].life()
                                == engine::node::NodeLife::Running)
                    {
                        self.driver_sees(peer, alive);
                    }
                    let what = if alive {
                        What::NodeUp {
                            observer: node,
                            peer,
                        }
                    } else {
                        What::NodeDown {
                            observer: node,
                            peer,
                            phi: (phi * 1000.0).round() / 1000.0,
                        }
                    };
                    self.event_log.record(now, what);
                    if !alive {
                        self.topology_peer_down(now, node, peer);
                    }
                    // The shards heard it too: hint replay may start.
                    for local in 0..self.simulated_shards {
                        let shard = self.shard_index(ShardAddress { node, shard: local });
                        self.drain(now, shard);
                    }
                }
                engine::node::NodeOutput::Joined => self.node_joined(now, node),
                engine::node::NodeOutput::Serving => self.node_serving(now, node),
            }
        }
    }

    /// The driver now sees `node` up (`alive`) or down: it stops routing
    /// requests to a node it sees down, and routes to it again once up.
    pub(super) fn driver_sees(&mut self, node: u32, alive: bool) {
        self.driver_down.set(node, alive);
    }

    /// The index in `shards` of a simulated shard.
    pub(super) fn shard_index(&self, address: ShardAddress) -> u32 {
        debug_assert!(address.shard < self.simulated_shards);
        address.node * self.simulated_shards + address.shard
    }

    // ----- what reaches a shard, and when its reactor sees it -----

    /// `inbound` reaches `shard`: taken in now if its reactor is between
    /// periods (idle, it polls all the time), else at its next poll.
    pub(super) fn arrive(&mut self, now: SimTime, shard: u32, inbound: Inbound) {
        let state = &mut self.shards[shard as usize];
        if !state.up
            && matches!(
                inbound,
                Inbound::Request(..) | Inbound::Batch(..) | Inbound::Message { .. }
            )
        {
            // A dead process takes nothing off its connections.
            return;
        }
        if state.cpu.in_period() {
            state.timer_in_inbox |= matches!(inbound, Inbound::Timer);
            state.inbox.push(inbound);
        } else {
            self.take_in(now, shard, inbound);
        }
    }

    /// The shard's engine takes `inbound` in.
    pub(super) fn take_in(&mut self, now: SimTime, shard: u32, inbound: Inbound) {
        debug_assert!(
            !self.shards[shard as usize].cpu.in_period(),
            "a reactor takes nothing in during a period"
        );
        let (node, local) = self.locate(shard);
        match inbound {
            Inbound::Request(request, deadline) => {
                let is_write = matches!(request.operation, Operation::Write { .. });
                self.coordinating[node].insert(
                    request.id.0,
                    Coordinating {
                        at: now,
                        deadline,
                        is_write,
                    },
                );
                self.shards[shard as usize].from_client = true;
                self.engines[node].handle_client_request(now, local, request);
            }
            Inbound::Batch(batch, deadline) => {
                // A batch's parts are writes.
                self.coordinating[node].insert(
                    batch.id.0,
                    Coordinating {
                        at: now,
                        deadline,
                        is_write: true,
                    },
                );
                self.shards[shard as usize].from_client = true;
                self.engines[node].handle_batch_request(now, local, batch);
            }
            Inbound::Message { from, message } => {
                self.engines[node].handle_message(now, local, from, message);
            }
            Inbound::IoDone { key } => {
                // Reaping the completion frees the queue's capacity, and
                // the I/O scheduler dispatches in the same poll.
                let state = &mut self.shards[shard as usize];
                let (io, cost, _) = state.io_in_flight.remove(key as usize);
                state.io_queue.complete(cost);
                self.dispatch_io(now, shard);
                self.engines[node].handle_io_done(now, local, io);
            }
            Inbound::Timer => {
                self.shards[shard as usize].timer_in_inbox = false;
                let engine = &mut self.engines[node];
                if engine.poll_timeout(local).is_none_or(|due| due > now) {
                    self.rearm_timer(shard);
                    return;
                }
                engine.handle_timeout(now, local);
            }
        }
        self.drain(now, shard);
        // A request that started no task now (throttled, or answered at
        // once) marks none later.
        self.shards[shard as usize].from_client = false;
    }

    /// The shard's reactor polls at `now` (its period ended): what its
    /// tasks sent leaves, what arrived is taken in, and then the next
    /// period starts.
    pub(super) fn poll(&mut self, now: SimTime, shard: u32) {
        let mut outbox = std::mem::take(&mut self.shards[shard as usize].outbox);
        for action in outbox.drain(..) {
            self.perform(now, shard, action);
        }
        self.shards[shard as usize].outbox = outbox;
        let mut inbox = std::mem::take(&mut self.shards[shard as usize].inbox);
        for inbound in inbox.drain(..) {
            self.take_in(now, shard, inbound);
        }
        let state = &mut self.shards[shard as usize];
        debug_assert!(state.inbox.is_empty() && state.outbox.is_empty());
        state.inbox = inbox;
        let ShardCpu::Reactor(core) = &mut state.cpu else {
            unreachable!("only reactors poll");
        };
        if let Some(next) = core.resume(now) {
            self.kernel.schedule_at(next.at, Event::CpuRunEnd { shard });
        }
    }

    // ----- the engine's actions -----

    /// Sends what the shard's I/O queue lets through to the node's device.
    pub(super) fn dispatch_io(&mut self, now: SimTime, shard: u32) {
        let state = &mut self.shards[shard as usize];
        let hardware = &mut self.nodes[state.node as usize];
        while let Some((cost, (io, op, class))) = state.io_queue.dispatch(now) {
            let tally = &mut state.time_spent.io[usize::from(class)];
            tally.queued.end(now);
            tally.device.start(now);
            let key = state.io_in_flight.insert((io, cost, class));
            assert!(key <= 0xFFFF_FFFF, "in-flight I/O keys must fit in 32 bits");
            let tag = (u64::from(shard) << 32) | key as u64;
            if let Some(started) = hardware.device.submit(now, tag, op, &mut hardware.disk_rng) {
                self.kernel.schedule_at(
                    started.at,
                    Event::IoDone {
                        node: state.node,
                        tag: started.tag,
                    },
                );
            }
        }
    }

    /// Carries out the engine's actions. Those that leave the shard
    /// (messages, replies, I/Os) wait for its next poll when a task of the
    /// period running now produced them.
    pub(super) fn drain(&mut self, now: SimTime, shard: u32) {
        let in_period = self.shards[shard as usize].cpu.in_period();
        let (node, local) = self.locate(shard);
        while let Some(action) = self.engines[node].poll_action(local) {
            if in_period
                && matches!(
                    action,
                    Action::SubmitIo(_) | Action::Send { .. } | Action::Reply(_)
                )
            {
                self.shards[shard as usize].outbox.push(action);
            } else {
                self.perform(now, shard, action);
            }
        }
        self.rearm_timer(shard);
    }

    /// Carries out one of the engine's actions now.
    pub(super) fn perform(&mut self, now: SimTime, shard: u32, action: Action) {
        match action {
            Action::RunCpu(task) => {
                let cost = bridge::price(&self.plan.cluster.costs, task.work);
                let group = self.plan.cluster.cpu.group_of(task.group);
                let node_index = self.shards[shard as usize].node as usize;
                let kind = task.work.index();
                let tally = &mut self.shards[shard as usize].time_spent.cpu[kind];
                tally.on_cpu.start(now);
                tally.price_ns += u128::from(cost.as_nanos());
                let tag = task_tag(task.id, kind);
                let from_client = std::mem::take(&mut self.shards[shard as usize].from_client);
                match &mut self.shards[shard as usize].cpu {
                    ShardCpu::Reactor(core) => {
                        if let Some(started) = core.submit(now, tag, group, cost) {
                            self.kernel
                                .schedule_at(started.at, Event::CpuRunEnd { shard });
                        }
                    }
                    ShardCpu::Jvm { node, .. } => {
                        // An idle pool thread is parked: it runs the
                        // task once it wakes.
                        let stage = bridge::stage_of(task.work);
                        if node.inline_continuations() && bridge::continues_a_read(task.work) {
                            // The read's own thread goes on after its
                            // I/O: no hand-off, no wake-up.
                            node.submit_continuation(now, stage, tag, cost);
                        } else {
                            let rng = &mut self.nodes[node_index].jvm_wake_rng;
                            // (The shared pool wakes its own workers.)
                            let wake = if !node.has_idle_thread(stage) || node.in_shared_pool(stage)
                            {
                                SimDuration::ZERO
                            } else {
                                models::wakeup::draw(rng)
                            };
                            if from_client {
                                // The request's first task: read off its
                                // connection by the event loop.
                                node.submit_from_client(now, stage, tag, cost, wake);
                            } else {
                                node.submit(now, stage, tag, cost, wake);
                            }
                        }
                        // Request handling allocates: the CQL request
                        // on its coordinator, each internode message
                        // taken in, each replica's read or write; and
                        // leaves cards and short-lived objects for the
                        // next young pause. G1 collects when eden fills.
                        if let Some(step) = bridge::allocation_step(task.work) {
                            let rng = &mut self.nodes[node_index].jvm_rng;
                            node.allocate_step(now, step, rng);
                        }
                        // The memtables live on the heap: what they
                        // gained since the last report is long-lived, what
                        // they lost (a flush) is dead.
                        let local = self.shards[shard as usize].local;
                        let memtable = self.engines[node_index].shards()[local as usize]
                            .memtable_memory_bytes();
                        if let ShardCpu::Jvm {
                            node,
                            memtable_reported,
                            ..
                        } = &mut self.shards[shard as usize].cpu
                        {
                            match memtable.cmp(memtable_reported) {
                                std::cmp::Ordering::Greater => {
                                    let rng = &mut self.nodes[node_index].jvm_rng;
                                    node.retain(now, memtable - *memtable_reported, rng);
                                }
                                std::cmp::Ordering::Less => {
                                    node.release(*memtable_reported - memtable)
                                }
                                std::cmp::Ordering::Equal => {}
                            }
                            *memtable_reported = memtable;
                        }
                        self.rearm_jvm(shard);
                    }
                }
            }
            Action::SubmitIo(io) => {
                if self.nodes[self.shards[shard as usize].node as usize].disk_failed {
                    // The device answers with an error at once.
                    self.disk_error(now, self.shards[shard as usize].node);
                    return;
                }
                if io.class == engine::IoClass::Query && io.kind == IoKind::Read {
                    if let ShardCpu::Jvm { node, .. } = &mut self.shards[shard as usize].cpu {
                        // The read's worker blocks in it (a shared pool's
                        // does not spin meanwhile).
                        if node.worker_blocks_on_io(now) {
                            self.rearm_jvm(shard);
                        }
                    }
                }
                let direction = match io.kind {
                    IoKind::Read => IoDirection::Read,
                    IoKind::Write => IoDirection::Write,
                };
                let op = IoOp {
                    direction,
                    bytes: io.bytes,
                };
                let state = &mut self.shards[shard as usize];
                let tally = &mut state.time_spent.io[io.class.index()];
                tally.queued.start(now);
                tally.bytes += io.bytes;
                state.io_queue.queue(
                    self.plan.cluster.io.class_of(io.class),
                    direction,
                    io.bytes,
                    (io.id, op, io.class.index() as u8),
                );
                self.dispatch_io(now, shard);
            }
            Action::Send { to, message } => {
                let (node, local) = self.locate(shard);
                let from = ShardAddress {
                    node: node as u32,
                    shard: local,
                };
                self.send_message(now, from, to, message);
            }
            Action::SetShares { group, shares } => {
                // Scylla's controllers set the I/O class's shares with
                // the CPU group's (scylla-mechanisms.md 1.1, step 5).
                if let Some(class) = self.plan.cluster.io.class_driven_with(group) {
                    self.shards[shard as usize]
                        .io_queue
                        .set_shares(class, shares);
                }
                let group = self.plan.cluster.cpu.group_of(group);
                if let ShardCpu::Reactor(core) = &mut self.shards[shard as usize].cpu {
                    core.set_shares(group, shares);
                }
            }
            Action::Replayed { entries, bytes } => self.shard_replayed(now, shard, entries, bytes),
            Action::StreamReceived { plan, rows, bytes } => {
                self.stream_received(now, plan, rows, bytes)
            }
            Action::Reply(reply) => {
                // The event loop wakes to flush it (JVM presets that model
                // the loop).
                if let ShardCpu::Jvm { node, .. } = &mut self.shards[shard as usize].cpu {
                    node.flush_response(now);
                    self.rearm_jvm(shard);
                }
                let node = self.shards[shard as usize].node;
                let Some(request) = self.coordinating[node as usize].remove(&reply.id.0) else {
                    // Every request the node answers, it took in (and a
                    // crash drops both the requests and the engine's
                    // work on them); a reply without one reaches nobody.
                    if cfg!(debug_assertions) {
                        unreachable!("a reply to a request node {node} never took in");
                    }
                    return;
                };
                if now > request.deadline {
                    // The client gave up on this attempt: nobody reads
                    // the reply (its bytes on the wire are left out).
                    return;
                }
                let process = attempt_of(reply.id).process;
                let total_nodes = self.nodes.len() as u32;
                self.server[node as usize].record(request.is_write, now - request.at);
                let hardware = &mut self.nodes[node as usize];
                let (payload, outcome) = match reply.status {
                    ReplyStatus::Written => (0, ReplyOutcome::Written),
                    ReplyStatus::Found {
                        value_bytes,
                        timestamp,
                    } => (u64::from(value_bytes), ReplyOutcome::Found { timestamp }),
                    ReplyStatus::NotFound => (0, ReplyOutcome::NotFound),
                    ReplyStatus::Timeout => (0, ReplyOutcome::Timeout),
                    ReplyStatus::Unavailable => (0, ReplyOutcome::Unavailable),
                };
                // One flow per client connection, after the node flows.
                let flow = FlowId(total_nodes + process);
                let delivery = hardware.nic.send(
                    now,
                    flow,
                    MESSAGE_OVERHEAD_BYTES + payload,
                    Event::ReplyArrives {
                        process,
                        request: reply.id,
                        outcome,
                        deadline: request.deadline,
                        wire_bytes: 0,
                        handoff_ns: 0,
                    },
                    &mut hardware.nic_rng,
                );
                let wakeup = hardware.nic.take_wakeup();
                self.after_send(delivery, wakeup, Event::NodeNicWake { node });
            }
        }
    }

    /// Makes sure a wake-up is scheduled at or before a JVM node's next
    /// completion (see `rearm_timer` for why wake-ups are never cancelled).
    pub(super) fn rearm_jvm(&mut self, shard: u32) {
        let ShardCpu::Jvm { node, wake, .. } = &mut self.shards[shard as usize].cpu else {
            return;
        };
        if let Some(at) = node.next_completion() {
            if wake.arm(at) {
                self.kernel.schedule_at(at, Event::JvmWake { shard });
            }
        }
    }

    /// Makes sure a wake-up is scheduled at or before the shard's
    /// `poll_timeout`. Wake-ups are never cancelled: one scheduled earlier
    /// than needed fires, finds nothing due, and schedules the next. The
    /// shard's earliest timer is mostly its oldest request's deadline, which
    /// moves later with every completion: cancelling and rescheduling each
    /// time left a dead heap entry seconds in the future per request, and
    /// the 40-node run's queue grew to millions of them.
    #[inline]
    pub(super) fn rearm_timer(&mut self, shard: u32) {
        let state = &mut self.shards[shard as usize];
        if state.timer_in_inbox {
            // Due already; the next poll takes it in and rearms.
            return;
        }
        let engine = &self.engines[state.node as usize];
        if let Some(at) = engine.poll_timeout(state.local) {
            if state.timer.arm(at) {
                self.kernel.schedule_at(at, Event::ShardTimer { shard });
            }
        }
    }
}
