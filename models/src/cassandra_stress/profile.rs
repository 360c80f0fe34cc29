//! cassandra-stress user profiles: the YAML file of `cassandra-stress user
//! profile=FILE.yaml ops(insert=1,getdata=2)`, read as c-s 3.11 reads it.
//!
//! A profile declares (c-s `StressProfile.java`, `StressYaml.java`,
//! `tools/cqlstress-example.yaml`):
//! - `keyspace` and `keyspace_definition` (a `CREATE KEYSPACE`: replication
//!   strategy and factor);
//! - `table` and `table_definition` (a `CREATE TABLE`: partition key,
//!   clustering columns, column types, compaction and compression);
//! - `columnspec`: per column, `size` (bytes of a text or blob value, or
//!   elements of a collection; default `uniform(4..8)`), `population`
//!   (distinct values; default `uniform(1..100B)`) and for clustering
//!   columns `cluster` (values per parent row, so rows per partition is
//!   their product; default `fixed(1)`);
//! - `insert`: `partitions` (partitions per batch, default `fixed(1)`),
//!   `select` (the share of a partition's rows each insert writes, a ratio
//!   `DIST/DIVISOR`, default `fixed(1)/1`), `row-population` (likewise) and
//!   `batchtype` (`LOGGED`, the default, or `UNLOGGED`);
//! - `queries`: named statements, each `cql:` and `fields: samerow|multirow`
//!   (or, as c-s 2.1 wrote them, the CQL text alone);
//! - `token_range_queries`: named scans of the ring (`columns`,
//!   `page_size`);
//! - `extra_definitions`: CQL run after the table is made (types, indexes,
//!   materialized views).
//!
//! c-s prepares only what `ops(...)` names, so a query, token range query
//! or extra definition the twin does not simulate is parsed, checked and
//! kept ([`Unsimulated`]); [`UserProfile::refusal`] refuses it only for a
//! load that uses it (an index or a view: a load that writes).
//!
//! Distributions are c-s's `OptionDistribution` forms: `FIXED(v)`,
//! `UNIFORM(min..max)`, `GAUSSIAN(min..max[,stdvrng])` and
//! `GAUSSIAN(min..max,mean,stdev)` (aliases `gauss`, `normal`, `norm`),
//! `EXP(min..max)`, `EXTREME(min..max,shape)` (aliases `extr`, `weibull`),
//! `SEQ(min..max)`, each inverted by a leading `~` ([`ProfileDistribution`]).
//!
//! What the twin takes from it: the table's partition key size, each row's
//! bytes (clustering and regular columns, by type: text and blobs their
//! `size`, fixed-width types their width, collections `size` elements), the
//! rows of a partition (one `cluster` draw per clustering column, their
//! product, drawn from the partition's seed, so every write and read of a
//! partition sees the same count, as c-s seeds its clustering
//! distributions; c-s draws each level per parent row: the same mean, a
//! narrower spread than one draw a level shared by its parents), what
//! each insert writes (its
//! `select` share of the rows of each of its `partitions`, a batch when
//! there are several, LOGGED or not by `batchtype`) and what each query reads
//! ([`cql::QueryShape`], [`UserProfile::rows_selected`]). A column's `population` is read and
//! checked but does not change the load: the twin draws partitions from
//! `-pop`, and values are not stored.
//!
//! Errors are one line: the file, the key (`queries.getdata.cql`,
//! `columnspec[2].size`) and what is accepted. Unknown keys are errors, as
//! in c-s (SnakeYAML refuses properties `StressYaml` lacks, and
//! `StressProfile` refuses leftover `insert` and `columnspec` keys).

use std::collections::BTreeMap;
use std::fmt;

use rand::{Rng, RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde_yaml_ng::Value;

use super::cql::{self, ColumnDefinition, CqlType, QueryShape, TableDefinition};
use crate::distribution::{parse_bounds, parse_real, KeyDistribution};

/// Why a profile was rejected: one line naming the file, the key and the
/// reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError {
    file: String,
    key: String,
    message: String,
}

impl ProfileError {
    fn new(file: &str, key: &str, message: impl Into<String>) -> ProfileError {
        let message: String = message.into();
        ProfileError {
            file: file.to_string(),
            key: key.to_string(),
            message: message.replace('\n', " "),
        }
    }

    /// The key at fault (`queries.getdata.cql`; empty for the file as a
    /// whole).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The reason.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: `{}`: {}", self.file, self.key, self.message)
        }
    }
}

impl std::error::Error for ProfileError {}

/// The distributions accepted in a profile, for messages.
const ACCEPTED: &str = "FIXED(v), UNIFORM(min..max), GAUSSIAN(min..max[,stdvrng]) or GAUSSIAN(min..max,mean,stdev) (or GAUSS, NORMAL, NORM), EXP(min..max), EXTREME(min..max,shape) (or EXTR, WEIBULL), SEQ(min..max), each optionally preceded by ~";

