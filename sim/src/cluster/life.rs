//! Nodes that crash and restart, and devices that slow down or fail, at
//! run time (`crate::faults` says what each fault means).
//!
//! A crash takes the node off the network (its NIC is cut until it joins
//! again) and kills its process: the CPU tasks and queued I/Os of its
//! shards are dropped, and what still arrives for them (requests and
//! messages sent before the crash) is not taken in. I/Os already on the
//! device complete there, and completions that reach the engine after a
//! restart belong to its earlier incarnation, which the engine drops
//! (`engine::Shard::restart`). Crash faults on a node compose: it is down
//! while any holds it, and restarts when the last lets go (or at a
//! `restart`).

use units::SimTime;

use super::{Inbound, ShardCpu, Simulation, TASK_KIND_BITS};
use crate::events::What;
use crate::faults::network::Switch;
use engine::node::NodeLife;
use engine::ShardAddress;

impl Simulation {
    /// A crash fault takes hold of `node`: the first crashes it.
    pub(super) fn crash_hold(&mut self, now: SimTime, node: u32) {
        let hardware = &mut self.nodes[node as usize];
        hardware.crash_holds += 1;
        // Held down already otherwise (`engine::Node::crash` refuses a
        // node that is down).
        if hardware.crash_holds == 1 {
            self.crash(now, node);
        }
    }

    /// A crash fault lets go of `node`: the last one restarts it.
    pub(super) fn crash_release(&mut self, now: SimTime, node: u32) {
        let hardware = &mut self.nodes[node as usize];
        if hardware.crash_holds == 0 {
            // A `restart` started it already.
            return;
        }
        hardware.crash_holds -= 1;
        if hardware.crash_holds == 0 {
            self.restart(now, node);
        }
    }

    /// A `restart` fault: the node starts, whatever crash faults still
    /// hold it.
    pub(super) fn restart_fault(&mut self, now: SimTime, node: u32) {
        let hardware = &mut self.nodes[node as usize];
        if hardware.crash_holds > 0 {
            hardware.crash_holds = 0;
            self.restart(now, node);
        }
    }

    /// `node` crashes now.
    fn crash(&mut self, now: SimTime, node: u32) {
        self.event_log.record(now, What::NodeCrash { node });
        self.take_down(now, node);
        self.topology_node_crashed(now, node);
    }

    /// A decommissioned node's process stops: down for good, as a crash
    /// leaves it.
    pub(super) fn stop(&mut self, now: SimTime, node: u32) {
        self.hints_gone_with(node);
        self.nodes[node as usize].crash_holds += 1;
        self.take_down(now, node);
    }

    /// `node` leaves for good (it stops after a decommission or a given-up
    /// join, or a removenode takes it out while it is down): the hints it
    /// holds, on disk or not, go with it.
    pub(super) fn hints_gone_with(&mut self, node: u32) {
        if let Some(check) = self.consistency.as_mut() {
            let hints: Vec<(u32, engine::hints::Hint)> = self.engines[node as usize]
                .shards()
                .iter()
                .flat_map(|shard| shard.unsent_hints())
                .collect();
            check.hints_gone(&hints);
        }
    }

    /// `node`'s process dies now: off the network, its shards' work
    /// dropped.
    fn take_down(&mut self, now: SimTime, node: u32) {
        if !self.nodes[node as usize].life_cut {
            self.cut_for_life(node, true);
        }
        self.nodes[node as usize].restarted = None;
        for local in 0..self.simulated_shards {
            let shard = self.shard_index(ShardAddress { node, shard: local });
            self.kill_shard(now, shard);
        }
        // The requests it coordinated die with it: none will be answered.
        self.coordinating[node as usize].clear();
        let losses = self.engines[node as usize].crash(now);
        if let Some(check) = self.consistency.as_mut() {
            check.crashed(now, node, &losses);
        }
    }

    /// Drops what the shard's dead process had queued on its core and its
    /// I/O queue, and what reached it that its next poll would take in.
    fn kill_shard(&mut self, now: SimTime, shard: u32) {
        let state = &mut self.shards[shard as usize];
        state.up = false;
        let tags = match &mut state.cpu {
            ShardCpu::Reactor(core) => core.drop_queued(),
            ShardCpu::Jvm { node, .. } => node.drop_tasks(now),
        };
        for tag in tags {
            let kind = (tag & ((1 << TASK_KIND_BITS) - 1)) as usize;
            state.time_spent.cpu[kind].on_cpu.end(now);
        }
        for (_, _, class) in state.io_queue.drop_queued() {
            state.time_spent.io[usize::from(class)].queued.end(now);
        }
        // What the reactor's next poll would have taken in: completed
        // I/Os free their place in the queue; the rest is dropped.
        for inbound in std::mem::take(&mut state.inbox) {
            match inbound {
                Inbound::IoDone { key } => {
                    let (_, cost, _) = state.io_in_flight.remove(key as usize);
                    state.io_queue.complete(cost);
                }
                Inbound::Timer => state.timer_in_inbox = false,
                Inbound::Request(..) | Inbound::Batch(..) | Inbound::Message { .. } => {}
            }
        }
        // What its tasks sent this period never leaves.
        state.outbox.clear();
    }

