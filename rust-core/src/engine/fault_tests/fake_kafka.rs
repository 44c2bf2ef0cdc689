//! An in-process Kafka for one engine thread, behind the clients' traits: a group of one
//! member and a fetcher whose polls follow a script (one scripted poll per turn of the
//! thread's loop: a rebalance is the member's, anything else the fetcher's), and a producer
//! whose operations fail as a test injects. Everything runs on the calling thread, so a test
//! is deterministic.
//!
//! The fake broker answers a produce request when the next one goes out (or at a flush),
//! as librdkafka serves delivery reports on later calls: a failed record is reported after
//! the send that queued it. Under exactly-once the records become visible when their
//! transaction commits, under at-least-once once delivered.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::kafka::{
    ChangelogEvent, ClientError, DeliveredOffsets, FailedSend, GroupMember, GroupMetadata,
    InputOffset, KafkaFailure, OffsetReset, PartitionFetcher, ProducedRecord, ProducedView, ReadTo,
    RebalanceListener, RecordRun, RestoreConsumer, SendReports, StreamsProducer, ThreadClients,
    TransactionFailure,
};
use crate::store::TopicPartition;

/// What one poll of the group consumer does.
#[derive(Debug, Clone)]
pub enum Poll {
    /// The group assigns these partitions (a new generation).
    Assign(Vec<TopicPartition>),
    /// The group assigns the `active` partitions and standby replicas of the tasks the
    /// `standby` partitions belong to (a new generation).
    AssignWithStandbys {
        active: Vec<TopicPartition>,
        standby: Vec<TopicPartition>,
    },
    /// The group takes these partitions away; `lost` when another member has them already.
    Revoke {
        partitions: Vec<TopicPartition>,
        lost: bool,
    },
    /// Returns the records after the consumer's positions, of every partition not paused.
    Fetch,
    /// Returns the records after the consumer's position in this partition only.
    FetchFrom(TopicPartition),
    /// Returns what [`Poll::Fetch`] would, while the thread is asked to stop.
    FetchWhileStopping,
    /// Returns the records after the consumer's position in this partition, paused or not:
    /// what the client had fetched before the pause took effect.
    Prefetched(TopicPartition),
    /// The poll fails.
    Fail(ClientError),
    /// The topic is deleted; the poll fails as librdkafka's does for a subscribed topic that
    /// went away.
    DeleteTopic(String),
    /// The coordinator fences the member's `group.instance.id`: the consumer is out of use
    /// for good, as librdkafka's is after a fatal error.
    FenceInstance,
    /// Something happens elsewhere meanwhile (on another thread of the instance, say): the
    /// member's poll runs it.
    Elsewhere(Elsewhere),
}

/// What a test makes happen outside the thread, at a point of its script.
#[derive(Clone)]
pub struct Elsewhere(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Elsewhere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Elsewhere")
    }
}

/// A producer operation a test makes fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProducerOp {
    /// Queueing a record for this topic.
    SendTo(String),
    /// Waiting for the records in flight.
    Flush,
    /// Adding the consumed offsets to a transaction before its records are flushed.
    AddOffsets,
    /// Committing a transaction (exactly-once).
    Commit,
    /// The answer to a transaction's commit, which took effect.
    CommitAnswer,
    /// The call that resumes a commit whose answer was lost.
    ResumedCommit,
    /// Initialising a new producer, which fences older ones with its transactional id.
    Init,
    Abort,
}

/// What happened in the cluster, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The consumer stopped fetching a partition.
    Paused(TopicPartition),
    /// The consumer fetches a paused partition again.
    Resumed(TopicPartition),
    ProducerCreated,
    /// The producer's initialisation, begun when it was made, completed.
    ProducerReady,
    GroupMemberCreated,
    /// The group gave the member partitions.
    Assigned,
    Committed,
    Aborted,
    Rejoined,
    /// The restore consumer began reading a changelog partition.
    ChangelogRead {
        partition: TopicPartition,
        from: i64,
        to: ReadTo,
    },
    /// The restore consumer may read a changelog partition followed up to `until` on.
    ChangelogLimitRaised {
        partition: TopicPartition,
        until: i64,
    },
}

