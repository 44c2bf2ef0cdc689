//! `byte[]` in and out through the raw JNI functions.
//!
//! The `jni` crate's conversions check for pending exceptions before and after every call
//! and route failures through exception-catching helpers; on a 16-byte array that doubles
//! or triples the cost of a crossing. Here each direction is exactly the JNI calls it needs
//! (`GetArrayLength` + `GetByteArrayRegion`, or `NewByteArray` + `SetByteArrayRegion`), which
//! is safe because none of them can throw for the arguments passed: the region is always the
//! whole array, whose length cannot change.
//!
//! Batches of produced records come back from Java in `byte[]` chunks the task runner reuses,
//! so that the seam leaves no garbage per batch; the first four bytes say how much of them
//! the batch fills, and only that is copied.
//!
//! The few `String[]` that cross (names, never per record) go through the `jni` crate.

use jni::objects::{JByteArray, JObjectArray, JString};
use jni::sys::{jbyte, jbyteArray, jsize};
use jni::Env;

use super::errors::{JavaException, NativeError};

/// The contents of `array`; `NullPointerException` when it is null, naming `what`.
pub(crate) fn read_bytes(
    env: &Env<'_>,
    array: &JByteArray<'_>,
    what: &str,
) -> Result<Vec<u8>, NativeError> {
    let length = length_of(env, array, what)?;
    let mut bytes = vec![0u8; length];
    copy_region(env, array, 0, &mut bytes);
    Ok(bytes)
}

/// A batch the caller framed across `chunks`, arrays it reuses: the first four bytes of the
/// first (a big-endian `int`) give how many bytes after them the batch takes, continuing into
/// the next arrays in turn. `IllegalArgumentException` when they hold fewer than that,
/// `NullPointerException` when it or a chunk the batch needs is null, naming `what`.
pub(crate) fn read_chunked(
    env: &mut Env<'_>,
    chunks: &JObjectArray<'_, JByteArray<'_>>,
    what: &str,
) -> Result<Vec<u8>, NativeError> {
    const PREFIX: usize = std::mem::size_of::<i32>();
    let too_short = |said: i64| {
        NativeError::new(
            JavaException::IllegalArgument,
            format!("{what} hold fewer bytes than the {said} they say they hold"),
        )
    };
    let count = chunks.len(env)?;
    let mut bytes = Vec::new();
    let mut said = PREFIX;
    for index in 0..count {
        if index > 0 && bytes.len() == said {
            break;
        }
        let chunk = chunks.get_element(env, index)?;
        let capacity = length_of(env, &chunk, what)?;
        let start = if index == 0 {
            if capacity < PREFIX {
                return Err(too_short(PREFIX as i64));
            }
            let mut prefix = [0u8; PREFIX];
            copy_region(env, &chunk, 0, &mut prefix);
            let length = i32::from_be_bytes(prefix);
            said = usize::try_from(length).map_err(|_| too_short(i64::from(length)))?;
            bytes.reserve_exact(said);
            PREFIX
        } else {
            0
        };
        let filled = bytes.len();
        let taken = (said - filled).min(capacity - start);
        bytes.resize(filled + taken, 0);
        copy_region(env, &chunk, start, &mut bytes[filled..]);
        env.delete_local_ref(chunk);
    }
    if count == 0 || bytes.len() < said {
        return Err(too_short(said as i64));
    }
    Ok(bytes)
}

/// The first `length` bytes of `array`, a buffer the caller reuses and framed into;
/// `IllegalArgumentException` when it is shorter, `NullPointerException` when null.
pub(crate) fn read_prefix(
    env: &Env<'_>,
    array: &JByteArray<'_>,
    length: usize,
    what: &str,
) -> Result<Vec<u8>, NativeError> {
    let capacity = length_of(env, array, what)?;
    if length > capacity {
        return Err(NativeError::new(
            JavaException::IllegalArgument,
            format!("{what} holds {capacity} bytes, not {length}"),
        ));
    }
    let mut bytes = vec![0u8; length];
    copy_region(env, array, 0, &mut bytes);
    Ok(bytes)
}

/// Keys up to this many bytes are read onto the stack, sparing a heap allocation per call.
const STACK_BYTES: usize = 256;

/// Runs `f` on the contents of `array` (keys, in practice), read onto the stack when they
/// are short; `NullPointerException` when it is null, naming `what`.
pub(crate) fn with_bytes<R>(
    env: &Env<'_>,
    array: &JByteArray<'_>,
    what: &str,
    f: impl FnOnce(&[u8]) -> Result<R, NativeError>,
) -> Result<R, NativeError> {
    let length = length_of(env, array, what)?;
    if length > STACK_BYTES {
        return f(&read_bytes(env, array, what)?);
    }
    let mut bytes = [0u8; STACK_BYTES];
    copy_region(env, array, 0, &mut bytes[..length]);
    f(&bytes[..length])
}

