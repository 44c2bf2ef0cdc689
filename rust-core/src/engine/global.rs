//! Global stores: each holds every partition of one topic on every instance, is restored
//! before any task runs, and is then kept up to date by the instance's global thread, as
//! Kafka Streams' `GlobalStreamThread` does. Tasks read them; only the global thread
//! writes them.
//!
//! Stores live in `<state.dir>/<application.id>/global/rocksdb/<store>`, Kafka Streams'
//! layout. Where Kafka Streams keeps a global checkpoint file, each store records the
//! offsets of its topic's partitions in its own commits, atomically with the data.
//!
//! When the topology's processors keep their stores, a [`GlobalProcessor`] keeps the global
//! stores too (Kafka Streams' global state machinery on the JVM) and the engine opens none:
//! the global thread reads the topics the same way, restores through the processor in
//! batches, hands it the records that arrive afterwards and tells it when to commit.
//!
//! Either way the global thread restores before anything else runs, and [`start`] returns
//! once it did, as `KafkaStreams.start()` returns once its global thread has restored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::engine::budget::UncommittedBytesBudget;
use crate::engine::config::EngineConfig;
use crate::engine::error::{Error, Result};
use crate::engine::internal_topics::ResolvedGlobalStore;
use crate::engine::processor::{GlobalProcessor, ProcessorFactory};
use crate::engine::restore::{RestoreListener, RESTORE_COMMIT_RECORDS};
use crate::engine::task::open_store;
use crate::kafka::{
    AssignedConsumer, ChangelogEvent, ChangelogReader, ConsumedRecord, RestoreConsumer,
};
use crate::store::format::changelog::{ChangelogValue, StoreValueLayout};
use crate::store::rocks::{destroy_store_dir, RocksDbResources};
use crate::store::{CommitMetadata, IsolationLevel, KeyValueStore, ReadView, TopicPartition};

/// Longest wait of one poll of the global thread; bounds how late a stop is noticed.
const MAX_POLL_WAIT: Duration = Duration::from_millis(100);

/// One global store.
pub struct GlobalStore {
    /// Store name.
    pub name: String,
    store: Arc<dyn KeyValueStore>,
    partitions: Vec<TopicPartition>,
    layout: StoreValueLayout,
    dir: Option<PathBuf>,
}

impl GlobalStore {
    fn open(
        resolved: &ResolvedGlobalStore,
        application_dir: &Path,
        resources: &RocksDbResources,
    ) -> Result<Self> {
        let description = &resolved.description;
        let dir = description.persistent.then(|| {
            application_dir
                .join("global")
                .join("rocksdb")
                .join(&description.name)
        });
        Ok(GlobalStore {
            name: description.name.clone(),
            store: open_store(&description.name, dir.as_deref(), resources)?,
            partitions: partitions_of(resolved),
            layout: description.value_layout.into(),
            dir,
        })
    }

    /// Read access for tasks. It sees every record the global thread applied, committed
    /// or not: under exactly-once the global topics are read `read_committed`, so nothing
    /// staged can be rolled back.
    pub fn reader(&self) -> ReadView {
        ReadView::new(Arc::clone(&self.store), IsolationLevel::ReadUncommitted)
    }

    fn wipe(&mut self, resources: &RocksDbResources) -> Result<()> {
        self.store.close().map_err(|e| {
            Error::store(format!("closing global store {} to wipe it", self.name), e)
        })?;
        if let Some(dir) = &self.dir {
            destroy_store_dir(dir)
                .map_err(|e| Error::store(format!("wiping global store {}", self.name), e))?;
        }
        self.store = open_store(&self.name, self.dir.as_deref(), resources)?;
        Ok(())
    }

    /// True when the store is loaded from `topic`.
    fn reads(&self, topic: &str) -> bool {
        self.partitions.first().is_some_and(|p| p.topic == topic)
    }

