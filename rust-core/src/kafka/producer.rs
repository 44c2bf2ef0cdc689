//! The [`StreamsProducer`] of an engine thread on rdkafka. Delivery reports tell where each
//! record landed and which records failed; a thread of the producer's own serves them.

use std::collections::BTreeMap;
use std::ffi::{c_void, CString};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rdkafka::bindings as native;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, DeliveryResult, Producer, ProducerContext};
use rdkafka::{ClientConfig, ClientContext};

use crate::kafka::answered::AnsweredIds;
use crate::kafka::clients::{
    DeliveredOffsets, FailedSend, GroupMetadata, SendReports, StreamsProducer,
};
use crate::kafka::error::{ClientError, TransactionFailure};
use crate::kafka::group_metadata::NativeGroupMetadata;
use crate::kafka::lists::commit_list;
use crate::kafka::queue_signal::QueueSignal;
use crate::kafka::records::{copied_headers, InputOffset, ProducedRecord, ProducedView};
use crate::store::TopicPartition;

/// How long the delivery thread waits for reports before it looks whether it should stop: the
/// longest a producer's drop waits for it.
const DELIVERY_WAIT: Duration = Duration::from_millis(20);
/// How long past its own timeout librdkafka is given to answer a transactional call that runs on
/// a thread of its own (the initialisation, a transaction's offsets) before the call counts as
/// lost.
const CALL_GRACE: Duration = Duration::from_secs(5);
/// How long a send whose record librdkafka's full queue refused waits, with every batch made
/// sendable at once, before it tries again.
const QUEUE_FULL_WAIT_MS: i32 = 10;

/// Collects delivery reports until the next commit reads them.
#[derive(Default)]
pub struct DeliveryTracker {
    state: Mutex<Deliveries>,
}

/// The offsets delivered to one partition since the last commit.
struct Delivered {
    partition: TopicPartition,
    first: i64,
    last: i64,
}

#[derive(Default)]
struct Deliveries {
    /// The first and last offsets delivered to each partition since the last commit (under
    /// exactly-once, the first is where the open transaction begins there). A thread writes to
    /// few partitions and every record's report lands here, so a scan that allocates nothing
    /// beats a map.
    delivered: Vec<Delivered>,
    /// Each failed record with its id, and rdkafka's error, which a commit classifies.
    failed: Vec<(FailedSend, KafkaError)>,
    /// The ids whose report is in, whatever it said.
    answered: AnsweredIds,
}

impl DeliveryTracker {
    fn lock(&self) -> std::sync::MutexGuard<'_, Deliveries> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take(&self) -> Deliveries {
        std::mem::take(&mut *self.lock())
    }
}

impl ClientContext for DeliveryTracker {}

/// The last offset delivered to each partition.
fn last_offsets(delivered: Vec<Delivered>) -> DeliveredOffsets {
    delivered
        .into_iter()
        .map(|d| (d.partition, d.last))
        .collect()
}

/// Whether a record's delivery failed because librdkafka purged it with the rest of its
/// transaction.
fn purged_with_its_transaction(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(RDKafkaErrorCode::PurgeQueue | RDKafkaErrorCode::PurgeInflight)
    )
}

impl ProducerContext for DeliveryTracker {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, id: usize) {
        let mut state = self.lock();
        state.answered.answer(id);
        match result {
            Ok(message) => {
                let (topic, partition) = (message.topic(), message.partition());
                let offset = message.offset();
                let known = state
                    .delivered
                    .iter_mut()
                    .find(|d| d.partition.partition == partition && d.partition.topic == topic);
                match known {
                    Some(known) => {
                        known.first = known.first.min(offset);
                        known.last = known.last.max(offset);
                    }
                    None => state.delivered.push(Delivered {
                        partition: TopicPartition::new(topic, partition),
                        first: offset,
                        last: offset,
                    }),
                }
            }
            // A record of a transaction that is aborted, or that librdkafka abandoned when
            // another of its records timed out: Kafka Streams ignores such a send
            // (`TransactionAbortedException`), as what doomed the transaction is reported on
            // its own and the commit finds it to be aborted.
            Err((error, _)) if purged_with_its_transaction(error) => {}
            Err((error, message)) => {
                let headers = copied_headers(message);
                let record = ProducedRecord {
                    topic: message.topic().to_string(),
                    partition: Some(message.partition()).filter(|p| *p >= 0),
                    key: message.key().map(<[u8]>::to_vec),
                    value: message.payload().map(<[u8]>::to_vec),
                    timestamp: message.timestamp().to_millis().unwrap_or(-1),
                    headers,
                };
                let failed = FailedSend {
                    id,
                    record,
                    error: error.clone().into(),
                };
                state.failed.push((failed, error.clone()));
            }
        }
    }
}

