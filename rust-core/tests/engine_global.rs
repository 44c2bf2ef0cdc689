//! Global stores against a real broker: a task enriches each input record with a lookup in
//! a global store loaded from a topic. A processor keeps the global stores, as Kafka
//! Streams' global state machinery on the JVM does, in Sluice RocksDB stores; the engine's
//! global thread restores them through it and hands it later records. The store is complete
//! before the first record is processed, follows later updates and deletes of its topic,
//! after a clean restart resumes from the offsets it committed instead of reloading the
//! topic, and is wiped and reloaded when an offset lies outside its topic.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::kept_stores::{global_store_dir, GlobalStoreKeeper, GlobalViews, StoreEvents};
use engine_support::*;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use sluice_core::engine::topology::{GlobalStoreDescription, SubtopologyDescription};
use sluice_core::engine::{
    CommittedInput, Engine, EngineConfig, GlobalProcessor, ProcessorError, ProcessorFactory,
    TaskId, TaskProcessor, TopologyDescription,
};
use sluice_core::kafka::{ProducedRecord, ProducedRecords, RecordRun};
use sluice_core::store::rocks::{RocksDbConfig, RocksDbResources, StoreTuning};
use sluice_core::store::{CommitMetadata, KeyValueStore, RocksDbKeyValueStore, TopicPartition};

const LABELS: &str = "labels";
const WAIT: Duration = Duration::from_secs(60);

type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// Looks up each record's key in the global store and remembers (key, label) in `seen`.
struct Enrich {
    output: String,
    seen: Seen,
    views: GlobalViews,
}

impl TaskProcessor for Enrich {
    fn process(&mut self, records: &[RecordRun]) -> Result<ProducedRecords, ProcessorError> {
        let labels = self.views.lock().unwrap()[LABELS].clone();
        let mut out = Vec::new();
        for record in records.iter().flat_map(RecordRun::records) {
            let key = record.key.ok_or("record without key")?.to_vec();
            let label = labels
                .get(&key)?
                .map(|l| String::from_utf8_lossy(&l).into_owned())
                .unwrap_or_else(|| "missing".into());
            self.seen
                .lock()
                .unwrap()
                .push((String::from_utf8_lossy(&key).into_owned(), label.clone()));
            out.push(ProducedRecord::new(
                &self.output,
                None,
                Some(key),
                Some(label.into_bytes()),
                record.timestamp,
            ));
        }
        Ok(out.into_iter().collect())
    }
}

fn send(producer: &BaseProducer, topic: &str, entries: &[(&str, Option<&str>)]) {
    for (key, value) in entries {
        let mut record = BaseRecord::<str, str>::to(topic).key(key);
        if let Some(value) = value {
            record = record.payload(value);
        }
        producer.send(record).map_err(|(e, _)| e).expect("send");
    }
    producer.flush(Duration::from_secs(30)).expect("flush");
}

/// Creates the tasks, which read the global store through `views`, and the keeper of the
/// global store, which shares it there.
struct Factory {
    application_id: String,
    output: String,
    labels: String,
    state: std::path::PathBuf,
    seen: Seen,
    views: GlobalViews,
    events: Arc<StoreEvents>,
    log_starts: Arc<Mutex<BTreeMap<TopicPartition, i64>>>,
}

impl ProcessorFactory for Factory {
    fn create(
        &self,
        _task: TaskId,
        _inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        Ok(Box::new(Enrich {
            output: self.output.clone(),
            seen: Arc::clone(&self.seen),
            views: Arc::clone(&self.views),
        }))
    }

    fn create_global(
        &self,
        log_starts: &BTreeMap<TopicPartition, i64>,
    ) -> Result<Box<dyn GlobalProcessor>, ProcessorError> {
        *self.log_starts.lock().unwrap() = log_starts.clone();
        Ok(Box::new(GlobalStoreKeeper::open(
            &self.state,
            &self.application_id,
            &[(LABELS, &self.labels)],
            log_starts.keys().cloned().collect(),
            Arc::clone(&self.views),
            Arc::clone(&self.events),
        )?))
    }
}

struct App {
    application_id: String,
    input: String,
    output: String,
    labels: String,
    state: tempfile::TempDir,
}

impl App {
    fn new(prefix: &str) -> Self {
        let application_id = unique(prefix);
        App {
            input: format!("{application_id}-input"),
            output: format!("{application_id}-output"),
            labels: format!("{application_id}-labels"),
            application_id,
            state: tempfile::tempdir().unwrap(),
        }
    }

