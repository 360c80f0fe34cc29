//! The server's side of a real run, where the server is local or exposes it:
//! - the CPU seconds its process spent, from `/proc/PID/stat` (`utime` +
//!   `stime`, fields 14 and 15, in clock ticks of 1/100 s: Linux's
//!   `USER_HZ` is 100 on every architecture the kernel exports it for),
//!   and each of its threads' from `/proc/PID/task/TID/stat`, summed by
//!   pool ([`ThreadCpu`]);
//! - the stop-the-world pauses of its GC log (`-Xlog:gc*,safepoint` with
//!   the `time` decoration, as `deploy/real/cassandra.sh` starts it): every
//!   G1 `Pause ...` line's wall time and length, and every safepoint that
//!   is not a collection (`safepoint Cleanup`, `safepoint Deoptimize`, ...)
//!   with its time to reach and hold;
//! - Cassandra's own virtual tables over CQL (4.0 and later): the thread
//!   pools' completed and pending tasks (`system_views.thread_pools`), so a
//!   load's flushes (`MemtableFlushWriter`), compactions
//!   (`CompactionExecutor`) and stage tasks come out as deltas, and the
//!   compactions of `system.compaction_history`.
//!
//! None of this is required: against a remote cluster, or Scylla (which has
//! no `system_views.thread_pools`), the columns are left empty and the
//! summary says which sources were missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

/// Linux's `USER_HZ`: the unit of `/proc/PID/stat`'s CPU times.
const TICKS_PER_SECOND: f64 = 100.0;

/// Where the server's own figures come from.
#[derive(Clone, Debug, Default)]
pub struct ServerProbe {
    /// The server's process, for its CPU seconds.
    pub pid: Option<u32>,
    /// Its GC log.
    pub gc_log: Option<PathBuf>,
}

impl ServerProbe {
    /// The probe of a node started by `deploy/real/cassandra.sh`: its
    /// folder holds `pid` and `gc.log`.
    pub fn of_node_dir(dir: &Path) -> Result<ServerProbe, String> {
        let pid_file = dir.join("pid");
        let text = std::fs::read_to_string(&pid_file)
            .map_err(|error| format!("{}: {error}", pid_file.display()))?;
        let pid = text.trim().parse::<u32>().map_err(|_| {
            format!(
                "{}: not a process id: '{}'",
                pid_file.display(),
                text.trim()
            )
        })?;
        let gc_log = dir.join("gc.log");
        Ok(ServerProbe {
            pid: Some(pid),
            gc_log: gc_log.exists().then_some(gc_log),
        })
    }

    /// The server process's CPU seconds so far; `None` without a pid or
    /// once the process is gone.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.pid
            .and_then(|pid| process_cpu_seconds(&format!("/proc/{pid}/stat")))
    }
}

/// CPU seconds (user + system) of the process whose `stat` file this is.
pub fn process_cpu_seconds(stat_path: &str) -> Option<f64> {
    let text = std::fs::read_to_string(stat_path).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces:
    // count fields after its closing parenthesis.
    process_cpu_seconds_of(&text[text.rfind(')')? + 1..])
}

/// CPU seconds of a `stat` line's fields after the command name.
fn process_cpu_seconds_of(rest: &str) -> Option<f64> {
    let (utime, stime) = cpu_ticks_of(rest)?;
    Some((utime + stime) as f64 / TICKS_PER_SECOND)
}

/// `(utime, stime)` in clock ticks from a `stat` line's fields after the
/// command name.
fn cpu_ticks_of(rest: &str) -> Option<(u64, u64)> {
    // After ")" come field 3 (state) onwards: utime is field 14, stime 15.
    let mut fields = rest.split_whitespace().skip(11);
    let utime = fields.next()?.parse().ok()?;
    let stime = fields.next()?.parse().ok()?;
    Some((utime, stime))
}

/// Each thread of a process at one moment: its id, its name (`comm`, at
/// most 15 bytes: Linux truncates what the JVM sets), and its CPU seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadCpu {
    threads: BTreeMap<u64, (String, f64)>,
    /// Each thread's times put on a core so far (`schedstat`'s third
    /// field: its voluntary and involuntary context switches), where the
    /// kernel gives it.
    runs: BTreeMap<u64, u64>,
    /// Each thread's involuntary context switches so far (`status`'s
    /// `nonvoluntary_ctxt_switches`): the runs that began with the thread
    /// preempted rather than parked.
    preemptions: BTreeMap<u64, u64>,
    /// Each thread's CPU in the kernel so far (`stat`'s `stime`), in clock
    /// ticks: system calls, page faults and the interrupts taken while it
    /// ran.
    system_ticks: BTreeMap<u64, u64>,
}

