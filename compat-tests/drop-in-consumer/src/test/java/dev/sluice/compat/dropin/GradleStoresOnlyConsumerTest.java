package dev.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sluice.streams.internals.NativeLibrary;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Builds and runs {@code examples/gradle-consumer} with Gradle, proving that a Gradle build can take
 * Sluice's stores as an ordinary Maven dependency next to kafka-streams.
 *
 * <p>It must test the sluice-stores this build produced, which during {@code mvn test} or
 * {@code mvn verify} is not yet in the local Maven repository (or is a stale one from an earlier
 * build). So it takes the artifact Maven put on this module's classpath, with its pom and the parent
 * poms beside it in the source tree, publishes them into a throwaway Maven repository and hands that
 * to Gradle with {@code -PsluiceRepo}. Apache's artifacts come from the local Maven repository,
 * where Maven has already resolved them for this module.
 */
class GradleConsumerTest {

    /** Gradle starting cold in a fresh user home takes 10 to 40 s; far longer means it hangs. */
    private static final long TIMEOUT_MINUTES = 5;

    @TempDir
    Path temp;

    @Test
    void gradleBuildRunsKafkaStreamsWithSluiceStores() throws Exception {
        final Path gradle = findOnPath("gradle").orElseGet(() -> fail(
            "gradle is not on PATH. This test builds examples/gradle-consumer with Gradle;"
                + " install it with examples/gradle-consumer/install-gradle (Debian's gradle package)."));

        final Path repository = temp.resolve("sluice-repo");
        final Pom stores = publishSluiceStores(repository);
        assertEquals("sluice-stores", stores.artifactId, "the artifact that holds NativeLibrary");

        final Path project = temp.resolve("gradle-consumer");
        copyTree(Paths.get("gradle-consumer"), project);

        final List<String> command = new ArrayList<>(List.of(
            gradle.toString(), "--offline", "--no-daemon", "--quiet",
            // A user home of its own: no daemon, cache or init script of the machine's takes part.
            "--gradle-user-home", temp.resolve("gradle-home").toString(),
            "-PsluiceRepo=" + repository.toUri(),
            "-PsluiceVersion=" + stores.version));
        final String mavenLocal = System.getProperty("sluice.maven.local.repo");
        if (mavenLocal != null && !mavenLocal.isEmpty()) {
            // Gradle's mavenLocal() honours this, so it reads the repository this Maven run uses.
            command.add("-Dmaven.repo.local=" + mavenLocal);
        }
        command.add("run");

        final Run run = run(command, project);

        assertEquals(0, run.exitCode, () -> "gradle run failed\n" + run);
        assertTrue(run.stdout.contains("Source: KSTREAM-SOURCE-0000000000 (topics: [words])"),
            () -> "no topology from Kafka Streams in the output\n" + run);
        assertTrue(run.stdout.contains("(stores: [word-counts])"), () -> "no store in the topology\n" + run);
        final String nativeVersion = stores.version.replace("-SNAPSHOT", "");
        assertTrue(run.stdout.lines().anyMatch(("sluice.native.version=" + nativeVersion)::equals),
            () -> "Sluice's native library did not report version " + nativeVersion + "\n" + run);
        final String location = run.stdout.lines()
            .filter(line -> line.startsWith("sluice.stores.location="))
            .map(line -> line.substring("sluice.stores.location=".length()))
            .findFirst()
            .orElseGet(() -> fail("the application did not say where sluice-stores came from\n" + run));
        assertTrue(Paths.get(URI.create(location)).toRealPath().startsWith(repository.toRealPath()),
            () -> "Gradle took sluice-stores from " + location + ", not from the build's own " + repository + "\n" + run);
    }

