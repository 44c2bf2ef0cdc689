package org.apache.kafka.streams;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;

/** What the tests of Kafka Streams clients on Sluice's engine share. */
final class EngineTestSupport {

    static final Duration WAIT = Duration.ofSeconds(120);

    private EngineTestSupport() {
    }

    /** A client of {@code applicationId} on {@code broker}: state in {@code stateDir}, commits every 100 ms, inputs read from their start. */
    static Properties props(final LocalKafkaBroker broker, final String applicationId, final Path stateDir) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return props;
    }

    static void waitFor(final BooleanSupplier condition, final String what) throws InterruptedException {
        waitFor(condition, what, () -> "");
    }

    /** As {@link #waitFor(BooleanSupplier, String)}; a timeout also says what {@code seen} reports then. */
    static void waitFor(final BooleanSupplier condition, final String what, final Supplier<String> seen)
        throws InterruptedException {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                final String state = seen.get();
                throw new AssertionError("timed out waiting for " + what + (state.isEmpty() ? "" : "; " + state));
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    /**
     * The latest count of each key in {@code topic} (committed records) once they equal {@code expected}, or as they
     * stand when {@link #WAIT} ends.
     */
    static Map<String, Long> latestCountsUntil(final LocalKafkaBroker broker, final String topic,
                                               final Map<String, Long> expected) {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader-" + System.nanoTime());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        final Map<String, Long> counts = new HashMap<>();
        try (KafkaConsumer<String, Long> consumer =
                 new KafkaConsumer<>(props, new StringDeserializer(), new LongDeserializer())) {
            consumer.subscribe(List.of(topic));
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (!counts.equals(expected) && System.nanoTime() < deadline) {
                for (final ConsumerRecord<String, Long> record : consumer.poll(Duration.ofMillis(200))) {
                    counts.put(record.key(), record.value());
                }
            }
        }
        return counts;
    }

    /** The value of {@code task}'s metric {@code name} ({@code stream-task-metrics}) on {@code streams}; 0 for none. */
    static double taskMetric(final KafkaStreams streams, final String name, final TaskId task) {
        return streams.metrics().values().stream()
            .filter(metric -> metric.metricName().name().equals(name)
                && metric.metricName().group().equals("stream-task-metrics")
                && task.toString().equals(metric.metricName().tags().get("task-id")))
            .mapToDouble(metric -> (Double) metric.metricValue())
            .sum();
    }

    /** {@code error} and its causes, for assertion messages. */
    static String describe(final Throwable error) {
        final StringBuilder text = new StringBuilder();
        for (Throwable t = error; t != null; t = t.getCause()) {
            text.append(t).append(" / ");
        }
        return text.toString();
    }

    /** Per store: the records restored, summed over its partitions, and how many partitions started and ended restoring; per changelog partition: the records restored. */
    static final class RestoreTally implements StateRestoreListener {
        final Map<String, Long> restored = new ConcurrentHashMap<>();
        final Map<TopicPartition, Long> restoredByPartition = new ConcurrentHashMap<>();
        final Map<String, Integer> started = new ConcurrentHashMap<>();
        final Map<String, Integer> ended = new ConcurrentHashMap<>();

        @Override
        public void onRestoreStart(final TopicPartition partition, final String store, final long start, final long end) {
            started.merge(store, 1, Integer::sum);
        }

        @Override
        public void onBatchRestored(final TopicPartition partition, final String store, final long batchEnd,
                                    final long batchSize) {
        }

        @Override
        public void onRestoreEnd(final TopicPartition partition, final String store, final long total) {
            restored.merge(store, total, Long::sum);
            restoredByPartition.merge(partition, total, Long::sum);
            ended.merge(store, 1, Integer::sum);
        }
    }
}
