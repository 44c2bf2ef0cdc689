package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.dropin.BuiltArtifactsRepository.Artifact;
import dev.sluice.streams.internals.NativeLibrary;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds and runs {@code gradle-consumers/stores-only} with Gradle: a Gradle build takes the sluice-stores this
 * build produced as an ordinary Maven dependency beside Apache's kafka-streams (from the local Maven
 * repository), and the application runs a Kafka Streams topology and loads Sluice's native library.
 */
class GradleStoresOnlyConsumerTest {

    @TempDir
    Path temp;

    @Test
    void gradleBuildRunsKafkaStreamsWithSluiceStores() throws Exception {
        final BuiltArtifactsRepository repository = new BuiltArtifactsRepository(temp.resolve("sluice-repo"));
        final Artifact stores = repository.publishArtifactOf(NativeLibrary.class);
        assertEquals("sluice-stores", stores.artifactId(), "the artifact that holds NativeLibrary");

        final GradleConsumers.Run run =
            GradleConsumers.run(temp.resolve("gradle-consumers"), repository, stores.version(), ":stores-only:run");

        assertEquals(0, run.exitCode(), () -> "gradle failed\n" + run);
        assertTrue(run.stdout().contains("Source: KSTREAM-SOURCE-0000000000 (topics: [words])"),
            () -> "no topology from Kafka Streams in the output\n" + run);
        assertTrue(run.stdout().contains("(stores: [word-counts])"), () -> "no store in the topology\n" + run);
        final String nativeVersion = stores.version().replace("-SNAPSHOT", "");
        assertEquals(List.of(nativeVersion), run.valuesOf("sluice.native.version"),
            () -> "Sluice's native library did not report version " + nativeVersion + "\n" + run);
        final List<String> locations = run.valuesOf("sluice.stores.location");
        assertEquals(1, locations.size(), () -> "the application did not say where sluice-stores came from\n" + run);
        assertEquals(stores.jar().toRealPath(), Path.of(URI.create(locations.get(0))).toRealPath(),
            () -> "Gradle did not take sluice-stores from this build's repository\n" + run);
    }
}