    /// Writes `record` as Kafka Streams' global table source does: a null key is skipped,
    /// a null value deletes.
    fn apply(&self, record: ConsumedRecord) -> Result<()> {
        let Some(key) = record.key else {
            return Ok(());
        };
        let value = self.layout.from_changelog(&ChangelogValue {
            value: record.value,
            timestamp: record.timestamp,
            headers: record.headers,
        });
        self.store
            .put(key, value)
            .map_err(|e| Error::store(format!("updating global store {}", self.name), e))
    }

    /// Commits the staged writes with the last applied offset of each partition in
    /// `applied`; does nothing when nothing was applied.
    fn commit(&self, applied: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        if applied.is_empty() {
            // An empty offset map would erase every recorded offset.
            return Ok(());
        }
        let metadata =
            CommitMetadata::with_offsets(applied.iter().map(|(p, o)| (p.clone(), Some(*o))));
        self.store
            .commit(&metadata)
            .map_err(|e| Error::store(format!("committing global store {}", self.name), e))
    }
}

/// The global stores the engine keeps, restored; shared by the global thread and the tasks.
/// Empty when the topology has none, or when a [`GlobalProcessor`] keeps them.
#[derive(Default)]
pub struct GlobalStores {
    stores: Vec<GlobalStore>,
}

impl GlobalStores {
    /// The store called `name`.
    pub fn get(&self, name: &str) -> Option<&GlobalStore> {
        self.stores.iter().find(|s| s.name == name)
    }

    fn close(&self) -> Result<()> {
        for store in &self.stores {
            store
                .store
                .close()
                .map_err(|e| Error::store(format!("closing global store {}", store.name), e))?;
        }
        Ok(())
    }
}

/// Who keeps the global stores.
enum Keeper {
    /// The engine, which shares them with the tasks.
    Engine(Arc<GlobalStores>),
    /// The processor the factory created for them.
    Processor(Box<dyn GlobalProcessor>),
}

impl Keeper {
    /// The stores tasks read: none when a processor keeps them.
    fn shared(&self) -> Arc<GlobalStores> {
        match self {
            Keeper::Engine(stores) => Arc::clone(stores),
            Keeper::Processor(_) => Arc::new(GlobalStores::default()),
        }
    }
}

/// What the global thread needs to restore and keep the global stores.
pub(crate) struct GlobalThreadSetup {
    pub stores: Vec<ResolvedGlobalStore>,
    pub processor_keeps_stores: bool,
    pub factory: Arc<dyn ProcessorFactory>,
    pub config: Arc<EngineConfig>,
    pub resources: RocksDbResources,
    pub listener: Option<Arc<dyn RestoreListener>>,
    /// `statestore.uncommitted.max.bytes`, of which the thread keeps to its share.
    pub budget: Arc<UncommittedBytesBudget>,
}

/// Starts the global thread, which restores the global stores and then keeps them up to
/// date until `stop` is set; returns once they are restored, with the stores tasks read.
/// Without global stores no thread starts. A failed restore is returned, and the thread
/// has ended.
pub(crate) fn start(
    setup: GlobalThreadSetup,
    stop: Arc<AtomicBool>,
) -> Result<(Arc<GlobalStores>, Option<JoinHandle<Result<()>>>)> {
    if setup.stores.is_empty() {
        return Ok((Arc::new(GlobalStores::default()), None));
    }
    let (restored_tx, restored_rx) = mpsc::channel();
    let name = format!("{}-GlobalStreamThread", setup.config.application_id);
    let handle = thread::Builder::new()
        .name(name)
        .spawn(move || {
            let (keeper, next_offsets) = match restore(&setup) {
                Ok(restored) => restored,
                Err(error) => {
                    let _ = restored_tx.send(Err(error));
                    return Ok(());
                }
            };
            if restored_tx.send(Ok(keeper.shared())).is_err() {
                return Ok(());
            }
            run(keeper, &next_offsets, &setup.config, &setup.budget, &stop)
        })
        .map_err(Error::StateDirectory)?;
    match restored_rx.recv() {
        Ok(Ok(shared)) => Ok((shared, Some(handle))),
        Ok(Err(error)) => {
            let _ = handle.join();
            Err(error)
        }
        // The thread ended without a word: it panicked, and joining says how.
        Err(_) => Err(crate::engine::runtime::joined(handle)
            .err()
            .unwrap_or_else(|| Error::Topology("the global thread ended while restoring".into()))),
    }
}

