//! Kafka's signed variable-length `int` (`ByteUtils.writeVarint` / `readVarint`): zig-zag
//! encoded, then 7 bits per byte, least significant group first, high bit = "more follows".
//!
//! The header block of headers-aware store values is written with these.

use super::FormatError;

const LAYOUT: &str = "varint";

/// Longest encoding of a 32-bit varint.
const MAX_LEN: usize = 5;

/// Appends the varint encoding of `value` to `out`.
pub fn write(value: i32, out: &mut Vec<u8>) {
    let mut zigzag = ((value << 1) ^ (value >> 31)) as u32;
    while zigzag >= 0x80 {
        out.push((zigzag as u8 & 0x7f) | 0x80);
        zigzag >>= 7;
    }
    out.push(zigzag as u8);
}

/// Number of bytes [`write`] produces for `value`.
pub fn size_of(value: i32) -> usize {
    let mut zigzag = ((value << 1) ^ (value >> 31)) as u32;
    let mut size = 1;
    while zigzag >= 0x80 {
        size += 1;
        zigzag >>= 7;
    }
    size
}

/// Decodes the varint at the start of `bytes`; returns the value and the bytes it used.
pub fn read(bytes: &[u8]) -> Result<(i32, usize), FormatError> {
    let mut raw: u32 = 0;
    for (index, byte) in bytes.iter().take(MAX_LEN).enumerate() {
        raw |= u32::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            let value = ((raw >> 1) as i32) ^ -((raw & 1) as i32);
            return Ok((value, index + 1));
        }
    }
    if bytes.len() >= MAX_LEN {
        Err(FormatError::new(LAYOUT, "longer than 5 bytes"))
    } else {
        Err(FormatError::new(LAYOUT, "truncated"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(value: i32) -> Vec<u8> {
        let mut out = Vec::new();
        write(value, &mut out);
        out
    }

    #[test]
    fn encodes_like_kafka_byte_utils() {
        assert_eq!(encode(0), [0x00]);
        assert_eq!(encode(-1), [0x01]);
        assert_eq!(encode(1), [0x02]);
        assert_eq!(encode(63), [0x7e]);
        assert_eq!(encode(64), [0x80, 0x01]);
        assert_eq!(encode(300), [0xd8, 0x04]);
        assert_eq!(encode(i32::MAX), [0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(encode(i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
    }

    #[test]
    fn round_trips_and_sizes_agree() {
        for value in [
            0,
            1,
            -1,
            63,
            64,
            -64,
            -65,
            8191,
            8192,
            1 << 20,
            i32::MAX,
            i32::MIN,
        ] {
            let bytes = encode(value);
            assert_eq!(size_of(value), bytes.len());
            assert_eq!(read(&bytes).unwrap(), (value, bytes.len()));
        }
    }

    #[test]
    fn rejects_truncated_and_overlong_input() {
        assert!(read(&[]).is_err());
        assert!(read(&[0x80]).is_err());
        assert!(read(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).is_err());
    }
}
