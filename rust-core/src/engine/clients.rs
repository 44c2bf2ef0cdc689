//! The engine threads' Kafka clients on rdkafka, each made with its settings from the
//! [`EngineConfig`].

use std::sync::Arc;

use crate::engine::config::EngineConfig;
use crate::kafka::{
    group, ChangelogReader, GroupConsumer, KafkaFailure, KafkaStreamsProducer, RebalanceListener,
    RestoreConsumer, StreamsProducer, Subscription, ThreadClients, TransactionFailure,
};

/// Creates the clients of each engine thread of an instance.
pub(crate) struct KafkaThreadClients(pub Arc<EngineConfig>);

impl ThreadClients for KafkaThreadClients {
    fn group_consumer(
        &self,
        thread: usize,
        listener: Arc<dyn RebalanceListener>,
        subscription: &Subscription,
    ) -> Result<Box<dyn GroupConsumer>, KafkaFailure> {
        let config = &self.0;
        let consumer = group::subscribe(
            &config.main_consumer_config(thread),
            listener,
            subscription,
            config.client_timeout,
        )?;
        Ok(Box::new(consumer))
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
