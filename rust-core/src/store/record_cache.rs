//! The record cache of a stream thread (Kafka Streams' `ThreadCache`), held off the JVM heap.
//!
//! A [`RecordCache`] holds one [`NamedCache`] per caching store of the thread's tasks. Each
//! keeps Kafka Streams' semantics: its keys ordered (caching stores scan it by range), a
//! least-recently-used order that reads and writes refresh and eviction follows, and the
//! dirty keys in the order they were last written, which a flush hands on. Entries are opaque
//! to the cache: the JVM frames its `LRUCacheEntry` (value, record context, headers) into
//! bytes and gives the size Kafka Streams accounts for it, so sizes and evictions match.
//!
//! The thread's budget is not kept here: the JVM side adds up its named caches' sizes and
//! decides when to evict, as `ThreadCache` does, since an eviction may flush, and a flush
//! runs the store's listener, which forwards records on the JVM.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

/// The bytes Kafka Streams adds to an entry's own size for its node in the cache: references
/// to the entry and to its neighbours in the LRU order.
const NODE_OVERHEAD: u64 = 24;

/// An entry as the JVM framed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedEntry {
    /// The framed `LRUCacheEntry`; the cache never reads it.
    pub frame: Box<[u8]>,
    /// The entry's size as Kafka Streams estimates it (value, record context, headers).
    pub size: u64,
    /// Written since the last flush: a flush must hand it on.
    pub dirty: bool,
    /// A deletion: once flushed it leaves the cache.
    pub tombstone: bool,
}

/// A dirty entry handed on by a flush, in the order the flush found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlushedEntry {
    pub key: Arc<[u8]>,
    pub entry: CachedEntry,
}

/// A clean entry was written over a dirty one, whose write would be lost.
#[derive(Debug, PartialEq, Eq)]
pub struct DirtyEntryOverwritten {
    pub cache: String,
}

impl fmt::Display for DirtyEntryOverwritten {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Attempting to put a clean entry into NamedCache [{}] when it already contains a dirty entry for the same key",
            self.cache
        )
    }
}

impl std::error::Error for DirtyEntryOverwritten {}

/// The named caches of one thread, by the id [`RecordCache::create`] gave them.
#[derive(Debug, Default)]
pub struct RecordCache {
    caches: Vec<Option<NamedCache>>,
}

impl RecordCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an empty cache named `name` (for error messages) and returns its id.
    pub fn create(&mut self, name: &str) -> usize {
        self.caches.push(Some(NamedCache::new(name)));
        self.caches.len() - 1
    }

    /// The cache `id`, unless it was removed (or never created).
    pub fn cache(&mut self, id: usize) -> Option<&mut NamedCache> {
        self.caches.get_mut(id).and_then(Option::as_mut)
    }

    /// Drops the cache `id` and its entries.
    pub fn remove(&mut self, id: usize) {
        if let Some(slot) = self.caches.get_mut(id) {
            *slot = None;
        }
    }
}

/// Where a node is not linked.
const NIL: usize = usize::MAX;

#[derive(Debug)]
struct Node {
    key: Arc<[u8]>,
    entry: CachedEntry,
    /// Towards the most recently used.
    newer: usize,
    /// Towards the least recently used.
    older: usize,
    /// The dirty key written just before this one, when this one is dirty.
    dirtied_before: usize,
    /// The dirty key written just after this one, when this one is dirty.
    dirtied_after: usize,
}

impl Node {
    fn size(&self) -> u64 {
        self.key.len() as u64 + NODE_OVERHEAD + self.entry.size
    }
}

/// One store's cache: ordered keys, an LRU order and a dirty order over the same nodes.
#[derive(Debug)]
pub struct NamedCache {
    name: String,
    /// Each key's node, for the reads and writes of single keys (most of the traffic).
    index: HashMap<Arc<[u8]>, usize>,
    /// The same keys in order, for range scans.
    ordered: BTreeSet<Arc<[u8]>>,
    nodes: Vec<Option<Node>>,
    free: Vec<usize>,
    most_recent: usize,
    least_recent: usize,
    first_dirtied: usize,
    last_dirtied: usize,
    size_bytes: u64,
}

