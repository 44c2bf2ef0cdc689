//! Window store: a property test against a model of Kafka Streams' segmented window store,
//! plus retention, transaction and reopen edge cases.

mod store_support;

use std::collections::BTreeMap;

use proptest::prelude::*;
use sluice_core::store::format::ordered_bytes::upper_range;
use sluice_core::store::format::window_key::WindowKeyLayout;
use sluice_core::store::window::{default_segment_interval, WindowStore, WindowStoreOptions, WindowedRecord};
use sluice_core::store::{IsolationLevel, Order};
use store_support::{changelog_offset, key, memory_kv, order, unwrap_all, TempRocksDb};

const RETENTION: i64 = 100;
const INTERVAL: i64 = 30;
const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;

fn options(retain_duplicates: bool) -> WindowStoreOptions {
    WindowStoreOptions { retention_period: RETENTION, segment_interval: INTERVAL, retain_duplicates }
}

fn memory_store(retain_duplicates: bool) -> WindowStore {
    WindowStore::open(memory_kv("window"), options(retain_duplicates)).unwrap()
}

fn commit(store: &WindowStore, offset: i64) {
    store.commit(&changelog_offset("window-changelog", offset)).unwrap();
}

/// What Kafka Streams' RocksDB window store holds and answers, written from its contract.
#[derive(Clone)]
struct Model {
    retain_duplicates: bool,
    stream_time: i64,
    seqnum: i32,
    records: BTreeMap<(Vec<u8>, i64, i32), Vec<u8>>,
    committed: (BTreeMap<(Vec<u8>, i64, i32), Vec<u8>>, i64),
}

