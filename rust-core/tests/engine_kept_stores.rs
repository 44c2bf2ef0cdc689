//! The engine against a real broker with a task processor that keeps its store itself, as
//! Kafka Streams' task machinery on the JVM does: the engine restores the store's changelog
//! through the processor, commits the positions (with their metadata) the processor
//! decides, hands them back to the next processor of the task, and asks the processor to
//! wipe its state when its offset lies outside the changelog.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::kept_stores::{
    task_store_dir, StoreEvents, StoreKeepingProcessor, StoreLogic, TaskStores,
};
use engine_support::*;
use sluice_core::engine::topology::{
    changelog_topic_name, StoreDescription, SubtopologyDescription,
};
use sluice_core::engine::{
    CommittedInput, EngineConfig, InputOffset, ProcessorError, ProcessorFactory, TaskId,
    TaskProcessor, TopologyDescription,
};
use sluice_core::kafka::{ProducedRecord, ProducedRecords, RecordRun};
use sluice_core::store::rocks::{RocksDbConfig, RocksDbResources, StoreTuning};
use sluice_core::store::{
    CommitMetadata, IsolationLevel, KeyValueStore, RocksDbKeyValueStore, TopicPartition,
};

const WAIT: Duration = Duration::from_secs(90);
const PARTITIONS: i32 = 2;

struct Factory {
    application_id: String,
    output: String,
    state: std::path::PathBuf,
    events: Arc<StoreEvents>,
    /// Committed inputs each created processor was given.
    inputs: Arc<Mutex<Vec<CommittedInput>>>,
}

impl ProcessorFactory for Factory {
    fn create(
        &self,
        task: TaskId,
        inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        self.inputs.lock().unwrap().extend_from_slice(inputs);
        let stores = TaskStores::open(
            &self.state,
            &self.application_id,
            task,
            &[COUNTS_STORE],
            Arc::clone(&self.events),
        )?;
        let logic = KeptCounter {
            output: self.output.clone(),
            positions: BTreeMap::new(),
            processed: 0,
        };
        Ok(Box::new(StoreKeepingProcessor { stores, logic }))
    }
}

/// Counts words (record keys) in its store, as decimal text, and decides the positions to
/// commit, with how many records it processed as their metadata.
struct KeptCounter {
    output: String,
    positions: BTreeMap<TopicPartition, i64>,
    processed: u64,
}

impl StoreLogic for KeptCounter {
    fn process(
        &mut self,
        stores: &TaskStores,
        records: &[RecordRun],
    ) -> Result<ProducedRecords, ProcessorError> {
        let mut out = Vec::new();
        for (partition, record) in records
            .iter()
            .flat_map(|run| run.records().map(move |r| (&run.partition, r)))
        {
            let word = record.key.ok_or("record without key")?.to_vec();
            let count = match stores.get(COUNTS_STORE, &word)? {
                Some(count) => String::from_utf8(count)?.parse::<u64>()? + 1,
                None => 1,
            };
            let value = count.to_string().into_bytes();
            out.push(stores.put(COUNTS_STORE, word.clone(), value.clone(), record.timestamp)?);
            out.push(ProducedRecord::new(
                &self.output,
                None,
                Some(word),
                Some(value),
                record.timestamp,
            ));
            self.positions.insert(partition.clone(), record.offset + 1);
            self.processed += 1;
        }
        Ok(out.into_iter().collect())
    }

    fn committable_offsets(
        &mut self,
    ) -> Result<Option<BTreeMap<TopicPartition, InputOffset>>, ProcessorError> {
        let metadata = format!("processed={}", self.processed);
        Ok(Some(
            std::mem::take(&mut self.positions)
                .into_iter()
                .map(|(partition, offset)| {
                    let position = InputOffset {
                        offset,
                        metadata: Some(metadata.clone()),
                    };
                    (partition, position)
                })
                .collect(),
        ))
    }

    fn rolled_back(&mut self) {
        self.positions.clear();
    }
}

struct App {
    application_id: String,
    input: String,
    output: String,
    state: tempfile::TempDir,
    events: Arc<StoreEvents>,
    inputs: Arc<Mutex<Vec<CommittedInput>>>,
}

impl App {
    fn new() -> Self {
        let application_id = unique("kept-stores");
        let input = format!("{application_id}-input");
        let output = format!("{application_id}-output");
        create_topic(&input, PARTITIONS);
        create_topic(&output, PARTITIONS);
        App {
            application_id,
            input,
            output,
            state: tempfile::tempdir().unwrap(),
            events: Arc::default(),
            inputs: Arc::default(),
        }
    }

