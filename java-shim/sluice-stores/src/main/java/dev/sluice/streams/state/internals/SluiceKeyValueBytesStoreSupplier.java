package dev.sluice.streams.state.internals;

import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;

/** Supplies Sluice key-value bytes stores of one backend and value layout. */
public class SluiceKeyValueBytesStoreSupplier implements KeyValueBytesStoreSupplier {

    private final String name;
    private final KeyValueBackend backend;
    private final KeyValueLayout layout;
    private final int iteratorChunkBytes;

    SluiceKeyValueBytesStoreSupplier(final String name, final KeyValueBackend backend, final KeyValueLayout layout,
                                     final int iteratorChunkBytes) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.backend = backend;
        this.layout = layout;
        this.iteratorChunkBytes = iteratorChunkBytes;
    }

    /** A supplier of persistent (RocksDB) stores. */
    public static KeyValueBytesStoreSupplier persistent(final String name, final KeyValueLayout layout) {
        return create(name, KeyValueBackend.ROCKS_DB, layout, NativeKeyValueIterator.DEFAULT_CHUNK_BYTES);
    }

    /** A supplier of in-memory stores. */
    public static KeyValueBytesStoreSupplier inMemory(final String name) {
        return create(name, KeyValueBackend.IN_MEMORY, KeyValueLayout.PLAIN, NativeKeyValueIterator.DEFAULT_CHUNK_BYTES);
    }

    static KeyValueBytesStoreSupplier create(final String name, final KeyValueBackend backend,
                                             final KeyValueLayout layout, final int iteratorChunkBytes) {
        return layout == KeyValueLayout.HEADERS
            ? new SluiceHeadersKeyValueBytesStoreSupplier(name, backend, iteratorChunkBytes)
            : new SluiceKeyValueBytesStoreSupplier(name, backend, layout, iteratorChunkBytes);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public KeyValueStore<Bytes, byte[]> get() {
        return layout.create(name, backend, iteratorChunkBytes);
    }

    @Override
    public String metricsScope() {
        return backend.metricsScope();
    }
}
