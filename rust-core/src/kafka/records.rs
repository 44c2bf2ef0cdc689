//! Records as the engine and task processors see them: owned bytes, no rdkafka types, so
//! a record can outlive the poll that returned it and cross into a task processor.
//!
//! Consumed records travel in [`RecordRun`]s: the records of one partition, encoded back to
//! back in one buffer, which is also the layout a task runner reads them in. A poll costs
//! one growing buffer per partition instead of several allocations per record, and the
//! engine, which only routes records by partition and counts offsets, never decodes them.

use rdkafka::message::{BorrowedMessage, Headers, Message};

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
}

/// Records to write, encoded back to back in one buffer: what a task processor returns.
/// Encoded from the JVM's task runners, they go to the producer without being copied into
/// a [`ProducedRecord`] each.
///
/// The encoding, big-endian, a length of -1 standing for null: `i32 count`, then per record
/// `i32 topicLength, topic, i32 partition (-1: the producer's partitioner chooses),
/// i64 timestamp, i32 keyLength, key, i32 valueLength, value, i32 headerCount`, and per
/// header `i32 keyLength, key, i32 valueLength, value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducedRecords {
    count: usize,
    bytes: Vec<u8>,
}

impl Default for ProducedRecords {
    fn default() -> Self {
        ProducedRecords {
            count: 0,
            bytes: 0i32.to_be_bytes().to_vec(),
        }
    }
}

impl ProducedRecords {
    /// No records.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes records encoded elsewhere, once it checked that they are whole and their
    /// strings UTF-8; says what is wrong otherwise. No bytes (nothing returned) is no record.
    pub fn from_encoded(bytes: Vec<u8>) -> Result<Self, String> {
        if bytes.is_empty() {
            return Ok(Self::new());
        }
        let mut rest = bytes.as_slice();
        let count = checked_i32(&mut rest, "record count")?;
        let count = usize::try_from(count).map_err(|_| format!("record count {count}"))?;
        for _ in 0..count {
            checked_string(&mut rest, "topic")?;
            checked_take(&mut rest, 12, "partition and timestamp")?;
            checked_optional(&mut rest, "key")?;
            checked_optional(&mut rest, "value")?;
            let headers = checked_i32(&mut rest, "header count")?;
            let headers =
                usize::try_from(headers).map_err(|_| format!("header count {headers}"))?;
            for _ in 0..headers {
                checked_string(&mut rest, "header key")?;
                checked_optional(&mut rest, "header value")?;
            }
        }
        if !rest.is_empty() {
            return Err("bytes after the last record".into());
        }
        Ok(ProducedRecords { count, bytes })
    }

    /// Appends `record`.
    pub fn push(&mut self, record: &ProducedRecord) {
        let out = &mut self.bytes;
        put_optional(out, Some(record.topic.as_bytes()));
        out.extend_from_slice(&record.partition.unwrap_or(-1).to_be_bytes());
        out.extend_from_slice(&record.timestamp.to_be_bytes());
        put_optional(out, record.key.as_deref());
        put_optional(out, record.value.as_deref());
        let headers = record.headers.iter();
        put_headers(out, headers.map(|h| (h.key.as_str(), h.value.as_deref())));
        self.count += 1;
        self.bytes[..4].copy_from_slice(&(self.count as i32).to_be_bytes());
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded records, their count first.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its records, in order.
    pub fn records(&self) -> impl Iterator<Item = ProducedView<'_>> {
        let mut rest = &self.bytes[4..];
        (0..self.count).map(move |_| ProducedView::decode(&mut rest))
    }
}

impl FromIterator<ProducedRecord> for ProducedRecords {
    fn from_iter<I: IntoIterator<Item = ProducedRecord>>(records: I) -> Self {
        let mut all = ProducedRecords::new();
        for record in records {
            all.push(&record);
        }
        all
    }
}

/// One record of [`ProducedRecords`], borrowed from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducedView<'a> {
    /// Destination topic.
    pub topic: &'a str,
    /// Destination partition; `None` lets the producer's partitioner choose.
    pub partition: Option<i32>,
    /// Record timestamp.
    pub timestamp: i64,
    /// Record key.
    pub key: Option<&'a [u8]>,
    /// Record value; `None` is a tombstone.
    pub value: Option<&'a [u8]>,
    headers: EncodedHeaders<'a>,
}

