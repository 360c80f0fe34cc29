//! A node: its shards, and what the node does as a whole.
//!
//! Scylla runs one shard per core, each a state machine of its own; what
//! belongs to the node rather than to a shard runs on shard 0 and is handed
//! to every shard (`smp::invoke_on_all`). Here that is the published cache
//! hit rate (`cache_hitrate_calculator`, [`crate::cache::heat`]) and gossip with
//! its failure detector ([`crate::gossip`]): the peers the node sees down
//! or up go to every shard's coordinator. Hints and streaming will join
//! them. (Gossip's CPU, tens of microseconds a second on shard 0, is left
//! out.)
//!
//! API in four kinds, as [`Shard`]'s, with the shard named where an input
//! or output is a shard's:
//! - getters: [`Node::id`], [`Node::shards`];
//! - inputs: [`Node::handle_client_request`], [`Node::handle_message`],
//!   [`Node::handle_cpu_done`], [`Node::handle_io_done`],
//!   [`Node::handle_timeout`] (a shard's timers), and the node's own:
//!   [`Node::handle_node_timeout`], [`Node::handle_gossip`];
//! - outputs: [`Node::poll_action`] (a shard's actions; drain that shard's
//!   until `None` after every input to it), [`Node::poll_timeout`] (a
//!   shard's next timer), and the node's own: [`Node::poll_node_output`]
//!   (gossip to send, peers seen down or up; drain after every node input)
//!   and [`Node::poll_node_timeout`];
//! - commands: [`Node::preload_table`], [`Node::warm_caches`].
//!
//! A node can crash and restart ([`Node::crash`], [`Node::restart`]): its
//! shards keep what is on disk (`shard/restart.rs`); restarted, each
//! replays its commitlog, and once all have ([`Node::shard_replayed`]) the
//! node joins gossip under a new generation, seeing every peer down until
//! their heartbeats come (as Scylla's saved endpoints start), and it takes
//! clients once gossip has settled ([`GOSSIP_SETTLE`]). The driver hears
//! both steps as [`NodeOutput::Joined`] and [`NodeOutput::Serving`].
//!
//! A shard's inputs go to it alone: the shards of a node share nothing but
//! what the node hands them, as Scylla's do, so the driver runs each shard
//! on its own core and delivers its events in its own order.

use units::SimTime;

use crate::action::{Action, BatchRequest, ClientRequest, IoId, Message, TaskId};
use crate::cache::heat::{self, HitRateTracker};
use crate::config::ShardConfig;
use crate::gossip::{GossipMessage, GossipOutput, Gossiper};
use crate::placement::ShardAddress;
use crate::shard::{PreloadState, Shard};
use units::SimDuration;

/// `gossiper::wait_for_gossip_to_settle` @3.0: a first wait of 5 s, then
/// polls a second apart until three in a row find the endpoint count
/// unchanged, which a restarted node that knows its peers sees at once:
/// 8 s from joining gossip to taking clients.
pub const GOSSIP_SETTLE: SimDuration = SimDuration::from_secs(8);

// The first wait of 5 s and three polls a second apart.
const _: () = assert!(GOSSIP_SETTLE.as_nanos() == SimDuration::from_secs(5 + 3).as_nanos());

/// Where a node stands in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeLife {
    /// Serving clients and peers.
    Running,
    /// Crashed: off the network, nothing runs.
    Down,
    /// Restarted, its shards replaying their commitlogs; still off the
    /// network.
    Replaying,
    /// Back in gossip, waiting for it to settle before taking clients.
    Settling,
}

/// A node of the cluster and its shards.
pub struct Node {
    id: u32,
    shards: Vec<Shard>,
    /// The node's cache hit rate over all its shards' lookups, when
    /// heat-weighted balancing publishes one.
    hit_rate: Option<HitRateTracker>,
    /// When the node next recomputes what it publishes.
    next_recompute: Option<SimTime>,
    /// Gossip and the failure detector, in a cluster of several nodes.
    gossiper: Option<Gossiper>,
    outputs: std::collections::VecDeque<NodeOutput>,
    /// How it gossips, to gossip again after a restart.
    gossip: Option<GossipSetup>,
    /// Its gossip generation: one more at each restart.
    generation: u32,
    life: NodeLife,
    /// Shards replaying after a restart.
    replaying: u32,
    /// When a settling node takes clients.
    serve_at: Option<SimTime>,
}

