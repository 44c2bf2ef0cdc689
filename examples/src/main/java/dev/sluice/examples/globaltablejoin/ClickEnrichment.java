package dev.sluice.examples.globaltablejoin;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.ValueJoinerWithStreamAndMappedKey;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A stream–GlobalKTable join written against Kafka Streams' public API: each click (key user id,
 * value {@code <product id>/<page>}) is joined with the product's name from a global table (key
 * product id); the joiner sees the stream's key and the product id the click was mapped to. Clicks
 * on unknown products are dropped. Output key the user id, value
 * {@code <user> viewed <name> (<product id>) on <page>}.
 */
public final class ClickEnrichment {

    public static final String CLICKS_TOPIC = "clicks";
    public static final String PRODUCTS_TOPIC = "products";
    public static final String OUTPUT_TOPIC = "enriched-clicks";
    public static final String PRODUCTS_STORE = "products";

    private ClickEnrichment() {
    }

    /** The topology, built with {@code config} so that DSL settings apply to its stores. */
    public static Topology topology(final String clicksTopic, final String productsTopic, final String outputTopic,
                                    final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final GlobalKTable<String, String> products = builder.globalTable(productsTopic,
            Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(PRODUCTS_STORE));
        final ValueJoinerWithStreamAndMappedKey<String, String, String, String, String> describe =
            (user, productId, click, name) -> user + " viewed " + name + " (" + productId + ") on " + page(click);
        builder.stream(clicksTopic, Consumed.with(Serdes.String(), Serdes.String()))
            .join(products, (user, click) -> productId(click), describe)
            .to(outputTopic, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    /** Runs until SIGTERM; arguments as {@link ExampleLauncher} reads them. */
    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "click-enrichment", OUTPUT_TOPIC,
            (config, outputTopic) -> topology(CLICKS_TOPIC, PRODUCTS_TOPIC, outputTopic, config));
    }

    private static String productId(final String click) {
        final int slash = click.indexOf('/');
        return slash < 0 ? click : click.substring(0, slash);
    }

    private static String page(final String click) {
        final int slash = click.indexOf('/');
        return slash < 0 ? "" : click.substring(slash + 1);
    }
}
