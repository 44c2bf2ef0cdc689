//! Time-ordered session store: Kafka Streams' `RocksDBTimeOrderedSessionStore` (over
//! `RocksDBTimeOrderedSessionSegmentedBytesStore`), the store of session aggregations that
//! emit final results, on a transactional key-value store.
//!
//! Sessions live under the time-first base key `0x00 ‖ end ‖ start ‖ key` in the segment of
//! their end, so [`find_sessions_ending_in`](TimeOrderedSessionStore::find_sessions_ending_in)
//! comes out by end, then start, then key bytes. A store opened with an index also keeps the
//! key-first index key `0x01 ‖ key ‖ end ‖ start → empty` next to each session and answers
//! key lookups from it, in the order of the [`KeyOrderedSessionStore`]; without an index,
//! key lookups scan the base keys, in time order.
//!
//! Retention is that of the [`KeyOrderedSessionStore`].
//!
//! [`KeyOrderedSessionStore`]: crate::store::key_ordered_session::KeyOrderedSessionStore

use std::sync::Arc;

use crate::store::format::session_key::{SessionKeyLayout, KEY_FIRST_PREFIX, TIME_FIRST_PREFIX};
use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::{
    index_lower_range, index_upper_range, is_inverted, segments_lifecycle, RetentionEdge, Segments,
};
use crate::store::session::{
    max_suffix, Filter, SessionRecord, SessionRecords, SessionStore, SessionStoreOptions,
};
use crate::store::value_layout::ValueLayout;
use crate::store::{IsolationLevel, KeyValueStore, Order, Result, SegmentedStore};

const BASE: SessionKeyLayout = SessionKeyLayout::PrefixedTimeFirst;
const INDEX: SessionKeyLayout = SessionKeyLayout::PrefixedKeyFirst;

/// A transactional time-ordered session store over a key-value store it owns entirely.
pub struct TimeOrderedSessionStore<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    segments: Segments<S>,
    with_index: bool,
}

impl<S: KeyValueStore + ?Sized> TimeOrderedSessionStore<S> {
    /// A time-ordered session store over `kv`, resuming the stream time committed in it.
    /// `with_index` keeps the key-first index (Kafka Streams' `withIndex`).
    pub fn open(kv: Arc<S>, options: SessionStoreOptions, with_index: bool) -> Result<Self> {
        Ok(TimeOrderedSessionStore {
            segments: Segments::open(
                kv,
                options.retention_period,
                options.segment_interval,
                RetentionEdge::Expired,
            )?,
            with_index,
        })
    }

    /// Kafka Streams' `findSessions(earliestSessionEndTime, latestSessionEndTime)`: the
    /// sessions of every key ending in `earliest_session_end..=latest_session_end`, by end,
    /// start, then key bytes. Kafka Streams has no backward variant.
    ///
    /// As in Kafka Streams, retention is not applied beyond dropped segments: expired
    /// sessions whose segment is still stored are returned, and a `latest_session_end` of
    /// `i64::MAX` overflows the scan's upper bound (`latest + 1`) into an empty scan.
    pub fn find_sessions_ending_in(
        &self,
        earliest_session_end: i64,
        latest_session_end: i64,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        let lower = BASE.encode(b"", 0, earliest_session_end.max(0));
        let upper = BASE.encode(b"", 0, latest_session_end.wrapping_add(1).max(0));
        let entries = self.segments.scan_stored(
            earliest_session_end,
            latest_session_end,
            &lower,
            &upper,
            isolation,
        )?;
        Ok(Box::new(self.segments.decode_each(
            entries,
            move |store_key, value| {
                let session = BASE.decode(store_key)?;
                let ends_in_range =
                    (earliest_session_end..=latest_session_end).contains(&session.end);
                Ok(ends_in_range.then(|| record(session.key, session.start, session.end, value)))
            },
        )))
    }

    /// Scans the `layout` keys in `lower..=upper` of every live segment from the earliest end
    /// `filter` reads on. Base keys carry their values; index keys are resolved to their
    /// base key's value while reading, so the result is read in full before it is returned.
    fn sessions(
        &self,
        layout: SessionKeyLayout,
        lower: &[u8],
        upper: &[u8],
        filter: Filter,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        // Any live segment may hold a matching session: sessions are segmented by end,
        // and a session ending arbitrarily late can have started early enough.
        let entries = self.segments.scan(
            filter.earliest_end,
            i64::MAX,
            Some(lower),
            Some(upper),
            order,
            isolation,
        )?;
        let admitted = self.segments.decode_each(entries, move |store_key, value| {
            let session = layout.decode(store_key)?;
            Ok(filter
                .admits(session.key, session.start, session.end)
                .then(|| record(session.key, session.start, session.end, value)))
        });
        if layout == BASE {
            return Ok(Box::new(admitted));
        }
        let found = admitted.map(|entry| {
            entry.map(|session| {
                let base_key = BASE.encode(&session.key, session.start, session.end);
                (session.end, base_key, session)
            })
        });
        self.segments
            .resolve_indexed(found, isolation, |session, value| SessionRecord {
                value,
                ..session
            })
    }
}

