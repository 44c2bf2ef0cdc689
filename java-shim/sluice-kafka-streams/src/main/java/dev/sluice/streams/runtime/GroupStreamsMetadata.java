package dev.sluice.streams.runtime;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds Kafka Streams' own {@link StreamsMetadataState} (which answers {@code metadataForAllStreamsClients},
 * {@code streamsMetadataForStore} and {@code queryMetadataForKey}) with the active partitions of every
 * instance of the application that has an {@code application.server} endpoint.
 *
 * <p>Kafka Streams' instances exchange their endpoints and the whole assignment through the subscription
 * and assignment data of its partition assignor. Sluice's engine threads are librdkafka group members,
 * whose protocol data cannot carry them, so the exchange has two halves. Each instance with an endpoint
 * keeps one record in the compacted topic {@code <application.id>-sluice-endpoints}: key its process id,
 * value its endpoint and the group member ids of its engine threads. The group, as the admin client
 * describes it, tells which member owns which partitions. A member whose instance is not known (yet) is
 * left out, as Kafka Streams leaves out hosts without an endpoint. The view is computed again after a
 * rebalance of this instance ({@link #markStale}) and, while some member is unknown or the group is
 * rebalancing, at most every {@value #INCOMPLETE_RETRY_MS} ms.
 *
 * <p>Without {@code application.server} nothing is exchanged and the metadata is empty, as in Kafka Streams.
 */
public final class GroupStreamsMetadata implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GroupStreamsMetadata.class);
    private static final String TOPIC_SUFFIX = "-sluice-endpoints";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final long INCOMPLETE_RETRY_MS = 200;

    private final StreamsMetadataState metadataState;
    private final HostInfo thisHost;
    private final Admin admin;
    private final StreamsConfig config;
    private final String applicationId;
    private final String processId;
    private final String clientId;
    private final Time time;
    private final String topic;
    private final Map<String, TopicDescription> describedTopics = new HashMap<>();
    /** This instance's engine threads, by name, with their group member ids; written on engine threads. */
    private final Map<String, String> localMembers = new ConcurrentHashMap<>();
    /** Every instance's endpoint and member ids, by process id, as its latest record says. */
    private final Map<String, Endpoint> instances = new HashMap<>();
    // Set up by start() before the engine runs, closed by close() after it stopped.
    private volatile Producer<byte[], byte[]> producer;
    private Consumer<byte[], byte[]> consumer;
    private volatile boolean stale = true;
    private boolean complete;
    private long computedMs;

    /** What one instance publishes: where it serves queries, and which group members are its threads. */
    private record Endpoint(HostInfo host, Set<String> memberIds) {

        byte[] serialize() {
            final StringBuilder text = new StringBuilder(host.host() + ":" + host.port());
            memberIds.forEach(id -> text.append('\n').append(id));
            return text.toString().getBytes(StandardCharsets.UTF_8);
        }

        static Endpoint deserialize(final byte[] bytes) {
            final List<String> lines = List.of(new String(bytes, StandardCharsets.UTF_8).split("\n"));
            return new Endpoint(HostInfo.buildFromEndpoint(lines.get(0)), Set.copyOf(lines.subList(1, lines.size())));
        }
    }

    public GroupStreamsMetadata(final StreamsMetadataState metadataState,
                                final HostInfo thisHost,
                                final Admin admin,
                                final StreamsConfig config,
                                final String processId,
                                final String clientId,
                                final Time time) {
        this.metadataState = metadataState;
        this.thisHost = thisHost;
        this.admin = admin;
        this.config = config;
        this.applicationId = config.getString(StreamsConfig.APPLICATION_ID_CONFIG);
        this.processId = processId;
        this.clientId = clientId;
        this.time = time;
        this.topic = applicationId + TOPIC_SUFFIX;
    }

    private boolean exchanging() {
        return !StreamsMetadataState.UNKNOWN_HOST.equals(thisHost);
    }

    /**
     * Creates the endpoints topic if it is missing and the clients that write and read it; nothing
     * without an endpoint. A failure leaves the metadata to this instance alone, with a warning.
     */
    public synchronized void start() {
        if (!exchanging()) {
            return;
        }
        try {
            createTopic();
            final Map<String, Object> producerConfigs = config.getProducerConfigs(clientId + "-endpoints-producer");
            producerConfigs.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
            producer = new KafkaProducer<>(producerConfigs, new ByteArraySerializer(), new ByteArraySerializer());
            final Map<String, Object> consumerConfigs = config.getRestoreConsumerConfigs(clientId + "-endpoints-consumer");
            consumerConfigs.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            consumer = new KafkaConsumer<>(consumerConfigs, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            consumer.assign(List.of(new TopicPartition(topic, 0)));
        } catch (final RuntimeException e) {
            LOG.warn("Could not set up the exchange of application.server endpoints through topic {}: the "
                + "streams metadata will list this instance only", topic, e);
            closeClients();
        }
    }

    private void createTopic() {
        final int replicationFactor = config.getInt(StreamsConfig.REPLICATION_FACTOR_CONFIG);
        final NewTopic newTopic = new NewTopic(topic, Optional.of(1),
            replicationFactor < 0 ? Optional.empty() : Optional.of((short) replicationFactor))
            .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
        try {
            admin.createTopics(List.of(newTopic)).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new StreamsException("Could not create topic " + topic, e.getCause());
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamsException("Interrupted while creating topic " + topic, e);
        } catch (final TimeoutException e) {
            throw new StreamsException("Could not create topic " + topic + " within " + TIMEOUT, e);
        }
    }

    /**
     * Engine thread {@code thread} is group member {@code memberId} since its last rebalance. Called on
     * the engine thread, in its rebalance: publishes without waiting, and never waits for a refresh.
     */
    public void memberJoined(final String thread, final String memberId) {
        stale = true;
        final Producer<byte[], byte[]> current = producer;
        synchronized (localMembers) {
            if (memberId.isEmpty() || memberId.equals(localMembers.put(thread, memberId)) || current == null) {
                return;
            }
            // The record names the current member ids only; the group tells which of them own partitions.
            final byte[] value = new Endpoint(thisHost, new HashSet<>(localMembers.values())).serialize();
            current.send(new ProducerRecord<>(topic, processId.getBytes(StandardCharsets.UTF_8), value), (metadata, error) -> {
                if (error != null) {
                    LOG.warn("Could not publish this instance's endpoint to topic {}", topic, error);
                }
            });
        }
    }

    /** The group may have changed: the next {@link #refresh} describes it again. */
    public void markStale() {
        stale = true;
    }

    /** Brings the metadata up to date with the group, if it may have changed since it was last computed. */
    public synchronized void refresh() {
        if (!exchanging()) {
            // Kafka Streams publishes no host when application.server is unset; neither does Sluice.
            onChange(Map.of(), Map.of());
            return;
        }
        final long nowMs = time.milliseconds();
        if (!stale && (complete || nowMs - computedMs < INCOMPLETE_RETRY_MS)) {
            return;
        }
        stale = false;
        computedMs = nowMs;
        final Map<String, HostInfo> hostOfMember = new HashMap<>();
        final Optional<ConsumerGroupDescription> group;
        try {
            if (consumer != null) {
                readEndpoints();
                instances.values().forEach(instance -> instance.memberIds().forEach(id -> hostOfMember.put(id, instance.host())));
            }
            group = describeGroup();
        } catch (final StreamsException e) {
            // As a stream thread whose rebalance has not completed: the last metadata stands until it does.
            LOG.warn("Could not bring the streams metadata up to date; it stays as it was", e);
            stale = true;
            return;
        }
        localMembers.values().forEach(id -> hostOfMember.put(id, thisHost));
        complete = group.isPresent() && group.get().groupState() == GroupState.STABLE;
        final Map<HostInfo, Set<TopicPartition>> activeByHost = new HashMap<>();
        final Set<TopicPartition> assigned = new HashSet<>();
        for (final MemberDescription member : group.map(ConsumerGroupDescription::members).orElse(List.of())) {
            final HostInfo host = hostOfMember.get(member.consumerId());
            if (host == null) {
                complete = false;
                continue;
            }
            final Set<TopicPartition> partitions = member.assignment().topicPartitions();
            activeByHost.computeIfAbsent(host, h -> new HashSet<>()).addAll(partitions);
            assigned.addAll(partitions);
        }
        onChange(activeByHost, partitionInfos(assigned));
    }

    private void readEndpoints() {
        final TopicPartition partition = new TopicPartition(topic, 0);
        final long end = consumer.endOffsets(List.of(partition), TIMEOUT).get(partition);
        final long deadline = time.milliseconds() + TIMEOUT.toMillis();
        while (consumer.position(partition, TIMEOUT) < end) {
            if (time.milliseconds() > deadline) {
                throw new StreamsException("Could not read topic " + topic + " to its end within " + TIMEOUT);
            }
            for (final ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                final String process = new String(record.key(), StandardCharsets.UTF_8);
                if (record.value() == null) {
                    instances.remove(process);
                } else {
                    instances.put(process, Endpoint.deserialize(record.value()));
                }
            }
        }
    }

    /** The application's group; empty before its first member joined. */
    private Optional<ConsumerGroupDescription> describeGroup() {
        try {
            return Optional.of(admin.describeConsumerGroups(List.of(applicationId)).describedGroups().get(applicationId)
                .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        } catch (final ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Optional.empty();
            }
            throw new StreamsException("Could not describe group " + applicationId + " for the streams metadata", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamsException("Interrupted while describing group " + applicationId, e);
        } catch (final TimeoutException e) {
            throw new StreamsException("Could not describe group " + applicationId + " for the streams metadata", e);
        }
    }

    /** Partition counts come from the brokers, so that a key maps to the right partition wherever it is owned. */
    private Map<TopicPartition, PartitionInfo> partitionInfos(final Set<TopicPartition> partitions) {
        final Set<String> topics = new HashSet<>();
        partitions.forEach(tp -> topics.add(tp.topic()));
        final Map<TopicPartition, PartitionInfo> partitionInfos = new HashMap<>();
        for (final TopicDescription description : describe(topics).values()) {
            description.partitions().forEach(p -> partitionInfos.put(
                new TopicPartition(description.name(), p.partition()),
                new PartitionInfo(description.name(), p.partition(), p.leader(),
                    p.replicas().toArray(new Node[0]), p.isr().toArray(new Node[0]))));
        }
        return partitionInfos;
    }

    private Map<String, TopicDescription> describe(final Set<String> topics) {
        final Set<String> missing = new HashSet<>(topics);
        missing.removeAll(describedTopics.keySet());
        if (!missing.isEmpty()) {
            try {
                describedTopics.putAll(admin.describeTopics(missing).allTopicNames()
                    .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StreamsException("Interrupted while describing topics " + missing, e);
            } catch (final ExecutionException | TimeoutException e) {
                throw new StreamsException("Could not describe topics " + missing + " for the streams metadata", e);
            }
        }
        final Map<String, TopicDescription> result = new HashMap<>();
        topics.forEach(t -> result.put(t, describedTopics.get(t)));
        return result;
    }

    /**
     * {@code StreamsMetadataState.onChange} is package-private: in Kafka Streams only its partition
     * assignor calls it. Sluice has no such assignor on the JVM, so it calls the method reflectively
     * (same class loader, unnamed module: no access check stands in the way).
     */
    private void onChange(final Map<HostInfo, Set<TopicPartition>> activeByHost,
                          final Map<TopicPartition, PartitionInfo> partitionInfos) {
        try {
            final Method onChange = StreamsMetadataState.class.getDeclaredMethod("onChange", Map.class, Map.class, Map.class);
            onChange.setAccessible(true);
            onChange.invoke(metadataState, activeByHost, Map.of(), partitionInfos);
        } catch (final InvocationTargetException e) {
            throw new StreamsException("Could not update the streams metadata", e.getCause());
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("Kafka Streams' StreamsMetadataState.onChange is not as expected", e);
        }
    }

    /** Withdraws this instance's endpoint, so that the others forget it, and closes the clients. */
    @Override
    public synchronized void close() {
        if (producer != null) {
            try {
                producer.send(new ProducerRecord<>(topic, processId.getBytes(StandardCharsets.UTF_8), null));
            } catch (final RuntimeException e) {
                LOG.warn("Could not withdraw this instance's endpoint from topic {}", topic, e);
            }
        }
        closeClients();
    }

    private void closeClients() {
        final List<AutoCloseable> clients = new ArrayList<>();
        if (producer != null) {
            clients.add(producer);
        }
        if (consumer != null) {
            clients.add(consumer);
        }
        producer = null;
        consumer = null;
        for (final AutoCloseable client : clients) {
            try {
                client.close();
            } catch (final Exception e) {
                LOG.warn("Closing a client of the endpoints exchange failed", e);
            }
        }
    }
}