impl<'a> ProducedView<'a> {
    /// Decodes the record at the start of `bytes`, which [`ProducedRecords`] checked or
    /// wrote, and moves `bytes` past it.
    fn decode(bytes: &mut &'a [u8]) -> Self {
        let topic = take_optional(bytes).unwrap_or_default();
        // Checked or written as UTF-8.
        let topic = std::str::from_utf8(topic).unwrap_or_default();
        let partition = take_i32(bytes);
        let timestamp = take_i64(bytes);
        let key = take_optional(bytes);
        let value = take_optional(bytes);
        ProducedView {
            topic,
            partition: (partition >= 0).then_some(partition),
            timestamp,
            key,
            value,
            headers: EncodedHeaders::take(bytes),
        }
    }

    /// Its headers, in order: key and value (`None`: null).
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&'a str, Option<&'a [u8]>)> {
        self.headers.iter()
    }

    /// The record, owned.
    pub fn to_owned(&self) -> ProducedRecord {
        ProducedRecord {
            topic: self.topic.to_string(),
            partition: self.partition,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            timestamp: self.timestamp,
            headers: self.headers.owned(),
        }
    }
}

fn checked_take<'a>(bytes: &mut &'a [u8], length: usize, what: &str) -> Result<&'a [u8], String> {
    if bytes.len() < length {
        return Err(format!("{what} cut short"));
    }
    Ok(take(bytes, length))
}

fn checked_i32(bytes: &mut &[u8], what: &str) -> Result<i32, String> {
    let taken = checked_take(bytes, 4, what)?;
    Ok(i32::from_be_bytes(taken.try_into().expect("4 bytes")))
}

fn checked_optional<'a>(bytes: &mut &'a [u8], what: &str) -> Result<Option<&'a [u8]>, String> {
    match checked_i32(bytes, what)? {
        NULL_LENGTH => Ok(None),
        length => {
            let length =
                usize::try_from(length).map_err(|_| format!("negative {what} length {length}"))?;
            checked_take(bytes, length, what).map(Some)
        }
    }
}

fn checked_string(bytes: &mut &[u8], what: &str) -> Result<(), String> {
    let string = checked_optional(bytes, what)?.ok_or_else(|| format!("null {what}"))?;
    std::str::from_utf8(string).map_err(|_| format!("{what} is not UTF-8"))?;
    Ok(())
}

const NULL_LENGTH: i32 = -1;

/// Records read from one partition (a source, repartition, changelog or global topic), in
/// offset order.
///
/// Encoded per record, big-endian, a length of -1 standing for null: `i64 offset,
/// i64 timestamp, i32 keyLength, key, i32 valueLength, value, i32 headerCount`, then per
/// header `i32 keyLength, key, i32 valueLength, value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRun {
    /// Where the records come from.
    pub partition: TopicPartition,
    first_offset: i64,
    last_offset: i64,
    count: usize,
    bytes: Vec<u8>,
}

impl RecordRun {
    /// A run of no records of `partition`.
    pub fn new(partition: TopicPartition) -> Self {
        RecordRun {
            partition,
            first_offset: -1,
            last_offset: -1,
            count: 0,
            bytes: Vec::new(),
        }
    }

    /// Appends a record; `offset` must be past the last one's.
    pub fn push<'a>(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: impl ExactSizeIterator<Item = (&'a str, Option<&'a [u8]>)>,
    ) {
        debug_assert!(self.count == 0 || offset > self.last_offset);
        if self.count == 0 {
            self.first_offset = offset;
        }
        self.last_offset = offset;
        self.count += 1;
        let out = &mut self.bytes;
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&timestamp.to_be_bytes());
        put_optional(out, key);
        put_optional(out, value);
        put_headers(out, headers);
    }

    /// Appends a polled message of this run's partition, copied out of librdkafka's buffers.
    pub(crate) fn push_message(&mut self, message: &BorrowedMessage<'_>) {
        let timestamp = message.timestamp().to_millis().unwrap_or(-1);
        let headers = message.headers();
        let count = headers.map_or(0, |h| h.count());
        let headers = (0..count).map(|i| {
            let header = headers.expect("counted above").get(i);
            (header.key, header.value)
        });
        self.push(
            message.offset(),
            timestamp,
            message.key(),
            message.payload(),
            ExactSize(headers, count),
        );
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The offset of its first record; `None` when it holds none.
    pub fn first_offset(&self) -> Option<i64> {
        (self.count > 0).then_some(self.first_offset)
    }

    /// The offset of its last record; `None` when it holds none.
    pub fn last_offset(&self) -> Option<i64> {
        (self.count > 0).then_some(self.last_offset)
    }

    /// The encoded records.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its records, in order.
    pub fn records(&self) -> impl Iterator<Item = RecordView<'_>> {
        let mut rest = self.bytes.as_slice();
        (0..self.count).map(move |_| RecordView::decode(&mut rest))
    }
}

