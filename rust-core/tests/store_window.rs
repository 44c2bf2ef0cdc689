//! Window stores, in both key layouts: a property test against a model of Kafka Streams'
//! window stores (its segmented `RocksDBWindowStore` and its `RocksDBTimeOrderedWindowStore`,
//! with and without the key-first index), plus retention, transaction, reopen and restore
//! edge cases, each run against every layout it holds for; what a layout does differently
//! (iteration order, the retention edge, the index) is tested for that layout.

mod store_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use sluice_core::store::format::ordered_bytes::upper_range;
use sluice_core::store::format::window_key::WindowKeyLayout;
use sluice_core::store::key_ordered_window::KeyOrderedWindowStore;
use sluice_core::store::time_ordered_window::TimeOrderedWindowStore;
use sluice_core::store::window::{
    default_segment_interval, WindowStore, WindowStoreOptions, WindowedRecord, WindowedRecords,
};
use sluice_core::store::{IsolationLevel, KeyValueStore, Order};
use store_support::{
    changelog_offset, key, layout, memory_kv, order, unwrap_all, Layout, TempRocksDb, LAYOUTS,
};

const RETENTION: i64 = 100;
const INTERVAL: i64 = 30;
const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;

impl Layout {
    fn open(self, kv: Arc<dyn KeyValueStore>, retain_duplicates: bool) -> Box<dyn WindowStore> {
        let options = options(retain_duplicates);
        match self {
            Layout::KeyOrdered => Box::new(KeyOrderedWindowStore::open(kv, options).unwrap()),
            Layout::TimeOrdered { with_index } => {
                Box::new(TimeOrderedWindowStore::open(kv, options, with_index).unwrap())
            }
        }
    }

    fn memory_store(self, retain_duplicates: bool) -> Box<dyn WindowStore> {
        self.open(memory_kv("window"), retain_duplicates)
    }
}

fn options(retain_duplicates: bool) -> WindowStoreOptions {
    WindowStoreOptions {
        retention_period: RETENTION,
        segment_interval: INTERVAL,
        retain_duplicates,
    }
}

fn commit(store: &dyn WindowStore, offset: i64) {
    store
        .commit(&changelog_offset("window-changelog", offset))
        .unwrap();
}

type Records = BTreeMap<(Vec<u8>, i64, i32), Vec<u8>>;

/// A record of the model: `(key, window start, sequence number)` and its value.
type Entry<'a> = (&'a (Vec<u8>, i64, i32), &'a Vec<u8>);

/// What Kafka Streams' window store of a layout holds and answers, written from its
/// contract.
#[derive(Clone)]
struct Model {
    layout: Layout,
    retain_duplicates: bool,
    stream_time: i64,
    seqnum: i32,
    records: Records,
    committed: (Records, i64),
}

