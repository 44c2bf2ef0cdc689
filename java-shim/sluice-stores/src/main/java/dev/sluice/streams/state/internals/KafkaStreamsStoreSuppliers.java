package dev.sluice.streams.state.internals;

import java.time.Duration;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.InMemorySessionBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.InMemoryWindowBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.MemoryNavigableLRUCache;

/**
 * Kafka Streams' own suppliers for the store kinds Sluice has no store for, built from Kafka Streams'
 * supplier classes directly: never through {@code Stores} or {@code BuiltInDslStoreSuppliers}, which in
 * Sluice's drop-in artifact are Sluice's and would hand the request back to Sluice.
 */
public final class KafkaStreamsStoreSuppliers {

    private KafkaStreamsStoreSuppliers() {
    }

    /** Kafka Streams' in-memory window store, which iterates by window start first. */
    public static WindowBytesStoreSupplier inMemoryWindowStore(final String name, final Duration retentionPeriod,
                                                               final Duration windowSize,
                                                               final boolean retainDuplicates) {
        final StoreArguments.Window window = StoreArguments.window(name, retentionPeriod, windowSize);
        return new InMemoryWindowBytesStoreSupplier(name, window.retentionPeriod(), window.windowSize(),
            retainDuplicates);
    }

    /** Kafka Streams' in-memory session store, which iterates by session end first. */
    public static SessionBytesStoreSupplier inMemorySessionStore(final String name, final Duration retentionPeriod) {
        return new InMemorySessionBytesStoreSupplier(name, StoreArguments.retentionPeriod(name, retentionPeriod));
    }

    /** Kafka Streams' bounded in-memory LRU map. */
    public static KeyValueBytesStoreSupplier lruMap(final String name, final int maxCacheSize) {
        StoreArguments.maxCacheSize(name, maxCacheSize);
        return new KeyValueBytesStoreSupplier() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public KeyValueStore<Bytes, byte[]> get() {
                return new MemoryNavigableLRUCache(name, maxCacheSize);
            }

            @Override
            public String metricsScope() {
                return "in-memory-lru";
            }
        };
    }
}