impl ThreadCpu {
    /// The threads of process `pid` now, from `/proc/PID/task/TID/stat`;
    /// `None` once the process is gone. A thread that exits between the
    /// listing and its read is left out.
    pub fn read(pid: u32) -> Option<ThreadCpu> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        let (mut threads, mut runs, mut preemptions, mut system_ticks) = (
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
        );
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(task.path().join("stat")) else {
                continue;
            };
            if let Some(thread) = parse_thread_stat(&text) {
                threads.insert(tid, thread);
            }
            if let Some(ticks) = parse_thread_system_ticks(&text) {
                system_ticks.insert(tid, ticks);
            }
            let schedstat = std::fs::read_to_string(task.path().join("schedstat"));
            if let Some(count) = schedstat.ok().as_deref().and_then(parse_schedstat_runs) {
                runs.insert(tid, count);
            }
            let status = std::fs::read_to_string(task.path().join("status"));
            if let Some(count) = status.ok().as_deref().and_then(parse_status_preemptions) {
                preemptions.insert(tid, count);
            }
        }
        Some(ThreadCpu {
            threads,
            runs,
            preemptions,
            system_ticks,
        })
    }

    /// Times each pool's threads were put on a core since `before`
    /// ([`models::jvm::thread_pool_of`] of each thread's name now; a
    /// thread born since counts whole): the wake-ups and preemptions the
    /// server paid. Empty where the kernel has no `schedstat`.
    pub fn runs_since(&self, before: &ThreadCpu) -> BTreeMap<String, u64> {
        self.counts_since(&self.runs, &before.runs)
    }

    /// Times each pool's threads were preempted since `before` (as
    /// [`ThreadCpu::runs_since`]): of their runs, those that did not
    /// follow a park. Empty where the kernel gives no `status` counts.
    pub fn preemptions_since(&self, before: &ThreadCpu) -> BTreeMap<String, u64> {
        self.counts_since(&self.preemptions, &before.preemptions)
    }

    /// CPU seconds each pool's threads spent in the kernel since `before`
    /// (as [`ThreadCpu::runs_since`]): of [`ThreadCpu::since`], the
    /// system calls, page faults and interrupts.
    pub fn system_since(&self, before: &ThreadCpu) -> BTreeMap<String, f64> {
        self.counts_since(&self.system_ticks, &before.system_ticks)
            .into_iter()
            .map(|(pool, ticks)| (pool, ticks as f64 / TICKS_PER_SECOND))
            .collect()
    }

    /// A per-thread counter's growth since `earlier`, summed by pool of
    /// each thread's name now; pools that did not count are left out.
    fn counts_since(
        &self,
        now: &BTreeMap<u64, u64>,
        earlier: &BTreeMap<u64, u64>,
    ) -> BTreeMap<String, u64> {
        let mut by_pool = BTreeMap::new();
        for (tid, count) in now {
            let Some((name, _)) = self.threads.get(tid) else {
                continue;
            };
            let delta = count.saturating_sub(earlier.get(tid).copied().unwrap_or(0));
            if delta > 0 {
                *by_pool
                    .entry(models::jvm::thread_pool_of(name).to_string())
                    .or_insert(0) += delta;
            }
        }
        by_pool
    }

    /// CPU seconds spent since `before`, by pool
    /// ([`models::jvm::cpu_by_pool`]).
    pub fn since(&self, before: &ThreadCpu) -> BTreeMap<String, f64> {
        models::jvm::cpu_by_pool(&before.threads, &self.threads)
    }
}

/// The times a thread was put on a core, from its `schedstat` line (time
/// on a core in ns, time waiting for one in ns, times run).
fn parse_schedstat_runs(text: &str) -> Option<u64> {
    text.split_whitespace().nth(2)?.parse().ok()
}

/// A thread's involuntary context switches from its `status` file.
fn parse_status_preemptions(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("nonvoluntary_ctxt_switches:"))?
        .trim()
        .parse()
        .ok()
}

