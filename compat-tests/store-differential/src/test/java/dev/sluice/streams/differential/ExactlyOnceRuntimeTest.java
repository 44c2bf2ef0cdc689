package dev.sluice.streams.differential;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.sluice.streams.differential.InputScript.RandomRecordShape;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A count, a windowed aggregation and a stream-table join on Kafka Streams' own runtime
 * ({@link KafkaStreams}) with Sluice's stores, exactly-once v2, against a real broker. The expected
 * outputs come from TopologyTestDriver on Kafka Streams' default stores and the same input. With
 * caching off, the count and the windowed aggregation each read one partition, so their outputs must
 * match record for record; the join reads two partitions, whose interleaving the runtime chooses, so
 * it must match in the latest value per key.
 */
class ExactlyOnceRuntimeTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final String WORDS = "eos-words";
    private static final String WORD_COUNTS = "eos-word-counts";
    private static final String CLICKS = "eos-clicks";
    private static final String WINDOW_SUMS = "eos-click-window-sums";
    private static final String ORDERS = "eos-orders";
    private static final String CUSTOMERS = "eos-customers";
    private static final String ORDERS_JOINED = "eos-orders-joined";

    private static final Serde<String> STRING = Serdes.String();
    private static final Serde<Long> LONG = Serdes.Long();

    @TempDir
    Path stateDir;

    @Test
    void outputsOnSluiceStoresUnderExactlyOnceMatchTheReference() throws InterruptedException {
        final Scenario scenario = new Scenario("count, windowed sum and join", app(), input(),
            List.of(WORD_COUNTS, WINDOW_SUMS, ORDERS_JOINED), Set.of(StoreKind.KEY_VALUE, StoreKind.WINDOW),
            Map.of(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0));
        final List<OutputRecord> expected = DifferentialHarness.run(scenario, StoreStack.KAFKA_STREAMS, stateDir.resolve("reference")).outputs();

        for (final String topic : List.of(WORDS, CLICKS, ORDERS, CUSTOMERS, WORD_COUNTS, WINDOW_SUMS, ORDERS_JOINED)) {
            BROKER.createTopic(topic, 1);
        }
        BrokerRun.produce(BROKER.bootstrapServers(), scenario.input());
        final Properties props = BrokerRun.exactlyOnceProps(BROKER.bootstrapServers(), "eos-differential", stateDir.resolve("sluice"));
        props.putAll(scenario.config());
        // Both join inputs are in the broker before the start; waiting for both partitions to be
        // fetched makes the runtime interleave them by timestamp, as the driver did.
        props.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, 2_000L);
        StoreStack.SLUICE.configure(props);

        final List<OutputRecord> actual;
        try (KafkaStreams streams = new KafkaStreams(scenario.app().build(new StreamsConfig(props), StoreStack.SLUICE), props)) {
            BrokerRun.startAndAwaitRunning(streams);
            actual = BrokerRun.readCommitted(BROKER.bootstrapServers(), Set.of(WORD_COUNTS, WINDOW_SUMS, ORDERS_JOINED),
                read -> on(read, WORD_COUNTS).size() >= on(expected, WORD_COUNTS).size()
                    && on(read, WINDOW_SUMS).size() >= on(expected, WINDOW_SUMS).size()
                    && latestPerKey(on(read, ORDERS_JOINED)).equals(latestPerKey(on(expected, ORDERS_JOINED))));
            assertStoreServedBy(streams, "eos-word-counts-store", StoreKind.KEY_VALUE);
            assertStoreServedBy(streams, "eos-customers-store", StoreKind.KEY_VALUE);
            assertStoreServedBy(streams, "eos-click-window-sums-store", StoreKind.WINDOW);
        }

        assertFalse(on(expected, ORDERS_JOINED).isEmpty());
        assertEquals(on(expected, WORD_COUNTS), on(actual, WORD_COUNTS), "count, record for record");
        assertEquals(on(expected, WINDOW_SUMS), on(actual, WINDOW_SUMS), "windowed sum, record for record");
        assertEquals(latestPerKey(on(expected, ORDERS_JOINED)), latestPerKey(on(actual, ORDERS_JOINED)), "join, latest per key");
    }

    private static App app() {
        return App.dsl(builder -> {
            builder.stream(WORDS, Consumed.with(STRING, STRING))
                .groupByKey()
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("eos-word-counts-store"))
                .toStream()
                .to(WORD_COUNTS, Produced.with(STRING, LONG));
            builder.stream(CLICKS, Consumed.with(STRING, STRING))
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5)))
                .aggregate(() -> 0L, (key, value, sum) -> value == null ? sum : sum + Long.parseLong(value),
                    Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("eos-click-window-sums-store").withValueSerde(LONG))
                .toStream((windowed, sum) -> windowed.key() + "@" + windowed.window().start())
                .to(WINDOW_SUMS, Produced.with(STRING, LONG));
            final KTable<String, String> customers = builder.table(CUSTOMERS, Consumed.with(STRING, STRING),
                Materialized.as("eos-customers-store"));
            final KStream<String, String> orders = builder.stream(ORDERS, Consumed.with(STRING, STRING));
            orders.join(customers, (order, customer) -> order + "|" + customer).to(ORDERS_JOINED, Produced.with(STRING, STRING));
        });
    }

    /** Random counts and clicks (out of order and late included); join input in timestamp order. */
    private static InputScript input() {
        final InputScript script = new InputScript().random(DslScenarios.SEED, 200, new RandomRecordShape(List.of(WORDS, CLICKS), 6, 0.05,
            (topic, random) -> topic.equals(WORDS) ? "w" + random.nextInt(10) : Integer.toString(random.nextInt(100))));
        final Random random = new Random(DslScenarios.SEED);
        long timestamp = 0;
        for (int i = 0; i < 150; i++) {
            final String topic = random.nextInt(3) == 0 ? CUSTOMERS : ORDERS;
            timestamp += 1 + random.nextInt(1_000);
            script.pipe(topic, "k" + random.nextInt(6), topic + random.nextInt(100), timestamp);
        }
        return script;
    }

    private static void assertStoreServedBy(final KafkaStreams streams, final String store, final StoreKind kind) {
        final String implementation = StoreImplementationQuery.bottomStoreClass(streams, store);
        System.out.printf("exactly-once run: store %s (%s) is served by %s%s%n", store, kind, implementation,
            SluiceCoverage.serves(kind) ? "" : " (FALLBACK: Sluice does not serve " + kind + " stores yet)");
        assertEquals(SluiceCoverage.serves(kind), implementation.startsWith("dev.sluice."), store + " is served by " + implementation);
    }

    private static List<OutputRecord> on(final List<OutputRecord> records, final String topic) {
        return records.stream().filter(record -> record.topic().equals(topic)).toList();
    }

    private static Map<String, String> latestPerKey(final List<OutputRecord> records) {
        final Map<String, String> latest = new TreeMap<>();
        records.forEach(record -> latest.put(record.key(), record.value()));
        return latest;
    }
}
