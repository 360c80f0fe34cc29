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
//! - **Bytes a write leaves alive**: over consecutive young pauses inside
//!   C1 (writes at a fixed rate, no flush), the heap in use after a pause
//!   grows by what the writes between the two made long-lived (the on-heap
//!   memtable: `memtable_allocation_type: heap_buffers`) and what G1 kept;
//!   the growth over the writes answered between them, pooled, less the
//!   same growth per second measured over C2 and C3 (reads: no memtable
//!   growth) times the seconds.
//!
//! With the pauses' parts (`gc+phases=debug`, as `deploy/real/
//! cassandra.sh` logs since 2026-11-29; the measurement under
//! `validation/real/g1/`), [`fit_phases`] prices each part of a young
//! pause (`models::jvm::EvacuationParams`). Over the young pauses of C1,
//! C2 and C3 in every repeat, each after the first of its phase (the
//! operations since the one before are the phase's fixed rate times the
//! seconds between them):
//!
//! - **Other**: the pauses less their `Object Copy` and `Scan Heap
//!   Roots`, the mean.
//! - **Copy prices**: `Object Copy` over `Copied Bytes`, summed over C1's
//!   pauses (memtable rows) and over C2's and C3's (what reads leave
//!   alive): a price per byte weighted by the bytes.
//! - **Transient bytes per read**: C2's and C3's `Copied Bytes` over the
//!   reads since the pause before, the median.
//! - **Card scan per operation**: `Scan Heap Roots` over the operations
//!   since the pause before, the median over C1's pauses (writes) and over
//!   C2's and C3's (reads). Medians, not sums, for the per-operation
//!   figures: the first pauses of a read phase after writes scan up to
//!   ten times the cards (334 ms in one), a burst the twin has no
//!   mechanism for (its likely cause, caches refilling after the memtables
//!   flushed, is not modelled) and which a sum would spread over every
//!   read.
//! - **Card scan per card**: `Scan Heap Roots` over `Scanned Cards`,
//!   summed over the pauses: what turns the twin's card scan work into the
//!   cards G1 counts (`models::g1_policy`).
//! - **Other per young region**: `Choose Collection Set` plus `Free
//!   Collection Set` over the eden and survivor regions, the mean (the
//!   log's 0.1-ms resolution leaves most pauses at zero).
//! - **G1's pessimism**, printed and used for nothing (the twin runs G1's
//!   predictor): where the log has G1's own prediction for the pause
//!   (`gc+ergo+cset=trace`: `predicted base time` plus `predicted eden
//!   time` as it chose the collection set), the predictions over the
//!   pauses taken.
//! - **Spreads**: of the log of each pause's copy time over its price,
//!   and of its card scan over its price, 1.4826 times the median absolute
//!   deviation (robust: a spike does not widen every other pause).

use serde::Serialize;

use crate::real::{op_figures, Measurement, MeasurementError, REGION_MIB};

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
    /// Its parts, where the log has them (`gc+phases=debug`).
    pub phases: Option<PausePhases>,
    /// The pause G1 predicted for it when it chose its collection set
    /// (`predicted base time` plus `predicted eden time`, ms), where the
    /// log has it (`gc+ergo+cset=trace`).
    pub predicted_ms: Option<f64>,
    /// The eden G1 sized for the mutator phase after it (`Eden regions:
    /// a->0(c)`'s `c`), regions.
    pub eden_target: Option<u32>,
    /// Humongous and archive regions after it.
    pub other_regions: u32,
    /// The heap's committed size, MiB (`...M->...M(c)`).
    pub capacity_mib: f64,
    /// The pause less its evacuation and free-list rebuild (G1's
    /// constant other time), ms, where the log has both.
    pub constant_other_ms: Option<f64>,
}

