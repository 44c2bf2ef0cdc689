//! Session store: a property test against a model of Kafka Streams' segmented session
//! store, plus retention and restore edge cases.

mod store_support;

use std::collections::BTreeMap;

use proptest::prelude::*;
use sluice_core::store::format::ordered_bytes::upper_range;
use sluice_core::store::format::session_key::SessionKeyLayout;
use sluice_core::store::session::{SessionRecord, SessionStore, SessionStoreOptions};
use sluice_core::store::{IsolationLevel, Order};
use store_support::{changelog_offset, key, memory_kv, order, unwrap_all, TempRocksDb};

const RETENTION: i64 = 100;
const INTERVAL: i64 = 30;
const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;
const OPTIONS: SessionStoreOptions = SessionStoreOptions { retention_period: RETENTION, segment_interval: INTERVAL };

fn memory_store() -> SessionStore {
    SessionStore::open(memory_kv("session"), OPTIONS).unwrap()
}

fn commit(store: &SessionStore, offset: i64) {
    store.commit(&changelog_offset("session-changelog", offset)).unwrap();
}

type Sessions = BTreeMap<(Vec<u8>, i64, i64), Vec<u8>>;

/// What Kafka Streams' RocksDB session store holds and answers, written from its contract.
#[derive(Clone, Default)]
struct Model {
    stream_time: i64,
    sessions: Sessions,
    committed: (Sessions, i64),
}

impl Model {
    fn new() -> Self {
        Model { stream_time: -1, committed: (Sessions::new(), -1), ..Model::default() }
    }

    fn segment(timestamp: i64) -> i64 {
        timestamp / INTERVAL
    }

