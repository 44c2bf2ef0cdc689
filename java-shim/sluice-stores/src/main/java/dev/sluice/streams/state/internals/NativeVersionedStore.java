package dev.sluice.streams.state.internals;

/**
 * A native versioned key-value store. Reads return {@link EntryFraming} versioned records, or null.
 */
final class NativeVersionedStore extends LayeredNativeStore {

    private NativeVersionedStore(final NativeKeyValueStore data, final long handle) {
        super(data, handle);
    }

    static NativeVersionedStore open(final NativeKeyValueStore data, final long historyRetention) {
        return openOver(data, kv -> new NativeVersionedStore(data, open(kv, historyRetention)));
    }

    /** Kafka Streams' {@code put(key, value, timestamp)} return code; a null value puts a tombstone. */
    long put(final byte[] key, final byte[] value, final long timestamp) {
        return put(handle(), key, value, timestamp);
    }

    byte[] delete(final byte[] key, final long timestamp) {
        return delete(handle(), key, timestamp);
    }

    byte[] get(final byte[] key, final boolean readCommitted) {
        return get(handle(), key, readCommitted);
    }

    byte[] getAsOf(final byte[] key, final long asOf, final boolean readCommitted) {
        return getAsOf(handle(), key, asOf, readCommitted);
    }

    /**
     * The versions of {@code key} valid at some time in {@code [fromTime, toTime]}, tombstones left out, by
     * timestamp (descending when {@code reverse}), as {@link EntryFraming#versionedRecords} frames them.
     */
    byte[] getVersions(final byte[] key, final long fromTime, final long toTime, final boolean reverse,
                       final boolean readCommitted) {
        return getVersions(handle(), key, fromTime, toTime, reverse, readCommitted);
    }

    private static native long open(long kvStore, long historyRetention);

    private static native long put(long handle, byte[] key, byte[] value, long timestamp);

    private static native byte[] delete(long handle, byte[] key, long timestamp);

    private static native byte[] get(long handle, byte[] key, boolean readCommitted);

    private static native byte[] getAsOf(long handle, byte[] key, long asOf, boolean readCommitted);

    private static native byte[] getVersions(long handle, byte[] key, long fromTime, long toTime, boolean reverse,
                                             boolean readCommitted);
}