/// A young pause's parts as `gc+phases=debug` logs them (one GC worker:
/// a phase's time is the worker's).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PausePhases {
    /// `Object Copy (ms)`: copying what is alive.
    pub object_copy_ms: f64,
    /// `Scan Heap Roots (ms)`: scanning the cards of old objects that
    /// point into the collection set.
    pub scan_heap_roots_ms: f64,
    /// `Copied Bytes` (the sum over the workers).
    pub copied_bytes: f64,
    /// `Scanned Cards` under `Scan Heap Roots` (the sum over the workers).
    pub scanned_cards: f64,
    /// `Choose Collection Set` and `Free Collection Set (ms)`: what G1
    /// learns as its other time per young region (0 where not logged).
    pub cset_ms: f64,
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
        object_copy_ms: Option<f64>,
        scan_heap_roots_ms: Option<f64>,
        copied_bytes: Option<f64>,
        scanned_cards: Option<f64>,
        cset_ms: f64,
        eden_target: Option<u32>,
        other_regions: u32,
        evacuate_ms: Option<f64>,
        rebuild_ms: f64,
        predicted_ms: Option<f64>,
    }
    // `Object Copy (ms):   Min: 21.3, Avg: 21.3, Max: 21.3, Diff: 0.0, Sum: 21.3, Workers: 1`
    let statistic = |line: &str, name: &str| -> Option<f64> {
        let (_, rest) = line.split_once(name)?;
        rest.split(',').next()?.trim().parse().ok()
    };
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
        let phase = body.trim_start();
        if phase.starts_with("Added young regions to CSet.") {
            // `... predicted eden time: 207.82ms, predicted base time: 141.35ms, ...`
            let ms = |name: &str| -> Option<f64> {
                let (_, rest) = phase.split_once(name)?;
                rest.split("ms").next()?.trim().parse().ok()
            };
            fields.predicted_ms = ms("predicted eden time:")
                .zip(ms("predicted base time:"))
                .map(|(eden, base)| eden + base);
        } else if phase.starts_with("Object Copy (ms):") {
            fields.object_copy_ms = statistic(phase, "Avg:");
        } else if phase.starts_with("Scan Heap Roots (ms):") {
            fields.scan_heap_roots_ms = statistic(phase, "Avg:");
        } else if phase.starts_with("Copied Bytes") {
            fields.copied_bytes = statistic(phase, "Sum:");
        } else if phase.starts_with("Scanned Cards:") {
            fields.scanned_cards = statistic(phase, "Sum:");
        } else if phase.starts_with("Free Collection Set (ms):") {
            fields.cset_ms += statistic(phase, "Avg:").unwrap_or(0.0);
        } else if let Some(ms) = phase.strip_prefix("Choose Collection Set:") {
            fields.cset_ms += ms
                .trim()
                .trim_end_matches("ms")
                .parse::<f64>()
                .unwrap_or(0.0);
        } else if let Some(ms) = phase.strip_prefix("Evacuate Collection Set:") {
            fields.evacuate_ms = ms.trim().trim_end_matches("ms").parse::<f64>().ok();
        } else if let Some(ms) = phase.strip_prefix("Rebuild Free List:") {
            fields.rebuild_ms = ms
                .trim()
                .trim_end_matches("ms")
                .parse::<f64>()
                .unwrap_or(0.0);
        } else if let Some((before, _)) = regions("Eden regions:") {
            fields.eden = Some(before);
            // `Eden regions: 25->0(45)`: the eden sized after the pause.
            fields.eden_target = body
                .split('(')
                .nth(1)
                .and_then(|rest| rest.split(')').next())
                .and_then(|target| target.trim().parse().ok());
        } else if let Some((_, after)) =
            regions("Humongous regions:").or_else(|| regions("Archive regions:"))
        {
            fields.other_regions += after;
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
            let heap_word = words.next();
            let heap = heap_word.and_then(|heap| {
                let (before, after) = heap.split_once("->")?;
                let before = before.strip_suffix('M')?.parse::<f64>().ok()?;
                let after = after.split('M').next()?.parse::<f64>().ok()?;
                Some((before, after))
            });
            let capacity_mib = heap_word
                .and_then(|heap| heap.split('(').nth(1))
                .and_then(|capacity| capacity.trim_end_matches(')').strip_suffix('M'))
                .and_then(|capacity| capacity.parse::<f64>().ok())
                .unwrap_or(0.0);
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
                    phases: match (
                        fields.object_copy_ms,
                        fields.scan_heap_roots_ms,
                        fields.copied_bytes,
                        fields.scanned_cards,
                    ) {
                        (
                            Some(object_copy_ms),
                            Some(scan_heap_roots_ms),
                            Some(copied_bytes),
                            Some(scanned_cards),
                        ) => Some(PausePhases {
                            object_copy_ms,
                            scan_heap_roots_ms,
                            copied_bytes,
                            scanned_cards,
                            cset_ms: fields.cset_ms,
                        }),
                        _ => None,
                    },
                    predicted_ms: fields.predicted_ms,
                    eden_target: fields.eden_target,
                    other_regions: fields.other_regions,
                    capacity_mib,
                    constant_other_ms: fields
                        .evacuate_ms
                        .map(|evacuate| pause_ms - evacuate - fields.rebuild_ms),
                });
            }
        }
    }
    pauses
}

