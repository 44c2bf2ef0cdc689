package dev.sluice.compat.kafkastreams;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The build's gate on the fast Kafka Streams suites: every test that passes on Apache Kafka Streams
 * must pass on Sluice. Runs both targets (about two minutes) and writes the report into target/; the
 * checked-in report, with the integration suite, is written by {@code make compat}.
 */
class SluiceKeepsBaselinePassesTest {

    @Test
    void everyTestThatPassesOnApacheAlsoPassesOnSluice() throws Exception {
        final Path target = Path.of(System.getProperty("sluice.compat.classpaths"));
        final Classpaths classpaths = Classpaths.load(target, Path.of(System.getProperty("sluice.compat.classes")));
        final CompatRun.Results results = new CompatRun(classpaths, target.resolve("compat-run"),
            target.resolve("integration-results"), "unsaved").run(Suite.fast());
        Files.writeString(target.resolve("kafka-streams-suite-report.md"), Report.of(results,
            "## Suite 4: exactly-once crash check\n\nRuns in `compat-tests/fault-suite`; `make compat` puts its results here.", false));
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
