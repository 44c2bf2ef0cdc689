//! `dev.sluice.streams.state.internals.LayeredNativeStore`: the lifecycle every store layered
//! over a key-value store shares, once for all kinds.
//!
//! Window, session (key-ordered or time-ordered) and versioned stores live in one handle
//! table as [`LayeredStore`] trait objects. Restore, rollback and release are the same entry
//! points whatever the kind; the kind's own entry points look their store up with [`layered`]
//! (one concrete kind) or through a view several kinds offer ([`LayeredStore::session`]),
//! refusing a handle of another kind. Commit, offsets, position and closing go through the key-value store
//! underneath (see `kv_store`).

use std::any::{type_name, Any};
use std::sync::Arc;

use jni::objects::{JByteArray, JClass};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;

use super::arrays::read_bytes;
use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::framing;
use super::kv_store::{layout_code_of, value_layout};
use super::registry::LAYERED_STORES;
use crate::store::key_ordered_session::KeyOrderedSessionStore;
use crate::store::key_ordered_window::KeyOrderedWindowStore;
use crate::store::session::SessionStore;
use crate::store::time_ordered_session::TimeOrderedSessionStore;
use crate::store::time_ordered_window::TimeOrderedWindowStore;
use crate::store::value_layout::ValueLayout;
use crate::store::versioned::VersionedStore;
use crate::store::window::WindowStore;
use crate::store::SegmentedStore;

/// A store of any kind as `Any`, so a handle's kind-specific entry points can recover it.
pub(crate) trait IntoAny {
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<T: Any + Send + Sync> IntoAny for T {
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// What the shared lifecycle entry points need of a layered store, and the view its kind's
/// entry points use when one Java class serves more than one Rust store.
pub(crate) trait LayeredStore: IntoAny + Send + Sync {
    /// Applies a changelog batch, framed as Java frames this kind's records.
    fn restore(&self, batch: &[u8]) -> Result<(), NativeError>;

    /// Drops the staged writes and what the store derived from them.
    fn rollback(&self) -> Result<(), NativeError>;

    /// Brings the store's values to `wanted`, returning the layout they were upgraded from.
    fn settle_value_layout(&self, wanted: ValueLayout) -> Result<Option<ValueLayout>, NativeError>;

    /// The store as a session store, if it is one (in either key layout).
    fn session(self: Arc<Self>) -> Option<Arc<dyn SessionStore>> {
        None
    }

    /// The store as a window store, if it is one (in either key layout).
    fn window(self: Arc<Self>) -> Option<Arc<dyn WindowStore>> {
        None
    }
}

/// Segmented stores restore framed entries; window and session stores, in either layout,
/// are also their own window or session view.
macro_rules! segmented_layered_store {
    ($store:ty, $view:ident: $contract:ident) => {
        impl LayeredStore for $store {
            fn restore(&self, batch: &[u8]) -> Result<(), NativeError> {
                Ok(SegmentedStore::restore(self, framing::entries(batch)?)?)
            }

            fn rollback(&self) -> Result<(), NativeError> {
                Ok(SegmentedStore::rollback(self)?)
            }

            fn settle_value_layout(
                &self,
                wanted: ValueLayout,
            ) -> Result<Option<ValueLayout>, NativeError> {
                Ok(SegmentedStore::settle_value_layout(self, wanted)?)
            }

            fn $view(self: Arc<Self>) -> Option<Arc<dyn $contract>> {
                Some(self)
            }
        }
    };
}

segmented_layered_store!(KeyOrderedWindowStore, window: WindowStore);
segmented_layered_store!(TimeOrderedWindowStore, window: WindowStore);
segmented_layered_store!(KeyOrderedSessionStore, session: SessionStore);
segmented_layered_store!(TimeOrderedSessionStore, session: SessionStore);

impl LayeredStore for VersionedStore {
    fn restore(&self, batch: &[u8]) -> Result<(), NativeError> {
        Ok(VersionedStore::restore(
            self,
            framing::timestamped_entries(batch)?,
        )?)
    }

    fn rollback(&self) -> Result<(), NativeError> {
        Ok(VersionedStore::rollback(self)?)
    }

    /// Versioned stores have one layout of their own, which Kafka Streams never upgrades.
    fn settle_value_layout(&self, wanted: ValueLayout) -> Result<Option<ValueLayout>, NativeError> {
        Err(NativeError::new(
            JavaException::IllegalArgument,
            format!("a versioned store keeps its own value layout, not {wanted:?}"),
        ))
    }
}

/// Registers a layered store, returning its handle.
pub(crate) fn register_layered<T: LayeredStore + 'static>(store: T) -> jlong {
    LAYERED_STORES.insert(Arc::new(store))
}

/// The store of kind `T` behind `handle`; `InvalidStateStoreException` once it was released
/// or when the handle belongs to another kind.
pub(crate) fn layered<T: LayeredStore + 'static>(handle: jlong) -> Result<Arc<T>, NativeError> {
    LAYERED_STORES
        .get(handle)?
        .into_any()
        .downcast::<T>()
        .map_err(|_| {
            NativeError::new(
                JavaException::InvalidStateStore,
                format!("handle {handle} is not a {}", type_name::<T>()),
            )
        })
}