/// G1's eden sizing replayed on a real log: [`models::g1_policy`], the
/// twin's predictor, fed each young pause's measured parts in the log's
/// order from a new JVM's seeds, and the eden it sizes after each pause
/// beside the one the JVM logged (`Eden regions: a->0(c)`): `(logged,
/// replayed)` per pause that logs both. The log gives no region's own
/// survival, so each eden region is taken to survive alike (the bytes
/// copied less those promoted, over eden), and the cards G1 expects are
/// the cards it scanned. A check of the predictor against the JVM it
/// models, not a fit: nothing of it is tuned to the targets.
pub fn replay_eden_targets(pauses: &[YoungPause]) -> Vec<(u32, u32)> {
    use models::g1_policy::{G1Policy, PauseRecord};
    // The preset's G1: its region size, young bounds and goal.
    let preset = models::jvm::EvacuationParams::cassandra_5_0();
    let region = preset.region_bytes;
    let mut policy = G1Policy::new(1);
    let mut out = Vec::new();
    for pause in pauses {
        let (Some(parts), Some(logged)) = (pause.phases, pause.eden_target) else {
            continue;
        };
        let eden = pause.eden_regions as usize;
        let survivors = pause.survivor_regions.0 as usize;
        let promoted = u64::from(pause.old_regions.1.saturating_sub(pause.old_regions.0)) * region;
        let survivor_live = promoted.min(survivors as u64 * region);
        let copied = parts.copied_bytes as u64;
        if !pause.mixed {
            policy.record(
                &PauseRecord {
                    eden_regions: eden,
                    eden_survived_bytes: copied.saturating_sub(survivor_live),
                    survivor_regions: survivors,
                    survivor_survived_bytes: survivor_live,
                    copy_ns: parts.object_copy_ms * 1e6,
                    copied_bytes: copied,
                    scan_ns: parts.scan_heap_roots_ms * 1e6,
                    cards: parts.scanned_cards,
                    constant_other_ns: pause.constant_other_ms.unwrap_or(0.0).max(0.0) * 1e6,
                    young_other_ns: parts.cset_ms * 1e6,
                },
                region,
            );
        }
        let bounds = preset.young_bounds((pause.capacity_mib * 1024.0 * 1024.0) as u64);
        let regions = bounds.regions;
        let survivors_after = pause.survivor_regions.1 as usize;
        let free = regions.saturating_sub(
            (pause.old_regions.1 + pause.survivor_regions.1 + pause.other_regions) as usize,
        );
        // The survivors' bytes: what the pause copied into them, at most
        // their regions.
        let survivor_used = copied
            .saturating_sub(promoted)
            .min(survivors_after as u64 * region);
        let replayed = policy.young_target(&bounds, survivors_after, survivor_used, 0, free);
        out.push((logged, replayed as u32));
    }
    out
}

/// [`replay_eden_targets`] over each repeat of `measurement`, its phases'
/// logs in `measure.sh`'s order (one JVM through all): per phase, the
/// pauses whose replayed eden is within 20 % (or two regions) of the
/// logged one, and the pauses compared, summed over the repeats.
pub fn replay_measurement(measurement: &Measurement) -> Vec<(String, usize, usize)> {
    let mut by_phase: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for phases in measurement.repeats.values() {
        let mut order: Vec<&String> = phases.keys().collect();
        order.sort_by_key(|id| crate::real::run_order(id));
        let mut pauses = Vec::new();
        let mut owners = Vec::new();
        for id in order {
            if let Some(log) = &phases[id].gc_log {
                for pause in young_pauses(log) {
                    if pause.phases.is_some() && pause.eden_target.is_some() {
                        owners.push(id.clone());
                    }
                    pauses.push(pause);
                }
            }
        }
        for (owner, (logged, replayed)) in owners.into_iter().zip(replay_eden_targets(&pauses)) {
            let entry = by_phase.entry(owner).or_default();
            let (logged, replayed) = (f64::from(logged), f64::from(replayed));
            if (logged - replayed).abs() <= (0.2 * logged).max(2.0) {
                entry.0 += 1;
            }
            entry.1 += 1;
        }
    }
    let mut out: Vec<(String, usize, usize)> = by_phase
        .into_iter()
        .map(|(id, (close, all))| (id, close, all))
        .collect();
    out.sort_by_key(|(id, _, _)| crate::real::run_order(id));
    out
}

