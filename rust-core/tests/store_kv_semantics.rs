//! Key-value store semantics, checked on both backends: Kafka Streams' operations, the
//! overlay, store-managed offsets, isolation and closing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use sluice_core::store::rocks::{RocksDbConfig, RocksDbResources, StoreTuning, WalMode};
use sluice_core::store::{
    CommitMetadata, Error, InMemoryKeyValueStore, IsolationLevel, KeyBounds, KeyValueIterator,
    KeyValueStore, Order, ReadView, RocksDbKeyValueStore, TopicPartition,
};
use tempfile::TempDir;

const UNCOMMITTED: IsolationLevel = IsolationLevel::ReadUncommitted;
const COMMITTED: IsolationLevel = IsolationLevel::ReadCommitted;

/// Runs `test` once per backend; the RocksDB store lives in a fresh temporary directory.
fn each_backend(test: impl Fn(Arc<dyn KeyValueStore>)) {
    test(Arc::new(InMemoryKeyValueStore::new("memory")));
    let dir = TempDir::new().unwrap();
    let resources = RocksDbResources::new(&RocksDbConfig::default());
    test(Arc::new(
        RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &StoreTuning::default())
            .unwrap(),
    ));
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn put(store: &dyn KeyValueStore, key: &str, value: &str) {
    store.put(b(key), Some(b(value))).unwrap();
}

fn get(store: &dyn KeyValueStore, key: &str, isolation: IsolationLevel) -> Option<String> {
    store
        .get(key.as_bytes(), isolation)
        .unwrap()
        .map(|v| String::from_utf8(v).unwrap())
}

fn keys(iter: KeyValueIterator) -> Vec<String> {
    iter.map(|entry| String::from_utf8(entry.unwrap().0).unwrap())
        .collect()
}

fn tp(partition: i32) -> TopicPartition {
    TopicPartition::new("app-store-changelog", partition)
}

fn commit_at(store: &dyn KeyValueStore, offset: i64) {
    store
        .commit(&CommitMetadata::with_offsets([(tp(0), Some(offset))]))
        .unwrap();
}

#[test]
fn point_operations_follow_kafka_streams() {
    each_backend(|store| {
        let store = store.as_ref();
        assert_eq!(get(store, "a", UNCOMMITTED), None);
        put(store, "a", "1");
        assert_eq!(get(store, "a", UNCOMMITTED).as_deref(), Some("1"));
        assert_eq!(
            store.put_if_absent(b("a"), Some(b("2"))).unwrap(),
            Some(b("1"))
        );
        assert_eq!(store.put_if_absent(b("b"), Some(b("2"))).unwrap(), None);
        assert_eq!(get(store, "b", UNCOMMITTED).as_deref(), Some("2"));
        assert_eq!(store.delete(b"a").unwrap(), Some(b("1")));
        assert_eq!(store.delete(b"a").unwrap(), None);
        store.put(b("b"), None).unwrap();
        assert_eq!(get(store, "b", UNCOMMITTED), None);
        store
            .put_all(vec![
                (b("c"), Some(b("3"))),
                (b("d"), Some(b("4"))),
                (b("c"), None),
            ])
            .unwrap();
        assert_eq!(get(store, "c", UNCOMMITTED), None);
        assert_eq!(get(store, "d", UNCOMMITTED).as_deref(), Some("4"));

        commit_at(store, 1);
        assert_eq!(
            store.delete(b"d").unwrap(),
            Some(b("4")),
            "delete returns the committed value"
        );
        assert_eq!(
            store.put_if_absent(b("d"), Some(b("5"))).unwrap(),
            None,
            "a staged delete makes the key absent"
        );
    });
}