/// A commit of the group's offsets, and what was visible once it was made.
#[derive(Debug, Clone)]
pub struct GroupCommit {
    pub offsets: BTreeMap<TopicPartition, i64>,
    /// The values visible in every topic then.
    pub visible: Vec<String>,
}

#[derive(Default)]
struct Cluster {
    /// The values of the input partitions' records, in offset order.
    inputs: BTreeMap<TopicPartition, Vec<String>>,
    /// The group's committed positions.
    committed: BTreeMap<TopicPartition, InputOffset>,
    /// The records written, as a read-committed reader sees them, in order.
    visible: Vec<ProducedRecord>,
    /// The next offset of each partition written to.
    log_ends: BTreeMap<TopicPartition, i64>,
    polls: VecDeque<Poll>,
    faults: Vec<(ProducerOp, TransactionFailure)>,
    /// Record values the broker rejects, with the error it answers.
    rejected: BTreeMap<Vec<u8>, ClientError>,
    /// Record values whose next send fails, with the error the producer reports.
    failing_once: BTreeMap<Vec<u8>, ClientError>,
    generation: i32,
    /// The member takes part in a rebalance that has not assigned it yet.
    rebalancing: bool,
    events: Vec<Event>,
    commits: Vec<GroupCommit>,
    deleted_topics: BTreeSet<String>,
    /// How many of the next reads of the committed offsets time out.
    committed_reads_timing_out: usize,
    /// How many of the next reads of a changelog's first and last offsets time out.
    watermark_reads_timing_out: usize,
}

impl Cluster {
    /// A rebalance gives the member partitions: a new generation.
    fn assigned(&mut self) {
        self.generation += 1;
        self.events.push(Event::Assigned);
    }

    /// The first failure injected for `op`, taken.
    fn fault(&mut self, op: &ProducerOp) -> Result<(), TransactionFailure> {
        match self.faults.iter().position(|(o, _)| o == op) {
            Some(index) => Err(self.faults.remove(index).1),
            None => Ok(()),
        }
    }

    /// Commits `consumed` as the group's offsets.
    fn commit_offsets(&mut self, consumed: &BTreeMap<TopicPartition, InputOffset>) {
        self.committed.extend(consumed.clone());
        self.events.push(Event::Committed);
        self.commits.push(GroupCommit {
            offsets: consumed
                .iter()
                .map(|(p, o)| (p.clone(), o.offset))
                .collect(),
            visible: self.visible.iter().map(value_of).collect(),
        });
    }

    /// Appends `record` to its partition (0 when it names none); returns where it landed.
    fn append(&mut self, record: &ProducedRecord) -> (TopicPartition, i64) {
        let partition = TopicPartition::new(record.topic.clone(), record.partition.unwrap_or(0));
        let end = self.log_ends.entry(partition.clone()).or_insert(0);
        let offset = *end;
        *end += 1;
        (partition, offset)
    }
}

fn value_of(record: &ProducedRecord) -> String {
    String::from_utf8_lossy(record.value.as_deref().unwrap_or_default()).into_owned()
}

/// One engine thread's Kafka, as its clients see it.
pub struct FakeKafka {
    cluster: Mutex<Cluster>,
    /// What the thread's member and fetcher hold. Never locked while the listener runs, which
    /// calls back into them.
    consumer: Mutex<ConsumerState>,
    /// Set when the script of polls is over: the thread then stops.
    stop: Arc<AtomicBool>,
}

impl FakeKafka {
    /// A cluster whose input partitions hold `inputs` (values, in offset order); the thread
    /// stops, through `stop`, once the polls scripted are done.
    pub fn new(inputs: &[(TopicPartition, Vec<&str>)], stop: Arc<AtomicBool>) -> Arc<Self> {
        let mut cluster = Cluster::default();
        for (partition, values) in inputs {
            let values = values.iter().map(|v| v.to_string()).collect();
            cluster.inputs.insert(partition.clone(), values);
        }
        Arc::new(FakeKafka {
            cluster: Mutex::new(cluster),
            consumer: Mutex::new(ConsumerState::default()),
            stop,
        })
    }

