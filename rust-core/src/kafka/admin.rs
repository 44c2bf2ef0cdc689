//! Topic metadata and internal topic creation.
//!
//! rdkafka's admin calls return futures that librdkafka's own thread completes; the engine
//! has no async runtime, so [`block_on`] waits for them by parking the calling thread.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::ClientConfig;

use crate::kafka::error::KafkaFailure;

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

/// Admin operations the engine needs: partition counts and topic creation.
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
