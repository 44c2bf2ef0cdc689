package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.AutoOffsetReset;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.MatchedSourceTopics;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** The engine's topology description, checked against what Kafka Streams' own builder describes. */
class EngineTopologyTest {

    @Test
    void wordCount() throws Exception {
        final Topology topology = StreamTaskRunnerTest.wordCount();
        final Map<String, Object> description = describe(topology, new Properties());
        assertEquals(List.of(), description.get("copartition_groups"));
        final List<Map<String, Object>> subtopologies = subtopologies(description);
        assertEquals(2, subtopologies.size());

        final Map<String, Object> split = subtopologies.get(0);
        assertEquals(0, split.get("id"));
        assertEquals(List.of("input"), split.get("source_topics"));
        assertEquals(List.of(), split.get("repartition_source_topics"));
        assertEquals(List.of(), split.get("sink_topics"));
        assertEquals(List.of("words-repartition"), split.get("repartition_sink_topics"));
        assertEquals(List.of(), split.get("stores"));

        final Map<String, Object> count = subtopologies.get(1);
        assertEquals(1, count.get("id"));
        assertEquals(List.of(), count.get("source_topics"));
        assertEquals(List.of(Map.of("name", "words-repartition")), namesAndPartitions(count.get("repartition_source_topics")));
        assertEquals(List.of("output"), count.get("sink_topics"));
        assertEquals(List.of(), count.get("repartition_sink_topics"));
        final List<Map<String, Object>> stores = maps(count.get("stores"));
        assertEquals(1, stores.size());
        assertEquals("counts", stores.get(0).get("name"));
        assertEquals(true, stores.get(0).get("persistent"));
        assertEquals(true, stores.get(0).get("logged"));
        assertEquals("compact", map(stores.get(0).get("changelog_configs")).get("cleanup.policy"));

        assertSameTopicsAsKafkaStreamsDescribes(topology, description);
    }