    fn cluster(&self) -> MutexGuard<'_, Cluster> {
        self.cluster.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn consumer(&self) -> MutexGuard<'_, ConsumerState> {
        self.consumer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The consumer's polls, in order, after those scripted already.
    pub fn script(&self, polls: impl IntoIterator<Item = Poll>) {
        self.cluster().polls.extend(polls);
    }

    /// The member joins a rebalance (`true`) or gets its assignment (`false`).
    pub fn set_rebalancing(&self, rebalancing: bool) {
        self.cluster().rebalancing = rebalancing;
    }

    /// The next `op` fails with `failure`.
    pub fn fail_next(&self, op: ProducerOp, failure: TransactionFailure) {
        self.cluster().faults.push((op, failure));
    }

    /// The next `reads` reads of the group's committed offsets time out, as they do while the
    /// group coordinator is away.
    pub fn time_out_committed_reads(&self, reads: usize) {
        self.cluster().committed_reads_timing_out = reads;
    }

    /// The next `reads` reads of where a changelog begins and ends time out, as they do while
    /// its leader is away.
    pub fn time_out_watermark_reads(&self, reads: usize) {
        self.cluster().watermark_reads_timing_out = reads;
    }

    /// Another member of the group committed `offset` for `partition`.
    pub fn commit_elsewhere(&self, partition: TopicPartition, offset: i64) {
        let committed = InputOffset {
            offset,
            metadata: None,
        };
        self.cluster().committed.insert(partition, committed);
    }

    /// How many reads of the committed offsets set to time out have not been made yet.
    pub fn committed_reads_left_to_time_out(&self) -> usize {
        self.cluster().committed_reads_timing_out
    }

    /// `topic` is gone, without the consumer saying so until it is asked.
    pub fn delete_topic(&self, topic: &str) {
        self.cluster().deleted_topics.insert(topic.to_string());
    }

    /// Every record with `value` is rejected by the broker with `error`.
    pub fn reject(&self, value: &str, error: ClientError) {
        self.cluster()
            .rejected
            .insert(value.as_bytes().to_vec(), error);
    }

    /// The next record with `value` fails with `error` (a delivery that timed out, say);
    /// later ones go through.
    pub fn fail_once(&self, value: &str, error: ClientError) {
        self.cluster()
            .failing_once
            .insert(value.as_bytes().to_vec(), error);
    }

    /// The values of the records visible in `topic`, in the order they were written.
    pub fn visible(&self, topic: &str) -> Vec<String> {
        self.cluster()
            .visible
            .iter()
            .filter(|r| r.topic == topic)
            .map(value_of)
            .collect()
    }

    /// The group's committed offset of each partition.
    pub fn committed(&self) -> BTreeMap<TopicPartition, i64> {
        self.cluster()
            .committed
            .iter()
            .map(|(p, o)| (p.clone(), o.offset))
            .collect()
    }

    /// How long each poll of the fetcher was allowed to wait for records, in order.
    pub fn poll_waits(&self) -> Vec<Duration> {
        self.consumer().poll_waits.clone()
    }

    /// Every commit of the group's offsets, in order.
    pub fn commits(&self) -> Vec<GroupCommit> {
        self.cluster().commits.clone()
    }

    /// What happened, in order.
    pub fn events(&self) -> Vec<Event> {
        self.cluster().events.clone()
    }

    /// How often `event` happened.
    pub fn count(&self, event: &Event) -> usize {
        self.cluster().events.iter().filter(|e| *e == event).count()
    }
}

impl ThreadClients for Arc<FakeKafka> {
    fn group_member(
        &self,
        _thread: usize,
        listener: Arc<dyn RebalanceListener>,
        _topics: &[String],
    ) -> Result<Box<dyn GroupMember>, KafkaFailure> {
        self.cluster().events.push(Event::GroupMemberCreated);
        self.consumer().fatal = None;
        Ok(Box::new(FakeMember {
            kafka: Arc::clone(self),
            listener,
        }))
    }

    fn fetcher(&self, _thread: usize) -> Result<Box<dyn PartitionFetcher>, KafkaFailure> {
        Ok(Box::new(FakeFetcher {
            kafka: Arc::clone(self),
        }))
    }

