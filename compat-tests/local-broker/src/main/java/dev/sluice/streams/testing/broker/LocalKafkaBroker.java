package dev.sluice.streams.testing.broker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A single-node KRaft Apache Kafka broker on 127.0.0.1, in a JVM of its own, for tests.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final LocalKafkaBroker BROKER = new LocalKafkaBroker();
 *
 * @Test
 * void roundTrip() {
 *     BROKER.createTopic("input", 1);
 *     ... BROKER.bootstrapServers() ...
 * }
 * }</pre>
 *
 * Registered on a static field, the broker starts before the class's first test and stops
 * after its last one (nested classes share it). Outside JUnit, {@link #start()} and
 * {@link #close()} do the same.
 */
public final class LocalKafkaBroker implements BeforeAllCallback, AfterAllCallback, AutoCloseable {

    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

    private final BrokerOptions options;
    private BrokerProcess process;
    private int classesUsingIt;

    public LocalKafkaBroker() {
        this(BrokerOptions.defaults());
    }

    public LocalKafkaBroker(BrokerOptions options) {
        this.options = options;
    }

    /**
     * Starts the broker and returns once it answers metadata requests; does nothing when it
     * is running already.
     *
     * @throws BrokerStartException when it cannot start, with the reason in the message
     */
    public synchronized void start() {
        if (process == null) {
            process = BrokerProcess.start(options);
        }
    }

    /** {@code 127.0.0.1:PORT} of the running broker. */
    public synchronized String bootstrapServers() {
        if (process == null) {
            throw new IllegalStateException("the broker is not running: register it with @RegisterExtension on a"
                    + " static field, or call start()");
        }
        return process.bootstrapServers();
    }

    /**
     * Freezes the broker (SIGSTOP): it accepts no connection and answers no request, and every
     * client's requests time out, until {@link #resume()}. Its data and its port stay.
     */
    public synchronized void suspend() {
        runningProcess().signal("STOP");
    }

    /** Lets a {@link #suspend() suspended} broker go on (SIGCONT). */
    public synchronized void resume() {
        runningProcess().signal("CONT");
    }

    private BrokerProcess runningProcess() {
        if (process == null) {
            throw new IllegalStateException("the broker is not running");
        }
        return process;
    }

    /** Creates a topic of replication factor 1 and waits until the broker has it. */
    public void createTopic(String name, int partitions) {
        createTopic(new NewTopic(name, Optional.of(partitions), Optional.empty()));
    }

    /**
     * Creates a topic, with whatever configs it carries, and waits until the broker serves it: the
     * controller acknowledges a new topic before the broker has applied it, and a loaded machine
     * shows the gap as UnknownTopicOrPartitionException.
     */
    public void createTopic(NewTopic topic) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
            admin.createTopics(List.of(topic)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            awaitServed(admin, topic.name());
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not create topic " + topic.name() + ": "
                    + SingleNodeKRaftBroker.describe(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topic " + topic.name(), e);
        }
    }

    private static void awaitServed(Admin admin, String topic)
            throws ExecutionException, TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
        ConfigResource configs = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        while (true) {
            try {
                TopicDescription description = admin.describeTopics(Set.of(topic)).allTopicNames()
                        .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(topic);
                admin.describeConfigs(Set.of(configs)).all().get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                if (description.partitions().stream().allMatch(partition -> partition.leader() != null)) {
                    return;
                }
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() > deadline) {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("topic " + topic + " has partitions without a leader");
            }
            Thread.sleep(50);
        }
    }

    /** Stops the broker and deletes its data; harmless when it is not running. */
    @Override
    public synchronized void close() {
        if (process != null) {
            process.close();
            process = null;
        }
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (classesUsingIt++ == 0) {
            start();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (--classesUsingIt == 0) {
            close();
        }
    }
}
