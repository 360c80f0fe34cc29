//! What the simulator's events are spent on: each kernel event counted by
//! its kind, and each kind's category (client, message, CPU completion,
//! I/O, timer, NIC wake-up, metrics, faults and topology), so that
//! `twin bench cluster` can say where a run's events go per client
//! operation, and a change that adds events per operation shows in the
//! committed baseline (`scenarios/bench-events.json`) before it shows in
//! wall time. The counts are deterministic: same scenario and seed, same
//! counts.

use std::collections::BTreeMap;

/// What an event is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// A load's first issue.
    LoadStart,
    /// A client thread is ready to issue (closed loop, after its reply or
    /// its pacing).
    ThreadReady,
    /// A client thread issues a request (after its own hand-offs).
    Issue,
    /// An open-loop (`fixed=`) arrival.
    OpenLoopArrival,
    /// A client request reaches its coordinator.
    RequestArrives,
    /// A batch reaches its coordinator.
    BatchArrives,
    /// A reply reaches its client.
    ReplyArrives,
    /// A node's NIC can send its next queued message.
    NodeNicWake,
    /// A client's NIC can send its next queued message.
    ClientNicWake,
    /// A client's timeout check.
    TimeoutCheck,
    /// An internode message reaches its shard.
    MessageArrives,
    /// A lost stream message is sent again.
    StreamResend,
    /// A Seastar reactor's task run ends.
    CpuRunEnd,
    /// A JVM node's next task completion or woken thread.
    JvmWake,
    /// A device I/O completes.
    IoDone,
    /// A shard's own timers (flush, compaction, request deadlines, hints).
    ShardTimer,
    /// The metrics interval.
    IntervalTick,
    /// A node's own timers (gossip, failure detection).
    NodeTimer,
    /// A topology operation is due.
    ActionDue,
    /// A topology operation's next step.
    ActionStep,
    /// A fault starts.
    FaultStarts,
    /// A fault ends.
    FaultEnds,
    /// A flapping network turns off or on.
    FlapSwitch,
    /// A gossip message arrives.
    GossipArrives,
}

impl EventKind {
    /// Every kind, in declaration order (the counters' index).
    pub const ALL: [EventKind; 24] = [
        EventKind::LoadStart,
        EventKind::ThreadReady,
        EventKind::Issue,
        EventKind::OpenLoopArrival,
        EventKind::RequestArrives,
        EventKind::BatchArrives,
        EventKind::ReplyArrives,
        EventKind::NodeNicWake,
        EventKind::ClientNicWake,
        EventKind::TimeoutCheck,
        EventKind::MessageArrives,
        EventKind::StreamResend,
        EventKind::CpuRunEnd,
        EventKind::JvmWake,
        EventKind::IoDone,
        EventKind::ShardTimer,
        EventKind::IntervalTick,
        EventKind::NodeTimer,
        EventKind::ActionDue,
        EventKind::ActionStep,
        EventKind::FaultStarts,
        EventKind::FaultEnds,
        EventKind::FlapSwitch,
        EventKind::GossipArrives,
    ];

    /// The kind's name, as `twin bench cluster` and the baseline spell it.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::LoadStart => "load-start",
            EventKind::ThreadReady => "thread-ready",
            EventKind::Issue => "issue",
            EventKind::OpenLoopArrival => "open-loop-arrival",
            EventKind::RequestArrives => "request-arrives",
            EventKind::BatchArrives => "batch-arrives",
            EventKind::ReplyArrives => "reply-arrives",
            EventKind::NodeNicWake => "node-nic-wake",
            EventKind::ClientNicWake => "client-nic-wake",
            EventKind::TimeoutCheck => "timeout-check",
            EventKind::MessageArrives => "message-arrives",
            EventKind::StreamResend => "stream-resend",
            EventKind::CpuRunEnd => "reactor-run-end",
            EventKind::JvmWake => "jvm-wake",
            EventKind::IoDone => "io-done",
            EventKind::ShardTimer => "shard-timer",
            EventKind::IntervalTick => "interval-tick",
            EventKind::NodeTimer => "node-timer",
            EventKind::ActionDue => "action-due",
            EventKind::ActionStep => "action-step",
            EventKind::FaultStarts => "fault-starts",
            EventKind::FaultEnds => "fault-ends",
            EventKind::FlapSwitch => "flap-switch",
            EventKind::GossipArrives => "gossip-arrives",
        }
    }

    /// The kind's category.
    pub fn category(self) -> &'static str {
        match self {
            EventKind::LoadStart
            | EventKind::ThreadReady
            | EventKind::Issue
            | EventKind::OpenLoopArrival
            | EventKind::ReplyArrives
            | EventKind::TimeoutCheck => "client",
            EventKind::RequestArrives
            | EventKind::BatchArrives
            | EventKind::MessageArrives
            | EventKind::StreamResend
            | EventKind::GossipArrives => "message",
            EventKind::NodeNicWake | EventKind::ClientNicWake => "nic wake-up",
            EventKind::CpuRunEnd => "cpu (reactor)",
            EventKind::JvmWake => "cpu (jvm)",
            EventKind::IoDone => "io",
            EventKind::ShardTimer | EventKind::NodeTimer => "timer",
            EventKind::IntervalTick => "metrics",
            EventKind::ActionDue
            | EventKind::ActionStep
            | EventKind::FaultStarts
            | EventKind::FaultEnds
            | EventKind::FlapSwitch => "faults and topology",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

// `ALL` lists each kind at its own index.
const _: () = {
    let mut i = 0;
    while i < EventKind::ALL.len() {
        assert!(EventKind::ALL[i] as usize == i);
        i += 1;
    }
};

/// Events handled, by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventCounts {
    counts: [u64; EventKind::ALL.len()],
}

impl EventCounts {
    /// One event of `kind` handled.
    #[inline]
    pub fn record(&mut self, kind: EventKind) {
        self.counts[kind.index()] += 1;
    }

    /// Events of `kind`.
    pub fn of(&self, kind: EventKind) -> u64 {
        self.counts[kind.index()]
    }

    /// Every event.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The kinds that occurred, by name.
    pub fn by_kind(&self) -> BTreeMap<&'static str, u64> {
        EventKind::ALL
            .into_iter()
            .filter(|&kind| self.of(kind) > 0)
            .map(|kind| (kind.name(), self.of(kind)))
            .collect()
    }

    /// The categories that occurred, by name.
    pub fn by_category(&self) -> BTreeMap<&'static str, u64> {
        let mut categories = BTreeMap::new();
        for kind in EventKind::ALL {
            if self.of(kind) > 0 {
                *categories.entry(kind.category()).or_insert(0) += self.of(kind);
            }
        }
        categories
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_by_kind_and_category() {
        let mut counts = EventCounts::default();
        for _ in 0..3 {
            counts.record(EventKind::Issue);
        }
        counts.record(EventKind::ReplyArrives);
        counts.record(EventKind::IoDone);
        assert_eq!(counts.total(), 5);
        assert_eq!(counts.of(EventKind::Issue), 3);
        assert_eq!(counts.by_kind().get("issue"), Some(&3));
        assert_eq!(
            counts.by_kind().get("jvm-wake"),
            None,
            "absent kinds are left out"
        );
        assert_eq!(counts.by_category().get("client"), Some(&4));
        assert_eq!(counts.by_category().get("io"), Some(&1));
    }

    #[test]
    fn names_are_unique() {
        let names: std::collections::BTreeSet<_> =
            EventKind::ALL.iter().map(|kind| kind.name()).collect();
        assert_eq!(names.len(), EventKind::ALL.len());
    }
}
