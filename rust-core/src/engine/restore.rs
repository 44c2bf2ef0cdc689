//! Restore: brings each store of a new task from its committed changelog offset to the end
//! of its changelog before the task processes.
//!
//! A store whose committed offset is usable (inside the log) replays only what follows it;
//! with the store's write-ahead log that is at most the last commit interval's writes,
//! whatever the state size. A store with no offset, or one outside the log (compacted away,
//! topic recreated), is wiped and restored in full. Records go straight into the store,
//! committed with their offset every [`RESTORE_COMMIT_RECORDS`] records, so an interrupted
//! restore resumes where it stopped.
//!
//! Stores a task's processor keeps get their records in batches through the processor,
//! which commits them; a store without an offset replays its whole changelog over what it
//! holds (puts are idempotent), and an offset outside its changelog wipes the task's state
//! and restores every one of its changelogs in full. A store whose changelog is one of the
//! task's source topics is restored only up to the group's committed offset of that
//! partition: the task processes what follows, and stores it then.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::error::{Error, Result};
use crate::engine::task::Task;
use crate::engine::topology::TaskId;
use crate::kafka::{ChangelogEvent, ConsumedRecord, RestoreConsumer};
use crate::store::format::changelog::ChangelogValue;
use crate::store::rocks::RocksDbResources;
use crate::store::{CommitMetadata, TopicPartition};

/// Restored records per store commit.
pub const RESTORE_COMMIT_RECORDS: u64 = 10_000;
/// Records one restore step reads at most, so that the thread keeps polling its group
/// consumer well within `max.poll.interval.ms`.
const RECORDS_PER_STEP: usize = 50_000;

/// Observes restoration, like Kafka Streams' `StateRestoreListener`.
pub trait RestoreListener: Send + Sync {
    /// Restoring `partition` of `store` starts at `start_offset` (the first offset to read)
    /// towards `end_offset` (exclusive).
    fn on_restore_start(
        &self,
        store: &str,
        partition: &TopicPartition,
        start_offset: i64,
        end_offset: i64,
    ) {
        let _ = (store, partition, start_offset, end_offset);
    }

    /// A batch was written to the store: `restored` records so far, about `remaining` left.
    fn on_batch_restored(
        &self,
        store: &str,
        partition: &TopicPartition,
        restored: u64,
        remaining: u64,
    ) {
        let _ = (store, partition, restored, remaining);
    }

    /// The store reached the end of its changelog after `restored` records.
    fn on_restore_end(&self, store: &str, partition: &TopicPartition, restored: u64) {
        let _ = (store, partition, restored);
    }

    /// Restoring stopped before the end after `restored` records: the task went away
    /// (revoked, or closed to be revived).
    fn on_restore_suspended(&self, store: &str, partition: &TopicPartition, restored: u64) {
        let _ = (store, partition, restored);
    }
}

/// Where a changelog's records go.
enum Target {
    /// The engine's store at this index of the task's stores.
    Store(usize),
    /// The processor, for the store it keeps with this name.
    Processor(String),
}

struct Restoration {
    task: TaskId,
    target: Target,
    end_offset: i64,
    restored: u64,
    /// Records put into an engine store since its last commit.
    uncommitted: u64,
    /// Records restored since the last batch reported to the listener.
    unreported: u64,
    last_offset: Option<i64>,
}

/// Restores the stores of one thread's tasks.
pub struct Restorer {
    reader: Box<dyn RestoreConsumer>,
    active: BTreeMap<TopicPartition, Restoration>,
    listener: Option<Arc<dyn RestoreListener>>,
}

impl Restorer {
    /// A restorer reading with `reader`, reporting to `listener`.
    pub fn new(
        reader: Box<dyn RestoreConsumer>,
        listener: Option<Arc<dyn RestoreListener>>,
    ) -> Self {
        Restorer {
            reader,
            active: BTreeMap::new(),
            listener,
        }
    }