    /**
     * Publishes the sluice-stores on this test's classpath into {@code repository} in Maven's layout,
     * with every parent pom found through {@code relativePath}. A parent that is not there (the
     * artifact came from a Maven repository) is left for Gradle to find in the local repository.
     */
    private Pom publishSluiceStores(final Path repository) throws Exception {
        final Path location = Paths.get(NativeLibrary.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        final Path jar;
        final Path pomFile;
        if (Files.isDirectory(location)) {
            // mvn test in the reactor hands over <module>/target/classes: no jar exists yet.
            pomFile = location.getParent().getParent().resolve("pom.xml");
            jar = temp.resolve("sluice-stores.jar");
            jarDirectory(location, jar);
        } else {
            jar = location;
            final String name = jar.getFileName().toString();
            final Path beside = jar.resolveSibling(name.substring(0, name.length() - ".jar".length()) + ".pom");
            // From a Maven repository the pom lies beside the jar; from the reactor the jar is in
            // <module>/target.
            pomFile = Files.isRegularFile(beside) ? beside : jar.getParent().getParent().resolve("pom.xml");
        }
        final Pom stores = Pom.read(pomFile);
        Files.copy(jar, stores.publish(repository, pomFile).resolveSibling(stores.fileName("jar")));

        Pom child = stores;
        Path childFile = pomFile;
        while (child.parentRelativePath != null && !child.parentRelativePath.isEmpty()) {
            Path parentFile = childFile.getParent().resolve(child.parentRelativePath).normalize();
            if (Files.isDirectory(parentFile)) {
                parentFile = parentFile.resolve("pom.xml");
            }
            if (!Files.isRegularFile(parentFile)) {
                break;
            }
            final Pom parent = Pom.read(parentFile);
            if (!parent.coordinates().equals(child.parentCoordinates())) {
                break;
            }
            parent.publish(repository, parentFile);
            child = parent;
            childFile = parentFile;
        }
        return stores;
    }

    private static Run run(final List<String> command, final Path directory) throws Exception {
        final Path stdout = directory.resolve("gradle.out");
        final Path stderr = directory.resolve("gradle.err");
        final ProcessBuilder builder = new ProcessBuilder(command)
            .directory(directory.toFile())
            .redirectOutput(stdout.toFile())
            .redirectError(stderr.toFile());
        // Gradle and the application it forks run on the JDK running this test, which Maven has
        // already checked is new enough for Sluice's class files.
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
            .map(directory -> Paths.get(directory, executable))
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

    private static void jarDirectory(final Path directory, final Path jar) throws IOException {
        try (OutputStream file = Files.newOutputStream(jar);
             JarOutputStream out = new JarOutputStream(file);
             Stream<Path> paths = Files.walk(directory)) {
            for (final Path source : (Iterable<Path>) paths.sorted()::iterator) {
                if (source.equals(directory)) {
                    continue;
                }
                String name = directory.relativize(source).toString().replace(File.separatorChar, '/');
                if (Files.isDirectory(source)) {
                    name += "/";
                }
                out.putNextEntry(new JarEntry(name));
                if (!Files.isDirectory(source)) {
                    Files.copy(source, out);
                }
                out.closeEntry();
            }
        }
    }

    /** The parts of a pom that place it in a Maven repository and lead to its parent. */
    private static final class Pom {
        final String groupId;
        final String artifactId;
        final String version;
        final String parentGroupId;
        final String parentArtifactId;
        final String parentVersion;
        /** Maven's default when the parent names none; empty when it says not to look. */
        final String parentRelativePath;

        private Pom(final Element project) {
            final Element parent = child(project, "parent");
            parentGroupId = text(parent, "groupId");
            parentArtifactId = text(parent, "artifactId");
            parentVersion = text(parent, "version");
            final String relativePath = text(parent, "relativePath");
            parentRelativePath = parent == null ? null : relativePath != null ? relativePath : "../pom.xml";
            // A module inherits groupId and version from its parent unless it sets its own.
            groupId = orElse(text(project, "groupId"), parentGroupId);
            artifactId = text(project, "artifactId");
            version = orElse(text(project, "version"), parentVersion);
        }

        static Pom read(final Path file) throws Exception {
            final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(true);
            final Document document = factory.newDocumentBuilder().parse(file.toFile());
            return new Pom(document.getDocumentElement());
        }

        String coordinates() {
            return groupId + ":" + artifactId + ":" + version;
        }

        String parentCoordinates() {
            return parentGroupId + ":" + parentArtifactId + ":" + parentVersion;
        }

        String fileName(final String extension) {
            return artifactId + "-" + version + "." + extension;
        }

        /** Copies {@code file} to where a Maven repository keeps this pom, and returns that path. */
        Path publish(final Path repository, final Path file) throws IOException {
            final Path directory = repository.resolve(groupId.replace('.', '/')).resolve(artifactId).resolve(version);
            Files.createDirectories(directory);
            return Files.copy(file, directory.resolve(fileName("pom")));
        }

        private static Element child(final Element parent, final String name) {
            if (parent == null) {
                return null;
            }
            for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
                if (node instanceof Element && name.equals(node.getLocalName())) {
                    return (Element) node;
                }
            }
            return null;
        }

        private static String text(final Element parent, final String name) {
            final Element element = child(parent, name);
            return element == null ? null : element.getTextContent().trim();
        }

        private static String orElse(final String value, final String fallback) {
            return value != null ? value : fallback;
        }
    }

    private static final class Run {
        final int exitCode;
        final String stdout;
        final String stderr;

        Run(final int exitCode, final String stdout, final String stderr) {
            this.exitCode = exitCode;
            this.stdout = stdout;
            this.stderr = stderr;
        }

        @Override
        public String toString() {
            return "exit code " + exitCode + "\n--- stdout ---\n" + stdout + "--- stderr ---\n" + stderr;
        }
    }
}
