//! `twin instance`: the instance catalog (`list`).

use std::io::Write as _;
use std::process::ExitCode;

use clap::Subcommand;
use models::instance::{Instance, Price, CATALOG};
use serde::Serialize;

/// Exit code for failures outside the simulation.
const EXIT_ENVIRONMENT: u8 = 1;

const GIB: f64 = (1u64 << 30) as f64;

/// `twin instance ...`
#[derive(Subcommand)]
pub enum InstanceCommand {
    /// List the instance catalog: CPUs, memory, drives, NIC and prices.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `twin instance` subcommand.
pub fn run(command: InstanceCommand) -> ExitCode {
    match command {
        InstanceCommand::List { json } => list(json),
    }
}

fn list(json: bool) -> ExitCode {
    let text = if json {
        match serde_json::to_string_pretty(&catalog_rows()) {
            Ok(text) => text + "\n",
            Err(error) => {
                eprintln!("twin instance list: {error}");
                return ExitCode::from(EXIT_ENVIRONMENT);
            }
        }
    } else {
        catalog_table()
    };
    // A closed pipe (`| head`) is not an error.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

/// A price, or `-` where none is published.
fn price_text(price: Option<Price>) -> String {
    price.map_or_else(|| "-".to_string(), |price| price.to_string())
}

/// The catalog as a table, one instance per line, with a legend.
fn catalog_table() -> String {
    let mut text = format!(
        "{:<15} {:>5} {:>5} {:>8}  {:<21} {:<16} {:>11} {:>11}  {}\n",
        "instance",
        "vCPUs",
        "cores",
        "GiB",
        "drives",
        "NIC_Gbit/s",
        "on-demand",
        "1y-reserved",
        "cpu"
    );
    for instance in &CATALOG {
        let drives = match (instance.drives, instance.drive) {
            (0, _) => "-".to_string(),
            (count, Some(preset)) => format!("{count} x {preset}"),
            (count, None) => format!("{count} x (no preset)"),
        };
        let nic = match instance.nic_burst_gbps {
            Some(burst) => format!("{} (up to {burst})", instance.nic_gbps),
            None => instance.nic_gbps.to_string(),
        };
        text.push_str(&format!(
            "{:<15} {:>5} {:>5} {:>8}  {:<21} {:<16} {:>11} {:>11}  {}\n",
            instance.name,
            instance.vcpus,
            instance.physical_cores,
            instance.memory_bytes as f64 / GIB,
            drives,
            nic,
            price_text(instance.on_demand),
            price_text(instance.reserved_1y),
            instance.cpu
        ));
    }
    text.push_str(
        "vCPUs are hardware threads; drives: count x NVMe preset of one drive (`twin device list`), \
         striped as RAID-0; NIC: sustained Gbit/s, (up to N) bursts on network I/O credits\n\
         prices: $/h, us-east-1 Linux (hardware.md 1.4); 1y-reserved is the effective hourly price \
         of a 1-year reservation (payment option unstated in the source); \
         [S] source, [D] derived, [R] recalled, [E] estimate; - none published\n\
         sources per row: models::instance; a scenario overrides any field \
         (instance = { base = \"i3.4xlarge\", memory = \"64GiB\" } or [cluster.overrides])\n",
    );
    text
}

/// One catalog row of `twin instance list --json`.
#[derive(Serialize)]
struct Row {
    name: &'static str,
    cpu: &'static str,
    vcpus: u32,
    physical_cores: u32,
    threads_per_core: u32,
    scylla_shards: u32,
    memory_bytes: u64,
    drives: u32,
    /// NVMe preset of one drive (`null`: no published figures).
    drive: Option<&'static str>,
    /// The RAID-0 of the drives, as the simulation sees it.
    data_device: Option<Device>,
    nic_gbps: f64,
    nic_burst_gbps: Option<f64>,
    on_demand: Option<JsonPrice>,
    reserved_1y: Option<JsonPrice>,
    source: &'static str,
}

#[derive(Serialize)]
struct Device {
    read_iops: f64,
    read_bytes_per_s: f64,
    write_iops: f64,
    write_bytes_per_s: f64,
}

#[derive(Serialize)]
struct JsonPrice {
    usd_per_hour: f64,
    /// hardware.md's tag: S, D, R or E.
    provenance: &'static str,
}

fn json_price(price: Option<Price>) -> Option<JsonPrice> {
    price.map(|price| JsonPrice {
        usd_per_hour: price.usd_per_hour,
        provenance: price.provenance.tag(),
    })
}

fn row(instance: &Instance) -> Row {
    Row {
        name: instance.name,
        cpu: instance.cpu,
        vcpus: instance.vcpus,
        physical_cores: instance.physical_cores,
        threads_per_core: instance.threads_per_core(),
        scylla_shards: instance.scylla_shards(),
        memory_bytes: instance.memory_bytes,
        drives: instance.drives,
        drive: instance.drive,
        data_device: instance.data_device().map(|device| Device {
            read_iops: device.read_iops,
            read_bytes_per_s: device.read_bytes_per_s,
            write_iops: device.write_iops,
            write_bytes_per_s: device.write_bytes_per_s,
        }),
        nic_gbps: instance.nic_gbps,
        nic_burst_gbps: instance.nic_burst_gbps,
        on_demand: json_price(instance.on_demand),
        reserved_1y: json_price(instance.reserved_1y),
        source: instance.source,
    }
}

fn catalog_rows() -> Vec<Row> {
    CATALOG.iter().map(row).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_instance_with_its_prices() {
        let table = catalog_table();
        for instance in &CATALOG {
            assert!(
                table.lines().any(|line| line.starts_with(instance.name)),
                "{}",
                instance.name
            );
        }
        let line = |name: &str| {
            table
                .lines()
                .find(|line| line.split_whitespace().next() == Some(name))
                .unwrap()
                .to_string()
        };
        let i3 = line("i3.4xlarge");
        for cell in [
            "16",
            "8",
            "122",
            "2 x i3-nvme",
            "5 (up to 10)",
            "1.248 [S]",
            "0.804 [E]",
        ] {
            assert!(i3.contains(cell), "{cell}: {i3}");
        }
        let large = line("i3.large");
        assert!(large.contains("1 x i3.large-nvme"), "{large}");
        let metal = line("i3en.metal");
        assert!(metal.contains(" - "), "no price: {metal}");
        let oci = line("BM.DenseIO1.36");
        assert!(oci.contains("9 x (no preset)"), "{oci}");
    }

    #[test]
    fn the_json_has_every_row_and_null_for_unpublished_prices() {
        let json = serde_json::to_value(catalog_rows()).unwrap();
        let rows = json.as_array().unwrap();
        assert_eq!(rows.len(), CATALOG.len());
        let find = |name: &str| rows.iter().find(|row| row["name"] == name).unwrap();
        let i3 = find("i3.16xlarge");
        assert_eq!(i3["vcpus"], 64);
        assert_eq!(i3["reserved_1y"]["usd_per_hour"], 3.216);
        assert_eq!(i3["reserved_1y"]["provenance"], "D");
        assert_eq!(i3["data_device"]["read_iops"], 8.0 * 411_200.0);
        let large = find("i3.large");
        assert_eq!(large["drive"], "i3.large-nvme");
        assert_eq!(large["nic_burst_gbps"], 10.0);
        let r6 = find("optane-r6");
        assert!(r6["on_demand"].is_null() && r6["reserved_1y"].is_null());
        assert!(find("c4.4xlarge")["data_device"].is_null());
    }
}