    /// Decides where each logged store of `task` restores from, wiping stores without a
    /// usable offset, and starts reading. Stores already at the end are not read; a task
    /// with nothing to read starts running. `committed_inputs` holds the group's committed
    /// offsets of the task's input partitions (none: nothing committed).
    pub fn begin(
        &mut self,
        task: &mut Task,
        resources: &RocksDbResources,
        committed_inputs: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        for index in 0..task.stores.len() {
            let store = &mut task.stores[index];
            let Some(partition) = store.changelog.clone() else {
                continue;
            };
            let (log_start, log_end) = self.reader.watermarks(&partition)?;
            let committed = store.store.committed_offset(&partition).map_err(|e| {
                Error::store(format!("reading the offset of store {}", store.name), e)
            })?;
            let start = match committed {
                Some(offset) if inside(offset, log_start, log_end) => offset + 1,
                _ => {
                    store.wipe(resources)?;
                    log_start
                }
            };
            let name = store.name.clone();
            self.start(task, Target::Store(index), &name, partition, start, log_end, false)?;
        }
        self.begin_kept_stores(task, committed_inputs)?;
        task.start_if_restored()
    }

    fn begin_kept_stores(
        &mut self,
        task: &mut Task,
        committed_inputs: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        if task.kept_changelogs.is_empty() {
            return Ok(());
        }
        let committed = task.kept_store_offsets()?;
        let mut plans = Vec::new();
        let mut usable = true;
        for changelog in &task.kept_changelogs {
            let partition = &changelog.partition;
            let (log_start, log_end) = self.reader.watermarks(partition)?;
            // As in Kafka Streams' changelog reader: nothing committed, nothing to restore.
            let end = if changelog.is_source_topic {
                log_end.min(committed_inputs.get(partition).copied().unwrap_or(0))
            } else {
                log_end
            };
            let offset = committed.get(partition).copied().flatten();
            usable &= offset.is_none_or(|offset| inside(offset, log_start, end));
            let stop_at_end = changelog.is_source_topic;
            plans.push((changelog.store.clone(), partition.clone(), offset, log_start, end, stop_at_end));
        }
        if !usable {
            task.wipe_kept_stores()?;
        }
        for (name, partition, offset, log_start, end, stop_at_end) in plans {
            let start = match offset {
                Some(offset) if usable => offset + 1,
                _ => log_start,
            };
            let target = Target::Processor(name.clone());
            self.start(task, target, &name, partition, start, end, stop_at_end)?;
        }
        Ok(())
    }

