//! Time-ordered window store: Kafka Streams' `RocksDBTimeOrderedWindowStore` (over
//! `RocksDBTimeOrderedWindowSegmentedBytesStore`), the store of stream-stream outer joins
//! and of windowed aggregations that emit final results, on a transactional key-value
//! store.
//!
//! Records live under the time-first base key `0x00 ‖ start ‖ key ‖ seqnum` in the segment
//! of their window start, so [`fetch_all`](WindowStore::fetch_all) and
//! [`all`](WindowStore::all) come out by window start, then key bytes, then insertion
//! order. A store opened with an index also keeps the key-first index key
//! `0x01 ‖ key ‖ start ‖ seqnum → empty` next to each record, and answers key lookups from
//! it (in key-first order, each value read from the base key); without an index, key
//! lookups scan the base keys of the time range, in time order.
//!
//! Retention is that of the [`KeyOrderedWindowStore`] with one difference Kafka Streams has
//! too: a window starting exactly `retention` before stream time is still readable.
//!
//! [`KeyOrderedWindowStore`]: crate::store::key_ordered_window::KeyOrderedWindowStore

use std::sync::atomic::{AtomicI32, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::store::format::window_key::{
    WindowKeyLayout, KEY_FIRST_PREFIX, SEQNUM_SIZE, TIME_FIRST_PREFIX,
};
use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::{
    index_lower_range, index_upper_range, is_inverted, segments_lifecycle, RetentionEdge, Segments,
};
use crate::store::value_layout::ValueLayout;
use crate::store::window::{
    max_suffix, next_seqnum, Filter, WindowStore, WindowStoreOptions, WindowValues, WindowedRecord,
    WindowedRecords,
};
use crate::store::{IsolationLevel, KeyValueStore, Order, Result, SegmentedStore};

const BASE: WindowKeyLayout = WindowKeyLayout::PrefixedTimeFirst;
const INDEX: WindowKeyLayout = WindowKeyLayout::PrefixedKeyFirst;

/// A transactional time-ordered window store over a key-value store it owns entirely.
pub struct TimeOrderedWindowStore<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    segments: Segments<S>,
    retain_duplicates: bool,
    with_index: bool,
    /// Sequence number of the last put when retaining duplicates; in memory only, like
    /// Kafka Streams'.
    seqnum: AtomicI32,
}

impl<S: KeyValueStore + ?Sized> TimeOrderedWindowStore<S> {
    /// A time-ordered window store over `kv`, resuming the stream time committed in it.
    /// `with_index` keeps the key-first index (Kafka Streams' `hasIndex`).
    pub fn open(kv: Arc<S>, options: WindowStoreOptions, with_index: bool) -> Result<Self> {
        Ok(TimeOrderedWindowStore {
            segments: Segments::open(
                kv,
                options.retention_period,
                options.segment_interval,
                RetentionEdge::Live,
            )?,
            retain_duplicates: options.retain_duplicates,
            with_index,
            seqnum: AtomicI32::new(0),
        })
    }

    /// Scans the `layout` keys in `lower..=upper` of the segments holding the window starts
    /// `filter` reads.
    /// Base keys carry their values; index keys are resolved to their base key's value
    /// while reading, so the result is read in full before it is returned.
    fn records(
        &self,
        layout: WindowKeyLayout,
        lower: &[u8],
        upper: &[u8],
        filter: Filter,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowedRecords> {
        let entries = self.segments.scan(
            filter.time_from,
            filter.time_to,
            Some(lower),
            Some(upper),
            order,
            isolation,
        )?;
        let admitted = self.segments.decode_each(entries, move |store_key, value| {
            let window_key = layout.decode(store_key)?;
            Ok(filter
                .admits(window_key.key, window_key.window_start)
                .then(|| {
                    let record = WindowedRecord {
                        key: window_key.key.to_vec(),
                        window_start: window_key.window_start,
                        value,
                    };
                    (record, window_key.seqnum)
                }))
        });
        if layout == BASE {
            return Ok(Box::new(
                admitted.map(|entry| entry.map(|(record, _)| record)),
            ));
        }
        let found = admitted.map(|entry| {
            entry.map(|(record, seqnum)| {
                let base_key = BASE.encode(&record.key, record.window_start, seqnum);
                (record.window_start, base_key, record)
            })
        });
        self.segments
            .resolve_indexed(found, isolation, |record, value| WindowedRecord {
                value,
                ..record
            })
    }
}

impl<S: KeyValueStore + ?Sized> WindowStore for TimeOrderedWindowStore<S> {
    fn put(&self, key: &[u8], value: Option<Vec<u8>>, window_start: i64) -> Result<()> {
        if value.is_none() && self.retain_duplicates {
            return Ok(());
        }
        let seqnum = next_seqnum(&self.seqnum, self.retain_duplicates);
        let index_key = self
            .with_index
            .then(|| INDEX.encode(key, window_start, seqnum));
        self.segments.put_indexed(
            window_start,
            index_key,
            &BASE.encode(key, window_start, seqnum),
            value,
        )
    }

