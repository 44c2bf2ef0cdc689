//! librdkafka settings per client role.
//!
//! Kafka Streams lets users tune its clients through prefixed keys; the same prefixes work
//! here and are passed to librdkafka unchanged (most client keys mean the same in both):
//!
//! | prefix | applies to |
//! |---|---|
//! | `consumer.` | the main and the restore consumer |
//! | `main.consumer.` | the group consumer that reads sources (wins over `consumer.`) |
//! | `restore.consumer.` | the changelog reader (wins over `consumer.`) |
//! | `global.consumer.` | the global stores' consumer (wins over `consumer.`) |
//! | `producer.` | the producer |
//! | `admin.` | the admin client |
//!
//! Each role starts from the defaults Kafka Streams imposes on it (no auto-commit, the
//! `range` assignor, `read_committed` under exactly-once …); a user override wins, except
//! for the settings Kafka Streams does not let users change (group id, offset commits,
//! assignor, transactional id), which it ignores as Kafka Streams does.
//!
//! The keys are the Java clients' (what a Kafka Streams application sets). Most mean the same
//! to librdkafka; the few it names differently are renamed (`buffer.memory` also from bytes
//! to KiB), and those it has no counterpart
//! for (`max.poll.records`, `key.deserializer`, `interceptor.classes` …) are left out, the way
//! Kafka's own clients ignore keys they do not use. A whole number beyond the range librdkafka
//! allows for its key is taken as the nearest bound: Java's clients take any `int` (an
//! application may set `Integer.MAX_VALUE` to mean "never"), and the broker's own limits still
//! apply. Any other value librdkafka rejects still fails the client's creation, naming the key.

use std::collections::BTreeMap;

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaConfRes;
use rdkafka::ClientConfig;

/// Java client keys that librdkafka names differently: (Java, librdkafka).
const RENAMED_KEYS: &[(&str, &str)] = &[
    ("fetch.max.wait.ms", "fetch.wait.max.ms"),
    ("receive.buffer.bytes", "socket.receive.buffer.bytes"),
    ("send.buffer.bytes", "socket.send.buffer.bytes"),
];

/// Java client keys that librdkafka takes in other units under its own name: (Java key,
/// librdkafka key, Java units per librdkafka unit).
const SCALED_KEYS: &[(&str, &str, u64)] = &[
    // The bytes Java's producer holds unsent; librdkafka bounds its queue in KiB.
    ("buffer.memory", "queue.buffering.max.kbytes", 1024),
];

/// Which client a configuration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientRole {
    /// The group consumer reading source and repartition topics.
    MainConsumer,
    /// The consumer reading changelogs during restore.
    RestoreConsumer,
    /// The consumer loading and updating global stores.
    GlobalConsumer,
    /// The producer writing sinks, repartition topics and changelogs.
    Producer,
    /// The admin client.
    Admin,
}

const ROLES: [ClientRole; 5] = [
    ClientRole::MainConsumer,
    ClientRole::RestoreConsumer,
    ClientRole::GlobalConsumer,
    ClientRole::Producer,
    ClientRole::Admin,
];

impl ClientRole {
    fn prefixes(self) -> &'static [&'static str] {
        match self {
            ClientRole::MainConsumer => &["consumer.", "main.consumer."],
            ClientRole::RestoreConsumer => &["consumer.", "restore.consumer."],
            ClientRole::GlobalConsumer => &["consumer.", "global.consumer."],
            ClientRole::Producer => &["producer."],
            ClientRole::Admin => &["admin."],
        }
    }

    /// What Kafka Streams sets on this client whatever the user asks: the group and its
    /// commits belong to the application, and the assignment and transactions to the runtime.
    fn enforced_keys(self) -> &'static [&'static str] {
        match self {
            ClientRole::MainConsumer => &[
                "group.id",
                "enable.auto.commit",
                "enable.auto.offset.store",
                "partition.assignment.strategy",
            ],
            ClientRole::RestoreConsumer | ClientRole::GlobalConsumer => &[
                "group.id",
                "enable.auto.commit",
                "partition.assignment.strategy",
            ],
            ClientRole::Producer => &["transactional.id"],
            ClientRole::Admin => &[],
        }
    }
}

