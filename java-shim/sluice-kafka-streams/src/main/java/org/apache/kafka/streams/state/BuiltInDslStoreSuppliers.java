package org.apache.kafka.streams.state;

import dev.sluice.streams.runtime.internals.RuntimeChoice;
import dev.sluice.streams.state.SluiceDslStoreSuppliers;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Sluice's version of Kafka Streams' built-in DSL store suppliers: the default of
 * {@code dsl.store.suppliers.class}, and what {@code default.dsl.store} and
 * {@code Materialized.withStoreType} map to. Both serve Sluice's stores (the store kinds Sluice has no
 * store for stay Kafka Streams' own, as {@link SluiceDslStoreSuppliers} describes), or Kafka Streams' own
 * where the JVM runs on Apache's runtime ({@link RuntimeChoice}).
 */
public class BuiltInDslStoreSuppliers {

    public static final DslStoreSuppliers ROCKS_DB = new RocksDBDslStoreSuppliers();
    public static final DslStoreSuppliers IN_MEMORY = new InMemoryDslStoreSuppliers();

    /** Persistent DSL stores: Sluice's RocksDB-backed transactional stores. */
    public static class RocksDBDslStoreSuppliers extends ChosenDslStoreSuppliers {
        public RocksDBDslStoreSuppliers() {
            super(SluiceDslStoreSuppliers::new, ApacheBuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers::new);
        }
    }

    /** In-memory DSL stores: Sluice's in-memory transactional stores. */
    public static class InMemoryDslStoreSuppliers extends ChosenDslStoreSuppliers {
        public InMemoryDslStoreSuppliers() {
            super(SluiceDslStoreSuppliers.InMemory::new, ApacheBuiltInDslStoreSuppliers.InMemoryDslStoreSuppliers::new);
        }
    }

    /**
     * The suppliers of the runtime this JVM runs on, chosen at first use rather than when made: these are made
     * as the class loads, and a malformed runtime choice must fail as a configuration error, not a class that
     * cannot load.
     */
    abstract static class ChosenDslStoreSuppliers implements DslStoreSuppliers {
        private final Supplier<DslStoreSuppliers> sluice;
        private final Supplier<DslStoreSuppliers> apache;
        private DslStoreSuppliers chosen;

        ChosenDslStoreSuppliers(final Supplier<DslStoreSuppliers> sluice, final Supplier<DslStoreSuppliers> apache) {
            this.sluice = sluice;
            this.apache = apache;
        }

        private synchronized DslStoreSuppliers chosen() {
            if (chosen == null) {
                chosen = RuntimeChoice.apacheRuntime() ? apache.get() : sluice.get();
            }
            return chosen;
        }

        @Override
        public void configure(final Map<String, ?> configs) {
            chosen().configure(configs);
        }

        @Override
        public KeyValueBytesStoreSupplier keyValueStore(final DslKeyValueParams params) {
            return chosen().keyValueStore(params);
        }

        @Override
        public WindowBytesStoreSupplier windowStore(final DslWindowParams params) {
            return chosen().windowStore(params);
        }

        @Override
        public SessionBytesStoreSupplier sessionStore(final DslSessionParams params) {
            return chosen().sessionStore(params);
        }
    }
}
