package dev.sluice.streams.state;

import dev.sluice.streams.state.internals.KeyValueLayout;
import dev.sluice.streams.state.internals.SluiceKeyValueBytesStoreSupplier;
import dev.sluice.streams.state.internals.SluiceSessionBytesStoreSupplier;
import dev.sluice.streams.state.internals.SluiceVersionedBytesStoreSupplier;
import dev.sluice.streams.state.internals.SluiceWindowBytesStoreSupplier;
import java.time.Duration;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * Sluice's counterpart of {@link Stores} for Processor API users: the same factory methods, serving
 * Sluice's transactional Rust stores. Pass the suppliers to {@link Stores}' builder methods as usual,
 * for example {@code Stores.keyValueStoreBuilder(SluiceStores.persistentKeyValueStore("counts"), ...)}.
 *
 * <p>Every store is transactional: writes become durable at commit, together with the changelog
 * offsets they correspond to. The exception is Kafka Streams' own runtime under exactly-once with
 * {@code enable.transactional.statestores} false (its default): that runtime then commits stores only
 * when a task closes, so the stores run non-transactionally there, as Kafka Streams' own do, and each
 * write is durable at once. Persistent stores live in {@code <state dir>/<task>/rocksdb/<name>} and
 * share one RocksDB memory budget per application instance, set with the {@code sluice.rocksdb.*}
 * configuration keys.
 */
public final class SluiceStores {

    private SluiceStores() {
    }

    /** A persistent key-value store; like {@link Stores#persistentKeyValueStore(String)}. */
    public static KeyValueBytesStoreSupplier persistentKeyValueStore(final String name) {
        return SluiceKeyValueBytesStoreSupplier.persistent(name, KeyValueLayout.PLAIN);
    }

    /**
     * A persistent key-value store that keeps a timestamp with every value; like
     * {@link Stores#persistentTimestampedKeyValueStore(String)}.
     */
    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStore(final String name) {
        return SluiceKeyValueBytesStoreSupplier.persistent(name, KeyValueLayout.TIMESTAMPED);
    }

    /**
     * A persistent key-value store that keeps a timestamp and the record headers with every value;
     * like {@link Stores#persistentTimestampedKeyValueStoreWithHeaders(String)}.
     */
    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(final String name) {
        return SluiceKeyValueBytesStoreSupplier.persistent(name, KeyValueLayout.HEADERS);
    }

    /** An in-memory key-value store; like {@link Stores#inMemoryKeyValueStore(String)}. */
    public static KeyValueBytesStoreSupplier inMemoryKeyValueStore(final String name) {
        return SluiceKeyValueBytesStoreSupplier.inMemory(name);
    }

    /**
     * A persistent window store; like {@link Stores#persistentWindowStore(String, Duration, Duration, boolean)},
     * with the same argument checks and segment interval.
     */
    public static WindowBytesStoreSupplier persistentWindowStore(final String name, final Duration retentionPeriod,
                                                                 final Duration windowSize,
                                                                 final boolean retainDuplicates) {
        return SluiceWindowBytesStoreSupplier.persistent(name, retentionPeriod, windowSize, retainDuplicates, false);
    }

    /**
     * A persistent window store that keeps a timestamp with every value; like
     * {@link Stores#persistentTimestampedWindowStore(String, Duration, Duration, boolean)}.
     */
    public static WindowBytesStoreSupplier persistentTimestampedWindowStore(final String name,
                                                                            final Duration retentionPeriod,
                                                                            final Duration windowSize,
                                                                            final boolean retainDuplicates) {
        return SluiceWindowBytesStoreSupplier.persistent(name, retentionPeriod, windowSize, retainDuplicates, true);
    }

    /**
     * A persistent window store that keeps a timestamp and the record headers with every value; like
     * {@link Stores#persistentTimestampedWindowStoreWithHeaders(String, Duration, Duration, boolean)}.
     */
    public static WindowBytesStoreSupplier persistentTimestampedWindowStoreWithHeaders(final String name,
                                                                                       final Duration retentionPeriod,
                                                                                       final Duration windowSize,
                                                                                       final boolean retainDuplicates) {
        return SluiceWindowBytesStoreSupplier.persistentWithHeaders(name, retentionPeriod, windowSize, retainDuplicates);
    }

    /**
     * An in-memory window store; like {@link Stores#inMemoryWindowStore(String, Duration, Duration, boolean)}.
     * It iterates in the persistent stores' order (Kafka Streams' in-memory window store iterates by
     * window start first).
     */
    public static WindowBytesStoreSupplier inMemoryWindowStore(final String name, final Duration retentionPeriod,
                                                               final Duration windowSize,
                                                               final boolean retainDuplicates) {
        return SluiceWindowBytesStoreSupplier.inMemory(name, retentionPeriod, windowSize, retainDuplicates);
    }

    /** A persistent session store; like {@link Stores#persistentSessionStore(String, Duration)}. */
    public static SessionBytesStoreSupplier persistentSessionStore(final String name, final Duration retentionPeriod) {
        return SluiceSessionBytesStoreSupplier.persistent(name, retentionPeriod);
    }

    /**
     * A persistent session store that keeps the record headers with every aggregate; like
     * {@link Stores#persistentSessionStoreWithHeaders(String, Duration)}.
     */
    public static SessionBytesStoreSupplier persistentSessionStoreWithHeaders(final String name,
                                                                              final Duration retentionPeriod) {
        return SluiceSessionBytesStoreSupplier.persistentWithHeaders(name, retentionPeriod);
    }

    /**
     * An in-memory session store; like {@link Stores#inMemorySessionStore(String, Duration)}. It iterates in
     * the persistent stores' order.
     */
    public static SessionBytesStoreSupplier inMemorySessionStore(final String name, final Duration retentionPeriod) {
        return SluiceSessionBytesStoreSupplier.inMemory(name, retentionPeriod);
    }

    /**
     * A persistent versioned key-value store; like {@link Stores#persistentVersionedKeyValueStore(String, Duration)}.
     * Pass it to {@link Stores#versionedKeyValueStoreBuilder}.
     */
    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(final String name,
                                                                               final Duration historyRetention) {
        return SluiceVersionedBytesStoreSupplier.persistent(name, historyRetention);
    }

    /**
     * A persistent versioned key-value store; like
     * {@link Stores#persistentVersionedKeyValueStore(String, Duration, Duration)}. Sluice's versioned store is
     * not segmented, so the segment interval is only checked.
     */
    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(final String name,
                                                                               final Duration historyRetention,
                                                                               final Duration segmentInterval) {
        return SluiceVersionedBytesStoreSupplier.persistent(name, historyRetention, segmentInterval);
    }
}
