//! Restore: brings each store of a new task from its committed changelog offset to the end
//! of its changelog before the task processes.
//!
//! The task's processor keeps the stores: the engine asks it for the offsets they committed
//! and hands it the changelog records in batches, one per task per step, which it puts into
//! the stores and commits. A store whose committed offset is usable (inside the log) replays
//! only what follows it; with the store's write-ahead log that is at most the last commit
//! interval's writes, whatever the state size. A store without an offset replays its whole
//! changelog over what it holds (puts are idempotent), and an offset outside its changelog
//! (compacted away, topic recreated) wipes the task's state and restores every one of its
//! changelogs in full. A store whose changelog is one of the task's source topics is
//! restored only up to the group's committed offset of that partition: the task processes
//! what follows, and stores it then.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::error::Result;
use crate::engine::task::Task;
use crate::engine::topology::TaskId;
use crate::kafka::{ChangelogEvent, RecordRun, RestoreConsumer};
use crate::store::TopicPartition;

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

struct Restoration {
    task: TaskId,
    /// The store the changelog belongs to.
    store: String,
    end_offset: i64,
    restored: u64,
    /// Records restored since the last batch reported to the listener.
    unreported: u64,
    last_offset: Option<i64>,
}

/// Restores the stores of one thread's tasks.
pub struct Restorer {
    reader: Box<dyn RestoreConsumer>,
    active: BTreeMap<TopicPartition, Restoration>,
    listener: Option<Arc<dyn RestoreListener>>,
    /// Most records one step reads (the restore consumer's `max.poll.records`), which also
    /// keeps the thread polling its group consumer well within `max.poll.interval.ms`.
    records_per_step: usize,
}

impl Restorer {
    /// A restorer reading with `reader` at most `records_per_step` records a step, reporting
    /// to `listener`.
    pub fn new(
        reader: Box<dyn RestoreConsumer>,
        listener: Option<Arc<dyn RestoreListener>>,
        records_per_step: usize,
    ) -> Self {
        Restorer {
            reader,
            active: BTreeMap::new(),
            listener,
            records_per_step,
        }
    }

    /// Decides where each logged store of `task` restores from, wiping the task's state when
    /// an offset is not usable, and starts reading. Stores already at the end are not read; a
    /// task with nothing to read starts running. `committed_inputs` holds the group's
    /// committed offsets of the task's input partitions (none: nothing committed).
    pub fn begin(
        &mut self,
        task: &mut Task,
        committed_inputs: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        if !task.kept_changelogs.is_empty() {
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
                plans.push((
                    changelog.store.clone(),
                    partition.clone(),
                    offset,
                    log_start,
                    end,
                    stop_at_end,
                ));
            }
            if !usable {
                task.wipe_kept_stores()?;
            }
            for (store, partition, offset, log_start, end, stop_at_end) in plans {
                let start = match offset {
                    Some(offset) if usable => offset + 1,
                    _ => log_start,
                };
                self.start(task, store, partition, start, end, stop_at_end)?;
            }
        }
        task.start_if_restored()
    }

    /// Starts reading `partition` from `start` for `store`, unless it is at `end_offset`.
    /// With `stop_at_end`, reading stops at `end_offset` even if the partition goes on.
    fn start(
        &mut self,
        task: &mut Task,
        store: String,
        partition: TopicPartition,
        start: i64,
        end_offset: i64,
        stop_at_end: bool,
    ) -> Result<()> {
        if let Some(listener) = &self.listener {
            listener.on_restore_start(&store, &partition, start, end_offset);
        }
        if start >= end_offset {
            if let Some(listener) = &self.listener {
                listener.on_restore_end(&store, &partition, 0);
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
                store,
                end_offset,
                restored: 0,
                unreported: 0,
                last_offset: None,
            },
        );
        Ok(())
    }

    /// Stops restoring `task` (it was revoked); its processor committed what it was handed.
    pub fn forget(&mut self, task: &mut Task) -> Result<()> {
        let partitions: Vec<TopicPartition> = task.restoring.iter().cloned().collect();
        for partition in partitions {
            if let Some(restoration) = self.active.remove(&partition) {
                if let Some(listener) = &self.listener {
                    let (store, restored) = (&restoration.store, restoration.restored);
                    listener.on_restore_suspended(store, &partition, restored);
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
        let mut batches: BTreeMap<TaskId, Vec<RecordRun>> = BTreeMap::new();
        for event in self.reader.poll(self.records_per_step, max_wait)? {
            match event {
                ChangelogEvent::Records(run) => {
                    let Some(restoration) = self.active.get_mut(&run.partition) else {
                        continue;
                    };
                    if !tasks.contains_key(&restoration.task) {
                        continue;
                    }
                    restoration.restored += run.len() as u64;
                    restoration.unreported += run.len() as u64;
                    restoration.last_offset = run.last_offset();
                    batches.entry(restoration.task).or_default().push(run);
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
                        task.restore_kept_stores(&batch)?;
                    }
                    report_batch(&self.listener, &partition, &mut restoration, 0);
                    if let Some(listener) = &self.listener {
                        let (store, restored) = (&restoration.store, restoration.restored);
                        listener.on_restore_end(store, &partition, restored);
                    }
                    task.finish_restoring(&partition)?;
                }
            }
        }
        for (id, batch) in batches {
            if let Some(task) = tasks.get_mut(&id) {
                task.restore_kept_stores(&batch)?;
                for changelog in &task.kept_changelogs {
                    let partition = &changelog.partition;
                    if let Some(restoration) = self.active.get_mut(partition) {
                        let last = restoration.last_offset.unwrap_or(-1);
                        let remaining = (restoration.end_offset - last - 1).max(0) as u64;
                        report_batch(&self.listener, partition, restoration, remaining);
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
    partition: &TopicPartition,
    restoration: &mut Restoration,
    remaining: u64,
) {
    if restoration.unreported == 0 {
        return;
    }
    restoration.unreported = 0;
    if let Some(listener) = listener {
        let (store, restored) = (&restoration.store, restoration.restored);
        listener.on_batch_restored(store, partition, restored, remaining);
    }
}

/// True when a store at committed `offset` can continue from the changelog
/// `[log_start, log_end)`: its next record is still in the log and it is not ahead of it.
fn inside(offset: i64, log_start: i64, log_end: i64) -> bool {
    offset + 1 >= log_start && offset < log_end
}
