package dev.sluice.compat.faults;

import dev.sluice.compat.childjvm.ChildJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.errors.LogAndFailExceptionHandler;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The application of the bad-records scenario, run as a child JVM: per key the running sum of the
 * input (an aggregation, which drops records without a key), an inner and a left join of the input
 * with a global table of labels (the inner one drops records without a key, the left one keeps them),
 * and an echo of every input value as a string (a stateless path, which keeps them), where a value that is a multiple of
 * {@value BadInput#OVERSIZED_EVERY} becomes a string larger than the producer may send when the run
 * asks for it. Prints {@link ChildOutput} lines (a failed stream thread's exception among them: the
 * client then shuts down, as by default), and {@code DROPPED <n>} whenever the tasks'
 * {@code dropped-records-total} changes.
 *
 * <p>Arguments: bootstrap servers, {@link Target} name, topic prefix, state directory, processing
 * guarantee, deserialization handler ({@code continue} or {@code fail}), production handler's answer
 * ({@code resume}, {@code retry}, or {@code default}: Kafka Streams' handler, which fails), and whether to write oversized echoes ({@code oversized} or
 * {@code fitting}).
 */
public final class BadRecordsApp {

    private static final Serde<String> STRING = Serdes.String();
    private static final Serde<Integer> INT = Serdes.Integer();
    private static final Serde<Long> LONG = Serdes.Long();
    // Larger than the producer's default max.request.size (1 MiB) and librdkafka's message.max.bytes.
    private static final String OVERSIZED = "x".repeat(3 << 19);

    private BadRecordsApp() {
    }

    static ChildJvm launch(final Target target, final Path log, final List<String> arguments) {
        return ChildJvm.start(log, target.classPath(), BadRecordsApp.class.getName(), arguments);
    }

    public static void main(final String[] args) throws InterruptedException {
        final Properties props = new Properties();
        final BadRecordsTopics topics = new BadRecordsTopics(args[2]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, topics.applicationId());
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[3]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[4]);
        props.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
            args[5].equals("continue") ? LogAndContinueExceptionHandler.class : LogAndFailExceptionHandler.class);
        if (!args[6].equals("default")) {
            props.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, AnsweringProductionHandler.class);
            props.put(AnsweringProductionHandler.ANSWER_CONFIG, args[6]);
        }
        final boolean oversized = args[7].equals("oversized");
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        // Every input record with a key then yields one sum record, so the sums show each record's fate.
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        Target.valueOf(args[1]).configure(props);

        final StreamsBuilder builder = new StreamsBuilder();
        final KStream<String, Integer> input = builder.stream(topics.input(), Consumed.with(STRING, INT));
        input.groupByKey()
            .aggregate(() -> 0L, (key, value, sum) -> sum + value,
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("sum-store").withKeySerde(STRING).withValueSerde(LONG))
            .toStream().to(topics.sums(), Produced.with(STRING, LONG));
        input.mapValues(value -> oversized && BadInput.oversized(value) ? OVERSIZED : Integer.toString(value))
            .to(topics.echoes(), Produced.with(STRING, STRING));
        final GlobalKTable<String, String> labels = builder.globalTable(topics.labels(), Consumed.with(STRING, STRING));
        input.join(labels, (key, value) -> key, (value, label) -> label + ":" + value)
            .to(topics.joined(), Produced.with(STRING, STRING));
        input.leftJoin(labels, (key, value) -> key, (value, label) -> (label == null ? BadInput.NO_LABEL : label) + ":" + value)
            .to(topics.leftJoined(), Produced.with(STRING, STRING));

        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((newState, oldState) -> ChildOutput.state(newState));
        streams.setUncaughtExceptionHandler(exception -> {
            ChildOutput.uncaught(exception);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        final ScheduledExecutorService metrics = Executors.newSingleThreadScheduledExecutor();
        final long[] lastDropped = {-1};
        metrics.scheduleAtFixedRate(() -> {
            final long dropped = droppedRecords(streams);
            if (dropped != lastDropped[0]) {
                lastDropped[0] = dropped;
                System.out.println("DROPPED " + dropped);
            }
        }, 200, 200, TimeUnit.MILLISECONDS);
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            metrics.shutdownNow();
            streams.close();
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
    }

    private static long droppedRecords(final KafkaStreams streams) {
        return Math.round(streams.metrics().entrySet().stream()
            .filter(metric -> metric.getKey().name().equals("dropped-records-total")
                && metric.getKey().group().equals("stream-task-metrics"))
            .map(Map.Entry::getValue)
            .mapToDouble(metric -> ((Number) metric.metricValue()).doubleValue())
            .sum());
    }

    /** Gives every production error the answer its configuration names: {@code resume} or {@code retry}. */
    public static final class AnsweringProductionHandler implements ProductionExceptionHandler {

        static final String ANSWER_CONFIG = "bad-records.production-answer";

        private boolean retry;

        @Override
        public Response handleError(final ErrorHandlerContext context, final ProducerRecord<byte[], byte[]> record,
                                    final Exception exception) {
            System.out.println("PRODUCTION-ERROR " + exception.getClass().getSimpleName());
            return retry ? Response.retry() : Response.resume();
        }

        @Override
        public void configure(final Map<String, ?> configs) {
            retry = "retry".equals(configs.get(ANSWER_CONFIG));
        }
    }
}
