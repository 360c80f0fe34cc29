//! Versioned token metadata: the ring the cluster's nodes agree on, the
//! nodes joining and leaving it, and the *pending ranges* whose writes must
//! also reach the nodes that are about to own them (Scylla 3.0
//! `locator/token_metadata.cc`, `service/storage_service.cc`'s
//! `calculate_pending_ranges`, which follow Cassandra's `TokenMetadata` and
//! `PendingRangeCalculatorService`).
//!
//! What it models:
//! - *Normal tokens*: the ring reads and writes use ([`TokenMetadata::ring`]).
//! - *Bootstrap tokens*: a joining node has chosen its tokens and announced
//!   them; until it finishes streaming it serves no reads, but writes to
//!   the ranges it will own go to it too, so that nothing written while it
//!   streams is missing when it takes over.
//! - *Leaving nodes*: a decommissioning node still serves its ranges; the
//!   nodes that will own them after it leaves receive their writes too.
//! - *Pending ranges* ([`TokenMetadata::pending`]): for every token, the
//!   replicas of the ring with every join and leave applied that are not
//!   replicas of the current ring. A coordinator sends a write to its
//!   natural replicas and to these, and waits for as many more
//!   acknowledgements as there are pending replicas (`block_for` plus the
//!   pending count), as Scylla's `abstract_write_response_handler` does.
//! - *Epoch*: every change bumps it; shards compare epochs to know their
//!   view is stale.
//!
//! Node ids are stable: a node that leaves keeps its id, and a joining node
//! takes an id of its own.
//!
//! Left out: moving and replacing nodes (a replace is a join that takes a
//! dead node's tokens), and the per-keyspace caching of pending ranges.

use std::collections::{BTreeMap, BTreeSet};

use crate::planted::{Planted, PlantedBug};
use crate::ring::{span_fraction, NodeSpec, Replication, Ring, RingError};

/// The token metadata at one epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenMetadata {
    epoch: u64,
    /// Every node known, by id.
    nodes: BTreeMap<u32, NodeSpec>,
    /// Normal tokens: token to owner.
    normal: BTreeMap<i64, u32>,
    /// Joining nodes' bootstrap tokens.
    joining: BTreeMap<u32, Vec<i64>>,
    /// Nodes being decommissioned.
    leaving: BTreeSet<u32>,
    /// Planted bugs (tests of the explorer only: [`crate::planted`]).
    planted: Planted,
}

/// Why a topology change was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologyError {
    /// The node id is already a member of the ring or joining.
    AlreadyMember(u32),
    /// The node is not a normal member (to leave) or not joining (to
    /// finish joining).
    NotMember(u32),
    /// A token is already owned or claimed.
    TokenTaken(i64),
    /// A join with no token.
    NoTokens(u32),
    /// The last node cannot leave.
    LastNode,
}

impl std::fmt::Display for TopologyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TopologyError::AlreadyMember(node) => write!(f, "node {node} is already in the ring"),
            TopologyError::NotMember(node) => write!(f, "node {node} is not in that state"),
            TopologyError::TokenTaken(token) => write!(f, "token {token} is already taken"),
            TopologyError::NoTokens(node) => write!(f, "node {node} joins with no token"),
            TopologyError::LastNode => write!(f, "the last node cannot leave the ring"),
        }
    }
}

impl std::error::Error for TopologyError {}

/// Per token range, the replicas that will own it and do not yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingRanges {
    /// Range ends (inclusive, sorted) with their pending replicas; the
    /// first range wraps from the last end. Empty: nothing pending.
    ends: Vec<(i64, Vec<u32>)>,
}

impl PendingRanges {
    /// Whether no write has a pending replica (the common case: one
    /// comparison).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The pending replicas of `token`.
    pub fn replicas(&self, token: i64) -> &[u32] {
        if self.ends.is_empty() {
            return &[];
        }
        let index = self.ends.partition_point(|(end, _)| *end < token);
        let index = if index == self.ends.len() { 0 } else { index };
        debug_assert!(
            self.ends[index].0 >= token || index == 0,
            "the range found ends at or after the token"
        );
        &self.ends[index].1
    }

