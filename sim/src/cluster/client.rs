//! The cassandra-stress processes at run time: their loads start, their
//! threads issue operations at the pace their rate plan sets, requests go
//! out over the loader's NIC to the coordinator the driver picks, and each
//! reply or client timeout completes, retries or fails an attempt.

use super::*;

use models::jvm::HANDOFF_COST;

use crate::metrics::OpDelta;

/// Hand-offs between a c-s process's threads before a request leaves: the
/// c-s thread to its connection's Netty event loop (`models::wakeup`).
const REQUEST_HANDOFFS: u32 = 1;

/// Hand-offs after a reply arrives: the socket wakes the event loop, and
/// the event loop completes the future the c-s thread is parked on.
const REPLY_HANDOFFS: u32 = 2;

impl Simulation {
    pub(super) fn start_load(&mut self, now: SimTime, load: u32) {
        let stop = self.plan.loads[load as usize].stop;
        let state = &mut self.loads[load as usize];
        state.started_at = Some(now);
        state.header_pending = true;
        for process in 0..self.processes.len() {
            if self.processes[process].load != load {
                continue;
            }
            let state = &mut self.processes[process];
            state.schedule = Schedule::new(state.rate, now).with_phase(state.pacer_phase);
            state.stop_at = match stop {
                StopPlan::Duration(duration) => Some(now + duration),
                // Set when the load's rate is certain enough.
                StopPlan::Count(_) | StopPlan::Uncertainty { .. } => None,
            };
            let process = process as u32;
            match state.threads {
                Some(threads) => {
                    state.issuers_running = threads;
                    for _ in 0..threads {
                        self.kernel.schedule_at(now, Event::ThreadReady { process });
                    }
                }
                None => {
                    // The first arrival is where the pacer's phase puts it.
                    state.issuers_running = 1;
                    let (first, _) = state.schedule.peek();
                    let first = self.plan.loads[load as usize].client.start_at(now, first);
                    self.kernel
                        .schedule_at(first, Event::OpenLoopArrival { process });
                }
            }
        }
    }

    /// True when `process` has issued everything its load asks for, or
    /// an operation's failure ended it.
    pub(super) fn process_done(&self, now: SimTime, process: &ClientProcess) -> bool {
        if process.failed_at.is_some() {
            return true;
        }
        match self.plan.loads[process.load as usize].stop {
            StopPlan::Count(_) => process.issued >= process.operations,
            StopPlan::Duration(_) | StopPlan::Uncertainty { .. } => {
                process.stop_at.is_some_and(|stop| now >= stop)
            }
        }
    }

    /// Reserves the next operation of `process`: returns (when to issue it,
    /// its latency origin), or `None` after stopping the issuer if the load
    /// has issued everything it asks for.
    pub(super) fn reserve_next(
        &mut self,
        now: SimTime,
        process_index: u32,
    ) -> Option<(SimTime, SimTime)> {
        if self.process_done(now, &self.processes[process_index as usize]) {
            self.stop_issuer(now, process_index);
            return None;
        }
        let process = &mut self.processes[process_index as usize];
        process.issued += 1;
        Some(process.schedule.reserve(now))
    }

    /// A thread is free: issue its next operation (now or at its scheduled
    /// time), or stop.
    pub(super) fn issue(&mut self, now: SimTime, process_index: u32) {
        let Some((start, measured_from)) = self.reserve_next(now, process_index) else {
            return;
        };
        let process = &self.processes[process_index as usize];
        let issue_at = self.plan.loads[process.load as usize]
            .client
            .start_at(now, start);
        // Measured from the actual start unless the rate measures from the
        // intended one (`fixed=`).
        let measured_from = if process.schedule.measures_from_intended() {
            measured_from
        } else {
            issue_at
        };
        if issue_at > now {
            self.kernel.schedule_at(
                issue_at,
                Event::Issue {
                    process: process_index,
                    measured_from,
                },
            );
        } else {
            self.send_request(now, process_index, measured_from);
        }
    }

    /// The open-loop generator's next operation is due now.
    pub(super) fn open_loop_arrival(&mut self, now: SimTime, process_index: u32) {
        let Some((due, _)) = self.reserve_next(now, process_index) else {
            return;
        };
        debug_assert!(due <= now, "an arrival comes at or after its due time");
        // Sent first: a batch's partitions are charged to the schedule
        // before the next arrival is read from it.
        self.send_request(now, process_index, due);
        let process = &self.processes[process_index as usize];
        let (next, _) = process.schedule.peek();
        let arrival = self.plan.loads[process.load as usize]
            .client
            .start_at(now, next);
        self.kernel.schedule_at(
            arrival,
            Event::OpenLoopArrival {
                process: process_index,
            },
        );
    }

