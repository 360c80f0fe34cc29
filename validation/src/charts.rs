//! The scorecard's charts, drawn like the reports' own: `scorecard` (each
//! published figure's relative error, the tolerance band shaded), `r2-
//! throughput` and `r2-compactions` (2.1 and 2.2 over time on one chart, as
//! R2's report draws them), `r4-read-repairs` (the rate of read repairs
//! over R4's read phase, 2.3 and 3.0 on one chart, as its report draws
//! it), `r3-streaming` (the bandwidth streamed into the nodes over each
//! R3 operation), and `r5-latency` (read and write percentiles of
//! each cluster and rate, published beside simulated).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use sim::charts::{human_number, register_font, write_line_chart, COLORS};

use crate::cases::CaseResult;
use crate::scorecard::{FigureRow, Scorecard};

/// Writes every chart into `dir`.
pub fn write_all(dir: &Path, card: &Scorecard, results: &[CaseResult]) -> std::io::Result<()> {
    register_font();
    std::fs::create_dir_all(dir)?;
    scorecard_chart(&dir.join("scorecard.png"), card).map_err(std::io::Error::other)?;
    scorecard_chart(&dir.join("scorecard.svg"), card).map_err(std::io::Error::other)?;
    let r2: Vec<&CaseResult> = results.iter().filter(|r| r.case.run == "R2").collect();
    if !r2.is_empty() {
        write_line_chart(
            dir,
            "r2-throughput",
            "R2: write throughput over time (published averages: 2.1 354K, 2.2 418K)".into(),
            "writes per second",
            r2.iter()
                .map(|r| (r.setup.clone(), r.series.throughput.clone()))
                .collect(),
        )?;
        write_line_chart(
            dir,
            "r2-compactions",
            "R2: running compactions per node (mean over nodes)".into(),
            "compactions",
            r2.iter()
                .map(|r| (r.setup.clone(), r.series.compactions.clone()))
                .collect(),
        )?;
    }
    let r4: Vec<&CaseResult> = results.iter().filter(|r| r.case.run == "R4").collect();
    if !r4.is_empty() {
        write_line_chart(
            dir,
            "r4-read-repairs",
            "R4: rows repaired by QUORUM reads, by seconds into the read phase (published: 2.3 decaying, 3.0 zero)"
                .into(),
            "rows repaired per second",
            r4.iter()
                .map(|r| (r.setup.clone(), r.series.read_repairs.clone()))
                .collect(),
        )?;
    }
    let r3: Vec<&CaseResult> = results.iter().filter(|r| r.case.run == "R3").collect();
    if !r3.is_empty() {
        write_line_chart(
            dir,
            "r3-streaming",
            "R3: bandwidth the nodes take in from streams (an added node's, as the report's Figure 1)"
                .into(),
            "MB/s received",
            r3.iter()
                .map(|r| (format!("{} ({})", r.case.id, r.setup), r.series.stream_in.clone()))
                .collect(),
        )?;
    }
    for extension in ["png", "svg"] {
        r5_chart(&dir.join(format!("r5-latency.{extension}")), card)
            .map_err(std::io::Error::other)?;
    }
    Ok(())
}

fn backend_error<E: std::fmt::Debug>(error: E) -> String {
    format!("{error:?}")
}

/// Relative error per simulated figure, one bar each, the tolerance shaded.
fn scorecard_chart(path: &Path, card: &Scorecard) -> Result<(), String> {
    let rows: Vec<_> = card
        .figures
        .iter()
        .filter(|f| f.relative_error.is_some())
        .collect();
    let height = 120 + 18 * rows.len() as u32;
    if path.extension().is_some_and(|e| e == "svg") {
        draw_scorecard(
            SVGBackend::new(path, (1300, height)).into_drawing_area(),
            &rows,
        )
    } else {
        draw_scorecard(
            BitMapBackend::new(path, (1300, height)).into_drawing_area(),
            &rows,
        )
    }
}

