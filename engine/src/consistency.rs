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
        match self {
            ConsistencyLevel::One => 1,
            ConsistencyLevel::Two => 2,
            ConsistencyLevel::Three => 3,
            ConsistencyLevel::Quorum | ConsistencyLevel::LocalQuorum => rf / 2 + 1,
            ConsistencyLevel::All => rf,
        }
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
