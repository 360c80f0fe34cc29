//! The engine's vocabulary with its driver: requests in, actions out.
//!
//! Identifiers ([`RequestId`], [`IoId`], [`TaskId`]) are opaque tokens: the
//! driver hands a request id in and gets it back in the reply; the engine
//! hands I/O and task ids out and gets them back on completion.

use std::sync::Arc;

use crate::cells::Cell;
use crate::cells::ReadResult;
use crate::consistency::ConsistencyLevel;

/// A client request's id, chosen by the driver and echoed in the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// An I/O's id, chosen by the engine and echoed by the driver on completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IoId(pub u64);

/// A CPU task's id, chosen by the engine and echoed on completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub u64);

/// What a client asks of the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Write rows of one partition: `key` with `value_bytes` of column
    /// data in `rows` rows.
    Write {
        /// The partition key (c-s seeds keys by number).
        key: u64,
        /// Bytes of column values in the rows written.
        value_bytes: u32,
        /// The write's timestamp, microseconds (client-assigned, as the
        /// Java driver c-s uses assigns them); the newest wins on reads.
        timestamp: u64,
        /// Rows written (1 for c-s's predefined schema; a user profile's
        /// insert writes `select` of a partition's rows): each carries the
        /// memtable's and the SSTable's per-row footprint.
        rows: u32,
    },
    /// Read one partition by key, or the rows of it a query selects.
    Read {
        /// The partition key.
        key: u64,
        /// Bytes of the partition the read selects: [`WHOLE_PARTITION`]
        /// (all of it, whatever it holds: one row, its newest version), or
        /// the rows a profile's query selects (what its `LIMIT` or
        /// clustering restriction leaves, at the table's mean row size).
        /// Each SSTable holding the partition is read for at most this
        /// much, and a found answer carries it.
        limit_bytes: u32,
    },
}

/// [`Operation::Read::limit_bytes`] of a read of whole partitions.
pub const WHOLE_PARTITION: u32 = u32::MAX;

impl Operation {
    /// A read of the whole partition `key`.
    pub fn read(key: u64) -> Operation {
        Operation::Read {
            key,
            limit_bytes: WHOLE_PARTITION,
        }
    }

    /// A write of one row of `value_bytes` to partition `key`.
    pub fn write(key: u64, value_bytes: u32, timestamp: u64) -> Operation {
        Operation::Write {
            key,
            value_bytes,
            timestamp,
            rows: 1,
        }
    }
}

/// A request from a client, as the coordinator receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientRequest {
    /// Echoed in the reply.
    pub id: RequestId,
    /// What to do.
    pub operation: Operation,
    /// How many replicas must answer.
    pub consistency: ConsistencyLevel,
}

/// A batch of writes to several partitions, as one client request (a
/// cassandra-stress user profile's insert with `partitions` above one):
/// its coordinator writes every part and answers once each has met the
/// consistency level ([`crate::shard`]'s batch module).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchRequest {
    /// Echoed in the reply.
    pub id: RequestId,
    /// One write per partition ([`Operation::Write`]), at least one.
    pub parts: Arc<[Operation]>,
    /// A LOGGED batch: a batch of several partitions goes to the batchlog
    /// of up to two other nodes first. UNLOGGED: straight to the replicas.
    pub logged: bool,
    /// How many replicas of each part must answer.
    pub consistency: ConsistencyLevel,
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyStatus {
    /// A write: it is in the commitlog buffer and the memtable.
    Written,
    /// A read found the row; `value_bytes` of it go back to the client.
    Found {
        /// Bytes of column values returned.
        value_bytes: u32,
        /// Timestamp of the version returned (0 in volume mode, which keeps
        /// no per-key timestamps).
        timestamp: u64,
    },
    /// A read found no row for the key.
    NotFound,
    /// Not enough replicas answered before the coordinator's timeout.
    Timeout,
    /// The coordinator sees fewer replicas up than the consistency level
    /// needs, and asks none (`unavailable_exception`).
    Unavailable,
}

/// The node's answer to a client request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientReply {
    /// The request this answers.
    pub id: RequestId,
    /// How it ended.
    pub status: ReplyStatus,
}

/// Direction of an I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoKind {
    /// Read from the device.
    Read,
    /// Write to the device.
    Write,
}

