//! One engine thread: a group consumer, a producer, the tasks assigned to it, and the loop
//! that restores, processes and commits them.
//!
//! The tasks sit behind a mutex inside the consumer's rebalance listener, because
//! rebalance callbacks run inside `poll` and must commit or close them. The loop takes the
//! lock only between polls, so the two never contend.
//!
//! Commit barrier (exactly-once v2): flush the producer, send the consumed offsets to the
//! transaction with the group's metadata, commit the transaction, and only then commit each
//! store with the offsets its changelog records got in that transaction. A failed
//! transaction is aborted and every task rolls back its overlays and rewinds to the
//! committed offsets; a fenced producer closes the tasks dirty and rejoins the group.
//! At-least-once takes the same path without the transaction, committing the consumed
//! offsets through the consumer after the stores. A store found corrupt while its task
//! processes is wiped and restored, the other tasks rewinding to the last commit. After a
//! commit, the records of repartition topics below the committed offsets are deleted now
//! and then (see [`RepartitionPurge`]).
//!
//! A record the producer fails to write goes back to the task that returned it, which
//! decides (Kafka Streams' production exception handler) whether the thread goes on
//! without it; under exactly-once the transaction holding it cannot commit, so the thread
//! stops once the task was asked.
//!
//! While the instance is paused (`KafkaStreams.pause`, looked at before each poll and before
//! processing what it returned) the thread neither processes, punctuates nor restores: the
//! inputs of its tasks are paused on the consumer, which goes on polling so that the thread
//! stays in the group, and what was processed before the pause is still committed. Records
//! fetched before the pause took effect are read again once processing resumes. A task with changelogs assigned while paused is held, unopened,
//! until processing resumes, as Kafka Streams holds it with its paused restoring tasks.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rdkafka::consumer::{CommitMode, Consumer};
use rdkafka::topic_partition_list::Offset;

use crate::engine::budget::UncommittedBytesBudget;
use crate::engine::config::EngineConfig;
use crate::engine::error::{Error, Result};
use crate::engine::internal_topics::ResolvedTopology;
use crate::engine::metrics::{CommitTrigger, EngineMetrics};
use crate::engine::processor::{CommittedInput, InputOffset, LoopTurn, ProcessorFactory};
use crate::engine::purge::RepartitionPurge;
use crate::engine::restore::{RestoreListener, Restorer};
use crate::engine::task::{Outputs, Task};
use crate::engine::topology::TaskId;
use crate::kafka::group::{self, commit_list, partition_list};
use crate::kafka::{
    Admin, ChangelogReader, ConsumedRecord, GroupConsumer, KafkaFailure, RebalanceListener,
    StreamsProducer, TransactionFailure,
};
use crate::store::TopicPartition;

/// Longest wait of one poll while idle; bounds how late a stop request is noticed.
const MAX_POLL_WAIT: Duration = Duration::from_millis(100);
/// Longest a restore step may block the loop.
const RESTORE_STEP_WAIT: Duration = Duration::from_millis(50);

/// What every thread of an instance shares.
pub(crate) struct ThreadShared {
    pub config: Arc<EngineConfig>,
    pub topology: Arc<ResolvedTopology>,
    pub factory: Arc<dyn ProcessorFactory>,
    pub restore_listener: Option<Arc<dyn RestoreListener>>,
    pub metrics: Arc<EngineMetrics>,
    pub process_id: String,
    /// `statestore.uncommitted.max.bytes`, of which each thread keeps to its share.
    pub uncommitted_bytes: Arc<UncommittedBytesBudget>,
    /// The instance's admin client, as in Kafka Streams.
    pub admin: Admin,
    /// Set while the instance is paused; each thread follows it before it polls and before it
    /// processes what it polled.
    pub paused: AtomicBool,
}

type MainConsumer = GroupConsumer<ThreadListener>;

