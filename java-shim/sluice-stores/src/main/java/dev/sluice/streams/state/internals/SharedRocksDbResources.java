package dev.sluice.streams.state.internals;

import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One {@link NativeRocksDbResources} per distinct {@code sluice.rocksdb.*} configuration in this JVM,
 * so all stores of an application instance share one memory budget however many stores and tasks it
 * has. Stores whose {@code RocksDBConfigSetter} gave them a block cache share one budget of that
 * cache's capacity per cache object instead. Stores hold a {@link Lease}; the resources are released
 * when the last lease is returned.
 */
final class SharedRocksDbResources {

    static final String CONFIG_PREFIX = "sluice.rocksdb.";
    static final String BLOCK_CACHE_BYTES_CONFIG = CONFIG_PREFIX + "block.cache.bytes";
    static final String WRITE_BUFFER_MANAGER_BYTES_CONFIG = CONFIG_PREFIX + "write.buffer.manager.bytes";

    private static final Map<Key, Shared> BY_CONFIG = new HashMap<>();

    private SharedRocksDbResources() {
    }

    /**
     * A lease on the resources configured by the {@code sluice.rocksdb.*} entries of {@code appConfigs},
     * or, when {@code blockCache} is not null, on those of that cache.
     */
    static Lease acquire(final Map<String, ?> appConfigs, final RocksDbConfigSetterSettings.BlockCache blockCache) {
        final SortedMap<String, String> config = new TreeMap<>();
        appConfigs.forEach((key, value) -> {
            if (key.startsWith(CONFIG_PREFIX) && value != null) {
                config.put(key, String.valueOf(value));
            }
        });
        if (blockCache != null) {
            config.put(BLOCK_CACHE_BYTES_CONFIG, Long.toString(blockCache.capacityBytes()));
        }
        final Key key = new Key(config, blockCache == null ? null : blockCache.identity());
        synchronized (BY_CONFIG) {
            Shared shared = BY_CONFIG.get(key);
            if (shared == null) {
                shared = new Shared(key, NativeRocksDbResources.create(config));
                BY_CONFIG.put(key, shared);
            }
            shared.leases++;
            return new Lease(shared);
        }
    }

    /** A configuration, and the setter's cache object whose budget it is (null for Sluice's own). */
    private static final class Key {
        private final SortedMap<String, String> config;
        private final Object cache;

        private Key(final SortedMap<String, String> config, final Object cache) {
            this.config = config;
            this.cache = cache;
        }

        @Override
        public boolean equals(final Object other) {
            return other instanceof Key && ((Key) other).config.equals(config) && ((Key) other).cache == cache;
        }

        @Override
        public int hashCode() {
            return config.hashCode() * 31 + System.identityHashCode(cache);
        }
    }

    private static void release(final Shared shared) {
        synchronized (BY_CONFIG) {
            shared.leases--;
            if (shared.leases == 0) {
                BY_CONFIG.remove(shared.key);
                shared.resources.close();
            }
        }
    }

    private static final class Shared {
        private final Key key;
        private final NativeRocksDbResources resources;
        private int leases;

        private Shared(final Key key, final NativeRocksDbResources resources) {
            this.key = key;
            this.resources = resources;
        }
    }

    /** A store's claim on shared resources; returning it twice is harmless. */
    static final class Lease implements AutoCloseable {
        private final Shared shared;
        private boolean returned;

        private Lease(final Shared shared) {
            this.shared = shared;
        }

        NativeRocksDbResources resources() {
            return shared.resources;
        }

        @Override
        public synchronized void close() {
            if (!returned) {
                returned = true;
                release(shared);
            }
        }
    }
}
