//! Changelog records from store values and back (what Kafka Streams' change-logging layers
//! write and its restore converters read).
//!
//! Stores keep timestamps and headers inside their values; changelog records do not. The
//! change-logging layer moves them into the record's own timestamp and headers, and restore
//! puts them back. Record keys are the bytes-store keys unchanged (for windowed stores the
//! key-first layouts of [`super::window_key`] and [`super::session_key`]).
//!
//! | store value layout | changelog value | record timestamp | record headers |
//! |---|---|---|---|
//! | [`StoreValueLayout::Plain`] | the value | the processed record's | none |
//! | [`StoreValueLayout::Timestamped`] | plain value | the value's | none |
//! | [`StoreValueLayout::TimestampedWithHeaders`] | plain value | the value's | the value's |
//! | [`StoreValueLayout::SessionWithHeaders`] | plain aggregate | the processed record's | the value's |
//!
//! A deletion is a tombstone carrying the processed record's timestamp (and, for
//! headers-aware stores, its headers). Versioned stores use `Plain` with the version
//! timestamp as the processed record's timestamp.

use super::headers::{self, Header};
use super::{timestamped, FormatError};

/// The value part of a changelog record: value, timestamp and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangelogValue {
    /// Record value; `None` is a tombstone.
    pub value: Option<Vec<u8>>,
    /// Record timestamp.
    pub timestamp: i64,
    /// Record headers, in order.
    pub headers: Vec<Header>,
}

/// The record being processed when a store was written: its timestamp and headers.
#[derive(Debug, Clone, Copy)]
pub struct RecordContext<'a> {
    /// Timestamp of the record being processed.
    pub timestamp: i64,
    /// Headers of the record being processed.
    pub headers: &'a [Header],
}

/// How a store lays out its values; decides how they map to changelog records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreValueLayout {
    /// Plain values: plain key-value, window and session stores, versioned stores.
    Plain,
    /// [`timestamped`] values: timestamped key-value and window stores.
    Timestamped,
    /// [`headers`] values with timestamp: headers-aware key-value and window stores.
    TimestampedWithHeaders,
    /// [`headers`] aggregates without timestamp: headers-aware session stores.
    SessionWithHeaders,
}

impl StoreValueLayout {
    /// The changelog record value for a store write of `store_value` (`None` deletes)
    /// made while processing `context`.
    pub fn to_changelog(
        self,
        store_value: Option<&[u8]>,
        context: RecordContext<'_>,
    ) -> Result<ChangelogValue, FormatError> {
        let Some(stored) = store_value else {
            let headers = match self {
                StoreValueLayout::Plain | StoreValueLayout::Timestamped => Vec::new(),
                StoreValueLayout::TimestampedWithHeaders | StoreValueLayout::SessionWithHeaders => {
                    context.headers.to_vec()
                }
            };
            return Ok(ChangelogValue { value: None, timestamp: context.timestamp, headers });
        };
        Ok(match self {
            StoreValueLayout::Plain => ChangelogValue {
                value: Some(stored.to_vec()),
                timestamp: context.timestamp,
                headers: Vec::new(),
            },
            StoreValueLayout::Timestamped => {
                let decoded = timestamped::decode(stored)?;
                ChangelogValue {
                    value: Some(decoded.value.to_vec()),
                    timestamp: decoded.timestamp,
                    headers: Vec::new(),
                }
            }
            StoreValueLayout::TimestampedWithHeaders => {
                let decoded = headers::decode_value_timestamp_headers(stored)?;
                ChangelogValue {
                    value: Some(decoded.value.to_vec()),
                    timestamp: decoded.timestamp,
                    headers: decoded.headers,
                }
            }
            StoreValueLayout::SessionWithHeaders => {
                let decoded = headers::decode_aggregation_with_headers(stored)?;
                ChangelogValue {
                    value: Some(decoded.aggregate.to_vec()),
                    timestamp: context.timestamp,
                    headers: decoded.headers,
                }
            }
        })
    }

