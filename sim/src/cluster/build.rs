//! What [`Simulation::new`](super::Simulation) builds a run of, one piece
//! per function: the ring's placement, each node's hardware (device, NIC
//! and its random streams), each shard's engine configuration, the nodes'
//! engines, the shards' CPU and I/O state, the client processes and the
//! metrics per operation type. Every random stream is drawn by name from
//! the run's seed (`crate::rng`), so the pieces could be built in any
//! order but one: a JVM starts mid-cycle from its node's `jvm_rng`, so the
//! hardware comes before the shards.

use engine::{Placement, ShardAddress, ShardConfig};
use models::io_scheduler::FairQueue;
use models::jvm::JvmNode;
use models::network::Nic;
use models::nvme::NvmeDevice;
use models::reactor::{Reactor, SCYLLA_TASK_QUOTA};
use rand::RngExt;
use slab::Slab;
use std::collections::VecDeque;
use units::{SimDuration, SimTime};

use super::{
    metrics, process_share, ClientProcess, ClusterPlan, CpuScheduling, LoadState, NodeHardware,
    RunPlan, ShardCpu, ShardState, TimeSpent, WakeUps,
};
use crate::load::{LoadPlan, MixCursor, OpKind, Schedule};
use crate::metrics::OpMetrics;
use crate::rng;

/// The ring's placement of replicas over `total_nodes`, those an
/// `add-node` starts later included.
pub(super) fn placement(cluster: &ClusterPlan, seed: u64, total_nodes: u32) -> Placement {
    if total_nodes > cluster.nodes {
        engine::Placement::of_topology(
            &engine::topology::TokenMetadata::new(&cluster.ring(seed)).planted(cluster.planted),
            &cluster.replication(),
            cluster.shards_per_node,
            total_nodes,
        )
    } else {
        cluster.placement(seed)
    }
}

/// Each node's hardware: its share of the device and NIC when only some
/// of its shards are simulated (`fraction` of them), and its streams.
pub(super) fn node_hardware(
    cluster: &ClusterPlan,
    seed: u64,
    total_nodes: u32,
    fraction: f64,
) -> Vec<NodeHardware> {
    let device = if cluster.sampled() {
        cluster.device.share(fraction)
    } else {
        cluster.device.clone()
    };
    (0..total_nodes)
        .map(|node| NodeHardware {
            device: NvmeDevice::new(device.clone()),
            nic: {
                let mut nic = Nic::new(cluster.nic_gbps);
                if cluster.sampled() {
                    nic.set_share(fraction);
                }
                nic.set_propagation(cluster.network_latency, cluster.network_jitter);
                nic
            },
            disk_rng: rng::stream(seed, &format!("node/{node}/disk")),
            nic_rng: rng::stream(seed, &format!("node/{node}/nic")),
            gossip_rng: rng::stream(seed, &format!("node/{node}/gossip-nic")),
            jvm_rng: rng::stream(seed, &format!("node/{node}/jvm")),
            jvm_wake_rng: rng::stream(seed, &format!("node/{node}/jvm-wake")),
            at_last_tick: metrics::NodeSnapshot::default(),
            disk_failed: false,
            isolated: false,
            slowdowns: Vec::new(),
            crash_holds: 0,
            restarted: None,
            life_cut: false,
            node_timer: WakeUps::default(),
            partition_losses: 0,
        })
        .collect()
}

