//! The real node's background work, from REAL.md's calibration phases K1
//! (a major compaction of P1's rows) and F1 (the flush of C1's memtable):
//! what a compaction and a flush cost its CPU. The `cassandra-5.0`
//! preset's `compaction_ns_per_byte` and `flush_ns_per_row`
//! (`models::cost`) are this fit, and `twin validate --real DIR
//! --fit-work` prints it from a stored measurement so anyone can redo it.
//!
//! Each phase is a folder `repeat-<n>/<K1|F1|K2>/` that `deploy/real/
//! cassandra.sh work` wrote: every server thread's CPU ticks before and
//! after the nodetool command (`threads-before.tsv`, `threads-after.tsv`:
//! id, ticks of 1/100 s, name), since K2's measurement the times each was
//! put on a core (`runs-*.tsv`, the same layout), and the node's log
//! lines meanwhile (`system.log`). K2 (REAL.md, "K2: compaction on a busy
//! core"), K1's compaction while C4's writes run, is printed beside K1
//! where a measurement has it; no price is fitted to it.
//!
//! - **Compaction** (K1): the `CompactionExecutor` threads' CPU over the
//!   partitions the log's `Compacted` line merged, and over its input
//!   bytes. The twin's price is per byte of *its* SSTables, whose rows
//!   are not the real node's size (the twin's c-s default row is
//!   [`twin_default_row_bytes`], the real node's ~213 B): so the fit is
//!   the measured CPU per partition over the twin's bytes per partition,
//!   and the twin's compaction of the same rows costs what the real one
//!   did.
//! - **Flush** (F1): the flush threads' CPU (`MemtableFlushWriter`,
//!   `PerDiskMemtableFlushWriter`, `MemtablePostFlush`, `Memtable
//!   ReclaimMemory`) over the partitions of the log's `Writing Memtable`
//!   lines for the table; less the twin's per-byte flush price \[E\] on
//!   the twin's bytes for those rows, the rest is the price per row.
//!
//! - **The event loop** (C1 of the same measurement, its load run by
//!   `twin real`, which records the server's threads): the
//!   `epollEventLoopGroup` thread's CPU over the writes answered. The
//!   twin's loop pays a wake-up each time it finds itself parked and its
//!   own work per request (`models::jvm::CASSANDRA_5_0_EVENT_LOOP_WORK`);
//!   the work is set so that the twin's C1 loop costs this (the twin's
//!   `summary.json` `stage_cpu_s`).
//!
//! **One day's machine against another's.** The preset's other prices are
//! fitted to the scored measurement (`validation/real/2026-11-28`), and
//! the machine (a KVM guest) ran the same C1 about a third dearer on the
//! day of this one (after P2 as in the scored protocol too:
//! `validation/real/work/2026-11-29-c1`), while the phases that keep the
//! core busy did not move (P1, a populate at full speed: 100 against 96
//! us a write). What grew is what a core that idles between requests
//! pays (wake-ups, timers: a guest's exits), so the loop's C1 figure,
//! mostly wake-ups, is carried over to the scored day by the ratio of
//! C1's CPU per write on the two days (the whole phase, medians), and K1
//! and F1, which run flat out on an idle node, are taken as measured. A
//! scored measurement that recorded its own threads (2026-11-29 on) gives
//! the loop's figure itself, and nothing is carried over.
//!
//! Medians over the repeats, as everywhere on the real scorecard. What the
//! fit leaves out: the JIT compiling the compaction path (K1's first run
//! in a JVM: the `C2 CompilerThread`s' CPU, printed) and the garbage the
//! work makes (`GC Thread`s), neither of which the twin charges to a
//! compaction.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::real::{median, MeasurementError};

/// The table the c-s loads write (`keyspace1.standard1`).
const TABLE: &str = "standard1";