impl Model {
    fn new(layout: Layout, retain_duplicates: bool) -> Self {
        Model {
            layout,
            retain_duplicates,
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

    /// Unlike the segmented window store, the time-ordered one still shows a window exactly
    /// one retention period old.
    fn earliest_visible(&self) -> i64 {
        match self.layout {
            Layout::KeyOrdered => self.stream_time - RETENTION + 1,
            Layout::TimeOrdered { .. } => self.stream_time - RETENTION,
        }
    }

    fn matching(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        from: i64,
        to: i64,
    ) -> Vec<Entry<'_>> {
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
        mut found: Vec<Entry<'_>>,
        layout: WindowKeyLayout,
        order: Order,
    ) -> Vec<WindowedRecord> {
        found.sort_by_key(|((key, start, seqnum), _)| {
            (Self::segment(*start), layout.encode(key, *start, *seqnum))
        });
        if order == Order::Reverse {
            found.reverse();
        }
        found
            .into_iter()
            .map(|((key, start, _), value)| WindowedRecord {
                key: key.clone(),
                window_start: *start,
                value: value.clone(),
            })
            .collect()
    }

    /// One key's windows come out by start, then insertion order, in every layout.
    fn fetch_key(&self, key: &[u8], from: i64, to: i64, order: Order) -> Vec<(i64, Vec<u8>)> {
        let found = self.matching(Some(key), Some(key), from, to);
        Self::in_store_order(found, WindowKeyLayout::KeyFirst, order)
            .into_iter()
            .map(|record| (record.window_start, record.value))
            .collect()
    }

    fn fetch_key_range(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        from: i64,
        to: i64,
        order: Order,
    ) -> Vec<WindowedRecord> {
        if matches!((key_from, key_to), (Some(f), Some(t)) if f > t) {
            return Vec::new();
        }
        let found = self.matching(key_from, key_to, from, to);
        if !self.layout.reads_keys_first() {
            return Self::in_store_order(found, WindowKeyLayout::PrefixedTimeFirst, order);
        }
        // Kafka Streams scans each segment only up to `upperRange(keyTo, to ‖ MAX)`; for
        // some keys (`[0]` under `keyTo = [0, 0]`) that bound cuts off matching records.
        let mut suffix = to.to_be_bytes().to_vec();
        suffix.extend_from_slice(&i32::MAX.to_be_bytes());
        let bound = key_to.map(|key_to| upper_range(key_to, &suffix));
        let found = found
            .into_iter()
            .filter(|((key, start, seqnum), _)| {
                bound.as_ref().is_none_or(|bound| {
                    WindowKeyLayout::KeyFirst.encode(key, *start, *seqnum) <= *bound
                })
            })
            .collect();
        Self::in_store_order(found, WindowKeyLayout::KeyFirst, order)
    }

    /// The segmented store reads every key as a key range; the time-ordered one reads its
    /// time-first base keys, index or not.
    fn fetch_all(&self, from: i64, to: i64, order: Order) -> Vec<WindowedRecord> {
        match self.layout {
            Layout::KeyOrdered => self.fetch_key_range(None, None, from, to, order),
            Layout::TimeOrdered { .. } => Self::in_store_order(
                self.matching(None, None, from, to),
                WindowKeyLayout::PrefixedTimeFirst,
                order,
            ),
        }
    }

    fn fetch(&self, key: &[u8], start: i64) -> Option<Vec<u8>> {
        if start < self.earliest_visible() {
            return None;
        }
        self.records
            .get(&(key.to_vec(), start, self.seqnum))
            .cloned()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put {
        key: Vec<u8>,
        delete: bool,
        start: i64,
    },
    Commit,
    Rollback,
    FetchKey {
        key: Vec<u8>,
        from: i64,
        to: i64,
        order: Order,
    },
    FetchKeyRange {
        key_from: Option<Vec<u8>>,
        key_to: Option<Vec<u8>>,
        from: i64,
        to: i64,
        order: Order,
    },
    FetchAll {
        from: i64,
        to: i64,
        order: Order,
    },
    All {
        order: Order,
    },
    Fetch {
        key: Vec<u8>,
        start: i64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let time = 0i64..320;
    prop_oneof![
        6 => (key(), prop::bool::weighted(0.15), time.clone())
            .prop_map(|(key, delete, start)| Op::Put { key, delete, start }),
        1 => Just(Op::Commit),
        1 => Just(Op::Rollback),
        2 => (key(), time.clone(), time.clone(), order())
            .prop_map(|(key, from, to, order)| Op::FetchKey { key, from, to, order }),
        2 => (prop::option::of(key()), prop::option::of(key()), time.clone(), time.clone(), order())
            .prop_map(|(key_from, key_to, from, to, order)| Op::FetchKeyRange { key_from, key_to, from, to, order }),
        2 => (time.clone(), time.clone(), order()).prop_map(|(from, to, order)| Op::FetchAll { from, to, order }),
        1 => order().prop_map(|order| Op::All { order }),
        1 => (key(), time).prop_map(|(key, start)| Op::Fetch { key, start }),
    ]
}

fn run(store: &dyn WindowStore, model: &mut Model, ops: Vec<Op>) -> Result<(), TestCaseError> {
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
            Op::FetchKey {
                key,
                from,
                to,
                order,
            } => {
                let actual =
                    unwrap_all(store.fetch_key(&key, from, to, order, UNCOMMITTED).unwrap());
                let expected = model.fetch_key(&key, from, to, order);
                prop_assert_eq!(actual, expected, "fetch_key step {}", index);
            }
            Op::FetchKeyRange {
                key_from,
                key_to,
                from,
                to,
                order,
            } => {
                let (key_from, key_to) = (key_from.as_deref(), key_to.as_deref());
                let actual = unwrap_all(
                    store
                        .fetch_key_range(key_from, key_to, from, to, order, UNCOMMITTED)
                        .unwrap(),
                );
                let expected = model.fetch_key_range(key_from, key_to, from, to, order);
                prop_assert_eq!(actual, expected, "fetch_key_range step {}", index);
            }
            Op::FetchAll { from, to, order } => {
                let actual = unwrap_all(store.fetch_all(from, to, order, UNCOMMITTED).unwrap());
                let expected = model.fetch_all(from, to, order);
                prop_assert_eq!(actual, expected, "fetch_all step {}", index);
            }
            Op::All { order } => {
                let actual = unwrap_all(store.all(order, UNCOMMITTED).unwrap());
                let expected = model.fetch_all(0, i64::MAX, order);
                prop_assert_eq!(actual, expected, "all step {}", index);
            }
            Op::Fetch { key, start } => {
                let actual = store.fetch(&key, start, UNCOMMITTED).unwrap();
                prop_assert_eq!(actual, model.fetch(&key, start), "fetch step {}", index);
            }
        }
        prop_assert_eq!(store.observed_stream_time(), model.stream_time);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn window_stores_match_the_model(
        layout in layout(),
        retain_duplicates: bool,
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let store = layout.memory_store(retain_duplicates);
        let mut model = Model::new(layout, retain_duplicates);
        run(store.as_ref(), &mut model, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn window_stores_on_rocksdb_match_the_model(
        layout in layout(),
        retain_duplicates: bool,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let rocksdb = TempRocksDb::new();
        let store = layout.open(rocksdb.open("window"), retain_duplicates);
        let mut model = Model::new(layout, retain_duplicates);
        run(store.as_ref(), &mut model, ops)?;
    }
}

#[test]
fn default_segment_interval_is_half_the_retention_but_at_least_a_minute() {
    assert_eq!(default_segment_interval(1_000), 60_000);
    assert_eq!(default_segment_interval(120_000), 60_000);
    assert_eq!(default_segment_interval(86_400_000), 43_200_000);
    assert_eq!(
        WindowStoreOptions::new(86_400_000, false).segment_interval,
        43_200_000
    );
}

#[test]
fn a_key_range_misses_what_kafka_streams_upper_bound_misses() {
    for layout in LAYOUTS {
        let store = layout.memory_store(false);
        // `[0] ‖ ts(1) ‖ seq` sorts above the bound `[0, 0] ‖ ts(1) ‖ MAX`; `[0] ‖ ts(0) ‖ seq`
        // below. Time-first base keys are scanned without that bound.
        store.put(&[0x00], Some(b"v".to_vec()), 1).unwrap();
        store.put(&[0x00], Some(b"w".to_vec()), 0).unwrap();
        let upto_00 = unwrap_all(
            store
                .fetch_key_range(None, Some(&[0x00, 0x00]), 0, 1, Order::Forward, UNCOMMITTED)
                .unwrap(),
        );
        let expected = if layout.reads_keys_first() {
            vec![0]
        } else {
            vec![0, 1]
        };
        let starts: Vec<_> = upto_00.iter().map(|r| r.window_start).collect();
        assert_eq!(starts, expected, "{layout:?}");
    }
}

#[test]
fn writes_to_expired_segments_are_dropped_but_live_segments_accept_old_windows() {
    for layout in LAYOUTS {
        let store = layout.memory_store(false);
        store.put(b"k", Some(b"late".to_vec()), 200).unwrap();
        // Segment of 95 is 3, the oldest live segment is (200 - 100) / 30 = 3: kept, but
        // invisible because 95 < 100.
        store.put(b"a", Some(b"kept".to_vec()), 95).unwrap();
        // Segment of 80 is 2: dropped.
        store.put(b"b", Some(b"dropped".to_vec()), 80).unwrap();
        let all = unwrap_all(store.all(Order::Forward, UNCOMMITTED).unwrap());
        assert!(all.iter().all(|r| r.key == b"k"), "{layout:?}");
        assert_eq!(store.observed_stream_time(), 200, "{layout:?}");
    }
}

#[test]
fn a_fetch_ending_before_the_retention_horizon_is_empty() {
    for layout in LAYOUTS {
        let store = layout.memory_store(false);
        store.put(b"k", Some(b"v".to_vec()), 150).unwrap();
        let fetched = store
            .fetch_key(b"k", 0, 49, Order::Forward, UNCOMMITTED)
            .unwrap();
        assert!(unwrap_all(fetched).is_empty(), "{layout:?}");
        let all_keys = store.fetch_all(0, 49, Order::Reverse, UNCOMMITTED).unwrap();
        assert!(unwrap_all(all_keys).is_empty(), "{layout:?}");
    }
}

#[test]
fn duplicates_are_kept_in_insertion_order_and_null_is_ignored() {
    for layout in LAYOUTS {
        let store = layout.memory_store(true);
        store.put(b"k", Some(b"1".to_vec()), 5).unwrap();
        store.put(b"k", Some(b"2".to_vec()), 5).unwrap();
        store.put(b"k", None, 5).unwrap();
        let forward = unwrap_all(
            store
                .fetch_key(b"k", 0, 10, Order::Forward, UNCOMMITTED)
                .unwrap(),
        );
        assert_eq!(
            forward,
            vec![(5, b"1".to_vec()), (5, b"2".to_vec())],
            "{layout:?}"
        );
        let backward = unwrap_all(
            store
                .fetch_key(b"k", 0, 10, Order::Reverse, UNCOMMITTED)
                .unwrap(),
        );
        assert_eq!(
            backward,
            vec![(5, b"2".to_vec()), (5, b"1".to_vec())],
            "{layout:?}"
        );
    }
}

#[test]
fn reads_see_committed_or_staged_windows_by_isolation_level() {
    for layout in LAYOUTS {
        let store = layout.memory_store(false);
        store.put(b"k", Some(b"committed".to_vec()), 1).unwrap();
        commit(store.as_ref(), 1);
        store.put(b"k", Some(b"staged".to_vec()), 1).unwrap();
        let committed = store.fetch(b"k", 1, IsolationLevel::ReadCommitted).unwrap();
        assert_eq!(committed, Some(b"committed".to_vec()), "{layout:?}");
        let staged = store.fetch(b"k", 1, UNCOMMITTED).unwrap();
        assert_eq!(staged, Some(b"staged".to_vec()), "{layout:?}");
        assert!(store.approximate_uncommitted_bytes() > 0, "{layout:?}");
        store.rollback().unwrap();
        let rolled_back = store.fetch(b"k", 1, UNCOMMITTED).unwrap();
        assert_eq!(rolled_back, Some(b"committed".to_vec()), "{layout:?}");
        assert_eq!(store.approximate_uncommitted_bytes(), 0, "{layout:?}");
    }
}

#[test]
fn rollback_returns_to_the_committed_stream_time() {
    for layout in LAYOUTS {
        let store = layout.memory_store(false);
        store.put(b"k", Some(b"v".to_vec()), 10).unwrap();
        commit(store.as_ref(), 1);
        store.put(b"k", Some(b"v".to_vec()), 500).unwrap();
        assert_eq!(
            store.fetch(b"k", 10, UNCOMMITTED).unwrap(),
            None,
            "{layout:?}"
        );
        store.rollback().unwrap();
        assert_eq!(store.observed_stream_time(), 10, "{layout:?}");
        let restored = store.fetch(b"k", 10, UNCOMMITTED).unwrap();
        assert_eq!(restored, Some(b"v".to_vec()), "{layout:?}");
    }
}

#[test]
fn a_reopened_store_resumes_its_committed_stream_time() {
    for layout in LAYOUTS {
        let rocksdb = TempRocksDb::new();
        {
            let store = layout.open(rocksdb.open("window"), false);
            store.put(b"k", Some(b"old".to_vec()), 10).unwrap();
            store.put(b"k", Some(b"new".to_vec()), 300).unwrap();
            commit(store.as_ref(), 7);
        }
        let store = layout.open(rocksdb.open("window"), false);
        assert_eq!(store.observed_stream_time(), 300, "{layout:?}");
        let live = unwrap_all(
            store
                .fetch_key(b"k", 0, 400, Order::Forward, UNCOMMITTED)
                .unwrap(),
        );
        assert_eq!(live, vec![(300, b"new".to_vec())], "{layout:?}");
    }
}

#[test]
fn restore_advances_stream_time_before_applying_the_batch() {
    let key = |start: i64, seqnum: i32| WindowKeyLayout::KeyFirst.encode(b"k", start, seqnum);
    for layout in LAYOUTS {
        let store = layout.memory_store(true);
        store
            .restore(vec![
                (key(10, 1), Some(b"expired-on-arrival".to_vec())),
                (key(250, 2), Some(b"a".to_vec())),
                (key(250, 3), Some(b"b".to_vec())),
                (key(250, 2), None),
            ])
            .unwrap();
        assert_eq!(store.observed_stream_time(), 250, "{layout:?}");
        let restored = unwrap_all(
            store
                .fetch_key(b"k", 0, 300, Order::Forward, UNCOMMITTED)
                .unwrap(),
        );
        assert_eq!(restored, vec![(250, b"b".to_vec())], "{layout:?}");
        // With an index, the key lookup above read it and this read reads the base keys.
        let all_keys = unwrap_all(
            store
                .fetch_all(0, 300, Order::Forward, UNCOMMITTED)
                .unwrap(),
        );
        assert_eq!(all_keys.len(), 1, "{layout:?}");
        assert!(
            store.restore(vec![(b"short".to_vec(), None)]).is_err(),
            "{layout:?}"
        );
    }
}

#[test]
fn key_ordered_windows_expire_exactly_one_retention_period_behind_stream_time() {
    let store = Layout::KeyOrdered.memory_store(false);
    store.put(b"k", Some(b"old".to_vec()), 10).unwrap();
    store.put(b"k", Some(b"new".to_vec()), 109).unwrap();
    // Stream time 109: windows starting at 10 = 109 - 100 + 1 are still visible.
    assert_eq!(
        store.fetch(b"k", 10, UNCOMMITTED).unwrap(),
        Some(b"old".to_vec())
    );
    store.put(b"other", Some(b"x".to_vec()), 110).unwrap();
    assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), None);
    let live = unwrap_all(
        store
            .fetch_key(b"k", 0, 200, Order::Forward, UNCOMMITTED)
            .unwrap(),
    );
    assert_eq!(live, vec![(109, b"new".to_vec())]);
}

/// Records `(window start, key)` of a multi-key read, in the order read.
fn starts_and_keys(records: WindowedRecords) -> Vec<(i64, Vec<u8>)> {
    unwrap_all(records)
        .into_iter()
        .map(|r| (r.window_start, r.key))
        .collect()
}

/// Windows of the same segment for keys `a` and `b`, put out of order.
fn put_two_keys(store: &dyn WindowStore) {
    store.put(b"b", Some(b"b10".to_vec()), 10).unwrap();
    store.put(b"a", Some(b"a20".to_vec()), 20).unwrap();
    store.put(b"a", Some(b"a10".to_vec()), 10).unwrap();
}

#[test]
fn a_key_range_read_keys_first_comes_out_by_key_within_a_segment() {
    let by_key = vec![
        (10, b"a".to_vec()),
        (20, b"a".to_vec()),
        (10, b"b".to_vec()),
    ];
    for layout in LAYOUTS
        .into_iter()
        .filter(|layout| layout.reads_keys_first())
    {
        let store = layout.memory_store(false);
        put_two_keys(store.as_ref());
        let read = store
            .fetch_key_range(None, None, 0, 29, Order::Forward, UNCOMMITTED)
            .unwrap();
        assert_eq!(starts_and_keys(read), by_key, "{layout:?}");
    }
    // The key-ordered store reads every key as a key range.
    let store = Layout::KeyOrdered.memory_store(false);
    put_two_keys(store.as_ref());
    let read = store.fetch_all(0, 29, Order::Forward, UNCOMMITTED).unwrap();
    assert_eq!(starts_and_keys(read), by_key);
}

#[test]
fn a_time_ordered_window_exactly_one_retention_period_old_is_still_visible() {
    for with_index in [false, true] {
        let store = Layout::TimeOrdered { with_index }.memory_store(false);
        store.put(b"k", Some(b"old".to_vec()), 10).unwrap();
        store.put(b"k", Some(b"new".to_vec()), 110).unwrap();
        assert_eq!(
            store.fetch(b"k", 10, UNCOMMITTED).unwrap(),
            Some(b"old".to_vec())
        );
        store.put(b"other", Some(b"x".to_vec()), 111).unwrap();
        assert_eq!(store.fetch(b"k", 10, UNCOMMITTED).unwrap(), None);
    }
}

#[test]
fn time_ordered_fetch_all_comes_out_by_window_start_then_key() {
    for with_index in [false, true] {
        let store = Layout::TimeOrdered { with_index }.memory_store(false);
        put_two_keys(store.as_ref());
        let read = store
            .fetch_all(0, 100, Order::Forward, UNCOMMITTED)
            .unwrap();
        let by_start = vec![
            (10, b"a".to_vec()),
            (10, b"b".to_vec()),
            (20, b"a".to_vec()),
        ];
        assert_eq!(starts_and_keys(read), by_start, "with index {with_index}");
    }
}

#[test]
fn deleting_a_time_ordered_window_deletes_its_index_entry() {
    let kv = memory_kv("time-ordered-window");
    let store = Layout::TimeOrdered { with_index: true }.open(kv.clone(), false);
    store.put(b"k", Some(b"v".to_vec()), 10).unwrap();
    commit(store.as_ref(), 1);
    let entries = || {
        kv.approximate_num_entries(IsolationLevel::ReadCommitted)
            .unwrap()
    };
    // Stream time, base key and index key.
    assert_eq!(entries(), 3);
    store.put(b"k", None, 10).unwrap();
    commit(store.as_ref(), 2);
    assert_eq!(entries(), 1);
}
