//! Versioned key-value store: Kafka Streams' `VersionedKeyValueStore` semantics (as
//! implemented by `RocksDBVersionedStore`) on a transactional key-value store.
//!
//! Each key has versions `validFrom → value or tombstone`; a version is valid until the
//! next version's timestamp. Stream time is the largest timestamp put; history retention
//! (which is also the grace period) bounds what is accepted and answered:
//!
//! * `put(key, value, ts)` with `ts < stream time - history retention` is refused
//!   ([`PUT_RETURN_CODE_NOT_PUT`]); otherwise it returns the new version's valid-to: the
//!   next version's timestamp, or [`PUT_RETURN_CODE_VALID_TO_UNDEFINED`] for the latest.
//! * `get(key, asOf)` older than the history retention answers from the latest version only.
//! * the latest version is kept forever; older versions are deleted once their valid-to
//!   falls behind the history retention.
//!
//! On-disk layout (Sluice's own; the changelog carries plain values with the version
//! timestamp as record timestamp, see [`crate::store::format`]):
//!
//! ```text
//! version:       0x00 ‖ key length (4) ‖ key ‖ validFrom (8, sign-flipped) → 0x01 ‖ value | 0x00
//! expiry index:  0x01 ‖ validTo (8, sign-flipped) ‖ key length ‖ key ‖ validFrom → empty
//! stream time:   0x02 ‖ 'T' → timestamp (8)
//! ```
//!
//! Every version except a key's latest has an expiry index entry, so expired history is
//! found by one scan in valid-to order.

use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::store::format::FormatError;
use crate::store::segments::corrupt;
use crate::store::stream_time;
use crate::store::{CommitMetadata, IsolationLevel, KeyBounds, KeyValueStore, Order, Result};

/// `put` return value: the version is the latest, valid until a later one arrives.
pub const PUT_RETURN_CODE_VALID_TO_UNDEFINED: i64 = -1;
/// `put` return value: the timestamp was older than the grace period; nothing was written.
pub const PUT_RETURN_CODE_NOT_PUT: i64 = i64::MIN;

const VERSION_TAG: u8 = 0x00;
const EXPIRY_TAG: u8 = 0x01;
const STREAM_TIME_KEY: &[u8] = &[0x02, b'T'];
const VALUE_MARKER: u8 = 0x01;
const TOMBSTONE_MARKER: u8 = 0x00;

/// A changelog record of a versioned store: key, value (`None`: a deletion) and record timestamp.
pub type VersionedChangelogRecord = (Vec<u8>, Option<Vec<u8>>, i64);

/// A version of a key, as `get` answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedRecord {
    /// The value.
    pub value: Vec<u8>,
    /// When this version became valid.
    pub timestamp: i64,
    /// When the next version replaced it; `None` for the latest version.
    pub valid_to: Option<i64>,
}

/// A transactional versioned key-value store over a key-value store it owns entirely.
pub struct VersionedStore<S: KeyValueStore + ?Sized = dyn KeyValueStore> {
    kv: Arc<S>,
    history_retention: i64,
    clock: Mutex<Clock>,
}

struct Clock {
    observed_stream_time: i64,
    /// History with valid-to below this was deleted since the last commit or rollback.
    pruned_below: i64,
}

/// A version found in the store.
struct Version {
    valid_from: i64,
    value: Option<Vec<u8>>,
}

impl<S: KeyValueStore + ?Sized> VersionedStore<S> {
    /// A versioned store over `kv` keeping `history_retention` ms of history, resuming the
    /// stream time committed in it.
    pub fn open(kv: Arc<S>, history_retention: i64) -> Result<Self> {
        if history_retention < 0 {
            return Err(crate::store::Error::InvalidArgument(format!(
                "history retention {history_retention} < 0"
            )));
        }
        let observed_stream_time = stream_time::read(kv.as_ref(), STREAM_TIME_KEY)?;
        Ok(VersionedStore {
            kv,
            history_retention,
            clock: Mutex::new(Clock {
                observed_stream_time,
                pruned_below: i64::MIN,
            }),
        })
    }

    /// Kafka Streams' `put(key, value, timestamp)`; `None` puts a tombstone. Returns the
    /// new version's valid-to, [`PUT_RETURN_CODE_VALID_TO_UNDEFINED`] when it is the latest,
    /// or [`PUT_RETURN_CODE_NOT_PUT`] when `timestamp` is past the grace period.
    pub fn put(&self, key: &[u8], value: Option<Vec<u8>>, timestamp: i64) -> Result<i64> {
        let mut clock = self.clock();
        if timestamp < self.horizon(&clock) {
            return Ok(PUT_RETURN_CODE_NOT_PUT);
        }
        self.write_version(&mut clock, key, value, timestamp)
    }

