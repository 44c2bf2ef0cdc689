package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.dropin.BuiltArtifactsRepository.Artifact;
import dev.sluice.streams.internals.NativeLibrary;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds {@code gradle-consumers/drop-in} with Gradle against the drop-in artifacts this build produced: Gradle
 * resolves sluice-kafka-streams and sluice-kafka-streams-test-utils, runs a TopologyTestDriver test of a word
 * count on them, and the class path it resolved holds no class twice and no Apache kafka-streams.
 */
class GradleDropInConsumerTest {

    @TempDir
    Path temp;

    @Test
    void gradleResolvesTheDropInArtifactsAndRunsTopologyTestDriverOnSluice() throws Exception {
        final BuiltArtifactsRepository repository = new BuiltArtifactsRepository(temp.resolve("sluice-repo"));
        final List<Artifact> built = List.of(
            repository.publishArtifactOf(Stores.class),
            repository.publishArtifactOf(TopologyTestDriver.class),
            repository.publishArtifactOf(NativeLibrary.class));

        final GradleConsumers.Run run = GradleConsumers.run(temp.resolve("gradle-consumers"), repository,
            built.get(0).version(), ":drop-in:topologyTest", ":drop-in:printTestRuntimeClasspath");

        assertEquals(0, run.exitCode(), () -> "gradle failed\n" + run);
        assertEquals(List.of("{be=3, not=1, or=1, to=3}"), run.valuesOf("counts"),
            () -> "no word counts from the TopologyTestDriver test\n" + run);
        final List<String> bytesStores = run.valuesOf("bytes.store");
        assertTrue(bytesStores.size() == 1 && bytesStores.get(0).startsWith("dev.sluice.streams.state.internals."),
            () -> "the count's store is not Sluice's\n" + run);

        final List<Path> classPath = run.valuesOf("classpath").stream().map(Path::of).toList();
        for (final Artifact artifact : built) {
            assertTrue(classPath.contains(artifact.jar()),
                () -> "Gradle did not take " + artifact.artifactId() + " from this build: " + classPath);
        }
        assertEquals(List.of(), ClassPathScan.apacheKafkaStreamsJars(classPath));
        final Map<String, List<Path>> duplicates = ClassPathScan.duplicateClasses(classPath);
        assertTrue(duplicates.isEmpty(), () -> duplicates.size() + " classes are on Gradle's class path twice, e.g. "
            + MavenClassPathTest.describe(duplicates));
    }
}