    fn topology(&self) -> TopologyDescription {
        TopologyDescription {
            subtopologies: vec![SubtopologyDescription {
                id: 0,
                source_topics: vec![self.input.clone()],
                has_patterns: false,
                matched_topics: vec![],
                repartition_source_topics: vec![],
                sink_topics: vec![self.output.clone()],
                repartition_sink_topics: vec![],
                stores: vec![StoreDescription {
                    name: COUNTS_STORE.into(),
                    persistent: true,
                    logged: true,
                    changelog_configs: BTreeMap::new(),
                    source_topic_changelog: None,
                }],
            }],
            global_stores: vec![],
            copartition_groups: vec![],
            offset_resets: Default::default(),
        }
    }

    /// Runs until the output holds `expected` records, then closes cleanly.
    fn run_until(&self, expected: usize) {
        let properties =
            counter_properties(&self.application_id, "exactly_once_v2", self.state.path());
        let config = EngineConfig::from_properties(&properties).expect("config");
        let factory = Arc::new(Factory {
            application_id: self.application_id.clone(),
            output: self.output.clone(),
            state: self.state.path().to_path_buf(),
            events: Arc::clone(&self.events),
            inputs: Arc::clone(&self.inputs),
        });
        let engine = start_engine(config, &self.topology(), factory, None, false).expect("engine");
        wait_until("the output to be complete", WAIT, || {
            assert!(!engine.has_failed(), "engine thread stopped");
            read_all(&self.output, "read_committed").len() >= expected
        });
        engine.close().expect("clean close");
    }

    /// Opens the counting store of each task while the engine is stopped.
    fn each_store(&self, mut visit: impl FnMut(&RocksDbKeyValueStore, &TopicPartition)) {
        let resources = RocksDbResources::new(&RocksDbConfig::default());
        for partition in 0..PARTITIONS {
            let task = TaskId {
                subtopology: 0,
                partition,
            };
            let dir = task_store_dir(self.state.path(), &self.application_id, task, COUNTS_STORE);
            let store =
                RocksDbKeyValueStore::open(COUNTS_STORE, &dir, &resources, &StoreTuning::default())
                    .unwrap();
            let changelog = TopicPartition::new(
                changelog_topic_name(&self.application_id, COUNTS_STORE),
                partition,
            );
            visit(&store, &changelog);
            store.close().unwrap();
        }
    }

    /// The sum of the counts the stores committed.
    fn committed_counts(&self) -> u64 {
        let mut sum = 0;
        self.each_store(|store, _| {
            for entry in store.all(IsolationLevel::ReadCommitted).unwrap() {
                let (_, count) = entry.unwrap();
                sum += String::from_utf8(count).unwrap().parse::<u64>().unwrap();
            }
        });
        sum
    }
}

#[test]
fn kept_stores_restore_through_their_processor_and_positions_keep_their_metadata() {
    let app = App::new();
    let producer = input_producer();
    let mut written = words(0, 200, 11);
    produce_keyed_words(&producer, &app.input, &written);

    app.run_until(200);
    assert!(
        app.events.clean_closes.load(Ordering::Relaxed) >= 1,
        "tasks closed clean"
    );
    assert_eq!(
        app.committed_counts(),
        200,
        "the kept store committed every count"
    );

    // The local state is lost: the next run restores it from the changelog.
    std::fs::remove_dir_all(app.state.path().join(&app.application_id)).unwrap();
    app.inputs.lock().unwrap().clear();
    let more = words(200, 100, 11);
    produce_keyed_words(&producer, &app.input, &more);
    written.extend(more);
    app.run_until(300);
    assert_eq!(
        app.events.restored.load(Ordering::Relaxed),
        200,
        "the whole changelog went through the processor"
    );
    assert_eq!(
        verify_counts(&read_all(&app.output, "read_committed"), &written),
        300
    );
    let inputs = app.inputs.lock().unwrap().clone();
    assert!(!inputs.is_empty());
    for input in &inputs {
        let committed = input.committed.as_ref().expect("a committed position");
        let metadata = committed.metadata.as_deref().unwrap_or_default();
        assert!(metadata.starts_with("processed="), "metadata {metadata:?}");
    }

    // An offset past the changelog's end: the task's state is wiped and restored in full.
    app.each_store(|store, changelog| {
        let beyond = CommitMetadata::with_offsets([(changelog.clone(), Some(1_000_000))]);
        store.commit(&beyond).unwrap();
    });
    app.events.restored.store(0, Ordering::Relaxed);
    let last = words(300, 50, 11);
    produce_keyed_words(&producer, &app.input, &last);
    written.extend(last);
    app.run_until(350);
    assert!(
        app.events.wipes.load(Ordering::Relaxed) >= 1,
        "the state was wiped"
    );
    assert_eq!(app.events.restored.load(Ordering::Relaxed), 300);
    assert_eq!(
        verify_counts(&read_all(&app.output, "read_committed"), &written),
        350
    );
    assert_eq!(app.committed_counts(), 350, "the restored store counted on");
}
