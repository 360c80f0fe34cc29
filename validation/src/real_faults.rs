//! The fault check's comparison (`validation/real/faults.sh`, REAL.md):
//! three real nodes, node 3 killed and restarted under QUORUM writes,
//! against the same schedule in the twin. Counts and times side by side:
//! writes acknowledged, hints written and replayed, when the replay
//! finished after the restart, and the read-back of every key at QUORUM
//! (none may be missing). Latencies are not compared (three JVMs share one
//! core).
//!
//! Reads what the script stored: `timeline.json`, the `twin real` folders
//! `writes/` and `readback/`, and the twin's `twin/summary.json` and
//! `twin/events.jsonl`.

use std::fmt::Write as _;
use std::path::Path;

use crate::real::MeasurementError;

fn read_json(path: &Path) -> Result<serde_json::Value, MeasurementError> {
    let text = std::fs::read_to_string(path).map_err(|error| MeasurementError::at(path, error))?;
    serde_json::from_str(&text).map_err(|error| MeasurementError::at(path, error))
}

/// The twin's side: when the crashed node's hints were all replayed
/// (seconds; the first `hints` event after the restart whose pending count
/// is zero on every node), and the restart's time.
fn twin_replay(events: &str) -> (Option<f64>, Option<f64>) {
    let mut restart = None;
    let mut pending: std::collections::BTreeMap<u64, u64> = Default::default();
    let mut drained = None;
    for line in events.lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let time = event["time_s"].as_f64().unwrap_or(0.0);
        match event["event"].as_str() {
            Some("node-restart") => restart = restart.or(Some(time)),
            Some("hints") => {
                let node = event["node"].as_u64().unwrap_or(0);
                pending.insert(node, event["pending"].as_u64().unwrap_or(0));
                if restart.is_some() && drained.is_none() && pending.values().all(|&left| left == 0)
                {
                    drained = Some(time);
                }
            }
            _ => {}
        }
    }
    (restart, drained)
}

