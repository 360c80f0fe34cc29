//! A shard's crash and restart: what survives on its disk, and the
//! commitlog replay a restarted shard runs before it serves.
//!
//! A crash (the node loses power or its process is killed) takes
//! everything in memory: memtables, the row cache, requests in flight, the
//! commitlog's and the hint logs' buffers, its CPU tasks and queued I/O.
//! What stays is what reached the device ([`Durable`]): the SSTables (a
//! flush or compaction in progress leaves only a temporary file, which
//! startup deletes; its inputs are still there), the commitlog's durable
//! entries ([`crate::replay`]) and the hint segments written out. The
//! observer's counters carry on across lives.
//!
//! A restart (`main.cc` @3.0: "replaying commit log", then "flushing
//! memtables", then "removing old commitlog segments") reads the live
//! segments back in commitlog-buffer chunks with the commitlog reader's
//! read-ahead, applies each chunk's entries to memtables (a CPU task per
//! chunk; memtables flush as they fill, and replay waits while dirty memory
//! is over its limits), then flushes what it replayed. Only then does the
//! node join gossip and, once gossip settles, take clients
//! ([`crate::Node`]).
//!
//! Each life of a shard is an *incarnation*: its task and I/O ids carry
//! it, so a completion of the crashed process that the driver still
//! delivers is recognised and dropped rather than taken for a new task.

use super::{IoPurpose, Shard, TaskPurpose};
use crate::action::{Action, CpuTask, CpuWork, IoClass, IoKind, SchedulingGroup};
use crate::cells::RowVersion;
use crate::replay::Replay;
use units::SimTime;

/// What a crash destroyed that had been acknowledged (data mode), for
/// checkers that must tell a write the crash lost from one the cluster
/// lost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashLoss {
    /// Hints the shard held in memory or was still writing, and those its
    /// open writes would have written at their timeout, with their
    /// destination nodes (`bytes` 0 for the latter).
    pub hints: Vec<(u32, crate::hints::Hint)>,
    /// Rows whose commitlog entries never reached the disk (periodic
    /// mode acknowledges them from the buffer).
    pub rows: Vec<(u64, RowVersion)>,
}

/// Commitlog reads in flight during replay (the commitlog reader's
/// `read_ahead`, as hint replay's).
const REPLAY_READ_AHEAD: u32 = 10;
const _: () = assert!(
    REPLAY_READ_AHEAD > 0,
    "a replay reads ahead at least one chunk"
);

/// What survives a shard's crash.
#[derive(Debug)]
pub(super) struct Durable {
    sstables: Vec<crate::sstable::SSTable>,
    next_sstable_generation: u64,
    replay: Replay,
    hints: Option<crate::hints::HintsManager>,
    /// Volume mode: the keys the shard's writes gave it (its flushed and
    /// replayed rows; a torn tail's handful is not told apart).
    population: crate::read::Population,
    coordinator: crate::coordinator::Coordinator,
    /// The observer's counters.
    counters: Counters,
    /// The checkers' record of hints replayed away from a pending node
    /// (`Shard::hints_redirected_from_pending`), kept across lives.
    redirected_from_pending: Vec<(u64, u32, u64)>,
    incarnation: u64,
}

/// Counters that carry on across a shard's lives.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counters {
    /// The write path's.
    write: super::write_path::WriteCounters,
    reads_completed: u64,
    /// The compaction manager's.
    compaction: crate::compaction::manager::CompactionCounters,
    heat_balanced_reads: u64,
    /// Row cache (hits, misses) of earlier lives.
    pub(super) cache: (u64, u64),
    /// Bytes streamed out to peers and taken in from them.
    streamed: (u64, u64),
}

/// Where a shard stands in its life.
#[derive(Debug, Default)]
pub(super) enum Life {
    /// Serving.
    #[default]
    Running,
    /// Crashed, not yet restarted: what it will find on its disk.
    Down(Box<Durable>),
    /// Restarted and replaying its commitlog.
    Replaying(Box<Replaying>),
}

/// A replay in progress.
#[derive(Debug)]
pub(super) struct Replaying {
    replay: Replay,
    /// Log bytes asked of the disk so far.
    requested: u64,
    reads_in_flight: u32,
    /// Entries applied so far.
    applied: u64,
    /// Chunks read and not yet applied.
    applying: u32,
}

impl Replaying {
    /// Entries within the first `position` bytes of the replay (the
    /// entries spread evenly over the bytes; exact at the ends).
    fn entries_before(&self, position: u64) -> u64 {
        debug_assert!(
            position <= self.replay.bytes,
            "position {position} past the log"
        );
        if self.replay.bytes == 0 {
            return self.replay.entries;
        }
        (u128::from(self.replay.entries) * u128::from(position) / u128::from(self.replay.bytes))
            as u64
    }
}

