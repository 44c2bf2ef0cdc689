//! A RocksDB iterator that owns its database handle.
//!
//! The `rocksdb` crate ties an iterator's lifetime to a borrow of the database, which
//! would tie every scan to a borrow of the store. Scans must outlive that borrow (they are
//! handed to other threads and to the JVM), so the cursor holds the database by `Arc`
//! next to the iterator. A RocksDB iterator reads an implicit snapshot taken when it is
//! created, which is what makes a scan unaffected by later commits.

use std::path::PathBuf;
use std::sync::Arc;

use rocksdb::{DBRawIteratorWithThreadMode, ReadOptions, DB};

use crate::store::bounds::KeyBounds;
use crate::store::error::{Error, Result};
use crate::store::iter::{LendingCursor, Order};

/// Committed entries of one scan.
pub(crate) struct Cursor {
    // Field order is load-bearing: fields drop in declaration order, and the iterator
    // must be destroyed before the database it reads.
    iter: DBRawIteratorWithThreadMode<'static, DB>,
    _db: Arc<DB>,
    order: Order,
    path: Arc<PathBuf>,
    finished: bool,
}

impl Cursor {
    /// Opens a scan of `bounds` over the data column family, positioned at its first entry
    /// in `order`.
    pub(crate) fn open(
        db: Arc<DB>,
        path: Arc<PathBuf>,
        bounds: &KeyBounds,
        order: Order,
    ) -> Cursor {
        let mut read_options = ReadOptions::default();
        if let Some(lower) = bounds.lower() {
            read_options.set_iterate_lower_bound(lower);
        }
        if let Some(upper) = bounds.upper() {
            read_options.set_iterate_upper_bound(upper);
        }
        let iter = db.raw_iterator_opt(read_options);
        // SAFETY: the iterator borrows the database behind `db`. That allocation is kept
        // alive by the `Arc` stored in the same struct, never moves, and outlives the
        // iterator because `iter` is declared (and therefore dropped) before `_db`. The
        // 'static borrow never leaves this struct.
        let mut iter: DBRawIteratorWithThreadMode<'static, DB> =
            unsafe { std::mem::transmute(iter) };
        match order {
            Order::Forward => iter.seek_to_first(),
            Order::Reverse => iter.seek_to_last(),
        }
        Cursor {
            iter,
            _db: db,
            order,
            path,
            finished: false,
        }
    }
}

impl LendingCursor for Cursor {
    fn offer_next(&mut self, take: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Option<Result<bool>> {
        if self.finished {
            return None;
        }
        let taken = match self.iter.item() {
            Some((key, value)) => take(key, value),
            None => {
                self.finished = true;
                return match self.iter.status() {
                    Ok(()) => None,
                    Err(e) => Some(Err(Error::from_rocksdb(
                        &self.path,
                        "scanning committed state",
                        e,
                    ))),
                };
            }
        };
        if taken {
            match self.order {
                Order::Forward => self.iter.next(),
                Order::Reverse => self.iter.prev(),
            }
        }
        Some(Ok(taken))
    }
}