/// Runs thread `index` (1-based) until `stop` is set or it fails.
pub(crate) fn run(shared: Arc<ThreadShared>, index: usize, stop: Arc<AtomicBool>) -> Result<()> {
    let manager = TaskManager::new(Arc::clone(&shared), index)?;
    let topics = shared.topology.source_topics();
    let consumer = group::subscribe(
        &shared.config.main_consumer_config(index),
        ThreadListener {
            manager: Mutex::new(manager),
        },
        &topics,
    )?;
    let result = run_loop(&shared, &consumer, &topics, &stop);
    let closed = lock(&consumer).close_all(&consumer, result.is_ok());
    // Dropping the consumer leaves the group; its revocation finds no task left.
    drop(consumer);
    result.and(closed)
}

fn run_loop(
    shared: &ThreadShared,
    consumer: &MainConsumer,
    topics: &[String],
    stop: &AtomicBool,
) -> Result<()> {
    let mut poll_failing_since: Option<Instant> = None;
    while !stop.load(Ordering::Relaxed) {
        let turn_start = Instant::now();
        let wait = {
            let mut manager = lock(consumer);
            manager.take_failure()?;
            if manager.rejoin {
                manager.rejoin = false;
                shared.metrics.rejoined();
                let names: Vec<&str> = topics.iter().map(String::as_str).collect();
                consumer.unsubscribe();
                consumer
                    .subscribe(&names)
                    .map_err(|e| KafkaFailure::new("rejoining the group", e))?;
            }
            manager.follow_pause(consumer, shared.paused.load(Ordering::Relaxed))?;
            manager.restore_step()?;
            manager.update_paused_inputs(consumer)?;
            if manager.is_restoring() {
                Duration::ZERO
            } else {
                manager.time_to_commit().min(MAX_POLL_WAIT)
            }
        };
        let poll_start = Instant::now();
        let records = match poll_records(consumer, wait, shared.config.max_poll_records) {
            Ok(records) => {
                poll_failing_since = None;
                records
            }
            Err(error) => {
                // librdkafka retries by itself; give up only once the client timeout passed.
                let since = *poll_failing_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= shared.config.client_timeout {
                    return Err(Error::Kafka(error));
                }
                Vec::new()
            }
        };
        let mut turn = LoopTurn {
            poll: poll_start.elapsed(),
            polled_records: records.len(),
            ..LoopTurn::default()
        };
        let mut manager = lock(consumer);
        manager.take_failure()?;
        // A pause that came while polling holds back what the poll returned, as nothing may
        // be processed once `pause` returned.
        manager.follow_pause(consumer, shared.paused.load(Ordering::Relaxed))?;
        let process_start = Instant::now();
        if !records.is_empty() {
            manager.process(consumer, records)?;
        }
        let punctuate_start = Instant::now();
        turn.process = punctuate_start - process_start;
        manager.punctuate(consumer)?;
        let commit_start = Instant::now();
        turn.punctuate = commit_start - punctuate_start;
        manager.maybe_commit(consumer)?;
        turn.commit = commit_start.elapsed();
        turn.total = turn_start.elapsed();
        shared
            .factory
            .loop_turned(&turn)
            .map_err(Error::LoopTimings)?;
    }
    Ok(())
}

/// One poll's worth of records: waits up to `wait` for the first, then takes what is
/// already fetched, up to `max`.
fn poll_records(
    consumer: &MainConsumer,
    wait: Duration,
    max: usize,
) -> std::result::Result<Vec<ConsumedRecord>, KafkaFailure> {
    let mut records = Vec::new();
    let mut timeout = wait;
    while records.len() < max {
        match consumer.poll(timeout) {
            None => break,
            Some(Ok(message)) => records.push(ConsumedRecord::from_message(&message)),
            Some(Err(error)) if records.is_empty() => {
                return Err(KafkaFailure::new("polling the source topics", error))
            }
            Some(Err(_)) => break,
        }
        timeout = Duration::ZERO;
    }
    Ok(records)
}

fn lock(consumer: &MainConsumer) -> MutexGuard<'_, TaskManager> {
    group::listener(consumer)
        .manager
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The rebalance listener of a thread: owns its task manager.
pub(crate) struct ThreadListener {
    manager: Mutex<TaskManager>,
}

