//! Scan iterators: the committed state of a backend, merged with a copy of the overlay.
//!
//! A scan fixes what it will return when it is created — the backend supplies a
//! point-in-time view of its committed state, the overlay a copy of its staged writes in
//! range — so it can be read slowly, from another thread, or dropped half-way, while the
//! store keeps taking writes and commits.
//!
//! Entries are read two ways: as owned copies ([`Iterator`]), or lent in place
//! ([`KeyValueIterator::offer_next`]) by callers that copy them elsewhere anyway (the JNI
//! chunks); a backend cursor with nothing staged over it lends straight from the backend.

use std::cmp::Ordering;
use std::iter::Peekable;

use crate::store::error::Result;
use crate::store::overlay::OverlaySnapshot;

/// A key and its value.
pub type KeyValue = (Vec<u8>, Vec<u8>);

/// A staged write: a value, or `None` for a tombstone.
pub type StagedEntry = (Vec<u8>, Option<Vec<u8>>);

/// Direction of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Ascending unsigned byte order (Kafka Streams' `range`, `all`, `prefixScan`).
    Forward,
    /// Descending (Kafka Streams' `reverseRange`, `reverseAll`).
    Reverse,
}

impl Order {
    /// Whether `a` comes before `b` in this direction.
    fn precedes(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Order::Forward => a.cmp(b),
            Order::Reverse => b.cmp(a),
        }
    }
}

/// A backend's committed entries of one scan, read in place: the cursor lends its current
/// entry and moves past it only once the reader took it.
pub trait LendingCursor: Send {
    /// Offers the next entry to `take` as borrowed slices; moves past it when `take`
    /// returns true (`Some(Ok(true))`), keeps it next otherwise (`Some(Ok(false))`).
    /// `None` once exhausted; an `Err` ends the scan for its reader.
    fn offer_next(&mut self, take: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Option<Result<bool>>;
}

/// The entries of `cursor` as owned copies.
pub(crate) fn owned_entries(
    mut cursor: Box<dyn LendingCursor>,
) -> impl Iterator<Item = Result<KeyValue>> + Send {
    std::iter::from_fn(move || copy_next(&mut *cursor))
}

/// Any source of owned entries as a [`LendingCursor`].
#[cfg(test)]
pub(crate) fn lending(
    entries: impl Iterator<Item = Result<KeyValue>> + Send + 'static,
) -> Box<dyn LendingCursor> {
    Box::new(OwnedEntries {
        entries: Box::new(entries),
        declined: None,
    })
}

fn copy_next(cursor: &mut dyn LendingCursor) -> Option<Result<KeyValue>> {
    let mut entry = None;
    let offered = cursor.offer_next(&mut |key, value| {
        entry = Some((key.to_vec(), value.to_vec()));
        true
    })?;
    Some(offered.map(|_| entry.expect("a taken entry was copied")))
}

/// Owned entries offered in place; `declined` holds one its reader did not take, so it
/// comes next.
struct OwnedEntries {
    entries: Box<dyn Iterator<Item = Result<KeyValue>> + Send>,
    declined: Option<KeyValue>,
}

impl OwnedEntries {
    fn next_owned(&mut self) -> Option<Result<KeyValue>> {
        self.declined.take().map(Ok).or_else(|| self.entries.next())
    }
}

impl LendingCursor for OwnedEntries {
    fn offer_next(&mut self, take: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Option<Result<bool>> {
        let (key, value) = match self.next_owned()? {
            Ok(entry) => entry,
            Err(failure) => return Some(Err(failure)),
        };
        if take(&key, &value) {
            Some(Ok(true))
        } else {
            self.declined = Some((key, value));
            Some(Ok(false))
        }
    }
}

/// Entries of a scan, in scan order. Dropping it early releases what it holds.
///
/// An `Err` item means the committed state could not be read (for RocksDB, typically
/// corruption); the iterator ends after it.
pub struct KeyValueIterator {
    source: Source,
}

enum Source {
    Owned(OwnedEntries),
    /// A backend cursor lending its entries.
    Lending(Box<dyn LendingCursor>),
}

impl KeyValueIterator {
    /// An iterator over nothing.
    pub fn empty() -> Self {
        KeyValueIterator::new(std::iter::empty())
    }

    /// Wraps any sorted source of entries; used by stores built on top of the key-value
    /// stores to reshape their scans.
    pub fn new(entries: impl Iterator<Item = Result<KeyValue>> + Send + 'static) -> Self {
        KeyValueIterator {
            source: Source::Owned(OwnedEntries {
                entries: Box::new(entries),
                declined: None,
            }),
        }
    }

