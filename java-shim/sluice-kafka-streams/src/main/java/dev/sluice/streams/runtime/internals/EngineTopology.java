package dev.sluice.streams.runtime.internals;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.internals.InternalTopicConfig;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.processor.internals.ProcessorStateManager;
import org.apache.kafka.streams.processor.internals.ProcessorTopology;
import org.apache.kafka.streams.processor.internals.StoreFactory;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;

/**
 * The topology as Sluice's engine reads it (rust-core/src/engine/topology.rs), taken from Kafka Streams'
 * own {@link InternalTopologyBuilder} after it was rewritten with the application's config: per
 * sub-topology its user and repartition topics, its stores with their changelog topic configs, and the
 * co-partitioned topic groups, and the global stores with their topics. Repartition topics are named as
 * {@link org.apache.kafka.streams.Topology#describe()} shows them, without the {@code <application.id>-}
 * prefix, which the engine adds: most end in {@code -repartition}, a foreign-key join's in {@code -topic}. The task runners and
 * the global runner keep the stores.
 */
final class EngineTopology {

    private final String applicationId;
    private final Map<String, Object> description = new LinkedHashMap<>();

    private EngineTopology(final String applicationId) {
        this.applicationId = applicationId;
    }

    /**
     * The engine's description of {@code topologyMetadata}, which must have been built and rewritten
     * ({@link TopologyMetadata#buildAndRewriteTopology()}) with {@code config}; {@code matchedTopics} are the
     * topics its pattern sources matched last ({@link PatternSubscription}), already given to the topology.
     *
     * @throws UnsupportedOperationException for what Sluice's runtime does not run yet ({@link #checkRunnable})
     */
    static Map<String, Object> describe(final TopologyMetadata topologyMetadata, final StreamsConfig config,
                                        final Set<String> matchedTopics) {
        checkRunnable(topologyMetadata);
        final EngineTopology topology = new EngineTopology(config.getString(StreamsConfig.APPLICATION_ID_CONFIG));
        topology.describe(topologyMetadata.lookupBuilderForNamedTopology(null), topologyMetadata, config, matchedTopics);
        return topology.description;
    }

    /**
     * Rejects what Sluice's runtime does not run yet: named topologies.
     *
     * @throws UnsupportedOperationException naming what is not supported
     */
    static void checkRunnable(final TopologyMetadata topologyMetadata) {
        if (topologyMetadata.hasNamedTopologies()) {
            throw new UnsupportedOperationException("Sluice's runtime does not run named topologies");
        }
    }

    /**
     * Where each source topic's partitions without a committed offset start ({@link #resetStrategy}): by name,
     * {@code earliest}, {@code latest} or {@code none}, or {@code {"by_duration": milliseconds}}.
     */
    private static Map<String, Object> offsetResets(final TopologyMetadata topologyMetadata, final StreamsConfig config,
                                                    final Set<String> matchedTopics) {
        final Set<String> sourceTopics = new TreeSet<>(topologyMetadata.allFullSourceTopicNames());
        sourceTopics.addAll(matchedTopics);
        final Map<String, Object> resets = new TreeMap<>();
        for (final String topic : sourceTopics) {
            final AutoOffsetResetStrategy strategy = resetStrategy(topologyMetadata, config, topic);
            final String name = strategy.type().name().toLowerCase(Locale.ROOT);
            resets.put(topic, strategy.duration().<Object>map(duration -> Map.of(name, duration.toMillis())).orElse(name));
        }
        return resets;
    }

    /**
     * Where a partition of source topic {@code topic} without a committed offset starts, as in Kafka Streams:
     * its source's own reset policy ({@code Consumed.withOffsetResetPolicy}; repartition topics read from
     * their start), else the main consumer's {@code auto.offset.reset}.
     */
    static AutoOffsetResetStrategy resetStrategy(final TopologyMetadata topologyMetadata, final StreamsConfig config,
                                                 final String topic) {
        return topologyMetadata.offsetResetStrategy(topic).orElseGet(() -> AutoOffsetResetStrategy.fromString(
            (String) config.getMainConsumerConfigs("", "", 0).get(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG)));
    }

