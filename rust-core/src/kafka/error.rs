//! Kafka failures as the engine sees them: [`ClientError`], the client's error owned by the
//! engine, and its classification into what the engine does about it, following Kafka
//! Streams: a fenced producer means the thread lost its tasks (close them dirty and
//! rejoin); an abortable transaction error means abort, roll back and resume from the
//! committed offsets; anything else is fatal for the thread.

use std::ffi::CStr;
use std::fmt;
use std::ptr::NonNull;
use std::thread;
use std::time::{Duration, Instant};

use rdkafka::bindings as native;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

/// A Kafka client's error: what the client said, and the Kafka protocol error code that
/// stands for it, as Kafka's Java clients would report the same failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    message: String,
    protocol_code: i16,
}

impl ClientError {
    /// The protocol code of a failure no other code describes (`UNKNOWN_SERVER_ERROR`).
    pub const UNKNOWN_SERVER_ERROR: i16 = -1;
    /// The protocol code of a record's topic or partition that does not exist.
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    /// The protocol code of a request (or a record's delivery) that timed out.
    pub const REQUEST_TIMED_OUT: i16 = 7;
    /// The protocol code of a record whose producer sequence the partition's leader did not
    /// expect: the producer lost track of what the broker wrote for it.
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
    /// The protocol code of a producer whose epoch a newer one replaced.
    pub const INVALID_PRODUCER_EPOCH: i16 = 47;
    /// The protocol code of a producer id the coordinator no longer knows.
    pub const INVALID_PRODUCER_ID_MAPPING: i16 = 49;
    /// The protocol code of a static group member whose `group.instance.id` another member
    /// joined with since.
    pub const FENCED_INSTANCE_ID: i16 = 82;
    /// The protocol code of a transactional producer another one with its id fenced.
    pub const PRODUCER_FENCED: i16 = 90;

    /// An error saying `message`, standing for protocol error `protocol_code`.
    pub fn new(protocol_code: i16, message: impl Into<String>) -> Self {
        ClientError {
            message: message.into(),
            protocol_code,
        }
    }

    /// The Kafka protocol error code that stands for this error.
    pub fn protocol_code(&self) -> i16 {
        self.protocol_code
    }

    /// True when a record failing with this error means, under exactly-once, that the
    /// producer can write nothing more: Kafka Streams' record collector answers these with a
    /// `TaskMigratedException` without asking the production exception handler.
    pub fn fences_the_producer(&self) -> bool {
        matches!(
            self.protocol_code,
            Self::OUT_OF_ORDER_SEQUENCE_NUMBER
                | Self::INVALID_PRODUCER_EPOCH
                | Self::INVALID_PRODUCER_ID_MAPPING
                | Self::PRODUCER_FENCED
        )
    }
}

/// librdkafka's broker errors are the protocol's codes; its local ones are mapped to what
/// Kafka's Java producer reports for the same failure, anything else to
/// `UNKNOWN_SERVER_ERROR`.
impl From<KafkaError> for ClientError {
    fn from(error: KafkaError) -> Self {
        ClientError::new(protocol_code(error.rdkafka_error_code()), error.to_string())
    }
}