/// The contents of `array`, or `None` when it is null (a deletion, an open range end).
pub(crate) fn read_optional_bytes(
    env: &Env<'_>,
    array: &JByteArray<'_>,
) -> Result<Option<Vec<u8>>, NativeError> {
    if array.as_raw().is_null() {
        Ok(None)
    } else {
        read_bytes(env, array, "array").map(Some)
    }
}

/// A new `byte[]` holding `bytes`.
pub(crate) fn new_byte_array<'local>(
    env: &Env<'local>,
    bytes: &[u8],
) -> Result<JByteArray<'local>, NativeError> {
    let length = jsize::try_from(bytes.len()).map_err(|_| {
        NativeError::new(
            JavaException::ProcessorState,
            format!(
                "a value of {} bytes does not fit in a Java array",
                bytes.len()
            ),
        )
    })?;
    let env_ptr = env.get_raw();
    // SAFETY: `env_ptr` is the live JNIEnv of this thread. NewByteArray returns null only
    // with an OutOfMemoryError pending, which is left to propagate; the region written is
    // the new array's whole length.
    unsafe {
        let functions = &**env_ptr;
        let array = (functions.v1_1.NewByteArray)(env_ptr, length);
        if array.is_null() {
            return Err(jni::errors::Error::JavaException.into());
        }
        (functions.v1_1.SetByteArrayRegion)(
            env_ptr,
            array,
            0,
            length,
            bytes.as_ptr() as *const jbyte,
        );
        Ok(JByteArray::from_raw(env, array))
    }
}

/// A new `String[]` holding `texts` in their order.
pub(crate) fn new_string_array<'local>(
    env: &mut Env<'local>,
    texts: impl ExactSizeIterator<Item = String>,
) -> Result<JObjectArray<'local, JString<'local>>, NativeError> {
    let array = JObjectArray::<JString>::new(env, texts.len(), JString::null())?;
    for (i, text) in texts.enumerate() {
        let text = env.new_string(text)?;
        array.set_element(env, i, &text)?;
    }
    Ok(array)
}

/// A new `byte[]` holding `bytes`, or null for `None` (a missing value).
pub(crate) fn new_optional_byte_array<'local>(
    env: &Env<'local>,
    bytes: Option<&[u8]>,
) -> Result<JByteArray<'local>, NativeError> {
    match bytes {
        Some(bytes) => new_byte_array(env, bytes),
        None => Ok(JByteArray::default()),
    }
}

/// Copies `bytes` into the start of `array`, which the caller sized to hold them.
pub(crate) fn write_into(
    env: &Env<'_>,
    array: &JByteArray<'_>,
    array_length: usize,
    bytes: &[u8],
) -> Result<(), NativeError> {
    if bytes.len() > array_length {
        return Err(NativeError::new(
            JavaException::IllegalArgument,
            format!(
                "{} bytes do not fit in an array of {array_length}",
                bytes.len()
            ),
        ));
    }
    let env_ptr = env.get_raw();
    // SAFETY: `env_ptr` is the live JNIEnv of this thread, `array` a live byte[] of
    // `array_length` elements, and the region written lies inside it.
    unsafe {
        let functions = &**env_ptr;
        (functions.v1_1.SetByteArrayRegion)(
            env_ptr,
            array.as_raw() as jbyteArray,
            0,
            bytes.len() as jsize,
            bytes.as_ptr() as *const jbyte,
        );
    }
    Ok(())
}

/// The length of `array`; `NullPointerException` when it is null, naming `what`.
pub(crate) fn length_of(
    env: &Env<'_>,
    array: &JByteArray<'_>,
    what: &str,
) -> Result<usize, NativeError> {
    let raw = array.as_raw() as jbyteArray;
    if raw.is_null() {
        return Err(NativeError::new(
            JavaException::NullPointer,
            format!("{what} cannot be null"),
        ));
    }
    let env_ptr = env.get_raw();
    // SAFETY: `env_ptr` is the live JNIEnv of this thread and `raw` a live byte[].
    let length = unsafe { ((**env_ptr).v1_1.GetArrayLength)(env_ptr, raw) };
    Ok(length as usize)
}

/// Copies the `out.len()` bytes of `array` from `start` into `out`. Only for an array that
/// [`length_of`] found non-null and at least `start + out.len()` long: the region then lies
/// inside it, so the call cannot throw.
fn copy_region(env: &Env<'_>, array: &JByteArray<'_>, start: usize, out: &mut [u8]) {
    let env_ptr = env.get_raw();
    // SAFETY: `env_ptr` is the live JNIEnv of this thread and `array` a live, non-null
    // byte[] holding at least `start + out.len()` elements, of which GetByteArrayRegion
    // writes those from `start` into `out`.
    unsafe {
        ((**env_ptr).v1_1.GetByteArrayRegion)(
            env_ptr,
            array.as_raw() as jbyteArray,
            start as jsize,
            out.len() as jsize,
            out.as_mut_ptr() as *mut jbyte,
        );
    }
}
