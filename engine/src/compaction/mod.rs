//! Compaction: what to merge, when, and how far behind it is.
//!
//! The decision logic only; no I/O, no clock. One mechanism per module:
//! - [`stcs`]: the size-tiered strategy of Scylla 2.x/3.0: bucketing,
//!   selection, the pending-compaction estimate and the one-job-per-weight
//!   concurrency rule (scylla-mechanisms.md section 2.1);
//! - [`backlog`]: the STCS backlog tracker of 2.2/3.0, the compaction
//!   controller's input (section 1.4);
//! - [`job`]: one running compaction's read/merge/write pipeline.
//!
//! The controller that turns the backlog into shares is
//! [`crate::controller`].

pub mod backlog;
pub mod job;
pub mod stcs;

pub use backlog::{stcs_backlog_bytes, StcsBacklogTracker};
pub use stcs::{StcsOptions, TrimmedJob};
