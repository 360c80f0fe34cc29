//! Scenario instances: catalog rows, their per-size data devices, and the
//! per-field overrides a scenario gives inline (`instance = { base = ...,
//! ... }`, `loader = { ... }`) or in `[cluster.overrides]`.

use sim::plan::{resolve, RunOverrides};
use sim::scenario::parse;

mod common;

const GIB: u64 = 1 << 30;

const SCENARIO: &str = r#"
name = "instances"
duration = "10s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = INSTANCE
OVERRIDES
[[load]]
name = "write"
LOADER
command = "cassandra-stress write no-warmup cl=ONE duration=10s -rate threads=10"
"#;

fn scenario(instance: &str, overrides: &str, loader: &str) -> String {
    SCENARIO
        .replace("INSTANCE", instance)
        .replace("OVERRIDES", overrides)
        .replace("LOADER", loader)
}

fn plan(text: &str) -> sim::cluster::RunPlan {
    common::plan("s.toml", text, None)
}

/// The one-line error of a scenario that parses or resolves wrongly.
fn error(text: &str) -> String {
    let message = match parse("s.toml", text) {
        Err(error) => error.to_string(),
        Ok(scenario) => resolve(&scenario, &RunOverrides::default())
            .expect_err("a bad scenario")
            .to_string(),
    };
    assert!(!message.contains('\n'), "one line: {message}");
    message
}

#[test]
fn i3_large_runs_on_its_own_io_properties_drive() {
    let large = plan(&scenario("\"i3.large\"", "", ""));
    let device = &large.cluster.device;
    // hardware.md 1.3: i3.large 111,000 / 36,800 IOPS, 0.654 / 0.215 GB/s.
    assert_eq!((device.name, device.drives), ("i3.large-nvme", 1));
    assert_eq!((device.read_iops, device.write_iops), (111_000.0, 36_800.0));
    assert_eq!(device.write_bytes_per_s, 215_066_473.0);
    assert_eq!(large.cluster.nic_gbps, 0.75);
    let four = plan(&scenario("\"i3.4xlarge\"", "", ""));
    assert_eq!(
        (four.cluster.device.name, four.cluster.device.drives),
        ("i3-nvme", 2)
    );
    assert_eq!(four.cluster.device.read_iops, 822_400.0);
    assert_eq!(four.cluster.shards_per_node, 14);
    let optane = plan(&scenario("\"optane-r6\"", "", ""));
    assert_eq!(optane.cluster.device.name, "optane-p4800x");
    assert_eq!(optane.cluster.nic_gbps, 20.0);
}

#[test]
fn an_inline_table_overrides_instance_fields() {
    let text = scenario(
        r#"{ base = "i3.4xlarge", memory = "64GiB", drives = 4, nic_gbps = 25, vcpus = 8, physical_cores = 4 }"#,
        "",
        r#"loader = { base = "c4.8xlarge", nic_gbps = 2 }"#,
    );
    let plan = plan(&text);
    let cluster = &plan.cluster;
    assert_eq!(cluster.instance, "i3.4xlarge");
    assert_eq!(
        (cluster.device.drives, cluster.device.read_iops),
        (4, 4.0 * 411_200.0)
    );
    assert_eq!(cluster.nic_gbps, 25.0);
    // 8 vCPUs: 8 shards, sharing 64 GiB less the OS reserve (7%).
    assert_eq!(cluster.shards_per_node, 8);
    let usable = 64 * GIB - (64.0 * GIB as f64 * 0.07) as u64;
    assert_eq!(cluster.memory_per_shard_bytes, usable / 8);
    assert_eq!(
        (plan.loads[0].loader.as_str(), plan.loads[0].loader_nic_gbps),
        ("c4.8xlarge", 2.0)
    );
    // Physical cores do not change what is simulated: the run says so.
    assert!(
        plan.notes
            .iter()
            .any(|note| note.contains("physical_cores")),
        "{:?}",
        plan.notes
    );
}

