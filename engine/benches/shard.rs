//! Criterion benchmark of the engine's own CPU cost per simulated
//! operation: one shard driven by a driver that completes every CPU task
//! and I/O at once (so no device, NIC or scheduler model is in the
//! figure), for writes and for reads, in volume and in data mode.
//!
//! A write pays the commitlog append, the memtable insert and its share of
//! flushes and compactions; a read pays the memtable and SSTable lookups
//! and its I/O bookkeeping. The shard is warmed with enough writes that
//! flushes and compactions are in steady state.
//!
//! `cargo bench -p twin-engine --bench shard` (about a minute).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use engine::{
    Action, ClientRequest, ConsistencyLevel, Operation, RequestId, Shard, ShardConfig, SimTime,
};

const MIB: u64 = 1024 * 1024;
/// Keys written and read, cycled through with a multiplicative hash so
/// accesses are not sequential.
const KEYS: u64 = 1 << 20;

struct Driver {
    shard: Shard,
    now: SimTime,
    next: u64,
}

impl Driver {
    fn new(data_mode: bool) -> Driver {
        let mut config = ShardConfig::scylla_defaults(256 * MIB);
        config.data_mode = data_mode;
        let mut driver = Driver {
            shard: Shard::new(config, SimTime::ZERO),
            now: SimTime::from_nanos(1),
            next: 0,
        };
        for _ in 0..300_000 {
            driver.write();
        }
        driver
    }

    fn key(&mut self) -> u64 {
        self.next += 1;
        self.next.wrapping_mul(0x9E37_79B9_7F4A_7C15) % KEYS
    }

    fn run(&mut self, operation: Operation) {
        self.now += engine::SimDuration::from_micros(5);
        if self.shard.poll_timeout().is_some_and(|due| due <= self.now) {
            self.shard.handle_timeout(self.now);
        }
        self.shard.handle_client_request(
            self.now,
            ClientRequest {
                id: RequestId(self.next),
                operation,
                consistency: ConsistencyLevel::One,
            },
        );
        while let Some(action) = self.shard.poll_action() {
            match action {
                Action::RunCpu(task) => self.shard.handle_cpu_done(self.now, task.id),
                Action::SubmitIo(io) => self.shard.handle_io_done(self.now, io.id),
                Action::Reply(reply) => {
                    black_box(reply);
                }
                Action::SetShares { .. }
                | Action::Send { .. }
                | Action::Replayed { .. }
                | Action::StreamReceived { .. } => {}
            }
        }
    }

    fn write(&mut self) {
        let key = self.key();
        let timestamp = self.next;
        self.run(Operation::Write {
            rows: 1,
            key,
            value_bytes: 300,
            timestamp,
        });
    }

    fn read(&mut self) {
        let key = self.key();
        self.run(Operation::read(key));
    }
}

fn bench_shard(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine_per_op");
    group.throughput(Throughput::Elements(1));
    for (mode, data_mode) in [("volume", false), ("data", true)] {
        let mut driver = Driver::new(data_mode);
        group.bench_function(format!("write_{mode}"), |b| b.iter(|| driver.write()));
        let mut driver = Driver::new(data_mode);
        group.bench_function(format!("read_{mode}"), |b| b.iter(|| driver.read()));
    }
    group.finish();
}

criterion_group!(benches, bench_shard);
criterion_main!(benches);
