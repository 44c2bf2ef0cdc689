package dev.sluice.examples.minutereport;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * A Processor API application written against Kafka Streams' public API: it sums each sensor's
 * readings per minute of event time in a key-value store and, from a stream-time punctuator every
 * {@link #PUNCTUATE_EVERY}, emits every minute that has closed (stream time past its end plus
 * {@link #GRACE}) with a range scan over the store, deleting what it emitted. Readings for a closed
 * minute are dropped. Output key the sensor, value {@code minute <start ms>: <sum>}, timestamp the
 * minute's last millisecond.
 */
public final class MinuteReport {

    public static final String INPUT_TOPIC = "minute-report-input";
    public static final String OUTPUT_TOPIC = "minute-report-output";
    public static final String SUMS_STORE = "minute-sums";
    public static final Duration MINUTE = Duration.ofMinutes(1);
    public static final Duration GRACE = Duration.ofSeconds(15);
    public static final Duration PUNCTUATE_EVERY = Duration.ofSeconds(10);

    private MinuteReport() {
    }

    public static Topology topology(final String inputTopic, final String outputTopic, final Properties config) {
        final Topology topology = new Topology(new TopologyConfig(new StreamsConfig(config)));
        topology.addSource("readings", Serdes.String().deserializer(), Serdes.Long().deserializer(), inputTopic);
        topology.addProcessor("minute-sums", MinuteSums::new, "readings");
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SUMS_STORE),
            Serdes.String(), Serdes.Long()), "minute-sums");
        topology.addSink("reports", outputTopic, Serdes.String().serializer(), Serdes.String().serializer(), "minute-sums");
        return topology;
    }

    /** Runs until SIGTERM; arguments as {@link ExampleLauncher} reads them. */
    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "minute-report", OUTPUT_TOPIC, (config, outputTopic) -> topology(INPUT_TOPIC, outputTopic, config));
    }

    /**
     * Store keys are {@code <minute start, 13 digits>|<sensor>}, so the store's byte order is minute
     * order and one range scan from the lowest key finds every closed minute.
     */
    private static final class MinuteSums implements Processor<String, Long, String, String> {

        private ProcessorContext<String, String> context;
        private KeyValueStore<String, Long> sums;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            this.sums = context.getStateStore(SUMS_STORE);
            context.schedule(PUNCTUATE_EVERY, PunctuationType.STREAM_TIME, this::emitClosedMinutes);
        }

        @Override
        public void process(final Record<String, Long> reading) {
            final long minute = minuteStart(reading.timestamp());
            if (minute + MINUTE.toMillis() + GRACE.toMillis() <= context.currentStreamTimeMs()) {
                return;
            }
            final String key = storeKey(minute, reading.key());
            final Long sum = sums.get(key);
            sums.put(key, (sum == null ? 0L : sum) + reading.value());
        }

        private void emitClosedMinutes(final long streamTime) {
            // Stream-time punctuation fires at the first record at or past each multiple of the interval;
            // closing minutes as of that multiple, not of the stream time it fires at, makes what is
            // emitted independent of how many records were processed before it fired.
            final long scheduled = streamTime - Math.floorMod(streamTime, PUNCTUATE_EVERY.toMillis());
            final long lastClosedEnd = scheduled - GRACE.toMillis();
            if (lastClosedEnd < MINUTE.toMillis()) {
                return;
            }
            // Every key of a minute that ends at or before lastClosedEnd sorts before this one, and no
            // key equals it: sensors are never empty.
            final String firstOpen = storeKey(minuteStart(lastClosedEnd - MINUTE.toMillis()) + MINUTE.toMillis(), "");
            final List<KeyValue<String, Long>> closed = new ArrayList<>();
            try (KeyValueIterator<String, Long> minutes = sums.range(storeKey(0, ""), firstOpen)) {
                minutes.forEachRemaining(closed::add);
            }
            for (final KeyValue<String, Long> entry : closed) {
                final long minute = Long.parseLong(entry.key.substring(0, 13));
                final String sensor = entry.key.substring(14);
                context.forward(new Record<>(sensor, "minute " + minute + ": " + entry.value, minute + MINUTE.toMillis() - 1));
                sums.delete(entry.key);
            }
        }

        private static long minuteStart(final long timestamp) {
            return timestamp - Math.floorMod(timestamp, MINUTE.toMillis());
        }

        private static String storeKey(final long minute, final String sensor) {
            return String.format("%013d|%s", minute, sensor);
        }
    }
}
