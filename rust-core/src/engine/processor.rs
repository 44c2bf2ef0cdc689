//! What the engine asks of the code that runs a task: [`TaskProcessor`].
//!
//! The engine hands each poll's records of a task to its processor as one batch and sends
//! the records it returns: sink and repartition records, and the changelog records of its
//! store writes. The processor keeps the task's stores itself, as Kafka Streams' task
//! machinery on the JVM does with its typed store layers and caches: the engine reads the
//! changelogs and hands their records to the processor, runs the commit barrier, and tells
//! the processor each step through the other methods of [`TaskProcessor`]; their defaults
//! fit a processor without stores.
//!
//! The global stores are kept the same way, by a [`GlobalProcessor`]: the engine's global
//! thread reads the global topics and hands it their records.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::engine::topology::TaskId;
use crate::kafka::{ClientError, DeliveredOffsets, ProducedRecord, ProducedRecords, RecordRun};
use crate::store::TopicPartition;

pub use crate::kafka::InputOffset;

/// A boxed error a processor may fail with.
pub type ProcessorError = Box<dyn std::error::Error + Send + Sync>;

/// What a processor fails with when the state it keeps turned out corrupt (Kafka Streams'
/// `TaskCorruptedException`): the engine wipes that state, restores it from the changelogs
/// and runs the task again from its committed inputs; the thread goes on.
#[derive(Debug)]
pub struct KeptStateCorrupted(pub String);

impl std::fmt::Display for KeptStateCorrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the task's state is corrupt: {}", self.0)
    }
}

impl std::error::Error for KeptStateCorrupted {}

/// Runs one task.
pub trait TaskProcessor: Send {
    /// Processes `records` (a run per input partition) and returns what to produce.
    /// Failing stops the engine thread, as an uncaught exception stops a Kafka Streams
    /// thread; the uncommitted work is discarded.
    fn process(&mut self, records: &[RecordRun]) -> Result<ProducedRecords, ProcessorError>;

