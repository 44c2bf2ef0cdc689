package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.NativeLibrary;
import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * A native window, session or versioned store opened over a native key-value store that holds its
 * data. Offsets, position and commit go through the key-value store; the layered handle serves the
 * store-shaped operations. Closing releases the layered handle, then closes the key-value store; any
 * call after close raises {@link InvalidStateStoreException}.
 */
abstract class LayeredNativeStore implements NativeTransactionalStore {

    static {
        NativeLibrary.load();
    }

    private final NativeKeyValueStore data;
    private volatile long handle;

    LayeredNativeStore(final NativeKeyValueStore data, final long handle) {
        this.data = data;
        this.handle = handle;
    }

    /** Opens the layered store over {@code data}, or closes {@code data} when that fails. */
    static <T extends LayeredNativeStore> T openOver(final NativeKeyValueStore data,
                                                     final java.util.function.LongFunction<T> open) {
        try {
            return open.apply(data.handleForLayering());
        } catch (final RuntimeException e) {
            data.close();
            throw e;
        }
    }

    @Override
    public void commit(final byte[] offsets, final byte[] position) {
        handle();
        data.commit(offsets, position);
    }

    @Override
    public long committedOffset(final String topic, final int partition) {
        handle();
        return data.committedOffset(topic, partition);
    }

    @Override
    public byte[] committedPosition() {
        handle();
        return data.committedPosition();
    }

    @Override
    public void rollback() {
        rollbackLayer(handle());
    }

    @Override
    public long approximateNumUncommittedBytes() {
        return data.approximateNumUncommittedBytes();
    }

    @Override
    public void close() {
        final long open;
        synchronized (this) {
            open = handle;
            handle = 0;
        }
        if (open == 0) {
            return;
        }
        try {
            releaseLayer(open);
        } finally {
            data.close();
        }
    }

    final long handle() {
        final long open = handle;
        if (open == 0) {
            throw new InvalidStateStoreException("Store " + data.name() + " is currently closed.");
        }
        return open;
    }

    /** Drops the staged writes, and what the layered store derived from them. */
    abstract void rollbackLayer(long handle);

    /** Releases the layered handle. */
    abstract void releaseLayer(long handle);
}
