//! Window store: Kafka Streams' segmented RocksDB window store (`RocksDBWindowStore` over
//! `RocksDBSegmentedBytesStore` with `WindowKeySchema`) on a transactional key-value store.
//!
//! Records are `(key, window start) → value`, stored under the key-first window key
//! `key ‖ start ‖ seqnum` in the segment of their window start. Reads return what Kafka
//! Streams returns, in its order: segment by segment (ascending window-start segments, or
//! descending for backward reads), and inside a segment by the bytes of the store key. A
//! single-key fetch therefore comes out by window start then insertion order; range fetches
//! interleave keys within a segment by their byte layout, exactly like Kafka Streams.
//!
//! Retention follows observed stream time (the largest window start written): windows
//! starting at or before `stream time - retention` are invisible, writes to expired
//! segments are dropped, and expired segments are deleted with the next live write.
//!
//! Writes are staged in the underlying store and become durable with its
//! [`commit`](WindowStore::commit); [`rollback`](WindowStore::rollback) drops them.

use std::sync::atomic::{AtomicI32, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::store::format::ordered_bytes::{lower_range, upper_range};
use crate::store::format::window_key::{WindowKeyLayout, SEQNUM_SIZE};
use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::{
    is_inverted, malformed_changelog_key, segmented_store_lifecycle, RetentionEdge, Segments,
};
use crate::store::{IsolationLevel, KeyValueStore, Order, Result};

/// Kafka Streams' default segment interval for a retention period:
/// `max(retention / 2, 60 000 ms)`.
pub fn default_segment_interval(retention_period: i64) -> i64 {
    (retention_period / 2).max(60_000)
}

/// How a window store keeps its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowStoreOptions {
    /// How long after stream time passes a window start the window stays readable (ms).
    pub retention_period: i64,
    /// Width of a segment, the unit in which expired windows are deleted (ms).
    pub segment_interval: i64,
    /// Keep every put as its own record (stream-stream joins) instead of overwriting.
    pub retain_duplicates: bool,
}

impl WindowStoreOptions {
    /// Options with Kafka Streams' default segment interval.
    pub fn new(retention_period: i64, retain_duplicates: bool) -> Self {
        WindowStoreOptions {
            retention_period,
            segment_interval: default_segment_interval(retention_period),
            retain_duplicates,
        }
    }
}

/// One record of a multi-key window read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowedRecord {
    /// Record key.
    pub key: Vec<u8>,
    /// Start of the record's window (its end is start + window size, known to the caller).
    pub window_start: i64,
    /// Record value.
    pub value: Vec<u8>,
}

/// Records of a multi-key window read, in Kafka Streams' order.
pub type WindowedRecords = Box<dyn Iterator<Item = Result<WindowedRecord>> + Send>;

/// `(window start, value)` pairs of a single-key window read, in Kafka Streams' order.
pub type WindowValues = Box<dyn Iterator<Item = Result<(i64, Vec<u8>)>> + Send>;

/// A transactional window store over a key-value store it owns entirely.
pub struct WindowStore<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    segments: Segments<S>,
    retain_duplicates: bool,
    /// Sequence number of the last put when retaining duplicates. Like Kafka Streams it
    /// lives in memory only and restarts at 0 when the store is opened.
    seqnum: AtomicI32,
}

impl<S: KeyValueStore + ?Sized> WindowStore<S> {
    /// A window store over `kv`, resuming the stream time committed in it.
    pub fn open(kv: Arc<S>, options: WindowStoreOptions) -> Result<Self> {
        Ok(WindowStore {
            segments: Segments::open(kv, options.retention_period, options.segment_interval, RetentionEdge::Expired)?,
            retain_duplicates: options.retain_duplicates,
            seqnum: AtomicI32::new(0),
        })
    }

    /// Kafka Streams' `put(key, value, windowStartTimestamp)`. `None` deletes the window,
    /// except when retaining duplicates, where it does nothing at all.
    pub fn put(&self, key: &[u8], value: Option<Vec<u8>>, window_start: i64) -> Result<()> {
        if value.is_none() && self.retain_duplicates {
            return Ok(());
        }
        let seqnum = next_seqnum(&self.seqnum, self.retain_duplicates);
        let store_key = WindowKeyLayout::KeyFirst.encode(key, window_start, seqnum);
        self.segments.put(window_start, &store_key, value).map(|_| ())
    }

    /// Kafka Streams' `fetch(key, time)`: the value of the window starting at
    /// `window_start`. When retaining duplicates it looks up the latest sequence number
    /// only, as Kafka Streams does.
    pub fn fetch(&self, key: &[u8], window_start: i64, isolation: IsolationLevel) -> Result<Option<Vec<u8>>> {
        let seqnum = self.seqnum.load(AtomicOrdering::Relaxed);
        let store_key = WindowKeyLayout::KeyFirst.encode(key, window_start, seqnum);
        self.segments.get(window_start, &store_key, isolation)
    }

