//! What keeps a read off the disk, and what the coordinators learn from it:
//! the row cache ([`row_cache`]: Scylla's, and Cassandra's off-heap one),
//! the operating system's page cache under Cassandra's SSTable reads
//! ([`page_cache`]), and the cache hit rates the replicas publish for
//! heat-weighted read balancing ([`heat`]). Each is a struct owning its
//! state; the shard asks them, and only the coordinator reads [`heat`].

pub mod heat;
pub mod page_cache;
pub mod row_cache;
