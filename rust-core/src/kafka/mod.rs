//! The engine's Kafka clients, on rdkafka (librdkafka), all blocking: no async runtime.
//!
//! - [`client_config`]: the librdkafka settings of each client role, from the engine's
//!   bootstrap servers and the user's prefixed overrides.
//! - [`records`]: records as the engine sees them, owned and independent of rdkafka.
//! - [`admin`]: topic metadata, creation of internal topics, deletion of consumed records.
//! - [`group`]: the group consumer and its rebalance callbacks.
//! - [`producer`]: the (transactional) producer, which learns from delivery reports where
//!   each record landed.
//! - [`changelog`]: the restore consumer, reading changelog partitions up to their end.
//! - [`assigned`]: a consumer reading given partitions indefinitely (global stores).
//! - [`error`]: how a Kafka failure is classified (fenced, abortable, fatal).

pub mod admin;
pub mod assigned;
pub mod changelog;
pub mod client_config;
pub mod error;
pub mod group;
pub mod producer;
pub mod records;

pub use admin::{Admin, RecordDeletion, TopicSpec};
pub use assigned::AssignedConsumer;
pub use changelog::{ChangelogEvent, ChangelogReader};
pub use client_config::{ClientProperties, ClientRole};
pub use error::{protocol_error_code, KafkaFailure, TransactionFailure};
pub use group::{GroupConsumer, GroupContext, RebalanceListener};
pub use producer::{DeliveredOffsets, FailedSend, StreamsProducer};
pub use records::{ConsumedRecord, ProducedRecord};
