package dev.sluice.examples.demo;

import dev.sluice.examples.wordcount.WordCount;
import dev.sluice.examples.wordcount.WordCountRun;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;

/**
 * {@code make demo}: starts a local broker, runs the unchanged {@link WordCount} application on Sluice
 * (this module's Kafka Streams is Sluice's drop-in artifact) on a few lines under exactly-once, prints
 * the counts it committed, and stops everything.
 */
public final class Demo {

    private static final List<String> LINES = List.of(
        "all streams flow into the sea",
        "yet the sea is not full",
        "a sluice holds the water back",
        "until the gate is opened");

    private Demo() {
    }

    public static void main(final String[] args) {
        try (LocalKafkaBroker broker = new LocalKafkaBroker()) {
            System.out.println("Starting a local Kafka broker ...");
            broker.start();
            System.out.println("bootstrap.servers=" + broker.bootstrapServers());
            broker.createTopic(WordCount.INPUT_TOPIC, 2);
            broker.createTopic(WordCount.OUTPUT_TOPIC, 2);

            System.out.println("Running WordCount (" + StreamsConfig.EXACTLY_ONCE_V2 + ") on Sluice: the Rust engine "
                + "reads, commits and writes, Sluice's transactional stores hold the counts; input:");
            LINES.forEach(line -> System.out.println("  " + line));
            final WordCountRun.Result result = new WordCountRun(broker.bootstrapServers(), WordCount.INPUT_TOPIC,
                WordCount.OUTPUT_TOPIC).run(StreamsConfig.EXACTLY_ONCE_V2, LINES);
            final Map<String, Long> counts = result.counts();
            System.out.println("Sluice stores the application opened: " + result.sluiceStoresOpened());

            System.out.println("Committed counts on " + WordCount.OUTPUT_TOPIC + ":");
            counts.forEach((word, count) -> System.out.printf("  %-8s %d%n", word, count));
            if (!counts.equals(WordCountRun.expectedCounts(LINES))) {
                System.err.println("The counts are not the expected ones: " + WordCountRun.expectedCounts(LINES));
                System.exit(1);
            }
        }
    }
}
