//! Time segments over one transactional key-value store: the storage under the window and
//! session stores.
//!
//! Kafka Streams keeps one RocksDB instance per time segment and drops whole segments as
//! stream time passes the retention period. Here a segment is a key range of a single
//! store: every entry is `0x00 ‖ segment id (8, sign-flipped big-endian) ‖ store key`, so
//! entries sort by segment first and by store key inside a segment — the order Kafka
//! Streams' segment iterator produces — and dropping a segment is one staged range delete.
//! The observed stream time is kept under `0x01 ‖ 'T'` and committed with the data, so a
//! reopened store knows which records have expired.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::store::format::ordered_bytes::{lower_range, upper_range};
use crate::store::format::FormatError;
use crate::store::stream_time;
use crate::store::value_layout::ValueLayout;
use crate::store::{
    CommitMetadata, Error, IsolationLevel, KeyBounds, KeyValueStore, Order, Result,
};

const DATA_TAG: u8 = 0x00;
const STREAM_TIME_KEY: &[u8] = &[0x01, b'T'];
const PREFIX_LEN: usize = 9;

/// Whether a record exactly one retention period behind stream time is still readable.
/// Kafka Streams' segmented stores expire it; its time-ordered window store (the
/// time-first window schema) still answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetentionEdge {
    /// Readable only after `stream time - retention`.
    Expired,
    /// Readable from `stream time - retention` on.
    Live,
}

/// The time-segmented key space of one window or session store.
pub(crate) struct Segments<S: KeyValueStore + ?Sized> {
    kv: Arc<S>,
    retention_period: i64,
    segment_interval: i64,
    retention_edge: RetentionEdge,
    clock: Mutex<Clock>,
}

struct Clock {
    observed_stream_time: i64,
    /// Segments below this id have had their deletion staged since the last commit or
    /// rollback; `i64::MIN` when none has.
    dropped_below: i64,
}

