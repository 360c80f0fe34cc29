//! Topology operations at run time (`[[action]]`, `crate::operations`):
//! adding a node, decommissioning one, removing a dead one.
//!
//! The run keeps the cluster's token metadata (`engine::topology`), the
//! state gossip spreads: each change moves it to a new epoch, and every
//! node and the driver get the placement of that epoch at once (real
//! clusters spread it within `RING_DELAY`, which the operations still
//! wait). The data moves through the engine: the range streamer's plans
//! (`engine::streaming::RangeStreamer`) start on the sending nodes' shards
//! and end when every receiving shard has its SSTables in.
//!
//! - **add-node**: the node, standing by since the start, boots (an empty
//!   disk: nothing to replay), joins gossip and waits for it to settle;
//!   then it announces its tokens (`num_tokens` fresh ones from the run's
//!   `topology` stream) and joins: from then on writes to its ranges go to
//!   it too. After `RING_DELAY` it fetches its ranges from the nodes
//!   losing them, and becomes normal when the last plan is in.
//! - **decommission**: the node announces it leaves (its ranges' next
//!   owners get their writes too), waits `RING_DELAY`, sends its ranges to
//!   their next owners, then leaves the ring and stops.
//! - **removenode**: the dead node's ranges are fetched by their next
//!   owners from surviving replicas, then it is out of the ring.
//!
//! Operations run one at a time, in the scenario's order, as an operator's
//! script of nodetool commands would. When a node of a running plan sees
//! its peer down (a crash, a cut network, a failed disk), the plan and its
//! operation fail (`action-failed`, with why): a joining node gives up and
//! stops, a leaving one stays, and the script stops there. Scylla's range
//! streamer retries a failed plan up to five times over minutes first;
//! left out. A node that crashes while it boots for an add-node fails it
//! too. An added node's boot logs `node-restart`, `node-joined` and
//! `node-serving`, the steps it shares with a restart.

use std::collections::{BTreeMap, VecDeque};

use rand::RngExt;
use units::SimTime;

use super::{Event, Simulation};
use crate::events::What;
use crate::operations::OperationKind;
use engine::node::NodeLife;
use engine::ring::{NodeSpec, Replication};
use engine::streaming::{self, Plan, RangeStreamer};
use engine::topology::TokenMetadata;
use engine::{Placement, ShardAddress};

/// The run's topology: token metadata and the operation under way.
pub(super) struct TopologyRun {
    metadata: TokenMetadata,
    replication: Replication,
    /// Operations whose time has come, waiting for the one before.
    waiting: VecDeque<u32>,
    /// An operation failed: the script stops, and no later one starts
    /// even when its time comes.
    stopped: bool,
    current: Option<Current>,
    /// The next stream plan's id (unique within the run).
    next_plan: u32,
    rng: rand_pcg::Pcg64Mcg,
}

/// The operation under way.
struct Current {
    index: u32,
    kind: OperationKind,
    started: SimTime,
    phase: Phase,
    streaming_since: Option<SimTime>,
    streamer: Option<RangeStreamer>,
    plans: BTreeMap<u32, PlanRun>,
    bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// add-node: the node boots and waits for gossip to settle.
    Booting,
    /// Announced; waiting `RING_DELAY` before data moves.
    RingDelay,
    /// Plans running.
    Streaming,
}

/// A plan under way: the receiving shards still to finish.
struct PlanRun {
    plan: Plan,
    shards_left: u32,
    rows: u64,
    bytes: u64,
}

impl TopologyRun {
    /// The topology of a run starting on `ring`.
    pub(super) fn new(
        ring: &engine::ring::Ring,
        replication: Replication,
        seed: u64,
        planted: engine::planted::Planted,
    ) -> TopologyRun {
        TopologyRun {
            metadata: TokenMetadata::new(ring).planted(planted),
            replication,
            waiting: VecDeque::new(),
            stopped: false,
            current: None,
            next_plan: 0,
            rng: crate::rng::stream(seed, "topology"),
        }
    }
}

