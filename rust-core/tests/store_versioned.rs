//! Versioned store: a property test against a model of Kafka Streams' versioned key-value
//! store contract, plus put return codes, grace and history retention edge cases.

mod store_support;

use std::collections::BTreeMap;

use proptest::prelude::*;
use sluice_core::store::versioned::{
    VersionedRecord, VersionedStore, PUT_RETURN_CODE_NOT_PUT, PUT_RETURN_CODE_VALID_TO_UNDEFINED,
};
use sluice_core::store::{IsolationLevel, Order};
use store_support::{changelog_offset, memory_kv, order, TempRocksDb};

const HISTORY: i64 = 50;
const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;

fn memory_store() -> VersionedStore {
    VersionedStore::open(memory_kv("versioned"), HISTORY).unwrap()
}

fn commit(store: &VersionedStore, offset: i64) {
    store
        .commit(&changelog_offset("versioned-changelog", offset))
        .unwrap();
}

fn record(value: &[u8], timestamp: i64, valid_to: Option<i64>) -> VersionedRecord {
    VersionedRecord {
        value: value.to_vec(),
        timestamp,
        valid_to,
    }
}

type Versions = BTreeMap<Vec<u8>, BTreeMap<i64, Option<Vec<u8>>>>;

/// Kafka Streams' versioned store contract: every accepted version is kept (reads decide
/// what history is still reachable), the latest version forever.
#[derive(Clone)]
struct Model {
    stream_time: i64,
    versions: Versions,
    committed: (Versions, i64),
}

impl Model {
    fn new() -> Self {
        Model {
            stream_time: -1,
            versions: Versions::new(),
            committed: (Versions::new(), -1),
        }
    }

    fn horizon(&self) -> i64 {
        self.stream_time - HISTORY
    }

    fn put(&mut self, key: &[u8], value: Option<Vec<u8>>, timestamp: i64) -> i64 {
        if timestamp < self.horizon() {
            return PUT_RETURN_CODE_NOT_PUT;
        }
        self.stream_time = self.stream_time.max(timestamp);
        let versions = self.versions.entry(key.to_vec()).or_default();
        versions.insert(timestamp, value);
        versions
            .range(timestamp + 1..)
            .next()
            .map_or(PUT_RETURN_CODE_VALID_TO_UNDEFINED, |(next, _)| *next)
    }

    fn delete(&mut self, key: &[u8], timestamp: i64) -> Option<VersionedRecord> {
        if timestamp < self.horizon() {
            return None;
        }
        let existing = self.get_as_of(key, timestamp);
        self.put(key, None, timestamp);
        existing
    }

    fn get(&self, key: &[u8]) -> Option<VersionedRecord> {
        let (timestamp, value) = self.versions.get(key)?.iter().next_back()?;
        value.as_ref().map(|value| record(value, *timestamp, None))
    }

    fn get_as_of(&self, key: &[u8], as_of: i64) -> Option<VersionedRecord> {
        let versions = self.versions.get(key)?;
        if as_of < self.horizon() {
            return self.get(key).filter(|latest| latest.timestamp <= as_of);
        }
        let (timestamp, value) = versions.range(..=as_of).next_back()?;
        let valid_to = versions
            .range(timestamp + 1..)
            .next()
            .map(|(next, _)| *next);
        value
            .as_ref()
            .map(|value| record(value, *timestamp, valid_to))
    }

