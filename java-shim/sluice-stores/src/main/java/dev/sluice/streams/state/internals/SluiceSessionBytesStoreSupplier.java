package dev.sluice.streams.state.internals;

import java.time.Duration;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;

/**
 * Supplies Sluice session bytes stores of one backend, plain or headers-aware. The factories accept and
 * reject exactly the arguments {@link Stores}' session factories do ({@link StoreArguments}).
 */
public class SluiceSessionBytesStoreSupplier implements SessionBytesStoreSupplier {

    private final String name;
    private final KeyValueBackend backend;
    private final long retentionPeriod;
    private final long segmentInterval;
    private final boolean timeOrdered;
    private final boolean headersAware;

    SluiceSessionBytesStoreSupplier(final String name, final KeyValueBackend backend, final long retentionPeriod,
                                    final long segmentInterval, final boolean timeOrdered,
                                    final boolean headersAware) {
        this.name = name;
        this.backend = backend;
        this.retentionPeriod = retentionPeriod;
        this.segmentInterval = segmentInterval;
        this.timeOrdered = timeOrdered;
        this.headersAware = headersAware;
    }

    /** Persistent stores; arguments as {@link Stores#persistentSessionStore}. */
    public static SessionBytesStoreSupplier persistent(final String name, final Duration retentionPeriod) {
        final long retention = StoreArguments.retentionPeriod(name, retentionPeriod);
        return new SluiceSessionBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB, retention,
            StoreArguments.segmentInterval(retention), false, false);
    }

    /** Persistent headers-aware stores; arguments as {@link Stores#persistentSessionStoreWithHeaders}. */
    public static SessionBytesStoreSupplier persistentWithHeaders(final String name, final Duration retentionPeriod) {
        final long retention = StoreArguments.retentionPeriod(name, retentionPeriod);
        return new SluiceHeadersSessionBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB, retention,
            StoreArguments.segmentInterval(retention), false);
    }

    /**
     * Persistent time-ordered stores, Kafka Streams' stores for emit-final session aggregations: they
     * serve {@code findSessions(earliestSessionEndTime, latestSessionEndTime)}, by session end. Arguments
     * as {@link Stores#persistentSessionStore}.
     */
    public static SessionBytesStoreSupplier persistentTimeOrdered(final String name, final Duration retentionPeriod) {
        final long retention = StoreArguments.retentionPeriod(name, retentionPeriod);
        return new SluiceSessionBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB, retention,
            StoreArguments.segmentInterval(retention), true, false);
    }

    /**
     * Persistent time-ordered headers-aware stores, Kafka Streams' stores for emit-final session
     * aggregations under {@code dsl.store.format=headers}. Arguments as {@link Stores#persistentSessionStore}.
     */
    public static SessionBytesStoreSupplier persistentTimeOrderedWithHeaders(final String name,
                                                                             final Duration retentionPeriod) {
        final long retention = StoreArguments.retentionPeriod(name, retentionPeriod);
        return new SluiceHeadersSessionBytesStoreSupplier(name, KeyValueBackend.ROCKS_DB, retention,
            StoreArguments.segmentInterval(retention), true);
    }

    /**
     * In-memory stores; arguments as {@link Stores#inMemorySessionStore}. They keep the persistent stores'
     * segments, so they expire and iterate exactly like them.
     */
    public static SessionBytesStoreSupplier inMemory(final String name, final Duration retentionPeriod) {
        final long retention = StoreArguments.retentionPeriod(name, retentionPeriod);
        return new SluiceSessionBytesStoreSupplier(name, KeyValueBackend.IN_MEMORY, retention,
            StoreArguments.segmentInterval(retention), false, false);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public SessionStore<Bytes, byte[]> get() {
        if (headersAware) {
            return new SluiceHeadersSessionBytesStore(name, backend, retentionPeriod, segmentInterval, timeOrdered,
                NativeKeyValueIterator.DEFAULT_CHUNK_BYTES);
        }
        return new SluiceSessionBytesStore(name, backend, retentionPeriod, segmentInterval, timeOrdered,
            NativeKeyValueIterator.DEFAULT_CHUNK_BYTES);
    }

    @Override
    public String metricsScope() {
        return backend.metricsScope() + "-session";
    }

    @Override
    public long segmentIntervalMs() {
        return segmentInterval;
    }

    @Override
    public long retentionPeriod() {
        return retentionPeriod;
    }

    @Override
    public String toString() {
        return "SluiceSessionBytesStoreSupplier{name=" + name + ", retentionPeriod=" + retentionPeriod
            + ", segmentInterval=" + segmentInterval + ", persistent=" + backend.persistent() + ", timeOrdered="
            + timeOrdered + ", headersAware=" + headersAware + "}";
    }
}
