package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.string;
import static dev.sluice.streams.state.internals.StoreFixture.value;
import static dev.sluice.streams.state.internals.WindowStoreDifferentialTest.windowed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.VersionedRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The state store contract of window, session and versioned stores: commit, rollback, isolation, close. */
class LayeredStoreContractTest {

    private static final TopicPartition CHANGELOG = new TopicPartition("app-store-changelog", 0);
    private static final Duration RETENTION = Duration.ofMinutes(10);

    @TempDir
    Path stateDir;

    static Stream<Arguments> backends() {
        return Stream.of(Arguments.of("rocksdb", true), Arguments.of("in-memory", false));
    }

    private SluiceWindowBytesStore window(final boolean persistent) {
        return (SluiceWindowBytesStore) new StoreFixture(stateDir).init((persistent
            ? SluiceWindowBytesStoreSupplier.persistent("w", RETENTION, Duration.ofSeconds(10), false, false)
            : SluiceWindowBytesStoreSupplier.inMemory("w", RETENTION, Duration.ofSeconds(10), false)).get());
    }

    private SluiceSessionBytesStore session(final boolean persistent) {
        return (SluiceSessionBytesStore) new StoreFixture(stateDir).init((persistent
            ? SluiceSessionBytesStoreSupplier.persistent("s", RETENTION)
            : SluiceSessionBytesStoreSupplier.inMemory("s", RETENTION)).get());
    }

    private SluiceVersionedKeyValueStore versioned() {
        return new StoreFixture(stateDir).init(new SluiceVersionedKeyValueStore("v", KeyValueBackend.ROCKS_DB, 60_000));
    }

