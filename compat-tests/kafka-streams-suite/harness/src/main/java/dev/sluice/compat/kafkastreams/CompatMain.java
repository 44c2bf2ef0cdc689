package dev.sluice.compat.kafkastreams;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code make compat}: runs the suites on both targets and writes the report.
 * Arguments: the directory holding the build's class path files, this harness's classes, a work
 * directory for the runs, the report to write, and the section the exactly-once crash check
 * ({@code compat-tests/eos-crash}) wrote for it in the same {@code make compat}.
 */
public final class CompatMain {

    private CompatMain() {
    }

    public static void main(final String[] args) throws Exception {
        final Classpaths classpaths = Classpaths.load(Path.of(args[0]), Path.of(args[1]));
        final CompatRun.Results results = new CompatRun(classpaths, Path.of(args[2]).toAbsolutePath()).run(Suite.all());
        final String crashCheckSection = Files.readString(Path.of(args[4]));
        Files.writeString(Path.of(args[3]), Report.of(results, crashCheckSection));
        for (final SuiteResult suite : results.suites()) {
            System.out.println(Summary.line(suite));
        }
        System.out.println("Report: " + args[3]);
    }
}
