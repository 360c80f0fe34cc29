//! The scorecard: every published figure beside what the twin simulated,
//! and every published comparison beside the simulated one.
//!
//! A figure passes when its relative error is within its kind's tolerance
//! (`Kind::tolerance`: 30% for latencies, 15% for the rest). A comparison
//! (candidate / baseline of one metric) is in the right direction when both
//! ratios are on the same side of 1, and of the right size when the
//! simulated change (ratio - 1) is within a third of the published change.
//! A shape (a series the report charts and describes in words, such as
//! R4's read repairs: zero for 3.0, decaying for 2.3) passes when the
//! simulated series does what the words say, judged on the means of its
//! first and last thirds.
//!
//! Every figure says its basis (`published::basis`): *fitted* (a constant
//! was fitted to it, named), *derived* (arithmetic from the inputs) or
//! *predicted*; the headline counts the predicted figures first, the pass
//! rate that tests the twin. A comparison says whether either side is
//! fitted.

use serde::{Deserialize, Serialize};

use crate::cases::CaseResult;
use crate::published::{
    Bound, Comparison, Figure, Kind, Shape, ShapeKind, Unit, COMPARISONS, FIGURES, HOLDS_WITHIN,
    REPORTS, SHAPES,
};

/// Status of a figure that was simulated.
pub const SIMULATED: &str = "simulated";
/// Status of a figure whose case was not run (`--case`).
pub const NOT_RUN: &str = "not run";
/// Status of a figure its case ran but did not measure.
pub const NOT_MEASURED: &str = "the case did not measure it";

/// One case as the scorecard lists it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseRow {
    /// Case id.
    pub id: String,
    /// Published run.
    pub run: String,
    /// Scenario file, if any.
    pub scenario: Option<String>,
    /// Simulated seconds.
    pub simulated_seconds: f64,
    /// Seconds left out at the start.
    pub warmup_seconds: f64,
    /// How the run departs from the published one.
    pub shortened: Option<String>,
    /// Shard sampling.
    pub sampled: Option<String>,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
    /// Results folder.
    pub results_dir: Option<String>,
}

/// One published figure on the scorecard.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FigureRow {
    /// The case that simulated it.
    pub case: Option<String>,
    /// Published run.
    pub run: String,
    /// Setup.
    pub setup: String,
    /// Metric.
    pub figure: String,
    /// Kind (throughput, latency, load, duration, cost, device, probability).
    pub kind: String,
    /// Unit as written on the scorecard.
    pub unit: String,
    /// Published value.
    pub published: f64,
    /// Simulated value.
    pub simulated: Option<f64>,
    /// (simulated - published) / published.
    pub relative_error: Option<f64>,
    /// Largest relative error that passes.
    pub tolerance: f64,
    /// The report gives a bound ("below `published`"): the figure passes
    /// below it, whatever its relative error.
    #[serde(default)]
    pub below: bool,
    /// Whether it passes.
    pub pass: Option<bool>,
    /// `simulated`, `not run`, or what it needs.
    pub status: String,
    /// The report it comes from.
    pub source: String,
    /// `fitted`, `derived` or `predicted` (`published::Basis`).
    #[serde(default)]
    pub basis: String,
    /// The constant fitted to it, or why it is derived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis_detail: Option<String>,
    /// Where it misses: the mechanism or measurement the twin lacks
    /// (CALIBRATION.md's account).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// One published comparison on the scorecard.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// Published run.
    pub run: String,
    /// Metric.
    pub metric: String,
    /// Baseline setup.
    pub baseline: String,
    /// Candidate setup.
    pub candidate: String,
    /// Candidate / baseline, published.
    pub published_ratio: f64,
    /// Candidate / baseline, simulated.
    pub simulated_ratio: Option<f64>,
    /// Both ratios on the same side of 1.
    pub direction_right: Option<bool>,
    /// The simulated change within a third of the published change.
    pub size_within_third: Option<bool>,
    /// Direction and size both right.
    pub pass: Option<bool>,
    /// Whether a constant was fitted to either side's figure (then the
    /// comparison is not a prediction either).
    #[serde(default)]
    pub fitted_side: bool,
}

