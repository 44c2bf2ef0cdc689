//! The Rust side talks to a real Kafka broker: topics are created, transactions commit and
//! abort, a read_committed consumer sees committed records only, and a flush does not wait
//! for the producer's linger.
//!
//! Needs a broker: run through `compat-tests/local-broker/with-broker cargo test ...` (as
//! `make test` does), which exports SLUICE_BOOTSTRAP_SERVERS.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Headers;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Message, Offset, TopicPartitionList};
use sluice_core::kafka::{
    Header, KafkaPartitionFetcher, KafkaStreamsProducer, PartitionFetcher, ProducedRecord,
    ProducedRecords, StreamsProducer,
};
use sluice_core::store::TopicPartition;

const TIMEOUT: Duration = Duration::from_secs(30);

fn bootstrap_servers() -> String {
    std::env::var("SLUICE_BOOTSTRAP_SERVERS").unwrap_or_else(|_| {
        panic!(
            "SLUICE_BOOTSTRAP_SERVERS is not set: this test needs a Kafka broker. Run it through \
             compat-tests/local-broker/with-broker (for example `make test`, or \
             `compat-tests/local-broker/with-broker cargo test --release -p sluice-core --test broker_smoke`)"
        )
    })
}

/// A name no earlier run used, so the test also works against a broker that outlives it.
fn unique_name(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// Runs a future to completion on this thread. rdkafka's admin client completes its futures
/// from a thread of its own, so parking until woken is all the executor it needs.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unparker(Thread);
    impl Wake for Unparker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unparker(thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => thread::park(),
        }
    }
}

fn create_topic(bootstrap: &str, name: &str) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin client");
    let options = AdminOptions::new()
        .request_timeout(Some(TIMEOUT))
        .operation_timeout(Some(TIMEOUT));
    let results = block_on(admin.create_topics(
        &[NewTopic::new(name, 1, TopicReplication::Fixed(1))],
        &options,
    ))
    .expect("create_topics request");
    for result in results {
        result.unwrap_or_else(|(topic, code)| panic!("creating topic {topic} failed: {code:?}"));
    }
}

fn transactional_producer(bootstrap: &str) -> BaseProducer {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("transactional.id", unique_name("broker-smoke-producer"))
        .create()
        .expect("producer");
    producer
        .init_transactions(TIMEOUT)
        .expect("init_transactions");
    producer
}

fn send(producer: &BaseProducer, topic: &str, value: &str) {
    producer
        .send(BaseRecord::to(topic).key("key").payload(value))
        .map_err(|(error, _)| error)
        .expect("send");
}

/// Every value in partition 0 up to its end as the isolation level sees it, in order.
fn read_all(bootstrap: &str, topic: &str, isolation_level: &str) -> Vec<String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique_name("broker-smoke-reader"))
        .set("isolation.level", isolation_level)
        .set("enable.auto.commit", "false")
        // The end of the partition, as the isolation level sees it, is where reading stops.
        .set("enable.partition.eof", "true")
        .create()
        .expect("consumer");
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, 0, Offset::Beginning)
        .expect("assignment");
    consumer.assign(&assignment).expect("assign");

    let deadline = Instant::now() + TIMEOUT;
    let mut values = Vec::new();
    while Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(200)) {
            None => continue,
            Some(Err(KafkaError::PartitionEOF(_))) => return values,
            Some(Err(error)) => panic!("consuming {topic} ({isolation_level}) failed: {error}"),
            Some(Ok(message)) => {
                let payload = message.payload().expect("every record has a value");
                values.push(String::from_utf8(payload.to_vec()).expect("UTF-8 value"));
            }
        }
    }
    panic!(
        "did not reach the end of {topic} ({isolation_level}) within {TIMEOUT:?}; read {values:?}"
    );
}

