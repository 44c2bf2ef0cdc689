//! The topology the engine runs, as Kafka Streams' `InternalTopologyBuilder` describes it:
//! sub-topologies with their source, repartition and sink topics and their stores.
//!
//! The description is plain serde data so that the JVM side can produce it as JSON from a
//! `Topology`. Repartition topic names are given as `Topology#describe` shows them, without
//! the application id (`KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition`, or a foreign-key
//! join's `KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic`); the engine prefixes them
//! ([`repartition_topic_name`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A whole topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyDescription {
    /// The sub-topologies; each becomes one task per input partition.
    pub subtopologies: Vec<SubtopologyDescription>,
    /// Global stores, each fed by one topic on every instance.
    #[serde(default)]
    pub global_stores: Vec<GlobalStoreDescription>,
    /// Groups of source topics that must have equal partition counts (joins); names as in
    /// the sub-topologies (repartition topics by their unprefixed name).
    #[serde(default)]
    pub copartition_groups: Vec<Vec<String>>,
}

/// One sub-topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubtopologyDescription {
    /// Kafka Streams' sub-topology id (the first half of a task id).
    pub id: u32,
    /// User topics it reads.
    #[serde(default)]
    pub source_topics: Vec<String>,
    /// Repartition topics it reads.
    #[serde(default)]
    pub repartition_source_topics: Vec<RepartitionTopicDescription>,
    /// User topics it writes.
    #[serde(default)]
    pub sink_topics: Vec<String>,
    /// Repartition topics it writes (unprefixed names).
    #[serde(default)]
    pub repartition_sink_topics: Vec<String>,
    /// Its state stores.
    #[serde(default)]
    pub stores: Vec<StoreDescription>,
}

/// A repartition topic read by a sub-topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepartitionTopicDescription {
    /// Name without the `<application.id>-` prefix.
    pub name: String,
    /// Partition count set by the topology (`Repartitioned.numberOfPartitions`); otherwise
    /// derived from the upstream sub-topologies.
    #[serde(default)]
    pub partitions: Option<i32>,
    /// Topic configs set by the application (Kafka Streams' `topic.`-prefixed settings).
    #[serde(default)]
    pub configs: BTreeMap<String, String>,
}

/// A state store of a sub-topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreDescription {
    /// Store name.
    pub name: String,
    /// RocksDB (true) or in-memory (false).
    #[serde(default = "yes")]
    pub persistent: bool,
    /// Backed by a changelog topic.
    #[serde(default = "yes")]
    pub logged: bool,
    /// Topic configs of the changelog set by the topology (`withLoggingEnabled(map)`).
    #[serde(default)]
    pub changelog_configs: BTreeMap<String, String>,
    /// The store's changelog is this user source topic of its sub-topology instead of a
    /// changelog topic of its own (Kafka Streams' source tables under
    /// `reuse.ktable.source.topics`, read-only state stores): the topic already holds what
    /// the store holds, so no changelog topic is created or written, and restore reads the
    /// source partition only up to the group's committed offset, since what follows it is
    /// processed again.
    #[serde(default)]
    pub source_topic_changelog: Option<String>,
}

fn yes() -> bool {
    true
}

/// A global store: a full copy of one topic on every instance, kept up to date by the
/// instance's global thread and read by every task (a `GlobalKTable`'s store). The topic
/// is its changelog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalStoreDescription {
    /// Store name.
    pub name: String,
    /// The topic it is loaded from.
    pub topic: String,
    /// RocksDB (true) or in-memory (false).
    #[serde(default = "yes")]
    pub persistent: bool,
}

/// A task: one sub-topology over one partition of its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId {
    /// Sub-topology id.
    pub subtopology: u32,
    /// Input partition.
    pub partition: i32,
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.subtopology, self.partition)
    }
}

/// `<application.id>-<name>`: the repartition topic `name` of the application's topology.
pub fn repartition_topic_name(application_id: &str, name: &str) -> String {
    format!("{application_id}-{name}")
}

/// `<application.id>-<store>-changelog`.
pub fn changelog_topic_name(application_id: &str, store: &str) -> String {
    format!("{application_id}-{store}-changelog")
}
