//! The instance catalog: machines a scenario can name.
//!
//! Figures from hardware.md section 1.1 (AWS EC2 User Guide: vCPUs, physical
//! cores, RAM, NVMe drives; network baselines from AWS and Scylla's
//! `aws_net_params.json`). "Up to 10 Gbps" sizes are given their sustained
//! baseline, not the burst. Prices and the OCI and Optane servers arrive with
//! the models issue.

use crate::nvme::NvmeProfile;

const GIB: u64 = 1024 * 1024 * 1024;

/// One instance type.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// AWS name, e.g. `i3.4xlarge`.
    pub name: &'static str,
    /// Hardware threads.
    pub vcpus: u32,
    /// Physical cores.
    pub physical_cores: u32,
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// Local NVMe drives (0 for EBS-only loaders).
    pub drives: u32,
    /// Sustained network bandwidth, gigabits per second.
    pub nic_gbps: f64,
}

impl Instance {
    /// Scylla shards on this instance: every vCPU below 16 vCPUs; from the
    /// 4xlarge size up, vCPUs - 2, since perftune leaves one physical core
    /// (two hyperthreads) to NIC interrupts (hardware.md 1.3, the 2017 AMI
    /// cpusets: i3.4xlarge 14 shards, i3.8xlarge 30, i3.16xlarge 62).
    pub fn scylla_shards(&self) -> u32 {
        if self.vcpus >= 16 {
            self.vcpus - 2
        } else {
            self.vcpus
        }
    }

    /// The data device: a RAID-0 of the instance's drives.
    pub fn data_device(&self) -> Option<NvmeProfile> {
        (self.drives > 0).then(|| NvmeProfile::i3_drive().striped(self.drives))
    }
}

const fn instance(
    name: &'static str,
    vcpus: u32,
    physical_cores: u32,
    memory_gib_x100: u64,
    drives: u32,
    nic_gbps: f64,
) -> Instance {
    Instance {
        name,
        vcpus,
        physical_cores,
        memory_bytes: memory_gib_x100 * GIB / 100,
        drives,
        nic_gbps,
    }
}

/// Memory Seastar leaves to the operating system: max(1.5 GiB, 7% of RAM)
/// (seastar `resource.cc`, `calculate_memory`; recalled, not re-read).
pub fn seastar_reserved_memory_bytes(memory_bytes: u64) -> u64 {
    (memory_bytes as f64 * 0.07).max(1.5 * GIB as f64) as u64
}

/// Every instance the twin knows.
pub const CATALOG: [Instance; 8] = [
    instance("i3.large", 2, 1, 1525, 1, 0.75),
    instance("i3.xlarge", 4, 2, 3050, 1, 1.25),
    instance("i3.2xlarge", 8, 4, 6100, 1, 2.5),
    instance("i3.4xlarge", 16, 8, 12200, 2, 5.0),
    instance("i3.8xlarge", 32, 16, 24400, 4, 10.0),
    instance("i3.16xlarge", 64, 32, 48800, 8, 25.0),
    instance("i3.metal", 72, 36, 51200, 8, 25.0),
    instance("c4.4xlarge", 16, 8, 3000, 0, 5.0),
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

    #[test]
    fn the_catalog_matches_the_aws_table() {
        let i3 = by_name("i3.4xlarge").unwrap();
        assert_eq!((i3.vcpus, i3.physical_cores, i3.drives), (16, 8, 2));
        assert_eq!(i3.memory_bytes, 122 * GIB);
        let device = i3.data_device().unwrap();
        assert_eq!(device.read_iops, 2.0 * 411_200.0);
        assert!(by_name("c4.4xlarge").unwrap().data_device().is_none());
        assert!(by_name("m5.large").is_none());
        assert_eq!(by_name("i3.4xlarge").unwrap().scylla_shards(), 14);
        assert_eq!(by_name("i3.8xlarge").unwrap().scylla_shards(), 30);
        assert_eq!(by_name("i3.2xlarge").unwrap().scylla_shards(), 8);
    }
}
