//! Every number of the NVMe model, in one place, each with its source.
//!
//! Tags (as in `hardware.md`): **\[S\]** copied from the cited source, **\[D\]**
//! derived by arithmetic from \[S\] numbers, **\[R\]** recalled, not re-read at
//! its source, **\[E\]** an estimate or modelling assumption. "Fitted" says
//! which published figure a constant was chosen to reproduce; the module
//! docs of [`crate::nvme`] list the figures each one is checked against.

/// PCIe 3.0 x4 payload bandwidth, bytes per second: 4 lanes x 8 GT/s x
/// 128/130 encoding = 3.94 GB/s raw, less TLP/DLLP overhead [E: about 88%
/// payload efficiency at 256-byte max payload]. Every preset here is a
/// PCIe 3.0 x4 device (hardware.md 3.1 for the P4800X \[S\]).
const PCIE3_X4_BYTES_PER_S: f64 = 3.5e9;

/// Write-buffer window of the NAND presets: a write is acknowledged from the
/// drive's power-loss-protected DRAM buffer once the programming queued
/// ahead of it (its own included) is within this much time of completing
/// \[E\]. 2 ms is a few MB of buffered data at these drives' program rates;
/// it has to exceed the programming cost of one 4 KiB write (1.1 ms on the
/// P4500, whose random writes are garbage-collection bound) for a lone write
/// to be acknowledged at the datasheet write latency.
const NAND_WRITE_BUFFER_NS: u64 = 2_000_000;

/// Longest wait of a NAND read whose die is busy programming \[E\]: TLC
/// program times are 1-2 ms; datacenter drives suspend a program for a
/// pending read, which bounds the wait to a fraction of it. Modelled as a
/// uniform wait in 0..this value (mean half of it).
const NAND_PROGRAM_READ_STALL_NS: u64 = 500_000;

/// The datasheet of one drive, and the few modelling constants that go with
/// it. Latencies are what fio reports (completion latency) at queue depth 1
/// with 4 KiB requests on one drive.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveParams {
    /// Preset name (`twin device list`, scenario files).
    pub name: &'static str,
    /// What the drive is.
    pub description: &'static str,
    /// Saturated 4 KiB random-read IOPS.
    pub read_iops: f64,
    /// Saturated large-block read bandwidth, bytes per second.
    pub read_bytes_per_s: f64,
    /// 4 KiB random-read latency at queue depth 1, nanoseconds.
    pub read_latency_ns: u64,
    /// Saturated 4 KiB random-write IOPS (steady state).
    pub write_iops: f64,
    /// Saturated large-block write bandwidth, bytes per second.
    pub write_bytes_per_s: f64,
    /// 4 KiB random-write latency at queue depth 1, nanoseconds.
    pub write_latency_ns: u64,
    /// Write-buffer window, nanoseconds (0: a write completes when its
    /// media write does). See [`crate::nvme`].
    pub write_buffer_ns: u64,
    /// Longest wait of a read behind an in-progress program on its die,
    /// nanoseconds (0: no program/read conflict).
    pub program_read_stall_ns: u64,
    /// Host link bandwidth, bytes per second (the data of a buffered write
    /// crosses it before the write is acknowledged).
    pub link_bytes_per_s: f64,
    /// What one miss of the host's page cache reads from this drive and
    /// brings into the cache, read-ahead included, in bytes: the mean
    /// device read of a Cassandra read from disk, where measured on the
    /// host (0: not measured; a miss reads the pages it asks for). The
    /// kernel reads ahead of buffered reads and around faults of mapped
    /// files, by the block device's `read_ahead_kb`.
    pub page_cache_miss_bytes: u64,
    /// Where the numbers come from.
    pub source: &'static str,
}