#[test]
fn ranges_are_inclusive_unsigned_and_empty_when_reversed() {
    each_backend(|store| {
        let store = store.as_ref();
        let entries = [
            &[0x01u8][..],
            &[0x7F],
            &[0x80],
            &[0x80, 0x00],
            &[0xFF],
            &[0xFF, 0xFF],
        ];
        for (i, key) in entries.iter().enumerate() {
            store.put(key.to_vec(), Some(vec![i as u8])).unwrap();
            if i == 2 {
                commit_at(store, 1); // half committed, half staged: scans must merge both
            }
        }
        let forward: Vec<Vec<u8>> = store
            .all(UNCOMMITTED)
            .unwrap()
            .map(|e| e.unwrap().0)
            .collect();
        assert_eq!(
            forward,
            entries.iter().map(|k| k.to_vec()).collect::<Vec<_>>()
        );
        let reverse: Vec<Vec<u8>> = store
            .reverse_all(UNCOMMITTED)
            .unwrap()
            .map(|e| e.unwrap().0)
            .collect();
        assert_eq!(
            reverse,
            entries.iter().rev().map(|k| k.to_vec()).collect::<Vec<_>>()
        );

        let range: Vec<Vec<u8>> = store
            .range(Some(&[0x7F]), Some(&[0xFF]), UNCOMMITTED)
            .unwrap()
            .map(|e| e.unwrap().0)
            .collect();
        assert_eq!(
            range,
            vec![vec![0x7F], vec![0x80], vec![0x80, 0x00], vec![0xFF]]
        );
        let reverse_range: Vec<Vec<u8>> = store
            .reverse_range(Some(&[0x7F]), Some(&[0x80]), UNCOMMITTED)
            .unwrap()
            .map(|e| e.unwrap().0)
            .collect();
        assert_eq!(reverse_range, vec![vec![0x80], vec![0x7F]]);
        assert_eq!(
            store
                .range(None, Some(&[0x7F]), UNCOMMITTED)
                .unwrap()
                .count(),
            2
        );
        assert_eq!(
            store
                .range(Some(&[0xFF]), None, UNCOMMITTED)
                .unwrap()
                .count(),
            2
        );
        assert_eq!(
            store
                .range(Some(&[0xFF]), Some(&[0x01]), UNCOMMITTED)
                .unwrap()
                .count(),
            0
        );
        assert_eq!(
            store
                .reverse_range(Some(&[0xFF]), Some(&[0x01]), UNCOMMITTED)
                .unwrap()
                .count(),
            0
        );

        let prefixed: Vec<Vec<u8>> = store
            .prefix_scan(&[0x80], UNCOMMITTED)
            .unwrap()
            .map(|e| e.unwrap().0)
            .collect();
        assert_eq!(prefixed, vec![vec![0x80], vec![0x80, 0x00]]);
        assert_eq!(store.prefix_scan(&[0xFF], UNCOMMITTED).unwrap().count(), 2);
        assert_eq!(store.prefix_scan(&[0xFF], COMMITTED).unwrap().count(), 0);
    });
}

#[test]
fn overlay_is_visible_uncommitted_only_until_commit_or_rollback() {
    each_backend(|store| {
        let store = store.as_ref();
        put(store, "a", "1");
        assert_eq!(get(store, "a", COMMITTED), None);
        assert_eq!(keys(store.all(COMMITTED).unwrap()), Vec::<String>::new());
        commit_at(store, 1);
        assert_eq!(get(store, "a", COMMITTED).as_deref(), Some("1"));

        put(store, "a", "2");
        put(store, "b", "2");
        store.delete(b"a").unwrap();
        assert_eq!(keys(store.all(UNCOMMITTED).unwrap()), vec!["b"]);
        assert_eq!(keys(store.all(COMMITTED).unwrap()), vec!["a"]);
        store.rollback().unwrap();
        assert_eq!(get(store, "a", UNCOMMITTED).as_deref(), Some("1"));
        assert_eq!(get(store, "b", UNCOMMITTED), None);
        assert_eq!(store.approximate_uncommitted_bytes(), 0);
    });
}