/// The twin's SSTable bytes for one of c-s's default rows (five 34-byte
/// columns): the 8-byte key the twin's rows carry, the values and
/// `engine::config::SSTABLE_ROW_OVERHEAD_BYTES`.
pub fn twin_default_row_bytes() -> u64 {
    use models::cassandra_stress::{DEFAULT_COLUMN_COUNT, DEFAULT_COLUMN_SIZE};
    8 + DEFAULT_COLUMN_COUNT * DEFAULT_COLUMN_SIZE + engine::config::SSTABLE_ROW_OVERHEAD_BYTES
}

/// One work phase of one repeat.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkPhase {
    /// Its repeat.
    pub repeat: u32,
    /// CPU seconds each thread group spent over it (the thread's name
    /// without its number).
    pub cpu_s: BTreeMap<String, f64>,
    /// The node's log lines over it.
    pub log: String,
    /// The times each thread group was put on a core over it
    /// (`runs-before.tsv` / `runs-after.tsv`, recorded since K2's
    /// measurement; empty before).
    pub runs: BTreeMap<String, f64>,
}

impl WorkPhase {
    /// CPU seconds of the thread groups `is_group` picks.
    fn cpu_of(&self, is_group: impl Fn(&str) -> bool) -> f64 {
        self.cpu_s
            .iter()
            .filter(|(group, _)| is_group(group))
            .map(|(_, s)| s)
            .sum()
    }
}

/// What one K1 compaction did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CompactionFacts {
    /// Its repeat.
    pub repeat: u32,
    /// CPU seconds of the compaction threads.
    pub cpu_s: f64,
    /// Of the JIT's compiler threads meanwhile.
    pub jit_cpu_s: f64,
    /// Of the GC threads meanwhile.
    pub gc_cpu_s: f64,
    /// Partitions merged (the `Compacted` lines' `total partitions`).
    pub partitions: u64,
    /// Input bytes (their `MiB to` figures).
    pub input_bytes: f64,
    /// The times the compaction threads were put on a core, where
    /// recorded.
    pub runs: Option<f64>,
}

/// The diagnostic compactions beside K1 (REAL.md, named before their
/// measurements), and what each is.
pub const BUSY_PHASES: [(&str, &str); 3] = [
    (
        "K2",
        "K1's compaction of what P1 and C1 left while C4's writes run (10,000/s)",
    ),
    (
        "K3",
        "K1's compaction of what P1 and C1 left while S1's writes saturate the core (200 threads)",
    ),
    (
        "K4",
        "a background size-tiered compaction of four fresh flushes of 470,000 partitions, the node idle",
    ),
];

/// One diagnostic phase of [`BUSY_PHASES`], per repeat.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BusyCompaction {
    /// Its id.
    pub phase: &'static str,
    /// What it is.
    pub load: &'static str,
    /// Per repeat.
    pub compactions: Vec<CompactionFacts>,
    /// CPU per partition, the median, microseconds.
    pub us_per_partition: f64,
}

/// What one F1 flush did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FlushFacts {
    /// Its repeat.
    pub repeat: u32,
    /// CPU seconds of the flush threads.
    pub cpu_s: f64,
    /// Partitions flushed (the `Writing Memtable` lines' `ops`).
    pub partitions: u64,
    /// Bytes of `Data.db` written (the `Completed flushing` lines).
    pub data_bytes: f64,
}

