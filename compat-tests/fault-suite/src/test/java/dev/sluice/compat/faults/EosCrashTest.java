package dev.sluice.compat.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.faults.ChildOutput.Restore;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Suite 4: exactly-once through repeated SIGKILLs, on Sluice's runtime, on Apache Kafka Streams' runtime
 * with Sluice's stores, and, as the baseline, on Apache Kafka Streams with its own stores. All must keep
 * exactly-once; Sluice's stores must also come back after each crash at their last commit instead of
 * being wiped and restored from the start of their changelogs. Writes target/eos-crash-report.md.
 */
class EosCrashTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final Path WORK_DIR = Path.of("target", "eos-crash");
    private static final Path REPORT = Path.of("target", "eos-crash-report.md");
    private static final List<CrashRunResult> RESULTS = new ArrayList<>();

    @Test
    void sluiceRuntimeKeepsExactlyOnceAndItsStoresThroughCrashes() throws InterruptedException {
        assertExactlyOnceWithoutWipes(crashRun(Target.SLUICE_RUNTIME));
    }

    @Test
    void sluiceStoresKeepExactlyOnceAndTheirStateThroughCrashes() throws InterruptedException {
        assertExactlyOnceWithoutWipes(crashRun(Target.SLUICE_STORES));
    }

    @Test
    void kafkaStreamsStoresKeepExactlyOnceThroughCrashes() throws InterruptedException {
        assertExactlyOnce(crashRun(Target.APACHE));
    }

    private static void assertExactlyOnceWithoutWipes(final CrashRunResult result) {
        assertExactlyOnce(result);
        final List<Restore> wipes = result.wipes();
        assertTrue(wipes.isEmpty(), "stores wiped after a crash, restored from their changelogs' start: " + wipes);
        // Without a wipe a restart restores at most the changelog records of one commit, the one a kill cut
        // off between its transaction and its store commits. A commit may be large: the first commit of a
        // life that starts behind a backlog covers all of it. The bound leaves room for that while staying
        // far below a restore of the whole state.
        final long stateChangelogRecords = 4L * result.settings().records();
        assertTrue(result.restoredPerRestart().stream().allMatch(restored -> restored < stateChangelogRecords / 4),
            "records restored per restart " + result.restoredPerRestart() + ", of " + stateChangelogRecords + " changelog records in all");
    }

    @AfterAll
    static void writeReport() {
        EosCrashReport.write(REPORT, RESULTS);
    }

    private static CrashRunResult crashRun(final Target target) throws InterruptedException {
        final CrashSettings settings = CrashSettings.fromSystemProperties();
        final CrashRunResult result = new CrashRun(BROKER, settings, WORK_DIR).run(target);
        RESULTS.add(result);
        System.out.printf("%s (seed %d): records restored per restart %s%n", target.description(), settings.seed(), result.restoredPerRestart());
        return result;
    }

    private static void assertExactlyOnce(final CrashRunResult result) {
        assertEquals(result.settings().records(), result.verification().inputRecords(), "committed input records");
        assertEquals(List.of(), result.verification().mismatches(), "committed output against the committed input");
    }
}
