package dev.sluice.streams.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.state.internals.NativeHandles;
import dev.sluice.streams.state.internals.SluiceHeadersSessionBytesStore;
import dev.sluice.streams.state.internals.SluiceHeadersWindowBytesStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.ReadOnlySessionStore;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Windowed DSL operations through TopologyTestDriver: the same input gives the same output records and
 * the same final store contents on Sluice's DSL stores as on Kafka Streams' (RocksDB against
 * {@link SluiceDslStoreSuppliers}, in-memory against {@link SluiceDslStoreSuppliers.InMemory}), and the
 * stores under test really are Sluice's.
 */
class WindowedDslTest {

    private static final List<String> KEYS = List.of("a", "b", "c", "aa");

    @TempDir
    Path stateDir;

    static Stream<Arguments> topologies() {
        final List<Arguments> cases = new ArrayList<>();
        for (final Map.Entry<String, Consumer<StreamsBuilder>> topology : onWindowUpdateTopologies().entrySet()) {
            cases.add(Arguments.of(topology.getKey(), "rocksdb", topology.getValue()));
            cases.add(Arguments.of(topology.getKey(), "in-memory", topology.getValue()));
        }
        // Only persistent: in memory, emit-final session stores stay Kafka Streams' own.
        cases.add(Arguments.of("session aggregate, emit final", "rocksdb", (Consumer<StreamsBuilder>) builder ->
            windowedCount(builder, builder.stream("in", Consumed.with(Serdes.String(), Serdes.String())).groupByKey()
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(3), Duration.ofSeconds(5)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .aggregate(() -> "", (key, value, aggregate) -> aggregate + value,
                    (key, left, right) -> left + right, Materialized.with(Serdes.String(), Serdes.String()))
                .toStream())));
        return cases.stream();
    }

