//! A shard streams a range to the same shard of another node, in both
//! modes: everything it holds of the range arrives and is in the
//! receiver's table (as SSTables), whatever the rows' sizes do to the
//! batches' rounding.

use std::sync::Arc;

use units::SimTime;

use super::{PreloadState, Shard};
use crate::config::ShardConfig;
use crate::placement::{Placement, ShardAddress};
use crate::ring::Replication;
use crate::streaming::StreamMode;
use crate::testing::{self, Outcome, Verdict};
use crate::token_set::TokenSet;

const MIB: u64 = 1024 * 1024;

/// Two nodes of one shard each on an evenly spaced ring, RF 1.
fn pair(mode: StreamMode, data_mode: bool) -> Vec<Shard> {
    let placement = Placement::evenly_spaced(2, 1, &Replication::simple(1));
    (0..2)
        .map(|node| {
            let config = ShardConfig {
                address: ShardAddress { node, shard: 0 },
                placement: placement.clone(),
                key_ownership_fraction: 0.5,
                data_mode,
                stream_mode: mode,
                ..ShardConfig::scylla_defaults(64 * MIB)
            };
            Shard::new(config, SimTime::ZERO)
        })
        .collect()
}

/// Node 0's range on the evenly spaced ring: `(end of node 1's, end of node 0's]`.
fn node_0_range(shards: &[Shard]) -> Arc<[(i64, i64)]> {
    let map = shards[0].config().placement.replica_map();
    let index = (0..map.range_count())
        .find(|&index| map.range_replicas(index) == [0])
        .expect("node 0 owns a range");
    Arc::from(vec![map.range_bounds(index)])
}

fn stream(shards: &mut [Shard]) -> Outcome {
    let ranges = node_0_range(shards);
    shards[0].start_stream_out(SimTime::ZERO, 7, 1, ranges);
    let mut outcome = Outcome::default();
    testing::run_cluster(shards, SimTime::ZERO, &mut outcome, |_, _| Verdict::Carry);
    outcome
}

#[test]
fn a_preloaded_range_arrives_whole_in_both_modes() {
    for mode in [StreamMode::Rpc, StreamMode::Stream] {
        let mut shards = pair(mode, false);
        // 10,007 rows of 1,013 bytes: no batch divides them evenly.
        shards[0].preload_table(10_007, 1_013, (1, 20_014), PreloadState::Compacted);
        let held: u64 = shards[0].sstables().iter().map(|s| s.data_bytes).sum();
        let outcome = stream(&mut shards);
        let [(plan, rows, bytes)] = outcome.received[..] else {
            panic!("{mode:?}: one plan received: {:?}", outcome.received);
        };
        assert_eq!(plan, 7);
        assert_eq!(rows, 10_007, "{mode:?}");
        assert_eq!(bytes, held, "{mode:?}: every byte the sender held");
        // One SSTable (stream mode) or several streaming-memtable flushes,
        // which the receiver then compacts: each holds only slices of the
        // streamed range, so no compaction takes two of them for overlapping
        // samples of the keys, and every row and byte is kept.
        let landed: u64 = shards[1].sstables().iter().map(|s| s.data_bytes).sum();
        let landed_rows: u64 = shards[1].sstables().iter().map(|s| s.rows).sum();
        assert_eq!(landed, held, "{mode:?}: in the receiver's SSTables");
        assert_eq!(landed_rows, 10_007, "{mode:?}");
        let range = TokenSet::of_ring_ranges(&node_0_range(&shards));
        for sstable in shards[1].sstables() {
            let set = sstable
                .token_set
                .as_ref()
                .expect("a streamed SSTable has a token set");
            assert_eq!(
                set.overlap_width(&range),
                set.width(),
                "{mode:?}: inside the range"
            );
        }
        assert_eq!(shards[0].streamed_bytes().0, held);
        assert_eq!(shards[1].streamed_bytes().1, held);
    }
}

#[test]
fn data_mode_streams_the_newest_version_of_every_row_of_the_range() {
    use crate::action::{ClientRequest, Operation, RequestId};
    use crate::consistency::ConsistencyLevel;
    for mode in [StreamMode::Rpc, StreamMode::Stream] {
        let mut shards = pair(mode, true);
        let placement = shards[0].config().placement.clone();
        let mine: Vec<u64> = (0..)
            .filter(|&key| placement.owner(key).node == 0)
            .take(300)
            .collect();
        let mut outcome = Outcome::default();
        for (id, &key) in mine.iter().enumerate() {
            for timestamp in [1, 2] {
                shards[0].handle_client_request(
                    SimTime::ZERO,
                    ClientRequest {
                        id: RequestId(id as u64 * 2 + timestamp),
                        operation: Operation::Write {
                            rows: 1,
                            key,
                            value_bytes: 100 + timestamp as u32,
                            timestamp,
                        },
                        consistency: ConsistencyLevel::One,
                    },
                );
                testing::run_cluster(&mut shards, SimTime::ZERO, &mut outcome, |_, _| {
                    Verdict::Carry
                });
            }
        }
        let outcome = stream(&mut shards);
        assert_eq!(outcome.received.len(), 1, "{mode:?}");
        let cells: Vec<_> = shards[1]
            .sstables()
            .iter()
            .flat_map(|sstable| sstable.cells.iter().flat_map(|c| c.cells().to_vec()))
            .collect();
        assert_eq!(cells.len(), mine.len(), "{mode:?}: every row once");
        for (key, version) in cells {
            assert!(mine.contains(&key));
            assert_eq!(
                version.timestamp, 2,
                "{mode:?}: the newest version of {key}"
            );
        }
    }
}

/// Half of a range's rows and bytes round apart (1,013 bytes a row become
/// 1,012.9995 on average): the batches must still add up to every byte.
/// Cutting each batch at whole bytes per row once left a sender with
/// half a megabyte frozen and unsent and its reads stopped, for good.
#[test]
fn a_share_of_a_range_whose_rows_and_bytes_round_apart_still_ends() {
    let mut shards = pair(StreamMode::Stream, false);
    shards[0].preload_table(2_000_003, 1_013, (1, 4_000_006), PreloadState::Compacted);
    let (start, end) = node_0_range(&shards)[0];
    let half = start.wrapping_add((end.wrapping_sub(start) as u64 / 2) as i64);
    shards[0].start_stream_out(SimTime::ZERO, 3, 1, Arc::from(vec![(start, half)]));
    let mut outcome = Outcome::default();
    testing::run_cluster(&mut shards, SimTime::ZERO, &mut outcome, |_, _| {
        Verdict::Carry
    });
    let [(3, rows, bytes)] = outcome.received[..] else {
        panic!("the plan ends: {:?}", outcome.received);
    };
    assert_eq!(rows, 1_000_002);
    assert_eq!(bytes, shards[0].streamed_bytes().0);
}