    fn fetch(
        &self,
        key: &[u8],
        window_start: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Vec<u8>>> {
        let seqnum = self.seqnum.load(AtomicOrdering::Relaxed);
        self.segments.get(
            window_start,
            &BASE.encode(key, window_start, seqnum),
            isolation,
        )
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
        let filter = Filter::new(Some(key), Some(key), actual_from, time_to);
        let layout = if self.with_index { INDEX } else { BASE };
        let lower = layout.encode(key, actual_from.max(0), 0);
        let upper = layout.encode(key, time_to, i32::MAX);
        let records = self.records(layout, &lower, &upper, filter, order, isolation)?;
        Ok(Box::new(
            records.map(|record| record.map(|r| (r.window_start, r.value))),
        ))
    }

    /// Through the index, by key first as in the key-ordered store; without it, by time.
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
        let filter = Filter::new(key_from, key_to, actual_from, time_to);
        let (layout, lower, upper) = if self.with_index {
            (
                INDEX,
                index_lower_range(KEY_FIRST_PREFIX, key_from, TIMESTAMP_SIZE + SEQNUM_SIZE),
                index_upper_range(KEY_FIRST_PREFIX, key_to, &max_suffix(time_to)),
            )
        } else {
            (
                BASE,
                base_lower_range(key_from, actual_from),
                base_upper_range(key_to, time_to),
            )
        };
        self.records(layout, &lower, &upper, filter, order, isolation)
    }

    /// By window start, then key bytes, then insertion order: the base keys are read even
    /// when there is an index.
    fn fetch_all(
        &self,
        time_from: i64,
        time_to: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<WindowedRecords> {
        let Some(actual_from) = self.segments.live_from(time_from, time_to) else {
            return Ok(Box::new(std::iter::empty()));
        };
        let filter = Filter::new(None, None, actual_from, time_to);
        let lower = base_lower_range(None, actual_from);
        let upper = base_upper_range(None, time_to);
        self.records(BASE, &lower, &upper, filter, order, isolation)
    }
}

impl<S: KeyValueStore + ?Sized> SegmentedStore for TimeOrderedWindowStore<S> {
    segments_lifecycle!();

    /// Index entries (key-first, empty values) keep their values; the base records change.
    fn settle_value_layout(&self, wanted: ValueLayout) -> Result<Option<ValueLayout>> {
        self.segments
            .settle_value_layout(wanted, "window", |store_key| {
                store_key.first() == Some(&TIME_FIRST_PREFIX)
            })
    }

    /// The changelog keys are the (unprefixed) key-first window keys every window store's
    /// changelog uses; each becomes a base key and, with an index, an index key.
    fn restore(&self, records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        self.segments.restore_indexed(records, |changelog_key| {
            let window_key = WindowKeyLayout::KeyFirst.decode(changelog_key)?;
            let (key, start, seqnum) = (window_key.key, window_key.window_start, window_key.seqnum);
            let index_key = self.with_index.then(|| INDEX.encode(key, start, seqnum));
            Ok((start, BASE.encode(key, start, seqnum), index_key))
        })
    }
}

/// `TimeFirstWindowKeySchema.lowerRange`: `0x00 ‖ from ‖ key`, or `0x00 ‖ from` for any key.
fn base_lower_range(key_from: Option<&[u8]>, from: i64) -> Vec<u8> {
    [
        &[TIME_FIRST_PREFIX][..],
        &from.to_be_bytes(),
        key_from.unwrap_or_default(),
    ]
    .concat()
}

/// `TimeFirstWindowKeySchema.upperRange`: `0x00 ‖ to ‖ 0xFF… (key length) ‖ i32::MAX`, or
/// the first index key for any key.
fn base_upper_range(key_to: Option<&[u8]>, to: i64) -> Vec<u8> {
    match key_to {
        None => vec![KEY_FIRST_PREFIX],
        Some(key) => {
            let mut upper = Vec::with_capacity(1 + TIMESTAMP_SIZE + key.len() + SEQNUM_SIZE);
            upper.push(TIME_FIRST_PREFIX);
            upper.extend_from_slice(&to.to_be_bytes());
            upper.resize(upper.len() + key.len(), 0xFF);
            upper.extend_from_slice(&i32::MAX.to_be_bytes());
            upper
        }
    }
}