/// A c-s distribution as a profile writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum ProfileDistribution {
    /// `FIXED`, `UNIFORM`, `GAUSSIAN`, `EXP` and their inversions, with the
    /// semantics of [`KeyDistribution`].
    Key(KeyDistribution),
    /// `EXTREME(min..max,shape)`: c-s's `DistributionOffsetApache` over a
    /// Weibull of that shape whose scale puts `sqrt(1/(max-min))` of the
    /// draws past the range (`OptionDistribution.ExtremeImpl`): `min +
    /// clamp(trunc(x), 0, max-min)`.
    Extreme {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: u64,
        /// The Weibull shape.
        shape: f64,
        /// The Weibull scale.
        scale: f64,
        /// `~`: mirrored in the range.
        inverted: bool,
    },
    /// `SEQ(min..max)`: `min, min+1, ..., max`, wrapping; seeded per
    /// partition, the value is `min + seed mod (max-min+1)`
    /// (`DistributionSequence`). Drawn without a seed it is uniform over
    /// the range, which is what a sequence gives over many draws.
    Sequence {
        /// First value.
        min: u64,
        /// Last value.
        max: u64,
    },
}

impl ProfileDistribution {
    /// Parses a c-s distribution (see [`ACCEPTED`]).
    pub fn parse(spec: &str) -> Result<ProfileDistribution, String> {
        let text = spec.trim();
        let (inverted, rest) = match text.strip_prefix('~') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, text),
        };
        let name = rest
            .split('(')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let args = rest
            .find('(')
            .filter(|_| rest.ends_with(')'))
            .map(|open| &rest[open + 1..rest.len() - 1]);
        match name.as_str() {
            "extreme" | "extr" | "weibull" => {
                let args = args.ok_or_else(|| format!("`{spec}` is not a distribution: expected one of {ACCEPTED}"))?;
                let parts: Vec<&str> = args.split(',').map(str::trim).collect();
                let [bounds, shape] = parts.as_slice() else {
                    return Err(format!("wrong number of arguments in `{spec}`: expected extreme(min..max,shape)"));
                };
                let (min, max) = parse_bounds(bounds, spec).map_err(|e| e.to_string())?;
                let shape = parse_real(shape).map_err(|e| format!("{e} (in `{spec}`)"))?;
                if shape <= 0.0 {
                    return Err(format!("the shape of `{spec}` must be above zero"));
                }
                if max - min < 2 {
                    return Err(format!("`{spec}`: max - min must be at least 2 (c-s computes the scale from its logarithm)"));
                }
                // The scale puts P(X > max - min) = sqrt(1/(max - min)):
                // Weibull(shape, 1)'s quantile at 1 - sqrt(1/d) is
                // (ln(d)/2)^(1/shape).
                let span = (max - min) as f64;
                let scale = span / (0.5 * span.ln()).powf(1.0 / shape);
                Ok(ProfileDistribution::Extreme {
                    min,
                    max,
                    shape,
                    scale,
                    inverted,
                })
            }
            "seq" => {
                let args = args.ok_or_else(|| format!("`{spec}` is not a distribution: expected one of {ACCEPTED}"))?;
                let (min, max) = parse_bounds(args.trim(), spec).map_err(|e| e.to_string())?;
                // Inverting a sequence over its range gives the same set
                // of values, so `~seq` is the sequence itself.
                Ok(ProfileDistribution::Sequence { min, max })
            }
            "qextreme" | "qextr" => Err(format!(
                "`{spec}`: the quantized extreme distribution is not modelled by the twin; accepted are {ACCEPTED}"
            )),
            "fixed" | "uniform" | "gaussian" | "gauss" | "normal" | "norm" | "exp" => spec
                .parse::<KeyDistribution>()
                .map(ProfileDistribution::Key)
                .map_err(|e| e.to_string()),
            _ => Err(format!(
                "`{spec}` is not a distribution a profile takes: accepted are {ACCEPTED}"
            )),
        }
    }

    /// The smallest and largest values.
    pub fn range(&self) -> (u64, u64) {
        match self {
            ProfileDistribution::Key(dist) => (*dist.range().start(), *dist.range().end()),
            ProfileDistribution::Extreme { min, max, .. }
            | ProfileDistribution::Sequence { min, max } => (*min, *max),
        }
    }

    /// One value.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            ProfileDistribution::Key(dist) => dist.sample(rng),
            ProfileDistribution::Extreme {
                min,
                max,
                shape,
                scale,
                inverted,
            } => {
                let u: f64 = rng.random::<f64>();
                let x = scale * (-(1.0 - u).ln()).powf(1.0 / shape);
                let value = min.saturating_add((x as u64).min(max - min));
                if *inverted {
                    max - (value - min)
                } else {
                    value
                }
            }
            ProfileDistribution::Sequence { min, max } => min + rng.random_range(0..=(max - min)),
        }
    }

    /// The value for a partition whose seed is `seed` (c-s seeds a
    /// partition's clustering distributions with it): a sequence gives
    /// `min + seed mod span`, the others a draw from a generator seeded
    /// with `seed` and `salt`.
    pub fn for_seed(&self, seed: u64, salt: u64) -> u64 {
        match self {
            ProfileDistribution::Sequence { min, max } => min + seed % (max - min + 1),
            _ => {
                let mut rng = Pcg64Mcg::seed_from_u64(seed ^ salt.rotate_left(32));
                self.sample(&mut rng)
            }
        }
    }

    /// The expected value of a sample.
    pub fn mean(&self) -> f64 {
        match self {
            ProfileDistribution::Key(dist) => dist.mean(),
            ProfileDistribution::Sequence { min, max } => (*min as f64 + *max as f64) / 2.0,
            ProfileDistribution::Extreme {
                min,
                max,
                shape,
                scale,
                inverted,
            } => {
                // E[clamp(trunc X, 0, d)] = sum_{k=1..d} P(X >= k), with
                // P(X >= k) = exp(-(k/scale)^shape); past ~60 scales to the
                // power 1/shape the terms are below e^-60.
                let span = max - min;
                let reach = (scale * 60f64.powf(1.0 / shape)).ceil();
                let last = (span as f64).min(reach);
                let term = |k: f64| (-(k / scale).powf(*shape)).exp();
                let offset = if last <= 2.0e6 {
                    (1..=last as u64).map(|k| term(k as f64)).sum::<f64>()
                } else {
                    // Midpoint sum over 2e6 cells, each the mean of its
                    // integers' terms.
                    let cells = 2_000_000u64;
                    let width = last / cells as f64;
                    (0..cells)
                        .map(|i| term(1.0 + (i as f64 + 0.5) * width - 0.5) * width)
                        .sum::<f64>()
                };
                if *inverted {
                    *max as f64 - offset
                } else {
                    *min as f64 + offset
                }
            }
        }
    }
}

