package dev.sluice.compat.faults;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.compat.faults.Verifier.Verification;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The disk under the state directory runs full: the state directory lives on a small file system of its
 * own, which is filled to the last byte while the application runs and input flows, stays full while the
 * application is restarted on it, and is then freed. The application must not take its JVM down: it
 * goes on, or stops the way a Kafka Streams client does (to ERROR), and a life started once there is
 * room again goes on from what was committed. The verifier then compares the committed output with the
 * committed input.
 */
final class DiskFullRun {

    private static final Duration RUNNING_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration RUNNING_BEFORE_FULL = Duration.ofSeconds(3);
    private static final Duration FULL_FOR = Duration.ofSeconds(10);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(120);
    /**
     * Room for the application's twelve stores several times over (each RocksDB database preallocates
     * its manifest and write-ahead log as it opens), before the disk is filled.
     */
    private static final long DISK_BYTES = 512L * 1024 * 1024;
    private static final int KEYS = 20;
    private static final int PARTITIONS = 3;

    private final LocalKafkaBroker broker;
    private final int records;
    private final Path workDir;

    DiskFullRun(final LocalKafkaBroker broker, final int records, final Path workDir) {
        this.broker = broker;
        this.records = records;
        this.workDir = workDir;
    }

    DiskFullResult run(final Target target, final long seed) throws InterruptedException, IOException {
        final Topics topics = new Topics("disk-full-" + target.name().toLowerCase().replace('_', '-'));
        final Path runDir = RunDirectories.fresh(workDir.resolve(topics.prefix()));
        broker.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> broker.createTopic(topic, PARTITIONS));
        // Input goes on being written while the disk is full and through the restarts.
        final Duration inputDuration = RUNNING_BEFORE_FULL.plus(FULL_FOR).plusSeconds(15);
        final Thread driver = new Thread(new InputDriver(broker.bootstrapServers(), topics.input(), KEYS, records, inputDuration, seed),
            "disk-full-input-driver");

        try (SmallDisk disk = SmallDisk.mount(runDir.resolve("disk"), DISK_BYTES)) {
            final List<String> arguments = List.of(broker.bootstrapServers(), target.name(), topics.prefix(),
                disk.path().resolve("state").toString(), "exactly_once_v2", "instance");
            final List<ChildJvm> lives = new ArrayList<>();
            final IntFunction<ChildJvm> launch = life -> {
                final ChildJvm app = AggregationApp.launch(target, runDir.resolve("life-" + life + ".log"), arguments);
                lives.add(app);
                return app;
            };
            try {
                final ChildJvm running = launch.apply(0);
                if (!running.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                    throw new AssertionError("the application did not reach RUNNING; see " + running.log());
                }
                driver.start();
                Thread.sleep(RUNNING_BEFORE_FULL.toMillis());
                final long filledAt = System.nanoTime();
                disk.fill();
                running.awaitOutput(lines -> ChildOutput.reachedError(lines) || !running.isAlive(), FULL_FOR);
                Thread.sleep(Math.max(0, FULL_FOR.toMillis() - (System.nanoTime() - filledAt) / 1_000_000));
                final Outcome whileRunning = Outcome.of(running);
                running.stop();
                // What the stopped life's stores had preallocated is free again: the restart gets none of it.
                disk.fill();

                final ChildJvm restarted = launch.apply(1);
                restarted.awaitOutput(lines -> ChildOutput.reachedRunning(lines) || ChildOutput.reachedError(lines)
                    || !restarted.isAlive(), RUNNING_TIMEOUT);
                final Outcome onRestart = Outcome.of(restarted);
                disk.free();
                final long freed = System.nanoTime();
                ChildJvm last = restarted;
                if (onRestart != Outcome.WENT_ON || !ChildOutput.reachedRunning(restarted.lines())) {
                    restarted.stop();
                    last = launch.apply(2);
                    if (!last.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                        throw new AssertionError("the life after the disk was freed did not reach RUNNING; see " + last.log());
                    }
                }
                driver.join();
                final Verification verification = new Verifier(broker.bootstrapServers(), topics).awaitAndVerify(CATCH_UP_TIMEOUT);
                final Duration caughtUp = Duration.ofNanos(System.nanoTime() - freed);
                final boolean stayedUp = last.isAlive() && !ChildOutput.reachedError(last.lines());
                return new DiskFullResult(target, whileRunning.describe(running), onRestart.describe(restarted),
                    whileRunning != Outcome.CRASHED && onRestart != Outcome.CRASHED, verification, caughtUp, stayedUp,
                    runDir);
            } finally {
                driver.interrupt();
                for (final ChildJvm life : lives) {
                    life.stop();
                }
            }
        }
    }

    /** What became of one life of the application on the full disk. */
    enum Outcome {
        WENT_ON,
        /** The client went to ERROR, its JVM alive: what Kafka Streams does when a thread fails. */
        WENT_TO_ERROR,
        /** {@code KafkaStreams#start} threw, out of the application's main method: the JVM exits with 1. */
        START_FAILED,
        /** The JVM ended otherwise: a crash. */
        CRASHED;

        /** The exit status of a JVM whose main method threw. */
        private static final int UNCAUGHT_IN_MAIN = 1;

        static Outcome of(final ChildJvm app) {
            if (!app.isAlive()) {
                return app.exitValue() == UNCAUGHT_IN_MAIN ? START_FAILED : CRASHED;
            }
            return ChildOutput.reachedError(app.lines()) ? WENT_TO_ERROR : WENT_ON;
        }

        String describe(final ChildJvm app) {
            return switch (this) {
                case WENT_ON -> ChildOutput.reachedRunning(app.lines()) ? "ran on" : "not RUNNING after " + RUNNING_TIMEOUT.toSeconds() + " s";
                case WENT_TO_ERROR -> "went to ERROR: " + ChildOutput.firstError(app.lines());
                case START_FAILED -> "start failed: " + ChildOutput.firstError(app.lines());
                case CRASHED -> "JVM exited with " + app.exitValue() + ": " + ChildOutput.firstError(app.lines());
            };
        }
    }

    /**
     * What a disk-full run saw: each life on the full disk, and the time from freeing it to caught-up
     * output; {@code runDir} holds every life's log.
     */
    record DiskFullResult(Target target, String whileRunning, String onRestart, boolean noCrash, Verification verification,
                          Duration caughtUp, boolean stayedUp, Path runDir) {

        /** Exact output, no crash, and a last life still running. */
        boolean exact() {
            return noCrash && stayedUp && verification.mismatches().isEmpty();
        }

        String verdict() {
            return verification.mismatches().isEmpty() ? "exact" : verification.mismatches().size() + " mismatches, first: "
                + verification.mismatches().get(0);
        }
    }
}