    /// The changelog partitions of the stores the processor keeps, with the offset each
    /// store committed last (`None`: none yet).
    fn committed_changelog_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        Ok(BTreeMap::new())
    }

    /// Drops the data of every store the processor keeps: their offsets point outside
    /// their changelogs, which are then restored from their start.
    fn wipe_state(&mut self) -> Result<(), ProcessorError> {
        Ok(())
    }

    /// Changelog records to put into the stores the processor keeps, a run per changelog
    /// partition.
    fn restore(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        let _ = records;
        Ok(())
    }

    /// Every changelog is restored: the task runs from now on.
    fn restored(&mut self) -> Result<(), ProcessorError> {
        Ok(())
    }

    /// How far behind the end of each input partition the task's consumer is (`None`:
    /// unknown yet), before every [`punctuate`](Self::punctuate); Kafka Streams' tasks wait
    /// for a partition with data still on the broker before they process the others.
    fn update_lags(
        &mut self,
        lags: &[(TopicPartition, Option<i64>)],
    ) -> Result<(), ProcessorError> {
        let _ = lags;
        Ok(())
    }

    /// After each [`process`](Self::process) and [`punctuate`](Self::punctuate): the input
    /// partitions whose buffer is full. The engine stops fetching them until they are no
    /// longer named, as Kafka Streams pauses a partition whose record queue passed
    /// `buffered.records.per.partition`.
    fn full_inputs(&mut self) -> Result<Vec<TopicPartition>, ProcessorError> {
        Ok(Vec::new())
    }

    /// After each [`process`](Self::process) and [`punctuate`](Self::punctuate): whether the
    /// task asked for a commit (Kafka Streams' `ProcessorContext#commit`) and has work to
    /// commit. The thread then commits all its tasks without waiting for the commit interval,
    /// as a Kafka Streams thread does.
    fn commit_requested(&mut self) -> Result<bool, ProcessorError> {
        Ok(false)
    }

    /// Called on every turn of the loop while the task runs: wall-clock punctuation.
    fn punctuate(&mut self) -> Result<ProducedRecords, ProcessorError> {
        Ok(ProducedRecords::new())
    }

    /// After [`process`](Self::process) or [`punctuate`](Self::punctuate) failed: what the
    /// processor produced before it failed (a dead-letter record for the failure, say),
    /// which it did not return.
    fn produced_before_failure(&mut self) -> Result<ProducedRecords, ProcessorError> {
        Ok(ProducedRecords::new())
    }

    /// The first step of a commit: flush caches, returning what they emit.
    fn flush(&mut self) -> Result<ProducedRecords, ProcessorError> {
        Ok(ProducedRecords::new())
    }

    /// The input offsets to commit, when the processor decides them (records it buffers
    /// but has not processed are not consumed yet); `None` lets the engine commit past
    /// every record it handed over.
    fn committable_offsets(
        &mut self,
    ) -> Result<Option<BTreeMap<TopicPartition, InputOffset>>, ProcessorError> {
        Ok(None)
    }

    /// The producer could not write a record the processor returned: the one numbered
    /// `index` among those it returned (from every method that returns records, this one
    /// included) since the last commit or rollback, failing with `error`. Returns what to
    /// produce instead (dead-letter records, say); failing stops the engine thread, which
    /// is what the default does. Under exactly-once the transaction holding the record
    /// cannot commit whatever the processor answers, and the thread stops after asking it.
    fn send_failed(
        &mut self,
        index: u64,
        record: &ProducedRecord,
        error: &ClientError,
    ) -> Result<ProducedRecords, ProcessorError> {
        let _ = (index, record);
        Err(Box::new(error.clone()))
    }

    /// The records the processor returned since the last commit or rollback numbered below
    /// `below` are answered: each was written, or its failure was handed to
    /// [`send_failed`](Self::send_failed). None of them can fail any more.
    fn sends_answered(&mut self, below: u64) -> Result<(), ProcessorError> {
        let _ = below;
        Ok(())
    }

    /// The commit went through; `delivered` holds the offset of the last record the commit
    /// wrote to each partition, changelogs included.
    fn committed(&mut self, delivered: &DeliveredOffsets) -> Result<(), ProcessorError> {
        let _ = delivered;
        Ok(())
    }

    /// The uncommitted work was dropped (an aborted transaction) because of `cause`; inputs
    /// are rewound and the task goes on.
    fn rolled_back(&mut self, cause: &str) -> Result<(), ProcessorError> {
        let _ = cause;
        Ok(())
    }

    /// Called on a standby replica's processor whose task becomes active on its thread: the
    /// processor of the task, made with `inputs` as [`ProcessorFactory::create`] makes one, to
    /// which the replica hands its stores over open (Kafka Streams recycles a standby task into
    /// an active one). They keep what the replica read, uncommitted or not, and nothing is
    /// closed or restored again; the replica is gone. The default fails: only the replicas of
    /// a factory that keeps them ([`ProcessorFactory::create_standby`]) are promoted.
    fn promote(
        self: Box<Self>,
        inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        let _ = inputs;
        Err("this processor keeps no standby replica".into())
    }

    /// The task goes away; `clean` when its work was just committed, otherwise its uncommitted
    /// work goes with it (no [`rolled_back`](Self::rolled_back) comes first).
    fn close(&mut self, clean: bool) -> Result<(), ProcessorError> {
        let _ = clean;
        Ok(())
    }

    /// Bytes the processor's stores hold uncommitted.
    fn uncommitted_bytes(&self) -> u64 {
        0
    }
}

/// Keeps the global stores (Kafka Streams' global state machinery on the JVM does). The engine's global thread reads every partition
/// of the global topics: first from the offsets the stores committed to the topics' end
/// (restore), then on as records arrive. Every method is called on that thread.
pub trait GlobalProcessor: Send {
    /// Each partition of the global topics with the offset of the last record its store
    /// committed (`None`: none yet). Called once after creation, before restore.
    fn committed_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError>;

    /// Drops the data of every global store: an offset points outside its topic, and every
    /// partition is then restored from its start.
    fn wipe_state(&mut self) -> Result<(), ProcessorError>;

