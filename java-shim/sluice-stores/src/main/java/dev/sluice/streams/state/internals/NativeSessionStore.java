package dev.sluice.streams.state.internals;

/**
 * A native session store: sessions {@code (key, start, end) → aggregate} with segmented retention.
 * Scans return native iterator handles whose entries are {@link EntryFraming} windowed entries.
 */
final class NativeSessionStore extends LayeredNativeStore {

    private NativeSessionStore(final NativeKeyValueStore data, final long handle) {
        super(data, handle);
    }

    /**
     * Opens a key-ordered store, or a time-ordered one (Kafka Streams' store for emit-final session
     * aggregations, which like Kafka Streams' keeps a key index for its key lookups).
     */
    static NativeSessionStore open(final NativeKeyValueStore data, final long retentionPeriod,
                                   final long segmentInterval, final boolean timeOrdered) {
        return openOver(data, kv -> new NativeSessionStore(data, timeOrdered
            ? openTimeOrdered(kv, retentionPeriod, segmentInterval, true)
            : open(kv, retentionPeriod, segmentInterval)));
    }

    /** Stages a session's aggregate; a null value deletes it. */
    void put(final byte[] key, final long start, final long end, final byte[] value) {
        put(handle(), key, start, end, value);
    }

    void remove(final byte[] key, final long start, final long end) {
        remove(handle(), key, start, end);
    }

    byte[] fetchSession(final byte[] key, final long start, final long end, final boolean readCommitted) {
        return fetchSession(handle(), key, start, end, readCommitted);
    }

    /** Sessions of one key ending at or after {@code earliestEnd} and starting at or before {@code latestStart}. */
    long findKeySessions(final byte[] key, final long earliestEnd, final long latestStart, final boolean reverse,
                         final boolean readCommitted) {
        return findKeySessions(handle(), key, earliestEnd, latestStart, reverse, readCommitted);
    }

    /** Like {@link #findKeySessions} over a key range; null ends are open. */
    long findSessions(final byte[] keyFrom, final byte[] keyTo, final long earliestEnd, final long latestStart,
                      final boolean reverse, final boolean readCommitted) {
        return findSessions(handle(), keyFrom, keyTo, earliestEnd, latestStart, reverse, readCommitted);
    }

    private static native long open(long kvStore, long retentionPeriod, long segmentInterval);

    /** Every key's sessions ending in the range, by end time, staged writes included; time-ordered stores only. */
    long findSessionsEndingIn(final long earliestEnd, final long latestEnd) {
        return findSessionsEndingIn(handle(), earliestEnd, latestEnd);
    }

    private static native long openTimeOrdered(long kvStore, long retentionPeriod, long segmentInterval,
                                               boolean withIndex);

    private static native long findSessionsEndingIn(long handle, long earliestEnd, long latestEnd);

    private static native void put(long handle, byte[] key, long start, long end, byte[] value);

    private static native void remove(long handle, byte[] key, long start, long end);

    private static native byte[] fetchSession(long handle, byte[] key, long start, long end, boolean readCommitted);

    private static native long findKeySessions(long handle, byte[] key, long earliestEnd, long latestStart,
                                               boolean reverse, boolean readCommitted);

    private static native long findSessions(long handle, byte[] keyFrom, byte[] keyTo, long earliestEnd,
                                            long latestStart, boolean reverse, boolean readCommitted);
}
