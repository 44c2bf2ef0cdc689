//! Resolving a topology against the cluster: full internal topic names, partition counts
//! derived the way Kafka Streams derives them, co-partitioning checks, and creation of the
//! missing changelog and repartition topics.
//!
//! - A repartition topic has the count the topology set, else the largest partition count
//!   among the source topics of the sub-topologies writing to it (applied until every
//!   count is known, so chains of repartition steps resolve).
//! - Topics of one co-partition group must agree: user topics must already have equal
//!   counts, repartition topics without a set count take that count.
//! - A sub-topology has one task per partition of its largest source topic; each changelog
//!   has one partition per task. A store whose changelog is a source topic of its
//!   sub-topology has no changelog topic of its own.
//! - Existing internal topics must have the derived count; they are never altered.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::error::{Error, Result};
use crate::engine::topology::{
    changelog_topic_name, repartition_topic_name, ResolvedGlobalStore, ResolvedStore,
    ResolvedSubtopology, ResolvedTopology, StoreDescription, SubtopologyDescription,
    TopologyDescription,
};
use crate::kafka::{Admin, TopicSpec};

/// Internal topic settings Kafka Streams applies to every internal topic.
const INTERNAL_TOPIC_CONFIGS: [(&str, &str); 1] = [("message.timestamp.type", "CreateTime")];
const REPARTITION_TOPIC_CONFIGS: [(&str, &str); 3] = [
    ("cleanup.policy", "delete"),
    ("segment.bytes", "52428800"),
    ("retention.ms", "-1"),
];
const CHANGELOG_TOPIC_CONFIGS: [(&str, &str); 1] = [("cleanup.policy", "compact")];

/// Resolves `topology` against the cluster and creates the internal topics it lacks.
pub fn prepare(
    application_id: &str,
    topology: &TopologyDescription,
    admin: &Admin,
    replication_factor: i32,
) -> Result<ResolvedTopology> {
    let mut topics: Vec<String> = topology
        .global_stores
        .iter()
        .map(|g| g.topic.clone())
        .collect();
    for sub in &topology.subtopologies {
        topics.extend(sub.source_topics.iter().cloned());
        topics.extend(sub.matched_topics.iter().cloned());
        for repartition in &sub.repartition_source_topics {
            topics.push(repartition_topic_name(application_id, &repartition.name));
        }
        for store in &sub.stores {
            if store.logged && store.source_topic_changelog.is_none() {
                topics.push(changelog_topic_name(application_id, &store.name));
            }
        }
    }
    let existing = admin.partition_counts(&topics)?;
    let (resolved, specs) = plan(application_id, topology, &existing, replication_factor)?;
    admin.create_topics(&specs)?;
    Ok(resolved)
}

