//! The engine against a real broker with a task processor that keeps its store itself, as
//! Kafka Streams' task machinery on the JVM does: the engine restores the store's changelog
//! through the processor, commits the positions (with their metadata) the processor
//! decides, hands them back to the next processor of the task, and asks the processor to
//! wipe its state when its offset lies outside the changelog.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::*;
use sluice_core::engine::topology::{StoreDescription, SubtopologyDescription};
use sluice_core::engine::{
    CommittedInput, Engine, EngineConfig, InputOffset, ProcessorError, ProcessorFactory,
    TaskContext, TaskId, TaskProcessor, TopologyDescription,
};
use sluice_core::kafka::{ConsumedRecord, DeliveredOffsets, ProducedRecord};
use sluice_core::store::TopicPartition;

const WAIT: Duration = Duration::from_secs(90);

/// What a task's store holds once committed: it outlives the processor, as a store's
/// directory outlives its task.
#[derive(Default, Clone)]
struct Durable {
    counts: BTreeMap<String, u64>,
    changelog_offset: Option<i64>,
}

/// Everything the processors of one application share and report.
#[derive(Default)]
struct Shared {
    durable: Mutex<BTreeMap<TaskId, Durable>>,
    /// Committed inputs each created processor was given.
    inputs: Mutex<Vec<CommittedInput>>,
    restored_records: Mutex<u64>,
    wiped: Mutex<u32>,
    clean_closes: Mutex<u32>,
}

struct Factory {
    application_id: String,
    output: String,
    shared: Arc<Shared>,
}

impl ProcessorFactory for Factory {
    fn create(
        &self,
        task: TaskId,
        inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        self.shared.inputs.lock().unwrap().extend_from_slice(inputs);
        let durable = self
            .shared
            .durable
            .lock()
            .unwrap()
            .get(&task)
            .cloned()
            .unwrap_or_default();
        Ok(Box::new(KeptCounter {
            task,
            changelog: TopicPartition::new(
                format!("{}-{COUNTS_STORE}-changelog", self.application_id),
                task.partition,
            ),
            output: self.output.clone(),
            working: durable.counts,
            positions: BTreeMap::new(),
            processed: 0,
            shared: Arc::clone(&self.shared),
        }))
    }
}

/// Counts words (record keys), keeping the counts itself and logging each to the changelog.
struct KeptCounter {
    task: TaskId,
    changelog: TopicPartition,
    output: String,
    working: BTreeMap<String, u64>,
    positions: BTreeMap<TopicPartition, i64>,
    processed: u64,
    shared: Arc<Shared>,
}

impl KeptCounter {
    fn durable(&self) -> Durable {
        let durable = self.shared.durable.lock().unwrap();
        durable.get(&self.task).cloned().unwrap_or_default()
    }

    fn keep(&self, durable: Durable) {
        self.shared.durable.lock().unwrap().insert(self.task, durable);
    }
}

impl TaskProcessor for KeptCounter {
    fn process(
        &mut self,
        _: &TaskContext<'_>,
        records: Vec<ConsumedRecord>,
    ) -> Result<Vec<ProducedRecord>, ProcessorError> {
        let mut out = Vec::new();
        for record in records {
            let word = String::from_utf8(record.key.clone().ok_or("record without key")?)?;
            let count = self.working.get(&word).copied().unwrap_or(0) + 1;
            self.working.insert(word.clone(), count);
            let value = Some(count.to_string().into_bytes());
            out.push(ProducedRecord::new(
                &self.changelog.topic,
                Some(self.changelog.partition),
                Some(word.clone().into_bytes()),
                value.clone(),
                record.timestamp,
            ));
            out.push(ProducedRecord::new(
                &self.output,
                None,
                Some(word.into_bytes()),
                value,
                record.timestamp,
            ));
            self.positions
                .insert(record.topic_partition(), record.offset + 1);
            self.processed += 1;
        }
        Ok(out)
    }

