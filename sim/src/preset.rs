//! The software presets: which database and version a cluster runs, as a
//! type rather than a name compared where it matters.
//!
//! A preset is a feature set, not a fork (ARCHITECTURE.md): every version
//! runs the same engine, and what differs is asked of the preset here, one
//! question per difference, each answered in one place with its source.
//! The scenario names a preset (`[cluster] preset = "scylla-2.2"`);
//! [`Preset::from_name`] resolves it and the plan carries the value.
//!
//! Of what the presets switch, this build models the runtime (a Seastar
//! reactor per shard: 2.1 with one FIFO queue, 2.2 on with scheduling
//! groups and shares; Cassandra's JVM with thread pools and G1), the I/O
//! scheduler, the backlog controllers (2.2 on), the digest hash (MD5 in 2.1
//! and Cassandra, xxHash64 after), the size-tiered pair fallback (2.2 on),
//! the leveled-compaction details of 2.2 / 2.3 / 3.0, the row cache's entry
//! size, the cost table and hinted handoff (3.0 and Cassandra), and
//! Cassandra's heap.
//!
//! Cassandra 5.0 against 3.11, as the twin models them (each with its
//! source): the heap sized by `cassandra-env.sh`'s rule instead of R5's
//! 48 GiB ([`Preset::cassandra_heap_bytes`]); G1 under Java 17 with 5.0's
//! `jvm17-server.options`: young pauses as long as what they copy (the
//! on-heap memtable's rows, what reads leave alive) and the cards they
//! scan, eden sized to the pause goal, the pause's parts, the allocation
//! per step and the memtable row fitted to the real node's GC logs (`models::jvm::G1Params::cassandra_5_0`,
//! [`Preset::memtable_row_overhead_bytes`]); its cost
//! table fitted to the real node's CPU per operation
//! (`models::cost::CostTable::cassandra_5_0`); 16-KiB compression chunks
//! (4.0's CASSANDRA-13241); the index file mapped into memory
//! (`disk_access_mode: mmap_index_only`), so its pages go through the page
//! cache; a read's parse continuing on its own thread after its I/O
//! (`SEPExecutor.maybeExecuteImmediately`); the request stages as
//! `SharedExecutorPool`'s spinning workers (`models::sep`, each run on the
//! core priced on the real node's machine, `models::jvm::CASSANDRA_5_0_SEP`),
//! the native transport's event loop in front, and exact wake-ups
//! (`models::jvm::JvmConfig::exact_wakeups`). The compaction
//! throttle's default is 64 MiB/s (`compaction_throughput`, Config.java
//! @5.0; 16 in 3.11). Unchanged from 3.11, and so shared (Config.java
//! @5.0, read from the 5.0.9 jar): the stage sizes (`concurrent_reads` and
//! `concurrent_writes` 32, `native_transport_max_threads` 128), on-heap
//! memtables (`memtable_allocation_type: heap_buffers`) of a quarter of
//! the heap, size-tiered compaction's `min_threshold`, 32-MiB commitlog
//! segments, hint files and their 1024-KiB/s throttle. Not
//! modelled: 4.0's internode messaging rewrite (one Netty event loop per
//! connection instead of 3.11's outbound threads: the twin's messages cost
//! the same), 5.0's trie memtables and BTI SSTables (off by default), and
//! unified compaction (off by default).

use std::fmt;

use engine::hints::HintsSetup;
use models::cost::CostTable;

/// A software preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Preset {
    /// Scylla 2.1: no CPU scheduler, static I/O shares, MD5 digests.
    Scylla2_1,
    /// Scylla 2.2: scheduling groups, backlog controllers, xxHash64.
    Scylla2_2,
    /// Scylla 2.3: 2.2 with the 2.3 controller and leveled details.
    Scylla2_3,
    /// Scylla 3.0: io_properties I/O scheduling.
    Scylla3_0,
    /// Cassandra 3.11 on the JVM with G1.
    Cassandra3_11,
    /// Cassandra 5.0 on the JVM (Java 17's G1), as `deploy/real` runs it:
    /// the preset the real node is measured against (`validation/REAL.md`).
    Cassandra5_0,
}

impl Preset {
    /// Every preset, oldest Scylla first.
    pub const ALL: [Preset; 6] = [
        Preset::Scylla2_1,
        Preset::Scylla2_2,
        Preset::Scylla2_3,
        Preset::Scylla3_0,
        Preset::Cassandra3_11,
        Preset::Cassandra5_0,
    ];