fn protocol_code(code: Option<RDKafkaErrorCode>) -> i16 {
    match code {
        Some(RDKafkaErrorCode::MessageTimedOut | RDKafkaErrorCode::OperationTimedOut) => {
            ClientError::REQUEST_TIMED_OUT
        }
        Some(RDKafkaErrorCode::UnknownTopic | RDKafkaErrorCode::UnknownPartition) => {
            ClientError::UNKNOWN_TOPIC_OR_PARTITION
        }
        Some(code) if (code as i32) > 0 && (code as i32) <= i16::MAX as i32 => code as i16,
        _ => ClientError::UNKNOWN_SERVER_ERROR,
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ClientError {}

/// What a failed transactional operation requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransactionFailure {
    /// Another producer with the same transactional id, or a newer group generation, took
    /// over: the tasks now belong to someone else (Kafka Streams' `TaskMigratedException`).
    Fenced(ClientError),
    /// The call did not get its answer in time, the transaction intact: made again, it
    /// resumes where it was (librdkafka's retriable timeout).
    TimedOut(ClientError),
    /// The transaction must be aborted; the producer stays usable. A timeout that failed the
    /// transaction (librdkafka's abortable error: its offsets went unanswered, say) is one:
    /// a call made again would answer the same at once.
    Abortable(ClientError),
    /// The producer is unusable for another reason.
    Fatal(ClientError),
}

impl TransactionFailure {
    /// True when the call may be made again, which resumes it: the broker did not answer in
    /// time, and the transaction did not fail.
    pub(crate) fn timed_out(&self) -> bool {
        matches!(self, TransactionFailure::TimedOut(_))
    }

    /// Classifies an error returned by an rdkafka producer operation. A transaction that the
    /// coordinator aborted itself, its timeout passed while the broker was away, is refused
    /// as being in an invalid state where Kafka's Java producer learns it was fenced: both
    /// mean the producer must be replaced and the tasks given up.
    pub(crate) fn classify(error: KafkaError) -> Self {
        let code = error.rdkafka_error_code();
        let kind = match &error {
            KafkaError::Transaction(e) if e.is_fatal() => Severity::Fatal,
            KafkaError::Transaction(e) if e.txn_requires_abort() => Severity::Abortable,
            KafkaError::Transaction(e) if e.is_retriable() => Severity::retriable(code),
            // Delivery failures and flush timeouts leave the transaction incomplete: it
            // must be aborted, after which the producer can be used again.
            KafkaError::MessageProduction(_) | KafkaError::Flush(_) => Severity::Abortable,
            _ => Severity::Other,
        };
        Self::of(code, kind, error.into())
    }

    /// Classifies, and destroys, the error a transactional call of librdkafka's returned
    /// where rdkafka has no call of its own to make.
    ///
    /// # Safety
    /// `error` came from librdkafka and nothing else holds it.
    pub(crate) unsafe fn classify_native(error: NonNull<native::rd_kafka_error_t>) -> Self {
        let error = error.as_ptr();
        let code = RDKafkaErrorCode::from(native::rd_kafka_error_code(error));
        let kind = if native::rd_kafka_error_is_fatal(error) != 0 {
            Severity::Fatal
        } else if native::rd_kafka_error_txn_requires_abort(error) != 0 {
            Severity::Abortable
        } else if native::rd_kafka_error_is_retriable(error) != 0 {
            Severity::retriable(Some(code))
        } else {
            Severity::Other
        };
        let text = CStr::from_ptr(native::rd_kafka_error_string(error)).to_string_lossy();
        let client_error = ClientError::new(
            protocol_code(Some(code)),
            format!("Transaction error: {text}"),
        );
        native::rd_kafka_error_destroy(error);
        Self::of(Some(code), kind, client_error)
    }

    fn of(code: Option<RDKafkaErrorCode>, kind: Severity, error: ClientError) -> Self {
        let fenced = matches!(
            code,
            Some(RDKafkaErrorCode::ProducerFenced)
                | Some(RDKafkaErrorCode::InvalidTransactionalState)
                | Some(RDKafkaErrorCode::InvalidProducerEpoch)
                | Some(RDKafkaErrorCode::OutOfOrderSequenceNumber)
                | Some(RDKafkaErrorCode::InvalidProducerIdMapping)
                | Some(RDKafkaErrorCode::Fenced)
                | Some(RDKafkaErrorCode::UnknownMemberId)
                | Some(RDKafkaErrorCode::IllegalGeneration)
                | Some(RDKafkaErrorCode::FencedInstanceId)
                | Some(RDKafkaErrorCode::RebalanceInProgress)
        );
        match kind {
            _ if fenced => TransactionFailure::Fenced(error),
            Severity::TimedOut => TransactionFailure::TimedOut(error),
            Severity::Abortable => TransactionFailure::Abortable(error),
            Severity::Fatal | Severity::Other => TransactionFailure::Fatal(error),
        }
    }
}

/// What librdkafka says an error leaves the producer fit for, apart from its code.
enum Severity {
    Fatal,
    TimedOut,
    Abortable,
    Other,
}

impl Severity {
    /// A retriable error: a timeout is resumed by making the call again; any other still
    /// leaves the transaction to be aborted.
    fn retriable(code: Option<RDKafkaErrorCode>) -> Self {
        if protocol_code(code) == ClientError::REQUEST_TIMED_OUT {
            Severity::TimedOut
        } else {
            Severity::Abortable
        }
    }
}

impl fmt::Display for TransactionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransactionFailure::Fenced(e) => write!(f, "producer fenced: {e}"),
            TransactionFailure::TimedOut(e) => write!(f, "no answer in time: {e}"),
            TransactionFailure::Abortable(e) => write!(f, "transaction must abort: {e}"),
            TransactionFailure::Fatal(e) => write!(f, "fatal producer error: {e}"),
        }
    }
}

