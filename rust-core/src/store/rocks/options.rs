//! RocksDB configuration: the memory shared by all stores of an engine instance, the WAL
//! mode, and the one place where per-store RocksDB options are built.
//!
//! # Memory
//!
//! Every RocksDB store of an engine instance shares one LRU block cache and one write
//! buffer manager ([`RocksDbResources`]). Memtables are charged to the block cache, and
//! index and filter blocks live in it, so the block cache size bounds the native memory of
//! all stores together (apart from small per-instance overheads), however many stores
//! there are. Defaults:
//!
//! | key | default | meaning |
//! |-----|---------|---------|
//! | [`BLOCK_CACHE_BYTES_CONFIG`] `sluice.rocksdb.block.cache.bytes` | 128 MiB ([`DEFAULT_BLOCK_CACHE_BYTES`]) | total for data blocks, index/filter blocks and memtables |
//! | [`WRITE_BUFFER_MANAGER_BYTES_CONFIG`] `sluice.rocksdb.write.buffer.manager.bytes` | 64 MiB ([`DEFAULT_WRITE_BUFFER_MANAGER_BYTES`]), at most the block cache | memtables of all stores; at the limit the largest are flushed. Must not exceed the block cache. |
//! | [`WAL_CONFIG`] `sluice.rocksdb.wal` | `buffered` | how a commit reaches disk, see [`WalMode`] |
//!
//! Like Kafka Streams, stores use no compression.
//!
//! # Per store
//!
//! A store's [`StoreTuning`] (what a user's `RocksDBConfigSetter` changed) applies over the
//! defaults to its database and data column family.

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, Options,
    WriteBufferManager, WriteOptions,
};

use crate::store::error::{Error, Result};
use crate::store::rocks::layout::{DATA_CF, OFFSETS_CF};
use crate::store::rocks::tuning::StoreTuning;

/// Config key: bytes of the block cache shared by all RocksDB stores.
pub const BLOCK_CACHE_BYTES_CONFIG: &str = "sluice.rocksdb.block.cache.bytes";
/// Default of [`BLOCK_CACHE_BYTES_CONFIG`]: 128 MiB.
pub const DEFAULT_BLOCK_CACHE_BYTES: usize = 128 << 20;

/// Config key: bytes all memtables of all RocksDB stores may take together.
pub const WRITE_BUFFER_MANAGER_BYTES_CONFIG: &str = "sluice.rocksdb.write.buffer.manager.bytes";
/// Default of [`WRITE_BUFFER_MANAGER_BYTES_CONFIG`]: 64 MiB.
pub const DEFAULT_WRITE_BUFFER_MANAGER_BYTES: usize = 64 << 20;

/// Config key: the [`WalMode`] of commits: `sync`, `buffered` or `off`.
pub const WAL_CONFIG: &str = "sluice.rocksdb.wal";

/// Kafka Streams' memtable size per column family (16 MiB, at most 3 memtables).
const WRITE_BUFFER_BYTES: usize = 16 << 20;
const MAX_WRITE_BUFFERS: i32 = 3;
/// The offsets column family holds a few keys; a small memtable keeps its arena small.
const OFFSETS_WRITE_BUFFER_BYTES: usize = 1 << 20;
/// Kafka Streams' block size.
const BLOCK_BYTES: usize = 4 << 10;
const BLOOM_BITS_PER_KEY: f64 = 10.0;
/// The newest table format the RocksDB of Kafka Streams 4.4 (rocksdbjni 10.1) reads, where this
/// RocksDB writes format 7 by default: an application moved back to Kafka Streams opens the stores
/// Sluice left instead of failing to start on them.
const TABLE_FORMAT_VERSION: i32 = 6;

/// How a commit's write batch reaches disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WalMode {
    /// Write-ahead log, fsynced on every commit: survives a machine crash.
    Sync,
    /// Write-ahead log without fsync (the default): survives a process crash, which
    /// reopens at exactly the last commit; costs one sequential append per commit.
    #[default]
    Buffered,
    /// No write-ahead log, as Kafka Streams 4.4 runs RocksDB: after a crash the store
    /// reopens at its last memtable flush, a consistent but possibly older commit.
    Off,
}

impl WalMode {
    /// Parses a [`WAL_CONFIG`] value.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "sync" => Ok(WalMode::Sync),
            "buffered" => Ok(WalMode::Buffered),
            "off" => Ok(WalMode::Off),
            other => Err(Error::InvalidArgument(format!(
                "{WAL_CONFIG}: '{other}' is not one of sync, buffered, off"
            ))),
        }
    }
}

