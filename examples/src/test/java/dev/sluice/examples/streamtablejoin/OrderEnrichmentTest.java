package dev.sluice.examples.streamtablejoin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;

class OrderEnrichmentTest {

    @Test
    void joinsEachOrderWithTheCustomersTierAtThatMoment() {
        final Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "order-enrichment-test");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(OrderEnrichment.topology(OrderEnrichment.ORDERS_TOPIC,
                OrderEnrichment.CUSTOMERS_TOPIC, OrderEnrichment.OUTPUT_TOPIC, config), config)) {
            final TestInputTopic<String, Long> orders = driver.createInputTopic(OrderEnrichment.ORDERS_TOPIC,
                new StringSerializer(), new LongSerializer());
            final TestInputTopic<String, String> tiers = driver.createInputTopic(OrderEnrichment.CUSTOMERS_TOPIC,
                new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, String> output = driver.createOutputTopic(OrderEnrichment.OUTPUT_TOPIC,
                new StringDeserializer(), new StringDeserializer());

            orders.pipeInput("alice", 5L);
            tiers.pipeInput("alice", "silver");
            orders.pipeInput("alice", 7L);
            tiers.pipeInput("bob", "gold");
            tiers.pipeInput("alice", "gold");
            orders.pipeInput("alice", 11L);
            orders.pipeInput("bob", 13L);
            tiers.pipeInput("bob", (String) null);
            orders.pipeInput("bob", 17L);

            assertEquals(List.of(
                KeyValue.pair("alice", "7 for a silver customer"),
                KeyValue.pair("alice", "11 for a gold customer"),
                KeyValue.pair("bob", "13 for a gold customer")), output.readKeyValuesToList());
        }
    }
}
