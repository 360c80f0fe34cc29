//! `[[load]]`: each load's cassandra-stress command (and a `user`
//! command's profile) resolved into what the simulator's clients do: the
//! operation mix, rate, columns, keys, start, stop, loader, consistency,
//! routing and client.
//!
//! The defaults are cassandra-stress's and its driver's: a c4.4xlarge
//! loader (R1 and R2 used one), the DataStax Java driver's 12 s read
//! timeout (`SocketOptions`), token-aware routing. The bounds are the
//! twin's: a load runs at most `scenario::MAX_CLIENT_THREADS_PER_LOAD`
//! client threads, a row at most 4 GiB of values, a batch at most
//! `engine::MAX_BATCH_PARTS` partitions.

use std::sync::Arc;

use models::cassandra_stress::cql::QueryShape;
use models::cassandra_stress::profile::{self as user_profiles, UserProfile};
use models::cassandra_stress::{self, Operation, Population, Rate, ReplicationStrategy, Stop};
use models::instance;
use units::SimDuration;

use super::cluster::resolve_instance;
use crate::load::{
    search_thread_counts, ColumnPlan, KeyPlan, LoadPlan, OpKind, OpMix, ProfileRows, RatePlan,
    Routing, SearchStep, StartPlan, StopPlan, SEARCH_PAUSE_FOR_WRITES,
};
use crate::scenario::{HumanDuration, Scenario, ScenarioError};

/// Loader instance when a load names none: R1 and R2 used c4.4xlarge.
const DEFAULT_LOADER: &str = "c4.4xlarge";

/// The DataStax Java driver's default read timeout (`SocketOptions`,
/// 12,000 ms), which cassandra-stress runs with.
const DEFAULT_CLIENT_TIMEOUT: SimDuration = SimDuration::from_secs(12);

/// The engine's level for c-s's: one datacenter, no hints, so ANY and
/// LOCAL_ONE act as ONE and EACH_QUORUM and LOCAL_QUORUM as QUORUM.
fn engine_consistency(level: cassandra_stress::ConsistencyLevel) -> engine::ConsistencyLevel {
    use cassandra_stress::ConsistencyLevel as Cs;
    match level {
        Cs::Any | Cs::One | Cs::LocalOne => engine::ConsistencyLevel::One,
        Cs::Two => engine::ConsistencyLevel::Two,
        Cs::Three => engine::ConsistencyLevel::Three,
        Cs::Quorum | Cs::EachQuorum => engine::ConsistencyLevel::Quorum,
        Cs::LocalQuorum => engine::ConsistencyLevel::LocalQuorum,
        Cs::All => engine::ConsistencyLevel::All,
    }
}

