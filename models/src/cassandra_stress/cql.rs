//! The CQL of a cassandra-stress user profile, read for what the twin needs
//! and never executed: the keyspace's replication, the table's columns, key
//! and options, and for each query which table it reads, whether it stays
//! in one partition, how it restricts the clustering columns and its
//! `LIMIT`.
//!
//! Statements the twin does not simulate are refused by name rather than
//! approximated: lightweight transactions (`IF ...`: Paxos rounds), counter
//! updates and counter tables, deletes (tombstones), batches, restrictions
//! on columns outside the primary key (a secondary index or `ALLOW
//! FILTERING` scan), `IN` lists, `token(...)` range scans, user-defined and
//! tuple types, and maps. Each error is one line saying which construct.
//!
//! Grammar followed: the CQL 3 reference (cassandra.apache.org/doc, "Data
//! Definition" and "Data Manipulation"), as far as the statements above
//! need it. Identifiers are case-insensitive unless double-quoted.

use std::fmt;

/// A CQL token.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    /// An identifier or keyword, lower-cased unless it was quoted.
    Word(String, bool),
    /// A string literal `'...'`.
    Str(String),
    /// A numeric literal.
    Number(String),
    /// One punctuation character: `( ) , ; . = < > ? * { } : [ ] + -`.
    Symbol(char),
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Word(word, true) => write!(f, "\"{word}\""),
            Token::Word(word, false) => f.write_str(word),
            Token::Str(text) => write!(f, "'{text}'"),
            Token::Number(text) => f.write_str(text),
            Token::Symbol(c) => write!(f, "{c}"),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '-' && text_starts_comment(&mut chars.clone()) {
            // `-- comment` to the end of the line.
            for next in chars.by_ref() {
                if next == '\n' {
                    break;
                }
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut word = String::new();
            while let Some(&next) = chars.peek() {
                if next.is_ascii_alphanumeric() || next == '_' {
                    word.push(next.to_ascii_lowercase());
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(Token::Word(word, false));
        } else if c.is_ascii_digit() {
            let mut number = String::new();
            while let Some(&next) = chars.peek() {
                if next.is_ascii_alphanumeric() || next == '.' {
                    number.push(next);
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(Token::Number(number));
        } else if c == '\'' || c == '"' {
            chars.next();
            let mut literal = String::new();
            let mut closed = false;
            while let Some(next) = chars.next() {
                if next == c {
                    // A doubled quote is the quote itself.
                    if chars.peek() == Some(&c) {
                        literal.push(c);
                        chars.next();
                        continue;
                    }
                    closed = true;
                    break;
                }
                literal.push(next);
            }
            if !closed {
                return Err(format!("an unclosed {c} quote"));
            }
            tokens.push(if c == '\'' {
                Token::Str(literal)
            } else {
                Token::Word(literal, true)
            });
        } else if "(),;.=<>?*{}:[]+-!".contains(c) {
            chars.next();
            tokens.push(Token::Symbol(c));
        } else if c == '$' {
            return Err(
                "a `$`: a template placeholder such as ${table_name} left unfilled? Write the name"
                    .into(),
            );
        } else {
            return Err(format!("an unexpected character `{c}`"));
        }
    }
    Ok(tokens)
}

fn text_starts_comment(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    chars.next() == Some('-') && chars.next() == Some('-')
}

/// A cursor over a statement's tokens.
struct Cursor {
    tokens: Vec<Token>,
    at: usize,
}

impl Cursor {
    fn new(text: &str) -> Result<Cursor, String> {
        Ok(Cursor {
            tokens: tokenize(text)?,
            at: 0,
        })
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn done(&self) -> bool {
        self.at >= self.tokens.len()
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(word, false)) if word == keyword)
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        if self.is_keyword(keyword) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), String> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(format!(
                "expected `{}` {}",
                keyword.to_uppercase(),
                self.found()
            ))
        }
    }

    fn eat_symbol(&mut self, symbol: char) -> bool {
        if self.peek() == Some(&Token::Symbol(symbol)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_symbol(&mut self, symbol: char) -> Result<(), String> {
        if self.eat_symbol(symbol) {
            Ok(())
        } else {
            Err(format!("expected `{symbol}` {}", self.found()))
        }
    }

    fn identifier(&mut self, what: &str) -> Result<String, String> {
        match self.next() {
            Some(Token::Word(word, _)) => Ok(word),
            Some(other) => Err(format!("expected {what}, found `{other}`")),
            None => Err(format!("expected {what}, found the end of the statement")),
        }
    }

    /// `[keyspace.]name`: the name, the keyspace dropped.
    fn qualified_name(&mut self, what: &str) -> Result<String, String> {
        let first = self.identifier(what)?;
        if self.eat_symbol('.') {
            self.identifier(what)
        } else {
            Ok(first)
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(token) => format!("but found `{token}`"),
            None => "but the statement ends".to_string(),
        }
    }

    /// `CREATE <kind> [IF NOT EXISTS]`, `kinds` the kind's keywords
    /// (`what` names it in the error).
    fn create(&mut self, kinds: &[&str], what: &str) -> Result<(), String> {
        self.expect_keyword("create")?;
        if !kinds.iter().any(|kind| self.eat_keyword(kind)) {
            return Err(format!("expected `CREATE {what}` {}", self.found()));
        }
        if self.eat_keyword("if") {
            self.expect_keyword("not")?;
            self.expect_keyword("exists")?;
        }
        Ok(())
    }

    /// Skips an optional trailing `;`, then demands the end.
    fn finish(&mut self) -> Result<(), String> {
        self.eat_symbol(';');
        if self.done() {
            Ok(())
        } else {
            Err(format!(
                "unexpected `{}` after the statement",
                self.tokens[self.at]
            ))
        }
    }

    /// `{ 'key': value, ... }` as (key, value text) pairs.
    fn option_map(&mut self) -> Result<Vec<(String, String)>, String> {
        self.expect_symbol('{')?;
        let mut entries = Vec::new();
        if self.eat_symbol('}') {
            return Ok(entries);
        }
        loop {
            let key = match self.next() {
                Some(Token::Str(key)) => key,
                Some(Token::Word(key, _)) => key,
                other => {
                    return Err(format!(
                        "expected a quoted option name in a {{...}} map, found {}",
                        other.map_or("the end".to_string(), |t| format!("`{t}`"))
                    ))
                }
            };
            self.expect_symbol(':')?;
            let value = match self.next() {
                Some(Token::Str(value)) | Some(Token::Number(value)) => value,
                Some(Token::Word(value, _)) => value,
                other => {
                    return Err(format!(
                        "expected a value for `{key}`, found {}",
                        other.map_or("the end".to_string(), |t| format!("`{t}`"))
                    ))
                }
            };
            entries.push((key.to_ascii_lowercase(), value));
            if self.eat_symbol('}') {
                return Ok(entries);
            }
            self.expect_symbol(',')?;
        }
    }
}

/// The short class name (`LZ4Compressor` of
/// `org.apache.cassandra.io.compress.LZ4Compressor`) under the first of
/// `keys` an option map gives.
fn class_in(map: &[(String, String)], keys: &[&str]) -> Option<String> {
    map.iter()
        .find(|(key, _)| keys.contains(&key.as_str()))
        .map(|(_, value)| value.rsplit('.').next().unwrap_or(value).to_string())
}

/// A keyspace's replication, from `CREATE KEYSPACE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyspaceDefinition {
    /// The keyspace's name.
    pub name: String,
    /// `NetworkTopologyStrategy` (one datacenter) rather than
    /// `SimpleStrategy`.
    pub network_topology: bool,
    /// Replicas of each partition.
    pub replication_factor: u32,
}

/// Reads `CREATE KEYSPACE [IF NOT EXISTS] name WITH replication = {...}
/// [AND durable_writes = ...]`.
pub fn keyspace_definition(text: &str) -> Result<KeyspaceDefinition, String> {
    let mut cursor = Cursor::new(text)?;
    cursor.create(&["keyspace", "schema"], "KEYSPACE")?;
    let name = cursor.identifier("the keyspace's name")?;
    cursor.expect_keyword("with")?;
    let mut replication = None;
    loop {
        let option = cursor.identifier("a keyspace option")?;
        cursor.expect_symbol('=')?;
        match option.as_str() {
            "replication" => replication = Some(cursor.option_map()?),
            "durable_writes" => {
                cursor.next();
            }
            other => {
                return Err(format!(
                "unknown keyspace option `{other}`: accepted are replication and durable_writes"
            ))
            }
        }
        if !cursor.eat_keyword("and") {
            break;
        }
    }
    cursor.finish()?;
    let replication = replication.ok_or("the keyspace has no `replication = {...}`".to_string())?;
    let class = class_in(&replication, &["class"])
        .ok_or("the replication map has no 'class'".to_string())?;
    let whole = |key: &str, value: &str| {
        value.parse::<u32>().map_err(|_| {
            format!("replication '{key}': expected a whole number of replicas, found `{value}`")
        })
    };
    match class.to_ascii_lowercase().as_str() {
        "simplestrategy" => {
            let (_, factor) = replication
                .iter()
                .find(|(key, _)| key == "replication_factor")
                .ok_or("SimpleStrategy needs a 'replication_factor'".to_string())?;
            Ok(KeyspaceDefinition {
                name,
                network_topology: false,
                replication_factor: whole("replication_factor", factor)?,
            })
        }
        "networktopologystrategy" => {
            let datacenters: Vec<&(String, String)> =
                replication.iter().filter(|(key, _)| key != "class").collect();
            match datacenters.as_slice() {
                [(dc, factor)] => Ok(KeyspaceDefinition {
                    name,
                    network_topology: true,
                    replication_factor: whole(dc, factor)?,
                }),
                [] => Err("NetworkTopologyStrategy names no datacenter".to_string()),
                _ => Err(format!(
                    "NetworkTopologyStrategy over {} datacenters: the twin simulates one datacenter",
                    datacenters.len()
                )),
            }
        }
        _ => Err(format!(
            "replication class `{class}` is not modelled: accepted are SimpleStrategy and NetworkTopologyStrategy"
        )),
    }
}

/// A CQL column type, as far as its stored size goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CqlType {
    /// `text`, `varchar`, `ascii`: c-s generates strings of the column's
    /// `size` in characters (one byte each).
    Text,
    /// `blob`: `size` bytes.
    Blob,
    /// A type of fixed width, in bytes (`int` 4, `bigint` 8, `uuid` 16...).
    Fixed(&'static str, u32),
    /// `list<T>` or `set<T>` of a fixed-width `T`: c-s draws the element
    /// count from the column's `size`.
    Collection(&'static str, u32),
}

impl CqlType {
    /// The CQL name (`text`, `bigint`, `list<int>`...).
    pub fn name(&self) -> String {
        match self {
            CqlType::Text => "text".into(),
            CqlType::Blob => "blob".into(),
            CqlType::Fixed(name, _) => (*name).into(),
            CqlType::Collection(name, _) => (*name).into(),
        }
    }
}

/// Fixed-width types and their stored width: the CQL binary protocol's
/// encodings (`bigint`, `timestamp`, `time`, `double`, `counter` 8;
/// `int`, `float`, `date` 4; `smallint` 2; `tinyint`, `boolean` 1; `uuid`,
/// `timeuuid` 16; `inet` 4, c-s generating IPv4 addresses); `varint` and
/// `decimal` as c-s generates them, from a `long` (8 bytes, and 4 more for
/// the decimal's scale).
const FIXED_TYPES: [(&str, u32); 16] = [
    ("bigint", 8),
    ("timestamp", 8),
    ("time", 8),
    ("double", 8),
    ("int", 4),
    ("float", 4),
    ("date", 4),
    ("smallint", 2),
    ("tinyint", 1),
    ("boolean", 1),
    ("uuid", 16),
    ("timeuuid", 16),
    ("inet", 4),
    ("varint", 8),
    ("decimal", 12),
    ("counter", 8),
];

const COLLECTION_NAMES: [(&str, &str); 16] = [
    ("bigint", "list<bigint>"),
    ("timestamp", "list<timestamp>"),
    ("time", "list<time>"),
    ("double", "list<double>"),
    ("int", "list<int>"),
    ("float", "list<float>"),
    ("date", "list<date>"),
    ("smallint", "list<smallint>"),
    ("tinyint", "list<tinyint>"),
    ("boolean", "list<boolean>"),
    ("uuid", "list<uuid>"),
    ("timeuuid", "list<timeuuid>"),
    ("inet", "list<inet>"),
    ("varint", "list<varint>"),
    ("decimal", "list<decimal>"),
    ("counter", "list<counter>"),
];

const ACCEPTED_TYPES: &str = "text, varchar, ascii, blob, bigint, int, smallint, tinyint, boolean, float, double, decimal, varint, uuid, timeuuid, timestamp, date, time, inet, and list<T> or set<T> of the fixed-width ones";

fn cql_type(cursor: &mut Cursor, column: &str) -> Result<CqlType, String> {
    let name = cursor.identifier(&format!("the type of column `{column}`"))?;
    let simple = |name: &str| -> Option<CqlType> {
        match name {
            "text" | "varchar" | "ascii" => Some(CqlType::Text),
            "blob" => Some(CqlType::Blob),
            _ => FIXED_TYPES
                .iter()
                .find(|(fixed, _)| *fixed == name)
                .map(|&(fixed, width)| CqlType::Fixed(fixed, width)),
        }
    };
    match name.as_str() {
        "list" | "set" => {
            cursor.expect_symbol('<')?;
            let element = cursor.identifier(&format!("the element type of column `{column}`"))?;
            cursor.expect_symbol('>')?;
            match simple(&element) {
                Some(CqlType::Fixed(fixed, width)) if fixed != "counter" => {
                    let label = COLLECTION_NAMES
                        .iter()
                        .find(|(element, _)| *element == fixed)
                        .map_or("list", |(_, label)| *label);
                    Ok(CqlType::Collection(label, width))
                }
                _ => Err(format!(
                    "column `{column}` is a {name}<{element}>: collections of text, blobs or collections are not modelled (their element sizes); accepted types are {ACCEPTED_TYPES}"
                )),
            }
        }
        "map" | "frozen" | "tuple" => Err(format!(
            "column `{column}` is a {name}<...>: not modelled by the twin; accepted types are {ACCEPTED_TYPES}"
        )),
        other => simple(other).ok_or_else(|| {
            format!("column `{column}` has the type `{other}`, not modelled by the twin (a user-defined type?); accepted types are {ACCEPTED_TYPES}")
        }),
    }
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDefinition {
    /// Its name, lower-cased unless quoted in the definition.
    pub name: String,
    /// Its type.
    pub cql_type: CqlType,
    /// `STATIC`: one value per partition.
    pub is_static: bool,
}

/// What the twin reads from a `CREATE TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub struct TableDefinition {
    /// The table's name (without keyspace).
    pub name: String,
    /// Every column in definition order.
    pub columns: Vec<ColumnDefinition>,
    /// Indexes into `columns` of the partition key.
    pub partition_key: Vec<usize>,
    /// Indexes into `columns` of the clustering columns, in order.
    pub clustering: Vec<usize>,
    /// `compaction = {'class': ..., other options}`: the class's short
    /// name and the other options, if given.
    pub compaction: Option<(String, Vec<(String, String)>)>,
    /// `compression = {...}`: `Some(None)` when disabled (`{}` or
    /// `'enabled': false`), `Some(Some((class, chunk KiB)))` otherwise.
    pub compression: Option<Option<(String, Option<u64>)>>,
    /// `default_time_to_live`, seconds, when above 0: every row expires
    /// that long after it is written.
    pub default_time_to_live: Option<u64>,
    /// `gc_grace_seconds`, if given: how long an expired row's tombstone
    /// is kept.
    pub gc_grace_seconds: Option<u64>,
}

impl TableDefinition {
    /// The column called `name`, if any.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|column| column.name == name)
    }
}

/// Table options read and accepted without effect on the simulation:
/// they change nothing the twin models in a fault-free run.
const HARMLESS_TABLE_OPTIONS: [&str; 7] = [
    "comment",
    "caching",
    "bloom_filter_fp_chance",
    "crc_check_chance",
    "min_index_interval",
    "max_index_interval",
    "memtable_flush_period_in_ms",
];

/// Reads `CREATE TABLE [IF NOT EXISTS] [ks.]name (columns..., PRIMARY KEY
/// (...)) [WITH options]`.
pub fn table_definition(text: &str) -> Result<TableDefinition, String> {
    let mut cursor = Cursor::new(text)?;
    cursor.create(&["table", "columnfamily"], "TABLE")?;
    let name = cursor.qualified_name("the table's name")?;
    cursor.expect_symbol('(')?;
    let mut columns: Vec<ColumnDefinition> = Vec::new();
    let mut key: Option<(Vec<String>, Vec<String>)> = None;
    loop {
        if cursor.is_keyword("primary") {
            cursor.next();
            cursor.expect_keyword("key")?;
            cursor.expect_symbol('(')?;
            let partition = if cursor.eat_symbol('(') {
                let mut names = vec![cursor.identifier("a partition key column")?];
                while cursor.eat_symbol(',') {
                    names.push(cursor.identifier("a partition key column")?);
                }
                cursor.expect_symbol(')')?;
                names
            } else {
                vec![cursor.identifier("a partition key column")?]
            };
            let mut clustering = Vec::new();
            while cursor.eat_symbol(',') {
                clustering.push(cursor.identifier("a clustering column")?);
            }
            cursor.expect_symbol(')')?;
            if key.is_some() {
                return Err("the table gives its PRIMARY KEY twice".into());
            }
            key = Some((partition, clustering));
        } else {
            let column = cursor.identifier("a column name or PRIMARY KEY")?;
            if columns.iter().any(|c| c.name == column) {
                return Err(format!("column `{column}` is defined twice"));
            }
            let cql_type = cql_type(&mut cursor, &column)?;
            let is_static = cursor.eat_keyword("static");
            if cursor.eat_keyword("primary") {
                cursor.expect_keyword("key")?;
                if key.is_some() {
                    return Err("the table gives its PRIMARY KEY twice".into());
                }
                key = Some((vec![column.clone()], Vec::new()));
            }
            columns.push(ColumnDefinition {
                name: column,
                cql_type,
                is_static,
            });
        }
        if cursor.eat_symbol(')') {
            break;
        }
        cursor.expect_symbol(',')?;
    }
    let (partition_names, clustering_names) =
        key.ok_or("the table has no PRIMARY KEY".to_string())?;
    let find = |name: &String, role: &str| {
        columns
            .iter()
            .position(|c| &c.name == name)
            .ok_or_else(|| format!("the {role} column `{name}` is not among the table's columns"))
    };
    let partition_key = partition_names
        .iter()
        .map(|name| find(name, "partition key"))
        .collect::<Result<Vec<_>, _>>()?;
    let clustering = clustering_names
        .iter()
        .map(|name| find(name, "clustering"))
        .collect::<Result<Vec<_>, _>>()?;
    if columns
        .iter()
        .any(|c| c.cql_type == CqlType::Fixed("counter", 8))
    {
        return Err(
            "the table has counter columns: counter updates (a read before each write) are not simulated by the twin".into(),
        );
    }
    let mut table = TableDefinition {
        name,
        columns,
        partition_key,
        clustering,
        compaction: None,
        compression: None,
        default_time_to_live: None,
        gc_grace_seconds: None,
    };
    if cursor.eat_keyword("with") {
        loop {
            if cursor.eat_keyword("clustering") {
                cursor.expect_keyword("order")?;
                cursor.expect_keyword("by")?;
                cursor.expect_symbol('(')?;
                loop {
                    cursor.identifier("a clustering column")?;
                    if !(cursor.eat_keyword("asc") || cursor.eat_keyword("desc")) {
                        return Err(format!("expected ASC or DESC {}", cursor.found()));
                    }
                    if !cursor.eat_symbol(',') {
                        break;
                    }
                }
                cursor.expect_symbol(')')?;
            } else if cursor.eat_keyword("compact") {
                cursor.expect_keyword("storage")?;
            } else {
                let option = cursor.identifier("a table option")?;
                cursor.expect_symbol('=')?;
                match option.as_str() {
                    "compaction" => {
                        let map = cursor.option_map()?;
                        let class = class_in(&map, &["class"])
                            .ok_or("compaction = {...} has no 'class'".to_string())?;
                        let rest = map.into_iter().filter(|(key, _)| key != "class").collect();
                        table.compaction = Some((class, rest));
                    }
                    "compression" => {
                        let map = cursor.option_map()?;
                        let disabled = map.is_empty()
                            || map.iter().any(|(key, value)| {
                                key == "enabled" && value.eq_ignore_ascii_case("false")
                            })
                            || map.iter().any(|(key, value)| {
                                key == "sstable_compression" && value.is_empty()
                            });
                        if disabled {
                            table.compression = Some(None);
                        } else {
                            let class = class_in(&map, &["class", "sstable_compression"])
                                .ok_or("compression = {...} has no 'class'".to_string())?;
                            let chunk = map
                                .iter()
                                .find(|(key, _)| key == "chunk_length_in_kb" || key == "chunk_length_kb")
                                .map(|(key, value)| {
                                    value.parse::<u64>().map_err(|_| {
                                        format!("compression '{key}': expected a whole number of KiB, found `{value}`")
                                    })
                                })
                                .transpose()?;
                            table.compression = Some(Some((class, chunk)));
                        }
                    }
                    "default_time_to_live" | "gc_grace_seconds" => {
                        let seconds = match cursor.next() {
                            Some(Token::Number(text)) => text.parse::<u64>().ok(),
                            _ => None,
                        }
                        .ok_or_else(|| format!("{option}: expected a whole number of seconds"))?;
                        if option == "gc_grace_seconds" {
                            table.gc_grace_seconds = Some(seconds);
                        } else {
                            table.default_time_to_live = (seconds > 0).then_some(seconds);
                        }
                    }
                    "cdc" => {
                        return Err("cdc: change data capture is in none of the twin's presets: Scylla's `cdc = {...}` came with Scylla 3.2 (experimental), after scylla-3.0, the newest Scylla preset; Cassandra's `cdc = true` (since 3.8) keeps commitlog segments for a consumer, which the twin does not simulate".into());
                    }
                    harmless if HARMLESS_TABLE_OPTIONS.contains(&harmless) => {
                        if cursor.peek() == Some(&Token::Symbol('{')) {
                            cursor.option_map()?;
                        } else {
                            cursor.next();
                        }
                    }
                    other => {
                        return Err(format!(
                            "table option `{other}` is not modelled by the twin (set speculative retry and read repair chance in the scenario's [cluster.yaml]); accepted are compaction, compression, CLUSTERING ORDER BY, COMPACT STORAGE, default_time_to_live, gc_grace_seconds, {}",
                            HARMLESS_TABLE_OPTIONS.join(", ")
                        ))
                    }
                }
            }
            if !cursor.eat_keyword("and") {
                break;
            }
        }
    }
    cursor.finish()?;
    Ok(table)
}

/// What a query does, as far as the twin simulates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryShape {
    /// A `SELECT` of one partition.
    Select {
        /// Leading clustering columns restricted by `=`.
        clustering_equal: usize,
        /// Whether the next clustering column has a range (`<`, `<=`,
        /// `>`, `>=`) restriction.
        clustering_range: bool,
        /// `LIMIT n`.
        limit: Option<u64>,
    },
    /// An `INSERT` or `UPDATE` of one row (no `IF`, no counter).
    Write,
}

