package dev.sluice.compat.kafkastreams;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The build's gate on the fast Kafka Streams suites: every test that passes on Apache Kafka Streams
 * must pass on Sluice, and on Sluice's artifacts without their native library, where they run applications
 * on Apache's runtime. Each runs both targets (about two minutes) and writes the report into target/; the
 * checked-in reports, with the integration suite, are written by {@code make compat} and
 * {@code make compat-fallback}.
 */
class SluiceKeepsBaselinePassesTest {

    private static final String CRASH_CHECK_PLACEHOLDER =
        "## Suite 4: exactly-once crash check\n\nRuns in `compat-tests/fault-suite`; `make compat` puts its results here.";

    @Test
    void everyTestThatPassesOnApacheAlsoPassesOnSluice() throws Exception {
        final Path target = Path.of(System.getProperty("sluice.compat.classpaths"));
        final Classpaths classpaths = Classpaths.load(target, Path.of(System.getProperty("sluice.compat.classes")));
        assertKeepsBaselinePasses(classpaths, target.resolve("compat-run"), false,
            target.resolve("kafka-streams-suite-report.md"));
    }

    @Test
    void everyTestThatPassesOnApacheAlsoPassesWithoutSluicesNativeLibrary() throws Exception {
        final Path target = Path.of(System.getProperty("sluice.compat.classpaths"));
        final Path work = target.resolve("compat-run-fallback");
        final Classpaths classpaths = Classpaths.load(target, Path.of(System.getProperty("sluice.compat.classes")))
            .withoutNativeLibrary(work.resolve("without-native-library"));
        assertKeepsBaselinePasses(classpaths, work, true, target.resolve("kafka-streams-suite-report-fallback.md"));
    }

    private static void assertKeepsBaselinePasses(final Classpaths classpaths, final Path work,
                                                  final boolean withoutNativeLibrary, final Path report) throws Exception {
        final CompatRun.Results results = new CompatRun(classpaths, work, work.resolve("integration-results"), "unsaved",
            Optional.empty())
            .run(Suite.fast());
        Files.writeString(report, Report.of(results, CRASH_CHECK_PLACEHOLDER, withoutNativeLibrary));
        results.suites().forEach(suite -> System.out.println(Summary.line(suite)));

        for (final SuiteResult suite : results.suites()) {
            assertTrue(suite.counts(suite.baseline()).passed() > 0,
                suite.suite().name() + ": no test passed on Apache Kafka Streams; the suite did not really run");
            final List<TestOutcome> regressions = suite.regressions();
            assertTrue(regressions.isEmpty(), suite.suite().name() + ": " + regressions.size()
                + " tests pass on Apache Kafka Streams but not on Sluice:\n" + regressions.stream()
                    .map(test -> test.name() + ": " + test.message())
                    .collect(Collectors.joining("\n")));
        }
    }
}
