//! The engine's configuration, read from `StreamsConfig` keys with Kafka Streams' defaults.
//!
//! | key | default |
//! |---|---|
//! | `application.id` | required; the group id, the prefix of internal topics and transactional ids |
//! | `bootstrap.servers` | required |
//! | `num.stream.threads` | 1 |
//! | `processing.guarantee` | `at_least_once`; or `exactly_once_v2` |
//! | `commit.interval.ms` | 30000, or 100 under `exactly_once_v2` |
//! | `repartition.purge.interval.ms` | 30000 |
//! | `statestore.uncommitted.max.bytes` | 67108864 (64 MiB); ≤ 0 means unbounded |
//! | `state.dir` | `<temp dir>/kafka-streams` |
//! | `replication.factor` | -1 (the broker's default) |
//! | `max.poll.records` (`consumer.`/`main.consumer.` prefixed) | 1000 |
//! | `max.poll.interval.ms` (`consumer.`/`main.consumer.` prefixed) | 300000 |
//! | `task.timeout.ms` | 300000: how long a transaction call that timed out is called again, and a task whose committed offsets could not be read is opened again |
//! | `default.api.timeout.ms` | 60000: bound of every blocking client call |
//!
//! Client settings are passed with Kafka Streams' prefixes, see
//! [`crate::kafka::client_config`]; RocksDB settings are `sluice.rocksdb.*`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use rdkafka::error::KafkaError;
use rdkafka::ClientConfig;

use crate::engine::error::{Error, Result};
use crate::kafka::{ClientProperties, ClientRole};
use crate::store::rocks::RocksDbConfig;

/// How far a stream thread's consumer fetches ahead of what the engine took from it.
/// librdkafka turns every fetched record into a queued message of a few hundred bytes
/// besides its payload, where Kafka's Java consumer keeps a fetch as it came: with
/// librdkafka's defaults (refill below 100,000 messages per partition, up to 64 MiB of
/// payload), the backlog of small records on word count's repartition topic held 77 MB of
/// queued messages at the peak; refilling below 10,000 holds 51 MB at the same throughput,
/// and refilling only below 2 MiB of payload per partition takes another 35 MB off the
/// process's memory outside the Java heap at word count's throughput; below 512 KiB, another
/// 7-18 MB of native memory on word count and windowed totals, and peak RSS 10 % lower on word
/// count at-least-once and 10-18 % on the foreign-key join (alternated runs), for up to 5 % of
/// their throughput (a partition's queue then holds one fetch of up to 1 MiB at the most,
/// about what Java's consumer keeps of it). Fetching less per
/// request (`fetch.message.max.bytes`) cuts it as much but made the thread wait for its
/// input: a tenth less throughput at 256 KiB.
/// A partition whose queue is above those bounds is not fetched again for
/// `fetch.queue.backoff.ms`, librdkafka's 1 s by default: its queue ran dry long before, and
/// on word count the stream thread sat in polls that found nothing for a fifth of the run;
/// with 10 ms the queue stays refilled and word count's throughput rose by 31 % (at least
/// once) and 47 % (exactly once).
/// Each is a default: the user's librdkafka keys decide instead.
const PREFETCH: [(&str, &str); 3] = [
    ("queued.min.messages", "10000"),
    ("queued.max.messages.kbytes", "512"),
    ("fetch.queue.backoff.ms", "10"),
];

/// How long the broker may hold a restore consumer's fetch that finds nothing new, in ms.
const RESTORE_FETCH_WAIT_MS: u32 = 20;

/// Kafka Streams' `processing.guarantee`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessingGuarantee {
    /// `at_least_once`.
    AtLeastOnce,
    /// `exactly_once_v2`: one transactional producer per thread.
    ExactlyOnceV2,
}

