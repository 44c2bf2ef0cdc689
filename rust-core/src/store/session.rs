//! The session store contract shared by both key layouts: Kafka Streams' segmented session
//! store ([`KeyOrderedSessionStore`]) and its time-ordered one ([`TimeOrderedSessionStore`]).
//!
//! A session is `(key, start, end) → aggregate`. A layout decides how sessions are stored
//! and therefore in which order multi-key reads return them; the reads derived from others
//! (every session of a key or of a key range) are written once here.
//!
//! [`KeyOrderedSessionStore`]: crate::store::key_ordered_session::KeyOrderedSessionStore
//! [`TimeOrderedSessionStore`]: crate::store::time_ordered_session::TimeOrderedSessionStore

use crate::store::format::TIMESTAMP_SIZE;
use crate::store::segments::KeyRange;
use crate::store::window::default_segment_interval;
use crate::store::{IsolationLevel, Order, Result, SegmentedStore};

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
            segment_interval: default_segment_interval(retention_period),
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

/// A transactional session store. Writes are staged in the key-value store underneath and
/// become durable with its [`commit`](SegmentedStore::commit).
///
/// Retention follows observed stream time, the largest session end written or removed:
/// sessions ending at or before `stream time - retention` are invisible, writes to expired
/// segments are dropped, and expired segments are deleted with the next live write.
pub trait SessionStore: SegmentedStore {
    /// Kafka Streams' `put(Windowed(key, SessionWindow(start, end)), aggregate)`; `None`
    /// deletes the session.
    fn put(&self, key: &[u8], start: i64, end: i64, value: Option<Vec<u8>>) -> Result<()>;

    /// Kafka Streams' `remove(Windowed(key, SessionWindow(start, end)))`. Unlike a `None`
    /// put it never creates or drops segments, but it still advances stream time.
    fn remove(&self, key: &[u8], start: i64, end: i64) -> Result<()>;

    /// Kafka Streams' `fetchSession(key, sessionStartTime, sessionEndTime)`.
    fn fetch_session(
        &self,
        key: &[u8],
        start: i64,
        end: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Vec<u8>>>;

    /// Kafka Streams' `findSessions(key, earliestSessionEndTime, latestSessionStartTime)`
    /// and `backwardFindSessions`: sessions of `key` ending at or after
    /// `earliest_session_end` and starting at or before `latest_session_start`.
    fn find_sessions(
        &self,
        key: &[u8],
        earliest_session_end: i64,
        latest_session_start: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords>;

    /// Kafka Streams' `findSessions(keyFrom, keyTo, earliestSessionEndTime,
    /// latestSessionStartTime)` and its backward variant; `None` leaves that end of the key
    /// range open. Empty when `key_from > key_to`.
    fn find_sessions_in_range(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        earliest_session_end: i64,
        latest_session_start: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords>;

    /// Kafka Streams' `fetch(key)` and `backwardFetch(key)`: every live session of `key`.
    fn fetch(&self, key: &[u8], order: Order, isolation: IsolationLevel) -> Result<SessionRecords> {
        self.find_sessions(key, 0, i64::MAX, order, isolation)
    }

    /// Kafka Streams' `fetch(keyFrom, keyTo)` and `backwardFetch(keyFrom, keyTo)`.
    fn fetch_range(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<SessionRecords> {
        self.find_sessions_in_range(key_from, key_to, 0, i64::MAX, order, isolation)
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
    keys: KeyRange,
    /// The earliest session end read: every live segment from its one on is scanned.
    pub(crate) earliest_end: i64,
    latest_start: i64,
}

impl Filter {
    /// Keys in `key_from..=key_to` (`None` = open end), sessions ending at or after
    /// `earliest_end` and starting at or before `latest_start`.
    pub(crate) fn new(
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        earliest_end: i64,
        latest_start: i64,
    ) -> Self {
        Filter {
            keys: KeyRange::new(key_from, key_to),
            earliest_end,
            latest_start,
        }
    }

    pub(crate) fn admits(&self, key: &[u8], start: i64, end: i64) -> bool {
        self.keys.contains(key) && end >= self.earliest_end && start <= self.latest_start
    }
}