/// Appends polled `message` to the run of its partition among `runs`, starting one when
/// there is none: the records of a partition stay in order, those of different partitions
/// need not.
pub(crate) fn push_to_runs(runs: &mut Vec<RecordRun>, message: &BorrowedMessage<'_>) {
    let (topic, partition) = (message.topic(), message.partition());
    let index = match runs
        .iter()
        .rposition(|r| r.partition.partition == partition && r.partition.topic == topic)
    {
        Some(index) => index,
        None => {
            runs.push(RecordRun::new(TopicPartition::new(topic, partition)));
            runs.len() - 1
        }
    };
    runs[index].push_message(message);
}

/// The number of records in `runs`.
pub fn record_count(runs: &[RecordRun]) -> usize {
    runs.iter().map(RecordRun::len).sum()
}

/// An iterator whose length is known ahead (librdkafka's headers are counted, not sized).
struct ExactSize<I>(I, usize);

impl<I: Iterator> Iterator for ExactSize<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.0.next()?;
        self.1 -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

impl<I: Iterator> ExactSizeIterator for ExactSize<I> {}

/// One record of a [`RecordRun`], borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    /// Its offset in its partition.
    pub offset: i64,
    /// Record timestamp (create or log-append time, as the topic says), -1 when absent.
    pub timestamp: i64,
    /// Record key; `None` is Kafka's null key.
    pub key: Option<&'a [u8]>,
    /// Record value; `None` is a tombstone.
    pub value: Option<&'a [u8]>,
    headers: EncodedHeaders<'a>,
}

impl<'a> RecordView<'a> {
    /// Decodes the record at the start of `bytes` and moves `bytes` past it. Only
    /// [`RecordRun::push`] writes what this reads.
    fn decode(bytes: &mut &'a [u8]) -> Self {
        let offset = take_i64(bytes);
        let timestamp = take_i64(bytes);
        let key = take_optional(bytes);
        let value = take_optional(bytes);
        RecordView {
            offset,
            timestamp,
            key,
            value,
            headers: EncodedHeaders::take(bytes),
        }
    }

    /// Its headers, in order: key and value (`None`: null).
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&'a str, Option<&'a [u8]>)> {
        self.headers.iter()
    }
}

/// The headers of an encoded record: `i32 headerCount`, then per header `i32 keyLength,
/// key, i32 valueLength, value`, keys UTF-8 (written from `&str` or checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EncodedHeaders<'a> {
    count: usize,
    bytes: &'a [u8],
}

impl<'a> EncodedHeaders<'a> {
    /// The headers at the start of `bytes`; moves `bytes` past them.
    fn take(bytes: &mut &'a [u8]) -> Self {
        let count = take_i32(bytes) as usize;
        let start = *bytes;
        for _ in 0..count {
            take_optional(bytes);
            take_optional(bytes);
        }
        EncodedHeaders {
            count,
            bytes: &start[..start.len() - bytes.len()],
        }
    }

    fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, Option<&'a [u8]>)> {
        let mut rest = self.bytes;
        let headers = (0..self.count).map(move |_| {
            let key = take_optional(&mut rest).unwrap_or_default();
            (
                std::str::from_utf8(key).unwrap_or_default(),
                take_optional(&mut rest),
            )
        });
        ExactSize(headers, self.count)
    }

    fn owned(&self) -> Vec<Header> {
        self.iter()
            .map(|(key, value)| Header {
                key: key.to_string(),
                value: value.map(<[u8]>::to_vec),
            })
            .collect()
    }
}

/// Appends headers as [`EncodedHeaders`] reads them.
fn put_headers<'a>(
    out: &mut Vec<u8>,
    headers: impl ExactSizeIterator<Item = (&'a str, Option<&'a [u8]>)>,
) {
    out.extend_from_slice(&(headers.len() as i32).to_be_bytes());
    for (key, value) in headers {
        put_optional(out, Some(key.as_bytes()));
        put_optional(out, value);
    }
}