/// `key = value` of a Java client as librdkafka takes it, or `None` when librdkafka has
/// no such setting.
fn librdkafka_setting(key: &str, value: &str) -> Option<(String, String)> {
    if let Some((_, native, per_unit)) = SCALED_KEYS.iter().find(|(java, ..)| *java == key) {
        // A value that is not a whole number goes as it is, for librdkafka to reject by name.
        let scaled = value.trim().parse::<u64>().map_or_else(
            |_| value.to_string(),
            |amount| amount.div_ceil(*per_unit).max(1).to_string(),
        );
        return librdkafka_setting(native, &scaled);
    }
    let key = RENAMED_KEYS
        .iter()
        .find(|(java, _)| *java == key)
        .map_or(key, |(_, native)| native);
    // Java's "fail when there is no committed offset" is librdkafka's "error". Java's
    // "by_duration:<ISO-8601 duration>" has no librdkafka counterpart: each source topic's
    // policy reaches the engine with the topology, which moves a partition without a committed
    // offset by duration itself; out of range, librdkafka starts from the log's start.
    let value = match (key, value) {
        ("auto.offset.reset", "none") => "error",
        ("auto.offset.reset", by_duration) if by_duration.starts_with("by_duration:") => "earliest",
        _ => value,
    };
    let mut probe = ClientConfig::new();
    probe.set(key, value);
    let value = match probe.create_native_config() {
        Err(KafkaError::ClientConfig(RDKafkaConfRes::RD_KAFKA_CONF_UNKNOWN, ..)) => return None,
        Err(KafkaError::ClientConfig(RDKafkaConfRes::RD_KAFKA_CONF_INVALID, reason, ..)) => {
            nearest_in_range(value, &reason).unwrap_or_else(|| value.to_string())
        }
        _ => value.to_string(),
    };
    Some((key.to_string(), within_microsecond_clock(key, value)))
}

/// Timeouts librdkafka keeps as an `int` of milliseconds and turns into microseconds in `int`
/// arithmetic, so that beyond [`MICROSECOND_CLOCK_LIMIT_MS`] (about 35 minutes) the product
/// overflows, though librdkafka accepts values up to an hour or a day. A session timeout that
/// overflowed makes a consumer find its session expired at every check: it drops its
/// assignment as lost, rebalance after rebalance, and never processes.
const ON_THE_MICROSECOND_CLOCK: &[&str] = &[
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "metadata.max.age.ms",
    "topic.metadata.propagation.max.ms",
    "reconnect.backoff.max.ms",
];

/// The longest of those timeouts librdkafka computes with correctly.
const MICROSECOND_CLOCK_LIMIT_MS: i64 = i32::MAX as i64 / 1000;

/// `value` of `key`, lowered to [`MICROSECOND_CLOCK_LIMIT_MS`] when `key` is one of the
/// timeouts [`ON_THE_MICROSECOND_CLOCK`] and `value` is beyond it.
fn within_microsecond_clock(key: &str, value: String) -> String {
    match value.trim().parse::<i64>() {
        Ok(millis)
            if millis > MICROSECOND_CLOCK_LIMIT_MS && ON_THE_MICROSECOND_CLOCK.contains(&key) =>
        {
            MICROSECOND_CLOCK_LIMIT_MS.to_string()
        }
        _ => value,
    }
}

/// librdkafka refuses a consumer whose `max.poll.interval.ms` is shorter than its
/// `session.timeout.ms`, which Java's consumer takes: the poll interval is raised to the session
/// timeout (the engine polls far more often than either).
fn poll_interval_at_least_session_timeout(config: &mut ClientConfig) {
    let millis = |key: &str, default: i64| {
        config
            .get(key)
            .and_then(|value| value.trim().parse::<i64>().ok())
            .unwrap_or(default)
    };
    let session_timeout = millis("session.timeout.ms", LIBRDKAFKA_SESSION_TIMEOUT_MS);
    if millis("max.poll.interval.ms", LIBRDKAFKA_MAX_POLL_INTERVAL_MS) < session_timeout {
        config.set("max.poll.interval.ms", session_timeout.to_string());
    }
}

/// librdkafka's defaults of the two consumer timeouts.
const LIBRDKAFKA_SESSION_TIMEOUT_MS: i64 = 45_000;
const LIBRDKAFKA_MAX_POLL_INTERVAL_MS: i64 = 300_000;

