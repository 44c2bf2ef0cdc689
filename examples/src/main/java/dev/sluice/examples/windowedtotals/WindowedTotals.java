package dev.sluice.examples.windowedtotals;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.WindowStore;

/**
 * A windowed aggregation with final results only, written against Kafka Streams' public API: the
 * total of each sensor's readings per one-minute tumbling window, emitted once per window when it
 * closes, that is when stream time passes the window's end plus {@link #GRACE}. Readings that arrive
 * later than that are dropped. Output key {@code <sensor>@<window start ms>}, value the total.
 */
public final class WindowedTotals {

    public static final String INPUT_TOPIC = "windowed-totals-input";
    public static final String OUTPUT_TOPIC = "windowed-totals-output";
    public static final String TOTALS_STORE = "windowed-totals";
    public static final Duration WINDOW = Duration.ofMinutes(1);
    public static final Duration GRACE = Duration.ofSeconds(20);

    private WindowedTotals() {
    }

    /** The topology, built with {@code config} so that DSL settings apply to its stores. */
    public static Topology topology(final String inputTopic, final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        builder.stream(inputTopic, Consumed.with(Serdes.String(), Serdes.Long()))
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(WINDOW, GRACE))
            .reduce(Long::sum, Materialized.<String, Long, WindowStore<Bytes, byte[]>>as(TOTALS_STORE)
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
            .toStream((window, total) -> window.key() + "@" + window.window().start())
            .to(outputTopic, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /** Runs until SIGTERM; arguments as {@link ExampleLauncher} reads them. */
    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "windowed-totals", OUTPUT_TOPIC, (config, outputTopic) -> topology(INPUT_TOPIC, outputTopic, config));
    }
}