#[test]
fn read_committed_sees_committed_transactions_only() {
    let bootstrap = bootstrap_servers();
    let topic = unique_name("broker-smoke");
    create_topic(&bootstrap, &topic);

    let producer = transactional_producer(&bootstrap);
    producer.begin_transaction().expect("begin 1");
    send(&producer, &topic, "committed-1");
    producer.commit_transaction(TIMEOUT).expect("commit 1");

    producer.begin_transaction().expect("begin 2");
    send(&producer, &topic, "aborted");
    producer.flush(TIMEOUT).expect("flush before abort");
    producer.abort_transaction(TIMEOUT).expect("abort");

    producer.begin_transaction().expect("begin 3");
    send(&producer, &topic, "committed-2");
    producer.commit_transaction(TIMEOUT).expect("commit 3");

    assert_eq!(
        read_all(&bootstrap, &topic, "read_committed"),
        ["committed-1", "committed-2"]
    );
    // The aborted record did reach the log: only the isolation level hides it.
    assert_eq!(
        read_all(&bootstrap, &topic, "read_uncommitted"),
        ["committed-1", "aborted", "committed-2"]
    );
}

/// The engine's producer, made with `settings` on top of the broker's address.
fn engine_producer(bootstrap: &str, settings: &[(&str, &str)]) -> KafkaStreamsProducer {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap);
    for (key, value) in settings {
        config.set(*key, *value);
    }
    KafkaStreamsProducer::new(&config, TIMEOUT).expect("producer")
}

/// Sends `records` through `producer`, as an engine thread sends a task's output.
fn send_all(producer: &mut KafkaStreamsProducer, records: &[ProducedRecord]) {
    let mut framed = ProducedRecords::new();
    for record in records {
        framed.push(record);
    }
    for (id, record) in framed.records().enumerate() {
        producer.send(&record, id).expect("send");
    }
}

/// Sends `records` through the engine's producer, made with `settings` on top of the broker's
/// address, and flushes it.
fn send_and_flush(bootstrap: &str, settings: &[(&str, &str)], records: &[ProducedRecord]) {
    let mut producer = engine_producer(bootstrap, settings);
    send_all(&mut producer, records);
    producer.flush().expect("flush");
}

/// A record with `value` for partition 0 of `topic`.
fn record_for(topic: &str, value: &str) -> ProducedRecord {
    ProducedRecord::new(
        topic,
        Some(0),
        Some(b"key".to_vec()),
        Some(value.as_bytes().to_vec()),
        0,
    )
}

/// The engine's producer lingers up to `linger.ms` to fill batches, and
/// a commit flushes it: what lingers is sent at once. A flush that waited for the linger here
/// (four minutes) would give up after the producer's timeout instead.
#[test]
fn a_flush_sends_what_lingers_without_waiting_for_the_linger() {
    let bootstrap = bootstrap_servers();
    let topic = unique_name("broker-smoke-linger");
    create_topic(&bootstrap, &topic);
    let lingering = record_for(&topic, "lingering");
    send_and_flush(&bootstrap, &[("linger.ms", "240000")], &[lingering]);
    assert_eq!(
        read_all(&bootstrap, &topic, "read_uncommitted"),
        ["lingering"]
    );
}

/// An abort purges the transaction's records that still linger and ends once their delivery
/// reports are served, which librdkafka leaves to the application: an abort that waited for
/// them on the thread that serves them would give up after the producer's timeout. The next
/// transaction commits its own records only.
#[test]
fn an_abort_purges_what_lingers_without_waiting_out_its_timeout() {
    let bootstrap = bootstrap_servers();
    let topic = unique_name("broker-smoke-abort");
    create_topic(&bootstrap, &topic);
    let transactional_id = unique_name("broker-smoke-engine-producer");
    let mut producer = engine_producer(
        &bootstrap,
        &[
            ("transactional.id", &transactional_id),
            // Below the transaction timeout (60 s), as librdkafka requires.
            ("linger.ms", "20000"),
        ],
    );

    send_all(&mut producer, &[record_for(&topic, "aborted")]);
    let started = Instant::now();
    producer.abort().expect("abort");
    assert!(
        started.elapsed() < TIMEOUT / 2,
        "the abort took {:?}",
        started.elapsed()
    );

    send_all(&mut producer, &[record_for(&topic, "committed")]);
    producer
        .commit(&BTreeMap::new(), None)
        .expect("commit after the abort");
    assert_eq!(
        read_all(&bootstrap, &topic, "read_committed"),
        ["committed"]
    );
}

