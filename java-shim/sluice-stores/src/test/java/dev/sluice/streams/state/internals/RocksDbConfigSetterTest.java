package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.drain;
import static dev.sluice.streams.state.internals.StoreFixture.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.Statistics;
import org.rocksdb.WriteBufferManager;

/**
 * A user's {@code RocksDBConfigSetter} reaches Sluice's RocksDB stores: called per store as Kafka
 * Streams calls it, its settings visible in the options RocksDB persists for the store, what Sluice
 * cannot apply named, and its {@code close} called with the store.
 */
class RocksDbConfigSetterTest {

    private static final TopicPartition CHANGELOG = new TopicPartition("app-store-changelog", 0);

    @TempDir
    Path stateDir;

    /** Kafka Streams' documented bounded-memory setter: one cache and write buffer manager for all stores. */
    public static class BoundedMemory implements RocksDBConfigSetter {
        static final long TOTAL_OFF_HEAP_BYTES = 48L << 20;
        private static final Cache CACHE = new LRUCache(TOTAL_OFF_HEAP_BYTES, -1, false, 0.1);
        private static final WriteBufferManager WRITE_BUFFER_MANAGER = new WriteBufferManager(16L << 20, CACHE);

        @Override
        public void setConfig(final String storeName, final Options options, final Map<String, Object> configs) {
            final BlockBasedTableConfig tableConfig = (BlockBasedTableConfig) options.tableFormatConfig();
            tableConfig.setBlockCache(CACHE);
            tableConfig.setCacheIndexAndFilterBlocks(true);
            options.setWriteBufferManager(WRITE_BUFFER_MANAGER);
            tableConfig.setCacheIndexAndFilterBlocksWithHighPriority(true);
            tableConfig.setPinTopLevelIndexAndFilter(true);
            tableConfig.setBlockSize(8 << 10);
            options.setMaxWriteBufferNumber(2);
            options.setWriteBufferSize(8 << 20);
            options.setTableFormatConfig(tableConfig);
        }

        @Override
        public void close(final String storeName, final Options options) {
            // The cache and write buffer manager are shared by every store: not closed here.
        }
    }

    /** Compaction and compression, as Kafka Streams' docs show them, and a call log. */
    public static class CompactionAndCompression implements RocksDBConfigSetter {
        static final List<String> CALLS = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void setConfig(final String storeName, final Options options, final Map<String, Object> configs) {
            CALLS.add("set " + storeName + " " + configs.get(StreamsConfig.APPLICATION_ID_CONFIG));
            options.setCompactionStyle(CompactionStyle.UNIVERSAL);
            options.setCompressionType(CompressionType.LZ4_COMPRESSION);
            options.setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION);
            options.setLevel0FileNumCompactionTrigger(8);
            options.setStatistics(new Statistics());
            // A store's guarantees need paranoid checks: refused.
            options.setParanoidChecks(false);
        }