impl NamedCache {
    fn new(name: &str) -> Self {
        NamedCache {
            name: name.to_owned(),
            index: HashMap::new(),
            ordered: BTreeSet::new(),
            nodes: Vec::new(),
            free: Vec::new(),
            most_recent: NIL,
            least_recent: NIL,
            first_dirtied: NIL,
            last_dirtied: NIL,
            size_bytes: 0,
        }
    }

    /// The bytes Kafka Streams would account for this cache.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The entry of `key`, which becomes the most recently used.
    pub fn get(&mut self, key: &[u8]) -> Option<&CachedEntry> {
        let index = *self.index.get(key)?;
        self.touch(index);
        Some(&self.node(index).entry)
    }

    /// Writes `entry` for `key`, most recently used; a dirty entry becomes the last dirtied.
    /// Refused for a clean entry over a dirty one, whose write a flush has not handed on.
    pub fn put(&mut self, key: &[u8], entry: CachedEntry) -> Result<(), DirtyEntryOverwritten> {
        let dirty = entry.dirty;
        let index = match self.index.get(key) {
            Some(&index) => {
                if !dirty && self.node(index).entry.dirty {
                    return Err(DirtyEntryOverwritten {
                        cache: self.name.clone(),
                    });
                }
                self.size_bytes -= self.node(index).size();
                self.node_mut(index).entry = entry;
                self.touch(index);
                if dirty {
                    self.unlink_dirty(index);
                }
                index
            }
            None => {
                let key: Arc<[u8]> = Arc::from(key);
                let index = self.allocate(Node {
                    key: Arc::clone(&key),
                    entry,
                    newer: NIL,
                    older: NIL,
                    dirtied_before: NIL,
                    dirtied_after: NIL,
                });
                self.index.insert(Arc::clone(&key), index);
                self.ordered.insert(key);
                self.link_most_recent(index);
                index
            }
        };
        if dirty {
            self.link_last_dirtied(index);
        }
        self.size_bytes += self.node(index).size();
        Ok(())
    }

    /// Removes `key`, returning its entry.
    pub fn delete(&mut self, key: &[u8]) -> Option<CachedEntry> {
        let index = self.index.remove(key)?;
        self.ordered.remove(key);
        Some(self.release(index).entry)
    }

    /// Removes the least recently used entry. When it was dirty, every dirty entry is flushed
    /// with it: it comes first, still dirty, then the others in the order they were dirtied.
    /// `None` when the cache is empty.
    pub fn evict(&mut self) -> Option<Vec<FlushedEntry>> {
        if self.least_recent == NIL {
            return None;
        }
        let eldest = self.least_recent;
        let key = Arc::clone(&self.node(eldest).key);
        self.index.remove(&key);
        self.ordered.remove(&key);
        let node = self.release(eldest);
        if !node.entry.dirty {
            return Some(Vec::new());
        }
        let mut flushed = vec![FlushedEntry {
            key: node.key,
            entry: node.entry,
        }];
        flushed.extend(self.flush());
        Some(flushed)
    }

    /// Hands on every dirty entry in the order they were last written, marking them clean;
    /// flushed deletions leave the cache.
    pub fn flush(&mut self) -> Vec<FlushedEntry> {
        let mut flushed = Vec::new();
        let mut index = self.first_dirtied;
        while index != NIL {
            let next = self.node(index).dirtied_after;
            let node = self.node_mut(index);
            node.dirtied_before = NIL;
            node.dirtied_after = NIL;
            node.entry.dirty = false;
            flushed.push(FlushedEntry {
                key: Arc::clone(&node.key),
                entry: CachedEntry {
                    dirty: false,
                    ..node.entry.clone()
                },
            });
            index = next;
        }
        self.first_dirtied = NIL;
        self.last_dirtied = NIL;
        for deleted in flushed.iter().filter(|flushed| flushed.entry.tombstone) {
            self.delete(&deleted.key);
        }
        flushed
    }

