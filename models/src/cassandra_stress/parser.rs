//! The c-s parameter grammar: the command word and its parameters, then
//! each option with its parameters (see the parent module for semantics).

use units::SimDuration;

use super::{
    tokenize, ColumnSpec, CompactionStrategy, Compression, ConsistencyLevel, Operation, Population,
    Rate, ReplicationStrategy, Stop, StressCommand, StressError, ACCEPTED_CL,
    DEFAULT_AUTO_MAX_THREADS, DEFAULT_AUTO_MIN_THREADS, DEFAULT_CONSISTENCY,
    DEFAULT_KEY_SIZE_BYTES, DEFAULT_MAX_MEASUREMENTS, DEFAULT_MIN_MEASUREMENTS,
    DEFAULT_POPULATION_SIZE, DEFAULT_REPLICATION_FACTOR, DEFAULT_RETRIES,
    DEFAULT_TARGET_UNCERTAINTY, DEFAULT_WRITE_THREADS,
};
use crate::distribution::{
    parse_bounds, parse_whole, KeyDistribution, SizeDistribution, DEFAULT_GAUSSIAN_STDVRNG,
};

const ACCEPTED_COMMANDS: &str = "write (or insert), read, mixed, user";
const ACCEPTED_OPTIONS: &str =
    "-schema, -rate, -col, -pop, -errors, -reporting, -mode, -node, -log, -port, -transport, -graph, -jmx, -credentials-file";
/// Options accepted and recorded as not affecting the simulation: how c-s
/// connects (`-mode`, `-node`, `-port`, `-transport`, and 4.0's `-jmx`
/// and `-credentials-file`) and what it logs or draws (`-log`, `-graph`).
const IGNORED_OPTIONS: [&str; 8] = [
    "-mode",
    "-node",
    "-log",
    "-port",
    "-transport",
    "-graph",
    "-jmx",
    "-credentials-file",
];

/// Tokenizes `command` and parses the parameters.
pub(super) fn parse_command(command: &str) -> Result<StressCommand, StressError> {
    let words = tokenize::shell_words(command)?;
    if let Some(word) = words.iter().find(|w| w.placeholder.is_some()) {
        let placeholder = word.placeholder.as_deref().unwrap_or_default();
        return Err(StressError::new(
            &word.text,
            format!(
                "unfilled placeholder `{placeholder}` in `{}`: replace it with a value",
                word.text
            ),
        ));
    }
    let mut texts: Vec<String> = words.into_iter().map(|w| w.text).collect();
    if texts.first().is_some_and(|w| is_program_name(w)) {
        texts.remove(0);
    }
    let params = tokenize::repair_params(&texts);
    Parser::default().run(&params)
}

fn is_program_name(word: &str) -> bool {
    word == "cassandra-stress" || word.ends_with("/cassandra-stress")
}

/// `token` with `prefix` removed, ASCII case-insensitively.
fn strip_prefix_ci<'a>(token: &'a str, prefix: &str) -> Option<&'a str> {
    let n = prefix.len();
    if token.len() >= n && token.as_bytes()[..n].eq_ignore_ascii_case(prefix.as_bytes()) {
        token.get(n..)
    } else {
        None
    }
}

/// The inside of `name(...)`, ASCII case-insensitively.
fn group_args<'a>(token: &'a str, name: &str) -> Option<&'a str> {
    let rest = strip_prefix_ci(token, name)?;
    rest.strip_prefix('(')?.strip_suffix(')')
}

/// Sets `slot` once; a second setting is an error naming the token.
fn set_once<T>(slot: &mut Option<(T, String)>, value: T, token: &str) -> Result<(), StressError> {
    if let Some((_, first)) = slot {
        return Err(StressError::new(
            token,
            format!("`{token}` repeats `{first}`: c-s accepts each parameter once"),
        ));
    }
    *slot = Some((value, token.to_string()));
    Ok(())
}

fn whole(token: &str, value: &str, what: &str) -> Result<u64, StressError> {
    parse_whole(value)
        .map_err(|e| StressError::new(token, format!("invalid `{token}`: {e}; expected {what}")))
}

fn positive_u32(token: &str, value: &str, what: &str) -> Result<u32, StressError> {
    let n = whole(token, value, what)?;
    match u32::try_from(n) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(StressError::new(
            token,
            format!("invalid `{token}`: expected {what}"),
        )),
    }
}

fn key_distribution(token: &str, spec: &str) -> Result<KeyDistribution, StressError> {
    spec.parse::<KeyDistribution>()
        .map_err(|e| StressError::new(token, format!("invalid distribution in `{token}`: {e}")))
}

fn size_distribution(token: &str, spec: &str) -> Result<SizeDistribution, StressError> {
    spec.parse::<SizeDistribution>()
        .map_err(|e| StressError::new(token, format!("invalid distribution in `{token}`: {e}")))
}

/// `R/s` (c-s `[0-9]+/s`, case-insensitive).
fn per_second(token: &str, value: &str) -> Result<u64, StressError> {
    let key = token.split('=').next().unwrap_or(token);
    let number = strip_suffix_ci(value, "/s").ok_or_else(|| {
        StressError::new(
            token,
            format!("invalid rate `{token}`: expected operations per second such as {key}=20000/s"),
        )
    })?;
    let rate = parse_whole(number).map_err(|e| {
        StressError::new(
            token,
            format!(
                "invalid rate `{token}`: {e}; expected operations per second such as {key}=20000/s"
            ),
        )
    })?;
    if rate > super::MAX_RATE_PER_SECOND {
        return Err(StressError::new(
            token,
            format!(
                "invalid rate `{token}`: at most {}/s per c-s process (run more processes for more)",
                super::MAX_RATE_PER_SECOND
            ),
        ));
    }
    Ok(rate)
}

/// A thread count of `-rate`: 1 to [`super::MAX_THREADS`].
fn thread_count(token: &str, value: &str, example: &str) -> Result<u32, StressError> {
    let threads = positive_u32(
        token,
        value,
        &format!("a positive number of threads such as {example}"),
    )?;
    if threads > super::MAX_THREADS {
        return Err(StressError::new(
            token,
            format!(
                "invalid `{token}`: at most {} threads per c-s process (run more processes for more)",
                super::MAX_THREADS
            ),
        ));
    }
    Ok(threads)
}

