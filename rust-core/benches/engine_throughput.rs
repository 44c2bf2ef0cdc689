//! Engine throughput against a real broker, beside the limit a hand-written rdkafka copy
//! loop sets on the same machine and broker.
//!
//! Every workload reads the same input topic (small records: 6-byte keys from a set of
//! distinct words, 16-byte values) from the beginning and writes a fresh output topic:
//!
//! - copy loop, plain: consume → produce, no commits until the end;
//! - copy loop, transactional: consume → produce in transactions committed every 100 ms
//!   with the consumed offsets (exactly-once's minimum work);
//! - engine pass-through: one task type forwarding each record, `exactly_once_v2`;
//! - engine keyed counter: counts each key in a RocksDB store with a changelog, which the
//!   task's processor keeps (as the JVM's task runner does), emitting the count and the
//!   changelog record, `exactly_once_v2`.
//!
//! Each runs on one thread (one stream thread for the engine). Throughput counts from the
//! first record consumed to the final commit; CPU is the process's user + system time
//! (`getrusage`, all threads, librdkafka's and RocksDB's included) over the whole run.
//!
//! SLUICE_BENCH_RECORDS (default 5 000 000), SLUICE_BENCH_KEYS (distinct keys, default
//! 10 000) and SLUICE_BENCH_PARTITIONS (input partitions, default 4) tune it. Needs
//! SLUICE_BOOTSTRAP_SERVERS; `make bench-engine` runs it with a broker of its own.

#[path = "../tests/engine_support/mod.rs"]
mod engine_support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use engine_support::{
    bootstrap, create_topic, direct_counter_topology, start_engine, unique, CounterFactory,
};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientConfig;
use sluice_core::engine::topology::SubtopologyDescription;
use sluice_core::engine::{
    EngineConfig, ProcessorError, TaskId, TaskProcessor, TopologyDescription,
};
use sluice_core::kafka::{record_count, ProducedRecord, ProducedRecords, RecordRun};

const VALUE: [u8; 16] = *b"0123456789abcdef";
/// Kafka Streams' commit interval under exactly-once.
const COMMIT_INTERVAL: Duration = Duration::from_millis(100);
const TIMEOUT: Duration = Duration::from_secs(60);

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// Process CPU time (user + system, every thread) since the process started.
fn cpu_time() -> Duration {
    #[repr(C)]
    struct Timeval {
        seconds: i64,
        micros: i64,
    }
    #[repr(C)]
    struct Rusage {
        user: Timeval,
        system: Timeval,
        rest: [i64; 14],
    }
    extern "C" {
        fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }
    const RUSAGE_SELF: i32 = 0;
    let mut usage = std::mem::MaybeUninit::<Rusage>::zeroed();
    // SAFETY: getrusage fills the struct, which has the platform's layout (64-bit Linux).
    let usage = unsafe {
        assert_eq!(getrusage(RUSAGE_SELF, usage.as_mut_ptr()), 0, "getrusage");
        usage.assume_init()
    };
    let micros = |t: &Timeval| t.seconds as u64 * 1_000_000 + t.micros as u64;
    Duration::from_micros(micros(&usage.user) + micros(&usage.system))
}

/// What one workload measured.
struct Outcome {
    name: &'static str,
    records: u64,
    /// First record consumed → final commit.
    steady: Duration,
    /// Start (clients created, group joined) → final commit.
    total: Duration,
    cpu: Duration,
}

impl Outcome {
    fn records_per_second(&self) -> f64 {
        self.records as f64 / self.steady.as_secs_f64()
    }
}

/// Measures `run`, which returns the moment its first record was consumed and the number
/// of records it processed.
fn measure(name: &'static str, run: impl FnOnce() -> (Instant, u64)) -> Outcome {
    eprintln!("running: {name}");
    let cpu_before = cpu_time();
    let started = Instant::now();
    let (first_record, records) = run();
    let finished = Instant::now();
    let outcome = Outcome {
        name,
        records,
        steady: finished - first_record,
        total: finished - started,
        cpu: cpu_time() - cpu_before,
    };
    eprintln!(
        "  {:.0} records/s, {:.2} CPU s",
        outcome.records_per_second(),
        outcome.cpu.as_secs_f64()
    );
    outcome
}

fn produce_input(topic: &str, records: u64, keys: u64) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .create()
        .expect("input producer");
    let started = Instant::now();
    for i in 0..records {
        let key = format!("w{:05}", i % keys);
        let mut record = BaseRecord::to(topic).key(&key).payload(&VALUE[..]);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    producer.poll(Duration::from_millis(5));
                    record = back;
                }
                Err((e, _)) => panic!("producing input: {e}"),
            }
        }
    }
    producer.flush(TIMEOUT).expect("flush input");
    eprintln!(
        "input: {records} records over {keys} keys in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The copy loop's producer, configured like the engine's.
fn copy_producer(transactional_id: Option<&str>) -> BaseProducer {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap())
        .set("partitioner", "murmur2_random")
        .set("enable.idempotence", "true");
    if let Some(id) = transactional_id {
        config
            .set("transactional.id", id)
            .set("transaction.timeout.ms", "10000");
    }
    let producer: BaseProducer = config.create().expect("copy producer");
    if transactional_id.is_some() {
        producer
            .init_transactions(TIMEOUT)
            .expect("init transactions");
    }
    producer
}