/// The drive presets.
pub const DRIVES: [DriveParams; 9] = [
    DriveParams {
        name: "i3-nvme",
        description: "AWS i3 instance-store NVMe, one 1.9 TB drive (i3.2xlarge and up)",
        // [S] hardware.md 1.3: Scylla's io_properties for i3.ALL, per disk.
        read_iops: 411_200.0,
        read_bytes_per_s: 2_015_342_735.0,
        // [E] hardware.md 3.2: i3 QD1 4K read "80-120 us", P4500/P3700 class.
        read_latency_ns: 90_000,
        // [S] hardware.md 1.3.
        write_iops: 181_500.0,
        write_bytes_per_s: 808_775_652.0,
        // [E] by the P4500 class of hardware.md 3.2 (P4500 write latency
        // 20 us [S]).
        write_latency_ns: 20_000,
        write_buffer_ns: NAND_WRITE_BUFFER_NS,
        program_read_stall_ns: NAND_PROGRAM_READ_STALL_NS,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 1.3 (Scylla io_properties, i3.ALL per disk) [S]; latencies hardware.md 3.2 [E]",
    },
    DriveParams {
        name: "i3.large-nvme",
        description: "AWS i3.large instance-store NVMe, 475 GB (its own io_properties)",
        // [S] hardware.md 1.3: Scylla's io_properties for i3.large (1 disk).
        read_iops: 111_000.0,
        read_bytes_per_s: 653_925_080.0,
        // [E] as i3-nvme (hardware.md 3.2).
        read_latency_ns: 90_000,
        // [S] hardware.md 1.3.
        write_iops: 36_800.0,
        write_bytes_per_s: 215_066_473.0,
        // [E] as i3-nvme.
        write_latency_ns: 20_000,
        write_buffer_ns: NAND_WRITE_BUFFER_NS,
        program_read_stall_ns: NAND_PROGRAM_READ_STALL_NS,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 1.3 (Scylla io_properties, i3.large) [S]; latencies hardware.md 3.2 [E]",
    },
    DriveParams {
        name: "i3.xlarge-nvme",
        description: "AWS i3.xlarge instance-store NVMe, 950 GB (its own io_properties)",
        // [S] hardware.md 1.3: Scylla's io_properties for i3.xlarge (1 disk).
        read_iops: 200_800.0,
        read_bytes_per_s: 1_185_106_376.0,
        // [E] as i3-nvme.
        read_latency_ns: 90_000,
        // [S] hardware.md 1.3.
        write_iops: 53_180.0,
        write_bytes_per_s: 423_621_267.0,
        // [E] as i3-nvme.
        write_latency_ns: 20_000,
        write_buffer_ns: NAND_WRITE_BUFFER_NS,
        program_read_stall_ns: NAND_PROGRAM_READ_STALL_NS,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 1.3 (Scylla io_properties, i3.xlarge) [S]; latencies hardware.md 3.2 [E]",
    },
    DriveParams {
        name: "i3en-nvme",
        description: "AWS i3en instance-store NVMe, one 7.5 TB drive (i3en.3xlarge and up)",
        // [S] hardware.md 1.3: io_properties for i3en.ALL, per disk.
        read_iops: 257_024.0,
        read_bytes_per_s: 2_043_674_624.0,
        // [E] no published figure; same NAND class as i3 (hardware.md 3.2).
        read_latency_ns: 90_000,
        // [S] hardware.md 1.3.
        write_iops: 174_080.0,
        write_bytes_per_s: 1_024_458_752.0,
        // [E] as i3.
        write_latency_ns: 20_000,
        write_buffer_ns: NAND_WRITE_BUFFER_NS,
        program_read_stall_ns: NAND_PROGRAM_READ_STALL_NS,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 1.3 (Scylla io_properties, i3en.ALL per disk) [S]; latencies [E] as i3",
    },
    DriveParams {
        name: "i3en.large-nvme",
        description: "AWS i3en.large instance-store NVMe, 1,250 GB (its own io_properties)",
        // [S] hardware.md 1.3: io_properties for i3en.large (1 disk).
        read_iops: 43_315.0,
        read_bytes_per_s: 330_301_440.0,
        // [E] as i3en-nvme.
        read_latency_ns: 90_000,
        // [S] hardware.md 1.3.
        write_iops: 33_177.0,
        write_bytes_per_s: 165_675_008.0,
        // [E] as i3en-nvme.
        write_latency_ns: 20_000,
        write_buffer_ns: NAND_WRITE_BUFFER_NS,
        program_read_stall_ns: NAND_PROGRAM_READ_STALL_NS,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 1.3 (Scylla io_properties, i3en.large) [S]; latencies [E] as i3",
    },
    DriveParams {
        name: "i3en.xlarge-nvme",
        description: "AWS i3en.xlarge/2xlarge instance-store NVMe, one 2,500 GB drive",
        // [S] hardware.md 1.3: io_properties for i3en.xlarge and
        // i3en.2xlarge, per disk.
        read_iops: 84_480.0,
        read_bytes_per_s: 666_894_336.0,
        // [E] as i3en-nvme.
        read_latency_ns: 90_000,
        // [S] hardware.md 1.3.
        write_iops: 66_969.0,
        write_bytes_per_s: 333_447_168.0,
        // [E] as i3en-nvme.
        write_latency_ns: 20_000,
        write_buffer_ns: NAND_WRITE_BUFFER_NS,
        program_read_stall_ns: NAND_PROGRAM_READ_STALL_NS,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 1.3 (Scylla io_properties, i3en.xlarge / i3en.2xlarge per disk) [S]; latencies [E] as i3",
    },
    DriveParams {
        name: "optane-p4800x",
        description: "Intel Optane SSD DC P4800X (3D XPoint), 375/750 GB",
        // [S] hardware.md 3.1: spec, 4 KiB random read QD16 and 64 kB
        // sequential read.
        read_iops: 550_000.0,
        read_bytes_per_s: 2_400_000_000.0,
        // [S] hardware.md 3.1: AnandTech measured QD1 mean 8.9 us (spec:
        // typical < 10 us).
        read_latency_ns: 8_900,
        // [S] hardware.md 3.1: spec, 4 KiB random write QD16.
        write_iops: 500_000.0,
        // [D] from R6 (published-runs.md): 32K IOPS x 128 KiB on 2 drives at
        // the knee is 2.10 GB/s per drive, above the 2.0 GB/s spec (64 kB
        // sequential write, hardware.md 3.1 [S]); the spec is conservative,
        // as AnandTech's 584.8K measured read IOPS against the 550K spec
        // shows (hardware.md 3.1). Fitted: R6 write IOPS.
        write_bytes_per_s: 2_100_000_000.0,
        // [S] hardware.md 3.1: typical latency (R/W) < 10 us.
        write_latency_ns: 10_000,
        // [E] fitted: R6's 128 KiB random-write knee (~8). The controller
        // acknowledges a write once it holds its data with power-loss
        // protection and the media work ahead of it is within this window;
        // without it the knee of a 2-drive RAID-0 sits at 10-11, because a
        // drive idles whenever the random stripe leaves it without a
        // request. The curve is flat around the knee (QD 7 to 10 within
        // 1.5% of each other), so the 95%-of-peak knee moves with the seed;
        // over seeds 1-8: 60 us gives 9-10, 100-130 us mostly 8 but 9 (at
        // 290 us, outside R6's figure) for some, 150 us 7-8 (225-257 us)
        // for every seed, 200 us 6-8. 150 us is ~315 KB of media work.
        write_buffer_ns: 150_000,
        // 3D XPoint writes in place: no program/erase cycle to wait behind
        // (spec 70/30 mixed 500K IOPS, between read and write, hardware.md
        // 3.1 [S]).
        program_read_stall_ns: 0,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 3.1 (Intel spec via AnandTech; AnandTech QD1 latency) [S]; write bandwidth and buffer fitted to R6 (published-runs.md) [D/E]",
    },
    DriveParams {
        name: "p4500-tlc",
        description: "Intel SSD DC P4500 2.0 TB, a typical TLC datacenter NVMe (P4500/P4510 class)",
        // [S] hardware.md 3.2 (Lenovo product guide, 2.0 TB row).
        read_iops: 490_000.0,
        read_bytes_per_s: 3_200_000_000.0,
        read_latency_ns: 85_000,
        write_iops: 38_000.0,
        write_bytes_per_s: 1_050_000_000.0,
        write_latency_ns: 20_000,
        write_buffer_ns: NAND_WRITE_BUFFER_NS,
        program_read_stall_ns: NAND_PROGRAM_READ_STALL_NS,
        link_bytes_per_s: PCIE3_X4_BYTES_PER_S,
        page_cache_miss_bytes: 0,
        source: "hardware.md 3.2 (Intel DC P4500 2.0 TB, Lenovo product guide) [S]",
    },
    DriveParams {
        name: "polyglot-vda",
        description: "the project's 2-core KVM machine's virtio disk (vda, 256 GiB), where the real node of validation/REAL.md runs",
        // [S] `twin device measure` on 2026-11-28 (4 GiB file, 5 s a point,
        // O_DIRECT psync): 4 KiB random reads at QD 64, 1 MiB reads at QD 16,
        // QD-1 mean latencies; validation/real/2026-11-28/device/.
        read_iops: 72_742.0,
        read_bytes_per_s: 979_254_722.0,
        read_latency_ns: 70_964,
        // [S] the same sweep: 4 KiB random writes at QD 64, 128 KiB writes
        // at QD 16, the QD-1 4 KiB write mean.
        write_iops: 86_359.0,
        write_bytes_per_s: 2_658_139_766.0,
        write_latency_ns: 61_076,
        // A virtual disk backed by the host: no write-buffer window or
        // program/read stall is separable from outside it [E].
        write_buffer_ns: 0,
        program_read_stall_ns: 0,
        // The link at the measured write bandwidth, the fastest transfer
        // seen [D].
        link_bytes_per_s: 2_658_139_766.0,
        // [S] the disk probe (validation/real/2026-11-28/disk-probe/C3):
        // REAL.md's C3 (1,000 reads/s of 4-KB rows, page cache dropped)
        // read 1,917.8 MiB in 81,058 device reads, the kernel's read-ahead
        // (`read_ahead_kb` 8192 on vda, machine.txt) bringing in 24.2 KiB
        // a read where Cassandra asks for 4-16.
        page_cache_miss_bytes: 24_808,
        source: "twin device measure on this machine, 2026-11-28 (validation/real/2026-11-28/device) [S]",
    },
];

