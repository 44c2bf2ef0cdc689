package dev.sluice.examples.foreignkeyjoin;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Foreign-key table–table joins written against Kafka Streams' public API: a table of orders (key the
 * order id, value {@code <customer id>:<amount>}) joined with a table of customers (key the customer
 * id, value the customer's name) by the customer id inside each order, once as an inner join and once
 * as a left join. The two topics need not be co-partitioned: Kafka Streams routes subscriptions and
 * responses through internal topics of its own. Output key {@code <order id>/inner} with value
 * {@code <amount> by <name>}, and {@code <order id>/left} with value {@code <amount> by <name or nobody>}:
 * each join has internal topics of its own, so only the results of one join come in a defined order.
 */
public final class OrderCustomers {

    public static final String ORDERS_TOPIC = "fk-orders";
    public static final String CUSTOMERS_TOPIC = "fk-customers";
    public static final String OUTPUT_TOPIC = "orders-with-customers";

    private OrderCustomers() {
    }

    /** The topology, built with {@code config} so that DSL settings apply to its stores. */
    public static Topology topology(final String ordersTopic, final String customersTopic, final String outputTopic,
                                    final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KTable<String, String> orders = builder.table(ordersTopic, Consumed.with(Serdes.String(), Serdes.String()));
        final KTable<String, String> customers = builder.table(customersTopic, Consumed.with(Serdes.String(), Serdes.String()));
        orders.join(customers, OrderCustomers::customerOf, (order, name) -> amountOf(order) + " by " + name)
            .toStream((order, result) -> order + "/inner")
            .to(outputTopic, Produced.with(Serdes.String(), Serdes.String()));
        orders.leftJoin(customers, OrderCustomers::customerOf,
                (order, name) -> amountOf(order) + " by " + (name == null ? "nobody" : name))
            .toStream((order, result) -> order + "/left")
            .to(outputTopic, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    private static String customerOf(final String order) {
        return order.substring(0, order.indexOf(':'));
    }

    private static String amountOf(final String order) {
        return order.substring(order.indexOf(':') + 1);
    }

    /** Runs until SIGTERM; arguments as {@link ExampleLauncher} reads them. */
    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "order-customers", OUTPUT_TOPIC,
            (config, outputTopic) -> topology(ORDERS_TOPIC, CUSTOMERS_TOPIC, outputTopic, config));
    }
}
