package dev.sluice.bench.apps;

import dev.sluice.examples.foreignkeyjoin.OrderCustomers;
import dev.sluice.examples.streamtablejoin.OrderEnrichment;
import dev.sluice.examples.windowedtotals.WindowedTotals;
import dev.sluice.examples.wordcount.WordCount;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.serialization.LongSerializer;

/**
 * The examples the benchmark times, unchanged: each one's main class and input topics, an input of a
 * given size, and the final output value of every key that input must leave (the check a run passes
 * before its figures count). Inputs are deterministic for a size, and chosen so that the final values
 * do not depend on timing: tables are written before the events that join them, each foreign-key order
 * once, windows' events in time order and every window closed at the end.
 */
enum Application {

    /** Lines of ten words from a vocabulary of twenty thousand: a repartition and a counting store. */
    WORD_COUNT("word-count", WordCount.class.getName(), List.of(WordCount.INPUT_TOPIC)) {
        @Override
        Input input(final int lines, final int partitions, final long start, final long step) {
            final Random random = new Random(SEED);
            final List<BenchRecord> events = new ArrayList<>(lines);
            final StringBuilder line = new StringBuilder();
            for (int i = 0; i < lines; i++) {
                line.setLength(0);
                for (int w = 0; w < 10; w++) {
                    line.append(w == 0 ? "" : " ").append("word").append(random.nextInt(20_000));
                }
                events.add(new BenchRecord(WordCount.INPUT_TOPIC, i % partitions, null, utf8(line.toString()), start + i * step));
            }
            return new Input(List.of(), events, List.of());
        }

        @Override
        Map<String, String> expected(final Input input) {
            final Map<String, Long> counts = new HashMap<>();
            for (final BenchRecord record : input.events()) {
                for (final String word : new String(record.value(), StandardCharsets.UTF_8).split(" ")) {
                    counts.merge(word, 1L, Long::sum);
                }
            }
            return texts(counts);
        }

        @Override
        String valueText(final byte[] value) {
            return longText(value);
        }
    },

    /**
     * Readings of up to a hundred thousand sensors in time order, summed per one-minute window and
     * emitted once a window closes; a record far ahead in each partition closes the last windows.
     */
    WINDOWED_TOTALS("windowed-totals", WindowedTotals.class.getName(), List.of(WindowedTotals.INPUT_TOPIC)) {
        @Override
        Input input(final int events, final int partitions, final long start, final long step) {
            final Random random = new Random(SEED);
            final int sensors = Math.max(10, Math.min(100_000, events / 20));
            final List<BenchRecord> readings = new ArrayList<>(events);
            for (int i = 0; i < events; i++) {
                readings.add(new BenchRecord(WindowedTotals.INPUT_TOPIC, null, utf8("sensor-" + random.nextInt(sensors)),
                    LONGS.serialize(null, 1L + random.nextInt(100)), start + i * step));
            }
            final long closingTime = start + events * step + WINDOW_CLOSES_AFTER;
            final List<BenchRecord> closing = new ArrayList<>();
            for (int partition = 0; partition < partitions; partition++) {
                closing.add(new BenchRecord(WindowedTotals.INPUT_TOPIC, partition, utf8(CLOSING_KEY + partition),
                    LONGS.serialize(null, 0L), closingTime));
            }
            return new Input(List.of(), readings, closing);
        }

        @Override
        Map<String, String> expected(final Input input) {
            final long window = WindowedTotals.WINDOW.toMillis();
            final Map<String, Long> totals = new HashMap<>();
            for (final BenchRecord record : input.events()) {
                final long windowStart = record.timestamp() - record.timestamp() % window;
                totals.merge(new String(record.key(), StandardCharsets.UTF_8) + "@" + windowStart,
                    ByteBuffer.wrap(record.value()).getLong(), Long::sum);
            }
            return texts(totals);
        }

        @Override
        String valueText(final byte[] value) {
            return longText(value);
        }

        @Override
        boolean eventTime() {
            return true;
        }

        @Override
        long closesAt(final String outputKey) {
            return Long.parseLong(outputKey.substring(outputKey.lastIndexOf('@') + 1)) + WINDOW_CLOSES_AFTER;
        }
    },

