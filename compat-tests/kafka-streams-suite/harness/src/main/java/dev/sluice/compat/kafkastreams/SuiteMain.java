package dev.sluice.compat.kafkastreams;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs one suite's test classes in this JVM, on whatever class path it was started with, and writes
 * one line per test as it ends. Started by {@link ForkedRun}: {@code SuiteMain <class list> <results file>}; a line of the list may name one method as
 * {@code class#method(parameter types)}.
 */
public final class SuiteMain {

    private SuiteMain() {
    }

    public static void main(final String[] args) throws IOException {
        final LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
            .selectors(Files.readAllLines(Path.of(args[0])).stream().map(SuiteMain::selector).toList())
            .build();
        try (OutcomeRecorder recorder = new OutcomeRecorder(Path.of(args[1]))) {
            final Launcher launcher = LauncherFactory.create();
            launcher.execute(request, recorder);
        }
        // Tests may leave non-daemon threads behind; the results are written, so end here.
        System.exit(0);
    }

    /** A class by its name, or one method of it as {@code class#method(parameter types)}, to rerun a single test. */
    private static DiscoverySelector selector(final String name) {
        return name.contains("#") ? selectMethod(name) : selectClass(name);
    }
}
