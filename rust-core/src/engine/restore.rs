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
//!
//! A standby replica of a task (a warm-up replica is one too) is restored the same way, except
//! that its changelogs are followed as they grow and it never runs: its stores commit each batch
//! with its offsets, so a standby that restarts, or whose task becomes active here, reads only
//! what it had not read yet. A replica's store whose changelog is a source topic is followed
//! only as far as the group committed, a limit raised as the active task commits: its state
//! then never holds a record the task would process again, and it is promoted as it is.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::error::Result;
use crate::engine::task::Task;
use crate::engine::topology::TaskId;
use crate::kafka::{ChangelogEvent, ReadTo, RecordRun, RestoreConsumer};
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

    /// A standby replica of `store` starts following `partition` at `start_offset` (the
    /// first offset to read), like Kafka Streams' `StandbyUpdateListener`; the changelog ends
    /// at `end_offset` for now (a source topic: where the group committed).
    fn on_standby_update_start(
        &self,
        store: &str,
        partition: &TopicPartition,
        start_offset: i64,
        end_offset: i64,
    ) {
        let _ = (store, partition, start_offset, end_offset);
    }

    /// The standby replica of `store` of `task` put `batch_size` more records of `partition`
    /// into its store, up to `batch_end_offset`; the changelog ends at `current_end_offset`
    /// as last fetched (-1: not known yet).
    fn on_standby_batch_loaded(
        &self,
        store: &str,
        partition: &TopicPartition,
        task: TaskId,
        batch_end_offset: i64,
        batch_size: u64,
        current_end_offset: i64,
    ) {
        let _ = (
            store,
            partition,
            task,
            batch_end_offset,
            batch_size,
            current_end_offset,
        );
    }

    /// The standby replica of `store` stopped following `partition`, its store at
    /// `store_offset` (the last offset in it, -1: none) and the changelog at
    /// `current_end_offset` (-1: not known): `promoted` when its task became active here,
    /// otherwise it moved away.
    fn on_standby_update_suspended(
        &self,
        store: &str,
        partition: &TopicPartition,
        store_offset: i64,
        current_end_offset: i64,
        promoted: bool,
    ) {
        let _ = (store, partition, store_offset, current_end_offset, promoted);
    }
}

/// Where the reading of one changelog partition stands.
struct Restoration {
    task: TaskId,
    /// The task is a standby replica: the partition is followed, never ends.
    standby: bool,
    /// The store the changelog belongs to.
    store: String,
    end_offset: i64,
    /// The first offset read.
    start_offset: i64,
    /// A standby replica's changelog that is a source topic: read up to this offset, the
    /// group's committed one, which is raised as the active task commits.
    limit: Option<i64>,
    restored: u64,
    /// Records restored since the last batch reported to the listener.
    unreported: u64,
    last_offset: Option<i64>,
}

impl Restoration {
    /// The last offset in the store (-1: none).
    fn store_offset(&self) -> i64 {
        self.last_offset.unwrap_or(self.start_offset - 1)
    }
}

/// Where a changelog partition is to be read from, and how far.
struct Start {
    store: String,
    partition: TopicPartition,
    offset: i64,
    end_offset: i64,
    to: ReadTo,
}