impl fmt::Display for ProfileDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileDistribution::Key(dist) => write!(f, "{dist}"),
            ProfileDistribution::Extreme {
                min,
                max,
                shape,
                inverted,
                ..
            } => write!(
                f,
                "{}extreme({min}..{max},{shape})",
                if *inverted { "~" } else { "" }
            ),
            ProfileDistribution::Sequence { min, max } => write!(f, "seq({min}..{max})"),
        }
    }
}

/// A c-s ratio distribution, `DIST/DIVISOR` (`OptionRatioDistribution`):
/// a draw of `DIST` divided by `DIVISOR`, capped at 1.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioDistribution {
    /// The numerator's distribution.
    pub numerator: ProfileDistribution,
    /// The divisor.
    pub divisor: f64,
}

impl RatioDistribution {
    /// Parses `DIST/DIVISOR`.
    pub fn parse(spec: &str) -> Result<RatioDistribution, String> {
        let (dist, divisor) = spec.rsplit_once('/').ok_or_else(|| {
            format!("`{spec}` is not a ratio: expected DIST/DIVISOR such as fixed(1)/1 or uniform(1..10)/10")
        })?;
        let divisor = parse_real(divisor.trim()).map_err(|e| format!("{e} (in `{spec}`)"))?;
        if divisor <= 0.0 {
            return Err(format!("the divisor of `{spec}` must be above zero"));
        }
        Ok(RatioDistribution {
            numerator: ProfileDistribution::parse(dist)?,
            divisor,
        })
    }

    /// The expected ratio (before the cap at 1).
    pub fn mean(&self) -> f64 {
        (self.numerator.mean() / self.divisor).min(1.0)
    }

    /// One ratio in `[0, 1]`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        (self.numerator.sample(rng) as f64 / self.divisor).min(1.0)
    }
}

impl fmt::Display for RatioDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.numerator, self.divisor)
    }
}

/// How a profile's inserts are batched (`insert: batchtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchType {
    /// `LOGGED` (c-s 3.x's default): a multi-partition batch goes through
    /// the batchlog.
    Logged,
    /// `UNLOGGED`.
    Unlogged,
}

/// A column with its profile distributions.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileColumn {
    /// Name, type and role as the table defines them.
    pub definition: ColumnDefinition,
    /// `size`: bytes of a text or blob value, elements of a collection.
    pub size: ProfileDistribution,
    /// `population`: distinct values.
    pub population: ProfileDistribution,
    /// `cluster`: values per parent row (clustering columns).
    pub cluster: ProfileDistribution,
}

impl ProfileColumn {
    /// Expected bytes of one value.
    pub fn mean_bytes(&self) -> f64 {
        match self.definition.cql_type {
            CqlType::Text | CqlType::Blob => self.size.mean(),
            CqlType::Fixed(_, width) => width as f64,
            CqlType::Collection(_, width) => self.size.mean() * width as f64,
        }
    }

    /// Bytes of one value drawn.
    pub fn sample_bytes<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self.definition.cql_type {
            CqlType::Text | CqlType::Blob => self.size.sample(rng),
            CqlType::Fixed(_, width) => width as u64,
            CqlType::Collection(_, width) => self.size.sample(rng) * width as u64,
        }
    }
}

/// `insert:`.
#[derive(Clone, Debug, PartialEq)]
pub struct InsertSpec {
    /// `partitions`: partitions per insert batch.
    pub partitions: ProfileDistribution,
    /// `select`: the share of a partition's rows an insert writes.
    pub select: RatioDistribution,
    /// `row-population`: the share of rows given values (c-s 3.x).
    pub row_population: RatioDistribution,
    /// `batchtype`.
    pub batch_type: BatchType,
}

