package org.apache.kafka.streams;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.state.BuiltInDslStoreSuppliers;
import org.apache.kafka.streams.state.DslKeyValueParams;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * What {@link ApacheRuntimeFallbackTest} runs in a JVM of its own, whose runtime choice is then made once:
 * the store suppliers an application gets, a word count under {@link TopologyTestDriver} and the same word
 * count on {@link KafkaStreams} against a broker (a subclass reading the protected {@code state}, as Kafka
 * Streams' named-topology wrapper does, with a state listener read back from its field as Kafka Streams' test
 * utilities read it), and whether Sluice's native library was loaded by the end. Prints one line per finding ({@value #SUPPLIER_LINE}, {@value #DRIVER_COUNT_LINE},
 * {@value #COUNT_LINE}, {@value #SUBCLASS_STATE_LINE}, {@value #LISTENER_STATE_LINE}, {@value #LISTENER_FIELD_LINE},
 * {@value #CLOSED_LINE}, {@value #NATIVE_LINE}), then {@value #DONE_LINE}.
 */
final class ApacheRuntimeFallbackApp {

    static final String SUPPLIER_LINE = "SUPPLIER ";
    static final String DRIVER_COUNT_LINE = "DRIVER-COUNT ";
    static final String COUNT_LINE = "COUNT ";
    static final String SUBCLASS_STATE_LINE = "SUBCLASS-STATE ";
    static final String LISTENER_STATE_LINE = "LISTENER-STATE ";
    static final String LISTENER_FIELD_LINE = "LISTENER-FIELD ";
    static final String CLOSED_LINE = "CLOSED ";
    static final String NATIVE_LINE = "NATIVE-LIBRARY-LOADED ";
    static final String DONE_LINE = "DONE";

    private ApacheRuntimeFallbackApp() {
    }

    /** Arguments: bootstrap servers, application id, state directory, a line of input words, a word, its count. */
    @SuppressWarnings("deprecation")
    public static void main(final String[] args) throws Exception {
        final String bootstrapServers = args[0];
        final String applicationId = args[1];
        final String stateDir = args[2];
        final String word = args[4];
        final long expected = Long.parseLong(args[5]);
        final String input = applicationId + "-input";
        final String output = applicationId + "-output";

        System.out.println(SUPPLIER_LINE + "stores " + Stores.persistentKeyValueStore("explicit").getClass().getName());
        System.out.println(SUPPLIER_LINE + "dsl " + BuiltInDslStoreSuppliers.ROCKS_DB
            .keyValueStore(new DslKeyValueParams("dsl", DslStoreFormat.TIMESTAMPED)).getClass().getName());

        try (TopologyTestDriver driver = new TopologyTestDriver(MetricsWordCountApp.topology(input, output),
                MetricsWordCountApp.props(applicationId + "-driver", bootstrapServers, stateDir + "/driver"))) {
            final TestInputTopic<String, String> lines =
                driver.createInputTopic(input, new StringSerializer(), new StringSerializer());
            for (final String line : args[3].split("\\|")) {
                lines.pipeInput(line);
            }
            System.out.println(DRIVER_COUNT_LINE + driver.<String, Long>getKeyValueStore(MetricsWordCountApp.COUNTS).get(word));
        }

        final StateReadingKafkaStreams streams = new StateReadingKafkaStreams(MetricsWordCountApp.topology(input, output),
            MetricsWordCountApp.props(applicationId, bootstrapServers, stateDir + "/streams"));
        final AtomicReference<KafkaStreams.State> listenedState = new AtomicReference<>();
        final KafkaStreams.StateListener listener = (newState, oldState) -> listenedState.set(newState);
        streams.setStateListener(listener);
        // Kafka Streams' own test utilities chain a listener to the one they read from this field.
        final Field listenerField = KafkaStreams.class.getDeclaredField("stateListener");
        listenerField.setAccessible(true);
        System.out.println(LISTENER_FIELD_LINE + (listenerField.get(streams) == listener));
        try {
            streams.start();
            final long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            Long count = null;
            while (System.nanoTime() < deadline && (count == null || count < expected)) {
                Thread.sleep(100);
                if (streams.state() == KafkaStreams.State.RUNNING) {
                    final ReadOnlyKeyValueStore<String, Long> counts = streams.store(StoreQueryParameters.fromNameAndType(
                        MetricsWordCountApp.COUNTS, QueryableStoreTypes.keyValueStore()));
                    count = counts.get(word);
                }
            }
            System.out.println(COUNT_LINE + count);
            System.out.println(SUBCLASS_STATE_LINE + "running " + awaitState(streams::stateField, KafkaStreams.State.RUNNING));
        } finally {
            // The deprecated options, which reach Apache's client converted (its own would read their private fields).
            System.out.println(CLOSED_LINE + streams.close(new KafkaStreams.CloseOptions().timeout(Duration.ofSeconds(60)).leaveGroup(true)));
        }
        System.out.println(SUBCLASS_STATE_LINE + "closed " + awaitState(streams::stateField, KafkaStreams.State.NOT_RUNNING));
        System.out.println(LISTENER_STATE_LINE + "closed " + awaitState(listenedState::get, KafkaStreams.State.NOT_RUNNING));
        final List<String> mappings = Files.readAllLines(Path.of("/proc/self/maps"));
        System.out.println(NATIVE_LINE + mappings.stream().anyMatch(mapping -> mapping.contains("sluice_core")));
        System.out.println(DONE_LINE);
        System.out.flush();
    }

    /** The state {@code read} gives once it is {@code expected}, or the last one read within 30 seconds. */
    private static KafkaStreams.State awaitState(final Supplier<KafkaStreams.State> read, final KafkaStreams.State expected)
            throws InterruptedException {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (read.get() != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return read.get();
    }

    /** Reads the protected state field, as a subclass of KafkaStreams (the named-topology wrapper) does. */
    private static final class StateReadingKafkaStreams extends KafkaStreams {

        StateReadingKafkaStreams(final Topology topology, final Properties props) {
            super(topology, props);
        }

        State stateField() {
            return state;
        }
    }
}