/// The fit, as `--fit-work` prints it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkFit {
    /// C1's CPU per write over the whole phase, the median: this
    /// measurement's and the scored one's, microseconds.
    pub c1_us_per_write: (f64, f64),
    /// The scored day's over this one's: what the loop's figure is scaled
    /// by.
    pub day_scale: f64,
    /// C1's event loop CPU per write, the median, microseconds (this day).
    pub c1_loop_us_per_write: f64,
    /// The same on the scored day (shown beside the fit; the loop's prices come from its runs, `crate::real_runs`).
    pub loop_target_us: f64,
    /// Whether the scored measurement recorded its C1 loop's CPU itself
    /// (then `loop_target_us` is its median) rather than it being
    /// carried over by `day_scale`.
    pub loop_target_measured: bool,
    /// K1 per repeat.
    pub compactions: Vec<CompactionFacts>,
    /// K1's compaction on a busy core, each diagnostic phase the
    /// measurement has ([`BUSY_PHASES`]).
    pub busy: Vec<BusyCompaction>,
    /// F1 per repeat.
    pub flushes: Vec<FlushFacts>,
    /// Compaction CPU per partition, the median, microseconds.
    pub compaction_us_per_partition: f64,
    /// Compaction CPU per input byte of the real node's SSTables, the
    /// median, nanoseconds.
    pub compaction_ns_per_real_byte: f64,
    /// The preset's price: per partition over the twin's bytes for it.
    pub compaction_ns_per_byte: f64,
    /// Flush CPU per partition, the median, microseconds.
    pub flush_us_per_partition: f64,
    /// The preset's price per row, the per-byte part (`flush_ns_per_byte`)
    /// taken off, nanoseconds.
    pub flush_ns_per_row: f64,
    /// The per-byte part it kept.
    pub flush_ns_per_byte: f64,
    /// The twin's bytes per partition.
    pub twin_row_bytes: u64,
}

/// Reads `repeat-<n>/<phase>/` of a measurement for one work phase; an
/// error if no repeat has it.
pub fn load_phase(dir: &Path, phase: &str) -> Result<Vec<WorkPhase>, MeasurementError> {
    let phases = load_phase_if_any(dir, phase)?;
    if phases.is_empty() {
        return Err(MeasurementError::at(
            dir,
            format!("no repeat-<n>/{phase}/ (measure.sh --phases 'P1 K1 C1 F1' writes K1 and F1)"),
        ));
    }
    Ok(phases)
}

/// Reads `repeat-<n>/<phase>/` of a measurement for one work phase, in
/// the repeats that have it.
fn load_phase_if_any(dir: &Path, phase: &str) -> Result<Vec<WorkPhase>, MeasurementError> {
    let entries = std::fs::read_dir(dir).map_err(|error| MeasurementError::at(dir, error))?;
    let mut phases = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|error| MeasurementError::at(dir, error))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(repeat) = name
            .strip_prefix("repeat-")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let folder = entry.path().join(phase);
        if !folder.is_dir() {
            continue;
        }
        let read = |file: &str| {
            let path = folder.join(file);
            std::fs::read_to_string(&path).map_err(|error| MeasurementError::at(&path, error))
        };
        // Each thread group's increase over the phase, from a
        // `<stem>-before.tsv` / `<stem>-after.tsv` pair, counts over
        // `per_unit`.
        let spent = |stem: &str, per_unit: f64| {
            let counts = |file: String| {
                parse_counts(&read(&file)?, per_unit)
                    .map_err(|why| MeasurementError::at(&folder.join(&file), why))
            };
            Ok::<_, MeasurementError>(models::jvm::cpu_by_pool(
                &counts(format!("{stem}-before.tsv"))?,
                &counts(format!("{stem}-after.tsv"))?,
            ))
        };
        // CPU ticks of 1/100 s; runs on a core where recorded.
        let cpu_s = spent("threads", 100.0)?;
        let runs = if folder.join("runs-before.tsv").is_file() {
            spent("runs", 1.0)?
        } else {
            BTreeMap::new()
        };
        phases.push(WorkPhase {
            repeat,
            cpu_s,
            log: read("system.log")?,
            runs,
        });
    }
    phases.sort_by_key(|phase| phase.repeat);
    Ok(phases)
}

/// `threads-*.tsv` (id, CPU ticks of 1/100 s, name): thread id -> (name,
/// CPU seconds), as [`models::jvm::cpu_by_pool`] takes them.
#[cfg(test)]
fn parse_threads(text: &str) -> Result<BTreeMap<u64, (String, f64)>, String> {
    parse_counts(text, 100.0)
}

