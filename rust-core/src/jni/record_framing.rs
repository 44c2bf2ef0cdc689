//! Byte layouts of what crosses between the engine and the JVM's task runners: records,
//! positions and properties, one array per call; batches of records cross in buffers that
//! leave no garbage per batch: consumed records in a direct buffer over the engine's bytes,
//! valid during the call only; produced records in `byte[]` chunks the runner reuses, the first
//! `i32` of the first saying how many bytes after it the batch fills across them.
//! Java's side is
//! `dev.sluice.streams.runtime.internals`' framing; the two must agree.
//!
//! Integers are big-endian, strings UTF-8, and a length of -1 stands for null.
//!
//! - **Properties** (Java → native): repeated `i32 keyLength, key, i32 valueLength, value`.
//! - **Offsets** (native → Java): repeated `i32 topicLength, topic, i32 partition,
//!   i64 offset`, -1 for no offset (the layout of [`super::framing::offsets`]).
//! - **Consumer lags** (native → Java): repeated `i32 thread, i8 consumer (0: the main
//!   consumer, 1: the restore consumer), i32 topicLength, topic, i32 partition, i64 lag`.
//! - **Inputs** (both ways: a new task's inputs, the partitions whose committed offsets the
//!   engine asks the group member for, and its answer): repeated `i32 topicLength, topic,
//!   i32 partition, i64 committedOffset (-1: none), i32 metadataLength, metadata`.
//! - **Positions** (Java → native): the layout of inputs; every entry has an offset.
//! - **Consumed records** (native → Java): `i32 runCount`, then per run of one partition
//!   `i32 topicLength, topic, i32 partition, i32 recordCount` and its records as a
//!   [`RecordRun`] encodes them: per record `i64 offset, i64 timestamp, i32 keyLength, key,
//!   i32 valueLength, value, i32 headerCount` and per header `i32 keyLength, key,
//!   i32 valueLength, value`.
//! - **Produced records** (Java → native; native → Java for one that failed): as
//!   [`ProducedRecords`] encodes them: `i32 count`, then per record `i32 topicLength, topic,
//!   i32 partition (-1: the producer's partitioner chooses), i64 timestamp`, then key, value
//!   and headers as in consumed records.

use std::collections::BTreeMap;

use super::errors::NativeError;
use super::framing::{malformed, Reader};
use crate::engine::metrics::ConsumerLags;
use crate::engine::{CommittedInput, InputOffset};
use crate::kafka::{ProducedRecord, ProducedRecords, RecordRun};
use crate::store::TopicPartition;

const NULL_LENGTH: i32 = -1;
const NO_OFFSET: i64 = -1;
/// Which of a thread's consumers a framed lag is of.
const MAIN_CONSUMER: u8 = 0;
const RESTORE_CONSUMER: u8 = 1;

/// Frames consumed records.
pub(crate) fn consumed_records(runs: &[RecordRun]) -> Vec<u8> {
    let size: usize = runs
        .iter()
        .map(|r| 12 + r.partition.topic.len() + r.bytes().len())
        .sum();
    let mut out = Vec::with_capacity(4 + size);
    put_i32(&mut out, runs.len() as i32);
    for run in runs {
        put_string(&mut out, &run.partition.topic);
        put_i32(&mut out, run.partition.partition);
        put_i32(&mut out, run.len() as i32);
        out.extend_from_slice(run.bytes());
    }
    out
}

/// Takes the produced records a task runner returned, once checked.
pub(crate) fn produced_records(bytes: Vec<u8>) -> Result<ProducedRecords, NativeError> {
    ProducedRecords::from_encoded(bytes).map_err(|reason| malformed(&reason))
}

/// Frames `record` as a batch of one produced record.
pub(crate) fn produced_record(record: &ProducedRecord) -> Vec<u8> {
    let mut one = ProducedRecords::new();
    one.push(record);
    one.bytes().to_vec()
}

/// Frames offsets; `None` is written as -1.
pub(crate) fn offsets<'a>(
    offsets: impl IntoIterator<Item = (&'a TopicPartition, Option<i64>)>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (partition, offset) in offsets {
        put_string(&mut out, &partition.topic);
        put_i32(&mut out, partition.partition);
        out.extend_from_slice(&offset.unwrap_or(NO_OFFSET).to_be_bytes());
    }
    out
}