    /// One more (`up`) or one fewer operation outstanding on
    /// `process_index`, keeping count of the processes whose every thread
    /// waits on a reply.
    pub(super) fn change_in_flight(&mut self, now: SimTime, process_index: u32, up: bool) {
        let process = &mut self.processes[process_index as usize];
        let threads = process.threads;
        let before = process.in_flight;
        if up {
            process.in_flight += 1;
        } else {
            process.in_flight = before
                .checked_sub(1)
                .expect("an operation completes only once it was outstanding");
        }
        let Some(threads) = threads else {
            return; // a pure open loop has no threads to run out of
        };
        let (was, is) = (before >= threads, process.in_flight >= threads);
        if was != is {
            if is {
                process.stalled_since = Some(now);
            } else if let Some(since) = process.stalled_since.take() {
                process.stalled_time = process.stalled_time + (now - since);
            }
        }
    }

    /// The processes' stalled time since the last tick, up to `now`, and
    /// starts the next tick's count (each process counts its own; the sum
    /// is order-free).
    pub(super) fn take_stalled_time(&mut self, now: SimTime) -> SimDuration {
        let mut total = SimDuration::ZERO;
        for process in &mut self.processes {
            if let Some(since) = process.stalled_since.as_mut() {
                process.stalled_time = process.stalled_time + (now - *since);
                *since = now;
            }
            total = total + std::mem::replace(&mut process.stalled_time, SimDuration::ZERO);
        }
        total
    }

    pub(super) fn stop_issuer(&mut self, now: SimTime, process_index: u32) {
        let process = &mut self.processes[process_index as usize];
        process.issuers_running -= 1;
        self.maybe_finish_load(now, process_index);
    }

    /// A load is finished once every process stopped issuing and every
    /// operation it issued was answered; loads waiting on it start then.
    pub(super) fn maybe_finish_load(&mut self, now: SimTime, process_index: u32) {
        let load = self.processes[process_index as usize].load;
        if self.loads[load as usize].finished {
            return;
        }
        let idle = self
            .processes
            .iter()
            .filter(|process| process.load == load)
            .all(|process| process.issuers_running == 0 && process.in_flight == 0);
        if !idle {
            return;
        }
        self.finish_load(now, load as usize);
    }

    /// Load `load` is finished, or is a step of a thread search that
    /// stopped before it and will never run: the loads waiting on it
    /// start, except the search's next step, which starts (after c-s's
    /// pause) only if the search goes on and is otherwise passed over too.
    fn finish_load(&mut self, now: SimTime, load: usize) {
        debug_assert!(!self.loads[load].finished, "load {load} finishes once");
        // Its figures are read now (a thread search's rate).
        self.absorb_op_deltas();
        self.loads[load].finished = true;
        self.loads_unfinished -= 1;
        let failed = self.load_failures(load);
        let goes_on = self.loads[load].started_at.is_some()
            && self.plan.loads[load].search.is_some()
            && self.search_step_done(load, !failed.is_empty());
        if let Some(first) = failed.iter().map(|&(_, at)| at).min() {
            let plan = &self.plan.loads[load];
            self.loads[load].trailer.push(format!(
                "FAILURE: in load `{}` an operation failed all {} tries and ended {} of its processes, the first at {:.3} s (c-s stops a process so unless -errors ignore)",
                plan.name,
                plan.tries,
                failed.len(),
                first.as_secs_f64()
            ));
        }
        for index in 0..self.plan.loads.len() {
            if self.plan.loads[index].start != StartPlan::After(load) {
                continue;
            }
            match &self.plan.loads[index].search {
                Some(step) if step.step > 0 => {
                    if goes_on {
                        self.kernel.schedule_at(
                            now + step.pause_before,
                            Event::LoadStart { load: index as u32 },
                        );
                    } else {
                        self.finish_load(now, index);
                    }
                }
                _ => self
                    .kernel
                    .schedule_at(now, Event::LoadStart { load: index as u32 }),
            }
        }
    }

    /// The processes of load `load` (by index among its processes) that an
    /// operation failing every try ended, and when.
    pub(super) fn load_failures(&self, load: usize) -> Vec<(u32, SimTime)> {
        self.processes
            .iter()
            .filter(|process| process.load as usize == load)
            .enumerate()
            .filter_map(|(index, process)| process.failed_at.map(|at| (index as u32, at)))
            .collect()
    }

