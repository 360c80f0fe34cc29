//! Injected faults: the scenario's `[[fault]]` timeline, resolved, and what
//! each fault does to the simulated hardware while it lasts.
//!
//! Every message between machines crosses two NICs (`models::network`):
//! the sender's and the receiver's. That pair is the one network filter all
//! traffic goes through, replica traffic and client traffic alike: a fault
//! on a node's network sets its NIC's faults ([`models::network::NicFaults`])
//! and a partition cuts the links between two sets of nodes, checked where
//! a message leaves its sender's NIC ([`network::NetworkFaults`]).
//!
//! The kinds, as a user writes them (`at` from the start of the run, `for`
//! how long; without `for` a fault lasts to the end):
//! - `partition`: `nodes` cannot reach `from` (by default every other
//!   node), either way; clients still reach both sides.
//! - `flap`: the nodes' whole network goes off for `off`, back on for `on`,
//!   and so on while the fault lasts, as an iptables script cutting and
//!   restoring a node's traffic would: nothing is sent or received while
//!   off.
//! - `drop`: each message to or from the nodes is lost with `probability`.
//! - `nic-degrade`: the nodes' NICs carry `bandwidth_factor` of their
//!   bandwidth.
//! - `crash`: the nodes lose power (or their processes are killed):
//!   everything in memory is gone and they leave the network at once;
//!   what reached their disks stays (`engine::Node::crash`). With `for`
//!   (at least 1 s) they restart when it ends; without, a later `restart`
//!   starts them. A restarted node replays its commitlog, flushes, joins
//!   gossip under a new generation and takes clients once gossip settles
//!   (`engine::Node::restart`).
//! - `restart`: starts nodes a `crash` without `for` left down.
//! - `slow-disk`: the nodes' devices serve slower while it lasts: fixed
//!   latency `latency_factor` times longer, `throughput_factor` of their
//!   IOPS and bandwidth (`models::nvme::Slowdown`); overlapping ones
//!   multiply.
//! - `disk-fail`: the nodes' devices fail for good: every I/O from then on
//!   returns an error, and at its first the node isolates itself, as
//!   Scylla does on a disk error (`storage_service::isolate_on_error`
//!   @3.0: it stops gossip, the CQL server and the messaging service), so
//!   peers convict it and clients fail over. A failed disk is not
//!   repaired within a run (replacing the node is a topology change).
//!
//! `nodes` and `from` name nodes by id: those the cluster starts with and
//! those an `[[action]]` add-node brings (`crate::operations`), so a
//! script can fault a node it adds.
//!
//! A message lost to a fault is lost: the NIC model leaves TCP's
//! retransmission out (`models::network`), so the layers above see what an
//! RPC sees when its connection stalls, a request that is not answered
//! before its timeout. Faults that overlap compose: a link is cut while any
//! partition or cut covers it, loss probabilities combine as independent
//! losses, bandwidth factors multiply.
//!
//! `[faults.random]` draws faults from the run's seed instead: on each
//! node a Poisson process of `per_node_hour`, each fault of a kind drawn
//! from `kinds` (flap, partition, drop, nic-degrade by default; crash and
//! slow-disk when named) and lasting an exponential time of mean `lasts`
//! (1 m); a drawn flap cuts for 10 s out of every 30, a drop loses 1% of
//! messages, a degraded NIC keeps half its bandwidth, a partition cuts the
//! node off from all others, a crash lasts at least 1 s, a slow disk has
//! 4 times the latency and a quarter of the throughput. The same seed draws
//! the same schedule; `events.jsonl` lists it as it happens. Crashes are
//! not drawn unless named: in periodic commitlog mode a crash loses the
//! writes still in the commitlog's buffer, which is the mode's promise,
//! and two crashes of a range's replicas close together can lose a write
//! acknowledged at QUORUM that way.

pub mod network;

use units::SimDuration;

use crate::scenario::{FaultSection, Scenario, ScenarioError};

