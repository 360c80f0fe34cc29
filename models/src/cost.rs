//! CPU cost table: what each named piece of engine work costs on a core.
//!
//! The engine names its work (`engine::CpuWork`); the simulator looks the
//! price up here. One table per software preset, every figure in one place;
//! `validation/CALIBRATION.md` lists each constant with its source and the
//! published figures it moves.
//!
//! How the table is calibrated (the fidelity issue): the *relative* prices
//! of the steps come from what each step does (below); their scales are then
//! fitted to what the reports measured the servers doing, never to a
//! latency:
//! - Scylla's write step to R2's CPU-bound ~418K QUORUM writes/s on 3 x
//!   i3.8xlarge with 2.2's controller (~215 us per client write,
//!   compaction included), and the compaction price to the same run under
//!   2.1 (~354K): with no CPU scheduler, 2.1's compaction takes the CPU
//!   2.2's controller keeps for the writes, so the gap between the two is
//!   what compaction costs (52 ns/B gives 356K and 418K, with memtables
//!   flushing as often as Scylla's measured memtable footprint makes them);
//! - Scylla's read-from-disk steps to two loads: the fixed price of a
//!   lookup (index parse, row decode and cache population) and the price
//!   per byte of index block parsed, to R1's "about 50% CPU" at 80K QUORUM
//!   reads/s on 3 x i3.8xlarge and R5's ~70% at 300K ops/s on 4 x
//!   i3.metal, as the R5 cases run (started compacted: nothing merges in
//!   their 120 s, so the fit gives the foreground all of R5's load;
//!   `validation/CALIBRATION.md` says what a steady start does to it).
//!   The two differ by their index blocks: Scylla 2.x samples its summary
//!   every 40,000 bytes of Data and parses the whole block, ~37 entries of
//!   R1's 1.1 KB rows but ~130 of R5's 310-byte rows
//!   (`engine::sstable::SummarySampling`);
//! - Cassandra's table as Scylla's steps times one factor, fitted to R5's
//!   ~50% load at 300K ops/s on 40 x i3.4xlarge.
//!
//! R5's Scylla 100K load (~25%), Cassandra's 100K load (~18%), every
//! latency and every version comparison are then predictions, checked by
//! `twin validate`.
//!
//! The steps (Scylla shard on an i3 hyperthread, Broadwell 2.3 GHz):
//! - `coordinate_ns`: a CQL request on the shard the driver sent it to:
//!   frame decode, statement lookup and execution bookkeeping, sending the
//!   request to each replica, and encoding the response to the client.
//! - `message_receive_ns` + `message_ns_per_byte`: taking one internode RPC
//!   message off a connection: deserialization and dispatch to the verb's
//!   handler (hardware.md 6.3: 5-10 us per message and side for Seastar RPC
//!   \[E\]; the sending side's share is in the task that sends).
//! - `cross_shard_ns`: a message another shard of the node passed over
//!   Seastar's cross-shard queues (`invoke_on`: a request landed on its
//!   connection's shard going to the key's owner, or the answer coming
//!   back): hardware.md 6.3, 1-2 us per hop \[E\], the middle.
//! - `write_request_ns` + `write_ns_per_byte`: applying a mutation on a
//!   replica: commitlog append (serialize, checksum), memtable insert (LSA
//!   allocation, B-tree insert), and the response.
//! - `read_request_ns` + `read_ns_per_sstable`: a read on a replica: row
//!   cache and memtable lookups, and per SSTable the bloom filter and the
//!   summary binary search.
//! - `index_parse_ns` + `index_ns_per_byte`: a read's index block from
//!   disk: parsing its entries (ka/la format: key, position, promoted
//!   index; Scylla 2.x builds an `index_entry` per entry of the block,
//!   Cassandra scans up to the key). The per-byte price is fitted: 65.5
//!   ns/B is ~1.6 us per 24-byte entry, the byte-at-a-time state machine
//!   and the allocations of 2.x's index consumer.
//! - `data_parse_ns` + `data_ns_per_byte`: the row from disk: decoding its
//!   cells, merging them into the result, and populating the row cache
//!   (allocation in the cache's LSA region, evicting older entries).
//! - `decompress_ns_per_byte`: LZ4-decompressing a chunk of a compressed
//!   table; ~2.5 GB/s on a 2.3 GHz Broadwell core with chunk bookkeeping and
//!   checksums \[E\].
//! - `digest_fixed_ns` + `digest_ns_per_byte`: hashing one read result for
//!   a digest read, fitted through the two ends of the per-value costs
//!   scylla-mechanisms.md 4.3 quotes from the xxHash merge (1 KiB and 1 MiB
//!   values): MD5 14 us and 4.0 ms give 10.1 us + 3.81 ns/B (the 64 KiB
//!   point, 278 us, comes out at 259 us, -7%); xxHash64 1 us and 0.23 ms
//!   give 0.78 us + 0.219 ns/B (64 KiB: 15.1 us vs 14 us, +8%). Scylla 2.1
//!   hashes with MD5, 2.2 and later with xxHash64. Measured, not fitted.
//! - `flush_ns_per_row` + `flush_ns_per_byte`: serializing memtable rows
//!   into SSTable format. Per row: encoding each cell's name, flags,
//!   timestamp and length (ka/la format) and the partition's header and
//!   index entry; per byte: copying the values into the output buffer,
//!   LZ4-compressing its chunks and checksumming them, ~1 ns/B \[E\]. The
//!   sum is the earlier single price of 5 ns/B for a cassandra-stress
//!   default row (five 34-byte cells, 242 bytes in an SSTable), so the
//!   runs of small rows are unchanged; a row of one 5 KB blob (R6) costs
//!   ~1.2 ns/B instead of 5: mostly a copy.
//! - `compaction_ns_per_byte`: reading, merging and re-encoding SSTable data
//!   in a compaction (per byte of input; small rows make it per-row work in
//!   truth, which the per-byte price folds in for the row sizes of the
//!   runs). Fitted to R2 (above): 52 ns/B is ~19 MB/s of input per shard.
//!   Newer Scylla is faster (a 2023 commit, 8d58ff1be6, logs a cleanup of
//!   ~210-byte partitions at ~80 MB/s on one shard, ~12 ns/B); no figure
//!   here measures 2.x's alone.

