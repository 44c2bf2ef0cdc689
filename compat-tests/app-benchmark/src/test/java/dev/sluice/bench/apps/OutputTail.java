package dev.sluice.bench.apps;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A read_committed consumer following a run's output topic on a thread of its own from its start:
 * the output's final values so far, and, when asked, each record's latency from the moment it was due
 * (what {@link LatencyOrigin} says) to the moment this consumer saw it committed.
 */
final class OutputTail implements AutoCloseable {

    /** When an output record was due: the wall-clock time its input was sent. */
    interface LatencyOrigin {
        long dueAt(String key, long timestamp);
    }

    private static final Duration POLL = Duration.ofMillis(20);

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Application application;
    private final FinalValues finalValues;
    private final LatencyOrigin origin;
    private final long measureFrom;
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean complete;
    private volatile long lastRecordAt = System.nanoTime();
    private volatile RuntimeException failure;
    private long[] latencies = new long[1024];
    private int latencyCount;

    /**
     * @param origin       when each record was due, or null when latencies are not measured
     * @param measureFrom  the wall-clock time before which a due record's latency is not counted (warm-up)
     */
    OutputTail(final String bootstrapServers, final String topic, final Application application,
               final Map<String, String> expected, final LatencyOrigin origin, final long measureFrom) {
        this.consumer = new KafkaConsumer<>(Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString(),
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
            // The observer must not add its own delay to the latencies it measures.
            ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5,
            ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.application = application;
        this.finalValues = new FinalValues(expected);
        this.origin = origin;
        this.measureFrom = measureFrom;
        final List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
            .map(info -> new TopicPartition(topic, info.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        this.thread = new Thread(this::follow, "output-tail-" + topic);
        thread.setDaemon(true);
        thread.start();
    }

    boolean complete() {
        rethrow();
        return complete;
    }

    long nanosSinceLastRecord() {
        return System.nanoTime() - lastRecordAt;
    }

    /** The output's differences from what it must be; call after {@link #close}. */
    String differences() {
        return finalValues.differences();
    }

    long records() {
        return finalValues.records();
    }

    /** The measured latencies in milliseconds, sorted; call after {@link #close}. */
    long[] sortedLatencies() {
        final long[] sorted = Arrays.copyOf(latencies, latencyCount);
        Arrays.sort(sorted);
        return sorted;
    }

    private void follow() {
        try {
            while (!closed) {
                for (final ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    final long seenAt = System.currentTimeMillis();
                    final String key = Application.text(record.key());
                    finalValues.accept(key, application.valueText(record.value()));
                    if (origin != null) {
                        final long dueAt = origin.dueAt(key, record.timestamp());
                        if (dueAt >= measureFrom) {
                            addLatency(seenAt - dueAt);
                        }
                    }
                    lastRecordAt = System.nanoTime();
                }
                complete = finalValues.complete();
            }
        } catch (final org.apache.kafka.common.errors.WakeupException closing) {
            // close() woke the poll
        } catch (final RuntimeException e) {
            failure = e;
        }
    }

    private void addLatency(final long millis) {
        if (latencyCount == latencies.length) {
            latencies = Arrays.copyOf(latencies, latencyCount * 2);
        }
        latencies[latencyCount++] = millis;
    }

    private void rethrow() {
        if (failure != null) {
            throw new IllegalStateException("the output consumer failed", failure);
        }
    }

    /** Stops following; closing again does nothing. */
    @Override
    public void close() throws InterruptedException {
        if (closed) {
            return;
        }
        closed = true;
        consumer.wakeup();
        thread.join();
        consumer.close();
        rethrow();
    }
}
