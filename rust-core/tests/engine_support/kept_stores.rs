//! Stores the test processors keep themselves, as the JVM's task runner and global runner
//! keep Kafka Streams' stores: one Sluice RocksDB store per store, in Kafka Streams'
//! directory layout, restored from the changelog records the engine hands over, written
//! with a changelog record the processor returns, and committed with the changelog offsets
//! the engine delivers once the transaction committed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sluice_core::engine::topology::changelog_topic_name;
use sluice_core::engine::{
    GlobalProcessor, InputOffset, KeptStateCorrupted, ProcessorError, TaskId, TaskProcessor,
};
use sluice_core::kafka::{
    record_count, DeliveredOffsets, ProducedRecord, ProducedRecords, RecordRun,
};
use sluice_core::store::rocks::{destroy_store_dir, RocksDbConfig, RocksDbResources, StoreTuning};
use sluice_core::store::{
    CommitMetadata, IsolationLevel, KeyValueStore, ReadView, RocksDbKeyValueStore, TopicPartition,
};

/// `<state.dir>/<application.id>/<task id>/rocksdb/<store>`, Kafka Streams' layout.
pub fn task_store_dir(
    state_dir: &Path,
    application_id: &str,
    task: TaskId,
    store: &str,
) -> PathBuf {
    state_dir
        .join(application_id)
        .join(task.to_string())
        .join("rocksdb")
        .join(store)
}

/// `<state.dir>/<application.id>/global/rocksdb/<store>`, Kafka Streams' layout.
pub fn global_store_dir(state_dir: &Path, application_id: &str, store: &str) -> PathBuf {
    state_dir
        .join(application_id)
        .join("global")
        .join("rocksdb")
        .join(store)
}

/// Opens the store in `dir`; one that does not open because it is corrupt is wiped and
/// opened empty, for restore to rebuild, as the JVM's stores are.
fn open_store(
    name: &str,
    dir: &Path,
    resources: &RocksDbResources,
) -> Result<RocksDbKeyValueStore, ProcessorError> {
    match RocksDbKeyValueStore::open(name, dir, resources, &StoreTuning::default()) {
        Err(e) if e.is_corrupt() => {
            destroy_store_dir(dir)?;
            Ok(RocksDbKeyValueStore::open(
                name,
                dir,
                resources,
                &StoreTuning::default(),
            )?)
        }
        opened => Ok(opened?),
    }
}

/// A store call's error as the processor reports it: a corrupt store is the task's state
/// found corrupt (Kafka Streams' `TaskCorruptedException`).
fn reported(error: sluice_core::store::Error) -> ProcessorError {
    if error.is_corrupt() {
        Box::new(KeptStateCorrupted(error.to_string()))
    } else {
        Box::new(error)
    }
}

/// Puts the records of `run` (changelog or global topic records) into `store` as they
/// are: a null key is skipped, a null value deletes.
fn apply(store: &RocksDbKeyValueStore, run: &RecordRun) -> Result<(), ProcessorError> {
    for record in run.records() {
        if let Some(key) = record.key {
            store
                .put(key.to_vec(), record.value.map(<[u8]>::to_vec))
                .map_err(reported)?;
        }
    }
    Ok(())
}

/// The offset of the last of `records` in each partition.
fn last_offsets(records: &[RecordRun]) -> BTreeMap<TopicPartition, i64> {
    records
        .iter()
        .filter_map(|run| Some((run.partition.clone(), run.last_offset()?)))
        .collect()
}

/// What the store keepers of one application did, for the tests to check.
#[derive(Default)]
pub struct StoreEvents {
    /// Changelog (or global topic) records restored.
    pub restored: AtomicU64,
    /// Records processed into global stores after restore.
    pub processed: AtomicU64,
    /// Times a keeper wiped its state.
    pub wipes: AtomicU64,
    /// Keepers closed clean.
    pub clean_closes: AtomicU64,
    /// The last keeper to close closed clean.
    pub closed_clean: AtomicBool,
}