/// How a node gossips.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GossipSetup {
    /// Nodes in the cluster.
    pub nodes: u32,
    /// Seed of the node's gossip stream (its round phase, its peer picks).
    pub seed: u64,
    /// `phi_convict_threshold`.
    pub phi_convict_threshold: f64,
    /// Nodes with an id below this are members from the start; the others
    /// join later, and gossip learns of each from its first heartbeat.
    pub members: u32,
}

/// What the node asks its driver to do, or tells it, beyond its shards'
/// actions.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeOutput {
    /// Send a gossip message to node `to` (from shard 0).
    Gossip {
        /// The destination node.
        to: u32,
        /// The message.
        message: GossipMessage,
    },
    /// The node now sees `peer` up (`alive`) or down: its shards'
    /// coordinators act on it from now on.
    Liveness {
        /// The peer.
        peer: u32,
        /// Up or down.
        alive: bool,
        /// Its phi when convicted (0 when seen up).
        phi: f64,
    },
    /// A restarted node's shards have replayed their commitlogs: it is
    /// back on the network and in gossip.
    Joined,
    /// A restarted node takes clients again (its CQL server is up).
    Serving,
}

impl Node {
    /// Node `id` with a shard for each of `shards` (shard `i`'s address
    /// must be `(id, i)`), whose timers start at `now`, gossiping as
    /// `gossip` says (`None`: alone, or a test without gossip).
    pub fn new(
        id: u32,
        shards: Vec<ShardConfig>,
        now: SimTime,
        gossip: Option<GossipSetup>,
    ) -> Node {
        assert!(!shards.is_empty(), "a node has at least one shard");
        for (index, config) in shards.iter().enumerate() {
            assert_eq!(
                config.address,
                ShardAddress {
                    node: id,
                    shard: index as u32
                },
                "shard {index} of node {id} is misaddressed"
            );
        }
        let balancing = shards[0].heat_weighted_balancing;
        assert!(
            shards
                .iter()
                .all(|config| config.heat_weighted_balancing == balancing),
            "a node's shards balance reads alike"
        );
        if let Some(setup) = &gossip {
            assert!(
                id < setup.nodes,
                "node {id} is one of the {} gossiping",
                setup.nodes
            );
            assert!(setup.members <= setup.nodes);
        }
        let node = Node {
            id,
            shards: shards
                .into_iter()
                .map(|config| Shard::new(config, now))
                .collect(),
            hit_rate: balancing.then(HitRateTracker::default),
            next_recompute: balancing.then(|| now + heat::RECOMPUTE_EVERY),
            gossiper: gossip.map(|setup| {
                Gossiper::new(
                    id,
                    setup.nodes,
                    now,
                    setup.seed,
                    setup.phi_convict_threshold,
                )
                .without(|node| node >= setup.members)
            }),
            outputs: std::collections::VecDeque::new(),
            gossip,
            generation: 0,
            life: NodeLife::Running,
            replaying: 0,
            serve_at: None,
        };
        node.check_invariants();
        node
    }

