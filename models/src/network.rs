//! The network: a NIC per machine that sends its messages one at a time at
//! its bandwidth, sharing it fairly between flows, then a propagation
//! latency with a seeded jitter; and the faults a test can inject.
//!
//! What it models:
//! - *Transmit.* A NIC serialises one message at a time at its bandwidth
//!   (hardware.md 1.1 and 6.1: the instance's sustained figure, per
//!   direction). Bytes on the wire are the message plus, per packet of at
//!   most [`MSS_BYTES`], [`PACKET_OVERHEAD_BYTES`] of TCP/IP and Ethernet
//!   framing (EC2's 9001-byte jumbo MTU inside a VPC).
//! - *Fair sharing.* Messages waiting for the NIC are ordered by
//!   start-time fair queueing (Goyal et al., SIGCOMM 1996) over flows the
//!   caller names (a flow is a connection: a destination, or a destination
//!   and a kind of traffic such as streaming): each message gets a start
//!   tag `max(virtual time, its flow's last finish tag)` and a finish tag
//!   `start + bytes`; the NIC sends the waiting message with the smallest
//!   start tag, and virtual time is the start tag of the message on the
//!   wire. Backlogged flows get equal bytes, a flow offering less keeps
//!   what it offers and leaves the rest to the others, and an idle flow
//!   earns no credit. Messages are not preempted: a small message waits at
//!   most for the one on the wire.
//! - *Paced flows.* A flow may have its own rate cap (bytes per second),
//!   like Cassandra's `stream_throughput_outbound_megabits_per_sec`: its
//!   next message may not start before the last one's start plus its bytes
//!   at the cap. The NIC stays work-conserving for the other flows.
//! - *Propagation.* A message arrives [`ONE_WAY_LATENCY`] plus a jitter
//!   after its last byte left. The jitter is lognormal, of median
//!   [`JITTER_MEDIAN`] and shape [`JITTER_SIGMA`], chosen so that a round
//!   trip comes out as hardware.md 6.2 recommends for 2018 i3 with ENA in
//!   one AZ: one-way 40-60 us, RTT median 80-120 us, p99 about 250 us and
//!   p99.9 0.5-1 ms. Two such hops give an RTT of median 99 us, mean 111,
//!   p99 273 and p99.9 528 us; the mean one-way delay, 55 us, is what the
//!   exponential jitter this replaced had (45 us + Exp(10 us)), whose round
//!   trip had a p99 of 156 us and a p99.9 of 180.
//! - *Receive.* The receiving NIC takes the message in at its own bandwidth,
//!   first come first served: a node that many senders target at once is
//!   limited by its inbound link. The cluster's driver asks the receiver's
//!   NIC when the message's last byte is due there ([`Nic::take_in`]), in
//!   the receiver's own handling, so a NIC's state is its machine's alone;
//!   [`Nic::receive`] is the same link told by the sender when the
//!   message leaves.
//! - *Shares* ([`Nic::set_share`], representative-shard sampling): a NIC
//!   standing for a share of a link sends and receives each message at the
//!   full bandwidth but holds the link `1 / share` times as long, the turn
//!   of the users left out of the simulation.
//! - *Faults* ([`NicFaults`]): a cut NIC sends and receives nothing (what
//!   is sent while cut, or on the wire when the cut starts, is lost) until
//!   it heals; a drop probability loses each message independently; a
//!   bandwidth factor degrades the link. The driver (the fault-injection
//!   issue) sets them at run time: on/off schedules are a sequence of cuts
//!   and heals. Cuts of one link between two machines are the driver's
//!   (it knows both ends); [`LinkCuts`] holds them.
//!
//! Per-message CPU (RPC encode and decode on both ends) is engine work the
//! cost table prices (`cost::CostTable`), not the NIC's.
//!
//! Left out: TCP congestion control and retransmission (a lost message is
//! lost; the layers above time out), switch queueing and oversubscription
//! (EC2 placement groups are non-blocking at these rates), and receive-side
//! fairness.
//!
//! # Using it (event-driven)
//! [`Nic::send`] either puts the message on the wire at once and returns
//! its [`Delivery`], or queues it. After any `send` or [`Nic::wake`], call
//! [`Nic::take_wakeup`]: if it returns a time, schedule a wake-up then and
//! call [`Nic::wake`], which starts the next message and returns its
//! delivery. A message on an idle NIC costs no extra event.

use std::collections::{BTreeSet, VecDeque};

use rand::{Rng, RngExt};
use units::{SimDuration, SimTime};

