//! `twin plan`: which cluster (software, instance type, node count) meets a
//! latency SLA for a workload at each target throughput, and what it costs.
//!
//! The plan works in two steps, per *chain* (one base scenario, one preset,
//! one instance type, every node count of the range):
//!
//! 1. **Capacity bounds, no simulation.** Each node count is checked first
//!    for whether the data fits at all (storage with the headroom the
//!    compaction strategy needs; what the simulator refuses, such as a JVM
//!    heap larger than the machine, comes back as its own error), then
//!    against floors of the work each node must do at the target rate:
//!    CPU (the calibrated cost table, every read priced as a cache hit
//!    unless even an ideal cache must miss, no compaction, no flush),
//!    random reads from disk (the fraction of reads an ideal cache of the
//!    whole memory still misses, from the key distribution's popularity
//!    curve), commitlog bandwidth, NIC bandwidth, and memory (the bloom
//!    filters and index summaries of the node's share of the table, which
//!    both databases keep in memory). Each floor is a lower
//!    bound on what the simulated node does, so a node count it prunes
//!    (a floor at or above 100% of the resource) could not meet the SLA in
//!    simulation either; a test checks this by simulating everything.
//! 2. **Simulation near the boundary.** From the smallest node count the
//!    bounds allow, a galloping search (+1, +2, +4, ... then bisection)
//!    finds the smallest node count whose simulated run meets every SLA
//!    term and reaches the target throughput, assuming that adding nodes
//!    does not make a cluster worse. Each target rate is searched on its
//!    own; runs are shared between searches.
//!
//! With `--one-node-down`, a candidate meets the SLA only if it also meets
//! it with one node crashed at the start of the run (the failure model's
//! crash, convicted by the failure detector before the measured window).
//!
//! Costs are the instance catalog's prices (`models::instance`), a year of
//! on-demand hours and a year of the 1-year reservation's effective hourly
//! price; PCDF is R5's N x (MTTR/MTBF)^2 x 365.
//!
//! Every figure a row reports at a target is simulated, measured as `twin
//! validate` measures its cases ([`crate::cases::measure`]) after the
//! warm-up. Chains are independent, so `--shard i/n` splits a plan by
//! chain and the merged rows are the same bytes as one machine's.

use std::fmt;
use std::path::Path;

use engine::compaction::CompactionStrategy;
use serde::{Deserialize, Serialize};
use sim::cluster::RunPlan;
use sim::load::{KeyPlan, OpMix, RatePlan};
use sim::overrides::{Assignment, SetError};
use sim::plan::{resolve, RunOverrides};
use sim::scenario::{parse, with_sets, FaultSection, Scenario, ScenarioError};
use units::{SimDuration, SimTime};

use crate::cases::measure;

/// Hours in a year of instance time.
const HOURS_PER_YEAR: f64 = 8760.0;
/// A run reaches its target if it achieves this fraction of it.
pub const TARGET_REACHED: f64 = 0.95;
/// Size-tiered compaction needs as much free space as the largest tier it
/// merges: half the disk (ScyllaDB's sizing guidance for STCS).
const STCS_HEADROOM: f64 = 2.0;
/// Leveled compaction needs about a tenth of the data free.
const LCS_HEADROOM: f64 = 1.1;

/// One SLA term, e.g. `read.p99<10ms`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlaTerm {
    /// `read` or `write`.
    pub op: String,
    /// `p50`, `p95`, `p99` or `p99.9`.
    pub percentile: String,
    /// The limit, milliseconds.
    pub limit_ms: f64,
}

impl fmt::Display for SlaTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}<{}ms", self.op, self.percentile, self.limit_ms)
    }
}

/// A plan's argument or scenario refused: the argument, or the scenario's
/// file and the load at fault, and why.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanError {
    /// A command-line argument that is not one.
    Argument {
        /// The option, with the text given where there was one
        /// (`--sla read.p98<10ms`).
        argument: String,
        /// What is wrong.
        reason: String,
    },
    /// The plan's options contradict each other or the scenario.
    Options(String),
    /// A scenario refused as it resolves.
    Scenario(ScenarioError),
    /// A scenario a plan cannot pace or measure.
    Load {
        /// The scenario's file.
        file: String,
        /// The load at fault (`load[0] (`w`)`), when one is named before
        /// the reason.
        field: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// A rate's assignment refused.
    Set(SetError),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Argument { argument, reason } => write!(f, "{argument}: {reason}"),
            PlanError::Options(reason) => write!(f, "{reason}"),
            PlanError::Scenario(error) => write!(f, "{error}"),
            PlanError::Load {
                file,
                field,
                reason,
            } => {
                write!(f, "{file}: ")?;
                if let Some(field) = field {
                    write!(f, "{field}: ")?;
                }
                write!(f, "{reason}")
            }
            PlanError::Set(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for PlanError {}

/// Parses `--sla "read.p99<10ms,write.p99<10ms"` (limits in `us`, `ms` or
/// `s`).
pub fn parse_sla(text: &str) -> Result<Vec<SlaTerm>, PlanError> {
    let mut terms = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = |why: &str| PlanError::Argument {
            argument: format!("--sla {part}"),
            reason: format!("{why}; expected e.g. read.p99<10ms"),
        };
        let (figure, limit) = part.split_once('<').ok_or_else(|| bad("no `<`"))?;
        let (op, percentile) = figure
            .trim()
            .split_once('.')
            .ok_or_else(|| bad("expected OP.PERCENTILE before `<`"))?;
        if !["read", "write"].contains(&op) {
            return Err(bad(&format!("`{op}` is not an op (read, write)")));
        }
        if !["p50", "p95", "p99", "p99.9"].contains(&percentile) {
            return Err(bad(&format!(
                "`{percentile}` is not a percentile (p50, p95, p99, p99.9)"
            )));
        }
        let limit = limit.trim();
        let (number, scale) = if let Some(n) = limit.strip_suffix("ms") {
            (n, 1.0)
        } else if let Some(n) = limit.strip_suffix("us") {
            (n, 1e-3)
        } else if let Some(n) = limit.strip_suffix('s') {
            (n, 1e3)
        } else {
            return Err(bad("the limit needs a unit (us, ms, s)"));
        };
        let value: f64 = number
            .trim()
            .parse()
            .map_err(|_| bad(&format!("`{number}` is not a number")))?;
        if !(value.is_finite() && value > 0.0) {
            return Err(bad("the limit must be positive"));
        }
        terms.push(SlaTerm {
            op: op.into(),
            percentile: percentile.into(),
            limit_ms: value * scale,
        });
    }
    if terms.is_empty() {
        return Err(PlanError::Argument {
            argument: "--sla".into(),
            reason: "no term given; expected e.g. read.p99<10ms,write.p99<10ms".into(),
        });
    }
    Ok(terms)
}

/// Parses a target rate: `300000`, `300K`, `1.2M` (operations per second).
pub fn parse_rate(text: &str) -> Result<f64, PlanError> {
    let t = text.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    let (number, scale) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 => Ok(value * scale),
        _ => Err(PlanError::Argument {
            argument: format!("--rate {text}"),
            reason: "not a rate; expected operations per second such as 300000 or 300K".into(),
        }),
    }
}

