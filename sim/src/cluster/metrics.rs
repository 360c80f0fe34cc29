//! The interval tick: per-interval figures of every node and load for the
//! time series, the events log's hint and repair lines, and the
//! cassandra-stress interval lines.

use super::*;

/// A node's engine counters, summed over its shards, as an interval tick
/// reads them (each counts from the start of the run); one tick's less the
/// last tick's is the interval's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct EngineCounters {
    /// Memtable flushes completed.
    flushes: u64,
    /// Bytes compaction merged.
    bytes_compacted: u64,
    /// Time writes waited at the dirty-memory limit.
    write_throttled: SimDuration,
    /// Reads whose digests disagreed (each repaired).
    reads_repaired: u64,
    /// Of those, repaired in the background.
    background_repairs: u64,
    /// Rows read repair wrote back.
    rows_repaired: u64,
    /// Hints written.
    hints_written: u64,
    /// Hints acknowledged on replay.
    hints_replayed: u64,
}

impl EngineCounters {
    /// What happened since `before` (an earlier tick's counters).
    fn since(self, before: EngineCounters) -> EngineCounters {
        debug_assert!(self.write_throttled >= before.write_throttled);
        EngineCounters {
            flushes: self.flushes - before.flushes,
            bytes_compacted: self.bytes_compacted - before.bytes_compacted,
            write_throttled: self.write_throttled - before.write_throttled,
            reads_repaired: self.reads_repaired - before.reads_repaired,
            background_repairs: self.background_repairs - before.background_repairs,
            rows_repaired: self.rows_repaired - before.rows_repaired,
            hints_written: self.hints_written - before.hints_written,
            hints_replayed: self.hints_replayed - before.hints_replayed,
        }
    }
}

/// What a node's hardware and shards have counted since the start of the
/// run, as an interval tick reads it; one tick's less the last tick's is
/// the interval's ([`NodeSnapshot::since`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct NodeSnapshot {
    /// Time its device was busy.
    disk_busy: SimDuration,
    /// Bytes its NIC sent and received.
    nic_sent_bytes: u64,
    nic_received_bytes: u64,
    /// Bytes its device read and wrote.
    disk_read_bytes: u64,
    disk_written_bytes: u64,
    /// Its shards' row-cache hits and lookups.
    cache_hits: u64,
    cache_lookups: u64,
    /// Bytes its shards streamed out to peers and took in from them.
    streamed_out_bytes: u64,
    streamed_in_bytes: u64,
    /// Time its JVM's pauses stopped the world, each counted in full when
    /// it starts (zero on a reactor).
    gc_paused: SimDuration,
    /// Its shards' engine counters.
    engine: EngineCounters,
}

impl NodeSnapshot {
    /// What was counted since `before` (an earlier tick's snapshot).
    fn since(self, before: NodeSnapshot) -> NodeSnapshot {
        debug_assert!(
            self.disk_busy >= before.disk_busy,
            "device time runs backwards"
        );
        NodeSnapshot {
            disk_busy: self.disk_busy - before.disk_busy,
            nic_sent_bytes: self.nic_sent_bytes - before.nic_sent_bytes,
            nic_received_bytes: self.nic_received_bytes - before.nic_received_bytes,
            disk_read_bytes: self.disk_read_bytes - before.disk_read_bytes,
            disk_written_bytes: self.disk_written_bytes - before.disk_written_bytes,
            cache_hits: self.cache_hits - before.cache_hits,
            cache_lookups: self.cache_lookups - before.cache_lookups,
            streamed_out_bytes: self.streamed_out_bytes - before.streamed_out_bytes,
            streamed_in_bytes: self.streamed_in_bytes - before.streamed_in_bytes,
            gc_paused: self.gc_paused - before.gc_paused,
            engine: self.engine.since(before.engine),
        }
    }
}