/// A thread's CPU ticks in the kernel (`stime`, field 15) from its `stat`
/// line.
fn parse_thread_system_ticks(text: &str) -> Option<u64> {
    cpu_ticks_of(&text[text.rfind(')')? + 1..]).map(|(_, stime)| stime)
}

/// A thread's name and CPU seconds from its `stat` line.
fn parse_thread_stat(text: &str) -> Option<(String, f64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let seconds = process_cpu_seconds_of(&text[close + 1..])?;
    Some((name, seconds))
}

/// The machine's disks' counters (`/proc/diskstats`), summed over the
/// whole disks (`/sys/block` entries other than loop, RAM, zram,
/// device-mapper and md devices, which would count their members' I/O
/// twice): what the page cache did not absorb.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// Reads completed.
    pub reads: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes written.
    pub written_bytes: u64,
}

impl DiskCounters {
    /// This machine's counters now, if `/proc/diskstats` can be read.
    pub fn read() -> Option<DiskCounters> {
        let text = std::fs::read_to_string("/proc/diskstats").ok()?;
        Some(DiskCounters::parse(&text, &|name: &str| {
            Path::new("/sys/block").join(name).exists()
        }))
    }

    /// The counters of `diskstats` text over the devices `is_disk` says
    /// are whole disks (sectors are 512 bytes, whatever the device's).
    pub fn parse(diskstats: &str, is_disk: &dyn Fn(&str) -> bool) -> DiskCounters {
        let mut total = DiskCounters::default();
        for line in diskstats.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some(&name) = fields.get(2) else {
                continue;
            };
            let skipped = ["loop", "ram", "zram", "dm-", "md"]
                .iter()
                .any(|prefix| name.starts_with(prefix));
            if skipped || !is_disk(name) {
                continue;
            }
            let field = |i: usize| {
                fields
                    .get(i)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            total.reads += field(3);
            total.read_bytes += field(5) * 512;
            total.writes += field(7);
            total.written_bytes += field(9) * 512;
        }
        total
    }

    /// What happened between `before` and `self`.
    pub fn since(&self, before: &DiskCounters) -> DiskCounters {
        DiskCounters {
            reads: self.reads.saturating_sub(before.reads),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            writes: self.writes.saturating_sub(before.writes),
            written_bytes: self.written_bytes.saturating_sub(before.written_bytes),
        }
    }
}

/// How many cores process `pid` may run on (`Cpus_allowed_list` of
/// `/proc/PID/status`, as `taskset -c` set it).
pub fn allowed_cores(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))?;
    count_cpu_list(list.trim())
}

/// The number of CPUs in a list such as `0-3,8,10-11`.
fn count_cpu_list(list: &str) -> Option<u32> {
    let mut count = 0;
    for part in list.split(',') {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (u32, u32) = (first.parse().ok()?, last.parse().ok()?);
                count += last.checked_sub(first)? + 1;
            }
            None => {
                part.parse::<u32>().ok()?;
                count += 1;
            }
        }
    }
    Some(count)
}

/// One stop-the-world pause of the GC log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GcPause {
    /// Wall time it was logged, seconds since the Unix epoch.
    pub at_unix_s: f64,
    /// Its length, milliseconds.
    pub ms: f64,
    /// What it was (`Young (Normal)`, `Remark`, `Full`, ...).
    pub kind: String,
}

/// The pauses of a `-Xlog:gc*` log between two wall times, and the log's
/// lines in that window (to store beside the results).
pub fn gc_pauses(
    log: &Path,
    from: SystemTime,
    to: SystemTime,
) -> std::io::Result<(Vec<GcPause>, String)> {
    let text = std::fs::read_to_string(log)?;
    let from = unix_seconds(from);
    let to = unix_seconds(to);
    let mut pauses = Vec::new();
    let mut lines = String::new();
    for line in text.lines() {
        let Some(at) = line_time(line) else {
            continue;
        };
        if at < from || at > to {
            continue;
        }
        lines.push_str(line);
        lines.push('\n');
        if let Some(pause) = pause_of(line, at).or_else(|| safepoint_of(line, at)) {
            pauses.push(pause);
        }
    }
    Ok((pauses, lines))
}