/// Fixed propagation latency, one way (hardware.md 6.2: 40-60 us).
pub const ONE_WAY_LATENCY: SimDuration = SimDuration::from_micros(40);
/// Median of the lognormal jitter added to each message (hardware.md 6.2's
/// RTT percentiles, module doc).
pub const JITTER_MEDIAN: SimDuration = SimDuration::from_micros(7);
/// Shape (the standard deviation of its logarithm) of the jitter.
pub const JITTER_SIGMA: f64 = 1.25;
/// TCP payload per packet at EC2's 9001-byte MTU (minus 40 bytes of IPv4
/// and TCP headers and 12 of TCP timestamps).
pub const MSS_BYTES: u64 = 8_949;
/// Bytes each packet adds on the wire: 52 of IP/TCP headers and options,
/// 38 of Ethernet (header, FCS, preamble, inter-frame gap).
pub const PACKET_OVERHEAD_BYTES: u64 = 90;

/// Bytes on the wire for a message of `bytes`.
pub fn wire_bytes(bytes: u64) -> u64 {
    let packets = bytes.div_ceil(MSS_BYTES).max(1);
    bytes + packets * PACKET_OVERHEAD_BYTES
}

/// A draw of `exp(JITTER_SIGMA z)`, `z` standard normal: the jitter over
/// its median. `rand_distr`'s ziggurat sampler, which mostly takes one draw
/// and a table lookup (an inverse-CDF quantile per message cost the 40-node
/// benchmark 3%).
fn lognormal_factor<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let z: f64 = rng.sample(rand_distr::StandardNormal);
    (JITTER_SIGMA * z).exp()
}

/// A connection's identity on one NIC, chosen by the caller (dense small
/// numbers: the NIC keeps a slot per flow up to the largest seen).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// What happened to a message whose transmission ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Delivery<P> {
    /// It arrives at the far end's NIC at `at`.
    Arrives {
        /// Arrival time (before the receiver's own NIC).
        at: SimTime,
        /// Wire bytes, for [`Nic::receive`].
        wire_bytes: u64,
        /// What was sent.
        payload: P,
    },
    /// It was lost (a cut or a drop).
    Lost(P),
}

/// Faults on one NIC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NicFaults {
    /// Sends and receives nothing.
    pub cut: bool,
    /// Probability each message is lost.
    pub drop_probability: f64,
    /// Fraction of the nominal bandwidth available (1 = healthy).
    pub bandwidth_factor: f64,
}

impl NicFaults {
    /// The least fraction of its bandwidth a degraded NIC keeps: a
    /// 10-Gb/s NIC then carries 1 Mb/s, one 4-KB row in 33 ms, slower
    /// than any client waits; degradations that stack are clamped to it.
    pub const MIN_BANDWIDTH_FACTOR: f64 = 1e-4;
}

const _: () =
    assert!(NicFaults::MIN_BANDWIDTH_FACTOR > 0.0 && NicFaults::MIN_BANDWIDTH_FACTOR <= 1.0);

impl Default for NicFaults {
    fn default() -> NicFaults {
        NicFaults {
            cut: false,
            drop_probability: 0.0,
            bandwidth_factor: 1.0,
        }
    }
}

/// Links cut between pairs of machines (either direction), for partitions
/// narrower than a whole node. Ordered, so iteration is deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkCuts {
    cut: BTreeSet<(u32, u32)>,
}

impl LinkCuts {
    fn key(a: u32, b: u32) -> (u32, u32) {
        (a.min(b), a.max(b))
    }

    /// Cuts the link between `a` and `b`.
    pub fn cut(&mut self, a: u32, b: u32) {
        self.cut.insert(Self::key(a, b));
    }

    /// Heals the link between `a` and `b`.
    pub fn heal(&mut self, a: u32, b: u32) {
        self.cut.remove(&Self::key(a, b));
    }

    /// Whether `a` and `b` can talk.
    pub fn connected(&self, a: u32, b: u32) -> bool {
        self.cut.is_empty() || !self.cut.contains(&Self::key(a, b))
    }
}

#[derive(Clone, Debug)]
struct Queued<P> {
    start_tag: f64,
    bytes: u64,
    payload: P,
}

#[derive(Clone, Debug)]
struct Flow<P> {
    queue: VecDeque<Queued<P>>,
    finish_tag: f64,
    /// Pacing cap in bytes per second, if any.
    rate_cap: Option<f64>,
    /// Earliest start of this flow's next message under its cap.
    eligible_at: SimTime,
}

impl<P> Flow<P> {
    fn new() -> Flow<P> {
        Flow {
            queue: VecDeque::new(),
            finish_tag: 0.0,
            rate_cap: None,
            eligible_at: SimTime::ZERO,
        }
    }
}

