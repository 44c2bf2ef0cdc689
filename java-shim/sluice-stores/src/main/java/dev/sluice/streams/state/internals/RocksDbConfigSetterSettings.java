package dev.sluice.streams.state.internals;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.Env;
import org.rocksdb.Filter;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksMemEnv;
import org.rocksdb.TableFormatConfig;

/**
 * What a user's {@link RocksDBConfigSetter} ({@code rocksdb.config.setter}) set for one store, as Kafka
 * Streams calls it: once per store as it opens, with the store's name, a real {@link Options} and the
 * application's configs; {@link #close()} calls the setter's {@code close} as the store closes.
 *
 * <p>The setter is handed Sluice's own defaults (so what it reads is what the store runs with), and
 * every setting it changed is read back: named as RocksDB names its options, for the store to apply,
 * or, when Sluice cannot apply it, listed in {@link #notApplied()}. A block cache it sets becomes the
 * memory budget of the stores given that cache (see {@link #blockCache()}).
 */
final class RocksDbConfigSetterSettings implements AutoCloseable {

    /** The Kafka Streams defaults Sluice's stores keep (see the engine's RocksDB options). */
    private static final long WRITE_BUFFER_BYTES = 16L << 20;
    private static final int MAX_WRITE_BUFFERS = 3;
    private static final long BLOCK_BYTES = 4L << 10;
    private static final double BLOOM_BITS_PER_KEY = 10.0;

    private static final RocksDbConfigSetterSettings NONE =
        new RocksDbConfigSetterSettings(null, null, null, Map.of(), List.of(), null);

    private final String storeName;
    private final RocksDBConfigSetter setter;
    private final Options options;
    private final Map<String, String> settings;
    private final List<String> notApplied;
    private final BlockCache blockCache;

    private RocksDbConfigSetterSettings(final String storeName, final RocksDBConfigSetter setter,
                                        final Options options, final Map<String, String> settings,
                                        final List<String> notApplied, final BlockCache blockCache) {
        this.storeName = storeName;
        this.setter = setter;
        this.options = options;
        this.settings = settings;
        this.notApplied = notApplied;
        this.blockCache = blockCache;
    }

    /**
     * Calls the configured setter for {@code storeName}; without {@code rocksdb.config.setter}, no
     * settings (and rocksdbjni is not touched).
     */
    static RocksDbConfigSetterSettings forStore(final String storeName, final Map<String, Object> appConfigs) {
        final Object configured = appConfigs.get(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG);
        if (configured == null) {
            return NONE;
        }
        // Setters make rocksdbjni objects (caches, filters) as they are created: its native library
        // must be loaded first, as opening a store in Kafka Streams has loaded it.
        RocksDB.loadLibrary();
        final RocksDBConfigSetter setter = Utils.newInstance(setterClass(configured), RocksDBConfigSetter.class);
        final Options options = defaults();
        try {
            setter.setConfig(storeName, options, appConfigs);
            final List<String> notApplied = new ArrayList<>();
            final Map<String, String> settings = new LinkedHashMap<>();
            BlockCache blockCache = null;
            try (Options reference = defaults()) {
                readChanges(options, reference, Options.class, settings);
                readInstalledObjects(options, reference, notApplied);
                final TableFormatConfig table = options.tableFormatConfig();
                if (table instanceof BlockBasedTableConfig) {
                    readChanges(table, reference.tableFormatConfig(), BlockBasedTableConfig.class, settings);
                    readFilter(((BlockBasedTableConfig) table).filterPolicy(), settings, notApplied);
                    blockCache = readBlockCache((BlockBasedTableConfig) table, notApplied);
                } else {
                    notApplied.add("tableFormatConfig (" + describe(table) + "; stores use block-based tables)");
                }
            }
            if (options.writeBufferManager() != null) {
                notApplied.add("writeBufferManager (rocksdbjni cannot say its size; memtables stay limited by "
                    + SharedRocksDbResources.WRITE_BUFFER_MANAGER_BYTES_CONFIG + " and charged to the block cache)");
            }
            return new RocksDbConfigSetterSettings(storeName, setter, options, settings, notApplied, blockCache);
        } catch (final RuntimeException e) {
            setter.close(storeName, options);
            options.close();
            throw e;
        }
    }

    /** The settings to apply to the store, by RocksDB option name, in the order they were read. */
    Map<String, String> settings() {
        return settings;
    }

    /** Settings the setter changed that Sluice does not apply to this store, each with the reason. */
    List<String> notApplied() {
        return notApplied;
    }

    /** The block cache the setter gave this store, or null when it kept Sluice's shared one. */
    BlockCache blockCache() {
        return blockCache;
    }

    /** The configured setter's class name, for messages. */
    String setterName() {
        return setter == null ? "none" : setter.getClass().getName();
    }