/// One published shape on the scorecard.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShapeRow {
    /// The case that simulated it.
    pub case: Option<String>,
    /// Published run.
    pub run: String,
    /// Setup.
    pub setup: String,
    /// The series.
    pub metric: String,
    /// What the report says of it.
    pub published: String,
    /// Mean of the simulated series' first third.
    pub first_third: Option<f64>,
    /// Mean of its last third.
    pub last_third: Option<f64>,
    /// Whether it does what the report says.
    pub pass: Option<bool>,
    /// `simulated`, `not run`, or what it needs.
    pub status: String,
}

/// Counts for the headline.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Totals {
    /// Published figures.
    pub figures: usize,
    /// Figures simulated.
    pub simulated: usize,
    /// Simulated figures within tolerance.
    pub passed: usize,
    /// Published comparisons.
    pub comparisons: usize,
    /// Comparisons simulated.
    pub comparisons_simulated: usize,
    /// Comparisons in the right direction and size.
    pub comparisons_passed: usize,
    /// Comparisons in the right direction.
    pub comparisons_right_direction: usize,
    /// Server-load figures simulated.
    pub loads: usize,
    /// Server-load figures within tolerance.
    pub loads_passed: usize,
    /// Published shapes.
    #[serde(default)]
    pub shapes: usize,
    /// Shapes simulated.
    #[serde(default)]
    pub shapes_simulated: usize,
    /// Shapes that do what the report says.
    #[serde(default)]
    pub shapes_passed: usize,
    /// Predicted figures simulated, and those within tolerance: the pass
    /// rate that counts.
    #[serde(default)]
    pub predicted: usize,
    /// See `predicted`.
    #[serde(default)]
    pub predicted_passed: usize,
    /// Fitted figures simulated, and those within tolerance.
    #[serde(default)]
    pub fitted: usize,
    /// See `fitted`.
    #[serde(default)]
    pub fitted_passed: usize,
    /// Derived figures simulated, and those within tolerance.
    #[serde(default)]
    pub derived: usize,
    /// See `derived`.
    #[serde(default)]
    pub derived_passed: usize,
}

/// The whole scorecard (the `--json` output).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scorecard {
    /// Shortened runs (`--quick`).
    pub quick: bool,
    /// Wall-clock seconds of the whole validation.
    pub wall_seconds: f64,
    /// The cases run.
    pub cases: Vec<CaseRow>,
    /// Every published figure.
    pub figures: Vec<FigureRow>,
    /// Every published comparison.
    pub comparisons: Vec<ComparisonRow>,
    /// Every published shape.
    #[serde(default)]
    pub shapes: Vec<ShapeRow>,
    /// Counts.
    pub summary: Totals,
    /// R5's plan against the report's clusters ([`crate::plan_score`]),
    /// apart from the figures; empty where no stored plan was read.
    #[serde(default)]
    pub plan: Vec<crate::plan_score::PlanScoreRow>,
}

fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::Milliseconds => "ms",
        Unit::Microseconds => "us",
        Unit::Seconds => "s",
        Unit::OpsPerSecond => "ops/s",
        Unit::Iops => "IOPS",
        Unit::Percent => "%",
        Unit::QueueDepth => "qd",
        Unit::Dollars => "$",
        Unit::MegabytesPerSecond => "MB/s",
    }
}

fn source_of(run: &str) -> String {
    REPORTS
        .iter()
        .find(|report| report.run == run)
        .map_or_else(String::new, |report| report.source.to_string())
}

/// The case that simulates `figure`: the one of its run whose setup is the
/// figure's, or (for the per-cluster figures of R5: costs, PCDF) begins
/// with it.
fn case_for<'a>(figure: &Figure, results: &'a [CaseResult]) -> Option<&'a CaseResult> {
    let same_run = || results.iter().filter(|r| r.case.run == figure.run);
    // A run may have several cases per setup (R3: one per operation): the
    // one that measured the figure.
    let exact = || same_run().filter(|r| r.setup == figure.setup);
    let prefixed = || {
        same_run().filter(|r| {
            r.setup
                .strip_prefix(figure.setup)
                .is_some_and(|rest| rest.starts_with(", "))
        })
    };
    exact()
        .find(|r| r.get(figure.metric).is_some())
        .or_else(|| exact().next())
        .or_else(|| prefixed().find(|r| r.get(figure.metric).is_some()))
        .or_else(|| prefixed().next())
}

