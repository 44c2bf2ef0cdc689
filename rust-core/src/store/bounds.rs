//! Key ranges in unsigned byte-lexicographic order.
//!
//! Every scan works on one normalized form, an inclusive lower and an exclusive upper key,
//! either of which may be open. It is the form RocksDB's iterator bounds take, and every
//! Kafka Streams range (inclusive on both ends, open when `null`, prefix) maps onto it
//! exactly: the smallest key greater than `k` is `k` followed by a zero byte.

use std::ops::Bound;

/// A half-open key range `[lower, upper)`; `None` leaves that side open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyBounds {
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
}

impl KeyBounds {
    /// Every key.
    pub fn all() -> Self {
        KeyBounds::default()
    }

    /// Kafka Streams' `range(from, to)`: both ends inclusive, `None` = open. When
    /// `from > to` the range is empty, as Kafka Streams returns an empty iterator then.
    pub fn inclusive(from: Option<&[u8]>, to: Option<&[u8]>) -> Self {
        KeyBounds {
            lower: from.map(<[u8]>::to_vec),
            upper: to.map(successor),
        }
    }

    /// `[from, to)`, the form segment and time-range scans use.
    pub fn half_open(from: &[u8], to: &[u8]) -> Self {
        KeyBounds {
            lower: Some(from.to_vec()),
            upper: Some(to.to_vec()),
        }
    }

    /// Every key starting with `prefix` (Kafka Streams' `prefixScan`).
    pub fn prefix(prefix: &[u8]) -> Self {
        KeyBounds {
            lower: if prefix.is_empty() {
                None
            } else {
                Some(prefix.to_vec())
            },
            upper: prefix_end(prefix),
        }
    }

    /// Any combination of inclusive, exclusive and open ends.
    pub fn from_bounds(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Self {
        KeyBounds {
            lower: match lower {
                Bound::Included(k) => Some(k.to_vec()),
                Bound::Excluded(k) => Some(successor(k)),
                Bound::Unbounded => None,
            },
            upper: match upper {
                Bound::Included(k) => Some(successor(k)),
                Bound::Excluded(k) => Some(k.to_vec()),
                Bound::Unbounded => None,
            },
        }
    }

    /// Inclusive lower key, `None` when open.
    pub fn lower(&self) -> Option<&[u8]> {
        self.lower.as_deref()
    }

    /// Exclusive upper key, `None` when open.
    pub fn upper(&self) -> Option<&[u8]> {
        self.upper.as_deref()
    }

    /// True when no key can fall in the range.
    pub fn is_empty(&self) -> bool {
        matches!((&self.lower, &self.upper), (Some(lo), Some(hi)) if lo >= hi)
    }

    /// True when `key` falls in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|lo| key >= lo)
            && self.upper.as_deref().is_none_or(|hi| key < hi)
    }

    /// The range as `std` bounds, for `BTreeMap::range`. Call only on a non-empty range:
    /// `BTreeMap::range` panics when the start lies after the end.
    pub(crate) fn as_range(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        debug_assert!(!self.is_empty());
        (
            self.lower
                .as_deref()
                .map_or(Bound::Unbounded, Bound::Included),
            self.upper
                .as_deref()
                .map_or(Bound::Unbounded, Bound::Excluded),
        )
    }
}

/// The smallest key greater than `key`.
fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    next
}

/// The smallest key greater than every key starting with `prefix`; `None` when there is
/// none (empty prefix, or a prefix of only 0xFF bytes).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let last_incrementable = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut end = prefix[..=last_incrementable].to_vec();
    end[last_incrementable] += 1;
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inclusive_range_contains_both_ends_only() {
        let bounds = KeyBounds::inclusive(Some(b"b"), Some(b"d"));
        assert!(!bounds.contains(b"a"));
        assert!(bounds.contains(b"b"));
        assert!(bounds.contains(b"d"));
        assert!(!bounds.contains(b"d\x00"));
        assert!(!bounds.contains(b"e"));
    }

    #[test]
    fn reversed_range_is_empty() {
        assert!(KeyBounds::inclusive(Some(b"d"), Some(b"b")).is_empty());
        assert!(!KeyBounds::inclusive(Some(b"b"), Some(b"b")).is_empty());
        assert!(KeyBounds::half_open(b"b", b"b").is_empty());
    }

    #[test]
    fn prefix_covers_exactly_the_keys_starting_with_it() {
        let bounds = KeyBounds::prefix(&[0x01, 0xFF]);
        assert_eq!(bounds.upper(), Some(&[0x02][..]));
        assert!(bounds.contains(&[0x01, 0xFF]));
        assert!(bounds.contains(&[0x01, 0xFF, 0xFF, 0x00]));
        assert!(!bounds.contains(&[0x01, 0xFE, 0xFF]));
        assert!(!bounds.contains(&[0x02]));
        assert_eq!(KeyBounds::prefix(&[0xFF, 0xFF]).upper(), None);
        assert_eq!(KeyBounds::prefix(b""), KeyBounds::all());
    }

    #[test]
    fn excluded_lower_bound_skips_the_key_itself() {
        let bounds = KeyBounds::from_bounds(Bound::Excluded(b"b"), Bound::Included(b"c"));
        assert!(!bounds.contains(b"b"));
        assert!(bounds.contains(b"b\x00"));
        assert!(bounds.contains(b"c"));
    }
}
