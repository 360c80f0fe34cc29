//! Criterion benchmark of one replica-set lookup at RF 3 on a 40-node,
//! 256-vnode ring (10,240 ranges): the Murmur3 token of a 10-byte
//! cassandra-stress key, then the precomputed [`ReplicaMap`] lookup (binary
//! search + slice). For comparison, the token alone (from the key bytes,
//! and straight from a c-s key index as placement does) and the same lookup
//! done by walking the ring ([`Ring::replicas_into`]).
//!
//! `cargo bench -p twin-engine --bench ring` (a few seconds).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use engine::ring::{
    murmur3_token, stress_key_bytes, stress_key_token, NodeSpec, ReplicaMap, Replication, Ring,
    DEFAULT_NUM_TOKENS,
};
use rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// Distinct keys cycled through, so lookups do not all hit one range.
const KEYS: usize = 4_096;

fn bench_ring(c: &mut Criterion) {
    let nodes: Vec<NodeSpec> = (0..40)
        .map(|id| NodeSpec {
            id,
            rack: id % 3,
            dc: 0,
        })
        .collect();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let ring = Ring::new(&nodes, DEFAULT_NUM_TOKENS, &mut rng).expect("valid ring");
    let keys: Vec<[u8; 10]> = (0..KEYS as u64).map(stress_key_bytes).collect();

    let mut group = c.benchmark_group("ring_40x256");
    let mut next = 0usize;
    group.bench_function("token_of_10_byte_key", |b| {
        b.iter(|| {
            next = (next + 1) % KEYS;
            murmur3_token(black_box(&keys[next]))
        })
    });
    // What placement computes per request: key index to token, without
    // building the key bytes.
    let mut seed = 0u64;
    group.bench_function("stress_key_token_of_index", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            stress_key_token(black_box(seed))
        })
    });
    group.bench_function("key_bytes_then_token_of_index", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            murmur3_token(&stress_key_bytes(black_box(seed)))
        })
    });
    for (name, strategy) in [
        ("simple_rf3", Replication::simple(3)),
        ("nts_rf3_3_racks", Replication::network_topology([(0, 3)])),
    ] {
        let map = ReplicaMap::new(&ring, &strategy);
        group.bench_function(format!("{name}/key_to_replicas_map"), |b| {
            b.iter(|| {
                next = (next + 1) % KEYS;
                let replicas = map.replicas_for_key(black_box(&keys[next]));
                black_box(replicas[0])
            })
        });
        let mut out = Vec::with_capacity(3);
        group.bench_function(format!("{name}/key_to_replicas_walk"), |b| {
            b.iter(|| {
                next = (next + 1) % KEYS;
                let token = murmur3_token(black_box(&keys[next]));
                ring.replicas_into(&strategy, token, &mut out);
                black_box(out[0])
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_ring);
criterion_main!(benches);
