package dev.sluice.streams.state.internals;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the runtime will commit Sluice's stores while their task runs, read from the application
 * config the way Kafka Streams' own stores read it when they are initialised.
 *
 * <p>Kafka Streams 4.4's runtime commits stores at every commit under at-least-once, but under
 * exactly-once only when {@code enable.transactional.statestores} is true; otherwise it commits them
 * only when a task closes. A store that held its writes back until a commit would then hold them
 * for the life of the task, so in that configuration Sluice's stores run non-transactionally, as Kafka
 * Streams' own do there.
 */
final class TransactionalStoresSetting {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionalStoresSetting.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private TransactionalStoresSetting() {
    }

    /** True when commits will reach the stores; false (with one warning per JVM) when they will not. */
    static boolean committedWhileRunning(final Map<String, Object> appConfigs) {
        final boolean exactlyOnce = StreamsConfig.EXACTLY_ONCE_V2.equals(
            String.valueOf(appConfigs.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)));
        final Object flag = appConfigs.get(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG);
        final boolean transactionalFlag = flag != null && Boolean.parseBoolean(String.valueOf(flag));
        if (!exactlyOnce || transactionalFlag) {
            return true;
        }
        if (WARNED.compareAndSet(false, true)) {
            LOG.warn("Kafka Streams' runtime commits state stores under {} only when {}=true, so Sluice's stores run "
                    + "non-transactionally, like Kafka Streams' own: each write is durable and visible to READ_COMMITTED "
                    + "at once, and a crash wipes the task's state. Set {}=true to make them transactional.",
                StreamsConfig.EXACTLY_ONCE_V2, StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG,
                StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG);
        }
        return false;
    }
}