/// RocksDB settings of an engine instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RocksDbConfig {
    /// See [`BLOCK_CACHE_BYTES_CONFIG`].
    pub block_cache_bytes: usize,
    /// See [`WRITE_BUFFER_MANAGER_BYTES_CONFIG`].
    pub write_buffer_manager_bytes: usize,
    /// See [`WAL_CONFIG`].
    pub wal: WalMode,
}

impl Default for RocksDbConfig {
    fn default() -> Self {
        RocksDbConfig {
            block_cache_bytes: DEFAULT_BLOCK_CACHE_BYTES,
            write_buffer_manager_bytes: DEFAULT_WRITE_BUFFER_MANAGER_BYTES,
            wal: WalMode::default(),
        }
    }
}

impl RocksDbConfig {
    /// Reads the `sluice.rocksdb.*` keys through `lookup`; absent keys take their default.
    /// A malformed value fails with an error naming its key.
    pub fn from_config(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let bytes = |key: &str, default: usize| -> Result<usize> {
            match lookup(key) {
                None => Ok(default),
                Some(value) => value.trim().parse::<usize>().map_err(|_| {
                    Error::InvalidArgument(format!("{key}: '{value}' is not a byte count"))
                }),
            }
        };
        let block_cache_bytes = bytes(BLOCK_CACHE_BYTES_CONFIG, DEFAULT_BLOCK_CACHE_BYTES)?;
        let config = RocksDbConfig {
            block_cache_bytes,
            // Unset, memtables may take the default or the whole cache, whichever is less.
            write_buffer_manager_bytes: bytes(
                WRITE_BUFFER_MANAGER_BYTES_CONFIG,
                DEFAULT_WRITE_BUFFER_MANAGER_BYTES.min(block_cache_bytes),
            )?,
            wal: lookup(WAL_CONFIG)
                .as_deref()
                .map_or(Ok(WalMode::default()), WalMode::parse)?,
        };
        if config.write_buffer_manager_bytes > config.block_cache_bytes {
            return Err(Error::InvalidArgument(format!(
                "{WRITE_BUFFER_MANAGER_BYTES_CONFIG} ({}) must not exceed {BLOCK_CACHE_BYTES_CONFIG} ({}): \
                 memtables are charged to the block cache",
                config.write_buffer_manager_bytes, config.block_cache_bytes
            )));
        }
        Ok(config)
    }
}

/// Native memory and write settings shared by every RocksDB store of an engine instance.
/// Cheap to clone; clones share the same cache and write buffer manager.
#[derive(Clone)]
pub struct RocksDbResources {
    block_cache: Cache,
    write_buffer_manager: WriteBufferManager,
    wal: WalMode,
}

impl RocksDbResources {
    /// Allocates the shared block cache and write buffer manager.
    pub fn new(config: &RocksDbConfig) -> Self {
        let block_cache = Cache::new_lru_cache(config.block_cache_bytes);
        let write_buffer_manager = WriteBufferManager::new_write_buffer_manager_with_cache(
            config.write_buffer_manager_bytes,
            false,
            block_cache.clone(),
        );
        RocksDbResources {
            block_cache,
            write_buffer_manager,
            wal: config.wal,
        }
    }

    /// The WAL mode commits use.
    pub fn wal(&self) -> WalMode {
        self.wal
    }

    /// Bytes the block cache currently holds, memtable reservations included.
    pub fn block_cache_usage(&self) -> usize {
        self.block_cache.get_usage()
    }

    /// Bytes of memtables of all stores.
    pub fn memtable_usage(&self) -> usize {
        self.write_buffer_manager.get_usage()
    }

    /// Options for opening one store's database.
    ///
    /// This is where every per-store RocksDB option is decided: these defaults, then the
    /// store's own `tuning` (what a user's `RocksDBConfigSetter` changed), then what the
    /// store's guarantees need, which no tuning overrides.
    pub(super) fn db_options(&self, create: bool, tuning: &StoreTuning) -> Options {
        let mut options = self.column_family_options(WRITE_BUFFER_BYTES, tuning);
        // Opening every table file at open time reads their footers, so a truncated file
        // fails the open instead of a later read. Kafka Streams uses the same setting.
        options.set_max_open_files(-1);
        tuning.apply_to_database(&mut options);
        options.create_if_missing(create);
        options.create_missing_column_families(create);
        // Data and offsets must reach SST files together, or a store recovered without a
        // WAL could pair data with another commit's offsets.
        options.set_atomic_flush(true);
        options.set_write_buffer_manager(&self.write_buffer_manager);
        options.set_paranoid_checks(true);
        options
    }

