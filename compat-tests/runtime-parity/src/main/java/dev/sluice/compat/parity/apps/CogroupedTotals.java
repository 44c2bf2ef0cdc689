package dev.sluice.compat.parity.apps;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Aggregator;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * Two streams of amounts per user, clicks and purchases, cogrouped into one aggregate
 * {@code clicks=<n> purchases=<n> spent=<sum>}: once over all time (output key {@code <user>/all}) and
 * once per one-minute tumbling window with grace (output key {@code <user>@<window start>}).
 */
public final class CogroupedTotals {

    public static final String CLICKS_TOPIC = "cogroup-clicks";
    public static final String PURCHASES_TOPIC = "cogroup-purchases";

    private CogroupedTotals() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KGroupedStream<String, Long> clicks =
            builder.stream(CLICKS_TOPIC, Consumed.with(Serdes.String(), Serdes.Long())).groupByKey();
        final KGroupedStream<String, Long> purchases =
            builder.stream(PURCHASES_TOPIC, Consumed.with(Serdes.String(), Serdes.Long())).groupByKey();
        final Aggregator<String, Long, String> click = (user, amount, totals) -> Totals.parse(totals).click().text();
        final Aggregator<String, Long, String> purchase = (user, amount, totals) -> Totals.parse(totals).purchase(amount).text();
        final Produced<String, String> produced = Produced.with(Serdes.String(), Serdes.String());

        clicks.cogroup(click).cogroup(purchases, purchase)
            .aggregate(Totals.NONE::text, Materialized.with(Serdes.String(), Serdes.String()))
            .toStream((user, totals) -> user + "/all")
            .to(outputTopic, produced);
        clicks.cogroup(click).cogroup(purchases, purchase)
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(10)))
            .aggregate(Totals.NONE::text, Materialized.with(Serdes.String(), Serdes.String()))
            .toStream((window, totals) -> window.key() + "@" + window.window().start())
            .to(outputTopic, produced);
        return builder.build();
    }

    /** A user's aggregate, kept as the text the output shows. */
    private record Totals(long clicks, long purchases, long spent) {

        static final Totals NONE = new Totals(0, 0, 0);

        static Totals parse(final String text) {
            final String[] fields = text.split(" ");
            return new Totals(field(fields[0]), field(fields[1]), field(fields[2]));
        }

        Totals click() {
            return new Totals(clicks + 1, purchases, spent);
        }

        Totals purchase(final long amount) {
            return new Totals(clicks, purchases + 1, spent + amount);
        }

        String text() {
            return "clicks=" + clicks + " purchases=" + purchases + " spent=" + spent;
        }

        private static long field(final String field) {
            return Long.parseLong(field.substring(field.indexOf('=') + 1));
        }
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "cogrouped-totals", "cogrouped-totals-output", (config, output) -> topology(output, config));
    }
}
