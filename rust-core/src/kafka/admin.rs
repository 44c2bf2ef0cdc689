//! Topic metadata, internal topic creation and deletion of consumed records.
//!
//! rdkafka's admin calls return futures that librdkafka's own thread completes; the engine
//! has no async runtime, so [`block_on`] waits for them by parking the calling thread, and
//! a [`RecordDeletion`], which nothing waits for, is only looked at when its answer matters.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::topic_partition_list::TopicPartitionList;
use rdkafka::ClientConfig;

use crate::kafka::error::KafkaFailure;
use crate::kafka::lists::partition_list;
use crate::store::TopicPartition;

/// A topic to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSpec {
    /// Topic name.
    pub name: String,
    /// Number of partitions.
    pub partitions: i32,
    /// Replication factor; -1 takes the broker's default.
    pub replication_factor: i32,
    /// Topic-level configs.
    pub configs: BTreeMap<String, String>,
}

/// Admin operations the engine needs: partition counts, topic creation, record deletion.
pub struct Admin {
    admin: AdminClient<DefaultClientContext>,
    /// Metadata requests go through a consumer handle: rdkafka's admin client has none.
    metadata: BaseConsumer,
    timeout: Duration,
}

impl Admin {
    /// An admin client for `config`; every call gives up after `timeout`.
    pub fn new(config: &ClientConfig, timeout: Duration) -> Result<Self, KafkaFailure> {
        let admin = config
            .create()
            .map_err(|e| KafkaFailure::new("creating the admin client", e))?;
        let metadata = config
            .create()
            .map_err(|e| KafkaFailure::new("creating the metadata client", e))?;
        Ok(Admin {
            admin,
            metadata,
            timeout,
        })
    }

    /// The partition count of each of `topics`; `None` for a topic that does not exist.
    pub fn partition_counts(
        &self,
        topics: &[String],
    ) -> Result<BTreeMap<String, Option<i32>>, KafkaFailure> {
        let metadata = self
            .metadata
            .fetch_metadata(None, self.timeout)
            .map_err(|e| KafkaFailure::new("fetching topic metadata", e))?;
        let known: BTreeMap<&str, i32> = metadata
            .topics()
            .iter()
            .filter(|t| t.error().is_none())
            .map(|t| (t.name(), t.partitions().len() as i32))
            .collect();
        Ok(topics
            .iter()
            .map(|t| (t.clone(), known.get(t.as_str()).copied()))
            .collect())
    }

    /// Creates `topics`; a topic that already exists is left as it is. Returns once every
    /// topic shows up in the metadata with its partitions.
    pub fn create_topics(&self, topics: &[TopicSpec]) -> Result<(), KafkaFailure> {
        if topics.is_empty() {
            return Ok(());
        }
        let new_topics: Vec<NewTopic<'_>> = topics
            .iter()
            .map(|spec| {
                spec.configs.iter().fold(
                    NewTopic::new(
                        &spec.name,
                        spec.partitions,
                        TopicReplication::Fixed(spec.replication_factor),
                    ),
                    |topic, (key, value)| topic.set(key, value),
                )
            })
            .collect();
        let options = AdminOptions::new().operation_timeout(Some(self.timeout));
        let results = block_on(self.admin.create_topics(&new_topics, &options))
            .map_err(|e| KafkaFailure::new("creating internal topics", e))?;
        for result in results {
            if let Err((topic, code)) = result {
                if code != RDKafkaErrorCode::TopicAlreadyExists {
                    return Err(KafkaFailure::new(
                        format!("creating topic {topic}"),
                        KafkaError::AdminOp(code),
                    ));
                }
            }
        }
        self.await_topics(topics)
    }

    /// Asks the brokers to delete the records of each partition of `before` below its
    /// offset, without waiting for their answer.
    pub fn delete_records(&self, before: &BTreeMap<TopicPartition, i64>) -> RecordDeletion {
        let list = partition_list(before.iter().map(|(p, offset)| (p, Some(*offset))));
        let options = AdminOptions::new().operation_timeout(Some(self.timeout));
        RecordDeletion {
            answer: Box::pin(self.admin.delete_records(&list, &options)),
        }
    }

    fn await_topics(&self, topics: &[TopicSpec]) -> Result<(), KafkaFailure> {
        let names: Vec<String> = topics.iter().map(|t| t.name.clone()).collect();
        let deadline = Instant::now() + self.timeout;
        loop {
            let counts = self.partition_counts(&names)?;
            if counts.values().all(Option::is_some) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let missing: Vec<_> = counts
                    .into_iter()
                    .filter(|(_, count)| count.is_none())
                    .map(|(name, _)| name)
                    .collect();
                return Err(KafkaFailure::new(
                    format!("waiting for created topics {missing:?} to appear"),
                    KafkaError::AdminOp(RDKafkaErrorCode::RequestTimedOut),
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A delete-records request sent by [`Admin::delete_records`].
pub struct RecordDeletion {
    answer: Pin<Box<dyn Future<Output = KafkaResult<TopicPartitionList>> + Send>>,
}

impl RecordDeletion {
    /// `None` while the brokers have not answered; then whether every partition's records
    /// were deleted.
    pub fn outcome(&mut self) -> Option<Result<(), KafkaFailure>> {
        let mut context = Context::from_waker(Waker::noop());
        let Poll::Ready(answer) = self.answer.as_mut().poll(&mut context) else {
            return None;
        };
        let list = match answer {
            Ok(list) => list,
            Err(e) => return Some(Err(KafkaFailure::new("deleting records", e))),
        };
        Some(list.elements().iter().try_for_each(|element| {
            element.error().map_err(|e| {
                KafkaFailure::new(
                    format!(
                        "deleting records of {}",
                        TopicPartition::new(element.topic(), element.partition())
                    ),
                    e,
                )
            })
        }))
    }
}

/// Runs `future` to completion on the calling thread, parking it between wake-ups.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unparker(Thread);
    impl Wake for Unparker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unparker(thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => thread::park(),
        }
    }
}
