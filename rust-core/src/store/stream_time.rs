//! Observed stream time, kept inside the store it governs.
//!
//! Window, session and versioned stores expire records by the largest timestamp they have
//! seen. They stage it under a key of their own next to the data, so it commits and rolls
//! back with the writes that advanced it, and a reopened store resumes from it.

use crate::store::format::FormatError;
use crate::store::segments::corrupt;
use crate::store::{IsolationLevel, KeyValueStore, Result};

/// Kafka Streams' "no timestamp observed yet" (`ConsumerRecord.NO_TIMESTAMP`).
const NO_TIMESTAMP: i64 = -1;

/// The stream time staged or committed under `key`, [`NO_TIMESTAMP`] when none is.
pub(crate) fn read<S: KeyValueStore + ?Sized>(kv: &S, key: &[u8]) -> Result<i64> {
    match kv.get(key, IsolationLevel::ReadUncommitted)? {
        None => Ok(NO_TIMESTAMP),
        Some(bytes) => match <[u8; 8]>::try_from(bytes.as_slice()) {
            Ok(bytes) => Ok(i64::from_be_bytes(bytes)),
            Err(_) => Err(corrupt(
                kv.name(),
                FormatError::new("stream time", "not 8 bytes"),
            )),
        },
    }
}

/// Stages `stream_time` under `key`.
pub(crate) fn stage<S: KeyValueStore + ?Sized>(kv: &S, key: &[u8], stream_time: i64) -> Result<()> {
    kv.put(key.to_vec(), Some(stream_time.to_be_bytes().to_vec()))
}
