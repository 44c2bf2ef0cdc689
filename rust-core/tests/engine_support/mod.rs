//! Shared by the engine integration tests: the keyed counter application (a repartition
//! step and a counting store its processor keeps, see [`kept_stores`]), and helpers that
//! write, read and verify topics on the broker named by SLUICE_BOOTSTRAP_SERVERS.

#![allow(dead_code)] // each test binary uses part of this module

pub mod kept_stores;
mod range_member;

pub use range_member::range_membership;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kept_stores::{StoreEvents, StoreKeepingProcessor, StoreLogic, TaskStores};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;
use sluice_core::engine::topology::{
    repartition_topic_name, RepartitionTopicDescription, StoreDescription, SubtopologyDescription,
};
use sluice_core::engine::{
    CommittedInput, Engine, EngineConfig, ProcessorError, ProcessorFactory, RestoreListener,
    TaskId, TaskProcessor, TopologyDescription,
};
use sluice_core::kafka::{
    record_count, Admin, ProducedRecord, ProducedRecords, RecordRun, TopicSpec,
};
use sluice_core::store::TopicPartition;

/// Starts an engine whose threads are members of the application's group through
/// [`range_membership`].
pub fn start_engine(
    config: EngineConfig,
    topology: &TopologyDescription,
    factory: Arc<dyn ProcessorFactory>,
    restore_listener: Option<Arc<dyn RestoreListener>>,
    paused: bool,
) -> sluice_core::engine::Result<Engine> {
    let membership = range_membership(&config);
    Engine::start(
        config,
        topology,
        factory,
        membership,
        restore_listener,
        paused,
    )
}

/// The broker the test runs against.
pub fn bootstrap() -> String {
    std::env::var("SLUICE_BOOTSTRAP_SERVERS").unwrap_or_else(|_| {
        panic!(
            "SLUICE_BOOTSTRAP_SERVERS is not set: run the engine tests through \
             compat-tests/local-broker/with-broker"
        )
    })
}

/// A name no earlier run used, so runs against one broker do not interfere.
pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

pub const COUNTS_STORE: &str = "counts";
pub const BY_WORD: &str = "by-word-repartition";

/// The counter: sub-topology 0 re-keys input records by their value (the word) into a
/// repartition topic; sub-topology 1 counts each word in a store and emits `word → count`.
pub fn counter_topology(input: &str, output: &str) -> TopologyDescription {
    TopologyDescription {
        subtopologies: vec![
            SubtopologyDescription {
                id: 0,
                source_topics: vec![input.into()],
                has_patterns: false,
                matched_topics: vec![],
                repartition_source_topics: vec![],
                sink_topics: vec![],
                repartition_sink_topics: vec![BY_WORD.into()],
                stores: vec![],
            },
            SubtopologyDescription {
                id: 1,
                source_topics: vec![],
                has_patterns: false,
                matched_topics: vec![],
                repartition_source_topics: vec![RepartitionTopicDescription {
                    name: BY_WORD.into(),
                    partitions: None,
                    configs: BTreeMap::new(),
                }],
                sink_topics: vec![output.into()],
                repartition_sink_topics: vec![],
                stores: vec![StoreDescription {
                    name: COUNTS_STORE.into(),
                    persistent: true,
                    logged: true,
                    changelog_configs: BTreeMap::new(),
                    source_topic_changelog: None,
                }],
            },
        ],
        global_stores: vec![],
        copartition_groups: vec![],
        offset_resets: Default::default(),
    }
}

/// The counting sub-topology alone (id 1), reading words as record keys straight from
/// `input`: no repartition step, so its outputs depend on its own commits only.
pub fn direct_counter_topology(input: &str, output: &str) -> TopologyDescription {
    let mut topology = counter_topology(input, output);
    topology.subtopologies.remove(0);
    topology.subtopologies[0].repartition_source_topics.clear();
    topology.subtopologies[0].source_topics = vec![input.into()];
    topology
}

/// Creates the counter's tasks, whose counting stores live under `state_dir`. A record
/// whose value equals `poison` makes the counting task fail after it produced the outputs
/// of the records before it in its batch.
pub struct CounterFactory {
    pub application_id: String,
    pub output: String,
    pub state_dir: PathBuf,
    pub poison: Option<Vec<u8>>,
    /// Records processed by counting tasks, for observers.
    pub counted: Arc<AtomicU64>,
    /// Called before each counting batch (the crash child logs its first batch with it).
    pub on_batch: Option<Arc<dyn Fn(usize) + Send + Sync>>,
    /// What the counting stores did.
    pub store_events: Arc<StoreEvents>,
}