impl StoreEvents {
    fn closed(&self, clean: bool) {
        if clean {
            self.clean_closes.fetch_add(1, Ordering::Relaxed);
        }
        self.closed_clean.store(clean, Ordering::Relaxed);
    }
}

struct TaskStore {
    name: String,
    dir: PathBuf,
    changelog: TopicPartition,
    store: RocksDbKeyValueStore,
}

/// The logged stores of one task.
pub struct TaskStores {
    stores: Vec<TaskStore>,
    resources: RocksDbResources,
    events: Arc<StoreEvents>,
}

impl TaskStores {
    /// Opens the stores `names` of `task`, each logged to its own changelog topic.
    pub fn open(
        state_dir: &Path,
        application_id: &str,
        task: TaskId,
        names: &[&str],
        events: Arc<StoreEvents>,
    ) -> Result<Self, ProcessorError> {
        let resources = RocksDbResources::new(&RocksDbConfig::default());
        let stores = names
            .iter()
            .map(|name| {
                let dir = task_store_dir(state_dir, application_id, task, name);
                Ok(TaskStore {
                    store: open_store(name, &dir, &resources)?,
                    name: name.to_string(),
                    dir,
                    changelog: TopicPartition::new(
                        changelog_topic_name(application_id, name),
                        task.partition,
                    ),
                })
            })
            .collect::<Result<Vec<_>, ProcessorError>>()?;
        Ok(TaskStores {
            stores,
            resources,
            events,
        })
    }

