//! The run's time series (`timeseries.csv`): one row per interval, its
//! columns defined in one table.
//!
//! Every column is a [`Column`]: its name, how its value is computed from
//! what the interval measured ([`OpInterval`] for an op type's columns,
//! [`NodeInterval`] for a node's), and whether it scales with
//! representative-shard sampling. A sampled run simulates `k` of a node's
//! `n` shards, so what the node as a whole does (counts, bytes, rates) is
//! `n/k` times what the simulated shards did, while utilisations,
//! fractions, mean shares, percentiles and hit rates are already per unit
//! and stay as measured. The header and the rows are both generated from
//! the table, so names and values cannot drift apart.
//!
//! Column names and order are an interface (downstream tools read them):
//! `time_s`, then for each op type `[OP_COLUMNS]`, then for each node
//! `[NODE_COLUMNS]` prefixed `node{i}_`, then, on JVM presets, for each
//! node `[JVM_COLUMNS]` prefixed `node{i}_`, then, in a run with topology
//! operations, for each node `[STREAM_COLUMNS]` prefixed `node{i}_`, then
//! the clients' `[CLIENT_COLUMNS]`.

/// The time series: a header and one row of formatted cells per interval.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows of cells, already formatted (so output bytes are fixed here).
    pub rows: Vec<Vec<String>>,
    /// Whether each node's [`STREAM_COLUMNS`] follow (runs with topology
    /// operations).
    pub streaming: bool,
    /// Whether each node's [`JVM_COLUMNS`] follow the nodes' columns (JVM
    /// presets).
    pub jvm: bool,
}

impl TimeSeries {
    /// The position of column `name` (e.g. `node0_cpu_utilisation`), if
    /// the series has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|column| column == name)
    }

    /// Column `name` as numbers, one per row (`None` for a blank cell),
    /// or `None` without such a column.
    pub fn values(&self, name: &str) -> Option<Vec<Option<f64>>> {
        let index = self.column(name)?;
        Some(
            self.rows
                .iter()
                .map(|row| row[index].parse().ok())
                .collect(),
        )
    }

    /// An empty series with the columns of `ops` (op type names) and
    /// `nodes` nodes.
    pub fn new(ops: &[&str], nodes: u32) -> TimeSeries {
        TimeSeries::with_groups(ops, nodes, false, false)
    }

    /// An empty series as [`TimeSeries::new`]'s, with each node's
    /// streaming columns after the nodes' columns.
    pub fn with_streaming(ops: &[&str], nodes: u32) -> TimeSeries {
        TimeSeries::with_groups(ops, nodes, true, false)
    }

    /// An empty series as [`TimeSeries::new`]'s, with each node's
    /// streaming columns (`streaming`) and JVM columns (`jvm`).
    pub fn with_groups(ops: &[&str], nodes: u32, streaming: bool, jvm: bool) -> TimeSeries {
        TimeSeries {
            columns: column_names(ops, nodes, streaming, jvm),
            rows: Vec::new(),
            streaming,
            jvm,
        }
    }

    /// Appends the row of the interval that ended at `time_s` seconds:
    /// `ops` in op-type order, `nodes` in node order, then the clients',
    /// columns that scale multiplied by `scale` (the sampling factor
    /// `n/k`, 1 unsampled).
    pub fn push(
        &mut self,
        time_s: f64,
        ops: &[OpInterval],
        nodes: &[NodeInterval],
        clients: &ClientInterval,
        scale: f64,
    ) {
        let mut row = Vec::with_capacity(self.columns.len());
        row.push(format!("{time_s:.3}"));
        for op in ops {
            row.extend(OP_COLUMNS.iter().map(|column| column.render(op, scale)));
        }
        for group in node_groups(self.streaming, self.jvm) {
            for node in nodes {
                row.extend(group.iter().map(|column| column.render(node, scale)));
            }
        }
        row.extend(
            CLIENT_COLUMNS
                .iter()
                .map(|column| column.render(clients, scale)),
        );
        debug_assert_eq!(row.len(), self.columns.len(), "a row per the column table");
        self.rows.push(row);
    }

    /// Renders the series as CSV.
    pub fn to_csv(&self) -> String {
        let mut out = self.columns.join(",");
        out.push('\n');
        for row in &self.rows {
            out.push_str(&row.join(","));
            out.push('\n');
        }
        out
    }
}

