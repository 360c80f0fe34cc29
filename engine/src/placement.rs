//! Which shard of which node owns a key: the token ring plus Scylla's
//! sharder.
//!
//! A request's key is a cassandra-stress key index (`u64`). Its placement:
//! 1. **Key bytes.** The index becomes c-s's 10-byte partition key
//!    ([`ring::stress_key_bytes`](crate::ring::stress_key_bytes)).
//! 2. **Token.** Cassandra's Murmur3 token of those bytes
//!    ([`ring::murmur3_token`](crate::ring::murmur3_token)); see
//!    [`key_token`].
//! 3. **Replica nodes.** The keyspace's replicas of that token on the vnode
//!    ring (SimpleStrategy or NetworkTopologyStrategy), looked up in the
//!    ring's precomputed [`ReplicaMap`]: primary first, in the ring walk's
//!    order.
//! 4. **Shard.** Within each replica node, the shard Scylla's sharder
//!    gives the token ([`shard_of_token`], `dht::sharder::shard_of` with
//!    `murmur3_partitioner_ignore_msb_bits` = 12): bias the token to
//!    unsigned (add 2^63), shift left by the ignored bits, multiply by the
//!    node's shard count and keep the high 64 bits of the 128-bit product.
//!    Every node here has the same shard count, so a key lives on the same
//!    shard index on each of its replicas.
//!
//! A [`Placement`] is a cheap handle (an `Arc` of the replica map and the
//! ownership figures) that every shard's coordinator and every client
//! shares. One built from token metadata ([`Placement::of_topology`])
//! also carries the ranges pending on joining or gaining nodes, which
//! writes reach too, and its epoch; node ids need not be `0..n` then (a
//! node not yet joined, or gone, owns nothing). A lookup hashes the key (Murmur3 over 10 bytes), finds the ring
//! range (a bucket index and a short binary search) and borrows the
//! range's replica slice: no allocation.
//!
//! Ownership (volume mode sizes each shard's data with it): a node holds
//! the fraction of the token space it is a replica of
//! ([`Ring::replicated_ownership`]); its shards split that evenly (with
//! 2^12 sharder stripes per shard, a shard's share of any vnode range
//! differs from 1/shards by less than one stripe, 2^-12 / shards of the
//! ring).
//!
//! Sources: Scylla `dht/token-sharding.hh` / `dht/i_partitioner.cc`
//! (`shard_of`, @3.0 `murmur3_partitioner::shard_of`), `db/config.hh`
//! (`murmur3_partitioner_ignore_msb_bits`, default 12 since 2.0); test
//! vectors from Scylla's `test/boost/partitioner_test.cc`
//! (`test_murmur3_sharding`, `test_murmur3_sharding_with_ignorebits`) and
//! the Scylla Rust driver's `routing/sharding.rs` (`test_shard_of`, values
//! from gocql). The ring itself: [`crate::ring`].
//!
//! Left out: nodes with different shard counts (the sharder takes each
//! node's own count; the simulator gives every node the same), and Scylla's
//! shard-aware token allocation.

use std::sync::Arc;

use crate::ring::{stress_key_token, NodeSpec, ReplicaMap, Replication, Ring};
use crate::topology::{PendingRanges, TokenMetadata};

/// `murmur3_partitioner_ignore_msb_bits`: Scylla's default since 2.0.
pub const SHARDING_IGNORE_MSB_BITS: u32 = 12;

// The sharder shifts a 64-bit token left by the ignored bits: fewer than 64,
// and few enough to leave each shard many stripes of the ring.
const _: () = assert!(SHARDING_IGNORE_MSB_BITS < 64);
const _: () = assert!(SHARDING_IGNORE_MSB_BITS <= 16);

/// A shard of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShardAddress {
    /// Node index.
    pub node: u32,
    /// Shard index within the node.
    pub shard: u32,
}