/// Everything an engine instance is configured with.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// `application.id`.
    pub application_id: String,
    /// `bootstrap.servers`.
    pub bootstrap_servers: String,
    /// `num.stream.threads`.
    pub num_stream_threads: usize,
    /// `processing.guarantee`.
    pub guarantee: ProcessingGuarantee,
    /// `commit.interval.ms`.
    pub commit_interval: Duration,
    /// `repartition.purge.interval.ms`: least time between two deletions of committed
    /// repartition records.
    pub repartition_purge_interval: Duration,
    /// `statestore.uncommitted.max.bytes`; `None` when unbounded.
    pub uncommitted_max_bytes: Option<u64>,
    /// `state.dir`.
    pub state_dir: PathBuf,
    /// `replication.factor` of internal topics.
    pub replication_factor: i32,
    /// Most records one poll hands to the tasks.
    pub max_poll_records: usize,
    /// Most changelog records one restore step reads: the restore consumer's
    /// `max.poll.records`, as Kafka Streams restores a poll of its restore consumer at a time
    /// (and its restore listener hears of batches that size).
    pub restore_max_poll_records: usize,
    /// `max.poll.interval.ms` of the main consumer; restoring polls well within it.
    pub max_poll_interval: Duration,
    /// `task.timeout.ms`: how long a transactional call that timed out (the broker away), or
    /// opening a task whose committed offsets could not be read, is retried before the thread
    /// fails.
    pub task_timeout: Duration,
    /// `default.api.timeout.ms`: how long a blocking client call may retry.
    pub client_timeout: Duration,
    /// Prefixed client overrides.
    pub clients: ClientProperties,
    /// RocksDB settings shared by the stores of this instance.
    pub rocksdb: RocksDbConfig,
}

