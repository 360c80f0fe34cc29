//! Gossip and the phi-accrual failure detector: how a node learns that
//! another is down, and up again, from heartbeats that stop and resume.
//!
//! What it models (Scylla 3.0 `gms/gossiper.cc`, `gms/failure_detector.cc`,
//! which follow Cassandra's `Gossiper` and `FailureDetector`):
//! - *Rounds.* Every [`GOSSIP_INTERVAL`] (1 s) a node bumps its own
//!   heartbeat version and sends a `SYN` with the digest of every endpoint
//!   it knows (its newest heartbeat version of each) to `max(1, N / 10)`
//!   random live peers (N counts the node itself), and, with probability
//!   `unreachable / (live + 1)`, to one random unreachable peer, to find it
//!   back. Then it checks every peer's phi (below). Each node's rounds run
//!   at their own phase.
//! - *Exchange.* `SYN` -> `ACK` (the receiver's digests, and what it has
//!   newer) -> `ACK2` (what the initiator has newer). Here every message
//!   carries the sender's whole view (a version per endpoint), so each side
//!   learns the other's newer versions when the real exchange would
//!   deliver them: the initiator at the `ACK`, the receiver at the `ACK2`.
//! - *Failure detector.* Each time a node applies a newer heartbeat of
//!   endpoint `e`, it reports an arrival for `e`: the interval since the
//!   last one enters `e`'s arrival window (the last 1,000 intervals, only
//!   those between the gossip interval and `fd_max_interval_ms`, 2 s; the
//!   first arrival enters `fd_initial_value_ms`, 2 s). Each round,
//!   `phi = (now - last arrival) / mean interval`; `e` is convicted down
//!   when `log10(e) x phi > phi_convict_threshold` (8): about 18 s of
//!   silence with heartbeats a second apart. So the time to mark a node
//!   down emerges from the heartbeats a node stopped hearing.
//! - *Up again.* A newer heartbeat of a node marked down sends it an
//!   `ECHO`; its reply marks it up (`mark_alive` / `real_mark_alive`). An
//!   echo lost (the node is still cut off, or crashed) times out after
//!   [`ECHO_TIMEOUT`], and the next newer heartbeat sends another.
//!
//! The cluster joins a gossip that has been running: every node knows
//! every other alive, and every window starts with one interval of
//! [`GOSSIP_INTERVAL`], what a steady cluster's windows hold (the first
//! arrival's 2 s would double the first conviction's delay).
//!
//! A restarted node gossips under a new generation ([`Gossiper::restarted`]):
//! its versions compare above its earlier life's, so peers take its first
//! heartbeat as news and echo it back up.
//!
//! Left out: seeds (every node is one here, and no node joins), application
//! states other than the heartbeat (status, tokens, schema: topology changes
//! will add them), the local-pause guard
//! (`get_max_local_pause`: a node that was itself stalled convicts nobody),
//! quarantine and fat clients. Wire sizes are estimates: a digest of 20
//! bytes per endpoint (address, generation, version) and a 64-byte frame.

use std::collections::VecDeque;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use units::{SimDuration, SimTime};

/// `gossiper::INTERVAL`: one round a second.
pub const GOSSIP_INTERVAL: SimDuration = SimDuration::from_secs(1);
/// `fd_max_interval_ms`: longer intervals between arrivals are ignored.
pub const MAX_INTERVAL: SimDuration = SimDuration::from_secs(2);
/// `phi_convict_threshold`'s default.
pub const PHI_CONVICT_THRESHOLD: f64 = 8.0;
/// `messaging_service::send_gossip_echo`'s timeout @3.0: an echo not
/// answered by then is given up, and the next newer heartbeat sends
/// another.
pub const ECHO_TIMEOUT: SimDuration = SimDuration::from_secs(3);
/// `failure_detector::SAMPLE_SIZE`: the intervals a window keeps.
const SAMPLE_SIZE: usize = 1000;
/// `PHI_FACTOR` = `M_LOG10E`.
const PHI_FACTOR: f64 = std::f64::consts::LOG10_E;
/// Bytes of one endpoint's digest on the wire (estimate).
const DIGEST_BYTES: u64 = 20;
/// Frame and header bytes of a gossip message (estimate).
const FRAME_BYTES: u64 = 64;

