package dev.sluice.streams.state.internals;

import java.time.Duration;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Supplies Sluice window bytes stores of one backend, plain, timestamped or headers-aware. The factories
 * accept and reject exactly the arguments {@link Stores}' window factories do ({@link StoreArguments}) and
 * adopt the retention, segment interval and window size Kafka Streams derives from them.
 */
public class SluiceWindowBytesStoreSupplier implements WindowBytesStoreSupplier {

    private final String name;
    private final KeyValueBackend backend;
    private final KeyValueLayout layout;
    private final WindowStoreOptions options;

    SluiceWindowBytesStoreSupplier(final String name, final KeyValueBackend backend, final KeyValueLayout layout,
                                   final WindowStoreOptions options) {
        this.name = name;
        this.backend = backend;
        this.layout = layout;
        this.options = options;
    }

    /** Persistent stores; arguments as {@link Stores#persistentWindowStore}. */
    public static WindowBytesStoreSupplier persistent(final String name, final Duration retentionPeriod,
                                                      final Duration windowSize, final boolean retainDuplicates,
                                                      final boolean timestamped) {
        return new SluiceWindowBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB,
            timestamped ? KeyValueLayout.TIMESTAMPED : KeyValueLayout.PLAIN,
            optionsOf(StoreArguments.window(name, retentionPeriod, windowSize), retainDuplicates));
    }

    /** Persistent headers-aware stores; arguments as {@link Stores#persistentTimestampedWindowStoreWithHeaders}. */
    public static WindowBytesStoreSupplier persistentWithHeaders(final String name, final Duration retentionPeriod,
                                                                 final Duration windowSize,
                                                                 final boolean retainDuplicates) {
        return new SluiceHeadersWindowBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB,
            optionsOf(StoreArguments.window(name, retentionPeriod, windowSize), retainDuplicates));
    }

    private static WindowStoreOptions optionsOf(final StoreArguments.Window window, final boolean retainDuplicates) {
        return new WindowStoreOptions(window.retentionPeriod(), window.segmentInterval(), window.windowSize(),
            retainDuplicates);
    }

    /**
     * In-memory stores; arguments as {@link Stores#inMemoryWindowStore}. They keep the persistent stores'
     * segments (and segment interval), so they expire and iterate exactly like them.
     */
    public static WindowBytesStoreSupplier inMemory(final String name, final Duration retentionPeriod,
                                                    final Duration windowSize, final boolean retainDuplicates) {
        return new SluiceWindowBytesStoreSupplier(name, KeyValueBackend.IN_MEMORY, KeyValueLayout.PLAIN,
            optionsOf(StoreArguments.window(name, retentionPeriod, windowSize), retainDuplicates));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public WindowStore<Bytes, byte[]> get() {
        final int chunkBytes = NativeKeyValueIterator.DEFAULT_CHUNK_BYTES;
        switch (layout) {
            case HEADERS:
                return new SluiceHeadersWindowBytesStore(name, backend, options, chunkBytes);
            case TIMESTAMPED:
                return new SluiceTimestampedWindowBytesStore(name, backend, options, chunkBytes);
            case PLAIN:
                return new SluiceWindowBytesStore(name, backend, options, chunkBytes);
            default:
                throw new IllegalStateException("Unsupported value layout " + layout);
        }
    }

    @Override
    public String metricsScope() {
        return backend.metricsScope() + "-window";
    }

    @Override
    public long segmentIntervalMs() {
        return options.segmentInterval();
    }

    @Override
    public long windowSize() {
        return options.windowSize();
    }

    @Override
    public boolean retainDuplicates() {
        return options.retainDuplicates();
    }

    @Override
    public long retentionPeriod() {
        return options.retentionPeriod();
    }

    @Override
    public String toString() {
        return "SluiceWindowBytesStoreSupplier{name=" + name + ", " + options + ", layout=" + layout
            + ", persistent=" + backend.persistent() + "}";
    }
}
