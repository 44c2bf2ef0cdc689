//! The cost of being transactional: the RocksDB key-value store against raw RocksDB doing
//! the same work without an overlay.
//!
//! Both databases hold the same 100 000 committed entries (16-byte keys, 100-byte values)
//! in a table file, use an equally sized block cache with bloom filters and the same
//! memtable size, and write with the WAL on without fsync. Reads and writes run on separate pairs of
//! databases, so reads compare databases that received exactly the same writes.
//!
//! Groups: `put`, `get_hit`, `get_miss`, `range_100`, `put_1000_then_commit` (the write
//! path end to end) and `commit_10k` (one commit of 10 000 staged writes; raw RocksDB
//! writes the same `WriteBatch`).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rocksdb::{BlockBasedOptions, Cache, Options, ReadOptions, WriteBatch, DB};
use sluice_core::store::rocks::{RocksDbConfig, RocksDbResources, StoreTuning};
use sluice_core::store::{
    CommitMetadata, IsolationLevel, KeyValueStore, RocksDbKeyValueStore, TopicPartition,
};
use tempfile::TempDir;

const ENTRIES: u64 = 100_000;
const VALUE: [u8; 100] = [0x5A; 100];

/// The `i`-th of the stored keys, in key order.
fn stored_key(i: u64) -> Vec<u8> {
    format!("key-{i:012}").into_bytes()
}

/// A stored key for iteration `n`, spread so consecutive iterations hit different blocks.
fn key(n: u64) -> Vec<u8> {
    stored_key(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) % ENTRIES)
}

fn missing_key(n: u64) -> Vec<u8> {
    format!("nokey-{:010}", n % ENTRIES).into_bytes()
}

fn commit_metadata(offset: i64) -> CommitMetadata {
    CommitMetadata::with_offsets([(TopicPartition::new("bench-changelog", 0), Some(offset))])
}

fn sluice_store(dir: &Path) -> RocksDbKeyValueStore {
    let resources = RocksDbResources::new(&RocksDbConfig::default());
    let store =
        RocksDbKeyValueStore::open("bench", dir, &resources, &StoreTuning::default()).unwrap();
    for i in 0..ENTRIES {
        store.put(stored_key(i), Some(VALUE.to_vec())).unwrap();
    }
    store.commit(&commit_metadata(0)).unwrap();
    store.close().unwrap();
    // Reopening replays the WAL and flushes it: the entries are read from a table file,
    // like the raw database's after its flush.
    RocksDbKeyValueStore::open("bench", dir, &resources, &StoreTuning::default()).unwrap()
}

fn raw_db(dir: &Path) -> DB {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&Cache::new_lru_cache(
        RocksDbConfig::default().block_cache_bytes,
    ));
    table.set_bloom_filter(10.0, false);
    table.set_cache_index_and_filter_blocks(true);
    let mut options = Options::default();
    options.create_if_missing(true);
    options.set_block_based_table_factory(&table);
    options.set_compression_type(rocksdb::DBCompressionType::None);
    options.set_write_buffer_size(16 << 20);
    options.set_max_write_buffer_number(3);
    options.set_max_open_files(-1);
    let db = DB::open(&options, dir).unwrap();
    let mut batch = WriteBatch::default();
    for i in 0..ENTRIES {
        batch.put(stored_key(i), VALUE);
    }
    db.write(batch).unwrap();
    db.flush().unwrap();
    db
}

/// A Sluice store and a raw database with the same contents, in temporary directories.
struct Pair {
    store: RocksDbKeyValueStore,
    db: DB,
    _dirs: (TempDir, TempDir),
}

fn loaded_pair() -> Pair {
    let dirs = (TempDir::new().unwrap(), TempDir::new().unwrap());
    Pair {
        store: sluice_store(dirs.0.path()),
        db: raw_db(dirs.1.path()),
        _dirs: dirs,
    }
}

