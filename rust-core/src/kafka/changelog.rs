//! The restore consumer: reads changelog partitions from a given offset up to their end
//! (the last stable offset under `read_committed`) or up to a given offset, outside any
//! group.
//!
//! The end of a partition is learnt from librdkafka's partition-EOF event, which names the
//! partition number but not the topic. The reader therefore keeps one consumer per
//! changelog topic, so that within a consumer a partition number is unambiguous. Each
//! partition's records and end come on a queue of its own: on one queue, the end of a
//! partition with nothing to restore waited behind every record fetched for the others, and
//! its task behind their whole restoration.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::base_consumer::PartitionQueue;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientConfig;

use crate::kafka::clients::{ReadTo, RestoreConsumer};
use crate::kafka::error::{retrying_transient, KafkaFailure};
use crate::kafka::fetcher::cached_watermarks;
use crate::kafka::lists::partition_list;
use crate::kafka::queue_signal::QueueSignal;
use crate::kafka::records::RecordRun;
use crate::store::TopicPartition;

/// What a poll of the changelogs found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangelogEvent {
    /// Records to restore, of one partition.
    Records(RecordRun),
    /// The partition was read to its end; the reader stopped reading it.
    End(TopicPartition),
}

/// The changelog consumers' context. librdkafka also reports a partition's end on the
/// consumer's own queue (a partition whose queue is gone, one read to its end again), which
/// rdkafka hands over as a global error: it is none, and is not logged as one.
pub struct ChangelogContext;

impl ClientContext for ChangelogContext {
    fn error(&self, error: KafkaError, reason: &str) {
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::PartitionEOF) {
            log::trace!("a changelog partition's end on the consumer's own queue: {reason}");
        } else {
            log::error!("librdkafka: {error}: {reason}");
        }
    }
}

impl ConsumerContext for ChangelogContext {}

/// Reads changelog partitions to their end.
pub struct ChangelogReader {
    config: ClientConfig,
    timeout: Duration,
    topics: BTreeMap<String, TopicReader>,
    /// Answers offset queries, and never fetches. A broker answers one connection's requests
    /// in order, so a query sent on a reading consumer's connection waits behind its fetch's
    /// long poll (`fetch.wait.max.ms`) whenever a partition it reads has no new records.
    offsets: Option<BaseConsumer<ChangelogContext>>,
    /// Nothing is fetched: the partitions being read, and those started meanwhile, are paused.
    paused: bool,
    /// Raised when a partition's queue gets an event; a poll that found none sleeps on it.
    signal: Arc<QueueSignal>,
    /// How far behind their ends the partitions its last poll read were.
    lags: BTreeMap<TopicPartition, i64>,
}

struct TopicReader {
    consumer: Arc<BaseConsumer<ChangelogContext>>,
    /// Partition → where reading it stands.
    readings: BTreeMap<i32, Reading>,
}

/// How far a partition was read and where it ends, and the queue its records come on.
struct Reading {
    /// Next offset to read.
    next: i64,
    /// How far it is read.
    to: ReadTo,
    /// At its limit ([`ReadTo::FollowUpTo`]): paused, its next record left unread, until the
    /// limit is raised.
    held: bool,
    /// Read to its end, as the last event of its queue said: nothing is behind it. Its end
    /// (high watermark, or last stable offset) may still lie past `next`, by a transaction
    /// marker, which a consumer steps over without handing it out.
    at_end: bool,
    queue: PartitionQueue<ChangelogContext>,
}

impl Reading {
    fn reached_until(&self) -> bool {
        matches!(self.to, ReadTo::Offset(until) if self.next >= until)
    }

    /// True when reading from `next` on is to wait for the limit to be raised.
    fn at_limit(&self) -> bool {
        matches!(self.to, ReadTo::FollowUpTo(until) if self.next >= until)
    }

    /// How far behind `end`, the partition's end as last fetched (if known), reading it is.
    fn lag(&self, end: Option<i64>) -> Option<i64> {
        if self.at_end {
            return Some(0);
        }
        end.map(|end| (end - self.next).max(0))
    }
}

/// Where reading a partition's share of a poll left it.
enum Share {
    /// More may come.
    Open,
    /// Its end, or the offset it is read until, was reached.
    Ended,
    /// A record at its limit came ([`ReadTo::FollowUpTo`]), which was not read.
    AtLimit,
}

