//! Session stores, in both key layouts: a property test against a model of Kafka Streams'
//! session stores (its segmented `RocksDBSessionStore` and its
//! `RocksDBTimeOrderedSessionStore`, with and without the key-first index, including the
//! latter's all-keys `findSessions(earliestSessionEndTime, latestSessionEndTime)`), plus
//! retention and restore edge cases, each run against every layout it holds for; what a
//! layout does differently is tested for that layout.

mod store_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use sluice_core::store::format::ordered_bytes::upper_range;
use sluice_core::store::format::session_key::SessionKeyLayout;
use sluice_core::store::key_ordered_session::KeyOrderedSessionStore;
use sluice_core::store::session::{SessionRecord, SessionStore, SessionStoreOptions};
use sluice_core::store::time_ordered_session::TimeOrderedSessionStore;
use sluice_core::store::{IsolationLevel, KeyValueStore, Order};
use store_support::{
    changelog_offset, key, layout, memory_kv, order, unwrap_all, Layout, TempRocksDb, LAYOUTS,
};

const RETENTION: i64 = 100;
const INTERVAL: i64 = 30;
const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;
const OPTIONS: SessionStoreOptions = SessionStoreOptions {
    retention_period: RETENTION,
    segment_interval: INTERVAL,
};

/// A store under test through the session store contract, and for the time-ordered layout
/// also as itself, for the all-keys read only that layout has.
struct Opened {
    store: Arc<dyn SessionStore>,
    time_ordered: Option<Arc<TimeOrderedSessionStore>>,
}

impl Layout {
    fn open(self, kv: Arc<dyn KeyValueStore>) -> Opened {
        match self {
            Layout::KeyOrdered => Opened {
                store: Arc::new(KeyOrderedSessionStore::open(kv, OPTIONS).unwrap()),
                time_ordered: None,
            },
            Layout::TimeOrdered { with_index } => {
                let store =
                    Arc::new(TimeOrderedSessionStore::open(kv, OPTIONS, with_index).unwrap());
                Opened {
                    store: store.clone(),
                    time_ordered: Some(store),
                }
            }
        }
    }

    fn memory_store(self) -> Arc<dyn SessionStore> {
        self.open(memory_kv("session")).store
    }
}

fn commit(store: &dyn SessionStore, offset: i64) {
    store
        .commit(&changelog_offset("session-changelog", offset))
        .unwrap();
}

type Sessions = BTreeMap<(Vec<u8>, i64, i64), Vec<u8>>;

/// A session of the model: `(key, start, end)` and its aggregate.
type Entry<'a> = (&'a (Vec<u8>, i64, i64), &'a Vec<u8>);

/// What Kafka Streams' session store of a layout holds and answers, written from its
/// contract. Sessions of dropped segments leave the map: the all-keys search of the
/// time-ordered store sees every segment not dropped yet, expired or not.
#[derive(Clone)]
struct Model {
    layout: Layout,
    stream_time: i64,
    sessions: Sessions,
    committed: (Sessions, i64),
}

impl Model {
    fn new(layout: Layout) -> Self {
        Model {
            layout,
            stream_time: -1,
            sessions: Sessions::new(),
            committed: (Sessions::new(), -1),
        }
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
        self.sessions
            .retain(|(_, _, end), _| Self::segment(*end) >= min_live);
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

    /// Segment by segment (by end), by the bytes of the stored key (`layout`) inside a
    /// segment.
    fn in_store_order(
        mut found: Vec<Entry<'_>>,
        layout: SessionKeyLayout,
        order: Order,
    ) -> Vec<SessionRecord> {
        found.sort_by_key(|((key, start, end), _)| {
            (Self::segment(*end), layout.encode(key, *start, *end))
        });
        if order == Order::Reverse {
            found.reverse();
        }
        found
            .into_iter()
            .map(|((key, start, end), value)| SessionRecord {
                key: key.clone(),
                start: *start,
                end: *end,
                value: value.clone(),
            })
            .collect()
    }

    /// Matching sessions in the store's order. Through key-first keys Kafka Streams scans a
    /// key range only up to `upperRange(keyTo, MAX ‖ latestStart)`, which can cut off
    /// matching sessions; the model applies the same bound. Through the time-first base
    /// keys sessions come out by end, start, then key, uncut.
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
        let key_first = self.layout.reads_keys_first();
        let earliest_end = earliest_end.max(self.earliest_visible());
        let mut suffix = i64::MAX.to_be_bytes().to_vec();
        suffix.extend_from_slice(&latest_start.to_be_bytes());
        let bound = key_to
            .filter(|_| range_bound && key_first)
            .map(|key_to| upper_range(key_to, &suffix));
        let found = self
            .sessions
            .iter()
            .filter(|((key, start, end), _)| {
                key_from.is_none_or(|f| key.as_slice() >= f)
                    && key_to.is_none_or(|t| key.as_slice() <= t)
                    && *end >= earliest_end
                    && *start <= latest_start
                    && bound
                        .as_ref()
                        .is_none_or(|b| SessionKeyLayout::KeyFirst.encode(key, *start, *end) <= *b)
            })
            .collect();
        let layout = if key_first {
            SessionKeyLayout::KeyFirst
        } else {
            SessionKeyLayout::PrefixedTimeFirst
        };
        Self::in_store_order(found, layout, order)
    }

