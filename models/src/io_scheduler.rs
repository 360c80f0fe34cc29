//! Seastar's I/O scheduler (2018): a fair queue of priority classes in front
//! of the disk, one per shard.
//!
//! What it models (scylla-mechanisms.md section 8.2; seastar
//! `core/fair_queue.hh` and `core/reactor.cc` @980730749):
//! - every shard submits its I/O to its own queue (`--num-io-queues`
//!   defaults to the shard count); inside, each priority class (query,
//!   commitlog, memtable flush, compaction, streaming) is a FIFO with
//!   `shares`;
//! - a request is described by a `weight` and a `size`: reads weigh
//!   [`READ_REQUEST_BASE_COUNT`] (128) and have size `128 x bytes`; writes
//!   weigh `128 x read_iops / write_iops` and have size `128 x (read_bw /
//!   write_bw) x bytes`, so a write costs what it costs the disk in read
//!   units;
//! - the queue dispatches while the requests executing stay under three
//!   limits: their count under `capacity`, their weights under
//!   `max_req_count` and their sizes under `max_bytes_count` (a request is
//!   let through when the sums are *below* the limits, so the last one may
//!   cross them);
//! - it dispatches from the class with the smallest accumulated cost; a
//!   dispatched request adds `exp(dt / tau) x (weight / max_req_count +
//!   size / max_bytes_count) / shares` to its class, `dt` being the time
//!   since the queue's base and `tau` 100 ms. The exponential makes old
//!   history count for less and less: a class idle for a while comes back
//!   with an accumulated cost that new costs dwarf within a few `tau`, so
//!   it earns at most ~`tau` worth of credit, and busy classes split the
//!   disk in proportion to their shares;
//! - shares change at run time (the backlog controllers move the compaction
//!   and memtable-flush classes with their CPU shares).
//!
//! Two ways to size the queue, as Scylla's setup scripts did:
//! - [`FairQueueConfig::io_properties`] (Seastar April 2018, Scylla 3.0's
//!   `io_properties.yaml`): `max_req_count = 128 x max(read_iops,
//!   write_iops) x latency_goal / queues`, `max_bytes_count = 128 x
//!   max(read_bw, write_bw) x latency_goal / queues` with a latency goal of
//!   1.5 task quotas = 0.75 ms: each queue keeps about 0.75 ms of disk work
//!   in flight and holds the rest back where its classes can be ordered;
//! - [`FairQueueConfig::legacy`] (`--max-io-requests`, Scylla 2.1-2.3 on
//!   i3: `scylla_io_setup` wrote `min(128 x shards, 192 x disks)`): only the
//!   count `capacity = min(max_io_requests / queues, 128)` limits dispatch;
//!   the weight and size limits are the io_properties ones, used only to
//!   price requests (the legacy queue's own cost normalisation was not in
//!   the sources we read; this keeps reads and writes priced alike in both
//!   modes).
//!
//! Left out: the I/O coordinator shards of `--num-io-queues` smaller than
//! the shard count (every shard is its own coordinator here), the 2020+
//! token-bucket scheduler, and request splitting of very large I/Os (the
//! engine issues at most 128 KiB at a time).

use std::collections::VecDeque;

use units::{SimDuration, SimTime};

use crate::nvme::{IoDirection, NvmeProfile};

/// Weight of one read request (`read_request_base_count` in reactor.cc).
pub const READ_REQUEST_BASE_COUNT: f64 = 128.0;

/// `tau` of the fair queue's exponentially decaying cost history.
pub const FAIR_QUEUE_TAU: SimDuration = SimDuration::from_millis(100);

/// The io_properties latency goal: 1.5 x the 0.5 ms task quota.
pub const LATENCY_GOAL: SimDuration = SimDuration::from_micros(750);

/// Most requests one queue keeps executing (`max_aio_per_queue`).
pub const MAX_AIO_PER_QUEUE: u32 = 128;

/// Requests `scylla_io_setup` allowed per i3 NVMe drive in legacy mode
/// (`192 x disks`).
pub const LEGACY_I3_REQUESTS_PER_DISK: u32 = 192;

/// What the scheduler is told about the disk: the io_properties figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IoProperties {
    /// Random 4 KiB read IOPS.
    pub read_iops: f64,
    /// Sequential read bandwidth, bytes per second.
    pub read_bytes_per_s: f64,
    /// Random 4 KiB write IOPS.
    pub write_iops: f64,
    /// Sequential write bandwidth, bytes per second.
    pub write_bytes_per_s: f64,
}

