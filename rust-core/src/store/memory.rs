//! The in-memory key-value store: committed state in a sorted map, same semantics as the
//! RocksDB store, nothing persisted (it restores from its changelog in full).
//!
//! The committed map is shared copy-on-write with open scans: a scan holds a reference to
//! the map as it was, and the next commit copies the map only if such a scan is still
//! open. Scans that are consumed promptly therefore cost no copy.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use crate::store::bounds::KeyBounds;
use crate::store::error::Result;
use crate::store::iter::{KeyValue, LendingCursor, Order};
use crate::store::offsets::{OffsetChange, StoredOffsets};
use crate::store::overlay::Overlay;
use crate::store::transactional::{CommittedScan, CommittedState, TransactionalStore};

/// The in-memory transactional key-value store.
pub type InMemoryKeyValueStore = TransactionalStore<MemoryState>;

type SortedMap = BTreeMap<Vec<u8>, Vec<u8>>;

impl InMemoryKeyValueStore {
    /// An empty store. It keeps offsets committed to it for as long as it lives.
    pub fn new(name: &str) -> Self {
        TransactionalStore::with_backend(name, MemoryState::default(), StoredOffsets::default())
    }
}

/// Committed state of an [`InMemoryKeyValueStore`].
#[derive(Debug, Default)]
pub struct MemoryState {
    map: Arc<SortedMap>,
}

impl CommittedState for MemoryState {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map.get(key).cloned())
    }

    fn visit(&self, key: &[u8], visit: &mut dyn FnMut(Option<&[u8]>)) -> Result<()> {
        visit(self.map.get(key).map(Vec::as_slice));
        Ok(())
    }

    fn scan(&self, bounds: &KeyBounds, order: Order) -> Result<CommittedScan> {
        Ok(Box::new(MapCursor {
            map: Arc::clone(&self.map),
            bounds: bounds.clone(),
            order,
            buffered: VecDeque::new(),
            resume_after: None,
            exhausted: false,
        }))
    }

    fn approximate_num_entries(&self) -> Result<u64> {
        Ok(self.map.len() as u64)
    }

    fn apply(&mut self, overlay: &Overlay, _offset_changes: &[OffsetChange]) -> Result<()> {
        // Offsets live only in the transactional layer's copy; nothing to persist.
        let map = Arc::make_mut(&mut self.map);
        for (start, end) in overlay.deleted_ranges() {
            let mut from_start = map.split_off(start);
            let mut from_end = from_start.split_off(end);
            map.append(&mut from_end);
        }
        for (key, value) in overlay.writes() {
            match value {
                Some(value) => {
                    map.insert(key.to_vec(), value.to_vec());
                }
                None => {
                    map.remove(key);
                }
            }
        }
        Ok(())
    }

    fn close(self) -> Result<()> {
        Ok(())
    }
}

/// Walks a snapshot of the map in chunks, so a scan neither borrows the store nor copies
/// the whole range up front.
struct MapCursor {
    map: Arc<SortedMap>,
    bounds: KeyBounds,
    order: Order,
    buffered: VecDeque<KeyValue>,
    /// Last key handed out; the next chunk starts just past it.
    resume_after: Option<Vec<u8>>,
    exhausted: bool,
}

const CHUNK: usize = 128;

impl MapCursor {
    fn refill(&mut self) {
        let (mut lower, mut upper) = self.bounds.as_range();
        if let Some(last) = self.resume_after.as_deref() {
            match self.order {
                Order::Forward => lower = Bound::Excluded(last),
                Order::Reverse => upper = Bound::Excluded(last),
            }
        }
        let range = self.map.range::<[u8], _>((lower, upper));
        let copy = |(key, value): (&Vec<u8>, &Vec<u8>)| (key.clone(), value.clone());
        match self.order {
            Order::Forward => self.buffered.extend(range.take(CHUNK).map(copy)),
            Order::Reverse => self.buffered.extend(range.rev().take(CHUNK).map(copy)),
        }
        self.exhausted = self.buffered.len() < CHUNK;
        self.resume_after = self.buffered.back().map(|(key, _)| key.clone());
    }
}

impl LendingCursor for MapCursor {
    fn offer_next(&mut self, take: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Option<Result<bool>> {
        if self.buffered.is_empty() && !self.exhausted {
            self.refill();
        }
        let (key, value) = self.buffered.front()?;
        let taken = take(key, value);
        if taken {
            self.buffered.pop_front();
        }
        Some(Ok(taken))
    }
}