/// Derives names and counts from the `existing` partition counts (`None`: missing topic)
/// and lists the topics to create.
pub fn plan(
    application_id: &str,
    topology: &TopologyDescription,
    existing: &BTreeMap<String, Option<i32>>,
    replication_factor: i32,
) -> Result<(ResolvedTopology, Vec<TopicSpec>)> {
    let repartition = |name: &str| repartition_topic_name(application_id, name);
    let count_of = |topic: &String| existing.get(topic).copied().flatten();
    // The topics a pattern matched that are still there are read like named ones.
    let matched_topics: BTreeSet<String> = topology
        .subtopologies
        .iter()
        .flat_map(|sub| &sub.matched_topics)
        .filter(|topic| count_of(topic).is_some())
        .cloned()
        .collect();
    let mut topology = topology.clone();
    for sub in &mut topology.subtopologies {
        let matched = std::mem::take(&mut sub.matched_topics);
        sub.source_topics
            .extend(matched.into_iter().filter(|t| matched_topics.contains(t)));
    }
    let topology = &topology;
    let mut counts: BTreeMap<String, i32> = BTreeMap::new();
    let mut internal: BTreeSet<String> = BTreeSet::new();
    let mut explicit: BTreeSet<String> = BTreeSet::new();
    let mut repartition_configs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let missing_sources: BTreeSet<&String> = topology
        .subtopologies
        .iter()
        .flat_map(|sub| &sub.source_topics)
        .filter(|topic| count_of(topic).is_none())
        .collect();
    if !missing_sources.is_empty() {
        return Err(Error::MissingSourceTopics(
            missing_sources.into_iter().cloned().collect(),
        ));
    }
    for sub in &topology.subtopologies {
        for topic in &sub.source_topics {
            if let Some(count) = count_of(topic) {
                counts.insert(topic.clone(), count);
            }
        }
        for topic in &sub.repartition_source_topics {
            let name = repartition(&topic.name);
            internal.insert(name.clone());
            repartition_configs
                .entry(name.clone())
                .or_default()
                .extend(topic.configs.clone());
            if let Some(count) = topic.partitions {
                if count < 1 {
                    return Err(Error::Topology(format!(
                        "repartition topic {name}: {count} partitions"
                    )));
                }
                counts.insert(name.clone(), count);
                explicit.insert(name);
            }
        }
    }
    derive_repartition_counts(topology, &repartition, &internal, &mut counts)?;
    enforce_copartitioning(topology, &repartition, &internal, &explicit, &mut counts)?;

    let mut subtopologies = Vec::new();
    let mut specs = Vec::new();
    for sub in &topology.subtopologies {
        let source_topics: Vec<String> = sub
            .source_topics
            .iter()
            .cloned()
            .chain(
                sub.repartition_source_topics
                    .iter()
                    .map(|t| repartition(&t.name)),
            )
            .collect();
        let task_count = match source_topics.iter().map(|t| counts[t]).max() {
            Some(count) => count,
            // Its changelogs are made once a topic matches, when its task count is known.
            None if sub.has_patterns => 0,
            None => {
                return Err(Error::Topology(format!(
                    "sub-topology {} has no source topic",
                    sub.id
                )))
            }
        };
        let mut stores = Vec::new();
        for store in &sub.stores {
            let changelog_topic = match &store.source_topic_changelog {
                Some(source) => Some(source_changelog(sub, store, source)?),
                None => store
                    .logged
                    .then(|| changelog_topic_name(application_id, &store.name)),
            };
            let made_now = task_count > 0 && store.source_topic_changelog.is_none();
            if let (Some(topic), true) = (&changelog_topic, made_now) {
                let configs = CHANGELOG_TOPIC_CONFIGS
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .chain(store.changelog_configs.clone())
                    .collect();
                specs.push(spec(topic, task_count, replication_factor, configs));
            }
            stores.push(ResolvedStore {
                description: store.clone(),
                changelog_topic,
            });
        }
        subtopologies.push(ResolvedSubtopology {
            id: sub.id,
            source_topics,
            task_count,
            stores,
        });
    }
    for topic in &internal {
        let configs = REPARTITION_TOPIC_CONFIGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(repartition_configs.remove(topic).unwrap_or_default())
            .collect();
        specs.push(spec(topic, counts[topic], replication_factor, configs));
    }
    let mut missing = Vec::new();
    for spec in specs {
        match existing.get(&spec.name).copied().flatten() {
            None => missing.push(spec),
            Some(count) if count == spec.partitions => {}
            Some(count) => {
                return Err(Error::Topology(format!(
                    "internal topic {} has {count} partitions but the topology needs {}",
                    spec.name, spec.partitions
                )))
            }
        }
    }
    let global_stores = topology
        .global_stores
        .iter()
        .map(
            |global| match existing.get(&global.topic).copied().flatten() {
                Some(partitions) => Ok(ResolvedGlobalStore {
                    description: global.clone(),
                    partitions,
                }),
                None => Err(Error::Topology(format!(
                    "topic {} of global store {} does not exist",
                    global.topic, global.name
                ))),
            },
        )
        .collect::<Result<Vec<_>>>()?;
    Ok((
        ResolvedTopology {
            subtopologies,
            global_stores,
            repartition_topics: internal,
            offset_resets: topology.offset_resets.clone(),
            matched_topics,
        },
        missing,
    ))
}

/// The source topic `source` that serves `store` of `sub` as its changelog, checked: it
/// must be a user source topic of the sub-topology, so that each task restores the
/// partition it also reads.
fn source_changelog(
    sub: &SubtopologyDescription,
    store: &StoreDescription,
    source: &str,
) -> Result<String> {
    if !sub.source_topics.iter().any(|t| t == source) {
        return Err(Error::Topology(format!(
            "store {} uses {source} as its changelog, which is not a source topic of \
             sub-topology {}",
            store.name, sub.id
        )));
    }
    Ok(source.to_string())
}