/// A machine's NIC; `P` is what a message carries.
#[derive(Clone, Debug)]
pub struct Nic<P> {
    bytes_per_s: f64,
    /// How much longer than its transmission a message holds the link:
    /// `1 / share` for a share of it ([`Nic::set_share`]), else 1.
    hold: f64,
    /// Fixed one-way propagation latency.
    latency: SimDuration,
    /// Median of the lognormal jitter added to it ([`JITTER_SIGMA`]).
    jitter_median_s: f64,
    faults: NicFaults,
    /// When the message on the wire finishes (transmit side).
    tx_free_at: SimTime,
    /// When the receive side is free.
    /// Messages registered with the receive side: (arrival, when the link
    /// is busy until once every message arrived by then is in), by
    /// arrival; older entries are collapsed as time passes.
    rx_log: VecDeque<(SimTime, SimTime)>,
    /// [`Nic::take_in`]: the longest lead seen, and the time up to which
    /// the log was collapsed (it never moves back).
    longest_lead: SimDuration,
    rx_horizon: SimTime,
    flows: Vec<Flow<P>>,
    /// Flows with queued messages, in no particular order.
    active: Vec<u32>,
    queued: usize,
    virtual_time: f64,
    wakeup_armed: Option<SimTime>,
    wakeup_wanted: Option<SimTime>,
    bytes_sent: u64,
    bytes_received: u64,
    messages_lost: u64,
}

impl<P> Nic<P> {
    /// A NIC with `gbps` gigabits per second each way.
    pub fn new(gbps: f64) -> Nic<P> {
        assert!(gbps > 0.0, "a NIC needs bandwidth");
        Nic {
            bytes_per_s: gbps * 1e9 / 8.0,
            hold: 1.0,
            latency: ONE_WAY_LATENCY,
            jitter_median_s: JITTER_MEDIAN.as_secs_f64(),
            faults: NicFaults::default(),
            tx_free_at: SimTime::ZERO,
            rx_log: VecDeque::new(),
            longest_lead: SimDuration::ZERO,
            rx_horizon: SimTime::ZERO,
            flows: Vec::new(),
            active: Vec::new(),
            queued: 0,
            virtual_time: 0.0,
            wakeup_armed: None,
            wakeup_wanted: None,
            bytes_sent: 0,
            bytes_received: 0,
            messages_lost: 0,
        }
    }

    /// Sets the propagation of what this NIC sends: a fixed one-way
    /// `latency` plus a lognormal jitter of median `jitter_median` and shape
    /// [`JITTER_SIGMA`] (defaults [`ONE_WAY_LATENCY`] and
    /// [`JITTER_MEDIAN`], same-AZ EC2); a zero median means no jitter. A
    /// large jitter reorders messages.
    pub fn set_propagation(&mut self, latency: SimDuration, jitter_median: SimDuration) {
        self.latency = latency;
        self.jitter_median_s = jitter_median.as_secs_f64();
    }

    /// Makes this NIC stand for `share` (in (0, 1]) of a link whose other
    /// users are not simulated (representative-shard sampling): each
    /// message still crosses at the full bandwidth, but holds the link
    /// (each way) `1 / share` times as long, the others' turn. Idle, a
    /// message is as fast as on the whole link; saturated, the NIC carries
    /// `share` of its bandwidth.
    pub fn set_share(&mut self, share: f64) {
        assert!(share > 0.0 && share <= 1.0, "a share is in (0, 1]");
        self.hold = 1.0 / share;
    }

    fn flow(&mut self, flow: FlowId) -> &mut Flow<P> {
        let index = flow.0 as usize;
        if index >= self.flows.len() {
            self.flows.resize_with(index + 1, Flow::new);
        }
        &mut self.flows[index]
    }

    /// Caps `flow` at `bytes_per_s` (None: no cap).
    pub fn set_flow_rate_cap(&mut self, flow: FlowId, bytes_per_s: Option<f64>) {
        self.flow(flow).rate_cap = bytes_per_s.filter(|rate| *rate > 0.0);
    }

    /// The NIC's faults.
    pub fn faults(&self) -> NicFaults {
        self.faults
    }

    /// Sets the NIC's faults (the fault-injection hook).
    pub fn set_faults(&mut self, faults: NicFaults) {
        assert!(
            faults.bandwidth_factor > 0.0 && faults.bandwidth_factor <= 1.0,
            "bandwidth factor in (0, 1]"
        );
        self.faults = faults;
    }

    fn transmission_time(&self, bytes: u64) -> SimDuration {
        SimDuration::from_secs_f64(bytes as f64 / (self.bytes_per_s * self.faults.bandwidth_factor))
    }

