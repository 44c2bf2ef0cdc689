package dev.sluice.streams.state.internals;

import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One {@link NativeRocksDbResources} per distinct {@code sluice.rocksdb.*} configuration in this JVM,
 * so all stores of an application instance share one memory budget however many stores and tasks it
 * has. Stores hold a {@link Lease}; the resources are released when the last lease is returned.
 */
final class SharedRocksDbResources {

    static final String CONFIG_PREFIX = "sluice.rocksdb.";

    private static final Map<SortedMap<String, String>, Shared> BY_CONFIG = new HashMap<>();

    private SharedRocksDbResources() {
    }

    /** A lease on the resources configured by the {@code sluice.rocksdb.*} entries of {@code appConfigs}. */
    static Lease acquire(final Map<String, ?> appConfigs) {
        final SortedMap<String, String> config = new TreeMap<>();
        appConfigs.forEach((key, value) -> {
            if (key.startsWith(CONFIG_PREFIX) && value != null) {
                config.put(key, String.valueOf(value));
            }
        });
        synchronized (BY_CONFIG) {
            Shared shared = BY_CONFIG.get(config);
            if (shared == null) {
                shared = new Shared(config, NativeRocksDbResources.create(config));
                BY_CONFIG.put(config, shared);
            }
            shared.leases++;
            return new Lease(shared);
        }
    }

    private static void release(final Shared shared) {
        synchronized (BY_CONFIG) {
            shared.leases--;
            if (shared.leases == 0) {
                BY_CONFIG.remove(shared.config);
                shared.resources.close();
            }
        }
    }

    private static final class Shared {
        private final SortedMap<String, String> config;
        private final NativeRocksDbResources resources;
        private int leases;

        private Shared(final SortedMap<String, String> config, final NativeRocksDbResources resources) {
            this.config = config;
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