/// What a plan evaluates.
#[derive(Clone, Debug)]
pub struct PlanSpec {
    /// Base scenarios (the workload and data; `--set` already applied).
    pub scenarios: Vec<Scenario>,
    /// Presets to plan for; empty: each scenario's own.
    pub presets: Vec<String>,
    /// Candidate instance types.
    pub instances: Vec<String>,
    /// Node counts, inclusive.
    pub nodes: (u32, u32),
    /// Target rates, operations per second, highest first.
    pub targets: Vec<f64>,
    /// The SLA.
    pub sla: Vec<SlaTerm>,
    /// Run seed.
    pub seed: u64,
    /// Simulated time per run (`None`: the scenario's).
    pub duration: Option<SimDuration>,
    /// Left out of the figures at the start of each run.
    pub warmup: SimDuration,
    /// Also require the SLA with one node down.
    pub one_node_down: bool,
    /// Mean time between failures of a node, days (PCDF).
    pub mtbf_days: f64,
    /// Mean time to repair a node, days (PCDF).
    pub mttr_days: f64,
}

/// One chain: a base scenario, a preset and an instance type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// Index of the base scenario in [`PlanSpec::scenarios`].
    pub scenario: usize,
    /// The preset.
    pub preset: String,
    /// The instance type.
    pub instance: String,
}

impl PlanSpec {
    /// Every chain, in the order the plan reports them: scenario, then
    /// preset, then instance.
    pub fn chains(&self) -> Vec<Chain> {
        let mut chains = Vec::new();
        for (index, scenario) in self.scenarios.iter().enumerate() {
            let presets = if self.presets.is_empty() {
                vec![scenario.cluster.preset.clone()]
            } else {
                self.presets.clone()
            };
            for preset in presets {
                for instance in &self.instances {
                    chains.push(Chain {
                        scenario: index,
                        preset: preset.clone(),
                        instance: instance.clone(),
                    });
                }
            }
        }
        chains
    }

    /// The assignments that pace every load of `scenario` to `target`
    /// operations per second in all: each load's per-process `limit=`,
    /// `throttle=` or `fixed=` rate scaled by the same factor.
    pub fn rate_sets(scenario: &Scenario, target: f64) -> Result<Vec<Assignment>, PlanError> {
        let plan = resolve(scenario, &RunOverrides::default()).map_err(PlanError::Scenario)?;
        let file = || scenario.source.file.clone();
        if plan.loads.is_empty() {
            return Err(PlanError::Load {
                file: file(),
                field: None,
                reason: "the scenario has no [[load]]; a plan needs a workload".into(),
            });
        }
        let mut total = 0.0;
        for (index, load) in plan.loads.iter().enumerate() {
            let rate = match load.rate {
                RatePlan::ClosedLoop {
                    limit_ops_per_s: Some(rate),
                    ..
                }
                | RatePlan::Throttled { ops_per_s: rate, .. }
                | RatePlan::Fixed { ops_per_s: rate, .. } => rate,
                RatePlan::ClosedLoop { .. } => {
                    return Err(PlanError::Load {
                        file: file(),
                        field: Some(format!("load[{index}] (`{}`)", load.name)),
                        reason: "its c-s command has no -rate limit=, throttle= or fixed=; twin plan paces each target through it".into(),
                    })
                }
            };
            total += rate * f64::from(load.processes);
        }
        let factor = target / total;
        let mut sets = Vec::new();
        for (index, load) in plan.loads.iter().enumerate() {
            let command = rescale_rate(&load.command, factor).ok_or_else(|| PlanError::Load {
                file: file(),
                field: Some(format!("load[{index}] (`{}`)", load.name)),
                reason: format!("cannot find the rate in `{}`", load.command),
            })?;
            sets.push(
                Assignment::new(&format!("load[{index}].command"), &command)
                    .map_err(PlanError::Set)?,
            );
        }
        Ok(sets)
    }
}

/// `command` with its `limit=R/s`, `throttle=R/s` or `fixed=R/s` rate
/// multiplied by `factor` (rounded to whole operations per second); the
/// rest of the text, quotes included, is kept as written.
fn rescale_rate(command: &str, factor: f64) -> Option<String> {
    for key in ["limit=", "throttle=", "fixed="] {
        let mut from = 0;
        while let Some(found) = command[from..].find(key) {
            let at = from + found;
            let starts_word = command[..at]
                .chars()
                .last()
                .is_none_or(|c| c.is_whitespace() || c == '\'' || c == '"');
            let digits = at + key.len();
            let end = command[digits..]
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .map_or(command.len(), |offset| digits + offset);
            if starts_word {
                if let Ok(rate) = command[digits..end].parse::<f64>() {
                    let scaled = (rate * factor).round().max(1.0) as u64;
                    return Some(format!("{}{scaled}{}", &command[..digits], &command[end..]));
                }
            }
            from = digits;
        }
    }
    None
}

/// The floors of a node's work at a target rate, each as a fraction of
/// the resource (1.0: all of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Floors {
    /// CPU.
    pub cpu: f64,
    /// Random reads from the data device.
    pub read_iops: f64,
    /// Commitlog write bandwidth.
    pub commitlog: f64,
    /// NIC receive bandwidth.
    pub nic: f64,
    /// Memory: the bloom filters and index summaries of the node's share
    /// of the preloaded table, which both Scylla and Cassandra keep in
    /// memory (0 without a preloaded table).
    #[serde(default)]
    pub memory: f64,
}

impl Floors {
    /// The first resource at or over 100%, with its floor.
    pub fn exceeded(&self) -> Option<(&'static str, f64)> {
        [
            ("CPU", self.cpu),
            ("disk read IOPS", self.read_iops),
            ("commitlog bandwidth", self.commitlog),
            ("NIC bandwidth", self.nic),
            ("memory", self.memory),
        ]
        .into_iter()
        .find(|(_, value)| *value >= 1.0)
    }
}