/// The engine configuration of shard `index` (node-major): its address,
/// seeds and the cluster's settings.
pub(super) fn shard_config(
    cluster: &ClusterPlan,
    seed: u64,
    placement: &Placement,
    total_nodes: u32,
    simulated_shards: u32,
    index: u32,
) -> ShardConfig {
    ShardConfig {
        address: ShardAddress {
            node: index / simulated_shards,
            shard: index % simulated_shards,
        },
        seeds: rng::shard_seeds(seed, index / simulated_shards, index % simulated_shards),
        placement: placement.clone(),
        landing: cluster.landing(),
        // The node's replicated ownership on the ring,
        // split evenly over its shards.
        // A node an `add-node` starts later owns nothing yet: the
        // mean share stands in until its tokens set its own.
        key_ownership_fraction: Some(placement.shard_ownership(index / simulated_shards))
            .filter(|owned| *owned > 0.0)
            .unwrap_or(
                placement.replica_count() as f64 / f64::from(total_nodes * cluster.shards_per_node),
            ),
        data_mode: cluster.data_mode,
        stream_mode: cluster.preset.stream_mode(),
        compression_chunk_bytes: cluster.compression_chunk_bytes,
        partition_bytes: cluster.partition_bytes,
        speculative_retry: cluster.speculative_retry,
        read_repair_chance: cluster.read_repair_chance,
        hints: cluster.hints.clone(),
        planted: cluster.planted,
        row_cache: cluster.row_cache.clone(),
        page_cache: cluster.page_cache.clone(),
        compaction_controller: cluster.controllers.compaction.clone(),
        compaction_enforce_min_threshold: cluster.compaction_enforce_min_threshold,
        compaction: cluster.compaction,
        concurrent_compactors: cluster.concurrent_compactors,
        compaction_throughput_bytes_per_sec: cluster.compaction_throughput_bytes_per_sec,
        flush_controller: cluster.controllers.flush.clone(),
        replication_factor: cluster.replication_factor,
        commitlog_sync: cluster.commitlog.sync,
        commitlog_sync_period: cluster.commitlog.sync_period,
        commitlog_segment_bytes: cluster.commitlog.segment_bytes,
        commitlog_total_space_bytes: cluster
            .commitlog
            .total_space_per_shard_bytes
            .unwrap_or(cluster.memory_per_shard_bytes),
        ..match cluster.cpu {
            CpuScheduling::Jvm(_) => {
                let defaults = ShardConfig::cassandra_defaults(cluster.memory_per_shard_bytes);
                ShardConfig {
                    memtable_row_overhead_bytes: cluster
                        .preset
                        .memtable_row_overhead_bytes()
                        .unwrap_or(defaults.memtable_row_overhead_bytes),
                    ..defaults
                }
            }
            _ => ShardConfig::scylla_defaults(cluster.memory_per_shard_bytes),
        }
    }
}

/// Each node's engine, its shards configured by [`shard_config`]; nodes
/// gossip when there are several.
pub(super) fn engines(
    cluster: &ClusterPlan,
    seed: u64,
    placement: &Placement,
    total_nodes: u32,
    simulated_shards: u32,
) -> Vec<engine::Node> {
    (0..total_nodes)
        .map(|node| {
            let shards = (0..simulated_shards)
                .map(|shard| {
                    shard_config(
                        cluster,
                        seed,
                        placement,
                        total_nodes,
                        simulated_shards,
                        node * simulated_shards + shard,
                    )
                })
                .collect();
            // Several nodes gossip; each from a stream of its own.
            let gossip = (total_nodes > 1).then(|| engine::node::GossipSetup {
                nodes: total_nodes,
                members: cluster.nodes,
                seed: rng::stream(seed, &format!("node/{node}/gossip")).random(),
                phi_convict_threshold: cluster.phi_convict_threshold,
            });
            engine::Node::new(node, shards, SimTime::ZERO, gossip)
        })
        .collect()
}

/// Each shard's CPU (a JVM started mid-cycle from its node's stream, or a
/// reactor whose task-quota tick is out of step with the others') and I/O
/// queue.
pub(super) fn shard_states(
    cluster: &ClusterPlan,
    seed: u64,
    total_nodes: u32,
    simulated_shards: u32,
    nodes: &mut [NodeHardware],
) -> Vec<ShardState> {
    (0..total_nodes * simulated_shards)
        .map(|index| ShardState {
            cpu: match &cluster.cpu {
                CpuScheduling::Jvm(config) => {
                    // The run joins a cluster that has been serving:
                    // each node's collector is somewhere in its cycle.
                    let mut node = JvmNode::new((**config).clone());
                    let hardware = &mut nodes[(index / simulated_shards) as usize];
                    node.start_mid_cycle(&mut hardware.jvm_rng);
                    if config.sep.is_some() {
                        // The shared pool's own draws: the node's stream.
                        node.seed_workers(hardware.jvm_wake_rng.random());
                    }
                    ShardCpu::Jvm {
                        node: Box::new(node),
                        wake: WakeUps::default(),
                        finished: Vec::new(),
                        memtable_reported: 0,
                    }
                }
                scheduling => {
                    // Each shard armed its task quota timer when it
                    // started: ticks out of step with the others'.
                    let mut tick = rng::shard_stream(
                        seed,
                        index / simulated_shards,
                        index % simulated_shards,
                        "task-quota",
                    );
                    let phase =
                        SimDuration::from_nanos(tick.random_range(0..SCYLLA_TASK_QUOTA.as_nanos()));
                    ShardCpu::Reactor(
                        Reactor::new(scheduling.group_shares(), SCYLLA_TASK_QUOTA)
                            .with_phase(phase),
                    )
                }
            },
            io_queue: FairQueue::new(cluster.io.queue, &cluster.io.shares),
            io_in_flight: Slab::new(),
            time_spent: TimeSpent::default(),
            cpu_busy_at_last_tick: SimDuration::ZERO,
            compaction_price_at_last_tick: 0,
            node: index / simulated_shards,
            local: index % simulated_shards,
            timer: WakeUps::default(),
            inbox: Vec::new(),
            timer_in_inbox: false,
            from_client: false,
            outbox: Vec::new(),
            up: true,
        })
        .collect()
}

