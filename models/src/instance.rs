//! The instance catalog: machines a scenario can name, with their prices.
//!
//! Every row is in [`CATALOG`], with its sources; hardware.md's tags say how
//! good each figure is: **\[S\]** copied from the cited source, **\[D\]**
//! derived by arithmetic from \[S\] figures, **\[R\]** recalled, not re-read
//! at its source, **\[E\]** an estimate. Prices carry their tag
//! ([`Provenance`]); where no price is published the field is `None`.
//!
//! - CPUs, memory and drives: hardware.md 1.1 (AWS EC2 User Guide,
//!   `awsdocs/amazon-ec2-user-guide` @ `00f19653`: storage- and
//!   compute-optimized instance pages, `InstanceStorage.md`,
//!   `instance-optimize-cpu.md`), hardware.md 2 (OCI), published-runs.md R6
//!   with hardware.md 3.1 (the Optane server).
//! - Network: the sustained baseline in Gbit/s (hardware.md 1.1 and 6.1;
//!   `scylladb/scylla-machine-image` `common/aws_net_params.json`) and, for
//!   "Up to N Gbps" sizes, the burst N that network I/O credits allow.
//! - Drives: each instance's data device is `drives` copies of an NVMe
//!   preset ([`crate::nvme::params::DRIVES`]) in a RAID-0. The presets carry
//!   Scylla's io_properties per disk (hardware.md 1.3), which differ by size
//!   for i3.large, i3.xlarge, i3en.large and i3en.xlarge/2xlarge.
//! - Prices: hardware.md 1.4, us-east-1 Linux, $/h. The 1-year reservation
//!   is the effective hourly price hardware.md gives; its source (ScyllaDB's
//!   i3en post) does not state the payment option, and hardware.md treats
//!   the figures as +-10% for that reason.
//!
//! A scenario can override any figure of an instance (not its name) with
//! [`InstanceOverrides`].

use std::fmt;

use crate::nvme::NvmeProfile;
use Provenance::{Derived, Estimate, Recalled, Source};

const GIB: u64 = 1024 * 1024 * 1024;

/// How a catalog figure was obtained (hardware.md's tags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// \[S\]: copied from the cited source.
    Source,
    /// \[D\]: derived by arithmetic from \[S\] figures.
    Derived,
    /// \[R\]: recalled from the cited source, not re-read there.
    Recalled,
    /// \[E\]: an estimate or modelling assumption.
    Estimate,
    /// Set by the scenario, overriding the catalog.
    Scenario,
}

impl Provenance {
    /// The tag as hardware.md writes it: `S`, `D`, `R`, `E`; `scenario`
    /// for an override.
    pub fn tag(self) -> &'static str {
        match self {
            Provenance::Source => "S",
            Provenance::Derived => "D",
            Provenance::Recalled => "R",
            Provenance::Estimate => "E",
            Provenance::Scenario => "scenario",
        }
    }
}

/// An hourly price.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// US dollars per hour.
    pub usd_per_hour: f64,
    /// How the figure was obtained.
    pub provenance: Provenance,
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} [{}]", self.usd_per_hour, self.provenance.tag())
    }
}

/// One instance type.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// Catalog name, e.g. `i3.4xlarge`.
    pub name: &'static str,
    /// The processor.
    pub cpu: &'static str,
    /// Hardware threads (vCPUs).
    pub vcpus: u32,
    /// Physical cores.
    pub physical_cores: u32,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// Local NVMe drives (0 for EBS-only loaders).
    pub drives: u32,
    /// Capacity of one drive, bytes (decimal, as the AWS pages and
    /// hardware.md 1.1 give them: "8 x 1,900 GB"; 0 without drives).
    pub drive_bytes: u64,
    /// The NVMe preset of one drive ([`NvmeProfile::by_name`]); `None` where
    /// no per-drive performance figures are published (the instance then
    /// has no data device unless a scenario names one).
    pub drive: Option<&'static str>,
    /// Sustained network bandwidth, gigabits per second.
    pub nic_gbps: f64,
    /// "Up to N Gbps" sizes: the burst N, gigabits per second, that network
    /// I/O credits allow for a while (`None`: the baseline is the limit).
    /// The simulation uses the sustained figure.
    pub nic_burst_gbps: Option<f64>,
    /// On-demand price (`None`: none published in the reference data).
    pub on_demand: Option<Price>,
    /// 1-year reservation, effective price per hour (`None`: none
    /// published in the reference data).
    pub reserved_1y: Option<Price>,
    /// Where the figures come from.
    pub source: &'static str,
}

impl Instance {
    /// Hardware threads per physical core.
    pub fn threads_per_core(&self) -> u32 {
        self.vcpus / self.physical_cores.max(1)
    }

    /// Scylla shards on this instance: every vCPU below 16 vCPUs; from the
    /// 4xlarge size up, vCPUs - 2, since perftune leaves one physical core
    /// (two hyperthreads) to NIC interrupts (hardware.md 1.3, the 2017 AMI
    /// cpusets: i3.4xlarge 14 shards, i3.8xlarge 30, i3.16xlarge 62; OCI
    /// BM.DenseIO1.36 70 of 72).
    pub fn scylla_shards(&self) -> u32 {
        if self.vcpus >= 16 {
            self.vcpus - 2
        } else {
            self.vcpus
        }
    }