    /** The windowed operations that emit on every window update, each by name. */
    private static Map<String, Consumer<StreamsBuilder>> onWindowUpdateTopologies() {
        final Map<String, Consumer<StreamsBuilder>> topologies = new TreeMap<>();
        topologies.put("tumbling count", builder -> windowedCount(builder,
            builder.stream("in", Consumed.with(Serdes.String(), Serdes.String())).groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5)))
                .count(Materialized.as("counts")).toStream()));
        topologies.put("hopping count", builder -> windowedCount(builder,
            builder.stream("in", Consumed.with(Serdes.String(), Serdes.String())).groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5))
                    .advanceBy(Duration.ofSeconds(3)))
                .count(Materialized.as("counts")).toStream()));
        topologies.put("sliding count", builder -> windowedCount(builder,
            builder.stream("in", Consumed.with(Serdes.String(), Serdes.String())).groupByKey()
                .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(5), Duration.ofSeconds(5)))
                .count(Materialized.as("counts")).toStream()));
        topologies.put("session aggregate", builder -> windowedCount(builder,
            builder.stream("in", Consumed.with(Serdes.String(), Serdes.String())).groupByKey()
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(3), Duration.ofSeconds(5)))
                .aggregate(() -> "", (key, value, aggregate) -> aggregate + value,
                    (key, left, right) -> left + right, Materialized.with(Serdes.String(), Serdes.String()))
                .toStream()));
        topologies.put("stream-stream join", builder -> {
            final KStream<String, String> left = builder.stream("in", Consumed.with(Serdes.String(), Serdes.String()));
            final KStream<String, String> right = builder.stream("other", Consumed.with(Serdes.String(), Serdes.String()));
            left.join(right, (l, r) -> l + "+" + r,
                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(4), Duration.ofSeconds(2)),
                    StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()))
                .to("out", Produced.with(Serdes.String(), Serdes.String()));
        });
        return topologies;
    }

    static Stream<Arguments> headersFormatTopologies() {
        return onWindowUpdateTopologies().entrySet().stream()
            .map(topology -> Arguments.of(topology.getKey(), topology.getValue()));
    }

    private static <V> void windowedCount(final StreamsBuilder builder, final KStream<Windowed<String>, V> windowed) {
        windowed.map((key, value) -> KeyValue.pair(key.key() + "@" + key.window().start() + ".." + key.window().end(),
                String.valueOf(value)))
            .to("out", Produced.with(Serdes.String(), Serdes.String()));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("topologies")
    void sameOutputAndStoresAsKafkaStreamsStores(final String topology, final String backend,
                                                 final Consumer<StreamsBuilder> build) {
        final boolean rocksDb = backend.equals("rocksdb");
        final Run reference = run(build, rocksDb ? BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers.class
            : BuiltInDslStoreSuppliers.InMemoryDslStoreSuppliers.class, StreamsConfig.DSL_STORE_FORMAT_DEFAULT,
            "reference");
        final Run sluice = run(build, rocksDb ? SluiceDslStoreSuppliers.class : SluiceDslStoreSuppliers.InMemory.class,
            StreamsConfig.DSL_STORE_FORMAT_DEFAULT, "sluice");
        assertFalse(reference.output.isEmpty());
        assertEquals(reference.output, sluice.output);
        if (rocksDb) {
            assertEquals(reference.stores, sluice.stores);
        } else {
            // Kafka Streams' in-memory window store iterates by window start first, Sluice's like RocksDB.
            assertEquals(sorted(reference.stores), sorted(sluice.stores));
        }
        assertFalse(reference.servedBySluice, "the reference run uses Kafka Streams' stores");
        assertTrue(sluice.servedBySluice, "the Sluice run uses Sluice's stores");
    }

    @ParameterizedTest(name = "{0} in the headers-aware store format")
    @MethodSource("headersFormatTopologies")
    void headersFormatGivesTheSameOutputAndStoresAsKafkaStreamsStores(final String topology,
                                                                     final Consumer<StreamsBuilder> build) {
        final Run reference = run(build, BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers.class,
            StreamsConfig.DSL_STORE_FORMAT_HEADERS, "reference");
        final Run sluice = run(build, SluiceDslStoreSuppliers.class, StreamsConfig.DSL_STORE_FORMAT_HEADERS, "sluice");
        assertFalse(reference.output.isEmpty());
        assertEquals(reference.output, sluice.output);
        assertFalse(reference.stores.isEmpty());
        reference.stores.forEach((name, contents) -> assertFalse(contents.isEmpty(), name + " has contents"));
        assertEquals(reference.stores, sluice.stores);
        assertFalse(reference.servedBySluice, "the reference run uses Kafka Streams' stores");
        assertTrue(sluice.servedBySluice, "the Sluice run uses Sluice's stores");
        // Sluice's own headers-aware stores, not plain ones behind a converting adapter.
        assertFalse(sluice.bytesStores.isEmpty());
        sluice.bytesStores.forEach(store -> assertTrue(
            store instanceof SluiceHeadersWindowBytesStore || store instanceof SluiceHeadersSessionBytesStore,
            "headers-aware Sluice store, got " + store.getClass().getName()));
    }

    @Test
    void versionedTableJoinGivesTheSameOutputAndStoreAsKafkaStreamsVersionedStore() {
        final Run reference = run(builder -> versionedJoin(builder,
            Stores.persistentVersionedKeyValueStore("table", Duration.ofSeconds(20))), null,
            StreamsConfig.DSL_STORE_FORMAT_DEFAULT, "reference");
        final Run sluice = run(builder -> versionedJoin(builder,
            SluiceStores.persistentVersionedKeyValueStore("table", Duration.ofSeconds(20))), null,
            StreamsConfig.DSL_STORE_FORMAT_DEFAULT, "sluice");
        assertFalse(reference.output.isEmpty());
        assertEquals(reference.output, sluice.output);
        assertEquals(reference.stores, sluice.stores);
        assertTrue(sluice.servedBySluice);
        assertFalse(reference.servedBySluice);
    }

    private static Map<String, List<String>> sorted(final Map<String, List<String>> stores) {
        final Map<String, List<String>> sorted = new TreeMap<>();
        stores.forEach((name, contents) -> sorted.put(name, contents.stream().sorted().toList()));
        return sorted;
    }

    private static void versionedJoin(final StreamsBuilder builder, final VersionedBytesStoreSupplier table) {
        builder.stream("in", Consumed.with(Serdes.String(), Serdes.String()))
            .join(builder.table("other", Consumed.with(Serdes.String(), Serdes.String()),
                    Materialized.<String, String>as(table).withKeySerde(Serdes.String()).withValueSerde(Serdes.String())),
                (event, row) -> event + "@" + row)
            .to("out", Produced.with(Serdes.String(), Serdes.String()));
    }

    private Run run(final Consumer<StreamsBuilder> build, final Class<?> suppliers, final String storeFormat,
                    final String name) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "windowed");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(name).toString());
        props.put(StreamsConfig.DSL_STORE_FORMAT_CONFIG, storeFormat);
        if (suppliers != null) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, suppliers);
        }
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(props)));
        build.accept(builder);
        final Topology topology = builder.build();
        final List<String> topics = topology.describe().toString().contains("[other]") ? List.of("in", "other") : List.of("in");
        final long nativeStoresBefore = NativeHandles.liveStores();
        try (TopologyTestDriver driver = new TopologyTestDriver(topology, props)) {
            final TestInputTopic<String, String> in = driver.createInputTopic("in", new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, String> out =
                driver.createOutputTopic("out", new StringDeserializer(), new StringDeserializer());
            final Map<String, TestInputTopic<String, String>> inputs = Map.of("in", in,
                "other", driver.createInputTopic("other", new StringSerializer(), new StringSerializer()));
            final Random random = new Random(42);
            long time = 0;
            for (int i = 0; i < 300; i++) {
                time += random.nextInt(1_500);
                // Some records arrive late, a few of them beyond the grace period.
                final long timestamp = Math.max(0, time - (random.nextInt(5) == 0 ? random.nextInt(12_000) : 0));
                final String topic = topics.get(random.nextInt(topics.size()));
                inputs.get(topic).pipeInput(KEYS.get(random.nextInt(KEYS.size())), topic + i,
                    java.time.Instant.ofEpochMilli(timestamp));
            }
            final List<String> output = new ArrayList<>();
            out.readRecordsToList().forEach(record ->
                output.add(record.key() + "=" + record.value() + "@" + record.timestamp()));
            final Map<String, List<String>> stores = new TreeMap<>();
            final List<StateStore> bytesStores = new ArrayList<>();
            for (final Map.Entry<String, StateStore> store : driver.getAllStateStores().entrySet()) {
                stores.put(store.getKey(), contents(store.getValue()));
                bytesStores.add(bytesStore(store.getValue()));
            }
            return new Run(output, stores, bytesStores, NativeHandles.liveStores() > nativeStoresBefore);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> contents(final StateStore store) {
        final List<String> contents = new ArrayList<>();
        if (store instanceof ReadOnlyWindowStore) {
            try (KeyValueIterator<Windowed<Object>, Object> all = ((ReadOnlyWindowStore<Object, Object>) store).all()) {
                all.forEachRemaining(entry -> contents.add(entry.key + "=" + entry.value));
            }
        } else if (store instanceof ReadOnlySessionStore) {
            for (final String key : KEYS) {
                try (KeyValueIterator<Windowed<Object>, Object> sessions =
                         ((ReadOnlySessionStore<Object, Object>) store).fetch(key)) {
                    sessions.forEachRemaining(entry -> contents.add(entry.key + "=" + entry.value));
                }
            }
        } else if (store instanceof VersionedKeyValueStore) {
            for (final String key : KEYS) {
                for (long asOf = 0; asOf < 500_000; asOf += 2_500) {
                    contents.add(key + "@" + asOf + "=" + ((VersionedKeyValueStore<Object, Object>) store).get(key, asOf));
                }
            }
        } else if (store instanceof ReadOnlyKeyValueStore) {
            try (KeyValueIterator<Object, Object> all = ((ReadOnlyKeyValueStore<Object, Object>) store).all()) {
                all.forEachRemaining(entry -> contents.add(entry.key + "=" + entry.value));
            }
        }
        return contents;
    }

    private static StateStore bytesStore(final StateStore store) {
        StateStore inner = store;
        while (inner instanceof WrappedStateStore) {
            inner = ((WrappedStateStore<?, ?, ?>) inner).wrapped();
        }
        return inner;
    }

    private record Run(List<String> output, Map<String, List<String>> stores, List<StateStore> bytesStores,
                       boolean servedBySluice) {
    }
}