// Arrivals further apart than a round count up to MAX_INTERVAL; an echo
// outlives a round; the threshold and the window are positive.
const _: () = assert!(GOSSIP_INTERVAL.as_nanos() < MAX_INTERVAL.as_nanos());
const _: () = assert!(GOSSIP_INTERVAL.as_nanos() < ECHO_TIMEOUT.as_nanos());
const _: () = assert!(PHI_CONVICT_THRESHOLD > 0.0 && SAMPLE_SIZE > 0);
const _: () = assert!(DIGEST_BYTES < FRAME_BYTES);

/// What a gossip message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GossipKind {
    /// Opens an exchange.
    Syn,
    /// Answers a `SYN`.
    Ack,
    /// Closes the exchange.
    Ack2,
    /// Asks a node marked down whether it is up.
    Echo,
    /// It is.
    EchoReply,
}

/// A gossip message: its kind and the sender's view, the newest heartbeat
/// version it knows of each node (empty for echoes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GossipMessage {
    /// What it is.
    pub kind: GossipKind,
    /// The sender's versions, by node.
    pub versions: Box<[u64]>,
}

impl GossipMessage {
    /// Bytes on the wire.
    pub fn wire_bytes(&self) -> u64 {
        FRAME_BYTES + DIGEST_BYTES * self.versions.len() as u64
    }
}

/// What the gossiper asks its node to do.
#[derive(Clone, Debug, PartialEq)]
pub enum GossipOutput {
    /// Send `message` to node `to`.
    Send {
        /// The destination node.
        to: u32,
        /// The message.
        message: GossipMessage,
    },
    /// This node now sees node `node` up (`true`) or down.
    Liveness {
        /// The node.
        node: u32,
        /// Up or down.
        alive: bool,
        /// Its phi when convicted (0 when seen up).
        phi: f64,
    },
}

/// One endpoint's arrival window.
#[derive(Clone, Debug)]
struct ArrivalWindow {
    intervals: VecDeque<u64>,
    sum: u64,
    last: SimTime,
}

impl ArrivalWindow {
    fn new(now: SimTime) -> ArrivalWindow {
        let mut window = ArrivalWindow {
            intervals: VecDeque::new(),
            sum: 0,
            last: now,
        };
        window.push(GOSSIP_INTERVAL.as_nanos());
        window.check_invariants();
        window
    }

    /// Between one and `SAMPLE_SIZE` intervals, each within
    /// [`GOSSIP_INTERVAL`, `MAX_INTERVAL`], so their sum lies between as
    /// many of each. O(1).
    fn check_invariants(&self) {
        let count = self.intervals.len() as u64;
        assert!(
            (1..=SAMPLE_SIZE as u64).contains(&count),
            "a window of {count}"
        );
        assert!(
            count * GOSSIP_INTERVAL.as_nanos() <= self.sum
                && self.sum <= count * MAX_INTERVAL.as_nanos(),
            "a window's sum is of intervals between a round and the maximum"
        );
    }

    fn push(&mut self, interval: u64) {
        debug_assert!(
            (GOSSIP_INTERVAL.as_nanos()..=MAX_INTERVAL.as_nanos()).contains(&interval),
            "an interval the detector keeps"
        );
        if self.intervals.len() == SAMPLE_SIZE {
            self.sum -= self.intervals.pop_front().expect("full");
        }
        self.intervals.push_back(interval);
        self.sum += interval;
        debug_assert!(self.intervals.len() <= SAMPLE_SIZE);
    }

    /// A heartbeat arrived at `now`.
    fn add(&mut self, now: SimTime) {
        debug_assert!(now >= self.last, "heartbeats arrive in time order");
        let interval = now.saturating_since(self.last);
        if interval >= GOSSIP_INTERVAL && interval <= MAX_INTERVAL {
            self.push(interval.as_nanos());
        }
        self.last = now;
    }

    fn phi(&self, now: SimTime) -> f64 {
        debug_assert!(!self.intervals.is_empty(), "a window keeps an interval");
        let mean = self.sum as f64 / self.intervals.len() as f64;
        let phi = now.saturating_since(self.last).as_nanos() as f64 / mean;
        debug_assert!(phi.is_finite() && phi >= 0.0);
        phi
    }
}

