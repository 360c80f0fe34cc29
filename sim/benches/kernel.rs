//! Criterion benchmarks of the event kernel.
//!
//! - `kernel_hold/<N>`: HOLD operations (pop the earliest event, schedule one
//!   at now + 0.1 s + Exp(1 s)) at a steady queue size of N; throughput is in
//!   hold operations.
//! - `kernel_timer_churn/*`: a timer set and cancelled before it fires, the
//!   common timeout pattern: alone (set, cancel, pop skipping it), and
//!   alongside a HOLD load of 1,000 events (set, cancel, one hold operation),
//!   where cancelled entries linger in the heap until their time comes.
//!
//! `cargo bench -p twin-sim --bench kernel` (about half a minute on 2 cores).
//! For the kernel against a bare `BinaryHeap`, see `twin bench hold`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::RngExt;
use rand_distr::Exp;
use sim::kernel::Kernel;
use sim::rng::{self, SimRng};
use units::{SimDuration, SimTime};

/// Hold operations per criterion iteration, so the loop overhead and the
/// timer reads are amortised.
const BATCH: u64 = 1_000;

struct Delays {
    rng: SimRng,
    exp: Exp<f64>,
}

impl Delays {
    fn new() -> Self {
        Delays {
            rng: rng::stream(1, "bench/kernel"),
            exp: Exp::new(1.0).expect("valid rate"),
        }
    }

    #[inline(always)]
    fn next(&mut self) -> SimDuration {
        let seconds: f64 = self.rng.sample(self.exp);
        SimDuration::from_nanos(100_000_000 + (seconds * 1e9) as u64)
    }
}

/// A kernel with `pending` events queued, as HOLD starts.
fn filled(pending: usize, delays: &mut Delays) -> Kernel<u32> {
    let mut kernel = Kernel::new();
    for index in 0..pending {
        kernel.schedule_at(SimTime::ZERO + delays.next(), index as u32);
    }
    kernel
}

#[inline(always)]
fn hold(kernel: &mut Kernel<u32>, delays: &mut Delays) {
    let (time, index) = kernel.pop().expect("HOLD never empties the queue");
    kernel.schedule_at(time + delays.next(), black_box(index));
}

fn kernel_hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel_hold");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(BATCH));
    for pending in [1_000usize, 10_000, 100_000] {
        group.bench_with_input(
            BenchmarkId::from_parameter(pending),
            &pending,
            |b, &pending| {
                let mut delays = Delays::new();
                let mut kernel = filled(pending, &mut delays);
                // Reach the steady state before measuring.
                for _ in 0..pending {
                    hold(&mut kernel, &mut delays);
                }
                b.iter(|| {
                    for _ in 0..BATCH {
                        hold(&mut kernel, &mut delays);
                    }
                });
                black_box(kernel.now());
            },
        );
    }
    group.finish();
}

fn kernel_timer_churn(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel_timer_churn");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(BATCH));

    group.bench_function("alone", |b| {
        let mut kernel: Kernel<u32> = Kernel::new();
        b.iter(|| {
            for index in 0..BATCH as u32 {
                let timer = kernel.set_timer(kernel.now() + SimDuration::from_millis(5), index);
                assert!(kernel.cancel_timer(black_box(timer)));
                // Pops (and skips) the cancelled entry.
                assert!(kernel.pop().is_none());
            }
        });
    });

    group.bench_function("with_hold_1000", |b| {
        let mut delays = Delays::new();
        let mut kernel = filled(1_000, &mut delays);
        for _ in 0..1_000 {
            hold(&mut kernel, &mut delays);
        }
        b.iter(|| {
            for index in 0..BATCH as u32 {
                let timer = kernel.set_timer(kernel.now() + SimDuration::from_millis(5), index);
                assert!(kernel.cancel_timer(black_box(timer)));
                hold(&mut kernel, &mut delays);
            }
        });
        black_box(kernel.pending());
    });
    group.finish();
}

criterion_group!(benches, kernel_hold, kernel_timer_churn);
criterion_main!(benches);
