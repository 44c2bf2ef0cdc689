//! `dev.sluice.streams.state.internals.NativeRecordCache`: a stream thread's record cache.
//!
//! Entries cross as the frames Java made of them (see [`crate::store::record_cache`]); what
//! comes back is framed as follows, big-endian:
//!
//! - **An entry**: `u8 dirty, frame`.
//! - **A change** (`delete`, `evict`, `flush`): `i64 cacheSizeBytes` after it, then what it
//!   handed back: for `delete` the removed entry, if any; for `evict` and `flush` the flushed
//!   entries, `i32 count` then per entry `i32 keyLength, key, i32 entryLength, entry`.
//! - **Keys** (`keys`): `i32 count`, then per key `i32 keyLength, key`.

use std::sync::{Arc, Mutex};

use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;

use super::arrays::{
    length_of, new_byte_array, read_optional_bytes, read_prefix, with_bytes, write_into,
};
use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::registry::RECORD_CACHES;
use crate::store::record_cache::{CachedEntry, FlushedEntry, NamedCache, RecordCache};

/// What `get` returns for a key the cache does not hold.
const MISS: jint = -1;

/// Runs `f` on the named cache `id` of the record cache `handle`.
fn with_cache<R>(
    handle: jlong,
    id: jint,
    f: impl FnOnce(&mut NamedCache) -> Result<R, NativeError>,
) -> Result<R, NativeError> {
    let caches = RECORD_CACHES.get(handle)?;
    let mut caches = caches
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let cache = usize::try_from(id)
        .ok()
        .and_then(|id| caches.cache(id))
        .ok_or_else(|| {
            NativeError::new(
                JavaException::InvalidStateStore,
                format!("record cache {id} was closed"),
            )
        })?;
    f(cache)
}

fn put_entry(out: &mut Vec<u8>, entry: &CachedEntry) {
    out.push(u8::from(entry.dirty));
    out.extend_from_slice(&entry.frame);
}

fn change(size_bytes: u64, framed: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&size_bytes.to_be_bytes());
    framed(&mut out);
    out
}

fn flushed(size_bytes: u64, entries: &[FlushedEntry]) -> Vec<u8> {
    change(size_bytes, |out| {
        out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
        for flushed in entries {
            out.extend_from_slice(&(flushed.key.len() as i32).to_be_bytes());
            out.extend_from_slice(&flushed.key);
            out.extend_from_slice(&(flushed.entry.frame.len() as i32 + 1).to_be_bytes());
            put_entry(out, &flushed.entry);
        }
    })
}

/// A new, empty record cache.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        Ok(RECORD_CACHES.insert(Arc::new(Mutex::new(RecordCache::new()))))
    })
    .resolve::<ThrowJavaException>()
}

/// Releases the cache and every entry in it; a second close does nothing.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_close<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        RECORD_CACHES.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJavaException>()
}

/// Adds an empty named cache and returns its id.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_createCache<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    name: JString<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, NativeError> {
        let name = name.try_to_string(env)?;
        let caches = RECORD_CACHES.get(handle)?;
        let id = caches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .create(&name);
        jint::try_from(id).map_err(|_| {
            NativeError::new(
                JavaException::IllegalState,
                "too many named caches".to_owned(),
            )
        })
    })
    .resolve::<ThrowJavaException>()
}

/// Drops the named cache `id` and its entries.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_removeCache<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        let caches = RECORD_CACHES.get(handle)?;
        let mut caches = caches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Ok(id) = usize::try_from(id) {
            caches.remove(id);
        }
        Ok(())
    })
    .resolve::<ThrowJavaException>()
}

/// Writes the entry framed in the first `frame_length` bytes of `frame` for `key`, and
/// returns the named cache's size in bytes; `IllegalStateException` for a clean entry over
/// a dirty one.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_put<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
    key: JByteArray<'local>,
    frame: JByteArray<'local>,
    frame_length: jint,
    entry_size: jlong,
    dirty: jboolean,
    tombstone: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let frame_length = usize::try_from(frame_length).map_err(|_| {
            NativeError::new(
                JavaException::IllegalArgument,
                "negative frame length".to_owned(),
            )
        })?;
        let entry = CachedEntry {
            frame: read_prefix(env, &frame, frame_length, "frame")?.into_boxed_slice(),
            size: entry_size.max(0) as u64,
            dirty,
            tombstone,
        };
        with_bytes(env, &key, "key", |key| {
            with_cache(handle, id, |cache| {
                cache.put(key, entry).map_err(|overwritten| {
                    NativeError::new(JavaException::IllegalState, overwritten.to_string())
                })?;
                Ok(cache.size_bytes() as jlong)
            })
        })
    })
    .resolve::<ThrowJavaException>()
}