/// Request sizes below this are charged as this much: the FTL's mapping
/// unit and the granule a request is split into across the drive's units
/// [E: 4 KiB is the mapping unit of datacenter NVMe FTLs].
pub const PIECE_BYTES: u64 = 4096;

/// Spread of a unit's service time: each piece takes its nominal time times
/// `(1 - a) + a * Exp(1)` (mean 1). `a = 0.05` puts the QD1 p99 at about 1.2
/// times the mean, between AnandTech's measured p99/mean at QD1: Optane
/// 10/8.9 = 1.12, P3700 96/77.9 = 1.23, Micron 9100 117/107.7 = 1.09
/// (hardware.md 3.1 \[D\]).
pub const SERVICE_JITTER: f64 = 0.05;

/// RAID-0 chunk size of a multi-drive array, bytes: Scylla's
/// `scylla_raid_setup` creates the array with `mdadm --level=0 -c1024`
/// [S: scylladb/scylladb `dist/common/scripts/scylla_raid_setup`].
pub const RAID_CHUNK_BYTES: u64 = 1024 * 1024;

/// Latency the Linux md RAID-0 layer adds to every request of a
/// multi-drive array (bio split and clone, the extra completion callback),
/// nanoseconds [E, fitted: R6's 4 KiB random-read knee (~24) and latency
/// (~18 us) on 2 x P4800X, given the drive's single-drive QD1 latency
/// (AnandTech, 8.9 us) and [`FIO_HOST_TURNAROUND_NS`]].
pub const RAID_MD_OVERHEAD_NS: u64 = 3_000;

/// Host time of one fio I/O outside the latency fio reports: from a
/// completion to the next submission on that slot (reaping the event,
/// bookkeeping, `io_submit`), nanoseconds [D from R6 by Little's law: at the
/// read knee, 24 requests in flight at 1.0M IOPS is a 24 us cycle, of which
/// fio reported 18 us, so 6 us are spent on the host]. Checked against R6's
/// write knee: 8 / (237 + 6) us = 32.9K IOPS against 32K published. Used by
/// the device sweep as the default host model.
pub const FIO_HOST_TURNAROUND_NS: u64 = 6_000;
