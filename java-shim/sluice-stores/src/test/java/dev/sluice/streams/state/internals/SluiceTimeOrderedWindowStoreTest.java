package dev.sluice.streams.state.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.HeadersBytesStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.RocksDBTimeOrderedWindowStore;
import org.apache.kafka.streams.state.internals.SluiceTimeOrderedWindowStore;
import org.apache.kafka.streams.state.internals.TimeOrderedCachingWindowStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.Test;

/**
 * Sluice's time-ordered window store as Kafka Streams' builders see it: they recognise it as their own
 * time-ordered store and put their time-ordered caching layer over it, and no method of the Kafka Streams
 * classes it extends is left to reach their (never opened) state.
 */
class SluiceTimeOrderedWindowStoreTest {

    private static final Duration RETENTION = Duration.ofMinutes(10);
    private static final Duration WINDOW = Duration.ofMinutes(1);

    @Test
    void everyMethodOfTheKafkaStreamsSuperclassesIsOverridden() {
        final List<String> missing = new ArrayList<>();
        for (final Class<?> superclass : List.of(RocksDBTimeOrderedWindowStore.class, WrappedStateStore.class)) {
            for (final Method method : superclass.getDeclaredMethods()) {
                final int modifiers = method.getModifiers();
                if (method.isSynthetic() || Modifier.isStatic(modifiers) || Modifier.isPrivate(modifiers)
                    || Modifier.isFinal(modifiers)) {
                    continue;
                }
                if (!declares(SluiceTimeOrderedWindowStore.class, method)) {
                    missing.add(superclass.getSimpleName() + "." + method.getName()
                        + Arrays.toString(method.getParameterTypes()));
                }
            }
        }
        assertEquals(List.of(), missing, "methods that would reach Kafka Streams' unopened store");
    }

    @Test
    void kafkaStreamsPutsItsTimeOrderedCacheOverTheStore() {
        final WindowBytesStoreSupplier supplier = SluiceWindowBytesStoreSupplier.persistentTimeOrdered("final-counts",
            RETENTION, WINDOW, false, false, false);
        final StateStore built = Stores.timestampedWindowStoreBuilder(supplier, Serdes.String(), Serdes.Long())
            .withCachingEnabled().build();
        assertCachedInTimeOrderOver(built, false);
    }

    @Test
    void kafkaStreamsPutsItsTimeOrderedCacheOverTheHeadersAwareStore() {
        final WindowBytesStoreSupplier supplier = SluiceWindowBytesStoreSupplier.persistentTimeOrdered("final-counts",
            RETENTION, WINDOW, false, true, true);
        final StateStore built = Stores.timestampedWindowStoreWithHeadersBuilder(supplier, Serdes.String(), Serdes.Long())
            .withCachingEnabled().build();
        final SluiceTimeOrderedWindowStore store = assertCachedInTimeOrderOver(built, true);
        assertTrue(store.hasIndex());
    }

    private static SluiceTimeOrderedWindowStore assertCachedInTimeOrderOver(final StateStore built,
                                                                           final boolean headersAware) {
        final StateStore cache = ((WrappedStateStore<?, ?, ?>) built).wrapped();
        assertInstanceOf(TimeOrderedCachingWindowStore.class, cache);
        StateStore inner = cache;
        while (!(inner instanceof SluiceTimeOrderedWindowStore)) {
            inner = ((WrappedStateStore<?, ?, ?>) inner).wrapped();
        }
        assertEquals(headersAware, inner instanceof HeadersBytesStore);
        final SluiceTimeOrderedWindowStore store = (SluiceTimeOrderedWindowStore) inner;
        assertEquals(headersAware, store.sluiceStore() instanceof HeadersBytesStore);
        return store;
    }

    private static boolean declares(final Class<?> type, final Method method) {
        try {
            type.getDeclaredMethod(method.getName(), method.getParameterTypes());
            return true;
        } catch (final NoSuchMethodException e) {
            return false;
        }
    }
}
