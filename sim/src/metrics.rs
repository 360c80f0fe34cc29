//! Latency histograms (the time series' table is in [`crate::timeseries`]).
//!
//! Latencies are recorded in microseconds in HdrHistograms (3 significant
//! digits, 1 us to 1 hour), as cassandra-stress records them; reports convert
//! to milliseconds. Each op type has a whole-run histogram and an interval
//! histogram that is reset at every interval tick.

use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use units::{SimDuration, SimTime};

use crate::load::OpKind;

/// Highest latency recorded, in microseconds (one hour); longer ones are
/// clamped to it.
const MAX_LATENCY_US: u64 = 3_600_000_000;

/// A client latency as the histograms hold it: whole microseconds, rounded
/// up, from 1 to [`MAX_LATENCY_US`].
fn latency_us(latency: SimDuration) -> u64 {
    latency.as_nanos().div_ceil(1000).clamp(1, MAX_LATENCY_US)
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("static histogram bounds are valid")
}

/// Latency figures in milliseconds, the shape of `summary.json`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Maximum.
    pub max: f64,
}

impl LatencySummary {
    /// Summarises a histogram of microseconds.
    pub fn of<T: hdrhistogram::Counter>(histogram: &Histogram<T>) -> LatencySummary {
        let ms = |us: u64| us as f64 / 1000.0;
        LatencySummary {
            mean: round3(histogram.mean() / 1000.0),
            p50: ms(histogram.value_at_quantile(0.50)),
            p95: ms(histogram.value_at_quantile(0.95)),
            p99: ms(histogram.value_at_quantile(0.99)),
            p999: ms(histogram.value_at_quantile(0.999)),
            max: ms(histogram.max()),
        }
    }
}

/// Rounds to 3 decimals so reports do not carry float noise.
pub fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// One interval of one op type.
#[derive(Clone, Debug)]
pub struct IntervalReport {
    /// Operations completed in the interval.
    pub count: u64,
    /// Partitions they touched.
    pub partitions: u64,
    /// Rows they wrote or read back.
    pub rows: u64,
    /// Operations that failed every try in the interval.
    pub errors: u64,
    /// Their latencies.
    pub latency: LatencySummary,
    /// The interval histogram, V2-deflate serialized (microseconds).
    pub histogram: Vec<u8>,
}

/// Latencies and counts of one op type.
#[derive(Clone, Debug)]
pub struct OpMetrics {
    /// The op type.
    pub kind: OpKind,
    /// Whole-run latencies.
    pub total: Histogram<u64>,
    /// Latencies since the last interval tick.
    pub interval: Histogram<u64>,
    /// Operations completed in the whole run.
    pub count: u64,
    /// Operations completed since the last tick.
    pub interval_count: u64,
    /// Partitions those operations touched (a batch's parts; 1 for a
    /// read), in the whole run and since the last tick: c-s's `pk/s` and
    /// "Total partitions".
    pub partitions: u64,
    /// Since the last tick.
    pub interval_partitions: u64,
    /// Rows they wrote or read back (0 for a read that found nothing): c-s's
    /// `row/s`, in the whole run.
    pub rows: u64,
    /// Since the last tick.
    pub interval_rows: u64,
    /// Reads answered with no row (in volume mode, keys the population never
    /// wrote, as c-s reads of unwritten keys return nothing).
    pub not_found: u64,
    /// Attempts the client abandoned at its timeout (each retried or failed).
    pub timeouts: u64,
    /// Operations that failed every try.
    pub errors: u64,
    /// Errors since the last tick.
    pub interval_errors: u64,
}

impl OpMetrics {
    /// Empty metrics for `kind`.
    pub fn new(kind: OpKind) -> OpMetrics {
        OpMetrics {
            kind,
            total: new_histogram(),
            interval: new_histogram(),
            count: 0,
            interval_count: 0,
            partitions: 0,
            interval_partitions: 0,
            rows: 0,
            interval_rows: 0,
            not_found: 0,
            timeouts: 0,
            errors: 0,
            interval_errors: 0,
        }
    }

