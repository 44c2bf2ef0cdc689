package dev.sluice.compat.routing;

import java.util.Map;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * DSL store suppliers that serve persistent and in-memory stores from Sluice's matching suppliers,
 * counting who served what in {@link StoreRouting}.
 */
public class RoutedDslStoreSuppliers implements DslStoreSuppliers {

    private final StoreRouting.Request request;
    private final DslStoreSuppliers sluice;

    protected RoutedDslStoreSuppliers(final StoreRouting.Request request) {
        this.request = request;
        this.sluice = StoreRouting.newSluiceSuppliers(request);
    }

    @Override
    public void configure(final Map<String, ?> configs) {
        sluice.configure(configs);
    }

    @Override
    public KeyValueBytesStoreSupplier keyValueStore(final DslKeyValueParams params) {
        return StoreRouting.record(request, "key-value " + params.dslStoreFormat(), sluice.keyValueStore(params));
    }

    @Override
    public WindowBytesStoreSupplier windowStore(final DslWindowParams params) {
        return StoreRouting.record(request, "window " + params.dslStoreFormat() + ", emit " + params.emitStrategy().type(),
            sluice.windowStore(params));
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(final DslSessionParams params) {
        return StoreRouting.record(request, "session " + params.storeFormat() + ", emit " + params.emitStrategy().type(),
            sluice.sessionStore(params));
    }
}
