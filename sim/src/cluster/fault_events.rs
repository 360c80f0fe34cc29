//! The fault timeline at run time: each `[[fault]]` starts and ends as an
//! event, a flap switches its nodes' network off and on, and each change
//! is set on the NICs it touches (`crate::faults::network` composes them)
//! and written to the event log.

use units::SimTime;

use super::{Event, Simulation};
use crate::events::What;
use crate::faults::network::Switch;
use crate::faults::FaultKind;

impl Simulation {
    /// Schedules the start of every fault of the plan.
    pub(super) fn schedule_faults(&mut self) {
        for (index, fault) in self.plan.faults.iter().enumerate() {
            self.kernel.schedule_at(
                SimTime::ZERO + fault.at,
                Event::FaultStarts {
                    fault: index as u32,
                },
            );
        }
    }

    pub(super) fn fault_starts(&mut self, now: SimTime, index: u32) {
        let fault = self.plan.faults[index as usize].clone();
        self.fault_state[index as usize].0 = true;
        self.event_log.record(
            now,
            What::FaultStart {
                fault: index,
                kind: fault.kind.name(),
                nodes: fault.kind.nodes(),
            },
        );
        if let Some(lasts) = fault.lasts {
            self.kernel
                .schedule_at(now + lasts, Event::FaultEnds { fault: index });
        }
        match &fault.kind {
            FaultKind::Flap { .. } => self.flap_switch(now, index, true),
            FaultKind::Crash { nodes } => {
                for &node in nodes {
                    self.crash_hold(now, node);
                }
            }
            FaultKind::Restart { nodes } => {
                for &node in nodes {
                    self.restart_fault(now, node);
                }
            }
            FaultKind::SlowDisk { nodes, slowdown } => {
                for &node in nodes {
                    self.slow_disk(node, *slowdown, true);
                }
            }
            FaultKind::DiskFail { nodes } => {
                for &node in nodes {
                    self.disk_fails(now, node);
                }
            }
            kind => self.switch(Switch::Fault(kind), true),
        }
    }

    pub(super) fn fault_ends(&mut self, now: SimTime, index: u32) {
        let fault = self.plan.faults[index as usize].clone();
        let (_, cut) = self.fault_state[index as usize];
        match &fault.kind {
            FaultKind::Flap { nodes, .. } => {
                if cut {
                    self.switch(Switch::Cut(nodes), false);
                    self.event_log.record(
                        now,
                        What::NetworkOn {
                            fault: index,
                            nodes: nodes.clone(),
                        },
                    );
                }
            }
            FaultKind::Crash { nodes } => {
                for &node in nodes {
                    self.crash_release(now, node);
                }
            }
            FaultKind::SlowDisk { nodes, slowdown } => {
                for &node in nodes {
                    self.slow_disk(node, *slowdown, false);
                }
            }
            FaultKind::Restart { .. } | FaultKind::DiskFail { .. } => {
                unreachable!("restarts and disk failures have no end")
            }
            kind => self.switch(Switch::Fault(kind), false),
        }
        self.fault_state[index as usize] = (false, false);
        self.event_log.record(
            now,
            What::FaultEnd {
                fault: index,
                kind: fault.kind.name(),
                nodes: fault.kind.nodes(),
            },
        );
    }

    /// Flap `index` turns its nodes' network off (`off`) or on, and
    /// schedules its next switch; a switch due after the flap ended does
    /// nothing.
    pub(super) fn flap_switch(&mut self, now: SimTime, index: u32, off: bool) {
        let (active, cut) = self.fault_state[index as usize];
        if !active || cut == off {
            return;
        }
        let FaultKind::Flap {
            nodes,
            on,
            off: cut_for,
        } = self.plan.faults[index as usize].kind.clone()
        else {
            unreachable!("only flaps switch");
        };
        self.switch(Switch::Cut(&nodes), off);
        self.fault_state[index as usize].1 = off;
        let (next, what) = if off {
            (
                now + cut_for,
                What::NetworkOff {
                    fault: index,
                    nodes,
                },
            )
        } else {
            (
                now + on,
                What::NetworkOn {
                    fault: index,
                    nodes,
                },
            )
        };
        self.event_log.record(now, what);
        self.kernel.schedule_at(
            next,
            Event::FlapSwitch {
                fault: index,
                off: !off,
            },
        );
    }

    /// Switches `what` on or off and sets the NIC faults of the nodes it
    /// changed.
    pub(super) fn switch(&mut self, what: Switch<'_>, on: bool) {
        for node in self.network_faults.apply(what, on) {
            let faults = self.network_faults.nic_faults(node);
            self.nodes[node as usize].nic.set_faults(faults);
        }
    }
}
