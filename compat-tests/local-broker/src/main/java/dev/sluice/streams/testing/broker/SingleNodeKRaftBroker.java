package dev.sluice.streams.testing.broker;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.metadata.storage.Formatter;

/**
 * A KRaft broker in this JVM: formats a fresh data directory, starts the server and waits
 * until it answers metadata requests. {@link BrokerMain} runs it in a JVM of its own, because
 * Kafka halts the JVM on some fatal errors, and tests must be able to kill applications
 * without touching the broker.
 */
final class SingleNodeKRaftBroker implements AutoCloseable {

    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration METADATA_RETRY_PAUSE = Duration.ofMillis(100);

    /** Set in the environment, a stopped broker keeps its data directory, for a failed run's topics to be read. */
    private static final String KEEP_DATA_VARIABLE = "SLUICE_KEEP_BROKER_DATA";

    private final BrokerOptions options;
    private final Object lock = new Object();
    private boolean closed;
    private Path dataDir;
    private KafkaRaftServer server;
    private Thread starter;
    private String bootstrapServers;

    SingleNodeKRaftBroker(BrokerOptions options) {
        this.options = options;
    }

    /**
     * Starts the broker. On failure the caller reports the error, then calls {@link #close()}:
     * a broker whose startup timed out is abandoned, not stopped, so its JVM must exit after.
     */
    void start() {
        long deadline = System.nanoTime() + options.startupTimeout().toNanos();
        int port = clientPort();
        int controllerPort = controllerPort(port);
        Path dir = createDataDir();
        KafkaConfig config = new KafkaConfig(BrokerProperties.singleNode(port, controllerPort, dir, options.serverProperties()), false);
        format(config, dir);
        KafkaRaftServer created = new KafkaRaftServer(config, Time.SYSTEM);
        synchronized (lock) {
            ensureNotClosed();
            server = created;
        }
        String bootstrap = Ports.HOST + ":" + port;
        awaitStartup(created, deadline, port);
        awaitMetadata(bootstrap, deadline);
        synchronized (lock) {
            bootstrapServers = bootstrap;
        }
    }

    String bootstrapServers() {
        synchronized (lock) {
            if (bootstrapServers == null) {
                throw new IllegalStateException("the broker is not running");
            }
            return bootstrapServers;
        }
    }

    /** Blocks until the server has stopped, by {@link #close()} or on its own. */
    void awaitShutdown() {
        KafkaRaftServer running;
        synchronized (lock) {
            running = server;
        }
        if (running != null) {
            running.awaitShutdown();
        }
    }