    /// Bytes of local storage: every drive's capacity.
    pub fn storage_bytes(&self) -> u64 {
        u64::from(self.drives) * self.drive_bytes
    }

    /// The data device: a RAID-0 of the instance's drives, each its drive
    /// preset; `None` without drives or without a preset.
    pub fn data_device(&self) -> Option<NvmeProfile> {
        if self.drives == 0 {
            return None;
        }
        let drive = NvmeProfile::by_name(self.drive?)?;
        Some(drive.striped(self.drives))
    }

    /// This instance with `overrides` applied. Overriding `nic_gbps`
    /// without `nic_burst_gbps` drops the catalog's burst figure, which
    /// belongs to the catalog's NIC. An overridden price is tagged
    /// [`Provenance::Scenario`].
    pub fn with_overrides(&self, overrides: &InstanceOverrides) -> Result<Instance, OverrideError> {
        let fail = |field: &'static str, reason: String| Err(OverrideError { field, reason });
        let mut instance = self.clone();
        if let Some(vcpus) = overrides.vcpus {
            if vcpus == 0 {
                return fail("vcpus", "an instance needs at least 1 vCPU".into());
            }
            instance.vcpus = vcpus;
        }
        if let Some(cores) = overrides.physical_cores {
            if cores == 0 {
                return fail("physical_cores", "an instance needs at least 1 core".into());
            }
            instance.physical_cores = cores;
        }
        if instance.physical_cores > instance.vcpus {
            let field = if overrides.physical_cores.is_some() {
                "physical_cores"
            } else {
                "vcpus"
            };
            return fail(
                field,
                format!(
                    "{} physical cores but {} vCPUs: a core runs at least one vCPU (set both vcpus and physical_cores)",
                    instance.physical_cores, instance.vcpus
                ),
            );
        }
        if let Some(memory) = overrides.memory_bytes {
            if memory == 0 {
                return fail("memory", "must be more than zero".into());
            }
            instance.memory_bytes = memory;
        }
        if let Some(drives) = overrides.drives {
            instance.drives = drives;
        }
        if let Some(name) = &overrides.drive {
            let Some(preset) = NvmeProfile::by_name(name) else {
                let names: Vec<&str> = NvmeProfile::presets().iter().map(|p| p.name).collect();
                return fail(
                    "drive",
                    format!(
                        "unknown drive preset `{name}`; the presets are {}",
                        names.join(", ")
                    ),
                );
            };
            instance.drive = Some(preset.name);
        }
        if let Some(gbps) = overrides.nic_gbps {
            if !(gbps.is_finite() && gbps > 0.0) {
                return fail("nic_gbps", format!("{gbps} is not a positive bandwidth"));
            }
            instance.nic_gbps = gbps;
            instance.nic_burst_gbps = None;
        }
        if let Some(burst) = overrides.nic_burst_gbps {
            if !(burst.is_finite() && burst >= instance.nic_gbps) {
                return fail(
                    "nic_burst_gbps",
                    format!(
                        "{burst} Gbit/s is not a burst at or above the sustained {} Gbit/s",
                        instance.nic_gbps
                    ),
                );
            }
            instance.nic_burst_gbps = Some(burst);
        }
        for (field, value, slot) in [
            (
                "on_demand_usd_per_hour",
                overrides.on_demand_usd_per_hour,
                &mut instance.on_demand,
            ),
            (
                "reserved_1y_usd_per_hour",
                overrides.reserved_1y_usd_per_hour,
                &mut instance.reserved_1y,
            ),
        ] {
            if let Some(usd) = value {
                if !(usd.is_finite() && usd >= 0.0) {
                    return fail(field, format!("{usd} is not a price in $/h"));
                }
                *slot = Some(Price {
                    usd_per_hour: usd,
                    provenance: Provenance::Scenario,
                });
            }
        }
        Ok(instance)
    }
}

/// Per-field overrides of a catalog instance (`None`: keep the catalog's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstanceOverrides {
    /// Hardware threads.
    pub vcpus: Option<u32>,
    /// Physical cores.
    pub physical_cores: Option<u32>,
    /// Memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Local NVMe drives.
    pub drives: Option<u32>,
    /// NVMe preset of one drive.
    pub drive: Option<String>,
    /// Sustained NIC bandwidth, Gbit/s.
    pub nic_gbps: Option<f64>,
    /// Burst NIC bandwidth, Gbit/s.
    pub nic_burst_gbps: Option<f64>,
    /// On-demand price, $/h.
    pub on_demand_usd_per_hour: Option<f64>,
    /// 1-year reservation, effective $/h.
    pub reserved_1y_usd_per_hour: Option<f64>,
}

