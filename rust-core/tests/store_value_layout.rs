//! A store reopened with another value layout: upgrades rewrite every value once, with
//! what Kafka Streams gives values written before the upgrade, and survive a reopen;
//! downgrades are refused; window stores rewrite their records and leave the rest alone.

mod store_support;

use std::sync::Arc;

use sluice_core::store::key_ordered_window::KeyOrderedWindowStore;
use sluice_core::store::time_ordered_window::TimeOrderedWindowStore;
use sluice_core::store::value_layout::ValueLayout;
use sluice_core::store::window::{WindowStore, WindowStoreOptions};
use sluice_core::store::{Error, IsolationLevel, KeyValueStore, TopicPartition};
use store_support::{changelog_offset, Layout, TempRocksDb, LAYOUTS};

const COMMITTED: IsolationLevel = IsolationLevel::ReadCommitted;
const UNKNOWN_TIMESTAMP: [u8; 8] = [0xff; 8];

fn everything(_key: &[u8]) -> bool {
    true
}

fn value(store: &dyn KeyValueStore, key: &[u8]) -> Vec<u8> {
    store.get(key, COMMITTED).unwrap().unwrap()
}

#[test]
fn a_plain_store_reopened_headers_aware_holds_each_value_behind_no_headers_and_no_timestamp() {
    let rocks = TempRocksDb::new();
    let store = rocks.open("counts");
    assert_eq!(
        store
            .settle_value_layout(ValueLayout::Plain, "key-value", &everything)
            .unwrap(),
        None
    );
    store.put(b"a".to_vec(), Some(b"1".to_vec())).unwrap();
    store.put(b"b".to_vec(), Some(b"22".to_vec())).unwrap();
    store
        .commit(&changelog_offset("counts-changelog", 7))
        .unwrap();
    store.close().unwrap();

    let store = rocks.open("counts");
    assert_eq!(
        store
            .settle_value_layout(
                ValueLayout::TimestampedWithHeaders,
                "key-value",
                &everything
            )
            .unwrap(),
        Some(ValueLayout::Plain)
    );
    let upgraded = |plain: &[u8]| [&[0x00][..], &UNKNOWN_TIMESTAMP, plain].concat();
    assert_eq!(value(&*store, b"a"), upgraded(b"1"));
    assert_eq!(value(&*store, b"b"), upgraded(b"22"));
    let changelog = TopicPartition::new("counts-changelog", 0);
    assert_eq!(store.committed_offset(&changelog).unwrap(), Some(7));
    store.close().unwrap();

    let store = rocks.open("counts");
    assert_eq!(
        store
            .settle_value_layout(
                ValueLayout::TimestampedWithHeaders,
                "key-value",
                &everything
            )
            .unwrap(),
        None,
        "the upgrade is recorded and not repeated"
    );
    assert_eq!(value(&*store, b"a"), upgraded(b"1"));
    store.close().unwrap();
}

#[test]
fn downgrades_are_refused_and_leave_the_values_as_they_were() {
    let rocks = TempRocksDb::new();
    let store = rocks.open("totals");
    store
        .settle_value_layout(
            ValueLayout::TimestampedWithHeaders,
            "key-value",
            &everything,
        )
        .unwrap();
    store
        .put(b"k".to_vec(), Some(b"\x00value".to_vec()))
        .unwrap();
    store
        .commit(&changelog_offset("totals-changelog", 1))
        .unwrap();
    store.close().unwrap();

    for older in [ValueLayout::Timestamped, ValueLayout::Plain] {
        let store = rocks.open("totals");
        let error = store
            .settle_value_layout(older, "key-value", &everything)
            .unwrap_err();
        assert!(matches!(error, Error::IncompatibleLayout { .. }), "{error}");
        assert!(error.to_string().contains("headers-aware"), "{error}");
        assert!(error.to_string().contains("Downgrade"), "{error}");
        assert_eq!(value(&*store, b"k"), b"\x00value");
        store.close().unwrap();
    }
}

#[test]
fn an_upgrade_larger_than_one_chunk_rewrites_every_value_exactly_once() {
    let rocks = TempRocksDb::new();
    let store = rocks.open("large");
    store
        .settle_value_layout(ValueLayout::Plain, "key-value", &everything)
        .unwrap();
    // About 10 MiB: several of the upgrade's commits.
    let big = vec![7u8; 8 << 10];
    for i in 0..1200u32 {
        store
            .put(i.to_be_bytes().to_vec(), Some(big.clone()))
            .unwrap();
    }
    store
        .commit(&changelog_offset("large-changelog", 1))
        .unwrap();
    store.close().unwrap();

    let store = rocks.open("large");
    store
        .settle_value_layout(ValueLayout::Timestamped, "key-value", &everything)
        .unwrap();
    let expected = [&UNKNOWN_TIMESTAMP[..], &big].concat();
    for i in 0..1200u32 {
        assert_eq!(value(&*store, &i.to_be_bytes()), expected, "key {i}");
    }
    store.close().unwrap();
}

fn open_window(layout: Layout, kv: Arc<dyn KeyValueStore>) -> Box<dyn WindowStore> {
    let options = WindowStoreOptions {
        retention_period: 1_000,
        segment_interval: 100,
        retain_duplicates: false,
    };
    match layout {
        Layout::KeyOrdered => Box::new(KeyOrderedWindowStore::open(kv, options).unwrap()),
        Layout::TimeOrdered { with_index } => {
            Box::new(TimeOrderedWindowStore::open(kv, options, with_index).unwrap())
        }
    }
}

#[test]
fn window_stores_rewrite_their_records_and_keep_stream_time_and_index() {
    for layout in LAYOUTS {
        let rocks = TempRocksDb::new();
        let kv = rocks.open("windows");
        let store = open_window(layout, kv.clone());
        store.settle_value_layout(ValueLayout::Timestamped).unwrap();
        store.put(b"a", Some(b"first".to_vec()), 10).unwrap();
        store.put(b"b", Some(b"second".to_vec()), 250).unwrap();
        store
            .commit(&changelog_offset("windows-changelog", 2))
            .unwrap();
        let stream_time = store.observed_stream_time();
        kv.close().unwrap();

        let kv = rocks.open("windows");
        let store = open_window(layout, kv.clone());
        assert_eq!(
            store
                .settle_value_layout(ValueLayout::TimestampedWithHeaders)
                .unwrap(),
            Some(ValueLayout::Timestamped),
            "{layout:?}"
        );
        assert_eq!(
            store.fetch(b"a", 10, COMMITTED).unwrap(),
            Some(b"\x00first".to_vec()),
            "{layout:?}"
        );
        assert_eq!(
            store.fetch(b"b", 250, COMMITTED).unwrap(),
            Some(b"\x00second".to_vec()),
            "{layout:?}"
        );
        assert_eq!(store.observed_stream_time(), stream_time, "{layout:?}");
        kv.close().unwrap();
    }
}