    /// Range ends strictly ascending; no node twice in a range's pending
    /// replicas. O(ranges x pending).
    pub fn check_invariants(&self) {
        assert!(
            self.ends.windows(2).all(|pair| pair[0].0 < pair[1].0),
            "pending range ends ascend"
        );
        for (_, nodes) in &self.ends {
            for (i, node) in nodes.iter().enumerate() {
                assert!(
                    !nodes[..i].contains(node),
                    "node {node} pending twice on a range"
                );
            }
        }
    }

    /// Every range with pending replicas, as `(start, end, nodes)` with the
    /// range `(start, end]` (the first wraps from the last end).
    pub fn ranges(&self) -> impl Iterator<Item = (i64, i64, &[u32])> + '_ {
        self.ends
            .iter()
            .enumerate()
            .filter_map(move |(index, (end, nodes))| {
                if nodes.is_empty() {
                    return None;
                }
                let previous = if index == 0 { self.ends.len() } else { index };
                Some((self.ends[previous - 1].0, *end, nodes.as_slice()))
            })
    }

    /// The fraction of the token space where `node` is pending.
    pub fn fraction_pending_on(&self, node: u32) -> f64 {
        let mut total = 0.0;
        for (index, (end, nodes)) in self.ends.iter().enumerate() {
            if nodes.contains(&node) {
                let previous = if index == 0 { self.ends.len() } else { index };
                total += span_fraction(self.ends[previous - 1].0, *end);
            }
        }
        debug_assert!(
            (0.0..=1.0 + 1e-9).contains(&total),
            "a node is pending on at most the whole ring: {total}"
        );
        total
    }
}

impl TokenMetadata {
    /// The metadata of `ring` at epoch 0, nobody joining or leaving.
    pub fn new(ring: &Ring) -> TokenMetadata {
        let mut normal = BTreeMap::new();
        for index in 0..ring.range_count() {
            normal.insert(ring.range_bounds(index).1, ring.range_owner(index));
        }
        let metadata = TokenMetadata {
            epoch: 0,
            nodes: ring.nodes().iter().map(|node| (node.id, *node)).collect(),
            normal,
            joining: BTreeMap::new(),
            leaving: BTreeSet::new(),
            planted: Planted::NONE,
        };
        assert_eq!(
            metadata.normal.len(),
            ring.range_count(),
            "one owner per ring token"
        );
        metadata.check_invariants();
        metadata
    }

    /// What must hold between the parts: some normal token; every owner,
    /// joining node and leaving node is a known node; a joining node owns no
    /// normal token and claims sorted tokens of its own, none normal; a
    /// leaving node is a normal member, not joining; some normal member
    /// stays. O(tokens): run after each change, which is rare.
    pub fn check_invariants(&self) {
        assert!(!self.normal.is_empty(), "the ring keeps a normal token");
        let members: BTreeSet<u32> = self.normal.values().copied().collect();
        assert!(
            members.iter().all(|node| self.nodes.contains_key(node)),
            "every owner is a known node"
        );
        for (node, tokens) in &self.joining {
            assert!(self.nodes.contains_key(node) && !members.contains(node));
            assert!(!tokens.is_empty(), "node {node} joins with tokens");
            assert!(tokens.windows(2).all(|pair| pair[0] < pair[1]));
            assert!(
                tokens.iter().all(|token| !self.normal.contains_key(token)),
                "node {node} claims a normal token"
            );
        }
        for node in &self.leaving {
            assert!(members.contains(node), "leaving node {node} is a member");
            assert!(!self.joining.contains_key(node));
        }
        assert!(members.len() > self.leaving.len(), "someone stays");
    }

    /// The same metadata with `planted` bugs (none outside tests).
    pub fn planted(mut self, planted: Planted) -> TokenMetadata {
        self.planted = planted;
        self
    }

    /// The planted bugs (streaming's transfers read them).
    pub fn planted_bugs(&self) -> Planted {
        self.planted
    }

