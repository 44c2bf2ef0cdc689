package dev.sluice.streams.state.internals;

import java.nio.file.Path;
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
        final SharedRocksDbResources.Lease lease = SharedRocksDbResources.acquire(context.appConfigs());
        try {
            return openOrWipe(name, directory, lease);
        } catch (final RuntimeException e) {
            lease.close();
            throw e;
        }
    }

    private static NativeKeyValueStore openOrWipe(final String name, final Path directory,
                                                  final SharedRocksDbResources.Lease lease) {
        try {
            return NativeKeyValueStore.rocksDb(name, directory, lease.resources(), lease);
        } catch (final StoreDirectoryCorruptedException e) {
            LOG.warn("State store {}: {}. Wiping {} and opening it empty; it will be restored from its changelog.",
                name, e.getMessage(), directory);
            NativeKeyValueStore.destroy(directory);
            return NativeKeyValueStore.rocksDb(name, directory, lease.resources(), lease);
        }
    }
}
