package dev.sluice.compat.faults;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.compat.faults.DiskFullRun.DiskFullResult;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A full disk: the state directory's file system fills up while the application runs under
 * exactly_once_v2 and stays full while it is restarted, then is freed. The application never takes its
 * JVM down; it runs on or goes to ERROR as Kafka Streams does, and once there is room again, the counts
 * are exact. Needs the privilege to mount a small file system (root); without it the test
 * is skipped, and says why.
 */
class DiskFullTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final FaultSettings SETTINGS = FaultSettings.fromSystemProperties();
    private static final ReportSection REPORT = new ReportSection("A full disk",
        "The min/sum/max/count application under exactly_once_v2 runs with its state directory on a file system of its own"
            + " (a 512 MiB tmpfs) while " + SETTINGS.records() + " records are written; 3 s in, the file system is filled to its"
            + " last byte for 10 s; the application is then stopped and started again on the full disk, and the disk is freed;"
            + " a life that did not run on is restarted then."
            + " Caught up: from the freeing until the committed output matches the committed input.",
        "Run on", "Verdict", "Running when the disk filled", "Started on the full disk", "Caught up");

    @Test
    void theApplicationNeverCrashesAndCountsStayExact() throws InterruptedException, IOException {
        assumeTrue(SmallDisk.mountable(), "mounting a tmpfs needs the privilege to mount (root)");
        final long seed = Long.getLong("faults.seed", System.nanoTime());
        final DiskFullRun run = new DiskFullRun(BROKER, SETTINGS.records(), Path.of("target", "disk-full"));
        for (final Target compared : SETTINGS.comparedRuntimes()) {
            report(run.run(compared, seed));
        }
        final DiskFullResult result = report(run.run(Target.SLUICE_RUNTIME, seed));

        assertTrue(result.exact(), "running: " + result.whileRunning() + "; restarted: " + result.onRestart() + "; "
            + result.verification().mismatches() + " (seed " + seed + "); see " + result.runDir());
    }

    @AfterAll
    static void writeReport() {
        REPORT.write("3-state-full-disk.md");
    }

    private static DiskFullResult report(final DiskFullResult result) {
        REPORT.row(result.target().description(), result.verdict(), result.whileRunning(), result.onRestart(),
            result.caughtUp().toMillis() + " ms");
        return result;
    }
}