    fn find(&self, name: &str) -> Result<&TaskStore, ProcessorError> {
        self.stores
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("no store {name}").into())
    }

    /// The value of `key` in store `name`, uncommitted writes included.
    pub fn get(&self, name: &str, key: &[u8]) -> Result<Option<Vec<u8>>, ProcessorError> {
        let store = &self.find(name)?.store;
        store
            .get(key, IsolationLevel::ReadUncommitted)
            .map_err(reported)
    }

    /// Writes `value` under `key` into store `name` and returns the changelog record of the
    /// write, stamped `timestamp`, as Kafka Streams' change-logging layer emits it.
    pub fn put(
        &self,
        name: &str,
        key: Vec<u8>,
        value: Vec<u8>,
        timestamp: i64,
    ) -> Result<ProducedRecord, ProcessorError> {
        let store = self.find(name)?;
        store
            .store
            .put(key.clone(), Some(value.clone()))
            .map_err(reported)?;
        let changelog = &store.changelog;
        Ok(ProducedRecord::new(
            &changelog.topic,
            Some(changelog.partition),
            Some(key),
            Some(value),
            timestamp,
        ))
    }

    fn committed_changelog_offsets(
        &self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        self.stores
            .iter()
            .map(|s| {
                let offset = s.store.committed_offset(&s.changelog).map_err(reported)?;
                Ok((s.changelog.clone(), offset))
            })
            .collect()
    }

    fn wipe(&mut self) -> Result<(), ProcessorError> {
        for store in &mut self.stores {
            store.store.close()?;
            destroy_store_dir(&store.dir)?;
            store.store = open_store(&store.name, &store.dir, &self.resources)?;
        }
        self.events.wipes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Puts restored changelog records into their stores and commits them with their offsets.
    fn restore(&self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        for run in records {
            let partition = &run.partition;
            let store = self
                .stores
                .iter()
                .find(|s| &s.changelog == partition)
                .ok_or_else(|| format!("no store is logged to {partition}"))?;
            apply(&store.store, run)?;
            let metadata = CommitMetadata::with_offsets([(partition.clone(), run.last_offset())]);
            store.store.commit(&metadata).map_err(reported)?;
        }
        self.events
            .restored
            .fetch_add(record_count(records) as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Commits every store with the offset of its last changelog record in the committed
    /// transaction, or the offset it had when the transaction wrote none to it.
    fn commit(&self, delivered: &DeliveredOffsets) -> Result<(), ProcessorError> {
        for store in &self.stores {
            let offset = match delivered.get(&store.changelog) {
                Some(offset) => Some(*offset),
                None => store
                    .store
                    .committed_offset(&store.changelog)
                    .map_err(reported)?,
            };
            let metadata = CommitMetadata::with_offsets([(store.changelog.clone(), offset)]);
            store.store.commit(&metadata).map_err(reported)?;
        }
        Ok(())
    }

    fn rollback(&self) -> Result<(), ProcessorError> {
        for store in &self.stores {
            store.store.rollback().map_err(reported)?;
        }
        Ok(())
    }

    fn close(&self, clean: bool) -> Result<(), ProcessorError> {
        for store in &self.stores {
            store.store.close()?;
        }
        self.events.closed(clean);
        Ok(())
    }

    fn uncommitted_bytes(&self) -> u64 {
        self.stores
            .iter()
            .map(|s| s.store.approximate_uncommitted_bytes())
            .sum()
    }
}

/// What a task does with its records, over the stores a [`StoreKeepingProcessor`] keeps.
pub trait StoreLogic: Send {
    /// See [`TaskProcessor::process`].
    fn process(
        &mut self,
        stores: &TaskStores,
        records: &[RecordRun],
    ) -> Result<ProducedRecords, ProcessorError>;

    /// See [`TaskProcessor::committable_offsets`].
    fn committable_offsets(
        &mut self,
    ) -> Result<Option<BTreeMap<TopicPartition, InputOffset>>, ProcessorError> {
        Ok(None)
    }

    /// The uncommitted work was dropped: forget what it was.
    fn rolled_back(&mut self) {}
}

/// A task processor keeping its task's stores, the same contract the JVM's task runner
/// fulfils; `logic` processes the records.
pub struct StoreKeepingProcessor<L> {
    pub stores: TaskStores,
    pub logic: L,
}

impl<L: StoreLogic> TaskProcessor for StoreKeepingProcessor<L> {
    fn process(&mut self, records: &[RecordRun]) -> Result<ProducedRecords, ProcessorError> {
        self.logic.process(&self.stores, records)
    }

    fn committed_changelog_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        self.stores.committed_changelog_offsets()
    }

    fn wipe_state(&mut self) -> Result<(), ProcessorError> {
        self.stores.wipe()
    }

    fn restore(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        self.stores.restore(records)
    }

    fn committable_offsets(
        &mut self,
    ) -> Result<Option<BTreeMap<TopicPartition, InputOffset>>, ProcessorError> {
        self.logic.committable_offsets()
    }

    fn committed(&mut self, delivered: &DeliveredOffsets) -> Result<(), ProcessorError> {
        self.stores.commit(delivered)
    }

    fn rolled_back(&mut self, _cause: &str) -> Result<(), ProcessorError> {
        self.logic.rolled_back();
        self.stores.rollback()
    }

    fn close(&mut self, clean: bool) -> Result<(), ProcessorError> {
        self.stores.close(clean)
    }

    fn uncommitted_bytes(&self) -> u64 {
        self.stores.uncommitted_bytes()
    }
}

/// The global stores' read views, by store name, shared with the tasks that read them.
pub type GlobalViews = Arc<Mutex<BTreeMap<String, ReadView>>>;

struct GlobalStore {
    name: String,
    topic: String,
    dir: PathBuf,
    store: Arc<RocksDbKeyValueStore>,
}

/// Keeps the global stores, the same contract the JVM's global runner fulfils: each store
/// holds its topic's records as they are, with the offsets of its partitions.
pub struct GlobalStoreKeeper {
    stores: Vec<GlobalStore>,
    /// Every partition of the global topics.
    partitions: Vec<TopicPartition>,
    /// The last offset processed per partition since the last commit.
    staged: BTreeMap<TopicPartition, i64>,
    views: GlobalViews,
    resources: RocksDbResources,
    events: Arc<StoreEvents>,
}

impl GlobalStoreKeeper {
    /// Opens the global stores `stores` (name, topic) of the partitions `partitions`, and
    /// shares their views through `views`.
    pub fn open(
        state_dir: &Path,
        application_id: &str,
        stores: &[(&str, &str)],
        partitions: Vec<TopicPartition>,
        views: GlobalViews,
        events: Arc<StoreEvents>,
    ) -> Result<Self, ProcessorError> {
        let resources = RocksDbResources::new(&RocksDbConfig::default());
        let stores = stores
            .iter()
            .map(|(name, topic)| {
                let dir = global_store_dir(state_dir, application_id, name);
                Ok(GlobalStore {
                    store: Arc::new(open_store(name, &dir, &resources)?),
                    name: name.to_string(),
                    topic: topic.to_string(),
                    dir,
                })
            })
            .collect::<Result<Vec<_>, ProcessorError>>()?;
        let keeper = GlobalStoreKeeper {
            stores,
            partitions,
            staged: BTreeMap::new(),
            views,
            resources,
            events,
        };
        keeper.share_views();
        Ok(keeper)
    }

    /// Tasks see every record applied, committed or not, as they see Kafka Streams' global
    /// stores.
    fn share_views(&self) {
        let mut views = self.views.lock().unwrap();
        for store in &self.stores {
            let view = ReadView::new(
                Arc::clone(&store.store) as Arc<dyn KeyValueStore>,
                IsolationLevel::ReadUncommitted,
            );
            views.insert(store.name.clone(), view);
        }
    }

    fn store_of(&self, topic: &str) -> Result<&GlobalStore, ProcessorError> {
        self.stores
            .iter()
            .find(|s| s.topic == topic)
            .ok_or_else(|| format!("no global store reads {topic}").into())
    }

    /// Applies `records` to their stores; returns the last offset of each partition.
    fn apply(
        &self,
        records: &[RecordRun],
    ) -> Result<BTreeMap<TopicPartition, i64>, ProcessorError> {
        for run in records {
            apply(&self.store_of(&run.partition.topic)?.store, run)?;
        }
        Ok(last_offsets(records))
    }

    /// Commits each store with the offsets of `offsets` in its topic; a store without any
    /// keeps its offsets (an empty offset map would erase them).
    fn commit_offsets(
        &self,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<(), ProcessorError> {
        for store in &self.stores {
            let own: Vec<(TopicPartition, Option<i64>)> = offsets
                .iter()
                .filter(|(p, _)| p.topic == store.topic)
                .map(|(p, o)| (p.clone(), Some(*o)))
                .collect();
            if !own.is_empty() {
                let metadata = CommitMetadata::with_offsets(own);
                store.store.commit(&metadata).map_err(reported)?;
            }
        }
        Ok(())
    }
}

impl GlobalProcessor for GlobalStoreKeeper {
    fn committed_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        self.partitions
            .iter()
            .map(|partition| {
                let store = &self.store_of(&partition.topic)?.store;
                let offset = store.committed_offset(partition).map_err(reported)?;
                Ok((partition.clone(), offset))
            })
            .collect()
    }

    fn wipe_state(&mut self) -> Result<(), ProcessorError> {
        for store in &mut self.stores {
            store.store.close()?;
            destroy_store_dir(&store.dir)?;
            store.store = Arc::new(open_store(&store.name, &store.dir, &self.resources)?);
        }
        self.share_views();
        self.events.wipes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn restore(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        let count = record_count(records) as u64;
        let offsets = self.apply(records)?;
        self.commit_offsets(&offsets)?;
        self.events.restored.fetch_add(count, Ordering::Relaxed);
        Ok(())
    }

    fn process(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        let count = record_count(records) as u64;
        let offsets = self.apply(records)?;
        self.staged.extend(offsets);
        self.events.processed.fetch_add(count, Ordering::Relaxed);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), ProcessorError> {
        let staged = std::mem::take(&mut self.staged);
        self.commit_offsets(&staged)
    }

    fn close(&mut self, clean: bool) -> Result<(), ProcessorError> {
        for store in &self.stores {
            store.store.close()?;
        }
        self.events.closed(clean);
        Ok(())
    }

    fn uncommitted_bytes(&self) -> u64 {
        self.stores
            .iter()
            .map(|s| s.store.approximate_uncommitted_bytes())
            .sum()
    }
}