/// The client processes of every load, in plan order, each with its share
/// of the load (`fraction`: the simulated share of a sampled cluster).
pub(super) fn client_processes(plan: &RunPlan, fraction: f64) -> Vec<ClientProcess> {
    let seed = plan.seed;
    let mut processes = Vec::new();
    for (load_index, load) in plan.loads.iter().enumerate() {
        for process in 0..load.processes {
            let (rate, threads, operations) = process_share(load, process, fraction);
            processes.push(ClientProcess {
                rate,
                threads,
                operations,
                load: load_index as u32,
                nic: {
                    let mut nic = Nic::new(load.loader_nic_gbps);
                    nic.set_propagation(plan.cluster.network_latency, plan.cluster.network_jitter);
                    nic
                },
                rng: rng::stream(seed, &format!("load/{}/process/{process}", load.name)),
                wake_rng: rng::stream(seed, &format!("load/{}/process/{process}/wake", load.name)),
                reply_wake_seed: rng::stream_seed(
                    seed,
                    &format!("load/{}/process/{process}/reply-wake", load.name),
                ),
                handoffs: super::ClientTally::default(),
                op_deltas: Vec::new(),
                completed: 0,
                stalled_since: None,
                stalled_time: SimDuration::ZERO,
                // From a stream of its own, so the process's key and mix
                // draws stay as they were.
                pacer_phase: rng::stream(
                    seed,
                    &format!("load/{}/process/{process}/pacer", load.name),
                )
                .random::<f64>(),
                keys: load.keys.source(),
                mix: MixCursor::new(),
                schedule: Schedule::new(rate, SimTime::ZERO),
                issued: 0,
                stop_at: None,
                issuers_running: 0,
                in_flight: 0,
                attempts: Slab::new(),
                next_serial: 0,
                timeouts: VecDeque::new(),
                timeout_check_armed: false,
                last_timestamp: 0,
                round_robin_turn: 0,
                failed_at: None,
            });
        }
    }
    processes
}

/// The metrics of each operation type the loads run (sorted, once each)
/// and each load's own.
pub(super) fn op_metrics(plan: &RunPlan) -> (Vec<OpMetrics>, Vec<LoadState>) {
    let mut kinds: Vec<OpKind> = plan.loads.iter().flat_map(LoadPlan::op_kinds).collect();
    kinds.sort();
    kinds.dedup();
    let ops: Vec<OpMetrics> = kinds.into_iter().map(OpMetrics::new).collect();
    let loads = plan
        .loads
        .iter()
        .map(|load| {
            let kinds = load.op_kinds();
            let global_ops = kinds
                .iter()
                .map(|kind| {
                    ops.iter()
                        .position(|ops| ops.kind == *kind)
                        .expect("metrics exist for every op kind") as u8
                })
                .collect();
            LoadState {
                global_ops,
                ops: kinds.iter().copied().map(OpMetrics::new).collect(),
                intervals: kinds.iter().map(|_| Vec::new()).collect(),
                kinds,
                window: None,
                started_at: None,
                finished: false,
                header_pending: false,
                search_rate: None,
                uncertainty: Default::default(),
                certain: false,
                trailer: Vec::new(),
                reporting_lines: Default::default(),
            }
        })
        .collect();
    (ops, loads)
}
