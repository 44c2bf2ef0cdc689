//! The handle tables of this process, and `dev.sluice.streams.state.internals.NativeHandles`,
//! which reports how many objects are live so tests can prove that closing releases them.

use std::sync::{Arc, Mutex};

use jni::objects::JClass;
use jni::sys::jlong;
use jni::EnvUnowned;
use once_cell::sync::Lazy;

use super::chunks::ChunkedScan;
use super::errors::{NativeError, ThrowJavaException};
use super::handles::HandleTable;
use super::layered_store::LayeredStore;
use crate::store::record_cache::RecordCache;
use crate::store::rocks::RocksDbResources;
use crate::store::KeyValueStore;

/// Open key-value stores.
pub(crate) static STORES: Lazy<HandleTable<dyn KeyValueStore>> =
    Lazy::new(|| HandleTable::new("state store"));

/// Window, session and versioned stores, each over a key-value store of [`STORES`] that its
/// Java owner closes.
pub(crate) static LAYERED_STORES: Lazy<HandleTable<dyn LayeredStore>> =
    Lazy::new(|| HandleTable::new("layered state store"));

/// Open scans. A scan is read by one Java iterator at a time; the mutex only guards against
/// a misbehaving caller sharing it.
pub(crate) static SCANS: Lazy<HandleTable<Mutex<ChunkedScan>>> =
    Lazy::new(|| HandleTable::new("state store iterator"));

/// Shared RocksDB memory of engine instances.
pub(crate) static ROCKSDB_RESOURCES: Lazy<HandleTable<RocksDbResources>> =
    Lazy::new(|| HandleTable::new("RocksDB resources"));

/// Record caches of stream threads, each used by its thread and by the queries that read
/// through its caching stores.
pub(crate) static RECORD_CACHES: Lazy<HandleTable<Mutex<RecordCache>>> =
    Lazy::new(|| HandleTable::new("record cache"));

/// Registers `store`, returning its handle.
pub(crate) fn register_store(store: Arc<dyn KeyValueStore>) -> jlong {
    STORES.insert(store)
}

fn count(env: EnvUnowned<'_>, live: fn() -> usize) -> jlong {
    let mut env = env;
    env.with_env(|_env| -> Result<jlong, NativeError> { Ok(live() as jlong) })
        .resolve::<ThrowJavaException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeHandles_liveStores<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    count(env, || STORES.len() + LAYERED_STORES.len())
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeHandles_liveIterators<
    'local,
>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    count(env, || SCANS.len())
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeHandles_liveRocksDbResources<
    'local,
>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    count(env, || ROCKSDB_RESOURCES.len())
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeHandles_liveRecordCaches<
    'local,
>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    count(env, || RECORD_CACHES.len())
}
