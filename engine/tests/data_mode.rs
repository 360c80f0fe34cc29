//! Data mode against a reference model: whatever the interleaving of
//! writes, reads, and the completions of the flushes and compactions they
//! cause, a shard's reads return what an in-memory `BTreeMap` of the
//! acknowledged writes says they should.
//!
//! The driver holds every CPU task and I/O the shard asks for and completes
//! them in an order proptest chooses, so memtable seals, flushes, compaction
//! merges and reads overlap in every way the shard allows. In batch
//! commitlog mode the shard may also crash at any point and restart: what
//! it acknowledged survives the replay, and the completions of the crashed
//! process, still delivered, change nothing.

use std::collections::BTreeMap;

use engine::{
    Action, ClientRequest, ConsistencyLevel, Operation, ReplyStatus, RequestId, Shard, ShardConfig,
    SimTime,
};
use proptest::prelude::*;

/// A shard with a tiny dirty-memory budget, its commitlog in `sync` mode:
/// ~40 writes of 1 KiB fill a memtable, so a case of a few hundred
/// operations flushes several times and compacts.
fn small_data_mode_shard_with(sync: engine::commitlog::SyncMode) -> Shard {
    let mut config = ShardConfig::scylla_defaults(16 * 1024 * 1024);
    config.commitlog_sync = sync;
    config.dirty_memory_fraction = 0.008;
    config.throttle_fraction = 0.004;
    config.data_mode = true;
    config.compaction.stcs_options_mut().min_threshold = 2;
    Shard::new(config, SimTime::ZERO)
}

#[derive(Clone, Debug)]
enum Step {
    Write {
        key: u64,
        value_bytes: u32,
    },
    Read {
        key: u64,
    },
    /// Complete the pending completion at this position (modulo their count).
    Complete(usize),
    /// Complete everything pending.
    Drain,
    /// The shard crashes and restarts; it replays before it takes requests.
    Crash,
}

/// [`step`], with crashes.
fn step_with_crashes() -> impl Strategy<Value = Step> {
    prop_oneof![
        20 => step(),
        1 => Just(Step::Crash),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..40u64, 900..1100u32).prop_map(|(key, value_bytes)| Step::Write { key, value_bytes }),
        3 => (0..48u64).prop_map(|key| Step::Read { key }),
        6 => any::<usize>().prop_map(Step::Complete),
        1 => Just(Step::Drain),
    ]
}

enum Pending {
    Cpu(engine::TaskId),
    Io(engine::IoId),
}

/// What the test knows of one outstanding request.
enum Outstanding {
    Write {
        key: u64,
        version: (u64, u32),
    },
    /// A read of `key`; `floor` is the newest version acknowledged when it
    /// was issued.
    Read {
        key: u64,
        floor: Option<(u64, u32)>,
    },
}

struct Harness {
    shard: Shard,
    now: SimTime,
    pending: Vec<Pending>,
    outstanding: BTreeMap<u64, Outstanding>,
    /// Newest acknowledged version per key: the reference model.
    acknowledged: BTreeMap<u64, (u64, u32)>,
    /// Every version ever written per key.
    written: BTreeMap<u64, Vec<(u64, u32)>>,
    next_id: u64,
    next_timestamp: u64,
}

impl Harness {
    fn new() -> Harness {
        Harness::with(engine::commitlog::SyncMode::Periodic)
    }

    fn with(sync: engine::commitlog::SyncMode) -> Harness {
        Harness {
            shard: small_data_mode_shard_with(sync),
            now: SimTime::from_nanos(1),
            pending: Vec::new(),
            outstanding: BTreeMap::new(),
            acknowledged: BTreeMap::new(),
            written: BTreeMap::new(),
            next_id: 0,
            next_timestamp: 1,
        }
    }

    fn tick(&mut self) {
        self.now += engine::SimDuration::from_micros(10);
        if self.shard.poll_timeout().is_some_and(|due| due <= self.now) {
            self.shard.handle_timeout(self.now);
        }
    }

    fn collect(&mut self) -> Result<(), TestCaseError> {
        while let Some(action) = self.shard.poll_action() {
            match action {
                Action::RunCpu(task) => self.pending.push(Pending::Cpu(task.id)),
                Action::SubmitIo(io) => self.pending.push(Pending::Io(io.id)),
                Action::SetShares { .. } | Action::Replayed { .. } => {}
                Action::Send { .. } | Action::StreamReceived { .. } => {
                    unreachable!("one shard owns every key, and nothing streams")
                }
                Action::Reply(reply) => {
                    let request = self
                        .outstanding
                        .remove(&reply.id.0)
                        .expect("a reply answers an outstanding request");
                    self.check_reply(request, reply.status)?;
                }
            }
        }
        Ok(())
    }