/// Errors the producer returns for one record while queueing it, which leave the producer
/// and its transaction as they were: the record's own failure, as a delivery report would
/// tell it.
fn rejects_only_the_record(error: &KafkaError) -> bool {
    matches!(
        error,
        KafkaError::MessageProduction(
            RDKafkaErrorCode::MessageSizeTooLarge
                | RDKafkaErrorCode::UnknownPartition
                | RDKafkaErrorCode::UnknownTopic
                | RDKafkaErrorCode::UnknownTopicOrPartition
        )
    )
}

/// librdkafka's handle of a topic the producer writes to. A send that names its topic by
/// handle spares librdkafka a lookup by name under the client's lock, and the send a copy of
/// the name, for every record.
struct TopicHandle {
    name: String,
    handle: NonNull<native::rd_kafka_topic_t>,
}

// SAFETY: librdkafka's topic handles are safe to use from any thread.
unsafe impl Send for TopicHandle {}

impl Drop for TopicHandle {
    fn drop(&mut self) {
        // SAFETY: the handle came from `rd_kafka_topic_new` and is given back once, before its
        // client is destroyed (`KafkaStreamsProducer` drops its topics first).
        unsafe { native::rd_kafka_topic_destroy(self.handle.as_ptr()) }
    }
}

/// The headers of `record` in librdkafka's form, owned by the caller (a successful send takes
/// them over); null when there are none.
fn native_headers(record: &ProducedView<'_>) -> *mut native::rd_kafka_headers_t {
    let headers = record.headers();
    if headers.len() == 0 {
        return ptr::null_mut();
    }
    // SAFETY: librdkafka copies each name and value into the list it allocates here.
    unsafe {
        let list = native::rd_kafka_headers_new(headers.len());
        for (key, value) in headers {
            let (value, size) = value.map_or((ptr::null(), 0), |v| (v.as_ptr().cast(), v.len()));
            native::rd_kafka_header_add(
                list,
                key.as_ptr().cast(),
                key.len() as isize,
                value,
                size as isize,
            );
        }
        list
    }
}

/// One field of a send, as `rd_kafka_produceva` takes it.
fn field(
    vtype: native::rd_kafka_vtype_t,
    u: native::rd_kafka_vu_s__bindgen_ty_1,
) -> native::rd_kafka_vu_t {
    native::rd_kafka_vu_t { vtype, u }
}

/// A key or value field: its bytes, or a null pointer for none.
fn bytes_field(vtype: native::rd_kafka_vtype_t, bytes: Option<&[u8]>) -> native::rd_kafka_vu_t {
    let (ptr, size) = bytes.map_or((ptr::null_mut(), 0), |b| {
        (b.as_ptr() as *mut c_void, b.len())
    });
    field(
        vtype,
        native::rd_kafka_vu_s__bindgen_ty_1 {
            mem: native::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_1 { ptr, size },
        },
    )
}

