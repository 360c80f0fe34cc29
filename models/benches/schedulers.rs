//! Criterion benchmarks of one step of the network and scheduler models,
//! each in a steady closed loop as the simulator drives them:
//! - `nic_step`: a NIC with two backlogged flows: one wake-up that puts the
//!   next message on the wire (fair-queue choice, jitter draw), plus the
//!   send that refills the flow;
//! - `fair_queue_step`: a shard's I/O queue with four backlogged classes:
//!   one completion, one dispatch and one queueing;
//! - `reactor_step`: a reactor with four always-busy groups: one run ending
//!   and the next one starting.
//!
//! `cargo bench -p twin-models --bench schedulers` (a few seconds).

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use models::io_scheduler::{FairQueue, FairQueueConfig, IoCost, IoProperties};
use models::network::{Delivery, FlowId, Nic};
use models::nvme::{IoDirection, NvmeProfile};
use models::reactor::{Reactor, SCYLLA_TASK_QUOTA};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use units::{SimDuration, SimTime};

/// Steps per criterion iteration.
const BATCH: u64 = 1_000;

fn nic_step(c: &mut Criterion) {
    let mut nic: Nic<u32> = Nic::new(10.0);
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut now = SimTime::ZERO;
    for flow in 0..2 {
        for _ in 0..8 {
            black_box(nic.send(now, FlowId(flow), 16_384, flow, &mut rng));
        }
    }
    let mut wake = nic.take_wakeup().expect("backlogged");
    let mut group = c.benchmark_group("nic_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(BATCH));
    group.bench_function("two-backlogged-flows", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                now = wake;
                if let Some(Delivery::Arrives { payload, .. }) = nic.wake(now, &mut rng) {
                    black_box(nic.send(now, FlowId(payload), 16_384, payload, &mut rng));
                }
                wake = nic.take_wakeup().expect("backlogged");
            }
        });
    });
    group.finish();
}

fn fair_queue_step(c: &mut Criterion) {
    let properties = IoProperties::of(&NvmeProfile::i3_drive().striped(2));
    let mut queue: FairQueue<usize> =
        FairQueue::new(FairQueueConfig::io_properties(properties, 14), &[1000.0; 4]);
    let mut in_flight: VecDeque<(IoCost, usize)> = VecDeque::new();
    let mut now = SimTime::ZERO;
    for class in 0..4 {
        for _ in 0..16 {
            queue.queue(class, IoDirection::Read, 4096, class);
        }
    }
    while let Some(request) = queue.dispatch(now) {
        in_flight.push_back(request);
    }
    let mut group = c.benchmark_group("fair_queue_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(BATCH));
    group.bench_function("four-backlogged-classes", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                now += SimDuration::from_micros(3);
                let (cost, class) = in_flight.pop_front().expect("executing");
                queue.complete(cost);
                queue.queue(class, IoDirection::Read, 4096, class);
                while let Some(request) = queue.dispatch(now) {
                    in_flight.push_back(request);
                }
            }
        });
    });
    group.finish();
}

fn reactor_step(c: &mut Criterion) {
    let mut reactor = Reactor::new(&[1000.0, 500.0, 200.0, 100.0], SCYLLA_TASK_QUOTA);
    let task = SimDuration::from_micros(30);
    let mut next = None;
    for group in 0..4 {
        for tag in 0..4 {
            if let Some(run) = reactor.submit(SimTime::ZERO, (group * 4 + tag) as u64, group, task)
            {
                next = Some(run);
            }
        }
    }
    let mut next = next.expect("the reactor runs");
    let mut group = c.benchmark_group("reactor_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(BATCH));
    group.bench_function("four-busy-groups", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                let ended = reactor.complete(next.at);
                if let Some(tag) = ended.finished {
                    // Resubmit the finished task to its group: always busy.
                    reactor.submit(next.at, tag, (tag / 4) as usize, task);
                }
                next = if ended.polls {
                    reactor.resume(next.at)
                } else {
                    ended.next
                }
                .expect("always busy");
            }
        });
    });
    group.finish();
}

criterion_group!(benches, nic_step, fair_queue_step, reactor_step);
criterion_main!(benches);
