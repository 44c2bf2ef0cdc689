//! The partition fetcher on rdkafka: a consumer that never joins the group and reads the
//! partitions it is assigned, from the group's committed offsets (librdkafka reads them when a
//! partition is assigned, under exactly-once waiting for offsets of open transactions, as its
//! isolation level asks). The engine reads committed offsets through the group's member, which
//! knows the group's coordinator: after a broker outage this consumer's own coordinator lookup
//! was seen never to answer again.
//!
//! librdkafka keeps `auto.offset.reset` per topic: a topic with a reset policy of its own
//! gets a topic handle made with that policy before its partitions are first assigned, which
//! the consumer then uses for them, both when they have no committed offset and when it is
//! out of range.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rdkafka::bindings as native;
use rdkafka::client::{Client, ClientContext};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::topic_partition_list::Offset;
use rdkafka::ClientConfig;

use crate::kafka::clients::{OffsetReset, PartitionFetcher};
use crate::kafka::error::KafkaFailure;
use crate::kafka::lists::{partition_list, partitions_of};
use crate::kafka::records::{push_to_runs, RecordRun};
use crate::store::TopicPartition;

/// Fetches what it is assigned; commits nothing.
pub struct KafkaPartitionFetcher {
    consumer: BaseConsumer,
    /// The topic handles that give topics a reset policy of their own, by topic. They live
    /// as long as the consumer but must be given back before its client is destroyed, which
    /// this type's drop sees to.
    reset_topics: Mutex<BTreeMap<String, ResetTopic>>,
    /// How long a blocking call waits for the broker.
    timeout: Duration,
}

impl KafkaPartitionFetcher {
    /// A fetcher with `config` (which names the group whose committed offsets it starts from);
    /// blocking calls wait up to `timeout`.
    pub fn new(config: &ClientConfig, timeout: Duration) -> Result<Self, KafkaFailure> {
        let consumer = config
            .create()
            .map_err(|e| KafkaFailure::new("creating the partition fetcher", e))?;
        Ok(KafkaPartitionFetcher {
            consumer,
            reset_topics: Mutex::new(BTreeMap::new()),
            timeout,
        })
    }

    fn reset_topics(&self) -> MutexGuard<'_, BTreeMap<String, ResetTopic>> {
        self.reset_topics.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for KafkaPartitionFetcher {
    fn drop(&mut self) {
        // librdkafka wants every topic handle given back before its client is destroyed.
        self.reset_topics().clear();
    }
}

/// Up to `max` records of what `consumer` fetched, by partition: waits up to `wait` for the
/// first, then takes what is already there. An error is returned when it comes first, else it
/// ends the batch.
pub fn poll_runs<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    max: usize,
    wait: Duration,
    context: &str,
) -> Result<Vec<RecordRun>, KafkaFailure> {
    let mut runs = Vec::new();
    let mut timeout = wait;
    for polled in 0..max {
        match consumer.poll(timeout) {
            None => break,
            Some(Ok(message)) => push_to_runs(&mut runs, &message),
            Some(Err(error)) if polled == 0 => return Err(KafkaFailure::new(context, error)),
            Some(Err(_)) => break,
        }
        timeout = Duration::ZERO;
    }
    Ok(runs)
}

/// A librdkafka topic handle whose topic configuration is the consumer's own but for
/// `auto.offset.reset`; the consumer's partitions of that topic use it.
struct ResetTopic(NonNull<native::rd_kafka_topic_t>);

// SAFETY: librdkafka topic handles may be used and given back from any thread; this one is
// only held, and given back once.
unsafe impl Send for ResetTopic {}
// SAFETY: as above; nothing is done through a shared reference.
unsafe impl Sync for ResetTopic {}