/// The thread that serves a producer's delivery reports.
///
/// librdkafka hands delivery reports over as events, which someone must serve: served by the
/// engine thread, they took an eighth of its time on word count (each record's report is read
/// and freed there), and a flush could not end before that thread served them, nor could the
/// flush within a transaction's abort, which waited out its whole timeout whenever records
/// were outstanding. Served here, a flush ends when the last report is in.
///
/// The thread sleeps until librdkafka signals an event on the producer's queue ([`QueueSignal`])
/// and then takes what is there without waiting: in rdkafka's waiting poll it spun after each
/// report (a tenth of a failover's samples).
struct DeliveryThread {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl DeliveryThread {
    fn start(producer: Arc<BaseProducer<DeliveryTracker>>) -> Result<Self, TransactionFailure> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let handle = thread::Builder::new()
            .name("sluice-delivery".to_string())
            .spawn(move || {
                let signal = Arc::new(QueueSignal::default());
                let queue = SignallingQueue::main_of(producer.client().native_ptr(), &signal);
                while !stopping.load(Ordering::Relaxed) {
                    signal.wait(DELIVERY_WAIT);
                    // Until the queue is empty, so that the next event signals again.
                    loop {
                        let waiting = queue.length();
                        if waiting == 0 {
                            break;
                        }
                        for _ in 0..waiting {
                            producer.poll(Duration::ZERO);
                        }
                    }
                }
                drop(queue);
            })
            .map_err(|e| {
                let message = format!("cannot start the producer's delivery thread: {e}");
                TransactionFailure::Fatal(ClientError::new(
                    ClientError::UNKNOWN_SERVER_ERROR,
                    message,
                ))
            })?;
        Ok(DeliveryThread {
            stop,
            handle: Some(handle),
        })
    }

    /// Whether the thread ended before it was told to: a delivery callback panicked, and no
    /// report will be served again.
    fn has_died(&self) -> bool {
        self.handle.as_ref().is_some_and(JoinHandle::is_finished)
    }
}

/// Called by librdkafka, on one of its threads, when the queue goes from empty to not empty.
unsafe extern "C" fn queue_not_empty(_client: *mut native::rd_kafka_t, signal: *mut c_void) {
    // SAFETY: `signal` is the `QueueSignal` a `SignallingQueue` was made with, which outlives
    // the callback (the queue turns it off before it is dropped); `notify` cannot panic.
    unsafe { (*(signal as *const QueueSignal)).notify() }
}

/// A client's main queue with [`queue_not_empty`] on: one reference to it, given back on drop.
struct SignallingQueue {
    queue: NonNull<native::rd_kafka_queue_t>,
    _signal: Arc<QueueSignal>,
}

impl SignallingQueue {
    fn main_of(client: *mut native::rd_kafka_t, signal: &Arc<QueueSignal>) -> Self {
        // SAFETY: `client` is a live client; the main queue always exists, and the reference
        // this returns is given back in `drop`.
        let queue = NonNull::new(unsafe { native::rd_kafka_queue_get_main(client) })
            .expect("librdkafka returned no main queue for a live client");
        // SAFETY: the signal lives as long as this value, which turns the callback off first.
        unsafe {
            native::rd_kafka_queue_cb_event_enable(
                queue.as_ptr(),
                Some(queue_not_empty),
                Arc::as_ptr(signal) as *mut c_void,
            )
        };
        SignallingQueue {
            queue,
            _signal: Arc::clone(signal),
        }
    }

    fn length(&self) -> usize {
        // SAFETY: the queue reference is held until drop.
        unsafe { native::rd_kafka_queue_length(self.queue.as_ptr()) }
    }
}

impl Drop for SignallingQueue {
    fn drop(&mut self) {
        // SAFETY: librdkafka swaps the callback under the queue's lock, so none runs once this
        // returns; then the reference taken in `main_of` is given back.
        unsafe {
            native::rd_kafka_queue_cb_event_enable(self.queue.as_ptr(), None, ptr::null_mut());
            native::rd_kafka_queue_destroy(self.queue.as_ptr());
        }
    }
}

impl Drop for DeliveryThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            // A panic in a delivery callback already ended the thread; nothing is left to serve.
            let _ = handle.join();
        }
    }
}