/// Applies changelog records framed as the store's kind expects.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_LayeredNativeStore_restore<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    batch: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let store = LAYERED_STORES.get(handle)?;
        store.restore(&read_bytes(env, &batch, "batch")?)
    })
    .resolve::<ThrowJavaException>()
}

/// Brings the store's values to the layout of `layout_code`; returns the code of the layout
/// they were upgraded from, or -1.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_LayeredNativeStore_settleValueLayout<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    layout_code: jint,
) -> jint {
    env.with_env(|_env| -> Result<jint, NativeError> {
        let store = LAYERED_STORES.get(handle)?;
        let upgraded_from = store.settle_value_layout(value_layout(layout_code)?)?;
        Ok(layout_code_of(upgraded_from))
    })
    .resolve::<ThrowJavaException>()
}

/// Drops the staged writes and returns to the committed stream time.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_LayeredNativeStore_rollback<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> { LAYERED_STORES.get(handle)?.rollback() })
        .resolve::<ThrowJavaException>()
}

/// Releases the handle; a second release does nothing. The key-value store underneath is
/// closed through its own handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_LayeredNativeStore_release<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        LAYERED_STORES.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJavaException>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::session::SessionStoreOptions;
    use crate::store::window::WindowStoreOptions;
    use crate::store::{InMemoryKeyValueStore, KeyValueStore};

    fn data() -> Arc<dyn KeyValueStore> {
        Arc::new(InMemoryKeyValueStore::new("data"))
    }

    fn window_store() -> KeyOrderedWindowStore {
        let options = WindowStoreOptions {
            retention_period: 60_000,
            segment_interval: 10_000,
            retain_duplicates: false,
        };
        KeyOrderedWindowStore::open(data(), options).unwrap()
    }

    const SESSION_OPTIONS: SessionStoreOptions = SessionStoreOptions {
        retention_period: 60_000,
        segment_interval: 10_000,
    };

    #[test]
    fn a_handle_finds_its_own_kind_only() {
        let handle = register_layered(window_store());
        assert!(layered::<KeyOrderedWindowStore>(handle).is_ok());
        let error = layered::<KeyOrderedSessionStore>(handle).err().unwrap();
        assert_eq!(error.exception(), JavaException::InvalidStateStore);
        LAYERED_STORES.remove(handle);
        let error = layered::<KeyOrderedWindowStore>(handle).err().unwrap();
        assert_eq!(error.exception(), JavaException::InvalidStateStore);
    }

    #[test]
    fn both_session_layouts_and_nothing_else_have_the_session_view() {
        let key_ordered =
            register_layered(KeyOrderedSessionStore::open(data(), SESSION_OPTIONS).unwrap());
        let time_ordered =
            register_layered(TimeOrderedSessionStore::open(data(), SESSION_OPTIONS, true).unwrap());
        let window = register_layered(window_store());
        assert!(LAYERED_STORES.get(key_ordered).unwrap().session().is_some());
        assert!(LAYERED_STORES
            .get(time_ordered)
            .unwrap()
            .session()
            .is_some());
        assert!(LAYERED_STORES.get(window).unwrap().session().is_none());
        for handle in [key_ordered, time_ordered, window] {
            LAYERED_STORES.remove(handle);
        }
    }
}