/// Frames each stream thread's lags behind the partitions its main and restore consumers read.
pub(crate) fn consumer_lags(lags: &ConsumerLags) -> Vec<u8> {
    let mut out = Vec::new();
    for (consumer, by_thread) in [
        (MAIN_CONSUMER, &lags.main),
        (RESTORE_CONSUMER, &lags.restore),
    ] {
        for (thread, partitions) in by_thread {
            for (partition, lag) in partitions {
                put_i32(&mut out, *thread as i32);
                out.push(consumer);
                put_string(&mut out, &partition.topic);
                put_i32(&mut out, partition.partition);
                out.extend_from_slice(&lag.to_be_bytes());
            }
        }
    }
    out
}

/// Frames the input partitions of a new task with their committed positions.
pub(crate) fn inputs(inputs: &[CommittedInput]) -> Vec<u8> {
    let mut out = Vec::new();
    for input in inputs {
        put_string(&mut out, &input.partition.topic);
        put_i32(&mut out, input.partition.partition);
        let (offset, metadata) = match &input.committed {
            Some(position) => (position.offset, position.metadata.as_deref()),
            None => (NO_OFFSET, None),
        };
        out.extend_from_slice(&offset.to_be_bytes());
        put_optional(&mut out, metadata.map(str::as_bytes));
    }
    out
}

/// Decodes inputs as [`inputs`] frames them.
pub(crate) fn read_inputs(bytes: &[u8]) -> Result<Vec<CommittedInput>, NativeError> {
    let mut reader = Reader::new(bytes);
    let mut inputs = Vec::new();
    while !reader.done() {
        let topic = string(&mut reader, "topic")?;
        let partition = reader.i32()?;
        let offset = reader.i64()?;
        if offset < 0 && offset != NO_OFFSET {
            return Err(malformed("a negative offset"));
        }
        let metadata = optional(&mut reader, "metadata")?
            .map(|m| String::from_utf8(m).map_err(|_| malformed("metadata is not UTF-8")))
            .transpose()?;
        inputs.push(CommittedInput {
            partition: TopicPartition::new(topic, partition),
            committed: (offset != NO_OFFSET).then_some(InputOffset { offset, metadata }),
        });
    }
    Ok(inputs)
}

/// Decodes the positions a task runner commits.
pub(crate) fn positions(
    bytes: &[u8],
) -> Result<BTreeMap<TopicPartition, InputOffset>, NativeError> {
    read_inputs(bytes)?
        .into_iter()
        .map(|input| match input.committed {
            Some(position) => Ok((input.partition, position)),
            None => Err(malformed("a commit position without an offset")),
        })
        .collect()
}

/// Encodes properties as [`properties`] decodes them.
pub(crate) fn encoded_properties(properties: &BTreeMap<String, String>) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in properties {
        put_string(&mut out, key);
        put_string(&mut out, value);
    }
    out
}

/// Decodes properties.
pub(crate) fn properties(bytes: &[u8]) -> Result<BTreeMap<String, String>, NativeError> {
    let mut reader = Reader::new(bytes);
    let mut properties = BTreeMap::new();
    while !reader.done() {
        let key = string(&mut reader, "property key")?;
        let value = string(&mut reader, "property value")?;
        properties.insert(key, value);
    }
    Ok(properties)
}

fn put_i32(out: &mut Vec<u8>, value: i32) {
    out.extend_from_slice(&value.to_be_bytes());
}

fn put_string(out: &mut Vec<u8>, value: &str) {
    put_i32(out, value.len() as i32);
    out.extend_from_slice(value.as_bytes());
}

fn put_optional(out: &mut Vec<u8>, value: Option<&[u8]>) {
    match value {
        Some(bytes) => {
            put_i32(out, bytes.len() as i32);
            out.extend_from_slice(bytes);
        }
        None => put_i32(out, NULL_LENGTH),
    }
}

