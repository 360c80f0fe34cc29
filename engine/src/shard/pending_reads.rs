//! The reads a shard runs as a replica while their SSTable parts are
//! under way: each read's request, the newest version found so far, and
//! how many parts (an index then a data read per SSTable whose bloom
//! filter passed) have yet to answer. A read answers once every part has
//! ([`PendingReads::part_done`]); one that needs no SSTable answers at
//! once and never waits here.

use slab::Slab;

use super::{IoPurpose, Request};
use crate::action::Operation;
use crate::cells::ReadResult;

/// A read waiting for its SSTable parts.
#[derive(Clone, Copy, Debug)]
pub(super) struct PendingRead {
    pub(super) request: Request,
    /// Parts still to answer (0 only while the read is being planned).
    outstanding: u32,
    /// The newest version found so far.
    pub(super) found: ReadResult,
}

/// A shard's reads in flight, and the reads it has answered.
#[derive(Debug, Default)]
pub(super) struct PendingReads {
    reads: Slab<PendingRead>,
    /// A read's SSTable lookups while it is being sent to the disk, kept
    /// between reads so a read allocates nothing.
    lookups: Vec<IoPurpose>,
    /// Reads answered since the shard started (earlier lives included).
    completed: u64,
}

impl PendingReads {
    /// Opens a read of `request` that has found `found` so far (in the
    /// memtables); its slot names it in its parts' tasks and I/Os.
    pub(super) fn open(&mut self, request: Request, found: ReadResult) -> u32 {
        debug_assert!(matches!(request.operation, Operation::Read { .. }));
        let slot = self.reads.insert(PendingRead {
            request,
            outstanding: 0,
            found,
        });
        u32::try_from(slot).expect("fewer than 2^32 reads in flight")
    }

    /// Read `slot`'s request.
    pub(super) fn request(&self, slot: u32) -> &Request {
        &self.reads[slot as usize].request
    }

    /// What read `slot` has found so far.
    pub(super) fn found(&self, slot: u32) -> ReadResult {
        self.reads[slot as usize].found
    }

    /// Read `slot` waits for `parts` SSTable parts.
    pub(super) fn expect_parts(&mut self, slot: u32, parts: u32) {
        assert!(parts > 0, "a read waits for no part");
        let read = &mut self.reads[slot as usize];
        debug_assert_eq!(read.outstanding, 0, "a read's parts counted twice");
        read.outstanding = parts;
    }

    /// Read `slot` answers without waiting (a cache hit, or no SSTable to
    /// read): it closes.
    pub(super) fn close(&mut self, slot: u32) -> PendingRead {
        let read = self.reads.remove(slot as usize);
        debug_assert_eq!(read.outstanding, 0, "a read closed with parts out");
        read
    }

    /// One SSTable part of read `slot` found `version`: the read, once
    /// every part has answered.
    pub(super) fn part_done(&mut self, slot: u32, version: ReadResult) -> Option<PendingRead> {
        let read = &mut self.reads[slot as usize];
        assert!(read.outstanding > 0, "a part of read {slot} answered twice");
        read.outstanding -= 1;
        read.found = read.found.max(version);
        (read.outstanding == 0).then(|| self.reads.remove(slot as usize))
    }

    /// The scratch list of a read's lookups (empty), to give back with
    /// [`PendingReads::put_lookups`].
    pub(super) fn take_lookups(&mut self) -> Vec<IoPurpose> {
        let mut lookups = std::mem::take(&mut self.lookups);
        lookups.clear();
        lookups
    }

    pub(super) fn put_lookups(&mut self, lookups: Vec<IoPurpose>) {
        self.lookups = lookups;
    }

    /// A read was answered.
    pub(super) fn answered(&mut self) {
        self.completed += 1;
    }

    /// Reads answered since the start, earlier lives included.
    pub(super) fn completed(&self) -> u64 {
        self.completed
    }

    /// A restarted shard carries its earlier lives' count.
    pub(super) fn carry(&mut self, completed: u64) {
        assert!(
            self.reads.is_empty() && self.completed == 0,
            "a count carried into reads in use"
        );
        self.completed = completed;
    }

    /// What must hold between inputs: every read here waits for at least
    /// one part (one that needs none answered in the input that opened
    /// it) and is a read.
    pub(super) fn check_invariants(&self) {
        for (slot, read) in &self.reads {
            assert!(read.outstanding > 0, "read {slot} waits for nothing");
            assert!(
                matches!(read.request.operation, Operation::Read { .. }),
                "a write among the reads"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{RequestId, WHOLE_PARTITION};
    use crate::cells::RowVersion;
    use crate::shard::Origin;

    fn read() -> Request {
        Request {
            origin: Origin::Client(RequestId(1)),
            operation: Operation::Read {
                key: 7,
                limit_bytes: WHOLE_PARTITION,
            },
        }
    }

    fn version(timestamp: u64) -> ReadResult {
        Some(RowVersion {
            timestamp,
            value_bytes: 10,
        })
    }

    #[test]
    fn a_read_answers_with_the_newest_version_once_every_part_has() {
        let mut reads = PendingReads::default();
        let slot = reads.open(read(), version(2));
        reads.expect_parts(slot, 2);
        reads.check_invariants();
        assert!(reads.part_done(slot, version(5)).is_none());
        let done = reads
            .part_done(slot, version(3))
            .expect("both parts answered");
        assert_eq!(done.found, version(5));
        reads.check_invariants();
    }

    #[test]
    #[should_panic(expected = "waits for nothing")]
    fn a_read_left_waiting_for_no_part_is_caught() {
        let mut reads = PendingReads::default();
        reads.open(read(), None);
        reads.check_invariants();
    }
}
