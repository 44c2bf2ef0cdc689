package dev.sluice.compat.eoscrash;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One life of {@link AggregationApp} in a JVM of its own, on the test's own classpath, its output
 * in a log file.
 */
final class ChildProcess {

    private final Process process;
    private final Path log;

    private ChildProcess(final Process process, final Path log) {
        this.process = process;
        this.log = log;
    }

    static ChildProcess start(final Path log, final List<String> appArguments) {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            // Each life is a few seconds long: the quick compiler and a small collector start it sooner
            // and leave the shared cores to the broker and the other JVM.
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-cp", System.getProperty("java.class.path"),
            AggregationApp.class.getName()));
        command.addAll(appArguments);
        try {
            Files.createDirectories(log.getParent());
            final Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
            return new ChildProcess(process, log);
        } catch (final IOException e) {
            throw new UncheckedIOException("could not start the application's JVM", e);
        }
    }

    /** Waits until the child reports RUNNING; false when it did not within the timeout or died first. */
    boolean awaitRunning(final Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (ChildOutput.reachedRunning(lines())) {
                return true;
            }
            if (!process.isAlive()) {
                return false;
            }
            Thread.sleep(50);
        }
        return false;
    }

    /** SIGKILL: no shutdown hook, no close, no final commit. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM, which closes the application cleanly. */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            kill();
        }
    }

    List<String> lines() {
        try {
            return Files.readAllLines(log);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path log() {
        return log;
    }
}
