//! Topology operations: the scenario's `[[action]]` timeline, resolved.
//!
//! An action is a change of the cluster's membership, as an operator makes
//! it with nodetool while the load runs:
//! - `add-node`: a new node boots and joins the ring (bootstrap): it
//!   takes its tokens, streams the data of the ranges it comes to own from
//!   their current replicas, and serves them once streaming is done. It
//!   runs the cluster's instance (a node of other hardware is not
//!   simulated). Its id is the next fresh one: the cluster starts with
//!   nodes `0..n`, the first add-node brings node `n`, the next `n + 1`;
//!   ids are never reused, so `[[fault]]` entries can name an added node.
//! - `decommission`: a live member streams the ranges it holds to their
//!   next owners, then leaves the ring.
//! - `removenode`: a dead member is taken out of the ring from another
//!   node; the surviving replicas of its ranges stream them to the new
//!   owners. The node must be down by a fault at the action's `at`: a
//!   `crash` that has not ended by then, or a `disk-fail`.
//!
//! Actions run as an operator's script of nodetool commands runs them: in
//! the order written, one at a time, each starting at its `at` or when the
//! one before it finishes, whichever is later (a cluster makes one
//! topology change at a time). The written `at`s therefore must not
//! decrease. Each is checked against the members the script leaves at its
//! point: a node is a member from the start or from its add-node until its
//! decommission or removenode, and neither of those may leave fewer
//! members than the keyspace's replication factor (Scylla and Cassandra
//! refuse: there would not be enough nodes to keep it). Whether a
//! removenode's node is down is judged at the written `at`, from the
//! faults as resolved (scripted and drawn).

use units::SimDuration;

use crate::faults::{draw_window, Fault, FaultKind};
use crate::scenario::{ActionSection, ClusterOverrides, Scenario, ScenarioError};

/// One operation of the script.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// When it starts at the earliest, from the start of the run; later if
    /// the operation before it is still running.
    pub at: SimDuration,
    /// What it does.
    pub kind: OperationKind,
}

/// What an operation does, and to which node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationKind {
    /// A new node, `node`, bootstraps and joins.
    AddNode {
        /// The new node's id (the next fresh one).
        node: u32,
    },
    /// Live member `node` streams its ranges away and leaves.
    Decommission {
        /// The node leaving.
        node: u32,
    },
    /// Dead member `node` is removed; the survivors re-replicate its ranges.
    RemoveNode {
        /// The node removed.
        node: u32,
    },
}

impl OperationKind {
    /// The node it acts on.
    pub fn node(&self) -> u32 {
        match *self {
            OperationKind::AddNode { node }
            | OperationKind::Decommission { node }
            | OperationKind::RemoveNode { node } => node,
        }
    }

    /// The name a scenario uses.
    pub fn name(&self) -> &'static str {
        match self {
            OperationKind::AddNode { .. } => "add-node",
            OperationKind::Decommission { .. } => "decommission",
            OperationKind::RemoveNode { .. } => "removenode",
        }
    }
}

/// Every kind a scenario may name.
const KINDS: &str = "add-node, decommission, removenode";

/// How many nodes `sections` (the `[[action]]` entries, or the drawn
/// ones) add, read from the sections alone: the faults need it (they may
/// name added nodes) before the operations, which need the faults, can be
/// resolved.
pub fn added_nodes(sections: &[ActionSection]) -> u32 {
    sections
        .iter()
        .filter(|section| section.kind == "add-node")
        .count() as u32
}