impl InstanceOverrides {
    /// The fields set, as scenarios name them.
    pub fn fields_set(&self) -> Vec<&'static str> {
        [
            ("vcpus", self.vcpus.is_some()),
            ("physical_cores", self.physical_cores.is_some()),
            ("memory", self.memory_bytes.is_some()),
            ("drives", self.drives.is_some()),
            ("drive", self.drive.is_some()),
            ("nic_gbps", self.nic_gbps.is_some()),
            ("nic_burst_gbps", self.nic_burst_gbps.is_some()),
            (
                "on_demand_usd_per_hour",
                self.on_demand_usd_per_hour.is_some(),
            ),
            (
                "reserved_1y_usd_per_hour",
                self.reserved_1y_usd_per_hour.is_some(),
            ),
        ]
        .into_iter()
        .filter_map(|(field, set)| set.then_some(field))
        .collect()
    }

    /// Every field set here or in `other`; where both set one, this one's.
    pub fn or(&self, other: &InstanceOverrides) -> InstanceOverrides {
        InstanceOverrides {
            vcpus: self.vcpus.or(other.vcpus),
            physical_cores: self.physical_cores.or(other.physical_cores),
            memory_bytes: self.memory_bytes.or(other.memory_bytes),
            drives: self.drives.or(other.drives),
            drive: self.drive.clone().or_else(|| other.drive.clone()),
            nic_gbps: self.nic_gbps.or(other.nic_gbps),
            nic_burst_gbps: self.nic_burst_gbps.or(other.nic_burst_gbps),
            on_demand_usd_per_hour: self.on_demand_usd_per_hour.or(other.on_demand_usd_per_hour),
            reserved_1y_usd_per_hour: self
                .reserved_1y_usd_per_hour
                .or(other.reserved_1y_usd_per_hour),
        }
    }
}

/// An override that cannot apply: the field (as scenarios name it) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideError {
    /// The field, e.g. `memory` or `drive`.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

/// Memory Seastar leaves to the operating system: max(1.5 GiB, 7% of RAM)
/// (seastar `resource.cc`, `calculate_memory`; recalled, not re-read).
pub fn seastar_reserved_memory_bytes(memory_bytes: u64) -> u64 {
    (memory_bytes as f64 * 0.07).max(1.5 * GIB as f64) as u64
}

/// `hundredths` / 100 GiB, in bytes.
const fn gib_x100(hundredths: u64) -> u64 {
    hundredths * GIB / 100
}

/// A price with its tag.
const fn price(usd_per_hour: f64, provenance: Provenance) -> Option<Price> {
    Some(Price {
        usd_per_hour,
        provenance,
    })
}

/// hardware.md 1.4: the i3en.large ... 12xlarge 1-year price is the
/// on-demand price times the i3en.24xlarge's reserved/on-demand ratio,
/// 6.896 / 10.848 = 0.636 \[E\].
const I3EN_RESERVED_RATIO: f64 = 0.636;

const I3_CPU: &str = "Xeon E5-2686 v4 (Broadwell), 2.3 GHz, 2.7 GHz all-core turbo";
const I3_SOURCE: &str = "hardware.md 1.1 (AWS EC2 User Guide) [S]; drives hardware.md 1.3 (io_properties) [S]; prices hardware.md 1.4";
const I3EN_CPU: &str = "Xeon Platinum 8175M (Skylake) or 8259CL (Cascade Lake), 3.1 GHz turbo";
const I3EN_SOURCE: &str = "hardware.md 1.1 (AWS EC2 User Guide, 2023) [S]; drives hardware.md 1.3 (io_properties) [S]; prices hardware.md 1.4";
const C4_CPU: &str = "Xeon E5-2666 v3 (Haswell), 2.9 GHz [R]";
const C4_SOURCE: &str = "awsdocs/amazon-ec2-user-guide @ 00f19653 compute-optimized-instances.md (vCPUs, GiB) and instance-optimize-cpu.md (cores) [S]; baseline Gbit/s scylladb/scylla-machine-image common/aws_net_params.json [S]; on-demand $/h: the awsOnDemandHourlyPrice table (dxCompiler test code) hardware.md 1.4 cites [S]";