    /** Stops the server (bounded) and deletes its data directory (unless {@value #KEEP_DATA_VARIABLE} is set); harmless to call twice. */
    @Override
    public void close() {
        KafkaRaftServer running;
        Path dir;
        boolean stillStarting;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            running = server;
            dir = dataDir;
            stillStarting = starter != null && starter.isAlive();
        }
        // Kafka's shutdown() waits for a startup() still in progress, possibly forever; such a
        // broker is left to the JVM's exit.
        if (running != null && !stillStarting) {
            stop(running);
        }
        if (dir != null && System.getenv(KEEP_DATA_VARIABLE) != null) {
            System.err.println("the broker's data directory is kept (" + KEEP_DATA_VARIABLE + "): " + dir);
        } else if (dir != null) {
            delete(dir);
        }
    }

    private static void delete(Path dir) {
        try {
            Utils.delete(dir.toFile());
        } catch (IOException e) {
            System.err.println("could not delete the broker's data directory " + dir + ": " + e.getMessage());
        }
    }

    private int clientPort() {
        if (options.port() == 0) {
            return Ports.free();
        }
        Ports.requireFree(options.port());
        return options.port();
    }

    private static int controllerPort(int clientPort) {
        int port = Ports.free();
        while (port == clientPort) {
            port = Ports.free();
        }
        return port;
    }

    private Path createDataDir() {
        Path dir;
        try {
            dir = Files.createTempDirectory(options.tmpDir(), "sluice-kafka-");
        } catch (IOException | SecurityException e) {
            throw new BrokerStartException("cannot create the broker's data directory in " + options.tmpDir()
                    + ": " + describe(e), e);
        }
        synchronized (lock) {
            if (!closed) {
                dataDir = dir;
                return dir;
            }
        }
        delete(dir);
        throw stoppedWhileStarting();
    }

    private static void format(KafkaConfig config, Path dir) {
        PrintStream discard = new PrintStream(OutputStream.nullOutputStream());
        try {
            new Formatter()
                    .setPrintStream(discard)
                    .setNodeId(BrokerProperties.NODE_ID)
                    .setClusterId(Uuid.randomUuid().toString())
                    .setControllerListenerName(BrokerProperties.CONTROLLER_LISTENER)
                    .setMetadataLogDirectory(config.metadataLogDir())
                    .addDirectory(dir.toString())
                    .run();
        } catch (Exception e) {
            throw new BrokerStartException("cannot format the broker's data directory " + dir + ": " + describe(e), e);
        }
    }

    // KafkaRaftServer.startup() has no timeout of its own; it runs on a daemon thread so that a
    // broker that never becomes ready cannot hold this JVM.
    private void awaitStartup(KafkaRaftServer server, long deadline, int port) {
        CompletableFuture<Void> started = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                server.startup();
                started.complete(null);
            } catch (Throwable t) {
                started.completeExceptionally(t);
            }
        }, "kafka-broker-startup");
        thread.setDaemon(true);
        synchronized (lock) {
            starter = thread;
        }
        thread.start();
        try {
            started.get(remainingNanos(deadline), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw timedOut();
        } catch (ExecutionException e) {
            throw new BrokerStartException("the broker on " + Ports.HOST + ":" + port + " failed to start: "
                    + describe(e.getCause()), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BrokerStartException("interrupted while the broker was starting", e);
        }
    }

    private void awaitMetadata(String bootstrap, long deadline) {
        Map<String, Object> config = Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000);
        try (Admin admin = Admin.create(config)) {
            while (true) {
                long remaining = remainingNanos(deadline);
                int timeoutMs = (int) Math.max(1, Math.min(5_000, TimeUnit.NANOSECONDS.toMillis(remaining)));
                try {
                    Collection<Node> nodes = admin.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs))
                            .nodes().get(remaining, TimeUnit.NANOSECONDS);
                    if (!nodes.isEmpty()) {
                        return;
                    }
                } catch (ExecutionException | TimeoutException e) {
                    // not ready yet: retried until the deadline
                }
                Thread.sleep(METADATA_RETRY_PAUSE.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BrokerStartException("interrupted while waiting for the broker to answer", e);
        }
    }

    private long remainingNanos(long deadline) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
            throw timedOut();
        }
        return remaining;
    }

    private BrokerStartException timedOut() {
        return new BrokerStartException("the broker did not answer metadata requests within the startup timeout of "
                + options.startupTimeout().toMillis() + " ms; a slow machine may need a longer one");
    }

    private void ensureNotClosed() {
        if (closed) {
            throw stoppedWhileStarting();
        }
    }

    private static BrokerStartException stoppedWhileStarting() {
        return new BrokerStartException("the broker was stopped while it was starting");
    }

    // A broker stuck in shutdown must not keep the JVM from exiting: give up after a bound.
    private static void stop(KafkaRaftServer server) {
        Thread stopper = new Thread(() -> {
            server.shutdown();
            server.awaitShutdown();
        }, "kafka-broker-shutdown");
        stopper.setDaemon(true);
        stopper.start();
        try {
            stopper.join(SHUTDOWN_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (stopper.isAlive()) {
            System.err.println("the broker did not stop within " + SHUTDOWN_TIMEOUT.toSeconds() + " s; leaving it to the JVM's exit");
        }
    }

    /** The innermost cause's message, which is where Kafka says what went wrong. */
    static String describe(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return message == null ? root.getClass().getSimpleName() : message;
    }
}