/// Writes run on their own pair, so the read benchmarks see two databases that received
/// exactly the same writes.
fn write_benches(c: &mut Criterion) {
    let Pair { store, db, _dirs } = loaded_pair();
    let mut n = 0;
    let mut offset = 0;

    let mut group = c.benchmark_group("put");
    group.throughput(Throughput::Elements(1));
    group.bench_function("sluice", |b| {
        b.iter(|| {
            n += 1;
            store.put(key(n), Some(VALUE.to_vec())).unwrap();
        })
    });
    store.rollback().unwrap();
    group.bench_function("raw", |b| {
        b.iter(|| {
            n += 1;
            db.put(key(n), VALUE).unwrap();
        })
    });
    group.finish();

    let mut group = c.benchmark_group("put_1000_then_commit");
    group.throughput(Throughput::Elements(1000));
    group.bench_function("sluice", |b| {
        b.iter(|| {
            for _ in 0..1000 {
                n += 1;
                store.put(key(n), Some(VALUE.to_vec())).unwrap();
            }
            offset += 1;
            store.commit(&commit_metadata(offset)).unwrap();
        })
    });
    group.bench_function("raw", |b| {
        b.iter(|| {
            for _ in 0..1000 {
                n += 1;
                db.put(key(n), VALUE).unwrap();
            }
        })
    });
    group.finish();

    let mut group = c.benchmark_group("commit_10k");
    group.throughput(Throughput::Elements(10_000));
    group.sample_size(10);
    group.bench_function("sluice", |b| {
        b.iter_custom(|iterations| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iterations {
                for _ in 0..10_000 {
                    n += 1;
                    store.put(key(n), Some(VALUE.to_vec())).unwrap();
                }
                offset += 1;
                let started = Instant::now();
                store.commit(&commit_metadata(offset)).unwrap();
                elapsed += started.elapsed();
            }
            elapsed
        })
    });
    group.bench_function("raw", |b| {
        b.iter_custom(|iterations| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iterations {
                let mut batch = WriteBatch::default();
                for _ in 0..10_000 {
                    n += 1;
                    batch.put(key(n), VALUE);
                }
                let started = Instant::now();
                db.write(batch).unwrap();
                elapsed += started.elapsed();
            }
            elapsed
        })
    });
    group.finish();
}

fn read_benches(c: &mut Criterion) {
    let Pair { store, db, _dirs } = loaded_pair();
    let mut n = 0;

    let mut group = c.benchmark_group("get_hit");
    group.throughput(Throughput::Elements(1));
    group.bench_function("sluice", |b| {
        b.iter(|| {
            n += 1;
            black_box(
                store
                    .get(&key(n), IsolationLevel::ReadUncommitted)
                    .unwrap()
                    .unwrap(),
            );
        })
    });
    group.bench_function("raw", |b| {
        b.iter(|| {
            n += 1;
            black_box(db.get_pinned(key(n)).unwrap().unwrap().to_vec());
        })
    });
    group.finish();

    let mut group = c.benchmark_group("get_miss");
    group.throughput(Throughput::Elements(1));
    group.bench_function("sluice", |b| {
        b.iter(|| {
            n += 1;
            assert!(store
                .get(&missing_key(n), IsolationLevel::ReadUncommitted)
                .unwrap()
                .is_none());
        })
    });
    group.bench_function("raw", |b| {
        b.iter(|| {
            n += 1;
            assert!(db.get_pinned(missing_key(n)).unwrap().is_none());
        })
    });
    group.finish();

    let mut group = c.benchmark_group("range_100");
    group.throughput(Throughput::Elements(100));
    let first_of_range = |n: u64| n.wrapping_mul(0x9E37_79B9_7F4A_7C15) % (ENTRIES - 100);
    let range_start = |n: u64| stored_key(first_of_range(n));
    let range_end = |n: u64| stored_key(first_of_range(n) + 99);
    group.bench_function("sluice", |b| {
        b.iter(|| {
            n += 1;
            let entries = store
                .range(
                    Some(&range_start(n)),
                    Some(&range_end(n)),
                    IsolationLevel::ReadUncommitted,
                )
                .unwrap()
                .map(Result::unwrap)
                .count();
            assert_eq!(entries, 100);
        })
    });
    group.bench_function("raw", |b| {
        b.iter(|| {
            n += 1;
            let mut options = ReadOptions::default();
            let mut upper = range_end(n);
            upper.push(0);
            options.set_iterate_upper_bound(upper);
            let mut iter = db.raw_iterator_opt(options);
            iter.seek(range_start(n));
            let mut entries = 0;
            while let Some((k, v)) = iter.item() {
                black_box((k.to_vec(), v.to_vec()));
                entries += 1;
                iter.next();
            }
            assert_eq!(entries, 100);
        })
    });
    group.finish();
}

criterion_group! {
    name = store_kv;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = read_benches, write_benches
}
criterion_main!(store_kv);
