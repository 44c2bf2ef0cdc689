//! Telling a usable store directory from one that must be wiped, before and while opening.
//!
//! RocksDB on its own would happily create a fresh database in a directory full of
//! unrelated files, or open a database some other program wrote. A store directory is
//! accepted only when it is empty (a new store) or holds a RocksDB database with exactly
//! the column families this layout uses; the format marker is checked after opening.

use std::collections::BTreeSet;
use std::io::ErrorKind as IoErrorKind;
use std::path::Path;

use rocksdb::{Options, DB};

use crate::store::error::{Error, Result};
use crate::store::rocks::layout::{DATA_CF, OFFSETS_CF};

/// What a store directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirectoryState {
    /// Absent or empty: a new store is created there.
    Fresh,
    /// A RocksDB database with the expected column families.
    Existing,
}

/// Inspects `path` without modifying it.
pub(crate) fn inspect(path: &Path) -> Result<DirectoryState> {
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == IoErrorKind::NotFound => return Ok(DirectoryState::Fresh),
        Err(e) if e.kind() == IoErrorKind::NotADirectory => {
            return Err(corrupt(
                path,
                "the store path is a file, not a directory".into(),
            ));
        }
        Err(e) => return Err(io_error(path, "reading the store directory", e)),
    };
    let mut has_files = false;
    let mut has_current = false;
    for entry in entries {
        let entry = entry.map_err(|e| io_error(path, "reading the store directory", e))?;
        has_files = true;
        has_current |= entry.file_name() == "CURRENT";
    }
    if !has_files {
        return Ok(DirectoryState::Fresh);
    }
    if !has_current {
        return Err(corrupt(
            path,
            "the directory holds files but no RocksDB database".into(),
        ));
    }
    let families = DB::list_cf(&Options::default(), path)
        .map_err(|e| open_error(path, "listing column families", e))?;
    let found: BTreeSet<&str> = families.iter().map(String::as_str).collect();
    let expected = BTreeSet::from([DATA_CF, OFFSETS_CF]);
    if found != expected {
        return Err(corrupt(
            path,
            format!("column families {found:?}, expected {expected:?}: not written by Sluice"),
        ));
    }
    Ok(DirectoryState::Existing)
}

/// Creates a fresh store's directory and any missing parents (RocksDB creates only the
/// last component).
pub(crate) fn create(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|e| io_error(path, "creating the store directory", e))
}

/// Classifies a failure to open an existing database. Corruption, and files the database
/// refers to but which are missing, mean the directory is broken; anything else (a lock
/// held by another handle, permissions, a full disk) is an I/O error that wiping would not
/// fix.
pub(crate) fn open_error(path: &Path, context: &str, e: rocksdb::Error) -> Error {
    let message = e.to_string();
    let missing_file = e.kind() == rocksdb::ErrorKind::IOError
        && message.contains("No such file or directory")
        && !message.contains("LOCK");
    if missing_file {
        corrupt(path, format!("{context}: {message}"))
    } else {
        Error::from_rocksdb(path, context, e)
    }
}

/// Deletes a store directory and everything in it, whatever state it is in, so the store
/// can be recreated and restored from its changelog. The store must be closed. A missing
/// directory is not an error.
pub fn destroy_store_dir(path: &Path) -> Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == IoErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(path, "deleting the store directory", e)),
    }
}

fn corrupt(path: &Path, reason: String) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        reason,
    }
}

fn io_error(path: &Path, context: &str, e: std::io::Error) -> Error {
    Error::Io {
        context: format!("{context} ({})", path.display()),
        source: Box::new(e),
    }
}