impl Simulation {
    pub(super) fn interval_tick(&mut self, now: SimTime) -> Vec<String> {
        self.absorb_op_deltas();
        let interval_start = self.last_tick;
        let length = (now - self.last_tick).as_secs_f64();
        self.last_tick = now;
        let lines = self.load_interval_lines(interval_start, now);
        let ops: Vec<OpInterval> = self
            .ops
            .iter_mut()
            .map(|ops| {
                let (count, p99_ms) = ops.take_interval();
                OpInterval {
                    length_s: length,
                    count,
                    p99_ms,
                }
            })
            .collect();
        let shards_per_node = self.simulated_shards as usize;
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for (node, hardware) in self.nodes.iter_mut().enumerate() {
            let shards = &mut self.shards[node * shards_per_node..(node + 1) * shards_per_node];
            let mut interval = NodeInterval {
                length_s: length,
                shards: shards_per_node,
                ..NodeInterval::default()
            };
            let mut snapshot = NodeSnapshot::default();
            let counters = &mut snapshot.engine;
            let engine = &self.engines[node];
            for (shard, engine_shard) in shards.iter_mut().zip(engine.shards()) {
                let (out, into) = engine_shard.streamed_bytes();
                snapshot.streamed_out_bytes += out;
                snapshot.streamed_in_bytes += into;
                let stats = engine_shard.stats();
                interval.memtable_bytes += stats.memtable_bytes;
                interval.sstables += stats.sstable_count;
                interval.compactions += stats.active_compactions;
                interval.compaction_backlog += stats.compaction_backlog;
                interval.compaction_shares += stats.compaction_shares;
                interval.virtual_dirty_bytes += stats.virtual_dirty_bytes;
                interval.flush_shares += stats.flush_shares;
                snapshot.cache_hits += stats.cache_hits;
                counters.flushes += stats.flushes_completed;
                counters.bytes_compacted += stats.bytes_compacted;
                counters.write_throttled =
                    counters.write_throttled + engine_shard.write_throttled_time(now);
                snapshot.cache_lookups += stats.cache_hits + stats.cache_misses;
                counters.reads_repaired += stats.digest_mismatches;
                counters.background_repairs += stats.background_read_repairs;
                counters.rows_repaired += stats.read_repairs;
                if let Some(hints) = engine_shard.hint_stats() {
                    counters.hints_written += hints.stats.written;
                    counters.hints_replayed += hints.stats.replayed;
                    interval.hints_pending += hints.pending;
                }
                if let ShardCpu::Jvm { node, .. } = &shard.cpu {
                    snapshot.gc_paused = snapshot.gc_paused + node.gc_stats().all().total;
                }
                let (busy, cores) = shard.cpu.busy(now);
                let shard_busy_s = (busy - shard.cpu_busy_at_last_tick).as_secs_f64();
                interval.cpu_cores += cores;
                interval.cpu_busy_s += shard_busy_s;
                let compaction_price = shard.time_spent.cpu
                    [engine::CpuWork::CompactionMerge { bytes: 0 }.index()]
                .price_ns;
                interval.compaction_cpu_s +=
                    (compaction_price - shard.compaction_price_at_last_tick) as f64
                        / NANOS_PER_SECOND as f64;
                shard.compaction_price_at_last_tick = compaction_price;
                interval.hottest_shard_utilisation = interval
                    .hottest_shard_utilisation
                    .max(shard_busy_s / (length * f64::from(cores.max(1))));
                shard.cpu_busy_at_last_tick = busy;
            }
            snapshot.disk_busy = hardware.device.busy_time(now);
            (snapshot.nic_sent_bytes, snapshot.nic_received_bytes) =
                (hardware.nic.bytes_sent(), hardware.nic.bytes_received());
            (snapshot.disk_read_bytes, snapshot.disk_written_bytes) =
                hardware.device.bytes_transferred();
            let since = snapshot.since(std::mem::replace(&mut hardware.at_last_tick, snapshot));
            interval.disk_busy_s = since.disk_busy.as_secs_f64();
            interval.gc_pause_s = since.gc_paused.as_secs_f64();
            interval.nic_sent_bytes = since.nic_sent_bytes;
            interval.nic_received_bytes = since.nic_received_bytes;
            interval.disk_read_bytes = since.disk_read_bytes;
            interval.disk_written_bytes = since.disk_written_bytes;
            let counted = since.engine;
            interval.flushes = counted.flushes;
            interval.compacted_bytes = counted.bytes_compacted;
            interval.write_throttled_s = counted.write_throttled.as_secs_f64();
            interval.cache_hits = since.cache_hits;
            interval.cache_lookups = since.cache_lookups;
            [interval.server_read_p99_ms, interval.server_write_p99_ms] = self.server[node]
                .take_interval_p99_ms(now > SimTime::ZERO + self.plan.server_totals_from);
            interval.stream_sent_bytes = since.streamed_out_bytes;
            interval.stream_received_bytes = since.streamed_in_bytes;
            let EngineCounters {
                reads_repaired: reads,
                background_repairs: background,
                rows_repaired: rows,
                hints_written: written,
                hints_replayed: replayed,
                ..
            } = counted;
            interval.read_repairs = rows;
            interval.hints_written = written;
            interval.hints_replayed = replayed;
            if reads > 0 {
                self.event_log.record(
                    now,
                    What::ReadRepairs {
                        node: node as u32,
                        reads,
                        background,
                        rows,
                    },
                );
            }
            if written + replayed > 0 {
                self.event_log.record(
                    now,
                    What::Hints {
                        node: node as u32,
                        written,
                        replayed,
                        pending: interval.hints_pending,
                    },
                );
            }
            nodes.push(interval);
        }
        // Sampled runs: the whole node's counts, bytes and rates are n/k
        // times the simulated shards' (the table says which columns).
        let clients = ClientInterval {
            length_s: length,
            stalled_process_s: self.take_stalled_time(now).as_secs_f64(),
        };
        self.timeseries.push(
            now.as_secs_f64(),
            &ops,
            &nodes,
            &clients,
            self.plan.cluster.sampling_scale(),
        );
        if now < self.end_time().unwrap_or(SimTime::MAX) {
            self.kernel
                .schedule_at(now + self.plan.interval, Event::IntervalTick);
        }
        lines
    }

