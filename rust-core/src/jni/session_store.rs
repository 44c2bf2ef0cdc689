//! `dev.sluice.streams.state.internals.NativeSessionStore`: [`SessionStore`]s behind `long`
//! handles, in either key layout, opened over a key-value store handle like the window
//! stores (see `window_store`). Scans frame each session as a windowed entry (see
//! [`framing`](super::framing)).

use std::sync::Arc;

use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jlong};
use jni::EnvUnowned;

use super::arrays::{new_optional_byte_array, read_bytes, read_optional_bytes};
use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::framing::session_entry_key;
use super::layered_store::{layered, register_layered};
use super::reads::{isolation, order, register_scan};
use super::registry::{LAYERED_STORES, STORES};
use crate::store::key_ordered_session::KeyOrderedSessionStore;
use crate::store::session::{SessionRecords, SessionStore, SessionStoreOptions};
use crate::store::time_ordered_session::TimeOrderedSessionStore;
use crate::store::{IsolationLevel, KeyValueIterator};

/// The session store behind `handle`, in either layout; `InvalidStateStoreException` once it
/// was released or when the handle is another kind's.
fn session_store(handle: jlong) -> Result<Arc<dyn SessionStore>, NativeError> {
    LAYERED_STORES.get(handle)?.session().ok_or_else(|| {
        NativeError::new(
            JavaException::InvalidStateStore,
            format!("handle {handle} is not a session store"),
        )
    })
}

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
        let store = KeyOrderedSessionStore::open(STORES.get(kv_store)?, options)?;
        Ok(register_layered(store))
    })
    .resolve::<ThrowJavaException>()
}

/// Opens a time-ordered session store (Kafka Streams' store for emit-final session
/// aggregations) over `kv_store`, keeping a key-first index when `with_index` is set.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_openTimeOrdered<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    kv_store: jlong,
    retention_period: jlong,
    segment_interval: jlong,
    with_index: jboolean,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let options = SessionStoreOptions {
            retention_period,
            segment_interval,
        };
        let store = TimeOrderedSessionStore::open(STORES.get(kv_store)?, options, with_index)?;
        Ok(register_layered(store))
    })
    .resolve::<ThrowJavaException>()
}

/// Kafka Streams' `findSessions(earliestSessionEndTime, latestSessionEndTime)`: every key's
/// sessions ending in that range, by end time; only time-ordered stores serve it. Only the
/// stream thread calls it, so it reads its own staged writes.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeSessionStore_findSessionsEndingIn<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    earliest_end: jlong,
    latest_end: jlong,
) -> jlong {
    env.with_env(|_env| -> Result<jlong, NativeError> {
        let store = layered::<TimeOrderedSessionStore>(handle)?;
        let sessions = store.find_sessions_ending_in(
            earliest_end,
            latest_end,
            IsolationLevel::ReadUncommitted,
        )?;
        Ok(register_scan(framed(sessions)))
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
        let store = session_store(handle)?;
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
        let store = session_store(handle)?;
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
        let store = session_store(handle)?;
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
        let store = session_store(handle)?;
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
        let store = session_store(handle)?;
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