    /// Records one completed operation that touched `partitions`
    /// partitions and wrote or returned `rows` rows.
    #[inline]
    pub fn record(&mut self, latency: SimDuration, partitions: u32, rows: u32) {
        let us = latency_us(latency);
        self.total.saturating_record(us);
        self.interval.saturating_record(us);
        self.count += 1;
        self.interval_count += 1;
        self.partitions += u64::from(partitions);
        self.interval_partitions += u64::from(partitions);
        self.rows += u64::from(rows);
        self.interval_rows += u64::from(rows);
    }

    /// Records an operation that failed every try.
    pub fn record_error(&mut self) {
        self.errors += 1;
        self.interval_errors += 1;
    }

    /// Takes in what one client process recorded since the last time
    /// ([`OpDelta`]): its latencies join the whole run's and the
    /// interval's, its counts the counts.
    pub fn absorb(&mut self, delta: &OpDelta) {
        self.total
            .add(&delta.latencies)
            .expect("histograms of one shape merge");
        self.interval
            .add(&delta.latencies)
            .expect("histograms of one shape merge");
        self.count += delta.count;
        self.interval_count += delta.count;
        self.partitions += delta.partitions;
        self.interval_partitions += delta.partitions;
        self.rows += delta.rows;
        self.interval_rows += delta.rows;
        self.not_found += delta.not_found;
        self.timeouts += delta.timeouts;
        self.errors += delta.errors;
        self.interval_errors += delta.errors;
    }

    /// Ends an interval for a c-s interval line and an HdrHistogram log:
    /// returns the interval's count, latency summary and the histogram
    /// serialized (V2 deflate, microseconds), then resets it.
    pub fn take_interval_report(&mut self, serializer: &mut V2DeflateSerializer) -> IntervalReport {
        let mut histogram = Vec::new();
        serializer
            .serialize(&self.interval, &mut histogram)
            .expect("serializing a histogram into memory cannot fail");
        let report = IntervalReport {
            count: self.interval_count,
            partitions: self.interval_partitions,
            rows: self.interval_rows,
            errors: self.interval_errors,
            latency: LatencySummary::of(&self.interval),
            histogram,
        };
        self.interval.reset();
        self.interval_count = 0;
        self.interval_partitions = 0;
        self.interval_rows = 0;
        self.interval_errors = 0;
        report
    }

    /// Ends an interval: returns (operations, p99 ms) and resets it.
    pub fn take_interval(&mut self) -> (u64, f64) {
        let p99 = if self.interval_count == 0 {
            0.0
        } else {
            self.interval.value_at_quantile(0.99) as f64 / 1000.0
        };
        let count = self.interval_count;
        self.interval.reset();
        self.interval_count = 0;
        self.interval_partitions = 0;
        self.interval_rows = 0;
        (count, p99)
    }
}

/// What one client process recorded of one op type since the run's
/// metrics last took it in ([`OpMetrics::absorb`]): each process records
/// into its own, so the run's figures are sums that no order of the
/// processes changes (docs/parallel-runner.md).
#[derive(Clone, Debug)]
pub struct OpDelta {
    latencies: Histogram<u64>,
    count: u64,
    partitions: u64,
    rows: u64,
    not_found: u64,
    timeouts: u64,
    errors: u64,
    /// From the first operation's start to the last one's end.
    window: Option<(SimTime, SimTime)>,
}

impl Default for OpDelta {
    fn default() -> Self {
        OpDelta::new()
    }
}

impl OpDelta {
    /// Nothing recorded yet.
    pub fn new() -> OpDelta {
        OpDelta {
            latencies: new_histogram(),
            count: 0,
            partitions: 0,
            rows: 0,
            not_found: 0,
            timeouts: 0,
            errors: 0,
            window: None,
        }
    }

