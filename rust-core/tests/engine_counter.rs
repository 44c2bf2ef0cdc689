//! The engine against a real broker with the keyed counter application: correct outputs
//! under both guarantees, restart without reprocessing, threads added and removed while it
//! runs, processing paused and resumed, committed offsets past a transactional input's
//! markers, the uncommitted-bytes budget, an aborted transaction's invisibility, a
//! panicking processor, and co-partitioning checks.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use engine_support::*;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, Producer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use sluice_core::engine::topology::SubtopologyDescription;
use sluice_core::engine::{Engine, EngineConfig, Error, ProcessorError, TaskId, TaskProcessor};
use sluice_core::kafka::{ProducedRecords, RecordRun};
use sluice_core::store::rocks::{RocksDbConfig, RocksDbResources, StoreTuning};
use sluice_core::store::{IsolationLevel, KeyValueStore, RocksDbKeyValueStore};

const WAIT: Duration = Duration::from_secs(90);

struct App {
    application_id: String,
    input: String,
    output: String,
    state: tempfile::TempDir,
}

impl App {
    fn new(name: &str) -> Self {
        let application_id = unique(name);
        let input = format!("{application_id}-input");
        let output = format!("{application_id}-output");
        create_topic(&input, 4);
        create_topic(&output, 4);
        App {
            application_id,
            input,
            output,
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn start(
        &self,
        guarantee: &str,
        extra: &[(&str, &str)],
        factory: Arc<CounterFactory>,
        restores: Option<Arc<RestoreTally>>,
    ) -> sluice_core::engine::Result<Engine> {
        self.start_topology(
            &counter_topology(&self.input, &self.output),
            guarantee,
            extra,
            factory,
            restores,
        )
    }

    fn start_topology(
        &self,
        topology: &sluice_core::engine::TopologyDescription,
        guarantee: &str,
        extra: &[(&str, &str)],
        factory: Arc<CounterFactory>,
        restores: Option<Arc<RestoreTally>>,
    ) -> sluice_core::engine::Result<Engine> {
        let mut properties = counter_properties(&self.application_id, guarantee, self.state.path());
        for (k, v) in extra {
            properties.insert(k.to_string(), v.to_string());
        }
        let config = EngineConfig::from_properties(&properties)?;
        start_engine(config, topology, factory, restores.map(|r| r as _), false)
    }

    fn factory(&self) -> Arc<CounterFactory> {
        Arc::new(CounterFactory::new(
            &self.application_id,
            &self.output,
            self.state.path(),
        ))
    }
}

fn run_until_counted(app: &App, guarantee: &str, total: u64) -> (Arc<RestoreTally>, u64) {
    let factory = app.factory();
    let restores = Arc::new(RestoreTally::default());
    let engine = app
        .start(
            guarantee,
            &[],
            Arc::clone(&factory),
            Some(Arc::clone(&restores)),
        )
        .expect("engine starts");
    wait_until("the counter to process its input", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        factory.counted.load(Ordering::Relaxed) >= total
    });
    engine.close().expect("clean close");
    let counted = factory.counted.load(Ordering::Relaxed);
    (restores, counted)
}

#[test]
fn exactly_once_counts_are_correct_and_a_restart_does_not_reprocess() {
    let app = App::new("eos-counter");
    let producer = input_producer();
    let first = words(0, 2_000, 37);
    produce_words(&producer, &app.input, 0, &first);

    let (_, counted) = run_until_counted(&app, "exactly_once_v2", 2_000);
    assert_eq!(counted, 2_000, "each input record counted once");
    let output = read_all(&app.output, "read_committed");
    assert_eq!(verify_counts(&output, &first), 2_000);

    let second = words(2_000, 1_000, 37);
    produce_words(&producer, &app.input, 2_000, &second);
    let (restores, counted) = run_until_counted(&app, "exactly_once_v2", 1_000);
    assert_eq!(counted, 1_000, "the restart processes only the new input");
    assert_eq!(
        restores.restored.load(Ordering::Relaxed),
        0,
        "a cleanly closed store is at the end of its changelog"
    );
    // The engine's two threads may rebalance after the first restored every task, and a task
    // that moves restores (nothing) again: what must hold is that every changelog partition did.
    assert_eq!(
        restores.ended_partitions.lock().unwrap().len(),
        4,
        "one changelog partition per task"
    );
    let all: Vec<String> = first.into_iter().chain(second).collect();
    let output = read_all(&app.output, "read_committed");
    assert_eq!(verify_counts(&output, &all), 3_000);
}

#[test]
fn at_least_once_counts_are_correct() {
    let app = App::new("alos-counter");
    let input = words(0, 1_500, 11);
    produce_words(&input_producer(), &app.input, 0, &input);
    let (_, counted) = run_until_counted(&app, "at_least_once", 1_500);
    assert_eq!(counted, 1_500);
    let output = read_all(&app.output, "read_uncommitted");
    assert_eq!(verify_counts(&output, &input), 1_500);
}

#[test]
fn threads_added_and_removed_while_running_keep_the_counts_exact() {
    let app = App::new("thread-changes-counter");
    let producer = input_producer();
    let first = words(0, 1_000, 23);
    produce_words(&producer, &app.input, 0, &first);
    let factory = app.factory();
    let mut engine = app
        .start("exactly_once_v2", &[], Arc::clone(&factory), None)
        .expect("engine starts");
    let application = &app.application_id;
    let name = |index: usize| format!("{application}-StreamThread-{index}");
    assert_eq!(engine.thread_names(), vec![name(1), name(2)]);
    wait_until("the first input counted", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        factory.counted.load(Ordering::Relaxed) >= 1_000
    });

