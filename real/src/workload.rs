//! What c-s sends for a predefined command (`write`, `read`, `mixed`): the
//! schema it creates, its two prepared statements, the bytes of a key and of
//! a row.
//!
//! Sources: apache/cassandra `tools/stress` `settings/SettingsSchema.java`
//! (keyspace `keyspace1`, table `standard1`, `SimpleStrategy` with the
//! factor of `-schema replication(factor=N)`, default 1; columns `C0`..
//! `Cn-1` of type blob, n the largest of `-col n=`; no compression unless
//! `-schema compression=`), `operations/predefined/CqlInsert.java` and
//! `CqlReader.java` (one INSERT of every generated column, one SELECT of the
//! row by key). Where this departs from c-s, on purpose:
//! - a key's bytes have the shape of c-s's (`generate/values/HexBytes.java`:
//!   `keysize=` characters, one a nibble of a seeded random value, the
//!   lowest first, written `'0' + v` below 10 and, as c-s writes them,
//!   `'A' + v` from 10, so `K`..`P`), but the value is the key's index
//!   through a fixed bijection of its `4 x keysize` low bits rather than a
//!   draw from c-s's generator: keys stay distinct for up to
//!   16^keysize indexes (c-s's may repeat), and they spread over every
//!   character as c-s's do. The spread matters to the server's work, not
//!   only to tokens: Cassandra's key cache hashes a key's bytes with
//!   Java's polynomial `Arrays.hashCode`, and the index's own hexadecimal
//!   (what this client sent until 2026-12-01, `0000` then a few digits
//!   that count up) packed the cache's entries into a narrow band of hash
//!   values, and equal hashes made a part of each lookup's cost
//!   (REAL.md, K8-K10);
//! - a value's bytes come from the process's seeded generator, not from one
//!   seeded by the key: only their sizes reach the server's work.

use models::cassandra_stress::{self as cs, ConsistencyLevel, StressCommand};
use rand::Rng;
use scylla::statement::Consistency;

/// The keyspace c-s's predefined commands use.
pub const KEYSPACE: &str = "keyspace1";
/// Their table.
pub const TABLE: &str = "standard1";

/// A predefined command's schema and statements.
#[derive(Clone, Debug)]
pub struct Workload {
    /// `cl=` as the driver takes it.
    pub consistency: Consistency,
    /// Columns of the table (`C0`..).
    pub columns: u32,
    /// `-col n=`.
    pub column_count: models::distribution::SizeDistribution,
    /// `-col size=`.
    pub column_size: models::distribution::SizeDistribution,
    /// `keysize=`.
    pub key_size: usize,
    /// `CREATE KEYSPACE IF NOT EXISTS ...`.
    pub create_keyspace: String,
    /// `CREATE TABLE IF NOT EXISTS ...`.
    pub create_table: String,
    /// The prepared insert.
    pub insert: String,
    /// The prepared read.
    pub select: String,
}

impl Workload {
    /// The workload of `command`, with `replication_factor` for the
    /// keyspace when the command gives none (the scenario's `[data]` or
    /// first load's, as `twin run` resolves it). A user profile is refused
    /// with the reason.
    pub fn of(command: &str, replication_factor: u32) -> Result<Workload, String> {
        let parsed = cs::parse(command).map_err(|error| error.to_string())?;
        if let cs::Operation::User { .. } = parsed.operation {
            return Err(
                "`twin real` runs c-s's predefined commands (write, read, mixed); a `user profile=` load is simulated by `twin run` only"
                    .to_string(),
            );
        }
        Ok(Workload::from_parsed(&parsed, replication_factor))
    }