/// A `Pause ...` line's kind and length: `... GC(12) Pause Young (Normal)
/// (G1 Evacuation Pause) 1234M->56M(6038M) 12.345ms`.
fn pause_of(line: &str, at: f64) -> Option<GcPause> {
    let body = &line[line.find(" Pause ")? + " Pause ".len()..];
    let ms: f64 = body.strip_suffix("ms")?.rsplit(' ').next()?.parse().ok()?;
    // The kind: the words before the heap figures (`123M->`) and the
    // cause (`(G1 Evacuation Pause)`).
    let words: Vec<&str> = body
        .split_whitespace()
        .take_while(|word| !word.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    let words = words.join(" ");
    let kind = words.split(" (G1").next().unwrap_or("").trim().to_string();
    Some(GcPause {
        at_unix_s: at,
        ms,
        kind,
    })
}

/// A stop-the-world safepoint that is not a collection (`-Xlog:safepoint`):
/// `... Safepoint "Cleanup", Time since last: ... ns, Reaching safepoint:
/// ... ns, Cleanup: ... ns, At safepoint: ... ns, Total: 15103113 ns`, as
/// kind `safepoint Cleanup`, its total (reaching plus at the safepoint:
/// every application thread stands for all of it). A collection's
/// safepoint (`G1CollectForAllocation`, `CGC_Operation`, ...) is left out:
/// its `Pause` line counts it.
fn safepoint_of(line: &str, at: f64) -> Option<GcPause> {
    let body = &line[line.find("Safepoint \"")? + "Safepoint \"".len()..];
    let name = &body[..body.find('"')?];
    if name.starts_with("G1") || name.starts_with("CGC") || name.starts_with("Collect") {
        return None;
    }
    let total = body.rsplit("Total: ").next()?.strip_suffix(" ns")?;
    let ns: f64 = total.trim().parse().ok()?;
    Some(GcPause {
        at_unix_s: at,
        ms: ns / 1e6,
        kind: format!("safepoint {name}"),
    })
}

/// The wall time of a log line decorated `[2026-11-28T05:09:41.203+0000]`.
fn line_time(line: &str) -> Option<f64> {
    let stamp = line.strip_prefix('[')?.get(..28)?;
    // 2026-11-28T05:09:41.203+0000
    let number = |range: std::ops::Range<usize>| stamp.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second, milli) = (
        number(11..13)?,
        number(14..16)?,
        number(17..19)?,
        number(20..23)?,
    );
    let sign = match stamp.get(23..24)? {
        "+" => 1,
        "-" => -1,
        _ => return None,
    };
    let offset_minutes = sign * (number(24..26)? * 60 + number(26..28)?);
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds as f64 + milli as f64 / 1000.0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Seconds since the Unix epoch.
pub fn unix_seconds(time: SystemTime) -> f64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64())
}

/// The pauses summed up.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GcSummary {
    /// Stop-the-world pauses.
    pub pauses: u64,
    /// Their total, milliseconds.
    pub total_ms: f64,
    /// Their mean, milliseconds.
    pub mean_ms: f64,
    /// The longest, milliseconds.
    pub max_ms: f64,
    /// Mean time between pauses, seconds (over the window).
    pub mean_interval_s: Option<f64>,
    /// Per kind: pauses and total milliseconds.
    pub by_kind: BTreeMap<String, (u64, f64)>,
    /// The cards the application threads refined themselves (G1's
    /// dirty-card queue over its limit) and the milliseconds it took
    /// them, summed over the window's pauses; only where the log has
    /// them (`gc+refine+stats=debug`, [`mutator_refinement`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutator_refinement: Option<MutatorRefinement>,
}

/// What the application threads refined of the card table themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct MutatorRefinement {
    /// Milliseconds they spent on it.
    pub ms: f64,
    /// Cards they refined.
    pub cards: u64,
}

/// The `Mutator refinement: 27.14ms, refined: 63232, ...` lines (JDK 17,
/// `-Xlog:gc+refine+stats=debug`, one at each pause for the interval
/// before it) of a GC log between two wall times (seconds since the Unix
/// epoch), summed; `None` if the window has none.
pub fn mutator_refinement(lines: &str, from: f64, to: f64) -> Option<MutatorRefinement> {
    let mut total: Option<MutatorRefinement> = None;
    for line in lines.lines() {
        let Some(at) = line_time(line) else {
            continue;
        };
        if at < from || at > to {
            continue;
        }
        let Some(body) = line.split("Mutator refinement: ").nth(1) else {
            continue;
        };
        let mut fields = body.split(", ");
        let ms = fields
            .next()
            .and_then(|ms| ms.strip_suffix("ms")?.parse::<f64>().ok());
        let cards = fields
            .next()
            .and_then(|cards| cards.strip_prefix("refined: ")?.parse::<u64>().ok());
        if let (Some(ms), Some(cards)) = (ms, cards) {
            let sum = total.get_or_insert_with(MutatorRefinement::default);
            sum.ms = round3(sum.ms + ms);
            sum.cards += cards;
        }
    }
    total
}

