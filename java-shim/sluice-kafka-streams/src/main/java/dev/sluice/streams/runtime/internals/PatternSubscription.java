package dev.sluice.streams.runtime.internals;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.internals.MatchedSourceTopics;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;

/**
 * The topics the topology's pattern sources ({@code StreamsBuilder#stream(Pattern)}) match. Kafka Streams'
 * consumer subscribes with the patterns and finds the matching topics in the metadata it fetches every
 * {@code metadata.max.age.ms}; the engine's consumers subscribe to topic names, so the cluster's topics are
 * matched here, when the engine starts and as often after, and each change is given to the topology and then
 * to the engine, whose threads subscribe to the new topics and rebalance.
 */
final class PatternSubscription {

    private final TopologyMetadata topologyMetadata;
    private final List<Pattern> patterns;
    private final Supplier<Set<String>> clusterTopics;
    private final Time time;
    private final long intervalMs;
    private final String logPrefix;
    private Set<String> matched = Set.of();
    private long matchedAtMs;

    private PatternSubscription(final TopologyMetadata topologyMetadata, final List<Pattern> patterns,
                                final Supplier<Set<String>> clusterTopics, final Time time, final long intervalMs,
                                final String logPrefix) {
        this.topologyMetadata = topologyMetadata;
        this.patterns = patterns;
        this.clusterTopics = clusterTopics;
        this.time = time;
        this.intervalMs = intervalMs;
        this.logPrefix = logPrefix;
    }

    /**
     * The subscription of a topology with pattern sources, which looks for the matching topics among those
     * {@code clusterTopics} lists; null for a topology without.
     */
    static PatternSubscription of(final TopologyMetadata topologyMetadata, final StreamsConfig config, final Time time,
                                  final Supplier<Set<String>> clusterTopics) {
        if (!topologyMetadata.usesPatternSubscription()) {
            return null;
        }
        final List<Pattern> patterns = sourcePatterns(topologyMetadata);
        final Object maxAge = config.getMainConsumerConfigs("", "", 0).get(ConsumerConfig.METADATA_MAX_AGE_CONFIG);
        final long intervalMs = maxAge == null ? 5 * 60 * 1000L : Long.parseLong(String.valueOf(maxAge));
        final String logPrefix = "stream-client [" + config.getString(StreamsConfig.CLIENT_ID_CONFIG) + "] ";
        final PatternSubscription subscription =
            new PatternSubscription(topologyMetadata, patterns, clusterTopics, time, intervalMs, logPrefix);
        subscription.match();
        return subscription;
    }

    /** The patterns of the topology's pattern sources; empty for a topology without. */
    static List<Pattern> sourcePatterns(final TopologyMetadata topologyMetadata) {
        if (!topologyMetadata.usesPatternSubscription()) {
            return List.of();
        }
        return topologyMetadata.lookupBuilderForNamedTopology(null).allSourcePatternStrings()
            .stream().map(Pattern::compile).toList();
    }

    /** The topics matched last. */
    synchronized Set<String> matched() {
        return matched;
    }

    /** Once {@code metadata.max.age.ms} passed since the last look, looks again; true when the matched topics changed. */
    synchronized boolean refresh() {
        if (time.milliseconds() - matchedAtMs < intervalMs) {
            return false;
        }
        final Set<String> before = matched;
        match();
        return !matched.equals(before);
    }

    private void match() {
        final Set<String> found = new TreeSet<>();
        for (final String topic : clusterTopics.get()) {
            if (patterns.stream().anyMatch(pattern -> pattern.matcher(topic).matches())) {
                found.add(topic);
            }
        }
        matchedAtMs = time.milliseconds();
        if (!found.equals(matched)) {
            matched = Set.copyOf(found);
            MatchedSourceTopics.update(topologyMetadata, matched, logPrefix);
        }
    }
}