impl CounterFactory {
    pub fn new(application_id: &str, output: &str, state_dir: &Path) -> Self {
        CounterFactory {
            application_id: application_id.into(),
            output: output.into(),
            state_dir: state_dir.into(),
            poison: None,
            counted: Arc::new(AtomicU64::new(0)),
            on_batch: None,
            store_events: Arc::default(),
        }
    }
}

impl ProcessorFactory for CounterFactory {
    fn create(
        &self,
        task: TaskId,
        _inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        Ok(match task.subtopology {
            0 => Box::new(Rekey {
                repartition_topic: repartition_topic_name(&self.application_id, BY_WORD),
            }),
            _ => Box::new(StoreKeepingProcessor {
                stores: TaskStores::open(
                    &self.state_dir,
                    &self.application_id,
                    task,
                    &[COUNTS_STORE],
                    Arc::clone(&self.store_events),
                )?,
                logic: Count {
                    output: self.output.clone(),
                    poison: self.poison.clone(),
                    counted: Arc::clone(&self.counted),
                    on_batch: self.on_batch.clone(),
                },
            }),
        })
    }
}

struct Rekey {
    repartition_topic: String,
}

impl TaskProcessor for Rekey {
    fn process(&mut self, records: &[RecordRun]) -> Result<ProducedRecords, ProcessorError> {
        Ok(records
            .iter()
            .flat_map(RecordRun::records)
            .map(|r| {
                let value = r.value.map(<[u8]>::to_vec);
                ProducedRecord::new(
                    &self.repartition_topic,
                    None,
                    value.clone(),
                    value,
                    r.timestamp,
                )
            })
            .collect())
    }
}

struct Count {
    output: String,
    poison: Option<Vec<u8>>,
    counted: Arc<AtomicU64>,
    on_batch: Option<Arc<dyn Fn(usize) + Send + Sync>>,
}

impl StoreLogic for Count {
    fn process(
        &mut self,
        stores: &TaskStores,
        records: &[RecordRun],
    ) -> Result<ProducedRecords, ProcessorError> {
        let count = record_count(records);
        if let Some(on_batch) = &self.on_batch {
            on_batch(count);
        }
        let mut out = Vec::with_capacity(count * 2);
        for record in records.iter().flat_map(RecordRun::records) {
            let word = record.key.ok_or("record without key")?.to_vec();
            if self.poison.as_deref() == Some(word.as_slice()) {
                // The outputs of the records before stay in the open transaction.
                return Err(format!("poison record at offset {}", record.offset).into());
            }
            let count = stores
                .get(COUNTS_STORE, &word)?
                .map(|v| u64::from_be_bytes(v.try_into().expect("8-byte count")))
                .unwrap_or(0)
                + 1;
            let value = count.to_be_bytes().to_vec();
            out.push(stores.put(COUNTS_STORE, word.clone(), value, record.timestamp)?);
            out.push(ProducedRecord::new(
                &self.output,
                None,
                Some(word),
                Some(count.to_string().into_bytes()),
                record.timestamp,
            ));
            self.counted.fetch_add(1, Ordering::Relaxed);
        }
        Ok(out.into_iter().collect())
    }
}

/// Sums restored records per store partition.
#[derive(Default)]
pub struct RestoreTally {
    pub restored: AtomicU64,
    /// Restorations that ended, a partition restored again after a rebalance counting again.
    pub ended: AtomicU64,
    /// The partitions whose restoration ended at least once.
    pub ended_partitions: Mutex<BTreeSet<TopicPartition>>,
}

impl RestoreListener for RestoreTally {
    fn on_restore_end(&self, _: &str, partition: &TopicPartition, restored: u64) {
        self.restored.fetch_add(restored, Ordering::Relaxed);
        self.ended.fetch_add(1, Ordering::Relaxed);
        self.ended_partitions
            .lock()
            .unwrap()
            .insert(partition.clone());
    }
}

