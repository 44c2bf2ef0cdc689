//! Headers-aware store values (Kafka Streams 4.4 `ValueTimestampHeaders`,
//! `AggregationWithHeaders`).
//!
//! Both start with the record headers, length-prefixed so a reader can skip them:
//!
//! ```text
//! value with timestamp and headers:  varint(n) ‖ header block (n bytes) ‖ timestamp(8) ‖ value
//! session aggregate with headers:    varint(n) ‖ header block (n bytes) ‖ aggregate
//!
//! header block, empty when there are no headers (then n = 0), otherwise:
//!   varint(count) ‖ count × ( varint(key length) ‖ UTF-8 key ‖ (varint(value length) ‖ value | varint(-1)) )
//! ```
//!
//! A header with a null value is written with length -1 and no bytes.

use super::{read_i64, varint, FormatError, TIMESTAMP_SIZE};

const LAYOUT: &str = "headers-aware value";

/// One record header. Kafka header keys are strings; values may be null.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Header key.
    pub key: String,
    /// Header value; `None` is Java's `null`.
    pub value: Option<Vec<u8>>,
}

impl Header {
    /// A header with a value.
    pub fn new(key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        Header {
            key: key.into(),
            value: Some(value.into()),
        }
    }

    /// A header whose value is null.
    pub fn null(key: impl Into<String>) -> Self {
        Header {
            key: key.into(),
            value: None,
        }
    }
}

/// A decoded value with timestamp and headers, borrowing the plain value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueTimestampHeaders<'a> {
    /// The plain value bytes.
    pub value: &'a [u8],
    /// The record timestamp stored with the value.
    pub timestamp: i64,
    /// The record headers stored with the value, in order.
    pub headers: Vec<Header>,
}

/// A decoded session aggregate with headers, borrowing the aggregate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregationWithHeaders<'a> {
    /// The plain aggregate bytes.
    pub aggregate: &'a [u8],
    /// The record headers stored with the aggregate, in order.
    pub headers: Vec<Header>,
}

/// Encodes the header block (without its length prefix).
pub fn encode_header_block(headers: &[Header]) -> Vec<u8> {
    let mut block = Vec::new();
    if headers.is_empty() {
        return block;
    }
    varint::write(java_int(headers.len()), &mut block);
    for header in headers {
        varint::write(java_int(header.key.len()), &mut block);
        block.extend_from_slice(header.key.as_bytes());
        match &header.value {
            Some(value) => {
                varint::write(java_int(value.len()), &mut block);
                block.extend_from_slice(value);
            }
            None => varint::write(-1, &mut block),
        }
    }
    block
}

/// Decodes a header block (without its length prefix).
pub fn decode_header_block(block: &[u8]) -> Result<Vec<Header>, FormatError> {
    if block.is_empty() {
        return Ok(Vec::new());
    }
    let mut cursor = Cursor {
        bytes: block,
        position: 0,
    };
    let count = cursor.length("header count")?;
    let mut headers = Vec::with_capacity(count.min(block.len()));
    for _ in 0..count {
        let key_len = cursor.length("header key length")?;
        let key = String::from_utf8(cursor.take(key_len)?.to_vec())
            .map_err(|_| FormatError::new(LAYOUT, "header key is not UTF-8"))?;
        let value = match cursor.varint()? {
            -1 => None,
            len if len < 0 => {
                return Err(FormatError::new(
                    LAYOUT,
                    format!("header value length {len}"),
                ))
            }
            len => Some(cursor.take(len as usize)?.to_vec()),
        };
        headers.push(Header { key, value });
    }
    if cursor.position != block.len() {
        return Err(FormatError::new(LAYOUT, "bytes left after the last header"));
    }
    Ok(headers)
}

/// Encodes a value with its timestamp and headers.
pub fn encode_value_timestamp_headers(value: &[u8], timestamp: i64, headers: &[Header]) -> Vec<u8> {
    let mut out = prefixed_header_block(headers, TIMESTAMP_SIZE + value.len());
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.extend_from_slice(value);
    out
}

/// Decodes a value with timestamp and headers.
pub fn decode_value_timestamp_headers(
    bytes: &[u8],
) -> Result<ValueTimestampHeaders<'_>, FormatError> {
    let (headers, rest) = split_header_block(bytes)?;
    if rest.len() < TIMESTAMP_SIZE {
        return Err(FormatError::new(LAYOUT, "no timestamp after the headers"));
    }
    Ok(ValueTimestampHeaders {
        value: &rest[TIMESTAMP_SIZE..],
        timestamp: read_i64(rest, 0),
        headers,
    })
}

/// Encodes a session aggregate with its headers.
pub fn encode_aggregation_with_headers(aggregate: &[u8], headers: &[Header]) -> Vec<u8> {
    let mut out = prefixed_header_block(headers, aggregate.len());
    out.extend_from_slice(aggregate);
    out
}

/// Decodes a session aggregate with headers.
pub fn decode_aggregation_with_headers(
    bytes: &[u8],
) -> Result<AggregationWithHeaders<'_>, FormatError> {
    let (headers, aggregate) = split_header_block(bytes)?;
    Ok(AggregationWithHeaders { aggregate, headers })
}

