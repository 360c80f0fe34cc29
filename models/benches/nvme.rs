//! Criterion benchmark of one NVMe model step: complete the earliest
//! outstanding request and submit the next one, in a closed loop at queue
//! depth 32 (the step includes one binary-heap pop and push to find the
//! earliest completion, as a driver would).
//!
//! `cargo bench -p twin-models --bench nvme` (a few seconds).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use models::nvme::{IoDirection, IoOp, NvmeDevice, NvmeProfile};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use units::SimTime;

/// Steps per criterion iteration.
const BATCH: u64 = 1_000;
/// Requests outstanding.
const DEPTH: u64 = 32;

struct Loop {
    device: NvmeDevice,
    rng: Pcg64Mcg,
    op: IoOp,
    pending: BinaryHeap<Reverse<(SimTime, u64)>>,
}

impl Loop {
    fn new(profile: NvmeProfile, op: IoOp) -> Loop {
        let mut device = NvmeDevice::new(profile);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let pending = (0..DEPTH)
            .map(|tag| {
                let c = device
                    .submit(SimTime::ZERO, tag, op, &mut rng)
                    .expect("promised");
                Reverse((c.at, c.tag))
            })
            .collect();
        let mut this = Loop {
            device,
            rng,
            op,
            pending,
        };
        // Reach the steady state before measuring.
        for _ in 0..10 * BATCH {
            this.step();
        }
        this
    }

    #[inline(always)]
    fn step(&mut self) {
        let Reverse((now, tag)) = self.pending.pop().expect("closed loop");
        black_box(self.device.complete(now, &mut self.rng));
        let c = self
            .device
            .submit(now, tag, self.op, &mut self.rng)
            .expect("promised");
        self.pending.push(Reverse((c.at, c.tag)));
    }
}

fn nvme_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("nvme_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(BATCH));
    let read_4k = IoOp {
        direction: IoDirection::Read,
        bytes: 4096,
    };
    let write_4k = IoOp {
        direction: IoDirection::Write,
        bytes: 4096,
    };
    let write_128k = IoOp {
        direction: IoDirection::Write,
        bytes: 128 * 1024,
    };
    let cases = [
        ("i3-nvme/randread-4k", NvmeProfile::i3_drive(), read_4k),
        ("i3-nvme/randwrite-4k", NvmeProfile::i3_drive(), write_4k),
        (
            "i3-nvme-x8/randwrite-128k",
            NvmeProfile::i3_drive().striped(8),
            write_128k,
        ),
        (
            "optane-p4800x-x2/randread-4k",
            NvmeProfile::optane_p4800x().striped(2),
            read_4k,
        ),
    ];
    for (name, profile, op) in cases {
        group.bench_function(name, |b| {
            let mut closed = Loop::new(profile.clone(), op);
            b.iter(|| {
                for _ in 0..BATCH {
                    closed.step();
                }
            });
            black_box(closed.device.completed());
        });
    }
    group.finish();
}

criterion_group!(benches, nvme_step);
criterion_main!(benches);