/// A `user` command's profile: read from its path (relative to the
/// scenario file), checked against the command's `ops(...)`, and its
/// keyspace and table settings put where a predefined command's `-schema`
/// puts them (`replication(...)`, `compaction(...)`, `compression=`), so
/// the keyspace and table checks below treat both alike. `None` for the
/// predefined commands.
pub(super) fn user_profile(
    scenario: &Scenario,
    field: &str,
    command: &mut cassandra_stress::StressCommand,
    chunk_kb: &mut Option<u64>,
) -> Result<Option<UserProfile>, ScenarioError> {
    let Operation::User {
        profile: path, ops, ..
    } = &command.operation
    else {
        return Ok(None);
    };
    let scenario_dir = std::path::Path::new(&scenario.source.file)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    // c-s also takes a file URI (`profile=file:///path/to/profile.yaml`).
    let full = scenario_dir.join(path.strip_prefix("file://").unwrap_or(path));
    let shown = full.display().to_string();
    let text = std::fs::read_to_string(&full).map_err(|error| {
        scenario.error(field, format!("profile `{shown}` cannot be read: {error} (profile= is relative to the scenario file)"))
    })?;
    let profile = user_profiles::parse_profile(&text, &shown)
        .map_err(|error| scenario.error(field, error.to_string()))?;
    let names = profile.operation_names();
    for (name, _) in ops {
        if !names.contains(name) {
            return Err(scenario.error(
                field,
                format!("ops(...) names `{name}`, which is not an operation of {shown}: accepted are {}", names.join(", ")),
            ));
        }
    }
    // What the profile defines and the twin does not simulate is refused
    // only when this load uses it.
    if let Some((key, reason)) = profile.refusal(ops) {
        return Err(scenario.error(field, format!("{shown}: {key}: {reason}")));
    }
    // What the engine cannot run, refused by name.
    if profile.insert.partitions.range().1 > engine::MAX_BATCH_PARTS as u64 {
        return Err(scenario.error(
            field,
            format!(
                "{shown}: `insert.partitions` is {}: a batch of the twin holds at most {} partitions",
                profile.insert.partitions,
                engine::MAX_BATCH_PARTS
            ),
        ));
    }
    if let Some(keyspace) = &profile.keyspace_definition {
        command.replication_factor = Some(keyspace.replication_factor);
        command.replication_strategy = Some(if keyspace.network_topology {
            ReplicationStrategy::NetworkTopologyStrategy
        } else {
            ReplicationStrategy::SimpleStrategy
        });
    }
    if let Some((class, options)) = &profile.table.compaction {
        command.compaction = Some(
            cassandra_stress::CompactionStrategy::from_class_name(class).ok_or_else(|| {
                scenario.error(
                    field,
                    format!(
                        "{shown}: table_definition: compaction class `{class}` is not simulated by the twin: accepted are {}",
                        cassandra_stress::CompactionStrategy::accepted()
                    ),
                )
            })?,
        );
        command.compaction_options = options.clone();
    }
    // Expiry acts through compaction (a time-window table drops whole
    // expired SSTables): the table's TTL and gc_grace_seconds travel with
    // its compaction, which `plan::compaction` resolves (and refuses for
    // the strategies whose row-by-row purge the twin does not model).
    if let Some(ttl) = profile.table.default_time_to_live {
        command
            .compaction
            .get_or_insert(cassandra_stress::CompactionStrategy::SizeTiered);
        command
            .compaction_options
            .push(("default_time_to_live".into(), ttl.to_string()));
        if let Some(grace) = profile.table.gc_grace_seconds {
            command
                .compaction_options
                .push(("gc_grace_seconds".into(), grace.to_string()));
        }
    }
    match &profile.table.compression {
        None | Some(None) => {}
        Some(Some((class, chunk))) => {
            command.compression = Some(
                cassandra_stress::Compression::from_class_name(class).ok_or_else(|| {
                    scenario.error(
                        field,
                        format!("{shown}: table_definition: compression class `{class}` is not modelled: accepted are LZ4Compressor, SnappyCompressor, DeflateCompressor"),
                    )
                })?,
            );
            if let Some(kb) = *chunk {
                match *chunk_kb {
                    Some(earlier) if earlier != kb => {
                        return Err(scenario.error(
                            field,
                            format!("{shown}: table_definition: chunk_length_in_kb {kb} differs from the table's {earlier} (set by an earlier load's profile); the twin simulates one table"),
                        ))
                    }
                    _ => *chunk_kb = Some(kb),
                }
            }
        }
    }
    Ok(Some(profile))
}

