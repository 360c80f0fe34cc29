//! Criterion benchmark of one JVM node step at steady state: complete the
//! tasks due at the node's next completion and resubmit each to its stage
//! (reporting its allocation to G1), in a closed loop of 64 tasks over
//! three stages on 16 cores (threads outnumber cores, so every step goes
//! through processor sharing's fixed-point arithmetic).
//!
//! `cargo bench -p twin-models --bench jvm` (a few seconds).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use models::jvm::{JvmConfig, JvmNode, Stage, ALLOCATION_PER_OPERATION_BYTES};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use units::SimDuration;

/// Steps per criterion iteration.
const BATCH: u64 = 1_000;
/// Tasks outstanding.
const TASKS: u64 = 64;
/// Cores of the node.
const CORES: u32 = 16;

struct Loop {
    node: JvmNode,
    rng: Pcg64Mcg,
    finished: Vec<u64>,
}

/// The stage and CPU demand of task `tag` (fixed, varied across tags).
fn task(tag: u64) -> (Stage, SimDuration) {
    let stage = [Stage::NativeTransport, Stage::Read, Stage::Mutation][(tag % 3) as usize];
    (stage, SimDuration::from_micros(20 + (tag * 37) % 100))
}

impl Loop {
    fn new() -> Loop {
        let mut node = JvmNode::new(JvmConfig::cassandra_3_11(CORES, 1));
        for tag in 0..TASKS {
            let (stage, demand) = task(tag);
            node.submit(
                units::SimTime::ZERO,
                stage,
                tag,
                demand,
                units::SimDuration::ZERO,
            );
        }
        let mut this = Loop {
            node,
            rng: Pcg64Mcg::seed_from_u64(1),
            finished: Vec::with_capacity(TASKS as usize),
        };
        // Reach the steady state before measuring.
        for _ in 0..10 * BATCH {
            this.step();
        }
        this
    }

    #[inline(always)]
    fn step(&mut self) {
        let now = self.node.next_completion().expect("closed loop");
        self.node.complete(now, &mut self.finished);
        for tag in self.finished.drain(..) {
            let (stage, demand) = task(tag);
            self.node
                .submit(now, stage, tag, demand, units::SimDuration::ZERO);
            self.node
                .allocate(now, ALLOCATION_PER_OPERATION_BYTES, &mut self.rng);
        }
    }
}

fn jvm_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("jvm_step");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(BATCH));
    group.bench_function("cassandra-3.11-16-cores/64-tasks", |b| {
        let mut closed = Loop::new();
        b.iter(|| {
            for _ in 0..BATCH {
                closed.step();
            }
        });
        black_box(closed.node.tasks_completed());
    });
    group.finish();
}

criterion_group!(benches, jvm_step);
criterion_main!(benches);
