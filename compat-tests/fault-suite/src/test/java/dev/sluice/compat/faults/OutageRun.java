package dev.sluice.compat.faults;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.compat.faults.Verifier.Verification;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The broker goes away while the application runs and input flows: it is frozen (SIGSTOP) for a
 * while, longer than the transaction timeout, then let go on with its data. The application must
 * recover by itself; once the input is all written and it has caught up, the verifier compares the
 * committed output with the committed input.
 */
final class OutageRun {

    private static final Duration RUNNING_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration RUNNING_BEFORE_OUTAGE = Duration.ofSeconds(3);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(180);
    private static final int KEYS = 20;
    private static final int PARTITIONS = 3;

    private final LocalKafkaBroker broker;
    private final int records;
    private final Path workDir;

    OutageRun(final LocalKafkaBroker broker, final int records, final Path workDir) {
        this.broker = broker;
        this.records = records;
        this.workDir = workDir;
    }

    OutageResult run(final Target target, final Duration outage, final boolean staticMember, final long seed) throws InterruptedException {
        final Topics topics = new Topics("outage-" + outage.toSeconds() + "s-" + (staticMember ? "static-" : "dynamic-")
            + target.name().toLowerCase().replace('_', '-'));
        final Path runDir = RunDirectories.fresh(workDir.resolve(topics.prefix()));
        broker.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> broker.createTopic(topic, PARTITIONS));
        // Input goes on being written before, during (the driver's producer retries) and after the outage.
        final Duration inputDuration = RUNNING_BEFORE_OUTAGE.plus(outage).plusSeconds(10);
        final Thread driver = new Thread(new InputDriver(broker.bootstrapServers(), topics.input(), KEYS, records, inputDuration, seed),
            "outage-input-driver");

        final ChildJvm app = AggregationApp.launch(target, runDir.resolve("app.log"), List.of(broker.bootstrapServers(), target.name(),
            topics.prefix(), runDir.resolve("state").toString(), "exactly_once_v2", staticMember ? "instance" : AggregationApp.DYNAMIC_MEMBER));
        try {
            if (!app.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                throw new AssertionError("the application did not reach RUNNING; see " + app.log());
            }
            driver.start();
            Thread.sleep(RUNNING_BEFORE_OUTAGE.toMillis());
            broker.suspend();
            try {
                Thread.sleep(outage.toMillis());
            } finally {
                broker.resume();
            }
            final long resumed = System.nanoTime();
            driver.join();
            final Verification verification = new Verifier(broker.bootstrapServers(), topics).awaitAndVerify(CATCH_UP_TIMEOUT);
            final Duration caughtUp = Duration.ofNanos(System.nanoTime() - resumed);
            final boolean stayedUp = app.isAlive() && !ChildOutput.reachedError(app.lines());
            return new OutageResult(target, outage, staticMember, verification, caughtUp,
                stayedUp ? "recovered by itself" : "failed: " + ChildOutput.firstError(app.lines()), stayedUp, app.log());
        } finally {
            driver.interrupt();
            app.stop();
        }
    }

    /** What an outage run saw: how the application came through, and the time from the broker's return to caught-up output. */
    record OutageResult(Target target, Duration outage, boolean staticMember, Verification verification, Duration caughtUp, String recovery,
                        boolean stayedUp, Path log) {

        boolean exact() {
            return stayedUp && verification.mismatches().isEmpty();
        }

        String verdict() {
            return verification.mismatches().isEmpty() ? "exact" : verification.mismatches().size() + " mismatches, first: "
                + verification.mismatches().get(0);
        }
    }
}
