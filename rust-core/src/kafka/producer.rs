//! The producer of an engine thread: transactional under exactly-once, plain under
//! at-least-once. Delivery reports tell where each record landed, which is how a commit
//! learns the changelog offsets its stores must record, and which records failed: those
//! are kept, with the id the caller sent them under, for the caller to decide about.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::consumer::ConsumerGroupMetadata;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::topic_partition_list::TopicPartitionList;
use rdkafka::{ClientConfig, ClientContext};

use crate::kafka::error::TransactionFailure;
use crate::kafka::records::{copied_headers, ProducedRecord};
use crate::store::TopicPartition;

/// The offset of the last record delivered to each partition since the last commit.
pub type DeliveredOffsets = BTreeMap<TopicPartition, i64>;

/// Serving delivery reports this often keeps their queue short between commits.
const SENDS_PER_POLL: u32 = 256;
/// How long one wait for delivery reports lasts while flushing.
const FLUSH_SLICE: Duration = Duration::from_millis(1);

/// Collects delivery reports until the next commit reads them.
#[derive(Default)]
pub struct DeliveryTracker {
    state: Mutex<Deliveries>,
}

/// A record the producer could not write.
#[derive(Debug)]
pub struct FailedSend {
    /// The id it was sent under.
    pub id: usize,
    /// The record, as it was to be written.
    pub record: ProducedRecord,
    /// Why it was not.
    pub error: KafkaError,
}

#[derive(Default)]
struct Deliveries {
    last_offsets: DeliveredOffsets,
    failed: Vec<FailedSend>,
}

impl DeliveryTracker {
    fn lock(&self) -> std::sync::MutexGuard<'_, Deliveries> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take(&self) -> Deliveries {
        std::mem::take(&mut *self.lock())
    }
}

impl ClientContext for DeliveryTracker {}

impl ProducerContext for DeliveryTracker {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, id: usize) {
        let mut state = self.lock();
        match result {
            Ok(message) => {
                let partition = TopicPartition::new(message.topic(), message.partition());
                let offset = state
                    .last_offsets
                    .entry(partition)
                    .or_insert(message.offset());
                *offset = (*offset).max(message.offset());
            }
            Err((error, message)) => {
                let headers = copied_headers(message);
                let record = ProducedRecord {
                    topic: message.topic().to_string(),
                    partition: Some(message.partition()).filter(|p| *p >= 0),
                    key: message.key().map(<[u8]>::to_vec),
                    value: message.payload().map(<[u8]>::to_vec),
                    timestamp: message.timestamp().to_millis().unwrap_or(-1),
                    headers,
                };
                state.failed.push(FailedSend {
                    id,
                    record,
                    error: error.clone(),
                });
            }
        }
    }
}

/// Errors the producer returns for one record while queueing it, which leave the producer
/// and its transaction as they were: the record's own failure, as a delivery report would
/// tell it.
fn rejects_only_the_record(error: &KafkaError) -> bool {
    matches!(
        error,
        KafkaError::MessageProduction(
            RDKafkaErrorCode::MessageSizeTooLarge
                | RDKafkaErrorCode::UnknownPartition
                | RDKafkaErrorCode::UnknownTopic
                | RDKafkaErrorCode::UnknownTopicOrPartition
        )
    )
}

/// One engine thread's producer.
pub struct StreamsProducer {
    producer: BaseProducer<DeliveryTracker>,
    transactional: bool,
    in_transaction: bool,
    sends_since_poll: u32,
    timeout: Duration,
}

impl StreamsProducer {
    /// Creates the producer; with a `transactional.id` in `config` it is transactional and
    /// `init_transactions` fences older producers with that id and aborts their open
    /// transaction.
    pub fn new(config: &ClientConfig, timeout: Duration) -> Result<Self, TransactionFailure> {
        let transactional = config.get("transactional.id").is_some();
        let producer: BaseProducer<DeliveryTracker> = config
            .create_with_context(DeliveryTracker::default())
            .map_err(TransactionFailure::Fatal)?;
        if transactional {
            producer
                .init_transactions(timeout)
                .map_err(TransactionFailure::classify)?;
        }
        Ok(StreamsProducer {
            producer,
            transactional,
            in_transaction: false,
            sends_since_poll: 0,
            timeout,
        })
    }

    /// True for an exactly-once producer.
    pub fn is_transactional(&self) -> bool {
        self.transactional
    }

