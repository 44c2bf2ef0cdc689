//! `dev.sluice.streams.state.internals.NativeWindowStore`: [`WindowStore`]s behind `long`
//! handles, in either key layout.
//!
//! A window store is opened over a key-value store handle (see `kv_store`), which keeps
//! the data, the changelog offsets and the position; the Java owner commits, reads offsets
//! and closes through that handle, restores, rolls back and releases through the entry
//! points every layered store shares (see `layered_store`), and through this one everything
//! window-shaped. Scans frame each record as a windowed entry (see
//! [`framing`](super::framing)). One Java class serves both key layouts: Kafka Streams'
//! [`KeyOrderedWindowStore`] and its [`TimeOrderedWindowStore`], the store of emit-final
//! windowed aggregations.

use std::sync::Arc;

use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jlong};
use jni::EnvUnowned;

use super::arrays::{new_optional_byte_array, read_bytes, read_optional_bytes};
use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::framing::window_entry_key;
use super::layered_store::register_layered;
use super::reads::{isolation, order, register_scan};
use super::registry::{LAYERED_STORES, STORES};
use crate::store::key_ordered_window::KeyOrderedWindowStore;
use crate::store::time_ordered_window::TimeOrderedWindowStore;
use crate::store::window::{WindowStore, WindowStoreOptions, WindowedRecords};
use crate::store::KeyValueIterator;

/// The window store behind `handle`, in either layout; `InvalidStateStoreException` once it
/// was released or when the handle is another kind's.
fn window_store(handle: jlong) -> Result<Arc<dyn WindowStore>, NativeError> {
    LAYERED_STORES.get(handle)?.window().ok_or_else(|| {
        NativeError::new(
            JavaException::InvalidStateStore,
            format!("handle {handle} is not a window store"),
        )
    })
}

fn framed(records: WindowedRecords) -> KeyValueIterator {
    KeyValueIterator::new(
        records.map(|record| record.map(|r| (window_entry_key(r.key, r.window_start), r.value))),
    )
}

/// Opens a window store over the key-value store `kv_store`, which it then owns entirely.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    kv_store: jlong,
    retention_period: jlong,
    segment_interval: jlong,
    retain_duplicates: jboolean,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let options = WindowStoreOptions {
            retention_period,
            segment_interval,
            retain_duplicates,
        };
        let store = KeyOrderedWindowStore::open(STORES.get(kv_store)?, options)?;
        Ok(register_layered(store))
    })
    .resolve::<ThrowJavaException>()
}

/// Opens a time-ordered window store (Kafka Streams' store for emit-final windowed
/// aggregations) over `kv_store`, keeping a key-first index when `with_index` is set.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_openTimeOrdered<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    kv_store: jlong,
    retention_period: jlong,
    segment_interval: jlong,
    retain_duplicates: jboolean,
    with_index: jboolean,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let options = WindowStoreOptions {
            retention_period,
            segment_interval,
            retain_duplicates,
        };
        let store = TimeOrderedWindowStore::open(STORES.get(kv_store)?, options, with_index)?;
        Ok(register_layered(store))
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_put<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    value: JByteArray<'local>,
    window_start: jlong,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let store = window_store(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let value = read_optional_bytes(env, &value)?;
        Ok(store.put(&key, value, window_start)?)
    })
    .resolve::<ThrowJavaException>()
}

/// The value of `key`'s window starting at `window_start`, or null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_fetch<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    window_start: jlong,
    read_committed: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = window_store(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let value = store.fetch(&key, window_start, isolation(read_committed))?;
        new_optional_byte_array(env, value.as_deref())
    })
    .resolve::<ThrowJavaException>()
}

/// Scans `key`'s windows starting in `[time_from, time_to]`; the framed record keys are
/// empty, only the window start follows.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_fetchKey<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    time_from: jlong,
    time_to: jlong,
    reverse: jboolean,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = window_store(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let values = store.fetch_key(
            &key,
            time_from,
            time_to,
            order(reverse),
            isolation(read_committed),
        )?;
        Ok(register_scan(KeyValueIterator::new(values.map(|value| {
            value.map(|(window_start, value)| (window_entry_key(Vec::new(), window_start), value))
        }))))
    })
    .resolve::<ThrowJavaException>()
}

/// Scans the windows of keys in `[key_from, key_to]` (null = open end) starting in
/// `[time_from, time_to]`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_fetchRange<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key_from: JByteArray<'local>,
    key_to: JByteArray<'local>,
    time_from: jlong,
    time_to: jlong,
    reverse: jboolean,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = window_store(handle)?;
        let key_from = read_optional_bytes(env, &key_from)?;
        let key_to = read_optional_bytes(env, &key_to)?;
        let records = store.fetch_key_range(
            key_from.as_deref(),
            key_to.as_deref(),
            time_from,
            time_to,
            order(reverse),
            isolation(read_committed),
        )?;
        Ok(register_scan(framed(records)))
    })
    .resolve::<ThrowJavaException>()
}

/// Scans every key's windows starting in `[time_from, time_to]`, in the store's key layout:
/// by key for key-ordered stores, by window start for time-ordered ones.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_fetchAll<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    time_from: jlong,
    time_to: jlong,
    reverse: jboolean,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let store = window_store(handle)?;
        let records = store.fetch_all(
            time_from,
            time_to,
            order(reverse),
            isolation(read_committed),
        )?;
        Ok(register_scan(framed(records)))
    })
    .resolve::<ThrowJavaException>()
}

/// Scans every live window.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeWindowStore_all<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    reverse: jboolean,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let store = window_store(handle)?;
        Ok(register_scan(framed(
            store.all(order(reverse), isolation(read_committed))?,
        )))
    })
    .resolve::<ThrowJavaException>()
}