    let added = engine.add_thread().expect("a thread is added");
    assert_eq!(added, name(3));
    let second = words(1_000, 1_000, 23);
    produce_words(&producer, &app.input, 1_000, &second);
    wait_until("the second input counted", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        factory.counted.load(Ordering::Relaxed) >= 2_000
    });

    // The oldest goes; its tasks move to the threads that stay, from their committed state.
    let removed = engine
        .remove_thread(Duration::from_secs(60))
        .expect("the thread stops in time");
    assert_eq!(removed, Some(name(1)));
    assert_eq!(engine.thread_names(), vec![name(2), name(3)]);
    let third = words(2_000, 1_000, 23);
    produce_words(&producer, &app.input, 2_000, &third);
    wait_until("the third input counted", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        read_all(&app.output, "read_committed").len() >= 3_000
    });
    // The freed index is the next one used, as Kafka Streams numbers threads.
    assert_eq!(engine.add_thread().unwrap(), name(1));
    assert_eq!(
        engine.stopped_thread(),
        None,
        "no thread stopped on its own"
    );

    // A removal that times out: the thread goes on stopping, and its number stays taken until
    // it has ended and been reaped.
    assert!(matches!(
        engine.remove_thread(Duration::ZERO),
        Err(Error::Timeout(_))
    ));
    assert_eq!(engine.thread_names(), vec![name(2), name(3)]);
    assert_eq!(engine.add_thread().unwrap(), name(4));
    let mut reaped = None;
    wait_until("the retiring thread to end", WAIT, || {
        reaped = engine.reap_retired();
        reaped.is_some()
    });
    assert_eq!(reaped, Some(name(1)));
    assert_eq!(
        engine.reap_retired(),
        None,
        "each ended thread is reaped once"
    );
    assert_eq!(engine.add_thread().unwrap(), name(1));
    assert!(!engine.has_failed(), "engine thread stopped");
    engine.close().expect("clean close");

    let all: Vec<String> = first.into_iter().chain(second).chain(third).collect();
    let output = read_all(&app.output, "read_committed");
    assert_eq!(verify_counts(&output, &all), 3_000);
}

