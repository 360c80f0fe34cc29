//! Results written whole: a run's folder is either the previous run's or
//! this run's, never a mix, whenever the process is stopped.
//!
//! A run writes into a fresh folder beside `--out` (`.NAME.partial-PID`),
//! made before the simulation starts (so an `--out` that cannot be written
//! is an error before any simulated second). When every file is written,
//! the completion record [`COMPLETION_FILE`] goes in last, and the new
//! folder takes `--out`'s place: on Linux in one atomic exchange with the
//! old folder (`renameat2(RENAME_EXCHANGE)`), which is then deleted; where
//! there is none, or elsewhere, by renames. So no file of an earlier run
//! survives beside the new ones, and a folder without the record was never
//! finished.
//! A run stopped before the swap leaves the old folder as it was and its
//! own `.partial` folder beside it, which a later run into the same
//! `--out` deletes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The completion record's file name inside a results folder.
pub const COMPLETION_FILE: &str = "complete.json";

/// What the completion record says: which run wrote the folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// The scenario's name.
    pub scenario: String,
    /// The run's seed.
    pub seed: u64,
    /// The twin that wrote it (`CARGO_PKG_VERSION`).
    pub twin_version: String,
}

impl Completion {
    /// The record of a run of `scenario` with `seed` by this twin.
    pub fn new(scenario: &str, seed: u64) -> Completion {
        Completion {
            scenario: scenario.to_string(),
            seed,
            twin_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// A results folder being written: files go to [`PendingResults::path`];
/// [`PendingResults::commit`] puts it in place; dropped without a commit,
/// it deletes what it wrote and leaves the old folder alone.
#[derive(Debug)]
pub struct PendingResults {
    target: PathBuf,
    temp: PathBuf,
    committed: bool,
}

impl PendingResults {
    /// Makes the folder the run writes into, beside `target`; fails (with
    /// the path) where `target` is a file or its parent cannot be written.
    /// Deletes what an interrupted earlier run into `target` left beside it.
    pub fn prepare(target: &Path) -> std::io::Result<PendingResults> {
        let name = target
            .file_name()
            .and_then(|name| name.to_str())
            .ok_or_else(|| std::io::Error::other("the results folder needs a name"))?
            .to_string();
        if target.exists() && !target.is_dir() {
            return Err(std::io::Error::other(format!(
                "{} is a file, not a results folder",
                target.display()
            )));
        }
        let parent = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent)?;
        // What interrupted runs into this folder left beside it.
        let prefix = format!(".{name}.partial-");
        let old_prefix = format!(".{name}.old-");
        for entry in std::fs::read_dir(&parent)?.flatten() {
            let file_name = entry.file_name();
            let file_name = file_name.to_string_lossy();
            if file_name.starts_with(&prefix) || file_name.starts_with(&old_prefix) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let temp = parent.join(format!("{prefix}{}", std::process::id()));
        std::fs::create_dir(&temp)?;
        Ok(PendingResults {
            target: target.to_path_buf(),
            temp,
            committed: false,
        })
    }

    /// Where the run writes its files.
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Writes the completion record and puts the folder in `target`'s
    /// place, deleting the old one.
    pub fn commit(mut self, completion: &Completion) -> std::io::Result<()> {
        let mut record = serde_json::to_string_pretty(completion).map_err(std::io::Error::other)?;
        record.push('\n');
        std::fs::write(self.temp.join(COMPLETION_FILE), record)?;
        if self.target.is_dir() {
            let aside = match swap(&self.temp, &self.target) {
                // The old folder is now at the temporary name.
                Ok(()) => self.temp.clone(),
                Err(_) => {
                    // No atomic exchange here: the old folder steps aside
                    // first (a stop between the renames leaves it there,
                    // whole, and the new one beside it).
                    let aside = self.temp.with_file_name(
                        self.temp
                            .file_name()
                            .expect("a name")
                            .to_string_lossy()
                            .replace(".partial-", ".old-"),
                    );
                    std::fs::rename(&self.target, &aside)?;
                    std::fs::rename(&self.temp, &self.target)?;
                    aside
                }
            };
            self.committed = true;
            std::fs::remove_dir_all(aside)?;
        } else {
            std::fs::rename(&self.temp, &self.target)?;
            self.committed = true;
        }
        Ok(())
    }
}

impl Drop for PendingResults {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.temp);
        }
    }
}

