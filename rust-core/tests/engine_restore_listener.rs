//! What the restore listener hears when a restore does not run to its end: the thread
//! stopped while a store was restoring, and the store's restore is reported suspended with
//! the records restored so far, never ended.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::*;
use sluice_core::engine::{Engine, EngineConfig, RestoreListener};
use sluice_core::store::TopicPartition;

const WAIT: Duration = Duration::from_secs(90);
/// More changelog records than one restore step reads after the first batch report.
const CHANGELOG_RECORDS: u64 = 100_000;

/// Holds the restoring thread in its first batch report long enough for a close to be
/// asked meanwhile.
#[derive(Default)]
struct SlowFirstBatch {
    first_batch: AtomicBool,
    ended: AtomicU64,
    suspended: Mutex<Vec<(String, TopicPartition, u64)>>,
}

impl RestoreListener for SlowFirstBatch {
    fn on_batch_restored(&self, _: &str, _: &TopicPartition, _: u64, _: u64) {
        if !self.first_batch.swap(true, Ordering::SeqCst) {
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    fn on_restore_end(&self, _: &str, _: &TopicPartition, _: u64) {
        self.ended.fetch_add(1, Ordering::SeqCst);
    }

    fn on_restore_suspended(&self, store: &str, partition: &TopicPartition, restored: u64) {
        let report = (store.to_string(), partition.clone(), restored);
        self.suspended.lock().unwrap().push(report);
    }
}

/// A one-thread counter application started on an empty state directory while its store's
/// changelog holds `records` records, so that it restores them first.
struct Restoring {
    engine: Engine,
    changelog: String,
    /// Removed when the test ends, after the engine.
    _state: tempfile::TempDir,
}

impl Restoring {
    /// Starts the application with `settings` on top of the counter's, reporting to
    /// `listener`.
    fn start(
        prefix: &str,
        records: u64,
        settings: &[(&str, &str)],
        listener: Arc<dyn RestoreListener>,
    ) -> Restoring {
        let application_id = unique(prefix);
        let input = format!("{application_id}-input");
        let output = format!("{application_id}-output");
        let changelog = format!("{application_id}-{COUNTS_STORE}-changelog");
        create_topic(&input, 1);
        create_topic(&output, 1);
        create_topic(&changelog, 1);
        produce_keyed_words(&input_producer(), &changelog, &words(0, records, records));

        let state = tempfile::tempdir().unwrap();
        let mut properties = counter_properties(&application_id, "at_least_once", state.path());
        properties.insert("num.stream.threads".into(), "1".into());
        for (key, value) in settings {
            properties.insert((*key).into(), (*value).into());
        }
        let engine = start_engine(
            EngineConfig::from_properties(&properties).unwrap(),
            &direct_counter_topology(&input, &output),
            Arc::new(CounterFactory::new(&application_id, &output, state.path())),
            Some(listener),
            false,
        )
        .expect("engine starts");
        Restoring {
            engine,
            changelog,
            _state: state,
        }
    }
}

#[test]
fn a_restore_the_closing_thread_leaves_unfinished_is_reported_suspended() {
    let listener = Arc::new(SlowFirstBatch::default());
    let restoring = Restoring::start(
        "restore-suspended",
        CHANGELOG_RECORDS,
        &[],
        listener.clone(),
    );
    let (engine, changelog) = (restoring.engine, restoring.changelog);
    wait_until("the first restored batch", WAIT, || {
        listener.first_batch.load(Ordering::SeqCst)
    });
    engine.close().expect("clean close");

    let suspended = listener.suspended.lock().unwrap().clone();
    assert_eq!(
        listener.ended.load(Ordering::SeqCst),
        0,
        "the restore never ended"
    );
    assert_eq!(suspended.len(), 1, "{suspended:?}");
    let (store, partition, restored) = &suspended[0];
    assert_eq!(store, COUNTS_STORE);
    assert_eq!(partition, &TopicPartition::new(changelog.clone(), 0));
    assert!(
        (1..CHANGELOG_RECORDS).contains(restored),
        "restored {restored} of {CHANGELOG_RECORDS}"
    );
}

/// Counts each batch a restore reports: the records restored so far, in order.
#[derive(Default)]
struct Batches {
    restored: Mutex<Vec<u64>>,
    ended: AtomicU64,
}

impl RestoreListener for Batches {
    fn on_batch_restored(&self, _: &str, _: &TopicPartition, restored: u64, _: u64) {
        self.restored.lock().unwrap().push(restored);
    }

    fn on_restore_end(&self, _: &str, _: &TopicPartition, restored: u64) {
        self.ended.store(restored, Ordering::SeqCst);
    }
}

/// A restore reads a poll of the restore consumer at a time, as Kafka Streams' does: with
/// `restore.consumer.max.poll.records`, each batch the listener hears of holds at most that.
#[test]
fn each_restored_batch_holds_at_most_the_restore_consumers_max_poll_records() {
    const RECORDS: u64 = 2_000;
    const PER_POLL: u64 = 150;
    let listener = Arc::new(Batches::default());
    let per_poll = PER_POLL.to_string();
    let settings = [("restore.consumer.max.poll.records", per_poll.as_str())];
    let restoring = Restoring::start("restore-batches", RECORDS, &settings, listener.clone());
    let engine = restoring.engine;
    wait_until("the restore to end", WAIT, || {
        listener.ended.load(Ordering::SeqCst) == RECORDS
    });
    engine.close().expect("clean close");

    let restored = listener.restored.lock().unwrap().clone();
    assert_eq!(restored.last(), Some(&RECORDS), "{restored:?}");
    let mut before = 0;
    for so_far in &restored {
        assert!(
            (1..=PER_POLL).contains(&(so_far - before)),
            "a batch of {} records: {restored:?}",
            so_far - before
        );
        before = *so_far;
    }
}
