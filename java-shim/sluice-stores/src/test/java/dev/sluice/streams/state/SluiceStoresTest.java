package dev.sluice.streams.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.streams.state.internals.SluiceHeadersKeyValueBytesStore;
import dev.sluice.streams.state.internals.SluiceKeyValueBytesStore;
import dev.sluice.streams.state.internals.SluiceTimestampedKeyValueBytesStore;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.HeadersBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.Test;

/** Processor API users get Sluice stores from {@link SluiceStores} and Kafka Streams' builders add no adapters. */
class SluiceStoresTest {

    @Test
    void timestampedStoresNeedNoConvertingAdapter() {
        final StateStore built = Stores.timestampedKeyValueStoreBuilder(
            SluiceStores.persistentTimestampedKeyValueStore("ts"), Serdes.String(), Serdes.Long()).withLoggingDisabled().build();
        assertInstanceOf(SluiceTimestampedKeyValueBytesStore.class, innermost(built));
    }

    @Test
    void headersStoresNeedNoConvertingAdapter() {
        final KeyValueBytesStoreSupplier supplier = SluiceStores.persistentTimestampedKeyValueStoreWithHeaders("headers");
        assertInstanceOf(HeadersBytesStoreSupplier.class, supplier);
        final StateStore built = Stores.timestampedKeyValueStoreWithHeadersBuilder(supplier, Serdes.String(), Serdes.Long())
            .withLoggingDisabled().build();
        assertInstanceOf(SluiceHeadersKeyValueBytesStore.class, innermost(built));
    }

    @Test
    void suppliersNameTheirStoresAndUseKafkaStreamsMetricsScopes() {
        final KeyValueBytesStoreSupplier persistent = SluiceStores.persistentKeyValueStore("plain");
        assertEquals("plain", persistent.name());
        assertEquals("rocksdb", persistent.metricsScope());
        assertEquals("in-memory", SluiceStores.inMemoryKeyValueStore("mem").metricsScope());
        assertInstanceOf(SluiceKeyValueBytesStore.class, persistent.get());
        assertEquals(false, SluiceStores.inMemoryKeyValueStore("mem").get().persistent());
        assertThrows(NullPointerException.class, () -> SluiceStores.persistentKeyValueStore(null));
    }

    private static StateStore innermost(final StateStore store) {
        StateStore inner = store;
        while (inner instanceof WrappedStateStore) {
            inner = ((WrappedStateStore<?, ?, ?>) inner).wrapped();
        }
        return inner;
    }
}
