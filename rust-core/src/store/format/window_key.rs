//! Window store keys: a record key, the window start and a sequence number.
//!
//! Three layouts exist in Kafka Streams 4.4:
//!
//! * [`WindowKeyLayout::KeyFirst`] (`WindowKeySchema`): `key ‖ start(8) ‖ seqnum(4)`.
//!   The key of every window store changelog record, whatever the store, and the on-disk
//!   key of the segmented RocksDB window store.
//! * [`WindowKeyLayout::PrefixedTimeFirst`] (`TimeFirstWindowKeySchema`):
//!   `0x00 ‖ start(8) ‖ key ‖ seqnum(4)`. On-disk base key of the time-ordered window store
//!   (stream-stream joins, emit-final windowed aggregations), so expiry scans by time.
//! * [`WindowKeyLayout::PrefixedKeyFirst`] (`KeyFirstWindowKeySchema`):
//!   `0x01 ‖ key ‖ start(8) ‖ seqnum(4)`. On-disk index key of the same time-ordered store.
//!
//! The sequence number tells duplicates apart in stores that retain them; it is 0 otherwise.

use super::{read_i32, read_i64, FormatError, TIMESTAMP_SIZE};

/// Size of the sequence number.
pub const SEQNUM_SIZE: usize = 4;

/// Prefix byte of [`WindowKeyLayout::PrefixedTimeFirst`] keys.
pub const TIME_FIRST_PREFIX: u8 = 0x00;
/// Prefix byte of [`WindowKeyLayout::PrefixedKeyFirst`] keys.
pub const KEY_FIRST_PREFIX: u8 = 0x01;

const LAYOUT: &str = "window key";

/// Which window key layout to encode or decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKeyLayout {
    /// `key ‖ start ‖ seqnum`: changelog and segmented window store.
    KeyFirst,
    /// `0x00 ‖ start ‖ key ‖ seqnum`: time-ordered window store, base key.
    PrefixedTimeFirst,
    /// `0x01 ‖ key ‖ start ‖ seqnum`: time-ordered window store, index key.
    PrefixedKeyFirst,
}

/// A decoded window key, borrowing the record key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowKey<'a> {
    /// The record key bytes.
    pub key: &'a [u8],
    /// Start of the window, in milliseconds.
    pub window_start: i64,
    /// Sequence number telling duplicates apart.
    pub seqnum: i32,
}

impl WindowKeyLayout {
    /// Encodes a window key in this layout.
    pub fn encode(self, key: &[u8], window_start: i64, seqnum: i32) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + key.len() + TIMESTAMP_SIZE + SEQNUM_SIZE);
        match self {
            WindowKeyLayout::KeyFirst => {
                out.extend_from_slice(key);
                out.extend_from_slice(&window_start.to_be_bytes());
            }
            WindowKeyLayout::PrefixedTimeFirst => {
                out.push(TIME_FIRST_PREFIX);
                out.extend_from_slice(&window_start.to_be_bytes());
                out.extend_from_slice(key);
            }
            WindowKeyLayout::PrefixedKeyFirst => {
                out.push(KEY_FIRST_PREFIX);
                out.extend_from_slice(key);
                out.extend_from_slice(&window_start.to_be_bytes());
            }
        }
        out.extend_from_slice(&seqnum.to_be_bytes());
        out
    }

    /// Decodes a window key in this layout.
    pub fn decode(self, bytes: &[u8]) -> Result<WindowKey<'_>, FormatError> {
        let prefix = match self {
            WindowKeyLayout::KeyFirst => 0,
            WindowKeyLayout::PrefixedTimeFirst | WindowKeyLayout::PrefixedKeyFirst => 1,
        };
        let fixed = prefix + TIMESTAMP_SIZE + SEQNUM_SIZE;
        if bytes.len() < fixed {
            return Err(FormatError::too_short(LAYOUT, fixed, bytes.len()));
        }
        let seqnum = read_i32(bytes, bytes.len() - SEQNUM_SIZE);
        match self {
            WindowKeyLayout::KeyFirst => {
                let key_end = bytes.len() - TIMESTAMP_SIZE - SEQNUM_SIZE;
                Ok(WindowKey {
                    key: &bytes[..key_end],
                    window_start: read_i64(bytes, key_end),
                    seqnum,
                })
            }
            WindowKeyLayout::PrefixedTimeFirst => {
                expect_prefix(bytes, TIME_FIRST_PREFIX)?;
                Ok(WindowKey {
                    key: &bytes[1 + TIMESTAMP_SIZE..bytes.len() - SEQNUM_SIZE],
                    window_start: read_i64(bytes, 1),
                    seqnum,
                })
            }
            WindowKeyLayout::PrefixedKeyFirst => {
                expect_prefix(bytes, KEY_FIRST_PREFIX)?;
                let key_end = bytes.len() - TIMESTAMP_SIZE - SEQNUM_SIZE;
                Ok(WindowKey {
                    key: &bytes[1..key_end],
                    window_start: read_i64(bytes, key_end),
                    seqnum,
                })
            }
        }
    }
}