impl<S: KeyValueStore + ?Sized> Segments<S> {
    /// Brings the values of the records whose store key (behind the segment prefix)
    /// `is_record` accepts to `wanted`; the stream time and other entries stay as they are.
    pub(crate) fn settle_value_layout(
        &self,
        wanted: ValueLayout,
        kind: &str,
        is_record: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<ValueLayout>> {
        self.kv.settle_value_layout(wanted, kind, &|key| {
            key.len() > PREFIX_LEN && key[0] == DATA_TAG && is_record(&key[PREFIX_LEN..])
        })
    }

    /// Segments over `kv`, resuming the stream time committed in it.
    pub(crate) fn open(
        kv: Arc<S>,
        retention_period: i64,
        segment_interval: i64,
        retention_edge: RetentionEdge,
    ) -> Result<Self> {
        if retention_period < 0 {
            return Err(Error::InvalidArgument(format!(
                "retention period {retention_period} < 0"
            )));
        }
        if segment_interval < 1 {
            return Err(Error::InvalidArgument(format!(
                "segment interval {segment_interval} < 1"
            )));
        }
        let observed_stream_time = stream_time::read(kv.as_ref(), STREAM_TIME_KEY)?;
        Ok(Segments {
            kv,
            retention_period,
            segment_interval,
            retention_edge,
            clock: Mutex::new(Clock {
                observed_stream_time,
                dropped_below: i64::MIN,
            }),
        })
    }

    /// The largest segment timestamp seen by a write or restore.
    pub(crate) fn observed_stream_time(&self) -> i64 {
        self.clock().observed_stream_time
    }

    /// The earliest segment timestamp still visible when reading from `from`: older records
    /// are expired even while their segment still exists.
    pub(crate) fn actual_from(&self, from: i64) -> i64 {
        from.max(self.earliest_live_timestamp())
    }

    /// The earliest visible timestamp of a read of `from..=to`; `None` when the whole range
    /// has expired.
    pub(crate) fn live_from(&self, from: i64, to: i64) -> Option<i64> {
        let actual_from = self.actual_from(from);
        (actual_from <= to).then_some(actual_from)
    }

    /// Stages `value` (`None` deletes) for `store_key`, whose segment timestamp is
    /// `segment_timestamp`. Returns false when the segment has expired and the write was
    /// dropped, as Kafka Streams drops it.
    pub(crate) fn put(
        &self,
        segment_timestamp: i64,
        store_key: &[u8],
        value: Option<Vec<u8>>,
    ) -> Result<bool> {
        let mut clock = self.clock();
        self.observe(&mut clock, segment_timestamp)?;
        self.put_if_live(&mut clock, segment_timestamp, store_key, value)
    }

    /// Stages the deletion of `store_key` without creating or dropping segments (Kafka
    /// Streams' `remove`), still advancing stream time.
    pub(crate) fn remove(&self, segment_timestamp: i64, store_key: &[u8]) -> Result<()> {
        let mut clock = self.clock();
        self.observe(&mut clock, segment_timestamp)?;
        self.kv
            .delete(&self.data_key(segment_timestamp, store_key))
            .map(|_| ())
    }

    /// The value of `store_key`, unless its segment timestamp has expired.
    pub(crate) fn get(
        &self,
        segment_timestamp: i64,
        store_key: &[u8],
        isolation: IsolationLevel,
    ) -> Result<Option<Vec<u8>>> {
        if segment_timestamp < self.earliest_live_timestamp() {
            return Ok(None);
        }
        self.kv
            .get(&self.data_key(segment_timestamp, store_key), isolation)
    }

    /// Applies restored changelog entries `(segment timestamp, store key, value)`: stream
    /// time first advances to the batch's latest timestamp, then entries of expired
    /// segments are skipped.
    pub(crate) fn restore(&self, entries: Vec<(i64, Vec<u8>, Option<Vec<u8>>)>) -> Result<()> {
        let mut clock = self.clock();
        if let Some(latest) = entries.iter().map(|(timestamp, _, _)| *timestamp).max() {
            self.observe(&mut clock, latest)?;
        }
        for (segment_timestamp, store_key, value) in entries {
            self.put_if_live(&mut clock, segment_timestamp, &store_key, value)?;
        }
        Ok(())
    }

    /// Applies changelog records kept under their changelog key itself, as the key-ordered
    /// stores keep them; `segment_timestamp` reads the timestamp a key is segmented by.
    pub(crate) fn restore_as_stored(
        &self,
        records: Vec<(Vec<u8>, Option<Vec<u8>>)>,
        segment_timestamp: impl Fn(&[u8]) -> std::result::Result<i64, FormatError>,
    ) -> Result<()> {
        let entries = records
            .into_iter()
            .map(|(key, value)| {
                let timestamp = segment_timestamp(&key).map_err(malformed_changelog_key)?;
                Ok((timestamp, key, value))
            })
            .collect::<Result<_>>()?;
        self.restore(entries)
    }

    /// Applies changelog records to a store that keeps each record under a base key of its
    /// own layout and, with an index, an index key: `keys` turns a changelog key into the
    /// record's segment timestamp, base key and index key. Index keys get an empty value (or
    /// the deletion), as [`put_indexed`](Self::put_indexed) writes them.
    pub(crate) fn restore_indexed(
        &self,
        records: Vec<(Vec<u8>, Option<Vec<u8>>)>,
        keys: impl Fn(&[u8]) -> std::result::Result<(i64, Vec<u8>, Option<Vec<u8>>), FormatError>,
    ) -> Result<()> {
        let mut entries = Vec::with_capacity(records.len() * 2);
        for (changelog_key, value) in records {
            let (timestamp, base_key, index_key) =
                keys(&changelog_key).map_err(malformed_changelog_key)?;
            if let Some(index_key) = index_key {
                entries.push((timestamp, index_key, index_value(&value)));
            }
            entries.push((timestamp, base_key, value));
        }
        self.restore(entries)
    }

    /// Entries `(store key, value)` of the segments holding timestamps
    /// `first_timestamp..=last_timestamp`, segment by segment in `order`, each segment
    /// limited to store keys in `lower..=upper` (`None` = unbounded).
    pub(crate) fn scan(
        &self,
        first_timestamp: i64,
        last_timestamp: i64,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>> + Send + 'static> {
        let (first, last) = self.segment_ids_to_search(first_timestamp, last_timestamp);
        let mut ids: Vec<i64> = if first <= last {
            (first..=last).collect()
        } else {
            Vec::new()
        };
        if order == Order::Reverse {
            ids.reverse();
        }
        let mut scans = Vec::with_capacity(ids.len());
        for id in ids {
            let from = match lower {
                Some(lower) => [segment_prefix(id).as_slice(), lower].concat(),
                None => segment_prefix(id).to_vec(),
            };
            let bounds = match upper {
                Some(upper) => KeyBounds::inclusive(
                    Some(&from),
                    Some(&[segment_prefix(id).as_slice(), upper].concat()),
                ),
                None => KeyBounds::half_open(&from, &segment_end(id)),
            };
            if !bounds.is_empty() {
                scans.push(self.kv.scan(&bounds, order, isolation)?);
            }
        }
        Ok(scans
            .into_iter()
            .flatten()
            .map(|entry| entry.map(|(mut key, value)| (key.split_off(PREFIX_LEN), value))))
    }

    /// Like a forward [`scan`](Self::scan), but over every segment still stored, expired
    /// or not: Kafka Streams reads every segment it has not dropped yet when a read applies
    /// no retention of its own, and segments are dropped only by live writes. Each stored
    /// segment is found with one lookup, so gaps between them cost nothing.
    pub(crate) fn scan_stored(
        &self,
        first_timestamp: i64,
        last_timestamp: i64,
        lower: &[u8],
        upper: &[u8],
        isolation: IsolationLevel,
    ) -> Result<impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>> + Send + 'static> {
        let (first, last) = (
            self.segment_id(first_timestamp),
            self.segment_id(last_timestamp),
        );
        let mut scans = Vec::new();
        let mut next = first;
        while next <= last {
            let remaining = KeyBounds::half_open(&segment_prefix(next), &segment_end(last));
            let Some((stored_key, _)) = self.kv.first_in(&remaining, Order::Forward, isolation)?
            else {
                break;
            };
            let id = decode_segment_id(&stored_key);
            let prefix = segment_prefix(id);
            let bounds = KeyBounds::inclusive(
                Some(&[&prefix[..], lower].concat()),
                Some(&[&prefix[..], upper].concat()),
            );
            scans.push(self.kv.scan(&bounds, Order::Forward, isolation)?);
            match id.checked_add(1) {
                Some(after) => next = after,
                None => break,
            }
        }
        Ok(scans
            .into_iter()
            .flatten()
            .map(|entry| entry.map(|(mut key, value)| (key.split_off(PREFIX_LEN), value))))
    }

