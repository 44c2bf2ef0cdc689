//! The group consumer on rdkafka: subscribes to the source topics in group
//! `application.id` and reports assignment changes to a [`RebalanceListener`] while they
//! happen.
//!
//! The callbacks run inside [`BaseConsumer::poll`], on the polling thread, before
//! librdkafka applies the change: on revocation the listener can still commit the
//! partitions it is losing, with the group generation that owns them.
//!
//! librdkafka keeps `auto.offset.reset` per topic: a topic with a reset policy of its own
//! gets a topic handle made with that policy before the consumer subscribes, which the
//! consumer then uses for the topic's partitions, both when they have no committed offset
//! and when it is out of range.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rdkafka::bindings as native;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::{ClientConfig, ClientContext};

use crate::kafka::clients::{
    GroupMember, GroupMetadata, OffsetReset, PartitionFetcher, RebalanceListener, Subscription,
};
use crate::kafka::error::{ClientError, KafkaFailure};
use crate::kafka::group_metadata::NativeGroupMetadata;
use crate::kafka::records::{push_to_runs, InputOffset, RecordRun};
use crate::store::TopicPartition;

/// The consumer context that forwards rebalances to a [`RebalanceListener`], and remembers
/// what a rejoin subscribes to again.
pub struct GroupContext {
    listener: Arc<dyn RebalanceListener>,
    subscribed: Mutex<Subscribed>,
    /// How long a blocking call waits for the group coordinator.
    timeout: Duration,
}

/// What a group consumer is subscribed to.
#[derive(Default)]
struct Subscribed {
    topics: Vec<String>,
    /// The topic handles that give topics a reset policy of their own, by topic. They live
    /// as long as the consumer but must be given back before its client is destroyed, which
    /// [`KafkaGroupConsumer`]'s drop sees to.
    reset_topics: BTreeMap<String, ResetTopic>,
}

impl GroupContext {
    fn subscribed(&self) -> MutexGuard<'_, Subscribed> {
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The rdkafka consumer of a [`KafkaGroupConsumer`], which its rebalance callbacks are given.
pub type BaseGroupConsumer = BaseConsumer<GroupContext>;

/// A group consumer whose rebalances reach its [`RebalanceListener`].
pub struct KafkaGroupConsumer {
    consumer: BaseGroupConsumer,
}

impl Drop for KafkaGroupConsumer {
    fn drop(&mut self) {
        // librdkafka wants every topic handle given back before its client is destroyed.
        self.consumer.context().subscribed().reset_topics.clear();
    }
}

/// What [`GroupConsumer`] is implemented on: the [`KafkaGroupConsumer`], and the rdkafka
/// consumer under it, as the rebalance callbacks hand it to the listener.
pub trait OnRdkafka {
    /// The rdkafka consumer.
    fn rdkafka(&self) -> &BaseGroupConsumer;
}

impl OnRdkafka for BaseGroupConsumer {
    fn rdkafka(&self) -> &BaseGroupConsumer {
        self
    }
}

impl OnRdkafka for KafkaGroupConsumer {
    fn rdkafka(&self) -> &BaseGroupConsumer {
        &self.consumer
    }
}

impl ClientContext for GroupContext {}

impl ConsumerContext for GroupContext {
    fn pre_rebalance(&self, consumer: &BaseGroupConsumer, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
            self.listener.partitions_revoked(
                consumer,
                &partitions_of(list),
                consumer.assignment_lost(),
            );
        }
    }

    fn post_rebalance(&self, consumer: &BaseGroupConsumer, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            self.listener
                .partitions_assigned(consumer, &partitions_of(list));
        }
    }
}

/// Creates a consumer with `config` reporting to `listener`, subscribed as `subscription`
/// says; blocking calls wait up to `timeout`.
pub fn subscribe(
    config: &ClientConfig,
    listener: Arc<dyn RebalanceListener>,
    subscription: &Subscription,
    timeout: Duration,
) -> Result<KafkaGroupConsumer, KafkaFailure> {
    let context = GroupContext {
        listener,
        subscribed: Mutex::new(Subscribed::default()),
        timeout,
    };
    let consumer: BaseGroupConsumer = config
        .create_with_context(context)
        .map_err(|e| KafkaFailure::new("creating the group consumer", e))?;
    let group = KafkaGroupConsumer { consumer };
    group.resubscribe(subscription)?;
    Ok(group)
}

