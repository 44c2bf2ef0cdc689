package dev.sluice.compat.parity;

import dev.sluice.examples.foreignkeyjoin.OrderCustomers;
import dev.sluice.examples.globaltablejoin.ClickEnrichment;
import dev.sluice.examples.minutereport.MinuteReport;
import dev.sluice.examples.streamtablejoin.OrderEnrichment;
import dev.sluice.examples.windowedtotals.WindowedTotals;
import dev.sluice.examples.wordcount.WordCount;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The examples under test: each one's main class, its input topics and their partitions, its input,
 * how to print its output values, and how many output records a working run yields at the least.
 */
enum ParityApp {

    WORD_COUNT(WordCount.class.getName(), Map.of(WordCount.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.lines(WordCount.INPUT_TOPIC), ParityApp::longValue, 2_000),
    WINDOWED_TOTALS(WindowedTotals.class.getName(), Map.of(WindowedTotals.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.readings(WindowedTotals.INPUT_TOPIC), ParityApp::longValue, 150),
    ORDER_ENRICHMENT(OrderEnrichment.class.getName(), Map.of(OrderEnrichment.ORDERS_TOPIC, 3, OrderEnrichment.CUSTOMERS_TOPIC, 3),
        List.of(), inputs -> inputs.ordersAndTiers(OrderEnrichment.ORDERS_TOPIC, OrderEnrichment.CUSTOMERS_TOPIC),
        ParityApp::stringValue, 1_500),
    CLICK_ENRICHMENT(ClickEnrichment.class.getName(), Map.of(ClickEnrichment.CLICKS_TOPIC, 3, ClickEnrichment.PRODUCTS_TOPIC, 2),
        List.of(ClickEnrichment.PRODUCTS_TOPIC),
        inputs -> inputs.productsAndClicks(ClickEnrichment.PRODUCTS_TOPIC, ClickEnrichment.CLICKS_TOPIC),
        ParityApp::stringValue, 2_000),
    MINUTE_REPORT(MinuteReport.class.getName(), Map.of(MinuteReport.INPUT_TOPIC, 3), List.of(),
        inputs -> inputs.readings(MinuteReport.INPUT_TOPIC), ParityApp::stringValue, 150),
    ORDER_CUSTOMERS(OrderCustomers.class.getName(), Map.of(OrderCustomers.ORDERS_TOPIC, 3, OrderCustomers.CUSTOMERS_TOPIC, 2),
        List.of(), inputs -> inputs.customersAndOrders(OrderCustomers.CUSTOMERS_TOPIC, OrderCustomers.ORDERS_TOPIC),
        ParityApp::stringValue, 1_000);

    private final String mainClass;
    private final Map<String, Integer> inputTopics;
    private final List<String> globalTopics;
    private final Function<ParityInputs, List<InputRecord>> input;
    private final Function<byte[], String> valueText;
    private final int minimumOutput;

    ParityApp(final String mainClass, final Map<String, Integer> inputTopics, final List<String> globalTopics,
              final Function<ParityInputs, List<InputRecord>> input, final Function<byte[], String> valueText,
              final int minimumOutput) {
        this.mainClass = mainClass;
        this.inputTopics = inputTopics;
        this.globalTopics = globalTopics;
        this.input = input;
        this.valueText = valueText;
        this.minimumOutput = minimumOutput;
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
