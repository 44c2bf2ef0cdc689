//! A store that turns out corrupt while its task processes is wiped and restored from its
//! changelog, and the thread goes on, with exactly-once outputs intact.
//!
//! The counter's store table files are damaged on disk while the engine runs; the next
//! lookups read the damaged blocks, RocksDB's checksums report corruption to the task
//! processor, which keeps the store and reports its state corrupt (Kafka Streams'
//! `TaskCorruptedException`), and the engine must have it wiped and restored without
//! stopping.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use engine_support::*;
use sluice_core::engine::{Engine, EngineConfig};

const WAIT: Duration = Duration::from_secs(90);
const KEYS: u64 = 2_000;

fn start(
    application_id: &str,
    input: &str,
    output: &str,
    state: &std::path::Path,
    factory: Arc<CounterFactory>,
    restores: Arc<RestoreTally>,
) -> Engine {
    let mut properties = counter_properties(application_id, "exactly_once_v2", state);
    properties.insert("num.stream.threads".into(), "1".into());
    start_engine(
        EngineConfig::from_properties(&properties).unwrap(),
        &direct_counter_topology(input, output),
        factory,
        Some(restores),
        false,
    )
    .expect("engine starts")
}

/// Overwrites the first half of every table file of the store in `dir`: its data blocks.
fn damage_table_files(dir: &std::path::Path) -> usize {
    let tables: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    for table in &tables {
        let length = std::fs::metadata(table).unwrap().len();
        let mut file = OpenOptions::new().write(true).open(table).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.write_all(&vec![0xA5; (length / 2) as usize]).unwrap();
        file.sync_all().unwrap();
    }
    tables.len()
}

#[test]
fn a_store_found_corrupt_while_processing_is_restored_and_the_thread_goes_on() {
    let application_id = unique("corrupt-counter");
    let input = format!("{application_id}-input");
    let output = format!("{application_id}-output");
    create_topic(&input, 1);
    create_topic(&output, 1);
    let state = tempfile::tempdir().unwrap();
    let producer = input_producer();
    let first = words(0, 3_000, KEYS);
    produce_keyed_words(&producer, &input, &first);

    let factory = Arc::new(CounterFactory::new(&application_id, &output, state.path()));
    let engine = start(
        &application_id,
        &input,
        &output,
        state.path(),
        Arc::clone(&factory),
        Arc::default(),
    );
    wait_until("the first input to be counted", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        factory.counted.load(Ordering::Relaxed) >= 3_000
    });
    engine.close().expect("clean close");

    // Reopened, the store serves its state from table files and restores nothing.
    let factory = Arc::new(CounterFactory::new(&application_id, &output, state.path()));
    let restores = Arc::new(RestoreTally::default());
    let engine = start(
        &application_id,
        &input,
        &output,
        state.path(),
        Arc::clone(&factory),
        Arc::clone(&restores),
    );
    wait_until("the task to be restored", WAIT, || {
        restores.ended.load(Ordering::Relaxed) == 1
    });
    assert_eq!(restores.restored.load(Ordering::Relaxed), 0);
    let store_dir = state
        .path()
        .join(&application_id)
        .join("1_0")
        .join("rocksdb")
        .join(COUNTS_STORE);
    assert!(
        damage_table_files(&store_dir) > 0,
        "the store has no table file to damage"
    );

    let second = words(3_000, 2_000, KEYS);
    produce_keyed_words(&producer, &input, &second);
    let all: Vec<String> = first.into_iter().chain(second).collect();
    wait_until("every count to be committed", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        read_all(&output, "read_committed").len() >= all.len()
    });
    let metrics = engine.metrics();
    assert_eq!(metrics.corrupted_stores, 1, "{metrics:?}");
    assert_eq!(
        factory.store_events.wipes.load(Ordering::Relaxed),
        1,
        "the reopened task's processor wiped its state"
    );
    assert_eq!(
        restores.restored.load(Ordering::Relaxed),
        3_000,
        "the wiped store is restored from its whole changelog"
    );
    engine.close().expect("clean close");
    assert_eq!(
        verify_counts(&read_all(&output, "read_committed"), &all),
        all.len()
    );
}
