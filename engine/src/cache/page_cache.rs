//! The operating system's page cache over SSTable Data files, as Cassandra
//! reads through it: a read whose page is cached costs no disk read.
//!
//! Cassandra 3.11 reads SSTables with buffered or memory-mapped I/O
//! (`disk_access_mode: auto` maps Data and Index files on 64-bit JVMs), so
//! the kernel keeps recently read pages in whatever RAM the JVM and the
//! rest leave free. Scylla opens its files with O_DIRECT and has no page
//! cache; it relies on its row cache alone ([`crate::cache::row_cache`]).
//!
//! What is modelled:
//! - capacity: `RAM - heap - off-heap - OS reserve`
//!   ([`PageCacheConfig::capacity_bytes`]). Cassandra's off-heap memory is
//!   the row cache (OHC), the bloom filters, index summaries and
//!   compression metadata (off-heap since 2.0; `SSTable::memory_bytes`
//!   gives the first two), and the JVM beyond its heap (metaspace, thread
//!   stacks, direct buffers); the caller sums them. The OS reserve is an
//!   estimate: 1 GiB for the kernel and the other processes of a database
//!   host ([`OS_RESERVED_BYTES`]).
//! - the unit cached: a page of [`PageCacheConfig::page_bytes`], 4 KiB by
//!   default; set it to the block device's read-ahead (R5's Cassandra
//!   tuning: 8 KB) to cache what one miss brings in.
//! - replacement: LRU (Linux keeps active and inactive lists, an LRU
//!   approximation that favours pages read twice; left out).
//! - volume mode: the pages' popularity follows from the keys' through
//!   [`HotMass::paged`]: SSTables are sorted by token, a hash, so each page
//!   holds keys drawn at random and a hot key drags its page's cold
//!   neighbours into memory. The cache is then the same IRM/LRU estimate as
//!   the row cache ([`PopularityLru`]: warming from cold, Che's
//!   approximation once full), over pages instead of rows.
//! - data mode: an exact LRU ([`LruBytes`]) over page ids; [`page_id`]
//!   names a page by SSTable generation and offset.
//!
//! Index file pages go through the same cache where the preset maps its
//! index files (`PageCacheSetup::index_pages`: Cassandra 5.0's
//! `disk_access_mode: mmap_index_only`), named by their SSTable's
//! generation with a bit of their own; elsewhere one index read per lookup
//! stays a disk read. Left out: Cassandra's key cache, which skips the
//! index read; pollution by flush and compaction writes and compaction reads, which go
//! through the page cache too; the pages of SSTables deleted by compaction,
//! which age out of the LRU like cold pages instead of being freed at once;
//! filtering by the row cache (the page cache is modelled as seeing every
//! read's key popularity, though rows served by the row cache do not touch
//! their pages).

use crate::cache::row_cache::{CacheStats, HotMass, Insertion, LruBytes, PopularityLru};

/// Bytes in one gibibyte.
const GIB: u64 = 1024 * 1024 * 1024;

/// Memory kept by the kernel and the host's other processes. Estimate.
pub const OS_RESERVED_BYTES: u64 = GIB;

/// The x86 page size, the default unit cached.
pub const PAGE_BYTES: u64 = 4096;

/// Pages an SSTable can have in a [`page_id`] (2^40 pages of 4 KiB is
/// 4 PiB).
const PAGE_INDEX_BITS: u32 = 40;

// A page id packs a 24-bit generation above a 40-bit page index, and pages
// are whole device pages.
const _: () = assert!(PAGE_INDEX_BITS + 24 == 64);
const _: () = assert!(PAGE_BYTES.is_power_of_two());
const _: () = assert!(OS_RESERVED_BYTES.is_multiple_of(PAGE_BYTES));

/// A page's id in data mode: the SSTable generation in the high 24 bits,
/// the page index (`offset_bytes / page_bytes`) in the low 40.
pub fn page_id(sstable_generation: u64, offset_bytes: u64, page_bytes: u64) -> u64 {
    let index = offset_bytes / page_bytes.max(1);
    debug_assert!(index < 1 << PAGE_INDEX_BITS && sstable_generation < 1 << 24);
    let id = (sstable_generation << PAGE_INDEX_BITS) | (index & ((1 << PAGE_INDEX_BITS) - 1));
    debug_assert_eq!(
        id >> PAGE_INDEX_BITS,
        sstable_generation,
        "the id keeps its SSTable"
    );
    id
}

