//! Session store: Kafka Streams' segmented RocksDB session store (`RocksDBSessionStore`
//! over `RocksDBSegmentedBytesStore` with `SessionKeySchema`) on a transactional
//! key-value store.
//!
//! A session is `(key, start, end) → aggregate`, stored under the key-first session key
//! `key ‖ end ‖ start` in the segment of its end. Reads come out as Kafka Streams returns
//! them: segment by segment by session end, then by store-key bytes inside a segment.
//! Retention follows observed stream time, the largest session end written or removed:
//! sessions ending at or before `stream time - retention` are invisible, writes to expired
//! segments are dropped, and expired segments are deleted with the next live write.

use std::sync::Arc;

use crate::store::format::ordered_bytes::{lower_range, upper_range};
use crate::store::format::session_key::SessionKeyLayout;
use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::{
    is_inverted, malformed_changelog_key, segmented_store_lifecycle, RetentionEdge, Segments,
};
use crate::store::{IsolationLevel, KeyValueStore, Order, Result};

/// How a session store keeps its sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionStoreOptions {
    /// How long after stream time passes a session's end the session stays readable (ms).
    pub retention_period: i64,
    /// Width of a segment, the unit in which expired sessions are deleted (ms).
    pub segment_interval: i64,
}

impl SessionStoreOptions {
    /// Options with Kafka Streams' default segment interval,
    /// `max(retention / 2, 60 000 ms)`.
    pub fn new(retention_period: i64) -> Self {
        SessionStoreOptions {
            retention_period,
            segment_interval: crate::store::window::default_segment_interval(retention_period),
        }
    }
}

/// One session of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// Record key.
    pub key: Vec<u8>,
    /// Session start (ms).
    pub start: i64,
    /// Session end (ms).
    pub end: i64,
    /// The session's aggregate.
    pub value: Vec<u8>,
}

/// Sessions of a read, in Kafka Streams' order.
pub type SessionRecords = Box<dyn Iterator<Item = Result<SessionRecord>> + Send>;

/// A transactional session store over a key-value store it owns entirely.
pub struct SessionStore<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    segments: Segments<S>,
}

impl<S: KeyValueStore + ?Sized> SessionStore<S> {
    /// A session store over `kv`, resuming the stream time committed in it.
    pub fn open(kv: Arc<S>, options: SessionStoreOptions) -> Result<Self> {
        Ok(SessionStore { segments: Segments::open(kv, options.retention_period, options.segment_interval, RetentionEdge::Expired)? })
    }

    /// Kafka Streams' `put(Windowed(key, SessionWindow(start, end)), aggregate)`; `None`
    /// deletes the session.
    pub fn put(&self, key: &[u8], start: i64, end: i64, value: Option<Vec<u8>>) -> Result<()> {
        let store_key = SessionKeyLayout::KeyFirst.encode(key, start, end);
        self.segments.put(end, &store_key, value).map(|_| ())
    }

    /// Kafka Streams' `remove(Windowed(key, SessionWindow(start, end)))`. Unlike a `None`
    /// put it never creates or drops segments, but it still advances stream time.
    pub fn remove(&self, key: &[u8], start: i64, end: i64) -> Result<()> {
        self.segments.remove(end, &SessionKeyLayout::KeyFirst.encode(key, start, end))
    }

    /// Kafka Streams' `fetchSession(key, sessionStartTime, sessionEndTime)`.
    pub fn fetch_session(&self, key: &[u8], start: i64, end: i64, isolation: IsolationLevel) -> Result<Option<Vec<u8>>> {
        self.segments.get(end, &SessionKeyLayout::KeyFirst.encode(key, start, end), isolation)
    }

    /// Kafka Streams' `findSessions(key, earliestSessionEndTime, latestSessionStartTime)`
    /// and `backwardFindSessions`: sessions of `key` ending at or after
    /// `earliest_session_end` and starting at or before `latest_session_start`.
    pub fn find_sessions(
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
        self.sessions(actual_from, Some(&lower), Some(&upper), filter, order, isolation)
    }

