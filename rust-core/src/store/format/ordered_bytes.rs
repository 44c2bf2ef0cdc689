//! Byte bounds for scanning composite keys `key ‖ fixed-size suffix` by a range of keys.
//!
//! Segmented window and session stores keep `key ‖ timestamps` keys in byte order. A scan for
//! keys in `[from, to]` cannot simply use `from ‖ suffix` and `to ‖ suffix` as bounds: keys
//! have variable length, so `to ‖ …` is not the largest key that starts with `to`'s records.
//! Kafka Streams computes the bounds below and filters the entries it finds; the stores
//! here use the same bounds so they visit exactly the entries Kafka Streams visits.

/// The smallest composite key any record with key `>= key` can have: `key ‖ 0…0`.
pub fn lower_range(key: &[u8], suffix_len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + suffix_len);
    out.extend_from_slice(key);
    out.resize(key.len() + suffix_len, 0);
    out
}

/// A composite key no smaller than any record with key `<= key` and suffix `<= max_suffix`.
///
/// When the suffix starts with a non-zero byte, the key is cut before its first byte (after
/// the first) that is smaller than that suffix byte: a longer key sharing the cut-off prefix
/// sorts below the bound whatever follows, which keeps keys like `key ‖ 0x00…` inside the
/// bound when `max_suffix` starts high.
pub fn upper_range(key: &[u8], max_suffix: &[u8]) -> Vec<u8> {
    let first_suffix_byte = max_suffix.first().copied().unwrap_or(0);
    let kept = if first_suffix_byte == 0 {
        key.len()
    } else {
        key.iter()
            .enumerate()
            .position(|(index, byte)| index >= 1 && *byte < first_suffix_byte)
            .unwrap_or(key.len())
    };
    let mut out = Vec::with_capacity(kept + max_suffix.len());
    out.extend_from_slice(&key[..kept]);
    out.extend_from_slice(max_suffix);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_range_pads_with_zeros() {
        assert_eq!(lower_range(b"ab", 3), [b'a', b'b', 0, 0, 0]);
    }

    #[test]
    fn upper_range_keeps_the_whole_key_when_the_suffix_starts_with_zero() {
        assert_eq!(upper_range(b"ab", &[0x00, 0x7f]), [b'a', b'b', 0x00, 0x7f]);
    }

    #[test]
    fn upper_range_cuts_the_key_before_bytes_below_the_first_suffix_byte() {
        // 'b' (0x62) < 0x7f: the key is cut after its mandatory first byte.
        assert_eq!(upper_range(b"ab", &[0x7f, 0xff]), [b'a', 0x7f, 0xff]);
        // 0x90 and 0x80 >= 0x7f are kept, 0x10 is not.
        assert_eq!(
            upper_range(&[0x01, 0x90, 0x80, 0x10, 0xff], &[0x7f]),
            [0x01, 0x90, 0x80, 0x7f]
        );
    }

    #[test]
    fn upper_range_is_above_every_smaller_key_with_a_smaller_suffix() {
        let suffix = [0x7f, 0xff, 0xff];
        let bound = upper_range(b"ab", &suffix);
        for key in [&b"a"[..], b"a\x00", b"a\x61\xff", b"ab", b"\x00\xff"] {
            for record_suffix in [[0x00, 0x00, 0x00], [0x7f, 0xff, 0xff], [0x12, 0x34, 0x56]] {
                let composite = [key, &record_suffix].concat();
                assert!(composite <= bound, "{composite:?} > {bound:?}");
            }
        }
    }
}