    @Test
    void joinsRepartitioningAndWindowedChangelogs() throws Exception {
        final StreamsBuilder builder = new StreamsBuilder();
        final KStream<String, String> left = builder.stream("left", Consumed.with(Serdes.String(), Serdes.String()))
            .selectKey((key, value) -> value);
        final KStream<String, String> right = builder.stream("right", Consumed.with(Serdes.String(), Serdes.String()));
        left.join(right, (l, r) -> l + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(5)),
                StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()).withName("pairs").withStoreName("pairs"))
            .to("joined");
        builder.stream("other", Consumed.with(Serdes.String(), Serdes.String()))
            .repartition(Repartitioned.<String, String>as("fixed").withNumberOfPartitions(4))
            .groupByKey()
            .count(Materialized.<String, Long, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("unlogged")
                .withLoggingDisabled());
        final Topology topology = builder.build();
        final Properties properties = new Properties();
        properties.put(StreamsConfig.TOPIC_PREFIX + "min.insync.replicas", "2");
        final Map<String, Object> description = describe(topology, properties);
        assertSameTopicsAsKafkaStreamsDescribes(topology, description);

        final Map<String, Object> join = subtopologyReading(description, "right");
        final String leftRepartition = single(maps(join.get("repartition_source_topics"))).get("name").toString();
        assertTrue(leftRepartition.endsWith("-left-repartition"), leftRepartition);
        assertEquals(List.of("joined"), join.get("sink_topics"));
        assertTrue(list(description.get("copartition_groups")).contains(new ArrayList<>(new TreeSet<>(Set.of(leftRepartition, "right")))),
            "the join's inputs are co-partitioned: " + description.get("copartition_groups"));
        final List<Map<String, Object>> joinStores = maps(join.get("stores"));
        assertEquals(2, joinStores.size());
        for (final Map<String, Object> store : joinStores) {
            assertEquals(true, store.get("logged"));
            final Map<String, Object> configs = map(store.get("changelog_configs"));
            // Kafka Streams keeps the duplicates of a join's window stores in changelogs that are not compacted.
            assertEquals("delete", configs.get("cleanup.policy"), store.get("name").toString());
            // Window store retention (both sides of the 5 minute window) plus the default additional day.
            assertEquals(String.valueOf(Duration.ofMinutes(10).toMillis() + Duration.ofDays(1).toMillis()),
                configs.get("retention.ms"));
            assertEquals("2", configs.get("min.insync.replicas"), "topic.* configs apply to changelogs");
        }

        final Map<String, Object> fixed = subtopologyReadingRepartition(description, "fixed-repartition");
        assertEquals(List.of(Map.of("name", "fixed-repartition", "partitions", 4)), namesAndPartitions(fixed.get("repartition_source_topics")));
        final Map<String, Object> fixedConfigs = map(single(maps(fixed.get("repartition_source_topics"))).get("configs"));
        assertEquals("delete", fixedConfigs.get("cleanup.policy"));
        assertEquals("2", fixedConfigs.get("min.insync.replicas"), "topic.* configs apply to repartition topics");
        final Map<String, Object> unlogged = single(maps(fixed.get("stores")));
        assertEquals("unlogged", unlogged.get("name"));
        assertEquals(false, unlogged.get("logged"));
        assertEquals(Map.of(), unlogged.get("changelog_configs"));
    }

    @Test
    void foreignKeyJoinTopicsKeepKafkaStreamsNames() {
        final StreamsBuilder builder = new StreamsBuilder();
        final KTable<String, String> orders = builder.table("orders", Consumed.with(Serdes.String(), Serdes.String()));
        final KTable<String, String> customers = builder.table("customers", Consumed.with(Serdes.String(), Serdes.String()));
        orders.join(customers, order -> order.split(":")[0], (order, customer) -> order + "/" + customer)
            .toStream().to("enriched");
        final Topology topology = builder.build();
        final Map<String, Object> description = describe(topology, new Properties());
        assertSameTopicsAsKafkaStreamsDescribes(topology, description);
        final Set<String> repartitions = new TreeSet<>();
        for (final Map<String, Object> subtopology : subtopologies(description)) {
            for (final Map<String, Object> repartition : maps(subtopology.get("repartition_source_topics"))) {
                repartitions.add(repartition.get("name").toString());
            }
        }
        assertEquals(2, repartitions.size(), repartitions::toString);
        assertTrue(repartitions.stream().anyMatch(name -> name.startsWith("KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-")
            && name.endsWith("-topic")), repartitions::toString);
        assertTrue(repartitions.stream().anyMatch(name -> name.startsWith("KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-")
            && name.endsWith("-topic")), repartitions::toString);
    }

    @Test
    void windowedAggregationChangelogKeepsTheWindowsRetention() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("clicks", Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(30)))
            .count(Materialized.as("per-minute"));
        final Properties properties = new Properties();
        properties.put(StreamsConfig.WINDOW_STORE_CHANGE_LOG_ADDITIONAL_RETENTION_MS_CONFIG, 1_000L);
        final Map<String, Object> store = single(maps(single(subtopologies(describe(builder.build(), properties))).get("stores")));
        assertEquals("per-minute", store.get("name"));
        final Map<String, Object> configs = map(store.get("changelog_configs"));
        assertEquals("compact,delete", configs.get("cleanup.policy"));
        assertEquals(String.valueOf(Duration.ofSeconds(90).toMillis() + 1_000L), configs.get("retention.ms"),
            "window size and grace, plus the configured additional retention");
    }

    @Test
    void globalStoresAreDescribedWithTheirTopics() {
        final StreamsBuilder builder = new StreamsBuilder();
        final GlobalKTable<String, String> countries = builder.globalTable("countries", Consumed.with(Serdes.String(), Serdes.String()));
        builder.stream("input", Consumed.with(Serdes.String(), Serdes.String()))
            .join(countries, (key, value) -> key, (value, country) -> value + "@" + country)
            .to("output");
        final Map<String, Object> description = describe(builder.build(), new Properties());
        final Map<String, Object> subtopology = single(subtopologies(description));
        assertEquals(List.of("input"), subtopology.get("source_topics"));
        assertEquals(List.of(), subtopology.get("stores"), "the global store is not a task's store");
        final Map<String, Object> global = Map.of(
            "name", "countries-STATE-STORE-0000000000", "topic", "countries", "persistent", true);
        assertEquals(List.of(global), description.get("global_stores"));
    }

    @Test
    void aReusedSourceTopicIsTheChangelogOfItsTable() {
        final Properties properties = new Properties();
        properties.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.REUSE_KTABLE_SOURCE_TOPICS);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.table("prices", Consumed.with(Serdes.String(), Serdes.String()), Materialized.as("prices-store"))
            .toStream().to("output");
        final Map<String, Object> store = single(maps(single(subtopologies(describe(builder.build(properties), properties)))
            .get("stores")));
        assertEquals("prices-store", store.get("name"));
        assertEquals(true, store.get("logged"));
        assertEquals("prices", store.get("source_topic_changelog"));
        assertEquals(Map.of(), store.get("changelog_configs"), "no changelog topic is created");
    }

    @Test
    void aReadOnlyStateStoreIsRestoredFromItsSourceTopic() {
        final Topology topology = new Topology();
        topology.addReadOnlyStateStore(
            Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("read-only"), Serdes.String(), Serdes.String()),
            "source", Serdes.String().deserializer(), Serdes.String().deserializer(), "reference", "loader",
            () -> new Processor<String, String, Void, Void>() {
                private KeyValueStore<String, String> store;

                @Override
                public void init(final ProcessorContext<Void, Void> context) {
                    store = context.getStateStore("read-only");
                }

                @Override
                public void process(final Record<String, String> record) {
                    store.put(record.key(), record.value());
                }
            });
        final Map<String, Object> store = single(maps(single(subtopologies(describe(topology, new Properties())))
            .get("stores")));
        assertEquals("read-only", store.get("name"));
        assertEquals("reference", store.get("source_topic_changelog"));
    }

    /**
     * The description comes from the topology's store factories: building a subtopology to describe it
     * would make an instance of each of its processors, which the application's suppliers count as a task.
     */
    @Test
    void describingATopologyMakesNoInstanceOfItsProcessors() {
        final AtomicInteger processorsMade = new AtomicInteger();
        final StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore("counted"), Serdes.String(), Serdes.Long()));
        builder.stream("events", Consumed.with(Serdes.String(), Serdes.String()))
            .process(() -> {
                processorsMade.incrementAndGet();
                return new Processor<String, String, Void, Void>() {
                    @Override
                    public void process(final Record<String, String> record) {
                    }
                };
            }, "counted");

        // As KafkaStreams is created: Kafka Streams builds the whole topology once to verify it.
        final TopologyMetadata metadata = metadata(builder.build(), new Properties());
        final int madeBefore = processorsMade.get();

        final Map<String, Object> store = single(maps(single(subtopologies(
            EngineTopology.describe(metadata, config(new Properties()), Set.of()))).get("stores")));

        assertEquals("counted", store.get("name"));
        assertEquals(true, store.get("persistent"));
        assertEquals(true, store.get("logged"));
        assertEquals(madeBefore, processorsMade.get());
    }

    @Test
    void jsonIsWhatTheEngineParses() throws Exception {
        final TopologyMetadata metadata = metadata(StreamTaskRunnerTest.wordCount(), new Properties());
        final Map<?, ?> parsed = new ObjectMapper().readValue(EngineTopology.json(metadata, config(new Properties()), Set.of()), Map.class);
        assertEquals(Set.of("subtopologies", "copartition_groups", "global_stores", "offset_resets"), parsed.keySet());
    }

    @Test
    void eachSourceTopicStartsWhereItsOwnPolicySaysElseWhereTheConsumerDoes() {
        final Properties latest = new Properties();
        latest.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "latest");
        // The word count's input follows the consumer, and so does its repartition topic, as in Kafka Streams.
        assertEquals(Map.of("input", "latest", "app-words-repartition", "latest"),
            describe(StreamTaskRunnerTest.wordCount(), latest).get("offset_resets"));

        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("strict", Consumed.<String, String>with(AutoOffsetReset.none()))
            .merge(builder.stream("recent", Consumed.<String, String>with(AutoOffsetReset.latest())))
            .merge(builder.stream("default"))
            .to("out");
        assertEquals(Map.of("strict", "none", "recent", "latest", "default", "earliest"),
            describe(builder.build(), new Properties()).get("offset_resets"));
    }

    @Test
    void patternSourcesReadTheTopicsTheyMatchedWithTheirOwnResetPolicy() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(Pattern.compile("in-\\d"), Consumed.<String, String>with(AutoOffsetReset.latest()))
            .merge(builder.stream("named"))
            .to("out");
        builder.stream(Pattern.compile("nothing-.*")).to("out");
        final Properties properties = new Properties();
        final TopologyMetadata metadata = metadata(builder.build(), properties);
        MatchedSourceTopics.update(metadata, Set.of("in-1", "in-2"), "");
        final Map<String, Object> description =
            EngineTopology.describe(metadata, config(properties), Set.of("in-1", "in-2"));

        final List<?> subtopologies = (List<?>) description.get("subtopologies");
        final Map<?, ?> matching = (Map<?, ?>) subtopologies.get(0);
        assertEquals(List.of("named"), matching.get("source_topics"));
        assertEquals(true, matching.get("has_patterns"));
        assertEquals(List.of("in-1", "in-2"), matching.get("matched_topics"));
        assertEquals(Map.of("in-1", "latest", "in-2", "latest", "named", "earliest"), description.get("offset_resets"));
        assertEquals(1, subtopologies.size(), "a sub-topology whose patterns match nothing has no task yet");
    }

    @Test
    void aSourceResetByDurationTellsTheEngineHowFarBack() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("recent", Consumed.<String, String>with(AutoOffsetReset.byDuration(Duration.ofHours(1))))
            .merge(builder.stream("default"))
            .to("out");
        final Properties lastDay = new Properties();
        lastDay.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "by_duration:P1D");
        assertEquals(Map.of("recent", Map.of("by_duration", 3_600_000L), "default", Map.of("by_duration", 86_400_000L)),
            describe(builder.build(), lastDay).get("offset_resets"));
    }

    /** Every topic the described sub-topologies read or write, by the full name Kafka Streams gives it. */
    private static void assertSameTopicsAsKafkaStreamsDescribes(final Topology topology, final Map<String, Object> description) {
        final Map<Integer, Set<String>> expected = new HashMap<>();
        for (final TopologyDescription.Subtopology subtopology : topology.describe().subtopologies()) {
            final Set<String> topics = new TreeSet<>();
            for (final TopologyDescription.Node node : subtopology.nodes()) {
                if (node instanceof TopologyDescription.Source) {
                    topics.addAll(((TopologyDescription.Source) node).topicSet());
                } else if (node instanceof TopologyDescription.Sink) {
                    topics.add(((TopologyDescription.Sink) node).topic());
                }
            }
            expected.put(subtopology.id(), topics);
        }
        final Map<Integer, Set<String>> actual = new HashMap<>();
        for (final Map<String, Object> subtopology : subtopologies(description)) {
            final Set<String> topics = new TreeSet<>();
            topics.addAll(strings(subtopology.get("source_topics")));
            topics.addAll(strings(subtopology.get("sink_topics")));
            for (final Map<String, Object> repartition : maps(subtopology.get("repartition_source_topics"))) {
                topics.add(repartition.get("name").toString());
            }
            for (final String repartition : strings(subtopology.get("repartition_sink_topics"))) {
                topics.add(repartition);
            }
            actual.put((Integer) subtopology.get("id"), topics);
        }
        assertEquals(expected, actual);
    }

    private static Map<String, Object> subtopologyReading(final Map<String, Object> description, final String topic) {
        for (final Map<String, Object> subtopology : subtopologies(description)) {
            if (strings(subtopology.get("source_topics")).contains(topic)) {
                return subtopology;
            }
        }
        throw new AssertionError("no sub-topology reads " + topic);
    }

    private static Map<String, Object> subtopologyReadingRepartition(final Map<String, Object> description, final String name) {
        for (final Map<String, Object> subtopology : subtopologies(description)) {
            for (final Map<String, Object> repartition : maps(subtopology.get("repartition_source_topics"))) {
                if (name.equals(repartition.get("name"))) {
                    return subtopology;
                }
            }
        }
        throw new AssertionError("no sub-topology reads repartition topic " + name);
    }

    private static Map<String, Object> describe(final Topology topology, final Properties properties) {
        return EngineTopology.describe(metadata(topology, properties), config(properties), Set.of());
    }

    private static TopologyMetadata metadata(final Topology topology, final Properties properties) {
        final TopologyMetadata metadata = new TopologyMetadata(TaskRunnerFixture.internalBuilder(topology), config(properties));
        metadata.buildAndRewriteTopology();
        return metadata;
    }

    private static StreamsConfig config(final Properties overrides) {
        final Properties properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, "app");
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        properties.putAll(overrides);
        return new StreamsConfig(properties);
    }

    /** The repartition topics' names and set partition counts, without their topic configs. */
    private static List<Map<String, Object>> namesAndPartitions(final Object topics) {
        final List<Map<String, Object>> stripped = new ArrayList<>();
        for (final Map<String, Object> topic : maps(topics)) {
            final Map<String, Object> copy = new HashMap<>(topic);
            assertTrue(copy.containsKey("partitions"));
            if (copy.get("partitions") == null) {
                copy.remove("partitions");
            }
            assertTrue(copy.remove("configs") instanceof Map, topic::toString);
            stripped.add(copy);
        }
        return stripped;
    }

    private static List<Map<String, Object>> subtopologies(final Map<String, Object> description) {
        return maps(description.get("subtopologies"));
    }

    private static <T> T single(final List<T> list) {
        assertEquals(1, list.size(), list.toString());
        return list.get(0);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(final Object value) {
        return (List<Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> maps(final Object value) {
        return (List<Map<String, Object>>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(final Object value) {
        return (List<String>) value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(final Object value) {
        return (Map<String, Object>) value;
    }
}