#[test]
fn uncommitted_bytes_track_staged_writes() {
    each_backend(|store| {
        let store = store.as_ref();
        assert_eq!(store.approximate_uncommitted_bytes(), 0);
        put(store, "key", "value");
        assert_eq!(store.approximate_uncommitted_bytes(), 8);
        put(store, "key", "v");
        assert_eq!(store.approximate_uncommitted_bytes(), 4);
        store.delete(b"other").unwrap();
        assert_eq!(store.approximate_uncommitted_bytes(), 9);
        commit_at(store, 1);
        assert_eq!(store.approximate_uncommitted_bytes(), 0);
    });
}

#[test]
fn offsets_follow_kip_1035() {
    each_backend(|store| {
        let store = store.as_ref();
        assert_eq!(store.committed_offset(&tp(0)).unwrap(), None);
        store
            .commit(
                &CommitMetadata::with_offsets([(tp(0), Some(10)), (tp(1), Some(20))])
                    .and_position(b("pos-1")),
            )
            .unwrap();
        assert_eq!(store.committed_offset(&tp(0)).unwrap(), Some(10));
        assert_eq!(store.committed_offset(&tp(1)).unwrap(), Some(20));
        assert_eq!(store.committed_position().unwrap(), Some(b("pos-1")));

        store
            .commit(&CommitMetadata::with_offsets([
                (tp(1), None),
                (tp(0), Some(11)),
            ]))
            .unwrap();
        assert_eq!(store.committed_offset(&tp(0)).unwrap(), Some(11));
        assert_eq!(store.committed_offset(&tp(1)).unwrap(), None);
        assert_eq!(
            store.committed_position().unwrap(),
            Some(b("pos-1")),
            "position kept when not given"
        );

        store.commit(&CommitMetadata::default()).unwrap();
        assert_eq!(
            store.committed_offset(&tp(0)).unwrap(),
            None,
            "an empty map wipes every offset"
        );

        let rejected = store.commit(&CommitMetadata::with_offsets([(tp(0), Some(-1))]));
        assert!(matches!(rejected, Err(Error::InvalidArgument(_))));
    });
}

#[test]
fn scans_are_fixed_at_creation_and_can_be_dropped_early() {
    each_backend(|store| {
        let store = store.as_ref();
        for i in 0..300 {
            put(store, &format!("k{i:03}"), "old");
        }
        commit_at(store, 1);
        put(store, "k000", "staged");
        let mut uncommitted = store.all(UNCOMMITTED).unwrap();
        let mut committed = store.all(COMMITTED).unwrap();
        let first = uncommitted.next().unwrap().unwrap();
        assert_eq!(first.1, b("staged"));

        for i in 0..300 {
            put(store, &format!("k{i:03}"), "new");
        }
        put(store, "k999", "new");
        commit_at(store, 2);
        store.delete_range(b"k", b"l").unwrap();

        assert!(uncommitted.all(|e| e.unwrap().1 == b("old")));
        let committed: Vec<_> = committed.by_ref().map(|e| e.unwrap()).collect();
        assert_eq!(committed.len(), 300);
        assert!(committed.iter().all(|(_, v)| *v == b("old")));

        let mut early = store.all(COMMITTED).unwrap();
        assert!(early.next().is_some());
        drop(early);
        assert_eq!(store.all(UNCOMMITTED).unwrap().count(), 0);
        assert_eq!(store.all(COMMITTED).unwrap().count(), 301);
    });
}

