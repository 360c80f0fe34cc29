//! What happened during a run, in simulated-time order: injected faults
//! starting and ending, and the cluster's reactions to them. Written as
//! `events.jsonl`, one JSON object per line, byte-identical for the same
//! scenario and seed.

use serde::Serialize;
use units::SimTime;

/// One entry of the log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunEvent {
    /// Simulated seconds since the start of the run.
    pub time_s: f64,
    /// What happened.
    #[serde(flatten)]
    pub what: What,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum What {
    /// Fault `fault` (its index in the scenario's `[[fault]]` list) started.
    FaultStart {
        /// Index in the scenario.
        fault: u32,
        /// Its kind.
        kind: &'static str,
        /// The nodes it acts on.
        nodes: Vec<u32>,
    },
    /// Fault `fault` ended.
    FaultEnd {
        /// Index in the scenario.
        fault: u32,
        /// Its kind.
        kind: &'static str,
        /// The nodes it acted on.
        nodes: Vec<u32>,
    },
    /// A flap cut the nodes' network.
    NetworkOff {
        /// Index of the flap in the scenario.
        fault: u32,
        /// The nodes cut off.
        nodes: Vec<u32>,
    },
    /// A flap restored the nodes' network.
    NetworkOn {
        /// Index of the flap in the scenario.
        fault: u32,
        /// The nodes back on.
        nodes: Vec<u32>,
    },
    /// Node `observer`'s failure detector convicted `peer`: its
    /// coordinators stop sending to it.
    NodeDown {
        /// The node that now sees `peer` down.
        observer: u32,
        /// The node convicted.
        peer: u32,
        /// Its phi at conviction (log10(e) x phi passed the threshold).
        phi: f64,
    },
    /// Node `observer` sees `peer` up again (its echo was answered).
    NodeUp {
        /// The node that now sees `peer` up.
        observer: u32,
        /// The node back up.
        peer: u32,
    },
    /// The node crashed: its memory is gone and it is off the network.
    NodeCrash {
        /// The node.
        node: u32,
    },
    /// The crashed node started again and replays its commitlog.
    NodeRestart {
        /// The node.
        node: u32,
    },
    /// The restarted node's shards replayed their commitlogs and flushed
    /// what they replayed: it is back on the network and in gossip.
    NodeJoined {
        /// The node.
        node: u32,
        /// Commitlog entries its simulated shards applied.
        replayed_entries: u64,
        /// Bytes of commitlog they read back.
        replayed_bytes: u64,
        /// Seconds from its restart.
        replay_s: f64,
    },
    /// Gossip settled on the restarted node: it takes clients again.
    NodeServing {
        /// The node.
        node: u32,
    },
    /// The node's device failed an I/O and the node isolated itself (it
    /// stopped gossip, its CQL server and its messaging service).
    NodeIsolated {
        /// The node.
        node: u32,
    },
    /// Topology operation `action` (its index in the scenario's
    /// `[[action]]` list) started: the operator ran it (it may have waited
    /// for the one before).
    ActionStart {
        /// Index in the scenario.
        action: u32,
        /// `add-node`, `decommission` or `removenode`.
        kind: &'static str,
        /// The node it adds or removes.
        node: u32,
    },
    /// The token metadata moved to a new epoch: `node` announced its
    /// tokens and joins (`joining`), announced it leaves (`leaving`),
    /// finished joining (`normal`), left (`left`), gave its join up
    /// (`gave-up`), or stays after a failed leave (`normal`).
    TopologyChange {
        /// The node.
        node: u32,
        /// Its new state.
        state: &'static str,
        /// The metadata's epoch.
        epoch: u64,
    },
    /// The operation's data started to move: `plans` stream plans between
    /// `peers` pairs of nodes, `bytes` in all (scaled to the node when its
    /// shards are sampled).
    StreamingStart {
        /// Index in the scenario.
        action: u32,
        /// Stream plans.
        plans: u32,
        /// Node pairs streaming.
        peers: u32,
    },
    /// Stream plan `plan` finished: `source` sent `target` `rows` rows of
    /// `bytes` (scaled to the node when sampled).
    StreamPlanDone {
        /// Index in the scenario.
        action: u32,
        /// The plan, unique within the operation.
        plan: u32,
        /// The sending node.
        source: u32,
        /// The receiving node.
        target: u32,
        /// Rows streamed.
        rows: u64,
        /// Bytes streamed.
        bytes: u64,
    },
    /// The operation failed: `reason` says which plan and peer.
    ActionFailed {
        /// Index in the scenario.
        action: u32,
        /// Its kind.
        kind: &'static str,
        /// The node it was adding or removing.
        node: u32,
        /// What failed.
        reason: String,
    },
    /// The operation finished.
    ActionEnd {
        /// Index in the scenario.
        action: u32,
        /// Its kind.
        kind: &'static str,
        /// The node it added or removed.
        node: u32,
        /// From its start to its end, seconds.
        duration_s: f64,
        /// Of which streaming, seconds.
        streaming_s: f64,
        /// Bytes streamed (scaled to the node when sampled).
        bytes: u64,
    },
    /// Over the interval ending at the event's time, the node's
    /// coordinators wrote and replayed hints.
    Hints {
        /// The coordinators' node.
        node: u32,
        /// Hints stored.
        written: u64,
        /// Hints their replicas acknowledged on replay.
        replayed: u64,
        /// Hints stored and not yet acknowledged, at the event's time.
        pending: u64,
    },
    /// Over the interval ending at the event's time, the node's
    /// coordinators found replicas disagreeing and repaired them.
    ReadRepairs {
        /// The coordinators' node.
        node: u32,
        /// Reads whose replicas disagreed.
        reads: u64,
        /// Of them, those found after the client's answer (repaired in the
        /// background).
        background: u64,
        /// Rows written back.
        rows: u64,
    },
}

/// The run's event log.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    events: Vec<RunEvent>,
}

impl EventLog {
    /// Records `what` at `now` (times never go back).
    pub fn record(&mut self, now: SimTime, what: What) {
        let time_s = now.as_nanos() as f64 / 1e9;
        debug_assert!(self.events.last().is_none_or(|last| last.time_s <= time_s));
        self.events.push(RunEvent { time_s, what });
    }

    /// The entries, in order.
    pub fn events(&self) -> &[RunEvent] {
        &self.events
    }

    /// The log as JSON lines.
    pub fn to_jsonl(&self) -> String {
        let mut text = String::new();
        for event in &self.events {
            text.push_str(&serde_json::to_string(event).expect("events serialize"));
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_one_json_object_per_line_with_their_time() {
        let mut log = EventLog::default();
        log.record(
            SimTime::from_nanos(1_500_000_000),
            What::FaultStart {
                fault: 0,
                kind: "drop",
                nodes: vec![1, 2],
            },
        );
        log.record(
            SimTime::from_nanos(2_000_000_000),
            What::NetworkOff {
                fault: 1,
                nodes: vec![2],
            },
        );
        assert_eq!(
            log.to_jsonl(),
            "{\"time_s\":1.5,\"event\":\"fault-start\",\"fault\":0,\"kind\":\"drop\",\"nodes\":[1,2]}\n\
             {\"time_s\":2.0,\"event\":\"network-off\",\"fault\":1,\"nodes\":[2]}\n"
        );
    }
}