    /// Queues `record` under `id`, beginning a transaction first if none is open. Waits
    /// while librdkafka's queue is full. A record the producer rejects at once is kept as
    /// failed, as one that fails later is.
    pub fn send(&mut self, record: &ProducedRecord, id: usize) -> Result<(), TransactionFailure> {
        self.begin_if_needed()?;
        let mut base: BaseRecord<'_, [u8], [u8], usize> =
            BaseRecord::with_opaque_to(&record.topic, id);
        if let Some(partition) = record.partition {
            base = base.partition(partition);
        }
        if let Some(key) = &record.key {
            base = base.key(key.as_slice());
        }
        if let Some(value) = &record.value {
            base = base.payload(value.as_slice());
        }
        if record.timestamp >= 0 {
            base = base.timestamp(record.timestamp);
        }
        if let Some(headers) = record.rdkafka_headers() {
            base = base.headers(headers);
        }
        loop {
            match self.producer.send(base) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), returned)) => {
                    self.producer.poll(Duration::from_millis(10));
                    base = returned;
                }
                Err((error, _)) if rejects_only_the_record(&error) => {
                    self.producer.context().lock().failed.push(FailedSend {
                        id,
                        record: record.clone(),
                        error,
                    });
                    return Ok(());
                }
                Err((error, _)) => return Err(TransactionFailure::classify(error)),
            }
        }
        self.sends_since_poll += 1;
        if self.sends_since_poll >= SENDS_PER_POLL {
            self.sends_since_poll = 0;
            self.producer.poll(Duration::ZERO);
        }
        Ok(())
    }

    /// The records that failed since the last call, in the order their failures came.
    pub fn take_failed(&self) -> Vec<FailedSend> {
        std::mem::take(&mut self.producer.context().lock().failed)
    }

    /// Makes everything sent since the last commit durable and returns where it landed.
    /// A failed record left untaken fails the commit.
    ///
    /// Exactly-once: commits the transaction with `consumed` (next offsets to read) as the
    /// group's offsets, fenced by `group`'s generation. At-least-once: flushes only; the
    /// caller commits `consumed` through the consumer.
    pub fn commit(
        &mut self,
        consumed: &TopicPartitionList,
        group: Option<&ConsumerGroupMetadata>,
    ) -> Result<DeliveredOffsets, TransactionFailure> {
        self.flush()?;
        let deliveries = self.producer.context().take();
        if let Some(failed) = deliveries.failed.into_iter().next() {
            return Err(TransactionFailure::classify(failed.error));
        }
        if self.transactional && (self.in_transaction || consumed.count() > 0) {
            self.begin_if_needed()?;
            if consumed.count() > 0 {
                // Without group metadata the consumer is not a member: the offsets are not
                // this thread's to commit.
                let group = group.ok_or_else(|| {
                    TransactionFailure::classify(KafkaError::ConsumerCommit(
                        RDKafkaErrorCode::UnknownMemberId,
                    ))
                })?;
                self.producer
                    .send_offsets_to_transaction(consumed, group, self.timeout)
                    .map_err(TransactionFailure::classify)?;
            }
            self.producer
                .commit_transaction(self.timeout)
                .map_err(TransactionFailure::classify)?;
            self.in_transaction = false;
        }
        Ok(deliveries.last_offsets)
    }

    /// Aborts the open transaction, if any, and forgets what was sent in it.
    pub fn abort(&mut self) -> Result<(), TransactionFailure> {
        if self.transactional && self.in_transaction {
            self.producer
                .abort_transaction(self.timeout)
                .map_err(TransactionFailure::classify)?;
            self.in_transaction = false;
        }
        // Reports of purged records arrive as errors; they belong to the aborted work.
        self.producer.poll(Duration::ZERO);
        self.producer.context().take();
        Ok(())
    }

    /// Waits until every sent record is acknowledged and its delivery report served.
    /// Failed records are kept for [`take_failed`](Self::take_failed).
    ///
    /// rdkafka's own `flush` serves reports in 100 ms slices that always run to their end,
    /// which would put a 100 ms floor under every commit (Kafka Streams' whole commit
    /// interval under exactly-once); short slices end the wait within a millisecond.
    pub fn flush(&self) -> Result<(), TransactionFailure> {
        let deadline = Instant::now() + self.timeout;
        while self.producer.in_flight_count() > 0 {
            if Instant::now() >= deadline {
                return Err(TransactionFailure::classify(KafkaError::Flush(
                    RDKafkaErrorCode::OperationTimedOut,
                )));
            }
            self.producer.poll(FLUSH_SLICE);
        }
        Ok(())
    }

    fn begin_if_needed(&mut self) -> Result<(), TransactionFailure> {
        if self.transactional && !self.in_transaction {
            self.producer
                .begin_transaction()
                .map_err(TransactionFailure::classify)?;
            self.in_transaction = true;
        }
        Ok(())
    }
}
