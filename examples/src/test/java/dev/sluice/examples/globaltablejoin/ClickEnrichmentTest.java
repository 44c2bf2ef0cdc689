package dev.sluice.examples.globaltablejoin;

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

class ClickEnrichmentTest {

    @Test
    void joinsClicksWithTheProductTheyMapToAndDropsUnknownProducts() {
        final Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "click-enrichment-test");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(ClickEnrichment.topology(ClickEnrichment.CLICKS_TOPIC,
                ClickEnrichment.PRODUCTS_TOPIC, ClickEnrichment.OUTPUT_TOPIC, config), config)) {
            final TestInputTopic<String, String> products = driver.createInputTopic(ClickEnrichment.PRODUCTS_TOPIC,
                new StringSerializer(), new StringSerializer());
            final TestInputTopic<String, String> clicks = driver.createInputTopic(ClickEnrichment.CLICKS_TOPIC,
                new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, String> output = driver.createOutputTopic(ClickEnrichment.OUTPUT_TOPIC,
                new StringDeserializer(), new StringDeserializer());

            products.pipeInput("p-1", "lamp");
            products.pipeInput("p-2", "chair");
            clicks.pipeInput("u-1", "p-1/reviews");
            clicks.pipeInput("u-2", "p-9/details");
            clicks.pipeInput("u-2", "p-2/details");
            products.pipeInput("p-1", "desk lamp");
            clicks.pipeInput("u-1", "p-1/photos");

            assertEquals(List.of(
                KeyValue.pair("u-1", "u-1 viewed lamp (p-1) on reviews"),
                KeyValue.pair("u-2", "u-2 viewed chair (p-2) on details"),
                KeyValue.pair("u-1", "u-1 viewed desk lamp (p-1) on photos")), output.readKeyValuesToList());
        }
    }
}
