//! The transactional key-value store contract shared by every backend.
//!
//! Keys and values are bytes, ordered by unsigned byte comparison. Writes are staged in an
//! overlay until [`KeyValueStore::commit`] releases them together with the changelog
//! offsets they correspond to; [`KeyValueStore::rollback`] drops them. Reads name the
//! [`IsolationLevel`] they see. The stream thread that owns a store reads
//! [`IsolationLevel::ReadUncommitted`] (its own writes); interactive queries may read either
//! level from any thread, through a [`ReadView`].
//!
//! Window, session and versioned stores are built by wrapping a `KeyValueStore`: scans
//! take any [`KeyBounds`], and [`KeyValueStore::delete_range`] drops whole key ranges
//! (expired segments) transactionally.

use std::sync::Arc;

use crate::store::bounds::KeyBounds;
use crate::store::error::Result;
use crate::store::iter::{KeyValue, KeyValueIterator, Order};
use crate::store::offsets::{CommitMetadata, TopicPartition};
use crate::store::value_layout::ValueLayout;

/// Which writes a read sees (KIP-892's interactive-query isolation levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    /// Committed state only: what survives a crash.
    ReadCommitted,
    /// Committed state with the current commit's staged writes over it.
    ReadUncommitted,
}

/// A transactional key-value store of bytes. Implementations are `Send + Sync`: one thread
/// writes, any thread may read, and a reader never sees part of a commit.
///
/// After [`close`](KeyValueStore::close) every operation except `close`, `is_open`, `name`
/// and `approximate_uncommitted_bytes` fails with [`Error::Closed`](crate::store::Error).
pub trait KeyValueStore: Send + Sync {
    /// The store's name.
    fn name(&self) -> &str;

    /// False once the store was closed.
    fn is_open(&self) -> bool;

    /// The value of `key`, if any.
    fn get(&self, key: &[u8], isolation: IsolationLevel) -> Result<Option<Vec<u8>>>;