    /// Commits the staged writes, stream time included, with `metadata`.
    pub(crate) fn commit(&self, metadata: &CommitMetadata) -> Result<()> {
        self.kv.commit(metadata)
    }

    /// Drops the staged writes and returns to the committed stream time.
    pub(crate) fn rollback(&self) -> Result<()> {
        self.kv.rollback()?;
        let mut clock = self.clock();
        clock.observed_stream_time = stream_time::read(self.kv.as_ref(), STREAM_TIME_KEY)?;
        clock.dropped_below = i64::MIN;
        Ok(())
    }

    /// Approximate bytes staged since the last commit or rollback.
    pub(crate) fn approximate_uncommitted_bytes(&self) -> u64 {
        self.kv.approximate_uncommitted_bytes()
    }

    /// Stages a record under `base_key` and, when `index_key` is given, its empty index
    /// entry first, as Kafka Streams' indexed stores write them: both share one liveness
    /// check, so a dropped write leaves neither.
    pub(crate) fn put_indexed(
        &self,
        segment_timestamp: i64,
        index_key: Option<Vec<u8>>,
        base_key: &[u8],
        value: Option<Vec<u8>>,
    ) -> Result<()> {
        if let Some(index_key) = index_key {
            if !self.put(segment_timestamp, &index_key, index_value(&value))? {
                return Ok(());
            }
        }
        self.put(segment_timestamp, base_key, value).map(|_| ())
    }

