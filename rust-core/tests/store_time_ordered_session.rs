//! Time-ordered session store: a property test against a model of Kafka Streams'
//! `RocksDBTimeOrderedSessionStore`, with and without its key-first index, including the
//! all-keys `findSessions(earliestSessionEndTime, latestSessionEndTime)`.

mod store_support;

use std::collections::BTreeMap;

use proptest::prelude::*;
use sluice_core::store::format::ordered_bytes::upper_range;
use sluice_core::store::format::session_key::SessionKeyLayout;
use sluice_core::store::session::{SessionRecord, SessionStoreOptions};
use sluice_core::store::time_ordered_session::TimeOrderedSessionStore;
use sluice_core::store::{IsolationLevel, Order};
use store_support::{changelog_offset, key, memory_kv, order, unwrap_all, TempRocksDb};

const RETENTION: i64 = 100;
const INTERVAL: i64 = 30;
const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;
const OPTIONS: SessionStoreOptions = SessionStoreOptions { retention_period: RETENTION, segment_interval: INTERVAL };

fn memory_store(with_index: bool) -> TimeOrderedSessionStore {
    TimeOrderedSessionStore::open(memory_kv("time-ordered-session"), OPTIONS, with_index).unwrap()
}

fn commit(store: &TimeOrderedSessionStore, offset: i64) {
    store.commit(&changelog_offset("session-changelog", offset)).unwrap();
}

type Sessions = BTreeMap<(Vec<u8>, i64, i64), Vec<u8>>;

/// What Kafka Streams' time-ordered session store holds and answers, written from its
/// contract. Sessions of dropped segments leave the map: the all-keys search sees every
/// segment not dropped yet, expired or not.
#[derive(Clone)]
struct Model {
    with_index: bool,
    stream_time: i64,
    sessions: Sessions,
    committed: (Sessions, i64),
}

impl Model {
    fn new(with_index: bool) -> Self {
        Model { with_index, stream_time: -1, sessions: Sessions::new(), committed: (Sessions::new(), -1) }
    }

    fn segment(timestamp: i64) -> i64 {
        timestamp / INTERVAL
    }

    fn put(&mut self, key: &[u8], start: i64, end: i64, value: Option<Vec<u8>>) {
        self.stream_time = self.stream_time.max(end);
        let min_live = Self::segment(self.stream_time - RETENTION);
        if Self::segment(end) < min_live {
            return;
        }
        match value {
            Some(value) => self.sessions.insert((key.to_vec(), start, end), value),
            None => self.sessions.remove(&(key.to_vec(), start, end)),
        };
        self.sessions.retain(|(_, _, end), _| Self::segment(*end) >= min_live);
    }

    fn remove(&mut self, key: &[u8], start: i64, end: i64) {
        self.stream_time = self.stream_time.max(end);
        self.sessions.remove(&(key.to_vec(), start, end));
    }

    fn earliest_visible(&self) -> i64 {
        self.stream_time - RETENTION + 1
    }

    fn fetch_session(&self, key: &[u8], start: i64, end: i64) -> Option<Vec<u8>> {
        if end < self.earliest_visible() {
            return None;
        }
        self.sessions.get(&(key.to_vec(), start, end)).cloned()
    }

