//! Slices of a many-run command for other machines (`--shard i/n`) and
//! the parts they write, which `twin merge` puts back together.
//!
//! A command that runs many independent items (a sweep's grid points, a
//! plan's chains, validation cases, explored seeds) numbers them in the
//! order its one-machine run reports them. Shard `i` of `n` evaluates the
//! items whose number is `i - 1` modulo `n` (round robin, so slow and fast
//! items spread evenly) and writes a [`Part`]: the command, its inputs
//! (the header, whatever the command needs to write its outputs), and its
//! items' results with their numbers. Merging checks that every part has
//! the same command and inputs, that each of the `n` shards is there once
//! and that every item is, then hands the items in order to the same code
//! that writes a one-machine run's outputs, so the bytes are the same.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The format tag of a part file.
pub const PART_FORMAT: &str = "twin-part-1";

/// Slice `index` (from 1) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which slice, 1..=count.
    pub index: u32,
    /// How many slices.
    pub count: u32,
}

/// A shard argument, a part file or a set of parts refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardError {
    /// `--shard` is not `I/N` (the text given).
    Argument(String),
    /// A part file or folder that cannot be read or is not a part.
    File {
        /// The file or folder.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The parts are not the whole of one run: why.
    Merge(String),
}

impl ShardError {
    fn file(file: &Path, reason: impl fmt::Display) -> ShardError {
        ShardError::File {
            file: file.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardError::Argument(text) => {
                write!(f, "--shard {text}: expected I/N with 1 <= I <= N, e.g. 2/8")
            }
            ShardError::File { file, reason } => write!(f, "{}: {reason}", file.display()),
            ShardError::Merge(reason) => write!(f, "{reason}"),
        }
    }
}

impl std::error::Error for ShardError {}

impl Shard {
    /// Parses `I/N` with 1 <= I <= N.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::Argument(text.to_string());
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = index.trim().parse().map_err(|_| bad())?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether item `item` (numbered from 0) is this slice's.
    pub fn owns(&self, item: usize) -> bool {
        item % self.count as usize == (self.index - 1) as usize
    }

    /// The part's file name: `shard-I-of-N.json`.
    pub fn file_name(&self) -> String {
        format!("shard-{}-of-{}.json", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What one shard wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// [`PART_FORMAT`].
    pub format: String,
    /// The twin command (`sweep`, `plan`, `validate`, `explore`).
    pub command: String,
    /// Which slice.
    pub shard: Shard,
    /// Items in the whole run.
    pub items_total: usize,
    /// The command's inputs, as it needs them to write its outputs; equal
    /// in every part of one run.
    pub header: serde_json::Value,
    /// This slice's items: (number, result).
    pub items: Vec<(usize, serde_json::Value)>,
}

impl Part {
    /// A part of `command` holding `items`.
    pub fn new<H: Serialize, T: Serialize>(
        command: &str,
        shard: Shard,
        items_total: usize,
        header: &H,
        items: Vec<(usize, T)>,
    ) -> std::io::Result<Part> {
        let header = serde_json::to_value(header).map_err(std::io::Error::other)?;
        let items = items
            .into_iter()
            .map(|(number, item)| Ok((number, serde_json::to_value(item)?)))
            .collect::<Result<Vec<_>, serde_json::Error>>()
            .map_err(std::io::Error::other)?;
        Ok(Part {
            format: PART_FORMAT.into(),
            command: command.into(),
            shard,
            items_total,
            header,
            items,
        })
    }

    /// Writes the part into `dir` as [`Shard::file_name`]; returns its path.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(self.shard.file_name());
        let json = serde_json::to_string(self).map_err(std::io::Error::other)?;
        // Whole or not at all: `twin merge` never reads half a part.
        sim::results_dir::write_whole(&path, (json + "\n").as_bytes())?;
        Ok(path)
    }
}

/// The part files among `paths`: each file as given, each folder's
/// `shard-*-of-*.json` files (sorted by name).
pub fn part_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ShardError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| ShardError::file(path, e))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|file| {
                    file.file_name()
                        .and_then(|name| name.to_str())
                        .is_some_and(|name| name.starts_with("shard-") && name.ends_with(".json"))
                })
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(ShardError::file(path, "no shard-*-of-*.json part in it"));
            }
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(ShardError::file(path, "no such file or folder"));
        }
    }
    Ok(files)
}

