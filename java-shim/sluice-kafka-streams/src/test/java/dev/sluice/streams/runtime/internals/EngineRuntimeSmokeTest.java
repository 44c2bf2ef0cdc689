package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Word count on Sluice's engine through {@link EngineRuntime}, against a real broker. */
class EngineRuntimeSmokeTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final List<String> LINES = List.of(
        "all streams lead to kafka", "hello kafka streams", "join kafka summit", "streams streams streams");

    /**
     * Three lives of one application: the second keeps the first's local state, the third starts
     * without local state and restores it from the changelogs; each adds lines and the counts go on.
     */
    @ParameterizedTest
    @ValueSource(strings = {StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2})
    void countsWordsAcrossRestartsAndRestores(final String guarantee) throws Exception {
        final String suffix = guarantee.replace('_', '-') + "-" + UUID.randomUUID().toString().substring(0, 8);
        final String input = "lines-" + suffix;
        final String output = "counts-" + suffix;
        BROKER.createTopic(input, 2);
        BROKER.createTopic(output, 2);
        final Path firstStateDir = Files.createTempDirectory("sluice-engine-runtime");
        final Path secondStateDir = Files.createTempDirectory("sluice-engine-runtime");
        final Map<String, Long> expected = new HashMap<>();
        try {
            for (final Path stateDir : List.of(firstStateDir, firstStateDir, secondStateDir)) {
                produceLines(input, expected);
                final List<Throwable> failures = new CopyOnWriteArrayList<>();
                final List<TaskId> running = new CopyOnWriteArrayList<>();
                final EngineRuntime runtime = runtime(guarantee, suffix, input, output, stateDir, new RuntimeListener() {
                    @Override
                    public void onThreadFailure(final String threadName, final Throwable error) {
                        failures.add(error);
                    }

                    @Override
                    public void onTaskRunning(final TaskId task) {
                        running.add(task);
                    }
                });
                final Map<String, Long> counts;
                try {
                    runtime.start();
                    counts = readCounts(output, expected);
                    assertFalse(runtime.hasFailed(), () -> "engine failed: " + failures);
                    assertEquals(Set.of(new TaskId(0, 0), new TaskId(0, 1), new TaskId(1, 0), new TaskId(1, 1)),
                        runtime.localTasks().keySet());
                    assertEquals(Set.of(0, 1), runtime.localStores("counts").keySet());
                } finally {
                    runtime.close();
                }
                assertEquals(expected, counts, "life with state in " + stateDir);
                assertTrue(failures.isEmpty(), () -> "failures: " + failures);
                assertEquals(4, Set.copyOf(running).size());
            }
        } finally {
            Utils.delete(firstStateDir.toFile());
            Utils.delete(secondStateDir.toFile());
        }
    }

    private static EngineRuntime runtime(final String guarantee, final String suffix, final String input,
                                         final String output, final Path stateDir, final RuntimeListener listener) {
        final Properties properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, "wordcount-" + suffix);
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        properties.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        properties.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        properties.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        properties.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
        properties.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        final StreamsConfig config = new StreamsConfig(properties);
        final TopologyMetadata topology = new TopologyMetadata(
            TaskRunnerFixture.internalBuilder(wordCount(input, output).build()), config);
        topology.buildAndRewriteTopology();
        return new EngineRuntime(topology, config, Time.SYSTEM, listener);
    }

    private static StreamsBuilder wordCount(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.split(" ")))
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder;
    }

    /** Produces {@link #LINES} and adds their words to {@code expected}. */
    private static void produceLines(final String topic, final Map<String, Long> expected) {
        final Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            int key = 0;
            for (final String line : LINES) {
                producer.send(new ProducerRecord<>(topic, "line-" + key++, line));
                for (final String word : line.split(" ")) {
                    expected.merge(word, 1L, Long::sum);
                }
            }
            producer.flush();
        }
    }

    /** The latest committed count per word, read until they are the expected ones or a minute passed. */
    private static Map<String, Long> readCounts(final String topic, final Map<String, Long> expected) {
        final Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        final Map<String, Long> latest = new HashMap<>();
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(properties, new StringDeserializer(), new LongDeserializer())) {
            consumer.subscribe(List.of(topic));
            final long deadline = System.currentTimeMillis() + Duration.ofMinutes(1).toMillis();
            while (!latest.equals(expected) && System.currentTimeMillis() < deadline) {
                for (final ConsumerRecord<String, Long> record : consumer.poll(Duration.ofMillis(200))) {
                    latest.put(record.key(), record.value());
                }
            }
        }
        return latest;
    }
}