/// The fit (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct G1Fit {
    /// Young pauses read (C1-C3, every repeat, mixed ones left out).
    pub pauses: usize,
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
pub fn fit(measurement: &Measurement) -> Result<G1Fit, MeasurementError> {
    let mut pauses_read = 0;
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
            pauses_read += pauses.len();
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
    if pauses_read < 3 || writes <= 0.0 || read_seconds <= 0.0 {
        return Err(MeasurementError::at(
            &measurement.dir,
            format!("too few young pauses in C1-C3's GC logs to fit ({pauses_read} pauses)"),
        ));
    }
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
        pauses: pauses_read,
        retained_bytes_per_write: retained_mib * 1024.0 * 1024.0 / writes,
        read_growth_mib_per_s,
        allocated_bytes_per_write: per_op(allocated[0]),
        allocated_bytes_per_read: per_op(allocated[1]),
        allocated_bytes_per_disk_read: per_op(allocated[2]),
        allocated_bytes_per_device_read: device_reads_per_op
            .map(|reads| (per_op(allocated[2]) - per_op(allocated[1])) / reads),
    })
}

/// The parts of a young pause, priced (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct G1PhaseFit {
    /// Young pauses priced (each after the first of its phase).
    pub pauses: usize,
    /// The part that neither copies nor scans cards, ms.
    pub other_ms: f64,
    /// Object copy per byte of memtable rows (C1), ns.
    pub row_copy_ns_per_byte: f64,
    /// Object copy per byte reads leave alive (C2, C3), ns.
    pub transient_copy_ns_per_byte: f64,
    /// Bytes a read leaves alive at the next pause.
    pub read_transient_bytes: f64,
    /// Card scan per write, ns.
    pub write_card_ns: f64,
    /// Card scan per read, ns.
    pub read_card_ns: f64,
    /// Lognormal spread of a pause's copy time about its price.
    pub copy_sigma: f64,
    /// Lognormal spread of a pause's card scan about its price.
    pub card_sigma: f64,
    /// Card scan time per card scanned, ns.
    pub card_ns_per_card: f64,
    /// Choosing and freeing the collection set per young region, ns.
    pub young_other_ns_per_region: f64,
    /// The pause G1 predicted, over the pause it took (a diagnostic: the
    /// twin runs G1's predictor, `models::g1_policy`).
    pub prediction_over_pause: f64,
}

