package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.junit.jupiter.api.Test;

class PatternSubscriptionTest {

    private final TaskRunnerFixture.ManualTime time = new TaskRunnerFixture.ManualTime();
    private final Set<String> clusterTopics = new TreeSet<>(Set.of("in-1", "other"));

    @Test
    void matchesTheClusterTopicsAtOnceAndAgainOnceTheMetadataAgePassed() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(Pattern.compile("in-\\d")).to("out");
        final TopologyMetadata metadata = metadata(builder.build());
        final PatternSubscription subscription =
            PatternSubscription.of(metadata, config(), time, () -> Set.copyOf(clusterTopics));

        assertEquals(Set.of("in-1"), subscription.matched());
        assertEquals(Set.of("in-1"), sourceTopics(metadata), "the topology reads what matched");

        clusterTopics.add("in-2");
        time.advance(999);
        assertFalse(subscription.refresh(), "not looked at before metadata.max.age.ms");
        assertEquals(Set.of("in-1"), subscription.matched());
        time.advance(1);
        assertTrue(subscription.refresh());
        assertEquals(Set.of("in-1", "in-2"), subscription.matched());
        assertEquals(Set.of("in-1", "in-2"), sourceTopics(metadata));

        clusterTopics.remove("in-1");
        time.advance(1000);
        assertTrue(subscription.refresh());
        assertEquals(Set.of("in-2"), subscription.matched());
        time.advance(1000);
        assertFalse(subscription.refresh(), "nothing changed");
    }

    @Test
    void aTopologyWithoutPatternsHasNone() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("in").to("out");
        assertNull(PatternSubscription.of(metadata(builder.build()), config(), time, () -> clusterTopics));
    }

    private static Set<String> sourceTopics(final TopologyMetadata metadata) {
        final Set<String> topics = new TreeSet<>();
        metadata.lookupBuilderForNamedTopology(null).subtopologyToTopicsInfo().values()
            .forEach(info -> topics.addAll(info.sourceTopics));
        return topics;
    }

    private static StreamsConfig config() {
        final Properties properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, "app");
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        properties.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 1000);
        return new StreamsConfig(properties);
    }

    private static TopologyMetadata metadata(final Topology topology) {
        final TopologyMetadata metadata = new TopologyMetadata(TaskRunnerFixture.internalBuilder(topology), config());
        metadata.buildAndRewriteTopology();
        return metadata;
    }
}
