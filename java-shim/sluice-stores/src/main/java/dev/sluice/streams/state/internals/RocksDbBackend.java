package dev.sluice.streams.state.internals;

import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens RocksDB stores where Kafka Streams keeps its own ({@code <state dir>/rocksdb/<name>}), with
 * the RocksDB memory shared by every store of the application instance. A directory that is not an
 * intact store is wiped and the store opened empty, so the runtime restores it from the changelog.
 */
final class RocksDbBackend implements KeyValueBackend {

    private static final Logger LOG = LoggerFactory.getLogger(RocksDbBackend.class);

    static final String PARENT_DIRECTORY = "rocksdb";

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public String metricsScope() {
        return "rocksdb";
    }

    @Override
    public NativeKeyValueStore open(final String name, final StateStoreContext context) {
        final Path directory = context.stateDir().toPath().resolve(PARENT_DIRECTORY).resolve(name);
        final RocksDbConfigSetterSettings setter = configSetterSettings(name, context.appConfigs());
        try {
            final SharedRocksDbResources.Lease lease =
                SharedRocksDbResources.acquire(context.appConfigs(), setter.blockCache());
            try {
                return openOrWipe(name, directory, lease, setter);
            } catch (final RuntimeException e) {
                lease.close();
                throw e;
            }
        } catch (final RuntimeException e) {
            setter.close();
            throw e;
        }
    }

    /** What the user's {@code RocksDBConfigSetter} set for the store, less what it refuses, named in one warning. */
    private static RocksDbConfigSetterSettings configSetterSettings(final String name,
                                                                    final Map<String, Object> appConfigs) {
        final RocksDbConfigSetterSettings requested = RocksDbConfigSetterSettings.forStore(name, appConfigs);
        if (requested.settings().isEmpty() && requested.notApplied().isEmpty()) {
            return requested;
        }
        final RocksDbConfigSetterSettings setter =
            requested.withoutRefused(NativeKeyValueStore.refusedRocksDbSettings(requested.settings()));
        if (!setter.notApplied().isEmpty()) {
            LOG.warn("State store {}: {} {} changed RocksDB settings that Sluice does not apply to the store: {}",
                name, StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, setter.setterName(),
                String.join("; ", setter.notApplied()));
        }
        return setter;
    }

    private static NativeKeyValueStore openOrWipe(final String name, final Path directory,
                                                  final SharedRocksDbResources.Lease lease,
                                                  final RocksDbConfigSetterSettings setter) {
        final AutoCloseable onClose = () -> {
            try {
                setter.close();
            } finally {
                lease.close();
            }
        };
        try {
            return NativeKeyValueStore.rocksDb(name, directory, lease.resources(), setter.settings(), onClose);
        } catch (final StoreDirectoryCorruptedException e) {
            LOG.warn("State store {}: {}. Wiping {} and opening it empty; it will be restored from its changelog.",
                name, e.getMessage(), directory);
            NativeKeyValueStore.destroy(directory);
            return NativeKeyValueStore.rocksDb(name, directory, lease.resources(), setter.settings(), onClose);
        }
    }
}