/// The floors of each node's work for a resolved run (see the module
/// docs): lower bounds of what the simulation makes each node do.
pub fn floors(plan: &RunPlan) -> Floors {
    let cluster = &plan.cluster;
    let n = f64::from(cluster.nodes);
    let rf = cluster.replication_factor;
    let costs = &cluster.costs;
    let ns = |d: SimDuration| d.as_nanos() as f64 * 1e-9;
    let row_bytes = cluster.preload.as_ref().map_or_else(
        || {
            plan.loads
                .first()
                .map_or(0.0, |load| load.columns.mean_value_bytes())
        },
        |preload| preload.row_bytes as f64,
    );
    let instance = models::instance::by_name(&cluster.instance);
    let cores = if cluster.preset.is_cassandra() {
        f64::from(instance.map_or(cluster.shards_per_node, |i| i.vcpus))
    } else {
        f64::from(cluster.shards_per_node)
    };
    let (mut cpu_s, mut read_ios, mut commitlog_bytes, mut nic_bytes) = (0.0, 0.0, 0.0, 0.0);
    for load in &plan.loads {
        let rate = match load.rate {
            RatePlan::ClosedLoop {
                limit_ops_per_s: Some(rate),
                ..
            }
            | RatePlan::Throttled {
                ops_per_s: rate, ..
            }
            | RatePlan::Fixed {
                ops_per_s: rate, ..
            } => rate,
            RatePlan::ClosedLoop { .. } => 0.0,
        } * f64::from(load.processes);
        let write_fraction = match &load.operation {
            OpMix::Only(kind) => {
                if kind.name() == "write" {
                    1.0
                } else {
                    0.0
                }
            }
            OpMix::Mixed { write_fraction, .. } => *write_fraction,
        };
        let per_node = rate / n;
        let block_for = f64::from(load.consistency.block_for(rf));
        let rf = f64::from(rf);
        let miss = miss_floor(plan, load, row_bytes);
        let receive = ns(costs.message_receive(0));
        // With one replica a request that lands on its owner runs there
        // without coordination; with more, every request is coordinated.
        let coordinate = if rf > 1.0 {
            costs.coordinate_ns as f64 * 1e-9
        } else {
            0.0
        };
        let write_cpu = ns(costs.write_request(row_bytes as u64)) * rf
            + 2.0 * (rf - 1.0) * receive
            + coordinate;
        let read_cpu = coordinate
            + block_for * ns(costs.read_request(0))
            + 2.0 * (block_for - 1.0) * receive
            + block_for * miss * ns(costs.data_parse(row_bytes as u64, 0));
        cpu_s += per_node * (write_fraction * write_cpu + (1.0 - write_fraction) * read_cpu);
        read_ios += per_node * (1.0 - write_fraction) * block_for * miss;
        commitlog_bytes += per_node * write_fraction * rf * row_bytes;
        nic_bytes += per_node * write_fraction * rf * row_bytes;
    }
    // What a node must hold in memory for the table on its disk: each
    // SSTable's bloom filter and index summary (engine::sstable).
    let memory = cluster.preload.as_ref().map_or(0.0, |preload| {
        let format = if cluster.preset.is_cassandra() {
            engine::sstable::SSTableFormat::CASSANDRA_STRESS
        } else {
            engine::sstable::SSTableFormat::SCYLLA_CASSANDRA_STRESS
        };
        let rows = (preload.partitions as f64 * rf as f64 / n).round() as u64;
        let held = format.filter_bytes(rows) + format.summary_bytes(rows, rows * preload.row_bytes);
        held as f64 / cluster.memory_per_node_bytes.max(1) as f64
    });
    Floors {
        cpu: cpu_s / cores,
        read_iops: read_ios / cluster.device.read_iops,
        commitlog: commitlog_bytes / cluster.device.write_bytes_per_s,
        nic: nic_bytes / (cluster.nic_gbps * 1e9 / 8.0),
        memory,
    }
}

/// The fraction of a load's replica reads that even an ideal cache of the
/// node's whole memory must miss: each node caches the hottest of the keys
/// it holds (a uniform sample of all keys), one row of `row_bytes` per key.
/// Without a preloaded table (every key written by the run) it is 0.
fn miss_floor(plan: &RunPlan, load: &sim::load::LoadPlan, row_bytes: f64) -> f64 {
    let Some(preload) = &plan.cluster.preload else {
        return 0.0;
    };
    let keys = (preload.last_key - preload.first_key + 1) as f64;
    let rf = f64::from(plan.cluster.replication_factor);
    let cached_keys = plan.cluster.memory_per_node_bytes as f64 / row_bytes.max(1.0);
    let fraction = (cached_keys * f64::from(plan.cluster.nodes) / (rf * keys)).min(1.0);
    let curve = match &load.keys {
        KeyPlan::Distribution(distribution) => distribution.hot_mass_curve(),
        KeyPlan::Sequential { .. } => vec![(0.0, 0.0), (1.0, 1.0)],
    };
    match engine::cache::row_cache::HotMass::new(curve) {
        Ok(hot) => (1.0 - hot.mass(fraction)).max(0.0),
        Err(_) => 0.0,
    }
}

/// What one simulated run at one target measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetRun {
    /// The target rate, ops/s.
    pub target_ops_per_s: f64,
    /// One node crashed at the start.
    pub one_node_down: bool,
    /// Achieved rate over the window, in the target's units: operations
    /// a second, partitions for a profile's batches (c-s's rate counts
    /// partitions).
    pub achieved_ops_per_s: f64,
    /// Read p99, ms (`None`: no reads).
    pub read_p99_ms: Option<f64>,
    /// Write p99, ms (`None`: no writes).
    pub write_p99_ms: Option<f64>,
    /// Mean server load, percent (with one node down, of the nodes left
    /// running).
    pub server_load_pct: Option<f64>,
    /// Operations that failed every try.
    pub errors: u64,
    /// Every SLA term held, the target was reached, and nothing failed.
    pub meets_sla: bool,
    /// What missed, if anything: the SLA terms over their limits, a
    /// target not reached, errors.
    pub missed: Vec<String>,
}

/// One row of the plan: a simulated candidate, or a range of node counts
/// ruled out without simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanRow {
    /// The base scenario's name.
    pub scenario: String,
    /// Preset.
    pub preset: String,
    /// Instance type.
    pub instance: String,
    /// Node count (the first of the range for a ruled-out range).
    pub nodes: u32,
    /// The last node count of a ruled-out range (= `nodes` otherwise).
    pub nodes_to: u32,
    /// `simulated`, `pruned` (a capacity floor at or over 100%) or
    /// `does not fit` (storage, or what the simulator refuses).
    pub status: String,
    /// Why a range was ruled out.
    pub reason: Option<String>,
    /// The runs at each target, highest first (a target whose search never
    /// came to this node count has none).
    pub runs: Vec<TargetRun>,
    /// The targets (ops/s) this node count meets the SLA at.
    pub meets_at: Vec<f64>,
    /// The targets this is the cheapest node count of its chain for.
    pub smallest_for: Vec<f64>,
    /// Data on each node's disk as a percentage of its storage.
    pub disk_fill_pct: Option<f64>,
    /// The floors at the highest target.
    pub floors: Option<Floors>,
    /// A year on demand, US dollars.
    pub on_demand_usd_per_year: Option<f64>,
    /// A year of the 1-year reservation, US dollars.
    pub reserved_1y_usd_per_year: Option<f64>,
    /// Probability of a concurrent double failure in a year, percent.
    pub pcdf_pct: f64,
}

/// R5's PCDF: N x (MTTR/MTBF)^2 x 365, as a probability.
pub fn pcdf(nodes: u32, mtbf_days: f64, mttr_days: f64) -> f64 {
    f64::from(nodes) * (mttr_days / mtbf_days).powi(2) * 365.0
}