fn spec(
    name: &str,
    partitions: i32,
    replication_factor: i32,
    topic_configs: BTreeMap<String, String>,
) -> TopicSpec {
    let mut configs: BTreeMap<String, String> = INTERNAL_TOPIC_CONFIGS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    configs.extend(topic_configs);
    TopicSpec {
        name: name.to_string(),
        partitions,
        replication_factor,
        configs,
    }
}

/// Gives each repartition topic without a count the largest count among the sources of
/// the sub-topologies that write it, repeating until nothing changes. Where sub-topologies feed
/// each other in a cycle (a foreign-key join's subscription and response topics), no topic of
/// the cycle has all its upstream counts: as in Kafka Streams, the counts known so far decide,
/// and co-partitioning corrects them afterwards.
fn derive_repartition_counts(
    topology: &TopologyDescription,
    repartition: &dyn Fn(&str) -> String,
    internal: &BTreeSet<String>,
    counts: &mut BTreeMap<String, i32>,
) -> Result<()> {
    let mut settle_for_known = false;
    loop {
        let mut progressed = false;
        let unresolved: Vec<&String> = internal
            .iter()
            .filter(|t| !counts.contains_key(*t))
            .collect();
        for topic in unresolved {
            let upstream = upstream_counts(topology, repartition, topic, counts)?;
            let decided = upstream.unknown == 0 || (settle_for_known && upstream.largest.is_some());
            if let (true, Some(count)) = (decided, upstream.largest) {
                counts.insert(topic.clone(), count);
                progressed = true;
            }
        }
        if internal.iter().all(|t| counts.contains_key(t)) {
            return Ok(());
        }
        if progressed {
            settle_for_known = false;
        } else if !settle_for_known {
            settle_for_known = true;
        } else {
            let unresolved: Vec<_> = internal
                .iter()
                .filter(|t| !counts.contains_key(*t))
                .collect();
            return Err(Error::Topology(format!(
                "cannot derive partition counts of {unresolved:?}: no sub-topology writing them \
                 reads a topic of known partition count"
            )));
        }
    }
}

/// The partition counts of the topics that the sub-topologies writing `topic` read.
struct UpstreamCounts {
    /// The largest count known.
    largest: Option<i32>,
    /// How many of those topics have no count yet.
    unknown: usize,
}

fn upstream_counts(
    topology: &TopologyDescription,
    repartition: &dyn Fn(&str) -> String,
    topic: &str,
    counts: &BTreeMap<String, i32>,
) -> Result<UpstreamCounts> {
    let mut upstream = UpstreamCounts {
        largest: None,
        unknown: 0,
    };
    let mut written = false;
    for sub in &topology.subtopologies {
        if !sub
            .repartition_sink_topics
            .iter()
            .any(|t| repartition(t) == topic)
        {
            continue;
        }
        written = true;
        let sources = sub.source_topics.iter().cloned().chain(
            sub.repartition_source_topics
                .iter()
                .map(|t| repartition(&t.name)),
        );
        for source in sources {
            match counts.get(&source) {
                Some(&count) => upstream.largest = upstream.largest.max(Some(count)),
                None => upstream.unknown += 1,
            }
        }
    }
    if !written {
        return Err(Error::Topology(format!(
            "repartition topic {topic} is read but no sub-topology writes it"
        )));
    }
    Ok(upstream)
}

fn enforce_copartitioning(
    topology: &TopologyDescription,
    repartition: &dyn Fn(&str) -> String,
    internal: &BTreeSet<String>,
    explicit: &BTreeSet<String>,
    counts: &mut BTreeMap<String, i32>,
) -> Result<()> {
    for group in &topology.copartition_groups {
        let topics: Vec<String> = group
            .iter()
            .map(|name| {
                let prefixed = repartition(name);
                if internal.contains(&prefixed) {
                    prefixed
                } else {
                    name.clone()
                }
            })
            .collect();
        let count_of = |topic: &String| counts.get(topic).copied().unwrap_or_default();
        let external: BTreeMap<&String, i32> = topics
            .iter()
            .filter(|t| !internal.contains(*t))
            .map(|t| (t, count_of(t)))
            .collect();
        let enforced: BTreeMap<&String, i32> = topics
            .iter()
            .filter(|t| internal.contains(*t) && explicit.contains(*t))
            .map(|t| (t, count_of(t)))
            .collect();
        // Kafka Streams' rules and words: the user topics decide, else the repartition topics
        // whose count the topology sets, else the largest count.
        let target = if let Some(&first) = external.values().next() {
            if external.values().any(|count| *count != first) {
                return Err(Error::Topology(format!(
                    "Topics not co-partitioned: [{}]",
                    java_map(&external)
                )));
            }
            first
        } else if let Some(&first) = enforced.values().next() {
            if enforced.values().any(|count| *count != first) {
                return Err(Error::Topology(format!(
                    "Following topics do not have the same number of partitions: [{}]",
                    java_map(&enforced)
                )));
            }
            first
        } else {
            topics.iter().map(count_of).max().unwrap_or(1)
        };
        if let Some((topic, count)) = enforced.iter().find(|(_, count)| **count != target) {
            return Err(Error::Topology(format!(
                "Number of partitions [{count}] of repartition topic [{topic}] doesn't match \
                 number of partitions [{target}] of the source topic."
            )));
        }
        for topic in topics
            .iter()
            .filter(|t| internal.contains(*t) && !explicit.contains(*t))
        {
            counts.insert(topic.clone(), target);
        }
    }
    Ok(())
}