/// Every instance the twin knows.
pub const CATALOG: [Instance; 25] = [
    // --- AWS i3 (hardware.md 1.1; network baseline / burst [S:A 2023; N]).
    Instance {
        name: "i3.large",
        cpu: I3_CPU,
        vcpus: 2,
        physical_cores: 1,
        memory_bytes: gib_x100(1525),
        // 1 x 475 GB; io_properties i3.large (hardware.md 1.3).
        drives: 1,
        drive_bytes: 475_000_000_000,
        drive: Some("i3.large-nvme"),
        nic_gbps: 0.75,
        nic_burst_gbps: Some(10.0),
        on_demand: price(0.156, Source),
        // hardware.md 1.4: linear scaling of the i3.16xlarge RI [D/E].
        reserved_1y: price(0.101, Estimate),
        source: I3_SOURCE,
    },
    Instance {
        name: "i3.xlarge",
        cpu: I3_CPU,
        vcpus: 4,
        physical_cores: 2,
        memory_bytes: gib_x100(3050),
        // 1 x 950 GB; io_properties i3.xlarge.
        drives: 1,
        drive_bytes: 950_000_000_000,
        drive: Some("i3.xlarge-nvme"),
        nic_gbps: 1.25,
        nic_burst_gbps: Some(10.0),
        on_demand: price(0.312, Source),
        reserved_1y: price(0.201, Estimate),
        source: I3_SOURCE,
    },
    Instance {
        name: "i3.2xlarge",
        cpu: I3_CPU,
        vcpus: 8,
        physical_cores: 4,
        memory_bytes: gib_x100(6100),
        // 1 x 1,900 GB; io_properties i3.ALL.
        drives: 1,
        drive_bytes: 1_900_000_000_000,
        drive: Some("i3-nvme"),
        nic_gbps: 2.5,
        nic_burst_gbps: Some(10.0),
        on_demand: price(0.624, Source),
        reserved_1y: price(0.402, Estimate),
        source: I3_SOURCE,
    },
    Instance {
        name: "i3.4xlarge",
        cpu: I3_CPU,
        vcpus: 16,
        physical_cores: 8,
        memory_bytes: gib_x100(12200),
        // 2 x 1,900 GB.
        drives: 2,
        drive_bytes: 1_900_000_000_000,
        drive: Some("i3-nvme"),
        nic_gbps: 5.0,
        nic_burst_gbps: Some(10.0),
        on_demand: price(1.248, Source),
        reserved_1y: price(0.804, Estimate),
        source: I3_SOURCE,
    },
    Instance {
        name: "i3.8xlarge",
        cpu: I3_CPU,
        vcpus: 32,
        physical_cores: 16,
        memory_bytes: gib_x100(24400),
        // 4 x 1,900 GB.
        drives: 4,
        drive_bytes: 1_900_000_000_000,
        drive: Some("i3-nvme"),
        // "10 Gbps" (Scylla's aws_net_params.json lists 12.0).
        nic_gbps: 10.0,
        nic_burst_gbps: None,
        on_demand: price(2.496, Source),
        reserved_1y: price(1.608, Estimate),
        source: I3_SOURCE,
    },
    Instance {
        name: "i3.16xlarge",
        cpu: I3_CPU,
        vcpus: 64,
        physical_cores: 32,
        memory_bytes: gib_x100(48800),
        // 8 x 1,900 GB.
        drives: 8,
        drive_bytes: 1_900_000_000_000,
        drive: Some("i3-nvme"),
        nic_gbps: 25.0,
        nic_burst_gbps: None,
        on_demand: price(4.992, Source),
        // $880.50 per core-year x 32 cores = $28,176/yr (ScyllaDB i3en
        // post, Table 1) [D].
        reserved_1y: price(3.216, Derived),
        source: I3_SOURCE,
    },
    Instance {
        name: "i3.metal",
        cpu: I3_CPU,
        vcpus: 72,
        // 2 x 18-core (storagereview.com i3.metal review) [S].
        physical_cores: 36,
        memory_bytes: gib_x100(51200),
        // 8 x 1,900 GB.
        drives: 8,
        drive_bytes: 1_900_000_000_000,
        drive: Some("i3-nvme"),
        nic_gbps: 25.0,
        nic_burst_gbps: None,
        // Assumed equal to the i3.16xlarge's (hardware.md 1.4, 7) [R].
        on_demand: price(4.992, Recalled),
        // $773.78 per core-year x 36 cores = $27,856/yr [D].
        reserved_1y: price(3.180, Derived),
        source: I3_SOURCE,
    },
    // --- AWS i3en (hardware.md 1.1, 2023 User Guide).
    Instance {
        name: "i3en.large",
        cpu: I3EN_CPU,
        vcpus: 2,
        physical_cores: 1,
        memory_bytes: gib_x100(1600),
        // 1 x 1,250 GB; io_properties i3en.large.
        drives: 1,
        drive_bytes: 1_250_000_000_000,
        drive: Some("i3en.large-nvme"),
        nic_gbps: 2.1,
        nic_burst_gbps: Some(25.0),
        on_demand: price(0.226, Source),
        reserved_1y: price(0.226 * I3EN_RESERVED_RATIO, Estimate),
        source: I3EN_SOURCE,
    },
    Instance {
        name: "i3en.xlarge",
        cpu: I3EN_CPU,
        vcpus: 4,
        physical_cores: 2,
        memory_bytes: gib_x100(3200),
        // 1 x 2,500 GB; io_properties i3en.xlarge.
        drives: 1,
        drive_bytes: 2_500_000_000_000,
        drive: Some("i3en.xlarge-nvme"),
        nic_gbps: 4.2,
        nic_burst_gbps: Some(25.0),
        on_demand: price(0.452, Source),
        reserved_1y: price(0.452 * I3EN_RESERVED_RATIO, Estimate),
        source: I3EN_SOURCE,
    },
    Instance {
        name: "i3en.2xlarge",
        cpu: I3EN_CPU,
        vcpus: 8,
        physical_cores: 4,
        memory_bytes: gib_x100(6400),
        // 2 x 2,500 GB; io_properties i3en.2xlarge (= i3en.xlarge per disk).
        drives: 2,
        drive_bytes: 2_500_000_000_000,
        drive: Some("i3en.xlarge-nvme"),
        nic_gbps: 8.4,
        nic_burst_gbps: Some(25.0),
        on_demand: price(0.904, Source),
        reserved_1y: price(0.904 * I3EN_RESERVED_RATIO, Estimate),
        source: I3EN_SOURCE,
    },
    Instance {
        name: "i3en.3xlarge",
        cpu: I3EN_CPU,
        vcpus: 12,
        physical_cores: 6,
        memory_bytes: gib_x100(9600),
        // 1 x 7,500 GB; io_properties i3en.ALL.
        drives: 1,
        drive_bytes: 7_500_000_000_000,
        drive: Some("i3en-nvme"),
        nic_gbps: 12.5,
        nic_burst_gbps: Some(25.0),
        on_demand: price(1.356, Source),
        reserved_1y: price(1.356 * I3EN_RESERVED_RATIO, Estimate),
        source: I3EN_SOURCE,
    },
    Instance {
        name: "i3en.6xlarge",
        cpu: I3EN_CPU,
        vcpus: 24,
        physical_cores: 12,
        memory_bytes: gib_x100(19200),
        // 2 x 7,500 GB.
        drives: 2,
        drive_bytes: 7_500_000_000_000,
        drive: Some("i3en-nvme"),
        nic_gbps: 25.0,
        nic_burst_gbps: None,
        on_demand: price(2.712, Source),
        reserved_1y: price(2.712 * I3EN_RESERVED_RATIO, Estimate),
        source: I3EN_SOURCE,
    },
    Instance {
        name: "i3en.12xlarge",
        cpu: I3EN_CPU,
        vcpus: 48,
        physical_cores: 24,
        memory_bytes: gib_x100(38400),
        // 4 x 7,500 GB.
        drives: 4,
        drive_bytes: 7_500_000_000_000,
        drive: Some("i3en-nvme"),
        nic_gbps: 50.0,
        nic_burst_gbps: None,
        on_demand: price(5.424, Source),
        reserved_1y: price(5.424 * I3EN_RESERVED_RATIO, Estimate),
        source: I3EN_SOURCE,
    },
    Instance {
        name: "i3en.24xlarge",
        cpu: I3EN_CPU,
        vcpus: 96,
        physical_cores: 48,
        memory_bytes: gib_x100(76800),
        // 8 x 7,500 GB.
        drives: 8,
        drive_bytes: 7_500_000_000_000,
        drive: Some("i3en-nvme"),
        nic_gbps: 100.0,
        nic_burst_gbps: None,
        // aerospike.com i4i blog, "I3en ... $0.226 - $10.848/hr" [S].
        on_demand: price(10.848, Source),
        // $1,258.43 per core-year x 48 cores = $60,405/yr [D].
        reserved_1y: price(6.896, Derived),
        source: I3EN_SOURCE,
    },
    Instance {
        name: "i3en.metal",
        cpu: I3EN_CPU,
        vcpus: 96,
        // = i3en.24xlarge [D].
        physical_cores: 48,
        memory_bytes: gib_x100(76800),
        drives: 8,
        drive_bytes: 7_500_000_000_000,
        drive: Some("i3en-nvme"),
        nic_gbps: 100.0,
        nic_burst_gbps: None,
        // hardware.md 1.4 gives no i3en.metal price, on-demand or reserved.
        on_demand: None,
        reserved_1y: None,
        source: I3EN_SOURCE,
    },
    // --- AWS c4: cassandra-stress loaders, EBS only (no local drives).
    // hardware.md 1.1 has the c4.4xlarge; the other sizes are from the
    // same AWS pages (source D of hardware.md 1.1, C for cores), Scylla's
    // network table (N) and the price table hardware.md 1.4 cites. The
    // reference data has a 1-year price only for the c4.4xlarge.
    Instance {
        name: "c4.large",
        cpu: C4_CPU,
        vcpus: 2,
        physical_cores: 1,
        memory_bytes: gib_x100(375),
        drives: 0,
        drive_bytes: 0,
        drive: None,
        // "Moderate".
        nic_gbps: 0.625,
        nic_burst_gbps: None,
        on_demand: price(0.100, Source),
        reserved_1y: None,
        source: C4_SOURCE,
    },
    Instance {
        name: "c4.xlarge",
        cpu: C4_CPU,
        vcpus: 4,
        physical_cores: 2,
        memory_bytes: gib_x100(750),
        drives: 0,
        drive_bytes: 0,
        drive: None,
        // "High".
        nic_gbps: 1.25,
        nic_burst_gbps: None,
        on_demand: price(0.199, Source),
        reserved_1y: None,
        source: C4_SOURCE,
    },
    Instance {
        name: "c4.2xlarge",
        cpu: C4_CPU,
        vcpus: 8,
        physical_cores: 4,
        memory_bytes: gib_x100(1500),
        drives: 0,
        drive_bytes: 0,
        drive: None,
        // "High".
        nic_gbps: 2.5,
        nic_burst_gbps: None,
        on_demand: price(0.398, Source),
        reserved_1y: None,
        source: C4_SOURCE,
    },
    Instance {
        name: "c4.4xlarge",
        cpu: C4_CPU,
        vcpus: 16,
        physical_cores: 8,
        memory_bytes: gib_x100(3000),
        drives: 0,
        drive_bytes: 0,
        drive: None,
        // "High", Intel 82599 VF; 5.0 baseline / 10 burst (hardware.md 1.1
        // and 6.1, AWS 2023 and N) [S].
        nic_gbps: 5.0,
        nic_burst_gbps: Some(10.0),
        on_demand: price(0.796, Source),
        // hardware.md 1.4: ~0.51, x0.64 of on-demand [E].
        reserved_1y: price(0.51, Estimate),
        source: "hardware.md 1.1, 1.4, 6.1 [S]; cores instance-optimize-cpu.md [S]",
    },
    Instance {
        name: "c4.8xlarge",
        cpu: C4_CPU,
        vcpus: 36,
        physical_cores: 18,
        memory_bytes: gib_x100(6000),
        drives: 0,
        drive_bytes: 0,
        drive: None,
        // "10 Gbps".
        nic_gbps: 10.0,
        nic_burst_gbps: None,
        on_demand: price(1.591, Source),
        reserved_1y: None,
        source: C4_SOURCE,
    },
    // --- Oracle Cloud (hardware.md 2).
    Instance {
        name: "BM.DenseIO1.36",
        cpu: "2 x Xeon E5-2699 v3 (Haswell), 2.3 GHz",
        // 36 OCPUs = 36 physical cores, 72 threads [S].
        vcpus: 72,
        physical_cores: 36,
        // 512 GB; OCI's shape spec gives 524288 MB [S].
        memory_bytes: gib_x100(51200),
        // 28.8 TB = 9 x 3.2 TB [D]. No per-drive performance figures are
        // published (hardware.md 2: the 2017 iotune gave only
        // max-io-requests=771), so there is no drive preset: a scenario
        // that runs a database on it names one.
        drives: 9,
        drive_bytes: 3_200_000_000_000,
        drive: None,
        nic_gbps: 10.0,
        nic_burst_gbps: None,
        // hardware.md has no OCI prices.
        on_demand: None,
        reserved_1y: None,
        source:
            "hardware.md 2 (yo README shape table; OCI shape-table code; oci_net_params.json) [S]",
    },
    // R7's loaders (published-runs.md R7: 5 x BM.StandardIO1.36 and 4 x
    // VM.Standard1.16). hardware.md 2 has BM.Standard1.36, not the IO
    // variant: R7's scenarios run the IO shape's loaders as it, the two
    // assumed alike in cores and network [E] (the IO variant adds drives a
    // loader does not use).
    Instance {
        name: "BM.Standard1.36",
        cpu: "2 x Xeon E5-2699 v3 (Haswell), 2.3 GHz",
        // 36 OCPUs = 36 physical cores, 72 threads [S].
        vcpus: 72,
        physical_cores: 36,
        // 256 GB [S].
        memory_bytes: gib_x100(25600),
        // Block volumes only.
        drives: 0,
        drive_bytes: 0,
        drive: None,
        // oci_net_params.json: 10.0 [S].
        nic_gbps: 10.0,
        nic_burst_gbps: None,
        on_demand: None,
        reserved_1y: None,
        source: "hardware.md 2 (OCI shape-table code; oci_net_params.json) [S]",
    },
    Instance {
        name: "VM.Standard1.16",
        cpu: "Xeon E5-2699 v3 (Haswell, X5 platform) [E]",
        // 16 OCPUs = 16 physical cores, 32 threads [S].
        vcpus: 32,
        physical_cores: 16,
        // 112 GB [S].
        memory_bytes: gib_x100(11200),
        drives: 0,
        drive_bytes: 0,
        drive: None,
        // oci_net_params.json: 4.8 [S].
        nic_gbps: 4.8,
        nic_burst_gbps: None,
        on_demand: None,
        reserved_1y: None,
        source: "hardware.md 2 (OCI shape-table code; oci_net_params.json) [S]",
    },
    // --- R6's server (published-runs.md R6; drives hardware.md 3.1).
    Instance {
        name: "optane-r6",
        cpu: "2 x Xeon E5-2690 v4 (Broadwell), 14 cores each",
        // 2 x 14 cores [S: R6]; 2 threads per core is the E5-2690 v4's
        // Hyper-Threading [R: Intel's spec]; the report does not say
        // whether it was on.
        vcpus: 56,
        physical_cores: 28,
        // "128 GB DRAM" [S], read as GiB.
        memory_bytes: gib_x100(12800),
        // RAID-0 of 2 x Optane P4800X (750 GB) [S].
        drives: 2,
        drive_bytes: 750_000_000_000,
        drive: Some("optane-p4800x"),
        // 2 x 10 GbE bonded [S] = 20 Gbit/s [D].
        nic_gbps: 20.0,
        nic_burst_gbps: None,
        // A bare-metal server: no hourly price is published.
        on_demand: None,
        reserved_1y: None,
        source: "published-runs.md R6 [S]; drives hardware.md 3.1 [S]",
    },
    // --- The project's own machine, where the real node runs (validation/REAL.md).
    Instance {
        name: "polyglot-kvm",
        cpu: "Intel Xeon (family 6 model 207, Emerald Rapids), 2 vCPUs under KVM, 1 thread per core",
        // lscpu: 2 CPUs, 1 thread per core, 2 cores per socket [S].
        vcpus: 2,
        physical_cores: 2,
        // free -b: 25,325,268,992 bytes [S].
        memory_bytes: 25_325_268_992,
        // One virtio disk, vda, 256 GiB (df: 252G) [S].
        drives: 1,
        drive_bytes: 274_877_906_944,
        drive: Some("polyglot-vda"),
        // Client and node talk over the loopback: no NIC limits them; 100
        // Gbit/s stands for "far above any load here" [E].
        nic_gbps: 100.0,
        nic_burst_gbps: None,
        // Not a priced instance.
        on_demand: None,
        reserved_1y: None,
        source: "validation/real/2026-11-28/machine.txt (lscpu, free -b) [S]; drive: twin device measure [S]",
    },
];

