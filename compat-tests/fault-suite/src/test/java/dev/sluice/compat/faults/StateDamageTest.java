package dev.sluice.compat.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Damaged and foreign state: with the application stopped, one store's directory is damaged, or the
 * state directory was left by the other runtime. The next life must restore what it cannot trust from
 * the changelog (the damaged store only) and go on exactly; never crash-loop or take the JVM down.
 */
class StateDamageTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final FaultSettings SETTINGS = FaultSettings.fromSystemProperties();
    private static final StateRun RUN = new StateRun(BROKER, SETTINGS.records(), Path.of("target", "state-damage"));
    private static final ReportSection REPORT = new ReportSection("Damaged and foreign state",
        "The min/sum/max/count application under exactly_once_v2 processes " + SETTINGS.records() + " records and is stopped;"
            + " then task " + StateRun.DAMAGED_TASK + "'s `" + StateRun.DAMAGED_STORE + "` directory is damaged, or the next life"
            + " runs on the other runtime; the next life processes " + SETTINGS.records() + " more. Stores restored from scratch"
            + " are those replayed from their changelog's first offset.",
        "State", "Next life on", "Verdict", "Stores restored from scratch", "Records restored", "Launch to RUNNING");

    @ParameterizedTest
    @EnumSource(StateDamage.class)
    void aDamagedStoreIsRestoredAloneAndCountsStayExact(final StateDamage damage) throws InterruptedException {
        for (final Target compared : SETTINGS.comparedRuntimes()) {
            report(damage.description(), RUN.run(name("damage", compared, damage), compared, compared, Optional.of(damage)));
        }
        final StateRunResult result = report(damage.description(),
            RUN.run(name("damage", Target.SLUICE_RUNTIME, damage), Target.SLUICE_RUNTIME, Target.SLUICE_RUNTIME, Optional.of(damage)));

        assertTrue(result.exact(), result.verdict() + "; see " + result.log());
        final List<String> mayRestore = damage.foundWhileProcessing() ? StateRun.DAMAGED_TASK_STORES : List.of(StateRun.DAMAGED_STORE + "-0");
        assertTrue(mayRestore.containsAll(result.restoredFromScratch()),
            "only " + mayRestore + " may be restored from scratch, not " + result.restoredFromScratch());
    }

    @Test
    void sluiceRunsOnTheStateApacheKafkaStreamsLeft() throws InterruptedException {
        final StateRunResult result = report("left by Apache Kafka Streams",
            RUN.run("foreign-apache-to-sluice", Target.APACHE, Target.SLUICE_RUNTIME, Optional.empty()));
        assertTrue(result.exact(), result.verdict() + "; see " + result.log());
    }

    @Test
    void apacheKafkaStreamsRunsOnTheStateSluiceLeft() throws InterruptedException {
        final StateRunResult result = report("left by Sluice",
            RUN.run("foreign-sluice-to-apache", Target.SLUICE_RUNTIME, Target.APACHE, Optional.empty()));
        assertTrue(result.exact(), result.verdict() + "; see " + result.log());
    }

    @Test
    void anUndamagedStateDirectoryRestoresNothingFromScratch() throws InterruptedException {
        final StateRunResult result = report("intact",
            RUN.run("intact", Target.SLUICE_RUNTIME, Target.SLUICE_RUNTIME, Optional.empty()));
        assertTrue(result.exact(), result.verdict() + "; see " + result.log());
        assertEquals(List.of(), result.restoredFromScratch(), "stores restored from scratch");
    }

    @AfterAll
    static void writeReport() {
        REPORT.write("3-state-damage.md");
    }

    private static String name(final String scenario, final Target runtime, final StateDamage damage) {
        return scenario + "-" + runtime.name().toLowerCase().replace('_', '-') + "-" + damage.name().toLowerCase().replace('_', '-');
    }

    private static StateRunResult report(final String state, final StateRunResult result) {
        final long restored = result.restores().stream().mapToLong(ChildOutput.Restore::restored).sum();
        REPORT.row(state, result.runtime().description(), result.verdict(), result.restoredFromScratch(), restored,
            result.failure().isPresent() && result.verification().isEmpty() ? "—" : result.toRunning().toMillis() + " ms");
        return result;
    }
}
