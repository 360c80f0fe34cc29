//! The deterministic simulator: kernel, seeded streams, the cluster harness,
//! scenarios, metrics and reports.
//!
//! - [`kernel`]: virtual time and the event queue;
//! - [`rng`]: per-component random streams derived from the run seed;
//! - [`scenario`]: strict parsing of scenario files; [`overrides`]: any
//!   scenario value set from the command line (`--set`);
//! - [`plan`]: resolving a scenario into a [`cluster::RunPlan`];
//! - [`load`]: what cassandra-stress processes do;
//! - [`faults`]: the fault timeline and what each fault does to the
//!   hardware; [`events`]: the run's log of faults and reactions;
//! - [`operations`]: the timeline of topology operations (add-node,
//!   decommission, removenode);
//! - [`cluster`]: engine shards on modelled hardware, driven by clients;
//! - [`check`]: the checkers a run's outcome is judged by (acknowledged
//!   writes read back, answers held by their level, replicas converged);
//!   [`explore`]: one scenario under many seeds, each run checked;
//! - [`metrics`], [`timeseries`], [`report`] and [`charts`]: histograms,
//!   the time series' column table, the results folder;
//! - [`sweep`]: many independent runs in parallel, results in input order;
//! - [`bench_hold`] and [`device_sweep`]: benchmarks of the kernel and of
//!   the device model on its own.

pub mod bench_hold;
pub mod bridge;
pub mod charts;
pub mod check;
pub mod cluster;
pub mod device_sweep;
pub mod events;
pub mod explore;
pub mod faults;
pub mod kernel;
pub mod load;
pub mod metrics;
pub mod operations;
pub mod overrides;
pub mod plan;
pub mod preset;
pub mod report;
pub mod results_dir;
pub mod rng;
pub mod scenario;
pub mod sweep;
pub mod timeseries;
pub mod trace;
