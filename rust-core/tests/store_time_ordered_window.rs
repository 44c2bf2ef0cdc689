//! Time-ordered window store: a property test against a model of Kafka Streams'
//! `RocksDBTimeOrderedWindowStore`, with and without its key-first index, plus retention
//! and restore edge cases.

mod store_support;

use std::collections::BTreeMap;

use proptest::prelude::*;
use sluice_core::store::format::ordered_bytes::upper_range;
use sluice_core::store::format::window_key::WindowKeyLayout;
use sluice_core::store::time_ordered_window::TimeOrderedWindowStore;
use sluice_core::store::window::{WindowStoreOptions, WindowedRecord};
use sluice_core::store::{IsolationLevel, Order};
use store_support::{changelog_offset, key, memory_kv, order, unwrap_all, TempRocksDb};

const RETENTION: i64 = 100;
const INTERVAL: i64 = 30;
const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;

fn options(retain_duplicates: bool) -> WindowStoreOptions {
    WindowStoreOptions { retention_period: RETENTION, segment_interval: INTERVAL, retain_duplicates }
}

fn memory_store(retain_duplicates: bool, with_index: bool) -> TimeOrderedWindowStore {
    TimeOrderedWindowStore::open(memory_kv("time-ordered-window"), options(retain_duplicates), with_index).unwrap()
}

fn commit(store: &TimeOrderedWindowStore, offset: i64) {
    store.commit(&changelog_offset("window-changelog", offset)).unwrap();
}

type Records = BTreeMap<(Vec<u8>, i64, i32), Vec<u8>>;

/// What Kafka Streams' time-ordered window store holds and answers, written from its
/// contract.
#[derive(Clone)]
struct Model {
    retain_duplicates: bool,
    with_index: bool,
    stream_time: i64,
    seqnum: i32,
    records: Records,
    committed: (Records, i64),
}

impl Model {
    fn new(retain_duplicates: bool, with_index: bool) -> Self {
        Model {
            retain_duplicates,
            with_index,
            stream_time: -1,
            seqnum: 0,
            records: Records::new(),
            committed: (Records::new(), -1),
        }
    }

    fn segment(timestamp: i64) -> i64 {
        timestamp / INTERVAL
    }

    fn put(&mut self, key: &[u8], value: Option<Vec<u8>>, start: i64) {
        if value.is_none() && self.retain_duplicates {
            return;
        }
        let seqnum = if self.retain_duplicates {
            self.seqnum = (self.seqnum + 1) & i32::MAX;
            self.seqnum
        } else {
            0
        };
        self.stream_time = self.stream_time.max(start);
        if Self::segment(start) < Self::segment(self.stream_time - RETENTION) {
            return;
        }
        match value {
            Some(value) => self.records.insert((key.to_vec(), start, seqnum), value),
            None => self.records.remove(&(key.to_vec(), start, seqnum)),
        };
    }

    /// Unlike the segmented window store, a window exactly one retention period old is
    /// still visible.
    fn earliest_visible(&self) -> i64 {
        self.stream_time - RETENTION
    }

    fn matching(&self, key_from: Option<&[u8]>, key_to: Option<&[u8]>, from: i64, to: i64) -> Vec<(&(Vec<u8>, i64, i32), &Vec<u8>)> {
        let from = from.max(self.earliest_visible());
        self.records
            .iter()
            .filter(|((key, start, _), _)| {
                key_from.is_none_or(|f| key.as_slice() >= f)
                    && key_to.is_none_or(|t| key.as_slice() <= t)
                    && (from..=to).contains(start)
            })
            .collect()
    }

    /// Segment by segment, by the bytes of the stored key (`layout`) inside a segment.
    fn in_store_order(
        mut found: Vec<(&(Vec<u8>, i64, i32), &Vec<u8>)>,
        layout: WindowKeyLayout,
        order: Order,
    ) -> Vec<WindowedRecord> {
        found.sort_by_key(|((key, start, seqnum), _)| (Self::segment(*start), layout.encode(key, *start, *seqnum)));
        if order == Order::Reverse {
            found.reverse();
        }
        found
            .into_iter()
            .map(|((key, start, _), value)| WindowedRecord { key: key.clone(), window_start: *start, value: value.clone() })
            .collect()
    }

    fn fetch_key(&self, key: &[u8], from: i64, to: i64, order: Order) -> Vec<(i64, Vec<u8>)> {
        let found = self.matching(Some(key), Some(key), from, to);
        Self::in_store_order(found, WindowKeyLayout::PrefixedTimeFirst, order)
            .into_iter()
            .map(|record| (record.window_start, record.value))
            .collect()
    }

