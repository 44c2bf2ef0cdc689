//! Handles: the `long` a Java object holds in place of a pointer to a Rust object.
//!
//! A handle is a key into a table of `Arc`s, never an address. Looking it up clones the
//! `Arc`, so a call that is running keeps its object alive even if another thread closes the
//! handle meanwhile; the object is freed when the last call using it returns. A closed or
//! never-issued handle finds nothing and the caller raises `InvalidStateStoreException`
//! instead of touching freed memory. Handles are never reused, so a stale handle cannot
//! reach a newer object.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use jni::sys::jlong;

use super::errors::{JavaException, NativeError};

/// The handle Java holds when it holds nothing; no table ever issues it.
pub(crate) const NO_HANDLE: jlong = 0;

/// Live objects of one kind, by handle.
pub(crate) struct HandleTable<T: ?Sized> {
    kind: &'static str,
    next: AtomicI64,
    live: RwLock<HashMap<jlong, Arc<T>>>,
}

impl<T: ?Sized> HandleTable<T> {
    /// An empty table; `kind` names the objects in error messages.
    pub(crate) fn new(kind: &'static str) -> Self {
        HandleTable {
            kind,
            next: AtomicI64::new(NO_HANDLE + 1),
            live: RwLock::new(HashMap::new()),
        }
    }

    /// Registers `object` and returns its new handle.
    pub(crate) fn insert(&self, object: Arc<T>) -> jlong {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        self.write().insert(handle, object);
        handle
    }

    /// The object behind `handle`, or `InvalidStateStoreException` once it was removed.
    pub(crate) fn get(&self, handle: jlong) -> Result<Arc<T>, NativeError> {
        let live = self
            .live
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        live.get(&handle).cloned().ok_or_else(|| {
            NativeError::new(
                JavaException::InvalidStateStore,
                format!("{} handle {handle} is closed", self.kind),
            )
        })
    }

    /// Unregisters `handle`; `None` when it was already removed (closing twice is a no-op).
    pub(crate) fn remove(&self, handle: jlong) -> Option<Arc<T>> {
        self.write().remove(&handle)
    }

    /// Number of live handles.
    pub(crate) fn len(&self) -> usize {
        self.live
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<jlong, Arc<T>>> {
        // The map is consistent after any panic (insert and remove are single calls), so
        // a poisoned lock is safe to keep using.
        self.live
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_handles_are_gone_and_removing_twice_is_harmless() {
        let table: HandleTable<String> = HandleTable::new("thing");
        let handle = table.insert(Arc::new("a".into()));
        assert_ne!(handle, NO_HANDLE);
        assert_eq!(*table.get(handle).unwrap(), "a");
        assert!(table.remove(handle).is_some());
        assert!(table.remove(handle).is_none());
        let error = table.get(handle).unwrap_err();
        assert_eq!(error.exception(), JavaException::InvalidStateStore);
        assert_eq!(table.len(), 0);
    }

    #[test]
    fn handles_are_never_reused() {
        let table: HandleTable<u8> = HandleTable::new("thing");
        let first = table.insert(Arc::new(1));
        table.remove(first);
        let second = table.insert(Arc::new(2));
        assert_ne!(first, second);
        assert!(table.get(first).is_err());
    }

    #[test]
    fn a_reader_keeps_its_object_alive_across_a_concurrent_remove() {
        let table: HandleTable<Vec<u8>> = HandleTable::new("thing");
        let handle = table.insert(Arc::new(vec![7; 16]));
        let in_use = table.get(handle).unwrap();
        table.remove(handle);
        assert_eq!(in_use[15], 7);
    }
}
