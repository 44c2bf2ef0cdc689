//! The topology the engine runs, as Kafka Streams' `InternalTopologyBuilder` describes it:
//! sub-topologies with their source, repartition and sink topics and their stores.
//!
//! The description is plain serde data so that the JVM side can produce it as JSON from a
//! `Topology`. Repartition topic names are given as `Topology#describe` shows them, without
//! the application id (`KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition`, or a foreign-key
//! join's `KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic`); the engine prefixes them
//! ([`repartition_topic_name`]).
//!
//! [`ResolvedTopology`] is the same topology once resolved against the cluster
//! ([`internal_topics`](super::internal_topics)): full topic names, partition counts and each
//! store's changelog topic; it is what the engine's threads run.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::kafka::OffsetReset;
use crate::store::TopicPartition;

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
    /// Where each source topic's partitions without a committed offset (or with one out of
    /// range) start: its source's own policy (`Consumed.withOffsetResetPolicy`), else the
    /// consumer's `auto.offset.reset`. A topic not named starts where the consumer's does.
    #[serde(default)]
    pub offset_resets: BTreeMap<String, OffsetReset>,
}

/// One sub-topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubtopologyDescription {
    /// Kafka Streams' sub-topology id (the first half of a task id).
    pub id: u32,
    /// User topics it reads by name.
    #[serde(default)]
    pub source_topics: Vec<String>,
    /// Whether some of its sources subscribe by pattern (`StreamsBuilder#stream(Pattern)`):
    /// it may read no topic yet, and then has no task.
    #[serde(default)]
    pub has_patterns: bool,
    /// User topics it reads because they matched one of its patterns when last looked; one
    /// that is gone by the time the topology is resolved is left out, as no longer matched.
    #[serde(default)]
    pub matched_topics: Vec<String>,
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

/// The topology with full topic names and partition counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedTopology {
    /// The sub-topologies, in description order.
    pub subtopologies: Vec<ResolvedSubtopology>,
    /// The global stores.
    pub global_stores: Vec<ResolvedGlobalStore>,
    /// The repartition topics, which the topology both writes and reads.
    pub repartition_topics: BTreeSet<String>,
    /// Where each source topic's partitions without a committed offset start, as described.
    pub offset_resets: BTreeMap<String, OffsetReset>,
    /// The source topics read because they match a pattern: one that goes away is no longer
    /// matched, not missing.
    pub matched_topics: BTreeSet<String>,
}

/// A global store with the partition count of its topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedGlobalStore {
    /// The store as described.
    pub description: GlobalStoreDescription,
    /// Partitions of its topic; the store holds all of them.
    pub partitions: i32,
}

/// A sub-topology with full topic names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSubtopology {
    /// Sub-topology id.
    pub id: u32,
    /// Every topic it reads, user and repartition, by full name.
    pub source_topics: Vec<String>,
    /// Number of tasks (largest source partition count; 0 while its patterns match nothing).
    pub task_count: i32,
    /// Its stores.
    pub stores: Vec<ResolvedStore>,
}

impl ResolvedSubtopology {
    /// The partitions of source topics that the stores of its task on `partition` keep as
    /// their changelogs.
    pub fn source_topic_changelogs(&self, partition: i32) -> Vec<TopicPartition> {
        self.stores
            .iter()
            .filter(|store| store.changelog_is_source_topic())
            .filter_map(|store| store.changelog_topic.as_ref())
            .map(|topic| TopicPartition::new(topic.clone(), partition))
            .collect()
    }
}

/// A store with its changelog topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedStore {
    /// The store as described.
    pub description: StoreDescription,
    /// Its changelog topic, when logged: its own, or the source topic that serves as one.
    pub changelog_topic: Option<String>,
}

impl ResolvedStore {
    /// True when its changelog is a source topic of its sub-topology.
    pub fn changelog_is_source_topic(&self) -> bool {
        self.description.source_topic_changelog.is_some()
    }
}

impl ResolvedTopology {
    /// Every topic the group consumer subscribes to.
    pub fn source_topics(&self) -> Vec<String> {
        let topics: BTreeSet<&String> = self
            .subtopologies
            .iter()
            .flat_map(|s| &s.source_topics)
            .collect();
        topics.into_iter().cloned().collect()
    }

    /// The sub-topology with `id`.
    pub fn subtopology(&self, id: u32) -> Option<&ResolvedSubtopology> {
        self.subtopologies.iter().find(|s| s.id == id)
    }

    /// The task that reads `partition`.
    pub fn task_of(&self, partition: &TopicPartition) -> Option<TaskId> {
        self.subtopologies
            .iter()
            .find(|s| s.source_topics.contains(&partition.topic))
            .map(|s| TaskId {
                subtopology: s.id,
                partition: partition.partition,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_resets_read_by_name_or_by_duration() {
        let description: TopologyDescription = serde_json::from_str(
            r#"{"subtopologies": [], "offset_resets":
                {"a": "earliest", "b": "latest", "c": "none", "d": {"by_duration": 24000000}}}"#,
        )
        .unwrap();
        assert_eq!(
            description.offset_resets,
            BTreeMap::from([
                ("a".to_string(), OffsetReset::Earliest),
                ("b".to_string(), OffsetReset::Latest),
                ("c".to_string(), OffsetReset::None),
                ("d".to_string(), OffsetReset::ByDuration(24_000_000)),
            ])
        );
    }
}
