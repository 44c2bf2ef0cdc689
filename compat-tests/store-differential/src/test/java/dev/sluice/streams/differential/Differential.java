package dev.sluice.streams.differential;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The differential check: a scenario run on Kafka Streams' stores and on Sluice's must write the same
 * records and leave the same store contents, and each run must really have used the stores it
 * claims, so that Kafka Streams is never silently compared with itself.
 */
final class Differential {

    private Differential() {
    }

    static void assertSameOnBothStacks(final Scenario scenario, final Path stateDir) {
        final RunResult reference = DifferentialHarness.run(scenario, StoreStack.KAFKA_STREAMS, stateDir.resolve("kafka-streams"));
        final RunResult sluice = DifferentialHarness.run(scenario, StoreStack.SLUICE, stateDir.resolve("sluice"));
        System.out.printf("%s: %d output records, %d store entries; stores on Sluice's run: %s%n",
            scenario.displayName(), sluice.outputs().size(), sluice.storeEntries(), sluice.stores());

        assertFalse(reference.outputs().isEmpty(), "the scenario must write something to compare");
        assertTrue(reference.storeEntries() > 0, "the scenario must leave something in its stores to compare");
        assertStoresAsLabelled(scenario, reference, sluice);
        assertEquals(reference.stores().keySet(), sluice.stores().keySet(), "store names");
        assertEquals(reference.outputs(), sluice.outputs(), "output records");
        assertEquals(reference.storeContents(), sluice.storeContents(), "store contents");
    }

    private static void assertStoresAsLabelled(final Scenario scenario, final RunResult reference, final RunResult sluice) {
        reference.stores().forEach((name, report) ->
            assertFalse(report.sluice(), "the reference run must use Kafka Streams' stores, but " + name + " is " + report.implementation()));
        final Set<StoreKind> kinds = sluice.stores().values().stream()
            .map(RunResult.StoreReport::kind)
            .filter(kind -> kind != StoreKind.SUPPRESSION_BUFFER)
            .collect(Collectors.toCollection(() -> EnumSet.noneOf(StoreKind.class)));
        final Set<StoreKind> declared = EnumSet.copyOf(scenario.storeKinds());
        declared.remove(StoreKind.SUPPRESSION_BUFFER);
        assertEquals(declared, kinds, "the store kinds the scenario's label is based on");
        for (final Map.Entry<String, RunResult.StoreReport> store : sluice.stores().entrySet()) {
            final RunResult.StoreReport report = store.getValue();
            if (report.kind() != StoreKind.SUPPRESSION_BUFFER) {
                assertEquals(SluiceCoverage.serves(report.kind()), report.sluice(),
                    "store " + store.getKey() + " (" + report.kind() + ") is served by " + report.implementation());
            }
        }
    }
}
