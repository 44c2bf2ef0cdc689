//! One engine thread: a group member, the fetcher of what it is assigned, the
//! [`TaskManager`] of the tasks assigned to it, and the loop that restores, processes,
//! punctuates and commits them (the commit barrier is
//! [`CommitBarrier`](crate::engine::commit::CommitBarrier)).
//!
//! The task manager sits behind a mutex inside the member's rebalance listener, because
//! rebalance callbacks run inside the member's poll and must commit or close tasks. The
//! loop takes the lock only between polls, so the two never contend.
//!
//! Whether the instance is paused (`KafkaStreams.pause`) is looked at before each poll and
//! before processing what it returned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::engine::error::{Error, Result};
use crate::engine::freed_memory;
use crate::engine::processor::LoopTurn;
use crate::engine::task_manager::{rewind_to_first, TaskManager, ThreadShared};
use crate::engine::topology::ResolvedTopology;
use crate::kafka::{
    record_count, ClientError, GroupConsumer, GroupMember, KafkaFailure, PartitionFetcher,
    RebalanceListener,
};
use crate::store::TopicPartition;

/// Longest wait of one poll while idle; bounds how late a stop request is noticed.
const MAX_POLL_WAIT: Duration = Duration::from_millis(100);
/// The longest a poll waits for records while the member joins the group or rebalances:
/// how often the member is served then, at most as often as it serves itself.
const GROUP_POLL_WAIT: Duration = Duration::from_millis(10);

/// A static member fenced again this soon after it joined with a new consumer shares its
/// `group.instance.id` with another running member: the thread then fails, as Kafka
/// Streams' does on a `FencedInstanceIdException`.
const FENCED_AGAIN_WITHIN: Duration = Duration::from_secs(60);

/// Runs thread `index` (1-based) until `stop` is set or it fails.
pub(crate) fn run(shared: Arc<ThreadShared>, index: usize, stop: Arc<AtomicBool>) -> Result<()> {
    let listener = Arc::new(ThreadListener {
        manager: Mutex::new(TaskManager::new(Arc::clone(&shared), index)?),
        fetcher: shared.clients.fetcher(index)?,
    });
    let mut joined_anew_at: Option<Instant> = None;
    loop {
        let subscribed = shared.topology();
        let member = shared.clients.group_member(
            index,
            Arc::clone(&listener) as _,
            &subscribed.source_topics(),
        )?;
        let consumer = listener.consumer(member.as_ref());
        let result = run_loop(&shared, &listener, consumer, subscribed, &stop)
            .map_err(|error| with_fatal_cause(error, member.as_ref()));
        // librdkafka fences a static member itself when it comes back from a session that
        // expired on both sides (a request under its old member id reaches the coordinator
        // after it joined anew), and its consumer is out of use for good. The group still
        // expects this instance: like Kafka's Java consumer after its session expired, the
        // thread gives its tasks up as lost and joins again, with a new member.
        let join_anew = result.is_err()
            && member
                .fatal_error()
                .is_some_and(|e| e.protocol_code() == ClientError::FENCED_INSTANCE_ID)
            && joined_anew_at.is_none_or(|at| at.elapsed() >= FENCED_AGAIN_WITHIN);
        if let Err(error) = &result {
            if join_anew {
                log::warn!(
                    "stream thread {index} was fenced out of the group; it joins again: {error}"
                );
            } else {
                log::error!("stream thread {index} failed: {error}");
            }
        }
        let closed = listener.lock().close_all(consumer, result.is_ok());
        // Dropping the member leaves the group; its revocation finds no task left.
        drop(member);
        if join_anew && closed.is_ok() {
            joined_anew_at = Some(Instant::now());
            shared.metrics.rejoined();
            continue;
        }
        shared.metrics.thread_stopped(index);
        return result.and(closed);
    }
}

/// `error` with the cause of the consumer's fatal error in place of librdkafka's "Local:
/// Fatal error", which says nothing of what happened.
fn with_fatal_cause(error: Error, consumer: &dyn GroupMember) -> Error {
    match (error, consumer.fatal_error()) {
        (Error::Kafka(failure), Some(cause)) => {
            Error::Kafka(KafkaFailure::new(failure.context, cause))
        }
        (error, _) => error,
    }
}