impl<S: KeyValueStore + ?Sized> SessionStore for TimeOrderedSessionStore<S> {
    fn put(&self, key: &[u8], start: i64, end: i64, value: Option<Vec<u8>>) -> Result<()> {
        let index_key = self.with_index.then(|| INDEX.encode(key, start, end));
        self.segments
            .put_indexed(end, index_key, &BASE.encode(key, start, end), value)
    }

    fn remove(&self, key: &[u8], start: i64, end: i64) -> Result<()> {
        self.segments.remove(end, &BASE.encode(key, start, end))?;
        if self.with_index {
            self.segments.remove(end, &INDEX.encode(key, start, end))?;
        }
        Ok(())
    }

    fn fetch_session(
        &self,
        key: &[u8],
        start: i64,
        end: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Vec<u8>>> {
        self.segments
            .get(end, &BASE.encode(key, start, end), isolation)
    }

    fn find_sessions(
        &self,
        key: &[u8],
        earliest_session_end: i64,
        latest_session_start: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        let actual_from = self.segments.actual_from(earliest_session_end);
        let filter = Filter::new(Some(key), Some(key), actual_from, latest_session_start);
        let layout = if self.with_index { INDEX } else { BASE };
        let lower = layout.encode(key, 0, actual_from.max(0));
        let upper = layout.encode(key, latest_session_start, i64::MAX);
        self.sessions(layout, &lower, &upper, filter, order, isolation)
    }

    fn find_sessions_in_range(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        earliest_session_end: i64,
        latest_session_start: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        if is_inverted(key_from, key_to) {
            return Ok(Box::new(std::iter::empty()));
        }
        let actual_from = self.segments.actual_from(earliest_session_end);
        let filter = Filter::new(key_from, key_to, actual_from, latest_session_start);
        let (layout, lower, upper) = if self.with_index {
            (
                INDEX,
                index_lower_range(KEY_FIRST_PREFIX, key_from, 2 * TIMESTAMP_SIZE),
                index_upper_range(KEY_FIRST_PREFIX, key_to, &max_suffix(latest_session_start)),
            )
        } else {
            (
                BASE,
                base_lower_range(key_from, actual_from),
                base_upper_range(key_to, latest_session_start),
            )
        };
        self.sessions(layout, &lower, &upper, filter, order, isolation)
    }
}

impl<S: KeyValueStore + ?Sized> SegmentedStore for TimeOrderedSessionStore<S> {
    segments_lifecycle!();

    /// Index entries (key-first, empty values) keep their values; the base records change.
    fn settle_value_layout(&self, wanted: ValueLayout) -> Result<Option<ValueLayout>> {
        self.segments
            .settle_value_layout(wanted, "session", |store_key| {
                store_key.first() == Some(&TIME_FIRST_PREFIX)
            })
    }

    /// The changelog keys are the (unprefixed) key-first session keys every session store's
    /// changelog uses; each becomes a base key and, with an index, an index key.
    fn restore(&self, records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        self.segments.restore_indexed(records, |changelog_key| {
            let session = SessionKeyLayout::KeyFirst.decode(changelog_key)?;
            let (key, start, end) = (session.key, session.start, session.end);
            let index_key = self.with_index.then(|| INDEX.encode(key, start, end));
            Ok((end, BASE.encode(key, start, end), index_key))
        })
    }
}

fn record(key: &[u8], start: i64, end: i64, value: Vec<u8>) -> SessionRecord {
    SessionRecord {
        key: key.to_vec(),
        start,
        end,
        value,
    }
}

/// `TimeFirstSessionKeySchema.lowerRange`: `0x00 ‖ from ‖ 0 ‖ key`, or `0x00 ‖ from` for
/// any key.
fn base_lower_range(key_from: Option<&[u8]>, from: i64) -> Vec<u8> {
    match key_from {
        None => [&[TIME_FIRST_PREFIX][..], &from.to_be_bytes()].concat(),
        Some(key) => BASE.encode(key, 0, from),
    }
}

/// `TimeFirstSessionKeySchema.upperRange`: `0x00 ‖ MAX ‖ latest start ‖ key`, or the first
/// index key for any key.
fn base_upper_range(key_to: Option<&[u8]>, latest_start: i64) -> Vec<u8> {
    match key_to {
        None => vec![KEY_FIRST_PREFIX],
        Some(key) => BASE.encode(key, latest_start, i64::MAX),
    }
}