/// A Kafka operation that failed, with what the engine was doing.
#[derive(Debug)]
pub struct KafkaFailure {
    /// What was being done, for the operator.
    pub context: String,
    /// The client's error.
    pub error: ClientError,
}

impl KafkaFailure {
    /// Wraps `error` with `context`.
    pub fn new(context: impl Into<String>, error: impl Into<ClientError>) -> Self {
        KafkaFailure {
            context: context.into(),
            error: error.into(),
        }
    }

    /// True when the broker did not answer in time.
    pub fn timed_out(&self) -> bool {
        self.error.protocol_code() == ClientError::REQUEST_TIMED_OUT
    }
}

impl fmt::Display for KafkaFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.context, self.error)
    }
}

impl std::error::Error for KafkaFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// How long a metadata request waits before it asks again after a transient failure.
const METADATA_RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// Whether `error` says the cluster's metadata is moving under the request: a partition
/// whose leader is being elected or has just moved, or a topic created moments ago that
/// a broker does not serve yet. Kafka's Java clients refresh their metadata and retry
/// such a request until it times out; librdkafka returns it at once.
fn is_transient_metadata_error(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::NotLeaderForPartition
                | RDKafkaErrorCode::LeaderNotAvailable
                | RDKafkaErrorCode::UnknownTopicOrPartition
                | RDKafkaErrorCode::NotCoordinator
                | RDKafkaErrorCode::BrokerNotAvailable
                | RDKafkaErrorCode::OffsetNotAvailable
        )
    )
}