        @Override
        public void close(final String storeName, final Options options) {
            CALLS.add("close " + storeName);
            options.statistics().close();
        }
    }

    /** Reads every option and writes them back unchanged. */
    public static class ChangesNothing implements RocksDBConfigSetter {
        @Override
        public void setConfig(final String storeName, final Options options, final Map<String, Object> configs) {
            options.setWriteBufferSize(options.writeBufferSize());
            options.setMaxOpenFiles(options.maxOpenFiles());
            options.setTableFormatConfig(options.tableFormatConfig());
        }

        @Override
        public void close(final String storeName, final Options options) {
        }
    }

    private static Properties setter(final Object setter) {
        final Properties props = new Properties();
        props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, setter);
        return props;
    }

    private static Map<String, Object> appConfigs(final Object setter) {
        return Map.of(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, setter,
            StreamsConfig.APPLICATION_ID_CONFIG, "app");
    }

    /** The lines of the newest OPTIONS file RocksDB persisted for the store under {@code taskDir}. */
    private static List<String> persistedOptions(final Path taskDir) {
        final Path storeDir = taskDir.resolve(RocksDbBackend.PARENT_DIRECTORY).resolve(StoreFixture.STORE_NAME);
        try (Stream<Path> files = Files.list(storeDir)) {
            final Path newest = files.filter(f -> f.getFileName().toString().startsWith("OPTIONS-"))
                .max(Path::compareTo).orElseThrow();
            return Files.readAllLines(newest).stream().map(String::trim).collect(Collectors.toList());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The lines of one section of an OPTIONS file, e.g. {@code [CFOptions "default"]}. */
    private static List<String> section(final List<String> options, final String header) {
        final List<String> lines = new ArrayList<>();
        boolean inside = false;
        for (final String line : options) {
            if (line.startsWith("[")) {
                inside = line.equals(header);
            } else if (inside) {
                lines.add(line);
            }
        }
        assertTrue(inside || !lines.isEmpty(), "no section " + header + " in " + options);
        return lines;
    }

    @Test
    void aBoundedMemorySetterGivesItsStoresOneBudgetOfItsCacheAndItsTuning() {
        final long resourcesBefore = NativeHandles.liveRocksDbResources();
        final Path taskA = stateDir.resolve("0_0");
        final Path taskB = stateDir.resolve("0_1");
        final StoreFixture fixtureA = new StoreFixture(taskA, setter(BoundedMemory.class));
        try (SluiceKeyValueBytesStore first = fixtureA.open(KeyValueBackend.ROCKS_DB);
             SluiceKeyValueBytesStore second = new StoreFixture(taskB, setter(BoundedMemory.class)).open(KeyValueBackend.ROCKS_DB)) {
            assertEquals(resourcesBefore + 1, NativeHandles.liveRocksDbResources(),
                "stores given one cache object share one budget");
            first.put(bytes("a"), value("1"));
            first.commit(Map.of(CHANGELOG, 0L));
            second.put(bytes("b"), value("2"));
            second.commit(Map.of(CHANGELOG, 0L));
            assertEquals(List.of("a=1"), drain(first.all()));
            assertEquals(BigInteger.valueOf(BoundedMemory.TOTAL_OFF_HEAP_BYTES),
                rocksDbMetric(fixtureA, "block-cache-capacity"),
                "Kafka Streams' block-cache-capacity metric reads the setter's cache capacity");
        }
        assertEquals(resourcesBefore, NativeHandles.liveRocksDbResources());

        final List<String> options = persistedOptions(taskA);
        final List<String> data = section(options, "[CFOptions \"default\"]");
        assertTrue(data.contains("write_buffer_size=8388608"), data.toString());
        assertTrue(data.contains("max_write_buffer_number=2"), data.toString());
        final List<String> table = section(options, "[TableOptions/BlockBasedTable \"default\"]");
        assertTrue(table.contains("block_size=8192"), table.toString());
        assertTrue(table.contains("pin_top_level_index_and_filter=true"), table.toString());
        assertTrue(table.contains("cache_index_and_filter_blocks_with_high_priority=true"), table.toString());
        final List<String> offsets = section(options, "[CFOptions \"offsets\"]");
        assertTrue(offsets.contains("write_buffer_size=1048576"), "the offsets column family keeps its own: " + offsets);
    }

    @Test
    void theWriteBufferManagerOfABoundedMemorySetterIsNamedAsNotApplied() {
        try (RocksDbConfigSetterSettings settings =
                 RocksDbConfigSetterSettings.forStore("counts", appConfigs(BoundedMemory.class))) {
            assertEquals(BoundedMemory.TOTAL_OFF_HEAP_BYTES, settings.blockCache().capacityBytes());
            assertEquals(List.of("writeBufferManager"), names(settings.notApplied()), settings.notApplied().toString());
            assertEquals("8388608", settings.settings().get("write_buffer_size"));
        }
    }

    @Test
    void compactionAndCompressionAreAppliedAndStatisticsAndParanoidChecksAreNamedAsNotApplied() {
        CompactionAndCompression.CALLS.clear();
        try (SluiceKeyValueBytesStore store =
                 new StoreFixture(stateDir, setter(CompactionAndCompression.class.getName())).open(KeyValueBackend.ROCKS_DB)) {
            store.put(bytes("a"), value("1"));
            store.commit(Map.of(CHANGELOG, 0L));
        }
        assertEquals(List.of("set " + StoreFixture.STORE_NAME + " sluice-store-test", "close " + StoreFixture.STORE_NAME),
            CompactionAndCompression.CALLS, "setConfig as the store opens, close as it closes");
        final List<String> data = section(persistedOptions(stateDir), "[CFOptions \"default\"]");
        assertTrue(data.contains("compaction_style=kCompactionStyleUniversal"), data.toString());
        assertTrue(data.contains("level0_file_num_compaction_trigger=8"), data.toString());
        assertTrue(data.contains("compression=kLZ4Compression"), data.toString());
        assertTrue(data.contains("bottommost_compression=kZSTD"), data.toString());

        try (RocksDbConfigSetterSettings requested =
                 RocksDbConfigSetterSettings.forStore("counts", appConfigs(CompactionAndCompression.class))) {
            final RocksDbConfigSetterSettings applied =
                requested.withoutRefused(NativeKeyValueStore.refusedRocksDbSettings(requested.settings()));
            assertEquals(List.of("statistics", "paranoid_checks"), names(applied.notApplied()),
                applied.notApplied().toString());
            assertEquals(Map.of("compaction_style", "universal", "level0_file_num_compaction_trigger", "8",
                    "compression_type", "lz4_compression", "bottommost_compression_type", "zstd_compression"),
                applied.settings());
        }
    }

    @Test
    void aSetterThatChangesNothingLeavesEveryDefault() {
        try (RocksDbConfigSetterSettings settings =
                 RocksDbConfigSetterSettings.forStore("counts", appConfigs(ChangesNothing.class))) {
            assertEquals(Map.of(), settings.settings());
            assertEquals(List.of(), settings.notApplied());
            assertEquals(null, settings.blockCache());
        }
    }

    @Test
    void withoutASetterTheStoreReportsSluicesSharedCache() {
        final StoreFixture fixture = new StoreFixture(stateDir);
        try (SluiceKeyValueBytesStore store = fixture.open(KeyValueBackend.ROCKS_DB)) {
            for (int i = 0; i < 100; i++) {
                store.put(bytes("key-" + i), value("value-" + i));
            }
            store.commit(Map.of(CHANGELOG, 0L));
            assertEquals(BigInteger.valueOf(128L << 20), rocksDbMetric(fixture, "block-cache-capacity"));
            // Summed over the column families, as Kafka Streams' aggregated properties are: the 100 puts
            // and the few entries of the offsets column family (format marker, offsets, position).
            final long entries = ((BigInteger) rocksDbMetric(fixture, "num-entries-active-mem-table")).longValue();
            assertTrue(entries >= 100 && entries <= 105, "entries in the memtables: " + entries);
        }
    }

    /** The value of Kafka Streams' RocksDB metric {@code name} of the fixture's store. */
    private static Object rocksDbMetric(final StoreFixture fixture, final String name) {
        final List<Object> values = fixture.context.metrics().metrics().entrySet().stream()
            .filter(e -> e.getKey().group().equals("stream-state-metrics") && e.getKey().name().equals(name)
                && StoreFixture.STORE_NAME.equals(e.getKey().tags().get("rocksdb-state-id")))
            .map(e -> e.getValue().metricValue())
            .collect(Collectors.toList());
        assertEquals(1, values.size(), name + " of the store: " + values);
        return values.get(0);
    }

    /** The name each not-applied entry starts with. */
    private static List<String> names(final List<String> notApplied) {
        return notApplied.stream().map(entry -> entry.split(" ", 2)[0]).collect(Collectors.toList());
    }
}
