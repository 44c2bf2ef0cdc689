package dev.sluice.streams.runtime;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Requests that every instance of one application shut down ({@code SHUTDOWN_APPLICATION}), which Sluice's
 * instances pass to one another through records of the compacted one-partition topic
 * {@code <application.id>-sluice-instances} (key {@code shutdown}, value: the process id of the instance that
 * asked). A shutdown request concerns the instances that were running when it was written: one at or after the
 * topic's end when an instance started.
 *
 * <p>Records are written by a producer and read by a consumer of this class's own, both Java clients: the
 * topic is the instances' control channel, not data the engine processes.
 */
public final class ApplicationInstances implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ApplicationInstances.class);
    private static final String TOPIC_SUFFIX = "-sluice-instances";
    private static final String SHUTDOWN_KEY = "shutdown";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Admin admin;
    private final StreamsConfig config;
    private final String processId;
    private final String clientId;
    private final String topic;
    private final TopicPartition partition;
    /** Completed once {@link #setUp()} has ended, exceptionally when it failed. */
    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private volatile boolean begun;
    // Set up by setUp() as the client starts, closed by close() after the engine stopped.
    private volatile Producer<byte[], byte[]> producer;
    private Consumer<byte[], byte[]> consumer;
    /** Set by close(): a set-up still under way closes the clients it made instead of keeping them. */
    private boolean closed;
    private long startOffset;
    private boolean shutdownRequested;

    public ApplicationInstances(final Admin admin, final StreamsConfig config, final String processId, final String clientId) {
        this.admin = admin;
        this.config = config;
        this.processId = processId;
        this.clientId = clientId;
        this.topic = config.getString(StreamsConfig.APPLICATION_ID_CONFIG) + TOPIC_SUFFIX;
        this.partition = new TopicPartition(topic, 0);
    }

    /**
     * Begins to set the topic and clients up on a thread of its own and returns at once: creating the Java
     * clients costs a starting JVM about half a second, which {@code KafkaStreams#start} spends opening stores
     * and starting the engine meanwhile. What reads or writes the topic waits for the set-up.
     */
    public void startInBackground() {
        begun = true;
        final Thread setUp = new Thread(() -> {
            try {
                setUp();
                started.complete(null);
            } catch (final Throwable e) {
                started.completeExceptionally(e);
            }
        }, clientId + "-InstancesSetUp");
        setUp.setDaemon(true);
        setUp.start();
    }

    /**
     * Waits until the set-up {@link #startInBackground()} began has ended; returns at once when it was not begun
     * (the topic is then neither read nor written).
     *
     * @throws StreamsException when the topic cannot be created or its end cannot be read
     */
    public void awaitStarted() {
        if (!begun) {
            return;
        }
        try {
            started.get(2 * TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final ExecutionException e) {
            throw e.getCause() instanceof StreamsException streams ? streams
                : new StreamsException("Could not set up topic " + topic, e.getCause());
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamsException("Interrupted while setting up topic " + topic, e);
        } catch (final TimeoutException e) {
            throw new StreamsException("Could not set up topic " + topic + " within " + TIMEOUT.multipliedBy(2), e);
        }
    }

    /**
     * Creates the topic if it is missing and the clients that write and read it, and notes where the topic
     * ends now: shutdown requests from before do not concern this instance. A client closed meanwhile (its start
     * failed) does not wait for this: the clients made are closed here then.
     */
    private void setUp() {
        createTopic();
        final Map<String, Object> producerConfigs = config.getProducerConfigs(clientId + "-instances-producer");
        producerConfigs.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        final Producer<byte[], byte[]> newProducer =
            new KafkaProducer<>(producerConfigs, new ByteArraySerializer(), new ByteArraySerializer());
        final Map<String, Object> consumerConfigs = config.getRestoreConsumerConfigs(clientId + "-instances-consumer");
        consumerConfigs.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        final Consumer<byte[], byte[]> newConsumer =
            new KafkaConsumer<>(consumerConfigs, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        boolean kept = false;
        try {
            newConsumer.assign(List.of(partition));
            final long end = newConsumer.endOffsets(List.of(partition), TIMEOUT).get(partition);
            synchronized (this) {
                if (!closed) {
                    producer = newProducer;
                    consumer = newConsumer;
                    startOffset = end;
                    kept = true;
                }
            }
        } finally {
            if (!kept) {
                closeAll(List.of(newProducer, newConsumer));
            }
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
     * Asks every running instance to shut down, waiting until the request is written.
     *
     * @throws StreamsException when it cannot be written
     */
    public void requestShutdown() {
        awaitStarted();
        final Producer<byte[], byte[]> current = producer;
        if (current == null) {
            throw new StreamsException("The instances of the application cannot be told to shut down: topic " + topic
                + " is not set up");
        }
        try {
            current.send(record(SHUTDOWN_KEY, processId.getBytes(StandardCharsets.UTF_8)))
                .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamsException("Interrupted while asking the application's instances to shut down", e);
        } catch (final ExecutionException | TimeoutException e) {
            throw new StreamsException("Could not ask the application's instances to shut down", e);
        }
    }

    /** True when some instance asked every running one to shut down since this one started. */
    public boolean shutdownRequested() {
        awaitStarted();
        synchronized (this) {
            readToEnd();
            return shutdownRequested;
        }
    }

    private void readToEnd() {
        if (consumer == null) {
            return;
        }
        final long end = consumer.endOffsets(List.of(partition), TIMEOUT).get(partition);
        final long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (consumer.position(partition, TIMEOUT) < end) {
            if (System.nanoTime() > deadline) {
                throw new StreamsException("Could not read topic " + topic + " to its end within " + TIMEOUT);
            }
            for (final ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                final String key = new String(record.key(), StandardCharsets.UTF_8);
                if (key.equals(SHUTDOWN_KEY)) {
                    shutdownRequested |= record.offset() >= startOffset && record.value() != null;
                }
            }
        }
    }

    private ProducerRecord<byte[], byte[]> record(final String key, final byte[] value) {
        return new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value);
    }

    /** Closes the clients. */
    @Override
    public synchronized void close() {
        closed = true;
        final Producer<byte[], byte[]> current = producer;
        final List<AutoCloseable> clients = new ArrayList<>();
        if (current != null) {
            clients.add(current);
        }
        if (consumer != null) {
            clients.add(consumer);
        }
        producer = null;
        consumer = null;
        closeAll(clients);
    }

    private void closeAll(final List<AutoCloseable> clients) {
        for (final AutoCloseable client : clients) {
            try {
                client.close();
            } catch (final Exception e) {
                LOG.warn("Closing a client of topic {} failed", topic, e);
            }
        }
    }
}
