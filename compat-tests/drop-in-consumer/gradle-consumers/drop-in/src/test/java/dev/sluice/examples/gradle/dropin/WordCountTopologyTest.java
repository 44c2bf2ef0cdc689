package dev.sluice.examples.gradle.dropin;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A TopologyTestDriver test of {@link WordCountTopology}, as a user writes it. Prints the counts and the
 * class of the bytes store under the count's store layers; exits non-zero when the counts are wrong.
 */
public final class WordCountTopologyTest {

    private WordCountTopologyTest() {
    }

    public static void main(final String[] args) {
        final Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "gradle-word-count");
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        try (TopologyTestDriver driver = new TopologyTestDriver(WordCountTopology.build(), config)) {
            final TestInputTopic<String, String> lines =
                driver.createInputTopic("lines", new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, Long> counts =
                driver.createOutputTopic("counts", new StringDeserializer(), new LongDeserializer());
            lines.pipeInput("l1", "to be or not to be");
            lines.pipeInput("l2", "to be");

            final Map<String, Long> actual = new TreeMap<>(counts.readKeyValuesToMap());
            final Map<String, Long> expected = new TreeMap<>(Map.of("to", 3L, "be", 3L, "or", 1L, "not", 1L));
            System.out.println("counts=" + actual);
            System.out.println("bytes.store=" + bytesStore(driver.getAllStateStores().get("counts")).getClass().getName());
            if (!expected.equals(actual)) {
                System.err.println("expected counts " + expected + ", got " + actual);
                System.exit(1);
            }
        }
    }

    private static StateStore bytesStore(final StateStore store) {
        StateStore layer = store;
        while (layer instanceof WrappedStateStore) {
            layer = ((WrappedStateStore<?, ?, ?>) layer).wrapped();
        }
        return layer;
    }
}
