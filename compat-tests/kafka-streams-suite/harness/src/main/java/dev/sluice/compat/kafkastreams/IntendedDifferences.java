package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The reviewed list of tests that pass on Apache Kafka Streams and fail on Sluice because Sluice differs
 * on purpose, each with the row of the README's compatibility table that says how
 * ({@code intended-differences.txt}). A test is on the list by its name, or by a prefix of it; a whole
 * report row (the streams-protocol invocations) by its suite name. The report names the row beside each
 * such test and lists every other one as not documented.
 *
 * @param byTestName README row by test name or prefix
 * @param bySuite README row by suite name, for every failing test of that suite
 */
record IntendedDifferences(Map<String, String> byTestName, Map<String, String> bySuite) {

    private static final String SUITE = "suite:";

    static IntendedDifferences load() {
        try (InputStream list = IntendedDifferences.class.getResourceAsStream("intended-differences.txt")) {
            return parse(new String(list.readAllBytes(), StandardCharsets.UTF_8));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lines of {@code <test name or prefix, or suite:<suite name>> TAB <README row>}; {@code #} comments. */
    static IntendedDifferences parse(final String text) {
        final Map<String, String> byTestName = new LinkedHashMap<>();
        final Map<String, String> bySuite = new LinkedHashMap<>();
        text.lines().filter(line -> !line.isBlank() && !line.startsWith("#")).forEach(line -> {
            final String[] fields = line.split("\t");
            if (fields.length != 2 || fields[0].isBlank() || fields[1].isBlank()) {
                throw new IllegalArgumentException("Not <test or suite:name> TAB <README row>: " + line);
            }
            if (fields[0].startsWith(SUITE)) {
                bySuite.put(fields[0].substring(SUITE.length()), fields[1]);
            } else {
                byTestName.put(fields[0], fields[1]);
            }
        });
        return new IntendedDifferences(byTestName, bySuite);
    }

    /** The README row naming why {@code test} of suite {@code suiteName} fails on Sluice, if it is listed. */
    Optional<String> rowOf(final String suiteName, final TestOutcome test) {
        final String bySuiteName = bySuite.get(suiteName);
        if (bySuiteName != null) {
            return Optional.of(bySuiteName);
        }
        return byTestName.entrySet().stream()
            .filter(entry -> test.name().startsWith(entry.getKey()))
            .max(Comparator.comparingInt(entry -> entry.getKey().length()))
            .map(Map.Entry::getValue);
    }

    /**
     * The tests of suite {@code suiteName} that pass on Apache only, split into those the list explains,
     * by README row, and the others.
     */
    Split split(final String suiteName, final List<TestOutcome> regressions) {
        final Map<String, List<TestOutcome>> documented = new TreeMap<>();
        final List<TestOutcome> undocumented = new ArrayList<>();
        for (final TestOutcome test : regressions) {
            rowOf(suiteName, test).ifPresentOrElse(
                row -> documented.computeIfAbsent(row, r -> new ArrayList<>()).add(test),
                () -> undocumented.add(test));
        }
        return new Split(documented, undocumented);
    }

    /** Tests that pass on Apache only: by the README row that explains them, and those nothing explains. */
    record Split(Map<String, List<TestOutcome>> documented, List<TestOutcome> undocumented) {
        int documentedCount() {
            return documented.values().stream().mapToInt(List::size).sum();
        }
    }

    /** The rows the list names, each once. */
    List<String> rows() {
        return Stream.concat(byTestName.values().stream(), bySuite.values().stream())
            .distinct().collect(Collectors.toList());
    }
}
