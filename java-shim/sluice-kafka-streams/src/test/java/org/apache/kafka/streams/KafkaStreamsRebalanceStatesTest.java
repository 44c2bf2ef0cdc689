package org.apache.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sluice's {@link KafkaStreams} on the engine moves between REBALANCING and RUNNING as Kafka Streams'
 * client does: RUNNING once every stream thread has its assignment and runs all its tasks (restored), also
 * when some thread or the whole instance got no task; REBALANCING again when a rebalance begins.
 */
class KafkaStreamsRebalanceStatesTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final Duration WAIT = Duration.ofSeconds(120);

    @TempDir
    Path stateDirs;

    private final List<KafkaStreams> started = new ArrayList<>();

    @AfterEach
    void closeAll() {
        started.forEach(streams -> streams.close(Duration.ofSeconds(60)));
    }

    private Properties props(final String applicationId, final String stateDir, final int threads) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDirs.resolve(stateDir).toString());
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return props;
    }

    /** Starts {@code streams}, recording its transitions as "OLD->NEW" into {@code transitions}. */
    private void start(final KafkaStreams streams, final List<String> transitions) {
        started.add(streams);
        streams.setStateListener((newState, oldState) -> transitions.add(oldState + "->" + newState));
        streams.start();
    }

    @Test
    void threadsAndInstancesWithoutTasksStillReachRunning() throws Exception {
        BROKER.createTopic("idle-input", 1);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("idle-input", Consumed.with(Serdes.String(), Serdes.String())).to("idle-output");
        final Topology topology = builder.build();

        // Three threads, one partition: two threads have no task.
        final List<String> first = new CopyOnWriteArrayList<>();
        final KafkaStreams streams = new KafkaStreams(topology, props("idle-app", "first", 3));
        start(streams, first);
        waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "three threads for one task to reach RUNNING", first);
        assertEquals(List.of("CREATED->REBALANCING", "REBALANCING->RUNNING"), first.subList(0, 2));

        // A second instance of the application gets no task at all; its arrival rebalances the first.
        final List<String> second = new CopyOnWriteArrayList<>();
        final KafkaStreams idle = new KafkaStreams(topology, props("idle-app", "second", 2));
        start(idle, second);
        waitFor(() -> idle.state() == KafkaStreams.State.RUNNING, "an instance without tasks to reach RUNNING", second);
        assertEquals(List.of("CREATED->REBALANCING", "REBALANCING->RUNNING"), second.subList(0, 2));
        waitFor(() -> first.contains("RUNNING->REBALANCING"), "the first instance to take part in the rebalance", first);
        waitFor(() -> idle.state() == KafkaStreams.State.RUNNING && streams.state() == KafkaStreams.State.RUNNING,
            "both instances to be RUNNING after the rebalance", List.of(first, second));
    }

    @Test
    void notRunningBeforeEveryTaskIsRestored() throws Exception {
        final String input = "restore-input";
        final String store = "restored-table";
        final TopicPartition bigChangelog = new TopicPartition("restore-app-" + store + "-changelog", 0);
        BROKER.createTopic(input, 2);
        // Partition 0's task has many records to restore, partition 1's none: the second task runs at once,
        // long before the first finished restoring.
        final int bigPartitionRecords = 200_000;
        produce(input, 0, bigPartitionRecords);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.table(input, Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(store));
        final Topology topology = builder.build();

        // Fill the changelogs, then stop.
        final KafkaStreams filling = new KafkaStreams(topology, props("restore-app", "filled", 1));
        final List<String> fillingTransitions = new CopyOnWriteArrayList<>();
        start(filling, fillingTransitions);
        waitFor(() -> filling.state() == KafkaStreams.State.RUNNING, "the first run to be RUNNING", fillingTransitions);
        final ReadOnlyKeyValueStore<String, String> filled =
            filling.store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.keyValueStore()));
        waitFor(() -> filled.get(key(0, bigPartitionRecords - 1)) != null, "the first run to hold every record",
            fillingTransitions);
        assertTrue(filling.close(Duration.ofSeconds(60)));

        // The same application on a wiped state directory restores both stores from their changelogs.
        final List<String> events = new CopyOnWriteArrayList<>();
        final KafkaStreams restoring = new KafkaStreams(topology, props("restore-app", "wiped", 1));
        restoring.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(final TopicPartition partition, final String storeName, final long start,
                                       final long end) {
                events.add("start " + partition + " state=" + restoring.state());
            }

            @Override
            public void onBatchRestored(final TopicPartition partition, final String storeName, final long batchEnd,
                                        final long numRestored) {
            }

            @Override
            public void onRestoreEnd(final TopicPartition partition, final String storeName, final long totalRestored) {
                events.add("end " + partition + " " + totalRestored + " state=" + restoring.state());
            }
        });
        start(restoring, events);
        waitFor(() -> restoring.state() == KafkaStreams.State.RUNNING, "the restored client to be RUNNING", events);

        final String bigEnd = "end " + bigChangelog + " " + bigPartitionRecords + " state=REBALANCING";
        assertTrue(events.contains(bigEnd), events.toString());
        assertTrue(events.indexOf(bigEnd) < events.indexOf("REBALANCING->RUNNING"),
            "RUNNING only after the big store finished restoring: " + events);
        assertEquals(1, events.stream().filter(e -> e.endsWith("->RUNNING")).count(), events.toString());
        assertEquals(KafkaStreams.State.RUNNING, restoring.state());
        final ReadOnlyKeyValueStore<String, String> restored =
            restoring.store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.keyValueStore()));
        assertEquals("value", restored.get(key(0, bigPartitionRecords - 1)));
    }

    private static String key(final int partition, final int i) {
        return partition + "-" + i;
    }

    private static void produce(final String topic, final int partition, final int count) throws Exception {
        final Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        config.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, partition, key(partition, i), "value"));
            }
            producer.flush();
        }
    }

    /** Waits for {@code condition}; {@code seen} (transitions, events) is printed as it is when it times out. */
    private static void waitFor(final BooleanSupplier condition, final String what, final Object seen)
        throws InterruptedException {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + "; seen: " + seen);
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }
}
