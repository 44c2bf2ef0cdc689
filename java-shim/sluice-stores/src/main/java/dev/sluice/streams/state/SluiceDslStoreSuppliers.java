package dev.sluice.streams.state;

import java.util.Map;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * The stores the DSL uses, served by Sluice: set {@code dsl.store.suppliers.class} to this class. It
 * works in Kafka Streams' own runtime as well as in Sluice's.
 *
 * <p>Key-value stores (plain, timestamped and headers-aware, as {@code dsl.store.format} asks) are
 * Sluice's persistent transactional stores. Window and session stores are, for now, Kafka Streams'
 * own RocksDB stores ({@link BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers}), until Sluice's
 * window and session stores are available through this class.
 */
public class SluiceDslStoreSuppliers implements DslStoreSuppliers {

    private final DslStoreSuppliers windowAndSessionStores = new BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers();

    @Override
    public void configure(final Map<String, ?> configs) {
        windowAndSessionStores.configure(configs);
    }

    @Override
    public KeyValueBytesStoreSupplier keyValueStore(final DslKeyValueParams params) {
        switch (params.dslStoreFormat()) {
            case HEADERS:
                return SluiceStores.persistentTimestampedKeyValueStoreWithHeaders(params.name());
            case TIMESTAMPED:
                return SluiceStores.persistentTimestampedKeyValueStore(params.name());
            case PLAIN:
                return SluiceStores.persistentKeyValueStore(params.name());
            default:
                throw new IllegalArgumentException("Unsupported DSL store format " + params.dslStoreFormat());
        }
    }

    @Override
    public WindowBytesStoreSupplier windowStore(final DslWindowParams params) {
        return windowAndSessionStores.windowStore(params);
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(final DslSessionParams params) {
        return windowAndSessionStores.sessionStore(params);
    }
}