    /// Thread-search step `load` ran to its end: its rate is kept, c-s's
    /// lines are said, and the rule decides whether the search goes on.
    /// A step in which an operation failed every try (`failed`) ends the
    /// search: c-s's step returns no result and the search stops
    /// (`runMulti` returns false).
    fn search_step_done(&mut self, load: usize, failed: bool) -> bool {
        let plan = &self.plan.loads[load];
        let step = plan.search.as_ref().expect("a search step");
        let state = &self.loads[load];
        let count: u64 = state.ops.iter().map(|ops| ops.count).sum();
        let seconds = state.window.map_or(0.0, |(first, last)| {
            let last = match (plan.stop, state.started_at) {
                (StopPlan::Duration(duration), Some(started)) => last.max(started + duration),
                _ => last,
            };
            (last - first).as_secs_f64()
        });
        let rate = if seconds > 0.0 {
            count as f64 / seconds
        } else {
            0.0
        };
        self.loads[load].search_rate = Some(rate);
        let first = load - step.step as usize;
        let rates: Vec<f64> = self.loads[first..=load]
            .iter()
            .map(|state| state.search_rate.expect("every earlier step ran"))
            .collect();
        let mut lines = Vec::new();
        if step.step > 0 {
            let before = self.plan.loads[load - 1]
                .search
                .as_ref()
                .map_or(0, |step| step.threads);
            lines.push(format!(
                "Improvement over {before} threadCount: {:.0}%",
                100.0 * crate::load::average_improvement(&rates, 1)
            ));
        }
        let next = self.plan.loads.get(load + 1).and_then(|next| {
            next.search
                .as_ref()
                .filter(|next| next.load == step.load && next.step == step.step + 1)
        });
        let goes_on = !failed
            && crate::load::search_goes_on(
                &rates,
                step.stop_at_saturation,
                plan.stop.target_uncertainty(),
            );
        match next {
            Some(next) if goes_on => {
                if next.pause_before > SimDuration::ZERO {
                    lines.push(format!(
                        "Sleeping for {}s",
                        next.pause_before.as_secs_f64()
                    ));
                }
            }
            _ => lines.push(format!(
                "Thread search of load `{}` ends after {} steps: {}",
                step.load,
                step.step + 1,
                match (next, rates.len() >= 4 && crate::load::average_improvement(&rates, 3) >= 0.0) {
                    _ if failed => "an operation of this step failed every try".to_string(),
                    (None, _) => "its next thread count would pass threads<=".to_string(),
                    (Some(_), false) => "throughput stopped improving (the last three steps' average improvement fell below 0)".to_string(),
                    (Some(_), true) => format!(
                        "the last five steps improved throughput by less than err< ({}) on average",
                        plan.stop.target_uncertainty()
                    ),
                }
            )),
        }
        self.loads[load].trailer = lines;
        goes_on && next.is_some()
    }

    /// The next key of process `process_index`'s population (with shard
    /// sampling, the next that falls on a simulated shard: the others'
    /// keys are the load the scaled-down rate leaves out).
    fn draw_key(&mut self, process_index: u32) -> u64 {
        let process = &mut self.processes[process_index as usize];
        if self.simulated_shards >= self.plan.cluster.shards_per_node {
            return process.keys.next(&mut process.rng);
        }
        let mut rejected = 0u32;
        loop {
            let key = process.keys.next(&mut process.rng);
            if self.placement.shard_of(engine::key_token(key)) < self.simulated_shards {
                return key;
            }
            rejected += 1;
            assert!(
                rejected < 1_000_000,
                "load `{}`: a million keys in a row fell on shards that are not simulated",
                self.plan.loads[process.load as usize].name
            );
        }
    }