/// Runs the metadata request `request` (given the time it has left) until it succeeds,
/// fails for a reason that is not transient, or `timeout` has passed, as Kafka's Java
/// clients retry theirs.
pub(crate) fn retrying_transient<T>(
    timeout: Duration,
    mut request: impl FnMut(Duration) -> Result<T, KafkaError>,
) -> Result<T, KafkaError> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match request(left) {
            Err(error) if is_transient_metadata_error(&error) && Instant::now() < deadline => {
                thread::sleep(METADATA_RETRY_BACKOFF.min(left));
            }
            outcome => return outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_retried_while_its_partition_has_no_leader_and_returned_when_it_succeeds() {
        let mut calls = 0;
        let result = retrying_transient(Duration::from_secs(30), |_| {
            calls += 1;
            if calls < 3 {
                Err(KafkaError::MetadataFetch(
                    RDKafkaErrorCode::NotLeaderForPartition,
                ))
            } else {
                Ok((0, 42))
            }
        });
        assert_eq!(result, Ok((0, 42)));
        assert_eq!(calls, 3);
    }

    #[test]
    fn a_request_that_fails_for_good_is_not_retried() {
        let mut calls = 0;
        let result: Result<(), _> = retrying_transient(Duration::from_secs(30), |_| {
            calls += 1;
            Err(KafkaError::MetadataFetch(
                RDKafkaErrorCode::TopicAuthorizationFailed,
            ))
        });
        assert!(result.is_err());
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_transient_failure_is_returned_once_the_time_is_up() {
        let started = Instant::now();
        let result: Result<(), _> = retrying_transient(Duration::from_millis(350), |_| {
            Err(KafkaError::MetadataFetch(
                RDKafkaErrorCode::LeaderNotAvailable,
            ))
        });
        assert_eq!(
            result,
            Err(KafkaError::MetadataFetch(
                RDKafkaErrorCode::LeaderNotAvailable
            ))
        );
        assert!(started.elapsed() >= Duration::from_millis(350));
    }

    #[test]
    fn a_client_error_keeps_rdkafkas_message_and_maps_its_code() {
        let too_large = KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge);
        let error = ClientError::from(too_large.clone());
        assert_eq!(error.to_string(), too_large.to_string());
        assert_eq!(error.protocol_code(), 10);
        let timed_out = KafkaError::MessageProduction(RDKafkaErrorCode::MessageTimedOut);
        assert_eq!(
            ClientError::from(timed_out).protocol_code(),
            ClientError::REQUEST_TIMED_OUT
        );
        // A transactional call that timed out while the broker was away.
        let call_timed_out = KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut);
        assert_eq!(
            ClientError::from(call_timed_out).protocol_code(),
            ClientError::REQUEST_TIMED_OUT
        );
        let unknown = KafkaError::MessageProduction(RDKafkaErrorCode::UnknownPartition);
        assert_eq!(
            ClientError::from(unknown).protocol_code(),
            ClientError::UNKNOWN_TOPIC_OR_PARTITION
        );
        let local = KafkaError::MessageProduction(RDKafkaErrorCode::Fail);
        assert_eq!(
            ClientError::from(local).protocol_code(),
            ClientError::UNKNOWN_SERVER_ERROR
        );
    }

    #[test]
    fn records_failing_as_kafka_streams_answers_with_task_migrated_fence_the_producer() {
        for code in [
            RDKafkaErrorCode::OutOfOrderSequenceNumber,
            RDKafkaErrorCode::InvalidProducerEpoch,
            RDKafkaErrorCode::InvalidProducerIdMapping,
            RDKafkaErrorCode::ProducerFenced,
        ] {
            let failed = ClientError::from(KafkaError::MessageProduction(code));
            assert!(failed.fences_the_producer(), "{code:?}");
        }
        let too_large = KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge);
        assert!(!ClientError::from(too_large).fences_the_producer());
    }

    #[test]
    fn producer_errors_are_classified_as_kafka_streams_classifies_them() {
        let fenced = KafkaError::ConsumerCommit(RDKafkaErrorCode::UnknownMemberId);
        assert!(matches!(
            TransactionFailure::classify(fenced),
            TransactionFailure::Fenced(_)
        ));
        let aborted_by_the_coordinator =
            KafkaError::Flush(RDKafkaErrorCode::InvalidTransactionalState);
        assert!(matches!(
            TransactionFailure::classify(aborted_by_the_coordinator),
            TransactionFailure::Fenced(_)
        ));
        let out_of_sequence = KafkaError::Flush(RDKafkaErrorCode::OutOfOrderSequenceNumber);
        assert!(matches!(
            TransactionFailure::classify(out_of_sequence),
            TransactionFailure::Fenced(_)
        ));
        let flush_timeout = KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut);
        assert!(matches!(
            TransactionFailure::classify(flush_timeout),
            TransactionFailure::Abortable(_)
        ));
        let creation = KafkaError::ClientCreation("no".into());
        assert!(matches!(
            TransactionFailure::classify(creation),
            TransactionFailure::Fatal(_)
        ));
    }
}
