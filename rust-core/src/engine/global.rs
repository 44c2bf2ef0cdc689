//! Global stores: each holds every partition of one topic on every instance, is restored
//! before any task runs, and is then kept up to date by the instance's global thread, as
//! Kafka Streams' `GlobalStreamThread` does. Tasks read them; only the global thread
//! writes them.
//!
//! Stores live in `<state.dir>/<application.id>/global/rocksdb/<store>`, Kafka Streams'
//! layout. Where Kafka Streams keeps a global checkpoint file, each store records the
//! offsets of its topic's partitions in its own commits, atomically with the data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::config::EngineConfig;
use crate::engine::error::{Error, Result};
use crate::engine::internal_topics::ResolvedGlobalStore;
use crate::engine::restore::{RestoreListener, RESTORE_COMMIT_RECORDS};
use crate::engine::task::open_store;
use crate::kafka::{AssignedConsumer, ChangelogEvent, ChangelogReader, ConsumedRecord};
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
            partitions: (0..resolved.partitions)
                .map(|p| TopicPartition::new(description.topic.clone(), p))
                .collect(),
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

/// The global stores of an instance, restored; shared by the global thread and the tasks.
pub struct GlobalStores {
    stores: Vec<GlobalStore>,
    /// Where the global thread continues reading each partition (`None`: the log start).
    next_offsets: Vec<(TopicPartition, Option<i64>)>,
}

impl GlobalStores {
    /// Opens the global stores of `resolved` and brings each to the end of its topic.
    pub(crate) fn restore(
        resolved: &[ResolvedGlobalStore],
        config: &EngineConfig,
        resources: &RocksDbResources,
        listener: Option<&dyn RestoreListener>,
    ) -> Result<Self> {
        let mut stores = resolved
            .iter()
            .map(|r| GlobalStore::open(r, &config.application_dir(), resources))
            .collect::<Result<Vec<_>>>()?;
        let mut reader =
            ChangelogReader::new(&config.global_consumer_config(), config.client_timeout);
        let mut next_offsets = Vec::new();
        for store in &mut stores {
            next_offsets.extend(restore_store(store, &mut reader, resources, listener)?);
        }
        Ok(GlobalStores {
            stores,
            next_offsets,
        })
    }

    /// True when the topology has no global store.
    pub fn is_empty(&self) -> bool {
        self.stores.is_empty()
    }

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

/// Restores `store` from its committed offsets (or from the log start when it has none, or
/// one outside the log, after wiping it) to the end of each partition. Returns the offset
/// to continue from per partition.
fn restore_store(
    store: &mut GlobalStore,
    reader: &mut ChangelogReader,
    resources: &RocksDbResources,
    listener: Option<&dyn RestoreListener>,
) -> Result<Vec<(TopicPartition, Option<i64>)>> {
    let mut ranges = Vec::new();
    let mut usable = true;
    for partition in &store.partitions {
        let (log_start, log_end) = reader.watermarks(partition)?;
        let committed = store.store.committed_offset(partition).map_err(|e| {
            Error::store(
                format!("reading the offsets of global store {}", store.name),
                e,
            )
        })?;
        usable &= committed.is_none_or(|o| o + 1 >= log_start && o < log_end);
        ranges.push((partition.clone(), committed, log_start, log_end));
    }
    if !usable {
        store.wipe(resources)?;
    }
    let mut restored: BTreeMap<TopicPartition, u64> = BTreeMap::new();
    let mut next = Vec::new();
    for (partition, committed, log_start, log_end) in ranges {
        let start = match committed {
            Some(offset) if usable => offset + 1,
            _ => log_start,
        };
        if let Some(listener) = listener {
            listener.on_restore_start(&store.name, &partition, start, log_end);
        }
        if start < log_end {
            reader.start(&partition, start, None)?;
            restored.insert(partition.clone(), 0);
        } else if let Some(listener) = listener {
            listener.on_restore_end(&store.name, &partition, 0);
        }
        next.push((partition, Some(start)));
    }
    let mut applied: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    let mut uncommitted = 0u64;
    while !reader.is_idle() {
        for event in reader.poll(RESTORE_COMMIT_RECORDS as usize, MAX_POLL_WAIT)? {
            match event {
                ChangelogEvent::Record(record) => {
                    let partition = record.topic_partition();
                    applied.insert(partition.clone(), record.offset);
                    *restored.entry(partition).or_default() += 1;
                    store.apply(record)?;
                    uncommitted += 1;
                }
                ChangelogEvent::End(partition) => {
                    if let Some(listener) = listener {
                        let count = restored.get(&partition).copied().unwrap_or(0);
                        listener.on_restore_end(&store.name, &partition, count);
                    }
                }
            }
        }
        if uncommitted >= RESTORE_COMMIT_RECORDS {
            store.commit(&applied)?;
            uncommitted = 0;
        }
    }
    store.commit(&applied)?;
    for (partition, offset) in &mut next {
        if let Some(last) = applied.get(partition) {
            *offset = Some(last + 1);
        }
    }
    Ok(next)
}

/// Runs the global thread: applies every new record of the global topics to its store and
/// commits the stores every commit interval, or early when their uncommitted bytes exceed
/// `budget`. On `stop`, commits and closes the stores.
pub(crate) fn run(
    globals: Arc<GlobalStores>,
    config: Arc<EngineConfig>,
    budget: Option<u64>,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let consumer = AssignedConsumer::new(&config.global_consumer_config(), &globals.next_offsets)?;
    let store_of: BTreeMap<&str, &GlobalStore> = globals
        .stores
        .iter()
        .flat_map(|s| s.partitions.first().map(|p| (p.topic.as_str(), s)))
        .collect();
    let mut applied: BTreeMap<&str, BTreeMap<TopicPartition, i64>> = BTreeMap::new();
    let mut last_commit = Instant::now();
    let commit = |applied: &mut BTreeMap<&str, BTreeMap<TopicPartition, i64>>| -> Result<()> {
        for (name, offsets) in std::mem::take(applied) {
            globals
                .get(name)
                .expect("applied to a known store")
                .commit(&offsets)?;
        }
        Ok(())
    };
    let mut poll_failing_since: Option<Instant> = None;
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
        for record in records {
            let Some(store) = store_of.get(record.topic.as_str()) else {
                continue;
            };
            applied
                .entry(store.name.as_str())
                .or_default()
                .insert(record.topic_partition(), record.offset);
            store.apply(record)?;
        }
        let over_budget = budget.is_some_and(|max| {
            globals
                .stores
                .iter()
                .map(|s| s.store.approximate_uncommitted_bytes())
                .sum::<u64>()
                > max
        });
        if over_budget || last_commit.elapsed() >= config.commit_interval {
            last_commit = Instant::now();
            commit(&mut applied)?;
        }
    }
    commit(&mut applied)?;
    globals.close()
}