/// Prices the parts of C1-C3's young pauses in `measurement`, whose logs
/// must have them (`gc+phases=debug`).
pub fn fit_phases(measurement: &Measurement) -> Result<G1PhaseFit, MeasurementError> {
    // Per pause: (writes phase?, pause, its parts, operations since the one before).
    let mut priced: Vec<(bool, f64, PausePhases, f64)> = Vec::new();
    // Per pause: its cset time over its young regions, ms.
    let mut cset_per_region = Vec::new();
    // G1's predicted pauses and the pauses they predicted.
    let mut pessimism = Vec::new();
    for phases in measurement.repeats.values() {
        for phase in ["C1", "C2", "C3"] {
            let Some(run) = phases.get(phase) else {
                continue;
            };
            let Some(log) = &run.gc_log else {
                continue;
            };
            let rate = op_figures(&run.summary)
                .0
                .iter()
                .filter(|(name, _)| name.ends_with(" ops/s") && name != "total ops/s")
                .map(|(_, rate)| rate)
                .sum::<f64>();
            let pauses: Vec<YoungPause> =
                young_pauses(log).into_iter().filter(|p| !p.mixed).collect();
            for pair in pauses.windows(2) {
                let (Some(parts), seconds) = (pair[1].phases, pair[1].at_s - pair[0].at_s) else {
                    continue;
                };
                let ops = rate * seconds;
                if ops > 0.0 && parts.copied_bytes > 0.0 {
                    priced.push((phase == "C1", pair[1].pause_ms, parts, ops));
                    let young = pair[1].eden_regions + pair[1].survivor_regions.0;
                    if young > 0 {
                        cset_per_region.push(parts.cset_ms / f64::from(young));
                    }
                    if let Some(predicted) = pair[1].predicted_ms {
                        pessimism.push((predicted, pair[1].pause_ms));
                    }
                }
            }
        }
    }
    let writes: Vec<_> = priced.iter().filter(|p| p.0).collect();
    let reads: Vec<_> = priced.iter().filter(|p| !p.0).collect();
    if writes.len() < 3 || reads.len() < 3 {
        return Err(MeasurementError::at(
            &measurement.dir,
            format!(
                "too few young pauses with their parts (gc+phases=debug) in C1-C3's GC logs \
                 to price them ({} in C1, {} in C2 and C3; 3 each needed)",
                writes.len(),
                reads.len()
            ),
        ));
    }
    if pessimism.len() < 3 {
        return Err(MeasurementError::at(
            &measurement.dir,
            format!(
                "too few young pauses with G1's predictions (gc+ergo+cset=trace) in C1-C3's GC \
                 logs ({}; 3 needed)",
                pessimism.len()
            ),
        ));
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        }
    };
    // Ratios of sums: (numerator, denominator) over the pauses.
    let ratio = |pairs: &mut dyn Iterator<Item = (f64, f64)>| {
        let (top, bottom) = pairs.fold((0.0, 0.0), |(t, b), (x, y)| (t + x, b + y));
        top / bottom
    };
    let row_copy = ratio(
        &mut writes
            .iter()
            .map(|p| (p.2.object_copy_ms * 1e6, p.2.copied_bytes)),
    );
    let transient_copy = ratio(
        &mut reads
            .iter()
            .map(|p| (p.2.object_copy_ms * 1e6, p.2.copied_bytes)),
    );
    let write_card = median(
        writes
            .iter()
            .map(|p| p.2.scan_heap_roots_ms * 1e6 / p.3)
            .collect(),
    );
    let read_card = median(
        reads
            .iter()
            .map(|p| p.2.scan_heap_roots_ms * 1e6 / p.3)
            .collect(),
    );
    // A robust spread: 1.4826 times the median absolute deviation of the
    // logs (a normal's standard deviation), so that a spike (a flush's
    // cards at a phase's change) does not widen every other pause.
    // Each class (writes, reads) about its own median, then pooled.
    let sd = |logs: Vec<(bool, f64)>| {
        let centre = |write: bool| {
            median(
                logs.iter()
                    .filter(|(w, _)| *w == write)
                    .map(|(_, l)| *l)
                    .collect(),
            )
        };
        let (writes, reads) = (centre(true), centre(false));
        let deviations = logs
            .iter()
            .map(|(write, l)| (l - if *write { writes } else { reads }).abs())
            .collect();
        1.4826 * median(deviations)
    };
    let copy_sigma = sd(priced
        .iter()
        .map(|(write, _, parts, _)| {
            let price = if *write { row_copy } else { transient_copy };
            (
                *write,
                (parts.object_copy_ms * 1e6 / (price * parts.copied_bytes)).ln(),
            )
        })
        .collect());
    let card_sigma = sd(priced
        .iter()
        .filter(|(_, _, parts, _)| parts.scan_heap_roots_ms > 0.0)
        .map(|(write, _, parts, ops)| {
            let price = if *write { write_card } else { read_card };
            (
                *write,
                (parts.scan_heap_roots_ms * 1e6 / (price * ops)).ln(),
            )
        })
        .collect());
    Ok(G1PhaseFit {
        pauses: priced.len(),
        other_ms: priced
            .iter()
            .map(|(_, pause, parts, _)| pause - parts.object_copy_ms - parts.scan_heap_roots_ms)
            .sum::<f64>()
            / priced.len() as f64,
        row_copy_ns_per_byte: row_copy,
        transient_copy_ns_per_byte: transient_copy,
        read_transient_bytes: median(reads.iter().map(|p| p.2.copied_bytes / p.3).collect()),
        write_card_ns: write_card,
        read_card_ns: read_card,
        copy_sigma,
        card_sigma,
        card_ns_per_card: ratio(
            &mut priced
                .iter()
                .map(|p| (p.2.scan_heap_roots_ms * 1e6, p.2.scanned_cards)),
        ),
        // The log's 0.1-ms resolution leaves most pauses at zero: the mean.
        young_other_ns_per_region: cset_per_region.iter().sum::<f64>() * 1e6
            / cset_per_region.len().max(1) as f64,
        prediction_over_pause: ratio(&mut pessimism.into_iter()),
    })
}

