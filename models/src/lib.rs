//! What lies below the engine: devices, networks, CPUs, instances, costs and
//! workloads. Every model is a plain state machine driven by the simulator:
//! time is passed in, randomness is an injected generator, nothing here reads
//! a clock, a file or the environment.
//!
//! Each module's `//!` doc says what it models, what it leaves out, and where
//! its numbers come from.

#![warn(missing_docs)]

pub mod cassandra_stress;
pub mod cost;
pub mod distribution;
pub mod g1_policy;
pub mod instance;
pub mod io_scheduler;
pub mod jvm;
pub mod network;
pub mod nvme;
pub mod reactor;
pub mod sep;
pub mod wakeup;
