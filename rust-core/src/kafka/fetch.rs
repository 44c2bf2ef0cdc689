//! The group consumer's fetched records, taken from librdkafka in batches.
//!
//! rdkafka's `poll` hands out one message per call, each wrapped in an event of its own: an
//! allocation, a clock read and the partition's lock per record. The group consumer's
//! partitions forward what they fetch to a [`FetchQueue`] of the consumer's own instead, which
//! `rd_kafka_consume_batch_queue` serves many records per call, moving each partition's
//! position once per batch. Rebalances, errors of the group and commit reports stay on the
//! consumer's own queue, which rdkafka's `poll` serves: a batch read of that queue would answer
//! a rebalance by itself, without the listener.
//!
//! What the forwarding leaves as it was: a seek or a pause outdates what was fetched before it
//! (librdkafka drops such records as it serves the queue), and a partition fetches again once
//! fewer than `queued.min.messages` records are queued, counted over the queue all partitions
//! share, as they were counted over the consumer's queue.

use std::ffi::{c_void, CStr, CString};
use std::ptr::{self, NonNull};
use std::slice;
use std::time::Duration;

use rdkafka::bindings as native;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::kafka::records::RecordRun;
use crate::store::TopicPartition;

/// A queue that the consumer's partitions forward their fetched records to.
pub struct FetchQueue {
    queue: NonNull<native::rd_kafka_queue_t>,
    client: NonNull<native::rd_kafka_t>,
}

// SAFETY: librdkafka's queues and clients are safe to use from any thread.
unsafe impl Send for FetchQueue {}
// SAFETY: as above; every call takes librdkafka's own locks.
unsafe impl Sync for FetchQueue {}

impl FetchQueue {
    /// A queue of `client`'s, which must outlive it.
    ///
    /// # Safety
    /// `client` is a live consumer handle, destroyed only after this queue is dropped.
    pub unsafe fn new(client: *mut native::rd_kafka_t) -> Self {
        let client = NonNull::new(client).expect("a live client handle");
        // SAFETY: the caller guarantees the client is live.
        let queue = unsafe { native::rd_kafka_queue_new(client.as_ptr()) };
        FetchQueue {
            queue: NonNull::new(queue).expect("librdkafka allocates a queue or aborts"),
            client,
        }
    }

    /// Makes what `partitions` fetch come to this queue. The forwarding is the partition's
    /// for as long as the consumer lives: librdkafka keeps a forwarding the application set
    /// when it assigns the partition again.
    pub fn forward<'a>(&self, partitions: impl IntoIterator<Item = &'a TopicPartition>) {
        for partition in partitions {
            let Ok(topic) = CString::new(partition.topic.as_str()) else {
                continue;
            };
            // SAFETY: the client is live (see `new`), the topic a valid C string; librdkafka
            // creates the partition's state if it has none yet and returns a new handle to
            // its fetch queue, which is given back right after forwarding it.
            unsafe {
                let fetched = native::rd_kafka_queue_get_partition(
                    self.client.as_ptr(),
                    topic.as_ptr(),
                    partition.partition,
                );
                if !fetched.is_null() {
                    native::rd_kafka_queue_forward(fetched, self.queue.as_ptr());
                    native::rd_kafka_queue_destroy(fetched);
                }
            }
        }
    }

    /// Appends up to `max` fetched records to `runs` (one run per partition, in the order
    /// they came), waiting up to `wait` for the first. A record that stands for a consumer
    /// error (an out-of-range offset without a reset policy, a topic gone) is not a record:
    /// the first such error is returned beside the records taken.
    pub fn take(
        &self,
        max: usize,
        wait: Duration,
        runs: &mut Vec<RecordRun>,
    ) -> Option<KafkaError> {
        let mut messages: Vec<*mut native::rd_kafka_message_t> = vec![ptr::null_mut(); max];
        let mut taken = self.consume(0, &mut messages);
        if taken == 0 && !wait.is_zero() && max > 0 {
            // librdkafka waits to fill the whole array: wait for one, then take what is there.
            let wait_ms = wait.as_millis().clamp(1, i32::MAX as u128) as i32;
            taken = self.consume(wait_ms, &mut messages[..1]);
            if taken == 1 {
                taken += self.consume(0, &mut messages[1..]);
            }
        }
        let mut error = None;
        for &message in &messages[..taken] {
            // SAFETY: librdkafka handed out `taken` live messages, each given back once here.
            unsafe {
                if let Err(code) = push_native(runs, &*message) {
                    error.get_or_insert(KafkaError::MessageConsumption(code));
                }
                native::rd_kafka_message_destroy(message);
            }
        }
        error
    }

    /// Fills the front of `messages` from the queue, waiting up to `timeout_ms` to fill it
    /// all; how many it filled.
    fn consume(&self, timeout_ms: i32, messages: &mut [*mut native::rd_kafka_message_t]) -> usize {
        if messages.is_empty() {
            return 0;
        }
        // SAFETY: the queue is live and the array has room for `messages.len()` pointers.
        let taken = unsafe {
            native::rd_kafka_consume_batch_queue(
                self.queue.as_ptr(),
                timeout_ms,
                messages.as_mut_ptr(),
                messages.len(),
            )
        };
        usize::try_from(taken).unwrap_or(0)
    }
}

