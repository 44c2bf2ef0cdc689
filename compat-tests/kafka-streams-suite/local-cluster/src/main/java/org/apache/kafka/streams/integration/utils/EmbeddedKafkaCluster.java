package org.apache.kafka.streams.integration.utils;

import dev.sluice.streams.testing.broker.BrokerOptions;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.server.util.MockTime;

/**
 * The cluster of Kafka Streams' published integration tests, served by Sluice's local broker: a
 * single-node KRaft Apache Kafka 4.4.0 in a JVM of its own. The tests build a cluster with a number of
 * brokers and broker settings and use it for topics, clients, group settings and a shared clock; this
 * class has the public API they call and is written for the harness, not taken from Kafka. It goes
 * before the integration test jar on the class path, so the tests run unchanged against the local
 * broker instead of the brokers their own utility starts inside the test JVM.
 *
 * <p>One broker holds one replica: a test that asks for more replicas, or for settings only several
 * brokers can have, gets an exception whose message starts with {@link #NOT_RUNNABLE}, which the
 * harness reports as not runnable rather than as a failure.
 */
public class EmbeddedKafkaCluster {

    /** Starts the message of every exception that means "needs what a single local broker cannot be". */
    public static final String NOT_RUNNABLE = "[not runnable on the single-node local broker]";

    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration READINESS_TIMEOUT = Duration.ofMinutes(2);

    private final int numBrokers;
    private final Map<String, String> serverProperties;
    private LocalKafkaBroker broker;

    /** The tests' clock: they take timestamps and advance time from it. */
    public final MockTime time;

    public EmbeddedKafkaCluster(final int numBrokers) {
        this(numBrokers, new Properties());
    }

    public EmbeddedKafkaCluster(final int numBrokers, final Properties brokerConfig) {
        this(numBrokers, brokerConfig, Map.of());
    }

    public EmbeddedKafkaCluster(final int numBrokers, final Properties brokerConfig, final long mockTimeMillisStart) {
        this(numBrokers, brokerConfig, Map.of(), mockTimeMillisStart, System.nanoTime());
    }

    public EmbeddedKafkaCluster(final int numBrokers, final Properties brokerConfig,
                                final Map<Integer, Map<String, String>> brokerConfigOverrides) {
        this(numBrokers, brokerConfig, brokerConfigOverrides, System.currentTimeMillis(), System.nanoTime());
    }

    public EmbeddedKafkaCluster(final int numBrokers, final Properties brokerConfig,
                                final Map<Integer, Map<String, String>> brokerConfigOverrides,
                                final long mockTimeMillisStart, final long mockTimeNanoStart) {
        this.numBrokers = numBrokers;
        this.serverProperties = serverProperties(brokerConfig, brokerConfigOverrides);
        this.time = new MockTime(mockTimeMillisStart, mockTimeNanoStart);
    }

    /**
     * The settings the published utility gives every cluster (the tests are tuned for them), then the
     * test's own. Values may be numbers, booleans or passwords; the broker reads their text.
     */
    private static Map<String, String> serverProperties(final Properties brokerConfig,
                                                        final Map<Integer, Map<String, String>> perBroker) {
        final Map<String, String> properties = new HashMap<>(Map.ofEntries(
            Map.entry("log.cleaner.dedupe.buffer.size", Long.toString(2 * 1024 * 1024L)),
            Map.entry("group.streams.min.session.timeout.ms", "100"),
            Map.entry("group.streams.min.heartbeat.interval.ms", "100"),
            Map.entry("group.min.session.timeout.ms", "0"),
            Map.entry("group.initial.rebalance.delay.ms", "0"),
            Map.entry("offsets.topic.num.partitions", "5"),
            Map.entry("offsets.topic.replication.factor", "1"),
            Map.entry("transaction.state.log.num.partitions", "5"),
            Map.entry("transaction.state.log.replication.factor", "1"),
            Map.entry("auto.create.topics.enable", "true"),
            Map.entry("delete.topic.enable", "true")));
        brokerConfig.forEach((key, value) -> properties.put(key.toString(), text(value)));
        if (new HashSet<>(perBroker.values()).size() > 1) {
            throw new IllegalArgumentException(NOT_RUNNABLE + " brokers with different settings: " + perBroker);
        }
        perBroker.values().stream().findFirst().ifPresent(properties::putAll);
        return properties;
    }