    /// Kafka Streams' `delete(key, timestamp)`: puts a tombstone and returns the version
    /// that was valid at `timestamp`, or `None` (also when `timestamp` is past the grace
    /// period, in which case nothing is written).
    pub fn delete(&self, key: &[u8], timestamp: i64) -> Result<Option<VersionedRecord>> {
        let mut clock = self.clock();
        if timestamp < self.horizon(&clock) {
            return Ok(None);
        }
        let existing =
            self.get_as_of_locked(&clock, key, timestamp, IsolationLevel::ReadUncommitted)?;
        self.write_version(&mut clock, key, None, timestamp)?;
        Ok(existing)
    }

    /// Kafka Streams' `get(key)`: the latest version, unless it is a tombstone.
    pub fn get(&self, key: &[u8], isolation: IsolationLevel) -> Result<Option<VersionedRecord>> {
        Ok(self.latest(key, isolation)?.and_then(|latest| {
            latest.value.map(|value| VersionedRecord {
                value,
                timestamp: latest.valid_from,
                valid_to: None,
            })
        }))
    }

    /// Kafka Streams' `get(key, asOfTimestamp)`: the version valid at `as_of`. Past the
    /// history retention only the latest version is considered.
    pub fn get_as_of(
        &self,
        key: &[u8],
        as_of: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<VersionedRecord>> {
        let clock = self.clock();
        self.get_as_of_locked(&clock, key, as_of, isolation)
    }

    /// `RocksDBVersionedStore.get(key, fromTime, toTime, order)`, the read behind IQv2's
    /// `MultiVersionedKeyQuery`: every version of `key` valid at some time in
    /// `from_time..=to_time` (valid-from `<= to_time`, valid-to `> from_time`), tombstones
    /// left out, by timestamp in `order` (`Forward` = ascending). When `to_time` is older
    /// than the history retention only the latest version is considered, as for
    /// [`get_as_of`](Self::get_as_of). Validating `from_time <= to_time` is the caller's
    /// job, as in Kafka Streams' metered layer.
    pub fn get_versions(
        &self,
        key: &[u8],
        from_time: i64,
        to_time: i64,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<Vec<VersionedRecord>> {
        let clock = self.clock();
        if to_time < self.horizon(&clock) {
            let latest = self
                .get(key, isolation)?
                .filter(|latest| latest.timestamp <= to_time);
            return Ok(latest.into_iter().collect());
        }
        // Newest first: each version's valid-to is the valid-from of the one read before it,
        // and once a version ends by `from_time` every older one does too.
        let mut found = Vec::new();
        let mut newer_valid_from = None;
        for entry in self.kv.scan(
            &KeyBounds::prefix(&version_prefix(key)),
            Order::Reverse,
            isolation,
        )? {
            let version = self.decode_version(entry?)?;
            let valid_to = newer_valid_from.replace(version.valid_from);
            if valid_to.is_some_and(|valid_to| valid_to <= from_time) {
                break;
            }
            if version.valid_from > to_time {
                continue;
            }
            if let Some(value) = version.value {
                found.push(VersionedRecord {
                    value,
                    timestamp: version.valid_from,
                    valid_to,
                });
            }
        }
        if order == Order::Forward {
            found.reverse();
        }
        Ok(found)
    }

    /// Restores changelog records `(key, value, record timestamp)` in changelog order.
    /// Like Kafka Streams' restore it applies no grace period; expired history is deleted.
    pub fn restore(&self, records: Vec<VersionedChangelogRecord>) -> Result<()> {
        let mut clock = self.clock();
        for (key, value, timestamp) in records {
            self.write_version(&mut clock, &key, value, timestamp)?;
        }
        Ok(())
    }

    /// The largest timestamp put or restored so far (-1 before any).
    pub fn observed_stream_time(&self) -> i64 {
        self.clock().observed_stream_time
    }

    /// Commits the staged writes with `metadata` (see [`KeyValueStore::commit`]).
    pub fn commit(&self, metadata: &CommitMetadata) -> Result<()> {
        self.kv.commit(metadata)
    }

    /// Drops the staged writes and returns to the committed stream time.
    pub fn rollback(&self) -> Result<()> {
        let mut clock = self.clock();
        self.kv.rollback()?;
        clock.observed_stream_time = stream_time::read(self.kv.as_ref(), STREAM_TIME_KEY)?;
        clock.pruned_below = i64::MIN;
        Ok(())
    }

    /// Approximate bytes staged since the last commit or rollback.
    pub fn approximate_uncommitted_bytes(&self) -> u64 {
        self.kv.approximate_uncommitted_bytes()
    }

    fn get_as_of_locked(
        &self,
        clock: &Clock,
        key: &[u8],
        as_of: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<VersionedRecord>> {
        if as_of < self.horizon(clock) {
            let latest = self
                .latest(key, isolation)?
                .filter(|latest| latest.valid_from <= as_of);
            return Ok(latest.and_then(|latest| {
                latest.value.map(|value| VersionedRecord {
                    value,
                    timestamp: latest.valid_from,
                    valid_to: None,
                })
            }));
        }
        let Some(version) = self.at_or_before(key, as_of, isolation)? else {
            return Ok(None);
        };
        let Some(value) = version.value else {
            return Ok(None);
        };
        let valid_to = self
            .after(key, version.valid_from, isolation)?
            .map(|next| next.valid_from);
        Ok(Some(VersionedRecord {
            value,
            timestamp: version.valid_from,
            valid_to,
        }))
    }

    fn write_version(
        &self,
        clock: &mut Clock,
        key: &[u8],
        value: Option<Vec<u8>>,
        timestamp: i64,
    ) -> Result<i64> {
        if timestamp > clock.observed_stream_time {
            stream_time::stage(self.kv.as_ref(), STREAM_TIME_KEY, timestamp)?;
            clock.observed_stream_time = timestamp;
        }
        let isolation = IsolationLevel::ReadUncommitted;
        let next = self
            .after(key, timestamp, isolation)?
            .map(|next| next.valid_from);
        let replaces = self
            .kv
            .get(&version_key(key, timestamp), isolation)?
            .is_some();
        if !replaces {
            // The version before this one now ends here instead of at `next`.
            if let Some(previous) =
                self.at_or_before(key, timestamp.saturating_sub(1), isolation)?
            {
                if previous.valid_from < timestamp {
                    if let Some(next) = next {
                        self.kv
                            .delete(&expiry_key(next, key, previous.valid_from))?;
                    }
                    self.kv.put(
                        expiry_key(timestamp, key, previous.valid_from),
                        Some(Vec::new()),
                    )?;
                }
            }
            if let Some(next) = next {
                self.kv
                    .put(expiry_key(next, key, timestamp), Some(Vec::new()))?;
            }
        }
        let stored = match value {
            Some(value) => [&[VALUE_MARKER][..], &value].concat(),
            None => vec![TOMBSTONE_MARKER],
        };
        self.kv.put(version_key(key, timestamp), Some(stored))?;
        self.prune(clock)?;
        Ok(next.unwrap_or(PUT_RETURN_CODE_VALID_TO_UNDEFINED))
    }

    /// Deletes the versions whose valid-to fell behind the history retention: no read or
    /// write inside the retention can reach them any more.
    fn prune(&self, clock: &mut Clock) -> Result<()> {
        let horizon = self.horizon(clock);
        if horizon <= clock.pruned_below {
            return Ok(());
        }
        let bounds = KeyBounds::half_open(&[EXPIRY_TAG], &expiry_prefix(horizon));
        for entry in self
            .kv
            .scan(&bounds, Order::Forward, IsolationLevel::ReadUncommitted)?
        {
            let (index_key, _) = entry?;
            let (key, valid_from) =
                decode_expiry_key(&index_key).map_err(|e| corrupt(self.kv.name(), e))?;
            self.kv.delete(&version_key(key, valid_from))?;
            self.kv.delete(&index_key)?;
        }
        clock.pruned_below = horizon;
        Ok(())
    }

    fn latest(&self, key: &[u8], isolation: IsolationLevel) -> Result<Option<Version>> {
        let prefix = version_prefix(key);
        self.first_version(KeyBounds::prefix(&prefix), Order::Reverse, isolation)
    }

    fn at_or_before(
        &self,
        key: &[u8],
        timestamp: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Version>> {
        let prefix = version_prefix(key);
        let upper = version_key(key, timestamp);
        let bounds = KeyBounds::from_bounds(Bound::Included(&prefix), Bound::Included(&upper));
        self.first_version(bounds, Order::Reverse, isolation)
    }

    fn after(
        &self,
        key: &[u8],
        timestamp: i64,
        isolation: IsolationLevel,
    ) -> Result<Option<Version>> {
        let prefix = version_prefix(key);
        let lower = version_key(key, timestamp);
        let prefix_bounds = KeyBounds::prefix(&prefix);
        let upper = prefix_bounds
            .upper()
            .map_or(Bound::Unbounded, Bound::Excluded);
        let bounds = KeyBounds::from_bounds(Bound::Excluded(&lower), upper);
        self.first_version(bounds, Order::Forward, isolation)
    }

    fn first_version(
        &self,
        bounds: KeyBounds,
        order: Order,
        isolation: IsolationLevel,
    ) -> Result<Option<Version>> {
        if bounds.is_empty() {
            return Ok(None);
        }
        self.kv
            .first_in(&bounds, order, isolation)?
            .map(|entry| self.decode_version(entry))
            .transpose()
    }

    fn decode_version(&self, (stored_key, stored): (Vec<u8>, Vec<u8>)) -> Result<Version> {
        let valid_from = decode_timestamp(&stored_key[stored_key.len() - 8..]);
        let value = match stored.split_first() {
            Some((&VALUE_MARKER, value)) => Some(value.to_vec()),
            Some((&TOMBSTONE_MARKER, [])) => None,
            _ => {
                return Err(corrupt(
                    self.kv.name(),
                    FormatError::new("version", "unknown value marker"),
                ))
            }
        };
        Ok(Version { valid_from, value })
    }

    /// The oldest timestamp still within history retention (and grace).
    fn horizon(&self, clock: &Clock) -> i64 {
        clock
            .observed_stream_time
            .saturating_sub(self.history_retention)
    }

    fn clock(&self) -> MutexGuard<'_, Clock> {
        self.clock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Timestamps sort as signed numbers: big-endian with the sign bit flipped.
fn encode_timestamp(timestamp: i64) -> [u8; 8] {
    ((timestamp as u64) ^ (1 << 63)).to_be_bytes()
}

fn decode_timestamp(bytes: &[u8]) -> i64 {
    let mut buf = [0u8; 8];
    buf.copy_from_slice(bytes);
    (u64::from_be_bytes(buf) ^ (1 << 63)) as i64
}

/// The key length keeps one key's versions contiguous: no other key is a prefix of it.
fn version_prefix(key: &[u8]) -> Vec<u8> {
    let mut prefix = Vec::with_capacity(5 + key.len() + 8);
    prefix.push(VERSION_TAG);
    prefix.extend_from_slice(&key_len(key).to_be_bytes());
    prefix.extend_from_slice(key);
    prefix
}

fn version_key(key: &[u8], valid_from: i64) -> Vec<u8> {
    let mut stored = version_prefix(key);
    stored.extend_from_slice(&encode_timestamp(valid_from));
    stored
}

fn expiry_prefix(valid_to: i64) -> [u8; 9] {
    let mut prefix = [EXPIRY_TAG; 9];
    prefix[1..].copy_from_slice(&encode_timestamp(valid_to));
    prefix
}

fn expiry_key(valid_to: i64, key: &[u8], valid_from: i64) -> Vec<u8> {
    let mut stored = expiry_prefix(valid_to).to_vec();
    stored.extend_from_slice(&key_len(key).to_be_bytes());
    stored.extend_from_slice(key);
    stored.extend_from_slice(&encode_timestamp(valid_from));
    stored
}

fn decode_expiry_key(stored: &[u8]) -> std::result::Result<(&[u8], i64), FormatError> {
    let malformed = || FormatError::new("version expiry index", format!("{} bytes", stored.len()));
    let len_bytes: [u8; 4] = stored
        .get(9..13)
        .ok_or_else(malformed)?
        .try_into()
        .map_err(|_| malformed())?;
    let key_end = 13 + u32::from_be_bytes(len_bytes) as usize;
    if stored.len() != key_end + 8 {
        return Err(malformed());
    }
    Ok((&stored[13..key_end], decode_timestamp(&stored[key_end..])))
}

fn key_len(key: &[u8]) -> u32 {
    u32::try_from(key.len()).expect("key longer than 4 GiB")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_sort_as_signed_numbers() {
        let encoded: Vec<_> = [i64::MIN, -1, 0, 1, i64::MAX]
            .map(encode_timestamp)
            .to_vec();
        assert!(encoded.windows(2).all(|pair| pair[0] < pair[1]));
        for timestamp in [i64::MIN, -1, 0, 1, i64::MAX] {
            assert_eq!(decode_timestamp(&encode_timestamp(timestamp)), timestamp);
        }
    }

    #[test]
    fn expiry_keys_decode_to_key_and_valid_from() {
        let stored = expiry_key(20, b"key", -5);
        assert_eq!(decode_expiry_key(&stored).unwrap(), (&b"key"[..], -5));
        assert!(decode_expiry_key(&stored[..stored.len() - 1]).is_err());
    }

    #[test]
    fn a_key_is_never_a_prefix_of_another_keys_versions() {
        assert!(!version_key(b"ab", 0).starts_with(&version_prefix(b"a")));
    }
}
