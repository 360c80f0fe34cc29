//! Planted bugs: deliberate, realistic mistakes in the engine's mechanisms,
//! each one line away from the correct code, so that a test can check that
//! `twin explore`'s checkers catch them (`sim/tests/planted_bugs.rs`).
//!
//! A [`Planted`] set rides in the configuration of the mechanism it breaks
//! (`ShardConfig::planted`, `TokenMetadata`'s). Only a build with the
//! `planted-bugs` feature can put a bug in it: the feature is enabled by
//! the test builds of the crates that test the explorer (their
//! dev-dependencies), never by a release build, where [`Planted::has`] is a
//! constant `false` and the bug's branch is compiled away. No scenario
//! field reaches it.

/// A planted bug, named for what it does wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlantedBug {
    /// Writes go to their first live replica alone, which acknowledges
    /// them.
    WritesToFirstReplicaOnly,
    /// A QUORUM (or stronger) write is acknowledged to the client after one
    /// replica, though it is sent to all.
    QuorumAckAfterOneReplica,
    /// Every fifth hint a node replays is dropped, yet counted delivered.
    HintDroppedEveryFifth,
    /// A replayed hint goes to the key's next replica instead of the one it
    /// was written for.
    HintToWrongNode,
    /// A crashed node's replay skips its last (newest) live commitlog
    /// segment.
    ReplaySkipsLastSegment,
    /// A crashed node's replay skips its oldest live commitlog segment when
    /// more than one is live.
    ReplaySkipsSegmentWhenSeveralLive,
    /// A flush marks the commitlog clean when it starts rather than once
    /// its SSTable is written: segments holding only the flushing
    /// memtable's rows are released while those rows are in memory alone.
    FlushReleasesCommitlogAtStart,
    /// A blocking read repair writes the newest version to the replica
    /// after each stale one (among those contacted) instead of the stale
    /// one.
    ReadRepairToWrongReplica,
    /// A streaming transfer's last range, where its ranges end, is never
    /// streamed.
    StreamDropsLastRange,
    /// A leaving node's first pending range is forgotten: writes to it do
    /// not reach its new owner, and it is not streamed.
    DecommissionForgetsPendingRange,
}

impl PlantedBug {
    /// Every planted bug.
    pub const ALL: [PlantedBug; 10] = [
        PlantedBug::WritesToFirstReplicaOnly,
        PlantedBug::QuorumAckAfterOneReplica,
        PlantedBug::HintDroppedEveryFifth,
        PlantedBug::HintToWrongNode,
        PlantedBug::ReplaySkipsLastSegment,
        PlantedBug::ReplaySkipsSegmentWhenSeveralLive,
        PlantedBug::FlushReleasesCommitlogAtStart,
        PlantedBug::ReadRepairToWrongReplica,
        PlantedBug::StreamDropsLastRange,
        PlantedBug::DecommissionForgetsPendingRange,
    ];
}

/// The planted bugs in force: none, unless a `planted-bugs` build asked for
/// one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Planted {
    #[cfg(feature = "planted-bugs")]
    bug: Option<PlantedBug>,
}

impl Planted {
    /// No planted bug: the engine as it is meant to be.
    pub const NONE: Planted = Planted {
        #[cfg(feature = "planted-bugs")]
        bug: None,
    };

    /// True if `bug` is planted. Always false without the `planted-bugs`
    /// feature.
    #[inline(always)]
    pub fn has(self, bug: PlantedBug) -> bool {
        #[cfg(feature = "planted-bugs")]
        {
            self.bug == Some(bug)
        }
        #[cfg(not(feature = "planted-bugs"))]
        {
            let _ = bug;
            false
        }
    }

    /// `bug`, planted (a `planted-bugs` build only).
    #[cfg(feature = "planted-bugs")]
    pub fn bug(bug: PlantedBug) -> Planted {
        Planted { bug: Some(bug) }
    }
}
