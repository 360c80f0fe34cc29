//! The machine's speed beside each phase of a real measurement, and
//! REAL.md's rule for using it ("The machine's speed beside each phase",
//! named 2026-11-30 before the measurement that first carried it).
//!
//! `measure.sh` records in each repeat's `protocol.json`, as
//! `<phase>_speed_s`, the median wall seconds of a fixed CPU- and
//! memory-bound job (`twin bench hold --pending 100000 --until 100`) run on
//! the server's cores just before the phase: the guest's core drifts by
//! 15% over minutes and by a quarter over hours, and nothing else here
//! measures it (the guest exposes no hardware counters).
//!
//! The rule: a phase's speed ratio is its speed over the reference, the
//! median over every repeat's calibration phases (C1, C4, C2, C3). The
//! speed is used only if it explains the real node's spread: over the
//! saturated phases S1, S2, S3 and L1, the repeats' server CPU per
//! operation divided by their ratios must spread less than undivided in at
//! least three of the four ([`Speeds::verdict`]). Then the calibration
//! phases are fitted at the reference speed
//! ([`crate::real::figures_at_reference_speed`]) and the twin runs each
//! phase with `[cluster] cpu_slowdown` set to the ratio of the real repeat
//! it stands beside.

use std::collections::BTreeMap;

use crate::real::{median, Measurement, MeasurementError};

/// The calibration phases whose speeds make the reference.
pub const REFERENCE_PHASES: [&str; 4] = ["C1", "C4", "C2", "C3"];

/// The saturated phases whose spread decides whether the speed is used.
pub const TEST_PHASES: [&str; 4] = ["S1", "S2", "S3", "L1"];

/// In how many of [`TEST_PHASES`] the speed must narrow the spread.
pub const TEST_PHASES_NEEDED: usize = 3;

/// The figure whose spread the rule looks at.
const TEST_FIGURE: &str = "server CPU us/op";

/// The speeds a measurement recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Speeds {
    /// Repeat number -> phase -> seconds the fixed job took.
    pub by_repeat: BTreeMap<u32, BTreeMap<String, f64>>,
    /// The median of the calibration phases' seconds over every repeat.
    pub reference: f64,
}

/// Whether the speed explains the real node's spread ([`Speeds::verdict`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedVerdict {
    /// Per test phase the measurement has: its spread ((max - min) over the
    /// median) of the server's CPU per operation, as measured and divided by
    /// the speed ratios.
    pub phases: Vec<(String, f64, f64)>,
    /// Whether it narrowed the spread in [`TEST_PHASES_NEEDED`] of them.
    pub used: bool,
}

impl Speeds {
    /// The speeds of `measurement`'s repeats (`repeat-N/protocol.json`'s
    /// `<phase>_speed_s`); `None` when no repeat recorded any (measurements
    /// before 2026-11-30's rule). An error when a file cannot be read, or
    /// when speeds were recorded but no calibration phase has one.
    pub fn of(measurement: &Measurement) -> Result<Option<Speeds>, MeasurementError> {
        let mut by_repeat = BTreeMap::new();
        for (number, protocol) in protocols(measurement, parse_protocol)? {
            let speeds: BTreeMap<String, f64> = protocol
                .into_iter()
                .filter_map(|(key, value)| {
                    let phase = key.strip_suffix("_speed_s")?;
                    (value > 0.0 && value.is_finite()).then(|| (phase.to_string(), value))
                })
                .collect();
            if !speeds.is_empty() {
                by_repeat.insert(number, speeds);
            }
        }
        if by_repeat.is_empty() {
            return Ok(None);
        }
        let reference: Vec<f64> = by_repeat
            .values()
            .flat_map(|phases| {
                REFERENCE_PHASES
                    .iter()
                    .filter_map(|phase| phases.get(*phase).copied())
            })
            .collect();
        if reference.is_empty() {
            return Err(MeasurementError {
                file: Some(measurement.dir.display().to_string()),
                reason: format!(
                    "speeds recorded, but none for a calibration phase ({})",
                    REFERENCE_PHASES.join(", ")
                ),
            });
        }
        Ok(Some(Speeds {
            by_repeat,
            reference: median(&reference),
        }))
    }

