//! The bridge from engine work to model terms, in one place: what a piece
//! of the engine's CPU work costs under a preset's cost table, which SEDA
//! stage runs it on Cassandra and whether it allocates on the JVM heap,
//! which reactor group runs an engine scheduling group, and which fair
//! queue class carries an engine I/O class.
//!
//! The engine says what it does (`engine::CpuWork`, `engine::SchedulingGroup`,
//! `engine::IoClass`); the models say what time and hardware do
//! (`models::cost`, `models::reactor`, `models::jvm`,
//! `models::io_scheduler`). Neither crate knows the other (ARCHITECTURE.md's
//! dependency rule), so the translation lives here, where the simulator
//! joins them, and nowhere else: a new kind of engine work gets its price,
//! stage and allocation here, and the exhaustive matches below fail to
//! compile until it does.

use engine::{CpuWork, IoClass};
use models::cost::CostTable;
use models::io_scheduler::{FairQueueConfig, IoProperties, LEGACY_I3_REQUESTS_PER_DISK};
use models::jvm::{AllocationStep, JvmConfig, Stage};
use models::nvme::NvmeProfile;
use units::SimDuration;

use crate::preset::Preset;

/// What `work` costs on a core under `costs`.
pub fn price(costs: &CostTable, work: CpuWork) -> SimDuration {
    match work {
        CpuWork::WriteRequest { mutation_bytes } => costs.write_request(mutation_bytes),
        CpuWork::Coordinate => SimDuration::from_nanos(costs.coordinate_ns),
        CpuWork::CompactionMerge { bytes } => costs.compaction_merge(bytes),
        CpuWork::ReadRequest { sstables } => costs.read_request(sstables),
        CpuWork::IndexParse { bytes, from_device } => {
            costs.index_parse(bytes) + costs.page_miss(from_device)
        }
        CpuWork::DataParse {
            row_bytes,
            decompress_bytes,
            from_device,
        } => costs.data_parse(row_bytes, decompress_bytes) + costs.page_miss(from_device),
        CpuWork::ReceiveMessage { bytes } => costs.message_receive(bytes),
        CpuWork::CrossShardMessage => costs.cross_shard(),
        CpuWork::FlushSerialize { bytes, rows } => costs.flush_serialize(bytes, rows),
        CpuWork::Digest { bytes } => costs.digest(bytes),
        // Freezing a mutation into the hint log, and decoding it back, is
        // the RPC layer's (de)serialization of a message its size (the
        // same frozen-mutation encoding); a replayed hint is then sent as
        // a coordinator sends a write.
        CpuWork::HintWrite { bytes } => costs.message_receive(bytes),
        CpuWork::HintSend { bytes } => {
            costs.message_receive(bytes) + SimDuration::from_nanos(costs.coordinate_ns)
        }
        // The replayer decodes each logged mutation and applies it to the
        // memtable: a write request's mutation build, commitlog-free apply
        // and memtable insert, priced as a write of the entries' mean size
        // (an upper bound: the write's CQL decode is not redone).
        CpuWork::CommitlogReplay { entries, bytes } => {
            let entries = u64::from(entries.max(1));
            let each = costs.write_request(bytes / entries);
            SimDuration::from_nanos(each.as_nanos() * entries)
        }
        // A streaming reader decodes the rows of the table's SSTables as a
        // read decodes a row (its per-byte part; the fixed part is a
        // lookup's and its cache fill's) and freezes them as a flush
        // serializes memtable rows.
        CpuWork::StreamRead { bytes, rows } => costs.stream_read(bytes, rows),
        // Applying a streamed partition to the streaming memtable is a
        // write's mutation apply and memtable insert, without commitlog:
        // priced as a write of the partition (an upper bound, as for
        // commitlog replay: the CQL decode is not redone).
        CpuWork::StreamApply { rows, bytes } => {
            let rows = u64::from(rows.max(1));
            let each = costs.write_request(bytes / rows);
            SimDuration::from_nanos(each.as_nanos() * rows)
        }
    }
}