/// Restores the stores of one thread's tasks and keeps those of its standby replicas.
pub struct Restorer {
    reader: Box<dyn RestoreConsumer>,
    /// The changelog partitions being read, active tasks' and standby replicas'.
    reading: BTreeMap<TopicPartition, Restoration>,
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
            reading: BTreeMap::new(),
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
        for start in self.plan(task, committed_inputs, false)? {
            if let Some(listener) = &self.listener {
                listener.on_restore_start(
                    &start.store,
                    &start.partition,
                    start.offset,
                    start.end_offset,
                );
            }
            if start.offset >= start.end_offset {
                if let Some(listener) = &self.listener {
                    listener.on_restore_end(&start.store, &start.partition, 0);
                }
                continue;
            }
            log::info!(
                "task {} restores store {} from changelog {}, offsets {} to {}",
                task.id,
                start.store,
                start.partition,
                start.offset,
                start.end_offset
            );
            self.start(task, start, false)?;
        }
        task.start_if_restored()
    }

    /// Starts following the changelogs of `standby`, a standby replica, from what its stores
    /// committed (wiping its state when an offset is not usable, as [`begin`](Self::begin)
    /// does); those that are source topics only as far as `committed_sources`, the group's
    /// committed offsets of them, say. It never runs.
    pub fn follow(
        &mut self,
        standby: &mut Task,
        committed_sources: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        for start in self.plan(standby, committed_sources, true)? {
            if let Some(listener) = &self.listener {
                listener.on_standby_update_start(
                    &start.store,
                    &start.partition,
                    start.offset,
                    start.end_offset,
                );
            }
            self.start(standby, start, true)?;
        }
        Ok(())
    }

    /// Where each changelog of `task` is read from and how far, its state wiped first when an
    /// offset its stores committed is not usable. A store whose changelog is a source topic is
    /// read as far as the group committed, `committed_sources`; a `standby` replica follows
    /// its changelogs as they grow, such a store as the group's committed offset rises.
    fn plan(
        &mut self,
        task: &mut Task,
        committed_sources: &BTreeMap<TopicPartition, i64>,
        standby: bool,
    ) -> Result<Vec<Start>> {
        if task.kept_changelogs.is_empty() {
            return Ok(Vec::new());
        }
        let committed = task.kept_store_offsets()?;
        let mut plans = Vec::new();
        let mut usable = true;
        for changelog in &task.kept_changelogs {
            let partition = &changelog.partition;
            let (log_start, log_end) = self.reader.watermarks(partition)?;
            // As in Kafka Streams' changelog reader: nothing committed, nothing to restore.
            let committed_end =
                || log_end.min(committed_sources.get(partition).copied().unwrap_or(0));
            let (end_offset, to) = match (changelog.is_source_topic, standby) {
                (true, false) => (committed_end(), ReadTo::Offset(committed_end())),
                (true, true) => (committed_end(), ReadTo::FollowUpTo(committed_end())),
                (false, false) => (log_end, ReadTo::End),
                (false, true) => (log_end, ReadTo::Follow),
            };
            let offset = committed.get(partition).copied().flatten();
            usable &= offset.is_none_or(|offset| inside(offset, log_start, end_offset));
            plans.push((
                changelog.store.clone(),
                partition.clone(),
                offset,
                log_start,
                end_offset,
                to,
            ));
        }
        if !usable {
            log::warn!(
                "the state of task {} is wiped: an offset its stores committed lies outside \
                 its changelog, which it restores from the beginning",
                task.id
            );
            task.wipe_kept_stores()?;
        }
        Ok(plans
            .into_iter()
            .map(
                |(store, partition, offset, log_start, end_offset, to)| Start {
                    store,
                    partition,
                    offset: match offset {
                        Some(offset) if usable => offset + 1,
                        _ => log_start,
                    },
                    end_offset,
                    to,
                },
            )
            .collect())
    }

    /// Starts reading as `start` says for `task`, a standby replica when `standby`.
    fn start(&mut self, task: &mut Task, start: Start, standby: bool) -> Result<()> {
        self.reader
            .start(&start.partition, start.offset, start.to)?;
        task.restoring.insert(start.partition.clone());
        self.reading.insert(
            start.partition,
            Restoration {
                task: task.id,
                standby,
                store: start.store,
                end_offset: start.end_offset,
                start_offset: start.offset,
                limit: match start.to {
                    ReadTo::FollowUpTo(limit) => Some(limit),
                    _ => None,
                },
                restored: 0,
                unreported: 0,
                last_offset: None,
            },
        );
        Ok(())
    }

    /// Stops restoring `task` (it was revoked); its processor committed what it was handed.
    pub fn forget(&mut self, task: &mut Task) -> Result<()> {
        for (partition, restoration) in self.stop_reading(task)? {
            if let Some(listener) = &self.listener {
                let (store, restored) = (&restoration.store, restoration.restored);
                listener.on_restore_suspended(store, &partition, restored);
            }
        }
        Ok(())
    }

    /// Stops following the changelogs of `standby`: `promoted` when its task becomes active
    /// here, otherwise it went away.
    pub fn forget_standby(&mut self, standby: &mut Task, promoted: bool) -> Result<()> {
        for (partition, restoration) in self.stop_reading(standby)? {
            if let Some(listener) = &self.listener {
                let end = self.reader.fetched_end(&partition).unwrap_or(-1);
                let store_offset = restoration.store_offset();
                listener.on_standby_update_suspended(
                    &restoration.store,
                    &partition,
                    store_offset,
                    end,
                    promoted,
                );
            }
        }
        Ok(())
    }

    /// Stops reading the changelogs of `task`; what the reading of each had come to.
    fn stop_reading(&mut self, task: &mut Task) -> Result<Vec<(TopicPartition, Restoration)>> {
        let mut stopped = Vec::new();
        for partition in std::mem::take(&mut task.restoring) {
            self.reader.stop(&partition)?;
            if let Some(restoration) = self.reading.remove(&partition) {
                stopped.push((partition, restoration));
            }
        }
        Ok(stopped)
    }

    /// The changelog partitions standby replicas read only as far as the group committed.
    pub fn limited_partitions(&self) -> Vec<TopicPartition> {
        self.reading
            .iter()
            .filter(|(_, restoration)| restoration.limit.is_some())
            .map(|(partition, _)| partition.clone())
            .collect()
    }

    /// Lets the standby replicas read their source-topic changelogs on up to the group's
    /// `committed` offsets of them.
    pub fn raise_limits(&mut self, committed: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        for (partition, &until) in committed {
            let Some(restoration) = self.reading.get_mut(partition) else {
                continue;
            };
            if let Some(limit) = restoration.limit.as_mut().filter(|limit| until > **limit) {
                *limit = until;
                self.reader.raise_limit(partition, until)?;
            }
        }
        Ok(())
    }

    /// Stops (or resumes) reading the changelogs, the ones begun meanwhile included.
    pub fn set_paused(&mut self, paused: bool) -> Result<()> {
        Ok(self.reader.set_paused(paused)?)
    }

    /// True while some changelog is being read, of an active task or a standby replica.
    pub fn is_reading(&self) -> bool {
        !self.reader.is_idle()
    }

    /// How far behind the end of each changelog partition its last step read the reader is.
    pub fn lags(&self) -> BTreeMap<TopicPartition, i64> {
        self.reader.lags()
    }

    /// True while the store of some active task is being restored.
    pub fn is_active(&self) -> bool {
        self.reading
            .values()
            .any(|restoration| !restoration.standby)
    }

    /// Reads a bounded batch of changelog records into the stores of `tasks` and of the
    /// `standbys`, waiting at most `max_wait`. Tasks whose last store finished become running.
    /// True when it read as many records as a step may: more are likely waiting.
    pub fn step(
        &mut self,
        tasks: &mut BTreeMap<TaskId, Task>,
        standbys: &mut BTreeMap<TaskId, Task>,
        max_wait: Duration,
    ) -> Result<bool> {
        if self.reader.is_idle() {
            return Ok(false);
        }
        // Records for processors go over in one batch per task, in the order read.
        let mut batches: BTreeMap<(bool, TaskId), Vec<RecordRun>> = BTreeMap::new();
        let mut read = 0;
        for event in self.reader.poll(self.records_per_step, max_wait)? {
            match event {
                ChangelogEvent::Records(run) => {
                    let Some(restoration) = self.reading.get_mut(&run.partition) else {
                        continue;
                    };
                    let owners = if restoration.standby {
                        &*standbys
                    } else {
                        &*tasks
                    };
                    if !owners.contains_key(&restoration.task) {
                        continue;
                    }
                    read += run.len();
                    restoration.restored += run.len() as u64;
                    restoration.unreported += run.len() as u64;
                    restoration.last_offset = run.last_offset();
                    let key = (restoration.standby, restoration.task);
                    batches.entry(key).or_default().push(run);
                }
                // Only an active task's changelogs end.
                ChangelogEvent::End(partition) => {
                    let Some(mut restoration) = self.reading.remove(&partition) else {
                        continue;
                    };
                    let Some(task) = tasks.get_mut(&restoration.task) else {
                        continue;
                    };
                    if let Some(batch) = batches.remove(&(false, task.id)) {
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
        for ((standby, id), batch) in batches {
            let owners = if standby { &mut *standbys } else { &mut *tasks };
            let Some(task) = owners.get_mut(&id) else {
                continue;
            };
            task.restore_kept_stores(&batch)?;
            for changelog in &task.kept_changelogs {
                let partition = &changelog.partition;
                let Some(restoration) = self.reading.get_mut(partition) else {
                    continue;
                };
                if standby {
                    let end = self.reader.fetched_end(partition).unwrap_or(-1);
                    report_standby_batch(&self.listener, partition, restoration, end);
                } else {
                    let last = restoration.last_offset.unwrap_or(-1);
                    let remaining = (restoration.end_offset - last - 1).max(0) as u64;
                    report_batch(&self.listener, partition, restoration, remaining);
                }
            }
        }
        Ok(read >= self.records_per_step)
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

/// Reports the records a standby replica loaded since the last report, if any, as a batch;
/// the changelog ends at `end_offset` as last fetched.
fn report_standby_batch(
    listener: &Option<Arc<dyn RestoreListener>>,
    partition: &TopicPartition,
    restoration: &mut Restoration,
    end_offset: i64,
) {
    let batch_size = std::mem::take(&mut restoration.unreported);
    if batch_size == 0 {
        return;
    }
    if let Some(listener) = listener {
        listener.on_standby_batch_loaded(
            &restoration.store,
            partition,
            restoration.task,
            restoration.store_offset(),
            batch_size,
            end_offset,
        );
    }
}

/// True when a store at committed `offset` can continue from the changelog
/// `[log_start, log_end)`: its next record is still in the log and it is not ahead of it.
fn inside(offset: i64, log_start: i64, log_end: i64) -> bool {
    offset + 1 >= log_start && offset < log_end
}