    /// Hands the value of `key` (or `None`) to `visit` while the store holds it: for callers
    /// that copy it elsewhere anyway, such as into a Java array. Backends override it to
    /// spare the copy [`get`](Self::get) makes.
    fn visit_value(
        &self,
        key: &[u8],
        isolation: IsolationLevel,
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()> {
        visit(self.get(key, isolation)?.as_deref());
        Ok(())
    }

    /// Entries in `bounds`, in `order`. The result is fixed at creation: later writes and
    /// commits do not show through it.
    fn scan(
        &self,
        bounds: &KeyBounds,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<KeyValueIterator>;

    /// The first entry [`scan`](Self::scan) would return: a neighbour lookup. Backends
    /// override it to skip setting up a whole scan.
    fn first_in(
        &self,
        bounds: &KeyBounds,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<Option<KeyValue>> {
        self.scan(bounds, order, isolation)?.next().transpose()
    }

    /// An estimate of the number of entries (exact for the in-memory committed state).
    fn approximate_num_entries(&self, isolation: IsolationLevel) -> Result<u64>;

    /// A numeric property of the backend's committed state, by the backend's name for it
    /// (RocksDB's `rocksdb.*` properties, which Kafka Streams' RocksDB metrics read);
    /// `None` where the backend has no such property.
    fn backend_property(&self, name: &str) -> Result<Option<u64>>;

    /// Stages `value` for `key`; `None` deletes it (Kafka Streams' `put(key, null)`).
    fn put(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Result<()>;

    /// Stages `value` unless `key` has a value; returns the value it had.
    fn put_if_absent(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Result<Option<Vec<u8>>>;

    /// Stages every entry, in order; `None` values delete.
    fn put_all(&self, entries: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()>;

    /// Stages the deletion of `key`; returns the value it had.
    fn delete(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Stages the deletion of every key in `[from, to)`; a later `put` in the range wins.
    fn delete_range(&self, from: &[u8], to: &[u8]) -> Result<()>;

    /// Makes the staged writes durable together with `metadata`, atomically, then clears
    /// the overlay. On error nothing was committed and the overlay is kept.
    fn commit(&self, metadata: &CommitMetadata) -> Result<()>;

    /// Drops the staged writes (transaction abort).
    fn rollback(&self) -> Result<()>;

    /// The changelog offset committed for `partition`, if any.
    fn committed_offset(&self, partition: &TopicPartition) -> Result<Option<i64>>;

    /// The interactive-query position committed last, as the caller serialized it.
    fn committed_position(&self) -> Result<Option<Vec<u8>>>;

    /// Brings the committed values to `wanted` and records it (see
    /// [`value_layout`](crate::store::value_layout)): of the keys `holds_value` accepts,
    /// every value is rewritten when `wanted` upgrades the recorded layout; a layout that
    /// cannot read the recorded one is refused, naming the store a `kind` store. For a store
    /// just opened, before any write. Returns the layout the values were upgraded from, if
    /// they were.
    fn settle_value_layout(
        &self,
        wanted: ValueLayout,
        kind: &str,
        holds_value: &dyn Fn(&[u8]) -> bool,
    ) -> Result<Option<ValueLayout>>;

    /// Approximate bytes staged since the last commit or rollback; O(1), lock-free, 0 once
    /// closed.
    fn approximate_uncommitted_bytes(&self) -> u64;

    /// Closes the store, discarding staged writes. Closing again does nothing.
    fn close(&self) -> Result<()>;

    /// Kafka Streams' `range(from, to)`: both ends inclusive, `None` = open, empty when
    /// `from > to`.
    fn range(
        &self,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        isolation: IsolationLevel,
    ) -> Result<KeyValueIterator> {
        self.scan(&KeyBounds::inclusive(from, to), Order::Forward, isolation)
    }

    /// Kafka Streams' `reverseRange(from, to)`: [`range`](Self::range), descending.
    fn reverse_range(
        &self,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        isolation: IsolationLevel,
    ) -> Result<KeyValueIterator> {
        self.scan(&KeyBounds::inclusive(from, to), Order::Reverse, isolation)
    }

    /// Every entry, ascending.
    fn all(&self, isolation: IsolationLevel) -> Result<KeyValueIterator> {
        self.scan(&KeyBounds::all(), Order::Forward, isolation)
    }

    /// Every entry, descending.
    fn reverse_all(&self, isolation: IsolationLevel) -> Result<KeyValueIterator> {
        self.scan(&KeyBounds::all(), Order::Reverse, isolation)
    }

    /// Entries whose key starts with `prefix`, ascending.
    fn prefix_scan(&self, prefix: &[u8], isolation: IsolationLevel) -> Result<KeyValueIterator> {
        self.scan(&KeyBounds::prefix(prefix), Order::Forward, isolation)
    }
}

/// A read-only handle on a store at one isolation level, for interactive queries and other
/// threads (Kafka Streams' `readOnly(IsolationLevel)`).
pub struct ReadView<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    store: Arc<S>,
    isolation: IsolationLevel,
}

impl<S: KeyValueStore + ?Sized> Clone for ReadView<S> {
    fn clone(&self) -> Self {
        ReadView {
            store: Arc::clone(&self.store),
            isolation: self.isolation,
        }
    }
}

impl<S: KeyValueStore + ?Sized> ReadView<S> {
    /// A view of `store` at `isolation`.
    pub fn new(store: Arc<S>, isolation: IsolationLevel) -> Self {
        ReadView { store, isolation }
    }

    /// The level this view reads at.
    pub fn isolation(&self) -> IsolationLevel {
        self.isolation
    }

    /// See [`KeyValueStore::get`].
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.store.get(key, self.isolation)
    }

    /// See [`KeyValueStore::scan`].
    pub fn scan(&self, bounds: &KeyBounds, order: Order) -> Result<KeyValueIterator> {
        self.store.scan(bounds, order, self.isolation)
    }

    /// See [`KeyValueStore::range`].
    pub fn range(&self, from: Option<&[u8]>, to: Option<&[u8]>) -> Result<KeyValueIterator> {
        self.store.range(from, to, self.isolation)
    }

    /// See [`KeyValueStore::reverse_range`].
    pub fn reverse_range(
        &self,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
    ) -> Result<KeyValueIterator> {
        self.store.reverse_range(from, to, self.isolation)
    }

    /// See [`KeyValueStore::all`].
    pub fn all(&self) -> Result<KeyValueIterator> {
        self.store.all(self.isolation)
    }

    /// See [`KeyValueStore::reverse_all`].
    pub fn reverse_all(&self) -> Result<KeyValueIterator> {
        self.store.reverse_all(self.isolation)
    }

    /// See [`KeyValueStore::prefix_scan`].
    pub fn prefix_scan(&self, prefix: &[u8]) -> Result<KeyValueIterator> {
        self.store.prefix_scan(prefix, self.isolation)
    }

    /// See [`KeyValueStore::approximate_num_entries`].
    pub fn approximate_num_entries(&self) -> Result<u64> {
        self.store.approximate_num_entries(self.isolation)
    }
}
