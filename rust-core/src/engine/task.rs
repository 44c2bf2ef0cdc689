//! A task: one sub-topology on one partition, with its processor, the changelog partitions
//! of the stores the processor keeps, and the input offsets it consumed since the last
//! commit. Every store step goes to the processor.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::error::{Error, Result};
use crate::engine::processor::{CommittedInput, InputOffset, ProcessorError, TaskProcessor};
use crate::engine::topology::ResolvedSubtopology;
use crate::engine::topology::TaskId;
use crate::kafka::{ClientError, DeliveredOffsets, ProducedRecord, ProducedRecords, RecordRun};
use crate::store::TopicPartition;

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
    pub records: ProducedRecords,
}

impl Task {
    /// The task `id` of `subtopology`, run by `processor`; restore decides what its stores
    /// lack.
    pub fn open(
        id: TaskId,
        subtopology: &ResolvedSubtopology,
        processor: Box<dyn TaskProcessor>,
    ) -> Self {
        let kept_changelogs = subtopology
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
        Task {
            id,
            kept_changelogs,
            restoring: BTreeSet::new(),
            consumed: BTreeMap::new(),
            returned: 0,
            processor,
        }
    }

    /// True once restored.
    pub fn is_running(&self) -> bool {
        self.restoring.is_empty()
    }

    /// Runs the processor on `records` and remembers how far the inputs were consumed.
    pub fn process(&mut self, records: &[RecordRun]) -> Result<Outputs> {
        for run in records {
            if let Some(last) = run.last_offset() {
                self.consumed.insert(run.partition.clone(), last + 1);
            }
        }
        let outputs = self.processor.process(records);
        self.outputs(outputs)
    }

    /// Tells the processor how far behind its inputs' ends the consumer is.
    pub fn update_lags(&mut self, lags: &[(TopicPartition, Option<i64>)]) -> Result<()> {
        let updated = self.processor.update_lags(lags);
        self.processor_outcome(updated)
    }

    /// The input partitions whose buffer in the processor is full.
    pub fn full_inputs(&mut self) -> Result<BTreeSet<TopicPartition>> {
        let full = self.processor.full_inputs();
        Ok(self.processor_outcome(full)?.into_iter().collect())
    }

    /// Whether the processor asked for a commit since the last one.
    pub fn commit_requested(&mut self) -> Result<bool> {
        let requested = self.processor.commit_requested();
        self.processor_outcome(requested)
    }

    /// Wall-clock punctuation, when due: what it produced.
    pub fn punctuate(&mut self) -> Result<Outputs> {
        let outputs = self.processor.punctuate();
        self.outputs(outputs)
    }

    /// After processing or punctuating failed: what the processor produced before it failed.
    pub fn produced_before_failure(&mut self) -> Result<Outputs> {
        let outputs = self.processor.produced_before_failure();
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

    /// The records this task returned since the last commit numbered below `below` are
    /// answered: none of them can fail any more.
    pub fn sends_answered(&mut self, below: u64) -> Result<()> {
        let answered = self.processor.sends_answered(below);
        self.processor_outcome(answered)
    }

    fn outputs(
        &mut self,
        outcome: std::result::Result<ProducedRecords, ProcessorError>,
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
    pub fn restore_kept_stores(&mut self, records: &[RecordRun]) -> Result<()> {
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

    /// Bytes its processor's stores hold uncommitted.
    pub fn uncommitted_bytes(&self) -> u64 {
        self.processor.uncommitted_bytes()
    }

    fn processor_outcome<T>(&self, outcome: std::result::Result<T, ProcessorError>) -> Result<T> {
        outcome.map_err(|source| Error::Processor {
            task: self.id.to_string(),
            source,
        })
    }

    /// The commit went through: the processor commits its stores with the offsets of the
    /// changelog records `delivered` in the committed transaction.
    pub fn commit_stores(&mut self, delivered: &DeliveredOffsets) -> Result<()> {
        let committed = self.processor.committed(delivered);
        self.processor_outcome(committed)?;
        self.consumed.clear();
        self.returned = 0;
        Ok(())
    }

    /// Drops the uncommitted work, because of `cause`: the processor's and the consumed
    /// offsets.
    pub fn rollback(&mut self, cause: &str) -> Result<()> {
        let rolled_back = self.processor.rolled_back(cause);
        self.processor_outcome(rolled_back)?;
        self.consumed.clear();
        self.returned = 0;
        Ok(())
    }

    /// The processor of this standby replica's task, which becomes active on this thread and
    /// takes the replica's stores over open ([`TaskProcessor::promote`]).
    pub fn promote(self, inputs: &[CommittedInput]) -> Result<Box<dyn TaskProcessor>> {
        let id = self.id;
        self.processor
            .promote(inputs)
            .map_err(|source| Error::Processor {
                task: id.to_string(),
                source,
            })
    }

    /// Closes the processor, which drops its uncommitted writes. `clean` when the task's work
    /// was just committed.
    pub fn close(mut self, clean: bool) -> Result<()> {
        let closed = self.processor.close(clean);
        self.processor_outcome(closed)
    }
}