/// What the engine's producer writes arrives as it was framed: key, value (a tombstone as
/// null), partition, timestamp, and headers in order (a null header value as null).
#[test]
fn a_produced_record_arrives_with_its_key_value_timestamp_and_headers() {
    let bootstrap = bootstrap_servers();
    let topic = unique_name("broker-smoke-fields");
    create_topic(&bootstrap, &topic);
    let mut with_headers = ProducedRecord::new(
        topic.as_str(),
        Some(0),
        Some(b"k1".to_vec()),
        Some(b"v1".to_vec()),
        1_700_000_000_123,
    );
    with_headers.headers = vec![
        Header {
            key: "origin".into(),
            value: Some(b"here".to_vec()),
        },
        Header {
            key: "nothing".into(),
            value: None,
        },
    ];
    let tombstone = ProducedRecord::new(topic.as_str(), Some(0), Some(b"k2".to_vec()), None, 5);
    send_and_flush(&bootstrap, &[], &[with_headers, tombstone]);

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", unique_name("broker-smoke-fields-reader"))
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(&topic, 0, Offset::Beginning)
        .expect("assignment");
    consumer.assign(&assignment).expect("assign");
    let deadline = Instant::now() + TIMEOUT;
    let mut read = Vec::new();
    while read.len() < 2 && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.expect("a record");
            let headers: Vec<(String, Option<Vec<u8>>)> = message
                .headers()
                .map(|headers| {
                    headers
                        .iter()
                        .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                        .collect()
                })
                .unwrap_or_default();
            read.push((
                message.key().map(<[u8]>::to_vec),
                message.payload().map(<[u8]>::to_vec),
                message.timestamp().to_millis(),
                headers,
            ));
        }
    }
    assert_eq!(
        read,
        [
            (
                Some(b"k1".to_vec()),
                Some(b"v1".to_vec()),
                Some(1_700_000_000_123),
                vec![
                    ("origin".to_string(), Some(b"here".to_vec())),
                    ("nothing".to_string(), None)
                ]
            ),
            (Some(b"k2".to_vec()), None, Some(5), vec![]),
        ]
    );
}

#[test]
fn a_fetcher_unassigns_what_it_fetches_and_lets_the_rest_of_a_list_be() {
    let bootstrap = bootstrap_servers();
    let topic = unique_name("unassigned");
    create_topic(&bootstrap, &topic);
    let fetcher = KafkaPartitionFetcher::new(
        ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("group.id", unique_name("unassigning")),
        TIMEOUT,
    )
    .expect("fetcher");
    let fetched = TopicPartition::new(topic.clone(), 0);
    let never_assigned = TopicPartition::new(topic, 1);
    fetcher
        .assign(std::slice::from_ref(&fetched), &BTreeMap::new())
        .expect("assign");
    assert_eq!(
        fetcher.assigned_partitions().unwrap(),
        std::slice::from_ref(&fetched)
    );

    // The group takes back a partition the fetcher never had along with one it has.
    fetcher
        .unassign(&[never_assigned.clone(), fetched.clone()])
        .expect("unassigning a list with a partition not assigned");
    assert_eq!(fetcher.assigned_partitions().unwrap(), []);
    // And after the thread's closing unassigned everything.
    fetcher
        .unassign(&[fetched, never_assigned])
        .expect("unassigning from an empty assignment");
}
