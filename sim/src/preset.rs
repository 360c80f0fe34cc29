//! The software presets: which database and version a cluster runs, as a
//! type rather than a name compared where it matters.
//!
//! A preset is a feature set, not a fork (ARCHITECTURE.md): every version
//! runs the same engine, and what differs is asked of the preset here, one
//! question per difference, each answered in one place with its source.
//! The scenario names a preset (`[cluster] preset = "scylla-2.2"`);
//! [`Preset::from_name`] resolves it and the plan carries the value.
//!
//! Of what the presets switch, this build models the runtime (a Seastar
//! reactor per shard: 2.1 with one FIFO queue, 2.2 on with scheduling
//! groups and shares; Cassandra's JVM with thread pools and G1), the I/O
//! scheduler, the backlog controllers (2.2 on), the digest hash (MD5 in 2.1
//! and Cassandra, xxHash64 after), the size-tiered pair fallback (2.2 on),
//! the leveled-compaction details of 2.2 / 2.3 / 3.0, the row cache's entry
//! size, the cost table and hinted handoff (3.0 and Cassandra); streaming
//! arrives with a later issue.

use std::fmt;

use engine::hints::HintsSetup;
use models::cost::CostTable;

/// A software preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Preset {
    /// Scylla 2.1: no CPU scheduler, static I/O shares, MD5 digests.
    Scylla2_1,
    /// Scylla 2.2: scheduling groups, backlog controllers, xxHash64.
    Scylla2_2,
    /// Scylla 2.3: 2.2 with the 2.3 controller and leveled details.
    Scylla2_3,
    /// Scylla 3.0: io_properties I/O scheduling.
    Scylla3_0,
    /// Cassandra 3.11 on the JVM with G1.
    Cassandra3_11,
}

impl Preset {
    /// Every preset, oldest Scylla first.
    pub const ALL: [Preset; 5] = [
        Preset::Scylla2_1,
        Preset::Scylla2_2,
        Preset::Scylla2_3,
        Preset::Scylla3_0,
        Preset::Cassandra3_11,
    ];

    /// The name a scenario gives it (and `summary.json` reports).
    pub fn name(self) -> &'static str {
        match self {
            Preset::Scylla2_1 => "scylla-2.1",
            Preset::Scylla2_2 => "scylla-2.2",
            Preset::Scylla2_3 => "scylla-2.3",
            Preset::Scylla3_0 => "scylla-3.0",
            Preset::Cassandra3_11 => "cassandra-3.11",
        }
    }

    /// The preset of a name, if there is one.
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|preset| preset.name() == name)
    }

    /// The accepted names, for error messages: `scylla-2.1, ..., cassandra-3.11`.
    pub fn names() -> String {
        Preset::ALL.map(Preset::name).join(", ")
    }

    /// Cassandra: the JVM runtime, thread pools, no shards.
    pub fn is_cassandra(self) -> bool {
        self == Preset::Cassandra3_11
    }

    /// How a node streams ranges to a peer (`engine::streaming`): an RPC
    /// per partition up to Scylla 2.3, a continuous stream from 3.0
    /// (Cassandra 3.11 streams SSTable sections over one connection).
    pub fn stream_mode(self) -> engine::streaming::StreamMode {
        match self {
            Preset::Scylla2_1 | Preset::Scylla2_2 | Preset::Scylla2_3 => {
                engine::streaming::StreamMode::Rpc
            }
            Preset::Scylla3_0 | Preset::Cassandra3_11 => engine::streaming::StreamMode::Stream,
        }
    }

    /// How many peers a range streamer streams with at once: 16 in 3.0,
    /// all of them before (and in Cassandra).
    pub fn stream_peers_at_once(self) -> usize {
        match self {
            Preset::Scylla3_0 => engine::streaming::PEERS_AT_ONCE_3_0,
            _ => usize::MAX,
        }
    }

    /// Scylla 2.3 or later (3.0): leveled compaction pushes idle levels up
    /// and the row cache's entries are smaller (`row_cache`).
    pub fn is_scylla_2_3_or_later(self) -> bool {
        matches!(self, Preset::Scylla2_3 | Preset::Scylla3_0)
    }

    /// Whether size-tiered compaction insists on `min_threshold` SSTables
    /// (`compaction_enforce_min_threshold`): Scylla 2.1 and Cassandra do;
    /// Scylla 2.2 added the fallback to pairs of one tier (its default
    /// `false`, `db/config.hh` @2.2).
    pub fn enforces_min_threshold(self) -> bool {
        matches!(self, Preset::Scylla2_1 | Preset::Cassandra3_11)
    }

    /// The default compression chunk (`chunk_length_in_kb`): 4 KiB on
    /// Scylla, 64 on Cassandra 3.11.
    pub fn default_chunk_kb(self) -> u64 {
        if self.is_cassandra() {
            64
        } else {
            4
        }
    }

    /// Hinted handoff as the preset keeps it in a cluster of `nodes`:
    /// Scylla 3.0's commitlog-based hints and Cassandra 3.11's hint files
    /// (`engine::hints`); Scylla before 3.0 keeps none (R4: 2.3 "has no
    /// hinted handoff", its replicas' differences are found by read
    /// repair only).
    pub fn hints(self, nodes: u32) -> Option<HintsSetup> {
        match self {
            Preset::Scylla2_1 | Preset::Scylla2_2 | Preset::Scylla2_3 => None,
            Preset::Scylla3_0 => Some(HintsSetup::SCYLLA_3_0),
            Preset::Cassandra3_11 => Some(HintsSetup::cassandra_3_11(nodes)),
        }
    }

    /// The cost table of its engine work (`models::cost`): Scylla 2.1
    /// digests with MD5, later Scylla versions with xxHash64; Cassandra's
    /// table is its own.
    pub fn costs(self) -> CostTable {
        match self {
            Preset::Scylla2_1 => CostTable::scylla_2_1(),
            Preset::Scylla2_2 | Preset::Scylla2_3 | Preset::Scylla3_0 => CostTable::scylla(),
            Preset::Cassandra3_11 => CostTable::cassandra_3_11(),
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_have_no_preset() {
        for preset in Preset::ALL {
            assert_eq!(Preset::from_name(preset.name()), Some(preset));
            assert_eq!(preset.to_string(), preset.name());
        }
        assert_eq!(Preset::from_name("scylla-2.4"), None);
        assert_eq!(Preset::from_name("Scylla-2.2"), None);
        assert_eq!(
            Preset::names(),
            "scylla-2.1, scylla-2.2, scylla-2.3, scylla-3.0, cassandra-3.11"
        );
    }

    #[test]
    fn digests_are_md5_only_in_2_1_and_cassandra() {
        let md5 = CostTable::scylla_2_1().digest(1024);
        let xx = CostTable::scylla().digest(1024);
        assert!(md5.as_nanos() > 5 * xx.as_nanos());
        assert_eq!(Preset::Scylla2_1.costs().digest(1024), md5);
        for preset in [Preset::Scylla2_2, Preset::Scylla2_3, Preset::Scylla3_0] {
            assert_eq!(preset.costs().digest(1024), xx, "{preset}");
        }
        assert_eq!(Preset::Cassandra3_11.costs().digest(1024), md5);
    }
}
