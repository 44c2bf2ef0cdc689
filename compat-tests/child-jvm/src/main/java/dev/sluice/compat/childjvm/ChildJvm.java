package dev.sluice.compat.childjvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * An application's main class in a JVM of its own, its standard output and error in a log file.
 * A child outlives nothing: the test JVM's shutdown kills the children it has not stopped.
 *
 * <p>RocksDB's Java binding unpacks its native library into a new temporary file on every start and
 * deletes it only when the JVM exits normally, so each killed child would leave one behind; a child
 * unpacks it into a directory of its own instead, removed once the child has exited.
 */
public final class ChildJvm {

    /**
     * JVM options for applications under test that live seconds to a minute: the quick compiler and a
     * small collector start them sooner and leave the shared cores to the broker and the other JVMs.
     */
    public static final List<String> SHORT_LIVED = List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(30);

    private final Process process;
    private final Path log;
    private final Path nativeLibraries;
    private final Thread killOnExit;

    private ChildJvm(final Process process, final Path log, final Path nativeLibraries) {
        this.process = process;
        this.log = log;
        this.nativeLibraries = nativeLibraries;
        this.killOnExit = new Thread(this::killNow, "child-jvm-kill-on-exit");
        Runtime.getRuntime().addShutdownHook(killOnExit);
    }

    /** Starts {@code mainClass} with {@code arguments} on {@code classpath}, writing its output to {@code log}. */
    public static ChildJvm start(final Path log, final String classpath, final String mainClass, final List<String> arguments) {
        return start(log, SHORT_LIVED, classpath, mainClass, arguments);
    }

    /** Starts {@code mainClass} as {@link #start(Path, String, String, List)} does, in a JVM with {@code jvmOptions}. */
    public static ChildJvm start(final Path log, final List<String> jvmOptions, final String classpath, final String mainClass,
                                 final List<String> arguments) {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classpath, mainClass));
        command.addAll(arguments);
        try {
            Files.createDirectories(log.toAbsolutePath().getParent());
            final Path nativeLibraries = Files.createTempDirectory("child-jvm-native-");
            final ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
            builder.environment().put("ROCKSDB_SHAREDLIB_DIR", nativeLibraries.toString());
            return new ChildJvm(builder.start(), log, nativeLibraries);
        } catch (final IOException e) {
            throw new UncheckedIOException("could not start a JVM for " + mainClass, e);
        }
    }

    /**
     * Waits until the child's output so far satisfies {@code condition}; false when it did not within
     * the timeout or the child exited first.
     */
    public boolean awaitOutput(final Predicate<List<String>> condition, final Duration timeout) throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.test(lines())) {
                return true;
            }
            if (!process.isAlive()) {
                return condition.test(lines());
            }
            Thread.sleep(50);
        }
        return false;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The operating system's process id, under which {@code /proc} describes the child. */
    public long pid() {
        return process.pid();
    }

    /** The exit code of a child that has exited. */
    public int exitValue() {
        return process.exitValue();
    }

    /** SIGKILL: no shutdown hook, no close, no final commit. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        exited(process.waitFor(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
    }

    /** SIGTERM, which lets the application close cleanly; SIGKILL when it does not exit in time. */
    public void stop() throws InterruptedException {
        process.destroy();
        if (process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            exited(true);
        } else {
            kill();
        }
    }

    public List<String> lines() {
        try {
            return Files.readAllLines(log);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The last {@code count} lines of the child's output, one per line, for failure messages. */
    public String tail(final int count) {
        final List<String> lines = lines();
        return String.join(System.lineSeparator(), lines.subList(Math.max(0, lines.size() - count), lines.size()));
    }

    public Path log() {
        return log;
    }

    private void exited(final boolean gone) {
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (final IllegalStateException alreadyShuttingDown) {
            // the hook is running or has run: nothing left to remove
        }
        if (gone) {
            deleteNativeLibraries();
        }
    }

    private void killNow() {
        process.destroyForcibly();
        try {
            if (process.waitFor(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                deleteNativeLibraries();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void deleteNativeLibraries() {
        if (!Files.exists(nativeLibraries)) {
            return;
        }
        try (var paths = Files.walk(nativeLibraries)) {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("could not delete " + nativeLibraries, e);
        }
    }
}