impl EngineConfig {
    /// Reads and validates `properties`; a bad value names its key.
    pub fn from_properties(properties: &BTreeMap<String, String>) -> Result<Self> {
        let get = |key: &str| properties.get(key).map(|v| v.trim().to_string());
        let required = |key: &str| {
            get(key)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| Error::Config {
                    key: key.into(),
                    reason: "missing".into(),
                })
        };
        let application_id = required("application.id")?;
        let bootstrap_servers = required("bootstrap.servers")?;
        let guarantee = match get("processing.guarantee").as_deref() {
            None | Some("at_least_once") => ProcessingGuarantee::AtLeastOnce,
            Some("exactly_once_v2") => ProcessingGuarantee::ExactlyOnceV2,
            Some(other) => {
                return Err(Error::Config {
                    key: "processing.guarantee".into(),
                    reason: format!("'{other}' is not at_least_once or exactly_once_v2"),
                })
            }
        };
        let default_commit_ms = match guarantee {
            ProcessingGuarantee::AtLeastOnce => 30_000,
            ProcessingGuarantee::ExactlyOnceV2 => 100,
        };
        let clients = ClientProperties::new(&bootstrap_servers, properties);
        let consumer_value = |key: &str| {
            clients
                .user_value(ClientRole::MainConsumer, key)
                .map(str::to_string)
                .or_else(|| get(key))
        };
        // None is allowed, as in Kafka Streams: the global thread alone, or threads added later.
        let num_stream_threads: usize = parse(properties, "num.stream.threads", 1)?;
        let uncommitted: i64 = parse(properties, "statestore.uncommitted.max.bytes", 64 << 20)?;
        let max_poll_records: usize =
            parse_value("max.poll.records", consumer_value("max.poll.records"), 1000)?;
        let restore_consumer_value = clients
            .user_value(ClientRole::RestoreConsumer, "max.poll.records")
            .map(str::to_string)
            .or_else(|| get("max.poll.records"));
        let restore_max_poll_records: usize = parse_value(
            "restore.consumer.max.poll.records",
            restore_consumer_value,
            1000,
        )?;
        let max_poll_interval_ms: u64 = parse_value(
            "max.poll.interval.ms",
            consumer_value("max.poll.interval.ms"),
            300_000,
        )?;
        let rocksdb =
            RocksDbConfig::from_config(|key| properties.get(key).cloned()).map_err(|e| {
                Error::Config {
                    key: "sluice.rocksdb".into(),
                    reason: e.to_string(),
                }
            })?;
        Ok(EngineConfig {
            application_id,
            bootstrap_servers,
            num_stream_threads,
            guarantee,
            commit_interval: Duration::from_millis(parse(
                properties,
                "commit.interval.ms",
                default_commit_ms,
            )?),
            repartition_purge_interval: Duration::from_millis(parse(
                properties,
                "repartition.purge.interval.ms",
                30_000,
            )?),
            uncommitted_max_bytes: (uncommitted > 0).then_some(uncommitted as u64),
            state_dir: get("state.dir")
                .map(PathBuf::from)
                .unwrap_or_else(|| std::env::temp_dir().join("kafka-streams")),
            replication_factor: parse(properties, "replication.factor", -1)?,
            max_poll_records: max_poll_records.max(1),
            restore_max_poll_records: restore_max_poll_records.max(1),
            max_poll_interval: Duration::from_millis(max_poll_interval_ms),
            task_timeout: Duration::from_millis(parse(properties, "task.timeout.ms", 300_000)?),
            client_timeout: Duration::from_millis(parse(
                properties,
                "default.api.timeout.ms",
                60_000,
            )?),
            clients,
            rocksdb,
        })
    }

    /// True under `exactly_once_v2`.
    pub fn exactly_once(&self) -> bool {
        self.guarantee == ProcessingGuarantee::ExactlyOnceV2
    }

    /// The state directory of this application.
    pub fn application_dir(&self) -> PathBuf {
        self.state_dir.join(&self.application_id)
    }

    fn isolation_level(&self) -> String {
        match self.guarantee {
            ProcessingGuarantee::AtLeastOnce => "read_uncommitted".into(),
            ProcessingGuarantee::ExactlyOnceV2 => "read_committed".into(),
        }
    }

    /// The consumer that fetches the partitions of thread `thread_index` (1-based, as Kafka
    /// Streams counts): Kafka Streams' main consumer, less the group membership, which is Kafka
    /// Streams' own (DESIGN §10). The group id names the group whose committed offsets it reads.
    pub fn main_consumer_config(&self, thread_index: usize) -> ClientConfig {
        let mut defaults = vec![
            ("group.id", self.application_id.clone()),
            (
                "client.id",
                format!(
                    "{}-StreamThread-{thread_index}-consumer",
                    self.application_id
                ),
            ),
            ("enable.auto.commit", "false".into()),
            ("enable.auto.offset.store", "false".into()),
            ("auto.offset.reset", "earliest".into()),
            ("allow.auto.create.topics", "false".into()),
            ("isolation.level", self.isolation_level()),
        ];
        defaults.extend(PREFETCH.map(|(key, value)| (key, value.to_string())));
        let mut config = self
            .clients
            .client_config(ClientRole::MainConsumer, &defaults);
        config.remove("group.instance.id");
        config
    }

    /// The changelog reader's consumers.
    pub fn restore_consumer_config(&self, thread_index: usize) -> ClientConfig {
        self.clients.client_config(
            ClientRole::RestoreConsumer,
            &[
                (
                    "client.id",
                    format!(
                        "{}-StreamThread-{thread_index}-restore-consumer",
                        self.application_id
                    ),
                ),
                ("isolation.level", self.isolation_level()),
                ("auto.offset.reset", "earliest".into()),
                // Restore reads in large batches.
                ("fetch.max.bytes", (50 << 20).to_string()),
                ("max.partition.fetch.bytes", (8 << 20).to_string()),
                // A partition is restored when the reader learns it reached the end, from a fetch
                // that finds nothing more. The broker holds such a fetch for this long, and a
                // changelog whose last entry is a transaction marker needs one, so every restore
                // after a clean stop under exactly-once would take librdkafka's 500 ms at least.
                ("fetch.wait.max.ms", RESTORE_FETCH_WAIT_MS.to_string()),
            ],
        )
    }

    /// The consumer of the global stores, outside any group.
    pub fn global_consumer_config(&self) -> ClientConfig {
        self.clients.client_config(
            ClientRole::GlobalConsumer,
            &[
                (
                    "client.id",
                    format!("{}-global-consumer", self.application_id),
                ),
                ("isolation.level", self.isolation_level()),
                ("auto.offset.reset", "earliest".into()),
            ],
        )
    }

    /// The producer of a thread; transactional when `transactional_id` is given.
    pub fn producer_config(
        &self,
        thread_index: usize,
        transactional_id: Option<&str>,
    ) -> ClientConfig {
        let mut defaults = vec![
            (
                "client.id",
                format!(
                    "{}-StreamThread-{thread_index}-producer",
                    self.application_id
                ),
            ),
            // Java's default partitioner for keyed records: murmur2 of the key.
            ("partitioner", "murmur2_random".to_string()),
            ("enable.idempotence", "true".into()),
            // Kafka's Java producer sends a partition's batch once it holds 16 KiB, so Kafka
            // Streams' 100 ms linger is a bound its batches rarely reach under load; a batch of
            // librdkafka's (1 MB, 10,000 records) does wait it out, which held repartitioned
            // records from their tasks and kept records unanswered, and their contexts alive,
            // for 100 ms (word count at-least-once: 16 % less throughput, 14 % more peak RSS
            // than at 5 ms). 5 ms is the Java producer's own default.
            ("linger.ms", "5".into()),
            // Java's producer holds at most 32 MiB unsent (`buffer.memory`); librdkafka's queue
            // takes up to 1 GiB unless bounded.
            ("queue.buffering.max.kbytes", "32768".into()),
        ];
        if let Some(id) = transactional_id {
            defaults.push(("transactional.id", id.to_string()));
            // Kafka Streams' exactly-once default, so a dead instance's transaction is
            // aborted quickly.
            defaults.push(("transaction.timeout.ms", "10000".into()));
        }
        self.clients.client_config(ClientRole::Producer, &defaults)
    }

    /// Fails on a client setting librdkafka rejects, naming it, as Kafka's clients fail when
    /// Kafka Streams creates them: before anything starts. Returns the settings the clients
    /// take as another value ([`ClientProperties::adjusted_settings`]), for a warning.
    pub fn check_client_settings(&self) -> Result<BTreeMap<String, String>> {
        let clients = [
            self.main_consumer_config(1),
            self.restore_consumer_config(1),
            self.global_consumer_config(),
            self.producer_config(1, None),
            self.admin_config(),
        ];
        for client in clients {
            client.create_native_config().map_err(|error| match error {
                KafkaError::ClientConfig(_, reason, key, _) => Error::Config { key, reason },
                other => Error::Config {
                    key: "client settings".into(),
                    reason: other.to_string(),
                },
            })?;
        }
        Ok(self.clients.adjusted_settings())
    }

    /// The admin client.
    pub fn admin_config(&self) -> ClientConfig {
        self.clients.client_config(
            ClientRole::Admin,
            &[("client.id", format!("{}-admin", self.application_id))],
        )
    }
}