    /// `node` starts again now: its shards replay their commitlogs.
    fn restart(&mut self, now: SimTime, node: u32) {
        self.event_log.record(now, What::NodeRestart { node });
        self.nodes[node as usize].restarted = Some((now, 0, 0));
        self.engines[node as usize].restart(now);
        for local in 0..self.simulated_shards {
            let shard = self.shard_index(ShardAddress { node, shard: local });
            self.drain(now, shard);
        }
    }

    /// A restarted shard replayed `entries` entries of `bytes`.
    pub(super) fn shard_replayed(&mut self, now: SimTime, shard: u32, entries: u64, bytes: u64) {
        let (node, local) = self.locate(shard);
        if let Some((_, replayed_entries, replayed_bytes)) = &mut self.nodes[node].restarted {
            *replayed_entries += entries;
            *replayed_bytes += bytes;
        }
        self.engines[node].shard_replayed(now, local);
        self.drain_node(now, node as u32);
    }

    /// The restarted node is back on the network and in gossip.
    pub(super) fn node_joined(&mut self, now: SimTime, node: u32) {
        if self.nodes[node as usize].life_cut {
            self.cut_for_life(node, false);
        }
        let (since, replayed_entries, replayed_bytes) = self.nodes[node as usize]
            .restarted
            .expect("a node joins after its restart");
        self.event_log.record(
            now,
            What::NodeJoined {
                node,
                // Scaled to the node when its shards are sampled.
                replayed_entries: (replayed_entries as f64 * self.plan.cluster.sampling_scale())
                    .round() as u64,
                replayed_bytes: (replayed_bytes as f64 * self.plan.cluster.sampling_scale()).round()
                    as u64,
                replay_s: (now - since).as_secs_f64(),
            },
        );
        for local in 0..self.simulated_shards {
            let shard = self.shard_index(ShardAddress { node, shard: local });
            self.shards[shard as usize].up = true;
            self.drain(now, shard);
        }
        self.rearm_node_timer(node);
    }

    /// The restarted node takes clients again: the driver routes to it
    /// once its control connection's node sees it up (its reconnection
    /// attempts succeed from now on).
    pub(super) fn node_serving(&mut self, now: SimTime, node: u32) {
        self.event_log.record(now, What::NodeServing { node });
        self.topology_node_serving(now, node);
        let control = &self.engines[super::CONTROL_NODE as usize];
        if control.life() == NodeLife::Running
            && !control.shards()[0].sees_down(node)
            && !self.nodes[super::CONTROL_NODE as usize].nic.faults().cut
        {
            self.driver_sees(node, true);
        }
    }

    /// Cuts `node`'s network (`on`) for a crash, or restores it.
    fn cut_for_life(&mut self, node: u32, on: bool) {
        self.nodes[node as usize].life_cut = on;
        self.switch(Switch::Cut(&[node]), on);
    }

    /// The node's device fails: its queued I/Os are dropped (they error),
    /// and from now on every I/O does.
    pub(super) fn disk_fails(&mut self, now: SimTime, node: u32) {
        self.nodes[node as usize].disk_failed = true;
        for local in 0..self.simulated_shards {
            let shard = self.shard_index(ShardAddress { node, shard: local });
            let state = &mut self.shards[shard as usize];
            let dropped = state.io_queue.drop_queued();
            for (_, _, class) in &dropped {
                state.time_spent.io[usize::from(*class)].queued.end(now);
            }
            if !dropped.is_empty() {
                self.disk_error(now, node);
            }
        }
    }

    /// An I/O on `node`'s failed device returned an error: the node
    /// isolates itself, once.
    pub(super) fn disk_error(&mut self, now: SimTime, node: u32) {
        let hardware = &mut self.nodes[node as usize];
        if hardware.isolated {
            return;
        }
        hardware.isolated = true;
        self.event_log.record(now, What::NodeIsolated { node });
        // For good: cuts are counted, so a restart's rejoining leaves it.
        self.switch(Switch::Cut(&[node]), true);
    }

    /// I/O `key` of `shard`, in flight when its device failed, completed
    /// with an error: it frees its place; the engine never hears of it.
    pub(super) fn failed_io(&mut self, now: SimTime, shard: u32, key: u32) {
        let state = &mut self.shards[shard as usize];
        let (_, cost, _) = state.io_in_flight.remove(key as usize);
        state.io_queue.complete(cost);
        let node = state.node;
        self.disk_error(now, node);
    }

    /// A `slow-disk` fault on `node` starts (`on`) or ends: the device
    /// serves at the product of the slowdowns in force.
    pub(super) fn slow_disk(&mut self, node: u32, slowdown: models::nvme::Slowdown, on: bool) {
        let hardware = &mut self.nodes[node as usize];
        if on {
            hardware.slowdowns.push(slowdown);
        } else {
            let index = hardware
                .slowdowns
                .iter()
                .position(|held| *held == slowdown)
                .expect("a slow-disk fault ends once it started");
            hardware.slowdowns.remove(index);
        }
        // Overlapping slow-disk faults multiply, clamped to the model's
        // bounds.
        let combined = hardware
            .slowdowns
            .iter()
            .fold(models::nvme::Slowdown::NONE, |acc, held| acc.stacked(*held));
        hardware.device.set_slowdown(combined);
    }
}