    /// Kafka Streams' `findSessions(keyFrom, keyTo, earliestSessionEndTime,
    /// latestSessionStartTime)` and its backward variant; `None` leaves that end of the key
    /// range open. Empty when `key_from > key_to`.
    pub fn find_sessions_in_range(
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
        self.sessions(actual_from, lower.as_deref(), upper.as_deref(), filter, order, isolation)
    }

    /// Kafka Streams' `fetch(key)` and `backwardFetch(key)`: every live session of `key`.
    pub fn fetch(&self, key: &[u8], order: Order, isolation: IsolationLevel) -> Result<SessionRecords> {
        self.find_sessions(key, 0, i64::MAX, order, isolation)
    }

    /// Kafka Streams' `fetch(keyFrom, keyTo)` and `backwardFetch(keyFrom, keyTo)`.
    pub fn fetch_range(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        self.find_sessions_in_range(key_from, key_to, 0, i64::MAX, order, isolation)
    }

    /// Restores changelog records: keys in the key-first session key layout, `None` values
    /// deleting. Records of already expired segments are skipped.
    pub fn restore(&self, records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        let mut entries = Vec::with_capacity(records.len());
        for (store_key, value) in records {
            let end = SessionKeyLayout::KeyFirst
                .decode(&store_key)
                .map_err(malformed_changelog_key)?
                .end;
            entries.push((end, store_key, value));
        }
        self.segments.restore(entries)
    }

    segmented_store_lifecycle!("The largest session end written, removed or restored so far (-1 before any).");

    fn sessions(
        &self,
        earliest_end: i64,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        filter: Filter,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        // Any live segment may hold a matching session: sessions are segmented by end,
        // and a session ending arbitrarily late can have started early enough.
        let entries = self.segments.scan(earliest_end, i64::MAX, lower, upper, order, isolation)?;
        Ok(Box::new(self.segments.decode_each(entries, move |store_key, value| {
            let session = SessionKeyLayout::KeyFirst.decode(store_key)?;
            Ok(filter.admits(session.key, session.start, session.end).then(|| SessionRecord {
                key: session.key.to_vec(),
                start: session.start,
                end: session.end,
                value,
            }))
        })))
    }
}

/// The largest suffix of a session starting by `latest_start`: `MAX end ‖ latest_start`.
pub(crate) fn max_suffix(latest_start: i64) -> [u8; 2 * TIMESTAMP_SIZE] {
    let mut suffix = [0u8; 2 * TIMESTAMP_SIZE];
    suffix[..TIMESTAMP_SIZE].copy_from_slice(&i64::MAX.to_be_bytes());
    suffix[TIMESTAMP_SIZE..].copy_from_slice(&latest_start.to_be_bytes());
    suffix
}

/// Which scanned sessions a read returns: the scan bounds only narrow the search.
pub(crate) struct Filter {
    key_from: Option<Vec<u8>>,
    key_to: Option<Vec<u8>>,
    earliest_end: i64,
    latest_start: i64,
}

impl Filter {
    /// Keys in `key_from..=key_to` (`None` = open end), sessions ending at or after
    /// `earliest_end` and starting at or before `latest_start`.
    pub(crate) fn new(key_from: Option<&[u8]>, key_to: Option<&[u8]>, earliest_end: i64, latest_start: i64) -> Self {
        Filter { key_from: key_from.map(<[u8]>::to_vec), key_to: key_to.map(<[u8]>::to_vec), earliest_end, latest_start }
    }

    pub(crate) fn admits(&self, key: &[u8], start: i64, end: i64) -> bool {
        self.key_from.as_deref().is_none_or(|from| key >= from)
            && self.key_to.as_deref().is_none_or(|to| key <= to)
            && end >= self.earliest_end
            && start <= self.latest_start
    }
}