#[test]
fn delete_range_hides_committed_and_yields_to_later_puts() {
    each_backend(|store| {
        let store = store.as_ref();
        for key in ["a", "b1", "b2", "b3", "c"] {
            put(store, key, "committed");
        }
        commit_at(store, 1);
        put(store, "b0", "staged-before");
        store.delete_range(b"b", b"c").unwrap();
        put(store, "b2", "staged-after");
        assert_eq!(get(store, "b1", UNCOMMITTED), None);
        assert_eq!(get(store, "b0", UNCOMMITTED), None);
        assert_eq!(get(store, "b1", COMMITTED).as_deref(), Some("committed"));
        assert_eq!(keys(store.all(UNCOMMITTED).unwrap()), vec!["a", "b2", "c"]);
        assert_eq!(
            keys(
                store
                    .reverse_range(Some(b"b"), Some(b"c"), UNCOMMITTED)
                    .unwrap()
            ),
            vec!["c", "b2"]
        );
        commit_at(store, 2);
        assert_eq!(keys(store.all(COMMITTED).unwrap()), vec!["a", "b2", "c"]);
        assert_eq!(get(store, "b2", COMMITTED).as_deref(), Some("staged-after"));
    });
}

#[test]
fn approximate_num_entries_counts_committed_and_staged() {
    each_backend(|store| {
        let store = store.as_ref();
        for i in 0..10 {
            put(store, &format!("k{i}"), "v");
        }
        assert_eq!(store.approximate_num_entries(COMMITTED).unwrap(), 0);
        assert_eq!(store.approximate_num_entries(UNCOMMITTED).unwrap(), 10);
        commit_at(store, 1);
        assert_eq!(store.approximate_num_entries(COMMITTED).unwrap(), 10);
    });
}

#[test]
fn closed_store_refuses_work_and_closes_twice() {
    each_backend(|store| {
        put(store.as_ref(), "a", "1");
        store.close().unwrap();
        assert!(!store.is_open());
        assert!(matches!(
            store.get(b"a", UNCOMMITTED),
            Err(Error::Closed { .. })
        ));
        assert!(matches!(store.put(b("a"), None), Err(Error::Closed { .. })));
        assert!(matches!(store.all(COMMITTED), Err(Error::Closed { .. })));
        assert!(matches!(
            store.commit(&CommitMetadata::default()),
            Err(Error::Closed { .. })
        ));
        assert!(matches!(
            store.committed_offset(&tp(0)),
            Err(Error::Closed { .. })
        ));
        assert_eq!(store.approximate_uncommitted_bytes(), 0);
        store.close().unwrap();
    });
}

#[test]
fn read_views_serve_one_isolation_level() {
    each_backend(|store| {
        put(store.as_ref(), "a", "1");
        let committed = ReadView::new(Arc::clone(&store), COMMITTED);
        let uncommitted = ReadView::new(Arc::clone(&store), UNCOMMITTED);
        assert_eq!(committed.get(b"a").unwrap(), None);
        assert_eq!(uncommitted.get(b"a").unwrap(), Some(b("1")));
        assert_eq!(uncommitted.prefix_scan(b"a").unwrap().count(), 1);
        assert_eq!(
            committed
                .scan(&KeyBounds::all(), Order::Reverse)
                .unwrap()
                .count(),
            0
        );
        commit_at(store.as_ref(), 1);
        assert_eq!(committed.get(b"a").unwrap(), Some(b("1")));
    });
}