use units::SimDuration;

/// Prices of engine work.
#[derive(Clone, Debug, PartialEq)]
pub struct CostTable {
    /// Name of the runtime and version this table prices.
    pub name: &'static str,
    /// Fixed CPU of one write applied on a replica.
    pub write_request_ns: u64,
    /// CPU per byte of mutation applied.
    pub write_ns_per_byte: f64,
    /// CPU per row (partition) of memtable flushed.
    pub flush_ns_per_row: u64,
    /// CPU per byte of memtable flushed (SSTable bytes).
    pub flush_ns_per_byte: f64,
    /// Fixed CPU of one read on a replica (lookups).
    pub read_request_ns: u64,
    /// CPU per SSTable a read checks (bloom filter, summary).
    pub read_ns_per_sstable: u64,
    /// Fixed CPU of parsing an index page read from disk.
    pub index_parse_ns: u64,
    /// CPU per byte of index page parsed.
    pub index_ns_per_byte: f64,
    /// Fixed CPU of decoding a row read from an SSTable and caching it.
    pub data_parse_ns: u64,
    /// CPU per byte of row decoded.
    pub data_ns_per_byte: f64,
    /// CPU per byte of compaction input.
    pub compaction_ns_per_byte: f64,
    /// CPU of a CQL request on its coordinator.
    pub coordinate_ns: u64,
    /// Fixed CPU of taking one internode message off its connection.
    pub message_receive_ns: u64,
    /// CPU per byte of internode message received.
    pub message_ns_per_byte: f64,
    /// CPU of taking a message from another shard of the node.
    pub cross_shard_ns: u64,
    /// Fixed CPU of hashing one read result for a digest.
    pub digest_fixed_ns: u64,
    /// CPU per byte hashed for a digest.
    pub digest_ns_per_byte: f64,
    /// CPU per byte of compressed chunk decompressed by a read.
    pub decompress_ns_per_byte: f64,
    /// Kernel CPU of a read whose page was not in the OS page cache
    /// (Cassandra's buffered and mapped reads: the fault or `pread`, the
    /// block layer, the completion and the page-cache insertion of what
    /// the read-ahead brings); 0 where reads bypass the page cache
    /// (Scylla's O_DIRECT, whose submission is in the reactor's steps)
    /// or where it is not modelled (3.11).
    pub page_miss_ns: u64,
}

