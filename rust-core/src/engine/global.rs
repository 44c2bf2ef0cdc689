//! Global stores: each holds every partition of one topic on every instance, is restored
//! before any task runs, and is then kept up to date by the instance's global thread, as
//! Kafka Streams' `GlobalStreamThread` does. Tasks read them; only the global thread
//! writes them.
//!
//! A [`GlobalProcessor`] keeps the global stores (Kafka Streams' global state machinery on
//! the JVM): the global thread reads every partition of the global topics, restores through
//! the processor in batches from the offsets the stores committed, hands it the records that
//! arrive afterwards and tells it when to commit. The thread restores before anything else
//! runs, and [`start`] returns once it did, as `KafkaStreams.start()` returns once its global
//! thread has restored.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::engine::budget::UncommittedBytesBudget;
use crate::engine::config::EngineConfig;
use crate::engine::error::{joined, Error, Result};
use crate::engine::processor::{GlobalProcessor, ProcessorFactory};
use crate::engine::restore::RestoreListener;
use crate::engine::topology::ResolvedGlobalStore;
use crate::kafka::{
    AssignedConsumer, ChangelogEvent, ChangelogReader, ReadTo, RecordRun, RestoreConsumer,
};
use crate::store::TopicPartition;

/// Longest wait of one poll of the global thread; bounds how late a stop is noticed.
const MAX_POLL_WAIT: Duration = Duration::from_millis(100);
/// Records one restore poll reads at most: the largest batch handed to the processor.
const RESTORE_BATCH_RECORDS: usize = 10_000;

/// Where the global thread goes on reading each partition once restored.
type NextOffsets = Vec<(TopicPartition, Option<i64>)>;

/// What the global thread needs to restore and keep the global stores.
pub(crate) struct GlobalThreadSetup {
    pub stores: Vec<ResolvedGlobalStore>,
    pub factory: Arc<dyn ProcessorFactory>,
    pub config: Arc<EngineConfig>,
    pub listener: Option<Arc<dyn RestoreListener>>,
    /// `statestore.uncommitted.max.bytes`, of which the thread keeps to its share.
    pub budget: Arc<UncommittedBytesBudget>,
}

/// Starts the global thread, which restores the global stores and then keeps them up to
/// date until `stop` is set; returns once they are restored. Without global stores no
/// thread starts. A failed restore is returned, and the thread has ended.
pub(crate) fn start(
    setup: GlobalThreadSetup,
    stop: Arc<AtomicBool>,
) -> Result<Option<JoinHandle<Result<()>>>> {
    if setup.stores.is_empty() {
        return Ok(None);
    }
    let (restored_tx, restored_rx) = mpsc::channel();
    let name = format!("{}-GlobalStreamThread", setup.config.application_id);
    let handle = thread::Builder::new()
        .name(name)
        .spawn(move || {
            let (processor, next_offsets) = restore(&setup)?;
            if restored_tx.send(()).is_err() {
                return Ok(());
            }
            run(
                processor,
                &next_offsets,
                &setup.config,
                &setup.budget,
                &stop,
            )
        })
        .map_err(Error::ThreadSpawn)?;
    match restored_rx.recv() {
        Ok(()) => Ok(Some(handle)),
        // The thread ended before it restored: its restore failed or it panicked.
        Err(_) => joined(handle).map(|()| None),
    }
}

/// Creates the processor of the global stores and brings each partition to the end of its
/// topic through it. Returns the processor and where to continue reading each partition.
fn restore(setup: &GlobalThreadSetup) -> Result<(Box<dyn GlobalProcessor>, NextOffsets)> {
    let config = &setup.config;
    let mut reader = ChangelogReader::new(&config.global_consumer_config(), config.client_timeout);
    let listener = setup.listener.as_deref();
    let mut processor = create_processor(setup, &mut reader)?;
    match restore_through(processor.as_mut(), &setup.stores, &mut reader, listener) {
        Ok(next) => Ok((processor, next)),
        Err(error) => {
            // The stores it opened are closed as they are; the next start restores them.
            let _ = processor.close(false);
            Err(error)
        }
    }
}

fn create_processor(
    setup: &GlobalThreadSetup,
    reader: &mut ChangelogReader,
) -> Result<Box<dyn GlobalProcessor>> {
    let mut log_starts = BTreeMap::new();
    for partition in setup.stores.iter().flat_map(partitions_of) {
        let (log_start, _) = reader.watermarks(&partition)?;
        log_starts.insert(partition, log_start);
    }
    setup
        .factory
        .create_global(&log_starts)
        .map_err(Error::GlobalProcessor)
}

/// Every partition of the topic `resolved` is loaded from.
fn partitions_of(resolved: &ResolvedGlobalStore) -> Vec<TopicPartition> {
    (0..resolved.partitions)
        .map(|p| TopicPartition::new(resolved.description.topic.clone(), p))
        .collect()
}

/// True when a store at committed `offset` can continue from the topic partition
/// `[log_start, log_end)`: its next record is still in the log and it is not ahead of it.
fn usable(committed: Option<i64>, log_start: i64, log_end: i64) -> bool {
    committed.is_none_or(|o| o + 1 >= log_start && o < log_end)
}

/// Where a partition is restored from and up to (exclusive).
struct Range {
    partition: TopicPartition,
    start: i64,
    end: i64,
}