    private static String text(final Object value) {
        return value instanceof org.apache.kafka.common.config.types.Password password ? password.value()
            : String.valueOf(value);
    }

    public void start() {
        BrokerOptions options = BrokerOptions.defaults();
        try {
            for (final Map.Entry<String, String> setting : serverProperties.entrySet()) {
                options = options.withServerProperty(setting.getKey(), setting.getValue());
            }
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException(NOT_RUNNABLE + " " + e.getMessage(), e);
        }
        broker = new LocalKafkaBroker(options);
        broker.start();
        verifyClusterReadiness();
    }

    /**
     * Creates a topic, writes to it and reads it back through a consumer group, then removes both: the
     * group coordinator and the offsets topic are ready before the first test.
     */
    public void verifyClusterReadiness() {
        final String suffix = UUID.randomUUID().toString();
        final String topic = "readiness-" + suffix;
        final String group = "readiness-" + suffix;
        createTopic(topic);
        produce(new HashMap<>(clientDefaultConfig()), topic, null, "key", "value");
        try (KafkaConsumer<byte[], byte[]> consumer = createConsumerAndSubscribeTo(
            Map.of(ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic"), topic)) {
            final long deadline = System.nanoTime() + READINESS_TIMEOUT.toNanos();
            while (consumer.poll(Duration.ofMillis(500)).isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the local broker did not serve a consumer group within " + READINESS_TIMEOUT);
                }
            }
        }
        try (Admin admin = createAdminClient()) {
            admin.deleteConsumerGroups(List.of(group)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            admin.deleteTopics(List.of(topic)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final InterruptedException | ExecutionException | TimeoutException e) {
            throw new AssertionError("could not remove the readiness check's topic and group", e);
        }
    }

    public void stop() {
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }

    public String bootstrapServers() {
        if (broker == null) {
            throw new IllegalStateException("the cluster is not started");
        }
        return broker.bootstrapServers();
    }

    /** The local broker listens in plain text only; settings asking for TLS are refused when it starts. */
    public boolean sslEnabled() {
        return false;
    }

    public void createTopics(final String... topics) throws InterruptedException {
        for (final String topic : topics) {
            createTopic(topic, 1, 1, Map.of());
        }
    }

    public void createTopic(final String topic) {
        createTopic(topic, 1);
    }

    public void createTopic(final String topic, final int partitions) {
        createTopic(topic, partitions, 1, Map.of());
    }

    public void createTopic(final String topic, final int partitions, final int replication) throws InterruptedException {
        createTopic(topic, partitions, replication, Map.of());
    }

    /** Creates the topic and waits until it is listed; a topic that exists already is left as it is. */
    public void createTopic(final String topic, final int partitions, final int replication,
                            final Map<String, String> topicConfig) {
        if (replication > 1) {
            throw new InvalidReplicationFactorException(NOT_RUNNABLE + " topic " + topic + " asks for "
                + replication + " replicas (the test's cluster has " + numBrokers + " brokers)");
        }
        final NewTopic newTopic = new NewTopic(topic, partitions, (short) replication).configs(topicConfig);
        try (Admin admin = createAdminClient()) {
            admin.createTopics(List.of(newTopic)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            final long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
            while (!admin.listTopics().names().get().contains(topic)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("topic " + topic + " was not listed within " + ADMIN_TIMEOUT);
                }
                Thread.sleep(50);
            }
        } catch (final ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new RuntimeException(e);
            }
        } catch (final InterruptedException | TimeoutException e) {
            throw new RuntimeException(e);
        }
    }

    public void deleteTopics(final String... topics) {
        for (final String topic : topics) {
            deleteTopic(topic);
        }
    }

    public void deleteTopic(final String topic) {
        deleteQuietlyIfMissing(List.of(topic));
    }

    /** Deletes every topic but the broker's internal ones. */
    public void deleteAllTopics() {
        try (Admin admin = createAdminClient()) {
            deleteQuietlyIfMissing(admin.listTopics().names().get());
        } catch (final InterruptedException | ExecutionException e) {
            throw new RuntimeException(e);
        }
    }

    private void deleteQuietlyIfMissing(final Collection<String> topics) {
        try (Admin admin = createAdminClient()) {
            admin.deleteTopics(topics).all().get();
        } catch (final InterruptedException | ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw new RuntimeException(e);
            }
        }
    }

    public void produce(final Map<String, Object> producerProps, final String topic, final Integer partition,
                        final String key, final String value) {
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
            final ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition,
                key == null ? null : key.getBytes(), value == null ? null : value.getBytes());
            producer.send(record).get(2, TimeUnit.MINUTES);
            producer.flush();
        } catch (final InterruptedException | ExecutionException | TimeoutException e) {
            throw new KafkaException("could not produce to " + topic, e);
        }
    }

    public Admin createAdminClient() {
        final Properties properties = new Properties();
        properties.putAll(clientDefaultConfig());
        return Admin.create(properties);
    }

    public Map<String, String> clientDefaultConfig() {
        final Map<String, String> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return config;
    }

    /** A byte-array consumer with its own group, no auto-commit, reading from the start unless told otherwise. */
    public KafkaConsumer<byte[], byte[]> createConsumer(final Map<String, Object> consumerProps) {
        final Map<String, Object> config = new HashMap<>(clientDefaultConfig());
        config.putAll(consumerProps);
        config.putIfAbsent(ConsumerConfig.GROUP_ID_CONFIG, UUID.randomUUID().toString());
        config.putIfAbsent(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        config.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.putIfAbsent(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.putIfAbsent(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        try {
            return new KafkaConsumer<>(config);
        } catch (final RuntimeException e) {
            throw new KafkaException("could not create a consumer", e);
        }
    }

    public KafkaConsumer<byte[], byte[]> createConsumerAndSubscribeTo(final Map<String, Object> consumerProps,
                                                                      final String... topics) {
        return createConsumerAndSubscribeTo(consumerProps, null, topics);
    }

    public KafkaConsumer<byte[], byte[]> createConsumerAndSubscribeTo(final Map<String, Object> consumerProps,
                                                                      final ConsumerRebalanceListener listener,
                                                                      final String... topics) {
        final KafkaConsumer<byte[], byte[]> consumer = createConsumer(consumerProps);
        if (listener == null) {
            consumer.subscribe(Arrays.asList(topics));
        } else {
            consumer.subscribe(Arrays.asList(topics), listener);
        }
        return consumer;
    }

    /** Waits until the cluster's topics, internal ones included, are exactly the given ones. */
    public void waitForRemainingTopics(final long timeoutMs, final String... topics) throws InterruptedException {
        final Set<String> expected = Set.of(topics);
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!getAllTopicsInCluster().equals(expected)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Topics are not expected after " + timeoutMs + " milliseconds.");
            }
            Thread.sleep(100);
        }
    }

    public Set<String> getAllTopicsInCluster() {
        try (Admin admin = createAdminClient()) {
            return admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get();
        } catch (final InterruptedException | ExecutionException e) {
            throw new RuntimeException(e);
        }
    }

    /** The topic's settings that were set on the topic itself. */
    public Properties getLogConfig(final String topic) {
        final ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = createAdminClient()) {
            final Config config = admin.describeConfigs(List.of(resource)).values().get(resource).get();
            final Properties properties = new Properties();
            for (final ConfigEntry entry : config.entries()) {
                if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
                    properties.put(entry.name(), entry.value());
                }
            }
            return properties;
        } catch (final InterruptedException | ExecutionException e) {
            throw new RuntimeException(e);
        }
    }

    public void setGroupSessionTimeout(final String groupId, final int sessionTimeoutMs) {
        setGroupConfig(groupId, "streams.session.timeout.ms", sessionTimeoutMs);
    }

    public void setGroupHeartbeatTimeout(final String groupId, final int heartbeatTimeoutMs) {
        setGroupConfig(groupId, "streams.heartbeat.interval.ms", heartbeatTimeoutMs);
    }

    public void setGroupStandbyReplicas(final String groupId, final int numStandbyReplicas) {
        setGroupConfig(groupId, "streams.num.standby.replicas", numStandbyReplicas);
    }

    public void setGroupStreamsInitialRebalanceDelay(final String groupId, final int initialRebalanceDelayMs) {
        setGroupConfig(groupId, "streams.initial.rebalance.delay.ms", initialRebalanceDelayMs);
    }

    private void setGroupConfig(final String groupId, final String key, final int value) {
        final AlterConfigOp set = new AlterConfigOp(new ConfigEntry(key, Integer.toString(value)), AlterConfigOp.OpType.SET);
        try (Admin admin = createAdminClient()) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, groupId), List.of(set)))
                .all().get();
        } catch (final InterruptedException | ExecutionException e) {
            throw new RuntimeException(e);
        }
    }
}