/// A `threads-*.tsv` or `runs-*.tsv` file (id, a count, name): thread id
/// -> (name, the count over `per_unit`).
fn parse_counts(text: &str, per_unit: f64) -> Result<BTreeMap<u64, (String, f64)>, String> {
    let mut threads = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let mut fields = line.splitn(3, '\t');
        let (Some(tid), Some(count), Some(name)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(format!("line {}: not `id<TAB>count<TAB>name`", number + 1));
        };
        let tid = tid
            .parse::<u64>()
            .map_err(|_| format!("line {}: thread id `{tid}`", number + 1))?;
        let count = count
            .parse::<f64>()
            .map_err(|_| format!("line {}: count `{count}`", number + 1))?;
        threads.insert(tid, (name.to_string(), count / per_unit));
    }
    Ok(threads)
}

/// A size as Cassandra logs it (`203.080MiB`, `85.545KiB`, `512B`), bytes.
fn log_size(text: &str) -> Option<f64> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let value: f64 = digits.replace(',', "").parse().ok()?;
    let unit = &text[digits.len()..];
    let scale = match unit {
        "B" | "bytes" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(value * scale)
}

/// The compactions of the table in a log: (partitions, input bytes)
/// summed over its `Compacted (...) N sstables to [...standard1-...]
/// ... X MiB to Y MiB ... N total partitions merged to M` lines.
fn compactions_in(log: &str) -> Option<(u64, f64)> {
    let mut found = None;
    for line in log.lines().filter(|line| line.contains("Compacted (")) {
        if !line.contains(&format!("/{TABLE}-")) {
            continue;
        }
        let before_to = line.split(" to ").find_map(|part| {
            let size = part.rsplit(". ").next()?.trim();
            log_size(size)
        })?;
        let partitions = line
            .split(" total partitions")
            .next()?
            .rsplit(' ')
            .next()?
            .replace(',', "")
            .parse::<u64>()
            .ok()?;
        let (p, b) = found.get_or_insert((0, 0.0));
        *p += partitions;
        *b += before_to;
    }
    found
}

/// The flushes of the table in a log: (partitions, Data.db bytes).
fn flushes_in(log: &str) -> Option<(u64, f64)> {
    let mut partitions = 0;
    let mut bytes = 0.0;
    let mut any = false;
    for line in log.lines() {
        if line.contains(&format!("Writing Memtable-{TABLE}@")) {
            let ops = line.split(" ops").next()?.rsplit(' ').next()?;
            partitions += ops.replace(',', "").parse::<u64>().ok()?;
            any = true;
        } else if line.contains("Completed flushing") && line.contains(&format!("/{TABLE}-")) {
            let size = line.split(" (").nth(1)?.split(')').next()?;
            bytes += log_size(size)?;
        }
    }
    any.then_some((partitions, bytes))
}

/// C1's whole-phase CPU per write in a measurement (each repeat), and
/// its event loop's (where the threads were recorded).
fn c1_cpu(dir: &Path) -> Result<(Vec<f64>, Vec<f64>), MeasurementError> {
    let measurement = crate::real::load(dir)?;
    let (mut all, mut looped) = (Vec::new(), Vec::new());
    for phases in measurement.repeats.values() {
        let Some(c1) = phases.get("C1") else {
            continue;
        };
        let server = &c1.summary["load_server"]["C1"];
        let writes = c1.summary["ops"]["write"]["count"].as_f64().unwrap_or(0.0);
        if let Some(us) = server["cpu_us_per_op"].as_f64() {
            all.push(us);
        }
        if let Some(threads) = server["thread_cpu_seconds"].as_object() {
            let loops: Vec<f64> = threads
                .iter()
                .filter(|(pool, _)| models::jvm::is_event_loop_pool(pool))
                .filter_map(|(_, seconds)| seconds.as_f64())
                .collect();
            if !loops.is_empty() {
                looped.push(loops.iter().sum::<f64>() * 1e6 / writes.max(1.0));
            }
        }
    }
    if all.is_empty() {
        return Err(MeasurementError::at(
            dir,
            "no C1 with the server's CPU per operation",
        ));
    }
    Ok((all, looped))
}

