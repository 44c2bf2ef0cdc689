package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.string;
import static dev.sluice.streams.state.internals.StoreFixture.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Transactional or not, by the application config: under exactly-once with
 * {@code enable.transactional.statestores} false Kafka Streams' runtime never commits stores while a
 * task runs, so each write commits at once; otherwise writes wait for the commit.
 */
class CommitModeTest {

    private static final TopicPartition CHANGELOG = new TopicPartition("app-store-changelog", 0);

    @TempDir
    Path stateDir;

    static Stream<Arguments> backends() {
        return Stream.of(Arguments.of("rocksdb", KeyValueBackend.ROCKS_DB), Arguments.of("in-memory", KeyValueBackend.IN_MEMORY));
    }

    private static Properties config(final String guarantee, final Boolean transactionalStores) {
        final Properties props = new Properties();
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        if (transactionalStores != null) {
            props.put(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, transactionalStores);
        }
        return props;
    }

    private SluiceKeyValueBytesStore open(final KeyValueBackend backend, final Properties config) {
        return new StoreFixture(stateDir, config).open(backend);
    }

    private static String committedValue(final SluiceKeyValueBytesStore store, final String key) {
        return string(store.readOnly(IsolationLevel.READ_COMMITTED).get(bytes(key)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void underExactlyOnceWithoutTheTransactionalFlagEachWriteIsCommittedAtOnce(final String label,
                                                                               final KeyValueBackend backend) {
        for (final Boolean flag : new Boolean[] {null, false}) {
            try (SluiceKeyValueBytesStore store = open(backend, config(StreamsConfig.EXACTLY_ONCE_V2, flag))) {
                store.put(bytes("a"), value("1"));
                store.delete(bytes("gone"));
                assertEquals("1", committedValue(store, "a"), "flag " + flag);
                assertEquals(0, store.approximateNumUncommittedBytes());
                store.rollback();
                assertEquals("1", committedValue(store, "a"), "a rollback has nothing left to drop");
                store.delete(bytes("a"));
            }
        }
    }

    @Test
    void aWriteAfterACommitClearsTheOffsetsSoACrashRebuildsTheState() {
        final Properties eos = config(StreamsConfig.EXACTLY_ONCE_V2, false);
        try (SluiceKeyValueBytesStore store = open(KeyValueBackend.ROCKS_DB, eos)) {
            store.put(bytes("a"), value("1"));
            store.commit(Map.of(CHANGELOG, 9L));
            assertEquals(9L, store.committedOffset(CHANGELOG), "a closing task still commits its offsets");
            store.put(bytes("a"), value("2"));
            assertNull(store.committedOffset(CHANGELOG), "data ahead of its offset must not claim one");
        }
        try (SluiceKeyValueBytesStore reopened = open(KeyValueBackend.ROCKS_DB, eos)) {
            assertNull(reopened.committedOffset(CHANGELOG));
            assertEquals("2", string(reopened.get(bytes("a"))), "writes were durable without a commit");
        }
    }

    @Test
    void layeredStoresCommitEachWriteToo() {
        final StoreFixture fixture = new StoreFixture(stateDir, config(StreamsConfig.EXACTLY_ONCE_V2, null));
        try (SluiceWindowBytesStore store = (SluiceWindowBytesStore) fixture.init(
                SluiceWindowBytesStoreSupplier.inMemory("w", Duration.ofMinutes(10), Duration.ofSeconds(10), false).get())) {
            store.put(bytes("a"), value("1"), 1_000);
            assertEquals("1", string(store.readOnly(IsolationLevel.READ_COMMITTED).fetch(bytes("a"), 1_000)));
            assertEquals(0, store.approximateNumUncommittedBytes());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transactionalConfigs")
    void otherwiseWritesWaitForTheCommit(final String label, final Properties config) {
        try (SluiceKeyValueBytesStore store = open(KeyValueBackend.ROCKS_DB, config)) {
            store.put(bytes("a"), value("1"));
            assertNull(committedValue(store, "a"));
            assertTrue(store.approximateNumUncommittedBytes() > 0);
            store.commit(Map.of(CHANGELOG, 3L));
            assertEquals("1", committedValue(store, "a"));
            store.put(bytes("a"), value("2"));
            assertEquals(3L, store.committedOffset(CHANGELOG));
            assertEquals("1", committedValue(store, "a"));
        }
    }

    static Stream<Arguments> transactionalConfigs() {
        return Stream.of(
            Arguments.of("exactly-once, transactional flag true", config(StreamsConfig.EXACTLY_ONCE_V2, true)),
            Arguments.of("at-least-once, default flag", config(StreamsConfig.AT_LEAST_ONCE, null)),
            Arguments.of("at-least-once, flag false", config(StreamsConfig.AT_LEAST_ONCE, false)));
    }
}