/// One fault of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// When it starts, from the start of the run.
    pub at: SimDuration,
    /// How long it lasts (`None`: to the end of the run).
    pub lasts: Option<SimDuration>,
    /// What it does.
    pub kind: FaultKind,
    /// Drawn by `[faults.random]` rather than written as a `[[fault]]`.
    pub drawn: bool,
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// Nodes `side` cannot reach nodes `other`, either way.
    Partition {
        /// One side.
        side: Vec<u32>,
        /// The other side.
        other: Vec<u32>,
    },
    /// The nodes' network goes off for `off`, then on for `on`, repeatedly.
    Flap {
        /// The nodes.
        nodes: Vec<u32>,
        /// How long the network stays up between cuts.
        on: SimDuration,
        /// How long each cut lasts.
        off: SimDuration,
    },
    /// Each message to or from the nodes is lost with `probability`.
    Drop {
        /// The nodes.
        nodes: Vec<u32>,
        /// Loss probability per message, in (0, 1].
        probability: f64,
    },
    /// The nodes' NICs carry `factor` of their bandwidth.
    NicDegrade {
        /// The nodes.
        nodes: Vec<u32>,
        /// Fraction of the bandwidth left, in (0, 1].
        factor: f64,
    },
    /// The nodes crash; they restart when the fault ends, if it does.
    Crash {
        /// The nodes.
        nodes: Vec<u32>,
    },
    /// The nodes, down since a crash without end, start again.
    Restart {
        /// The nodes.
        nodes: Vec<u32>,
    },
    /// The nodes' devices serve slower.
    SlowDisk {
        /// The nodes.
        nodes: Vec<u32>,
        /// The device's slowdown.
        slowdown: models::nvme::Slowdown,
    },
    /// The nodes' devices fail for good.
    DiskFail {
        /// The nodes.
        nodes: Vec<u32>,
    },
}

/// The describe line's part for `faults`: each scripted one, then how
/// many were drawn and over which kinds (their schedule is in
/// `events.jsonl`).
pub fn describe(faults: &[Fault]) -> String {
    let mut text = String::new();
    let mut drawn = 0;
    for (index, fault) in faults.iter().enumerate() {
        if fault.drawn {
            drawn += 1;
        } else {
            text += &format!("; fault[{index}]: {}", fault.describe());
        }
    }
    if drawn > 0 {
        text += &format!("; {drawn} random faults drawn from the seed ([faults.random])");
    }
    text
}

impl Fault {
    /// One line: kind, nodes, when and for how long, and its settings.
    pub fn describe(&self) -> String {
        let nodes = |list: &[u32]| {
            list.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let what = match &self.kind {
            FaultKind::Partition { side, other } => {
                format!("partition nodes {} from {}", nodes(side), nodes(other))
            }
            FaultKind::Flap {
                nodes: list,
                on,
                off,
            } => {
                format!("flap nodes {} (off {off}, on {on})", nodes(list))
            }
            FaultKind::Drop {
                nodes: list,
                probability,
            } => format!("drop {probability} of messages at nodes {}", nodes(list)),
            FaultKind::NicDegrade {
                nodes: list,
                factor,
            } => {
                format!("nic-degrade nodes {} to {factor} of bandwidth", nodes(list))
            }
            FaultKind::Crash { nodes: list } => format!("crash nodes {}", nodes(list)),
            FaultKind::Restart { nodes: list } => format!("restart nodes {}", nodes(list)),
            FaultKind::SlowDisk {
                nodes: list,
                slowdown,
            } => format!(
                "slow-disk nodes {} (latency x{}, throughput x{})",
                nodes(list),
                slowdown.latency_factor,
                slowdown.throughput_factor
            ),
            FaultKind::DiskFail { nodes: list } => format!("disk-fail nodes {}", nodes(list)),
        };
        if matches!(self.kind, FaultKind::Restart { .. }) {
            return format!("{what} at {}", self.at);
        }
        match self.lasts {
            Some(lasts) => format!("{what} at {} for {lasts}", self.at),
            None => format!("{what} from {} to the end", self.at),
        }
    }
}

impl FaultKind {
    /// The name a scenario uses.
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Partition { .. } => "partition",
            FaultKind::Flap { .. } => "flap",
            FaultKind::Drop { .. } => "drop",
            FaultKind::NicDegrade { .. } => "nic-degrade",
            FaultKind::Crash { .. } => "crash",
            FaultKind::Restart { .. } => "restart",
            FaultKind::SlowDisk { .. } => "slow-disk",
            FaultKind::DiskFail { .. } => "disk-fail",
        }
    }

    /// The nodes the fault acts on (a partition: both sides).
    pub fn nodes(&self) -> Vec<u32> {
        match self {
            FaultKind::Partition { side, other } => side.iter().chain(other).copied().collect(),
            FaultKind::Flap { nodes, .. }
            | FaultKind::Drop { nodes, .. }
            | FaultKind::NicDegrade { nodes, .. }
            | FaultKind::Crash { nodes }
            | FaultKind::Restart { nodes }
            | FaultKind::SlowDisk { nodes, .. }
            | FaultKind::DiskFail { nodes } => nodes.clone(),
        }
    }
}

/// Every kind a scenario may name, simulated or not.
const KINDS: &str = "partition, flap, drop, nic-degrade, crash, restart, slow-disk, disk-fail";