/// The fit from a measurement holding K1, C1 (its threads recorded) and
/// F1, carried over to the scored measurement `scored` by C1.
pub fn fit(dir: &Path, scored: &Path) -> Result<WorkFit, MeasurementError> {
    // The work phases first: a measurement without them is the wrong one.
    let compaction_phases = load_phase(dir, "K1")?;
    let flush_phases = load_phase(dir, "F1")?;
    let (here, loops) = c1_cpu(dir)?;
    if loops.is_empty() {
        return Err(MeasurementError::at(
            dir,
            "C1 has no server threads' CPU (twin real records them since 2026-11-29)",
        ));
    }
    let (there, there_loops) = c1_cpu(scored)?;
    let c1_us_per_write = (median(&here), median(&there));
    let day_scale = c1_us_per_write.1 / c1_us_per_write.0;
    let c1_loop_us_per_write = median(&loops);
    // A scored measurement that recorded its own threads (2026-11-29 on)
    // gives the loop's figure itself; an older one takes this day's,
    // carried over by C1.
    let loop_target_measured = !there_loops.is_empty();
    let loop_target_us = if loop_target_measured {
        median(&there_loops)
    } else {
        c1_loop_us_per_write * day_scale
    };
    let flush_ns_per_byte = models::cost::CostTable::cassandra_3_11().flush_ns_per_byte;
    let twin_row_bytes = twin_default_row_bytes();
    let compactions = compaction_facts(dir, "K1", compaction_phases)?;
    let mut busy = Vec::new();
    for (phase, load) in BUSY_PHASES {
        let compactions = compaction_facts(dir, phase, load_phase_if_any(dir, phase)?)?;
        if compactions.is_empty() {
            continue;
        }
        let us_per_partition = median(
            &compactions
                .iter()
                .map(|c| c.cpu_s * 1e6 / c.partitions.max(1) as f64)
                .collect::<Vec<_>>(),
        );
        busy.push(BusyCompaction {
            phase,
            load,
            compactions,
            us_per_partition,
        });
    }
    let mut flushes = Vec::new();
    for phase in flush_phases {
        let (partitions, data_bytes) = flushes_in(&phase.log).ok_or_else(|| {
            MeasurementError::at(
                &dir.join(format!("repeat-{}/F1/system.log", phase.repeat)),
                format!("no `Writing Memtable-{TABLE}` line"),
            )
        })?;
        flushes.push(FlushFacts {
            repeat: phase.repeat,
            cpu_s: phase.cpu_of(|group| group.contains("Memtable")),
            partitions,
            data_bytes,
        });
    }
    let per_partition_us = |cpu_s: f64, partitions: u64| cpu_s * 1e6 / partitions.max(1) as f64;
    let compaction_us = median(
        &compactions
            .iter()
            .map(|c| per_partition_us(c.cpu_s, c.partitions))
            .collect::<Vec<_>>(),
    );
    let compaction_real = median(
        &compactions
            .iter()
            .map(|c| c.cpu_s * 1e9 / c.input_bytes.max(1.0))
            .collect::<Vec<_>>(),
    );
    let flush_us = median(
        &flushes
            .iter()
            .map(|f| per_partition_us(f.cpu_s, f.partitions))
            .collect::<Vec<_>>(),
    );
    Ok(WorkFit {
        c1_us_per_write,
        day_scale,
        c1_loop_us_per_write,
        loop_target_us,
        loop_target_measured,
        compaction_us_per_partition: compaction_us,
        compaction_ns_per_real_byte: compaction_real,
        compaction_ns_per_byte: compaction_us * 1e3 / twin_row_bytes as f64,
        flush_us_per_partition: flush_us,
        flush_ns_per_row: flush_us * 1e3 - flush_ns_per_byte * twin_row_bytes as f64,
        flush_ns_per_byte,
        twin_row_bytes,
        compactions,
        busy,
        flushes,
    })
}