fn strip_suffix_ci<'a>(token: &'a str, suffix: &str) -> Option<&'a str> {
    let n = suffix.len();
    let start = token.len().checked_sub(n)?;
    if token.as_bytes()[start..].eq_ignore_ascii_case(suffix.as_bytes()) {
        token.get(..start)
    } else {
        None
    }
}

/// `duration=` value: c-s `[0-9]+[smh]`.
fn duration(token: &str, value: &str) -> Result<SimDuration, StressError> {
    let bad = || {
        StressError::new(
            token,
            format!("invalid duration `{token}`: expected a whole number of s, m or h, such as duration=100m"),
        )
    };
    let unit_seconds: u64 = match value.as_bytes().last().map(|b| b.to_ascii_lowercase()) {
        Some(b's') => 1,
        Some(b'm') => 60,
        Some(b'h') => 3600,
        _ => return Err(bad()),
    };
    let digits = &value[..value.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return Err(bad());
    }
    let n = parse_whole(digits).map_err(|_| bad())?;
    if n == 0 {
        return Err(StressError::new(
            token,
            format!("invalid duration `{token}`: it must be longer than zero"),
        ));
    }
    let nanos = n
        .checked_mul(unit_seconds)
        .and_then(|s| s.checked_mul(units::NANOS_PER_SECOND))
        .ok_or_else(|| StressError::new(token, format!("invalid duration `{token}`: too long")))?;
    Ok(SimDuration::from_nanos(nanos))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Command {
    Write,
    Read,
    Mixed,
    User,
}

/// Options gathered from the command's own parameters.
#[derive(Default)]
struct CommandParams {
    count: Option<(u64, String)>,
    duration: Option<(SimDuration, String)>,
    uncertainty: Option<(f64, String)>,
    min_measurements: Option<(u32, String)>,
    max_measurements: Option<(u32, String)>,
    no_warmup: Option<((), String)>,
    consistency: Option<(ConsistencyLevel, String)>,
    key_size: Option<(u32, String)>,
    ratio: Option<((f64, f64), String)>,
    clustering: Option<(KeyDistribution, String)>,
    profile: Option<(String, String)>,
    ops: Option<(Vec<(String, f64)>, String)>,
    truncate: Option<((), String)>,
    serial_cl: Option<((), String)>,
    add: Option<((), String)>,
}

#[derive(Default)]
struct Parser {
    ignored: Vec<String>,
}

impl Parser {
    fn run(mut self, params: &[String]) -> Result<StressCommand, StressError> {
        let Some(first) = params.first() else {
            return Err(StressError::new(
                "",
                format!("missing command: the command line is empty; accepted commands are {ACCEPTED_COMMANDS}"),
            ));
        };
        if first.starts_with('-') {
            return Err(StressError::new(
                first,
                format!("missing command before `{first}`: start with one of {ACCEPTED_COMMANDS}"),
            ));
        }
        let command = parse_command_word(first)?;
        let command_end = params
            .iter()
            .skip(1)
            .position(|p| p.starts_with('-'))
            .map_or(params.len(), |i| i + 1);
        let cmd = self.command_params(command, first, &params[1..command_end])?;

        // Split the rest into options, each with its parameters.
        let mut options: Vec<(String, &str, &[String])> = Vec::new();
        let mut i = command_end;
        while i < params.len() {
            let key_token = params[i].as_str();
            let end = params[i + 1..]
                .iter()
                .position(|p| p.starts_with('-'))
                .map_or(params.len(), |j| i + 1 + j);
            let key = key_token.to_ascii_lowercase();
            if let Some((_, previous, _)) = options.iter().find(|(k, _, _)| *k == key) {
                return Err(StressError::new(
                    key_token,
                    format!(
                        "`{key_token}` is given twice (also as `{previous}`): c-s accepts each option once; put all its parameters after one `{key}`"
                    ),
                ));
            }
            options.push((key, key_token, &params[i + 1..end]));
            i = end;
        }

        let stop = match (&cmd.count, &cmd.duration) {
            (Some((n, _)), None) => Stop::Count(*n),
            (None, Some((d, _))) => Stop::Duration(*d),
            _ => {
                let min_measurements = cmd
                    .min_measurements
                    .as_ref()
                    .map_or(DEFAULT_MIN_MEASUREMENTS, |(v, _)| *v);
                let max_measurements = cmd
                    .max_measurements
                    .as_ref()
                    .map_or(DEFAULT_MAX_MEASUREMENTS, |(v, _)| *v);
                if min_measurements > max_measurements {
                    let token = cmd
                        .max_measurements
                        .as_ref()
                        .or(cmd.min_measurements.as_ref())
                        .map_or("", |(_, t)| t.as_str());
                    return Err(StressError::new(
                        token,
                        format!("`{token}`: n< ({max_measurements}) must not be below n> ({min_measurements})"),
                    ));
                }
                Stop::Uncertainty {
                    target_stderr: cmd
                        .uncertainty
                        .as_ref()
                        .map_or(DEFAULT_TARGET_UNCERTAINTY, |(v, _)| *v),
                    min_measurements,
                    max_measurements,
                }
            }
        };
        let count = match stop {
            Stop::Count(n) => Some(n),
            _ => None,
        };
        let population_size = count.unwrap_or(DEFAULT_POPULATION_SIZE);

        let operation = match command {
            Command::Write => Operation::Write,
            Command::Read => Operation::Read,
            Command::Mixed => {
                let (write_weight, read_weight) =
                    cmd.ratio.as_ref().map_or((1.0, 1.0), |(r, _)| *r);
                let clustering = match &cmd.clustering {
                    Some((d, _)) => d.clone(),
                    None => KeyDistribution::gaussian_stdvrng(1, 10, DEFAULT_GAUSSIAN_STDVRNG)
                        .unwrap_or(KeyDistribution::Fixed(1)),
                };
                Operation::Mixed {
                    write_weight,
                    read_weight,
                    clustering,
                }
            }
            Command::User => {
                let profile = cmd.profile.as_ref().map(|(path, _)| path.clone()).ok_or_else(|| {
                    StressError::new(
                        first,
                        "`user` needs profile=FILE.yaml: the YAML profile with the table and its queries",
                    )
                })?;
                let ops = cmd.ops.as_ref().map(|(ops, _)| ops.clone()).ok_or_else(|| {
                    StressError::new(
                        first,
                        "`user` needs ops(NAME=W,...): which of the profile's operations to run (insert and its queries) and their weights, e.g. ops(insert=1,getdata=2)",
                    )
                })?;
                let clustering = match &cmd.clustering {
                    Some((d, _)) => d.clone(),
                    None => KeyDistribution::gaussian_stdvrng(1, 10, DEFAULT_GAUSSIAN_STDVRNG)
                        .unwrap_or(KeyDistribution::Fixed(1)),
                };
                Operation::User {
                    profile,
                    ops,
                    clustering,
                }
            }
        };

        let mut result = StressCommand {
            operation,
            stop,
            warmup: cmd.no_warmup.is_none(),
            consistency: cmd
                .consistency
                .as_ref()
                .map_or(DEFAULT_CONSISTENCY, |(c, _)| *c),
            replication_factor: None,
            replication_strategy: None,
            compaction: None,
            compaction_options: Vec::new(),
            compression: None,
            rate: match (command, count) {
                (Command::Write, Some(n)) if n > 0 => Rate::ClosedLoop {
                    threads: DEFAULT_WRITE_THREADS,
                    throttle_per_sec: None,
                },
                _ => Rate::Auto {
                    min_threads: DEFAULT_AUTO_MIN_THREADS,
                    max_threads: DEFAULT_AUTO_MAX_THREADS,
                    stop_at_saturation: true,
                },
            },
            columns: ColumnSpec::default(),
            key_size_bytes: cmd
                .key_size
                .as_ref()
                .map_or(DEFAULT_KEY_SIZE_BYTES, |(k, _)| *k),
            population: match command {
                Command::Write => Population::Sequential {
                    first: 1,
                    last: population_size,
                    wrap: true,
                },
                Command::Read | Command::Mixed | Command::User => {
                    Population::Distribution(default_gaussian(population_size))
                }
            },
            retries: DEFAULT_RETRIES,
            ignore_errors: false,
            reporting: super::Reporting::default(),
            ignored_options: Vec::new(),
        };

        for (key, key_token, option_params) in options {
            if command == Command::User && (key == "-schema" || key == "-col") {
                // c-s parses them with `user` and then takes the keyspace,
                // table and columns from the profile: checked, then listed
                // as without effect.
                let mut scratch = result.clone();
                if key == "-schema" {
                    self.schema(option_params, &mut scratch)?;
                } else {
                    self.columns(option_params)?;
                }
                let mut text = key_token.to_string();
                for p in option_params {
                    text.push(' ');
                    text.push_str(p);
                }
                self.ignored.push(format!("{text} (the profile sets it)"));
                continue;
            }
            match key.as_str() {
                "-schema" => self.schema(option_params, &mut result)?,
                "-rate" => result.rate = rate(option_params)?,
                "-col" => result.columns = self.columns(option_params)?,
                "-pop" => result.population = self.population(option_params, population_size)?,
                "-errors" => self.errors(option_params, &mut result)?,
                "-reporting" => result.reporting = reporting(option_params)?,
                k if IGNORED_OPTIONS.contains(&k) => {
                    let mut text = key_token.to_string();
                    for p in option_params {
                        text.push(' ');
                        text.push_str(p);
                    }
                    self.ignored.push(text);
                }
                _ => {
                    return Err(StressError::new(
                        key_token,
                        format!(
                            "unknown option `{key_token}`: accepted options are {ACCEPTED_OPTIONS}"
                        ),
                    ))
                }
            }
        }
        result.ignored_options = self.ignored;
        Ok(result)
    }

    fn command_params(
        &mut self,
        command: Command,
        command_token: &str,
        params: &[String],
    ) -> Result<CommandParams, StressError> {
        let mut p = CommandParams::default();
        for token in params {
            let t = token.as_str();
            if let Some(v) = strip_prefix_ci(t, "n=") {
                let n = whole(t, v, "a number of operations such as n=1000000")?;
                if n == 0 {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: the number of operations must be at least 1"),
                    ));
                }
                set_once(&mut p.count, n, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "duration=") {
                set_once(&mut p.duration, duration(t, v)?, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "err<") {
                let valid = v
                    .strip_prefix("0.")
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
                let value: f64 = if valid { v.parse().unwrap_or(0.0) } else { 0.0 };
                if value <= 0.0 {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: expected a fraction such as err<0.02"),
                    ));
                }
                set_once(&mut p.uncertainty, value, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "n>") {
                set_once(
                    &mut p.min_measurements,
                    positive_u32(t, v, "a number of measurements such as n>30")?,
                    t,
                )?;
            } else if let Some(v) = strip_prefix_ci(t, "n<") {
                set_once(
                    &mut p.max_measurements,
                    positive_u32(t, v, "a number of measurements such as n<200")?,
                    t,
                )?;
            } else if t.eq_ignore_ascii_case("no-warmup") {
                set_once(&mut p.no_warmup, (), t)?;
            } else if let Some(v) = strip_prefix_ci(t, "cl=") {
                let cl = v.parse::<ConsistencyLevel>().map_err(|_| {
                    StressError::new(
                        t,
                        format!("unknown consistency level in `{t}`: accepted are {ACCEPTED_CL}"),
                    )
                })?;
                set_once(&mut p.consistency, cl, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "keysize=") {
                set_once(
                    &mut p.key_size,
                    positive_u32(t, v, "a key size in bytes such as keysize=10")?,
                    t,
                )?;
            } else if let Some(v) = strip_prefix_ci(t, "truncate=") {
                if !["never", "once", "always"]
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case(v))
                {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: accepted are truncate=never, once, always"),
                    ));
                }
                set_once(&mut p.truncate, (), t)?;
                self.ignored.push(t.to_string());
            } else if let Some(v) = strip_prefix_ci(t, "serial-cl=") {
                if !["serial", "local_serial"]
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case(v))
                {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: accepted are serial-cl=SERIAL, LOCAL_SERIAL"),
                    ));
                }
                set_once(&mut p.serial_cl, (), t)?;
                self.ignored.push(t.to_string());
            } else if let Some(v) = strip_prefix_ci(t, "add=") {
                key_distribution(t, v)?;
                set_once(&mut p.add, (), t)?;
                self.ignored.push(t.to_string());
            } else if command == Command::Mixed && group_args(t, "ratio").is_some() {
                let ratio = mixed_ratio(t, group_args(t, "ratio").unwrap_or_default())?;
                set_once(&mut p.ratio, ratio, t)?;
            } else if let (Command::User, Some(v)) = (command, strip_prefix_ci(t, "profile=")) {
                if v.is_empty() {
                    return Err(StressError::new(
                        t,
                        "`profile=` names no file: give profile=FILE.yaml",
                    ));
                }
                set_once(&mut p.profile, v.to_string(), t)?;
            } else if command == Command::User && group_args(t, "ops").is_some() {
                let ops = user_ops(t, group_args(t, "ops").unwrap_or_default())?;
                set_once(&mut p.ops, ops, t)?;
            } else if let (Command::Mixed | Command::User, Some(v)) =
                (command, strip_prefix_ci(t, "clustering="))
            {
                let dist = key_distribution(t, v)?;
                if *dist.range().start() == 0 {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: run lengths must be at least 1"),
                    ));
                }
                set_once(&mut p.clustering, dist, t)?;
            } else {
                let mixed_extra = match command {
                    Command::Mixed => ", ratio(write=W,read=R), clustering=DIST",
                    Command::User => ", profile=FILE, ops(NAME=W,...), clustering=DIST",
                    _ => "",
                };
                return Err(StressError::new(
                    t,
                    format!(
                        "unknown parameter `{t}` for `{command_token}`: accepted are n=N, duration=D (s, m or h), no-warmup, cl=LEVEL, keysize=B, err<F, n>N, n<N, truncate=, serial-cl=, add=DIST{mixed_extra}"
                    ),
                ));
            }
        }
        // c-s's command option groups: n= (Count), duration= (Duration), or
        // err< n> n< (Uncertainty); no group accepts parameters of two.
        let uncertainty_token: Option<String> = first_token(&[
            p.uncertainty.as_ref().map(|(_, t)| t),
            p.min_measurements.as_ref().map(|(_, t)| t),
            p.max_measurements.as_ref().map(|(_, t)| t),
        ]);
        match (&p.count, &p.duration, uncertainty_token) {
            (Some((_, n)), Some((_, d)), _) => {
                return Err(StressError::new(
                    d,
                    format!("`{d}` cannot be combined with `{n}`: c-s runs either n= operations or for duration="),
                ))
            }
            (Some((_, other)), None, Some(u)) | (None, Some((_, other)), Some(u)) => {
                return Err(StressError::new(
                    &u,
                    format!("`{u}` cannot be combined with `{other}`: err<, n> and n< apply only when neither n= nor duration= is given"),
                ))
            }
            _ => {}
        }
        Ok(p)
    }

    fn schema(&mut self, params: &[String], result: &mut StressCommand) -> Result<(), StressError> {
        let mut replication_seen: Option<String> = None;
        let mut compaction_seen: Option<String> = None;
        for token in params {
            let t = token.as_str();
            if let Some(inner) = group_args(t, "replication") {
                if let Some(first) = &replication_seen {
                    return Err(StressError::new(
                        t,
                        format!("`{t}` repeats `{first}`: give replication(...) once"),
                    ));
                }
                replication_seen = Some(t.to_string());
                let (factor, strategy) = replication(t, inner)?;
                result.replication_factor = Some(factor);
                result.replication_strategy = Some(strategy);
            } else if let Some(inner) = group_args(t, "compaction") {
                if let Some(first) = &compaction_seen {
                    return Err(StressError::new(
                        t,
                        format!("`{t}` repeats `{first}`: give compaction(...) once"),
                    ));
                }
                compaction_seen = Some(t.to_string());
                let (strategy, options) = compaction(t, inner)?;
                match strategy {
                    Some(s) => {
                        result.compaction = Some(s);
                        result.compaction_options = options;
                    }
                    // c-s applies compaction options only with a strategy.
                    None => self.ignored.push(format!("-schema {t}")),
                }
            } else if let Some(class) = strip_prefix_ci(t, "compression=").filter(|v| !v.is_empty())
            {
                result.compression = Some(Compression::from_class_name(class).ok_or_else(|| {
                    StressError::new(
                        t,
                        format!("unknown compressor `{class}`: accepted are LZ4Compressor, SnappyCompressor, DeflateCompressor"),
                    )
                })?);
            } else if strip_prefix_ci(t, "keyspace=").is_some_and(|v| !v.is_empty()) {
                self.ignored.push(format!("-schema {t}"));
            } else {
                return Err(StressError::new(
                    t,
                    format!(
                        "unknown -schema parameter `{t}`: accepted are replication(factor=N), compaction(strategy=SizeTieredCompactionStrategy|LeveledCompactionStrategy), keyspace=NAME, compression=CLASS"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn columns(&mut self, params: &[String]) -> Result<ColumnSpec, StressError> {
        let mut count: Option<(SizeDistribution, String)> = None;
        let mut size: Option<(SizeDistribution, String)> = None;
        for token in params {
            let t = token.as_str();
            if let Some(v) = strip_prefix_ci(t, "size=") {
                set_once(&mut size, size_distribution(t, v)?, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "n=") {
                let dist = size_distribution(t, v)?;
                if *dist.range().start() == 0 {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: a row needs at least one column"),
                    ));
                }
                set_once(&mut count, dist, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "names=") {
                let names = v.split(',').filter(|n| !n.is_empty()).count() as u64;
                if names == 0 {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: expected names=C0,C1,..."),
                    ));
                }
                set_once(&mut count, SizeDistribution::Fixed(names), t)?;
                self.ignored
                    .push(format!("-col {t} (only the column count is simulated)"));
            } else if t.eq_ignore_ascii_case("slice")
                || strip_prefix_ci(t, "super=").is_some()
                || strip_prefix_ci(t, "comparator=").is_some()
                || strip_prefix_ci(t, "timestamp=").is_some()
            {
                self.ignored.push(format!("-col {t}"));
            } else {
                return Err(StressError::new(
                    t,
                    format!("unknown -col parameter `{t}`: accepted are size=DIST and n=DIST with DIST FIXED(v) or UNIFORM(min..max) (also names=, slice, super=, comparator=, timestamp=)"),
                ));
            }
        }
        let defaults = ColumnSpec::default();
        Ok(ColumnSpec {
            count: count.map_or(defaults.count, |(d, _)| d),
            size: size.map_or(defaults.size, |(d, _)| d),
        })
    }

    fn population(
        &mut self,
        params: &[String],
        population_size: u64,
    ) -> Result<Population, StressError> {
        let mut seq: Option<((u64, u64), String)> = None;
        let mut dist: Option<(KeyDistribution, String)> = None;
        let mut no_wrap: Option<((), String)> = None;
        let mut contents: Option<((), String)> = None;
        for token in params {
            let t = token.as_str();
            if let Some(v) = strip_prefix_ci(t, "seq=") {
                let bounds = parse_bounds(v, t).map_err(|e| {
                    StressError::new(
                        t,
                        format!(
                            "invalid `{t}`: {e}; expected seq=first..last such as seq=1..1000000"
                        ),
                    )
                })?;
                set_once(&mut seq, bounds, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "dist=") {
                set_once(&mut dist, key_distribution(t, v)?, t)?;
            } else if t.eq_ignore_ascii_case("no-wrap") {
                set_once(&mut no_wrap, (), t)?;
            } else if let Some(v) = strip_prefix_ci(t, "contents=") {
                if !["sorted", "shuffled"]
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case(v))
                {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: accepted are contents=sorted, shuffled"),
                    ));
                }
                set_once(&mut contents, (), t)?;
                self.ignored.push(format!("-pop {t}"));
            } else if strip_prefix_ci(t, "read-lookback=").is_some() {
                return Err(StressError::new(
                    t,
                    format!("`{t}` is not modelled by the twin: accepted -pop parameters are seq=a..b, no-wrap, dist=DIST, contents="),
                ));
            } else {
                return Err(StressError::new(
                    t,
                    format!("unknown -pop parameter `{t}`: accepted are seq=a..b [no-wrap] or dist=DIST (uniform, gaussian, exp, fixed), contents="),
                ));
            }
        }
        match (seq, dist, no_wrap) {
            (Some((_, s)), Some((_, d)), _) => Err(StressError::new(
                &d,
                format!("`{d}` cannot be combined with `{s}`: -pop takes either seq= or dist="),
            )),
            (Some(((first, last), _)), None, no_wrap) => Ok(Population::Sequential {
                first,
                last,
                wrap: no_wrap.is_none(),
            }),
            (None, _, Some((_, w))) => Err(StressError::new(
                &w,
                format!("`{w}` applies only to -pop seq=a..b"),
            )),
            (None, Some((d, _)), None) => Ok(Population::Distribution(d)),
            // c-s: with neither, the dist= group's default applies.
            (None, None, None) => Ok(Population::Distribution(default_gaussian(population_size))),
        }
    }

    /// `-errors`: Apache c-s's `retries=N` and `ignore`, 4.0's
    /// `skip-read-validation`, and the options of Scylla's c-s
    /// (`SettingsErrors` in scylladb/cassandra-stress): `fail-fast`,
    /// `skip-unsupported-columns` and the retry delays `delay-policy=`,
    /// `min-delay-ms=`, `max-delay-ms=`, checked as its `happy()` checks
    /// them (the minimum at most the maximum; an exponential policy needs a
    /// minimum above 0). Only `retries=` and `ignore` change the simulated
    /// load; the rest are listed as without effect, each with why.
    fn errors(&mut self, params: &[String], result: &mut StressCommand) -> Result<(), StressError> {
        let mut retries: Option<(u32, String)> = None;
        let mut ignore: Option<((), String)> = None;
        let mut skip: Option<((), String)> = None;
        let mut fail_fast: Option<((), String)> = None;
        let mut skip_columns: Option<((), String)> = None;
        let mut policy: Option<(String, String)> = None;
        let mut min_delay: Option<(u64, String)> = None;
        let mut max_delay: Option<(u64, String)> = None;
        for token in params {
            let t = token.as_str();
            if let Some(v) = strip_prefix_ci(t, "retries=") {
                let n = whole(t, v, "a number of retries such as retries=9")?;
                let n = u32::try_from(n)
                    .map_err(|_| StressError::new(t, format!("invalid `{t}`: too many retries")))?;
                set_once(&mut retries, n, t)?;
            } else if t.eq_ignore_ascii_case("ignore") {
                set_once(&mut ignore, (), t)?;
            } else if t.eq_ignore_ascii_case("skip-read-validation") {
                set_once(&mut skip, (), t)?;
                self.ignored.push(format!("-errors {t}"));
            } else if t.eq_ignore_ascii_case("fail-fast") {
                set_once(&mut fail_fast, (), t)?;
            } else if t.eq_ignore_ascii_case("skip-unsupported-columns") {
                set_once(&mut skip_columns, (), t)?;
                self.ignored.push(format!(
                    "-errors {t} (the twin generates no column values to skip)"
                ));
            } else if let Some(v) = strip_prefix_ci(t, "delay-policy=") {
                let v = v.to_ascii_lowercase();
                if !matches!(v.as_str(), "constant" | "linear" | "exponential") {
                    return Err(StressError::new(
                        t,
                        format!("invalid `{t}`: accepted are delay-policy=constant, linear, exponential"),
                    ));
                }
                set_once(&mut policy, v, t)?;
            } else if let Some(v) = strip_prefix_ci(t, "min-delay-ms=") {
                set_once(
                    &mut min_delay,
                    whole(t, v, "milliseconds such as min-delay-ms=100")?,
                    t,
                )?;
            } else if let Some(v) = strip_prefix_ci(t, "max-delay-ms=") {
                set_once(
                    &mut max_delay,
                    whole(t, v, "milliseconds such as max-delay-ms=20000")?,
                    t,
                )?;
            } else {
                return Err(StressError::new(
                    t,
                    format!("unknown -errors parameter `{t}`: accepted are retries=N, ignore, skip-read-validation, and Scylla's c-s's fail-fast, skip-unsupported-columns, delay-policy=, min-delay-ms=, max-delay-ms="),
                ));
            }
        }
        let min = min_delay.as_ref().map_or(0, |(ms, _)| *ms);
        let max = max_delay.as_ref().map_or(20_000, |(ms, _)| *ms);
        if min > max {
            let token = min_delay.map_or_else(String::new, |(_, t)| t);
            return Err(StressError::new(
                &token,
                format!("`{token}` is above max-delay-ms ({max} ms): the minimum delay may not exceed the maximum"),
            ));
        }
        if let Some((name, token)) = &policy {
            if name == "exponential" && min == 0 {
                return Err(StressError::new(
                    token,
                    format!("`{token}` needs min-delay-ms= above 0 (an exponential delay doubles the minimum)"),
                ));
            }
        }
        let delays: Vec<&String> = [
            policy.as_ref().map(|(_, t)| t),
            min_delay.as_ref().map(|(_, t)| t),
            max_delay.as_ref().map(|(_, t)| t),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !delays.is_empty() {
            let written: Vec<&str> = delays.iter().map(|t| t.as_str()).collect();
            self.ignored.push(format!(
                "-errors {} (Scylla's c-s waits so only after an Overloaded reply, which the twin's coordinators never send)",
                written.join(" ")
            ));
        }
        if let Some((_, t)) = fail_fast {
            self.ignored.push(format!(
                "-errors {t} (the twin's only failure is an operation that fails every try, which stops its process with or without it)"
            ));
        }
        if let Some((n, _)) = retries {
            result.retries = n;
        }
        result.ignore_errors = ignore.is_some();
        Ok(())
    }
}

/// `-reporting`'s parameters ([`super::Reporting`]).
fn reporting(params: &[String]) -> Result<super::Reporting, StressError> {
    let mut output: Option<(u32, String)> = None;
    let mut header: Option<(u32, String)> = None;
    for token in params {
        let t = token.as_str();
        if let Some(v) = strip_prefix_ci(t, "output-frequency=") {
            set_once(&mut output, whole_seconds(t, v)?, t)?;
        } else if let Some(v) = strip_prefix_ci(t, "header-frequency=") {
            set_once(&mut header, whole_seconds(t, v)?, t)?;
        } else {
            return Err(StressError::new(
                t,
                format!("unknown -reporting parameter `{t}`: accepted are output-frequency=DURATION, header-frequency=DURATION (e.g. 10s)"),
            ));
        }
    }
    Ok(super::Reporting {
        output_every: output.map_or(0, |(seconds, _)| seconds),
        header_every: header.map_or(0, |(seconds, _)| seconds),
    })
}

/// A duration as c-s 4.0+'s `DurationSpec.IntSecondsBound` reads it: a
/// whole number and a unit of seconds or coarser (`d`, `h`, `m`, `s`),
/// in seconds.
fn whole_seconds(token: &str, value: &str) -> Result<u32, StressError> {
    let digits = value.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == 'µ');
    let unit = &value[digits.len()..];
    let per_unit: u64 = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        "ms" | "us" | "µs" | "ns" => {
            return Err(StressError::new(
                token,
                format!("invalid `{token}`: c-s takes this duration in whole seconds or coarser units (s, m, h, d), not {unit}"),
            ))
        }
        _ => {
            return Err(StressError::new(
                token,
                format!("invalid `{token}`: expected a whole number and a unit, e.g. 10s or 1m"),
            ))
        }
    };
    let seconds = whole(token, digits, "a whole number and a unit, e.g. 10s")?
        .checked_mul(per_unit)
        .and_then(|seconds| u32::try_from(seconds).ok())
        .filter(|&seconds| i32::try_from(seconds).is_ok())
        .ok_or_else(|| StressError::new(token, format!("invalid `{token}`: too long")))?;
    Ok(seconds)
}

