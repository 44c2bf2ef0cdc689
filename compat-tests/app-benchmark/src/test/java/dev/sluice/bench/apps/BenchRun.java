package dev.sluice.bench.apps;

import dev.sluice.compat.childjvm.ChildJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;

/**
 * One run of a workload on one runtime, in a JVM of its own with an application id and output topic of
 * its own: it ends when every input record is committed and the committed output holds exactly the
 * final values the input must leave. A timed run reads pre-produced input; a paced run sends its events
 * at a fixed rate while the application runs and measures each output record's latency.
 */
final class BenchRun {

    private static final Duration STALL_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(30);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration CHECK_EVERY = Duration.ofMillis(100);
    /** What the examples' launcher prints once the application's client is RUNNING. */
    private static final String RUNNING = "state: RUNNING";
    /** Kafka's clients log every connection at INFO; the runs compare the applications, not their logging. */
    static final String QUIET_LOGGING = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn";

    private final BenchBroker broker;
    private final BenchSettings settings;
    private final Workload workload;
    private final Variant variant;
    private final String applicationId;

    /** @param runNumber this run's number in the benchmark, which makes its application id */
    BenchRun(final BenchBroker broker, final BenchSettings settings, final Workload workload, final Variant variant,
             final int runNumber) {
        this.broker = broker;
        this.settings = settings;
        this.workload = workload;
        this.variant = variant;
        // Short, so that Linux's 15-character thread names keep "-StreamThread" (see ProcessSample).
        this.applicationId = "b" + runNumber;
    }

    /** Runs the application over input already in its topics, which end at {@code inputEnds}. */
    RunResult timed(final Input input, final Map<String, String> expected, final Map<TopicPartition, Long> inputEnds)
            throws InterruptedException {
        final String outputTopic = createOutputTopic();
        try (OutputTail tail = new OutputTail(broker.bootstrapServers(), outputTopic, workload.application(), expected, null, 0)) {
            final long launched = System.nanoTime();
            final ChildJvm child = start(outputTopic);
            try {
                if (!child.awaitOutput(lines -> lines.contains(RUNNING), START_TIMEOUT)) {
                    return wrong(false, notRunning(child), tail, child);
                }
                final double start = (System.nanoTime() - launched) / 1e9;
                final String failure = awaitComplete(child, tail, inputEnds);
                if (failure != null) {
                    return wrong(false, failure, tail, child);
                }
                final double wall = (System.nanoTime() - launched) / 1e9;
                final ProcessSample sample = ProcessSample.of(child.pid());
                tail.close();
                return new RunResult(workload, variant, false, null, input.size(), tail.records(), wall, start, sample,
                    new long[0]);
            } finally {
                child.kill();
                deleteStateDir();
            }
        }
    }