    pub(super) fn send_request(
        &mut self,
        now: SimTime,
        process_index: u32,
        measured_from: SimTime,
    ) {
        let load_index = self.processes[process_index as usize].load as usize;
        let key = self.draw_key(process_index);
        let process = &mut self.processes[process_index as usize];
        let load = &self.plan.loads[load_index];
        let kind = process.mix.next(&load.operation, &mut process.rng);
        let (value_bytes, rows, mut batch) = match kind {
            OpKind::Write => {
                let (bytes, rows, batch) = load.columns.sample_write(key, &mut process.rng);
                (bytes as u32, rows, batch)
            }
            OpKind::Read => (0, 0, 1),
        };
        if batch > 1 {
            // c-s counts `n=` and paces its rate in partitions
            // (`takePermits`, `acquire(partitionCount)`): a batch takes
            // what is left of `n=` at most, one permit a partition.
            let extra = match load.stop {
                StopPlan::Count(_) => (batch - 1).min(
                    u32::try_from(process.operations.saturating_sub(process.issued))
                        .unwrap_or(u32::MAX),
                ),
                StopPlan::Duration(_) | StopPlan::Uncertainty { .. } => batch - 1,
            };
            batch = 1 + extra;
            process.issued += u64::from(extra);
            process.schedule.charge(extra);
        }
        // A batch's other partitions: keys drawn from the load's population
        // after the first, each with its insert's rows.
        let extra: Vec<(u64, u32, u32)> = (1..batch)
            .map(|_| {
                let key = self.draw_key(process_index);
                let process = &mut self.processes[process_index as usize];
                let load = &self.plan.loads[load_index];
                let (bytes, rows) = load.columns.sample_insert(key, &mut process.rng);
                (key, bytes as u32, rows)
            })
            .collect();
        let load_op = self.loads[load_index]
            .kinds
            .iter()
            .position(|known| *known == kind)
            .expect("the load's op kinds include its operation") as u8;
        self.change_in_flight(now, process_index, true);
        let process = &mut self.processes[process_index as usize];
        let load = &self.plan.loads[load_index];
        // With c-s's counts: partitions touched, rows written or (if
        // found) read back.
        let (operation, partitions, op_rows) = match kind {
            OpKind::Write => {
                // The Java driver's monotonic client timestamps: the clock
                // in microseconds, bumped past the last one it handed out.
                let timestamp = (now.as_nanos() / 1_000).max(process.last_timestamp + 1);
                process.last_timestamp = timestamp;
                let write = Operation::Write {
                    key,
                    value_bytes,
                    timestamp,
                    rows,
                };
                let batch_rows = extra.iter().fold(rows, |sum, &(_, _, part_rows)| {
                    sum.saturating_add(part_rows)
                });
                (write, 1 + extra.len() as u32, batch_rows)
            }
            OpKind::Read => {
                let (limit_bytes, rows_found) =
                    load.columns.sample_read_limit(key, &mut process.rng);
                (Operation::Read { key, limit_bytes }, 1, rows_found)
            }
        };
        // A batch's parts share its timestamp, as a `BATCH` statement's.
        let batch = match operation {
            Operation::Write { timestamp, .. } if !extra.is_empty() => {
                let parts: Arc<[Operation]> = std::iter::once(operation)
                    .chain(
                        extra
                            .iter()
                            .map(|&(key, value_bytes, rows)| Operation::Write {
                                key,
                                value_bytes,
                                timestamp,
                                rows,
                            }),
                    )
                    .collect();
                Some((parts, load.columns.logged_batches()))
            }
            _ => None,
        };
        let read_floor = self
            .consistency
            .as_ref()
            .map_or(0, |check| check.floor(key));
        self.transmit(
            now,
            InFlight {
                process: process_index,
                load_op,
                measured_from,
                serial: 0,
                attempt: 0,
                operation,
                batch,
                read_floor,
                partitions,
                rows: op_rows,
            },
        );
    }

    /// Sends one attempt of an operation and arms its client timeout.
    pub(super) fn transmit(&mut self, now: SimTime, mut attempt: InFlight) {
        let process_index = attempt.process;
        let process = &mut self.processes[process_index as usize];
        attempt.serial = process.next_serial;
        process.next_serial = process.next_serial.wrapping_add(1) & SERIAL_MASK;
        let serial = attempt.serial;
        let operation = attempt.operation;
        let batch = attempt.batch.clone();
        let slot = process.attempts.insert(attempt) as u32;
        self.attempts_in_flight += 1;
        let at = AttemptRef {
            process: process_index,
            slot,
            serial,
        };
        let (key, value_bytes) = match operation {
            Operation::Write {
                key, value_bytes, ..
            } => (key, value_bytes),
            Operation::Read { key, .. } => (key, 0),
        };
        let bytes = match &batch {
            // A batch's frame carries every part.
            Some((parts, _)) => {
                MESSAGE_OVERHEAD_BYTES
                    + parts
                        .iter()
                        .map(|part| match *part {
                            Operation::Write { value_bytes, .. } => 8 + u64::from(value_bytes),
                            Operation::Read { .. } => unreachable!("a batch's parts are writes"),
                        })
                        .sum::<u64>()
            }
            None => MESSAGE_OVERHEAD_BYTES + 8 + u64::from(value_bytes),
        };
        let deadline = now + self.plan.loads[process.load as usize].client_timeout;
        process.timeouts.push_back((deadline, slot, serial));
        if !process.timeout_check_armed {
            process.timeout_check_armed = true;
            self.kernel.schedule_at(
                deadline,
                Event::TimeoutCheck {
                    process: process_index,
                },
            );
        }
        let shard = self.target_shard(process_index, key);
        let node = self.shards[shard as usize].node;
        let consistency =
            self.plan.loads[self.processes[process_index as usize].load as usize].consistency;
        let request = match batch {
            Some((parts, logged)) => Event::BatchArrives {
                shard,
                batch: BatchRequest {
                    id: attempt_id(at),
                    parts,
                    logged,
                    consistency,
                },
                deadline,
                wire_bytes: 0,
            },
            None => Event::RequestArrives {
                shard,
                request: ClientRequest {
                    id: attempt_id(at),
                    operation,
                    consistency,
                },
                deadline,
                wire_bytes: 0,
            },
        };
        // One connection (flow) per node, as the driver's pools.
        let process = &mut self.processes[process_index as usize];
        let delivery = process
            .nic
            .send(now, FlowId(node), bytes, request, &mut process.rng);
        let wakeup = process.nic.take_wakeup();
        self.after_send(
            delivery,
            wakeup,
            Event::ClientNicWake {
                process: process_index,
            },
        );
    }