    /// The epoch: one more at every change.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Nodes joining, with their bootstrap tokens.
    pub fn joining(&self) -> impl Iterator<Item = (u32, &[i64])> {
        self.joining
            .iter()
            .map(|(node, tokens)| (*node, tokens.as_slice()))
    }

    /// Nodes leaving.
    pub fn leaving(&self) -> impl Iterator<Item = u32> + '_ {
        self.leaving.iter().copied()
    }

    /// Node `node` announces that it joins with `tokens` (bootstrap).
    pub fn add_joining(&mut self, node: NodeSpec, tokens: &[i64]) -> Result<(), TopologyError> {
        if tokens.is_empty() {
            return Err(TopologyError::NoTokens(node.id));
        }
        if self.normal.values().any(|&owner| owner == node.id)
            || self.joining.contains_key(&node.id)
        {
            return Err(TopologyError::AlreadyMember(node.id));
        }
        let claimed: BTreeSet<i64> = self.joining.values().flatten().copied().collect();
        let mut mine = BTreeSet::new();
        for &token in tokens {
            if self.normal.contains_key(&token) || claimed.contains(&token) || !mine.insert(token) {
                return Err(TopologyError::TokenTaken(token));
            }
        }
        self.nodes.insert(node.id, node);
        self.joining.insert(node.id, mine.into_iter().collect());
        self.epoch += 1;
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        Ok(())
    }

    /// The joining node has streamed its ranges: its tokens become normal.
    pub fn finish_joining(&mut self, node: u32) -> Result<(), TopologyError> {
        let tokens = self
            .joining
            .remove(&node)
            .ok_or(TopologyError::NotMember(node))?;
        for token in tokens {
            let previous = self.normal.insert(token, node);
            assert!(previous.is_none(), "a joining node's token was free");
        }
        self.epoch += 1;
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        Ok(())
    }

    /// The joining node gave up (its bootstrap failed and it stopped): its
    /// tokens are no longer claimed, and its pending ranges go.
    pub fn cancel_joining(&mut self, node: u32) -> Result<(), TopologyError> {
        self.joining
            .remove(&node)
            .ok_or(TopologyError::NotMember(node))?;
        debug_assert!(
            self.normal.values().all(|&owner| owner != node),
            "a node that gave up joining owns no token"
        );
        self.epoch += 1;
        Ok(())
    }

    /// The leaving node stays after all (its decommission failed): a
    /// normal member again.
    pub fn cancel_leaving(&mut self, node: u32) -> Result<(), TopologyError> {
        if !self.leaving.remove(&node) {
            return Err(TopologyError::NotMember(node));
        }
        debug_assert!(
            self.normal.values().any(|&owner| owner == node),
            "a node that stays after all still owns its tokens"
        );
        self.epoch += 1;
        Ok(())
    }

    /// Node `node` starts leaving (decommission).
    pub fn add_leaving(&mut self, node: u32) -> Result<(), TopologyError> {
        if !self.normal.values().any(|&owner| owner == node) || self.leaving.contains(&node) {
            return Err(TopologyError::NotMember(node));
        }
        let members: BTreeSet<u32> = self.normal.values().copied().collect();
        if members.len() - self.leaving.len() <= 1 {
            return Err(TopologyError::LastNode);
        }
        self.leaving.insert(node);
        self.epoch += 1;
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        Ok(())
    }

    /// The leaving node has streamed its ranges away: its tokens go.
    pub fn finish_leaving(&mut self, node: u32) -> Result<(), TopologyError> {
        if !self.leaving.remove(&node) {
            return Err(TopologyError::NotMember(node));
        }
        self.normal.retain(|_, owner| *owner != node);
        self.epoch += 1;
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        Ok(())
    }

    /// The ring of the normal tokens: what reads use and writes' natural
    /// replicas come from.
    pub fn ring(&self) -> Ring {
        let ring = self.build(
            self.normal
                .iter()
                .map(|(token, node)| (*token, *node))
                .collect(),
        );
        debug_assert_eq!(ring.range_count(), self.normal.len());
        ring
    }

    /// The ring once every join and leave under way has finished.
    pub fn future_ring(&self) -> Ring {
        let mut entries: Vec<(i64, u32)> = self
            .normal
            .iter()
            .filter(|(_, node)| !self.leaving.contains(node))
            .map(|(token, node)| (*token, *node))
            .collect();
        for (node, tokens) in &self.joining {
            entries.extend(tokens.iter().map(|token| (*token, *node)));
        }
        assert!(!entries.is_empty(), "the future ring keeps a token");
        self.build(entries)
    }

    /// A ring of `entries` over the nodes they name.
    fn build(&self, entries: Vec<(i64, u32)>) -> Ring {
        let owners: BTreeSet<u32> = entries.iter().map(|(_, node)| *node).collect();
        let nodes: Vec<NodeSpec> = owners.iter().map(|id| self.nodes[id]).collect();
        Ring::from_tokens(&nodes, &entries).unwrap_or_else(|error: RingError| {
            panic!("token metadata builds a valid ring: {error}")
        })
    }

    /// The pending ranges under `replication`: per token, the replicas of
    /// the future ring that are not replicas of the current one.
    pub fn pending(&self, replication: &Replication) -> PendingRanges {
        if self.joining.is_empty() && self.leaving.is_empty() {
            return PendingRanges::default();
        }
        let (now, future) = (self.ring(), self.future_ring());
        // Both rings are constant between consecutive tokens of either.
        let mut bounds: Vec<i64> = now.tokens().to_vec();
        bounds.extend_from_slice(future.tokens());
        bounds.sort_unstable();
        bounds.dedup();
        let (mut current, mut after) = (Vec::new(), Vec::new());
        let mut ends: Vec<(i64, Vec<u32>)> = Vec::with_capacity(bounds.len());
        for &end in &bounds {
            now.replicas_into(replication, end, &mut current);
            future.replicas_into(replication, end, &mut after);
            let pending: Vec<u32> = after
                .iter()
                .copied()
                .filter(|node| !current.contains(node))
                .collect();
            ends.push((end, pending));
        }
        if !self.leaving.is_empty()
            && self
                .planted
                .has(PlantedBug::DecommissionForgetsPendingRange)
        {
            if let Some((_, pending)) = ends.iter_mut().find(|(_, pending)| !pending.is_empty()) {
                pending.clear();
            }
        }
        let pending = PendingRanges { ends };
        if cfg!(debug_assertions) {
            pending.check_invariants();
        }
        pending
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn node(id: u32) -> NodeSpec {
        NodeSpec { id, rack: 0, dc: 0 }
    }

    /// `nodes` nodes with `per_node` tokens each, drawn from a fixed seed.
    pub(crate) fn ring(nodes: u32, per_node: u32) -> Ring {
        let specs: Vec<NodeSpec> = (0..nodes).map(node).collect();
        let mut rng = rand_pcg::Pcg64Mcg::new(0x5eed);
        Ring::new(&specs, per_node, &mut rng).expect("a valid ring")
    }

    /// `count` tokens no ring of `ring` holds, from a fixed stream.
    pub(crate) fn fresh_tokens(metadata: &TokenMetadata, count: usize) -> Vec<i64> {
        let mut tokens = Vec::new();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        while tokens.len() < count {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let token = state as i64;
            if !metadata.normal.contains_key(&token) && !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        tokens
    }

    #[test]
    fn a_joining_node_is_pending_on_exactly_the_ranges_it_will_own() {
        let mut metadata = TokenMetadata::new(&ring(4, 16));
        assert!(metadata.pending(&Replication::simple(3)).is_empty());
        let tokens = fresh_tokens(&metadata, 16);
        metadata.add_joining(node(4), &tokens).unwrap();
        assert_eq!(metadata.epoch(), 1);
        let replication = Replication::simple(3);
        let pending = metadata.pending(&replication);
        // Only the joining node is ever pending, on what it will replicate.
        let future = metadata.future_ring();
        let will_own = future.replicated_ownership(&replication)[4];
        assert!((pending.fraction_pending_on(4) - will_own).abs() < 1e-9);
        for other in 0..4 {
            assert_eq!(pending.fraction_pending_on(other), 0.0);
        }
        // Reads still use the ring without it.
        assert_eq!(metadata.ring().nodes().len(), 4);
        // Once it has streamed it is a normal member, and nothing is
        // pending: the ring is the one built with its tokens from the start.
        metadata.finish_joining(4).unwrap();
        assert_eq!(metadata.epoch(), 2);
        assert!(metadata.pending(&replication).is_empty());
        assert_eq!(
            metadata.ring().replicated_ownership(&replication),
            future.replicated_ownership(&replication)
        );
    }

    #[test]
    fn a_leaving_nodes_ranges_are_pending_on_their_next_owners() {
        let replication = Replication::simple(2);
        let mut metadata = TokenMetadata::new(&ring(4, 8));
        metadata.add_leaving(2).unwrap();
        let pending = metadata.pending(&replication);
        // The leaving node is never pending; where it is a replica now, a
        // node that is not takes its place.
        assert_eq!(pending.fraction_pending_on(2), 0.0);
        let now = metadata.ring();
        let mut replicas = Vec::new();
        for &token in now.tokens() {
            now.replicas_into(&replication, token, &mut replicas);
            let gaining = pending.replicas(token);
            if replicas.contains(&2) {
                assert_eq!(gaining.len(), 1, "token {token}: {replicas:?} {gaining:?}");
                assert!(!replicas.contains(&gaining[0]));
            } else {
                assert!(gaining.is_empty(), "token {token}");
            }
        }
        // After it leaves, the ring's ownership is a fresh ring's of the
        // other three with their tokens.
        metadata.finish_leaving(2).unwrap();
        let remaining = metadata.ring();
        assert_eq!(remaining.nodes().len(), 3);
        let entries: Vec<(i64, u32)> = (0..now.range_count())
            .map(|index| (now.range_bounds(index).1, now.range_owner(index)))
            .filter(|(_, owner)| *owner != 2)
            .collect();
        let others: Vec<NodeSpec> = [0, 1, 3].map(node).to_vec();
        let fresh = Ring::from_tokens(&others, &entries).expect("a valid ring");
        assert_eq!(
            remaining.replicated_ownership(&replication),
            fresh.replicated_ownership(&replication)
        );
        assert_eq!(
            crate::ring::ReplicaMap::new(&remaining, &replication),
            crate::ring::ReplicaMap::new(&fresh, &replication),
            "every token has the replicas a fresh ring of the three gives it"
        );
        let gained: f64 = [0, 1, 3]
            .iter()
            .map(|&n| pending.fraction_pending_on(n))
            .sum();
        let ownership = now.replicated_ownership(&replication);
        assert!(
            (gained - ownership[2]).abs() < 1e-9,
            "what node 2 held is what the others gain: {gained} vs {}",
            ownership[2]
        );
    }

    #[test]
    fn changes_that_make_no_sense_are_refused_and_leave_the_epoch() {
        let mut metadata = TokenMetadata::new(&ring(2, 4));
        let taken = metadata.ring().tokens()[0];
        assert_eq!(
            metadata.add_joining(node(5), &[taken]),
            Err(TopologyError::TokenTaken(taken))
        );
        assert_eq!(
            metadata.add_joining(node(5), &[]),
            Err(TopologyError::NoTokens(5))
        );
        assert_eq!(
            metadata.add_joining(node(1), &[1]),
            Err(TopologyError::AlreadyMember(1))
        );
        assert_eq!(metadata.finish_joining(7), Err(TopologyError::NotMember(7)));
        assert_eq!(metadata.finish_leaving(0), Err(TopologyError::NotMember(0)));
        metadata.add_leaving(0).unwrap();
        assert_eq!(metadata.add_leaving(1), Err(TopologyError::LastNode));
        assert_eq!(metadata.epoch(), 1, "only the valid change counted");
    }
}