/// One node's gossiper and failure detector.
#[derive(Clone, Debug)]
pub struct Gossiper {
    me: u32,
    /// Newest heartbeat version known, by node (this node's own included).
    versions: Vec<u64>,
    alive: Vec<bool>,
    /// Endpoints this node knows of: every member from the start; a node
    /// that joins later once its first heartbeat arrives, and none after
    /// it has left.
    known: Vec<bool>,
    windows: Vec<ArrivalWindow>,
    /// When each node marked down was sent an echo not yet answered.
    echoing: Vec<Option<SimTime>>,
    phi_convict_threshold: f64,
    next_round: SimTime,
    rng: Pcg64Mcg,
    outputs: VecDeque<GossipOutput>,
}

impl Gossiper {
    /// Node `me`'s gossiper in a cluster of `nodes`, whose rounds start at a
    /// phase drawn from `seed` within the first interval after `now`.
    pub fn new(
        me: u32,
        nodes: u32,
        now: SimTime,
        seed: u64,
        phi_convict_threshold: f64,
    ) -> Gossiper {
        assert!(me < nodes, "node {me} of {nodes}");
        assert!(phi_convict_threshold > 0.0, "a positive threshold");
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let phase = rng.next_u64() % GOSSIP_INTERVAL.as_nanos();
        Gossiper {
            me,
            versions: vec![0; nodes as usize],
            alive: vec![true; nodes as usize],
            known: vec![true; nodes as usize],
            windows: (0..nodes).map(|_| ArrivalWindow::new(now)).collect(),
            echoing: vec![None; nodes as usize],
            phi_convict_threshold,
            next_round: now + SimDuration::from_nanos(phase),
            rng,
            outputs: VecDeque::new(),
        }
    }

    /// Node `me`'s gossiper after a restart, in its `generation`-th life:
    /// its heartbeat versions start above every one of its earlier lives
    /// (a version is the generation, high 32 bits, then the heartbeat),
    /// and it sees every peer down until a newer heartbeat of it arrives
    /// and its echo is answered, as a restarted Scylla's saved endpoints
    /// start unreachable.
    pub fn restarted(
        me: u32,
        nodes: u32,
        now: SimTime,
        seed: u64,
        phi_convict_threshold: f64,
        generation: u32,
    ) -> Gossiper {
        assert!(generation > 0, "a restart is a later life");
        let mut gossiper = Gossiper::new(me, nodes, now, seed, phi_convict_threshold);
        gossiper.versions[me as usize] = u64::from(generation) << 32;
        for (node, alive) in gossiper.alive.iter_mut().enumerate() {
            *alive = node == me as usize;
        }
        gossiper.check_invariants();
        gossiper
    }

    /// What must hold between the per-node tables: one entry per node in
    /// each; this node knows itself, sees itself up and never echoes
    /// itself; a node it does not know it neither sees up nor echoes; the
    /// threshold is positive and the next round not before any arrival;
    /// each arrival window holds its own invariants. O(nodes).
    pub fn check_invariants(&self) {
        let nodes = self.versions.len();
        assert!((self.me as usize) < nodes);
        assert!(
            self.alive.len() == nodes
                && self.known.len() == nodes
                && self.windows.len() == nodes
                && self.echoing.len() == nodes,
            "one entry per node in every table"
        );
        let me = self.me as usize;
        assert!(self.alive[me] && self.known[me], "a node sees itself up");
        assert!(self.echoing[me].is_none(), "a node never echoes itself");
        for node in 0..nodes {
            if !self.known[node] {
                assert!(!self.alive[node], "node {node} is unknown yet seen up");
                assert!(self.echoing[node].is_none());
            }
            self.windows[node].check_invariants();
        }
        assert!(self.phi_convict_threshold > 0.0);
    }

    /// This gossiper, not knowing the nodes `unknown` says (ids of nodes
    /// that have not joined yet): it neither gossips with them nor convicts
    /// them, and learns of each from its first heartbeat, which it echoes
    /// as for a node seen down, so that the node comes up once it answers.
    pub fn without(mut self, unknown: impl Fn(u32) -> bool) -> Gossiper {
        for node in 0..self.versions.len() as u32 {
            if node != self.me && unknown(node) {
                self.forget(node);
            }
        }
        self.check_invariants();
        self
    }

    /// Forgets `node` (it left the ring): no more gossip with it, nor a
    /// conviction.
    pub fn forget(&mut self, node: u32) {
        assert_ne!(node, self.me, "a node does not forget itself");
        self.known[node as usize] = false;
        self.alive[node as usize] = false;
        self.echoing[node as usize] = None;
        debug_assert!(self.known[self.me as usize], "a node keeps knowing itself");
    }

