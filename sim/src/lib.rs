//! The deterministic simulator: kernel, seeded streams, the cluster harness,
//! scenarios, metrics and reports.

pub mod kernel;
pub mod rng;
