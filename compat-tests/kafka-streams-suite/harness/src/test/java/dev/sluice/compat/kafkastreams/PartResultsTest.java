package dev.sluice.compat.kafkastreams;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Saved integration parts read back as saved, with the earlier run a baseline was taken from. */
class PartResultsTest {

    @TempDir
    Path directory;

    private final IntegrationParts.Part part = IntegrationParts.ALL.get(0);
    private final TestOutcome passed = new TestOutcome("[class:A]/[method:a()]", "A.a", TestOutcome.Status.PASSED, "");
    private final TestOutcome failed = new TestOutcome("[class:A]/[method:b()]", "A.b", TestOutcome.Status.FAILED,
        "expected 1 but was 2");

    @Test
    void aPartRunOnBothTargetsReadsBackWithItsBuild() throws IOException {
        PartResults.save(directory, part, "abc123", new SuiteResult.Run(List.of(passed, failed), 30, Map.of()),
            new SuiteResult.Run(List.of(passed), 20, Map.of()), Optional.empty());

        final PartResults.Saved saved = PartResults.load(directory, part).orElseThrow();

        assertEquals(List.of(passed, failed), saved.baseline());
        assertEquals(List.of(passed), saved.sluice());
        assertEquals(30, saved.baselineSeconds());
        assertEquals(20, saved.sluiceSeconds());
        assertEquals(Optional.empty(), saved.baselineRun());
        assertEquals("abc123, " + saved.day(), saved.ranOn());
    }

    @Test
    void aBaselineTakenFromAnEarlierRunNamesThatRun() throws IOException {
        PartResults.save(directory, part, "def456", new SuiteResult.Run(List.of(failed), 30, Map.of()),
            new SuiteResult.Run(List.of(passed), 20, Map.of()), Optional.of("abc123, 2026-12-04"));

        final PartResults.Saved saved = PartResults.load(directory, part).orElseThrow();

        assertEquals(List.of(failed), saved.baseline());
        assertEquals("def456, " + saved.day() + "; baseline's outcomes from its run on abc123, 2026-12-04", saved.ranOn());
        assertEquals(List.of(saved), PartResults.loadAll(directory));
    }

    @Test
    void aBaselineCarriedOnAgainStillNamesTheRunWhereItRan() throws IOException {
        PartResults.save(directory, part, "abc123", new SuiteResult.Run(List.of(failed), 30, Map.of()),
            new SuiteResult.Run(List.of(passed), 20, Map.of()), Optional.empty());
        final PartResults.Saved first = PartResults.load(directory, part).orElseThrow();
        assertEquals("abc123, " + first.day(), first.baselineRanOn());

        PartResults.save(directory, part, "def456", new SuiteResult.Run(first.baseline(), 30, Map.of()),
            new SuiteResult.Run(List.of(passed), 20, Map.of()), Optional.of(first.baselineRanOn()));
        final PartResults.Saved second = PartResults.load(directory, part).orElseThrow();

        assertEquals("abc123, " + first.day(), second.baselineRanOn());
    }

    @Test
    void aPartNeverSavedIsAbsent() throws IOException {
        assertEquals(Optional.empty(), PartResults.load(directory, part));
    }
}