    /// Whether this node sees `node` up.
    pub fn is_alive(&self, node: u32) -> bool {
        debug_assert!(
            (node as usize) < self.alive.len(),
            "node {node} is not in the cluster"
        );
        self.alive[node as usize]
    }

    /// When the next round is due.
    pub fn next_round(&self) -> SimTime {
        self.next_round
    }

    /// The next output, in order.
    pub fn poll_output(&mut self) -> Option<GossipOutput> {
        self.outputs.pop_front()
    }

    fn view(&self, kind: GossipKind) -> GossipMessage {
        GossipMessage {
            kind,
            versions: self.versions.clone().into_boxed_slice(),
        }
    }

    fn send(&mut self, to: u32, message: GossipMessage) {
        debug_assert_ne!(to, self.me, "a node gossips with others");
        self.outputs.push_back(GossipOutput::Send { to, message });
    }

    /// A round, if due at `now`: bump the heartbeat, gossip to live and
    /// maybe unreachable peers, check every peer's phi.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if now < self.next_round {
            return;
        }
        debug_assert!(
            now - self.next_round < GOSSIP_INTERVAL,
            "a round is taken within an interval of its time"
        );
        self.next_round = now + GOSSIP_INTERVAL;
        self.versions[self.me as usize] += 1;
        let slots = self.versions.len() as u32;
        let live: Vec<u32> = (0..slots)
            .filter(|&node| node != self.me && self.alive[node as usize])
            .collect();
        let unreachable: Vec<u32> = (0..slots)
            .filter(|&node| {
                node != self.me && !self.alive[node as usize] && self.known[node as usize]
            })
            .collect();
        let peers = self.known.iter().filter(|known| **known).count();
        // max(1, N / 10) distinct random live peers.
        let wanted = (peers / 10).max(1).min(live.len());
        let mut chosen: Vec<u32> = Vec::with_capacity(wanted);
        while chosen.len() < wanted {
            let pick = live[(self.rng.next_u64() % live.len() as u64) as usize];
            if !chosen.contains(&pick) {
                chosen.push(pick);
            }
        }
        for to in chosen {
            let message = self.view(GossipKind::Syn);
            self.send(to, message);
        }
        if !unreachable.is_empty() {
            let probability = unreachable.len() as f64 / (live.len() as f64 + 1.0);
            if unit(&mut self.rng) < probability {
                let to = unreachable[(self.rng.next_u64() % unreachable.len() as u64) as usize];
                let message = self.view(GossipKind::Syn);
                self.send(to, message);
            }
        }
        self.status_check(now);
        debug_assert!(self.next_round > now, "the next round is ahead");
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// `do_status_check`: convicts the peers whose phi passed the threshold.
    fn status_check(&mut self, now: SimTime) {
        for node in 0..self.versions.len() as u32 {
            if node == self.me || !self.alive[node as usize] {
                continue;
            }
            let phi = self.windows[node as usize].phi(now);
            if PHI_FACTOR * phi > self.phi_convict_threshold {
                debug_assert!(self.known[node as usize], "only a known node is convicted");
                self.alive[node as usize] = false;
                self.outputs.push_back(GossipOutput::Liveness {
                    node,
                    alive: false,
                    phi,
                });
            }
        }
    }

    /// A gossip message from node `from` arrived.
    pub fn handle_message(&mut self, now: SimTime, from: u32, message: GossipMessage) {
        debug_assert!(
            from != self.me && (from as usize) < self.versions.len(),
            "gossip from a peer of the cluster, not from {from}"
        );
        match message.kind {
            GossipKind::Syn => {
                let reply = self.view(GossipKind::Ack);
                self.send(from, reply);
            }
            GossipKind::Ack => {
                self.apply(now, &message.versions);
                let reply = self.view(GossipKind::Ack2);
                self.send(from, reply);
            }
            GossipKind::Ack2 => self.apply(now, &message.versions),
            GossipKind::Echo => self.send(
                from,
                GossipMessage {
                    kind: GossipKind::EchoReply,
                    versions: Box::new([]),
                },
            ),
            GossipKind::EchoReply => {
                let node = from as usize;
                if self.echoing[node].is_some() {
                    self.echoing[node] = None;
                    if !self.alive[node] {
                        self.alive[node] = true;
                        self.outputs.push_back(GossipOutput::Liveness {
                            node: from,
                            alive: true,
                            phi: 0.0,
                        });
                    }
                }
            }
        }
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Applies the newer versions of `versions`: each is a heartbeat
    /// arrival for the failure detector, and a node marked down is sent an
    /// echo.
    fn apply(&mut self, now: SimTime, versions: &[u64]) {
        assert_eq!(versions.len(), self.versions.len(), "one cluster");
        for (node, &version) in versions.iter().enumerate() {
            if node == self.me as usize || version <= self.versions[node] {
                continue;
            }
            if !self.known[node] {
                // A node joining the cluster: news of it, down until its
                // echo is answered.
                self.known[node] = true;
                self.windows[node] = ArrivalWindow::new(now);
            }
            self.versions[node] = version;
            self.windows[node].add(now);
            // One echo at a time, until it is answered or times out
            // (`_pending_mark_alive_endpoints`, cleared when the echo's
            // RPC ends either way).
            let pending = self.echoing[node].is_some_and(|sent| now - sent < ECHO_TIMEOUT);
            if !self.alive[node] && !pending {
                self.echoing[node] = Some(now);
                self.send(
                    node as u32,
                    GossipMessage {
                        kind: GossipKind::Echo,
                        versions: Box::new([]),
                    },
                );
            }
        }
    }
}

