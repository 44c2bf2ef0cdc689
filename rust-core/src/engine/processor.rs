//! What the engine asks of the code that runs a task: [`TaskProcessor`].
//!
//! The engine hands each poll's records of a task to its processor as one batch. The
//! processor reads and writes the task's stores through [`TaskContext`] (writes stay in the
//! stores' overlays until the engine commits) and returns the records to produce: sink and
//! repartition records, and one changelog record per store write. Changelog records are the
//! processor's to emit, as Kafka Streams' change-logging store layers emit them.

use crate::engine::global::{GlobalStore, GlobalStores};
use crate::engine::task::TaskStore;
use crate::engine::topology::TaskId;
use crate::kafka::{ConsumedRecord, ProducedRecord};
use crate::store::format::changelog::RecordContext;
use crate::store::format::FormatError;
use crate::store::{KeyValueStore, ReadView};

/// A boxed error a processor may fail with.
pub type ProcessorError = Box<dyn std::error::Error + Send + Sync>;

/// Runs one task.
pub trait TaskProcessor: Send {
    /// Processes `records` (in offset order per partition) and returns what to produce.
    /// Failing stops the engine thread, as an uncaught exception stops a Kafka Streams
    /// thread; the uncommitted work is discarded.
    fn process(
        &mut self,
        context: &TaskContext<'_>,
        records: Vec<ConsumedRecord>,
    ) -> Result<Vec<ProducedRecord>, ProcessorError>;
}

/// Creates the processor of each task assigned to the instance.
pub trait ProcessorFactory: Send + Sync {
    /// The processor of `task`.
    fn create(&self, task: TaskId) -> Box<dyn TaskProcessor>;
}

impl<F> ProcessorFactory for F
where
    F: Fn(TaskId) -> Box<dyn TaskProcessor> + Send + Sync,
{
    fn create(&self, task: TaskId) -> Box<dyn TaskProcessor> {
        self(task)
    }
}

/// A task's view of itself while processing: its id, its stores and the global stores.
pub struct TaskContext<'a> {
    task: TaskId,
    stores: &'a [TaskStore],
    globals: &'a GlobalStores,
}

impl<'a> TaskContext<'a> {
    pub(crate) fn new(task: TaskId, stores: &'a [TaskStore], globals: &'a GlobalStores) -> Self {
        TaskContext {
            task,
            stores,
            globals,
        }
    }

    /// The global store called `name`, read-only: only the global thread writes it.
    pub fn global_store(&self, name: &str) -> Option<ReadView> {
        self.globals.get(name).map(GlobalStore::reader)
    }

    /// The task being run.
    pub fn task_id(&self) -> TaskId {
        self.task
    }

    /// The store called `name`.
    pub fn store(&self, name: &str) -> Option<&dyn KeyValueStore> {
        self.find(name).map(|s| s.store.as_ref())
    }

    /// The changelog record for writing `store_value` (`None`: delete) under `key` into the
    /// store `name` while processing a record with `context`; `None` when the store is not
    /// logged or does not exist.
    pub fn changelog_record(
        &self,
        name: &str,
        key: &[u8],
        store_value: Option<&[u8]>,
        context: RecordContext<'_>,
    ) -> Result<Option<ProducedRecord>, FormatError> {
        let Some(store) = self.find(name) else {
            return Ok(None);
        };
        let Some(changelog) = &store.changelog else {
            return Ok(None);
        };
        let record = store.layout.to_changelog(store_value, context)?;
        Ok(Some(ProducedRecord {
            topic: changelog.topic.clone(),
            partition: Some(changelog.partition),
            key: Some(key.to_vec()),
            value: record.value,
            timestamp: record.timestamp,
            headers: record.headers,
        }))
    }

    fn find(&self, name: &str) -> Option<&TaskStore> {
        self.stores.iter().find(|s| s.name == name)
    }
}