/// The pauses' parts as `twin validate --real --fit-gc` prints them.
pub fn fit_phases_text(fit: &G1PhaseFit) -> String {
    format!(
        "young pauses' parts (gc+phases=debug), priced over {} pauses of C1-C3:\n\
         other {:.3} ms; object copy {:.4} ns per byte of memtable rows, {:.4} ns per byte reads leave alive \
         (copy spread sigma {:.4})\n\
         bytes a read leaves alive at the next pause: {:.0}\n\
         card scan per write {:.1} ns, per read {:.1} ns (spread sigma {:.4}); {:.1} ns per card scanned\n\
         choosing and freeing the collection set: {:.1} ns per young region\n\
         G1's predicted pause over the pause it took: {:.4} (a diagnostic: the twin runs G1's predictor)\n",
        fit.pauses,
        fit.other_ms,
        fit.row_copy_ns_per_byte,
        fit.transient_copy_ns_per_byte,
        fit.copy_sigma,
        fit.read_transient_bytes,
        fit.write_card_ns,
        fit.read_card_ns,
        fit.card_sigma,
        fit.card_ns_per_card,
        fit.young_other_ns_per_region,
        fit.prediction_over_pause,
    )
}

/// The fit as `twin validate --real --fit-gc` prints it.
pub fn fit_text(fit: &G1Fit) -> String {
    format!(
        "G1's heap fitted to C1-C3's GC logs ({} young pauses):\n\
         bytes a write leaves alive on the heap: {:.0} (reads alone grow it {:.2} MiB/s, taken out)\n\
         bytes allocated per write {:.0}, per read from memory {:.0}, per read from disk {:.0}; \
         beyond a read from memory, per device read: {}\n",
        fit.pauses,
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
    /// The twin's G1 predictor, fed the real node's pauses from the seeds
    /// on, sizes the eden the JVM logged for the write loads (within 20 %
    /// or two regions, three pauses in five or more of each: C4 56 of 57,
    /// L1 481 of 743 on 2026-11-30-speed), where the cards and the
    /// scans after a flush set it; the read loads, whose survival the log
    /// does not give by region age, are printed, not held.
    #[test]
    fn the_predictor_replayed_on_a_real_log_sizes_the_jvms_eden_for_writes() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("real")
            .join("2026-11-30-speed");
        let replayed = replay_measurement(&crate::real::load(&dir).unwrap());
        println!("{replayed:?}");
        for (phase, close, all) in &replayed {
            if ["C4", "W50", "W80", "Z1", "S1", "P1", "L1"].contains(&phase.as_str()) {
                assert!(
                    all * 3 <= close * 5,
                    "{phase}: {close} of {all} pauses close"
                );
            }
        }
        let l1 = replayed.iter().find(|(id, _, _)| id == "L1").unwrap();
        assert!(l1.2 > 600, "three repeats of L1's pauses: {}", l1.2);
    }

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
        let close = |model: f64, fitted: f64, what: &str| {
            assert!(
                (model - fitted).abs() <= 0.001 * fitted.abs().max(1.0),
                "{what}: the model has {model}, the logs give {fitted}"
            );
        };
        close(
            models::jvm::CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE as f64,
            fit.retained_bytes_per_write.round(),
            "bytes a write leaves alive",
        );
        let allocation = models::jvm::AllocationParams::cassandra_5_0();
        // A write's step allocates all but its memtable row, which the
        // memtable allocates as it takes it.
        close(
            (allocation.write_step_bytes + models::jvm::CASSANDRA_5_0_RETAINED_BYTES_PER_WRITE)
                as f64,
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

    /// The preset's prices of a young pause's parts are the fit of the
    /// stored G1 calibration measurement (`gc+phases=debug`).
    #[test]
    fn the_cassandra_5_0_pause_parts_are_the_stored_phase_logs_fit() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("real")
            .join("g1")
            .join("2026-11-29");
        let fit = fit_phases(&crate::real::load(&dir).unwrap()).unwrap();
        assert!(fit.pauses >= 20, "{fit:?}");
        let evacuation = models::jvm::EvacuationParams::cassandra_5_0();
        let close = |model: f64, fitted: f64, what: &str| {
            assert!(
                (model - fitted).abs() <= 0.001 * fitted.abs().max(1.0),
                "{what}: the model has {model}, the logs give {fitted}"
            );
        };
        close(
            evacuation.pause_other.as_secs_f64() * 1e3,
            fit.other_ms,
            "other, ms",
        );
        close(
            evacuation.row_copy_ns_per_byte,
            fit.row_copy_ns_per_byte,
            "row copy",
        );
        close(
            evacuation.transient_copy_ns_per_byte,
            fit.transient_copy_ns_per_byte,
            "transient copy",
        );
        close(evacuation.copy_sigma, fit.copy_sigma, "copy sigma");
        close(evacuation.card_sigma, fit.card_sigma, "card sigma");
        close(
            evacuation.write.card_scan_ns,
            fit.write_card_ns,
            "card scan per write",
        );
        close(
            evacuation.read.card_scan_ns,
            fit.read_card_ns,
            "card scan per read",
        );
        close(
            evacuation.read.transient_bytes as f64,
            fit.read_transient_bytes.round(),
            "transient bytes per read",
        );
        close(
            evacuation.card_ns_per_card,
            fit.card_ns_per_card,
            "card scan per card",
        );
        close(
            evacuation.young_other_per_region.as_nanos() as f64,
            fit.young_other_ns_per_region,
            "other per young region",
        );
        assert_eq!(evacuation.write.transient_bytes, 0);
        // The stored scorecard measurement's logs have no parts.
        let info = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("real")
            .join("2026-11-28");
        let error = fit_phases(&crate::real::load(&info).unwrap())
            .unwrap_err()
            .to_string();
        assert!(error.contains("gc+phases=debug"), "{error}");
    }

    /// A pause's parts are read from its `gc+phases=debug` lines, and
    /// G1's prediction for it from its `gc+ergo+cset=trace` line.
    #[test]
    fn reads_a_pauses_parts_where_logged() {
        let log = "\
[t][10.0s][1][1][info] GC(5) Pause Young (Normal) (G1 Evacuation Pause)
[t][10.0s][1][1][trace] GC(5) Added young regions to CSet. Eden: 16 regions, Survivors: 2 regions, predicted eden time: 207.82ms, predicted base time: 141.35ms, target pause time: 300.00ms, remaining time: 0.00ms
[t][10.0s][1][1][debug] GC(5)     Choose Collection Set: 0.5ms
[t][10.0s][1][1][debug] GC(5)     Scan Heap Roots (ms):          Min:  1.2, Avg:  1.2, Max:  1.2, Diff:  0.0, Sum:  1.2, Workers: 1
[t][10.0s][1][1][debug] GC(5)       Scanned Cards:                 Min: 1234, Avg: 1234.0, Max: 1234, Diff: 0, Sum: 1234, Workers: 1
[t][10.0s][1][1][debug] GC(5)       Free Collection Set (ms):      Min:  0.2, Avg:  0.2, Max:  0.2, Diff:  0.0, Sum:  0.2, Workers: 1
[t][10.0s][1][1][debug] GC(5)     Object Copy (ms):              Min: 21.3, Avg: 21.3, Max: 21.3, Diff:  0.0, Sum: 21.3, Workers: 1
[t][10.0s][1][1][debug] GC(5)         Copied Bytes                   Min: 10530776, Avg: 10530776.0, Max: 10530776, Diff: 0, Sum: 10530776, Workers: 1
[t][10.0s][1][1][info] GC(5) Eden regions: 5->0(17)
[t][10.0s][1][1][info] GC(5) Survivor regions: 0->1(3)
[t][10.0s][1][1][info] GC(5) Old regions: 2->2
[t][10.0s][1][1][info] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 321M->61M(6032M) 26.202ms
";
        let pauses = young_pauses(log);
        assert_eq!(pauses.len(), 1);
        assert_eq!(
            pauses[0].phases,
            Some(PausePhases {
                object_copy_ms: 21.3,
                scan_heap_roots_ms: 1.2,
                copied_bytes: 10_530_776.0,
                scanned_cards: 1_234.0,
                cset_ms: 0.7,
            })
        );
        assert!((pauses[0].predicted_ms.unwrap() - 349.17).abs() < 1e-9);
        assert_eq!(young_pauses(LOG)[0].phases, None, "info logs have none");
        assert_eq!(young_pauses(LOG)[0].predicted_ms, None);
    }

    #[test]
    fn a_pause_without_its_region_lines_is_left_out() {
        let log = "[x][1.0s][1][1][info] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 100M->50M(600M) 5.0ms\n";
        assert!(young_pauses(log).is_empty());
    }
}
