//! Global stores against a real broker: a task enriches each input record with a lookup in
//! a global store loaded from a topic. The store is complete before the first record is
//! processed, follows later updates and deletes of its topic, and after a clean restart
//! resumes from the offsets it committed instead of reloading the topic. The same holds when a
//! processor keeps the global stores (as Kafka Streams' global state machinery on the JVM does):
//! the engine's global thread restores them through it and hands it later records.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine_support::*;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use sluice_core::engine::topology::{GlobalStoreDescription, SubtopologyDescription};
use sluice_core::engine::{
    CommittedInput, Engine, EngineConfig, GlobalProcessor, ProcessorError, ProcessorFactory,
    TaskContext, TaskId, TaskProcessor, TopologyDescription,
};
use sluice_core::kafka::{ConsumedRecord, ProducedRecord};
use sluice_core::store::TopicPartition;

const LABELS: &str = "labels";
const WAIT: Duration = Duration::from_secs(60);

/// Looks up each record's key in the global store (the engine's, or the one `kept` holds)
/// and remembers (key, label) in `seen`.
struct Enrich {
    output: String,
    seen: Arc<Mutex<Vec<(String, String)>>>,
    kept: Option<Arc<Mutex<KeptLabels>>>,
}

impl Enrich {
    fn label(
        &self,
        context: &TaskContext<'_>,
        key: &[u8],
    ) -> Result<Option<String>, ProcessorError> {
        if let Some(kept) = &self.kept {
            let key = String::from_utf8_lossy(key).into_owned();
            return Ok(kept.lock().unwrap().labels.get(&key).cloned());
        }
        let labels = context.global_store(LABELS).ok_or("global store missing")?;
        Ok(labels
            .get(key)?
            .map(|l| String::from_utf8_lossy(&l).into_owned()))
    }
}

