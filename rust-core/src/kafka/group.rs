//! The group consumer: subscribes to the source topics in group `application.id` and
//! reports assignment changes to a [`RebalanceListener`] while they happen.
//!
//! The callbacks run inside [`BaseConsumer::poll`], on the polling thread, before
//! librdkafka applies the change: on revocation the listener can still commit the
//! partitions it is losing, with the group generation that owns them.

use std::collections::BTreeMap;

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::{ClientConfig, ClientContext};

use crate::kafka::error::KafkaFailure;
use crate::store::TopicPartition;

/// Reacts to partitions moving in and out of this member.
pub trait RebalanceListener: Send + Sync + Sized + 'static {
    /// `partitions` are about to be taken away. `lost` is true when the group already
    /// gave them to another member (the session expired): nothing may be committed then.
    fn partitions_revoked(
        &self,
        consumer: &GroupConsumer<Self>,
        partitions: &[TopicPartition],
        lost: bool,
    );

    /// `partitions` were just assigned to this member.
    fn partitions_assigned(&self, consumer: &GroupConsumer<Self>, partitions: &[TopicPartition]);
}

/// The consumer context that forwards rebalances to a [`RebalanceListener`].
pub struct GroupContext<L> {
    listener: L,
}

/// A group consumer whose rebalances reach `L`.
pub type GroupConsumer<L> = BaseConsumer<GroupContext<L>>;

impl<L: RebalanceListener> ClientContext for GroupContext<L> {}

impl<L: RebalanceListener> ConsumerContext for GroupContext<L> {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
            self.listener.partitions_revoked(
                consumer,
                &partitions_of(list),
                consumer.assignment_lost(),
            );
        }
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            self.listener
                .partitions_assigned(consumer, &partitions_of(list));
        }
    }
}

/// Creates a consumer with `config` reporting to `listener`, subscribed to `topics`.
pub fn subscribe<L: RebalanceListener>(
    config: &ClientConfig,
    listener: L,
    topics: &[String],
) -> Result<GroupConsumer<L>, KafkaFailure> {
    let consumer: GroupConsumer<L> = config
        .create_with_context(GroupContext { listener })
        .map_err(|e| KafkaFailure::new("creating the group consumer", e))?;
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    consumer
        .subscribe(&names)
        .map_err(|e| KafkaFailure::new(format!("subscribing to {topics:?}"), e))?;
    Ok(consumer)
}

/// The listener of a group consumer.
pub fn listener<L: RebalanceListener>(consumer: &GroupConsumer<L>) -> &L {
    &consumer.context().listener
}

/// The partitions of an rdkafka list.
pub fn partitions_of(list: &TopicPartitionList) -> Vec<TopicPartition> {
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
pub fn commit_list<'a>(
    positions: impl IntoIterator<Item = (&'a TopicPartition, i64, Option<&'a str>)>,
) -> TopicPartitionList {
    let mut list = TopicPartitionList::new();
    for (partition, offset, metadata) in positions {
        let mut element = list.add_partition(&partition.topic, partition.partition);
        element
            .set_offset(Offset::Offset(offset))
            .expect("a valid offset is always accepted");
        if let Some(metadata) = metadata {
            element.set_metadata(metadata);
        }
    }
    list
}

/// The committed position of each of `partitions` in the group: offset and metadata,
/// `None` for a partition without one.
pub fn committed_positions<L: RebalanceListener>(
    consumer: &GroupConsumer<L>,
    partitions: &[TopicPartition],
    timeout: std::time::Duration,
) -> Result<Vec<(TopicPartition, Option<(i64, Option<String>)>)>, KafkaFailure> {
    let list = partition_list(partitions.iter().map(|p| (p, None)));
    let committed = consumer
        .committed_offsets(list, timeout)
        .map_err(|e| KafkaFailure::new("reading committed offsets", e))?;
    Ok(committed
        .elements()
        .iter()
        .map(|element| {
            let partition = TopicPartition::new(element.topic(), element.partition());
            let position = match element.offset() {
                Offset::Offset(offset) => {
                    let metadata = Some(element.metadata()).filter(|m| !m.is_empty());
                    Some((offset, metadata.map(str::to_string)))
                }
                _ => None,
            };
            (partition, position)
        })
        .collect())
}

/// How far behind the end of each of `partitions` the consumer is: the high watermark its
/// last fetch saw, minus the next offset it hands out. Before it handed out anything, the
/// next offset is the one `starts` gives (the group's committed offset), else the log's start
/// (`auto.offset.reset=earliest`). `None` while unknown (nothing fetched yet). Answered from
/// what the consumer already knows, without asking the broker.
pub fn lags<L: RebalanceListener>(
    consumer: &GroupConsumer<L>,
    partitions: &[TopicPartition],
    starts: &BTreeMap<TopicPartition, i64>,
) -> Vec<(TopicPartition, Option<i64>)> {
    let positions = positions(consumer);
    partitions
        .iter()
        .map(|partition| {
            let handed_out = positions.get(partition).copied();
            let lag = cached_watermarks(consumer, partition).map(|(low, high)| {
                let next = handed_out
                    .or_else(|| starts.get(partition).copied())
                    .unwrap_or(low);
                (high - next).max(0)
            });
            (partition.clone(), lag)
        })
        .collect()
}

/// The next offset the consumer hands out of each assigned partition that it has a position
/// for: past the last record it handed out, and past the transaction markers after it.
pub fn positions<L: RebalanceListener>(
    consumer: &GroupConsumer<L>,
) -> BTreeMap<TopicPartition, i64> {
    let Ok(list) = consumer.position() else {
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

/// The member id the group coordinator gave the consumer, once it joined the group.
pub fn member_id<L: RebalanceListener>(consumer: &GroupConsumer<L>) -> Option<String> {
    let client = consumer.client().native_ptr();
    // SAFETY: the client pointer is live for as long as `consumer`; librdkafka returns its
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

/// The low and high watermarks of `partition` as the consumer's last fetch saw them.
fn cached_watermarks<L: RebalanceListener>(
    consumer: &GroupConsumer<L>,
    partition: &TopicPartition,
) -> Option<(i64, i64)> {
    let topic = std::ffi::CString::new(partition.topic.as_str()).ok()?;
    let (mut low, mut high) = (-1i64, -1i64);
    // SAFETY: the client pointer is live for as long as `consumer`, the topic a valid C string,
    // and librdkafka only writes the two offsets; it reads its cached fetch state, no I/O.
    let error = unsafe {
        rdkafka::bindings::rd_kafka_get_watermark_offsets(
            consumer.client().native_ptr(),
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
