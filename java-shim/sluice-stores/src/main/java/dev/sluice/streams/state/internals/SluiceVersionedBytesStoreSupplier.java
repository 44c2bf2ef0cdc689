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
        final VersionedBytesStoreSupplier validated =
            Stores.persistentVersionedKeyValueStore(name, historyRetention, segmentInterval);
        return new SluiceVersionedBytesStoreSupplier(name, validated.historyRetentionMs());
    }

    /** Persistent stores; arguments as {@link Stores#persistentVersionedKeyValueStore(String, Duration)}. */
    public static VersionedBytesStoreSupplier persistent(final String name, final Duration historyRetention) {
        final VersionedBytesStoreSupplier validated = Stores.persistentVersionedKeyValueStore(name, historyRetention);
        return new SluiceVersionedBytesStoreSupplier(name, validated.historyRetentionMs());
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
