//! Mapping of Rust errors and panics to the exceptions a Kafka Streams user expects.

use std::any::Any;

use jni::errors::{Error as JniCallError, ErrorPolicy};
use jni::strings::JNIString;
use jni::{jni_str, Env};

/// The Java exception class a native failure is raised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JavaException {
    /// `org.apache.kafka.streams.errors.StreamsException`: failures with no more specific type.
    Streams,
}

/// A failure inside a native call, to be thrown as `exception` with `message`.
#[derive(Debug)]
pub(crate) struct NativeError {
    exception: JavaException,
    message: String,
    /// True when the JVM already has an exception pending (a failed JNI call threw one);
    /// that exception is the more precise one and is left to propagate.
    already_thrown: bool,
}

impl From<JniCallError> for NativeError {
    fn from(error: JniCallError) -> Self {
        let already_thrown = matches!(error, JniCallError::JavaException);
        NativeError {
            exception: JavaException::Streams,
            message: format!("JNI call failed: {error}"),
            already_thrown,
        }
    }
}

impl std::fmt::Display for NativeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for NativeError {}

/// Error policy of every Sluice entry point: errors become their mapped exception, panics a
/// `StreamsException` naming the panic, and the call returns the type's default value, which
/// Java never observes because the exception is pending.
pub(crate) struct ThrowJavaException;

impl<T: Default> ErrorPolicy<T, NativeError> for ThrowJavaException {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        error: NativeError,
    ) -> jni::errors::Result<T> {
        if !(error.already_thrown && env.exception_check()) {
            throw(env, error.exception, &error.message);
        }
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let message = format!("Sluice native code panicked: {}", panic_message(payload));
        throw(env, JavaException::Streams, &message);
        Ok(T::default())
    }
}

fn throw(env: &mut Env<'_>, exception: JavaException, message: &str) {
    let class = match exception {
        JavaException::Streams => jni_str!("org/apache/kafka/streams/errors/StreamsException"),
    };
    // If even throwing fails (class missing from the classpath), the JVM has a pending
    // NoClassDefFoundError by now, which still reaches the caller as an exception.
    let _ = env.throw_new(class, JNIString::from(message));
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(message) => (*message).to_string(),
            Err(_) => "(no message)".to_string(),
        },
    }
}
