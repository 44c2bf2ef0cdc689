package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.StoreSupplier;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The drop-in's {@link Stores}: every supplier factory serves a Sluice store, except the LRU map Sluice has
 * none of, and accepts and rejects exactly what Apache's {@link Stores} does (loaded from Apache's jar).
 */
class StoresOnSluiceTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);
    private static final Duration NEGATIVE = Duration.ofMillis(-1);

    /** Arguments for each supplier factory, by parameter count: valid ones first, then rejected ones. */
    private static final Map<Integer, List<Object[]>> ARGUMENTS = Map.of(
        1, List.of(new Object[] {"s"}, new Object[] {null}),
        2, List.of(new Object[] {"s", MINUTE}, new Object[] {null, MINUTE}, new Object[] {"s", NEGATIVE}),
        3, List.of(new Object[] {"s", MINUTE, MINUTE}, new Object[] {"s", MINUTE, Duration.ZERO},
            new Object[] {"s", NEGATIVE, MINUTE}),
        4, List.of(new Object[] {"s", MINUTE, MINUTE, true}, new Object[] {null, MINUTE, MINUTE, false},
            new Object[] {"s", MINUTE, MINUTE.multipliedBy(2), false}, new Object[] {"s", NEGATIVE, MINUTE, false},
            new Object[] {"s", MINUTE, NEGATIVE, false}));
    private static final List<Object[]> LRU_MAP_ARGUMENTS =
        List.of(new Object[] {"s", 10}, new Object[] {null, 10}, new Object[] {"s", -1});

    @Test
    void supplierFactoriesServeSluiceStoresAndCheckArgumentsAsKafkaStreamsDoes() throws Exception {
        final Path kafkaStreams = Path.of(System.getProperty("sluice.fixture.kafka.streams"));
        final List<String> checked = new ArrayList<>();
        try (ReplacedClassesTest.KafkaStreamsFirstClassLoader apacheClasses =
                 new ReplacedClassesTest.KafkaStreamsFirstClassLoader(kafkaStreams.toUri().toURL())) {
            final Class<?> apacheStores = Class.forName(Stores.class.getName(), false, apacheClasses);
            for (final Method apache : apacheStores.getMethods()) {
                if (!Modifier.isStatic(apache.getModifiers()) || apache.getName().endsWith("Builder")) {
                    continue;
                }
                final Method sluice = Stores.class.getMethod(apache.getName(), apache.getParameterTypes());
                final boolean lruMap = apache.getName().equals("lruMap");
                final List<Object[]> calls = lruMap ? LRU_MAP_ARGUMENTS : ARGUMENTS.get(apache.getParameterCount());
                final Object supplier = sluice.invoke(null, calls.get(0));
                // The LRU map's supplier is Sluice's code, its store Kafka Streams' (see the test below).
                assertTrue(lruMap || supplier.getClass().getName().startsWith("dev.sluice.streams.state.internals."),
                    () -> apache.getName() + " serves " + supplier.getClass().getName());
                for (final Object[] arguments : calls.subList(1, calls.size())) {
                    assertEquals(outcome(apache, arguments), outcome(sluice, arguments),
                        () -> apache.getName() + Arrays.toString(arguments));
                }
                checked.add(apache.getName());
            }
        }
        assertEquals(14, checked.size(), () -> "supplier factories checked: " + checked);
    }

    @Test
    void builtInDslSuppliersAreSluices() {
        final DslKeyValueParams params = new DslKeyValueParams("dsl", DslStoreFormat.TIMESTAMPED);
        assertTrue(BuiltInDslStoreSuppliers.ROCKS_DB.keyValueStore(params).getClass().getName().startsWith("dev.sluice."));
        assertTrue(BuiltInDslStoreSuppliers.IN_MEMORY.keyValueStore(params).getClass().getName().startsWith("dev.sluice."));
        final StoreSupplier<? extends StateStore> lruMap = Stores.lruMap("lru", 3);
        assertEquals("org.apache.kafka.streams.state.internals.MemoryNavigableLRUCache", lruMap.get().getClass().getName());
        assertEquals("in-memory-lru", lruMap.metricsScope());
    }

    /** What a call does: its exception's class and message, or "returned". */
    private static String outcome(final Method factory, final Object[] arguments) throws IllegalAccessException {
        try {
            factory.invoke(null, arguments);
            return "returned";
        } catch (final InvocationTargetException e) {
            return e.getCause().getClass().getName() + ": " + e.getCause().getMessage();
        }
    }
}
