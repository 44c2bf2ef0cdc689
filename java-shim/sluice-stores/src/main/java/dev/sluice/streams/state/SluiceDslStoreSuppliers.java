package dev.sluice.streams.state;

import dev.sluice.streams.state.internals.KafkaStreamsStoreSuppliers;
import dev.sluice.streams.state.internals.SluiceSessionBytesStoreSupplier;
import dev.sluice.streams.state.internals.SluiceWindowBytesStoreSupplier;
import org.apache.kafka.streams.DslStoreFormat;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.DslSessionParams;
import org.apache.kafka.streams.state.DslStoreSuppliers;
import org.apache.kafka.streams.state.DslWindowParams;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;

/**
 * The stores the DSL uses, served by Sluice: set {@code dsl.store.suppliers.class} to this class (or to
 * {@link InMemory} for in-memory stores). It works in Kafka Streams' own runtime as well as in Sluice's.
 *
 * <p>Served by Sluice's persistent transactional stores: key-value, window and session stores, in the
 * value layout the DSL asks for, headers-aware ones included under {@code dsl.store.format=headers}
 * (window stores including the duplicate-retaining stores of stream-stream joins). In Kafka Streams' own
 * runtime under exactly-once they are transactional only with {@code enable.transactional.statestores=true}
 * (see {@link SluiceStores}).
 *
 * <p>Emit-final windowed and session aggregations ({@link EmitStrategy#onWindowClose()}) get Sluice's
 * time-ordered window and session stores, as Kafka Streams gives them its own (with a key index for sliding
 * windows, as Kafka Streams keeps one), headers-aware ones included. The time-ordered window store presents
 * itself as Kafka Streams' {@code RocksDBTimeOrderedWindowStore} ({@code SluiceTimeOrderedWindowStore}), which
 * is how Kafka Streams' builders know to put their time-ordered caching layer over it.
 *
 * <p>In Sluice's drop-in artifact this class is also what {@link BuiltInDslStoreSuppliers} serves, so it
 * builds Kafka Streams' stores from their supplier classes ({@link KafkaStreamsStoreSuppliers}), never
 * through {@link BuiltInDslStoreSuppliers}.
 */
public class SluiceDslStoreSuppliers implements DslStoreSuppliers {

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
        final DslStoreFormat format = windowFormat(params);
        if (emitsOnWindowClose(params.emitStrategy())) {
            return SluiceWindowBytesStoreSupplier.persistentTimeOrdered(params.name(), params.retentionPeriod(),
                params.windowSize(), params.retainDuplicates(), params.isSlidingWindow(),
                format == DslStoreFormat.HEADERS);
        }
        switch (format) {
            case HEADERS:
                return SluiceStores.persistentTimestampedWindowStoreWithHeaders(params.name(), params.retentionPeriod(),
                    params.windowSize(), params.retainDuplicates());
            case TIMESTAMPED:
                return SluiceStores.persistentTimestampedWindowStore(params.name(), params.retentionPeriod(),
                    params.windowSize(), params.retainDuplicates());
            case PLAIN:
                return SluiceStores.persistentWindowStore(params.name(), params.retentionPeriod(), params.windowSize(),
                    params.retainDuplicates());
            default:
                throw new IllegalArgumentException("Unsupported DSL store format " + format);
        }
    }

    @Override
    public SessionBytesStoreSupplier sessionStore(final DslSessionParams params) {
        final boolean headersAware = params.storeFormat() == DslStoreFormat.HEADERS;
        if (emitsOnWindowClose(params.emitStrategy())) {
            return headersAware
                ? SluiceSessionBytesStoreSupplier.persistentTimeOrderedWithHeaders(params.name(), params.retentionPeriod())
                : SluiceSessionBytesStoreSupplier.persistentTimeOrdered(params.name(), params.retentionPeriod());
        }
        return headersAware
            ? SluiceStores.persistentSessionStoreWithHeaders(params.name(), params.retentionPeriod())
            : SluiceStores.persistentSessionStore(params.name(), params.retentionPeriod());
    }

    static boolean emitsOnWindowClose(final EmitStrategy emitStrategy) {
        return emitStrategy != null && emitStrategy.type() == EmitStrategy.StrategyType.ON_WINDOW_CLOSE;
    }

    /** The value layout the DSL asks for; parameters built without a format say it with {@code isTimestamped}. */
    private static DslStoreFormat windowFormat(final DslWindowParams params) {
        if (params.dslStoreFormat() != null) {
            return params.dslStoreFormat();
        }
        return params.isTimestamped() ? DslStoreFormat.TIMESTAMPED : DslStoreFormat.PLAIN;
    }

    /**
     * Sluice's in-memory stores for the DSL, parallel to {@link BuiltInDslStoreSuppliers.InMemoryDslStoreSuppliers}
     * and, like it, plain key-value, window and session stores whatever {@code dsl.store.format} says (Kafka
     * Streams' builders adapt them). Emit-final window and session stores stay Kafka Streams' in-memory
     * stores, whose time-first iteration those aggregations rely on.
     */
    public static class InMemory implements DslStoreSuppliers {

        @Override
        public KeyValueBytesStoreSupplier keyValueStore(final DslKeyValueParams params) {
            return SluiceStores.inMemoryKeyValueStore(params.name());
        }

        @Override
        public WindowBytesStoreSupplier windowStore(final DslWindowParams params) {
            if (emitsOnWindowClose(params.emitStrategy())) {
                return KafkaStreamsStoreSuppliers.inMemoryWindowStore(params.name(), params.retentionPeriod(),
                    params.windowSize(), params.retainDuplicates());
            }
            return SluiceStores.inMemoryWindowStore(params.name(), params.retentionPeriod(), params.windowSize(),
                params.retainDuplicates());
        }

        @Override
        public SessionBytesStoreSupplier sessionStore(final DslSessionParams params) {
            if (emitsOnWindowClose(params.emitStrategy())) {
                return KafkaStreamsStoreSuppliers.inMemorySessionStore(params.name(), params.retentionPeriod());
            }
            return SluiceStores.inMemorySessionStore(params.name(), params.retentionPeriod());
        }
    }
}