fn run_loop(
    shared: &ThreadShared,
    listener: &ThreadListener,
    consumer: GroupConsumer<'_>,
    mut subscribed: Arc<ResolvedTopology>,
    stop: &AtomicBool,
) -> Result<()> {
    let mut poll_failing_since: Option<Instant> = None;
    while !stop.load(Ordering::Relaxed) {
        let turn_start = Instant::now();
        let topology = shared.topology();
        if !Arc::ptr_eq(&topology, &subscribed) {
            // The topics a pattern matches changed: the group rebalances onto the new ones.
            consumer.member.resubscribe(&topology.source_topics())?;
            subscribed = topology;
        }
        let wait = {
            let mut manager = listener.lock();
            manager.take_failure()?;
            if manager.rejoin {
                manager.rejoin = false;
                shared.metrics.rejoined();
                consumer.member.rejoin()?;
            }
            manager.follow_pause(consumer, shared.paused.load(Ordering::Relaxed))?;
            manager.open_held(consumer)?;
            manager.follow_committed_sources(consumer.member)?;
            manager.restore_step()?;
            manager.update_paused_inputs(consumer.fetcher)?;
            if manager.is_restoring() || manager.has_changelog_backlog() {
                Duration::ZERO
            } else {
                let wait = manager.time_to_commit().min(MAX_POLL_WAIT);
                if wait > GROUP_POLL_WAIT && manager.awaits_group(consumer.member) {
                    GROUP_POLL_WAIT
                } else {
                    wait
                }
            }
        };
        let poll_start = Instant::now();
        // Rebalances come first: their callbacks take and give tasks before the fetch. The
        // member retries what can be retried itself; what it fails with ends the thread, as an
        // exception from its consumer's poll ends a Kafka Streams thread (a source topic found
        // gone says why).
        if let Err(error) = consumer.member.poll() {
            listener.lock().check_source_topics(consumer.fetcher)?;
            return Err(Error::Kafka(error));
        }
        let records = match consumer
            .fetcher
            .poll_records(shared.config.max_poll_records, wait)
        {
            Ok(records) => {
                poll_failing_since = None;
                records
            }
            Err(error) => {
                // librdkafka reports a partition of a topic that went away: Kafka Streams fails
                // the thread then.
                if error.error.protocol_code() == ClientError::UNKNOWN_TOPIC_OR_PARTITION {
                    listener.lock().check_source_topics(consumer.fetcher)?;
                }
                // The client retries by itself; give up only once the client timeout passed.
                let since = *poll_failing_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= shared.config.client_timeout {
                    return Err(Error::Kafka(error));
                }
                Vec::new()
            }
        };
        // A thread asked to stop while it polled does not process what the poll returned, as
        // Kafka Streams' does not: the records stay uncommitted for whoever reads them next.
        // The consumer goes back to them, or the closing commit would take its position past
        // them for the inputs' next offsets.
        if stop.load(Ordering::Relaxed) {
            rewind_to_first(consumer.fetcher, &records)?;
            break;
        }
        let mut turn = LoopTurn {
            poll: poll_start.elapsed(),
            polled_records: record_count(&records),
            ..LoopTurn::default()
        };
        let mut manager = listener.lock();
        manager.take_failure()?;
        // A pause that came while polling holds back what the poll returned, as nothing may
        // be processed once `pause` returned.
        manager.follow_pause(consumer, shared.paused.load(Ordering::Relaxed))?;
        let process_start = Instant::now();
        if !records.is_empty() {
            manager.process(consumer, records)?;
        }
        let punctuate_start = Instant::now();
        turn.process = punctuate_start - process_start;
        manager.punctuate(consumer)?;
        let commit_start = Instant::now();
        turn.punctuate = commit_start - punctuate_start;
        manager.maybe_commit(consumer)?;
        turn.commit = commit_start.elapsed();
        drop(manager);
        freed_memory::release_if_due();
        turn.total = turn_start.elapsed();
        shared
            .factory
            .loop_turned(&turn)
            .map_err(Error::LoopTimings)?;
    }
    Ok(())
}

/// The rebalance listener of a thread: owns its task manager and its fetcher.
struct ThreadListener {
    manager: Mutex<TaskManager>,
    fetcher: Box<dyn PartitionFetcher>,
}

impl ThreadListener {
    fn lock(&self) -> MutexGuard<'_, TaskManager> {
        self.manager
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn consumer<'a>(&'a self, member: &'a dyn GroupMember) -> GroupConsumer<'a> {
        GroupConsumer {
            member,
            fetcher: self.fetcher.as_ref(),
        }
    }
}

impl RebalanceListener for ThreadListener {
    fn partitions_revoked(
        &self,
        member: &dyn GroupMember,
        partitions: &[TopicPartition],
        lost: bool,
    ) {
        let mut manager = self.lock();
        if let Err(error) = manager.on_revoked(self.consumer(member), partitions, lost) {
            manager.failure.get_or_insert(error);
        }
    }

    fn partitions_assigned(
        &self,
        member: &dyn GroupMember,
        partitions: &[TopicPartition],
        standby_inputs: &[TopicPartition],
    ) {
        let mut manager = self.lock();
        let consumer = self.consumer(member);
        if let Err(error) = manager.on_assigned(consumer, partitions, standby_inputs) {
            manager.failure.get_or_insert(error);
        }
    }
}
