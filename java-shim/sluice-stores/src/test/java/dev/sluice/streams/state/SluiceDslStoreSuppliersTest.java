package dev.sluice.streams.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.state.internals.SluiceHeadersKeyValueBytesStore;
import dev.sluice.streams.state.internals.SluiceKeyValueBytesStore;
import dev.sluice.streams.state.internals.SluiceTimestampedKeyValueBytesStore;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.ValueTimestampHeaders;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A DSL count on Sluice's stores gives what it gives on Kafka Streams' default stores. */
class SluiceDslStoreSuppliersTest {

    private static final List<String> WORDS = List.of("sluice", "gate", "sluice", "water", "gate", "sluice", "lock");

    @TempDir
    Path stateDir;

    @ParameterizedTest(name = "dsl.store.format={0}")
    @ValueSource(strings = {StreamsConfig.DSL_STORE_FORMAT_DEFAULT, StreamsConfig.DSL_STORE_FORMAT_HEADERS})
    void countGivesTheSameOutputAndStoreContentsAsTheDefaultStores(final String format) {
        final Run reference = run(props(format, null, "reference"), format);
        final Run sluice = run(props(format, SluiceDslStoreSuppliers.class, "sluice"), format);

        assertEquals(reference.output, sluice.output);
        assertEquals(reference.store, sluice.store);
        assertEquals(Map.of("sluice", 3L, "gate", 2L, "water", 1L, "lock", 1L), sluice.store);
        assertFalse(reference.bytesStore instanceof SluiceKeyValueBytesStore, "the reference run uses Kafka Streams' stores");
        assertInstanceOf(SluiceKeyValueBytesStore.class, sluice.bytesStore);
        if (format.equals(StreamsConfig.DSL_STORE_FORMAT_HEADERS)) {
            assertInstanceOf(SluiceHeadersKeyValueBytesStore.class, sluice.bytesStore);
        } else {
            assertInstanceOf(SluiceTimestampedKeyValueBytesStore.class, sluice.bytesStore);
        }
    }

    private Properties props(final String format, final Class<?> suppliers, final String run) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "word-count");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(run).toString());
        props.put(StreamsConfig.DSL_STORE_FORMAT_CONFIG, format);
        if (suppliers != null) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, suppliers);
        }
        return props;
    }

    private static Run run(final Properties props, final String format) {
        // DSL store suppliers are resolved when the topology is built, from the TopologyConfig.
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(props)));
        builder.stream("words", Consumed.with(Serdes.String(), Serdes.String()))
            .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to("counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), props)) {
            final TestInputTopic<String, String> input =
                driver.createInputTopic("words", new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, Long> output =
                driver.createOutputTopic("counts-out", new StringDeserializer(), new LongDeserializer());
            for (final String word : WORDS) {
                input.pipeInput(null, word);
            }
            final List<KeyValue<String, Long>> records = output.readKeyValuesToList();
            final Map<String, Long> contents = format.equals(StreamsConfig.DSL_STORE_FORMAT_HEADERS)
                ? contents(driver.<String, Long>getTimestampedKeyValueStoreWithHeaders("counts"), ValueTimestampHeaders::value)
                : contents(driver.<String, Long>getTimestampedKeyValueStore("counts"), ValueAndTimestamp::value);
            return new Run(records, contents, bytesStore(driver.getAllStateStores().get("counts")));
        }
    }

    private static <W> Map<String, Long> contents(final KeyValueStore<String, W> store, final Function<W, Long> value) {
        final Map<String, Long> contents = new TreeMap<>();
        try (KeyValueIterator<String, W> all = store.all()) {
            all.forEachRemaining(entry -> contents.put(entry.key, value.apply(entry.value)));
        }
        assertTrue(store.approximateNumEntries() > 0);
        return contents;
    }

    private static StateStore bytesStore(final StateStore store) {
        StateStore inner = store;
        while (inner instanceof WrappedStateStore) {
            inner = ((WrappedStateStore<?, ?, ?>) inner).wrapped();
        }
        return inner;
    }

    private static final class Run {
        final List<KeyValue<String, Long>> output;
        final Map<String, Long> store;
        final StateStore bytesStore;

        Run(final List<KeyValue<String, Long>> output, final Map<String, Long> store, final StateStore bytesStore) {
            this.output = output;
            this.store = store;
            this.bytesStore = bytesStore;
        }
    }
}
