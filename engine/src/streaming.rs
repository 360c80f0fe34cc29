//! Range streaming for topology changes: which node sends which token
//! ranges to which, in what plans and order (the *range streamer*), and how
//! a shard moves them (RPC messages or a continuous stream).
//!
//! What it models (scylla-mechanisms.md section 6):
//! - **Transfers** ([`bootstrap_transfers`], [`decommission_transfers`],
//!   [`removenode_transfers`]): a joining node fetches each range it gains
//!   from the node losing it (`consistent_rangemovement`, the strict
//!   source; with RF above the node count nothing is lost, and the range's
//!   primary replica sends it); a leaving node sends each range it held to
//!   the nodes gaining it; after a removenode, each node gaining a range of
//!   the dead node fetches it from a surviving replica (the first live one
//!   in ring order).
//! - **Plans** ([`RangeStreamer`]): per peer, the ranges are cut into stream
//!   plans of 10% of that peer's ranges each (`stream_plan_ranges_fraction`,
//!   `dht/range_streamer.cc` @2.2/@3.0), run one after another; peers run
//!   in parallel, at most 16 at a time in 3.0 (`_limiter{16}`) and all at
//!   once before. One keyspace, one table.
//! - **Per shard** (`shard/stream_path.rs`): every shard of the sender
//!   streams its part of the plan's ranges in parallel to the same shard
//!   index of the receiver (`split_ranges_to_shards`; every node has the
//!   same shard count, so a token's shard is the same on both):
//!   - [`StreamMode::Rpc`] (Scylla up to 2.3, `STREAM_MUTATION`): one
//!     request/response RPC per partition (`fragment_and_freeze` freezes
//!     each partition whole below 128 KiB), at most 256 in flight per shard
//!     (`mutation_send_limiter`); the receiver applies each into a
//!     streaming memtable, flushed to an SSTable when full, and answers.
//!   - [`StreamMode::Stream`] (3.0, `STREAM_MUTATION_FRAGMENTS`): one RPC
//!     stream per shard pair carrying frozen fragments with no per-message
//!     answer; the receiver writes them straight into an SSTable. Flow
//!     control is the connection's: the receiver returns credit for every
//!     [`STREAM_CREDIT_EVERY`] batches, and the sender keeps at most
//!     [`STREAM_WINDOW`] unanswered.
//!
//!   Both read the SSTables in the streaming I/O class and run in the
//!   streaming scheduling group (200 shares); the receiver adds what it
//!   wrote to its table, whose compaction strategy then compacts it.
//!
//! Left out: the PREPARE and COMPLETE messages that set a plan up and close
//! it (a few small messages a plan), the five retries of a failed plan
//! (a transfer to or from a node that crashes is reported, not retried),
//! hints streamed by a decommissioning node, materialized views' staging
//! SSTables, and `nodetool cleanup` (the nodes that lost ranges keep their
//! data until a compaction they do not run).

use std::collections::BTreeMap;
use std::sync::Arc;

use units::SimDuration;

use crate::ring::{span_fraction, Replication};
use crate::topology::TokenMetadata;

/// `ring_delay_ms` (30 s): how long a joining or leaving node waits after
/// announcing it, so that every node's pending ranges have caught up
/// before data moves.
pub const RING_DELAY: SimDuration = SimDuration::from_secs(30);

/// `stream_plan_ranges_fraction` (HEAD; 10% since 2.2): the share of a
/// peer's ranges in one stream plan.
pub const PLAN_RANGES_FRACTION: f64 = 0.1;

/// Peers a 3.0 range streamer streams with at once (`_limiter{16}`).
pub const PEERS_AT_ONCE_3_0: usize = 16;

/// `default_frozen_fragment_size`: the largest frozen mutation one
/// `STREAM_MUTATION` carries; a larger partition is cut into pieces this
/// size. Also the streaming reader's read size, and a stream batch.
pub const FRAGMENT_BYTES: u64 = 128 * 1024;

/// `STREAM_MUTATION` RPCs a shard keeps in flight
/// (`stream_manager::_mutation_send_limiter`, 256).
pub const RPC_IN_FLIGHT: u32 = 256;