/// One engine thread's producer.
pub struct KafkaStreamsProducer {
    /// Dropped before the producer (see [`TopicHandle`]).
    topics: Vec<TopicHandle>,
    /// Stopped before the producer is destroyed, which serves what is left itself.
    deliveries: DeliveryThread,
    producer: Arc<BaseProducer<DeliveryTracker>>,
    transactional: bool,
    /// Exactly-once: the transactional initialisation begun when the producer was made, until
    /// [`StreamsProducer::ready`] has its answer.
    initializing: Option<PendingTransactional>,
    in_transaction: bool,
    /// Where the records of a transaction whose commit timed out landed: the next commit
    /// resumes that one.
    unanswered_commit: Option<DeliveredOffsets>,
    /// The consumed offsets on their way into the open transaction (see
    /// [`StreamsProducer::add_offsets`]).
    offsets_in_flight: Option<OffsetsInFlight>,
    timeout: Duration,
}

/// Consumed offsets being added to the open transaction on a thread of their own.
struct OffsetsInFlight {
    consumed: BTreeMap<TopicPartition, InputOffset>,
    answer: PendingTransactional,
}

impl OffsetsInFlight {
    /// Waits for librdkafka's answer; one that does not come in time counts as fenced (see
    /// [`KafkaStreamsProducer::start_offsets`]): the producer is replaced.
    fn answer(self) -> Result<(), TransactionFailure> {
        self.answer.answer_or(TransactionFailure::Fenced)
    }
}

impl KafkaStreamsProducer {
    /// Creates the producer; with a `transactional.id` in `config` it is transactional and
    /// begins `init_transactions`, which fences older producers with that id and aborts their
    /// open transaction, on a thread of its own: a stream thread joins its group while its
    /// producer initialises, as Kafka Streams' does, and waits for the initialisation
    /// ([`StreamsProducer::ready`]) only before it takes tasks. Waiting first let the threads of
    /// one instance join one after the other when one initialisation took a coordinator lookup
    /// longer (about 0.5 s): the group rebalanced twice, the second time only once the first
    /// member's next heartbeat (3 s) told it to.
    pub fn new(config: &ClientConfig, timeout: Duration) -> Result<Self, TransactionFailure> {
        let transactional = config.get("transactional.id").is_some();
        let producer: Arc<BaseProducer<DeliveryTracker>> = Arc::new(
            config
                .create_with_context(DeliveryTracker::default())
                .map_err(|e| TransactionFailure::Fatal(e.into()))?,
        );
        let deliveries = DeliveryThread::start(Arc::clone(&producer))?;
        let initializing = if transactional {
            let initialized = Arc::clone(&producer);
            let init = move || {
                initialized
                    .init_transactions(timeout)
                    .map_err(TransactionFailure::classify)
            };
            Some(PendingTransactional::start(
                "sluice-txn-init",
                "initialising the producer's transactions",
                timeout + CALL_GRACE,
                init,
            )?)
        } else {
            None
        };
        Ok(KafkaStreamsProducer {
            topics: Vec::new(),
            deliveries,
            producer,
            transactional,
            initializing,
            in_transaction: false,
            unanswered_commit: None,
            offsets_in_flight: None,
            timeout,
        })
    }

    /// The handle of `topic`, made on its first send.
    fn topic_handle(&mut self, topic: &str) -> Result<*mut native::rd_kafka_topic_t, KafkaError> {
        if let Some(known) = self.topics.iter().find(|t| t.name == topic) {
            return Ok(known.handle.as_ptr());
        }
        let invalid = || KafkaError::MessageProduction(RDKafkaErrorCode::InvalidTopic);
        let name = CString::new(topic).map_err(|_| invalid())?;
        // SAFETY: the client is live and the name a valid C string; the handle is given back
        // before the client is destroyed (see `TopicHandle`).
        let handle = unsafe {
            native::rd_kafka_topic_new(
                self.producer.client().native_ptr(),
                name.as_ptr(),
                ptr::null_mut(),
            )
        };
        let handle = NonNull::new(handle).ok_or_else(invalid)?;
        self.topics.push(TopicHandle {
            name: topic.to_string(),
            handle,
        });
        Ok(handle.as_ptr())
    }

