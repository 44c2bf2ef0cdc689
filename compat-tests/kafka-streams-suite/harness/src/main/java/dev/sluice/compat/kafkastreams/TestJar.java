package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A published test jar, read as bytes: its top-level classes and, for each, the class names its
 * constant pools (its own and its nested classes') mention. Nothing is loaded.
 */
final class TestJar {

    private static final Pattern CLASS_NAME = Pattern.compile("org/apache/kafka/[A-Za-z0-9_/$]+");

    private final Path path;
    private final Map<String, TreeSet<String>> referencesByClass;

    private TestJar(final Path path, final Map<String, TreeSet<String>> referencesByClass) {
        this.path = path;
        this.referencesByClass = referencesByClass;
    }

    static TestJar read(final Path path) {
        final Map<String, TreeSet<String>> references = new TreeMap<>();
        try (JarFile jar = new JarFile(path.toFile())) {
            for (final JarEntry entry : jar.stream().toList()) {
                final String name = entry.getName();
                if (!name.endsWith(".class") || name.equals("module-info.class")) {
                    continue;
                }
                final String topLevel = name.replaceFirst("(\\$.*)?\\.class$", "").replace('/', '.');
                // Constant pools keep class names as modified UTF-8, which is ASCII for these names.
                final Matcher matcher = CLASS_NAME.matcher(new String(jar.getInputStream(entry).readAllBytes(),
                    StandardCharsets.ISO_8859_1));
                final TreeSet<String> mentioned = references.computeIfAbsent(topLevel, k -> new TreeSet<>());
                while (matcher.find()) {
                    mentioned.add(matcher.group().replace('/', '.'));
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("Cannot read " + path, e);
        }
        return new TestJar(path, references);
    }

    Path path() {
        return path;
    }

    List<String> classesMentioning(final String className) {
        final List<String> classes = new ArrayList<>();
        referencesByClass.forEach((type, mentioned) -> {
            if (mentioned.contains(className)) {
                classes.add(type);
            }
        });
        return classes;
    }

    List<String> classes() {
        return List.copyOf(referencesByClass.keySet());
    }

    TreeSet<String> mentionedBy(final String testClass) {
        return referencesByClass.getOrDefault(testClass, new TreeSet<>());
    }
}