/// The I/O priority class an I/O is submitted in (Seastar's priority classes,
/// scylla-mechanisms.md section 1.5); the models' I/O scheduler gives each
/// class its shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoClass {
    /// Commitlog buffer writes.
    Commitlog,
    /// Memtable flushes writing SSTables.
    MemtableFlush,
    /// Compaction reads and writes.
    Compaction,
    /// Foreground reads.
    Query,
    /// Streaming reads and writes, and reading hints back for replay
    /// (`streaming_read`, `streaming_write`: 200 shares in Scylla).
    Streaming,
}

impl IoClass {
    /// Every class, in [`IoClass::index`] order.
    pub const ALL: [IoClass; 5] = [
        IoClass::Commitlog,
        IoClass::MemtableFlush,
        IoClass::Compaction,
        IoClass::Query,
        IoClass::Streaming,
    ];

    /// This class's position in [`IoClass::ALL`].
    pub fn index(self) -> usize {
        debug_assert_eq!(
            IoClass::ALL[self as usize],
            self,
            "ALL lists the classes in index order"
        );
        self as usize
    }

    /// The class's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            IoClass::Commitlog => "commitlog",
            IoClass::MemtableFlush => "memtable_flush",
            IoClass::Compaction => "compaction",
            IoClass::Query => "query",
            IoClass::Streaming => "streaming",
        }
    }
}

/// An I/O the engine asks the driver to perform on the node's data device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    /// Echo this in [`crate::Shard::handle_io_done`].
    pub id: IoId,
    /// Read or write.
    pub kind: IoKind,
    /// Size of the I/O in bytes.
    pub bytes: u64,
    /// Priority class.
    pub class: IoClass,
}

/// The CPU scheduling group a task runs in (Scylla's groups, section 1.7 of
/// scylla-mechanisms.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SchedulingGroup {
    /// Foreground request processing (`statement`, `query` before 3.0).
    Statement,
    /// Memtable flushes.
    Memtable,
    /// Commitlog.
    Commitlog,
    /// Compaction.
    Compaction,
    /// A replica's part of a read: cache and memtable lookups, SSTable
    /// index and data parsing, the digest of its answer
    /// (`column_family::query`). Scylla 2.2 runs it in a `query` group of
    /// its own; from 2.3 it is part of the statement group.
    Query,
    /// Streaming and hint replay (Scylla's `streaming` group, 200 shares).
    Streaming,
}

/// A named piece of CPU work. The engine says what it does; a cost table in
/// `models` says how long that takes on a given runtime and version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuWork {
    /// Parse and execute a CQL write: request decode, mutation build,
    /// commitlog append and memtable insert of `mutation_bytes`.
    WriteRequest {
        /// Serialized mutation size.
        mutation_bytes: u64,
    },
    /// Parse and execute a CQL read: request decode, row-cache and memtable
    /// lookups, and the bloom filters of the SSTables the read may consult.
    ReadRequest {
        /// SSTables whose filters the read checks and that it may read.
        sstables: u32,
    },
    /// Parse an SSTable index page a read brought in from disk: find the
    /// key's entry and the data position.
    IndexParse {
        /// Bytes of index read.
        bytes: u64,
        /// Whether the page came from the device (false: Cassandra's OS
        /// page cache had it); the kernel's work for a miss is priced
        /// apart (`models::cost::CostTable::page_miss_ns`).
        from_device: bool,
    },
    /// Parse the row a read brought in from an SSTable's data (from disk or,
    /// for Cassandra, the OS page cache): decompress its chunk, decode the
    /// row, merge it into the result and populate the row cache with it.
    DataParse {
        /// Bytes of row decoded.
        row_bytes: u64,
        /// Bytes of compressed chunk decompressed (0 if the table is
        /// uncompressed).
        decompress_bytes: u64,
        /// Whether the row came from the device (false: the OS page
        /// cache had it).
        from_device: bool,
    },
    /// Take an internode message off the connection: the RPC layer's
    /// deserialization and dispatch to its handler on this shard.
    ReceiveMessage {
        /// Bytes of the message on the wire.
        bytes: u64,
    },
    /// Take a message another shard of this node passed over (Seastar's
    /// cross-shard queues: `invoke_on`, `submit_to`) and run its handler.
    CrossShardMessage,
    /// Coordinate a request for a key this shard does not own: decode it,
    /// find the replica, send it on, and later relay the answer.
    Coordinate,
    /// Merge `bytes` of compaction input (decode, merge by key and
    /// timestamp, encode the output).
    CompactionMerge {
        /// Input bytes merged by this step.
        bytes: u64,
    },
    /// Serialize `rows` rows (`bytes` of SSTable data) into SSTable format
    /// during a flush.
    FlushSerialize {
        /// Bytes written by this step.
        bytes: u64,
        /// Rows (partitions) in them.
        rows: u64,
    },
    /// Hash a read result for a digest read (md5 before Scylla 2.2,
    /// xxHash64 from 2.2): on a replica asked for a digest, and on the
    /// coordinator for the data it compares with the digests.
    Digest {
        /// Bytes hashed.
        bytes: u32,
    },
    /// Serialize a write a replica missed into the coordinator's hint log.
    HintWrite {
        /// Bytes of the hint.
        bytes: u64,
    },
    /// Decode a hint read back from its log and send it to its replica.
    HintSend {
        /// Bytes of the hint.
        bytes: u64,
    },
    /// Replay commitlog entries read back after a crash: decode each
    /// mutation and apply it to the memtable (a restarting shard).
    CommitlogReplay {
        /// Entries replayed by this step.
        entries: u32,
        /// Their bytes in the log.
        bytes: u64,
    },
    /// A streaming sender's reader: decode `bytes` read from the table's
    /// SSTables, merge them by key and freeze them into fragments to send.
    StreamRead {
        /// Bytes read and frozen by this step.
        bytes: u64,
        /// Rows (partitions) in them.
        rows: u64,
    },
    /// A streaming receiver before 3.0: apply `rows` streamed partitions
    /// of `bytes` in all to the streaming memtable (no commitlog).
    StreamApply {
        /// Partitions applied.
        rows: u32,
        /// Their bytes.
        bytes: u64,
    },
}