/// The first token present among `tokens`.
fn first_token(tokens: &[Option<&String>]) -> Option<String> {
    tokens.iter().flatten().next().map(|t| t.to_string())
}

fn default_gaussian(population_size: u64) -> KeyDistribution {
    // gaussian(1..N): for N = 1 the range is empty and c-s itself fails;
    // the twin falls back to the single key.
    KeyDistribution::gaussian_stdvrng(1, population_size, DEFAULT_GAUSSIAN_STDVRNG)
        .unwrap_or(KeyDistribution::Fixed(1))
}

fn parse_command_word(word: &str) -> Result<Command, StressError> {
    let lower = word.to_ascii_lowercase();
    match lower.as_str() {
        "write" | "insert" => Ok(Command::Write),
        "read" => Ok(Command::Read),
        "mixed" => Ok(Command::Mixed),
        "user" => Ok(Command::User),
        "counter_write" | "counterwrite" | "counter_add" | "counteradd" | "counter_read" | "counterread"
        | "counter_get" | "counterget" => Err(StressError::new(
            word,
            format!("the c-s command `{word}` runs on counters (each update a read of the counter and a write on a leader replica, then the result sent to the others), which the twin does not simulate: accepted commands are {ACCEPTED_COMMANDS}"),
        )),
        "help" | "print" | "legacy" | "version" => Err(StressError::new(
            word,
            format!("the c-s command `{word}` prints c-s's own help, settings or version and runs no load: accepted commands are {ACCEPTED_COMMANDS}"),
        )),
        _ => Err(StressError::new(word, format!("unknown command `{word}`: accepted commands are {ACCEPTED_COMMANDS}"))),
    }
}