    fn in_store_order<'a>(
        mut found: Vec<(&'a (Vec<u8>, i64, i64), &'a Vec<u8>)>,
        layout: SessionKeyLayout,
        order: Order,
    ) -> Vec<SessionRecord> {
        found.sort_by_key(|((key, start, end), _)| (Self::segment(*end), layout.encode(key, *start, *end)));
        if order == Order::Reverse {
            found.reverse();
        }
        found
            .into_iter()
            .map(|((key, start, end), value)| SessionRecord { key: key.clone(), start: *start, end: *end, value: value.clone() })
            .collect()
    }

    /// Through the index, sessions come out like the segmented store's, cut off by its
    /// key-range upper bound; through the base keys, by end, start, then key, uncut.
    fn find(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        earliest_end: i64,
        latest_start: i64,
        order: Order,
        range_bound: bool,
    ) -> Vec<SessionRecord> {
        if matches!((key_from, key_to), (Some(f), Some(t)) if f > t) {
            return Vec::new();
        }
        let earliest_end = earliest_end.max(self.earliest_visible());
        let mut suffix = i64::MAX.to_be_bytes().to_vec();
        suffix.extend_from_slice(&latest_start.to_be_bytes());
        let bound = key_to.filter(|_| range_bound && self.with_index).map(|key_to| upper_range(key_to, &suffix));
        let found = self
            .sessions
            .iter()
            .filter(|((key, start, end), _)| {
                key_from.is_none_or(|f| key.as_slice() >= f)
                    && key_to.is_none_or(|t| key.as_slice() <= t)
                    && *end >= earliest_end
                    && *start <= latest_start
                    && bound.as_ref().is_none_or(|b| SessionKeyLayout::KeyFirst.encode(key, *start, *end) <= *b)
            })
            .collect();
        let layout = if self.with_index { SessionKeyLayout::PrefixedKeyFirst } else { SessionKeyLayout::PrefixedTimeFirst };
        Self::in_store_order(found, layout, order)
    }

    /// Kafka Streams scans each segment from `0x00 ‖ max(0, earliest) ‖ 0` to
    /// `0x00 ‖ max(0, latest + 1) ‖ 0`, the `+ 1` wrapping at `i64::MAX`.
    fn find_ending_in(&self, earliest_end: i64, latest_end: i64) -> Vec<SessionRecord> {
        let lower = SessionKeyLayout::PrefixedTimeFirst.encode(b"", 0, earliest_end.max(0));
        let upper = SessionKeyLayout::PrefixedTimeFirst.encode(b"", 0, latest_end.wrapping_add(1).max(0));
        let found = self
            .sessions
            .iter()
            .filter(|((key, start, end), _)| {
                let stored = SessionKeyLayout::PrefixedTimeFirst.encode(key, *start, *end);
                (earliest_end..=latest_end).contains(end) && lower <= stored && stored <= upper
            })
            .collect();
        Self::in_store_order(found, SessionKeyLayout::PrefixedTimeFirst, Order::Forward)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put { key: Vec<u8>, start: i64, length: i64, delete: bool },
    Remove { key: Vec<u8>, start: i64, length: i64 },
    Commit,
    Rollback,
    FetchSession { key: Vec<u8>, start: i64, length: i64 },
    FindSessions { key: Vec<u8>, earliest_end: i64, latest_start: i64, order: Order },
    FindInRange { key_from: Option<Vec<u8>>, key_to: Option<Vec<u8>>, earliest_end: i64, latest_start: i64, order: Order },
    FindEndingIn { earliest_end: i64, latest_end: i64 },
}

fn op() -> impl Strategy<Value = Op> {
    let time = 0i64..320;
    let length = prop_oneof![Just(0i64), 0i64..50];
    // Removes far ahead advance stream time without dropping segments.
    let remove_time = prop_oneof![3 => time.clone(), 1 => 320i64..2000];
    prop_oneof![
        6 => (key(), time.clone(), length.clone(), prop::bool::weighted(0.1))
            .prop_map(|(key, start, length, delete)| Op::Put { key, start, length, delete }),
        1 => (key(), remove_time, length.clone()).prop_map(|(key, start, length)| Op::Remove { key, start, length }),
        1 => Just(Op::Commit),
        1 => Just(Op::Rollback),
        1 => (key(), time.clone(), length).prop_map(|(key, start, length)| Op::FetchSession { key, start, length }),
        2 => (key(), time.clone(), prop_oneof![time.clone(), Just(i64::MAX)], order())
            .prop_map(|(key, earliest_end, latest_start, order)| Op::FindSessions { key, earliest_end, latest_start, order }),
        2 => (prop::option::of(key()), prop::option::of(key()), time.clone(), prop_oneof![time.clone(), Just(i64::MAX)], order())
            .prop_map(|(key_from, key_to, earliest_end, latest_start, order)| Op::FindInRange {
                key_from, key_to, earliest_end, latest_start, order,
            }),
        2 => (prop_oneof![Just(0i64), time.clone()], prop_oneof![4 => time, 1 => Just(i64::MAX)])
            .prop_map(|(earliest_end, latest_end)| Op::FindEndingIn { earliest_end, latest_end }),
    ]
}