    /// What must hold between the node's parts, by its life: a running or
    /// settling node replays nothing; a replaying node waits for some of
    /// its shards and no more than it has; a down node has no gossip, no
    /// timers and nothing to say; a settling node knows when it serves and
    /// only it does. Gossip runs only as set up; the node recomputes its hit
    /// rate only if it tracks one; each shard sits at its own address.
    /// O(shards).
    pub fn check_invariants(&self) {
        assert!(!self.shards.is_empty(), "a node has at least one shard");
        match self.life {
            NodeLife::Running | NodeLife::Settling => {
                assert_eq!(self.replaying, 0, "no shard replays on a node in gossip");
            }
            NodeLife::Replaying => assert!(
                0 < self.replaying && self.replaying as usize <= self.shards.len(),
                "{} of {} shards replaying",
                self.replaying,
                self.shards.len()
            ),
            NodeLife::Down => {
                assert!(self.gossiper.is_none(), "a down node does not gossip");
                assert!(self.next_recompute.is_none() && self.outputs.is_empty());
            }
        }
        assert_eq!(
            self.serve_at.is_some(),
            self.life == NodeLife::Settling,
            "only a settling node waits to serve"
        );
        assert!(
            self.gossiper.is_none() || self.gossip.is_some(),
            "gossip as set up"
        );
        assert!(
            self.next_recompute.is_none() || self.hit_rate.is_some(),
            "a node that recomputes tracks its rate"
        );
        for (index, shard) in self.shards.iter().enumerate() {
            let address = shard.config().address;
            assert!(
                address.node == self.id && address.shard as usize == index,
                "shard {index} of node {} is misaddressed",
                self.id
            );
        }
    }

