package dev.sluice.bench.apps;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** The benchmark's one local broker, with the admin calls its runs make. */
final class BenchBroker implements AutoCloseable {

    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private final LocalKafkaBroker broker = new LocalKafkaBroker();
    private final Admin admin;

    BenchBroker() {
        broker.start();
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
    }

    String bootstrapServers() {
        return broker.bootstrapServers();
    }

    void createTopic(final String topic, final int partitions) {
        broker.createTopic(topic, partitions);
    }

    /** Deletes {@code topics} with everything in them, if they exist, and creates them empty. */
    void recreateTopics(final Collection<String> topics, final int partitions) {
        try {
            final Set<String> existing = admin.listTopics().names().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            final List<String> toDelete = topics.stream().filter(existing::contains).toList();
            admin.deleteTopics(toDelete).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            final long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
            while (admin.listTopics().names().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).stream()
                    .anyMatch(toDelete::contains)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("topics " + toDelete + " not deleted within " + ADMIN_TIMEOUT.toSeconds() + " s");
                }
                Thread.sleep(100);
            }
        } catch (final ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not delete topics " + topics, e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        topics.forEach(topic -> broker.createTopic(topic, partitions));
    }

    KafkaProducer<byte[], byte[]> producer() {
        return new KafkaProducer<>(Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
            ProducerConfig.LINGER_MS_CONFIG, 1), new ByteArraySerializer(), new ByteArraySerializer());
    }

    /**
     * Writes {@code input} into {@code topics}, made anew with {@code partitions} partitions, and returns where
     * they end. A write that fails is made once more, into topics made anew: on a loaded machine the producer's
     * batches for one partition of a topic just made have been seen to expire unsent, which is the broker's slip
     * and not what the benchmark measures; a second failure fails.
     */
    Map<TopicPartition, Long> writeInput(final Input input, final Collection<String> topics, final int partitions) {
        recreateTopics(topics, partitions);
        try {
            return produce(input, topics);
        } catch (final IllegalStateException firstTry) {
            System.out.println("Writing the input to " + topics + " failed (" + firstTry.getMessage() + ": "
                + firstTry.getCause() + "); writing it again into new topics");
            recreateTopics(topics, partitions);
            return produce(input, topics);
        }
    }

    /**
     * Writes {@code input} in its order into the empty {@code topics} and returns where they end; fails
     * unless every record was written, since a lost input record would fail every run alike.
     */
    private Map<TopicPartition, Long> produce(final Input input, final Collection<String> topics) {
        final AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (final List<BenchRecord> part : List.of(input.tables(), input.events(), input.closing())) {
                part.forEach(record -> producer.send(BenchRun.record(record, record.timestamp()),
                    (metadata, exception) -> {
                        if (exception != null) {
                            failure.compareAndSet(null, exception);
                        }
                    }));
                producer.flush();
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException("could not write the input to " + topics, failure.get());
        }
        final Map<TopicPartition, Long> ends = endOffsets(topics);
        final long written = ends.values().stream().mapToLong(Long::longValue).sum();
        if (written != input.size()) {
            throw new IllegalStateException(topics + " hold " + written + " records, not the " + input.size() + " written");
        }
        return ends;
    }

    Map<TopicPartition, Long> endOffsets(final Collection<String> topics) {
        try {
            final Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            admin.describeTopics(topics).allTopicNames().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).values()
                .forEach(topic -> topic.partitions().forEach(partition ->
                    latest.put(new TopicPartition(topic.name(), partition.partition()), OffsetSpec.latest())));
            return admin.listOffsets(latest).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().offset()));
        } catch (final ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not read the end offsets of " + topics, e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Whether {@code committed} offsets reach every input's end (an empty input needs none). */
    static boolean coversInput(final Map<TopicPartition, Long> committed, final Map<TopicPartition, Long> inputEnds) {
        return inputEnds.entrySet().stream()
            .allMatch(end -> end.getValue() == 0 || committed.getOrDefault(end.getKey(), -1L) >= end.getValue());
    }

    /** The offsets {@code group} has committed; none before it first commits. */
    Map<TopicPartition, Long> committedOffsets(final String group) {
        try {
            return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).entrySet().stream()
                .filter(entry -> entry.getValue() != null)
                .collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().offset()));
        } catch (final ExecutionException e) {
            // Before the application first joins, the group does not exist or its coordinator is still loading.
            if (e.getCause() instanceof GroupIdNotFoundException || e.getCause() instanceof RetriableException) {
                return Map.of();
            }
            throw new IllegalStateException("could not read the offsets of group " + group, e);
        } catch (final TimeoutException e) {
            throw new IllegalStateException("could not read the offsets of group " + group, e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        admin.close();
        broker.close();
    }
}
