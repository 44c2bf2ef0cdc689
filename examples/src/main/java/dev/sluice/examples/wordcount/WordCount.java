package dev.sluice.examples.wordcount;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The classic Kafka Streams word count, written against Kafka Streams' public API only: it runs
 * unchanged on Apache Kafka Streams and on Sluice. Lines arrive on {@link #INPUT_TOPIC}; the running
 * count of every word leaves on {@link #OUTPUT_TOPIC}. Grouping by word repartitions the stream,
 * and the counts live in the {@link #COUNTS_STORE} key-value store.
 */
public final class WordCount {

    public static final String INPUT_TOPIC = "wordcount-input";
    public static final String OUTPUT_TOPIC = "wordcount-output";
    public static final String COUNTS_STORE = "word-counts";

    private WordCount() {
    }

    /**
     * The topology, built with {@code config} so that DSL settings such as
     * {@code dsl.store.suppliers.class} apply to its stores.
     */
    public static Topology topology(final String inputTopic, final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        builder.stream(inputTopic, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.as(COUNTS_STORE))
            .toStream()
            .to(outputTopic, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /** Runs until SIGTERM; arguments as {@link ExampleLauncher} reads them. */
    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "wordcount", OUTPUT_TOPIC, (config, outputTopic) -> topology(INPUT_TOPIC, outputTopic, config));
    }
}
