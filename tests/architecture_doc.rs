//! `docs/ARCHITECTURE.md` stays true as code moves: every file and folder
//! its layout blocks name exists in the checkout.

use std::path::{Path, PathBuf};

/// Every path under `dir` (files and folders), relative to `root`, with
/// `/` separators and folders ending in `/`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "results" {
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        if path.is_dir() {
            out.push(format!("{relative}/"));
            walk(root, &path, out);
        } else {
            out.push(relative);
        }
    }
}

/// The names in the document's fenced blocks that look like paths: a word
/// ending in `.rs`, `.md` or `/`.
fn named_paths(doc: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_block = false;
    for line in doc.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        // The layout column: what precedes the description.
        for word in line.split([' ', ',', '(', ')']) {
            let word = word.trim();
            let looks_like_path =
                word.ends_with(".rs") || word.ends_with(".md") || word.ends_with('/');
            if looks_like_path && word.len() > 1 && !word.contains("->") && !word.contains('*') {
                names.push(word.to_string());
            }
        }
    }
    names
}

#[test]
fn every_path_the_architecture_document_names_exists() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md is readable");
    let mut paths = Vec::new();
    walk(&root, &root, &mut paths);
    let names = named_paths(&doc);
    assert!(
        names.len() > 40,
        "the layout blocks name {} paths",
        names.len()
    );
    let missing: Vec<&String> = names
        .iter()
        .filter(|name| {
            !paths
                .iter()
                .any(|path| path == *name || path.ends_with(&format!("/{name}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}
