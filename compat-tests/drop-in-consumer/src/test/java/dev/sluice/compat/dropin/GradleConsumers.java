package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs tasks of {@code gradle-consumers} (this module's directory: the Gradle builds of Kafka Streams users
 * of Sluice) with the {@code gradle} on PATH. Sluice's artifacts come from a {@link BuiltArtifactsRepository},
 * everything else from the local Maven repository this Maven run uses.
 */
final class GradleConsumers {

    private static final Path PROJECT = Path.of("gradle-consumers");
    /** Gradle starting cold in a fresh user home takes 10 to 40 s; far longer means it hangs. */
    private static final long TIMEOUT_MINUTES = 5;

    private GradleConsumers() {
    }

    /**
     * Copies the builds to {@code workDirectory}, so that a run leaves nothing in the source tree, and runs
     * {@code tasks} there against {@code sluiceVersion} of the artifacts in {@code repository}.
     */
    static Run run(final Path workDirectory, final BuiltArtifactsRepository repository, final String sluiceVersion,
                   final String... tasks) throws Exception {
        final Path gradle = findOnPath("gradle").orElseGet(() -> fail(
            "gradle is not on PATH. This test builds a Gradle project; install it with"
                + " scripts/install-gradle (Debian's gradle package)."));
        copyTree(PROJECT, workDirectory);

        final List<String> command = new ArrayList<>(List.of(
            gradle.toString(), "--offline", "--no-daemon", "--quiet",
            // A user home of its own: no daemon, cache or init script of the machine's takes part. It
            // lives in the module's build directory, so that only the first run pays Gradle's cold start.
            "--gradle-user-home", System.getProperty("sluice.gradle.user.home"),
            "-PsluiceRepo=" + repository.root().toUri(),
            "-PsluiceVersion=" + sluiceVersion));
        final String mavenLocal = System.getProperty("sluice.maven.local.repo");
        if (mavenLocal != null && !mavenLocal.isEmpty()) {
            // Gradle's mavenLocal() honours this, so it reads the repository this Maven run uses.
            command.add("-Dmaven.repo.local=" + mavenLocal);
        }
        command.addAll(List.of(tasks));
        return run(command, workDirectory);
    }

    private static Run run(final List<String> command, final Path directory) throws Exception {
        final Path stdout = directory.resolve("gradle.out");
        final Path stderr = directory.resolve("gradle.err");
        final ProcessBuilder builder = new ProcessBuilder(command)
            .directory(directory.toFile())
            .redirectOutput(stdout.toFile())
            .redirectError(stderr.toFile());
        // Gradle and the JVMs it forks run on the JDK running this test, new enough for Sluice's classes.
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
            .map(GradleConsumers::realPath);
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
                if (isOutputOfAnEarlierRun(relative)) {
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

    /** What a Gradle run by hand leaves in a project, which must not leak into this one. */
    private static boolean isOutputOfAnEarlierRun(final Path relative) {
        for (final Path name : relative) {
            if (name.toString().equals("build") || name.toString().equals(".gradle")) {
                return true;
            }
        }
        return false;
    }

    /** A finished Gradle run. */
    record Run(int exitCode, String stdout, String stderr) {

        /** The values the build printed as lines {@code name=value}, in order. */
        List<String> valuesOf(final String name) {
            final String prefix = name + "=";
            return stdout.lines()
                .filter(line -> line.startsWith(prefix))
                .map(line -> line.substring(prefix.length()))
                .toList();
        }

        @Override
        public String toString() {
            return "exit code " + exitCode + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
        }
    }
}