/// What happens to a chain's node count before any simulation.
enum Screen {
    /// The bounds allow it: simulate.
    Candidate(Box<Floors>),
    /// A floor rules it out: the resource and its floor.
    Pruned(&'static str, f64),
    /// It cannot hold the data, or the simulator refuses it.
    DoesNotFit(String),
}

/// One node count's screen: the count, its verdict, how full its disks are,
/// and the capacity floors at each target (`None` where it does not fit).
type NodeScreen = (u32, Screen, Option<f64>, Vec<Option<Floors>>);

/// Runs one chain: screens every node count, then searches each target's
/// smallest SLA-meeting node count by simulation. `on_run` is called with
/// +1 when a run starts being counted and again when it ends (for a
/// progress bar).
pub fn run_chain(
    spec: &PlanSpec,
    chain: &Chain,
    on_run: &(dyn Fn(RunEvent) + Sync),
) -> Result<Vec<PlanRow>, PlanError> {
    let base = &spec.scenarios[chain.scenario];
    let rates: Vec<Vec<Assignment>> = spec
        .targets
        .iter()
        .map(|&target| PlanSpec::rate_sets(base, target))
        .collect::<Result<_, _>>()?;
    let (lo, hi) = spec.nodes;
    // Per node count: whether the data fits (and how full the disks are),
    // and the floors at each target.
    let mut screens: Vec<NodeScreen> = Vec::new();
    for nodes in lo..=hi {
        let mut at_targets = Vec::new();
        let mut screened = None;
        for target_rates in &rates {
            let mut sets = candidate_sets(chain, nodes);
            sets.extend(target_rates.iter().cloned());
            match with_sets(base, &sets)
                .and_then(|scenario| resolve(&scenario, &RunOverrides::default()))
            {
                Err(error) => {
                    screened = Some((Screen::DoesNotFit(error.reason.clone()), None));
                    break;
                }
                Ok(plan) => {
                    if screened.is_none() {
                        screened = Some(fit(&plan));
                    }
                    at_targets.push(Some(floors(&plan)));
                }
            }
        }
        let (mut screen, fill) = screened.expect("at least one target");
        if let (Screen::Candidate(_), Some(Some(top))) = (&screen, at_targets.first()) {
            if let Some((resource, floor)) = top.exceeded() {
                screen = Screen::Pruned(resource, floor);
            } else {
                screen = Screen::Candidate(Box::new(top.clone()));
            }
        }
        if !matches!(screen, Screen::DoesNotFit(_)) {
            at_targets.resize(rates.len(), None);
        } else {
            at_targets = vec![None; rates.len()];
        }
        screens.push((nodes, screen, fill, at_targets));
    }
    // Runs, memoised by (node count, target index, one node down).
    let mut runs: Vec<(u32, usize, bool, TargetRun)> = Vec::new();
    let mut smallest: Vec<(usize, u32)> = Vec::new();
    for (target_index, &target) in spec.targets.iter().enumerate() {
        let rates = &rates[target_index];
        // The node counts this target's floors allow.
        let candidates: Vec<u32> = screens
            .iter()
            .filter(|(_, screen, _, at)| {
                !matches!(screen, Screen::DoesNotFit(_))
                    && at[target_index]
                        .as_ref()
                        .is_some_and(|floors| floors.exceeded().is_none())
            })
            .map(|(nodes, _, _, _)| *nodes)
            .collect();
        let meets = |nodes: u32, runs: &mut Vec<(u32, usize, bool, TargetRun)>| {
            let downs: &[bool] = if spec.one_node_down {
                &[false, true]
            } else {
                &[false]
            };
            for &down in downs {
                let known = runs
                    .iter()
                    .find(|(n, t, d, _)| *n == nodes && *t == target_index && *d == down)
                    .map(|(_, _, _, run)| run.meets_sla);
                let met = match known {
                    Some(met) => met,
                    None => {
                        on_run(RunEvent::Started);
                        let run = simulate(spec, base, chain, nodes, rates, target, down);
                        on_run(RunEvent::Finished);
                        let run = run?;
                        let met = run.meets_sla;
                        runs.push((nodes, target_index, down, run));
                        met
                    }
                };
                if !met {
                    return Ok::<bool, PlanError>(false);
                }
            }
            Ok(true)
        };
        if let Some(found) = search(&candidates, |nodes| meets(nodes, &mut runs))? {
            smallest.push((target_index, found));
        }
    }
    // Rows: ruled-out ranges merged, simulated node counts one each.
    let mut rows: Vec<PlanRow> = Vec::new();
    let instance = models::instance::by_name(&chain.instance);
    // The pruned range the last row holds: its resource and floors.
    let mut pruned_range: Option<(&'static str, f64, f64)> = None;
    for (nodes, screen, fill, _) in screens {
        let cost = |price: Option<models::instance::Price>| {
            price.map(|p| round2(p.usd_per_hour * HOURS_PER_YEAR * f64::from(nodes)))
        };
        let simulated = runs.iter().any(|(n, _, _, _)| *n == nodes);
        let (status, reason, floors) = match screen {
            Screen::DoesNotFit(reason) => {
                pruned_range = None;
                ("does not fit", Some(reason), None)
            }
            _ if simulated => ("simulated", None, None),
            Screen::Candidate(floors) => ("simulated", None, Some(*floors)),
            Screen::Pruned(resource, floor) => {
                let pct = |v: f64| format!("{:.0}", v * 100.0);
                match (pruned_range, rows.last_mut()) {
                    (Some((known, high, low)), Some(last))
                        if known == resource && last.nodes_to + 1 == nodes =>
                    {
                        // Floors fall as nodes are added.
                        let low = low.min(floor);
                        last.nodes_to = nodes;
                        last.reason = Some(format!(
                            "{resource} floor {}-{}% of the node's",
                            pct(low),
                            pct(high)
                        ));
                        pruned_range = Some((resource, high, low));
                        continue;
                    }
                    _ => {
                        pruned_range = Some((resource, floor, floor));
                        (
                            "pruned",
                            Some(format!("{resource} floor {}% of the node's", pct(floor))),
                            None,
                        )
                    }
                }
            }
        };
        if status != "pruned" {
            pruned_range = None;
        }
        let mut node_runs: Vec<&(u32, usize, bool, TargetRun)> =
            runs.iter().filter(|(n, _, _, _)| *n == nodes).collect();
        if status == "simulated" && node_runs.is_empty() {
            // A candidate no search needed: above every target's answer.
            continue;
        }
        node_runs.sort_by_key(|(_, target, down, _)| (*target, *down));
        if status == "does not fit" {
            if let Some(last) = rows.last_mut() {
                if last.status == status && last.reason == reason && last.nodes_to + 1 == nodes {
                    last.nodes_to = nodes;
                    continue;
                }
            }
        }
        let meets_at: Vec<f64> = spec
            .targets
            .iter()
            .enumerate()
            .filter(|(index, _)| {
                let at: Vec<&&(u32, usize, bool, TargetRun)> =
                    node_runs.iter().filter(|(_, t, _, _)| t == index).collect();
                !at.is_empty()
                    && at.len() == if spec.one_node_down { 2 } else { 1 }
                    && at.iter().all(|(_, _, _, run)| run.meets_sla)
            })
            .map(|(_, target)| *target)
            .collect();
        rows.push(PlanRow {
            scenario: base.name.clone(),
            preset: chain.preset.clone(),
            instance: chain.instance.clone(),
            nodes,
            nodes_to: nodes,
            status: status.into(),
            reason,
            runs: node_runs.iter().map(|(_, _, _, run)| run.clone()).collect(),
            meets_at,
            smallest_for: smallest
                .iter()
                .filter(|(_, n)| *n == nodes)
                .map(|(target, _)| spec.targets[*target])
                .collect(),
            disk_fill_pct: fill.map(|f| round2(f * 100.0)),
            floors: floors.map(|f| Floors {
                cpu: round4(f.cpu),
                read_iops: round4(f.read_iops),
                commitlog: round4(f.commitlog),
                nic: round4(f.nic),
                memory: round4(f.memory),
            }),
            on_demand_usd_per_year: cost(instance.and_then(|i| i.on_demand)),
            reserved_1y_usd_per_year: cost(instance.and_then(|i| i.reserved_1y)),
            pcdf_pct: round4(pcdf(nodes, spec.mtbf_days, spec.mttr_days) * 100.0),
        });
    }
    Ok(rows)
}

/// A progress event of [`run_chain`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEvent {
    /// A simulation starts.
    Started,
    /// A simulation ended.
    Finished,
}

/// The smallest of `candidates` (ascending) for which `meets` holds,
/// assuming it holds for every larger one once it holds: a galloping
/// search from the smallest (+1, +2, +4, ... places) then bisection.
pub fn search<E>(
    candidates: &[u32],
    mut meets: impl FnMut(u32) -> Result<bool, E>,
) -> Result<Option<u32>, E> {
    if candidates.is_empty() {
        return Ok(None);
    }
    if meets(candidates[0])? {
        return Ok(Some(candidates[0]));
    }
    let (mut failed, mut step) = (0usize, 1usize);
    let met = loop {
        if failed + 1 >= candidates.len() {
            return Ok(None);
        }
        let next = (failed + step).min(candidates.len() - 1);
        if meets(candidates[next])? {
            break next;
        }
        failed = next;
        step *= 2;
    };
    let (mut low, mut high) = (failed, met);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if meets(candidates[mid])? {
            high = mid;
        } else {
            low = mid;
        }
    }
    Ok(Some(candidates[high]))
}