impl IoProperties {
    /// The figures iotune would measure on `device` (its datasheet ones).
    pub fn of(device: &NvmeProfile) -> IoProperties {
        IoProperties {
            read_iops: device.read_iops,
            read_bytes_per_s: device.read_bytes_per_s,
            write_iops: device.write_iops,
            write_bytes_per_s: device.write_bytes_per_s,
        }
    }
}

/// How one queue is sized and how requests are priced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairQueueConfig {
    /// Most requests executing at once.
    pub capacity: u32,
    /// Limit on the weights executing (and the weight normaliser).
    pub max_req_count: f64,
    /// Limit on the sizes executing (and the size normaliser).
    pub max_bytes_count: f64,
    /// Whether the weight and size limits gate dispatch (io_properties
    /// mode) or only price requests (legacy mode).
    pub limit_by_cost: bool,
    /// Decay constant of the cost history.
    pub tau: SimDuration,
    /// Weight of a write: `128 x read_iops / write_iops`.
    pub write_weight: f64,
    /// Size of a write per byte: `128 x read_bw / write_bw`.
    pub write_size_per_byte: f64,
}

impl FairQueueConfig {
    /// io_properties mode, for one of `queues` queues sharing the disk.
    pub fn io_properties(properties: IoProperties, queues: u32) -> FairQueueConfig {
        let queues = f64::from(queues.max(1));
        let goal = LATENCY_GOAL.as_secs_f64();
        FairQueueConfig {
            capacity: MAX_AIO_PER_QUEUE,
            max_req_count: READ_REQUEST_BASE_COUNT
                * (properties.read_iops.max(properties.write_iops) * goal / queues).max(1.0),
            max_bytes_count: READ_REQUEST_BASE_COUNT
                * (properties
                    .read_bytes_per_s
                    .max(properties.write_bytes_per_s)
                    * goal
                    / queues)
                    .max(4096.0),
            limit_by_cost: true,
            tau: FAIR_QUEUE_TAU,
            write_weight: READ_REQUEST_BASE_COUNT * properties.read_iops / properties.write_iops,
            write_size_per_byte: READ_REQUEST_BASE_COUNT * properties.read_bytes_per_s
                / properties.write_bytes_per_s,
        }
    }

    /// Legacy mode: `max_io_requests` over `queues` queues, at most 128 each.
    pub fn legacy(properties: IoProperties, max_io_requests: u32, queues: u32) -> FairQueueConfig {
        let capacity = (max_io_requests / queues.max(1)).clamp(1, MAX_AIO_PER_QUEUE);
        FairQueueConfig {
            capacity,
            limit_by_cost: false,
            ..FairQueueConfig::io_properties(properties, queues)
        }
    }

    /// Weight and size of a request.
    pub fn describe(&self, direction: IoDirection, bytes: u64) -> IoCost {
        let bytes = bytes as f64;
        match direction {
            IoDirection::Read => IoCost {
                weight: READ_REQUEST_BASE_COUNT,
                size: READ_REQUEST_BASE_COUNT * bytes,
            },
            IoDirection::Write => IoCost {
                weight: self.write_weight,
                size: self.write_size_per_byte * bytes,
            },
        }
    }
}

/// A request's weight and size, as the queue accounts it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IoCost {
    /// Per-request part.
    pub weight: f64,
    /// Per-byte part.
    pub size: f64,
}

/// A class's queue and its standing.
#[derive(Clone, Debug)]
struct Class<T> {
    shares: f64,
    accumulated: f64,
    queue: VecDeque<(IoCost, T)>,
    dispatched: u64,
    dispatched_bytes_equivalent: f64,
}

/// One shard's fair queue; `T` is what the caller needs back when a
/// request is dispatched.
#[derive(Clone, Debug)]
pub struct FairQueue<T> {
    config: FairQueueConfig,
    classes: Vec<Class<T>>,
    executing: u32,
    executing_weight: f64,
    executing_size: f64,
    base: SimTime,
    queued: usize,
}

/// When the decay factor's exponent passes this, costs are renormalised
/// (Seastar does it when the float overflows).
const RENORMALISE_EXPONENT: f64 = 50.0;