/// `ratio(write=W,read=R)`: c-s weights `[0-9]+(\.[0-9]+)?`.
fn mixed_ratio(token: &str, inner: &str) -> Result<(f64, f64), StressError> {
    let usage = "expected ratio(write=W,read=R) with W and R numbers such as 1 or 0.5";
    let mut write: Option<f64> = None;
    let mut read: Option<f64> = None;
    if inner.is_empty() {
        return Err(StressError::new(token, format!("empty `{token}`: {usage}")));
    }
    for item in inner.split(',') {
        let (name, value) = item.split_once('=').ok_or_else(|| {
            StressError::new(token, format!("invalid `{item}` in `{token}`: {usage}"))
        })?;
        let (int, frac) = value.split_once('.').unwrap_or((value, "0"));
        let numeric = !int.is_empty()
            && !frac.is_empty()
            && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit());
        let weight: f64 = if numeric { value.parse().ok() } else { None }
            .filter(|w: &f64| w.is_finite())
            .ok_or_else(|| {
                StressError::new(
                    token,
                    format!("invalid weight `{item}` in `{token}`: {usage}"),
                )
            })?;
        let slot = if name.eq_ignore_ascii_case("write") {
            &mut write
        } else if name.eq_ignore_ascii_case("read") {
            &mut read
        } else {
            return Err(StressError::new(
                token,
                format!("unsupported operation `{name}` in `{token}`: the twin's mixed accepts write= and read="),
            ));
        };
        if slot.replace(weight).is_some() {
            return Err(StressError::new(
                token,
                format!("`{name}` is given twice in `{token}`"),
            ));
        }
    }
    let (write, read) = (write.unwrap_or(0.0), read.unwrap_or(0.0));
    if write + read <= 0.0 {
        return Err(StressError::new(
            token,
            format!("`{token}` gives no operation a non-zero weight: {usage}"),
        ));
    }
    Ok((write, read))
}

