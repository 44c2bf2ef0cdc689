//! The transactional layer every key-value backend shares: overlay, isolation, offsets,
//! closing.
//!
//! A backend only provides its committed state ([`CommittedState`]); this module stages
//! writes over it and decides what each isolation level sees. One lock guards the overlay,
//! the offsets and the open/closed state together:
//!
//! - writes take it exclusively for the few microseconds of a map insert;
//! - a commit takes it exclusively while the backend applies the batch, so no reader can
//!   observe the committed state and the overlay disagreeing;
//! - reads take it shared; scans take it only while they copy the overlay range and
//!   open the backend's point-in-time view, and then iterate without it.

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::store::bounds::KeyBounds;
use crate::store::error::{Error, Result};
use crate::store::iter::{owned_entries, KeyValue, KeyValueIterator, LendingCursor, Order};
use crate::store::kv::{IsolationLevel, KeyValueStore};
use crate::store::offsets::{CommitMetadata, OffsetChange, StoredOffsets, TopicPartition};
use crate::store::overlay::{Overlay, OverlaySnapshot, Staged};
use crate::store::value_layout::{self, Settlement, UpgradeProgress, ValueLayout};

/// How many bytes of rewritten values an upgrade of the value layout commits at a time.
const REWRITE_CHUNK_BYTES: usize = 4 << 20;

/// A sorted, point-in-time stream of committed entries.
pub type CommittedScan = Box<dyn LendingCursor>;

/// The committed state of a backend, underneath the overlay.
pub trait CommittedState: Send + Sync + 'static {
    /// The committed value of `key`.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Hands the committed value of `key` to `visit` where the backend holds it, sparing
    /// the copy of [`get`](Self::get).
    fn visit(&self, key: &[u8], visit: &mut dyn FnMut(Option<&[u8]>)) -> Result<()> {
        visit(self.get(key)?.as_deref());
        Ok(())
    }

    /// Committed entries in `bounds` (never empty bounds), as of now, unaffected by later
    /// commits.
    fn scan(&self, bounds: &KeyBounds, order: Order) -> Result<CommittedScan>;

    /// Estimated number of committed entries.
    fn approximate_num_entries(&self) -> Result<u64>;

    /// See [`KeyValueStore::backend_property`].
    fn property(&self, _name: &str) -> Result<Option<u64>> {
        Ok(None)
    }

    /// Applies the overlay (range deletes first, then point writes) and the offset
    /// changes atomically: all of it or, on error, none of it.
    fn apply(&mut self, overlay: &Overlay, offset_changes: &[OffsetChange]) -> Result<()>;

    /// Releases the backend. Staged writes are not part of it.
    fn close(self) -> Result<()>;
}

/// A key-value store of one backend, made transactional. Use it through
/// [`KeyValueStore`]; the backends' modules name the concrete types
/// ([`RocksDbKeyValueStore`](crate::store::RocksDbKeyValueStore),
/// [`InMemoryKeyValueStore`](crate::store::InMemoryKeyValueStore)).
pub struct TransactionalStore<B> {
    name: String,
    state: RwLock<Option<OpenStore<B>>>,
    /// Mirror of the overlay's byte count, readable without the lock: the engine polls it
    /// on every record, possibly while a commit holds the lock.
    uncommitted_bytes: AtomicU64,
}

struct OpenStore<B> {
    committed: B,
    overlay: Overlay,
    offsets: StoredOffsets,
}

impl<B: CommittedState> TransactionalStore<B> {
    /// Wraps an opened backend whose persisted offsets are `offsets`.
    pub(crate) fn with_backend(name: &str, committed: B, offsets: StoredOffsets) -> Self {
        TransactionalStore {
            name: name.to_owned(),
            state: RwLock::new(Some(OpenStore {
                committed,
                overlay: Overlay::default(),
                offsets,
            })),
            uncommitted_bytes: AtomicU64::new(0),
        }
    }

    // A panic while holding the lock cannot leave the overlay half-updated in a way that
    // matters (each map operation is atomic), so a poisoned lock is used as is.
    fn read_lock(&self) -> RwLockReadGuard<'_, Option<OpenStore<B>>> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_lock(&self) -> RwLockWriteGuard<'_, Option<OpenStore<B>>> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn closed(&self) -> Error {
        Error::Closed {
            store: self.name.clone(),
        }
    }

    fn read<T>(&self, f: impl FnOnce(&OpenStore<B>) -> Result<T>) -> Result<T> {
        match self.read_lock().as_ref() {
            Some(open) => f(open),
            None => Err(self.closed()),
        }
    }

