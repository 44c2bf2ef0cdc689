package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.ApacheKafkaStreams;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.Task;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stream threads' group members against a real broker, with Kafka Streams' own assignor deciding: a word count
 * (sub-topology 0 stateless, 1 counting into a store) over four input partitions, so eight tasks. Two clients
 * share the tasks evenly and hold standbys of each other's stateful tasks; the offset sums a client reports keep
 * a stateful task where its state is and give a client without it warm-up tasks; a member shares one group with
 * an instance of Apache Kafka Streams 4.4.0, whose leader assigns to it.
 */
class KafkaStreamsGroupMemberTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int PARTITIONS = 4;
    private static final String STORE = "counts";
    private static final Set<TaskId> STATELESS = tasks(0);
    private static final Set<TaskId> STATEFUL = tasks(1);

    @TempDir
    Path stateDir;

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    @Test
    void twoClientsShareTheTasksAndHoldStandbysOfEachOthersState() {
        final String app = "member-standbys";
        BROKER.createTopic(app + "-input", PARTITIONS);
        final Map<String, String> overrides = Map.of(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, "1");
        final Client a = client(app, "a", 7001, overrides, Map::of);
        final Client b = client(app, "b", 7002, overrides, Map::of);

        pollUntil(() -> a.assigned() && b.assigned() && a.active.size() == 4 && b.active.size() == 4
            && union(a.active.keySet(), b.active.keySet()).size() == 8, a, b);

        assertEquals(union(STATELESS, STATEFUL), union(a.active.keySet(), b.active.keySet()));
        assertEquals(intersect(STATEFUL, b.active.keySet()), a.standby.keySet(), "a's standbys: b's stateful tasks");
        assertEquals(intersect(STATEFUL, a.active.keySet()), b.standby.keySet(), "b's standbys: a's stateful tasks");
        for (final Map.Entry<TaskId, Set<TopicPartition>> task : a.active.entrySet()) {
            assertEquals(Set.of(new TopicPartition(task.getKey().subtopology() == 0 ? app + "-input" : app + "-" + STORE
                + "-repartition", task.getKey().partition())), task.getValue(), "input partitions of " + task.getKey());
        }
        // The leader made the internal topics as Kafka Streams' leader does.
        try (Admin admin = admin()) {
            final Set<String> topics = admin.listTopics().names().get();
            assertTrue(topics.containsAll(Set.of(app + "-" + STORE + "-repartition", app + "-" + STORE + "-changelog")),
                topics.toString());
        } catch (final Exception e) {
            throw new AssertionError(e);
        }
        // Every client's endpoint and partitions reach interactive queries' metadata.
        final Set<HostInfo> hosts = a.metadata.allMetadataForStore(STORE).stream().map(StreamsMetadata::hostInfo)
            .collect(Collectors.toSet());
        assertEquals(Set.of(new HostInfo("a", 7001), new HostInfo("b", 7002)), hosts);
        assertEquals(4, b.metadata.getLocalMetadata().topicPartitions().size(), b.metadata.getLocalMetadata().toString());
        assertTrue(a.groupGeneration() > 0 && a.groupGeneration() == b.groupGeneration(), "one generation for both members");
    }

    /**
     * Under the cooperative protocol tasks move in two rebalances: the first takes them from their owner, the
     * follow-up gives them to the new member. Both assignments of the first rebalance say the follow-up is due (a
     * client reports RUNNING only after it); the settled ones do not.
     */
    @Test
    void assignmentsThatMoveTasksCallForAFollowUpRebalanceAndSettledOnesDoNot() {
        final String app = "member-follow-up";
        BROKER.createTopic(app + "-input", PARTITIONS);
        final Client a = client(app, "a", 7001, Map.of(), Map::of);
        pollUntil(() -> a.assigned() && a.active.size() == 8 && !a.followUpDue, a);

        final Client b = client(app, "b", 7002, Map.of(), Map::of);
        pollUntil(() -> b.assigned() && a.active.size() == 4 && b.active.size() == 4
            && union(a.active.keySet(), b.active.keySet()).size() == 8 && !a.followUpDue && !b.followUpDue, a, b);

        assertEquals(new Assignment(0, true), b.history.get(0),
            "b's first assignment: nothing yet, the tasks come in the follow-up");
        assertTrue(a.history.contains(new Assignment(4, true)), "a gave four tasks up and rejoined: " + a.history);
    }

    @Test
    void offsetSumsKeepStatefulTasksWhereTheirStateIsAndGiveANewClientWarmUps() throws Exception {
        final String app = "member-warmups";
        BROKER.createTopic(app + "-input", PARTITIONS);
        final Map<String, String> overrides = Map.of(StreamsConfig.ACCEPTABLE_RECOVERY_LAG_CONFIG, "10",
            StreamsConfig.MAX_WARMUP_REPLICAS_CONFIG, "2");
        // a runs every stateful task it holds, which Kafka Streams reports as the latest offset.
        final Map<TaskId, Long> aSums = new HashMap<>();
        final Client a = client(app, "a", 7001, overrides, () -> Map.copyOf(aSums));
        pollUntil(() -> a.assigned() && a.active.size() == 8, a);
        STATEFUL.forEach(task -> aSums.put(task, Task.LATEST_OFFSET));
        fillChangelog(app, 100);

        // b holds the state of 1_0 and 1_1 up to their changelogs' ends, and none of the others.
        final Client b = client(app, "b", 7002, overrides,
            () -> Map.of(new TaskId(1, 0), 100L, new TaskId(1, 1), 100L));
        pollUntil(() -> b.assigned() && union(a.active.keySet(), b.active.keySet()).size() == 8
            && intersect(a.active.keySet(), b.active.keySet()).isEmpty() && !b.active.isEmpty(), a, b);

        final Set<TaskId> bStateful = intersect(STATEFUL, b.active.keySet());
        assertTrue(!bStateful.isEmpty() && Set.of(new TaskId(1, 0), new TaskId(1, 1)).containsAll(bStateful),
            "b runs only stateful tasks whose state it holds: " + b.active.keySet());
        assertTrue(a.active.keySet().containsAll(Set.of(new TaskId(1, 2), new TaskId(1, 3))), a.active.keySet().toString());
        // Without standby replicas configured, b's standbys are warm-ups of stateful tasks it is behind on.
        assertTrue(!b.standby.isEmpty() && Set.of(new TaskId(1, 2), new TaskId(1, 3)).containsAll(b.standby.keySet()),
            b.standby.toString());
        assertEquals(Set.of(), a.standby.keySet());
        assertEquals(8, a.active.size() + b.active.size());
    }

    @Test
    void aMemberSharesAGroupWithApacheKafkaStreams() throws Exception {
        final String app = "member-with-apache";
        BROKER.createTopic(app + "-input", PARTITIONS);
        final Properties props = props(app, "apache", 7001, Map.of());
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve("apache").toString());
        final ApacheKafkaStreams apache = new ApacheKafkaStreams(topology(app), props);
        closing.add(() -> apache.close(Duration.ofSeconds(30)));
        apache.start();
        pollUntil(() -> apache.state() == KafkaStreams.State.RUNNING && activeTasks(apache).size() == 8);

        final Client member = client(app, "sluice", 7002, Map.of(), Map::of);
        pollUntil(() -> member.assigned() && !member.active.isEmpty() && apache.state() == KafkaStreams.State.RUNNING
            && intersect(activeTasks(apache), member.active.keySet()).isEmpty()
            && union(activeTasks(apache), member.active.keySet()).size() == 8, member);

        assertEquals(union(STATELESS, STATEFUL), union(activeTasks(apache), member.active.keySet()));
        final Set<HostInfo> hosts = apache.metadataForAllStreamsClients().stream().map(StreamsMetadata::hostInfo)
            .collect(Collectors.toSet());
        assertEquals(Set.of(new HostInfo("apache", 7001), new HostInfo("sluice", 7002)), hosts);
    }

    /**
     * A topic a pattern source matched is deleted before the engine matches the patterns again, so the member
     * still subscribes to it: the assignor finds a source topic missing, and the member goes on with the topics
     * that are left instead of failing, as a Kafka Streams consumer subscribed with the pattern would.
     */
    @Test
    void aMatchedTopicDeletedBeforeThePatternIsMatchedAgainIsLeftOut() {
        final String app = "member-pattern";
        BROKER.createTopic(app + "-in-b", 2);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(Pattern.compile(app + "-in-[a-z]")).to(app + "-out");
        final Client client = new Client(new StreamsConfig(props(app, "a", 7001, Map.of())), builder.build(),
            new HostInfo("a", 7001), Map::of);
        client.member.subscribe(List.of(app + "-in-b"));
        pollUntil(() -> client.assigned() && client.active.size() == 2 && !client.followUpDue, client);
        final int settled = client.history.size();

        // The engine still names app-in-a, matched before it was deleted.
        client.member.subscribe(List.of(app + "-in-a", app + "-in-b"));
        pollUntil(() -> client.history.size() > settled + 1 && client.active.size() == 2 && !client.followUpDue, client);

        assertEquals(new Assignment(0, true), client.history.get(settled), "the assignment that found the topic missing");
        assertEquals(Set.of(new TopicPartition(app + "-in-b", 0), new TopicPartition(app + "-in-b", 1)),
            client.active.values().stream().flatMap(Set::stream).collect(Collectors.toSet()));
    }

    @Test
    void theEngineReadsTheGroupsCommittedOffsetsThroughTheMember() {
        final String app = "member-committed";
        BROKER.createTopic(app + "-input", PARTITIONS);
        final Client client = client(app, "a", 7001, Map.of(), Map::of);
        pollUntil(() -> client.assigned() && !client.followUpDue, client);
        final TopicPartition committed = new TopicPartition(app + "-input", 0);
        final TopicPartition uncommitted = new TopicPartition(app + "-input", 1);
        client.member.commit(Map.of(committed, new OffsetAndMetadata(5, "stream time")));
        final EngineGroupMember engineMember = new EngineGroupMember();
        engineMember.use(client.member);

        final Map<TopicPartition, OffsetAndMetadata> asked = new LinkedHashMap<>();
        asked.put(committed, null);
        asked.put(uncommitted, null);
        final Map<TopicPartition, OffsetAndMetadata> answer = RuntimeFraming.readInputs(engineMember.committed(RuntimeFraming.inputs(asked)));

        final Map<TopicPartition, OffsetAndMetadata> expected = new LinkedHashMap<>();
        expected.put(committed, new OffsetAndMetadata(5, "stream time"));
        expected.put(uncommitted, null);
        assertEquals(expected, answer);
    }

    @Test
    void aCommittedOffsetsReadTheCoordinatorDoesNotAnswerInTimeIsAnsweredWithNull() throws IOException {
        final int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        final String app = "member-committed-timeout";
        final Client client = client(app, "a", 7001, Map.of(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + closedPort,
            StreamsConfig.consumerPrefix("default.api.timeout.ms"), "1000"), Map::of);
        final EngineGroupMember engineMember = new EngineGroupMember();
        engineMember.use(client.member);
        final Map<TopicPartition, OffsetAndMetadata> asked = new LinkedHashMap<>();
        asked.put(new TopicPartition(app + "-input", 0), null);

        assertNull(engineMember.committed(RuntimeFraming.inputs(asked)));
    }

    /** How many active tasks an assignment gave, and whether it called for a follow-up rebalance. */
    private record Assignment(int activeTasks, boolean followUpDue) { }

    /** One client of the application, as one stream thread's member, and what its listener last heard. */
    private final class Client implements KafkaStreamsGroupMember.Listener {
        final StreamsMetadataState metadata;
        final KafkaStreamsGroupMember member;
        volatile Map<TaskId, Set<TopicPartition>> active = Map.of();
        volatile Map<TaskId, Set<TopicPartition>> standby = Map.of();
        int assignments;
        /** Whether the last assignment called for a follow-up rebalance. */
        boolean followUpDue;
        final List<Assignment> history = new ArrayList<>();

        Client(final StreamsConfig config, final Topology topology, final HostInfo host,
               final java.util.function.Supplier<Map<TaskId, Long>> offsetSums) {
            final TopologyMetadata topologyMetadata = new TopologyMetadata(TaskRunnerFixture.internalBuilder(topology), config);
            topologyMetadata.buildAndRewriteTopology();
            metadata = new StreamsMetadataState(topologyMetadata, host, new LogContext());
            final Admin admin = admin();
            closing.add(admin);
            member = KafkaStreamsGroupMember.create(config, topologyMetadata, new ProcessId(UUID.randomUUID()),
                config.getString(StreamsConfig.CLIENT_ID_CONFIG) + "-StreamThread-1", 1, admin, metadata, offsetSums,
                Map::of, this, Time.SYSTEM);
            closing.add(member);
            member.subscribe(topologyMetadata.allFullSourceTopicNames());
        }

        boolean assigned() {
            return assignments > 0;
        }

        int groupGeneration() {
            return member.groupMetadata().generationId();
        }

        @Override
        public void revoked(final Set<TopicPartition> partitions) {
            active = active.entrySet().stream().filter(task -> task.getValue().stream().noneMatch(partitions::contains))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        }

        @Override
        public void lost(final Set<TopicPartition> partitions) {
            active = Map.of();
        }

        @Override
        public void assigned(final Map<TaskId, Set<TopicPartition>> active, final Map<TaskId, Set<TopicPartition>> standby,
                             final boolean followUpDue) {
            this.active = active;
            this.standby = standby;
            assignments++;
            this.followUpDue = followUpDue;
            history.add(new Assignment(active.size(), followUpDue));
        }

        @Override
        public void applicationShutdownRequested() {
            throw new AssertionError("no client asked for a shutdown");
        }
    }

    private Client client(final String app, final String host, final int port, final Map<String, String> overrides,
                          final java.util.function.Supplier<Map<TaskId, Long>> offsetSums) {
        final StreamsConfig config = new StreamsConfig(props(app, host, port, overrides));
        return new Client(config, topology(app), new HostInfo(host, port), offsetSums);
    }

    private Properties props(final String app, final String host, final int port, final Map<String, String> overrides) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        props.put(StreamsConfig.CLIENT_ID_CONFIG, app + "-" + host);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, host + ":" + port);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.resolve(host).toString());
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        // Members leave and join within seconds here; a short session lets a rebalance finish in one.
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10_000);
        props.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 500);
        props.putAll(overrides);
        return props;
    }

    private static Topology topology(final String app) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(app + "-input")
            .flatMapValues(line -> List.of(line.split(" ")))
            .groupBy((key, word) -> word)
            .count(Materialized.as(STORE));
        return builder.build();
    }

    /** Polls every member, a turn each, until {@code done}; fails after {@link #WAIT}. */
    private static void pollUntil(final BooleanSupplier done, final Client... clients) {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "not reached within " + WAIT.toSeconds() + " s");
            for (final Client client : clients) {
                client.member.poll();
            }
            try {
                Thread.sleep(10);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static void fillChangelog(final String app, final int recordsPerPartition) {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int partition = 0; partition < PARTITIONS; partition++) {
                for (int i = 0; i < recordsPerPartition; i++) {
                    producer.send(new ProducerRecord<>(app + "-" + STORE + "-changelog", partition,
                        ("k" + i).getBytes(), new byte[8]));
                }
            }
            producer.flush();
        }
    }

    private static Set<TaskId> activeTasks(final ApacheKafkaStreams streams) {
        return streams.metadataForLocalThreads().stream().map(ThreadMetadata::activeTasks).flatMap(Set::stream)
            .map(task -> task.taskId()).collect(Collectors.toSet());
    }

    private static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()));
    }

    private static Set<TaskId> tasks(final int subtopology) {
        final Set<TaskId> tasks = new TreeSet<>();
        for (int partition = 0; partition < PARTITIONS; partition++) {
            tasks.add(new TaskId(subtopology, partition));
        }
        return tasks;
    }

    private static Set<TaskId> union(final Set<TaskId> first, final Set<TaskId> second) {
        return Stream.concat(first.stream(), second.stream()).collect(Collectors.toCollection(TreeSet::new));
    }

    private static Set<TaskId> intersect(final Set<TaskId> first, final Set<TaskId> second) {
        final Set<TaskId> both = new HashSet<>(first);
        both.retainAll(second);
        return both;
    }
}
