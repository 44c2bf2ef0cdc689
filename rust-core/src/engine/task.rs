//! A task: one sub-topology on one partition, with its stores, its processor and the input
//! offsets it consumed since the last commit.
//!
//! Stores live in `<state.dir>/<application.id>/<task id>/rocksdb/<store>`, Kafka Streams'
//! layout. A store directory that does not open as a Sluice store is wiped and restored.
//! When the processor keeps the stores, the task knows only their changelog partitions and
//! passes every store step on to the processor.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::error::{Error, Result};
use crate::engine::global::GlobalStores;
use crate::engine::internal_topics::{ResolvedStore, ResolvedSubtopology};
use crate::engine::processor::{InputOffset, ProcessorError, TaskContext, TaskProcessor};
use crate::engine::topology::TaskId;
use crate::kafka::{ClientError, ConsumedRecord, DeliveredOffsets, ProducedRecord};
use crate::store::format::changelog::StoreValueLayout;
use crate::store::rocks::{destroy_store_dir, RocksDbResources};
use crate::store::{
    CommitMetadata, InMemoryKeyValueStore, KeyValueStore, RocksDbKeyValueStore, TopicPartition,
};

/// One store of a task.
pub struct TaskStore {
    /// Store name.
    pub name: String,
    /// The store.
    pub store: Arc<dyn KeyValueStore>,
    /// Its changelog partition, when logged.
    pub changelog: Option<TopicPartition>,
    /// How its values map to changelog records.
    pub layout: StoreValueLayout,
    /// Its directory, when persistent.
    dir: Option<PathBuf>,
}

impl TaskStore {
    fn open(
        description: &ResolvedStore,
        task: TaskId,
        task_dir: &Path,
        resources: &RocksDbResources,
    ) -> Result<Self> {
        let name = description.description.name.clone();
        let dir = description
            .description
            .persistent
            .then(|| task_dir.join("rocksdb").join(&name));
        let store = open_store(&name, dir.as_deref(), resources)?;
        Ok(TaskStore {
            changelog: description
                .changelog_topic
                .as_ref()
                .map(|topic| TopicPartition::new(topic.clone(), task.partition)),
            layout: description.description.value_layout.into(),
            name,
            store,
            dir,
        })
    }

    /// True when the store lives in `dir`.
    pub fn is_in(&self, dir: &Path) -> bool {
        self.dir.as_deref() == Some(dir)
    }

    /// Replaces the store by an empty one, deleting its directory.
    pub fn wipe(&mut self, resources: &RocksDbResources) -> Result<()> {
        self.store
            .close()
            .map_err(|e| Error::store(format!("closing store {} to wipe it", self.name), e))?;
        if let Some(dir) = &self.dir {
            destroy_store_dir(dir)
                .map_err(|e| Error::store(format!("wiping store {}", self.name), e))?;
        }
        self.store = open_store(&self.name, self.dir.as_deref(), resources)?;
        Ok(())
    }
}

/// Opens the store `name` in `dir` (in memory without one); a persistent store that does not
/// open because it is corrupt is wiped and opened empty, for restore to rebuild.
pub(crate) fn open_store(
    name: &str,
    dir: Option<&Path>,
    resources: &RocksDbResources,
) -> Result<Arc<dyn KeyValueStore>> {
    let Some(dir) = dir else {
        return Ok(Arc::new(InMemoryKeyValueStore::new(name)));
    };
    match RocksDbKeyValueStore::open(name, dir, resources) {
        Ok(store) => Ok(Arc::new(store)),
        Err(e) if e.is_corrupt() => {
            // The changelog holds the state: rebuild rather than fail.
            destroy_store_dir(dir)
                .map_err(|e| Error::store(format!("wiping corrupt store {name}"), e))?;
            RocksDbKeyValueStore::open(name, dir, resources)
                .map(|s| Arc::new(s) as Arc<dyn KeyValueStore>)
                .map_err(|e| Error::store(format!("reopening wiped store {name}"), e))
        }
        Err(e) => Err(Error::store(format!("opening store {name}"), e)),
    }
}

/// The changelog of a store a task's processor keeps.
pub struct KeptChangelog {
    /// The store's name.
    pub store: String,
    /// The task's partition of the store's changelog topic.
    pub partition: TopicPartition,
    /// The changelog is a source topic of the task (see
    /// [`StoreDescription::source_topic_changelog`](crate::engine::topology::StoreDescription)):
    /// restore stops at the group's committed offset.
    pub is_source_topic: bool,
}

