package org.apache.kafka.streams;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The word count whose metrics {@link KafkaStreamsMetricsTest} compares between runtimes. Its
 * {@code main} runs it on whichever {@link KafkaStreams} the class path holds (Apache's, in a child
 * JVM), waits until a word reaches its expected count, prints the normalised metric names, one
 * {@value #METRIC_LINE} line each, then {@value #DONE_LINE}, and closes.
 */
final class MetricsWordCountApp {

    static final String COUNTS = "word-counts";
    static final String METRIC_LINE = "METRIC ";
    static final String DONE_LINE = "DONE";

    private MetricsWordCountApp() {
    }

    static Topology topology(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.as(COUNTS))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /**
     * DEBUG recording, so processor-node and cache metrics exist; no record cache, so counts reach the
     * store at once and stay uncommitted until the next commit, a long commit interval away.
     */
    static Properties props(final String applicationId, final String bootstrapServers, final String stateDir) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "DEBUG");
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 5_000);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return props;
    }

    /**
     * Kafka Streams' own metrics (groups {@code stream-*}) as "group name {tag=value, …}", with the values
     * that differ between runs of the same application made comparable: the client id and process id
     * dropped, a thread id kept from its kind and number ({@code StreamThread-1}), a topic's name without
     * the application id in front ({@code <application.id>-input}, {@code <application.id>-…-repartition}).
     */
    static SortedSet<String> normalisedStreamsMetricNames(final Map<MetricName, ? extends Metric> metrics,
                                                          final String applicationId) {
        final SortedSet<String> names = new TreeSet<>();
        for (final MetricName name : metrics.keySet()) {
            if (!name.group().startsWith("stream-")) {
                continue;
            }
            final Map<String, String> tags = new TreeMap<>(name.tags());
            tags.replaceAll((tag, value) -> switch (tag) {
                case "client-id", "process-id" -> "*";
                case "application-id" -> value.equals(applicationId) ? "<application.id>" : value;
                case "thread-id" -> value.replaceAll("^.*-([A-Za-z]+-\\d+)$", "$1");
                case "topic" -> value.startsWith(applicationId + "-") ? value.substring(applicationId.length() + 1) : value;
                default -> value;
            });
            names.add(name.group() + " " + name.name() + " " + tags);
        }
        return names;
    }

    /** Waits until {@code word} has {@code count} in the counts store, read through interactive queries. */
    static void awaitCount(final KafkaStreams streams, final String word, final long count, final Duration timeout)
        throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (streams.state() == KafkaStreams.State.RUNNING) {
                try {
                    final ReadOnlyKeyValueStore<String, Long> store = streams.store(
                        StoreQueryParameters.fromNameAndType(COUNTS, QueryableStoreTypes.keyValueStore()));
                    final Long current = store.get(word);
                    if (current != null && current == count) {
                        return;
                    }
                } catch (final RuntimeException notQueryableYet) {
                    // Stores become queryable shortly after RUNNING; try again.
                }
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new AssertionError("timed out waiting for " + word + " to count " + count);
    }

    static String inputTopic(final String applicationId) {
        return applicationId + "-input";
    }

    static String outputTopic(final String applicationId) {
        return applicationId + "-output";
    }

    /** Arguments: bootstrap servers, application id, state directory, a word, its count when the input is processed. */
    public static void main(final String[] args) throws InterruptedException {
        final String applicationId = args[1];
        try (KafkaStreams streams = new KafkaStreams(topology(inputTopic(applicationId), outputTopic(applicationId)),
                props(applicationId, args[0], args[2]))) {
            streams.start();
            awaitCount(streams, args[3], Long.parseLong(args[4]), Duration.ofSeconds(120));
            normalisedStreamsMetricNames(streams.metrics(), applicationId)
                .forEach(name -> System.out.println(METRIC_LINE + name));
            System.out.println(DONE_LINE);
            System.out.flush();
            streams.close(Duration.ofSeconds(30));
        }
    }
}