/// The run's faults and operations: the script written (`[[action]]`) or
/// drawn from `seed` (`[actions.random]`, with the crashes its removenodes
/// need, after the other faults); the faults first, since they may name
/// the nodes the script adds and a removenode's node must be down by them.
/// What `--duration` cut off (a fault or action past its end, a random
/// window longer than it) goes to `notes`.
pub fn faults_and_operations(
    scenario: &Scenario,
    nodes: u32,
    replication_factor: u32,
    instance: &str,
    seed: u64,
    duration: Option<SimDuration>,
    notes: &mut Vec<String>,
) -> Result<(Vec<Fault>, Vec<Operation>), ScenarioError> {
    let drawn = draw(scenario, nodes, replication_factor, seed, duration)?;
    let sections = drawn
        .as_ref()
        .map_or(&scenario.actions[..], |drawn| &drawn.actions[..]);
    let mut faults = crate::faults::resolve(
        scenario,
        nodes,
        nodes + added_nodes(sections),
        seed,
        duration,
    )?;
    if let Some(drawn) = &drawn {
        faults.extend(drawn.faults.iter().cloned());
    }
    let operations = resolve(
        scenario,
        sections,
        drawn.is_some(),
        nodes,
        replication_factor,
        instance,
        &faults,
    )?;
    // A written fault or action that starts at or after the run's end
    // would silently never happen: refuse it where the scenario's own
    // duration (or, without one, `--duration`) leaves it out, as
    // `[faults.random]` refuses a window past the end; note it where
    // `--duration` cut the scenario's own duration short of it.
    if let Some(duration) = duration {
        let own = scenario.duration.map(|own| own.0);
        let late = |at: SimDuration| at >= duration;
        let written_faults = faults.iter().take(scenario.faults.len());
        let written_actions =
            operations
                .iter()
                .take(if drawn.is_none() { operations.len() } else { 0 });
        let late_ones = written_faults
            .enumerate()
            .filter(|(_, fault)| late(fault.at))
            .map(|(index, fault)| (format!("fault[{index}]"), "fault", fault.at))
            .chain(
                written_actions
                    .enumerate()
                    .filter(|(_, operation)| late(operation.at))
                    .map(|(index, operation)| (format!("action[{index}]"), "action", operation.at)),
            );
        for (name, what, at) in late_ones {
            if own.is_some_and(|own| at < own) {
                notes.push(format!(
                    "{name} at {at} does not happen: --duration ends the run at {duration}"
                ));
            } else {
                return Err(scenario.error(
                    &format!("{name}.at"),
                    format!(
                        "{at} is not before the run's end ({duration}): the {what} would never happen"
                    ),
                ));
            }
        }
        // Random draws kept to a window that `--duration` cut short.
        let windows = [
            (
                "faults.random",
                scenario
                    .random_faults
                    .as_ref()
                    .and_then(|s| s.random.within),
            ),
            (
                "actions.random",
                scenario
                    .random_actions
                    .as_ref()
                    .and_then(|s| s.random.within),
            ),
        ];
        for (section, within) in windows {
            if let Some(within) = within.filter(|within| within.0 > duration) {
                notes.push(format!(
                    "[{section}] draws within the first {duration}, not {}: --duration ends the run there",
                    within.0
                ));
            }
        }
    }
    Ok((faults, operations))
}

/// What `[actions.random]` drew for one run: the script, and the crashes
/// its removenodes need.
#[derive(Clone, Debug, Default)]
pub struct Drawn {
    /// The operations, as `[[action]]` entries would write them.
    pub actions: Vec<ActionSection>,
    /// A crash without end of each removenode's node, before it.
    pub faults: Vec<Fault>,
}

/// A drawn removenode's node crashes this long before the removenode (an
/// operator sees it down, then removes it).
pub const REMOVENODE_AFTER_CRASH: SimDuration = SimDuration::from_secs(10);

/// The kinds `[actions.random]` draws from unless told.
const RANDOM_KINDS: [&str; 2] = ["add-node", "decommission"];
/// The most actions `[actions.random] count` may draw.
pub const MAX_RANDOM_ACTIONS: u32 = 100;

