//! Compaction: what to merge, when, and how far behind it is.
//!
//! The decision logic only; no I/O, no clock. One mechanism per module:
//! - [`stcs`]: the size-tiered strategy of Scylla 2.x/3.0: bucketing,
//!   selection, the pending-compaction estimate and the one-job-per-weight
//!   concurrency rule (scylla-mechanisms.md section 2.1);
//! - [`lcs`]: the leveled strategy: levels, job picking, its backlog
//!   tracker and the settled layout (sections 1.4 and 2.2);
//! - [`twcs`]: the time-window strategy: windows by newest write,
//!   size-tiered inside the newest, each closed window compacted whole
//!   once, expired SSTables dropped, its per-window backlog;
//! - [`strategy`]: the table's strategy ([`CompactionStrategy`]) and its
//!   backlog tracker ([`TableBacklog`]);
//! - [`backlog`]: the STCS backlog tracker of 2.2/3.0, the compaction
//!   controller's input (section 1.4);
//! - [`job`]: one running compaction's read/merge/write pipeline and its
//!   output SSTables;
//! - [`throttle`]: Cassandra's `compaction_throughput_mb_per_sec` token
//!   bucket.
//!
//! The controller that turns the backlog into shares is
//! [`crate::controller`].

pub mod backlog;
pub mod job;
pub mod lcs;
pub mod manager;
pub mod stcs;
pub mod strategy;
pub mod throttle;
pub mod twcs;

pub use backlog::{stcs_backlog_bytes, StcsBacklogTracker};
pub use lcs::{LcsBacklogTracker, LcsOptions, LcsState};
pub use manager::CompactionManager;
pub use stcs::{StcsOptions, TrimmedJob};
pub use strategy::{CompactionStrategy, TableBacklog};
pub use throttle::RateLimiter;
pub use twcs::{TwcsBacklogTracker, TwcsOptions};