impl Model {
    fn new(retain_duplicates: bool) -> Self {
        Model { retain_duplicates, stream_time: -1, seqnum: 0, records: BTreeMap::new(), committed: (BTreeMap::new(), -1) }
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

    fn earliest_visible(&self) -> i64 {
        self.stream_time - RETENTION + 1
    }

    fn matching(&self, key_from: Option<&[u8]>, key_to: Option<&[u8]>, from: i64, to: i64) -> Vec<(&(Vec<u8>, i64, i32), &Vec<u8>)> {
        self.records
            .iter()
            .filter(|((key, start, _), _)| {
                key_from.is_none_or(|f| key.as_slice() >= f)
                    && key_to.is_none_or(|t| key.as_slice() <= t)
                    && (from..=to).contains(start)
            })
            .collect()
    }

    /// Segment by segment, by store key bytes inside a segment.
    fn in_store_order(mut found: Vec<(&(Vec<u8>, i64, i32), &Vec<u8>)>, order: Order) -> Vec<WindowedRecord> {
        found.sort_by_key(|((key, start, seqnum), _)| {
            (Self::segment(*start), WindowKeyLayout::KeyFirst.encode(key, *start, *seqnum))
        });
        if order == Order::Reverse {
            found.reverse();
        }
        found
            .into_iter()
            .map(|((key, start, _), value)| WindowedRecord { key: key.clone(), window_start: *start, value: value.clone() })
            .collect()
    }

    fn fetch_key(&self, key: &[u8], from: i64, to: i64, order: Order) -> Vec<(i64, Vec<u8>)> {
        let from = from.max(self.earliest_visible());
        let mut found: Vec<_> = self
            .matching(Some(key), Some(key), from, to)
            .into_iter()
            .map(|((_, start, seqnum), value)| (*start, *seqnum, value.clone()))
            .collect();
        found.sort();
        if order == Order::Reverse {
            found.reverse();
        }
        found.into_iter().map(|(start, _, value)| (start, value)).collect()
    }

    fn fetch_key_range(&self, key_from: Option<&[u8]>, key_to: Option<&[u8]>, from: i64, to: i64, order: Order) -> Vec<WindowedRecord> {
        if matches!((key_from, key_to), (Some(f), Some(t)) if f > t) {
            return Vec::new();
        }
        let from = from.max(self.earliest_visible());
        // Kafka Streams scans each segment only up to `upperRange(keyTo, to ‖ MAX)`; for
        // some keys (`[0]` under `keyTo = [0, 0]`) that bound cuts off matching records.
        let mut suffix = to.to_be_bytes().to_vec();
        suffix.extend_from_slice(&i32::MAX.to_be_bytes());
        let bound = key_to.map(|key_to| upper_range(key_to, &suffix));
        let found = self
            .matching(key_from, key_to, from, to)
            .into_iter()
            .filter(|((key, start, seqnum), _)| {
                bound.as_ref().is_none_or(|bound| WindowKeyLayout::KeyFirst.encode(key, *start, *seqnum) <= *bound)
            })
            .collect();
        Self::in_store_order(found, order)
    }

    fn all(&self, order: Order) -> Vec<WindowedRecord> {
        let from = self.earliest_visible().max(0);
        Self::in_store_order(self.matching(None, None, from, i64::MAX), order)
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
        1 => order().prop_map(|order| Op::All { order }),
        1 => (key(), time).prop_map(|(key, start)| Op::Fetch { key, start }),
    ]
}

fn run(store: &WindowStore, model: &mut Model, ops: Vec<Op>) -> Result<(), TestCaseError> {
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
            Op::All { order } => {
                prop_assert_eq!(unwrap_all(store.all(order, UNCOMMITTED).unwrap()), model.all(order), "all step {}", index);
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
    fn window_store_matches_the_model(retain_duplicates: bool, ops in prop::collection::vec(op(), 1..80)) {
        let store = memory_store(retain_duplicates);
        let mut model = Model::new(retain_duplicates);
        run(&store, &mut model, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn window_store_on_rocksdb_matches_the_model(retain_duplicates: bool, ops in prop::collection::vec(op(), 1..60)) {
        let rocksdb = TempRocksDb::new();
        let store = WindowStore::open(rocksdb.open("window"), options(retain_duplicates)).unwrap();
        let mut model = Model::new(retain_duplicates);
        run(&store, &mut model, ops)?;
    }
}

#[test]
fn a_key_range_misses_what_kafka_streams_upper_bound_misses() {
    let store = memory_store(false);
    // `[0] ‖ ts(1) ‖ seq` sorts above the bound `[0, 0] ‖ ts(1) ‖ MAX`; `[0] ‖ ts(0) ‖ seq` below.
    store.put(&[0x00], Some(b"v".to_vec()), 1).unwrap();
    store.put(&[0x00], Some(b"w".to_vec()), 0).unwrap();
    let upto_00 = unwrap_all(store.fetch_key_range(None, Some(&[0x00, 0x00]), 0, 1, Order::Forward, UNCOMMITTED).unwrap());
    assert_eq!(upto_00.iter().map(|r| r.window_start).collect::<Vec<_>>(), vec![0]);
}

#[test]
fn default_segment_interval_is_half_the_retention_but_at_least_a_minute() {
    assert_eq!(default_segment_interval(1_000), 60_000);
    assert_eq!(default_segment_interval(120_000), 60_000);
    assert_eq!(default_segment_interval(86_400_000), 43_200_000);
    assert_eq!(WindowStoreOptions::new(86_400_000, false).segment_interval, 43_200_000);
}

#[test]
fn windows_expire_exactly_one_retention_period_behind_stream_time() {
    let store = memory_store(false);
    store.put(b"k", Some(b"old".to_vec()), 10).unwrap();
    store.put(b"k", Some(b"new".to_vec()), 109).unwrap();
    // Stream time 109: windows starting at 10 = 109 - 100 + 1 are still visible.
    assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), Some(b"old".to_vec()));
    store.put(b"other", Some(b"x".to_vec()), 110).unwrap();
    assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), None);
    assert_eq!(unwrap_all(store.fetch_key(b"k", 0, 200, Order::Forward, UNCOMMITTED).unwrap()), vec![(109, b"new".to_vec())]);
}

#[test]
fn writes_to_expired_segments_are_dropped_but_live_segments_accept_old_windows() {
    let store = memory_store(false);
    store.put(b"k", Some(b"late".to_vec()), 200).unwrap();
    // Segment of 95 is 3, the oldest live segment is (200 - 100) / 30 = 3: kept, but
    // invisible because 95 < 101.
    store.put(b"a", Some(b"kept".to_vec()), 95).unwrap();
    // Segment of 80 is 2: dropped.
    store.put(b"b", Some(b"dropped".to_vec()), 80).unwrap();
    assert!(unwrap_all(store.all(Order::Forward, UNCOMMITTED).unwrap()).iter().all(|r| r.key == b"k"));
    assert_eq!(store.observed_stream_time(), 200);
}

