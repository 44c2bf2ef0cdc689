//! The tasks of an engine thread: which it owns (its assignment), their input partitions
//! and which of those are paused, opening, closing and reviving tasks, and handing their
//! records, punctuations and commits to the [`CommitBarrier`].
//!
//! While the instance is paused (`KafkaStreams.pause`) the tasks neither process, punctuate
//! nor restore: their inputs are paused on the consumer, which goes on polling so that the
//! thread stays in the group, and what was processed before the pause is still committed.
//! Records fetched before the pause took effect are read again once processing resumes. A
//! task with changelogs assigned while paused is held, unopened, until processing resumes,
//! as Kafka Streams holds it with its paused restoring tasks.
//!
//! An input partition whose task's buffer is full (Kafka Streams'
//! `buffered.records.per.partition`) is paused on the consumer until the task has room
//! again; records of it fetched before the pause took effect are read again then, so a task
//! held back by one input does not gather the others' records without bound.
//!
//! A task whose processor finds its state corrupt while it processes is wiped and
//! restored, the other tasks rewinding to the last commit.
//!
//! The thread also keeps the standby replicas the group gives it (warm-up replicas are
//! standby replicas too): tasks active elsewhere whose stores follow their changelogs here and
//! never process. One whose task becomes active here is closed first, and the active task opens
//! over the stores it kept, restoring only what it had not read.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crate::engine::budget::UncommittedBytesBudget;
use crate::engine::commit::{CommitBarrier, Flow, ProducerSource, Recovery, Tasks};
use crate::engine::config::EngineConfig;
use crate::engine::error::{Error, Result};
use crate::engine::metrics::{CommitTrigger, EngineMetrics};
use crate::engine::processor::{CommittedInput, ProcessorFactory};
use crate::engine::purge::RepartitionPurge;
use crate::engine::restore::{RestoreListener, Restorer};
use crate::engine::state_owners::StateOwners;
use crate::engine::task::{Outputs, Task};
use crate::engine::topology::ResolvedTopology;
use crate::engine::topology::TaskId;
use crate::kafka::{
    record_count, Admin, GroupConsumer, GroupMember, KafkaFailure, OffsetReset, PartitionFetcher,
    RecordRun, ThreadClients,
};
use crate::store::TopicPartition;

/// Longest a restore step may block the loop.
const RESTORE_STEP_WAIT: Duration = Duration::from_millis(50);

/// How often a commit that waits for the member's rebalance to end looks again: about as
/// often as the member is polled, which is when the rebalance can end.
const REBALANCE_COMMIT_RECHECK: Duration = Duration::from_millis(10);

/// A held task whose committed offsets could not be read in time when it opened.
struct TimedOutOpen {
    /// When reading them first timed out.
    since: Instant,
    /// The task opens over wiped state (it was found corrupt).
    wipe_kept_stores: bool,
}

/// What every thread of an instance shares.
pub(crate) struct ThreadShared {
    pub config: Arc<EngineConfig>,
    /// The topology as last resolved: a new one when the topics a pattern matches change,
    /// which each thread subscribes to at its next turn.
    pub topology: RwLock<Arc<ResolvedTopology>>,
    pub factory: Arc<dyn ProcessorFactory>,
    pub restore_listener: Option<Arc<dyn RestoreListener>>,
    pub metrics: Arc<EngineMetrics>,
    pub process_id: String,
    /// `statestore.uncommitted.max.bytes`, of which each thread keeps to its share.
    pub uncommitted_bytes: Arc<UncommittedBytesBudget>,
    /// The instance's admin client, as in Kafka Streams.
    pub admin: Admin,
    /// Creates each thread's Kafka clients.
    pub clients: Arc<dyn ThreadClients>,
    /// Set while the instance is paused; each thread follows it before it polls and before it
    /// processes what it polled.
    pub paused: AtomicBool,
    /// Which thread holds the state of each task.
    pub state_owners: Arc<StateOwners>,
}