/// Whether a resolved cluster holds its data with the headroom its
/// compaction strategy needs (a candidate, for now) or not.
fn fit(plan: &RunPlan) -> (Screen, Option<f64>) {
    let fill = disk_fill(plan);
    let (headroom, strategy) = match plan.cluster.compaction {
        CompactionStrategy::SizeTiered(_) => (STCS_HEADROOM, "size-tiered"),
        CompactionStrategy::Leveled(_) => (LCS_HEADROOM, "leveled"),
        // One window at a time is merged, a small part of a table of many
        // windows: leveled's tenth stands for it [E].
        CompactionStrategy::TimeWindow(_) => (LCS_HEADROOM, "time-window"),
    };
    match fill {
        Some(fill) if fill * headroom > 1.0 => (
            Screen::DoesNotFit(format!(
                "storage: the data fills {:.0}% of each node's disk; {strategy} compaction needs it under {:.0}%",
                fill * 100.0,
                100.0 / headroom
            )),
            Some(fill),
        ),
        _ => (Screen::Candidate(Box::new(floors(plan))), fill),
    }
}

/// The sets that make `chain`'s cluster of `nodes` nodes.
fn candidate_sets(chain: &Chain, nodes: u32) -> Vec<Assignment> {
    [
        ("cluster.preset", chain.preset.clone()),
        ("cluster.instance", chain.instance.clone()),
        ("cluster.nodes", nodes.to_string()),
    ]
    .iter()
    .map(|(key, value)| Assignment::new(key, value).expect("plain keys and values"))
    .collect()
}

/// The data on each node's disk as a fraction of its storage (`None`: no
/// preloaded table, or an instance without local drives).
fn disk_fill(plan: &RunPlan) -> Option<f64> {
    let preload = plan.cluster.preload.as_ref()?;
    let storage = models::instance::by_name(&plan.cluster.instance)?.storage_bytes();
    if storage == 0 {
        return None;
    }
    let bytes = preload.partitions as f64
        * preload.row_bytes as f64
        * f64::from(plan.cluster.replication_factor)
        / f64::from(plan.cluster.nodes);
    Some(bytes / storage as f64)
}

/// Simulates `chain` with `nodes` nodes at `target` (its rate `sets`),
/// optionally with the last node crashed at the start.
fn simulate(
    spec: &PlanSpec,
    base: &Scenario,
    chain: &Chain,
    nodes: u32,
    rates: &[Assignment],
    target: f64,
    one_node_down: bool,
) -> Result<TargetRun, PlanError> {
    let mut sets = candidate_sets(chain, nodes);
    sets.extend(rates.iter().cloned());
    let mut scenario = with_sets(base, &sets).map_err(PlanError::Scenario)?;
    if one_node_down {
        scenario = with_crash(&scenario, nodes - 1)?;
    }
    let mut plan = resolve(
        &scenario,
        &RunOverrides {
            seed: Some(spec.seed),
            duration: spec.duration,
        },
    )
    .map_err(PlanError::Scenario)?;
    let mut from = SimTime::ZERO + spec.warmup;
    if one_node_down {
        let settle = settle_time(&plan);
        plan.duration = plan.duration.map(|duration| duration + settle);
        from += settle;
    }
    let outcome = sim::cluster::run(plan, &mut |_| {})
        .map_err(|error| PlanError::Scenario(scenario.run_error(&error)))?;
    let figures = measure(&outcome, from);
    let figure = |name: &str| {
        figures
            .iter()
            .find(|(figure, _)| figure == name)
            .map(|(_, value)| *value)
    };
    // The target is c-s's rate, which counts partitions (a batch's each).
    let achieved = figure("achieved partition rate").unwrap_or(0.0);
    let errors: u64 = outcome.ops.iter().map(|ops| ops.errors).sum();
    let mut missed = Vec::new();
    for term in &spec.sla {
        if let Some(value) = figure(&format!("{} latency {}", term.op, term.percentile)) {
            if value > term.limit_ms {
                missed.push(format!("{} {:.2} ms", term, value));
            }
        }
    }
    if achieved < TARGET_REACHED * target {
        missed.push(format!("throughput {:.0} of {:.0} ops/s", achieved, target));
    }
    if errors > 0 {
        missed.push(format!("{errors} errors"));
    }
    Ok(TargetRun {
        target_ops_per_s: target,
        one_node_down,
        achieved_ops_per_s: round2(achieved),
        read_p99_ms: figure("read latency p99").map(round4),
        write_p99_ms: figure("write latency p99").map(round4),
        // The crashed node is idle through the whole window: the load a
        // user sizes by is the survivors' mean.
        server_load_pct: figure("server load")
            .map(|load| {
                if one_node_down {
                    load * f64::from(nodes) / f64::from(nodes - 1)
                } else {
                    load
                }
            })
            .map(round2),
        errors,
        meets_sla: missed.is_empty(),
        missed,
    })
}

/// How much longer a one-node-down run lasts, and how much more of its
/// start is left out: the crashed node answers nothing, so until the
/// failure detector convicts it (phi-accrual: phi grows by log10(e) per
/// gossip interval of silence, so about 18 s at the default threshold 8)
/// and the driver hears so, requests sent to it wait out the client's
/// timeout. The window measured is the cluster running without it.
pub fn settle_time(plan: &RunPlan) -> SimDuration {
    let conviction = engine::gossip::GOSSIP_INTERVAL.as_secs_f64()
        * plan.cluster.phi_convict_threshold
        / std::f64::consts::LOG10_E;
    let timeout = plan
        .loads
        .iter()
        .map(|load| load.client_timeout)
        .max()
        .unwrap_or(SimDuration::ZERO);
    // One more gossip round for the news to reach the driver; whole
    // reporting intervals, so the window starts on one.
    let settle = SimDuration::from_secs_f64(conviction) + timeout + engine::gossip::GOSSIP_INTERVAL;
    let interval = plan.interval.as_nanos().max(1);
    SimDuration::from_nanos(settle.as_nanos().div_ceil(interval) * interval)
}

