//! `dev.sluice.streams.state.internals.NativeKeyValueStore`: the key-value stores of
//! `crate::store` behind `long` handles.
//!
//! Reads take `readCommitted` (true = READ_COMMITTED, false = READ_UNCOMMITTED). Nulls
//! follow Kafka Streams: a null value in `put`/`putIfAbsent` deletes, a null range end is
//! open, a null key raises `NullPointerException`. Scans return an iterator handle that
//! `NativeKeyValueIterator` reads in chunks.

use std::path::PathBuf;
use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;

use super::arrays::{
    new_optional_byte_array, new_string_array, read_bytes, read_optional_bytes, with_bytes,
};
use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::framing;
use super::reads::{isolation, order, register_scan};
use super::registry::{register_store, ROCKSDB_RESOURCES, STORES};
use super::rocksdb_resources::string_pairs;
use crate::store::rocks::{destroy_store_dir, StoreTuning};
use crate::store::value_layout::ValueLayout;
use crate::store::{
    CommitMetadata, InMemoryKeyValueStore, KeyBounds, RocksDbKeyValueStore, TopicPartition,
};

/// What `committedOffset` returns when no offset is stored.
const NO_OFFSET: jlong = -1;

/// What `backendProperty` returns for a property the backend does not have.
const NO_PROPERTY: jlong = -1;

/// Opens (or creates) the RocksDB store `name` in `directory`, sharing the memory of
/// `resources`, with the RocksDB `settings` (name, value, name, value …) over the
/// defaults. A directory that is not an intact store raises
/// `StoreDirectoryCorruptedException`; a setting the store refuses, `IllegalArgumentException`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_openRocksDb<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    name: JString<'local>,
    directory: JString<'local>,
    resources: jlong,
    settings: JObjectArray<'local, JString<'local>>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let name = name.try_to_string(env)?;
        let directory = PathBuf::from(directory.try_to_string(env)?);
        let resources = ROCKSDB_RESOURCES.get(resources)?;
        let settings = string_pairs(env, &settings)?;
        let tuning = StoreTuning::parse(
            settings
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str())),
        )?;
        let store = RocksDbKeyValueStore::open(&name, &directory, &resources, &tuning)?;
        Ok(register_store(Arc::new(store)))
    })
    .resolve::<ThrowJavaException>()
}

/// Of the RocksDB `settings` (name, value, name, value …), those a store refuses, each with
/// the reason (name, reason, name, reason …).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_refusedRocksDbSettings<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    settings: JObjectArray<'local, JString<'local>>,
) -> JObjectArray<'local, JString<'local>> {
    env.with_env(
        |env| -> Result<JObjectArray<'local, JString<'local>>, NativeError> {
            let settings = string_pairs(env, &settings)?;
            let refusals = StoreTuning::refusals(
                settings
                    .iter()
                    .map(|(name, value)| (name.as_str(), value.as_str())),
            );
            let texts: Vec<String> = refusals
                .into_iter()
                .flat_map(|(name, reason)| [name, reason])
                .collect();
            new_string_array(env, texts.into_iter())
        },
    )
    .resolve::<ThrowJavaException>()
}

/// Creates the empty in-memory store `name`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_openInMemory<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    name: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let name = name.try_to_string(env)?;
        Ok(register_store(Arc::new(InMemoryKeyValueStore::new(&name))))
    })
    .resolve::<ThrowJavaException>()
}

/// Deletes a (closed) store directory and everything in it; a missing one is fine.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_destroyDirectory<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    directory: JString<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let directory = PathBuf::from(directory.try_to_string(env)?);
        Ok(destroy_store_dir(&directory)?)
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_get<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    read_committed: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = STORES.get(handle)?;
        with_bytes(env, &key, "key", |key| {
            // The value goes from where the store holds it straight into the Java array.
            let mut value = Ok(JByteArray::default());
            store.visit_value(key, isolation(read_committed), &mut |found| {
                value = new_optional_byte_array(env, found);
            })?;
            value
        })
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_put<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    value: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let store = STORES.get(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let value = read_optional_bytes(env, &value)?;
        Ok(store.put(key, value)?)
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_putIfAbsent<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    value: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = STORES.get(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let value = read_optional_bytes(env, &value)?;
        let previous = store.put_if_absent(key, value)?;
        new_optional_byte_array(env, previous.as_deref())
    })
    .resolve::<ThrowJavaException>()
}

/// Stages every entry of `batch` (framed as in [`framing`]) in one call.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_putAll<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    batch: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let store = STORES.get(handle)?;
        let batch = read_bytes(env, &batch, "batch")?;
        Ok(store.put_all(framing::entries(&batch)?)?)
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_delete<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = STORES.get(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let previous = store.delete(&key)?;
        new_optional_byte_array(env, previous.as_deref())
    })
    .resolve::<ThrowJavaException>()
}

