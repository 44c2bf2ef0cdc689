package dev.sluice.compat.routing;

import java.util.Map;
import java.util.function.Function;
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
    private final DslStoreSuppliers apache;
    private Map<String, ?> configs = Map.of();
    // Created on first use, not here: Sluice's suppliers may construct Kafka Streams' built-in
    // suppliers, which are this class again.
    private DslStoreSuppliers sluice;

    protected RoutedDslStoreSuppliers(final StoreRouting.Request request) {
        this.request = request;
        this.apache = ApacheBuiltInSuppliers.create(request);
    }

    @Override
    public void configure(final Map<String, ?> configs) {
        this.configs = configs;
        apache.configure(configs);
        if (sluice != null) {
            sluice.configure(configs);
        }
    }

    @Override
    public KeyValueBytesStoreSupplier keyValueStore(final DslKeyValueParams params) {
        return serve("key-value " + params.dslStoreFormat(), suppliers -> suppliers.keyValueStore(params));
    }

    @Override
    public WindowBytesStoreSupplier windowStore(final DslWindowParams params) {
        final String kind = "window " + params.dslStoreFormat() + ", emit " + params.emitStrategy().type();
        return serve(kind, suppliers -> suppliers.windowStore(params));
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(final DslSessionParams params) {
        final String kind = "session " + params.storeFormat() + ", emit " + params.emitStrategy().type();
        return serve(kind, suppliers -> suppliers.sessionStore(params));
    }

    private <S> S serve(final String kind, final Function<DslStoreSuppliers, S> ask) {
        if (StoreRouting.insideSluiceSuppliers()) {
            return StoreRouting.record(request, kind, ask.apply(apache));
        }
        return StoreRouting.record(request, kind, StoreRouting.withinSluiceSuppliers(() -> ask.apply(sluice())));
    }

    private DslStoreSuppliers sluice() {
        if (sluice == null) {
            sluice = StoreRouting.newSluiceSuppliers(request);
            sluice.configure(configs);
        }
        return sluice;
    }
}