/// Consumes every record of `input` and produces it to a new topic: the limit of what any
/// engine can do with these clients.
fn copy_loop(input: &str, records: u64, transactional: bool) -> (Instant, u64) {
    let group = unique("bench-copy");
    let output = format!("{group}-output");
    create_topic(&output, env_or("SLUICE_BENCH_PARTITIONS", 4));
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("group.id", &group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set(
            "isolation.level",
            if transactional {
                "read_committed"
            } else {
                "read_uncommitted"
            },
        )
        .create()
        .expect("copy consumer");
    consumer.subscribe(&[input]).expect("subscribe");
    let producer = copy_producer(transactional.then_some(group.as_str()));
    let mut first_record = None;
    let mut copied = 0u64;
    let mut next_offsets: BTreeMap<i32, i64> = BTreeMap::new();
    let mut last_commit = Instant::now();
    let mut in_transaction = false;
    let commit = |producer: &BaseProducer, next_offsets: &BTreeMap<i32, i64>| {
        let mut offsets = TopicPartitionList::new();
        for (partition, offset) in next_offsets {
            offsets
                .add_partition_offset(input, *partition, Offset::Offset(*offset))
                .unwrap();
        }
        // rdkafka's flush (inside commit_transaction) waits in 100 ms slices; waiting in
        // short ones first, as the engine does, keeps the commit from idling.
        while producer.in_flight_count() > 0 {
            producer.poll(Duration::from_millis(1));
        }
        let metadata = consumer.group_metadata().expect("group member");
        producer
            .send_offsets_to_transaction(&offsets, &metadata, TIMEOUT)
            .expect("send offsets");
        producer.commit_transaction(TIMEOUT).expect("commit");
    };
    while copied < records {
        match consumer.poll(Duration::from_millis(100)) {
            None => {}
            Some(Err(e)) => panic!("copy loop consume: {e}"),
            Some(Ok(message)) => {
                first_record.get_or_insert_with(Instant::now);
                if transactional && !in_transaction {
                    producer.begin_transaction().expect("begin");
                    in_transaction = true;
                }
                let mut record: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(&output);
                if let Some(key) = message.key() {
                    record = record.key(key);
                }
                if let Some(value) = message.payload() {
                    record = record.payload(value);
                }
                if let Some(timestamp) = message.timestamp().to_millis() {
                    record = record.timestamp(timestamp);
                }
                loop {
                    match producer.send(record) {
                        Ok(()) => break,
                        Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                            producer.poll(Duration::from_millis(10));
                            record = back;
                        }
                        Err((e, _)) => panic!("copy loop produce: {e}"),
                    }
                }
                next_offsets.insert(message.partition(), message.offset() + 1);
                copied += 1;
                if copied.is_multiple_of(256) {
                    producer.poll(Duration::ZERO);
                }
            }
        }
        if transactional && in_transaction && last_commit.elapsed() >= COMMIT_INTERVAL {
            commit(&producer, &next_offsets);
            in_transaction = false;
            last_commit = Instant::now();
        }
    }
    if transactional {
        if in_transaction {
            commit(&producer, &next_offsets);
        }
    } else {
        producer.flush(TIMEOUT).expect("flush");
    }
    (first_record.expect("records were copied"), copied)
}

/// Forwards every record to the output topic, as a `source → sink` topology does.
struct PassThrough {
    output: String,
    processed: Arc<AtomicU64>,
    first_record: Arc<OnceLock<Instant>>,
}

impl TaskProcessor for PassThrough {
    fn process(&mut self, records: &[RecordRun]) -> Result<ProducedRecords, ProcessorError> {
        self.first_record.get_or_init(Instant::now);
        self.processed
            .fetch_add(record_count(records) as u64, Ordering::Relaxed);
        Ok(records
            .iter()
            .flat_map(RecordRun::records)
            .map(|r| {
                let (key, value) = (r.key.map(<[u8]>::to_vec), r.value.map(<[u8]>::to_vec));
                ProducedRecord::new(&self.output, None, key, value, r.timestamp)
            })
            .collect())
    }
}