/// The Murmur3 token of cassandra-stress key index `key` (its 10-byte
/// `HexBytes` key, hashed as Cassandra's `Murmur3Partitioner` does;
/// [`ring::stress_key_token`](crate::ring::stress_key_token) computes it
/// without building the bytes).
#[inline]
pub fn key_token(key: u64) -> i64 {
    let token = stress_key_token(key);
    debug_assert_ne!(
        token,
        crate::ring::MIN_TOKEN,
        "a key's token is never the reserved minimum"
    );
    token
}

/// The shard of a node with `shards` shards that owns `token`, as Scylla's
/// sharder computes it with `ignore_msb_bits` (below 64) ignored bits: the
/// token biased to unsigned, shifted left, scaled to the shard count.
#[inline]
pub fn shard_of_token(token: i64, shards: u32, ignore_msb_bits: u32) -> u32 {
    debug_assert!(shards > 0, "a node has at least one shard");
    debug_assert!(ignore_msb_bits < 64, "the sharder keeps some bits");
    let biased = (token as u64).wrapping_add(1 << 63);
    let adjusted = biased << ignore_msb_bits;
    let shard = ((u128::from(adjusted) * u128::from(shards)) >> 64) as u32;
    debug_assert!(shard < shards, "shard {shard} of {shards}");
    shard
}

/// What a placement holds; shared behind an `Arc`.
#[derive(Debug, PartialEq)]
struct Layout {
    shards_per_node: u32,
    /// Replica nodes of every ring range.
    replicas: ReplicaMap,
    /// Replicated ownership per node id (0 for an id outside the ring),
    /// pending ranges included.
    ownership: Vec<f64>,
    /// Per token, the nodes about to own it (a join or a leave under way):
    /// writes go to them too.
    pending: PendingRanges,
    /// The token metadata's epoch this placement was built from.
    epoch: u64,
}

/// The cluster's layout, as every coordinator and client knows it: the
/// replica map of the keyspace, the ranges pending on joining or gaining
/// nodes, and the shards per node. Cloning is an `Arc` clone.
#[derive(Clone, Debug)]
pub struct Placement {
    layout: Arc<Layout>,
}

impl PartialEq for Placement {
    fn eq(&self, other: &Placement) -> bool {
        Arc::ptr_eq(&self.layout, &other.layout) || self.layout == other.layout
    }
}

impl Placement {
    /// The placement of a keyspace replicated by `replication` on `ring`,
    /// with `shards_per_node` shards on every node, nothing pending. Node
    /// ids are the ring's (`0..nodes` in a cluster that never changed).
    ///
    /// # Panics
    /// If `shards_per_node` is 0, or if `replication` places no replica on
    /// this ring.
    pub fn new(ring: &Ring, replication: &Replication, shards_per_node: u32) -> Placement {
        let slots = ring
            .nodes()
            .iter()
            .map(|node| node.id + 1)
            .max()
            .unwrap_or(0);
        let placement = Placement::build(
            ring,
            replication,
            shards_per_node,
            slots,
            PendingRanges::default(),
            0,
        );
        debug_assert!(
            !placement.has_pending() && placement.epoch() == 0,
            "a ring that never changed has nothing pending"
        );
        placement
    }

    /// The placement of `metadata`'s epoch: reads and natural replicas from
    /// its ring, writes also to its pending ranges' nodes, over node ids
    /// below `node_slots` (every node the run will have, so that arrays
    /// indexed by node id keep their size across topology changes).
    ///
    /// # Panics
    /// As [`Placement::new`], or if a node id is not below `node_slots`.
    pub fn of_topology(
        metadata: &TokenMetadata,
        replication: &Replication,
        shards_per_node: u32,
        node_slots: u32,
    ) -> Placement {
        Placement::build(
            &metadata.ring(),
            replication,
            shards_per_node,
            node_slots,
            metadata.pending(replication),
            metadata.epoch(),
        )
    }