    /// Records one operation measured from `from` to `to` (as
    /// [`OpMetrics::record`]), `not_found` if it was a read that found
    /// nothing.
    #[inline]
    pub fn record(
        &mut self,
        from: SimTime,
        to: SimTime,
        partitions: u32,
        rows: u32,
        not_found: bool,
    ) {
        self.latencies.saturating_record(latency_us(to - from));
        self.count += 1;
        self.partitions += u64::from(partitions);
        self.rows += u64::from(rows);
        self.not_found += u64::from(not_found);
        self.window = Some(match self.window {
            Some((first, last)) => (first.min(from), last.max(to)),
            None => (from, to),
        });
    }

    /// Counts an attempt abandoned at its timeout.
    pub fn timed_out(&mut self) {
        self.timeouts += 1;
    }

    /// Counts an operation that failed every try.
    pub fn failed(&mut self) {
        self.errors += 1;
    }

    /// Whether nothing was recorded since the last [`OpDelta::clear`].
    pub fn is_empty(&self) -> bool {
        self.count == 0 && self.timeouts == 0 && self.errors == 0
    }

    /// The span of the operations recorded.
    pub fn window(&self) -> Option<(SimTime, SimTime)> {
        self.window
    }

    /// Forgets what was recorded (once taken in).
    pub fn clear(&mut self) {
        self.latencies.reset();
        self.count = 0;
        self.partitions = 0;
        self.rows = 0;
        self.not_found = 0;
        self.timeouts = 0;
        self.errors = 0;
        self.window = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Operations recorded through two processes' deltas and taken in
    /// give the metrics recording them directly gives.
    #[test]
    fn deltas_taken_in_sum_to_the_direct_record() {
        let mut direct = OpMetrics::new(OpKind::Read);
        let mut merged = OpMetrics::new(OpKind::Read);
        let mut deltas = [OpDelta::new(), OpDelta::new()];
        let at = |us: u64| SimTime::ZERO + SimDuration::from_micros(us);
        for us in 1..=500u64 {
            direct.record(SimDuration::from_micros(us * 7), 1, 2);
            deltas[(us % 2) as usize].record(at(us), at(us + us * 7), 1, 2, us == 9);
        }
        deltas[1].timed_out();
        deltas[0].failed();
        for delta in &mut deltas {
            merged.absorb(delta);
            delta.clear();
            assert!(delta.is_empty());
        }
        assert_eq!(merged.total, direct.total);
        assert_eq!(merged.interval, direct.interval);
        assert_eq!(
            (merged.count, merged.partitions, merged.rows),
            (500, 500, 1000)
        );
        assert_eq!(
            (merged.not_found, merged.timeouts, merged.errors),
            (1, 1, 1)
        );
    }

    #[test]
    fn latencies_are_summarised_in_milliseconds() {
        let mut metrics = OpMetrics::new(OpKind::Write);
        for us in 1..=1000u64 {
            metrics.record(SimDuration::from_micros(us), 2, 3);
        }
        assert_eq!((metrics.partitions, metrics.rows), (2000, 3000));
        let summary = LatencySummary::of(&metrics.total);
        assert!((summary.mean - 0.5005).abs() < 0.001, "{summary:?}");
        assert!((summary.p99 - 0.990).abs() < 0.002, "{summary:?}");
        assert_eq!(summary.max, 1.0);
        let (count, p99) = metrics.take_interval();
        assert_eq!(count, 1000);
        assert!((p99 - 0.990).abs() < 0.002);
        assert_eq!(metrics.take_interval(), (0, 0.0), "the interval resets");
        assert_eq!(metrics.count, 1000, "the whole-run count does not");
    }
}

/// Highest server-side latency recorded, in microseconds (one minute; the
/// coordinator's timeouts are seconds).
const MAX_SERVER_LATENCY_US: u64 = 60_000_000;

/// The latencies one node's coordinators measured, as Scylla's
/// `storage_proxy` coordinator histograms do (what Scylla Monitoring shows
/// as server-side latency): from a client request's arrival on the
/// coordinating shard to its reply, without the client's NIC, queueing or
/// the wire. Reads and writes, whole run and since the last tick; 2
/// significant digits in `u32` counts, so 40 nodes keep them in a few MB.
#[derive(Clone, Debug)]
pub struct ServerLatencies {
    /// Read, then write.
    ops: [ServerOp; 2],
}

#[derive(Clone, Debug)]
struct ServerOp {
    total: Histogram<u32>,
    interval: Histogram<u32>,
}

impl ServerOp {
    fn new() -> ServerOp {
        let histogram = || {
            Histogram::new_with_bounds(1, MAX_SERVER_LATENCY_US, 2)
                .expect("static histogram bounds are valid")
        };
        ServerOp {
            total: histogram(),
            interval: histogram(),
        }
    }
}

impl Default for ServerLatencies {
    fn default() -> ServerLatencies {
        ServerLatencies {
            ops: [ServerOp::new(), ServerOp::new()],
        }
    }
}

impl ServerLatencies {
    /// Records one request the node coordinated.
    #[inline]
    pub fn record(&mut self, write: bool, latency: SimDuration) {
        let us = latency
            .as_nanos()
            .div_ceil(1000)
            .clamp(1, MAX_SERVER_LATENCY_US);
        // Into the interval only; ticks fold it into the total.
        self.ops[usize::from(write)].interval.saturating_record(us);
    }