    /// Hands `record` to librdkafka, which copies what it needs of it.
    fn produce(&mut self, record: &ProducedView<'_>, id: usize) -> Result<(), KafkaError> {
        use native::rd_kafka_vtype_t::*;
        let topic = self.topic_handle(record.topic)?;
        let headers = native_headers(record);
        let mut fields = [
            field(
                RD_KAFKA_VTYPE_RKT,
                native::rd_kafka_vu_s__bindgen_ty_1 { rkt: topic },
            ),
            field(
                RD_KAFKA_VTYPE_PARTITION,
                native::rd_kafka_vu_s__bindgen_ty_1 {
                    // librdkafka's RD_KAFKA_PARTITION_UA: the partitioner chooses.
                    i32_: record.partition.unwrap_or(-1),
                },
            ),
            field(
                RD_KAFKA_VTYPE_MSGFLAGS,
                native::rd_kafka_vu_s__bindgen_ty_1 {
                    i: native::RD_KAFKA_MSG_F_COPY,
                },
            ),
            bytes_field(RD_KAFKA_VTYPE_KEY, record.key),
            bytes_field(RD_KAFKA_VTYPE_VALUE, record.value),
            // The delivery report hands the record's id back (rdkafka's `usize` opaque).
            field(
                RD_KAFKA_VTYPE_OPAQUE,
                native::rd_kafka_vu_s__bindgen_ty_1 {
                    ptr: id as *mut c_void,
                },
            ),
            // The optional fields below take these two places.
            field(
                RD_KAFKA_VTYPE_END,
                native::rd_kafka_vu_s__bindgen_ty_1 { i: 0 },
            ),
            field(
                RD_KAFKA_VTYPE_END,
                native::rd_kafka_vu_s__bindgen_ty_1 { i: 0 },
            ),
        ];
        let mut count = 6;
        if record.timestamp >= 0 {
            fields[count] = field(
                RD_KAFKA_VTYPE_TIMESTAMP,
                native::rd_kafka_vu_s__bindgen_ty_1 {
                    i64_: record.timestamp,
                },
            );
            count += 1;
        }
        if !headers.is_null() {
            fields[count] = field(
                RD_KAFKA_VTYPE_HEADERS,
                native::rd_kafka_vu_s__bindgen_ty_1 { headers },
            );
            count += 1;
        }
        // SAFETY: the client is live, the fields valid for the call (librdkafka copies the key
        // and value), the topic handle is the producer's own; on success the headers are
        // librdkafka's, on failure still ours to destroy, as is the error it returns.
        unsafe {
            let error = native::rd_kafka_produceva(
                self.producer.client().native_ptr(),
                fields.as_ptr(),
                count,
            );
            if error.is_null() {
                return Ok(());
            }
            let code = native::rd_kafka_error_code(error);
            native::rd_kafka_error_destroy(error);
            if !headers.is_null() {
                native::rd_kafka_headers_destroy(headers);
            }
            Err(KafkaError::MessageProduction(code.into()))
        }
    }