    fn fetch_key_range(&self, key_from: Option<&[u8]>, key_to: Option<&[u8]>, from: i64, to: i64, order: Order) -> Vec<WindowedRecord> {
        if matches!((key_from, key_to), (Some(f), Some(t)) if f > t) {
            return Vec::new();
        }
        let found = self.matching(key_from, key_to, from, to);
        if !self.with_index {
            return Self::in_store_order(found, WindowKeyLayout::PrefixedTimeFirst, order);
        }
        // The index is scanned up to the segmented store's `upperRange(keyTo, to ‖ MAX)`,
        // which cuts off some matching records (see the segmented window store's test).
        let mut suffix = to.to_be_bytes().to_vec();
        suffix.extend_from_slice(&i32::MAX.to_be_bytes());
        let bound = key_to.map(|key_to| upper_range(key_to, &suffix));
        let found = found
            .into_iter()
            .filter(|((key, start, seqnum), _)| {
                bound.as_ref().is_none_or(|bound| WindowKeyLayout::KeyFirst.encode(key, *start, *seqnum) <= *bound)
            })
            .collect();
        Self::in_store_order(found, WindowKeyLayout::PrefixedKeyFirst, order)
    }

    fn fetch_all(&self, from: i64, to: i64, order: Order) -> Vec<WindowedRecord> {
        Self::in_store_order(self.matching(None, None, from, to), WindowKeyLayout::PrefixedTimeFirst, order)
    }

    fn fetch(&self, key: &[u8], start: i64) -> Option<Vec<u8>> {
        if start < self.earliest_visible() {
            return None;
        }
        self.records.get(&(key.to_vec(), start, self.seqnum)).cloned()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put { key: Vec<u8>, delete: bool, start: i64 },
    Commit,
    Rollback,
    FetchKey { key: Vec<u8>, from: i64, to: i64, order: Order },
    FetchKeyRange { key_from: Option<Vec<u8>>, key_to: Option<Vec<u8>>, from: i64, to: i64, order: Order },
    FetchAll { from: i64, to: i64, order: Order },
    All { order: Order },
    Fetch { key: Vec<u8>, start: i64 },
}

fn op() -> impl Strategy<Value = Op> {
    let time = 0i64..320;
    prop_oneof![
        6 => (key(), prop::bool::weighted(0.15), time.clone()).prop_map(|(key, delete, start)| Op::Put { key, delete, start }),
        1 => Just(Op::Commit),
        1 => Just(Op::Rollback),
        2 => (key(), time.clone(), time.clone(), order()).prop_map(|(key, from, to, order)| Op::FetchKey { key, from, to, order }),
        2 => (prop::option::of(key()), prop::option::of(key()), time.clone(), time.clone(), order())
            .prop_map(|(key_from, key_to, from, to, order)| Op::FetchKeyRange { key_from, key_to, from, to, order }),
        2 => (time.clone(), time.clone(), order()).prop_map(|(from, to, order)| Op::FetchAll { from, to, order }),
        1 => order().prop_map(|order| Op::All { order }),
        1 => (key(), time).prop_map(|(key, start)| Op::Fetch { key, start }),
    ]
}

fn run(store: &TimeOrderedWindowStore, model: &mut Model, ops: Vec<Op>) -> Result<(), TestCaseError> {
    for (index, op) in ops.into_iter().enumerate() {
        match op {
            Op::Put { key, delete, start } => {
                let value = (!delete).then(|| (index as u32).to_be_bytes().to_vec());
                store.put(&key, value.clone(), start).unwrap();
                model.put(&key, value, start);
            }
            Op::Commit => {
                commit(store, index as i64);
                model.committed = (model.records.clone(), model.stream_time);
            }
            Op::Rollback => {
                store.rollback().unwrap();
                (model.records, model.stream_time) = model.committed.clone();
            }
            Op::FetchKey { key, from, to, order } => {
                let actual = unwrap_all(store.fetch_key(&key, from, to, order, UNCOMMITTED).unwrap());
                prop_assert_eq!(actual, model.fetch_key(&key, from, to, order), "fetch_key step {}", index);
            }
            Op::FetchKeyRange { key_from, key_to, from, to, order } => {
                let actual = unwrap_all(
                    store.fetch_key_range(key_from.as_deref(), key_to.as_deref(), from, to, order, UNCOMMITTED).unwrap(),
                );
                let expected = model.fetch_key_range(key_from.as_deref(), key_to.as_deref(), from, to, order);
                prop_assert_eq!(actual, expected, "fetch_key_range step {}", index);
            }
            Op::FetchAll { from, to, order } => {
                let actual = unwrap_all(store.fetch_all(from, to, order, UNCOMMITTED).unwrap());
                prop_assert_eq!(actual, model.fetch_all(from, to, order), "fetch_all step {}", index);
            }
            Op::All { order } => {
                let expected = model.fetch_all(0, i64::MAX, order);
                prop_assert_eq!(unwrap_all(store.all(order, UNCOMMITTED).unwrap()), expected, "all step {}", index);
            }
            Op::Fetch { key, start } => {
                prop_assert_eq!(store.fetch(&key, start, UNCOMMITTED).unwrap(), model.fetch(&key, start), "fetch step {}", index);
            }
        }
        prop_assert_eq!(store.observed_stream_time(), model.stream_time);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn time_ordered_window_store_matches_the_model(
        retain_duplicates: bool,
        with_index: bool,
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let store = memory_store(retain_duplicates, with_index);
        let mut model = Model::new(retain_duplicates, with_index);
        run(&store, &mut model, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn time_ordered_window_store_on_rocksdb_matches_the_model(
        retain_duplicates: bool,
        with_index: bool,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let rocksdb = TempRocksDb::new();
        let store = TimeOrderedWindowStore::open(rocksdb.open("window"), options(retain_duplicates), with_index).unwrap();
        let mut model = Model::new(retain_duplicates, with_index);
        run(&store, &mut model, ops)?;
    }
}

#[test]
fn fetch_all_comes_out_by_window_start_then_key() {
    let store = memory_store(false, true);
    store.put(b"b", Some(b"b10".to_vec()), 10).unwrap();
    store.put(b"a", Some(b"a20".to_vec()), 20).unwrap();
    store.put(b"a", Some(b"a10".to_vec()), 10).unwrap();
    let starts_and_keys: Vec<_> = unwrap_all(store.fetch_all(0, 100, Order::Forward, UNCOMMITTED).unwrap())
        .into_iter()
        .map(|r| (r.window_start, r.key))
        .collect();
    assert_eq!(starts_and_keys, vec![(10, b"a".to_vec()), (10, b"b".to_vec()), (20, b"a".to_vec())]);
    // Through the index, a key range comes out by key first.
    let by_key: Vec<_> = unwrap_all(store.fetch_key_range(None, None, 0, 100, Order::Forward, UNCOMMITTED).unwrap())
        .into_iter()
        .map(|r| (r.window_start, r.key))
        .collect();
    assert_eq!(by_key, vec![(10, b"a".to_vec()), (20, b"a".to_vec()), (10, b"b".to_vec())]);
}

#[test]
fn a_window_exactly_one_retention_period_old_is_still_visible() {
    let store = memory_store(false, false);
    store.put(b"k", Some(b"old".to_vec()), 10).unwrap();
    store.put(b"k", Some(b"new".to_vec()), 110).unwrap();
    assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), Some(b"old".to_vec()));
    store.put(b"other", Some(b"x".to_vec()), 111).unwrap();
    assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), None);
}

