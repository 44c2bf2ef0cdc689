package dev.sluice.streams.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.InvalidStateStorePartitionException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.QueryableStoreType;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.SessionStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.TimestampedKeyValueStoreWithHeaders;
import org.apache.kafka.streams.state.TimestampedWindowStore;
import org.apache.kafka.streams.state.TimestampedWindowStoreWithHeaders;
import org.apache.kafka.streams.state.internals.GenericReadOnlyKeyValueStoreFacade;
import org.apache.kafka.streams.state.internals.GenericReadOnlyWindowStoreFacade;
import org.apache.kafka.streams.state.internals.ReadOnlySessionStoreFacade;
import org.apache.kafka.streams.state.internals.StateStoreProvider;
import org.apache.kafka.streams.state.internals.ValueConverters;

/**
 * Interactive queries (IQv1) over the stores of the tasks this instance runs. Kafka Streams'
 * {@link QueryableStoreType}s build their composite read-only stores over a
 * {@link StateStoreProvider}; this one hands them the outermost (metered) store of each local
 * task, as Kafka Streams' own per-thread provider does, so typed facades, isolation
 * ({@link #defaultIsolationLevel()}, applied by the composite stores through {@code readOnly})
 * and iterators are Kafka Streams' own.
 *
 * <p>The stores are looked up again on every call, so a store handed to a user keeps working
 * across rebalances as far as the tasks it reads stay on this instance.
 */
public final class LocalStateStoreProvider implements StateStoreProvider {

    /** Partition -> outermost store of each running local task, for one store name. */
    @FunctionalInterface
    public interface LocalStores {
        Map<Integer, StateStore> byPartition(String storeName);
    }

    private final LocalStores localStores;
    private final StoreQueryParameters<?> parameters;
    private final IsolationLevel defaultIsolationLevel;

    public LocalStateStoreProvider(final LocalStores localStores,
                                   final StoreQueryParameters<?> parameters,
                                   final IsolationLevel defaultIsolationLevel) {
        this.localStores = localStores;
        this.parameters = parameters;
        this.defaultIsolationLevel = defaultIsolationLevel;
    }

    @Override
    public IsolationLevel defaultIsolationLevel() {
        return defaultIsolationLevel;
    }

    @Override
    public <T> List<T> stores(final String storeName, final QueryableStoreType<T> queryableStoreType) {
        final Map<Integer, StateStore> stores = localStores.byPartition(storeName);
        final Integer partition = parameters.partition();
        final List<T> found = new ArrayList<>();
        for (final Map.Entry<Integer, StateStore> entry : stores.entrySet()) {
            if (partition == null || partition.equals(entry.getKey())) {
                found.add(validateAndCast(entry.getValue(), queryableStoreType, storeName, entry.getKey()));
            }
        }
        if (found.isEmpty()) {
            if (partition != null) {
                throw new InvalidStateStorePartitionException(String.format(
                    "The specified partition %d for store %s does not exist.", partition, storeName));
            }
            throw new InvalidStateStoreException(
                "The state store, " + storeName + ", may have migrated to another instance.");
        }
        return found;
    }

    /**
     * Kafka Streams' converting facade, which also passes {@code readOnly(IsolationLevel)} on to the
     * store it converts: the composite stores apply the isolation level through {@code readOnly},
     * and Kafka Streams 4.4.0's facade answers it with itself, so a plain key-value query over a
     * timestamped store would read uncommitted writes whatever the level.
     */
    private static <K, InV, OutV> ReadOnlyKeyValueStore<K, OutV> keyValueFacade(
        final ReadOnlyKeyValueStore<K, InV> inner, final Function<InV, OutV> converter) {
        return new GenericReadOnlyKeyValueStoreFacade<>(inner, converter) {
            @Override
            public ReadOnlyKeyValueStore<K, OutV> readOnly(final IsolationLevel isolationLevel) {
                return keyValueFacade(inner.readOnly(isolationLevel), converter);
            }
        };
    }

    /** As {@link #keyValueFacade}, for window stores. */
    private static <K, InV, OutV> ReadOnlyWindowStore<K, OutV> windowFacade(
        final ReadOnlyWindowStore<K, InV> inner, final Function<InV, OutV> converter) {
        return new GenericReadOnlyWindowStoreFacade<>(inner, converter) {
            @Override
            public ReadOnlyWindowStore<K, OutV> readOnly(final IsolationLevel isolationLevel) {
                return windowFacade(inner.readOnly(isolationLevel), converter);
            }
        };
    }

    /**
     * The store as the query type sees it: a plain key-value or window query over a timestamped
     * (or headers-aware) store reads through Kafka Streams' converting facades.
     */
    @SuppressWarnings("unchecked")
    private static <T> T validateAndCast(final StateStore store,
                                         final QueryableStoreType<T> queryableStoreType,
                                         final String storeName,
                                         final int partition) {
        if (!queryableStoreType.accepts(store)) {
            throw new InvalidStateStoreException("Cannot get state store " + storeName
                + " because the queryable store type [" + queryableStoreType.getClass()
                + "] does not accept the actual store type [" + store.getClass() + "].");
        }
        if (!store.isOpen()) {
            throw new InvalidStateStoreException("Cannot get state store " + storeName + " for partition "
                + partition + " because the store is not open. The state store may have migrated to another instance.");
        }
        if (store instanceof TimestampedKeyValueStoreWithHeaders) {
            final TimestampedKeyValueStoreWithHeaders<Object, Object> headersStore =
                (TimestampedKeyValueStoreWithHeaders<Object, Object>) store;
            if (queryableStoreType instanceof QueryableStoreTypes.KeyValueStoreType) {
                return (T) keyValueFacade(headersStore, ValueConverters.extractValueFromHeaders());
            }
            if (queryableStoreType instanceof QueryableStoreTypes.TimestampedKeyValueStoreType) {
                return (T) keyValueFacade(headersStore, ValueConverters.extractValueAndTimestampFromHeaders());
            }
        } else if (store instanceof TimestampedKeyValueStore
            && queryableStoreType instanceof QueryableStoreTypes.KeyValueStoreType) {
            return (T) keyValueFacade((TimestampedKeyValueStore<Object, Object>) store, ValueConverters.extractValue());
        } else if (store instanceof TimestampedWindowStoreWithHeaders) {
            final TimestampedWindowStoreWithHeaders<Object, Object> headersStore =
                (TimestampedWindowStoreWithHeaders<Object, Object>) store;
            if (queryableStoreType instanceof QueryableStoreTypes.WindowStoreType) {
                return (T) windowFacade(headersStore, ValueConverters.extractValueFromHeaders());
            }
            if (queryableStoreType instanceof QueryableStoreTypes.TimestampedWindowStoreType) {
                return (T) windowFacade(headersStore, ValueConverters.extractValueAndTimestampFromHeaders());
            }
        } else if (store instanceof TimestampedWindowStore
            && queryableStoreType instanceof QueryableStoreTypes.WindowStoreType) {
            return (T) windowFacade((TimestampedWindowStore<Object, Object>) store, ValueConverters.extractValue());
        } else if (store instanceof SessionStoreWithHeaders
            && queryableStoreType instanceof QueryableStoreTypes.SessionStoreType) {
            // The facade's constructor is protected: an (empty) subclass is how it is meant to be built.
            return (T) new ReadOnlySessionStoreFacade<>((SessionStoreWithHeaders<Object, Object>) store) { };
        }
        return (T) store;
    }
}
