package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.drain;
import static dev.sluice.streams.state.internals.StoreFixture.string;
import static dev.sluice.streams.state.internals.StoreFixture.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Kafka Streams' {@code KeyValueStore} contract, on both backends. */
class KeyValueBytesStoreContractTest {

    @TempDir
    Path stateDir;

    static Stream<Arguments> backends() {
        return Stream.of(Arguments.of("rocksdb", KeyValueBackend.ROCKS_DB), Arguments.of("in-memory", KeyValueBackend.IN_MEMORY));
    }

    private SluiceKeyValueBytesStore open(final KeyValueBackend backend) {
        return new StoreFixture(stateDir).open(backend);
    }

    private static void putAll(final SluiceKeyValueBytesStore store, final String... keys) {
        for (final String key : keys) {
            store.put(bytes(key), value("v" + key));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void putGetDeleteAndPutIfAbsent(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = open(backend)) {
            assertNull(store.get(bytes("a")));
            store.put(bytes("a"), value("1"));
            assertEquals("1", string(store.get(bytes("a"))));
            store.put(bytes("a"), value("2"));
            assertEquals("2", string(store.get(bytes("a"))));
            assertEquals("2", string(store.putIfAbsent(bytes("a"), value("3"))));
            assertNull(store.putIfAbsent(bytes("b"), value("b1")));
            assertEquals("b1", string(store.get(bytes("b"))));
            assertEquals("2", string(store.delete(bytes("a"))));
            assertNull(store.get(bytes("a")));
            assertNull(store.delete(bytes("a")));
            store.put(bytes("b"), null);
            assertNull(store.get(bytes("b")), "a null value deletes");
            store.put(bytes("empty"), new byte[0]);
            assertArrayEquals(new byte[0], store.get(bytes("empty")));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void putAllAppliesInOrderAndNullValuesDelete(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = open(backend)) {
            store.put(bytes("gone"), value("x"));
            store.putAll(List.of(KeyValue.pair(bytes("a"), value("1")), KeyValue.pair(bytes("a"), value("2")),
                KeyValue.pair(bytes("gone"), null), KeyValue.pair(bytes("b"), value("3"))));
            assertEquals(List.of("a=2", "b=3"), drain(store.all()));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void rangesAreInclusiveOpenAtNullAndEmptyWhenReversed(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = open(backend)) {
            putAll(store, "a", "b", "c", "d", "e");
            assertEquals(List.of("b=vb", "c=vc", "d=vd"), drain(store.range(bytes("b"), bytes("d"))));
            assertEquals(List.of("d=vd", "c=vc", "b=vb"), drain(store.reverseRange(bytes("b"), bytes("d"))));
            assertEquals(List.of("a=va", "b=vb"), drain(store.range(null, bytes("b"))));
            assertEquals(List.of("e=ve", "d=vd"), drain(store.reverseRange(bytes("d"), null)));
            assertEquals(5, drain(store.range(null, null)).size());
            assertEquals(List.of(), drain(store.range(bytes("d"), bytes("b"))), "from > to is empty");
            assertEquals(List.of(), drain(store.reverseRange(bytes("d"), bytes("b"))));
            assertEquals(List.of("a=va", "b=vb", "c=vc", "d=vd", "e=ve"), drain(store.all()));
            assertEquals(List.of("e=ve", "d=vd", "c=vc", "b=vb", "a=va"), drain(store.reverseAll()));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void prefixScanReturnsExactlyTheKeysWithThePrefix(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = open(backend)) {
            putAll(store, "k", "k1", "k2", "ka", "l", "j");
            assertEquals(List.of("k=vk", "k1=vk1", "k2=vk2", "ka=vka"), drain(store.prefixScan("k", new StringSerializer())));
            assertEquals(List.of(), drain(store.prefixScan("z", new StringSerializer())));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void scansSeeUnsignedByteOrder(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = open(backend)) {
            store.put(Bytes.wrap(new byte[] {(byte) 0xFF}), value("high"));
            store.put(Bytes.wrap(new byte[] {0x01}), value("low"));
            final List<String> values = new ArrayList<>();
            try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
                all.forEachRemaining(entry -> values.add(string(entry.value)));
            }
            assertEquals(List.of("low", "high"), values);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void nullKeysRaiseNullPointerException(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = open(backend)) {
            assertThrows(NullPointerException.class, () -> store.get(null));
            assertThrows(NullPointerException.class, () -> store.put(null, value("x")));
            assertThrows(NullPointerException.class, () -> store.putIfAbsent(null, value("x")));
            assertThrows(NullPointerException.class, () -> store.delete(null));
            assertThrows(NullPointerException.class, () -> store.putAll(List.of(KeyValue.pair(null, value("x")))));
            assertThrows(NullPointerException.class, () -> store.prefixScan(null, new StringSerializer()));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aClosedStoreRaisesInvalidStateStoreAndClosingTwiceIsHarmless(final String label, final KeyValueBackend backend) {
        final SluiceKeyValueBytesStore store = open(backend);
        assertTrue(store.isOpen());
        store.close();
        store.close();
        assertFalse(store.isOpen());
        assertThrows(InvalidStateStoreException.class, () -> store.get(bytes("a")));
        assertThrows(InvalidStateStoreException.class, () -> store.put(bytes("a"), value("1")));
        assertThrows(InvalidStateStoreException.class, () -> store.all());
        assertThrows(InvalidStateStoreException.class, () -> store.approximateNumEntries());
        assertEquals(0, store.approximateNumUncommittedBytes());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void iteratorsCrossChunkBoundariesWithoutLosingEntries(final String label, final KeyValueBackend backend) {
        // 64-byte chunks hold a few entries each; one value is larger than a whole chunk.
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(backend, 64)) {
            final int count = 1000;
            for (int i = 0; i < count; i++) {
                store.put(bytes(String.format("key-%04d", i)), value("value-" + i));
            }
            final byte[] large = new byte[500];
            Arrays.fill(large, (byte) 'x');
            store.put(bytes("key-0500"), large);

            try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
                for (int i = 0; i < count; i++) {
                    assertEquals(String.format("key-%04d", i), string(all.peekNextKey().get()));
                    final KeyValue<Bytes, byte[]> entry = all.next();
                    assertEquals(i == 500 ? string(large) : "value-" + i, string(entry.value));
                }
                assertFalse(all.hasNext());
                assertThrows(NoSuchElementException.class, all::next);
            }
            final List<String> reversed = drain(store.reverseAll());
            assertEquals(count, reversed.size());
            assertTrue(reversed.get(0).startsWith("key-0999="));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void closingTheStoreClosesItsIterators(final String label, final KeyValueBackend backend) {
        final long liveBefore = NativeHandles.liveIterators();
        final SluiceKeyValueBytesStore store = open(backend);
        putAll(store, "a", "b");
        final KeyValueIterator<Bytes, byte[]> first = store.all();
        final KeyValueIterator<Bytes, byte[]> second = store.range(bytes("a"), bytes("b"));
        assertTrue(first.hasNext());
        assertEquals(2, store.openIterators());
        store.close();
        assertEquals(0, store.openIterators());
        assertEquals(liveBefore, NativeHandles.liveIterators());
        assertThrows(InvalidStateStoreException.class, first::hasNext);
        assertThrows(InvalidStateStoreException.class, second::hasNext);
        first.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void iteratorsKeepTheEntriesTheyWereOpenedWith(final String label, final KeyValueBackend backend) {
        try (SluiceKeyValueBytesStore store = open(backend)) {
            putAll(store, "a", "b");
            try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
                store.put(bytes("c"), value("vc"));
                store.delete(bytes("b"));
                final List<String> seen = new ArrayList<>();
                all.forEachRemaining(entry -> seen.add(string(entry.key.get())));
                assertEquals(List.of("a", "b"), seen);
            }
        }
    }
}