/// Cassandra 3.11's price of each step over Scylla's (the JVM's request
/// path: SEDA hops, object allocation, `ByteBuffer` copies): one factor,
/// fitted to R5's ~50% server load at 300K ops/s; 100K's ~18% is the check.
/// Thread hand-offs and GC pauses are the JVM model's, not this table's.
pub const CASSANDRA_FACTOR: f64 = 1.9;

/// Cassandra 5.0's write steps over Scylla's, on the real node's core:
/// **fitted** so that the twin's write costs the work of the straight line
/// through REAL.md's C1 and C4 (writes at 5,000/s and 10,000/s) of the
/// request threads' CPU per write against their runs on a core per write,
/// medians of three repeats: 90.20 us and 6.835 runs, 48.78 us and 2.732
/// runs, so 21.22 us of work a write (`validation/real/2026-11-30-speed`;
/// `twin validate --real DIR --fit-runs`), the runs priced apart
/// (`models::jvm::CASSANDRA_5_0_SEP`, 10.092 us each). Was 0.1450 (7.330
/// us) on `2026-11-30-evening`, 0.1889 (9.549 us) on the morning's
/// `2026-11-30`, 0.2414 (12.22 us) from one diagnostic repeat
/// (`work/2026-11-30/runs`), 1.125 (57 us) with a spinner burning a
/// fitted share of the idle core, which folded the runs into the write's
/// price (REAL.md, "Runs counted"). The line's work moves by a factor of
/// three between measurements of one day: REAL.md, "The third full
/// measurement". [`CostTable::cassandra_5_0`].
pub const CASSANDRA_5_0_WRITE_FACTOR: f64 = 0.41973;

/// Cassandra 5.0's read steps over Scylla's, on the real node's core:
/// **fitted** so that the twin's read from memory costs C2's request
/// threads' CPU per read less its runs' price, 156.28 - 10.641 x 10.092 =
/// 48.89 us (`validation/real/2026-11-30-speed`, medians of three
/// repeats, `--fit-runs`). C2 follows P3, a minute of the same reads, so
/// its read path is compiled. Was 0.07251 (27.05 us) on
/// `2026-11-30-evening`, 0.0803 (29.96 us) on the morning's `2026-11-30`,
/// 0.2525 (94.2 us) from a diagnostic whose C2 was the JVM's first read
/// phase, 0.278 fitted to 2026-11-29's whole-server C2. Under one because
/// Scylla's read prices were fitted to disk-bound published loads and
/// carry work the twin does not model; [`CostTable::cassandra_5_0`].
pub const CASSANDRA_5_0_READ_FACTOR: f64 = 0.13106;

/// The CPU a page-cache miss adds to a read under Cassandra 5.0 on the
/// real node's machine (a KVM guest's buffered read or mapped-page fault:
/// the request, its exit and interrupt, the insertion of the 24 KiB the
/// disk's read-ahead brings in, and what the read path does the more for
/// it), nanoseconds: **fitted** to the server's measured work, as REAL.md
/// names it ("The page miss from the server's work"): C3's request
/// threads' work a read (reads of 4-KiB rows at 1,000/s after the page
/// cache was dropped; their CPU less the run price times their runs,
/// 428.33 - 24.077 x 10.092 = 185.35 us) above C2's read from memory
/// (48.89 us), over C3's device reads a read (1.296, the machine's disk
/// counters): 105.29 us (`validation/real/2026-11-30-speed`, medians of
/// three repeats; `twin validate --real DIR --fit-runs`). 83.33 us by the
/// same rule on `2026-11-30-evening`, 89.66 us on the morning's
/// `2026-11-30`; was 477 us there solved with the twin to C3's
/// whole-server CPU, which folded in the ~14 runs a read the twin does not
/// make; 365 us on 2026-11-29's C3, 114 us on 2026-11-28's;
/// [`CostTable::cassandra_5_0`].
pub const CASSANDRA_5_0_PAGE_MISS_NS: u64 = 105_290;

