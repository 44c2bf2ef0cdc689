//! `dev.sluice.streams.state.internals.NativeRocksDbResources`: the block cache and write
//! buffer manager shared by the RocksDB stores of one engine instance.

use std::collections::HashMap;
use std::sync::Arc;

use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};

use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::registry::ROCKSDB_RESOURCES;
use crate::store::rocks::{RocksDbConfig, RocksDbResources};

/// Allocates resources configured by the `sluice.rocksdb.*` entries of `keys_and_values`
/// (key, value, key, value …); a bad value raises `ConfigException` naming its key.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRocksDbResources_create<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    keys_and_values: JObjectArray<'local, JString<'local>>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let config: HashMap<String, String> =
            string_pairs(env, &keys_and_values)?.into_iter().collect();
        let config = RocksDbConfig::from_config(|key| config.get(key).cloned())
            .map_err(|e| NativeError::from(e).raised_as(JavaException::Config))?;
        Ok(ROCKSDB_RESOURCES.insert(Arc::new(RocksDbResources::new(&config))))
    })
    .resolve::<ThrowJavaException>()
}

/// The pairs of a `String[]` laid out as key, value, key, value …
pub(super) fn string_pairs(
    env: &mut Env<'_>,
    keys_and_values: &JObjectArray<'_, JString<'_>>,
) -> Result<Vec<(String, String)>, NativeError> {
    let length = keys_and_values.len(env)?;
    let mut pairs = Vec::with_capacity(length / 2);
    for pair in 0..length / 2 {
        let key = keys_and_values
            .get_element(env, 2 * pair)?
            .try_to_string(env)?;
        let value = keys_and_values
            .get_element(env, 2 * pair + 1)?
            .try_to_string(env)?;
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// Releases the handle; stores opened with it keep the memory until they close.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeRocksDbResources_close<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        ROCKSDB_RESOURCES.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJavaException>()
}
