//! Mapping of Rust errors and panics to the exceptions a Kafka Streams user expects.

use std::any::Any;

use jni::errors::{Error as JniCallError, ErrorPolicy};
use jni::strings::JNIString;
use jni::{jni_str, Env};

use crate::engine::error::panic_message;
use crate::store;

/// The Java exception class a native failure is raised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JavaException {
    /// `org.apache.kafka.streams.errors.StreamsException`: failures with no more specific type.
    Streams,
    /// `org.apache.kafka.streams.errors.ProcessorStateException`: the store could not read or
    /// write its state.
    ProcessorState,
    /// `dev.sluice.streams.state.internals.StoreDirectoryCorruptedException`, a
    /// `ProcessorStateException` that tells the caller to wipe the directory and restore.
    StoreDirectoryCorrupted,
    /// `org.apache.kafka.streams.errors.InvalidStateStoreException`: the store (or iterator)
    /// is closed.
    InvalidStateStore,
    /// `java.lang.NullPointerException`: a required argument was null.
    NullPointer,
    /// `java.lang.IllegalArgumentException`: an argument the store cannot accept.
    IllegalArgument,
    /// `java.lang.IllegalStateException`: a call the object's state does not allow.
    IllegalState,
    /// `org.apache.kafka.common.config.ConfigException`: a bad configuration value.
    Config,
    /// `org.apache.kafka.common.errors.TimeoutException`: not done within the time given.
    Timeout,
    /// `org.apache.kafka.streams.errors.MissingSourceTopicException`: a source topic is gone.
    MissingSourceTopic,
    /// `org.apache.kafka.streams.errors.TopologyException`: the topology cannot run against
    /// the topics as they are.
    Topology,
}

impl JavaException {
    fn class(self) -> &'static jni::strings::JNIStr {
        match self {
            JavaException::Streams => jni_str!("org/apache/kafka/streams/errors/StreamsException"),
            JavaException::ProcessorState => {
                jni_str!("org/apache/kafka/streams/errors/ProcessorStateException")
            }
            JavaException::StoreDirectoryCorrupted => {
                jni_str!("dev/sluice/streams/state/internals/StoreDirectoryCorruptedException")
            }
            JavaException::InvalidStateStore => {
                jni_str!("org/apache/kafka/streams/errors/InvalidStateStoreException")
            }
            JavaException::NullPointer => jni_str!("java/lang/NullPointerException"),
            JavaException::IllegalArgument => jni_str!("java/lang/IllegalArgumentException"),
            JavaException::IllegalState => jni_str!("java/lang/IllegalStateException"),
            JavaException::Config => jni_str!("org/apache/kafka/common/config/ConfigException"),
            JavaException::Timeout => jni_str!("org/apache/kafka/common/errors/TimeoutException"),
            JavaException::MissingSourceTopic => {
                jni_str!("org/apache/kafka/streams/errors/MissingSourceTopicException")
            }
            JavaException::Topology => {
                jni_str!("org/apache/kafka/streams/errors/TopologyException")
            }
        }
    }
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

impl NativeError {
    /// A failure to raise as `exception`.
    pub(crate) fn new(exception: JavaException, message: impl Into<String>) -> Self {
        NativeError {
            exception,
            message: message.into(),
            already_thrown: false,
        }
    }

    /// The same failure raised as another exception class (for entry points where a store
    /// error means something more specific, such as a configuration error).
    pub(crate) fn raised_as(mut self, exception: JavaException) -> Self {
        self.exception = exception;
        self
    }

    /// The exception this failure is raised as.
    #[cfg(test)]
    pub(crate) fn exception(&self) -> JavaException {
        self.exception
    }
}

impl From<JniCallError> for NativeError {
    fn from(error: JniCallError) -> Self {
        let already_thrown = matches!(error, JniCallError::JavaException);
        let exception = match error {
            JniCallError::NullPtr(_) => JavaException::NullPointer,
            _ => JavaException::Streams,
        };
        NativeError {
            exception,
            message: format!("JNI call failed: {error}"),
            already_thrown,
        }
    }
}

impl From<store::Error> for NativeError {
    fn from(error: store::Error) -> Self {
        let exception = match &error {
            store::Error::Closed { .. } => JavaException::InvalidStateStore,
            store::Error::Corrupt { .. } => JavaException::StoreDirectoryCorrupted,
            store::Error::Io { .. } => JavaException::ProcessorState,
            store::Error::InvalidArgument(_) => JavaException::IllegalArgument,
            store::Error::IncompatibleLayout { .. } => JavaException::ProcessorState,
        };
        NativeError::new(exception, error.to_string())
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
        // A panic may strike after a JNI call left an exception pending; the panic is the
        // failure to report, and throwing over a pending exception is not allowed.
        if env.exception_check() {
            env.exception_clear();
        }
        throw(env, JavaException::Streams, &message);
        Ok(T::default())
    }
}

fn throw(env: &mut Env<'_>, exception: JavaException, message: &str) {
    // If even throwing fails (class missing from the classpath), the JVM has a pending
    // NoClassDefFoundError by now, which still reaches the caller as an exception.
    let _ = env.throw_new(exception.class(), JNIString::from(message));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_map_to_the_kafka_streams_exceptions() {
        let closed = store::Error::Closed {
            store: "counts".into(),
        };
        assert_eq!(
            NativeError::from(closed).exception(),
            JavaException::InvalidStateStore
        );
        let corrupt = store::Error::Corrupt {
            path: "/x".into(),
            reason: "bad".into(),
        };
        assert_eq!(
            NativeError::from(corrupt).exception(),
            JavaException::StoreDirectoryCorrupted
        );
        let io = store::Error::Io {
            context: "writing".into(),
            source: "disk full".into(),
        };
        assert_eq!(
            NativeError::from(io).exception(),
            JavaException::ProcessorState
        );
        let invalid = store::Error::InvalidArgument("bad".into());
        assert_eq!(
            NativeError::from(invalid).exception(),
            JavaException::IllegalArgument
        );
    }
}
