//! The failure paths of an engine thread, driven deterministically through the Kafka
//! clients' traits: the real thread loop, task manager and commit barrier run on the test's
//! thread against [`fake_kafka`], which fails the operations each test asks it to.
//!
//! Every test starts one thread of an echo topology (each record of `in` goes to the same
//! partition of `out`) on two input partitions, commits on every turn of the loop, and
//! stops when the polls scripted are done.

mod fake_kafka;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use fake_kafka::{stale_generation, Elsewhere, Event, FakeKafka, Poll, ProducerOp};

use crate::engine::budget::UncommittedBytesBudget;
use crate::engine::config::EngineConfig;
use crate::engine::error::{Error, Result};
use crate::engine::metrics::EngineMetrics;
use crate::engine::processor::{
    CommittedInput, KeptStateCorrupted, ProcessorError, ProcessorFactory, TaskProcessor,
};
use crate::engine::state_owners::StateOwners;
use crate::engine::task_manager::ThreadShared;
use crate::engine::thread;
use crate::engine::topology::TaskId;
use crate::engine::topology::{
    ResolvedStore, ResolvedSubtopology, ResolvedTopology, StoreDescription,
};
use crate::kafka::{
    Admin, ClientError, DeliveredOffsets, OffsetReset, ProducedRecord, ProducedRecords, ReadTo,
    RecordRun, TransactionFailure,
};
use crate::store::TopicPartition;

const INPUT: &str = "in";
const OUTPUT: &str = "out";
const DEAD_LETTERS: &str = "dead-letters";

/// What the processors were asked, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    /// The offsets of the records handed to the processor, in order.
    Processed(Vec<i64>),
    /// The processor was asked whether its input buffer is full, and answered.
    FullAsked(bool),
    RolledBack(TaskId),
    Closed {
        task: TaskId,
        clean: bool,
    },
    SendFailed {
        task: TaskId,
        index: u64,
        code: i16,
    },
    /// The processor was told its records numbered below `below` are answered.
    Answered {
        task: TaskId,
        below: u64,
    },
}

/// What a processor answers for a record the producer could not write.
#[derive(Clone, Copy)]
enum OnSendFailed {
    /// Fails, as Kafka Streams' handler answering FAIL.
    Fail,
    /// Goes on, producing the record to the dead-letter topic instead.
    DeadLetter,
}

#[derive(Default)]
struct Journal(Mutex<Vec<Call>>);

impl Journal {
    fn calls(&self) -> MutexGuard<'_, Vec<Call>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self, matches: impl Fn(&Call) -> bool) -> usize {
        self.calls().iter().filter(|call| matches(call)).count()
    }

    fn send_failures(&self) -> Vec<Call> {
        self.calls()
            .iter()
            .filter(|call| matches!(call, Call::SendFailed { .. }))
            .cloned()
            .collect()
    }
}

struct EchoProcessor {
    task: TaskId,
    journal: Arc<Journal>,
    on_send_failed: OnSendFailed,
    /// The input value it fails on, producing it to the dead-letter topic first, as Kafka
    /// Streams' processing exception handler does before answering FAIL.
    poison: Option<&'static str>,
    /// What it produced in a batch that failed.
    produced_before_failure: ProducedRecords,
    /// The input value after which it asks for a commit, as `ProcessorContext#commit` does.
    commit_after: Option<&'static str>,
    /// It asked for a commit that has not been made yet.
    commit_asked: bool,
    /// How many times it answers that its inputs are full once it processed its first
    /// record; `None` before then.
    full_answers_left: Option<usize>,
    full_answers: usize,
}

impl TaskProcessor for EchoProcessor {
    fn process(
        &mut self,
        records: &[RecordRun],
    ) -> std::result::Result<ProducedRecords, ProcessorError> {
        let offsets = records
            .iter()
            .flat_map(|run| run.records().map(|r| r.offset))
            .collect();
        self.journal.calls().push(Call::Processed(offsets));
        self.full_answers_left.get_or_insert(self.full_answers);
        let mut produced = ProducedRecords::new();
        for run in records {
            for record in run.records() {
                let value = record.value.map(<[u8]>::to_vec);
                if value.as_deref() == self.poison.map(str::as_bytes) {
                    let dead = format!("dead:{}", self.poison.unwrap_or_default());
                    produced.push(&ProducedRecord::new(
                        DEAD_LETTERS,
                        Some(0),
                        None,
                        Some(dead.into_bytes()),
                        0,
                    ));
                    self.produced_before_failure = produced;
                    return Err(
                        format!("cannot process {}", self.poison.unwrap_or_default()).into(),
                    );
                }
                if value.as_deref() == self.commit_after.map(str::as_bytes) {
                    self.commit_asked = true;
                }
                let partition = Some(run.partition.partition);
                produced.push(&ProducedRecord::new(
                    OUTPUT,
                    partition,
                    None,
                    value,
                    record.timestamp,
                ));
            }
        }
        Ok(produced)
    }

    fn produced_before_failure(&mut self) -> std::result::Result<ProducedRecords, ProcessorError> {
        Ok(std::mem::take(&mut self.produced_before_failure))
    }

    fn send_failed(
        &mut self,
        index: u64,
        record: &ProducedRecord,
        error: &ClientError,
    ) -> std::result::Result<ProducedRecords, ProcessorError> {
        self.journal.calls().push(Call::SendFailed {
            task: self.task,
            index,
            code: error.protocol_code(),
        });
        if error.protocol_code() == ClientError::REQUEST_TIMED_OUT {
            // Kafka Streams' record collector under exactly-once: the task is corrupted.
            return Err(Box::new(KeptStateCorrupted(error.to_string())));
        }
        match self.on_send_failed {
            OnSendFailed::Fail => Err(Box::new(error.clone())),
            OnSendFailed::DeadLetter => {
                let value = format!(
                    "dead:{}",
                    String::from_utf8_lossy(record.value.as_deref().unwrap_or_default())
                );
                Ok([ProducedRecord::new(
                    DEAD_LETTERS,
                    Some(0),
                    None,
                    Some(value.into_bytes()),
                    0,
                )]
                .into_iter()
                .collect())
            }
        }
    }

    fn sends_answered(&mut self, below: u64) -> std::result::Result<(), ProcessorError> {
        self.journal.calls().push(Call::Answered {
            task: self.task,
            below,
        });
        Ok(())
    }

    fn full_inputs(&mut self) -> std::result::Result<Vec<TopicPartition>, ProcessorError> {
        let full = match &mut self.full_answers_left {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        };
        self.journal.calls().push(Call::FullAsked(full));
        Ok(if full {
            vec![input(self.task.partition)]
        } else {
            Vec::new()
        })
    }

    fn commit_requested(&mut self) -> std::result::Result<bool, ProcessorError> {
        Ok(self.commit_asked)
    }

    fn committed(
        &mut self,
        _delivered: &DeliveredOffsets,
    ) -> std::result::Result<(), ProcessorError> {
        self.commit_asked = false;
        Ok(())
    }

    fn rolled_back(&mut self, _cause: &str) -> std::result::Result<(), ProcessorError> {
        self.journal.calls().push(Call::RolledBack(self.task));
        Ok(())
    }

    fn close(&mut self, clean: bool) -> std::result::Result<(), ProcessorError> {
        self.journal.calls().push(Call::Closed {
            task: self.task,
            clean,
        });
        Ok(())
    }
}