/// Reads a profile query for its shape, checking it addresses `table`.
pub fn query(text: &str, table: &TableDefinition) -> Result<QueryShape, String> {
    let mut cursor = Cursor::new(text)?;
    if cursor.eat_keyword("select") {
        select(&mut cursor, table)
    } else if cursor.eat_keyword("insert") || cursor.is_keyword("update") {
        write(&mut cursor, table)
    } else if cursor.is_keyword("delete") {
        Err("DELETE: deletions (tombstones) are not simulated by the twin".into())
    } else if cursor.is_keyword("begin") {
        Err("BEGIN BATCH: batches as queries are not simulated by the twin (use the profile's `insert` for batched writes)".into())
    } else {
        Err(format!(
            "expected SELECT, INSERT or UPDATE {}",
            cursor.found()
        ))
    }
}

fn check_table(cursor: &mut Cursor, table: &TableDefinition) -> Result<(), String> {
    let name = cursor.qualified_name("a table name")?;
    if name != table.name {
        return Err(format!(
            "the query reads table `{name}`, but the profile's table is `{}`: the twin simulates one table per profile",
            table.name
        ));
    }
    Ok(())
}

fn select(cursor: &mut Cursor, table: &TableDefinition) -> Result<QueryShape, String> {
    if cursor.eat_keyword("distinct") {
        return Err(
            "SELECT DISTINCT scans partition keys across the ring: not simulated by the twin"
                .into(),
        );
    }
    if cursor.eat_keyword("json") {
        // SELECT JSON reads the same rows.
    }
    // The selection: anything up to FROM (functions, aliases, `*`).
    let mut depth = 0usize;
    loop {
        match cursor.peek() {
            None => return Err("expected FROM in the SELECT".into()),
            Some(Token::Word(word, false)) if word == "from" && depth == 0 => break,
            Some(Token::Symbol('(')) => depth += 1,
            Some(Token::Symbol(')')) => depth = depth.saturating_sub(1),
            Some(Token::Word(word, false)) if word == "token" => {
                return Err(
                    "token(...) in a query: token range scans are not simulated by the twin".into(),
                )
            }
            _ => {}
        }
        cursor.next();
    }
    cursor.expect_keyword("from")?;
    check_table(cursor, table)?;
    let mut partition_restricted = vec![false; table.partition_key.len()];
    let mut clustering_equal = vec![false; table.clustering.len()];
    let mut clustering_range = vec![false; table.clustering.len()];
    if cursor.eat_keyword("where") {
        loop {
            if cursor.is_keyword("token") {
                return Err(
                    "token(...) in a query: token range scans are not simulated by the twin".into(),
                );
            }
            if cursor.peek() == Some(&Token::Symbol('(')) {
                return Err("a multi-column restriction `(a, b) > (?, ?)` is not simulated by the twin; restrict each clustering column alone".into());
            }
            let column = cursor.identifier("a column in WHERE")?;
            let index = table.column(&column).ok_or_else(|| {
                format!(
                    "WHERE names `{column}`, which is not a column of `{}`",
                    table.name
                )
            })?;
            let operator = match (cursor.next(), cursor.peek().cloned()) {
                (Some(Token::Symbol('=')), _) => "=",
                (Some(Token::Symbol('<')), Some(Token::Symbol('='))) => {
                    cursor.next();
                    "<="
                }
                (Some(Token::Symbol('>')), Some(Token::Symbol('='))) => {
                    cursor.next();
                    ">="
                }
                (Some(Token::Symbol('<')), _) => "<",
                (Some(Token::Symbol('>')), _) => ">",
                (Some(Token::Word(word, false)), _) if word == "in" => {
                    return Err(format!("`{column} IN ...`: multi-key reads are not simulated by the twin"))
                }
                (Some(Token::Word(word, false)), _) if word == "contains" => {
                    return Err(format!("`{column} CONTAINS ...`: a secondary index or filtering scan, not simulated by the twin"))
                }
                (other, _) => {
                    return Err(format!(
                        "expected an operator after `{column}`, found {}",
                        other.map_or("the end".to_string(), |t| format!("`{t}`"))
                    ))
                }
            };
            match cursor.next() {
                Some(Token::Symbol('?')) | Some(Token::Number(_)) | Some(Token::Str(_)) => {}
                Some(Token::Symbol(':')) => {
                    cursor.identifier("a bind marker name")?;
                }
                other => {
                    return Err(format!(
                        "expected `?` or a literal after `{column} {operator}`, found {}",
                        other.map_or("the end".to_string(), |t| format!("`{t}`"))
                    ))
                }
            }
            if let Some(at) = table.partition_key.iter().position(|&c| c == index) {
                if operator != "=" {
                    return Err(format!("`{column} {operator} ?` on the partition key: a range scan across partitions, not simulated by the twin"));
                }
                partition_restricted[at] = true;
            } else if let Some(at) = table.clustering.iter().position(|&c| c == index) {
                if operator == "=" {
                    clustering_equal[at] = true;
                } else {
                    clustering_range[at] = true;
                }
            } else {
                return Err(format!("WHERE restricts `{column}`, which is not in the primary key: a secondary index or ALLOW FILTERING scan, not simulated by the twin"));
            }
            if !cursor.eat_keyword("and") {
                break;
            }
        }
    }
    if let Some(missing) = partition_restricted
        .iter()
        .position(|restricted| !restricted)
    {
        let name = &table.columns[table.partition_key[missing]].name;
        return Err(format!("the query does not restrict the partition key column `{name}` by `=`: reads across partitions are not simulated by the twin"));
    }
    // Clustering restrictions: a prefix of `=`, then at most one range.
    let equal = clustering_equal.iter().take_while(|&&eq| eq).count();
    let range = clustering_range.get(equal).copied().unwrap_or(false);
    let restricted_after =
        (equal + 1..table.clustering.len()).any(|at| clustering_equal[at] || clustering_range[at]);
    if restricted_after {
        return Err("the clustering restrictions are not a prefix of `=` followed by at most one range: Cassandra refuses them without ALLOW FILTERING, which the twin does not simulate".into());
    }
    if (0..equal).any(|at| clustering_range[at]) {
        return Err("a clustering column restricted by both `=` and a range".into());
    }
    let mut limit = None;
    loop {
        if cursor.eat_keyword("order") {
            cursor.expect_keyword("by")?;
            loop {
                cursor.identifier("a clustering column")?;
                cursor.eat_keyword("asc");
                cursor.eat_keyword("desc");
                if !cursor.eat_symbol(',') {
                    break;
                }
            }
        } else if cursor.eat_keyword("per") {
            return Err("PER PARTITION LIMIT is not simulated by the twin".into());
        } else if cursor.eat_keyword("limit") {
            limit = match cursor.next() {
                Some(Token::Number(n)) => {
                    Some(n.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                        format!("LIMIT {n}: expected a whole number of rows above zero")
                    })?)
                }
                Some(Token::Symbol('?')) => {
                    return Err("LIMIT ?: a bound limit is not simulated; write the number".into())
                }
                other => {
                    return Err(format!(
                        "expected a number after LIMIT, found {}",
                        other.map_or("the end".to_string(), |t| format!("`{t}`"))
                    ))
                }
            };
        } else if cursor.eat_keyword("allow") {
            cursor.expect_keyword("filtering")?;
            return Err("ALLOW FILTERING: filtering scans are not simulated by the twin".into());
        } else {
            break;
        }
    }
    cursor.finish()?;
    Ok(QueryShape::Select {
        clustering_equal: equal,
        clustering_range: range,
        limit,
    })
}