    @Test
    void onlyTimeOrderedSessionStoresFindEveryKeysSessionsByEndTime() {
        try (SluiceSessionBytesStore store = (SluiceSessionBytesStore) new StoreFixture(stateDir).init(
                SluiceSessionBytesStoreSupplier.persistentTimeOrdered("t", RETENTION).get())) {
            store.put(new Windowed<>(bytes("b"), new SessionWindow(0, 1_000)), value("1"));
            store.put(new Windowed<>(bytes("a"), new SessionWindow(500, 2_000)), value("2"));
            store.put(new Windowed<>(bytes("c"), new SessionWindow(3_000, 5_000)), value("3"));
            final List<String> found = new ArrayList<>();
            try (KeyValueIterator<Windowed<Bytes>, byte[]> sessions = store.findSessions(0, 2_000)) {
                sessions.forEachRemaining(session -> found.add(string(session.key.key().get()) + "@"
                    + session.key.window().end() + "=" + string(session.value)));
            }
            assertEquals(List.of("b@1000=1", "a@2000=2"), found);
        }
        try (SluiceSessionBytesStore keyOrdered = session(true)) {
            assertThrows(UnsupportedOperationException.class, () -> keyOrdered.findSessions(0, 2_000));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void windowWritesCommitWithOffsetsRollBackAndStayInvisibleToCommittedReaders(final String label,
                                                                                final boolean persistent) {
        try (SluiceWindowBytesStore store = window(persistent)) {
            assertTrue(store.managesOffsets());
            store.put(bytes("a"), value("1"), 1_000);
            store.commit(Map.of(CHANGELOG, 7L));
            assertEquals(7L, store.committedOffset(CHANGELOG));
            store.put(bytes("a"), value("2"), 1_000);
            store.put(bytes("b"), value("3"), 2_000);
            assertTrue(store.approximateNumUncommittedBytes() > 0);
            assertEquals("1", string(store.readOnly(IsolationLevel.READ_COMMITTED).fetch(bytes("a"), 1_000)));
            assertEquals("2", string(store.readOnly(IsolationLevel.READ_UNCOMMITTED).fetch(bytes("a"), 1_000)));
            store.rollback();
            assertEquals(List.of("a@1000..11000=1"), windowed(store.all()));
            assertEquals(0, store.approximateNumUncommittedBytes());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void sessionWritesCommitRollBackAndStayInvisibleToCommittedReaders(final String label, final boolean persistent) {
        final Windowed<Bytes> first = new Windowed<>(bytes("a"), new SessionWindow(0, 5_000));
        final Windowed<Bytes> second = new Windowed<>(bytes("a"), new SessionWindow(9_000, 9_000));
        try (SluiceSessionBytesStore store = session(persistent)) {
            store.put(first, value("x"));
            store.commit(Map.of(CHANGELOG, 3L));
            store.put(second, value("y"));
            store.remove(first);
            assertEquals(List.of("a@0..5000=x"), windowed(store.readOnly(IsolationLevel.READ_COMMITTED).fetch(bytes("a"))));
            assertEquals(List.of("a@9000..9000=y"), windowed(store.fetch(bytes("a"))));
            store.rollback();
            assertEquals(List.of("a@0..5000=x"), windowed(store.fetch(bytes("a"))));
            assertEquals(3L, store.committedOffset(CHANGELOG));
        }
    }

    @Test
    void versionedWritesCommitRollBackAndAnswerAsOfWithValidTo() {
        try (SluiceVersionedKeyValueStore store = versioned()) {
            assertEquals(-1L, store.put(bytes("k"), value("old"), 10));
            store.commit(Map.of(CHANGELOG, 1L));
            assertEquals(-1L, store.put(bytes("k"), value("new"), 20));
            final VersionedRecord<byte[]> old = store.get(bytes("k"), 15);
            assertEquals("old", string(old.value()));
            assertEquals(10L, old.timestamp());
            assertEquals(20L, old.validTo().orElseThrow());
            assertEquals("old", string(store.readOnly(IsolationLevel.READ_COMMITTED).get(bytes("k")).value()));
            store.rollback();
            assertEquals("old", string(store.get(bytes("k")).value()));
            assertFalse(store.get(bytes("k")).validTo().isPresent());
            assertNull(store.get(bytes("k"), 5));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void closedStoresAndTheirIteratorsRaiseInvalidStateStoreAndClosingTwiceIsHarmless(final String label,
                                                                                     final boolean persistent) {
        final long storesBefore = NativeHandles.liveStores();
        final SluiceWindowBytesStore window = window(persistent);
        window.put(bytes("a"), value("1"), 0);
        final KeyValueIterator<Windowed<Bytes>, byte[]> open = window.all();
        window.close();
        window.close();
        assertThrows(InvalidStateStoreException.class, open::hasNext);
        assertThrows(InvalidStateStoreException.class, () -> window.fetch(bytes("a"), 0));
        assertThrows(InvalidStateStoreException.class, () -> window.put(bytes("a"), value("1"), 0));
        assertThrows(InvalidStateStoreException.class, () -> window.commit(Map.of()));

        final SluiceSessionBytesStore session = session(persistent);
        session.close();
        session.close();
        assertThrows(InvalidStateStoreException.class, () -> session.fetch(bytes("a")));
        assertThrows(InvalidStateStoreException.class, session::rollback);
        assertEquals(storesBefore, NativeHandles.liveStores(), "closing released every native store");
    }

    @Test
    void aClosedVersionedStoreRaisesInvalidStateStore() {
        final SluiceVersionedKeyValueStore store = versioned();
        store.close();
        store.close();
        assertThrows(InvalidStateStoreException.class, () -> store.get(bytes("k")));
        assertThrows(InvalidStateStoreException.class, () -> store.put(bytes("k"), value("v"), 1));
    }

    @Test
    void aReopenedPersistentWindowStoreKeepsItsLastCommitOnly() {
        try (SluiceWindowBytesStore store = window(true)) {
            store.put(bytes("a"), value("kept"), 0);
            store.commit(Map.of(CHANGELOG, 5L));
            store.put(bytes("b"), value("dropped"), 0);
        }
        try (SluiceWindowBytesStore store = window(true)) {
            assertEquals(List.of("a@0..10000=kept"), windowed(store.all()));
            assertEquals(5L, store.committedOffset(CHANGELOG));
        }
    }
}