/// Builds the scorecard from the cases' results.
pub fn build(results: &[CaseResult], quick: bool, wall_seconds: f64) -> Scorecard {
    let figures: Vec<FigureRow> = FIGURES
        .iter()
        .map(|figure| figure_row(figure, results))
        .collect();
    let comparisons: Vec<ComparisonRow> = COMPARISONS
        .iter()
        .map(|comparison| comparison_row(comparison, &figures))
        .collect();
    let shapes: Vec<ShapeRow> = SHAPES
        .iter()
        .map(|shape| shape_row(shape, results))
        .collect();
    let simulated: Vec<&FigureRow> = figures.iter().filter(|f| f.simulated.is_some()).collect();
    let loads: Vec<&&FigureRow> = simulated
        .iter()
        .filter(|f| f.kind == Kind::Load.name())
        .collect();
    // (simulated, passed) among the figures of a basis.
    let of_basis = |basis: &str| {
        let of: Vec<&&FigureRow> = simulated.iter().filter(|f| f.basis == basis).collect();
        (of.len(), of.iter().filter(|f| f.pass == Some(true)).count())
    };
    let summary = Totals {
        figures: figures.len(),
        simulated: simulated.len(),
        passed: simulated.iter().filter(|f| f.pass == Some(true)).count(),
        comparisons: comparisons.len(),
        comparisons_simulated: comparisons
            .iter()
            .filter(|c| c.simulated_ratio.is_some())
            .count(),
        comparisons_passed: comparisons.iter().filter(|c| c.pass == Some(true)).count(),
        comparisons_right_direction: comparisons
            .iter()
            .filter(|c| c.direction_right == Some(true))
            .count(),
        loads: loads.len(),
        loads_passed: loads.iter().filter(|f| f.pass == Some(true)).count(),
        shapes: shapes.len(),
        shapes_simulated: shapes.iter().filter(|s| s.pass.is_some()).count(),
        shapes_passed: shapes.iter().filter(|s| s.pass == Some(true)).count(),
        predicted: of_basis("predicted").0,
        predicted_passed: of_basis("predicted").1,
        fitted: of_basis("fitted").0,
        fitted_passed: of_basis("fitted").1,
        derived: of_basis("derived").0,
        derived_passed: of_basis("derived").1,
    };
    let cases = results.iter().map(|r| r.case.clone()).collect();
    Scorecard {
        quick,
        wall_seconds,
        cases,
        figures,
        comparisons,
        shapes,
        summary,
        plan: Vec::new(),
    }
}

/// Whether the case's series does what `shape` says.
fn shape_row(shape: &Shape, results: &[CaseResult]) -> ShapeRow {
    let mut row = ShapeRow {
        case: None,
        run: shape.run.into(),
        setup: shape.setup.into(),
        metric: shape.metric.into(),
        published: shape.statement.into(),
        first_third: None,
        last_third: None,
        pass: None,
        status: NOT_RUN.into(),
    };
    let Some(case) = results
        .iter()
        .find(|r| r.case.run == shape.run && r.setup == shape.setup)
    else {
        return row;
    };
    row.case = Some(case.case.id.clone());
    let series = case.series.named(shape.metric).unwrap_or(&[]);
    if series.len() < 3 {
        row.status = NOT_MEASURED.into();
        return row;
    }
    let third = series.len() / 3;
    let mean = |points: &[(f64, f64)]| {
        round_sig(points.iter().map(|(_, value)| value).sum::<f64>() / points.len() as f64)
    };
    let (first, last) = (
        mean(&series[..third]),
        mean(&series[series.len() - third..]),
    );
    row.first_third = Some(first);
    row.last_third = Some(last);
    row.pass = Some(match shape.shape {
        ShapeKind::Zero => series.iter().all(|(_, value)| *value == 0.0),
        ShapeKind::Decays => first > 0.0 && last < first,
        ShapeKind::Holds => first > 0.0 && ((last - first) / first).abs() <= HOLDS_WITHIN,
    });
    row.status = SIMULATED.into();
    row
}

