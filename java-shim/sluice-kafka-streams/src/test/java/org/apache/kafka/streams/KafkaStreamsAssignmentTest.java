package org.apache.kafka.streams;

import static org.apache.kafka.streams.EngineTestSupport.props;
import static org.apache.kafka.streams.EngineTestSupport.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The instances of an application on Sluice are members of its group as Kafka Streams' are, under either rebalance
 * protocol: in a classic group through Kafka Streams' own partition assignor, in a streams group through the
 * broker's assignment, so the group's assignment is Kafka Streams' (balanced over the clients, sticking to where
 * tasks ran), and an instance of Apache Kafka Streams 4.4.0 can share the group.
 */
class KafkaStreamsAssignmentTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final int PARTITIONS = 4;

    @TempDir
    Path stateDirs;

    private final List<AutoCloseable> closing = new ArrayList<>();
    /** Each word's count of the records the test wrote. */
    private final Map<String, Long> written = new HashMap<>();

    @AfterEach
    void closeAll() throws Exception {
        for (final AutoCloseable closeable : closing) {
            closeable.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "streams"})
    void instancesShareTheTasksAndOneLeavingHandsItsTasksOn(final String protocol) throws Exception {
        final String app = "assignment-sluice-" + protocol;
        BROKER.createTopic(app + "-input", PARTITIONS);
        final KafkaStreams first = start(new KafkaStreams(topology(app), props(app, "first", protocol)));
        waitFor(() -> activeTasks(first).size() == PARTITIONS, "the first instance to run every task");
        final KafkaStreams second = new KafkaStreams(topology(app), props(app, "second", protocol));
        final List<Integer> tasksWhenRunning = new CopyOnWriteArrayList<>();
        second.setStateListener((newState, oldState) -> {
            if (newState == KafkaStreams.State.RUNNING) {
                tasksWhenRunning.add(activeTasks(second).size());
            }
        });
        start(second);
        waitFor(() -> activeTasks(first).size() == PARTITIONS / 2 && activeTasks(second).size() == PARTITIONS / 2
            && first.state() == KafkaStreams.State.RUNNING && second.state() == KafkaStreams.State.RUNNING,
            "the two instances to run half the tasks each");
        if (protocol.equals("classic")) {
            // The first rebalance only takes tasks from the first instance; the second runs them after the
            // follow-up, and is not RUNNING before.
            assertEquals(PARTITIONS / 2, tasksWhenRunning.get(0), "the second instance's tasks when first RUNNING");
        }
        final Set<TaskId> all = new HashSet<>(activeTasks(first));
        all.addAll(activeTasks(second));
        assertEquals(PARTITIONS, all.size(), "every task runs once");
        assertEquals(protocol.equals("classic") ? GroupType.CLASSIC : GroupType.STREAMS, groupType(app));
        if (protocol.equals("classic")) {
            assertEquals("stream", describeGroup(app).partitionAssignor(), "Kafka Streams' assignor assigns the group");
        }

        final Map<String, Long> expected = produceWords(app, 400);
        second.close(Duration.ofSeconds(60));
        waitFor(() -> activeTasks(first).size() == PARTITIONS && first.state() == KafkaStreams.State.RUNNING,
            "the first instance to take the second's tasks back");
        expected.putAll(produceWords(app, 400));
        assertEquals(expected, countsUntil(app, expected));
    }

    @ParameterizedTest
    @ValueSource(strings = {"classic", "streams"})
    void aSluiceInstanceAndAnApacheInstanceShareTheGroup(final String protocol) throws Exception {
        final String app = "assignment-mixed-" + protocol;
        BROKER.createTopic(app + "-input", PARTITIONS);
        final ApacheKafkaStreams apache = new ApacheKafkaStreams(topology(app), props(app, "apache", protocol));
        closing.add(() -> apache.close(Duration.ofSeconds(60)));
        apache.start();
        final KafkaStreams sluice = start(new KafkaStreams(topology(app), props(app, "sluice", protocol)));
        waitFor(() -> apache.state() == KafkaStreams.State.RUNNING && sluice.state() == KafkaStreams.State.RUNNING
            && tasksOf(apache.metadataForLocalThreads()).size() == PARTITIONS / 2
            && activeTasks(sluice).size() == PARTITIONS / 2,
            "the two runtimes to run half the tasks each");
        final Set<TaskId> all = new HashSet<>(tasksOf(apache.metadataForLocalThreads()));
        all.addAll(activeTasks(sluice));
        assertEquals(PARTITIONS, all.size(), "every task runs once");

        final Map<String, Long> expected = produceWords(app, 400);
        assertEquals(expected, countsUntil(app, expected));
    }

    /** A shutdown request of one runtime's instance shuts the other runtime's down too: both speak the group's. */
    @ParameterizedTest
    @CsvSource({"apache, classic", "sluice, classic", "apache, streams", "sluice, streams"})
    void aShutdownRequestOfEitherRuntimeShutsEveryInstanceOfTheGroupDown(final String failing, final String protocol)
            throws Exception {
        final String app = "assignment-shutdown-" + failing + "-" + protocol;
        BROKER.createTopic(app + "-input", PARTITIONS);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(app + "-input", Consumed.with(Serdes.String(), Serdes.String()))
            .peek((key, value) -> {
                if (value.equals("poison")) {
                    throw new IllegalStateException("poison record");
                }
            })
            .to(app + "-output");
        final ApacheKafkaStreams apache = new ApacheKafkaStreams(builder.build(), props(app, "apache", protocol));
        closing.add(() -> apache.close(Duration.ofSeconds(60)));
        apache.setUncaughtExceptionHandler(exception -> StreamThreadExceptionResponse.SHUTDOWN_APPLICATION);
        apache.start();
        final KafkaStreams sluice = new KafkaStreams(builder.build(), props(app, "sluice", protocol));
        sluice.setUncaughtExceptionHandler(exception -> StreamThreadExceptionResponse.SHUTDOWN_APPLICATION);
        start(sluice);
        waitFor(() -> apache.state() == KafkaStreams.State.RUNNING && sluice.state() == KafkaStreams.State.RUNNING
            && tasksOf(apache.metadataForLocalThreads()).size() == PARTITIONS / 2
            && activeTasks(sluice).size() == PARTITIONS / 2,
            "the two runtimes to run half the tasks each");

        final Set<TaskId> failingTasks = failing.equals("apache")
            ? tasksOf(apache.metadataForLocalThreads()) : activeTasks(sluice);
        final int poisoned = failingTasks.iterator().next().partition();
        final Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(app + "-input", poisoned, "key", "poison"));
        }
        waitFor(() -> apache.state() == KafkaStreams.State.ERROR && sluice.state() == KafkaStreams.State.ERROR,
            "both instances to shut down to ERROR");
    }

    private Properties props(final String app, final String instance, final String protocol) {
        final Properties props = EngineTestSupport.props(BROKER, app, stateDirs.resolve(instance));
        props.put(StreamsConfig.CLIENT_ID_CONFIG, app + "-" + instance);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        return props;
    }

    private static Topology topology(final String app) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(app + "-input", Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count()
            .toStream()
            .to(app + "-counts", Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    private KafkaStreams start(final KafkaStreams streams) {
        closing.add(() -> streams.close(Duration.ofSeconds(60)));
        streams.start();
        return streams;
    }

    private static Set<TaskId> activeTasks(final KafkaStreams streams) {
        return tasksOf(streams.metadataForLocalThreads());
    }

    private static Set<TaskId> tasksOf(final Set<ThreadMetadata> threads) {
        return threads.stream().flatMap(thread -> thread.activeTasks().stream()).map(TaskMetadata::taskId)
            .collect(Collectors.toSet());
    }

    private static GroupType groupType(final String app) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
            return admin.listGroups().all().get().stream().filter(group -> group.groupId().equals(app))
                .map(group -> group.type().orElseThrow()).findFirst().orElseThrow();
        }
    }

    private static ConsumerGroupDescription describeGroup(final String app) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers()))) {
            return admin.describeConsumerGroups(List.of(app)).describedGroups().get(app).get();
        }
    }

    /** Writes {@code count} records keyed by 20 words; returns every word's count of all written so far. */
    private Map<String, Long> produceWords(final String app, final int count) {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                final String word = "word-" + (i % 20);
                producer.send(new ProducerRecord<>(app + "-input", word, word));
                written.merge(word, 1L, Long::sum);
            }
        }
        return new HashMap<>(written);
    }

    /** The latest count of each word in the output once they equal {@code expected}, or as they stand at the end. */
    private static Map<String, Long> countsUntil(final String app, final Map<String, Long> expected) {
        final Map<String, Long> counts = EngineTestSupport.latestCountsUntil(BROKER, app + "-counts", expected);
        assertTrue(counts.keySet().containsAll(expected.keySet()), "every word counted: " + counts);
        return counts;
    }
}