    /// Kafka Streams' multi-version query over `versions` (the current or the committed
    /// ones): versions whose validity overlaps `[from, to]`, skipping tombstones. History
    /// whose valid-to fell behind the retention at `pruned_at` stream time is gone (Kafka
    /// Streams drops it a segment at a time; Sluice at the retention itself).
    fn get_versions(
        &self,
        versions: &Versions,
        pruned_at: i64,
        key: &[u8],
        from: i64,
        to: i64,
        order: Order,
    ) -> Vec<VersionedRecord> {
        let Some(versions) = versions.get(key) else {
            return Vec::new();
        };
        if to < self.horizon() {
            let latest = versions
                .iter()
                .next_back()
                .filter(|(timestamp, _)| **timestamp <= to);
            return latest
                .and_then(|(timestamp, value)| Some(record(value.as_ref()?, *timestamp, None)))
                .into_iter()
                .collect();
        }
        let mut found: Vec<_> = versions
            .iter()
            .filter_map(|(timestamp, value)| {
                let valid_to = versions
                    .range(timestamp + 1..)
                    .next()
                    .map(|(next, _)| *next);
                let live = valid_to.is_none_or(|valid_to| valid_to >= pruned_at - HISTORY);
                let overlaps = *timestamp <= to && valid_to.is_none_or(|valid_to| valid_to > from);
                let value = value.as_ref().filter(|_| live && overlaps)?;
                Some(record(value, *timestamp, valid_to))
            })
            .collect();
        if order == Order::Reverse {
            found.reverse();
        }
        found
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put {
        key: u8,
        timestamp: i64,
        tombstone: bool,
    },
    Delete {
        key: u8,
        timestamp: i64,
    },
    Get {
        key: u8,
    },
    GetAsOf {
        key: u8,
        as_of: i64,
    },
    GetVersions {
        key: u8,
        from: i64,
        to: i64,
        order: Order,
        isolation: IsolationLevel,
    },
    Commit,
    Rollback,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u8..4;
    // A coarse grid, so query bounds often fall exactly on version timestamps.
    let time = (0i64..60).prop_map(|t| t * 5);
    prop_oneof![
        6 => (key.clone(), time.clone(), prop::bool::weighted(0.15)).prop_map(|(key, timestamp, tombstone)| Op::Put { key, timestamp, tombstone }),
        1 => (key.clone(), time.clone()).prop_map(|(key, timestamp)| Op::Delete { key, timestamp }),
        1 => key.clone().prop_map(|key| Op::Get { key }),
        3 => (key.clone(), time.clone()).prop_map(|(key, as_of)| Op::GetAsOf { key, as_of }),
        3 => (key, time.clone(), time, order(), isolation())
            .prop_map(|(key, from, to, order, isolation)| Op::GetVersions { key, from, to, order, isolation }),
        1 => Just(Op::Commit),
        1 => Just(Op::Rollback),
    ]
}

fn isolation() -> impl Strategy<Value = IsolationLevel> {
    prop_oneof![
        Just(IsolationLevel::ReadCommitted),
        Just(IsolationLevel::ReadUncommitted)
    ]
}

/// Keys 0..4 map to keys of different lengths that are prefixes of each other.
fn key_bytes(key: u8) -> Vec<u8> {
    vec![b'k'; usize::from(key) + 1]
}

fn run(store: &VersionedStore, model: &mut Model, ops: Vec<Op>) -> Result<(), TestCaseError> {
    for (index, op) in ops.into_iter().enumerate() {
        match op {
            Op::Put {
                key,
                timestamp,
                tombstone,
            } => {
                let value = (!tombstone).then(|| (index as u32).to_be_bytes().to_vec());
                let actual = store
                    .put(&key_bytes(key), value.clone(), timestamp)
                    .unwrap();
                prop_assert_eq!(
                    actual,
                    model.put(&key_bytes(key), value, timestamp),
                    "put step {}",
                    index
                );
            }
            Op::Delete { key, timestamp } => {
                let actual = store.delete(&key_bytes(key), timestamp).unwrap();
                prop_assert_eq!(
                    actual,
                    model.delete(&key_bytes(key), timestamp),
                    "delete step {}",
                    index
                );
            }
            Op::Get { key } => {
                prop_assert_eq!(
                    store.get(&key_bytes(key), UNCOMMITTED).unwrap(),
                    model.get(&key_bytes(key)),
                    "get step {}",
                    index
                );
            }
            Op::GetAsOf { key, as_of } => {
                let actual = store
                    .get_as_of(&key_bytes(key), as_of, UNCOMMITTED)
                    .unwrap();
                prop_assert_eq!(
                    actual,
                    model.get_as_of(&key_bytes(key), as_of),
                    "get_as_of step {}",
                    index
                );
            }
            Op::GetVersions {
                key,
                from,
                to,
                order,
                isolation,
            } => {
                let actual = store
                    .get_versions(&key_bytes(key), from, to, order, isolation)
                    .unwrap();
                // Committed history was pruned at the committed stream time; every read is
                // judged by the current one.
                let (versions, pruned_at) = match isolation {
                    IsolationLevel::ReadUncommitted => (&model.versions, model.stream_time),
                    IsolationLevel::ReadCommitted => (&model.committed.0, model.committed.1),
                };
                let expected =
                    model.get_versions(versions, pruned_at, &key_bytes(key), from, to, order);
                prop_assert_eq!(actual, expected, "get_versions step {}", index);
            }
            Op::Commit => {
                commit(store, index as i64);
                model.committed = (model.versions.clone(), model.stream_time);
            }
            Op::Rollback => {
                store.rollback().unwrap();
                (model.versions, model.stream_time) = model.committed.clone();
            }
        }
        prop_assert_eq!(store.observed_stream_time(), model.stream_time);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn versioned_store_matches_the_model(ops in prop::collection::vec(op(), 1..100)) {
        let store = memory_store();
        let mut model = Model::new();
        run(&store, &mut model, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn versioned_store_on_rocksdb_matches_the_model(ops in prop::collection::vec(op(), 1..80)) {
        let rocksdb = TempRocksDb::new();
        let store = VersionedStore::open(rocksdb.open("versioned"), HISTORY).unwrap();
        let mut model = Model::new();
        run(&store, &mut model, ops)?;
    }
}

#[test]
fn put_returns_the_valid_to_of_the_new_version() {
    let store = memory_store();
    assert_eq!(
        store.put(b"k", Some(b"a".to_vec()), 10).unwrap(),
        PUT_RETURN_CODE_VALID_TO_UNDEFINED
    );
    assert_eq!(
        store.put(b"k", Some(b"c".to_vec()), 30).unwrap(),
        PUT_RETURN_CODE_VALID_TO_UNDEFINED
    );
    assert_eq!(store.put(b"k", Some(b"b".to_vec()), 20).unwrap(), 30);
    assert_eq!(
        store.put(b"k", Some(b"b2".to_vec()), 20).unwrap(),
        30,
        "replacing keeps the valid-to"
    );
    assert_eq!(
        store.put(b"k", Some(b"c2".to_vec()), 30).unwrap(),
        PUT_RETURN_CODE_VALID_TO_UNDEFINED
    );
    assert_eq!(
        store.get_as_of(b"k", 25, UNCOMMITTED).unwrap(),
        Some(record(b"b2", 20, Some(30)))
    );
    assert_eq!(
        store.get(b"k", UNCOMMITTED).unwrap(),
        Some(record(b"c2", 30, None))
    );
}

#[test]
fn puts_older_than_the_grace_period_are_not_put() {
    let store = memory_store();
    store.put(b"k", Some(b"a".to_vec()), 100).unwrap();
    assert_eq!(
        store.put(b"k", Some(b"old".to_vec()), 49).unwrap(),
        PUT_RETURN_CODE_NOT_PUT
    );
    assert_eq!(
        store.put(b"k", Some(b"edge".to_vec()), 50).unwrap(),
        100,
        "exactly at the grace boundary is accepted"
    );
    assert_eq!(store.delete(b"k", 10).unwrap(), None);
    assert_eq!(store.observed_stream_time(), 100);
}

#[test]
fn reads_older_than_history_retention_see_only_the_latest_version() {
    let store = memory_store();
    store.put(b"k", Some(b"a".to_vec()), 10).unwrap();
    store.put(b"k", Some(b"b".to_vec()), 40).unwrap();
    store.put(b"other", Some(b"x".to_vec()), 100).unwrap();
    // History retention reaches back to 50: at 45 the latest version (40) answers...
    assert_eq!(
        store.get_as_of(b"k", 45, UNCOMMITTED).unwrap(),
        Some(record(b"b", 40, None))
    );
    // ...and at 20, where `a` was valid, nothing does.
    assert_eq!(store.get_as_of(b"k", 20, UNCOMMITTED).unwrap(), None);
    assert_eq!(
        store.get_as_of(b"k", 60, UNCOMMITTED).unwrap(),
        Some(record(b"b", 40, None))
    );
}

#[test]
fn tombstones_end_a_version_and_hide_the_key() {
    let store = memory_store();
    store.put(b"k", Some(b"a".to_vec()), 10).unwrap();
    assert_eq!(
        store.delete(b"k", 20).unwrap(),
        Some(record(b"a", 10, None))
    );
    assert_eq!(store.get(b"k", UNCOMMITTED).unwrap(), None);
    assert_eq!(
        store.get_as_of(b"k", 15, UNCOMMITTED).unwrap(),
        Some(record(b"a", 10, Some(20)))
    );
    assert_eq!(store.put(b"k", Some(b"between".to_vec()), 15).unwrap(), 20);
}

#[test]
fn expired_history_is_deleted_from_the_underlying_store() {
    let kv = memory_kv("versioned");
    let store = VersionedStore::open(kv.clone(), HISTORY).unwrap();
    for timestamp in [10, 20, 30] {
        store
            .put(b"k", Some(timestamp.to_string().into_bytes()), timestamp)
            .unwrap();
    }
    let entries = || {
        kv.approximate_num_entries(IsolationLevel::ReadUncommitted)
            .unwrap()
    };
    commit(&store, 1);
    let before = entries();
    store.put(b"other", Some(b"x".to_vec()), 200).unwrap();
    commit(&store, 2);
    // Versions 10 and 20 (and their index entries) are gone; 30 is k's latest and stays.
    assert_eq!(entries(), before - 4 + 1);
    assert_eq!(
        store.get(b"k", UNCOMMITTED).unwrap(),
        Some(record(b"30", 30, None))
    );
}

#[test]
fn rollback_restores_versions_and_stream_time() {
    let store = memory_store();
    store.put(b"k", Some(b"a".to_vec()), 10).unwrap();
    commit(&store, 1);
    store.put(b"k", Some(b"b".to_vec()), 500).unwrap();
    assert_eq!(
        store.get(b"k", IsolationLevel::ReadCommitted).unwrap(),
        Some(record(b"a", 10, None))
    );
    store.rollback().unwrap();
    assert_eq!(store.observed_stream_time(), 10);
    assert_eq!(
        store.get(b"k", UNCOMMITTED).unwrap(),
        Some(record(b"a", 10, None))
    );
    assert_eq!(store.approximate_uncommitted_bytes(), 0);
}

#[test]
fn restore_applies_changelog_records_without_a_grace_period() {
    let store = memory_store();
    store
        .restore(vec![
            (b"k".to_vec(), Some(b"new".to_vec()), 100),
            (b"k".to_vec(), Some(b"late".to_vec()), 60),
            (b"k".to_vec(), None, 120),
        ])
        .unwrap();
    assert_eq!(store.observed_stream_time(), 120);
    assert_eq!(store.get(b"k", UNCOMMITTED).unwrap(), None);
    assert_eq!(
        store.get_as_of(b"k", 80, UNCOMMITTED).unwrap(),
        Some(record(b"late", 60, Some(100)))
    );
}

#[test]
fn get_versions_returns_the_versions_overlapping_the_range_without_tombstones() {
    let store = memory_store();
    store.put(b"k", Some(b"a".to_vec()), 10).unwrap();
    store.put(b"k", Some(b"b".to_vec()), 20).unwrap();
    store.put(b"k", None, 30).unwrap();
    store.put(b"k", Some(b"c".to_vec()), 40).unwrap();
    let versions = |from, to, order| {
        store
            .get_versions(b"k", from, to, order, UNCOMMITTED)
            .unwrap()
    };
    assert_eq!(
        versions(15, 35, Order::Forward),
        vec![record(b"a", 10, Some(20)), record(b"b", 20, Some(30))]
    );
    assert_eq!(
        versions(20, 40, Order::Reverse),
        vec![record(b"c", 40, None), record(b"b", 20, Some(30))]
    );
    assert_eq!(
        versions(30, 39, Order::Forward),
        vec![],
        "only the tombstone was valid"
    );
    store.put(b"other", Some(b"x".to_vec()), 100).unwrap();
    // Older than the history retention (50): only the latest version can answer.
    assert_eq!(
        versions(0, 45, Order::Forward),
        vec![record(b"c", 40, None)]
    );
    assert_eq!(versions(0, 39, Order::Forward), vec![]);
}