fn figure_row(figure: &Figure, results: &[CaseResult]) -> FigureRow {
    let mut row = FigureRow {
        case: None,
        run: figure.run.into(),
        setup: figure.setup.into(),
        figure: figure.metric.into(),
        kind: figure.kind.name().into(),
        unit: unit_name(figure.unit).into(),
        published: figure.value,
        simulated: None,
        relative_error: None,
        tolerance: figure.kind.tolerance(),
        below: figure.bound == Bound::Below,
        pass: None,
        status: NOT_RUN.into(),
        source: source_of(figure.run),
        basis: crate::published::basis(figure).name().into(),
        basis_detail: crate::published::basis(figure).detail().map(str::to_string),
        missing: None,
    };
    let Some(case) = case_for(figure, results) else {
        return row;
    };
    row.case = Some(case.case.id.clone());
    if let Some(value) = case.get(figure.metric) {
        let error = (value - figure.value) / figure.value;
        row.simulated = Some(round_sig(value));
        row.relative_error = Some((error * 1000.0).round() / 1000.0);
        row.pass = Some(match figure.bound {
            Bound::Value => error.abs() <= row.tolerance,
            Bound::Below => value < figure.value,
        });
        if row.pass == Some(false) {
            row.missing = Some(
                crate::published::miss(figure)
                    .unwrap_or("not named yet: CALIBRATION.md has no account of this miss")
                    .to_string(),
            );
        }
        row.status = SIMULATED.into();
    } else {
        row.status = NOT_MEASURED.into();
    }
    row
}

/// Rounds to 4 significant digits, so the JSON carries no float noise.
fn round_sig(value: f64) -> f64 {
    if value == 0.0 || !value.is_finite() {
        return value;
    }
    let digits = 4 - value.abs().log10().ceil() as i32;
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

fn comparison_row(comparison: &Comparison, figures: &[FigureRow]) -> ComparisonRow {
    let row = |setup: &str| {
        figures
            .iter()
            .find(|f| f.run == comparison.run && f.setup == setup && f.figure == comparison.metric)
    };
    let simulated = |setup: &str| row(setup).and_then(|f| f.simulated);
    let fitted_side = [comparison.baseline, comparison.candidate]
        .iter()
        .any(|setup| row(setup).is_some_and(|f| f.basis == "fitted"));
    let published_ratio = comparison.published_ratio();
    let simulated_ratio = match (
        simulated(comparison.baseline),
        simulated(comparison.candidate),
    ) {
        (Some(baseline), Some(candidate)) if baseline > 0.0 => Some(candidate / baseline),
        _ => None,
    };
    let direction_right =
        simulated_ratio.map(|ratio| (ratio - 1.0).signum() == (published_ratio - 1.0).signum());
    let size_within_third = simulated_ratio.map(|ratio| {
        let (published, simulated) = (published_ratio - 1.0, ratio - 1.0);
        (simulated - published).abs() <= published.abs() / 3.0
    });
    ComparisonRow {
        run: comparison.run.into(),
        metric: comparison.metric.into(),
        baseline: comparison.baseline.into(),
        candidate: comparison.candidate.into(),
        published_ratio: round_sig(published_ratio),
        simulated_ratio: simulated_ratio.map(round_sig),
        direction_right,
        size_within_third,
        pass: direction_right.zip(size_within_third).map(|(d, s)| d && s),
        fitted_side,
    }
}

/// A figure's value as people write it: 300K, 1.2M, 4.5 ms.
pub fn human(value: f64, unit: &str) -> String {
    let number = if value.abs() >= 1e6 {
        format!("{:.2}M", value / 1e6)
    } else if value.abs() >= 1e4 {
        format!("{:.0}K", value / 1e3)
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    };
    match unit {
        "$" => format!("${number}"),
        "%" => format!("{number}%"),
        "ops/s" | "IOPS" | "qd" => number,
        _ => format!("{number} {unit}"),
    }
}

/// A setup ("R5 scylla-2.2 ...") and some of its figures' names.
type SetupFigures<'a> = (String, Vec<&'a str>);

