//! Charts of a run, drawn from its time series: PNG and SVG files in
//! `charts/` of the results folder.
//!
//! - `throughput`: operations per second per op type;
//! - `latency`: p99 latency per op type;
//! - `compactions`: running compactions per node;
//! - `backlog`: the compaction controller's input (backlog / shard memory)
//!   and the CPU shares it gave compaction, per node.
//!
//! With more than 8 nodes the per-node charts show the mean and the maximum
//! over nodes instead of one line each. The font (DejaVu Sans, Bitstream
//! Vera license, `sim/assets/`) is compiled into the binary, so charts render
//! the same on any machine, with no system fonts installed.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::timeseries::TimeSeries;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 560;
/// The palette every chart draws its series in.
pub const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Lines at most; more nodes are summarised.
const MAX_NODE_LINES: usize = 8;

/// One chart: title, y-axis label, and named series of (seconds, value).
struct Chart {
    file: String,
    title: String,
    x_label: String,
    y_label: String,
    series: Vec<(String, Vec<(f64, f64)>)>,
    /// A dot at every point (charts of a few points each, such as a
    /// sweep's; time series are lines alone).
    markers: bool,
}

/// The x axis of the charts of a run.
const SIMULATED_SECONDS: &str = "simulated seconds";

/// Makes the embedded font the `sans-serif` family plotters draws with
/// (idempotent; every chart writer calls it first).
pub fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans font is a valid TrueType font"));
    });
}

/// Values of column `name` as (time, value) points.
fn column(series: &TimeSeries, name: &str) -> Option<Vec<(f64, f64)>> {
    let index = series.column(name)?;
    Some(
        series
            .rows
            .iter()
            .map(|row| {
                (
                    row[0].parse().unwrap_or(0.0),
                    row[index].parse().unwrap_or(0.0),
                )
            })
            .collect(),
    )
}

/// Per-node lines of `suffix` (`node3_<suffix>`), or mean and max over nodes.
fn node_lines(
    series: &TimeSeries,
    nodes: u32,
    suffix: &str,
    label: &str,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let per_node: Vec<Vec<(f64, f64)>> = (0..nodes)
        .filter_map(|node| column(series, &format!("node{node}_{suffix}")))
        .collect();
    if per_node.len() <= MAX_NODE_LINES {
        return per_node
            .into_iter()
            .enumerate()
            .map(|(node, points)| (format!("node {node} {label}"), points))
            .collect();
    }
    let rows = per_node.first().map_or(0, Vec::len);
    let summary = |combine: fn(&[f64]) -> f64| -> Vec<(f64, f64)> {
        (0..rows)
            .map(|row| {
                let values: Vec<f64> = per_node.iter().map(|points| points[row].1).collect();
                (per_node[0][row].0, combine(&values))
            })
            .collect()
    };
    vec![
        (
            format!("mean {label}"),
            summary(|v| v.iter().sum::<f64>() / v.len() as f64),
        ),
        (
            format!("max {label}"),
            summary(|v| v.iter().copied().fold(f64::MIN, f64::max)),
        ),
    ]
}

fn charts(series: &TimeSeries, ops: &[&str], nodes: u32, scenario: &str) -> Vec<Chart> {
    let per_op = |suffix: &str| -> Vec<(String, Vec<(f64, f64)>)> {
        ops.iter()
            .filter_map(|op| {
                column(series, &format!("{op}_{suffix}")).map(|points| (op.to_string(), points))
            })
            .collect()
    };
    let mut backlog = node_lines(
        series,
        nodes,
        "compaction_backlog",
        "backlog (x shard memory)",
    );
    backlog.extend(
        node_lines(series, nodes, "compaction_shares", "shares / 100")
            .into_iter()
            .map(|(name, points)| {
                (
                    name,
                    points.into_iter().map(|(t, v)| (t, v / 100.0)).collect(),
                )
            }),
    );
    vec![
        Chart {
            file: "throughput".into(),
            title: format!("{scenario}: throughput"),
            x_label: SIMULATED_SECONDS.into(),
            y_label: "operations per second".into(),
            markers: false,
            series: per_op("ops_per_s"),
        },
        Chart {
            file: "latency".into(),
            title: format!("{scenario}: p99 latency per interval"),
            x_label: SIMULATED_SECONDS.into(),
            y_label: "milliseconds".into(),
            markers: false,
            series: per_op("p99_ms"),
        },
        Chart {
            file: "compactions".into(),
            title: format!("{scenario}: running compactions"),
            x_label: SIMULATED_SECONDS.into(),
            y_label: "compactions".into(),
            markers: false,
            series: node_lines(series, nodes, "compactions", "compactions"),
        },
        Chart {
            file: "backlog".into(),
            title: format!("{scenario}: compaction backlog and controller shares"),
            x_label: SIMULATED_SECONDS.into(),
            y_label: "backlog / shard memory; shares / 100".into(),
            markers: false,
            series: backlog,
        },
    ]
}