    fn from_parsed(parsed: &StressCommand, default_rf: u32) -> Workload {
        let columns = u32::try_from(*parsed.columns.count.range().end())
            .unwrap_or(u32::MAX)
            .max(1);
        let rf = parsed.replication_factor.unwrap_or(default_rf);
        let strategy = parsed
            .replication_strategy
            .unwrap_or(cs::ReplicationStrategy::SimpleStrategy);
        let replication = match strategy {
            cs::ReplicationStrategy::SimpleStrategy => {
                format!("{{'class': 'SimpleStrategy', 'replication_factor': '{rf}'}}")
            }
            cs::ReplicationStrategy::NetworkTopologyStrategy => {
                format!("{{'class': 'NetworkTopologyStrategy', 'datacenter1': '{rf}'}}")
            }
        };
        let column_defs: Vec<String> = (0..columns).map(|c| format!("\"C{c}\" blob")).collect();
        let mut options = vec![match parsed.compression {
            Some(compression) => {
                format!("compression = {{'class': '{}'}}", compression.class_name())
            }
            None => "compression = {'enabled': false}".to_string(),
        }];
        if let Some(compaction) = parsed.compaction {
            let mut fields = vec![format!("'class': '{}'", compaction.class_name())];
            fields.extend(
                parsed
                    .compaction_options
                    .iter()
                    .map(|(key, value)| format!("'{key}': '{value}'")),
            );
            options.push(format!("compaction = {{{}}}", fields.join(", ")));
        }
        let names: Vec<String> = (0..columns).map(|c| format!("\"C{c}\"")).collect();
        let marks = vec!["?"; columns as usize + 1].join(", ");
        Workload {
            consistency: consistency(parsed.consistency),
            columns,
            column_count: parsed.columns.count,
            column_size: parsed.columns.size,
            key_size: parsed.key_size_bytes as usize,
            create_keyspace: format!(
                "CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = {replication} AND durable_writes = true"
            ),
            create_table: format!(
                "CREATE TABLE IF NOT EXISTS {KEYSPACE}.{TABLE} (key blob PRIMARY KEY, {}) WITH {}",
                column_defs.join(", "),
                options.join(" AND ")
            ),
            insert: format!(
                "INSERT INTO {KEYSPACE}.{TABLE} (key, {}) VALUES ({marks})",
                names.join(", ")
            ),
            select: format!("SELECT * FROM {KEYSPACE}.{TABLE} WHERE key = ?"),
        }
    }

    /// Key `index`'s bytes (see the module doc): c-s's characters, from
    /// a bijection of the index's low `4 x keysize` bits (each further 16
    /// characters of a longer key from the bijection of the index and
    /// its group).
    pub fn key(&self, index: u64) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.key_size);
        for group in 0.. {
            let nibbles = (self.key_size - key.len()).min(16);
            if nibbles == 0 {
                break;
            }
            let mut value = spread(index ^ group, 4 * nibbles as u32);
            for _ in 0..nibbles {
                let v = (value & 15) as u8;
                key.push(if v < 10 { b'0' + v } else { b'A' + v });
                value >>= 4;
            }
        }
        key
    }

    /// One write's bound values: the key, then each column's bytes, or
    /// unset past the drawn column count (c-s writes only those); and the
    /// bytes of values written.
    pub fn row<R: Rng + ?Sized>(
        &self,
        key: u64,
        rng: &mut R,
    ) -> (Vec<scylla::value::MaybeUnset<Vec<u8>>>, u64) {
        use scylla::value::MaybeUnset;
        let count = self.column_count.sample(rng).min(u64::from(self.columns));
        let mut values = Vec::with_capacity(self.columns as usize + 1);
        values.push(MaybeUnset::Set(self.key(key)));
        let mut bytes = 0;
        for column in 0..u64::from(self.columns) {
            if column < count {
                let size = self.column_size.sample(rng) as usize;
                let mut value = vec![0u8; size];
                rng.fill_bytes(&mut value);
                bytes += size as u64;
                values.push(MaybeUnset::Set(value));
            } else {
                values.push(MaybeUnset::Unset);
            }
        }
        (values, bytes)
    }
}

/// c-s's `cl=` as the driver's consistency.
pub fn consistency(level: ConsistencyLevel) -> Consistency {
    match level {
        ConsistencyLevel::Any => Consistency::Any,
        ConsistencyLevel::One => Consistency::One,
        ConsistencyLevel::Two => Consistency::Two,
        ConsistencyLevel::Three => Consistency::Three,
        ConsistencyLevel::Quorum => Consistency::Quorum,
        ConsistencyLevel::All => Consistency::All,
        ConsistencyLevel::LocalQuorum => Consistency::LocalQuorum,
        ConsistencyLevel::EachQuorum => Consistency::EachQuorum,
        ConsistencyLevel::LocalOne => Consistency::LocalOne,
    }
}