/// What each repeat's compaction of work phase `id` did, from its log
/// and its threads.
fn compaction_facts(
    dir: &Path,
    id: &str,
    phases: Vec<WorkPhase>,
) -> Result<Vec<CompactionFacts>, MeasurementError> {
    let mut compactions = Vec::new();
    for phase in phases {
        let (partitions, input_bytes) = compactions_in(&phase.log).ok_or_else(|| {
            MeasurementError::at(
                &dir.join(format!("repeat-{}/{id}/system.log", phase.repeat)),
                format!("no `Compacted` line for {TABLE} with its sizes and partitions"),
            )
        })?;
        let runs: Vec<f64> = phase
            .runs
            .iter()
            .filter(|(group, _)| models::jvm::is_compaction_pool(group))
            .map(|(_, runs)| *runs)
            .collect();
        compactions.push(CompactionFacts {
            repeat: phase.repeat,
            cpu_s: phase.cpu_of(models::jvm::is_compaction_pool),
            jit_cpu_s: phase.cpu_of(models::jvm::is_compiler_pool),
            gc_cpu_s: phase.cpu_of(|group| group.starts_with("GC Thread")),
            partitions,
            input_bytes,
            runs: (!runs.is_empty()).then(|| runs.iter().sum()),
        });
    }
    Ok(compactions)
}