/// Cassandra 5.0's compaction price on the real node's core, ns per byte
/// of the twin's SSTables: **fitted** to REAL.md's K1 (a major compaction
/// of P1's 1,000,000 c-s default rows on an idle node; the
/// `CompactionExecutor` threads' CPU, median of three repeats, 3.50 us a
/// partition, 16.4 ns a byte of the node's own 213-B rows;
/// `validation/real/work/2026-11-29`), over the twin's 242 B for such a
/// row, so that the twin's compaction of the same rows costs what the
/// real one did (`twin validate --real validation/real/work/2026-11-29
/// --fit-work`; taken as measured on its day: work that keeps the core
/// busy ran at the scored day's speed, `validation::real_work`). 3.11's
/// price scaled from Scylla's, 98.8 ns, had stood in for it.
pub const CASSANDRA_5_0_COMPACTION_NS_PER_BYTE: f64 = 14.46;

/// Cassandra 5.0's flush price per row on the real node's core, ns:
/// **fitted** to REAL.md's F1 (the flush of C1's 300,000 rows; the flush
/// threads' CPU, median of three repeats, 2.60 us a partition) less the
/// per-byte part kept at 3.11's \[E\] (1.9 ns over the twin's 242 B);
/// `--fit-work`. 3.11's was 1,839.
pub const CASSANDRA_5_0_FLUSH_NS_PER_ROW: u64 = 2_140;

impl CostTable {
    /// Every price times `factor` (cores that many times slower than the
    /// machine the table was fitted on; `[cluster] cpu_slowdown`): each
    /// nanosecond figure rounded to the nearest, each per-byte figure
    /// scaled. A factor of 1 gives the table back unchanged.
    pub fn scaled(self, factor: f64) -> CostTable {
        if factor == 1.0 {
            return self;
        }
        debug_assert!(
            factor.is_finite() && factor > 0.0,
            "a slowdown is positive: {factor}"
        );
        let ns = |value: u64| (value as f64 * factor).round() as u64;
        CostTable {
            name: self.name,
            write_request_ns: ns(self.write_request_ns),
            write_ns_per_byte: self.write_ns_per_byte * factor,
            flush_ns_per_row: ns(self.flush_ns_per_row),
            flush_ns_per_byte: self.flush_ns_per_byte * factor,
            read_request_ns: ns(self.read_request_ns),
            read_ns_per_sstable: ns(self.read_ns_per_sstable),
            index_parse_ns: ns(self.index_parse_ns),
            index_ns_per_byte: self.index_ns_per_byte * factor,
            data_parse_ns: ns(self.data_parse_ns),
            data_ns_per_byte: self.data_ns_per_byte * factor,
            compaction_ns_per_byte: self.compaction_ns_per_byte * factor,
            coordinate_ns: ns(self.coordinate_ns),
            message_receive_ns: ns(self.message_receive_ns),
            message_ns_per_byte: self.message_ns_per_byte * factor,
            cross_shard_ns: ns(self.cross_shard_ns),
            digest_fixed_ns: ns(self.digest_fixed_ns),
            digest_ns_per_byte: self.digest_ns_per_byte * factor,
            decompress_ns_per_byte: self.decompress_ns_per_byte * factor,
            page_miss_ns: ns(self.page_miss_ns),
        }
    }

    /// Scylla 2.1: [`CostTable::scylla`] with its MD5 digests (2.2 moved to
    /// xxHash64; scylla-mechanisms.md 4.3).
    pub fn scylla_2_1() -> CostTable {
        CostTable {
            name: "scylla-2.1",
            digest_fixed_ns: MD5_FIXED_NS,
            digest_ns_per_byte: MD5_NS_PER_BYTE,
            ..CostTable::scylla()
        }
    }