/// Java's producer, given a `linger.ms` and `request.timeout.ms` that add up to more than its
/// default delivery timeout, takes their sum as the delivery timeout (a delivery timeout the user
/// set is kept); librdkafka refuses a producer whose `message.timeout.ms` (its name for the
/// delivery timeout) is not above `linger.ms`. Without a delivery timeout of the user's, the
/// producer's is raised to the sum likewise.
fn delivery_timeout_covers_linger_and_request(config: &mut ClientConfig) {
    let user_set = ["message.timeout.ms", "delivery.timeout.ms"]
        .iter()
        .any(|key| config.get(key).is_some());
    if user_set {
        return;
    }
    let millis = |key: &str, default: i64| {
        config
            .get(key)
            .and_then(|value| value.trim().parse::<i64>().ok())
            .unwrap_or(default)
    };
    let needed = millis("linger.ms", LIBRDKAFKA_LINGER_MS)
        .saturating_add(millis("request.timeout.ms", LIBRDKAFKA_REQUEST_TIMEOUT_MS));
    if needed > LIBRDKAFKA_MESSAGE_TIMEOUT_MS {
        let bounded = needed.min(i64::from(i32::MAX));
        config.set("message.timeout.ms", bounded.to_string());
    }
}

/// librdkafka's defaults of the producer's timeouts.
const LIBRDKAFKA_LINGER_MS: i64 = 5;
const LIBRDKAFKA_REQUEST_TIMEOUT_MS: i64 = 30_000;
const LIBRDKAFKA_MESSAGE_TIMEOUT_MS: i64 = 300_000;

/// The bound nearest to `value` when librdkafka's rejection `reason` says a whole number is
/// outside its range ("... value 2147483647 is outside allowed range 1..3600000").
fn nearest_in_range(value: &str, reason: &str) -> Option<String> {
    let value: i64 = value.trim().parse().ok()?;
    let range = reason.split("outside allowed range ").nth(1)?;
    let (low, high) = range.trim().split_once("..")?;
    let (low, high): (i64, i64) = (low.parse().ok()?, high.trim_end_matches('.').parse().ok()?);
    Some(value.clamp(low, high).to_string())
}

/// The client settings of one engine instance: bootstrap servers and the user's prefixed
/// overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientProperties {
    bootstrap_servers: String,
    /// Every property whose key starts with one of the role prefixes, prefix included.
    prefixed: BTreeMap<String, String>,
}