impl Shard {
    /// Whether the shard is down (crashed and not restarted).
    pub fn is_down(&self) -> bool {
        matches!(self.life, Life::Down(_))
    }

    /// Whether the shard is replaying its commitlog after a restart.
    pub fn is_replaying(&self) -> bool {
        matches!(self.life, Life::Replaying(_))
    }

    /// The shard's life so far: 0 until its first crash, then one more at
    /// each.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// The shard crashes at `now`: it keeps what is on its disk and
    /// nothing else, and does nothing until [`Shard::restart`]. Its driver
    /// hands it no request or message meanwhile (its node is gone from the
    /// network); completions of CPU tasks and I/Os started before the crash
    /// may still arrive and are dropped, as their ids carry the old life.
    /// Returns what it had acknowledged and lost.
    pub fn crash(&mut self, now: SimTime) -> CrashLoss {
        assert!(!self.is_down(), "a shard crashes once before it restarts");
        let mut hints = self
            .handoff
            .as_ref()
            .map_or_else(Vec::new, |handoff| handoff.manager.lost_in_crash());
        if self.handoff.is_some() {
            // Writes answered and waiting for their last replicas would
            // have hinted those at their timeout (a hint's own replay is
            // still in its segment on disk).
            for (client, node, mutation) in self.coordinator.answered_unacknowledged() {
                if client.0 & super::HINT_REPLAY == 0 {
                    hints.push((
                        node,
                        crate::hints::Hint {
                            key: mutation.key,
                            timestamp: mutation.timestamp,
                            value_bytes: mutation.value_bytes,
                            rows: mutation.rows,
                            bytes: 0,
                        },
                    ));
                }
            }
        }
        let loss = CrashLoss {
            hints,
            rows: self.write.lost_rows(),
        };
        let replay = match std::mem::take(&mut self.life) {
            // Crashed again while replaying: the old segments are deleted
            // only after the replay's flush, so all of them are still
            // there (rows flushed already are applied again, harmlessly).
            Life::Replaying(replaying) => replaying.replay,
            _ => self.write.durable_replay(),
        };
        let durable = Durable {
            sstables: std::mem::take(&mut self.sstables),
            next_sstable_generation: self.next_sstable_generation,
            replay,
            hints: self
                .handoff
                .as_ref()
                .map(|handoff| handoff.manager.after_crash()),
            population: std::mem::take(&mut self.population),
            coordinator: self.coordinator.after_crash(),
            counters: self.counters(now),
            redirected_from_pending: self.hints_redirected_from_pending().to_vec(),
            incarnation: self.incarnation + 1,
        };
        *self = Shard::reborn(self.config.clone(), now, &durable);
        // Nothing runs in a dead process.
        self.actions.clear();
        self.timers = crate::timer::TimerTable::default();
        self.next_timeout = None;
        self.life = Life::Down(Box::new(durable));
        loss
    }

    /// The crashed shard starts again at `now`: it replays its commitlog
    /// and flushes what it replayed, then emits [`Action::Replayed`].
    pub fn restart(&mut self, now: SimTime) {
        let Life::Down(durable) = std::mem::take(&mut self.life) else {
            panic!("only a crashed shard restarts");
        };
        *self = Shard::reborn(self.config.clone(), now, &durable);
        self.life = Life::Replaying(Box::new(Replaying {
            replay: durable.replay,
            requested: 0,
            reads_in_flight: 0,
            applied: 0,
            applying: 0,
        }));
        self.replay_step(now);
        self.input_done();
    }

    /// A fresh process over `durable`: no memtable, cold caches, its
    /// SSTables, hint segments and counters as they were.
    fn reborn(config: crate::config::ShardConfig, now: SimTime, durable: &Durable) -> Shard {
        let mut shard = Shard::new(config, now);
        shard.incarnation = durable.incarnation;
        for sstable in &durable.sstables {
            shard.compaction.add_sstable(sstable);
        }
        shard.sstables = durable.sstables.clone();
        shard.sstables_epoch = durable.incarnation << 32;
        shard.next_sstable_generation = durable.next_sstable_generation;
        shard.population = durable.population.clone();
        // `durable` holds them as the crash left them already.
        shard.coordinator = durable.coordinator.clone();
        if let (Some(handoff), Some(hints)) = (shard.handoff.as_mut(), &durable.hints) {
            handoff.manager = hints.clone();
            handoff.redirected_from_pending = durable.redirected_from_pending.clone();
        }
        let counters = durable.counters;
        shard.write.carry(counters.write);
        shard.reads.carry(counters.reads_completed);
        shard.compaction.carry(counters.compaction);
        shard.heat_balanced_reads = counters.heat_balanced_reads;
        shard.streams.carry(counters.streamed);
        shard.carried = counters;
        shard
    }

