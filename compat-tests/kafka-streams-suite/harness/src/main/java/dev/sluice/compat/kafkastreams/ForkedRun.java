package dev.sluice.compat.kafkastreams;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Test classes on one target, in a JVM of their own: the targets differ by class path, and a fresh JVM
 * keeps one run's static state out of the other.
 */
final class ForkedRun {

    private ForkedRun() {
    }

    /**
     * Runs the classes and returns their outcomes; the JVM's output goes to {@code log.txt} in the
     * work directory, which is also the tests' working directory.
     */
    static List<TestOutcome> run(final List<Path> classpath, final List<String> classes, final Path workDirectory)
        throws IOException, InterruptedException {
        final Process process = start(classpath, classes, workDirectory);
        final int exit = process.waitFor();
        final Path results = workDirectory.resolve("results.tsv");
        if (exit != 0 || !Files.exists(results)) {
            throw new IllegalStateException("The suite's JVM exited with " + exit + " without results; see "
                + workDirectory.resolve("log.txt"));
        }
        return TestOutcome.read(results);
    }

    /**
     * Runs one class, ending its JVM (and the processes it started, such as a broker) when it takes
     * longer than the timeout. The outcomes of the tests that ended are kept; a timeout, or a JVM that
     * died, adds one failed entry for the class, so the tests it never finished are not lost silently.
     */
    static List<TestOutcome> runClass(final List<Path> classpath, final String testClass, final Path workDirectory,
                                      final Duration timeout) throws IOException, InterruptedException {
        final Process process = start(classpath, List.of(testClass), workDirectory);
        final boolean ended = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!ended) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly().waitFor();
        }
        final Path results = workDirectory.resolve("results.tsv");
        final List<TestOutcome> outcomes = new ArrayList<>(
            Files.exists(results) ? TestOutcome.read(results) : List.of());
        final String wholeClass = "[engine:junit-jupiter]/[class:" + testClass + "]";
        final String simpleName = testClass.substring(testClass.lastIndexOf('.') + 1) + TestOutcome.WHOLE_CLASS;
        if (!ended) {
            outcomes.add(new TestOutcome(wholeClass + "/[timeout]", simpleName, TestOutcome.Status.FAILED,
                "timed out after " + timeout.toSeconds() + " s and was ended, " + outcomes.size()
                    + " tests finished"));
        } else if (process.exitValue() != 0) {
            outcomes.add(new TestOutcome(wholeClass + "/[exit]", simpleName, TestOutcome.Status.FAILED,
                "the JVM exited with " + process.exitValue() + " after " + outcomes.size() + " tests"));
        }
        return outcomes;
    }

    private static Process start(final List<Path> classpath, final List<String> classes, final Path workDirectory)
        throws IOException {
        Files.createDirectories(workDirectory);
        final Path classList = Files.write(workDirectory.resolve("classes.txt"), classes);
        final Path results = workDirectory.resolve("results.tsv");
        Files.deleteIfExists(results);
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx1g",
            "-Djava.io.tmpdir=" + Files.createDirectories(workDirectory.resolve("tmp")),
            "-cp", classpath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator))));
        command.addAll(List.of(SuiteMain.class.getName(), classList.toString(), results.toString()));
        return new ProcessBuilder(command)
            .directory(workDirectory.toFile())
            .redirectErrorStream(true)
            .redirectOutput(workDirectory.resolve("log.txt").toFile())
            .start();
    }
}