    /// Follows up a NIC send or wake-up: schedules the NIC's next wake-up,
    /// and takes a message that left into its receiver's NIC and on to its
    /// event (a lost message just vanishes; the client's timeout sees it).
    pub(super) fn after_send(
        &mut self,
        delivery: Option<Delivery<Event>>,
        wakeup: Option<SimTime>,
        wake: Event,
    ) {
        if let Some(at) = wakeup {
            self.kernel.schedule_at(at, wake);
        }
        let (at, wire_bytes, mut payload) = match delivery {
            None => return,
            Some(Delivery::Lost(payload)) => {
                self.forget(payload);
                return;
            }
            Some(Delivery::Arrives {
                at,
                wire_bytes,
                payload,
            }) => (at, wire_bytes, payload),
        };
        // The message is due at its receiver when its last byte is in, as
        // the receiver's link would take it with nothing before it; the
        // receiver's NIC itself is asked then, by the receiver
        // (`through_receiver_nic`), so that no sender writes into it.
        let wire = u32::try_from(wire_bytes).unwrap_or(u32::MAX);
        let due = match &mut payload {
            Event::GossipArrives {
                node, wire_bytes, ..
            } => {
                *wire_bytes = wire;
                at + self.nodes[*node as usize].nic.time_on_link(u64::from(wire))
            }
            Event::MessageArrives {
                shard, wire_bytes, ..
            } => {
                *wire_bytes = wire;
                let node = self.shards[*shard as usize].node;
                at + self.nodes[node as usize].nic.time_on_link(u64::from(wire))
            }
            Event::RequestArrives {
                shard,
                request: ClientRequest { id, .. },
                wire_bytes,
                ..
            }
            | Event::BatchArrives {
                shard,
                batch: BatchRequest { id, .. },
                wire_bytes,
                ..
            } => {
                *wire_bytes = wire;
                let (shard, id) = (*shard, *id);
                // The c-s thread handed the request to its connection's
                // event loop before it left.
                let attempt = attempt_of(id);
                let awaited = self.live_attempt(attempt).is_some();
                let process = attempt.process;
                let rng = &mut self.processes[process as usize].wake_rng;
                let handoff = client_handoff_delay(rng, REQUEST_HANDOFFS, awaited);
                self.tally_client_handoffs(process, REQUEST_HANDOFFS, handoff, awaited);
                let at = at + handoff;
                let node = self.shards[shard as usize].node;
                at + self.nodes[node as usize].nic.time_on_link(u64::from(wire))
            }
            Event::ReplyArrives {
                process,
                request,
                deadline,
                wire_bytes,
                handoff_ns,
                ..
            } => {
                *wire_bytes = wire;
                let (process, request) = (*process, *request);
                // Once in, the event loop wakes to read it, then wakes the
                // c-s thread waiting on it (if one still is: see
                // `Coordinating`).
                let awaited = self.kernel.now() <= *deadline;
                // Drawn here, by the node, keyed by the attempt: no
                // generator of the client's is touched, and an attempt has
                // the same hand-offs in runs that differ elsewhere (a
                // comparison keeps its common random numbers).
                let mut rng =
                    crate::rng::keyed(self.processes[process as usize].reply_wake_seed, request.0);
                let handoff = client_handoff_delay(&mut rng, REPLY_HANDOFFS, awaited);
                self.tally_client_handoffs(process, REPLY_HANDOFFS, handoff, awaited);
                let handoff = handoff.as_nanos().min(u64::from(u32::MAX));
                *handoff_ns = handoff as u32;
                at + self.processes[process as usize]
                    .nic
                    .time_on_link(u64::from(wire))
                    + SimDuration::from_nanos(handoff)
            }
            _ => unreachable!("only messages travel over NICs"),
        };
        self.kernel.schedule_at(due, payload);
    }

    /// A message that crossed the network is due (`now`): its receiver's
    /// NIC takes it in. If nothing that arrived before it held the link
    /// meanwhile, it is in now and its event goes on ([`Intake::Now`]); if
    /// something did, it is due again when it is in (its `wire_bytes` set
    /// to 0: through); cut off, it is lost. Events that did not cross a
    /// NIC, or already came through, go on as they are.
    ///
    /// The receiver does this in its own handling, so a receiver's NIC
    /// sees its arrivals in its own events' order whatever the senders do
    /// (what a run split over threads needs, docs/parallel-runner.md).
    #[inline]
    pub(super) fn through_receiver_nic(&mut self, now: SimTime, event: &mut Event) -> Intake {
        let wire = match event {
            Event::GossipArrives { wire_bytes, .. }
            | Event::MessageArrives { wire_bytes, .. }
            | Event::RequestArrives { wire_bytes, .. }
            | Event::BatchArrives { wire_bytes, .. }
            | Event::ReplyArrives { wire_bytes, .. } => std::mem::take(wire_bytes),
            _ => return Intake::Now,
        };
        if wire == 0 {
            return Intake::Now;
        }
        self.take_in_at_receiver(now, event, u64::from(wire))
    }

