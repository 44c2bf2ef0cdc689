//! The group consumer on rdkafka: subscribes to the source topics in group
//! `application.id` and reports assignment changes to a [`RebalanceListener`] while they
//! happen.
//!
//! The callbacks run inside [`BaseConsumer::poll`], on the polling thread, before
//! librdkafka applies the change: on revocation the listener can still commit the
//! partitions it is losing, with the group generation that owns them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::{ClientConfig, ClientContext};

use crate::kafka::clients::{GroupConsumer, GroupMetadata, RebalanceListener};
use crate::kafka::error::KafkaFailure;
use crate::kafka::records::{push_to_runs, InputOffset, RecordRun};
use crate::store::TopicPartition;

/// The consumer context that forwards rebalances to a [`RebalanceListener`], and remembers
/// what a rejoin subscribes to again.
pub struct GroupContext {
    listener: Arc<dyn RebalanceListener>,
    topics: Vec<String>,
    /// How long a blocking call waits for the group coordinator.
    timeout: Duration,
}

/// A group consumer whose rebalances reach its [`RebalanceListener`].
pub type KafkaGroupConsumer = BaseConsumer<GroupContext>;

impl ClientContext for GroupContext {}

impl ConsumerContext for GroupContext {
    fn pre_rebalance(&self, consumer: &KafkaGroupConsumer, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
            self.listener.partitions_revoked(
                consumer,
                &partitions_of(list),
                consumer.assignment_lost(),
            );
        }
    }

    fn post_rebalance(&self, consumer: &KafkaGroupConsumer, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            self.listener
                .partitions_assigned(consumer, &partitions_of(list));
        }
    }
}

/// Creates a consumer with `config` reporting to `listener`, subscribed to `topics`;
/// blocking calls wait up to `timeout`.
pub fn subscribe(
    config: &ClientConfig,
    listener: Arc<dyn RebalanceListener>,
    topics: &[String],
    timeout: Duration,
) -> Result<KafkaGroupConsumer, KafkaFailure> {
    let context = GroupContext {
        listener,
        topics: topics.to_vec(),
        timeout,
    };
    let consumer: KafkaGroupConsumer = config
        .create_with_context(context)
        .map_err(|e| KafkaFailure::new("creating the group consumer", e))?;
    consumer
        .subscribe(&topic_names(topics))
        .map_err(|e| KafkaFailure::new(format!("subscribing to {topics:?}"), e))?;
    Ok(consumer)
}

fn topic_names(topics: &[String]) -> Vec<&str> {
    topics.iter().map(String::as_str).collect()
}

impl GroupConsumer for KafkaGroupConsumer {
    fn poll_records(&self, max: usize, wait: Duration) -> Result<Vec<RecordRun>, KafkaFailure> {
        let mut runs = Vec::new();
        let mut timeout = wait;
        for polled in 0..max {
            match self.poll(timeout) {
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

    fn rejoin(&self) -> Result<(), KafkaFailure> {
        self.unsubscribe();
        self.subscribe(&topic_names(&self.context().topics))
            .map_err(|e| KafkaFailure::new("rejoining the group", e))
    }

    fn assigned_partitions(&self) -> Result<Vec<TopicPartition>, KafkaFailure> {
        let list = self
            .assignment()
            .map_err(|e| KafkaFailure::new("reading the assignment", e))?;
        Ok(partitions_of(&list))
    }

    fn pause_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        self.pause(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("pausing {partitions:?}"), e))
    }

    fn resume_partitions(&self, partitions: &[TopicPartition]) -> Result<(), KafkaFailure> {
        self.resume(&partition_list(partitions.iter().map(|p| (p, None))))
            .map_err(|e| KafkaFailure::new(format!("resuming {partitions:?}"), e))
    }

    fn seek_to(&self, partition: &TopicPartition, offset: Option<i64>) -> Result<(), KafkaFailure> {
        let offset = offset.map_or(Offset::Beginning, Offset::Offset);
        self.seek(
            &partition.topic,
            partition.partition,
            offset,
            self.context().timeout,
        )
        .map_err(|e| KafkaFailure::new(format!("rewinding {partition}"), e))
    }

    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
        let list = partition_list(partitions.iter().map(|p| (p, None)));
        let committed = Consumer::committed_offsets(self, list, self.context().timeout)
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
        self.commit(&commit_list(consumed), CommitMode::Sync)
            .map_err(|e| KafkaFailure::new("committing consumed offsets", e))
    }

    fn next_offsets(&self) -> BTreeMap<TopicPartition, i64> {
        let Ok(list) = self.position() else {
            return BTreeMap::new();
        };
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
                self.client().native_ptr(),
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

    fn group_metadata(&self) -> Option<GroupMetadata> {
        Consumer::group_metadata(self).map(GroupMetadata::new)
    }

    fn member_id(&self) -> Option<String> {
        let client = self.client().native_ptr();
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

    fn missing_topics(&self, topics: &[String]) -> Result<Vec<String>, KafkaFailure> {
        let mut missing = Vec::new();
        for topic in topics {
            let metadata = self
                .fetch_metadata(Some(topic.as_str()), self.context().timeout)
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
