package dev.sluice.compat.kafkastreams;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Writes one outcome per test to a results file, each line as soon as its test ends, so a JVM ended
 * for taking too long leaves the outcomes of the tests it finished. A test class that fails before
 * its tests run (class set-up, static initialisation) becomes one failed entry of its own, so no
 * failure goes uncounted.
 */
final class OutcomeRecorder implements TestExecutionListener, AutoCloseable {

    private final BufferedWriter results;

    OutcomeRecorder(final Path resultsFile) throws IOException {
        results = Files.newBufferedWriter(resultsFile, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        results.close();
    }

    private void record(final TestOutcome outcome) {
        try {
            results.write(outcome.line());
            results.newLine();
            results.flush();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void executionSkipped(final TestIdentifier test, final String reason) {
        if (test.isTest() || test.getSource().filter(ClassSource.class::isInstance).isPresent()) {
            record(new TestOutcome(test.getUniqueId(), name(test), TestOutcome.Status.SKIPPED, oneLine(reason)));
        }
    }

    @Override
    public void executionFinished(final TestIdentifier test, final TestExecutionResult result) {
        final boolean failed = result.getStatus() != TestExecutionResult.Status.SUCCESSFUL;
        if (!test.isTest() && !failed) {
            return;
        }
        final TestOutcome.Status status = switch (result.getStatus()) {
            case SUCCESSFUL -> TestOutcome.Status.PASSED;
            case ABORTED -> TestOutcome.Status.SKIPPED;
            case FAILED -> TestOutcome.Status.FAILED;
        };
        final String message = result.getThrowable().map(OutcomeRecorder::describe).orElse("");
        record(new TestOutcome(test.getUniqueId(), name(test), status, message));
    }

    private static String name(final TestIdentifier test) {
        return test.getSource().map(source -> {
            if (source instanceof MethodSource method) {
                // A parameterized test's invocations share the method; their display names tell them apart.
                final String invocation = test.getUniqueId().contains("[test-template-invocation:")
                    ? " " + test.getDisplayName() : "";
                return simpleName(method.getClassName()) + "." + method.getMethodName() + invocation;
            }
            if (source instanceof ClassSource type) {
                return simpleName(type.getClassName()) + TestOutcome.WHOLE_CLASS;
            }
            return test.getDisplayName();
        }).orElse(test.getDisplayName());
    }

    private static String simpleName(final String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }

    /**
     * The failure's class and its message on one line (a matcher's message says what was expected on one line
     * and what was found on the next). A failure with no message of its own says
     * why through its cause: an {@code ExceptionInInitializerError} is how a class whose static set-up
     * failed (a cluster the local broker cannot be, say) reaches the class's first {@code @BeforeAll}.
     */
    static String describe(final Throwable failure) {
        final String message = failure.getMessage();
        if (message == null && failure.getCause() != null) {
            return failure.getClass().getName() + ": caused by " + describe(failure.getCause());
        }
        return failure.getClass().getName() + (message == null ? "" : ": " + oneLine(message));
    }

    private static String oneLine(final String text) {
        final String line = text.strip().lines().map(String::strip).collect(Collectors.joining(" ")).replace('\t', ' ');
        return line.length() > 300 ? line.substring(0, 300) + "…" : line;
    }
}
