package org.apache.kafka.streams.state;

import dev.sluice.streams.state.SluiceDslStoreSuppliers;

/**
 * Sluice's version of Kafka Streams' built-in DSL store suppliers: the default of
 * {@code dsl.store.suppliers.class}, and what {@code default.dsl.store} and
 * {@code Materialized.withStoreType} map to. Both serve Sluice's stores; the store kinds Sluice has no
 * store for stay Kafka Streams' own, as {@link SluiceDslStoreSuppliers} describes.
 */
public class BuiltInDslStoreSuppliers {

    public static final DslStoreSuppliers ROCKS_DB = new RocksDBDslStoreSuppliers();
    public static final DslStoreSuppliers IN_MEMORY = new InMemoryDslStoreSuppliers();

    /** Persistent DSL stores: Sluice's RocksDB-backed transactional stores. */
    public static class RocksDBDslStoreSuppliers extends SluiceDslStoreSuppliers {
    }

    /** In-memory DSL stores: Sluice's in-memory transactional stores. */
    public static class InMemoryDslStoreSuppliers extends SluiceDslStoreSuppliers.InMemory {
    }
}
