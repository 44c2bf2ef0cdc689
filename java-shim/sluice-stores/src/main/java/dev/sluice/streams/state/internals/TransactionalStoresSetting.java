package dev.sluice.streams.state.internals;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sluice stores are always transactional, whatever {@code enable.transactional.statestores} says.
 * Kafka Streams' stores read the key from the application config when they are initialised; Sluice's
 * do the same, and say once per JVM that a false value does not turn buffering off.
 */
final class TransactionalStoresSetting {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionalStoresSetting.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private TransactionalStoresSetting() {
    }

    static void warnIfDisabled(final Map<String, Object> appConfigs) {
        final Object value = appConfigs.get(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG);
        final boolean enabled = value != null && Boolean.parseBoolean(String.valueOf(value));
        if (!enabled && WARNED.compareAndSet(false, true)) {
            LOG.warn("{} is false, but Sluice state stores are always transactional: they buffer each commit's "
                + "writes and release them only when the commit succeeds.", StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG);
        }
    }
}