impl TopicReader {
    /// Adds `partition` of `topic` to what the consumer reads, from `offset`, paused when
    /// `paused`, and returns the queue its records and end come on, which raises `signal`.
    /// The queue is split off before the partition is assigned, so nothing of it goes to the
    /// consumer's own queue. Incremental: the partitions being read go on undisturbed. (A
    /// full reassignment stops and restarts every partition, and librdkafka 2.12 can abort
    /// the process when one is stopped again before its previous stop completed.)
    fn add(
        &self,
        topic: &str,
        partition: i32,
        offset: i64,
        paused: bool,
        signal: &Arc<QueueSignal>,
    ) -> Result<PartitionQueue<ChangelogContext>, KafkaFailure> {
        let partition = TopicPartition::new(topic, partition);
        let mut queue = self
            .consumer
            .split_partition_queue(topic, partition.partition)
            .ok_or_else(|| {
                KafkaFailure::new(
                    format!("reading changelog {partition}"),
                    KafkaError::Subscription("librdkafka has no queue for the partition".into()),
                )
            })?;
        let signal = Arc::clone(signal);
        queue.set_nonempty_callback(move || signal.notify());
        let list = partition_list([(&partition, Some(offset))]);
        self.consumer
            .incremental_assign(&list)
            .map_err(|e| KafkaFailure::new(format!("reading changelog {partition}"), e))?;
        if paused {
            self.set_paused(&list, true)?;
        }
        Ok(queue)
    }

    /// Pauses (or resumes) fetching the partitions of `list`.
    fn set_paused(&self, list: &TopicPartitionList, paused: bool) -> Result<(), KafkaFailure> {
        let paused = if paused {
            self.consumer.pause(list)
        } else {
            self.consumer.resume(list)
        };
        paused.map_err(|e| KafkaFailure::new("pausing or resuming the changelogs", e))
    }

    /// Holds `partition` of `topic` at its limit: pauses it and moves its fetch position back
    /// to the limit, so that the record found there (and what the client fetched after it) is
    /// read again once the limit is raised.
    fn hold(&mut self, topic: &str, partition: i32, timeout: Duration) -> Result<(), KafkaFailure> {
        let Some(reading) = self.readings.get_mut(&partition) else {
            return Ok(());
        };
        let ReadTo::FollowUpTo(until) = reading.to else {
            return Ok(());
        };
        reading.held = true;
        reading.next = until;
        let held = TopicPartition::new(topic, partition);
        self.set_paused(&partition_list([(&held, None)]), true)?;
        self.consumer
            .seek(topic, partition, Offset::Offset(until), timeout)
            .map_err(|e| KafkaFailure::new(format!("holding changelog {held} at {until}"), e))
    }

    /// Removes `partition` of `topic` from what the consumer reads.
    fn remove(&self, topic: &str, partition: i32) -> Result<(), KafkaFailure> {
        let partition = TopicPartition::new(topic, partition);
        let list = partition_list([(&partition, None)]);
        self.consumer
            .incremental_unassign(&list)
            .map_err(|e| KafkaFailure::new(format!("stopping changelog {partition}"), e))
    }
}

impl ChangelogReader {
    /// A reader whose consumers use `config` (partition EOF is turned on here); blocking
    /// calls give up after `timeout`.
    pub fn new(config: &ClientConfig, timeout: Duration) -> Self {
        let mut config = config.clone();
        config.set("enable.partition.eof", "true");
        config.set("enable.auto.commit", "false");
        // librdkafka refuses to fetch without a group id even for manually assigned
        // partitions; this group is never joined and never committed to.
        if config.get("group.id").is_none() {
            let client = config.get("client.id").unwrap_or("sluice").to_string();
            config.set("group.id", client);
        }
        ChangelogReader {
            config,
            timeout,
            topics: BTreeMap::new(),
            offsets: None,
            paused: false,
            signal: Arc::new(QueueSignal::default()),
            lags: BTreeMap::new(),
        }
    }

    fn offsets_client(&mut self) -> Result<&BaseConsumer<ChangelogContext>, KafkaFailure> {
        if self.offsets.is_none() {
            let consumer = self
                .config
                .create_with_context(ChangelogContext)
                .map_err(|e| KafkaFailure::new("creating the restore consumer", e))?;
            self.offsets = Some(consumer);
        }
        Ok(self.offsets.as_ref().expect("created above"))
    }

    fn topic_reader(&mut self, topic: &str) -> Result<&mut TopicReader, KafkaFailure> {
        if !self.topics.contains_key(topic) {
            let consumer = self
                .config
                .create_with_context(ChangelogContext)
                .map_err(|e| KafkaFailure::new("creating the restore consumer", e))?;
            self.topics.insert(
                topic.to_string(),
                TopicReader {
                    consumer: Arc::new(consumer),
                    readings: BTreeMap::new(),
                },
            );
        }
        Ok(self.topics.get_mut(topic).expect("inserted above"))
    }
}

