//! Global stores against a real broker: a task enriches each input record with a lookup in
//! a global store loaded from a topic. The store is complete before the first record is
//! processed, follows later updates and deletes of its topic, and after a clean restart
//! resumes from the offsets it committed instead of reloading the topic.
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
    Engine, EngineConfig, ProcessorError, TaskContext, TaskId, TaskProcessor, TopologyDescription,
};
use sluice_core::kafka::{ConsumedRecord, ProducedRecord};

const LABELS: &str = "labels";
const WAIT: Duration = Duration::from_secs(60);

/// Looks up each record's key in the global store and remembers (key, label) in `seen`.
struct Enrich {
    output: String,
    seen: Arc<Mutex<Vec<(String, String)>>>,
}

impl TaskProcessor for Enrich {
    fn process(
        &mut self,
        context: &TaskContext<'_>,
        records: Vec<ConsumedRecord>,
    ) -> Result<Vec<ProducedRecord>, ProcessorError> {
        let labels = context.global_store(LABELS).ok_or("global store missing")?;
        let mut out = Vec::new();
        for record in records {
            let key = record.key.ok_or("record without key")?;
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

struct App {
    application_id: String,
    input: String,
    output: String,
    labels: String,
    state: tempfile::TempDir,
}

impl App {
    fn start(
        &self,
        seen: &Arc<Mutex<Vec<(String, String)>>>,
        restores: &Arc<RestoreTally>,
    ) -> Engine {
        let topology = TopologyDescription {
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
            processor_keeps_stores: false,
        };
        let mut properties: BTreeMap<String, String> =
            counter_properties(&self.application_id, "exactly_once_v2", self.state.path());
        properties.insert("num.stream.threads".into(), "1".into());
        let (output, seen) = (self.output.clone(), Arc::clone(seen));
        let factory = move |_: TaskId| -> Box<dyn TaskProcessor> {
            Box::new(Enrich {
                output: output.clone(),
                seen: Arc::clone(&seen),
            })
        };
        Engine::start(
            EngineConfig::from_properties(&properties).unwrap(),
            &topology,
            Arc::new(factory),
            Some(Arc::clone(restores) as _),
        )
        .expect("engine starts")
    }
}

#[test]
fn tasks_see_a_complete_global_store_that_follows_its_topic_and_survives_a_restart() {
    let application_id = unique("global");
    let app = App {
        input: format!("{application_id}-input"),
        output: format!("{application_id}-output"),
        labels: format!("{application_id}-labels"),
        application_id,
        state: tempfile::tempdir().unwrap(),
    };
    create_topic(&app.input, 2);
    create_topic(&app.output, 2);
    create_topic(&app.labels, 3);
    let producer = input_producer();
    let keys: Vec<String> = (0..30).map(|i| format!("k{i}")).collect();
    let labels: Vec<String> = keys.iter().map(|k| format!("first-{k}")).collect();
    let mut entries: Vec<(&str, Option<&str>)> = keys
        .iter()
        .zip(&labels)
        .map(|(k, l)| (k.as_str(), Some(l.as_str())))
        .collect();
    // Written, then deleted before the engine starts: restore applies the tombstone.
    entries.push(("k0", None));
    send(&producer, &app.labels, &entries);
    let inputs: Vec<(&str, Option<&str>)> = keys.iter().map(|k| (k.as_str(), Some("x"))).collect();
    send(&producer, &app.input, &inputs);

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