    fn producer(
        &self,
        _thread: usize,
        transactional_id: Option<&str>,
    ) -> Result<Box<dyn StreamsProducer>, TransactionFailure> {
        self.cluster().events.push(Event::ProducerCreated);
        Ok(Box::new(FakeProducer {
            kafka: Arc::clone(self),
            transactional: transactional_id.is_some(),
            ready: false,
            in_transaction: false,
            in_flight: Vec::new(),
            uncommitted: Vec::new(),
            delivered: DeliveredOffsets::new(),
            transaction_starts: BTreeMap::new(),
            failed: Vec::new(),
            answered_below: 0,
            offsets_added: None,
            committed_unanswered: false,
        }))
    }

    fn restore_consumer(&self, _thread: usize) -> Box<dyn RestoreConsumer> {
        Box::new(FakeRestoreConsumer {
            kafka: Arc::clone(self),
            reading: BTreeSet::new(),
        })
    }
}

#[derive(Default)]
struct ConsumerState {
    assignment: Vec<TopicPartition>,
    positions: BTreeMap<TopicPartition, i64>,
    paused: BTreeSet<TopicPartition>,
    /// The member is out of use for good.
    fatal: Option<ClientError>,
    /// The member's poll took this turn's scripted poll: the fetcher's returns nothing.
    turn_taken: bool,
    /// How long each poll of the fetcher was allowed to wait for records, in order.
    poll_waits: Vec<Duration>,
}

/// The thread's group member: takes the scripted rebalances.
struct FakeMember {
    kafka: Arc<FakeKafka>,
    listener: Arc<dyn RebalanceListener>,
}

impl FakeMember {
    /// Fails as librdkafka's consumer does once a fatal error put it out of use.
    fn check_usable(&self, context: &str) -> Result<(), KafkaFailure> {
        match self.kafka.consumer().fatal {
            Some(_) => Err(KafkaFailure::new(
                context,
                ClientError::new(ClientError::UNKNOWN_SERVER_ERROR, "Local: Fatal error"),
            )),
            None => Ok(()),
        }
    }
}

impl GroupMember for FakeMember {
    fn poll(&self) -> Result<(), KafkaFailure> {
        self.check_usable("polling the group")?;
        let next = {
            let mut cluster = self.kafka.cluster();
            let rebalance = matches!(
                cluster.polls.front(),
                Some(
                    Poll::Assign(_)
                        | Poll::AssignWithStandbys { .. }
                        | Poll::Revoke { .. }
                        | Poll::FenceInstance
                        | Poll::Elsewhere(_)
                )
            );
            if rebalance {
                cluster.polls.pop_front()
            } else {
                None
            }
        };
        let Some(next) = next else {
            return Ok(());
        };
        self.kafka.consumer().turn_taken = true;
        match next {
            Poll::Assign(partitions) => {
                self.kafka.cluster().assigned();
                self.listener.partitions_assigned(self, &partitions, &[]);
            }
            Poll::AssignWithStandbys { active, standby } => {
                self.kafka.cluster().assigned();
                self.listener.partitions_assigned(self, &active, &standby);
            }
            Poll::Revoke { partitions, lost } => {
                self.listener.partitions_revoked(self, &partitions, lost);
                self.kafka.cluster().generation += 1;
            }
            Poll::Elsewhere(Elsewhere(happen)) => happen(),
            _ => {
                self.kafka.consumer().fatal = Some(ClientError::new(
                    ClientError::FENCED_INSTANCE_ID,
                    "the member's group.instance.id was fenced",
                ));
                self.check_usable("polling the group")?;
            }
        }
        Ok(())
    }

    fn resubscribe(&self, _topics: &[String]) -> Result<(), KafkaFailure> {
        // The partitions assigned come from the script; a new subscription rebalances.
        self.rejoin()
    }

    fn rejoin(&self) -> Result<(), KafkaFailure> {
        self.check_usable("rejoining the group")?;
        let assignment = self.kafka.consumer().assignment.clone();
        let mut cluster = self.kafka.cluster();
        cluster.events.push(Event::Rejoined);
        cluster.polls.push_front(Poll::Assign(assignment.clone()));
        cluster.polls.push_front(Poll::Revoke {
            partitions: assignment,
            lost: false,
        });
        Ok(())
    }

