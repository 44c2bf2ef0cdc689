package dev.sluice.compat.faults;

import dev.sluice.compat.childjvm.ChildJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The application under test, run as a child JVM so that it can be SIGKILLed: per key the running
 * min and sum of the input, and, behind a repartition topic, the running max and count. Prints
 * {@link ChildOutput} lines on stdout for the test to read.
 *
 * <p>Arguments: bootstrap servers, {@link Target} name, topic prefix, state directory,
 * processing guarantee, instance name (instances of one application differ in it; each is a static
 * member of the group, except the instance {@value #DYNAMIC_MEMBER}), and optionally the group protocol
 * ({@code classic}, the default, or {@code streams}).
 */
public final class AggregationApp {

    private static final Serde<String> STRING = Serdes.String();
    private static final Serde<Integer> INT = Serdes.Integer();
    private static final Serde<Long> LONG = Serdes.Long();

    /** The instance name of an instance that is a dynamic member of the group. */
    static final String DYNAMIC_MEMBER = "dynamic";

    private AggregationApp() {
    }

    /** One life of the application in a JVM of its own, on {@code target}'s class path. */
    static ChildJvm launch(final Target target, final Path log, final List<String> arguments) {
        return ChildJvm.start(log, target.classPath(), AggregationApp.class.getName(), arguments);
    }

    public static void main(final String[] args) throws InterruptedException {
        final String bootstrapServers = args[0];
        final Target target = Target.valueOf(args[1]);
        final Topics topics = new Topics(args[2]);
        final Path stateDir = Path.of(args[3]);
        final String processingGuarantee = args[4];
        final String instance = args[5];

        final Properties props = config(bootstrapServers, target, topics, stateDir, processingGuarantee, instance);
        if (args.length > 6) {
            props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, args[6]);
        }
        final KafkaStreams streams = new KafkaStreams(topology(topics, props).build(), props);
        streams.setGlobalStateRestoreListener(new PrintingRestoreListener());
        streams.setStateListener((newState, oldState) -> ChildOutput.state(newState));
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
    }

    private static Properties config(final String bootstrapServers, final Target target, final Topics topics,
                                     final Path stateDir, final String processingGuarantee, final String instance) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, topics.applicationId());
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, processingGuarantee);
        props.put(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, true);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        // Every input record then yields exactly one output record per aggregation, so a lost or
        // duplicated record shows in the output sequence.
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        // A restarted child takes over its predecessor's membership at once instead of waiting for
        // the killed member's session to time out.
        if (!instance.equals(DYNAMIC_MEMBER)) {
            props.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), topics.applicationId() + "-" + instance);
        }
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10_000);
        target.configure(props);
        return props;
    }

    private static StreamsBuilder topology(final Topics topics, final Properties props) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(props)));
        final KStream<String, Integer> input = builder.stream(topics.input(), Consumed.with(STRING, INT));

        final KGroupedStream<String, Integer> byKey = input.groupByKey();
        byKey.aggregate(() -> Integer.MAX_VALUE, (key, value, min) -> Math.min(value, min),
                Materialized.<String, Integer, KeyValueStore<Bytes, byte[]>>as("min-store").withKeySerde(STRING).withValueSerde(INT))
            .toStream().to(topics.min(), Produced.with(STRING, INT));
        byKey.aggregate(() -> 0L, (key, value, sum) -> sum + value,
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("sum-store").withKeySerde(STRING).withValueSerde(LONG))
            .toStream().to(topics.sum(), Produced.with(STRING, LONG));

        // Re-keying (to the same key) puts a repartition topic, and so a second sub-topology with
        // its own transactionally written input, between the input and max and count.
        final KGroupedStream<String, Integer> rekeyed = input.groupBy((key, value) -> key, Grouped.with("rekeyed", STRING, INT));
        rekeyed.aggregate(() -> Integer.MIN_VALUE, (key, value, max) -> Math.max(value, max),
                Materialized.<String, Integer, KeyValueStore<Bytes, byte[]>>as("max-store").withKeySerde(STRING).withValueSerde(INT))
            .toStream().to(topics.max(), Produced.with(STRING, INT));
        rekeyed.count(Materialized.as("cnt-store"))
            .toStream().to(topics.cnt(), Produced.with(STRING, LONG));
        // Last, so that the processors above keep their generated names.
        input.peek((key, value) -> ChildOutput.processed());
        return builder;
    }

    private static final class PrintingRestoreListener implements StateRestoreListener {

        @Override
        public void onRestoreStart(final TopicPartition partition, final String store, final long startingOffset, final long endingOffset) {
            ChildOutput.restoreStart(store, partition.partition(), startingOffset, endingOffset);
        }

        @Override
        public void onBatchRestored(final TopicPartition partition, final String store, final long batchEndOffset, final long numRestored) {
        }

        @Override
        public void onRestoreEnd(final TopicPartition partition, final String store, final long totalRestored) {
            ChildOutput.restoreEnd(store, partition.partition(), totalRestored);
        }
    }
}
