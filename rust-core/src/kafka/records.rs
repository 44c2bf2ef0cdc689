//! Records as the engine and task processors see them: owned bytes, no rdkafka types, so
//! a record can outlive the poll that returned it and cross into a task processor.

use rdkafka::message::{BorrowedMessage, Header as RdHeader, Headers, Message, OwnedHeaders};

use crate::store::TopicPartition;

/// One record header. Kafka header keys are strings; values may be null.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Header key.
    pub key: String,
    /// Header value; `None` is Java's `null`.
    pub value: Option<Vec<u8>>,
}

/// The headers of `message`, copied out of librdkafka's buffers, in order.
pub(crate) fn copied_headers<M: Message>(message: &M) -> Vec<Header> {
    message
        .headers()
        .map(|headers| {
            headers
                .iter()
                .map(|h| Header {
                    key: h.key.to_string(),
                    value: h.value.map(<[u8]>::to_vec),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A consumed position to commit: the next offset to read, and the metadata Kafka Streams
/// keeps with it (the partition's stream time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputOffset {
    /// Next offset to read.
    pub offset: i64,
    /// Commit metadata.
    pub metadata: Option<String>,
}

/// A record read from a source, repartition or changelog topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedRecord {
    /// Topic it was read from.
    pub topic: String,
    /// Partition it was read from.
    pub partition: i32,
    /// Its offset in that partition.
    pub offset: i64,
    /// Record timestamp (create or log-append time, as the topic says), -1 when absent.
    pub timestamp: i64,
    /// Record key; `None` is Kafka's null key.
    pub key: Option<Vec<u8>>,
    /// Record value; `None` is a tombstone.
    pub value: Option<Vec<u8>>,
    /// Record headers, in order.
    pub headers: Vec<Header>,
}

impl ConsumedRecord {
    /// Copies a polled message out of librdkafka's buffers.
    pub fn from_message(message: &BorrowedMessage<'_>) -> Self {
        let headers = copied_headers(message);
        ConsumedRecord {
            topic: message.topic().to_string(),
            partition: message.partition(),
            offset: message.offset(),
            timestamp: message.timestamp().to_millis().unwrap_or(-1),
            key: message.key().map(<[u8]>::to_vec),
            value: message.payload().map(<[u8]>::to_vec),
            headers,
        }
    }

    /// The topic partition the record came from.
    pub fn topic_partition(&self) -> TopicPartition {
        TopicPartition::new(self.topic.clone(), self.partition)
    }
}

/// A record to write: to a sink, a repartition topic or a changelog topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducedRecord {
    /// Destination topic (full name, internal topics included).
    pub topic: String,
    /// Destination partition; `None` lets the producer's partitioner choose, which is
    /// configured as Kafka's Java default (murmur2 of the key).
    pub partition: Option<i32>,
    /// Record key.
    pub key: Option<Vec<u8>>,
    /// Record value; `None` is a tombstone.
    pub value: Option<Vec<u8>>,
    /// Record timestamp.
    pub timestamp: i64,
    /// Record headers, in order.
    pub headers: Vec<Header>,
}

impl ProducedRecord {
    /// A record without headers.
    pub fn new(
        topic: impl Into<String>,
        partition: Option<i32>,
        key: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
        timestamp: i64,
    ) -> Self {
        ProducedRecord {
            topic: topic.into(),
            partition,
            key,
            value,
            timestamp,
            headers: Vec::new(),
        }
    }

    /// The headers in rdkafka's form, or `None` when there are none.
    pub(crate) fn rdkafka_headers(&self) -> Option<OwnedHeaders> {
        if self.headers.is_empty() {
            return None;
        }
        let mut owned = OwnedHeaders::new_with_capacity(self.headers.len());
        for header in &self.headers {
            owned = owned.insert(RdHeader {
                key: &header.key,
                value: header.value.as_deref(),
            });
        }
        Some(owned)
    }
}