/// Long enough for every thread to have seen a pause or resume (one loop turn) and for many
/// commit intervals to pass.
const SETTLE: Duration = Duration::from_secs(3);

#[test]
fn a_paused_engine_counts_nothing_and_resumes_where_it_stopped() {
    let app = App::new("paused-counter");
    let producer = input_producer();
    let first = words(0, 500, 19);
    produce_words(&producer, &app.input, 0, &first);
    let factory = app.factory();
    let config = EngineConfig::from_properties(&counter_properties(
        &app.application_id,
        "exactly_once_v2",
        app.state.path(),
    ))
    .unwrap();
    // Paused from the start, as `KafkaStreams.pause()` before `start()` leaves it.
    let topology = counter_topology(&app.input, &app.output);
    let engine = start_engine(config, &topology, Arc::clone(&factory) as _, None, true)
        .expect("engine starts");
    std::thread::sleep(SETTLE);
    assert!(!engine.has_failed(), "engine thread stopped");
    assert_eq!(
        engine.metrics().records_processed,
        0,
        "processed while paused"
    );

    engine.set_paused(false);
    wait_until("the first input counted", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        factory.counted.load(Ordering::Relaxed) >= 500
    });
    // Every record of the first input went through both sub-topologies.
    let processed = engine.metrics().records_processed;
    engine.set_paused(true);
    // Nothing written once the pause returned is processed.
    let second = words(500, 500, 19);
    produce_words(&producer, &app.input, 500, &second);
    // What was processed before the pause is committed while paused.
    wait_until("the first input's counts committed", WAIT, || {
        read_all(&app.output, "read_committed").len() >= 500
    });
    std::thread::sleep(SETTLE);
    assert!(!engine.has_failed(), "engine thread stopped");
    let metrics = engine.metrics();
    assert_eq!(
        metrics.records_processed, processed,
        "processed while paused"
    );
    assert_eq!(metrics.rejoins, 0, "a thread left the group while paused");

    engine.set_paused(false);
    wait_until("the second input counted", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        factory.counted.load(Ordering::Relaxed) >= 1_000
    });
    engine.close().expect("clean close");
    assert_eq!(
        factory.counted.load(Ordering::Relaxed),
        1_000,
        "each record counted once"
    );
    let all: Vec<String> = first.into_iter().chain(second).collect();
    let output = read_all(&app.output, "read_committed");
    assert_eq!(verify_counts(&output, &all), 1_000);
}

#[test]
fn a_paused_engine_restores_nothing_until_resumed() {
    let app = App::new("paused-restore-counter");
    let input = words(0, 400, 17);
    produce_words(&input_producer(), &app.input, 0, &input);
    run_until_counted(&app, "exactly_once_v2", 400);
    // Without their local state the tasks restore every changelog in full.
    std::fs::remove_dir_all(app.state.path().join(&app.application_id)).unwrap();

    let restores = Arc::new(RestoreTally::default());
    let mut properties =
        counter_properties(&app.application_id, "exactly_once_v2", app.state.path());
    // One thread: no rebalance between threads can interrupt a restore and leave it untallied.
    properties.insert("num.stream.threads".into(), "1".into());
    let config = EngineConfig::from_properties(&properties).unwrap();
    let topology = counter_topology(&app.input, &app.output);
    let engine = start_engine(
        config,
        &topology,
        app.factory(),
        Some(Arc::clone(&restores) as _),
        true,
    )
    .expect("engine starts");
    std::thread::sleep(SETTLE);
    assert!(!engine.has_failed(), "engine thread stopped");
    assert_eq!(
        restores.ended.load(Ordering::Relaxed),
        0,
        "restored while paused"
    );

    engine.set_paused(false);
    wait_until("every changelog partition restored", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        restores.ended.load(Ordering::Relaxed) == 4
    });
    assert_eq!(
        restores.restored.load(Ordering::Relaxed),
        400,
        "one changelog record per count"
    );
    engine.close().expect("clean close");
}