    fn commit_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
    ) -> Result<(), KafkaFailure> {
        self.kafka.cluster().commit_offsets(consumed);
        Ok(())
    }

    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
        let mut cluster = self.kafka.cluster();
        if cluster.committed_reads_timing_out > 0 {
            cluster.committed_reads_timing_out -= 1;
            return Err(KafkaFailure::new(
                "reading committed offsets",
                ClientError::new(ClientError::REQUEST_TIMED_OUT, "Local: Timed out"),
            ));
        }
        Ok(partitions
            .iter()
            .map(|p| (p.clone(), cluster.committed.get(p).cloned()))
            .collect())
    }

    fn group_metadata(&self) -> Option<GroupMetadata> {
        let member = !self.kafka.consumer().assignment.is_empty();
        member.then(|| GroupMetadata {
            group_id: "fake-group".into(),
            member_id: "fake-member".into(),
            generation: self.kafka.cluster().generation,
            instance_id: None,
        })
    }

    fn rebalance_in_progress(&self) -> bool {
        self.kafka.cluster().rebalancing
    }

    fn fatal_error(&self) -> Option<ClientError> {
        self.kafka.consumer().fatal.clone()
    }
}

/// The thread's fetcher: takes the scripted fetches and failures.
struct FakeFetcher {
    kafka: Arc<FakeKafka>,
}

impl FakeFetcher {
    fn fetch(&self, partitions: &[TopicPartition], max: usize) -> Vec<RecordRun> {
        let cluster = self.kafka.cluster();
        let mut state = self.kafka.consumer();
        let mut runs = Vec::new();
        let mut fetched = 0;
        for partition in partitions {
            if state.paused.contains(partition) || !state.assignment.contains(partition) {
                continue;
            }
            let position = state.positions.get(partition).copied().unwrap_or(0);
            let log = cluster.inputs.get(partition).map_or(&[][..], Vec::as_slice);
            let mut run = RecordRun::new(partition.clone());
            for (offset, value) in log
                .iter()
                .enumerate()
                .skip(position as usize)
                .take(max - fetched)
            {
                run.push(
                    offset as i64,
                    0,
                    None,
                    Some(value.as_bytes()),
                    std::iter::empty(),
                );
            }
            fetched += run.len();
            state
                .positions
                .insert(partition.clone(), position + run.len() as i64);
            if !run.is_empty() {
                runs.push(run);
            }
        }
        runs
    }
}

impl PartitionFetcher for FakeFetcher {
    fn assign(
        &self,
        partitions: &[TopicPartition],
        _offset_resets: &BTreeMap<String, OffsetReset>,
    ) -> Result<(), KafkaFailure> {
        let committed = self.kafka.cluster().committed.clone();
        let mut state = self.kafka.consumer();
        for partition in partitions {
            let start = committed.get(partition).map_or(0, |c| c.offset);
            state.positions.insert(partition.clone(), start);
            state.assignment.push(partition.clone());
        }
        Ok(())
    }

    fn unassign(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        let mut state = self.kafka.consumer();
        state.assignment.retain(|p| !partitions.contains(p));
        // A partition the application paused stays paused when it is assigned again, as in
        // librdkafka, which resets only its own pauses on assignment.
        for partition in partitions {
            state.positions.remove(partition);
        }
        Ok(())
    }

    fn assigned_partitions(&self) -> Result<Vec<TopicPartition>, KafkaFailure> {
        Ok(self.kafka.consumer().assignment.clone())
    }