    /// Cassandra 3.11 on an i3 core: Scylla's steps times
    /// [`CASSANDRA_FACTOR`]; digests are MD5 (Cassandra never moved to
    /// xxHash) and are measured, not scaled.
    pub fn cassandra_3_11() -> CostTable {
        let s = CostTable::scylla();
        let f = CASSANDRA_FACTOR;
        let ns = |v: u64| (v as f64 * f) as u64;
        CostTable {
            name: "cassandra-3.11",
            write_request_ns: ns(s.write_request_ns),
            write_ns_per_byte: f * s.write_ns_per_byte,
            flush_ns_per_row: ns(s.flush_ns_per_row),
            flush_ns_per_byte: f * s.flush_ns_per_byte,
            read_request_ns: ns(s.read_request_ns),
            read_ns_per_sstable: ns(s.read_ns_per_sstable),
            index_parse_ns: ns(s.index_parse_ns),
            index_ns_per_byte: f * s.index_ns_per_byte,
            data_parse_ns: ns(s.data_parse_ns),
            data_ns_per_byte: f * s.data_ns_per_byte,
            compaction_ns_per_byte: f * s.compaction_ns_per_byte,
            coordinate_ns: ns(s.coordinate_ns),
            message_receive_ns: ns(s.message_receive_ns),
            message_ns_per_byte: f * s.message_ns_per_byte,
            cross_shard_ns: ns(s.cross_shard_ns),
            digest_fixed_ns: MD5_FIXED_NS,
            digest_ns_per_byte: MD5_NS_PER_BYTE,
            decompress_ns_per_byte: f * s.decompress_ns_per_byte,
            page_miss_ns: 0,
        }
    }

    /// Cassandra 5.0 on one core of the project's machine (the real node
    /// of `validation/REAL.md`: a KVM guest's Xeon vCPU): Scylla's steps
    /// scaled by two factors and a kernel price, each **fitted** to one
    /// calibration phase's CPU per operation (the node's CPU seconds over
    /// the operations answered, in the phase's last 20 s, after the JIT has
    /// compiled the path; `validation/real/2026-11-28`, repeats 1-2):
    /// - [`CASSANDRA_5_0_WRITE_FACTOR`] on the write steps, to the work of
    ///   C1 and C4 (writes at 5,000/s and 10,000/s) once their runs on the
    ///   core are priced apart: a local write at RF 1 is one step;
    /// - [`CASSANDRA_5_0_READ_FACTOR`] on every step of a read (lookup,
    ///   index and row parse, decompression), to C2's work (reads at
    ///   3,000/s of rows the page cache holds);
    /// - [`CASSANDRA_5_0_PAGE_MISS_NS`], the work of a page read from the
    ///   device, to C3's (reads at 1,000/s of 4-KiB rows after the page
    ///   cache was dropped) above C2's, over C3's device reads per read.
    ///
    /// - [`CASSANDRA_5_0_COMPACTION_NS_PER_BYTE`] and
    ///   [`CASSANDRA_5_0_FLUSH_NS_PER_ROW`], to the background work's own
    ///   calibration phases K1 and F1 (a compaction and a flush run alone,
    ///   their threads' CPU).
    ///
    /// Messages, coordination and digests were not measured (at RF 1 no
    /// phase has them): they keep 3.11's prices \[E\].
    pub fn cassandra_5_0() -> CostTable {
        let s = CostTable::scylla();
        let (w, r) = (CASSANDRA_5_0_WRITE_FACTOR, CASSANDRA_5_0_READ_FACTOR);
        let ns = |v: u64, f: f64| (v as f64 * f) as u64;
        CostTable {
            name: "cassandra-5.0",
            write_request_ns: ns(s.write_request_ns, w),
            write_ns_per_byte: w * s.write_ns_per_byte,
            read_request_ns: ns(s.read_request_ns, r),
            read_ns_per_sstable: ns(s.read_ns_per_sstable, r),
            index_parse_ns: ns(s.index_parse_ns, r),
            index_ns_per_byte: r * s.index_ns_per_byte,
            data_parse_ns: ns(s.data_parse_ns, r),
            data_ns_per_byte: r * s.data_ns_per_byte,
            decompress_ns_per_byte: r * s.decompress_ns_per_byte,
            page_miss_ns: CASSANDRA_5_0_PAGE_MISS_NS,
            compaction_ns_per_byte: CASSANDRA_5_0_COMPACTION_NS_PER_BYTE,
            flush_ns_per_row: CASSANDRA_5_0_FLUSH_NS_PER_ROW,
            ..CostTable::cassandra_3_11()
        }
    }

