//! Key-ordered window store: Kafka Streams' segmented RocksDB window store
//! (`RocksDBWindowStore` over `RocksDBSegmentedBytesStore` with `WindowKeySchema`) on a
//! transactional key-value store.
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

use std::sync::atomic::{AtomicI32, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::store::format::ordered_bytes::{lower_range, upper_range};
use crate::store::format::window_key::{WindowKeyLayout, SEQNUM_SIZE};
use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::{is_inverted, segments_lifecycle, RetentionEdge, Segments};
use crate::store::value_layout::ValueLayout;
use crate::store::window::{
    max_suffix, next_seqnum, Filter, WindowStore, WindowStoreOptions, WindowValues, WindowedRecord,
    WindowedRecords,
};
use crate::store::{IsolationLevel, KeyValueStore, Order, Result, SegmentedStore};

/// A transactional key-ordered window store over a key-value store it owns entirely.
pub struct KeyOrderedWindowStore<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    segments: Segments<S>,
    retain_duplicates: bool,
    /// Sequence number of the last put when retaining duplicates. Like Kafka Streams it
    /// lives in memory only and restarts at 0 when the store is opened.
    seqnum: AtomicI32,
}

impl<S: KeyValueStore + ?Sized> KeyOrderedWindowStore<S> {
    /// A window store over `kv`, resuming the stream time committed in it.
    pub fn open(kv: Arc<S>, options: WindowStoreOptions) -> Result<Self> {
        Ok(KeyOrderedWindowStore {
            segments: Segments::open(
                kv,
                options.retention_period,
                options.segment_interval,
                RetentionEdge::Expired,
            )?,
            retain_duplicates: options.retain_duplicates,
            seqnum: AtomicI32::new(0),
        })
    }

    /// Scans the store keys in `lower..=upper` of the segments holding the window starts
    /// `filter` reads.
    fn records(
        &self,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        filter: Filter,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowedRecords> {
        let entries = self.segments.scan(
            filter.time_from,
            filter.time_to,
            lower,
            upper,
            order,
            isolation,
        )?;
        Ok(Box::new(self.segments.decode_each(
            entries,
            move |store_key, value| {
                let window_key = WindowKeyLayout::KeyFirst.decode(store_key)?;
                Ok(filter
                    .admits(window_key.key, window_key.window_start)
                    .then(|| WindowedRecord {
                        key: window_key.key.to_vec(),
                        window_start: window_key.window_start,
                        value,
                    }))
            },
        )))
    }
}

impl<S: KeyValueStore + ?Sized> WindowStore for KeyOrderedWindowStore<S> {
    fn put(&self, key: &[u8], value: Option<Vec<u8>>, window_start: i64) -> Result<()> {
        if value.is_none() && self.retain_duplicates {
            return Ok(());
        }
        let seqnum = next_seqnum(&self.seqnum, self.retain_duplicates);
        let store_key = WindowKeyLayout::KeyFirst.encode(key, window_start, seqnum);
        self.segments
            .put(window_start, &store_key, value)
            .map(|_| ())
    }

    fn fetch(
        &self,
        key: &[u8],
        window_start: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Vec<u8>>> {
        let seqnum = self.seqnum.load(AtomicOrdering::Relaxed);
        let store_key = WindowKeyLayout::KeyFirst.encode(key, window_start, seqnum);
        self.segments.get(window_start, &store_key, isolation)
    }

    fn fetch_key(
        &self,
        key: &[u8],
        time_from: i64,
        time_to: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowValues> {
        let Some(actual_from) = self.segments.live_from(time_from, time_to) else {
            return Ok(Box::new(std::iter::empty()));
        };
        let lower = WindowKeyLayout::KeyFirst.encode(key, actual_from.max(0), 0);
        let upper = WindowKeyLayout::KeyFirst.encode(key, time_to, i32::MAX);
        let filter = Filter::new(Some(key), Some(key), actual_from, time_to);
        let records = self.records(Some(&lower), Some(&upper), filter, order, isolation)?;
        Ok(Box::new(
            records.map(|record| record.map(|r| (r.window_start, r.value))),
        ))
    }

    fn fetch_key_range(
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
        let Some(actual_from) = self.segments.live_from(time_from, time_to) else {
            return Ok(Box::new(std::iter::empty()));
        };
        let lower = key_from.map(|key| lower_range(key, TIMESTAMP_SIZE + SEQNUM_SIZE));
        let upper = key_to.map(|key| upper_range(key, &max_suffix(time_to)));
        let filter = Filter::new(key_from, key_to, actual_from, time_to);
        self.records(lower.as_deref(), upper.as_deref(), filter, order, isolation)
    }
}

impl<S: KeyValueStore + ?Sized> SegmentedStore for KeyOrderedWindowStore<S> {
    segments_lifecycle!();

    fn settle_value_layout(&self, wanted: ValueLayout) -> Result<Option<ValueLayout>> {
        self.segments
            .settle_value_layout(wanted, "window", |_| true)
    }

    fn restore(&self, records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        self.segments.restore_as_stored(records, |key| {
            Ok(WindowKeyLayout::KeyFirst.decode(key)?.window_start)
        })
    }
}
