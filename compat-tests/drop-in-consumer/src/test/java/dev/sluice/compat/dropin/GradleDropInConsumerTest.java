package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sluice.streams.internals.NativeLibrary;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds {@code gradle-consumer} (this module's directory) with Gradle against the drop-in artifacts this
 * build produced: Gradle resolves sluice-kafka-streams and sluice-kafka-streams-test-utils, runs a
 * TopologyTestDriver test of a word count on them, and the class path it resolved holds no class twice and
 * no Apache kafka-streams.
 */
class GradleConsumerTest {

    /** Gradle starting cold in a fresh user home takes 10 to 40 s; far longer means it hangs. */
    private static final long TIMEOUT_MINUTES = 5;
    private static final String CLASSPATH_LINE = "classpath=";

    @TempDir
    Path temp;

    @Test
    void gradleResolvesTheDropInArtifactsAndRunsTopologyTestDriverOnSluice() throws Exception {
        final Path gradle = findOnPath("gradle").orElseGet(() -> fail(
            "gradle is not on PATH. This test builds a Gradle project; install it with"
                + " examples/gradle-consumer/install-gradle (Debian's gradle package)."));

        final BuiltArtifactsRepository repository = new BuiltArtifactsRepository(temp.resolve("sluice-repo"));
        final String version = repository.publishArtifactOf(Stores.class);
        repository.publishArtifactOf(TopologyTestDriver.class);
        repository.publishArtifactOf(NativeLibrary.class);

        final Path project = temp.resolve("gradle-consumer");
        copyTree(Path.of("gradle-consumer"), project);
        final List<String> command = new ArrayList<>(List.of(
            gradle.toString(), "--offline", "--no-daemon", "--quiet",
            // A user home of its own: no daemon, cache or init script of the machine's takes part. It
            // lives in the module's build directory, so that only the first run pays Gradle's cold start.
            "--gradle-user-home", System.getProperty("sluice.gradle.user.home"),
            "-PsluiceRepo=" + repository.root().toUri(),
            "-PsluiceVersion=" + version));
        final String mavenLocal = System.getProperty("sluice.maven.local.repo");
        if (mavenLocal != null && !mavenLocal.isEmpty()) {
            // Gradle's mavenLocal() honours this, so it reads the repository this Maven run uses.
            command.add("-Dmaven.repo.local=" + mavenLocal);
        }
        command.addAll(List.of("topologyTest", "printTestRuntimeClasspath"));

        final Run run = run(command, project);

        assertEquals(0, run.exitCode, () -> "gradle failed\n" + run);
        assertTrue(run.stdout.lines().anyMatch("counts={be=3, not=1, or=1, to=3}"::equals),
            () -> "no word counts from the TopologyTestDriver test\n" + run);
        assertTrue(run.stdout.lines().anyMatch(line -> line.startsWith("bytes.store=dev.sluice.streams.state.internals.")),
            () -> "the count's store is not Sluice's\n" + run);

        final List<Path> classPath = run.stdout.lines()
            .filter(line -> line.startsWith(CLASSPATH_LINE))
            .map(line -> Path.of(line.substring(CLASSPATH_LINE.length())))
            .toList();
        assertTrue(classPath.stream().anyMatch(entry -> entry.startsWith(repository.root())
                && entry.getFileName().toString().startsWith("sluice-kafka-streams-test-utils-")),
            () -> "Gradle did not take sluice-kafka-streams-test-utils from this build: " + classPath);
        assertEquals(List.of(), ClassPathScan.apacheKafkaStreamsJars(classPath));
        final Map<String, List<Path>> duplicates = ClassPathScan.duplicateClasses(classPath);
        assertTrue(duplicates.isEmpty(), () -> duplicates.size() + " classes are on Gradle's class path twice, e.g. "
            + MavenClassPathTest.describe(duplicates));
    }

    private static Run run(final List<String> command, final Path directory) throws Exception {
        final Path stdout = directory.resolve("gradle.out");
        final Path stderr = directory.resolve("gradle.err");
        final ProcessBuilder builder = new ProcessBuilder(command)
            .directory(directory.toFile())
            .redirectOutput(stdout.toFile())
            .redirectError(stderr.toFile());
        // Gradle and the JVM it forks run on the JDK running this test, new enough for Sluice's classes.
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        final Process process = builder.start();
        if (!process.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly().waitFor();
            fail("gradle did not finish within " + TIMEOUT_MINUTES + " minutes: " + String.join(" ", command)
                + "\n" + new Run(-1, read(stdout), read(stderr)));
        }
        return new Run(process.exitValue(), read(stdout), read(stderr));
    }

    private static String read(final Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }

    private static Optional<Path> findOnPath(final String executable) {
        final String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        return Stream.of(path.split(File.pathSeparator))
            .filter(directory -> !directory.isEmpty())
            .map(directory -> Path.of(directory, executable))
            .filter(Files::isExecutable)
            .findFirst()
            // Debian's gradle script finds its installation relative to its own path, which fails
            // when PATH reaches it through the /bin -> /usr/bin link of a merged-/usr system.
            .map(GradleConsumerTest::realPath);
    }

    private static Path realPath(final Path path) {
        try {
            return path.toRealPath();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void copyTree(final Path from, final Path to) throws IOException {
        assertTrue(Files.isDirectory(from), () -> "no Gradle project at " + from.toAbsolutePath());
        try (Stream<Path> paths = Files.walk(from)) {
            for (final Path source : (Iterable<Path>) paths::iterator) {
                final Path relative = from.relativize(source);
                // Outputs of a Gradle run by hand must not leak into this one.
                if (relative.startsWith("build") || relative.startsWith(".gradle")) {
                    continue;
                }
                final Path target = to.resolve(relative.toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(source, target);
                }
            }
        }
    }

    private record Run(int exitCode, String stdout, String stderr) {
        @Override
        public String toString() {
            return "exit code " + exitCode + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
        }
    }
}