/// `ops(NAME=W,...)` of `user`: each operation's weight (c-s
/// `OptionAnyProbabilities`: any names, non-negative weights). Whether the
/// names are the profile's is checked once the profile is read.
fn user_ops(token: &str, inner: &str) -> Result<Vec<(String, f64)>, StressError> {
    let usage = "expected ops(NAME=W,...) naming insert or the profile's queries, e.g. ops(insert=1,getdata=2)";
    if inner.is_empty() {
        return Err(StressError::new(token, format!("empty `{token}`: {usage}")));
    }
    let mut ops: Vec<(String, f64)> = Vec::new();
    for item in inner.split(',') {
        let (name, value) = item
            .split_once('=')
            .filter(|(name, value)| !name.is_empty() && !value.is_empty())
            .ok_or_else(|| {
                StressError::new(token, format!("invalid `{item}` in `{token}`: {usage}"))
            })?;
        let weight: f64 = value
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| {
                StressError::new(
                    token,
                    format!("invalid weight `{value}` for `{name}` in `{token}`: {usage}"),
                )
            })?;
        // c-s looks operations up lower-cased (`StressProfile.getQuery`).
        let name = name.to_ascii_lowercase();
        if ops.iter().any(|(seen, _)| *seen == name) {
            return Err(StressError::new(
                token,
                format!("`{name}` is given twice in `{token}`"),
            ));
        }
        ops.push((name, weight));
    }
    if ops.iter().all(|(_, weight)| *weight == 0.0) {
        return Err(StressError::new(
            token,
            format!("`{token}` gives no operation a non-zero weight: {usage}"),
        ));
    }
    Ok(ops)
}

