//! G1's evacuation on the real node, from the calibration phases' GC logs:
//! what a young pause copies and what that costs, and what a write leaves
//! alive on the heap. The constants of `models::jvm::EvacuationParams` for
//! the `cassandra-5.0` preset are this fit (REAL.md allows the G1 model to
//! be fitted to C1-C3's logs), and `twin validate --real --fit-gc` prints
//! it from a stored measurement so anyone can redo it.
//!
//! Each young pause of `-Xlog:gc*` gives the regions of eden, survivors
//! and the old generation before and after it, and the heap in use before
//! and after (MiB). What the pause copied (survivors it made plus what it
//! promoted) is the heap after the pause less the old generation before it:
//! `after - (before - eden - survivors before)`, eden and survivors taken
//! as whole 16-MiB regions (so the figure is high by up to a region or
//! two; the same bias sits in the fit and in nothing else).
//!
//! - **Pause against bytes copied**: least squares over every young pause
//!   of C1, C2 and C3 in every repeat, `pause = base + cost x copied`; the
//!   spread about the line is a lognormal's sigma (the standard deviation
//!   of `ln(pause / line)`).
//! - **Bytes a write leaves alive**: over consecutive young pauses inside
//!   C1 (writes at a fixed rate, no flush), the heap in use after a pause
//!   grows by what the writes between the two made long-lived (the on-heap
//!   memtable: `memtable_allocation_type: heap_buffers`) and what G1 kept;
//!   the growth over the writes answered between them, pooled, less the
//!   same growth per second measured over C2 and C3 (reads: no memtable
//!   growth) times the seconds.

use serde::Serialize;

use crate::real::{op_figures, Measurement, REGION_MIB};

/// One young pause as the log gives it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct YoungPause {
    /// Seconds since the JVM started (the log's uptime decoration).
    pub at_s: f64,
    /// Eden regions before.
    pub eden_regions: u32,
    /// Survivor regions before and after.
    pub survivor_regions: (u32, u32),
    /// Old regions before and after.
    pub old_regions: (u32, u32),
    /// Heap in use before and after, MiB.
    pub heap_mib: (f64, f64),
    /// The pause, ms.
    pub pause_ms: f64,
    /// A mixed collection (old regions collected too).
    pub mixed: bool,
}

impl YoungPause {
    /// MiB the pause copied (survivors made and bytes promoted), see the
    /// module doc.
    pub fn copied_mib(&self) -> f64 {
        let (before, after) = self.heap_mib;
        let young = f64::from(self.eden_regions + self.survivor_regions.0) * REGION_MIB;
        after - (before - young)
    }
}