    /** Orders joined with their customer's tier from a table written first; a tenth of the customers have none. */
    ORDER_ENRICHMENT("stream-table-join", OrderEnrichment.class.getName(),
        List.of(OrderEnrichment.CUSTOMERS_TOPIC, OrderEnrichment.ORDERS_TOPIC)) {
        @Override
        Input input(final int orders, final int partitions, final long start, final long step) {
            final Random random = new Random(SEED);
            final int customers = Math.max(10, Math.min(100_000, orders / 10));
            final List<BenchRecord> tiers = new ArrayList<>();
            for (int c = 0; c < customers; c++) {
                if (c % 10 != 0) {
                    tiers.add(new BenchRecord(OrderEnrichment.CUSTOMERS_TOPIC, null, utf8("customer-" + c),
                        utf8(TIERS[random.nextInt(TIERS.length)]), start - 60_000));
                }
            }
            final List<BenchRecord> events = new ArrayList<>(orders);
            for (int o = 0; o < orders; o++) {
                events.add(new BenchRecord(OrderEnrichment.ORDERS_TOPIC, null, utf8("customer-" + random.nextInt(customers)),
                    LONGS.serialize(null, 1L + random.nextInt(500)), start + o * step));
            }
            return new Input(tiers, events, List.of());
        }

        @Override
        Map<String, String> expected(final Input input) {
            final Map<String, String> tiers = new HashMap<>();
            input.tables().forEach(tier -> tiers.put(text(tier.key()), text(tier.value())));
            final Map<String, String> enriched = new HashMap<>();
            for (final BenchRecord order : input.events()) {
                final String tier = tiers.get(text(order.key()));
                if (tier != null) {
                    enriched.put(text(order.key()), ByteBuffer.wrap(order.value()).getLong() + " for a " + tier + " customer");
                }
            }
            return enriched;
        }
    },

    /** Orders, each written once, joined by the customer id inside them with customers written first, inner and left. */
    ORDER_CUSTOMERS("foreign-key-join", OrderCustomers.class.getName(),
        List.of(OrderCustomers.CUSTOMERS_TOPIC, OrderCustomers.ORDERS_TOPIC)) {
        @Override
        Input input(final int orders, final int partitions, final long start, final long step) {
            final Random random = new Random(SEED);
            final int customers = Math.max(10, Math.min(10_000, orders / 10));
            final List<BenchRecord> names = new ArrayList<>(customers);
            for (int c = 0; c < customers; c++) {
                names.add(new BenchRecord(OrderCustomers.CUSTOMERS_TOPIC, null, utf8("customer-" + c), utf8("name " + c),
                    start - 60_000));
            }
            final List<BenchRecord> events = new ArrayList<>(orders);
            for (int o = 0; o < orders; o++) {
                // A tenth of the orders name a customer nobody knows.
                final String order = "customer-" + random.nextInt(customers + customers / 10) + ":" + (1 + random.nextInt(500));
                events.add(new BenchRecord(OrderCustomers.ORDERS_TOPIC, null, utf8("order-" + o), utf8(order), start + o * step));
            }
            return new Input(names, events, List.of());
        }

        @Override
        Map<String, String> expected(final Input input) {
            final Map<String, String> names = new HashMap<>();
            input.tables().forEach(customer -> names.put(text(customer.key()), text(customer.value())));
            final Map<String, String> joined = new HashMap<>();
            for (final BenchRecord record : input.events()) {
                final String order = text(record.value());
                final String amount = order.substring(order.indexOf(':') + 1);
                final String name = names.get(order.substring(0, order.indexOf(':')));
                if (name != null) {
                    joined.put(text(record.key()) + "/inner", amount + " by " + name);
                }
                joined.put(text(record.key()) + "/left", amount + " by " + (name == null ? "nobody" : name));
            }
            return joined;
        }
    };

    private static final long SEED = 17;
    private static final String[] TIERS = {"bronze", "silver", "gold", "platinum"};
    private static final String CLOSING_KEY = "closing-";
    private static final long WINDOW_CLOSES_AFTER = WindowedTotals.WINDOW.toMillis() + WindowedTotals.GRACE.toMillis();
    private static final LongSerializer LONGS = new LongSerializer();

    private final String id;
    private final String mainClass;
    private final List<String> inputTopics;

    Application(final String id, final String mainClass, final List<String> inputTopics) {
        this.id = id;
        this.mainClass = mainClass;
        this.inputTopics = inputTopics;
    }

    String id() {
        return id;
    }

    String mainClass() {
        return mainClass;
    }

    List<String> inputTopics() {
        return inputTopics;
    }

    /**
     * {@code size} events (lines, readings, orders) for topics of {@code partitions} partitions, the
     * {@code i}th at {@code start + i * step}, and the tables and closing records they need.
     */
    abstract Input input(int size, int partitions, long start, long step);

    /** The final output value of every output key, as {@link #valueText} prints it. */
    abstract Map<String, String> expected(Input input);

    /** An output value as {@link #expected} prints it. */
    String valueText(final byte[] value) {
        return text(value);
    }

    /**
     * Whether the output follows the events' own timestamps rather than the wall clock, so that a paced
     * run keeps the generated ones; when true, an output record is due once the events reach
     * {@link #closesAt}, otherwise at its own timestamp.
     */
    boolean eventTime() {
        return false;
    }

    /** For an event-time application: the event time at which the output record of {@code outputKey} is due. */
    long closesAt(final String outputKey) {
        throw new UnsupportedOperationException(id + " follows the wall clock");
    }

    static String text(final byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private static String longText(final byte[] value) {
        return value == null ? null : Long.toString(ByteBuffer.wrap(value).getLong());
    }

    private static byte[] utf8(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static Map<String, String> texts(final Map<String, Long> values) {
        final Map<String, String> texts = new HashMap<>(values.size() * 2);
        values.forEach((key, value) -> texts.put(key, Long.toString(value)));
        return texts;
    }
}
