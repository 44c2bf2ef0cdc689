//! Session store keys: a record key and the session window's start and end.
//!
//! * [`SessionKeyLayout::KeyFirst`] (`SessionKeySchema`): `key ‖ end(8) ‖ start(8)`.
//!   The key of every session store changelog record and the on-disk key of the segmented
//!   RocksDB session store. End before start makes a range scan from
//!   `key ‖ earliestEnd ‖ 0` to `key ‖ MAX ‖ latestStart` cover exactly the candidate sessions.
//! * [`SessionKeyLayout::PrefixedTimeFirst`] (`TimeFirstSessionKeySchema`):
//!   `0x00 ‖ end(8) ‖ start(8) ‖ key`. On-disk base key of the time-ordered session store.
//! * [`SessionKeyLayout::PrefixedKeyFirst`] (`KeyFirstSessionKeySchema`):
//!   `0x01 ‖ key ‖ end(8) ‖ start(8)`. On-disk index key of the same store.

use super::{read_i64, FormatError, TIMESTAMP_SIZE};

/// Prefix byte of [`SessionKeyLayout::PrefixedTimeFirst`] keys.
pub const TIME_FIRST_PREFIX: u8 = 0x00;
/// Prefix byte of [`SessionKeyLayout::PrefixedKeyFirst`] keys.
pub const KEY_FIRST_PREFIX: u8 = 0x01;

const LAYOUT: &str = "session key";
const SUFFIX_SIZE: usize = 2 * TIMESTAMP_SIZE;

/// Which session key layout to encode or decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKeyLayout {
    /// `key ‖ end ‖ start`: changelog and segmented session store.
    KeyFirst,
    /// `0x00 ‖ end ‖ start ‖ key`: time-ordered session store, base key.
    PrefixedTimeFirst,
    /// `0x01 ‖ key ‖ end ‖ start`: time-ordered session store, index key.
    PrefixedKeyFirst,
}

/// A decoded session key, borrowing the record key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionKey<'a> {
    /// The record key bytes.
    pub key: &'a [u8],
    /// Session start (first record), in milliseconds.
    pub start: i64,
    /// Session end (last record), in milliseconds.
    pub end: i64,
}

impl SessionKeyLayout {
    /// Encodes a session key in this layout.
    pub fn encode(self, key: &[u8], start: i64, end: i64) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + key.len() + SUFFIX_SIZE);
        match self {
            SessionKeyLayout::KeyFirst => out.extend_from_slice(key),
            SessionKeyLayout::PrefixedTimeFirst => out.push(TIME_FIRST_PREFIX),
            SessionKeyLayout::PrefixedKeyFirst => {
                out.push(KEY_FIRST_PREFIX);
                out.extend_from_slice(key);
            }
        }
        out.extend_from_slice(&end.to_be_bytes());
        out.extend_from_slice(&start.to_be_bytes());
        if self == SessionKeyLayout::PrefixedTimeFirst {
            out.extend_from_slice(key);
        }
        out
    }

    /// Decodes a session key in this layout.
    pub fn decode(self, bytes: &[u8]) -> Result<SessionKey<'_>, FormatError> {
        let prefix = usize::from(self != SessionKeyLayout::KeyFirst);
        if bytes.len() < prefix + SUFFIX_SIZE {
            return Err(FormatError::too_short(
                LAYOUT,
                prefix + SUFFIX_SIZE,
                bytes.len(),
            ));
        }
        let (key, times_at) = match self {
            SessionKeyLayout::KeyFirst => {
                let key_end = bytes.len() - SUFFIX_SIZE;
                (&bytes[..key_end], key_end)
            }
            SessionKeyLayout::PrefixedTimeFirst => {
                expect_prefix(bytes, TIME_FIRST_PREFIX)?;
                (&bytes[1 + SUFFIX_SIZE..], 1)
            }
            SessionKeyLayout::PrefixedKeyFirst => {
                expect_prefix(bytes, KEY_FIRST_PREFIX)?;
                let key_end = bytes.len() - SUFFIX_SIZE;
                (&bytes[1..key_end], key_end)
            }
        };
        Ok(SessionKey {
            key,
            end: read_i64(bytes, times_at),
            start: read_i64(bytes, times_at + TIMESTAMP_SIZE),
        })
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

    const START: i64 = 0x10;
    const END: i64 = 0x0203;
    const START_BYTES: [u8; 8] = [0, 0, 0, 0, 0, 0, 0, 0x10];
    const END_BYTES: [u8; 8] = [0, 0, 0, 0, 0, 0, 0x02, 0x03];

    #[test]
    fn key_first_puts_end_before_start() {
        let bytes = SessionKeyLayout::KeyFirst.encode(b"user", START, END);
        assert_eq!(bytes, [&b"user"[..], &END_BYTES, &START_BYTES].concat());
        let decoded = SessionKeyLayout::KeyFirst.decode(&bytes).unwrap();
        assert_eq!(
            decoded,
            SessionKey {
                key: b"user",
                start: START,
                end: END
            }
        );
    }

    #[test]
    fn prefixed_layouts() {
        let time_first = SessionKeyLayout::PrefixedTimeFirst.encode(b"u", START, END);
        assert_eq!(
            time_first,
            [&[0x00][..], &END_BYTES, &START_BYTES, b"u"].concat()
        );
        let key_first = SessionKeyLayout::PrefixedKeyFirst.encode(b"u", START, END);
        assert_eq!(
            key_first,
            [&[0x01][..], b"u", &END_BYTES, &START_BYTES].concat()
        );
        let expected = SessionKey {
            key: b"u",
            start: START,
            end: END,
        };
        assert_eq!(
            SessionKeyLayout::PrefixedTimeFirst
                .decode(&time_first)
                .unwrap(),
            expected
        );
        assert_eq!(
            SessionKeyLayout::PrefixedKeyFirst
                .decode(&key_first)
                .unwrap(),
            expected
        );
        assert!(SessionKeyLayout::PrefixedKeyFirst
            .decode(&time_first)
            .is_err());
    }

    #[test]
    fn rejects_keys_too_short_for_two_timestamps() {
        assert!(SessionKeyLayout::KeyFirst.decode(&[0; 15]).is_err());
        assert!(SessionKeyLayout::PrefixedTimeFirst
            .decode(&[0; 16])
            .is_err());
        assert_eq!(
            SessionKeyLayout::KeyFirst.decode(&[0; 16]).unwrap().key,
            b""
        );
    }
}
