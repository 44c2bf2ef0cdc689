//! The engine tests' group membership: each engine thread's member is a librdkafka consumer in
//! the application's group with range assignment, which holds its assignment (it pauses what it
//! is assigned; the engine's fetcher fetches) and reports rebalances to the engine's listener
//! inside its poll. The engine's own member is Kafka Streams' on the JVM; this one lets the
//! engine's rebalancing, commits under the group's generation and fencing run against a real
//! broker without a JVM.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientContext;
use sluice_core::engine::EngineConfig;
use sluice_core::kafka::{
    consumer_group_metadata, ClientError, ClientRole, GroupMember, GroupMembership, GroupMetadata,
    InputOffset, KafkaFailure, RebalanceListener,
};
use sluice_core::store::TopicPartition;

/// Makes range-assigned librdkafka members for the threads of an engine configured as `config`.
pub fn range_membership(config: &EngineConfig) -> Arc<dyn GroupMembership> {
    Arc::new(RangeMembership(config.clone()))
}

struct RangeMembership(EngineConfig);

impl GroupMembership for RangeMembership {
    fn join(
        &self,
        thread: usize,
        listener: Arc<dyn RebalanceListener>,
        topics: &[String],
    ) -> Result<Box<dyn GroupMember>, KafkaFailure> {
        let mut config = self.0.main_consumer_config(thread);
        config.set("partition.assignment.strategy", "range");
        config.set(
            "max.poll.interval.ms",
            self.0.max_poll_interval.as_millis().to_string(),
        );
        // Static membership: each thread is its own member, as in Kafka Streams.
        if let Some(instance) = self
            .0
            .clients
            .user_value(ClientRole::MainConsumer, "group.instance.id")
        {
            config.set("group.instance.id", format!("{instance}-{thread}"));
        }
        let context = MemberContext {
            listener,
            subscribed: Mutex::new(Vec::new()),
            timeout: self.0.client_timeout,
        };
        let consumer: BaseConsumer<MemberContext> = config
            .create_with_context(context)
            .map_err(|e| KafkaFailure::new("creating the group member", e))?;
        let member = RangeMember(consumer);
        member.resubscribe(topics)?;
        Ok(Box::new(member))
    }
}

struct MemberContext {
    listener: Arc<dyn RebalanceListener>,
    subscribed: Mutex<Vec<String>>,
    /// How long a blocking call waits for the broker (`default.api.timeout.ms`).
    timeout: Duration,
}

impl MemberContext {
    fn subscribed(&self) -> MutexGuard<'_, Vec<String>> {
        self.subscribed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ClientContext for MemberContext {}

impl ConsumerContext for MemberContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
            let lost = consumer.assignment_lost();
            self.listener
                .partitions_revoked(&Callback(consumer), &partitions_of(list), lost);
        }
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            consumer.pause(list).expect("assigned partitions pause");
            self.listener
                .partitions_assigned(&Callback(consumer), &partitions_of(list), &[]);
        }
    }
}

struct RangeMember(BaseConsumer<MemberContext>);

/// The member as its rebalance callbacks see it.
struct Callback<'a>(&'a BaseConsumer<MemberContext>);

impl GroupMember for RangeMember {
    fn poll(&self) -> Result<(), KafkaFailure> {
        poll(&self.0)
    }
    fn rejoin(&self) -> Result<(), KafkaFailure> {
        let topics = self.0.context().subscribed().clone();
        self.0.unsubscribe();
        subscribe(&self.0, &topics)
    }
    fn resubscribe(&self, topics: &[String]) -> Result<(), KafkaFailure> {
        subscribe(&self.0, topics)?;
        *self.0.context().subscribed() = topics.to_vec();
        Ok(())
    }
    fn commit_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
    ) -> Result<(), KafkaFailure> {
        commit(&self.0, consumed)
    }
    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
        committed(&self.0, partitions)
    }
    fn group_metadata(&self) -> Option<GroupMetadata> {
        consumer_group_metadata(&self.0)
    }
    fn rebalance_in_progress(&self) -> bool {
        false
    }
    fn fatal_error(&self) -> Option<ClientError> {
        fatal_error(&self.0)
    }
}

impl GroupMember for Callback<'_> {
    fn poll(&self) -> Result<(), KafkaFailure> {
        poll(self.0)
    }
    fn rejoin(&self) -> Result<(), KafkaFailure> {
        unreachable!("the engine rejoins outside rebalance callbacks")
    }
    fn resubscribe(&self, _topics: &[String]) -> Result<(), KafkaFailure> {
        unreachable!("the engine resubscribes outside rebalance callbacks")
    }
    fn commit_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
    ) -> Result<(), KafkaFailure> {
        commit(self.0, consumed)
    }
    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
        committed(self.0, partitions)
    }
    fn group_metadata(&self) -> Option<GroupMetadata> {
        consumer_group_metadata(self.0)
    }
    fn rebalance_in_progress(&self) -> bool {
        false
    }
    fn fatal_error(&self) -> Option<ClientError> {
        fatal_error(self.0)
    }
}

fn poll(consumer: &BaseConsumer<MemberContext>) -> Result<(), KafkaFailure> {
    // Everything assigned is paused, so no record comes out; errors do. librdkafka retries
    // all but a fatal one itself, as Kafka's consumer does inside its poll.
    match consumer.poll(Duration::ZERO) {
        Some(Err(error)) if fatal_error(consumer).is_some() => {
            Err(KafkaFailure::new("polling the group", error))
        }
        _ => Ok(()),
    }
}

fn subscribe(
    consumer: &BaseConsumer<MemberContext>,
    topics: &[String],
) -> Result<(), KafkaFailure> {
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    consumer
        .subscribe(&names)
        .map_err(|e| KafkaFailure::new(format!("subscribing to {topics:?}"), e))
}

fn commit(
    consumer: &BaseConsumer<MemberContext>,
    consumed: &BTreeMap<TopicPartition, InputOffset>,
) -> Result<(), KafkaFailure> {
    let mut list = TopicPartitionList::new();
    for (partition, position) in consumed {
        let mut element = list.add_partition(&partition.topic, partition.partition);
        element
            .set_offset(Offset::Offset(position.offset))
            .expect("a valid offset");
        if let Some(metadata) = &position.metadata {
            element.set_metadata(metadata);
        }
    }
    consumer
        .commit(&list, CommitMode::Sync)
        .map_err(|e| KafkaFailure::new("committing consumed offsets", e))
}

fn committed(
    consumer: &BaseConsumer<MemberContext>,
    partitions: &[TopicPartition],
) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
    let mut list = TopicPartitionList::new();
    for partition in partitions {
        list.add_partition(&partition.topic, partition.partition);
    }
    let committed = consumer
        .committed_offsets(list, consumer.context().timeout)
        .map_err(|e| KafkaFailure::new("reading committed offsets", e))?;
    Ok(committed
        .elements()
        .iter()
        .map(|element| {
            let position = match element.offset() {
                Offset::Offset(offset) => Some(InputOffset {
                    offset,
                    metadata: Some(element.metadata())
                        .filter(|m| !m.is_empty())
                        .map(str::to_string),
                }),
                _ => None,
            };
            (
                TopicPartition::new(element.topic(), element.partition()),
                position,
            )
        })
        .collect())
}

fn fatal_error(consumer: &BaseConsumer<MemberContext>) -> Option<ClientError> {
    consumer
        .client()
        .fatal_error()
        .map(|(code, message)| ClientError::new(code as i16, message))
}

fn partitions_of(list: &TopicPartitionList) -> Vec<TopicPartition> {
    list.elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect()
}
