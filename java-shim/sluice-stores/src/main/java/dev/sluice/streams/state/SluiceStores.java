package dev.sluice.streams.state;

import dev.sluice.streams.state.internals.KeyValueLayout;
import dev.sluice.streams.state.internals.SluiceKeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;

/**
 * Sluice's counterpart of {@link Stores} for Processor API users: the same factory methods, serving
 * Sluice's transactional Rust stores. Pass the suppliers to {@link Stores}' builder methods as usual,
 * for example {@code Stores.keyValueStoreBuilder(SluiceStores.persistentKeyValueStore("counts"), ...)}.
 *
 * <p>Every store is transactional: writes become durable at commit, together with the changelog
 * offsets they correspond to. Persistent stores live in {@code <state dir>/<task>/rocksdb/<name>} and
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
}
