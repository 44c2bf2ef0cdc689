package dev.sluice.compat.kafkastreams;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A suite: which published test jars it takes its classes from, and which of those classes it runs.
 * Tests of Kafka Streams' own store layers that build its store implementations themselves are run
 * like the others but reported as not runnable against a replacement, whatever their result. DSL
 * tests that merely mention a built-in store class are counted like any other test.
 *
 * <p>A suite with a class timeout runs each class in a JVM of its own, ended when it takes longer; one
 * without runs all its classes in one JVM. A suite on the local broker runs with the integration class path.
 * {@code parts} are the named parts of its classes that this run holds ({@link IntegrationParts}), empty
 * for a suite that is not split into parts. The invocations whose display names match
 * {@code streamsProtocol} run under the streams rebalance protocol (KIP-1071); the report counts them in
 * rows of their own ({@link #streamsProtocolRows()}).
 */
record Suite(String name, String title, String selectionRule, List<String> testJars,
             Function<TestJar, List<String>> selection, Optional<Duration> classTimeout, boolean onLocalBroker,
             List<IntegrationParts.Part> parts, Optional<Pattern> streamsProtocol) {

    private static final String DRIVER = "org.apache.kafka.streams.TopologyTestDriver";
    private static final String STORE_INTERNALS = "org.apache.kafka.streams.state.internals.";
    /**
     * Fits the slowest integration classes measured on two cores, with room to spare, and keeps a class
     * that hangs from taking the rest of the run's time.
     */
    private static final Duration INTEGRATION_CLASS_TIMEOUT = Duration.ofMinutes(15);
    /**
     * The invocations that repeat a test under the streams rebalance protocol (KIP-1071), by their display
     * names, which name it by the parameter that picks it (a group protocol, or a flag under one of three
     * names) or by a named argument: the same topology and stores with the broker assigning the tasks.
     * Sluice does not speak that protocol yet, so they are counted apart from the classic protocol's.
     */
    private static final Pattern STREAMS_PROTOCOL_INVOCATIONS = Pattern.compile("groupProtocol=streams"
        + "|STREAMS protocol|useNewProtocol=true|streamsProtocolEnabled=true|streamsRebalanceProtocolEnabled=true");

    /** Every suite, as {@code make compat} runs them, with the given parts of the integration suite. */
    static List<Suite> all(final List<IntegrationParts.Part> integrationParts) {
        final List<Suite> suites = new ArrayList<>(fast());
        suites.add(integration(integrationParts));
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
                Optional.empty(), false, List.of(), Optional.empty()),
            new Suite("kafka-streams-examples", "Kafka Streams examples' tests",
                "every class of the `kafka-streams-examples` test jar",
                List.of("kafka-streams-examples"),
                TestJar::classes, Optional.empty(), false, List.of(), Optional.empty()));
    }

    /** Suite 3: Kafka Streams' integration tests, each class on a fresh local broker, the given parts of them. */
    static Suite integration(final List<IntegrationParts.Part> parts) {
        return new Suite("kafka-streams-integration", "Kafka Streams' integration tests on a real broker",
            "every test class of the `kafka-streams-integration-tests` test jar (the `*Test` classes of its "
                + "integration package), in named parts that `make compat COMPAT_PARTS=part,...` picks (default: "
                + "all); each class in a JVM of its own, ended after " + INTEGRATION_CLASS_TIMEOUT.toMinutes()
                + " minutes. The invocations parameterized with the streams rebalance protocol (KIP-1071) run "
                + "too and are counted in rows of their own, `kafka-streams-integration (streams protocol)`",
            List.of("kafka-streams-integration-tests"),
            jar -> IntegrationParts.classesOf(parts, jar),
            Optional.of(INTEGRATION_CLASS_TIMEOUT), true, parts, Optional.of(STREAMS_PROTOCOL_INVOCATIONS));
    }

    /**
     * The suite the streams-protocol invocations of this one are reported as: the same classes and runs,
     * counted apart.
     */
    Suite streamsProtocolRows() {
        final Pattern pattern = streamsProtocol.orElseThrow();
        return new Suite(name + " (streams protocol)", title + ", under the streams rebalance protocol (KIP-1071)",
            "the invocations of `" + name + "`'s tests whose display names name the streams rebalance protocol (`"
                + pattern.pattern() + "`), from the same runs as `" + name + "`: the same topologies and stores "
                + "with the broker assigning the tasks. Sluice does not speak that protocol yet",
            testJars, selection, classTimeout, onLocalBroker, parts, Optional.empty());
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
