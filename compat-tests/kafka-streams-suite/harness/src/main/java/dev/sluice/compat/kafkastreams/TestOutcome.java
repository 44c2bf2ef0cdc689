package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One test's result in one run. {@code id} is JUnit's unique id, the same in every run of the same
 * test jar; {@code message} is the first line of the failure, empty when there is none.
 */
record TestOutcome(String id, String name, Status status, String message) {

    enum Status { PASSED, FAILED, SKIPPED }

    /** Ends the name of an outcome of a whole class rather than of one of its tests. */
    static final String WHOLE_CLASS = " (whole class)";
    /** The number JUnit gives an invocation of a parameterized test, at the end of its id. */
    private static final Pattern NUMBERED_INVOCATION = Pattern.compile("/\\[test-template-invocation:#\\d+]$");
    /** A display name that spells an invocation's parameters after its number. */
    private static final Pattern NUMBERED_NAME = Pattern.compile("^.*? \\[\\d+] (.+)$");

    /**
     * What identifies the test across runs: its id, except that an invocation of a parameterized test whose
     * name spells its parameters is known by them rather than by its number, since some tests draw their
     * parameters at random and number the invocations in the order drawn.
     */
    String key() {
        final Matcher invocation = NUMBERED_INVOCATION.matcher(id);
        final Matcher parameters = NUMBERED_NAME.matcher(name);
        if (invocation.find() && parameters.matches()) {
            return id.substring(0, invocation.start()) + " " + parameters.group(1);
        }
        return id;
    }

    /** Whether this outcome's key spells the invocation's parameters: another run may not have drawn them. */
    boolean keyedByParameters() {
        return !key().equals(id);
    }

    /** One line of a results file. */
    String line() {
        return String.join("\t", id, name, status.name(), message);
    }

    static List<TestOutcome> read(final Path file) throws IOException {
        return Files.readAllLines(file).stream()
            .map(line -> line.split("\t", -1))
            .map(f -> new TestOutcome(f[0], f[1], Status.valueOf(f[2]), f[3]))
            .toList();
    }

    /** Whether this is an outcome of a whole class: its set-up failed, or its JVM timed out or died. */
    boolean wholeClass() {
        return name.endsWith(WHOLE_CLASS);
    }

    /** The failure's class, or empty: tells a missing API (a linkage error) from a failed check. */
    String failureType() {
        final int colon = message.indexOf(':');
        return colon < 0 ? message : message.substring(0, colon);
    }
}