/// How much memory the page cache gets and what it caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageCacheConfig {
    /// The host's RAM.
    pub ram_bytes: u64,
    /// The JVM heap (`-Xmx`).
    pub heap_bytes: u64,
    /// Off-heap memory: row cache, bloom filters, index summaries,
    /// compression metadata, JVM non-heap (module doc).
    pub off_heap_bytes: u64,
    /// Kept by the kernel and other processes.
    pub os_reserved_bytes: u64,
    /// The unit cached: a page, or the read-ahead one miss brings in.
    pub page_bytes: u64,
    /// What one miss reads from the device and caches, read-ahead included,
    /// where measured on the host ([`PageCacheConfig::miss_read_bytes`]);
    /// 0: a miss reads and caches only the pages asked for.
    pub miss_bytes: u64,
}

impl PageCacheConfig {
    /// Cassandra on a host of `ram_bytes` with a heap of `heap_bytes` and
    /// `off_heap_bytes` off the heap; 4 KiB pages and the OS reserve.
    pub fn cassandra(ram_bytes: u64, heap_bytes: u64, off_heap_bytes: u64) -> PageCacheConfig {
        assert!(
            heap_bytes <= ram_bytes,
            "the heap fits in the machine's memory"
        );
        PageCacheConfig {
            ram_bytes,
            heap_bytes,
            off_heap_bytes,
            os_reserved_bytes: OS_RESERVED_BYTES,
            page_bytes: PAGE_BYTES,
            miss_bytes: 0,
        }
    }

    /// What a miss of a `request_bytes` read reads from the device and
    /// brings into the cache: the request, or the host's measured read
    /// size per miss if larger. The kernel reads ahead of a buffered read
    /// and around a fault in a mapped file, so the neighbouring pages (on
    /// a table sorted by token, other keys) come in with it: on the real
    /// node's machine a read from disk brings in 24 KiB on average where
    /// Cassandra asks for 4-16 (validation/REAL.md, the disk probe).
    pub fn miss_read_bytes(&self, request_bytes: u64) -> u64 {
        debug_assert!(request_bytes > 0, "a read asks for bytes");
        request_bytes.max(self.miss_bytes)
    }

    /// The memory left for cached pages.
    pub fn capacity_bytes(&self) -> u64 {
        let capacity = self
            .ram_bytes
            .saturating_sub(self.heap_bytes)
            .saturating_sub(self.off_heap_bytes)
            .saturating_sub(self.os_reserved_bytes);
        debug_assert!(capacity + self.heap_bytes <= self.ram_bytes || capacity == 0);
        capacity
    }
}

/// Where the pages are kept.
#[derive(Clone, Debug)]
enum PageStore {
    /// Volume mode: estimated from popularity.
    Volume(PopularityLru),
    /// Data mode: the page ids themselves.
    Data(LruBytes),
}

/// A host's page cache over SSTable Data, in volume or data mode, starting
/// cold.
///
/// Call pattern for each Data read of a lookup: [`PageCache::lookup`]; if
/// it misses, submit the disk read and, when it completes,
/// [`PageCache::populate`].
#[derive(Clone, Debug)]
pub struct PageCache {
    config: PageCacheConfig,
    store: PageStore,
    stats: CacheStats,
}

impl PageCache {
    /// Volume mode: `key_rows` keys read with popularity `key_curve`,
    /// stored in `data_bytes` of SSTable Data.
    pub fn volume(
        config: PageCacheConfig,
        key_curve: &HotMass,
        key_rows: f64,
        data_bytes: u64,
    ) -> Result<PageCache, String> {
        let page_bytes = config.page_bytes.max(1);
        let pages = data_bytes.div_ceil(page_bytes).max(1) as f64;
        let curve = key_curve.paged(key_rows / pages);
        let model = PopularityLru::new(&curve, pages, config.capacity_bytes() / page_bytes)?;
        let cache = PageCache {
            config,
            store: PageStore::Volume(model),
            stats: CacheStats::default(),
        };
        cache.check_invariants();
        Ok(cache)
    }

    /// Data mode: an exact LRU of page ids.
    pub fn data(config: PageCacheConfig) -> PageCache {
        let cache = PageCache {
            config,
            store: PageStore::Data(LruBytes::new(config.capacity_bytes())),
            stats: CacheStats::default(),
        };
        cache.check_invariants();
        cache
    }

    /// What must hold: pages have a size; the pages cached fit the
    /// store's capacity (as pages in volume mode, as bytes in data mode);
    /// and the store's own invariants ([`PopularityLru::check_invariants`],
    /// [`LruBytes::check_invariants`]). O(1) beyond the store's.
    pub fn check_invariants(&self) {
        assert!(self.config.page_bytes > 0, "a page has bytes");
        match &self.store {
            PageStore::Volume(model) => {
                assert!(
                    model.items() <= model.capacity_items(),
                    "no more pages than room"
                );
                model.check_invariants();
            }
            PageStore::Data(lru) => {
                assert_eq!(
                    lru.used_bytes(),
                    lru.len() as u64 * self.config.page_bytes,
                    "every cached page takes a page"
                );
                lru.check_invariants();
            }
        }
    }

