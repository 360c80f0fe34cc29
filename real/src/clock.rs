//! Real time, in one place. The workspace bans the wall clock from every
//! crate that runs a simulation (`clippy.toml`); `twin real` measures a real
//! server, so its latencies, pacing and the GC log's window come from the
//! machine's clocks, through these two functions only.

use std::time::{Instant, SystemTime};

/// The monotonic clock: pacing and latencies.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}

/// The wall clock: to match the server's logs, which carry wall times.
#[allow(clippy::disallowed_methods)]
pub fn wall() -> SystemTime {
    SystemTime::now()
}
