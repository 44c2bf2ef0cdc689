package dev.sluice.streams.differential;

import static dev.sluice.streams.differential.StoreKind.KEY_VALUE;
import static dev.sluice.streams.differential.StoreKind.SESSION;
import static dev.sluice.streams.differential.StoreKind.SUPPRESSION_BUFFER;
import static dev.sluice.streams.differential.StoreKind.VERSIONED;
import static dev.sluice.streams.differential.StoreKind.WINDOW;

import dev.sluice.streams.differential.InputScript.RandomRecordShape;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.ValueJoinerWithStreamAndMappedKey;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.WindowStore;

/** The DSL applications of the differential suite, each with its input. */
final class DslScenarios {

    static final long SEED = 892L;

    private static final Serde<String> STRING = Serdes.String();
    private static final Serde<Long> LONG = Serdes.Long();
    private static final Consumed<String, String> STRINGS = Consumed.with(STRING, STRING);
    private static final Produced<String, Long> LONGS_OUT = Produced.with(STRING, LONG);
    private static final Produced<String, String> STRINGS_OUT = Produced.with(STRING, STRING);

    private DslScenarios() {
    }

    static Stream<Scenario> all() {
        return Stream.of(
            Stream.of(count(), count().withConfig(StreamsConfig.DSL_STORE_FORMAT_CONFIG, StreamsConfig.DSL_STORE_FORMAT_HEADERS),
                aggregate(), streamReduce(), tableReduceWithSubtractor(),
                tumblingWindowCount(), hoppingWindowSum(), slidingWindowSum(), sessionSum(),
                tumblingWindowCountEmitFinal(), hoppingWindowSumEmitFinal(), slidingWindowSumEmitFinal(),
                sessionSumEmitFinal(),
                tumblingWindowCountEmitFinal().withConfig(StreamsConfig.DSL_STORE_FORMAT_CONFIG, StreamsConfig.DSL_STORE_FORMAT_HEADERS),
                slidingWindowSumEmitFinal().withConfig(StreamsConfig.DSL_STORE_FORMAT_CONFIG, StreamsConfig.DSL_STORE_FORMAT_HEADERS),
                sessionSumEmitFinal().withConfig(StreamsConfig.DSL_STORE_FORMAT_CONFIG, StreamsConfig.DSL_STORE_FORMAT_HEADERS),
                suppressUntilWindowCloses(), suppressUntilTimeLimit(),
                streamTableJoins(), foreignKeyJoin(), globalTableJoins(), versionedTableJoin()),
            Stream.of(JoinType.values()).map(DslScenarios::tableTableJoin),
            Stream.of(JoinType.values()).map(DslScenarios::streamStreamJoin)
        ).flatMap(scenarios -> scenarios);
    }

    enum JoinType { INNER, LEFT, OUTER }

    static Scenario count() {
        return Scenario.of("count", App.dsl(builder -> builder.stream("words", STRINGS)
                .groupBy((key, word) -> word, Grouped.with(STRING, STRING))
                .count(Materialized.as("word-counts"))
                .toStream()
                .to("word-counts-out", LONGS_OUT)),
            edgeCases("words").random(SEED, 300,
                new RandomRecordShape(List.of("words"), 5, 0.05, (topic, random) -> "w" + random.nextInt(15))),
            List.of("word-counts-out"), KEY_VALUE);
    }

    static Scenario aggregate() {
        return Scenario.of("aggregate", App.dsl(builder -> builder.stream("amounts", STRINGS)
                .groupByKey()
                .aggregate(() -> 0L, (key, amount, sum) -> sum + amount(amount),
                    Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("sums").withValueSerde(LONG))
                .toStream()
                .to("sums-out", LONGS_OUT)),
            numbers("amounts", 0.05), List.of("sums-out"), KEY_VALUE);
    }

    static Scenario streamReduce() {
        return Scenario.of("reduce", App.dsl(builder -> builder.stream("readings", STRINGS)
                .groupByKey()
                .reduce((max, reading) -> Integer.parseInt(reading) > Integer.parseInt(max) ? reading : max,
                    Materialized.as("max-readings"))
                .toStream()
                .to("max-readings-out", STRINGS_OUT)),
            numbers("readings", 0.05), List.of("max-readings-out"), KEY_VALUE);
    }