/// Checks that every load of `scenario` runs to the end of a plan's runs
/// (a c-s `duration=` shorter than the run would stop it early and the
/// window would measure an idle cluster).
pub fn check_loads_cover_runs(spec: &PlanSpec, scenario: &Scenario) -> Result<(), PlanError> {
    let plan = resolve(
        scenario,
        &RunOverrides {
            seed: None,
            duration: spec.duration,
        },
    )
    .map_err(PlanError::Scenario)?;
    let file = || scenario.source.file.clone();
    let Some(mut length) = plan.duration else {
        return Err(PlanError::Load {
            file: file(),
            field: None,
            reason: "the scenario has no `duration`; give the plan's runs one with --duration"
                .into(),
        });
    };
    if spec.one_node_down {
        length = length + settle_time(&plan);
    }
    if spec.warmup >= length {
        return Err(PlanError::Options(format!(
            "--warmup {} leaves nothing of the {} s runs to measure",
            spec.warmup.as_secs_f64(),
            length.as_secs_f64()
        )));
    }
    for (index, load) in plan.loads.iter().enumerate() {
        let start = match load.start {
            sim::load::StartPlan::At(at) => at,
            sim::load::StartPlan::After(_) => {
                return Err(PlanError::Load {
                    file: file(),
                    field: None,
                    reason: format!(
                        "load[{index}] (`{}`) starts after another load; twin plan paces loads that run together",
                        load.name
                    ),
                })
            }
        };
        if matches!(load.stop, sim::load::StopPlan::Uncertainty { .. }) {
            return Err(PlanError::Load {
                file: file(),
                field: Some(format!("load[{index}] (`{}`)", load.name)),
                reason: "it has neither n= nor duration=, so c-s runs it until its rate is certain (err<), not for the plan's runs; give it a duration= (--set 'load[{index}].command=...')".replace("{index}", &index.to_string()),
            });
        }
        if let sim::load::StopPlan::Duration(lasts) = load.stop {
            if start + lasts < length {
                return Err(PlanError::Load {
                    file: file(),
                    field: Some(format!("load[{index}] (`{}`)", load.name)),
                    reason: format!(
                    "its c-s duration= ends at {} s, before the plan's runs end at {} s{}; lengthen it (--set 'load[{index}].command=...')",
                    (start + lasts).as_secs_f64(),
                    length.as_secs_f64(),
                    if spec.one_node_down {
                        " (--one-node-down adds the time to convict the node)"
                    } else {
                        ""
                    }
                    ),
                });
            }
        }
    }
    Ok(())
}

/// `scenario` with `node` crashed from the start of the run to its end.
/// The last node, not node 0: the clients' driver holds its control
/// connection to node 0 and does not fail it over (`sim::cluster`).
fn with_crash(scenario: &Scenario, node: u32) -> Result<Scenario, PlanError> {
    let text = format!(
        "{}\n\n# twin plan --one-node-down\n[[fault]]\nat = \"0s\"\nkind = \"crash\"\nnodes = [{node}]\n",
        scenario.source.text
    );
    let crashed = parse(&scenario.source.file, &text).map_err(PlanError::Scenario)?;
    let crashed = with_sets(&crashed, &scenario.source.sets).map_err(PlanError::Scenario)?;
    debug_assert!(crashed
        .faults
        .iter()
        .any(|fault: &FaultSection| fault.kind == "crash"));
    Ok(crashed)
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

fn round4(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

/// The rows of every chain ranked: candidates by the highest target they
/// meet the SLA at, then by yearly cost (reserved, else on demand); then
/// the rest in chain order.
pub fn rank(rows: Vec<PlanRow>, targets: &[f64]) -> Vec<PlanRow> {
    let cost = |row: &PlanRow| {
        row.reserved_1y_usd_per_year
            .or(row.on_demand_usd_per_year)
            .unwrap_or(f64::INFINITY)
    };
    // The highest target a row meets (`None`: none).
    let level = |row: &PlanRow| {
        targets
            .iter()
            .position(|target| row.meets_at.contains(target))
    };
    let mut indexed: Vec<(usize, PlanRow)> = rows.into_iter().enumerate().collect();
    indexed.sort_by(|(ia, a), (ib, b)| {
        let (la, lb) = (level(a), level(b));
        (la.is_none(), la)
            .cmp(&(lb.is_none(), lb))
            .then_with(|| {
                if la.is_some() {
                    cost(a).total_cmp(&cost(b))
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| ia.cmp(ib))
    });
    indexed.into_iter().map(|(_, row)| row).collect()
}

/// The cheapest row meeting the SLA at `target` among `rows` of `preset`.
pub fn cheapest<'a>(rows: &'a [PlanRow], preset: &str, target: f64) -> Option<&'a PlanRow> {
    rows.iter()
        .filter(|row| row.preset == preset && row.meets_at.contains(&target))
        .min_by(|a, b| {
            let cost = |row: &PlanRow| {
                row.reserved_1y_usd_per_year
                    .or(row.on_demand_usd_per_year)
                    .unwrap_or(f64::INFINITY)
            };
            cost(a).total_cmp(&cost(b)).then(a.nodes.cmp(&b.nodes))
        })
}

/// `plan.json`: the inputs, the ranked rows and the answer per target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanReport {
    /// The base scenarios' names.
    pub scenarios: Vec<String>,
    /// `--set` assignments applied to them.
    pub sets: Vec<String>,
    /// Presets planned (empty: each scenario's).
    pub presets: Vec<String>,
    /// Instance types.
    pub instances: Vec<String>,
    /// Node counts tried, inclusive.
    pub nodes: (u32, u32),
    /// Targets, ops/s, highest first.
    pub targets: Vec<f64>,
    /// The SLA, as given.
    pub sla: Vec<SlaTerm>,
    /// Run seed.
    pub seed: u64,
    /// Simulated seconds per run.
    pub duration_s: Option<f64>,
    /// Seconds left out at the start of each run.
    pub warmup_s: f64,
    /// The SLA was also required with one node down.
    pub one_node_down: bool,
    /// MTBF, days.
    pub mtbf_days: f64,
    /// MTTR, days.
    pub mttr_days: f64,
    /// Every row, ranked.
    pub rows: Vec<PlanRow>,
    /// Per target and preset: the cheapest cluster meeting the SLA.
    pub answers: Vec<Answer>,
}

/// The plan's answer for one preset at one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// Target, ops/s.
    pub target_ops_per_s: f64,
    /// Preset.
    pub preset: String,
    /// The cheapest instance type meeting the SLA (`None`: none did).
    pub instance: Option<String>,
    /// Its node count.
    pub nodes: Option<u32>,
    /// A year of the 1-year reservation, US dollars.
    pub reserved_1y_usd_per_year: Option<f64>,
    /// A year on demand, US dollars.
    pub on_demand_usd_per_year: Option<f64>,
    /// PCDF, percent.
    pub pcdf_pct: Option<f64>,
}

impl PlanReport {
    /// The inputs of a plan for `spec`, without rows yet.
    pub fn header(spec: &PlanSpec, sets: Vec<String>) -> PlanReport {
        PlanReport {
            scenarios: spec.scenarios.iter().map(|s| s.name.clone()).collect(),
            sets,
            presets: spec.presets.clone(),
            instances: spec.instances.clone(),
            nodes: spec.nodes,
            targets: spec.targets.clone(),
            sla: spec.sla.clone(),
            seed: spec.seed,
            duration_s: spec.duration.map(|d| d.as_secs_f64()),
            warmup_s: spec.warmup.as_secs_f64(),
            one_node_down: spec.one_node_down,
            mtbf_days: spec.mtbf_days,
            mttr_days: spec.mttr_days,
            rows: Vec::new(),
            answers: Vec::new(),
        }
    }