fn topic_names(topics: &[String]) -> Vec<&str> {
    topics.iter().map(String::as_str).collect()
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
    fn new(
        consumer: &BaseGroupConsumer,
        topic: &str,
        reset: OffsetReset,
    ) -> Result<Self, KafkaFailure> {
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
        // its client is destroyed (`KafkaGroupConsumer` drops its topics first).
        unsafe { native::rd_kafka_topic_destroy(self.0.as_ptr()) }
    }
}

impl<T: OnRdkafka> PartitionFetcher for T {
    fn poll_records(&self, max: usize, wait: Duration) -> Result<Vec<RecordRun>, KafkaFailure> {
        let mut runs = Vec::new();
        let mut timeout = wait;
        for polled in 0..max {
            match self.rdkafka().poll(timeout) {
                None => break,
                Some(Ok(message)) => push_to_runs(&mut runs, &message),
                Some(Err(error)) if polled == 0 => {
                    return Err(KafkaFailure::new("polling the source topics", error))
                }
                Some(Err(_)) => break,
            }
            timeout = Duration::ZERO;
        }
        Ok(runs)
    }

    fn pause_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        self.rdkafka()
            .pause(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("pausing {partitions:?}"), e))
    }

    fn resume_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        self.rdkafka()
            .resume(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("resuming {partitions:?}"), e))
    }

    fn seek_to(&self, partition: &TopicPartition, offset: Option<i64>) -> Result<(), KafkaFailure> {
        let offset = offset.map_or(Offset::Beginning, Offset::Offset);
        let consumer = self.rdkafka();
        consumer
            .seek(
                &partition.topic,
                partition.partition,
                offset,
                consumer.context().timeout,
            )
            .map_err(|e| KafkaFailure::new(format!("rewinding {partition}"), e))
    }

    fn next_offsets(&self, partitions: &[TopicPartition]) -> BTreeMap<TopicPartition, i64> {
        // rdkafka's `position()` asks the group thread for the assignment first, a round trip
        // between threads on every call; the positions alone are read where they are kept.
        let list = partition_list(partitions.iter().map(|p| (p, None)));
        // SAFETY: the client pointer is live for as long as `self` and the list is owned here;
        // librdkafka only writes the list's offsets (unassigned partitions get an error code).
        let error = unsafe {
            rdkafka::bindings::rd_kafka_position(self.rdkafka().client().native_ptr(), list.ptr())
        };
        if error != rdkafka::bindings::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
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
        let topic = std::ffi::CString::new(partition.topic.as_str()).ok()?;
        let (mut low, mut high) = (-1i64, -1i64);
        // SAFETY: the client pointer is live for as long as `self`, the topic a valid C string,
        // and librdkafka only writes the two offsets; it reads its cached fetch state, no I/O.
        let error = unsafe {
            rdkafka::bindings::rd_kafka_get_watermark_offsets(
                self.rdkafka().client().native_ptr(),
                topic.as_ptr(),
                partition.partition,
                &mut low,
                &mut high,
            )
        };
        (error == rdkafka::bindings::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
            && low >= 0
            && high >= 0)
            .then_some((low, high))
    }

    fn offset_for_time(
        &self,
        partition: &TopicPartition,
        timestamp_ms: i64,
    ) -> Result<i64, KafkaFailure> {
        let consumer = self.rdkafka();
        let timeout = consumer.context().timeout;
        let context = || format!("finding the offset of {partition} at {timestamp_ms} ms");
        let asked = partition_list([(partition, Some(timestamp_ms))]);
        let found = consumer
            .offsets_for_times(asked, timeout)
            .map_err(|e| KafkaFailure::new(context(), e))?;
        let offset = found
            .find_partition(&partition.topic, partition.partition)
            .map(|element| element.offset());
        match offset {
            Some(Offset::Offset(offset)) => Ok(offset),
            _ => {
                let (_, high) = consumer
                    .fetch_watermarks(&partition.topic, partition.partition, timeout)
                    .map_err(|e| KafkaFailure::new(context(), e))?;
                Ok(high)
            }
        }
    }

    fn missing_topics(&self, topics: &[String]) -> Result<Vec<String>, KafkaFailure> {
        let consumer = self.rdkafka();
        let mut missing = Vec::new();
        for topic in topics {
            let metadata = consumer
                .fetch_metadata(Some(topic.as_str()), consumer.context().timeout)
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

impl<T: OnRdkafka> GroupMember for T {
    fn rejoin(&self) -> Result<(), KafkaFailure> {
        let consumer = self.rdkafka();
        consumer.unsubscribe();
        consumer
            .subscribe(&topic_names(&consumer.context().subscribed().topics))
            .map_err(|e| KafkaFailure::new("rejoining the group", e))
    }

    fn resubscribe(&self, subscription: &Subscription) -> Result<(), KafkaFailure> {
        let consumer = self.rdkafka();
        let mut subscribed = consumer.context().subscribed();
        // A topic's handle must exist before the consumer first reads the topic.
        for (topic, reset) in &subscription.offset_resets {
            if !subscribed.reset_topics.contains_key(topic) {
                let handle = ResetTopic::new(consumer, topic, *reset)?;
                subscribed.reset_topics.insert(topic.clone(), handle);
            }
        }
        let topics = &subscription.topics;
        consumer
            .subscribe(&topic_names(topics))
            .map_err(|e| KafkaFailure::new(format!("subscribing to {topics:?}"), e))?;
        subscribed.topics = topics.clone();
        Ok(())
    }

    fn assigned_partitions(&self) -> Result<Vec<TopicPartition>, KafkaFailure> {
        let list = self
            .rdkafka()
            .assignment()
            .map_err(|e| KafkaFailure::new("reading the assignment", e))?;
        Ok(partitions_of(&list))
    }

    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
        let consumer = self.rdkafka();
        let list = partition_list(partitions.iter().map(|p| (p, None)));
        let committed = Consumer::committed_offsets(consumer, list, consumer.context().timeout)
            .map_err(|e| KafkaFailure::new("reading committed offsets", e))?;
        Ok(committed
            .elements()
            .iter()
            .map(|element| {
                let partition = TopicPartition::new(element.topic(), element.partition());
                let position = match element.offset() {
                    Offset::Offset(offset) => {
                        let metadata = Some(element.metadata()).filter(|m| !m.is_empty());
                        Some(InputOffset {
                            offset,
                            metadata: metadata.map(str::to_string),
                        })
                    }
                    _ => None,
                };
                (partition, position)
            })
            .collect())
    }

    fn commit_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
    ) -> Result<(), KafkaFailure> {
        self.rdkafka()
            .commit(&commit_list(consumed), CommitMode::Sync)
            .map_err(|e| KafkaFailure::new("committing consumed offsets", e))
    }

    fn group_metadata(&self) -> Option<GroupMetadata> {
        NativeGroupMetadata::of_consumer(self.rdkafka().client().native_ptr())
            .map(|metadata| metadata.read())
    }

    fn member_id(&self) -> Option<String> {
        let client = self.rdkafka().client().native_ptr();
        // SAFETY: the client pointer is live for as long as `self`; librdkafka returns its
        // own copy of the member id (or null), which the caller frees with rd_kafka_mem_free.
        unsafe {
            let id = rdkafka::bindings::rd_kafka_memberid(client);
            if id.is_null() {
                return None;
            }
            let member = std::ffi::CStr::from_ptr(id).to_string_lossy().into_owned();
            rdkafka::bindings::rd_kafka_mem_free(client, id.cast());
            Some(member).filter(|m| !m.is_empty())
        }
    }

    fn fatal_error(&self) -> Option<ClientError> {
        self.rdkafka()
            .client()
            .fatal_error()
            .map(|(code, message)| ClientError::new(code as i16, message))
    }
}

/// The partitions of an rdkafka list.
fn partitions_of(list: &TopicPartitionList) -> Vec<TopicPartition> {
    list.elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect()
}

/// An rdkafka list of `partitions`, each at `offset` (`None`: no offset).
pub fn partition_list<'a>(
    partitions: impl IntoIterator<Item = (&'a TopicPartition, Option<i64>)>,
) -> TopicPartitionList {
    let mut list = TopicPartitionList::new();
    for (partition, offset) in partitions {
        let offset = offset.map_or(Offset::Invalid, Offset::Offset);
        list.add_partition_offset(&partition.topic, partition.partition, offset)
            .expect("a valid offset is always accepted");
    }
    list
}

/// An rdkafka list of positions to commit: each partition at its offset, with its metadata.
pub fn commit_list(consumed: &BTreeMap<TopicPartition, InputOffset>) -> TopicPartitionList {
    let mut list = TopicPartitionList::new();
    for (partition, position) in consumed {
        let mut element = list.add_partition(&partition.topic, partition.partition);
        element
            .set_offset(Offset::Offset(position.offset))
            .expect("a valid offset is always accepted");
        if let Some(metadata) = &position.metadata {
            element.set_metadata(metadata);
        }
    }
    list
}
