package dev.sluice.streams.state.internals;

import java.time.Duration;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.internals.SluiceTimeOrderedWindowStore;

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
            optionsOf(StoreArguments.window(name, retentionPeriod, windowSize), retainDuplicates,
                WindowStoreOptions.Layout.KEY_ORDERED));
    }

    /** Persistent headers-aware stores; arguments as {@link Stores#persistentTimestampedWindowStoreWithHeaders}. */
    public static WindowBytesStoreSupplier persistentWithHeaders(final String name, final Duration retentionPeriod,
                                                                 final Duration windowSize,
                                                                 final boolean retainDuplicates) {
        return new SluiceHeadersWindowBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB,
            optionsOf(StoreArguments.window(name, retentionPeriod, windowSize), retainDuplicates,
                WindowStoreOptions.Layout.KEY_ORDERED));
    }

    /**
     * Persistent time-ordered stores with timestamped values, or headers-aware ones: the stores Kafka
     * Streams gives emit-final windowed aggregations ({@code RocksDbIndexedTimeOrderedWindowBytesStoreSupplier}
     * and its headers-aware twin), same arguments; {@code withIndex} keeps a key index, as Kafka Streams does
     * for sliding windows. Their stores are {@link SluiceTimeOrderedWindowStore}s, so that Kafka Streams'
     * builders put their time-ordered caching layer over them.
     */
    public static WindowBytesStoreSupplier persistentTimeOrdered(final String name, final Duration retentionPeriod,
                                                                 final Duration windowSize,
                                                                 final boolean retainDuplicates,
                                                                 final boolean withIndex,
                                                                 final boolean headersAware) {
        final WindowStoreOptions options = optionsOf(StoreArguments.window(name, retentionPeriod, windowSize),
            retainDuplicates, withIndex ? WindowStoreOptions.Layout.TIME_ORDERED_INDEXED : WindowStoreOptions.Layout.TIME_ORDERED);
        return headersAware
            ? new SluiceHeadersWindowBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB, options)
            : new SluiceWindowBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB, KeyValueLayout.TIMESTAMPED, options);
    }

    private static WindowStoreOptions optionsOf(final StoreArguments.Window window, final boolean retainDuplicates,
                                                final WindowStoreOptions.Layout layout) {
        return new WindowStoreOptions(window.retentionPeriod(), window.segmentInterval(), window.windowSize(),
            retainDuplicates, layout);
    }

    /**
     * In-memory stores; arguments as {@link Stores#inMemoryWindowStore}. They keep the persistent stores'
     * segments (and segment interval), so they expire and iterate exactly like them.
     */
    public static WindowBytesStoreSupplier inMemory(final String name, final Duration retentionPeriod,
                                                    final Duration windowSize, final boolean retainDuplicates) {
        return new SluiceWindowBytesStoreSupplier(name, KeyValueBackend.IN_MEMORY, KeyValueLayout.PLAIN,
            optionsOf(StoreArguments.window(name, retentionPeriod, windowSize), retainDuplicates,
                WindowStoreOptions.Layout.KEY_ORDERED));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public WindowStore<Bytes, byte[]> get() {
        final SluiceWindowBytesStore store = bytesStore();
        if (!options.layout().timeOrdered()) {
            return store;
        }
        return SluiceTimeOrderedWindowStore.over(store, options.retentionPeriod(), options.segmentInterval(),
            options.windowSize(), options.retainDuplicates(),
            options.layout() == WindowStoreOptions.Layout.TIME_ORDERED_INDEXED);
    }

    private SluiceWindowBytesStore bytesStore() {
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
