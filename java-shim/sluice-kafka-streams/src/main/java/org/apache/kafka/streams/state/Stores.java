package org.apache.kafka.streams.state;

import dev.sluice.streams.runtime.internals.RuntimeChoice;
import dev.sluice.streams.state.SluiceStores;
import dev.sluice.streams.state.internals.KafkaStreamsStoreSuppliers;
import java.time.Duration;
import java.util.Objects;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.state.internals.KeyValueStoreBuilder;
import org.apache.kafka.streams.state.internals.SessionStoreBuilder;
import org.apache.kafka.streams.state.internals.SessionStoreWithHeadersBuilder;
import org.apache.kafka.streams.state.internals.TimestampedKeyValueStoreBuilder;
import org.apache.kafka.streams.state.internals.TimestampedKeyValueStoreBuilderWithHeaders;
import org.apache.kafka.streams.state.internals.TimestampedWindowStoreBuilder;
import org.apache.kafka.streams.state.internals.TimestampedWindowStoreWithHeadersBuilder;
import org.apache.kafka.streams.state.internals.VersionedKeyValueStoreBuilder;
import org.apache.kafka.streams.state.internals.WindowStoreBuilder;

/**
 * Sluice's version of Kafka Streams' {@code Stores}: the same factories, with the same signatures and argument
 * checks. The persistent and in-memory suppliers are Sluice's transactional stores ({@link SluiceStores}), or
 * Kafka Streams' own where the JVM runs on Apache's runtime ({@link RuntimeChoice}); the builders are Kafka
 * Streams' own (metering, caching, logging layers over whatever supplier they get).
 */
public final class Stores {

    public Stores() {
    }

