package org.apache.kafka.streams.state;

import dev.sluice.compat.routing.RoutedDslStoreSuppliers;
import dev.sluice.compat.routing.StoreRouting;

/**
 * Stand-in for Kafka Streams' class of the same name, for the compatibility suite's Sluice run only.
 *
 * <p>Kafka Streams' tests build their own {@code StreamsConfig}, so the suite cannot set
 * {@code dsl.store.suppliers.class} for them. Every DSL store they get without naming a supplier
 * comes from this class, though: it is the config's default and what {@code default.dsl.store} and
 * {@code Materialized.withStoreType} map to. Placed before kafka-streams on the class path, this
 * class routes those stores through {@link StoreRouting} without touching the tests.
 */
public class BuiltInDslStoreSuppliers {

    public static final DslStoreSuppliers ROCKS_DB = new RocksDBDslStoreSuppliers();
    public static final DslStoreSuppliers IN_MEMORY = new InMemoryDslStoreSuppliers();

    /** Persistent DSL stores: served by Sluice's DSL store suppliers. */
    public static class RocksDBDslStoreSuppliers extends RoutedDslStoreSuppliers {
        public RocksDBDslStoreSuppliers() {
            super(StoreRouting.Request.PERSISTENT);
        }
    }

    /** In-memory DSL stores: served by Sluice's in-memory DSL store suppliers. */
    public static class InMemoryDslStoreSuppliers extends RoutedDslStoreSuppliers {
        public InMemoryDslStoreSuppliers() {
            super(StoreRouting.Request.IN_MEMORY);
        }
    }
}
