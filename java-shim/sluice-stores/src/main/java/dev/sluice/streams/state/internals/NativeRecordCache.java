package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.NativeLibrary;

/**
 * A stream thread's record cache held natively: named caches of opaque entry frames, each with Kafka
 * Streams' key order, least-recently-used order and dirty order. Owns a native handle; close it when the
 * thread is done with it, after which every call raises
 * {@link org.apache.kafka.streams.errors.InvalidStateStoreException}.
 *
 * <p>Changes that hand something back ({@link #delete}, {@link #evict}, {@link #flush}) return the named
 * cache's size in bytes after them, then what they handed back; see the native side for the layouts.
 */
public final class NativeRecordCache implements AutoCloseable {

    static {
        NativeLibrary.load();
    }

    /** What {@link #get} returns for a key the cache does not hold. */
    public static final int MISS = -1;

    private final NativeHandle handle = new NativeHandle(open(), "the record cache is closed");

    /** Adds an empty named cache; {@code name} is for error messages. */
    public int createCache(final String name) {
        return createCache(handle.open(), name);
    }

    public void removeCache(final int cache) {
        removeCache(handle.open(), cache);
    }

    /**
     * Writes the entry framed in {@code frame[0, frameLength)} for {@code key}, with the size Kafka Streams
     * accounts for it; returns the named cache's size in bytes. {@link IllegalStateException} for a clean
     * entry over a dirty one.
     */
    public long put(final int cache, final byte[] key, final byte[] frame, final int frameLength,
                    final long entrySize, final boolean dirty, final boolean tombstone) {
        return put(handle.open(), cache, key, frame, frameLength, entrySize, dirty, tombstone);
    }

    /**
     * Writes {@code key}'s entry ({@code u8 dirty, frame}) into {@code out} and returns its length; {@link
     * #MISS}, or {@code -n} when {@code out} is shorter than the {@code n > 1} bytes needed.
     */
    public int get(final int cache, final byte[] key, final byte[] out) {
        return get(handle.open(), cache, key, out);
    }

    public byte[] delete(final int cache, final byte[] key) {
        return delete(handle.open(), cache, key);
    }

    /** Evicts the least recently used entry, flushing the dirty ones if it was dirty; null when empty. */
    public byte[] evict(final int cache) {
        return evict(handle.open(), cache);
    }

    public byte[] flush(final int cache) {
        return flush(handle.open(), cache);
    }

    /** The keys from {@code from} to {@code to} (null: open) as they are now: {@code i32 count}, then each. */
    public byte[] keys(final int cache, final byte[] from, final byte[] to, final boolean toInclusive,
                       final boolean descending) {
        return keys(handle.open(), cache, from, to, toInclusive, descending);
    }

    public void clear(final int cache) {
        clear(handle.open(), cache);
    }

    public long entryCount(final int cache) {
        return entryCount(handle.open(), cache);
    }

    @Override
    public void close() {
        final long open = handle.take();
        if (open != NativeHandle.TAKEN) {
            close(open);
        }
    }

    private static native long open();

    private static native void close(long handle);

    private static native int createCache(long handle, String name);

    private static native void removeCache(long handle, int cache);

    private static native long put(long handle, int cache, byte[] key, byte[] frame, int frameLength,
                                   long entrySize, boolean dirty, boolean tombstone);

    private static native int get(long handle, int cache, byte[] key, byte[] out);

    private static native byte[] delete(long handle, int cache, byte[] key);

    private static native byte[] evict(long handle, int cache);

    private static native byte[] flush(long handle, int cache);

    private static native byte[] keys(long handle, int cache, byte[] from, byte[] to, boolean toInclusive,
                                      boolean descending);

    private static native void clear(long handle, int cache);

    private static native long entryCount(long handle, int cache);
}