fn expect_prefix(bytes: &[u8], prefix: u8) -> Result<(), FormatError> {
    if bytes[0] == prefix {
        Ok(())
    } else {
        Err(FormatError::new(
            LAYOUT,
            format!("prefix byte {:#04x}, expected {prefix:#04x}", bytes[0]),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: i64 = 0x0102_0304_0506_0708;
    const START_BYTES: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

    fn concat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn key_first_is_key_then_start_then_seqnum() {
        let bytes = WindowKeyLayout::KeyFirst.encode(b"key", START, 0x0a0b_0c0d);
        assert_eq!(
            bytes,
            concat(&[b"key", &START_BYTES, &[0x0a, 0x0b, 0x0c, 0x0d]])
        );
        let decoded = WindowKeyLayout::KeyFirst.decode(&bytes).unwrap();
        assert_eq!(
            decoded,
            WindowKey {
                key: b"key",
                window_start: START,
                seqnum: 0x0a0b_0c0d
            }
        );
    }

    #[test]
    fn prefixed_layouts_put_a_tag_byte_first() {
        let time_first = WindowKeyLayout::PrefixedTimeFirst.encode(b"k", START, 1);
        assert_eq!(
            time_first,
            concat(&[&[0x00], &START_BYTES, b"k", &[0, 0, 0, 1]])
        );
        let key_first = WindowKeyLayout::PrefixedKeyFirst.encode(b"k", START, 1);
        assert_eq!(
            key_first,
            concat(&[&[0x01], b"k", &START_BYTES, &[0, 0, 0, 1]])
        );
        let expected = WindowKey {
            key: b"k",
            window_start: START,
            seqnum: 1,
        };
        assert_eq!(
            WindowKeyLayout::PrefixedTimeFirst
                .decode(&time_first)
                .unwrap(),
            expected
        );
        assert_eq!(
            WindowKeyLayout::PrefixedKeyFirst
                .decode(&key_first)
                .unwrap(),
            expected
        );
        assert!(WindowKeyLayout::PrefixedTimeFirst
            .decode(&key_first)
            .is_err());
    }

    #[test]
    fn empty_keys_and_negative_numbers_round_trip() {
        for layout in [
            WindowKeyLayout::KeyFirst,
            WindowKeyLayout::PrefixedTimeFirst,
            WindowKeyLayout::PrefixedKeyFirst,
        ] {
            let bytes = layout.encode(b"", -1, i32::MAX);
            let decoded = layout.decode(&bytes).unwrap();
            assert_eq!(
                decoded,
                WindowKey {
                    key: b"",
                    window_start: -1,
                    seqnum: i32::MAX
                }
            );
        }
    }

    #[test]
    fn rejects_keys_too_short_for_the_suffix() {
        assert!(WindowKeyLayout::KeyFirst.decode(&[0; 11]).is_err());
        assert!(WindowKeyLayout::PrefixedKeyFirst.decode(&[1; 12]).is_err());
    }
}
