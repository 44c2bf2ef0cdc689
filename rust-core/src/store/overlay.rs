//! The uncommitted overlay: the writes of the current commit, held back from the store.
//!
//! Point writes live in a sorted map (key → value, or `None` for a tombstone). Range
//! deletes — used by segmented stores to drop expired data — are kept as disjoint
//! half-open intervals: a deleted range hides every committed key inside it, and a point
//! write made after the range delete is kept in the map and wins over it.
//!
//! The overlay also keeps the figures the engine polls on every record (uncommitted bytes,
//! net change in entry count) up to date as writes arrive, so reading them is O(1).

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::store::bounds::KeyBounds;
use crate::store::iter::{Order, StagedEntry};

/// What the overlay says about one key.
#[derive(Debug, PartialEq, Eq)]
pub enum Staged<'a> {
    /// Written in this commit.
    Value(&'a [u8]),
    /// Deleted in this commit, by a tombstone or a range delete.
    Deleted,
    /// Not touched in this commit: the committed state decides.
    Untouched,
}

/// Staged point writes, borrowed from the overlay; `None` is a tombstone.
pub type StagedWrites<'a> = Box<dyn Iterator<Item = (&'a [u8], Option<&'a [u8]>)> + 'a>;

/// The staged writes of one store.
#[derive(Debug, Default)]
pub struct Overlay {
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Disjoint, non-touching `[start, end)` intervals keyed by start.
    deleted_ranges: BTreeMap<Vec<u8>, Vec<u8>>,
    bytes: u64,
    staged_values: u64,
    staged_deletes: u64,
}

/// The part of an overlay a scan needs, copied so the scan is unaffected by later writes.
#[derive(Debug, Default)]
pub struct OverlaySnapshot {
    /// Staged point writes inside the scanned range, in scan order.
    pub entries: Vec<StagedEntry>,
    /// Range deletes intersecting the scanned range, sorted by start.
    pub deleted_ranges: Vec<(Vec<u8>, Vec<u8>)>,
}

impl OverlaySnapshot {
    /// True when a committed `key` is hidden by one of `deleted_ranges` (sorted, disjoint).
    pub fn hides_in(deleted_ranges: &[(Vec<u8>, Vec<u8>)], key: &[u8]) -> bool {
        let candidates = deleted_ranges.partition_point(|(start, _)| start.as_slice() <= key);
        candidates > 0 && key < deleted_ranges[candidates - 1].1.as_slice()
    }
}