fn string(reader: &mut Reader<'_>, what: &str) -> Result<String, NativeError> {
    let length = reader.length(what)?;
    String::from_utf8(reader.take(length)?.to_vec())
        .map_err(|_| malformed(&format!("{what} is not UTF-8")))
}

fn optional(reader: &mut Reader<'_>, what: &str) -> Result<Option<Vec<u8>>, NativeError> {
    match reader.i32()? {
        NULL_LENGTH => Ok(None),
        length => {
            let length = usize::try_from(length)
                .map_err(|_| malformed(&format!("negative {what} length {length}")))?;
            Ok(Some(reader.take(length)?.to_vec()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::Header;

    const NO_PARTITION: i32 = -1;

    fn put_headers(out: &mut Vec<u8>, headers: &[Header]) {
        put_i32(out, headers.len() as i32);
        for header in headers {
            put_string(out, &header.key);
            put_optional(out, header.value.as_deref());
        }
    }

    fn header(key: &str, value: Option<&[u8]>) -> Header {
        Header {
            key: key.into(),
            value: value.map(<[u8]>::to_vec),
        }
    }

    /// Frames produced records the way the Java side does.
    fn as_produced(record: &ProducedRecord, partition: i32) -> Vec<u8> {
        let mut out = Vec::new();
        put_string(&mut out, &record.topic);
        put_i32(&mut out, partition);
        out.extend_from_slice(&record.timestamp.to_be_bytes());
        put_optional(&mut out, record.key.as_deref());
        put_optional(&mut out, record.value.as_deref());
        put_headers(&mut out, &record.headers);
        out
    }

    #[test]
    fn consumed_records_frame_every_field_and_nulls_by_partition() {
        let mut first = RecordRun::new(TopicPartition::new("in", 3));
        let headers = [("h", None), ("g", Some(&b"x"[..]))];
        first.push(42, 7, None, Some(b"v"), headers.into_iter());
        first.push(43, 8, Some(b"k"), None, std::iter::empty());
        let mut second = RecordRun::new(TopicPartition::new("other", 0));
        second.push(5, 9, Some(b""), Some(b"w"), std::iter::empty());
        let framed = consumed_records(&[first, second]);
        let mut expected = 2i32.to_be_bytes().to_vec();
        put_string(&mut expected, "in");
        put_i32(&mut expected, 3);
        put_i32(&mut expected, 2);
        expected.extend_from_slice(&42i64.to_be_bytes());
        expected.extend_from_slice(&7i64.to_be_bytes());
        put_i32(&mut expected, -1);
        put_optional(&mut expected, Some(b"v"));
        put_i32(&mut expected, 2);
        put_string(&mut expected, "h");
        put_i32(&mut expected, -1);
        put_string(&mut expected, "g");
        put_optional(&mut expected, Some(b"x"));
        expected.extend_from_slice(&43i64.to_be_bytes());
        expected.extend_from_slice(&8i64.to_be_bytes());
        put_optional(&mut expected, Some(b"k"));
        put_i32(&mut expected, -1);
        put_i32(&mut expected, 0);
        put_string(&mut expected, "other");
        put_i32(&mut expected, 0);
        put_i32(&mut expected, 1);
        expected.extend_from_slice(&5i64.to_be_bytes());
        expected.extend_from_slice(&9i64.to_be_bytes());
        put_optional(&mut expected, Some(b""));
        put_optional(&mut expected, Some(b"w"));
        put_i32(&mut expected, 0);
        assert_eq!(framed, expected);
    }

    #[test]
    fn a_failed_record_frames_as_a_produced_batch_of_one() {
        let record = ProducedRecord {
            topic: "out".into(),
            partition: Some(2),
            key: None,
            value: Some(b"v".to_vec()),
            timestamp: 11,
            headers: vec![header("h", None)],
        };
        let unpartitioned = ProducedRecord {
            partition: None,
            ..record.clone()
        };
        for record in [record, unpartitioned] {
            let decoded = produced_records(produced_record(&record)).unwrap();
            let decoded: Vec<ProducedRecord> = decoded.records().map(|r| r.to_owned()).collect();
            assert_eq!(decoded, vec![record]);
        }
    }

    #[test]
    fn produced_records_decode_partition_nulls_and_headers() {
        let record = ProducedRecord {
            topic: "app-store-changelog".into(),
            partition: None,
            key: Some(b"k".to_vec()),
            value: None,
            timestamp: 9,
            headers: vec![header("h", Some(b""))],
        };
        let mut batch = 2i32.to_be_bytes().to_vec();
        batch.extend(as_produced(&record, 4));
        batch.extend(as_produced(&record, NO_PARTITION));
        let decoded = produced_records(batch.clone()).unwrap();
        let decoded: Vec<ProducedRecord> = decoded.records().map(|r| r.to_owned()).collect();
        assert_eq!(decoded.len(), 2);
        assert_eq!(decoded[0].partition, Some(4));
        assert_eq!(decoded[1].partition, None);
        assert_eq!(decoded[0].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(decoded[0].value, None);
        assert_eq!(decoded[0].timestamp, 9);
        assert_eq!(decoded[0].headers, record.headers);
        assert!(produced_records(batch[..batch.len() - 1].to_vec()).is_err());
        let mut trailing = batch.clone();
        trailing.push(0);
        assert!(produced_records(trailing).is_err());
        // A topic that is not UTF-8: one record of topic 0xff, no key, value or headers.
        let mut bad_topic = 1i32.to_be_bytes().to_vec();
        put_optional(&mut bad_topic, Some(&[0xff]));
        put_i32(&mut bad_topic, 0);
        bad_topic.extend_from_slice(&0i64.to_be_bytes());
        put_optional(&mut bad_topic, None);
        put_optional(&mut bad_topic, None);
        put_i32(&mut bad_topic, 0);
        assert!(produced_records(bad_topic).is_err());
        assert!(produced_records(Vec::new()).unwrap().is_empty());
    }

    #[test]
    fn inputs_and_positions_share_a_layout() {
        let committed = vec![
            CommittedInput {
                partition: TopicPartition::new("in", 0),
                committed: Some(InputOffset {
                    offset: 5,
                    metadata: Some("AgAAAZ".into()),
                }),
            },
            CommittedInput {
                partition: TopicPartition::new("in", 1),
                committed: Some(InputOffset {
                    offset: 8,
                    metadata: None,
                }),
            },
        ];
        let decoded = positions(&inputs(&committed)).unwrap();
        assert_eq!(decoded.len(), 2);
        for input in &committed {
            assert_eq!(Some(&decoded[&input.partition]), input.committed.as_ref());
        }
        let missing = [CommittedInput {
            partition: TopicPartition::new("in", 2),
            committed: None,
        }];
        assert!(positions(&inputs(&missing)).is_err());
    }

    #[test]
    fn inputs_round_trip_with_and_without_committed_offsets() {
        let committed = vec![
            CommittedInput {
                partition: TopicPartition::new("in", 3),
                committed: Some(InputOffset {
                    offset: 0,
                    metadata: Some("AgAAAZ".into()),
                }),
            },
            CommittedInput {
                partition: TopicPartition::new("in", 1),
                committed: None,
            },
        ];
        let decoded = read_inputs(&inputs(&committed)).unwrap();
        assert_eq!(decoded, committed);
        let mut negative = inputs(&committed[1..]);
        let offset_at = negative.len() - 4 - 8;
        negative[offset_at..offset_at + 8].copy_from_slice(&(-2i64).to_be_bytes());
        assert!(read_inputs(&negative).is_err());
    }

    #[test]
    fn properties_and_offsets_round_trip() {
        let mut bytes = Vec::new();
        put_string(&mut bytes, "application.id");
        put_string(&mut bytes, "app");
        let decoded = properties(&bytes).unwrap();
        assert_eq!(decoded["application.id"], "app");
        assert!(properties(&bytes[..bytes.len() - 1]).is_err());

        let partition = TopicPartition::new("c", 1);
        let framed = offsets([(&partition, Some(3)), (&partition, None)]);
        let decoded = super::super::framing::offsets(&framed).unwrap();
        assert_eq!(decoded[&partition], None);
        assert_eq!(framed.len(), 2 * (4 + 1 + 4 + 8));
    }
}
