//! `dev.sluice.streams.state.internals.NativeVersionedStore`: [`VersionedStore`]s behind
//! `long` handles, opened over a key-value store handle like the window stores (see
//! `window_store`). Reads return framed versioned records (see [`framing`]) or null.

use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jlong};
use jni::{Env, EnvUnowned};

use super::arrays::{new_byte_array, read_bytes, read_optional_bytes};
use super::errors::{NativeError, ThrowJavaException};
use super::framing;
use super::layered_store::{layered, register_layered};
use super::reads::{isolation, order};
use super::registry::STORES;
use crate::store::versioned::{VersionedRecord, VersionedStore};

fn framed<'local>(
    env: &Env<'local>,
    record: Option<VersionedRecord>,
) -> Result<JByteArray<'local>, NativeError> {
    match record {
        Some(record) => new_byte_array(env, &framing::versioned_record(&record)),
        None => Ok(JByteArray::default()),
    }
}

/// Opens a versioned store keeping `history_retention` ms of history over the key-value
/// store `kv_store`, which it then owns entirely.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeVersionedStore_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    kv_store: jlong,
    history_retention: jlong,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let store = VersionedStore::open(STORES.get(kv_store)?, history_retention)?;
        Ok(register_layered(store))
    })
    .resolve::<ThrowJavaException>()
}

/// Kafka Streams' `put(key, value, timestamp)`: the new version's valid-to, -1 when it is
/// the latest, `Long.MIN_VALUE` when `timestamp` is past the grace period.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeVersionedStore_put<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    value: JByteArray<'local>,
    timestamp: jlong,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = layered::<VersionedStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let value = read_optional_bytes(env, &value)?;
        Ok(store.put(&key, value, timestamp)?)
    })
    .resolve::<ThrowJavaException>()
}

/// Kafka Streams' `delete(key, timestamp)`: the version valid at `timestamp`, or null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeVersionedStore_delete<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    timestamp: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = layered::<VersionedStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let previous = store.delete(&key, timestamp)?;
        framed(env, previous)
    })
    .resolve::<ThrowJavaException>()
}

/// The latest version of `key`, or null when there is none or it is a tombstone.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeVersionedStore_get<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    read_committed: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = layered::<VersionedStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let latest = store.get(&key, isolation(read_committed))?;
        framed(env, latest)
    })
    .resolve::<ThrowJavaException>()
}

/// The version of `key` valid at `as_of`, or null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeVersionedStore_getAsOf<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    as_of: jlong,
    read_committed: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = layered::<VersionedStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let version = store.get_as_of(&key, as_of, isolation(read_committed))?;
        framed(env, version)
    })
    .resolve::<ThrowJavaException>()
}

/// `MultiVersionedKeyQuery`: every version of `key` valid at some time in
/// `[from_time, to_time]`, tombstones left out, by timestamp (descending when `reverse`),
/// framed as a sequence of length-prefixed versioned records.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeVersionedStore_getVersions<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    from_time: jlong,
    to_time: jlong,
    reverse: jboolean,
    read_committed: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = layered::<VersionedStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let versions = store.get_versions(
            &key,
            from_time,
            to_time,
            order(reverse),
            isolation(read_committed),
        )?;
        new_byte_array(env, &framing::versioned_records(&versions))
    })
    .resolve::<ThrowJavaException>()
}
