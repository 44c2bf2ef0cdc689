package dev.sluice.examples.wordcount;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.streams.state.SluiceDslStoreSuppliers;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WordCountTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final List<String> LINES = List.of(
        "the quick brown fox", "jumps over the lazy dog", "The dog sleeps", "", "fox, dog & fox");

    static Stream<Arguments> guaranteesAndStores() {
        return Stream.of(StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2).flatMap(guarantee -> Stream.of(
            Arguments.of(guarantee, BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers.class),
            Arguments.of(guarantee, SluiceDslStoreSuppliers.class)));
    }

    @ParameterizedTest
    @MethodSource("guaranteesAndStores")
    void countsEveryWordOfTheInput(final String processingGuarantee,
                                   final Class<? extends DslStoreSuppliers> storeSuppliers) {
        final String run = processingGuarantee + "-" + storeSuppliers.getSimpleName();
        final String input = "lines-" + run;
        final String output = "counts-" + run;
        BROKER.createTopic(input, 2);
        BROKER.createTopic(output, 2);
        final WordCountRun.Result result = new WordCountRun(BROKER.bootstrapServers(), input, output)
            .run(processingGuarantee, storeSuppliers, LINES);
        // Two input partitions make two count tasks, each with its own store.
        assertEquals(storeSuppliers == SluiceDslStoreSuppliers.class ? 2 : 0, result.sluiceStoresOpened(),
            "Sluice stores open while the application ran");
        assertEquals(Map.of("the", 3L, "quick", 1L, "brown", 1L, "fox", 3L, "jumps", 1L, "over", 1L,
            "lazy", 1L, "dog", 3L, "sleeps", 1L), result.counts());
    }
}
