package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** Runs every suite on the baseline and on Sluice. */
final class CompatRun {

    /** The newest Kafka release whose test jars are published; the build resolves this version. */
    static final String TESTS_VERSION = "4.3.1";
    /** The classes whose origin the report names for each target: what the tests actually ran on. */
    static final List<String> RUNTIME_CLASSES = List.of("org.apache.kafka.streams.KafkaStreams",
        "org.apache.kafka.streams.TopologyTestDriver", "org.apache.kafka.streams.state.Stores");

    private final Classpaths classpaths;
    private final Path workDirectory;

    CompatRun(final Classpaths classpaths, final Path workDirectory) {
        this.classpaths = classpaths;
        this.workDirectory = workDirectory;
    }

    record Results(List<SuiteResult> suites, Classpaths classpaths) {
    }

    /**
     * Runs the given suites, each on the baseline and then on Sluice; a suite's results come as the
     * rows the report counts them in ({@link SuiteResult#rows()}).
     */
    Results run(final List<Suite> suites) throws IOException, InterruptedException {
        final List<SuiteResult> results = new ArrayList<>();
        for (final Suite suite : suites) {
            final List<Path> baselineClasspath = suite.onLocalBroker()
                ? classpaths.forIntegration(classpaths.forBaseline()) : classpaths.forBaseline();
            final List<String> classes = suite.select(baselineClasspath, TESTS_VERSION);
            final SuiteResult.Run baseline = timed(suite, baselineClasspath, classes,
                workDirectory.resolve(suite.name()).resolve("baseline"));
            final List<Path> sluiceClasspath = suite.onLocalBroker()
                ? classpaths.forIntegration(classpaths.forSluice()) : classpaths.forSluice();
            final SuiteResult.Run sluice = timed(suite, sluiceClasspath, classes,
                workDirectory.resolve(suite.name()).resolve("sluice"));
            results.addAll(new SuiteResult(suite, classes, suite.notRunnable(baselineClasspath, TESTS_VERSION),
                storeClassChecks(), baseline, sluice).rows());
        }
        return new Results(results, classpaths);
    }

    /** The reviewed list of tests that assert Kafka Streams' own store classes, as Class.method. */
    private static Set<String> storeClassChecks() throws IOException {
        try (InputStream list = CompatRun.class.getResourceAsStream("store-class-checks.txt")) {
            return new String(list.readAllBytes(), StandardCharsets.UTF_8).lines()
                .filter(line -> !line.isBlank() && !line.startsWith("#"))
                .collect(Collectors.toSet());
        }
    }

    /**
     * One target's run of a suite: all classes in one JVM, or, with a class timeout, each class in a JVM
     * of its own, one after the other.
     */
    private static SuiteResult.Run timed(final Suite suite, final List<Path> classpath, final List<String> classes,
                                         final Path directory) throws IOException, InterruptedException {
        final long started = System.nanoTime();
        final Map<String, String> origins = new LinkedHashMap<>();
        RUNTIME_CLASSES.forEach(name -> origins.put(name, Classpaths.originOf(name, classpath)));
        final List<TestOutcome> outcomes = new ArrayList<>();
        if (suite.classTimeout().isEmpty()) {
            outcomes.addAll(ForkedRun.run(classpath, classes, directory));
        } else {
            for (final String testClass : classes) {
                final long classStarted = System.nanoTime();
                final Path classDirectory = directory.resolve(testClass.substring(testClass.lastIndexOf('.') + 1));
                final List<TestOutcome> classOutcomes = ForkedRun.runClass(classpath, testClass, classDirectory,
                    suite.classTimeout().get());
                outcomes.addAll(classOutcomes);
                System.out.println(suite.name() + " " + directory.getFileName() + " " + testClass + ": "
                    + classOutcomes.stream().filter(o -> o.status() == TestOutcome.Status.PASSED).count() + "/"
                    + classOutcomes.size() + " passed in " + (System.nanoTime() - classStarted) / 1_000_000_000L + " s");
            }
        }
        return new SuiteResult.Run(outcomes, (System.nanoTime() - started) / 1_000_000_000L, origins);
    }
}
