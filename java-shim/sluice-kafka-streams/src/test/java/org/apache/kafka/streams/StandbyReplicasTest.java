package org.apache.kafka.streams;

import static org.apache.kafka.streams.EngineTestSupport.taskMetric;
import static org.apache.kafka.streams.EngineTestSupport.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Standby replicas on Sluice's runtime, as Kafka Streams keeps them with one standby replica
 * ({@code num.standby.replicas=1} in a classic group, the group's {@code streams.num.standby.replicas=1} in a
 * streams group): of two
 * instances each keeps a replica of the other's task, which follows the task's changelog (heard by the
 * {@link StandbyUpdateListener}), answers queries that accept stale stores and is named in the streams metadata
 * as a standby host; when the other instance leaves, the
 * replica's task becomes active over the state it kept, restoring only what it had not read.
 */
class StandbyReplicasTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final String STORE = "counts";

    @TempDir
    Path stateDirs;

    private final List<AutoCloseable> closing = new ArrayList<>();
    /** Each word's count of the records the test wrote, by input partition. */
    private final Map<Integer, Map<String, Long>> written = new ConcurrentHashMap<>();

    @AfterEach
    void closeAll() throws Exception {
        for (final AutoCloseable closeable : closing) {
            closeable.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "streams"})
    void aStandbyReplicaFollowsItsChangelogAnswersStaleQueriesAndIsPromotedWithoutRestoringItsState(final String protocol)
            throws Exception {
        final String app = "standby-replicas-" + protocol;
        BROKER.createTopic(app + "-input", 2);
        final Properties standbys = new Properties();
        standbys.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        // Task-level metrics of standby tasks are recorded at DEBUG.
        standbys.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "DEBUG");
        if (protocol.equals("streams")) {
            // A streams group's replicas are the group's setting, which the broker's assignor reads.
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, app),
                    List.of(new AlterConfigOp(new ConfigEntry("streams.num.standby.replicas", "1"),
                        AlterConfigOp.OpType.SET)))).all().get();
            }
        } else {
            standbys.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
        }
        final StandbyUpdates firstUpdates = new StandbyUpdates();
        final KafkaStreams first = start(app, "first", 7081, firstUpdates, new RestoreStarts(), standbys);
        waitFor(() -> activeTasks(first).size() == 2 && first.state() == KafkaStreams.State.RUNNING,
            "the first instance to run both tasks");
        final StandbyUpdates updates = new StandbyUpdates();
        final RestoreStarts restores = new RestoreStarts();
        final KafkaStreams second = start(app, "second", 7082, updates, restores, standbys);
        waitFor(() -> activeTasks(first).size() == 1 && activeTasks(second).size() == 1
            && standbyTasks(first).size() == 1 && standbyTasks(second).size() == 1
            && first.state() == KafkaStreams.State.RUNNING && second.state() == KafkaStreams.State.RUNNING,
            "each instance to run one task and keep a standby replica of the other");
        final int replicated = activeTasks(first).iterator().next().partition();
        assertEquals(Set.of(new TaskId(0, replicated)), standbyTasks(second), "the second keeps the first's task");
        final TopicPartition replicatedInput = new TopicPartition(app + "-input", replicated);
        waitFor(() -> first.metadataForAllStreamsClients().stream().anyMatch(host -> host.hostInfo().port() == 7082
                && host.standbyTopicPartitions().equals(Set.of(replicatedInput))),
            "the streams metadata to name the second instance as the standby host of the first's task");

        produceWords(app, 2000);
        final Map<String, Long> all = allWritten();
        assertEquals(all, countsUntil(app, all));
        waitFor(() -> written.get(replicated).equals(staleCounts(second, replicated)),
            "the standby replica's store to hold the first instance's counts");
        // Interactive queries v2 read the replica unless they require an active task, which it refuses as Kafka
        // Streams' standby tasks do.
        final String someWord = written.get(replicated).keySet().iterator().next();
        final StateQueryRequest<Long> query = StateQueryRequest.inStore(STORE)
            .withQuery(KeyQuery.<String, Long>withKey(someWord)).withPartitions(Set.of(replicated));
        assertEquals(written.get(replicated).get(someWord), second.query(query).getPartitionResults().get(replicated).getResult());
        final QueryResult<Long> refused = second.query(query.requireActive()).getPartitionResults().get(replicated);
        assertEquals(FailureReason.NOT_ACTIVE, refused.getFailureReason());
        assertEquals("Query requires a running active task, but partition was in state RUNNING and was not active.",
            refused.getFailureMessage());
        final TopicPartition changelog = new TopicPartition(app + "-" + STORE + "-changelog", replicated);
        assertTrue(updates.started.containsKey(changelog), "the standby update listener heard the start");
        assertTrue(updates.loaded.getOrDefault(changelog, 0L) > 0, "the standby update listener heard batches");
        // As Kafka's restore consumer reports it: caught up, past the last transaction's commit marker.
        waitFor(() -> Double.valueOf(0).equals(restoreConsumerLag(second, changelog)),
            "the restore consumer of the second instance to report no records-lag on the followed changelog");
        // The task's metric is recorded as each batch is written, the listener told right after.
        waitFor(() -> taskMetric(second, "update-total", new TaskId(0, replicated)) == updates.loaded.get(changelog),
            "the standby task's update-total to count the records the listener heard of");
        restores.starts.clear();

        first.close(Duration.ofSeconds(60));
        waitFor(() -> activeTasks(second).size() == 2 && second.state() == KafkaStreams.State.RUNNING,
            "the second instance to take the first's task");
        waitFor(() -> updates.suspended.containsKey(changelog), "the standby update listener to hear the promotion");
        assertEquals(StandbyUpdateListener.SuspendReason.PROMOTED, updates.suspended.get(changelog));
        final Long restoredFrom = restores.starts.get(changelog);
        assertTrue(restoredFrom != null && restoredFrom > 0, "the promoted task restores only what its replica had not read, from offset "
            + restoredFrom + " on, not its whole changelog");

        produceWords(app, 400);
        final Map<String, Long> afterPromotion = allWritten();
        assertEquals(afterPromotion, countsUntil(app, afterPromotion));
    }

    /**
     * A new instance that lags more than {@code acceptable.recovery.lag} behind on a stateful task gets a warm-up
     * replica of it, not the task: the task moves only once the warm-up caught up, at a probing rebalance, as
     * Kafka Streams' high-availability assignor decides from the offset sums the members report.
     */
    @Test
    void aNewInstanceWarmsTheStateUpBeforeATaskMovesToIt() throws Exception {
        final String app = "warm-up-replicas";
        BROKER.createTopic(app + "-input", 2);
        final Properties warmUps = new Properties();
        warmUps.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 0);
        warmUps.put(StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG, 5L);
        // Kafka Streams' shortest probing interval.
        warmUps.put(StreamsConfig.PROBING_REBALANCE_INTERVAL_MS_CONFIG, 60_000L);
        final KafkaStreams first = start(app, "first", 7083, new StandbyUpdates(), new RestoreStarts(), warmUps);
        waitFor(() -> activeTasks(first).size() == 2 && first.state() == KafkaStreams.State.RUNNING,
            "the first instance to run both tasks");
        produceWords(app, 2000);
        final Map<String, Long> all = allWritten();
        assertEquals(all, countsUntil(app, all));

        final StandbyUpdates updates = new StandbyUpdates();
        final KafkaStreams second = start(app, "second", 7084, updates, new RestoreStarts(), warmUps);
        waitFor(() -> !standbyTasks(second).isEmpty() && second.state() == KafkaStreams.State.RUNNING,
            "the new instance to warm a task up");
        assertEquals(Set.of(), activeTasks(second), "no task moved to the instance before its state caught up");
        assertEquals(2, activeTasks(first).size());
        waitFor(() -> activeTasks(first).size() == 1 && activeTasks(second).size() == 1
                && first.state() == KafkaStreams.State.RUNNING && second.state() == KafkaStreams.State.RUNNING,
            "a probing rebalance to move a task to the caught-up instance");
        assertTrue(updates.suspended.containsValue(StandbyUpdateListener.SuspendReason.PROMOTED),
            "the warm-up replica was promoted: " + updates.suspended);

        produceWords(app, 400);
        final Map<String, Long> afterMove = allWritten();
        assertEquals(afterMove, countsUntil(app, afterMove));
    }

    /**
     * A standby replica of a table whose changelog is its source topic (the topology optimization reuses the topic)
     * reads the topic only as far as the group committed, as Kafka Streams' replica does: while the active task
     * processes nothing, the replica holds nothing the task would process again, and it reads on as the task
     * commits; promoted, its task keeps the store and restores nothing.
     */
    @Test
    void aStandbyReplicaOfASourceTableReadsItsTopicOnlyAsFarAsTheGroupCommitted() throws Exception {
        final String app = "standby-source-table";
        BROKER.createTopic(app + "-input", 2);
        final Properties standbys = new Properties();
        standbys.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
        standbys.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE);
        final KafkaStreams first = start(app, "first", 7085, new StandbyUpdates(), new RestoreStarts(), standbys,
            tableTopology(app, standbys));
        waitFor(() -> activeTasks(first).size() == 2 && first.state() == KafkaStreams.State.RUNNING,
            "the first instance to run both tasks");
        final StandbyUpdates updates = new StandbyUpdates();
        final RestoreStarts restores = new RestoreStarts();
        final KafkaStreams second = start(app, "second", 7086, updates, restores, standbys,
            tableTopology(app, standbys));
        waitFor(() -> activeTasks(first).size() == 1 && activeTasks(second).size() == 1
            && standbyTasks(second).size() == 1 && first.state() == KafkaStreams.State.RUNNING
            && second.state() == KafkaStreams.State.RUNNING,
            "each instance to run one task, the second keeping a standby replica of the first's");
        final TopicPartition source = new TopicPartition(app + "-input", activeTasks(first).iterator().next().partition());

        produceTo(source, 0, 100);
        waitFor(() -> committedOffset(app, source) == 100 && updates.readTo.getOrDefault(source, -1L) == 100,
            "the replica to read what the active task committed");
        first.pause();
        produceTo(source, 100, 100);
        // Ten commit intervals: the paused task commits nothing, and the replica must not read what it did not commit.
        Thread.sleep(1000);
        assertEquals(100, committedOffset(app, source), "the paused task committed nothing");
        assertEquals(100L, updates.readTo.get(source), "the replica read only what the group committed");
        final LagInfo replicaLag = second.allLocalStorePartitionLags().get("table").get(source.partition());
        assertEquals(100, replicaLag.currentOffsetPosition(), "the replica's position in the topic it reuses");
        assertEquals(200, replicaLag.endOffsetPosition());

        first.resume();
        waitFor(() -> committedOffset(app, source) == 200 && updates.readTo.getOrDefault(source, -1L) == 200,
            "the replica to read on as the active task commits");
        restores.starts.clear();
        first.close(Duration.ofSeconds(60));
        waitFor(() -> activeTasks(second).size() == 2 && second.state() == KafkaStreams.State.RUNNING,
            "the second instance to take the first's task");
        assertEquals(200L, restores.starts.get(source), "the promoted task kept the replica's store, restoring nothing");
    }

    /**
     * A standby replica whose task becomes active on its instance hands its stores over open, as Kafka Streams
     * recycles a standby task: an in-memory store keeps what the replica read, and the task restores nothing.
     */
    @Test
    void aPromotedStandbyReplicaHandsItsInMemoryStoreOverAndItsTaskRestoresNothing() throws Exception {
        final String app = "standby-in-memory";
        BROKER.createTopic(app + "-input", 2);
        final Properties standbys = new Properties();
        standbys.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
        final KafkaStreams first = start(app, "first", 7087, new StandbyUpdates(), new RestoreStarts(), standbys,
            countTopology(app, Materialized.as(Stores.inMemoryKeyValueStore(STORE))));
        waitFor(() -> activeTasks(first).size() == 2 && first.state() == KafkaStreams.State.RUNNING,
            "the first instance to run both tasks");
        final StandbyUpdates updates = new StandbyUpdates();
        final RestoreStarts restores = new RestoreStarts();
        final KafkaStreams second = start(app, "second", 7088, updates, restores, standbys,
            countTopology(app, Materialized.as(Stores.inMemoryKeyValueStore(STORE))));
        waitFor(() -> activeTasks(first).size() == 1 && standbyTasks(second).size() == 1
            && first.state() == KafkaStreams.State.RUNNING && second.state() == KafkaStreams.State.RUNNING,
            "the second instance to keep a standby replica of the first's task");
        final int replicated = activeTasks(first).iterator().next().partition();
        final TopicPartition changelog = new TopicPartition(app + "-" + STORE + "-changelog", replicated);
        produceWords(app, 1000);
        final Map<String, Long> all = allWritten();
        assertEquals(all, countsUntil(app, all));
        waitFor(() -> Double.valueOf(0).equals(restoreConsumerLag(second, changelog)),
            "the replica to read the whole changelog");

        first.close(Duration.ofSeconds(60));
        waitFor(() -> activeTasks(second).size() == 2 && second.state() == KafkaStreams.State.RUNNING,
            "the second instance to take the first's task");
        assertEquals(StandbyUpdateListener.SuspendReason.PROMOTED, updates.suspended.get(changelog));
        assertEquals(0L, restores.totals.get(changelog), "the promoted task restored nothing into the store it took over");
        assertEquals(written.get(replicated), staleCounts(second, replicated));
    }

    private KafkaStreams start(final String app, final String instance, final int port,
                               final StandbyUpdateListener updates, final StateRestoreListener restores,
                               final Properties overrides) {
        return start(app, instance, port, updates, restores, overrides, countTopology(app, Materialized.as(STORE)));
    }

    /** Each word's count in {@code store}, written to the counts topic. */
    private static Topology countTopology(final String app,
                                          final Materialized<String, Long, KeyValueStore<Bytes, byte[]>> store) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(app + "-input", Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(store)
            .toStream()
            .to(app + "-counts", Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /** A table of the input topic, materialised, and its changes written on. */
    private static Topology tableTopology(final String app, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.table(app + "-input", Consumed.with(Serdes.String(), Serdes.String()), Materialized.as("table"))
            .toStream()
            .to(app + "-table-changes", Produced.with(Serdes.String(), Serdes.String()));
        return builder.build(config);
    }

    private KafkaStreams start(final String app, final String instance, final int port,
                               final StandbyUpdateListener updates, final StateRestoreListener restores,
                               final Properties overrides, final Topology topology) {
        final Properties props = EngineTestSupport.props(BROKER, app, stateDirs.resolve(instance));
        props.put(StreamsConfig.CLIENT_ID_CONFIG, app + "-" + instance);
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "localhost:" + port);
        props.putAll(overrides);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        final KafkaStreams streams = new KafkaStreams(topology, props);
        streams.setStandbyUpdateListener(updates);
        streams.setGlobalStateRestoreListener(restores);
        closing.add(() -> streams.close(Duration.ofSeconds(60)));
        streams.start();
        return streams;
    }

    /** The {@code records-lag} of {@code partition} a restore consumer of {@code streams} reports, or null. */
    private static Object restoreConsumerLag(final KafkaStreams streams, final TopicPartition partition) {
        return streams.metrics().entrySet().stream()
            .filter(metric -> metric.getKey().name().equals("records-lag")
                && metric.getKey().tags().get("client-id").endsWith("-restore-consumer")
                && partition.topic().equals(metric.getKey().tags().get("topic"))
                && String.valueOf(partition.partition()).equals(metric.getKey().tags().get("partition")))
            .map(metric -> metric.getValue().metricValue())
            .findFirst().orElse(null);
    }

    private static Set<TaskId> activeTasks(final KafkaStreams streams) {
        return streams.metadataForLocalThreads().stream().flatMap(thread -> thread.activeTasks().stream())
            .map(TaskMetadata::taskId).collect(Collectors.toSet());
    }

    private static Set<TaskId> standbyTasks(final KafkaStreams streams) {
        return streams.metadataForLocalThreads().stream().flatMap(thread -> thread.standbyTasks().stream())
            .map(TaskMetadata::taskId).collect(Collectors.toSet());
    }

    /** The counts the store of {@code partition} holds on {@code streams}, read from a standby replica if need be. */
    private static Map<String, Long> staleCounts(final KafkaStreams streams, final int partition) {
        final ReadOnlyKeyValueStore<String, Long> store = streams.store(StoreQueryParameters
            .fromNameAndType(STORE, QueryableStoreTypes.<String, Long>keyValueStore())
            .enableStaleStores()
            .withPartition(partition));
        final Map<String, Long> counts = new HashMap<>();
        try (KeyValueIterator<String, Long> all = store.all()) {
            all.forEachRemaining(entry -> counts.put(entry.key, entry.value));
        }
        return counts;
    }

    /** Writes {@code count} records to {@code partition}, keyed {@code k<first>}, {@code k<first + 1>} and so on. */
    private static void produceTo(final TopicPartition partition, final int first, final int count) throws Exception {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int i = first; i < first + count; i++) {
                producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), "k" + i, "v" + i)).get();
            }
        }
    }

    /** The application's committed offset of {@code partition}; -1 for none. */
    private static long committedOffset(final String app, final TopicPartition partition) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
            final OffsetAndMetadata committed =
                admin.listConsumerGroupOffsets(app).partitionsToOffsetAndMetadata().get().get(partition);
            return committed == null ? -1 : committed.offset();
        } catch (final Exception e) {
            throw new AssertionError("reading the committed offset of " + partition, e);
        }
    }

    /** Writes {@code count} records keyed by 20 words, noting each word's count by the partition it went to. */
    private void produceWords(final String app, final int count) throws Exception {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                final String word = "word-" + (i % 20);
                final RecordMetadata sent = producer.send(new ProducerRecord<>(app + "-input", word, word)).get();
                written.computeIfAbsent(sent.partition(), p -> new ConcurrentHashMap<>()).merge(word, 1L, Long::sum);
            }
        }
    }

    private Map<String, Long> allWritten() {
        final Map<String, Long> all = new HashMap<>();
        written.values().forEach(all::putAll);
        return all;
    }

    /** The latest count of each word in the output once they equal {@code expected}, or as they stand at the end. */
    private static Map<String, Long> countsUntil(final String app, final Map<String, Long> expected) {
        return EngineTestSupport.latestCountsUntil(BROKER, app + "-counts", expected);
    }

    /** What a {@link StandbyUpdateListener} heard, by changelog partition. */
    private static final class StandbyUpdates implements StandbyUpdateListener {
        final Map<TopicPartition, Long> started = new ConcurrentHashMap<>();
        final Map<TopicPartition, Long> loaded = new ConcurrentHashMap<>();
        final Map<TopicPartition, SuspendReason> suspended = new ConcurrentHashMap<>();
        /** The next offset each replica reads. */
        final Map<TopicPartition, Long> readTo = new ConcurrentHashMap<>();

        @Override
        public void onUpdateStart(final TopicPartition partition, final String store, final long startingOffset) {
            started.put(partition, startingOffset);
            readTo.put(partition, startingOffset);
        }

        @Override
        public void onBatchLoaded(final TopicPartition partition, final String store, final TaskId task,
                                  final long batchEndOffset, final long batchSize, final long currentEndOffset) {
            loaded.merge(partition, batchSize, Long::sum);
            readTo.put(partition, batchEndOffset + 1);
        }

        @Override
        public void onUpdateSuspended(final TopicPartition partition, final String store, final long storeOffset,
                                      final long currentEndOffset, final SuspendReason reason) {
            suspended.put(partition, reason);
        }
    }

    /** Where each changelog partition last started restoring, and how many records it restored when it ended. */
    private static final class RestoreStarts implements StateRestoreListener {
        final Map<TopicPartition, Long> starts = new ConcurrentHashMap<>();
        final Map<TopicPartition, Long> totals = new ConcurrentHashMap<>();

        @Override
        public void onRestoreStart(final TopicPartition partition, final String store, final long start, final long end) {
            starts.put(partition, start);
        }

        @Override
        public void onBatchRestored(final TopicPartition partition, final String store, final long batchEnd,
                                    final long batchSize) {
        }

        @Override
        public void onRestoreEnd(final TopicPartition partition, final String store, final long total) {
            totals.put(partition, total);
        }
    }
}
