//! Crash recovery of the RocksDB store under SIGKILL.
//!
//! The test re-runs its own binary as a child (`crash_child`, selected by name and enabled
//! by an environment variable). The child opens the store, continues from the offset it
//! finds, and loops: stage a deterministic set of writes for commit `n`, commit them with
//! changelog offset `n`, report `n` on stdout. The parent kills it with SIGKILL at random
//! moments — mid-staging, mid-commit, between commits — reopens the store and checks it
//! against a model rebuilt from the same deterministic writes:
//!
//! - the state equals the model at the recovered offset exactly (nothing uncommitted, no
//!   half commit, data never behind or ahead of its offset);
//! - with a WAL, the recovered offset is the last commit the child reported, or the one it
//!   was writing when it died; without a WAL, any earlier commit is allowed, but never one
//!   older than a previous recovery.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use sluice_core::store::rocks::{RocksDbConfig, RocksDbResources, StoreTuning, WalMode};
use sluice_core::store::{
    CommitMetadata, IsolationLevel, KeyValueStore, RocksDbKeyValueStore, TopicPartition,
};
use tempfile::TempDir;

const CHILD_DIR_ENV: &str = "SLUICE_STORE_CRASH_CHILD_DIR";
const CHILD_WAL_ENV: &str = "SLUICE_STORE_CRASH_CHILD_WAL";
const KEY_SPACE: u64 = 400;
const WRITES_PER_COMMIT: usize = 40;
const VALUE_PADDING: usize = 100;
/// A child left behind by a failed parent stops on its own.
const CHILD_LIFETIME: Duration = Duration::from_secs(30);

/// SplitMix64: a deterministic generator, so parent and child derive the same writes.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

enum Mutation {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

fn key(n: u64) -> Vec<u8> {
    format!("key-{n:04}").into_bytes()
}

/// The writes of commit `commit`, the same in every process.
fn writes_of(commit: i64) -> Vec<Mutation> {
    let mut rng = SplitMix(commit as u64);
    (0..WRITES_PER_COMMIT)
        .map(|i| match rng.below(100) {
            0..=79 => {
                let mut value = format!("{commit}/{i}/").into_bytes();
                value.resize(VALUE_PADDING, b'.');
                Mutation::Put(key(rng.below(KEY_SPACE)), value)
            }
            80..=96 => Mutation::Delete(key(rng.below(KEY_SPACE))),
            _ => {
                let start = rng.below(KEY_SPACE);
                Mutation::DeleteRange(key(start), key(start + 1 + rng.below(5)))
            }
        })
        .collect()
}

fn model_at(offset: i64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    for commit in 1..=offset {
        for write in writes_of(commit) {
            match write {
                Mutation::Put(k, v) => {
                    model.insert(k, v);
                }
                Mutation::Delete(k) => {
                    model.remove(&k);
                }
                Mutation::DeleteRange(from, to) => model.retain(|k, _| !(*k >= from && *k < to)),
            }
        }
    }
    model
}

fn changelog() -> TopicPartition {
    TopicPartition::new("crash-test-changelog", 0)
}

fn wal_name(wal: WalMode) -> &'static str {
    match wal {
        WalMode::Sync => "sync",
        WalMode::Buffered => "buffered",
        WalMode::Off => "off",
    }
}

fn open(path: &Path, wal: WalMode) -> RocksDbKeyValueStore {
    // A small memtable budget makes the WAL-less store flush every few hundred commits, so
    // its recovery point moves during the test.
    let config = RocksDbConfig {
        block_cache_bytes: 8 << 20,
        write_buffer_manager_bytes: 1 << 20,
        wal,
    };
    RocksDbKeyValueStore::open(
        "crash",
        path,
        &RocksDbResources::new(&config),
        &StoreTuning::default(),
    )
    .unwrap()
}