/// Opens a scan of `[from, to]` (null = open end; empty when `from > to`), ascending or
/// descending, and returns its iterator handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_range<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    from: JByteArray<'local>,
    to: JByteArray<'local>,
    reverse: jboolean,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = STORES.get(handle)?;
        let from = read_optional_bytes(env, &from)?;
        let to = read_optional_bytes(env, &to)?;
        let bounds = KeyBounds::inclusive(from.as_deref(), to.as_deref());
        let entries = store.scan(&bounds, order(reverse), isolation(read_committed))?;
        Ok(register_scan(entries))
    })
    .resolve::<ThrowJavaException>()
}

/// Opens an ascending scan of the keys starting with `prefix`; returns its iterator handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_prefixScan<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    prefix: JByteArray<'local>,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = STORES.get(handle)?;
        let prefix = read_bytes(env, &prefix, "prefix")?;
        let entries = store.prefix_scan(&prefix, isolation(read_committed))?;
        Ok(register_scan(entries))
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_approximateNumEntries<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let store = STORES.get(handle)?;
        let entries = store.approximate_num_entries(isolation(read_committed))?;
        Ok(jlong::try_from(entries).unwrap_or(jlong::MAX))
    })
    .resolve::<ThrowJavaException>()
}

/// The backend's numeric property `name` (RocksDB's `rocksdb.*`), or [`NO_PROPERTY`] where
/// the backend has none; saturates at `Long.MAX_VALUE`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_backendProperty<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    name: JString<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let name = name.try_to_string(env)?;
        let store = STORES.get(handle)?;
        Ok(match store.backend_property(&name)? {
            Some(value) => jlong::try_from(value).unwrap_or(jlong::MAX),
            None => NO_PROPERTY,
        })
    })
    .resolve::<ThrowJavaException>()
}

/// Commits the staged writes with the changelog `offsets` (framed as in [`framing`]) and,
/// unless null, the serialized interactive-query `position`, in one atomic write.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_commit<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    offsets: JByteArray<'local>,
    position: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let store = STORES.get(handle)?;
        let offsets = framing::offsets(&read_bytes(env, &offsets, "offsets")?)?;
        let metadata = CommitMetadata {
            offsets,
            position: read_optional_bytes(env, &position)?,
        };
        Ok(store.commit(&metadata)?)
    })
    .resolve::<ThrowJavaException>()
}

/// The committed changelog offset of `topic`-`partition`, or -1 when none is stored.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_committedOffset<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    topic: JString<'local>,
    partition: jint,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = STORES.get(handle)?;
        let partition = TopicPartition::new(topic.try_to_string(env)?, partition);
        Ok(store.committed_offset(&partition)?.unwrap_or(NO_OFFSET))
    })
    .resolve::<ThrowJavaException>()
}

/// Brings the store's values to the layout of `layout_code` (see `store::value_layout`);
/// returns the code of the layout they were upgraded from, or -1 when none was.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_settleValueLayout<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    layout_code: jint,
) -> jint {
    env.with_env(|_env| -> Result<jint, NativeError> {
        let store = STORES.get(handle)?;
        let upgraded_from =
            store.settle_value_layout(value_layout(layout_code)?, "key-value", &|_| true)?;
        Ok(layout_code_of(upgraded_from))
    })
    .resolve::<ThrowJavaException>()
}

/// The layout a code from Java names.
pub(crate) fn value_layout(code: jint) -> Result<ValueLayout, NativeError> {
    u8::try_from(code)
        .ok()
        .and_then(ValueLayout::from_code)
        .ok_or_else(|| {
            NativeError::new(
                JavaException::IllegalArgument,
                format!("{code} is no value layout"),
            )
        })
}

/// The code Java reads for an upgrade's original layout: -1 for none.
pub(crate) fn layout_code_of(layout: Option<ValueLayout>) -> jint {
    layout.map_or(-1, |layout| jint::from(layout.code()))
}

/// The serialized interactive-query position committed last, or null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_committedPosition<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = STORES.get(handle)?;
        let position = store.committed_position()?;
        new_optional_byte_array(env, position.as_deref())
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_rollback<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> { Ok(STORES.get(handle)?.rollback()?) })
        .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_approximateNumUncommittedBytes<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let bytes = STORES.get(handle)?.approximate_uncommitted_bytes();
        Ok(jlong::try_from(bytes).unwrap_or(jlong::MAX))
    })
    .resolve::<ThrowJavaException>()
}

/// Closes the store, discarding staged writes, and releases its handle; a second close does
/// nothing. Scans still open keep what they read from alive until they are closed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueStore_close<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        match STORES.remove(handle) {
            Some(store) => Ok(store.close()?),
            None => Ok(()),
        }
    })
    .resolve::<ThrowJavaException>()
}