    /// cassandra-stress interval lines for every load running in the
    /// interval that ends `now` (a header first for loads that just
    /// started), and their interval histograms kept for the hlog files.
    pub(super) fn load_interval_lines(
        &mut self,
        interval_start: SimTime,
        now: SimTime,
    ) -> Vec<String> {
        let mut lines = Vec::new();
        let length = now - interval_start;
        // Sampled runs report counts and rates scaled up to the cluster.
        let scale = self.plan.cluster.sampling_scale();
        let scaled = |value: u64| (value as f64 * scale).round() as u64;
        let per_second = |value: u64| value as f64 * scale / length.as_secs_f64();
        // `err<` loads whose rate became certain enough this interval.
        let mut certain = Vec::new();
        for (index, load) in self.loads.iter_mut().enumerate() {
            let Some(started_at) = load.started_at else {
                continue;
            };
            let active = !load.finished || load.ops.iter().any(|ops| ops.interval_count > 0);
            if !active {
                lines.append(&mut load.trailer);
                continue;
            }
            if load.header_pending {
                load.header_pending = false;
                let plan = &self.plan.loads[index];
                if let Some(step) = &plan.search {
                    if step.step == 0 {
                        lines.push("Thread count was not specified".into());
                        if plan.stop.target_uncertainty() >= 0.0 {
                            lines.push("WARNING: uncertainty mode (err<) results in uneven workload between thread runs, so should be used for high level analysis only".into());
                        }
                    }
                    lines.push(format!("Running with {} threadCount", step.threads));
                }
                lines.push(format!("Running load `{}`: {}", plan.name, plan.command));
                lines.push(crate::report::STRESS_INTERVAL_HEADER.to_string());
            }
            let elapsed = now.saturating_since(started_at);
            // `-reporting` (c-s 4.0+, StressMetrics.recordInterval): an
            // interval with operations is an output line; the total line
            // prints on every `output_every`-th, the header again after
            // every `header_every`-th. Without it, every interval's.
            let print = load.reporting_lines.after_interval(
                self.plan.loads[index].reporting,
                load.ops.iter().any(|ops| ops.interval_count > 0),
            );
            let (total_printed, header_again) = (print.total, print.header_again);
            // c-s adds a "total" line over every op type of a mixed load.
            let total_line = (load.ops.len() > 1 && total_printed).then(|| {
                let mut merged = load.ops[0].interval.clone();
                for ops in &load.ops[1..] {
                    merged
                        .add(&ops.interval)
                        .expect("histograms of one shape merge");
                }
                let total_ops: u64 = load.ops.iter().map(|ops| ops.count).sum();
                let interval_ops: u64 = load.ops.iter().map(|ops| ops.interval_count).sum();
                let interval_partitions: u64 =
                    load.ops.iter().map(|ops| ops.interval_partitions).sum();
                let interval_rows: u64 = load.ops.iter().map(|ops| ops.interval_rows).sum();
                let interval_errors: u64 = load.ops.iter().map(|ops| ops.interval_errors).sum();
                crate::report::stress_interval_line(
                    "total",
                    scaled(total_ops),
                    crate::report::IntervalRates {
                        ops: per_second(interval_ops),
                        partitions: per_second(interval_partitions),
                        rows: per_second(interval_rows),
                    },
                    &LatencySummary::of(&merged),
                    elapsed,
                    scaled(interval_errors),
                )
            });
            let mut interval_rows = 0;
            for (op, ops) in load.ops.iter_mut().enumerate() {
                let total_before = ops.count - ops.interval_count;
                let report = ops.take_interval_report(&mut self.serializer);
                interval_rows += report.rows;
                let single = load.kinds.len() == 1;
                let label = if single {
                    "total".to_string()
                } else {
                    load.kinds[op].name().to_uppercase()
                };
                if !single || total_printed {
                    lines.push(crate::report::stress_interval_line(
                        &label,
                        scaled(total_before + report.count),
                        crate::report::IntervalRates {
                            ops: per_second(report.count),
                            partitions: per_second(report.partitions),
                            rows: per_second(report.rows),
                        },
                        &report.latency,
                        elapsed,
                        scaled(report.errors),
                    ));
                }
                load.intervals[op].push(SerializedInterval {
                    start: interval_start,
                    length,
                    histogram: report.histogram,
                });
            }
            lines.extend(total_line);
            if header_again {
                lines.push(String::new());
                lines.push(crate::report::STRESS_INTERVAL_HEADER.to_string());
            }
            if let StopPlan::Uncertainty { target, min, max } = self.plan.loads[index].stop {
                if !load.certain && !load.finished {
                    // c-s measures from the load's start, not the tick's.
                    let measured = now - interval_start.max(started_at);
                    if measured > SimDuration::ZERO {
                        load.uncertainty
                            .update(interval_rows as f64 / measured.as_secs_f64());
                    }
                    if load.uncertainty.converged(target, min, max) {
                        load.certain = true;
                        certain.push(index as u32);
                    }
                }
            }
            if load.finished {
                lines.append(&mut load.trailer);
            }
        }
        // Their processes take no new operation; those in flight end.
        for load in certain {
            for process in self
                .processes
                .iter_mut()
                .filter(|process| process.load == load)
            {
                process.stop_at = Some(now);
            }
        }
        lines
    }
}