    fn poll_records(&self, max: usize, wait: Duration) -> Result<Vec<RecordRun>, KafkaFailure> {
        self.kafka.consumer().poll_waits.push(wait);
        if std::mem::take(&mut self.kafka.consumer().turn_taken) {
            return Ok(Vec::new());
        }
        let next = self.kafka.cluster().polls.pop_front();
        match next {
            None => {
                self.kafka.stop.store(true, Ordering::Relaxed);
                Ok(Vec::new())
            }
            Some(Poll::Fetch) => {
                let assignment = self.kafka.consumer().assignment.clone();
                Ok(self.fetch(&assignment, max))
            }
            Some(Poll::FetchFrom(partition)) => Ok(self.fetch(&[partition], max)),
            Some(Poll::FetchWhileStopping) => {
                let assignment = self.kafka.consumer().assignment.clone();
                self.kafka.stop.store(true, Ordering::Relaxed);
                Ok(self.fetch(&assignment, max))
            }
            Some(Poll::Prefetched(partition)) => {
                let paused = self.kafka.consumer().paused.remove(&partition);
                let fetched = self.fetch(std::slice::from_ref(&partition), max);
                if paused {
                    self.kafka.consumer().paused.insert(partition);
                }
                Ok(fetched)
            }
            Some(Poll::Fail(error)) => Err(KafkaFailure::new("polling the source topics", error)),
            Some(Poll::DeleteTopic(topic)) => {
                let error = ClientError::new(
                    ClientError::UNKNOWN_TOPIC_OR_PARTITION,
                    format!("Subscribed topic not available: {topic}"),
                );
                self.kafka.cluster().deleted_topics.insert(topic);
                Err(KafkaFailure::new("polling the source topics", error))
            }
            Some(rebalance) => unreachable!("the member's poll takes {rebalance:?}"),
        }
    }

    fn pause_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        let newly: Vec<TopicPartition> = {
            let mut state = self.kafka.consumer();
            partitions
                .iter()
                .filter(|p| state.paused.insert((*p).clone()))
                .cloned()
                .collect()
        };
        let mut cluster = self.kafka.cluster();
        cluster.events.extend(newly.into_iter().map(Event::Paused));
        Ok(())
    }

    fn resume_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        let resumed: Vec<TopicPartition> = {
            let mut state = self.kafka.consumer();
            partitions
                .iter()
                .filter(|p| state.paused.remove(*p))
                .cloned()
                .collect()
        };
        let mut cluster = self.kafka.cluster();
        cluster
            .events
            .extend(resumed.into_iter().map(Event::Resumed));
        Ok(())
    }

    fn seek_to(&self, partition: &TopicPartition, offset: Option<i64>) -> Result<(), KafkaFailure> {
        self.kafka
            .consumer()
            .positions
            .insert(partition.clone(), offset.unwrap_or(0));
        Ok(())
    }

    fn next_offsets(&self, partitions: &[TopicPartition]) -> BTreeMap<TopicPartition, i64> {
        let state = self.kafka.consumer();
        partitions
            .iter()
            .filter_map(|p| state.positions.get(p).map(|offset| (p.clone(), *offset)))
            .collect()
    }

    fn fetched_watermarks(&self, partition: &TopicPartition) -> Option<(i64, i64)> {
        let cluster = self.kafka.cluster();
        let end = cluster.inputs.get(partition).map_or(0, Vec::len);
        Some((0, end as i64))
    }

    fn offset_for_time(
        &self,
        partition: &TopicPartition,
        timestamp_ms: i64,
    ) -> Result<i64, KafkaFailure> {
        // Every record here has timestamp 0.
        let end = self
            .kafka
            .cluster()
            .inputs
            .get(partition)
            .map_or(0, Vec::len) as i64;
        Ok(if timestamp_ms <= 0 { 0 } else { end })
    }

    fn missing_topics(&self, topics: &[String]) -> Result<Vec<String>, KafkaFailure> {
        let cluster = self.kafka.cluster();
        Ok(topics
            .iter()
            .filter(|topic| cluster.deleted_topics.contains(*topic))
            .cloned()
            .collect())
    }
}

struct FakeProducer {
    kafka: Arc<FakeKafka>,
    transactional: bool,
    /// Its initialisation (where an `Init` fault strikes) completed.
    ready: bool,
    in_transaction: bool,
    /// Sent, not answered yet: the id each was sent under, and the record.
    in_flight: Vec<(usize, ProducedRecord)>,
    /// Delivered in the open transaction, visible once it commits.
    uncommitted: Vec<ProducedRecord>,
    delivered: DeliveredOffsets,
    /// Where the open transaction's records begin in each partition it wrote to.
    transaction_starts: BTreeMap<TopicPartition, i64>,
    failed: Vec<FailedSend>,
    /// The ids below this one were answered since the last commit or abort.
    answered_below: usize,
    /// The consumed offsets added to the open transaction, committed with it.
    offsets_added: Option<BTreeMap<TopicPartition, InputOffset>>,
    /// The last transaction committed, but the answer was lost: the next commit resumes it.
    committed_unanswered: bool,
}