impl Simulation {
    fn topology(&mut self) -> &mut TopologyRun {
        self.topology
            .as_mut()
            .expect("a run with [[action]] keeps its topology")
    }

    /// Nodes of the run, those added later included.
    pub(super) fn total_nodes(&self) -> u32 {
        self.engines.len() as u32
    }

    /// A node an `add-node` starts later stands by: down, off the network,
    /// not yet known to its peers' gossip.
    pub(super) fn stand_by(&mut self, node: u32) {
        self.nodes[node as usize].crash_holds = 1;
        self.nodes[node as usize].life_cut = true;
        self.switch(crate::faults::network::Switch::Cut(&[node]), true);
        for local in 0..self.simulated_shards {
            let shard = self.shard_index(ShardAddress { node, shard: local });
            self.shards[shard as usize].up = false;
        }
        // An empty node: nothing to lose.
        let _ = self.engines[node as usize].crash(SimTime::ZERO);
    }

    /// Operation `index` is due: it runs once the one before it is done.
    pub(super) fn action_due(&mut self, now: SimTime, index: u32) {
        if self.topology().stopped {
            return;
        }
        self.topology().waiting.push_back(index);
        self.next_action(now);
    }

    /// Starts the next waiting operation if none runs.
    fn next_action(&mut self, now: SimTime) {
        let topology = self.topology();
        if topology.current.is_some() {
            return;
        }
        let Some(index) = topology.waiting.pop_front() else {
            return;
        };
        let kind = self.plan.operations[index as usize].kind;
        self.event_log.record(
            now,
            What::ActionStart {
                action: index,
                kind: kind.name(),
                node: kind.node(),
            },
        );
        self.topology().current = Some(Current {
            index,
            kind,
            started: now,
            phase: Phase::Booting,
            streaming_since: None,
            streamer: None,
            plans: BTreeMap::new(),
            bytes: 0,
        });
        match kind {
            OperationKind::AddNode { node } => {
                // Booted with an empty disk; announced once it serves.
                self.restart_fault(now, node);
            }
            OperationKind::Decommission { node } => {
                if self.engines[node as usize].life() != NodeLife::Running {
                    // `nodetool decommission` runs on the node that leaves.
                    self.fail_action(now, format!("node {node} is down: it cannot decommission"));
                    return;
                }
                self.change(now, node, "leaving", |metadata| metadata.add_leaving(node));
                self.ring_delay(now);
            }
            OperationKind::RemoveNode { node } => {
                self.change(now, node, "leaving", |metadata| metadata.add_leaving(node));
                self.start_streaming(now);
            }
        }
    }

