//! What an engine thread asks of its Kafka clients: the seam between the engine and the
//! client library. [`ThreadClients`] creates a thread's [`GroupMember`], its
//! [`PartitionFetcher`], its [`StreamsProducer`] and its [`RestoreConsumer`]; the engine knows
//! them only through these traits, which the rdkafka clients of this module's siblings
//! implement.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::kafka::changelog::ChangelogEvent;
use crate::kafka::error::{ClientError, KafkaFailure, TransactionFailure};
use crate::kafka::records::{InputOffset, ProducedRecord, ProducedView, RecordRun};
use crate::store::TopicPartition;

/// The offset of the last record delivered to each partition since the last commit.
pub type DeliveredOffsets = BTreeMap<TopicPartition, i64>;

/// Where a consumer starts reading a partition that has no committed offset, or one out of
/// range: Kafka's `auto.offset.reset`, which a Kafka Streams source may set for its topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OffsetReset {
    /// From the log's start.
    Earliest,
    /// From the log's end.
    Latest,
    /// Nowhere: the consumer fails.
    None,
    /// From the first record whose timestamp is at most this many milliseconds old, or the
    /// log's end when there is none (Kafka Streams' `AutoOffsetReset.byDuration`). A
    /// partition without a committed offset is moved there when its task opens; one whose
    /// offset is out of range starts from the log's start.
    ByDuration(u64),
}

/// Makes each engine thread's member of the application's group: the one client the engine
/// does not make itself, since the membership speaks Kafka Streams' group protocols (DESIGN
/// §10).
pub trait GroupMembership: Send + Sync {
    /// Thread `thread`'s member, subscribed to `topics`, whose rebalances reach `listener`.
    fn join(
        &self,
        thread: usize,
        listener: Arc<dyn RebalanceListener>,
        topics: &[String],
    ) -> Result<Box<dyn GroupMember>, KafkaFailure>;
}

/// Creates the clients of engine thread `thread` (1-based, as Kafka Streams counts).
pub trait ThreadClients: Send + Sync {
    /// A member of the application's group, subscribed to `topics`, whose rebalances reach
    /// `listener`.
    fn group_member(
        &self,
        thread: usize,
        listener: Arc<dyn RebalanceListener>,
        topics: &[String],
    ) -> Result<Box<dyn GroupMember>, KafkaFailure>;

    /// The consumer that fetches the partitions the thread's group member is assigned.
    fn fetcher(&self, thread: usize) -> Result<Box<dyn PartitionFetcher>, KafkaFailure>;

    /// The thread's producer: transactional with `transactional_id`, which fences the older
    /// producers with that id and aborts their open transaction.
    fn producer(
        &self,
        thread: usize,
        transactional_id: Option<&str>,
    ) -> Result<Box<dyn StreamsProducer>, TransactionFailure>;

    /// The consumer that reads the thread's changelogs to restore its stores.
    fn restore_consumer(&self, thread: usize) -> Box<dyn RestoreConsumer>;
}

/// Reacts to partitions moving in and out of a group member. Called inside
/// [`GroupMember::poll`], on the polling thread, before the change applies: on revocation the
/// listener can still commit the partitions it is losing, with the group generation that
/// owns them.
pub trait RebalanceListener: Send + Sync {
    /// `partitions` are about to be taken away. `lost` is true when the group already
    /// gave them to another member (the session expired): nothing may be committed then.
    fn partitions_revoked(
        &self,
        member: &dyn GroupMember,
        partitions: &[TopicPartition],
        lost: bool,
    );

    /// `partitions` were just assigned to this member, which now keeps standby replicas of the
    /// tasks `standby_inputs` are the input partitions of (every such task it keeps, not only
    /// those added; warm-up replicas among them).
    fn partitions_assigned(
        &self,
        member: &dyn GroupMember,
        partitions: &[TopicPartition],
        standby_inputs: &[TopicPartition],
    );
}

/// The group generation a member belongs to, which a transaction commits the consumed offsets
/// under: the coordinator refuses them from a member of an older generation, which fences a
/// member that lost its partitions without knowing it (KIP-447).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    pub group_id: String,
    pub member_id: String,
    /// The generation (classic protocol) or member epoch the member joined with.
    pub generation: i32,
    /// `group.instance.id` of a static member.
    pub instance_id: Option<String>,
}

/// What an engine thread reads its input with: a member of the application's group, which
/// gives it its partitions, and the fetcher of those partitions. They are two clients so that
/// the membership can be a client that speaks Kafka Streams' group protocols while librdkafka
/// fetches (DESIGN §10).
#[derive(Clone, Copy)]
pub struct GroupConsumer<'a> {
    pub member: &'a dyn GroupMember,
    pub fetcher: &'a dyn PartitionFetcher,
}

/// Reads the partitions the group assigned to the thread; never joins the group.
pub trait PartitionFetcher: Send + Sync {
    /// Starts fetching `partitions`, each from the group's committed offset or, without one,
    /// where its topic's reset policy in `offset_resets` (else `auto.offset.reset`) says.
    fn assign(
        &self,
        partitions: &[TopicPartition],
        offset_resets: &BTreeMap<String, OffsetReset>,
    ) -> Result<(), KafkaFailure>;