    /// The report with every chain's `rows` (in chain order): ranked, and
    /// the answer per target and preset.
    pub fn with_rows(mut self, rows: Vec<PlanRow>) -> PlanReport {
        let mut presets: Vec<String> = Vec::new();
        for row in &rows {
            if !presets.contains(&row.preset) {
                presets.push(row.preset.clone());
            }
        }
        let rows = rank(rows, &self.targets);
        let mut answers = Vec::new();
        for &target in &self.targets {
            for preset in &presets {
                let best = cheapest(&rows, preset, target);
                answers.push(Answer {
                    target_ops_per_s: target,
                    preset: preset.clone(),
                    instance: best.map(|row| row.instance.clone()),
                    nodes: best.map(|row| row.nodes),
                    reserved_1y_usd_per_year: best.and_then(|row| row.reserved_1y_usd_per_year),
                    on_demand_usd_per_year: best.and_then(|row| row.on_demand_usd_per_year),
                    pcdf_pct: best.map(|row| row.pcdf_pct),
                });
            }
        }
        self.rows = rows;
        self.answers = answers;
        self
    }

    /// `plan.csv`: one line per row and target run.
    pub fn to_csv(&self) -> String {
        let mut csv = String::from(
            "scenario,preset,instance,nodes,nodes_to,status,reason,target_ops_per_s,one_node_down,achieved_ops_per_s,read_p99_ms,write_p99_ms,server_load_pct,meets_sla,missed,disk_fill_pct,cpu_floor,read_iops_floor,on_demand_usd_per_year,reserved_1y_usd_per_year,pcdf_pct\n",
        );
        let quote = |text: &str| {
            if text.contains([',', '"', '\n']) {
                format!("\"{}\"", text.replace('"', "\"\""))
            } else {
                text.to_string()
            }
        };
        let opt = |value: Option<f64>| value.map_or(String::new(), |v| v.to_string());
        for row in &self.rows {
            let head = format!(
                "{},{},{},{},{},{},{}",
                quote(&row.scenario),
                quote(&row.preset),
                quote(&row.instance),
                row.nodes,
                row.nodes_to,
                row.status,
                quote(row.reason.as_deref().unwrap_or(""))
            );
            let tail = format!(
                "{},{},{},{},{},{}",
                opt(row.disk_fill_pct),
                opt(row.floors.as_ref().map(|f| f.cpu)),
                opt(row.floors.as_ref().map(|f| f.read_iops)),
                opt(row.on_demand_usd_per_year),
                opt(row.reserved_1y_usd_per_year),
                row.pcdf_pct
            );
            if row.runs.is_empty() {
                csv.push_str(&format!("{head},,,,,,,,,{tail}\n"));
            }
            for run in &row.runs {
                csv.push_str(&format!(
                    "{head},{},{},{},{},{},{},{},{},{tail}\n",
                    run.target_ops_per_s,
                    run.one_node_down,
                    run.achieved_ops_per_s,
                    opt(run.read_p99_ms),
                    opt(run.write_p99_ms),
                    opt(run.server_load_pct),
                    run.meets_sla,
                    quote(&run.missed.join("; "))
                ));
            }
        }
        csv
    }

    /// Writes `plan.json`, `plan.csv` and `plan-cost.png` (yearly cost
    /// against nodes, one series per preset and instance type for the
    /// simulated candidates, those meeting the SLA at the highest target
    /// apart) into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join("plan.json"), json + "\n")?;
        std::fs::write(dir.join("plan.csv"), self.to_csv())?;
        let top = self.targets.first().copied().unwrap_or(0.0);
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        let mut rows: Vec<&PlanRow> = self
            .rows
            .iter()
            .filter(|row| row.status == "simulated")
            .collect();
        rows.sort_by(|a, b| {
            (&a.preset, &a.instance, a.nodes).cmp(&(&b.preset, &b.instance, b.nodes))
        });
        for row in rows {
            let Some(cost) = row.reserved_1y_usd_per_year.or(row.on_demand_usd_per_year) else {
                continue;
            };
            let verdict = if row.meets_at.contains(&top) {
                "meets"
            } else {
                "misses"
            };
            let name = format!("{} {} {verdict}", row.preset, row.instance);
            let point = (f64::from(row.nodes), cost / 1000.0);
            match series.iter_mut().find(|(known, _)| *known == name) {
                Some((_, points)) => points.push(point),
                None => series.push((name, vec![point])),
            }
        }
        if !series.is_empty() {
            sim::charts::write_xy_chart(
                dir,
                "plan-cost",
                format!("yearly cost against nodes (SLA at {})", format_rate(top)),
                "nodes",
                "thousand USD per year",
                series,
            )?;
        }
        Ok(())
    }
}