impl GcSummary {
    /// The summary of `pauses` over a window of `seconds`.
    pub fn of(pauses: &[GcPause], seconds: f64) -> GcSummary {
        let mut summary = GcSummary::default();
        for pause in pauses {
            summary.pauses += 1;
            summary.total_ms += pause.ms;
            summary.max_ms = summary.max_ms.max(pause.ms);
            let entry = summary.by_kind.entry(pause.kind.clone()).or_default();
            entry.0 += 1;
            entry.1 = round3(entry.1 + pause.ms);
        }
        summary.total_ms = round3(summary.total_ms);
        if summary.pauses > 0 {
            summary.mean_ms = round3(summary.total_ms / summary.pauses as f64);
            summary.mean_interval_s = Some(round3(seconds / summary.pauses as f64));
        }
        summary
    }
}

fn round3(value: f64) -> f64 {
    sim::metrics::round3(value)
}

/// One thread pool's counters (`system_views.thread_pools`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PoolCounters {
    /// Tasks completed since the node started.
    pub completed: i64,
    /// Tasks waiting.
    pub pending: i32,
    /// Tasks running.
    pub active: i32,
}

/// Every pool's counters, by name.
pub type Pools = BTreeMap<String, PoolCounters>;

/// Reads `system_views.thread_pools`; `None` where the server has no such
/// table (Scylla, Cassandra before 4.0).
pub async fn thread_pools(session: &scylla::client::session::Session) -> Option<Pools> {
    let result = session
        .query_unpaged(
            "SELECT name, completed_tasks, pending_tasks, active_tasks FROM system_views.thread_pools",
            &[],
        )
        .await
        .ok()?;
    let rows = result.into_rows_result().ok()?;
    let mut pools = Pools::new();
    for row in rows.rows::<(String, i64, i32, i32)>().ok()? {
        let (name, completed, pending, active) = row.ok()?;
        pools.insert(
            name,
            PoolCounters {
                completed,
                pending,
                active,
            },
        );
    }
    Some(pools)
}

/// Tasks each pool completed between two readings (pools that did none
/// are left out).
pub fn pool_deltas(before: &Pools, after: &Pools) -> BTreeMap<String, i64> {
    after
        .iter()
        .filter_map(|(name, counters)| {
            let done = counters.completed - before.get(name).map_or(0, |b| b.completed);
            (done != 0).then(|| (name.clone(), done))
        })
        .collect()
}