impl TaskProcessor for Enrich {
    fn process(
        &mut self,
        context: &TaskContext<'_>,
        records: Vec<ConsumedRecord>,
    ) -> Result<Vec<ProducedRecord>, ProcessorError> {
        let mut out = Vec::new();
        for record in records {
            let key = record.key.ok_or("record without key")?;
            let label = self
                .label(context, &key)?
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
        Ok(out)
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

/// The global store a processor keeps, outliving each engine as a persistent store would:
/// its labels, the offsets committed with them, and what restore and processing handed it.
#[derive(Default)]
struct KeptLabels {
    labels: BTreeMap<String, String>,
    committed: BTreeMap<TopicPartition, i64>,
    staged: BTreeMap<TopicPartition, i64>,
    restored: usize,
    processed: usize,
    closed_clean: bool,
    wiped: bool,
}

impl KeptLabels {
    fn apply(&mut self, records: Vec<ConsumedRecord>) {
        for record in records {
            self.staged.insert(record.topic_partition(), record.offset);
            let Some(key) = record.key else { continue };
            let key = String::from_utf8_lossy(&key).into_owned();
            match record.value {
                Some(value) => {
                    self.labels
                        .insert(key, String::from_utf8_lossy(&value).into_owned());
                }
                None => {
                    self.labels.remove(&key);
                }
            }
        }
    }

    fn commit(&mut self) {
        let staged = std::mem::take(&mut self.staged);
        self.committed.extend(staged);
    }
}

struct LabelKeeper(Arc<Mutex<KeptLabels>>);

impl GlobalProcessor for LabelKeeper {
    fn committed_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        let kept = self.0.lock().unwrap();
        Ok(kept
            .committed
            .iter()
            .map(|(p, o)| (p.clone(), Some(*o)))
            .collect())
    }

    fn wipe_state(&mut self) -> Result<(), ProcessorError> {
        *self.0.lock().unwrap() = KeptLabels {
            wiped: true,
            ..KeptLabels::default()
        };
        Ok(())
    }

    fn restore(&mut self, records: Vec<ConsumedRecord>) -> Result<(), ProcessorError> {
        let mut kept = self.0.lock().unwrap();
        kept.restored += records.len();
        kept.apply(records);
        kept.commit();
        Ok(())
    }

    fn process(&mut self, records: Vec<ConsumedRecord>) -> Result<(), ProcessorError> {
        let mut kept = self.0.lock().unwrap();
        kept.processed += records.len();
        kept.apply(records);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), ProcessorError> {
        self.0.lock().unwrap().commit();
        Ok(())
    }

    fn close(&mut self, clean: bool) -> Result<(), ProcessorError> {
        self.0.lock().unwrap().closed_clean = clean;
        Ok(())
    }
}

/// Creates tasks that read the labels `kept` holds, and the processor keeping them.
struct KeptLabelsFactory {
    output: String,
    seen: Arc<Mutex<Vec<(String, String)>>>,
    kept: Arc<Mutex<KeptLabels>>,
    log_starts: Arc<Mutex<BTreeMap<TopicPartition, i64>>>,
}

impl ProcessorFactory for KeptLabelsFactory {
    fn create(
        &self,
        _task: TaskId,
        _inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        Ok(Box::new(Enrich {
            output: self.output.clone(),
            seen: Arc::clone(&self.seen),
            kept: Some(Arc::clone(&self.kept)),
        }))
    }

    fn create_global(
        &self,
        log_starts: &BTreeMap<TopicPartition, i64>,
    ) -> Result<Box<dyn GlobalProcessor>, ProcessorError> {
        *self.log_starts.lock().unwrap() = log_starts.clone();
        Ok(Box::new(LabelKeeper(Arc::clone(&self.kept))))
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

    fn topology(&self, processor_keeps_stores: bool) -> TopologyDescription {
        TopologyDescription {
            subtopologies: vec![SubtopologyDescription {
                id: 0,
                source_topics: vec![self.input.clone()],
                repartition_source_topics: vec![],
                sink_topics: vec![self.output.clone()],
                repartition_sink_topics: vec![],
                stores: vec![],
            }],
            global_stores: vec![GlobalStoreDescription {
                name: LABELS.into(),
                topic: self.labels.clone(),
                persistent: true,
                value_layout: Default::default(),
            }],
            copartition_groups: vec![],
            processor_keeps_stores,
        }
    }

    fn config(&self) -> EngineConfig {
        let mut properties: BTreeMap<String, String> =
            counter_properties(&self.application_id, "exactly_once_v2", self.state.path());
        properties.insert("num.stream.threads".into(), "1".into());
        EngineConfig::from_properties(&properties).unwrap()
    }

    fn start(
        &self,
        seen: &Arc<Mutex<Vec<(String, String)>>>,
        restores: &Arc<RestoreTally>,
    ) -> Engine {
        let (output, seen) = (self.output.clone(), Arc::clone(seen));
        let factory = move |_: TaskId| -> Box<dyn TaskProcessor> {
            Box::new(Enrich {
                output: output.clone(),
                seen: Arc::clone(&seen),
                kept: None,
            })
        };
        Engine::start(
            self.config(),
            &self.topology(false),
            Arc::new(factory),
            Some(Arc::clone(restores) as _),
            false,
        )
        .expect("engine starts")
    }

    fn start_keeping(&self, factory: KeptLabelsFactory, restores: &Arc<RestoreTally>) -> Engine {
        Engine::start(
            self.config(),
            &self.topology(true),
            Arc::new(factory),
            Some(Arc::clone(restores) as _),
            false,
        )
        .expect("engine starts")
    }
}

#[test]
fn tasks_see_a_complete_global_store_that_follows_its_topic_and_survives_a_restart() {
    let app = App::new("global");
    let producer = input_producer();
    let keys = app.seed(&producer, 30);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let restores = Arc::new(RestoreTally::default());
    let engine = app.start(&seen, &restores);
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
    let engine = app.start(&seen, &restores);
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
fn a_processor_keeps_the_global_stores_restored_before_tasks_updated_after_and_resumed_from_its_offsets(
) {
    let app = App::new("global-kept");
    let producer = input_producer();
    let keys = app.seed(&producer, 20);

    let kept = Arc::new(Mutex::new(KeptLabels::default()));
    let factory = |seen: &Arc<Mutex<Vec<(String, String)>>>| KeptLabelsFactory {
        output: app.output.clone(),
        seen: Arc::clone(seen),
        kept: Arc::clone(&kept),
        log_starts: Arc::default(),
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let restores = Arc::new(RestoreTally::default());
    let first = factory(&seen);
    let log_starts = Arc::clone(&first.log_starts);
    let engine = app.start_keeping(first, &restores);
    // start() returned: every label is in before any task ran.
    assert_eq!(kept.lock().unwrap().restored, 21);
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
    for (key, label) in seen.lock().unwrap().iter() {
        let expected = if key == "k0" {
            "missing".to_string()
        } else {
            format!("first-{key}")
        };
        assert_eq!(*label, expected, "lookup of {key} before any update");
    }

    // Later records go through the processor, not its restore.
    send(&producer, &app.labels, &[("k1", Some("second-k1"))]);
    wait_until("the update of k1 to be processed", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        kept.lock().unwrap().labels.get("k1").map(String::as_str) == Some("second-k1")
    });
    assert_eq!(kept.lock().unwrap().processed, 1);
    engine.close().expect("clean close");
    assert!(
        kept.lock().unwrap().closed_clean,
        "committed and closed clean"
    );

    // A restart restores only what follows the committed offsets.
    send(&producer, &app.labels, &[("k2", Some("third-k2"))]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let restores = Arc::new(RestoreTally::default());
    kept.lock().unwrap().restored = 0;
    let engine = app.start_keeping(factory(&seen), &restores);
    assert_eq!(
        kept.lock().unwrap().restored,
        1,
        "only the record written while stopped"
    );
    assert_eq!(restores.restored.load(Ordering::Relaxed), 1);
    assert_eq!(
        kept.lock().unwrap().labels.get("k2").map(String::as_str),
        Some("third-k2")
    );
    engine.close().expect("clean close");

    // An offset beyond its partition's end wipes the state, and every partition is restored
    // from its start.
    {
        let mut kept = kept.lock().unwrap();
        let partition = TopicPartition::new(app.labels.clone(), 0);
        kept.committed.insert(partition, 1_000_000);
        kept.labels.insert("stale".into(), "left over".into());
    }
    let restores = Arc::new(RestoreTally::default());
    let engine = app.start_keeping(factory(&seen), &restores);
    let after_wipe = kept.lock().unwrap();
    assert!(after_wipe.wiped, "the state was not wiped");
    assert_eq!(after_wipe.restored, 23, "every record of the topic");
    assert_eq!(after_wipe.labels.get("stale"), None);
    assert_eq!(after_wipe.labels.get("k0"), None);
    assert_eq!(
        after_wipe.labels.get("k1").map(String::as_str),
        Some("second-k1")
    );
    drop(after_wipe);
    engine.close().expect("clean close");
}
