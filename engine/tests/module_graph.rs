//! The engine's modules depend in one direction: the request side
//! (`action`, `coordinator`) above the storage side (`read`, `memtable`,
//! `sstable`, `token_set`, `cells`), and no module among them reaches back
//! up. This reads each module's source for `crate::<module>` paths (in
//! `use` lines and inline, comments left out) and fails on any cycle, so a
//! type put on the wrong side shows here rather than in a slowly tangling
//! graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules held to one direction.
const LAYERED: [&str; 11] = [
    "action",
    "cells",
    "consistency",
    "coordinator",
    "memtable",
    "placement",
    "read",
    "ring",
    "speculation",
    "sstable",
    "token_set",
];

/// The engine modules `module`'s code (not its comments) names.
fn dependencies(module: &str) -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(format!("{module}.rs"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut named = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit())
                .collect();
            if !name.is_empty() && name != module {
                named.insert(name);
            }
        }
    }
    named
}

/// A cycle through `LAYERED`'s modules, if there is one.
fn cycle(graph: &BTreeMap<&str, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        graph: &BTreeMap<&str, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == at) {
            let mut found = path[start..].to_vec();
            found.push(at.to_string());
            return Some(found);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in graph.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(found) = visit(module, graph, &mut Vec::new(), &mut done) {
            return Some(found);
        }
    }
    None
}

#[test]
fn the_request_and_storage_modules_import_each_other_in_one_direction() {
    let graph: BTreeMap<&str, BTreeSet<String>> = LAYERED
        .iter()
        .map(|module| {
            let within = dependencies(module)
                .into_iter()
                .filter(|dep| LAYERED.contains(&dep.as_str()))
                .collect();
            (*module, within)
        })
        .collect();
    assert_eq!(cycle(&graph), None, "{graph:?}");
    // The storage side's base names nothing of the engine.
    assert!(graph["cells"].is_empty(), "{:?}", graph["cells"]);
    assert!(graph["consistency"].is_empty());
    // And the check finds a cycle where there is one.
    let mut tangled = graph.clone();
    tangled
        .get_mut("cells")
        .unwrap()
        .insert("coordinator".into());
    assert!(cycle(&tangled).is_some());
}