/// `fields:` of a query: where its bind values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fields {
    /// `samerow` (the default): all from one generated row.
    SameRow,
    /// `multirow`: each from a random row of the partition.
    MultiRow,
}

/// A named query.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileQuery {
    /// Its name in `queries:`.
    pub name: String,
    /// The CQL text.
    pub cql: String,
    /// `fields:`.
    pub fields: Fields,
    /// What it does.
    pub shape: QueryShape,
}

/// A parsed user profile.
#[derive(Clone, Debug, PartialEq)]
pub struct UserProfile {
    /// `keyspace`.
    pub keyspace: String,
    /// From `keyspace_definition`, if given.
    pub keyspace_definition: Option<cql::KeyspaceDefinition>,
    /// From `table_definition`.
    pub table: TableDefinition,
    /// Every column of the table with its distributions, in definition
    /// order.
    pub columns: Vec<ProfileColumn>,
    /// `insert:`.
    pub insert: InsertSpec,
    /// `queries:`, in the file's order: those the twin runs.
    pub queries: Vec<ProfileQuery>,
    /// What the profile defines that the twin parsed and checked but does
    /// not simulate: refused only when a load uses it
    /// ([`UserProfile::refusal`]), as c-s prepares only what `ops(...)`
    /// names.
    pub unsimulated: Vec<Unsimulated>,
}

/// Something a profile defines that the twin does not simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsimulated {
    /// The profile key that defines it (`queries.cas.cql`,
    /// `token_range_queries.all`, `extra_definitions[0]`).
    pub key: String,
    /// When a load uses it.
    pub used_by: UsedBy,
    /// Why the twin cannot run it.
    pub reason: String,
}

/// When a load uses an [`Unsimulated`] definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsedBy {
    /// When `ops(...)` names this operation.
    Operation(String),
    /// When the load writes (a view or an index is kept up to date on
    /// every write to its table).
    Writes,
}

/// Salt of the partition-seeded draws of rows per partition.
/// The most rows a partition of a profile may hold (the product of its
/// clustering columns' largest `cluster` counts): a hundred million, well
/// past where Scylla and Cassandra warn of a large partition (100,000
/// rows), and as far as the twin's per-row bookkeeping stays quick.
pub const MAX_PARTITION_ROWS: u64 = 100_000_000;
const CLUSTER_SALT: u64 = 0x0063_6c75_7374_6572;

impl UserProfile {
    /// The query named `name`, if any.
    pub fn query(&self, name: &str) -> Option<&ProfileQuery> {
        self.queries.iter().find(|query| query.name == name)
    }

    /// The names an `ops(...)` may use: `insert`, every query and every
    /// token range query, simulated or not.
    pub fn operation_names(&self) -> Vec<String> {
        std::iter::once("insert".to_string())
            .chain(self.queries.iter().map(|query| query.name.clone()))
            .chain(
                self.unsimulated
                    .iter()
                    .filter_map(|item| match &item.used_by {
                        UsedBy::Operation(name) => Some(name.clone()),
                        UsedBy::Writes => None,
                    }),
            )
            .collect()
    }

    /// Whether operation `name` writes (`insert`, or a query that writes).
    pub fn writes(&self, name: &str) -> bool {
        name == "insert"
            || self
                .query(name)
                .is_some_and(|query| query.shape == QueryShape::Write)
    }

    /// Why a load running `ops` (names with weights) cannot run on the
    /// twin, if it cannot: the first unsimulated definition it uses, as
    /// (profile key, reason). Operations of weight 0 are not used.
    pub fn refusal(&self, ops: &[(String, f64)]) -> Option<(String, String)> {
        let used = |name: &str| ops.iter().any(|(op, weight)| op == name && *weight > 0.0);
        let writes = ops
            .iter()
            .any(|(op, weight)| *weight > 0.0 && self.writes(op));
        self.unsimulated
            .iter()
            .find(|item| match &item.used_by {
                UsedBy::Operation(name) => used(name),
                UsedBy::Writes => writes,
            })
            .map(|item| (item.key.clone(), item.reason.clone()))
    }

    /// Expected bytes of the partition key.
    pub fn partition_key_bytes(&self) -> f64 {
        self.table
            .partition_key
            .iter()
            .map(|&index| self.columns[index].mean_bytes())
            .sum()
    }

    /// Columns stored per row: clustering and regular, not static.
    fn row_columns(&self) -> impl Iterator<Item = &ProfileColumn> {
        self.columns
            .iter()
            .enumerate()
            .filter_map(|(index, column)| {
                (!self.table.partition_key.contains(&index) && !column.definition.is_static)
                    .then_some(column)
            })
    }

    /// Expected bytes of one row's values, clustering key included.
    pub fn mean_row_bytes(&self) -> f64 {
        self.row_columns().map(ProfileColumn::mean_bytes).sum()
    }

