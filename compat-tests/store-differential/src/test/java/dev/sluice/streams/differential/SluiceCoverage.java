package dev.sluice.streams.differential;

import dev.sluice.streams.state.SluiceDslStoreSuppliers;
import dev.sluice.streams.state.SluiceStores;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.internals.SluiceTimeOrderedWindowStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * Which store kinds Sluice serves in this build. Asked of the suppliers themselves, so that a case
 * whose stores still fall back to Kafka Streams' is labelled as such, and becomes a Sluice proof by
 * itself once Sluice serves its kind.
 */
final class SluiceCoverage {

    private static final String SLUICE_PACKAGE = "dev.sluice.";
    private static final String KAFKA_STREAMS_STORES_PACKAGE = "org.apache.kafka.streams.state.internals.";
    private static final Set<StoreKind> SERVED = probe();

    private SluiceCoverage() {
    }

    static boolean serves(final StoreKind kind) {
        return SERVED.contains(kind);
    }

    /** The test's name suffix: on Sluice's stores, partly, or not at all. */
    static String label(final Set<StoreKind> storeKinds) {
        // Suppression buffers come from no supplier: always Kafka Streams', never a fallback.
        final Set<StoreKind> kinds = EnumSet.copyOf(storeKinds);
        final String buffer = kinds.remove(StoreKind.SUPPRESSION_BUFFER) ? " + Kafka Streams' suppression buffer" : "";
        return supplierLabel(kinds) + buffer;
    }

    private static String supplierLabel(final Set<StoreKind> kinds) {
        final Set<StoreKind> fallback = kinds.stream().filter(kind -> !serves(kind)).collect(Collectors.toCollection(() -> EnumSet.noneOf(StoreKind.class)));
        if (fallback.isEmpty()) {
            return "[Sluice stores: " + kinds + "]";
        }
        if (fallback.size() == kinds.size()) {
            return "[FALLBACK to Kafka Streams stores " + kinds + ": not a Sluice proof]";
        }
        final Set<StoreKind> served = EnumSet.copyOf(kinds);
        served.removeAll(fallback);
        return "[Sluice stores: " + served + "; FALLBACK to Kafka Streams stores: " + fallback + "]";
    }

    /** Whether the bytes store at the bottom of {@code store}'s layers is one of Sluice's. */
    static boolean isSluiceStore(final StateStore store) {
        return innermost(store).getClass().getName().startsWith(SLUICE_PACKAGE);
    }

    /**
     * The bytes store a supplier made, below Kafka Streams' metered, caching and change-logging layers
     * and below the adapters Kafka Streams 4.4 puts between a store format and the one a DSL operator
     * wants (for example {@code TimestampedToHeadersStoreAdapter}). The adapters expose no accessor,
     * so their one store field is read reflectively. Sluice's time-ordered window store shows itself to
     * Kafka Streams as Kafka Streams' own class; below it is the Sluice store it presents.
     */
    static StateStore innermost(final StateStore store) {
        StateStore inner = store;
        while (true) {
            if (inner instanceof SluiceTimeOrderedWindowStore presented) {
                return presented.sluiceStore();
            } else if (inner instanceof WrappedStateStore<?, ?, ?> wrapped) {
                inner = wrapped.wrapped();
            } else if (isFormatAdapter(inner)) {
                inner = adapted(inner);
            } else {
                return inner;
            }
        }
    }

    private static boolean isFormatAdapter(final StateStore store) {
        final String name = store.getClass().getName();
        return name.startsWith(KAFKA_STREAMS_STORES_PACKAGE) && name.endsWith("Adapter");
    }

    private static StateStore adapted(final StateStore adapter) {
        for (final Field field : adapter.getClass().getDeclaredFields()) {
            if (StateStore.class.isAssignableFrom(field.getType()) && !Modifier.isStatic(field.getModifiers())) {
                try {
                    field.setAccessible(true);
                    return (StateStore) field.get(adapter);
                } catch (final IllegalAccessException e) {
                    throw new IllegalStateException("Cannot see below " + adapter.getClass().getName(), e);
                }
            }
        }
        throw new IllegalStateException(adapter.getClass().getName() + " adapts no store that this suite can find");
    }

    /**
     * Sluice's versioned store supplier, once {@link SluiceStores} has one. Looked up by name so that
     * this suite picks it up when it lands without a change here.
     */
    static Optional<VersionedBytesStoreSupplier> versionedStore(final String name, final Duration historyRetention) {
        final Method factory;
        try {
            factory = SluiceStores.class.getMethod("persistentVersionedKeyValueStore", String.class, Duration.class);
        } catch (final NoSuchMethodException absent) {
            return Optional.empty();
        }
        try {
            return Optional.of((VersionedBytesStoreSupplier) factory.invoke(null, name, historyRetention));
        } catch (final IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("SluiceStores." + factory.getName() + " failed", e);
        }
    }

    private static Set<StoreKind> probe() {
        final SluiceDslStoreSuppliers dsl = new SluiceDslStoreSuppliers();
        final Set<StoreKind> served = EnumSet.noneOf(StoreKind.class);
        if (isSluiceClass(dsl.keyValueStore(new DslKeyValueParams("probe", DslStoreFormat.TIMESTAMPED)))) {
            served.add(StoreKind.KEY_VALUE);
        }
        if (isSluiceClass(dsl.windowStore(new DslWindowParams("probe", Duration.ofDays(1), Duration.ofMinutes(1), false,
                EmitStrategy.onWindowUpdate(), false, DslStoreFormat.TIMESTAMPED)))) {
            served.add(StoreKind.WINDOW);
        }
        if (isSluiceClass(dsl.sessionStore(new DslSessionParams("probe", Duration.ofDays(1), EmitStrategy.onWindowUpdate(),
                DslStoreFormat.TIMESTAMPED)))) {
            served.add(StoreKind.SESSION);
        }
        if (versionedStore("probe", Duration.ofMinutes(1)).map(SluiceCoverage::isSluiceClass).orElse(false)) {
            served.add(StoreKind.VERSIONED);
        }
        return served;
    }

    private static boolean isSluiceClass(final Object supplier) {
        return supplier.getClass().getName().startsWith(SLUICE_PACKAGE);
    }
}