struct EchoFactory {
    journal: Arc<Journal>,
    on_send_failed: OnSendFailed,
    poison: Arc<Mutex<Option<&'static str>>>,
    commit_after: Arc<Mutex<Option<&'static str>>>,
    /// How many times each processor created from now on says its input is full after it
    /// processed its first record.
    full_answers: Arc<AtomicUsize>,
}

impl ProcessorFactory for EchoFactory {
    fn create(
        &self,
        task: TaskId,
        _inputs: &[CommittedInput],
    ) -> std::result::Result<Box<dyn TaskProcessor>, ProcessorError> {
        Ok(self.processor(task))
    }

    fn create_standby(
        &self,
        task: TaskId,
    ) -> std::result::Result<Box<dyn TaskProcessor>, ProcessorError> {
        Ok(self.processor(task))
    }
}

impl EchoFactory {
    fn processor(&self, task: TaskId) -> Box<dyn TaskProcessor> {
        Box::new(EchoProcessor {
            task,
            journal: Arc::clone(&self.journal),
            on_send_failed: self.on_send_failed,
            poison: *self.poison.lock().unwrap(),
            produced_before_failure: ProducedRecords::new(),
            commit_after: *self.commit_after.lock().unwrap(),
            commit_asked: false,
            full_answers_left: None,
            full_answers: self.full_answers.load(Ordering::Relaxed),
        })
    }
}

fn input(partition: i32) -> TopicPartition {
    TopicPartition::new(INPUT, partition)
}

fn task(partition: i32) -> TaskId {
    TaskId {
        subtopology: 0,
        partition,
    }
}

/// One engine thread on a fake Kafka whose `in-0` holds a0 a1 a2 and `in-1` b0 b1 b2.
struct Harness {
    kafka: Arc<FakeKafka>,
    journal: Arc<Journal>,
    full_answers: Arc<AtomicUsize>,
    /// The input value every processor created from now on fails on.
    poison: Arc<Mutex<Option<&'static str>>>,
    /// The input value after which every processor created from now on asks for a commit.
    commit_after: Arc<Mutex<Option<&'static str>>>,
    metrics: Arc<EngineMetrics>,
    shared: Arc<ThreadShared>,
    stop: Arc<AtomicBool>,
    _state: tempfile::TempDir,
}

impl Harness {
    fn new(guarantee: &str, on_send_failed: OnSendFailed, extra: &[(&str, &str)]) -> Self {
        Harness::with_offset_resets(guarantee, on_send_failed, extra, BTreeMap::new())
    }

    fn with_offset_resets(
        guarantee: &str,
        on_send_failed: OnSendFailed,
        extra: &[(&str, &str)],
        offset_resets: BTreeMap<String, OffsetReset>,
    ) -> Self {
        Harness::build(guarantee, on_send_failed, extra, offset_resets, Vec::new())
    }

    /// A harness whose tasks keep a store of their input, a source table: its changelog is
    /// the input partition itself, which a standby replica follows as far as the group
    /// committed it.
    fn with_source_table(extra: &[(&str, &str)]) -> Self {
        let table = ResolvedStore {
            description: StoreDescription {
                name: "table".into(),
                persistent: false,
                logged: true,
                changelog_configs: BTreeMap::new(),
                source_topic_changelog: Some(INPUT.into()),
            },
            changelog_topic: Some(INPUT.into()),
        };
        Harness::build(
            "exactly_once_v2",
            OnSendFailed::Fail,
            extra,
            BTreeMap::new(),
            vec![table],
        )
    }

    fn build(
        guarantee: &str,
        on_send_failed: OnSendFailed,
        extra: &[(&str, &str)],
        offset_resets: BTreeMap<String, OffsetReset>,
        stores: Vec<ResolvedStore>,
    ) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut properties: BTreeMap<String, String> = [
            ("application.id", "faults"),
            // Nothing listens there: only the admin client is real, and it is never used
            // (the topology has no repartition topics to purge).
            ("bootstrap.servers", "127.0.0.1:9"),
            ("processing.guarantee", guarantee),
            ("commit.interval.ms", "0"),
        ]
        .into_iter()
        .chain(extra.iter().copied())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        properties.insert("state.dir".into(), state.path().display().to_string());
        let config = Arc::new(EngineConfig::from_properties(&properties).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let kafka = FakeKafka::new(
            &[
                (input(0), vec!["a0", "a1", "a2"]),
                (input(1), vec!["b0", "b1", "b2"]),
            ],
            Arc::clone(&stop),
        );
        let journal = Arc::new(Journal::default());
        let full_answers = Arc::new(AtomicUsize::new(0));
        let poison = Arc::new(Mutex::new(None));
        let commit_after = Arc::new(Mutex::new(None));
        let metrics = Arc::new(EngineMetrics::default());
        let topology = ResolvedTopology {
            subtopologies: vec![ResolvedSubtopology {
                id: 0,
                source_topics: vec![INPUT.into()],
                task_count: 2,
                stores,
            }],
            global_stores: Vec::new(),
            repartition_topics: BTreeSet::new(),
            offset_resets,
            matched_topics: BTreeSet::new(),
        };
        let shared = Arc::new(ThreadShared {
            admin: Admin::new(&config.admin_config(), config.client_timeout).unwrap(),
            uncommitted_bytes: Arc::new(UncommittedBytesBudget::new(None, false)),
            config,
            topology: RwLock::new(Arc::new(topology)),
            factory: Arc::new(EchoFactory {
                journal: Arc::clone(&journal),
                on_send_failed,
                poison: Arc::clone(&poison),
                commit_after: Arc::clone(&commit_after),
                full_answers: Arc::clone(&full_answers),
            }),
            restore_listener: None,
            metrics: Arc::clone(&metrics),
            process_id: "process".into(),
            clients: Arc::new(Arc::clone(&kafka)),
            paused: AtomicBool::new(false),
            state_owners: Arc::new(StateOwners::default()),
        });
        Harness {
            kafka,
            journal,
            full_answers,
            poison,
            commit_after,
            metrics,
            shared,
            stop,
            _state: state,
        }
    }

    fn exactly_once() -> Self {
        Harness::new("exactly_once_v2", OnSendFailed::Fail, &[])
    }

    /// Runs the thread until the script is done or it fails.
    /// Assigns both inputs, fetches three times (every input record, with room for a retry),
    /// and runs the thread to its end.
    fn run_over_every_input(&self) -> Result<()> {
        self.kafka
            .script([both_inputs(), Poll::Fetch, Poll::Fetch, Poll::Fetch]);
        self.run()
    }

    /// Every input record's output was written, and its offset committed, once.
    fn assert_every_input_once(&self) {
        assert_eq!(self.output(), every_input());
        assert_eq!(self.kafka.committed(), every_input_committed());
    }

    fn run(&self) -> Result<()> {
        thread::run(Arc::clone(&self.shared), 1, Arc::clone(&self.stop))
    }

    /// A scripted poll in which the member's rebalance starts (`true`) or ends.
    fn rebalance(&self, starts: bool) -> Poll {
        let kafka = Arc::clone(&self.kafka);
        Poll::Elsewhere(Elsewhere(Arc::new(move || kafka.set_rebalancing(starts))))
    }

    fn output(&self) -> Vec<String> {
        sorted(self.kafka.visible(OUTPUT))
    }

    fn dirty_closes(&self) -> usize {
        self.journal
            .count(|call| matches!(call, Call::Closed { clean: false, .. }))
    }