    /// Bytes of one row's values, drawn.
    pub fn sample_row_bytes<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        self.row_columns()
            .map(|column| column.sample_bytes(rng))
            .sum()
    }

    /// The most bytes one row's values can take.
    pub fn largest_row_bytes(&self) -> u64 {
        self.row_columns()
            .map(|column| match column.definition.cql_type {
                CqlType::Text | CqlType::Blob => column.size.range().1,
                CqlType::Fixed(_, width) => u64::from(width),
                CqlType::Collection(_, width) => {
                    column.size.range().1.saturating_mul(u64::from(width))
                }
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Expected bytes of a partition's static columns.
    pub fn static_bytes(&self) -> f64 {
        self.columns
            .iter()
            .filter(|column| column.definition.is_static)
            .map(ProfileColumn::mean_bytes)
            .sum()
    }

    /// The rows of the partition whose seed is `seed`: the product of one
    /// `cluster` draw per clustering column, seeded by the partition (so
    /// the same partition always has the same rows). At least 1.
    pub fn rows_in_partition(&self, seed: u64) -> u64 {
        self.level_counts(seed).fold(1u64, u64::saturating_mul)
    }

    /// Each clustering level's count of values for the partition whose
    /// seed is `seed`, outermost first (`rows_in_partition` is their
    /// product).
    fn level_counts(&self, seed: u64) -> impl Iterator<Item = u64> + '_ {
        self.table
            .clustering
            .iter()
            .enumerate()
            .map(move |(level, &index)| {
                self.columns[index]
                    .cluster
                    .for_seed(seed, CLUSTER_SALT ^ level as u64)
                    .max(1)
            })
    }

    /// Rows a query of `shape` selects in the partition whose seed is
    /// `seed`, before its `LIMIT`: the rows under its `=` prefix of
    /// clustering columns (bound from an existing row, so the prefix
    /// matches), and with a range on the next column, those from a bound
    /// drawn among that column's values to the end. Then capped by the
    /// `LIMIT`. A write-shaped query gives 1.
    pub fn rows_selected<R: Rng + ?Sized>(
        &self,
        shape: &QueryShape,
        seed: u64,
        rng: &mut R,
    ) -> u64 {
        let QueryShape::Select {
            clustering_equal,
            clustering_range,
            limit,
        } = shape
        else {
            return 1;
        };
        let counts: Vec<u64> = self.level_counts(seed).collect();
        let below = |from: usize| {
            counts[from.min(counts.len())..]
                .iter()
                .fold(1u64, |rows, &count| rows.saturating_mul(count))
        };
        let selected = match (clustering_range, counts.get(*clustering_equal)) {
            (true, Some(&values)) => {
                let bound = rng.random_range(1..=values);
                (values - bound + 1).saturating_mul(below(clustering_equal + 1))
            }
            _ => below(*clustering_equal),
        };
        limit.map_or(selected, |limit| selected.min(limit))
    }

    /// The expected rows of a partition.
    pub fn mean_rows_per_partition(&self) -> f64 {
        self.table
            .clustering
            .iter()
            .map(|&index| self.columns[index].cluster.mean().max(1.0))
            .product()
    }

    /// Whether every partition holds exactly one row.
    pub fn single_row_partitions(&self) -> bool {
        self.table.clustering.iter().all(|&index| {
            let (min, max) = self.columns[index].cluster.range();
            min <= 1 && max <= 1
        })
    }
}

/// Reads a profile. `file` names it in errors (the path as the user gave
/// it).
pub fn parse_profile(text: &str, file: &str) -> Result<UserProfile, ProfileError> {
    let error = |key: &str, message: String| ProfileError::new(file, key, message);
    let document: Value =
        serde_yaml_ng::from_str(text).map_err(|e| error("", format!("not a YAML profile: {e}")))?;
    let Value::Mapping(top) = document else {
        return Err(error(
            "",
            "expected a YAML mapping of keyspace, table, columnspec, insert and queries".into(),
        ));
    };
    const TOP_KEYS: [&str; 11] = [
        "specname",
        "seed",
        "keyspace",
        "keyspace_definition",
        "table",
        "table_definition",
        "extra_definitions",
        "columnspec",
        "insert",
        "queries",
        "token_range_queries",
    ];
    let mut fields: BTreeMap<String, Value> = BTreeMap::new();
    for (key, value) in top {
        let Some(key) = key.as_str().map(str::to_string) else {
            return Err(error("", format!("a top-level key is not a name: {key:?}")));
        };
        if !TOP_KEYS.contains(&key.as_str()) {
            return Err(error(
                &key,
                format!("unknown key: accepted are {}", TOP_KEYS.join(", ")),
            ));
        }
        fields.insert(key, value);
    }
    let text_field = |key: &str| -> Result<Option<String>, ProfileError> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(error(
                key,
                format!("expected text, found {}", describe(other)),
            )),
        }
    };
    let mut unsimulated = token_range_queries(fields.get("token_range_queries"), file)?;
    let keyspace = text_field("keyspace")?.ok_or_else(|| {
        error(
            "keyspace",
            "missing: the profile must name its keyspace".into(),
        )
    })?;
    let keyspace_definition = text_field("keyspace_definition")?
        .map(|text| cql::keyspace_definition(&text).map_err(|e| error("keyspace_definition", e)))
        .transpose()?;
    if let Some(definition) = &keyspace_definition {
        if !definition.name.eq_ignore_ascii_case(&keyspace) {
            return Err(error(
                "keyspace_definition",
                format!(
                    "creates keyspace `{}` but `keyspace` is `{keyspace}`",
                    definition.name
                ),
            ));
        }
    }
    let table_name = text_field("table")?
        .ok_or_else(|| error("table", "missing: the profile must name its table".into()))?;
    let table_text = text_field("table_definition")?.ok_or_else(|| {
        error("table_definition", "missing: the twin reads the table's columns and key from its CREATE TABLE (c-s can use an existing table; the twin has none)".into())
    })?;
    let table = cql::table_definition(&table_text).map_err(|e| error("table_definition", e))?;
    if !table.name.eq_ignore_ascii_case(&table_name) {
        return Err(error(
            "table_definition",
            format!(
                "creates table `{}` but `table` is `{table_name}`",
                table.name
            ),
        ));
    }
    unsimulated.extend(extra_definitions(fields.get("extra_definitions"), file)?);

    let columns = columnspec(fields.get("columnspec"), &table, file)?;
    // The most rows a partition may hold: the product of the clustering
    // columns' largest counts.
    let most_rows = table
        .clustering
        .iter()
        .map(|&index| columns[index].cluster.range().1.max(1) as f64)
        .product::<f64>();
    if most_rows > MAX_PARTITION_ROWS as f64 {
        return Err(error(
            "columnspec",
            format!(
                "the clustering columns' `cluster` distributions allow partitions of up to {} rows; a partition of the twin holds at most {MAX_PARTITION_ROWS}",
                units::format_number(most_rows)
            ),
        ));
    }
    let insert = insert_spec(fields.get("insert"), file)?;
    let (queries, refused_queries) = queries(fields.get("queries"), &table, file)?;
    unsimulated.extend(refused_queries);
    Ok(UserProfile {
        keyspace,
        keyspace_definition,
        table,
        columns,
        insert,
        queries,
        unsimulated,
    })
}

