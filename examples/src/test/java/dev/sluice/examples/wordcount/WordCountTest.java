package dev.sluice.examples.wordcount;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WordCountTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final List<String> LINES = List.of(
        "the quick brown fox", "jumps over the lazy dog", "The dog sleeps", "", "fox, dog & fox");

    /** The unchanged application on Sluice's runtime (this module's Kafka Streams is Sluice's drop-in). */
    @ParameterizedTest
    @ValueSource(strings = {StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2})
    void countsEveryWordOfTheInput(final String processingGuarantee) {
        final String input = "lines-" + processingGuarantee;
        final String output = "counts-" + processingGuarantee;
        BROKER.createTopic(input, 2);
        BROKER.createTopic(output, 2);
        final WordCountRun.Result result = new WordCountRun(BROKER.bootstrapServers(), input, output)
            .run(processingGuarantee, LINES);
        // Two input partitions make two count tasks, each with its own store.
        assertEquals(2, result.sluiceStoresOpened(), "Sluice stores open while the application ran");
        assertEquals(Map.of("the", 3L, "quick", 1L, "brown", 1L, "fox", 3L, "jumps", 1L, "over", 1L,
            "lazy", 1L, "dog", 3L, "sleeps", 1L), result.counts());
    }
}