/// The young pauses of one `-Xlog:gc*` log, in order.
pub fn young_pauses(log: &str) -> Vec<YoungPause> {
    // A pause's lines share its `GC(n)` id; the summary line comes last.
    #[derive(Default)]
    struct Partial {
        eden: Option<u32>,
        survivor: Option<(u32, u32)>,
        old: Option<(u32, u32)>,
    }
    let mut partial: Option<(u64, Partial)> = None;
    let mut pauses = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.split("] ").last() else {
            continue;
        };
        let Some(id) = rest
            .strip_prefix("GC(")
            .and_then(|r| r.split(')').next())
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let body = rest.split_once(") ").map_or("", |(_, body)| body);
        if partial.as_ref().is_none_or(|(current, _)| *current != id) {
            partial = Some((id, Partial::default()));
        }
        let Some((_, fields)) = partial.as_mut() else {
            continue;
        };
        let regions = |name: &str| -> Option<(u32, u32)> {
            let counts = body.strip_prefix(name)?.trim();
            let (before, after) = counts.split_once("->")?;
            let after = after.split('(').next()?;
            Some((before.trim().parse().ok()?, after.trim().parse().ok()?))
        };
        if let Some((before, _)) = regions("Eden regions:") {
            fields.eden = Some(before);
        } else if let Some(counts) = regions("Survivor regions:") {
            fields.survivor = Some(counts);
        } else if let Some(counts) = regions("Old regions:") {
            fields.old = Some(counts);
        } else if body.starts_with("Pause Young") && body.ends_with("ms") {
            // `Pause Young (Normal) (G1 Evacuation Pause) 4865M->3480M(6048M) 59.239ms`
            let mut words = body.rsplit(' ');
            let pause_ms = words
                .next()
                .and_then(|ms| ms.strip_suffix("ms"))
                .and_then(|ms| ms.parse::<f64>().ok());
            let heap = words.next().and_then(|heap| {
                let (before, after) = heap.split_once("->")?;
                let before = before.strip_suffix('M')?.parse::<f64>().ok()?;
                let after = after.split('M').next()?.parse::<f64>().ok()?;
                Some((before, after))
            });
            let at_s = line
                .split("][")
                .nth(1)
                .and_then(|uptime| uptime.strip_suffix('s'))
                .and_then(|s| s.parse::<f64>().ok());
            if let (
                Some(pause_ms),
                Some(heap_mib),
                Some(at_s),
                Some(eden),
                Some(survivor),
                Some(old),
            ) = (
                pause_ms,
                heap,
                at_s,
                fields.eden,
                fields.survivor,
                fields.old,
            ) {
                pauses.push(YoungPause {
                    at_s,
                    eden_regions: eden,
                    survivor_regions: survivor,
                    old_regions: old,
                    heap_mib,
                    pause_ms,
                    mixed: body.contains("(Mixed)"),
                });
            }
        }
    }
    pauses
}

/// The fit (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct G1Fit {
    /// Young pauses fitted (C1-C3, every repeat, mixed ones left out).
    pub pauses: usize,
    /// The pause's fixed part, ms.
    pub base_ms: f64,
    /// Its cost per MiB copied, ms.
    pub ms_per_mib: f64,
    /// The lognormal spread about the line.
    pub sigma: f64,
    /// Bytes a write leaves alive on the heap.
    pub retained_bytes_per_write: f64,
    /// The heap's growth per second under reads alone (C2, C3), MiB.
    pub read_growth_mib_per_s: f64,
    /// Eden collected per write answered (C1), pooled over the repeats.
    pub allocated_bytes_per_write: f64,
    /// Per read from memory (C2).
    pub allocated_bytes_per_read: f64,
    /// Per read from disk (C3).
    pub allocated_bytes_per_disk_read: f64,
    /// What a read from disk allocates beyond a read from memory, per
    /// device read (the disk probe's C3 device reads per operation), if
    /// the measurement has the probe (`disk-probe/C3`).
    pub allocated_bytes_per_device_read: Option<f64>,
}