    /// Starts reading `partition` from `start` into `target`, unless it is at `end_offset`.
    /// With `stop_at_end`, reading stops at `end_offset` even if the partition goes on.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        task: &mut Task,
        target: Target,
        store: &str,
        partition: TopicPartition,
        start: i64,
        end_offset: i64,
        stop_at_end: bool,
    ) -> Result<()> {
        if let Some(listener) = &self.listener {
            listener.on_restore_start(store, &partition, start, end_offset);
        }
        if start >= end_offset {
            if let Some(listener) = &self.listener {
                listener.on_restore_end(store, &partition, 0);
            }
            return Ok(());
        }
        self.reader
            .start(&partition, start, stop_at_end.then_some(end_offset))?;
        task.restoring.insert(partition.clone());
        self.active.insert(
            partition,
            Restoration {
                task: task.id,
                target,
                end_offset,
                restored: 0,
                uncommitted: 0,
                unreported: 0,
                last_offset: None,
            },
        );
        Ok(())
    }

    /// Stops restoring `task` (it was revoked); what was restored is committed.
    pub fn forget(&mut self, task: &mut Task) -> Result<()> {
        let partitions: Vec<TopicPartition> = task.restoring.iter().cloned().collect();
        for partition in partitions {
            if let Some(restoration) = self.active.remove(&partition) {
                commit_restored(task, &partition, &restoration)?;
                if let Some(listener) = &self.listener {
                    let store = store_name(task, &restoration);
                    listener.on_restore_suspended(store, &partition, restoration.restored);
                }
            }
            self.reader.stop(&partition)?;
        }
        task.restoring.clear();
        Ok(())
    }

    /// Stops (or resumes) reading the changelogs, the ones begun meanwhile included.
    pub fn set_paused(&mut self, paused: bool) -> Result<()> {
        Ok(self.reader.set_paused(paused)?)
    }

    /// True while some store is being restored.
    pub fn is_active(&self) -> bool {
        !self.active.is_empty()
    }

    /// Reads a bounded batch of changelog records into the stores, waiting at most
    /// `max_wait`. Tasks whose last store finished become running.
    pub fn step(&mut self, tasks: &mut BTreeMap<TaskId, Task>, max_wait: Duration) -> Result<()> {
        if self.reader.is_idle() {
            return Ok(());
        }
        // Records for processors go over in one batch per task, in the order read.
        let mut batches: BTreeMap<TaskId, Vec<ConsumedRecord>> = BTreeMap::new();
        for event in self.reader.poll(RECORDS_PER_STEP, max_wait)? {
            match event {
                ChangelogEvent::Record(record) => {
                    let partition = record.topic_partition();
                    let Some(restoration) = self.active.get_mut(&partition) else {
                        continue;
                    };
                    let Some(task) = tasks.get_mut(&restoration.task) else {
                        continue;
                    };
                    restoration.restored += 1;
                    restoration.unreported += 1;
                    restoration.last_offset = Some(record.offset);
                    let Target::Store(index) = restoration.target else {
                        batches.entry(task.id).or_default().push(record);
                        continue;
                    };
                    let store = &task.stores[index];
                    let offset = record.offset;
                    let value = store.layout.from_changelog(&ChangelogValue {
                        value: record.value,
                        timestamp: record.timestamp,
                        headers: record.headers,
                    });
                    let key = record.key.unwrap_or_default();
                    store
                        .store
                        .put(key, value)
                        .map_err(|e| Error::store(format!("restoring store {}", store.name), e))?;
                    restoration.uncommitted += 1;
                    if restoration.uncommitted >= RESTORE_COMMIT_RECORDS {
                        commit_restored(task, &partition, restoration)?;
                        restoration.uncommitted = 0;
                        let remaining = (restoration.end_offset - offset - 1).max(0) as u64;
                        report_batch(&self.listener, task, &partition, restoration, remaining);
                    }
                }
                ChangelogEvent::End(partition) => {
                    let Some(restoration) = self.active.remove(&partition) else {
                        continue;
                    };
                    let Some(task) = tasks.get_mut(&restoration.task) else {
                        continue;
                    };
                    let mut restoration = restoration;
                    if let Some(batch) = batches.remove(&task.id) {
                        task.restore_kept_stores(batch)?;
                    }
                    commit_restored(task, &partition, &restoration)?;
                    report_batch(&self.listener, task, &partition, &mut restoration, 0);
                    if let Some(listener) = &self.listener {
                        let store = store_name(task, &restoration);
                        listener.on_restore_end(store, &partition, restoration.restored);
                    }
                    task.finish_restoring(&partition)?;
                }
            }
        }
        for (id, batch) in batches {
            if let Some(task) = tasks.get_mut(&id) {
                task.restore_kept_stores(batch)?;
                for changelog in &task.kept_changelogs {
                    let partition = &changelog.partition;
                    if let Some(restoration) = self.active.get_mut(partition) {
                        let last = restoration.last_offset.unwrap_or(-1);
                        let remaining = (restoration.end_offset - last - 1).max(0) as u64;
                        report_batch(&self.listener, task, partition, restoration, remaining);
                    }
                }
            }
        }
        Ok(())
    }

}

/// Reports the records restored since the last report, if any, as a batch.
fn report_batch(
    listener: &Option<Arc<dyn RestoreListener>>,
    task: &Task,
    partition: &TopicPartition,
    restoration: &mut Restoration,
    remaining: u64,
) {
    if restoration.unreported == 0 {
        return;
    }
    restoration.unreported = 0;
    if let Some(listener) = listener {
        let store = store_name(task, restoration);
        listener.on_batch_restored(store, partition, restoration.restored, remaining);
    }
}

/// True when a store at committed `offset` can continue from the changelog
/// `[log_start, log_end)`: its next record is still in the log and it is not ahead of it.
fn inside(offset: i64, log_start: i64, log_end: i64) -> bool {
    offset + 1 >= log_start && offset < log_end
}

fn store_name<'a>(task: &'a Task, restoration: &'a Restoration) -> &'a str {
    match &restoration.target {
        Target::Store(index) => &task.stores[*index].name,
        Target::Processor(name) => name,
    }
}

/// Commits what an engine store restored; a processor commits its own stores.
fn commit_restored(
    task: &Task,
    partition: &TopicPartition,
    restoration: &Restoration,
) -> Result<()> {
    let (Target::Store(index), Some(offset)) = (&restoration.target, restoration.last_offset)
    else {
        return Ok(());
    };
    let store = &task.stores[*index];
    store
        .store
        .commit(&CommitMetadata::with_offsets([(
            partition.clone(),
            Some(offset),
        )]))
        .map_err(|e| Error::store(format!("committing restored store {}", store.name), e))
}