    fn rollbacks(&self) -> usize {
        self.journal
            .count(|call| matches!(call, Call::RolledBack(_)))
    }
}

fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values
}

fn every_input() -> Vec<String> {
    sorted(
        ["a0", "a1", "a2", "b0", "b1", "b2"]
            .map(String::from)
            .to_vec(),
    )
}

fn both_inputs() -> Poll {
    Poll::Assign(vec![input(0), input(1)])
}

fn every_input_committed() -> BTreeMap<TopicPartition, i64> {
    BTreeMap::from([(input(0), 3), (input(1), 3)])
}

fn abortable(message: &str) -> TransactionFailure {
    TransactionFailure::Abortable(ClientError::new(ClientError::UNKNOWN_SERVER_ERROR, message))
}

fn timed_out(operation: &str) -> TransactionFailure {
    TransactionFailure::TimedOut(ClientError::new(
        ClientError::REQUEST_TIMED_OUT,
        format!("{operation} timed out"),
    ))
}

/// What librdkafka answers every transactional call once a request of the transaction went
/// unanswered in time: the transaction must abort, under the timeout's code.
fn failed_by_a_timeout(operation: &str) -> TransactionFailure {
    TransactionFailure::Abortable(ClientError::new(
        ClientError::REQUEST_TIMED_OUT,
        format!("{operation} timed out"),
    ))
}

fn fenced() -> TransactionFailure {
    TransactionFailure::Fenced(ClientError::new(90, "producer fenced by a newer epoch"))
}

fn fatal(message: &str) -> TransactionFailure {
    TransactionFailure::Fatal(ClientError::new(ClientError::UNKNOWN_SERVER_ERROR, message))
}

fn too_large() -> ClientError {
    ClientError::new(10, "Broker: Message size too large")
}

#[test]
fn everything_polled_is_written_and_committed_once() {
    let harness = Harness::exactly_once();
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    harness.assert_every_input_once();
    assert_eq!(harness.dirty_closes(), 0);
}

#[test]
fn what_a_poll_returns_while_the_thread_is_asked_to_stop_is_not_processed_nor_committed() {
    // Two records a poll, and no commit before the closing one: the stopping poll returns a2
    // after a0 and a1 were processed, and the consumer's position past a2 must not become the
    // input's committed offset.
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("max.poll.records", "2"), ("commit.interval.ms", "600000")],
    );
    harness.kafka.script([
        both_inputs(),
        Poll::FetchFrom(input(0)),
        Poll::FetchWhileStopping,
    ]);
    harness.run().unwrap();
    assert_eq!(harness.output(), ["a0", "a1"]);
    assert_eq!(harness.kafka.committed(), BTreeMap::from([(input(0), 2)]));
}

#[test]
fn a_task_whose_state_another_thread_holds_waits_until_that_thread_lets_it_go() {
    let harness = Harness::exactly_once();
    assert!(harness.shared.state_owners.claim(task(0), 2));
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    assert_eq!(harness.output(), ["b0", "b1", "b2"]);
    assert_eq!(
        harness.kafka.committed(),
        BTreeMap::from([(input(1), 3)]),
        "nothing of the waiting task is committed"
    );

    let harness = Harness::exactly_once();
    assert!(harness.shared.state_owners.claim(task(0), 2));
    let owners = Arc::clone(&harness.shared.state_owners);
    let other_thread_closes = Elsewhere(Arc::new(move || owners.release(task(0), 2)));
    harness.kafka.script([
        both_inputs(),
        Poll::Fetch,
        Poll::Elsewhere(other_thread_closes),
        Poll::Fetch,
        Poll::Fetch,
    ]);
    harness.run().unwrap();
    harness.assert_every_input_once();
    assert!(
        harness.shared.state_owners.claim(task(0), 3),
        "the thread let the state go as it closed the task"
    );
}

#[test]
fn a_commit_a_task_asks_for_is_made_without_waiting_for_the_commit_interval() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("commit.interval.ms", "3600000")],
    );
    *harness.commit_after.lock().unwrap() = Some("a1");
    harness.kafka.script([
        both_inputs(),
        Poll::FetchFrom(input(0)),
        Poll::FetchFrom(input(1)),
    ]);
    harness.run().unwrap();
    let commits = harness.kafka.commits();
    // The first commit is the one asked for, right after the batch that asked; the thread's
    // clean close makes the second.
    assert_eq!(commits.len(), 2, "{commits:?}");
    assert_eq!(commits[0].offsets, BTreeMap::from([(input(0), 3)]));
    assert_eq!(sorted(commits[0].visible.clone()), ["a0", "a1", "a2"]);
    assert_eq!(harness.output(), every_input());
}

#[test]
fn a_commit_that_falls_due_while_the_member_rebalances_waits_until_the_rebalance_ends() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("commit.interval.ms", "3600000")],
    );
    *harness.commit_after.lock().unwrap() = Some("a1");
    let kafka = Arc::clone(&harness.kafka);
    let commits_during_rebalance = Arc::new(Mutex::new(None));
    let counted = Arc::clone(&commits_during_rebalance);
    let rebalance_ends = Elsewhere(Arc::new(move || {
        *counted.lock().unwrap() = Some(kafka.commits().len());
        kafka.set_rebalancing(false);
    }));
    harness.kafka.script([
        both_inputs(),
        harness.rebalance(true),
        Poll::FetchFrom(input(0)),
        Poll::Elsewhere(rebalance_ends),
        Poll::FetchFrom(input(1)),
    ]);
    harness.run().unwrap();
    assert_eq!(
        *commits_during_rebalance.lock().unwrap(),
        Some(0),
        "the commit the task asked for waited for the rebalance"
    );
    let commits = harness.kafka.commits();
    // Made right after the rebalance, before input 1 was fetched; the clean close makes the second.
    assert_eq!(commits.len(), 2, "{commits:?}");
    assert_eq!(commits[0].offsets, BTreeMap::from([(input(0), 3)]));
    assert_eq!(harness.output(), every_input());
}

#[test]
fn a_static_member_fenced_out_of_its_consumer_joins_again_with_a_new_one() {
    // Nothing commits before the end: the work done before the fence is rolled back.
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("commit.interval.ms", "600000")],
    );
    harness.kafka.script([
        both_inputs(),
        Poll::Fetch,
        Poll::FenceInstance,
        both_inputs(),
        Poll::Fetch,
    ]);
    harness.run().unwrap();
    assert_eq!(harness.kafka.count(&Event::GroupMemberCreated), 2);
    assert_eq!(harness.dirty_closes(), 2, "both tasks are given up as lost");
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.metrics.snapshot().rejoins, 1);
    assert_eq!(harness.output(), every_input(), "each record counts once");
    assert_eq!(harness.kafka.committed(), every_input_committed());
}

#[test]
fn a_static_member_fenced_again_soon_after_joining_anew_stops_the_thread() {
    let harness = Harness::exactly_once();
    harness.kafka.script([
        both_inputs(),
        Poll::FenceInstance,
        both_inputs(),
        Poll::Fetch,
        Poll::FenceInstance,
        both_inputs(),
        Poll::Fetch,
    ]);
    let error = harness.run().unwrap_err().to_string();
    assert!(
        error.contains("group.instance.id was fenced"),
        "the fencing is named, not librdkafka's \"Fatal error\": {error}"
    );
    assert_eq!(harness.kafka.count(&Event::GroupMemberCreated), 2);
    assert_eq!(
        harness.output(),
        every_input(),
        "what was committed before stays"
    );
}

