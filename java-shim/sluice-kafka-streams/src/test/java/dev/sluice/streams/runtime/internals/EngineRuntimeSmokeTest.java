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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.InMemoryKeyValueStore;
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
     * The restore listener hears that only the third life restored anything.
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
            final List<Path> lives = List.of(firstStateDir, firstStateDir, secondStateDir);
            for (int life = 0; life < lives.size(); life++) {
                final Path stateDir = lives.get(life);
                produceLines(input, expected);
                final RestoredRecords restored = new RestoredRecords("counts");
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
                runtime.setRestoreListener(restored);
                final Map<String, Long> counts;
                try {
                    runtime.start();
                    counts = readCounts(output, expected);
                    assertFalse(runtime.hasFailed(), () -> "engine failed: " + failures);
                    // The two engine threads may still be rebalancing when the counts are complete: a
                    // thread that joins late takes tasks over from the other, which hosts them meanwhile.
                    awaitEquals(Set.of(new TaskId(0, 0), new TaskId(0, 1), new TaskId(1, 0), new TaskId(1, 1)),
                        () -> runtime.localTasks().keySet(), "the local tasks");
                    awaitEquals(Set.of(0, 1), () -> runtime.localStores("counts").keySet(), "the local stores");
                } finally {
                    runtime.close();
                }
                assertEquals(expected, counts, "life with state in " + stateDir);
                assertTrue(failures.isEmpty(), () -> "failures: " + failures);
                assertEquals(4, Set.copyOf(running).size());
                assertEquals(Set.of(0, 1), restored.endedPartitions(), "restorations ended in life " + life);
                if (life == 1) {
                    assertEquals(0, restored.total(), "a restart with its local state replays nothing");
                } else if (life == 2) {
                    assertTrue(restored.total() > 0, "a restart without local state restores the changelogs");
                    assertEquals(restored.total(), restored.batched(), "batches add up to the totals");
                }
            }
        } finally {
            Utils.delete(firstStateDir.toFile());
            Utils.delete(secondStateDir.toFile());
        }
    }

    /**
     * A stream–GlobalKTable join: the global store is complete before the tasks run, and an update
     * of the table reaches the join while the application runs.
     */
    @ParameterizedTest
    @ValueSource(strings = {StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2})
    void joinsAStreamWithAGlobalTable(final String guarantee) throws Exception {
        final String suffix = guarantee.replace('_', '-') + "-" + UUID.randomUUID().toString().substring(0, 8);
        final String countries = "countries-" + suffix;
        final String orders = "orders-" + suffix;
        final String output = "enriched-" + suffix;
        BROKER.createTopic(countries, 1);
        BROKER.createTopic(orders, 2);
        BROKER.createTopic(output, 2);
        produce(countries, Map.of("be", "Belgium", "fr", "France"));
        produce(orders, Map.of("order-1", "be", "order-2", "fr"));
        final StreamsBuilder builder = new StreamsBuilder();
        final GlobalKTable<String, String> table = builder.globalTable(countries, Consumed.with(Serdes.String(), Serdes.String()));
        builder.stream(orders, Consumed.with(Serdes.String(), Serdes.String()))
            .join(table, (order, country) -> country, (order, country, name) -> order + " ships to " + name)
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        final Path stateDir = Files.createTempDirectory("sluice-engine-runtime");
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final EngineRuntime runtime = runtime(builder, guarantee, "global-" + suffix, stateDir, (thread, error) -> failures.add(error));
        try {
            runtime.start();
            assertEquals(Map.of("order-1", "order-1 ships to Belgium", "order-2", "order-2 ships to France"),
                readLatest(output, new StringDeserializer(),
                    Map.of("order-1", "order-1 ships to Belgium", "order-2", "order-2 ships to France")));
            produce(countries, Map.of("be", "België"));
            Thread.sleep(500);
            produce(orders, Map.of("order-3", "be"));
            final Map<String, String> expected = Map.of(
                "order-1", "order-1 ships to Belgium", "order-2", "order-2 ships to France", "order-3", "order-3 ships to België");
            assertEquals(expected, readLatest(output, new StringDeserializer(), expected));
            assertFalse(runtime.hasFailed(), () -> "engine failed: " + failures);
        } finally {
            runtime.close();
            Utils.delete(stateDir.toFile());
        }
        assertTrue(failures.isEmpty(), () -> "failures: " + failures);
    }

    /**
     * A store that is not Sluice's (the application's own supplier; here Kafka Streams' in-memory
     * store): the task's machinery logs its writes through the engine, and a restart, which finds it
     * empty, restores it through its own restore callback.
     */
    @ParameterizedTest
    @ValueSource(strings = {StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2})
    void restoresACustomStoreThroughItsRestoreCallback(final String guarantee) throws Exception {
        final String suffix = guarantee.replace('_', '-') + "-" + UUID.randomUUID().toString().substring(0, 8);
        final String input = "words-" + suffix;
        final String output = "custom-counts-" + suffix;
        BROKER.createTopic(input, 1);
        BROKER.createTopic(output, 1);
        final Path stateDir = Files.createTempDirectory("sluice-engine-runtime");
        final Map<String, String> expected = new HashMap<>();
        try {
            for (int life = 0; life < 2; life++) {
                final String word = "word-" + life;
                produce(input, Map.of("a", "shared", "b", word));
                expected.put("shared", String.valueOf(life + 1));
                expected.put(word, "1");
                final RestoredRecords restored = new RestoredRecords("custom-counts");
                final List<Throwable> failures = new CopyOnWriteArrayList<>();
                final EngineRuntime runtime = runtime(customStoreCount(input, output), guarantee, "custom-" + suffix, stateDir,
                    (thread, error) -> failures.add(error));
                runtime.setRestoreListener(restored);
                try {
                    runtime.start();
                    assertEquals(expected, readLatest(output, new StringDeserializer(), expected), "life " + life);
                    assertFalse(runtime.hasFailed(), () -> "engine failed: " + failures);
                } finally {
                    runtime.close();
                }
                assertTrue(failures.isEmpty(), () -> "failures: " + failures);
                // A rebalance as the client starts may hand the task over once more, which restores an
                // in-memory store again: every restore replays the whole changelog.
                final long perRestore = life == 0 ? 0 : 2;
                final List<Long> restores = restored.restores();
                assertTrue(!restores.isEmpty() && restores.stream().allMatch(records -> records == perRestore),
                    () -> "records restored into the in-memory store by each restore: " + restores);
            }
        } finally {
            Utils.delete(stateDir.toFile());
        }
    }

    /** Counts values in a store from the application's own supplier, emitting each new count. */
    private static StreamsBuilder customStoreCount(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        final KeyValueBytesStoreSupplier custom = new KeyValueBytesStoreSupplier() {
            @Override
            public String name() {
                return "custom-counts";
            }

            @Override
            public KeyValueStore<Bytes, byte[]> get() {
                return new InMemoryKeyValueStore(name());
            }

            @Override
            public String metricsScope() {
                return "custom";
            }
        };
        builder.addStateStore(Stores.keyValueStoreBuilder(custom, Serdes.String(), Serdes.Long()));
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .process(() -> new Processor<String, String, String, String>() {
                private ProcessorContext<String, String> context;
                private KeyValueStore<String, Long> counts;

                @Override
                public void init(final ProcessorContext<String, String> context) {
                    this.context = context;
                    this.counts = context.getStateStore("custom-counts");
                }

                @Override
                public void process(final Record<String, String> record) {
                    final Long previous = counts.get(record.value());
                    final long count = previous == null ? 1 : previous + 1;
                    counts.put(record.value(), count);
                    context.forward(record.withKey(record.value()).withValue(String.valueOf(count)));
                }
            }, "custom-counts")
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        return builder;
    }

    /** Sums what the engine reports restoring into one store. */
    private static final class RestoredRecords implements StateRestoreListener {
        private final String store;
        private final Set<Integer> ended = ConcurrentHashMap.newKeySet();
        private final AtomicLong total = new AtomicLong();
        private final AtomicLong batched = new AtomicLong();
        private final List<Long> restores = new CopyOnWriteArrayList<>();

        RestoredRecords(final String store) {
            this.store = store;
        }

        @Override
        public void onRestoreStart(final TopicPartition partition, final String store, final long start, final long end) {
            assertEquals(this.store, store);
        }

        @Override
        public void onBatchRestored(final TopicPartition partition, final String store, final long batchEnd, final long restored) {
            batched.addAndGet(restored);
        }

        @Override
        public void onRestoreEnd(final TopicPartition partition, final String store, final long restored) {
            ended.add(partition.partition());
            total.addAndGet(restored);
            restores.add(restored);
        }

        Set<Integer> endedPartitions() {
            return Set.copyOf(ended);
        }

        long total() {
            return total.get();
        }

        /** The records each restore that ended restored, in order. */
        List<Long> restores() {
            return List.copyOf(restores);
        }

        long batched() {
            return batched.get();
        }
    }

    /** Waits until {@code actual} gives {@code expected}, then asserts it (a minute at most). */
    private static <T> void awaitEquals(final T expected, final Supplier<T> actual, final String what)
        throws InterruptedException {
        final long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!expected.equals(actual.get()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(expected, actual.get(), what);
    }

    private static EngineRuntime runtime(final String guarantee, final String suffix, final String input,
                                         final String output, final Path stateDir, final RuntimeListener listener) {
        return runtime(wordCount(input, output), guarantee, "wordcount-" + suffix, stateDir, listener);
    }

    private static EngineRuntime runtime(final StreamsBuilder builder, final String guarantee, final String applicationId,
                                         final Path stateDir, final RuntimeListener listener) {
        final Properties properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        properties.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        properties.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        properties.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        properties.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
        properties.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        final StreamsConfig config = new StreamsConfig(properties);
        final TopologyMetadata topology = new TopologyMetadata(
            TaskRunnerFixture.internalBuilder(builder.build()), config);
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

    private static void produce(final String topic, final Map<String, String> records) {
        final Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer())) {
            records.forEach((key, value) -> producer.send(new ProducerRecord<>(topic, key, value)));
            producer.flush();
        }
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
        return readLatest(topic, new LongDeserializer(), expected);
    }

    /** The latest committed value per key, read until they are the expected ones or a minute passed. */
    private static <V> Map<String, V> readLatest(final String topic, final Deserializer<V> values, final Map<String, V> expected) {
        final Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        final Map<String, V> latest = new HashMap<>();
        try (KafkaConsumer<String, V> consumer = new KafkaConsumer<>(properties, new StringDeserializer(), values)) {
            consumer.subscribe(List.of(topic));
            final long deadline = System.currentTimeMillis() + Duration.ofMinutes(1).toMillis();
            while (!latest.equals(expected) && System.currentTimeMillis() < deadline) {
                for (final ConsumerRecord<String, V> record : consumer.poll(Duration.ofMillis(200))) {
                    latest.put(record.key(), record.value());
                }
            }
        }
        return latest;
    }
}