/// `300000` as `300K`.
pub fn format_rate(rate: f64) -> String {
    if rate >= 1e6 && (rate / 1e6).fract() == 0.0 {
        format!("{}M", rate / 1e6)
    } else if rate >= 1e3 && (rate / 1e3).fract() == 0.0 {
        format!("{}K", rate / 1e3)
    } else {
        format!("{rate}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sla_terms_parse_with_units_and_mistakes_say_what_is_expected() {
        let terms = parse_sla("read.p99<10ms, write.p99.9<500us,read.p95<1s").unwrap();
        assert_eq!(terms.len(), 3);
        assert_eq!(terms[0].limit_ms, 10.0);
        assert_eq!(terms[1].percentile, "p99.9");
        assert_eq!(terms[1].limit_ms, 0.5);
        assert_eq!(terms[2].limit_ms, 1000.0);
        assert!(parse_sla("read.p98<10ms")
            .unwrap_err()
            .to_string()
            .contains("p50, p95, p99, p99.9"));
        assert!(parse_sla("scan.p99<10ms")
            .unwrap_err()
            .to_string()
            .contains("not an op"));
        assert!(parse_sla("read.p99<10")
            .unwrap_err()
            .to_string()
            .contains("unit"));
        assert!(parse_sla("read.p99>10ms")
            .unwrap_err()
            .to_string()
            .contains("no `<`"));
        assert!(parse_sla("").is_err());
    }

    #[test]
    fn rates_parse_and_commands_rescale() {
        assert_eq!(parse_rate("300K").unwrap(), 300_000.0);
        assert_eq!(parse_rate("1.5M").unwrap(), 1_500_000.0);
        assert_eq!(parse_rate("80000").unwrap(), 80_000.0);
        assert!(parse_rate("fast").is_err());
        assert_eq!(
            rescale_rate(
                "cassandra-stress write -rate threads=200 limit=21428/s",
                0.5
            )
            .unwrap(),
            "cassandra-stress write -rate threads=200 limit=10714/s"
        );
        assert_eq!(
            rescale_rate("c-s read -rate fixed=1000/s", 3.0).unwrap(),
            "c-s read -rate fixed=3000/s"
        );
        assert!(rescale_rate("c-s read -rate threads=10", 2.0).is_none());
        assert_eq!(
            rescale_rate("c-s write -rate 'threads=100 limit=30000/s' -col n=1", 0.1).unwrap(),
            "c-s write -rate 'threads=100 limit=3000/s' -col n=1"
        );
        assert_eq!(format_rate(300_000.0), "300K");
        assert_eq!(format_rate(1_000_000.0), "1M");
    }

    /// QUORUM writes of 1 KB rows on i3.large (2 shards): at 40K writes/s
    /// the CPU floor rules out 3 and 4 nodes and 5 run at about 86%.
    const SMALL: &str = r#"
name = "plan-small"
seed = 1
duration = "12s"
interval = "1s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[[load]]
name = "write"
processes = 1
command = "cassandra-stress write no-warmup cl=QUORUM duration=60s -rate 'threads=200 limit=10000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop seq=1..100000000 -schema 'replication(factor=3)'"
"#;

    /// QUORUM reads at RF 3 of a table the row cache holds, on i3.large:
    /// CPU-bound, so one node down leaves each survivor more to do.
    const READS: &str = r#"
name = "plan-reads"
seed = 1
duration = "10s"
interval = "1s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[data]
partitions = 1e6
row_bytes = "1100B"
state = "compacted"
cache = "warm"

[[load]]
name = "read"
processes = 1
command = "cassandra-stress read no-warmup cl=QUORUM duration=90s -rate 'threads=200 limit=10000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop 'dist=uniform(1..1000000)' -schema 'replication(factor=3)'"
"#;

    fn spec_of(
        text: &str,
        target: f64,
        sla: &str,
        nodes: (u32, u32),
        one_node_down: bool,
    ) -> PlanSpec {
        PlanSpec {
            scenarios: vec![parse("plan-test.toml", text).unwrap()],
            presets: Vec::new(),
            instances: vec!["i3.large".into()],
            nodes,
            targets: vec![target],
            sla: parse_sla(sla).unwrap(),
            seed: 1,
            duration: None,
            warmup: SimDuration::from_secs(4),
            one_node_down,
            mtbf_days: 730.0,
            mttr_days: 1.0,
        }
    }

    #[test]
    fn a_load_run_until_its_rate_is_certain_is_refused_naming_it() {
        let text = SMALL.replace("duration=60s ", "");
        assert_ne!(text, SMALL);
        let spec = spec_of(&text, 10_000.0, "write.p99<10ms", (3, 4), false);
        let error = check_loads_cover_runs(&spec, &spec.scenarios[0]).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("load[0] (`write`)") && message.contains("err<"),
            "{message}"
        );
    }

    /// The node count a chain's rows name the smallest for `target`.
    fn answer(rows: &[PlanRow], target: f64) -> Option<u32> {
        rows.iter()
            .find(|row| row.smallest_for.contains(&target))
            .map(|row| row.nodes)
    }

    #[test]
    fn pruning_never_rules_out_a_count_that_simulation_says_meets_the_sla() {
        let spec = spec_of(SMALL, 40_000.0, "write.p99<10ms", (3, 8), false);
        let chain = &spec.chains()[0];
        let rows = run_chain(&spec, chain, &|_| {}).unwrap();
        let pruned: Vec<u32> = rows
            .iter()
            .filter(|row| row.status == "pruned")
            .flat_map(|row| row.nodes..=row.nodes_to)
            .collect();
        assert!(
            !pruned.is_empty(),
            "the case must prune something: {rows:?}"
        );
        let base = &spec.scenarios[0];
        let rates = PlanSpec::rate_sets(base, 40_000.0).unwrap();
        // Simulate every count, pruned or not.
        let mut meeting = Vec::new();
        for nodes in 3..=8 {
            let run = simulate(&spec, base, chain, nodes, &rates, 40_000.0, false).unwrap();
            if run.meets_sla {
                meeting.push(nodes);
            }
            assert!(
                !(run.meets_sla && pruned.contains(&nodes)),
                "{nodes} nodes were pruned but meet the SLA in simulation: {run:?}"
            );
        }
        // The plan's answer is the smallest count that simulation says meets.
        assert_eq!(
            answer(&rows, 40_000.0),
            meeting.first().copied(),
            "rows {rows:?}, meeting {meeting:?}"
        );
    }

    #[test]
    fn one_node_down_fails_a_cluster_sized_without_headroom() {
        let target = 100_000.0;
        let spec = spec_of(READS, target, "read.p99<10ms", (3, 8), false);
        let chain = &spec.chains()[0];
        let rows = run_chain(&spec, chain, &|_| {}).unwrap();
        let smallest = answer(&rows, target).expect("some count meets the SLA with every node up");
        assert!(
            smallest > 3,
            "the case must need more than the fewest nodes: {rows:?}"
        );
        // The smallest count that meets it has no node to spare: with one
        // down, the others take its share of the reads.
        let base = &spec.scenarios[0];
        let rates = PlanSpec::rate_sets(base, target).unwrap();
        let down = simulate(&spec, base, chain, smallest, &rates, target, true).unwrap();
        assert!(!down.meets_sla, "{smallest} nodes, one down: {down:?}");
        // A plan that asks for one node down answers with more nodes.
        let spec = spec_of(READS, target, "read.p99<10ms", (3, 8), true);
        let rows = run_chain(&spec, chain, &|_| {}).unwrap();
        let with_down = answer(&rows, target).expect("some count meets it with one node down");
        assert!(with_down > smallest, "{with_down} vs {smallest}");
    }

    #[test]
    fn a_table_whose_filters_outgrow_the_memory_is_pruned_for_memory() {
        // 2e10 partitions of 20 B on 3 x i3en.large (16 GiB, 1.25 TB): the
        // data fills a third of each disk, but the bloom filters alone
        // (10 bits a partition, 25 GB) do not fit in memory.
        let text = READS
            .replace("instance = \"i3.large\"", "instance = \"i3en.large\"")
            .replace("partitions = 1e6", "partitions = 2e10")
            .replace("row_bytes = \"1100B\"", "row_bytes = \"20B\"")
            .replace("uniform(1..1000000)", "uniform(1..20000000000)");
        let plan = resolve(
            &parse("memory.toml", &text).unwrap(),
            &RunOverrides::default(),
        )
        .unwrap();
        let (screen, fill) = fit(&plan);
        assert!(
            matches!(screen, Screen::Candidate(_)),
            "the data fits the disks"
        );
        assert!(fill.unwrap() < 0.5, "{fill:?}");
        let big = floors(&plan);
        let filters = 2e10 * 10.0 / 8.0;
        let memory = plan.cluster.memory_per_node_bytes as f64;
        assert!(big.memory > filters / memory, "{big:?}");
        assert!(
            big.memory < filters / memory * 1.05,
            "summaries are small: {big:?}"
        );
        assert_eq!(big.exceeded().map(|(resource, _)| resource), Some("memory"));
        // A million 1,100-byte rows take a sliver of an i3.large's.
        let plan = resolve(
            &parse("reads.toml", READS).unwrap(),
            &RunOverrides::default(),
        )
        .unwrap();
        let small = floors(&plan).memory;
        assert!(small > 0.0 && small < 0.01, "{small}");
    }

    #[test]
    fn the_search_finds_the_smallest_meeting_count_with_few_tries() {
        let candidates: Vec<u32> = (3..=64).collect();
        for answer in [3u32, 4, 5, 17, 40, 64] {
            let mut tried = Vec::new();
            let found = search(&candidates, |n| {
                tried.push(n);
                Ok::<bool, String>(n >= answer)
            })
            .unwrap();
            assert_eq!(found, Some(answer));
            assert!(tried.len() <= 12, "{answer}: {tried:?}");
        }
        assert_eq!(
            search(&candidates, |_| Ok::<bool, String>(false)).unwrap(),
            None
        );
        assert_eq!(search(&[], |_| Ok::<bool, String>(true)).unwrap(), None);
        assert_eq!(
            search(&candidates, |_| Err::<bool, &str>("boom")),
            Err("boom")
        );
    }

    #[test]
    fn pcdf_is_r5s_formula() {
        assert!((pcdf(40, 730.0, 1.0) * 100.0 - 2.74).abs() < 0.01);
        assert!((pcdf(4, 730.0, 1.0) * 100.0 - 0.274).abs() < 0.001);
    }
}
