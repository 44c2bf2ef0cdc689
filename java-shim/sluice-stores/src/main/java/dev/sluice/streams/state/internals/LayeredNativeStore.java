package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.NativeLibrary;
import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * A native window, session or versioned store opened over a native key-value store that holds its
 * data. Offsets, position and commit go through the key-value store; restore, rollback and release are
 * the same native calls for every kind; subclasses add the store-shaped operations. Closing releases
 * the layered handle, then closes the key-value store; any call after close raises
 * {@link InvalidStateStoreException}.
 */
abstract class LayeredNativeStore implements NativeTransactionalStore {

    static {
        NativeLibrary.load();
    }

    private final NativeKeyValueStore data;
    private final NativeHandle handle;

    LayeredNativeStore(final NativeKeyValueStore data, final long handle) {
        this.data = data;
        this.handle = new NativeHandle(handle, "Store " + data.name() + " is currently closed.");
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

    /**
     * Applies changelog records framed as the kind expects: {@link EntryFraming} entries for window and
     * session stores, timestamped entries for versioned stores.
     */
    void restore(final byte[] batch) {
        restore(handle(), batch);
    }

    /** Drops the staged writes, and what the layered store derived from them. */
    @Override
    public void rollback() {
        rollback(handle());
    }

    @Override
    public int settleValueLayout(final int layout) {
        return settleValueLayout(handle(), layout);
    }

    @Override
    public long approximateNumUncommittedBytes() {
        return data.approximateNumUncommittedBytes();
    }

    @Override
    public void close() {
        final long open = handle.take();
        if (open == NativeHandle.TAKEN) {
            return;
        }
        try {
            release(open);
        } finally {
            data.close();
        }
    }

    final long handle() {
        return handle.open();
    }

    private static native void restore(long handle, byte[] batch);

    private static native void rollback(long handle);

    private static native int settleValueLayout(long handle, int layout);

    private static native void release(long handle);
}
