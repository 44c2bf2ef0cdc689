//! `dev.sluice.streams.state.internals.NativeSessionStore`: [`SessionStore`]s behind `long`
//! handles, opened over a key-value store handle like the window stores (see
//! `window_store`). Scans frame each session as a windowed entry (see
//! [`framing`](super::framing)).

use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jlong};
use jni::EnvUnowned;

use super::arrays::{new_optional_byte_array, read_bytes, read_optional_bytes};
use super::errors::{NativeError, ThrowJavaException};
use super::framing::session_entry_key;
use super::layered_store::{layered, register_layered};
use super::reads::{isolation, order, register_scan};
use super::registry::STORES;
use crate::store::session::{SessionRecords, SessionStore, SessionStoreOptions};
use crate::store::KeyValueIterator;

fn framed(sessions: SessionRecords) -> KeyValueIterator {
    KeyValueIterator::new(
        sessions
            .map(|session| session.map(|s| (session_entry_key(s.key, s.start, s.end), s.value))),
    )
}

/// Opens a session store over the key-value store `kv_store`, which it then owns entirely.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    kv_store: jlong,
    retention_period: jlong,
    segment_interval: jlong,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let options = SessionStoreOptions {
            retention_period,
            segment_interval,
        };
        let store = SessionStore::open(STORES.get(kv_store)?, options)?;
        Ok(register_layered(store))
    })
    .resolve::<ThrowJavaException>()
}

/// Stages the session's aggregate; a null `value` deletes the session.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_put<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    start: jlong,
    end: jlong,
    value: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let store = layered::<SessionStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let value = read_optional_bytes(env, &value)?;
        Ok(store.put(&key, start, end, value)?)
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_remove<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    start: jlong,
    end: jlong,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let store = layered::<SessionStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        Ok(store.remove(&key, start, end)?)
    })
    .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_fetchSession<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    start: jlong,
    end: jlong,
    read_committed: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let store = layered::<SessionStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let value = store.fetch_session(&key, start, end, isolation(read_committed))?;
        new_optional_byte_array(env, value.as_deref())
    })
    .resolve::<ThrowJavaException>()
}

/// Scans the sessions of keys in `[key_from, key_to]` (null = open end) that end at or
/// after `earliest_end` and start at or before `latest_start`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_findSessions<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key_from: JByteArray<'local>,
    key_to: JByteArray<'local>,
    earliest_end: jlong,
    latest_start: jlong,
    reverse: jboolean,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = layered::<SessionStore>(handle)?;
        let key_from = read_optional_bytes(env, &key_from)?;
        let key_to = read_optional_bytes(env, &key_to)?;
        let sessions = store.find_sessions_in_range(
            key_from.as_deref(),
            key_to.as_deref(),
            earliest_end,
            latest_start,
            order(reverse),
            isolation(read_committed),
        )?;
        Ok(register_scan(framed(sessions)))
    })
    .resolve::<ThrowJavaException>()
}

/// Scans the sessions of one key, like `findSessions` over `[key, key]` but with the
/// single-key scan bounds.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_findKeySessions<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    earliest_end: jlong,
    latest_start: jlong,
    reverse: jboolean,
    read_committed: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let store = layered::<SessionStore>(handle)?;
        let key = read_bytes(env, &key, "key")?;
        let sessions = store.find_sessions(
            &key,
            earliest_end,
            latest_start,
            order(reverse),
            isolation(read_committed),
        )?;
        Ok(register_scan(framed(sessions)))
    })
    .resolve::<ThrowJavaException>()
}
