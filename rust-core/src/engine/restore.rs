//! Restore: brings each store of a new task from its committed changelog offset to the end
//! of its changelog before the task processes.
//!
//! A store whose committed offset is usable (inside the log) replays only what follows it;
//! with the store's write-ahead log that is at most the last commit interval's writes,
//! whatever the state size. A store with no offset, or one outside the log (compacted away,
//! topic recreated), is wiped and restored in full. Records go straight into the store,
//! committed with their offset every [`RESTORE_COMMIT_RECORDS`] records, so an interrupted
//! restore resumes where it stopped.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::error::{Error, Result};
use crate::engine::task::Task;
use crate::engine::topology::TaskId;
use crate::kafka::{ChangelogEvent, ChangelogReader};
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
}

struct Restoration {
    task: TaskId,
    store: usize,
    end_offset: i64,
    restored: u64,
    uncommitted: u64,
    last_offset: Option<i64>,
}

/// Restores the stores of one thread's tasks.
pub struct Restorer {
    reader: ChangelogReader,
    active: BTreeMap<TopicPartition, Restoration>,
    listener: Option<Arc<dyn RestoreListener>>,
}

impl Restorer {
    /// A restorer reading with `reader`, reporting to `listener`.
    pub fn new(reader: ChangelogReader, listener: Option<Arc<dyn RestoreListener>>) -> Self {
        Restorer {
            reader,
            active: BTreeMap::new(),
            listener,
        }
    }

    /// Decides where each logged store of `task` restores from, wiping stores without a
    /// usable offset, and starts reading. Stores already at the end are not read.
    pub fn begin(&mut self, task: &mut Task, resources: &RocksDbResources) -> Result<()> {
        for (index, store) in task.stores.iter_mut().enumerate() {
            let Some(partition) = store.changelog.clone() else {
                continue;
            };
            let (log_start, log_end) = self.reader.watermarks(&partition)?;
            let committed = store.store.committed_offset(&partition).map_err(|e| {
                Error::store(format!("reading the offset of store {}", store.name), e)
            })?;
            let start = match committed {
                Some(offset) if offset + 1 >= log_start && offset < log_end => offset + 1,
                _ => {
                    store.wipe(resources)?;
                    log_start
                }
            };
            if let Some(listener) = &self.listener {
                listener.on_restore_start(&store.name, &partition, start, log_end);
            }
            if start >= log_end {
                if let Some(listener) = &self.listener {
                    listener.on_restore_end(&store.name, &partition, 0);
                }
                continue;
            }
            self.reader.start(&partition, start)?;
            task.restoring.insert(partition.clone());
            self.active.insert(
                partition,
                Restoration {
                    task: task.id,
                    store: index,
                    end_offset: log_end,
                    restored: 0,
                    uncommitted: 0,
                    last_offset: None,
                },
            );
        }
        Ok(())
    }

    /// Stops restoring `task` (it was revoked); what was restored is committed.
    pub fn forget(&mut self, task: &mut Task) -> Result<()> {
        let partitions: Vec<TopicPartition> = task.restoring.iter().cloned().collect();
        for partition in partitions {
            if let Some(restoration) = self.active.remove(&partition) {
                commit_restored(task, &partition, &restoration)?;
            }
            self.reader.stop(&partition)?;
        }
        task.restoring.clear();
        Ok(())
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
                    let store = &task.stores[restoration.store];
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
                    restoration.restored += 1;
                    restoration.uncommitted += 1;
                    restoration.last_offset = Some(record.offset);
                    if restoration.uncommitted >= RESTORE_COMMIT_RECORDS {
                        commit_restored(task, &partition, restoration)?;
                        restoration.uncommitted = 0;
                        if let Some(listener) = &self.listener {
                            let remaining =
                                (restoration.end_offset - record.offset - 1).max(0) as u64;
                            listener.on_batch_restored(
                                &task.stores[restoration.store].name,
                                &partition,
                                restoration.restored,
                                remaining,
                            );
                        }
                    }
                }
                ChangelogEvent::End(partition) => {
                    let Some(restoration) = self.active.remove(&partition) else {
                        continue;
                    };
                    let Some(task) = tasks.get_mut(&restoration.task) else {
                        continue;
                    };
                    commit_restored(task, &partition, &restoration)?;
                    task.restoring.remove(&partition);
                    if let Some(listener) = &self.listener {
                        listener.on_restore_end(
                            &task.stores[restoration.store].name,
                            &partition,
                            restoration.restored,
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

fn commit_restored(
    task: &Task,
    partition: &TopicPartition,
    restoration: &Restoration,
) -> Result<()> {
    let Some(offset) = restoration.last_offset else {
        return Ok(());
    };
    let store = &task.stores[restoration.store];
    store
        .store
        .commit(&CommitMetadata::with_offsets([(
            partition.clone(),
            Some(offset),
        )]))
        .map_err(|e| Error::store(format!("committing restored store {}", store.name), e))
}