/// The fit as `twin validate --real --fit-work` prints it.
pub fn fit_text(fit: &WorkFit) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "C1, writes at 5,000/s: {:.1} CPU us a write here, {:.1} on the scored day: its event loop's figure is carried over by {:.3}",
        fit.c1_us_per_write.0, fit.c1_us_per_write.1, fit.day_scale
    );
    let _ = writeln!(
        out,
        "  its event loop (epollEventLoopGroup): {:.2} us a write, {:.2} on the scored day ({}); the loop's prices are fitted to its runs since 2026-11-30 (--fit-runs)",
        fit.c1_loop_us_per_write,
        fit.loop_target_us,
        if fit.loop_target_measured {
            "measured there"
        } else {
            "carried over"
        }
    );
    let _ = writeln!(
        out,
        "K1, a major compaction of P1's rows (CompactionExecutor threads' CPU):"
    );
    for c in &fit.compactions {
        let _ = writeln!(
            out,
            "  repeat {}: {:.2} CPU s for {} partitions, {:.1} MiB in: {:.2} us a partition, {:.1} ns a byte (meanwhile the JIT {:.2} s, GC threads {:.2} s)",
            c.repeat,
            c.cpu_s,
            c.partitions,
            c.input_bytes / 1_048_576.0,
            c.cpu_s * 1e6 / c.partitions.max(1) as f64,
            c.cpu_s * 1e9 / c.input_bytes.max(1.0),
            c.jit_cpu_s,
            c.gc_cpu_s,
        );
    }
    let _ = writeln!(
        out,
        "  median {:.3} us a partition ({:.2} ns a byte of the node's SSTables); over the twin's {} B a row: compaction_ns_per_byte = {:.2}",
        fit.compaction_us_per_partition,
        fit.compaction_ns_per_real_byte,
        fit.twin_row_bytes,
        fit.compaction_ns_per_byte
    );
    for busy in &fit.busy {
        let _ = writeln!(
            out,
            "{}, {} (a diagnostic; not used by the preset):",
            busy.phase, busy.load
        );
        for c in &busy.compactions {
            let runs = c.runs.map_or(String::new(), |runs| {
                format!(
                    ", {runs:.0} runs of the compaction threads ({:.0} us a run)",
                    c.cpu_s * 1e6 / runs.max(1.0)
                )
            });
            let _ = writeln!(
                out,
                "  repeat {}: {:.2} CPU s for {} partitions: {:.2} us a partition{runs}",
                c.repeat,
                c.cpu_s,
                c.partitions,
                c.cpu_s * 1e6 / c.partitions.max(1) as f64,
            );
        }
        let _ = writeln!(
            out,
            "  median {:.3} us a partition: {:.2} x K1's",
            busy.us_per_partition,
            busy.us_per_partition / fit.compaction_us_per_partition
        );
    }
    let _ = writeln!(
        out,
        "F1, the flush of C1's memtable (MemtableFlushWriter, PerDiskMemtableFlushWriter, ... threads' CPU):"
    );
    for f in &fit.flushes {
        let _ = writeln!(
            out,
            "  repeat {}: {:.2} CPU s for {} partitions, {:.1} MiB of Data.db: {:.2} us a partition",
            f.repeat,
            f.cpu_s,
            f.partitions,
            f.data_bytes / 1_048_576.0,
            f.cpu_s * 1e6 / f.partitions.max(1) as f64,
        );
    }
    let _ = writeln!(
        out,
        "  median {:.3} us a partition; less {:.1} ns a byte [E] over the twin's {} B: flush_ns_per_row = {:.0}",
        fit.flush_us_per_partition, fit.flush_ns_per_byte, fit.twin_row_bytes, fit.flush_ns_per_row
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMPACTED: &str = "INFO  [CompactionExecutor:4] 2026-11-29 19:28:59,444 CompactionTask.java:274 - Compacted (1bc4b0a0-ec2b) 3 sstables to [/d/keyspace1/standard1-ceef/nb-4-big,] to level=0.  203.080MiB to 203.131MiB (~100% of original) in 7,533ms.  Read Throughput = 26.956MiB/s, Write Throughput = 26.962MiB/s, Row Throughput = ~250,000/s.  1,000,000 total partitions merged to 1,000,000.  Partition merge counts were {1:1000000, }. Time spent writing keys = 7,372ms";
    const WRITING: &str = "INFO  [PerDiskMemtableFlushWriter_0:5] 2026-11-29 19:30:05,354 Flushing.java:153 - Writing Memtable-standard1@682290120(85.545MiB serialized bytes, 300000 ops, 318.146MiB (21%) on-heap, 0B (0%) off-heap), flushed range = [min(-9223372036854775808), max(9223372036854775807))";
    const COMPLETED: &str = "INFO  [PerDiskMemtableFlushWriter_0:5] 2026-11-29 19:30:06,778 Flushing.java:179 - Completed flushing /d/keyspace1/standard1-ceef/nb-5-big-Data.db (60.930MiB) for commitlog position CommitLogPosition(segmentId=1795980389859, position=23161766)";

    #[test]
    fn the_log_gives_what_a_compaction_and_a_flush_did() {
        let (partitions, bytes) = compactions_in(COMPACTED).unwrap();
        assert_eq!(partitions, 1_000_000);
        assert!((bytes - 203.080 * 1_048_576.0).abs() < 1.0);
        let other = COMPACTED.replace("/standard1-", "/peers-");
        assert_eq!(compactions_in(&other), None, "another table's compaction");
        let (partitions, bytes) = flushes_in(&format!("{WRITING}\n{COMPLETED}")).unwrap();
        assert_eq!(partitions, 300_000);
        assert!((bytes - 60.930 * 1_048_576.0).abs() < 1.0);
        assert_eq!(
            flushes_in(COMPLETED),
            None,
            "no Writing line: nothing flushed"
        );
        assert_eq!(log_size("512B"), Some(512.0));
        assert_eq!(log_size("2KiB"), Some(2048.0));
        assert_eq!(log_size("2 parsecs"), None);
    }

    #[test]
    fn threads_spend_by_group_and_a_bad_line_is_named() {
        let before = parse_threads("1\t100\tCompactionExecu\n2\t50\tGC Thread#0\n").unwrap();
        let after = parse_threads(
            "1\t450\tCompactionExecu\n2\t60\tGC Thread#0\n3\t20\tGC Thread#1\n4\t0\tmain\n",
        )
        .unwrap();
        let spent = models::jvm::cpu_by_pool(&before, &after);
        assert_eq!(spent.get("CompactionExecu"), Some(&3.5));
        assert!((spent["GC Thread"] - 0.3).abs() < 1e-12);
        assert_eq!(spent.get("main"), None);
        let error = parse_threads("1\tlots\tmain\n").unwrap_err();
        assert!(
            error.contains("line 1") && error.contains("lots"),
            "{error}"
        );
    }

    #[test]
    fn the_stored_measurement_fits_the_presets_prices() {
        let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("real");
        let fit = fit(&real.join("work/2026-11-29"), &real.join("2026-11-28"))
            .expect("the stored K1/F1 measurement");
        assert!(!fit.loop_target_measured, "2026-11-28 has no threads");
        // The newest scored measurement recorded its own C1 loop: the
        // figure the preset's loop work is fitted to (CALIBRATION.md).
        let scored = super::fit(&real.join("work/2026-11-29"), &real.join("2026-11-29")).unwrap();
        assert!(scored.loop_target_measured);
        assert!(
            (scored.loop_target_us - 15.6).abs() < 0.05,
            "{}",
            scored.loop_target_us
        );
        assert_eq!(fit.compactions.len(), 3);
        assert_eq!(fit.flushes.len(), 3);
        let costs = models::cost::CostTable::cassandra_5_0();
        assert!(
            (costs.compaction_ns_per_byte / fit.compaction_ns_per_byte - 1.0).abs() < 0.005,
            "the preset's compaction price is the fit: {} against {}",
            costs.compaction_ns_per_byte,
            fit.compaction_ns_per_byte
        );
        assert!(
            (costs.flush_ns_per_row as f64 - fit.flush_ns_per_row).abs() < 5.0,
            "the preset's flush price per row is the fit: {} against {}",
            costs.flush_ns_per_row,
            fit.flush_ns_per_row
        );
        assert_eq!(costs.flush_ns_per_byte, fit.flush_ns_per_byte);
        assert!(fit.busy.is_empty(), "2026-11-29 ran no K2 or K3");
    }

    /// K2, K3 and K4 (REAL.md, named before their measurements): the
    /// same compaction on a core that C4's writes keep busy costs 1.08
    /// times K1's, its threads put on the core ~53,000 times; on one that
    /// S1's writes saturate, 1.12 times; a background compaction of four
    /// fresh flushes on an idle node, 0.87 times.
    #[test]
    fn neither_a_busy_core_nor_fresh_flushes_make_the_compaction_dearer() {
        let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("real");
        // A work measurement's fit and its one diagnostic phase, `phase`.
        let only = |dir: &str, phase: &str| {
            let fit = fit(&real.join(dir), &real.join("2026-11-30-speed"))
                .unwrap_or_else(|error| panic!("the stored K1/{phase} measurement: {error}"));
            let [busy] = &fit.busy[..] else {
                panic!("{phase} alone: {:?}", fit.busy);
            };
            assert_eq!(busy.phase, phase);
            let busy = busy.clone();
            (fit, busy)
        };
        let (fit, k2) = only("work/2026-11-30-k2", "K2");
        assert_eq!(k2.compactions.len(), 3);
        for busy in &k2.compactions {
            assert_eq!(busy.partitions, 1_300_000, "P1's and C1's rows");
            let runs = busy.runs.expect("K2 records its runs");
            assert!((50_000.0..56_000.0).contains(&runs), "{runs}");
        }
        let ratio = k2.us_per_partition / fit.compaction_us_per_partition;
        assert!((1.07..1.09).contains(&ratio), "{ratio}");
        assert!(fit_text(&fit).contains("1.08 x K1's"));

        // K3: saturated by S1's writes, three flushes meanwhile, runs of
        // ~170 us as L1's: 1.12 times K1's.
        let (fit, k3) = only("work/2026-11-30-k3", "K3");
        let ratio = k3.us_per_partition / fit.compaction_us_per_partition;
        assert!((1.10..1.14).contains(&ratio), "{ratio}");

        // K4: a background compaction of four fresh flushes, idle: 0.87
        // times K1's.
        let (fit, k4) = only("work/2026-11-30-k4", "K4");
        assert!(k4.compactions.iter().all(|c| c.partitions == 1_880_000));
        let ratio = k4.us_per_partition / fit.compaction_us_per_partition;
        assert!((0.85..0.89).contains(&ratio), "{ratio}");
    }
}
