//! Purging repartition topics, as Kafka Streams does every `repartition.purge.interval.ms`.
//!
//! Repartition topics are created with infinite retention: the records the topology wrote
//! there are only ever read by its own tasks, so once a task committed its position in a
//! repartition partition, the records below it are of no use to anyone and are deleted.
//! User topics and changelogs are never touched.
//!
//! Deleting is best effort, as in Kafka Streams: at most one request is in flight, a new one
//! is sent only after the previous was answered, and a failed one is counted and otherwise
//! ignored, since the next asks for the newer offsets anyway. A partition is asked for only
//! when its committed offset moved past what was deleted already, and only while a running
//! task of this thread reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::engine::metrics::EngineMetrics;
use crate::kafka::{Admin, RecordDeletion};
use crate::store::TopicPartition;

/// The purge bookkeeping of one thread.
pub(crate) struct RepartitionPurge {
    topics: BTreeSet<String>,
    interval: Duration,
    last_purge: Instant,
    /// The offset each repartition partition's task committed last.
    committed: BTreeMap<TopicPartition, i64>,
    /// Offsets below which the brokers confirmed the records deleted.
    deleted: BTreeMap<TopicPartition, i64>,
    in_flight: Option<(RecordDeletion, BTreeMap<TopicPartition, i64>)>,
}

impl RepartitionPurge {
    /// Purges the partitions of `topics` at most once every `interval`, starting one
    /// interval from `now`.
    pub fn new(topics: BTreeSet<String>, interval: Duration, now: Instant) -> Self {
        RepartitionPurge {
            topics,
            interval,
            last_purge: now,
            committed: BTreeMap::new(),
            deleted: BTreeMap::new(),
            in_flight: None,
        }
    }

    /// Takes note of the offsets a commit just made durable; only repartition partitions
    /// are kept.
    pub fn committed<'a>(&mut self, offsets: impl IntoIterator<Item = (&'a TopicPartition, i64)>) {
        for (partition, offset) in offsets {
            if self.topics.contains(&partition.topic) {
                self.committed.insert(partition.clone(), offset);
            }
        }
    }

    /// Called after a commit: when the interval passed and the previous request was
    /// answered, asks `admin` to delete the committed records of the partitions in `owned`.
    pub fn maybe_purge(
        &mut self,
        admin: &Admin,
        owned: &BTreeSet<TopicPartition>,
        metrics: &EngineMetrics,
        now: Instant,
    ) {
        if !self.interval_passed(now) {
            return;
        }
        if let Some((request, asked)) = &mut self.in_flight {
            match request.outcome() {
                None => return,
                Some(Ok(())) => {
                    let asked = std::mem::take(asked);
                    self.confirmed(asked);
                }
                Some(Err(_)) => metrics.purge_failed(),
            }
            self.in_flight = None;
        }
        let due = self.due(owned);
        if !due.is_empty() {
            self.in_flight = Some((admin.delete_records(&due), due));
        }
    }

    /// True, and the interval restarts, when more than an interval passed since the last
    /// purge.
    fn interval_passed(&mut self, now: Instant) -> bool {
        if now.saturating_duration_since(self.last_purge) <= self.interval {
            return false;
        }
        self.last_purge = now;
        true
    }

    /// What to delete: each partition of `owned` whose committed offset is past what was
    /// deleted. Partitions this thread no longer reads are forgotten, since the offsets their
    /// new owner commits are its own to purge.
    fn due(&mut self, owned: &BTreeSet<TopicPartition>) -> BTreeMap<TopicPartition, i64> {
        self.committed
            .retain(|partition, _| owned.contains(partition));
        self.deleted
            .retain(|partition, _| owned.contains(partition));
        let deleted = |partition: &TopicPartition| self.deleted.get(partition).copied();
        self.committed
            .iter()
            .filter(|(partition, offset)| **offset > deleted(partition).unwrap_or(0))
            .map(|(partition, offset)| (partition.clone(), *offset))
            .collect()
    }

    fn confirmed(&mut self, asked: BTreeMap<TopicPartition, i64>) {
        for (partition, offset) in asked {
            let deleted = self.deleted.entry(partition).or_insert(offset);
            *deleted = (*deleted).max(offset);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition(topic: &str, partition: i32) -> TopicPartition {
        TopicPartition::new(topic, partition)
    }

    fn purge(now: Instant) -> RepartitionPurge {
        RepartitionPurge::new(
            BTreeSet::from(["app-by-word-repartition".to_string()]),
            Duration::from_secs(30),
            now,
        )
    }

    #[test]
    fn purges_at_most_once_per_interval() {
        let start = Instant::now();
        let mut purge = purge(start);
        assert!(!purge.interval_passed(start + Duration::from_secs(30)));
        assert!(purge.interval_passed(start + Duration::from_secs(31)));
        assert!(!purge.interval_passed(start + Duration::from_secs(60)));
        assert!(purge.interval_passed(start + Duration::from_secs(62)));
    }

    #[test]
    fn only_committed_repartition_partitions_of_running_tasks_are_due() {
        let mut purge = purge(Instant::now());
        let repartition = partition("app-by-word-repartition", 0);
        let revoked = partition("app-by-word-repartition", 1);
        let input = partition("input", 0);
        purge.committed([(&repartition, 5), (&revoked, 7), (&input, 9)]);
        let owned = BTreeSet::from([repartition.clone(), input.clone()]);
        assert_eq!(
            purge.due(&owned),
            BTreeMap::from([(repartition.clone(), 5)])
        );
        // A partition handed back later starts over: its old offset is gone.
        let owned = BTreeSet::from([repartition.clone(), revoked.clone()]);
        assert_eq!(purge.due(&owned), BTreeMap::from([(repartition, 5)]));
    }

    #[test]
    fn a_partition_is_asked_for_again_only_once_its_offset_moved_past_the_deleted_one() {
        let mut purge = purge(Instant::now());
        let first = partition("app-by-word-repartition", 0);
        let second = partition("app-by-word-repartition", 1);
        let owned = BTreeSet::from([first.clone(), second.clone()]);
        purge.committed([(&first, 0), (&second, 3)]);
        let due = purge.due(&owned);
        assert_eq!(
            due,
            BTreeMap::from([(second.clone(), 3)]),
            "nothing below 0"
        );
        // Until the brokers confirm, the same offsets are due again.
        assert_eq!(purge.due(&owned), due);
        purge.confirmed(due);
        assert!(purge.due(&owned).is_empty());
        purge.committed([(&first, 4), (&second, 3)]);
        assert_eq!(purge.due(&owned), BTreeMap::from([(first.clone(), 4)]));
        purge.committed([(&second, 8)]);
        assert_eq!(purge.due(&owned), BTreeMap::from([(first, 4), (second, 8)]));
    }
}