impl ThreadShared {
    /// The topology as last resolved.
    pub fn topology(&self) -> Arc<ResolvedTopology> {
        Arc::clone(&self.topology.read().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The tasks of a thread and the barrier that commits them.
pub(crate) struct TaskManager {
    shared: Arc<ThreadShared>,
    /// The thread's index (1-based).
    index: usize,
    tasks: Tasks,
    /// Standby replicas of tasks active elsewhere, by task.
    standbys: BTreeMap<TaskId, Task>,
    /// The last restore step read as much as a step may: more is likely waiting.
    changelog_backlog: bool,
    /// Input partitions of each task.
    inputs: BTreeMap<TaskId, Vec<TopicPartition>>,
    /// Tasks whose inputs are paused on the consumer: until they are restored, and every
    /// task while processing is paused.
    paused: BTreeSet<TaskId>,
    /// Processing is paused (the instance is): no task processes, punctuates or restores.
    processing_paused: bool,
    /// Tasks assigned but not opened yet, their inputs paused: those with changelogs assigned
    /// while processing was paused (they open, and restore, once it resumes), and those whose
    /// state another thread of the instance still holds (they open once it let go).
    held: BTreeSet<TaskId>,
    /// Held tasks whose committed offsets could not be read in time when they opened: they
    /// open again on the next turn of the loop, until `task.timeout.ms` has passed.
    timed_out_opens: BTreeMap<TaskId, TimedOutOpen>,
    /// Standby replicas assigned but not opened yet: their state another thread of the
    /// instance still holds, or reading the group's committed offsets of their source-topic
    /// changelogs timed out.
    waiting_standbys: BTreeSet<TaskId>,
    /// Waiting standby replicas whose committed offsets could not be read in time, with when
    /// that first happened: they open on a later turn, until `task.timeout.ms` has passed.
    timed_out_standby_opens: BTreeMap<TaskId, Instant>,
    /// Input partitions whose task's buffer is full: not fetched until it has room again.
    full: BTreeSet<TopicPartition>,
    /// The group's committed offset of input partitions, where their tasks' consumption began.
    committed_starts: BTreeMap<TopicPartition, i64>,
    /// The offset of the last record handed to its task, per input partition.
    handed_out: BTreeMap<TopicPartition, i64>,
    restorer: Restorer,
    barrier: CommitBarrier,
    /// Set by a failed rebalance callback; the loop raises it.
    pub failure: Option<Error>,
    /// Set when fenced: the loop leaves and rejoins the group.
    pub rejoin: bool,
    /// A task asked for a commit since the last one.
    commit_requested: bool,
    /// A commit fell due while the member was rebalancing; it is made once the rebalance ends.
    commit_waits_for_rebalance: bool,
    /// The member received an assignment: it joined the group.
    joined: bool,
    /// When the group's committed offsets of the standby replicas' source-topic changelogs
    /// were last asked for.
    sources_checked_at: Instant,
    /// Since when asking for them has timed out, while it does.
    sources_timing_out_since: Option<Instant>,
}

impl TaskManager {
    /// The task manager of thread `index` (1-based).
    pub fn new(shared: Arc<ThreadShared>, index: usize) -> Result<Self> {
        let config = &shared.config;
        let reader = shared.clients.restore_consumer(index);
        // Kafka Streams' exactly-once v2 scheme: <application.id>-<process id>-<thread index>.
        let transactional_id = config
            .exactly_once()
            .then(|| format!("{}-{}-{index}", config.application_id, shared.process_id));
        let source = ProducerSource {
            clients: Arc::clone(&shared.clients),
            thread: index,
            transactional_id,
        };
        let purge = RepartitionPurge::new(
            shared.topology().repartition_topics.clone(),
            config.repartition_purge_interval,
            Instant::now(),
        );
        let barrier = CommitBarrier::new(
            source,
            Arc::clone(&shared.metrics),
            config.commit_interval,
            config.task_timeout,
            purge,
        )?;
        Ok(TaskManager {
            restorer: Restorer::new(
                reader,
                shared.restore_listener.clone(),
                shared.config.restore_max_poll_records,
            ),
            shared,
            index,
            tasks: BTreeMap::new(),
            standbys: BTreeMap::new(),
            changelog_backlog: false,
            inputs: BTreeMap::new(),
            paused: BTreeSet::new(),
            processing_paused: false,
            held: BTreeSet::new(),
            timed_out_opens: BTreeMap::new(),
            waiting_standbys: BTreeSet::new(),
            timed_out_standby_opens: BTreeMap::new(),
            full: BTreeSet::new(),
            committed_starts: BTreeMap::new(),
            handed_out: BTreeMap::new(),
            barrier,
            failure: None,
            rejoin: false,
            commit_requested: false,
            commit_waits_for_rebalance: false,
            joined: false,
            sources_checked_at: Instant::now(),
            sources_timing_out_since: None,
        })
    }

    /// Raises the failure a rebalance callback left.
    pub fn take_failure(&mut self) -> Result<()> {
        self.failure.take().map_or(Ok(()), Err)
    }

    /// Opens the tasks of the `partitions` just assigned and keeps standby replicas of the
    /// tasks `standby_inputs` belong to, then makes sure every source topic is there still; the
    /// broker is asked after the inputs that must wait were paused, so that the consumer does
    /// not fetch them meanwhile.
    pub fn on_assigned(
        &mut self,
        consumer: GroupConsumer<'_>,
        partitions: &[TopicPartition],
        standby_inputs: &[TopicPartition],
    ) -> Result<()> {
        self.joined = true;
        self.barrier.ready()?;
        let topology = self.shared.topology();
        log::info!(
            "stream thread {}: assigned {}; standby inputs {}",
            self.index,
            listed(partitions),
            listed(standby_inputs)
        );
        let standbys: BTreeSet<TaskId> = standby_inputs
            .iter()
            .filter_map(|partition| topology.task_of(partition))
            .collect();
        let activated: BTreeSet<TaskId> = partitions
            .iter()
            .filter_map(|partition| topology.task_of(partition))
            .collect();
        // Before any task opens, the replicas that go away close. One whose task becomes active
        // here and opens now stays to hand its stores over as it opens; while processing is
        // paused the task waits, and its replica closes.
        let gone: Vec<TaskId> = self
            .standbys
            .keys()
            .filter(|id| !standbys.contains(id))
            .filter(|id| !activated.contains(id) || self.processing_paused)
            .copied()
            .collect();
        for id in gone {
            self.close_standby(id, activated.contains(&id))?;
        }
        self.waiting_standbys.retain(|id| standbys.contains(id));
        self.timed_out_standby_opens
            .retain(|id, _| standbys.contains(id));
        consumer
            .fetcher
            .assign(partitions, &topology.offset_resets)?;
        // librdkafka keeps a partition the engine paused paused when the group assigns it again
        // (it resets only its own pauses): one of a task that is not open here starts fetching,
        // and its task pauses it again if it must wait.
        let not_open: Vec<TopicPartition> = partitions
            .iter()
            .filter(|partition| {
                topology
                    .task_of(partition)
                    .is_none_or(|id| !self.tasks.contains_key(&id) && !self.held.contains(&id))
            })
            .cloned()
            .collect();
        consumer.fetcher.resume_partitions(&not_open)?;
        for partition in partitions {
            let Some(id) = topology.task_of(partition) else {
                continue;
            };
            self.inputs.entry(id).or_default().push(partition.clone());
        }
        let new: Vec<TaskId> = self
            .inputs
            .keys()
            .filter(|id| !self.tasks.contains_key(id))
            .copied()
            .collect();
        for id in new {
            let must_wait = self.processing_paused && self.has_changelogs(id);
            if must_wait || !self.shared.state_owners.claim(id, self.index) {
                self.pause(consumer.fetcher, id)?;
                self.held.insert(id);
            } else {
                self.open_task(consumer, id, false)?;
            }
        }
        for id in standbys {
            let active_here = self.tasks.contains_key(&id) || self.held.contains(&id);
            if !active_here && !self.standbys.contains_key(&id) {
                self.waiting_standbys.insert(id);
            }
        }
        self.open_waiting_standbys(consumer.member)?;
        self.check_source_topics(consumer.fetcher)?;
        let owned: Vec<TaskId> = self.tasks.keys().chain(&self.held).copied().collect();
        self.shared
            .factory
            .assigned(&owned)
            .map_err(Error::Assignment)
    }

    /// Fails with [`Error::MissingSourceTopics`] when source topics of the topology are gone, as
    /// Kafka Streams' assignor fails every member at a rebalance that finds them missing. The
    /// repartition topics are the runtime's own and are not asked about, nor are the topics a
    /// pattern matched: one that is gone is simply no longer matched.
    pub fn check_source_topics(&self, fetcher: &dyn PartitionFetcher) -> Result<()> {
        let topology = self.shared.topology();
        let sources: Vec<String> = topology
            .source_topics()
            .into_iter()
            .filter(|topic| {
                !topology.repartition_topics.contains(topic)
                    && !topology.matched_topics.contains(topic)
            })
            .collect();
        let missing = fetcher.missing_topics(&sources)?;
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Error::MissingSourceTopics(missing))
        }
    }

    /// Opens task `id` and starts restoring its stores; its inputs wait until they are. With
    /// `wipe_kept_stores`, the state its processor keeps is dropped first and restored in full.
    /// A standby replica of the task kept here is promoted: the task takes the replica's stores
    /// over, and restores only what the replica had not read.
    fn open_task(
        &mut self,
        consumer: GroupConsumer<'_>,
        id: TaskId,
        wipe_kept_stores: bool,
    ) -> Result<()> {
        let topology = self.shared.topology();
        let subtopology = topology
            .subtopology(id.subtopology)
            .expect("tasks come from the topology");
        let Some(inputs) = self.committed_inputs_or_hold(consumer, id, wipe_kept_stores)? else {
            return Ok(());
        };
        log::debug!(
            "task {id} opens at the committed offsets {}",
            listed(inputs.iter().map(|input| format!(
                "{}@{}",
                input.partition,
                input.committed.as_ref().map_or(-1, |c| c.offset)
            )))
        );
        let promoted = self.promoted_standby(id)?;
        let processor = match promoted {
            Some(standby) => standby.promote(&inputs)?,
            None => self
                .shared
                .factory
                .create(id, &inputs)
                .map_err(|source| Error::Processor {
                    task: id.to_string(),
                    source,
                })?,
        };
        let mut task = Task::open(id, subtopology, processor);
        if wipe_kept_stores {
            task.wipe_kept_stores()?;
        }
        match self.restorer.begin(&mut task, &self.committed_starts) {
            Ok(()) => {}
            Err(Error::Kafka(failure)) if failure.timed_out() => {
                // Where its changelogs begin and end could not be read in time: it opens again
                // on a later turn, as when its committed offsets time out. It processed
                // nothing, and the thread keeps its state.
                task.close(false)?;
                return self.hold_timed_out(consumer, id, wipe_kept_stores, failure);
            }
            Err(other) => return Err(other),
        }
        self.timed_out_opens.remove(&id);
        if !self.can_process(&task) {
            self.pause(consumer.fetcher, id)?;
        }
        self.tasks.insert(id, task);
        Ok(())
    }

    /// Opens a standby replica of task `id`, which follows its changelogs from what its
    /// stores committed, those that are source topics as far as the group committed; false
    /// when reading those committed offsets, or where its changelogs begin and end, timed
    /// out: it opens on a later turn, as Kafka Streams' changelog reader initialises such a
    /// changelog again (KIP-572), until `task.timeout.ms` has passed since the first timeout.
    fn open_standby(&mut self, member: &dyn GroupMember, id: TaskId) -> Result<bool> {
        let topology = self.shared.topology();
        let subtopology = topology
            .subtopology(id.subtopology)
            .expect("tasks come from the topology");
        let sources = subtopology.source_topic_changelogs(id.partition);
        let committed = match committed_positions(member, &sources) {
            Ok(committed) => committed,
            Err(failure) if failure.timed_out() => {
                return self.standby_open_timed_out(id, failure).map(|()| false);
            }
            Err(failure) => return Err(failure.into()),
        };
        let processor =
            self.shared
                .factory
                .create_standby(id)
                .map_err(|source| Error::Processor {
                    task: id.to_string(),
                    source,
                })?;
        let mut standby = Task::open(id, subtopology, processor);
        match self.restorer.follow(&mut standby, &committed) {
            Ok(()) => {}
            Err(Error::Kafka(failure)) if failure.timed_out() => {
                // Where its changelogs begin and end could not be read in time: the same.
                standby.close(true)?;
                return self.standby_open_timed_out(id, failure).map(|()| false);
            }
            Err(other) => return Err(other),
        }
        self.timed_out_standby_opens.remove(&id);
        self.standbys.insert(id, standby);
        Ok(true)
    }

    /// Notes that opening standby replica `id` timed out with `failure`; fails the thread
    /// once `task.timeout.ms` has passed since its opening first timed out.
    fn standby_open_timed_out(&mut self, id: TaskId, failure: KafkaFailure) -> Result<()> {
        let since = *self
            .timed_out_standby_opens
            .entry(id)
            .or_insert_with(Instant::now);
        self.fail_past_task_timeout(&format!("standby task {id}"), since, failure)
    }

    /// Lets the standby replicas read their source-topic changelogs as far as the group
    /// committed them since it was last asked, once a commit interval: Kafka Streams' replicas
    /// of such stores ask as often. When the broker does not answer in time they read no
    /// further until a later ask, as in Kafka Streams, unless `task.timeout.ms` has passed
    /// since asking began to time out.
    pub fn follow_committed_sources(&mut self, member: &dyn GroupMember) -> Result<()> {
        if self.sources_checked_at.elapsed() < self.shared.config.commit_interval {
            return Ok(());
        }
        self.sources_checked_at = Instant::now();
        let partitions = self.restorer.limited_partitions();
        if partitions.is_empty() {
            return Ok(());
        }
        let committed = match committed_positions(member, &partitions) {
            Ok(committed) => committed,
            Err(failure) if failure.timed_out() => {
                let since = *self
                    .sources_timing_out_since
                    .get_or_insert_with(Instant::now);
                return self.fail_past_task_timeout("the standby tasks", since, failure);
            }
            Err(failure) => return Err(failure.into()),
        };
        self.sources_timing_out_since = None;
        self.restorer.raise_limits(&committed)
    }

    /// Takes the standby replica of task `id`, which becomes active here, out of the replicas
    /// kept, its changelogs no longer followed; none when there is no replica of it here. The
    /// thread keeps holding the task's state.
    fn promoted_standby(&mut self, id: TaskId) -> Result<Option<Task>> {
        let Some(mut standby) = self.standbys.remove(&id) else {
            return Ok(None);
        };
        self.restorer.forget_standby(&mut standby, true)?;
        Ok(Some(standby))
    }

    /// Closes the standby replica of task `id`: `promoted` when the task becomes active here.
    /// Its stores committed every batch they were handed, so it always closes clean.
    fn close_standby(&mut self, id: TaskId, promoted: bool) -> Result<()> {
        self.waiting_standbys.remove(&id);
        if let Some(mut standby) = self.standbys.remove(&id) {
            self.restorer.forget_standby(&mut standby, promoted)?;
            let closed = standby.close(true);
            self.shared.state_owners.release(id, self.index);
            closed?;
        }
        Ok(())
    }

    /// Opens the held tasks that may open now: processing is not paused, and no other thread
    /// of the instance holds their state any more.
    pub fn open_held(&mut self, consumer: GroupConsumer<'_>) -> Result<()> {
        if self.processing_paused {
            return Ok(());
        }
        let held: Vec<TaskId> = self.held.iter().copied().collect();
        for id in held {
            if self.shared.state_owners.claim(id, self.index) {
                self.held.remove(&id);
                let wipe_kept_stores = self
                    .timed_out_opens
                    .get(&id)
                    .is_some_and(|open| open.wipe_kept_stores);
                self.open_task(consumer, id, wipe_kept_stores)?;
            }
        }
        self.open_waiting_standbys(consumer.member)
    }

    /// Opens the standby replicas whose state no other thread of the instance holds any more.
    fn open_waiting_standbys(&mut self, member: &dyn GroupMember) -> Result<()> {
        let waiting: Vec<TaskId> = self.waiting_standbys.iter().copied().collect();
        for id in waiting {
            if !self.shared.state_owners.claim(id, self.index) {
                continue;
            }
            if self.open_standby(member, id)? {
                self.waiting_standbys.remove(&id);
            } else {
                // A waiting replica holds no state: another thread may take it meanwhile.
                self.shared.state_owners.release(id, self.index);
            }
        }
        Ok(())
    }

    /// Closes `task`, committed when `clean`, and lets its state go.
    fn close_task(&mut self, mut task: Task, clean: bool) -> Result<()> {
        let id = task.id;
        let closed = self
            .restorer
            .forget(&mut task)
            .and_then(|()| task.close(clean));
        self.shared.state_owners.release(id, self.index);
        closed
    }

    /// The committed inputs of task `id`, or none when reading them timed out: the task is then
    /// held, its inputs paused, and opens again on the next turn of the loop, as Kafka Streams
    /// initialises a task again whose committed offsets it could not read (KIP-572), until
    /// `task.timeout.ms` has passed since the first timeout; a timeout past that fails the
    /// thread. The thread keeps the task's state meanwhile.
    fn committed_inputs_or_hold(
        &mut self,
        consumer: GroupConsumer<'_>,
        id: TaskId,
        wipe_kept_stores: bool,
    ) -> Result<Option<Vec<CommittedInput>>> {
        match self.committed_inputs(consumer, id) {
            Ok(inputs) => Ok(Some(inputs)),
            Err(Error::Kafka(failure)) if failure.timed_out() => self
                .hold_timed_out(consumer, id, wipe_kept_stores, failure)
                .map(|()| None),
            Err(other) => Err(other),
        }
    }

    /// Holds task `id`, whose opening timed out with `failure`, its inputs paused, to open
    /// again on the next turn of the loop; fails the thread once `task.timeout.ms` has passed
    /// since its opening first timed out.
    fn hold_timed_out(
        &mut self,
        consumer: GroupConsumer<'_>,
        id: TaskId,
        wipe_kept_stores: bool,
        failure: KafkaFailure,
    ) -> Result<()> {
        let first_timeout = self
            .timed_out_opens
            .entry(id)
            .or_insert(TimedOutOpen {
                since: Instant::now(),
                wipe_kept_stores,
            })
            .since;
        log::warn!("task {id} could not open in time; it opens again on a later turn: {failure}");
        self.fail_past_task_timeout(&format!("task {id}"), first_timeout, failure)?;
        if !self.paused.contains(&id) {
            self.pause(consumer.fetcher, id)?;
        }
        self.held.insert(id);
        Ok(())
    }

    /// Fails with `failure`, a read for `what` (a task, say) that timed out, once
    /// `task.timeout.ms` has passed `since` such reads began to time out.
    fn fail_past_task_timeout(
        &self,
        what: &str,
        since: Instant,
        failure: KafkaFailure,
    ) -> Result<()> {
        let waited = since.elapsed();
        if waited < self.shared.config.task_timeout {
            return Ok(());
        }
        Err(Error::Kafka(KafkaFailure {
            context: format!(
                "{what} did not make progress within {} ms (task.timeout.ms): {}",
                waited.as_millis(),
                failure.context
            ),
            error: failure.error,
        }))
    }

    /// Forgets held task `id`, no longer assigned here; the state a task whose opening timed
    /// out kept is let go, unless a standby replica here still keeps it.
    fn forget_held(&mut self, id: TaskId) {
        self.held.remove(&id);
        if self.timed_out_opens.remove(&id).is_some() && !self.standbys.contains_key(&id) {
            self.shared.state_owners.release(id, self.index);
        }
    }

    /// The input partitions of task `id` with the group's committed positions, which the
    /// processor reads its stream time from.
    fn committed_inputs(
        &mut self,
        consumer: GroupConsumer<'_>,
        id: TaskId,
    ) -> Result<Vec<CommittedInput>> {
        let positions = consumer.member.committed_offsets(&self.inputs[&id])?;
        for (partition, position) in &positions {
            match position {
                Some(position) => {
                    self.committed_starts
                        .insert(partition.clone(), position.offset);
                }
                None => {
                    self.committed_starts.remove(partition);
                    self.start_by_duration(consumer.fetcher, partition)?;
                }
            };
        }
        Ok(positions
            .into_iter()
            .map(|(partition, committed)| CommittedInput {
                partition,
                committed,
            })
            .collect())
    }

    /// Moves `partition`, which has no committed offset, to where it starts when its topic
    /// resets by duration (Kafka Streams' `AutoOffsetReset.byDuration`): the first record of
    /// that age on the application's clock, or the log's end.
    fn start_by_duration(
        &self,
        fetcher: &dyn PartitionFetcher,
        partition: &TopicPartition,
    ) -> Result<()> {
        let topology = self.shared.topology();
        let Some(OffsetReset::ByDuration(age_ms)) = topology.offset_resets.get(&partition.topic)
        else {
            return Ok(());
        };
        let now_ms = self.shared.factory.now_ms().map_err(Error::Assignment)?;
        let since_ms = now_ms.saturating_sub(i64::try_from(*age_ms).unwrap_or(i64::MAX));
        let start = fetcher.offset_for_time(partition, since_ms)?;
        fetcher.seek_to(partition, Some(start))?;
        Ok(())
    }

    /// Kafka Streams' answer to a `TaskCorruptedException` from task `id`: the task closes
    /// dirty, its state is wiped, the open transaction, which holds unfinished work of every
    /// task, is aborted and every task rewinds to the last commit; then the task opens again
    /// and restores its state in full before it processes again. The thread goes on.
    fn revive_corrupted(&mut self, consumer: GroupConsumer<'_>, id: TaskId) -> Result<()> {
        self.shared.metrics.store_corrupted();
        let mut task = self.tasks.remove(&id).expect("the task that just failed");
        self.restorer.forget(&mut task)?;
        task.close(false)?;
        let cause = format!("the state of task {id} was found corrupt");
        match self.barrier.abort(consumer, &mut self.tasks, &cause)? {
            Recovery::RolledBack => self.open_task(consumer, id, true),
            Recovery::Fenced => self.give_up_tasks(),
        }
    }

    /// Commits, then closes the tasks of the `partitions` about to be revoked; dirty when
    /// they are `lost`.
    pub fn on_revoked(
        &mut self,
        consumer: GroupConsumer<'_>,
        partitions: &[TopicPartition],
        lost: bool,
    ) -> Result<()> {
        log::info!(
            "stream thread {}: {} {}",
            self.index,
            if lost { "lost" } else { "revoked" },
            listed(partitions)
        );
        self.shared
            .factory
            .assignment_started()
            .map_err(Error::Assignment)?;
        // By the inputs each task opened with: the topology may have changed since.
        let revoked: BTreeSet<TaskId> = self
            .inputs
            .iter()
            .filter(|(_, inputs)| inputs.iter().any(|p| partitions.contains(p)))
            .map(|(id, _)| *id)
            .collect();
        // Lost partitions belong to someone else already: committing them would be wrong. Under
        // exactly-once what their tasks produced since the last commit is in the open
        // transaction, with every other task's: it is aborted and every task goes back to the
        // last commit, as Kafka Streams does when it finds its tasks lost.
        let clean = if lost {
            if self.barrier.is_transactional() {
                let cause = "the group gave partitions of this thread to another member";
                if let Recovery::Fenced = self.barrier.abort(consumer, &mut self.tasks, cause)? {
                    self.give_up_tasks()?;
                }
            }
            false
        } else {
            self.commit(consumer, CommitTrigger::TaskHandover)?
        };
        for id in revoked {
            if let Some(task) = self.tasks.remove(&id) {
                self.close_task(task, clean)?;
            }
            if let Some(inputs) = self.inputs.remove(&id) {
                for partition in inputs {
                    self.handed_out.remove(&partition);
                    self.full.remove(&partition);
                }
            }
            self.paused.remove(&id);
            self.forget_held(id);
        }
        consumer.fetcher.unassign(partitions)?;
        // A rebalance is under way: it is the rejoin a fenced commit asked for.
        self.rejoin = false;
        Ok(())
    }

    /// The tasks belong to another member now (the producer was fenced): closes them dirty,
    /// until the group assigns them again, and asks for the group to be rejoined.
    fn give_up_tasks(&mut self) -> Result<()> {
        log::warn!(
            "stream thread {} gives its tasks up and joins the group again",
            self.index
        );
        self.shared
            .factory
            .assignment_started()
            .map_err(Error::Assignment)?;
        for (_, task) in std::mem::take(&mut self.tasks) {
            self.close_task(task, false)?;
        }
        self.inputs.clear();
        self.handed_out.clear();
        self.paused.clear();
        for id in std::mem::take(&mut self.held) {
            self.forget_held(id);
        }
        self.full.clear();
        self.rejoin = true;
        self.joined = false;
        Ok(())
    }

    /// Takes what the barrier did: true when the work went through; the tasks are given up
    /// when it was fenced.
    fn went_through(&mut self, flow: Flow) -> Result<bool> {
        match flow {
            ControlFlow::Continue(()) => Ok(true),
            ControlFlow::Break(Recovery::RolledBack) => Ok(false),
            ControlFlow::Break(Recovery::Fenced) => {
                self.give_up_tasks()?;
                Ok(false)
            }
        }
    }

    fn pause(&mut self, fetcher: &dyn PartitionFetcher, id: TaskId) -> Result<()> {
        fetcher.pause_partitions(&self.inputs[&id])?;
        self.paused.insert(id);
        Ok(())
    }

    fn resume(&mut self, fetcher: &dyn PartitionFetcher, id: TaskId) -> Result<()> {
        let with_room: Vec<TopicPartition> = self.inputs[&id]
            .iter()
            .filter(|p| !self.full.contains(*p))
            .cloned()
            .collect();
        fetcher.resume_partitions(&with_room)?;
        self.paused.remove(&id);
        Ok(())
    }

    /// Follows what task `id` asks for after it processed or punctuated: fetching stopped or
    /// started again by how full its buffers are, and a commit.
    fn follow_step(&mut self, fetcher: &dyn PartitionFetcher, id: TaskId) -> Result<()> {
        self.follow_full_inputs(fetcher, id)?;
        if let Some(task) = self.tasks.get_mut(&id) {
            self.commit_requested |= task.commit_requested()?;
        }
        Ok(())
    }

    /// Stops fetching the inputs of task `id` whose buffer its processor says is full, and
    /// fetches again those that have room now (unless the whole task is paused).
    fn follow_full_inputs(&mut self, fetcher: &dyn PartitionFetcher, id: TaskId) -> Result<()> {
        let Some(task) = self.tasks.get_mut(&id) else {
            return Ok(());
        };
        let full = task.full_inputs()?;
        let task_paused = self.paused.contains(&id);
        for partition in &self.inputs[&id] {
            match (full.contains(partition), self.full.contains(partition)) {
                (true, false) => {
                    if !task_paused {
                        fetcher.pause_partitions(std::slice::from_ref(partition))?;
                    }
                    self.full.insert(partition.clone());
                }
                (false, true) => {
                    self.full.remove(partition);
                    if !task_paused {
                        fetcher.resume_partitions(std::slice::from_ref(partition))?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Pauses or resumes processing, restoration included, as the instance asks, and opens
    /// the tasks held meanwhile once it resumes; the inputs follow in
    /// [`update_paused_inputs`](Self::update_paused_inputs).
    pub fn follow_pause(&mut self, consumer: GroupConsumer<'_>, paused: bool) -> Result<()> {
        if paused == self.processing_paused {
            return Ok(());
        }
        self.processing_paused = paused;
        self.restorer.set_paused(paused)?;
        self.open_held(consumer)
    }

    /// True when task `id` has stores with changelogs, which it restores when it opens.
    fn has_changelogs(&self, id: TaskId) -> bool {
        self.shared
            .topology()
            .subtopology(id.subtopology)
            .is_some_and(|s| s.stores.iter().any(|store| store.changelog_topic.is_some()))
    }

    /// True when `task` may process and punctuate: it is restored and processing is not
    /// paused.
    fn can_process(&self, task: &Task) -> bool {
        task.is_running() && !self.processing_paused
    }

    /// True while some store is being restored and processing is not paused.
    pub fn is_restoring(&self) -> bool {
        self.restorer.is_active() && !self.processing_paused
    }

    /// Restores for a bounded time, and brings the standby replicas' stores up to date
    /// without waiting, unless processing is paused.
    pub fn restore_step(&mut self) -> Result<()> {
        if self.processing_paused {
            self.changelog_backlog = false;
            return Ok(());
        }
        let wait = if self.restorer.is_active() {
            RESTORE_STEP_WAIT
        } else {
            Duration::ZERO
        };
        let reading = self.restorer.is_reading();
        self.changelog_backlog = self
            .restorer
            .step(&mut self.tasks, &mut self.standbys, wait)?;
        // Left as they were while nothing is read, as a consumer that is not polled keeps them.
        if reading {
            let lags = self.restorer.lags();
            self.shared.metrics.restore_lags_found(self.index, lags);
        }
        Ok(())
    }

    /// True when changelog records are likely waiting to be read: the thread should not wait
    /// for input records meanwhile.
    pub fn has_changelog_backlog(&self) -> bool {
        self.changelog_backlog
    }

    /// Pauses the inputs of the tasks that cannot process and resumes those of the tasks
    /// that can again (restored, or processing resumed).
    pub fn update_paused_inputs(&mut self, fetcher: &dyn PartitionFetcher) -> Result<()> {
        let (to_resume, to_pause): (Vec<TaskId>, Vec<TaskId>) = self
            .tasks
            .iter()
            .filter(|(id, task)| self.paused.contains(id) == self.can_process(task))
            .map(|(id, _)| *id)
            .partition(|id| self.paused.contains(id));
        for id in to_resume {
            self.resume(fetcher, id)?;
        }
        for id in to_pause {
            self.pause(fetcher, id)?;
        }
        Ok(())
    }

    /// Hands each task its polled `records` and sends what it produces.
    pub fn process(&mut self, consumer: GroupConsumer<'_>, records: Vec<RecordRun>) -> Result<()> {
        let mut batches: BTreeMap<TaskId, Vec<RecordRun>> = BTreeMap::new();
        let topology = self.shared.topology();
        for run in records {
            if let Some(id) = topology.task_of(&run.partition) {
                batches.entry(id).or_default().push(run);
            }
        }
        for (id, batch) in batches {
            let Some(task) = self.tasks.get(&id) else {
                if self.held.contains(&id) {
                    // Fetched before its inputs were paused: read these again once it opens.
                    rewind_to_first(consumer.fetcher, &batch)?;
                }
                continue;
            };
            if !self.can_process(task) {
                // Fetched before the pause took effect: read these again once it can process.
                rewind_to_first(consumer.fetcher, &batch)?;
                continue;
            }
            // Fetched before its buffer filled up: read these again once it has room.
            let (batch, no_room): (Vec<RecordRun>, Vec<RecordRun>) = batch
                .into_iter()
                .partition(|run| !self.full.contains(&run.partition));
            rewind_to_first(consumer.fetcher, &no_room)?;
            if batch.is_empty() {
                continue;
            }
            let task = self.tasks.get_mut(&id).expect("found above");
            for run in &batch {
                if let (Some(first), Some(last)) = (run.first_offset(), run.last_offset()) {
                    let before = self.handed_out.insert(run.partition.clone(), last);
                    if before.is_some_and(|before| first != before + 1) {
                        log::debug!(
                            "task {id} is handed {} from offset {first} on, after {}",
                            run.partition,
                            before.unwrap_or_default()
                        );
                    }
                }
            }
            self.shared.metrics.processed(record_count(&batch) as u64);
            let outputs = match task.process(&batch) {
                Ok(outputs) => outputs,
                Err(error) if error.kept_state_corrupted() => {
                    return self.revive_corrupted(consumer, id)
                }
                Err(error) => return Err(self.task_failed(consumer, id, error)),
            };
            if !self.send(consumer, id, outputs)? {
                return Ok(());
            }
            self.follow_step(consumer.fetcher, id)?;
        }
        Ok(())
    }

    /// The tasks that finished restoring.
    fn running_tasks(&self) -> Vec<TaskId> {
        self.tasks
            .iter()
            .filter(|(_, task)| task.is_running())
            .map(|(id, _)| *id)
            .collect()
    }

    /// Runs the wall-clock punctuation of the running tasks, telling them first how far behind
    /// their inputs' ends they are (which the thread's metrics show too).
    pub fn punctuate(&mut self, consumer: GroupConsumer<'_>) -> Result<()> {
        if self.processing_paused {
            return Ok(());
        }
        let running = self.running_tasks();
        let topology = self.shared.topology();
        let mut known_lags = BTreeMap::new();
        let own_transaction_starts = self.barrier.open_transaction_starts();
        for id in &running {
            let lags = lags(
                consumer.fetcher,
                &self.inputs[id],
                &self.committed_starts,
                &topology.offset_resets,
                &own_transaction_starts,
            );
            known_lags.extend(
                lags.iter()
                    .filter_map(|(partition, lag)| lag.map(|lag| (partition.clone(), lag))),
            );
            let task = self.tasks.get_mut(id).expect("listed above");
            task.update_lags(&lags)?;
            let outputs = match task.punctuate() {
                Ok(outputs) => outputs,
                Err(error) => return Err(self.task_failed(consumer, *id, error)),
            };
            if !self.send(consumer, *id, outputs)? {
                return Ok(());
            }
            self.follow_step(consumer.fetcher, *id)?;
        }
        self.shared.metrics.lags_found(self.index, known_lags);
        Ok(())
    }

    /// Task `id` failed with `error`, which ends the thread: what it produced before it failed
    /// still goes to the producer, as in Kafka Streams.
    fn task_failed(&mut self, consumer: GroupConsumer<'_>, id: TaskId, error: Error) -> Error {
        let task = self.tasks.get_mut(&id).expect("the failed task is a task");
        if let Ok(outputs) = task.produced_before_failure() {
            self.barrier
                .send_before_failing(consumer, &mut self.tasks, id, outputs);
        }
        error
    }

    /// Sends the `outputs` of task `task`. Returns false when sending failed and the work
    /// was rolled back (or the tasks were given up) instead.
    fn send(
        &mut self,
        consumer: GroupConsumer<'_>,
        task: TaskId,
        outputs: Outputs,
    ) -> Result<bool> {
        let flow = self
            .barrier
            .send(consumer, &mut self.tasks, task, outputs)?;
        self.went_through(flow)
    }

    /// True until the member's first assignment and while it rebalances: each step of a
    /// join (finding the coordinator, joining, syncing) is taken when the member is served,
    /// so the thread serves it often instead of waiting for records.
    pub fn awaits_group(&self, member: &dyn GroupMember) -> bool {
        !self.joined || member.rebalance_in_progress()
    }

    /// How long until the next commit is due, or until a due commit that waits for the
    /// member's rebalance looks again.
    pub fn time_to_commit(&self) -> Duration {
        if self.commit_waits_for_rebalance {
            REBALANCE_COMMIT_RECHECK
        } else {
            self.barrier.time_to_commit()
        }
    }

    /// Commits when the commit interval is over, or early when the tasks hold more
    /// uncommitted bytes than the thread's share of the budget or a task asked for it; not
    /// while the member is in a rebalance, which may change the generation the commit would be
    /// made under (Kafka Streams' threads wait too).
    pub fn maybe_commit(&mut self, consumer: GroupConsumer<'_>) -> Result<()> {
        let due = self.barrier.time_to_commit().is_zero();
        let over_budget = self.shared.uncommitted_bytes.share().is_some_and(|share| {
            self.tasks
                .values()
                .map(Task::uncommitted_bytes)
                .sum::<u64>()
                > share
        });
        self.commit_waits_for_rebalance = (due || over_budget || self.commit_requested)
            && consumer.member.rebalance_in_progress();
        let committed = if self.commit_waits_for_rebalance {
            false
        } else if due {
            self.commit(consumer, CommitTrigger::Interval)?
        } else if over_budget {
            self.commit(consumer, CommitTrigger::Budget)?
        } else if self.commit_requested {
            self.commit(consumer, CommitTrigger::Requested)?
        } else {
            false
        };
        if committed {
            let owned: BTreeSet<TopicPartition> = self
                .running_tasks()
                .iter()
                .flat_map(|id| self.inputs[id].iter().cloned())
                .collect();
            self.barrier.maybe_purge(&self.shared.admin, &owned);
        }
        Ok(())
    }

    /// Commits the running tasks. Returns false when the work was rolled back (or the tasks
    /// were given up) instead.
    fn commit(&mut self, consumer: GroupConsumer<'_>, trigger: CommitTrigger) -> Result<bool> {
        // Committed or rolled back, no task's request is left open.
        self.commit_requested = false;
        let running = self.running_tasks();
        let flow = self.barrier.commit(
            consumer,
            &mut self.tasks,
            &running,
            &self.handed_out,
            trigger,
        )?;
        self.went_through(flow)
    }

    /// Closes every task: committed first when `clean`, rolled back otherwise.
    pub fn close_all(&mut self, consumer: GroupConsumer<'_>, clean: bool) -> Result<()> {
        let committed = clean && self.commit(consumer, CommitTrigger::TaskHandover)?;
        let mut first_error = None;
        for (_, task) in std::mem::take(&mut self.tasks) {
            if let Err(error) = self.close_task(task, committed) {
                first_error.get_or_insert(error);
            }
        }
        let standbys: Vec<TaskId> = self.standbys.keys().copied().collect();
        for id in standbys {
            if let Err(error) = self.close_standby(id, false) {
                first_error.get_or_insert(error);
            }
        }
        self.inputs.clear();
        self.handed_out.clear();
        self.paused.clear();
        for id in std::mem::take(&mut self.held) {
            self.forget_held(id);
        }
        self.waiting_standbys.clear();
        self.full.clear();
        // No task is left to rejoin for.
        self.rejoin = false;
        if !committed {
            self.barrier.close_dirty();
        }
        let unassigned = consumer
            .fetcher
            .assigned_partitions()
            .and_then(|assigned| consumer.fetcher.unassign(&assigned));
        if let Err(error) = unassigned {
            first_error.get_or_insert(Error::Kafka(error));
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// How far behind the end of each of `partitions` the consumer is: the end its last fetch saw
/// (the high watermark, or where this thread's open transaction begins in the partition, if it
/// begins before: `own_transaction_starts`), minus the next offset it hands out. Before it
/// handed out anything, the next offset is the one `starts` gives (the group's committed
/// offset), else where its topic's reset policy in `resets` starts (the log's start unless it
/// says `latest`). `None` while unknown (nothing fetched yet). Answered from what the consumer
/// already knows, without asking the broker.
///
/// Kafka Streams' consumer reads committed records only under exactly-once, and counts a lag to
/// the last stable offset, before which no transaction is open; librdkafka keeps that offset to
/// itself. The thread's own transaction, open until its next commit, is what keeps the last
/// stable offset short of the high watermark of a partition the thread both writes and reads (a
/// repartition topic, a foreign-key join's subscription and response topics): counted as lag, it
/// would keep a task waiting for records that cannot come before the thread commits.
fn lags(
    fetcher: &dyn PartitionFetcher,
    partitions: &[TopicPartition],
    starts: &BTreeMap<TopicPartition, i64>,
    resets: &BTreeMap<String, OffsetReset>,
    own_transaction_starts: &BTreeMap<TopicPartition, i64>,
) -> Vec<(TopicPartition, Option<i64>)> {
    let positions = fetcher.next_offsets(partitions);
    partitions
        .iter()
        .map(|partition| {
            let handed_out = positions.get(partition).copied();
            let lag = fetcher.fetched_watermarks(partition).map(|(low, high)| {
                let reset_to = match resets.get(&partition.topic) {
                    Some(OffsetReset::Latest) => high,
                    _ => low,
                };
                let next = handed_out
                    .or_else(|| starts.get(partition).copied())
                    .unwrap_or(reset_to);
                lag_behind(high, next, own_transaction_starts.get(partition).copied())
            });
            (partition.clone(), lag)
        })
        .collect()
}

/// How far `next` is behind the end of a partition whose high watermark is `high`, where this
/// thread's open transaction, if it wrote there, begins at `own_transaction_start`: none of its
/// records can be read before it commits.
fn lag_behind(high: i64, next: i64, own_transaction_start: Option<i64>) -> i64 {
    let end = own_transaction_start.map_or(high, |start| high.min(start));
    (end - next).max(0)
}

/// `items` for a log line: comma-separated, in brackets.
fn listed<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = items.into_iter().map(|item| item.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// Rewinds each partition of `batch` to its first record, to read the batch again.
pub(crate) fn rewind_to_first(fetcher: &dyn PartitionFetcher, batch: &[RecordRun]) -> Result<()> {
    for run in batch {
        if let Some(first) = run.first_offset() {
            fetcher.seek_to(&run.partition, Some(first))?;
        }
    }
    Ok(())
}

/// The group's committed offset of each of `partitions` that has one.
fn committed_positions(
    member: &dyn GroupMember,
    partitions: &[TopicPartition],
) -> std::result::Result<BTreeMap<TopicPartition, i64>, KafkaFailure> {
    if partitions.is_empty() {
        return Ok(BTreeMap::new());
    }
    Ok(member
        .committed_offsets(partitions)?
        .into_iter()
        .filter_map(|(partition, committed)| Some((partition, committed?.offset)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::lag_behind;

    #[test]
    fn a_partition_is_behind_by_what_lies_between_the_next_offset_and_its_high_watermark() {
        assert_eq!(lag_behind(10, 4, None), 6);
        assert_eq!(lag_behind(10, 10, None), 0);
        // A position past a high watermark the last fetch saw is not a negative lag.
        assert_eq!(lag_behind(10, 12, None), 0);
    }

    #[test]
    fn records_of_the_threads_own_open_transaction_are_not_lag() {
        // Everything from offset 4 on is the thread's own, uncommitted: nothing can be read.
        assert_eq!(lag_behind(10, 4, Some(4)), 0);
        // Committed records before the transaction's first one can.
        assert_eq!(lag_behind(10, 4, Some(7)), 3);
        // The transaction's records were delivered beyond what the last fetch saw.
        assert_eq!(lag_behind(10, 4, Some(12)), 6);
    }
}