impl RestoreConsumer for ChangelogReader {
    /// The log start offset and the end (high watermark) of `partition`.
    fn watermarks(&mut self, partition: &TopicPartition) -> Result<(i64, i64), KafkaFailure> {
        let timeout = self.timeout;
        let offsets = self.offsets_client()?;
        retrying_transient(timeout, |left| {
            offsets.fetch_watermarks(&partition.topic, partition.partition, left)
        })
        .map_err(|e| KafkaFailure::new(format!("reading the offsets of {partition}"), e))
    }

    /// Starts reading `partition` at `offset`, as far as `to` says: a source topic serving as
    /// a changelog is read only as far as the group committed, a standby task's changelog on
    /// and on.
    fn start(
        &mut self,
        partition: &TopicPartition,
        offset: i64,
        to: ReadTo,
    ) -> Result<(), KafkaFailure> {
        let (timeout, paused, signal) = (self.timeout, self.paused, Arc::clone(&self.signal));
        let reader = self.topic_reader(&partition.topic)?;
        if let Some(reading) = reader.readings.get_mut(&partition.partition) {
            let was_held = std::mem::replace(&mut reading.held, false);
            reading.next = offset;
            reading.at_end = false;
            reading.to = to;
            reader
                .consumer
                .seek(
                    &partition.topic,
                    partition.partition,
                    Offset::Offset(offset),
                    timeout,
                )
                .map_err(|e| KafkaFailure::new(format!("rewinding changelog {partition}"), e))?;
            if was_held && !paused {
                reader.set_paused(&partition_list([(partition, None)]), false)?;
            }
        } else {
            let queue = reader.add(
                &partition.topic,
                partition.partition,
                offset,
                paused,
                &signal,
            )?;
            let reading = Reading {
                next: offset,
                to,
                held: false,
                at_end: false,
                queue,
            };
            reader.readings.insert(partition.partition, reading);
        }
        let starts_at_limit = reader.readings[&partition.partition].at_limit();
        if starts_at_limit {
            reader.hold(&partition.topic, partition.partition, timeout)?;
        }
        Ok(())
    }

    fn raise_limit(&mut self, partition: &TopicPartition, until: i64) -> Result<(), KafkaFailure> {
        let paused = self.paused;
        let Some(reader) = self.topics.get_mut(&partition.topic) else {
            return Ok(());
        };
        let Some(reading) = reader.readings.get_mut(&partition.partition) else {
            return Ok(());
        };
        let ReadTo::FollowUpTo(limit) = reading.to else {
            return Ok(());
        };
        reading.to = ReadTo::FollowUpTo(limit.max(until));
        if reading.held && !reading.at_limit() {
            reading.held = false;
            if !paused {
                reader.set_paused(&partition_list([(partition, None)]), false)?;
            }
        }
        Ok(())
    }

    /// Stops fetching every partition being read, and those started from now on, until
    /// called with `paused` false.
    fn set_paused(&mut self, paused: bool) -> Result<(), KafkaFailure> {
        self.paused = paused;
        for (topic, reader) in &self.topics {
            // A partition held at its limit stays paused when the others resume.
            let partitions: Vec<TopicPartition> = reader
                .readings
                .iter()
                .filter(|(_, reading)| paused || !reading.held)
                .map(|(partition, _)| TopicPartition::new(topic.clone(), *partition))
                .collect();
            if !partitions.is_empty() {
                reader.set_paused(
                    &partition_list(partitions.iter().map(|p| (p, None))),
                    paused,
                )?;
            }
        }
        Ok(())
    }

    /// Stops reading `partition` (finished, or its task went away).
    fn stop(&mut self, partition: &TopicPartition) -> Result<(), KafkaFailure> {
        let Some(reader) = self.topics.get_mut(&partition.topic) else {
            return Ok(());
        };
        if reader.readings.remove(&partition.partition).is_some() {
            reader.remove(&partition.topic, partition.partition)?;
        }
        Ok(())
    }

    fn fetched_end(&self, partition: &TopicPartition) -> Option<i64> {
        let reader = self.topics.get(&partition.topic)?;
        cached_watermarks(reader.consumer.client(), partition).map(|(_, end)| end)
    }

    /// True when no partition is being read.
    fn is_idle(&self) -> bool {
        self.topics.values().all(|r| r.readings.is_empty())
    }

    fn lags(&self) -> BTreeMap<TopicPartition, i64> {
        self.lags.clone()
    }

