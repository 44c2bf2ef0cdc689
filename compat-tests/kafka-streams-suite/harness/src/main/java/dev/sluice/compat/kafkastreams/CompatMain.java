package dev.sluice.compat.kafkastreams;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code make compat}: runs the suites on both targets and writes the report.
 * Arguments: the directory holding the build's class path files, this harness's classes, a work
 * directory for the runs, the report to write, the section the exactly-once crash check
 * ({@code compat-tests/fault-suite}) wrote for it in the same {@code make compat}, the directory the
 * integration suite's parts are saved in ({@link PartResults}), the build being run (a {@code git describe}),
 * and, optionally, the integration suite's parts to run, comma-separated ({@link IntegrationParts}; default:
 * all).
 */
public final class CompatMain {

    private CompatMain() {
    }

    public static void main(final String[] args) throws Exception {
        final List<IntegrationParts.Part> parts = IntegrationParts.named(args.length > 7 ? args[7] : "");
        final Classpaths classpaths = Classpaths.load(Path.of(args[0]), Path.of(args[1]));
        final String crashCheckSection = Files.readString(Path.of(args[4]));
        final CompatRun.Results results = new CompatRun(classpaths, Path.of(args[2]).toAbsolutePath(),
            Path.of(args[5]), args[6])
            .run(Suite.all(parts));
        Files.writeString(Path.of(args[3]), Report.of(results, crashCheckSection));
        for (final SuiteResult suite : results.suites()) {
            System.out.println(Summary.line(suite));
        }
        System.out.println("Report: " + args[3]);
    }
}
