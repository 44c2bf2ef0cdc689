package dev.sluice.examples.minutereport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
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
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

class MinuteReportTest {

    private static final long MINUTE = 60_000;

    @Test
    void emitsClosedMinutesInMinuteThenSensorOrderAndForgetsThem() {
        final Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "minute-report-test");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(
                MinuteReport.topology(MinuteReport.INPUT_TOPIC, MinuteReport.OUTPUT_TOPIC, config), config)) {
            final TestInputTopic<String, Long> input = driver.createInputTopic(MinuteReport.INPUT_TOPIC,
                new StringSerializer(), new LongSerializer());
            final TestOutputTopic<String, String> output = driver.createOutputTopic(MinuteReport.OUTPUT_TOPIC,
                new StringDeserializer(), new StringDeserializer());
            final KeyValueStore<String, Long> sums = driver.getKeyValueStore(MinuteReport.SUMS_STORE);

            input.pipeInput("s2", 1L, at(1_000));
            input.pipeInput("s1", 2L, at(2_000));
            input.pipeInput("s1", 3L, at(MINUTE + 1_000));
            input.pipeInput("s2", 4L, at(MINUTE + 10_000));
            // Out of order, within grace: still minute 0.
            input.pipeInput("s1", 5L, at(50_000));
            assertEquals(List.of(), output.readRecordsToList(), "minute 0 closes at 75 s of stream time");

            input.pipeInput("s3", 6L, at(MINUTE + 20_000));
            assertEquals(List.of(
                new TestRecord<>("s1", "minute 0: 7", at(MINUTE - 1)),
                new TestRecord<>("s2", "minute 0: 1", at(MINUTE - 1))), output.readRecordsToList());
            assertEquals(3, count(sums), "minute 1's sums stay, minute 0's are gone");

            // Minute 0 has closed: dropped.
            input.pipeInput("s1", 100L, at(59_000));
            input.pipeInput("s1", 1L, at(3 * MINUTE + 20_000));
            assertEquals(List.of(
                KeyValue.pair("s1", "minute " + MINUTE + ": 3"),
                KeyValue.pair("s2", "minute " + MINUTE + ": 4"),
                KeyValue.pair("s3", "minute " + MINUTE + ": 6")), output.readKeyValuesToList());
        }
    }

    private static int count(final KeyValueStore<String, Long> store) {
        final int[] entries = {0};
        try (var all = store.all()) {
            all.forEachRemaining(entry -> entries[0]++);
        }
        return entries[0];
    }

    private static Instant at(final long millis) {
        return Instant.ofEpochMilli(millis);
    }
}
