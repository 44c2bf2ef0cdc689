package org.apache.kafka.streams;

import static org.apache.kafka.streams.EngineTestSupport.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record the engine's producer cannot write (the output topic's {@code max.message.bytes} is smaller than
 * it) goes through the application's {@link ProductionExceptionHandler}, as in Kafka Streams' record
 * collector: RESUME drops it, counts it in the task's dropped-records metric and goes on; the default
 * handler fails the thread with a {@link StreamsException} caused by the producer's error.
 */
class KafkaStreamsProductionErrorsTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final String LARGE = "x".repeat(5_000);

    /** The contexts the resuming handler was called with. */
    static final Map<String, ErrorHandlerContext> HANDLED = new ConcurrentHashMap<>();

    /** Resumes after every failed send, noting its context under the application id. */
    public static final class ResumingHandler implements ProductionExceptionHandler {
        private String applicationId;

        @Override
        public Response handleError(final ErrorHandlerContext context, final ProducerRecord<byte[], byte[]> record,
                                    final Exception exception) {
            if (exception instanceof RecordTooLargeException) {
                HANDLED.put(applicationId, context);
            }
            return Response.resume();
        }

        @Override
        public void configure(final Map<String, ?> configs) {
            applicationId = (String) configs.get(StreamsConfig.APPLICATION_ID_CONFIG);
        }
    }

    @TempDir
    Path stateDir;

    private KafkaStreams streams;

    @AfterEach
    void close() {
        if (streams != null) {
            streams.close(Duration.ofSeconds(60));
        }
    }

    @Test
    void aResumingHandlerDropsTheRecordCountsItAndTheApplicationGoesOn() throws Exception {
        final String app = "production-resume-" + UUID.randomUUID().toString().substring(0, 8);
        final Properties props = props(app);
        props.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, ResumingHandler.class);
        startForwarding(app, props);

        produce(app + "-in", "a", "small");
        awaitOutput(app + "-out", Set.of("a"));
        produce(app + "-in", "big", LARGE);
        waitFor(() -> droppedRecords() == 1.0, "the dropped-records metric to count the large record");
        produce(app + "-in", "b", "small");
        awaitOutput(app + "-out", Set.of("a", "b"));

        assertEquals(KafkaStreams.State.RUNNING, streams.state());
        final ErrorHandlerContext context = HANDLED.get(app);
        assertEquals(app + "-in", context.topic());
        assertEquals(0, context.partition());
        assertEquals(1, context.offset(), "the context is the source record's");
        assertEquals(new org.apache.kafka.streams.processor.TaskId(0, 0), context.taskId());
        assertEquals("sink", context.processorNodeId());
    }

    @Test
    void theDefaultHandlerFailsTheThreadWithTheProducersError() throws Exception {
        final String app = "production-fail-" + UUID.randomUUID().toString().substring(0, 8);
        final List<Throwable> uncaught = new CopyOnWriteArrayList<>();
        final Properties props = props(app);
        streams = forwarding(app, props);
        streams.setUncaughtExceptionHandler(e -> {
            uncaught.add(e);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();

        produce(app + "-in", "big", LARGE);
        waitFor(() -> streams.state() == KafkaStreams.State.ERROR, "the client to fail");
        final Throwable failure = uncaught.get(0);
        assertInstanceOf(StreamsException.class, failure);
        assertInstanceOf(RecordTooLargeException.class, failure.getCause(), () -> "cause of " + failure);
        assertTrue(failure.getMessage().contains(app + "-out"), failure::getMessage);
    }

    private Properties props(final String applicationId) {
        return EngineTestSupport.props(BROKER, applicationId, stateDir);
    }

    private void startForwarding(final String app, final Properties props) {
        streams = forwarding(app, props);
        streams.start();
    }

    private static KafkaStreams forwarding(final String app, final Properties props) {
        BROKER.createTopic(app + "-in", 1);
        BROKER.createTopic(new NewTopic(app + "-out", 1, (short) 1).configs(Map.of("max.message.bytes", "1000")));
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(app + "-in", Consumed.with(Serdes.String(), Serdes.String()))
            .to(app + "-out", Produced.<String, String>with(Serdes.String(), Serdes.String()).withName("sink"));
        return new KafkaStreams(builder.build(), props);
    }

    private double droppedRecords() {
        return streams.metrics().values().stream()
            .filter(m -> m.metricName().name().equals("dropped-records-total"))
            .mapToDouble(m -> ((Number) m.metricValue()).doubleValue())
            .sum();
    }

    private static void produce(final String topic, final String key, final String value) throws Exception {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, key, value)).get();
        }
    }

    private static void awaitOutput(final String topic, final Set<String> keys) throws InterruptedException {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, String> consumer =
                 new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            final Set<String> seen = ConcurrentHashMap.newKeySet();
            waitFor(() -> {
                for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(record.key());
                }
                return seen.equals(keys);
            }, "keys " + keys + " in " + topic);
        }
    }

}
