package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.NativeLibrary;
import java.nio.ByteBuffer;
import java.util.NoSuchElementException;
import java.util.function.Consumer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.internals.ManagedKeyValueIterator;

/**
 * A native scan read in chunks: each native call fills a {@code byte[]} with as many entries as fit
 * ({@link EntryFraming} layout), so iterating costs one crossing per chunk, not per entry. The first
 * chunk is small and each next one twice as large, up to the iterator's chunk size, so a scan read
 * only a few entries deep does not pay for reading (and copying) a full chunk ahead; the buffer also
 * grows when a single entry does not fit. Closing releases the native scan; afterwards
 * {@link #hasNext()} raises {@link InvalidStateStoreException}, as Kafka Streams' iterators do.
 *
 * <p>It is a {@link ManagedKeyValueIterator}, as Kafka Streams' RocksDB iterators are: Kafka Streams'
 * adapter of a plain key-value store to a timestamped one takes the store's range queries as such.
 */
final class NativeKeyValueIterator implements ManagedKeyValueIterator<Bytes, byte[]> {

    static {
        NativeLibrary.load();
    }

    /** Default chunk size: large enough to amortise the call, small enough to stay in cache. */
    static final int DEFAULT_CHUNK_BYTES = 16 * 1024;

    /** Size of the first chunk, at most the iterator's chunk size. */
    static final int FIRST_CHUNK_BYTES = 2 * 1024;

    private final Consumer<NativeKeyValueIterator> untrack;
    private final NativeHandle handle;
    private final int chunkBytes;
    private byte[] chunk;
    private ByteBuffer reader;
    private int unreadInChunk;
    private KeyValue<Bytes, byte[]> next;
    private boolean exhausted;
    private Runnable closeCallback;

    NativeKeyValueIterator(final String storeName, final long handle, final int chunkBytes,
                           final Consumer<NativeKeyValueIterator> untrack) {
        this.handle = new NativeHandle(handle, "Iterator of store " + storeName + " has closed.");
        this.chunkBytes = chunkBytes;
        this.chunk = new byte[Math.min(FIRST_CHUNK_BYTES, chunkBytes)];
        this.untrack = untrack;
    }

    @Override
    public boolean hasNext() {
        final long open = handle.open();
        if (next != null) {
            return true;
        }
        if (unreadInChunk == 0 && !exhausted) {
            fetchChunk(open);
        }
        if (unreadInChunk == 0) {
            return false;
        }
        next = EntryFraming.readEntry(reader);
        unreadInChunk--;
        return true;
    }

    @Override
    public KeyValue<Bytes, byte[]> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        final KeyValue<Bytes, byte[]> result = next;
        next = null;
        return result;
    }

    @Override
    public Bytes peekNextKey() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return next.key;
    }

    /** Sets what runs once this iterator is closed, after the store stopped tracking it. */
    @Override
    public void onClose(final Runnable closeCallback) {
        this.closeCallback = closeCallback;
    }

    @Override
    public void close() {
        final long open = handle.take();
        if (open != NativeHandle.TAKEN) {
            close(open);
            untrack.accept(this);
            if (closeCallback != null) {
                closeCallback.run();
            }
        }
    }

    private void fetchChunk(final long open) {
        if (reader != null && chunk.length < chunkBytes) {
            chunk = new byte[Math.min(chunk.length * 2, chunkBytes)];
        }
        int written = nextChunk(open, chunk);
        if (written < 0) {
            chunk = new byte[Math.max(-written, chunk.length * 2)];
            written = nextChunk(open, chunk);
        }
        if (written == 0) {
            exhausted = true;
        }
        reader = ByteBuffer.wrap(chunk);
        unreadInChunk = written;
    }

    private static native int nextChunk(long handle, byte[] buffer);

    private static native void close(long handle);
}