#[test]
fn committed_offsets_of_a_transactional_input_reach_its_end() {
    let app = App::new("transactional-input-counter");
    let input = words(0, 400, 13);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("transactional.id", format!("{}-input", app.application_id))
        .create()
        .expect("transactional producer");
    producer.init_transactions(WAIT).unwrap();
    producer.begin_transaction().unwrap();
    produce_words(&producer, &app.input, 0, &input);
    producer.commit_transaction(WAIT).unwrap();

    let (_, counted) = run_until_counted(&app, "exactly_once_v2", 400);
    assert_eq!(counted, 400);
    // Each partition ends with the transaction's commit marker, one offset past its last record;
    // as in Kafka Streams, the group's committed offset is past it, so the input's lag is 0.
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("group.id", &app.application_id)
        .create()
        .unwrap();
    let mut partitions = TopicPartitionList::new();
    for partition in 0..4 {
        partitions.add_partition(&app.input, partition);
    }
    let committed = consumer.committed_offsets(partitions, WAIT).unwrap();
    for element in committed.elements() {
        let (_, end) = consumer
            .fetch_watermarks(&app.input, element.partition(), WAIT)
            .unwrap();
        assert_eq!(
            element.offset(),
            Offset::Offset(end),
            "committed offset of partition {}",
            element.partition()
        );
    }
}

#[test]
fn a_commit_fires_early_when_uncommitted_bytes_exceed_the_budget() {
    let app = App::new("budget-counter");
    let input = words(0, 5_000, 5_000);
    produce_keyed_words(&input_producer(), &app.input, &input);
    let factory = app.factory();
    // A commit interval far beyond the test: only the budget can commit.
    let engine = app
        .start_topology(
            &direct_counter_topology(&app.input, &app.output),
            "exactly_once_v2",
            &[
                ("commit.interval.ms", "600000"),
                ("statestore.uncommitted.max.bytes", "20000"),
            ],
            Arc::clone(&factory),
            None,
        )
        .unwrap();
    wait_until("committed output", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        !read_all(&app.output, "read_committed").is_empty()
    });
    let metrics = engine.metrics();
    assert!(metrics.early_commits > 0, "no early commit: {metrics:?}");
    // A rebalance may hand tasks over (and commit) meanwhile; the interval never fires.
    assert_eq!(
        metrics.interval_commits, 0,
        "an interval commit: {metrics:?}"
    );
    engine.close().unwrap();
}

#[test]
fn an_aborted_transaction_leaves_nothing_visible_to_read_committed_consumers() {
    let app = App::new("abort-counter");
    let producer = input_producer();
    let input = words(0, 300, 3);
    produce_keyed_words(&producer, &app.input, &input);
    let mut factory = CounterFactory::new(&app.application_id, &app.output, app.state.path());
    factory.poison = Some(b"poison".to_vec());
    let factory = Arc::new(factory);
    // No commit can happen during the test: everything counted stays in the open
    // transaction until the poison record fails the task.
    let engine = app
        .start_topology(
            &direct_counter_topology(&app.input, &app.output),
            "exactly_once_v2",
            &[
                ("commit.interval.ms", "600000"),
                ("num.stream.threads", "1"),
            ],
            Arc::clone(&factory),
            None,
        )
        .unwrap();
    wait_until("the input to be counted", WAIT, || {
        factory.counted.load(Ordering::Relaxed) == 300
    });
    // The poison must come once the counts are on the broker: an abort drops what the
    // producer still holds, and then nothing would be left to prove invisible.
    wait_until("the open transaction's records on the broker", WAIT, || {
        read_all(&app.output, "read_uncommitted").len() == 300
    });
    produce_keyed_words(&producer, &app.input, &["poison".to_string()]);
    wait_until("the poison record to stop a thread", WAIT, || {
        engine.has_failed()
    });
    let error = engine
        .close()
        .expect_err("the poison record fails the engine");
    assert!(matches!(error, Error::Processor { .. }), "{error}");
    assert_eq!(
        factory.counted.load(Ordering::Relaxed),
        300,
        "records counted before the poison"
    );

    let uncommitted = read_all(&app.output, "read_uncommitted");
    assert_eq!(
        uncommitted.len(),
        300,
        "the aborted transaction did write its records"
    );
    assert!(
        read_all(&app.output, "read_committed").is_empty(),
        "aborted records are visible to read_committed"
    );
    let changelog = format!("{}-{COUNTS_STORE}-changelog", app.application_id);
    assert!(read_all(&changelog, "read_committed").is_empty());

    // The stores committed nothing either.
    let resources = RocksDbResources::new(&RocksDbConfig::default());
    for partition in 0..4 {
        let dir = app
            .state
            .path()
            .join(&app.application_id)
            .join(format!("1_{partition}"))
            .join("rocksdb")
            .join(COUNTS_STORE);
        if dir.exists() {
            let store =
                RocksDbKeyValueStore::open(COUNTS_STORE, &dir, &resources, &StoreTuning::default())
                    .unwrap();
            assert_eq!(
                store
                    .approximate_num_entries(IsolationLevel::ReadCommitted)
                    .unwrap(),
                0
            );
            assert!(store
                .all(IsolationLevel::ReadCommitted)
                .unwrap()
                .next()
                .is_none());
        }
    }
}