/// Exchanges two folders in one step.
#[cfg(target_os = "linux")]
fn swap(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn swap(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("no atomic exchange on this system"))
}

/// Writes `bytes` to `path` whole: to a temporary file beside it, then
/// renamed over it, so a reader never sees half of it.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("a file needs a name"))?
        .to_string_lossy()
        .into_owned();
    let temp = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion() -> Completion {
        Completion::new("s", 7)
    }

    /// The completion record in `dir`, if any.
    fn record(dir: &Path) -> Option<Completion> {
        let text = std::fs::read_to_string(dir.join(COMPLETION_FILE)).ok()?;
        Some(serde_json::from_str(&text).unwrap())
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("twin-results-dir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A new run into an old folder replaces it whole: the old run's files
    /// are gone, the record is there, nothing is left beside it.
    #[test]
    fn a_committed_run_replaces_the_old_folder_whole() {
        let root = scratch("replace");
        let out = root.join("run");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("old-chart.svg"), "old").unwrap();
        std::fs::write(out.join("summary.json"), "old").unwrap();
        let pending = PendingResults::prepare(&out).unwrap();
        std::fs::write(pending.path().join("summary.json"), "new").unwrap();
        pending.commit(&completion()).unwrap();
        assert_eq!(names(&out), ["complete.json", "summary.json"]);
        assert_eq!(
            std::fs::read_to_string(out.join("summary.json")).unwrap(),
            "new"
        );
        assert_eq!(record(&out), Some(completion()));
        assert_eq!(names(&root), ["run"]);
        std::fs::remove_dir_all(root).unwrap();
    }

    /// A run stopped before its commit leaves the old folder as it was,
    /// and the next run into it clears what the stopped one left beside.
    #[test]
    fn an_interrupted_run_leaves_the_old_folder_as_it_was() {
        let root = scratch("interrupt");
        let out = root.join("run");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("summary.json"), "old").unwrap();
        // A crashed process's leftovers, as a kill -9 leaves them.
        std::fs::create_dir_all(root.join(".run.partial-1")).unwrap();
        std::fs::write(root.join(".run.partial-1/summary.json"), "half").unwrap();
        let pending = PendingResults::prepare(&out).unwrap();
        assert!(!root.join(".run.partial-1").exists(), "cleared");
        std::fs::write(pending.path().join("summary.json"), "half").unwrap();
        drop(pending);
        assert_eq!(names(&root), ["run"]);
        assert_eq!(
            std::fs::read_to_string(out.join("summary.json")).unwrap(),
            "old"
        );
        assert_eq!(record(&out), None);
        std::fs::remove_dir_all(root).unwrap();
    }

    /// A first run makes its folder; an `--out` that is a file is refused
    /// before anything is written.
    #[test]
    fn a_first_run_makes_its_folder_and_a_file_is_refused() {
        let root = scratch("first");
        let out = root.join("deeper/run");
        let pending = PendingResults::prepare(&out).unwrap();
        pending.commit(&completion()).unwrap();
        assert_eq!(names(&out), ["complete.json"]);
        std::fs::write(root.join("file"), "x").unwrap();
        let error = PendingResults::prepare(&root.join("file")).unwrap_err();
        assert!(error.to_string().contains("is a file"), "{error}");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_file_written_whole_replaces_the_old_one() {
        let root = scratch("whole");
        let file = root.join("scorecard.json");
        std::fs::write(&file, "old").unwrap();
        write_whole(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(names(&root), ["scorecard.json"]);
        std::fs::remove_dir_all(root).unwrap();
    }
}