    /// Kafka Streams scans each segment from `0x00 ‖ max(0, earliest) ‖ 0` to
    /// `0x00 ‖ max(0, latest + 1) ‖ 0`, the `+ 1` wrapping at `i64::MAX`.
    fn find_ending_in(&self, earliest_end: i64, latest_end: i64) -> Vec<SessionRecord> {
        let lower = SessionKeyLayout::PrefixedTimeFirst.encode(b"", 0, earliest_end.max(0));
        let upper =
            SessionKeyLayout::PrefixedTimeFirst.encode(b"", 0, latest_end.wrapping_add(1).max(0));
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
    Put {
        key: Vec<u8>,
        start: i64,
        length: i64,
        delete: bool,
    },
    Remove {
        key: Vec<u8>,
        start: i64,
        length: i64,
    },
    Commit,
    Rollback,
    FetchSession {
        key: Vec<u8>,
        start: i64,
        length: i64,
    },
    FindSessions {
        key: Vec<u8>,
        earliest_end: i64,
        latest_start: i64,
        order: Order,
    },
    FindInRange {
        key_from: Option<Vec<u8>>,
        key_to: Option<Vec<u8>>,
        earliest_end: i64,
        latest_start: i64,
        order: Order,
    },
    FindEndingIn {
        earliest_end: i64,
        latest_end: i64,
    },
}

/// The operations every layout serves.
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
        2 => (prop::option::of(key()), prop::option::of(key()), time.clone(), prop_oneof![time, Just(i64::MAX)], order())
            .prop_map(|(key_from, key_to, earliest_end, latest_start, order)| Op::FindInRange {
                key_from, key_to, earliest_end, latest_start, order,
            }),
    ]
}

/// The operations of `layout`: the time-ordered store adds the all-keys search by end.
fn ops(layout: Layout, max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    let time = 0i64..320;
    let find_ending_in = (
        prop_oneof![Just(0i64), time.clone()],
        prop_oneof![4 => time, 1 => Just(i64::MAX)],
    )
        .prop_map(|(earliest_end, latest_end)| Op::FindEndingIn {
            earliest_end,
            latest_end,
        });
    let op = match layout {
        Layout::KeyOrdered => op().boxed(),
        Layout::TimeOrdered { .. } => prop_oneof![11 => op(), 2 => find_ending_in].boxed(),
    };
    prop::collection::vec(op, 1..max_len)
}