/// A processor with a bug.
struct Panicking;

impl TaskProcessor for Panicking {
    fn process(&mut self, _: &[RecordRun]) -> Result<ProducedRecords, ProcessorError> {
        panic!("a bug in the processor")
    }
}

#[test]
fn a_panicking_processor_stops_its_thread_with_the_panic() {
    let app = App::new("panic-counter");
    produce_keyed_words(&input_producer(), &app.input, &words(0, 10, 5));
    let mut topology = direct_counter_topology(&app.input, &app.output);
    topology.subtopologies[0].stores.clear();
    let factory = |_: TaskId| -> Box<dyn TaskProcessor> { Box::new(Panicking) };
    let mut properties =
        counter_properties(&app.application_id, "exactly_once_v2", app.state.path());
    properties.insert("num.stream.threads".into(), "1".into());
    let config = EngineConfig::from_properties(&properties).unwrap();
    let engine =
        start_engine(config, &topology, Arc::new(factory), None, false).expect("engine starts");
    wait_until("the panic to stop the thread", WAIT, || engine.has_failed());
    match engine.close() {
        Err(Error::ThreadPanicked { thread, message }) => {
            assert_eq!(thread, format!("{}-StreamThread-1", app.application_id));
            assert_eq!(message, "a bug in the processor");
        }
        other => panic!("the engine closed with {other:?}"),
    }
}

#[test]
fn co_partitioning_mismatch_fails_at_start_naming_the_topics() {
    let app = App::new("copartition");
    let other = format!("{}-other", app.application_id);
    create_topic(&other, 3);
    let mut topology = counter_topology(&app.input, &app.output);
    topology.subtopologies.push(SubtopologyDescription {
        id: 2,
        source_topics: vec![app.input.clone(), other.clone()],
        has_patterns: false,
        matched_topics: vec![],
        repartition_source_topics: vec![],
        sink_topics: vec![],
        repartition_sink_topics: vec![],
        stores: vec![],
    });
    topology.copartition_groups = vec![vec![app.input.clone(), other.clone()]];
    let config = EngineConfig::from_properties(&counter_properties(
        &app.application_id,
        "exactly_once_v2",
        app.state.path(),
    ))
    .unwrap();
    let error = start_engine(config, &topology, app.factory(), None, false)
        .err()
        .expect("mismatched co-partitioning must fail");
    let message = error.to_string();
    assert!(matches!(error, Error::Topology(_)), "{message}");
    assert!(
        message.contains(&app.input) && message.contains(&other),
        "{message}"
    );
}