/// Engine properties for the counter under `guarantee`, state in `state_dir`.
pub fn counter_properties(
    application_id: &str,
    guarantee: &str,
    state_dir: &std::path::Path,
) -> BTreeMap<String, String> {
    [
        ("application.id", application_id.to_string()),
        ("bootstrap.servers", bootstrap()),
        ("processing.guarantee", guarantee.to_string()),
        ("state.dir", state_dir.display().to_string()),
        ("num.stream.threads", "2".to_string()),
        ("default.api.timeout.ms", "30000".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub fn admin() -> Admin {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap());
    Admin::new(&config, Duration::from_secs(30)).expect("admin client")
}

pub fn create_topic(name: &str, partitions: i32) {
    admin()
        .create_topics(&[TopicSpec {
            name: name.into(),
            partitions,
            replication_factor: 1,
            configs: BTreeMap::new(),
        }])
        .expect("create topic");
}

/// `count` words spread over `distinct` values, word `i` being `w<i % distinct>`.
pub fn words(start: u64, count: u64, distinct: u64) -> Vec<String> {
    (start..start + count)
        .map(|i| format!("w{}", i % distinct))
        .collect()
}

/// A plain producer of input records.
pub fn input_producer() -> BaseProducer {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("linger.ms", "5")
        .create()
        .expect("producer")
}

/// Writes each word as a record (key = sequence number, value = word) and waits for acks.
pub fn produce_words(producer: &BaseProducer, topic: &str, first_sequence: u64, words: &[String]) {
    let keys: Vec<String> = (0..words.len())
        .map(|i| (first_sequence + i as u64).to_string())
        .collect();
    produce(producer, topic, &keys, words);
}

/// Writes each word as a record keyed by the word itself, for the direct counter.
pub fn produce_keyed_words(producer: &BaseProducer, topic: &str, words: &[String]) {
    produce(producer, topic, words, words);
}

fn produce(producer: &BaseProducer, topic: &str, keys: &[String], words: &[String]) {
    for (key, word) in keys.iter().zip(words) {
        let mut record = BaseRecord::to(topic).key(key).payload(word);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(_), returned)) => {
                    producer.poll(Duration::from_millis(10));
                    record = returned;
                }
                Err((e, _)) => panic!("producing input: {e}"),
            }
        }
    }
    producer
        .flush(Duration::from_secs(30))
        .expect("flush input");
}

/// Every record of `topic` a consumer at `isolation` (`read_committed` or
/// `read_uncommitted`) sees, as (key, value), in partition and offset order.
pub fn read_all(topic: &str, isolation: &str) -> Vec<(String, String)> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("isolation.level", isolation)
        .set("group.id", "sluice-test-verifier")
        .set("enable.partition.eof", "true")
        .set("enable.auto.commit", "false")
        .create()
        .expect("verifier consumer");
    let metadata = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    let partitions = metadata.topics()[0].partitions().len() as i32;
    let mut list = TopicPartitionList::new();
    for p in 0..partitions {
        list.add_partition_offset(topic, p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&list).unwrap();
    let mut by_partition: BTreeMap<i32, Vec<(String, String)>> = BTreeMap::new();
    let mut ended = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while ended < partitions {
        assert!(
            Instant::now() < deadline,
            "reading {topic} did not reach its end"
        );
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => by_partition.entry(m.partition()).or_default().push((
                String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned(),
                String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
            )),
            Some(Err(KafkaError::PartitionEOF(_))) => ended += 1,
            Some(Err(e)) => panic!("reading {topic}: {e}"),
            None => {}
        }
    }
    by_partition.into_values().flatten().collect()
}

/// Checks the counter's committed output against its input: for every word, the outputs
/// are exactly 1, 2, …, n in order, n being how often the word was written. Returns the
/// number of output records.
pub fn verify_counts(output: &[(String, String)], input_words: &[String]) -> usize {
    let mut expected: HashMap<&str, u64> = HashMap::new();
    for word in input_words {
        *expected.entry(word).or_default() += 1;
    }
    let mut seen: HashMap<&str, u64> = HashMap::new();
    for (word, count) in output {
        let count: u64 = count.parse().expect("numeric count");
        let last = seen.entry(word.as_str()).or_default();
        assert_eq!(
            count,
            *last + 1,
            "word {word}: count {count} follows {last} (a duplicate or a lost record)"
        );
        *last = count;
    }
    for (word, n) in &expected {
        assert_eq!(
            seen.get(word).copied().unwrap_or(0),
            *n,
            "word {word}: final count"
        );
    }
    assert_eq!(seen.len(), expected.len(), "output has words never written");
    output.len()
}

/// Waits until `condition` holds, failing after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
