//! The window store contract shared by both key layouts: Kafka Streams' segmented window
//! store ([`KeyOrderedWindowStore`]) and its time-ordered one ([`TimeOrderedWindowStore`]).
//!
//! Records are `(key, window start) → value`. A layout decides how records are stored and
//! therefore in which order multi-key reads return them; the reads derived from others
//! (every key of a time range, every live window) are written once here.
//!
//! [`KeyOrderedWindowStore`]: crate::store::key_ordered_window::KeyOrderedWindowStore
//! [`TimeOrderedWindowStore`]: crate::store::time_ordered_window::TimeOrderedWindowStore

use std::sync::atomic::{AtomicI32, Ordering as AtomicOrdering};

use crate::store::format::window_key::SEQNUM_SIZE;
use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::KeyRange;
use crate::store::{IsolationLevel, Order, Result, SegmentedStore};

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

/// A transactional window store. Writes are staged in the key-value store underneath and
/// become durable with its [`commit`](SegmentedStore::commit).
///
/// Retention follows observed stream time (the largest window start written): expired
/// windows are invisible, writes to expired segments are dropped, and expired segments are
/// deleted with the next live write.
pub trait WindowStore: SegmentedStore {
    /// Kafka Streams' `put(key, value, windowStartTimestamp)`. `None` deletes the window,
    /// except when retaining duplicates, where it does nothing at all.
    fn put(&self, key: &[u8], value: Option<Vec<u8>>, window_start: i64) -> Result<()>;

    /// Kafka Streams' `fetch(key, time)`: the value of the window starting at
    /// `window_start`. When retaining duplicates it looks up the latest sequence number
    /// only, as Kafka Streams does.
    fn fetch(
        &self,
        key: &[u8],
        window_start: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Vec<u8>>>;

    /// Kafka Streams' `fetch(key, timeFrom, timeTo)` (`Order::Forward`) and
    /// `backwardFetch` (`Order::Reverse`): windows of `key` starting in
    /// `time_from..=time_to`, by start then insertion order.
    fn fetch_key(
        &self,
        key: &[u8],
        time_from: i64,
        time_to: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowValues>;

    /// Kafka Streams' `fetch(keyFrom, keyTo, timeFrom, timeTo)` and its backward variant;
    /// `None` leaves that end of the key range open. Empty when `key_from > key_to`.
    fn fetch_key_range(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        time_from: i64,
        time_to: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowedRecords>;

    /// Kafka Streams' `fetchAll(timeFrom, timeTo)` and `backwardFetchAll`: every key's
    /// windows starting in `time_from..=time_to`, as a key range with both ends open reads
    /// them. A layout that stores records by time overrides it to read them in time order.
    fn fetch_all(
        &self,
        time_from: i64,
        time_to: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowedRecords> {
        self.fetch_key_range(None, None, time_from, time_to, order, isolation)
    }

    /// Kafka Streams' `all()` and `backwardAll()`: every live window.
    fn all(&self, order: Order, isolation: IsolationLevel) -> Result<WindowedRecords> {
        self.fetch_all(0, i64::MAX, order, isolation)
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
    keys: KeyRange,
    /// The window starts read: the segments holding them are scanned.
    pub(crate) time_from: i64,
    pub(crate) time_to: i64,
}

impl Filter {
    /// Keys in `key_from..=key_to` (`None` = open end), window starts in `time_from..=time_to`.
    pub(crate) fn new(
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        time_from: i64,
        time_to: i64,
    ) -> Self {
        Filter {
            keys: KeyRange::new(key_from, key_to),
            time_from,
            time_to,
        }
    }

    pub(crate) fn admits(&self, key: &[u8], window_start: i64) -> bool {
        self.keys.contains(key) && (self.time_from..=self.time_to).contains(&window_start)
    }
}