    fn put(&mut self, key: &[u8], start: i64, end: i64, value: Option<Vec<u8>>) {
        self.stream_time = self.stream_time.max(end);
        if Self::segment(end) < Self::segment(self.stream_time - RETENTION) {
            return;
        }
        match value {
            Some(value) => self.sessions.insert((key.to_vec(), start, end), value),
            None => self.sessions.remove(&(key.to_vec(), start, end)),
        };
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

    /// Matching sessions segment by segment (by end), by store key bytes inside a segment.
    /// Kafka Streams scans a key range only up to `upperRange(keyTo, MAX ‖ latestStart)`,
    /// which can cut off matching sessions; the model applies the same bound.
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
        let bound = key_to.filter(|_| range_bound).map(|key_to| upper_range(key_to, &suffix));
        let mut found: Vec<_> = self
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
        found.sort_by_key(|((key, start, end), _)| (Self::segment(*end), SessionKeyLayout::KeyFirst.encode(key, *start, *end)));
        if order == Order::Reverse {
            found.reverse();
        }
        found
            .into_iter()
            .map(|((key, start, end), value)| SessionRecord { key: key.clone(), start: *start, end: *end, value: value.clone() })
            .collect()
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
}

fn op() -> impl Strategy<Value = Op> {
    let time = 0i64..320;
    let length = prop_oneof![Just(0i64), 0i64..50];
    prop_oneof![
        6 => (key(), time.clone(), length.clone(), prop::bool::weighted(0.1))
            .prop_map(|(key, start, length, delete)| Op::Put { key, start, length, delete }),
        1 => (key(), time.clone(), length.clone()).prop_map(|(key, start, length)| Op::Remove { key, start, length }),
        1 => Just(Op::Commit),
        1 => Just(Op::Rollback),
        1 => (key(), time.clone(), length).prop_map(|(key, start, length)| Op::FetchSession { key, start, length }),
        2 => (key(), time.clone(), prop_oneof![time.clone(), Just(i64::MAX)], order())
            .prop_map(|(key, earliest_end, latest_start, order)| Op::FindSessions { key, earliest_end, latest_start, order }),
        2 => (prop::option::of(key()), prop::option::of(key()), time.clone(), prop_oneof![time, Just(i64::MAX)], order())
            .prop_map(|(key_from, key_to, earliest_end, latest_start, order)| Op::FindInRange {
                key_from, key_to, earliest_end, latest_start, order,
            }),
    ]
}

fn run(store: &SessionStore, model: &mut Model, ops: Vec<Op>) -> Result<(), TestCaseError> {
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
        }
        prop_assert_eq!(store.observed_stream_time(), model.stream_time);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn session_store_matches_the_model(ops in prop::collection::vec(op(), 1..80)) {
        let store = memory_store();
        let mut model = Model::new();
        run(&store, &mut model, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn session_store_on_rocksdb_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let rocksdb = TempRocksDb::new();
        let store = SessionStore::open(rocksdb.open("session"), OPTIONS).unwrap();
        let mut model = Model::new();
        run(&store, &mut model, ops)?;
    }
}

#[test]
fn sessions_expire_one_retention_period_behind_the_latest_end() {
    let store = memory_store();
    store.put(b"k", 0, 10, Some(b"old".to_vec())).unwrap();
    store.put(b"k", 100, 109, Some(b"new".to_vec())).unwrap();
    assert_eq!(store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap(), Some(b"old".to_vec()));
    store.put(b"other", 110, 110, Some(b"x".to_vec())).unwrap();
    assert_eq!(store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap(), None);
    let live: Vec<_> = unwrap_all(store.fetch(b"k", Order::Forward, UNCOMMITTED).unwrap()).into_iter().map(|s| s.end).collect();
    assert_eq!(live, vec![109]);
}

#[test]
fn find_sessions_returns_sessions_overlapping_the_search_range() {
    let store = memory_store();
    store.put(b"k", 0, 5, Some(b"a".to_vec())).unwrap();
    store.put(b"k", 10, 20, Some(b"b".to_vec())).unwrap();
    store.put(b"k", 30, 40, Some(b"c".to_vec())).unwrap();
    let found = |earliest_end, latest_start, order| -> Vec<i64> {
        unwrap_all(store.find_sessions(b"k", earliest_end, latest_start, order, UNCOMMITTED).unwrap()).iter().map(|s| s.start).collect()
    };
    assert_eq!(found(6, 30, Order::Forward), vec![10, 30]);
    assert_eq!(found(6, 29, Order::Forward), vec![10]);
    assert_eq!(found(0, i64::MAX, Order::Reverse), vec![30, 10, 0]);
}

#[test]
fn remove_advances_stream_time_without_dropping_segments() {
    let store = memory_store();
    store.put(b"k", 0, 10, Some(b"v".to_vec())).unwrap();
    store.remove(b"gone", 500, 500).unwrap();
    assert_eq!(store.observed_stream_time(), 500);
    assert_eq!(store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap(), None);
}

#[test]
fn rollback_and_isolation_come_from_the_key_value_store() {
    let store = memory_store();
    store.put(b"k", 0, 10, Some(b"committed".to_vec())).unwrap();
    commit(&store, 1);
    store.put(b"k", 0, 10, Some(b"staged".to_vec())).unwrap();
    store.put(b"k", 400, 400, Some(b"later".to_vec())).unwrap();
    assert_eq!(store.fetch_session(b"k", 0, 10, IsolationLevel::ReadCommitted).unwrap(), None, "expired by the staged stream time");
    store.rollback().unwrap();
    assert_eq!(store.observed_stream_time(), 10);
    assert_eq!(store.fetch_session(b"k", 0, 10, IsolationLevel::ReadCommitted).unwrap(), Some(b"committed".to_vec()));
    assert_eq!(store.approximate_uncommitted_bytes(), 0);
}

#[test]
fn restore_reads_key_first_session_keys() {
    let store = memory_store();
    store
        .restore(vec![
            (SessionKeyLayout::KeyFirst.encode(b"k", 0, 5), Some(b"expired".to_vec())),
            (SessionKeyLayout::KeyFirst.encode(b"k", 190, 200), Some(b"live".to_vec())),
        ])
        .unwrap();
    assert_eq!(store.observed_stream_time(), 200);
    let restored = unwrap_all(store.fetch(b"k", Order::Forward, UNCOMMITTED).unwrap());
    assert_eq!(restored, vec![SessionRecord { key: b"k".to_vec(), start: 190, end: 200, value: b"live".to_vec() }]);
}
