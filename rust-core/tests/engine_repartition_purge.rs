//! The engine deletes the records of repartition topics its tasks committed
//! (`repartition.purge.interval.ms`), as Kafka Streams does, and never those of input topics
//! or changelogs; the counter's output stays correct.
//!
//! Run through `compat-tests/local-broker/with-broker`, which sets SLUICE_BOOTSTRAP_SERVERS.

mod engine_support;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use engine_support::*;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::ClientConfig;
use sluice_core::engine::topology::{changelog_topic_name, repartition_topic_name};
use sluice_core::engine::EngineConfig;

const WAIT: Duration = Duration::from_secs(90);
const PARTITIONS: i32 = 4;

/// (log start offset, end offset) of each partition of `topic`.
fn watermarks(topic: &str) -> Vec<(i64, i64)> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .create()
        .expect("watermark consumer");
    (0..PARTITIONS)
        .map(|partition| {
            consumer
                .fetch_watermarks(topic, partition, Duration::from_secs(10))
                .expect("watermarks")
        })
        .collect()
}

fn committed_repartition_records_are_purged(guarantee: &str, isolation: &str) {
    let application_id = unique(&format!("purge-{guarantee}"));
    let input = format!("{application_id}-input");
    let output = format!("{application_id}-output");
    create_topic(&input, PARTITIONS);
    create_topic(&output, PARTITIONS);
    let state = tempfile::tempdir().unwrap();
    let words = words(0, 2_000, 37);
    produce_words(&input_producer(), &input, 0, &words);

    let mut properties = counter_properties(&application_id, guarantee, state.path());
    properties.insert("commit.interval.ms".into(), "100".into());
    properties.insert("repartition.purge.interval.ms".into(), "200".into());
    let factory = Arc::new(CounterFactory::new(&application_id, &output, state.path()));
    let engine = start_engine(
        EngineConfig::from_properties(&properties).unwrap(),
        &counter_topology(&input, &output),
        Arc::clone(&factory) as _,
        None,
        false,
    )
    .expect("engine starts");
    wait_until("the counter to process its input", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        factory.counted.load(Ordering::Relaxed) >= 2_000
    });

    let repartition = repartition_topic_name(&application_id, BY_WORD);
    wait_until("every repartition partition to be purged", WAIT, || {
        assert!(!engine.has_failed(), "engine thread stopped");
        watermarks(&repartition)
            .iter()
            .all(|&(start, end)| end == 0 || start > 0)
    });
    let written: i64 = watermarks(&repartition).iter().map(|(_, end)| end).sum();
    assert!(written > 0, "the repartition topic holds records");
    assert_eq!(engine.metrics().failed_purges, 0);
    engine.close().expect("clean close");

    let changelog = changelog_topic_name(&application_id, COUNTS_STORE);
    for topic in [&input, &changelog] {
        assert!(
            watermarks(topic).iter().all(|&(start, _)| start == 0),
            "records of {topic} were deleted"
        );
    }
    let counts = read_all(&output, isolation);
    assert_eq!(verify_counts(&counts, &words), 2_000);
}

#[test]
fn exactly_once_purges_committed_repartition_records() {
    committed_repartition_records_are_purged("exactly_once_v2", "read_committed");
}

#[test]
fn at_least_once_purges_committed_repartition_records() {
    committed_repartition_records_are_purged("at_least_once", "read_uncommitted");
}