/// `replication(factor=N[,strategy=S][,dc=N])` to a replication factor and
/// strategy.
fn replication(token: &str, inner: &str) -> Result<(u32, ReplicationStrategy), StressError> {
    let mut factor: Option<u32> = None;
    let mut network_topology = false;
    let mut datacenters: Vec<(String, u32)> = Vec::new();
    let accepted = "accepted are factor=N and strategy=SimpleStrategy|NetworkTopologyStrategy (with one DATACENTER=N)";
    for item in inner.split(',').filter(|i| !i.is_empty()) {
        let (name, value) = item
            .split_once('=')
            .filter(|(n, v)| !n.is_empty() && !v.is_empty())
            .ok_or_else(|| {
                StressError::new(token, format!("invalid `{item}` in `{token}`: {accepted}"))
            })?;
        let number = |what: &str| -> Result<u32, StressError> {
            parse_whole(value)
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| StressError::new(token, format!("invalid {what} `{item}` in `{token}`: expected a positive whole number")))
        };
        if name.eq_ignore_ascii_case("factor") {
            if factor.replace(number("replication factor")?).is_some() {
                return Err(StressError::new(
                    token,
                    format!("factor= is given twice in `{token}`"),
                ));
            }
        } else if name.eq_ignore_ascii_case("strategy") {
            let short = value
                .strip_prefix("org.apache.cassandra.locator.")
                .unwrap_or(value);
            if short.eq_ignore_ascii_case("SimpleStrategy") {
                network_topology = false;
            } else if short.eq_ignore_ascii_case("NetworkTopologyStrategy") {
                network_topology = true;
            } else {
                return Err(StressError::new(
                    token,
                    format!("unknown replication strategy `{value}` in `{token}`: {accepted}"),
                ));
            }
        } else {
            datacenters.push((name.to_string(), number("replication factor")?));
        }
    }
    if !datacenters.is_empty() && !network_topology {
        return Err(StressError::new(
            token,
            format!(
                "unknown replication option `{}` in `{token}`: {accepted}",
                datacenters[0].0
            ),
        ));
    }
    let strategy = if network_topology {
        ReplicationStrategy::NetworkTopologyStrategy
    } else {
        ReplicationStrategy::SimpleStrategy
    };
    match (factor, datacenters.as_slice()) {
        (Some(f), []) => Ok((f, strategy)),
        (None, []) => Ok((DEFAULT_REPLICATION_FACTOR, strategy)),
        (None, [(_, n)]) => Ok((*n, strategy)),
        (Some(_), [_]) => Err(StressError::new(
            token,
            format!("`{token}` gives both factor= and a datacenter factor: give one"),
        )),
        _ => Err(StressError::new(
            token,
            format!(
                "`{token}` names several datacenters: multi-datacenter replication is not modelled"
            ),
        )),
    }
}

