package dev.sluice.compat.kafkastreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The reviewed list of intended differences: rows that exist, and how a failing test is explained. */
class IntendedDifferencesTest {

    private static final String STREAMS_ROWS = "kafka-streams-integration (streams protocol)";

    @Test
    void everyListedReasonIsARowOfTheReadmeCompatibilityTable() throws Exception {
        final Set<String> rows = compatibilityRows(Files.readString(Path.of("../../../README.md")));
        assertTrue(rows.size() > 10, "the README's compatibility table was not found: " + rows);

        final IntendedDifferences differences = IntendedDifferences.load();

        assertFalse(differences.rows().isEmpty());
        for (final String row : differences.rows()) {
            assertTrue(rows.contains(row), "intended-differences.txt names a README row that does not exist: " + row);
        }
    }

    @Test
    void aFailingTestIsExplainedByItsLongestListedPrefixOrByItsReportRow() {
        final IntendedDifferences differences = IntendedDifferences.parse("""
            # comment
            suite:%s\tthreads, assignment
            WindowTest.shouldAggregate\trecords stamped 0 (the epoch)
            WindowTest.shouldAggregate [2] type=ON_WINDOW_UPDATE\tmetrics
            """.formatted(STREAMS_ROWS));
        final TestOutcome first = failed("WindowTest.shouldAggregate [1] type=ON_WINDOW_UPDATE");
        final TestOutcome second = failed("WindowTest.shouldAggregate [2] type=ON_WINDOW_UPDATE");
        final TestOutcome other = failed("OtherTest.shouldWork");

        final IntendedDifferences.Split classic = differences.split("kafka-streams-integration",
            List.of(first, second, other));
        final IntendedDifferences.Split streams = differences.split(STREAMS_ROWS, List.of(other));

        assertEquals(Map.of("records stamped 0 (the epoch)", List.of(first), "metrics", List.of(second)),
            classic.documented());
        assertEquals(List.of(other), classic.undocumented());
        assertEquals(2, classic.documentedCount());
        assertEquals(Map.of("threads, assignment", List.of(other)), streams.documented());
        assertEquals(List.of(), streams.undocumented());
    }

    @Test
    void aLineWithoutItsReadmeRowIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> IntendedDifferences.parse("WindowTest.shouldAggregate\n"));
    }

    /** The first cells of the rows of the README's compatibility table (the one headed "area"). */
    private static Set<String> compatibilityRows(final String readme) {
        final List<String> lines = readme.lines().toList();
        final int header = lines.indexOf(lines.stream().filter(line -> line.startsWith("| area |")).findFirst()
            .orElseThrow());
        return lines.subList(header + 2, lines.size()).stream()
            .takeWhile(line -> line.startsWith("| "))
            .map(line -> line.substring(2, line.indexOf(" | ")))
            .collect(Collectors.toSet());
    }

    private static TestOutcome failed(final String name) {
        return new TestOutcome("[engine:junit-jupiter]/[test:" + name + "]", name, TestOutcome.Status.FAILED, "failed");
    }
}
