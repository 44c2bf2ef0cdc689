//! Key-ordered session store: Kafka Streams' segmented RocksDB session store
//! (`RocksDBSessionStore` over `RocksDBSegmentedBytesStore` with `SessionKeySchema`) on a
//! transactional key-value store.
//!
//! A session is `(key, start, end) → aggregate`, stored under the key-first session key
//! `key ‖ end ‖ start` in the segment of its end. Reads come out as Kafka Streams returns
//! them: segment by segment by session end, then by store-key bytes inside a segment.

use std::sync::Arc;

use crate::store::format::ordered_bytes::{lower_range, upper_range};
use crate::store::format::session_key::SessionKeyLayout;
use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::{is_inverted, segments_lifecycle, RetentionEdge, Segments};
use crate::store::session::{
    max_suffix, Filter, SessionRecord, SessionRecords, SessionStore, SessionStoreOptions,
};
use crate::store::value_layout::ValueLayout;
use crate::store::{IsolationLevel, KeyValueStore, Order, Result, SegmentedStore};

/// A transactional key-ordered session store over a key-value store it owns entirely.
pub struct KeyOrderedSessionStore<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    segments: Segments<S>,
}

impl<S: KeyValueStore + ?Sized> KeyOrderedSessionStore<S> {
    /// A session store over `kv`, resuming the stream time committed in it.
    pub fn open(kv: Arc<S>, options: SessionStoreOptions) -> Result<Self> {
        let segments = Segments::open(
            kv,
            options.retention_period,
            options.segment_interval,
            RetentionEdge::Expired,
        )?;
        Ok(KeyOrderedSessionStore { segments })
    }

    /// Scans the store keys in `lower..=upper` of every live segment from the earliest end
    /// `filter` reads on.
    fn sessions(
        &self,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        filter: Filter,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        // Any live segment may hold a matching session: sessions are segmented by end,
        // and a session ending arbitrarily late can have started early enough.
        let entries = self.segments.scan(
            filter.earliest_end,
            i64::MAX,
            lower,
            upper,
            order,
            isolation,
        )?;
        Ok(Box::new(self.segments.decode_each(
            entries,
            move |store_key, value| {
                let session = SessionKeyLayout::KeyFirst.decode(store_key)?;
                Ok(filter
                    .admits(session.key, session.start, session.end)
                    .then(|| SessionRecord {
                        key: session.key.to_vec(),
                        start: session.start,
                        end: session.end,
                        value,
                    }))
            },
        )))
    }
}

impl<S: KeyValueStore + ?Sized> SessionStore for KeyOrderedSessionStore<S> {
    fn put(&self, key: &[u8], start: i64, end: i64, value: Option<Vec<u8>>) -> Result<()> {
        let store_key = SessionKeyLayout::KeyFirst.encode(key, start, end);
        self.segments.put(end, &store_key, value).map(|_| ())
    }

    fn remove(&self, key: &[u8], start: i64, end: i64) -> Result<()> {
        self.segments
            .remove(end, &SessionKeyLayout::KeyFirst.encode(key, start, end))
    }

    fn fetch_session(
        &self,
        key: &[u8],
        start: i64,
        end: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Vec<u8>>> {
        self.segments.get(
            end,
            &SessionKeyLayout::KeyFirst.encode(key, start, end),
            isolation,
        )
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
        let lower = SessionKeyLayout::KeyFirst.encode(key, 0, actual_from.max(0));
        let upper = SessionKeyLayout::KeyFirst.encode(key, latest_session_start, i64::MAX);
        let filter = Filter::new(Some(key), Some(key), actual_from, latest_session_start);
        self.sessions(Some(&lower), Some(&upper), filter, order, isolation)
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
        let lower = key_from.map(|key| lower_range(key, 2 * TIMESTAMP_SIZE));
        let upper = key_to.map(|key| upper_range(key, &max_suffix(latest_session_start)));
        let filter = Filter::new(key_from, key_to, actual_from, latest_session_start);
        self.sessions(lower.as_deref(), upper.as_deref(), filter, order, isolation)
    }
}

impl<S: KeyValueStore + ?Sized> SegmentedStore for KeyOrderedSessionStore<S> {
    segments_lifecycle!();

    fn settle_value_layout(&self, wanted: ValueLayout) -> Result<Option<ValueLayout>> {
        self.segments
            .settle_value_layout(wanted, "session", |_| true)
    }

    fn restore(&self, records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        self.segments.restore_as_stored(records, |key| {
            Ok(SessionKeyLayout::KeyFirst.decode(key)?.end)
        })
    }
}