#[test]
fn an_abortable_commit_error_rolls_back_rewinds_and_goes_on() {
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::Commit, abortable("transaction must abort"));
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2, "both tasks roll back");
    assert_eq!(
        harness.output(),
        every_input(),
        "read again from the committed offsets"
    );
    assert_eq!(harness.kafka.committed(), every_input_committed());
    assert_eq!(harness.metrics.snapshot().aborted_transactions, 1);
    assert_eq!(
        harness.kafka.count(&Event::ProducerCreated),
        2,
        "the abort is followed by a producer with a new epoch, which a request of the aborted \
         transaction taken late cannot join the next transaction under"
    );
    assert_eq!(
        harness.kafka.count(&Event::Rejoined),
        0,
        "no task is given up"
    );
}

#[test]
fn a_rollback_whose_committed_offsets_time_out_reads_them_again_before_it_rewinds() {
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::Commit, abortable("transaction must abort"));
    let kafka = Arc::clone(&harness.kafka);
    let coordinator_goes_away = Elsewhere(Arc::new(move || kafka.time_out_committed_reads(2)));
    harness.kafka.script([
        both_inputs(),
        Poll::Elsewhere(coordinator_goes_away),
        Poll::Fetch,
        Poll::Fetch,
        Poll::Fetch,
    ]);
    harness.run().unwrap();
    assert_eq!(harness.kafka.committed_reads_left_to_time_out(), 0);
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2, "both tasks roll back");
    assert_eq!(
        harness.output(),
        every_input(),
        "read again from the committed offsets"
    );
    assert_eq!(harness.kafka.committed(), every_input_committed());
}

#[test]
fn a_rollback_whose_committed_offsets_time_out_past_the_task_timeout_fails_the_thread() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("task.timeout.ms", "0")],
    );
    harness
        .kafka
        .fail_next(ProducerOp::Commit, abortable("transaction must abort"));
    let kafka = Arc::clone(&harness.kafka);
    let coordinator_goes_away = Elsewhere(Arc::new(move || kafka.time_out_committed_reads(1)));
    harness.kafka.script([
        both_inputs(),
        Poll::Elsewhere(coordinator_goes_away),
        Poll::Fetch,
        Poll::Fetch,
    ]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Kafka(f)
            if f.error.protocol_code() == ClientError::REQUEST_TIMED_OUT
                && f.context == "reading committed offsets"),
        "{error}"
    );
    assert_eq!(harness.output(), Vec::<String>::new());
    assert!(harness.kafka.committed().is_empty());
}

#[test]
fn a_fenced_commit_gives_the_tasks_up_and_rejoins_with_a_new_producer() {
    let harness = Harness::exactly_once();
    harness.kafka.fail_next(ProducerOp::Commit, fenced());
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.dirty_closes(), 2, "both tasks close dirty");
    assert_eq!(harness.kafka.count(&Event::ProducerCreated), 2);
    assert_eq!(harness.kafka.count(&Event::Rejoined), 1);
    assert_eq!(harness.metrics.snapshot().rejoins, 1);
    assert_eq!(
        harness.output(),
        every_input(),
        "the tasks run again once reassigned"
    );
    assert_eq!(harness.kafka.committed(), every_input_committed());
}

/// Fences the thread's producer at its next commit, while the broker is too far away for the
/// first `timeouts` initialisations of its replacement to be answered. Scripted after the
/// assignment, whose wait for the first producer's initialisation would meet them first.
fn fenced_while_the_broker_is_away(harness: &Harness, timeouts: usize) -> Poll {
    let kafka = Arc::clone(&harness.kafka);
    Poll::Elsewhere(Elsewhere(Arc::new(move || {
        kafka.fail_next(ProducerOp::Commit, fenced());
        for _ in 0..timeouts {
            kafka.fail_next(ProducerOp::Init, timed_out("initialising the producer"));
        }
    })))
}

#[test]
fn a_replacement_producer_whose_initialisation_times_out_is_made_again() {
    let harness = Harness::exactly_once();
    harness.kafka.script([
        both_inputs(),
        fenced_while_the_broker_is_away(&harness, 2),
        Poll::Fetch,
        Poll::Fetch,
        Poll::Fetch,
    ]);
    harness.run().unwrap();
    assert_eq!(
        harness.kafka.count(&Event::ProducerCreated),
        4,
        "the first producer, and the replacement made three times"
    );
    assert_eq!(harness.kafka.count(&Event::ProducerReady), 2);
    assert_eq!(harness.kafka.count(&Event::Rejoined), 1);
    harness.assert_every_input_once();
}

#[test]
fn a_thread_joins_its_group_while_its_producer_initialises_and_takes_tasks_once_it_is_ready() {
    let harness = Harness::exactly_once();
    harness.kafka.script([both_inputs(), Poll::Fetch]);
    harness.run().unwrap();
    let events = harness.kafka.events();
    let first = |event: Event| {
        events
            .iter()
            .position(|e| *e == event)
            .unwrap_or_else(|| panic!("no {event:?} in {events:?}"))
    };
    assert!(
        first(Event::ProducerCreated) < first(Event::GroupMemberCreated)
            && first(Event::GroupMemberCreated) < first(Event::Assigned)
            && first(Event::Assigned) < first(Event::ProducerReady)
            && first(Event::ProducerReady) < first(Event::Committed),
        "the member joins before the producer's initialisation is waited for, which the first \
         assignment does before its tasks run: {events:?}"
    );
    assert_eq!(harness.kafka.count(&Event::ProducerReady), 1);
    harness.assert_every_input_once();
}

#[test]
fn a_replacement_producer_timing_out_past_the_task_timeout_fails_the_thread() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("task.timeout.ms", "0")],
    );
    harness.kafka.script([
        both_inputs(),
        fenced_while_the_broker_is_away(&harness, 1),
        Poll::Fetch,
        Poll::Fetch,
    ]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Producer(TransactionFailure::Fatal(e))
            if e.to_string() == "initialising the producer timed out"),
        "{error}"
    );
    assert_eq!(harness.output(), Vec::<String>::new());
}

#[test]
fn a_fatal_commit_error_stops_the_thread_with_nothing_visible() {
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::Commit, fatal("broker says no"));
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Producer(TransactionFailure::Fatal(e)) if e.to_string() == "broker says no"),
        "{error}"
    );
    assert_eq!(harness.output(), Vec::<String>::new());
    assert!(harness.kafka.committed().is_empty());
    assert_eq!(harness.dirty_closes(), 2);
    assert_eq!(
        harness.kafka.count(&Event::Aborted),
        1,
        "closing aborts the transaction"
    );
}

#[test]
fn a_commit_that_timed_out_is_resumed_never_aborted() {
    let harness = Harness::exactly_once();
    for _ in 0..2 {
        harness
            .kafka
            .fail_next(ProducerOp::Commit, timed_out("committing the transaction"));
    }
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 0);
    assert_eq!(harness.rollbacks(), 0);
    harness.assert_every_input_once();
}

#[test]
fn a_commit_whose_answer_was_lost_keeps_its_work() {
    // The coordinator committed the transaction, but the answer timed out: an abort now would
    // roll the stores back behind the committed changelogs and offsets.
    let harness = Harness::exactly_once();
    harness.kafka.fail_next(
        ProducerOp::CommitAnswer,
        timed_out("committing the transaction"),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 0);
    assert_eq!(harness.rollbacks(), 0, "the committed work stays");
    harness.assert_every_input_once();
}