/// The groups of per-node columns a series has, in order: every node's
/// [`NODE_COLUMNS`], then every node's [`JVM_COLUMNS`] (`jvm`), then every
/// node's [`STREAM_COLUMNS`] (`streaming`). The header and the rows both
/// follow it.
fn node_groups(
    streaming: bool,
    jvm: bool,
) -> impl Iterator<Item = &'static [Column<NodeInterval>]> {
    [
        (true, &NODE_COLUMNS[..]),
        (jvm, &JVM_COLUMNS[..]),
        (streaming, &STREAM_COLUMNS[..]),
    ]
    .into_iter()
    .filter_map(|(present, group)| present.then_some(group))
}

/// The header: `time_s`, each op type's columns, each node's columns,
/// each node's JVM columns (`jvm`), each node's streaming columns
/// (`streaming`), the clients' columns.
fn column_names(ops: &[&str], nodes: u32, streaming: bool, jvm: bool) -> Vec<String> {
    let mut names = vec!["time_s".to_string()];
    for op in ops {
        names.extend(
            OP_COLUMNS
                .iter()
                .map(|column| format!("{op}_{}", column.name)),
        );
    }
    for group in node_groups(streaming, jvm) {
        for node in 0..nodes {
            names.extend(
                group
                    .iter()
                    .map(|column| format!("node{node}_{}", column.name)),
            );
        }
    }
    names.extend(CLIENT_COLUMNS.iter().map(|column| column.name.to_string()));
    names
}

/// The cassandra-stress processes over an interval.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientInterval {
    /// Seconds the interval lasted.
    pub length_s: f64,
    /// Process-seconds during which a process with a thread count had
    /// every thread waiting on a reply.
    pub stalled_process_s: f64,
}

/// One op type over an interval, as the clients measured it (the
/// simulated share of the load when sampled).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpInterval {
    /// Seconds the interval lasted.
    pub length_s: f64,
    /// Operations completed.
    pub count: u64,
    /// Their 99th percentile latency, in milliseconds.
    pub p99_ms: f64,
}

/// One node over an interval: its simulated shards' figures summed (gauges
/// at the interval's end, the rest over the interval) and its hardware's.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeInterval {
    /// Seconds the interval lasted.
    pub length_s: f64,
    /// Shards simulated on the node.
    pub shards: usize,
    /// Memtable bytes (gauge).
    pub memtable_bytes: u64,
    /// SSTables on disk (gauge).
    pub sstables: u64,
    /// Seconds the device was busy.
    pub disk_busy_s: f64,
    /// Core seconds the shards' CPUs were busy.
    pub cpu_busy_s: f64,
    /// Cores those CPUs span.
    pub cpu_cores: u32,
    /// Core seconds of compaction merges handed to those CPUs.
    pub compaction_cpu_s: f64,
    /// Compactions running (gauge).
    pub compactions: u64,
    /// The compaction controller's input, summed over the shards (gauge).
    pub compaction_backlog: f64,
    /// CPU shares given to compaction, summed over the shards (gauge).
    pub compaction_shares: f64,
    /// NIC bytes sent.
    pub nic_sent_bytes: u64,
    /// NIC bytes received.
    pub nic_received_bytes: u64,
    /// Device bytes read.
    pub disk_read_bytes: u64,
    /// Device bytes written.
    pub disk_written_bytes: u64,
    /// Virtual dirty memory (gauge).
    pub virtual_dirty_bytes: u64,
    /// Flushes completed.
    pub flushes: u64,
    /// Compaction input bytes merged.
    pub compacted_bytes: u64,
    /// CPU shares given to memtable flushes, summed over the shards (gauge).
    pub flush_shares: f64,
    /// Seconds writes were throttled, summed over the shards.
    pub write_throttled_s: f64,
    /// Row-cache hits.
    pub cache_hits: u64,
    /// Row-cache lookups.
    pub cache_lookups: u64,
    /// Busy fraction of the node's busiest simulated shard (Cassandra: of
    /// the node's cores).
    pub hottest_shard_utilisation: f64,
    /// p99 of the reads the node's coordinators answered (ms; `None`
    /// with none).
    pub server_read_p99_ms: Option<f64>,
    /// p99 of the writes the node's coordinators answered.
    pub server_write_p99_ms: Option<f64>,
    /// Rows its coordinators wrote back by read repair.
    pub read_repairs: u64,
    /// Hints its coordinators stored.
    pub hints_written: u64,
    /// Hints its coordinators replayed (acknowledged).
    pub hints_replayed: u64,
    /// Hints stored and not yet acknowledged (gauge).
    pub hints_pending: u64,
    /// Bytes its shards streamed to peers (topology changes).
    pub stream_sent_bytes: u64,
    /// Bytes its shards took in from peers' streams.
    pub stream_received_bytes: u64,
    /// Seconds its JVM's world was stopped by the pauses that started in
    /// the interval (JVM presets; 0 otherwise).
    pub gc_pause_s: f64,
}