fn put_optional(out: &mut Vec<u8>, value: Option<&[u8]>) {
    match value {
        Some(bytes) => {
            out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
            out.extend_from_slice(bytes);
        }
        None => out.extend_from_slice(&NULL_LENGTH.to_be_bytes()),
    }
}

fn take<'a>(bytes: &mut &'a [u8], length: usize) -> &'a [u8] {
    let (taken, rest) = bytes.split_at(length);
    *bytes = rest;
    taken
}

fn take_i64(bytes: &mut &[u8]) -> i64 {
    i64::from_be_bytes(take(bytes, 8).try_into().expect("8 bytes"))
}

fn take_i32(bytes: &mut &[u8]) -> i32 {
    i32::from_be_bytes(take(bytes, 4).try_into().expect("4 bytes"))
}

fn take_optional<'a>(bytes: &mut &'a [u8]) -> Option<&'a [u8]> {
    match take_i32(bytes) {
        NULL_LENGTH => None,
        length => Some(take(bytes, length as usize)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_gives_back_every_field_of_its_records_in_order() {
        let mut run = RecordRun::new(TopicPartition::new("in", 2));
        assert!(run.is_empty());
        assert_eq!((run.first_offset(), run.last_offset()), (None, None));
        let headers = [
            ("trace", Some(&b"abc"[..])),
            ("nothing", None),
            ("empty", Some(&b""[..])),
        ];
        run.push(7, 100, Some(b"k"), None, headers.into_iter());
        run.push(9, -1, None, Some(b"v"), std::iter::empty());
        run.push(10, 5, Some(b""), Some(b""), std::iter::empty());
        assert_eq!(run.len(), 3);
        assert_eq!((run.first_offset(), run.last_offset()), (Some(7), Some(10)));

        let records: Vec<RecordView<'_>> = run.records().collect();
        assert_eq!(records.len(), 3);
        assert_eq!((records[0].offset, records[0].timestamp), (7, 100));
        assert_eq!((records[0].key, records[0].value), (Some(&b"k"[..]), None));
        assert_eq!(records[0].headers().collect::<Vec<_>>(), headers.to_vec());
        assert_eq!((records[1].offset, records[1].timestamp), (9, -1));
        assert_eq!((records[1].key, records[1].value), (None, Some(&b"v"[..])));
        assert_eq!(records[1].headers().count(), 0);
        assert_eq!(
            (records[2].key, records[2].value),
            (Some(&b""[..]), Some(&b""[..]))
        );
        assert_eq!(record_count(&[run.clone(), run]), 6);
    }

    #[test]
    fn produced_records_round_trip_through_their_encoding_and_reject_what_is_not_whole() {
        let with_headers = ProducedRecord {
            topic: "out".into(),
            partition: None,
            key: Some(b"k".to_vec()),
            value: None,
            timestamp: 12,
            headers: vec![
                Header {
                    key: "h".into(),
                    value: None,
                },
                Header {
                    key: "g".into(),
                    value: Some(b"x".to_vec()),
                },
            ],
        };
        let plain = ProducedRecord::new("app-store-changelog", Some(3), None, Some(Vec::new()), 0);
        let records: ProducedRecords = [with_headers.clone(), plain.clone()].into_iter().collect();
        assert_eq!(records.len(), 2);
        let views: Vec<ProducedView<'_>> = records.records().collect();
        assert_eq!((views[0].topic, views[0].partition), ("out", None));
        assert_eq!((views[0].key, views[0].value), (Some(&b"k"[..]), None));
        assert_eq!(views[0].headers().len(), 2);
        assert_eq!(views[0].to_owned(), with_headers);
        assert_eq!(views[1].to_owned(), plain);

        let decoded = ProducedRecords::from_encoded(records.bytes().to_vec()).unwrap();
        assert_eq!(decoded, records);
        assert!(ProducedRecords::from_encoded(Vec::new())
            .unwrap()
            .is_empty());
        let whole = records.bytes();
        assert!(ProducedRecords::from_encoded(whole[..whole.len() - 1].to_vec()).is_err());
        let mut longer = whole.to_vec();
        longer.push(0);
        assert!(ProducedRecords::from_encoded(longer).is_err());
        let mut negative_headers = ProducedRecords::new();
        negative_headers.push(&plain);
        let mut bytes = negative_headers.bytes().to_vec();
        let at = bytes.len() - 4;
        bytes[at..].copy_from_slice(&(-2i32).to_be_bytes());
        assert!(ProducedRecords::from_encoded(bytes).is_err());
    }
}
