package dev.sluice.compat.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.faults.FailoverRun.FailoverResult;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two instances, one dies: the survivor takes the dead instance's tasks and the counts stay exact.
 * The time it takes is reported (each instance is a static member with a 10 s session timeout, so
 * the group waits that long before it moves the dead member's tasks).
 */
class FailoverTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final FaultSettings SETTINGS = FaultSettings.fromSystemProperties();
    private static final Duration INPUT_DURATION = Duration.ofSeconds(25);
    private static final ReportSection REPORT = new ReportSection("Two instances, one dies",
        "Two instances of the min/sum/max/count application under exactly_once_v2 share 4 input partitions while "
            + SETTINGS.records() + " records are written over " + INPUT_DURATION.toSeconds() + " s; one is SIGKILLed 2–6 s after"
            + " both run. Take-over: from the kill until the survivor is RUNNING again with the dead instance's tasks.",
        "Run on", "Verdict", "Input records", "Take-over");

    @Test
    void theSurvivorTakesOverAndCountsStayExact() throws InterruptedException {
        final long seed = Long.getLong("faults.seed", System.nanoTime());
        final FailoverRun run = new FailoverRun(BROKER, SETTINGS.records(), INPUT_DURATION, Path.of("target", "failover"));
        for (final Target compared : SETTINGS.comparedRuntimes()) {
            report(run.run(compared, seed));
        }
        final FailoverResult result = report(run.run(Target.SLUICE_RUNTIME, seed));

        assertEquals(SETTINGS.records(), result.verification().inputRecords(), "committed input records");
        assertTrue(result.exact(), result.verdict() + " (seed " + seed + "); see " + result.survivorLog());
    }

    @AfterAll
    static void writeReport() {
        REPORT.write("4-failover.md");
    }

    private static FailoverResult report(final FailoverResult result) {
        REPORT.row(result.target().description(), result.verdict(), result.verification().inputRecords(),
            result.takeOver().toMillis() + " ms");
        return result;
    }
}
