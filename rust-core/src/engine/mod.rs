//! The runtime: runs a topology's tasks on Kafka with Kafka Streams' semantics, knowing
//! nothing of the code inside the tasks (a [`TaskProcessor`] runs each, and keeps the
//! task's stores; a [`GlobalProcessor`] keeps the global stores).
//!
//! - [`config`]: `StreamsConfig` keys and defaults.
//! - [`topology`]: the serde description of sub-topologies, stores and topics, and the
//!   resolved topology (full names, partition counts) that the threads run.
//! - [`internal_topics`]: resolving the topology against the cluster: partition counts,
//!   co-partitioning, changelog and repartition topic creation.
//! - [`processor`]: the [`TaskProcessor`] and [`GlobalProcessor`] contracts.
//! - [`task`]: a task, the changelogs of its stores and its consumed offsets.
//! - [`restore`]: bringing the tasks' stores to the end of their changelogs.
//! - [`global`]: the global thread, which restores and updates the global stores.
//! - `thread`: one group member's poll loop; `task_manager`: its tasks, assignment and
//!   pause state; `commit`: its commit barrier and how a failed transaction is recovered
//!   from; `clients`: its Kafka clients on rdkafka, behind [`crate::kafka::clients`]'s traits.
//! - `purge`: deleting the repartition records that tasks committed.
//! - [`runtime`]: the [`Engine`] instance and its threads.
//! - `budget`: the uncommitted-bytes budget's shares.
//! - `freed_memory`: handing freed native memory back to the operating system.
//! - [`metrics`], [`error`], `process_id`.
//!
//! Imports between these modules run one way, each using only modules later in this order:
//! `runtime`; `thread`; `task_manager`; `commit`, `clients`; `global`, `purge`; `restore`;
//! `task`; `internal_topics`, `config`; `error`; `processor`; `topology`, `budget`, `metrics`,
//! `process_id`, `freed_memory`.

pub mod config;
pub mod error;
pub mod global;
pub mod internal_topics;
pub mod metrics;
pub mod processor;
pub mod restore;
pub mod runtime;
pub mod task;
pub mod topology;

mod budget;
mod clients;
mod commit;
mod freed_memory;
mod process_id;
mod purge;
mod state_owners;
mod task_manager;
mod thread;

#[cfg(test)]
mod fault_tests;

pub use config::{EngineConfig, ProcessingGuarantee};
pub use error::{Error, Result};
pub use metrics::MetricsSnapshot;
pub use processor::{
    CommittedInput, GlobalProcessor, InputOffset, KeptStateCorrupted, LoopTurn, ProcessorError,
    ProcessorFactory, TaskProcessor,
};
pub use restore::RestoreListener;
pub use runtime::Engine;
pub use topology::{TaskId, TopologyDescription};