/// The nodes one view sees down (a shard's coordinator, a client driver),
/// with their count, so that the common case, nobody down, costs one
/// comparison.
#[derive(Clone, Debug, Default)]
pub struct DownSet {
    down: Vec<bool>,
    count: u32,
}

impl DownSet {
    /// Marks `node` up (`alive`) or down.
    pub fn set(&mut self, node: u32, alive: bool) {
        let index = node as usize;
        if index >= self.down.len() {
            self.down.resize(index + 1, false);
        }
        if self.down[index] == alive {
            self.down[index] = !alive;
            if alive {
                self.count -= 1;
            } else {
                self.count += 1;
            }
        }
        debug_assert_eq!(self.contains(node), !alive);
        debug_assert!(self.count as usize <= self.down.len());
    }

    /// The count is the number of nodes marked down. O(nodes).
    pub fn check_invariants(&self) {
        assert_eq!(
            self.down.iter().filter(|down| **down).count(),
            self.count as usize,
            "the count is of the nodes marked down"
        );
    }

    /// Whether `node` is seen down.
    #[inline]
    pub fn contains(&self, node: u32) -> bool {
        self.down.get(node as usize).copied().unwrap_or(false)
    }

    /// How many nodes are seen down.
    #[inline]
    pub fn len(&self) -> u32 {
        debug_assert!(
            self.count as usize <= self.down.len(),
            "no more down than known"
        );
        self.count
    }

