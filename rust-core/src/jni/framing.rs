//! Byte layouts of the batches that cross JNI, so that many entries cost one crossing.
//! Java's side is `dev.sluice.streams.state.internals.EntryFraming`; the two must agree.
//!
//! All integers are big-endian (Java's `ByteBuffer` default).
//!
//! - **Entries** (scan chunks native → Java, `putAll` batches Java → native): a sequence of
//!   `i32 keyLength, key, i32 valueLength, value`. A value length of -1 stands for a null
//!   value (a deletion in `putAll`); scan chunks never contain one.
//! - **Windowed entries** (window and session scan chunks): entries whose key is the record
//!   key followed by its window, `key ‖ i64 windowStart` for window stores and
//!   `key ‖ i64 sessionStart ‖ i64 sessionEnd` for session stores.
//! - **Timestamped entries** (versioned restore batches, Java → native): entries followed by
//!   `i64 timestamp`, the version's timestamp.
//! - **Versioned records** (versioned reads, native → Java):
//!   `i64 timestamp, i64 validTo, value`, where a valid-to of -1 means none (the latest
//!   version), as in Kafka Streams' `PUT_RETURN_CODE_VALID_TO_UNDEFINED`.
//! - **Offsets** (commit, Java → native): a sequence of
//!   `i32 topicLength, topic (UTF-8), i32 partition, i64 offset`, where a negative offset
//!   removes the partition's stored offset (Kafka Streams' `null` in the commit map).

use std::collections::BTreeMap;

use super::errors::{JavaException, NativeError};
use crate::store::versioned::{VersionedChangelogRecord, VersionedRecord};
use crate::store::{StagedEntry, TopicPartition};

/// The value length that stands for a null value.
const NULL_LENGTH: i32 = -1;

/// Bytes an entry takes when framed.
pub(crate) fn framed_len(key: &[u8], value: &[u8]) -> usize {
    8 + key.len() + value.len()
}

/// Appends one framed entry to `out`.
pub(crate) fn put_entry(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    out.extend_from_slice(&(key.len() as i32).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as i32).to_be_bytes());
    out.extend_from_slice(value);
}

/// The framed key of a window store record: `key ‖ window start`.
pub(crate) fn window_entry_key(key: Vec<u8>, window_start: i64) -> Vec<u8> {
    let mut framed = key;
    framed.extend_from_slice(&window_start.to_be_bytes());
    framed
}

/// The framed key of a session: `key ‖ start ‖ end`.
pub(crate) fn session_entry_key(key: Vec<u8>, start: i64, end: i64) -> Vec<u8> {
    let mut framed = key;
    framed.extend_from_slice(&start.to_be_bytes());
    framed.extend_from_slice(&end.to_be_bytes());
    framed
}

/// The valid-to of a framed versioned record that has none.
const NO_VALID_TO: i64 = -1;

/// Frames a versioned record.
pub(crate) fn versioned_record(record: &VersionedRecord) -> Vec<u8> {
    let mut framed = Vec::with_capacity(16 + record.value.len());
    framed.extend_from_slice(&record.timestamp.to_be_bytes());
    framed.extend_from_slice(&record.valid_to.unwrap_or(NO_VALID_TO).to_be_bytes());
    framed.extend_from_slice(&record.value);
    framed
}

/// Frames versioned records as a sequence of `int length, versioned record`.
pub(crate) fn versioned_records(records: &[VersionedRecord]) -> Vec<u8> {
    let mut framed = Vec::new();
    for record in records {
        let record = versioned_record(record);
        framed.extend_from_slice(&(record.len() as i32).to_be_bytes());
        framed.extend_from_slice(&record);
    }
    framed
}

/// Decodes a `putAll` or restore batch.
pub(crate) fn entries(bytes: &[u8]) -> Result<Vec<StagedEntry>, NativeError> {
    let mut reader = Reader { bytes, at: 0 };
    let mut entries = Vec::new();
    while !reader.done() {
        entries.push(reader.entry()?);
    }
    Ok(entries)
}

/// Decodes a versioned restore batch: `(key, value or None, timestamp)`.
pub(crate) fn timestamped_entries(
    bytes: &[u8],
) -> Result<Vec<VersionedChangelogRecord>, NativeError> {
    let mut reader = Reader { bytes, at: 0 };
    let mut entries = Vec::new();
    while !reader.done() {
        let (key, value) = reader.entry()?;
        entries.push((key, value, reader.i64()?));
    }
    Ok(entries)
}

/// Decodes the offsets of a commit; `None` removes a partition's offset.
pub(crate) fn offsets(bytes: &[u8]) -> Result<BTreeMap<TopicPartition, Option<i64>>, NativeError> {
    let mut reader = Reader { bytes, at: 0 };
    let mut offsets = BTreeMap::new();
    while !reader.done() {
        let topic_length = reader.length("topic")?;
        let topic = std::str::from_utf8(reader.take(topic_length)?)
            .map_err(|_| malformed("topic name is not UTF-8"))?
            .to_string();
        let partition = reader.i32()?;
        let offset = reader.i64()?;
        offsets.insert(
            TopicPartition::new(topic, partition),
            (offset >= 0).then_some(offset),
        );
    }
    Ok(offsets)
}

