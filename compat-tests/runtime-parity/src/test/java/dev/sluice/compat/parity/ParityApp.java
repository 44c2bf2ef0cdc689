package dev.sluice.compat.parity;

import dev.sluice.compat.parity.apps.CogroupedTotals;
import dev.sluice.compat.parity.apps.OptimizedTopology;
import dev.sluice.compat.parity.apps.Repartitions;
import dev.sluice.compat.parity.apps.SessionActivity;
import dev.sluice.compat.parity.apps.SlidingAndFinalWindows;
import dev.sluice.compat.parity.apps.StreamStreamJoins;
import dev.sluice.compat.parity.apps.TableJoins;
import dev.sluice.compat.parity.apps.VersionedTableJoins;
import dev.sluice.examples.foreignkeyjoin.OrderCustomers;
import dev.sluice.examples.globaltablejoin.ClickEnrichment;
import dev.sluice.examples.minutereport.MinuteReport;
import dev.sluice.examples.streamtablejoin.OrderEnrichment;
import dev.sluice.examples.windowedtotals.WindowedTotals;
import dev.sluice.examples.wordcount.WordCount;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The examples under test: each one's main class, its input topics and their partitions, its input,
 * how to print its output values, how many output records a working run yields at the least, and the
 * configs that make its output a function of its input.
 */
enum ParityApp {