impl FakeProducer {
    /// Forgets the transaction that committed; answers where its records landed.
    fn transaction_committed(&mut self) -> DeliveredOffsets {
        self.answered_below = 0;
        self.transaction_starts.clear();
        std::mem::take(&mut self.delivered)
    }

    /// The broker answers every request in flight.
    fn answer_in_flight(&mut self) {
        let mut cluster = self.kafka.cluster();
        for (id, record) in std::mem::take(&mut self.in_flight) {
            self.answered_below = id + 1;
            let value = record.value.clone().unwrap_or_default();
            let failed = cluster
                .failing_once
                .remove(&value)
                .or_else(|| cluster.rejected.get(&value).cloned());
            if let Some(error) = failed {
                self.failed.push(FailedSend { id, record, error });
                continue;
            }
            let (partition, offset) = cluster.append(&record);
            if self.transactional {
                self.transaction_starts
                    .entry(partition.clone())
                    .or_insert(offset);
            }
            self.delivered.insert(partition, offset);
            if self.transactional {
                self.uncommitted.push(record);
            } else {
                cluster.visible.push(record);
            }
        }
    }
}

impl StreamsProducer for FakeProducer {
    fn is_transactional(&self) -> bool {
        self.transactional
    }

    fn ready(&mut self) -> Result<(), TransactionFailure> {
        if !self.ready {
            let mut cluster = self.kafka.cluster();
            cluster.fault(&ProducerOp::Init)?;
            cluster.events.push(Event::ProducerReady);
            self.ready = true;
        }
        Ok(())
    }

    fn send(&mut self, record: &ProducedView<'_>, id: usize) -> Result<(), TransactionFailure> {
        self.kafka
            .cluster()
            .fault(&ProducerOp::SendTo(record.topic.to_string()))?;
        self.answer_in_flight();
        self.in_transaction = self.transactional;
        self.in_flight.push((id, record.to_owned()));
        Ok(())
    }

    fn take_reports(&mut self) -> SendReports {
        SendReports {
            failed: std::mem::take(&mut self.failed),
            answered_below: self.answered_below,
        }
    }

    fn open_transaction_starts(&self) -> BTreeMap<TopicPartition, i64> {
        self.transaction_starts.clone()
    }

    fn flush(&mut self) -> Result<(), TransactionFailure> {
        // Only a flush that waits for the broker can time out.
        if !self.in_flight.is_empty() {
            self.kafka.cluster().fault(&ProducerOp::Flush)?;
        }
        self.answer_in_flight();
        Ok(())
    }

    fn add_offsets(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: Option<&GroupMetadata>,
    ) -> Result<(), TransactionFailure> {
        let Some(group) = group else {
            return Ok(());
        };
        if !self.transactional || consumed.is_empty() {
            return Ok(());
        }
        let mut cluster = self.kafka.cluster();
        cluster.fault(&ProducerOp::AddOffsets)?;
        check_generation(&cluster, group)?;
        self.in_transaction = true;
        self.offsets_added = Some(consumed.clone());
        Ok(())
    }

    fn commit(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: Option<&GroupMetadata>,
    ) -> Result<DeliveredOffsets, TransactionFailure> {
        if self.committed_unanswered {
            self.kafka.cluster().fault(&ProducerOp::ResumedCommit)?;
            self.committed_unanswered = false;
            return Ok(self.transaction_committed());
        }
        self.flush()?;
        if let Some(failed) = self.failed.first() {
            return Err(TransactionFailure::Abortable(failed.error.clone()));
        }
        if self.transactional && (self.in_transaction || !consumed.is_empty()) {
            let mut cluster = self.kafka.cluster();
            cluster.fault(&ProducerOp::Commit)?;
            // Offsets added already were checked against the group then.
            if !consumed.is_empty() && self.offsets_added.as_ref() != Some(consumed) {
                match group {
                    Some(group) => check_generation(&cluster, group)?,
                    None => return Err(stale_generation()),
                }
            }
            self.offsets_added = None;
            cluster.visible.append(&mut self.uncommitted);
            cluster.commit_offsets(consumed);
            self.in_transaction = false;
            if let Err(lost) = cluster.fault(&ProducerOp::CommitAnswer) {
                self.committed_unanswered = true;
                return Err(lost);
            }
        }
        Ok(self.transaction_committed())
    }