/// Every commit rewrites all keys with the commit number. A reader must never see two
/// commit numbers in one scan (a torn commit), and an uncommitted reader must never see a
/// key go back to an older number (the overlay cleared before the data landed).
#[test]
fn concurrent_readers_never_see_part_of_a_commit() {
    const KEYS: usize = 200;
    const COMMITS: u32 = 60;
    // Scans that must overlap the commits, however the threads are scheduled: the writer goes
    // on committing until the committed reader has made them.
    const OVERLAPPING_SCANS: usize = 20;
    each_backend(|store| {
        let done = Arc::new(AtomicBool::new(false));
        let scans = Arc::new(AtomicUsize::new(0));
        let committed_reader = {
            let view = ReadView::new(Arc::clone(&store), COMMITTED);
            let done = Arc::clone(&done);
            let scans = Arc::clone(&scans);
            thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    let values: Vec<Vec<u8>> = view.all().unwrap().map(|e| e.unwrap().1).collect();
                    assert!(
                        values.is_empty() || values.len() == KEYS,
                        "torn commit: {} keys",
                        values.len()
                    );
                    assert!(
                        values.windows(2).all(|w| w[0] == w[1]),
                        "torn commit: mixed values"
                    );
                    scans.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let uncommitted_reader = {
            let view = ReadView::new(Arc::clone(&store), UNCOMMITTED);
            let done = Arc::clone(&done);
            thread::spawn(move || {
                let mut last_seen = 0u32;
                while !done.load(Ordering::Relaxed) {
                    if let Some(value) = view.get(b"key-000").unwrap() {
                        let seen = u32::from_be_bytes(value.try_into().unwrap());
                        assert!(seen >= last_seen, "went back from {last_seen} to {seen}");
                        last_seen = seen;
                    }
                }
            })
        };
        let mut commit = 0u32;
        // A reader that failed stops scanning: its join below reports why.
        while (commit < COMMITS || scans.load(Ordering::Relaxed) < OVERLAPPING_SCANS)
            && !committed_reader.is_finished()
        {
            commit += 1;
            for key in 0..KEYS {
                store
                    .put(
                        format!("key-{key:03}").into_bytes(),
                        Some(commit.to_be_bytes().to_vec()),
                    )
                    .unwrap();
            }
            commit_at(store.as_ref(), commit as i64);
        }
        done.store(true, Ordering::Relaxed);
        committed_reader.join().unwrap();
        uncommitted_reader.join().unwrap();
        assert!(scans.load(Ordering::Relaxed) >= OVERLAPPING_SCANS);
    });
}

#[test]
fn stores_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<RocksDbKeyValueStore>();
    assert_send_sync::<InMemoryKeyValueStore>();
    assert_send_sync::<ReadView>();
    assert_send::<KeyValueIterator>();
}

#[test]
fn rocksdb_store_reopens_at_its_last_commit() {
    let dir = TempDir::new().unwrap();
    let resources = RocksDbResources::new(&RocksDbConfig::default());
    let store =
        RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &StoreTuning::default())
            .unwrap();
    put(&store, "a", "1");
    store.delete_range(b"x", b"y").unwrap();
    store
        .commit(&CommitMetadata::with_offsets([(tp(0), Some(7))]).and_position(b("pos")))
        .unwrap();
    put(&store, "b", "staged");
    store.close().unwrap();

    let store =
        RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &StoreTuning::default())
            .unwrap();
    assert_eq!(keys(store.all(UNCOMMITTED).unwrap()), vec!["a"]);
    assert_eq!(store.committed_offset(&tp(0)).unwrap(), Some(7));
    assert_eq!(store.committed_position().unwrap(), Some(b("pos")));
    store.commit(&CommitMetadata::default()).unwrap();
    store.close().unwrap();

    let store =
        RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &StoreTuning::default())
            .unwrap();
    assert_eq!(
        store.committed_offset(&tp(0)).unwrap(),
        None,
        "wiped offsets stay wiped"
    );
}

#[test]
fn rocksdb_store_creates_missing_parent_directories() {
    let dir = TempDir::new().unwrap();
    let nested = dir
        .path()
        .join("app")
        .join("0_1")
        .join("rocksdb")
        .join("counts");
    let resources = RocksDbResources::new(&RocksDbConfig::default());
    let store =
        RocksDbKeyValueStore::open("counts", &nested, &resources, &StoreTuning::default()).unwrap();
    put(&store, "a", "1");
    commit_at(&store, 1);
    assert!(nested.join("CURRENT").exists());
}

