package dev.sluice.streams.state.internals;

import java.util.Objects;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlySessionStore;

/**
 * A session bytes store seen at one isolation level, for interactive queries and other threads. It
 * holds no state of its own, so it follows the store through commits and closes.
 */
final class ReadOnlySessionView implements ReadOnlySessionStore<Bytes, byte[]> {

    private final SluiceSessionBytesStore store;
    private final boolean readCommitted;

    ReadOnlySessionView(final SluiceSessionBytesStore store, final boolean readCommitted) {
        this.store = store;
        this.readCommitted = readCommitted;
    }

    @Override
    public byte[] fetchSession(final Bytes key, final long sessionStartTime, final long sessionEndTime) {
        return store.fetchSession(key, sessionStartTime, sessionEndTime, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(final Bytes key, final long earliestSessionEndTime,
                                                                  final long latestSessionStartTime) {
        return store.findKeySessions(key, earliestSessionEndTime, latestSessionStartTime, false, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(final Bytes key,
                                                                          final long earliestSessionEndTime,
                                                                          final long latestSessionStartTime) {
        return store.findKeySessions(key, earliestSessionEndTime, latestSessionStartTime, true, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(final Bytes keyFrom, final Bytes keyTo,
                                                                  final long earliestSessionEndTime,
                                                                  final long latestSessionStartTime) {
        return store.findSessions(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, false, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(final Bytes keyFrom, final Bytes keyTo,
                                                                          final long earliestSessionEndTime,
                                                                          final long latestSessionStartTime) {
        return store.findSessions(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, true, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(final Bytes key) {
        return store.findKeySessions(key, 0, Long.MAX_VALUE, false, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(final Bytes key) {
        return store.findKeySessions(key, 0, Long.MAX_VALUE, true, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(final Bytes keyFrom, final Bytes keyTo) {
        return store.findSessions(keyFrom, keyTo, 0, Long.MAX_VALUE, false, readCommitted);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(final Bytes keyFrom, final Bytes keyTo) {
        return store.findSessions(keyFrom, keyTo, 0, Long.MAX_VALUE, true, readCommitted);
    }

    @Override
    public ReadOnlySessionStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return store.readOnly(isolationLevel);
    }
}