/// A column of the table.
pub struct Column<I> {
    /// Its name (after the op type's or the node's prefix).
    pub name: &'static str,
    /// True if a sampled run reports it times `n/k`: what the whole node
    /// or cluster does (counts, bytes, rates). False for what is per unit
    /// already (utilisations, fractions, mean shares, percentiles, hit
    /// rates).
    pub scales: bool,
    /// Its value over an interval, as the simulated shards measured it.
    pub value: fn(&I) -> Cell,
}

impl<I> Column<I> {
    fn render(&self, interval: &I, scale: f64) -> String {
        (self.value)(interval).render(if self.scales { scale } else { 1.0 })
    }
}

/// A value and how it is printed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// A whole number (after scaling, rounded).
    Whole(f64),
    /// A number with this many decimals.
    Fixed(f64, usize),
    /// No value (e.g. a hit rate without lookups).
    Blank,
}

impl Cell {
    /// The cell's text with its value multiplied by `factor`.
    pub fn render(self, factor: f64) -> String {
        match self {
            Cell::Whole(value) => ((value * factor).round() as u64).to_string(),
            Cell::Fixed(value, decimals) => format!("{:.*}", decimals, value * factor),
            Cell::Blank => String::new(),
        }
    }
}

/// Megabytes per second of `bytes` over the interval.
fn mb_per_s(bytes: u64, length_s: f64) -> Cell {
    Cell::Fixed(bytes as f64 / length_s / 1e6, 3)
}

/// `core_seconds` as a fraction of the node's simulated cores over the
/// interval.
fn core_fraction(node: &NodeInterval, core_seconds: f64) -> Cell {
    let capacity = node.length_s * f64::from(node.cpu_cores.max(1));
    Cell::Fixed((core_seconds / capacity).min(1.0), 4)
}

/// The columns of each op type.
pub const OP_COLUMNS: [Column<OpInterval>; 2] = [
    Column {
        name: "ops_per_s",
        scales: true,
        value: |op| Cell::Fixed(op.count as f64 / op.length_s, 1),
    },
    Column {
        name: "p99_ms",
        scales: false,
        value: |op| Cell::Fixed(op.p99_ms, 3),
    },
];