    fn build(
        ring: &Ring,
        replication: &Replication,
        shards_per_node: u32,
        node_slots: u32,
        pending: PendingRanges,
        epoch: u64,
    ) -> Placement {
        assert!(shards_per_node > 0, "a node needs at least one shard");
        let replicas = ReplicaMap::new(ring, replication);
        assert!(
            replicas.replica_count() > 0,
            "the replication strategy places no replica on this ring"
        );
        let mut ownership = vec![0.0; node_slots as usize];
        for (node, owned) in ring
            .nodes()
            .iter()
            .zip(ring.replicated_ownership(replication))
        {
            assert!(
                node.id < node_slots,
                "node {} is beyond the {node_slots} node ids",
                node.id
            );
            ownership[node.id as usize] = owned;
        }
        if !pending.is_empty() {
            for (id, owned) in ownership.iter_mut().enumerate() {
                *owned += pending.fraction_pending_on(id as u32);
            }
        }
        let placement = Placement {
            layout: Arc::new(Layout {
                shards_per_node,
                replicas,
                ownership,
                pending,
                epoch,
            }),
        };
        placement.check_invariants();
        placement
    }

    /// What a placement holds: shards on every node, replicas for every
    /// key, an ownership per node id that is a non-negative fraction, and,
    /// with nothing pending, ownerships summing to the replica count.
    /// O(node ids).
    pub fn check_invariants(&self) {
        let layout = &self.layout;
        assert!(
            layout.shards_per_node > 0,
            "a node needs at least one shard"
        );
        assert!(
            layout.replicas.replica_count() > 0,
            "every key has a replica"
        );
        assert!(
            layout.replicas.replica_count() <= layout.ownership.len(),
            "no more replicas than node ids"
        );
        for &owned in &layout.ownership {
            assert!(
                owned.is_finite() && owned >= 0.0,
                "an ownership is a fraction"
            );
        }
        if layout.pending.is_empty() {
            let total: f64 = layout.ownership.iter().sum();
            let replicas = layout.replicas.replica_count() as f64;
            assert!(
                (total - replicas).abs() <= 1e-9 * replicas,
                "ownerships sum to the replica count: {total}"
            );
        }
    }

    /// One node owning every token (one ring token), replication factor 1.
    pub fn single_node(shards_per_node: u32) -> Placement {
        let node = NodeSpec {
            id: 0,
            rack: 0,
            dc: 0,
        };
        let ring = Ring::from_tokens(&[node], &[(0, 0)]).expect("a one-token ring is valid");
        let placement = Placement::new(&ring, &Replication::simple(1), shards_per_node);
        assert_eq!(
            placement.ownership(),
            &[1.0],
            "one node owns the whole ring"
        );
        placement
    }

    /// `nodes` nodes of one rack with one token each, evenly spaced (node
    /// `i` owns the `i`-th of `nodes` equal ranges): every node owns the
    /// same share. A ring without random draws, for tests and comparisons.
    pub fn evenly_spaced(nodes: u32, shards_per_node: u32, replication: &Replication) -> Placement {
        assert!(nodes > 0, "a ring has at least one node");
        let specs: Vec<NodeSpec> = (0..nodes)
            .map(|id| NodeSpec { id, rack: 0, dc: 0 })
            .collect();
        let entries: Vec<(i64, u32)> = (0..nodes)
            .map(|id| {
                // The end of range `id`: (id + 1) / nodes of the way round,
                // from the minimum token.
                let end = ((u128::from(id) + 1) << 64) / u128::from(nodes) - 1;
                ((end as u64).wrapping_sub(1 << 63) as i64, id)
            })
            .collect();
        let ring = Ring::from_tokens(&specs, &entries).expect("distinct evenly spaced tokens");
        let placement = Placement::new(&ring, replication, shards_per_node);
        assert_eq!(placement.nodes(), nodes);
        placement
    }

    /// Node ids this placement knows (every id below it; an id may be
    /// outside the ring: not yet joined, or left).
    pub fn nodes(&self) -> u32 {
        self.layout.ownership.len() as u32
    }

    /// The token metadata's epoch this placement was built from (0 for a
    /// ring that never changed).
    pub fn epoch(&self) -> u64 {
        self.layout.epoch
    }