#[test]
fn a_resumed_commit_failing_abortably_restores_the_tasks_instead_of_rolling_them_back() {
    // The coordinator may have committed the transaction whose answer was lost: rolled back in
    // place, the stores would miss what the changelogs and the group's offsets hold. The tasks
    // are given up instead and open again, restoring whatever became of the transaction.
    let harness = Harness::exactly_once();
    harness.kafka.fail_next(
        ProducerOp::CommitAnswer,
        timed_out("committing the transaction"),
    );
    harness.kafka.fail_next(
        ProducerOp::ResumedCommit,
        abortable("the transaction had already failed locally"),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.rollbacks(), 0, "nothing rolls back in place");
    assert_eq!(harness.kafka.count(&Event::Aborted), 0);
    assert_eq!(harness.dirty_closes(), 2, "both tasks close dirty");
    assert_eq!(harness.kafka.count(&Event::ProducerCreated), 2);
    assert_eq!(harness.kafka.count(&Event::Rejoined), 1);
    assert_eq!(harness.output(), every_input(), "each input once");
    assert_eq!(harness.kafka.committed(), every_input_committed());
}

#[test]
fn a_commit_timing_out_before_it_asked_the_coordinator_then_failing_abortably_rolls_back() {
    // Adding the offsets timed out, say: nothing was committed, and an abort is safe.
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::Commit, timed_out("adding the offsets"));
    harness
        .kafka
        .fail_next(ProducerOp::Commit, abortable("broker transport failure"));
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2, "both tasks roll back");
    assert_eq!(harness.dirty_closes(), 0, "no task is given up");
    assert_eq!(harness.kafka.count(&Event::Rejoined), 0);
    harness.assert_every_input_once();
}

#[test]
fn a_transaction_a_timeout_failed_is_aborted_at_once_not_made_again() {
    // librdkafka answers every later call at once with the same abortable timeout: made again,
    // the commit would spin until the task timeout, processing nothing.
    let harness = Harness::exactly_once();
    harness.kafka.fail_next(
        ProducerOp::Commit,
        failed_by_a_timeout("committing the offsets"),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2, "both tasks roll back");
    harness.assert_every_input_once();
}

#[test]
fn a_commit_timing_out_past_the_task_timeout_fails_the_thread() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("task.timeout.ms", "0")],
    );
    harness
        .kafka
        .fail_next(ProducerOp::Commit, timed_out("committing the transaction"));
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Producer(TransactionFailure::Fatal(e))
            if e.protocol_code() == ClientError::REQUEST_TIMED_OUT
                && e.to_string() == "committing the transaction timed out"),
        "{error}"
    );
    assert_eq!(harness.output(), Vec::<String>::new());
    assert!(harness.kafka.committed().is_empty());
    assert_eq!(harness.dirty_closes(), 2);
    assert_eq!(
        harness.rollbacks(),
        0,
        "closing dirty drops the work by itself"
    );
}

#[test]
fn an_abort_that_times_out_is_made_again_while_the_broker_is_away() {
    let harness = Harness::exactly_once();
    harness.kafka.fail_once(
        "a1",
        ClientError::new(ClientError::REQUEST_TIMED_OUT, "Local: Message timed out"),
    );
    for _ in 0..2 {
        harness
            .kafka
            .fail_next(ProducerOp::Abort, timed_out("aborting the transaction"));
    }
    harness.run_over_every_input().unwrap();
    assert_eq!(
        harness.kafka.count(&Event::Aborted),
        1,
        "the third abort went through"
    );
    assert_eq!(harness.rollbacks(), 2, "both tasks roll back");
    assert_eq!(
        harness.output(),
        every_input(),
        "read again from the committed offsets"
    );
    assert_eq!(harness.kafka.committed(), every_input_committed());
}

#[test]
fn an_abort_timing_out_past_the_task_timeout_fails_the_thread() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("task.timeout.ms", "0")],
    );
    harness.kafka.fail_once(
        "a1",
        ClientError::new(ClientError::REQUEST_TIMED_OUT, "Local: Message timed out"),
    );
    harness
        .kafka
        .fail_next(ProducerOp::Abort, timed_out("aborting the transaction"));
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Producer(TransactionFailure::Fatal(e))
            if e.protocol_code() == ClientError::REQUEST_TIMED_OUT
                && e.to_string() == "aborting the transaction timed out"),
        "{error}"
    );
    assert_eq!(harness.output(), Vec::<String>::new());
    assert!(harness.kafka.committed().is_empty());
}

#[test]
fn an_abort_fenced_after_an_abortable_commit_gives_the_tasks_up() {
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::Commit, abortable("transaction must abort"));
    harness.kafka.fail_next(ProducerOp::Abort, fenced());
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.dirty_closes(), 2);
    assert_eq!(harness.kafka.count(&Event::ProducerCreated), 2);
    assert_eq!(harness.kafka.count(&Event::Rejoined), 1);
    harness.assert_every_input_once();
}

#[test]
fn a_send_failing_abortably_rolls_back_and_goes_on() {
    let harness = Harness::exactly_once();
    harness.kafka.fail_next(
        ProducerOp::SendTo(OUTPUT.into()),
        abortable("send must abort"),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2);
    harness.assert_every_input_once();
}

#[test]
fn under_exactly_once_a_record_whose_delivery_timed_out_rolls_back_and_goes_on_with_a_new_producer()
{
    let harness = Harness::new("exactly_once_v2", OnSendFailed::Fail, &[]);
    harness.kafka.fail_once(
        "a1",
        ClientError::new(ClientError::REQUEST_TIMED_OUT, "Local: Message timed out"),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.kafka.count(&Event::ProducerCreated), 2);
    assert_eq!(harness.rollbacks(), 2);
    harness.assert_every_input_once();
}

#[test]
fn under_exactly_once_a_record_failing_out_of_sequence_gives_the_tasks_up_with_a_new_producer() {
    let harness = Harness::new("exactly_once_v2", OnSendFailed::Fail, &[]);
    harness.kafka.fail_once(
        "a1",
        ClientError::new(
            ClientError::OUT_OF_ORDER_SEQUENCE_NUMBER,
            "Broker: Broker received an out of order sequence number",
        ),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.journal.send_failures(), vec![], "no task is asked");
    assert_eq!(harness.dirty_closes(), 2, "both tasks close dirty");
    assert_eq!(harness.kafka.count(&Event::ProducerCreated), 2);
    assert_eq!(harness.kafka.count(&Event::Rejoined), 1);
    harness.assert_every_input_once();
}

#[test]
fn a_flush_timing_out_rolls_back_and_goes_on() {
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::Flush, timed_out("flushing"));
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2);
    harness.assert_every_input_once();
}

#[test]
fn offsets_refused_as_they_join_the_transaction_roll_back_and_go_on() {
    let harness = Harness::exactly_once();
    harness.kafka.fail_next(
        ProducerOp::AddOffsets,
        abortable("the coordinator is loading"),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2, "both tasks roll back");
    harness.assert_every_input_once();
}

#[test]
fn offsets_sent_under_a_generation_the_group_replaced_give_the_tasks_up() {
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::AddOffsets, stale_generation());
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.dirty_closes(), 2, "both tasks close dirty");
    assert_eq!(harness.kafka.count(&Event::ProducerCreated), 2);
    assert_eq!(harness.kafka.count(&Event::Rejoined), 1);
    assert_eq!(
        harness.output(),
        every_input(),
        "the tasks run again once reassigned"
    );
    assert_eq!(harness.kafka.committed(), every_input_committed());
}