    /** The settings the store keeps, and those it refuses (listed in {@link #notApplied()}). */
    RocksDbConfigSetterSettings withoutRefused(final Map<String, String> refusedWithReasons) {
        if (refusedWithReasons.isEmpty()) {
            return this;
        }
        final Map<String, String> kept = new LinkedHashMap<>(settings);
        final List<String> reasons = new ArrayList<>(notApplied);
        refusedWithReasons.forEach((name, reason) -> {
            kept.remove(name);
            reasons.add(name + " (" + reason + ")");
        });
        return new RocksDbConfigSetterSettings(storeName, setter, options, kept, reasons, blockCache);
    }

    @Override
    public void close() {
        if (setter != null) {
            setter.close(storeName, options);
            options.close();
        }
    }

    /**
     * A block cache set by a setter: stores given the same cache object share one budget of its
     * capacity, as they would share the cache itself.
     */
    static final class BlockCache {
        private final Object identity;
        private final long capacityBytes;

        private BlockCache(final Object identity, final long capacityBytes) {
            this.identity = identity;
            this.capacityBytes = capacityBytes;
        }

        Object identity() {
            return identity;
        }

        long capacityBytes() {
            return capacityBytes;
        }
    }

    @SuppressWarnings("unchecked")
    private static Class<? extends RocksDBConfigSetter> setterClass(final Object configured) {
        if (configured instanceof Class) {
            return (Class<? extends RocksDBConfigSetter>) configured;
        }
        final String name = configured.toString().trim();
        try {
            return (Class<? extends RocksDBConfigSetter>) Class.forName(name, true, Utils.getContextOrKafkaClassLoader());
        } catch (final ClassNotFoundException e) {
            throw new ConfigException(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, name, "Class " + name + " could not be found.");
        }
    }

    /** Options as Sluice opens a store, as far as rocksdbjni can say them. */
    private static Options defaults() {
        final BlockBasedTableConfig table = new BlockBasedTableConfig();
        table.setBlockSize(BLOCK_BYTES);
        table.setCacheIndexAndFilterBlocks(true);
        table.setPinL0FilterAndIndexBlocksInCache(true);
        table.setFilterPolicy(DefaultFilter.BLOOM);
        final Options options = new Options();
        options.setTableFormatConfig(table);
        options.setCompressionType(CompressionType.NO_COMPRESSION);
        options.setCompactionStyle(CompactionStyle.LEVEL);
        options.setWriteBufferSize(WRITE_BUFFER_BYTES);
        options.setMaxWriteBufferNumber(MAX_WRITE_BUFFERS);
        options.setMaxOpenFiles(-1);
        options.setAtomicFlush(true);
        options.setParanoidChecks(true);
        options.setCreateIfMissing(true);
        options.setCreateMissingColumnFamilies(true);
        return options;
    }

    /**
     * Compares every value getter of {@code declaring} (primitives, enums, strings) on {@code user}
     * with the same getter on {@code reference}: each changed value is a setting, named in RocksDB's
     * words.
     */
    private static void readChanges(final Object user, final Object reference, final Class<?> declaring,
                                    final Map<String, String> settings) {
        final Method[] getters = declaring.getMethods();
        Arrays.sort(getters, (a, b) -> a.getName().compareTo(b.getName()));
        for (final Method getter : getters) {
            if (getter.getDeclaringClass() == declaring
                && getter.getParameterCount() == 0
                && !Modifier.isStatic(getter.getModifiers())
                && isValue(getter.getReturnType())
                // Read as the block cache, below.
                && !getter.getName().equals("blockCacheSize")) {
                final Object value = invoke(getter, user);
                if (!Objects.equals(value, invoke(getter, reference))) {
                    settings.put(optionName(getter.getName()), render(value));
                }
            }
        }
    }

    /**
     * Objects the setter installed in the options (a comparator, a rate limiter, statistics,
     * listeners, a row cache …), which stores do not take: rocksdbjni keeps each in a field.
     */
    private static void readInstalledObjects(final Options user, final Options reference,
                                             final List<String> notApplied) {
        for (final Field field : Options.class.getDeclaredFields()) {
            final String name = field.getName();
            if (Modifier.isStatic(field.getModifiers()) || field.getType().isPrimitive()
                || name.equals("tableFormatConfig_") || name.equals("writeBufferManager_")) {
                continue;
            }
            final Object value = privateField(field, user);
            final Object referenceValue = privateField(field, reference);
            if (value != null && value != referenceValue) {
                notApplied.add(name.replace("_", "") + " (" + describe(value) + ")");
            }
        }
        if (user.statistics() != null) {
            notApplied.add("statistics (Sluice's stores keep none)");
        }
        final List<?> listeners = user.listeners();
        if (listeners != null && !listeners.isEmpty()) {
            notApplied.add("listeners (" + listeners.size() + ")");
        }
        for (final String list : List.of("compressionPerLevel", "dbPaths", "cfPaths")) {
            final Object value = invoke(methodNamed(list), user);
            if (value instanceof Collection && !((Collection<?>) value).isEmpty()) {
                notApplied.add(list + " (" + value + ")");
            }
        }
        final int[] additional = user.maxBytesForLevelMultiplierAdditional();
        if (!Arrays.equals(additional, reference.maxBytesForLevelMultiplierAdditional())) {
            notApplied.add("maxBytesForLevelMultiplierAdditional (" + Arrays.toString(additional) + ")");
        }
    }