    /// The name a scenario gives it (and `summary.json` reports).
    pub fn name(self) -> &'static str {
        match self {
            Preset::Scylla2_1 => "scylla-2.1",
            Preset::Scylla2_2 => "scylla-2.2",
            Preset::Scylla2_3 => "scylla-2.3",
            Preset::Scylla3_0 => "scylla-3.0",
            Preset::Cassandra3_11 => "cassandra-3.11",
            Preset::Cassandra5_0 => "cassandra-5.0",
        }
    }

    /// The preset of a name, if there is one.
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|preset| preset.name() == name)
    }

    /// The accepted names, for error messages: `scylla-2.1, ..., cassandra-5.0`.
    pub fn names() -> String {
        Preset::ALL.map(Preset::name).join(", ")
    }

    /// Cassandra: the JVM runtime, thread pools, no shards.
    pub fn is_cassandra(self) -> bool {
        matches!(self, Preset::Cassandra3_11 | Preset::Cassandra5_0)
    }

    /// Whether a Cassandra lookup's Index file page goes through the OS
    /// page cache (`engine::cache::page_cache`) as its Data page does: on 5.0,
    /// modelled as Cassandra reads (Index and Data files both through the
    /// page cache); on 3.11 every lookup's index read stays a disk read,
    /// the path R5's cost factor and G1 pauses were fitted with (changing
    /// it there is a refit, left to the published-fidelity work).
    pub fn caches_index_pages(self) -> bool {
        self == Preset::Cassandra5_0
    }

    /// Cassandra's default `compaction_throughput`, MiB/s: 16 in 3.11, 64
    /// in 5.0 (Config.java @5.0). `None` for Scylla (no such throttle).
    pub fn cassandra_compaction_throughput_mib(self) -> Option<u64> {
        match self {
            Preset::Cassandra3_11 => Some(16),
            Preset::Cassandra5_0 => Some(64),
            _ => None,
        }
    }

    /// A memtable row's memory beyond its key and value bytes, where the
    /// preset prices it apart from the engine's Cassandra default (200 B
    /// \[E\], 3.11's): 5.0's on-heap memtable keeps 829 B per row beyond
    /// them, from the real node's GC logs (`models::jvm::
    /// CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE`, 1,007 B left alive per C1
    /// write, less C1's 178 row bytes as the engine counts them: 8 of key
    /// and 5 x 34 of value). It sizes both the memtable (its flushes) and
    /// what a young pause copies.
    pub fn memtable_row_overhead_bytes(self) -> Option<u64> {
        match self {
            Preset::Cassandra5_0 => {
                Some(models::jvm::CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE - (8 + 5 * 34))
            }
            _ => None,
        }
    }

    /// Cassandra's JVM heap on a node of `memory_bytes`: 3.11 runs R5's
    /// 48 GiB (the heap its G1 model's pauses were fitted for, section 4.4
    /// of hardware.md); 5.0 sizes it as `cassandra-env.sh` does with no
    /// `MAX_HEAP_SIZE` set, max(min(1/2 of memory, 1 GiB), min(1/4 of
    /// memory, 8 GiB)) (6 GiB on the real node's 24-GiB machine, as
    /// `deploy/real/cassandra.sh` starts it). `None` for Scylla.
    pub fn cassandra_heap_bytes(self, memory_bytes: u64) -> Option<u64> {
        const GIB: u64 = 1 << 30;
        match self {
            Preset::Cassandra3_11 => Some(48 * GIB),
            Preset::Cassandra5_0 => Some(
                (memory_bytes / 2)
                    .min(GIB)
                    .max((memory_bytes / 4).min(8 * GIB)),
            ),
            _ => None,
        }
    }

    /// How a node streams ranges to a peer (`engine::streaming`): an RPC
    /// per partition up to Scylla 2.3, a continuous stream from 3.0
    /// (Cassandra 3.11 streams SSTable sections over one connection).
    pub fn stream_mode(self) -> engine::streaming::StreamMode {
        match self {
            Preset::Scylla2_1 | Preset::Scylla2_2 | Preset::Scylla2_3 => {
                engine::streaming::StreamMode::Rpc
            }
            Preset::Scylla3_0 | Preset::Cassandra3_11 | Preset::Cassandra5_0 => {
                engine::streaming::StreamMode::Stream
            }
        }
    }

    /// How many peers a range streamer streams with at once: 16 in 3.0,
    /// all of them before (and in Cassandra).
    pub fn stream_peers_at_once(self) -> usize {
        match self {
            Preset::Scylla3_0 => engine::streaming::PEERS_AT_ONCE_3_0,
            _ => usize::MAX,
        }
    }

    /// Scylla 2.3 or later (3.0): leveled compaction pushes idle levels up
    /// and the row cache's entries are smaller (`row_cache`).
    pub fn is_scylla_2_3_or_later(self) -> bool {
        matches!(self, Preset::Scylla2_3 | Preset::Scylla3_0)
    }

    /// Whether size-tiered compaction insists on `min_threshold` SSTables
    /// (`compaction_enforce_min_threshold`): Scylla 2.1 and Cassandra do;
    /// Scylla 2.2 added the fallback to pairs of one tier (its default
    /// `false`, `db/config.hh` @2.2).
    pub fn enforces_min_threshold(self) -> bool {
        matches!(
            self,
            Preset::Scylla2_1 | Preset::Cassandra3_11 | Preset::Cassandra5_0
        )
    }

    /// The default compression chunk (`chunk_length_in_kb`): 4 KiB on
    /// Scylla, 64 on Cassandra 3.11, 16 from Cassandra 4.0
    /// (CASSANDRA-13241, `CompressionParams.DEFAULT_CHUNK_LENGTH` @5.0).
    pub fn default_chunk_kb(self) -> u64 {
        match self {
            Preset::Cassandra3_11 => 64,
            Preset::Cassandra5_0 => 16,
            _ => 4,
        }
    }

    /// Hinted handoff as the preset keeps it in a cluster of `nodes`:
    /// Scylla 3.0's commitlog-based hints and Cassandra 3.11's hint files
    /// (`engine::hints`); Scylla before 3.0 keeps none (R4: 2.3 "has no
    /// hinted handoff", its replicas' differences are found by read
    /// repair only).
    pub fn hints(self, nodes: u32) -> Option<HintsSetup> {
        match self {
            Preset::Scylla2_1 | Preset::Scylla2_2 | Preset::Scylla2_3 => None,
            Preset::Scylla3_0 => Some(HintsSetup::SCYLLA_3_0),
            // 5.0 keeps 3.11's hint files, dispatcher and throttle
            // (`hinted_handoff_throttle` 1024 KiB, Config.java @5.0).
            Preset::Cassandra3_11 | Preset::Cassandra5_0 => Some(HintsSetup::cassandra_3_11(nodes)),
        }
    }

    /// The cost table of its engine work (`models::cost`): Scylla 2.1
    /// digests with MD5, later Scylla versions with xxHash64; Cassandra's
    /// table is its own.
    pub fn costs(self) -> CostTable {
        match self {
            Preset::Scylla2_1 => CostTable::scylla_2_1(),
            Preset::Scylla2_2 | Preset::Scylla2_3 | Preset::Scylla3_0 => CostTable::scylla(),
            Preset::Cassandra3_11 => CostTable::cassandra_3_11(),
            Preset::Cassandra5_0 => CostTable::cassandra_5_0(),
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_have_no_preset() {
        for preset in Preset::ALL {
            assert_eq!(Preset::from_name(preset.name()), Some(preset));
            assert_eq!(preset.to_string(), preset.name());
        }
        assert_eq!(Preset::from_name("scylla-2.4"), None);
        assert_eq!(Preset::from_name("Scylla-2.2"), None);
        assert_eq!(
            Preset::names(),
            "scylla-2.1, scylla-2.2, scylla-2.3, scylla-3.0, cassandra-3.11, cassandra-5.0"
        );
    }

    #[test]
    fn digests_are_md5_only_in_2_1_and_cassandra() {
        let md5 = CostTable::scylla_2_1().digest(1024);
        let xx = CostTable::scylla().digest(1024);
        assert!(md5.as_nanos() > 5 * xx.as_nanos());
        assert_eq!(Preset::Scylla2_1.costs().digest(1024), md5);
        for preset in [Preset::Scylla2_2, Preset::Scylla2_3, Preset::Scylla3_0] {
            assert_eq!(preset.costs().digest(1024), xx, "{preset}");
        }
        assert_eq!(Preset::Cassandra3_11.costs().digest(1024), md5);
    }
}