    /// A read of `page` (data mode: its [`page_id`]; volume mode decides
    /// with `unit_draw`, uniform in `[0, 1)`): true if it is cached and
    /// costs no disk read.
    pub fn lookup(&mut self, page: u64, unit_draw: f64) -> bool {
        debug_assert!(
            (0.0..1.0).contains(&unit_draw),
            "a draw in [0, 1): {unit_draw}"
        );
        let hit = match &mut self.store {
            PageStore::Volume(model) => model.lookup(unit_draw),
            PageStore::Data(lru) => lru.get(page),
        };
        self.stats.lookup(hit)
    }

    /// The disk read of a missed `page` completed: the page is cached as
    /// the most recently used, evicting the least recently used if full.
    pub fn populate(&mut self, page: u64) {
        match &mut self.store {
            PageStore::Volume(model) => match model.insert() {
                Insertion::Added => self.stats.populations += 1,
                Insertion::Replaced => {
                    self.stats.populations += 1;
                    self.stats.evictions += 1;
                }
                Insertion::AlreadyCached | Insertion::NoRoom => {}
            },
            PageStore::Data(lru) => {
                let admission = lru.insert(page, self.config.page_bytes);
                if admission.inserted {
                    self.stats.populations += 1;
                }
                self.stats.evictions += admission.evicted;
                debug_assert!(lru.used_bytes() <= lru.capacity_bytes());
            }
        }
    }

    /// The memory free for pages changed (the row cache or heap was
    /// resized, SSTables' off-heap components grew): evicts to fit.
    pub fn set_capacity_bytes(&mut self, capacity_bytes: u64) {
        let evicted = match &mut self.store {
            PageStore::Volume(model) => {
                model.set_capacity_items(capacity_bytes / self.config.page_bytes.max(1))
            }
            PageStore::Data(lru) => lru.set_capacity_bytes(capacity_bytes),
        };
        self.stats.evictions += evicted;
        debug_assert!(
            self.used_bytes() <= capacity_bytes,
            "a shrink evicts down to capacity"
        );
        if cfg!(debug_assertions) {
            self.check_invariants();
        }
    }

    /// Volume mode: starts warm, filled to its steady state (`[data] cache
    /// = "warm"`). Data mode cannot invent the pages; returns false.
    pub fn warm(&mut self) -> bool {
        match &mut self.store {
            PageStore::Volume(model) => {
                model.warm();
                true
            }
            PageStore::Data(_) => false,
        }
    }

    /// Volume mode: the probability that the next read finds its page.
    /// Data mode: `None`.
    pub fn hit_probability(&self) -> Option<f64> {
        let probability = match &self.store {
            PageStore::Volume(model) => Some(model.hit_probability()),
            PageStore::Data(_) => None,
        };
        debug_assert!(probability.is_none_or(|p| (0.0..=1.0).contains(&p)));
        probability
    }

    /// Volume mode: the popularity model over pages.
    pub fn model(&self) -> Option<&PopularityLru> {
        match &self.store {
            PageStore::Volume(model) => Some(model),
            PageStore::Data(_) => None,
        }
    }

    /// Pages cached.
    pub fn pages(&self) -> u64 {
        match &self.store {
            PageStore::Volume(model) => model.items(),
            PageStore::Data(lru) => lru.len() as u64,
        }
    }

