package dev.sluice.compat.parity.apps;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;

/**
 * Each sensor's readings summed over sliding windows (every update, output key
 * {@code <sensor>@<start>-<end>/sliding}), and over hopping windows that emit only their final result
 * when they close ({@code EmitStrategy.onWindowClose()}, key {@code .../final}).
 */
public final class SlidingAndFinalWindows {

    public static final String INPUT_TOPIC = "sliding-readings";

    private SlidingAndFinalWindows() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KGroupedStream<String, Long> readings =
            builder.stream(INPUT_TOPIC, Consumed.with(Serdes.String(), Serdes.Long())).groupByKey();
        final Produced<String, String> produced = Produced.with(Serdes.String(), Serdes.String());
        readings.windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(15)))
            .reduce(Long::sum, Materialized.as("sliding-sums"))
            .toStream((window, sum) -> name(window, "sliding"))
            .mapValues(sum -> Long.toString(sum))
            .to(outputTopic, produced);
        readings.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(30), Duration.ofSeconds(15))
                .advanceBy(Duration.ofSeconds(10)))
            .emitStrategy(EmitStrategy.onWindowClose())
            .reduce(Long::sum, Materialized.as("final-sums"))
            .toStream((window, sum) -> name(window, "final"))
            .mapValues(sum -> Long.toString(sum))
            .to(outputTopic, produced);
        return builder.build();
    }

    private static String name(final Windowed<String> window, final String kind) {
        return window.key() + "@" + window.window().start() + "-" + window.window().end() + "/" + kind;
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "sliding-and-final-windows", "sliding-and-final-windows-output",
            (config, output) -> topology(output, config));
    }
}
