//! A consumer outside any group that keeps reading the partitions it is given, from the
//! offsets it is given: what keeps global stores up to date after their restore.

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;

use crate::kafka::error::KafkaFailure;
use crate::kafka::fetcher::poll_runs;
use crate::kafka::records::RecordRun;
use crate::store::TopicPartition;

/// Reads a fixed set of partitions, never committing.
pub struct AssignedConsumer {
    consumer: BaseConsumer,
}

impl AssignedConsumer {
    /// Reads each of `partitions` from its next offset (`None`: the log start).
    pub fn new(
        config: &ClientConfig,
        partitions: &[(TopicPartition, Option<i64>)],
    ) -> Result<Self, KafkaFailure> {
        let mut config = config.clone();
        config.set("enable.auto.commit", "false");
        // librdkafka fetches only with a group id, even for assigned partitions; this group
        // is never joined and never committed to.
        if config.get("group.id").is_none() {
            let client = config.get("client.id").unwrap_or("sluice").to_string();
            config.set("group.id", client);
        }
        let consumer: BaseConsumer = config
            .create()
            .map_err(|e| KafkaFailure::new("creating the global consumer", e))?;
        let mut list = TopicPartitionList::new();
        for (partition, offset) in partitions {
            let offset = offset.map_or(Offset::Beginning, Offset::Offset);
            list.add_partition_offset(&partition.topic, partition.partition, offset)
                .map_err(|e| KafkaFailure::new(format!("positioning {partition}"), e))?;
        }
        consumer
            .assign(&list)
            .map_err(|e| KafkaFailure::new("assigning the global topics", e))?;
        Ok(AssignedConsumer { consumer })
    }

    /// Up to `max` records, by partition: waits up to `wait` for the first, then takes what
    /// is already fetched.
    pub fn poll(&self, max: usize, wait: Duration) -> Result<Vec<RecordRun>, KafkaFailure> {
        poll_runs(&self.consumer, max, wait, "reading the global topics")
    }
}