#[test]
fn offsets_that_joined_a_transaction_whose_flush_timed_out_are_aborted_with_it() {
    // The offsets travel while the records are flushed: once the flush fails, the transaction
    // holding both is aborted, and no commit of the group's offsets runs ahead of the outputs.
    let harness = Harness::exactly_once();
    harness
        .kafka
        .fail_next(ProducerOp::Flush, timed_out("flushing"));
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    let commits = harness.kafka.commits();
    assert!(!commits.is_empty());
    for commit in &commits {
        let consumed: i64 = commit.offsets.values().sum();
        assert_eq!(
            commit.visible.len() as i64,
            consumed,
            "each input committed has its output visible: {commit:?}"
        );
    }
    harness.assert_every_input_once();
}

#[test]
fn a_poll_failing_for_less_than_the_client_timeout_is_retried() {
    let harness = Harness::exactly_once();
    let failure = ClientError::new(
        ClientError::UNKNOWN_SERVER_ERROR,
        "broker transport failure",
    );
    harness
        .kafka
        .script([both_inputs(), Poll::Fail(failure), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    assert_eq!(harness.output(), every_input());
}

#[test]
fn a_source_topic_deleted_while_running_stops_the_thread_as_missing() {
    let harness = Harness::exactly_once();
    harness.kafka.script([
        both_inputs(),
        Poll::Fetch,
        Poll::DeleteTopic(INPUT.into()),
        Poll::Fetch,
    ]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::MissingSourceTopics(topics) if topics == &[INPUT.to_string()]),
        "{error}"
    );
    assert_eq!(harness.dirty_closes(), 2);
}

#[test]
fn a_rebalance_that_finds_a_source_topic_gone_stops_the_thread_before_any_task_processes() {
    let harness = Harness::exactly_once();
    harness.kafka.delete_topic(INPUT);
    harness.kafka.script([both_inputs(), Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::MissingSourceTopics(topics) if topics == &[INPUT.to_string()]),
        "{error}"
    );
    assert_eq!(
        harness
            .journal
            .count(|call| matches!(call, Call::Processed(_))),
        0
    );
    assert_eq!(harness.dirty_closes(), 2, "the tasks it opened close dirty");
}

#[test]
fn an_unknown_topic_reported_while_the_source_topics_are_there_is_retried() {
    let harness = Harness::exactly_once();
    let failure = ClientError::new(
        ClientError::UNKNOWN_TOPIC_OR_PARTITION,
        "Subscribed topic not available: in",
    );
    harness
        .kafka
        .script([both_inputs(), Poll::Fail(failure), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    assert_eq!(harness.output(), every_input());
}

#[test]
fn a_task_whose_committed_offsets_could_not_be_read_in_time_opens_on_a_later_turn() {
    // The group coordinator is away as the tasks open: three reads time out, two as the group
    // assigns them, one as the held tasks try again on the next turn.
    let harness = Harness::exactly_once();
    harness.kafka.time_out_committed_reads(3);
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.committed_reads_left_to_time_out(), 0);
    harness.assert_every_input_once();
    assert_eq!(harness.dirty_closes(), 0);
}

#[test]
fn a_task_whose_committed_offsets_time_out_past_the_task_timeout_fails_the_thread() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("task.timeout.ms", "0")],
    );
    harness.kafka.time_out_committed_reads(1);
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    assert_failed_past_the_task_timeout(harness.run(), "task 0_0");
    assert_eq!(harness.output(), Vec::<String>::new());
}

#[test]
fn a_task_revoked_while_it_waits_to_open_again_lets_its_state_go() {
    // The reads as the group assigns the task and on the next turn, before it revokes it.
    let harness = Harness::exactly_once();
    harness.kafka.time_out_committed_reads(2);
    harness.kafka.script([
        Poll::Assign(vec![input(0)]),
        Poll::Revoke {
            partitions: vec![input(0)],
            lost: false,
        },
        Poll::Fetch,
    ]);
    harness.run().unwrap();
    assert_eq!(harness.kafka.committed_reads_left_to_time_out(), 0);
    assert!(
        harness.shared.state_owners.claim(task(0), 2),
        "another thread may take the task's state"
    );
    assert_eq!(harness.output(), Vec::<String>::new());
}

/// The group assigns `in-0` and, once `meanwhile` has happened (reads beginning to time out,
/// say), a standby replica of the task of `in-1` besides, whose input another member committed
/// up to 2.
fn standby_of_in_1_assigned_after(
    harness: &Harness,
    meanwhile: impl Fn(&FakeKafka) + Send + Sync + 'static,
) {
    harness.kafka.commit_elsewhere(input(1), 2);
    let kafka = Arc::clone(&harness.kafka);
    harness.kafka.script([
        Poll::Assign(vec![input(0)]),
        Poll::Fetch,
        Poll::Elsewhere(Elsewhere(Arc::new(move || meanwhile(&kafka)))),
        Poll::AssignWithStandbys {
            active: vec![input(0)],
            standby: vec![input(1)],
        },
    ]);
}

/// The thread failed as `what` made no progress within `task.timeout.ms`, a read timing out.
fn assert_failed_past_the_task_timeout(run: Result<()>, what: &str) {
    let error = run.unwrap_err();
    assert!(
        matches!(&error, Error::Kafka(f)
            if f.error.protocol_code() == ClientError::REQUEST_TIMED_OUT
                && f.context.starts_with(&format!("{what} did not make progress within"))),
        "{error}"
    );
}

fn changelog_read(partition: TopicPartition, from: i64, to: ReadTo) -> Event {
    Event::ChangelogRead {
        partition,
        from,
        to,
    }
}