impl CpuWork {
    /// How many kinds of work there are ([`CpuWork::index`] is below it).
    pub const KINDS: usize = 15;

    /// The kind's position, `0..KINDS`, for per-kind tallies.
    pub fn index(&self) -> usize {
        let index = match self {
            CpuWork::WriteRequest { .. } => 0,
            CpuWork::ReadRequest { .. } => 1,
            CpuWork::IndexParse { .. } => 2,
            CpuWork::DataParse { .. } => 3,
            CpuWork::ReceiveMessage { .. } => 4,
            CpuWork::CrossShardMessage => 5,
            CpuWork::Coordinate => 6,
            CpuWork::CompactionMerge { .. } => 7,
            CpuWork::FlushSerialize { .. } => 8,
            CpuWork::Digest { .. } => 9,
            CpuWork::HintWrite { .. } => 10,
            CpuWork::HintSend { .. } => 11,
            CpuWork::CommitlogReplay { .. } => 12,
            CpuWork::StreamRead { .. } => 13,
            CpuWork::StreamApply { .. } => 14,
        };
        debug_assert!(index < CpuWork::KINDS, "every kind's index is below KINDS");
        index
    }

    /// The name of the kind at `index` in reports.
    pub fn kind_name(index: usize) -> &'static str {
        debug_assert!(index < CpuWork::KINDS, "kind {index} of {}", CpuWork::KINDS);
        [
            "write_request",
            "read_request",
            "index_parse",
            "data_parse",
            "receive_message",
            "cross_shard_message",
            "coordinate",
            "compaction_merge",
            "flush_serialize",
            "digest",
            "hint_write",
            "hint_send",
            "commitlog_replay",
            "stream_read",
            "stream_apply",
        ][index]
    }
}

/// A CPU task the engine asks the driver to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTask {
    /// Echo this in [`crate::Shard::handle_cpu_done`].
    pub id: TaskId,
    /// Scheduling group the task runs in.
    pub group: SchedulingGroup,
    /// What the task does.
    pub work: CpuWork,
}