#[test]
fn a_fetch_ending_before_the_retention_horizon_is_empty() {
    let store = memory_store(false);
    store.put(b"k", Some(b"v".to_vec()), 150).unwrap();
    assert!(unwrap_all(store.fetch_key(b"k", 0, 50, Order::Forward, UNCOMMITTED).unwrap()).is_empty());
    assert!(unwrap_all(store.fetch_all(0, 50, Order::Reverse, UNCOMMITTED).unwrap()).is_empty());
}

#[test]
fn duplicates_are_kept_in_insertion_order_and_null_is_ignored() {
    let store = memory_store(true);
    store.put(b"k", Some(b"1".to_vec()), 5).unwrap();
    store.put(b"k", Some(b"2".to_vec()), 5).unwrap();
    store.put(b"k", None, 5).unwrap();
    let forward = unwrap_all(store.fetch_key(b"k", 0, 10, Order::Forward, UNCOMMITTED).unwrap());
    assert_eq!(forward, vec![(5, b"1".to_vec()), (5, b"2".to_vec())]);
    let backward = unwrap_all(store.fetch_key(b"k", 0, 10, Order::Reverse, UNCOMMITTED).unwrap());
    assert_eq!(backward, vec![(5, b"2".to_vec()), (5, b"1".to_vec())]);
}

#[test]
fn reads_see_committed_or_staged_windows_by_isolation_level() {
    let store = memory_store(false);
    store.put(b"k", Some(b"committed".to_vec()), 1).unwrap();
    commit(&store, 1);
    store.put(b"k", Some(b"staged".to_vec()), 1).unwrap();
    assert_eq!(store.fetch(b"k", 1, IsolationLevel::ReadCommitted).unwrap(), Some(b"committed".to_vec()));
    assert_eq!(store.fetch(b"k", 1, UNCOMMITTED).unwrap(), Some(b"staged".to_vec()));
    assert!(store.approximate_uncommitted_bytes() > 0);
    store.rollback().unwrap();
    assert_eq!(store.fetch(b"k", 1, UNCOMMITTED).unwrap(), Some(b"committed".to_vec()));
    assert_eq!(store.approximate_uncommitted_bytes(), 0);
}

#[test]
fn rollback_returns_to_the_committed_stream_time() {
    let store = memory_store(false);
    store.put(b"k", Some(b"v".to_vec()), 10).unwrap();
    commit(&store, 1);
    store.put(b"k", Some(b"v".to_vec()), 500).unwrap();
    assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), None);
    store.rollback().unwrap();
    assert_eq!(store.observed_stream_time(), 10);
    assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), Some(b"v".to_vec()));
}

#[test]
fn a_reopened_store_resumes_its_committed_stream_time() {
    let rocksdb = TempRocksDb::new();
    let open = || WindowStore::open(rocksdb.open("window"), options(false)).unwrap();
    {
        let store = open();
        store.put(b"k", Some(b"old".to_vec()), 10).unwrap();
        store.put(b"k", Some(b"new".to_vec()), 300).unwrap();
        commit(&store, 7);
    }
    let store = open();
    assert_eq!(store.observed_stream_time(), 300);
    assert_eq!(unwrap_all(store.fetch_key(b"k", 0, 400, Order::Forward, UNCOMMITTED).unwrap()), vec![(300, b"new".to_vec())]);
}

#[test]
fn restore_advances_stream_time_before_applying_the_batch() {
    let store = memory_store(true);
    let key = |start: i64, seqnum: i32| WindowKeyLayout::KeyFirst.encode(b"k", start, seqnum);
    store
        .restore(vec![
            (key(10, 1), Some(b"expired-on-arrival".to_vec())),
            (key(250, 2), Some(b"a".to_vec())),
            (key(250, 3), Some(b"b".to_vec())),
            (key(250, 2), None),
        ])
        .unwrap();
    assert_eq!(store.observed_stream_time(), 250);
    assert_eq!(unwrap_all(store.fetch_key(b"k", 0, 300, Order::Forward, UNCOMMITTED).unwrap()), vec![(250, b"b".to_vec())]);
    assert!(store.restore(vec![(b"short".to_vec(), None)]).is_err());
}
