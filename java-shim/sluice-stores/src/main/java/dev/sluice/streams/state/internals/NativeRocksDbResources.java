package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.NativeLibrary;
import java.util.Map;

/**
 * The block cache and write buffer manager shared by the RocksDB stores of one engine instance,
 * configured by the {@code sluice.rocksdb.*} keys. Owns a native handle; close it when no store will
 * be opened with it any more (stores already open keep the memory alive until they close).
 */
final class NativeRocksDbResources implements AutoCloseable {

    static {
        NativeLibrary.load();
    }

    private volatile long handle;

    private NativeRocksDbResources(final long handle) {
        this.handle = handle;
    }

    /**
     * Allocates resources for {@code config}, whose keys are {@code sluice.rocksdb.*} settings; a bad
     * value raises {@link org.apache.kafka.common.config.ConfigException} naming its key.
     */
    static NativeRocksDbResources create(final Map<String, String> config) {
        final String[] keysAndValues = new String[config.size() * 2];
        int i = 0;
        for (final Map.Entry<String, String> entry : config.entrySet()) {
            keysAndValues[i++] = entry.getKey();
            keysAndValues[i++] = entry.getValue();
        }
        return new NativeRocksDbResources(create(keysAndValues));
    }

    long handle() {
        return handle;
    }

    @Override
    public synchronized void close() {
        final long open = handle;
        handle = 0;
        if (open != 0) {
            close(open);
        }
    }

    private static native long create(String[] keysAndValues);

    private static native void close(long handle);
}