/// The columns of each node.
pub const NODE_COLUMNS: [Column<NodeInterval>; 25] = [
    Column {
        name: "memtable_bytes",
        scales: true,
        value: |node| Cell::Whole(node.memtable_bytes as f64),
    },
    Column {
        name: "sstables",
        scales: true,
        value: |node| Cell::Whole(node.sstables as f64),
    },
    Column {
        name: "disk_utilisation",
        scales: false,
        value: |node| Cell::Fixed((node.disk_busy_s / node.length_s).min(1.0), 4),
    },
    Column {
        name: "cpu_utilisation",
        scales: false,
        value: |node| core_fraction(node, node.cpu_busy_s),
    },
    Column {
        name: "hottest_shard_utilisation",
        scales: false,
        value: |node| Cell::Fixed(node.hottest_shard_utilisation.min(1.0), 4),
    },
    Column {
        name: "compactions",
        scales: true,
        value: |node| Cell::Whole(node.compactions as f64),
    },
    // Means over the shards: a sampled shard's is the node's.
    Column {
        name: "compaction_backlog",
        scales: false,
        value: |node| Cell::Fixed(node.compaction_backlog / node.shards as f64, 4),
    },
    Column {
        name: "compaction_shares",
        scales: false,
        value: |node| Cell::Fixed(node.compaction_shares / node.shards as f64, 1),
    },
    Column {
        name: "nic_tx_mb_per_s",
        scales: true,
        value: |node| mb_per_s(node.nic_sent_bytes, node.length_s),
    },
    Column {
        name: "nic_rx_mb_per_s",
        scales: true,
        value: |node| mb_per_s(node.nic_received_bytes, node.length_s),
    },
    Column {
        name: "disk_read_mb_per_s",
        scales: true,
        value: |node| mb_per_s(node.disk_read_bytes, node.length_s),
    },
    Column {
        name: "disk_write_mb_per_s",
        scales: true,
        value: |node| mb_per_s(node.disk_written_bytes, node.length_s),
    },
    Column {
        name: "virtual_dirty_bytes",
        scales: true,
        value: |node| Cell::Whole(node.virtual_dirty_bytes as f64),
    },
    Column {
        name: "flushes",
        scales: true,
        value: |node| Cell::Whole(node.flushes as f64),
    },
    Column {
        name: "compacted_mb_per_s",
        scales: true,
        value: |node| mb_per_s(node.compacted_bytes, node.length_s),
    },
    Column {
        name: "flush_shares",
        scales: false,
        value: |node| Cell::Fixed(node.flush_shares / node.shards as f64, 1),
    },
    Column {
        name: "write_throttled_fraction",
        scales: false,
        value: |node| {
            let shard_seconds = node.length_s * node.shards as f64;
            Cell::Fixed((node.write_throttled_s / shard_seconds).min(1.0), 4)
        },
    },
    Column {
        name: "cache_hit_rate",
        scales: false,
        value: |node| match node.cache_lookups {
            0 => Cell::Blank,
            lookups => Cell::Fixed(node.cache_hits as f64 / lookups as f64, 4),
        },
    },
    // Server-side: what the node's coordinators measured, request arrival
    // to reply (Scylla Monitoring's coordinator latencies).
    Column {
        name: "server_read_p99_ms",
        scales: false,
        value: |node| {
            node.server_read_p99_ms
                .map_or(Cell::Blank, |ms| Cell::Fixed(ms, 3))
        },
    },
    Column {
        name: "server_write_p99_ms",
        scales: false,
        value: |node| {
            node.server_write_p99_ms
                .map_or(Cell::Blank, |ms| Cell::Fixed(ms, 3))
        },
    },
    // The share of the node's CPU its compactions took (Scylla Monitoring's
    // compaction group runtime; what the 2.2 controller hands out).
    Column {
        name: "compaction_cpu_fraction",
        scales: false,
        value: |node| core_fraction(node, node.compaction_cpu_s),
    },
    // Read repair and hinted handoff (Scylla Monitoring's
    // `read_repair_*` and `hints_*`): R4 charts the repair rate.
    Column {
        name: "read_repairs_per_s",
        scales: true,
        value: |node| Cell::Fixed(node.read_repairs as f64 / node.length_s, 1),
    },
    Column {
        name: "hints_written_per_s",
        scales: true,
        value: |node| Cell::Fixed(node.hints_written as f64 / node.length_s, 1),
    },
    Column {
        name: "hints_replayed_per_s",
        scales: true,
        value: |node| Cell::Fixed(node.hints_replayed as f64 / node.length_s, 1),
    },
    Column {
        name: "hints_pending",
        scales: true,
        value: |node| Cell::Whole(node.hints_pending as f64),
    },
];

