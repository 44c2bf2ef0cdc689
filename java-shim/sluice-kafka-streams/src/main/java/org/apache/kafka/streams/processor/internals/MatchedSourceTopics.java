package org.apache.kafka.streams.processor.internals;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * Gives a topology the topics its pattern sources match, as Kafka Streams' consumer does from the metadata it
 * fetches: the topology then builds its sub-topologies and stores with those topics; and the pattern Kafka
 * Streams' consumer subscribes with. In this package because Kafka Streams keeps the methods to itself.
 */
public final class MatchedSourceTopics {

    private MatchedSourceTopics() {
    }

    public static void update(final TopologyMetadata topologyMetadata, final Set<String> topics, final String logPrefix) {
        topologyMetadata.addSubscribedTopicsFromMetadata(topics, logPrefix);
    }

    /** The pattern a stream thread's consumer subscribes with, for a topology with pattern sources. */
    public static Pattern subscriptionPattern(final TopologyMetadata topologyMetadata) {
        return topologyMetadata.sourceTopicPattern();
    }
}