fn parse<T: FromStr>(properties: &BTreeMap<String, String>, key: &str, default: T) -> Result<T> {
    parse_value(key, properties.get(key).cloned(), default)
}

fn parse_value<T: FromStr>(key: &str, value: Option<String>, default: T) -> Result<T> {
    match value {
        None => Ok(default),
        Some(value) => value.trim().parse().map_err(|_| Error::Config {
            key: key.into(),
            reason: format!("'{value}' is not a valid number"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_follow_the_guarantee() {
        let base = [("application.id", "app"), ("bootstrap.servers", "b:1")];
        let alos = EngineConfig::from_properties(&props(&base)).unwrap();
        assert_eq!(alos.commit_interval, Duration::from_secs(30));
        assert_eq!(alos.repartition_purge_interval, Duration::from_secs(30));
        assert_eq!(alos.uncommitted_max_bytes, Some(64 << 20));
        let mut eos = props(&base);
        eos.insert("processing.guarantee".into(), "exactly_once_v2".into());
        eos.insert("statestore.uncommitted.max.bytes".into(), "0".into());
        let eos = EngineConfig::from_properties(&eos).unwrap();
        assert_eq!(eos.commit_interval, Duration::from_millis(100));
        assert_eq!(eos.uncommitted_max_bytes, None);
        assert_eq!(
            eos.main_consumer_config(1).get("isolation.level"),
            Some("read_committed")
        );
    }

    #[test]
    fn a_restore_step_reads_as_many_records_as_the_restore_consumer_polls() {
        let base = [("application.id", "app"), ("bootstrap.servers", "b:1")];
        let defaults = EngineConfig::from_properties(&props(&base)).unwrap();
        assert_eq!(defaults.restore_max_poll_records, 1000);
        let mut everyone = props(&base);
        everyone.insert("max.poll.records".into(), "200".into());
        let everyone = EngineConfig::from_properties(&everyone).unwrap();
        assert_eq!(
            (everyone.max_poll_records, everyone.restore_max_poll_records),
            (200, 200)
        );
        let mut restore_only = props(&base);
        restore_only.insert("max.poll.records".into(), "200".into());
        restore_only.insert("restore.consumer.max.poll.records".into(), "1".into());
        let restore_only = EngineConfig::from_properties(&restore_only).unwrap();
        assert_eq!(
            (
                restore_only.max_poll_records,
                restore_only.restore_max_poll_records
            ),
            (200, 1)
        );
        let mut bad = props(&base);
        bad.insert("restore.consumer.max.poll.records".into(), "many".into());
        let err = EngineConfig::from_properties(&bad).unwrap_err();
        assert!(
            matches!(&err, Error::Config { key, .. } if key == "restore.consumer.max.poll.records"),
            "{err}"
        );
    }

    #[test]
    fn a_client_setting_librdkafka_rejects_names_its_key() {
        let base = [("application.id", "app"), ("bootstrap.servers", "b:1")];
        let fine = EngineConfig::from_properties(&props(&base)).unwrap();
        fine.check_client_settings()
            .expect("the defaults are valid");
        let mut bad = props(&base);
        bad.insert("producer.linger.ms".into(), "soon".into());
        let err = EngineConfig::from_properties(&bad)
            .unwrap()
            .check_client_settings()
            .unwrap_err();
        assert!(
            matches!(&err, Error::Config { key, .. } if key == "linger.ms"),
            "{err}"
        );
    }

    #[test]
    fn the_restore_consumer_waits_briefly_for_a_fetch_that_finds_nothing_unless_the_user_says_otherwise(
    ) {
        let base = [("application.id", "app"), ("bootstrap.servers", "b:1")];
        let config = EngineConfig::from_properties(&props(&base)).unwrap();
        assert_eq!(
            config.restore_consumer_config(1).get("fetch.wait.max.ms"),
            Some("20")
        );
        assert_eq!(
            config.main_consumer_config(1).get("fetch.wait.max.ms"),
            None
        );
        let mut set = props(&base);
        set.insert("restore.consumer.fetch.max.wait.ms".into(), "400".into());
        let config = EngineConfig::from_properties(&set).unwrap();
        assert_eq!(
            config.restore_consumer_config(1).get("fetch.wait.max.ms"),
            Some("400")
        );
    }

    #[test]
    fn global_consumer_settings_reach_the_global_consumer_only_and_win_over_consumer_ones() {
        let config = EngineConfig::from_properties(&props(&[
            ("application.id", "app"),
            ("bootstrap.servers", "b:1"),
            ("consumer.fetch.min.bytes", "10"),
            ("global.consumer.fetch.min.bytes", "20"),
            ("global.consumer.fetch.wait.max.ms", "300"),
        ]))
        .unwrap();
        let global = config.global_consumer_config();
        assert_eq!(global.get("fetch.min.bytes"), Some("20"));
        assert_eq!(global.get("fetch.wait.max.ms"), Some("300"));
        let main = config.main_consumer_config(1);
        assert_eq!(main.get("fetch.min.bytes"), Some("10"));
        assert_eq!(main.get("fetch.wait.max.ms"), None);
    }

    #[test]
    fn the_main_consumer_queues_less_ahead_than_librdkafka_would_unless_the_user_says_otherwise() {
        let base = [("application.id", "app"), ("bootstrap.servers", "b:1")];
        let config = EngineConfig::from_properties(&props(&base)).unwrap();
        let main = config.main_consumer_config(1);
        assert_eq!(main.get("queued.min.messages"), Some("10000"));
        assert_eq!(main.get("queued.max.messages.kbytes"), Some("512"));
        assert_eq!(main.get("fetch.queue.backoff.ms"), Some("10"));
        assert_eq!(
            config.restore_consumer_config(1).get("queued.min.messages"),
            None
        );
        let mut set = props(&base);
        set.insert(
            "main.consumer.queued.max.messages.kbytes".into(),
            "65536".into(),
        );
        set.insert("consumer.queued.min.messages".into(), "100000".into());
        let main = EngineConfig::from_properties(&set)
            .unwrap()
            .main_consumer_config(1);
        assert_eq!(main.get("queued.max.messages.kbytes"), Some("65536"));
        assert_eq!(main.get("queued.min.messages"), Some("100000"));
    }

    #[test]
    fn the_producer_lingers_5_ms_unless_the_user_says_otherwise() {
        let base = [("application.id", "app"), ("bootstrap.servers", "b:1")];
        let config = EngineConfig::from_properties(&props(&base)).unwrap();
        assert_eq!(config.producer_config(1, None).get("linger.ms"), Some("5"));
        let mut set = props(&base);
        set.insert("producer.linger.ms".into(), "100".into());
        let config = EngineConfig::from_properties(&set).unwrap();
        assert_eq!(
            config.producer_config(1, None).get("linger.ms"),
            Some("100")
        );
    }

    #[test]
    fn the_producer_holds_32_mib_unsent_unless_buffer_memory_says_otherwise() {
        let base = [("application.id", "app"), ("bootstrap.servers", "b:1")];
        let config = EngineConfig::from_properties(&props(&base)).unwrap();
        assert_eq!(
            config
                .producer_config(1, None)
                .get("queue.buffering.max.kbytes"),
            Some("32768")
        );
        let mut set = props(&base);
        set.insert("producer.buffer.memory".into(), "67108864".into());
        let config = EngineConfig::from_properties(&set).unwrap();
        assert_eq!(
            config
                .producer_config(1, None)
                .get("queue.buffering.max.kbytes"),
            Some("65536")
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        let err =
            EngineConfig::from_properties(&props(&[("bootstrap.servers", "b:1")])).unwrap_err();
        assert!(matches!(err, Error::Config { key, .. } if key == "application.id"));
        let err = EngineConfig::from_properties(&props(&[
            ("application.id", "app"),
            ("bootstrap.servers", "b:1"),
            ("commit.interval.ms", "soon"),
        ]))
        .unwrap_err();
        assert!(matches!(err, Error::Config { key, .. } if key == "commit.interval.ms"));
        let err = EngineConfig::from_properties(&props(&[
            ("application.id", "app"),
            ("bootstrap.servers", "b:1"),
            ("repartition.purge.interval.ms", "-1"),
        ]))
        .unwrap_err();
        assert!(matches!(err, Error::Config { key, .. } if key == "repartition.purge.interval.ms"));
    }
}
