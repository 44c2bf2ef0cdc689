package dev.sluice.compat.parity;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The proof of the drop-in runtime: each example, unchanged, runs with the same input on Apache
 * Kafka Streams 4.4.0 (the reference) and on a candidate runtime, each in a JVM of its own, under
 * at-least-once and exactly-once v2; the candidate's committed output must equal the reference's
 * record for record (key, value, timestamp) in each key's order, and it must have made the same
 * internal topics (names, partitions, configs).
 *
 * <p>The candidates are Sluice and, as the harness's own check, Apache again (the examples and their
 * input are deterministic); {@code -Dsluice.parity.runtime=apache|sluice|both} picks them, and
 * {@code -Dsluice.parity.apps=<id>,...} the applications (all by default). A Sluice
 * case fails, saying so, while Sluice's artifact has no runtime.
 */
class RuntimeParityTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final Path WORK_DIR = Path.of("target", "runtime-parity");
    private static final ParityInputs INPUTS = new ParityInputs();
    private static final Map<ParityApp, Map<TopicPartition, Long>> INPUT_ENDS = new ConcurrentHashMap<>();
    // One reference run per example and guarantee, shared by its candidates and run beside the first of them.
    private static final Map<String, CompletableFuture<AppRun.Result>> REFERENCES = new ConcurrentHashMap<>();
    private static final ExecutorService REFERENCE_RUNNER = Executors.newSingleThreadExecutor(runnable -> {
        final Thread thread = new Thread(runnable, "parity-reference-run");
        thread.setDaemon(true);
        return thread;
    });

    static Stream<Arguments> cases() {
        final List<Arguments> cases = new ArrayList<>();
        for (final ParityApp app : ParityApp.selected()) {
            for (final String guarantee : List.of(StreamsConfig.AT_LEAST_ONCE, StreamsConfig.EXACTLY_ONCE_V2)) {
                for (final ParityRuntime runtime : ParityRuntime.selected()) {
                    cases.add(Arguments.of(app, guarantee, runtime));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} under {1} on {2}")
    @MethodSource("cases")
    void candidateOutputEqualsApacheKafkaStreamsOutput(final ParityApp app, final String processingGuarantee,
                                                       final ParityRuntime candidate) {
        candidate.checkClasspath();
        final Map<TopicPartition, Long> inputEnds = INPUT_ENDS.computeIfAbsent(app, RuntimeParityTest::produceInput);
        final CompletableFuture<AppRun.Result> referenceRun = REFERENCES.computeIfAbsent(app + "/" + processingGuarantee,
            key -> CompletableFuture.supplyAsync(
                () -> new AppRun(BROKER, WORK_DIR, app, processingGuarantee, ParityRuntime.APACHE, "reference").run(inputEnds),
                REFERENCE_RUNNER));

        final AppRun candidateRun = new AppRun(BROKER, WORK_DIR, app, processingGuarantee, candidate, candidate.id());
        final AppRun.Result candidateResult = candidateRun.run(inputEnds);
        final List<OutputRecord> candidateOutput = candidateResult.output();
        final AppRun.Result referenceResult = join(referenceRun);
        final List<OutputRecord> reference = referenceResult.output();

        assertTrue(reference.size() >= app.minimumOutput(), app.id() + " under " + processingGuarantee
            + ": the reference run wrote " + reference.size() + " records, fewer than the " + app.minimumOutput()
            + " its input yields at the least");
        assertReferencesAgree(app);
        ParityDiff.describe(app, reference, candidateOutput).ifPresent(difference -> {
            throw new AssertionError(candidateRun + ": committed output differs from Apache Kafka Streams' ("
                + candidateRun.outputTopic() + " against the reference run's):" + System.lineSeparator() + difference);
        });
        final InternalTopics candidateTopics = candidateResult.internalTopics();
        candidateTopics.differenceFrom(referenceResult.internalTopics()).ifPresent(difference -> {
            throw new AssertionError(candidateRun + ": its internal topics are not the ones Apache Kafka Streams made"
                + System.lineSeparator() + difference);
        });
        System.out.printf("%s: %d records, each key's the same as Apache Kafka Streams'; the same %d internal topics%n",
            candidateRun, candidateOutput.size(), candidateTopics.shapes().size());
    }

    /**
     * Without failures the guarantee does not change what Kafka Streams computes: Apache's reference runs
     * of one example under both guarantees must agree, or the example or its input leaves room for
     * timing and no comparison with it proves anything. Checked once both have run.
     */
    private static void assertReferencesAgree(final ParityApp app) {
        final CompletableFuture<AppRun.Result> atLeastOnce = REFERENCES.get(app + "/" + StreamsConfig.AT_LEAST_ONCE);
        final CompletableFuture<AppRun.Result> exactlyOnce = REFERENCES.get(app + "/" + StreamsConfig.EXACTLY_ONCE_V2);
        if (atLeastOnce == null || exactlyOnce == null || !atLeastOnce.isDone() || !exactlyOnce.isDone()
                || atLeastOnce.isCompletedExceptionally() || exactlyOnce.isCompletedExceptionally()) {
            return;
        }
        ParityDiff.describe(app, atLeastOnce.join().output(), exactlyOnce.join().output()).ifPresent(difference -> {
            throw new AssertionError(app.id() + ": Apache Kafka Streams' own reference runs differ between "
                + StreamsConfig.AT_LEAST_ONCE + " (reference) and " + StreamsConfig.EXACTLY_ONCE_V2 + " (candidate): the"
                + " example or its input is not deterministic" + System.lineSeparator() + difference);
        });
    }

    @AfterAll
    static void stopReferenceRunner() {
        REFERENCE_RUNNER.shutdownNow();
    }

    /** Creates the example's input topics, writes its input, and returns each input partition's end offset. */
    private static Map<TopicPartition, Long> produceInput(final ParityApp app) {
        app.inputTopics().forEach(BROKER::createTopic);
        // Right after creation a topic's partitions may answer NOT_LEADER_OR_FOLLOWER for a moment; an
        // idempotent producer can then lose batches to OUT_OF_ORDER_SEQUENCE_NUMBER retries. Plain
        // retries, one request at a time, keep every record and its order.
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers(),
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1),
                new StringSerializer(), new ByteArraySerializer())) {
            final List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (final InputRecord record : app.input(INPUTS)) {
                sends.add(producer.send(new ProducerRecord<>(record.topic(), null, record.timestamp(), record.key(), record.value())));
            }
            for (final Future<RecordMetadata> send : sends) {
                send.get();
            }
        } catch (final ExecutionException e) {
            throw new AssertionError("could not write " + app.id() + "'s input: " + e.getCause(), e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while writing " + app.id() + "'s input", e);
        }
        try (KafkaConsumer<byte[], byte[]> consumer = CommittedOutput.consumer(BROKER.bootstrapServers())) {
            final List<TopicPartition> partitions = app.groupInputTopics().stream()
                .flatMap(topic -> CommittedOutput.partitions(consumer, topic).stream()).toList();
            return consumer.endOffsets(partitions);
        }
    }

    private static <T> T join(final CompletableFuture<T> future) {
        try {
            return future.join();
        } catch (final CompletionException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
