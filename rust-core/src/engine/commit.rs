//! The commit barrier of an engine thread (exactly-once v2): flush the producer, send the
//! consumed offsets to the transaction with the group's metadata, commit the transaction,
//! and only then commit each store with the offsets its changelog records got in that
//! transaction. At-least-once takes the same path without the transaction, committing the
//! consumed offsets through the consumer after the stores.
//!
//! The barrier keeps the ledger of what was sent since the last commit, so that a record
//! the producer fails to write goes back to the task that returned it, which decides
//! (Kafka Streams' production exception handler) whether the thread goes on without it;
//! under exactly-once the transaction holding it cannot commit, so the thread stops once
//! the task was asked.
//!
//! A failed transaction is handled as Kafka Streams handles it: an abortable one is aborted,
//! every task rolls back its overlays and rewinds to the committed offsets
//! ([`Recovery::RolledBack`]); a fenced producer is replaced and the thread must give its
//! tasks up ([`Recovery::Fenced`]); anything else stops the thread.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::error::{Error, Result};
use crate::engine::metrics::{CommitTrigger, EngineMetrics};
use crate::engine::purge::RepartitionPurge;
use crate::engine::task::{Outputs, Task};
use crate::engine::topology::TaskId;
use crate::kafka::{
    Admin, ClientError, DeliveredOffsets, GroupConsumer, GroupMetadata, InputOffset, KafkaFailure,
    PartitionFetcher, StreamsProducer, ThreadClients, TransactionFailure,
};
use crate::store::TopicPartition;

/// What became of the work since the last commit when it could not go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// The transaction was aborted: every task rolled back and the consumer is back at the
    /// committed offsets. The thread goes on.
    RolledBack,
    /// The producer was fenced, and replaced: the tasks belong to another member now and
    /// the thread must give them up and rejoin the group.
    Fenced,
}

/// Whether work went through, or was recovered from as [`Recovery`] says.
pub(crate) type Flow<T = ()> = ControlFlow<Recovery, T>;

/// The tasks of a thread, by id.
pub(crate) type Tasks = BTreeMap<TaskId, Task>;

/// Records of one task sent in a row.
#[derive(Clone, Copy)]
struct SentBatch {
    first_id: usize,
    task: TaskId,
    /// The task's number of the first record.
    first_index: u64,
}

/// Where the producer of an engine thread comes from, and its transactional id.
pub(crate) struct ProducerSource {
    pub clients: Arc<dyn ThreadClients>,
    pub thread: usize,
    pub transactional_id: Option<String>,
}

impl ProducerSource {
    fn create(&self) -> Result<Box<dyn StreamsProducer>> {
        self.clients
            .producer(self.thread, self.transactional_id.as_deref())
            .map_err(Error::Producer)
    }

    /// A new producer in place of one that can no longer be used. Its initialisation, which
    /// fences the old one, times out while the broker is away still: it is made again until
    /// `task_timeout` has passed since the first timeout, as the abort before it is.
    fn replacement(&self, task_timeout: Duration) -> Result<Box<dyn StreamsProducer>> {
        transaction_call_resuming_timeouts(task_timeout, || {
            let mut producer = self
                .clients
                .producer(self.thread, self.transactional_id.as_deref())?;
            producer.ready()?;
            Ok(producer)
        })
        .map_err(Error::Producer)
    }
}

/// The producer of a thread, what it sent since the last commit, and when that was.
pub(crate) struct CommitBarrier {
    source: ProducerSource,
    producer: Box<dyn StreamsProducer>,
    metrics: Arc<EngineMetrics>,
    commit_interval: Duration,
    task_timeout: Duration,
    last_commit: Instant,
    /// The batches sent since the last commit or abort, in sending order: where a failed
    /// record's producer id leads back to its task.
    sent: Vec<SentBatch>,
    /// The producer id of the next record sent.
    next_send_id: usize,
    /// The records sent under lower ids are answered, and their tasks were told so.
    answered_below: usize,
    purge: RepartitionPurge,
}