    /** {@link #describe} as the UTF-8 JSON the engine takes. */
    static byte[] json(final TopologyMetadata topologyMetadata, final StreamsConfig config, final Set<String> matchedTopics) {
        try {
            return new ObjectMapper().writeValueAsString(describe(topologyMetadata, config, matchedTopics))
                .getBytes(StandardCharsets.UTF_8);
        } catch (final JsonProcessingException e) {
            throw new IllegalStateException("Could not write the topology for the engine", e);
        }
    }

    private void describe(final InternalTopologyBuilder builder,
                          final TopologyMetadata topologyMetadata,
                          final StreamsConfig config,
                          final Set<String> matchedTopics) {
        final Map<TopologyMetadata.Subtopology, InternalTopologyBuilder.TopicsInfo> topicsInfo = builder.subtopologyToTopicsInfo();
        final Set<String> repartitionTopics = new HashSet<>();
        for (final InternalTopologyBuilder.TopicsInfo info : topicsInfo.values()) {
            repartitionTopics.addAll(info.repartitionSourceTopics.keySet());
        }
        final Map<String, String> topicConfigs = topicConfigs(config);
        final long windowChangelogAdditionalRetention =
            config.getLong(StreamsConfig.WINDOW_STORE_CHANGE_LOG_ADDITIONAL_RETENTION_MS_CONFIG);

        final List<Map<String, Object>> subtopologies = new ArrayList<>();
        final Set<Integer> ids = new TreeSet<>();
        final Set<Integer> withPatterns = new HashSet<>();
        for (final TopologyDescription.Subtopology subtopology : builder.describe().subtopologies()) {
            ids.add(subtopology.id());
            for (final TopologyDescription.Node node : subtopology.nodes()) {
                if (node instanceof TopologyDescription.Source && ((TopologyDescription.Source) node).topicPattern() != null) {
                    withPatterns.add(subtopology.id());
                }
            }
        }
        for (final int id : ids) {
            final InternalTopologyBuilder.TopicsInfo info = topicsInfo.get(new TopologyMetadata.Subtopology(id, null));
            if (info == null) {
                continue;
            }
            final Map<String, Object> subtopology = new LinkedHashMap<>();
            subtopology.put("id", id);
            final List<String> sourceTopics = userTopics(info.sourceTopics, repartitionTopics);
            subtopology.put("source_topics",
                sourceTopics.stream().filter(topic -> !matchedTopics.contains(topic)).toList());
            subtopology.put("has_patterns", withPatterns.contains(id));
            subtopology.put("matched_topics", sourceTopics.stream().filter(matchedTopics::contains).toList());
            final List<Map<String, Object>> repartitionSources = new ArrayList<>();
            for (final InternalTopicConfig repartition : new TreeMap<>(info.repartitionSourceTopics).values()) {
                final Map<String, Object> topic = new LinkedHashMap<>();
                topic.put("name", unprefixedRepartition(repartition.name()));
                topic.put("partitions", repartition.numberOfPartitions().orElse(null));
                topic.put("configs", new TreeMap<>(repartition.properties(topicConfigs, windowChangelogAdditionalRetention)));
                repartitionSources.add(topic);
            }
            subtopology.put("repartition_source_topics", repartitionSources);
            subtopology.put("sink_topics", userTopics(info.sinkTopics, repartitionTopics));
            final List<String> repartitionSinks = new ArrayList<>();
            for (final String sink : new TreeSet<>(info.sinkTopics)) {
                if (repartitionTopics.contains(sink)) {
                    repartitionSinks.add(unprefixedRepartition(sink));
                }
            }
            subtopology.put("repartition_sink_topics", repartitionSinks);
            subtopology.put("stores", stores(builder, config, id, info, topicConfigs, windowChangelogAdditionalRetention));
            subtopologies.add(subtopology);
        }
        description.put("subtopologies", subtopologies);

        final List<List<String>> copartitionGroups = new ArrayList<>();
        for (final Set<String> group : topologyMetadata.copartitionGroups()) {
            final List<String> names = new ArrayList<>();
            for (final String topic : new TreeSet<>(group)) {
                names.add(repartitionTopics.contains(topic) ? unprefixedRepartition(topic) : topic);
            }
            copartitionGroups.add(names);
        }
        description.put("copartition_groups", copartitionGroups);
        description.put("global_stores", globalStores(topologyMetadata));
        description.put("offset_resets", offsetResets(topologyMetadata, config, matchedTopics));
    }

