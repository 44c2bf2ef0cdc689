package org.apache.kafka.streams;

import static org.apache.kafka.streams.EngineTestSupport.describe;
import static org.apache.kafka.streams.EngineTestSupport.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.EngineTestSupport.RestoreTally;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.GlobalStreamThread;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Global stores on Sluice's engine, against a real broker: the engine's global thread reads the global topics
 * (no Java consumer, no Kafka Streams global thread) and drives Kafka Streams' global state machinery. A
 * {@code GlobalKTable} and an {@code addGlobalStore} store with a custom processor are restored before
 * {@code start()} returns, follow their topics, answer interactive queries, tell the global restore listener,
 * and after a restart restore only what follows the offsets they committed; a record the global source cannot
 * deserialize goes through the deserialization exception handler, and a global processor's failure reaches the
 * uncaught exception handler.
 */
class GlobalStoresOnEngineTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final String LABELS = "labels-store";
    private static final String PRICES = "prices-store";

    @TempDir
    Path stateDir;

    private final List<KafkaStreams> started = new ArrayList<>();

    @AfterEach
    void closeAll() {
        started.forEach(streams -> streams.close(Duration.ofSeconds(60)));
    }

    /** Keeps each price upper-cased; "boom" fails it. */
    private static final class UpperCasePrices implements Processor<String, String, Void, Void> {
        private KeyValueStore<String, String> prices;

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            prices = context.getStateStore(PRICES);
        }

        @Override
        public void process(final Record<String, String> record) {
            if ("boom".equals(record.value())) {
                throw new IllegalStateException("the price processor blew up");
            }
            prices.put(record.key(), record.value().toUpperCase(Locale.ROOT));
        }
    }

    private Properties props(final String applicationId) {
        return EngineTestSupport.props(BROKER, applicationId, stateDir);
    }

    /** A GlobalKTable over {@code labels}, a custom global store over {@code prices}, and a stream joining the table. */
    private static Topology topology(final String prefix) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.globalTable(prefix + "-labels", Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(LABELS));
        builder.addGlobalStore(
            Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(PRICES), Serdes.String(), Serdes.String())
                .withLoggingDisabled(),
            prefix + "-prices", Consumed.with(Serdes.String(), Serdes.String()), UpperCasePrices::new);
        builder.stream(prefix + "-input", Consumed.with(Serdes.String(), Serdes.String()))
            .to(prefix + "-output");
        return builder.build();
    }

    private static void createTopics(final String prefix) throws Exception {
        final Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (Admin admin = Admin.create(config)) {
            admin.createTopics(List.of(
                new NewTopic(prefix + "-labels", 2, (short) 1),
                new NewTopic(prefix + "-prices", 1, (short) 1),
                new NewTopic(prefix + "-input", 1, (short) 1),
                new NewTopic(prefix + "-output", 1, (short) 1))).all().get();
        }
    }

    private KafkaStreams start(final String prefix, final RestoreTally tally) {
        final KafkaStreams streams = new KafkaStreams(topology(prefix), props(prefix + "-app"));
        started.add(streams);
        streams.setGlobalStateRestoreListener(tally);
        streams.start();
        return streams;
    }

    @Test
    void globalStoresAreRestoredBeforeStartReturnsFollowTheirTopicsAndResumeFromTheirOffsets() throws Exception {
        final String prefix = "globals";
        createTopics(prefix);
        produce(prefix + "-labels", Map.of("k0", "label-0", "k1", "label-1", "k2", "label-2", "k3", "label-3"));
        produce(prefix + "-prices", Map.of("p0", "cheap", "p1", "dear"));

        final RestoreTally tally = new RestoreTally();
        KafkaStreams streams = start(prefix, tally);
        // start() returned: the global stores are complete.
        assertEquals("label-2", labels(streams).get("k2"));
        // Reprocessed on restore (StreamsBuilder#addGlobalStore): through the custom processor.
        assertEquals("DEAR", prices(streams).get("p1"));
        assertEquals(Map.of(LABELS, 4L, PRICES, 2L), tally.restored);
        assertEquals(Map.of(LABELS, 2, PRICES, 1), tally.started, "restore starts per partition");
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t instanceof GlobalStreamThread),
            "Kafka Streams' global thread runs");

        produce(prefix + "-labels", Map.of("k1", "label-1b"));
        produce(prefix + "-prices", Map.of("p2", "fair"));
        final KafkaStreams running = streams;
        waitFor(() -> "label-1b".equals(labels(running).get("k1")) && "FAIR".equals(prices(running).get("p2")),
            "the global stores to follow their topics");
        streams.close(Duration.ofSeconds(60));

        produce(prefix + "-labels", Map.of("k4", "label-4"));
        final RestoreTally afterRestart = new RestoreTally();
        streams = start(prefix, afterRestart);
        assertEquals(Map.of(LABELS, 1L, PRICES, 0L), afterRestart.restored, "only what follows the committed offsets");
        assertEquals("label-4", labels(streams).get("k4"));
        assertEquals("label-1b", labels(streams).get("k1"));
        assertEquals("FAIR", prices(streams).get("p2"));
    }

    @Test
    void aTopologyOfGlobalStoresOnlyRunsWithTheGlobalThreadAlone() throws Exception {
        final String prefix = "globals-only";
        createTopics(prefix);
        produce(prefix + "-labels", Map.of("k0", "label-0"));
        final StreamsBuilder builder = new StreamsBuilder();
        builder.globalTable(prefix + "-labels", Consumed.with(Serdes.String(), Serdes.String()), Materialized.as(LABELS));
        final Properties props = props(prefix + "-app");
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 0);
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to run");
        assertEquals("label-0", labels(streams).get("k0"));
        assertTrue(streams.metadataForLocalThreads().isEmpty(), streams.metadataForLocalThreads().toString());
        // Interactive queries v2 do not reach global stores; Kafka Streams says so in the global result.
        final StateQueryResult<ValueAndTimestamp<String>> queried =
            streams.query(StateQueryRequest.inStore(LABELS).withQuery(KeyQuery.withKey("k0")));
        assertEquals(FailureReason.UNKNOWN_QUERY_TYPE, queried.getGlobalResult().getFailureReason());
        assertTrue(queried.getPartitionResults().isEmpty(), queried.getPartitionResults().toString());
        produce(prefix + "-labels", Map.of("k1", "label-1"));
        waitFor(() -> "label-1".equals(labels(streams).get("k1")), "the global store to follow its topic");
    }

    @Test
    void aGlobalProcessorFailureReachesTheUncaughtExceptionHandler() throws Exception {
        final String prefix = "global-failure";
        createTopics(prefix);
        produce(prefix + "-prices", Map.of("p0", "cheap"));
        final KafkaStreams streams = new KafkaStreams(topology(prefix), props(prefix + "-app"));
        started.add(streams);
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        streams.setUncaughtExceptionHandler(exception -> {
            handled.add(exception);
            // The global thread cannot be replaced: the client shuts down instead.
            return StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();
        produce(prefix + "-prices", Map.of("p1", "boom"));
        waitFor(() -> streams.state() == KafkaStreams.State.ERROR, "the client to shut down to ERROR");
        assertEquals(1, handled.size(), handled.toString());
        assertTrue(describe(handled.get(0)).contains("the price processor blew up"), describe(handled.get(0)));
    }

    @Test
    void aRecordTheGlobalSourceCannotDeserializeGoesThroughTheDeserializationExceptionHandler() throws Exception {
        final String prefix = "global-poison";
        createTopics(prefix);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.globalTable(prefix + "-labels", Consumed.with(Serdes.String(), Serdes.Long()),
            Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(LABELS));
        builder.stream(prefix + "-input", Consumed.with(Serdes.String(), Serdes.String())).to(prefix + "-output");
        final Properties props = props(prefix + "-app");
        props.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        streams.setUncaughtExceptionHandler(exception -> {
            handled.add(exception);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();

        produceBytes(prefix + "-labels", "poison", "not a long".getBytes(StandardCharsets.UTF_8));
        produceBytes(prefix + "-labels", "answer", new LongSerializer().serialize(prefix, 42L));
        final ReadOnlyKeyValueStore<String, Long> labels = streams.store(
            StoreQueryParameters.fromNameAndType(LABELS, QueryableStoreTypes.<String, Long>keyValueStore()));
        waitFor(() -> Long.valueOf(42L).equals(labels.get("answer")), "the record after the poison one");
        assertEquals(null, labels.get("poison"));
        assertEquals(List.of(), handled, "the handler let the global thread go on");
    }

    private static ReadOnlyKeyValueStore<String, String> labels(final KafkaStreams streams) {
        return streams.store(StoreQueryParameters.fromNameAndType(LABELS, QueryableStoreTypes.<String, String>keyValueStore()));
    }

    private static ReadOnlyKeyValueStore<String, String> prices(final KafkaStreams streams) {
        return streams.store(StoreQueryParameters.fromNameAndType(PRICES, QueryableStoreTypes.<String, String>keyValueStore()));
    }

    private static void produce(final String topic, final Map<String, String> records) throws Exception {
        final Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (final Map.Entry<String, String> record : records.entrySet()) {
                producer.send(new ProducerRecord<>(topic, record.getKey(), record.getValue())).get();
            }
        }
    }

    private static void produceBytes(final String topic, final String key, final byte[] value) throws Exception {
        final Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, byte[]> producer =
                 new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, key, value)).get();
        }
    }

}
