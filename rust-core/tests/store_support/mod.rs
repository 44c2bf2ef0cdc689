//! Shared by the window, session and versioned store tests: the key-value stores they run
//! on, the key layouts of the window and session stores, commit metadata, and the proptest
//! strategies their models draw from.

#![allow(dead_code)] // each test binary uses part of this module

use std::sync::Arc;

use proptest::prelude::*;
use sluice_core::store::rocks::{RocksDbConfig, RocksDbResources, StoreTuning};
use sluice_core::store::{
    CommitMetadata, InMemoryKeyValueStore, KeyValueStore, Order, Result, RocksDbKeyValueStore,
    TopicPartition,
};
use tempfile::TempDir;

/// An empty in-memory key-value store.
pub fn memory_kv(name: &str) -> Arc<dyn KeyValueStore> {
    Arc::new(InMemoryKeyValueStore::new(name))
}

/// A temporary directory for RocksDB key-value stores, with the resources they share.
/// Both outlive every store opened here as long as this value is dropped last.
pub struct TempRocksDb {
    dir: TempDir,
    resources: RocksDbResources,
}

impl TempRocksDb {
    pub fn new() -> Self {
        TempRocksDb {
            dir: TempDir::new().unwrap(),
            resources: RocksDbResources::new(&RocksDbConfig::default()),
        }
    }

    /// Opens the store in the directory, or reopens what an earlier store committed there.
    pub fn open(&self, name: &str) -> Arc<dyn KeyValueStore> {
        Arc::new(
            RocksDbKeyValueStore::open(
                name,
                self.dir.path(),
                &self.resources,
                &StoreTuning::default(),
            )
            .unwrap(),
        )
    }
}

/// A commit recording `offset` on partition 0 of `changelog`.
pub fn changelog_offset(changelog: &str, offset: i64) -> CommitMetadata {
    CommitMetadata::with_offsets([(TopicPartition::new(changelog, 0), Some(offset))])
}

/// Every item of a read, failing the test on the first error.
pub fn unwrap_all<T>(read: impl Iterator<Item = Result<T>>) -> Vec<T> {
    read.map(Result::unwrap).collect()
}

/// Record keys, built from the bytes the key-range bounds treat specially (0x00, 0x7f, 0xff)
/// and their neighbours.
pub fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::sample::select(vec![0x00u8, 0x01, 0x61, 0x62, 0x7f, 0x80, 0xff]),
        1..=3,
    )
}

pub fn order() -> impl Strategy<Value = Order> {
    prop_oneof![Just(Order::Forward), Just(Order::Reverse)]
}

/// How a window or session store keeps its records: Kafka Streams' key-ordered (segmented)
/// store, or its time-ordered one with or without the key-first index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    KeyOrdered,
    TimeOrdered { with_index: bool },
}

/// Every layout, for the cases that hold for all of them.
pub const LAYOUTS: [Layout; 3] = [
    Layout::KeyOrdered,
    Layout::TimeOrdered { with_index: false },
    Layout::TimeOrdered { with_index: true },
];

impl Layout {
    /// Whether key lookups and key ranges go through key-first keys (the key-ordered store's
    /// own, or the time-ordered store's index), with the key-first scan bounds and order.
    pub fn reads_keys_first(self) -> bool {
        self != Layout::TimeOrdered { with_index: false }
    }
}

pub fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::KeyOrdered),
        any::<bool>().prop_map(|with_index| Layout::TimeOrdered { with_index }),
    ]
}
