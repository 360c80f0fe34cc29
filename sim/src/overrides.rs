//! `--set KEY=VALUE`: any scenario value from the command line.
//!
//! A key is the dotted path a scenario file would spell (`cluster.nodes`,
//! `controller.compaction.points`, `load[0].command`, `fault[1].for`); the
//! value is a TOML value (`40`, `[[0,50],[1.5,100]]`, `"text"`), or, when
//! it does not parse as one, the text itself as a string (`scylla-2.2`,
//! `60s`, a cassandra-stress command line), so that the shell's quoting is
//! all a user needs. Assignments apply in order to the file's TOML, which
//! then goes through the same parsing and checks as the file itself: an
//! unknown key or a value of the wrong type is the same one-line error a
//! file would give, naming the key and the `--set` it came from.
//!
//! A missing table on the way is created (`--set controller.flush.points=`
//! on a file without `[controller]`); an array entry must exist
//! (`load[2]` of a file with two loads is an error).

use std::fmt;

use toml::{Table, Value};

/// One `--set KEY=VALUE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The key as given.
    pub key: String,
    /// The key's steps.
    path: Vec<Step>,
    /// The value as given.
    pub text: String,
    /// The value it sets.
    value: Value,
}

/// A step of a key: a table's key, then an optional array index.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    name: String,
    index: Option<usize>,
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--set {}={}", self.key, self.text)
    }
}

/// A `--set` refused: the assignment as given (`--set KEY=VALUE`, which
/// names the field), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetError {
    /// `--set` and its argument.
    pub set: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.set, self.reason)
    }
}

impl std::error::Error for SetError {}

impl Assignment {
    /// Parses `KEY=VALUE` (the first `=` splits them).
    pub fn parse(text: &str) -> Result<Assignment, SetError> {
        let (key, value) = text.split_once('=').ok_or_else(|| SetError {
            set: format!("--set {text}"),
            reason: "expected KEY=VALUE, e.g. cluster.nodes=40".into(),
        })?;
        Assignment::new(key, value)
    }

    /// `key` set to `value` (a TOML value, else the text as a string).
    pub fn new(key: &str, value: &str) -> Result<Assignment, SetError> {
        let key = key.trim();
        let path = parse_key(key).map_err(|reason| SetError {
            set: format!("--set {key}={value}"),
            reason,
        })?;
        Ok(Assignment {
            key: key.to_string(),
            path,
            text: value.to_string(),
            value: parse_value(value),
        })
    }

    /// Whether this assignment sets `field` (a dotted path as errors name
    /// fields) or a table or entry holding it.
    pub fn covers(&self, field: &str) -> bool {
        field == self.key
            || field.starts_with(&format!("{}.", self.key))
            || field.starts_with(&format!("{}[", self.key))
    }

    /// Applies it to a scenario's TOML.
    pub fn apply(&self, table: &mut Table) -> Result<(), SetError> {
        let fail = |reason: String| {
            Err(SetError {
                set: self.to_string(),
                reason,
            })
        };
        let mut current = table;
        let mut walked = String::new();
        for (position, step) in self.path.iter().enumerate() {
            let last = position + 1 == self.path.len();
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(&step.name);
            match step.index {
                None if last => {
                    current.insert(step.name.clone(), self.value.clone());
                    return Ok(());
                }
                None => {
                    let entry = current
                        .entry(step.name.clone())
                        .or_insert_with(|| Value::Table(Table::new()));
                    let Value::Table(next) = entry else {
                        return fail(format!("`{walked}` is a value, not a table"));
                    };
                    current = next;
                }
                Some(index) => {
                    let Some(Value::Array(entries)) = current.get_mut(&step.name) else {
                        return fail(format!(
                            "the scenario has no `[[{walked}]]` entries to index"
                        ));
                    };
                    let count = entries.len();
                    let Some(entry) = entries.get_mut(index) else {
                        return fail(format!(
                            "`{walked}[{index}]` is past the scenario's {count} `[[{walked}]]` entr{} (they count from 0)",
                            if count == 1 { "y" } else { "ies" }
                        ));
                    };
                    walked.push_str(&format!("[{index}]"));
                    if last {
                        *entry = self.value.clone();
                        return Ok(());
                    }
                    let Value::Table(next) = entry else {
                        return fail(format!("`{walked}` is a value, not a table"));
                    };
                    current = next;
                }
            }
        }
        unreachable!("a key has at least one step")
    }
}