    /// Column families of a store: `default` holds the data, `offsets` the changelog
    /// offsets, the interactive-query position and the format marker.
    /// The data column family takes the store's `tuning`.
    pub(super) fn column_families(&self, tuning: &StoreTuning) -> Vec<ColumnFamilyDescriptor> {
        vec![
            ColumnFamilyDescriptor::new(
                DATA_CF,
                self.column_family_options(WRITE_BUFFER_BYTES, tuning),
            ),
            ColumnFamilyDescriptor::new(
                OFFSETS_CF,
                self.column_family_options(OFFSETS_WRITE_BUFFER_BYTES, &StoreTuning::default()),
            ),
        ]
    }

    /// Write options of commits, per the WAL mode.
    pub(super) fn commit_write_options(&self) -> WriteOptions {
        let mut options = WriteOptions::default();
        match self.wal {
            WalMode::Sync => options.set_sync(true),
            WalMode::Buffered => {}
            WalMode::Off => options.disable_wal(true),
        }
        options
    }

    fn column_family_options(&self, write_buffer_bytes: usize, tuning: &StoreTuning) -> Options {
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&self.block_cache);
        table.set_block_size(BLOCK_BYTES);
        table.set_cache_index_and_filter_blocks(true);
        table.set_pin_l0_filter_and_index_blocks_in_cache(true);
        table.set_format_version(TABLE_FORMAT_VERSION);
        let bloom_bits = tuning
            .bloom_filter_bits_per_key()
            .unwrap_or(BLOOM_BITS_PER_KEY);
        if bloom_bits > 0.0 {
            table.set_bloom_filter(bloom_bits, false);
        }
        tuning.apply_to_table(&mut table);
        let mut options = Options::default();
        options.set_block_based_table_factory(&table);
        options.set_compression_type(DBCompressionType::None);
        options.set_write_buffer_size(write_buffer_bytes);
        options.set_max_write_buffer_number(MAX_WRITE_BUFFERS);
        tuning.apply_to_column_family(&mut options);
        options
    }
}

impl std::fmt::Debug for RocksDbResources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksDbResources")
            .field("wal", &self.wal)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> Result<RocksDbConfig> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RocksDbConfig::from_config(|key| map.get(key).cloned())
    }

    #[test]
    fn absent_keys_take_defaults() {
        assert_eq!(config(&[]).unwrap(), RocksDbConfig::default());
    }

    #[test]
    fn values_are_parsed() {
        let parsed = config(&[
            (BLOCK_CACHE_BYTES_CONFIG, "1000"),
            (WRITE_BUFFER_MANAGER_BYTES_CONFIG, "500"),
            (WAL_CONFIG, "Off"),
        ])
        .unwrap();
        assert_eq!(parsed.block_cache_bytes, 1000);
        assert_eq!(parsed.write_buffer_manager_bytes, 500);
        assert_eq!(parsed.wal, WalMode::Off);
    }

    #[test]
    fn a_small_cache_bounds_the_default_memtable_budget() {
        let parsed = config(&[(BLOCK_CACHE_BYTES_CONFIG, "1000")]).unwrap();
        assert_eq!(parsed.write_buffer_manager_bytes, 1000);
        let message = config(&[
            (BLOCK_CACHE_BYTES_CONFIG, "1000"),
            (WRITE_BUFFER_MANAGER_BYTES_CONFIG, "1001"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            message.contains(WRITE_BUFFER_MANAGER_BYTES_CONFIG),
            "{message}"
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        let message = config(&[(WAL_CONFIG, "sometimes")])
            .unwrap_err()
            .to_string();
        assert!(message.contains(WAL_CONFIG), "{message}");
        let message = config(&[(BLOCK_CACHE_BYTES_CONFIG, "lots")])
            .unwrap_err()
            .to_string();
        assert!(message.contains(BLOCK_CACHE_BYTES_CONFIG), "{message}");
        let message = config(&[(WRITE_BUFFER_MANAGER_BYTES_CONFIG, "999999999999")])
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(WRITE_BUFFER_MANAGER_BYTES_CONFIG),
            "{message}"
        );
    }
}