pub(super) fn resolve_load(
    scenario: &Scenario,
    field: &str,
    section: &crate::scenario::LoadSection,
    command: &cassandra_stress::StressCommand,
    profile: Option<UserProfile>,
    earlier: &[LoadPlan],
) -> Result<LoadPlan, ScenarioError> {
    let fail = |reason: String| Err(scenario.error(field, reason));
    let operation = match &command.operation {
        Operation::User {
            ops, clustering, ..
        } => {
            let profile = profile
                .as_ref()
                .expect("a user command has its profile read");
            // Inserts and the queries that write are writes; the rest read.
            let weight = |writes: bool| -> f64 {
                ops.iter()
                    .filter(|(name, _)| {
                        let is_write = name == "insert"
                            || profile
                                .query(name)
                                .is_some_and(|q| q.shape == QueryShape::Write);
                        is_write == writes
                    })
                    .map(|(_, weight)| weight)
                    .sum()
            };
            let (write_weight, read_weight) = (weight(true), weight(false));
            if read_weight == 0.0 {
                OpMix::Only(OpKind::Write)
            } else if write_weight == 0.0 {
                OpMix::Only(OpKind::Read)
            } else {
                OpMix::Mixed {
                    write_fraction: write_weight / (write_weight + read_weight),
                    clustering: clustering.clone(),
                }
            }
        }
        Operation::Write => OpMix::Only(OpKind::Write),
        Operation::Read => OpMix::Only(OpKind::Read),
        Operation::Mixed {
            write_weight,
            read_weight,
            clustering,
        } => OpMix::Mixed {
            write_fraction: write_weight / (write_weight + read_weight),
            clustering: clustering.clone(),
        },
    };
    let rate = match command.rate {
        Rate::ClosedLoop {
            threads,
            throttle_per_sec,
        } => RatePlan::ClosedLoop {
            threads,
            limit_ops_per_s: throttle_per_sec.map(|rate| rate as f64),
        },
        Rate::Throttled {
            threads,
            ops_per_sec,
        } => RatePlan::Throttled {
            threads,
            ops_per_s: ops_per_sec as f64,
        },
        Rate::FixedRate {
            ops_per_sec,
            threads,
        } => RatePlan::Fixed {
            ops_per_s: ops_per_sec as f64,
            threads,
        },
        // c-s's own thread search: the first step here, the rest as
        // `super::expand_search` lays them out.
        Rate::Auto { min_threads, .. } => RatePlan::ClosedLoop {
            threads: min_threads,
            limit_ops_per_s: None,
        },
    };
    let search = match command.rate {
        Rate::Auto {
            min_threads,
            stop_at_saturation,
            ..
        } => Some(SearchStep {
            load: section.name.clone(),
            step: 0,
            threads: min_threads,
            stop_at_saturation,
            pause_before: SimDuration::ZERO,
        }),
        _ => None,
    };
    let threads = match command.rate {
        Rate::ClosedLoop { threads, .. } | Rate::Throttled { threads, .. } => Some(threads),
        Rate::FixedRate { threads, .. } => threads,
        // A search's largest step bounds its client threads.
        Rate::Auto {
            min_threads,
            max_threads,
            ..
        } => search_thread_counts(min_threads, max_threads)
            .last()
            .copied(),
    };
    let processes = section.processes.unwrap_or(1);
    if let Some(threads) = threads {
        let total = u64::from(threads) * u64::from(processes);
        if total > crate::scenario::MAX_CLIENT_THREADS_PER_LOAD {
            return fail(format!(
                "{processes} processes of {threads} threads are {total} client threads; a load runs at most {}",
                crate::scenario::MAX_CLIENT_THREADS_PER_LOAD
            ));
        }
    }
    let largest_row = match &profile {
        None => command
            .columns
            .count
            .range()
            .end()
            .saturating_mul(*command.columns.size.range().end()),
        Some(profile) => profile.largest_row_bytes(),
    };
    if largest_row > u64::from(u32::MAX) {
        return fail("rows of more than 4 GiB of column values are not supported".into());
    }
    let columns = match profile {
        None => ColumnPlan::Columns {
            count: command.columns.count,
            size: command.columns.size,
        },
        Some(profile) => {
            let Operation::User { ops, .. } = &command.operation else {
                unreachable!("a profile comes with a user command");
            };
            let mut writes = Vec::new();
            let mut reads = Vec::new();
            for (name, weight) in ops.iter().filter(|(_, weight)| *weight > 0.0) {
                match profile.query(name).map(|query| &query.shape) {
                    None => writes.push((None, *weight)),
                    Some(QueryShape::Write) => writes.push((Some(QueryShape::Write), *weight)),
                    Some(shape) => reads.push((shape.clone(), *weight)),
                }
            }
            ColumnPlan::Profile(Arc::new(ProfileRows {
                profile,
                writes,
                reads,
            }))
        }
    };
    let keys = match &command.population {
        Population::Sequential { first, last, wrap: true } => KeyPlan::Sequential { first: *first, last: *last },
        Population::Sequential { wrap: false, .. } => {
            return fail("`-pop seq=a..b no-wrap` (stop when the keys run out) is not simulated yet; drop `no-wrap` or bound the load with n=".into())
        }
        Population::Distribution(dist) => KeyPlan::Distribution(dist.clone()),
    };
    let loader = match &section.loader {
        Some(choice) => resolve_instance(scenario, &field.replace(".command", ".loader"), choice)?,
        None => instance::by_name(DEFAULT_LOADER)
            .expect("the default loader is in the catalog")
            .clone(),
    };
    let start = match (&section.after, section.start) {
        (Some(_), Some(_)) => {
            return Err(scenario.error(
                &field.replace(".command", ".after"),
                "give `start` or `after`, not both",
            ))
        }
        // A load after a thread search starts after its last step.
        (Some(after), None) => match earlier.iter().rposition(|load| {
            load.name == *after
                || load
                    .search
                    .as_ref()
                    .is_some_and(|search| search.load == *after)
        }) {
            Some(index) => StartPlan::After(index),
            None => {
                return Err(scenario.error(
                    &field.replace(".command", ".after"),
                    format!("`{after}` is not the name of an earlier [[load]]"),
                ))
            }
        },
        (None, start) => {
            StartPlan::At(start.map_or(SimDuration::ZERO, |HumanDuration(start)| start))
        }
    };
    let stop = match command.stop {
        Stop::Count(count) => StopPlan::Count(count),
        Stop::Duration(duration) => StopPlan::Duration(duration),
        Stop::Uncertainty {
            target_stderr,
            min_measurements,
            max_measurements,
        } => StopPlan::Uncertainty {
            target: target_stderr,
            min: min_measurements,
            max: max_measurements,
        },
    };
    Ok(LoadPlan {
        name: section.name.clone(),
        command: section.command.clone(),
        processes,
        rate,
        operation,
        columns,
        keys,
        stop,
        start,
        loader: loader.name.to_string(),
        loader_nic_gbps: loader.nic_gbps,
        tries: command.tries(),
        ignore_errors: command.ignore_errors,
        consistency: engine_consistency(command.consistency),
        routing: match section.routing.as_deref() {
            None | Some("token-aware") => Routing::TokenAware,
            Some("shard-aware") => Routing::ShardAware,
            Some("round-robin") => Routing::RoundRobin,
            Some(other) => {
                return Err(scenario.error(
                    &field.replace(".command", ".routing"),
                    format!(
                    "`{other}` is not a routing policy; accepted: \"token-aware\", \"shard-aware\", \"round-robin\""
                ),
                ))
            }
        },
        search,
        reporting: command.reporting,
        client_timeout: section
            .client_timeout
            .map_or(DEFAULT_CLIENT_TIMEOUT, |HumanDuration(timeout)| timeout),
        client: match section.client.as_deref() {
            None | Some("cassandra-stress") => crate::load::Client::CassandraStress,
            Some("twin-real") => crate::load::Client::TwinReal,
            Some(other) => {
                return Err(scenario.error(
                    &field.replace(".command", ".client"),
                    format!(
                        "`{other}` is not a client the twin models; accepted: \"cassandra-stress\", \"twin-real\""
                    ),
                ))
            }
        },
    })
}

