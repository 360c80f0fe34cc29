//! `--shard I/N` then `twin merge` gives exactly the outputs of one
//! machine's run, file for file and byte for byte (issue 19): for a sweep
//! split three ways and a plan split by chain.

use std::path::{Path, PathBuf};
use std::process::Command;

fn twin(args: &[&str]) {
    let output = Command::new(env!("CARGO_BIN_EXE_twin"))
        .args(args)
        .output()
        .expect("twin runs");
    assert!(
        output.status.success(),
        "twin {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("twin-shard-merge-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file under `one` has the same bytes under `other`, and the two
/// hold the same files.
fn same_tree(one: &Path, other: &Path) {
    let list = |dir: &Path| {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_file())
            .map(|path| path.strip_prefix(dir).unwrap().to_path_buf())
            .collect();
        files.sort();
        files
    };
    let files = list(one);
    assert!(!files.is_empty(), "{} is empty", one.display());
    assert_eq!(
        files,
        list(other),
        "{} vs {}",
        one.display(),
        other.display()
    );
    for file in files {
        let (a, b) = (
            std::fs::read(one.join(&file)).unwrap(),
            std::fs::read(other.join(&file)).unwrap(),
        );
        assert!(a == b, "{} differs after the merge", file.display());
    }
}

fn scenario(dir: &Path) -> String {
    let path = dir.join("writes.toml");
    std::fs::write(
        &path,
        r#"name = "writes"
seed = 1
duration = "6s"
interval = "1s"

[cluster]
preset = "scylla-2.2"
nodes = 3
instance = "i3.large"

[[load]]
name = "write"
processes = 1
command = "cassandra-stress write no-warmup cl=QUORUM duration=60s -rate 'threads=100 limit=8000/s' -col 'size=FIXED(1024) n=FIXED(1)' -pop seq=1..100000000 -schema 'replication(factor=3)'"
"#,
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

/// Runs `args` on one machine and as `shards` slices merged by `twin
/// merge`, in `dir`, and checks the two outputs are the same bytes.
fn split_and_merge(dir: &Path, args: &[&str], shards: u32) {
    let one = dir.join("one");
    twin(&[args, &["--out", one.to_str().unwrap()]].concat());
    let parts = dir.join("parts");
    for i in 1..=shards {
        let shard = format!("{i}/{shards}");
        twin(&[args, &["--shard", &shard, "--out", parts.to_str().unwrap()]].concat());
    }
    let merged = dir.join("merged");
    twin(&[
        "merge",
        parts.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    same_tree(&one, &merged);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_sweep_split_three_ways_merges_to_the_one_machine_sweep() {
    let dir = scratch("sweep");
    let file = scenario(&dir);
    let sweep = [
        "sweep",
        &file,
        "--set",
        "cluster.nodes=3,4",
        "--seeds",
        "2",
        "--jobs",
        "1",
    ];
    split_and_merge(&dir, &sweep, 3);
}

#[test]
fn a_plan_split_by_chain_merges_to_the_one_machine_plan() {
    let dir = scratch("plan");
    let file = scenario(&dir);
    let plan = [
        "plan",
        &file,
        "--sla",
        "write.p99<10ms",
        "--rate",
        "20K",
        "--instances",
        "i3.large,i3.xlarge",
        "--nodes",
        "3..6",
        "--warmup",
        "2s",
        "--jobs",
        "1",
    ];
    split_and_merge(&dir, &plan, 2);
}