/// `token_range_queries:`: each a name and its `columns` (and
/// `page_size`), checked; c-s scans the ring with them, which the twin
/// does not simulate.
fn token_range_queries(
    value: Option<&Value>,
    file: &str,
) -> Result<Vec<Unsimulated>, ProfileError> {
    let Some(map) = optional_mapping(
        value,
        "token_range_queries",
        "named token range queries (name: {columns: ..., page_size: ...})",
        file,
    )?
    else {
        return Ok(Vec::new());
    };
    let mut scans = Vec::new();
    for (name, spec) in map {
        let Some(name) = name.as_str() else {
            return Err(ProfileError::new(
                file,
                "token_range_queries",
                format!("a query's name is not text: {}", describe(name)),
            ));
        };
        let here = format!("token_range_queries.{name}");
        let Value::Mapping(spec) = spec else {
            return Err(ProfileError::new(
                file,
                &here,
                format!("expected columns and page_size, found {}", describe(spec)),
            ));
        };
        for (key, value) in spec {
            let key = key.as_str().unwrap_or_default().to_ascii_lowercase();
            match (key.as_str(), value) {
                ("columns", Value::String(_)) => {}
                ("page_size", Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => {}
                ("columns" | "page_size", other) => {
                    return Err(ProfileError::new(
                        file,
                        &format!("{here}.{key}"),
                        format!(
                            "expected {}, found {}",
                            if key == "columns" {
                                "the columns to read ('*' or a list)"
                            } else {
                                "a positive number of rows"
                            },
                            describe(other)
                        ),
                    ))
                }
                _ => {
                    return Err(ProfileError::new(
                        file,
                        &format!("{here}.{key}"),
                        "unknown key: accepted are columns and page_size",
                    ))
                }
            }
        }
        scans.push(Unsimulated {
            key: here,
            used_by: UsedBy::Operation(name.to_ascii_lowercase()),
            reason: "token range scans (every partition of the ring, page by page) are not simulated by the twin".into(),
        });
    }
    Ok(scans)
}

/// `extra_definitions:`: CQL statements run after the table is made. A
/// type changes nothing the twin models; an index or a materialized view
/// is kept up to date on every write, so it is refused for loads that
/// write.
fn extra_definitions(value: Option<&Value>, file: &str) -> Result<Vec<Unsimulated>, ProfileError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Sequence(items)) => items,
        Some(other) => {
            return Err(ProfileError::new(
                file,
                "extra_definitions",
                format!(
                    "expected a list of CQL statements, found {}",
                    describe(other)
                ),
            ))
        }
    };
    let mut kept = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let key = format!("extra_definitions[{index}]");
        let Value::String(text) = item else {
            return Err(ProfileError::new(
                file,
                &key,
                format!("expected a CQL statement, found {}", describe(item)),
            ));
        };
        let words: Vec<String> = text
            .split_whitespace()
            .take(4)
            .map(str::to_ascii_lowercase)
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let reason = match words.as_slice() {
            ["create", "type", ..] => continue,
            ["create", "materialized", "view", ..] => {
                "a materialized view (the base row read and the view updated on every write) is not simulated by the twin"
            }
            ["create", "index", ..] | ["create", "custom", "index", ..] => {
                "a secondary index (updated on every write) is not simulated by the twin"
            }
            _ => {
                return Err(ProfileError::new(
                    file,
                    &key,
                    "expected CREATE TYPE, CREATE INDEX or CREATE MATERIALIZED VIEW",
                ))
            }
        };
        kept.push(Unsimulated {
            key,
            used_by: UsedBy::Writes,
            reason: reason.into(),
        });
    }
    Ok(kept)
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".into(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) => format!("the number `{n}`"),
        Value::String(s) => format!("`{s}`"),
        Value::Sequence(_) => "a list".into(),
        Value::Mapping(_) => "a mapping".into(),
        Value::Tagged(_) => "a tagged value".into(),
    }
}