/// c-s's thread search as loads: `first_step` as resolved (at `counts[0]`
/// threads), then one load per further count of `counts`, each started
/// after the one before (`first`: the index the first step takes among the
/// plan's loads; `writes`: the command updates, so c-s sleeps between
/// steps). Each step's name adds its thread count (`read (8 threads)`).
pub(super) fn expand_search(
    first_step: LoadPlan,
    counts: &[u32],
    writes: bool,
    first: usize,
) -> Vec<LoadPlan> {
    let search = first_step
        .search
        .clone()
        .expect("a thread search's first step");
    debug_assert_eq!(
        counts.first(),
        Some(&search.threads),
        "the first step's threads"
    );
    counts
        .iter()
        .enumerate()
        .map(|(step, &threads)| {
            let mut load = first_step.clone();
            load.name = crate::load::search_step_name(&search.load, step as u32, threads);
            load.rate = RatePlan::ClosedLoop {
                threads,
                limit_ops_per_s: None,
            };
            if step > 0 {
                load.start = StartPlan::After(first + step - 1);
            }
            load.search = Some(SearchStep {
                step: step as u32,
                threads,
                pause_before: if step > 0 && writes {
                    SEARCH_PAUSE_FOR_WRITES
                } else {
                    SimDuration::ZERO
                },
                ..search.clone()
            });
            load
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testing::resolved;
    use crate::cluster::RunPlan;

    /// `[[load]] client` names the program running the load: c-s by
    /// default, `twin real`, or an error naming the field and the choices.
    #[test]
    fn a_load_names_its_client() {
        let scenario = |client: &str| {
            format!(
                "name = \"p\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 1\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\n{client}\ncommand = \"cassandra-stress write n=10\"\n"
            )
        };
        let client = |text: &str| resolved(&scenario(text)).map(|plan| plan.loads[0].client);
        assert_eq!(client(""), Ok(crate::load::Client::CassandraStress));
        assert_eq!(
            client("client = \"cassandra-stress\""),
            Ok(crate::load::Client::CassandraStress)
        );
        assert_eq!(
            client("client = \"twin-real\""),
            Ok(crate::load::Client::TwinReal)
        );
        let error = client("client = \"ycsb\"").unwrap_err();
        assert!(
            error.contains("load[0].client")
                && error.contains("`ycsb`")
                && error.contains("twin-real"),
            "{error}"
        );
    }

    /// The plan of a 3-node scenario running `command` in `processes`.
    fn plan(command: &str, processes: u32) -> Result<RunPlan, String> {
        resolved(&format!(
            "name = \"p\"\n[cluster]\npreset = \"scylla-3.0\"\nnodes = 3\ninstance = \"i3.large\"\n[[load]]\nname = \"w\"\ncommand = \"{command}\"\nprocesses = {processes}\n"
        ))
    }

    /// Each count within its own bound can still multiply past what a load
    /// may run: that is one line naming the load's command.
    #[test]
    fn a_load_runs_at_most_a_million_client_threads() {
        assert!(plan("cassandra-stress write n=10 -rate threads=1000", 1000).is_ok());
        let error = plan("cassandra-stress write n=10 -rate threads=1001", 1000).unwrap_err();
        assert!(
            error.contains("load[0].command")
                && error.contains("1000 processes of 1001 threads are 1001000 client threads; a load runs at most 1000000")
                && !error.contains('\n'),
            "{error}"
        );
    }
}