/// `a.b[2].c` as steps; names are TOML bare keys.
fn parse_key(key: &str) -> Result<Vec<Step>, String> {
    if key.is_empty() {
        return Err("the key is empty".into());
    }
    key.split('.')
        .map(|part| {
            let (name, index) = match part.split_once('[') {
                Some((name, rest)) => {
                    let index = rest
                        .strip_suffix(']')
                        .and_then(|index| index.parse::<usize>().ok())
                        .ok_or_else(|| {
                            format!("`{part}`: an index is a number in brackets, e.g. load[0]")
                        })?;
                    (name, Some(index))
                }
                None => (part, None),
            };
            let bare = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !bare {
                return Err(format!(
                    "`{part}` is not a key (letters, digits, `_` and `-`, dots between)"
                ));
            }
            Ok(Step {
                name: name.to_string(),
                index,
            })
        })
        .collect()
}

/// `text` as a TOML value, or as a string when it is not one.
fn parse_value(text: &str) -> Value {
    let trimmed = text.trim();
    toml::from_str::<Table>(&format!("v = {trimmed}"))
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| Value::String(text.to_string()))
}

/// Splits a sweep's `V1,V2,...` at the commas outside brackets,
/// parentheses and quotes (`[[0,50],[1.5,100]]` and `ratio(write=1,read=1)`
/// stay whole).
pub fn split_values(text: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut current = String::new();
    for c in text.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(' | '{') => depth += 1,
            (None, ']' | ')' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                values.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    values.push(current);
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(text: &str, sets: &[&str]) -> Result<Table, SetError> {
        let mut table: Table = toml::from_str(text).unwrap();
        for set in sets {
            Assignment::parse(set)?.apply(&mut table)?;
        }
        Ok(table)
    }

    #[test]
    fn values_are_toml_or_else_text() {
        assert_eq!(parse_value("40"), Value::Integer(40));
        assert_eq!(parse_value("1.5"), Value::Float(1.5));
        assert_eq!(
            parse_value("scylla-2.2"),
            Value::String("scylla-2.2".into())
        );
        assert_eq!(parse_value("60s"), Value::String("60s".into()));
        assert_eq!(parse_value("\"quoted\""), Value::String("quoted".into()));
        assert_eq!(
            parse_value("[[0,50],[1.5,100]]"),
            toml::from_str::<Table>("v = [[0,50],[1.5,100]]").unwrap()["v"]
        );
        let command = "cassandra-stress mixed ratio(write=1,read=1) n=10";
        assert_eq!(parse_value(command), Value::String(command.into()));
    }

    #[test]
    fn keys_reach_tables_and_array_entries_and_make_missing_tables() {
        let text =
            "name = \"x\"\n[cluster]\nnodes = 3\n[[load]]\nname = \"a\"\n[[load]]\nname = \"b\"\n";
        let table = applied(
            text,
            &[
                "cluster.nodes=40",
                "load[1].name=c",
                "controller.compaction.points=[[0,50],[30,1000]]",
            ],
        )
        .unwrap();
        assert_eq!(table["cluster"]["nodes"], Value::Integer(40));
        assert_eq!(table["load"][1]["name"], Value::String("c".into()));
        assert_eq!(table["load"][0]["name"], Value::String("a".into()));
        assert_eq!(
            table["controller"]["compaction"]["points"][1][1],
            Value::Integer(1000)
        );
    }

    #[test]
    fn mistakes_name_the_set() {
        let text = "name = \"x\"\n[cluster]\nnodes = 3\n[[load]]\nname = \"a\"\n";
        let error = |set: &str| applied(text, &[set]).unwrap_err().to_string();
        assert_eq!(
            error("load[1].name=b"),
            "--set load[1].name=b: `load[1]` is past the scenario's 1 `[[load]]` entry (they count from 0)"
        );
        assert_eq!(
            error("fault[0].at=1s"),
            "--set fault[0].at=1s: the scenario has no `[[fault]]` entries to index"
        );
        assert_eq!(
            error("name.first=x"),
            "--set name.first=x: `name` is a value, not a table"
        );
        assert_eq!(
            error("cluster.nodes"),
            "--set cluster.nodes: expected KEY=VALUE, e.g. cluster.nodes=40"
        );
        assert_eq!(
            error("load[x].name=b"),
            "--set load[x].name=b: `load[x]`: an index is a number in brackets, e.g. load[0]"
        );
    }

    #[test]
    fn sweep_values_split_outside_brackets_and_quotes() {
        assert_eq!(split_values("10,20,40"), vec!["10", "20", "40"]);
        assert_eq!(
            split_values("[[0,50],[30,1000]],[[0,100]]"),
            vec!["[[0,50],[30,1000]]", "[[0,100]]"]
        );
        assert_eq!(split_values("\"a,b\",c"), vec!["\"a,b\"", "c"]);
        assert_eq!(
            split_values("cassandra-stress mixed ratio(write=1,read=1)"),
            vec!["cassandra-stress mixed ratio(write=1,read=1)"]
        );
    }
}