    /** A table regrouped and reduced with an adder and a subtractor: updates and tombstones retract. */
    static Scenario tableReduceWithSubtractor() {
        return Scenario.of("table reduce with subtractor", App.dsl(builder -> builder.table("balances", STRINGS, Materialized.as("balances"))
                .groupBy((account, balance) -> KeyValue.pair(balance.split(":")[0], Long.parseLong(balance.split(":")[1])),
                    Grouped.with(STRING, LONG))
                .reduce(Long::sum, (total, old) -> total - old,
                    Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("region-totals").withValueSerde(LONG))
                .toStream()
                .to("region-totals-out", LONGS_OUT)),
            new InputScript().random(SEED, 300, new RandomRecordShape(List.of("balances"), 12, 0.15,
                (topic, random) -> "r" + random.nextInt(4) + ":" + random.nextInt(1000))),
            List.of("region-totals-out"), KEY_VALUE);
    }

    static Scenario tumblingWindowCount() {
        return Scenario.of("tumbling window count", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5)))
                .count(Materialized.as("tumbling-counts"))
                .toStream(DslScenarios::windowKey)
                .to("tumbling-counts-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("tumbling-counts-out"), WINDOW);
    }

    static Scenario hoppingWindowSum() {
        return Scenario.of("hopping window sum", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(3)).advanceBy(Duration.ofSeconds(5)))
                .aggregate(() -> 0L, (key, value, sum) -> sum + amount(value),
                    Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("hopping-sums").withValueSerde(LONG))
                .toStream(DslScenarios::windowKey)
                .to("hopping-sums-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("hopping-sums-out"), WINDOW);
    }

    static Scenario slidingWindowSum() {
        return Scenario.of("sliding window sum", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(5), Duration.ofSeconds(5)))
                .aggregate(() -> 0L, (key, value, sum) -> sum + amount(value),
                    Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("sliding-sums").withValueSerde(LONG))
                .toStream(DslScenarios::windowKey)
                .to("sliding-sums-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("sliding-sums-out"), WINDOW);
    }

    static Scenario sessionSum() {
        return Scenario.of("session window sum", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(3), Duration.ofSeconds(2)))
                .aggregate(() -> 0L, (key, value, sum) -> sum + amount(value), (key, left, right) -> left + right,
                    Materialized.<String, Long, SessionStore<Bytes, byte[]>>as("session-sums").withValueSerde(LONG))
                .toStream((windowed, sum) -> windowed.key() + "@" + windowed.window().start() + "-" + windowed.window().end())
                .to("session-sums-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("session-sums-out"), SESSION);
    }

    /*
     * Emit-final (onWindowClose) aggregations: Kafka Streams gives them its time-ordered window and session
     * stores, with its time-ordered caching layer over the window stores, and emits each closed window from
     * a time-range read of that layer.
     */

    static Scenario tumblingWindowCountEmitFinal() {
        return Scenario.of("tumbling window count, emit final", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .count(Materialized.as("final-tumbling-counts"))
                .toStream(DslScenarios::windowKey)
                .to("final-tumbling-counts-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("final-tumbling-counts-out"), WINDOW);
    }

    static Scenario hoppingWindowSumEmitFinal() {
        return Scenario.of("hopping window sum, emit final", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(3)).advanceBy(Duration.ofSeconds(5)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .aggregate(() -> 0L, (key, value, sum) -> sum + amount(value),
                    Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("final-hopping-sums").withValueSerde(LONG))
                .toStream(DslScenarios::windowKey)
                .to("final-hopping-sums-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("final-hopping-sums-out"), WINDOW);
    }

    /** Sliding windows look windows up by key, so Kafka Streams' time-ordered store keeps a key index for them. */
    static Scenario slidingWindowSumEmitFinal() {
        return Scenario.of("sliding window sum, emit final", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(5), Duration.ofSeconds(5)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .aggregate(() -> 0L, (key, value, sum) -> sum + amount(value),
                    Materialized.<String, Long, WindowStore<Bytes, byte[]>>as("final-sliding-sums").withValueSerde(LONG))
                .toStream(DslScenarios::windowKey)
                .to("final-sliding-sums-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("final-sliding-sums-out"), WINDOW);
    }

    static Scenario sessionSumEmitFinal() {
        return Scenario.of("session window sum, emit final", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(3), Duration.ofSeconds(2)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .aggregate(() -> 0L, (key, value, sum) -> sum + amount(value), (key, left, right) -> left + right,
                    Materialized.<String, Long, SessionStore<Bytes, byte[]>>as("final-session-sums").withValueSerde(LONG))
                .toStream((windowed, sum) -> windowed.key() + "@" + windowed.window().start() + "-" + windowed.window().end())
                .to("final-session-sums-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("final-session-sums-out"), SESSION);
    }

    static Scenario suppressUntilWindowCloses() {
        return Scenario.of("suppress untilWindowCloses", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(2)))
                .count(Materialized.as("final-counts"))
                .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
                .toStream(DslScenarios::windowKey)
                .to("final-counts-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("final-counts-out"), WINDOW, SUPPRESSION_BUFFER);
    }

    static Scenario suppressUntilTimeLimit() {
        return Scenario.of("suppress untilTimeLimit", App.dsl(builder -> builder.stream("clicks", STRINGS)
                .groupByKey()
                .count(Materialized.as("rate-limited-counts"))
                .suppress(Suppressed.untilTimeLimit(Duration.ofSeconds(5), Suppressed.BufferConfig.maxRecords(4).emitEarlyWhenFull()))
                .toStream()
                .to("rate-limited-counts-out", LONGS_OUT)),
            numbers("clicks", 0.02), List.of("rate-limited-counts-out"), KEY_VALUE, SUPPRESSION_BUFFER);
    }

    static Scenario streamTableJoins() {
        return Scenario.of("stream-table join and left join", App.dsl(builder -> {
                final KTable<String, String> customers = builder.table("customers", STRINGS, Materialized.as("customers"));
                final KStream<String, String> orders = builder.stream("orders", STRINGS);
                orders.join(customers, (order, customer) -> order + "|" + customer).to("orders-joined", STRINGS_OUT);
                orders.leftJoin(customers, (order, customer) -> order + "|" + customer).to("orders-left-joined", STRINGS_OUT);
            }),
            twoTopics("orders", "customers"), List.of("orders-joined", "orders-left-joined"), KEY_VALUE);
    }

    static Scenario tableTableJoin(final JoinType type) {
        return Scenario.of("table-table " + type.name().toLowerCase() + " join", App.dsl(builder -> {
                final KTable<String, String> left = builder.table("left", STRINGS, Materialized.as("left-table"));
                final KTable<String, String> right = builder.table("right", STRINGS, Materialized.as("right-table"));
                final Materialized<String, String, KeyValueStore<Bytes, byte[]>> joined = Materialized.as("joined-table");
                final KTable<String, String> result = switch (type) {
                    case INNER -> left.join(right, (l, r) -> l + "+" + r, joined);
                    case LEFT -> left.leftJoin(right, (l, r) -> l + "+" + r, joined);
                    case OUTER -> left.outerJoin(right, (l, r) -> l + "+" + r, joined);
                };
                result.toStream().to("joined-table-out", STRINGS_OUT);
            }),
            twoTopics("left", "right"), List.of("joined-table-out"), KEY_VALUE);
    }

    static Scenario streamStreamJoin(final JoinType type) {
        final StoreKind[] kinds = type == JoinType.INNER ? new StoreKind[0] : new StoreKind[] {KEY_VALUE};
        return Scenario.of("stream-stream " + type.name().toLowerCase() + " join", App.dsl(builder -> {
                final KStream<String, String> left = builder.stream("left", STRINGS);
                final KStream<String, String> right = builder.stream("right", STRINGS);
                final JoinWindows window = JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(5), Duration.ofSeconds(2));
                final StreamJoined<String, String, String> stores = StreamJoined.with(STRING, STRING, STRING).withStoreName("stream-join");
                final KStream<String, String> result = switch (type) {
                    case INNER -> left.join(right, (l, r) -> l + "+" + r, window, stores);
                    case LEFT -> left.leftJoin(right, (l, r) -> l + "+" + r, window, stores);
                    case OUTER -> left.outerJoin(right, (l, r) -> l + "+" + r, window, stores);
                };
                result.to("stream-join-out", STRINGS_OUT);
            }),
            twoTopics("left", "right"), List.of("stream-join-out"), WINDOW, kinds);
    }

    static Scenario foreignKeyJoin() {
        return Scenario.of("foreign-key join", App.dsl(builder -> {
                final KTable<String, String> orders = builder.table("orders", STRINGS, Materialized.as("orders-table"));
                final KTable<String, String> products = builder.table("products", STRINGS, Materialized.as("products-table"));
                orders.join(products, order -> order.split(":")[0], (order, product) -> order + "|" + product,
                        Materialized.as("orders-with-products"))
                    .toStream()
                    .to("orders-with-products-out", STRINGS_OUT);
            }),
            new InputScript().random(SEED, 300, new RandomRecordShape(List.of("orders", "products"), 8, 0.1,
                (topic, random) -> topic.equals("orders") ? "k" + random.nextInt(8) + ":" + random.nextInt(10) : "product" + random.nextInt(100))),
            List.of("orders-with-products-out"), KEY_VALUE);
    }

    static Scenario globalTableJoins() {
        return Scenario.of("stream-GlobalKTable join with stream and mapped key", App.dsl(builder -> {
                final GlobalKTable<String, String> regions = builder.globalTable("regions", STRINGS, Materialized.as("regions"));
                final KStream<String, String> visits = builder.stream("visits", STRINGS);
                final ValueJoinerWithStreamAndMappedKey<String, String, String, String, String> joiner =
                    (visitor, region, visit, regionName) -> visitor + "/" + region + ":" + visit + "|" + regionName;
                visits.join(regions, DslScenarios::region, joiner).to("visits-joined", STRINGS_OUT);
                visits.leftJoin(regions, DslScenarios::region, joiner).to("visits-left-joined", STRINGS_OUT);
            }),
            new InputScript().random(SEED, 300, new RandomRecordShape(List.of("visits", "regions"), 8, 0.1,
                (topic, random) -> topic.equals("visits") ? "k" + random.nextInt(8) + ":" + random.nextInt(10) : "region" + random.nextInt(100))),
            List.of("visits-joined", "visits-left-joined"), KEY_VALUE);
    }

    /** A stream joined with a versioned table: each record meets the table as of its own timestamp. */
    static Scenario versionedTableJoin() {
        return Scenario.of("stream-versioned table join", (config, stores) -> {
                final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(config));
                final KTable<String, String> rates = builder.table("rates", STRINGS,
                    Materialized.<String, String>as(stores.persistentVersionedKeyValueStore("rates", Duration.ofMinutes(1)))
                        .withKeySerde(STRING).withValueSerde(STRING));
                builder.stream("payments", STRINGS)
                    .join(rates, (payment, rate) -> payment + "@" + rate)
                    .to("payments-converted", STRINGS_OUT);
                return builder.build();
            },
            twoTopics("payments", "rates"), List.of("payments-converted"), VERSIONED);
    }

    /** Handcrafted: an update, an out-of-order record past the grace periods, a tombstone, a null key. */
    private static InputScript edgeCases(final String topic) {
        return new InputScript()
            .pipe(topic, "edge", "1", 0)
            .pipe(topic, "edge", "2", 20_000)
            .pipe(topic, "edge", "3", 5_000)
            .pipe(topic, "edge", null, 21_000)
            .pipe(topic, null, "4", 21_500);
    }

    private static InputScript numbers(final String topic, final double tombstoneRate) {
        return edgeCases(topic).random(SEED, 300, new RandomRecordShape(List.of(topic), 6, tombstoneRate,
            (t, random) -> Integer.toString(random.nextInt(100))));
    }

    private static InputScript twoTopics(final String first, final String second) {
        return new InputScript().random(SEED, 300, new RandomRecordShape(List.of(first, second), 6, 0.1,
            (topic, random) -> topic + random.nextInt(100)));
    }

    /** Stream aggregations see tombstones too (windowed ones pass them to the aggregator): count them as 0. */
    private static long amount(final String value) {
        return value == null ? 0 : Long.parseLong(value);
    }

    /** A stream tombstone has no foreign key to look up. */
    private static String region(final String visitor, final String visit) {
        return visit == null ? null : visit.split(":")[0];
    }

    private static String windowKey(final Windowed<String> windowed, final Object value) {
        return windowed.key() + "@" + windowed.window().start();
    }
}