/// An active task.
pub struct Task {
    /// Its id.
    pub id: TaskId,
    /// The stores the engine keeps for it.
    pub stores: Vec<TaskStore>,
    /// The changelogs of the stores its processor keeps.
    pub kept_changelogs: Vec<KeptChangelog>,
    /// Changelog partitions still being restored; the task processes once this is empty.
    pub restoring: BTreeSet<TopicPartition>,
    /// Input partition → next offset to read, for records processed since the last commit.
    pub consumed: BTreeMap<TopicPartition, i64>,
    /// How many records the processor returned since the last commit or rollback: how it
    /// numbers them when one fails to be produced.
    returned: u64,
    processor: Box<dyn TaskProcessor>,
}

/// Records a task's processor returned to produce.
pub struct Outputs {
    /// The processor's number of the first one (see [`TaskProcessor::send_failed`]).
    pub first_index: u64,
    /// The records, in order.
    pub records: Vec<ProducedRecord>,
}

impl Task {
    /// Opens the stores of `task` (unless `processor_keeps_stores`) and creates nothing
    /// else; restore decides what they lack.
    pub fn open(
        id: TaskId,
        subtopology: &ResolvedSubtopology,
        processor_keeps_stores: bool,
        application_dir: &Path,
        resources: &RocksDbResources,
        processor: Box<dyn TaskProcessor>,
    ) -> Result<Self> {
        let (stores, kept_changelogs) = if processor_keeps_stores {
            let changelogs = subtopology
                .stores
                .iter()
                .filter_map(|s| {
                    let topic = s.changelog_topic.clone()?;
                    Some(KeptChangelog {
                        store: s.description.name.clone(),
                        partition: TopicPartition::new(topic, id.partition),
                        is_source_topic: s.changelog_is_source_topic(),
                    })
                })
                .collect();
            (Vec::new(), changelogs)
        } else {
            let task_dir = application_dir.join(id.to_string());
            let stores = subtopology
                .stores
                .iter()
                .map(|s| TaskStore::open(s, id, &task_dir, resources))
                .collect::<Result<Vec<_>>>()?;
            (stores, Vec::new())
        };
        Ok(Task {
            id,
            stores,
            kept_changelogs,
            restoring: BTreeSet::new(),
            consumed: BTreeMap::new(),
            returned: 0,
            processor,
        })
    }

    /// True once restored.
    pub fn is_running(&self) -> bool {
        self.restoring.is_empty()
    }

    /// Runs the processor on `records` (it may read `globals`) and remembers how far the
    /// inputs were consumed.
    pub fn process(
        &mut self,
        records: Vec<ConsumedRecord>,
        globals: &GlobalStores,
    ) -> Result<Outputs> {
        for record in &records {
            self.consumed
                .insert(record.topic_partition(), record.offset + 1);
        }
        let context = TaskContext::new(self.id, &self.stores, globals);
        let outputs = self.processor.process(&context, records);
        self.outputs(outputs)
    }

    /// Tells the processor how far behind its inputs' ends the consumer is.
    pub fn update_lags(&mut self, lags: &[(TopicPartition, Option<i64>)]) -> Result<()> {
        let updated = self.processor.update_lags(lags);
        self.processor_outcome(updated)
    }

    /// Wall-clock punctuation, when due: what it produced.
    pub fn punctuate(&mut self) -> Result<Outputs> {
        let outputs = self.processor.punctuate();
        self.outputs(outputs)
    }

    /// The first step of a commit: what flushing the processor's caches produced.
    pub fn flush(&mut self) -> Result<Outputs> {
        let outputs = self.processor.flush();
        self.outputs(outputs)
    }

    /// The record the processor returned as number `index` could not be produced: what
    /// the processor produces instead.
    pub fn send_failed(
        &mut self,
        index: u64,
        record: &ProducedRecord,
        error: &ClientError,
    ) -> Result<Outputs> {
        let outputs = self.processor.send_failed(index, record, error);
        self.outputs(outputs)
    }

    fn outputs(
        &mut self,
        outcome: std::result::Result<Vec<ProducedRecord>, ProcessorError>,
    ) -> Result<Outputs> {
        let records = self.processor_outcome(outcome)?;
        let first_index = self.returned;
        self.returned += records.len() as u64;
        Ok(Outputs {
            first_index,
            records,
        })
    }