fn write(cursor: &mut Cursor, table: &TableDefinition) -> Result<QueryShape, String> {
    let update = cursor.eat_keyword("update");
    if !update {
        cursor.expect_keyword("into")?;
    }
    check_table(cursor, table)?;
    // Scan the rest for what the twin refuses: `IF` (a lightweight
    // transaction) and `c = c + ?` (a counter or collection append).
    let mut previous: Option<Token> = None;
    while let Some(token) = cursor.next() {
        match &token {
            Token::Word(word, false) if word == "if" => {
                return Err("IF ...: a lightweight transaction (Paxos rounds) is not simulated by the twin; Scylla brought them in 3.2 (experimental, generally available from 4.0), after scylla-3.0, the newest Scylla preset; Cassandra has had them since 2.0".into())
            }
            Token::Word(word, false) if word == "using" && cursor.is_keyword("ttl") => {
                return Err("USING TTL: a TTL set per write is not simulated by the twin (a table's default_time_to_live under TimeWindowCompactionStrategy is)".into())
            }
            Token::Symbol('+') | Token::Symbol('-')
                if matches!(previous, Some(Token::Word(_, _))) =>
            {
                return Err("`c = c + ?`: counter updates and collection appends (a read before the write) are not simulated by the twin".into())
            }
            _ => {}
        }
        previous = Some(token);
    }
    Ok(QueryShape::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv() -> TableDefinition {
        table_definition("CREATE TABLE kv (key bigint PRIMARY KEY, value blob)").unwrap()
    }

    fn wide() -> TableDefinition {
        table_definition(
            "CREATE TABLE IF NOT EXISTS ks.events (name text, day int, seq timeuuid, body blob, \
             PRIMARY KEY ((name), day, seq)) WITH CLUSTERING ORDER BY (day DESC, seq ASC) \
             AND compaction = { 'class':'LeveledCompactionStrategy', 'sstable_size_in_mb': 160 } \
             AND compression = {'sstable_compression': 'LZ4Compressor', 'chunk_length_kb': 4} \
             AND comment = 'a wide table';",
        )
        .unwrap()
    }

    #[test]
    fn tables_give_keys_types_and_options() {
        let table = kv();
        assert_eq!(table.name, "kv");
        assert_eq!(table.partition_key, vec![0]);
        assert!(table.clustering.is_empty());
        assert_eq!(table.columns[1].cql_type, CqlType::Blob);
        assert_eq!(table.compaction, None);

        let table = wide();
        assert_eq!(table.name, "events");
        assert_eq!(table.partition_key, vec![0]);
        assert_eq!(table.clustering, vec![1, 2]);
        assert_eq!(table.columns[2].cql_type, CqlType::Fixed("timeuuid", 16));
        assert_eq!(
            table.compaction,
            Some((
                "LeveledCompactionStrategy".into(),
                vec![("sstable_size_in_mb".into(), "160".into())]
            ))
        );
        assert_eq!(
            table.compression,
            Some(Some(("LZ4Compressor".into(), Some(4))))
        );

        let composite = table_definition(
            "create table t (a int, b text, c int, v list<int>, primary key ((a, b), c)) with compression = {}",
        )
        .unwrap();
        assert_eq!(composite.partition_key, vec![0, 1]);
        assert_eq!(composite.clustering, vec![2]);
        assert_eq!(
            composite.columns[3].cql_type,
            CqlType::Collection("list<int>", 4)
        );
        assert_eq!(composite.compression, Some(None));
    }

    #[test]
    fn a_table_ttl_and_gc_grace_are_read() {
        let table = table_definition(
            "CREATE TABLE t (k int PRIMARY KEY, v text) WITH compaction = {'class': 'TimeWindowCompactionStrategy', 'compaction_window_unit': 'MINUTES', 'compaction_window_size': 10} AND default_time_to_live = 3600 AND gc_grace_seconds = 0",
        )
        .unwrap();
        assert_eq!(table.default_time_to_live, Some(3600));
        assert_eq!(table.gc_grace_seconds, Some(0));
        let (class, options) = table.compaction.unwrap();
        assert_eq!(class, "TimeWindowCompactionStrategy");
        assert_eq!(options.len(), 2);
        // A TTL of 0 is no TTL.
        let none =
            table_definition("CREATE TABLE t (k int PRIMARY KEY) WITH default_time_to_live = 0")
                .unwrap();
        assert_eq!(none.default_time_to_live, None);
    }

    #[test]
    fn tables_refuse_what_is_not_simulated() {
        for (text, needle) in [
            ("CREATE TABLE t (k int PRIMARY KEY, c counter)", "counter"),
            ("CREATE TABLE t (k int PRIMARY KEY, m map<int,int>)", "map"),
            (
                "CREATE TABLE t (k int PRIMARY KEY, u address)",
                "user-defined",
            ),
            (
                "CREATE TABLE t (k int PRIMARY KEY, v text) WITH default_time_to_live = 'a'",
                "whole number of seconds",
            ),
            (
                "CREATE TABLE t (k int PRIMARY KEY, v text) WITH speculative_retry = 'NONE'",
                "speculative_retry",
            ),
            ("CREATE TABLE t (k int, v text)", "PRIMARY KEY"),
            ("CREATE TABLE t (k int, v text, PRIMARY KEY (x))", "`x`"),
            (
                "CREATE TABLE ks.${table_name} (k int PRIMARY KEY)",
                "placeholder",
            ),
        ] {
            let error = table_definition(text).unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
            assert!(!error.contains('\n'));
        }
    }

    #[test]
    fn keyspaces_give_replication() {
        let ks = keyspace_definition(
            "CREATE KEYSPACE IF NOT EXISTS stress WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3} AND durable_writes = true;",
        )
        .unwrap();
        assert_eq!(
            ks,
            KeyspaceDefinition {
                name: "stress".into(),
                network_topology: false,
                replication_factor: 3
            }
        );
        let nts = keyspace_definition(
            "create keyspace k with replication = {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc1': '2'}",
        )
        .unwrap();
        assert!(nts.network_topology);
        assert_eq!(nts.replication_factor, 2);
        let two = keyspace_definition(
            "create keyspace k with replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 3}",
        )
        .unwrap_err();
        assert!(two.contains("one datacenter"), "{two}");
    }

    #[test]
    fn queries_give_their_shape() {
        let table = wide();
        assert_eq!(
            query("select * from events where name = ?", &table),
            Ok(QueryShape::Select {
                clustering_equal: 0,
                clustering_range: false,
                limit: None
            })
        );
        assert_eq!(
            query(
                "SELECT body FROM ks.events WHERE name = ? AND day = ? AND seq >= ? LIMIT 10;",
                &table
            ),
            Ok(QueryShape::Select {
                clustering_equal: 1,
                clustering_range: true,
                limit: Some(10)
            })
        );
        assert_eq!(
            query(
                "select * from events where name = ? and day = ? and seq = ?",
                &table
            ),
            Ok(QueryShape::Select {
                clustering_equal: 2,
                clustering_range: false,
                limit: None
            })
        );
        assert_eq!(
            query(
                "update events set body = ? where name = ? and day = ? and seq = ?",
                &table
            ),
            Ok(QueryShape::Write)
        );
    }

    #[test]
    fn queries_refuse_what_is_not_simulated() {
        let table = wide();
        for (text, needle) in [
            (
                "select * from events where name = ? and body = ?",
                "secondary index",
            ),
            (
                "select * from events where day = ?",
                "partition key column `name`",
            ),
            ("select * from other where name = ?", "table `other`"),
            ("select * from events where token(name) > ?", "token"),
            ("select * from events where name in ?", "IN"),
            (
                "select * from events where name = ? allow filtering",
                "ALLOW FILTERING",
            ),
            ("select * from events where name = ? and seq = ?", "prefix"),
            (
                "insert into events (name, day, seq, body) values (?, ?, ?, ?) if not exists",
                "lightweight transaction",
            ),
            (
                "update events set body = ? where name = ? and day = ? and seq = ? if body = ?",
                "Scylla brought them in 3.2 (experimental, generally available from 4.0)",
            ),
            (
                "insert into events (name, day, seq, body) values (?, ?, ?, ?) using ttl 60",
                "a TTL set per write",
            ),
            ("update events set n = n + ? where name = ?", "counter"),
            ("delete from events where name = ?", "DELETE"),
            ("select * from events where name = ? limit ?", "LIMIT ?"),
        ] {
            let error = query(text, &table).unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
            assert!(!error.contains('\n'));
        }
    }
}
