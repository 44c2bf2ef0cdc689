//! The engine's error type.

use std::any::Any;
use std::fmt;
use std::thread::JoinHandle;

use crate::kafka::{KafkaFailure, TransactionFailure};

/// Result of engine operations.
pub type Result<T> = std::result::Result<T, Error>;

/// Why the engine, or one of its threads, stopped.
#[derive(Debug)]
pub enum Error {
    /// A configuration value is missing or invalid (Kafka Streams' `ConfigException`).
    Config {
        /// The offending key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The topology cannot run against the topics as they are: a missing source topic,
    /// partition counts that break co-partitioning, an unsupported feature.
    Topology(String),
    /// Source topics of the topology are gone (deleted while the application runs): Kafka
    /// Streams' `MissingSourceTopicException`, which every member of the group gets.
    MissingSourceTopics(Vec<String>),
    /// A Kafka client failed beyond its retries.
    Kafka(KafkaFailure),
    /// The producer failed in a way the engine does not recover from.
    Producer(TransactionFailure),
    /// A task processor failed to process records.
    Processor {
        /// The task.
        task: String,
        /// The processor's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The processor keeping the global stores failed.
    GlobalProcessor(Box<dyn std::error::Error + Send + Sync>),
    /// The processor factory failed to take note of a thread's assignment changing.
    Assignment(Box<dyn std::error::Error + Send + Sync>),
    /// The processor factory failed to take a thread's loop timings.
    LoopTimings(Box<dyn std::error::Error + Send + Sync>),
    /// The state directory could not be used.
    StateDirectory(std::io::Error),
    /// The operating system could not start an engine thread.
    ThreadSpawn(std::io::Error),
    /// An engine thread panicked: a bug, in the engine or in a processor.
    ThreadPanicked {
        /// The thread's name.
        thread: String,
        /// What it panicked with.
        message: String,
    },
    /// Something did not finish within the time it was given (Kafka's `TimeoutException`).
    Timeout(String),
}

impl Error {
    /// True when a task processor reports the state it keeps corrupt
    /// ([`KeptStateCorrupted`](crate::engine::KeptStateCorrupted)), Kafka Streams'
    /// `TaskCorruptedException`: the state is wiped and restored, and the thread goes on.
    pub(crate) fn kept_state_corrupted(&self) -> bool {
        matches!(self, Error::Processor { source, .. }
            if source.is::<crate::engine::processor::KeptStateCorrupted>())
    }
}

impl From<KafkaFailure> for Error {
    fn from(failure: KafkaFailure) -> Self {
        Error::Kafka(failure)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config { key, reason } => write!(f, "invalid value for {key}: {reason}"),
            Error::Topology(message) => write!(f, "topology cannot run: {message}"),
            Error::MissingSourceTopics(topics) => {
                write!(f, "source topics {topics:?} are missing")
            }
            Error::Kafka(failure) => write!(f, "{failure}"),
            Error::Producer(failure) => write!(f, "{failure}"),
            Error::Processor { task, source } => write!(f, "task {task} failed: {source}"),
            Error::GlobalProcessor(source) => write!(f, "global processor failed: {source}"),
            Error::Assignment(source) => write!(f, "reporting the thread's assignment: {source}"),
            Error::LoopTimings(source) => {
                write!(f, "reporting the thread's loop timings: {source}")
            }
            Error::StateDirectory(e) => write!(f, "state directory: {e}"),
            Error::ThreadSpawn(e) => write!(f, "starting an engine thread: {e}"),
            Error::ThreadPanicked { thread, message } => write!(f, "{thread} panicked: {message}"),
            Error::Timeout(message) => write!(f, "timed out: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Kafka(failure) => Some(failure),
            Error::Processor { source, .. } => Some(source.as_ref()),
            Error::GlobalProcessor(source)
            | Error::Assignment(source)
            | Error::LoopTimings(source) => Some(source.as_ref()),
            Error::StateDirectory(e) | Error::ThreadSpawn(e) => Some(e),
            _ => None,
        }
    }
}

/// What `handle`'s thread returned; a panic becomes [`Error::ThreadPanicked`].
pub(crate) fn joined(handle: JoinHandle<Result<()>>) -> Result<()> {
    let thread = handle
        .thread()
        .name()
        .unwrap_or("an engine thread")
        .to_string();
    handle.join().unwrap_or_else(|payload| {
        let message = panic_message(payload);
        Err(Error::ThreadPanicked { thread, message })
    })
}

/// The message a panic was raised with.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(message) => (*message).to_string(),
            Err(_) => "(no message)".to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_panics_is_joined_as_a_panic_naming_it() {
        let handle = std::thread::Builder::new()
            .name("app-StreamThread-1".into())
            .spawn(|| -> Result<()> { panic!("processor bug {}", 7) })
            .unwrap();
        match joined(handle) {
            Err(Error::ThreadPanicked { thread, message }) => {
                assert_eq!(thread, "app-StreamThread-1");
                assert_eq!(message, "processor bug 7");
            }
            other => panic!("joined as {other:?}"),
        }
    }

    #[test]
    fn a_thread_that_returns_is_joined_as_what_it_returned() {
        let handle = std::thread::spawn(|| Err(Error::Timeout("late".into())));
        assert!(matches!(joined(handle), Err(Error::Timeout(m)) if m == "late"));
        assert!(joined(std::thread::spawn(|| Ok(()))).is_ok());
    }
}