/// `[actions.random]`'s script for run seed `seed` (stream
/// `actions/random`), on a cluster of `nodes` nodes at the start and a
/// keyspace of `replication_factor`, over a run of `duration`: `count`
/// start times drawn uniformly within `within` and sorted; at each, a kind
/// drawn uniformly among the listed ones the cluster allows at that point
/// (a decommission or removenode only while more than RF members remain),
/// and for those the node, uniformly among the members. A removenode's
/// node crashes for good at the drawn time and is removed
/// [`REMOVENODE_AFTER_CRASH`] later (later times move up so that they do
/// not decrease). `None` without the section.
pub fn draw(
    scenario: &Scenario,
    nodes: u32,
    replication_factor: u32,
    seed: u64,
    duration: Option<SimDuration>,
) -> Result<Option<Drawn>, ScenarioError> {
    use rand::RngExt;
    let Some(section) = &scenario.random_actions else {
        return Ok(None);
    };
    let section = &section.random;
    let error =
        |key: &str, reason: String| scenario.error(&format!("actions.random.{key}"), reason);
    if !scenario.actions.is_empty() {
        return Err(error(
            "kinds",
            "`[actions.random]` draws the whole script: remove the `[[action]]` entries, or this section".into(),
        ));
    }
    let Some(duration) = duration else {
        return Err(error(
            "within",
            "random actions need the run's `duration` to draw their times over".into(),
        ));
    };
    let kinds: Vec<String> = match &section.kinds {
        Some(kinds) if kinds.is_empty() => return Err(error("kinds", "names no kind".into())),
        Some(kinds) => kinds.clone(),
        None => RANDOM_KINDS.iter().map(|kind| kind.to_string()).collect(),
    };
    for kind in &kinds {
        if !matches!(kind.as_str(), "add-node" | "decommission" | "removenode") {
            return Err(error(
                "kinds",
                format!("unknown action kind `{kind}`; expected one of {KINDS}"),
            ));
        }
    }
    let count = section.count.unwrap_or(1);
    if count == 0 {
        return Err(error(
            "count",
            "draws no action; leave the section out".into(),
        ));
    }
    if count > MAX_RANDOM_ACTIONS {
        return Err(error(
            "count",
            format!("{count} actions is more than {MAX_RANDOM_ACTIONS} (each waits 30 s of ring delay before its data moves)"),
        ));
    }
    let own = scenario.duration.map(|own| own.0);
    let window = draw_window(
        scenario,
        "actions.random.within",
        section.within,
        duration,
        own,
    )?;
    let mut rng = crate::rng::stream(seed, "actions/random");
    let mut times: Vec<SimDuration> = (0..count)
        // Whole milliseconds, so that the describe line reads them.
        .map(|_| SimDuration::from_millis((rng.random::<f64>() * window.as_millis_f64()) as u64))
        .collect();
    times.sort_unstable();
    let mut members: Vec<u32> = (0..nodes).collect();
    let mut next_id = nodes;
    let mut drawn = Drawn::default();
    let mut earliest = SimDuration::ZERO;
    for at in times {
        let can_leave = members.len() as u32 > replication_factor;
        let allowed: Vec<&str> = kinds
            .iter()
            .map(String::as_str)
            .filter(|kind| *kind == "add-node" || can_leave)
            .collect();
        let Some(&kind) = allowed.get(rng.random_range(0..allowed.len().max(1))) else {
            return Err(error(
                "kinds",
                format!(
                    "none of {} can be drawn: {} members and replication factor {replication_factor} leave no node that may leave (add `add-node`)",
                    kinds.join(", "),
                    members.len()
                ),
            ));
        };
        let mut at = at.max(earliest);
        let node = if kind == "add-node" {
            next_id += 1;
            members.push(next_id - 1);
            None
        } else {
            let node = members.remove(rng.random_range(0..members.len()));
            if kind == "removenode" {
                drawn.faults.push(Fault {
                    at,
                    lasts: None,
                    kind: FaultKind::Crash { nodes: vec![node] },
                    drawn: true,
                });
                at = at + REMOVENODE_AFTER_CRASH;
            }
            Some(node)
        };
        earliest = at;
        drawn.actions.push(ActionSection {
            at: crate::scenario::HumanDuration(at),
            kind: kind.to_string(),
            node,
            instance: None,
        });
    }
    Ok(Some(drawn))
}

/// Every node id a run uses: the `nodes` it starts with and one per
/// add-node.
pub fn total_nodes(nodes: u32, operations: &[Operation]) -> u32 {
    nodes
        + operations
            .iter()
            .filter(|operation| matches!(operation.kind, OperationKind::AddNode { .. }))
            .count() as u32
}

/// The describe line's part for `operations`: each in order, with when it
/// starts at the earliest.
pub fn describe(operations: &[Operation]) -> String {
    if operations.is_empty() {
        return String::new();
    }
    let each: Vec<String> = operations
        .iter()
        .map(|operation| {
            format!(
                "{} node {} at {}",
                operation.kind.name(),
                operation.kind.node(),
                operation.at
            )
        })
        .collect();
    format!(
        "; actions, one at a time (each at its time or when the one before ends): {}",
        each.join(", ")
    )
}