    private static Method methodNamed(final String name) {
        try {
            return Options.class.getMethod(name);
        } catch (final NoSuchMethodException e) {
            return null;
        }
    }

    private static Object privateField(final Field field, final Object target) {
        try {
            field.setAccessible(true);
            return field.get(target);
        } catch (final ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static boolean isValue(final Class<?> type) {
        return type.isPrimitive() || type.isEnum() || type == String.class;
    }

    private static Object invoke(final Method getter, final Object target) {
        if (getter == null) {
            return null;
        }
        try {
            return getter.invoke(target);
        } catch (final ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** {@code maxBytesForLevelBase} → {@code max_bytes_for_level_base}, as RocksDB names options. */
    static String optionName(final String getter) {
        final StringBuilder name = new StringBuilder(getter.length() + 8);
        for (final char c : getter.toCharArray()) {
            if (Character.isUpperCase(c)) {
                name.append('_').append(Character.toLowerCase(c));
            } else {
                name.append(c);
            }
        }
        // rocksdbjni spells some level-0 getters twice.
        return name.toString().replace("level_zero_", "level0_");
    }

    private static String render(final Object value) {
        return value instanceof Enum ? ((Enum<?>) value).name().toLowerCase(Locale.ROOT) : String.valueOf(value);
    }

    private static void readFilter(final Filter filter, final Map<String, String> settings,
                                   final List<String> notApplied) {
        if (filter == null) {
            settings.put("bloom_filter_bits_per_key", "0");
        } else if (filter instanceof BloomFilter) {
            final Double bits = bloomBitsPerKey((BloomFilter) filter);
            if (bits == null) {
                notApplied.add("filterPolicy (its bits per key cannot be read back)");
            } else if (bits != BLOOM_BITS_PER_KEY) {
                settings.put("bloom_filter_bits_per_key", String.valueOf(bits));
            }
        } else {
            notApplied.add("filterPolicy (" + describe(filter) + "; stores take bloom filters only)");
        }
    }

    /** rocksdbjni keeps the bits per key of a bloom filter without a getter. */
    private static Double bloomBitsPerKey(final BloomFilter filter) {
        try {
            final Field bits = BloomFilter.class.getDeclaredField("bitsPerKey");
            bits.setAccessible(true);
            return bits.getDouble(filter);
        } catch (final ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static BlockCache readBlockCache(final BlockBasedTableConfig table, final List<String> notApplied) {
        if (table.noBlockCache()) {
            return null;
        }
        final Object cache;
        try {
            cache = privateField(BlockBasedTableConfig.class.getDeclaredField("blockCache"), table);
        } catch (final NoSuchFieldException e) {
            notApplied.add("blockCache (this rocksdbjni does not let it be read back)");
            return null;
        }
        if (cache instanceof Cache) {
            return new BlockCache(cache, capacityOf((Cache) cache));
        }
        if (table.blockCacheSize() != new BlockBasedTableConfig().blockCacheSize()) {
            // setBlockCacheSize gives the store a cache of its own.
            return new BlockCache(new Object(), table.blockCacheSize());
        }
        return null;
    }

    /**
     * The capacity of a rocksdbjni cache, which rocksdbjni has no getter for: RocksDB reports it as
     * a property of a database using the cache, here an empty one in memory.
     */
    private static long capacityOf(final Cache cache) {
        try (Env memory = new RocksMemEnv(Env.getDefault());
             Options probe = new Options()) {
            probe.setCreateIfMissing(true);
            probe.setEnv(memory);
            probe.setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
            try (RocksDB db = RocksDB.open(probe, "/block-cache-capacity")) {
                return db.getLongProperty("rocksdb.block-cache-capacity");
            }
        } catch (final RocksDBException e) {
            throw new IllegalStateException("Cannot read the capacity of the block cache set by "
                + StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG + ": " + e.getMessage(), e);
        }
    }

    /** The defaults' bloom filter: one native object for every store, made once the library is loaded. */
    private static final class DefaultFilter {
        private static final BloomFilter BLOOM = new BloomFilter(BLOOM_BITS_PER_KEY, false);
    }

    private static String describe(final Object value) {
        return value == null ? "null" : value.getClass().getName();
    }
}
