package dev.sluice.compat.kafkastreams;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A suite: which published test jars it takes its classes from, and which of those classes it runs.
 * Tests of Kafka Streams' own store layers that build its store implementations themselves are run
 * like the others but reported as not runnable against a replacement, whatever their result. DSL
 * tests that merely mention a built-in store class are counted like any other test.
 *
 * <p>A suite with a class timeout runs each class in a JVM of its own, ended when it takes longer; one
 * without runs all its classes in one JVM. A suite on the local broker runs with the integration class path.
 * {@code leaveOut} matches the display names of parameterized invocations the suite does not run
 * ({@link LeaveOutCondition}); they are reported as skipped.
 */
record Suite(String name, String title, String selectionRule, List<String> testJars,
             Function<TestJar, List<String>> selection, Optional<Duration> classTimeout, boolean onLocalBroker,
             Optional<String> leaveOut) {

    private static final String DRIVER = "org.apache.kafka.streams.TopologyTestDriver";
    private static final String STORE_INTERNALS = "org.apache.kafka.streams.state.internals.";
    private static final String INTEGRATION = "org.apache.kafka.streams.integration.";
    /**
     * The integration tests run so far, from the jar's exactly-once, interactive-query and restore tests:
     * the ones that exercise what Sluice's transactional stores change.
     */
    private static final List<String> INTEGRATION_CLASSES = List.of(
        "EosIntegrationTest",
        "EOSUncleanShutdownIntegrationTest",
        "RestoreIntegrationTest",
        "KTableSourceTopicRestartIntegrationTest",
        "StoreQueryIntegrationTest",
        "IQv2IntegrationTest",
        "IQv2VersionedStoreIntegrationTest",
        "ConsistencyVectorIntegrationTest",
        "VersionedKeyValueStoreIntegrationTest");
    private static final Duration INTEGRATION_CLASS_TIMEOUT = Duration.ofMinutes(15);
    /**
     * The invocations that repeat a test under the streams rebalance protocol (KIP-1071), by their display
     * names, which name it in the three ways the tests do: the same topology and stores with the broker
     * assigning the tasks. Left out to keep the suite's time within a few tens of minutes on two cores;
     * the classic protocol's invocations run.
     */
    private static final String STREAMS_PROTOCOL_INVOCATIONS = "groupProtocol=streams|STREAMS protocol|useNewProtocol=true";

    /** Every suite, as {@code make compat} runs them. */
    static List<Suite> all() {
        final List<Suite> suites = new ArrayList<>(fast());
        suites.add(integration());
        return suites;
    }

    /** The suites that take a few minutes together and gate the build. */
    static List<Suite> fast() {
        return List.of(
            new Suite("kafka-streams", "Kafka Streams' own tests (DSL semantics through TopologyTestDriver)",
                "test classes of `kafka-streams` and `kafka-streams-test-utils` that drive a topology through "
                    + "`TopologyTestDriver` (their class files, nested classes included, refer to it)",
                List.of("kafka-streams", "kafka-streams-test-utils"),
                jar -> jar.classesMentioning(DRIVER).stream().filter(name -> name.endsWith("Test")).toList(),
                Optional.empty(), false, Optional.empty()),
            new Suite("kafka-streams-examples", "Kafka Streams examples' tests",
                "every class of the `kafka-streams-examples` test jar",
                List.of("kafka-streams-examples"),
                TestJar::classes, Optional.empty(), false, Optional.empty()));
    }

    /** Suite 3: Kafka Streams' integration tests, each class on a fresh local broker. */
    static Suite integration() {
        return new Suite("kafka-streams-integration", "Kafka Streams' integration tests on a real broker",
            "from the `kafka-streams-integration-tests` test jar, its exactly-once, restore and interactive-query "
                + "tests: " + String.join(", ", INTEGRATION_CLASSES) + "; each class in a JVM of its own, ended "
                + "after " + INTEGRATION_CLASS_TIMEOUT.toMinutes() + " minutes. Invocations parameterized with the "
                + "streams rebalance protocol (KIP-1071) are left out, reported as skipped, to keep the suite's time "
                + "down: they run the same topologies and stores with the broker assigning the tasks",
            List.of("kafka-streams-integration-tests"),
            jar -> INTEGRATION_CLASSES.stream().map(name -> INTEGRATION + name)
                .filter(jar.classes()::contains).toList(),
            Optional.of(INTEGRATION_CLASS_TIMEOUT), true, Optional.of(STREAMS_PROTOCOL_INVOCATIONS));
    }

    /** The integration test classes of the jar that this suite does not run (yet). */
    static List<String> integrationClassesNotRun(final TestJar jar) {
        return jar.classes().stream()
            .filter(name -> name.startsWith(INTEGRATION) && name.endsWith("Test")
                && !INTEGRATION_CLASSES.contains(name.substring(INTEGRATION.length())))
            .map(name -> name.substring(INTEGRATION.length()))
            .toList();
    }

    /** The classes to run, from the test jars on the given class path. */
    List<String> select(final List<Path> classpath, final String testsVersion) {
        final List<String> classes = new ArrayList<>();
        for (final String artifact : testJars) {
            classes.addAll(selection.apply(TestJar.read(testJar(classpath, artifact, testsVersion))));
        }
        return classes;
    }

    /**
     * Why each selected class cannot judge a replacement, by class: it is a test in Kafka Streams'
     * store implementation package that refers to its built-in store implementations (RocksDB,
     * in-memory, segments), which Sluice replaces.
     */
    Map<String, String> notRunnable(final List<Path> classpath, final String testsVersion) {
        final Map<String, String> reasons = new TreeMap<>();
        for (final String artifact : testJars) {
            final TestJar jar = TestJar.read(testJar(classpath, artifact, testsVersion));
            for (final String testClass : selection.apply(jar)) {
                if (!testClass.startsWith(STORE_INTERNALS)) {
                    continue;
                }
                final String storeImplementations = jar.mentionedBy(testClass).stream()
                    .filter(Suite::isBuiltInStoreImplementation)
                    .map(name -> name.substring(STORE_INTERNALS.length()))
                    .collect(Collectors.joining(", "));
                if (!storeImplementations.isEmpty()) {
                    reasons.put(testClass, "tests Kafka Streams' own store implementations: " + storeImplementations);
                }
            }
        }
        return reasons;
    }

    static Path testJar(final List<Path> classpath, final String artifact, final String version) {
        final String fileName = artifact + "-" + version + "-test.jar";
        return classpath.stream()
            .filter(path -> path.getFileName().toString().equals(fileName))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException(fileName + " is not on the suite's class path"));
    }

    private static boolean isBuiltInStoreImplementation(final String className) {
        if (!className.startsWith(STORE_INTERNALS)) {
            return false;
        }
        final String name = className.substring(STORE_INTERNALS.length());
        return name.startsWith("RocksDB") || name.startsWith("RocksDb") || name.startsWith("InMemory")
            || name.contains("Segment");
    }
}