/// The comparison of the fault check stored in `dir`.
pub fn faults_text(dir: &Path) -> Result<String, MeasurementError> {
    let timeline = read_json(&dir.join("timeline.json"))?;
    let writes = read_json(&dir.join("writes").join("summary.json"))?;
    let readback = read_json(&dir.join("readback").join("summary.json"))?;
    let twin = read_json(&dir.join("twin").join("summary.json"))?;
    let events = std::fs::read_to_string(dir.join("twin").join("events.jsonl")).unwrap_or_default();
    let sum = |value: &serde_json::Value| -> f64 {
        value
            .as_object()
            .map_or(0.0, |nodes| nodes.values().filter_map(|v| v.as_f64()).sum())
    };
    let count = |summary: &serde_json::Value, op: &str, key: &str| {
        summary["ops"][op][key].as_f64().unwrap_or(0.0)
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Fault check {}: 3 nodes, RF 3, QUORUM writes; node 3 killed (kill -9) and restarted",
        dir.display()
    );
    let _ = writeln!(out, "{:<44} {:>12} {:>12}", "", "real", "twin");
    let mut line = |name: &str, real: String, twin: String| {
        let _ = writeln!(out, "{name:<44} {real:>12} {twin:>12}");
    };
    let f = |v: f64| format!("{v:.0}");
    line(
        "writes acknowledged",
        f(count(&writes, "write", "count")),
        f(count(&twin, "write", "count")),
    );
    line(
        "write errors and timeouts",
        f(count(&writes, "write", "errors") + count(&writes, "write", "timeouts")),
        f(twin["ops"]["write"]["errors"].as_f64().unwrap_or(0.0)
            + twin["ops"]["write"]["timeouts"].as_f64().unwrap_or(0.0)),
    );
    line(
        "hints written",
        f(sum(&timeline["hints_written"])),
        f(twin["hints"]["written"].as_f64().unwrap_or(0.0)),
    );
    line(
        "hints replayed",
        f(sum(&timeline["hints_replayed"])),
        f(twin["hints"]["replayed"].as_f64().unwrap_or(0.0)),
    );
    line(
        "hints pending at the end",
        "-".into(),
        f(twin["hints"]["pending"].as_f64().unwrap_or(0.0)),
    );
    let (twin_restart, twin_drained) = twin_replay(&events);
    // From the moment the live nodes see the node back (gossip), which is
    // when the replay can start; older timelines have only the restart.
    let real_back = timeline["seen_up_s"]
        .as_f64()
        .or(timeline["restarted_s"].as_f64());
    if let (Some(down), Some(up)) = (
        timeline["seen_down_s"].as_f64(),
        timeline["seen_up_s"].as_f64(),
    ) {
        line(
            "node 3 down, as the live nodes saw it",
            format!("{down:.0}-{up:.0} s"),
            "-".into(),
        );
    }
    let real_replay = match (timeline["hints_drained_s"].as_f64(), real_back) {
        (Some(drained), Some(restarted)) => format!("{:.0} s", drained - restarted),
        _ => "never".into(),
    };
    let twin_replay = match (twin_drained, twin_restart) {
        (Some(drained), Some(restarted)) => format!("{:.0} s", drained - restarted),
        _ => "never".into(),
    };
    line("back up to hints drained", real_replay, twin_replay);
    line(
        "keys read back at QUORUM",
        f(count(&readback, "read", "count")),
        "-".into(),
    );
    line(
        "of them not found (at most the write errors)",
        f(count(&readback, "read", "not_found")),
        "-".into(),
    );
    let _ = writeln!(
        out,
        "real timeline (s from the load's start): killed {}, seen down {}, restarted {}, seen up {}, CQL back {}, load ended {}, hints drained {}",
        timeline["killed_s"],
        timeline["seen_down_s"],
        timeline["restarted_s"],
        timeline["seen_up_s"],
        timeline["cql_back_s"],
        timeline["load_end_s"],
        timeline["hints_drained_s"]
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_comparison_puts_real_and_twin_counts_side_by_side() {
        let dir = std::env::temp_dir().join(format!("twin-real-faults-{}", std::process::id()));
        for sub in ["writes", "readback", "twin"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
        write(
            "timeline.json",
            r#"{"killed_s": 60, "seen_down_s": 75.2, "restarted_s": 120, "seen_up_s": 180.5,
                "cql_back_s": 190, "load_end_s": 241, "hints_drained_s": 200.5,
                "hints_written": {"node1": 30000, "node2": 30100},
                "hints_replayed": {"node1": 30000, "node2": 30100}}"#,
        );
        write(
            "writes/summary.json",
            r#"{"ops": {"write": {"count": 120000, "errors": 2, "timeouts": 1}}}"#,
        );
        write(
            "readback/summary.json",
            r#"{"ops": {"read": {"count": 120000, "not_found": 0}}}"#,
        );
        write(
            "twin/summary.json",
            r#"{"ops": {"write": {"count": 119000}}, "hints": {"written": 58000, "replayed": 58000, "pending": 0}}"#,
        );
        write(
            "twin/events.jsonl",
            "{\"time_s\":180.0,\"event\":\"node-restart\",\"node\":2}\n\
             {\"time_s\":195.0,\"event\":\"hints\",\"node\":0,\"pending\":0}\n",
        );
        let text = faults_text(&dir).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        let row = |name: &str| {
            text.lines()
                .find(|line| line.starts_with(name))
                .unwrap_or_else(|| panic!("no `{name}` in\n{text}"))
                .split_whitespace()
                .rev()
                .take(2)
                .collect::<Vec<_>>()
        };
        assert_eq!(row("writes acknowledged"), ["119000", "120000"]);
        assert_eq!(row("write errors and timeouts"), ["0", "3"]);
        assert_eq!(row("hints written"), ["58000", "60100"]);
        // Real: seen up at 180.5, drained at 200.5; twin: restart 180, drained 195.
        assert_eq!(row("back up to hints drained"), ["s", "15"]);
        assert!(text.contains("20 s"), "{text}");
        assert!(
            text.contains("75-180 s") || text.contains("75-181 s"),
            "{text}"
        );
        assert!(faults_text(&dir).is_err(), "a missing folder is an error");
    }

    #[test]
    fn the_twin_replay_ends_when_no_node_has_hints_pending_after_the_restart() {
        let events = "\
{\"time_s\":60.0,\"event\":\"node-crash\",\"node\":2}
{\"time_s\":61.0,\"event\":\"hints\",\"node\":0,\"written\":10,\"replayed\":0,\"pending\":10}
{\"time_s\":120.0,\"event\":\"node-restart\",\"node\":2}
{\"time_s\":130.0,\"event\":\"hints\",\"node\":0,\"written\":0,\"replayed\":5,\"pending\":5}
{\"time_s\":131.0,\"event\":\"hints\",\"node\":1,\"written\":0,\"replayed\":0,\"pending\":0}
{\"time_s\":140.0,\"event\":\"hints\",\"node\":0,\"written\":0,\"replayed\":5,\"pending\":0}
";
        assert_eq!(twin_replay(events), (Some(120.0), Some(140.0)));
    }
}
