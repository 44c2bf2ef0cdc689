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
//! `range` assignor, `read_committed` under exactly-once …); a user override wins.

use std::collections::BTreeMap;

use rdkafka::ClientConfig;

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
        let all_prefixes = [
            ClientRole::MainConsumer,
            ClientRole::RestoreConsumer,
            ClientRole::GlobalConsumer,
            ClientRole::Producer,
            ClientRole::Admin,
        ]
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

    /// The configuration of a `role` client: `defaults` first, then the user's overrides.
    pub fn client_config(&self, role: ClientRole, defaults: &[(&str, String)]) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.bootstrap_servers);
        for (key, value) in defaults {
            config.set(*key, value);
        }
        for prefix in role.prefixes() {
            for (key, value) in &self.prefixed {
                if let Some(stripped) = key.strip_prefix(prefix) {
                    // `consumer.` must not also match `main.consumer.`/`restore.consumer.`
                    // keys; strip_prefix anchors at the start, so it does not.
                    config.set(stripped, value);
                }
            }
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
}
