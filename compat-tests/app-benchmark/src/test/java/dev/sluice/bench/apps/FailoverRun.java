package dev.sluice.bench.apps;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.examples.wordcount.WordCount;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;

/**
 * One failover: two instances of the word count share its tasks and count {@code keys} distinct words, so that
 * each holds about half the state; once both have processed everything (and the standbys have had time to catch
 * up), one instance is killed (SIGKILL) and more lines arrive on every input partition, words counted before.
 * The figure is the time from the kill until the committed output shows every one of them counted right: the
 * group noticing the loss (the session timeout, the same for every run), the survivor taking the tasks over,
 * restoring what its standbys had not, and processing.
 */
final class FailoverRun {

    /** Result of one run: the seconds until both instances had processed the first input, and of the failover. */
    record Result(Variant variant, int standbyReplicas, String failure, double firstSeconds, double failoverSeconds) {
        boolean right() {
            return failure == null;
        }
    }

    private static final Duration PHASE_TIMEOUT = Duration.ofMinutes(20);
    private static final Duration STANDBY_CATCH_UP = Duration.ofSeconds(10);
    private static final int RECOUNTED_WORDS = 200;
    private static final String GUARANTEE = StreamsConfig.EXACTLY_ONCE_V2;

    private final BenchBroker broker;
    private final FailoverSettings settings;
    private final Variant variant;
    private final int standbyReplicas;
    private final String applicationId;

    FailoverRun(final BenchBroker broker, final FailoverSettings settings, final Variant variant, final int standbyReplicas,
                final int runNumber) {
        this.broker = broker;
        this.settings = settings;
        this.variant = variant;
        this.standbyReplicas = standbyReplicas;
        this.applicationId = "f" + runNumber;
    }

    /** The first input: one distinct word a line, {@code keys} lines over every partition. */
    static Input firstInput(final int keys, final int partitions) {
        final long now = System.currentTimeMillis();
        final List<BenchRecord> lines = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            lines.add(line(i, partitions, now));
        }
        return new Input(List.of(), lines, List.of());
    }

    /** What arrives after the kill: the first {@value #RECOUNTED_WORDS} words once more, over every partition. */
    static Input afterKill(final int keys, final int partitions) {
        final List<BenchRecord> lines = new ArrayList<>();
        final long now = System.currentTimeMillis();
        for (int i = 0; i < Math.min(keys, RECOUNTED_WORDS); i++) {
            lines.add(line(i, partitions, now));
        }
        return new Input(List.of(), lines, List.of());
    }

    Result run() throws InterruptedException {
        final Input first = firstInput(settings.keys(), settings.partitions());
        final Map<String, String> firstCounts = Application.WORD_COUNT.expected(first);
        final Map<String, String> finalCounts = new HashMap<>(firstCounts);
        Application.WORD_COUNT.expected(afterKill(settings.keys(), settings.partitions()))
            .forEach((word, count) -> finalCounts.merge(word, count, (before, added) ->
                Long.toString(Long.parseLong(before) + Long.parseLong(added))));
        final String outputTopic = applicationId + "-output";
        broker.createTopic(outputTopic, settings.partitions());
        final Map<TopicPartition, Long> inputEnds =
            broker.writeInput(first, Application.WORD_COUNT.inputTopics(), settings.partitions());
        final List<ChildJvm> instances = new ArrayList<>();
        try (OutputTail firstTail = new OutputTail(broker.bootstrapServers(), outputTopic, Application.WORD_COUNT,
                firstCounts, null, 0)) {
            final long started = System.nanoTime();
            instances.add(start("a", outputTopic));
            instances.add(start("b", outputTopic));
            String failure = await(() -> committed(inputEnds) && firstTail.complete(), instances, "the first input");
            if (failure != null) {
                return wrong(failure + "; output: " + differences(firstTail));
            }
            final double firstSeconds = (System.nanoTime() - started) / 1e9;
            try (OutputTail finalTail = new OutputTail(broker.bootstrapServers(), outputTopic, Application.WORD_COUNT,
                    finalCounts, null, 0)) {
                Thread.sleep(STANDBY_CATCH_UP.toMillis());
                final long killed = System.nanoTime();
                instances.get(0).kill();
                try (KafkaProducer<byte[], byte[]> producer = broker.producer()) {
                    for (final BenchRecord line : afterKill(settings.keys(), settings.partitions()).events()) {
                        producer.send(BenchRun.record(line, System.currentTimeMillis()));
                    }
                }
                failure = await(finalTail::complete, instances.subList(1, 2), "the input after the kill");
                if (failure != null) {
                    return wrong(failure + "; output: " + differences(finalTail));
                }
                return new Result(variant, standbyReplicas, null, firstSeconds, (System.nanoTime() - killed) / 1e9);
            }
        } finally {
            for (final ChildJvm instance : instances) {
                instance.kill();
            }
            deleteStateDirs();
        }
    }

    private ChildJvm start(final String instance, final String outputTopic) {
        final List<String> arguments = new ArrayList<>(List.of(broker.bootstrapServers(), applicationId, GUARANTEE,
            stateDir(instance).toString(), "--output-topic", outputTopic,
            "--config", StreamsConfig.CLIENT_ID_CONFIG + "=" + applicationId + instance,
            "--config", StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG + "=" + standbyReplicas,
            "--config", ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG + "=" + settings.sessionTimeoutMs()));
        variant.configs().forEach((key, value) -> arguments.addAll(List.of("--config", key + "=" + value)));
        final List<String> jvmOptions = new ArrayList<>(settings.jvmOptions());
        jvmOptions.add(BenchRun.QUIET_LOGGING);
        return ChildJvm.start(settings.workDir().resolve(applicationId + instance + ".log"), jvmOptions,
            variant.classpath(settings.classpathDir()), WordCount.class.getName(), arguments);
    }

    /** Waits until {@code done}; the reason when an instance died or the time ran out. */
    private static String await(final BooleanSupplier done, final List<ChildJvm> instances, final String what)
            throws InterruptedException {
        final long deadline = System.nanoTime() + PHASE_TIMEOUT.toNanos();
        while (!done.getAsBoolean()) {
            for (final ChildJvm instance : instances) {
                if (!instance.isAlive()) {
                    return "an instance exited with code " + instance.exitValue() + " before " + what + " was processed: "
                        + instance.tail(30);
                }
            }
            if (System.nanoTime() > deadline) {
                return what + " not processed within " + PHASE_TIMEOUT.toMinutes() + " minutes";
            }
            Thread.sleep(50);
        }
        return null;
    }

    private boolean committed(final Map<TopicPartition, Long> inputEnds) {
        return BenchBroker.coversInput(broker.committedOffsets(applicationId), inputEnds);
    }

    private static String differences(final OutputTail tail) throws InterruptedException {
        tail.close();
        return tail.differences();
    }

    private Result wrong(final String failure) {
        return new Result(variant, standbyReplicas, failure + "; logs " + settings.workDir().resolve(applicationId + "*.log"),
            Double.NaN, Double.NaN);
    }

    private static BenchRecord line(final int word, final int partitions, final long timestamp) {
        return new BenchRecord(WordCount.INPUT_TOPIC, word % partitions, null,
            ("key" + word).getBytes(StandardCharsets.UTF_8), timestamp);
    }

    private Path stateDir(final String instance) {
        return settings.workDir().resolve(applicationId + instance + "-state");
    }

    private void deleteStateDirs() {
        try {
            for (final String instance : List.of("a", "b")) {
                Utils.delete(stateDir(instance).toFile());
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
