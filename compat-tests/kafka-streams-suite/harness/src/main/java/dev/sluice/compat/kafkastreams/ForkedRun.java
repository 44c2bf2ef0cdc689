package dev.sluice.compat.kafkastreams;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One suite on one target, in a JVM of its own: the targets differ by class path, and a fresh JVM
 * keeps one run's static state out of the other.
 */
final class ForkedRun {

    private ForkedRun() {
    }

    /**
     * Runs the classes and returns their outcomes; the JVM's output goes to {@code log.txt} in the
     * work directory, which is also the tests' working directory.
     */
    static List<TestOutcome> run(final List<Path> classpath, final List<String> classes, final Path workDirectory,
                                 final List<String> systemProperties) throws IOException, InterruptedException {
        Files.createDirectories(workDirectory);
        final Path classList = Files.write(workDirectory.resolve("classes.txt"), classes);
        final Path results = workDirectory.resolve("results.tsv");
        Files.deleteIfExists(results);
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx1g",
            "-Djava.io.tmpdir=" + Files.createDirectories(workDirectory.resolve("tmp")),
            "-cp", classpath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator))));
        command.addAll(systemProperties);
        command.addAll(List.of(SuiteMain.class.getName(), classList.toString(), results.toString()));
        final Process process = new ProcessBuilder(command)
            .directory(workDirectory.toFile())
            .redirectErrorStream(true)
            .redirectOutput(workDirectory.resolve("log.txt").toFile())
            .start();
        final int exit = process.waitFor();
        if (exit != 0 || !Files.exists(results)) {
            throw new IllegalStateException("The suite's JVM exited with " + exit + " without results; see "
                + workDirectory.resolve("log.txt"));
        }
        return TestOutcome.read(results);
    }
}
