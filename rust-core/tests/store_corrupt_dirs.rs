//! A store directory that is not an intact Sluice store must fail with `Error::Corrupt`
//! (so the engine wipes and restores it) — never a panic, never silently wrong data.

use std::fs::{self, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rocksdb::{ColumnFamilyDescriptor, Options, DB};
use sluice_core::store::rocks::{
    destroy_store_dir, RocksDbConfig, RocksDbResources, StoreTuning, WalMode,
};
use sluice_core::store::{
    CommitMetadata, Error, IsolationLevel, KeyValueStore, RocksDbKeyValueStore, TopicPartition,
};
use tempfile::TempDir;

fn resources() -> RocksDbResources {
    // WAL off: closing flushes, so the data is in SST files the tests can damage.
    RocksDbResources::new(&RocksDbConfig {
        wal: WalMode::Off,
        ..Default::default()
    })
}

fn open(path: &Path) -> sluice_core::store::Result<RocksDbKeyValueStore> {
    RocksDbKeyValueStore::open("store", path, &resources(), &StoreTuning::default())
}

fn assert_corrupt(result: sluice_core::store::Result<RocksDbKeyValueStore>) -> String {
    match result {
        Err(error @ Error::Corrupt { .. }) => error.to_string(),
        Err(other) => panic!("expected a corrupt-directory error, got {other:?}"),
        Ok(_) => panic!("expected a corrupt-directory error, the store opened"),
    }
}

/// A closed store with 5000 committed entries, flushed to SST files.
fn written_store(dir: &TempDir) -> PathBuf {
    let path = dir.path().join("store");
    let store = open(&path).unwrap();
    for i in 0..5000u32 {
        store
            .put(i.to_be_bytes().to_vec(), Some(vec![7; 64]))
            .unwrap();
    }
    store
        .commit(&CommitMetadata::with_offsets([(
            TopicPartition::new("changelog", 0),
            Some(5000),
        )]))
        .unwrap();
    store.close().unwrap();
    path
}

fn files_with_suffix(path: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

fn manifests(path: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("MANIFEST-")
        })
        .collect();
    files.sort();
    files
}

fn truncate_to_half(file: &Path) {
    let len = fs::metadata(file).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
}

#[test]
fn directory_of_unrelated_files_is_refused() {
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("notes.txt"), b"not a database").unwrap();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let message = assert_corrupt(open(dir.path()));
    assert!(message.contains("no RocksDB database"), "{message}");
    assert!(
        dir.path().join("notes.txt").exists(),
        "the directory is left untouched"
    );
}

#[test]
fn file_in_place_of_directory_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("store");
    fs::write(&path, b"x").unwrap();
    assert_corrupt(open(&path));
}

#[test]
fn rocksdb_without_offsets_column_family_is_refused() {
    let dir = TempDir::new().unwrap();
    {
        let mut options = Options::default();
        options.create_if_missing(true);
        let db = DB::open(&options, dir.path()).unwrap();
        db.put(b"k", b"v").unwrap();
    }
    let message = assert_corrupt(open(dir.path()));
    assert!(message.contains("column families"), "{message}");
}

#[test]
fn rocksdb_with_offsets_but_no_format_marker_is_refused() {
    let dir = TempDir::new().unwrap();
    {
        let mut options = Options::default();
        options.create_if_missing(true);
        options.create_missing_column_families(true);
        let families = ["default", "offsets"]
            .map(|name| ColumnFamilyDescriptor::new(name, Options::default()));
        let db = DB::open_cf_descriptors(&options, dir.path(), families).unwrap();
        let offsets = db.cf_handle("offsets").unwrap();
        db.put_cf(offsets, b"app-changelog-0", 5i64.to_be_bytes())
            .unwrap();
    }
    let message = assert_corrupt(open(dir.path()));
    assert!(message.contains("format marker"), "{message}");
}

#[test]
fn truncated_manifest_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = written_store(&dir);
    for manifest in manifests(&path) {
        truncate_to_half(&manifest);
    }
    assert_corrupt(open(&path));
}

#[test]
fn missing_current_target_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = written_store(&dir);
    for manifest in manifests(&path) {
        fs::remove_file(manifest).unwrap();
    }
    assert_corrupt(open(&path));
}

#[test]
fn truncated_table_file_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = written_store(&dir);
    let tables = files_with_suffix(&path, ".sst");
    assert!(
        !tables.is_empty(),
        "closing without a WAL flushes to table files"
    );
    for table in tables {
        truncate_to_half(&table);
    }
    assert_corrupt(open(&path));
}

#[test]
fn damaged_table_block_fails_reads_instead_of_returning_garbage() {
    let dir = TempDir::new().unwrap();
    let path = written_store(&dir);
    let data_table = files_with_suffix(&path, ".sst")
        .into_iter()
        .max_by_key(|table| fs::metadata(table).unwrap().len())
        .unwrap();
    let mut file = OpenOptions::new().write(true).open(&data_table).unwrap();
    // Data blocks come first in a table file; the footer, index and filter stay intact, so
    // the store opens and the damage shows on reads.
    file.seek(SeekFrom::Start(100)).unwrap();
    file.write_all(&[0xA5; 64]).unwrap();
    drop(file);
    let store = open(&path).unwrap();
    let scan: Result<Vec<_>, _> = store.all(IsolationLevel::ReadCommitted).unwrap().collect();
    let error = scan.expect_err("a damaged block must not be read as data");
    assert!(error.is_corrupt(), "{error:?}");
    let point = store.get(&0u32.to_be_bytes(), IsolationLevel::ReadCommitted);
    assert!(matches!(point, Err(Error::Corrupt { .. })), "{point:?}");
}

#[test]
fn destroyed_directory_is_recreated_empty() {
    let dir = TempDir::new().unwrap();
    let path = written_store(&dir);
    truncate_to_half(&manifests(&path)[0]);
    assert_corrupt(open(&path));
    destroy_store_dir(&path).unwrap();
    destroy_store_dir(&path).unwrap();
    let store = open(&path).unwrap();
    assert_eq!(store.all(IsolationLevel::ReadCommitted).unwrap().count(), 0);
    assert_eq!(
        store
            .committed_offset(&TopicPartition::new("changelog", 0))
            .unwrap(),
        None
    );
}

#[test]
fn store_open_elsewhere_is_an_io_error_not_corruption() {
    let dir = TempDir::new().unwrap();
    let first = open(dir.path()).unwrap();
    match open(dir.path()) {
        Err(Error::Io { .. }) => {}
        other => panic!("expected an I/O error for a locked store, got {other:?}"),
    }
    first.close().unwrap();
    open(dir.path()).unwrap();
}