    fn committed_changelog_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        Ok(BTreeMap::from([(
            self.changelog.clone(),
            self.durable().changelog_offset,
        )]))
    }

    fn wipe_state(&mut self) -> Result<(), ProcessorError> {
        *self.shared.wiped.lock().unwrap() += 1;
        self.working.clear();
        self.keep(Durable::default());
        Ok(())
    }

    fn restore(&mut self, records: Vec<ConsumedRecord>) -> Result<(), ProcessorError> {
        let mut durable = self.durable();
        for record in &records {
            let word = String::from_utf8(record.key.clone().ok_or("changelog without key")?)?;
            let count: u64 = String::from_utf8(record.value.clone().ok_or("tombstone")?)?.parse()?;
            durable.counts.insert(word, count);
            durable.changelog_offset = Some(record.offset);
        }
        *self.shared.restored_records.lock().unwrap() += records.len() as u64;
        self.working = durable.counts.clone();
        self.keep(durable);
        Ok(())
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

    fn committed(&mut self, delivered: &DeliveredOffsets) -> Result<(), ProcessorError> {
        let mut durable = self.durable();
        durable.counts = self.working.clone();
        if let Some(offset) = delivered.get(&self.changelog) {
            durable.changelog_offset = Some(*offset);
        }
        self.keep(durable);
        Ok(())
    }

    fn rolled_back(&mut self) -> Result<(), ProcessorError> {
        self.working = self.durable().counts;
        self.positions.clear();
        Ok(())
    }

    fn close(&mut self, clean: bool) -> Result<(), ProcessorError> {
        if clean {
            *self.shared.clean_closes.lock().unwrap() += 1;
        }
        Ok(())
    }
}

struct App {
    application_id: String,
    input: String,
    output: String,
    state: tempfile::TempDir,
    shared: Arc<Shared>,
}

impl App {
    fn new() -> Self {
        let application_id = unique("kept-stores");
        let input = format!("{application_id}-input");
        let output = format!("{application_id}-output");
        create_topic(&input, 2);
        create_topic(&output, 2);
        App {
            application_id,
            input,
            output,
            state: tempfile::tempdir().unwrap(),
            shared: Arc::new(Shared::default()),
        }
    }

    fn topology(&self) -> TopologyDescription {
        TopologyDescription {
            subtopologies: vec![SubtopologyDescription {
                id: 0,
                source_topics: vec![self.input.clone()],
                repartition_source_topics: vec![],
                sink_topics: vec![self.output.clone()],
                repartition_sink_topics: vec![],
                stores: vec![StoreDescription {
                    name: COUNTS_STORE.into(),
                    persistent: true,
                    logged: true,
                    value_layout: Default::default(),
                    changelog_configs: BTreeMap::new(),
                    source_topic_changelog: None,
                }],
            }],
            global_stores: vec![],
            copartition_groups: vec![],
            processor_keeps_stores: true,
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
            shared: Arc::clone(&self.shared),
        });
        let engine = Engine::start(config, &self.topology(), factory, None, false).expect("engine");
        wait_until("the output to be complete", WAIT, || {
            assert!(!engine.has_failed(), "engine thread stopped");
            read_all(&self.output, "read_committed").len() >= expected
        });
        engine.close().expect("clean close");
    }
}

#[test]
fn kept_stores_restore_through_their_processor_and_positions_keep_their_metadata() {
    let app = App::new();
    let producer = input_producer();
    let mut written = words(0, 200, 11);
    produce_keyed_words(&producer, &app.input, &written);

    app.run_until(200);
    assert!(*app.shared.clean_closes.lock().unwrap() >= 1, "tasks closed clean");
    let counted: u64 = app
        .shared
        .durable
        .lock()
        .unwrap()
        .values()
        .flat_map(|d| d.counts.values())
        .sum();
    assert_eq!(counted, 200, "the kept store committed every count");

    // The local state is lost: the next run restores it from the changelog.
    app.shared.durable.lock().unwrap().clear();
    app.shared.inputs.lock().unwrap().clear();
    let more = words(200, 100, 11);
    produce_keyed_words(&producer, &app.input, &more);
    written.extend(more);
    app.run_until(300);
    assert_eq!(
        *app.shared.restored_records.lock().unwrap(),
        200,
        "the whole changelog went through the processor"
    );
    assert_eq!(verify_counts(&read_all(&app.output, "read_committed"), &written), 300);
    let inputs = app.shared.inputs.lock().unwrap().clone();
    assert!(!inputs.is_empty());
    for input in &inputs {
        let committed = input.committed.as_ref().expect("a committed position");
        let metadata = committed.metadata.as_deref().unwrap_or_default();
        assert!(metadata.starts_with("processed="), "metadata {metadata:?}");
    }

    // An offset past the changelog's end: the task's state is wiped and restored in full.
    for durable in app.shared.durable.lock().unwrap().values_mut() {
        durable.changelog_offset = Some(1_000_000);
    }
    *app.shared.restored_records.lock().unwrap() = 0;
    let last = words(300, 50, 11);
    produce_keyed_words(&producer, &app.input, &last);
    written.extend(last);
    app.run_until(350);
    assert!(*app.shared.wiped.lock().unwrap() >= 1, "the state was wiped");
    assert_eq!(*app.shared.restored_records.lock().unwrap(), 300);
    assert_eq!(verify_counts(&read_all(&app.output, "read_committed"), &written), 350);
}