/// Restores the global stores through their processor: from the offsets they committed, or,
/// when one is outside its topic, from the start of every partition after wiping them all.
fn restore_through(
    processor: &mut dyn GlobalProcessor,
    stores: &[ResolvedGlobalStore],
    reader: &mut ChangelogReader,
    listener: Option<&dyn RestoreListener>,
) -> Result<NextOffsets> {
    let committed = processor
        .committed_offsets()
        .map_err(Error::GlobalProcessor)?;
    let mut plans = Vec::new();
    let mut all_usable = true;
    for partition in stores.iter().flat_map(partitions_of) {
        let (log_start, log_end) = reader.watermarks(&partition)?;
        let offset = committed.get(&partition).copied().flatten();
        all_usable &= usable(offset, log_start, log_end);
        plans.push((partition, offset, log_start, log_end));
    }
    if !all_usable {
        processor.wipe_state().map_err(Error::GlobalProcessor)?;
    }
    let store_of: BTreeMap<&str, &str> = stores
        .iter()
        .map(|s| (s.description.topic.as_str(), s.description.name.as_str()))
        .collect();
    let ranges = ranges(plans, all_usable);
    let store_name = |partition: &TopicPartition| store_of[partition.topic.as_str()];
    read_to_end(&ranges, store_name, reader, listener, |records| {
        processor.restore(&records).map_err(Error::GlobalProcessor)
    })
}

/// Each partition's range: from past its committed offset when every offset is `usable`,
/// otherwise from its log start.
fn ranges(plans: Vec<(TopicPartition, Option<i64>, i64, i64)>, usable: bool) -> Vec<Range> {
    plans
        .into_iter()
        .map(|(partition, committed, log_start, log_end)| Range {
            partition,
            start: match committed {
                Some(offset) if usable => offset + 1,
                _ => log_start,
            },
            end: log_end,
        })
        .collect()
}

/// Reads every range to its end, handing each poll's records to `apply` and telling
/// `listener` as Kafka Streams' global state manager tells its restore listener: start,
/// each batch, end. Returns the offset to continue from per partition.
fn read_to_end<'a>(
    ranges: &[Range],
    store_name: impl Fn(&TopicPartition) -> &'a str,
    reader: &mut ChangelogReader,
    listener: Option<&dyn RestoreListener>,
    mut apply: impl FnMut(Vec<RecordRun>) -> Result<()>,
) -> Result<NextOffsets> {
    let mut ends: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    let mut restored: BTreeMap<TopicPartition, u64> = BTreeMap::new();
    let mut next: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    for range in ranges {
        let store = store_name(&range.partition);
        if let Some(listener) = listener {
            listener.on_restore_start(store, &range.partition, range.start, range.end);
        }
        next.insert(range.partition.clone(), range.start);
        if range.start < range.end {
            reader.start(&range.partition, range.start, ReadTo::End)?;
            ends.insert(range.partition.clone(), range.end);
        } else if let Some(listener) = listener {
            listener.on_restore_end(store, &range.partition, 0);
        }
    }
    while !reader.is_idle() {
        let mut batch = Vec::new();
        let mut ended = Vec::new();
        for event in reader.poll(RESTORE_BATCH_RECORDS, MAX_POLL_WAIT)? {
            match event {
                ChangelogEvent::Records(run) => {
                    let partition = run.partition.clone();
                    if let Some(last) = run.last_offset() {
                        next.insert(partition.clone(), last + 1);
                    }
                    *restored.entry(partition).or_default() += run.len() as u64;
                    batch.push(run);
                }
                ChangelogEvent::End(partition) => ended.push(partition),
            }
        }
        let mut in_batch: Vec<TopicPartition> = Vec::new();
        for run in &batch {
            if !in_batch.contains(&run.partition) {
                in_batch.push(run.partition.clone());
            }
        }
        if !batch.is_empty() {
            apply(batch)?;
        }
        if let Some(listener) = listener {
            for partition in in_batch {
                let remaining = (ends[&partition] - next[&partition]).max(0) as u64;
                let count = restored[&partition];
                listener.on_batch_restored(store_name(&partition), &partition, count, remaining);
            }
            for partition in ended {
                let count = restored.get(&partition).copied().unwrap_or(0);
                listener.on_restore_end(store_name(&partition), &partition, count);
            }
        }
    }
    Ok(next.into_iter().map(|(p, o)| (p, Some(o))).collect())
}

/// Runs the global thread after restore: hands every new record of the global topics to
/// the processor and has it commit every commit interval, or early when its uncommitted
/// bytes exceed the thread's share of `budget`. On `stop`, it commits and closes the stores.
fn run(
    mut processor: Box<dyn GlobalProcessor>,
    next_offsets: &[(TopicPartition, Option<i64>)],
    config: &EngineConfig,
    budget: &UncommittedBytesBudget,
    stop: &AtomicBool,
) -> Result<()> {
    let consumer = AssignedConsumer::new(&config.global_consumer_config(), next_offsets)?;
    let mut last_commit = Instant::now();
    let mut poll_failing_since: Option<Instant> = None;
    let outcome = (|| -> Result<()> {
        while !stop.load(Ordering::Relaxed) {
            let records = match consumer.poll(config.max_poll_records, MAX_POLL_WAIT) {
                Ok(records) => {
                    poll_failing_since = None;
                    records
                }
                Err(error) => {
                    // librdkafka retries by itself; give up only once the client timeout passed.
                    let since = *poll_failing_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= config.client_timeout {
                        return Err(Error::Kafka(error));
                    }
                    Vec::new()
                }
            };
            if !records.is_empty() {
                processor
                    .process(&records)
                    .map_err(Error::GlobalProcessor)?;
            }
            let over_budget = budget
                .share()
                .is_some_and(|max| processor.uncommitted_bytes() > max);
            if over_budget || last_commit.elapsed() >= config.commit_interval {
                last_commit = Instant::now();
                processor.commit().map_err(Error::GlobalProcessor)?;
            }
        }
        processor.commit().map_err(Error::GlobalProcessor)
    })();
    let closed = processor
        .close(outcome.is_ok())
        .map_err(Error::GlobalProcessor);
    outcome.and(closed)
}