    /// Creates the topics and writes `count` keys: label `first-<key>` for each (then a
    /// tombstone for `k0`, which restore must apply) and one input record each; returns them.
    fn seed(&self, producer: &BaseProducer, count: usize) -> Vec<String> {
        create_topic(&self.input, 2);
        create_topic(&self.output, 2);
        create_topic(&self.labels, 3);
        let keys: Vec<String> = (0..count).map(|i| format!("k{i}")).collect();
        let labels: Vec<String> = keys.iter().map(|k| format!("first-{k}")).collect();
        let mut entries: Vec<(&str, Option<&str>)> = keys
            .iter()
            .zip(&labels)
            .map(|(k, l)| (k.as_str(), Some(l.as_str())))
            .collect();
        entries.push(("k0", None));
        send(producer, &self.labels, &entries);
        let inputs: Vec<(&str, Option<&str>)> =
            keys.iter().map(|k| (k.as_str(), Some("x"))).collect();
        send(producer, &self.input, &inputs);
        keys
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
                stores: vec![],
            }],
            global_stores: vec![GlobalStoreDescription {
                name: LABELS.into(),
                topic: self.labels.clone(),
                persistent: true,
            }],
            copartition_groups: vec![],
            offset_resets: Default::default(),
        }
    }

    fn config(&self) -> EngineConfig {
        let mut properties: BTreeMap<String, String> =
            counter_properties(&self.application_id, "exactly_once_v2", self.state.path());
        properties.insert("num.stream.threads".into(), "1".into());
        EngineConfig::from_properties(&properties).unwrap()
    }

    fn factory(&self, seen: &Seen, events: &Arc<StoreEvents>) -> Factory {
        Factory {
            application_id: self.application_id.clone(),
            output: self.output.clone(),
            labels: self.labels.clone(),
            state: self.state.path().to_path_buf(),
            seen: Arc::clone(seen),
            views: Arc::default(),
            events: Arc::clone(events),
            log_starts: Arc::default(),
        }
    }

    fn start(&self, factory: Factory, restores: &Arc<RestoreTally>) -> Engine {
        start_engine(
            self.config(),
            &self.topology(),
            Arc::new(factory),
            Some(Arc::clone(restores) as _),
            false,
        )
        .expect("engine starts")
    }

    /// Opens the global store while the engine is stopped.
    fn with_store(&self, visit: impl FnOnce(&RocksDbKeyValueStore)) {
        let resources = RocksDbResources::new(&RocksDbConfig::default());
        let dir = global_store_dir(self.state.path(), &self.application_id, LABELS);
        let store =
            RocksDbKeyValueStore::open(LABELS, &dir, &resources, &StoreTuning::default()).unwrap();
        visit(&store);
        store.close().unwrap();
    }
}

/// The label of `key` the running engine's global store holds.
fn label(views: &GlobalViews, key: &str) -> Option<String> {
    let view = views.lock().unwrap()[LABELS].clone();
    view.get(key.as_bytes())
        .unwrap()
        .map(|l| String::from_utf8_lossy(&l).into_owned())
}

#[test]
fn tasks_see_a_complete_global_store_that_follows_its_topic_and_survives_a_restart() {
    let app = App::new("global");
    let producer = input_producer();
    let keys = app.seed(&producer, 30);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let restores = Arc::new(RestoreTally::default());
    let engine = app.start(app.factory(&seen, &Arc::default()), &restores);
    wait_until("every input record to be enriched", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        seen.lock().unwrap().len() >= keys.len()
    });
    assert_eq!(restores.restored.load(Ordering::Relaxed), 31);
    assert_eq!(
        restores.ended.load(Ordering::Relaxed),
        3,
        "one end per partition"
    );
    for (key, label) in seen.lock().unwrap().iter() {
        let expected = if key == "k0" {
            "missing".to_string()
        } else {
            format!("first-{key}")
        };
        assert_eq!(*label, expected, "lookup of {key} before any update");
    }

    // Updates reach the store while the engine runs.
    send(
        &producer,
        &app.labels,
        &[("k1", Some("second-k1")), ("k2", None)],
    );
    wait_until("the update of k1 to be visible", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        send(
            &producer,
            &app.input,
            &[("k1", Some("x")), ("k2", Some("x"))],
        );
        std::thread::sleep(Duration::from_millis(200));
        let seen = seen.lock().unwrap();
        let last = |key: &str| {
            seen.iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, l)| l.clone())
        };
        last("k1").as_deref() == Some("second-k1") && last("k2").as_deref() == Some("missing")
    });
    engine.close().expect("clean close");

    // A restart reads nothing again: the store committed its offsets at close.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let restores = Arc::new(RestoreTally::default());
    send(
        &producer,
        &app.input,
        &[("k1", Some("x")), ("k3", Some("x"))],
    );
    let engine = app.start(app.factory(&seen, &Arc::default()), &restores);
    assert_eq!(
        restores.restored.load(Ordering::Relaxed),
        0,
        "records reloaded"
    );
    assert_eq!(restores.ended.load(Ordering::Relaxed), 3);
    wait_until("the restarted engine to process", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        let seen = seen.lock().unwrap();
        seen.iter().any(|(k, _)| k == "k3")
    });
    let seen_after = seen.lock().unwrap().clone();
    assert!(
        seen_after.contains(&("k1".into(), "second-k1".into())),
        "{seen_after:?}"
    );
    assert!(
        seen_after.contains(&("k3".into(), "first-k3".into())),
        "{seen_after:?}"
    );
    engine.close().expect("clean close");
}