/// Stream batches a sender keeps unanswered on a 3.0 stream: the
/// receiver's TCP window, what its socket buffer holds before the
/// application takes it (Linux autotunes it to a few MiB; an estimate:
/// 4 MiB of 128 KiB batches). The model's NIC takes a receiver's messages
/// first come first served, so these batches also queue ahead of the
/// node's other messages when its link is the bottleneck (receive-side
/// fairness is left out of `models::network`).
pub const STREAM_WINDOW: u32 = 32;

/// A 3.0 receiver returns credit once per this many batches on disk
/// (TCP's window updates, folded into one small message).
pub const STREAM_CREDIT_EVERY: u32 = 8;

/// Streaming reads a sender shard keeps ahead of what it has sent (the
/// streaming reader's read-ahead).
pub const READ_AHEAD: u32 = 4;

// A plan is a positive share of a peer's ranges; the sender's limits are
// positive, and a receiver returns credit before the window closes.
const _: () = assert!(0.0 < PLAN_RANGES_FRACTION && PLAN_RANGES_FRACTION <= 1.0);
const _: () = assert!(PEERS_AT_ONCE_3_0 > 0 && RPC_IN_FLIGHT > 0 && READ_AHEAD > 0);
const _: () = assert!(0 < STREAM_CREDIT_EVERY && STREAM_CREDIT_EVERY <= STREAM_WINDOW);
const _: () = assert!(STREAM_WINDOW.is_multiple_of(STREAM_CREDIT_EVERY));
const _: () = assert!(FRAGMENT_BYTES.is_power_of_two());
const _: () = assert!(RING_DELAY.as_nanos() > 0);

/// How a shard sends a range's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamMode {
    /// Scylla up to 2.3: one request/response RPC per partition.
    Rpc,
    /// Scylla 3.0 (and Cassandra's file streaming): a continuous stream of
    /// batches straight into SSTables.
    Stream,
}

/// A topology operation's data movement between two nodes: `source` sends
/// `target` its data of `ranges`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The sending node.
    pub source: u32,
    /// The receiving node.
    pub target: u32,
    /// Token ranges `(start, end]`, in ring order.
    pub ranges: Vec<(i64, i64)>,
}

impl Transfer {
    /// The fraction of the token space the ranges cover.
    pub fn fraction(&self) -> f64 {
        debug_assert_ne!(
            self.source, self.target,
            "a transfer moves data between two nodes"
        );
        ranges_fraction(&self.ranges)
    }
}

/// The fraction of the token space `ranges` cover.
pub fn ranges_fraction(ranges: &[(i64, i64)]) -> f64 {
    let fraction: f64 = ranges
        .iter()
        .map(|&(start, end)| span_fraction(start, end))
        .sum();
    debug_assert!(
        fraction >= 0.0 && fraction <= ranges.len() as f64,
        "each range is at most the ring"
    );
    fraction
}

/// Whether `token` lies in one of `ranges` (sorted by end, as transfers
/// and plans keep them; a range may wrap past the largest token).
pub fn ranges_contain(ranges: &[(i64, i64)], token: i64) -> bool {
    ranges.iter().any(|&(start, end)| {
        if start < end {
            start < token && token <= end
        } else {
            token > start || token <= end
        }
    })
}

/// Groups `(peer, range)` pairs into one transfer per peer.
fn group(
    pairs: impl IntoIterator<Item = (u32, (i64, i64))>,
    transfer: impl Fn(u32) -> (u32, u32),
) -> Vec<Transfer> {
    let mut by_peer: BTreeMap<u32, Vec<(i64, i64)>> = BTreeMap::new();
    for (peer, range) in pairs {
        by_peer.entry(peer).or_default().push(range);
    }
    let transfers: Vec<Transfer> = by_peer
        .into_iter()
        .map(|(peer, ranges)| {
            let (source, target) = transfer(peer);
            Transfer {
                source,
                target,
                ranges,
            }
        })
        .collect();
    debug_assert!(
        transfers.iter().all(|transfer| !transfer.ranges.is_empty()),
        "a transfer moves some range"
    );
    transfers
}