    public static KeyValueBytesStoreSupplier persistentKeyValueStore(final String name) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentKeyValueStore(name)
            : SluiceStores.persistentKeyValueStore(name);
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStore(final String name) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentTimestampedKeyValueStore(name)
            : SluiceStores.persistentTimestampedKeyValueStore(name);
    }

    public static KeyValueBytesStoreSupplier persistentTimestampedKeyValueStoreWithHeaders(final String name) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentTimestampedKeyValueStoreWithHeaders(name)
            : SluiceStores.persistentTimestampedKeyValueStoreWithHeaders(name);
    }

    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(final String name,
                                                                               final Duration historyRetention) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentVersionedKeyValueStore(name, historyRetention)
            : SluiceStores.persistentVersionedKeyValueStore(name, historyRetention);
    }

    public static VersionedBytesStoreSupplier persistentVersionedKeyValueStore(final String name,
                                                                               final Duration historyRetention,
                                                                               final Duration segmentInterval) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentVersionedKeyValueStore(name, historyRetention, segmentInterval)
            : SluiceStores.persistentVersionedKeyValueStore(name, historyRetention, segmentInterval);
    }

    public static KeyValueBytesStoreSupplier inMemoryKeyValueStore(final String name) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.inMemoryKeyValueStore(name)
            : SluiceStores.inMemoryKeyValueStore(name);
    }

    /** Kafka Streams' own LRU map: Sluice has no bounded, evicting store. */
    public static KeyValueBytesStoreSupplier lruMap(final String name, final int maxCacheSize) {
        return KafkaStreamsStoreSuppliers.lruMap(name, maxCacheSize);
    }

    public static WindowBytesStoreSupplier persistentWindowStore(final String name, final Duration retentionPeriod,
                                                                 final Duration windowSize,
                                                                 final boolean retainDuplicates)
        throws IllegalArgumentException {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentWindowStore(name, retentionPeriod, windowSize, retainDuplicates)
            : SluiceStores.persistentWindowStore(name, retentionPeriod, windowSize, retainDuplicates);
    }

    public static WindowBytesStoreSupplier persistentTimestampedWindowStore(final String name,
                                                                            final Duration retentionPeriod,
                                                                            final Duration windowSize,
                                                                            final boolean retainDuplicates)
        throws IllegalArgumentException {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentTimestampedWindowStore(name, retentionPeriod, windowSize, retainDuplicates)
            : SluiceStores.persistentTimestampedWindowStore(name, retentionPeriod, windowSize, retainDuplicates);
    }

    public static WindowBytesStoreSupplier persistentTimestampedWindowStoreWithHeaders(final String name,
                                                                                       final Duration retentionPeriod,
                                                                                       final Duration windowSize,
                                                                                       final boolean retainDuplicates)
        throws IllegalArgumentException {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentTimestampedWindowStoreWithHeaders(name, retentionPeriod, windowSize,
            retainDuplicates)
            : SluiceStores.persistentTimestampedWindowStoreWithHeaders(name, retentionPeriod, windowSize,
            retainDuplicates);
    }

    public static WindowBytesStoreSupplier inMemoryWindowStore(final String name, final Duration retentionPeriod,
                                                               final Duration windowSize,
                                                               final boolean retainDuplicates)
        throws IllegalArgumentException {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.inMemoryWindowStore(name, retentionPeriod, windowSize, retainDuplicates)
            : SluiceStores.inMemoryWindowStore(name, retentionPeriod, windowSize, retainDuplicates);
    }

    public static SessionBytesStoreSupplier persistentSessionStore(final String name, final Duration retentionPeriod) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentSessionStore(name, retentionPeriod)
            : SluiceStores.persistentSessionStore(name, retentionPeriod);
    }

    public static SessionBytesStoreSupplier persistentSessionStoreWithHeaders(final String name,
                                                                              final Duration retentionPeriod) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.persistentSessionStoreWithHeaders(name, retentionPeriod)
            : SluiceStores.persistentSessionStoreWithHeaders(name, retentionPeriod);
    }

    public static SessionBytesStoreSupplier inMemorySessionStore(final String name, final Duration retentionPeriod) {
        return RuntimeChoice.apacheRuntime()
            ? ApacheStores.inMemorySessionStore(name, retentionPeriod)
            : SluiceStores.inMemorySessionStore(name, retentionPeriod);
    }

    public static <K, V> StoreBuilder<KeyValueStore<K, V>> keyValueStoreBuilder(final KeyValueBytesStoreSupplier supplier,
                                                                                final Serde<K> keySerde,
                                                                                final Serde<V> valueSerde) {
        return new KeyValueStoreBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<TimestampedKeyValueStore<K, V>> timestampedKeyValueStoreBuilder(
        final KeyValueBytesStoreSupplier supplier, final Serde<K> keySerde, final Serde<V> valueSerde) {
        return new TimestampedKeyValueStoreBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<TimestampedKeyValueStoreWithHeaders<K, V>> timestampedKeyValueStoreWithHeadersBuilder(
        final KeyValueBytesStoreSupplier supplier, final Serde<K> keySerde, final Serde<V> valueSerde) {
        return new TimestampedKeyValueStoreBuilderWithHeaders<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<VersionedKeyValueStore<K, V>> versionedKeyValueStoreBuilder(
        final VersionedBytesStoreSupplier supplier, final Serde<K> keySerde, final Serde<V> valueSerde) {
        return new VersionedKeyValueStoreBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<WindowStore<K, V>> windowStoreBuilder(final WindowBytesStoreSupplier supplier,
                                                                            final Serde<K> keySerde,
                                                                            final Serde<V> valueSerde) {
        return new WindowStoreBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<TimestampedWindowStore<K, V>> timestampedWindowStoreBuilder(
        final WindowBytesStoreSupplier supplier, final Serde<K> keySerde, final Serde<V> valueSerde) {
        return new TimestampedWindowStoreBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<TimestampedWindowStoreWithHeaders<K, V>> timestampedWindowStoreWithHeadersBuilder(
        final WindowBytesStoreSupplier supplier, final Serde<K> keySerde, final Serde<V> valueSerde) {
        return new TimestampedWindowStoreWithHeadersBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<SessionStore<K, V>> sessionStoreBuilder(final SessionBytesStoreSupplier supplier,
                                                                              final Serde<K> keySerde,
                                                                              final Serde<V> valueSerde) {
        return new SessionStoreBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    public static <K, V> StoreBuilder<SessionStoreWithHeaders<K, V>> sessionStoreWithHeadersBuilder(
        final SessionBytesStoreSupplier supplier, final Serde<K> keySerde, final Serde<V> valueSerde) {
        return new SessionStoreWithHeadersBuilder<>(checked(supplier), keySerde, valueSerde, Time.SYSTEM);
    }

    private static <S> S checked(final S supplier) {
        return Objects.requireNonNull(supplier, "supplier cannot be null");
    }
}