type CompactionSpec = (Option<CompactionStrategy>, Vec<(String, String)>);

/// `compaction(strategy=S[,option=value...])`.
fn compaction(token: &str, inner: &str) -> Result<CompactionSpec, StressError> {
    let mut strategy: Option<CompactionStrategy> = None;
    let mut options = Vec::new();
    for item in inner.split(',').filter(|i| !i.is_empty()) {
        let (name, value) = item
            .split_once('=')
            .filter(|(n, v)| !n.is_empty() && !v.is_empty())
            .ok_or_else(|| {
                StressError::new(
                    token,
                    format!("invalid `{item}` in `{token}`: expected strategy=SizeTieredCompactionStrategy|LeveledCompactionStrategy|TimeWindowCompactionStrategy and option=value pairs"),
                )
            })?;
        if name.eq_ignore_ascii_case("strategy") {
            let Some(s) = CompactionStrategy::from_class_name(value) else {
                return Err(StressError::new(
                    token,
                    format!(
                        "unsupported compaction strategy `{value}` in `{token}`: accepted are {} (optionally org.apache.cassandra.db.compaction.-qualified)",
                        CompactionStrategy::accepted()
                    ),
                ));
            };
            if strategy.replace(s).is_some() {
                return Err(StressError::new(
                    token,
                    format!("strategy= is given twice in `{token}`"),
                ));
            }
        } else {
            if options.iter().any(|(n, _): &(String, String)| n == name) {
                return Err(StressError::new(
                    token,
                    format!("`{name}` is given twice in `{token}`"),
                ));
            }
            options.push((name.to_string(), value.to_string()));
        }
    }
    Ok((strategy, options))
}

