package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.drain;
import static dev.sluice.streams.state.internals.StoreFixture.string;
import static dev.sluice.streams.state.internals.StoreFixture.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.internals.ManagedKeyValueIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Commits, offsets, rollback, isolation levels and interactive-query positions, on both backends. */
class TransactionalKeyValueBytesStoreTest {

    private static final TopicPartition CHANGELOG = new TopicPartition("app-store-changelog", 0);

    @TempDir
    Path stateDir;

    private ExecutorService otherThread;

    @BeforeEach
    void startOtherThread() {
        otherThread = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void stopOtherThread() throws InterruptedException {
        otherThread.shutdownNow();
        assertTrue(otherThread.awaitTermination(10, TimeUnit.SECONDS));
    }

    static Stream<Arguments> backends() {
        return Stream.of(Arguments.of("rocksdb", KeyValueBackend.ROCKS_DB), Arguments.of("in-memory", KeyValueBackend.IN_MEMORY));
    }

    private <T> T onOtherThread(final Supplier<T> read) throws Exception {
        return CompletableFuture.supplyAsync(read, otherThread).get(10, TimeUnit.SECONDS);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void storesManageTheirOffsetsAndCommitThemWithTheData(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(backend)) {
            assertTrue(store.managesOffsets());
            assertNull(store.committedOffset(CHANGELOG));
            store.put(bytes("a"), value("1"));
            assertTrue(store.approximateNumUncommittedBytes() > 0);
            store.commit(Map.of(CHANGELOG, 41L));
            assertEquals(41L, store.committedOffset(CHANGELOG));
            assertEquals(0, store.approximateNumUncommittedBytes());

            final Map<TopicPartition, Long> removal = new HashMap<>();
            removal.put(CHANGELOG, null);
            store.commit(removal);
            assertNull(store.committedOffset(CHANGELOG), "a null offset removes it");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void rollbackDropsOnlyTheStagedWrites(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(backend)) {
            store.put(bytes("kept"), value("1"));
            store.commit(Map.of(CHANGELOG, 1L));
            store.put(bytes("kept"), value("2"));
            store.put(bytes("dropped"), value("x"));
            store.rollback();
            assertEquals(List.of("kept=1"), drain(store.all()));
            assertEquals(0, store.approximateNumUncommittedBytes());
            assertEquals(1L, store.committedOffset(CHANGELOG));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void readCommittedViewsSeeOnlyCommittedStateFromAnotherThread(final String label, final KeyValueBackend backend)
        throws Exception {
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(backend)) {
            final ReadOnlyKeyValueStore<Bytes, byte[]> committed = store.readOnly(IsolationLevel.READ_COMMITTED);
            final ReadOnlyKeyValueStore<Bytes, byte[]> uncommitted = store.readOnly(IsolationLevel.READ_UNCOMMITTED);
            store.put(bytes("a"), value("1"));
            store.put(bytes("b"), value("2"));

            assertNull(onOtherThread(() -> committed.get(bytes("a"))));
            assertEquals(List.of(), onOtherThread(() -> drain(committed.all())));
            assertEquals(0L, onOtherThread(committed::approximateNumEntries));
            assertEquals("1", onOtherThread(() -> string(uncommitted.get(bytes("a")))));
            assertEquals(List.of("b=2", "a=1"), onOtherThread(() -> drain(uncommitted.reverseAll())));

            store.commit(Map.of(CHANGELOG, 2L));
            assertEquals("1", onOtherThread(() -> string(committed.get(bytes("a")))));
            assertEquals(List.of("a=1", "b=2"), onOtherThread(() -> drain(committed.range(bytes("a"), bytes("z")))));

            store.delete(bytes("a"));
            assertEquals("1", onOtherThread(() -> string(committed.get(bytes("a")))));
            assertNull(onOtherThread(() -> uncommitted.get(bytes("a"))));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void interactiveQueriesReadAtTheRequestedLevelAndReportThePosition(final String label, final KeyValueBackend backend) {
        final StoreFixture fixture = new StoreFixture(stateDir);
        try (SluiceKeyValueBytesStore store = fixture.open(backend)) {
            fixture.context.setRecordMetadata("input", 3, 17L);
            store.put(bytes("a"), value("1"));
            assertEquals(17L, store.getPosition().getPartitionPositions("input").get(3));

            final KeyQuery<Bytes, byte[]> query = KeyQuery.withKey(bytes("a"));
            final QueryResult<byte[]> uncommitted = store.query(query, PositionBound.unbounded(),
                new QueryConfig(false, IsolationLevel.READ_UNCOMMITTED));
            assertEquals("1", string(uncommitted.getResult()));
            final QueryResult<byte[]> committed = store.query(query, PositionBound.unbounded(),
                new QueryConfig(false, IsolationLevel.READ_COMMITTED));
            assertNull(committed.getResult());
            assertTrue(committed.getPosition().getTopics().isEmpty(), "nothing committed yet");

            store.commit(Map.of(CHANGELOG, 0L));
            final QueryResult<byte[]> afterCommit = store.query(query, PositionBound.unbounded(),
                new QueryConfig(false, IsolationLevel.READ_COMMITTED));
            assertEquals("1", string(afterCommit.getResult()));
            assertEquals(17L, afterCommit.getPosition().getPartitionPositions("input").get(3));
        }
    }

    /**
     * Kafka Streams' adapter of a plain key-value store to a timestamped one (a DSL table materialized in
     * {@code Stores.persistentKeyValueStore}) takes the iterator of a range query as a
     * {@link ManagedKeyValueIterator} and hands it the callback that runs when it closes.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void rangeQueriesAnswerWithIteratorsThatRunTheirCloseCallbackOnce(final String label,
                                                                      final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(backend)) {
            store.put(bytes("a"), value("1"));
            store.put(bytes("b"), value("2"));

            final QueryResult<KeyValueIterator<Bytes, byte[]>> result = store.query(
                RangeQuery.withRange(bytes("a"), bytes("z")), PositionBound.unbounded(), new QueryConfig(false));
            final ManagedKeyValueIterator<?, ?> managed = assertInstanceOf(ManagedKeyValueIterator.class,
                result.getResult());
            final AtomicInteger closed = new AtomicInteger();
            managed.onClose(closed::incrementAndGet);
            assertEquals(0, closed.get());
            assertEquals(List.of("a=1", "b=2"), drain(result.getResult()));
            result.getResult().close();
            assertEquals(1, closed.get());
        }
    }
}
