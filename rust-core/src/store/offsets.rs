//! Store-managed changelog offsets (KIP-1035).
//!
//! A store records, in the same atomic write as its data, the changelog offsets that data
//! corresponds to, plus the opaque interactive-query position and the layout of its values
//! ([`value_layout`](crate::store::value_layout)). [`CommitMetadata`] is what
//! a commit hands over; [`StoredOffsets`] is the store's current copy and computes what a
//! commit changes, so a backend can persist exactly those changes and adopt the new copy
//! only once the write succeeded.

use std::collections::BTreeMap;
use std::fmt;

use crate::store::error::{Error, Result};
use crate::store::value_layout::{RecordedLayout, UpgradeProgress, ValueLayout};

/// A changelog topic partition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    /// Topic name.
    pub topic: String,
    /// Partition number.
    pub partition: i32,
}

impl TopicPartition {
    /// A topic partition.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// What a commit records next to the data, mirroring Kafka Streams'
/// `StateStore.commit(Map<TopicPartition, Long>)`:
///
/// - an empty `offsets` map removes every stored offset;
/// - otherwise each `Some(offset)` replaces that partition's offset, each `None` removes
///   it, and partitions not named keep theirs;
/// - `position`, when `Some`, replaces the stored interactive-query position (opaque bytes
///   serialized by the caller); `None` keeps the stored one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitMetadata {
    /// Changelog offsets to record, per partition.
    pub offsets: BTreeMap<TopicPartition, Option<i64>>,
    /// New interactive-query position, if it changed.
    pub position: Option<Vec<u8>>,
}

impl CommitMetadata {
    /// Records `offsets` and leaves the position as it is.
    pub fn with_offsets(offsets: impl IntoIterator<Item = (TopicPartition, Option<i64>)>) -> Self {
        CommitMetadata {
            offsets: offsets.into_iter().collect(),
            position: None,
        }
    }

    /// Also replaces the interactive-query position.
    pub fn and_position(mut self, position: Vec<u8>) -> Self {
        self.position = Some(position);
        self
    }

    fn validate(&self) -> Result<()> {
        for (partition, offset) in &self.offsets {
            if partition.topic.is_empty() {
                return Err(Error::InvalidArgument(
                    "changelog topic name is empty".into(),
                ));
            }
            if partition.partition < 0 {
                return Err(Error::InvalidArgument(format!(
                    "negative partition in {partition}"
                )));
            }
            if let Some(offset) = offset.filter(|o| *o < 0) {
                return Err(Error::InvalidArgument(format!(
                    "negative changelog offset {offset} for {partition}"
                )));
            }
        }
        Ok(())
    }
}

/// One change to the persisted offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffsetChange {
    Set(TopicPartition, i64),
    Remove(TopicPartition),
    Position(Vec<u8>),
    ValueLayout(ValueLayout),
    /// How far an upgrade of the values got; `None` once it finished.
    LayoutUpgrade(Option<UpgradeProgress>),
}

/// The offsets and position a store has committed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredOffsets {
    offsets: BTreeMap<TopicPartition, i64>,
    position: Option<Vec<u8>>,
    value_layout: Option<RecordedLayout>,
}

impl StoredOffsets {
    /// Rebuilds the copy from persisted entries (the backend decodes them).
    pub fn from_parts(
        offsets: BTreeMap<TopicPartition, i64>,
        position: Option<Vec<u8>>,
        value_layout: Option<RecordedLayout>,
    ) -> Self {
        StoredOffsets {
            offsets,
            position,
            value_layout,
        }
    }

    pub fn value_layout(&self) -> Option<&RecordedLayout> {
        self.value_layout.as_ref()
    }

