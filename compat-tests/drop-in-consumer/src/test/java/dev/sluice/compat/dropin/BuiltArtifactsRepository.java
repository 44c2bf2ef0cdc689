package dev.sluice.compat.dropin;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * A throwaway Maven repository holding the Sluice artifacts this build produced, for a Gradle build to
 * resolve. During {@code mvn test} or {@code mvn verify} they are not yet in the local Maven repository
 * (or are stale ones from an earlier build), so each is taken from this test's class path (a module's
 * {@code target/classes}, jarred here, or its jar) with the module's pom and its parent poms from the
 * source tree.
 */
final class BuiltArtifactsRepository {

    private final Path root;

    BuiltArtifactsRepository(final Path root) {
        this.root = root;
    }

    Path root() {
        return root;
    }

    /** Publishes the artifact that holds {@code type}, with its pom and parent poms. */
    Artifact publishArtifactOf(final Class<?> type) throws Exception {
        final Path location = MavenClassPathTest.codeSource(type);
        final Path pomFile;
        final Path jar;
        if (Files.isDirectory(location)) {
            pomFile = location.getParent().getParent().resolve("pom.xml");
            jar = Files.createTempFile(root.getParent(), "artifact", ".jar");
            jarDirectory(location, jar);
        } else {
            jar = location;
            final String name = jar.getFileName().toString();
            final Path beside = jar.resolveSibling(name.substring(0, name.length() - ".jar".length()) + ".pom");
            // From a Maven repository the pom lies beside the jar; from the reactor the jar is in <module>/target.
            pomFile = Files.isRegularFile(beside) ? beside : jar.getParent().getParent().resolve("pom.xml");
        }
        final Pom pom = Pom.read(pomFile);
        final Path published = Files.copy(jar, publish(pom, pomFile).resolveSibling(pom.fileName("jar")));
        publishParents(pom, pomFile);
        return new Artifact(pom.artifactId, pom.version, published);
    }

    /** An artifact as published: its coordinates and its jar in the repository. */
    record Artifact(String artifactId, String version, Path jar) {
    }

    /** Parents found through {@code relativePath}; one that is not there is left to the local repository. */
    private void publishParents(final Pom pom, final Path pomFile) throws Exception {
        Pom child = pom;
        Path childFile = pomFile;
        while (child.parentRelativePath != null && !child.parentRelativePath.isEmpty()) {
            Path parentFile = childFile.getParent().resolve(child.parentRelativePath).normalize();
            if (Files.isDirectory(parentFile)) {
                parentFile = parentFile.resolve("pom.xml");
            }
            if (!Files.isRegularFile(parentFile)) {
                return;
            }
            final Pom parent = Pom.read(parentFile);
            if (!parent.coordinates().equals(child.parentCoordinates())) {
                return;
            }
            publish(parent, parentFile);
            child = parent;
            childFile = parentFile;
        }
    }

    private Path publish(final Pom pom, final Path pomFile) throws IOException {
        final Path directory = root.resolve(pom.groupId.replace('.', '/')).resolve(pom.artifactId).resolve(pom.version);
        Files.createDirectories(directory);
        final Path published = directory.resolve(pom.fileName("pom"));
        if (!Files.exists(published)) {
            Files.copy(pomFile, published);
        }
        return published;
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
        final String parentCoordinates;
        /** Maven's default when the parent names none; empty when it says not to look. */
        final String parentRelativePath;

        private Pom(final Element project) {
            final Element parent = child(project, "parent");
            final String parentGroupId = text(parent, "groupId");
            final String parentVersion = text(parent, "version");
            parentCoordinates = parentGroupId + ":" + text(parent, "artifactId") + ":" + parentVersion;
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
            return new Pom(factory.newDocumentBuilder().parse(file.toFile()).getDocumentElement());
        }

        String coordinates() {
            return groupId + ":" + artifactId + ":" + version;
        }

        String parentCoordinates() {
            return parentCoordinates;
        }

        String fileName(final String extension) {
            return artifactId + "-" + version + "." + extension;
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
}