    /// Phase `phase`'s speed ratio in repeat `repeat`: its seconds over the
    /// reference (above 1: slower than the reference), if it recorded one.
    pub fn ratio(&self, repeat: u32, phase: &str) -> Option<f64> {
        self.by_repeat
            .get(&repeat)?
            .get(phase)
            .map(|seconds| seconds / self.reference)
    }

    /// The rule's test: does dividing each repeat's server CPU per
    /// operation by its speed ratio narrow the repeats' spread in the
    /// saturated phases?
    pub fn verdict(&self, measurement: &Measurement) -> SpeedVerdict {
        let measured = crate::real::figures(measurement);
        let divided = crate::real::figures_at_reference_speed(measurement, self);
        let spread_of = |figures: &[crate::real::Figure], phase: &str| {
            figures
                .iter()
                .find(|figure| figure.phase == phase && figure.name == TEST_FIGURE)
                .filter(|figure| figure.values.len() >= 2)
                .map(crate::real::Figure::spread)
        };
        let phases: Vec<(String, f64, f64)> = TEST_PHASES
            .iter()
            .filter_map(|phase| {
                Some((
                    phase.to_string(),
                    spread_of(&measured, phase)?,
                    spread_of(&divided, phase)?,
                ))
            })
            .collect();
        let narrowed = phases.iter().filter(|(_, was, is)| is < was).count();
        SpeedVerdict {
            used: narrowed >= TEST_PHASES_NEEDED,
            phases,
        }
    }
}

impl SpeedVerdict {
    /// One line: each test phase's spread as measured and at the
    /// reference speed, and the outcome.
    pub fn text(&self) -> String {
        let phases: Vec<String> = self
            .phases
            .iter()
            .map(|(phase, was, is)| format!("{phase} {:.0}% -> {:.0}%", was * 100.0, is * 100.0))
            .collect();
        format!(
            "the machine's speed (REAL.md): the repeats' server CPU per op spread, as measured -> at the reference speed: {}; {}",
            phases.join(", "),
            if self.used {
                format!("narrower in {TEST_PHASES_NEEDED} or more of {}: used", TEST_PHASES.len())
            } else {
                format!("narrower in fewer than {TEST_PHASES_NEEDED} of {}: not used", TEST_PHASES.len())
            }
        )
    }
}

/// A measurement's figures as the rule takes them: at the reference speed
/// where it recorded speeds and they pass the rule's test
/// ([`Speeds::verdict`]), as measured otherwise; with the verdict, where
/// speeds were recorded.
pub fn figures_by_rule(
    measurement: &Measurement,
) -> Result<(Vec<crate::real::Figure>, Option<SpeedVerdict>), MeasurementError> {
    let Some(speeds) = Speeds::of(measurement)? else {
        return Ok((crate::real::figures(measurement), None));
    };
    let verdict = speeds.verdict(measurement);
    let figures = if verdict.used {
        crate::real::figures_at_reference_speed(measurement, &speeds)
    } else {
        crate::real::figures(measurement)
    };
    Ok((figures, Some(verdict)))
}

/// Each repeat's `protocol.json` that exists, read by `parse`, by repeat
/// number.
fn protocols<T>(
    measurement: &Measurement,
    parse: fn(&str) -> Result<T, String>,
) -> Result<Vec<(u32, T)>, MeasurementError> {
    let mut read = Vec::new();
    for &number in measurement.repeats.keys() {
        let path = measurement
            .dir
            .join(format!("repeat-{number}"))
            .join("protocol.json");
        if !path.is_file() {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|error| MeasurementError::at(&path, error))?;
        read.push((
            number,
            parse(&text).map_err(|error| MeasurementError::at(&path, error))?,
        ));
    }
    Ok(read)
}