/// The scenario's `[[fault]]` entries, checked against node ids
/// `0..total_nodes`, in the order written, then those `[faults.random]`
/// draws among the `nodes` the cluster starts with, from run seed `seed`
/// over a run of `duration`, in time order. `total_nodes` counts the nodes
/// `[[action]]` adds too (`crate::operations::added_nodes`), so that a
/// script can fault a node it adds; random faults keep to the nodes that
/// are there from the start.
pub fn resolve(
    scenario: &Scenario,
    nodes: u32,
    total_nodes: u32,
    seed: u64,
    duration: Option<SimDuration>,
) -> Result<Vec<Fault>, ScenarioError> {
    let mut faults = scenario
        .faults
        .iter()
        .enumerate()
        .map(|(index, section)| resolve_one(scenario, index, section, nodes, total_nodes))
        .collect::<Result<Vec<_>, _>>()?;
    check_restarts(scenario, &faults, total_nodes)?;
    if let Some(random) = &scenario.random_faults {
        faults.extend(draw(scenario, &random.random, nodes, seed, duration)?);
    }
    Ok(faults)
}

/// When the last of `faults` ends, from the start of the run (`None`: one
/// lasts to the end). A `restart` ends as it happens; a `crash` without
/// `for` ends at the `restart` that starts its last node.
pub fn latest_end(faults: &[Fault]) -> Option<SimDuration> {
    let mut latest = SimDuration::ZERO;
    for fault in faults {
        let end = match (&fault.kind, fault.lasts) {
            (_, Some(lasts)) => fault.at + lasts,
            (FaultKind::Restart { .. }, None) => fault.at,
            (FaultKind::Crash { nodes }, None) => {
                let mut end = fault.at;
                for node in nodes {
                    end = end.max(
                        faults
                            .iter()
                            .filter(|other| other.at > fault.at)
                            .filter(|other| {
                                matches!(&other.kind, FaultKind::Restart { nodes } if nodes.contains(node))
                            })
                            .map(|other| other.at)
                            .min()?,
                    );
                }
                end
            }
            (_, None) => return None,
        };
        latest = latest.max(end);
    }
    Some(latest)
}

