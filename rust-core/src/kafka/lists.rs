//! rdkafka's partition lists, made from the engine's partitions and positions and read back
//! into them.

use std::collections::BTreeMap;

use rdkafka::topic_partition_list::{Offset, TopicPartitionList};

use crate::kafka::records::InputOffset;
use crate::store::TopicPartition;

/// The partitions of an rdkafka list.
pub fn partitions_of(list: &TopicPartitionList) -> Vec<TopicPartition> {
    list.elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect()
}

/// An rdkafka list of `partitions`, each at `offset` (`None`: no offset).
pub fn partition_list<'a>(
    partitions: impl IntoIterator<Item = (&'a TopicPartition, Option<i64>)>,
) -> TopicPartitionList {
    let mut list = TopicPartitionList::new();
    for (partition, offset) in partitions {
        let offset = offset.map_or(Offset::Invalid, Offset::Offset);
        list.add_partition_offset(&partition.topic, partition.partition, offset)
            .expect("a valid offset is always accepted");
    }
    list
}

/// An rdkafka list of positions to commit: each partition at its offset, with its metadata.
pub fn commit_list(consumed: &BTreeMap<TopicPartition, InputOffset>) -> TopicPartitionList {
    let mut list = TopicPartitionList::new();
    for (partition, position) in consumed {
        let mut element = list.add_partition(&partition.topic, partition.partition);
        element
            .set_offset(Offset::Offset(position.offset))
            .expect("a valid offset is always accepted");
        if let Some(metadata) = &position.metadata {
            element.set_metadata(metadata);
        }
    }
    list
}
