//! The shard's hinted handoff: writing a hint for a replica that is down
//! or did not answer, and replaying hints when it is back
//! ([`crate::hints`] keeps the logs and decides; this file runs the CPU
//! work, I/O and messages).
//!
//! A hint is written by a CPU task in the statement group (the write
//! handler writes it before it returns), its log's bytes go to disk in the
//! commitlog's I/O class (Scylla's hint logs are commitlogs), and replay
//! reads them back in the streaming I/O class and sends each hint as a
//! write from the streaming scheduling group. A replayed hint is an
//! operation of the coordinator like a client write at consistency level
//! ONE to the one replica, under a request id with [`HINT_REPLAY`] set, so
//! its acknowledgement and its timeout come back through the coordinator.

use super::{mutation_bytes, IoPurpose, Shard, TaskPurpose};
use crate::action::{Action, CpuTask, CpuWork, IoClass, IoKind, RequestId, SchedulingGroup};
use crate::commitlog::ENTRY_OVERHEAD_BYTES;
use crate::coordinator::{DeadlineKind, Mutation, MAX_REPLICAS};
use crate::hints::{Hint, HintsManager, HintsWork};
use slab::Slab;
use units::SimTime;

/// Marks the request id of a hint's replay (client ids stay below it): the
/// rest is the slot of the send in the handoff's `sends`.
pub const HINT_REPLAY: u64 = 1 << 63;

/// A shard's hints and the replay sends in flight.
#[derive(Debug)]
pub(super) struct Handoff {
    pub(super) manager: HintsManager,
    /// Replay sends in flight: destination, segment and position.
    sends: Slab<(u32, u32, u32)>,
    /// Work the manager asked for, kept between calls.
    work: Vec<HintsWork>,
    /// Data mode: (key, node, timestamp) of the hints replayed while their
    /// node was still pending for the key (joining, or gaining the range),
    /// which went to the natural replicas instead: that node misses the
    /// write until a repair (checkers count it apart).
    pub(super) redirected_from_pending: Vec<(u64, u32, u64)>,
}

impl Handoff {
    pub(super) fn new(manager: HintsManager) -> Handoff {
        Handoff {
            manager,
            sends: Slab::new(),
            work: Vec::new(),
            redirected_from_pending: Vec::new(),
        }
    }
}

impl Shard {
    /// Data mode: (key, node, timestamp) of every hint this shard replayed
    /// to the natural replicas because its node was still pending for the
    /// key, in replay order (empty without hints or in volume mode).
    pub fn hints_redirected_from_pending(&self) -> &[(u64, u32, u64)] {
        self.handoff
            .as_ref()
            .map_or(&[], |handoff| &handoff.redirected_from_pending)
    }

    /// Every hint this shard holds that its replica has not acknowledged,
    /// with the replica's node (see `HintsManager::unsent`).
    pub fn unsent_hints(&self) -> Vec<(u32, crate::hints::Hint)> {
        self.handoff
            .as_ref()
            .map_or_else(Vec::new, |handoff| handoff.manager.unsent())
    }

