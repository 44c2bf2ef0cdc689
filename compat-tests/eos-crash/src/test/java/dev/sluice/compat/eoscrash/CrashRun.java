package dev.sluice.compat.eoscrash;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.compat.eoscrash.ChildOutput.Restore;
import dev.sluice.compat.eoscrash.Verifier.Verification;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.utils.Utils;

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
        final Path runDir = workDir.resolve(topics.prefix());
        deleteRecursively(runDir);
        broker.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> broker.createTopic(topic, PARTITIONS));
        final List<String> appArguments = List.of(broker.bootstrapServers(), target.name(), topics.prefix(),
            runDir.resolve("state").toString(), settings.processingGuarantee());

        final Random random = new Random(settings.seed());
        final Thread driver = new Thread(new InputDriver(broker.bootstrapServers(), topics.input(), KEYS, settings.records(),
            settings.inputDuration(), random.nextLong()), "eos-crash-input-driver");
        driver.start();

        final List<List<Restore>> restoresPerLife = new ArrayList<>();
        for (int life = 0; life < settings.kills(); life++) {
            final ChildJvm child = startLife(target, runDir.resolve("life-" + life + ".log"), appArguments);
            try {
                if (!child.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                    throw new AssertionError("the application did not reach RUNNING; see " + child.log());
                }
                Thread.sleep(random.nextInt((int) settings.maxRunBeforeKill().toMillis()));
            } finally {
                child.kill();
            }
            restoresPerLife.add(ChildOutput.restores(child.lines()));
        }
        driver.join();

        final ChildJvm finalLife = startLife(target, runDir.resolve("life-" + settings.kills() + ".log"), appArguments);
        final Verification verification;
        try {
            // Running first, so that this restart's restoration is seen even when the output is complete already.
            if (!finalLife.awaitOutput(ChildOutput::reachedRunning, RUNNING_TIMEOUT)) {
                throw new AssertionError("the application did not reach RUNNING after the last kill; see " + finalLife.log());
            }
            verification = new Verifier(broker.bootstrapServers(), topics).awaitAndVerify(CATCH_UP_TIMEOUT);
        } finally {
            finalLife.stop();
        }
        restoresPerLife.add(ChildOutput.restores(finalLife.lines()));
        return new CrashRunResult(target, settings, restoresPerLife, verification, Duration.ofNanos(System.nanoTime() - started));
    }

    /** One life of {@link AggregationApp}, on the target's class path. */
    private static ChildJvm startLife(final Target target, final Path log, final List<String> appArguments) {
        return ChildJvm.start(log, target.classPath(), AggregationApp.class.getName(), appArguments);
    }

    /** Deletes {@code dir} and everything in it; a missing one is fine. */
    private static void deleteRecursively(final Path dir) {
        try {
            Utils.delete(dir.toFile());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