    /// Records read while restoring (a run per partition), to put into their stores and
    /// commit with their offsets.
    fn restore(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError>;

    /// Records that arrived after restore (a run per partition), to process. Failing stops
    /// the global thread.
    fn process(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError>;

    /// Commits the stores with the offsets of the records they were given.
    fn commit(&mut self) -> Result<(), ProcessorError>;

    /// Closes the stores, after a last commit when `clean`.
    fn close(&mut self, clean: bool) -> Result<(), ProcessorError>;

    /// Bytes the stores hold uncommitted.
    fn uncommitted_bytes(&self) -> u64 {
        0
    }
}

/// An input partition of a new task and what the group committed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedInput {
    /// The partition.
    pub partition: TopicPartition,
    /// Its committed position, if any.
    pub committed: Option<InputOffset>,
}

/// Creates the processor of each task assigned to the instance.
pub trait ProcessorFactory: Send + Sync {
    /// The processor of `task`, whose input partitions are `inputs`.
    fn create(
        &self,
        task: TaskId,
        inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError>;

    /// The processor of a standby replica of `task` (a warm-up replica too): it keeps the
    /// task's stores, which the engine restores into until it closes it, and never processes.
    /// The default fails: such a factory keeps no standby replicas.
    fn create_standby(&self, task: TaskId) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        let _ = task;
        Err("this processor factory keeps no standby replicas".into())
    }

    /// The processor of the global stores; `log_starts` holds every partition of the global
    /// topics with the first offset in its log. Called on the global thread, only for a
    /// topology with global stores. The default fails: such a factory keeps no globals.
    fn create_global(
        &self,
        log_starts: &BTreeMap<TopicPartition, i64>,
    ) -> Result<Box<dyn GlobalProcessor>, ProcessorError> {
        let _ = log_starts;
        Err("this processor factory keeps no global stores".into())
    }

    /// The calling engine thread's assignment is changing: a rebalance began (its partitions
    /// are being revoked, possibly none), or it dropped its tasks to rejoin the group. Kafka
    /// Streams' stream thread is PARTITIONS_REVOKED then, its client REBALANCING.
    fn assignment_started(&self) -> Result<(), ProcessorError> {
        Ok(())
    }

    /// The rebalance ended: the calling engine thread owns `tasks` (possibly none), each one
    /// created already or held until it can be. Kafka Streams' stream thread is
    /// PARTITIONS_ASSIGNED then, and RUNNING once every one of them finished restoring.
    fn assigned(&self, tasks: &[TaskId]) -> Result<(), ProcessorError> {
        let _ = tasks;
        Ok(())
    }

    /// Now on the application's clock, in milliseconds since the epoch: what a source that
    /// resets its offsets by duration counts back from, as Kafka Streams counts with the
    /// `Time` it was created with. The default is the system clock.
    fn now_ms(&self) -> Result<i64, ProcessorError> {
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH)?;
        Ok(since_epoch.as_millis() as i64)
    }

    /// The calling engine thread finished one turn of its loop, whose phases took `turn`:
    /// what Kafka Streams' stream thread records as its poll metrics and phase ratios.
    fn loop_turned(&self, turn: &LoopTurn) -> Result<(), ProcessorError> {
        let _ = turn;
        Ok(())
    }
}

/// How long the phases of one turn of an engine thread's loop took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopTurn {
    /// Polling the group consumer, waiting for records included.
    pub poll: Duration,
    /// How many records the poll returned.
    pub polled_records: usize,
    /// Handing the records to their tasks and sending what they returned.
    pub process: Duration,
    /// Wall-clock punctuation.
    pub punctuate: Duration,
    /// Committing, when the turn committed.
    pub commit: Duration,
    /// The whole turn, restoration included.
    pub total: Duration,
}

impl<F> ProcessorFactory for F
where
    F: Fn(TaskId) -> Box<dyn TaskProcessor> + Send + Sync,
{
    fn create(
        &self,
        task: TaskId,
        _inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        Ok(self(task))
    }
}