/// A message between shards (of one node or of two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A coordinator asks the replica to apply a write.
    WriteRequest {
        /// The coordinator's id for the request, echoed in the response.
        id: u64,
        /// The partition key.
        key: u64,
        /// Bytes of column values.
        value_bytes: u32,
        /// The write's timestamp (a read repair writes the newest version
        /// back with its own).
        timestamp: u64,
        /// Rows written.
        rows: u32,
    },
    /// The replica applied the write (`MUTATION_DONE`).
    WriteResponse {
        /// The coordinator's id.
        id: u64,
        /// The coordinator's shard: the message lands on a connection's
        /// shard of the coordinator's node, which passes it there.
        shard: u32,
        /// The replica's node, which the coordinator counts the
        /// acknowledgement against (the message's sender may be a shard
        /// relaying it).
        replica: u32,
    },
    /// A batch's coordinator stores the whole batch in this node's batchlog
    /// (`system.batchlog`), or removes it once every part is written.
    BatchlogWrite {
        /// The coordinator's id, echoed in a [`Message::WriteResponse`]
        /// (a removal is not answered).
        id: u64,
        /// Bytes of the batchlog mutation: the batch's parts, or a
        /// removal's tombstone.
        bytes: u32,
        /// The removal, sent without waiting once the batch is written.
        remove: bool,
    },
    /// A coordinator asks the replica for a row, or for its digest.
    ReadRequest {
        /// The coordinator's id.
        id: u64,
        /// The partition key.
        key: u64,
        /// Only the digest of the result is wanted.
        digest: bool,
        /// The read's slice ([`Operation::Read::limit_bytes`]).
        limit_bytes: u32,
    },
    /// The replica's answer: the row (for a data request) and the digest
    /// of what it found.
    ReadResponse {
        /// The coordinator's id.
        id: u64,
        /// The result, for a data request; `None` for a digest request.
        data: Option<ReadResult>,
        /// Digest of the result.
        digest: u64,
        /// The replica's published cache hit rate, in 1/10000 (heat-weighted
        /// balancing; `u16::MAX` if it has none).
        cache_hit_rate: u16,
    },
    /// Streamed data of plan `plan` (`crate::streaming`): one partition's
    /// `STREAM_MUTATION` (RPC mode) or a batch of fragments on a stream.
    StreamData {
        /// The stream plan.
        plan: u32,
        /// Partitions carried.
        rows: u32,
        /// Their bytes.
        bytes: u32,
        /// Data mode: the rows themselves.
        cells: Option<Arc<[Cell]>>,
    },
    /// The receiver took `count` of plan `plan`'s messages in: the RPC
    /// answers (RPC mode), or a stream's credit.
    StreamAck {
        /// The stream plan.
        plan: u32,
        /// Messages answered.
        count: u32,
    },
    /// A sender shard opens its part of plan `plan`.
    StreamStart {
        /// The stream plan.
        plan: u32,
        /// Smallest and largest key index it will send (volume mode: the
        /// sender's key extent; `None` if it has nothing to send).
        keys: Option<(u64, u64)>,
        /// The plan's ranges, as ring positions (both sides know them from
        /// the plan: nothing on the wire).
        token_set: crate::token_set::TokenSet,
        /// Rows it will send, in ring order over `token_set`.
        rows: u64,
    },
    /// The sender has sent all of plan `plan`'s data from this shard.
    StreamEnd {
        /// The stream plan.
        plan: u32,
        /// `StreamData` messages it sent (the receiver ends once it has
        /// taken all in, whatever order the network kept).
        messages: u32,
        /// Volume mode: the writes the sender counted on the plan's ranges
        /// (`read::Population`), which the receiver now answers reads from.
        population: Option<StreamedPopulation>,
    },
}

/// A sender's counts of the writes to the ranges it streams, carried by
/// [`Message::StreamEnd`] (equal only to itself).
#[derive(Clone, Debug)]
pub struct StreamedPopulation(pub Arc<crate::read::Population>);

impl PartialEq for StreamedPopulation {
    fn eq(&self, other: &StreamedPopulation) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StreamedPopulation {}

impl Message {
    /// Whether range streaming sent it (`crate::streaming`).
    pub fn is_stream(&self) -> bool {
        matches!(
            self,
            Message::StreamStart { .. }
                | Message::StreamData { .. }
                | Message::StreamAck { .. }
                | Message::StreamEnd { .. }
        )
    }

    /// The same message under the coordinator's id `id` (a relaying shard
    /// passes a request on, and its answer back, under another id).
    pub(crate) fn with_id(self, id: u64) -> Message {
        let mut message = self;
        match &mut message {
            Message::WriteRequest { id: own, .. }
            | Message::WriteResponse { id: own, .. }
            | Message::BatchlogWrite { id: own, .. }
            | Message::ReadRequest { id: own, .. }
            | Message::ReadResponse { id: own, .. } => *own = id,
            Message::StreamStart { .. }
            | Message::StreamData { .. }
            | Message::StreamAck { .. }
            | Message::StreamEnd { .. } => {
                unreachable!("stream messages are not relayed")
            }
        }
        message
    }

