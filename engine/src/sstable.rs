//! SSTable descriptors: what a node knows about each SSTable on disk.
//!
//! In this model an SSTable carries sizes, row counts and its key range (the
//! "volume" fidelity of ARCHITECTURE.md); the storage-engine issue adds the
//! index, summary and bloom-filter components and the rows themselves in
//! data mode.

use units::SimTime;

/// One immutable SSTable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SSTable {
    /// Generation number, unique per node, increasing.
    pub generation: u64,
    /// Bytes in the Data component.
    pub data_bytes: u64,
    /// Rows (partitions, in the one-row-per-partition c-s schema).
    pub rows: u64,
    /// Smallest key written.
    pub first_key: u64,
    /// Largest key written.
    pub last_key: u64,
    /// When the SSTable was sealed.
    pub created_at: SimTime,
    /// Volume mode: the slice `[lo, hi)` of the key hash space (fixed point,
    /// out of `KEY_SHARE_ONE`) whose keys this SSTable holds, for data laid
    /// out so that each key is in exactly one SSTable (preloaded, compacted
    /// data). `None`: it holds a fraction of its range given by its density,
    /// independently of other SSTables (flushes of random writes).
    pub key_share: Option<(u64, u64)>,
}

/// The whole key hash space, in `SSTable::key_share` units (2^53).
pub const KEY_SHARE_ONE: u64 = 1 << 53;
