package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.Test;

/**
 * An unchanged Kafka Streams test, as a user writes it, run through sluice-kafka-streams-test-utils: a DSL
 * word count. Its stores, the default one and an in-memory one, must be Sluice's, and its counts right.
 */
class TopologyTestDriverOnSluiceTest {

    @Test
    void wordCountRunsOnSluiceStores() {
        final StreamsBuilder builder = new StreamsBuilder();
        final KGroupedStream<String, String> words = builder.stream("lines", Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.split(" ")))
            .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()));
        words.count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"))
            .toStream().to("counts", Produced.with(Serdes.String(), Serdes.Long()));
        words.count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts-in-memory")
            .withStoreType(Materialized.StoreType.IN_MEMORY));

        final Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "drop-in-word-count");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), config)) {
            final TestInputTopic<String, String> lines =
                driver.createInputTopic("lines", new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, Long> counts =
                driver.createOutputTopic("counts", new StringDeserializer(), new LongDeserializer());

            lines.pipeInput("l1", "to be or not to be");
            lines.pipeInput("l2", "that is the question");
            lines.pipeInput("l3", "to be");

            final Map<String, Long> expected = Map.of("to", 3L, "be", 3L, "or", 1L, "not", 1L, "that", 1L,
                "is", 1L, "the", 1L, "question", 1L);
            assertEquals(expected, counts.readKeyValuesToMap());
            final KeyValueStore<String, Long> inMemory = driver.getKeyValueStore("counts-in-memory");
            expected.forEach((word, count) -> assertEquals(count, inMemory.get(word), word));

            final Map<String, StateStore> stores = driver.getAllStateStores();
            assertSluiceStoreUnder(stores.get("counts"));
            assertSluiceStoreUnder(stores.get("counts-in-memory"));
        }
    }

    /** Kafka Streams' metered, caching and logging layers, and a bytes store of Sluice's at the bottom. */
    private static void assertSluiceStoreUnder(final StateStore store) {
        final List<String> layers = new ArrayList<>();
        StateStore layer = store;
        layers.add(layer.getClass().getName());
        while (layer instanceof WrappedStateStore<?, ?, ?> wrapper) {
            layer = wrapper.wrapped();
            layers.add(layer.getClass().getName());
        }
        assertTrue(layers.get(0).startsWith("org.apache.kafka.streams.state.internals.Metered"),
            () -> store.name() + ": " + layers);
        assertTrue(layers.get(layers.size() - 1).startsWith("dev.sluice.streams.state.internals."),
            () -> store.name() + " is not served by a Sluice bytes store: " + layers);
    }
}
