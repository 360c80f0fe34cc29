//! c-s 4.0+'s `-reporting`: the total line on every `output-frequency`-th
//! interval, the header again after every `header-frequency`-th, as
//! `StressMetrics.recordInterval` prints them; without it, every interval.

use sim::plan::{resolve, RunOverrides};

/// The interval lines a one-load, 7-second run prints for `options`.
fn lines(options: &str) -> Vec<String> {
    let text = format!(
        r#"
name = "reporting"
seed = 1
duration = "7s"
[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.2xlarge"
[[load]]
name = "w"
command = "cassandra-stress write duration=7s -rate threads=20 limit=2000/s {options}"
"#
    );
    let scenario = sim::scenario::parse("reporting.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let plan = resolve(&scenario, &RunOverrides::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut lines = Vec::new();
    sim::cluster::run(plan, &mut |progress| lines.extend(progress.lines))
        .expect("the run completes");
    lines
}

/// The elapsed-time column of each `total` line.
fn total_times(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|line| line.starts_with("total,"))
        .map(|line| {
            line.rsplit(',')
                .nth(1)
                .expect("a time column")
                .trim()
                .to_string()
        })
        .collect()
}

fn headers(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|line| line.starts_with("type,"))
        .count()
}

#[test]
fn every_interval_prints_without_reporting() {
    let lines = lines("");
    assert_eq!(
        total_times(&lines),
        ["1.0", "2.0", "3.0", "4.0", "5.0", "6.0", "7.0"]
    );
    assert_eq!(headers(&lines), 1);
}

#[test]
fn output_and_header_frequencies_count_interval_lines() {
    let lines = lines("-reporting output-frequency=2s header-frequency=3s");
    assert_eq!(total_times(&lines), ["2.0", "4.0", "6.0"]);
    // The header at the start, then after the 3rd and the 6th interval,
    // each after a blank line.
    assert_eq!(headers(&lines), 3);
    let blank_then_header = lines
        .windows(2)
        .filter(|pair| pair[0].is_empty() && pair[1].starts_with("type,"))
        .count();
    assert_eq!(blank_then_header, 2, "{lines:#?}");
    // The total count is cumulative (the pacer's first operation goes at
    // its first tick after 0); the rates are the last interval's.
    let fourth = lines
        .iter()
        .find(|line| line.starts_with("total,") && line.contains(" 4.0,"))
        .expect("the 4th interval's line");
    let cells: Vec<&str> = fourth.split(',').map(str::trim).collect();
    assert_eq!(cells[1], "7999", "{fourth}");
    assert_eq!(cells[2], "2000", "{fourth}");
}
