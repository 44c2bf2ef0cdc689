//! Classification of Kafka failures into what the engine does about them, following
//! Kafka Streams: a fenced producer means the thread lost its tasks (close them dirty and
//! rejoin); an abortable transaction error means abort, roll back and resume from the
//! committed offsets; anything else is fatal for the thread.

use std::fmt;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

/// What a failed transactional operation requires.
#[derive(Debug)]
pub enum TransactionFailure {
    /// Another producer with the same transactional id, or a newer group generation, took
    /// over: the tasks now belong to someone else (Kafka Streams' `TaskMigratedException`).
    Fenced(KafkaError),
    /// The transaction must be aborted; the producer stays usable.
    Abortable(KafkaError),
    /// The producer is unusable for another reason.
    Fatal(KafkaError),
}

impl TransactionFailure {
    /// Classifies an error returned by a producer operation.
    pub fn classify(error: KafkaError) -> Self {
        let code = error.rdkafka_error_code();
        let fenced = matches!(
            code,
            Some(RDKafkaErrorCode::ProducerFenced)
                | Some(RDKafkaErrorCode::InvalidProducerEpoch)
                | Some(RDKafkaErrorCode::Fenced)
                | Some(RDKafkaErrorCode::UnknownMemberId)
                | Some(RDKafkaErrorCode::IllegalGeneration)
                | Some(RDKafkaErrorCode::FencedInstanceId)
                | Some(RDKafkaErrorCode::RebalanceInProgress)
        );
        if fenced {
            return TransactionFailure::Fenced(error);
        }
        match &error {
            KafkaError::Transaction(e) if e.is_fatal() => TransactionFailure::Fatal(error),
            KafkaError::Transaction(e) if e.txn_requires_abort() || e.is_retriable() => {
                TransactionFailure::Abortable(error)
            }
            // Delivery failures and flush timeouts leave the transaction incomplete: it
            // must be aborted, after which the producer can be used again.
            KafkaError::MessageProduction(_) | KafkaError::Flush(_) => {
                TransactionFailure::Abortable(error)
            }
            _ => TransactionFailure::Fatal(error),
        }
    }
}

/// The Kafka protocol error code that stands for `error` when a record failed to be
/// produced: librdkafka's broker errors are the protocol's codes; its local ones are mapped
/// to what Kafka's Java producer reports for the same failure, anything else to
/// `UNKNOWN_SERVER_ERROR` (-1).
pub fn protocol_error_code(error: &KafkaError) -> i16 {
    const UNKNOWN_SERVER_ERROR: i16 = -1;
    const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    const REQUEST_TIMED_OUT: i16 = 7;
    match error.rdkafka_error_code() {
        Some(RDKafkaErrorCode::MessageTimedOut) => REQUEST_TIMED_OUT,
        Some(RDKafkaErrorCode::UnknownTopic | RDKafkaErrorCode::UnknownPartition) => {
            UNKNOWN_TOPIC_OR_PARTITION
        }
        Some(code) if (code as i32) > 0 && (code as i32) <= i16::MAX as i32 => code as i16,
        _ => UNKNOWN_SERVER_ERROR,
    }
}

impl fmt::Display for TransactionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransactionFailure::Fenced(e) => write!(f, "producer fenced: {e}"),
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
    pub error: KafkaError,
}

impl KafkaFailure {
    /// Wraps `error` with `context`.
    pub fn new(context: impl Into<String>, error: KafkaError) -> Self {
        KafkaFailure {
            context: context.into(),
            error,
        }
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