    fn check_reply(
        &mut self,
        request: Outstanding,
        status: ReplyStatus,
    ) -> Result<(), TestCaseError> {
        match request {
            Outstanding::Write { key, version } => {
                prop_assert_eq!(status, ReplyStatus::Written);
                let newest = self.acknowledged.entry(key).or_insert(version);
                *newest = (*newest).max(version);
            }
            Outstanding::Read { key, floor } => {
                let returned = match status {
                    ReplyStatus::Found {
                        value_bytes,
                        timestamp,
                    } => Some((timestamp, value_bytes)),
                    ReplyStatus::NotFound => None,
                    other => return Err(TestCaseError::fail(format!("read got {other:?}"))),
                };
                // At least as new as what was acknowledged when the read
                // began, and something that was actually written.
                prop_assert!(
                    returned >= floor,
                    "key {key}: {returned:?} older than {floor:?}"
                );
                if let Some(version) = returned {
                    prop_assert!(
                        self.written
                            .get(&key)
                            .is_some_and(|all| all.contains(&version)),
                        "key {key}: {version:?} was never written"
                    );
                }
            }
        }
        Ok(())
    }

    fn submit(&mut self, operation: Operation) -> Result<(), TestCaseError> {
        let id = self.next_id;
        self.next_id += 1;
        let outstanding = match operation {
            Operation::Write {
                key,
                value_bytes,
                timestamp,
                ..
            } => {
                let version = (timestamp, value_bytes);
                self.written.entry(key).or_default().push(version);
                Outstanding::Write { key, version }
            }
            Operation::Read { key, .. } => Outstanding::Read {
                key,
                floor: self.acknowledged.get(&key).copied(),
            },
        };
        self.outstanding.insert(id, outstanding);
        self.shard.handle_client_request(
            self.now,
            ClientRequest {
                id: RequestId(id),
                operation,
                consistency: ConsistencyLevel::One,
            },
        );
        self.collect()
    }

    fn complete(&mut self, position: usize) -> Result<(), TestCaseError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let index = position % self.pending.len();
        match self.pending.swap_remove(index) {
            Pending::Cpu(task) => self.shard.handle_cpu_done(self.now, task),
            Pending::Io(io) => self.shard.handle_io_done(self.now, io),
        }
        self.collect()
    }

    fn drain(&mut self) -> Result<(), TestCaseError> {
        while !self.pending.is_empty() {
            self.complete(0)?;
            self.tick();
            self.collect()?;
        }
        Ok(())
    }

    fn run(&mut self, step: Step) -> Result<(), TestCaseError> {
        self.tick();
        match step {
            Step::Write { key, value_bytes } => {
                let timestamp = self.next_timestamp;
                self.next_timestamp += 1;
                self.submit(Operation::Write {
                    rows: 1,
                    key,
                    value_bytes,
                    timestamp,
                })
            }
            Step::Read { key } => self.submit(Operation::read(key)),
            Step::Complete(position) => self.complete(position),
            Step::Drain => self.drain(),
            Step::Crash => self.crash(),
        }
    }

    /// The shard crashes and restarts: its requests in flight are never
    /// answered (the client's time out), and it replays its commitlog. The
    /// crashed process's completions stay pending and are delivered later,
    /// in the order proptest picks, mixed with the new life's.
    fn crash(&mut self) -> Result<(), TestCaseError> {
        let _ = self.shard.crash(self.now);
        self.outstanding.clear();
        self.now += engine::SimDuration::from_secs(1);
        self.shard.restart(self.now);
        self.collect()?;
        // Clients reach it again only once it has replayed.
        let mut position = 0;
        while self.shard.is_replaying() {
            prop_assert!(!self.pending.is_empty(), "a replay waits on nothing");
            position += 7;
            self.complete(position)?;
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reads_agree_with_a_btreemap_under_any_interleaving(
        steps in prop::collection::vec(step(), 50..600)
    ) {
        let mut harness = Harness::new();
        for step in steps {
            harness.run(step)?;
        }
        harness.drain()?;
        prop_assert!(harness.outstanding.is_empty(), "every request is answered");
        // Quiescent: every key reads exactly the model's newest version.
        for key in 0..48 {
            harness.submit(Operation::read(key))?;
            harness.drain()?;
        }
        prop_assert!(harness.outstanding.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn acknowledged_writes_survive_crashes_in_batch_mode(
        steps in prop::collection::vec(step_with_crashes(), 50..600)
    ) {
        let mut harness = Harness::with(engine::commitlog::SyncMode::Batch);
        for step in steps {
            harness.run(step)?;
        }
        harness.drain()?;
        for key in 0..48 {
            harness.submit(Operation::read(key))?;
            harness.drain()?;
        }
        prop_assert!(harness.outstanding.is_empty());
    }
}

/// The same check on a fixed long run, asserting that flushes and
/// compactions really happened (so the property above is exercised).
#[test]
fn a_long_run_flushes_compacts_and_still_agrees() {
    let mut harness = Harness::new();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let step = match next() % 10 {
            0..=3 => Step::Write {
                key: next() % 200,
                value_bytes: 900 + (next() % 200) as u32,
            },
            4..=5 => Step::Read { key: next() % 220 },
            _ => Step::Complete(next() as usize),
        };
        harness.run(step).unwrap();
    }
    harness.drain().unwrap();
    let stats = harness.shard.stats();
    assert!(stats.flushes_completed >= 20, "{stats:?}");
    assert!(stats.compactions_completed >= 5, "{stats:?}");
    for key in 0..220 {
        harness.submit(Operation::read(key)).unwrap();
        harness.drain().unwrap();
    }
    // Reads after quiescence return exactly the newest acknowledged
    // version (checked by `check_reply`'s floor and by this count).
    assert!(harness.outstanding.is_empty());
    assert_eq!(harness.acknowledged.len(), 200);
}