impl Overlay {
    /// True when nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.deleted_ranges.is_empty()
    }

    /// Approximate heap bytes staged: keys plus values plus range-delete bounds.
    pub fn approximate_bytes(&self) -> u64 {
        self.bytes
    }

    /// Staged values minus staged deletes, an estimate of how the entry count will move at
    /// commit (it cannot know whether a written key already existed).
    pub fn entry_count_delta(&self) -> i64 {
        self.staged_values as i64 - self.staged_deletes as i64
    }

    /// What this commit says about `key`.
    pub fn lookup(&self, key: &[u8]) -> Staged<'_> {
        match self.writes.get(key) {
            Some(Some(value)) => Staged::Value(value),
            Some(None) => Staged::Deleted,
            None if self.range_deleted(key) => Staged::Deleted,
            None => Staged::Untouched,
        }
    }

    /// Stages a value, or a tombstone when `value` is `None`.
    pub fn put(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        self.account_added(&key, value.as_deref());
        let key_len = key.len() as u64;
        if let Some(previous) = self.writes.insert(key, value) {
            // The key bytes were counted once already; only the replaced write goes.
            self.bytes -= key_len;
            self.account_removed(0, previous.as_deref());
        }
    }

    /// Stages the deletion of every key in `[start, end)`, committed or staged.
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        if start >= end {
            return;
        }
        let doomed: Vec<Vec<u8>> = self
            .writes
            .range::<[u8], _>(KeyBounds::half_open(start, end).as_range())
            .map(|(key, _)| key.clone())
            .collect();
        for key in doomed {
            if let Some(previous) = self.writes.remove(&key) {
                self.account_removed(key.len() as u64, previous.as_deref());
            }
        }
        self.merge_deleted_range(start.to_vec(), end.to_vec());
    }

    /// Drops every staged write (transaction abort, or after the writes were committed).
    pub fn clear(&mut self) {
        *self = Overlay::default();
    }

    /// Staged range deletes, sorted by start. A commit applies them before the point writes.
    pub fn deleted_ranges(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.deleted_ranges
            .iter()
            .map(|(start, end)| (start.as_slice(), end.as_slice()))
    }

    /// Staged point writes in key order; `None` is a tombstone.
    pub fn writes(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
        self.writes
            .iter()
            .map(|(key, value)| (key.as_slice(), value.as_deref()))
    }

    /// Staged point writes in `bounds`, in `order`, borrowed; `None` is a tombstone.
    pub fn writes_in<'a>(&'a self, bounds: &KeyBounds, order: Order) -> StagedWrites<'a> {
        if bounds.is_empty() {
            return Box::new(std::iter::empty());
        }
        let in_range = self
            .writes
            .range::<[u8], _>(bounds.as_range())
            .map(|(key, value)| (key.as_slice(), value.as_deref()));
        match order {
            Order::Forward => Box::new(in_range),
            Order::Reverse => Box::new(in_range.rev()),
        }
    }

    /// True when a staged range delete covers `key`: its committed value is hidden.
    pub fn range_deleted(&self, key: &[u8]) -> bool {
        self.deleted_ranges
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)))
            .next_back()
            .is_some_and(|(_, end)| key < end.as_slice())
    }

    /// Copies what a scan of `bounds` needs. Copying (rather than borrowing) keeps the scan
    /// consistent while the owner keeps writing, at a cost bounded by the staged writes.
    pub fn snapshot(&self, bounds: &KeyBounds, order: Order) -> OverlaySnapshot {
        if self.is_empty() || bounds.is_empty() {
            return OverlaySnapshot::default();
        }
        let in_range = self.writes.range::<[u8], _>(bounds.as_range());
        let copy = |(key, value): (&Vec<u8>, &Option<Vec<u8>>)| (key.clone(), value.clone());
        let entries = match order {
            Order::Forward => in_range.map(copy).collect(),
            Order::Reverse => in_range.rev().map(copy).collect(),
        };
        let deleted_ranges = self
            .deleted_ranges
            .iter()
            .filter(|(start, end)| {
                bounds.upper().is_none_or(|hi| start.as_slice() < hi)
                    && bounds.lower().is_none_or(|lo| end.as_slice() > lo)
            })
            .map(|(start, end)| (start.clone(), end.clone()))
            .collect();
        OverlaySnapshot {
            entries,
            deleted_ranges,
        }
    }

    /// Inserts `[start, end)`, absorbing every interval it overlaps or touches so the
    /// intervals stay disjoint and a lookup needs only the nearest one.
    fn merge_deleted_range(&mut self, mut start: Vec<u8>, mut end: Vec<u8>) {
        let absorbed: Vec<Vec<u8>> = self
            .deleted_ranges
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(end.as_slice())))
            .rev()
            .take_while(|(_, existing_end)| existing_end.as_slice() >= start.as_slice())
            .map(|(existing_start, _)| existing_start.clone())
            .collect();
        for existing_start in absorbed {
            let existing_end = self
                .deleted_ranges
                .remove(&existing_start)
                .expect("interval listed just above");
            self.bytes -= (existing_start.len() + existing_end.len()) as u64;
            if existing_start < start {
                start = existing_start;
            }
            if existing_end > end {
                end = existing_end;
            }
        }
        self.bytes += (start.len() + end.len()) as u64;
        self.deleted_ranges.insert(start, end);
    }

    fn account_added(&mut self, key: &[u8], value: Option<&[u8]>) {
        self.bytes += key.len() as u64;
        match value {
            Some(value) => {
                self.bytes += value.len() as u64;
                self.staged_values += 1;
            }
            None => self.staged_deletes += 1,
        }
    }

    fn account_removed(&mut self, key_len: u64, value: Option<&[u8]>) {
        self.bytes -= key_len;
        match value {
            Some(value) => {
                self.bytes -= value.len() as u64;
                self.staged_values -= 1;
            }
            None => self.staged_deletes -= 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlay_with(writes: &[(&str, Option<&str>)]) -> Overlay {
        let mut overlay = Overlay::default();
        for (key, value) in writes {
            overlay.put(
                key.as_bytes().to_vec(),
                value.map(|v| v.as_bytes().to_vec()),
            );
        }
        overlay
    }

    #[test]
    fn lookup_distinguishes_value_tombstone_and_untouched() {
        let overlay = overlay_with(&[("a", Some("1")), ("b", None)]);
        assert_eq!(overlay.lookup(b"a"), Staged::Value(b"1"));
        assert_eq!(overlay.lookup(b"b"), Staged::Deleted);
        assert_eq!(overlay.lookup(b"c"), Staged::Untouched);
    }

    #[test]
    fn bytes_follow_overwrites_and_clear() {
        let mut overlay = overlay_with(&[("key", Some("value"))]);
        assert_eq!(overlay.approximate_bytes(), 8);
        overlay.put(b"key".to_vec(), Some(b"v".to_vec()));
        assert_eq!(overlay.approximate_bytes(), 4);
        overlay.put(b"key".to_vec(), None);
        assert_eq!(overlay.approximate_bytes(), 3);
        assert_eq!(overlay.entry_count_delta(), -1);
        overlay.clear();
        assert_eq!(overlay.approximate_bytes(), 0);
        assert!(overlay.is_empty());
    }

    #[test]
    fn range_delete_hides_earlier_writes_but_not_later_ones() {
        let mut overlay = overlay_with(&[("b", Some("1")), ("c", Some("2")), ("e", Some("3"))]);
        overlay.delete_range(b"b", b"d");
        assert_eq!(overlay.lookup(b"b"), Staged::Deleted);
        assert_eq!(overlay.lookup(b"c\xff"), Staged::Deleted);
        assert_eq!(overlay.lookup(b"d"), Staged::Untouched);
        assert_eq!(overlay.lookup(b"e"), Staged::Value(b"3"));
        overlay.put(b"c".to_vec(), Some(b"4".to_vec()));
        assert_eq!(overlay.lookup(b"c"), Staged::Value(b"4"));
        assert_eq!(overlay.writes().count(), 2);
        assert_eq!(overlay.approximate_bytes(), 2 + 2 + 2);
    }

    #[test]
    fn range_deletes_merge_when_they_overlap_or_touch() {
        let mut overlay = Overlay::default();
        overlay.delete_range(b"a", b"c");
        overlay.delete_range(b"e", b"g");
        overlay.delete_range(b"c", b"e");
        overlay.delete_range(b"x", b"z");
        let ranges: Vec<_> = overlay.deleted_ranges().collect();
        assert_eq!(ranges, vec![(&b"a"[..], &b"g"[..]), (&b"x"[..], &b"z"[..])]);
        assert_eq!(overlay.approximate_bytes(), 4);
    }

    #[test]
    fn snapshot_keeps_scan_order_and_relevant_ranges() {
        let mut overlay = overlay_with(&[("a", Some("1")), ("b", None), ("c", Some("3"))]);
        overlay.delete_range(b"m", b"n");
        let reverse = overlay.snapshot(
            &KeyBounds::inclusive(Some(b"a"), Some(b"b")),
            Order::Reverse,
        );
        let keys: Vec<_> = reverse.entries.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(keys, vec![b"b".to_vec(), b"a".to_vec()]);
        assert!(reverse.deleted_ranges.is_empty());
        let all = overlay.snapshot(&KeyBounds::all(), Order::Forward);
        assert!(OverlaySnapshot::hides_in(&all.deleted_ranges, b"m\x01"));
        assert!(!OverlaySnapshot::hides_in(&all.deleted_ranges, b"n"));
        assert!(!OverlaySnapshot::hides_in(&all.deleted_ranges, b"a"));
    }
}
