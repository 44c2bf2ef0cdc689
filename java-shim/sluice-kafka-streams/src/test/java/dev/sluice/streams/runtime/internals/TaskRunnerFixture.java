package dev.sluice.streams.runtime.internals;

import java.nio.ByteBuffer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.processor.internals.StateDirectory;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.HostInfo;

/**
 * One application instance's task environment without an engine: tests create task runners as the
 * engine would and feed them framed batches. Reopening builds a new environment over the same state
 * directory, as a restarted instance would.
 */
final class TaskRunnerFixture implements AutoCloseable {

    final Path stateDir;
    final ManualTime time = new ManualTime();
    final List<Throwable> failures = new ArrayList<>();
    private final Supplier<Topology> topology;
    private final Properties properties;
    private TaskEnvironment environment;
    private StreamThreads streamThreads;
    private StateDirectory stateDirectory;
    private Metrics metrics;

    TaskRunnerFixture(final Supplier<Topology> topology, final Properties overrides) throws IOException {
        this.topology = topology;
        this.stateDir = Files.createTempDirectory("sluice-task-runner");
        this.properties = new Properties();
        properties.put(StreamsConfig.APPLICATION_ID_CONFIG, "app");
        properties.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        properties.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        properties.putAll(overrides);
        open();
    }

    private void open() {
        final StreamsConfig config = new StreamsConfig(properties);
        final TopologyMetadata metadata = new TopologyMetadata(internalBuilder(topology.get()), config);
        metadata.buildAndRewriteTopology();
        metrics = new Metrics();
        stateDirectory = new StateDirectory(config, time, true, false);
        final UUID processId = stateDirectory.initializeProcessId();
        environment = new TaskEnvironment(metadata, config, time,
            new StreamsMetricsImpl(metrics, "test-client", time), stateDirectory,
            new RuntimeListener() {
                @Override
                public void onThreadFailure(final String threadName, final Throwable error) {
                    failures.add(error);
                }
            },
            topic -> {
                throw new UnsupportedOperationException("no partition lookups in these tests");
            },
            processId,
            streamThreads = new StreamThreads(config, metadata, processId, "test-client",
                new StreamsMetadataState(metadata, HostInfo.unavailable(), new LogContext()), time));
    }

    /** The runner of task {@code subtopology_partition}, created as the engine creates it. */
    TaskRunner create(final int subtopology, final int partition, final Map<TopicPartition, OffsetAndMetadata> inputs) {
        return environment.create(subtopology, partition, RuntimeFraming.inputs(inputs));
    }

    /** Creates a task that has nothing to restore and runs. */
    TaskRunner running(final int subtopology, final int partition) {
        final TaskRunner runner = create(subtopology, partition, Map.of());
        runner.committedChangelogOffsets();
        runner.restored();
        return runner;
    }

    TaskEnvironment environment() {
        return environment;
    }

    /** A restarted instance: a new environment over the same state directory. */
    void reopen() {
        closeEnvironment();
        open();
    }

    @Override
    public void close() throws IOException {
        closeEnvironment();
        Utils.delete(stateDir.toFile());
    }

    private void closeEnvironment() {
        streamThreads.close();
        stateDirectory.close();
        metrics.close();
    }

    static InternalTopologyBuilder internalBuilder(final Topology topology) {
        try {
            final Field field = Topology.class.getDeclaredField("internalTopologyBuilder");
            field.setAccessible(true);
            return (InternalTopologyBuilder) field.get(topology);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static ConsumerRecord<byte[], byte[]> record(final String topic, final int partition, final long offset,
                                                 final long timestamp, final byte[] key, final byte[] value) {
        return new ConsumerRecord<>(topic, partition, offset, timestamp, TimestampType.CREATE_TIME,
            key == null ? -1 : key.length, value == null ? -1 : value.length, key, value, new RecordHeaders(),
            Optional.empty());
    }

    /** Produced records as the engine would consume them back from their topic, from {@code firstOffset} on. */
    static List<ConsumerRecord<byte[], byte[]>> consumedBack(final List<ProducerRecord<byte[], byte[]>> produced,
                                                             final int partition, final long firstOffset) {
        final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        long offset = firstOffset;
        for (final ProducerRecord<byte[], byte[]> record : produced) {
            records.add(new ConsumerRecord<>(record.topic(), partition, offset++, record.timestamp(),
                TimestampType.CREATE_TIME, -1, -1, record.key(), record.value(), record.headers(), Optional.empty()));
        }
        return records;
    }

    static List<ProducerRecord<byte[], byte[]>> produced(final byte[][] drained) {
        return RuntimeFraming.readDrainedRecords(drained);
    }

    static ByteBuffer batch(final List<ConsumerRecord<byte[], byte[]>> records) {
        return RuntimeFraming.consumedRecords(records);
    }

    static TaskId task(final int subtopology, final int partition) {
        return new TaskId(subtopology, partition);
    }

    /** Wall-clock time the test moves. */
    static final class ManualTime implements Time {
        private long millis = 1_700_000_000_000L;

        void advance(final long byMillis) {
            millis += byMillis;
        }

        @Override
        public long milliseconds() {
            return millis;
        }

        @Override
        public long nanoseconds() {
            return TimeUnit.MILLISECONDS.toNanos(millis);
        }

        @Override
        public void sleep(final long ms) {
            millis += ms;
        }
    }
}
