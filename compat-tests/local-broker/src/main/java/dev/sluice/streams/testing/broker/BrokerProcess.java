package dev.sluice.streams.testing.broker;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * {@link BrokerMain} in a child JVM started with this JVM's classpath. The child watches this
 * process and exits with it, so a test JVM killed with SIGKILL leaves no broker behind.
 */
final class BrokerProcess {

    private static final String BOOTSTRAP_PREFIX = "bootstrap.servers=";
    // On top of the broker's own startup timeout: starting the JVM and loading the broker's classes.
    private static final Duration JVM_START_ALLOWANCE = Duration.ofSeconds(30);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(40);

    private final Process process;
    private final OutputTail output = new OutputTail(40);
    private final Thread stopOnExit;
    private final String bootstrapServers;

    private BrokerProcess(BrokerOptions options) {
        try {
            process = new ProcessBuilder(command(options)).start();
        } catch (IOException e) {
            throw new BrokerStartException("cannot start a JVM for the broker: " + e.getMessage(), e);
        }
        stopOnExit = new Thread(this::stop, "local-kafka-broker-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread errors = drain("local-kafka-broker-stderr", process.getErrorStream(), output::add, () -> { });
        drain("local-kafka-broker-stdout", process.getInputStream(), line -> {
            if (line.startsWith(BOOTSTRAP_PREFIX)) {
                ready.complete(line.substring(BOOTSTRAP_PREFIX.length()));
            } else {
                output.add(line);
            }
        }, () -> ready.completeExceptionally(new IllegalStateException("the broker closed its output")));
        try {
            bootstrapServers = awaitReady(ready, errors, options.startupTimeout().plus(JVM_START_ALLOWANCE));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    static BrokerProcess start(BrokerOptions options) {
        return new BrokerProcess(options);
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    /** Sends {@code signal} ({@code STOP}, {@code CONT}) to the broker's JVM. */
    void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " exited with " + kill.exitValue());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not signal the broker", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling the broker", e);
        }
    }

    void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(stopOnExit);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook is running or has run: nothing left to remove
        }
    }

    private String awaitReady(CompletableFuture<String> ready, Thread errors, Duration timeout) {
        try {
            return ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new BrokerStartException("the broker printed no " + BOOTSTRAP_PREFIX + " line within "
                    + timeout.toSeconds() + " s" + lastOutput());
        } catch (ExecutionException e) {
            awaitEnd(errors);
            String reason = output.errorLine();
            if (reason != null) {
                throw new BrokerStartException(reason);
            }
            throw new BrokerStartException("the broker's JVM exited with code " + exitCode() + " before it was ready"
                    + lastOutput());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BrokerStartException("interrupted while the broker was starting", e);
        }
    }

    // SIGTERM lets the broker delete its data; SIGKILL only when it does not stop in time.
    private void stop() {
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    // The error line may still be on its way through the pipe when standard output closes.
    private static void awaitEnd(Thread reader) {
        try {
            reader.join(STOP_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String exitCode() {
        try {
            return process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    ? Integer.toString(process.exitValue())
                    : "unknown (it is still running)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private String lastOutput() {
        String text = output.text();
        return text.isEmpty() ? "" : "; its last output:" + System.lineSeparator() + text;
    }

    private static List<String> command(BrokerOptions options) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // A test broker needs little heap; the default would be a quarter of the machine.
                "-Xmx1g",
                "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"),
                BrokerMain.class.getName(),
                "--exit-with-parent"));
        command.addAll(options.toArguments());
        return command;
    }

    private static Thread drain(String name, InputStream stream, Consumer<String> lines, Runnable atEnd) {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                in.lines().forEach(lines);
            } catch (IOException | UncheckedIOException e) {
                // the process is gone: nothing more to read
            } finally {
                atEnd.run();
            }
        }, name);
        reader.setDaemon(true);
        reader.start();
        return reader;
    }
}