fn run(store: &TimeOrderedSessionStore, model: &mut Model, ops: Vec<Op>) -> Result<(), TestCaseError> {
    for (index, op) in ops.into_iter().enumerate() {
        match op {
            Op::Put { key, start, length, delete } => {
                let value = (!delete).then(|| (index as u32).to_be_bytes().to_vec());
                store.put(&key, start, start + length, value.clone()).unwrap();
                model.put(&key, start, start + length, value);
            }
            Op::Remove { key, start, length } => {
                store.remove(&key, start, start + length).unwrap();
                model.remove(&key, start, start + length);
            }
            Op::Commit => {
                commit(store, index as i64);
                model.committed = (model.sessions.clone(), model.stream_time);
            }
            Op::Rollback => {
                store.rollback().unwrap();
                (model.sessions, model.stream_time) = model.committed.clone();
            }
            Op::FetchSession { key, start, length } => {
                let actual = store.fetch_session(&key, start, start + length, UNCOMMITTED).unwrap();
                prop_assert_eq!(actual, model.fetch_session(&key, start, start + length), "fetch_session step {}", index);
            }
            Op::FindSessions { key, earliest_end, latest_start, order } => {
                let actual = unwrap_all(store.find_sessions(&key, earliest_end, latest_start, order, UNCOMMITTED).unwrap());
                let expected = model.find(Some(&key), Some(&key), earliest_end, latest_start, order, false);
                prop_assert_eq!(actual, expected, "find_sessions step {}", index);
            }
            Op::FindInRange { key_from, key_to, earliest_end, latest_start, order } => {
                let actual = unwrap_all(
                    store
                        .find_sessions_in_range(key_from.as_deref(), key_to.as_deref(), earliest_end, latest_start, order, UNCOMMITTED)
                        .unwrap(),
                );
                let expected = model.find(key_from.as_deref(), key_to.as_deref(), earliest_end, latest_start, order, true);
                prop_assert_eq!(actual, expected, "find_sessions_in_range step {}", index);
            }
            Op::FindEndingIn { earliest_end, latest_end } => {
                let actual = unwrap_all(store.find_sessions_ending_in(earliest_end, latest_end, UNCOMMITTED).unwrap());
                prop_assert_eq!(actual, model.find_ending_in(earliest_end, latest_end), "find_sessions_ending_in step {}", index);
            }
        }
        prop_assert_eq!(store.observed_stream_time(), model.stream_time);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn time_ordered_session_store_matches_the_model(with_index: bool, ops in prop::collection::vec(op(), 1..80)) {
        let store = memory_store(with_index);
        let mut model = Model::new(with_index);
        run(&store, &mut model, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn time_ordered_session_store_on_rocksdb_matches_the_model(with_index: bool, ops in prop::collection::vec(op(), 1..60)) {
        let rocksdb = TempRocksDb::new();
        let store = TimeOrderedSessionStore::open(rocksdb.open("session"), OPTIONS, with_index).unwrap();
        let mut model = Model::new(with_index);
        run(&store, &mut model, ops)?;
    }
}

#[test]
fn find_sessions_ending_in_comes_out_by_end_then_start_then_key() {
    let store = memory_store(true);
    store.put(b"b", 5, 10, Some(b"b".to_vec())).unwrap();
    store.put(b"a", 8, 10, Some(b"a-late-start".to_vec())).unwrap();
    store.put(b"c", 0, 40, Some(b"c".to_vec())).unwrap();
    store.put(b"a", 0, 50, Some(b"outside".to_vec())).unwrap();
    let found: Vec<_> = unwrap_all(store.find_sessions_ending_in(10, 40, UNCOMMITTED).unwrap())
        .into_iter()
        .map(|s| (s.key, s.start, s.end))
        .collect();
    assert_eq!(found, vec![(b"b".to_vec(), 5, 10), (b"a".to_vec(), 8, 10), (b"c".to_vec(), 0, 40)]);
}

#[test]
fn find_sessions_ending_in_still_sees_expired_sessions_of_stored_segments() {
    let store = memory_store(false);
    store.put(b"k", 0, 10, Some(b"old".to_vec())).unwrap();
    // Stream time jumps far ahead without a live write: nothing is dropped.
    store.remove(b"gone", 5000, 5000).unwrap();
    assert_eq!(store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap(), None);
    assert_eq!(unwrap_all(store.find_sessions_ending_in(0, 100, UNCOMMITTED).unwrap()).len(), 1);
    // A live write drops the expired segments.
    store.put(b"k", 4990, 5000, Some(b"new".to_vec())).unwrap();
    assert!(unwrap_all(store.find_sessions_ending_in(0, 100, UNCOMMITTED).unwrap()).is_empty());
}

#[test]
fn restore_writes_base_and_index_keys_from_key_first_changelog_keys() {
    let store = memory_store(true);
    store
        .restore(vec![
            (SessionKeyLayout::KeyFirst.encode(b"k", 0, 5), Some(b"expired".to_vec())),
            (SessionKeyLayout::KeyFirst.encode(b"k", 190, 200), Some(b"live".to_vec())),
        ])
        .unwrap();
    assert_eq!(store.observed_stream_time(), 200);
    let restored = unwrap_all(store.fetch(b"k", Order::Forward, UNCOMMITTED).unwrap());
    assert_eq!(restored, vec![SessionRecord { key: b"k".to_vec(), start: 190, end: 200, value: b"live".to_vec() }]);
    assert_eq!(unwrap_all(store.find_sessions_ending_in(0, 300, UNCOMMITTED).unwrap()).len(), 1);
}
