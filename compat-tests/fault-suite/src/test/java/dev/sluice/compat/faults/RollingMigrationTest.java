package dev.sluice.compat.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.compat.faults.Verifier.Verification;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A running application moves from Apache Kafka Streams to Sluice and back, one instance at a time, without
 * stopping the group, under either rebalance protocol: three instances of the min/sum/max/count application under exactly_once_v2 start on Apache
 * Kafka Streams 4.4.0 while input flows; each in turn is closed and started again, under the same static member
 * and state directory, on Sluice's runtime, then each in turn back on Apache's. The group holds both runtimes'
 * instances at every step between, and the verifier finds no input record lost or counted twice.
 */
class RollingMigrationTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final FaultSettings SETTINGS = FaultSettings.fromSystemProperties();
    private static final Duration INPUT_DURATION = Duration.ofSeconds(60);
    private static final Duration RUNNING_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(90);
    private static final List<String> INSTANCES = List.of("a", "b", "c");
    private static final int KEYS = 20;
    private static final int PARTITIONS = 6;
    private static final ReportSection REPORT = new ReportSection("Rolling migration, Apache → Sluice → Apache",
        "Three instances of the min/sum/max/count application under exactly_once_v2 share " + PARTITIONS + " input"
            + " partitions while " + SETTINGS.records() + " records are written over " + INPUT_DURATION.toSeconds()
            + " s; one at a time, each instance is closed and started again on Sluice's runtime, then each back on"
            + " Apache Kafka Streams'.",
        "Group protocol", "Verdict", "Input records", "Instance restarts");

    @ParameterizedTest
    @ValueSource(strings = {"classic", "streams"})
    void anApplicationMovesBetweenTheRuntimesOneInstanceAtATimeAndItsOutputStaysExact(final String protocol)
            throws InterruptedException {
        final long seed = Long.getLong("faults.seed", System.nanoTime());
        final Random random = new Random(seed);
        final Topics topics = new Topics("rolling-migration-" + protocol);
        final Path runDir = RunDirectories.fresh(Path.of("target", "rolling-migration-" + protocol));
        BROKER.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> BROKER.createTopic(topic, PARTITIONS));
        final Thread driver = new Thread(new InputDriver(BROKER.bootstrapServers(), topics.input(), KEYS,
            SETTINGS.records(), INPUT_DURATION, random.nextLong()), "rolling-migration-input-driver");

        final List<ChildJvm> running = new ArrayList<>();
        int restarts = 0;
        try {
            for (final String instance : INSTANCES) {
                running.add(launch(Target.APACHE, topics, runDir, instance, 0, protocol));
            }
            awaitRunning(running);
            driver.start();
            for (final Target next : List.of(Target.SLUICE_RUNTIME, Target.APACHE)) {
                for (int i = 0; i < INSTANCES.size(); i++) {
                    running.get(i).stop();
                    restarts++;
                    running.set(i, launch(next, topics, runDir, INSTANCES.get(i), restarts, protocol));
                    awaitRunning(running);
                }
            }
            driver.join();
            final Verification verification = new Verifier(BROKER.bootstrapServers(), topics)
                .awaitAndVerify(CATCH_UP_TIMEOUT);
            final List<String> failed = running.stream()
                .filter(instance -> !instance.isAlive() || ChildOutput.reachedError(instance.lines()))
                .map(instance -> instance.log().toString())
                .toList();
            final String verdict = !failed.isEmpty() ? "an instance failed: " + failed
                : verification.mismatches().isEmpty() ? "exact"
                : verification.mismatches().size() + " mismatches, first: " + verification.mismatches().get(0);
            REPORT.row(protocol, verdict, verification.inputRecords(), restarts);

            assertEquals(SETTINGS.records(), verification.inputRecords(), "committed input records");
            assertTrue(failed.isEmpty() && verification.mismatches().isEmpty(), verdict + " (seed " + seed + ")");
        } finally {
            driver.interrupt();
            for (final ChildJvm instance : running) {
                instance.stop();
            }
        }
    }

    @AfterAll
    static void writeReport() {
        REPORT.write("6-rolling-migration.md");
    }

    /**
     * Instance {@code instance}'s life number {@code life} on {@code target}, in the instance's state directory, a
     * member of the group under {@code protocol}.
     */
    private static ChildJvm launch(final Target target, final Topics topics, final Path runDir, final String instance,
                                   final int life, final String protocol) {
        return AggregationApp.launch(target, runDir.resolve(instance + "-" + life + "-" + target.name() + ".log"),
            List.of(BROKER.bootstrapServers(), target.name(), topics.prefix(), runDir.resolve(instance + "-state").toString(),
                "exactly_once_v2", instance, protocol));
    }

    private static void awaitRunning(final List<ChildJvm> instances) throws InterruptedException {
        for (final ChildJvm instance : instances) {
            if (!instance.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                throw new AssertionError("an instance did not reach RUNNING; see " + instance.log());
            }
        }
    }
}
