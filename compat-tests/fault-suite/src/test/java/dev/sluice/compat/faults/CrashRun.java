package dev.sluice.compat.faults;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.compat.faults.ChildOutput.Restore;
import dev.sluice.compat.faults.Verifier.Verification;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One crash check: input flows while the application is started and SIGKILLed over and over; then
 * it runs until it has caught up and the verifier compares committed output with committed input.
 */
final class CrashRun {

    private static final Duration RUNNING_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(90);
    private static final int KEYS = 20;
    private static final int PARTITIONS = 3;

    private final LocalKafkaBroker broker;
    private final CrashSettings settings;
    private final Path workDir;

    CrashRun(final LocalKafkaBroker broker, final CrashSettings settings, final Path workDir) {
        this.broker = broker;
        this.settings = settings;
        this.workDir = workDir;
    }

    CrashRunResult run(final Target target) throws InterruptedException {
        final long started = System.nanoTime();
        final Topics topics = new Topics(target.name().toLowerCase().replace('_', '-'));
        final Path runDir = RunDirectories.fresh(workDir.resolve(topics.prefix()));
        broker.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> broker.createTopic(topic, PARTITIONS));
        final List<String> appArguments = List.of(broker.bootstrapServers(), target.name(), topics.prefix(),
            runDir.resolve("state").toString(), settings.processingGuarantee(), "instance");

        final Random random = new Random(settings.seed());
        final Thread driver = new Thread(new InputDriver(broker.bootstrapServers(), topics.input(), KEYS, settings.records(),
            settings.inputDuration(), random.nextLong()), "eos-crash-input-driver");
        driver.start();

        final List<List<Restore>> restoresPerLife = new ArrayList<>();
        final List<Duration> toRunning = new ArrayList<>();
        final List<Duration> toFirstProcessed = new ArrayList<>();
        for (int life = 0; life < settings.kills(); life++) {
            final long launched = System.nanoTime();
            final ChildJvm child = AggregationApp.launch(target, runDir.resolve("life-" + life + ".log"), appArguments);
            try {
                if (!child.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                    throw new AssertionError("the application did not reach RUNNING; see " + child.log());
                }
                final long running = System.nanoTime();
                toRunning.add(Duration.ofNanos(running - launched));
                final Duration runFor = Duration.ofMillis(random.nextInt((int) settings.maxRunBeforeKill().toMillis()));
                // A life killed before input reached it processed nothing: it has no such time.
                if (child.awaitOutput(ChildOutput::processedARecord, runFor)) {
                    toFirstProcessed.add(Duration.ofNanos(System.nanoTime() - launched));
                }
                final long left = runFor.toNanos() - (System.nanoTime() - running);
                if (left > 0) {
                    Thread.sleep(Duration.ofNanos(left).toMillis());
                }
            } finally {
                child.kill();
            }
            restoresPerLife.add(ChildOutput.restores(child.lines()));
        }
        driver.join();

        final long launched = System.nanoTime();
        final ChildJvm finalLife = AggregationApp.launch(target, runDir.resolve("life-" + settings.kills() + ".log"), appArguments);
        final Verification verification;
        try {
            // Running first, so that this restart's restoration is seen even when the output is complete already.
            if (!finalLife.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                throw new AssertionError("the application did not reach RUNNING after the last kill; see " + finalLife.log());
            }
            toRunning.add(Duration.ofNanos(System.nanoTime() - launched));
            verification = new Verifier(broker.bootstrapServers(), topics).awaitAndVerify(CATCH_UP_TIMEOUT);
        } finally {
            finalLife.stop();
        }
        restoresPerLife.add(ChildOutput.restores(finalLife.lines()));
        return new CrashRunResult(target, settings, restoresPerLife, toRunning, toFirstProcessed, verification,
            Duration.ofNanos(System.nanoTime() - started));
    }
}