    /// Offers the next entry to `take` in place, as [`LendingCursor::offer_next`]: a
    /// backend cursor lends its own slices, other scans their owned entry.
    pub fn offer_next(
        &mut self,
        take: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Option<Result<bool>> {
        match &mut self.source {
            Source::Owned(entries) => entries.offer_next(take),
            Source::Lending(cursor) => cursor.offer_next(take),
        }
    }

    /// Merges a backend's committed entries with staged writes: a staged value replaces
    /// the committed one, a tombstone or staged range delete hides it.
    pub(crate) fn merged(
        committed: Box<dyn LendingCursor>,
        staged: OverlaySnapshot,
        order: Order,
    ) -> Self {
        if staged.entries.is_empty() && staged.deleted_ranges.is_empty() {
            // Nothing staged in range (the common case for committed reads): hand out the
            // backend's cursor itself, without a merge layer or copies.
            return KeyValueIterator {
                source: Source::Lending(committed),
            };
        }
        let OverlaySnapshot {
            entries,
            deleted_ranges,
        } = staged;
        let visible_committed = owned_entries(committed).filter(move |entry| match entry {
            Ok((key, _)) => !OverlaySnapshot::hides_in(&deleted_ranges, key),
            Err(_) => true,
        });
        KeyValueIterator::new(Merge::new(visible_committed, entries.into_iter(), order))
    }

    /// The first entry [`merged`](Self::merged) would return, reading the staged writes in
    /// place: only the entries it passes over are copied. `hidden` tells whether a staged
    /// range delete hides a committed key.
    pub(crate) fn first_merged(
        committed: impl Iterator<Item = Result<KeyValue>>,
        staged: impl Iterator<Item = StagedEntry>,
        hidden: impl Fn(&[u8]) -> bool,
        order: Order,
    ) -> Option<Result<KeyValue>> {
        let visible_committed = committed.filter(|entry| match entry {
            Ok((key, _)) => !hidden(key),
            Err(_) => true,
        });
        Merge::new(visible_committed, staged, order).next()
    }
}

impl Iterator for KeyValueIterator {
    type Item = Result<KeyValue>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.source {
            Source::Owned(entries) => entries.next_owned(),
            Source::Lending(cursor) => copy_next(&mut **cursor),
        }
    }
}

impl std::fmt::Debug for KeyValueIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyValueIterator")
    }
}

/// Two sorted streams merged by key; the staged stream wins ties.
struct Merge<C: Iterator<Item = Result<KeyValue>>, S: Iterator<Item = StagedEntry>> {
    committed: Peekable<C>,
    staged: Peekable<S>,
    order: Order,
    failed: bool,
}

impl<C: Iterator<Item = Result<KeyValue>>, S: Iterator<Item = StagedEntry>> Merge<C, S> {
    fn new(committed: C, staged: S, order: Order) -> Self {
        Merge {
            committed: committed.peekable(),
            staged: staged.peekable(),
            order,
            failed: false,
        }
    }
}

impl<C: Iterator<Item = Result<KeyValue>>, S: Iterator<Item = StagedEntry>> Iterator
    for Merge<C, S>
{
    type Item = Result<KeyValue>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            // Decide whether the committed head goes out as is; otherwise the staged head
            // is next (dropping an equal committed key it replaces or hides).
            match (self.committed.peek(), self.staged.peek()) {
                (None, None) => return None,
                (Some(Err(_)), _) => {
                    self.failed = true;
                    return self.committed.next();
                }
                (Some(Ok(_)), None) => return self.committed.next(),
                (None, Some(_)) => {}
                (Some(Ok((committed_key, _))), Some((staged_key, _))) => {
                    match self.order.precedes(committed_key, staged_key) {
                        Ordering::Less => return self.committed.next(),
                        Ordering::Equal => {
                            self.committed.next();
                        }
                        Ordering::Greater => {}
                    }
                }
            }
            if let Some((key, Some(value))) = self.staged.next() {
                return Some(Ok((key, value)));
            }
            // A tombstone: it hid the committed entry (if any); keep going.
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed(keys: &[&str]) -> Box<dyn LendingCursor> {
        let entries: Vec<_> = keys
            .iter()
            .map(|k| Ok((k.as_bytes().to_vec(), b"old".to_vec())))
            .collect();
        lending(entries.into_iter())
    }

    fn staged(entries: &[(&str, Option<&str>)]) -> OverlaySnapshot {
        OverlaySnapshot {
            entries: entries
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.map(|v| v.as_bytes().to_vec())))
                .collect(),
            deleted_ranges: Vec::new(),
        }
    }

    fn collect(iter: KeyValueIterator) -> Vec<(String, String)> {
        iter.map(|e| {
            let (k, v) = e.unwrap();
            (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap())
        })
        .collect()
    }

    #[test]
    fn staged_values_replace_and_tombstones_hide() {
        let merged = KeyValueIterator::merged(
            committed(&["a", "b", "d"]),
            staged(&[("b", None), ("c", Some("new")), ("d", Some("new"))]),
            Order::Forward,
        );
        assert_eq!(
            collect(merged),
            vec![
                ("a".into(), "old".into()),
                ("c".into(), "new".into()),
                ("d".into(), "new".into())
            ]
        );
    }

    #[test]
    fn reverse_merge_keeps_descending_order() {
        let merged = KeyValueIterator::merged(
            committed(&["d", "b"]),
            staged(&[("c", Some("new")), ("a", None)]),
            Order::Reverse,
        );
        let keys: Vec<_> = collect(merged).into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, vec!["d", "c", "b"]);
    }

    #[test]
    fn staged_range_delete_hides_committed_keys_only() {
        let mut snapshot = staged(&[("c", Some("new"))]);
        snapshot.deleted_ranges.push((b"b".to_vec(), b"d".to_vec()));
        let merged =
            KeyValueIterator::merged(committed(&["a", "b", "c", "d"]), snapshot, Order::Forward);
        assert_eq!(
            collect(merged),
            vec![
                ("a".into(), "old".into()),
                ("c".into(), "new".into()),
                ("d".into(), "old".into())
            ]
        );
    }

    #[test]
    fn iteration_stops_after_an_error() {
        let failing = vec![
            Ok((b"a".to_vec(), b"1".to_vec())),
            Err(crate::store::Error::InvalidArgument("boom".into())),
            Ok((b"c".to_vec(), b"3".to_vec())),
        ];
        let mut merged = KeyValueIterator::merged(
            lending(failing.into_iter()),
            staged(&[("b", Some("2"))]),
            Order::Forward,
        );
        assert!(merged.next().unwrap().is_ok());
        assert!(merged.next().unwrap().is_err());
        assert!(merged.next().is_none());
    }
}