    /// Stops fetching `partitions` for good and forgets their positions; one it was not fetching
    /// (the thread's closing unassigned everything before the group took it back) is no matter.
    fn unassign(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure>;

    /// The partitions being fetched.
    fn assigned_partitions(&self) -> Result<Vec<TopicPartition>, KafkaFailure>;

    /// Up to `max` records, by partition: waits up to `wait` for the first, then takes what
    /// is already fetched.
    fn poll_records(&self, max: usize, wait: Duration) -> Result<Vec<RecordRun>, KafkaFailure>;

    /// Stops fetching `partitions` until they are resumed.
    fn pause_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure>;

    /// Fetches `partitions` again.
    fn resume_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure>;

    /// Reads `partition` from `offset` on (`None`: from the log's start).
    fn seek_to(&self, partition: &TopicPartition, offset: Option<i64>) -> Result<(), KafkaFailure>;

    /// The next offset the consumer hands out of each of `partitions` that is assigned and
    /// has a position: past the last record it handed out, and past the transaction markers
    /// after it. Asked every loop turn, so it must not wait for the client's own threads.
    fn next_offsets(&self, partitions: &[TopicPartition]) -> BTreeMap<TopicPartition, i64>;

    /// The low and high watermarks of `partition` as the consumer's last fetch saw them,
    /// without asking the broker; `None` before it fetched any.
    fn fetched_watermarks(&self, partition: &TopicPartition) -> Option<(i64, i64)>;

    /// The offset of the first record of `partition` whose timestamp is at least
    /// `timestamp_ms`, or the log's end when there is none, asked of the broker.
    fn offset_for_time(
        &self,
        partition: &TopicPartition,
        timestamp_ms: i64,
    ) -> Result<i64, KafkaFailure>;

    /// Those of `topics` the cluster does not have, asked of the broker.
    fn missing_topics(&self, topics: &[String]) -> Result<Vec<String>, KafkaFailure>;
}

/// The thread's membership of the application's group: which partitions it owns, under which
/// generation; it commits the group's offsets outside transactions. It fetches nothing.
pub trait GroupMember: Send + Sync {
    /// Serves the group without waiting: what the member's client has to say, and rebalances,
    /// whose callbacks run in here on the member's [`RebalanceListener`]. Called on every turn
    /// of the thread's loop.
    fn poll(&self) -> Result<(), KafkaFailure>;

    /// Leaves the group and joins it again, subscribed to the same topics.
    fn rejoin(&self) -> Result<(), KafkaFailure>;

    /// Subscribes to `topics` instead of what it was subscribed to: the group rebalances.
    fn resubscribe(&self, topics: &[String]) -> Result<(), KafkaFailure>;

    /// Commits `consumed` as the group's positions, outside any transaction.
    fn commit_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
    ) -> Result<(), KafkaFailure>;

    /// The group's committed position of each of `partitions`, `None` for one without. Under
    /// exactly-once the read is stable, as Kafka Streams' main consumer reads it: offsets that a
    /// transaction not ended yet commits are waited for.
    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure>;

    /// The group generation this member belongs to; `None` while it is not a member.
    fn group_metadata(&self) -> Option<GroupMetadata>;

    /// True from the member's joining a rebalance until its assignment arrives: the generation
    /// a commit is made under is about to change, so the thread's regular commits wait, as
    /// Kafka Streams' do (a revocation's commit does not).
    fn rebalance_in_progress(&self) -> bool;

    /// The error that put the member out of use for good, once one did (a static member
    /// fenced by another with its instance id): every later operation fails without saying
    /// more than that.
    fn fatal_error(&self) -> Option<ClientError>;
}

/// A record the producer could not write.
#[derive(Debug, Clone)]
pub struct FailedSend {
    /// The id it was sent under.
    pub id: usize,
    /// The record, as it was to be written.
    pub record: ProducedRecord,
    /// Why it was not.
    pub error: ClientError,
}

/// What the producer heard back about the records sent to it since the caller last asked.
#[derive(Debug, Default)]
pub struct SendReports {
    /// The records that failed, in the order their failures came.
    pub failed: Vec<FailedSend>,
    /// Every record sent under a lower id than this is answered: delivered, or failed and in
    /// `failed` now or in an earlier report. Ids are counted from 0 again after each commit
    /// or abort.
    pub answered_below: usize,
}

/// The producer of an engine thread: transactional under exactly-once, plain under
/// at-least-once. It learns where each record landed, which is how a commit learns the
/// changelog offsets its stores must record, and which records failed: those are kept,
/// with the id the caller sent them under, for the caller to decide about.
pub trait StreamsProducer: Send {
    /// True for an exactly-once producer.
    fn is_transactional(&self) -> bool;

    /// Waits until the producer can begin transactions: under exactly-once, until the
    /// initialisation begun when it was made (which fences older producers with its
    /// transactional id) has completed. Every call that begins a transaction waits for it
    /// first; a producer made ready, or not transactional, is ready at once.
    fn ready(&mut self) -> Result<(), TransactionFailure> {
        Ok(())
    }