/// The SEDA stage that runs a piece of engine work on Cassandra.
pub fn stage_of(work: engine::CpuWork) -> Stage {
    match work {
        CpuWork::WriteRequest { .. } => Stage::Mutation,
        CpuWork::ReadRequest { .. }
        | CpuWork::IndexParse { .. }
        | CpuWork::DataParse { .. }
        | CpuWork::Digest { .. } => Stage::Read,
        // Cassandra 3.x: a message's inbound thread hands it to its verb's
        // stage; the request-response stage is folded into native
        // transport's pool here.
        CpuWork::Coordinate | CpuWork::ReceiveMessage { .. } | CpuWork::CrossShardMessage => {
            Stage::NativeTransport
        }
        CpuWork::CompactionMerge { .. } => Stage::Compaction,
        CpuWork::FlushSerialize { .. } => Stage::MemtableFlush,
        // `StorageProxy.submitHint` runs on the mutation stage; the hint
        // dispatcher's two threads are folded into it here.
        CpuWork::HintWrite { .. } | CpuWork::HintSend { .. } => Stage::Mutation,
        // `CommitLogReplayer` applies on the mutation stage.
        CpuWork::CommitlogReplay { .. } => Stage::Mutation,
        // Cassandra's stream sessions run on their own threads; folded
        // into the compaction stage's background threads here.
        CpuWork::StreamRead { .. } | CpuWork::StreamApply { .. } => Stage::Compaction,
    }
}

/// Whether `work` is a read going on after its I/O: the index block's
/// and the row's parses, which Cassandra runs on the thread that read them
/// (a blocking read from the page cache or the disk), with no hand-off.
pub fn continues_a_read(work: CpuWork) -> bool {
    matches!(work, CpuWork::IndexParse { .. } | CpuWork::DataParse { .. })
}

/// Whether `work` is request handling that allocates on Cassandra's heap,
/// and as which step (`models::jvm::AllocationParams` prices each): the
/// CQL request on its coordinator, each internode message taken in, each
/// replica's read or write, and each page a read brings in from the
/// device. Parsing, digests, flushes and compaction are counted in those.
pub fn allocation_step(work: CpuWork) -> Option<AllocationStep> {
    match work {
        CpuWork::WriteRequest { .. } => Some(AllocationStep::Write),
        CpuWork::ReadRequest { .. } => Some(AllocationStep::Read),
        CpuWork::Coordinate | CpuWork::ReceiveMessage { .. } | CpuWork::HintSend { .. } => {
            Some(AllocationStep::Other)
        }
        CpuWork::IndexParse {
            from_device: true, ..
        }
        | CpuWork::DataParse {
            from_device: true, ..
        } => Some(AllocationStep::DevicePage),
        CpuWork::HintWrite { .. }
        | CpuWork::IndexParse { .. }
        | CpuWork::DataParse { .. }
        | CpuWork::Digest { .. }
        | CpuWork::CrossShardMessage
        | CpuWork::CompactionMerge { .. }
        | CpuWork::FlushSerialize { .. }
        | CpuWork::CommitlogReplay { .. }
        | CpuWork::StreamRead { .. }
        | CpuWork::StreamApply { .. } => None,
    }
}

/// Each shard's I/O queue: its sizing and the initial shares of the
/// engine's I/O classes (scylla-mechanisms.md sections 1.5 and 8.2).
#[derive(Clone, Debug, PartialEq)]
pub struct IoScheduling {
    /// Sizing and pricing of each shard's fair queue.
    pub queue: FairQueueConfig,
    /// Shares of commitlog, memtable flush, compaction, query and
    /// streaming, in that order.
    pub shares: [f64; 5],
    /// Every class in one FIFO (Cassandra: no I/O scheduler above the
    /// kernel's deadline elevator).
    pub single_class: bool,
}