    WORD_COUNT(WordCount.class.getName(), Map.of(WordCount.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.lines(WordCount.INPUT_TOPIC), ParityApp::longValue, 2_000, Map.of()),
    WINDOWED_TOTALS(WindowedTotals.class.getName(), Map.of(WindowedTotals.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.readings(WindowedTotals.INPUT_TOPIC), ParityApp::longValue, 150, Map.of()),
    ORDER_ENRICHMENT(OrderEnrichment.class.getName(), Map.of(OrderEnrichment.ORDERS_TOPIC, 3, OrderEnrichment.CUSTOMERS_TOPIC, 3),
        List.of(), inputs -> inputs.ordersAndTiers(OrderEnrichment.ORDERS_TOPIC, OrderEnrichment.CUSTOMERS_TOPIC),
        ParityApp::stringValue, 1_500, Map.of()),
    CLICK_ENRICHMENT(ClickEnrichment.class.getName(), Map.of(ClickEnrichment.CLICKS_TOPIC, 3, ClickEnrichment.PRODUCTS_TOPIC, 2),
        List.of(ClickEnrichment.PRODUCTS_TOPIC),
        inputs -> inputs.productsAndClicks(ClickEnrichment.PRODUCTS_TOPIC, ClickEnrichment.CLICKS_TOPIC),
        ParityApp::stringValue, 2_000, Map.of()),
    MINUTE_REPORT(MinuteReport.class.getName(), Map.of(MinuteReport.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.readings(MinuteReport.INPUT_TOPIC), ParityApp::stringValue, 150, Map.of()),
    ORDER_CUSTOMERS(OrderCustomers.class.getName(), Map.of(OrderCustomers.ORDERS_TOPIC, 3, OrderCustomers.CUSTOMERS_TOPIC, 2),
        List.of(), inputs -> inputs.customersAndOrders(OrderCustomers.CUSTOMERS_TOPIC, OrderCustomers.ORDERS_TOPIC),
        ParityApp::stringValue, 1_000, Map.of()),
    STREAM_STREAM_JOINS(StreamStreamJoins.class.getName(),
        Map.of(StreamStreamJoins.LEFT_TOPIC, 3, StreamStreamJoins.RIGHT_TOPIC, 3), List.of(),
        inputs -> inputs.streamPairs(StreamStreamJoins.LEFT_TOPIC, StreamStreamJoins.RIGHT_TOPIC), ParityApp::stringValue, 2_000,
        // Left and outer joins emit a record that found no partner when stream time closes its window,
        // but look for such records at most once a second of wall-clock time by default.
        Map.of(StreamsConfig.InternalConfig.EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX, "0")),
    COGROUPED_TOTALS(CogroupedTotals.class.getName(),
        Map.of(CogroupedTotals.CLICKS_TOPIC, 3, CogroupedTotals.PURCHASES_TOPIC, 3), List.of(),
        inputs -> inputs.clicksAndPurchases(CogroupedTotals.CLICKS_TOPIC, CogroupedTotals.PURCHASES_TOPIC),
        ParityApp::stringValue, 4_000, Map.of()),
    SESSION_ACTIVITY(SessionActivity.class.getName(), Map.of(SessionActivity.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.sessionActivity(SessionActivity.INPUT_TOPIC), ParityApp::stringValue, 2_000, Map.of()),
    SLIDING_AND_FINAL_WINDOWS(SlidingAndFinalWindows.class.getName(), Map.of(SlidingAndFinalWindows.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.readings(SlidingAndFinalWindows.INPUT_TOPIC), ParityApp::stringValue, 2_400,
        // Windows that emit on close look for closed windows at most once a second of wall-clock time by default.
        Map.of(StreamsConfig.InternalConfig.EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION, "0")),
    VERSIONED_TABLE_JOINS(VersionedTableJoins.class.getName(),
        Map.of(VersionedTableJoins.ORDERS_TOPIC, 3, VersionedTableJoins.TIERS_TOPIC, 3), List.of(),
        inputs -> inputs.ordersAndVersionedTiers(VersionedTableJoins.ORDERS_TOPIC, VersionedTableJoins.TIERS_TOPIC),
        ParityApp::stringValue, 2_000, Map.of()),
    REPARTITIONS(Repartitions.class.getName(), Map.of(Repartitions.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.readings(Repartitions.INPUT_TOPIC), ParityApp::stringValue, 7_000, Map.of()),
    TABLE_JOINS(TableJoins.class.getName(), Map.of(TableJoins.TIERS_TOPIC, 3, TableJoins.BALANCES_TOPIC, 3), List.of(),
        inputs -> inputs.tiersAndBalances(TableJoins.TIERS_TOPIC, TableJoins.BALANCES_TOPIC), ParityApp::stringValue, 6_000,
        Map.of()),
    OPTIMIZED_TOPOLOGY(OptimizedTopology.class.getName(),
        Map.of(OptimizedTopology.READINGS_TOPIC, 3, OptimizedTopology.SENSORS_TOPIC, 3), List.of(),
        inputs -> inputs.sensorNamesAndReadings(OptimizedTopology.SENSORS_TOPIC, OptimizedTopology.READINGS_TOPIC),
        ParityApp::stringValue, 7_000, Map.of(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE));

    private final String mainClass;
    private final Map<String, Integer> inputTopics;
    private final List<String> globalTopics;
    private final Function<ParityInputs, List<InputRecord>> input;
    private final Function<byte[], String> valueText;
    private final int minimumOutput;
    private final Map<String, String> configs;

    ParityApp(final String mainClass, final Map<String, Integer> inputTopics, final List<String> globalTopics,
              final Function<ParityInputs, List<InputRecord>> input, final Function<byte[], String> valueText,
              final int minimumOutput, final Map<String, String> configs) {
        this.mainClass = mainClass;
        this.inputTopics = inputTopics;
        this.globalTopics = globalTopics;
        this.input = input;
        this.valueText = valueText;
        this.minimumOutput = minimumOutput;
        this.configs = configs;
    }

    static final String SELECTION_PROPERTY = "sluice.parity.apps";

    /** The applications {@code sluice.parity.apps} names by id, comma-separated; all of them without it. */
    static List<ParityApp> selected() {
        final String selection = System.getProperty(SELECTION_PROPERTY, "").trim();
        if (selection.isEmpty()) {
            return List.of(values());
        }
        return Arrays.stream(selection.split(",")).map(String::trim).map(id -> Arrays.stream(values())
            .filter(app -> app.id().equals(id)).findFirst()
            .orElseThrow(() -> new IllegalArgumentException(SELECTION_PROPERTY + " names no application " + id + "; they are "
                + Arrays.stream(values()).map(ParityApp::id).toList()))).toList();
    }

    String mainClass() {
        return mainClass;
    }

    /** Every input topic and its partition count. */
    Map<String, Integer> inputTopics() {
        return inputTopics;
    }

    /**
     * The input topics the application's consumer group reads, whose committed offsets say how far it
     * got; a global table's topic is read outside the group.
     */
    List<String> groupInputTopics() {
        return inputTopics.keySet().stream().filter(topic -> !globalTopics.contains(topic)).sorted().toList();
    }

    List<InputRecord> input(final ParityInputs inputs) {
        return input.apply(inputs);
    }

    int minimumOutput() {
        return minimumOutput;
    }

    /** Streams configs the application runs with on every runtime, beyond the harness's own. */
    Map<String, String> configs() {
        return configs;
    }

    String id() {
        return name().toLowerCase().replace('_', '-');
    }

    /** An output record as the failure messages print it: its key, value and timestamp. */
    String describe(final OutputRecord record) {
        return "(" + text(record.key(), ParityApp::stringValue) + ", " + text(record.value(), valueText) + ", @"
            + record.timestamp() + ")";
    }

    static String keyText(final byte[] key) {
        return text(key, ParityApp::stringValue);
    }

    private static String text(final byte[] bytes, final Function<byte[], String> decode) {
        return bytes == null ? "null" : decode.apply(bytes);
    }

    private static String stringValue(final byte[] bytes) {
        return '"' + new String(bytes, StandardCharsets.UTF_8) + '"';
    }

    private static String longValue(final byte[] bytes) {
        return bytes.length == Long.BYTES ? Long.toString(ByteBuffer.wrap(bytes).getLong()) : stringValue(bytes);
    }
}