    fn take_in_at_receiver(&mut self, now: SimTime, event: &Event, wire: u64) -> Intake {
        let taken_in = match event {
            Event::GossipArrives { node, from, .. } => {
                self.take_in_between_nodes(now, wire, *from, *node)
            }
            Event::MessageArrives { shard, from, .. } => {
                let node = self.shards[*shard as usize].node;
                self.take_in_between_nodes(now, wire, from.node, node)
            }
            Event::RequestArrives { shard, .. } | Event::BatchArrives { shard, .. } => {
                let node = self.shards[*shard as usize].node;
                self.nodes[node as usize].nic.take_in(now, wire)
            }
            Event::ReplyArrives {
                process,
                handoff_ns,
                ..
            } => {
                // Its last byte was due the client's hand-offs before now.
                let after = u64::from(*handoff_ns);
                let in_at = SimTime::from_nanos(now.as_nanos().saturating_sub(after));
                self.processes[*process as usize]
                    .nic
                    .take_in(in_at, wire)
                    .map(|done| done + SimDuration::from_nanos(after))
            }
            _ => unreachable!("only messages cross a NIC"),
        };
        match taken_in {
            None => Intake::Lost,
            Some(done) if done <= now => Intake::Now,
            Some(done) => Intake::Later(done),
        }
    }

    /// Counts, for process `process`, `handoffs` hand-offs that added
    /// `added` (none when not `awaited`).
    fn tally_client_handoffs(
        &mut self,
        process: u32,
        handoffs: u32,
        added: SimDuration,
        awaited: bool,
    ) {
        if awaited {
            self.processes[process as usize]
                .handoffs
                .record(handoffs, added);
        }
    }

    /// A message from node `from` whose last byte is due at node `node`'s
    /// NIC now is taken in ([`Nic::take_in`]), unless a partition in force
    /// cuts them apart; when it is fully in.
    pub(super) fn take_in_between_nodes(
        &mut self,
        now: SimTime,
        wire_bytes: u64,
        from: u32,
        node: u32,
    ) -> Option<SimTime> {
        if !self.network_faults.connected(from, node) {
            self.nodes[node as usize].partition_losses += 1;
            return None;
        }
        self.nodes[node as usize].nic.take_in(now, wire_bytes)
    }

    /// A message that was lost: what it held in flight goes with it. A
    /// stream's message rides a TCP connection, which sends a lost segment
    /// again after its retransmission timeout ([`TCP_RETRANSMIT`]) until it
    /// gets through or the connection dies with one of its ends.
    pub(super) fn forget(&mut self, payload: Event) {
        match payload {
            Event::MessageArrives {
                shard,
                from,
                message,
                ..
            } if message.is_stream() => {
                let at = self.kernel.now() + TCP_RETRANSMIT;
                self.kernel.schedule_at(
                    at,
                    Event::StreamResend {
                        shard,
                        from,
                        message,
                    },
                );
            }
            _ => {}
        }
    }

    /// A lost stream message's retransmission is due: sent again if both
    /// its ends still run.
    pub(super) fn stream_resend(
        &mut self,
        now: SimTime,
        shard: u32,
        from: ShardAddress,
        message: Message,
    ) {
        let (node, local) = self.locate(shard);
        let running =
            |node: u32| self.engines[node as usize].life() == engine::node::NodeLife::Running;
        if running(from.node) && running(node as u32) {
            let to = ShardAddress {
                node: node as u32,
                shard: local,
            };
            self.send_message(now, from, to, message);
        }
    }

    /// The attempt at `at`, if it is still the one numbered `at.serial` (a
    /// reply to an attempt that already timed out finds another or none).
    pub(super) fn live_attempt(&self, at: AttemptRef) -> Option<&InFlight> {
        self.processes
            .get(at.process as usize)?
            .attempt(at.slot, at.serial)
    }

    /// Drops the answered attempts at the front of `process`'s timeouts.
    /// Replies come back in milliseconds and timeouts are seconds long, so
    /// without this the queue held every attempt of the last timeout's
    /// length (12 s by default: tens of MB over a 40-node run's clients,
    /// streamed through the cache) until its check came round; the check
    /// would skip them the same way, so its events are unchanged.
    fn prune_timeouts(&mut self, process: u32) {
        let process = &mut self.processes[process as usize];
        while let Some(&(_, slot, serial)) = process.timeouts.front() {
            if process.attempt(slot, serial).is_some() {
                break;
            }
            process.timeouts.pop_front();
        }
    }

    /// Takes the attempt at `at` (live) off the wire.
    fn remove_attempt(&mut self, at: AttemptRef) -> InFlight {
        self.attempts_in_flight -= 1;
        self.processes[at.process as usize]
            .attempts
            .remove(at.slot as usize)
    }

