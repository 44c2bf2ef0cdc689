package org.apache.kafka.streams;

import static org.apache.kafka.streams.EngineTestSupport.WAIT;
import static org.apache.kafka.streams.EngineTestSupport.describe;
import static org.apache.kafka.streams.EngineTestSupport.taskMetric;
import static org.apache.kafka.streams.EngineTestSupport.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.state.internals.NativeHandles;
import dev.sluice.streams.state.internals.StoreDirectoryCorruptedException;
import dev.sluice.streams.testing.broker.BrokerOptions;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.IOException;
import java.lang.reflect.Field;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.EngineTestSupport.RestoreTally;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.TopologyException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.StreamThread;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;

/**
 * Unchanged Kafka Streams applications run through Sluice's {@link KafkaStreams} on the engine,
 * against a real broker: the client reaches RUNNING, outputs are right, interactive queries read
 * the live stores, and a failing processor meets the uncaught exception handler's choice.
 */
class KafkaStreamsOnEngineTest {

    /** Takes any session timeout, as the brokers of applications that set one of hours do. */
    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker(
        BrokerOptions.defaults().withServerProperty("group.max.session.timeout.ms", String.valueOf(Integer.MAX_VALUE)));

    private static final String COUNTS = "word-counts";

    @TempDir
    Path stateDir;

    private final List<KafkaStreams> started = new ArrayList<>();

    @AfterEach
    void closeAll() {
        started.forEach(streams -> streams.close(Duration.ofSeconds(60)));
    }