    /// Events of up to about `max_records` records, waiting at most `max_wait` in total. A partition
    /// that reaches its end (or the offset it is read until) is reported once and no longer
    /// read. Every partition being read gets its share of `max_records`, so the end of one
    /// never waits behind another's records.
    fn poll(
        &mut self,
        max_records: usize,
        max_wait: Duration,
    ) -> Result<Vec<ChangelogEvent>, KafkaFailure> {
        let deadline = Instant::now() + max_wait;
        let timeout = self.timeout;
        let reading: usize = self.topics.values().map(|r| r.readings.len()).sum();
        let share = (max_records / reading.max(1)).max(1);
        loop {
            let mut events = Vec::new();
            let mut ended = Vec::new();
            for (topic, reader) in &mut self.topics {
                // The consumer's own queue carries only its errors: the partitions' queues
                // were split off before they were assigned.
                if let Some(Err(error)) = reader.consumer.poll(Duration::ZERO) {
                    return Err(KafkaFailure::new(
                        format!("reading changelog {topic}"),
                        error,
                    ));
                }
                let mut at_limit = Vec::new();
                for (&partition, reading) in &mut reader.readings {
                    if reading.held {
                        continue;
                    }
                    match read_share(topic, partition, reading, share, &mut events)? {
                        Share::Open => {}
                        Share::Ended => ended.push(TopicPartition::new(topic.clone(), partition)),
                        Share::AtLimit => at_limit.push(partition),
                    }
                }
                for partition in at_limit {
                    reader.hold(topic, partition, timeout)?;
                }
            }
            let now = Instant::now();
            let done = !events.is_empty() || !ended.is_empty() || now >= deadline;
            if done {
                self.lags = self.reading_lags();
                // A partition read to its end is not behind it.
                self.lags
                    .extend(ended.iter().map(|partition| (partition.clone(), 0)));
            }
            for partition in &ended {
                events.push(ChangelogEvent::End(partition.clone()));
                if let Some(reader) = self.topics.get_mut(&partition.topic) {
                    reader.readings.remove(&partition.partition);
                    reader.remove(&partition.topic, partition.partition)?;
                }
            }
            if done {
                return Ok(events);
            }
            self.signal.wait(deadline - now);
        }
    }
}

impl ChangelogReader {
    /// How far behind its end each partition being read is, where its end is known.
    fn reading_lags(&self) -> BTreeMap<TopicPartition, i64> {
        let mut lags = BTreeMap::new();
        for (topic, reader) in &self.topics {
            for (&partition, reading) in &reader.readings {
                let partition = TopicPartition::new(topic.clone(), partition);
                let end =
                    cached_watermarks(reader.consumer.client(), &partition).map(|(_, end)| end);
                if let Some(lag) = reading.lag(end) {
                    lags.insert(partition, lag);
                }
            }
        }
        lags
    }
}

/// Reads up to `share` records of `partition` from its queue into `events`, without waiting.
fn read_share(
    topic: &str,
    partition: i32,
    reading: &mut Reading,
    share: usize,
    events: &mut Vec<ChangelogEvent>,
) -> Result<Share, KafkaFailure> {
    for _ in 0..share {
        match reading.queue.poll(Duration::ZERO) {
            None => return Ok(Share::Open),
            Some(Ok(message)) => match reading.to {
                // Past the limit (a transaction marker was the last offset before it): the
                // partition ended without this record.
                ReadTo::Offset(until) if message.offset() >= until => return Ok(Share::Ended),
                ReadTo::FollowUpTo(until) if message.offset() >= until => {
                    return Ok(Share::AtLimit)
                }
                _ => {
                    reading.next = message.offset() + 1;
                    reading.at_end = false;
                    push_event(events, topic, &message);
                    if reading.reached_until() {
                        return Ok(Share::Ended);
                    }
                }
            },
            // A followed partition is at its end only until its next record.
            Some(Err(KafkaError::PartitionEOF(_))) if reading.to.follows() => {
                reading.at_end = true;
                return Ok(Share::Open);
            }
            Some(Err(KafkaError::PartitionEOF(_))) => return Ok(Share::Ended),
            Some(Err(error)) => {
                return Err(KafkaFailure::new(
                    format!("reading changelog {topic}-{partition}"),
                    error,
                ))
            }
        }
    }
    Ok(Share::Open)
}

/// Appends `message` of `topic` to the last event when that holds records of its partition,
/// otherwise as a new event after it: the events keep the order of reading.
fn push_event(events: &mut Vec<ChangelogEvent>, topic: &str, message: &BorrowedMessage<'_>) {
    let partition = message.partition();
    match events.last_mut() {
        Some(ChangelogEvent::Records(run))
            if run.partition.partition == partition && run.partition.topic == topic =>
        {
            run.push_message(message);
        }
        _ => {
            let mut run = RecordRun::new(TopicPartition::new(topic, partition));
            run.push_message(message);
            events.push(ChangelogEvent::Records(run));
        }
    }
}