    /// Times out the attempts of `process` whose deadline has passed: each is
    /// retried until the load's tries are used up, then counted as an error
    /// (c-s's `-errors retries=N`; the DataStax driver's 12 s read timeout
    /// by default).
    pub(super) fn check_timeouts(&mut self, now: SimTime, process_index: u32) {
        self.processes[process_index as usize].timeout_check_armed = false;
        while let Some(&(deadline, slot, serial)) =
            self.processes[process_index as usize].timeouts.front()
        {
            let at = AttemptRef {
                process: process_index,
                slot,
                serial,
            };
            if self.live_attempt(at).is_none() {
                self.processes[process_index as usize].timeouts.pop_front();
                continue;
            }
            if deadline > now {
                let process = &mut self.processes[process_index as usize];
                process.timeout_check_armed = true;
                self.kernel.schedule_at(
                    deadline,
                    Event::TimeoutCheck {
                        process: process_index,
                    },
                );
                return;
            }
            self.processes[process_index as usize].timeouts.pop_front();
            let attempt = self.remove_attempt(at);
            self.retry_or_fail(now, attempt);
        }
    }

    /// An attempt timed out (at the client or at the coordinator): c-s
    /// retries it while it has tries left, then counts an error.
    pub(super) fn retry_or_fail(&mut self, now: SimTime, mut attempt: InFlight) {
        let process_index = attempt.process;
        let load_index = self.processes[process_index as usize].load as usize;
        let tries = self.plan.loads[load_index].tries;
        op_delta(&mut self.processes[process_index as usize], attempt.load_op).timed_out();
        if u32::from(attempt.attempt) + 1 < tries {
            attempt.attempt += 1;
            self.transmit(now, attempt);
        } else {
            let ignore = self.plan.loads[load_index].ignore_errors;
            let process = &mut self.processes[process_index as usize];
            op_delta(process, attempt.load_op).failed();
            // c-s's thread throws; its process stops handing out
            // operations (those in flight on other threads finish).
            if !ignore && process.failed_at.is_none() {
                process.failed_at = Some(now);
            }
            self.change_in_flight(now, process_index, false);
            self.next_after(now, process_index);
        }
    }

    /// After an operation ended: a thread takes the next one; an open loop
    /// only checks whether its load is done.
    pub(super) fn next_after(&mut self, now: SimTime, process_index: u32) {
        let load = self.processes[process_index as usize].load as usize;
        if self.plan.loads[load].threads().is_some() {
            self.issue(now, process_index);
        } else {
            self.maybe_finish_load(now, process_index);
        }
    }

    pub(super) fn complete(&mut self, now: SimTime, request: RequestId, outcome: ReplyOutcome) {
        let at = attempt_of(request);
        if self.live_attempt(at).is_none() {
            return; // the client gave up on this attempt already
        }
        let in_flight = self.remove_attempt(at);
        self.prune_timeouts(at.process);
        if matches!(outcome, ReplyOutcome::Timeout | ReplyOutcome::Unavailable) {
            self.retry_or_fail(now, in_flight);
            return;
        }
        let not_found = outcome == ReplyOutcome::NotFound;
        // A stale read a topology change explains is counted apart.
        let by_topology = match (in_flight.operation, outcome) {
            (Operation::Read { key, .. }, ReplyOutcome::Found { timestamp })
                if timestamp < in_flight.read_floor =>
            {
                self.stale_by_topology(key, in_flight.read_floor)
            }
            (Operation::Read { key, .. }, ReplyOutcome::NotFound) if in_flight.read_floor > 0 => {
                self.stale_by_topology(key, in_flight.read_floor)
            }
            _ => false,
        };
        if let (Some(check), Some((parts, _))) = (&mut self.consistency, &in_flight.batch) {
            // Every part of a batch was acknowledged with it.
            for part in &parts[1..] {
                if let Operation::Write { key, timestamp, .. } = *part {
                    check.write_acknowledged(now, key, timestamp);
                }
            }
        }
        if self.consistency.is_some() && in_flight.batch.is_none() {
            let answered = match (in_flight.operation, outcome) {
                (Operation::Write { key, timestamp, .. }, _) => Some((true, key, timestamp)),
                (Operation::Read { key, .. }, ReplyOutcome::Found { timestamp }) => {
                    Some((false, key, timestamp))
                }
                _ => None,
            };
            if let Some((write, key, timestamp)) = answered {
                let load = self.processes[in_flight.process as usize].load as usize;
                let rf = self.plan.cluster.replication_factor;
                let block_for = self.plan.loads[load].consistency.block_for(rf).clamp(1, rf);
                let holders = self.holders(key, timestamp, in_flight.measured_from);
                if let Some(check) = &mut self.consistency {
                    check.answer_held(crate::check::ThinAnswer {
                        at: now,
                        write,
                        key,
                        timestamp,
                        holders,
                        block_for,
                    });
                }
            }
        }
        if let Some(check) = &mut self.consistency {
            match (in_flight.operation, outcome) {
                (Operation::Write { key, timestamp, .. }, _) => {
                    check.write_acknowledged(now, key, timestamp)
                }
                (Operation::Read { key, .. }, ReplyOutcome::Found { timestamp }) => {
                    check.read_answered(now, key, in_flight.read_floor, timestamp, by_topology)
                }
                (Operation::Read { key, .. }, _) => {
                    check.read_answered(now, key, in_flight.read_floor, 0, by_topology)
                }
            }
        }
        // c-s counts the rows a read's result set holds: none when it
        // found nothing.
        let rows = if not_found { 0 } else { in_flight.rows };
        let process = &mut self.processes[in_flight.process as usize];
        op_delta(process, in_flight.load_op).record(
            in_flight.measured_from,
            now,
            in_flight.partitions,
            rows,
            not_found,
        );
        process.completed += 1;
        self.change_in_flight(now, in_flight.process, false);
        self.next_after(now, in_flight.process);
    }

