package org.apache.kafka.streams.processor.internals;

import java.util.Set;

/**
 * Gives a topology the topics its pattern sources match, as Kafka Streams' consumer does from the metadata it
 * fetches: the topology then builds its sub-topologies and stores with those topics. In this package because
 * Kafka Streams keeps the method to itself.
 */
public final class MatchedSourceTopics {

    private MatchedSourceTopics() {
    }

    public static void update(final TopologyMetadata topologyMetadata, final Set<String> topics, final String logPrefix) {
        topologyMetadata.addSubscribedTopicsFromMetadata(topics, logPrefix);
    }
}