/// Opens the global stores (or creates their processor) and brings each partition to the
/// end of its topic. Returns their keeper and where to continue reading each partition.
fn restore(setup: &GlobalThreadSetup) -> Result<(Keeper, Vec<(TopicPartition, Option<i64>)>)> {
    let config = &setup.config;
    let mut reader = ChangelogReader::new(&config.global_consumer_config(), config.client_timeout);
    let listener = setup.listener.as_deref();
    if setup.processor_keeps_stores {
        let mut processor = create_processor(setup, &mut reader)?;
        return match restore_kept(processor.as_mut(), &setup.stores, &mut reader, listener) {
            Ok(next) => Ok((Keeper::Processor(processor), next)),
            Err(error) => {
                // The stores it opened are closed as they are; the next start restores them.
                let _ = processor.close(false);
                Err(error)
            }
        };
    }
    let mut stores = setup
        .stores
        .iter()
        .map(|r| GlobalStore::open(r, &config.application_dir(), &setup.resources))
        .collect::<Result<Vec<_>>>()?;
    let mut next_offsets = Vec::new();
    for store in &mut stores {
        next_offsets.extend(restore_store(
            store,
            &mut reader,
            &setup.resources,
            listener,
        )?);
    }
    Ok((
        Keeper::Engine(Arc::new(GlobalStores { stores })),
        next_offsets,
    ))
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

/// Restores `store` from its committed offsets (or from the log start when it has none, or
/// one outside the log, after wiping it) to the end of each partition. Returns the offset
/// to continue from per partition.
fn restore_store(
    store: &mut GlobalStore,
    reader: &mut ChangelogReader,
    resources: &RocksDbResources,
    listener: Option<&dyn RestoreListener>,
) -> Result<Vec<(TopicPartition, Option<i64>)>> {
    let mut plans = Vec::new();
    let mut all_usable = true;
    for partition in &store.partitions {
        let (log_start, log_end) = reader.watermarks(partition)?;
        let committed = store.store.committed_offset(partition).map_err(|e| {
            Error::store(
                format!("reading the offsets of global store {}", store.name),
                e,
            )
        })?;
        all_usable &= usable(committed, log_start, log_end);
        plans.push((partition.clone(), committed, log_start, log_end));
    }
    if !all_usable {
        store.wipe(resources)?;
    }
    let ranges = ranges(plans, all_usable);
    let name = store.name.clone();
    let mut applied: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    let mut uncommitted = 0u64;
    let next = read_to_end(
        &ranges,
        |_| &name,
        reader,
        listener,
        |records| {
            for record in records {
                applied.insert(record.topic_partition(), record.offset);
                store.apply(record)?;
                uncommitted += 1;
            }
            if uncommitted >= RESTORE_COMMIT_RECORDS {
                store.commit(&applied)?;
                uncommitted = 0;
            }
            Ok(())
        },
    )?;
    store.commit(&applied)?;
    Ok(next)
}

/// Restores the global stores a processor keeps: from the offsets they committed, or, when
/// one is outside its topic, from the start of every partition after wiping them all.
fn restore_kept(
    processor: &mut dyn GlobalProcessor,
    stores: &[ResolvedGlobalStore],
    reader: &mut ChangelogReader,
    listener: Option<&dyn RestoreListener>,
) -> Result<Vec<(TopicPartition, Option<i64>)>> {
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
        processor.restore(records).map_err(Error::GlobalProcessor)
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
    mut apply: impl FnMut(Vec<ConsumedRecord>) -> Result<()>,
) -> Result<Vec<(TopicPartition, Option<i64>)>> {
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
            reader.start(&range.partition, range.start, None)?;
            ends.insert(range.partition.clone(), range.end);
        } else if let Some(listener) = listener {
            listener.on_restore_end(store, &range.partition, 0);
        }
    }
    while !reader.is_idle() {
        let mut batch = Vec::new();
        let mut ended = Vec::new();
        for event in reader.poll(RESTORE_COMMIT_RECORDS as usize, MAX_POLL_WAIT)? {
            match event {
                ChangelogEvent::Record(record) => {
                    let partition = record.topic_partition();
                    next.insert(partition.clone(), record.offset + 1);
                    *restored.entry(partition).or_default() += 1;
                    batch.push(record);
                }
                ChangelogEvent::End(partition) => ended.push(partition),
            }
        }
        let mut in_batch: Vec<TopicPartition> = batch.iter().map(|r| r.topic_partition()).collect();
        in_batch.dedup();
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
/// their keeper and commits every commit interval, or early when the uncommitted bytes
/// exceed the thread's share of `budget`. On `stop`, commits and closes the stores.
fn run(
    mut keeper: Keeper,
    next_offsets: &[(TopicPartition, Option<i64>)],
    config: &EngineConfig,
    budget: &UncommittedBytesBudget,
    stop: &AtomicBool,
) -> Result<()> {
    let consumer = AssignedConsumer::new(&config.global_consumer_config(), next_offsets)?;
    let mut applied: BTreeMap<String, BTreeMap<TopicPartition, i64>> = BTreeMap::new();
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
            keeper.apply(records, &mut applied)?;
            let over_budget = budget.share().is_some_and(|max| keeper.uncommitted_bytes() > max);
            if over_budget || last_commit.elapsed() >= config.commit_interval {
                last_commit = Instant::now();
                keeper.commit(&mut applied)?;
            }
        }
        keeper.commit(&mut applied)
    })();
    let closed = keeper.close(outcome.is_ok());
    outcome.and(closed)
}