    /// A node serves clients: an added node now announces its tokens.
    pub(super) fn topology_node_serving(&mut self, now: SimTime, node: u32) {
        let Some(topology) = self.topology.as_mut() else {
            return;
        };
        let Some(current) = topology.current.as_ref() else {
            return;
        };
        if current.kind != (OperationKind::AddNode { node }) || current.phase != Phase::Booting {
            return;
        }
        let num_tokens = self.plan.cluster.topology.num_tokens;
        let topology = self.topology();
        let taken: std::collections::BTreeSet<i64> = topology
            .metadata
            .future_ring()
            .tokens()
            .iter()
            .copied()
            .collect();
        let mut tokens = Vec::with_capacity(num_tokens as usize);
        while tokens.len() < num_tokens as usize {
            let token: i64 = topology.rng.random();
            if token != i64::MIN && !taken.contains(&token) && !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        let rack = self
            .plan
            .cluster
            .topology
            .racks
            .get(node as usize)
            .copied()
            .unwrap_or(0);
        let spec = NodeSpec {
            id: node,
            rack,
            dc: 0,
        };
        self.change(now, node, "joining", |metadata| {
            metadata.add_joining(spec, &tokens)
        });
        self.ring_delay(now);
    }

    /// Node `node` crashed. The operation under way fails if the node is
    /// the one joining (booting: it never announces its tokens) or
    /// leaving by decommission (the command ran on it), or sends or
    /// receives one of the running plans (its stream sessions die with
    /// the process; the restarted node is a new gossip generation, whose
    /// peers fail their sessions with it).
    pub(super) fn topology_node_crashed(&mut self, now: SimTime, node: u32) {
        let Some(current) = self.topology.as_ref().and_then(|t| t.current.as_ref()) else {
            return;
        };
        let reason = match current.kind {
            OperationKind::AddNode { node: joining } if joining == node => {
                Some(match current.phase {
                    Phase::Booting => format!("node {node} crashed while it booted"),
                    _ => format!("node {node} crashed while it joined"),
                })
            }
            OperationKind::Decommission { node: leaving } if leaving == node => {
                Some(format!("node {node} crashed while it decommissioned"))
            }
            _ => current
                .plans
                .values()
                .find(|run| run.plan.source == node || run.plan.target == node)
                .map(|run| {
                    format!(
                        "node {node} crashed while it streamed plan {} ({} to {})",
                        run.plan.id, run.plan.source, run.plan.target
                    )
                }),
        };
        if let Some(reason) = reason {
            self.fail_action(now, reason);
        }
    }

    /// Applies a token metadata change and hands its placement to every
    /// node and the driver.
    fn change(
        &mut self,
        now: SimTime,
        node: u32,
        state: &'static str,
        apply: impl FnOnce(&mut TokenMetadata) -> Result<(), engine::topology::TopologyError>,
    ) {
        let (shards_per_node, total_nodes) =
            (self.plan.cluster.shards_per_node, self.total_nodes());
        let topology = self.topology();
        apply(&mut topology.metadata)
            .unwrap_or_else(|error| panic!("the scenario checks its operations: {error}"));
        let epoch = topology.metadata.epoch();
        let placement = Placement::of_topology(
            &topology.metadata,
            &topology.replication,
            shards_per_node,
            total_nodes,
        );
        for engine in &mut self.engines {
            engine.set_placement(&placement);
        }
        self.placement = placement;
        self.event_log
            .record(now, What::TopologyChange { node, state, epoch });
    }

    /// The operation waits `RING_DELAY` before its data moves.
    fn ring_delay(&mut self, now: SimTime) {
        let current = self.topology().current.as_mut().expect("an operation runs");
        current.phase = Phase::RingDelay;
        self.kernel
            .schedule_at(now + streaming::RING_DELAY, Event::ActionStep);
    }

    /// `RING_DELAY` is over: the data moves.
    pub(super) fn action_step(&mut self, now: SimTime) {
        let ready = self
            .topology
            .as_ref()
            .and_then(|topology| topology.current.as_ref())
            .is_some_and(|current| current.phase == Phase::RingDelay);
        if ready {
            self.start_streaming(now);
        }
    }

    /// Plans the operation's transfers and starts the first plans.
    fn start_streaming(&mut self, now: SimTime) {
        let alive: Vec<bool> = self
            .engines
            .iter()
            .map(|engine| engine.life() == NodeLife::Running)
            .collect();
        let peers_at_once = self.plan.cluster.preset.stream_peers_at_once();
        let topology = self.topology();
        let current = topology.current.as_ref().expect("an operation runs");
        let (metadata, replication) = (&topology.metadata, &topology.replication);
        let transfers = match current.kind {
            OperationKind::AddNode { node } => {
                streaming::bootstrap_transfers(metadata, replication, node)
            }
            OperationKind::Decommission { node } => {
                streaming::decommission_transfers(metadata, replication, node)
            }
            OperationKind::RemoveNode { node } => {
                streaming::removenode_transfers(metadata, replication, node, |peer| {
                    alive[peer as usize]
                })
            }
        };
        // A node that must send or receive is down: with
        // `consistent_rangemovement` Scylla refuses to stream from anyone
        // else ("A node required to move the data consistently is down").
        if let Some(transfer) = transfers
            .iter()
            .find(|transfer| !alive[transfer.source as usize] || !alive[transfer.target as usize])
        {
            let down = if alive[transfer.source as usize] {
                transfer.target
            } else {
                transfer.source
            };
            let reason = format!(
                "node {down}, which must {} ranges, is down",
                if down == transfer.source {
                    "send"
                } else {
                    "receive"
                }
            );
            self.fail_action(now, reason);
            return;
        }
        let streamer = RangeStreamer::new(&transfers, peers_at_once, topology.next_plan);
        topology.next_plan += streamer.plans();
        let current = topology.current.as_mut().expect("an operation runs");
        current.phase = Phase::Streaming;
        current.streaming_since = Some(now);
        let (index, plans) = (current.index, streamer.plans());
        current.streamer = Some(streamer);
        self.event_log.record(
            now,
            What::StreamingStart {
                action: index,
                plans,
                peers: transfers.len() as u32,
            },
        );
        self.start_plans(now);
    }

    /// Starts what plans the range streamer allows now; finishes the
    /// operation when none is left.
    fn start_plans(&mut self, now: SimTime) {
        let simulated_shards = self.simulated_shards;
        let current = self.topology().current.as_mut().expect("an operation runs");
        let streamer = current.streamer.as_mut().expect("streaming");
        if streamer.is_done() {
            self.finish_action(now);
            return;
        }
        let started = streamer.start_plans();
        for plan in &started {
            current.plans.insert(
                plan.id,
                PlanRun {
                    plan: plan.clone(),
                    shards_left: simulated_shards,
                    rows: 0,
                    bytes: 0,
                },
            );
        }
        for plan in started {
            self.note_stale_source(&plan);
            for local in 0..simulated_shards {
                self.engines[plan.source as usize].start_stream_out(
                    now,
                    local,
                    plan.id,
                    plan.target,
                    plan.ranges.clone(),
                );
                let shard = self.shard_index(ShardAddress {
                    node: plan.source,
                    shard: local,
                });
                self.drain(now, shard);
            }
        }
    }

    /// Data mode: the acknowledged versions of `plan`'s ranges its source
    /// lacks as the plan starts (a hint owed to it, or a crash destroyed
    /// them) are versions its target will lack too (the checkers count
    /// them apart: Scylla streams each range from one node, and only a
    /// repair mends the copy).
    fn note_stale_source(&mut self, plan: &Plan) {
        let Some(check) = self.consistency.as_ref() else {
            return;
        };
        let stale: Vec<(u64, u64)> = check
            .acknowledged()
            .filter(|&(key, _)| streaming::ranges_contain(&plan.ranges, engine::key_token(key)))
            .filter(|&(key, acknowledged)| {
                self.held_version(plan.source, key)
                    .is_some_and(|held| held < acknowledged)
            })
            .collect();
        if let Some(check) = self.consistency.as_mut() {
            check.streamed_stale(plan.target, &stale);
        }
    }

    /// A receiving shard has all of plan `plan`'s data in.
    pub(super) fn stream_received(&mut self, now: SimTime, plan: u32, rows: u64, bytes: u64) {
        let scale = self.plan.cluster.sampling_scale();
        let Some(current) = self.topology().current.as_mut() else {
            return; // its operation failed
        };
        let Some(run) = current.plans.get_mut(&plan) else {
            return;
        };
        run.rows += rows;
        run.bytes += bytes;
        run.shards_left -= 1;
        if run.shards_left > 0 {
            return;
        }
        let run = current.plans.remove(&plan).expect("checked");
        let bytes = (run.bytes as f64 * scale).round() as u64;
        current.bytes += bytes;
        current
            .streamer
            .as_mut()
            .expect("streaming")
            .plan_done(plan);
        let action = current.index;
        self.event_log.record(
            now,
            What::StreamPlanDone {
                action,
                plan,
                source: run.plan.source,
                target: run.plan.target,
                rows: (run.rows as f64 * scale).round() as u64,
                bytes,
            },
        );
        self.start_plans(now);
    }

    /// Node `observer` convicted `peer`: a plan between the two fails, and
    /// with it the operation (Scylla's stream manager fails a session
    /// whose peer the failure detector marks down). The joining node gives
    /// up and stops; a leaving node stays a normal member; the operations
    /// after it do not run, as a script stops at a failed command.
    pub(super) fn topology_peer_down(&mut self, now: SimTime, observer: u32, peer: u32) {
        let Some(current) = self.topology.as_ref().and_then(|t| t.current.as_ref()) else {
            return;
        };
        let Some(failed) = current.plans.values().find(|run| {
            (run.plan.source == observer && run.plan.target == peer)
                || (run.plan.target == observer && run.plan.source == peer)
        }) else {
            return;
        };
        let reason = format!(
            "stream plan {} from node {} to node {} failed: node {observer} saw node {peer} down",
            failed.plan.id, failed.plan.source, failed.plan.target
        );
        self.fail_action(now, reason);
    }

    /// The operation under way fails for `reason`: its plans stop on both
    /// ends, a joining node gives up and stops, a leaving node stays a
    /// normal member, and the operations after it do not run, as a script
    /// stops at a failed command.
    fn fail_action(&mut self, now: SimTime, reason: String) {
        let current = self.topology().current.take().expect("an operation runs");
        let plans: Vec<Plan> = current.plans.values().map(|run| run.plan.clone()).collect();
        for plan in plans {
            for node in [plan.source, plan.target] {
                for local in 0..self.simulated_shards {
                    self.engines[node as usize].abort_stream(local, plan.id);
                }
            }
        }
        let node = current.kind.node();
        match current.kind {
            OperationKind::AddNode { .. } => {
                // A node that crashed while it booted never announced its
                // tokens: nothing to give up.
                if current.phase != Phase::Booting {
                    self.change(now, node, "gave-up", |metadata| {
                        metadata.cancel_joining(node)
                    });
                }
                if self.engines[node as usize].life() != NodeLife::Down {
                    self.stop(now, node);
                }
            }
            OperationKind::Decommission { .. } | OperationKind::RemoveNode { .. } => {
                // A decommission of a node that is down never announced it.
                if self
                    .topology()
                    .metadata
                    .leaving()
                    .any(|leaving| leaving == node)
                {
                    self.change(now, node, "normal", |metadata| {
                        metadata.cancel_leaving(node)
                    });
                }
            }
        }
        self.event_log.record(
            now,
            What::ActionFailed {
                action: current.index,
                kind: current.kind.name(),
                node,
                reason,
            },
        );
        // The script stops: no later operation runs.
        self.topology().stopped = true;
        self.topology().waiting.clear();
        self.actions_unfinished = 0;
    }

    /// Every plan is in: the node becomes normal, or leaves.
    fn finish_action(&mut self, now: SimTime) {
        let current = self.topology().current.take().expect("an operation runs");
        self.actions_unfinished -= 1;
        match current.kind {
            OperationKind::AddNode { node } => {
                self.change(now, node, "normal", |metadata| {
                    metadata.finish_joining(node)
                });
            }
            OperationKind::Decommission { node } | OperationKind::RemoveNode { node } => {
                self.change(now, node, "left", |metadata| metadata.finish_leaving(node));
                for engine in &mut self.engines {
                    if engine.id() != node {
                        engine.forget_peer(node);
                    }
                }
                self.driver_sees(node, false);
                if matches!(current.kind, OperationKind::Decommission { .. }) {
                    // Its work done, the node stops.
                    self.stop(now, node);
                } else {
                    // Removed while down, it never replays its hints.
                    self.hints_gone_with(node);
                }
            }
        }
        let streaming_s = current
            .streaming_since
            .map_or(0.0, |since| (now - since).as_secs_f64());
        self.event_log.record(
            now,
            What::ActionEnd {
                action: current.index,
                kind: current.kind.name(),
                node: current.kind.node(),
                duration_s: (now - current.started).as_secs_f64(),
                streaming_s,
                bytes: current.bytes,
            },
        );
        self.next_action(now);
    }
}
