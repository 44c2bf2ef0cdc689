package dev.sluice.streams.state.internals;

import java.time.Duration;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.VersionedKeyValueToBytesStoreAdapter;

/**
 * Supplies Sluice persistent versioned stores, as the {@code VersionedBytesStore} Kafka Streams'
 * versioned store builder expects: Kafka Streams' own adapter over a {@link SluiceVersionedKeyValueStore}.
 */
public final class SluiceVersionedBytesStoreSupplier implements VersionedBytesStoreSupplier {

    private final String name;
    private final long historyRetention;

    private SluiceVersionedBytesStoreSupplier(final String name, final long historyRetention) {
        this.name = name;
        this.historyRetention = historyRetention;
    }

    /**
     * Persistent stores; arguments as {@link Stores#persistentVersionedKeyValueStore(String, Duration, Duration)}
     * and checked the same way. Sluice's versioned store is not segmented: the segment interval is
     * validated and has no further effect.
     */
    public static VersionedBytesStoreSupplier persistent(final String name, final Duration historyRetention,
                                                         final Duration segmentInterval) {
        final long retention = StoreArguments.historyRetention(name, historyRetention);
        StoreArguments.versionedSegmentInterval(segmentInterval);
        return new SluiceVersionedBytesStoreSupplier(name, retention);
    }

    /** Persistent stores; arguments as {@link Stores#persistentVersionedKeyValueStore(String, Duration)}. */
    public static VersionedBytesStoreSupplier persistent(final String name, final Duration historyRetention) {
        return new SluiceVersionedBytesStoreSupplier(name, StoreArguments.historyRetention(name, historyRetention));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long historyRetentionMs() {
        return historyRetention;
    }

    @Override
    public KeyValueStore<Bytes, byte[]> get() {
        return new VersionedKeyValueToBytesStoreAdapter(
            new SluiceVersionedKeyValueStore(name, KeyValueBackend.ROCKS_DB, historyRetention));
    }

    @Override
    public String metricsScope() {
        return KeyValueBackend.ROCKS_DB.metricsScope();
    }

    @Override
    public String toString() {
        return "SluiceVersionedBytesStoreSupplier{name=" + name + ", historyRetention=" + historyRetention + "}";
    }
}
