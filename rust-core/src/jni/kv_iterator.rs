//! `dev.sluice.streams.state.internals.NativeKeyValueIterator`: scans read in chunks.

use jni::objects::{JByteArray, JClass};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;

use super::arrays::{length_of, write_into};
use super::chunks::Chunk;
use super::errors::{NativeError, ThrowJavaException};
use super::registry::SCANS;

/// Fills `buffer` from its start with the next entries of the scan, framed as in
/// [`super::framing`], and returns how many it wrote; 0 when the scan is exhausted, and
/// `-n` when the next entry alone needs a buffer of `n` bytes (nothing is lost: the entry
/// comes with the next call).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueIterator_nextChunk<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    buffer: JByteArray<'local>,
) -> jint {
    env.with_env(|env| -> Result<jint, NativeError> {
        let scan = SCANS.get(handle)?;
        let capacity = length_of(env, &buffer, "buffer")?;
        let mut scan = scan.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match scan.next_chunk(capacity)? {
            Chunk::Entries { count, bytes } => {
                write_into(env, &buffer, capacity, bytes)?;
                Ok(count as jint)
            }
            Chunk::NeedsCapacity(needed) => Ok(-(jint::try_from(needed).unwrap_or(jint::MAX))),
            Chunk::Exhausted => Ok(0),
        }
    })
    .resolve::<ThrowJavaException>()
}

/// Releases the scan; a second close does nothing.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_state_internals_NativeKeyValueIterator_close<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        SCANS.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJavaException>()
}