/// What node `joining` (announced in `metadata`) fetches, and from whom:
/// each range it is pending on, from the current replica that will no
/// longer hold it (or the range's first replica when none loses it).
pub fn bootstrap_transfers(
    metadata: &TokenMetadata,
    replication: &Replication,
    joining: u32,
) -> Vec<Transfer> {
    let (now, future) = (metadata.ring(), metadata.future_ring());
    let (mut current, mut after) = (Vec::new(), Vec::new());
    let mut pairs = Vec::new();
    for (start, end, pending) in metadata.pending(replication).ranges() {
        if !pending.contains(&joining) {
            continue;
        }
        now.replicas_into(replication, end, &mut current);
        future.replicas_into(replication, end, &mut after);
        let source = current
            .iter()
            .copied()
            .find(|node| !after.contains(node))
            .unwrap_or(current[0]);
        pairs.push((source, (start, end)));
    }
    let transfers = planted_drop(metadata, group(pairs, |source| (source, joining)));
    debug_assert!(
        transfers
            .iter()
            .all(|transfer| transfer.target == joining && transfer.source != joining),
        "a joining node fetches from others"
    );
    transfers
}

/// What node `leaving` (announced in `metadata`) sends, and to whom: each
/// range pending on another node, to that node.
pub fn decommission_transfers(
    metadata: &TokenMetadata,
    replication: &Replication,
    leaving: u32,
) -> Vec<Transfer> {
    let mut pairs = Vec::new();
    for (start, end, pending) in metadata.pending(replication).ranges() {
        for &target in pending {
            pairs.push((target, (start, end)));
        }
    }
    let transfers = planted_drop(metadata, group(pairs, |target| (leaving, target)));
    debug_assert!(
        transfers.iter().all(|transfer| transfer.target != leaving),
        "a leaving node is never pending on its own ranges"
    );
    transfers
}

/// What the nodes gaining the ranges of dead node `removed` (announced as
/// leaving in `metadata`) fetch, and from whom: each from the first
/// replica of the current ring that is neither the dead node nor the
/// gaining node and is `alive`.
pub fn removenode_transfers(
    metadata: &TokenMetadata,
    replication: &Replication,
    removed: u32,
    alive: impl Fn(u32) -> bool,
) -> Vec<Transfer> {
    let now = metadata.ring();
    let mut current = Vec::new();
    let mut by_pair: BTreeMap<(u32, u32), Vec<(i64, i64)>> = BTreeMap::new();
    for (start, end, pending) in metadata.pending(replication).ranges() {
        now.replicas_into(replication, end, &mut current);
        for &target in pending {
            if let Some(source) = current
                .iter()
                .copied()
                .find(|&node| node != removed && node != target && alive(node))
            {
                by_pair
                    .entry((source, target))
                    .or_default()
                    .push((start, end));
            }
        }
    }
    let transfers = by_pair
        .into_iter()
        .map(|((source, target), ranges)| Transfer {
            source,
            target,
            ranges,
        })
        .collect();
    let transfers = planted_drop(metadata, transfers);
    debug_assert!(
        transfers
            .iter()
            .all(|transfer| transfer.source != removed && transfer.source != transfer.target),
        "a removed node's ranges come from a live third node"
    );
    transfers
}

/// `transfers`, or with the planted `StreamDropsLastRange` each one short
/// of its last range.
fn planted_drop(metadata: &TokenMetadata, mut transfers: Vec<Transfer>) -> Vec<Transfer> {
    if metadata
        .planted_bugs()
        .has(crate::planted::PlantedBug::StreamDropsLastRange)
    {
        for transfer in &mut transfers {
            transfer.ranges.pop();
        }
        transfers.retain(|transfer| !transfer.ranges.is_empty());
    }
    debug_assert!(transfers.iter().all(|transfer| !transfer.ranges.is_empty()));
    transfers
}

/// One stream plan: a slice of a transfer's ranges.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Its id, unique within the operation.
    pub id: u32,
    /// The sending node.
    pub source: u32,
    /// The receiving node.
    pub target: u32,
    /// Its ranges.
    pub ranges: Arc<[(i64, i64)]>,
}

