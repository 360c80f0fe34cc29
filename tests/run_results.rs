//! `twin run`'s results folder is written whole (issue 48): a new run
//! replaces an old folder with no file of it left, records its completion
//! last, refuses an `--out` it cannot write before simulating, and a
//! data-mode run prints every checker's verdict, as `twin explore` judges
//! a seed.

use std::path::PathBuf;
use std::process::{Command, Output};

fn twin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_twin"))
        .args(args)
        .output()
        .expect("twin runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twin-run-results-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_run_replaces_its_folder_whole_and_judges_a_data_mode_run() {
    let root = scratch("whole");
    let out = root.join("explore-5");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("stale-chart.svg"), "from an older run").unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/explore-5.toml");
    let output = twin(&[
        "run",
        scenario,
        "--duration",
        "20s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !out.join("stale-chart.svg").exists(),
        "no file of the old run survives"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("complete.json")).unwrap()).unwrap();
    assert_eq!(record["scenario"], "explore-5");
    assert!(out.join("summary.json").is_file());
    for checker in [
        "acknowledged-writes-read-back",
        "replicas-hold-acknowledged-writes",
    ] {
        assert!(stdout.contains(&format!("check {checker}: ")), "{stdout}");
    }
    // Nothing is left beside the folder.
    let beside: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["explore-5"]);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn an_out_that_cannot_be_written_fails_before_the_simulation() {
    let root = scratch("bad-out");
    let file = root.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/quickstart.toml");
    let output = twin(&["run", scenario, "--out", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("is a file, not a results folder"),
        "{stderr}"
    );
    // Refused before any simulated second: no Results block.
    assert!(!String::from_utf8_lossy(&output.stdout).contains("Op rate"));
    std::fs::remove_dir_all(root).unwrap();
}

/// `twin run --trace` fingerprints the run's events and `twin trace diff`
/// compares two runs: the same seed gives the same events (exit 0);
/// another seed parts, and with both runs' `--trace-window` of where they
/// part, the first differing event is named (exit 1).
#[test]
fn traces_say_whether_two_runs_are_the_same_and_where_they_part() {
    let root = scratch("trace");
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/quickstart.toml");
    let run = |name: &str, seed: &str, extra: &[&str]| {
        let out = root.join(name);
        let mut args = vec![
            "run",
            scenario,
            "--duration",
            "1s",
            "--quiet",
            "--seed",
            seed,
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let output = twin(&args);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        out
    };
    let diff = |a: &PathBuf, b: &PathBuf| {
        let output = twin(&["trace", "diff", a.to_str().unwrap(), b.to_str().unwrap()]);
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (a, b) = (run("a", "7", &["--trace"]), run("b", "7", &["--trace"]));
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("trace.json")).unwrap()).unwrap();
    assert!(trace["events"].as_u64().unwrap() > 65_536);
    let (code, stdout) = diff(&a, &b);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("the runs' events are the same"), "{stdout}");

    let c = run("c", "8", &["--trace"]);
    let (code, stdout) = diff(&a, &c);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("--trace-window 0..65536"), "{stdout}");

    let (a, c) = (
        run("a", "7", &["--trace-window", "0..65536"]),
        run("c", "8", &["--trace-window", "0..65536"]),
    );
    let (code, stdout) = diff(&a, &c);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains(" differs\n  first:  at "), "{stdout}");

    let output = twin(&["run", scenario, "--trace-window", "9..3"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("holds no event"));
    let _ = std::fs::remove_dir_all(&root);
}
