//! `dev.sluice.streams.internals.NativeChecks`: the entry points the native library loader
//! uses to verify what it loaded, and the probe that proves panics stay inside Rust.

use jni::objects::{JClass, JString};
use jni::EnvUnowned;

use super::errors::{NativeError, ThrowJavaException};

/// The crate version; the loader compares it with the version the jar was built with, so a
/// stale library from an override path or cache is refused instead of misbehaving later.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_internals_NativeChecks_version<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, NativeError> {
        Ok(JString::from_str(env, env!("CARGO_PKG_VERSION"))?)
    })
    .resolve::<ThrowJavaException>()
}

/// Panics with `message`: the caller must see a `StreamsException` and the JVM live on.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_internals_NativeChecks_panicWith<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    message: JString<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let message = message.try_to_string(env)?;
        panic!("{message}");
    })
    .resolve::<ThrowJavaException>()
}