/// A topology operation's stream plans and their order: per transfer,
/// plans of [`PLAN_RANGES_FRACTION`] of its ranges one after another;
/// transfers in parallel, at most `peers_at_once` at a time.
#[derive(Clone, Debug)]
pub struct RangeStreamer {
    /// Per transfer, the plans not started yet (front first).
    queues: Vec<std::collections::VecDeque<Plan>>,
    /// Per transfer, the plan under way.
    running: Vec<Option<u32>>,
    peers_at_once: usize,
    plans: u32,
    done: u32,
}

impl RangeStreamer {
    /// The plans of `transfers`, none started, numbered from `first_id`
    /// (plan ids stay unique across a run's operations).
    pub fn new(transfers: &[Transfer], peers_at_once: usize, first_id: u32) -> RangeStreamer {
        assert!(peers_at_once > 0);
        let mut next_id = first_id;
        let queues: Vec<_> = transfers
            .iter()
            .map(|transfer| {
                let per_plan =
                    ((transfer.ranges.len() as f64 * PLAN_RANGES_FRACTION).ceil() as usize).max(1);
                transfer
                    .ranges
                    .chunks(per_plan)
                    .map(|ranges| {
                        next_id += 1;
                        Plan {
                            id: next_id - 1,
                            source: transfer.source,
                            target: transfer.target,
                            ranges: ranges.into(),
                        }
                    })
                    .collect()
            })
            .collect();
        let streamer = RangeStreamer {
            running: vec![None; transfers.len()],
            queues,
            peers_at_once,
            plans: next_id - first_id,
            done: 0,
        };
        streamer.check_invariants();
        streamer
    }

    /// What must hold: one running slot per transfer; no more plans under
    /// way than the limit; every plan is queued, under way or done, once.
    /// O(transfers).
    pub fn check_invariants(&self) {
        assert_eq!(
            self.running.len(),
            self.queues.len(),
            "one slot per transfer"
        );
        let running = self.running.iter().filter(|plan| plan.is_some()).count();
        assert!(running <= self.peers_at_once, "{running} plans under way");
        let queued: usize = self.queues.iter().map(|queue| queue.len()).sum();
        assert_eq!(
            queued + running + self.done as usize,
            self.plans as usize,
            "every plan is queued, under way or done"
        );
    }

    /// Plans to start now (the next plan of each transfer with none under
    /// way, while fewer than the limit run).
    pub fn start_plans(&mut self) -> Vec<Plan> {
        let mut started = Vec::new();
        let mut running = self.running.iter().filter(|plan| plan.is_some()).count();
        for (queue, slot) in self.queues.iter_mut().zip(&mut self.running) {
            if running >= self.peers_at_once {
                break;
            }
            if slot.is_none() {
                if let Some(plan) = queue.pop_front() {
                    *slot = Some(plan.id);
                    running += 1;
                    started.push(plan);
                }
            }
        }
        debug_assert!(started.len() <= self.peers_at_once);
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
        started
    }

