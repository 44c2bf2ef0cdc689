package dev.sluice.examples.streamtablejoin;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A stream–table join written against Kafka Streams' public API: each order (key customer id, value
 * its amount) is joined with the customer's current tier from a table (key customer id, value the
 * tier); orders of customers the table does not know yet are dropped. Both topics must be
 * co-partitioned. Output key the customer id, value {@code <amount> for a <tier> customer}.
 */
public final class OrderEnrichment {

    public static final String ORDERS_TOPIC = "orders";
    public static final String CUSTOMERS_TOPIC = "customer-tiers";
    public static final String OUTPUT_TOPIC = "enriched-orders";
    public static final String CUSTOMERS_STORE = "customer-tiers";

    private OrderEnrichment() {
    }

    /** The topology, built with {@code config} so that DSL settings apply to its stores. */
    public static Topology topology(final String ordersTopic, final String customersTopic, final String outputTopic,
                                    final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KTable<String, String> tiers = builder.table(customersTopic, Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(CUSTOMERS_STORE));
        builder.stream(ordersTopic, Consumed.with(Serdes.String(), Serdes.Long()))
            .join(tiers, (amount, tier) -> amount + " for a " + tier + " customer",
                Joined.with(Serdes.String(), Serdes.Long(), Serdes.String()))
            .to(outputTopic, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    /** Runs until SIGTERM; arguments as {@link ExampleLauncher} reads them. */
    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "order-enrichment", OUTPUT_TOPIC,
            (config, outputTopic) -> topology(ORDERS_TOPIC, CUSTOMERS_TOPIC, outputTopic, config));
    }
}