    /// Bytes of cached pages.
    pub fn used_bytes(&self) -> u64 {
        match &self.store {
            PageStore::Volume(model) => model.items() * self.config.page_bytes,
            PageStore::Data(lru) => lru.used_bytes(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &PageCacheConfig {
        &self.config
    }

    /// Activity counters since the cache was made.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::row_cache::{RowCache, RowCacheConfig};
    use crate::read::unit_hash;

    const GIB: u64 = 1 << 30;

    #[test]
    fn capacity_is_what_the_jvm_and_the_os_leave() {
        // R5's Cassandra node: i3.4xlarge (122 GiB), 48 GB heap, 10 GB row
        // cache and 4 GiB of filters and summaries.
        let config = PageCacheConfig::cassandra(122 * GIB, 48 * GIB, 14 * GIB);
        assert_eq!(config.capacity_bytes(), (122 - 48 - 14 - 1) * GIB);
        assert_eq!(
            PageCacheConfig::cassandra(8 * GIB, 8 * GIB, GIB).capacity_bytes(),
            0
        );
        assert_eq!(config.page_bytes, 4096);
    }

    #[test]
    fn data_mode_caches_pages_read() {
        let config = PageCacheConfig {
            ram_bytes: 10 * 4096,
            heap_bytes: 0,
            off_heap_bytes: 0,
            os_reserved_bytes: 6 * 4096,
            page_bytes: 4096,
            miss_bytes: 0,
        };
        let mut cache = PageCache::data(config);
        let (a, b) = (page_id(3, 100, 4096), page_id(3, 5000, 4096));
        assert_eq!(a, 3 << 40);
        assert_eq!(b, (3 << 40) | 1);
        assert_eq!(page_id(3, 4095, 4096), a);
        assert!(!cache.lookup(a, 0.0));
        cache.populate(a);
        assert!(cache.lookup(a, 0.99));
        for index in 0..10 {
            cache.populate(page_id(4, index * 4096, 4096));
        }
        // Four pages fit: the oldest went first, `a` among them.
        assert_eq!(cache.pages(), 4);
        assert_eq!(cache.used_bytes(), 4 * 4096);
        assert!(!cache.lookup(a, 0.0));
        assert!(cache.lookup(page_id(4, 9 * 4096, 4096), 0.0));
        assert_eq!(cache.stats().evictions, 7);
        cache.set_capacity_bytes(4096);
        assert_eq!(cache.pages(), 1);
        assert_eq!(cache.hit_probability(), None);
    }

    #[test]
    fn uniform_keys_hit_the_cached_share_of_the_data() {
        // 1 GiB of data, room for 256 MiB: a quarter of the pages.
        let data_bytes = GIB;
        let config = PageCacheConfig {
            ram_bytes: 256 << 20,
            heap_bytes: 0,
            off_heap_bytes: 0,
            os_reserved_bytes: 0,
            page_bytes: 4096,
            miss_bytes: 0,
        };
        let rows = (data_bytes / 310) as f64;
        let mut cache = PageCache::volume(config, &HotMass::uniform(), rows, data_bytes).unwrap();
        assert_eq!(cache.hit_probability(), Some(0.0));
        for i in 0..2_000_000u64 {
            if !cache.lookup(0, unit_hash(i, 11)) {
                cache.populate(0);
            }
        }
        assert_eq!(cache.pages(), 65_536);
        assert_eq!(cache.used_bytes(), 256 << 20);
        let hit = cache.hit_probability().unwrap();
        assert!((hit - 0.25).abs() < 1e-6, "{hit}");
    }

    #[test]
    fn hot_keys_cost_a_page_each() {
        // 1% of the keys take 90% of the reads. A row cache spends an entry
        // per hot row; a page cache of the same bytes a page per hot row.
        let curve = HotMass::new(vec![(0.0, 0.0), (0.01, 0.9), (1.0, 1.0)]).unwrap();
        let rows = 100_000_000.0;
        let row_bytes = 310u64;
        let data_bytes = 100_000_000 * row_bytes;
        let budget = 4 * GIB;
        let config = PageCacheConfig {
            ram_bytes: budget,
            heap_bytes: 0,
            off_heap_bytes: 0,
            os_reserved_bytes: 0,
            page_bytes: 4096,
            miss_bytes: 0,
        };
        let mut pages = PageCache::volume(config, &curve, rows, data_bytes).unwrap();
        let row_config = RowCacheConfig {
            capacity_bytes: budget,
            entry_overhead_bytes: 0,
            write_policy: crate::cache::row_cache::WritePolicy::Invalidate,
        };
        let mut cached_rows = RowCache::volume(row_config, &curve, rows, row_bytes).unwrap();
        cached_rows.warm();
        let row_hit = cached_rows.hit_probability().unwrap();
        let steady = pages.model().unwrap().steady_state_hit_probability();
        // The hot million keys need a million pages (3.8 GiB) to be
        // cached: the page cache gets most of them, the row cache all.
        println!("4 GiB: row cache hit {row_hit:.4}, page cache hit {steady:.4}");
        assert!(row_hit > 0.9 && steady < row_hit && steady > 0.5);
        // Cold start, then warming.
        assert!(!pages.lookup(0, 0.0));
        for i in 0..3_000_000u64 {
            if !pages.lookup(0, unit_hash(i, 5)) {
                pages.populate(0);
            }
        }
        let hit = pages.hit_probability().unwrap();
        assert!(hit > 0.0 && hit <= steady + 1e-9);
        assert!(pages.stats().hits > 0);
    }
}