    /// Bytes on the wire: a frame of `MESSAGE_HEADER_BYTES` plus what the
    /// message carries.
    pub fn wire_bytes(&self) -> u64 {
        MESSAGE_HEADER_BYTES
            + match *self {
                Message::WriteRequest { value_bytes, .. } => 16 + u64::from(value_bytes),
                Message::ReadRequest { .. } => 8,
                Message::ReadResponse {
                    data: Some(result), ..
                } => 16 + result.map_or(0, |version| u64::from(version.value_bytes)),
                Message::ReadResponse { data: None, .. } => DIGEST_BYTES,
                Message::WriteResponse { .. } => 0,
                Message::BatchlogWrite { bytes, .. } => 16 + u64::from(bytes),
                Message::StreamData { bytes, .. } => 8 + u64::from(bytes),
                Message::StreamStart { .. } => 24,
                Message::StreamAck { .. } => 8,
                Message::StreamEnd { .. } => 8,
            }
    }
}

/// Frame, verb and header bytes of an internode message (Seastar RPC); an
/// estimate.
pub const MESSAGE_HEADER_BYTES: u64 = 64;

/// Bytes of a digest on the wire (an MD5-sized 16-byte hash; Scylla kept
/// the 16-byte field when it moved to xxHash64).
pub const DIGEST_BYTES: u64 = 16;

// A digest response is smaller than the frame it travels in; a digest is
// 128 bits.
const _: () = assert!(DIGEST_BYTES < MESSAGE_HEADER_BYTES && DIGEST_BYTES * 8 == 128);

/// What the engine asks its driver to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Perform an I/O and report its completion.
    SubmitIo(IoRequest),
    /// Run a CPU task and report its completion.
    RunCpu(CpuTask),
    /// Send a reply to a client.
    Reply(ClientReply),
    /// Send a message to another shard.
    Send {
        /// The destination.
        to: crate::placement::ShardAddress,
        /// What to send.
        message: Message,
    },
    /// Give a scheduling group new CPU shares (the backlog controllers).
    SetShares {
        /// The group.
        group: SchedulingGroup,
        /// Its new shares.
        shares: f64,
    },
    /// A restarted shard has replayed its commitlog and flushed what it
    /// replayed: it is ready to serve ([`crate::Node::shard_replayed`]).
    Replayed {
        /// Commitlog entries it applied.
        entries: u64,
        /// Bytes of log it read back.
        bytes: u64,
    },
    /// This shard, a stream plan's receiver, has taken in and written all
    /// the plan's data from its peer shard: its SSTables are in the table.
    StreamReceived {
        /// The stream plan.
        plan: u32,
        /// Partitions received.
        rows: u64,
        /// Their bytes.
        bytes: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_work_has_its_own_index_and_name() {
        let work = [
            CpuWork::WriteRequest { mutation_bytes: 1 },
            CpuWork::ReadRequest { sstables: 1 },
            CpuWork::IndexParse {
                bytes: 1,
                from_device: true,
            },
            CpuWork::DataParse {
                row_bytes: 1,
                decompress_bytes: 0,
                from_device: true,
            },
            CpuWork::ReceiveMessage { bytes: 1 },
            CpuWork::CrossShardMessage,
            CpuWork::Coordinate,
            CpuWork::CompactionMerge { bytes: 1 },
            CpuWork::FlushSerialize { bytes: 1, rows: 1 },
            CpuWork::Digest { bytes: 1 },
            CpuWork::HintWrite { bytes: 1 },
            CpuWork::HintSend { bytes: 1 },
            CpuWork::CommitlogReplay {
                entries: 1,
                bytes: 1,
            },
            CpuWork::StreamRead { bytes: 1, rows: 1 },
            CpuWork::StreamApply { rows: 1, bytes: 1 },
        ];
        let mut indexes: Vec<usize> = work.iter().map(CpuWork::index).collect();
        indexes.sort_unstable();
        assert_eq!(indexes, (0..CpuWork::KINDS).collect::<Vec<_>>());
        let mut names: Vec<&str> = (0..CpuWork::KINDS).map(CpuWork::kind_name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CpuWork::KINDS);
        for (position, class) in IoClass::ALL.iter().enumerate() {
            assert_eq!(class.index(), position);
        }
    }
}