fn engine_config(application_id: &str, state: &std::path::Path) -> EngineConfig {
    let properties: BTreeMap<String, String> = [
        ("application.id", application_id.to_string()),
        ("bootstrap.servers", bootstrap()),
        ("processing.guarantee", "exactly_once_v2".into()),
        ("state.dir", state.display().to_string()),
        ("num.stream.threads", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    EngineConfig::from_properties(&properties).expect("engine config")
}

/// Runs `topology` with its state in `state` until `processed` reaches `records`, then
/// closes the engine (its final commit included).
fn run_engine(
    topology: &TopologyDescription,
    application_id: &str,
    state: &std::path::Path,
    factory: Arc<dyn sluice_core::engine::ProcessorFactory>,
    processed: &AtomicU64,
    records: u64,
) -> u64 {
    let engine = start_engine(
        engine_config(application_id, state),
        topology,
        factory,
        None,
        false,
    )
    .expect("engine starts");
    let deadline = Instant::now() + Duration::from_secs(3600);
    while processed.load(Ordering::Relaxed) < records {
        assert!(!engine.has_failed(), "engine thread stopped");
        assert!(Instant::now() < deadline, "the engine stalled");
        std::thread::sleep(Duration::from_millis(5));
    }
    engine.close().expect("engine closes cleanly");
    processed.load(Ordering::Relaxed)
}

fn engine_pass_through(input: &str, records: u64) -> (Instant, u64) {
    let application_id = unique("bench-pass-through");
    let output = format!("{application_id}-output");
    create_topic(&output, env_or("SLUICE_BENCH_PARTITIONS", 4));
    let topology = TopologyDescription {
        subtopologies: vec![SubtopologyDescription {
            id: 0,
            source_topics: vec![input.into()],
            has_patterns: false,
            matched_topics: vec![],
            repartition_source_topics: vec![],
            sink_topics: vec![output.clone()],
            repartition_sink_topics: vec![],
            stores: vec![],
        }],
        global_stores: vec![],
        copartition_groups: vec![],
        offset_resets: Default::default(),
    };
    let processed = Arc::new(AtomicU64::new(0));
    let first_record = Arc::new(OnceLock::new());
    let factory = {
        let (processed, first_record) = (Arc::clone(&processed), Arc::clone(&first_record));
        move |_: TaskId| -> Box<dyn TaskProcessor> {
            Box::new(PassThrough {
                output: output.clone(),
                processed: Arc::clone(&processed),
                first_record: Arc::clone(&first_record),
            })
        }
    };
    let state = tempfile::tempdir().expect("state dir");
    let done = run_engine(
        &topology,
        &application_id,
        state.path(),
        Arc::new(factory),
        &processed,
        records,
    );
    (*first_record.get().expect("records were processed"), done)
}

fn engine_counter(input: &str, records: u64) -> (Instant, u64) {
    let application_id = unique("bench-counter");
    let output = format!("{application_id}-output");
    create_topic(&output, env_or("SLUICE_BENCH_PARTITIONS", 4));
    let first_record: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
    let state = tempfile::tempdir().expect("state dir");
    let mut factory = CounterFactory::new(&application_id, &output, state.path());
    factory.on_batch = Some({
        let first_record = Arc::clone(&first_record);
        Arc::new(move |_| {
            first_record.get_or_init(Instant::now);
        })
    });
    let counted = Arc::clone(&factory.counted);
    let done = run_engine(
        &direct_counter_topology(input, &output),
        &application_id,
        state.path(),
        Arc::new(factory),
        &counted,
        records,
    );
    (*first_record.get().expect("records were counted"), done)
}

fn main() {
    // `cargo bench` passes `--bench`; this harness takes no arguments.
    let records: u64 = env_or("SLUICE_BENCH_RECORDS", 5_000_000);
    let keys: u64 = env_or("SLUICE_BENCH_KEYS", 10_000).max(1);
    let input = format!("{}-input", unique("bench-engine"));
    create_topic(&input, env_or("SLUICE_BENCH_PARTITIONS", 4));
    produce_input(&input, records, keys);

    let outcomes = [
        measure("copy loop, plain", || copy_loop(&input, records, false)),
        measure("copy loop, transactional", || {
            copy_loop(&input, records, true)
        }),
        measure("engine pass-through, EOS", || {
            engine_pass_through(&input, records)
        }),
        measure("engine keyed counter, EOS", || {
            engine_counter(&input, records)
        }),
    ];
    let limit = outcomes[1].records_per_second();

    println!();
    println!("{records} records, {keys} keys, one thread each");
    println!(
        "{:<28} {:>12} {:>9} {:>9} {:>8} {:>10} {:>13}",
        "workload", "records/s", "steady s", "total s", "CPU s", "CPU µs/rec", "vs txn copy"
    );
    for outcome in &outcomes {
        println!(
            "{:<28} {:>12.0} {:>9.2} {:>9.2} {:>8.2} {:>10.2} {:>12.2}×",
            outcome.name,
            outcome.records_per_second(),
            outcome.steady.as_secs_f64(),
            outcome.total.as_secs_f64(),
            outcome.cpu.as_secs_f64(),
            outcome.cpu.as_secs_f64() * 1e6 / outcome.records as f64,
            limit / outcome.records_per_second(),
        );
    }
}