impl RebalanceListener for ThreadListener {
    fn partitions_revoked(
        &self,
        consumer: &MainConsumer,
        partitions: &[TopicPartition],
        lost: bool,
    ) {
        let mut manager = self.manager.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(error) = manager.on_revoked(consumer, partitions, lost) {
            manager.failure.get_or_insert(error);
        }
    }

    fn partitions_assigned(&self, consumer: &MainConsumer, partitions: &[TopicPartition]) {
        let mut manager = self.manager.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(error) = manager.on_assigned(consumer, partitions) {
            manager.failure.get_or_insert(error);
        }
    }
}

/// The tasks of a thread and the producer that commits them.
struct TaskManager {
    shared: Arc<ThreadShared>,
    index: usize,
    tasks: BTreeMap<TaskId, Task>,
    /// Input partitions of each task.
    inputs: BTreeMap<TaskId, Vec<TopicPartition>>,
    /// Tasks whose inputs are paused on the consumer: until they are restored, and every
    /// task while processing is paused.
    paused: BTreeSet<TaskId>,
    /// Processing is paused (the instance is): no task processes, punctuates or restores.
    processing_paused: bool,
    /// Tasks with changelogs assigned while processing was paused, their inputs paused: they
    /// are opened, and restore, once it resumes.
    held: BTreeSet<TaskId>,
    /// The group's committed offset of input partitions, where their tasks' consumption began.
    committed_starts: BTreeMap<TopicPartition, i64>,
    /// The offset of the last record handed to its task, per input partition.
    handed_out: BTreeMap<TopicPartition, i64>,
    restorer: Restorer,
    producer: StreamsProducer,
    last_commit: Instant,
    purge: RepartitionPurge,
    /// Set by a failed rebalance callback; the loop raises it.
    failure: Option<Error>,
    /// Set when fenced: the loop leaves and rejoins the group.
    rejoin: bool,
    /// The batches sent since the last commit or abort, in sending order: where a failed
    /// record's producer id leads back to its task.
    sent: Vec<SentBatch>,
    /// The producer id of the next record sent.
    next_send_id: usize,
}

/// Records of one task sent in a row.
#[derive(Clone, Copy)]
struct SentBatch {
    first_id: usize,
    task: TaskId,
    /// The task's number of the first record.
    first_index: u64,
}

impl TaskManager {
    fn new(shared: Arc<ThreadShared>, index: usize) -> Result<Self> {
        let config = &shared.config;
        let reader = ChangelogReader::new(
            &config.restore_consumer_config(index),
            config.client_timeout,
        );
        let producer = new_producer(&shared, index)?;
        let purge = RepartitionPurge::new(
            shared.topology.repartition_topics.clone(),
            config.repartition_purge_interval,
            Instant::now(),
        );
        Ok(TaskManager {
            restorer: Restorer::new(reader, shared.restore_listener.clone()),
            shared,
            index,
            tasks: BTreeMap::new(),
            inputs: BTreeMap::new(),
            paused: BTreeSet::new(),
            processing_paused: false,
            held: BTreeSet::new(),
            committed_starts: BTreeMap::new(),
            handed_out: BTreeMap::new(),
            producer,
            last_commit: Instant::now(),
            purge,
            failure: None,
            rejoin: false,
            sent: Vec::new(),
            next_send_id: 0,
        })
    }

    fn take_failure(&mut self) -> Result<()> {
        self.failure.take().map_or(Ok(()), Err)
    }