#[test]
fn cluster_overrides_take_every_instance_field() {
    let text = scenario(
        "\"c4.8xlarge\"",
        "\n[cluster.overrides]\ndrives = 2\ndrive = \"optane-p4800x\"\nmemory = \"32GiB\"\nshards = 4\non_demand_usd_per_hour = 2.5\n",
        "",
    );
    let plan = plan(&text);
    let cluster = &plan.cluster;
    assert_eq!(
        (cluster.device.name, cluster.device.drives),
        ("optane-p4800x", 2)
    );
    assert_eq!(cluster.shards_per_node, 4);
    assert_eq!(cluster.nic_gbps, 10.0);
    assert!(
        plan.notes
            .iter()
            .any(|note| note.contains("on_demand_usd_per_hour")),
        "{:?}",
        plan.notes
    );
    // A loader's overrides other than its NIC are noted too.
    let noted = self::plan(&scenario(
        "\"i3.large\"",
        "",
        r#"loader = { base = "c4.4xlarge", memory = "60GiB" }"#,
    ));
    assert!(
        noted
            .notes
            .iter()
            .any(|note| note.contains("loader override memory")),
        "{:?}",
        noted.notes
    );
}

#[test]
fn unknown_override_fields_name_file_line_and_field() {
    let inline = error(&scenario(
        r#"{ base = "i3.4xlarge", memroy = "64GiB" }"#,
        "",
        "",
    ));
    assert!(
        inline.starts_with("s.toml:8: field `cluster.instance.memroy`: unknown field `memroy`"),
        "{inline}"
    );
    let table = error(&scenario(
        "\"i3.4xlarge\"",
        "\n[cluster.overrides]\nnic_gbps = 10\nram = \"8GiB\"\n",
        "",
    ));
    assert!(
        table.starts_with("s.toml:12: field `cluster.overrides.ram`: unknown field `ram`"),
        "{table}"
    );
    let loader = error(&scenario(
        "\"i3.4xlarge\"",
        "",
        r#"loader = { base = "c4.4xlarge", nics = 2 }"#,
    ));
    assert!(
        loader.starts_with("s.toml:12: field `load[0].loader.nics`: unknown field `nics`"),
        "{loader}"
    );
    let no_base = error(&scenario("{ memory = \"64GiB\" }", "", ""));
    assert!(
        no_base.contains("cluster.instance") && no_base.contains("missing field `base`"),
        "{no_base}"
    );
}

#[test]
fn bad_override_values_name_their_field() {
    let drive = error(&scenario(
        r#"{ base = "i3.4xlarge", drive = "floppy" }"#,
        "",
        "",
    ));
    assert!(
        drive
            .starts_with("s.toml:8: field `cluster.instance.drive`: unknown drive preset `floppy`"),
        "{drive}"
    );
    let cores = error(&scenario(
        "\"i3.4xlarge\"",
        "\n[cluster.overrides]\nvcpus = 4\n",
        "",
    ));
    assert!(
        cores.starts_with("s.toml:11: field `cluster.overrides.vcpus`")
            && cores.contains("8 physical cores but 4 vCPUs"),
        "{cores}"
    );
    let twice = error(&scenario(
        r#"{ base = "i3.4xlarge", memory = "64GiB" }"#,
        "\n[cluster.overrides]\nmemory = \"32GiB\"\n",
        "",
    ));
    assert!(
        twice.starts_with("s.toml:11: field `cluster.overrides.memory`")
            && twice.contains("set it in one place"),
        "{twice}"
    );
    let unknown = error(&scenario("\"i3.5xlarge\"", "", ""));
    assert!(
        unknown.starts_with("s.toml:8: field `cluster.instance`: unknown instance `i3.5xlarge`"),
        "{unknown}"
    );
    let loader = error(&scenario("\"i3.4xlarge\"", "", r#"loader = "c4.9xlarge""#));
    assert!(
        loader.starts_with("s.toml:12: field `load[0].loader`: unknown instance `c4.9xlarge`"),
        "{loader}"
    );
    // No published per-drive figures: the scenario has to name a preset.
    let oci = error(&scenario("\"BM.DenseIO1.36\"", "", ""));
    assert!(
        oci.contains("cluster.instance") && oci.contains("cluster.overrides.drive"),
        "{oci}"
    );
    let fixed = plan(&scenario(
        r#"{ base = "BM.DenseIO1.36", drive = "p4500-tlc" }"#,
        "",
        "",
    ));
    assert_eq!(
        (fixed.cluster.device.name, fixed.cluster.device.drives),
        ("p4500-tlc", 9)
    );
    assert_eq!(fixed.cluster.shards_per_node, 70);
    // A loader without drives is fine; a database node is not.
    let c4 = error(&scenario("\"c4.4xlarge\"", "", ""));
    assert!(c4.contains("has no local drives"), "{c4}");
}
