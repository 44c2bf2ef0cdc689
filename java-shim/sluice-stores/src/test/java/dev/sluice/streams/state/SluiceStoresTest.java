package dev.sluice.streams.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.streams.state.internals.SluiceHeadersKeyValueBytesStore;
import dev.sluice.streams.state.internals.SluiceHeadersSessionBytesStore;
import dev.sluice.streams.state.internals.SluiceHeadersWindowBytesStore;
import dev.sluice.streams.state.internals.SluiceKeyValueBytesStore;
import dev.sluice.streams.state.internals.SluiceTimestampedKeyValueBytesStore;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.HeadersBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
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
    void headersWindowAndSessionStoresNeedNoConvertingAdapter() {
        final WindowBytesStoreSupplier window = SluiceStores.persistentTimestampedWindowStoreWithHeaders("window-headers",
            Duration.ofMinutes(10), Duration.ofSeconds(10), false);
        assertInstanceOf(HeadersBytesStoreSupplier.class, window);
        assertInstanceOf(SluiceHeadersWindowBytesStore.class, innermost(Stores.timestampedWindowStoreWithHeadersBuilder(
            window, Serdes.String(), Serdes.Long()).withLoggingDisabled().build()));

        final SessionBytesStoreSupplier session =
            SluiceStores.persistentSessionStoreWithHeaders("session-headers", Duration.ofMinutes(10));
        assertInstanceOf(HeadersBytesStoreSupplier.class, session);
        assertInstanceOf(SluiceHeadersSessionBytesStore.class, innermost(Stores.sessionStoreWithHeadersBuilder(
            session, Serdes.String(), Serdes.Long()).withLoggingDisabled().build()));
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
