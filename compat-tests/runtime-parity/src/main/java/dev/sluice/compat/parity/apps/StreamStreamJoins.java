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
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.ValueJoiner;

/**
 * Two co-partitioned streams joined four ways: inner without grace, inner, left and outer with a
 * grace period. Output key {@code <key>/<join>}, value {@code <left>+<right>} with {@code -} for a side a
 * left or outer join found nothing for; those are emitted when the window closes.
 */
public final class StreamStreamJoins {

    public static final String LEFT_TOPIC = "ssj-left";
    public static final String RIGHT_TOPIC = "ssj-right";
    public static final Duration WINDOW = Duration.ofSeconds(10);
    public static final Duration GRACE = Duration.ofSeconds(5);

    private static final ValueJoiner<String, String, String> BOTH_SIDES =
        (left, right) -> (left == null ? "-" : left) + "+" + (right == null ? "-" : right);

    private StreamStreamJoins() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KStream<String, String> left = builder.stream(LEFT_TOPIC, Consumed.with(Serdes.String(), Serdes.String()));
        final KStream<String, String> right = builder.stream(RIGHT_TOPIC, Consumed.with(Serdes.String(), Serdes.String()));
        final JoinWindows withGrace = JoinWindows.ofTimeDifferenceAndGrace(WINDOW, GRACE);
        final StreamJoined<String, String, String> serdes = StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String());
        emit(left.join(right, BOTH_SIDES, JoinWindows.ofTimeDifferenceWithNoGrace(WINDOW), serdes), "inner-no-grace", outputTopic);
        emit(left.join(right, BOTH_SIDES, withGrace, serdes), "inner", outputTopic);
        emit(left.leftJoin(right, BOTH_SIDES, withGrace, serdes), "left", outputTopic);
        emit(left.outerJoin(right, BOTH_SIDES, withGrace, serdes), "outer", outputTopic);
        return builder.build();
    }

    private static void emit(final KStream<String, String> joined, final String join, final String outputTopic) {
        joined.selectKey((key, value) -> key + "/" + join).to(outputTopic, Produced.with(Serdes.String(), Serdes.String()));
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "stream-stream-joins", "stream-stream-joins-output", (config, output) -> topology(output, config));
    }
}