    /// The counters as they stand at `now`, for the next life.
    fn counters(&self, now: SimTime) -> Counters {
        Counters {
            write: self.write.counters(now),
            reads_completed: self.reads.completed(),
            compaction: self.compaction.counters(),
            heat_balanced_reads: self.heat_balanced_reads,
            cache: self.cache_counts(),
            streamed: self.streamed_bytes(),
        }
    }

    /// Moves the replay on: reads what the read-ahead and dirty memory
    /// allow; once every entry is applied, flushes; once that is done,
    /// the shard serves.
    pub(super) fn replay_step(&mut self, now: SimTime) {
        let chunk = self.config.commitlog_buffer_bytes;
        let over_limits = self.write.over_dirty_limits();
        let Life::Replaying(replaying) = &mut self.life else {
            return;
        };
        let mut reads = Vec::new();
        while !over_limits
            && replaying.reads_in_flight < REPLAY_READ_AHEAD
            && replaying.requested < replaying.replay.bytes
        {
            let from = replaying.requested;
            let to = (from + chunk).min(replaying.replay.bytes);
            replaying.requested = to;
            replaying.reads_in_flight += 1;
            reads.push((from, to));
        }
        debug_assert!(
            replaying.reads_in_flight <= REPLAY_READ_AHEAD
                && replaying.requested <= replaying.replay.bytes,
            "a replay read past its read-ahead or its log"
        );
        let read_all = replaying.requested == replaying.replay.bytes
            && replaying.reads_in_flight == 0
            && replaying.applying == 0;
        let (entries, bytes) = (replaying.replay.entries, replaying.replay.bytes);
        for (from, to) in reads {
            self.submit_io(
                IoKind::Read,
                to - from,
                IoClass::Commitlog,
                IoPurpose::ReplayRead { from, to },
            );
        }
        if !read_all {
            return;
        }
        // Everything is applied: flush it ("replaying commit log -
        // flushing memtables"), then serve.
        if !self.write.is_empty_active() {
            self.seal_active();
            self.maybe_start_flush(now);
        }
        if self.write.all_flushed() {
            // The replayed segments are deleted; the fresh log's remain.
            self.life = Life::Running;
            self.actions.push_back(Action::Replayed { entries, bytes });
        }
    }

    /// Log bytes `from..to` of the replay were read back: their entries
    /// are decoded and applied by a CPU task.
    pub(super) fn replay_read(&mut self, now: SimTime, from: u64, to: u64) {
        let Life::Replaying(replaying) = &mut self.life else {
            unreachable!("a replay read outside a replay");
        };
        debug_assert!(
            from < to && to <= replaying.requested,
            "a replay read not asked for"
        );
        replaying.reads_in_flight -= 1;
        replaying.applying += 1;
        let entries = replaying.entries_before(to) - replaying.entries_before(from);
        let task = self.new_task(TaskPurpose::ReplayApply { from, to });
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Statement,
            work: CpuWork::CommitlogReplay {
                entries: entries.min(u64::from(u32::MAX)) as u32,
                bytes: to - from,
            },
        }));
        self.replay_step(now);
    }

    /// The entries of log bytes `from..to` go into the active memtable.
    pub(super) fn replay_apply(&mut self, now: SimTime, from: u64, to: u64) {
        let Life::Replaying(replaying) = &mut self.life else {
            unreachable!("a replay apply outside a replay");
        };
        debug_assert!(replaying.applying > 0, "a replay apply not read");
        replaying.applying -= 1;
        let (first, last) = (replaying.entries_before(from), replaying.entries_before(to));
        replaying.applied += last - first;
        let replay = &replaying.replay;
        let rows: Vec<(u64, u64, RowVersion)> = if replay.rows.is_empty() {
            // Volume mode: rows of the mean size over the key range.
            let row_bytes = replay.row_bytes / replay.entries.max(1);
            let span = replay.last_key.saturating_sub(replay.first_key);
            (first..last)
                .map(|entry| {
                    let key = replay.first_key
                        + (u128::from(span) * u128::from(entry) / u128::from(replay.entries.max(1)))
                            as u64;
                    let version = RowVersion {
                        timestamp: 0,
                        value_bytes: row_bytes.saturating_sub(8) as u32,
                    };
                    (key, row_bytes, version)
                })
                .collect()
        } else {
            replay.rows[first as usize..last as usize]
                .iter()
                .map(|&(key, version)| (key, 8 + u64::from(version.value_bytes), version))
                .collect()
        };
        self.write.apply_replayed(rows);
        self.maybe_start_flush(now);
        self.replay_step(now);
    }
}
