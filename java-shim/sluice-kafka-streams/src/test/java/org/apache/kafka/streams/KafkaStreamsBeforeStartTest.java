package org.apache.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.runtime.internals.EngineRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.StreamsNotStartedException;
import org.apache.kafka.streams.errors.StreamsStoppedException;
import org.apache.kafka.streams.errors.UnknownStateStoreException;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Streams' client contract that holds without an engine running: construction and its
 * config errors, the state machine from CREATED, listeners, queries before start and after
 * close, a start refused by the stores on disk, and the methods Sluice's engine cannot honour,
 * which must say so.
 */
class KafkaStreamsBeforeStartTest {

    private static final String STORE = "counts";

    @TempDir
    Path stateDir;

    private final List<KafkaStreams> created = new ArrayList<>();

    @AfterEach
    void closeAll() {
        created.forEach(streams -> streams.close(Duration.ofSeconds(30)));
    }

    private Properties props() {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "before-start");
        // Nothing listens there: these tests never reach a broker.
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        return props;
    }

    private static Topology countingTopology() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("input", Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(Materialized.as(STORE));
        return builder.build();
    }

    private KafkaStreams streams(final Properties props) {
        final KafkaStreams streams = new KafkaStreams(countingTopology(), props);
        created.add(streams);
        return streams;
    }

    @Test
    void closeBeforeStartGoesThroughPendingShutdownToNotRunning() {
        final KafkaStreams streams = streams(props());
        final List<String> transitions = new CopyOnWriteArrayList<>();
        streams.setStateListener((newState, oldState) -> transitions.add(oldState + "->" + newState));
        assertEquals(KafkaStreams.State.CREATED, streams.state());

        streams.close();

        assertEquals(KafkaStreams.State.NOT_RUNNING, streams.state());
        // As in Kafka Streams, the listener runs on the closing thread right after the state changed.
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (transitions.size() < 2 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(List.of("CREATED->PENDING_SHUTDOWN", "PENDING_SHUTDOWN->NOT_RUNNING"), transitions);
        assertTrue(streams.close(Duration.ZERO), "closing a closed client succeeds at once");
        assertEquals(List.of("CREATED->PENDING_SHUTDOWN", "PENDING_SHUTDOWN->NOT_RUNNING"), transitions);
        assertThrows(IllegalStateException.class, streams::start);
        assertThrows(IllegalStateException.class, () -> streams.setStateListener((n, o) -> { }));
        assertThrows(IllegalStateException.class, () -> streams.setUncaughtExceptionHandler(e -> null));
    }

    @Test
    void startOpensTheStoresOnDiskAndFailsOnOneTheTopologyCannotRead() throws IOException {
        // The count's store as an application left it whose store kept headers with its values: the
        // count's timestamped store cannot read them.
        final Path taskDirectory = Files.createDirectories(stateDir.resolve("before-start").resolve("0_0"));
        final KeyValueStore<Bytes, byte[]> headersStore = Stores.persistentTimestampedKeyValueStoreWithHeaders(STORE).get();
        final MockProcessorContext<Object, Object> context =
            new MockProcessorContext<>(props(), new TaskId(0, 0), taskDirectory.toFile());
        headersStore.init(context.getStateStoreContext(), headersStore);
        headersStore.close();
        final KafkaStreams streams = streams(props());

        final ProcessorStateException thrown = assertThrows(ProcessorStateException.class, streams::start);

        assertTrue(thrown.getMessage().contains("state store " + STORE + ": it was created with incompatible settings"),
            thrown.getMessage());
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (streams.state() != KafkaStreams.State.ERROR && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(KafkaStreams.State.ERROR, streams.state());
        assertTrue(Files.exists(taskDirectory.resolve("rocksdb").resolve(STORE)), "the store on disk is kept");
    }

    @Test
    void closeWithTimeoutAndOptionsValidatesLikeKafkaStreams() {
        final KafkaStreams streams = streams(props());
        assertThrows(IllegalArgumentException.class, () -> streams.close(Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> streams.close((CloseOptions) null));
        assertTrue(streams.close(CloseOptions.timeout(Duration.ofSeconds(30))));
        assertEquals(KafkaStreams.State.NOT_RUNNING, streams.state());
    }

    @Test
    void queriesBeforeStartAndAfterCloseThrowWhatKafkaStreamsThrows() {
        final KafkaStreams streams = streams(props());
        final StoreQueryParameters<?> parameters =
            StoreQueryParameters.fromNameAndType(STORE, QueryableStoreTypes.keyValueStore());
        assertThrows(StreamsNotStartedException.class, () -> streams.store(parameters));
        assertThrows(UnknownStateStoreException.class,
            () -> streams.query(StateQueryRequest.inStore("no-such-store").withQuery(KeyQuery.withKey("k"))));
        assertThrows(StreamsNotStartedException.class,
            () -> streams.query(StateQueryRequest.inStore(STORE).withQuery(KeyQuery.withKey("k"))));
        assertThrows(StreamsNotStartedException.class, streams::metadataForAllStreamsClients);

        streams.close();

        assertThrows(IllegalStateException.class, () -> streams.store(parameters));
        assertThrows(StreamsStoppedException.class,
            () -> streams.query(StateQueryRequest.inStore(STORE).withQuery(KeyQuery.withKey("k"))));
        assertTrue(streams.metadataForLocalThreads().isEmpty());
        assertTrue(streams.allLocalStorePartitionLags().isEmpty());
    }

    @Test
    void configErrorsNameTheKey() {
        final Properties noApplicationId = props();
        noApplicationId.remove(StreamsConfig.APPLICATION_ID_CONFIG);
        assertTrue(assertThrows(ConfigException.class, () -> streams(noApplicationId)).getMessage()
            .contains(StreamsConfig.APPLICATION_ID_CONFIG));

        final Properties badThreads = props();
        badThreads.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "many");
        assertTrue(assertThrows(ConfigException.class, () -> streams(badThreads)).getMessage()
            .contains(StreamsConfig.NUM_STREAM_THREADS_CONFIG));

        final Properties badServer = props();
        badServer.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "no-port");
        assertTrue(assertThrows(ConfigException.class, () -> streams(badServer)).getMessage()
            .contains("no-port"));

        // The engine's own keys and the client settings fail at construction too, as Kafka Streams'
        // clients do when it creates them.
        final Properties badWal = props();
        badWal.put("sluice.rocksdb.wal", "sometimes");
        assertTrue(assertThrows(ConfigException.class, () -> streams(badWal)).getMessage()
            .contains("sluice.rocksdb.wal"));
        final Properties badClient = props();
        badClient.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), "soon");
        assertTrue(assertThrows(ConfigException.class, () -> streams(badClient)).getMessage()
            .contains(ProducerConfig.LINGER_MS_CONFIG));
    }

    @Test
    void timeoutsBeyondWhatTheEngineClientsTakeAreTakenAsTheirLargestAndReported() {
        // Java's clients take any int; librdkafka caps the poll interval at a day, and computes with a session
        // timeout correctly up to 2147483 ms only.
        final Properties props = props();
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.MAX_VALUE);
        props.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG), Integer.MAX_VALUE);
        streams(props);

        final Map<String, String> adjusted = EngineRuntime.checkConfig(new StreamsConfig(props));
        assertEquals("86400000", adjusted.get(StreamsConfig.mainConsumerPrefix(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG)));
        assertEquals("2147483", adjusted.get(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG)));
        adjusted.forEach((key, used) -> assertTrue(key.endsWith(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG)
            || key.endsWith(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG), "only the two timeouts are adjusted: " + adjusted));
    }

    @Test
    void threadsAreNeitherAddedNorRemovedBeforeStart() {
        final KafkaStreams streams = streams(props());
        assertEquals(Optional.empty(), streams.addStreamThread());
        assertEquals(Optional.empty(), streams.removeStreamThread());
        assertEquals(Optional.empty(), streams.removeStreamThread(Duration.ofSeconds(1)));
        assertEquals(KafkaStreams.State.CREATED, streams.state());
    }

    @Test
    void pauseAndResumeBeforeStartAreRemembered() {
        final KafkaStreams streams = streams(props());
        assertFalse(streams.isPaused());
        streams.pause();
        assertTrue(streams.isPaused());
        streams.resume();
        assertFalse(streams.isPaused());
        assertEquals(KafkaStreams.State.CREATED, streams.state());
    }

    @Test
    void unsupportedMethodsSaySoAndNameTheMethod() {
        final KafkaStreams streams = streams(props());
        // A dynamic member's consumer leaves the group on close; staying in it is not possible.
        assertUnsupported("close(CloseOptions)", () -> streams.close(
            CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP)));
        assertEquals(KafkaStreams.State.CREATED, streams.state(), "a refused close leaves the client as it was");
        // Kafka Streams checks the client's state first; so does Sluice.
        assertThrows(IllegalStateException.class, () -> streams.clientInstanceIds(Duration.ofSeconds(1)));
    }

    @Test
    void closeHonoursTheGroupMembershipOperationTheEngineCanDo() {
        final KafkaStreams dynamicMember = streams(props());
        assertTrue(dynamicMember.close(
            CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)));
        assertEquals(KafkaStreams.State.NOT_RUNNING, dynamicMember.state());

        final Properties staticProps = props();
        staticProps.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), "instance-a");
        assertTrue(streams(staticProps).close(
            CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)));
        assertTrue(streams(staticProps).close(
            CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP)));
    }

    @Test
    void cleanUpDeletesTheTaskDirectoriesBeforeStart() throws IOException {
        final Path taskDir = Files.createDirectories(stateDir.resolve("before-start").resolve("0_0"));
        Files.writeString(taskDir.resolve("data"), "x");
        final KafkaStreams streams = streams(props());
        streams.cleanUp();
        assertFalse(Files.exists(taskDir));
    }

    @Test
    void metricsCarryTheClientMetrics() {
        final KafkaStreams streams = streams(props());
        assertTrue(streams.metrics().keySet().stream().anyMatch(
            name -> name.name().equals("application-id") && name.group().equals("stream-metrics")),
            () -> "metrics: " + streams.metrics().keySet());
        assertTrue(streams.metrics().keySet().stream().anyMatch(name -> name.name().equals("state")));
    }

    @Test
    void aliveStreamThreadsCountsTheConfiguredThreadsBeforeStart() {
        final Properties props = props();
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 3);
        // Kafka Streams makes its stream threads as it is constructed; they count until they shut down.
        assertEquals(3, aliveStreamThreads(streams(props)));
    }

    private static int aliveStreamThreads(final KafkaStreams streams) {
        return streams.metrics().values().stream()
            .filter(metric -> metric.metricName().name().equals("alive-stream-threads"))
            .mapToInt(metric -> ((Number) metric.metricValue()).intValue())
            .findFirst().orElseThrow();
    }

    private static void assertUnsupported(final String method, final org.junit.jupiter.api.function.Executable call) {
        final UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, call);
        assertTrue(e.getMessage().contains(method), "message names " + method + ": " + e.getMessage());
    }
}