/// Checks that each scripted `restart` starts nodes that a scripted
/// `crash` without `for` left down, at least [`SHORTEST_CRASH`] before.
fn check_restarts(scenario: &Scenario, faults: &[Fault], nodes: u32) -> Result<(), ScenarioError> {
    let mut order: Vec<usize> = (0..faults.len()).collect();
    order.sort_by_key(|&index| (faults[index].at, index));
    // Per node: since when a crash without end has held it down.
    let mut down_since: Vec<Option<SimDuration>> = vec![None; nodes as usize];
    for index in order {
        let fault = &faults[index];
        match &fault.kind {
            FaultKind::Crash { nodes } if fault.lasts.is_none() => {
                for &node in nodes {
                    down_since[node as usize].get_or_insert(fault.at);
                }
            }
            FaultKind::Restart { nodes } => {
                for &node in nodes {
                    match down_since[node as usize].take() {
                        Some(since) if fault.at >= since + SHORTEST_CRASH => {}
                        Some(since) => {
                            return Err(scenario.error(
                                &format!("fault[{index}].at"),
                                format!(
                                    "node {node} crashed at {since}: it restarts at least {SHORTEST_CRASH} later"
                                ),
                            ))
                        }
                        None => {
                            return Err(scenario.error(
                                &format!("fault[{index}].nodes"),
                                format!(
                                    "node {node} is not down at {}: a `restart` starts a node that a `crash` without `for` left down",
                                    fault.at
                                ),
                            ))
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What a random fault of each kind does besides its node and duration:
/// a flap cuts for 10 s out of every 30; a drop loses 1% of messages; a
/// degraded NIC keeps half its bandwidth; a partition cuts the node off
/// from every other.
const RANDOM_FLAP_OFF: SimDuration = SimDuration::from_secs(10);
const RANDOM_FLAP_ON: SimDuration = SimDuration::from_secs(20);
const RANDOM_DROP_PROBABILITY: f64 = 0.01;
/// The most faults `[faults.random]` may draw on average in a run.
pub const MAX_DRAWN_FAULTS: f64 = 10_000.0;
const RANDOM_BANDWIDTH_FACTOR: f64 = 0.5;
/// A drawn slow disk: 4 times the latency, a quarter of the throughput (a
/// drive in the middle of internal garbage collection or thermal
/// throttling, as an estimate).
const RANDOM_SLOWDOWN: models::nvme::Slowdown = models::nvme::Slowdown {
    latency_factor: 4.0,
    throughput_factor: 0.25,
};
/// The shortest crash: a node is down at least this long (a process
/// starts in seconds; the messages it had in flight are gone by then).
pub const SHORTEST_CRASH: SimDuration = SimDuration::from_secs(1);
/// The kinds `[faults.random]` draws from unless told.
const RANDOM_KINDS: [&str; 4] = ["flap", "partition", "drop", "nic-degrade"];
/// The kinds it can draw.
const DRAWABLE_KINDS: [&str; 6] = [
    "flap",
    "partition",
    "drop",
    "nic-degrade",
    "crash",
    "slow-disk",
];

/// The part of a run of `duration` that random draws keep to: `within`
/// (`[faults.random]`, `[actions.random]`), which must lie in the
/// scenario's own duration `own` (or the run's, without one), or the whole
/// run; where `--duration` cut the run short of `within`, what is left of
/// the run (`operations::faults_and_operations` notes it). A `within`
/// past the run is an error naming `field` of `scenario`.
pub(crate) fn draw_window(
    scenario: &Scenario,
    field: &str,
    within: Option<crate::scenario::HumanDuration>,
    duration: SimDuration,
    own: Option<SimDuration>,
) -> Result<SimDuration, ScenarioError> {
    match within {
        None => Ok(duration),
        Some(within) if within.0 > SimDuration::ZERO && within.0 <= duration => Ok(within.0),
        Some(within) if within.0 > SimDuration::ZERO && own.is_some_and(|own| within.0 <= own) => {
            Ok(duration)
        }
        Some(within) => Err(scenario.error(
            field,
            format!(
                "{} is not within the run's {}",
                within.0,
                own.unwrap_or(duration)
            ),
        )),
    }
}

/// `[faults.random]`'s schedule: per node, arrivals of a Poisson process
/// of `per_node_hour` over the run (stream `faults/random`), each of a
/// kind drawn uniformly from `kinds` and an exponential duration of mean
/// `lasts`; in time order (ties by node).
fn draw(
    scenario: &Scenario,
    section: &crate::scenario::RandomFaultsSection,
    nodes: u32,
    seed: u64,
    duration: Option<SimDuration>,
) -> Result<Vec<Fault>, ScenarioError> {
    use rand::RngExt;
    let error = |key: &str, reason: String| scenario.error(&format!("faults.random.{key}"), reason);
    let Some(duration) = duration else {
        return Err(error(
            "per_node_hour",
            "random faults need the run's `duration` to draw a schedule over".into(),
        ));
    };
    let rate = section.per_node_hour;
    if !(rate > 0.0 && rate.is_finite()) {
        return Err(error(
            "per_node_hour",
            format!("{} is not a positive rate", units::format_number(rate)),
        ));
    }
    let kinds: Vec<String> = match &section.kinds {
        Some(kinds) if kinds.is_empty() => {
            return Err(error("kinds", "names no kind".into()));
        }
        Some(kinds) => kinds.clone(),
        None => RANDOM_KINDS.iter().map(|kind| kind.to_string()).collect(),
    };
    for kind in &kinds {
        if !DRAWABLE_KINDS.contains(&kind.as_str()) {
            return Err(error(
                "kinds",
                format!(
                    "`{kind}` cannot be drawn; random faults are of {}",
                    DRAWABLE_KINDS.join(", ")
                ),
            ));
        }
    }
    if kinds.iter().any(|kind| kind == "partition") && nodes < 2 {
        return Err(error("kinds", "a partition needs two nodes".into()));
    }
    let lasts = section
        .lasts
        .map_or(SimDuration::from_secs(60), |lasts| lasts.0);
    if lasts == SimDuration::ZERO {
        return Err(error("lasts", "a fault lasts longer than 0s".into()));
    }
    let own = scenario.duration.map(|own| own.0);
    let window = draw_window(
        scenario,
        "faults.random.within",
        section.within,
        duration,
        own,
    )?;
    let expected = rate * f64::from(nodes) * window.as_secs_f64() / 3600.0;
    if expected > MAX_DRAWN_FAULTS {
        return Err(error(
            "per_node_hour",
            format!(
                "{} per node-hour over {nodes} nodes and {} draws about {} faults; at most {MAX_DRAWN_FAULTS} (lower the rate or the window)",
                units::format_number(rate),
                window,
                units::format_number(expected.round())
            ),
        ));
    }
    let mut rng = crate::rng::stream(seed, "faults/random");
    let per_second = rate / 3600.0;
    let mut faults = Vec::new();
    let cluster_nodes = nodes;
    for node in 0..cluster_nodes {
        let mut at = 0.0;
        loop {
            // Exponential gaps: -ln(1 - u) / rate.
            at += -(1.0 - rng.random::<f64>()).ln() / per_second;
            if at >= window.as_secs_f64() {
                break;
            }
            let kind = &kinds[rng.random_range(0..kinds.len())];
            let mut length = -(1.0 - rng.random::<f64>()).ln() * lasts.as_secs_f64();
            if section.within.is_some() {
                length = length.min(window.as_secs_f64() - at);
            }
            let nodes = vec![node];
            let kind = match kind.as_str() {
                "flap" => FaultKind::Flap {
                    nodes,
                    on: RANDOM_FLAP_ON,
                    off: RANDOM_FLAP_OFF,
                },
                "partition" => FaultKind::Partition {
                    side: nodes,
                    other: (0..cluster_nodes).filter(|&other| other != node).collect(),
                },
                "drop" => FaultKind::Drop {
                    nodes,
                    probability: RANDOM_DROP_PROBABILITY,
                },
                "crash" => {
                    length = length.max(SHORTEST_CRASH.as_secs_f64());
                    FaultKind::Crash { nodes }
                }
                "slow-disk" => FaultKind::SlowDisk {
                    nodes,
                    slowdown: RANDOM_SLOWDOWN,
                },
                _ => FaultKind::NicDegrade {
                    nodes,
                    factor: RANDOM_BANDWIDTH_FACTOR,
                },
            };
            faults.push(Fault {
                drawn: true,
                at: SimDuration::from_secs_f64(at),
                lasts: Some(SimDuration::from_secs_f64(length).max(SimDuration::from_millis(1))),
                kind,
            });
        }
    }
    faults.sort_by_key(|fault| fault.at);
    Ok(faults)
}

/// `fault[index]`, naming nodes among `0..cluster_nodes` (the `initial`
/// ones and those `[[action]]` adds).
fn resolve_one(
    scenario: &Scenario,
    index: usize,
    section: &FaultSection,
    initial: u32,
    cluster_nodes: u32,
) -> Result<Fault, ScenarioError> {
    let field = |key: &str| format!("fault[{index}].{key}");
    let error = |key: &str, reason: String| scenario.error(&field(key), reason);
    let kind_name = section.kind.as_str();
    // Which optional keys each kind takes.
    let takes: &[&str] = match kind_name {
        "partition" => &["from"],
        "flap" => &["on", "off"],
        "drop" => &["probability"],
        "nic-degrade" => &["bandwidth_factor"],
        "slow-disk" => &["latency_factor", "throughput_factor"],
        "crash" | "restart" | "disk-fail" => &[],
        other => {
            return Err(error(
                "kind",
                format!("unknown fault kind `{other}`; expected one of {KINDS}"),
            ))
        }
    };
    for (key, present) in [
        ("from", section.from.is_some()),
        ("on", section.on.is_some()),
        ("off", section.off.is_some()),
        ("probability", section.probability.is_some()),
        ("bandwidth_factor", section.bandwidth_factor.is_some()),
        ("latency_factor", section.latency_factor.is_some()),
        ("throughput_factor", section.throughput_factor.is_some()),
    ] {
        if present && !takes.contains(&key) {
            return Err(error(key, format!("a `{kind_name}` fault has no `{key}`")));
        }
    }
    let check_nodes = |key: &str, list: &[u32]| -> Result<Vec<u32>, ScenarioError> {
        if list.is_empty() {
            return Err(error(key, "names no node".into()));
        }
        let mut sorted = list.to_vec();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(error(key, format!("names node {} twice", pair[0])));
        }
        if let Some(node) = sorted.iter().find(|&&node| node >= cluster_nodes) {
            let added = match cluster_nodes - initial {
                0 => String::new(),
                added => format!(" ({initial} from the start, {added} added by [[action]])"),
            };
            return Err(error(
                key,
                format!(
                    "node {node} does not exist: the cluster's nodes are 0..{}{added}",
                    cluster_nodes - 1
                ),
            ));
        }
        Ok(sorted)
    };
    let nodes = check_nodes(
        "nodes",
        section
            .nodes
            .as_deref()
            .ok_or_else(|| error("nodes", format!("a `{kind_name}` fault needs `nodes`")))?,
    )?;
    let lasts = section.lasts.map(|lasts| lasts.0);
    if lasts == Some(SimDuration::ZERO) {
        return Err(error("for", "a fault lasts longer than 0s".into()));
    }
    match (kind_name, lasts) {
        ("restart", Some(_)) => {
            return Err(error(
                "for",
                "a `restart` has no `for`: it starts nodes a `crash` left down".into(),
            ))
        }
        ("disk-fail", Some(_)) => {
            return Err(error(
                "for",
                "a failed disk stays failed for the rest of the run (replacing the node is a topology change)".into(),
            ))
        }
        ("crash", Some(lasts)) if lasts < SHORTEST_CRASH => {
            return Err(error(
                "for",
                format!("{lasts} is too short: a crashed node is down at least {SHORTEST_CRASH}"),
            ))
        }
        _ => {}
    }
    let required = |key: &str, value: Option<f64>| {
        value.ok_or_else(|| error(key, format!("a `{kind_name}` fault needs `{key}`")))
    };
    let fraction = |key: &str, value: f64| {
        if value > 0.0 && value <= 1.0 {
            Ok(value)
        } else {
            Err(error(
                key,
                format!("{} is not in (0, 1]", units::format_number(value)),
            ))
        }
    };
    // A degradation's factor: a fraction no smaller than the model goes.
    let at_least = |key: &str, value: f64, least: f64| {
        if (least..=1.0).contains(&value) {
            Ok(value)
        } else {
            Err(error(
                key,
                format!("{value:?} is not in [{least}, 1] (less is a cut: a `partition` or `disk-fail`)"),
            ))
        }
    };
    let kind = match kind_name {
        "partition" => {
            let other = match &section.from {
                Some(list) => check_nodes("from", list)?,
                None => (0..cluster_nodes)
                    .filter(|node| !nodes.contains(node))
                    .collect(),
            };
            if other.is_empty() {
                return Err(error("nodes", "leaves no node on the other side".into()));
            }
            if let Some(node) = other.iter().find(|node| nodes.contains(node)) {
                return Err(error("from", format!("node {node} is on both sides")));
            }
            FaultKind::Partition { side: nodes, other }
        }
        "flap" => {
            let duration = |key: &str, value: Option<crate::scenario::HumanDuration>| match value {
                None => Err(error(key, format!("a `flap` fault needs `{key}`"))),
                Some(value) if value.0 == SimDuration::ZERO => {
                    Err(error(key, "must be longer than 0s".into()))
                }
                Some(value) => Ok(value.0),
            };
            FaultKind::Flap {
                nodes,
                on: duration("on", section.on)?,
                off: duration("off", section.off)?,
            }
        }
        "drop" => FaultKind::Drop {
            nodes,
            probability: fraction("probability", required("probability", section.probability)?)?,
        },
        "nic-degrade" => FaultKind::NicDegrade {
            nodes,
            factor: at_least(
                "bandwidth_factor",
                required("bandwidth_factor", section.bandwidth_factor)?,
                models::network::NicFaults::MIN_BANDWIDTH_FACTOR,
            )?,
        },
        "slow-disk" => {
            let latency_factor = section.latency_factor.unwrap_or(1.0);
            let most = models::nvme::Slowdown::MAX_LATENCY_FACTOR;
            if !(1.0..=most).contains(&latency_factor) {
                return Err(error(
                    "latency_factor",
                    format!("{latency_factor:?} is not a factor from 1 to {most} (a device slower than that has failed: `disk-fail`)"),
                ));
            }
            let throughput_factor = match section.throughput_factor {
                Some(factor) => at_least(
                    "throughput_factor",
                    factor,
                    models::nvme::Slowdown::MIN_THROUGHPUT_FACTOR,
                )?,
                None => 1.0,
            };
            if latency_factor == 1.0 && throughput_factor == 1.0 {
                return Err(error(
                    "latency_factor",
                    "a `slow-disk` fault needs `latency_factor` above 1 or `throughput_factor` below 1".into(),
                ));
            }
            FaultKind::SlowDisk {
                nodes,
                slowdown: models::nvme::Slowdown {
                    latency_factor,
                    throughput_factor,
                },
            }
        }
        "crash" => FaultKind::Crash { nodes },
        "restart" => FaultKind::Restart { nodes },
        "disk-fail" => FaultKind::DiskFail { nodes },
        _ => unreachable!("kinds checked above"),
    };
    Ok(Fault {
        at: section.at.0,
        lasts,
        kind,
        drawn: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(text: &str) -> Result<Vec<Fault>, String> {
        let scenario = crate::scenario::parse(
            "faults.toml",
            &format!(
                "name = \"f\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n{text}"
            ),
        )
        .map_err(|error| error.to_string())?;
        resolve(&scenario, 3, 3, 1, Some(SimDuration::from_secs(3600)))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn each_simulated_kind_resolves_with_its_settings() {
        let resolved = faults(
            "[[fault]]\nat = \"10s\"\nfor = \"1m\"\nnodes = [2]\nkind = \"flap\"\non = \"20s\"\noff = \"10s\"\n\
             [[fault]]\nat = \"0s\"\nnodes = [0]\nkind = \"partition\"\n\
             [[fault]]\nat = \"5s\"\nnodes = [1, 0]\nkind = \"drop\"\nprobability = 0.01\n\
             [[fault]]\nat = \"5s\"\nnodes = [1]\nkind = \"nic-degrade\"\nbandwidth_factor = 0.5\n",
        )
        .unwrap();
        assert_eq!(
            resolved[0],
            Fault {
                at: SimDuration::from_secs(10),
                lasts: Some(SimDuration::from_secs(60)),
                kind: FaultKind::Flap {
                    nodes: vec![2],
                    on: SimDuration::from_secs(20),
                    off: SimDuration::from_secs(10),
                },
                drawn: false,
            }
        );
        assert_eq!(
            resolved[1].kind,
            FaultKind::Partition {
                side: vec![0],
                other: vec![1, 2]
            },
            "the other side defaults to every other node"
        );
        assert_eq!(resolved[1].lasts, None);
        assert_eq!(
            resolved[2].kind,
            FaultKind::Drop {
                nodes: vec![0, 1],
                probability: 0.01
            }
        );
        assert_eq!(
            resolved[3].kind,
            FaultKind::NicDegrade {
                nodes: vec![1],
                factor: 0.5
            }
        );
    }

    #[test]
    fn node_and_disk_faults_resolve_and_a_crash_without_end_lasts_to_its_restart() {
        let resolved = faults(
            "[[fault]]\nat = \"10s\"\nfor = \"20s\"\nnodes = [0]\nkind = \"crash\"\n\
             [[fault]]\nat = \"5s\"\nnodes = [1, 2]\nkind = \"crash\"\n\
             [[fault]]\nat = \"45s\"\nnodes = [2, 1]\nkind = \"restart\"\n\
             [[fault]]\nat = \"1s\"\nfor = \"1m\"\nnodes = [2]\nkind = \"slow-disk\"\nthroughput_factor = 0.25\n",
        )
        .unwrap();
        assert_eq!(resolved[0].kind, FaultKind::Crash { nodes: vec![0] });
        assert_eq!(resolved[2].kind, FaultKind::Restart { nodes: vec![1, 2] });
        assert_eq!(
            resolved[3].kind,
            FaultKind::SlowDisk {
                nodes: vec![2],
                slowdown: models::nvme::Slowdown {
                    latency_factor: 1.0,
                    throughput_factor: 0.25
                }
            }
        );
        // The slow disk ends last, at 61 s; the crash without end at its
        // restart, 45 s.
        assert_eq!(latest_end(&resolved), Some(SimDuration::from_secs(61)));
        assert_eq!(latest_end(&resolved[..3]), Some(SimDuration::from_secs(45)));
        assert_eq!(latest_end(&resolved[1..2]), None, "never restarted");
        let failed = faults("[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"disk-fail\"\n").unwrap();
        assert_eq!(latest_end(&failed), None, "a failed disk stays failed");
    }

    #[test]
    fn mistakes_are_one_line_errors_naming_the_fault_and_key() {
        for (text, expected) in [
            (
                "[[fault]]\nat = \"1s\"\nnodes = [3]\nkind = \"drop\"\nprobability = 0.1\n",
                "field `fault[0].nodes`: node 3 does not exist: the cluster's nodes are 0..2",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"flap\"\non = \"1s\"\n",
                "field `fault[0].off`: a `flap` fault needs `off`",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"drop\"\nprobability = 1.5\n",
                "field `fault[0].probability`: 1.5 is not in (0, 1]",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"drop\"\nprobability = 0.5\non = \"1s\"\n",
                "field `fault[0].on`: a `drop` fault has no `on`",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"meteor\"\n",
                "field `fault[0].kind`: unknown fault kind `meteor`",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"restart\"\n",
                "field `fault[0].nodes`: node 1 is not down at 1s: a `restart` starts a node that a `crash` without `for` left down",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"crash\"\n[[fault]]\nat = \"1500ms\"\nnodes = [1]\nkind = \"restart\"\n",
                "field `fault[1].at`: node 1 crashed at 1s: it restarts at least 1s later",
            ),
            (
                "[[fault]]\nat = \"1s\"\nfor = \"500ms\"\nnodes = [1]\nkind = \"crash\"\n",
                "field `fault[0].for`: 500ms is too short: a crashed node is down at least 1s",
            ),
            (
                "[[fault]]\nat = \"1s\"\nfor = \"5s\"\nnodes = [1]\nkind = \"disk-fail\"\n",
                "field `fault[0].for`: a failed disk stays failed for the rest of the run",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"slow-disk\"\n",
                "field `fault[0].latency_factor`: a `slow-disk` fault needs `latency_factor` above 1 or `throughput_factor` below 1",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 0.5\n",
                "field `fault[0].latency_factor`: 0.5 is not a factor from 1 to 10000",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"slow-disk\"\nlatency_factor = 1e300\n",
                "field `fault[0].latency_factor`: 1e300 is not a factor from 1 to 10000",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"slow-disk\"\nthroughput_factor = 1e-9\n",
                "field `fault[0].throughput_factor`: 1e-9 is not in [0.0001, 1]",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"nic-degrade\"\nbandwidth_factor = 1e-9\n",
                "field `fault[0].bandwidth_factor`: 1e-9 is not in [0.0001, 1]",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"nic-degrade\"\nbandwidth_factor = nan\n",
                "field `fault[0].bandwidth_factor`: NaN is not in [0.0001, 1]",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1]\nkind = \"crash\"\nprobability = 0.5\n",
                "field `fault[0].probability`: a `crash` fault has no `probability`",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [0, 1, 2]\nkind = \"partition\"\n",
                "field `fault[0].nodes`: leaves no node on the other side",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [0]\nfrom = [0, 1]\nkind = \"partition\"\n",
                "field `fault[0].from`: node 0 is on both sides",
            ),
            (
                "[[fault]]\nat = \"1s\"\nnodes = [1, 1]\nkind = \"nic-degrade\"\nbandwidth_factor = 0.5\n",
                "field `fault[0].nodes`: names node 1 twice",
            ),
        ] {
            let error = faults(text).unwrap_err();
            assert!(
                error.contains(expected) && !error.contains('\n'),
                "{text:?}: {error}"
            );
        }
    }

    #[test]
    fn a_rate_that_would_draw_too_many_faults_is_refused() {
        let text = |rate: &str| {
            format!(
                "name = \"f\"\nduration = \"1h\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n[faults.random]\nper_node_hour = {rate}\n"
            )
        };
        let draw = |rate: &str| {
            let scenario = crate::scenario::parse("random.toml", &text(rate)).unwrap();
            resolve(&scenario, 3, 3, 1, Some(SimDuration::from_secs(3600)))
                .map_err(|error| error.to_string())
        };
        // 3 nodes for an hour: 3,333 per node-hour draws ~10,000.
        assert!(draw("3000").is_ok());
        let error = draw("1e300").unwrap_err();
        assert!(
            error.contains("faults.random.per_node_hour")
                && error.contains("1e300 per node-hour over 3 nodes and 1h draws about 3e300 faults; at most 10000"),
            "{error}"
        );
    }

    #[test]
    fn random_faults_follow_their_rate_kinds_and_mean_duration_and_the_seed() {
        let text = |kinds: &str| {
            format!(
                "name = \"f\"\nduration = \"100h\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n[faults.random]\nper_node_hour = 2\nlasts = \"30s\"\n{kinds}"
            )
        };
        let draw = |kinds: &str, seed: u64| {
            let scenario = crate::scenario::parse("random.toml", &text(kinds)).unwrap();
            resolve(
                &scenario,
                3,
                3,
                seed,
                Some(SimDuration::from_secs(100 * 3600)),
            )
        };
        let faults = draw("", 1).unwrap();
        // 2 per node-hour over 3 nodes and 100 hours: ~600.
        assert!((500..700).contains(&faults.len()), "{}", faults.len());
        assert!(
            faults.windows(2).all(|pair| pair[0].at <= pair[1].at),
            "in time order"
        );
        let mean = faults
            .iter()
            .map(|fault| fault.lasts.unwrap().as_secs_f64())
            .sum::<f64>()
            / faults.len() as f64;
        assert!((25.0..35.0).contains(&mean), "mean duration {mean} s");
        for kind in ["flap", "partition", "drop", "nic-degrade"] {
            let count = faults
                .iter()
                .filter(|fault| fault.kind.name() == kind)
                .count();
            assert!(count > 100, "{kind}: {count}");
        }
        assert_eq!(draw("", 1).unwrap(), faults, "the seed decides");
        assert_ne!(draw("", 2).unwrap(), faults);
        let only = draw("kinds = [\"partition\"]\n", 1).unwrap();
        assert!(only.iter().all(|fault| matches!(
            &fault.kind,
            FaultKind::Partition { side, other } if side.len() == 1 && other.len() == 2
        )));
        let error = draw("kinds = [\"disk-fail\"]\n", 1)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("field `faults.random.kinds`: `disk-fail` cannot be drawn"),
            "{error}"
        );
        let crashes = draw("kinds = [\"crash\", \"slow-disk\"]\n", 1).unwrap();
        assert!(crashes.iter().all(|fault| match &fault.kind {
            FaultKind::Crash { .. } => fault.lasts.unwrap() >= SHORTEST_CRASH,
            FaultKind::SlowDisk { slowdown, .. } => *slowdown == RANDOM_SLOWDOWN,
            _ => false,
        }));
    }
}