    /// Whether every node is seen up.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// A uniform draw in [0, 1) (53 bits).
fn unit(rng: &mut Pcg64Mcg) -> f64 {
    let draw = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    debug_assert!((0.0..1.0).contains(&draw));
    draw
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nodes` gossipers exchanging messages instantly, except to or from
    /// the nodes `cut` says are cut at a time; runs to `until`, returns
    /// each liveness change as (time, observer, node, alive).
    fn run(
        nodes: u32,
        until: SimTime,
        cut: impl Fn(SimTime, u32) -> bool,
    ) -> Vec<(SimTime, u32, u32, bool)> {
        run_links(nodes, until, |now, from, to| cut(now, from) || cut(now, to))
    }

    /// [`run`] with `lost(now, from, to)` saying which messages are lost.
    fn run_links(
        nodes: u32,
        until: SimTime,
        lost: impl Fn(SimTime, u32, u32) -> bool,
    ) -> Vec<(SimTime, u32, u32, bool)> {
        let mut gossipers: Vec<Gossiper> = (0..nodes)
            .map(|node| Gossiper::new(node, nodes, SimTime::ZERO, 7 + u64::from(node), 8.0))
            .collect();
        let mut changes = Vec::new();
        loop {
            let (node, now) = gossipers
                .iter()
                .enumerate()
                .map(|(node, gossiper)| (node, gossiper.next_round()))
                .min_by_key(|&(_, at)| at)
                .unwrap();
            if now > until {
                return changes;
            }
            gossipers[node].handle_timeout(now);
            // Deliver until quiet (message delays are negligible next to
            // the second between rounds).
            let mut pending = vec![node as u32];
            while let Some(from) = pending.pop() {
                while let Some(output) = gossipers[from as usize].poll_output() {
                    match output {
                        GossipOutput::Send { to, message } => {
                            if !lost(now, from, to) {
                                gossipers[to as usize].handle_message(now, from, message);
                                pending.push(to);
                            }
                        }
                        GossipOutput::Liveness { node, alive, .. } => {
                            changes.push((now, from, node, alive));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_healthy_cluster_convicts_nobody() {
        assert_eq!(
            run(5, SimTime::from_nanos(600 * 1_000_000_000), |_, _| false),
            []
        );
    }

    #[test]
    fn a_silent_node_is_convicted_after_twenty_odd_seconds_and_seen_up_after_it_returns() {
        let secs = |s: u64| SimTime::from_nanos(s * 1_000_000_000);
        // Node 2 is cut from 60 s to 120 s.
        let changes = run(4, secs(200), |now, node| {
            node == 2 && now >= secs(60) && now < secs(120)
        });
        // Every other node convicts it once, and node 2 convicts each of
        // them: log10(e) x phi > 8 is 18.4 mean intervals of silence, and
        // a node hears a peer's heartbeat every 1-2 s here (intervals below
        // 1 s are left out of the window), so 18-30 s after the cut.
        let downs: Vec<_> = changes.iter().filter(|change| !change.3).collect();
        assert_eq!(downs.len(), 6, "{changes:?}");
        for &&(at, observer, node, _) in &downs {
            assert!(observer == 2 || node == 2);
            let after = (at - secs(60)).as_secs_f64();
            assert!(
                (17.0..30.0).contains(&after),
                "convicted {after} s after the cut"
            );
        }
        // Back up within a few rounds of the cut's end, by every node.
        let ups: Vec<_> = changes.iter().filter(|change| change.3).collect();
        assert_eq!(ups.len(), 6, "{changes:?}");
        for &&(at, _, _, _) in &ups {
            let after = (at - secs(120)).as_secs_f64();
            assert!(
                (0.0..5.0).contains(&after),
                "seen up {after} s after the heal"
            );
        }
    }

    #[test]
    fn an_echo_lost_is_sent_again_after_its_timeout() {
        let secs = |s: u64| SimTime::from_nanos(s * 1_000_000_000);
        // Node 2 is cut from 60 s to 120 s; then, until 130 s, what node 0
        // sends it is still lost (its echoes among them).
        let changes = run_links(3, secs(200), |now, from, to| {
            let cut = now >= secs(60) && now < secs(120) && (from == 2 || to == 2);
            cut || (now >= secs(120) && now < secs(130) && from == 0 && to == 2)
        });
        let up = changes
            .iter()
            .find(|&&(_, observer, node, alive)| observer == 0 && node == 2 && alive)
            .expect("node 0 sees node 2 up in the end");
        let after = (up.0 - secs(130)).as_secs_f64();
        assert!(
            (0.0..5.0).contains(&after),
            "seen up {after} s after its echoes get through"
        );
    }

    #[test]
    fn a_lower_threshold_convicts_sooner() {
        let secs = |s: u64| SimTime::from_nanos(s * 1_000_000_000);
        let first_conviction = |threshold: f64| {
            let mut gossipers: Vec<Gossiper> = (0..3)
                .map(|node| Gossiper::new(node, 3, SimTime::ZERO, 3 + u64::from(node), threshold))
                .collect();
            // Node 0 hears nothing after the start.
            let mut now = SimTime::ZERO;
            loop {
                now += SimDuration::from_millis(100);
                gossipers[0].handle_timeout(now);
                while let Some(output) = gossipers[0].poll_output() {
                    if let GossipOutput::Liveness { alive: false, .. } = output {
                        return now;
                    }
                }
                assert!(now < secs(100));
            }
        };
        let (low, high) = (first_conviction(4.0), first_conviction(8.0));
        assert!(low < high, "{low} vs {high}");
        // ~9.2 s and ~18.4 s of silence at a window of 1 s.
        assert!((8.5..10.5).contains(&low.as_secs_f64()), "{low}");
        assert!((17.5..19.5).contains(&high.as_secs_f64()), "{high}");
    }

    #[test]
    fn a_down_set_counts_each_node_once() {
        let mut down = DownSet::default();
        assert!(down.is_empty() && !down.contains(7));
        down.set(7, false);
        down.set(7, false);
        down.set(2, false);
        assert_eq!(down.len(), 2);
        assert!(down.contains(7) && down.contains(2) && !down.contains(3));
        down.set(7, true);
        down.set(7, true);
        down.set(5, true);
        assert_eq!(down.len(), 1);
        assert!(!down.contains(7));
    }
}