/// `protocol.json` as `measure.sh` writes it: a JSON object of numbers
/// and booleans (its last entry followed by a comma, as the script
/// appends them); the numbers.
fn parse_protocol(text: &str) -> Result<Vec<(String, f64)>, String> {
    Ok(read_protocol(text)?
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), value.as_f64()?)))
        .collect())
}

/// `protocol.json`'s entries, numbers and booleans alike.
fn read_protocol(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let trimmed = text.trim();
    let fixed = match trimmed.strip_suffix('}') {
        Some(body) => format!("{}}}", body.trim_end().trim_end_matches(',')),
        // An unfinished file (a repeat cut short): close it.
        None => format!("{}}}", trimmed.trim_end_matches(',')),
    };
    let value: serde_json::Value =
        serde_json::from_str(&fixed).map_err(|error| format!("not a protocol: {error}"))?;
    match value {
        serde_json::Value::Object(object) => Ok(object),
        _ => Err("not a JSON object".to_string()),
    }
}

/// The phases before which `measure.sh` dropped the page cache
/// (`<phase>_cache_dropped: true`) in most of the repeats that kept a
/// `protocol.json`; none when no repeat kept one.
pub fn caches_dropped(
    measurement: &Measurement,
) -> Result<std::collections::BTreeSet<String>, MeasurementError> {
    let mut votes: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for (_, protocol) in protocols(measurement, read_protocol)? {
        for (key, value) in &protocol {
            if let Some(phase) = key.strip_suffix("_cache_dropped") {
                let vote = votes.entry(phase.to_string()).or_default();
                vote.1 += 1;
                if value.as_bool() == Some(true) {
                    vote.0 += 1;
                }
            }
        }
    }
    Ok(votes
        .into_iter()
        .filter(|(_, (yes, all))| 2 * yes > *all)
        .map(|(phase, _)| phase)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A measurement of `repeats` whose phases have `cpu[phase][repeat]` as
    /// their server CPU per op, with `speed[phase][repeat]` recorded.
    fn measurement(
        name: &str,
        phases: &[(&str, [f64; 3], [f64; 3])],
    ) -> (Measurement, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("twin-speed-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut repeats = BTreeMap::new();
        for repeat in 1..=3u32 {
            let folder = dir.join(format!("repeat-{repeat}"));
            std::fs::create_dir_all(&folder).expect("a folder");
            let mut protocol = String::from("{\n");
            let mut runs = BTreeMap::new();
            for (phase, cpu, speed) in phases {
                let i = repeat as usize - 1;
                protocol.push_str(&format!("  \"{phase}_speed_s\": {},\n", speed[i]));
                let summary = serde_json::json!({
                    "kind": "real",
                    "ops": {"write": {"count": 1000, "ops_per_s": 100.0}},
                    "load_server": {*phase: {"cpu_us_per_op": cpu[i]}},
                });
                runs.insert(
                    phase.to_string(),
                    crate::real::PhaseRun {
                        summary,
                        gc_log: None,
                        dir: folder.join(phase),
                    },
                );
            }
            std::fs::write(folder.join("protocol.json"), protocol).expect("written");
            repeats.insert(repeat, runs);
        }
        (
            Measurement {
                dir: dir.clone(),
                repeats,
            },
            dir,
        )
    }

    #[test]
    fn the_speed_is_used_only_where_it_explains_the_spread() {
        // The calibration phases ran at 1.0 s; the saturated ones' CPU per
        // op follows their speed in S1, S2 and S3 (spread 33% as measured,
        // none divided) and not in L1.
        let calibration = [1.0, 1.0, 1.0];
        let (tracks, dir) = measurement(
            "tracks",
            &[
                ("C1", [100.0, 100.0, 100.0], calibration),
                ("S1", [30.0, 36.0, 40.0], [1.0, 1.2, 1.333_333]),
                ("S2", [40.0, 48.0, 53.333_333], [1.0, 1.2, 1.333_333]),
                ("S3", [60.0, 72.0, 80.0], [1.0, 1.2, 1.333_333]),
                ("L1", [50.0, 50.0, 50.0], [1.0, 1.2, 1.333_333]),
            ],
        );
        let speeds = Speeds::of(&tracks).expect("read").expect("recorded");
        assert_eq!(speeds.reference, 1.0);
        assert_eq!(speeds.ratio(2, "S1"), Some(1.2));
        assert_eq!(speeds.ratio(2, "W50"), None);
        let verdict = speeds.verdict(&tracks);
        assert_eq!(verdict.phases.len(), 4);
        assert!(verdict.used, "{}", verdict.text());
        // At the reference speed S1's CPU per op is 30 in every repeat.
        let divided = crate::real::figures_at_reference_speed(&tracks, &speeds);
        let s1 = divided
            .iter()
            .find(|figure| figure.phase == "S1" && figure.name == TEST_FIGURE)
            .expect("S1's CPU");
        assert!(
            s1.values.iter().all(|value| (value - 30.0).abs() < 1e-3),
            "{s1:?}"
        );
        let _ = std::fs::remove_dir_all(dir);

        // Speeds that do not follow the CPU: not used.
        let (noise, dir) = measurement(
            "noise",
            &[
                ("C1", [100.0, 100.0, 100.0], calibration),
                ("S1", [30.0, 36.0, 40.0], [1.3, 1.0, 1.1]),
                ("S2", [40.0, 48.0, 53.0], [1.3, 1.0, 1.1]),
                ("S3", [60.0, 60.0, 60.0], [1.0, 1.2, 1.3]),
                ("L1", [50.0, 50.0, 50.0], [1.0, 1.2, 1.3]),
            ],
        );
        let speeds = Speeds::of(&noise).expect("read").expect("recorded");
        let verdict = speeds.verdict(&noise);
        assert!(!verdict.used, "{}", verdict.text());
        assert!(verdict.text().contains("not used"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn protocols_are_read_as_the_script_writes_them() {
        let text =
            "{\n  \"C1_settle_s\": 30,\n  \"C1_speed_s\": 0.68,\n  \"C3_cache_dropped\": true,\n";
        let read = parse_protocol(text).expect("read");
        assert!(read.contains(&("C1_speed_s".to_string(), 0.68)));
        assert!(read.contains(&("C1_settle_s".to_string(), 30.0)));
        assert_eq!(read.len(), 2, "booleans are left out");
        let closed = "{\n  \"C1_speed_s\": 0.7,\n}\n";
        assert_eq!(
            parse_protocol(closed).expect("read"),
            [("C1_speed_s".to_string(), 0.7)]
        );
        assert!(parse_protocol("[1, 2]").is_err());
    }

    /// A drop counts where most repeats that recorded it did it: one that
    /// failed in two repeats of three (not root) left the cache warm.
    #[test]
    fn the_page_cache_drops_are_read_from_the_repeats_protocols() {
        let (measurement, dir) = measurement("drops", &[("C1", [1.0; 3], [1.0; 3])]);
        let drops = [
            "  \"S3_cache_dropped\": true,\n  \"D25_cache_dropped\": true,\n",
            "  \"S3_cache_dropped\": true,\n  \"D25_cache_dropped\": false,\n",
            "  \"S3_cache_dropped\": false,\n  \"D25_cache_dropped\": false,\n",
        ];
        for (repeat, drop) in (1..=3).zip(drops) {
            let file = dir.join(format!("repeat-{repeat}")).join("protocol.json");
            let text = std::fs::read_to_string(&file).expect("written above");
            std::fs::write(&file, format!("{text}{drop}")).expect("written");
        }
        let dropped = caches_dropped(&measurement).expect("read");
        assert_eq!(dropped.into_iter().collect::<Vec<_>>(), ["S3"]);
        let _ = std::fs::remove_dir_all(dir);
    }
}