/// The scenario's `[[action]]` entries in the order written, or those
/// `[actions.random]` drew (`drawn`), checked against a cluster that
/// starts with `nodes` nodes of `instance` (the resolved
/// `cluster.instance`), a keyspace of `replication_factor`, and the run's
/// `faults` (a removenode's node must be down).
pub fn resolve(
    scenario: &Scenario,
    sections: &[ActionSection],
    drawn: bool,
    nodes: u32,
    replication_factor: u32,
    instance: &str,
    faults: &[Fault],
) -> Result<Vec<Operation>, ScenarioError> {
    let mut operations: Vec<Operation> = Vec::with_capacity(sections.len());
    // The members are `0..next_id` less those that left (with the action
    // that took each out).
    let mut next_id = nodes;
    let mut left: Vec<(u32, usize)> = Vec::new();
    for (index, section) in sections.iter().enumerate() {
        let field = |key: &str| match drawn {
            true => format!("actions.random (drawn action {index}, {key})"),
            false => format!("action[{index}].{key}"),
        };
        let error = |key: &str, reason: String| scenario.error(&field(key), reason);
        let at = section.at.0;
        let kind_name = section.kind.as_str();
        if !matches!(kind_name, "add-node" | "decommission" | "removenode") {
            return Err(error(
                "kind",
                format!("unknown action kind `{kind_name}`; expected one of {KINDS}"),
            ));
        }
        if let Some(before) = operations.last() {
            if at < before.at {
                return Err(error(
                    "at",
                    format!(
                        "{at} is before action[{}]'s {}: actions run one at a time in the order written, so their `at`s must not decrease",
                        index - 1,
                        before.at
                    ),
                ));
            }
        }
        let kind = if kind_name == "add-node" {
            if let Some(node) = section.node {
                if node != next_id {
                    return Err(error(
                        "node",
                        format!(
                            "node {node}: this add-node's node gets id {next_id}, the next fresh one ({nodes} nodes at the start, then one per add-node in order)"
                        ),
                    ));
                }
            }
            check_instance(scenario, section, instance)
                .map_err(|reason| error("instance", reason))?;
            next_id += 1;
            OperationKind::AddNode { node: next_id - 1 }
        } else {
            if section.instance.is_some() {
                return Err(error(
                    "instance",
                    format!("a `{kind_name}` has no `instance`: it acts on a node already in the cluster"),
                ));
            }
            let node = section.node.ok_or_else(|| {
                error(
                    "node",
                    format!("a `{kind_name}` needs `node`, the node that leaves"),
                )
            })?;
            if let Some(&(_, by)) = left.iter().find(|(gone, _)| *gone == node) {
                return Err(error(
                    "node",
                    format!(
                        "node {node} already left the cluster by action[{by}] ({})",
                        operations[by].kind.name()
                    ),
                ));
            }
            if node >= next_id {
                return Err(error(
                    "node",
                    format!(
                        "node {node} is not in the cluster at this point of the script: its nodes so far are 0 to {}",
                        next_id - 1
                    ),
                ));
            }
            if kind_name == "removenode" && !down_at(faults, node, at) {
                return Err(error(
                    "node",
                    format!(
                        "removenode removes a dead node: node {node} is up at {at} (crash it or fail its disk first)"
                    ),
                ));
            }
            let remaining = next_id - left.len() as u32 - 1;
            if remaining < replication_factor {
                return Err(error(
                    "node",
                    format!(
                        "a `{kind_name}` of node {node} would leave {remaining} nodes for replication factor {replication_factor}: not enough nodes to keep the replication factor (Scylla and Cassandra refuse)"
                    ),
                ));
            }
            left.push((node, index));
            if kind_name == "decommission" {
                OperationKind::Decommission { node }
            } else {
                OperationKind::RemoveNode { node }
            }
        };
        operations.push(Operation { at, kind });
    }
    Ok(operations)
}

/// An add-node's `instance`, if given, must be the cluster's: `instance`
/// by name, and an inline table only with the cluster's own overrides.
/// Every node of a run is simulated on the one hardware the plan resolves.
fn check_instance(
    scenario: &Scenario,
    section: &ActionSection,
    instance: &str,
) -> Result<(), String> {
    let Some(choice) = &section.instance else {
        return Ok(());
    };
    let cluster_overrides = scenario.cluster.instance.overrides.or(&scenario
        .cluster
        .overrides
        .as_ref()
        .map(ClusterOverrides::instance_overrides)
        .unwrap_or_default());
    let same_overrides =
        choice.overrides.fields_set().is_empty() || choice.overrides == cluster_overrides;
    if choice.base == instance && same_overrides {
        return Ok(());
    }
    Err(format!(
        "every node runs the cluster's instance (`cluster.instance` = {instance}); a node of another instance is not simulated"
    ))
}