impl IoScheduling {
    /// Scylla 2.1's static shares: 100 for every foreground and background
    /// class, 20 for streaming (`priority_manager.hh` @2.1).
    pub const SCYLLA_2_1_SHARES: [f64; 5] = [100.0, 100.0, 100.0, 100.0, 20.0];
    /// Scylla 2.2 and later: 1000 each, 200 for streaming; the controllers
    /// then move memtable flush and compaction.
    pub const SCYLLA_2_2_SHARES: [f64; 5] = [1000.0, 1000.0, 1000.0, 1000.0, 200.0];

    /// What a preset's setup gives each of `shards` shards on `device`:
    /// Scylla 2.1-2.3 ran the legacy queue with `scylla_io_setup`'s
    /// `--max-io-requests = min(128 x shards, 192 x disks)` on i3; 3.0's
    /// setup wrote io_properties.yaml (scylla-mechanisms.md 8.2). Every
    /// shard is its own I/O queue (`--num-io-queues` = shards).
    pub fn for_preset(preset: Preset, device: &NvmeProfile, shards: u32) -> IoScheduling {
        let properties = IoProperties::of(device);
        let legacy = |shares| IoScheduling {
            queue: FairQueueConfig::legacy(
                properties,
                (128 * shards).min(LEGACY_I3_REQUESTS_PER_DISK * device.drives),
                shards,
            ),
            shares,
            single_class: false,
        };
        match preset {
            // The block layer's queue: 128 requests per device (the
            // deadline elevator's default `nr_requests`), first come first
            // served.
            Preset::Cassandra3_11 | Preset::Cassandra5_0 => IoScheduling {
                queue: FairQueueConfig::legacy(properties, 128 * device.drives, 1),
                shares: [1000.0; 5],
                single_class: true,
            },
            Preset::Scylla2_1 => legacy(Self::SCYLLA_2_1_SHARES),
            Preset::Scylla2_2 | Preset::Scylla2_3 => legacy(Self::SCYLLA_2_2_SHARES),
            Preset::Scylla3_0 => IoScheduling {
                queue: FairQueueConfig::io_properties(properties, shards),
                shares: Self::SCYLLA_2_2_SHARES,
                single_class: false,
            },
        }
    }

    /// The fair-queue class of an engine I/O class.
    pub fn class_of(&self, class: IoClass) -> usize {
        if self.single_class {
            return 0;
        }
        Self::scylla_class_of(class)
    }

    fn scylla_class_of(class: IoClass) -> usize {
        match class {
            IoClass::Commitlog => 0,
            IoClass::MemtableFlush => 1,
            IoClass::Compaction => 2,
            IoClass::Query => 3,
            IoClass::Streaming => 4,
        }
    }

    /// The I/O class a CPU scheduling group's controller also drives.
    pub fn class_driven_with(&self, group: engine::SchedulingGroup) -> Option<usize> {
        if self.single_class {
            return None;
        }
        match group {
            engine::SchedulingGroup::Memtable => {
                Some(Self::scylla_class_of(IoClass::MemtableFlush))
            }
            engine::SchedulingGroup::Compaction => Some(Self::scylla_class_of(IoClass::Compaction)),
            engine::SchedulingGroup::Statement
            | engine::SchedulingGroup::Query
            | engine::SchedulingGroup::Commitlog
            | engine::SchedulingGroup::Streaming => None,
        }
    }
}

/// How a shard's core divides its time between the engine's scheduling
/// groups (scylla-mechanisms.md sections 1.5 and 1.7).
#[derive(Clone, Debug, PartialEq)]
pub enum CpuScheduling {
    /// Scylla 2.1: no CPU scheduler, one FIFO task queue per shard.
    Fifo,
    /// Scylla 2.2 and later: a reactor group per kind of work with its
    /// shares: statement (the foreground; Seastar's `main` group in 2.2),
    /// memtable, commitlog, compaction, `query` for a replica's part of
    /// reads with `query_apart` (2.2; idle otherwise), and streaming (hint
    /// replay; 200 shares).
    Groups {
        /// Initial shares, in that order.
        shares: [f64; 6],
        /// Reads' replica work runs in its own group, not the statement
        /// group ([`engine::SchedulingGroup::Query`]).
        query_apart: bool,
    },
    /// Cassandra: one engine shard per node on a JVM (`models::jvm`): SEDA
    /// stages whose threads share the node's cores, and G1 pauses.
    Jvm(Box<JvmConfig>),
}

