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
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.Windowed;

/**
 * Sessions of each user's activity (inactivity gap and grace): the events counted per session, as
 * every update (merged sessions leave tombstones behind; output key {@code <user>@<start>-<end>/update})
 * and as the final count once the session closes, through {@code suppress} (key {@code .../final}).
 */
public final class SessionActivity {

    public static final String INPUT_TOPIC = "session-activity";
    public static final Duration GAP = Duration.ofSeconds(20);
    public static final Duration GRACE = Duration.ofSeconds(10);

    private SessionActivity() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KGroupedStream<String, Long> activity =
            builder.stream(INPUT_TOPIC, Consumed.with(Serdes.String(), Serdes.Long())).groupByKey();
        final Produced<String, String> produced = Produced.with(Serdes.String(), Serdes.String());
        activity.windowedBy(SessionWindows.ofInactivityGapAndGrace(GAP, GRACE))
            .count(Materialized.as("session-updates"))
            .toStream((session, count) -> name(session, "update"))
            .mapValues(count -> count == null ? null : Long.toString(count))
            .to(outputTopic, produced);
        activity.windowedBy(SessionWindows.ofInactivityGapAndGrace(GAP, GRACE))
            .count(Materialized.as("session-finals"))
            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
            .toStream((session, count) -> name(session, "final"))
            .mapValues(count -> count == null ? null : Long.toString(count))
            .to(outputTopic, produced);
        return builder.build();
    }

    private static String name(final Windowed<String> session, final String kind) {
        return session.key() + "@" + session.window().start() + "-" + session.window().end() + "/" + kind;
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "session-activity", "session-activity-output", (config, output) -> topology(output, config));
    }
}