    private Properties props(final String applicationId) {
        final Properties props = EngineTestSupport.props(BROKER, applicationId, stateDir);
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "localhost:8080");
        return props;
    }

    private static Topology wordCount(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.as(COUNTS))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    @Test
    void wordCountRunsReachesRunningAndServesInteractiveQueries() throws Exception {
        BROKER.createTopic("wc-input", 2);
        BROKER.createTopic("wc-output", 2);
        final List<String> lines = List.of("the quick brown fox", "jumps over the lazy dog", "The dog sleeps",
            "a fox and a dog");
        produce("wc-input", lines);
        final Map<String, Long> expected = countsOf(lines);
        final long recordCachesBefore = NativeHandles.liveRecordCaches();

        final KafkaStreams streams = new KafkaStreams(wordCount("wc-input", "wc-output"), props("wc-app"));
        started.add(streams);
        final List<String> transitions = new CopyOnWriteArrayList<>();
        streams.setStateListener((newState, oldState) -> transitions.add(oldState + "->" + newState));
        streams.start();
        assertEquals(KafkaStreams.State.REBALANCING, streams.state());

        final Map<String, Long> latest = consumeLatestCounts("wc-output", expected);
        assertEquals(expected, latest);
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        assertEquals(List.of("CREATED->REBALANCING", "REBALANCING->RUNNING"), transitions.subList(0, 2));

        final ReadOnlyKeyValueStore<String, Long> store =
            streams.store(StoreQueryParameters.fromNameAndType(COUNTS, QueryableStoreTypes.keyValueStore()));
        waitFor(() -> expected.entrySet().stream().allMatch(e -> e.getValue().equals(store.get(e.getKey()))),
            "the store to hold every count");
        final ReadOnlyKeyValueStore<String, ValueAndTimestamp<Long>> timestamped = streams.store(
            StoreQueryParameters.fromNameAndType(COUNTS, QueryableStoreTypes.timestampedKeyValueStore()));
        assertEquals(expected.get("dog"), timestamped.get("dog").value());
        final Map<String, Long> all = new HashMap<>();
        try (KeyValueIterator<String, Long> iterator = store.all()) {
            iterator.forEachRemaining(entry -> all.put(entry.key, entry.value));
        }
        assertEquals(expected, all);

        // As in Kafka Streams, a KeyQuery on a timestamped store answers the plain value.
        final StateQueryResult<Long> queried =
            streams.query(StateQueryRequest.inStore(COUNTS).withQuery(KeyQuery.<String, Long>withKey("the")));
        assertEquals(expected.get("the"), queried.getOnlyPartitionResult().getResult());

        final KeyQueryMetadata metadata = streams.queryMetadataForKey(COUNTS, "dog", Serdes.String().serializer());
        assertEquals("localhost", metadata.activeHost().host());
        // The count's task reads the 2-partition repartition topic, keyed by word with the default partitioner.
        assertEquals(Utils.toPositive(Utils.murmur2("dog".getBytes(StandardCharsets.UTF_8))) % 2, metadata.partition());
        assertEquals(metadata, streams.queryMetadataForKey(COUNTS, "dog", new RecordHeaders(), Serdes.String().serializer()));
        assertEquals(1, streams.metadataForAllStreamsClients().size());
        assertFalse(streams.metadataForLocalThreads().isEmpty());
        assertEquals(Map.of(0, 0L, 1, 0L), lagsOf(streams.allLocalStorePartitionLags().get(COUNTS)),
            "running tasks are caught up, as Kafka Streams counts them");
        // Each input partition's records-lag, as the consumers of Kafka Streams' threads report it.
        final Set<String> inputs = Set.of("wc-input-0", "wc-input-1",
            "wc-app-word-counts-repartition-0",
            "wc-app-word-counts-repartition-1");
        waitFor(() -> recordsLags(streams).equals(inputs.stream().collect(Collectors.toMap(input -> input, input -> 0.0))),
            "every input partition's records-lag to be 0: " + recordsLags(streams));
        // The tasks' metadata follows their commits: the input's committed offsets add up to its 4 records.
        waitFor(() -> committedOffsets(streams, "wc-input") == lines.size(),
            "the tasks' metadata to show every input record committed: " + streams.metadataForLocalThreads());
        // The tasks' processor and store metrics are the client's, beside the client-level ones.
        assertTrue(streams.metrics().keySet().stream().anyMatch(name -> name.group().equals("stream-state-metrics")));
        assertTrue(streams.metrics().keySet().stream().anyMatch(name -> name.group().equals("stream-metrics")
            && name.name().equals("state")));

        assertTrue(NativeHandles.liveRecordCaches() > recordCachesBefore, "the thread's record cache is native");

        assertTrue(streams.close(Duration.ofSeconds(60)));
        assertEquals(KafkaStreams.State.NOT_RUNNING, streams.state());
        waitFor(() -> transitions.contains("PENDING_SHUTDOWN->NOT_RUNNING"), "the listener to see NOT_RUNNING");
        assertTrue(transitions.contains("RUNNING->PENDING_SHUTDOWN"), transitions.toString());
        assertEquals(recordCachesBefore, NativeHandles.liveRecordCaches(), "closing released the record cache");
    }

    /** Input written with each of Kafka's codecs is read, and the application's producer writes with it. */
    @ParameterizedTest
    @ValueSource(strings = {"gzip", "snappy", "lz4", "zstd"})
    void inputCompressedWithEachCodecIsReadAndOutputIsWrittenWithIt(final String codec) throws Exception {
        final String input = "compressed-input-" + codec;
        final String output = "compressed-output-" + codec;
        BROKER.createTopic(input, 2);
        BROKER.createTopic(output, 2);
        final List<String> lines = List.of("the quick brown fox", "jumps over the lazy dog", "The dog sleeps");
        produce(input, lines, Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec));
        final Map<String, Long> expected = countsOf(lines);

        final Properties props = props("compressed-" + codec);
        props.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), codec);
        final KafkaStreams streams = new KafkaStreams(wordCount(input, output), props);
        started.add(streams);
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        shutDownOnFailure(streams, failures);
        streams.start();
        assertEquals(expected, consumeLatestCounts(output, expected), () -> "failures: " + failures);
        assertEquals(List.of(), failures);
    }

    /** Kafka Streams' documented bounded-memory setter, counting its calls. */
    public static class BoundedMemorySetter implements RocksDBConfigSetter {
        static final long CACHE_BYTES = 24L << 20;
        static final List<String> CALLS = new CopyOnWriteArrayList<>();
        /** Made at first use: rocksdbjni's library is loaded by then. */
        private static Cache cache;

        private static synchronized Cache cache() {
            if (cache == null) {
                cache = new LRUCache(CACHE_BYTES);
            }
            return cache;
        }

        @Override
        public void setConfig(final String storeName, final Options options, final Map<String, Object> configs) {
            CALLS.add("set " + storeName);
            final BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
            table.setBlockCache(cache());
            table.setBlockSize(16 << 10);
            options.setTableFormatConfig(table);
            options.setMaxWriteBufferNumber(2);
        }

        @Override
        public void close(final String storeName, final Options options) {
            CALLS.add("close " + storeName);
        }
    }

    @Test
    void aRocksDbConfigSetterTunesTheApplicationsStores() throws Exception {
        BROKER.createTopic("tuned-input", 2);
        BROKER.createTopic("tuned-output", 2);
        final List<String> lines = List.of("the quick brown fox", "the lazy dog");
        produce("tuned-input", lines);
        final Map<String, Long> expected = countsOf(lines);
        BoundedMemorySetter.CALLS.clear();

        final Properties props = props("tuned-app");
        props.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, BoundedMemorySetter.class);
        final KafkaStreams streams = new KafkaStreams(wordCount("tuned-input", "tuned-output"), props);
        started.add(streams);
        streams.start();
        assertEquals(expected, consumeLatestCounts("tuned-output", expected));
        // One count store per task (two input partitions), each tuned and sharing the setter's cache.
        final List<Object> capacities = streams.metrics().entrySet().stream()
            .filter(e -> e.getKey().group().equals("stream-state-metrics") && e.getKey().name().equals("block-cache-capacity")
                && COUNTS.equals(e.getKey().tags().get("rocksdb-state-id")))
            .map(e -> e.getValue().metricValue())
            .collect(Collectors.toList());
        assertEquals(List.of(BigInteger.valueOf(BoundedMemorySetter.CACHE_BYTES), BigInteger.valueOf(BoundedMemorySetter.CACHE_BYTES)),
            capacities);
        assertEquals(List.of("set " + COUNTS, "set " + COUNTS), BoundedMemorySetter.CALLS);

        assertTrue(streams.close(Duration.ofSeconds(60)));
        assertEquals(List.of("set " + COUNTS, "set " + COUNTS, "close " + COUNTS, "close " + COUNTS),
            BoundedMemorySetter.CALLS);
    }

    @Test
    void staticMembersWithASessionOfNeverProcessAndLeaveTheGroupWhenClosedWithLeaveGroup() throws Exception {
        BROKER.createTopic("static-input", 2);
        BROKER.createTopic("static-output", 2);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("static-input", Consumed.with(Serdes.String(), Serdes.String()))
            .mapValues(value -> value.toUpperCase(Locale.ROOT))
            .to("static-output", Produced.with(Serdes.String(), Serdes.String()));
        final Properties props = props("static-app");
        props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "static-instance");
        // What Java's clients take as "never"; librdkafka's own arithmetic overflows beyond 2147483 ms, which
        // made every member drop its assignment as lost, rebalance after rebalance.
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.MAX_VALUE);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        streams.start();
        produce("static-input", List.of("a", "b", "c", "d"));
        try (KafkaConsumer<String, String> consumer = consumer(StringDeserializer.class)) {
            consumer.subscribe(List.of("static-output"));
            final List<String> output = new ArrayList<>();
            consumeUntil(consumer, output, 4);
            assertEquals(Set.of("A", "B", "C", "D"), new HashSet<>(output));
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
            waitFor(() -> staticMembers(admin, "static-app").equals(Set.of("static-instance-1", "static-instance-2")),
                "each thread to be a static member of its own");
            assertTrue(streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(60))));
            assertEquals(Set.of(), staticMembers(admin, "static-app"), "closed with LEAVE_GROUP, the members left");
        }
    }

    @Test
    void joinedTopicsThatAreNotCoPartitionedGoToTheHandlerAsATopologyException() throws Exception {
        BROKER.createTopic("copart-left", 2);
        BROKER.createTopic("copart-right", 3);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("copart-left", Consumed.with(Serdes.String(), Serdes.String()))
            .join(builder.table("copart-right", Consumed.with(Serdes.String(), Serdes.String())), (l, r) -> l + r)
            .to("copart-output");
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        final KafkaStreams streams = new KafkaStreams(builder.build(), props("copart-app"));
        started.add(streams);
        shutDownOnFailure(streams, handled);
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.ERROR, "the client to shut down to ERROR");
        assertEquals(1, handled.size());
        assertTrue(handled.get(0) instanceof TopologyException, describe(handled.get(0)));
        assertTrue(handled.get(0).getMessage().contains("Topics not co-partitioned: [{copart-left=2, copart-right=3}]"),
            handled.get(0).getMessage());
    }

    /** Under either group protocol: the streams protocol's broker reports the topic missing in its heartbeats. */
    @ParameterizedTest
    @ValueSource(strings = {"classic", "streams"})
    void aSourceTopicMissingAtStartOrDeletedLaterGoesToTheHandlerAsMissingSourceTopic(final String protocol)
            throws Exception {
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        final String input = "gone-input-" + protocol;
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String())).to("gone-output");

        // As in Kafka Streams, start() returns and the handler hears of it.
        final Properties atStart = props("gone-at-start-" + protocol);
        atStart.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        final KafkaStreams neverThere = new KafkaStreams(builder.build(), atStart);
        started.add(neverThere);
        shutDownOnFailure(neverThere, handled);
        neverThere.start();
        waitFor(() -> neverThere.state() == KafkaStreams.State.ERROR, "the client to shut down to ERROR");
        assertEquals(1, handled.size());
        assertTrue(handled.get(0) instanceof MissingSourceTopicException, describe(handled.get(0)));

        BROKER.createTopic(input, 2);
        final Properties later = props("gone-later-" + protocol);
        later.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        final KafkaStreams running = new KafkaStreams(builder.build(), later);
        started.add(running);
        shutDownOnFailure(running, handled);
        running.start();
        waitFor(() -> running.state() == KafkaStreams.State.RUNNING, "the client to run");
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
            admin.deleteTopics(List.of(input)).all().get();
        }
        waitFor(() -> running.state() == KafkaStreams.State.ERROR, "the client to shut down to ERROR");
        assertEquals(2, handled.size());
        assertTrue(handled.get(1) instanceof MissingSourceTopicException, describe(handled.get(1)));
    }

    @Test
    void aPatternSourceReadsTheTopicsItMatchesThoseCreatedLaterTooAndLetsDeletedOnesGo() throws Exception {
        BROKER.createTopic("pattern-a", 2);
        BROKER.createTopic("pattern-out", 1);
        produce("pattern-a", List.of("a-1"));
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(Pattern.compile("pattern-[a-z]"), Consumed.with(Serdes.String(), Serdes.String()))
            .to("pattern-out", Produced.with(Serdes.String(), Serdes.String()));
        final Properties props = props("pattern-app");
        props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 500);
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        shutDownOnFailure(streams, handled);
        streams.start();

        final List<String> output = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(StringDeserializer.class)) {
            consumer.subscribe(List.of("pattern-out"));
            consumeUntil(consumer, output, 1);
            assertEquals(List.of("a-1"), output);

            // A topic created while it runs is read once it matches, from its start.
            BROKER.createTopic("pattern-b", 1);
            produce("pattern-b", List.of("b-1"));
            consumeUntil(consumer, output, 2);
            assertEquals(List.of("a-1", "b-1"), output);

            // A matched topic deleted is no longer matched: the client goes on with the others.
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
                admin.deleteTopics(List.of("pattern-a")).all().get();
            }
            waitFor(() -> streams.state() == KafkaStreams.State.RUNNING && inputTopics(streams).equals(Set.of("pattern-b")),
                "the client to run on pattern-b alone",
                () -> "state " + streams.state() + ", threads " + streams.metadataForLocalThreads()
                    + ", handled " + handled.stream().map(EngineTestSupport::describe).toList());
            produce("pattern-b", List.of("b-2"));
            consumeUntil(consumer, output, 3);
            assertEquals(List.of("a-1", "b-1", "b-2"), output);
        }
        assertEquals(List.of(), handled);
    }

    /** The topics of the input partitions of the local threads' active tasks. */
    private static Set<String> inputTopics(final KafkaStreams streams) {
        return streams.metadataForLocalThreads().stream()
            .flatMap(thread -> thread.activeTasks().stream())
            .flatMap(task -> task.topicPartitions().stream())
            .map(TopicPartition::topic)
            .collect(Collectors.toSet());
    }

    @Test
    void aSourceWithAResetPolicyOfItsOwnStartsWhereItSaysTheOthersWhereTheConsumerDoes() throws Exception {
        BROKER.createTopic("reset-latest", 2);
        BROKER.createTopic("reset-default", 2);
        BROKER.createTopic("reset-output", 1);
        produce("reset-latest", List.of("early-latest-1", "early-latest-2"));
        produce("reset-default", List.of("early-default-1", "early-default-2"));
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("reset-latest", Consumed.with(Serdes.String(), Serdes.String())
                .withOffsetResetPolicy(AutoOffsetReset.latest()))
            .merge(builder.stream("reset-default", Consumed.with(Serdes.String(), Serdes.String())))
            .to("reset-output", Produced.with(Serdes.String(), Serdes.String()));
        final KafkaStreams streams = new KafkaStreams(builder.build(), props("reset-app"));
        started.add(streams);
        streams.start();

        final List<String> output = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(StringDeserializer.class)) {
            consumer.subscribe(List.of("reset-output"));
            // The consumer's auto.offset.reset (earliest here) for the topic without a policy of its own.
            consumeUntil(consumer, output, 2);
            // Once the latest source is read from its end, what is written to it comes through.
            final long deadline = System.nanoTime() + WAIT.toNanos();
            for (int late = 0; output.stream().noneMatch(value -> value.startsWith("late")); late++) {
                assertTrue(System.nanoTime() < deadline, "nothing written to the latest source came through: " + output);
                produce("reset-latest", List.of("late-" + late));
                consumer.poll(Duration.ofMillis(500)).forEach(record -> output.add(record.value()));
            }
        }
        assertTrue(output.containsAll(List.of("early-default-1", "early-default-2")), output.toString());
        assertTrue(output.stream().noneMatch(value -> value.startsWith("early-latest")),
            "the latest source skipped what was there before: " + output);
    }

    /** What reaches the uncaught exception handler of {@code streams} goes into {@code handled}; the client shuts down. */
    private static void shutDownOnFailure(final KafkaStreams streams, final List<Throwable> handled) {
        streams.setUncaughtExceptionHandler(error -> {
            handled.add(error);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    }

    /** The committed offsets of {@code topic}'s partitions in the local tasks' metadata, summed (none: 0). */
    private static long committedOffsets(final KafkaStreams streams, final String topic) {
        return streams.metadataForLocalThreads().stream()
            .flatMap(thread -> thread.activeTasks().stream())
            .flatMap(task -> task.committedOffsets().entrySet().stream())
            .filter(committed -> committed.getKey().topic().equals(topic))
            .mapToLong(committed -> Math.max(committed.getValue(), 0L))
            .sum();
    }

    /** The records-lag metrics of {@code streams}, by topic-partition. */
    private static Map<String, Double> recordsLags(final KafkaStreams streams) {
        return streams.metrics().values().stream()
            .filter(metric -> metric.metricName().name().equals("records-lag")
                && metric.metricName().group().equals("consumer-fetch-manager-metrics"))
            .collect(Collectors.toMap(
                metric -> metric.metricName().tags().get("topic") + "-" + metric.metricName().tags().get("partition"),
                metric -> ((Number) metric.metricValue()).doubleValue()));
    }

    private static Set<String> staticMembers(final Admin admin, final String groupId) {
        try {
            return admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId).get().members().stream()
                .flatMap(member -> member.groupInstanceId().stream())
                .collect(Collectors.toSet());
        } catch (final Exception e) {
            throw new AssertionError("describing group " + groupId, e);
        }
    }

    @Test
    void readCommittedQueriesNeverSeeTheOpenCommitReadUncommittedOnesDo() throws Exception {
        BROKER.createTopic("iso-input", 1);
        BROKER.createTopic("iso-output", 1);
        final Properties props = props("iso-app");
        // No commit while the test looks: whatever the store holds is the open commit's.
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Duration.ofMinutes(10).toMillis());
        props.put(StreamsConfig.DEFAULT_INTERACTIVE_QUERY_ISOLATION_LEVEL_CONFIG, "READ_COMMITTED");
        // Without a record cache: Kafka Streams' caching layer answers IQv2 key queries from its dirty
        // (uncommitted) entries whatever the isolation level, so this checks the stores' isolation.
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        final KafkaStreams streams = new KafkaStreams(wordCount("iso-input", "iso-output"), props);
        started.add(streams);
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        produce("iso-input", List.of("uncommitted words"));

        final StateQueryRequest<Long> uncommitted = StateQueryRequest.inStore(COUNTS)
            .withQuery(KeyQuery.<String, Long>withKey("uncommitted")).withIsolationLevel(IsolationLevel.READ_UNCOMMITTED);
        waitFor(() -> Long.valueOf(1).equals(onlyResult(streams.query(uncommitted))),
            "READ_UNCOMMITTED to see the open commit's count");

        final StateQueryRequest<Long> committed = StateQueryRequest.inStore(COUNTS)
            .withQuery(KeyQuery.<String, Long>withKey("uncommitted")).withIsolationLevel(IsolationLevel.READ_COMMITTED);
        assertEquals(null, onlyResult(streams.query(committed)));
        final StateQueryRequest<Long> byDefault = StateQueryRequest.inStore(COUNTS)
            .withQuery(KeyQuery.<String, Long>withKey("uncommitted"));
        assertEquals(null, onlyResult(streams.query(byDefault)),
            "default.interactive.query.isolation.level=READ_COMMITTED applies to IQv2");
        final ReadOnlyKeyValueStore<String, Long> store =
            streams.store(StoreQueryParameters.fromNameAndType(COUNTS, QueryableStoreTypes.keyValueStore()));
        assertEquals(null, store.get("uncommitted"), "default.interactive.query.isolation.level applies to store()");
    }

    @Test
    void aCommitAProcessorAsksForIsMadeWithoutWaitingForTheCommitInterval() throws Exception {
        BROKER.createTopic("asked-input", 1);
        BROKER.createTopic("asked-output", 1);
        final Properties props = props("asked-app");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        // Longer than the test waits: only the commit the processor asks for makes the output visible.
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Duration.ofMinutes(10).toMillis());
        props.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), (int) Duration.ofMinutes(10).toMillis());
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("asked-input", Consumed.with(Serdes.String(), Serdes.String()))
            .process(() -> new Processor<String, String, String, String>() {
                private ProcessorContext<String, String> context;

                @Override
                public void init(final ProcessorContext<String, String> context) {
                    this.context = context;
                }

                @Override
                public void process(final Record<String, String> record) {
                    context.forward(record);
                    if ("commit".equals(record.value())) {
                        context.commit();
                    }
                }
            })
            .to("asked-output", Produced.with(Serdes.String(), Serdes.String()));
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        produce("asked-input", List.of("first", "commit"));
        final List<String> output = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(StringDeserializer.class)) {
            consumer.subscribe(List.of("asked-output"));
            consumeUntil(consumer, output, 2);
        }
        assertEquals(List.of("first", "commit"), output);
    }

    @Test
    void closeFromTheStateListenerAndCloseWithZeroTimeout() throws Exception {
        BROKER.createTopic("close-input", 1);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("close-input", Consumed.with(Serdes.String(), Serdes.String())).foreach((k, v) -> { });

        // A listener that closes the client when it runs: Kafka Streams allows closing from the
        // thread that reports a state change.
        final KafkaStreams closedByListener = new KafkaStreams(builder.build(), props("close-listener-app"));
        started.add(closedByListener);
        final AtomicBoolean closeReturned = new AtomicBoolean();
        closedByListener.setStateListener((newState, oldState) -> {
            if (newState == KafkaStreams.State.RUNNING) {
                closeReturned.set(closedByListener.close(Duration.ofSeconds(60)));
            }
        });
        closedByListener.start();
        waitFor(closeReturned::get, "close from the listener to return true");
        assertEquals(KafkaStreams.State.NOT_RUNNING, closedByListener.state());

        // A zero timeout starts the shutdown and returns at once; the client still reaches NOT_RUNNING.
        final KafkaStreams closedAtOnce = new KafkaStreams(builder.build(), props("close-zero-app"));
        started.add(closedAtOnce);
        closedAtOnce.start();
        waitFor(() -> closedAtOnce.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        closedAtOnce.close(Duration.ZERO);
        assertTrue(closedAtOnce.state().hasStartedOrFinishedShuttingDown(), closedAtOnce.state().toString());
        waitFor(() -> closedAtOnce.state() == KafkaStreams.State.NOT_RUNNING, "the client to reach NOT_RUNNING");
    }

    /** Kafka Streams' default handler shuts the client down; so do both shutdown responses here. */
    @ParameterizedTest
    @ValueSource(strings = {"DEFAULT", "SHUTDOWN_CLIENT", "SHUTDOWN_APPLICATION"})
    void aFailingProcessorShutsTheClientDownToError(final String response) throws Exception {
        final String input = "fail-input-" + response;
        BROKER.createTopic(input, 1);
        produce(input, List.of("fine", "boom"));
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .mapValues(value -> {
                if (value.equals("boom")) {
                    throw new IllegalStateException("poison record " + value);
                }
                return value;
            })
            .to("fail-output-" + response, Produced.with(Serdes.String(), Serdes.String()));
        final KafkaStreams streams = new KafkaStreams(builder.build(), props("fail-app-" + response));
        started.add(streams);
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        if (!response.equals("DEFAULT")) {
            streams.setUncaughtExceptionHandler(exception -> {
                handled.add(exception);
                return StreamThreadExceptionResponse.valueOf(response);
            });
        }
        streams.start();

        waitFor(() -> streams.state() == KafkaStreams.State.ERROR, "the client to reach ERROR");
        if (!response.equals("DEFAULT")) {
            assertEquals(1, handled.size());
            assertTrue(describe(handled.get(0)).contains("poison record boom"), describe(handled.get(0)));
        }
        assertTrue(streams.close(Duration.ofSeconds(10)), "closing a client in ERROR returns at once");
        assertEquals(KafkaStreams.State.ERROR, streams.state());
    }

    /** The first time the poison record comes, processing fails; the replacement thread reprocesses it. */
    private static final AtomicBoolean POISON_FAILED = new AtomicBoolean();

    @Test
    void replaceThreadStartsAThreadInPlaceOfTheFailedOneAndProcessingGoesOn() throws Exception {
        BROKER.createTopic("replace-input", 1);
        BROKER.createTopic("replace-output", 1);
        produce("replace-input", List.of("one", "poison", "three"));
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("replace-input", Consumed.with(Serdes.String(), Serdes.String()))
            .mapValues(value -> {
                if (value.equals("poison") && POISON_FAILED.compareAndSet(false, true)) {
                    throw new IllegalStateException("first poison");
                }
                return value.toUpperCase(Locale.ROOT);
            })
            .to("replace-output", Produced.with(Serdes.String(), Serdes.String()));
        final Properties props = props("replace-app");
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        final List<String> transitions = new CopyOnWriteArrayList<>();
        streams.setStateListener((newState, oldState) -> transitions.add(oldState + "->" + newState));
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        streams.setUncaughtExceptionHandler(exception -> {
            handled.add(exception);
            return StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        streams.start();

        final List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(StringDeserializer.class)) {
            consumer.subscribe(List.of("replace-output"));
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (!values.contains("THREE") && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(r.value()));
            }
        }
        assertTrue(POISON_FAILED.get());
        assertTrue(values.containsAll(List.of("ONE", "POISON", "THREE")), values.toString());
        // The handler saw what the task threw, as Kafka Streams hands it over.
        assertEquals(1, handled.size(), handled.toString());
        assertTrue(describe(handled.get(0)).contains("first poison"), describe(handled.get(0)));
        // The replacement joins the group; once it runs its tasks, so does the client (the failure may
        // come before the client first reached RUNNING).
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to run again");
        assertEquals("REBALANCING->RUNNING", transitions.get(transitions.size() - 1), transitions.toString());
        assertEquals(2, aliveStreamThreads(streams), "the failed thread was replaced, the other ran on");
        // One task for two threads: the idle thread is listed too, as in Kafka Streams. The replacement is
        // numbered anew, as Kafka Streams starts it while the failed thread is still shutting down.
        final Set<ThreadMetadata> threads = streams.metadataForLocalThreads();
        final Set<String> names = threads.stream().map(ThreadMetadata::threadName).collect(Collectors.toSet());
        assertEquals(2, names.size(), names.toString());
        assertTrue(names.contains("replace-app-StreamThread-3"), names.toString());
        assertEquals(Set.of("RUNNING"), threads.stream().map(ThreadMetadata::threadState).collect(Collectors.toSet()));
        assertEquals(1, threads.stream().mapToInt(thread -> thread.activeTasks().size()).sum());
    }

    @Test
    void threadsAddedAndRemovedWhileRunningTakeAndHandOverTasks() throws Exception {
        BROKER.createTopic("threads-input", 2);
        BROKER.createTopic("threads-output", 2);
        final KafkaStreams streams = new KafkaStreams(wordCount("threads-input", "threads-output"), props("threads-app"));
        started.add(streams);
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        assertEquals(1, aliveStreamThreads(streams));

        assertEquals(Optional.of("threads-app-StreamThread-2"), streams.addStreamThread());
        assertEquals(2, aliveStreamThreads(streams));
        final List<String> first = List.of("one fish two fish", "red fish blue fish");
        produce("threads-input", first);
        final Map<String, Long> expected = countsOf(first);
        assertEquals(expected, consumeLatestCounts("threads-output", expected));
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to run with two threads");
        waitFor(() -> streams.metadataForLocalThreads().size() == 2, "both threads to run tasks");

        // The oldest thread goes, committing first; its tasks move to the other from their committed state.
        assertEquals(Optional.of("threads-app-StreamThread-1"), streams.removeStreamThread(Duration.ofSeconds(60)));
        assertEquals(1, aliveStreamThreads(streams));
        final List<String> second = List.of("one more fish");
        produce("threads-input", second);
        countsOf(second).forEach((word, count) -> expected.merge(word, count, Long::sum));
        assertEquals(expected, consumeLatestCounts("threads-output", expected));
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to run with one thread");
        assertEquals(Set.of("threads-app-StreamThread-2"), threadNames(streams));

        // A removal that times out: the thread goes on stopping, no longer counted, and its number stays
        // taken until it has ended.
        assertEquals(Optional.of("threads-app-StreamThread-1"), streams.addStreamThread());
        waitFor(() -> threadNames(streams).size() == 2, "both threads to report");
        assertThrows(TimeoutException.class, () -> streams.removeStreamThread(Duration.ZERO));
        assertEquals(1, aliveStreamThreads(streams));
        waitFor(() -> threadNames(streams).equals(Set.of("threads-app-StreamThread-2")),
            "the stopping thread to end and be forgotten: " + threadNames(streams));
        assertEquals(Optional.of("threads-app-StreamThread-1"), streams.addStreamThread(), "its number is free again");
        assertEquals(2, aliveStreamThreads(streams));
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING && threadNames(streams).size() == 2,
            "the client to run with two threads");
    }

    /** A client whose protected stream thread list a test reads, as Kafka Streams' own test wrapper reads it. */
    private static final class ThreadsListed extends KafkaStreams {
        ThreadsListed(final Topology topology, final Properties props) {
            super(topology, props);
        }

        List<StreamThread> streamThreads() {
            return new ArrayList<>(threads);
        }
    }

    /**
     * As Kafka Streams' own, the client's protected {@code threads} list holds a stream thread object per thread,
     * made with the client: its consumer is the thread's group member, its state follows the engine thread's, told
     * to a listener set before start on the thread that made the change, and it is DEAD and gone once the thread
     * ends.
     */
    @Test
    void theProtectedThreadListHoldsAStreamThreadPerEngineThreadThatFollowsIt() throws Exception {
        BROKER.createTopic("listed-threads-input", 2);
        BROKER.createTopic("listed-threads-output", 2);
        final Properties props = props("listed-threads-app");
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
        final ThreadsListed streams = new ThreadsListed(wordCount("listed-threads-input", "listed-threads-output"), props);
        started.add(streams);
        final List<StreamThread> threads = streams.streamThreads();
        assertEquals(List.of("listed-threads-app-StreamThread-1", "listed-threads-app-StreamThread-2"),
            threads.stream().map(Thread::getName).toList());
        final Map<String, List<String>> transitions = new ConcurrentHashMap<>();
        final Map<String, String> notifiedOn = new ConcurrentHashMap<>();
        for (final StreamThread thread : threads) {
            assertEquals(StreamThread.State.CREATED, thread.state());
            final StreamThread.StateListener original = thread.getStateListener();
            thread.setStateListener((changed, newState, oldState) -> {
                original.onChange(changed, newState, oldState);
                transitions.computeIfAbsent(changed.getName(), name -> new CopyOnWriteArrayList<>())
                    .add(oldState + "->" + newState);
                if (newState == StreamThread.State.RUNNING) {
                    notifiedOn.put(changed.getName(), Thread.currentThread().getName());
                }
            });
        }
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING
                && threads.stream().allMatch(thread -> thread.state() == StreamThread.State.RUNNING),
            "the client and both threads to be RUNNING: " + transitions);
        for (final StreamThread thread : threads) {
            final List<String> seen = transitions.get(thread.getName());
            assertEquals("CREATED->STARTING", seen.get(0), seen.toString());
            assertTrue(seen.contains("PARTITIONS_ASSIGNED->RUNNING"), seen.toString());
            assertEquals(thread.getName(), notifiedOn.get(thread.getName()), "the engine thread itself tells the listener");
            final Field mainConsumer = StreamThread.class.getDeclaredField("mainConsumer");
            mainConsumer.setAccessible(true);
            final Consumer<?, ?> member = (Consumer<?, ?>) mainConsumer.get(thread);
            waitFor(() -> groupMetadataOf(member)
                    .filter(group -> group.groupId().equals("listed-threads-app") && group.generationId() > 0)
                    .isPresent(),
                "the thread's consumer to be its member of the group");
        }

        final StreamThread first = threads.get(0);
        assertEquals(Optional.of(first.getName()), streams.removeStreamThread(Duration.ofSeconds(60)));
        assertEquals(StreamThread.State.DEAD, first.state());
        assertTrue(transitions.get(first.getName()).contains("PENDING_SHUTDOWN->DEAD"));
        assertEquals(List.of(threads.get(1)), streams.streamThreads());
        assertEquals(Optional.of(first.getName()), streams.addStreamThread());
        waitFor(() -> streams.streamThreads().size() == 2, "the added thread's object to be listed");

        assertTrue(streams.close(Duration.ofSeconds(60)));
        assertEquals(List.of(), streams.streamThreads());
        assertEquals(StreamThread.State.DEAD, threads.get(1).state());
        final List<String> kept = transitions.get(threads.get(1).getName());
        assertTrue(kept.get(kept.size() - 2).endsWith("->PENDING_SHUTDOWN"), "shut down with the client: " + kept);
        assertEquals("PENDING_SHUTDOWN->DEAD", kept.get(kept.size() - 1), "shut down with the client: " + kept);
    }

    @Test
    void threadsAddedAndRemovedConcurrentlyLeaveTheThreadsThereWereEachListed() throws Exception {
        BROKER.createTopic("concurrent-threads-input", 2);
        BROKER.createTopic("concurrent-threads-output", 2);
        final Properties props = props("concurrent-threads-app");
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
        final KafkaStreams streams =
            new KafkaStreams(wordCount("concurrent-threads-input", "concurrent-threads-output"), props);
        started.add(streams);
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING && threadNames(streams).size() == 2,
            "the client to run with two threads");
        final String added = streams.addStreamThread().orElseThrow();
        assertEquals(Set.of("concurrent-threads-app-StreamThread-1", "concurrent-threads-app-StreamThread-2", added),
            threadNames(streams), "a thread is listed as soon as it is added");
        assertEquals(Optional.of("concurrent-threads-app-StreamThread-1"), streams.removeStreamThread());

        // Each removal stops the oldest thread, so threads just added are soon all there is, some before they
        // have had an assignment; a number one removal frees and the next addition takes must never be
        // forgotten under its new owner.
        final ExecutorService changers = Executors.newFixedThreadPool(5);
        final List<Future<?>> changes = new ArrayList<>();
        for (int changer = 0; changer < 5; changer++) {
            changes.add(changers.submit(() -> {
                for (int round = 0; round < 4; round++) {
                    assertTrue(streams.addStreamThread().isPresent(), "a thread added");
                    streams.metadataForLocalThreads();
                    assertTrue(streams.removeStreamThread().isPresent(), "a thread removed");
                }
                return null;
            }));
        }
        changers.shutdown();
        assertTrue(changers.awaitTermination(120, TimeUnit.SECONDS), "the changes to end");
        for (final Future<?> change : changes) {
            change.get();
        }
        assertEquals(2, aliveStreamThreads(streams));
        assertEquals(2, streams.metadataForLocalThreads().size(), threadNames(streams).toString());
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING && threadNames(streams).size() == 2,
            "the client to run with two threads again: " + threadNames(streams));
    }

    private static Set<String> threadNames(final KafkaStreams streams) {
        return streams.metadataForLocalThreads().stream().map(ThreadMetadata::threadName).collect(Collectors.toSet());
    }

    /** Upper-cases each value under exactly-once: every input record has exactly one output record. */
    private static Topology upperCase(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .mapValues(value -> value.toUpperCase(Locale.ROOT))
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    private Properties exactlyOnce(final String applicationId) {
        final Properties props = props(applicationId);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        return props;
    }

    /** Long enough for every engine thread to see a pause, and for many commit intervals to pass. */
    private static final Duration SETTLE = Duration.ofSeconds(3);

    @Test
    void aThreadsMetricsAreThereFromTheMomentItStarts() throws Exception {
        BROKER.createTopic("thread-metrics-input", 1);
        BROKER.createTopic("thread-metrics-output", 1);
        final KafkaStreams streams =
            new KafkaStreams(upperCase("thread-metrics-input", "thread-metrics-output"), props("thread-metrics-app"));
        started.add(streams);
        streams.start();
        assertEquals(Set.of("thread-metrics-app-StreamThread-1"), threadsWithPollTotal(streams),
            "listed before the thread has joined the group or turned its loop");
        final String added = streams.addStreamThread().orElseThrow();
        assertEquals(Set.of("thread-metrics-app-StreamThread-1", added), threadsWithPollTotal(streams));
        assertEquals(Optional.of("thread-metrics-app-StreamThread-1"), streams.removeStreamThread());
        assertEquals(Set.of(added), threadsWithPollTotal(streams));
    }

    private static Set<String> threadsWithPollTotal(final KafkaStreams streams) {
        return streams.metrics().keySet().stream()
            .filter(metric -> metric.name().equals("poll-total"))
            .map(metric -> metric.tags().get("thread-id"))
            .collect(Collectors.toSet());
    }

    @Test
    void aPausedClientOutputsNothingStaysRunningInTheGroupAndResumesWhereItStopped() throws Exception {
        BROKER.createTopic("pause-input", 2);
        BROKER.createTopic("pause-output", 2);
        final KafkaStreams streams = new KafkaStreams(upperCase("pause-input", "pause-output"), exactlyOnce("pause-app"));
        started.add(streams);
        final List<String> transitions = new CopyOnWriteArrayList<>();
        streams.setStateListener((newState, oldState) -> transitions.add(oldState + "->" + newState));
        streams.start();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        assertFalse(streams.isPaused());

        try (KafkaConsumer<String, String> output = consumer(StringDeserializer.class)) {
            output.subscribe(List.of("pause-output"));
            final List<String> before = List.of("a", "b", "c", "d");
            produce("pause-input", before);
            final List<String> values = new ArrayList<>();
            consumeUntil(output, values, before.size());
            final List<String> transitionsBeforePause = List.copyOf(transitions);

            streams.pause();
            assertTrue(streams.isPaused());
            // Nothing written once pause() returned is processed.
            final List<String> during = List.of("e", "f", "g", "h", "i", "j");
            produce("pause-input", during);
            final long quietUntil = System.nanoTime() + SETTLE.toNanos();
            while (System.nanoTime() < quietUntil) {
                output.poll(Duration.ofMillis(200)).forEach(record -> values.add(record.value()));
            }
            assertEquals(List.of("A", "B", "C", "D"), values.stream().sorted().collect(Collectors.toList()),
                "nothing is processed while paused");
            assertEquals(KafkaStreams.State.RUNNING, streams.state());
            assertEquals(transitionsBeforePause, transitions, "no rebalance while paused");
            assertTrue(streams.isPaused());

            streams.resume();
            assertFalse(streams.isPaused());
            consumeUntil(output, values, before.size() + during.size());
            // A duplicate would come with the records it repeats or soon after.
            output.poll(SETTLE).forEach(record -> values.add(record.value()));
            assertEquals(List.of("A", "B", "C", "D", "E", "F", "G", "H", "I", "J"),
                values.stream().sorted().collect(Collectors.toList()), "every record output exactly once");
        }
        assertEquals(KafkaStreams.State.RUNNING, streams.state());
    }

    @Test
    void aClientPausedBeforeStartStartsPausedAndProcessesOnceResumed() throws Exception {
        BROKER.createTopic("prepaused-input", 1);
        BROKER.createTopic("prepaused-output", 1);
        produce("prepaused-input", List.of("x", "y"));
        final KafkaStreams streams =
            new KafkaStreams(upperCase("prepaused-input", "prepaused-output"), exactlyOnce("prepaused-app"));
        started.add(streams);
        streams.pause();
        assertTrue(streams.isPaused());
        streams.start();
        // Its stateless task runs, as in Kafka Streams, without processing.
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        assertTrue(streams.isPaused());

        try (KafkaConsumer<String, String> output = consumer(StringDeserializer.class)) {
            output.subscribe(List.of("prepaused-output"));
            final List<String> values = new ArrayList<>();
            final long quietUntil = System.nanoTime() + SETTLE.toNanos();
            while (System.nanoTime() < quietUntil) {
                output.poll(Duration.ofMillis(200)).forEach(record -> values.add(record.value()));
            }
            assertEquals(List.of(), values, "nothing is processed while paused");

            streams.resume();
            consumeUntil(output, values, 2);
            output.poll(SETTLE).forEach(record -> values.add(record.value()));
            assertEquals(List.of("X", "Y"), values);
        }
    }

    @Test
    void aStatefulClientPausedBeforeStartRebalancesUntilResumed() throws Exception {
        BROKER.createTopic("prepaused-wc-input", 2);
        BROKER.createTopic("prepaused-wc-output", 2);
        final List<String> lines = List.of("one fish two fish", "red fish blue fish");
        produce("prepaused-wc-input", lines);
        final KafkaStreams streams =
            new KafkaStreams(wordCount("prepaused-wc-input", "prepaused-wc-output"), props("prepaused-wc-app"));
        started.add(streams);
        streams.pause();
        streams.start();
        // As in Kafka Streams, the counting tasks, which have a changelog, wait unrestored while paused.
        TimeUnit.MILLISECONDS.sleep(SETTLE.toMillis());
        assertEquals(KafkaStreams.State.REBALANCING, streams.state());

        streams.resume();
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        final Map<String, Long> expected = countsOf(lines);
        assertEquals(expected, consumeLatestCounts("prepaused-wc-output", expected));
    }

    /**
     * As in Kafka Streams, a paused client reports the lags of the stores of the tasks it holds unopened, where their
     * state on disk left them: after {@code cleanUp()} at offset 0, behind by their changelogs' whole length, until
     * it is resumed and restores them.
     */
    @Test
    void aPausedClientReportsTheStoresOfItsUnopenedTasksWhereTheirStateOnDiskLeftThem() throws Exception {
        BROKER.createTopic("held-wc-input", 2);
        BROKER.createTopic("held-wc-output", 2);
        final List<String> lines = List.of("one fish two fish", "red fish blue fish");
        produce("held-wc-input", lines);
        final Map<String, Long> expected = countsOf(lines);
        final KafkaStreams counted =
            new KafkaStreams(wordCount("held-wc-input", "held-wc-output"), props("held-wc-app"));
        started.add(counted);
        counted.start();
        assertEquals(expected, consumeLatestCounts("held-wc-output", expected));
        counted.close();

        final KafkaStreams paused =
            new KafkaStreams(wordCount("held-wc-input", "held-wc-output"), props("held-wc-app"));
        started.add(paused);
        paused.cleanUp();
        paused.pause();
        paused.start();
        waitFor(() -> paused.allLocalStorePartitionLags().containsKey(COUNTS), "the paused client to report its store");
        final Map<Integer, LagInfo> held = paused.allLocalStorePartitionLags().get(COUNTS);
        assertEquals(Set.of(0, 1), held.keySet());
        held.values().forEach(lag -> assertEquals(0, lag.currentOffsetPosition()));
        // Every word counted left at least one record in the changelog.
        assertTrue(held.values().stream().mapToLong(LagInfo::offsetLag).sum() >= expected.size(), held.toString());
        assertEquals(KafkaStreams.State.REBALANCING, paused.state());

        paused.resume();
        waitFor(() -> paused.state() == KafkaStreams.State.RUNNING, "the client to be RUNNING");
        assertEquals(Map.of(0, 0L, 1, 0L), lagsOf(paused.allLocalStorePartitionLags().get(COUNTS)));
    }

    /**
     * As in Kafka Streams, a query that requires an active task is refused while the task's thread is not RUNNING.
     * The client is paused before it starts: the task of the unlogged table runs at once, the table with a
     * changelog waits unopened until resumed, so the thread stays PARTITIONS_ASSIGNED until then.
     */
    @Test
    void aQueryThatRequiresAnActiveTaskIsRefusedUntilItsThreadRuns() throws Exception {
        BROKER.createTopic("gate-ticks", 1);
        BROKER.createTopic("gate-prices", 1);
        produce("gate-ticks", List.of("first"));
        final StreamsBuilder builder = new StreamsBuilder();
        builder.table("gate-ticks", Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("gate-ticks-store").withLoggingDisabled());
        builder.table("gate-prices", Consumed.with(Serdes.String(), Serdes.String()), Materialized.as("gate-prices-store"));
        final KafkaStreams streams = new KafkaStreams(builder.build(), props("gate-app"));
        started.add(streams);
        streams.pause();
        streams.start();

        final KeyQuery<String, String> firstTick = KeyQuery.withKey("k0");
        final StateQueryRequest<String> stale = StateQueryRequest.inStore("gate-ticks-store")
            .withQuery(firstTick).withPartitions(Set.of(0));
        // The engine opens the tasks of an assignment before it tells the thread object the assignment is done.
        waitFor(() -> streams.query(stale).getPartitionResults().get(0).isSuccess()
                && streams.metadataForLocalThreads().iterator().next().threadState().equals("PARTITIONS_ASSIGNED"),
            "the ticks' task to run and its thread to have its tasks assigned");
        final QueryResult<String> refused = streams.query(stale.requireActive()).getPartitionResults().get(0);
        assertEquals(FailureReason.NOT_ACTIVE, refused.getFailureReason());
        assertEquals("Query requires a running active task, but partition was in state PARTITIONS_ASSIGNED and was active.",
            refused.getFailureMessage());

        streams.resume();
        waitFor(() -> {
            final QueryResult<String> active = streams.query(stale.requireActive()).getPartitionResults().get(0);
            return active.isSuccess() && "first".equals(active.getResult());
        }, "the query that requires an active task to read the tick once the thread runs");
    }

    /** The first time the word "corrupt" comes, the store reports its directory corrupt. */
    private static final AtomicBoolean STORE_CORRUPTED = new AtomicBoolean();

    @Test
    void aStoreFoundCorruptWhileProcessingIsWipedAndRestoredAndTheThreadGoesOn() throws Exception {
        BROKER.createTopic("corrupt-input", 1);
        BROKER.createTopic("corrupt-output", 1);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore("corrupt-counts"), Serdes.String(), Serdes.Long()));
        builder.stream("corrupt-input", Consumed.with(Serdes.String(), Serdes.String()))
            .process(() -> new Processor<String, String, String, Long>() {
                private ProcessorContext<String, Long> context;
                private KeyValueStore<String, Long> counts;

                @Override
                public void init(final ProcessorContext<String, Long> context) {
                    this.context = context;
                    counts = context.getStateStore("corrupt-counts");
                }

                @Override
                public void process(final Record<String, String> record) {
                    if (record.value().equals("corrupt") && STORE_CORRUPTED.compareAndSet(false, true)) {
                        throw new StoreDirectoryCorruptedException("the store's directory went bad");
                    }
                    final Long before = counts.get(record.value());
                    final long count = before == null ? 1 : before + 1;
                    counts.put(record.value(), count);
                    context.forward(new Record<>(record.value(), count, record.timestamp()));
                }
            }, "corrupt-counts")
            .to("corrupt-output", Produced.with(Serdes.String(), Serdes.Long()));
        final Properties props = props("corrupt-app");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        final List<Throwable> handled = new CopyOnWriteArrayList<>();
        streams.setUncaughtExceptionHandler(exception -> {
            handled.add(exception);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        final RestoreTally restored = new RestoreTally();
        streams.setGlobalStateRestoreListener(restored);
        streams.start();

        produce("corrupt-input", List.of("a", "b", "a"));
        final Map<String, Long> expected = new HashMap<>(Map.of("a", 2L, "b", 1L));
        assertEquals(expected, consumeLatestCounts("corrupt-output", expected));
        produce("corrupt-input", List.of("corrupt", "a"));
        expected.putAll(Map.of("corrupt", 1L, "a", 3L));
        assertEquals(expected, consumeLatestCounts("corrupt-output", expected));

        assertTrue(STORE_CORRUPTED.get());
        assertEquals(List.of(), handled, "a corrupt store is not the thread's failure");
        assertEquals(KafkaStreams.State.RUNNING, streams.state());
        // The wiped store came back from its changelog: the counts committed before the corruption.
        assertTrue(restored.restored.getOrDefault("corrupt-counts", 0L) >= 2, restored.restored.toString());
    }

    @Test
    void aTableWhoseSourceTopicIsItsChangelogIsRestoredFromItUpToTheCommittedOffset() throws Exception {
        BROKER.createTopic("prices", 2);
        final Properties props = props("source-table-app");
        props.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        final Map<String, String> expected = new HashMap<>();
        final List<String> firstPrices = List.of("10", "11", "12", "13", "14", "15", "16", "17", "18", "19");
        producePrices(firstPrices, expected);

        final KafkaStreams first = new KafkaStreams(pricesTable(props), props);
        started.add(first);
        first.start();
        waitFor(() -> expected.equals(pricesIn(first)), "the table to hold every price");
        assertTrue(first.close(Duration.ofSeconds(60)));
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
            final Set<String> topics = admin.listTopics().names().get();
            assertFalse(topics.contains("source-table-app-prices-store-changelog"), topics.toString());
        }

        // Five prices change while the application is down, and its local state is lost.
        producePrices(List.of("20", "21", "22", "23", "24"), expected);
        props.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "DEBUG");
        final KafkaStreams second = new KafkaStreams(pricesTable(props), props);
        started.add(second);
        second.cleanUp();
        final RestoreTally restored = new RestoreTally();
        // The lags and the task's metrics, read from within the restore reports as Kafka Streams' own tests read them.
        final Map<TopicPartition, Long> restoreEnds = new ConcurrentHashMap<>();
        final Map<TopicPartition, LagInfo> lagsAtStart = new ConcurrentHashMap<>();
        final Map<TopicPartition, LagInfo> lagsAtEnd = new ConcurrentHashMap<>();
        final Map<TopicPartition, Long> toRestore = new ConcurrentHashMap<>();
        final Map<TopicPartition, Double> remainingAtStart = new ConcurrentHashMap<>();
        second.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(final TopicPartition partition, final String store, final long start, final long end) {
                restored.onRestoreStart(partition, store, start, end);
                restoreEnds.put(partition, end);
                lagsAtStart.put(partition, second.allLocalStorePartitionLags().get(store).get(partition.partition()));
                toRestore.put(partition, end - start);
                remainingAtStart.put(partition,
                    taskMetric(second, "restore-remaining-records-total", new TaskId(0, partition.partition())));
            }

            @Override
            public void onBatchRestored(final TopicPartition partition, final String store, final long batchEnd,
                                        final long batchSize) {
                restored.onBatchRestored(partition, store, batchEnd, batchSize);
            }

            @Override
            public void onRestoreEnd(final TopicPartition partition, final String store, final long total) {
                restored.onRestoreEnd(partition, store, total);
                lagsAtEnd.put(partition, second.allLocalStorePartitionLags().get(store).get(partition.partition()));
            }
        });
        second.start();
        waitFor(() -> expected.equals(pricesIn(second)), "the restored table to hold every latest price");
        assertEquals(restoreEnds.keySet(), lagsAtStart.keySet());
        assertEquals(restoreEnds.keySet(), lagsAtEnd.keySet());
        restoreEnds.forEach((partition, end) -> {
            final LagInfo atStart = lagsAtStart.get(partition);
            assertEquals(0L, atStart.currentOffsetPosition(), partition + " at its restore's start: " + atStart);
            assertEquals(atStart.endOffsetPosition(), atStart.offsetLag(), partition + ": " + atStart);
            assertEquals(end, lagsAtEnd.get(partition).currentOffsetPosition(), partition + " at its restore's end");
        });
        assertEquals(Set.of("prices-store"), restored.restored.keySet());
        assertEquals(Set.of("prices"), restored.restoredByPartition.keySet().stream().map(TopicPartition::topic)
            .collect(Collectors.toSet()), "the source topic is the changelog");
        // Restore stops at the committed offsets; the five new prices are processed, not restored.
        assertEquals(Long.valueOf(firstPrices.size()), restored.restored.get("prices-store"), restored.restoredByPartition.toString());
        // Each task's restore metrics, as Kafka Streams records them: what is left to restore from the start, counted
        // down to nothing, and the records restored.
        restoreEnds.keySet().forEach(partition -> {
            final TaskId task = new TaskId(0, partition.partition());
            assertEquals((double) toRestore.get(partition), remainingAtStart.get(partition), partition + " at its restore's start");
            assertEquals(0.0, taskMetric(second, "restore-remaining-records-total", task), task + " restored");
            assertEquals((double) restored.restoredByPartition.getOrDefault(partition, 0L), taskMetric(second, "restore-total", task),
                task + "'s restore-total");
        });
    }

    /** Produces {@code prices} (keys k0, k1, …) and records them as the latest {@code expected} ones. */
    private static void producePrices(final List<String> prices, final Map<String, String> expected) throws Exception {
        produce("prices", prices);
        for (int i = 0; i < prices.size(); i++) {
            expected.put("k" + i, prices.get(i));
        }
    }

    private static Topology pricesTable(final Properties props) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.table("prices", Consumed.with(Serdes.String(), Serdes.String()), Materialized.as("prices-store"));
        return builder.build(props);
    }

    @Test
    void everyInstanceOfTheApplicationIsInTheStreamsMetadataOfEachOne() throws Exception {
        BROKER.createTopic("metadata-input", 2);
        final List<String> keys = List.of("k0", "k1", "k2", "k3", "k4", "k5");
        produce("metadata-input", keys);
        final Set<TopicPartition> inputPartitions =
            Set.of(new TopicPartition("metadata-input", 0), new TopicPartition("metadata-input", 1));
        final KafkaStreams first = countingInstance(7071);
        waitFor(() -> hostsAndPartitions(first).equals(Map.of(7071, inputPartitions)),
            "the first instance to own both partitions");

        final KafkaStreams second = countingInstance(7072);
        // A cooperative rebalance takes the partition from the first before it gives it to the second.
        waitFor(() -> hostsAndPartitions(first).size() == 2 && hostsAndPartitions(first).equals(hostsAndPartitions(second))
                && hostsAndPartitions(first).values().stream().flatMap(Set::stream).collect(Collectors.toSet())
                    .equals(inputPartitions),
            "both instances to see both, with the same assignment of both partitions");
        final Map<Integer, Set<TopicPartition>> assignment = hostsAndPartitions(first);
        assertEquals(inputPartitions, assignment.values().stream().flatMap(Set::stream).collect(Collectors.toSet()));
        assertEquals(1, assignment.get(7071).size(), assignment.toString());
        assertEquals(2, first.streamsMetadataForStore("metadata-counts").size());
        for (final String key : keys) {
            final KeyQueryMetadata metadata = first.queryMetadataForKey("metadata-counts", key, Serdes.String().serializer());
            assertEquals(metadata, second.queryMetadataForKey("metadata-counts", key, Serdes.String().serializer()));
            // The instance the metadata names is the one whose store holds the key.
            final KafkaStreams owner = metadata.activeHost().port() == 7071 ? first : second;
            final ReadOnlyKeyValueStore<String, Long> counts = owner.store(StoreQueryParameters.fromNameAndType(
                "metadata-counts", QueryableStoreTypes.<String, Long>keyValueStore()).enableStaleStores());
            waitFor(() -> {
                try {
                    return Long.valueOf(1).equals(counts.get(key));
                } catch (final InvalidStateStoreException stillRestoring) {
                    return false;
                }
            }, "the owner of " + key + " to have counted it");
        }

        assertTrue(second.close(Duration.ofSeconds(60)));
        waitFor(() -> hostsAndPartitions(first).equals(Map.of(7071, inputPartitions)),
            "the remaining instance to own both partitions again, alone");
    }

    private static final List<String> SHUTDOWN_PROCESSED = new CopyOnWriteArrayList<>();

    @Test
    void shutdownApplicationShutsEveryInstanceDownBeforeAnotherProcessesTheRecord() throws Exception {
        BROKER.createTopic("shutdown-input", 2);
        final List<KafkaStreams> instances = new ArrayList<>();
        for (final String name : List.of("first", "second")) {
            final StreamsBuilder builder = new StreamsBuilder();
            builder.stream("shutdown-input", Consumed.with(Serdes.String(), Serdes.String()))
                .process(() -> new Processor<String, String, Void, Void>() {
                    @Override
                    public void process(final Record<String, String> record) {
                        SHUTDOWN_PROCESSED.add(record.value());
                        throw new IllegalStateException("cannot process " + record.value());
                    }
                });
            final Properties props = props("shutdown-app");
            props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(name).toString());
            final KafkaStreams streams = new KafkaStreams(builder.build(), props);
            started.add(streams);
            streams.setUncaughtExceptionHandler(exception -> StreamThreadExceptionResponse.SHUTDOWN_APPLICATION);
            streams.start();
            instances.add(streams);
        }
        waitFor(() -> instances.stream().allMatch(streams -> streams.state() == KafkaStreams.State.RUNNING),
            "both instances to run");

        produce("shutdown-input", List.of("poison"));
        waitFor(() -> instances.stream().allMatch(streams -> streams.state() == KafkaStreams.State.ERROR),
            "every instance to shut down to ERROR");
        assertEquals(List.of("poison"), SHUTDOWN_PROCESSED, "no other instance processed the record again");

        // An instance started after the request runs: the request was for the instances running then.
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("shutdown-input", Consumed.with(Serdes.String(), Serdes.String())).to("shutdown-output");
        final Properties props = props("shutdown-app");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve("later").toString());
        final KafkaStreams later = new KafkaStreams(builder.build(), props);
        started.add(later);
        BROKER.createTopic("shutdown-output", 1);
        later.start();
        waitFor(() -> later.state() == KafkaStreams.State.RUNNING, "an instance started later to run");
    }

    private KafkaStreams countingInstance(final int port) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("metadata-input", Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(Materialized.as("metadata-counts"));
        final Properties props = props("metadata-app");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve("instance-" + port).toString());
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "localhost:" + port);
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        started.add(streams);
        streams.start();
        return streams;
    }

    /** The active partitions of each instance in {@code streams}' metadata, by the port of its endpoint. */
    private static Map<Integer, Set<TopicPartition>> hostsAndPartitions(final KafkaStreams streams) {
        return streams.metadataForAllStreamsClients().stream()
            .collect(Collectors.toMap(metadata -> metadata.hostInfo().port(), StreamsMetadata::topicPartitions));
    }

    /** Every price the source table's store holds, or null while it cannot be queried. */
    private static Map<String, String> pricesIn(final KafkaStreams streams) {
        final Map<String, String> prices = new HashMap<>();
        try {
            final ReadOnlyKeyValueStore<String, String> store =
                streams.store(StoreQueryParameters.fromNameAndType("prices-store", QueryableStoreTypes.keyValueStore()));
            try (KeyValueIterator<String, String> iterator = store.all()) {
                iterator.forEachRemaining(entry -> prices.put(entry.key, entry.value));
            }
        } catch (final InvalidStateStoreException notQueryableYet) {
            return null;
        }
        return prices;
    }

    private static double aliveStreamThreads(final KafkaStreams streams) {
        return streams.metrics().values().stream()
            .filter(metric -> metric.metricName().name().equals("alive-stream-threads"))
            .mapToDouble(metric -> ((Number) metric.metricValue()).doubleValue())
            .findFirst().orElseThrow();
    }

    /**
     * The group metadata of {@code member}, a consumer its engine thread polls on every turn of its loop; empty when
     * that poll was under way, as Kafka's consumer refuses a second thread meanwhile.
     */
    private static Optional<ConsumerGroupMetadata> groupMetadataOf(final Consumer<?, ?> member) {
        try {
            return Optional.of(member.groupMetadata());
        } catch (final ConcurrentModificationException polledMeanwhile) {
            return Optional.empty();
        }
    }

    /** The count of each word of {@code lines}, split as {@link #wordCount} splits them. */
    private static Map<String, Long> countsOf(final List<String> lines) {
        final Map<String, Long> counts = new HashMap<>();
        lines.forEach(line -> Arrays.stream(line.toLowerCase(Locale.ROOT).split("\\W+"))
            .filter(word -> !word.isEmpty())
            .forEach(word -> counts.merge(word, 1L, Long::sum)));
        return counts;
    }

    private static Map<Integer, Long> lagsOf(final Map<Integer, LagInfo> lags) {
        final Map<Integer, Long> offsetLags = new HashMap<>();
        lags.forEach((partition, lag) -> offsetLags.put(partition, lag.offsetLag()));
        return offsetLags;
    }

    /**
     * As in Kafka Streams: a task directory older than {@code state.cleanup.dir.max.age.ms} goes as the client
     * starts, one of a task the client does not have goes once unmodified for {@code state.cleanup.delay.ms},
     * and the directories of the client's own tasks stay.
     */
    @Test
    void taskDirectoriesOfTasksTheClientDoesNotHaveAreDeletedOnceOldEnough() throws Exception {
        BROKER.createTopic("cleanup-input", 1);
        BROKER.createTopic("cleanup-output", 1);
        final List<String> lines = List.of("a b", "b");
        produce("cleanup-input", lines);
        final Path appDir = stateDir.resolve("cleanup-app");
        final Path outdated = leftoverTaskDirectory(appDir, "1_6");
        assertTrue(outdated.toFile().setLastModified(System.currentTimeMillis() - Duration.ofHours(2).toMillis()));
        final Path unassigned = leftoverTaskDirectory(appDir, "1_7");

        final Properties props = props("cleanup-app");
        props.put(StreamsConfig.STATE_CLEANUP_DIR_MAX_AGE_MS_CONFIG, Duration.ofHours(1).toMillis());
        final KafkaStreams first = new KafkaStreams(wordCount("cleanup-input", "cleanup-output"), props);
        started.add(first);
        first.start();
        assertFalse(Files.exists(outdated), "older than the maximum age, deleted as the client started");
        assertTrue(Files.exists(unassigned), "younger than the maximum age, and the cleanup delay is 10 minutes");
        assertEquals(Map.of("a", 1L, "b", 2L), consumeLatestCounts("cleanup-output", Map.of("a", 1L, "b", 2L)));
        assertTrue(first.close(Duration.ofSeconds(60)));

        final long cleanupDelayMs = 500;
        props.remove(StreamsConfig.STATE_CLEANUP_DIR_MAX_AGE_MS_CONFIG);
        props.put(StreamsConfig.STATE_CLEANUP_DELAY_MS_CONFIG, cleanupDelayMs);
        final KafkaStreams second = new KafkaStreams(wordCount("cleanup-input", "cleanup-output"), props);
        started.add(second);
        second.start();
        waitFor(() -> !Files.exists(unassigned), "the directory of task 1_7, which the client does not have, to go");
        // The cleaner has run; it must not take the client's own tasks, however long unmodified.
        TimeUnit.MILLISECONDS.sleep(4 * cleanupDelayMs);
        assertTrue(Files.isDirectory(appDir.resolve("1_0")), "the directory of the counting task, 1_0");
        final ReadOnlyKeyValueStore<String, Long> counts =
            second.store(StoreQueryParameters.fromNameAndType(COUNTS, QueryableStoreTypes.keyValueStore()));
        assertEquals(2L, counts.get("b"));
    }

    private static Path leftoverTaskDirectory(final Path appDir, final String task) throws IOException {
        final Path directory = Files.createDirectories(appDir.resolve(task));
        Files.writeString(directory.resolve("leftover"), "left by an earlier assignment");
        return directory;
    }

    /** The result of the one partition queried, failing the test with the query's failure if there is one. */
    private static <R> R onlyResult(final StateQueryResult<R> result) {
        assertEquals(1, result.getPartitionResults().size(), result.getPartitionResults().toString());
        final QueryResult<R> partitionResult = result.getPartitionResults().values().iterator().next();
        assertTrue(partitionResult.isSuccess(), () -> partitionResult.getFailureReason() + ": " + partitionResult.getFailureMessage());
        return partitionResult.getResult();
    }

    private static void produce(final String topic, final List<String> values) throws Exception {
        produce(topic, values, Map.of());
    }

    private static void produce(final String topic, final List<String> values, final Map<String, String> settings)
        throws Exception {
        final Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        config.putAll(settings);
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            int i = 0;
            for (final String value : values) {
                producer.send(new ProducerRecord<>(topic, "k" + i++, value)).get();
            }
        }
    }

    private static <V> KafkaConsumer<String, V> consumer(final Class<?> valueDeserializer) {
        final Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "verifier-" + System.nanoTime());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, valueDeserializer);
        return new KafkaConsumer<>(config);
    }

    private static Map<String, Long> consumeLatestCounts(final String topic, final Map<String, Long> expected) {
        final Map<String, Long> latest = new HashMap<>();
        try (KafkaConsumer<String, Long> consumer = consumer(LongDeserializer.class)) {
            consumer.subscribe(List.of(topic));
            final long deadline = System.nanoTime() + WAIT.toNanos();
            while (!latest.equals(expected) && System.nanoTime() < deadline) {
                for (final ConsumerRecord<String, Long> record : consumer.poll(Duration.ofMillis(200))) {
                    assertNotNull(record.value());
                    latest.put(record.key(), record.value());
                }
            }
        }
        return latest;
    }

    /** Polls {@code consumer} into {@code values} until they hold {@code count} values. */
    private static void consumeUntil(final KafkaConsumer<String, String> consumer, final List<String> values,
                                     final int count) {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (values.size() < count && System.nanoTime() < deadline) {
            consumer.poll(Duration.ofMillis(200)).forEach(record -> values.add(record.value()));
        }
        assertEquals(count, values.size(), values.toString());
    }
}