impl Scorecard {
    /// The scorecard as text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "{:<5} {:<38} {:<42} {:>11} {:>11} {:>8} {:>5}  {}\n",
            "run", "setup", "figure", "published", "simulated", "error", "pass", "basis"
        ));
        for f in &self.figures {
            let (simulated, error, pass) = match (f.simulated, f.relative_error, f.pass) {
                (Some(s), Some(e), Some(p)) => (
                    human(s, &f.unit),
                    format!("{:+.0}%", e * 100.0),
                    if p { "yes" } else { "NO" }.to_string(),
                ),
                _ => (f.status.clone(), String::new(), String::new()),
            };
            out.push_str(&format!(
                "{:<5} {:<38} {:<42} {:>11} {:>11} {:>8} {:>5}  {}\n",
                f.run,
                f.setup,
                f.figure,
                if f.below {
                    format!("< {}", human(f.published, &f.unit))
                } else {
                    human(f.published, &f.unit)
                },
                simulated,
                error,
                pass,
                f.basis
            ));
        }
        out.push_str(&format!(
            "\n{:<5} {:<20} {:<58} {:>9} {:>9} {:>9} {:>5}  {}\n",
            "run",
            "metric",
            "candidate / baseline",
            "published",
            "simulated",
            "direction",
            "size",
            "sides"
        ));
        for c in &self.comparisons {
            let yes_no = |v: Option<bool>| match v {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            };
            out.push_str(&format!(
                "{:<5} {:<20} {:<58} {:>9.3} {:>9} {:>9} {:>5}  {}\n",
                c.run,
                c.metric,
                format!("{} / {}", c.candidate, c.baseline),
                c.published_ratio,
                c.simulated_ratio
                    .map_or_else(|| "-".to_string(), |r| format!("{r:.3}")),
                yes_no(c.direction_right),
                yes_no(c.size_within_third),
                if c.fitted_side {
                    "a side fitted"
                } else {
                    "predicted"
                },
            ));
        }
        if !self.shapes.is_empty() {
            out.push_str(&format!(
                "\n{:<5} {:<11} {:<24} {:<42} {:>11} {:>11} {:>5}\n",
                "run", "setup", "series", "published", "first third", "last third", "pass"
            ));
        }
        for shape in &self.shapes {
            let value =
                |v: Option<f64>| v.map_or_else(|| shape.status.clone(), |v| format!("{v:.1}"));
            out.push_str(&format!(
                "{:<5} {:<11} {:<24} {:<42} {:>11} {:>11} {:>5}\n",
                shape.run,
                shape.setup,
                shape.metric,
                shape.published,
                value(shape.first_third),
                value(shape.last_third),
                match shape.pass {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "-",
                }
            ));
        }
        let s = &self.summary;
        let share = |passed: usize, of: usize| 100.0 * passed as f64 / of.max(1) as f64;
        out.push_str(&format!(
            "\npredicted: {} of {} within tolerance ({:.0}%); fitted: {} of {}; derived: {} of {}\n",
            s.predicted_passed,
            s.predicted,
            share(s.predicted_passed, s.predicted),
            s.fitted_passed,
            s.fitted,
            s.derived_passed,
            s.derived,
        ));
        out.push_str(&format!(
            "figures: {} published, {} simulated, {} within tolerance ({:.0}%); server loads: {} of {} within 15%\n\
             comparisons: {} published, {} simulated, {} in the right direction, {} also of the right size\n\
             shapes: {} published, {} simulated, {} as the report describes\n",
            s.figures,
            s.simulated,
            s.passed,
            100.0 * s.passed as f64 / s.simulated.max(1) as f64,
            s.loads_passed,
            s.loads,
            s.comparisons,
            s.comparisons_simulated,
            s.comparisons_right_direction,
            s.comparisons_passed,
            s.shapes,
            s.shapes_simulated,
            s.shapes_passed,
        ));
        // Each miss once, with the figures it explains by setup.
        let mut misses: Vec<(&str, Vec<SetupFigures>)> = Vec::new();
        for f in &self.figures {
            let Some(missing) = f.missing.as_deref() else {
                continue;
            };
            let setup = format!("{} {}", f.run, f.setup);
            let index = match misses.iter().position(|(what, _)| *what == missing) {
                Some(index) => index,
                None => {
                    misses.push((missing, Vec::new()));
                    misses.len() - 1
                }
            };
            let setups = &mut misses[index].1;
            match setups.iter_mut().find(|(name, _)| *name == setup) {
                Some((_, figures)) => figures.push(&f.figure),
                None => setups.push((setup, vec![&f.figure])),
            }
        }
        if !misses.is_empty() {
            out.push_str("missed, and what the twin lacks there (CALIBRATION.md):\n");
            for (what, setups) in &misses {
                let figures: Vec<String> = setups
                    .iter()
                    .map(|(setup, figures)| format!("{setup}: {}", figures.join(", ")))
                    .collect();
                out.push_str(&format!("- {}\n    {what}\n", figures.join("; ")));
            }
        }
        for case in &self.cases {
            let mut notes = Vec::new();
            if let Some(text) = &case.shortened {
                notes.push(text.clone());
            }
            if let Some(text) = &case.sampled {
                notes.push(format!("sampled: {text}"));
            }
            if case.warmup_seconds > 0.0 {
                notes.push(format!("first {:.0} s left out", case.warmup_seconds));
            }
            out.push_str(&format!(
                "case {:<32} {:>7.1} wall s  {}\n",
                case.id,
                case.wall_seconds,
                notes.join("; ")
            ));
        }
        out
    }

    /// Figures that passed in `baseline` and fail (or are missing) here:
    /// what `--require` refuses.
    pub fn regressions(&self, baseline: &Scorecard) -> Vec<String> {
        let mut lost = Vec::new();
        for before in baseline.figures.iter().filter(|f| f.pass == Some(true)) {
            let now = self.figures.iter().find(|f| {
                f.run == before.run && f.setup == before.setup && f.figure == before.figure
            });
            match now {
                Some(now) if now.pass == Some(true) => {}
                Some(now) if now.status == NOT_RUN => {}
                Some(now) => lost.push(format!(
                    "{} {} {}: passed in the baseline ({} vs published {}), now {}",
                    before.run,
                    before.setup,
                    before.figure,
                    before
                        .simulated
                        .map_or_else(String::new, |v| human(v, &before.unit)),
                    human(before.published, &before.unit),
                    now.simulated.map_or_else(
                        || now.status.clone(),
                        |v| format!(
                            "{} ({:+.0}%)",
                            human(v, &now.unit),
                            now.relative_error.unwrap_or(0.0) * 100.0
                        )
                    )
                )),
                None => lost.push(format!(
                    "{} {} {}: in the baseline, not on this scorecard",
                    before.run, before.setup, before.figure
                )),
            }
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::CaseSeries;

    fn case(run: &str, setup: &str, measured: &[(&str, f64)]) -> CaseResult {
        CaseResult {
            case: CaseRow {
                id: format!("{run}-{setup}"),
                run: run.into(),
                scenario: None,
                simulated_seconds: 1.0,
                warmup_seconds: 0.0,
                shortened: None,
                sampled: None,
                wall_seconds: 0.0,
                results_dir: None,
            },
            setup: setup.into(),
            measured: measured.iter().map(|(m, v)| (m.to_string(), *v)).collect(),
            series: CaseSeries::default(),
        }
    }

    #[test]
    fn figures_pass_within_their_kind_tolerance_and_comparisons_check_direction_and_size() {
        let results = [
            case(
                "R1",
                "scylla-2.1",
                &[("read latency p99", 7.8 * 1.29), ("server load", 58.0)],
            ),
            case(
                "R1",
                "scylla-2.2",
                &[("read latency p99", 4.5 * 0.69), ("server load", 50.0)],
            ),
        ];
        let card = build(&results, true, 0.0);
        let row = |setup: &str, figure: &str| {
            card.figures
                .iter()
                .find(|f| f.run == "R1" && f.setup == setup && f.figure == figure)
                .unwrap()
                .clone()
        };
        assert_eq!(row("scylla-2.1", "read latency p99").pass, Some(true));
        assert_eq!(
            row("scylla-2.2", "read latency p99").pass,
            Some(false),
            "-31%"
        );
        assert_eq!(row("scylla-2.1", "server load").pass, Some(false), "+16%");
        assert_eq!(row("scylla-2.2", "server load").pass, Some(true));
        assert_eq!(row("scylla-2.1", "read latency mean").status, NOT_MEASURED);
        let r3 = card.figures.iter().find(|f| f.run == "R3").unwrap();
        assert_eq!(r3.status, NOT_RUN, "R3 has scenarios, not run here");
        let r4 = card.figures.iter().find(|f| f.run == "R4").unwrap();
        assert_eq!(r4.status, NOT_RUN, "R4 has scenarios, not run here");
        let p99 = card
            .comparisons
            .iter()
            .find(|c| c.run == "R1" && c.metric == "read latency p99")
            .unwrap();
        // Published 4.5 / 7.8 = 0.577; simulated 3.105 / 10.06 = 0.309:
        // right direction, change -0.69 against -0.42 is too large.
        assert_eq!(p99.direction_right, Some(true));
        assert_eq!(p99.size_within_third, Some(false));
        assert_eq!(card.summary.loads, 2);
        assert_eq!(card.summary.loads_passed, 1);
    }

    #[test]
    fn shapes_pass_when_the_series_does_what_the_report_says() {
        let with_repairs = |setup: &str, values: &[f64]| {
            let mut result = case("R4", setup, &[]);
            result.series.read_repairs = values
                .iter()
                .enumerate()
                .map(|(second, value)| (second as f64, *value))
                .collect();
            result
        };
        let shape = |card: &Scorecard, setup: &str| {
            card.shapes
                .iter()
                .find(|s| s.run == "R4" && s.setup == setup)
                .unwrap()
                .clone()
        };
        let good = build(
            &[
                with_repairs("scylla-2.3", &[900.0, 800.0, 600.0, 500.0, 300.0, 200.0]),
                with_repairs("scylla-3.0", &[0.0; 6]),
            ],
            true,
            0.0,
        );
        let decays = shape(&good, "scylla-2.3");
        assert_eq!(
            (decays.first_third, decays.last_third),
            (Some(850.0), Some(250.0))
        );
        assert_eq!(decays.pass, Some(true));
        assert_eq!(shape(&good, "scylla-3.0").pass, Some(true));
        assert_eq!(good.summary.shapes_passed, 2);
        let bad = build(
            &[
                with_repairs("scylla-2.3", &[100.0, 200.0, 300.0, 300.0, 400.0, 500.0]),
                with_repairs("scylla-3.0", &[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
            ],
            true,
            0.0,
        );
        assert_eq!(shape(&bad, "scylla-2.3").pass, Some(false), "it grows");
        assert_eq!(shape(&bad, "scylla-3.0").pass, Some(false), "one repair");
        assert_eq!(shape(&build(&[], true, 0.0), "scylla-2.3").status, NOT_RUN);
    }

    #[test]
    fn require_names_figures_that_passed_in_the_baseline_and_fail_now() {
        let good = [case("R1", "scylla-2.2", &[("server load", 52.0)])];
        let bad = [case("R1", "scylla-2.2", &[("server load", 80.0)])];
        let (baseline, now) = (build(&good, true, 0.0), build(&bad, true, 0.0));
        assert!(baseline.regressions(&baseline).is_empty());
        let lost = now.regressions(&baseline);
        assert_eq!(lost.len(), 1, "{lost:?}");
        assert!(lost[0].contains("server load"), "{lost:?}");
        // A case left out with --case is not a regression.
        assert!(build(&[], true, 0.0).regressions(&baseline).is_empty());
    }

    #[test]
    fn per_cluster_figures_come_from_the_case_whose_setup_extends_theirs() {
        let results = [case(
            "R5",
            "scylla-2.2 4 x i3.metal, 300K",
            &[("1-year reserved cost, all upfront", 111_427.0)],
        )];
        let card = build(&results, true, 0.0);
        let cost = card
            .figures
            .iter()
            .find(|f| f.setup == "scylla-2.2 4 x i3.metal" && f.kind == "cost")
            .unwrap();
        assert_eq!(
            cost.case.as_deref(),
            Some("R5-scylla-2.2 4 x i3.metal, 300K")
        );
        assert_eq!(cost.pass, Some(true));
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(human(300_000.0, "ops/s"), "300K");
        assert_eq!(human(1_234_000.0, "IOPS"), "1.23M");
        assert_eq!(human(4.5, "ms"), "4.50 ms");
        assert_eq!(human(112_100.0, "$"), "$112K");
        assert_eq!(human(70.0, "%"), "70.0%");
    }
}
