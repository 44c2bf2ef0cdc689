//! The engine threads' Kafka clients on rdkafka, each made with its settings from the
//! [`EngineConfig`].

use std::sync::Arc;

use crate::engine::config::EngineConfig;
use crate::kafka::{
    ChangelogReader, GroupMember, GroupMembership, KafkaFailure, KafkaPartitionFetcher,
    KafkaStreamsProducer, PartitionFetcher, RebalanceListener, RestoreConsumer, StreamsProducer,
    ThreadClients, TransactionFailure,
};

/// Creates the clients of each engine thread of an instance: the group member through the
/// instance's [`GroupMembership`], the others on rdkafka.
pub(crate) struct KafkaThreadClients {
    pub config: Arc<EngineConfig>,
    pub membership: Arc<dyn GroupMembership>,
}

impl ThreadClients for KafkaThreadClients {
    fn group_member(
        &self,
        thread: usize,
        listener: Arc<dyn RebalanceListener>,
        topics: &[String],
    ) -> Result<Box<dyn GroupMember>, KafkaFailure> {
        self.membership.join(thread, listener, topics)
    }

    fn fetcher(&self, thread: usize) -> Result<Box<dyn PartitionFetcher>, KafkaFailure> {
        let config = &self.config;
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
        let config = &self.config;
        let producer = KafkaStreamsProducer::new(
            &config.producer_config(thread, transactional_id),
            config.client_timeout,
        )?;
        Ok(Box::new(producer))
    }

    fn restore_consumer(&self, thread: usize) -> Box<dyn RestoreConsumer> {
        let config = &self.config;
        Box::new(ChangelogReader::new(
            &config.restore_consumer_config(thread),
            config.client_timeout,
        ))
    }
}