    /// librdkafka's flush: sends what lingers and waits, at most `timeout_ms`, until every
    /// record's delivery report is served; whether they all were.
    fn flush_for(&self, timeout_ms: i32) -> bool {
        // SAFETY: the handle is this producer's own, alive while `self.producer` is; a flush
        // only wakes the broker threads and waits on the producer's message count.
        let error =
            unsafe { native::rd_kafka_flush(self.producer.client().native_ptr(), timeout_ms) };
        error == native::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// The timeout of the producer's blocking calls, as librdkafka takes it.
    fn timeout_ms(&self) -> i32 {
        i32::try_from(self.timeout.as_millis()).unwrap_or(i32::MAX)
    }

    /// Commits the open transaction, whose records landed where `delivered` says. A commit
    /// that timed out keeps `delivered` for the call that resumes it.
    fn commit_transaction(
        &mut self,
        delivered: DeliveredOffsets,
    ) -> Result<DeliveredOffsets, TransactionFailure> {
        match self.producer.commit_transaction(self.timeout) {
            Ok(()) => {
                self.in_transaction = false;
                Ok(delivered)
            }
            Err(error) => {
                let failure = TransactionFailure::classify(error);
                if failure.timed_out() {
                    self.unanswered_commit = Some(delivered);
                }
                Err(failure)
            }
        }
    }

    fn begin_if_needed(&mut self) -> Result<(), TransactionFailure> {
        if self.transactional && !self.in_transaction {
            self.ready()?;
            self.producer
                .begin_transaction()
                .map_err(TransactionFailure::classify)?;
            self.in_transaction = true;
        }
        Ok(())
    }

    /// Starts adding `consumed` to the open transaction as `group`'s offsets. rdkafka sends
    /// offsets only with metadata read out of a consumer of its own; the group's member may be
    /// another client, so the metadata is made from what `group` says.
    ///
    /// librdkafka's timeout does not cover the whole call: when its lookup of the group
    /// coordinator fails in a way it leaves to a broker's next change of state, and no broker
    /// changes state (they are all up), the call waits for good (seen once the broker came back
    /// from an outage). The call therefore runs on a thread of its own, and one that has not
    /// answered within the producer's timeout counts as fenced: the thread's producer is
    /// replaced, which fences this one and aborts its transaction, and the tasks start again
    /// from their last commit, as after any lost transaction. A call that never returns keeps
    /// its producer alive, idle, with the waiting thread.
    fn start_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: &GroupMetadata,
    ) -> Result<OffsetsInFlight, TransactionFailure> {
        let offsets = commit_list(consumed);
        let metadata = NativeGroupMetadata::new(group);
        let producer = Arc::clone(&self.producer);
        let timeout_ms = self.timeout_ms();
        let call = move || {
            // SAFETY: the producer, the list and the metadata are owned by this closure through
            // the call, which copies what it keeps; a returned error is ours to classify and
            // destroy.
            let error = unsafe {
                native::rd_kafka_send_offsets_to_transaction(
                    producer.client().native_ptr(),
                    offsets.ptr(),
                    metadata.as_ptr(),
                    timeout_ms,
                )
            };
            match NonNull::new(error) {
                None => Ok(()),
                // SAFETY: the error is the call's, handed over to be destroyed once.
                Some(error) => Err(unsafe { TransactionFailure::classify_native(error) }),
            }
        };
        let answer = PendingTransactional::start(
            "sluice-txn-offsets",
            "adding the consumed offsets to the transaction",
            self.timeout + CALL_GRACE,
            call,
        )?;
        Ok(OffsetsInFlight {
            consumed: consumed.clone(),
            answer,
        })
    }

    /// Adds `consumed` to the open transaction as `group`'s offsets, unless they are on their
    /// way already, and waits until they are in.
    fn add_offsets_now(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: &GroupMetadata,
    ) -> Result<(), TransactionFailure> {
        let in_flight = match self.offsets_in_flight.take() {
            Some(in_flight) if in_flight.consumed == *consumed => in_flight,
            other => {
                if let Some(stale) = other {
                    stale.answer()?;
                }
                self.start_offsets(consumed, group)?
            }
        };
        in_flight.answer()
    }
}

impl StreamsProducer for KafkaStreamsProducer {
    fn is_transactional(&self) -> bool {
        self.transactional
    }

    fn ready(&mut self) -> Result<(), TransactionFailure> {
        match self.initializing.take() {
            Some(initializing) => initializing.answer_or(TransactionFailure::Fatal),
            None => Ok(()),
        }
    }