    /// The keys from `from` to `to` (either open when `None`), as they are now, ascending or
    /// descending; none when `from` is above `to`.
    pub fn keys_in_range(
        &self,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        to_inclusive: bool,
        descending: bool,
    ) -> Vec<Arc<[u8]>> {
        if let (Some(from), Some(to)) = (from, to) {
            if from > to {
                return Vec::new();
            }
        }
        let lower = from.map_or(Bound::Unbounded, Bound::Included);
        let upper = match to {
            None => Bound::Unbounded,
            Some(to) if to_inclusive => Bound::Included(to),
            Some(to) => Bound::Excluded(to),
        };
        let range = self.ordered.range::<[u8], _>((lower, upper));
        if descending {
            range.rev().cloned().collect()
        } else {
            range.cloned().collect()
        }
    }

    /// Drops every entry, dirty or not.
    pub fn clear(&mut self) {
        let name = std::mem::take(&mut self.name);
        *self = NamedCache::new(&name);
    }

    fn node(&self, index: usize) -> &Node {
        self.nodes[index].as_ref().expect("a linked node is live")
    }

    fn node_mut(&mut self, index: usize) -> &mut Node {
        self.nodes[index].as_mut().expect("a linked node is live")
    }

    fn allocate(&mut self, node: Node) -> usize {
        match self.free.pop() {
            Some(index) => {
                self.nodes[index] = Some(node);
                index
            }
            None => {
                self.nodes.push(Some(node));
                self.nodes.len() - 1
            }
        }
    }

    /// Unlinks a node whose key already left the index and the order, and frees its slot.
    fn release(&mut self, index: usize) -> Node {
        self.unlink_lru(index);
        self.unlink_dirty(index);
        let node = self.nodes[index].take().expect("a linked node is live");
        self.free.push(index);
        self.size_bytes -= node.size();
        node
    }

    fn touch(&mut self, index: usize) {
        if self.most_recent != index {
            self.unlink_lru(index);
            self.link_most_recent(index);
        }
    }

    fn link_most_recent(&mut self, index: usize) {
        let previous = self.most_recent;
        {
            let node = self.node_mut(index);
            node.older = previous;
            node.newer = NIL;
        }
        if previous == NIL {
            self.least_recent = index;
        } else {
            self.node_mut(previous).newer = index;
        }
        self.most_recent = index;
    }

    fn unlink_lru(&mut self, index: usize) {
        let (newer, older) = {
            let node = self.node(index);
            (node.newer, node.older)
        };
        if newer == NIL {
            self.most_recent = older;
        } else {
            self.node_mut(newer).older = older;
        }
        if older == NIL {
            self.least_recent = newer;
        } else {
            self.node_mut(older).newer = newer;
        }
    }

    fn link_last_dirtied(&mut self, index: usize) {
        let previous = self.last_dirtied;
        {
            let node = self.node_mut(index);
            node.dirtied_before = previous;
            node.dirtied_after = NIL;
        }
        if previous == NIL {
            self.first_dirtied = index;
        } else {
            self.node_mut(previous).dirtied_after = index;
        }
        self.last_dirtied = index;
    }