    /// How long `bytes` that take `on_wire` to cross hold the link:
    /// `on_wire`, `1 / share` times over for a share of the link.
    fn held_time(&self, bytes: u64, on_wire: SimDuration) -> SimDuration {
        if self.hold == 1.0 {
            return on_wire;
        }
        SimDuration::from_secs_f64(
            bytes as f64 * self.hold / (self.bytes_per_s * self.faults.bandwidth_factor),
        )
    }

    /// Sends `bytes` of payload on `flow` at `now`: on the wire at once if
    /// the NIC and the flow allow (the delivery is returned), else queued.
    pub fn send<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        flow: FlowId,
        bytes: u64,
        payload: P,
        rng: &mut R,
    ) -> Option<Delivery<P>> {
        let bytes = wire_bytes(bytes);
        let idle = self.queued == 0 && self.tx_free_at <= now;
        let virtual_time = self.virtual_time;
        let state = self.flow(flow);
        let start_tag = virtual_time.max(state.finish_tag);
        state.finish_tag = start_tag + bytes as f64;
        if idle && state.eligible_at <= now {
            return Some(self.transmit(now, flow, start_tag, bytes, payload, rng));
        }
        state.queue.push_back(Queued {
            start_tag,
            bytes,
            payload,
        });
        if state.queue.len() == 1 {
            self.active.push(flow.0);
        }
        self.queued += 1;
        self.want_wakeup(now);
        None
    }

    /// Puts a message on the wire at `now`.
    fn transmit<R: Rng + ?Sized>(
        &mut self,
        now: SimTime,
        flow: FlowId,
        start_tag: f64,
        bytes: u64,
        payload: P,
        rng: &mut R,
    ) -> Delivery<P> {
        self.virtual_time = start_tag;
        let on_wire = self.transmission_time(bytes);
        let end = now + on_wire;
        self.tx_free_at = now + self.held_time(bytes, on_wire);
        let state = &mut self.flows[flow.0 as usize];
        if let Some(cap) = state.rate_cap {
            state.eligible_at = now + SimDuration::from_secs_f64(bytes as f64 / cap);
        }
        let uniform: f64 = rng.random();
        let lost = self.faults.cut
            || (self.faults.drop_probability > 0.0 && uniform < self.faults.drop_probability);
        if lost {
            self.messages_lost += 1;
            return Delivery::Lost(payload);
        }
        self.bytes_sent += bytes;
        let jitter = self.jitter_median_s * lognormal_factor(rng);
        Delivery::Arrives {
            at: end + self.latency + SimDuration::from_secs_f64(jitter),
            wire_bytes: bytes,
            payload,
        }
    }

    /// Notes when the next queued message could start.
    fn want_wakeup(&mut self, now: SimTime) {
        if self.queued == 0 {
            self.wakeup_wanted = None;
            return;
        }
        let earliest_eligible = self
            .active
            .iter()
            .map(|&flow| self.flows[flow as usize].eligible_at)
            .min()
            .expect("queued messages have an active flow");
        self.wakeup_wanted = Some(self.tx_free_at.max(earliest_eligible).max(now));
    }

    /// A wake-up time the driver must schedule (and then call
    /// [`Nic::wake`]), if one is needed and not already scheduled.
    pub fn take_wakeup(&mut self) -> Option<SimTime> {
        let wanted = self.wakeup_wanted?;
        if self.wakeup_armed.is_some_and(|armed| armed <= wanted) {
            return None;
        }
        self.wakeup_armed = Some(wanted);
        Some(wanted)
    }

    /// A scheduled wake-up fired: starts the next message if the wire is
    /// free and one is eligible. Stale wake-ups return `None`.
    pub fn wake<R: Rng + ?Sized>(&mut self, now: SimTime, rng: &mut R) -> Option<Delivery<P>> {
        if self.wakeup_armed == Some(now) {
            self.wakeup_armed = None;
        }
        if self.queued == 0 || self.tx_free_at > now {
            self.want_wakeup(now);
            return None;
        }
        // The eligible head with the smallest start tag; ties to the
        // lowest flow id.
        let mut best: Option<(usize, f64, u32)> = None;
        for (position, &flow) in self.active.iter().enumerate() {
            let state = &self.flows[flow as usize];
            if state.eligible_at > now {
                continue;
            }
            let tag = state
                .queue
                .front()
                .expect("active flows have work")
                .start_tag;
            if best.is_none_or(|(_, best_tag, best_flow)| {
                tag < best_tag || (tag == best_tag && flow < best_flow)
            }) {
                best = Some((position, tag, flow));
            }
        }
        let Some((position, _, flow)) = best else {
            self.want_wakeup(now);
            return None;
        };
        let state = &mut self.flows[flow as usize];
        let message = state.queue.pop_front().expect("chosen flow has work");
        if state.queue.is_empty() {
            self.active.swap_remove(position);
        }
        self.queued -= 1;
        let delivery = self.transmit(
            now,
            FlowId(flow),
            message.start_tag,
            message.bytes,
            message.payload,
            rng,
        );
        self.want_wakeup(now);
        Some(delivery)
    }

    /// A message of `wire_bytes` will reach this NIC at `at` (told at
    /// `now`, when it was sent; `at >= now`): returns when it has been
    /// received, or `None` if the NIC is cut.
    ///
    /// Messages are taken in order of arrival, not of registration: jitter
    /// lets a message sent later arrive first, and it must not wait behind
    /// one still on its way. A message queues behind the messages that
    /// arrived before it; those registered earlier but arriving after it
    /// keep the times already given to them (their bandwidth overlaps
    /// briefly), while later queries see both.
    pub fn receive(&mut self, now: SimTime, at: SimTime, wire_bytes: u64) -> Option<SimTime> {
        if self.faults.cut {
            self.messages_lost += 1;
            return None;
        }
        // Every later message arrives at or after `now`: the entries that
        // arrived by then collapse into the last of them (a prefix maximum).
        while self.rx_log.len() >= 2 && self.rx_log[1].0 <= now {
            self.rx_log.pop_front();
        }
        let position = self
            .rx_log
            .iter()
            .rposition(|(arrival, _)| *arrival <= at)
            .map_or(0, |index| index + 1);
        let busy_until = match position {
            0 => SimTime::ZERO,
            _ => self.rx_log[position - 1].1,
        };
        let in_time = self.transmission_time(wire_bytes);
        let done = busy_until.max(at) + in_time;
        // A share of the link stays busy for the others' turn too.
        let held = busy_until.max(at) + self.held_time(wire_bytes, in_time);
        self.rx_log.insert(position, (at, held));
        for entry in self.rx_log.iter_mut().skip(position + 1) {
            entry.1 = entry.1.max(held);
        }
        self.bytes_received += wire_bytes;
        Some(done)
    }

    /// A message of `wire_bytes` whose last byte is due at this NIC `now`
    /// (its first arrived its time on the link before: the driver
    /// scheduled it so, [`Nic::time_on_link`]): returns when it is fully
    /// in, `now` if nothing that arrived before it held the link
    /// meanwhile, later if something did; `None` if the NIC is cut.
    ///
    /// The receiver's side of [`Nic::receive`], told by the receiver when
    /// the message is due rather than by the sender when it left: messages
    /// are registered as their last bytes come in, so one that arrived
    /// earlier but is longer may be registered after a shorter one that
    /// arrived later, and is then not waited for by it (their bandwidth
    /// overlaps, as [`Nic::receive`]'s out-of-order arrivals do). The log
    /// of arrivals is collapsed up to the longest time on the link seen,
    /// since a message registered later arrived at most that long before
    /// its own registration.
    pub fn take_in(&mut self, now: SimTime, wire_bytes: u64) -> Option<SimTime> {
        let lead = self.transmission_time(wire_bytes);
        let at = SimTime::from_nanos(now.as_nanos().saturating_sub(lead.as_nanos()));
        self.longest_lead = self.longest_lead.max(lead);
        let horizon = SimTime::from_nanos(
            now.as_nanos()
                .saturating_sub(self.longest_lead.as_nanos())
                .max(self.rx_horizon.as_nanos()),
        );
        self.rx_horizon = horizon;
        self.receive(horizon, at, wire_bytes)
    }

    /// Time `wire_bytes` take on this NIC's link as its faults leave it
    /// now (what [`Nic::take_in`] takes to lie between a message's first
    /// byte and its last).
    pub fn time_on_link(&self, wire_bytes: u64) -> SimDuration {
        self.transmission_time(wire_bytes)
    }

    /// Messages waiting for the wire.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Wire bytes sent so far (lost messages excluded).
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }

    /// Wire bytes received so far.
    pub fn bytes_received(&self) -> u64 {
        self.bytes_received
    }

    /// Messages lost to cuts and drops on this NIC.
    pub fn messages_lost(&self) -> u64 {
        self.messages_lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// Drives a NIC as the simulator does; returns (flow, delivery time or
    /// None if lost) in transmission order.
    struct Driver {
        nic: Nic<u32>,
        rng: Pcg64Mcg,
        wakeups: BTreeSet<SimTime>,
        delivered: Vec<(u32, Option<SimTime>, SimTime)>,
    }

    impl Driver {
        fn new(gbps: f64) -> Driver {
            Driver {
                nic: Nic::new(gbps),
                rng: Pcg64Mcg::seed_from_u64(7),
                wakeups: BTreeSet::new(),
                delivered: Vec::new(),
            }
        }

        fn record(&mut self, now: SimTime, delivery: Option<Delivery<u32>>) {
            match delivery {
                Some(Delivery::Arrives { at, payload, .. }) => {
                    self.delivered.push((payload, Some(at), now))
                }
                Some(Delivery::Lost(payload)) => self.delivered.push((payload, None, now)),
                None => {}
            }
            if let Some(at) = self.nic.take_wakeup() {
                self.wakeups.insert(at);
            }
        }

        fn send(&mut self, now: SimTime, flow: u32, bytes: u64) {
            let delivery = self.nic.send(now, FlowId(flow), bytes, flow, &mut self.rng);
            self.record(now, delivery);
        }

        /// Runs wake-ups up to `until`.
        fn run_until(&mut self, until: SimTime) {
            while let Some(&at) = self.wakeups.iter().next() {
                if at > until {
                    break;
                }
                self.wakeups.remove(&at);
                let delivery = self.nic.wake(at, &mut self.rng);
                self.record(at, delivery);
            }
        }

        fn queued_on(&self, flow: usize) -> usize {
            self.nic.flows.get(flow).map_or(0, |f| f.queue.len())
        }

        fn bytes_started_by(&self, flow: u32, bytes: u64, until: SimTime) -> u64 {
            self.delivered
                .iter()
                .filter(|(f, _, started)| *f == flow && *started < until)
                .count() as u64
                * bytes
        }
    }

    #[test]
    fn a_share_of_a_link_is_as_fast_when_idle_and_carries_its_share_when_busy() {
        let mut whole = Driver::new(8.0);
        let mut quarter = Driver::new(8.0);
        quarter.nic.set_share(0.25);
        quarter
            .nic
            .set_propagation(ONE_WAY_LATENCY, SimDuration::ZERO);
        whole
            .nic
            .set_propagation(ONE_WAY_LATENCY, SimDuration::ZERO);
        // One message on an idle link: the same delivery.
        whole.send(SimTime::ZERO, 0, 100_000);
        quarter.send(SimTime::ZERO, 0, 100_000);
        assert_eq!(whole.delivered[0].1, quarter.delivered[0].1);
        // Backlogged for a second: a quarter of the bytes.
        let horizon = SimTime::from_nanos(1_000_000_000);
        let mut now = SimTime::ZERO;
        while now < horizon {
            while quarter.queued_on(1) < 4 {
                quarter.send(now, 1, 65_536);
            }
            now += SimDuration::from_micros(50);
            quarter.run_until(now);
        }
        let gbps = quarter.bytes_started_by(1, 65_536, horizon) as f64 * 8.0 / 1e9;
        assert!((gbps / 2.0 - 1.0).abs() < 0.02, "{gbps} Gbit/s of 8 x 0.25");
        // Receiving: a message arriving behind another waits the first's
        // held time, its own transmission at full speed.
        let mut nic: Nic<u32> = Nic::new(8.0);
        nic.set_share(0.5);
        let at = SimTime::from_nanos(1_000);
        let first = nic.receive(SimTime::ZERO, at, 1_000_000).unwrap();
        let second = nic.receive(SimTime::ZERO, at, 1_000_000).unwrap();
        let once = (first - at).as_nanos();
        assert!((once as f64 / 1e6 - 1.0).abs() < 0.01, "{once} ns for 1 MB");
        assert_eq!((second - at).as_nanos(), 3 * once);
    }

    #[test]
    fn back_to_back_messages_queue_behind_each_other_on_the_nic() {
        let mut driver = Driver::new(8.0); // 1 GB/s: 1 MB takes ~1 ms
        driver.send(SimTime::ZERO, 0, 1_000_000);
        driver.send(SimTime::ZERO, 0, 1_000_000);
        driver.run_until(SimTime::from_nanos(10_000_000));
        let wire = wire_bytes(1_000_000) as f64 / 1e9;
        let first = driver.delivered[0].1.unwrap();
        let second = driver.delivered[1].1.unwrap();
        assert!(first >= SimTime::ZERO + SimDuration::from_secs_f64(wire) + ONE_WAY_LATENCY);
        assert!(second >= SimTime::ZERO + SimDuration::from_secs_f64(2.0 * wire) + ONE_WAY_LATENCY);
        assert_eq!(driver.nic.bytes_sent(), 2 * wire_bytes(1_000_000));
    }

    #[test]
    fn small_messages_take_the_latency_plus_a_lognormal_jitter() {
        let mut nic: Nic<()> = Nic::new(10.0);
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        let samples = 200_000;
        let mut delays: Vec<f64> = (0..samples)
            .map(|i| {
                let now = SimTime::from_nanos(i * 1_000_000);
                match nic.send(now, FlowId(0), 100, (), &mut rng) {
                    Some(Delivery::Arrives { at, .. }) => (at - now).as_secs_f64() * 1e6,
                    other => panic!("an idle NIC sends at once: {other:?}"),
                }
            })
            .collect();
        delays.sort_by(f64::total_cmp);
        let mean = delays.iter().sum::<f64>() / samples as f64;
        let quantile = |q: f64| delays[(q * samples as f64) as usize];
        // 190 wire bytes at 10 Gbit/s take 0.15 us; 40 us fixed; the jitter's
        // median 7 us, mean 7 exp(1.25^2 / 2) = 15.27 us, p99 7 exp(1.25 x
        // 2.326) = 128 us.
        assert!((mean - 55.42).abs() < 0.5, "mean one-way latency {mean} us");
        assert!(
            (quantile(0.5) - 47.15).abs() < 0.3,
            "median {} us",
            quantile(0.5)
        );
        let p99 = quantile(0.99);
        assert!((p99 - 168.3).abs() < 5.0, "p99 {p99} us");
        assert!(
            delays[0] >= 40.15,
            "nothing arrives before the fixed latency"
        );
    }

    #[test]
    fn a_zero_jitter_delivers_after_exactly_the_latency() {
        let mut nic: Nic<()> = Nic::new(10.0);
        nic.set_propagation(SimDuration::from_micros(30), SimDuration::ZERO);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        for i in 0..1_000 {
            let now = SimTime::from_nanos(i * 1_000_000);
            let Some(Delivery::Arrives { at, .. }) = nic.send(now, FlowId(0), 100, (), &mut rng)
            else {
                panic!("an idle NIC sends at once")
            };
            assert_eq!(
                at - now,
                nic.transmission_time(wire_bytes(100)) + SimDuration::from_micros(30)
            );
        }
    }

    #[test]
    fn two_bulk_flows_share_the_link_evenly() {
        // Flow 0 sends 64 KiB messages, flow 1 sends 8 KiB ones, both
        // always backlogged: equal bytes, not equal messages.
        let mut driver = Driver::new(10.0);
        let horizon = SimTime::from_nanos(1_000_000_000);
        let mut now = SimTime::ZERO;
        while now < horizon {
            while driver.queued_on(0) < 4 {
                driver.send(now, 0, 65_536);
            }
            while driver.queued_on(1) < 32 {
                driver.send(now, 1, 8_192);
            }
            now += SimDuration::from_micros(50);
            driver.run_until(now);
        }
        let bytes0 = driver.bytes_started_by(0, 65_536, horizon) as f64;
        let bytes1 = driver.bytes_started_by(1, 8_192, horizon) as f64;
        assert!((bytes0 / bytes1 - 1.0).abs() < 0.02, "{bytes0} vs {bytes1}");
        let total_gbps = (bytes0 + bytes1) * 8.0 / 1e9;
        assert!(
            total_gbps > 9.7,
            "the link stays busy: {total_gbps} Gbit/s of payload"
        );
    }

    #[test]
    fn a_flow_below_its_fair_share_keeps_it_and_the_other_takes_the_rest() {
        // Flow 0 is capped at 2 Gbit/s (like a streaming throughput cap),
        // flow 1 is bulk: it gets the other ~8.
        let mut driver = Driver::new(10.0);
        driver.nic.set_flow_rate_cap(FlowId(0), Some(2e9 / 8.0));
        let horizon = SimTime::from_nanos(1_000_000_000);
        let mut now = SimTime::ZERO;
        while now < horizon {
            for flow in [0, 1] {
                while driver.queued_on(flow) < 8 {
                    driver.send(now, flow as u32, 65_536);
                }
            }
            now += SimDuration::from_micros(50);
            driver.run_until(now);
        }
        let gbps = |flow| driver.bytes_started_by(flow, 65_536, horizon) as f64 * 8.0 / 1e9;
        let (capped, bulk) = (gbps(0), gbps(1));
        assert!((capped - 2.0).abs() < 0.05, "capped flow {capped} Gbit/s");
        assert!(bulk > 7.5 && bulk < 8.0, "bulk flow {bulk} Gbit/s");
    }

    #[test]
    fn a_cut_nic_delivers_nothing_and_resumes_after_heal() {
        let mut driver = Driver::new(10.0);
        let ms = |n: u64| SimTime::from_nanos(n * 1_000_000);
        driver.send(ms(0), 0, 1_000);
        driver.nic.set_faults(NicFaults {
            cut: true,
            ..NicFaults::default()
        });
        for i in 1..10 {
            driver.send(ms(i), 0, 1_000);
        }
        assert_eq!(
            driver.nic.receive(ms(5), ms(5), 1_000),
            None,
            "a cut NIC receives nothing"
        );
        driver.nic.set_faults(NicFaults::default());
        driver.send(ms(20), 0, 1_000);
        driver.run_until(ms(100));
        let outcomes: Vec<bool> = driver
            .delivered
            .iter()
            .map(|(_, at, _)| at.is_some())
            .collect();
        assert_eq!(outcomes.len(), 11);
        assert!(
            outcomes[0] && outcomes[10],
            "before the cut and after the heal: delivered"
        );
        assert!(
            outcomes[1..10].iter().all(|delivered| !delivered),
            "{outcomes:?}"
        );
        assert_eq!(driver.nic.messages_lost(), 10);
        assert!(driver.nic.receive(ms(30), ms(30), 1_000).is_some());
    }

    #[test]
    fn drops_and_degradation_apply() {
        let mut driver = Driver::new(8.0);
        driver.nic.set_faults(NicFaults {
            drop_probability: 0.25,
            bandwidth_factor: 0.5,
            cut: false,
        });
        for i in 0..40_000 {
            driver.send(SimTime::from_nanos(i * 100_000), 0, 1_000);
        }
        let lost = driver
            .delivered
            .iter()
            .filter(|(_, at, _)| at.is_none())
            .count();
        assert!((lost as f64 / 40_000.0 - 0.25).abs() < 0.01, "lost {lost}");
        // Half of 1 GB/s: 1 MB of wire bytes takes 2 ms.
        let mut nic: Nic<()> = Nic::new(8.0);
        nic.set_faults(NicFaults {
            bandwidth_factor: 0.5,
            ..NicFaults::default()
        });
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let bytes = 1_000_000 - 112 * PACKET_OVERHEAD_BYTES; // 112 packets
        let Some(Delivery::Arrives { at, .. }) =
            nic.send(SimTime::ZERO, FlowId(0), bytes, (), &mut rng)
        else {
            panic!("sent");
        };
        assert!(at >= SimTime::from_nanos(2_000_000) + ONE_WAY_LATENCY);
        assert!(
            at < SimTime::from_nanos(2_000_000) + ONE_WAY_LATENCY + SimDuration::from_millis(1)
        );
    }

    #[test]
    fn the_receive_side_serialises_many_senders() {
        // Ten 1 MB messages arriving together at a 1 GB/s receiver take
        // 10 ms to get in.
        let mut nic: Nic<()> = Nic::new(8.0);
        let mut last = SimTime::ZERO;
        for _ in 0..10 {
            last = nic
                .receive(SimTime::ZERO, SimTime::ZERO, 1_000_000)
                .unwrap();
        }
        assert_eq!(last, SimTime::from_nanos(10_000_000));
        assert_eq!(nic.bytes_received(), 10_000_000);
    }

    #[test]
    fn a_message_arriving_first_does_not_wait_behind_one_still_on_its_way() {
        let mut nic: Nic<()> = Nic::new(8.0); // 1 GB/s: 1 ms per MB
        let ms = |m: u64| SimTime::from_nanos(m * 1_000_000);
        // Sent first, delayed: arrives at 5 ms, in by 6 ms.
        assert_eq!(nic.receive(ms(0), ms(5), 1_000_000), Some(ms(6)));
        // Sent after it but arriving at 1 ms: in by 2 ms, not 7.
        assert_eq!(nic.receive(ms(0), ms(1), 1_000_000), Some(ms(2)));
        // Arriving at 1.5 ms: behind the 1 ms one, so in by 3 ms.
        assert_eq!(
            nic.receive(ms(0), SimTime::from_nanos(1_500_000), 1_000_000),
            Some(ms(3))
        );
        // Arriving at 5.5 ms: behind everything that arrived before it.
        assert_eq!(
            nic.receive(ms(1), SimTime::from_nanos(5_500_000), 1_000_000),
            Some(ms(7))
        );
    }

    #[test]
    fn link_cuts_are_symmetric() {
        let mut cuts = LinkCuts::default();
        assert!(cuts.connected(1, 2));
        cuts.cut(2, 1);
        assert!(!cuts.connected(1, 2) && !cuts.connected(2, 1));
        assert!(cuts.connected(1, 3));
        cuts.heal(1, 2);
        assert!(cuts.connected(2, 1));
    }
}