/// A distribution-valued key: a string c-s parses.
fn distribution_text(value: &Value, key: &str, file: &str) -> Result<String, ProfileError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        other => Err(ProfileError::new(
            file,
            key,
            format!(
                "expected a distribution such as fixed(1) or uniform(1..10), found {}",
                describe(other)
            ),
        )),
    }
}

fn columnspec(
    value: Option<&Value>,
    table: &TableDefinition,
    file: &str,
) -> Result<Vec<ProfileColumn>, ProfileError> {
    let default = |spec: &str| ProfileDistribution::parse(spec).expect("c-s's default parses");
    let mut columns: Vec<ProfileColumn> = table
        .columns
        .iter()
        .map(|definition| ProfileColumn {
            definition: definition.clone(),
            size: default("uniform(4..8)"),
            population: default("uniform(1..100B)"),
            cluster: default("fixed(1)"),
        })
        .collect();
    let entries = match value {
        None | Some(Value::Null) => return Ok(columns),
        Some(Value::Sequence(entries)) => entries,
        Some(other) => {
            return Err(ProfileError::new(
                file,
                "columnspec",
                format!(
                    "expected a list of columns (- name: ...), found {}",
                    describe(other)
                ),
            ))
        }
    };
    let mut seen: Vec<usize> = Vec::new();
    for (at, entry) in entries.iter().enumerate() {
        let here = format!("columnspec[{at}]");
        let Value::Mapping(map) = entry else {
            return Err(ProfileError::new(
                file,
                &here,
                format!(
                    "expected name, size, population and cluster, found {}",
                    describe(entry)
                ),
            ));
        };
        let mut name = None;
        let mut specs: Vec<(String, String)> = Vec::new();
        for (key, value) in map {
            let key = key.as_str().unwrap_or_default().to_ascii_lowercase();
            let field = format!("{here}.{key}");
            match key.as_str() {
                "name" => match value {
                    Value::String(text) => name = Some(text.clone()),
                    other => {
                        return Err(ProfileError::new(
                            file,
                            &field,
                            format!("expected a column name, found {}", describe(other)),
                        ))
                    }
                },
                "size" | "population" | "cluster" => {
                    specs.push((key.clone(), distribution_text(value, &field, file)?));
                }
                _ => {
                    return Err(ProfileError::new(
                        file,
                        &field,
                        "unknown key: accepted are name, size, population and cluster",
                    ))
                }
            }
        }
        let name = name.ok_or_else(|| ProfileError::new(file, &here, "has no `name`"))?;
        // c-s matches names case-insensitively (`StressProfile` lower-cases
        // unquoted identifiers).
        let lower = name.to_ascii_lowercase();
        let index = table
            .column(&name)
            .or_else(|| table.column(&lower))
            .ok_or_else(|| {
                ProfileError::new(
                    file,
                    &format!("{here}.name"),
                    format!(
                        "`{name}` is not a column of table `{}`: its columns are {}",
                        table.name,
                        table
                            .columns
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
        if seen.contains(&index) {
            return Err(ProfileError::new(
                file,
                &format!("{here}.name"),
                format!("`{name}` is described twice"),
            ));
        }
        seen.push(index);
        for (key, spec) in specs {
            let field = format!("{here}.{key}");
            let dist = ProfileDistribution::parse(&spec)
                .map_err(|e| ProfileError::new(file, &field, e))?;
            let column = &mut columns[index];
            match key.as_str() {
                "size" => column.size = dist,
                "population" => column.population = dist,
                _ => {
                    if !table.clustering.contains(&index) {
                        return Err(ProfileError::new(file, &field, format!("`{name}` is not a clustering column; only clustering columns have a cluster distribution")));
                    }
                    column.cluster = dist;
                }
            }
        }
    }
    Ok(columns)
}

/// A key holding a mapping: `None` when absent or empty, else the mapping,
/// or an error naming `key` and what it should hold (`expected`).
fn optional_mapping<'a>(
    value: Option<&'a Value>,
    key: &str,
    expected: &str,
    file: &str,
) -> Result<Option<&'a serde_yaml_ng::Mapping>, ProfileError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Mapping(map)) => Ok(Some(map)),
        Some(other) => Err(ProfileError::new(
            file,
            key,
            format!("expected {expected}, found {}", describe(other)),
        )),
    }
}

fn insert_spec(value: Option<&Value>, file: &str) -> Result<InsertSpec, ProfileError> {
    let mut spec = InsertSpec {
        partitions: ProfileDistribution::parse("fixed(1)").expect("parses"),
        select: RatioDistribution::parse("fixed(1)/1").expect("parses"),
        row_population: RatioDistribution::parse("fixed(1)/1").expect("parses"),
        batch_type: BatchType::Logged,
    };
    let Some(map) = optional_mapping(value, "insert", "partitions, select and batchtype", file)?
    else {
        return Ok(spec);
    };
    for (key, value) in map {
        let key = key.as_str().unwrap_or_default().to_ascii_lowercase();
        let field = format!("insert.{key}");
        let ratio = || {
            RatioDistribution::parse(&distribution_text(value, &field, file)?)
                .map_err(|e| ProfileError::new(file, &field, e))
        };
        match key.as_str() {
            "partitions" => {
                spec.partitions =
                    ProfileDistribution::parse(&distribution_text(value, &field, file)?)
                        .map_err(|e| ProfileError::new(file, &field, e))?;
            }
            "select" => spec.select = ratio()?,
            "row-population" => spec.row_population = ratio()?,
            "batchtype" => {
                let text = match value {
                    Value::String(text) => text.to_ascii_uppercase(),
                    other => {
                        return Err(ProfileError::new(
                            file,
                            &field,
                            format!("expected LOGGED or UNLOGGED, found {}", describe(other)),
                        ))
                    }
                };
                spec.batch_type = match text.as_str() {
                    "LOGGED" => BatchType::Logged,
                    "UNLOGGED" => BatchType::Unlogged,
                    "COUNTER" => {
                        return Err(ProfileError::new(
                            file,
                            &field,
                            "COUNTER batches: counter updates are not simulated by the twin",
                        ))
                    }
                    _ => {
                        return Err(ProfileError::new(
                            file,
                            &field,
                            format!("`{text}`: accepted are LOGGED and UNLOGGED"),
                        ))
                    }
                };
            }
            _ => {
                return Err(ProfileError::new(
                    file,
                    &field,
                    "unknown key: accepted are partitions, select, row-population and batchtype",
                ))
            }
        }
    }
    Ok(spec)
}

/// `queries:`: those the twin runs, and those it parsed but cannot
/// (refused only if a load's `ops(...)` names them).
fn queries(
    value: Option<&Value>,
    table: &TableDefinition,
    file: &str,
) -> Result<(Vec<ProfileQuery>, Vec<Unsimulated>), ProfileError> {
    let Some(map) = optional_mapping(
        value,
        "queries",
        "named queries (name: {cql: ..., fields: samerow})",
        file,
    )?
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    let mut queries = Vec::new();
    let mut refused = Vec::new();
    for (name, value) in map {
        let Some(name) = name.as_str().map(str::to_string) else {
            return Err(ProfileError::new(
                file,
                "queries",
                format!("a query's name is not text: {}", describe(name)),
            ));
        };
        let here = format!("queries.{name}");
        if name.eq_ignore_ascii_case("insert") {
            return Err(ProfileError::new(
                file,
                &here,
                "`insert` names the profile's inserts in ops(...); give the query another name",
            ));
        }
        let (cql_text, fields) = match value {
            Value::String(text) => (text.clone(), Fields::SameRow),
            Value::Mapping(spec) => {
                let mut cql_text = None;
                let mut fields = Fields::SameRow;
                for (key, value) in spec {
                    let key = key.as_str().unwrap_or_default().to_ascii_lowercase();
                    let field = format!("{here}.{key}");
                    match (key.as_str(), value) {
                        ("cql", Value::String(text)) => cql_text = Some(text.clone()),
                        ("fields", Value::String(text)) => {
                            fields = match text.to_ascii_lowercase().as_str() {
                                "samerow" => Fields::SameRow,
                                "multirow" => Fields::MultiRow,
                                _ => {
                                    return Err(ProfileError::new(
                                        file,
                                        &field,
                                        format!("`{text}`: accepted are samerow and multirow"),
                                    ))
                                }
                            }
                        }
                        ("cql" | "fields", other) => {
                            return Err(ProfileError::new(
                                file,
                                &field,
                                format!("expected text, found {}", describe(other)),
                            ))
                        }
                        _ => {
                            return Err(ProfileError::new(
                                file,
                                &field,
                                "unknown key: accepted are cql and fields",
                            ))
                        }
                    }
                }
                let cql_text =
                    cql_text.ok_or_else(|| ProfileError::new(file, &here, "has no `cql`"))?;
                (cql_text, fields)
            }
            other => {
                return Err(ProfileError::new(
                    file,
                    &here,
                    format!("expected cql and fields, found {}", describe(other)),
                ))
            }
        };
        // c-s keys its queries lower-cased, as it looks them up.
        let lower = name.to_ascii_lowercase();
        match cql::query(&cql_text, table) {
            Ok(shape) => queries.push(ProfileQuery {
                name: lower,
                cql: cql_text.trim().to_string(),
                fields,
                shape,
            }),
            Err(reason) => refused.push(Unsimulated {
                key: format!("{here}.cql"),
                used_by: UsedBy::Operation(lower),
                reason,
            }),
        }
    }
    Ok((queries, refused))
}