    /// Ends a node-level input: checks the invariants in debug builds.
    fn input_done(&self) {
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Where the node stands in its life.
    pub fn life(&self) -> NodeLife {
        self.life
    }

    // ----- crash and restart -----

    /// The node crashes at `now` (power lost, or its process killed): its
    /// shards keep what is on their disks, gossip stops, and nothing of it
    /// runs until [`Node::restart`]. The driver takes it off the network
    /// and hands it nothing meanwhile. Returns what its shards had
    /// acknowledged and lost.
    pub fn crash(&mut self, now: SimTime) -> Vec<crate::shard::CrashLoss> {
        assert_ne!(
            self.life,
            NodeLife::Down,
            "a down node does not crash again"
        );
        let losses = self
            .shards
            .iter_mut()
            .map(|shard| shard.crash(now))
            .collect();
        self.gossiper = None;
        self.next_recompute = None;
        self.serve_at = None;
        self.outputs.clear();
        self.life = NodeLife::Down;
        self.input_done();
        losses
    }

    /// The crashed node starts at `now`: every shard replays its
    /// commitlog ([`Shard::restart`]); drain their actions.
    pub fn restart(&mut self, now: SimTime) {
        assert_eq!(self.life, NodeLife::Down, "only a crashed node restarts");
        self.life = NodeLife::Replaying;
        self.replaying = self.shards.len() as u32;
        for shard in &mut self.shards {
            shard.restart(now);
        }
        self.input_done();
    }

    /// `shard` has replayed ([`crate::action::Action::Replayed`]); once
    /// every shard has, the node joins gossip under its next generation,
    /// seeing every peer down until it hears from it, and outputs
    /// [`NodeOutput::Joined`].
    pub fn shard_replayed(&mut self, now: SimTime, shard: u32) {
        assert_eq!(
            self.life,
            NodeLife::Replaying,
            "shard {shard} replayed twice"
        );
        assert!(
            (shard as usize) < self.shards.len() && self.replaying > 0,
            "shard {shard} of a node with {} shards, {} replaying",
            self.shards.len(),
            self.replaying
        );
        self.replaying -= 1;
        if self.replaying > 0 {
            self.input_done();
            return;
        }
        self.generation += 1;
        self.life = NodeLife::Settling;
        self.serve_at = Some(now + GOSSIP_SETTLE);
        if let Some(setup) = self.gossip {
            let nodes = setup.nodes;
            self.gossiper = Some(
                Gossiper::restarted(
                    self.id,
                    nodes,
                    now,
                    setup.seed ^ u64::from(self.generation).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    setup.phi_convict_threshold,
                    self.generation,
                )
                .without(|node| node >= setup.members && node != self.id),
            );
            for peer in (0..nodes).filter(|&peer| peer != self.id) {
                for shard in &mut self.shards {
                    shard.set_peer_alive(now, peer, false);
                }
            }
        }
        if self.hit_rate.is_some() {
            self.hit_rate = Some(HitRateTracker::default());
            self.next_recompute = Some(now + heat::RECOMPUTE_EVERY);
        }
        self.outputs.push_back(NodeOutput::Joined);
        self.input_done();
    }

    // ----- getters -----

    /// The node's index in the cluster.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Its shards, by index.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    // ----- a shard's inputs and outputs -----

    /// A client request reaches `shard` ([`Shard::handle_client_request`]).
    #[inline]
    pub fn handle_client_request(&mut self, now: SimTime, shard: u32, request: ClientRequest) {
        self.shards[shard as usize].handle_client_request(now, request);
    }

    /// A client's batch reaches `shard` ([`Shard::handle_batch_request`]).
    #[inline]
    pub fn handle_batch_request(&mut self, now: SimTime, shard: u32, batch: BatchRequest) {
        self.shards[shard as usize].handle_batch_request(now, batch);
    }

    /// A message from `from` reaches `shard` ([`Shard::handle_message`]).
    #[inline]
    pub fn handle_message(
        &mut self,
        now: SimTime,
        shard: u32,
        from: ShardAddress,
        message: Message,
    ) {
        self.shards[shard as usize].handle_message(now, from, message);
    }

    /// A CPU task of `shard` finished ([`Shard::handle_cpu_done`]).
    #[inline]
    pub fn handle_cpu_done(&mut self, now: SimTime, shard: u32, task: TaskId) {
        self.shards[shard as usize].handle_cpu_done(now, task);
    }

    /// An I/O of `shard` completed ([`Shard::handle_io_done`]).
    #[inline]
    pub fn handle_io_done(&mut self, now: SimTime, shard: u32, io: IoId) {
        self.shards[shard as usize].handle_io_done(now, io);
    }

    /// `shard`'s timers are due ([`Shard::handle_timeout`]).
    #[inline]
    pub fn handle_timeout(&mut self, now: SimTime, shard: u32) {
        self.shards[shard as usize].handle_timeout(now);
    }

    /// `shard`'s next action ([`Shard::poll_action`]).
    #[inline]
    pub fn poll_action(&mut self, shard: u32) -> Option<Action> {
        self.shards[shard as usize].poll_action()
    }

    /// When `shard` next wants [`Node::handle_timeout`].
    #[inline]
    pub fn poll_timeout(&self, shard: u32) -> Option<SimTime> {
        self.shards[shard as usize].poll_timeout()
    }

    /// The time writes have waited on `shard` ([`Shard::write_throttled_time`]).
    pub fn write_throttled_time(&self, now: SimTime, shard: u32) -> units::SimDuration {
        self.shards[shard as usize].write_throttled_time(now)
    }

    // ----- the node's own timers -----

    /// When the node next wants [`Node::handle_node_timeout`].
    pub fn poll_node_timeout(&self) -> Option<SimTime> {
        let next = crate::timer::earlier(
            crate::timer::earlier(
                self.next_recompute,
                self.gossiper.as_ref().map(Gossiper::next_round),
            ),
            self.serve_at,
        );
        debug_assert!(
            next.is_none() || self.life != NodeLife::Down,
            "a down node wants no timeout"
        );
        next
    }

    /// The node's next output.
    pub fn poll_node_output(&mut self) -> Option<NodeOutput> {
        self.outputs.pop_front()
    }

    /// A gossip message from node `from` arrived.
    pub fn handle_gossip(&mut self, now: SimTime, from: u32, message: GossipMessage) {
        debug_assert_ne!(from, self.id, "a node does not gossip with itself");
        if let Some(gossiper) = self.gossiper.as_mut() {
            gossiper.handle_message(now, from, message);
            self.take_gossip_outputs(now);
        }
        self.input_done();
    }

    /// Moves the gossiper's outputs to the node's, handing every liveness
    /// change to the shards (as the gossiper on shard 0 copies its live
    /// and unreachable sets to the others).
    fn take_gossip_outputs(&mut self, now: SimTime) {
        let Some(gossiper) = self.gossiper.as_mut() else {
            return;
        };
        while let Some(output) = gossiper.poll_output() {
            self.outputs.push_back(match output {
                GossipOutput::Send { to, message } => {
                    debug_assert_ne!(to, self.id, "gossip goes to a peer");
                    NodeOutput::Gossip { to, message }
                }
                GossipOutput::Liveness { node, alive, phi } => {
                    debug_assert_ne!(node, self.id, "a node judges its peers, not itself");
                    for shard in &mut self.shards {
                        shard.set_peer_alive(now, node, alive);
                    }
                    NodeOutput::Liveness {
                        peer: node,
                        alive,
                        phi,
                    }
                }
            });
        }
    }

    /// The node's timers are due: a gossip round (with the failure
    /// detector's status check), and it recomputes its published cache hit
    /// rate from its shards' lookups since the last time and hands it to
    /// every shard, which carries it on its read responses and balances its
    /// own coordinated reads with it (sampled runs: the simulated shards
    /// stand for the node).
    pub fn handle_node_timeout(&mut self, now: SimTime) {
        if self.serve_at.is_some_and(|at| at <= now) {
            self.serve_at = None;
            self.life = NodeLife::Running;
            self.outputs.push_back(NodeOutput::Serving);
        }
        if let Some(gossiper) = self.gossiper.as_mut() {
            gossiper.handle_timeout(now);
            self.take_gossip_outputs(now);
        }
        let Some(due) = self.next_recompute else {
            self.input_done();
            return;
        };
        if due > now {
            self.input_done();
            return;
        }
        let tracker = self
            .hit_rate
            .as_mut()
            .expect("a node that recomputes tracks its rate");
        for shard in &mut self.shards {
            let (hits, lookups) = shard.take_cache_lookups();
            tracker.record_lookups(hits, lookups);
        }
        if let Some(rate) = tracker.rate(now) {
            debug_assert!((0.0..=1.0).contains(&rate), "a hit rate, not {rate}");
            for shard in &mut self.shards {
                shard.set_node_hit_rate(rate);
            }
        }
        self.next_recompute = Some(now + heat::RECOMPUTE_EVERY);
        self.input_done();
    }

    // ----- topology -----

    /// The cluster's token metadata moved to `placement`'s epoch: every
    /// shard uses it from now on ([`Shard::set_placement`]).
    pub fn set_placement(&mut self, placement: &crate::placement::Placement) {
        assert!(
            self.id < placement.nodes(),
            "the placement knows node {}",
            self.id
        );
        for shard in &mut self.shards {
            shard.set_placement(placement.clone());
        }
    }

    /// `shard` starts sending its data of `ranges` to the same shard of
    /// node `to`, as stream plan `plan` ([`Shard::start_stream_out`]);
    /// drain its actions.
    pub fn start_stream_out(
        &mut self,
        now: SimTime,
        shard: u32,
        plan: u32,
        to: u32,
        ranges: std::sync::Arc<[(i64, i64)]>,
    ) {
        assert_ne!(to, self.id, "a node streams to another");
        self.shards[shard as usize].start_stream_out(now, plan, to, ranges);
    }

    /// `shard` gives stream plan `plan` up ([`Shard::abort_stream`]).
    pub fn abort_stream(&mut self, shard: u32, plan: u32) {
        self.shards[shard as usize].abort_stream(plan);
    }

    /// `peer` has left the ring: gossip forgets it.
    pub fn forget_peer(&mut self, peer: u32) {
        assert_ne!(peer, self.id, "a node does not forget itself");
        if let Some(gossiper) = self.gossiper.as_mut() {
            gossiper.forget(peer);
        }
        self.input_done();
    }

    // ----- commands -----

    /// Puts `shard`'s share of the table on disk before the run
    /// ([`Shard::preload_table`]).
    pub fn preload_table(
        &mut self,
        shard: u32,
        rows: u64,
        row_bytes: u64,
        keys: (u64, u64),
        state: PreloadState,
    ) {
        assert!(keys.0 <= keys.1, "a preload's key range is ordered");
        self.shards[shard as usize].preload_table(rows, row_bytes, keys, state);
    }

    /// Warms `shard`'s caches as a long run would have
    /// ([`Shard::warm_caches`]); `false` if it has none to warm.
    pub fn warm_caches(&mut self, shard: u32) -> bool {
        self.shards[shard as usize].warm_caches()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Operation, RequestId};
    use crate::cache::row_cache::RowCacheConfig;
    use crate::config::RowCacheSetup;
    use crate::consistency::ConsistencyLevel;
    use crate::placement::Placement;
    use crate::testing::{self, Outcome};

    fn node(balancing: bool) -> Node {
        let placement = Placement::single_node(2);
        let configs = (0..2)
            .map(|shard| ShardConfig {
                address: ShardAddress { node: 0, shard },
                placement: placement.clone(),
                replication_factor: 1,
                data_mode: true,
                row_cache: Some(RowCacheSetup {
                    config: RowCacheConfig::scylla(0),
                    takes_free_memory: true,
                    popularity: None,
                    key_rows: 1.0,
                    mean_row_bytes: 100,
                }),
                heat_weighted_balancing: balancing,
                ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
            })
            .collect();
        Node::new(0, configs, SimTime::ZERO, None)
    }

    /// Sends `operation` to the shard that owns its key and runs the node
    /// until it is answered.
    fn request(node: &mut Node, now: SimTime, id: u64, operation: Operation) {
        let key = match operation {
            Operation::Write { key, .. } | Operation::Read { key, .. } => key,
        };
        let owner = node.shards[0].config().placement.owner(key).shard;
        let request = ClientRequest {
            id: RequestId(id),
            operation,
            consistency: ConsistencyLevel::One,
        };
        node.handle_client_request(now, owner, request);
        let mut outcome = Outcome::default();
        testing::run_cluster(&mut node.shards, now, &mut outcome, |_, _| {
            testing::Verdict::Carry
        });
        assert_eq!(outcome.replies.len(), 1, "answered");
    }

    #[test]
    fn a_node_without_balancing_has_no_timer_of_its_own() {
        let node = node(false);
        assert_eq!(node.poll_node_timeout(), None);
        assert_eq!(node.shards().len(), 2);
    }

    #[test]
    fn the_node_publishes_one_hit_rate_over_all_its_shards_lookups() {
        let mut node = node(true);
        let now = SimTime::from_nanos(1);
        let first = SimTime::ZERO + heat::RECOMPUTE_EVERY;
        assert_eq!(node.poll_node_timeout(), Some(first));
        let placement = node.shards[0].config().placement.clone();
        let keys_of = |shard: u32| -> Vec<u64> {
            (0..)
                .filter(|&key| placement.owner(key).shard == shard)
                .take(10)
                .collect()
        };
        let (on_0, on_1) = (keys_of(0), keys_of(1));
        let mut id = 0;
        for &key in on_0.iter().chain(&on_1) {
            id += 1;
            let write = Operation::Write {
                rows: 1,
                key,
                value_bytes: 100,
                timestamp: id,
            };
            request(&mut node, now, id, write);
        }
        // Shard 0 reads its rows twice (a miss fills the cache, then a
        // hit), shard 1 once (misses): 10 hits in 30 lookups.
        for &key in on_0.iter().chain(&on_0).chain(&on_1) {
            id += 1;
            request(&mut node, now, id, Operation::read(key));
        }
        // Early: nothing is published.
        node.handle_node_timeout(now);
        assert_eq!(node.shards[0].node_hit_rate(), None);
        node.handle_node_timeout(first);
        assert_eq!(
            node.poll_node_timeout(),
            Some(first + heat::RECOMPUTE_EVERY)
        );
        for shard in node.shards() {
            assert_eq!(
                shard.node_hit_rate(),
                Some(10.0 / 30.0),
                "every shard carries the node's rate, not its own"
            );
        }
    }

    #[test]
    #[should_panic(expected = "shard 1 of node 3 is misaddressed")]
    fn shards_must_be_addressed_to_their_node() {
        let configs = (0..2)
            .map(|_| ShardConfig {
                address: ShardAddress { node: 3, shard: 0 },
                ..ShardConfig::scylla_defaults(64 * 1024 * 1024)
            })
            .collect();
        Node::new(3, configs, SimTime::ZERO, None);
    }
}