    /// Writes a hint of the write of `key` for replica node `node`, unless
    /// the preset keeps none or the node has been down past the window.
    pub(super) fn hint(&mut self, now: SimTime, node: u32, mutation: Mutation) {
        let Mutation {
            key,
            value_bytes,
            timestamp,
            rows,
        } = mutation;
        debug_assert_ne!(node, self.config.address.node, "a hint for its own node");
        let Some(handoff) = self.handoff.as_mut() else {
            return;
        };
        if !handoff.manager.can_hint(now, node) {
            handoff.manager.hint_dropped(now, node);
            return;
        }
        let bytes = mutation_bytes(value_bytes) + ENTRY_OVERHEAD_BYTES;
        let hint = Hint {
            key,
            timestamp,
            value_bytes,
            rows,
            bytes: u32::try_from(bytes).expect("a hint fits its 32-bit size"),
        };
        let task = self.new_task(TaskPurpose::HintWrite { node, hint });
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Statement,
            work: CpuWork::HintWrite { bytes },
        }));
    }

    /// A hint's serialization finished: it goes into its log.
    pub(super) fn hint_serialized(&mut self, now: SimTime, node: u32, hint: Hint) {
        debug_assert!(hint.bytes > 0, "an empty hint");
        let handoff = self.handoff.as_mut().expect("hints are kept");
        let mut work = std::mem::take(&mut handoff.work);
        handoff.manager.store(now, node, hint, &mut work);
        self.hints_work(work);
    }

    /// Lets the hint logs do what is due (flushes, reads, sends).
    pub(super) fn pump_hints(&mut self, now: SimTime) {
        let Some(handoff) = self.handoff.as_mut() else {
            return;
        };
        let mut work = std::mem::take(&mut handoff.work);
        handoff.manager.poll(now, &mut work);
        self.hints_work(work);
    }

    /// Turns what the hint logs asked for into I/O and CPU tasks.
    fn hints_work(&mut self, mut work: Vec<HintsWork>) {
        for item in work.drain(..) {
            match item {
                HintsWork::Write {
                    node,
                    segment,
                    bytes,
                } => self.submit_io(
                    IoKind::Write,
                    bytes,
                    IoClass::Commitlog,
                    IoPurpose::HintWrite { node, segment },
                ),
                HintsWork::Read {
                    node,
                    segment,
                    bytes,
                } => self.submit_io(
                    IoKind::Read,
                    bytes,
                    IoClass::Streaming,
                    IoPurpose::HintRead {
                        node,
                        segment,
                        bytes,
                    },
                ),
                HintsWork::Send {
                    node,
                    segment,
                    position,
                    hint,
                } => {
                    let handoff = self.handoff.as_mut().expect("hints are kept");
                    let slot = handoff.sends.insert((node, segment, position)) as u64;
                    let task = self.new_task(TaskPurpose::HintSend { slot, hint });
                    self.actions.push_back(Action::RunCpu(CpuTask {
                        id: task,
                        group: SchedulingGroup::Streaming,
                        work: CpuWork::HintSend {
                            bytes: u64::from(hint.bytes),
                        },
                    }));
                }
            }
        }
        let handoff = self.handoff.as_mut().expect("hints are kept");
        handoff.work = work;
        self.hints_wake = handoff.manager.next_deadline();
    }

    /// A hint is decoded: it goes to its replica as a write at ONE. If
    /// its destination is not a natural replica of the key (the ring
    /// changed: a join it was pending for was given up, or it left; or it
    /// is still pending, joining), it goes to every natural replica and
    /// waits for them all, as Scylla 3.0's hint sender does
    /// (`send_one_mutation`: `mutate` at ALL when the endpoint is not a
    /// natural one). A pending destination thus misses the write.
    pub(super) fn send_hint(&mut self, now: SimTime, slot: u64, hint: Hint) {
        let handoff = self.handoff.as_ref().expect("hints are kept");
        let node = handoff.sends[slot as usize].0;
        let mut replicas = [self.config.address; MAX_REPLICAS];
        let count = self.config.placement.replicas(hint.key, &mut replicas);
        let (first, last) = match replicas[..count]
            .iter()
            .position(|replica| replica.node == node)
        {
            // The planted bug sends it to the key's next replica.
            Some(position)
                if self
                    .config
                    .planted
                    .has(crate::planted::PlantedBug::HintToWrongNode) =>
            {
                let wrong = (position + 1) % count;
                (wrong, wrong + 1)
            }
            Some(position) => (position, position + 1),
            None => {
                let token = crate::placement::key_token(hint.key);
                if self.config.data_mode
                    && self.config.placement.pending_nodes(token).contains(&node)
                {
                    self.handoff
                        .as_mut()
                        .expect("hints are kept")
                        .redirected_from_pending
                        .push((hint.key, node, hint.timestamp));
                }
                (0, count)
            }
        };
        let targets = &replicas[first..last];
        let mutation = Mutation {
            key: hint.key,
            value_bytes: hint.value_bytes,
            timestamp: hint.timestamp,
            rows: hint.rows,
        };
        let id = self.coordinator.open_write(
            RequestId(HINT_REPLAY | slot),
            mutation,
            targets,
            targets.len() as u32,
        );
        self.coordinator.arm_deadline(
            DeadlineKind::Write,
            super::deadline(now, self.config.write_timeout),
            id,
        );
        for &replica in &replicas[first..last] {
            self.send_write(now, replica, id, mutation);
        }
    }

    /// A replayed hint was acknowledged (`delivered`) or timed out.
    pub(super) fn hint_replayed(&mut self, now: SimTime, request: RequestId, delivered: bool) {
        debug_assert!(request.0 & HINT_REPLAY != 0);
        let handoff = self.handoff.as_mut().expect("hints are kept");
        let (node, segment, position) = handoff.sends.remove((request.0 & !HINT_REPLAY) as usize);
        if delivered {
            handoff.manager.send_done(now, node, segment, position);
        } else {
            handoff.manager.send_failed(now, node, segment);
        }
        self.pump_hints(now);
    }

    /// A hint log's write I/O completed.
    pub(super) fn hint_written(&mut self, now: SimTime, node: u32, segment: u32) {
        let handoff = self.handoff.as_mut().expect("hints are kept");
        handoff.manager.write_done(node, segment);
        self.pump_hints(now);
    }

    /// A replay read completed.
    pub(super) fn hint_read(&mut self, now: SimTime, node: u32, segment: u32, bytes: u64) {
        debug_assert!(bytes > 0, "an empty hint read");
        let handoff = self.handoff.as_mut().expect("hints are kept");
        handoff.manager.read_done(node, segment, bytes);
        self.pump_hints(now);
    }
}