    /// Queues `record` under `id`, beginning a transaction first if none is open. A record
    /// the producer rejects at once is kept as failed, as one that fails later is.
    fn send(&mut self, record: &ProducedView<'_>, id: usize) -> Result<(), TransactionFailure>;

    /// The records that failed since the last call, and how far every record is answered.
    fn take_reports(&mut self) -> SendReports;

    /// Where the open transaction's records begin in each partition it wrote to, as far as
    /// their deliveries were reported: no reader of committed records gets past there until
    /// the transaction ends. Empty for a producer that is not transactional.
    fn open_transaction_starts(&self) -> BTreeMap<TopicPartition, i64>;

    /// Waits until every sent record is acknowledged or failed; failed records are kept for
    /// [`take_reports`](Self::take_reports).
    fn flush(&mut self) -> Result<(), TransactionFailure>;

    /// Exactly-once: starts adding `consumed` (next offsets to read) to the open transaction as
    /// `group`'s offsets, so that they travel to the coordinators while the records are
    /// flushed; the [`commit`](Self::commit) of the same offsets waits for them rather than
    /// sending them. Does nothing at-least-once, without offsets or without `group`.
    fn add_offsets(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: Option<&GroupMetadata>,
    ) -> Result<(), TransactionFailure>;

    /// Makes everything sent since the last commit durable and returns where it landed.
    /// A failed record left untaken fails the commit.
    ///
    /// Exactly-once: commits the transaction with `consumed` (next offsets to read) as the
    /// group's offsets, fenced by `group`'s generation. At-least-once: flushes only; the
    /// caller commits `consumed` through the consumer.
    ///
    /// Called again after the transaction's commit timed out, it resumes that commit: the
    /// coordinator may have been asked to commit already.
    fn commit(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: Option<&GroupMetadata>,
    ) -> Result<DeliveredOffsets, TransactionFailure>;

    /// True when the coordinator was asked to commit the transaction and the answer did not
    /// come in time: whatever the commit that resumes it answers short of success, the
    /// transaction may have committed.
    fn commit_unanswered(&self) -> bool;

    /// Aborts the open transaction, if any, and forgets what was sent in it.
    fn abort(&mut self) -> Result<(), TransactionFailure>;
}

/// How far a [`RestoreConsumer`] reads a changelog partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadTo {
    /// To the end it has when reading gets there, which is reported.
    End,
    /// Up to this offset (exclusive), which is reported as its end.
    Offset(i64),
    /// On and on as it grows, its end never reported: a standby task's changelog.
    Follow,
    /// On as it grows, but not past this offset (exclusive) until it is raised
    /// ([`RestoreConsumer::raise_limit`]), its end never reported: a standby task's changelog
    /// that is a source topic, read only as far as the group committed.
    FollowUpTo(i64),
}

impl ReadTo {
    /// True for a standby task's changelog, which never ends.
    pub fn follows(self) -> bool {
        matches!(self, ReadTo::Follow | ReadTo::FollowUpTo(_))
    }
}

/// Reads changelog partitions up to their end, to restore stores from them, or on as they
/// grow, to keep standby tasks' stores up to date.
pub trait RestoreConsumer: Send {
    /// The log start offset and the end (high watermark) of `partition`.
    fn watermarks(&mut self, partition: &TopicPartition) -> Result<(i64, i64), KafkaFailure>;

    /// Starts reading `partition` from `offset`, as far as `to` says.
    fn start(
        &mut self,
        partition: &TopicPartition,
        offset: i64,
        to: ReadTo,
    ) -> Result<(), KafkaFailure>;

    /// The end (high watermark) of `partition` as its reading last saw it, without asking the
    /// broker; `None` while unknown.
    fn fetched_end(&self, partition: &TopicPartition) -> Option<i64>;

    /// Lets `partition`, read as [`ReadTo::FollowUpTo`], be read on up to `until` (exclusive).
    fn raise_limit(&mut self, partition: &TopicPartition, until: i64) -> Result<(), KafkaFailure>;

    /// Stops (or resumes) reading every partition, those started meanwhile included.
    fn set_paused(&mut self, paused: bool) -> Result<(), KafkaFailure>;

    /// Stops reading `partition`.
    fn stop(&mut self, partition: &TopicPartition) -> Result<(), KafkaFailure>;

    /// True when no partition is being read.
    fn is_idle(&self) -> bool;

    /// How far behind the end of each partition its last poll read the reader is (0 for one
    /// it read to its end then): Kafka's restore consumer's `records-lag`. Partitions whose end
    /// it has not learnt yet are left out.
    fn lags(&self) -> BTreeMap<TopicPartition, i64>;

    /// Events of up to about `max_records` records, waiting at most `max_wait` in total. A partition
    /// that reaches its end is reported once and no longer read.
    fn poll(
        &mut self,
        max_records: usize,
        max_wait: Duration,
    ) -> Result<Vec<ChangelogEvent>, KafkaFailure>;
}
