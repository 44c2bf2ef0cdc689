package dev.sluice.compat.parity;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;

/**
 * One run of an example in a JVM of its own on one runtime, with an application id and output topic
 * of its own, until its output is complete: the consumer group has committed every input record, has
 * consumed its repartition topics to their ends, no transaction is open on the output (each partition's
 * last stable offset is its high watermark), and the committed output has stopped growing for
 * {@link #SETTLE}. Then the JVM is killed (its output is committed; how it closes is not compared) and
 * the committed output is read.
 */
final class AppRun {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    // Ten commit intervals (100 ms) without new output once everything is consumed.
    private static final Duration SETTLE = Duration.ofSeconds(1);
    private static final Duration CHECK_EVERY = Duration.ofMillis(250);

    private final LocalKafkaBroker broker;
    private final Path workDir;
    private final ParityApp app;
    private final String processingGuarantee;
    private final ParityRuntime runtime;
    private final String role;

    /**
     * @param role what this run is for, part of its application id: the reference run, or a candidate
     */
    AppRun(final LocalKafkaBroker broker, final Path workDir, final ParityApp app, final String processingGuarantee,
           final ParityRuntime runtime, final String role) {
        this.broker = broker;
        this.workDir = workDir;
        this.app = app;
        this.processingGuarantee = processingGuarantee;
        this.runtime = runtime;
        this.role = role;
    }

    String applicationId() {
        return "parity-" + app.id() + "-" + processingGuarantee.replace('_', '-') + "-" + role;
    }

    String outputTopic() {
        return applicationId() + "-output";
    }

    /** What a run left: its committed output and the internal topics it created. */
    record Result(List<OutputRecord> output, InternalTopics internalTopics) {
    }

    /** Runs the application until its output is complete and returns that output and its internal topics. */
    Result run(final Map<TopicPartition, Long> inputEnds) {
        broker.createTopic(outputTopic(), 3);
        final Path runDir = workDir.resolve(applicationId());
        // A state directory left by an earlier build's run would start the application with its state.
        deleteRecursively(runDir);
        final List<String> arguments = new ArrayList<>(List.of(
            broker.bootstrapServers(), applicationId(), processingGuarantee, runDir.resolve("state").toString(),
            "--output-topic", outputTopic(),
            // Kafka Streams' record caches emit when they flush, which depends on timing; without them
            // every update is emitted, the same on every run.
            "--config", StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG + "=0"));
        app.configs().forEach((key, value) -> arguments.addAll(List.of("--config", key + "=" + value)));
        final ChildJvm child = ChildJvm.start(runDir.resolve("application.log"), runtime.classpath(), app.mainClass(), arguments);
        final long started = System.nanoTime();
        try {
            awaitComplete(child, inputEnds);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while " + this + " ran", e);
        } finally {
            kill(child);
        }
        System.out.printf("%s: output complete after %.1f s%n", this, (System.nanoTime() - started) / 1e9);
        try (Admin admin = admin()) {
            return new Result(CommittedOutput.read(broker.bootstrapServers(), outputTopic()),
                InternalTopics.of(admin, applicationId(), outputTopic()));
        }
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
    }

    @Override
    public String toString() {
        return app.id() + " under " + processingGuarantee + " on " + runtime.description() + " (" + role + " run)";
    }

    private void awaitComplete(final ChildJvm child, final Map<TopicPartition, Long> inputEnds) throws InterruptedException {
        final long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
        try (Admin admin = admin();
             KafkaConsumer<byte[], byte[]> outputEnds = CommittedOutput.consumer(broker.bootstrapServers());
             KafkaConsumer<byte[], byte[]> outputHighWatermarks = CommittedOutput.uncommittedConsumer(broker.bootstrapServers())) {
            final List<TopicPartition> outputPartitions = CommittedOutput.partitions(outputEnds, outputTopic());
            Map<TopicPartition, Long> lastEnds = Map.of();
            Map<TopicPartition, Long> highWatermarks = Map.of();
            long stableSince = System.nanoTime();
            Map<TopicPartition, Long> committed = Map.of();
            while (System.nanoTime() < deadline) {
                if (!child.isAlive()) {
                    throw new AssertionError(this + ": the application's JVM exited with code " + child.exitValue()
                        + " before its output was complete; the end of " + child.log() + ":"
                        + System.lineSeparator() + child.tail(40));
                }
                committed = committedOffsets(admin);
                final Map<TopicPartition, Long> ends = outputEnds.endOffsets(outputPartitions);
                highWatermarks = outputHighWatermarks.endOffsets(outputPartitions);
                if (!ends.equals(lastEnds) || !ends.equals(highWatermarks) || !allConsumed(committed, inputEnds)
                        || !repartitionTopicsConsumed(committed, inputEnds, outputEnds)) {
                    lastEnds = ends;
                    stableSince = System.nanoTime();
                } else if (System.nanoTime() - stableSince >= SETTLE.toNanos()) {
                    return;
                }
                Thread.sleep(CHECK_EVERY.toMillis());
            }
            throw new AssertionError(this + ": output not complete within " + RUN_TIMEOUT.toSeconds() + " s; committed input"
                + " offsets " + progress(committed, inputEnds) + ", output last stable offsets " + lastEnds + " and high watermarks "
                + highWatermarks + "; the end of "
                + child.log() + ":" + System.lineSeparator() + child.tail(40));
        }
    }

    private Map<TopicPartition, Long> committedOffsets(final Admin admin) {
        try {
            final Map<TopicPartition, OffsetAndMetadata> offsets =
                admin.listConsumerGroupOffsets(applicationId()).partitionsToOffsetAndMetadata().get();
            return offsets.entrySet().stream().filter(entry -> entry.getValue() != null)
                .collect(Collectors.toMap(Map.Entry::getKey, entry -> entry.getValue().offset()));
        } catch (final ExecutionException e) {
            // The group does not exist before the application first joins it.
            return Map.of();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Every input record committed; a partition that never had one needs no commit. */
    private static boolean allConsumed(final Map<TopicPartition, Long> committed, final Map<TopicPartition, Long> inputEnds) {
        return inputEnds.entrySet().stream()
            .allMatch(end -> end.getValue() == 0 || committed.getOrDefault(end.getKey(), -1L) >= end.getValue());
    }

    /**
     * The group's other committed partitions, its repartition topics, consumed to their ends. Their
     * records are written in transactions under exactly-once, so the last committed offset may sit
     * before the final transaction marker: one short of the end counts as the end.
     */
    private static boolean repartitionTopicsConsumed(final Map<TopicPartition, Long> committed,
                                                     final Map<TopicPartition, Long> inputEnds,
                                                     final KafkaConsumer<byte[], byte[]> consumer) {
        final List<TopicPartition> internal = committed.keySet().stream().filter(partition -> !inputEnds.containsKey(partition)).toList();
        if (internal.isEmpty()) {
            return true;
        }
        final Map<TopicPartition, Long> ends = consumer.endOffsets(internal);
        return internal.stream().allMatch(partition -> committed.get(partition) >= ends.get(partition) - 1);
    }

    private static String progress(final Map<TopicPartition, Long> committed, final Map<TopicPartition, Long> inputEnds) {
        final Map<String, String> progress = new TreeMap<>();
        inputEnds.forEach((partition, end) -> progress.put(partition.toString(),
            committed.getOrDefault(partition, -1L) + "/" + end));
        return progress.toString();
    }

    /** Deletes {@code dir} and everything in it; a missing one is fine. */
    private static void deleteRecursively(final Path dir) {
        try {
            Utils.delete(dir.toFile());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void kill(final ChildJvm child) {
        try {
            child.kill();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
