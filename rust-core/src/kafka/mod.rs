//! The engine's Kafka clients, on rdkafka (librdkafka), all blocking: no async runtime.
//!
//! - [`client_config`]: the librdkafka settings of each client role, from the engine's
//!   bootstrap servers and the user's prefixed overrides.
//! - [`records`]: records as the engine sees them, owned and independent of rdkafka;
//!   consumed ones in runs of one partition, encoded in one buffer.
//! - [`admin`]: topic metadata, creation of internal topics, deletion of consumed records.
//! - [`clients`]: the seam: the traits by which an engine thread uses its clients (group
//!   member, partition fetcher, producer, restore consumer) and creates them; the engine names no rdkafka
//!   type.
//! - [`fetcher`]: the fetcher of the partitions the thread's group member is assigned, on
//!   rdkafka (the member itself is Kafka Streams' own, on the JVM: DESIGN §10).
//! - [`lists`]: rdkafka's partition lists, from and to the engine's partitions.
//! - [`group_metadata`]: librdkafka's group metadata, read out of a consumer or made for a
//!   transaction's offsets.
//! - [`producer`]: the (transactional) producer on rdkafka, which learns from delivery
//!   reports where each record landed.
//! - [`answered`]: which of the records sent under consecutive ids have been answered.
//! - [`changelog`]: the restore consumer on rdkafka, reading changelog partitions up to their
//!   end.
//! - [`assigned`]: a consumer reading given partitions indefinitely (global stores).
//! - [`queue_signal`]: the wake-up of a thread that serves librdkafka queues without waiting
//!   inside librdkafka (delivery reports, changelog partitions).
//! - [`error`]: the clients' error as the engine owns it, and how a failure is classified
//!   (fenced, abortable, fatal).

pub mod admin;
mod answered;
pub mod assigned;
pub mod changelog;
pub mod client_config;
pub mod clients;
pub mod error;
pub mod fetcher;
mod group_metadata;
mod lists;
pub mod producer;
mod queue_signal;
pub mod records;

pub use admin::{Admin, RecordDeletion, TopicSpec};
pub use assigned::AssignedConsumer;
pub use changelog::{ChangelogEvent, ChangelogReader};
pub use client_config::{ClientProperties, ClientRole};
pub use clients::{
    DeliveredOffsets, FailedSend, GroupConsumer, GroupMember, GroupMembership, GroupMetadata,
    OffsetReset, PartitionFetcher, ReadTo, RebalanceListener, RestoreConsumer, SendReports,
    StreamsProducer, ThreadClients,
};
pub use error::{ClientError, KafkaFailure, TransactionFailure};
pub use fetcher::KafkaPartitionFetcher;
pub use group_metadata::consumer_group_metadata;
pub use producer::KafkaStreamsProducer;
pub use records::{
    record_count, Header, InputOffset, ProducedRecord, ProducedRecords, ProducedView, RecordRun,
    RecordView,
};
