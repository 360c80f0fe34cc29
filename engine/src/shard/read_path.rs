//! The read path: the row cache, memtable and SSTable lookups (index then
//! data, through Cassandra's page cache where there is one) and the reply.

use super::{unit, BloomPasses, IoPurpose, Request, Shard, TaskPurpose};
use crate::action::{
    Action, CpuTask, CpuWork, IoClass, IoKind, Operation, SchedulingGroup, WHOLE_PARTITION,
};
use crate::cache::page_cache::PageCache;
use crate::cache::row_cache::RowCache;
use crate::cache::{page_cache, row_cache};
use crate::cells::{ReadResult, RowVersion};
use crate::read;
use units::SimTime;

/// Marks an Index file's generation in page ids (a Data file's has it
/// clear): 2^23, the top bit of [`page_cache::page_id`]'s 24-bit field.
const INDEX_FILE_BIT: u64 = 1 << 23;

impl Shard {
    /// The bytes read `read` takes of a partition of `row_bytes` in one
    /// SSTable: all of it, or the slice its `LIMIT` or clustering
    /// restriction selects.
    pub(super) fn sliced(&self, read: u32, row_bytes: u64) -> u64 {
        match self.reads.request(read).operation {
            Operation::Read { limit_bytes, .. } => {
                let sliced = row_bytes.min(u64::from(limit_bytes));
                debug_assert!(sliced <= row_bytes);
                sliced
            }
            Operation::Write { .. } => unreachable!("a read's slot holds a read"),
        }
    }