    /// A Scylla shard on an i3 core (xxHash64 digests, 2.2 and later).
    pub fn scylla() -> CostTable {
        CostTable {
            name: "scylla",
            coordinate_ns: 25_000,
            message_receive_ns: 6_000,
            message_ns_per_byte: 1.0,
            cross_shard_ns: 1_500,
            write_request_ns: 50_200,
            write_ns_per_byte: 2.0,
            flush_ns_per_row: FLUSH_NS_PER_ROW,
            flush_ns_per_byte: FLUSH_NS_PER_BYTE,
            read_request_ns: 15_000,
            read_ns_per_sstable: 1_000,
            index_parse_ns: 136_000,
            index_ns_per_byte: 65.5,
            data_parse_ns: 115_000,
            data_ns_per_byte: 10.0,
            compaction_ns_per_byte: 52.0,
            digest_fixed_ns: 780,
            digest_ns_per_byte: 0.219,
            decompress_ns_per_byte: 0.4,
            page_miss_ns: 0,
        }
    }

    /// The kernel's CPU for a page brought in from the device
    /// (`from_device`), none for a page-cache hit.
    pub fn page_miss(&self, from_device: bool) -> SimDuration {
        SimDuration::from_nanos(if from_device { self.page_miss_ns } else { 0 })
    }

    /// CPU time to hash a read result of `bytes` for a digest.
    pub fn digest(&self, bytes: u32) -> SimDuration {
        SimDuration::from_nanos(
            self.digest_fixed_ns + (f64::from(bytes) * self.digest_ns_per_byte) as u64,
        )
    }

    /// CPU time to merge `bytes` of compaction input.
    pub fn compaction_merge(&self, bytes: u64) -> SimDuration {
        SimDuration::from_nanos((bytes as f64 * self.compaction_ns_per_byte) as u64)
    }

    /// CPU time of a read's lookups, checking `sstables` SSTables.
    pub fn read_request(&self, sstables: u32) -> SimDuration {
        SimDuration::from_nanos(
            self.read_request_ns + u64::from(sstables) * self.read_ns_per_sstable,
        )
    }

    /// CPU time to parse `bytes` of index page.
    pub fn index_parse(&self, bytes: u64) -> SimDuration {
        SimDuration::from_nanos(
            self.index_parse_ns + (bytes as f64 * self.index_ns_per_byte) as u64,
        )
    }

    /// CPU time to decode a row of `row_bytes` from a chunk of
    /// `decompress_bytes` (0: uncompressed) and cache it.
    pub fn data_parse(&self, row_bytes: u64, decompress_bytes: u64) -> SimDuration {
        SimDuration::from_nanos(
            self.data_parse_ns
                + (row_bytes as f64 * self.data_ns_per_byte) as u64
                + (decompress_bytes as f64 * self.decompress_ns_per_byte) as u64,
        )
    }

    /// CPU time to take a message of `bytes` off its connection.
    pub fn message_receive(&self, bytes: u64) -> SimDuration {
        SimDuration::from_nanos(
            self.message_receive_ns + (bytes as f64 * self.message_ns_per_byte) as u64,
        )
    }

    /// CPU time to take a message from another shard of the node.
    pub fn cross_shard(&self) -> SimDuration {
        SimDuration::from_nanos(self.cross_shard_ns)
    }

    /// CPU time of a write of `mutation_bytes`.
    pub fn write_request(&self, mutation_bytes: u64) -> SimDuration {
        SimDuration::from_nanos(
            self.write_request_ns + (mutation_bytes as f64 * self.write_ns_per_byte) as u64,
        )
    }