    /// Takes a node out of the dirty order; nothing when it is clean.
    fn unlink_dirty(&mut self, index: usize) {
        let (before, after) = {
            let node = self.node(index);
            (node.dirtied_before, node.dirtied_after)
        };
        if before == NIL && after == NIL && self.first_dirtied != index {
            return;
        }
        if before == NIL {
            self.first_dirtied = after;
        } else {
            self.node_mut(before).dirtied_after = after;
        }
        if after == NIL {
            self.last_dirtied = before;
        } else {
            self.node_mut(after).dirtied_before = before;
        }
        let node = self.node_mut(index);
        node.dirtied_before = NIL;
        node.dirtied_after = NIL;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(value: &str, dirty: bool) -> CachedEntry {
        CachedEntry {
            frame: value.as_bytes().into(),
            size: value.len() as u64,
            dirty,
            tombstone: false,
        }
    }

    fn keys(flushed: &[FlushedEntry]) -> Vec<&[u8]> {
        flushed.iter().map(|flushed| &*flushed.key).collect()
    }

    fn cache() -> NamedCache {
        NamedCache::new("0_0-store")
    }

    #[test]
    fn sizes_count_the_key_the_node_and_the_entry() {
        let mut cache = cache();
        cache.put(b"ab", entry("xyz", true)).unwrap();
        assert_eq!(cache.size_bytes(), 2 + 24 + 3);
        cache.put(b"ab", entry("x", true)).unwrap();
        assert_eq!(cache.size_bytes(), 2 + 24 + 1);
        cache.delete(b"ab");
        assert_eq!(cache.size_bytes(), 0);
        assert!(cache.is_empty());
    }

    #[test]
    fn a_flush_hands_on_dirty_entries_in_the_order_they_were_last_written() {
        let mut cache = cache();
        cache.put(b"a", entry("1", true)).unwrap();
        cache.put(b"b", entry("2", true)).unwrap();
        cache.put(b"c", entry("3", false)).unwrap();
        cache.put(b"a", entry("4", true)).unwrap();
        let flushed = cache.flush();
        assert_eq!(keys(&flushed), [&b"b"[..], b"a"]);
        assert_eq!(&*flushed[1].entry.frame, b"4");
        assert!(flushed.iter().all(|flushed| !flushed.entry.dirty));
        assert!(cache.flush().is_empty());
        assert!(!cache.get(b"a").unwrap().dirty);
    }

    #[test]
    fn eviction_takes_the_least_recently_used_and_a_dirty_one_flushes_the_rest_after_it() {
        let mut cache = cache();
        cache.put(b"a", entry("1", true)).unwrap();
        cache.put(b"b", entry("2", false)).unwrap();
        cache.put(b"c", entry("3", true)).unwrap();
        cache.get(b"a");
        assert_eq!(cache.evict(), Some(Vec::new()));
        assert!(cache.get(b"b").is_none());
        let flushed = cache.evict().unwrap();
        assert_eq!(keys(&flushed), [&b"c"[..], b"a"]);
        assert!(
            flushed[0].entry.dirty,
            "the evicted entry is handed on as it was"
        );
        assert!(!flushed[1].entry.dirty);
        assert_eq!(cache.len(), 1);
        cache.evict();
        assert_eq!(cache.evict(), None);
    }

    #[test]
    fn a_dirty_eviction_flushes_every_other_dirty_entry_down_to_the_last_written() {
        let mut cache = cache();
        for key in [&b"c"[..], b"ba", b"a"] {
            cache.put(key, entry("1", true)).unwrap();
        }
        cache.put(b"x", entry("1", false)).unwrap();
        cache.put(b"b", entry("2", true)).unwrap();
        let flushed = cache.evict().unwrap();
        assert_eq!(keys(&flushed), [&b"c"[..], b"ba", b"a", b"b"]);
    }

    /// The cache as plain lists: entries least recently used first, dirty keys first dirtied first.
    #[derive(Default)]
    struct Model {
        entries: Vec<(Vec<u8>, CachedEntry)>,
        dirty: Vec<Vec<u8>>,
    }

    impl Model {
        fn position(&self, key: &[u8]) -> Option<usize> {
            self.entries.iter().position(|(k, _)| k == key)
        }

        fn get(&mut self, key: &[u8]) -> Option<CachedEntry> {
            let at = self.position(key)?;
            let entry = self.entries.remove(at);
            self.entries.push(entry.clone());
            Some(entry.1)
        }

        fn put(&mut self, key: &[u8], entry: CachedEntry) -> bool {
            if let Some(at) = self.position(key) {
                if !entry.dirty && self.entries[at].1.dirty {
                    return false;
                }
                self.entries.remove(at);
            }
            if entry.dirty {
                self.dirty.retain(|k| k != key);
                self.dirty.push(key.to_vec());
            }
            self.entries.push((key.to_vec(), entry));
            true
        }

        fn delete(&mut self, key: &[u8]) -> Option<CachedEntry> {
            let at = self.position(key)?;
            self.dirty.retain(|k| k != key);
            Some(self.entries.remove(at).1)
        }

        fn flush(&mut self) -> Vec<(Vec<u8>, CachedEntry)> {
            let mut flushed = Vec::new();
            for key in std::mem::take(&mut self.dirty) {
                let at = self.position(&key).unwrap();
                self.entries[at].1.dirty = false;
                flushed.push(self.entries[at].clone());
            }
            for (key, entry) in &flushed {
                if entry.tombstone {
                    self.delete(key);
                }
            }
            flushed
        }

        fn evict(&mut self) -> Option<Vec<(Vec<u8>, CachedEntry)>> {
            if self.entries.is_empty() {
                return None;
            }
            let (key, entry) = self.entries.remove(0);
            self.dirty.retain(|k| *k != key);
            if !entry.dirty {
                return Some(Vec::new());
            }
            let mut flushed = vec![(key, entry)];
            flushed.extend(self.flush());
            Some(flushed)
        }

        fn size_bytes(&self) -> u64 {
            self.entries
                .iter()
                .map(|(key, entry)| key.len() as u64 + NODE_OVERHEAD + entry.size)
                .sum()
        }
    }

    fn pairs(flushed: Vec<FlushedEntry>) -> Vec<(Vec<u8>, CachedEntry)> {
        flushed
            .into_iter()
            .map(|flushed| (flushed.key.to_vec(), flushed.entry))
            .collect()
    }

    #[test]
    fn random_operations_match_a_model_of_plain_lists() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        };
        let mut cache = cache();
        let mut model = Model::default();
        for step in 0..20_000 {
            let key = [b'a' + next(12) as u8];
            let value = format!("v{step}");
            match next(10) {
                0..=3 => {
                    let entry = CachedEntry {
                        tombstone: next(5) == 0,
                        ..entry(&value, next(4) != 0)
                    };
                    assert_eq!(
                        cache.put(&key, entry.clone()).is_ok(),
                        model.put(&key, entry)
                    );
                }
                4 | 5 => assert_eq!(cache.get(&key).cloned(), model.get(&key)),
                6 => assert_eq!(cache.delete(&key), model.delete(&key)),
                7 => assert_eq!(pairs(cache.flush()), model.flush()),
                _ => assert_eq!(cache.evict().map(pairs), model.evict()),
            }
            assert_eq!(cache.size_bytes(), model.size_bytes(), "step {step}");
            assert_eq!(cache.len(), model.entries.len());
        }
    }

    #[test]
    fn a_clean_entry_cannot_replace_a_dirty_one() {
        let mut cache = cache();
        cache.put(b"a", entry("1", true)).unwrap();
        assert!(cache.put(b"a", entry("2", false)).is_err());
        cache.flush();
        cache.put(b"a", entry("2", false)).unwrap();
        assert_eq!(&*cache.get(b"a").unwrap().frame, b"2");
    }

    #[test]
    fn flushed_deletions_leave_the_cache() {
        let mut cache = cache();
        cache.put(b"a", entry("1", true)).unwrap();
        cache
            .put(
                b"b",
                CachedEntry {
                    tombstone: true,
                    ..entry("", true)
                },
            )
            .unwrap();
        assert_eq!(cache.flush().len(), 2);
        assert!(cache.get(b"b").is_none());
        assert!(cache.get(b"a").is_some());
    }

    #[test]
    fn ranges_snapshot_the_keys_in_either_direction() {
        let mut cache = cache();
        for key in [&b"a"[..], b"b", b"c", b"d"] {
            cache.put(key, entry("v", false)).unwrap();
        }
        let range = |from: Option<&[u8]>, to: Option<&[u8]>, inclusive, descending| {
            cache
                .keys_in_range(from, to, inclusive, descending)
                .iter()
                .map(|key| key.to_vec())
                .collect::<Vec<_>>()
        };
        assert_eq!(range(Some(b"b"), Some(b"c"), true, false), [b"b", b"c"]);
        assert_eq!(range(Some(b"b"), Some(b"d"), false, false), [b"b", b"c"]);
        assert_eq!(range(None, Some(b"b"), true, true), [b"b", b"a"]);
        assert_eq!(range(Some(b"c"), None, true, false), [b"c", b"d"]);
        assert!(range(Some(b"d"), Some(b"a"), true, false).is_empty());
    }

    #[test]
    fn removed_caches_are_gone_and_others_keep_their_ids() {
        let mut caches = RecordCache::new();
        let first = caches.create("0_0-a");
        let second = caches.create("0_0-b");
        caches.remove(first);
        assert!(caches.cache(first).is_none());
        assert!(caches.cache(second).is_some());
        assert!(caches.cache(7).is_none());
    }
}