/// Each node's streaming columns, in runs with topology operations: what
/// its shards sent to and took in from peers' streams, MB/s.
pub const STREAM_COLUMNS: [Column<NodeInterval>; 2] = [
    Column {
        name: "stream_out_mb_per_s",
        scales: true,
        value: |node| mb_per_s(node.stream_sent_bytes, node.length_s),
    },
    Column {
        name: "stream_in_mb_per_s",
        scales: true,
        value: |node| mb_per_s(node.stream_received_bytes, node.length_s),
    },
];

/// Each node's JVM columns, on JVM presets.
pub const JVM_COLUMNS: [Column<NodeInterval>; 1] = [
    // The world stopped for garbage collection, each pause counted in the
    // interval it starts (the real node's results give the same column
    // from its GC log).
    Column {
        name: "gc_pause_ms",
        scales: false,
        value: |node| Cell::Fixed(node.gc_pause_s * 1000.0, 3),
    },
];

/// The clients' columns.
pub const CLIENT_COLUMNS: [Column<ClientInterval>; 1] = [Column {
    // The mean number of c-s processes whose every thread waited on a
    // reply: a process in that state issues nothing, whatever its rate
    // says, and its pacer (`limit=`, `throttle=`) or schedule (`fixed=`)
    // falls behind. Processes are not sampled (their threads are), so it
    // does not scale.
    name: "client_processes_stalled",
    scales: false,
    value: |clients| Cell::Fixed(clients.stalled_process_s / clients.length_s, 3),
}];

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a column should scale, from its name alone: what the node
    /// does in total scales; what is per unit does not.
    fn should_scale(name: &str) -> bool {
        let per_unit = [
            "_utilisation",
            "_fraction",
            "_shares",
            "_rate",
            "_ms",
            "_backlog",
        ];
        let totals = [
            "_bytes",
            "_per_s",
            "sstables",
            "compactions",
            "flushes",
            "_pending",
        ];
        let scales = totals.iter().any(|suffix| name.ends_with(suffix));
        assert!(
            scales != per_unit.iter().any(|suffix| name.ends_with(suffix)),
            "{name} is neither a total nor per unit"
        );
        scales
    }

    #[test]
    fn columns_are_found_by_name_and_read_as_numbers() {
        let series = TimeSeries {
            streaming: false,
            jvm: false,
            columns: vec!["time_s".into(), "node0_cache_hit_rate".into()],
            rows: vec![
                vec!["1.000".into(), "0.5000".into()],
                vec!["2.000".into(), String::new()],
            ],
        };
        assert_eq!(series.column("node0_cache_hit_rate"), Some(1));
        assert_eq!(series.column("node1_cache_hit_rate"), None);
        assert_eq!(
            series.values("node0_cache_hit_rate"),
            Some(vec![Some(0.5), None])
        );
        assert_eq!(series.values("missing"), None);
    }

    #[test]
    fn totals_scale_and_per_unit_figures_do_not() {
        for column in &OP_COLUMNS {
            assert_eq!(column.scales, should_scale(column.name), "{}", column.name);
        }
        for column in NODE_COLUMNS
            .iter()
            .chain(&STREAM_COLUMNS)
            .chain(&JVM_COLUMNS)
        {
            assert_eq!(column.scales, should_scale(column.name), "{}", column.name);
        }
        // Processes are not sampled: their count is the same either way.
        assert!(CLIENT_COLUMNS.iter().all(|column| !column.scales));
    }

    #[test]
    fn a_sampled_row_is_the_scaled_totals_and_the_same_per_unit_figures() {
        let node = NodeInterval {
            length_s: 2.0,
            shards: 2,
            memtable_bytes: 1_000,
            sstables: 3,
            disk_busy_s: 1.0,
            cpu_busy_s: 2.0,
            cpu_cores: 2,
            compaction_cpu_s: 1.0,
            compactions: 1,
            compaction_backlog: 1.5,
            compaction_shares: 200.0,
            nic_sent_bytes: 4_000_000,
            nic_received_bytes: 2_000_000,
            disk_read_bytes: 6_000_000,
            disk_written_bytes: 8_000_000,
            virtual_dirty_bytes: 900,
            flushes: 2,
            compacted_bytes: 10_000_000,
            flush_shares: 100.0,
            write_throttled_s: 1.0,
            cache_hits: 3,
            cache_lookups: 4,
            hottest_shard_utilisation: 0.8,
            server_read_p99_ms: None,
            server_write_p99_ms: Some(0.75),
            read_repairs: 3,
            hints_written: 10,
            hints_replayed: 4,
            hints_pending: 6,
            stream_sent_bytes: 20_000_000,
            stream_received_bytes: 12_000_000,
            gc_pause_s: 0.25,
        };
        let op = OpInterval {
            length_s: 2.0,
            count: 500,
            p99_ms: 1.25,
        };
        let clients = ClientInterval {
            length_s: 2.0,
            stalled_process_s: 3.0,
        };
        let mut series = TimeSeries::with_groups(&["write"], 1, true, true);
        series.push(2.0, &[op], &[node], &clients, 1.0);
        series.push(2.0, &[op], &[node], &clients, 4.0);
        let expected = [
            ("time_s", "2.000", "2.000"),
            ("write_ops_per_s", "250.0", "1000.0"),
            ("write_p99_ms", "1.250", "1.250"),
            ("node0_memtable_bytes", "1000", "4000"),
            ("node0_sstables", "3", "12"),
            ("node0_disk_utilisation", "0.5000", "0.5000"),
            ("node0_cpu_utilisation", "0.5000", "0.5000"),
            ("node0_hottest_shard_utilisation", "0.8000", "0.8000"),
            ("node0_compactions", "1", "4"),
            ("node0_compaction_backlog", "0.7500", "0.7500"),
            ("node0_compaction_shares", "100.0", "100.0"),
            ("node0_nic_tx_mb_per_s", "2.000", "8.000"),
            ("node0_nic_rx_mb_per_s", "1.000", "4.000"),
            ("node0_disk_read_mb_per_s", "3.000", "12.000"),
            ("node0_disk_write_mb_per_s", "4.000", "16.000"),
            ("node0_virtual_dirty_bytes", "900", "3600"),
            ("node0_flushes", "2", "8"),
            ("node0_compacted_mb_per_s", "5.000", "20.000"),
            ("node0_flush_shares", "50.0", "50.0"),
            ("node0_write_throttled_fraction", "0.2500", "0.2500"),
            ("node0_cache_hit_rate", "0.7500", "0.7500"),
            ("node0_server_read_p99_ms", "", ""),
            ("node0_server_write_p99_ms", "0.750", "0.750"),
            ("node0_compaction_cpu_fraction", "0.2500", "0.2500"),
            ("node0_read_repairs_per_s", "1.5", "6.0"),
            ("node0_hints_written_per_s", "5.0", "20.0"),
            ("node0_hints_replayed_per_s", "2.0", "8.0"),
            ("node0_hints_pending", "6", "24"),
            ("node0_gc_pause_ms", "250.000", "250.000"),
            ("node0_stream_out_mb_per_s", "10.000", "40.000"),
            ("node0_stream_in_mb_per_s", "6.000", "24.000"),
            ("client_processes_stalled", "1.500", "1.500"),
        ];
        assert_eq!(series.columns.len(), expected.len());
        for (index, (name, whole, sampled)) in expected.into_iter().enumerate() {
            assert_eq!(series.columns[index], name);
            assert_eq!(series.rows[0][index], whole, "{name}");
            assert_eq!(series.rows[1][index], sampled, "{name} sampled");
        }
    }

    #[test]
    fn a_hit_rate_without_lookups_is_blank() {
        let mut series = TimeSeries::new(&[], 1);
        let clients = ClientInterval {
            length_s: 1.0,
            ..ClientInterval::default()
        };
        series.push(1.0, &[], &[NodeInterval::default()], &clients, 1.0);
        let column = series
            .columns
            .iter()
            .position(|name| name == "node0_cache_hit_rate")
            .unwrap();
        assert_eq!(series.rows[0][column], "");
    }
}
