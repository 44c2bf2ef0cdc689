package dev.sluice.streams.state.internals;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.internals.WithRetentionPeriod;
import org.apache.kafka.streams.state.ReadOnlySessionStore;
import org.apache.kafka.streams.state.SessionStore;

/**
 * A transactional session bytes store on Sluice's native segmented session store, the bottom layer
 * under Kafka Streams' metered, caching and change-logging session wrappers. Reads return what Kafka
 * Streams' RocksDB session store returns, in its order; sessions expire with stream time after the
 * retention period. Time-ordered, it is Kafka Streams' time-ordered session store instead, which alone
 * serves {@code findSessions(earliestEnd, latestEnd)}, the read of emit-final session aggregations. The
 * state store contract is {@link SluiceStateStore}'s.
 */
public class SluiceSessionBytesStore extends SluiceStateStore<NativeSessionStore> implements SessionStore<Bytes, byte[]>,
    WithRetentionPeriod {

    private final long retentionPeriod;
    private final long segmentInterval;
    private final boolean timeOrdered;

    SluiceSessionBytesStore(final String name, final KeyValueBackend backend, final long retentionPeriod,
                            final long segmentInterval, final boolean timeOrdered, final int iteratorChunkBytes) {
        super(name, backend, iteratorChunkBytes);
        this.retentionPeriod = retentionPeriod;
        this.segmentInterval = segmentInterval;
        this.timeOrdered = timeOrdered;
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.PLAIN);
    }

    @Override
    String metricsScope() {
        return super.metricsScope() + "-session";
    }

    @Override
    NativeSessionStore openOver(final NativeKeyValueStore data) {
        return NativeSessionStore.open(data, retentionPeriod, segmentInterval, timeOrdered);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(final long earliestSessionEndTime,
                                                                  final long latestSessionEndTime) {
        if (!timeOrdered) {
            return SessionStore.super.findSessions(earliestSessionEndTime, latestSessionEndTime);
        }
        return sessions(open().findSessionsEndingIn(earliestSessionEndTime, latestSessionEndTime));
    }

    @Override
    void restore(final NativeSessionStore store, final List<ConsumerRecord<byte[], byte[]>> records) {
        store.restore(EntryFraming.records(records));
    }

    @Override
    public void put(final Windowed<Bytes> sessionKey, final byte[] aggregate) {
        Objects.requireNonNull(sessionKey, "sessionKey cannot be null");
        open().put(sessionKey.key().get(), sessionKey.window().start(), sessionKey.window().end(), aggregate);
        recordWrite();
    }

    @Override
    public void remove(final Windowed<Bytes> sessionKey) {
        Objects.requireNonNull(sessionKey, "sessionKey cannot be null");
        open().remove(sessionKey.key().get(), sessionKey.window().start(), sessionKey.window().end());
        recordWrite();
    }

    @Override
    public byte[] fetchSession(final Bytes key, final long sessionStartTime, final long sessionEndTime) {
        return fetchSession(key, sessionStartTime, sessionEndTime, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(final Bytes key, final long earliestSessionEndTime,
                                                                  final long latestSessionStartTime) {
        return findKeySessions(key, earliestSessionEndTime, latestSessionStartTime, false, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(final Bytes key,
                                                                          final long earliestSessionEndTime,
                                                                          final long latestSessionStartTime) {
        return findKeySessions(key, earliestSessionEndTime, latestSessionStartTime, true, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(final Bytes keyFrom, final Bytes keyTo,
                                                                  final long earliestSessionEndTime,
                                                                  final long latestSessionStartTime) {
        return findSessions(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, false, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFindSessions(final Bytes keyFrom, final Bytes keyTo,
                                                                          final long earliestSessionEndTime,
                                                                          final long latestSessionStartTime) {
        return findSessions(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime, true, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(final Bytes key) {
        return findKeySessions(key, 0, Long.MAX_VALUE, false, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(final Bytes key) {
        return findKeySessions(key, 0, Long.MAX_VALUE, true, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(final Bytes keyFrom, final Bytes keyTo) {
        return findSessions(keyFrom, keyTo, 0, Long.MAX_VALUE, false, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(final Bytes keyFrom, final Bytes keyTo) {
        return findSessions(keyFrom, keyTo, 0, Long.MAX_VALUE, true, false);
    }

    /** Read by Kafka Streams' state manager, as from its own window and session stores. */
    @Override
    public long retentionPeriod() {
        return retentionPeriod;
    }

    @Override
    public ReadOnlySessionStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return new ReadOnlySessionView(this, isolationLevel == IsolationLevel.READ_COMMITTED);
    }

    byte[] fetchSession(final Bytes key, final long start, final long end, final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        return open().fetchSession(key.get(), start, end, readCommitted);
    }

    KeyValueIterator<Windowed<Bytes>, byte[]> findKeySessions(final Bytes key, final long earliestEnd,
                                                              final long latestStart, final boolean reverse,
                                                              final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        return sessions(open().findKeySessions(key.get(), earliestEnd, latestStart, reverse, readCommitted));
    }

    KeyValueIterator<Windowed<Bytes>, byte[]> findSessions(final Bytes keyFrom, final Bytes keyTo,
                                                           final long earliestEnd, final long latestStart,
                                                           final boolean reverse, final boolean readCommitted) {
        return sessions(open().findSessions(keyFrom == null ? null : keyFrom.get(), keyTo == null ? null : keyTo.get(),
            earliestEnd, latestStart, reverse, readCommitted));
    }

    private KeyValueIterator<Windowed<Bytes>, byte[]> sessions(final long scan) {
        return new KeyMappingIterator<>(iterate(scan), EntryFraming::sessionKey);
    }
}