    /// Waits while librdkafka's queue is full.
    fn send(&mut self, record: &ProducedView<'_>, id: usize) -> Result<(), TransactionFailure> {
        self.begin_if_needed()?;
        loop {
            match self.produce(record, id) {
                Ok(()) => break,
                Err(KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull)) => {
                    // A flush sends what lingers, which makes room sooner; a timeout is expected.
                    self.flush_for(QUEUE_FULL_WAIT_MS);
                }
                Err(error) if rejects_only_the_record(&error) => {
                    let failed = FailedSend {
                        id,
                        record: record.to_owned(),
                        error: error.clone().into(),
                    };
                    let mut state = self.producer.context().lock();
                    state.failed.push((failed, error));
                    state.answered.answer(id);
                    return Ok(());
                }
                Err(error) => return Err(TransactionFailure::classify(error)),
            }
        }
        Ok(())
    }

    fn take_reports(&mut self) -> SendReports {
        let mut state = self.producer.context().lock();
        let failed = std::mem::take(&mut state.failed);
        SendReports {
            failed: failed.into_iter().map(|(failed, _)| failed).collect(),
            answered_below: state.answered.all_below(),
        }
    }

    fn open_transaction_starts(&self) -> BTreeMap<TopicPartition, i64> {
        if !self.transactional {
            return BTreeMap::new();
        }
        self.producer
            .context()
            .lock()
            .delivered
            .iter()
            .map(|d| (d.partition.clone(), d.first))
            .collect()
    }

    fn add_offsets(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: Option<&GroupMetadata>,
    ) -> Result<(), TransactionFailure> {
        let Some(group) = group else {
            return Ok(());
        };
        if !self.transactional || consumed.is_empty() || self.unanswered_commit.is_some() {
            return Ok(());
        }
        if let Some(stale) = self.offsets_in_flight.take() {
            stale.answer()?;
        }
        self.begin_if_needed()?;
        self.offsets_in_flight = Some(self.start_offsets(consumed, group)?);
        Ok(())
    }

    fn commit(
        &mut self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
        group: Option<&GroupMetadata>,
    ) -> Result<DeliveredOffsets, TransactionFailure> {
        if let Some(delivered) = self.unanswered_commit.take() {
            // librdkafka resumes a commit that timed out when it is asked to commit again.
            return self.commit_transaction(delivered);
        }
        self.flush()?;
        if let Some((_, error)) = self.producer.context().lock().failed.first() {
            return Err(TransactionFailure::classify(error.clone()));
        }
        if self.transactional && (self.in_transaction || !consumed.is_empty()) {
            self.begin_if_needed()?;
            if !consumed.is_empty() {
                // Without group metadata the consumer is not a member: the offsets are not
                // this thread's to commit.
                let group = group.ok_or_else(|| {
                    TransactionFailure::classify(KafkaError::ConsumerCommit(
                        RDKafkaErrorCode::UnknownMemberId,
                    ))
                })?;
                self.add_offsets_now(consumed, group)?;
            }
            // Taken only now: a commit whose offsets timed out leaves where its records landed
            // to the call that resumes it.
            let delivered = last_offsets(self.producer.context().take().delivered);
            return self.commit_transaction(delivered);
        }
        Ok(last_offsets(self.producer.context().take().delivered))
    }

    fn commit_unanswered(&self) -> bool {
        self.unanswered_commit.is_some()
    }

    fn abort(&mut self) -> Result<(), TransactionFailure> {
        self.unanswered_commit = None;
        if let Some(in_flight) = self.offsets_in_flight.take() {
            // librdkafka takes one transactional call at a time; offsets it never answered for
            // leave a producer that can only be replaced.
            if let Err(failure @ TransactionFailure::Fenced(_)) = in_flight.answer() {
                return Err(failure);
            }
        }
        if self.transactional && self.in_transaction {
            self.producer
                .abort_transaction(self.timeout)
                .map_err(TransactionFailure::classify)?;
            self.in_transaction = false;
        }
        // Reports of purged records arrive as errors; they belong to the aborted work. The abort
        // waited until each was served.
        self.producer.context().take();
        Ok(())
    }

    /// Sends every record the producer holds now, whatever `linger.ms` says (as Kafka's Java
    /// producer flushes), and waits until each one's delivery report is served.
    fn flush(&mut self) -> Result<(), TransactionFailure> {
        if self.deliveries.has_died() {
            let message = "the producer's delivery thread ended: delivery reports go unserved";
            return Err(TransactionFailure::Fatal(ClientError::new(
                ClientError::UNKNOWN_SERVER_ERROR,
                message,
            )));
        }
        if self.flush_for(self.timeout_ms()) {
            Ok(())
        } else {
            Err(TransactionFailure::classify(KafkaError::Flush(
                RDKafkaErrorCode::OperationTimedOut,
            )))
        }
    }
}

