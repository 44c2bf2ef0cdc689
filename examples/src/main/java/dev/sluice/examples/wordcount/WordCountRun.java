package dev.sluice.examples.wordcount;

import dev.sluice.examples.launcher.ExampleLauncher;
import dev.sluice.streams.state.internals.NativeHandles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;

/**
 * One run of {@link WordCount} against a broker: starts the application, writes lines to its
 * input, and reads its committed output until every word's latest count equals the count the
 * lines imply, or a deadline passes.
 *
 * @param inputTopic  an existing topic the lines are written to
 * @param outputTopic an existing topic the counts are read from
 */
public record WordCountRun(String bootstrapServers, String inputTopic, String outputTopic) {

    private static final Duration DEADLINE = Duration.ofSeconds(90);

    /** The counts a correct word count ends with for {@code lines}. */
    public static Map<String, Long> expectedCounts(final List<String> lines) {
        final Map<String, Long> counts = new TreeMap<>();
        for (final String line : lines) {
            for (final String word : line.toLowerCase(Locale.ROOT).split("\\W+")) {
                if (!word.isEmpty()) {
                    counts.merge(word, 1L, Long::sum);
                }
            }
        }
        return counts;
    }

    /**
     * What a run ended with.
     *
     * @param counts             the latest count per word read from the output topic
     * @param sluiceStoresOpened how many of Sluice's native stores were open while the application ran
     */
    public record Result(Map<String, Long> counts, long sluiceStoresOpened) {
    }

    /** Runs the application under {@code processingGuarantee} (a {@code processing.guarantee} value). */
    public Result run(final String processingGuarantee, final List<String> lines) {
        final Map<String, Long> expected = expectedCounts(lines);
        final Properties config = ExampleLauncher.streamsConfig(bootstrapServers, "wordcount-" + UUID.randomUUID(),
            processingGuarantee, temporaryStateDir());
        final long storesBefore = NativeHandles.liveStores();
        try (KafkaStreams streams = new KafkaStreams(WordCount.topology(inputTopic, outputTopic, config), config)) {
            streams.start();
            produce(lines);
            final Map<String, Long> counts = consumeUntil(expected);
            return new Result(counts, NativeHandles.liveStores() - storesBefore);
        }
    }

    private void produce(final List<String> lines) {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (final String line : lines) {
                producer.send(new ProducerRecord<>(inputTopic, line));
            }
        }
    }

    private Map<String, Long> consumeUntil(final Map<String, Long> expected) {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "wordcount-reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
        final Map<String, Long> latest = new TreeMap<>();
        final long deadline = System.nanoTime() + DEADLINE.toNanos();
        try (KafkaConsumer<String, Long> consumer =
                 new KafkaConsumer<>(props, new StringDeserializer(), new LongDeserializer())) {
            consumer.subscribe(List.of(outputTopic));
            while (!latest.equals(expected) && System.nanoTime() < deadline) {
                for (final ConsumerRecord<String, Long> record : consumer.poll(Duration.ofMillis(200))) {
                    latest.put(record.key(), record.value());
                }
            }
        }
        return latest;
    }

    private static Path temporaryStateDir() {
        try {
            final Path dir = Files.createTempDirectory("wordcount-state");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