/// Compactions of `keyspace` in `system.compaction_history` since
/// `since_ms` (Unix milliseconds): count, bytes in, bytes out. `None`
/// where the table cannot be read.
pub async fn compactions_since(
    session: &scylla::client::session::Session,
    keyspace: &str,
    since_ms: i64,
) -> Option<(u64, i64, i64)> {
    let result = session
        .query_unpaged(
            "SELECT keyspace_name, compacted_at, bytes_in, bytes_out FROM system.compaction_history",
            &[],
        )
        .await
        .ok()?;
    let rows = result.into_rows_result().ok()?;
    let mut total = (0u64, 0i64, 0i64);
    type Row = (
        Option<String>,
        Option<scylla::value::CqlTimestamp>,
        Option<i64>,
        Option<i64>,
    );
    for row in rows.rows::<Row>().ok()? {
        let (name, at, bytes_in, bytes_out) = row.ok()?;
        if name.as_deref() == Some(keyspace) && at.is_some_and(|at| at.0 >= since_ms) {
            total.0 += 1;
            total.1 += bytes_in.unwrap_or(0);
            total.2 += bytes_out.unwrap_or(0);
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_counters_sum_whole_disks_only() {
        let text = "\
   7       0 loop0 9 0 99 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       0 vda 1000 10 16000 500 200 5 4000 100 0 600 600 0 0 0 0 0 0
 253       1 vda1 900 10 15000 400 190 5 3900 90 0 500 500 0 0 0 0 0 0
 252       0 dm-0 50 0 800 10 5 0 40 1 0 10 10 0 0 0 0 0 0
 259       0 nvme0n1 10 0 80 1 2 0 16 1 0 2 2 0 0 0 0 0 0
";
        let disks = ["vda", "nvme0n1", "dm-0", "loop0"];
        let counters = DiskCounters::parse(text, &|name: &str| disks.contains(&name));
        assert_eq!(
            counters,
            DiskCounters {
                reads: 1010,
                read_bytes: 16080 * 512,
                writes: 202,
                written_bytes: 4016 * 512,
            },
            "vda and nvme0n1; not the partition, the loop or the mapper"
        );
        let later = DiskCounters {
            reads: 1510,
            ..counters
        };
        assert_eq!(later.since(&counters).reads, 500);
        assert_eq!(counters.since(&later).reads, 0, "never negative");
    }

    #[test]
    fn a_g1_pause_line_gives_its_time_kind_and_length() {
        let line = "[2026-11-28T05:09:41.203+0000][0.005s][2683][2691][info] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 300M->20M(6038M) 12.345ms";
        let at = line_time(line).unwrap();
        assert!((at - 1_795_842_581.203).abs() < 1e-6, "{at}");
        let pause = pause_of(line, at).unwrap();
        assert_eq!(pause.kind, "Young (Normal)");
        assert!((pause.ms - 12.345).abs() < 1e-9);
        let remark = "[2026-11-28T05:09:41.203+0000][1.0s][1][2][info] GC(9) Pause Remark 2100M->2100M(6038M) 3.210ms";
        assert_eq!(pause_of(remark, at).unwrap().kind, "Remark");
        let other = "[2026-11-28T05:09:41.203+0000][1.0s][1][2][info] GC(9) Using 2 workers of 2 for evacuation";
        assert_eq!(pause_of(other, at), None);
        assert_eq!(safepoint_of(other, at), None);
        let cleanup = "[2026-11-28T05:30:38.064+0000][241.829s][1][2][info] Safepoint \"Cleanup\", Time since last: 1001478115 ns, Reaching safepoint: 3763539 ns, Cleanup: 97540 ns, At safepoint: 11242034 ns, Total: 15103113 ns";
        let safepoint = safepoint_of(cleanup, at).unwrap();
        assert_eq!(safepoint.kind, "safepoint Cleanup");
        assert!((safepoint.ms - 15.103113).abs() < 1e-9);
        let collection = "[2026-11-28T05:30:38.064+0000][241.829s][1][2][info] Safepoint \"G1CollectForAllocation\", Time since last: 1 ns, Reaching safepoint: 2 ns, Cleanup: 3 ns, At safepoint: 4 ns, Total: 6 ns";
        assert_eq!(safepoint_of(collection, at), None);
    }

    #[test]
    fn dates_count_days_from_the_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        let at = line_time("[1970-01-02T01:00:00.500+0100]").unwrap();
        assert!((at - 86_400.5).abs() < 1e-9);
    }

    #[test]
    fn this_process_has_cpu_seconds() {
        let spent = process_cpu_seconds("/proc/self/stat").unwrap();
        assert!(spent >= 0.0);
        assert_eq!(process_cpu_seconds("/proc/no-such/stat"), None);
    }

    #[test]
    fn a_thread_stat_line_gives_its_name_and_cpu_and_this_process_its_threads() {
        let line = |name: &str, utime: u32| {
            format!("7 ({name}) S 1 7 7 0 -1 4194560 1 0 0 0 {utime} 50 0 0 20 0 1 0 5 0 0")
        };
        assert_eq!(
            parse_thread_stat(&line("G1 Conc#0", 150)),
            Some(("G1 Conc#0".to_string(), 2.0))
        );
        assert_eq!(parse_thread_system_ticks(&line("G1 Conc#0", 150)), Some(50));
        assert_eq!(parse_thread_system_ticks("7 (short) S 1"), None);
        let mine = ThreadCpu::read(std::process::id()).expect("this process has threads");
        assert!(!mine.threads.is_empty());
        assert!(mine.since(&ThreadCpu::default()).values().all(|s| *s > 0.0));
        assert_eq!(ThreadCpu::read(u32::MAX), None);
    }

    #[test]
    fn a_schedstat_line_gives_the_runs_and_the_pools_sum_them() {
        assert_eq!(
            parse_schedstat_runs("1420130693 295103983 1611\n"),
            Some(1611)
        );
        assert_eq!(parse_schedstat_runs("12 34"), None);
        let listing = |runs: [u64; 3]| ThreadCpu {
            threads: [
                (1, ("MutationStage-1".to_string(), 1.0)),
                (2, ("MutationStage-2".to_string(), 1.0)),
                (3, ("GC Thread#0".to_string(), 1.0)),
            ]
            .into_iter()
            .collect(),
            runs: [(1, runs[0]), (2, runs[1]), (3, runs[2])]
                .into_iter()
                .collect(),
            preemptions: [(1, runs[0] / 5), (2, runs[1] / 5)].into_iter().collect(),
            system_ticks: [(1, runs[0] * 2), (3, runs[2])].into_iter().collect(),
        };
        let before = listing([10, 20, 5]);
        let after = listing([15, 27, 5]);
        let runs = after.runs_since(&before);
        assert_eq!(runs.get("MutationStage"), Some(&12));
        assert_eq!(
            runs.get("GC Thread"),
            None,
            "a pool that did not run is left out"
        );
        // A thread born since counts whole.
        assert_eq!(after.runs_since(&ThreadCpu::default())["MutationStage"], 42);
        // Of which preempted: 2 -> 3 and 4 -> 5.
        assert_eq!(after.preemptions_since(&before)["MutationStage"], 2);
        // In the kernel: thread 1's 20 -> 30 ticks, a tenth of a second.
        let system = after.system_since(&before);
        assert_eq!(system.get("MutationStage"), Some(&0.1));
        assert_eq!(system.get("GC Thread"), None);
        assert_eq!(
            parse_status_preemptions(
                "voluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n"
            ),
            Some(7)
        );
        assert_eq!(parse_status_preemptions("State:\tS (sleeping)\n"), None);
        let mine = ThreadCpu::read(std::process::id()).expect("this process has threads");
        assert!(mine.runs_since(&ThreadCpu::default()).values().sum::<u64>() > 0);
        assert!(!mine.preemptions.is_empty(), "this kernel gives the counts");
    }

    #[test]
    fn cpu_lists_count_their_cores() {
        assert_eq!(count_cpu_list("1"), Some(1));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
        assert!(allowed_cores(std::process::id()).is_some_and(|cores| cores >= 1));
    }

    #[test]
    fn the_mutators_refinement_is_summed_within_the_window() {
        let log = "[2026-11-30T13:30:21.163+0000][1257.628s][1][2][debug] GC(217) Mutator refinement: 27.14ms, refined: 63232, precleaned: 490, dirtied: 130297\n\
                   [2026-11-30T13:30:23.163+0000][1259.628s][1][2][debug] GC(218) Concurrent refinement: 1.00ms, refined: 100, precleaned: 0, dirtied: 0\n\
                   [2026-11-30T13:30:25.163+0000][1261.628s][1][2][debug] GC(219) Mutator refinement: 0.77ms, refined: 1792, precleaned: 0, dirtied: 3833\n\
                   [2026-11-30T13:30:59.000+0000][1295.000s][1][2][debug] GC(230) Mutator refinement: 5.00ms, refined: 9, precleaned: 0, dirtied: 1\n";
        let from = line_time("[2026-11-30T13:30:20.000+0000]").unwrap();
        let to = line_time("[2026-11-30T13:30:30.000+0000]").unwrap();
        assert_eq!(
            mutator_refinement(log, from, to),
            Some(MutatorRefinement {
                ms: 27.91,
                cards: 65_024
            })
        );
        assert_eq!(mutator_refinement(log, to, to + 1.0), None, "none in it");
        assert_eq!(mutator_refinement("no log here", 0.0, f64::MAX), None);
    }

    #[test]
    fn pauses_sum_by_kind() {
        let pause = |ms: f64, kind: &str| GcPause {
            at_unix_s: 0.0,
            ms,
            kind: kind.to_string(),
        };
        let summary = GcSummary::of(
            &[
                pause(10.0, "Young (Normal)"),
                pause(30.0, "Young (Normal)"),
                pause(2.0, "Remark"),
            ],
            60.0,
        );
        assert_eq!(summary.pauses, 3);
        assert_eq!(summary.total_ms, 42.0);
        assert_eq!(summary.max_ms, 30.0);
        assert_eq!(summary.mean_interval_s, Some(20.0));
        assert_eq!(summary.by_kind["Young (Normal)"], (2, 40.0));
    }
}
