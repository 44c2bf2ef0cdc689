//! The timestamped value layout (`ValueAndTimestampSerializer`): `timestamp(8, BE) ‖ value`.
//!
//! Values of timestamped key-value and window stores have this layout in the store, and
//! versioned stores answer `get` with it. Their changelog records do not: they carry the
//! plain value, and the timestamp as the record's.

use super::{read_i64, FormatError, TIMESTAMP_SIZE};

const LAYOUT: &str = "timestamped value";

/// A decoded timestamped value, borrowing the plain value from the encoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueAndTimestamp<'a> {
    /// The plain value bytes.
    pub value: &'a [u8],
    /// The timestamp stored with it.
    pub timestamp: i64,
}

/// Encodes `value` with its `timestamp`.
pub fn encode(value: &[u8], timestamp: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(TIMESTAMP_SIZE + value.len());
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.extend_from_slice(value);
    out
}

/// Decodes a timestamped value.
pub fn decode(bytes: &[u8]) -> Result<ValueAndTimestamp<'_>, FormatError> {
    if bytes.len() < TIMESTAMP_SIZE {
        return Err(FormatError::too_short(LAYOUT, TIMESTAMP_SIZE, bytes.len()));
    }
    Ok(ValueAndTimestamp {
        value: &bytes[TIMESTAMP_SIZE..],
        timestamp: read_i64(bytes, 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_prefix_is_big_endian() {
        assert_eq!(
            encode(b"v", 0x0102_0304_0506_0708),
            [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, b'v']
        );
        assert_eq!(encode(b"", -1), [0xff; 8]);
    }

    #[test]
    fn decodes_what_it_encodes() {
        let bytes = encode(b"value", 1_700_000_000_000);
        assert_eq!(
            decode(&bytes).unwrap(),
            ValueAndTimestamp {
                value: b"value",
                timestamp: 1_700_000_000_000
            }
        );
        let empty = encode(b"", 7);
        assert_eq!(
            decode(&empty).unwrap(),
            ValueAndTimestamp {
                value: b"",
                timestamp: 7
            }
        );
    }

    #[test]
    fn rejects_values_shorter_than_a_timestamp() {
        assert!(decode(&[0; 7]).is_err());
    }
}