    /// The store value a restored changelog record stands for (`None` deletes).
    pub fn from_changelog(self, record: &ChangelogValue) -> Option<Vec<u8>> {
        let value = record.value.as_deref()?;
        Some(match self {
            StoreValueLayout::Plain => value.to_vec(),
            StoreValueLayout::Timestamped => timestamped::encode(value, record.timestamp),
            StoreValueLayout::TimestampedWithHeaders => {
                headers::encode_value_timestamp_headers(value, record.timestamp, &record.headers)
            }
            StoreValueLayout::SessionWithHeaders => {
                headers::encode_aggregation_with_headers(value, &record.headers)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [StoreValueLayout; 4] = [
        StoreValueLayout::Plain,
        StoreValueLayout::Timestamped,
        StoreValueLayout::TimestampedWithHeaders,
        StoreValueLayout::SessionWithHeaders,
    ];

    fn context(headers: &[Header]) -> RecordContext<'_> {
        RecordContext { timestamp: 99, headers }
    }

    #[test]
    fn timestamped_values_move_their_timestamp_into_the_record() {
        let stored = timestamped::encode(b"v", 5);
        let record = StoreValueLayout::Timestamped.to_changelog(Some(&stored), context(&[])).unwrap();
        assert_eq!(record, ChangelogValue { value: Some(b"v".to_vec()), timestamp: 5, headers: vec![] });
        assert_eq!(StoreValueLayout::Timestamped.from_changelog(&record), Some(stored));
    }

    #[test]
    fn headers_aware_values_move_timestamp_and_headers_into_the_record() {
        let headers = vec![Header::new("trace", "t1"), Header::null("n")];
        let stored = headers::encode_value_timestamp_headers(b"v", 5, &headers);
        let layout = StoreValueLayout::TimestampedWithHeaders;
        let record = layout.to_changelog(Some(&stored), context(&[Header::new("other", "x")])).unwrap();
        assert_eq!(record, ChangelogValue { value: Some(b"v".to_vec()), timestamp: 5, headers: headers.clone() });
        assert_eq!(layout.from_changelog(&record), Some(stored));
    }

    #[test]
    fn session_aggregates_keep_the_processed_record_timestamp() {
        let headers = vec![Header::new("h", "1")];
        let stored = headers::encode_aggregation_with_headers(b"agg", &headers);
        let layout = StoreValueLayout::SessionWithHeaders;
        let record = layout.to_changelog(Some(&stored), context(&[])).unwrap();
        assert_eq!(record, ChangelogValue { value: Some(b"agg".to_vec()), timestamp: 99, headers });
        assert_eq!(layout.from_changelog(&record), Some(stored));
    }

    #[test]
    fn plain_values_pass_through_without_headers() {
        let record = StoreValueLayout::Plain
            .to_changelog(Some(b"raw"), context(&[Header::new("h", "1")]))
            .unwrap();
        assert_eq!(record, ChangelogValue { value: Some(b"raw".to_vec()), timestamp: 99, headers: vec![] });
        assert_eq!(StoreValueLayout::Plain.from_changelog(&record), Some(b"raw".to_vec()));
    }

    #[test]
    fn tombstones_carry_the_context_timestamp_and_headers_only_when_headers_aware() {
        let headers = [Header::new("h", "1")];
        for layout in ALL {
            let record = layout.to_changelog(None, context(&headers)).unwrap();
            assert_eq!(record.value, None);
            assert_eq!(record.timestamp, 99);
            let headers_aware = matches!(
                layout,
                StoreValueLayout::TimestampedWithHeaders | StoreValueLayout::SessionWithHeaders
            );
            assert_eq!(record.headers.len(), usize::from(headers_aware), "{layout:?}");
            assert_eq!(layout.from_changelog(&record), None);
        }
    }

    #[test]
    fn malformed_store_values_are_reported() {
        assert!(StoreValueLayout::Timestamped.to_changelog(Some(&[1, 2]), context(&[])).is_err());
        assert!(StoreValueLayout::TimestampedWithHeaders.to_changelog(Some(&[0x00]), context(&[])).is_err());
    }
}