    fn on_assigned(
        &mut self,
        consumer: &MainConsumer,
        partitions: &[TopicPartition],
    ) -> Result<()> {
        for partition in partitions {
            let Some(id) = self.shared.topology.task_of(partition) else {
                continue;
            };
            self.inputs.entry(id).or_default().push(partition.clone());
        }
        let new: Vec<TaskId> = self
            .inputs
            .keys()
            .filter(|id| !self.tasks.contains_key(id))
            .copied()
            .collect();
        for id in new {
            if self.processing_paused && self.has_changelogs(id) {
                self.pause(consumer, id)?;
                self.held.insert(id);
            } else {
                self.open_task(consumer, id, false)?;
            }
        }
        let owned: Vec<TaskId> = self.tasks.keys().chain(&self.held).copied().collect();
        let member_id = group::member_id(consumer).unwrap_or_default();
        self.shared
            .factory
            .assigned(&owned, &member_id)
            .map_err(Error::Assignment)
    }

    /// Opens task `id` and starts restoring its stores; its inputs wait until they are. With
    /// `wipe_kept_stores`, the state its processor keeps is dropped first and restored in full.
    fn open_task(
        &mut self,
        consumer: &MainConsumer,
        id: TaskId,
        wipe_kept_stores: bool,
    ) -> Result<()> {
        let topology = Arc::clone(&self.shared.topology);
        let subtopology = topology
            .subtopology(id.subtopology)
            .expect("tasks come from the topology");
        let inputs = self.committed_inputs(consumer, id)?;
        let processor = self
            .shared
            .factory
            .create(id, &inputs)
            .map_err(|source| Error::Processor {
                task: id.to_string(),
                source,
            })?;
        let mut task = Task::open(id, subtopology, processor);
        if wipe_kept_stores {
            task.wipe_kept_stores()?;
        }
        self.restorer.begin(&mut task, &self.committed_starts)?;
        if !self.can_process(&task) {
            self.pause(consumer, id)?;
        }
        self.tasks.insert(id, task);
        Ok(())
    }

    /// The input partitions of task `id` with the group's committed positions, which the
    /// processor reads its stream time from.
    fn committed_inputs(
        &mut self,
        consumer: &MainConsumer,
        id: TaskId,
    ) -> Result<Vec<CommittedInput>> {
        let positions =
            group::committed_positions(consumer, &self.inputs[&id], self.shared.config.client_timeout)?;
        for (partition, position) in &positions {
            match position {
                Some((offset, _)) => self.committed_starts.insert(partition.clone(), *offset),
                None => self.committed_starts.remove(partition),
            };
        }
        Ok(positions
            .into_iter()
            .map(|(partition, position)| CommittedInput {
                partition,
                committed: position.map(|(offset, metadata)| InputOffset { offset, metadata }),
            })
            .collect())
    }

    /// Kafka Streams' answer to a `TaskCorruptedException` from task `id`: the task closes
    /// dirty, its state is wiped, the open transaction, which holds unfinished work of every
    /// task, is aborted and every task rewinds to the last commit; then the task opens again
    /// and restores its state in full before it processes again. The thread goes on.
    fn revive_corrupted(&mut self, consumer: &MainConsumer, id: TaskId) -> Result<()> {
        self.shared.metrics.store_corrupted();
        let mut task = self.tasks.remove(&id).expect("the task that just failed");
        self.restorer.forget(&mut task)?;
        task.rollback()?;
        task.close(false)?;
        if let Err(failure) = self.producer.abort() {
            return self.recover(consumer, failure);
        }
        self.forget_sent();
        self.shared.metrics.aborted();
        for task in self.tasks.values_mut() {
            task.rollback()?;
        }
        self.open_task(consumer, id, true)?;
        self.rewind_to_committed(consumer)
    }

    fn on_revoked(
        &mut self,
        consumer: &MainConsumer,
        partitions: &[TopicPartition],
        lost: bool,
    ) -> Result<()> {
        self.shared
            .factory
            .assignment_started()
            .map_err(Error::Assignment)?;
        let revoked: BTreeSet<TaskId> = partitions
            .iter()
            .filter_map(|p| self.shared.topology.task_of(p))
            .collect();
        // Lost partitions belong to someone else already: committing them would be wrong.
        let clean = !lost && self.commit(consumer, CommitTrigger::TaskHandover)?;
        for id in revoked {
            if let Some(mut task) = self.tasks.remove(&id) {
                self.restorer.forget(&mut task)?;
                if !clean {
                    task.rollback()?;
                }
                task.close(clean)?;
            }
            if let Some(inputs) = self.inputs.remove(&id) {
                for partition in inputs {
                    self.handed_out.remove(&partition);
                }
            }
            self.paused.remove(&id);
            self.held.remove(&id);
        }
        // A rebalance is under way: it is the rejoin a fenced commit asked for.
        self.rejoin = false;
        Ok(())
    }