    /// The copy after `layout` and `upgrade` were recorded, and the changes that record them.
    pub(crate) fn with_layout(
        &self,
        layout: ValueLayout,
        upgrade: Option<UpgradeProgress>,
    ) -> (StoredOffsets, Vec<OffsetChange>) {
        let mut next = self.clone();
        next.value_layout = Some(RecordedLayout {
            layout,
            upgrade: upgrade.clone(),
        });
        let changes = vec![
            OffsetChange::ValueLayout(layout),
            OffsetChange::LayoutUpgrade(upgrade),
        ];
        (next, changes)
    }

    pub fn offset(&self, partition: &TopicPartition) -> Option<i64> {
        self.offsets.get(partition).copied()
    }

    pub fn position(&self) -> Option<&[u8]> {
        self.position.as_deref()
    }

    /// The copy after `commit`, and the changes that lead there. Validates the metadata
    /// first, so a bad commit changes nothing.
    pub fn after(&self, commit: &CommitMetadata) -> Result<(StoredOffsets, Vec<OffsetChange>)> {
        commit.validate()?;
        let mut next = self.clone();
        let mut changes = Vec::new();
        if commit.offsets.is_empty() {
            for partition in std::mem::take(&mut next.offsets).into_keys() {
                changes.push(OffsetChange::Remove(partition));
            }
        }
        for (partition, offset) in &commit.offsets {
            match offset {
                Some(offset) => {
                    next.offsets.insert(partition.clone(), *offset);
                    changes.push(OffsetChange::Set(partition.clone(), *offset));
                }
                None => {
                    if next.offsets.remove(partition).is_some() {
                        changes.push(OffsetChange::Remove(partition.clone()));
                    }
                }
            }
        }
        if let Some(position) = &commit.position {
            next.position = Some(position.clone());
            changes.push(OffsetChange::Position(position.clone()));
        }
        Ok((next, changes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(partition: i32) -> TopicPartition {
        TopicPartition::new("app-store-changelog", partition)
    }

    #[test]
    fn named_partitions_change_and_others_stay() {
        let stored = StoredOffsets::default();
        let (stored, _) = stored
            .after(&CommitMetadata::with_offsets([
                (tp(0), Some(10)),
                (tp(1), Some(20)),
            ]))
            .unwrap();
        let (stored, changes) = stored
            .after(&CommitMetadata::with_offsets([(tp(0), Some(11))]))
            .unwrap();
        assert_eq!(changes, vec![OffsetChange::Set(tp(0), 11)]);
        assert_eq!(stored.offset(&tp(0)), Some(11));
        assert_eq!(stored.offset(&tp(1)), Some(20));
    }

    #[test]
    fn none_removes_one_partition_and_empty_map_removes_all() {
        let (stored, _) = StoredOffsets::default()
            .after(&CommitMetadata::with_offsets([
                (tp(0), Some(1)),
                (tp(1), Some(2)),
                (tp(2), Some(3)),
            ]))
            .unwrap();
        let (stored, changes) = stored
            .after(&CommitMetadata::with_offsets([(tp(1), None)]))
            .unwrap();
        assert_eq!(changes, vec![OffsetChange::Remove(tp(1))]);
        assert_eq!(stored.offset(&tp(1)), None);
        let (stored, changes) = stored
            .after(&CommitMetadata::default().and_position(b"pos".to_vec()))
            .unwrap();
        assert_eq!(changes.len(), 3);
        assert_eq!(stored.offset(&tp(0)), None);
        assert_eq!(stored.offset(&tp(2)), None);
        assert_eq!(stored.position(), Some(&b"pos"[..]));
    }

    #[test]
    fn invalid_metadata_is_rejected() {
        let stored = StoredOffsets::default();
        assert!(stored
            .after(&CommitMetadata::with_offsets([(tp(0), Some(-5))]))
            .is_err());
        assert!(stored
            .after(&CommitMetadata::with_offsets([(
                TopicPartition::new("", 0),
                Some(1)
            )]))
            .is_err());
        assert!(stored
            .after(&CommitMetadata::with_offsets([(tp(-1), Some(1))]))
            .is_err());
    }
}
