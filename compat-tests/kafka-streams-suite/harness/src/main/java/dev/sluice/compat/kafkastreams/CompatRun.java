package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** Runs every suite on the baseline and, when Sluice's DSL store suppliers exist, on Sluice. */
final class CompatRun {

    /** The newest Kafka release whose test jars are published; the build resolves this version. */
    static final String TESTS_VERSION = "4.3.1";
    static final String SLUICE_SUPPLIERS = "dev.sluice.streams.state.SluiceDslStoreSuppliers";
    private static final String TALLY_PROPERTY = "sluice.compat.storeTally";
    private static final String TALLY_FILE = "store-tally.tsv";

    private final Classpaths classpaths;
    private final Path workDirectory;

    CompatRun(final Classpaths classpaths, final Path workDirectory) {
        this.classpaths = classpaths;
        this.workDirectory = workDirectory;
    }

    record Results(List<SuiteResult> suites, boolean sluiceRan, Map<String, Long> storeTally, Classpaths classpaths) {
    }

    /** Runs the given suites, each on the baseline and then, when it can, on Sluice. */
    Results run(final List<Suite> suites) throws IOException, InterruptedException {
        final boolean sluiceRuns = classpaths.sluiceHasDslStoreSuppliers(SLUICE_SUPPLIERS);
        final List<SuiteResult> results = new ArrayList<>();
        final Map<String, Long> tally = new TreeMap<>();
        for (final Suite suite : suites) {
            final List<Path> baselineClasspath = suite.onLocalBroker()
                ? classpaths.forIntegration(classpaths.forBaseline()) : classpaths.forBaseline();
            final List<String> classes = suite.select(baselineClasspath, TESTS_VERSION);
            final SuiteResult.Run baseline = timed(suite, baselineClasspath, classes,
                workDirectory.resolve(suite.name()).resolve("baseline"), Optional.empty());
            Optional<SuiteResult.Run> sluice = Optional.empty();
            if (sluiceRuns) {
                final List<Path> sluiceClasspath = suite.onLocalBroker()
                    ? classpaths.forIntegration(classpaths.forSluice()) : classpaths.forSluice();
                sluice = Optional.of(timed(suite, sluiceClasspath, classes,
                    workDirectory.resolve(suite.name()).resolve("sluice"), Optional.of(tally)));
            }
            results.add(new SuiteResult(suite, classes, suite.notRunnable(baselineClasspath, TESTS_VERSION),
                storeClassChecks(), baseline, sluice));
        }
        return new Results(results, sluiceRuns, tally, classpaths);
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
     * of its own, one after the other. With a tally, each JVM counts the stores it routed into it.
     */
    private static SuiteResult.Run timed(final Suite suite, final List<Path> classpath, final List<String> classes,
                                         final Path directory, final Optional<Map<String, Long>> tally)
        throws IOException, InterruptedException {
        final long started = System.nanoTime();
        final List<TestOutcome> outcomes = new ArrayList<>();
        final List<String> classesOnSluiceStores = new ArrayList<>();
        if (suite.classTimeout().isEmpty()) {
            outcomes.addAll(ForkedRun.run(classpath, classes, directory, systemProperties(suite, directory, tally)));
            addTally(directory, tally);
        } else {
            for (final String testClass : classes) {
                final long classStarted = System.nanoTime();
                final Path classDirectory = directory.resolve(testClass.substring(testClass.lastIndexOf('.') + 1));
                final List<TestOutcome> classOutcomes = ForkedRun.runClass(classpath, testClass, classDirectory,
                    systemProperties(suite, classDirectory, tally), suite.classTimeout().get());
                if (tally.isPresent() && StoreTally.anyServedBySluice(classDirectory.resolve(TALLY_FILE))) {
                    classesOnSluiceStores.add(testClass);
                }
                addTally(classDirectory, tally);
                outcomes.addAll(classOutcomes);
                System.out.println(suite.name() + " " + directory.getFileName() + " " + testClass + ": "
                    + classOutcomes.stream().filter(o -> o.status() == TestOutcome.Status.PASSED).count() + "/"
                    + classOutcomes.size() + " passed in " + (System.nanoTime() - classStarted) / 1_000_000_000L + " s");
            }
        }
        return new SuiteResult.Run(outcomes, (System.nanoTime() - started) / 1_000_000_000L, classesOnSluiceStores);
    }

    /** The JVM's settings: what the suite leaves out, and where to write the store tally. */
    private static List<String> systemProperties(final Suite suite, final Path directory,
                                                 final Optional<Map<String, Long>> tally) throws IOException {
        final List<String> properties = new ArrayList<>();
        suite.leaveOut().ifPresent(pattern -> properties.add("-D" + LeaveOutCondition.PROPERTY + "=" + pattern));
        if (tally.isPresent()) {
            Files.deleteIfExists(directory.resolve(TALLY_FILE));
            properties.add("-D" + TALLY_PROPERTY + "=" + directory.resolve(TALLY_FILE));
        }
        return properties;
    }

    private static void addTally(final Path directory, final Optional<Map<String, Long>> tally) throws IOException {
        if (tally.isPresent()) {
            StoreTally.addTo(tally.get(), directory.resolve(TALLY_FILE));
        }
    }
}
