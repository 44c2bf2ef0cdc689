package dev.sluice.compat.faults;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.compat.faults.Verifier.Verification;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * Two instances of the application share the input's partitions while input flows; one is SIGKILLed
 * and the other takes over its tasks. Once the input is all written and the survivor has caught up,
 * the verifier compares the committed output with the committed input.
 */
final class FailoverRun {

    private static final Duration RUNNING_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration TAKE_OVER_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(90);
    private static final int KEYS = 20;
    private static final int PARTITIONS = 4;

    private final LocalKafkaBroker broker;
    private final int records;
    private final Duration inputDuration;
    private final Path workDir;

    FailoverRun(final LocalKafkaBroker broker, final int records, final Duration inputDuration, final Path workDir) {
        this.broker = broker;
        this.records = records;
        this.inputDuration = inputDuration;
        this.workDir = workDir;
    }

    FailoverResult run(final Target target, final long seed) throws InterruptedException {
        final Topics topics = new Topics("failover-" + target.name().toLowerCase().replace('_', '-'));
        final Path runDir = RunDirectories.fresh(workDir.resolve(topics.prefix()));
        broker.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> broker.createTopic(topic, PARTITIONS));
        final Random random = new Random(seed);
        final Thread driver = new Thread(new InputDriver(broker.bootstrapServers(), topics.input(), KEYS, records, inputDuration,
            random.nextLong()), "failover-input-driver");

        final ChildJvm survivor = launch(target, topics, runDir, "survivor");
        final ChildJvm victim = launch(target, topics, runDir, "victim");
        try {
            driver.start();
            for (final ChildJvm instance : List.of(survivor, victim)) {
                if (!instance.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                    throw new AssertionError("an instance did not reach RUNNING; see " + instance.log());
                }
            }
            Thread.sleep(2_000 + random.nextInt(4_000));
            final long runningBefore = ChildOutput.runningTransitions(survivor.lines());
            victim.kill();
            final long killed = System.nanoTime();
            if (!survivor.awaitOutput(lines -> ChildOutput.runningTransitions(lines) > runningBefore, TAKE_OVER_TIMEOUT)) {
                throw new AssertionError("the survivor did not run again after the kill within " + TAKE_OVER_TIMEOUT.toSeconds()
                    + " s; see " + survivor.log());
            }
            final Duration takeOver = Duration.ofNanos(System.nanoTime() - killed);
            driver.join();
            final Verification verification = new Verifier(broker.bootstrapServers(), topics).awaitAndVerify(CATCH_UP_TIMEOUT);
            final boolean stayedUp = survivor.isAlive() && !ChildOutput.reachedError(survivor.lines());
            return new FailoverResult(target, verification, takeOver, stayedUp, survivor.log());
        } finally {
            driver.interrupt();
            victim.kill();
            survivor.stop();
        }
    }

    private ChildJvm launch(final Target target, final Topics topics, final Path runDir, final String instance) {
        return AggregationApp.launch(target, runDir.resolve(instance + ".log"), List.of(broker.bootstrapServers(), target.name(),
            topics.prefix(), runDir.resolve(instance + "-state").toString(), "exactly_once_v2", instance));
    }

    /** What a failover run saw: the verification, the time from the kill until the survivor ran again. */
    record FailoverResult(Target target, Verification verification, Duration takeOver, boolean survivorStayedUp, Path survivorLog) {

        boolean exact() {
            return survivorStayedUp && verification.mismatches().isEmpty();
        }

        String verdict() {
            if (!survivorStayedUp) {
                return "the survivor failed";
            }
            return verification.mismatches().isEmpty() ? "exact" : verification.mismatches().size() + " mismatches, first: "
                + verification.mismatches().get(0);
        }
    }
}