    /**
     * Starts the application on empty input topics, writes the tables, then sends the events at the
     * configured rate (each stamped with the time it is sent, unless the application follows event time)
     * and the closing records, and runs until the output is complete.
     */
    RunResult paced(final Input input, final Map<String, String> expected) throws InterruptedException {
        final String outputTopic = createOutputTopic();
        final List<BenchRecord> events = input.events();
        final long[] eventTimes = events.stream().mapToLong(BenchRecord::timestamp).toArray();
        final long[] sentAt = new long[events.size() + 1];
        Arrays.fill(sentAt, Long.MAX_VALUE);
        final OutputTail.LatencyOrigin origin = workload.application().eventTime()
            ? (key, timestamp) -> sentAt[firstAtOrAfter(eventTimes, workload.application().closesAt(key))]
            : (key, timestamp) -> timestamp;
        final long launched = System.nanoTime();
        final ChildJvm child = start(outputTopic);
        try {
            if (!child.awaitOutput(lines -> lines.contains(RUNNING), START_TIMEOUT)) {
                return RunResult.wrong(workload, variant, true, notRunning(child));
            }
            final double start = (System.nanoTime() - launched) / 1e9;
            try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                send(producer, input.tables(), false);
                producer.flush();
                final long pacingStarts = System.currentTimeMillis();
                try (OutputTail tail = new OutputTail(broker.bootstrapServers(), outputTopic, workload.application(), expected,
                        origin, pacingStarts + settings.warmupSeconds() * 1000L)) {
                    final String sendFailure = sendPaced(producer, events, sentAt, child);
                    if (sendFailure != null) {
                        return wrong(true, sendFailure, tail, child);
                    }
                    sentAt[events.size()] = System.currentTimeMillis();
                    send(producer, input.closing(), false);
                    producer.flush();
                    final String failure = awaitComplete(child, tail, broker.endOffsets(workload.application().inputTopics()));
                    if (failure != null) {
                        return wrong(true, failure, tail, child);
                    }
                    final ProcessSample sample = ProcessSample.of(child.pid());
                    tail.close();
                    return new RunResult(workload, variant, true, null, input.size(), tail.records(),
                        (System.currentTimeMillis() - pacingStarts) / 1e3, start, sample, tail.sortedLatencies());
                }
            }
        } finally {
            child.kill();
            deleteStateDir();
        }
    }

    private String createOutputTopic() {
        final String outputTopic = applicationId + "-output";
        broker.createTopic(outputTopic, settings.partitions());
        return outputTopic;
    }

    private ChildJvm start(final String outputTopic) {
        final List<String> arguments = new ArrayList<>(List.of(broker.bootstrapServers(), applicationId,
            workload.processingGuarantee(), stateDir().toString(), "--output-topic", outputTopic,
            "--config", StreamsConfig.CLIENT_ID_CONFIG + "=" + applicationId,
            "--config", StreamsConfig.NUM_STREAM_THREADS_CONFIG + "=" + workload.threads()));
        variant.configs().forEach((key, value) -> arguments.addAll(List.of("--config", key + "=" + value)));
        settings.configs().forEach((key, value) -> arguments.addAll(List.of("--config", key + "=" + value)));
        final List<String> jvmOptions = new ArrayList<>(settings.jvmOptions());
        jvmOptions.add(QUIET_LOGGING);
        return ChildJvm.start(settings.workDir().resolve(applicationId + ".log"), jvmOptions,
            variant.classpath(settings.classpathDir()), workload.application().mainClass(), arguments);
    }

    /** Sends {@code events} at the configured rate; the reason when the application died meanwhile. */
    private String sendPaced(final KafkaProducer<byte[], byte[]> producer, final List<BenchRecord> events, final long[] sentAt,
                             final ChildJvm child) throws InterruptedException {
        final long started = System.nanoTime();
        final boolean stampNow = !workload.application().eventTime();
        int sent = 0;
        while (sent < events.size()) {
            if (!child.isAlive()) {
                return "the application's JVM exited with code " + child.exitValue() + " while input was sent: " + child.tail(30);
            }
            final long due = Math.min(events.size(), (System.nanoTime() - started) * settings.pacedRate() / 1_000_000_000L + 1);
            for (; sent < due; sent++) {
                sentAt[sent] = System.currentTimeMillis();
                final BenchRecord event = events.get(sent);
                producer.send(record(event, stampNow ? sentAt[sent] : event.timestamp()));
            }
            Thread.sleep(2);
        }
        return null;
    }

    private static void send(final KafkaProducer<byte[], byte[]> producer, final List<BenchRecord> records, final boolean stampNow) {
        for (final BenchRecord record : records) {
            producer.send(record(record, stampNow ? System.currentTimeMillis() : record.timestamp()));
        }
    }

    static ProducerRecord<byte[], byte[]> record(final BenchRecord record, final long timestamp) {
        return new ProducerRecord<>(record.topic(), record.partition(), timestamp, record.key(), record.value());
    }

    /** The first index whose event time is at or after {@code time}; the events' count when none is. */
    private static int firstAtOrAfter(final long[] eventTimes, final long time) {
        int low = 0;
        int high = eventTimes.length;
        while (low < high) {
            final int middle = (low + high) >>> 1;
            if (eventTimes[middle] < time) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        return low;
    }

    /**
     * Waits until the group has committed every input record and the output is exactly right; the
     * reason when the application died, stalled or ran out of time.
     */
    private String awaitComplete(final ChildJvm child, final OutputTail tail, final Map<TopicPartition, Long> inputEnds)
            throws InterruptedException {
        final long started = System.nanoTime();
        long lastProgress = System.nanoTime();
        Map<TopicPartition, Long> lastCommitted = Map.of();
        while (true) {
            if (!child.isAlive()) {
                return "the application's JVM exited with code " + child.exitValue() + ": " + child.tail(30);
            }
            final Map<TopicPartition, Long> committed = broker.committedOffsets(applicationId);
            if (BenchBroker.coversInput(committed, inputEnds) && tail.complete()) {
                return null;
            }
            if (!committed.equals(lastCommitted)) {
                lastCommitted = committed;
                lastProgress = System.nanoTime();
            }
            final long now = System.nanoTime();
            if (now - Math.max(lastProgress, now - tail.nanosSinceLastRecord()) > STALL_TIMEOUT.toNanos()) {
                return "no commit and no output for " + STALL_TIMEOUT.toSeconds() + " s; committed " + committed + " of "
                    + inputEnds;
            }
            if (now - started > RUN_TIMEOUT.toNanos()) {
                return "not complete within " + RUN_TIMEOUT.toMinutes() + " minutes";
            }
            Thread.sleep(CHECK_EVERY.toMillis());
        }
    }

    private static String notRunning(final ChildJvm child) {
        return "not RUNNING within " + START_TIMEOUT.toSeconds() + " s: " + child.tail(30);
    }

    private RunResult wrong(final boolean paced, final String failure, final OutputTail tail, final ChildJvm child)
            throws InterruptedException {
        tail.close();
        return RunResult.wrong(workload, variant, paced, failure + "; output: " + tail.differences() + "; log " + child.log());
    }

    private Path stateDir() {
        return settings.workDir().resolve(applicationId + "-state");
    }

    private void deleteStateDir() {
        try {
            Utils.delete(stateDir().toFile());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
