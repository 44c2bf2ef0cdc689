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

    private final Classpaths classpaths;
    private final Path workDirectory;

    CompatRun(final Classpaths classpaths, final Path workDirectory) {
        this.classpaths = classpaths;
        this.workDirectory = workDirectory;
    }

    record Results(List<SuiteResult> suites, boolean sluiceRan, Map<String, Long> storeTally, Classpaths classpaths) {
    }

    Results run() throws IOException, InterruptedException {
        final boolean sluiceRuns = classpaths.sluiceHasDslStoreSuppliers(SLUICE_SUPPLIERS);
        final List<SuiteResult> results = new ArrayList<>();
        final Map<String, Long> tally = new TreeMap<>();
        for (final Suite suite : Suite.all()) {
            final List<String> classes = suite.select(classpaths.baseline(), TESTS_VERSION);
            final SuiteResult.Run baseline = timed(classpaths.forBaseline(), classes,
                workDirectory.resolve(suite.name()).resolve("baseline"), List.of());
            Optional<SuiteResult.Run> sluice = Optional.empty();
            if (sluiceRuns) {
                final Path sluiceDirectory = workDirectory.resolve(suite.name()).resolve("sluice");
                final Path tallyFile = sluiceDirectory.resolve("store-tally.tsv");
                Files.deleteIfExists(tallyFile);
                sluice = Optional.of(timed(classpaths.forSluice(), classes, sluiceDirectory,
                    List.of("-D" + TALLY_PROPERTY + "=" + tallyFile)));
                StoreTally.addTo(tally, tallyFile);
            }
            results.add(new SuiteResult(suite, classes.size(), suite.notRunnable(classpaths.baseline(), TESTS_VERSION),
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

    private static SuiteResult.Run timed(final List<Path> classpath, final List<String> classes, final Path directory,
                                         final List<String> systemProperties)
        throws IOException, InterruptedException {
        final long started = System.nanoTime();
        final List<TestOutcome> outcomes = ForkedRun.run(classpath, classes, directory, systemProperties);
        return new SuiteResult.Run(outcomes, (System.nanoTime() - started) / 1_000_000_000L);
    }
}