impl ClientProperties {
    /// Settings for `bootstrap_servers`, keeping from `properties` the keys with a client
    /// prefix (see the module documentation).
    pub fn new(bootstrap_servers: &str, properties: &BTreeMap<String, String>) -> Self {
        let all_prefixes = ROLES
            .iter()
            .flat_map(|role| role.prefixes().iter())
            .collect::<Vec<_>>();
        let prefixed = properties
            .iter()
            .filter(|(key, _)| all_prefixes.iter().any(|p| key.starts_with(*p)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        ClientProperties {
            bootstrap_servers: bootstrap_servers.to_string(),
            prefixed,
        }
    }

    /// The user's override of `key` for `role`, if any (the most specific prefix wins).
    pub fn user_value(&self, role: ClientRole, key: &str) -> Option<&str> {
        role.prefixes()
            .iter()
            .rev()
            .find_map(|prefix| self.prefixed.get(&format!("{prefix}{key}")))
            .map(String::as_str)
    }

    /// The user's settings librdkafka takes as another value (a number beyond its range, see
    /// the module documentation): each prefixed key with the value the engine's clients use.
    pub fn adjusted_settings(&self) -> BTreeMap<String, String> {
        let mut adjusted = BTreeMap::new();
        for (prefixed, value) in &self.prefixed {
            let Some(key) = ROLES
                .iter()
                .flat_map(|role| role.prefixes())
                .filter_map(|prefix| prefixed.strip_prefix(prefix))
                .min_by_key(|key| key.len())
            else {
                continue;
            };
            if key == "auto.offset.reset" {
                continue;
            }
            match librdkafka_setting(key, value) {
                Some((_, used)) if used != *value => {
                    adjusted.insert(prefixed.clone(), used);
                }
                _ => {}
            }
        }
        adjusted
    }

    /// The configuration of a `role` client: `defaults` first, then the user's overrides
    /// (see the module documentation for which are taken and how).
    pub fn client_config(&self, role: ClientRole, defaults: &[(&str, String)]) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.bootstrap_servers);
        for (key, value) in defaults {
            config.set(*key, value);
        }
        for prefix in role.prefixes() {
            for (key, value) in &self.prefixed {
                // `consumer.` must not also match `main.consumer.`/`restore.consumer.`
                // keys; strip_prefix anchors at the start, so it does not.
                let Some(stripped) = key.strip_prefix(prefix) else {
                    continue;
                };
                if role.enforced_keys().contains(&stripped) {
                    continue;
                }
                if let Some((key, value)) = librdkafka_setting(stripped, value) {
                    config.set(key, value);
                }
            }
        }
        match role {
            ClientRole::Producer => delivery_timeout_covers_linger_and_request(&mut config),
            ClientRole::Admin => {}
            _ => poll_interval_at_least_session_timeout(&mut config),
        }
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specific_prefix_wins_and_roles_stay_apart() {
        let props: BTreeMap<String, String> = [
            ("consumer.session.timeout.ms", "10000"),
            ("main.consumer.session.timeout.ms", "7000"),
            ("producer.linger.ms", "20"),
            ("num.stream.threads", "2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let client = ClientProperties::new("b:9092", &props);
        let main = client.client_config(ClientRole::MainConsumer, &[]);
        assert_eq!(main.get("session.timeout.ms"), Some("7000"));
        assert_eq!(main.get("linger.ms"), None);
        let restore = client.client_config(ClientRole::RestoreConsumer, &[]);
        assert_eq!(restore.get("session.timeout.ms"), Some("10000"));
        let producer = client.client_config(ClientRole::Producer, &[("linger.ms", "5".into())]);
        assert_eq!(producer.get("linger.ms"), Some("20"));
        assert_eq!(producer.get("num.stream.threads"), None);
        assert_eq!(
            client.user_value(ClientRole::MainConsumer, "session.timeout.ms"),
            Some("7000")
        );
    }

    fn configured(
        role: ClientRole,
        user: &[(&str, &str)],
        defaults: &[(&str, String)],
    ) -> ClientConfig {
        clients(user).client_config(role, defaults)
    }

    /// The client settings of an instance whose application sets `user`.
    fn clients(user: &[(&str, &str)]) -> ClientProperties {
        let props: BTreeMap<String, String> = user
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ClientProperties::new("b:9092", &props)
    }

    #[test]
    fn java_client_keys_are_renamed_translated_or_left_out() {
        let main = configured(
            ClientRole::MainConsumer,
            &[
                ("consumer.max.poll.records", "1"),
                ("consumer.key.deserializer", "org.example.Deserializer"),
                ("consumer.fetch.max.wait.ms", "50"),
                ("consumer.receive.buffer.bytes", "65536"),
                ("consumer.auto.offset.reset", "none"),
                ("consumer.max.poll.interval.ms", "60000"),
            ],
            &[],
        );
        assert_eq!(main.get("max.poll.records"), None);
        assert_eq!(main.get("key.deserializer"), None);
        assert_eq!(main.get("fetch.max.wait.ms"), None);
        assert_eq!(main.get("fetch.wait.max.ms"), Some("50"));
        assert_eq!(main.get("socket.receive.buffer.bytes"), Some("65536"));
        assert_eq!(main.get("auto.offset.reset"), Some("error"));
        assert_eq!(main.get("max.poll.interval.ms"), Some("60000"));
        main.create_native_config()
            .expect("every setting kept is one librdkafka takes");
        let by_duration = configured(
            ClientRole::MainConsumer,
            &[("consumer.auto.offset.reset", "by_duration:PT6H")],
            &[],
        );
        assert_eq!(by_duration.get("auto.offset.reset"), Some("earliest"));
        let producer = configured(
            ClientRole::Producer,
            &[("producer.buffer.memory", "1048577")],
            &[],
        );
        assert_eq!(producer.get("buffer.memory"), None);
        assert_eq!(producer.get("queue.buffering.max.kbytes"), Some("1025"));
        producer
            .create_native_config()
            .expect("a producer bounded by buffer.memory");
        let tiny = configured(
            ClientRole::Producer,
            &[("producer.buffer.memory", "1")],
            &[],
        );
        assert_eq!(tiny.get("queue.buffering.max.kbytes"), Some("1"));
    }

    #[test]
    fn settings_kafka_streams_enforces_keep_their_defaults() {
        let main = configured(
            ClientRole::MainConsumer,
            &[
                ("consumer.enable.auto.commit", "true"),
                ("consumer.group.id", "someone-else"),
                (
                    "consumer.partition.assignment.strategy",
                    "org.example.Assignor",
                ),
            ],
            &[
                ("group.id", "app".into()),
                ("enable.auto.commit", "false".into()),
                ("partition.assignment.strategy", "range".into()),
            ],
        );
        assert_eq!(main.get("group.id"), Some("app"));
        assert_eq!(main.get("enable.auto.commit"), Some("false"));
        assert_eq!(main.get("partition.assignment.strategy"), Some("range"));
        let producer = configured(
            ClientRole::Producer,
            &[("producer.transactional.id", "mine")],
            &[("transactional.id", "app-1".into())],
        );
        assert_eq!(producer.get("transactional.id"), Some("app-1"));
    }

    #[test]
    fn a_number_beyond_librdkafkas_range_is_taken_as_its_bound_and_reported() {
        let clients = clients(&[
            ("consumer.session.timeout.ms", "2147483647"),
            ("main.consumer.max.poll.interval.ms", "2147483647"),
            ("producer.linger.ms", "20"),
        ]);
        let main = clients.client_config(ClientRole::MainConsumer, &[]);
        // librdkafka takes up to an hour, but overflows its microsecond clock beyond 2147483.
        assert_eq!(main.get("session.timeout.ms"), Some("2147483"));
        assert_eq!(main.get("max.poll.interval.ms"), Some("86400000"));
        main.create_native_config().expect("bounds are valid");
        // A session timeout beyond the poll interval raises the poll interval.
        let restore = clients.client_config(ClientRole::RestoreConsumer, &[]);
        assert_eq!(restore.get("max.poll.interval.ms"), Some("2147483"));
        restore
            .create::<rdkafka::consumer::BaseConsumer>()
            .expect("librdkafka takes the consumer");
        assert_eq!(
            clients.adjusted_settings(),
            BTreeMap::from([
                (
                    "consumer.session.timeout.ms".to_string(),
                    "2147483".to_string()
                ),
                (
                    "main.consumer.max.poll.interval.ms".to_string(),
                    "86400000".to_string()
                ),
            ])
        );
    }

    #[test]
    fn a_timeout_librdkafka_takes_but_would_overflow_in_microseconds_is_lowered() {
        let clients = clients(&[
            ("consumer.session.timeout.ms", "2400000"),
            ("consumer.heartbeat.interval.ms", "2147483"),
            ("admin.metadata.max.age.ms", "86400000"),
            ("producer.message.timeout.ms", "2400000"),
        ]);
        let main = clients.client_config(ClientRole::MainConsumer, &[]);
        assert_eq!(main.get("session.timeout.ms"), Some("2147483"));
        assert_eq!(main.get("heartbeat.interval.ms"), Some("2147483"));
        let admin = clients.client_config(ClientRole::Admin, &[]);
        assert_eq!(admin.get("metadata.max.age.ms"), Some("2147483"));
        let producer = clients.client_config(ClientRole::Producer, &[]);
        assert_eq!(
            producer.get("message.timeout.ms"),
            Some("2400000"),
            "librdkafka counts this one in 64 bits"
        );
        assert_eq!(
            clients.adjusted_settings().into_keys().collect::<Vec<_>>(),
            ["admin.metadata.max.age.ms", "consumer.session.timeout.ms"]
        );
    }

    #[test]
    fn a_linger_beyond_the_delivery_timeout_raises_it_unless_the_user_set_it() {
        // Kafka Streams' own test of records too large sets a five-minute linger.
        let lingering = clients(&[("producer.linger.ms", "300000")]);
        let producer = lingering.client_config(ClientRole::Producer, &[("linger.ms", "5".into())]);
        assert_eq!(producer.get("message.timeout.ms"), Some("330000"));
        producer
            .create::<rdkafka::producer::BaseProducer>()
            .expect("librdkafka takes the producer");

        let short = clients(&[("producer.linger.ms", "20")]);
        let producer = short.client_config(ClientRole::Producer, &[]);
        assert_eq!(
            producer.get("message.timeout.ms"),
            None,
            "librdkafka's default covers it"
        );

        let user_set = clients(&[
            ("producer.linger.ms", "300000"),
            ("producer.delivery.timeout.ms", "400000"),
        ]);
        let producer = user_set.client_config(ClientRole::Producer, &[]);
        assert_eq!(producer.get("message.timeout.ms"), None);
        assert_eq!(producer.get("delivery.timeout.ms"), Some("400000"));
    }

    #[test]
    fn a_value_librdkafka_rejects_still_fails_the_client() {
        let main = configured(
            ClientRole::MainConsumer,
            &[("consumer.session.timeout.ms", "soon")],
            &[],
        );
        assert_eq!(main.get("session.timeout.ms"), Some("soon"));
        let error = main
            .create_native_config()
            .err()
            .expect("an invalid value is an error");
        assert!(error.to_string().contains("session.timeout.ms"), "{error}");
    }
}