    fn commit_unanswered(&self) -> bool {
        self.committed_unanswered
    }

    fn abort(&mut self) -> Result<(), TransactionFailure> {
        self.committed_unanswered = false;
        let mut cluster = self.kafka.cluster();
        cluster.fault(&ProducerOp::Abort)?;
        cluster.events.push(Event::Aborted);
        self.in_transaction = false;
        self.offsets_added = None;
        self.in_flight.clear();
        self.uncommitted.clear();
        self.transaction_starts.clear();
        self.delivered.clear();
        self.failed.clear();
        self.answered_below = 0;
        Ok(())
    }
}

/// Fails as the group coordinator answers offsets sent under a generation it replaced.
fn check_generation(cluster: &Cluster, group: &GroupMetadata) -> Result<(), TransactionFailure> {
    if group.generation == cluster.generation {
        Ok(())
    } else {
        Err(stale_generation())
    }
}

/// What the group coordinator answers offsets sent under a generation it replaced.
pub fn stale_generation() -> TransactionFailure {
    TransactionFailure::Fenced(ClientError::new(
        25,
        "the group generation is not the current one",
    ))
}

/// The restore consumer: a changelog that is an input partition ends where the input does;
/// it tells what it is asked to read and never has a record to give.
struct FakeRestoreConsumer {
    kafka: Arc<FakeKafka>,
    reading: BTreeSet<TopicPartition>,
}

impl FakeRestoreConsumer {
    fn end_of(&self, partition: &TopicPartition) -> Result<i64, KafkaFailure> {
        match self.kafka.cluster().inputs.get(partition) {
            Some(values) => Ok(values.len() as i64),
            None => Err(KafkaFailure::new(
                format!("reading the offsets of {partition}"),
                ClientError::new(
                    ClientError::UNKNOWN_TOPIC_OR_PARTITION,
                    "no such changelog here",
                ),
            )),
        }
    }
}

impl RestoreConsumer for FakeRestoreConsumer {
    fn watermarks(&mut self, partition: &TopicPartition) -> Result<(i64, i64), KafkaFailure> {
        {
            let mut cluster = self.kafka.cluster();
            if cluster.watermark_reads_timing_out > 0 {
                cluster.watermark_reads_timing_out -= 1;
                return Err(KafkaFailure::new(
                    format!("reading the offsets of {partition}"),
                    ClientError::new(ClientError::REQUEST_TIMED_OUT, "Local: Timed out"),
                ));
            }
        }
        Ok((0, self.end_of(partition)?))
    }

    fn start(
        &mut self,
        partition: &TopicPartition,
        offset: i64,
        to: ReadTo,
    ) -> Result<(), KafkaFailure> {
        self.end_of(partition)?;
        self.reading.insert(partition.clone());
        self.kafka.cluster().events.push(Event::ChangelogRead {
            partition: partition.clone(),
            from: offset,
            to,
        });
        Ok(())
    }

    fn fetched_end(&self, partition: &TopicPartition) -> Option<i64> {
        let cluster = self.kafka.cluster();
        cluster
            .inputs
            .get(partition)
            .map(|values| values.len() as i64)
    }

    fn raise_limit(&mut self, partition: &TopicPartition, until: i64) -> Result<(), KafkaFailure> {
        self.end_of(partition)?;
        self.kafka
            .cluster()
            .events
            .push(Event::ChangelogLimitRaised {
                partition: partition.clone(),
                until,
            });
        Ok(())
    }

    fn set_paused(&mut self, _paused: bool) -> Result<(), KafkaFailure> {
        Ok(())
    }

    fn stop(&mut self, partition: &TopicPartition) -> Result<(), KafkaFailure> {
        self.reading.remove(partition);
        Ok(())
    }

    fn is_idle(&self) -> bool {
        self.reading.is_empty()
    }

    fn lags(&self) -> BTreeMap<TopicPartition, i64> {
        BTreeMap::new()
    }

    fn poll(
        &mut self,
        _max_records: usize,
        _max_wait: Duration,
    ) -> Result<Vec<ChangelogEvent>, KafkaFailure> {
        Ok(Vec::new())
    }
}
