//! The one error type of the store layer.
//!
//! Each variant corresponds to one exception a Kafka Streams user would see, so a caller
//! can translate errors without inspecting messages:
//!
//! | variant              | Kafka Streams exception                                   |
//! |----------------------|-----------------------------------------------------------|
//! | [`Error::Closed`]    | `InvalidStateStoreException`                              |
//! | [`Error::Corrupt`]   | `ProcessorStateException` / `TaskCorruptedException`: the store directory must be wiped and restored from the changelog |
//! | [`Error::Io`]        | `ProcessorStateException`                                 |
//! | [`Error::InvalidArgument`] | `IllegalArgumentException` / `ConfigException`      |
//! | [`Error::IncompatibleLayout`] | `ProcessorStateException`: the store's values cannot be read in the layout asked for |

use std::fmt;
use std::path::PathBuf;

/// Result of every fallible store operation.
pub type Result<T> = std::result::Result<T, Error>;

/// Why a store operation failed.
#[derive(Debug)]
pub enum Error {
    /// The store was closed; reads and writes are refused.
    Closed {
        /// Name of the store.
        store: String,
    },
    /// The store directory is not a usable Sluice store: written by something else,
    /// truncated, or corrupt. Its contents cannot be trusted; wipe it
    /// (see [`crate::store::rocks::destroy_store_dir`]) and restore from the changelog.
    Corrupt {
        /// Directory of the store.
        path: PathBuf,
        /// What was found wrong, for the operator.
        reason: String,
    },
    /// RocksDB or the file system failed for a reason other than corruption (I/O, lock
    /// held by another handle, disk full …).
    Io {
        /// What the store was doing, and on which directory.
        context: String,
        /// The underlying RocksDB status or file-system error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A caller passed a value the store cannot accept (bad configuration value,
    /// malformed topic name …).
    InvalidArgument(String),
    /// The store holds values in a layout the one it was opened with cannot read (see
    /// [`crate::store::value_layout`]).
    IncompatibleLayout {
        /// Name of the store.
        store: String,
        /// What it holds and what was asked, for the operator.
        reason: String,
    },
}

impl Error {
    /// Classifies a RocksDB status: corruption means the directory must be rebuilt,
    /// anything else is an I/O failure that may be transient.
    pub(crate) fn from_rocksdb(path: &std::path::Path, context: &str, e: ::rocksdb::Error) -> Self {
        if e.kind() == ::rocksdb::ErrorKind::Corruption {
            Error::Corrupt {
                path: path.to_path_buf(),
                reason: format!("{context}: {e}"),
            }
        } else {
            Error::Io {
                context: format!("{context} ({})", path.display()),
                source: Box::new(e),
            }
        }
    }

    /// True when the store's directory must be wiped and restored.
    pub fn is_corrupt(&self) -> bool {
        matches!(self, Error::Corrupt { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Closed { store } => write!(f, "state store {store} is closed"),
            Error::Corrupt { path, reason } => write!(
                f,
                "state store directory {} is corrupt or not a Sluice store: {reason}",
                path.display()
            ),
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::InvalidArgument(message) => write!(f, "invalid argument: {message}"),
            Error::IncompatibleLayout { store, reason } => {
                write!(f, "state store {store}: {reason}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