/// Fits G1's evacuation to the calibration phases of `measurement`.
pub fn fit(measurement: &Measurement) -> Result<G1Fit, String> {
    let mut points = Vec::new();
    // (MiB grown, seconds) between consecutive pauses, and the writes.
    let (mut write_growth, mut write_seconds, mut writes) = (0.0, 0.0, 0.0);
    let (mut read_growth, mut read_seconds) = (0.0, 0.0);
    // Eden collected (MiB) and operations answered, per calibration phase.
    let mut allocated = [(0.0, 0.0); 3];
    for phases in measurement.repeats.values() {
        for (index, phase) in ["C1", "C2", "C3"].into_iter().enumerate() {
            let Some(run) = phases.get(phase) else {
                continue;
            };
            let Some(log) = &run.gc_log else {
                continue;
            };
            let answered = op_figures(&run.summary).1;
            allocated[index].0 += crate::real::gc_facts(log).collected_mib;
            allocated[index].1 += answered;
            let pauses: Vec<YoungPause> =
                young_pauses(log).into_iter().filter(|p| !p.mixed).collect();
            points.extend(pauses.iter().map(|p| (p.copied_mib(), p.pause_ms)));
            let rate = op_figures(&run.summary)
                .0
                .iter()
                .filter(|(name, _)| name.ends_with(" ops/s") && name != "total ops/s")
                .map(|(_, rate)| rate)
                .sum::<f64>();
            for pair in pauses.windows(2) {
                let grown = pair[1].heap_mib.1 - pair[0].heap_mib.1;
                let seconds = pair[1].at_s - pair[0].at_s;
                if grown < 0.0 || seconds <= 0.0 {
                    // Something freed old regions between them (a
                    // concurrent cycle's cleanup): not growth.
                    continue;
                }
                if phase == "C1" {
                    write_growth += grown;
                    write_seconds += seconds;
                    writes += rate * seconds;
                } else {
                    read_growth += grown;
                    read_seconds += seconds;
                }
            }
        }
    }
    if points.len() < 3 || writes <= 0.0 || read_seconds <= 0.0 {
        return Err(format!(
            "{}: too few young pauses in C1-C3's GC logs to fit ({} pauses)",
            measurement.dir.display(),
            points.len()
        ));
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let ms_per_mib = sxy / sxx;
    let base_ms = mean_y - ms_per_mib * mean_x;
    let logs: Vec<f64> = points
        .iter()
        .map(|&(x, y)| (y / (base_ms + ms_per_mib * x)).ln())
        .collect();
    let mean_log = logs.iter().sum::<f64>() / n;
    let sigma = (logs.iter().map(|l| (l - mean_log).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let per_op = |(mib, ops): (f64, f64)| {
        if ops > 0.0 {
            mib * 1024.0 * 1024.0 / ops
        } else {
            f64::NAN
        }
    };
    let probe = measurement
        .dir
        .join("disk-probe")
        .join("C3")
        .join("summary.json");
    let device_reads_per_op = std::fs::read_to_string(&probe)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|summary| summary["load_server"]["C3"]["disk"]["reads_per_op"].as_f64())
        .filter(|reads| *reads > 0.0);
    let read_growth_mib_per_s = read_growth / read_seconds;
    let retained_mib = write_growth - read_growth_mib_per_s * write_seconds;
    Ok(G1Fit {
        pauses: points.len(),
        base_ms,
        ms_per_mib,
        sigma,
        retained_bytes_per_write: retained_mib * 1024.0 * 1024.0 / writes,
        read_growth_mib_per_s,
        allocated_bytes_per_write: per_op(allocated[0]),
        allocated_bytes_per_read: per_op(allocated[1]),
        allocated_bytes_per_disk_read: per_op(allocated[2]),
        allocated_bytes_per_device_read: device_reads_per_op
            .map(|reads| (per_op(allocated[2]) - per_op(allocated[1])) / reads),
    })
}

/// The fit as `twin validate --real --fit-gc` prints it.
pub fn fit_text(fit: &G1Fit) -> String {
    format!(
        "G1 evacuation fitted to C1-C3's GC logs ({} young pauses):\n\
         pause = {:.1} ms + {:.3} ms per MiB copied (lognormal sigma {:.3} about the line)\n\
         bytes a write leaves alive on the heap: {:.0} (reads alone grow it {:.2} MiB/s, taken out)\n\
         bytes allocated per write {:.0}, per read from memory {:.0}, per read from disk {:.0}; \
         beyond a read from memory, per device read: {}\n",
        fit.pauses,
        fit.base_ms,
        fit.ms_per_mib,
        fit.sigma,
        fit.retained_bytes_per_write,
        fit.read_growth_mib_per_s,
        fit.allocated_bytes_per_write,
        fit.allocated_bytes_per_read,
        fit.allocated_bytes_per_disk_read,
        fit.allocated_bytes_per_device_read
            .map_or("- (no disk-probe/C3)".to_string(), |bytes| format!("{bytes:.0}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
[2026-11-28T06:20:27.541+0000][184.419s][26978][26993][info] GC(54) Pause Young (Normal) (G1 Evacuation Pause)
[2026-11-28T06:20:27.601+0000][184.478s][26978][26993][info] GC(54) Eden regions: 88->0(71)
[2026-11-28T06:20:27.601+0000][184.478s][26978][26993][info] GC(54) Survivor regions: 1->2(12)
[2026-11-28T06:20:27.601+0000][184.478s][26978][26993][info] GC(54) Old regions: 216->216
[2026-11-28T06:20:27.601+0000][184.478s][26978][26993][info] GC(54) Pause Young (Normal) (G1 Evacuation Pause) 4865M->3480M(6048M) 59.239ms
[2026-11-28T06:20:55.029+0000][211.906s][26978][26993][info] GC(55) Pause Young (Mixed) (G1 Evacuation Pause)
[2026-11-28T06:20:55.392+0000][212.270s][26978][26993][info] GC(55) Eden regions: 71->0(10)
[2026-11-28T06:20:55.392+0000][212.270s][26978][26993][info] GC(55) Survivor regions: 2->9(10)
[2026-11-28T06:20:55.392+0000][212.270s][26978][26993][info] GC(55) Old regions: 216->217
[2026-11-28T06:20:55.393+0000][212.270s][26978][26993][info] GC(55) Pause Young (Mixed) (G1 Evacuation Pause) 4616M->3617M(6048M) 363.800ms
";

    #[test]
    fn reads_each_young_pause_of_a_log() {
        let pauses = young_pauses(LOG);
        assert_eq!(pauses.len(), 2);
        let first = pauses[0];
        assert_eq!(first.eden_regions, 88);
        assert_eq!(first.survivor_regions, (1, 2));
        assert_eq!(first.old_regions, (216, 216));
        assert_eq!(first.heap_mib, (4865.0, 3480.0));
        assert!((first.pause_ms - 59.239).abs() < 1e-9);
        assert!((first.at_s - 184.478).abs() < 1e-9);
        assert!(!first.mixed);
        // 3480 - (4865 - 89 x 16) = 39 MiB copied.
        assert!((first.copied_mib() - 39.0).abs() < 1e-9);
        assert!(pauses[1].mixed);
    }

    /// The `cassandra-5.0` preset's G1 and allocation constants are this
    /// fit of the stored measurement (a refit must change them, and a
    /// change to them must come from a refit).
    #[test]
    fn the_cassandra_5_0_constants_are_the_stored_logs_fit() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("real")
            .join("2026-11-28");
        let fit = fit(&crate::real::load(&dir).unwrap()).unwrap();
        let evacuation = models::jvm::EvacuationParams::cassandra_5_0();
        let close = |model: f64, fitted: f64, what: &str| {
            assert!(
                (model - fitted).abs() <= 0.001 * fitted.abs().max(1.0),
                "{what}: the model has {model}, the logs give {fitted}"
            );
        };
        close(
            evacuation.pause_base.as_secs_f64() * 1e3,
            fit.base_ms,
            "pause base, ms",
        );
        close(
            evacuation.copy_ns_per_byte * (1u64 << 20) as f64 / 1e6,
            fit.ms_per_mib,
            "ms per MiB copied",
        );
        close(evacuation.pause_sigma, fit.sigma, "sigma");
        close(
            models::jvm::CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE as f64,
            fit.retained_bytes_per_write.round(),
            "bytes a write leaves alive",
        );
        let allocation = models::jvm::AllocationParams::cassandra_5_0();
        close(
            allocation.write_step_bytes as f64,
            fit.allocated_bytes_per_write.round(),
            "per write",
        );
        close(
            allocation.read_step_bytes as f64,
            fit.allocated_bytes_per_read.round(),
            "per read",
        );
        close(
            allocation.device_page_bytes as f64,
            fit.allocated_bytes_per_device_read.unwrap().round(),
            "per device read",
        );
    }

    #[test]
    fn a_pause_without_its_region_lines_is_left_out() {
        let log = "[x][1.0s][1][1][info] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 100M->50M(600M) 5.0ms\n";
        assert!(young_pauses(log).is_empty());
    }
}
