package dev.sluice.compat.kafkastreams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The integration suite's parts against the published jar, and how part names are picked. */
class IntegrationPartsTest {

    @TempDir
    Path directory;

    @Test
    void thePartsNameEveryTestClassOfThePublishedJarExactlyOnce() {
        final Path target = Path.of(System.getProperty("sluice.compat.classpaths"));
        final Classpaths classpaths = Classpaths.load(target, Path.of(System.getProperty("sluice.compat.classes")));
        final TestJar jar = TestJar.read(Suite.testJar(classpaths.forIntegration(classpaths.forBaseline()),
            "kafka-streams-integration-tests", CompatRun.TESTS_VERSION));

        final List<String> selected = IntegrationParts.classesOf(IntegrationParts.ALL, jar);

        assertEquals(87, selected.size());
        assertEquals(IntegrationParts.testClasses(jar).stream().map(name -> IntegrationParts.PACKAGE + name).sorted()
            .toList(), selected.stream().sorted().toList());
    }

    @Test
    void aTestClassThatNoPartNamesStopsTheRun() throws IOException {
        final List<String> classes = new ArrayList<>(allNamedClasses());
        classes.add("BrandNewIntegrationTest");
        final TestJar jar = TestJar.read(jarWith(classes));

        final IllegalStateException failure = assertThrows(IllegalStateException.class,
            () -> IntegrationParts.classesOf(IntegrationParts.named("joins"), jar));
        assertTrue(failure.getMessage().contains("in no part [BrandNewIntegrationTest]"), failure.getMessage());
    }

    @Test
    void aPartThatNamesAClassTheJarLacksStopsTheRun() throws IOException {
        final List<String> classes = new ArrayList<>(allNamedClasses());
        classes.remove("WordCountTest");
        final TestJar jar = TestJar.read(jarWith(classes));

        final IllegalStateException failure = assertThrows(IllegalStateException.class,
            () -> IntegrationParts.classesOf(IntegrationParts.ALL, jar));
        assertTrue(failure.getMessage().contains("not a test class of the jar [WordCountTest]"), failure.getMessage());
    }

    @Test
    void theNamedPartsAreRunInTheirListedOrderAndAllMeansEvery() throws IOException {
        final TestJar jar = TestJar.read(jarWith(allNamedClasses()));

        final List<IntegrationParts.Part> parts = IntegrationParts.named(" joins,eos-restore-iq ");

        assertEquals(List.of("eos-restore-iq", "joins"), parts.stream().map(IntegrationParts.Part::name).toList());
        assertEquals(9 + 13, IntegrationParts.classesOf(parts, jar).size());
        assertEquals(IntegrationParts.ALL.size() - 2, IntegrationParts.others(parts).size());
        assertEquals(IntegrationParts.ALL, IntegrationParts.named("all"));
        assertEquals(IntegrationParts.ALL, IntegrationParts.named(""));
    }

    @Test
    void anUnknownPartNameIsRefusedWithTheNamesThereAre() {
        final IllegalArgumentException failure = assertThrows(IllegalArgumentException.class,
            () -> IntegrationParts.named("joins,join"));

        assertTrue(failure.getMessage().startsWith("No integration part is named join;"), failure.getMessage());
        assertTrue(failure.getMessage().contains("eos-restore-iq, joins, foreign-key-joins"), failure.getMessage());
    }

    private static List<String> allNamedClasses() {
        return IntegrationParts.ALL.stream().flatMap(part -> part.classes().stream()).toList();
    }

    /** A jar with an (empty) class file for each simple name in the integration package, and a utility. */
    private Path jarWith(final List<String> simpleNames) throws IOException {
        final Path jar = directory.resolve("integration-tests.jar");
        final List<String> entries = new ArrayList<>(simpleNames.stream()
            .map(name -> (IntegrationParts.PACKAGE + name).replace('.', '/') + ".class").toList());
        entries.add("org/apache/kafka/streams/integration/utils/IntegrationTestUtils.class");
        entries.add("org/apache/kafka/streams/integration/RebalanceIntegrationTest$NestedTest.class");
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
            for (final String entry : entries) {
                out.putNextEntry(new JarEntry(entry));
                out.closeEntry();
            }
        }
        return jar;
    }
}