    /** Each global store with the topic it is loaded from; the JVM's global runner keeps them. */
    private static List<Map<String, Object>> globalStores(final TopologyMetadata topologyMetadata) {
        final List<Map<String, Object>> stores = new ArrayList<>();
        if (!topologyMetadata.hasGlobalTopology()) {
            return stores;
        }
        final ProcessorTopology global = topologyMetadata.globalTaskTopology();
        for (final StateStore store : global.globalStateStores()) {
            final Map<String, Object> description = new LinkedHashMap<>();
            description.put("name", store.name());
            description.put("topic", global.storeToChangelogTopic().get(store.name()));
            description.put("persistent", store.persistent());
            stores.add(description);
        }
        return stores;
    }

    private List<Map<String, Object>> stores(final InternalTopologyBuilder builder,
                                             final StreamsConfig config,
                                             final int subtopologyId,
                                             final InternalTopologyBuilder.TopicsInfo info,
                                             final Map<String, String> topicConfigs,
                                             final long windowChangelogAdditionalRetention) {
        // From the stores' factories: building the subtopology would make an instance of each of its
        // processors, which the application's processor suppliers would see as an extra task.
        final Map<String, StoreFactory> factories = builder.stateStores();
        final List<Map<String, Object>> stores = new ArrayList<>();
        for (final String name : new TreeSet<>(builder.stateStoreNamesForSubtopology(subtopologyId))) {
            final StoreFactory factory = factories.get(name);
            // Configured as Kafka Streams configures a store's factory before each build; the store
            // itself (not opened) tells whether it is persistent.
            factory.configure(config);
            final StateStore store = factory.builder().build();
            final String changelog = StoreChangelogs.changelogTopic(builder, applicationId, info.sourceTopics, factory);
            final Map<String, Object> description = new LinkedHashMap<>();
            description.put("name", store.name());
            description.put("persistent", store.persistent());
            description.put("logged", changelog != null);
            final Map<String, String> changelogConfigs = new TreeMap<>();
            if (changelog != null
                    && !changelog.equals(ProcessorStateManager.storeChangelogTopic(applicationId, store.name(), null))) {
                // A source table reusing its topic (reuse.ktable.source.topics) or a read-only state store.
                description.put("source_topic_changelog", changelog);
            } else if (changelog != null) {
                final InternalTopicConfig topicConfig = info.stateChangelogTopics.get(changelog);
                if (topicConfig != null) {
                    changelogConfigs.putAll(topicConfig.properties(topicConfigs, windowChangelogAdditionalRetention));
                }
            }
            description.put("changelog_configs", changelogConfigs);
            stores.add(description);
        }
        return stores;
    }

    /** The {@code topic.}-prefixed configs, which Kafka Streams applies to every internal topic it creates. */
    private static Map<String, String> topicConfigs(final StreamsConfig config) {
        final Map<String, String> defaults = new TreeMap<>();
        config.originalsWithPrefix(StreamsConfig.TOPIC_PREFIX).forEach((key, value) -> {
            if (value != null) {
                defaults.put(key, value.toString());
            }
        });
        return defaults;
    }

    private static List<String> userTopics(final Set<String> topics, final Set<String> repartitionTopics) {
        final List<String> user = new ArrayList<>();
        for (final String topic : new TreeSet<>(topics)) {
            if (!repartitionTopics.contains(topic)) {
                user.add(topic);
            }
        }
        return user;
    }

    private String unprefixedRepartition(final String fullName) {
        final String prefix = applicationId + "-";
        if (!fullName.startsWith(prefix)) {
            throw new IllegalStateException("Repartition topic " + fullName + " is not named <application.id>-<name>");
        }
        return fullName.substring(prefix.length());
    }
}