    /// Reads each record found through an index, given as `(segment timestamp, base key,
    /// record)`, from its base key; `with_value` puts the value read into the record. The
    /// index and its records are written and committed together, so a record found missing
    /// is one whose deletion committed after the index scan began: it is left out. The
    /// result is read in full before it is returned.
    pub(crate) fn resolve_indexed<T: Send + 'static>(
        &self,
        found: impl Iterator<Item = Result<(i64, Vec<u8>, T)>>,
        isolation: IsolationLevel,
        with_value: impl Fn(T, Vec<u8>) -> T,
    ) -> Result<Box<dyn Iterator<Item = Result<T>> + Send>> {
        let mut resolved = Vec::new();
        for entry in found {
            let (segment_timestamp, base_key, record) = entry?;
            if let Some(value) = self.get(segment_timestamp, &base_key, isolation)? {
                resolved.push(Ok(with_value(record, value)));
            }
        }
        Ok(Box::new(resolved.into_iter()))
    }

    /// Decodes scanned entries `(store key, value)` with `decode`, which answers `None` for
    /// entries the read does not return. Store keys are this store's own writing, so one
    /// that fails to decode is reported as corruption.
    pub(crate) fn decode_each<T: Send + 'static>(
        &self,
        entries: impl Iterator<Item = Result<(Vec<u8>, Vec<u8>)>> + Send + 'static,
        mut decode: impl FnMut(&[u8], Vec<u8>) -> std::result::Result<Option<T>, FormatError>
            + Send
            + 'static,
    ) -> impl Iterator<Item = Result<T>> + Send + 'static {
        let store = self.kv.name().to_owned();
        entries.filter_map(move |entry| {
            entry
                .and_then(|(store_key, value)| {
                    decode(&store_key, value).map_err(|e| corrupt(&store, e))
                })
                .transpose()
        })
    }

    fn put_if_live(
        &self,
        clock: &mut Clock,
        segment_timestamp: i64,
        store_key: &[u8],
        value: Option<Vec<u8>>,
    ) -> Result<bool> {
        let min_live = self.segment_id(
            clock
                .observed_stream_time
                .saturating_sub(self.retention_period),
        );
        if self.segment_id(segment_timestamp) < min_live {
            return Ok(false);
        }
        self.kv
            .put(self.data_key(segment_timestamp, store_key), value)?;
        if min_live > clock.dropped_below {
            self.kv
                .delete_range(&segment_prefix(i64::MIN), &segment_prefix(min_live))?;
            clock.dropped_below = min_live;
        }
        Ok(true)
    }

    fn observe(&self, clock: &mut Clock, timestamp: i64) -> Result<()> {
        if timestamp > clock.observed_stream_time {
            stream_time::stage(self.kv.as_ref(), STREAM_TIME_KEY, timestamp)?;
            clock.observed_stream_time = timestamp;
        }
        Ok(())
    }

    /// Segment ids that can hold visible records with segment timestamps in `from..=to`.
    /// Live records lie within one retention period of stream time, which bounds the
    /// search to `retention / interval + 2` segments whatever the caller asks for.
    fn segment_ids_to_search(&self, from: i64, to: i64) -> (i64, i64) {
        let stream_time = self.observed_stream_time();
        let newest = self.segment_id(stream_time);
        let oldest_live = newest - self.retention_period / self.segment_interval - 2;
        (
            self.segment_id(from).max(oldest_live),
            self.segment_id(to).min(newest),
        )
    }

    fn earliest_live_timestamp(&self) -> i64 {
        let edge = self
            .observed_stream_time()
            .saturating_sub(self.retention_period);
        match self.retention_edge {
            RetentionEdge::Expired => edge.saturating_add(1),
            RetentionEdge::Live => edge,
        }
    }

    /// Java's `timestamp / segmentInterval`: division truncating toward zero.
    fn segment_id(&self, timestamp: i64) -> i64 {
        timestamp / self.segment_interval
    }

    fn data_key(&self, segment_timestamp: i64, store_key: &[u8]) -> Vec<u8> {
        [
            segment_prefix(self.segment_id(segment_timestamp)).as_slice(),
            store_key,
        ]
        .concat()
    }

    fn clock(&self) -> MutexGuard<'_, Clock> {
        self.clock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What every store kept in time segments offers, whatever its records: the window stores
/// ([`WindowStore`](crate::store::window::WindowStore)) and the session stores
/// ([`SessionStore`](crate::store::session::SessionStore)) of either key layout.
pub trait SegmentedStore: Send + Sync {
    /// The largest segment timestamp written, removed or restored so far (-1 before any): a
    /// window's start, a session's end.
    fn observed_stream_time(&self) -> i64;