impl<T> FairQueue<T> {
    /// A queue with one class per entry of `shares`.
    pub fn new(config: FairQueueConfig, shares: &[f64]) -> FairQueue<T> {
        FairQueue {
            config,
            classes: shares
                .iter()
                .map(|&shares| Class {
                    shares: shares.max(1.0),
                    accumulated: 0.0,
                    queue: VecDeque::new(),
                    dispatched: 0,
                    dispatched_bytes_equivalent: 0.0,
                })
                .collect(),
            executing: 0,
            executing_weight: 0.0,
            executing_size: 0.0,
            base: SimTime::ZERO,
            queued: 0,
        }
    }

    /// The queue's sizing.
    pub fn config(&self) -> &FairQueueConfig {
        &self.config
    }

    /// Gives `class` new shares (at least 1, as Seastar clamps them).
    pub fn set_shares(&mut self, class: usize, shares: f64) {
        self.classes[class].shares = shares.max(1.0);
    }

    /// The shares of `class`.
    pub fn shares(&self, class: usize) -> f64 {
        self.classes[class].shares
    }

    /// Queues a request of `bytes` in `class`.
    pub fn queue(&mut self, class: usize, direction: IoDirection, bytes: u64, payload: T) {
        let cost = self.config.describe(direction, bytes);
        self.classes[class].queue.push_back((cost, payload));
        self.queued += 1;
    }

    fn can_dispatch(&self) -> bool {
        self.executing < self.config.capacity
            && (!self.config.limit_by_cost
                || (self.executing_weight < self.config.max_req_count
                    && self.executing_size < self.config.max_bytes_count))
    }

    /// The next request to send to the disk, if one is queued and the
    /// limits allow. Call until `None` after queueing and after every
    /// [`FairQueue::complete`].
    pub fn dispatch(&mut self, now: SimTime) -> Option<(IoCost, T)> {
        if self.queued == 0 || !self.can_dispatch() {
            return None;
        }
        // The class with the least accumulated cost; ties to the lowest
        // index, so the order is deterministic.
        let mut best: Option<usize> = None;
        for (index, class) in self.classes.iter().enumerate() {
            if class.queue.is_empty() {
                continue;
            }
            if best.is_none_or(|b| class.accumulated < self.classes[b].accumulated) {
                best = Some(index);
            }
        }
        let index = best?;
        let mut exponent = (now - self.base).as_secs_f64() / self.config.tau.as_secs_f64();
        if exponent > RENORMALISE_EXPONENT {
            let factor = (-exponent).exp();
            for class in &mut self.classes {
                class.accumulated *= factor;
            }
            self.base = now;
            exponent = 0.0;
        }
        let class = &mut self.classes[index];
        let (cost, payload) = class.queue.pop_front().expect("chosen class has work");
        let normalised =
            cost.weight / self.config.max_req_count + cost.size / self.config.max_bytes_count;
        class.accumulated += exponent.exp() * normalised / class.shares;
        class.dispatched += 1;
        class.dispatched_bytes_equivalent += cost.size / READ_REQUEST_BASE_COUNT;
        self.queued -= 1;
        self.executing += 1;
        self.executing_weight += cost.weight;
        self.executing_size += cost.size;
        Some((cost, payload))
    }

    /// A dispatched request of `cost` finished on the disk.
    pub fn complete(&mut self, cost: IoCost) {
        debug_assert!(self.executing > 0, "completion without a dispatch");
        self.executing -= 1;
        self.executing_weight = (self.executing_weight - cost.weight).max(0.0);
        self.executing_size = (self.executing_size - cost.size).max(0.0);
        if self.executing == 0 {
            // Clear float drift while nothing is in flight.
            self.executing_weight = 0.0;
            self.executing_size = 0.0;
        }
    }

    /// Drops every request waiting in the queue (its process died:
    /// nothing will dispatch them); returns them in class order. Requests
    /// on the disk stay counted until they complete.
    pub fn drop_queued(&mut self) -> Vec<T> {
        let mut dropped = Vec::with_capacity(self.queued);
        for class in &mut self.classes {
            dropped.extend(class.queue.drain(..).map(|(_, payload)| payload));
        }
        self.queued = 0;
        dropped
    }

    /// Requests waiting in the queue.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Requests waiting in `class`.
    pub fn queued_in(&self, class: usize) -> usize {
        self.classes[class].queue.len()
    }

