package dev.sluice.examples.windowedtotals;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

class WindowedTotalsTest {

    private static final long MINUTE = 60_000;

    @Test
    void emitsEachWindowOnceWhenGraceHasPassedAndDropsLaterReadings() {
        try (TopologyTestDriver driver = driver()) {
            final TestInputTopic<String, Long> input = driver.createInputTopic(WindowedTotals.INPUT_TOPIC,
                new StringSerializer(), new LongSerializer());
            final TestOutputTopic<String, Long> output = driver.createOutputTopic(WindowedTotals.OUTPUT_TOPIC,
                new StringDeserializer(), new LongDeserializer());

            input.pipeInput("a", 1L, at(0));
            input.pipeInput("b", 10L, at(5_000));
            input.pipeInput("a", 2L, at(MINUTE + 1_000));
            // Out of order but within the grace period: still counts for the first window.
            input.pipeInput("a", 4L, at(MINUTE + 15_000));
            input.pipeInput("a", 8L, at(30_000));
            assertEquals(List.of(), output.readRecordsToList(), "nothing is final before stream time passes end + grace");

            // Stream time reaches the first window's end plus grace: it closes.
            input.pipeInput("b", 20L, at(MINUTE + 20_000));
            assertEquals(List.of(new TestRecord<>("a@0", 9L, at(30_000)), new TestRecord<>("b@0", 10L, at(5_000))),
                output.readRecordsToList());

            // Too late for the closed window: dropped.
            input.pipeInput("a", 100L, at(59_000));
            input.pipeInput("c", 1L, at(3 * MINUTE));
            assertEquals(List.of(new TestRecord<>("a@" + MINUTE, 6L, at(MINUTE + 15_000)),
                new TestRecord<>("b@" + MINUTE, 20L, at(MINUTE + 20_000))), output.readRecordsToList());
        }
    }

    private static TopologyTestDriver driver() {
        final Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "windowed-totals-test");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        return new TopologyTestDriver(WindowedTotals.topology(WindowedTotals.INPUT_TOPIC, WindowedTotals.OUTPUT_TOPIC, config),
            config);
    }

    private static Instant at(final long millis) {
        return Instant.ofEpochMilli(millis);
    }
}