    /// Restores changelog records, keyed as every store of this kind's changelog is (the
    /// key-first window or session key), `None` values deleting. Records of already expired
    /// segments are skipped.
    fn restore(&self, records: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<()>;

    /// Commits the staged writes with `metadata` (see [`KeyValueStore::commit`]).
    fn commit(&self, metadata: &CommitMetadata) -> Result<()>;

    /// Drops the staged writes and returns to the committed stream time.
    fn rollback(&self) -> Result<()>;

    /// Approximate bytes staged since the last commit or rollback.
    fn approximate_uncommitted_bytes(&self) -> u64;

    /// Brings the records' values to `wanted` (see [`KeyValueStore::settle_value_layout`]);
    /// index entries keep their empty values.
    fn settle_value_layout(&self, wanted: ValueLayout) -> Result<Option<ValueLayout>>;
}

/// Defines, inside an `impl SegmentedStore` of a store with a `segments: Segments<S>` field,
/// the methods every segmented store answers from its segments alone.
macro_rules! segments_lifecycle {
    () => {
        fn observed_stream_time(&self) -> i64 {
            self.segments.observed_stream_time()
        }

        fn commit(&self, metadata: &crate::store::CommitMetadata) -> crate::store::Result<()> {
            self.segments.commit(metadata)
        }

        fn rollback(&self) -> crate::store::Result<()> {
            self.segments.rollback()
        }

        fn approximate_uncommitted_bytes(&self) -> u64 {
            self.segments.approximate_uncommitted_bytes()
        }
    };
}
pub(crate) use segments_lifecycle;

/// The value of the index entry that goes with a record's `value`: empty, or a deletion.
fn index_value(value: &Option<Vec<u8>>) -> Option<Vec<u8>> {
    value.as_ref().map(|_| Vec::new())
}

/// The lower scan bound of an index for keys from `key_from` (`None` = open end): the
/// key-ordered store's `lowerRange`, whose suffix of `suffix_len` zero bytes stands for the
/// timestamps (and sequence number), behind the index's `prefix`.
pub(crate) fn index_lower_range(prefix: u8, key_from: Option<&[u8]>, suffix_len: usize) -> Vec<u8> {
    let unprefixed = key_from
        .map(|key| lower_range(key, suffix_len))
        .unwrap_or_default();
    [&[prefix][..], &unprefixed].concat()
}

/// The upper scan bound of an index for keys up to `key_to`: the key-ordered store's
/// `upperRange` with the largest suffix the read admits, behind the index's `prefix`, or
/// the end of the index for any key.
pub(crate) fn index_upper_range(prefix: u8, key_to: Option<&[u8]>, max_suffix: &[u8]) -> Vec<u8> {
    match key_to {
        None => vec![prefix + 1],
        Some(key) => [&[prefix][..], &upper_range(key, max_suffix)].concat(),
    }
}

/// The keys a read returns, `from..=to` (`None` = open end), owned by the lazy scan that
/// filters by them.
pub(crate) struct KeyRange {
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
}

impl KeyRange {
    pub(crate) fn new(from: Option<&[u8]>, to: Option<&[u8]>) -> Self {
        KeyRange {
            from: from.map(<[u8]>::to_vec),
            to: to.map(<[u8]>::to_vec),
        }
    }

    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        self.from.as_deref().is_none_or(|from| key >= from)
            && self.to.as_deref().is_none_or(|to| key <= to)
    }
}

/// Whether a read's key range is empty because its ends are inverted (`None` = open end);
/// Kafka Streams answers such a read with nothing.
pub(crate) fn is_inverted(key_from: Option<&[u8]>, key_to: Option<&[u8]>) -> bool {
    matches!((key_from, key_to), (Some(from), Some(to)) if from > to)
}

/// A changelog key that does not decode: the caller handed in a malformed record.
fn malformed_changelog_key(error: FormatError) -> Error {
    Error::InvalidArgument(format!("changelog key: {error}"))
}

/// A store key of this store's own writing failed to decode: the data is damaged.
pub(crate) fn corrupt(store: &str, error: FormatError) -> Error {
    Error::Corrupt {
        path: PathBuf::from(store),
        reason: error.to_string(),
    }
}

/// `0x00 ‖ id` with the sign bit flipped, so negative ids sort before positive ones.
fn segment_prefix(id: i64) -> [u8; PREFIX_LEN] {
    let mut prefix = [DATA_TAG; PREFIX_LEN];
    prefix[1..].copy_from_slice(&((id as u64) ^ (1 << 63)).to_be_bytes());
    prefix
}

/// The segment id of a data key.
fn decode_segment_id(data_key: &[u8]) -> i64 {
    let mut id = [0u8; 8];
    id.copy_from_slice(&data_key[1..PREFIX_LEN]);
    (u64::from_be_bytes(id) ^ (1 << 63)) as i64
}

/// The first key after segment `id`'s entries.
fn segment_end(id: i64) -> Vec<u8> {
    match id.checked_add(1) {
        Some(next) => segment_prefix(next).to_vec(),
        None => vec![DATA_TAG + 1],
    }
}