    /// The shard a client sends a request for `key` to: a replica, picked at random
    /// (token-aware), or the next node in turn (round-robin); on the
    /// node, the shard of a connection (token-aware: `landing`, the owner
    /// one time in the node's real shard count), or the one the turn
    /// counter picks as the driver's connections would spread.
    pub(super) fn target_shard(&mut self, process_index: u32, key: u64) -> u32 {
        let cluster = &self.plan.cluster;
        let process = &mut self.processes[process_index as usize];
        let routing = self.plan.loads[process.load as usize].routing;
        let address = match routing {
            Routing::TokenAware | Routing::ShardAware => {
                // The Java driver's TokenAwarePolicy shuffles the replicas
                // (`shuffleReplicas`, on by default in driver 3.x).
                let mut replicas =
                    [ShardAddress { node: 0, shard: 0 }; engine::coordinator::MAX_REPLICAS];
                let mut count = self.placement.replicas(key, &mut replicas);
                if !self.driver_down.is_empty() {
                    // Replicas the driver sees down are passed over; with
                    // none up, the request goes to any node it sees up
                    // (the child round-robin policy), as a coordinator.
                    let mut up = 0;
                    for index in 0..count {
                        if !self.driver_down.contains(replicas[index].node) {
                            replicas[up] = replicas[index];
                            up += 1;
                        }
                    }
                    if up == 0 {
                        let live: Vec<u32> = (0..cluster.nodes)
                            .filter(|&node| !self.driver_down.contains(node))
                            .collect();
                        if !live.is_empty() {
                            replicas[0] = ShardAddress {
                                node: live[process.rng.random_range(0..live.len())],
                                shard: replicas[0].shard,
                            };
                            up = 1;
                        } else {
                            up = count;
                        }
                    }
                    count = up;
                }
                let replica = if count == 1 {
                    replicas[0]
                } else {
                    replicas[process.rng.random_range(0..count)]
                };
                if routing == Routing::ShardAware || !self.landing.spreads() {
                    replica
                } else {
                    // The driver is not shard-aware: the request lands on
                    // the shard of the connection it goes by.
                    self.landing.shard(replica, process.rng.random::<u64>())
                }
            }
            Routing::RoundRobin => {
                // Over the simulated shards only when sampled, passing
                // over nodes the driver sees down (unless all are).
                let mut turn = process.round_robin_turn;
                process.round_robin_turn += 1;
                if !self.driver_down.is_empty() && self.driver_down.len() < cluster.nodes {
                    while self
                        .driver_down
                        .contains((turn % u64::from(cluster.nodes)) as u32)
                    {
                        turn = process.round_robin_turn;
                        process.round_robin_turn += 1;
                    }
                }
                ShardAddress {
                    node: (turn % u64::from(cluster.nodes)) as u32,
                    shard: (turn / u64::from(cluster.nodes) % u64::from(self.simulated_shards))
                        as u32,
                }
            }
        };
        self.shard_index(address)
    }
}

/// What `handoffs` thread hand-offs in a c-s process add to an attempt,
/// drawn from `rng`: each costs [`HANDOFF_COST`] and finds its thread
/// parked ([`models::wakeup`]). Nothing for an attempt no thread awaits any
/// more (`awaited` false: it timed out).
fn client_handoff_delay(rng: &mut SimRng, handoffs: u32, awaited: bool) -> SimDuration {
    if !awaited {
        return SimDuration::ZERO;
    }
    (0..handoffs).fold(SimDuration::ZERO, |sum, _| {
        sum + HANDOFF_COST + models::wakeup::draw(rng)
    })
}

/// Process `process`'s record of its load's op `load_op`, made when first
/// used (a step of a thread search that never runs allocates none).
fn op_delta(process: &mut ClientProcess, load_op: u8) -> &mut OpDelta {
    let index = usize::from(load_op);
    if process.op_deltas.len() <= index {
        process.op_deltas.resize_with(index + 1, OpDelta::new);
    }
    &mut process.op_deltas[index]
}
