//! The network faults in force at a moment, composed from every fault that
//! is active: what each node's NIC suffers ([`NicFaults`]) and which links
//! between nodes are cut.
//!
//! A fault switches on and off as a whole ([`NetworkFaults::apply`]); a
//! flap's cuts and restorations are switches too. Overlaps compose: a node
//! is cut while any of its cuts is on, a link while any partition covers
//! it, independent loss probabilities combine as `1 - prod(1 - p)`,
//! bandwidth factors multiply. Everything is counted, not flagged, so that
//! one fault ending never heals what another still holds.

use std::collections::BTreeMap;

use models::network::NicFaults;

use super::FaultKind;

/// One node's share of the faults in force.
#[derive(Clone, Debug, Default)]
struct NodeFaults {
    /// Cuts in force (flaps that are off).
    cuts: u32,
    /// Loss probabilities in force, one per drop fault.
    drops: Vec<f64>,
    /// Bandwidth factors in force, one per degradation.
    factors: Vec<f64>,
}

/// The network faults in force.
#[derive(Clone, Debug)]
pub struct NetworkFaults {
    nodes: Vec<NodeFaults>,
    /// Cut links between nodes `(low, high)`, with how many partitions cut
    /// each.
    links: BTreeMap<(u32, u32), u32>,
}

/// What switches on or off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Switch<'a> {
    /// A partition, drop or degradation as a whole.
    Fault(&'a FaultKind),
    /// One cut of a flap: the nodes' network off.
    Cut(&'a [u32]),
}

impl NetworkFaults {
    /// No faults, for a cluster of `nodes` nodes.
    pub fn new(nodes: u32) -> NetworkFaults {
        NetworkFaults {
            nodes: vec![NodeFaults::default(); nodes as usize],
            links: BTreeMap::new(),
        }
    }

    /// Switches `what` on (`on`) or off; returns the nodes whose NIC faults
    /// changed (the caller sets them, [`NetworkFaults::nic_faults`]).
    pub fn apply(&mut self, what: Switch<'_>, on: bool) -> Vec<u32> {
        match what {
            Switch::Cut(nodes) => {
                for &node in nodes {
                    let faults = &mut self.nodes[node as usize];
                    if on {
                        faults.cuts += 1;
                    } else {
                        assert!(faults.cuts > 0, "node {node} healed more often than cut");
                        faults.cuts -= 1;
                    }
                }
                nodes.to_vec()
            }
            Switch::Fault(FaultKind::Partition { side, other }) => {
                for &a in side {
                    for &b in other {
                        let link = (a.min(b), a.max(b));
                        if on {
                            *self.links.entry(link).or_insert(0) += 1;
                        } else {
                            let count = self
                                .links
                                .get_mut(&link)
                                .expect("a partition heals only links it cut");
                            *count -= 1;
                            if *count == 0 {
                                self.links.remove(&link);
                            }
                        }
                    }
                }
                Vec::new()
            }
            Switch::Fault(FaultKind::Drop { nodes, probability }) => {
                for &node in nodes {
                    edit(&mut self.nodes[node as usize].drops, *probability, on);
                }
                nodes.clone()
            }
            Switch::Fault(FaultKind::NicDegrade { nodes, factor }) => {
                for &node in nodes {
                    edit(&mut self.nodes[node as usize].factors, *factor, on);
                }
                nodes.clone()
            }
            Switch::Fault(FaultKind::Flap { .. }) => {
                unreachable!("a flap switches by its cuts")
            }
            Switch::Fault(
                FaultKind::Crash { .. }
                | FaultKind::Restart { .. }
                | FaultKind::SlowDisk { .. }
                | FaultKind::DiskFail { .. },
            ) => unreachable!("node and disk faults cut a node's network by `Switch::Cut`"),
        }
    }

    /// What node `node`'s NIC suffers now.
    pub fn nic_faults(&self, node: u32) -> NicFaults {
        let faults = &self.nodes[node as usize];
        NicFaults {
            cut: faults.cuts > 0,
            drop_probability: 1.0 - faults.drops.iter().map(|p| 1.0 - p).product::<f64>(),
            // Overlapping degradations multiply, clamped to the model's
            // bound.
            bandwidth_factor: faults
                .factors
                .iter()
                .product::<f64>()
                .max(NicFaults::MIN_BANDWIDTH_FACTOR),
        }
    }

    /// Whether nodes `a` and `b` can reach each other (their NICs aside).
    #[inline]
    pub fn connected(&self, a: u32, b: u32) -> bool {
        self.links.is_empty() || !self.links.contains_key(&(a.min(b), a.max(b)))
    }
}

/// Adds `value` to `list` (`on`) or takes one equal to it out.
fn edit(list: &mut Vec<f64>, value: f64, on: bool) {
    if on {
        list.push(value);
    } else {
        let position = list
            .iter()
            .position(|held| *held == value)
            .expect("a fault switches off only what it switched on");
        list.remove(position);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_faults_compose_and_one_ending_leaves_the_other() {
        let mut faults = NetworkFaults::new(3);
        let partition = FaultKind::Partition {
            side: vec![0],
            other: vec![1, 2],
        };
        let narrow = FaultKind::Partition {
            side: vec![0],
            other: vec![1],
        };
        faults.apply(Switch::Fault(&partition), true);
        faults.apply(Switch::Fault(&narrow), true);
        assert!(!faults.connected(1, 0) && !faults.connected(0, 2));
        assert!(faults.connected(1, 2));
        faults.apply(Switch::Fault(&partition), false);
        assert!(!faults.connected(0, 1), "the narrow one still holds");
        assert!(faults.connected(0, 2));
        faults.apply(Switch::Fault(&narrow), false);
        assert!(faults.connected(0, 1));

        let drop = |p| FaultKind::Drop {
            nodes: vec![2],
            probability: p,
        };
        let degrade = FaultKind::NicDegrade {
            nodes: vec![2],
            factor: 0.5,
        };
        assert_eq!(faults.apply(Switch::Fault(&drop(0.5)), true), [2]);
        faults.apply(Switch::Fault(&drop(0.2)), true);
        faults.apply(Switch::Fault(&degrade), true);
        faults.apply(Switch::Fault(&degrade), true);
        faults.apply(Switch::Cut(&[2]), true);
        faults.apply(Switch::Cut(&[2]), true);
        faults.apply(Switch::Cut(&[2]), false);
        let now = faults.nic_faults(2);
        assert!(now.cut, "one cut still holds");
        assert!((now.drop_probability - 0.6).abs() < 1e-12, "1 - 0.5 x 0.8");
        assert_eq!(now.bandwidth_factor, 0.25);
        faults.apply(Switch::Fault(&drop(0.5)), false);
        faults.apply(Switch::Cut(&[2]), false);
        let now = faults.nic_faults(2);
        assert!(!now.cut);
        assert!((now.drop_probability - 0.2).abs() < 1e-12);
        assert_eq!(faults.nic_faults(0), NicFaults::default());
    }
}