/// The instance called `name`.
pub fn by_name(name: &str) -> Option<&'static Instance> {
    CATALOG.iter().find(|instance| instance.name == name)
}

/// Names of every instance, for error messages.
pub fn names() -> Vec<&'static str> {
    CATALOG.iter().map(|instance| instance.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(name: &str) -> &'static Instance {
        by_name(name).unwrap_or_else(|| panic!("{name} in the catalog"))
    }

    #[test]
    fn the_catalog_matches_hardware_md() {
        // hardware.md 1.1.
        let i3 = get("i3.4xlarge");
        assert_eq!((i3.vcpus, i3.physical_cores, i3.drives), (16, 8, 2));
        assert_eq!(i3.threads_per_core(), 2);
        assert_eq!(i3.memory_bytes, 122 * GIB);
        assert_eq!((i3.nic_gbps, i3.nic_burst_gbps), (5.0, Some(10.0)));
        let large = get("i3.large");
        assert_eq!(large.memory_bytes, 15 * GIB + GIB / 4);
        assert_eq!((large.nic_gbps, large.nic_burst_gbps), (0.75, Some(10.0)));
        let metal = get("i3.metal");
        assert_eq!((metal.vcpus, metal.physical_cores), (72, 36));
        assert_eq!(metal.memory_bytes, 512 * GIB);
        let i3en = get("i3en.3xlarge");
        assert_eq!((i3en.vcpus, i3en.drives), (12, 1));
        assert_eq!(i3en.memory_bytes, 96 * GIB);
        assert_eq!((i3en.nic_gbps, i3en.nic_burst_gbps), (12.5, Some(25.0)));
        let big = get("i3en.24xlarge");
        assert_eq!((big.vcpus, big.drives, big.nic_gbps), (96, 8, 100.0));
        let c4 = get("c4.8xlarge");
        assert_eq!((c4.vcpus, c4.physical_cores, c4.drives), (36, 18, 0));
        assert_eq!(c4.memory_bytes, 60 * GIB);
        assert!(c4.data_device().is_none());
        // hardware.md 2: 36 OCPUs, 72 threads, 512 GB, 9 drives, 10 Gbps.
        let oci = get("BM.DenseIO1.36");
        assert_eq!((oci.vcpus, oci.physical_cores, oci.drives), (72, 36, 9));
        assert_eq!((oci.memory_bytes, oci.nic_gbps), (512 * GIB, 10.0));
        assert_eq!(oci.scylla_shards(), 70);
        // hardware.md 2: R7's loaders.
        let loader = get("BM.Standard1.36");
        assert_eq!(
            (loader.vcpus, loader.drives, loader.nic_gbps),
            (72, 0, 10.0)
        );
        assert_eq!(loader.memory_bytes, 256 * GIB);
        let vm = get("VM.Standard1.16");
        assert_eq!((vm.vcpus, vm.physical_cores, vm.nic_gbps), (32, 16, 4.8));
        assert_eq!(vm.memory_bytes, 112 * GIB);
        // published-runs.md R6: 128 GB, 2 x P4800X, 2 x 10 GbE.
        let r6 = get("optane-r6");
        assert_eq!((r6.physical_cores, r6.memory_bytes), (28, 128 * GIB));
        assert_eq!(r6.nic_gbps, 20.0);
        let optane = r6.data_device().unwrap();
        assert_eq!((optane.name, optane.drives), ("optane-p4800x", 2));
        assert_eq!(optane.read_iops, 2.0 * 550_000.0);
        assert!(by_name("m5.large").is_none());
        assert_eq!(get("i3.4xlarge").scylla_shards(), 14);
        assert_eq!(get("i3.8xlarge").scylla_shards(), 30);
        assert_eq!(get("i3.2xlarge").scylla_shards(), 8);
    }

    #[test]
    fn prices_carry_their_tags_and_unpublished_ones_are_none() {
        let prices = |name: &str| {
            let instance = get(name);
            (instance.on_demand, instance.reserved_1y)
        };
        assert_eq!(
            prices("i3.4xlarge"),
            (price(1.248, Source), price(0.804, Estimate))
        );
        assert_eq!(
            prices("i3.16xlarge"),
            (price(4.992, Source), price(3.216, Derived))
        );
        assert_eq!(
            prices("i3.metal"),
            (price(4.992, Recalled), price(3.180, Derived))
        );
        assert_eq!(
            prices("i3en.24xlarge"),
            (price(10.848, Source), price(6.896, Derived))
        );
        assert_eq!(
            prices("c4.4xlarge"),
            (price(0.796, Source), price(0.51, Estimate))
        );
        let (od, ri) = prices("i3en.12xlarge");
        assert_eq!(od, price(5.424, Source));
        let ri = ri.unwrap();
        assert_eq!(ri.provenance, Provenance::Estimate);
        assert!((ri.usd_per_hour - 3.450).abs() < 0.001, "{ri}");
        for name in [
            "i3en.metal",
            "BM.DenseIO1.36",
            "BM.Standard1.36",
            "VM.Standard1.16",
            "optane-r6",
        ] {
            assert_eq!(prices(name), (None, None), "{name}");
        }
        assert_eq!(get("c4.large").reserved_1y, None);
    }

    #[test]
    fn every_row_is_complete_and_its_drive_preset_exists() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOG.len(), "names are unique");
        for instance in &CATALOG {
            let name = instance.name;
            assert!(instance.physical_cores >= 1 && instance.physical_cores <= instance.vcpus);
            assert!(
                instance.memory_bytes > 0 && instance.nic_gbps > 0.0,
                "{name}"
            );
            assert!(
                !instance.source.is_empty() && !instance.cpu.is_empty(),
                "{name}"
            );
            if let Some(burst) = instance.nic_burst_gbps {
                assert!(burst > instance.nic_gbps, "{name}");
            }
            if let Some(drive) = instance.drive {
                assert!(NvmeProfile::by_name(drive).is_some(), "{name}: {drive}");
                assert!(instance.drives >= 1, "{name}");
            }
            for price in [instance.on_demand, instance.reserved_1y]
                .into_iter()
                .flatten()
            {
                assert!(price.usd_per_hour > 0.0, "{name}");
                assert_ne!(price.provenance, Provenance::Scenario, "{name}");
            }
        }
    }

    #[test]
    fn each_size_gets_its_own_io_properties_drive() {
        // hardware.md 1.3: io_properties x nr_disks.
        let large = get("i3.large").data_device().unwrap();
        assert_eq!((large.name, large.drives), ("i3.large-nvme", 1));
        assert_eq!((large.read_iops, large.write_iops), (111_000.0, 36_800.0));
        assert_eq!(large.read_bytes_per_s, 653_925_080.0);
        assert_eq!(large.write_bytes_per_s, 215_066_473.0);
        let xlarge = get("i3.xlarge").data_device().unwrap();
        assert_eq!((xlarge.read_iops, xlarge.write_iops), (200_800.0, 53_180.0));
        let four = get("i3.4xlarge").data_device().unwrap();
        assert_eq!((four.name, four.read_iops), ("i3-nvme", 822_400.0));
        assert_eq!(four.write_iops, 363_000.0);
        let en_large = get("i3en.large").data_device().unwrap();
        assert_eq!(
            (en_large.read_iops, en_large.write_iops),
            (43_315.0, 33_177.0)
        );
        let en_2x = get("i3en.2xlarge").data_device().unwrap();
        assert_eq!((en_2x.read_iops, en_2x.write_iops), (168_960.0, 133_938.0));
        let en_6x = get("i3en.6xlarge").data_device().unwrap();
        assert_eq!((en_6x.read_iops, en_6x.write_iops), (514_048.0, 348_160.0));
        assert!(get("BM.DenseIO1.36").data_device().is_none());
    }

    #[test]
    fn overrides_replace_fields_and_bad_ones_name_the_field() {
        let base = get("i3.4xlarge");
        let overrides = InstanceOverrides {
            memory_bytes: Some(64 * GIB),
            drives: Some(4),
            nic_gbps: Some(25.0),
            reserved_1y_usd_per_hour: Some(0.7),
            ..InstanceOverrides::default()
        };
        let custom = base.with_overrides(&overrides).unwrap();
        assert_eq!(custom.name, "i3.4xlarge");
        assert_eq!((custom.memory_bytes, custom.drives), (64 * GIB, 4));
        assert_eq!((custom.nic_gbps, custom.nic_burst_gbps), (25.0, None));
        assert_eq!(custom.data_device().unwrap().read_iops, 4.0 * 411_200.0);
        assert_eq!(custom.on_demand, base.on_demand);
        assert_eq!(
            custom.reserved_1y,
            Some(Price {
                usd_per_hour: 0.7,
                provenance: Provenance::Scenario
            })
        );
        assert_eq!(custom.vcpus, 16);
        assert_eq!(
            overrides.fields_set(),
            ["memory", "drives", "nic_gbps", "reserved_1y_usd_per_hour"]
        );
        let more = InstanceOverrides {
            drives: Some(8),
            vcpus: Some(32),
            ..InstanceOverrides::default()
        };
        let merged = overrides.or(&more);
        assert_eq!((merged.drives, merged.vcpus), (Some(4), Some(32)));
        // A loader given drives and a preset.
        let c4 = get("c4.4xlarge").with_overrides(&InstanceOverrides {
            drives: Some(2),
            drive: Some("optane-p4800x".into()),
            ..InstanceOverrides::default()
        });
        assert_eq!(c4.unwrap().data_device().unwrap().name, "optane-p4800x");
        let error = |overrides: InstanceOverrides| base.with_overrides(&overrides).unwrap_err();
        let bad = error(InstanceOverrides {
            drive: Some("floppy".into()),
            ..InstanceOverrides::default()
        });
        assert_eq!(bad.field, "drive");
        assert!(bad.reason.contains("i3-nvme"), "{}", bad.reason);
        let bad = error(InstanceOverrides {
            vcpus: Some(4),
            ..InstanceOverrides::default()
        });
        assert_eq!(bad.field, "vcpus");
        assert!(
            bad.reason.contains("8 physical cores but 4 vCPUs"),
            "{}",
            bad.reason
        );
        let bad = error(InstanceOverrides {
            nic_burst_gbps: Some(1.0),
            ..InstanceOverrides::default()
        });
        assert_eq!(bad.field, "nic_burst_gbps");
        assert_eq!(
            error(InstanceOverrides {
                memory_bytes: Some(0),
                ..InstanceOverrides::default()
            })
            .field,
            "memory"
        );
        assert_eq!(
            error(InstanceOverrides {
                on_demand_usd_per_hour: Some(-1.0),
                ..InstanceOverrides::default()
            })
            .field,
            "on_demand_usd_per_hour"
        );
    }
}
