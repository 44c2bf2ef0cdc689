package dev.sluice.streams.testing.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Starting, stopping and failing to start; each test starts brokers of its own. */
class LocalKafkaBrokerTest {

    // Generous bound for a JVM start plus a failed broker start on a slow machine; the point is "never hangs".
    private static final Duration FAILURE_BOUND = Duration.ofSeconds(90);

    @TempDir
    Path tmp;

    @Test
    void createsTopicsWithTheirPartitionsAndConfigs() throws Exception {
        try (LocalKafkaBroker broker = new LocalKafkaBroker(BrokerOptions.defaults().withTmpDir(tmp))) {
            broker.start();
            broker.createTopic("plain", 3);
            broker.createTopic(new NewTopic("compacted", Optional.of(2), Optional.empty())
                    .configs(Map.of("cleanup.policy", "compact")));

            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
                Map<String, TopicDescription> topics = admin.describeTopics(Set.of("plain", "compacted")).allTopicNames().get();
                assertEquals(3, topics.get("plain").partitions().size());
                assertEquals(2, topics.get("compacted").partitions().size());
                ConfigResource compacted = new ConfigResource(ConfigResource.Type.TOPIC, "compacted");
                assertEquals("compact", admin.describeConfigs(Set.of(compacted)).all().get()
                        .get(compacted).get("cleanup.policy").value());
            }
        }
    }

    @Test
    void serverPropertiesReplaceTheDefaults() throws Exception {
        try (LocalKafkaBroker broker = new LocalKafkaBroker(BrokerOptions.defaults().withTmpDir(tmp)
                .withServerProperty("auto.create.topics.enable", "false")
                .withServerProperty("transaction.max.timeout.ms", "2147483647"))) {
            broker.start();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
                String nodeId = Integer.toString(admin.describeCluster().nodes().get().iterator().next().id());
                ConfigResource node = new ConfigResource(ConfigResource.Type.BROKER, nodeId);
                Config config = admin.describeConfigs(Set.of(node)).all().get().get(node);
                assertEquals("false", config.get("auto.create.topics.enable").value());
                assertEquals("2147483647", config.get("transaction.max.timeout.ms").value());
            }
        }
    }

    @Test
    void closeFreesThePortAndDeletesTheData() throws Exception {
        LocalKafkaBroker broker = new LocalKafkaBroker(BrokerOptions.defaults().withTmpDir(tmp));
        broker.start();
        int port = port(broker.bootstrapServers());
        assertTrue(entries(tmp) > 0, "the broker keeps its data under its tmp dir");

        broker.close();

        assertEquals(0, entries(tmp), "data left behind after close");
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
        }
        assertThrows(IllegalStateException.class, broker::bootstrapServers);
    }

    @Test
    void startsOnTheRequestedPort() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = probe.getLocalPort();
        }
        try (LocalKafkaBroker broker = new LocalKafkaBroker(BrokerOptions.defaults().withPort(port).withTmpDir(tmp))) {
            broker.start();
            assertEquals("127.0.0.1:" + port, broker.bootstrapServers());
        }
    }

    @Test
    void aTakenPortIsReportedAsSuch() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            BrokerStartException error = failToStart(BrokerOptions.defaults().withPort(taken.getLocalPort()).withTmpDir(tmp));
            assertEquals("port " + taken.getLocalPort() + " on 127.0.0.1 is already in use;"
                    + " stop what listens there or choose another port", error.getMessage());
        }
    }

    @Test
    void anUnusableDataDirectoryIsReportedAsSuch() throws Exception {
        Path notADirectory = Files.createFile(tmp.resolve("a-file"));
        Path underAFile = notADirectory.resolve("kafka");

        BrokerStartException error = failToStart(BrokerOptions.defaults().withTmpDir(underAFile));

        assertTrue(error.getMessage().startsWith("cannot create the broker's data directory in " + underAFile),
                error.getMessage());
    }

    @Test
    void aBrokerSlowerThanTheStartupTimeoutIsStoppedAndReported() throws Exception {
        BrokerStartException error = failToStart(
                BrokerOptions.defaults().withStartupTimeout(Duration.ofMillis(1)).withTmpDir(tmp));

        assertTrue(error.getMessage().startsWith(
                "the broker did not answer metadata requests within the startup timeout of 1 ms"), error.getMessage());
        assertEquals(0, entries(tmp), "data left behind by a broker that timed out");
    }

    @Test
    void bootstrapServersNeedsARunningBroker() {
        IllegalStateException error = assertThrows(IllegalStateException.class,
                () -> new LocalKafkaBroker().bootstrapServers());
        assertTrue(error.getMessage().contains("@RegisterExtension"), error.getMessage());
    }

    @Test
    void badOptionsAreRejectedWhenMade() {
        assertThrows(IllegalArgumentException.class, () -> BrokerOptions.defaults().withPort(70000));
        assertThrows(IllegalArgumentException.class, () -> BrokerOptions.defaults().withStartupTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> BrokerOptions.parse(List.of("--port")));
        assertThrows(IllegalArgumentException.class, () -> BrokerOptions.parse(List.of("--port", "x")));
        assertThrows(IllegalArgumentException.class, () -> BrokerOptions.parse(List.of("--verbose")));
        assertThrows(IllegalArgumentException.class, () -> BrokerOptions.parse(List.of("--server-property", "novalue")));
        assertThrows(IllegalArgumentException.class, () -> BrokerOptions.defaults().withServerProperty("listeners", "x"));
        BrokerOptions options = BrokerOptions.defaults().withPort(9092).withStartupTimeout(Duration.ofMillis(1500))
                .withServerProperty("group.initial.rebalance.delay.ms", "10");
        assertEquals(options.withTmpDir(tmp), BrokerOptions.parse(options.withTmpDir(tmp).toArguments()));
    }

    private static BrokerStartException failToStart(BrokerOptions options) {
        return assertTimeoutPreemptively(FAILURE_BOUND, () -> {
            try (LocalKafkaBroker broker = new LocalKafkaBroker(options)) {
                return assertThrows(BrokerStartException.class, broker::start);
            }
        });
    }

    private static int port(String bootstrapServers) {
        return Integer.parseInt(bootstrapServers.substring(bootstrapServers.lastIndexOf(':') + 1));
    }

    private static long entries(Path dir) throws IOException {
        try (Stream<Path> children = Files.list(dir)) {
            return children.count();
        }
    }
}
