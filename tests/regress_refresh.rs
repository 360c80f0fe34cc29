//! `twin regress --update-baseline` refreshing a baseline keeps the warm-up
//! it was written with when `--warmup` is not given (it had reset it to
//! none, which moved every figure of a refreshed baseline).

use std::process::Command;

#[test]
fn refreshing_a_baseline_keeps_its_warmup() {
    let dir = std::env::temp_dir().join(format!("twin-regress-refresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let baseline = dir.join("baseline.json");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario = root.join("scenarios/quickstart.toml");
    let run = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_twin"))
            .arg("regress")
            .arg(&scenario)
            .arg("--baseline")
            .arg(&baseline)
            .args([
                "--update-baseline",
                "--seeds",
                "1",
                "--set",
                "duration=\"3s\"",
            ])
            .args(extra)
            .output()
            .expect("twin runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = std::fs::read_to_string(&baseline).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["warmup_s"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(run(&["--warmup", "1s"]), 1.0, "written with its warm-up");
    assert_eq!(run(&[]), 1.0, "refreshed: the same warm-up");
    assert_eq!(run(&["--warmup", "2s"]), 2.0, "--warmup still sets it");
}