impl Drop for FetchQueue {
    fn drop(&mut self) {
        // SAFETY: the queue came from `rd_kafka_queue_new` and is given back once, while its
        // client is live (see `new`); partitions still forwarding to it hold references of
        // their own.
        unsafe { native::rd_kafka_queue_destroy(self.queue.as_ptr()) }
    }
}

/// Appends `message` to the run of its partition in `runs`; the error code it carries
/// instead of a record, if it does.
///
/// # Safety
/// `message` is a live message librdkafka handed out.
unsafe fn push_native(
    runs: &mut Vec<RecordRun>,
    message: &native::rd_kafka_message_t,
) -> Result<(), RDKafkaErrorCode> {
    if message.err != native::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
        return Err(message.err.into());
    }
    // SAFETY: a fetched message has a topic, and its key, payload and headers stay valid
    // until it is destroyed, after this function.
    unsafe {
        let topic = CStr::from_ptr(native::rd_kafka_topic_name(message.rkt));
        let topic = topic.to_str().unwrap_or_default();
        let mut timestamp_type =
            native::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
        let timestamp = native::rd_kafka_message_timestamp(message, &mut timestamp_type);
        let mut headers: *mut native::rd_kafka_headers_t = ptr::null_mut();
        let count = if native::rd_kafka_message_headers(message, &mut headers)
            == native::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
        {
            native::rd_kafka_header_cnt(headers)
        } else {
            0
        };
        let header = |index: usize| {
            let mut name = ptr::null();
            let mut value: *const c_void = ptr::null();
            let mut size = 0;
            native::rd_kafka_header_get_all(headers, index, &mut name, &mut value, &mut size);
            let name = CStr::from_ptr(name).to_str().unwrap_or_default();
            (name, bytes(value, size))
        };
        let index = match runs.iter().rposition(|run| {
            run.partition.partition == message.partition && run.partition.topic == topic
        }) {
            Some(index) => index,
            None => {
                runs.push(RecordRun::new(TopicPartition::new(
                    topic,
                    message.partition,
                )));
                runs.len() - 1
            }
        };
        runs[index].push(
            message.offset,
            timestamp,
            bytes(message.key, message.key_len),
            bytes(message.payload, message.len),
            (0..count).map(header),
        );
    }
    Ok(())
}

/// The `size` bytes at `data`; `None` for a null pointer.
///
/// # Safety
/// A non-null `data` points at `size` bytes that outlive the returned slice.
unsafe fn bytes<'a>(data: *const c_void, size: usize) -> Option<&'a [u8]> {
    if data.is_null() {
        return None;
    }
    // SAFETY: as the caller guarantees.
    Some(unsafe { slice::from_raw_parts(data.cast::<u8>(), size) })
}