    /// CPU time for a streaming reader to decode `rows` partitions of SSTable
    /// rows (`bytes`) and freeze them into fragments to send: a read's
    /// decoding per byte plus a flush's serialization (no new constant).
    pub fn stream_read(&self, bytes: u64, rows: u64) -> SimDuration {
        SimDuration::from_nanos((bytes as f64 * self.data_ns_per_byte) as u64)
            + self.flush_serialize(bytes, rows)
    }

    /// CPU time to serialize `rows` rows of memtable, `bytes` of SSTable
    /// data, during a flush.
    pub fn flush_serialize(&self, bytes: u64, rows: u64) -> SimDuration {
        SimDuration::from_nanos(
            rows * self.flush_ns_per_row + (bytes as f64 * self.flush_ns_per_byte) as u64,
        )
    }
}

/// A flush's price per byte: copy, LZ4 compression and checksum \[E\].
const FLUSH_NS_PER_BYTE: f64 = 1.0;
/// A flush's price per row: what the earlier single price, 5 ns/B, gave a
/// cassandra-stress default row of 242 SSTable bytes, less its bytes' part:
/// (5 - 1) x 242 ns, ~190 ns for each of its five cells \[E\].
const FLUSH_NS_PER_ROW: u64 = 968;

/// MD5 digest cost: fixed part (see the module doc; measured, not fitted).
const MD5_FIXED_NS: u64 = 10_100;
/// MD5 digest cost per byte.
const MD5_NS_PER_BYTE: f64 = 3.81;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slower_core_pays_every_price_times_its_slowdown() {
        let table = CostTable::cassandra_5_0();
        assert_eq!(table.clone().scaled(1.0), table);
        let slow = table.clone().scaled(1.5);
        assert_eq!(slow.name, table.name);
        assert_eq!(
            slow.write_request_ns,
            (table.write_request_ns as f64 * 1.5).round() as u64
        );
        assert_eq!(
            slow.page_miss_ns,
            (table.page_miss_ns as f64 * 1.5).round() as u64
        );
        assert_eq!(
            slow.compaction_ns_per_byte,
            table.compaction_ns_per_byte * 1.5
        );
        assert_eq!(
            slow.flush_ns_per_row,
            (table.flush_ns_per_row as f64 * 1.5).round() as u64
        );
        // The steps priced from the table follow: a write of 300 bytes.
        let write = |t: &CostTable| t.write_request_ns as f64 + 300.0 * t.write_ns_per_byte;
        assert!((write(&slow) / write(&table) - 1.5).abs() < 1e-3);
    }

    #[test]
    fn digest_costs_reproduce_the_published_per_value_figures() {
        let (md5, xxhash) = (CostTable::scylla_2_1(), CostTable::scylla());
        let us = |d: SimDuration| d.as_secs_f64() * 1e6;
        for (bytes, md5_us, xxhash_us) in [
            (1024u32, 14.0, 1.0),
            (65_536, 278.0, 14.0),
            (1_048_576, 4000.0, 230.0),
        ] {
            let (m, x) = (us(md5.digest(bytes)), us(xxhash.digest(bytes)));
            assert!(
                (m / md5_us - 1.0).abs() < 0.08,
                "md5 {bytes} B: {m} us vs {md5_us}"
            );
            assert!(
                (x / xxhash_us - 1.0).abs() < 0.09,
                "xxhash {bytes} B: {x} us vs {xxhash_us}"
            );
        }
    }

    #[test]
    fn a_small_row_flushes_at_the_old_single_price_and_a_blob_mostly_as_a_copy() {
        let costs = CostTable::scylla();
        let ns_per_byte = |row_bytes: u64| {
            let rows = 1000;
            costs.flush_serialize(rows * row_bytes, rows).as_nanos() as f64
                / (rows * row_bytes) as f64
        };
        // cassandra-stress's default row: 8 + 5 x 34 bytes, 64 of overhead.
        assert!(
            (ns_per_byte(242) - 5.0).abs() < 0.01,
            "{}",
            ns_per_byte(242)
        );
        // R6's 5 KB blob.
        assert!(ns_per_byte(8 + 5120 + 64) < 1.25, "{}", ns_per_byte(5192));
    }
}