    /// Kafka Streams' `fetch(key, timeFrom, timeTo)` (`Order::Forward`) and
    /// `backwardFetch` (`Order::Reverse`): windows of `key` starting in `time_from..=time_to`.
    pub fn fetch_key(
        &self,
        key: &[u8],
        time_from: i64,
        time_to: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowValues> {
        let actual_from = self.segments.actual_from(time_from);
        if time_to < actual_from {
            return Ok(Box::new(std::iter::empty()));
        }
        let lower = WindowKeyLayout::KeyFirst.encode(key, actual_from.max(0), 0);
        let upper = WindowKeyLayout::KeyFirst.encode(key, time_to, i32::MAX);
        let filter = Filter::new(Some(key), Some(key), actual_from, time_to);
        let records = self.records(actual_from, time_to, Some(&lower), Some(&upper), filter, order, isolation)?;
        Ok(Box::new(records.map(|record| record.map(|r| (r.window_start, r.value)))))
    }

    /// Kafka Streams' `fetch(keyFrom, keyTo, timeFrom, timeTo)` and its backward variant;
    /// `None` leaves that end of the key range open. Empty when `key_from > key_to`.
    pub fn fetch_key_range(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        time_from: i64,
        time_to: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowedRecords> {
        if is_inverted(key_from, key_to) {
            return Ok(Box::new(std::iter::empty()));
        }
        let actual_from = self.segments.actual_from(time_from);
        if time_to < actual_from {
            return Ok(Box::new(std::iter::empty()));
        }
        let lower = key_from.map(|key| lower_range(key, TIMESTAMP_SIZE + SEQNUM_SIZE));
        let upper = key_to.map(|key| upper_range(key, &max_suffix(time_to)));
        let filter = Filter::new(key_from, key_to, actual_from, time_to);
        self.records(actual_from, time_to, lower.as_deref(), upper.as_deref(), filter, order, isolation)
    }

    /// Kafka Streams' `fetchAll(timeFrom, timeTo)` and `backwardFetchAll`.
    pub fn fetch_all(&self, time_from: i64, time_to: i64, order: Order, isolation: IsolationLevel) -> Result<WindowedRecords> {
        self.fetch_key_range(None, None, time_from, time_to, order, isolation)
    }

    /// Kafka Streams' `all()` and `backwardAll()`: every live window.
    pub fn all(&self, order: Order, isolation: IsolationLevel) -> Result<WindowedRecords> {
        let actual_from = self.segments.actual_from(0);
        let filter = Filter::new(None, None, actual_from, i64::MAX);
        self.records(actual_from, i64::MAX, None, None, filter, order, isolation)
    }

    /// Restores changelog records: keys in the key-first window key layout, `None` values
    /// deleting. Records of already expired segments are skipped.
    pub fn restore(&self, records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        let mut entries = Vec::with_capacity(records.len());
        for (store_key, value) in records {
            let window_start = WindowKeyLayout::KeyFirst
                .decode(&store_key)
                .map_err(malformed_changelog_key)?
                .window_start;
            entries.push((window_start, store_key, value));
        }
        self.segments.restore(entries)
    }

    segmented_store_lifecycle!("The largest window start written or restored so far (-1 before any).");

    #[allow(clippy::too_many_arguments)]
    fn records(
        &self,
        time_from: i64,
        time_to: i64,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        filter: Filter,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowedRecords> {
        let entries = self.segments.scan(time_from, time_to, lower, upper, order, isolation)?;
        Ok(Box::new(self.segments.decode_each(entries, move |store_key, value| {
            let window_key = WindowKeyLayout::KeyFirst.decode(store_key)?;
            Ok(filter.admits(window_key.key, window_key.window_start).then(|| WindowedRecord {
                key: window_key.key.to_vec(),
                window_start: window_key.window_start,
                value,
            }))
        })))
    }
}

/// The sequence number of the next put: 0, or when retaining duplicates the successor of
/// the last one, wrapping within non-negative `i32`s as Kafka Streams does.
pub(crate) fn next_seqnum(last: &AtomicI32, retain_duplicates: bool) -> i32 {
    if !retain_duplicates {
        return 0;
    }
    let next = last.load(AtomicOrdering::Relaxed).wrapping_add(1) & i32::MAX;
    last.store(next, AtomicOrdering::Relaxed);
    next
}

/// The largest suffix a window key up to `time_to` can have: `time_to ‖ i32::MAX`.
pub(crate) fn max_suffix(time_to: i64) -> [u8; TIMESTAMP_SIZE + SEQNUM_SIZE] {
    let mut suffix = [0u8; TIMESTAMP_SIZE + SEQNUM_SIZE];
    suffix[..TIMESTAMP_SIZE].copy_from_slice(&time_to.to_be_bytes());
    suffix[TIMESTAMP_SIZE..].copy_from_slice(&i32::MAX.to_be_bytes());
    suffix
}

/// Which scanned records a read returns: the scan bounds only narrow the search.
pub(crate) struct Filter {
    key_from: Option<Vec<u8>>,
    key_to: Option<Vec<u8>>,
    time_from: i64,
    time_to: i64,
}

impl Filter {
    /// Keys in `key_from..=key_to` (`None` = open end), window starts in `time_from..=time_to`.
    pub(crate) fn new(key_from: Option<&[u8]>, key_to: Option<&[u8]>, time_from: i64, time_to: i64) -> Self {
        Filter { key_from: key_from.map(<[u8]>::to_vec), key_to: key_to.map(<[u8]>::to_vec), time_from, time_to }
    }

    pub(crate) fn admits(&self, key: &[u8], window_start: i64) -> bool {
        self.key_from.as_deref().is_none_or(|from| key >= from)
            && self.key_to.as_deref().is_none_or(|to| key <= to)
            && (self.time_from..=self.time_to).contains(&window_start)
    }
}