/// A bijection of `x`'s low `bits` bits (1 to 64) onto themselves: odd
/// multiplications and right xor-shifts, each invertible modulo
/// 2^bits, so distinct indexes give distinct keys and consecutive ones
/// differ in every nibble.
fn spread(x: u64, bits: u32) -> u64 {
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let shift = bits.div_ceil(2).max(1);
    let mut x = x & mask;
    for multiplier in [
        0x9E37_79B9_7F4A_7C15_u64,
        0xBF58_476D_1CE4_E5B9,
        0x94D0_49BB_1331_11EB,
    ] {
        x = x.wrapping_mul(multiplier) & mask;
        x ^= x >> shift;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_default_write_creates_c_s_schema_and_five_34_byte_columns() {
        let workload = Workload::of("write n=1000 cl=QUORUM", 3).unwrap();
        assert_eq!(
            workload.create_keyspace,
            "CREATE KEYSPACE IF NOT EXISTS keyspace1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '3'} AND durable_writes = true"
        );
        assert_eq!(
            workload.create_table,
            "CREATE TABLE IF NOT EXISTS keyspace1.standard1 (key blob PRIMARY KEY, \"C0\" blob, \"C1\" blob, \"C2\" blob, \"C3\" blob, \"C4\" blob) WITH compression = {'enabled': false}"
        );
        assert_eq!(workload.consistency, Consistency::Quorum);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        let (values, bytes) = workload.row(7, &mut rng);
        assert_eq!(values.len(), 6);
        assert_eq!(bytes, 5 * 34);
    }

    #[test]
    fn the_command_s_replication_and_compaction_win_over_the_default() {
        let workload = Workload::of(
            "write n=10 -schema 'replication(factor=2)' 'compaction(strategy=LeveledCompactionStrategy)'",
            1,
        )
        .unwrap();
        assert!(workload
            .create_keyspace
            .contains("'replication_factor': '2'"));
        assert!(workload
            .create_table
            .ends_with("compaction = {'class': 'LeveledCompactionStrategy'}"));
    }

    #[test]
    fn keys_are_distinct_and_spread_as_c_s_writes_them() {
        let workload = Workload::of("read n=10", 1).unwrap();
        let alphabet = b"0123456789KLMNOP";
        let mut seen = std::collections::HashSet::new();
        let mut first = std::collections::HashSet::new();
        for index in 0..(1u64 << 16) {
            let key = workload.key(index);
            assert_eq!(key.len(), 10);
            assert!(key.iter().all(|c| alphabet.contains(c)), "{key:?}");
            assert!(seen.insert(key.clone()), "key {index} repeats");
            first.insert(key[9]);
        }
        // Sequential indexes do not share a prefix: the last character
        // (the value's top nibble) takes every value.
        assert_eq!(first.len(), 16);
        assert_ne!(workload.key(38_850_000_000), workload.key(38_850_000_001));
        assert_eq!(workload.key(7), workload.key(7), "a key's bytes are fixed");
        // Past 16 characters, the next group's.
        let long = Workload::of("read n=10 keysize=40", 1).unwrap();
        let key = long.key(3);
        assert_eq!(key.len(), 40);
        assert_ne!(key[..16], key[16..32]);
    }

    #[test]
    fn the_spread_is_a_bijection_of_its_bits() {
        for bits in [4, 8, 12] {
            let mut seen = std::collections::HashSet::new();
            for x in 0..(1u64 << bits) {
                let y = super::spread(x, bits);
                assert!(y < 1 << bits);
                assert!(seen.insert(y), "{bits} bits: {x} maps onto another's {y}");
            }
        }
    }

    #[test]
    fn a_user_profile_is_refused_with_its_reason() {
        let error = Workload::of("user profile=x.yaml ops(insert=1)", 1).unwrap_err();
        assert!(error.contains("predefined"), "{error}");
    }
}