/// Whether `node` is down at `at` by `faults`: a crash that began by then
/// and has not ended (its `for`, else the next restart naming the node,
/// else never), or a disk failure that began by then.
fn down_at(faults: &[Fault], node: u32, at: SimDuration) -> bool {
    faults.iter().any(|fault| {
        fault.at <= at
            && match &fault.kind {
                FaultKind::Crash { nodes } if nodes.contains(&node) => {
                    let end = match fault.lasts {
                        Some(lasts) => Some(fault.at + lasts),
                        None => faults
                            .iter()
                            .filter(|other| other.at > fault.at)
                            .filter(|other| {
                                matches!(&other.kind, FaultKind::Restart { nodes } if nodes.contains(&node))
                            })
                            .map(|other| other.at)
                            .min(),
                    };
                    end.is_none_or(|end| end > at)
                }
                FaultKind::DiskFail { nodes } => nodes.contains(&node),
                _ => false,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3-node cluster of i3.large (lines 1-8), then `text` from line 9.
    fn scenario(text: &str) -> Result<Scenario, String> {
        crate::scenario::parse(
            "ops.toml",
            &format!(
                "name = \"o\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n{text}"
            ),
        )
        .map_err(|error| error.to_string())
    }

    /// The faults and operations of `text` with replication factor `rf`.
    fn resolved(text: &str, rf: u32) -> Result<(Vec<Fault>, Vec<Operation>), String> {
        resolved_with_seed(text, rf, 1)
    }

    /// The same, drawn from run seed `seed`.
    fn resolved_with_seed(
        text: &str,
        rf: u32,
        seed: u64,
    ) -> Result<(Vec<Fault>, Vec<Operation>), String> {
        let scenario = scenario(text)?;
        faults_and_operations(
            &scenario,
            3,
            rf,
            "i3.large",
            seed,
            Some(SimDuration::from_secs(3600)),
            &mut Vec::new(),
        )
        .map_err(|error| error.to_string())
    }

    /// Faults, operations and the plan's notes.
    type WithNotes = (Vec<Fault>, Vec<Operation>, Vec<String>);

    /// `text` in a scenario whose own duration is an hour, run for
    /// `duration` (as `--duration` sets it): its faults, operations and
    /// the plan's notes.
    fn resolved_for(text: &str, duration: SimDuration) -> Result<WithNotes, String> {
        let scenario = crate::scenario::parse(
            "ops.toml",
            &format!(
                "name = \"o\"\nduration = \"1h\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"cassandra-stress write n=10\"\n{text}"
            ),
        )
        .map_err(|error| error.to_string())?;
        let mut notes = Vec::new();
        let (faults, operations) =
            faults_and_operations(&scenario, 3, 3, "i3.large", 1, Some(duration), &mut notes)
                .map_err(|error| error.to_string())?;
        Ok((faults, operations, notes))
    }

    fn operations(text: &str, rf: u32) -> Result<Vec<Operation>, String> {
        resolved(text, rf).map(|(_, operations)| operations)
    }

    const CRASH_2: &str = "[[fault]]\nat = \"10s\"\nnodes = [2]\nkind = \"crash\"\n";

    /// A scenario of an hour: a fault or action at or after its end is
    /// refused by name; one just before it stands.
    #[test]
    fn a_fault_or_action_after_the_end_is_refused() {
        let hour = SimDuration::from_secs(3600);
        let error = resolved_for(
            "[[fault]]\nat = \"10s\"\nnodes = [2]\nkind = \"crash\"\n\
             [[fault]]\nat = \"1h\"\nnodes = [1]\nkind = \"crash\"\n",
            hour,
        )
        .unwrap_err();
        assert!(
            error.contains("fault[1].at") && error.contains("never happen"),
            "{error}"
        );
        let error =
            resolved_for("[[action]]\nat = \"2h\"\nkind = \"add-node\"\n", hour).unwrap_err();
        assert!(
            error.contains("action[0].at") && error.contains("never happen"),
            "{error}"
        );
        let (_, _, notes) =
            resolved_for("[[action]]\nat = \"59m\"\nkind = \"add-node\"\n", hour).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// Where `--duration` cuts the hour short, a fault or action past the
    /// cut is not an error but a note naming it, and a random window past
    /// it is drawn within what is left, also noted.
    #[test]
    fn a_fault_or_action_past_a_duration_cut_is_noted() {
        let ten_minutes = SimDuration::from_secs(600);
        let (faults, operations, notes) = resolved_for(
            "[[fault]]\nat = \"20m\"\nnodes = [1]\nkind = \"crash\"\n\
             [[action]]\nat = \"30m\"\nkind = \"add-node\"\n",
            ten_minutes,
        )
        .unwrap();
        assert_eq!((faults.len(), operations.len()), (1, 1));
        assert_eq!(
            notes,
            [
                "fault[0] at 20m does not happen: --duration ends the run at 10m",
                "action[0] at 30m does not happen: --duration ends the run at 10m",
            ]
        );
        let (faults, _, notes) = resolved_for(
            "[faults.random]\nper_node_hour = 60\nwithin = \"30m\"\nkinds = [\"crash\"]\n",
            ten_minutes,
        )
        .unwrap();
        assert!(!faults.is_empty());
        assert!(faults.iter().all(|fault| fault.at < ten_minutes));
        assert_eq!(
            notes,
            ["[faults.random] draws within the first 10m, not 30m: --duration ends the run there"]
        );
        // Past the scenario's own hour, the window is still an error.
        let error = resolved_for(
            "[faults.random]\nper_node_hour = 60\nwithin = \"2h\"\nkinds = [\"crash\"]\n",
            ten_minutes,
        )
        .unwrap_err();
        assert!(
            error.contains("faults.random.within")
                && error.contains("2h is not within the run's 1h"),
            "{error}"
        );
    }

    #[test]
    fn a_script_gets_fresh_ids_in_order() {
        let script = operations(
            "[[action]]\nat = \"1m\"\nkind = \"add-node\"\n\
             [[action]]\nat = \"1m\"\nkind = \"add-node\"\nnode = 4\ninstance = \"i3.large\"\n\
             [[action]]\nat = \"5m\"\nkind = \"decommission\"\nnode = 3\n\
             [[action]]\nat = \"6m\"\nkind = \"decommission\"\nnode = 0\n",
            3,
        )
        .unwrap();
        let minutes = |m: u64| SimDuration::from_secs(60 * m);
        assert_eq!(
            script,
            vec![
                Operation {
                    at: minutes(1),
                    kind: OperationKind::AddNode { node: 3 }
                },
                Operation {
                    at: minutes(1),
                    kind: OperationKind::AddNode { node: 4 }
                },
                Operation {
                    at: minutes(5),
                    kind: OperationKind::Decommission { node: 3 }
                },
                Operation {
                    at: minutes(6),
                    kind: OperationKind::Decommission { node: 0 }
                },
            ]
        );
        assert_eq!(total_nodes(3, &script), 5);
        assert_eq!(script[2].kind.name(), "decommission");
        assert_eq!(script[2].kind.node(), 3);
        assert_eq!(
            describe(&script[..2]),
            "; actions, one at a time (each at its time or when the one before ends): add-node node 3 at 1m, add-node node 4 at 1m"
        );
        assert_eq!(describe(&[]), "");
    }

    #[test]
    fn removenode_takes_a_dead_node_only() {
        let removed = operations(
            &format!("{CRASH_2}[[action]]\nat = \"30s\"\nkind = \"removenode\"\nnode = 2\n"),
            2,
        )
        .unwrap();
        assert_eq!(removed[0].kind, OperationKind::RemoveNode { node: 2 });
        let failed_disk = "[[fault]]\nat = \"10s\"\nnodes = [1]\nkind = \"disk-fail\"\n\
                           [[action]]\nat = \"10s\"\nkind = \"removenode\"\nnode = 1\n";
        assert!(operations(failed_disk, 1).is_ok());
        for (text, up_at) in [
            // No fault at all.
            ("", "30s"),
            // The crash ended at 20 s.
            (
                "[[fault]]\nat = \"10s\"\nfor = \"10s\"\nnodes = [2]\nkind = \"crash\"\n",
                "30s",
            ),
            // Restarted at 25 s.
            (
                &format!("{CRASH_2}[[fault]]\nat = \"25s\"\nnodes = [2]\nkind = \"restart\"\n"),
                "30s",
            ),
            // Another node crashed.
            (
                "[[fault]]\nat = \"10s\"\nnodes = [1]\nkind = \"crash\"\n",
                "30s",
            ),
        ] {
            let error = operations(
                &format!("{text}[[action]]\nat = \"{up_at}\"\nkind = \"removenode\"\nnode = 2\n"),
                1,
            )
            .unwrap_err();
            assert!(
                error.contains(&format!(
                    "field `action[0].node`: removenode removes a dead node: node 2 is up at {up_at} (crash it or fail its disk first)"
                )),
                "{text:?}: {error}"
            );
        }
    }

    #[test]
    fn faults_may_name_added_nodes_but_no_node_beyond() {
        let add = "[[action]]\nat = \"1m\"\nkind = \"add-node\"\n";
        let (faults, script) = resolved(
            &format!("{add}[[fault]]\nat = \"2m\"\nfor = \"1m\"\nnodes = [3]\nkind = \"crash\"\n"),
            1,
        )
        .unwrap();
        assert_eq!(faults[0].kind, FaultKind::Crash { nodes: vec![3] });
        assert_eq!(total_nodes(3, &script), 4);
        let error = resolved(
            &format!("{add}[[fault]]\nat = \"2m\"\nnodes = [4]\nkind = \"crash\"\n"),
            1,
        )
        .unwrap_err();
        assert!(
            error.starts_with(
                "ops.toml:14: field `fault[0].nodes`: node 4 does not exist: the cluster's nodes are 0..3 (3 from the start, 1 added by [[action]])"
            ),
            "{error}"
        );
        // Random faults keep to the nodes there from the start.
        let random = scenario(&format!(
            "{add}[faults.random]\nper_node_hour = 10\nkinds = [\"crash\"]\n"
        ))
        .unwrap();
        let drawn =
            crate::faults::resolve(&random, 3, 4, 1, Some(SimDuration::from_secs(3600))).unwrap();
        assert!(!drawn.is_empty());
        assert!(drawn
            .iter()
            .all(|fault| fault.kind.nodes().iter().all(|&node| node < 3)));
    }

    #[test]
    fn mistakes_are_one_line_errors_naming_the_action_and_key() {
        let add = "[[action]]\nat = \"1m\"\nkind = \"add-node\"\n";
        for (text, rf, expected) in [
            (
                "[[action]]\nat = \"1m\"\nkind = \"bootstrap\"\n".to_string(),
                1,
                "ops.toml:11: field `action[0].kind`: unknown action kind `bootstrap`; expected one of add-node, decommission, removenode",
            ),
            (
                format!("{add}[[action]]\nat = \"30s\"\nkind = \"add-node\"\n"),
                1,
                "ops.toml:13: field `action[1].at`: 30s is before action[0]'s 1m: actions run one at a time in the order written, so their `at`s must not decrease",
            ),
            (
                format!("{add}[[action]]\nat = \"2m\"\nkind = \"add-node\"\nnode = 5\n"),
                1,
                "ops.toml:15: field `action[1].node`: node 5: this add-node's node gets id 4, the next fresh one (3 nodes at the start, then one per add-node in order)",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"add-node\"\ninstance = \"i3.xlarge\"\n".to_string(),
                1,
                "ops.toml:12: field `action[0].instance`: every node runs the cluster's instance (`cluster.instance` = i3.large); a node of another instance is not simulated",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"add-node\"\ninstance = { base = \"i3.large\", memory = \"8GiB\" }\n".to_string(),
                1,
                "ops.toml:12: field `action[0].instance`: every node runs the cluster's instance",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"decommission\"\n".to_string(),
                1,
                "ops.toml: field `action[0].node`: a `decommission` needs `node`, the node that leaves",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"decommission\"\nnode = 3\n".to_string(),
                1,
                "ops.toml:12: field `action[0].node`: node 3 is not in the cluster at this point of the script: its nodes so far are 0 to 2",
            ),
            (
                // Node 3 is added only later.
                format!("[[action]]\nat = \"1m\"\nkind = \"decommission\"\nnode = 3\n{add}"),
                1,
                "ops.toml:12: field `action[0].node`: node 3 is not in the cluster at this point of the script",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"decommission\"\nnode = 1\n[[action]]\nat = \"2m\"\nkind = \"decommission\"\nnode = 1\n".to_string(),
                1,
                "ops.toml:16: field `action[1].node`: node 1 already left the cluster by action[0] (decommission)",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"decommission\"\nnode = 1\n".to_string(),
                3,
                "ops.toml:12: field `action[0].node`: a `decommission` of node 1 would leave 2 nodes for replication factor 3: not enough nodes to keep the replication factor",
            ),
            (
                format!("{CRASH_2}[[action]]\nat = \"1m\"\nkind = \"removenode\"\nnode = 2\n"),
                3,
                "ops.toml:16: field `action[0].node`: a `removenode` of node 2 would leave 2 nodes for replication factor 3",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"decommission\"\nnode = 1\ninstance = \"i3.large\"\n".to_string(),
                1,
                "ops.toml:13: field `action[0].instance`: a `decommission` has no `instance`: it acts on a node already in the cluster",
            ),
            (
                "[[action]]\nat = \"1m\"\nkind = \"add-node\"\nnodes = [3]\n".to_string(),
                1,
                "ops.toml:12: field `action[0].nodes`: unknown field `nodes`",
            ),
            (
                "[[action]]\nat = \"soon\"\nkind = \"add-node\"\n".to_string(),
                1,
                "ops.toml:10: field `action[0].at`",
            ),
        ] {
            let error = operations(&text, rf).unwrap_err();
            assert!(
                error.starts_with(expected) && !error.contains('\n'),
                "{text:?}: {error}"
            );
        }
        // With the node added first, its decommission is accepted.
        let script = operations(
            &format!("{add}[[action]]\nat = \"2m\"\nkind = \"decommission\"\nnode = 3\n"),
            3,
        )
        .unwrap();
        assert_eq!(script[1].kind, OperationKind::Decommission { node: 3 });
    }

    #[test]
    fn the_run_plan_carries_the_script_and_its_line_describes_it() {
        let scenario = scenario(
            "[[action]]\nat = \"1m\"\nkind = \"add-node\"\n\
             [[fault]]\nat = \"2m\"\nnodes = [3]\nkind = \"crash\"\n\
             [[action]]\nat = \"3m\"\nkind = \"removenode\"\nnode = 3\n",
        )
        .unwrap();
        let plan = crate::plan::resolve(&scenario, &Default::default()).unwrap();
        assert_eq!(
            plan.operations.iter().map(|o| o.kind).collect::<Vec<_>>(),
            vec![
                OperationKind::AddNode { node: 3 },
                OperationKind::RemoveNode { node: 3 }
            ]
        );
        assert!(
            plan.describe().ends_with(
                "; fault[0]: crash nodes 3 from 2m to the end; actions, one at a time (each at its time or when the one before ends): add-node node 3 at 1m, removenode node 3 at 3m"
            ),
            "{}",
            plan.describe()
        );
    }

    #[test]
    fn random_actions_follow_the_seed_the_members_and_the_replication_factor() {
        let section = "[actions.random]\nkinds = [\"add-node\", \"decommission\", \"removenode\"]\ncount = 4\nwithin = \"10m\"\n";
        let mut kinds = std::collections::BTreeMap::new();
        for seed in 1..=200 {
            let (faults, script) = resolved_with_seed(section, 3, seed).unwrap();
            assert_eq!(
                script,
                resolved_with_seed(section, 3, seed).unwrap().1,
                "seed {seed}"
            );
            assert_eq!(script.len(), 4);
            // Replayed as the script it is: never fewer than RF members,
            // times in order within the window (a removenode's 10 s after).
            let mut members: Vec<u32> = (0..3).collect();
            let mut next = 3;
            for (index, operation) in script.iter().enumerate() {
                assert!(operation.at <= SimDuration::from_secs(600 + 10 * index as u64));
                assert!(index == 0 || script[index - 1].at <= operation.at);
                *kinds.entry(operation.kind.name()).or_insert(0) += 1;
                match operation.kind {
                    OperationKind::AddNode { node } => {
                        assert_eq!(node, next);
                        next += 1;
                        members.push(node);
                    }
                    OperationKind::Decommission { node } | OperationKind::RemoveNode { node } => {
                        members.retain(|&member| member != node);
                        assert!(members.len() >= 3, "seed {seed}: {script:?}");
                    }
                }
                if let OperationKind::RemoveNode { node } = operation.kind {
                    assert!(faults.iter().any(|fault| fault.lasts.is_none()
                        && fault.at + REMOVENODE_AFTER_CRASH == operation.at
                        && fault.kind == FaultKind::Crash { nodes: vec![node] }));
                }
            }
        }
        // 3 nodes at RF 3: the first is always an add-node; then all
        // three kinds come up.
        assert!(kinds.values().all(|&count| count > 100), "{kinds:?}");
        assert_ne!(
            resolved_with_seed(section, 3, 1).unwrap().1,
            resolved_with_seed(section, 3, 2).unwrap().1
        );
    }

    #[test]
    fn random_action_mistakes_are_one_line_errors() {
        let error = |text: &str| resolved(text, 3).unwrap_err();
        let cases = [
            (
                "kinds = [\"decommission\"]\n",
                "field `actions.random.kinds`: none of decommission can be drawn: 3 members and replication factor 3 leave no node that may leave (add `add-node`)",
            ),
            (
                "kinds = [\"grow\"]\n",
                "field `actions.random.kinds`: unknown action kind `grow`; expected one of add-node, decommission, removenode",
            ),
            (
                "count = 0\n",
                "field `actions.random.count`: draws no action; leave the section out",
            ),
            (
                "count = 101\n",
                "field `actions.random.count`: 101 actions is more than 100 (each waits 30 s of ring delay before its data moves)",
            ),
            (
                "within = \"2h\"\n",
                "field `actions.random.within`: 2h is not within the run's 1h",
            ),
        ];
        for (text, expected) in cases {
            let message = error(&format!("[actions.random]\n{text}"));
            assert!(message.ends_with(expected), "{message}");
        }
        assert!(
            error("[[action]]\nat = \"1m\"\nkind = \"add-node\"\n[actions.random]\n")
                .contains("draws the whole script")
        );
    }
}
