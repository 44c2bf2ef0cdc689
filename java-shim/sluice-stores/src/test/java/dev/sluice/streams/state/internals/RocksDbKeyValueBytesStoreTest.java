package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.drain;
import static dev.sluice.streams.state.internals.StoreFixture.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.state.HeadersBytesStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What only the persistent backend does: survive reopening, live where Kafka Streams' stores live. */
class RocksDbKeyValueBytesStoreTest {

    private static final TopicPartition CHANGELOG = new TopicPartition("app-store-changelog", 0);

    @TempDir
    Path stateDir;

    private Path storeDirectory() {
        return stateDir.resolve(RocksDbBackend.PARENT_DIRECTORY).resolve(StoreFixture.STORE_NAME);
    }

    @Test
    void committedDataOffsetsAndPositionSurviveReopeningButStagedWritesDoNot() {
        final StoreFixture fixture = new StoreFixture(stateDir);
        try (SluiceKeyValueBytesStore store = fixture.open(KeyValueBackend.ROCKS_DB)) {
            assertTrue(store.persistent());
            fixture.context.setRecordMetadata("input", 0, 5L);
            store.put(bytes("committed"), value("1"));
            store.commit(Map.of(CHANGELOG, 9L));
            store.put(bytes("staged"), value("2"));
        }
        assertTrue(Files.isDirectory(storeDirectory()), "the store lives in <state dir>/rocksdb/<name>");
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(KeyValueBackend.ROCKS_DB)) {
            assertEquals(List.of("committed=1"), drain(store.all()));
            assertEquals(9L, store.committedOffset(CHANGELOG));
            assertEquals(5L, store.getPosition().getPartitionPositions("input").get(0));
        }
    }

    @Test
    void inMemoryStoresAreNotPersistentAndStartEmpty() {
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(KeyValueBackend.IN_MEMORY)) {
            assertFalse(store.persistent());
            store.put(bytes("a"), value("1"));
            store.commit(Map.of(CHANGELOG, 1L));
        }
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(KeyValueBackend.IN_MEMORY)) {
            assertNull(store.get(bytes("a")));
            assertFalse(Files.exists(storeDirectory()));
        }
    }

    @Test
    void aCorruptDirectoryIsWipedAndTheStoreOpensEmpty() throws Exception {
        Files.createDirectories(storeDirectory());
        final Path foreign = Files.writeString(storeDirectory().resolve("not-a-database.txt"), "left behind");
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(KeyValueBackend.ROCKS_DB)) {
            assertFalse(Files.exists(foreign));
            assertEquals(List.of(), drain(store.all()));
            assertNull(store.committedOffset(CHANGELOG));
            store.put(bytes("a"), value("1"));
            store.commit(Map.of(CHANGELOG, 0L));
        }
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(KeyValueBackend.ROCKS_DB)) {
            assertEquals(List.of("a=1"), drain(store.all()));
        }
    }

    @Test
    void aBadRocksDbSettingFailsWithConfigExceptionNamingTheKey() {
        final Properties props = new Properties();
        props.put("sluice.rocksdb.block.cache.bytes", "lots");
        final long resourcesBefore = NativeHandles.liveRocksDbResources();
        final ConfigException thrown = assertThrows(ConfigException.class,
            () -> new StoreFixture(stateDir, props).open(KeyValueBackend.ROCKS_DB));
        assertTrue(thrown.getMessage().contains("sluice.rocksdb.block.cache.bytes"), thrown.getMessage());
        assertEquals(resourcesBefore, NativeHandles.liveRocksDbResources());
    }

    @Test
    void storesOfOneConfigurationShareResourcesAndReleaseThemWithTheLastStore() {
        final long before = NativeHandles.liveRocksDbResources();
        final SluiceKeyValueBytesStore first = new StoreFixture(stateDir.resolve("task-a")).open(KeyValueBackend.ROCKS_DB);
        final SluiceKeyValueBytesStore second = new StoreFixture(stateDir.resolve("task-b")).open(KeyValueBackend.ROCKS_DB);
        assertEquals(before + 1, NativeHandles.liveRocksDbResources());
        first.close();
        assertEquals(before + 1, NativeHandles.liveRocksDbResources());
        second.close();
        assertEquals(before, NativeHandles.liveRocksDbResources());
    }

    @Test
    void aPlainStoreReopenedHeadersAwareServesItsValuesAsKafkaStreamsUpgradesThem() {
        try (SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(KeyValueBackend.ROCKS_DB)) {
            store.put(bytes("a"), value("1"));
            store.commit(Map.of(CHANGELOG, 3L));
        }
        try (SluiceKeyValueBytesStore store = openAs(KeyValueLayout.HEADERS)) {
            assertArrayEquals(HeadersBytesStore.convertFromPlainToHeaderFormat(value("1")), store.get(bytes("a")));
            assertEquals(3L, store.committedOffset(CHANGELOG));
        }
        try (SluiceKeyValueBytesStore store = openAs(KeyValueLayout.HEADERS)) {
            assertArrayEquals(HeadersBytesStore.convertFromPlainToHeaderFormat(value("1")), store.get(bytes("a")),
                "upgraded once");
        }
    }

    @Test
    void aHeadersAwareStoreOpenedAsAnOlderLayoutFailsAndKeepsItsValues() {
        final byte[] headersAware = HeadersBytesStore.convertFromPlainToHeaderFormat(value("1"));
        try (SluiceKeyValueBytesStore store = openAs(KeyValueLayout.HEADERS)) {
            store.put(bytes("a"), headersAware);
            store.commit(Map.of(CHANGELOG, 0L));
        }
        final long storesBefore = NativeHandles.liveStores();
        for (final KeyValueLayout older : List.of(KeyValueLayout.TIMESTAMPED, KeyValueLayout.PLAIN)) {
            final ProcessorStateException thrown = assertThrows(ProcessorStateException.class, () -> openAs(older));
            assertTrue(thrown.getMessage().contains("headers-aware"), thrown.getMessage());
            assertTrue(thrown.getMessage().contains("Downgrade"), thrown.getMessage());
            assertEquals(storesBefore, NativeHandles.liveStores(), "the refused store is closed");
        }
        try (SluiceKeyValueBytesStore store = openAs(KeyValueLayout.HEADERS)) {
            assertArrayEquals(headersAware, store.get(bytes("a")));
        }
    }

    private SluiceKeyValueBytesStore openAs(final KeyValueLayout layout) {
        return new StoreFixture(stateDir).open(KeyValueBackend.ROCKS_DB, layout, NativeKeyValueIterator.DEFAULT_CHUNK_BYTES);
    }
}
