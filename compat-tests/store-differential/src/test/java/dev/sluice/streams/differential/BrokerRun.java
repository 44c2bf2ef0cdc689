package dev.sluice.streams.differential;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;

/** Runs applications on Kafka Streams' own runtime against a real broker, under exactly-once. */
final class BrokerRun {

    private static final Duration DEADLINE = Duration.ofSeconds(60);

    private BrokerRun() {
    }

    static Properties exactlyOnceProps(final String bootstrapServers, final String applicationId, final Path stateDir) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        return props;
    }

    /** Produces the script's records with their timestamps and the headers the harness gives them. */
    static void produce(final String bootstrapServers, final InputScript script) {
        final Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
            ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            int sequence = 0;
            for (final InputScript.Step step : script.steps()) {
                if (step instanceof InputScript.Pipe pipe) {
                    producer.send(new ProducerRecord<>(pipe.topic(), 0, pipe.timestamp(), pipe.key(), pipe.value(),
                        DifferentialHarness.sequenceHeader(sequence++)));
                }
            }
            producer.flush();
        }
    }

    static void startAndAwaitRunning(final KafkaStreams streams) throws InterruptedException {
        streams.start();
        final long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (streams.state() != KafkaStreams.State.RUNNING) {
            if (System.nanoTime() > deadline || !streams.state().isRunningOrRebalancing() && streams.state() != KafkaStreams.State.CREATED) {
                throw new AssertionError("the application did not reach RUNNING: " + streams.state());
            }
            Thread.sleep(50);
        }
    }

    /**
     * Reads committed records of {@code topics} until {@code complete} holds of what was read, then for
     * one more second, so that duplicates written after the expected records show up too.
     */
    static List<OutputRecord> readCommitted(final String bootstrapServers, final Set<String> topics,
                                            final Predicate<List<OutputRecord>> complete) {
        final Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
            ConsumerConfig.GROUP_ID_CONFIG, "differential-reader-" + System.nanoTime(),
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString().toLowerCase());
        final List<OutputRecord> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(topics);
            final long deadline = System.nanoTime() + DEADLINE.toNanos();
            long quietUntil = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(deadline, quietUntil)) {
                for (final ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    read.add(OutputRecord.of(record.topic(), record.key(), record.value(), record.timestamp(), record.headers()));
                }
                if (quietUntil == Long.MAX_VALUE && complete.test(read)) {
                    quietUntil = System.nanoTime() + Duration.ofSeconds(1).toNanos();
                }
            }
        }
        return read;
    }
}
