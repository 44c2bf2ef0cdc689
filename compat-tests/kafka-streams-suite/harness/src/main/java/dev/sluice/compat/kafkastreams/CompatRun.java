package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
    private final Path partResults;
    private final String build;
    private final Optional<Path> savedBaselines;

    /**
     * Runs in {@code workDirectory}; the integration suite's parts are saved to and reported from
     * {@code partResults} ({@link PartResults}), as run on {@code build}. Where {@code savedBaselines} holds
     * a part ({@link PartResults}), the baseline's outcomes of that part are taken from there, not run again.
     */
    CompatRun(final Classpaths classpaths, final Path workDirectory, final Path partResults, final String build,
              final Optional<Path> savedBaselines) {
        this.classpaths = classpaths;
        this.workDirectory = workDirectory;
        this.partResults = partResults;
        this.build = build;
        this.savedBaselines = savedBaselines;
    }

    /** The suites' results, and for each integration part the report holds, the build and day it ran. */
    record Results(List<SuiteResult> suites, Classpaths classpaths, Map<String, String> partRuns) {
    }

    private record Runs(List<String> classes, SuiteResult.Run baseline, SuiteResult.Run sluice) {
    }

    /**
     * Runs the given suites, each on the baseline and then on Sluice; a suite's results come as the
     * rows the report counts them in ({@link SuiteResult#rows()}). A suite in parts runs part by part,
     * saving each, and is reported with every part saved.
     */
    Results run(final List<Suite> suites) throws IOException, InterruptedException {
        final List<SuiteResult> results = new ArrayList<>();
        final Map<String, String> partRuns = new LinkedHashMap<>();
        for (final Suite suite : suites) {
            if (suite.parts().isEmpty()) {
                final Runs runs = runBoth(suite, suite.name());
                results.addAll(result(suite, runs).rows());
                continue;
            }
            for (final IntegrationParts.Part part : suite.parts()) {
                final Suite partSuite = Suite.integration(List.of(part));
                final String directory = suite.name() + "/" + part.name();
                final Optional<PartResults.Saved> savedBaseline = savedBaselines.isEmpty()
                    ? Optional.empty() : PartResults.load(savedBaselines.get(), part);
                final Runs runs = savedBaseline.isPresent()
                    ? runAgainstSaved(partSuite, savedBaseline.get(), directory) : runBoth(partSuite, directory);
                PartResults.save(partResults, part, build, runs.baseline(), runs.sluice(),
                    savedBaseline.map(PartResults.Saved::baselineRanOn));
            }
            final List<PartResults.Saved> saved = PartResults.loadAll(partResults);
            saved.forEach(part -> partRuns.put(part.part().name(), part.ranOn()));
            final Suite held = Suite.integration(saved.stream().map(PartResults.Saved::part).toList());
            results.addAll(result(held, savedRuns(held, saved)).rows());
        }
        return new Results(results, classpaths, partRuns);
    }

    private Runs runBoth(final Suite suite, final String directory) throws IOException, InterruptedException {
        final List<String> classes = suite.select(baselineClasspath(suite), TESTS_VERSION);
        final SuiteResult.Run baseline = timed(suite, baselineClasspath(suite), classes,
            workDirectory.resolve(directory).resolve("baseline"));
        final SuiteResult.Run sluice = timed(suite, sluiceClasspath(suite), classes,
            workDirectory.resolve(directory).resolve("sluice"));
        return new Runs(classes, baseline, sluice);
    }

    /** Runs a part on Sluice only, taking the baseline's outcomes and time from an earlier run of it. */
    private Runs runAgainstSaved(final Suite suite, final PartResults.Saved earlier, final String directory)
        throws IOException, InterruptedException {
        final List<String> classes = suite.select(baselineClasspath(suite), TESTS_VERSION);
        final SuiteResult.Run sluice = timed(suite, sluiceClasspath(suite), classes,
            workDirectory.resolve(directory).resolve("sluice"));
        return new Runs(classes, new SuiteResult.Run(earlier.baseline(), earlier.baselineSeconds(),
            origins(baselineClasspath(suite))), sluice);
    }

    /** The saved parts' outcomes as one run per target, taking as long as their runs took together. */
    private Runs savedRuns(final Suite held, final List<PartResults.Saved> saved) {
        final List<TestOutcome> baseline = new ArrayList<>();
        final List<TestOutcome> sluice = new ArrayList<>();
        long baselineSeconds = 0;
        long sluiceSeconds = 0;
        for (final PartResults.Saved part : saved) {
            baseline.addAll(part.baseline());
            sluice.addAll(part.sluice());
            baselineSeconds += part.baselineSeconds();
            sluiceSeconds += part.sluiceSeconds();
        }
        return new Runs(held.select(baselineClasspath(held), TESTS_VERSION),
            new SuiteResult.Run(baseline, baselineSeconds, origins(baselineClasspath(held))),
            new SuiteResult.Run(sluice, sluiceSeconds, origins(sluiceClasspath(held))));
    }

    private SuiteResult result(final Suite suite, final Runs runs) throws IOException {
        return new SuiteResult(suite, runs.classes(), suite.notRunnable(baselineClasspath(suite), TESTS_VERSION),
            storeClassChecks(), runs.baseline(), runs.sluice());
    }

    private List<Path> baselineClasspath(final Suite suite) {
        return suite.onLocalBroker() ? classpaths.forIntegration(classpaths.forBaseline()) : classpaths.forBaseline();
    }

    private List<Path> sluiceClasspath(final Suite suite) {
        return suite.onLocalBroker() ? classpaths.forIntegration(classpaths.forSluice()) : classpaths.forSluice();
    }

    /** The class path entry each of {@link #RUNTIME_CLASSES} comes from. */
    private static Map<String, String> origins(final List<Path> classpath) {
        final Map<String, String> origins = new LinkedHashMap<>();
        RUNTIME_CLASSES.forEach(name -> origins.put(name, Classpaths.originOf(name, classpath)));
        return origins;
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
        return new SuiteResult.Run(outcomes, (System.nanoTime() - started) / 1_000_000_000L, origins(classpath));
    }
}