    /// Whether a join or leave is under way: some writes have pending
    /// replicas.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.layout.pending.is_empty()
    }

    /// The nodes `token` is pending on: they receive its writes too.
    #[inline]
    pub fn pending_nodes(&self, token: i64) -> &[u32] {
        let nodes = self.layout.pending.replicas(token);
        debug_assert!(
            nodes.iter().all(|&node| node < self.nodes()),
            "pending nodes are known node ids"
        );
        nodes
    }

    /// The replica map of the ring (reads' and writes' natural replicas).
    pub fn replica_map(&self) -> &ReplicaMap {
        &self.layout.replicas
    }

    /// Shards per node.
    pub fn shards_per_node(&self) -> u32 {
        self.layout.shards_per_node
    }

    /// Replicas per key.
    pub fn replica_count(&self) -> usize {
        self.layout.replicas.replica_count()
    }

    /// The shard, within any node, that owns `token`.
    #[inline]
    pub fn shard_of(&self, token: i64) -> u32 {
        shard_of_token(token, self.layout.shards_per_node, SHARDING_IGNORE_MSB_BITS)
    }

    /// The ring range holding `token`: every key in it has the same
    /// replicas, and on each the same shard (per shard index, the writes
    /// to the range's keys reach every replica alike).
    #[inline]
    pub fn range_of(&self, token: i64) -> usize {
        let range = self.layout.replicas.range_index(token);
        debug_assert!(range < self.layout.replicas.range_count());
        range
    }

    /// The fraction of the token space ring range `index` covers.
    pub fn range_fraction(&self, index: usize) -> f64 {
        self.layout.replicas.range_fraction(index)
    }

    /// The replica nodes of `token`, primary first.
    #[inline]
    pub fn replica_nodes(&self, token: i64) -> &[u32] {
        let nodes = self.layout.replicas.replicas(token);
        debug_assert_eq!(
            nodes.len(),
            self.replica_count(),
            "every token has its replicas"
        );
        nodes
    }

    /// The primary replica of `key`: the owner of its ring range, on the
    /// shard the sharder gives its token.
    #[inline]
    pub fn owner(&self, key: u64) -> ShardAddress {
        let token = key_token(key);
        let owner = ShardAddress {
            node: self.replica_nodes(token)[0],
            shard: self.shard_of(token),
        };
        debug_assert!(owner.node < self.nodes(), "the owner is a known node");
        owner
    }

    /// The replicas of `key`, primary first, into `out`; returns how many
    /// (the replica count, or `out.len()` if smaller).
    #[inline]
    pub fn replicas(&self, key: u64, out: &mut [ShardAddress]) -> usize {
        self.replicas_of_token(key_token(key), out)
    }

    /// The replicas of `token`, primary first, into `out`; returns how many.
    #[inline]
    pub fn replicas_of_token(&self, token: i64, out: &mut [ShardAddress]) -> usize {
        let shard = self.shard_of(token);
        let nodes = self.replica_nodes(token);
        let count = nodes.len().min(out.len());
        for (slot, &node) in out.iter_mut().zip(&nodes[..count]) {
            *slot = ShardAddress { node, shard };
        }
        debug_assert!(count <= self.replica_count());
        count
    }

    /// Replicated ownership of every node (by node id): the fraction of the
    /// token space it holds a replica of, or is pending on. Without a
    /// change under way, sums to the replica count.
    pub fn ownership(&self) -> &[f64] {
        &self.layout.ownership
    }

    /// Fraction of the key space each shard of `node` holds a replica of:
    /// the node's replicated ownership split evenly over its shards.
    pub fn shard_ownership(&self, node: u32) -> f64 {
        debug_assert!(node < self.nodes(), "node {node} is not a known node id");
        let owned = self.layout.ownership[node as usize] / f64::from(self.layout.shards_per_node);
        debug_assert!(owned >= 0.0);
        owned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_pcg::Pcg64Mcg;
    use std::collections::BTreeSet;

    /// Scylla's `test_murmur3_sharding`: the first token of each shard
    /// (`shard_limits[i]` is the first token of shard `i % shards`, the one
    /// before it is the previous shard's).
    fn check_limits(shards: u32, ignore_msb_bits: u32, limits: &[i64]) {
        assert_eq!(limits.len(), (shards << ignore_msb_bits) as usize);
        for (i, &limit) in limits.iter().enumerate() {
            let i = i as u32;
            assert_eq!(
                shard_of_token(limit, shards, ignore_msb_bits),
                i % shards,
                "{shards} shards, {ignore_msb_bits} bits: limit {limit}"
            );
            if i > 0 {
                assert_eq!(
                    shard_of_token(limit - 1, shards, ignore_msb_bits),
                    (i - 1) % shards,
                    "{shards} shards, {ignore_msb_bits} bits: before {limit}"
                );
            }
        }
    }

    #[test]
    fn the_sharder_matches_scyllas_shard_limits() {
        check_limits(
            7,
            0,
            &[
                -9_223_372_036_854_775_807,
                -6_588_122_883_467_697_006 + 1,
                -3_952_873_730_080_618_204 + 1,
                -1_317_624_576_693_539_402 + 1,
                1_317_624_576_693_539_401 + 1,
                3_952_873_730_080_618_203 + 1,
                6_588_122_883_467_697_005 + 1,
            ],
        );
        check_limits(2, 0, &[-9_223_372_036_854_775_807, 0]);
        check_limits(1, 0, &[-9_223_372_036_854_775_807]);
        check_limits(
            7,
            2,
            &[
                -9_223_372_036_854_775_807,
                -8_564_559_748_508_006_107,
                -7_905_747_460_161_236_406,
                -7_246_935_171_814_466_706,
                -6_588_122_883_467_697_005,
                -5_929_310_595_120_927_305,
                -5_270_498_306_774_157_604,
                -4_611_686_018_427_387_904,
                -3_952_873_730_080_618_203,
                -3_294_061_441_733_848_502,
                -2_635_249_153_387_078_802,
                -1_976_436_865_040_309_101,
                -1_317_624_576_693_539_401,
                -658_812_288_346_769_700,
                0,
                658_812_288_346_769_701,
                1_317_624_576_693_539_402,
                1_976_436_865_040_309_102,
                2_635_249_153_387_078_803,
                3_294_061_441_733_848_503,
                3_952_873_730_080_618_204,
                4_611_686_018_427_387_904,
                5_270_498_306_774_157_605,
                5_929_310_595_120_927_306,
                6_588_122_883_467_697_006,
                7_246_935_171_814_466_707,
                7_905_747_460_161_236_407,
                8_564_559_748_508_006_108,
            ],
        );
        // 2 shards, 4 bits: 32 stripes of 2^59 tokens.
        let stripes: Vec<i64> = (0..32i64)
            .map(|i| {
                if i == 0 {
                    -9_223_372_036_854_775_807
                } else {
                    (i128::from(i64::MIN) + i128::from(i) * (1i128 << 59)) as i64
                }
            })
            .collect();
        assert_eq!(stripes[16], 0);
        assert_eq!(stripes[31], 8_646_911_284_551_352_320);
        check_limits(2, 4, &stripes);
    }

    #[test]
    fn the_sharder_matches_the_drivers_12_bit_examples() {
        // Scylla Rust driver `test_shard_of` (from gocql): 4 shards, 12 bits.
        assert_eq!(shard_of_token(-9_219_783_007_514_621_794, 4, 12), 3);
        assert_eq!(shard_of_token(9_222_582_454_147_032_830, 4, 12), 3);
        // Derivation: with 12 bits ignored the sharder repeats every 2^52
        // tokens, each stripe split into `shards` equal parts.
        let stripe = 1i64 << 52;
        for shards in [1, 3, 14, 62] {
            for offset in [0, stripe / 3, stripe - 1] {
                let token = i64::MIN + 5 * stripe + offset;
                let expected = ((offset as u128 * 4096 * shards as u128) >> 64) as u32;
                assert_eq!(shard_of_token(token, shards, 12), expected);
                assert_eq!(
                    shard_of_token(token + 7 * stripe, shards, 12),
                    expected,
                    "stripes repeat"
                );
            }
            assert_eq!(shard_of_token(i64::MAX, shards, 12), shards - 1);
            assert_eq!(shard_of_token(i64::MIN, shards, 12), 0);
        }
    }

    fn random_ring(nodes: u32, racks: u32, seed: u64) -> Ring {
        let specs: Vec<NodeSpec> = (0..nodes)
            .map(|id| NodeSpec {
                id,
                rack: id % racks,
                dc: 0,
            })
            .collect();
        Ring::new(&specs, 256, &mut Pcg64Mcg::seed_from_u64(seed)).expect("ring")
    }

    #[test]
    fn replicas_are_rf_distinct_nodes_on_the_keys_shard() {
        let ring = random_ring(12, 3, 4);
        for replication in [
            Replication::simple(3),
            Replication::network_topology([(0, 3)]),
        ] {
            let placement = Placement::new(&ring, &replication, 7);
            assert_eq!(placement.replica_count(), 3);
            let mut out = [ShardAddress { node: 0, shard: 0 }; 5];
            for key in 0..20_000u64 {
                let count = placement.replicas(key, &mut out);
                assert_eq!(count, 3);
                let nodes: BTreeSet<u32> = out[..count].iter().map(|r| r.node).collect();
                assert_eq!(nodes.len(), 3, "distinct nodes: {:?}", &out[..count]);
                let token = key_token(key);
                assert!(out[..count]
                    .iter()
                    .all(|r| r.shard == shard_of_token(token, 7, 12) && r.shard < 7));
                assert_eq!(out[0], placement.owner(key));
                assert_eq!(out[0].node, ring.primary(token));
                if matches!(replication, Replication::NetworkTopologyStrategy { .. }) {
                    let racks: BTreeSet<u32> = out[..count].iter().map(|r| r.node % 3).collect();
                    assert_eq!(racks.len(), 3, "one replica per rack");
                }
            }
        }
    }

    #[test]
    fn keys_spread_over_nodes_as_the_ring_owns_them_and_evenly_over_shards() {
        let ring = random_ring(6, 1, 9);
        let placement = Placement::new(&ring, &Replication::simple(1), 4);
        let keys = 200_000u64;
        let mut counts = [[0u32; 4]; 6];
        for key in 0..keys {
            let owner = placement.owner(key);
            counts[owner.node as usize][owner.shard as usize] += 1;
        }
        for (node, per_shard) in counts.iter().enumerate() {
            let expected = placement.ownership()[node] * keys as f64;
            let total: u32 = per_shard.iter().sum();
            assert!(
                (f64::from(total) - expected).abs() < 4.0 * expected.sqrt() + 1.0,
                "node {node}: {total} keys, ownership predicts {expected:.0}"
            );
            for &count in per_shard {
                let share = placement.shard_ownership(node as u32) * keys as f64;
                assert!(
                    (f64::from(count) - share).abs() < 4.0 * share.sqrt() + 1.0,
                    "node {node}: {per_shard:?} vs {share:.0} per shard"
                );
            }
        }
    }

    #[test]
    fn evenly_spaced_and_single_node_placements() {
        let single = Placement::single_node(3);
        assert_eq!((single.nodes(), single.replica_count()), (1, 1));
        assert_eq!(single.ownership(), &[1.0]);
        assert_eq!(single.owner(5).node, 0);
        let even = Placement::evenly_spaced(4, 2, &Replication::simple(2));
        assert_eq!(even.nodes(), 4);
        for &owned in even.ownership() {
            assert!((owned - 0.5).abs() < 1e-12, "{:?}", even.ownership());
        }
        assert!((even.shard_ownership(1) - 0.25).abs() < 1e-12);
        // Node i owns the i-th quarter of the token space.
        assert_eq!(even.replica_nodes(i64::MIN + 1)[0], 0);
        assert_eq!(even.replica_nodes(-1)[0], 1);
        assert_eq!(even.replica_nodes(0)[0], 2);
        assert_eq!(even.replica_nodes(i64::MAX), &[3, 0]);
        let clone = even.clone();
        assert_eq!(clone, even);
        assert_ne!(clone, single);
    }
}
