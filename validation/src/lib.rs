//! Validation: the published bare-metal runs the twin must reproduce, as
//! data; the cases that reproduce them; and the scorecard comparing the
//! simulated figures to the published ones (`twin validate`).
//!
//! Every figure here is copied from `reference/published-runs.md` in the
//! project's shared folder, which names the report each comes from. The
//! 200K ops/s row of R5 is deliberately absent: it is kept aside as a blind
//! check of the twin.
//!
//! [`plan`] finds the cheapest cluster meeting a latency SLA (`twin
//! plan`), [`sweep`] measures a scenario over a grid of `--set` values (`twin
//! sweep`), and [`regress`] compares a scenario's figures over seeds with
//! a stored baseline (`twin regress`), the way [`cases`] measures the
//! validation runs.

#![warn(missing_docs)]

pub mod bench_events;
pub mod cases;
pub mod charts;
pub mod plan;
pub mod plan_score;
pub mod published;
pub mod real;
pub mod real_faults;
pub mod real_gc;
pub mod real_runs;
pub mod real_score;
pub mod real_speed;
pub mod real_work;
pub mod regress;
pub mod scorecard;
pub mod shard;
pub mod sweep;