/// `counts` as Java prints a sorted map (`{a=1, b=2}`), which Kafka Streams' messages show.
fn java_map(counts: &BTreeMap<&String, i32>) -> String {
    let entries: Vec<String> = counts
        .iter()
        .map(|(topic, count)| format!("{topic}={count}"))
        .collect();
    format!("{{{}}}", entries.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::topology::{RepartitionTopicDescription, SubtopologyDescription};

    fn counter_topology() -> TopologyDescription {
        TopologyDescription {
            subtopologies: vec![
                SubtopologyDescription {
                    id: 0,
                    source_topics: vec!["input".into()],
                    has_patterns: false,
                    matched_topics: vec![],
                    repartition_source_topics: vec![],
                    sink_topics: vec![],
                    repartition_sink_topics: vec!["by-word-repartition".into()],
                    stores: vec![],
                },
                SubtopologyDescription {
                    id: 1,
                    source_topics: vec![],
                    has_patterns: false,
                    matched_topics: vec![],
                    repartition_source_topics: vec![RepartitionTopicDescription {
                        name: "by-word-repartition".into(),
                        partitions: None,
                        configs: BTreeMap::new(),
                    }],
                    sink_topics: vec!["output".into()],
                    repartition_sink_topics: vec![],
                    stores: vec![serde_json::from_str(r#"{"name":"counts"}"#).unwrap()],
                },
            ],
            global_stores: vec![],
            copartition_groups: vec![],
            offset_resets: Default::default(),
        }
    }

    fn existing(entries: &[(&str, Option<i32>)]) -> BTreeMap<String, Option<i32>> {
        entries.iter().map(|(t, c)| (t.to_string(), *c)).collect()
    }

    #[test]
    fn matched_topics_are_read_while_they_are_there_and_a_pattern_may_match_none() {
        let mut topology = counter_topology();
        topology.subtopologies[0].source_topics.clear();
        topology.subtopologies[0].has_patterns = true;
        topology.subtopologies[0].matched_topics = vec!["in-a".into(), "in-b".into()];
        let (resolved, specs) = plan(
            "app",
            &topology,
            &existing(&[("in-a", Some(2)), ("in-b", None)]),
            -1,
        )
        .unwrap();
        assert_eq!(resolved.subtopologies[0].source_topics, vec!["in-a"]);
        assert_eq!(
            resolved.matched_topics,
            BTreeSet::from(["in-a".to_string()])
        );
        assert_eq!(resolved.subtopologies[1].task_count, 2);
        assert!(specs
            .iter()
            .any(|s| s.name == "app-counts-changelog" && s.partitions == 2));

        topology.subtopologies.truncate(1);
        topology.subtopologies[0].repartition_sink_topics.clear();
        topology.subtopologies[0].stores =
            vec![serde_json::from_str(r#"{"name":"seen"}"#).unwrap()];
        topology.subtopologies[0].matched_topics.clear();
        let (resolved, specs) = plan("app", &topology, &existing(&[]), -1).unwrap();
        assert_eq!(resolved.subtopologies[0].task_count, 0);
        assert!(
            specs.is_empty(),
            "no changelog before a topic matches: {specs:?}"
        );

        topology.subtopologies[0].has_patterns = false;
        assert!(matches!(
            plan("app", &topology, &existing(&[]), -1),
            Err(Error::Topology(m)) if m.contains("no source topic")
        ));
    }

    #[test]
    fn repartition_and_changelog_follow_the_upstream_source() {
        let (resolved, specs) = plan(
            "app",
            &counter_topology(),
            &existing(&[("input", Some(3))]),
            -1,
        )
        .unwrap();
        assert_eq!(resolved.subtopologies[1].task_count, 3);
        assert_eq!(
            resolved.subtopologies[1].source_topics,
            vec!["app-by-word-repartition"]
        );
        assert_eq!(
            resolved.repartition_topics,
            BTreeSet::from(["app-by-word-repartition".to_string()])
        );
        let by_name: BTreeMap<_, _> = specs.iter().map(|s| (s.name.as_str(), s)).collect();
        let changelog = by_name["app-counts-changelog"];
        assert_eq!(changelog.partitions, 3);
        assert_eq!(changelog.configs["cleanup.policy"], "compact");
        let repartition = by_name["app-by-word-repartition"];
        assert_eq!(repartition.partitions, 3);
        assert_eq!(repartition.configs["retention.ms"], "-1");
        assert_eq!(repartition.configs["cleanup.policy"], "delete");
    }

    #[test]
    fn a_repartition_topic_takes_the_configs_the_application_set() {
        let mut topology = counter_topology();
        topology.subtopologies[1].repartition_source_topics[0].configs =
            BTreeMap::from([("segment.bytes".to_string(), "1024".to_string())]);
        let (_, specs) = plan("app", &topology, &existing(&[("input", Some(3))]), -1).unwrap();
        let repartition = specs
            .iter()
            .find(|s| s.name == "app-by-word-repartition")
            .unwrap();
        assert_eq!(
            repartition.configs["segment.bytes"], "1024",
            "the application's wins"
        );
        assert_eq!(repartition.configs["cleanup.policy"], "delete");
    }

    #[test]
    fn missing_source_and_wrong_internal_count_fail() {
        let missing = plan(
            "app",
            &counter_topology(),
            &existing(&[("input", None)]),
            -1,
        );
        assert!(
            matches!(&missing, Err(Error::MissingSourceTopics(topics)) if topics == &["input"]),
            "{missing:?}"
        );
        let wrong = plan(
            "app",
            &counter_topology(),
            &existing(&[("input", Some(3)), ("app-counts-changelog", Some(2))]),
            -1,
        );
        assert!(matches!(wrong, Err(Error::Topology(m)) if m.contains("app-counts-changelog")));
    }

    #[test]
    fn a_global_store_takes_every_partition_of_its_existing_topic() {
        let mut topology = counter_topology();
        topology.global_stores =
            vec![serde_json::from_str(r#"{"name":"labels","topic":"labels-topic"}"#).unwrap()];
        let (resolved, specs) = plan(
            "app",
            &topology,
            &existing(&[("input", Some(3)), ("labels-topic", Some(5))]),
            -1,
        )
        .unwrap();
        assert_eq!(resolved.global_stores[0].partitions, 5);
        assert!(resolved.global_stores[0].description.persistent);
        assert!(
            specs.iter().all(|s| s.name != "labels-topic"),
            "never created"
        );
        let missing = plan(
            "app",
            &topology,
            &existing(&[("input", Some(3)), ("labels-topic", None)]),
            -1,
        );
        assert!(matches!(missing, Err(Error::Topology(m)) if m.contains("labels-topic")));
    }

    fn repartition(name: &str) -> RepartitionTopicDescription {
        RepartitionTopicDescription {
            name: name.into(),
            partitions: None,
            configs: BTreeMap::new(),
        }
    }

    /// A foreign-key join as Kafka Streams describes it: the orders sub-topology writes
    /// subscriptions to the customers' one and reads its responses, which feed each other.
    fn foreign_key_join_topology() -> TopologyDescription {
        const REGISTRATION: &str = "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic";
        const RESPONSE: &str = "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic";
        TopologyDescription {
            subtopologies: vec![
                SubtopologyDescription {
                    id: 0,
                    source_topics: vec!["orders".into()],
                    has_patterns: false,
                    matched_topics: vec![],
                    repartition_source_topics: vec![repartition(RESPONSE)],
                    sink_topics: vec!["enriched".into()],
                    repartition_sink_topics: vec![REGISTRATION.into()],
                    stores: vec![],
                },
                SubtopologyDescription {
                    id: 1,
                    source_topics: vec!["customers".into()],
                    has_patterns: false,
                    matched_topics: vec![],
                    repartition_source_topics: vec![repartition(REGISTRATION)],
                    sink_topics: vec![],
                    repartition_sink_topics: vec![RESPONSE.into()],
                    stores: vec![],
                },
            ],
            global_stores: vec![],
            copartition_groups: vec![
                vec![REGISTRATION.into(), "customers".into()],
                vec![RESPONSE.into(), "orders".into()],
            ],
            offset_resets: Default::default(),
        }
    }

    #[test]
    fn a_foreign_key_join_s_topics_keep_their_names_and_follow_their_co_partitioned_sources() {
        let (resolved, specs) = plan(
            "app",
            &foreign_key_join_topology(),
            &existing(&[("orders", Some(3)), ("customers", Some(2))]),
            -1,
        )
        .unwrap();
        let by_name: BTreeMap<_, _> = specs
            .iter()
            .map(|s| (s.name.as_str(), s.partitions))
            .collect();
        assert_eq!(
            by_name,
            BTreeMap::from([
                (
                    "app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
                    2
                ),
                (
                    "app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic",
                    3
                ),
            ])
        );
        assert_eq!(resolved.subtopologies[0].task_count, 3);
        assert_eq!(resolved.subtopologies[1].task_count, 2);
    }

    #[test]
    fn copartitioning_mismatch_fails_and_repartition_topics_follow_the_group() {
        let mut topology = counter_topology();
        topology.subtopologies[1].source_topics.push("table".into());
        topology.copartition_groups = vec![vec!["by-word-repartition".into(), "table".into()]];
        let (resolved, _) = plan(
            "app",
            &topology,
            &existing(&[("input", Some(3)), ("table", Some(5))]),
            -1,
        )
        .unwrap();
        assert_eq!(resolved.subtopologies[1].task_count, 5);

        topology.subtopologies[1].source_topics.push("other".into());
        topology.copartition_groups = vec![vec!["table".into(), "other".into()]];
        let mismatch = plan(
            "app",
            &topology,
            &existing(&[("input", Some(3)), ("table", Some(5)), ("other", Some(4))]),
            -1,
        );
        assert!(
            matches!(&mismatch, Err(Error::Topology(m)) if m == "Topics not co-partitioned: [{other=4, table=5}]"),
            "{mismatch:?}"
        );

        // A repartition topic whose count the topology sets must have the user topics' count.
        topology.copartition_groups = vec![vec!["by-word-repartition".into(), "table".into()]];
        topology.subtopologies[1].repartition_source_topics[0].partitions = Some(2);
        let enforced = plan(
            "app",
            &topology,
            &existing(&[("input", Some(3)), ("table", Some(5)), ("other", Some(4))]),
            -1,
        );
        assert!(
            matches!(&enforced, Err(Error::Topology(m)) if m == "Number of partitions [2] of repartition \
                topic [app-by-word-repartition] doesn't match number of partitions [5] of the source topic."),
            "{enforced:?}"
        );
    }

    /// A source table's store (sub-topology 0 reads `input`) with `input` as its changelog.
    fn source_table_topology(changelog: &str) -> TopologyDescription {
        let mut topology = counter_topology();
        topology.subtopologies[0].stores = vec![serde_json::from_str(&format!(
            r#"{{"name":"table","source_topic_changelog":"{changelog}"}}"#
        ))
        .unwrap()];
        topology
    }

    #[test]
    fn a_source_topic_serves_as_changelog_without_a_changelog_topic() {
        let (resolved, specs) = plan(
            "app",
            &source_table_topology("input"),
            &existing(&[("input", Some(3))]),
            -1,
        )
        .unwrap();
        let store = &resolved.subtopologies[0].stores[0];
        assert_eq!(store.changelog_topic.as_deref(), Some("input"));
        assert!(store.changelog_is_source_topic());
        let created: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert!(!created.contains(&"app-table-changelog"), "{created:?}");
        assert!(!created.contains(&"input"), "{created:?}");
    }

    #[test]
    fn a_source_topic_changelog_must_be_read_by_the_store_sub_topology() {
        let elsewhere = plan(
            "app",
            &source_table_topology("other"),
            &existing(&[("input", Some(3)), ("other", Some(3))]),
            -1,
        );
        assert!(
            matches!(&elsewhere, Err(Error::Topology(m)) if m.contains("not a source topic")),
            "{elsewhere:?}"
        );
    }
}