/// The child: commits forever (until killed). Does nothing in a normal test run.
#[test]
fn crash_child() {
    let (Ok(dir), Ok(wal)) = (std::env::var(CHILD_DIR_ENV), std::env::var(CHILD_WAL_ENV)) else {
        return;
    };
    let store = open(Path::new(&dir), WalMode::parse(&wal).unwrap());
    let mut commit = store.committed_offset(&changelog()).unwrap().unwrap_or(0);
    let mut out = std::io::stdout().lock();
    let started = Instant::now();
    while started.elapsed() < CHILD_LIFETIME {
        commit += 1;
        for write in writes_of(commit) {
            match write {
                Mutation::Put(k, v) => store.put(k, Some(v)).unwrap(),
                Mutation::Delete(k) => store.put(k, None).unwrap(),
                Mutation::DeleteRange(from, to) => store.delete_range(&from, &to).unwrap(),
            }
        }
        store
            .commit(&CommitMetadata::with_offsets([(changelog(), Some(commit))]))
            .unwrap();
        writeln!(out, "committed {commit}").unwrap();
        out.flush().unwrap();
    }
}

/// Runs the child once, kills it after `delay`, returns the last commit it reported, if it
/// reported any.
fn run_child_and_kill(path: &Path, wal: WalMode, delay: Duration) -> Option<i64> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, path)
        .env(CHILD_WAL_ENV, wal_name(wal))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            // Not a prefix match: libtest prints "test crash_child ... " without a newline
            // before the test runs, so the first report shares its line.
            .filter_map(|line| {
                line.rsplit_once("committed ")
                    .and_then(|(_, n)| n.parse::<i64>().ok())
            })
            .last()
    });
    thread::sleep(delay);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap()
}

fn survive_kills(wal: WalMode, kills: u32, seed: u64) {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("store");
    open(&path, wal).close().unwrap();
    let mut rng = SplitMix(seed);
    let mut floor = 0;
    let mut recoveries = Vec::new();
    for kill in 0..kills {
        let delay = Duration::from_millis(20 + rng.below(230));
        // A child killed before its first commit leaves the store where it found it.
        let reported = run_child_and_kill(&path, wal, delay).unwrap_or(floor);

        let store = open(&path, wal);
        let recovered = store.committed_offset(&changelog()).unwrap().unwrap_or(0);
        let context = format!(
            "{} kill {kill}: reported {reported}, recovered {recovered}",
            wal_name(wal)
        );
        assert!(
            recovered <= reported + 1,
            "{context}: recovered a commit that never started"
        );
        assert!(
            recovered >= floor,
            "{context}: went back past an earlier recovery at {floor}"
        );
        if wal != WalMode::Off {
            assert!(
                recovered >= reported,
                "{context}: lost an acknowledged commit"
            );
        }
        let expected = model_at(recovered);
        for isolation in [
            IsolationLevel::ReadCommitted,
            IsolationLevel::ReadUncommitted,
        ] {
            let actual: BTreeMap<_, _> =
                store.all(isolation).unwrap().map(Result::unwrap).collect();
            assert!(
                actual == expected,
                "{context}: state differs from the model at the recovered offset"
            );
        }
        floor = recovered;
        recoveries.push((reported, recovered));
        store.close().unwrap();
    }
    eprintln!(
        "{}: (reported, recovered) per kill: {recoveries:?}",
        wal_name(wal)
    );
    assert!(
        floor > 0,
        "{}: no commit ever became durable",
        wal_name(wal)
    );
}

#[test]
fn buffered_wal_recovers_the_last_commit_after_sigkill() {
    survive_kills(WalMode::Buffered, 30, 1);
}

#[test]
fn synced_wal_recovers_the_last_commit_after_sigkill() {
    survive_kills(WalMode::Sync, 12, 2);
}

#[test]
fn no_wal_recovers_a_consistent_earlier_commit_after_sigkill() {
    survive_kills(WalMode::Off, 16, 3);
}