#[test]
fn rocksdb_stores_share_one_memory_budget() {
    let config = RocksDbConfig {
        block_cache_bytes: 8 << 20,
        write_buffer_manager_bytes: 4 << 20,
        ..Default::default()
    };
    let resources = RocksDbResources::new(&config);
    let dirs: Vec<TempDir> = (0..3).map(|_| TempDir::new().unwrap()).collect();
    let stores: Vec<RocksDbKeyValueStore> = dirs
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            RocksDbKeyValueStore::open(
                &format!("store-{i}"),
                dir.path(),
                &resources,
                &StoreTuning::default(),
            )
            .unwrap()
        })
        .collect();
    let idle = resources.memtable_usage();
    for (i, store) in stores.iter().enumerate() {
        for k in 0..2000u32 {
            store
                .put(k.to_be_bytes().to_vec(), Some(vec![i as u8; 100]))
                .unwrap();
        }
        commit_at(store, 1);
    }
    assert!(
        resources.memtable_usage() > idle,
        "memtables are accounted in the shared manager"
    );
    assert!(resources.block_cache_usage() <= 8 << 20);
}

#[test]
fn rocksdb_store_without_wal_persists_its_last_commit_on_clean_close() {
    let dir = TempDir::new().unwrap();
    let resources = RocksDbResources::new(&RocksDbConfig {
        wal: WalMode::Off,
        ..Default::default()
    });
    let store =
        RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &StoreTuning::default())
            .unwrap();
    put(&store, "a", "1");
    commit_at(&store, 3);
    put(&store, "b", "staged");
    store.close().unwrap();

    let store =
        RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &StoreTuning::default())
            .unwrap();
    assert_eq!(keys(store.all(COMMITTED).unwrap()), vec!["a"]);
    assert_eq!(store.committed_offset(&tp(0)).unwrap(), Some(3));
}

/// The newest `OPTIONS-*` file RocksDB wrote for the database in `dir`.
fn persisted_options(dir: &std::path::Path) -> String {
    let newest = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("OPTIONS-"))
        })
        .max()
        .expect("RocksDB writes an OPTIONS file");
    std::fs::read_to_string(newest).unwrap()
}

/// The `name=value` lines of one `[CFOptions "…"]` or `[TableOptions/…"…"]` section.
fn options_section(options: &str, header: &str) -> Vec<String> {
    options
        .lines()
        .skip_while(|line| line.trim() != header)
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with('['))
        .map(|line| line.trim().to_string())
        .collect()
}

fn assert_has(section: &[String], line: &str) {
    assert!(
        section.iter().any(|l| l == line),
        "no {line} in {section:?}"
    );
}

#[test]
fn rocksdb_store_takes_its_tuning_on_the_data_column_family_only() {
    let dir = TempDir::new().unwrap();
    let resources = RocksDbResources::new(&RocksDbConfig::default());
    let tuning = StoreTuning::parse([
        ("write_buffer_size", "33554432"),
        ("compaction_style", "universal"),
        ("block_size", "8192"),
        ("max_open_files", "500"),
    ])
    .unwrap();
    let store = RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &tuning).unwrap();
    put(&store, "a", "1");
    commit_at(&store, 1);

    let options = persisted_options(dir.path());
    let data = options_section(&options, "[CFOptions \"default\"]");
    assert_has(&data, "write_buffer_size=33554432");
    assert_has(&data, "compaction_style=kCompactionStyleUniversal");
    let data_table = options_section(&options, "[TableOptions/BlockBasedTable \"default\"]");
    assert_has(&data_table, "block_size=8192");
    let offsets = options_section(&options, "[CFOptions \"offsets\"]");
    assert_has(&offsets, "write_buffer_size=1048576");
    assert_has(&offsets, "compaction_style=kCompactionStyleLevel");
    let database = options_section(&options, "[DBOptions]");
    assert_has(&database, "max_open_files=500");
    assert_has(&database, "atomic_flush=true");

    store.close().unwrap();
    let store =
        RocksDbKeyValueStore::open("rocks", dir.path(), &resources, &StoreTuning::default())
            .unwrap();
    assert_eq!(
        get(&store, "a", COMMITTED).as_deref(),
        Some("1"),
        "a retuned store reopens"
    );
}
