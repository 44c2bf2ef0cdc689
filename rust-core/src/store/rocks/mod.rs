//! The RocksDB key-value store: one database per store, column families `default` (data)
//! and `offsets`, and each commit written as one atomic `WriteBatch` of data and offsets.
//!
//! Durability follows the [`WalMode`] of the shared [`RocksDbResources`]: with the WAL on
//! (`buffered`, `sync`) a store reopens after a process crash at exactly its last commit;
//! with it off it reopens at its last memtable flush, which atomic flush keeps consistent
//! with its offsets.
//!
//! A scan keeps the database open until it is dropped; drop scans before reopening the
//! same directory.

mod cursor;
mod directory;
mod layout;
mod options;
mod tuning;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rocksdb::{FlushOptions, IteratorMode, ReadOptions, WriteBatch, WriteOptions, DB};

use crate::store::bounds::KeyBounds;
use crate::store::error::{Error, Result};
use crate::store::iter::Order;
use crate::store::offsets::{OffsetChange, StoredOffsets};
use crate::store::overlay::Overlay;
use crate::store::transactional::{CommittedScan, CommittedState, TransactionalStore};

pub use directory::destroy_store_dir;
pub use options::{
    RocksDbConfig, RocksDbResources, WalMode, BLOCK_CACHE_BYTES_CONFIG, DEFAULT_BLOCK_CACHE_BYTES,
    DEFAULT_WRITE_BUFFER_MANAGER_BYTES, WAL_CONFIG, WRITE_BUFFER_MANAGER_BYTES_CONFIG,
};
pub use tuning::StoreTuning;

use directory::DirectoryState;
use layout::{FORMAT_KEY, FORMAT_VERSION, OFFSETS_CF};

/// The RocksDB-backed transactional key-value store.
pub type RocksDbKeyValueStore = TransactionalStore<RocksDbState>;

impl RocksDbKeyValueStore {
    /// Opens the store in `dir`, creating it when the directory is absent or empty, with
    /// the store's own `tuning` over the defaults.
    ///
    /// Fails with [`Error::Corrupt`] when `dir` holds anything but an intact Sluice store
    /// (foreign files, another program's database, a truncated or damaged one): the caller
    /// should [`destroy_store_dir`] and restore from the changelog.
    pub fn open(
        name: &str,
        dir: &Path,
        resources: &RocksDbResources,
        tuning: &StoreTuning,
    ) -> Result<Self> {
        let state = directory::inspect(dir)?;
        let fresh = state == DirectoryState::Fresh;
        if fresh {
            directory::create(dir)?;
        }
        let db = DB::open_cf_descriptors(
            &resources.db_options(fresh, tuning),
            dir,
            resources.column_families(tuning),
        )
        .map_err(|e| directory::open_error(dir, "opening the database", e))?;
        let path = Arc::new(dir.to_path_buf());
        if fresh {
            write_format_marker(&db, &path)?;
        }
        let offsets = read_offsets(&db, &path)?;
        let backend = RocksDbState {
            db: Arc::new(db),
            path,
            commit_options: resources.commit_write_options(),
            point_read_options: ReadOptions::default(),
            wal: resources.wal(),
        };
        Ok(TransactionalStore::with_backend(name, backend, offsets))
    }
}

/// Committed state of a [`RocksDbKeyValueStore`].
pub struct RocksDbState {
    db: Arc<DB>,
    path: Arc<PathBuf>,
    commit_options: WriteOptions,
    /// Point reads share one: creating RocksDB read options costs an allocation per read.
    point_read_options: ReadOptions,
    wal: WalMode,
}

impl RocksDbState {
    fn error(&self, context: &str, e: rocksdb::Error) -> Error {
        Error::from_rocksdb(&self.path, context, e)
    }
}