    fn pause(&mut self, consumer: &MainConsumer, id: TaskId) -> Result<()> {
        let partitions = &self.inputs[&id];
        consumer
            .pause(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("pausing the inputs of task {id}"), e))?;
        self.paused.insert(id);
        Ok(())
    }

    fn resume(&mut self, consumer: &MainConsumer, id: TaskId) -> Result<()> {
        let partitions = &self.inputs[&id];
        consumer
            .resume(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("resuming the inputs of task {id}"), e))?;
        self.paused.remove(&id);
        Ok(())
    }

    /// Pauses or resumes processing, restoration included, as the instance asks, and opens
    /// the tasks held meanwhile once it resumes; the inputs follow in
    /// [`update_paused_inputs`](Self::update_paused_inputs).
    fn follow_pause(&mut self, consumer: &MainConsumer, paused: bool) -> Result<()> {
        if paused == self.processing_paused {
            return Ok(());
        }
        self.processing_paused = paused;
        self.restorer.set_paused(paused)?;
        if !paused {
            for id in std::mem::take(&mut self.held) {
                self.open_task(consumer, id, false)?;
            }
        }
        Ok(())
    }

    /// True when task `id` has stores with changelogs, which it restores when it opens.
    fn has_changelogs(&self, id: TaskId) -> bool {
        self.shared
            .topology
            .subtopology(id.subtopology)
            .is_some_and(|s| s.stores.iter().any(|store| store.changelog_topic.is_some()))
    }

    /// True when `task` may process and punctuate: it is restored and processing is not
    /// paused.
    fn can_process(&self, task: &Task) -> bool {
        task.is_running() && !self.processing_paused
    }

    /// True while some store is being restored and processing is not paused.
    fn is_restoring(&self) -> bool {
        self.restorer.is_active() && !self.processing_paused
    }

    /// Restores for a bounded time, unless processing is paused.
    fn restore_step(&mut self) -> Result<()> {
        if self.is_restoring() {
            self.restorer.step(&mut self.tasks, RESTORE_STEP_WAIT)?;
        }
        Ok(())
    }

    /// Pauses the inputs of the tasks that cannot process and resumes those of the tasks
    /// that can again (restored, or processing resumed).
    fn update_paused_inputs(&mut self, consumer: &MainConsumer) -> Result<()> {
        let (to_resume, to_pause): (Vec<TaskId>, Vec<TaskId>) = self
            .tasks
            .iter()
            .filter(|(id, task)| self.paused.contains(id) == self.can_process(task))
            .map(|(id, _)| *id)
            .partition(|id| self.paused.contains(id));
        for id in to_resume {
            self.resume(consumer, id)?;
        }
        for id in to_pause {
            self.pause(consumer, id)?;
        }
        Ok(())
    }

    fn process(&mut self, consumer: &MainConsumer, records: Vec<ConsumedRecord>) -> Result<()> {
        let mut batches: BTreeMap<TaskId, Vec<ConsumedRecord>> = BTreeMap::new();
        for record in records {
            if let Some(id) = self.shared.topology.task_of(&record.topic_partition()) {
                batches.entry(id).or_default().push(record);
            }
        }
        for (id, batch) in batches {
            let Some(task) = self.tasks.get(&id) else {
                if self.held.contains(&id) {
                    // Fetched before its inputs were paused: read these again once it opens.
                    rewind_to_first(consumer, &batch)?;
                }
                continue;
            };
            if !self.can_process(task) {
                // Fetched before the pause took effect: read these again once it can process.
                rewind_to_first(consumer, &batch)?;
                continue;
            }
            let task = self.tasks.get_mut(&id).expect("found above");
            for record in &batch {
                self.handed_out.insert(record.topic_partition(), record.offset);
            }
            self.shared.metrics.processed(batch.len() as u64);
            let outputs = match task.process(batch) {
                Ok(outputs) => outputs,
                Err(error) if error.kept_state_corrupted() => {
                    return self.revive_corrupted(consumer, id)
                }
                Err(error) => return Err(error),
            };
            if !self.send(consumer, id, outputs)? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The tasks that finished restoring.
    fn running_tasks(&self) -> Vec<TaskId> {
        self.tasks
            .iter()
            .filter(|(_, task)| task.is_running())
            .map(|(id, _)| *id)
            .collect()
    }

    /// Runs the wall-clock punctuation of the running tasks, telling them first how far behind
    /// their inputs' ends they are.
    fn punctuate(&mut self, consumer: &MainConsumer) -> Result<()> {
        if self.processing_paused {
            return Ok(());
        }
        let running = self.running_tasks();
        for id in running {
            let lags = group::lags(consumer, &self.inputs[&id], &self.committed_starts);
            let task = self.tasks.get_mut(&id).expect("listed above");
            task.update_lags(&lags)?;
            let outputs = task.punctuate()?;
            if !self.send(consumer, id, outputs)? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Sends the `outputs` of task `task` in the open transaction, then settles the records
    /// that failed so far. Returns false when sending failed and the work was rolled back
    /// (or the tasks were dropped) instead.
    fn send(&mut self, consumer: &MainConsumer, task: TaskId, outputs: Outputs) -> Result<bool> {
        Ok(self.queue(consumer, task, outputs)? && self.settle_failed(consumer)?.is_some())
    }

    /// Hands the `outputs` of task `task` to the producer. Returns false when the producer
    /// failed and the work was rolled back (or the tasks were dropped) instead.
    fn queue(&mut self, consumer: &MainConsumer, task: TaskId, outputs: Outputs) -> Result<bool> {
        if outputs.records.is_empty() {
            return Ok(true);
        }
        self.sent.push(SentBatch {
            first_id: self.next_send_id,
            task,
            first_index: outputs.first_index,
        });
        for record in &outputs.records {
            let id = self.next_send_id;
            self.next_send_id += 1;
            if let Err(failure) = self.producer.send(record, id) {
                self.recover(consumer, failure)?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Asks the task of every record the producer failed to write what to do about it, and
    /// sends what it answers, until no failure is left. Kafka's Java producer must abort a
    /// transaction in which a record failed, so under exactly-once a Kafka Streams thread
    /// fails its next commit whatever the handler answered; here the thread stops as soon
    /// as the tasks were asked. Returns how many failures there were; `None` when sending
    /// failed and the work was rolled back instead.
    fn settle_failed(&mut self, consumer: &MainConsumer) -> Result<Option<usize>> {
        let mut settled = 0;
        let mut doomed = None;
        loop {
            let failed = self.producer.take_failed();
            if failed.is_empty() {
                break;
            }
            for failure in failed {
                settled += 1;
                let batch_index = self.sent.partition_point(|b| b.first_id <= failure.id);
                let batch = self.sent[batch_index - 1];
                let Some(task) = self.tasks.get_mut(&batch.task) else {
                    return Err(Error::Producer(TransactionFailure::Fatal(failure.error)));
                };
                let index = batch.first_index + (failure.id - batch.first_id) as u64;
                let outputs = task.send_failed(index, &failure.record, &failure.error)?;
                if self.producer.is_transactional() {
                    doomed.get_or_insert(failure.error);
                } else if !self.queue(consumer, batch.task, outputs)? {
                    return Ok(None);
                }
            }
        }
        match doomed {
            Some(error) => Err(Error::Producer(TransactionFailure::Fatal(error))),
            None => Ok(Some(settled)),
        }
    }

    /// The producer dropped everything it was sent: no failure can come back.
    fn forget_sent(&mut self) {
        self.sent.clear();
        self.next_send_id = 0;
    }

    fn time_to_commit(&self) -> Duration {
        self.shared
            .config
            .commit_interval
            .saturating_sub(self.last_commit.elapsed())
    }

    fn maybe_commit(&mut self, consumer: &MainConsumer) -> Result<()> {
        let due = self.time_to_commit().is_zero();
        let over_budget = self.shared.uncommitted_bytes.share().is_some_and(|share| {
            self.tasks
                .values()
                .map(Task::uncommitted_bytes)
                .sum::<u64>()
                > share
        });
        let committed = if due {
            self.commit(consumer, CommitTrigger::Interval)?
        } else if over_budget {
            self.commit(consumer, CommitTrigger::Budget)?
        } else {
            false
        };
        if committed {
            let owned: BTreeSet<TopicPartition> = self
                .running_tasks()
                .iter()
                .flat_map(|id| self.inputs[id].iter().cloned())
                .collect();
            let shared = &self.shared;
            self.purge
                .maybe_purge(&shared.admin, &owned, &shared.metrics, Instant::now());
        }
        Ok(())
    }

    /// The commit barrier. Returns false when the work was rolled back instead.
    fn commit(&mut self, consumer: &MainConsumer, trigger: CommitTrigger) -> Result<bool> {
        self.last_commit = Instant::now();
        let running = self.running_tasks();
        let mut consumed: BTreeMap<TopicPartition, InputOffset> = BTreeMap::new();
        for id in running {
            let task = self.tasks.get_mut(&id).expect("listed above");
            let outputs = task.flush()?;
            consumed.extend(task.committable_offsets()?);
            if !self.queue(consumer, id, outputs)? {
                return Ok(false);
            }
        }
        self.skip_trailing_markers(consumer, &mut consumed);
        // Records the tasks send for failed ones may fail as well.
        loop {
            if let Err(failure) = self.producer.flush() {
                self.recover(consumer, failure)?;
                return Ok(false);
            }
            match self.settle_failed(consumer)? {
                None => return Ok(false),
                Some(0) => break,
                Some(_) => {}
            }
        }
        let offsets = commit_list(
            consumed
                .iter()
                .map(|(p, o)| (p, o.offset, o.metadata.as_deref())),
        );
        let group = consumer.group_metadata();
        let delivered = match self.producer.commit(&offsets, group.as_ref()) {
            Ok(delivered) => delivered,
            Err(failure) => {
                self.recover(consumer, failure)?;
                return Ok(false);
            }
        };
        self.forget_sent();
        for task in self.tasks.values_mut() {
            task.commit_stores(&delivered)?;
        }
        if !self.producer.is_transactional() && !consumed.is_empty() {
            consumer
                .commit(&offsets, CommitMode::Sync)
                .map_err(|e| KafkaFailure::new("committing consumed offsets", e))?;
        }
        self.purge.committed(
            consumed
                .iter()
                .map(|(partition, position)| (partition, position.offset)),
        );
        self.shared.metrics.committed(trigger);
        Ok(true)
    }

    /// Moves each input offset to commit past the transaction markers that follow it when its
    /// task processed every record handed to it, as Kafka Streams commits the consumer's next
    /// offset then: a transactional input's committed offset reaches its end and its lag 0.
    fn skip_trailing_markers(
        &self,
        consumer: &MainConsumer,
        consumed: &mut BTreeMap<TopicPartition, InputOffset>,
    ) {
        let positions = group::positions(consumer);
        for (partition, input) in consumed.iter_mut() {
            let all_processed = self.handed_out.get(partition) == Some(&(input.offset - 1));
            if let (true, Some(&next)) = (all_processed, positions.get(partition)) {
                input.offset = input.offset.max(next);
            }
        }
    }

    /// Handles a failed send or commit the way Kafka Streams does.
    fn recover(&mut self, consumer: &MainConsumer, failure: TransactionFailure) -> Result<()> {
        let failure = match failure {
            TransactionFailure::Abortable(_) => match self.producer.abort() {
                Ok(()) => {
                    self.forget_sent();
                    self.shared.metrics.aborted();
                    for task in self.tasks.values_mut() {
                        task.rollback()?;
                    }
                    return self.rewind_to_committed(consumer);
                }
                Err(TransactionFailure::Abortable(error)) => TransactionFailure::Fatal(error),
                Err(other) => other,
            },
            other => other,
        };
        match failure {
            TransactionFailure::Fenced(_) => {
                self.shared.metrics.aborted();
                // The thread gives its tasks up until the group assigns it again.
                self.shared
                    .factory
                    .assignment_started()
                    .map_err(Error::Assignment)?;
                let tasks: Vec<TaskId> = self.tasks.keys().copied().collect();
                for id in tasks {
                    let mut task = self.tasks.remove(&id).expect("listed above");
                    self.restorer.forget(&mut task)?;
                    task.rollback()?;
                    task.close(false)?;
                }
                self.inputs.clear();
                self.paused.clear();
                self.held.clear();
                self.producer = new_producer(&self.shared, self.index)?;
                self.forget_sent();
                self.rejoin = true;
                Ok(())
            }
            other => Err(Error::Producer(other)),
        }
    }

    /// Moves every running task's inputs back to the group's committed offsets.
    fn rewind_to_committed(&mut self, consumer: &MainConsumer) -> Result<()> {
        let timeout = self.shared.config.client_timeout;
        let committed = consumer
            .committed(timeout)
            .map_err(|e| KafkaFailure::new("reading committed offsets", e))?;
        for element in committed.elements() {
            let offset = match element.offset() {
                Offset::Offset(offset) => Offset::Offset(offset),
                _ => Offset::Beginning,
            };
            consumer
                .seek(element.topic(), element.partition(), offset, timeout)
                .map_err(|e| KafkaFailure::new("rewinding to committed offsets", e))?;
        }
        Ok(())
    }

    /// Closes every task: committed first when `clean`, rolled back otherwise.
    fn close_all(&mut self, consumer: &MainConsumer, clean: bool) -> Result<()> {
        let committed = clean && self.commit(consumer, CommitTrigger::TaskHandover)?;
        let mut first_error = None;
        for (_, mut task) in std::mem::take(&mut self.tasks) {
            let closed = self
                .restorer
                .forget(&mut task)
                .and_then(|()| if committed { Ok(()) } else { task.rollback() })
                .and_then(|()| task.close(committed));
            if let Err(error) = closed {
                first_error.get_or_insert(error);
            }
        }
        self.inputs.clear();
        self.paused.clear();
        self.held.clear();
        if !committed {
            // Nothing of the open transaction may become visible.
            let _ = self.producer.abort();
        }
        first_error.map_or(Ok(()), Err)
    }
}

fn new_producer(shared: &ThreadShared, index: usize) -> Result<StreamsProducer> {
    let config = &shared.config;
    // Kafka Streams' exactly-once v2 scheme: <application.id>-<process id>-<thread index>.
    let transactional_id = config
        .exactly_once()
        .then(|| format!("{}-{}-{index}", config.application_id, shared.process_id));
    StreamsProducer::new(
        &config.producer_config(index, transactional_id.as_deref()),
        config.client_timeout,
    )
    .map_err(Error::Producer)
}

fn rewind_to_first(consumer: &MainConsumer, batch: &[ConsumedRecord]) -> Result<()> {
    let mut first: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    for record in batch {
        first
            .entry(record.topic_partition())
            .or_insert(record.offset);
    }
    for (partition, offset) in first {
        consumer
            .seek(
                &partition.topic,
                partition.partition,
                Offset::Offset(offset),
                Duration::from_secs(10),
            )
            .map_err(|e| KafkaFailure::new(format!("rewinding {partition}"), e))?;
    }
    Ok(())
}