impl CommitBarrier {
    /// A barrier committing every `commit_interval` with a producer from `source`, retrying
    /// an abort that timed out for `task_timeout`.
    pub fn new(
        source: ProducerSource,
        metrics: Arc<EngineMetrics>,
        commit_interval: Duration,
        task_timeout: Duration,
        purge: RepartitionPurge,
    ) -> Result<Self> {
        Ok(CommitBarrier {
            producer: source.create()?,
            source,
            metrics,
            commit_interval,
            task_timeout,
            last_commit: Instant::now(),
            sent: Vec::new(),
            next_send_id: 0,
            answered_below: 0,
            purge,
        })
    }

    /// Waits until the producer's initialisation, begun when the barrier was made, has
    /// completed: before the thread takes its first tasks, as Kafka Streams initialises its
    /// producer's transactions when it creates tasks.
    pub fn ready(&mut self) -> Result<()> {
        self.producer.ready().map_err(Error::Producer)
    }

    /// Where the open transaction's records begin in each partition it wrote to, as far as
    /// their deliveries were reported.
    pub fn open_transaction_starts(&self) -> BTreeMap<TopicPartition, i64> {
        self.producer.open_transaction_starts()
    }

    /// How long until the commit interval is over.
    pub fn time_to_commit(&self) -> Duration {
        self.commit_interval
            .saturating_sub(self.last_commit.elapsed())
    }

    /// Sends the `outputs` of task `task` in the open transaction, then settles the records
    /// that failed so far.
    pub fn send(
        &mut self,
        consumer: GroupConsumer<'_>,
        tasks: &mut Tasks,
        task: TaskId,
        outputs: Outputs,
    ) -> Result<Flow> {
        if let ControlFlow::Break(recovery) = self.queue(consumer, tasks, task, outputs)? {
            return Ok(ControlFlow::Break(recovery));
        }
        Ok(match self.settle_failed(consumer, tasks)? {
            ControlFlow::Break(recovery) => ControlFlow::Break(recovery),
            ControlFlow::Continue(_) => ControlFlow::Continue(()),
        })
    }