    fn write<T>(&self, f: impl FnOnce(&mut OpenStore<B>) -> Result<T>) -> Result<T> {
        let mut guard = self.write_lock();
        let open = guard.as_mut().ok_or_else(|| self.closed())?;
        let result = f(open);
        self.uncommitted_bytes
            .store(open.overlay.approximate_bytes(), AtomicOrdering::Relaxed);
        result
    }
}

impl<B> OpenStore<B>
where
    B: CommittedState,
{
    /// The committed values of the keys after `after` that `holds_value` accepts, with
    /// `prefix` in front, as writes: about [`REWRITE_CHUNK_BYTES`] of them, and the last key
    /// the chunk passed, or `None` when no key was left.
    fn rewritten_chunk(
        &self,
        after: Option<&[u8]>,
        prefix: &[u8],
        holds_value: &dyn Fn(&[u8]) -> bool,
    ) -> Result<(Overlay, Option<Vec<u8>>)> {
        let bounds = match after {
            Some(key) => KeyBounds::from_bounds(Bound::Excluded(key), Bound::Unbounded),
            None => KeyBounds::all(),
        };
        let mut cursor = self.committed.scan(&bounds, Order::Forward)?;
        let mut rewritten = Overlay::default();
        let mut last_key = Vec::new();
        let mut passed_any = false;
        let mut bytes = 0;
        while bytes < REWRITE_CHUNK_BYTES {
            let step = cursor.offer_next(&mut |key, value| {
                if holds_value(key) {
                    rewritten.put(key.to_vec(), Some([prefix, value].concat()));
                    bytes += key.len() + prefix.len() + value.len();
                }
                last_key.clear();
                last_key.extend_from_slice(key);
                passed_any = true;
                true
            });
            match step {
                None => break,
                Some(taken) => {
                    taken?;
                }
            }
        }
        Ok((rewritten, passed_any.then_some(last_key)))
    }

    fn get(&self, key: &[u8], isolation: IsolationLevel) -> Result<Option<Vec<u8>>> {
        if isolation == IsolationLevel::ReadUncommitted {
            match self.overlay.lookup(key) {
                Staged::Value(value) => return Ok(Some(value.to_vec())),
                Staged::Deleted => return Ok(None),
                Staged::Untouched => {}
            }
        }
        self.committed.get(key)
    }

    fn visit(
        &self,
        key: &[u8],
        isolation: IsolationLevel,
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()> {
        if isolation == IsolationLevel::ReadUncommitted {
            match self.overlay.lookup(key) {
                Staged::Value(value) => {
                    visit(Some(value));
                    return Ok(());
                }
                Staged::Deleted => {
                    visit(None);
                    return Ok(());
                }
                Staged::Untouched => {}
            }
        }
        self.committed.visit(key, visit)
    }
}

impl<B: CommittedState> KeyValueStore for TransactionalStore<B> {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_open(&self) -> bool {
        self.read_lock().is_some()
    }

    fn get(&self, key: &[u8], isolation: IsolationLevel) -> Result<Option<Vec<u8>>> {
        self.read(|open| open.get(key, isolation))
    }

    /// Visits under the read lock, so the value is neither copied nor changed meanwhile.
    fn visit_value(
        &self,
        key: &[u8],
        isolation: IsolationLevel,
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()> {
        self.read(|open| open.visit(key, isolation, visit))
    }

    fn scan(
        &self,
        bounds: &KeyBounds,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<KeyValueIterator> {
        self.read(|open| {
            if bounds.is_empty() {
                return Ok(KeyValueIterator::empty());
            }
            let staged = match isolation {
                IsolationLevel::ReadUncommitted => open.overlay.snapshot(bounds, order),
                IsolationLevel::ReadCommitted => OverlaySnapshot::default(),
            };
            let committed = open.committed.scan(bounds, order)?;
            Ok(KeyValueIterator::merged(committed, staged, order))
        })
    }

    /// Merges the overlay in place instead of copying its range, as a scan must.
    fn first_in(
        &self,
        bounds: &KeyBounds,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<Option<KeyValue>> {
        self.read(|open| {
            if bounds.is_empty() {
                return Ok(None);
            }
            let mut committed = owned_entries(open.committed.scan(bounds, order)?);
            if isolation == IsolationLevel::ReadCommitted || open.overlay.is_empty() {
                return committed.next().transpose();
            }
            let staged = open
                .overlay
                .writes_in(bounds, order)
                .map(|(key, value)| (key.to_vec(), value.map(<[u8]>::to_vec)));
            let hidden = |key: &[u8]| open.overlay.range_deleted(key);
            KeyValueIterator::first_merged(committed, staged, hidden, order).transpose()
        })
    }

    fn approximate_num_entries(&self, isolation: IsolationLevel) -> Result<u64> {
        self.read(|open| {
            let committed = open.committed.approximate_num_entries()?;
            Ok(match isolation {
                IsolationLevel::ReadCommitted => committed,
                IsolationLevel::ReadUncommitted => {
                    committed.saturating_add_signed(open.overlay.entry_count_delta())
                }
            })
        })
    }

    fn backend_property(&self, name: &str) -> Result<Option<u64>> {
        self.read(|open| open.committed.property(name))
    }

    fn put(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Result<()> {
        self.write(|open| {
            open.overlay.put(key, value);
            Ok(())
        })
    }

    fn put_if_absent(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
        self.write(|open| {
            let existing = open.get(&key, IsolationLevel::ReadUncommitted)?;
            if existing.is_none() {
                open.overlay.put(key, value);
            }
            Ok(existing)
        })
    }

    fn put_all(&self, entries: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        self.write(|open| {
            for (key, value) in entries {
                open.overlay.put(key, value);
            }
            Ok(())
        })
    }

    fn delete(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.write(|open| {
            let existing = open.get(key, IsolationLevel::ReadUncommitted)?;
            open.overlay.put(key.to_vec(), None);
            Ok(existing)
        })
    }

    fn delete_range(&self, from: &[u8], to: &[u8]) -> Result<()> {
        self.write(|open| {
            open.overlay.delete_range(from, to);
            Ok(())
        })
    }

    fn commit(&self, metadata: &CommitMetadata) -> Result<()> {
        self.write(|open| {
            let (next_offsets, changes) = open.offsets.after(metadata)?;
            if open.overlay.is_empty() && changes.is_empty() {
                return Ok(());
            }
            open.committed.apply(&open.overlay, &changes)?;
            open.overlay.clear();
            open.offsets = next_offsets;
            Ok(())
        })
    }

    fn rollback(&self) -> Result<()> {
        self.write(|open| {
            open.overlay.clear();
            Ok(())
        })
    }

    fn committed_offset(&self, partition: &TopicPartition) -> Result<Option<i64>> {
        self.read(|open| Ok(open.offsets.offset(partition)))
    }

    fn committed_position(&self) -> Result<Option<Vec<u8>>> {
        self.read(|open| Ok(open.offsets.position().map(<[u8]>::to_vec)))
    }

    fn settle_value_layout(
        &self,
        wanted: ValueLayout,
        kind: &str,
        holds_value: &dyn Fn(&[u8]) -> bool,
    ) -> Result<Option<ValueLayout>> {
        self.write(|open| {
            if !open.overlay.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "the value layout of store {} is settled before any write",
                    self.name
                )));
            }
            match value_layout::settle(&self.name, kind, open.offsets.value_layout(), wanted)? {
                Settlement::Nothing => Ok(None),
                Settlement::Record => {
                    let (next, changes) = open.offsets.with_layout(wanted, None);
                    open.committed.apply(&Overlay::default(), &changes)?;
                    open.offsets = next;
                    Ok(None)
                }
                Settlement::Rewrite {
                    from,
                    prefix,
                    mut after,
                } => loop {
                    let (rewritten, last_key) =
                        open.rewritten_chunk(after.as_deref(), prefix, holds_value)?;
                    let progress = last_key
                        .clone()
                        .map(|done_through| UpgradeProgress { from, done_through });
                    let (next, changes) = open.offsets.with_layout(wanted, progress);
                    open.committed.apply(&rewritten, &changes)?;
                    open.offsets = next;
                    match last_key {
                        Some(key) => after = Some(key),
                        None => return Ok(Some(from)),
                    }
                },
            }
        })
    }

    fn approximate_uncommitted_bytes(&self) -> u64 {
        self.uncommitted_bytes.load(AtomicOrdering::Relaxed)
    }

    fn close(&self) -> Result<()> {
        let open = self.write_lock().take();
        self.uncommitted_bytes.store(0, AtomicOrdering::Relaxed);
        match open {
            Some(open) => open.committed.close(),
            None => Ok(()),
        }
    }
}

impl<B> std::fmt::Debug for TransactionalStore<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransactionalStore")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