fn run(opened: &Opened, model: &mut Model, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let store = opened.store.as_ref();
    for (index, op) in ops.into_iter().enumerate() {
        match op {
            Op::Put {
                key,
                start,
                length,
                delete,
            } => {
                let value = (!delete).then(|| (index as u32).to_be_bytes().to_vec());
                store
                    .put(&key, start, start + length, value.clone())
                    .unwrap();
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
                let actual = store
                    .fetch_session(&key, start, start + length, UNCOMMITTED)
                    .unwrap();
                let expected = model.fetch_session(&key, start, start + length);
                prop_assert_eq!(actual, expected, "fetch_session step {}", index);
            }
            Op::FindSessions {
                key,
                earliest_end,
                latest_start,
                order,
            } => {
                let actual = unwrap_all(
                    store
                        .find_sessions(&key, earliest_end, latest_start, order, UNCOMMITTED)
                        .unwrap(),
                );
                let expected = model.find(
                    Some(&key),
                    Some(&key),
                    earliest_end,
                    latest_start,
                    order,
                    false,
                );
                prop_assert_eq!(actual, expected, "find_sessions step {}", index);
            }
            Op::FindInRange {
                key_from,
                key_to,
                earliest_end,
                latest_start,
                order,
            } => {
                let (key_from, key_to) = (key_from.as_deref(), key_to.as_deref());
                let actual = unwrap_all(
                    store
                        .find_sessions_in_range(
                            key_from,
                            key_to,
                            earliest_end,
                            latest_start,
                            order,
                            UNCOMMITTED,
                        )
                        .unwrap(),
                );
                let expected =
                    model.find(key_from, key_to, earliest_end, latest_start, order, true);
                prop_assert_eq!(actual, expected, "find_sessions_in_range step {}", index);
            }
            Op::FindEndingIn {
                earliest_end,
                latest_end,
            } => {
                let time_ordered = opened
                    .time_ordered
                    .as_ref()
                    .expect("only the time-ordered layout is given this read");
                let actual = unwrap_all(
                    time_ordered
                        .find_sessions_ending_in(earliest_end, latest_end, UNCOMMITTED)
                        .unwrap(),
                );
                let expected = model.find_ending_in(earliest_end, latest_end);
                prop_assert_eq!(actual, expected, "find_sessions_ending_in step {}", index);
            }
        }
        prop_assert_eq!(store.observed_stream_time(), model.stream_time);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn session_stores_match_the_model((layout, ops) in layout().prop_flat_map(|layout| (Just(layout), ops(layout, 80)))) {
        let opened = layout.open(memory_kv("session"));
        let mut model = Model::new(layout);
        run(&opened, &mut model, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn session_stores_on_rocksdb_match_the_model((layout, ops) in layout().prop_flat_map(|layout| (Just(layout), ops(layout, 60)))) {
        let rocksdb = TempRocksDb::new();
        let opened = layout.open(rocksdb.open("session"));
        let mut model = Model::new(layout);
        run(&opened, &mut model, ops)?;
    }
}

#[test]
fn sessions_expire_one_retention_period_behind_the_latest_end() {
    for layout in LAYOUTS {
        let store = layout.memory_store();
        store.put(b"k", 0, 10, Some(b"old".to_vec())).unwrap();
        store.put(b"k", 100, 109, Some(b"new".to_vec())).unwrap();
        let old = store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap();
        assert_eq!(old, Some(b"old".to_vec()), "{layout:?}");
        store.put(b"other", 110, 110, Some(b"x".to_vec())).unwrap();
        let expired = store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap();
        assert_eq!(expired, None, "{layout:?}");
        let live: Vec<_> = unwrap_all(store.fetch(b"k", Order::Forward, UNCOMMITTED).unwrap())
            .into_iter()
            .map(|s| s.end)
            .collect();
        assert_eq!(live, vec![109], "{layout:?}");
    }
}

#[test]
fn find_sessions_returns_sessions_overlapping_the_search_range() {
    for layout in LAYOUTS {
        let store = layout.memory_store();
        store.put(b"k", 0, 5, Some(b"a".to_vec())).unwrap();
        store.put(b"k", 10, 20, Some(b"b".to_vec())).unwrap();
        store.put(b"k", 30, 40, Some(b"c".to_vec())).unwrap();
        let found = |earliest_end, latest_start, order| -> Vec<i64> {
            unwrap_all(
                store
                    .find_sessions(b"k", earliest_end, latest_start, order, UNCOMMITTED)
                    .unwrap(),
            )
            .iter()
            .map(|s| s.start)
            .collect()
        };
        assert_eq!(found(6, 30, Order::Forward), vec![10, 30], "{layout:?}");
        assert_eq!(found(6, 29, Order::Forward), vec![10], "{layout:?}");
        assert_eq!(
            found(0, i64::MAX, Order::Reverse),
            vec![30, 10, 0],
            "{layout:?}"
        );
    }
}

#[test]
fn fetch_range_is_every_session_of_a_key_range() {
    for layout in LAYOUTS {
        let store = layout.memory_store();
        store.put(b"a", 0, 5, Some(b"a".to_vec())).unwrap();
        store.put(b"b", 10, 20, Some(b"b".to_vec())).unwrap();
        store.put(b"c", 30, 40, Some(b"c".to_vec())).unwrap();
        let keys = |order| -> Vec<Vec<u8>> {
            unwrap_all(
                store
                    .fetch_range(Some(b"a"), Some(b"b"), order, UNCOMMITTED)
                    .unwrap(),
            )
            .into_iter()
            .map(|s| s.key)
            .collect()
        };
        assert_eq!(
            keys(Order::Forward),
            vec![b"a".to_vec(), b"b".to_vec()],
            "{layout:?}"
        );
        assert_eq!(
            keys(Order::Reverse),
            vec![b"b".to_vec(), b"a".to_vec()],
            "{layout:?}"
        );
    }
}

#[test]
fn remove_advances_stream_time_without_dropping_segments() {
    for layout in LAYOUTS {
        let store = layout.memory_store();
        store.put(b"k", 0, 10, Some(b"v".to_vec())).unwrap();
        store.remove(b"gone", 500, 500).unwrap();
        assert_eq!(store.observed_stream_time(), 500, "{layout:?}");
        let expired = store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap();
        assert_eq!(expired, None, "{layout:?}");
    }
}

#[test]
fn rollback_and_isolation_come_from_the_key_value_store() {
    for layout in LAYOUTS {
        let store = layout.memory_store();
        store.put(b"k", 0, 10, Some(b"committed".to_vec())).unwrap();
        commit(store.as_ref(), 1);
        store.put(b"k", 0, 10, Some(b"staged".to_vec())).unwrap();
        store.put(b"k", 400, 400, Some(b"later".to_vec())).unwrap();
        let committed = store
            .fetch_session(b"k", 0, 10, IsolationLevel::ReadCommitted)
            .unwrap();
        assert_eq!(
            committed, None,
            "{layout:?}: expired by the staged stream time"
        );
        store.rollback().unwrap();
        assert_eq!(store.observed_stream_time(), 10, "{layout:?}");
        let committed = store
            .fetch_session(b"k", 0, 10, IsolationLevel::ReadCommitted)
            .unwrap();
        assert_eq!(committed, Some(b"committed".to_vec()), "{layout:?}");
        assert_eq!(store.approximate_uncommitted_bytes(), 0, "{layout:?}");
    }
}

#[test]
fn restore_reads_key_first_session_keys() {
    for layout in LAYOUTS {
        let opened = layout.open(memory_kv("session"));
        let store = opened.store.as_ref();
        store
            .restore(vec![
                (
                    SessionKeyLayout::KeyFirst.encode(b"k", 0, 5),
                    Some(b"expired".to_vec()),
                ),
                (
                    SessionKeyLayout::KeyFirst.encode(b"k", 190, 200),
                    Some(b"live".to_vec()),
                ),
            ])
            .unwrap();
        assert_eq!(store.observed_stream_time(), 200, "{layout:?}");
        let restored = unwrap_all(store.fetch(b"k", Order::Forward, UNCOMMITTED).unwrap());
        let live = SessionRecord {
            key: b"k".to_vec(),
            start: 190,
            end: 200,
            value: b"live".to_vec(),
        };
        assert_eq!(restored, vec![live], "{layout:?}");
        // The time-ordered store's key lookups read the index when it has one, its all-keys
        // search the base keys: restore writes both.
        if let Some(time_ordered) = opened.time_ordered {
            let by_base = time_ordered
                .find_sessions_ending_in(0, 300, UNCOMMITTED)
                .unwrap();
            assert_eq!(unwrap_all(by_base).len(), 1, "{layout:?}");
        }
        assert!(
            store.restore(vec![(b"short".to_vec(), None)]).is_err(),
            "{layout:?}"
        );
    }
}

fn time_ordered_store(with_index: bool) -> Arc<TimeOrderedSessionStore> {
    Layout::TimeOrdered { with_index }
        .open(memory_kv("time-ordered-session"))
        .time_ordered
        .unwrap()
}

#[test]
fn time_ordered_find_sessions_ending_in_comes_out_by_end_then_start_then_key() {
    let store = time_ordered_store(true);
    store.put(b"b", 5, 10, Some(b"b".to_vec())).unwrap();
    store
        .put(b"a", 8, 10, Some(b"a-late-start".to_vec()))
        .unwrap();
    store.put(b"c", 0, 40, Some(b"c".to_vec())).unwrap();
    store.put(b"a", 0, 50, Some(b"outside".to_vec())).unwrap();
    let found: Vec<_> = unwrap_all(store.find_sessions_ending_in(10, 40, UNCOMMITTED).unwrap())
        .into_iter()
        .map(|s| (s.key, s.start, s.end))
        .collect();
    assert_eq!(
        found,
        vec![
            (b"b".to_vec(), 5, 10),
            (b"a".to_vec(), 8, 10),
            (b"c".to_vec(), 0, 40)
        ]
    );
}

#[test]
fn time_ordered_find_sessions_ending_in_still_sees_expired_sessions_of_stored_segments() {
    let store = time_ordered_store(false);
    store.put(b"k", 0, 10, Some(b"old".to_vec())).unwrap();
    // Stream time jumps far ahead without a live write: nothing is dropped.
    store.remove(b"gone", 5000, 5000).unwrap();
    assert_eq!(store.fetch_session(b"k", 0, 10, UNCOMMITTED).unwrap(), None);
    let stored = unwrap_all(store.find_sessions_ending_in(0, 100, UNCOMMITTED).unwrap());
    assert_eq!(stored.len(), 1);
    // A live write drops the expired segments.
    store.put(b"k", 4990, 5000, Some(b"new".to_vec())).unwrap();
    let stored = unwrap_all(store.find_sessions_ending_in(0, 100, UNCOMMITTED).unwrap());
    assert!(stored.is_empty());
}