/// What a call running on a thread of its own will answer, waited for at most a time limit
/// from the call's start.
struct PendingAnswer<T> {
    answered: mpsc::Receiver<T>,
    deadline: Instant,
    limit: Duration,
}

/// A transactional call running on a thread of its own, and what it does.
struct PendingTransactional {
    answer: PendingAnswer<Result<(), TransactionFailure>>,
    what: &'static str,
}

impl PendingTransactional {
    /// Runs the transactional `call`, which does `what`, on a thread named `name`, as
    /// [`PendingAnswer::start`] does; no thread to run it on is a fatal failure.
    fn start(
        name: &str,
        what: &'static str,
        limit: Duration,
        call: impl FnOnce() -> Result<(), TransactionFailure> + Send + 'static,
    ) -> Result<Self, TransactionFailure> {
        let answer = PendingAnswer::start(name, limit, call).map_err(|error| {
            TransactionFailure::Fatal(ClientError::new(
                ClientError::UNKNOWN_SERVER_ERROR,
                format!("no thread for {what}: {error}"),
            ))
        })?;
        Ok(PendingTransactional { answer, what })
    }

    /// The call's answer; `lost` makes the failure of one that did not come in time.
    fn answer_or(
        self,
        lost: fn(ClientError) -> TransactionFailure,
    ) -> Result<(), TransactionFailure> {
        let limit = self.answer.limit;
        self.answer.wait().unwrap_or_else(|| {
            Err(lost(ClientError::new(
                ClientError::REQUEST_TIMED_OUT,
                format!(
                    "{} got no answer within {} ms",
                    self.what,
                    limit.as_millis()
                ),
            )))
        })
    }
}

impl<T: Send + 'static> PendingAnswer<T> {
    /// Runs `call` on a thread named `name`, whose answer counts if it comes within `limit`;
    /// an error when no thread could be started.
    fn start(
        name: &str,
        limit: Duration,
        call: impl FnOnce() -> T + Send + 'static,
    ) -> std::io::Result<Self> {
        let (answer, answered) = mpsc::sync_channel(1);
        let deadline = Instant::now() + limit;
        thread::Builder::new().name(name.into()).spawn(move || {
            // The receiver is gone when the answer came too late: nobody waits for it any more.
            let _ = answer.send(call());
        })?;
        Ok(PendingAnswer {
            answered,
            deadline,
            limit,
        })
    }

    /// The call's answer; `None` when it has not come by the deadline (the call goes on, and
    /// what it returns is dropped) or the call ended without answering.
    fn wait(self) -> Option<T> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        self.answered.recv_timeout(left).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_answers_in_time_gives_its_answer() {
        let answer = PendingAnswer::start("quick", Duration::from_secs(30), || 7)
            .unwrap()
            .wait();
        assert_eq!(answer, Some(7));
    }

    #[test]
    fn a_call_that_does_not_answer_in_time_is_left_behind() {
        let (release, released) = mpsc::channel::<()>();
        let answer = PendingAnswer::start("stuck", Duration::from_millis(50), move || {
            let _ = released.recv();
            7
        })
        .unwrap()
        .wait();
        assert_eq!(answer, None);
        release.send(()).unwrap();
    }

    #[test]
    fn a_call_that_panics_gives_no_answer() {
        let answer = PendingAnswer::start("panicking", Duration::from_secs(30), || -> i32 {
            panic!("no answer")
        })
        .unwrap()
        .wait();
        assert_eq!(answer, None);
    }

    #[test]
    fn the_time_limit_counts_from_the_start_of_the_call() {
        let limit = Duration::from_millis(300);
        let (release, released) = mpsc::channel::<()>();
        let pending = PendingAnswer::start("slow", limit, move || {
            let _ = released.recv();
            7
        })
        .unwrap();
        thread::sleep(limit + Duration::from_millis(100));
        let waiting = Instant::now();
        assert_eq!(pending.wait(), None);
        // The limit was over before the wait began: the wait does not grant another one.
        assert!(waiting.elapsed() < limit);
        release.send(()).unwrap();
    }
}
