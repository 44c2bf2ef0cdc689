package dev.sluice.streams.runtime.internals;

import java.util.Collection;
import java.util.TreeSet;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.processor.internals.ProcessorStateManager;
import org.apache.kafka.streams.processor.internals.StoreFactory;

/** Which topic a store's changelog is, as Kafka Streams resolves it when it builds the store. */
public final class StoreChangelogs {

    private StoreChangelogs() {
    }

    /**
     * The changelog of the store {@code factory} makes: one of {@code sourceTopics}, the topics its sub-topology
     * reads, that the store reuses (a source table, a read-only state store, logged or not), else the store's own
     * changelog topic if it is logged; null for none.
     */
    public static String changelogTopic(final InternalTopologyBuilder builder, final String applicationId,
                                        final Collection<String> sourceTopics, final StoreFactory factory) {
        for (final String topic : new TreeSet<>(sourceTopics)) {
            if (factory.storeName().equals(builder.storeForChangelogTopic(topic))) {
                return topic;
            }
        }
        return factory.loggingEnabled()
            ? ProcessorStateManager.storeChangelogTopic(applicationId, factory.storeName(), null)
            : null;
    }
}