/// `-rate` parameters to a [`Rate`].
fn rate(params: &[String]) -> Result<Rate, StressError> {
    let mut threads: Option<(u32, String)> = None;
    // `limit=` and `throttle=` share one slot (c-s takes one of them); the
    // flag records which was written.
    let mut throttle: Option<((u64, bool), String)> = None;
    let mut fixed: Option<(u64, String)> = None;
    let mut auto: Option<((), String)> = None;
    let mut min_threads: Option<(u32, String)> = None;
    let mut max_threads: Option<(u32, String)> = None;
    for token in params {
        let t = token.as_str();
        if let Some(v) = strip_prefix_ci(t, "threads=") {
            set_once(&mut threads, thread_count(t, v, "threads=200")?, t)?;
        } else if let Some(v) = strip_prefix_ci(t, "limit=") {
            let r = per_second(t, v)?;
            set_once(&mut throttle, (r, false), t)?;
        } else if let Some(v) = strip_prefix_ci(t, "throttle=") {
            let r = per_second(t, v)?;
            set_once(&mut throttle, (r, true), t)?;
        } else if let Some(v) = strip_prefix_ci(t, "fixed=") {
            set_once(&mut fixed, per_second(t, v)?, t)?;
        } else if t.eq_ignore_ascii_case("auto") {
            set_once(&mut auto, (), t)?;
        } else if let Some(v) = strip_prefix_ci(t, "threads>=") {
            set_once(&mut min_threads, thread_count(t, v, "threads>=4")?, t)?;
        } else if let Some(v) = strip_prefix_ci(t, "threads<=") {
            set_once(&mut max_threads, thread_count(t, v, "threads<=1000")?, t)?;
        } else {
            return Err(StressError::new(
                t,
                format!(
                    "unknown -rate parameter `{t}`: accepted are threads=N with limit=R/s, throttle=R/s or fixed=R/s, or auto with threads>=N and threads<=N"
                ),
            ));
        }
    }
    let auto_token = first_token(&[
        auto.as_ref().map(|(_, t)| t),
        min_threads.as_ref().map(|(_, t)| t),
        max_threads.as_ref().map(|(_, t)| t),
    ]);
    let fixed_token = first_token(&[
        threads.as_ref().map(|(_, t)| t),
        throttle.as_ref().map(|(_, t)| t),
        fixed.as_ref().map(|(_, t)| t),
    ]);
    if let (Some(a), Some(f)) = (&auto_token, &fixed_token) {
        return Err(StressError::new(
            a,
            format!("`{a}` cannot be combined with `{f}`: -rate takes either threads= (with limit=, throttle= or fixed=) or auto/threads>=/threads<="),
        ));
    }
    if auto_token.is_some() || fixed_token.is_none() {
        let min = min_threads
            .as_ref()
            .map_or(DEFAULT_AUTO_MIN_THREADS, |(n, _)| *n);
        let max = max_threads
            .as_ref()
            .map_or(DEFAULT_AUTO_MAX_THREADS, |(n, _)| *n);
        if min > max {
            let token = max_threads
                .as_ref()
                .or(min_threads.as_ref())
                .map_or("", |(_, t)| t.as_str());
            return Err(StressError::new(
                token,
                format!("`{token}`: threads<= ({max}) is below threads>= ({min})"),
            ));
        }
        return Ok(Rate::Auto {
            min_threads: min,
            max_threads: max,
            stop_at_saturation: auto.is_some(),
        });
    }
    let (throttle_rate, uniform) = throttle.as_ref().map_or((0, false), |(r, _)| *r);
    let fixed_rate = fixed.as_ref().map_or(0, |(r, _)| *r);
    if throttle_rate > 0 && fixed_rate > 0 {
        let (t, f) = (
            throttle.as_ref().map_or("", |(_, t)| t.as_str()),
            fixed.as_ref().map_or("", |(_, t)| t.as_str()),
        );
        return Err(StressError::new(
            f,
            format!("`{f}` cannot be combined with `{t}`: choose a fixed rate or a throttle"),
        ));
    }
    let thread_count = threads.as_ref().map(|(n, _)| *n);
    if fixed_rate > 0 {
        return Ok(Rate::FixedRate {
            ops_per_sec: fixed_rate,
            threads: thread_count,
        });
    }
    match thread_count {
        Some(n) if uniform && throttle_rate > 0 => Ok(Rate::Throttled {
            threads: n,
            ops_per_sec: throttle_rate,
        }),
        Some(n) => Ok(Rate::ClosedLoop {
            threads: n,
            throttle_per_sec: (throttle_rate > 0).then_some(throttle_rate),
        }),
        None => {
            let t = fixed_token.unwrap_or_default();
            Err(StressError::new(
                &t,
                format!("`{t}` needs threads=N in the same -rate (c-s requires a thread count)"),
            ))
        }
    }
}
