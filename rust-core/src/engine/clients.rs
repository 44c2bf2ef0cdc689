//! The engine threads' Kafka clients on rdkafka, each made with its settings from the
//! [`EngineConfig`].

use std::sync::Arc;

use crate::engine::config::EngineConfig;
use crate::kafka::{
    group, ChangelogReader, GroupMember, KafkaFailure, KafkaPartitionFetcher, KafkaStreamsProducer,
    PartitionFetcher, RebalanceListener, RestoreConsumer, StreamsProducer, ThreadClients,
    TransactionFailure,
};

/// Creates the clients of each engine thread of an instance.
pub(crate) struct KafkaThreadClients(pub Arc<EngineConfig>);

impl ThreadClients for KafkaThreadClients {
    fn group_member(
        &self,
        thread: usize,
        listener: Arc<dyn RebalanceListener>,
        topics: &[String],
    ) -> Result<Box<dyn GroupMember>, KafkaFailure> {
        let config = &self.0;
        let member = group::subscribe(&config.group_member_config(thread), listener, topics)?;
        Ok(Box::new(member))
    }

    fn fetcher(&self, thread: usize) -> Result<Box<dyn PartitionFetcher>, KafkaFailure> {
        let config = &self.0;
        let fetcher = KafkaPartitionFetcher::new(
            &config.main_consumer_config(thread),
            config.client_timeout,
        )?;
        Ok(Box::new(fetcher))
    }

    fn producer(
        &self,
        thread: usize,
        transactional_id: Option<&str>,
    ) -> Result<Box<dyn StreamsProducer>, TransactionFailure> {
        let config = &self.0;
        let producer = KafkaStreamsProducer::new(
            &config.producer_config(thread, transactional_id),
            config.client_timeout,
        )?;
        Ok(Box::new(producer))
    }

    fn restore_consumer(&self, thread: usize) -> Box<dyn RestoreConsumer> {
        let config = &self.0;
        Box::new(ChangelogReader::new(
            &config.restore_consumer_config(thread),
            config.client_timeout,
        ))
    }
}