impl CpuScheduling {
    /// Scylla 2.2 (`main.cc` @2.2.0): every group is created with 1000
    /// shares; the memtable and compaction groups are then driven by their
    /// backlog controllers. `column_family::query` runs in the `query`
    /// group (`_data_query_stage`, `database.cc`); the CQL server, the
    /// coordinator, the RPC handlers and writes run in the default `main`
    /// group, also 1000.
    pub const SCYLLA_2_2: CpuScheduling = CpuScheduling::Groups {
        shares: [1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 200.0],
        query_apart: true,
    };

    /// Scylla 2.3 and 3.0: reads join the rest of the foreground in the
    /// `statement` group (1000). (2.3 still ran the RPC handlers in `main`,
    /// which 3.0 moved to `statement`; left out.)
    pub const SCYLLA_2_3: CpuScheduling = CpuScheduling::Groups {
        shares: [1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 200.0],
        query_apart: false,
    };

    /// The reactor's group shares.
    pub fn group_shares(&self) -> &[f64] {
        match self {
            CpuScheduling::Fifo | CpuScheduling::Jvm(_) => &[1000.0],
            CpuScheduling::Groups { shares, .. } => shares,
        }
    }

    /// The reactor group an engine scheduling group runs in.
    pub fn group_of(&self, group: engine::SchedulingGroup) -> usize {
        match self {
            CpuScheduling::Fifo | CpuScheduling::Jvm(_) => 0,
            CpuScheduling::Groups { query_apart, .. } => match group {
                engine::SchedulingGroup::Statement => 0,
                engine::SchedulingGroup::Memtable => 1,
                engine::SchedulingGroup::Commitlog => 2,
                engine::SchedulingGroup::Compaction => 3,
                engine::SchedulingGroup::Query => {
                    if *query_apart {
                        4
                    } else {
                        0
                    }
                }
                engine::SchedulingGroup::Streaming => 5,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One of each kind of engine work.
    const WORK: [CpuWork; CpuWork::KINDS] = [
        CpuWork::WriteRequest {
            mutation_bytes: 300,
        },
        CpuWork::Coordinate,
        CpuWork::CompactionMerge { bytes: 1 << 20 },
        CpuWork::ReadRequest { sstables: 3 },
        CpuWork::IndexParse {
            bytes: 4096,
            from_device: true,
        },
        CpuWork::DataParse {
            row_bytes: 310,
            decompress_bytes: 4096,
            from_device: true,
        },
        CpuWork::ReceiveMessage { bytes: 1100 },
        CpuWork::CrossShardMessage,
        CpuWork::FlushSerialize {
            bytes: 1 << 20,
            rows: 4333,
        },
        CpuWork::Digest { bytes: 1024 },
        CpuWork::HintWrite { bytes: 400 },
        CpuWork::HintSend { bytes: 400 },
        CpuWork::CommitlogReplay {
            entries: 100,
            bytes: 100_000,
        },
        CpuWork::StreamRead {
            bytes: 1 << 17,
            rows: 32,
        },
        CpuWork::StreamApply {
            rows: 32,
            bytes: 1 << 17,
        },
    ];

    #[test]
    fn every_kind_of_work_has_a_price_and_cassandra_pays_more_for_it() {
        let mut kinds: Vec<usize> = WORK.iter().map(|work| work.index()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), CpuWork::KINDS, "one of each kind");
        let (scylla, cassandra) = (CostTable::scylla(), CostTable::cassandra_3_11());
        for work in WORK {
            let on_scylla = price(&scylla, work);
            assert!(on_scylla > SimDuration::ZERO, "{work:?}");
            if !matches!(work, CpuWork::Digest { .. }) {
                // Digests are MD5 on Cassandra, measured, not scaled.
                assert!(on_scylla < price(&cassandra, work), "{work:?}");
            }
        }
        assert_eq!(
            price(&scylla, CpuWork::CompactionMerge { bytes: 1_000_000 }),
            scylla.compaction_merge(1_000_000)
        );
    }

    #[test]
    fn cassandra_stages_and_allocation_follow_the_request_path() {
        assert_eq!(
            stage_of(CpuWork::WriteRequest { mutation_bytes: 1 }),
            Stage::Mutation
        );
        assert_eq!(
            stage_of(CpuWork::IndexParse {
                bytes: 1,
                from_device: true
            }),
            Stage::Read
        );
        assert_eq!(stage_of(CpuWork::Coordinate), Stage::NativeTransport);
        assert_eq!(
            stage_of(CpuWork::CompactionMerge { bytes: 1 }),
            Stage::Compaction
        );
        assert_eq!(
            stage_of(CpuWork::StreamRead { bytes: 1, rows: 1 }),
            Stage::Compaction
        );
        use AllocationStep::{DevicePage, Other, Read, Write};
        let steps: Vec<Option<AllocationStep>> =
            WORK.iter().map(|work| allocation_step(*work)).collect();
        assert_eq!(
            steps,
            [
                Some(Write),
                Some(Other),
                None,
                Some(Read),
                // WORK's parses read from the device.
                Some(DevicePage),
                Some(DevicePage),
                Some(Other),
                None,
                None,
                None,
                None,
                Some(Other),
                None,
                None,
                None
            ]
        );
        // A parse of a page the page cache had allocates nothing apart.
        assert_eq!(
            allocation_step(CpuWork::DataParse {
                row_bytes: 310,
                decompress_bytes: 0,
                from_device: false
            }),
            None
        );
        assert_eq!(
            allocation_step(CpuWork::IndexParse {
                bytes: 4096,
                from_device: false
            }),
            None
        );
    }

    #[test]
    fn cassandra_puts_every_io_class_in_one_queue() {
        let device = NvmeProfile::i3_drive();
        let cassandra = IoScheduling::for_preset(Preset::Cassandra3_11, &device, 1);
        let scylla = IoScheduling::for_preset(Preset::Scylla2_2, &device, 2);
        for class in IoClass::ALL {
            assert_eq!(cassandra.class_of(class), 0);
        }
        let classes: Vec<usize> = IoClass::ALL.iter().map(|c| scylla.class_of(*c)).collect();
        let mut distinct = classes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), classes.len(), "one queue class each");
        assert_eq!(
            scylla.class_driven_with(engine::SchedulingGroup::Compaction),
            Some(scylla.class_of(IoClass::Compaction))
        );
        assert_eq!(
            cassandra.class_driven_with(engine::SchedulingGroup::Compaction),
            None
        );
    }

    #[test]
    fn scylla_2_2_runs_a_replicas_reads_in_a_query_group_of_their_own() {
        use engine::SchedulingGroup::{Compaction, Query, Statement};
        let (v2_2, v2_3) = (CpuScheduling::SCYLLA_2_2, CpuScheduling::SCYLLA_2_3);
        assert_eq!(v2_2.group_shares(), v2_3.group_shares());
        assert_eq!(v2_2.group_shares().len(), 6);
        assert_eq!(
            [Statement, Query, Compaction].map(|group| v2_2.group_of(group)),
            [0, 4, 3]
        );
        assert_eq!(
            [Statement, Query, Compaction].map(|group| v2_3.group_of(group)),
            [0, 0, 3]
        );
        assert_eq!(CpuScheduling::Fifo.group_of(Query), 0);
    }
}