impl ResetTopic {
    fn new(consumer: &BaseConsumer, topic: &str, reset: OffsetReset) -> Result<Self, KafkaFailure> {
        let context = || format!("giving {topic} its own auto.offset.reset");
        let invalid = |_| {
            KafkaFailure::new(
                context(),
                KafkaError::ClientCreation("topic name with a NUL byte".into()),
            )
        };
        let name = CString::new(topic).map_err(invalid)?;
        let value = match reset {
            OffsetReset::Earliest | OffsetReset::ByDuration(_) => c"earliest",
            OffsetReset::Latest => c"latest",
            OffsetReset::None => c"error",
        };
        let client = consumer.client().native_ptr();
        let mut reason = [0 as c_char; 256];
        // SAFETY: the client pointer is live while `consumer` is; the configuration is a copy
        // this function owns until `rd_kafka_topic_new` takes it (it does, whether it succeeds
        // or not), and is destroyed here if setting the value fails; the strings are valid C
        // strings, and librdkafka writes at most `reason.len()` bytes, NUL included.
        let handle = unsafe {
            let conf = native::rd_kafka_default_topic_conf_dup(client);
            let set = native::rd_kafka_topic_conf_set(
                conf,
                c"auto.offset.reset".as_ptr(),
                value.as_ptr(),
                reason.as_mut_ptr(),
                reason.len(),
            );
            if set != native::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK {
                native::rd_kafka_topic_conf_destroy(conf);
                let reason = CStr::from_ptr(reason.as_ptr())
                    .to_string_lossy()
                    .into_owned();
                return Err(KafkaFailure::new(
                    context(),
                    KafkaError::ClientCreation(reason),
                ));
            }
            native::rd_kafka_topic_new(client, name.as_ptr(), conf)
        };
        NonNull::new(handle).map(ResetTopic).ok_or_else(|| {
            KafkaFailure::new(
                context(),
                KafkaError::ClientCreation(RDKafkaErrorCode::InvalidTopic.to_string()),
            )
        })
    }
}

impl Drop for ResetTopic {
    fn drop(&mut self) {
        // SAFETY: the handle came from `rd_kafka_topic_new` and is given back once, before
        // its client is destroyed (`KafkaPartitionFetcher` drops its topics first).
        unsafe { native::rd_kafka_topic_destroy(self.0.as_ptr()) }
    }
}

