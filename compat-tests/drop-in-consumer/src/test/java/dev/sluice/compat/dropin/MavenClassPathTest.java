package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime class path Maven resolves for a user who depends on sluice-kafka-streams and
 * sluice-kafka-streams-test-utils (this module's build writes it): no class on it twice, no Apache
 * kafka-streams jar on it, and the check that says so does catch a jar that brings classes again.
 */
class MavenClassPathTest {

    private static final List<Path> USER_CLASS_PATH = ClassPathScan.read(Path.of(System.getProperty("sluice.user.classpath")));

    @TempDir
    Path temp;

    @Test
    void noClassIsOnTheUserClassPathTwice() {
        assertTrue(USER_CLASS_PATH.contains(codeSource(Stores.class)), "sluice-kafka-streams is not on the class path");
        assertTrue(USER_CLASS_PATH.contains(codeSource(TopologyTestDriver.class)),
            "sluice-kafka-streams-test-utils is not on the class path");
        final Map<String, List<Path>> duplicates = ClassPathScan.duplicateClasses(USER_CLASS_PATH);
        assertTrue(duplicates.isEmpty(), () -> duplicates.size() + " classes are on the class path twice, e.g. "
            + describe(duplicates) + "\nclass path: " + USER_CLASS_PATH);
    }

    @Test
    void noApacheKafkaStreamsJarIsOnTheUserClassPath() {
        assertEquals(List.of(), ClassPathScan.apacheKafkaStreamsJars(USER_CLASS_PATH));
    }

    @Test
    void kafkaStreamsOnTheClassPathBesideSluiceIsCaught() {
        final Path kafkaStreams = Path.of(System.getProperty("sluice.fixture.kafka.streams"));
        final List<Path> withKafkaStreams = new ArrayList<>(USER_CLASS_PATH);
        withKafkaStreams.add(kafkaStreams);

        final Map<String, List<Path>> duplicates = ClassPathScan.duplicateClasses(withKafkaStreams);
        assertEquals(List.of(codeSource(Stores.class), kafkaStreams),
            duplicates.get("org/apache/kafka/streams/Topology.class"), () -> describe(duplicates));
        assertEquals(List.of(kafkaStreams), ClassPathScan.apacheKafkaStreamsJars(withKafkaStreams));
    }

    @Test
    void oneClassInTwoEntriesIsADuplicateAndVersionedCopiesAreTheSameClass() throws IOException {
        final Path first = jar("first.jar", "p/Shared.class", "p/OnlyFirst.class", "module-info.class");
        final Path second = jar("second.jar", "META-INF/versions/11/p/Shared.class", "module-info.class");
        final Path directory = Files.createDirectories(temp.resolve("classes/q"));
        Files.write(directory.resolve("OnlyDirectory.class"), new byte[] {0});

        final Map<String, List<Path>> duplicates =
            ClassPathScan.duplicateClasses(List.of(first, second, temp.resolve("classes")));

        assertEquals(Map.of("p/Shared.class", List.of(first, second)), duplicates);
        assertFalse(ClassPathScan.classesOf(first).contains("module-info.class"));
    }

    private Path jar(final String name, final String... entries) throws IOException {
        final Path jar = temp.resolve(name);
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
            for (final String entry : entries) {
                out.putNextEntry(new JarEntry(entry));
                out.write(0);
                out.closeEntry();
            }
        }
        return jar;
    }

    static Path codeSource(final Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (final URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static String describe(final Map<String, List<Path>> duplicates) {
        return duplicates.entrySet().stream().limit(10)
            .map(duplicate -> duplicate.getKey() + " in " + duplicate.getValue())
            .collect(Collectors.joining("\n  ", "\n  ", ""));
    }
}