    /// The p99 of reads and of writes since the last call, in ms (`None`
    /// for an op with none), then starts the next interval; the interval
    /// joins the run-long totals if `into_totals` (false for a warm-up).
    pub fn take_interval_p99_ms(&mut self, into_totals: bool) -> [Option<f64>; 2] {
        self.ops.each_mut().map(|op| {
            let p99 = (!op.interval.is_empty())
                .then(|| op.interval.value_at_quantile(0.99) as f64 / 1000.0);
            if into_totals {
                op.total
                    .add(&op.interval)
                    .expect("server histograms share their bounds");
            }
            op.interval.reset();
            p99
        })
    }

    /// Whole-run histograms of reads and of writes (microseconds), up to
    /// the last tick.
    pub fn totals(&self) -> [&Histogram<u32>; 2] {
        [&self.ops[0].total, &self.ops[1].total]
    }

    /// Adds another node's whole-run latencies to these, and what it
    /// recorded since its last tick.
    pub fn merge_totals(&mut self, other: &ServerLatencies) {
        for (mine, theirs) in self.ops.iter_mut().zip(&other.ops) {
            for histogram in [&theirs.total, &theirs.interval] {
                mine.total
                    .add(histogram)
                    .expect("server histograms share their bounds");
            }
        }
    }
}

#[cfg(test)]
mod server_tests {
    use super::*;

    #[test]
    fn server_latencies_keep_reads_and_writes_apart_and_reset_per_interval() {
        let mut node = ServerLatencies::default();
        for ms in 1..=100 {
            node.record(false, SimDuration::from_millis(ms));
        }
        node.record(true, SimDuration::from_micros(300));
        let [read, write] = node.take_interval_p99_ms(true);
        let read = read.expect("reads were recorded");
        assert!((98.0..=100.0).contains(&read), "read p99 {read}");
        let write = write.expect("a write was recorded");
        assert!((0.297..=0.303).contains(&write), "2 digits: {write}");
        assert_eq!(node.take_interval_p99_ms(true), [None, None], "reset");
        // A warm-up interval stays out of the totals.
        let mut warming = ServerLatencies::default();
        warming.record(false, SimDuration::from_millis(50));
        assert!(warming.take_interval_p99_ms(false)[0].is_some());
        assert!(warming.totals()[0].is_empty());
        let mut cluster = ServerLatencies::default();
        cluster.merge_totals(&node);
        cluster.merge_totals(&node);
        assert_eq!(cluster.totals()[0].len(), 200);
        assert_eq!(cluster.totals()[1].len(), 2);
    }
}