#[test]
fn a_standby_whose_source_topic_committed_offsets_time_out_opens_on_a_later_turn() {
    let harness = Harness::with_source_table(&[]);
    standby_of_in_1_assigned_after(&harness, |kafka| kafka.time_out_committed_reads(1));
    harness.kafka.script([Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    assert_eq!(harness.kafka.committed_reads_left_to_time_out(), 0);
    // It follows its source-topic changelog as far as the group committed it, once.
    let follows = changelog_read(input(1), 0, ReadTo::FollowUpTo(2));
    assert_eq!(harness.kafka.count(&follows), 1);
    assert_eq!(harness.output(), ["a0", "a1", "a2"]);
}

#[test]
fn a_standby_whose_source_topic_committed_offsets_time_out_past_the_task_timeout_fails_the_thread()
{
    let harness = Harness::with_source_table(&[("task.timeout.ms", "0")]);
    standby_of_in_1_assigned_after(&harness, |kafka| kafka.time_out_committed_reads(1));
    harness.kafka.script([Poll::Fetch]);
    assert_failed_past_the_task_timeout(harness.run(), "standby task 0_1");
}

#[test]
fn a_standby_reads_its_source_topic_further_once_the_committed_offsets_answer_again() {
    let harness = Harness::with_source_table(&[]);
    standby_of_in_1_assigned_after(&harness, |_| ());
    let kafka = Arc::clone(&harness.kafka);
    // The other member commits further while the coordinator does not answer twice.
    harness.kafka.script([
        Poll::Fetch,
        Poll::Elsewhere(Elsewhere(Arc::new(move || {
            kafka.commit_elsewhere(input(1), 3);
            kafka.time_out_committed_reads(2);
        }))),
        Poll::Fetch,
        Poll::Fetch,
        Poll::Fetch,
    ]);
    harness.run().unwrap();
    assert_eq!(harness.kafka.committed_reads_left_to_time_out(), 0);
    let follows = changelog_read(input(1), 0, ReadTo::FollowUpTo(2));
    assert_eq!(harness.kafka.count(&follows), 1);
    let raised = Event::ChangelogLimitRaised {
        partition: input(1),
        until: 3,
    };
    assert_eq!(harness.kafka.count(&raised), 1);
    assert_eq!(harness.output(), ["a0", "a1", "a2"]);
}

#[test]
fn a_task_whose_changelog_offsets_could_not_be_read_in_time_opens_on_a_later_turn() {
    // As the group assigns both tasks, reading where the first one's changelog ends times out.
    let harness = Harness::with_source_table(&[]);
    harness.kafka.time_out_watermark_reads(1);
    harness.run_over_every_input().unwrap();
    harness.assert_every_input_once();
    // The task closed as its opening timed out, having processed nothing, and opened again.
    assert_eq!(
        harness.journal.count(|call| *call
            == Call::Closed {
                task: task(0),
                clean: false
            }),
        1
    );
}

#[test]
fn a_task_whose_changelog_offsets_time_out_past_the_task_timeout_fails_the_thread() {
    let harness = Harness::with_source_table(&[("task.timeout.ms", "0")]);
    harness.kafka.time_out_watermark_reads(1);
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    assert_failed_past_the_task_timeout(harness.run(), "task 0_0");
}

#[test]
fn a_standby_whose_changelog_offsets_could_not_be_read_in_time_opens_on_a_later_turn() {
    let harness = Harness::with_source_table(&[]);
    standby_of_in_1_assigned_after(&harness, |kafka| kafka.time_out_watermark_reads(1));
    harness.kafka.script([Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    let follows = changelog_read(input(1), 0, ReadTo::FollowUpTo(2));
    assert_eq!(harness.kafka.count(&follows), 1);
    assert_eq!(
        harness.journal.count(|call| *call
            == Call::Closed {
                task: task(1),
                clean: true
            }),
        2,
        "the replica closes as its opening times out, and as the thread stops"
    );
    assert_eq!(harness.output(), ["a0", "a1", "a2"]);
}

#[test]
fn a_poll_failing_beyond_the_client_timeout_stops_the_thread() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("default.api.timeout.ms", "0")],
    );
    let failure = ClientError::new(
        ClientError::UNKNOWN_SERVER_ERROR,
        "broker transport failure",
    );
    harness
        .kafka
        .script([both_inputs(), Poll::Fail(failure), Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Kafka(f) if f.error.to_string() == "broker transport failure"),
        "{error}"
    );
    assert_eq!(harness.output(), Vec::<String>::new());
}

#[test]
fn under_exactly_once_a_record_that_fails_stops_the_thread_once_its_task_was_asked() {
    let harness = Harness::new("exactly_once_v2", OnSendFailed::DeadLetter, &[]);
    harness.kafka.reject("a1", too_large());
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Producer(TransactionFailure::Fatal(e)) if *e == too_large()),
        "{error}"
    );
    assert_eq!(
        harness.journal.send_failures(),
        vec![Call::SendFailed {
            task: task(0),
            index: 1,
            code: 10
        }]
    );
    assert_eq!(harness.kafka.visible(DEAD_LETTERS), Vec::<String>::new());
    assert_eq!(harness.output(), Vec::<String>::new());
}

#[test]
fn under_at_least_once_a_record_that_fails_is_replaced_by_what_its_task_answers() {
    let harness = Harness::new("at_least_once", OnSendFailed::DeadLetter, &[]);
    harness.kafka.reject("b2", too_large());
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    assert_eq!(
        harness.journal.send_failures(),
        vec![Call::SendFailed {
            task: task(1),
            index: 2,
            code: 10
        }]
    );
    assert_eq!(
        harness.kafka.visible(DEAD_LETTERS),
        vec!["dead:b2".to_string()]
    );
    assert_eq!(
        harness.output(),
        sorted(["a0", "a1", "a2", "b0", "b1"].map(String::from).to_vec())
    );
    assert_eq!(harness.kafka.committed(), every_input_committed());
}

#[test]
fn a_task_learns_which_records_are_answered_and_of_a_failed_one_only_once_it_was_asked_about_it() {
    let harness = Harness::new("at_least_once", OnSendFailed::DeadLetter, &[]);
    harness.kafka.reject("b2", too_large());
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    let told_task_1: Vec<Call> = harness
        .journal
        .calls()
        .iter()
        .filter(|call| {
            matches!(call, Call::Answered { task: t, .. } | Call::SendFailed { task: t, .. }
                if *t == task(1))
        })
        .cloned()
        .collect();
    // b0 and b1 are answered while b2 is in flight; b2 fails, and its dead-letter record
    // (number 3) is answered once it was written.
    assert_eq!(
        told_task_1,
        vec![
            Call::Answered {
                task: task(1),
                below: 2
            },
            Call::SendFailed {
                task: task(1),
                index: 2,
                code: 10
            },
            Call::Answered {
                task: task(1),
                below: 3
            },
            Call::Answered {
                task: task(1),
                below: 4
            },
        ]
    );
    assert!(harness.journal.calls().contains(&Call::Answered {
        task: task(0),
        below: 3
    }));
}

#[test]
fn a_task_failing_for_a_record_that_failed_stops_the_thread() {
    let harness = Harness::new("at_least_once", OnSendFailed::Fail, &[]);
    harness.kafka.reject("b2", too_large());
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Processor { task, .. } if task == "0_1"),
        "{error}"
    );
    assert_eq!(harness.journal.send_failures().len(), 1);
    assert!(harness.kafka.committed().is_empty());
}

/// Runs a thread under `guarantee` whose task 0_0 produces a0, then fails on a1 after
/// producing its dead-letter record; checks that the thread stops with that task's failure.
fn failing_on_a1(guarantee: &str) -> Harness {
    let harness = Harness::new(guarantee, OnSendFailed::Fail, &[]);
    *harness.poison.lock().unwrap() = Some("a1");
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Processor { task, .. } if task == "0_0"),
        "{error}"
    );
    assert!(
        harness.kafka.committed().is_empty(),
        "read again on restart"
    );
    harness
}

#[test]
fn under_at_least_once_what_a_failing_task_produced_before_it_failed_is_delivered() {
    let harness = failing_on_a1("at_least_once");
    assert_eq!(harness.output(), vec!["a0".to_string()]);
    assert_eq!(
        harness.kafka.visible(DEAD_LETTERS),
        vec!["dead:a1".to_string()]
    );
}

#[test]
fn under_exactly_once_nothing_a_failing_task_produced_becomes_visible() {
    let harness = failing_on_a1("exactly_once_v2");
    assert_eq!(harness.output(), Vec::<String>::new());
    assert_eq!(harness.kafka.visible(DEAD_LETTERS), Vec::<String>::new());
}

/// A harness whose input topic resets by duration, counting back `age_ms`; its records all
/// have timestamp 0.
fn resetting_by_duration(age_ms: u64) -> Harness {
    let resets = BTreeMap::from([(INPUT.to_string(), OffsetReset::ByDuration(age_ms))]);
    Harness::with_offset_resets("exactly_once_v2", OnSendFailed::Fail, &[], resets)
}