    /// One SSTable's row of read `read` is in memory (from disk or the page
    /// cache): decode it.
    pub(super) fn parse_data(
        &mut self,
        read: u32,
        row_bytes: u64,
        version: ReadResult,
        from_device: bool,
    ) {
        let task = self.new_task(TaskPurpose::DataParsed { read, version });
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Query,
            work: CpuWork::DataParse {
                row_bytes,
                decompress_bytes: self.config.compression_chunk_bytes.unwrap_or(0),
                from_device,
            },
        }));
    }

    /// One SSTable's index page of read `read` is in memory (from the
    /// device or the page cache): parse it.
    pub(super) fn parse_index(&mut self, lookup: IoPurpose, from_device: bool) {
        let IoPurpose::ReadIndex {
            read,
            row_bytes,
            version,
            generation,
        } = lookup
        else {
            unreachable!("an index lookup");
        };
        let task = self.new_task(TaskPurpose::IndexParsed {
            read,
            row_bytes,
            version,
            generation,
        });
        self.actions.push_back(Action::RunCpu(CpuTask {
            id: task,
            group: SchedulingGroup::Query,
            work: CpuWork::IndexParse {
                bytes: self.config.sstable_format.index_parsed_bytes(row_bytes),
                from_device,
            },
        }));
    }

    /// One SSTable's part of read `read` is decoded: answer once every part
    /// is.
    pub(super) fn read_data_done(&mut self, now: SimTime, read: u32, version: ReadResult) {
        if let Some(pending) = self.reads.part_done(read, version) {
            self.reply_read(now, pending.request, pending.found);
        }
    }

    /// Builds the OS page cache on first use (the first lookup, or warming
    /// the caches): its volume model spreads the reads over the SSTable
    /// data the shard holds by then.
    pub(super) fn ensure_page_cache(&mut self) {
        let Some(setup) = self.config.page_cache.as_ref() else {
            return;
        };
        if self.page_cache.is_none() {
            let data_bytes: u64 = self.sstables.iter().map(|s| s.data_bytes).sum();
            let key_rows = (setup.key_rows * self.config.key_ownership_fraction).max(1.0);
            self.page_cache = Some(match (&setup.popularity, self.config.data_mode) {
                (Some(curve), false) => {
                    PageCache::volume(setup.config, curve, key_rows, data_bytes.max(1))
                        .unwrap_or_else(|reason| panic!("invalid page cache: {reason}"))
                }
                _ => PageCache::data(setup.config),
            });
        }
    }

    /// Volume mode: fills the row cache and the page cache to their steady
    /// state for the data the shard holds now (`[data] cache = "warm"`: a
    /// run measured long after its caches filled). Call after the preload.
    /// Returns false if a cache could not be warmed (data mode).
    pub fn warm_caches(&mut self) -> bool {
        self.resize_row_cache();
        self.ensure_page_cache();
        let rows = self.row_cache.as_mut().is_none_or(RowCache::warm);
        let pages = self.page_cache.as_mut().is_none_or(PageCache::warm);
        rows && pages
    }

    /// Cassandra: whether the OS page cache holds the pages of `bytes` read
    /// `read` needs from SSTable `generation`: `None` if it does, else the
    /// bytes the miss reads from the device, which it brings into the
    /// cache ([`page_cache::PageCacheConfig::miss_read_bytes`]: read-ahead
    /// included). Without a page cache every read goes to the device.
    pub(super) fn page_cache_miss(
        &mut self,
        read: u32,
        generation: u64,
        bytes: u64,
    ) -> Option<u64> {
        let Some(config) = self.config.page_cache.as_ref().map(|s| s.config) else {
            return Some(bytes);
        };
        let Operation::Read { key, .. } = self.reads.request(read).operation else {
            unreachable!("a read's lookup");
        };
        self.ensure_page_cache();
        let draw = unit(&mut self.draws.page_cache);
        // Data mode names the page by SSTable and key (each row its own
        // page: neighbours sharing a page are left out).
        let page_bytes = config.page_bytes.max(1);
        let page = page_cache::page_id(
            generation & 0xFF_FFFF,
            (key & ((1 << 40) - 1)) * page_bytes,
            page_bytes,
        );
        let cache = self.page_cache.as_mut().expect("built above");
        if cache.lookup(page, draw) {
            return None;
        }
        let read_bytes = config.miss_read_bytes(bytes);
        debug_assert!(read_bytes >= bytes, "a miss reads at least what was asked");
        for _ in 0..read_bytes.div_ceil(page_bytes).max(1) {
            cache.populate(page);
        }
        Some(read_bytes)
    }

    /// Looks the key up in the memtables and sends an index read to every
    /// SSTable whose bloom filter passes; replies at once if none does.
    pub(super) fn execute_read(
        &mut self,
        now: SimTime,
        request: Request,
        cached: bool,
        bloom: Option<BloomPasses>,
    ) {
        let Operation::Read { key, .. } = request.operation else {
            unreachable!("a read task carries a read");
        };
        let ownership = self.config.key_ownership_fraction;
        // Data mode: every memtable is consulted (an older memtable may
        // hold an older version, and the newest wins). Volume mode: what
        // the shard's writes gave it, the same on every replica that
        // applied them; its memtables and SSTables decide only the cost.
        let found = if self.config.data_mode {
            self.memtables_version(key)
        } else {
            let placement = &self.config.placement;
            let range = placement.range_of(crate::placement::key_token(key));
            let share = placement.range_fraction(range) / f64::from(placement.shards_per_node());
            self.population.version(key, range, share)
        };
        let read_slot = self.reads.open(request, found);
        let mut lookups = self.reads.take_lookups();
        // The filters as worked out when the read was planned, unless the
        // SSTables changed since.
        let planned = bloom
            .filter(|bloom| bloom.epoch == self.sstables_epoch)
            .map(|bloom| bloom.mask);
        lookups.extend(
            self.sstables
                .iter()
                .enumerate()
                .filter(|&(position, sstable)| match planned {
                    Some(mask) => mask >> position & 1 == 1,
                    None => read::bloom_filter_passes(sstable, key, ownership),
                })
                .map(|(_, sstable)| IoPurpose::ReadIndex {
                    read: read_slot,
                    row_bytes: sstable.data_bytes / sstable.rows.max(1),
                    version: read::sstable_version(sstable, key),
                    generation: sstable.generation,
                }),
        );
        if cached {
            // The cache holds the merged row, coherent with the memtables
            // and SSTables (Scylla updates cached rows as memtables flush):
            // the same answer, no I/O.
            let found = lookups
                .iter()
                .filter_map(|lookup| match lookup {
                    IoPurpose::ReadIndex { version, .. } => *version,
                    _ => None,
                })
                .max()
                .max(self.reads.found(read_slot));
            let pending = self.reads.close(read_slot);
            self.reads.put_lookups(lookups);
            self.reply_read(now, pending.request, found);
            return;
        }
        if lookups.is_empty() {
            let pending = self.reads.close(read_slot);
            self.reads.put_lookups(lookups);
            self.reply_read(now, pending.request, pending.found);
            return;
        }
        self.reads.expect_parts(read_slot, lookups.len() as u32);
        let index_cached = self
            .config
            .page_cache
            .as_ref()
            .is_some_and(|setup| setup.index_pages);
        for lookup in lookups.drain(..) {
            let IoPurpose::ReadIndex {
                row_bytes,
                generation,
                ..
            } = lookup
            else {
                unreachable!("a read's lookups are index reads");
            };
            let bytes = self.config.sstable_format.index_read_bytes(row_bytes);
            // The Index file's pages are their own file's: a generation
            // of their own in the page ids.
            debug_assert!(
                generation < INDEX_FILE_BIT,
                "generation {generation} collides with the Index file's bit"
            );
            let miss = if index_cached {
                self.page_cache_miss(read_slot, generation | INDEX_FILE_BIT, bytes)
            } else {
                Some(bytes)
            };
            match miss {
                None => self.parse_index(lookup, false),
                Some(read_bytes) => {
                    self.submit_io(IoKind::Read, read_bytes, IoClass::Query, lookup)
                }
            }
        }
        self.reads.put_lookups(lookups);
    }

    pub(super) fn reply_read(&mut self, now: SimTime, request: Request, result: ReadResult) {
        self.reads.answered();
        let Operation::Read { key, limit_bytes } = request.operation else {
            unreachable!("a read's reply");
        };
        // The answer: the version found, carrying the bytes the read
        // selected when it names them (a profile's query of a wide
        // partition: the rows merged from every fragment), else the
        // version's own (one row, the newest write).
        let result = match result {
            Some(version) if limit_bytes != WHOLE_PARTITION => Some(RowVersion {
                value_bytes: limit_bytes,
                ..version
            }),
            other => other,
        };
        // A read that went to the SSTables populates the cache with what
        // it found (a hit was counted already; populating it is a no-op).
        if let (Some(cache), Some(version)) = (&mut self.row_cache, result) {
            cache.populate(key, 8 + u64::from(version.value_bytes));
        }
        self.respond_read(now, request.origin, result);
    }

    /// Whether the row cache holds `key` (false without a cache).
    pub(super) fn row_cache_lookup(&mut self, key: u64) -> bool {
        let Some(cache) = self.row_cache.as_mut() else {
            return false;
        };
        let hit = cache.lookup(key, unit(&mut self.draws.row_cache));
        self.cache_lookups.0 += u64::from(hit);
        self.cache_lookups.1 += 1;
        hit
    }

    /// Scylla's cache takes the shard memory the memtables and the
    /// SSTables' in-memory components leave.
    pub(super) fn resize_row_cache(&mut self) {
        if !self
            .config
            .row_cache
            .as_ref()
            .is_some_and(|setup| setup.takes_free_memory)
        {
            return;
        }
        let other: u64 = self
            .sstables
            .iter()
            .map(|sstable| sstable.memory_bytes(&self.config.sstable_format))
            .sum();
        let capacity = row_cache::scylla_capacity_bytes(
            self.config.memory_bytes,
            self.write.dirty_bytes(),
            other,
        );
        if let Some(cache) = self.row_cache.as_mut() {
            cache.set_capacity_bytes(capacity);
        }
    }
}