/// Every x of a chart's points.
fn all_x(chart: &Chart) -> impl Iterator<Item = f64> + '_ {
    chart
        .series
        .iter()
        .flat_map(|(_, points)| points.iter().map(|(x, _)| *x))
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String> {
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("{}: {e:?}", chart.file);
    root.fill(&WHITE).map_err(error)?;
    let all = chart.series.iter().flat_map(|(_, points)| points.iter());
    let (x_max, y_max) = all.fold((1.0f64, 0.0f64), |(x, y), (t, v)| (x.max(*t), y.max(*v)));
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    // A chart of dots spans its points, with room for the first and last;
    // a time series starts at 0.
    let x_min = if chart.markers {
        let low = all_x(chart).fold(f64::INFINITY, f64::min);
        let span = (x_max - low).max(1e-9);
        (low - span * 0.05).max(if low >= 0.0 { 0.0 } else { f64::NEG_INFINITY })
    } else {
        0.0
    };
    let x_max = if chart.markers {
        x_max + (x_max - x_min) * 0.05
    } else {
        x_max
    };
    let mut context = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(x_min..x_max, 0f64..y_max)
        .map_err(error)?;
    context
        .configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .y_label_formatter(&|value| human_number(*value))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(error)?;
    for (index, (name, points)) in chart.series.iter().enumerate() {
        let color = COLORS[index % COLORS.len()];
        context
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(error)?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        if chart.markers {
            context
                .draw_series(
                    points
                        .iter()
                        .map(|&point| Circle::new(point, 4, color.filled())),
                )
                .map_err(error)?;
        }
    }
    if !chart.series.is_empty() {
        context
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(error)?;
    }
    root.present().map_err(error)
}

/// An axis value as people write it: 300K, 1.2M, 0.5, 12.
pub fn human_number(value: f64) -> String {
    let magnitude = value.abs();
    let trim = |text: String| {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    };
    if magnitude >= 1e9 {
        format!("{}G", trim(format!("{:.2}", value / 1e9)))
    } else if magnitude >= 1e6 {
        format!("{}M", trim(format!("{:.2}", value / 1e6)))
    } else if magnitude >= 1e3 {
        format!("{}K", trim(format!("{:.1}", value / 1e3)))
    } else if magnitude >= 10.0 || magnitude == 0.0 {
        trim(format!("{value:.0}"))
    } else {
        trim(format!("{value:.2}"))
    }
}

/// Writes one line chart of named series of (seconds, value) as
/// `<dir>/<file>.png` and `.svg` (for charts drawn from several runs).
pub fn write_line_chart(
    dir: &Path,
    file: &'static str,
    title: String,
    y_label: &'static str,
    series: Vec<(String, Vec<(f64, f64)>)>,
) -> std::io::Result<()> {
    register_font();
    std::fs::create_dir_all(dir)?;
    let chart = Chart {
        file: file.into(),
        title,
        x_label: SIMULATED_SECONDS.into(),
        y_label: y_label.into(),
        series,
        markers: false,
    };
    write_chart(dir, &chart)
}

/// Writes one chart of named series of (x, y) points, a dot at each, as
/// `<dir>/<file>.png` and `.svg` (a metric against a swept value).
pub fn write_xy_chart(
    dir: &Path,
    file: &str,
    title: String,
    x_label: &str,
    y_label: &str,
    series: Vec<(String, Vec<(f64, f64)>)>,
) -> std::io::Result<()> {
    register_font();
    std::fs::create_dir_all(dir)?;
    let chart = Chart {
        file: file.into(),
        title,
        x_label: x_label.into(),
        y_label: y_label.into(),
        series,
        markers: true,
    };
    write_chart(dir, &chart)
}

fn write_chart(dir: &Path, chart: &Chart) -> std::io::Result<()> {
    let png = dir.join(format!("{}.png", chart.file));
    draw(
        BitMapBackend::new(&png, (WIDTH, HEIGHT)).into_drawing_area(),
        chart,
    )
    .map_err(std::io::Error::other)?;
    let svg = dir.join(format!("{}.svg", chart.file));
    draw(
        SVGBackend::new(&svg, (WIDTH, HEIGHT)).into_drawing_area(),
        chart,
    )
    .map_err(std::io::Error::other)
}

/// Writes every chart as `<dir>/<name>.png` and `<dir>/<name>.svg`.
pub fn write_charts(
    dir: &Path,
    series: &TimeSeries,
    ops: &[&str],
    nodes: u32,
    scenario: &str,
) -> std::io::Result<()> {
    register_font();
    std::fs::create_dir_all(dir)?;
    for chart in charts(series, ops, nodes, scenario) {
        write_chart(dir, &chart)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::human_number;

    #[test]
    fn axis_numbers_read_as_people_write_them() {
        assert_eq!(human_number(300_000.0), "300K");
        assert_eq!(human_number(1_200_000.0), "1.2M");
        assert_eq!(human_number(1_240.0), "1.2K");
        assert_eq!(human_number(0.0), "0");
        assert_eq!(human_number(0.5), "0.5");
        assert_eq!(human_number(12.0), "12");
        assert_eq!(human_number(38.85e9), "38.85G");
    }
}