impl CommittedState for RocksDbState {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut value = None;
        self.visit(key, &mut |found| value = found.map(<[u8]>::to_vec))?;
        Ok(value)
    }

    fn visit(&self, key: &[u8], visit: &mut dyn FnMut(Option<&[u8]>)) -> Result<()> {
        match self.db.get_pinned_opt(key, &self.point_read_options) {
            Ok(value) => {
                visit(value.as_deref());
                Ok(())
            }
            Err(e) => Err(self.error("reading committed state", e)),
        }
    }

    fn scan(&self, bounds: &KeyBounds, order: Order) -> Result<CommittedScan> {
        Ok(Box::new(cursor::Cursor::open(
            Arc::clone(&self.db),
            Arc::clone(&self.path),
            bounds,
            order,
        )))
    }

    fn approximate_num_entries(&self) -> Result<u64> {
        self.db
            .property_int_value("rocksdb.estimate-num-keys")
            .map(Option::unwrap_or_default)
            .map_err(|e| self.error("estimating the number of entries", e))
    }

    /// Block cache properties are the shared cache's; the others are summed over the
    /// column families, as RocksDB's aggregated properties are.
    fn property(&self, name: &str) -> Result<Option<u64>> {
        let read = |value: std::result::Result<Option<u64>, rocksdb::Error>| {
            value.map_err(|e| self.error("reading a property", e))
        };
        if name.starts_with("rocksdb.block-cache-") {
            return read(self.db.property_int_value(name));
        }
        // The data lives in the default column family.
        let data = read(self.db.property_int_value(name))?;
        let offsets = read(
            self.db
                .property_int_value_cf(offsets_cf(&self.db, &self.path)?, name),
        )?;
        Ok(match (data, offsets) {
            (None, None) => None,
            (data, offsets) => Some(data.unwrap_or(0).saturating_add(offsets.unwrap_or(0))),
        })
    }

    fn apply(&mut self, overlay: &Overlay, offset_changes: &[OffsetChange]) -> Result<()> {
        let offsets_cf = offsets_cf(&self.db, &self.path)?;
        let mut batch = WriteBatch::default();
        // Range deletes first: point writes staged after a range delete must win.
        for (start, end) in overlay.deleted_ranges() {
            batch.delete_range(start, end);
        }
        for (key, value) in overlay.writes() {
            match value {
                Some(value) => batch.put(key, value),
                None => batch.delete(key),
            }
        }
        for change in offset_changes {
            match layout::encode_change(change) {
                (key, Some(value)) => batch.put_cf(offsets_cf, key, value),
                (key, None) => batch.delete_cf(offsets_cf, key),
            }
        }
        self.db
            .write_opt(batch, &self.commit_options)
            .map_err(|e| self.error("committing", e))
    }

    fn close(self) -> Result<()> {
        if self.wal == WalMode::Off {
            // Without a WAL, only flushed data survives: a clean close persists the last
            // commit, data and offsets together.
            let data_cf = self.db.cf_handle(layout::DATA_CF);
            let offsets_cf = offsets_cf(&self.db, &self.path)?;
            let families: Vec<_> = data_cf.into_iter().chain([offsets_cf]).collect();
            self.db
                .flush_cfs_opt(&families, &FlushOptions::default())
                .map_err(|e| self.error("flushing on close", e))?;
        }
        Ok(())
    }
}

fn offsets_cf<'a>(db: &'a DB, path: &Path) -> Result<&'a rocksdb::ColumnFamily> {
    db.cf_handle(OFFSETS_CF).ok_or_else(|| Error::Corrupt {
        path: path.to_path_buf(),
        reason: "the offsets column family is missing".into(),
    })
}

/// Marks a new store as Sluice's, durably whatever the WAL mode, so a store whose creation
/// completed is never mistaken for a foreign one.
fn write_format_marker(db: &DB, path: &Path) -> Result<()> {
    let mut durable = WriteOptions::default();
    durable.set_sync(true);
    db.put_cf_opt(offsets_cf(db, path)?, FORMAT_KEY, FORMAT_VERSION, &durable)
        .map_err(|e| Error::from_rocksdb(path, "writing the format marker", e))
}

fn read_offsets(db: &DB, path: &Path) -> Result<StoredOffsets> {
    let mut entries = Vec::new();
    for entry in db.iterator_cf(offsets_cf(db, path)?, IteratorMode::Start) {
        let (key, value) = entry.map_err(|e| Error::from_rocksdb(path, "reading offsets", e))?;
        entries.push((key.into_vec(), value.into_vec()));
    }
    layout::decode_offsets(entries).map_err(|reason| Error::Corrupt {
        path: path.to_path_buf(),
        reason,
    })
}
