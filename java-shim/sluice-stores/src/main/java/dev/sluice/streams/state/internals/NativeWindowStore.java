package dev.sluice.streams.state.internals;

/**
 * A native window store: records {@code (key, window start) → value} with segmented retention, key-ordered
 * or time-ordered. Scans return native iterator handles whose entries are {@link EntryFraming} windowed
 * entries.
 */
final class NativeWindowStore extends LayeredNativeStore {

    private NativeWindowStore(final NativeKeyValueStore data, final long handle) {
        super(data, handle);
    }

    static NativeWindowStore open(final NativeKeyValueStore data, final WindowStoreOptions options) {
        return openOver(data, kv -> new NativeWindowStore(data, options.layout().timeOrdered()
            ? openTimeOrdered(kv, options.retentionPeriod(), options.segmentInterval(), options.retainDuplicates(),
                options.layout() == WindowStoreOptions.Layout.TIME_ORDERED_INDEXED)
            : open(kv, options.retentionPeriod(), options.segmentInterval(), options.retainDuplicates())));
    }

    void put(final byte[] key, final byte[] value, final long windowStart) {
        put(handle(), key, value, windowStart);
    }

    byte[] fetch(final byte[] key, final long windowStart, final boolean readCommitted) {
        return fetch(handle(), key, windowStart, readCommitted);
    }

    /** One key's windows; the framed keys hold only the window start. */
    long fetchKey(final byte[] key, final long timeFrom, final long timeTo, final boolean reverse,
                  final boolean readCommitted) {
        return fetchKey(handle(), key, timeFrom, timeTo, reverse, readCommitted);
    }

    long fetchRange(final byte[] keyFrom, final byte[] keyTo, final long timeFrom, final long timeTo,
                    final boolean reverse, final boolean readCommitted) {
        return fetchRange(handle(), keyFrom, keyTo, timeFrom, timeTo, reverse, readCommitted);
    }

    /** Every key's windows starting in {@code [timeFrom, timeTo]}, in the store's layout order. */
    long fetchAll(final long timeFrom, final long timeTo, final boolean reverse, final boolean readCommitted) {
        return fetchAll(handle(), timeFrom, timeTo, reverse, readCommitted);
    }

    long all(final boolean reverse, final boolean readCommitted) {
        return all(handle(), reverse, readCommitted);
    }

    private static native long open(long kvStore, long retentionPeriod, long segmentInterval, boolean retainDuplicates);

    private static native long openTimeOrdered(long kvStore, long retentionPeriod, long segmentInterval,
                                               boolean retainDuplicates, boolean withIndex);

    private static native void put(long handle, byte[] key, byte[] value, long windowStart);

    private static native byte[] fetch(long handle, byte[] key, long windowStart, boolean readCommitted);

    private static native long fetchKey(long handle, byte[] key, long timeFrom, long timeTo, boolean reverse,
                                        boolean readCommitted);

    private static native long fetchRange(long handle, byte[] keyFrom, byte[] keyTo, long timeFrom, long timeTo,
                                          boolean reverse, boolean readCommitted);

    private static native long fetchAll(long handle, long timeFrom, long timeTo, boolean reverse,
                                        boolean readCommitted);

    private static native long all(long handle, boolean reverse, boolean readCommitted);
}