/// Writes the entry of `key`, framed, into `out` and returns its length, making it the most
/// recently used; -1 when the cache does not hold the key, and `-n` (n > 1) when `out` is
/// shorter than the `n` bytes it needs (nothing changed then).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_get<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
    key: JByteArray<'local>,
    out: JByteArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, NativeError> {
        let capacity = length_of(env, &out, "out")?;
        with_bytes(env, &key, "key", |key| {
            with_cache(handle, id, |cache| {
                let Some(entry) = cache.get(key) else {
                    return Ok(MISS);
                };
                let needed = entry.frame.len() + 1;
                if needed > capacity {
                    return Ok(-(jint::try_from(needed).unwrap_or(jint::MAX)));
                }
                let mut framed = Vec::with_capacity(needed);
                put_entry(&mut framed, entry);
                write_into(env, &out, capacity, &framed)?;
                Ok(needed as jint)
            })
        })
    })
    .resolve::<ThrowJavaException>()
}

/// Removes `key`; returns the change, with the removed entry if there was one.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_delete<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
    key: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let framed = with_bytes(env, &key, "key", |key| {
            with_cache(handle, id, |cache| {
                let removed = cache.delete(key);
                Ok(change(cache.size_bytes(), |out| {
                    if let Some(entry) = &removed {
                        put_entry(out, entry);
                    }
                }))
            })
        })?;
        new_byte_array(env, &framed)
    })
    .resolve::<ThrowJavaException>()
}

/// Evicts the least recently used entry; returns the change with what it flushed (nothing
/// when the entry was clean), or null when the cache was empty.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_evict<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let framed = with_cache(handle, id, |cache| {
            Ok(cache
                .evict()
                .map(|entries| flushed(cache.size_bytes(), &entries)))
        })?;
        match framed {
            Some(framed) => Ok(new_byte_array(env, &framed)?),
            None => Ok(JByteArray::default()),
        }
    })
    .resolve::<ThrowJavaException>()
}

/// Marks every dirty entry clean and returns the change with them, in the order they were
/// last written.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_flush<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let framed = with_cache(handle, id, |cache| {
            let entries = cache.flush();
            Ok(flushed(cache.size_bytes(), &entries))
        })?;
        new_byte_array(env, &framed)
    })
    .resolve::<ThrowJavaException>()
}

/// The keys from `from` to `to` (null: open) as they are now, ascending or descending.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_keys<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
    from: JByteArray<'local>,
    to: JByteArray<'local>,
    to_inclusive: jboolean,
    descending: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let from = read_optional_bytes(env, &from)?;
        let to = read_optional_bytes(env, &to)?;
        let framed = with_cache(handle, id, |cache| {
            let keys =
                cache.keys_in_range(from.as_deref(), to.as_deref(), to_inclusive, descending);
            let mut out =
                Vec::with_capacity(4 + keys.iter().map(|key| key.len() + 4).sum::<usize>());
            out.extend_from_slice(&(keys.len() as i32).to_be_bytes());
            for key in &keys {
                out.extend_from_slice(&(key.len() as i32).to_be_bytes());
                out.extend_from_slice(key);
            }
            Ok(out)
        })?;
        new_byte_array(env, &framed)
    })
    .resolve::<ThrowJavaException>()
}

/// Drops every entry of the named cache, dirty or not.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_clear<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        with_cache(handle, id, |cache| {
            cache.clear();
            Ok(())
        })
    })
    .resolve::<ThrowJavaException>()
}

/// How many entries the named cache holds.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRecordCache_entryCount<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    id: jint,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        with_cache(handle, id, |cache| Ok(cache.len() as jlong))
    })
    .resolve::<ThrowJavaException>()
}
