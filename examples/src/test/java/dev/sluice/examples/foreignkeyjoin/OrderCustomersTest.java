package dev.sluice.examples.foreignkeyjoin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;

class OrderCustomersTest {

    @Test
    void joinsEachOrderWithItsCustomerInnerAndLeft() {
        final Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "order-customers-test");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(OrderCustomers.topology(OrderCustomers.ORDERS_TOPIC,
                OrderCustomers.CUSTOMERS_TOPIC, OrderCustomers.OUTPUT_TOPIC, config), config)) {
            final TestInputTopic<String, String> orders = driver.createInputTopic(OrderCustomers.ORDERS_TOPIC,
                new StringSerializer(), new StringSerializer());
            final TestInputTopic<String, String> customers = driver.createInputTopic(OrderCustomers.CUSTOMERS_TOPIC,
                new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, String> output = driver.createOutputTopic(OrderCustomers.OUTPUT_TOPIC,
                new StringDeserializer(), new StringDeserializer());

            customers.pipeInput("c1", "Ada");
            orders.pipeInput("o1", "c1:5");
            orders.pipeInput("o2", "c2:7");
            customers.pipeInput("c2", "Bo");
            orders.pipeInput("o1", "c2:6");

            assertEquals(List.of(
                KeyValue.pair("o1/inner", "5 by Ada"),
                KeyValue.pair("o1/left", "5 by Ada"),
                KeyValue.pair("o2/left", "7 by nobody"),
                KeyValue.pair("o2/inner", "7 by Bo"),
                KeyValue.pair("o2/left", "7 by Bo"),
                KeyValue.pair("o1/inner", "6 by Bo"),
                KeyValue.pair("o1/left", "6 by Bo")), output.readKeyValuesToList());
        }
    }
}