fn draw_scorecard<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    rows: &[&FigureRow],
) -> Result<(), String> {
    {
        root.fill(&WHITE).map_err(backend_error)?;
        let limit = rows
            .iter()
            .filter_map(|f| f.relative_error)
            .fold(1.0f64, |m, e| m.max(e.abs()))
            .min(20.0)
            * 1.05;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Scorecard: simulated vs published, relative error",
                ("sans-serif", 22),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(430)
            .build_cartesian_2d(-limit..limit, 0f64..rows.len().max(1) as f64)
            .map_err(backend_error)?;
        let labels: Vec<String> = rows
            .iter()
            .map(|f| format!("{} {}: {}", f.run, f.setup, f.figure))
            .collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows.len().max(1))
            .y_label_formatter(&|y| {
                let index = y.floor() as usize;
                labels.get(index).cloned().unwrap_or_default()
            })
            .x_label_formatter(&|x| format!("{:+.0}%", x * 100.0))
            .x_desc("(simulated - published) / published")
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(backend_error)?;
        for (index, f) in rows.iter().enumerate() {
            let y = index as f64;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(-f.tolerance, y + 0.05), (f.tolerance, y + 0.95)],
                    RGBColor(220, 235, 220).filled(),
                )))
                .map_err(backend_error)?;
            let error = f.relative_error.unwrap_or(0.0).clamp(-limit, limit);
            let color = if f.pass == Some(true) {
                COLORS[2]
            } else {
                COLORS[1]
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y + 0.2), (error, y + 0.8)],
                    color.filled(),
                )))
                .map_err(backend_error)?;
        }
        root.present().map_err(backend_error)
    }
}

/// R5: p95, p99 and p99.9 of reads and writes per cluster and rate,
/// published (light) beside simulated (dark), on a log scale.
fn r5_chart(path: &Path, card: &Scorecard) -> Result<(), String> {
    let setups: Vec<String> = {
        let mut setups: Vec<String> = card
            .figures
            .iter()
            .filter(|f| f.run == "R5" && f.kind == "latency")
            .map(|f| f.setup.clone())
            .collect();
        setups.dedup();
        setups
    };
    let metrics = [
        "read latency p95",
        "read latency p99",
        "read latency p99.9",
        "write latency p95",
        "write latency p99",
        "write latency p99.9",
    ];
    let size = (380 * setups.len().max(1) as u32, 520);
    if path.extension().is_some_and(|e| e == "svg") {
        draw_r5(
            SVGBackend::new(path, size).into_drawing_area(),
            card,
            &setups,
            &metrics,
        )
    } else {
        draw_r5(
            BitMapBackend::new(path, size).into_drawing_area(),
            card,
            &setups,
            &metrics,
        )
    }
}

fn draw_r5<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    card: &Scorecard,
    setups: &[String],
    metrics: &[&str],
) -> Result<(), String> {
    {
        root.fill(&WHITE).map_err(backend_error)?;
        let root = root
            .titled(
                "R5: latency percentiles, published (light) and simulated (dark)",
                ("sans-serif", 18),
            )
            .map_err(backend_error)?;
        let panels = root.split_evenly((1, setups.len().max(1)));
        for (panel, setup) in panels.iter().zip(setups) {
            let mut chart = ChartBuilder::on(panel)
                .caption(setup.as_str(), ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(60)
                .y_label_area_size(50)
                .build_cartesian_2d(0f64..metrics.len() as f64, (0.1f64..1000.0).log_scale())
                .map_err(backend_error)?;
            chart
                .configure_mesh()
                // Key points every half unit; only the group centres
                // (0.5, 1.5, ...) are named, under their two bars.
                .x_labels(2 * metrics.len() + 1)
                .x_label_formatter(&|x| {
                    if (x.fract() - 0.5).abs() > 1e-6 {
                        return String::new();
                    }
                    metrics
                        .get(x.floor() as usize)
                        .map(|m| m.replace(" latency ", " "))
                        .unwrap_or_default()
                })
                .y_label_formatter(&|y| format!("{} ms", human_number(*y)))
                .label_style(("sans-serif", 11))
                .draw()
                .map_err(backend_error)?;
            for (index, metric) in metrics.iter().enumerate() {
                let Some(f) = card
                    .figures
                    .iter()
                    .find(|f| f.run == "R5" && &f.setup == setup && f.figure == **metric)
                else {
                    continue;
                };
                let x = index as f64;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x + 0.1, 0.1), (x + 0.48, f.published.max(0.1))],
                        RGBColor(158, 202, 225).filled(),
                    )))
                    .map_err(backend_error)?;
                if let Some(simulated) = f.simulated {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x + 0.52, 0.1), (x + 0.9, simulated.max(0.1))],
                            COLORS[0].filled(),
                        )))
                        .map_err(backend_error)?;
                }
            }
        }
        root.present().map_err(backend_error)
    }
}