    /// Requests on the disk.
    pub fn executing(&self) -> u32 {
        self.executing
    }

    /// Requests dispatched from `class` so far, and their read-equivalent
    /// bytes (writes counted at what they cost the disk in reads).
    pub fn dispatched(&self, class: usize) -> (u64, f64) {
        let class = &self.classes[class];
        (class.dispatched, class.dispatched_bytes_equivalent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i3_properties() -> IoProperties {
        IoProperties::of(&NvmeProfile::i3_drive())
    }

    #[test]
    fn io_properties_sizing_keeps_three_quarters_of_a_millisecond_in_flight() {
        // One i3 drive shared by 14 queues (i3.4xlarge has two; one here).
        let config = FairQueueConfig::io_properties(i3_properties(), 14);
        let reads_in_flight = config.max_req_count / READ_REQUEST_BASE_COUNT;
        assert!((reads_in_flight - 411_200.0 * 0.00075 / 14.0).abs() < 1e-6);
        // A write weighs read_iops / write_iops reads: 2.27 on the i3 drive.
        let write = config.describe(IoDirection::Write, 4096);
        assert!((write.weight / READ_REQUEST_BASE_COUNT - 411_200.0 / 181_500.0).abs() < 0.01);
        let legacy = FairQueueConfig::legacy(i3_properties(), 2 * LEGACY_I3_REQUESTS_PER_DISK, 14);
        assert_eq!(legacy.capacity, 27);
        assert!(!legacy.limit_by_cost);
    }

    /// Keeps `depth` requests executing, completing the oldest each step,
    /// with every class always backlogged; returns requests per class.
    fn run_backlogged(queue: &mut FairQueue<usize>, bytes: &[u64], steps: usize) -> Vec<u64> {
        let classes = bytes.len();
        let mut in_flight: VecDeque<IoCost> = VecDeque::new();
        let mut served = vec![0u64; classes];
        let mut now = SimTime::ZERO;
        for (class, &size) in bytes.iter().enumerate() {
            for _ in 0..4 {
                queue.queue(class, IoDirection::Read, size, class);
            }
        }
        for _ in 0..steps {
            while let Some((cost, class)) = queue.dispatch(now) {
                in_flight.push_back(cost);
                served[class] += 1;
                queue.queue(class, IoDirection::Read, bytes[class], class);
            }
            let cost = in_flight.pop_front().expect("something executes");
            queue.complete(cost);
            now += SimDuration::from_micros(10);
        }
        served
    }

    #[test]
    fn backlogged_classes_share_the_disk_by_their_shares() {
        let config = FairQueueConfig::legacy(i3_properties(), 16, 1);
        let mut queue = FairQueue::new(config, &[100.0, 1000.0]);
        let served = run_backlogged(&mut queue, &[4096, 4096], 200_000);
        let ratio = served[1] as f64 / served[0] as f64;
        assert!(
            (ratio - 10.0).abs() < 0.2,
            "served {served:?}, ratio {ratio}"
        );
    }

    #[test]
    fn backlogged_classes_get_equal_disk_time_whatever_their_request_sizes() {
        // Equal shares, 4 KiB vs 128 KiB reads: each class's requests times
        // their cost (IOPS time + bandwidth time at the io_properties) come
        // out equal, so the large class gets ~2x the bytes on an i3 drive,
        // not 32x (per request) nor 1x (per byte).
        let config = FairQueueConfig::io_properties(i3_properties(), 1);
        let mut queue = FairQueue::new(config, &[1000.0, 1000.0]);
        let served = run_backlogged(&mut queue, &[4096, 131_072], 200_000);
        let time = |bytes: u64| {
            let cost = config.describe(IoDirection::Read, bytes);
            cost.weight / config.max_req_count + cost.size / config.max_bytes_count
        };
        let ratio = served[1] as f64 * time(131_072) / (served[0] as f64 * time(4096));
        assert!(
            (ratio - 1.0).abs() < 0.02,
            "served {served:?}, disk-time ratio {ratio}"
        );
        let byte_ratio = served[1] as f64 * 32.0 / served[0] as f64;
        assert!((byte_ratio - 2.12).abs() < 0.05, "byte ratio {byte_ratio}");
    }

    #[test]
    fn an_idle_class_earns_credit_for_about_tau_not_for_its_whole_idle_time() {
        let config = FairQueueConfig::legacy(i3_properties(), 1, 1);
        let mut queue: FairQueue<u8> = FairQueue::new(config, &[1000.0, 1000.0]);
        // Class 0 runs alone for 2 s, one request every 100 us.
        let mut now = SimTime::ZERO;
        while now < SimTime::from_nanos(2_000_000_000) {
            queue.queue(0, IoDirection::Read, 4096, 0);
            let (cost, _) = queue.dispatch(now).unwrap();
            queue.complete(cost);
            now += SimDuration::from_micros(100);
        }
        // Now both are backlogged: class 1 catches up for what class 0 did
        // in the last ~tau (100 ms = 1,000 requests), not for the 20,000 of
        // the 2 s, then they alternate.
        for _ in 0..3_000 {
            queue.queue(0, IoDirection::Read, 4096, 0);
            queue.queue(1, IoDirection::Read, 4096, 1);
        }
        let mut order = Vec::new();
        for _ in 0..3_000 {
            let (cost, class) = queue.dispatch(now).unwrap();
            order.push(class);
            queue.complete(cost);
            now += SimDuration::from_micros(100);
        }
        let catch_up = order.iter().take_while(|&&c| c == 1).count();
        assert!(
            (500..2_000).contains(&catch_up),
            "class 1 ran {catch_up} requests before class 0 got one"
        );
        let tail = &order[2_000..];
        let class0 = tail.iter().filter(|&&c| c == 0).count();
        assert!(
            (480..=520).contains(&class0),
            "then they alternate: {class0} of 1000"
        );
    }

    #[test]
    fn dispatch_stops_at_capacity_and_resumes_on_completion() {
        let config = FairQueueConfig::legacy(i3_properties(), 3, 1);
        let mut queue = FairQueue::new(config, &[1000.0]);
        for i in 0..5 {
            queue.queue(0, IoDirection::Write, 4096, i);
        }
        let mut dispatched = Vec::new();
        while let Some(request) = queue.dispatch(SimTime::ZERO) {
            dispatched.push(request);
        }
        assert_eq!(dispatched.len(), 3);
        assert_eq!(queue.executing(), 3);
        assert_eq!(queue.queued(), 2);
        queue.complete(dispatched[0].0);
        let (_, next) = queue.dispatch(SimTime::ZERO).unwrap();
        assert_eq!(next, 3, "FIFO within a class");
        assert!(queue.dispatch(SimTime::ZERO).is_none());
    }

    #[test]
    fn io_properties_mode_holds_back_bytes_beyond_the_latency_goal() {
        // 128 KiB reads: one queue alone on an i3 drive may keep ~1.5 MB in
        // flight (2 GB/s x 0.75 ms), i.e. 12 such reads, not 128.
        let config = FairQueueConfig::io_properties(i3_properties(), 1);
        let mut queue = FairQueue::new(config, &[1000.0]);
        for i in 0..100 {
            queue.queue(0, IoDirection::Read, 131_072, i);
        }
        let mut dispatched = 0;
        while queue.dispatch(SimTime::ZERO).is_some() {
            dispatched += 1;
        }
        let expected = (2.015e9_f64 * 0.00075 / 131_072.0).ceil() as u32;
        assert!(
            dispatched == expected || dispatched == expected + 1,
            "dispatched {dispatched}, expected about {expected}"
        );
    }

    #[test]
    fn shares_can_change_while_running() {
        let config = FairQueueConfig::legacy(i3_properties(), 16, 1);
        let mut queue = FairQueue::new(config, &[1000.0, 1000.0]);
        let even = run_backlogged(&mut queue, &[4096, 4096], 50_000);
        assert!(
            (even[0] as f64 / even[1] as f64 - 1.0).abs() < 0.02,
            "{even:?}"
        );
        queue.set_shares(1, 250.0);
        assert_eq!(queue.shares(1), 250.0);
        let before = (queue.dispatched(0).0, queue.dispatched(1).0);
        // Drive it on (run_backlogged queues 4 more per class; fine).
        let _ = run_backlogged(&mut queue, &[4096, 4096], 200_000);
        let after = (queue.dispatched(0).0, queue.dispatched(1).0);
        let ratio = (after.0 - before.0) as f64 / (after.1 - before.1) as f64;
        assert!((ratio - 4.0).abs() < 0.15, "ratio after the change {ratio}");
    }
}