/// The length-prefixed header block, with room reserved for `tail_len` more bytes.
fn prefixed_header_block(headers: &[Header], tail_len: usize) -> Vec<u8> {
    let block = encode_header_block(headers);
    let block_len = java_int(block.len());
    let mut out = Vec::with_capacity(varint::size_of(block_len) + block.len() + tail_len);
    varint::write(block_len, &mut out);
    out.extend_from_slice(&block);
    out
}

/// Splits off and decodes the length-prefixed header block; returns what follows it.
fn split_header_block(bytes: &[u8]) -> Result<(Vec<Header>, &[u8]), FormatError> {
    let mut cursor = Cursor { bytes, position: 0 };
    let block_len = cursor.length("header block length")?;
    let block = cursor.take(block_len)?;
    Ok((decode_header_block(block)?, &bytes[cursor.position..]))
}

/// Lengths are Java `int`s; nothing a store holds comes near 2 GiB.
fn java_int(len: usize) -> i32 {
    i32::try_from(len).expect("length exceeds a Java int")
}

struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Cursor<'a> {
    fn varint(&mut self) -> Result<i32, FormatError> {
        let (value, used) = varint::read(&self.bytes[self.position..])
            .map_err(|e| FormatError::new(LAYOUT, e.reason))?;
        self.position += used;
        Ok(value)
    }

    fn length(&mut self, what: &str) -> Result<usize, FormatError> {
        let value = self.varint()?;
        usize::try_from(value)
            .map_err(|_| FormatError::new(LAYOUT, format!("negative {what} {value}")))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], FormatError> {
        let end = self
            .position
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len());
        let end = end.ok_or_else(|| FormatError::new(LAYOUT, "truncated"))?;
        let taken = &self.bytes[self.position..end];
        self.position = end;
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TS: [u8; 8] = [0, 0, 0, 0, 0, 0, 0, 0x2a];

    #[test]
    fn no_headers_is_a_single_zero_byte() {
        let bytes = encode_value_timestamp_headers(b"v", 42, &[]);
        let mut expected = vec![0x00];
        expected.extend_from_slice(&TS);
        expected.push(b'v');
        assert_eq!(bytes, expected);
        assert_eq!(
            encode_aggregation_with_headers(b"agg", &[]),
            [0x00, b'a', b'g', b'g']
        );
    }

    #[test]
    fn headers_are_counted_and_length_prefixed_with_zigzag_varints() {
        let headers = [Header::new("a", "1"), Header::null("k")];
        // block: count 2 → 0x04; "a": len 1 → 0x02, 'a', value len 1 → 0x02, '1';
        //        "k": 0x02, 'k', null → varint(-1) = 0x01. Block length 8 → 0x10.
        let block = [0x04, 0x02, b'a', 0x02, b'1', 0x02, b'k', 0x01];
        assert_eq!(encode_header_block(&headers), block);

        let mut expected = vec![0x10];
        expected.extend_from_slice(&block);
        expected.extend_from_slice(&TS);
        expected.extend_from_slice(b"val");
        let bytes = encode_value_timestamp_headers(b"val", 42, &headers);
        assert_eq!(bytes, expected);
        let decoded = decode_value_timestamp_headers(&bytes).unwrap();
        assert_eq!(
            decoded,
            ValueTimestampHeaders {
                value: b"val",
                timestamp: 42,
                headers: headers.to_vec()
            }
        );
    }

    #[test]
    fn aggregation_with_headers_has_no_timestamp() {
        let headers = [Header::new("h", vec![0xff])];
        let bytes = encode_aggregation_with_headers(b"agg", &headers);
        assert_eq!(
            bytes,
            [0x0a, 0x02, 0x02, b'h', 0x02, 0xff, b'a', b'g', b'g']
        );
        let decoded = decode_aggregation_with_headers(&bytes).unwrap();
        assert_eq!(
            decoded,
            AggregationWithHeaders {
                aggregate: b"agg",
                headers: headers.to_vec()
            }
        );
    }

    #[test]
    fn long_header_values_use_multi_byte_varints() {
        let headers = [Header::new("x", vec![7u8; 100])];
        let block = encode_header_block(&headers);
        // value length 100 → zig-zag 200 → 0xc8 0x01
        assert_eq!(&block[..5], &[0x02, 0x02, b'x', 0xc8, 0x01]);
        let bytes = encode_value_timestamp_headers(b"", -5, &headers);
        assert_eq!(&bytes[..2], &[0xd2, 0x01]); // block length 105 → zig-zag 210
        let decoded = decode_value_timestamp_headers(&bytes).unwrap();
        assert_eq!(decoded.timestamp, -5);
        assert_eq!(decoded.value, b"");
        assert_eq!(decoded.headers, headers);
    }

    #[test]
    fn rejects_malformed_values() {
        assert!(decode_value_timestamp_headers(&[]).is_err());
        assert!(
            decode_value_timestamp_headers(&[0x00, 1, 2, 3]).is_err(),
            "timestamp truncated"
        );
        assert!(
            decode_value_timestamp_headers(&[0x10, 0x04]).is_err(),
            "block truncated"
        );
        assert!(
            decode_header_block(&[0x02, 0x02, b'a', 0x03]).is_err(),
            "value length -2"
        );
        assert!(
            decode_header_block(&[0x02, 0x02, 0xff, 0x01]).is_err(),
            "key not UTF-8"
        );
        assert!(
            decode_header_block(&[0x02, 0x02, b'a', 0x01, 0x00]).is_err(),
            "trailing bytes"
        );
    }
}
