//! Counters an engine instance exposes, summed over its threads, and how far behind the
//! partitions they read each thread's consumers are.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::store::TopicPartition;

/// Each stream thread's lag behind the end of each partition one of its consumers reads, by
/// thread index.
pub type LagsByThread = BTreeMap<usize, BTreeMap<TopicPartition, i64>>;

/// Each stream thread's lags behind what its two consumers read.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ConsumerLags {
    /// The main consumer's: behind the input partitions of the thread's running tasks.
    pub main: LagsByThread,
    /// The restore consumer's: behind the changelog partitions it restores or follows.
    pub restore: LagsByThread,
}

/// Engine counters, all monotonic, and the threads' lags.
#[derive(Debug, Default)]
pub struct EngineMetrics {
    /// Behind the input partitions of each thread's running tasks, as the thread computed them
    /// on its last turn: its main consumer's `records-lag`.
    input_lags: Mutex<LagsByThread>,
    /// Behind the changelog partitions each thread's restore consumer reads, as its last read
    /// left them: the restore consumer's `records-lag`. Kept when it stops reading, as Kafka's
    /// consumer keeps a partition's metric until it next polls.
    restore_lags: Mutex<LagsByThread>,
    records_processed: AtomicU64,
    commits: AtomicU64,
    interval_commits: AtomicU64,
    early_commits: AtomicU64,
    aborted_transactions: AtomicU64,
    rejoins: AtomicU64,
    corrupted_stores: AtomicU64,
    failed_purges: AtomicU64,
}

/// What started a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommitTrigger {
    /// `commit.interval.ms` passed.
    Interval,
    /// The uncommitted-bytes budget ran out first.
    Budget,
    /// Tasks are leaving the thread: revoked partitions or a clean close.
    TaskHandover,
    /// A task asked for it (`ProcessorContext#commit`).
    Requested,
}

/// A snapshot of [`EngineMetrics`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Records handed to task processors (including records later rolled back).
    pub records_processed: u64,
    /// Successful commits, whatever started them.
    pub commits: u64,
    /// Commits started because `commit.interval.ms` passed.
    pub interval_commits: u64,
    /// Commits started by the uncommitted-bytes budget before the commit interval.
    pub early_commits: u64,
    /// Transactions aborted and rolled back.
    pub aborted_transactions: u64,
    /// Times a thread closed its tasks dirty and rejoined the group (fenced).
    pub rejoins: u64,
    /// Stores found corrupt while processing, wiped and restored from their changelog.
    pub corrupted_stores: u64,
    /// Deletions of committed repartition records that failed; they are best effort, as in
    /// Kafka Streams, and the next purge asks again.
    pub failed_purges: u64,
}

impl EngineMetrics {
    /// The current values.
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            records_processed: self.records_processed.load(Ordering::Relaxed),
            commits: self.commits.load(Ordering::Relaxed),
            interval_commits: self.interval_commits.load(Ordering::Relaxed),
            early_commits: self.early_commits.load(Ordering::Relaxed),
            aborted_transactions: self.aborted_transactions.load(Ordering::Relaxed),
            rejoins: self.rejoins.load(Ordering::Relaxed),
            corrupted_stores: self.corrupted_stores.load(Ordering::Relaxed),
            failed_purges: self.failed_purges.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn processed(&self, records: u64) {
        self.records_processed.fetch_add(records, Ordering::Relaxed);
    }

    pub(crate) fn committed(&self, trigger: CommitTrigger) {
        self.commits.fetch_add(1, Ordering::Relaxed);
        let by_trigger = match trigger {
            CommitTrigger::Interval => Some(&self.interval_commits),
            CommitTrigger::Budget => Some(&self.early_commits),
            CommitTrigger::TaskHandover | CommitTrigger::Requested => None,
        };
        if let Some(counter) = by_trigger {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn aborted(&self) {
        self.aborted_transactions.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn rejoined(&self) {
        self.rejoins.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn store_corrupted(&self) {
        self.corrupted_stores.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn purge_failed(&self) {
        self.failed_purges.fetch_add(1, Ordering::Relaxed);
    }

    /// Each running stream thread's lags behind its input partitions and behind the changelogs
    /// it restores or follows.
    pub fn consumer_lags(&self) -> ConsumerLags {
        ConsumerLags {
            main: locked(&self.input_lags).clone(),
            restore: locked(&self.restore_lags).clone(),
        }
    }

    /// Thread `thread`'s input lags are `lags` now; it has no others.
    pub(crate) fn lags_found(&self, thread: usize, lags: BTreeMap<TopicPartition, i64>) {
        locked(&self.input_lags).insert(thread, lags);
    }

    /// Thread `thread`'s changelog lags are `lags` now; it has no others.
    pub(crate) fn restore_lags_found(&self, thread: usize, lags: BTreeMap<TopicPartition, i64>) {
        locked(&self.restore_lags).insert(thread, lags);
    }

    /// Thread `thread` stopped: its consumers, and their lags, are gone.
    pub(crate) fn thread_stopped(&self, thread: usize) {
        locked(&self.input_lags).remove(&thread);
        locked(&self.restore_lags).remove(&thread);
    }
}

fn locked(lags: &Mutex<LagsByThread>) -> MutexGuard<'_, LagsByThread> {
    lags.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
