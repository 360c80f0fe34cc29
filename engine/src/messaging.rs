//! Where a message from another node lands: on the shard that holds its
//! connection, which in general is not the key's owner.
//!
//! Scylla 2.x-3.0 keeps one internode connection per (sending shard, peer
//! node): every shard has its own `messaging_service` and its client to a
//! peer is keyed by the peer's address with cpu 0
//! (`messaging_service::get_rpc_client`; `storage_proxy` sends to
//! `msg_addr{ep, 0}`). The peer accepts each connection on the shard
//! Seastar's connection distribution gives it (the shard with the fewest
//! connections), so the connections spread evenly over the peer's shards.
//! A verb handler runs on the connection's shard and hops to the key's
//! owner with `invoke_on(shard_of(token))` (`storage_proxy.cc` @2.2.0:
//! `mutate_locally`, `query_singular_local`, the read and mutation verb
//! handlers); the owner's answer hops back and goes out on the connection.
//! A read's answer is the RPC's response, so it reaches the coordinating
//! shard directly; a write's `MUTATION_DONE` is a message of its own, sent
//! from the replica's connection shard, that lands on a connection shard
//! of the coordinator's node and carries the coordinator's shard, to which
//! it hops (`register_mutation_done`).
//!
//! Clients land the same way: the Java driver 3.x that cassandra-stress used
//! in 2018 routes by token (to a replica node) but knows nothing of shards,
//! and Scylla places CQL connections by the same connection distribution.
//! So the coordinating shard is a connection's shard, and its own copy of
//! the key is a hop away on the owner.
//!
//! hardware.md 6.3 prices the hop (`CpuWork::CrossShardMessage`) at 1-2 us
//! \[E\].
//!
//! With N shards per node and the connections spread evenly, a message
//! lands on its key's owner with probability 1/N. When only S of a node's
//! shards are simulated (`simulated_shards_per_node`), it lands on the
//! owner with that same probability and otherwise on one of the other S - 1
//! simulated shards, uniformly: each simulated shard stands for N/S real
//! ones, and the owner keeps the real share of messages that need no hop.

use crate::placement::ShardAddress;

/// How messages from another node (or a client) find their shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landing {
    /// On the owning shard itself: one shard per node (Cassandra), or a
    /// shard-aware sender.
    Owner,
    /// On the shard of the connection they come by (Scylla 2.x-3.0): the
    /// owner with probability 1/`shards_per_node`, else another shard.
    ConnectionShard {
        /// Shards per node on the real machine.
        shards_per_node: u32,
        /// Shards per node simulated (shards `0..simulated`; all of them
        /// unless the run samples).
        simulated: u32,
    },
}

impl Landing {
    /// Whether a message may land off its owner (a draw decides): false
    /// for [`Landing::Owner`] and with one shard simulated per node. Callers
    /// draw only then, so runs that cannot land elsewhere draw nothing.
    pub fn spreads(self) -> bool {
        matches!(self, Landing::ConnectionShard { simulated, .. } if simulated > 1)
    }

    /// The shard a message for `owner` lands on, given a uniform 64-bit
    /// `draw`.
    pub fn shard(self, owner: ShardAddress, draw: u64) -> ShardAddress {
        match self {
            Landing::Owner => owner,
            Landing::ConnectionShard {
                shards_per_node,
                simulated,
            } => {
                debug_assert!(owner.shard < simulated && simulated <= shards_per_node);
                if simulated <= 1 || draw.is_multiple_of(u64::from(shards_per_node)) {
                    return owner;
                }
                let others = u64::from(simulated - 1);
                let other = ((draw / u64::from(shards_per_node)) % others) as u32;
                let landed = ShardAddress {
                    node: owner.node,
                    shard: if other >= owner.shard {
                        other + 1
                    } else {
                        other
                    },
                };
                debug_assert!(
                    landed.shard < simulated && landed.shard != owner.shard,
                    "a message lands on another simulated shard of the owner's node"
                );
                landed
            }
        }
    }
}

/// The bit that marks a relayed request's id: the connection shard relays
/// it to the owner under an id of its own, and the answer coming back with
/// the bit set is the relay's, not its coordinator's (coordinator ids leave
/// it clear).
pub const RELAYED: u64 = 1 << 63;

// A coordinator's ids (a 31-bit generation above a 32-bit slot) never have
// the relay bit set.
const _: () = assert!((0x7FFF_FFFF_u64 << 32) + 0xFFFF_FFFF < RELAYED);

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: ShardAddress = ShardAddress { node: 2, shard: 1 };

    #[test]
    fn owner_landing_is_the_owner() {
        for draw in [0, 1, 7, u64::MAX] {
            assert_eq!(Landing::Owner.shard(OWNER, draw), OWNER);
        }
    }

    #[test]
    fn connection_shards_hit_the_owner_one_time_in_n_and_spread_the_rest() {
        let landing = Landing::ConnectionShard {
            shards_per_node: 70,
            simulated: 4,
        };
        let mut counts = [0u32; 4];
        let draws = 700_000u64;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..draws {
            // xorshift64*: a uniform-enough stream for the counts.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let draw = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let landed = landing.shard(OWNER, draw);
            assert_eq!(landed.node, OWNER.node, "a message stays on its node");
            counts[landed.shard as usize] += 1;
        }
        let owner = f64::from(counts[1]) / draws as f64;
        assert!((owner - 1.0 / 70.0).abs() < 0.001, "owner share {owner}");
        for shard in [0, 2, 3] {
            let share = f64::from(counts[shard]) / draws as f64;
            assert!(
                (share - 69.0 / 70.0 / 3.0).abs() < 0.003,
                "shard {shard}: {share}"
            );
        }
    }

    #[test]
    fn one_simulated_shard_is_always_the_owner() {
        let landing = Landing::ConnectionShard {
            shards_per_node: 70,
            simulated: 1,
        };
        let owner = ShardAddress { node: 0, shard: 0 };
        for draw in [1, 2, 69, 71, u64::MAX] {
            assert_eq!(landing.shard(owner, draw), owner);
        }
    }
}
