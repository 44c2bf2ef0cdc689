package dev.sluice.compat.kafkastreams;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A suite: which published test jars it takes its classes from, and which of those classes it runs.
 * Tests of Kafka Streams' own store layers that build its store implementations themselves are run
 * like the others but reported as not runnable against a replacement, whatever their result. DSL
 * tests that merely mention a built-in store class are counted like any other test.
 */
record Suite(String name, String title, String selectionRule, List<String> testJars,
             Function<TestJar, List<String>> selection) {

    private static final String DRIVER = "org.apache.kafka.streams.TopologyTestDriver";
    private static final String STORE_INTERNALS = "org.apache.kafka.streams.state.internals.";

    static List<Suite> all() {
        return List.of(
            new Suite("kafka-streams", "Kafka Streams' own tests (DSL semantics through TopologyTestDriver)",
                "test classes of `kafka-streams` and `kafka-streams-test-utils` that drive a topology through "
                    + "`TopologyTestDriver` (their class files, nested classes included, refer to it)",
                List.of("kafka-streams", "kafka-streams-test-utils"),
                jar -> jar.classesMentioning(DRIVER).stream().filter(name -> name.endsWith("Test")).toList()),
            new Suite("kafka-streams-examples", "Kafka Streams examples' tests",
                "every class of the `kafka-streams-examples` test jar",
                List.of("kafka-streams-examples"),
                TestJar::classes));
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
