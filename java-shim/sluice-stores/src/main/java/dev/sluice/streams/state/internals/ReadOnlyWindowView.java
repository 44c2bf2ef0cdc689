package dev.sluice.streams.state.internals;

import java.time.Instant;
import java.util.Objects;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.internals.ApiUtils;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * A window bytes store seen at one isolation level, for interactive queries and other threads. It
 * holds no state of its own, so it follows the store through commits and closes.
 */
final class ReadOnlyWindowView implements ReadOnlyWindowStore<Bytes, byte[]> {

    private final SluiceWindowBytesStore store;
    private final boolean readCommitted;

    ReadOnlyWindowView(final SluiceWindowBytesStore store, final boolean readCommitted) {
        this.store = store;
        this.readCommitted = readCommitted;
    }

    @Override
    public byte[] fetch(final Bytes key, final long time) {
        return store.fetch(key, time, readCommitted);
    }

    @Override
    public WindowStoreIterator<byte[]> fetch(final Bytes key, final Instant timeFrom, final Instant timeTo) {
        return store.fetchKey(key, millis(timeFrom, "timeFrom"), millis(timeTo, "timeTo"), false, readCommitted);
    }

    @Override
    public WindowStoreIterator<byte[]> backwardFetch(final Bytes key, final Instant timeFrom, final Instant timeTo) {
        return store.fetchKey(key, millis(timeFrom, "timeFrom"), millis(timeTo, "timeTo"), true, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(final Bytes keyFrom, final Bytes keyTo,
                                                           final Instant timeFrom, final Instant timeTo) {
        return store.fetchRange(keyFrom, keyTo, millis(timeFrom, "timeFrom"), millis(timeTo, "timeTo"), false,
            readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(final Bytes keyFrom, final Bytes keyTo,
                                                                   final Instant timeFrom, final Instant timeTo) {
        return store.fetchRange(keyFrom, keyTo, millis(timeFrom, "timeFrom"), millis(timeTo, "timeTo"), true,
            readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> all() {
        return store.all(false, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardAll() {
        return store.all(true, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(final Instant timeFrom, final Instant timeTo) {
        return store.fetchAll(millis(timeFrom, "timeFrom"), millis(timeTo, "timeTo"), false, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(final Instant timeFrom, final Instant timeTo) {
        return store.fetchAll(millis(timeFrom, "timeFrom"), millis(timeTo, "timeTo"), true, readCommitted);
    }

    @Override
    public ReadOnlyWindowStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return store.readOnly(isolationLevel);
    }

    private static long millis(final Instant instant, final String name) {
        return ApiUtils.validateMillisecondInstant(instant, ApiUtils.prepareMillisCheckFailMsgPrefix(instant, name));
    }
}