    /// Plan `id` finished.
    ///
    /// # Panics
    /// If it is not under way.
    pub fn plan_done(&mut self, id: u32) {
        let slot = self
            .running
            .iter_mut()
            .find(|slot| **slot == Some(id))
            .unwrap_or_else(|| panic!("plan {id} is not under way"));
        *slot = None;
        self.done += 1;
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Plans in all.
    pub fn plans(&self) -> u32 {
        self.plans
    }

    /// Plans finished.
    pub fn plans_done(&self) -> u32 {
        debug_assert!(self.done <= self.plans, "no more plans done than planned");
        self.done
    }

    /// Whether every plan has finished.
    pub fn is_done(&self) -> bool {
        debug_assert!(self.done <= self.plans, "no more plans done than planned");
        self.done == self.plans
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::tests::{fresh_tokens, node, ring};

    fn metadata(nodes: u32, per_node: u32) -> TokenMetadata {
        TokenMetadata::new(&ring(nodes, per_node))
    }

    #[test]
    fn a_joining_node_fetches_what_it_will_own_from_the_nodes_losing_it() {
        let replication = Replication::simple(2);
        let mut metadata = metadata(3, 16);
        let tokens = fresh_tokens(&metadata, 16);
        metadata.add_joining(node(3), &tokens).unwrap();
        let transfers = bootstrap_transfers(&metadata, &replication, 3);
        let fetched: f64 = transfers.iter().map(Transfer::fraction).sum();
        let will_own = metadata.future_ring().replicated_ownership(&replication)[3];
        assert!((fetched - will_own).abs() < 1e-9, "{fetched} vs {will_own}");
        let (now, future) = (metadata.ring(), metadata.future_ring());
        let (mut current, mut after) = (Vec::new(), Vec::new());
        for transfer in &transfers {
            assert_eq!(transfer.target, 3);
            for &(_, end) in &transfer.ranges {
                now.replicas_into(&replication, end, &mut current);
                future.replicas_into(&replication, end, &mut after);
                assert!(
                    current.contains(&transfer.source),
                    "a source holds the range"
                );
                assert!(!after.contains(&transfer.source), "and loses it");
            }
        }
    }

    #[test]
    fn a_leaving_node_sends_each_range_to_the_node_gaining_it() {
        let replication = Replication::simple(2);
        let mut metadata = metadata(4, 16);
        metadata.add_leaving(3).unwrap();
        let transfers = decommission_transfers(&metadata, &replication, 3);
        let held = metadata.ring().replicated_ownership(&replication)[3];
        let sent: f64 = transfers.iter().map(Transfer::fraction).sum();
        assert!((sent - held).abs() < 1e-9, "{sent} vs {held}");
        assert!(transfers.iter().all(|transfer| transfer.source == 3));
    }

    #[test]
    fn removenode_fetches_from_live_replicas_only() {
        let replication = Replication::simple(3);
        let mut metadata = metadata(5, 8);
        metadata.add_leaving(4).unwrap();
        let transfers = removenode_transfers(&metadata, &replication, 4, |node| node != 0);
        assert!(!transfers.is_empty());
        for transfer in &transfers {
            assert!(transfer.source != 4 && transfer.source != 0);
            assert_ne!(transfer.source, transfer.target);
        }
    }

    #[test]
    fn plans_run_one_at_a_time_per_peer_and_peers_up_to_the_limit() {
        let transfers: Vec<Transfer> = (0..3)
            .map(|source| Transfer {
                source,
                target: 9,
                ranges: (0..25).map(|i| (i * 10, i * 10 + 5)).collect(),
            })
            .collect();
        let mut streamer = RangeStreamer::new(&transfers, 2, 0);
        // 25 ranges at 10% a plan: 3 ranges a plan, 9 plans a peer.
        assert_eq!(streamer.plans(), 27);
        let first = streamer.start_plans();
        assert_eq!(first.len(), 2, "two peers at once");
        assert_eq!(first[0].ranges.len(), 3);
        assert!(
            streamer.start_plans().is_empty(),
            "nothing more until one ends"
        );
        streamer.plan_done(first[0].id);
        let next = streamer.start_plans();
        assert_eq!(next.len(), 1);
        assert_eq!(
            next[0].source, 0,
            "the first peer's first free slot goes first"
        );
        let mut done = 1;
        let mut running: Vec<u32> = vec![first[1].id, next[0].id];
        while let Some(id) = running.pop() {
            streamer.plan_done(id);
            done += 1;
            running.extend(streamer.start_plans().iter().map(|plan| plan.id));
        }
        assert_eq!(done, 27);
        assert!(streamer.is_done());
    }

    #[test]
    fn a_wrapping_range_holds_the_tokens_past_the_largest() {
        let ranges = [(100, -100)];
        assert!(ranges_contain(&ranges, i64::MAX));
        assert!(ranges_contain(&ranges, i64::MIN));
        assert!(ranges_contain(&ranges, -100));
        assert!(!ranges_contain(&ranges, 0));
        assert!(!ranges_contain(&ranges, 100));
    }
}