pub(crate) fn malformed(what: &str) -> NativeError {
    NativeError::new(
        JavaException::IllegalArgument,
        format!("malformed batch from Java: {what}"),
    )
}

fn to_length(length: i32, what: &str) -> Result<usize, NativeError> {
    usize::try_from(length).map_err(|_| malformed(&format!("negative {what} length {length}")))
}

/// Reads a batch from its start, failing with a "malformed batch" error past its end.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// True once every byte was read.
    pub(crate) fn done(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], NativeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| malformed("truncated"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    /// The next big-endian `i32`.
    pub(crate) fn i32(&mut self) -> Result<i32, NativeError> {
        let bytes = self.take(4)?;
        Ok(i32::from_be_bytes(bytes.try_into().expect("4 bytes")))
    }

    /// The next big-endian `i64`.
    pub(crate) fn i64(&mut self) -> Result<i64, NativeError> {
        let bytes = self.take(8)?;
        Ok(i64::from_be_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// The next length, which must not be negative.
    pub(crate) fn length(&mut self, what: &str) -> Result<usize, NativeError> {
        let length = self.i32()?;
        to_length(length, what)
    }

    fn entry(&mut self) -> Result<(Vec<u8>, Option<Vec<u8>>), NativeError> {
        let key_length = self.length("key")?;
        let key = self.take(key_length)?.to_vec();
        let value = match self.i32()? {
            NULL_LENGTH => None,
            length => Some(self.take(to_length(length, "value")?)?.to_vec()),
        };
        Ok((key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_null_values_decode_as_deletions() {
        let mut batch = Vec::new();
        put_entry(&mut batch, b"a", b"1");
        put_entry(&mut batch, b"", b"");
        batch.extend_from_slice(&1i32.to_be_bytes());
        batch.extend_from_slice(b"z");
        batch.extend_from_slice(&NULL_LENGTH.to_be_bytes());
        assert_eq!(framed_len(b"a", b"1"), 10);
        assert_eq!(
            entries(&batch).unwrap(),
            vec![
                (b"a".to_vec(), Some(b"1".to_vec())),
                (Vec::new(), Some(Vec::new())),
                (b"z".to_vec(), None)
            ]
        );
    }

    #[test]
    fn truncated_or_negative_lengths_are_rejected() {
        let mut batch = Vec::new();
        put_entry(&mut batch, b"key", b"value");
        assert!(entries(&batch[..batch.len() - 1]).is_err());
        assert!(entries(&(-5i32).to_be_bytes()).is_err());
    }

    #[test]
    fn timestamped_entries_carry_their_timestamp_after_the_value() {
        let mut batch = Vec::new();
        put_entry(&mut batch, b"k", b"v");
        batch.extend_from_slice(&(-7i64).to_be_bytes());
        batch.extend_from_slice(&1i32.to_be_bytes());
        batch.extend_from_slice(b"k");
        batch.extend_from_slice(&NULL_LENGTH.to_be_bytes());
        batch.extend_from_slice(&9i64.to_be_bytes());
        assert_eq!(
            timestamped_entries(&batch).unwrap(),
            vec![
                (b"k".to_vec(), Some(b"v".to_vec()), -7),
                (b"k".to_vec(), None, 9)
            ]
        );
        assert!(timestamped_entries(&batch[..batch.len() - 1]).is_err());
    }

    #[test]
    fn versioned_records_frame_timestamp_valid_to_and_value() {
        let latest = VersionedRecord {
            value: b"v".to_vec(),
            timestamp: 5,
            valid_to: None,
        };
        assert_eq!(
            versioned_record(&latest),
            [&5i64.to_be_bytes()[..], &(-1i64).to_be_bytes(), b"v"].concat()
        );
        let older = VersionedRecord {
            value: Vec::new(),
            timestamp: 1,
            valid_to: Some(5),
        };
        assert_eq!(
            versioned_record(&older),
            [1i64.to_be_bytes(), 5i64.to_be_bytes()].concat()
        );
    }

    #[test]
    fn windowed_entry_keys_end_with_their_window() {
        assert_eq!(
            window_entry_key(b"k".to_vec(), 1),
            [b"k".as_slice(), &1i64.to_be_bytes()].concat()
        );
        assert_eq!(
            session_entry_key(b"k".to_vec(), 1, 2),
            [b"k".as_slice(), &1i64.to_be_bytes(), &2i64.to_be_bytes()].concat()
        );
    }

    #[test]
    fn offsets_decode_with_negative_meaning_remove() {
        let mut bytes = Vec::new();
        for (topic, partition, offset) in [("t", 0i32, 42i64), ("t", 1, -1)] {
            bytes.extend_from_slice(&(topic.len() as i32).to_be_bytes());
            bytes.extend_from_slice(topic.as_bytes());
            bytes.extend_from_slice(&partition.to_be_bytes());
            bytes.extend_from_slice(&offset.to_be_bytes());
        }
        let decoded = offsets(&bytes).unwrap();
        assert_eq!(decoded[&TopicPartition::new("t", 0)], Some(42));
        assert_eq!(decoded[&TopicPartition::new("t", 1)], None);
        assert!(offsets(&bytes[..5]).is_err());
    }
}