#[test]
fn the_global_processor_restores_before_tasks_processes_after_and_is_wiped_for_an_offset_outside_its_topic(
) {
    let app = App::new("global-kept");
    let producer = input_producer();
    let keys = app.seed(&producer, 20);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::new(StoreEvents::default());
    let restores = Arc::new(RestoreTally::default());
    let factory = app.factory(&seen, &events);
    let (views, log_starts) = (Arc::clone(&factory.views), Arc::clone(&factory.log_starts));
    let engine = app.start(factory, &restores);
    // start() returned: every label is in before any task ran.
    assert_eq!(events.restored.load(Ordering::Relaxed), 21);
    assert_eq!(restores.restored.load(Ordering::Relaxed), 21);
    assert_eq!(
        restores.ended.load(Ordering::Relaxed),
        3,
        "one end per partition"
    );
    assert_eq!(
        log_starts.lock().unwrap().len(),
        3,
        "every partition with its log start"
    );
    wait_until("every input record to be enriched", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        seen.lock().unwrap().len() >= keys.len()
    });

    // Later records go through the processor, not its restore.
    send(&producer, &app.labels, &[("k1", Some("second-k1"))]);
    wait_until("the update of k1 to be processed", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        label(&views, "k1").as_deref() == Some("second-k1")
    });
    assert_eq!(events.processed.load(Ordering::Relaxed), 1);
    assert_eq!(events.restored.load(Ordering::Relaxed), 21);
    engine.close().expect("clean close");
    assert!(
        events.closed_clean.load(Ordering::Relaxed),
        "committed and closed clean"
    );

    // A restart restores only what follows the committed offsets.
    send(&producer, &app.labels, &[("k2", Some("third-k2"))]);
    let events = Arc::new(StoreEvents::default());
    let restores = Arc::new(RestoreTally::default());
    let factory = app.factory(&seen, &events);
    let views = Arc::clone(&factory.views);
    let engine = app.start(factory, &restores);
    assert_eq!(
        events.restored.load(Ordering::Relaxed),
        1,
        "only the record written while stopped"
    );
    assert_eq!(restores.restored.load(Ordering::Relaxed), 1);
    assert_eq!(label(&views, "k2").as_deref(), Some("third-k2"));
    engine.close().expect("clean close");

    // An offset beyond its partition's end wipes the state, and every partition is restored
    // from its start.
    app.with_store(|store| {
        store
            .put(b"stale".to_vec(), Some(b"left over".to_vec()))
            .unwrap();
        let partition = TopicPartition::new(app.labels.clone(), 0);
        let beyond = CommitMetadata::with_offsets([(partition, Some(1_000_000))]);
        store.commit(&beyond).unwrap();
    });
    let events = Arc::new(StoreEvents::default());
    let restores = Arc::new(RestoreTally::default());
    let factory = app.factory(&seen, &events);
    let views = Arc::clone(&factory.views);
    let engine = app.start(factory, &restores);
    assert_eq!(
        events.wipes.load(Ordering::Relaxed),
        1,
        "the state was not wiped"
    );
    assert_eq!(
        events.restored.load(Ordering::Relaxed),
        23,
        "every record of the topic"
    );
    assert_eq!(label(&views, "stale"), None);
    assert_eq!(label(&views, "k0"), None);
    assert_eq!(label(&views, "k1").as_deref(), Some("second-k1"));
    engine.close().expect("clean close");
}