#[test]
fn a_partition_without_a_committed_offset_starts_where_its_duration_reaches_back_to() {
    let harness = resetting_by_duration(u64::MAX);
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    assert_eq!(
        harness.output(),
        every_input(),
        "every record is that recent"
    );

    let harness = resetting_by_duration(60_000);
    harness
        .kafka
        .script([both_inputs(), Poll::Fetch, Poll::Fetch]);
    harness.run().unwrap();
    assert_eq!(
        harness.output(),
        Vec::<String>::new(),
        "no record is that recent: both start at their end"
    );
}

#[test]
fn a_replacement_record_failing_to_send_rolls_back_and_goes_on() {
    let harness = Harness::new("at_least_once", OnSendFailed::DeadLetter, &[]);
    harness.kafka.reject("b2", too_large());
    harness.kafka.fail_next(
        ProducerOp::SendTo(DEAD_LETTERS.into()),
        abortable("dead letter rejected"),
    );
    harness.run_over_every_input().unwrap();
    assert_eq!(harness.kafka.count(&Event::Aborted), 1);
    assert_eq!(harness.rollbacks(), 2);
    assert_eq!(
        harness.journal.send_failures().len(),
        2,
        "asked again after the rewind"
    );
    assert_eq!(
        harness.kafka.visible(DEAD_LETTERS),
        vec!["dead:b2".to_string()]
    );
    assert_eq!(harness.kafka.committed(), every_input_committed());
    // At least once: no offset past b2 is committed before what replaces it is written.
    for commit in harness.kafka.commits() {
        if commit.offsets.get(&input(1)) == Some(&3) {
            assert!(
                commit.visible.contains(&"dead:b2".to_string()),
                "{commit:?}"
            );
        }
    }
}

#[test]
fn under_exactly_once_what_a_lost_task_produced_is_aborted_with_the_open_transaction() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("commit.interval.ms", "600000")],
    );
    harness.kafka.script([
        both_inputs(),
        Poll::FetchFrom(input(1)),
        Poll::Revoke {
            partitions: vec![input(1)],
            lost: true,
        },
        Poll::FetchFrom(input(0)),
    ]);
    harness.run().unwrap();
    // The member that has `in-1` now processes it again from its committed offset: had the
    // thread committed what it produced from it, those records would be there twice.
    assert_eq!(harness.output(), vec!["a0", "a1", "a2"]);
    assert_eq!(
        harness.kafka.committed(),
        BTreeMap::from([(input(0), 3)]),
        "nothing of the lost partition is committed"
    );
    assert_eq!(
        harness.rollbacks(),
        2,
        "every task went back to the last commit"
    );
}

#[test]
fn a_record_failing_after_its_task_was_lost_stops_the_thread() {
    // No commit while the script runs: the record's failure comes back only once the next
    // record goes out, after its task is gone.
    let harness = Harness::new(
        "at_least_once",
        OnSendFailed::DeadLetter,
        &[("commit.interval.ms", "600000")],
    );
    harness.kafka.reject("b2", too_large());
    harness.kafka.script([
        both_inputs(),
        Poll::FetchFrom(input(1)),
        Poll::Revoke {
            partitions: vec![input(1)],
            lost: true,
        },
        Poll::FetchFrom(input(0)),
    ]);
    let error = harness.run().unwrap_err();
    assert!(
        matches!(&error, Error::Producer(TransactionFailure::Fatal(e)) if *e == too_large()),
        "{error}"
    );
    assert!(
        harness.journal.send_failures().is_empty(),
        "no task is left to ask"
    );
}

#[test]
fn an_input_paused_when_the_group_took_it_away_is_fetched_once_it_is_assigned_again() {
    let harness = Harness::new(
        "at_least_once",
        OnSendFailed::Fail,
        &[("max.poll.records", "1")],
    );
    // After its first record the task says twice that `in-0` is full (after processing and
    // after punctuating): the input is paused when the group takes it away.
    harness.full_answers.store(2, Ordering::Relaxed);
    harness.kafka.script([
        Poll::Assign(vec![input(0)]),
        Poll::FetchFrom(input(0)),
        Poll::Revoke {
            partitions: vec![input(0)],
            lost: false,
        },
        Poll::Assign(vec![input(0)]),
        Poll::Fetch,
        Poll::Fetch,
        Poll::Fetch,
        Poll::Fetch,
    ]);
    harness.run().unwrap();
    assert_eq!(harness.output(), vec!["a0", "a1", "a2"]);
    assert_eq!(harness.kafka.committed(), BTreeMap::from([(input(0), 3)]));
}

#[test]
fn an_input_whose_task_buffer_is_full_is_not_fetched_and_what_came_meanwhile_is_read_again() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("max.poll.records", "1")],
    );
    // After its first record the task says three times that `in-0` is full, then that it
    // has room again.
    harness.full_answers.store(3, Ordering::Relaxed);
    harness.kafka.script([
        Poll::Assign(vec![input(0)]),
        Poll::FetchFrom(input(0)),
        // Paused: nothing comes.
        Poll::FetchFrom(input(0)),
        // Fetched before the pause took effect: not handed over, read again later.
        Poll::Prefetched(input(0)),
        Poll::FetchFrom(input(0)),
        Poll::FetchFrom(input(0)),
    ]);
    harness.run().unwrap();
    let asked = |full| Call::FullAsked(full);
    let handed: Vec<Call> = harness
        .journal
        .calls()
        .iter()
        .filter(|call| matches!(call, Call::Processed(_) | Call::FullAsked(_)))
        .cloned()
        .collect();
    assert_eq!(
        handed,
        vec![
            asked(false),
            Call::Processed(vec![0]),
            asked(true),
            asked(true),
            asked(true),
            asked(false),
            Call::Processed(vec![1]),
            asked(false),
            asked(false),
            Call::Processed(vec![2]),
            asked(false),
            asked(false),
        ]
    );
    assert_eq!(harness.kafka.count(&Event::Paused(input(0))), 1);
    assert_eq!(harness.kafka.count(&Event::Resumed(input(0))), 1);
    assert_eq!(harness.output(), vec!["a0", "a1", "a2"]);
    assert_eq!(harness.kafka.committed(), BTreeMap::from([(input(0), 3)]));
}

#[test]
fn the_thread_serves_its_member_often_until_it_joined_the_group_and_while_it_rebalances() {
    let harness = Harness::new(
        "exactly_once_v2",
        OnSendFailed::Fail,
        &[("commit.interval.ms", "3600000")],
    );
    harness.kafka.script([
        Poll::Fetch,
        both_inputs(),
        Poll::FetchFrom(input(0)),
        harness.rebalance(true),
        Poll::Fetch,
        harness.rebalance(false),
        Poll::FetchFrom(input(1)),
    ]);
    harness.run().unwrap();
    let (short, idle) = (Duration::from_millis(10), Duration::from_millis(100));
    // A wait is decided before the turn's member poll: the turn that brings the assignment
    // still waits briefly, the one that starts the rebalance still waits long.
    assert_eq!(
        harness.kafka.poll_waits(),
        [
            short, // not joined yet
            short, // the assignment comes
            idle,  // joined, nothing due
            idle,  // the rebalance starts
            short, // rebalancing
            short, // the rebalance ends
            idle, idle, // the script is over
        ]
    );
    assert_eq!(harness.output(), every_input());
}
