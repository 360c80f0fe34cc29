//! Which shard of which node owns a key.
//!
//! This first placement is deliberately simple: a key's token is a fixed
//! 64-bit hash of it (SplitMix64's finaliser); the ring is cut into `nodes`
//! equal slices, and within a node the token picks the shard the way Scylla's
//! sharder does (`murmur3_partitioner_ignore_msb_bits` = 12: drop the top 12
//! bits, then scale to the shard count). The cluster
//! issue replaces it with the Murmur3 token ring, vnodes and replication
//! strategies; what stays is the question this module answers for the
//! coordinator: where does this key live. Replicas beyond the first are
//! the same shard of the next nodes clockwise (SimpleStrategy).

/// A shard of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShardAddress {
    /// Node index.
    pub node: u32,
    /// Shard index within the node.
    pub shard: u32,
}

/// The cluster's layout, as every coordinator knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Nodes in the ring.
    pub nodes: u32,
    /// Shards per node.
    pub shards_per_node: u32,
}

/// The token of a key: a fixed, well-mixed hash.
pub fn token_of(key: u64) -> u64 {
    let mut value = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    value = (value ^ (value >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    value ^ (value >> 31)
}

impl Placement {
    /// The shard that owns `key`.
    pub fn owner(&self, key: u64) -> ShardAddress {
        let token = token_of(key);
        let node = ((u128::from(token) * u128::from(self.nodes)) >> 64) as u32;
        let shard = ((u128::from(token << 12) * u128::from(self.shards_per_node)) >> 64) as u32;
        ShardAddress { node, shard }
    }

    /// The replicas of `key` at replication factor `rf` (SimpleStrategy on
    /// this simple ring): the owner, then the same shard of the next
    /// `rf - 1` nodes around the ring. Fills `out`; returns how many.
    pub fn replicas(&self, key: u64, rf: u32, out: &mut [ShardAddress]) -> usize {
        let owner = self.owner(key);
        let count = (rf.min(self.nodes) as usize).min(out.len());
        for (step, slot) in out.iter_mut().take(count).enumerate() {
            *slot = ShardAddress {
                node: (owner.node + step as u32) % self.nodes,
                shard: owner.shard,
            };
        }
        count
    }

    /// Fraction of the key space each shard owns.
    pub fn ownership_per_shard(&self) -> f64 {
        1.0 / f64::from(self.nodes * self.shards_per_node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_spread_evenly_over_nodes_and_shards() {
        let placement = Placement {
            nodes: 3,
            shards_per_node: 4,
        };
        let mut counts = [[0u32; 4]; 3];
        for key in 0..120_000 {
            let owner = placement.owner(key);
            counts[owner.node as usize][owner.shard as usize] += 1;
        }
        for count in counts.iter().flatten() {
            assert!((*count as f64 - 10_000.0).abs() < 400.0, "{counts:?}");
        }
        assert_eq!(placement.owner(42), placement.owner(42));
    }
}