    /// The input offsets this commit covers: the processor's when it decides them,
    /// otherwise past every record it was handed.
    pub fn committable_offsets(&mut self) -> Result<BTreeMap<TopicPartition, InputOffset>> {
        let decided = self.processor.committable_offsets();
        Ok(self.processor_outcome(decided)?.unwrap_or_else(|| {
            self.consumed
                .iter()
                .map(|(partition, &offset)| {
                    let position = InputOffset {
                        offset,
                        metadata: None,
                    };
                    (partition.clone(), position)
                })
                .collect()
        }))
    }

    /// The offsets the stores its processor keeps committed last, by changelog partition.
    pub fn kept_store_offsets(&mut self) -> Result<BTreeMap<TopicPartition, Option<i64>>> {
        let offsets = self.processor.committed_changelog_offsets();
        self.processor_outcome(offsets)
    }

    /// Drops the data of the stores its processor keeps.
    pub fn wipe_kept_stores(&mut self) -> Result<()> {
        let wiped = self.processor.wipe_state();
        self.processor_outcome(wiped)
    }

    /// Hands changelog records to the stores its processor keeps.
    pub fn restore_kept_stores(&mut self, records: Vec<ConsumedRecord>) -> Result<()> {
        let restored = self.processor.restore(records);
        self.processor_outcome(restored)
    }

    /// Marks `partition` restored; the last one makes the task run.
    pub fn finish_restoring(&mut self, partition: &TopicPartition) -> Result<()> {
        if self.restoring.remove(partition) && self.restoring.is_empty() {
            let started = self.processor.restored();
            self.processor_outcome(started)?;
        }
        Ok(())
    }

    /// Starts the task right away when none of its changelogs needs restoring.
    pub fn start_if_restored(&mut self) -> Result<()> {
        if self.restoring.is_empty() {
            let started = self.processor.restored();
            self.processor_outcome(started)?;
        }
        Ok(())
    }

    /// Bytes staged in the overlays of its stores.
    pub fn uncommitted_bytes(&self) -> u64 {
        self.stores
            .iter()
            .map(|s| s.store.approximate_uncommitted_bytes())
            .sum::<u64>()
            + self.processor.uncommitted_bytes()
    }

    fn processor_outcome<T>(&self, outcome: std::result::Result<T, ProcessorError>) -> Result<T> {
        outcome.map_err(|source| Error::Processor {
            task: self.id.to_string(),
            source,
        })
    }

    /// Commits every store, recording for a logged store the offset of the last changelog
    /// record `delivered` in the committed transaction (or keeping its offset when the
    /// transaction wrote none to it).
    pub fn commit_stores(&mut self, delivered: &DeliveredOffsets) -> Result<()> {
        for store in &self.stores {
            let metadata = match &store.changelog {
                Some(partition) => {
                    let offset = match delivered.get(partition) {
                        Some(offset) => Some(*offset),
                        None => store
                            .store
                            .committed_offset(partition)
                            .map_err(|e| Error::store(format!("store {}", store.name), e))?,
                    };
                    CommitMetadata::with_offsets([(partition.clone(), offset)])
                }
                None => CommitMetadata::default(),
            };
            store.store.commit(&metadata).map_err(|e| {
                Error::store(
                    format!("committing store {} of task {}", store.name, self.id),
                    e,
                )
            })?;
        }
        let committed = self.processor.committed(delivered);
        self.processor_outcome(committed)?;
        self.consumed.clear();
        self.returned = 0;
        Ok(())
    }

    /// Drops the uncommitted work: overlays and consumed offsets.
    pub fn rollback(&mut self) -> Result<()> {
        for store in &self.stores {
            store
                .store
                .rollback()
                .map_err(|e| Error::store(format!("rolling back store {}", store.name), e))?;
        }
        let rolled_back = self.processor.rolled_back();
        self.processor_outcome(rolled_back)?;
        self.consumed.clear();
        self.returned = 0;
        Ok(())
    }

    /// Closes the processor and the stores; uncommitted writes are dropped. `clean` when
    /// the task's work was just committed.
    pub fn close(mut self, clean: bool) -> Result<()> {
        let closed = self.processor.close(clean);
        self.processor_outcome(closed)?;
        for store in &self.stores {
            store.store.close().map_err(|e| {
                Error::store(
                    format!("closing store {} of task {}", store.name, self.id),
                    e,
                )
            })?;
        }
        Ok(())
    }
}