/// Reads `files` and checks they are the whole of one run: the same
/// command and inputs, each of the N shards once, every item once.
/// Returns the command, the header and the items in order.
pub fn merge(
    files: &[PathBuf],
) -> Result<(String, serde_json::Value, Vec<serde_json::Value>), ShardError> {
    let mut parts: Vec<(PathBuf, Part)> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| ShardError::file(file, e))?;
        let part: Part = serde_json::from_str(&text)
            .map_err(|e| ShardError::file(file, format!("not a twin part ({e})")))?;
        if part.format != PART_FORMAT {
            return Err(ShardError::file(
                file,
                format!(
                    "part format `{}`, this twin reads `{PART_FORMAT}`",
                    part.format
                ),
            ));
        }
        parts.push((file.clone(), part));
    }
    let Some((first_file, first)) = parts.first() else {
        return Err(ShardError::Merge("no part to merge".into()));
    };
    for (file, part) in &parts[1..] {
        let differs = if part.command != first.command {
            Some(format!("command `{}` vs `{}`", part.command, first.command))
        } else if part.shard.count != first.shard.count {
            Some(format!(
                "{} shards vs {}",
                part.shard.count, first.shard.count
            ))
        } else if part.items_total != first.items_total || part.header != first.header {
            Some("different inputs (scenario, flags or --set values)".into())
        } else {
            None
        };
        if let Some(why) = differs {
            return Err(ShardError::Merge(format!(
                "{} and {} are not parts of one run: {why}",
                file.display(),
                first_file.display()
            )));
        }
    }
    let count = first.shard.count;
    let mut seen = vec![None::<&PathBuf>; count as usize];
    for (file, part) in &parts {
        let slot = &mut seen[(part.shard.index - 1) as usize];
        if let Some(other) = slot {
            return Err(ShardError::Merge(format!(
                "shard {} is there twice: {} and {}",
                part.shard,
                other.display(),
                file.display()
            )));
        }
        *slot = Some(file);
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, file)| file.is_none())
        .map(|(index, _)| format!("{}/{count}", index + 1))
        .collect();
    if !missing.is_empty() {
        return Err(ShardError::Merge(format!(
            "missing shard(s) {}",
            missing.join(", ")
        )));
    }
    let total = first.items_total;
    let mut items: Vec<Option<serde_json::Value>> = vec![None; total];
    for (file, part) in &parts {
        for (number, item) in &part.items {
            let owner = Shard {
                index: part.shard.index,
                count,
            };
            if *number >= total || !owner.owns(*number) || items[*number].is_some() {
                return Err(ShardError::file(
                    file,
                    format!("item {number} does not belong to shard {}", part.shard),
                ));
            }
            items[*number] = Some(item.clone());
        }
    }
    let items = items
        .into_iter()
        .enumerate()
        .map(|(number, item)| {
            item.ok_or_else(|| ShardError::Merge(format!("item {number} is in no part")))
        })
        .collect::<Result<Vec<_>, ShardError>>()?;
    Ok((first.command.clone(), first.header.clone(), items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_split_items_round_robin() {
        let shard = Shard::parse("2/3").unwrap();
        assert_eq!(shard, Shard { index: 2, count: 3 });
        let owned: Vec<usize> = (0..8).filter(|item| shard.owns(*item)).collect();
        assert_eq!(owned, vec![1, 4, 7]);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(
                Shard::parse(bad).unwrap_err().to_string().contains("I/N"),
                "{bad}"
            );
        }
        assert_eq!(shard.file_name(), "shard-2-of-3.json");
    }

    #[test]
    fn merging_needs_every_shard_once_and_the_same_inputs() {
        let dir = std::env::temp_dir().join(format!("twin-shard-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |index: u32, header: &str| {
            let shard = Shard { index, count: 2 };
            let items: Vec<(usize, u32)> = (0..5)
                .filter(|item| shard.owns(*item))
                .map(|item| (item, item as u32 * 10))
                .collect();
            Part::new("sweep", shard, 5, &header, items)
                .unwrap()
                .write(&dir)
                .unwrap()
        };
        let one = write(1, "h");
        let two = write(2, "h");
        let (command, header, items) =
            merge(&part_files(std::slice::from_ref(&dir)).unwrap()).unwrap();
        assert_eq!(command, "sweep");
        assert_eq!(header, serde_json::json!("h"));
        assert_eq!(
            items,
            (0..5)
                .map(|i| serde_json::json!(i * 10))
                .collect::<Vec<_>>()
        );
        assert!(merge(std::slice::from_ref(&one))
            .unwrap_err()
            .to_string()
            .contains("missing shard(s) 2/2"));
        assert!(merge(&[one.clone(), one.clone()])
            .unwrap_err()
            .to_string()
            .contains("twice"));
        let other = dir.join("other");
        std::fs::create_dir_all(&other).unwrap();
        let shard = Shard { index: 2, count: 2 };
        let changed = Part::new("sweep", shard, 5, &"other inputs", vec![(1usize, 10u32)])
            .unwrap()
            .write(&other)
            .unwrap();
        assert!(merge(&[one, changed])
            .unwrap_err()
            .to_string()
            .contains("not parts of one run"));
        let _ = two;
        let _ = std::fs::remove_dir_all(&dir);
    }
}
