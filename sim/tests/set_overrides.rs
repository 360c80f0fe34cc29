//! `--set KEY=VALUE` over a scenario file: a value set to what the file
//! already says changes nothing (every bundled and validation scenario
//! goes through the TOML round trip unchanged), a set value is the one the
//! run uses, and every mistake is one line naming the key and the `--set`.

use std::path::{Path, PathBuf};

use sim::overrides::Assignment;
use sim::plan::{resolve, RunOverrides};
use sim::scenario::{load, load_with, with_sets};

fn scenarios(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    paths
}

fn set(text: &str) -> Assignment {
    Assignment::parse(text).unwrap()
}

#[test]
fn setting_what_the_file_says_changes_no_plan() {
    let mut checked = 0;
    for path in scenarios("scenarios")
        .into_iter()
        .chain(scenarios("scenarios/validation"))
    {
        let scenario = load(&path).unwrap_or_else(|e| panic!("{e}"));
        let same = with_sets(&scenario, &[set(&format!("name={}", scenario.name))])
            .unwrap_or_else(|e| panic!("{e}"));
        let plan = |scenario| {
            resolve(scenario, &RunOverrides::default())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .describe()
        };
        assert_eq!(plan(&scenario), plan(&same), "{}", path.display());
        checked += 1;
    }
    assert!(checked > 25, "{checked} scenarios");
}

#[test]
fn a_set_value_is_the_one_the_run_uses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/quickstart.toml");
    let scenario = load_with(
        &path,
        &[
            set("cluster.nodes=5"),
            set("cluster.preset=scylla-2.3"),
            set("load[0].command=cassandra-stress write n=500 -rate threads=2"),
            set("controller.compaction.points=[[0,50],[1.5,100],[30,1000]]"),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let plan = resolve(&scenario, &RunOverrides::default()).unwrap();
    assert_eq!(plan.cluster.nodes, 5);
    let line = plan.describe();
    assert!(line.contains("5 x i3.large (scylla-2.3)"), "{line}");
    assert!(line.contains("n=500 per process"), "{line}");
    assert!(
        line.contains("compaction controller: (0, 50) (1.5, 100) (30, 1000)"),
        "{line}"
    );
    // Two sets of one key: the later wins.
    let twice = load_with(&path, &[set("cluster.nodes=5"), set("cluster.nodes=7")]).unwrap();
    assert_eq!(twice.cluster.nodes, 7);
}

#[test]
fn mistakes_are_one_line_errors_naming_the_key_and_the_set() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/quickstart.toml");
    let error = |text: &str| load_with(&path, &[set(text)]).unwrap_err().to_string();
    let cases = [
        (
            "cluster.nodez=4",
            "field `cluster.nodez`: unknown field `nodez`, expected one of `preset`, `nodes`",
        ),
        (
            "cluster.nodes=abc",
            "field `cluster.nodes`: invalid type: string \"abc\", expected u32 (from --set cluster.nodes=abc)",
        ),
        (
            "cluster.nodes=0",
            "field `cluster.nodes`: a cluster needs at least 1 node (from --set cluster.nodes=0)",
        ),
        (
            "load[3].name=x",
            "--set load[3].name=x: `load[3]` is past the scenario's 1 `[[load]]` entry (they count from 0)",
        ),
    ];
    for (text, expected) in cases {
        let message = error(text);
        assert!(message.contains(expected), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }
    // An error found later, while the plan resolves, names the set too.
    let scenario = load_with(&path, &[set("cluster.preset=scylla-9")]).unwrap();
    let message = resolve(&scenario, &RunOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        message.ends_with("(from --set cluster.preset=scylla-9)"),
        "{message}"
    );
}