impl PartitionFetcher for KafkaPartitionFetcher {
    fn assign(
        &self,
        partitions: &[TopicPartition],
        offset_resets: &BTreeMap<String, OffsetReset>,
    ) -> Result<(), KafkaFailure> {
        {
            // A topic's handle must exist before the consumer first reads the topic.
            let mut reset_topics = self.reset_topics();
            for partition in partitions {
                let topic = &partition.topic;
                if let Some(reset) = offset_resets.get(topic) {
                    if !reset_topics.contains_key(topic) {
                        let handle = ResetTopic::new(&self.consumer, topic, *reset)?;
                        reset_topics.insert(topic.clone(), handle);
                    }
                }
            }
        }
        // No offset: librdkafka starts from the group's committed offset, else resets.
        self.consumer
            .incremental_assign(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("assigning {partitions:?}"), e))
    }

    fn unassign(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        // librdkafka refuses the whole list, and logs a warning, when one of them is not assigned.
        let assigned = self.assigned_partitions()?;
        let fetched: Vec<&TopicPartition> = partitions
            .iter()
            .filter(|partition| assigned.contains(partition))
            .collect();
        if fetched.is_empty() {
            return Ok(());
        }
        self.consumer
            .incremental_unassign(&partition_list(fetched.into_iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("unassigning {partitions:?}"), e))
    }

    fn assigned_partitions(&self) -> Result<Vec<TopicPartition>, KafkaFailure> {
        let list = self
            .consumer
            .assignment()
            .map_err(|e| KafkaFailure::new("reading the assignment", e))?;
        Ok(partitions_of(&list))
    }

    fn poll_records(&self, max: usize, wait: Duration) -> Result<Vec<RecordRun>, KafkaFailure> {
        poll_runs(&self.consumer, max, wait, "polling the source topics")
    }

    fn pause_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        self.consumer
            .pause(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("pausing {partitions:?}"), e))
    }

    fn resume_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        self.consumer
            .resume(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("resuming {partitions:?}"), e))
    }

    fn seek_to(&self, partition: &TopicPartition, offset: Option<i64>) -> Result<(), KafkaFailure> {
        let offset = offset.map_or(Offset::Beginning, Offset::Offset);
        self.consumer
            .seek(&partition.topic, partition.partition, offset, self.timeout)
            .map_err(|e| KafkaFailure::new(format!("rewinding {partition}"), e))
    }

    fn next_offsets(&self, partitions: &[TopicPartition]) -> BTreeMap<TopicPartition, i64> {
        // rdkafka's `position()` asks the consumer's thread for the assignment first, a round
        // trip between threads on every call; the positions alone are read where they are kept.
        let list = partition_list(partitions.iter().map(|p| (p, None)));
        // SAFETY: the client pointer is live for as long as `self` and the list is owned here;
        // librdkafka only writes the list's offsets (unassigned partitions get an error code).
        let error =
            unsafe { native::rd_kafka_position(self.consumer.client().native_ptr(), list.ptr()) };
        if error != native::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return BTreeMap::new();
        }
        list.elements()
            .iter()
            .filter_map(|element| match element.offset() {
                Offset::Offset(offset) => Some((
                    TopicPartition::new(element.topic(), element.partition()),
                    offset,
                )),
                _ => None,
            })
            .collect()
    }

    fn fetched_watermarks(&self, partition: &TopicPartition) -> Option<(i64, i64)> {
        cached_watermarks(self.consumer.client(), partition)
    }

    fn offset_for_time(
        &self,
        partition: &TopicPartition,
        timestamp_ms: i64,
    ) -> Result<i64, KafkaFailure> {
        let context = || format!("finding the offset of {partition} at {timestamp_ms} ms");
        let asked = partition_list([(partition, Some(timestamp_ms))]);
        let found = self
            .consumer
            .offsets_for_times(asked, self.timeout)
            .map_err(|e| KafkaFailure::new(context(), e))?;
        let offset = found
            .find_partition(&partition.topic, partition.partition)
            .map(|element| element.offset());
        match offset {
            Some(Offset::Offset(offset)) => Ok(offset),
            _ => {
                let (_, high) = self
                    .consumer
                    .fetch_watermarks(&partition.topic, partition.partition, self.timeout)
                    .map_err(|e| KafkaFailure::new(context(), e))?;
                Ok(high)
            }
        }
    }

    fn missing_topics(&self, topics: &[String]) -> Result<Vec<String>, KafkaFailure> {
        let mut missing = Vec::new();
        for topic in topics {
            let metadata = self
                .consumer
                .fetch_metadata(Some(topic.as_str()), self.timeout)
                .map_err(|e| KafkaFailure::new(format!("fetching the metadata of {topic}"), e))?;
            let exists = metadata
                .topics()
                .iter()
                .any(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty());
            if !exists {
                missing.push(topic.clone());
            }
        }
        Ok(missing)
    }
}

/// The log start and end of `partition` as `client`'s last fetch of it saw them, without
/// asking the broker; `None` while unknown.
pub(super) fn cached_watermarks<C: ClientContext>(
    client: &Client<C>,
    partition: &TopicPartition,
) -> Option<(i64, i64)> {
    let topic = CString::new(partition.topic.as_str()).ok()?;
    let (mut low, mut high) = (-1i64, -1i64);
    // SAFETY: the client pointer is live for as long as `client`, the topic a valid C string,
    // and librdkafka only writes the two offsets; it reads its cached fetch state, no I/O.
    let error = unsafe {
        native::rd_kafka_get_watermark_offsets(
            client.native_ptr(),
            topic.as_ptr(),
            partition.partition,
            &mut low,
            &mut high,
        )
    };
    (error == native::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && low >= 0 && high >= 0)
        .then_some((low, high))
}