impl Keeper {
    /// Applies `records`, remembering in `applied` the last offset of each partition per
    /// engine store.
    fn apply(
        &mut self,
        records: Vec<ConsumedRecord>,
        applied: &mut BTreeMap<String, BTreeMap<TopicPartition, i64>>,
    ) -> Result<()> {
        match self {
            Keeper::Engine(globals) => {
                for record in records {
                    let Some(store) = globals.stores.iter().find(|s| s.reads(&record.topic)) else {
                        continue;
                    };
                    applied
                        .entry(store.name.clone())
                        .or_default()
                        .insert(record.topic_partition(), record.offset);
                    store.apply(record)?;
                }
                Ok(())
            }
            Keeper::Processor(_) if records.is_empty() => Ok(()),
            Keeper::Processor(processor) => {
                processor.process(records).map_err(Error::GlobalProcessor)
            }
        }
    }

    fn uncommitted_bytes(&self) -> u64 {
        match self {
            Keeper::Engine(globals) => globals
                .stores
                .iter()
                .map(|s| s.store.approximate_uncommitted_bytes())
                .sum(),
            Keeper::Processor(processor) => processor.uncommitted_bytes(),
        }
    }

    fn commit(
        &mut self,
        applied: &mut BTreeMap<String, BTreeMap<TopicPartition, i64>>,
    ) -> Result<()> {
        match self {
            Keeper::Engine(globals) => {
                for (name, offsets) in std::mem::take(applied) {
                    globals
                        .get(&name)
                        .expect("applied to a known store")
                        .commit(&offsets)?;
                }
                Ok(())
            }
            Keeper::Processor(processor) => processor.commit().map_err(Error::GlobalProcessor),
        }
    }

    /// Closes the stores; `clean` after a last commit.
    fn close(&mut self, clean: bool) -> Result<()> {
        match self {
            Keeper::Engine(globals) => globals.close(),
            Keeper::Processor(processor) => processor.close(clean).map_err(Error::GlobalProcessor),
        }
    }
}
