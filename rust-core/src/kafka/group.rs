//! The group member on rdkafka: a consumer subscribed to the source topics in group
//! `application.id` that fetches nothing (it pauses whatever it is assigned; the thread's
//! [`KafkaPartitionFetcher`](crate::kafka::fetcher::KafkaPartitionFetcher) fetches) and
//! reports assignment changes to a [`RebalanceListener`] while they happen.
//!
//! The callbacks run inside [`GroupMember::poll`], on the polling thread, before librdkafka
//! applies the change: on revocation the listener can still commit the partitions it is
//! losing, with the group generation that owns them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::{ClientConfig, ClientContext};

use crate::kafka::clients::{GroupMember, GroupMetadata, RebalanceListener};
use crate::kafka::error::{ClientError, KafkaFailure};
use crate::kafka::group_metadata::NativeGroupMetadata;
use crate::kafka::records::InputOffset;
use crate::store::TopicPartition;

/// The consumer context that forwards rebalances to a [`RebalanceListener`], and remembers
/// what a rejoin subscribes to again.
pub struct GroupContext {
    listener: Arc<dyn RebalanceListener>,
    /// The topics subscribed to.
    subscribed: Mutex<Vec<String>>,
}

impl GroupContext {
    fn subscribed(&self) -> MutexGuard<'_, Vec<String>> {
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The rdkafka consumer of a [`KafkaGroupMember`], which its rebalance callbacks are given.
pub type BaseGroupConsumer = BaseConsumer<GroupContext>;

/// A group member whose rebalances reach its [`RebalanceListener`].
pub struct KafkaGroupMember {
    consumer: BaseGroupConsumer,
}

/// What [`GroupMember`] is implemented on: the [`KafkaGroupMember`], and the rdkafka
/// consumer under it, as the rebalance callbacks hand it to the listener.
pub trait OnRdkafka: Send + Sync {
    /// The rdkafka consumer.
    fn rdkafka(&self) -> &BaseGroupConsumer;
}

impl OnRdkafka for BaseGroupConsumer {
    fn rdkafka(&self) -> &BaseGroupConsumer {
        self
    }
}

impl OnRdkafka for KafkaGroupMember {
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
            // The member only holds the assignment; the listener has it fetched. Were the
            // pause to fail, what the member fetched would only be dropped by its polls.
            let _ = consumer.pause(list);
            self.listener
                .partitions_assigned(consumer, &partitions_of(list));
        }
    }
}

/// Creates a member with `config` reporting to `listener`, subscribed to `topics`.
pub fn subscribe(
    config: &ClientConfig,
    listener: Arc<dyn RebalanceListener>,
    topics: &[String],
) -> Result<KafkaGroupMember, KafkaFailure> {
    let context = GroupContext {
        listener,
        subscribed: Mutex::new(Vec::new()),
    };
    let consumer: BaseGroupConsumer = config
        .create_with_context(context)
        .map_err(|e| KafkaFailure::new("creating the group member", e))?;
    let member = KafkaGroupMember { consumer };
    member.resubscribe(topics)?;
    Ok(member)
}

fn topic_names(topics: &[String]) -> Vec<&str> {
    topics.iter().map(String::as_str).collect()
}

impl<T: OnRdkafka> GroupMember for T {
    fn poll(&self) -> Result<(), KafkaFailure> {
        // Everything assigned is paused, so no record comes out; errors do.
        match self.rdkafka().poll(Duration::ZERO) {
            Some(Err(error)) => Err(KafkaFailure::new("polling the group", error)),
            _ => Ok(()),
        }
    }

    fn rejoin(&self) -> Result<(), KafkaFailure> {
        let consumer = self.rdkafka();
        consumer.unsubscribe();
        consumer
            .subscribe(&topic_names(&consumer.context().subscribed()))
            .map_err(|e| KafkaFailure::new("rejoining the group", e))
    }

    fn resubscribe(&self, topics: &[String]) -> Result<(), KafkaFailure> {
        let consumer = self.rdkafka();
        let mut subscribed = consumer.context().subscribed();
        consumer
            .subscribe(&topic_names(topics))
            .map_err(|e| KafkaFailure::new(format!("subscribing to {topics:?}"), e))?;
        *subscribed = topics.to_vec();
        Ok(())
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