#[test]
fn deleting_a_window_deletes_its_index_entry() {
    let kv = memory_kv("time-ordered-window");
    let store = TimeOrderedWindowStore::open(kv.clone(), options(false), true).unwrap();
    store.put(b"k", Some(b"v".to_vec()), 10).unwrap();
    commit(&store, 1);
    let entries = || kv.approximate_num_entries(IsolationLevel::ReadCommitted).unwrap();
    // Stream time, base key and index key.
    assert_eq!(entries(), 3);
    store.put(b"k", None, 10).unwrap();
    commit(&store, 2);
    assert_eq!(entries(), 1);
}

#[test]
fn restore_writes_base_and_index_keys_from_key_first_changelog_keys() {
    let store = memory_store(false, true);
    store
        .restore(vec![
            (WindowKeyLayout::KeyFirst.encode(b"k", 5, 0), Some(b"expired".to_vec())),
            (WindowKeyLayout::KeyFirst.encode(b"k", 250, 0), Some(b"live".to_vec())),
        ])
        .unwrap();
    assert_eq!(store.observed_stream_time(), 250);
    assert_eq!(unwrap_all(store.fetch_key(b"k", 0, 300, Order::Forward, UNCOMMITTED).unwrap()), vec![(250, b"live".to_vec())]);
    assert_eq!(unwrap_all(store.fetch_all(0, 300, Order::Forward, UNCOMMITTED).unwrap()).len(), 1);
    assert!(store.restore(vec![(b"short".to_vec(), None)]).is_err());
}
