//! Consistency levels: how many replicas of a partition must answer a
//! request (cassandra-stress's `cl=`, CQL's consistency). A property of
//! the request (`crate::action`), which the coordinator
//! (`crate::coordinator`) counts answers against.

/// How many replicas must answer (`cl=` of cassandra-stress).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsistencyLevel {
    /// One replica.
    One,
    /// Two replicas.
    Two,
    /// Three replicas.
    Three,
    /// A majority of the replicas.
    Quorum,
    /// A majority of the local datacenter's replicas (one DC here).
    LocalQuorum,
    /// Every replica.
    All,
}

impl ConsistencyLevel {
    /// Replicas to wait for at replication factor `rf`.
    pub fn block_for(self, rf: u32) -> u32 {
        debug_assert!(rf >= 1, "a keyspace keeps at least one replica");
        let count = match self {
            ConsistencyLevel::One => 1,
            ConsistencyLevel::Two => 2,
            ConsistencyLevel::Three => 3,
            ConsistencyLevel::Quorum | ConsistencyLevel::LocalQuorum => rf / 2 + 1,
            ConsistencyLevel::All => rf,
        };
        debug_assert!(count >= 1, "every level waits for a replica");
        debug_assert!(
            matches!(
                self,
                ConsistencyLevel::One | ConsistencyLevel::Two | ConsistencyLevel::Three
            ) || count <= rf,
            "a majority or all of rf is at most rf"
        );
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_for_by_level() {
        assert_eq!(ConsistencyLevel::Quorum.block_for(3), 2);
        assert_eq!(ConsistencyLevel::Quorum.block_for(5), 3);
        assert_eq!(ConsistencyLevel::One.block_for(3), 1);
        assert_eq!(ConsistencyLevel::All.block_for(3), 3);
        assert_eq!(ConsistencyLevel::LocalQuorum.block_for(2), 2);
    }
}