    /// Hands the `outputs` of task `task` to the producer.
    fn queue(
        &mut self,
        consumer: GroupConsumer<'_>,
        tasks: &mut Tasks,
        task: TaskId,
        outputs: Outputs,
    ) -> Result<Flow> {
        if outputs.records.is_empty() {
            return Ok(ControlFlow::Continue(()));
        }
        self.sent.push(SentBatch {
            first_id: self.next_send_id,
            task,
            first_index: outputs.first_index,
        });
        for record in outputs.records.records() {
            let id = self.next_send_id;
            self.next_send_id += 1;
            if let Err(failure) = self.producer.send(&record, id) {
                return self
                    .recover(consumer, tasks, failure)
                    .map(ControlFlow::Break);
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Asks the task of every record the producer failed to write what to do about it, and
    /// sends what it answers, until no failure is left. Kafka's Java producer must abort a
    /// transaction in which a record failed, so under exactly-once a Kafka Streams thread
    /// fails its next commit whatever the handler answered; here the thread stops as soon
    /// as the tasks were asked. Under exactly-once a record failing because the producer is
    /// fenced, or lost track of its sequence numbers (after a broker outage, say), asks no
    /// task: as Kafka Streams answers it with a `TaskMigratedException`, the producer is
    /// replaced and the tasks given up. Continues with how many failures there were.
    fn settle_failed(
        &mut self,
        consumer: GroupConsumer<'_>,
        tasks: &mut Tasks,
    ) -> Result<Flow<usize>> {
        let mut settled = 0;
        let mut doomed = None;
        let mut timed_out = None;
        let answered_below = loop {
            let reports = self.producer.take_reports();
            if reports.failed.is_empty() {
                break reports.answered_below;
            }
            let fencing = reports
                .failed
                .iter()
                .find(|failure| failure.error.fences_the_producer());
            if let (true, Some(failure)) = (self.producer.is_transactional(), fencing) {
                let failure = TransactionFailure::Fenced(failure.error.clone());
                return self
                    .recover(consumer, tasks, failure)
                    .map(ControlFlow::Break);
            }
            for failure in reports.failed {
                settled += 1;
                let batch_index = self.sent.partition_point(|b| b.first_id <= failure.id);
                let batch = self.sent[batch_index - 1];
                let Some(task) = tasks.get_mut(&batch.task) else {
                    return Err(Error::Producer(TransactionFailure::Fatal(failure.error)));
                };
                let index = batch.first_index + (failure.id - batch.first_id) as u64;
                let outputs = task.send_failed(index, &failure.record, &failure.error);
                let transactional = self.producer.is_transactional();
                if transactional && failure.error.protocol_code() == ClientError::REQUEST_TIMED_OUT
                {
                    // Kafka Streams answers a send that timed out under exactly-once with a
                    // `TaskCorruptedException`: the transaction is aborted and the tasks go back
                    // to the last commit, as when the broker was away for a while.
                    match outputs {
                        Err(error) if !error.kept_state_corrupted() => return Err(error),
                        _ => timed_out.get_or_insert(failure.error),
                    };
                    continue;
                }
                let outputs = outputs?;
                if transactional {
                    doomed.get_or_insert(failure.error);
                } else if let ControlFlow::Break(recovery) =
                    self.queue(consumer, tasks, batch.task, outputs)?
                {
                    return Ok(ControlFlow::Break(recovery));
                }
            }
        };
        match (doomed, timed_out) {
            (Some(error), _) => Err(Error::Producer(TransactionFailure::Fatal(error))),
            (None, Some(error)) => self
                .recover(consumer, tasks, TransactionFailure::Abortable(error))
                .map(ControlFlow::Break),
            (None, None) => {
                self.tell_answered(tasks, answered_below)?;
                Ok(ControlFlow::Continue(settled))
            }
        }
    }

    /// Tells each task how many of the records it returned since the last commit are
    /// answered (every record below the producer id `answered_below` is), so that it
    /// forgets where they came from: until a record is answered, its failure must be
    /// handled in the context that produced it, which its task keeps for it.
    fn tell_answered(&mut self, tasks: &mut Tasks, answered_below: usize) -> Result<()> {
        if answered_below <= self.answered_below {
            return Ok(());
        }
        let first = self
            .sent
            .partition_point(|b| b.first_id <= self.answered_below)
            .saturating_sub(1);
        let mut answered: BTreeMap<TaskId, u64> = BTreeMap::new();
        for (position, batch) in self.sent.iter().enumerate().skip(first) {
            if batch.first_id >= answered_below {
                break;
            }
            let batch_end = self
                .sent
                .get(position + 1)
                .map_or(self.next_send_id, |next| next.first_id);
            let answered_end = batch_end.min(answered_below);
            answered.insert(
                batch.task,
                batch.first_index + (answered_end - batch.first_id) as u64,
            );
        }
        for (id, below) in answered {
            if let Some(task) = tasks.get_mut(&id) {
                task.sends_answered(below)?;
            }
        }
        self.answered_below = answered_below;
        Ok(())
    }

    /// The producer dropped everything it was sent: no failure can come back.
    fn forget_sent(&mut self) {
        self.sent.clear();
        self.next_send_id = 0;
        self.answered_below = 0;
    }

    /// Commits the work of the `running` tasks: what flushing them produces, the input
    /// offsets they consumed (past the transaction markers after the records
    /// `handed_out`), and their stores.
    pub fn commit(
        &mut self,
        consumer: GroupConsumer<'_>,
        tasks: &mut Tasks,
        running: &[TaskId],
        handed_out: &BTreeMap<TopicPartition, i64>,
        trigger: CommitTrigger,
    ) -> Result<Flow> {
        let mut consumed: BTreeMap<TopicPartition, InputOffset> = BTreeMap::new();
        for id in running {
            let task = tasks.get_mut(id).expect("running tasks are tasks");
            let outputs = task.flush()?;
            consumed.extend(task.committable_offsets()?);
            if let ControlFlow::Break(recovery) = self.queue(consumer, tasks, *id, outputs)? {
                return Ok(ControlFlow::Break(recovery));
            }
        }
        skip_trailing_markers(consumer.fetcher, handed_out, &mut consumed);
        // Only a transaction's offsets need the group's metadata, and asking librdkafka for it
        // waits on its main thread.
        let group = if self.producer.is_transactional() && !consumed.is_empty() {
            consumer.member.group_metadata()
        } else {
            None
        };
        // The offsets travel while the records are flushed: two round trips to the
        // coordinators (5-7 ms a commit on word count) no longer follow the flush's.
        if let Err(failure) = self.producer.add_offsets(&consumed, group.as_ref()) {
            return self
                .recover(consumer, tasks, failure)
                .map(ControlFlow::Break);
        }
        // Records the tasks send for failed ones may fail as well.
        loop {
            if let Err(failure) = self.producer.flush() {
                return self
                    .recover(consumer, tasks, failure)
                    .map(ControlFlow::Break);
            }
            match self.settle_failed(consumer, tasks)? {
                ControlFlow::Break(recovery) => return Ok(ControlFlow::Break(recovery)),
                ControlFlow::Continue(0) => break,
                ControlFlow::Continue(_) => {}
            }
        }
        let delivered = match self.commit_resuming_timeouts(&consumed, group.as_ref()) {
            Ok(delivered) => delivered,
            Err(failure) => {
                return self
                    .recover(consumer, tasks, failure)
                    .map(ControlFlow::Break)
            }
        };
        log::debug!(
            "committed the consumed offsets {:?}; the changelogs' last offsets {:?}",
            consumed
                .iter()
                .map(|(partition, input)| (partition.to_string(), input.offset))
                .collect::<Vec<_>>(),
            delivered
                .iter()
                .map(|(partition, offset)| (partition.to_string(), *offset))
                .collect::<Vec<_>>()
        );
        self.forget_sent();
        for task in tasks.values_mut() {
            task.commit_stores(&delivered)?;
        }
        if !self.producer.is_transactional() && !consumed.is_empty() {
            consumer.member.commit_offsets(&consumed)?;
        }
        self.purge.committed(
            consumed
                .iter()
                .map(|(partition, position)| (partition, position.offset)),
        );
        self.metrics.committed(trigger);
        // The next commit is due an interval after this one ended, as in Kafka Streams: a
        // commit that takes a while does not make the next one come sooner.
        self.last_commit = Instant::now();
        Ok(ControlFlow::Continue(()))
    }

    /// Commits the transaction (under at-least-once, flushes). A commit that timed out is made
    /// again, which resumes it, until `task.timeout.ms` has passed, as Kafka Streams retries a
    /// commit that timed out: the coordinator may have been asked to commit already, so the
    /// transaction can no longer be aborted and its work rolled back (the stores would miss
    /// what the changelogs and the group's offsets then hold). Past the task timeout the thread
    /// fails, and the stores' next restore reads whatever became of the transaction. For the
    /// same reason a commit resumed after the coordinator's answer was lost
    /// ([`commit_unanswered`](StreamsProducer::commit_unanswered)) that fails abortably counts
    /// as fenced (one that timed out before asking, adding the offsets say, is aborted as
    /// ever): the replaced producer's initialisation waits until the coordinator has ended the
    /// transaction one way or the other, and the tasks, given up, restore whatever it became.
    fn commit_resuming_timeouts(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: Option<&GroupMetadata>,
    ) -> std::result::Result<DeliveredOffsets, TransactionFailure> {
        let producer = &mut self.producer;
        let mut resuming_unanswered = false;
        let committed = transaction_call_resuming_timeouts(self.task_timeout, || {
            resuming_unanswered = producer.commit_unanswered();
            let answer = producer.commit(consumed, group);
            if let Err(failure) = &answer {
                if failure.timed_out() {
                    log::warn!("the commit timed out and is made again: {failure}");
                }
            }
            answer
        });
        match committed {
            Err(TransactionFailure::Abortable(error)) if resuming_unanswered => {
                log::warn!(
                    "a resumed commit failed, the transaction may have committed all the same; \
                     the producer is replaced and the tasks restore what it became: {error}"
                );
                Err(TransactionFailure::Fenced(error))
            }
            answer => answer,
        }
    }

    /// Deletes the repartition records below what was committed, when due; `owned` are the
    /// input partitions of the running tasks.
    pub fn maybe_purge(&mut self, admin: &Admin, owned: &BTreeSet<TopicPartition>) {
        self.purge
            .maybe_purge(admin, owned, &self.metrics, Instant::now());
    }

    /// True under exactly-once: what the tasks produce waits in a transaction.
    pub fn is_transactional(&self) -> bool {
        self.producer.is_transactional()
    }

    /// Aborts the open transaction because of `cause`: every task rolls back and rewinds to
    /// the committed offsets. An abort that fails abortably is fatal, unless it timed out:
    /// with the broker away, the abort is called again (librdkafka resumes it) until
    /// `task.timeout.ms` has passed, as Kafka Streams retries a commit that timed out.
    ///
    /// The producer is then replaced, whose initialisation gives the transactional id a new
    /// epoch, as Kafka's producer gets one at the end of every transaction (KIP-890's second
    /// transaction version, which librdkafka does not speak): an abort usually follows requests
    /// that went unanswered, and a produce request of the aborted transaction that a leader
    /// takes only after the abort's marker could otherwise join the next transaction under the
    /// same epoch once that one wrote to the partition too (the leader's check with the
    /// coordinator finds it ongoing), and become visible with it. After a broker outage,
    /// librdkafka's producer was also seen failing every delivery with a timeout after such an
    /// abort.
    pub fn abort(
        &mut self,
        consumer: GroupConsumer<'_>,
        tasks: &mut Tasks,
        cause: &str,
    ) -> Result<Recovery> {
        let producer = &mut self.producer;
        log::warn!("aborting the open transaction: {cause}");
        match transaction_call_resuming_timeouts(self.task_timeout, || producer.abort()) {
            Ok(()) => {
                self.forget_sent();
                self.metrics.aborted();
                for task in tasks.values_mut() {
                    task.rollback(cause)?;
                }
                rewind_to_committed(consumer, self.task_timeout)?;
                if self.producer.is_transactional() {
                    self.producer = self.source.replacement(self.task_timeout)?;
                }
                Ok(Recovery::RolledBack)
            }
            Err(TransactionFailure::Abortable(error)) => {
                self.recover(consumer, tasks, TransactionFailure::Fatal(error))
            }
            Err(other) => self.recover(consumer, tasks, other),
        }
    }

    /// Hands the producer what task `task` produced before it failed, which ends the thread:
    /// Kafka Streams' record collector had handed those records to its producer already, and
    /// under at-least-once [`close_dirty`](Self::close_dirty) delivers them (a dead-letter
    /// record for the failure among them). Under exactly-once they could only join the
    /// transaction that is aborted.
    pub fn send_before_failing(
        &mut self,
        consumer: GroupConsumer<'_>,
        tasks: &mut Tasks,
        task: TaskId,
        outputs: Outputs,
    ) {
        if !self.producer.is_transactional() {
            // The thread is failing already: a record that cannot be sent changes nothing.
            let _ = self.queue(consumer, tasks, task, outputs);
        }
    }

    /// Ends the work of the tasks closing dirty; the thread ends whatever this answers.
    /// Under exactly-once the open transaction is aborted: nothing of it may become visible.
    /// Under at-least-once what was sent is delivered, as Kafka's producer delivers what it
    /// holds when Kafka Streams closes it; the inputs' offsets stay uncommitted, so their
    /// records are read again.
    pub fn close_dirty(&mut self) {
        let _ = if self.producer.is_transactional() {
            self.producer.abort()
        } else {
            self.producer.flush()
        };
    }

    /// Handles a failed send or commit the way Kafka Streams does.
    fn recover(
        &mut self,
        consumer: GroupConsumer<'_>,
        tasks: &mut Tasks,
        failure: TransactionFailure,
    ) -> Result<Recovery> {
        match failure {
            TransactionFailure::Abortable(_) | TransactionFailure::TimedOut(_) => {
                self.abort(consumer, tasks, &failure.to_string())
            }
            TransactionFailure::Fenced(_) => {
                log::warn!("the producer is replaced: {failure}");
                self.metrics.aborted();
                self.producer = self.source.replacement(self.task_timeout)?;
                self.forget_sent();
                Ok(Recovery::Fenced)
            }
            TransactionFailure::Fatal(_) => Err(Error::Producer(failure)),
        }
    }
}

/// Makes a transaction call again while it times out (librdkafka resumes the operation), until
/// `task_timeout` has passed since its first timeout; a timeout past that is fatal.
fn transaction_call_resuming_timeouts<T>(
    task_timeout: Duration,
    call: impl FnMut() -> std::result::Result<T, TransactionFailure>,
) -> std::result::Result<T, TransactionFailure> {
    again_while_timing_out(task_timeout, TransactionFailure::timed_out, call).map_err(|failure| {
        match failure {
            TransactionFailure::TimedOut(error) => TransactionFailure::Fatal(error),
            other => other,
        }
    })
}

/// Makes `call` again while it fails with what `timed_out` says is a timeout, until
/// `task_timeout` has passed since its first timeout, as Kafka Streams retries a client call
/// that timed out within `task.timeout.ms`; answers its last failure then.
fn again_while_timing_out<T, E>(
    task_timeout: Duration,
    timed_out: impl Fn(&E) -> bool,
    mut call: impl FnMut() -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let mut timed_out_since: Option<Instant> = None;
    loop {
        match call() {
            Err(failure) if timed_out(&failure) => {
                let since = *timed_out_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= task_timeout {
                    return Err(failure);
                }
            }
            answer => return answer,
        }
    }
}

/// Moves each input offset to commit past the transaction markers that follow it when its
/// task processed every record `handed_out` to it, as Kafka Streams commits the consumer's
/// next offset then: a transactional input's committed offset reaches its end and its lag 0.
fn skip_trailing_markers(
    fetcher: &dyn PartitionFetcher,
    handed_out: &BTreeMap<TopicPartition, i64>,
    consumed: &mut BTreeMap<TopicPartition, InputOffset>,
) {
    let partitions: Vec<TopicPartition> = consumed.keys().cloned().collect();
    let positions = fetcher.next_offsets(&partitions);
    for (partition, input) in consumed.iter_mut() {
        let all_processed = handed_out.get(partition) == Some(&(input.offset - 1));
        if let (true, Some(&next)) = (all_processed, positions.get(partition)) {
            input.offset = input.offset.max(next);
        }
    }
}

/// Moves every assigned partition back to the group's committed offset (its start when
/// nothing was committed). The tasks rolled back already, so the thread cannot go on without
/// those offsets: a read that times out (the group coordinator away) is made again until
/// `task_timeout` has passed since the first timeout, as an abort is.
fn rewind_to_committed(consumer: GroupConsumer<'_>, task_timeout: Duration) -> Result<()> {
    let assigned = consumer.fetcher.assigned_partitions()?;
    let committed = again_while_timing_out(task_timeout, KafkaFailure::timed_out, || {
        consumer.member.committed_offsets(&assigned)
    })?;
    log::debug!(
        "rewinding to the committed offsets {:?}",
        committed
            .iter()
            .map(|(partition, committed)| (
                partition.to_string(),
                committed.as_ref().map(|c| c.offset)
            ))
            .collect::<Vec<_>>()
    );
    for (partition, committed) in committed {
        consumer
            .fetcher
            .seek_to(&partition, committed.map(|c| c.offset))?;
    }
    Ok(())
}
